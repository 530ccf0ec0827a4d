# samba/scripts/keytab-remove.sh: take exactly the given principals (on stdin, one a line,
# without the realm) out of the keytab Samba uses, every kvno and enctype of them, and keep
# everything else in it as it was. Samba 4.17 has no 'net ads keytab delete', and 'flush'
# clears every principal of the account (host/ ones included), so MIT's ktutil does it: the
# keytab read, the entries deleted highest slot first (a deletion renumbers the slots after
# it), the rest written to a new file beside it, checked, and renamed over the old one.
# Set before it: kt (the dedicated keytab file, or "" for the system keytab, which klist -k
# names). Prints "pv-kt removed N" or "pv-kt none"; exit 3 when it cannot be done here.
: "${kt?}"
if [ -z "$kt" ]; then
	kt=$(klist -k 2>/dev/null | sed -n 's/^Keytab name: //p' | head -n 1)
fi
kt=${kt#FILE:}
kt=${kt#WRFILE:}
if [ -z "$kt" ]; then
	echo "cannot tell which keytab Samba uses (klist -k names none)" >&2
	exit 3
fi
if [ ! -f "$kt" ]; then
	echo "pv-kt none"
	exit 0
fi
if ! printf 'q\n' | ktutil >/dev/null 2>&1 || ktutil --version </dev/null 2>&1 | grep -qi heimdal; then
	echo "no MIT ktutil on this host to take the alias principals out of $kt" >&2
	exit 3
fi
want=$(mktemp)
new="$kt.provision-new.$$"
trap 'rm -f "$want" "$new"' EXIT
cat >"$want"
# "slot kvno principal" lines of a keytab, from ktutil
entries() {
	printf 'rkt %s\nlist\nq\n' "$1" | ktutil 2>/dev/null | awk '$1 ~ /^[0-9]+$/ && NF >= 3 { print $1, $3 }'
}
# the slots of the wanted principals, highest first
slots=$(entries "$kt" | awk -v want="$want" '
	BEGIN { while ((getline l < want) > 0) w[l] = 1 }
	{ p = $2; sub(/@[^@]*$/, "", p); if (p in w) print $1 }' | sort -rn)
if [ -z "$slots" ]; then
	echo "pv-kt none"
	exit 0
fi
before=$(entries "$kt" | wc -l)
gone=$(printf '%s\n' "$slots" | wc -l)
{
	printf 'rkt %s\n' "$kt"
	for s in $slots; do printf 'delent %s\n' "$s"; done
	printf 'wkt %s\nq\n' "$new"
} | ktutil >/dev/null 2>&1
left=$(entries "$new" | wc -l)
if [ ! -f "$new" ] || [ "$left" -ne $((before - gone)) ]; then
	echo "ktutil did not write the keytab without the alias principals ($left entries of $((before - gone)) expected); $kt is unchanged" >&2
	exit 1
fi
if entries "$new" | awk -v want="$want" 'BEGIN { while ((getline l < want) > 0) w[l] = 1 }
	{ p = $2; sub(/@[^@]*$/, "", p); if (p in w) bad = 1 } END { exit !bad }'; then
	echo "the new keytab still holds alias principals; $kt is unchanged" >&2
	exit 1
fi
chmod "$(stat -c %a -- "$kt")" "$new" && chown "$(stat -c %u:%g -- "$kt")" "$new" &&
	mv -f -- "$new" "$kt"
echo "pv-kt removed $gone"
