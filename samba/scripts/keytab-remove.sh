# samba/scripts/keytab-remove.sh: take exactly the given principals (on stdin, one a line,
# without the realm) out of the keytab Samba uses, every kvno and enctype of them, and keep
# everything else in it as it was. Samba 4.17 has no 'net ads keytab delete', and 'flush'
# clears every principal of the account (host/ ones included). So samba/scripts/keytab.pl
# (given in prog) does it in place, under the keytab's lock; where it cannot (exit 3: no perl,
# a keytab it does not read), MIT's ktutil does: the keytab read, the entries deleted highest
# slot first (a deletion renumbers the slots after it), the rest written to a new file beside
# the keytab (beside a link's target: the link stays), checked, given the old one's mode,
# owner and SELinux context (chcon --reference, where chcon is), and renamed over it.
# Set before it: kt (the dedicated keytab file, or "" for the system keytab, which klist -k
# names), prog. Prints "pv-kt removed N" or "pv-kt none" only when that is done; exit 3 when
# it cannot be done here, 1 when it failed (the keytab is then unchanged, or holds fewer of
# the principals: the caller keeps its record of them).
: "${kt?}" "${prog:?}"
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
want=$(mktemp)
new=
trap 'rm -f "$want" ${new:+"$new"}' EXIT
cat >"$want"
if command -v perl >/dev/null 2>&1; then
	perl -e "$prog" -- remove "$kt" <"$want"
	rc=$?
	[ "$rc" -eq 3 ] || exit "$rc"
fi
if ! printf 'q\n' | ktutil >/dev/null 2>&1 || ktutil --version </dev/null 2>&1 | grep -qi heimdal; then
	echo "no MIT ktutil on this host to take the alias principals out of $kt" >&2
	exit 3
fi
# a link is kept: its target is what is replaced
if ! real=$(readlink -f -- "$kt") || [ ! -f "$real" ]; then
	echo "cannot follow $kt to the keytab file" >&2
	exit 1
fi
new="$real.provision-new.$$"
# "slot kvno principal" lines of a keytab, from ktutil
entries() {
	printf 'rkt %s\nlist\nq\n' "$1" | ktutil 2>/dev/null | awk '$1 ~ /^[0-9]+$/ && NF >= 3 { print $1, $3 }'
}
# the slots of the wanted principals, highest first
slots=$(entries "$real" | awk -v want="$want" '
	BEGIN { while ((getline l < want) > 0) w[l] = 1 }
	{ p = $2; sub(/@[^@]*$/, "", p); if (p in w) print $1 }' | sort -rn)
if [ -z "$slots" ]; then
	echo "pv-kt none"
	exit 0
fi
before=$(entries "$real" | wc -l)
gone=$(printf '%s\n' "$slots" | wc -l)
{
	printf 'rkt %s\n' "$real"
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
if ! { chmod "$(stat -c %a -- "$real")" "$new" && chown "$(stat -c %u:%g -- "$real")" "$new"; }; then
	echo "cannot give $new the mode and owner of $real; $kt is unchanged" >&2
	exit 1
fi
# the SELinux context, where there is one to keep (chcon fails where SELinux is off: fine)
if command -v chcon >/dev/null 2>&1; then chcon --reference="$real" -- "$new" 2>/dev/null; fi
if ! err=$(mv -f -- "$new" "$real" 2>&1); then
	echo "cannot replace $real with the keytab without the alias principals: $err; $kt is unchanged" >&2
	exit 1
fi
new=
echo "pv-kt removed $gone"
