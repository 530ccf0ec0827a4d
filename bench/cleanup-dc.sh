#!/usr/bin/env bash
# bench/cleanup-dc.sh: deleting the lab's users at scale, provision against the reference tools,
# side by side on the lab's DC, each on a freshly provisioned DC (tombstones of an earlier
# round slow later work):
#   ldapdelete -r   the OU, recursively: one synchronous delete request per entry (OpenLDAP)
#   samba-tool      ou delete --force-subtree-delete: one request with the tree-delete control,
#                   which Samba runs as one transaction (what provision did up to issue 23)
#   provision       cleanup dc: pipelined deletes, one per user, then the OU (the tree delete
#                   up to 2,000 users); provision-1by1 and provision-tree force either shape
# The users are made by provision dc each time, so the same run also gives dc's rate (users/s)
# and its peak memory at each size.
#
#   bench/cleanup-dc.sh [SIZE [METHOD...]]   one size (total users; default 2000) and the
#                                            methods (default: all three), then the table
#   bench/cleanup-dc.sh report               the table of every result so far
#
# A 20,000-user unit holds the lab for up to half an hour (dc: ~11 min of DC CPU, a tree delete
# more): run one size (or one method) per hold of the lab's lock. NOPW=1 makes the users with
# one ldapadd, without a password (disabled; 13 ms of DC CPU each instead of 31), tagged as
# provision tags them: the size is then recorded as SIZE/nopw, compared with its own kind.
# DC_STORE=mdb runs it on DCs provisioned on LMDB (tests/lab/lab.sh): recorded as SIZE/mdb.
# Results accumulate in
# $RESULTS (default /var/tmp/provision-bench-cleanup-dc.tsv): size method dc_s dc_users_s
# dc_rss_kib delete_s delete_dc_cpu_s [failed: WHY]; `report` prints medians per size and
# method and the ratios to provision. A reference tool that fails is recorded with the time it
# took to fail (samba-tool gives up on a long tree delete after ldb's 300 s timeout).
. "$(dirname "$0")/lib.sh"

