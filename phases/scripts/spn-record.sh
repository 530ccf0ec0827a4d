# phases/scripts/spn-record.sh: the record of the alias SPNs this lab added to the server's
# account, the file $base/.provision-spns.$lab on the server. $action: add (stdin appended, the
# folder made when missing), read (on stdout; nothing when there is none) or remove.
: "${base:?}" "${lab:?}" "${action:?}"
f=$base/.provision-spns.$lab
case $action in
add) mkdir -p -- "$base" && cat >>"$f" ;;
read) cat -- "$f" 2>/dev/null || true ;;
remove) rm -f -- "$f" ;;
*)
	echo "spn-record: no action '$action'" >&2
	exit 2
	;;
esac
