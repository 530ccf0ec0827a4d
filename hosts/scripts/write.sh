# hosts/scripts/write.sh: writes a hosts file safely on a POSIX host (hosts/script.h says what
# it does and why). It uses only POSIX sh, cat, cp, mv, rm, mktemp, cksum, sync, getent and,
# when present, flock (util-linux, busybox). LC_ALL=C keeps the error text of mv in English,
# which is how EBUSY is told apart from other rename failures.
# Set before it: f b old new mkbak dropbak wait; the positional parameters are the names to
# verify with getent.
set -u
LC_ALL=C
export LC_ALL
umask 022
: "${f:?}" "${old:?}" "${mkbak:?}" "${dropbak:?}" "${wait:?}"
b=${b-} new=${new-}
tmp='' prev='' bt=''
# shellcheck disable=SC2317 # called by the trap
clean() { [ -z "$tmp$prev$bt" ] || rm -f -- "$tmp" "$prev" "$bt"; }
trap clean EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
die() { c=$1; shift; printf '%s\n' "$*" >&2; exit "$c"; }
fsync() { sync -- "$1" 2>/dev/null || sync; }
if [ -L "$f" ]; then f=$(readlink -f -- "$f") || die 20 "cannot follow the link $f"; fi
if [ ! -f "$f" ] || [ ! -r "$f" ]; then
	die 20 "cannot open $f: missing, not a file or not readable"
fi
if [ -n "$new" ] || [ "$dropbak" = 1 ]; then
	exec 9<"$f"
	if command -v flock >/dev/null 2>&1; then
		flock -w "$wait" 9 || die 21 "$f stayed locked by another writer for $wait s; nothing was written: try again"
	else
		echo "pv-warn no flock on this host: $f is changed without a lock"
	fi
	[ "$(cksum <"$f")" = "$old" ] || die 22 "$f changed after provision read it; nothing was written: run the command again"
fi
if [ -n "$new" ]; then
	how=rename
	if [ -r /proc/self/mountinfo ] && grep -qF -e " $f " /proc/self/mountinfo; then how=in-place; fi
	tmp=$(mktemp -- "$f.provision-new.XXXXXX") || die 23 "cannot create a temporary file next to $f"
	if [ "$how" = rename ]; then cp -p -- "$f" "$tmp" 2>/dev/null || chmod -- 0644 "$tmp"; fi
	cat >"$tmp" || die 24 "cannot write the temporary file $tmp"
	[ "$(cksum <"$tmp")" = "$new" ] || die 25 "the new content of $f arrived incomplete; nothing was written"
	if [ "$mkbak" = 1 ]; then
		if [ -e "$b" ]; then echo 'pv-backup exists'
		else
			{ bt=$(mktemp -- "$b.XXXXXX") && cp -p -- "$f" "$bt" && fsync "$bt" && mv -f -- "$bt" "$b"; } || die 26 "cannot keep a backup of $f as $b; nothing was written"
			bt=
			echo 'pv-backup made'
		fi
	fi
	if [ "$how" = rename ]; then
		fsync "$tmp"
		if err=$(mv -f -- "$tmp" "$f" 2>&1); then
			tmp=
			fsync "${f%/*}/"
		else
			case $err in *[Bb]usy*) how=in-place ;; *) die 27 "cannot replace $f: $err" ;; esac
		fi
	fi
	if [ "$how" = in-place ]; then
		prev=$tmp.old; cat -- "$f" >"$prev" || die 27 "cannot save a copy of $f before rewriting it in place; nothing was written"
		# From the truncation until $f holds the new content (or the old one again), a signal
		# would end the script with $f cut short and the EXIT trap would remove $prev, the
		# only copy: HUP, INT and TERM are ignored meanwhile, by cat too (an ignored signal
		# stays ignored in a child), so the rewrite always ends. It takes milliseconds.
		trap '' HUP INT TERM
		if cat -- "$tmp" >"$f" && fsync "$f" && [ "$(cksum <"$f")" = "$new" ]; then :
		elif cat -- "$prev" >"$f" && fsync "$f"; then
			die 28 "rewriting $f in place failed; its previous content was written back"
		else
			keep=$prev; prev=
			die 28 "rewriting $f in place failed, and so did writing its previous content back: it is in $keep"
		fi
		trap 'exit 129' HUP
		trap 'exit 130' INT
		trap 'exit 143' TERM
	fi
	echo "pv-write $how"
fi
if [ "$dropbak" = 1 ] && [ -e "$b" ]; then
	if [ "$(cksum <"$b")" = "$(cksum <"$f")" ]; then rm -f -- "$b" && echo 'pv-backup removed'
	else echo 'pv-backup kept'; fi
fi
if [ $# -gt 0 ]; then
	out=$(getent hosts -- "$@"); rc=$?
	echo 'pv-getent-output'; printf '%s\n' "$out"; echo "pv-getent $rc"
fi
exit 0
