# samba/scripts/keytab-add.sh: put the principals on stdin (one a line, without the realm) into
# the keytab Samba uses, with the keys of its own host/ entries (samba/scripts/keytab.pl,
# given in prog, says why and how). Set before it: kt (the dedicated keytab file, or "" for the
# system keytab, which klist -k names), prog. Prints "pv-kt added N". Exit 3 when it cannot be
# done here (no perl, no keytab file yet, one the script does not read): the caller then uses
# 'net ads keytab add', which derives the keys itself.
: "${kt?}" "${prog:?}"
if [ -z "$kt" ]; then
	kt=$(klist -k 2>/dev/null | sed -n 's/^Keytab name: //p' | head -n 1)
fi
kt=${kt#FILE:}
kt=${kt#WRFILE:}
if [ -z "$kt" ] || [ ! -f "$kt" ]; then
	echo "no keytab file to add to (${kt:-klist -k names none})" >&2
	exit 3
fi
if ! command -v perl >/dev/null 2>&1; then
	echo "no perl on this host" >&2
	exit 3
fi
exec perl -e "$prog" -- add "$kt"
