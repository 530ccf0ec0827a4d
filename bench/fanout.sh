#!/usr/bin/env bash
# bench/fanout.sh: provision over many clients: the same lab and job with 2 clients and with
# CLIENTS (default 32), side by side: check, prepare (10 users per client: users, join, shares,
# SPNs, trees, hosts blocks), status, run with the command driver and with the built-in one
# (one step, 2 users per client, 6 s), and cleanup. For each: wall time, the controller's
# peak memory (RSS) and CPU (/usr/bin/time), and the most SSH sessions the controller held at
# once (ss in ctl, every 0.1 s). Prints both and the ratios, and the memory per client.
# The clients come from the lab's Ansible inventory ($LAB/lab.yaml reads $LAB/clients.ini).
#
#   bench/fanout.sh [CLIENTS (default 32)]
# Brings the lab up at each size (lab.sh up with CLIENTS), takes it down at the end.
. "$(dirname "$0")/lib.sh"

BIG=${1:-32}
PER=10
RES=$LAB/results

# ssh_peak LABEL PID: the most established connections from ctl to port 22 while PID runs
ssh_watch() {
	local max=0 n
	while kill -0 "$1" 2>/dev/null; do
		n=$(ip netns exec pvlab-ctl ss -Htn state established '( dport = :22 )' 2>/dev/null | wc -l)
		((n > max)) && max=$n
		sleep 0.1
	done
	echo "$max"
}

# measure LABEL CMD...: like timed (bench/lib.sh), and the SSH peak into $BT/LABEL.ssh
measure() {
	local label=$1
	shift
	timed "$label" ctl "$@" &
	local pid=$!
	ssh_watch "$pid" >"$BT/$label.ssh"
	wait "$pid" || { echo "bench: $label failed" >&2; exit 1; }
}

one_size() { # N
	local n=$1 users=$(($1 * 2)) pb
	"$LAB_SH" down >/dev/null 2>&1
	CLIENTS=$n "$LAB_SH" up >/dev/null || { echo "bench: lab up with $n clients failed" >&2; exit 1; }
	pb=(-p "$LAB/lab.yaml" --no-progress --set "users.per_client=$PER")
	measure "check$n" "$PV" "${pb[@]}" check
	measure "prepare$n" "$PV" "${pb[@]}" prepare
	measure "status$n" "$PV" "${pb[@]}" status
	measure "runcmd$n" "$PV" "${pb[@]}" run --id "cmd$n" --min-users "$users" \
		--max-users "$users" --step "$users" --duration 6 --warmup 0
	measure "runbi$n" "$PV" "${pb[@]}" --set driver.name=builtin run --id "bi$n" \
		--min-users "$users" --max-users "$users" --step "$users" --duration 6 --warmup 0
	measure "cleanup$n" "$PV" "${pb[@]}" cleanup --leave
	[[ -d $RES ]] || true
}

one_size 2
one_size "$BIG"
"$LAB_SH" down >/dev/null 2>&1

echo
echo "fanout.sh: 2 clients against $BIG (10 users per client; fanout 16; lab, 2 cores)"
printf '  %-9s %9s %9s %6s %10s %10s %6s %8s %8s %5s %5s\n' command "wall 2" "wall $BIG" ratio \
	"RSS 2 KiB" "RSS $BIG" ratio "CPU 2" "CPU $BIG" "ssh 2" "ssh $BIG"
for c in check prepare status runcmd runbi cleanup; do
	printf '  %-9s %9s %9s %6s %10s %10s %6s %8s %8s %5s %5s\n' "$c" "$(val "${c}2" wall)" \
		"$(val "$c$BIG" wall)" "$(ratio "$(val "$c$BIG" wall)" "$(val "${c}2" wall)")" \
		"$(val "${c}2" rss)" "$(val "$c$BIG" rss)" "$(ratio "$(val "$c$BIG" rss)" "$(val "${c}2" rss)")" \
		"$(val "${c}2" cpu)" "$(val "$c$BIG" cpu)" "$(val "${c}2" ssh)" "$(val "$c$BIG" ssh)"
done
for c in prepare runcmd runbi cleanup; do
	printf '  memory per client, %s: %s KiB\n' "$c" \
		"$(awk -v a="$(val "${c}2" rss)" -v b="$(val "$c$BIG" rss)" -v n="$BIG" 'BEGIN { printf "%.0f", (b - a) / (n - 2) }')"
done
