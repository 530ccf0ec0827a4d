# run/scripts/cleanup.sh: the run's folder $b on a host, removed (a folder of ours, not a
# link). Never fails.
: "${b:?}"
if [ -d "$b" ] && [ ! -L "$b" ]; then
	rm -rf -- "$b"
fi
exit 0