RESULTS=${RESULTS:-/var/tmp/provision-bench-cleanup-dc.tsv}
OU="OU=provision,DC=lab,DC=test"
LDAP_ARGS=(-H ldaps://dc.lab.test -D Administrator@LAB.TEST -y "$LAB/admin.pass")

report() {
	[[ -s $RESULTS ]] || { echo "bench: no results in $RESULTS yet" >&2; return 0; }
	echo
	echo "cleanup-dc.sh: medians per size and method ($RESULTS; lab DC, 2 cores)"
	printf '  %-7s %-11s %4s %10s %10s %10s %12s %14s\n' users method runs "dc s" "dc users/s" \
		"delete s" "delete u/s" "vs provision"
	local size method n ds du dl ours v nf
	for size in $(cut -f1 "$RESULTS" | sort -u | sort -n); do
		ours=$(awk -v s="$size" '$1 == s && $2 == "provision" { print $6 }' "$RESULTS" | sort -g |
			awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }')
		for method in ldapdelete samba-tool provision-tree provision-1by1 provision; do
			n=$(awk -v s="$size" -v m="$method" '$1 == s && $2 == m' "$RESULTS" | wc -l)
			((n)) || continue
			mapfile -t v < <(awk -v s="$size" -v m="$method" '$1 == s && $2 == m { print $3 }' "$RESULTS")
			ds=$(median "${v[@]}")
			mapfile -t v < <(awk -v s="$size" -v m="$method" '$1 == s && $2 == m { print $4 }' "$RESULTS")
			du=$(median "${v[@]}")
			mapfile -t v < <(awk -v s="$size" -v m="$method" '$1 == s && $2 == m { print $6 }' "$RESULTS")
			dl=$(median "${v[@]}")
			nf=$(awk -F'\t' -v s="$size" -v m="$method" '$1 == s && $2 == m && $8 != ""' "$RESULTS" | wc -l)
			printf '  %-7s %-11s %4s %10s %10s %10s %12s %13sx%s\n' "$size" "$method" "$n" "$ds" \
				"$du" "$dl" "$(rate "$size" "$dl")" "$([[ -n $ours ]] && ratio "$dl" "$ours" || echo -)" \
				"$( ((nf)) && echo "  ($nf failed: the time until it gave up)")"
		done
	done
	echo "  (vs provision: the method's delete time over provision's; above 1, provision is faster)"
}

[[ ${1:-} == report ]] && { report; exit 0; }
SIZE=${1:-2000}
shift || true
METHODS=("$@")
((${#METHODS[@]})) || METHODS=(ldapdelete samba-tool provision)
PER=$((SIZE / 2)) # the lab's playbook has two clients
[[ -x $PV ]] || { echo "bench: build first (make)" >&2; exit 1; }

fresh() { "$LAB_SH" down >/dev/null 2>&1; "$LAB_SH" up >/dev/null 2>&1 || { echo "bench: lab up failed" >&2; exit 1; }; }

# the lab's users as provision names and tags them, without a password, in one LDIF
nopw_ldif() {
	printf 'dn: %s\nobjectClass: organizationalUnit\ndescription: provision:provision\n\n' "$OU"
	for c in cli1 cli2; do
		awk -v c="$c" -v per="$PER" -v ou="$OU" 'BEGIN { for (n = 1; n <= per; n++)
			printf "dn: CN=%s-u%d,%s\nobjectClass: user\nsAMAccountName: %s-u%d\ndescription: provision:provision\nuserAccountControl: 514\n\n", c, n, ou, c, n }'
	done
}

unit() { # METHOD
	local m=$1
	fresh
	if [[ ${NOPW:-0} == 1 ]]; then
		nopw_ldif >"$BT/users.ldif"
		timed mk ctl ldapadd "${LDAP_ARGS[@]}" -f "$BT/users.ldif"
		echo "dc: created $SIZE, (ldapadd, no password)" >"$BT/mk.out"
	else
		timed mk ctl "$PV" -p "$PLAYBOOK" --no-progress dc --users "$PER"
	fi
	grep -q "created $SIZE," "$BT/mk.out" || { echo "bench: dc did not create $SIZE users:" >&2; cat "$BT/mk.out" >&2; exit 1; }
	DEL_FAIL=
	case $m in
		ldapdelete) ref_timed ldapdelete "${LDAP_ARGS[@]}" -r "$OU" ;;
		samba-tool)
			on ctl sh -c "kinit Administrator@LAB.TEST <'$LAB/admin.pass' >/dev/null"
			ref_timed samba-tool ou delete "$OU" --force-subtree-delete \
				-H ldap://dc.lab.test --use-kerberos=required
			;;
		provision) timed del ctl "$PV" -p "$PLAYBOOK" --no-progress cleanup dc ;;
		# provision's two shapes forced at any size: one by one, and the tree delete
		provision-1by1 | provision-tree)
			timed del ctl env PROVISION_TREE_DELETE="$([[ $m == provision-tree ]] && echo 1 || echo 0)" \
				"$PV" -p "$PLAYBOOK" --no-progress cleanup dc
			;;
	esac
	# nothing of the lab's may be left, whichever tool deleted (and said it did)
	if [[ -z $DEL_FAIL ]] && on ctl ldapsearch -LLL "${LDAP_ARGS[@]}" -b "$OU" -s base dn 2>/dev/null | grep -q '^dn:'; then
		echo "bench: $m left the OU behind" >&2
		exit 1
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$SIZE$([[ ${NOPW:-0} == 1 ]] && echo /nopw)$([[ ${DC_STORE:-tdb} == mdb ]] && echo /mdb)" "$m" "$(val mk wall)" \
		"$(rate "$SIZE" "$(val mk wall)")" "$(val mk rss)" "$(val del wall)" "$(val del dccpu)" \
		"${DEL_FAIL:+failed: $DEL_FAIL}" >>"$RESULTS"
	printf 'cleanup-dc.sh: %s users, %s: dc %ss (%s users/s, %s KiB peak), delete %ss (%s users/s, DC CPU %ss)%s\n' \
		"$SIZE" "$m" "$(val mk wall)" "$(rate "$SIZE" "$(val mk wall)")" "$(val mk rss)" \
		"$(val del wall)" "$(rate "$SIZE" "$(val del wall)")" "$(val del dccpu)" "${DEL_FAIL:+ FAILED: $DEL_FAIL}"
}

# ref_timed CMD...: a reference tool's delete, timed as `timed del` does; its failure (samba-tool
# gives up on a tree delete after ldb's 300 s request timeout) is recorded with the time it
# took, in DEL_FAIL and the results' 8th field, not fatal
ref_timed() {
	local t0 c0
	c0=$(cpu_of dc)
	t0=$(now)
	on ctl "$@" >"$BT/del.out" 2>"$BT/del.err" || DEL_FAIL=$(grep -m1 . "$BT/del.err" | cut -c1-160)
	awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }' >"$BT/del.wall"
	awk -v a="$c0" -v b="$(cpu_of dc)" 'BEGIN { printf "%.2f", b - a }' >"$BT/del.dccpu"
	[[ -z $DEL_FAIL ]] || echo "bench: $1 failed after $(val del wall) s: $DEL_FAIL" >&2
}

for m in "${METHODS[@]}"; do
	case $m in
		ldapdelete | samba-tool | provision | provision-1by1 | provision-tree) unit "$m" ;;
		*) echo "bench: unknown method '$m'" >&2; exit 2 ;;
	esac
done
"$LAB_SH" down >/dev/null 2>&1
report
