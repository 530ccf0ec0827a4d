#!/usr/bin/env bash
# bench/spn-limit.sh: how many alias SPNs one computer account can carry on the lab's Samba DC,
# and what each costs: SPNs are added to the joined server's account SRV$ in chunks (one
# ldapmodify each, as provision server does), up to MAX values or the first refusal; at each
# checkpoint it times a chunk's modify, reading the whole attribute (ldapsearch, ranged), and
# a service ticket for one alias (kvno: the KDC finds the account by that SPN), and prints the
# account's size. Windows AD documents about 1,200 values of non-linked multi-valued
# attributes per object (an 8,110-byte record); Samba's ldb has no record limit, so this
# finds where the cost, not a refusal, sets the limit.
#
#   bench/spn-limit.sh [MAX (default 100000)] [CHUNK (default 2000)]
# Takes the lab down and up; leaves it down.
. "$(dirname "$0")/lib.sh"

MAX=${1:-100000}
CHUNK=${2:-2000}
SRV_DN="CN=SRV,CN=Computers,DC=lab,DC=test"
LDAP_ARGS=(-H ldaps://dc.lab.test -D Administrator@LAB.TEST -y "$LAB/admin.pass")
CHECKS=" 1000 2000 10000 20000 50000 100000 200000 "

"$LAB_SH" down >/dev/null 2>&1
"$LAB_SH" up >/dev/null || { echo "bench: lab up failed" >&2; exit 1; }
on ctl "$PV" -p "$PLAYBOOK" --no-progress join >/dev/null || { echo "bench: join failed" >&2; exit 1; }
on ctl sh -c "kinit Administrator@LAB.TEST <'$LAB/admin.pass' >/dev/null"

spns() { # FROM TO: the LDIF adding cifs/xN and cifs/xN.lab.test for N in FROM..TO
	printf 'dn: %s\nchangetype: modify\nadd: servicePrincipalName\n' "$SRV_DN"
	awk -v a="$1" -v b="$2" 'BEGIN { for (n = a; n <= b; n++) printf "servicePrincipalName: cifs/x%d\nservicePrincipalName: cifs/x%d.lab.test\n", n, n }'
	printf '\n'
}

printf '%9s %10s %10s %10s %10s %s\n' values "modify s" "per value" "read s" "ticket s" "record"
have=0
n=0
while ((have < MAX)); do
	from=$((n + 1)) to=$((n + CHUNK / 2))
	spns "$from" "$to" >"$BT/chunk.ldif"
	t0=$(now)
	if ! on ctl ldapmodify "${LDAP_ARGS[@]}" -f "$BT/chunk.ldif" >"$BT/mod.out" 2>&1; then
		echo "refused after $have values: $(tail -n 2 "$BT/mod.out" | tr '\n' ' ')"
		break
	fi
	t1=$(now)
	n=$to
	have=$((have + CHUNK))
	[[ $CHECKS == *" $have "* ]] || continue
	t2=$(now)
	got=$(on ctl ldapsearch -LLL -o ldif-wrap=no "${LDAP_ARGS[@]}" -b "$SRV_DN" -s base servicePrincipalName 2>/dev/null |
		grep -c '^servicePrincipalName')
	t3=$(now)
	on ctl kvno "cifs/x$n.lab.test@LAB.TEST" >/dev/null 2>&1 || echo "kvno cifs/x$n failed" >&2
	t4=$(now)
	bytes=$(on ctl ldapsearch -LLL -o ldif-wrap=no "${LDAP_ARGS[@]}" -b "$SRV_DN" -s base '*' 2>/dev/null | wc -c)
	printf '%9s %10.3f %10.6f %10.3f %10.3f %s bytes as LDIF (%s SPNs read)\n' "$have" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
		"$(awk -v a="$t0" -v b="$t1" -v c="$CHUNK" 'BEGIN { print (b - a) / c }')" \
		"$(awk -v a="$t2" -v b="$t3" 'BEGIN { print b - a }')" \
		"$(awk -v a="$t3" -v b="$t4" 'BEGIN { print b - a }')" "$bytes" "$got"
done
"$LAB_SH" down >/dev/null 2>&1
