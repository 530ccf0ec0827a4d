# run/scripts/sink-open.sh: the run's folder $n below the results folder $d on the
# controller, new: status 2 when $d is missing, 17 when $n exists.
: "${d:?}" "${n:?}"
[ -d "$d" ] || {
	echo "no folder $d" >&2
	exit 2
}
mkdir -m 0755 -- "$d/$n" 2>/dev/null || exit 17
