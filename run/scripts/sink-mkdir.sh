# run/scripts/sink-mkdir.sh: the folder $rel below the run's folder $d on the controller.
: "${d:?}" "${rel:?}"
mkdir -m 0755 -- "$d/$rel"
