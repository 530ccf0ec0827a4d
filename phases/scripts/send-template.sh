# phases/scripts/send-template.sh: unpack the template tree (a tar stream on stdin, owned by
# root) into a fresh folder .provision-tpl.XXXXXX under share_path, removing any left by a
# killed run, and print its name. Set before it: base (share_path).
: "${base:?}"
set -e
cd -- "$base"
rm -rf ./.provision-tpl.*
tpl=$(mktemp -d ./.provision-tpl.XXXXXX)
tar -x -f - -C "$tpl" --no-same-owner || {
	e=$?
	rm -rf -- "$tpl"
	exit $e
}
echo "$tpl"
