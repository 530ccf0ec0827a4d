# phases/scripts/send-template.sh: unpack the template tree (a tar stream on stdin, owned by
# root) into a fresh folder .provision-tpl.XXXXXX under share_path, removing any left by a
# killed run, and print its name. Set before it: base (share_path). The folder is root's, in
# share_path (root's): no user can change it.
: "${base:?}"
set -e
cd -- "$base"
rm -rf ./.provision-tpl.*
tpl=$(mktemp -d ./.provision-tpl.XXXXXX)
# the copier reads it as each user (trees.pl): readable by all, writable by root only
chmod 0755 "$tpl"
tar -x -f - -C "$tpl" --no-same-owner || {
	e=$?
	rm -rf -- "$tpl"
	exit $e
}
echo "$tpl"
