# sweep/scripts/remove.sh: a copy's target folder removed after its job, as the user who owns
# it (never root through a folder a user controls). Set before it: user (the domain user, as
# the server's NSS knows it), path (the folder).
: "${user:?}" "${path:?}"
if ! uid=$(id -u -- "$user") || ! gid=$(id -g -- "$user"); then
	echo "remove.sh: the server does not know the user '$user'" >&2
	exit 3
fi
[ "$uid" != 0 ] || { echo "remove.sh: '$user' is root" >&2; exit 3; }
exec setpriv --reuid="$uid" --regid="$gid" --clear-groups -- rm -rf -- "$path"
