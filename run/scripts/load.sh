# run/scripts/load.sh: `provision load` on a client, the built-in driver's part (its users and
# settings come on stdin). Set before it: bin (provision there), client, wg (the users'
# NetBIOS domain), secs (the step's seconds), timeout (per SMB request).
: "${bin:?}" "${client:?}" "${wg:?}" "${secs:?}" "${timeout:?}"
exec "$bin" load --client "$client" --workgroup "$wg" --duration "$secs" --timeout "$timeout"
