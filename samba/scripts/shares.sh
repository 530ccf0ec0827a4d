# samba/scripts/shares.sh: the lab's shares, as Samba registry shares ('net conf'), each on
# its folder under share_path, made when missing (folder first), or found ours. Set before it:
# tag (the comment that marks the lab's shares), dry (1: only say what would be made), base
# (share_path). The positional parameters are the shares' names. Prints one line per share:
# "created NAME", "present NAME", "missing NAME" (dry run), or stops at the first
# "conflict NAME" (a share of that name that is not ours), "nodir NAME" (its folder cannot be
# made) or "refused NAME <net's words>".
: "${tag:?}" "${dry:?}" "${base:?}"
if [ "$dry" != 1 ]; then
	mkdir -p -- "$base" || exit 9
fi
# one 'net conf list' (each net run costs ~0.1 s): the comment of share $1 from it, '-' when
# there is no such share (share names are case-insensitive)
conf=$(net conf list 2>/dev/null)
comment() {
	printf '%s\n' "$conf" | awk -v s="$1" 'BEGIN { s = "[" tolower(s) "]" }
		/^\[/ { f = (tolower($0) == s); if (f) found = 1; next }
		f && $1 == "comment" { sub(/^[^=]*= ?/, ""); c = $0 }
		END { if (!found) print "-"; else print c }'
}
share() {
	c=$(comment "$1")
	if [ "$c" != - ]; then
		if [ "$c" != "$tag" ]; then
			echo "conflict $1"
			return 1
		fi
		if [ "$dry" != 1 ]; then
			mkdir -p -- "$2" || { echo "nodir $1"; return 1; }
		fi
		echo "present $1"
	elif [ "$dry" = 1 ]; then
		echo "missing $1"
	else
		made=0
		[ -d "$2" ] || made=1
		if ! mkdir -p -- "$2" || ! chmod -- 0755 "$2"; then
			echo "nodir $1"
			return 1
		fi
		if o=$(net conf addshare -- "$1" "$2" writeable=y guest_ok=n "$tag" 2>&1); then
			echo "created $1"
		else
			[ $made = 0 ] || rmdir -- "$2" 2>/dev/null
			echo "refused $1 $(printf '%s' "$o" | tr '\n' ' ')"
			return 1
		fi
	fi
}
for s; do
	share "$s" "$base/$s" || {
		rmdir -- "$base" 2>/dev/null
		exit 0
	}
done
