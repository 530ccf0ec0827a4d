# run/scripts/sink-untar.sh: a ustar stream on stdin (checked by the controller first: files
# and folders only, clean paths) into $rel below the run's folder $d on the controller.
: "${d:?}" "${rel:?}"
mkdir -p -- "$d/$rel" && tar -x --no-same-owner --no-same-permissions -C "$d/$rel" -f -
