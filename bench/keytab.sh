#!/usr/bin/env bash
# bench/keytab.sh: alias principals into the keytab Samba uses, side by side on srv, ROUNDS
# rounds, each side into its own scratch copy of srv's real keytab (the real one is not
# touched):
#   (a) what `server` does now: samba/scripts/keytab.pl copies the host/ keys;
#   (b) what it did before, and still does where (a) cannot run: `net ads keytab add` in
#       chunks of 200 principals (it derives every principal's keys from the machine password),
#       pointed at the copy with --option, as the domain admin (kinit, password on stdin);
# N aliases (default 500: 2 x N principals, cifs/bkN and cifs/bkN.<domain>). Prints seconds,
# principals per second, the medians and the ratio b/a; then checks that both copies hold the
# same kvno and key for every principal and enctype (klist -kKe). Lab 'pvkt': srv is joined
# for it and left again at the end.
. "$(dirname "$0")/lib.sh"

N=${N:-500}
ROUNDS=${ROUNDS:-3}
"$LAB_SH" status >/dev/null || { echo "bench: the lab is not up (make lab-up)" >&2; exit 1; }
P=(-p "$PLAYBOOK" --set lab=pvkt --set "controller.results=$BT/results")
trap 'on ctl "$PV" "${P[@]}" cleanup join --leave >/dev/null 2>&1; on srv rm -rf "$BT"; rm -rf "$BT"' EXIT
on ctl "$PV" "${P[@]}" join >"$BT/join.out" 2>&1 ||
	{ echo "bench: join failed:" >&2; tail -3 "$BT/join.out" >&2; exit 1; }
kt=$(on srv testparm -s --parameter-name="dedicated keytab file" 2>/dev/null)
kt=${kt#FILE:}
[[ -f $kt ]] || { echo "bench: srv has no dedicated keytab file ($kt)" >&2; exit 1; }
for i in $(seq "$N"); do printf 'cifs/bk%s\ncifs/bk%s.lab.test\n' "$i" "$i"; done >"$BT/names"
nprinc=$((2 * N))

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# (b) as phases/server.c's fallback writes it: the admin's ticket from as-admin.sh, then net
{
	printf 'princ=Administrator@LAB.TEST\n'
	cat "$TOP/samba/scripts/as-admin.sh"
	echo 'kt=$1; shift'
	echo 'xargs -n 200 net ads keytab add --use-kerberos=required -N --option="dedicated keytab file=FILE:$kt" -- <"$1" >/dev/null 2>&1'
} >"$BT/net.sh"

echo "bench: $N aliases ($nprinc principals) into a copy of srv's keytab, $ROUNDS rounds"
for r in $(seq "$ROUNDS"); do
	cp -p "$kt" "$BT/a.kt"
	cp -p "$kt" "$BT/b.kt"
	t0=$(now)
	on srv perl "$TOP/samba/scripts/keytab.pl" add "$BT/a.kt" <"$BT/names" >"$BT/a.out" ||
		{ echo "bench: keytab.pl add failed" >&2; exit 1; }
	t1=$(now)
	on srv sh "$BT/net.sh" "$BT/b.kt" "$BT/names" <"$LAB/admin.pass" ||
		{ echo "bench: net ads keytab add failed" >&2; exit 1; }
	t2=$(now)
	a=$(awk -v x="$t0" -v y="$t1" 'BEGIN { printf "%.3f", y - x }')
	b=$(awk -v x="$t1" -v y="$t2" 'BEGIN { printf "%.3f", y - x }')
	echo "$a" >>"$BT/a"
	echo "$b" >>"$BT/b"
	awk -v a="$a" -v b="$b" -v n="$nprinc" -v r="$r" 'BEGIN {
		printf "  round %d: a (copy the host/ keys) %.3f s, %.0f principals/s   b (net ads keytab add) %.1f s, %.0f principals/s\n", r, a, n / a, b, n / b }'
done
ma=$(median <"$BT/a")
mb=$(median <"$BT/b")
awk -v a="$ma" -v b="$mb" 'BEGIN { printf "  medians: a %.3f s, b %.1f s: a is %.0fx faster\n", a, b, b / a }'

# the same kvno and key for every principal and enctype in both copies
keys() { on srv klist -kKe "$1" | awk '$2 ~ /^cifs\/bk/ { print $1, $2, $3, $NF }' | sort; }
keys "$BT/a.kt" >"$BT/a.keys"
keys "$BT/b.kt" >"$BT/b.keys"
na=$(wc -l <"$BT/a.keys")
if [[ $na -eq 0 ]] || ! cmp -s "$BT/a.keys" "$BT/b.keys"; then
	echo "bench: the two keytabs differ ($na lines from a, $(wc -l <"$BT/b.keys") from b)" >&2
	diff "$BT/a.keys" "$BT/b.keys" | head -5 >&2
	exit 1
fi
echo "  both keytabs hold the same $na entries (principal, enctype, kvno, key)"
