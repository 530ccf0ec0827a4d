# phases/scripts/rm-template.sh: the template tree $tpl (a name below the share folder $base,
# where trees.pl copied users' trees from) removed once every tree is built.
: "${base:?}" "${tpl:?}"
cd -- "$base" && rm -rf -- "$tpl"
