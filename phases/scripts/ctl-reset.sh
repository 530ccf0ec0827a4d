# phases/scripts/ctl-reset.sh: the controller phase on a remote controller host: the results
# folder moved to a timestamped backup and made anew, empty, with its old mode and owner.
# Set before it: r (results), p (its parent), bdir (--backup folder or ""), stamp
# (YYYYmmdd-HHMMSS), create (1: make a missing folder), dry (1: say what would be done).
# Prints one line "pv-ctl <state> [entries backup]"; exit 31-37 with a line on stderr.
set -u
LC_ALL=C
export LC_ALL
: "${r:?}" "${p:?}" "${stamp:?}" "${create:?}" "${dry:?}"
bdir=${bdir-}
die() { c=$1; shift; printf '%s\n' "$*" >&2; exit "$c"; }
# r is absolute (the playbook checks it): find, which takes no --, never reads it as an option
case $r in /*) ;; *) die 33 "results folder $r is not an absolute path" ;; esac
[ -z "$bdir" ] || [ -d "$bdir" ] || die 32 "--backup $bdir is not a folder on this host; create it first"
if [ -L "$r" ]; then die 33 "results folder $r is a symbolic link; set controller.results to the folder it points at"; fi
if [ ! -e "$r" ]; then
	if [ "$create" != 1 ]; then echo 'pv-ctl absent'; exit 0; fi
	if [ "$dry" = 1 ]; then echo 'pv-ctl would-create'; exit 0; fi
	mkdir -p -- "$r" || die 34 "cannot create results folder $r"
	echo 'pv-ctl created'; exit 0
fi
[ -d "$r" ] || die 31 "$r exists and is not a folder; move it away or fix controller.results"
n=$(find "$r" -mindepth 1 -maxdepth 1 -printf x | wc -c) || die 34 "cannot list $r"
if [ "$n" -eq 0 ]; then echo 'pv-ctl empty'; exit 0; fi
dev() { stat -c %d -- "$1"; }
[ "$(dev "$r")" = "$(dev "$p")" ] || die 37 "results folder $r is a mount point, so it cannot be moved; point controller.results at a folder inside it"
if [ -n "$bdir" ]; then
	if ! rr=$(cd -- "$r" && pwd -P) || ! bb=$(cd -- "$bdir" && pwd -P); then
		die 34 "cannot resolve $r or $bdir"
	fi
	case $bb/ in "$rr"/*) die 32 "--backup $bdir lies inside the results folder $r; pick a folder outside it" ;; esac
	[ "$(dev "$bdir")" = "$(dev "$p")" ] || die 32 "--backup $bdir is on another file system than $r: the move would be a copy; pick a folder on the same file system"
	base=$bb/${r##*/}
else base=$r; fi
d=$base.$stamp; i=1
while [ -e "$d" ] || [ -L "$d" ]; do i=$((i + 1)); d=$base.$stamp-$i; done
if [ "$dry" = 1 ]; then echo "pv-ctl would-move $n $d"; exit 0; fi
if ! mode=$(stat -c %a -- "$r") || ! own=$(stat -c %u:%g -- "$r"); then
	die 34 "cannot read the mode of $r"
fi
err=$(mv -- "$r" "$d" 2>&1) || die 35 "cannot move $r to $d: $err"
if ! err=$(mkdir -m "$mode" -- "$r" 2>&1); then
	mv -- "$d" "$r" || die 36 "cannot make $r anew ($err), and moving the results back failed too: they are in $d"
	die 36 "cannot make $r anew: $err; the results were moved back"
fi
chown -- "$own" "$r" 2>/dev/null
echo "pv-ctl moved $n $d"
