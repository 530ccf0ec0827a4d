# samba/scripts/as-admin.sh: the prologue of a script that needs the domain admin's Kerberos
# ticket on the server. The password comes on stdin and is read by kinit alone, which writes
# the ticket into a private ccache removed on exit: no password on a command line, none in a
# shared ccache. Set before it: princ (the admin principal). What follows it runs with
# KRB5CCNAME set. Exit status 4: kinit failed.
: "${princ:?}"
set -e
umask 077
cc=$(mktemp -- "${TMPDIR:-/tmp}/provision-krb5cc.XXXXXX")
trap 'rm -f -- "$cc"' EXIT
export KRB5CCNAME="FILE:$cc"
if ! kinit -- "$princ" >/dev/null; then
	echo 'kinit as the admin failed' >&2
	exit 4
fi
