#!/usr/bin/env bash
# bench/hosts.sh: ALIASES hosts aliases on cli1 and cli2 at once, provision against the reference,
# side by side on the lab:
#   provision client --users ALIASES   (one SSH session per client, clients in parallel: read,
#                                       merge locally, one locked write + backup + getent check)
#   reference: ssh -F $LAB/ssh/ssh_config HOST 'cat > /etc/hosts' with the same bytes, both
#              clients in parallel (no lock, no change check, no backup, no verification)
# plus provision's re-run (nothing to write) and cleanup client. Both sides are timed inside
# the controller namespace (no lab.sh overhead). Per client: provision's own figure (from
# connect to verified, from --json) and the ssh process's wall time for the reference; total:
# the whole command (process start included) for both. Prints each round, medians over
# ROUNDS and the ratios. Restores both hosts files byte for byte at the end.
# Environment: ALIASES (default 2000), ROUNDS (default 5).
. "$(dirname "$0")/lib.sh"

ALIASES=${ALIASES:-2000}
ROUNDS=${ROUNDS:-5}
CLIENTS=(cli1 cli2)
SSHCFG=$LAB/ssh/ssh_config

"$LAB_SH" status >/dev/null || { echo "bench: the lab is not up (make lab-up)" >&2; exit 1; }
[[ -x $PV ]] || { echo "bench: build first (make)" >&2; exit 1; }

for h in "${CLIENTS[@]}"; do on "$h" cat /etc/hosts >"$BT/found.$h"; done
restore() {
	for h in "${CLIENTS[@]}"; do
		on "$h" sh -c 'cat >/etc/hosts' <"$BT/found.$h" || true
		on "$h" rm -f "/etc/hosts.provision-provision-$h.orig" || true
	done
	rm -rf "$BT"
}
trap restore EXIT

# in_ctl LABEL CMD...: run CMD in ctl, wall time (ns clock inside the namespace) in $BT/LABEL.wall
cat >"$BT/timed.sh" <<'SH'
label=$1; shift
t0=$(date +%s%N)
"$@" >"$label.out" 2>"$label.err"; rc=$?
t1=$(date +%s%N)
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }' >"$label.wall"
exit $rc
SH
in_ctl() {
	local label=$1
	shift
	on ctl bash "$BT/timed.sh" "$BT/$label" "$@" || {
		echo "bench: '$label' failed:" >&2
		tail -5 "$BT/$label.err" "$BT/$label.out" >&2
		exit 1
	}
}

# the reference: both clients at once, each ssh timed on its own
cat >"$BT/ref.sh" <<'SH'
cfg=$1 dir=$2; shift 2
for h in "$@"; do
	(t0=$(date +%s%N)
	 ssh -F "$cfg" "$h" 'cat > /etc/hosts' <"$dir/content.$h" || exit 1
	 t1=$(date +%s%N)
	 awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }' >"$dir/ref.$h.wall") &
done
fail=0
for j in $(jobs -p); do wait "$j" || fail=1; done
exit $fail
SH

client_secs() { # client_secs LABEL HOST: that client's seconds in provision's JSON
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.3f" % [c["seconds"] for c in d["clients"] if c["name"]==sys.argv[2]][0])' "$BT/$1.out" "$2"
}
check_json() { # check_json LABEL STATE
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ok"] and all(c["state"]==sys.argv[2] for c in d["clients"]), d' "$BT/$1.out" "$2" ||
		{ echo "bench: $1: not every client $2" >&2; exit 1; }
}

PVC=("$PV" -p "$PLAYBOOK" --json --no-progress)
in_ctl start "${PVC[@]}" cleanup client # start from files without our block

declare -a W RR CL REF
declare -A PW RW
for ((r = 1; r <= ROUNDS; r++)); do
	in_ctl write "${PVC[@]}" client --users "$ALIASES"
	check_json write written
	in_ctl rerun "${PVC[@]}" client --users "$ALIASES"
	check_json rerun unchanged
	for h in "${CLIENTS[@]}"; do
		on "$h" cat /etc/hosts >"$BT/content.$h"
		PW[$h]+="$(client_secs write "$h") "
	done
	in_ctl cleanup "${PVC[@]}" cleanup client
	check_json cleanup removed
	# the reference writes the same bytes, then the originals go back the same way (untimed)
	in_ctl ref bash "$BT/ref.sh" "$SSHCFG" "$BT" "${CLIENTS[@]}"
	for h in "${CLIENTS[@]}"; do
		on "$h" sh -c 'cat >/etc/hosts' <"$BT/found.$h"
		RW[$h]+="$(val ref."$h" wall) "
	done
	W+=("$(val write wall)") RR+=("$(val rerun wall)") CL+=("$(val cleanup wall)") REF+=("$(val ref wall)")
	printf 'round %d: provision %ss (cli1 %ss, cli2 %ss) | reference %ss (cli1 %ss, cli2 %ss) | re-run %ss | cleanup %ss\n' \
		"$r" "$(val write wall)" "$(client_secs write cli1)" "$(client_secs write cli2)" \
		"$(val ref wall)" "$(val ref.cli1 wall)" "$(val ref.cli2 wall)" "$(val rerun wall)" "$(val cleanup wall)"
done

mw=$(median "${W[@]}") mref=$(median "${REF[@]}") mr=$(median "${RR[@]}") mc=$(median "${CL[@]}")
bytes=$(wc -c <"$BT/content.cli1")
cat <<TXT

hosts.sh: $ALIASES aliases on each of ${#CLIENTS[@]} clients ($bytes bytes per hosts file), $ROUNDS rounds, medians
  write      provision   $mw s total   (cli1 $(median ${PW[cli1]}) s, cli2 $(median ${PW[cli2]}) s per client)
  write      reference   $mref s total   (cli1 $(median ${RW[cli1]}) s, cli2 $(median ${RW[cli2]}) s per client: ssh 'cat > /etc/hosts')
  ratio      provision/reference $(ratio "$mw" "$mref")x total (provision also locks, checks, backs up and runs getent)
  re-run     provision   $mr s total, nothing written
  cleanup    provision   $mc s total, original bytes back
TXT
for h in "${CLIENTS[@]}"; do
	on "$h" cat /etc/hosts | cmp -s - "$BT/found.$h" || { echo "bench: $h's hosts file not restored" >&2; exit 1; }
done
