# run/scripts/watch.sh: the server watch's sampler (run/scripts/watch.pl, in $prog), a sample
# every $interval seconds until its stdin ends. Set before it: prog, interval.
: "${prog:?}" "${interval:?}"
exec perl -e "$prog" -- "$interval"
