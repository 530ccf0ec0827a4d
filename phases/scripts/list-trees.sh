# phases/scripts/list-trees.sh: what folders under the server's share_path hold, as
# "TYPE SIZE UID PATH" records ended by NUL (TYPE f, d, l...; UID the owner's, numeric; PATH
# relative to share_path). Set
# before it: base (share_path). The positional parameters are the folders to list, relative
# to base; those that do not exist are skipped. find takes no --: each folder is given as
# ./FOLDER, so no name is ever read as an option or an expression, and the paths printed start
# with ./ (the reader drops it).
: "${base:?}"
cd -- "$base" 2>/dev/null || exit 0
for d; do
	if [ -d "$d" ]; then
		set -- "$@" "./$d"
	fi
	shift
done
[ $# -gt 0 ] || exit 0
find "$@" -mindepth 1 -printf '%y %s %U %p\0'
