# phases/scripts/rm-foreign.sh: the folders of the users whose tree is foreign (it held files
# of another uid: an earlier account of the same name, removed since) removed, so that they
# are built anew. Set before it: base (the share folder) and the folders, relative to it, as
# the arguments ("set -- ./fsroot1/u1 ..."). rm -rf never follows a link inside them, and the
# share folders above are root's.
: "${base:?}"
cd -- "$base" || exit 1
rm -rf -- "$@"
