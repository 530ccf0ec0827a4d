#!/usr/bin/env bash
# bench/users.sh: creating and deleting domain users, provision against the reference tools,
# side by side in one run on the lab's DC:
#   ldapadd   one LDIF, one LDAPS connection (CA checked), the same attributes and password
#   provision dc  (pipelined adds on one LDAPS connection)
#   ldapdelete -f  vs  provision cleanup dc
#   samba-tool user add, one process per user (the everyday reference), for 50 users
# Also: a provision re-run over the existing users, the DC's CPU and ours, and provision's
# peak RSS at 2000 and 20000 planned users (--dry-run). Prints medians over ROUNDS rounds and
# the ratios. Environment: USERS (total, default 2000), ROUNDS (default 3), SAMBA_TOOL (50).
. "$(dirname "$0")/lib.sh"

USERS=${USERS:-2000}
ROUNDS=${ROUNDS:-3}
ST_USERS=${SAMBA_TOOL:-50}
PER=$((USERS / 2)) # the lab playbook has two clients
BASE=DC=lab,DC=test
REF_OU="OU=bench-ldapadd,$BASE"

echo "bench: users.sh rebuilds the lab (lab down + up) before each measured side" >&2
"$LAB_SH" up >/dev/null || { echo "bench: lab up failed" >&2; exit 1; }
[[ -x $PV ]] || { echo "bench: build first (make)" >&2; exit 1; }

# The reference LDIF: the same attributes provision sends, password included.
pw_b64=$(printf '"%s"' "$(cat "$LAB/user.pass")" | iconv -f UTF-8 -t UTF-16LE | base64 -w0)
{
	printf 'dn: %s\nobjectClass: organizationalUnit\n\n' "$REF_OU"
	for ((i = 1; i <= USERS; i++)); do
		n="ref-u$i"
		printf 'dn: CN=%s,%s\nobjectClass: top\nobjectClass: person\nobjectClass: organizationalPerson\nobjectClass: user\ncn: %s\nsAMAccountName: %s\nuserPrincipalName: %s@LAB.TEST\ndisplayName: %s\ndescription: bench\nuserAccountControl: 66048\nunicodePwd:: %s\n\n' \
			"$n" "$REF_OU" "$n" "$n" "$n" "$n" "$pw_b64"
	done
} >"$BT/users.ldif"
for ((i = USERS; i >= 1; i--)); do printf 'CN=ref-u%s,%s\n' "$i" "$REF_OU"; done >"$BT/users.dns"
echo "$REF_OU" >>"$BT/users.dns"
chmod 0600 "$BT/users.ldif"

