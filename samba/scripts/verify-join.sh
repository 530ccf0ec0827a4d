# samba/scripts/verify-join.sh: a member's trust, once winbindd is up: 'wbinfo -t' (winbindd's
# secure channel, retried for up to 15 s while winbindd starts), then 'net ads testjoin'.
# Exit 1: wbinfo -t fails; 2: testjoin fails. Set before it: mark (the join's mark, removed once
# all is well: the account is tagged by then; "" for none).
mark=${mark-}
i=0
until wbinfo -t >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 60 ] || { wbinfo -t >&2; exit 1; }
	sleep 0.25
done
net ads testjoin </dev/null >&2 || exit 2
if [ -n "$mark" ]; then
	rm -f -- "$mark"
fi
