# samba/scripts/unshare.sh: delete the shares whose comment is the lab's tag, and their folders
# with the trees in them (only a folder provision would have made: <share_path>/<name>), a
# template folder left by a killed 'server --via ssh', and share_path when left empty. Set
# before it: tag, dry (1: only say what would go), base (share_path). Prints one line per
# share: "removed NAME", "would NAME" (dry run) or "failed NAME".
: "${tag:?}" "${dry:?}" "${base:?}"
# the server's other shares are read too: a name such as -x reaches net after its --
net conf listshares 2>/dev/null | while IFS= read -r s; do
	[ "$(net conf getparm -- "$s" comment 2>/dev/null)" = "$tag" ] || continue
	p=$(net conf getparm -- "$s" path 2>/dev/null)
	if [ "$dry" = 1 ]; then
		echo "would $s"
		continue
	fi
	net conf delshare -- "$s" >&2 || { echo "failed $s"; continue; }
	if [ "$p" = "$base/$s" ] && [ -d "$p" ]; then
		rm -rf -- "$p"
	fi
	echo "removed $s"
done
if [ "$dry" != 1 ]; then
	rm -rf -- "$base"/.provision-tpl.*
	rmdir -- "$base" 2>/dev/null || true
fi
