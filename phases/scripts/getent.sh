# phases/scripts/getent.sh: the uid and gid of users through the server's NSS (winbind), as
# "name:uid:gid" lines. Set before it: flush (1: flush Samba's name cache first: it keeps
# name -> SID answers for 'winbind cache time', and a user deleted and made again meanwhile
# would map to the old uid), sep (the winbind separator, "" to ask wbinfo), d (the NetBIOS
# domain). The positional parameters are the user names.
: "${flush:?}" "${d:?}"
sep=${sep-}
if [ "$flush" = 1 ]; then
	net cache flush >/dev/null 2>&1
fi
if [ -z "$sep" ]; then
	sep=$(wbinfo --separator 2>/dev/null) || sep=\\
fi
for u; do
	set -- "$@" "$d$sep$u"
	shift
done
getent passwd -- "$@" | cut -d: -f1,3,4
exit 0
