# run/scripts/watch.sh: the server watch's sampler (run/scripts/watch.pl, in $prog), a sample
# every $interval seconds until its stdin ends. Set before it: prog, interval, and procs
# (empty, or "procs": each busy smbd's CPU too).
: "${prog:?}" "${interval:?}"
exec perl -e "$prog" -- "$interval" "${procs:-}"
