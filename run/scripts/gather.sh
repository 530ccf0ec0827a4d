# run/scripts/gather.sh: a host's step folder $d as a ustar stream on stdout, cut at $max
# bytes (the controller refuses a stream that long).
: "${d:?}" "${max:?}"
cd -- "$d" && tar --format=ustar -cf - . | head -c "$max"
