# run/scripts/run-client.sh: a host's command of a step under its wrapper
# (run/scripts/run-client.pl, in $prog). Set before it: prog, base (the run's folder on the
# host), step (step-NN), pw (1: the password is the first line of stdin), label, cmd.
: "${prog:?}" "${base:?}" "${step:?}" "${pw:?}" "${label:?}" "${cmd:?}"
exec perl -e "$prog" -- "$base" "$step" "$pw" "$label" "$cmd"