LDAP_ARGS=(-H ldaps://dc.lab.test -D Administrator@LAB.TEST -y "$LAB/admin.pass")

declare -a A_ADD P_ADD A_DEL P_DEL RERUN P_CPU A_DC P_DC
# Each round: ldapadd and ldapdelete; provision dc, its re-run and provision cleanup dc; so both
# tools add to and delete from a directory of about the same size.
# Deleted users stay as tombstones and make every later add slower (measured here: the same
# ldapadd took 101 s on a fresh DC and 134 s after 6000 adds and deletes), so each tool gets a
# freshly provisioned DC: the lab is rebuilt (about 14 s) before each side of a round, and the
# side that goes first alternates.
fresh() { "$LAB_SH" down >/dev/null 2>&1; "$LAB_SH" up >/dev/null 2>&1; }
reference() {
	fresh
	timed ldapadd ctl ldapadd "${LDAP_ARGS[@]}" -f "$BT/users.ldif"
	timed ldapdel ctl ldapdelete "${LDAP_ARGS[@]}" -f "$BT/users.dns"
}
ours() {
	fresh
	timed pvadd ctl "$PV" -p "$PLAYBOOK" --no-progress dc --users "$PER"
	grep -q "created $USERS," "$BT/pvadd.out" || { echo "bench: provision did not create $USERS:" >&2; cat "$BT/pvadd.out" >&2; exit 1; }
	timed rerun ctl "$PV" -p "$PLAYBOOK" --no-progress dc --users "$PER"
	timed pvdel ctl "$PV" -p "$PLAYBOOK" --no-progress cleanup dc
}
for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then reference; ours; else ours; reference; fi
	A_ADD+=("$(val ldapadd wall)") P_ADD+=("$(val pvadd wall)") RERUN+=("$(val rerun wall)")
	A_DEL+=("$(val ldapdel wall)") P_DEL+=("$(val pvdel wall)") P_CPU+=("$(val pvadd cpu)")
	A_DC+=("$(val ldapadd dccpu)") P_DC+=("$(val pvadd dccpu)")
	printf 'round %d: add ldapadd %ss provision %ss (ratio %s) | re-run %ss | delete ldapdelete %ss provision %ss | CPU ours %ss DC %ss (ldapadd: DC %ss)\n' \
		"$r" "$(val ldapadd wall)" "$(val pvadd wall)" "$(ratio "$(val ldapadd wall)" "$(val pvadd wall)")" \
		"$(val rerun wall)" "$(val ldapdel wall)" "$(val pvdel wall)" "$(val pvadd cpu)" "$(val pvadd dccpu)" \
		"$(val ldapadd dccpu)"
done

# samba-tool: one process per user over ldap:// with Kerberos (sealed), a random password so
# that no password sits on its command line either
on ctl sh -c "kinit Administrator@LAB.TEST <'$LAB/admin.pass' >/dev/null"
ST="samba-tool user"
ST_OPTS="-H ldap://dc.lab.test --use-kerberos=required"
timed stadd ctl bash -c "for i in \$(seq 1 $ST_USERS); do $ST add st-u\$i --random-password $ST_OPTS >/dev/null || exit 1; done"
timed stdel ctl bash -c "for i in \$(seq 1 $ST_USERS); do $ST delete st-u\$i $ST_OPTS >/dev/null || exit 1; done"

# memory: peak RSS of a dry run planning 2000 and 20000 users
timed dry2k ctl "$PV" -p "$PLAYBOOK" --no-progress dc --users 1000 --dry-run
timed dry20k ctl "$PV" -p "$PLAYBOOK" --no-progress dc --users 10000 --dry-run

ma=$(median "${A_ADD[@]}") mp=$(median "${P_ADD[@]}") mr=$(median "${RERUN[@]}")
mda=$(median "${A_DEL[@]}") mdp=$(median "${P_DEL[@]}") mc=$(median "${P_CPU[@]}")
mdc=$(median "${P_DC[@]}") madc=$(median "${A_DC[@]}")
st=$(val stadd wall)
st_rate=$(rate "$ST_USERS" "$st")
pv_rate=$(rate "$USERS" "$mp")
cat <<TXT

users.sh: $USERS users, $ROUNDS rounds, medians (lab DC, 2 cores)
  create   ldapadd     $(rate "$USERS" "$ma") users/s ($ma s, DC CPU $madc s)
  create   provision   $pv_rate users/s ($mp s, DC CPU $mdc s)   ratio provision/ldapadd $(ratio "$ma" "$mp")x
  create   samba-tool  $st_rate users/s ($ST_USERS users, $st s)        ratio provision/samba-tool $(ratio "$pv_rate" "$st_rate")x
  re-run   provision   $mr s over $USERS existing users
  delete   ldapdelete  $(rate "$USERS" "$mda") users/s ($mda s)
  delete   provision   $(rate "$USERS" "$mdp") users/s ($mdp s)   ratio $(ratio "$mda" "$mdp")x
  delete   samba-tool  $(rate "$ST_USERS" "$(val stdel wall)") users/s
  CPU      provision $mc s vs DC $mdc s = $(awk -v a="$mc" -v b="$mdc" 'BEGIN { printf "%.1f", (b > 0 ? 100 * a / b : 0) }')% of the DC's
  memory   peak RSS, dry run: $(val dry2k rss) KiB at 2000 planned users, $(val dry20k rss) KiB at 20000
TXT
