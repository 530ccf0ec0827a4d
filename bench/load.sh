#!/usr/bin/env bash
# bench/load.sh: the built-in load driver (issue 12), on the lab, from cli1 (lab 'pvbl': USERS
# users per client, at least 100, prepared here and cleaned up at the end):
#   (1) the client's CPU per simulated user: `provision load` with USERS users at FSCT's rate
#       (331 scenarios per user-hour) for SECS seconds, and at 10x that rate (more scenarios to
#       measure): users one client core carries before the driver is the limit;
#   (2) operations per second at CONNS connections, side by side, ROUNDS rounds alternating,
#       after a warm-up round that is shown and not counted (as bench/signing.sh does):
#       (a) `provision load --ops open-close`: every user over its own connection opens and
#           closes its share's root (one path for the users of a share), as fast as it can,
#           with smbtorture's open (FILE_READ_ATTRIBUTES alone, FILE_OPEN_REPARSE_POINT: a
#           stat open), so that the server does the same work for both;
#       (b) `smbtorture smb2.bench.path-contention-shared` with nprocs=CONNS: CONNS connections
#           of one user opening and closing the share's root;
#       (c) `provision load --ops open-write-close`: open, write 4 KiB, close each user's own
#           file (a heavier operation mix; shown, not compared);
#       both tools counted by the same referee, the server: Samba's profile (smbstatus
#       --profile, CREATE and CLOSE counts, profiling on for the bench): ops/s over a window
#       of SAMPLE seconds (default 5) taken 2 s after the tool's operations began, and client
#       CPU per operation (user+sys of the client process, /usr/bin/time) over every operation
#       the server counted while the tool ran; smbtorture's own count is shown beside it (it
#       runs past its time limit: on this lab its 10 s took 20 s of the server's answers, and
#       its own figure was up to 1.9x the server's count), the ratios a/b of each round,
#       the medians and their ratios;
#   with ENCRYPT="auto on", (2) again with every session encrypted on both sides: a and c with
#       load.encryption on (the cipher Samba picks: AES-128-GCM), b with smbtorture's
#       --client-protection=encrypt: what encryption costs each client, side by side.
# Environment: USERS (default 100), SECS (default 60; 0: no (1)), CONNS (default "16 64"; ""
# for (1) alone), ROUNDS (3), ENCRYPT (default "auto": (2) as the server asks, unencrypted on
# the lab's base srv; "on", or "auto on" for both), KEEP (set: lab pvbl stays prepared, and a
# next run finds it so), PIN (default 1 on 2 CPUs or more: both tools' client processes on CPU
# 0 and srv's Samba on the others, as a load client and its server are on machines of their
# own; on one CPU each send hands it to the smbd it wakes, which both tools then pay for; 0:
# every process anywhere). With PIN, each host's network receive is also steered to its own
# CPUs (RPS on the eth0 of srv and cli1, put back at the end): between namespaces a sender's
# CPU otherwise does the receiver's TCP work (its softirq, and the wake of the process it
# wakes), so each tool paid for the server's receive of its requests, and the server for the
# tool's receive of its answers, which on machines of their own each host does itself.
# Each round also shows how busy srv's CPUs were in each tool's window, and how much of their
# time the hypervisor took (stolen) (/proc/stat: the CPUs srv has with PIN, all of them
# without): at 100% for both, the server is the limit and the ops ratio is its noise, not the
# tools' (both send the same requests: tshark on srv, 174.5 bytes a request and 208 an answer
# on average for either tool, no signing, no bare ACKs; on srv's CPU the same context
# switches, receive softirqs and interrupts an operation), and stolen time moves it further.
# CLIENT_CPU (a percent of one CPU; default none): both tools' client processes held to it (the
# lab's cli-limit group on cli1, removed at the end), so that the client, not srv, is the
# limit: the ops ratio then measures the tools (what one client CPU drives).
. "$(dirname "$0")/lib.sh"

USERS=${USERS:-100}
SECS=${SECS:-60}
CONNS=${CONNS-"16 64"} # "" for (1) alone
ROUNDS=${ROUNDS:-3}
ENCRYPT=${ENCRYPT:-auto}
PIN=${PIN-$(($(nproc) >= 2 ? 1 : 0))}
SAMPLE=${SAMPLE:-5}
NCPU=$(nproc)
CLIENT_CPU=${CLIENT_CPU:-}
# pin_srv CPUS: every process in srv's namespace (smbd, which forks one a connection: those
# inherit it) on CPUS
pin_srv() {
	local p
	for p in $(ip netns pids pvlab-srv); do taskset -a -p -c "$1" "$p" >/dev/null 2>&1 || true; done
}
# steer HOST MASK: HOST's received packets processed on the CPUs of the hex MASK (0: where
# they arrive, the kernel's default)
steer() { ip netns exec "pvlab-$1" sh -c "echo $2 >/sys/class/net/eth0/queues/rx-0/rps_cpus" 2>/dev/null || true; }
# cpu_ticks: the busy, idle and stolen ticks of srv's CPUs (1.. with PIN, all without),
# /proc/stat; stolen: the hypervisor ran something else (this VM's noise)
cpu_ticks() {
	awk -v pin="$PIN" '/^cpu[0-9]+ / && (!pin || $1 != "cpu0") { b += $2 + $3 + $4 + $7 + $8; i += $5 + $6; s += $9 } END { print b, i, s }' /proc/stat
}
ON_CPU=()
if ((PIN)); then
	pin_srv "1-$((NCPU - 1))"
	ON_CPU=(taskset -c 0)
fi
"$LAB_SH" status >/dev/null || { echo "bench: the lab is not up (make lab-up)" >&2; exit 1; }
if ((PIN)); then
	steer srv "$(printf '%x' $(((1 << NCPU) - 2)))"
	steer cli1 1
fi
command -v smbtorture >/dev/null ||
	{ echo "bench: smbtorture is missing: make deps installs it (package samba-testsuite)" >&2; exit 1; }
PER=$((USERS > 100 ? USERS : 100)) # users prepared per client
P=(-p "$PLAYBOOK" --set lab=pvbl --set "users.name_template=bl-{client}-u{n}"
	--set "users.per_client=$PER" --set "controller.results=$BT/results")
# the referee: Samba's profile of srv (its CREATE and CLOSE counts); the base smb.conf put
# back at the end
"$LAB_SH" srv-conf 'smbd profiling level=on' >/dev/null || { echo "bench: srv-conf: profiling on failed" >&2; exit 1; }
((PIN)) && pin_srv "1-$((NCPU - 1))" # (srv-conf started the daemons anew)
srv_ops() { on srv smbstatus --profile 2>/dev/null | awk '/^smb2_(create|close)_count:/ { n += $2 } END { print n + 0 }'; }
if [[ -n ${KEEP:-} ]]; then # KEEP=1: the lab stays prepared for the next run (or by hand)
	trap '"$LAB_SH" srv-conf >/dev/null 2>&1; [[ -z $CLIENT_CPU ]] || "$LAB_SH" cli-limit cli1 off >/dev/null 2>&1; pin_srv "0-$((NCPU - 1))"; steer srv 0; steer cli1 0; echo "bench: lab pvbl left prepared (KEEP); to clean it: provision ${P[*]} cleanup --leave" >&2; rm -rf "$BT"' EXIT
else
	trap '"$LAB_SH" srv-conf >/dev/null 2>&1; [[ -z $CLIENT_CPU ]] || "$LAB_SH" cli-limit cli1 off >/dev/null 2>&1; pin_srv "0-$((NCPU - 1))"; steer srv 0; steer cli1 0; on ctl "$PV" "${P[@]}" cleanup --leave >/dev/null 2>&1; rm -rf "$BT"' EXIT
fi
on ctl "$PV" "${P[@]}" prepare >"$BT/prepare.out" 2>&1 ||
	{ echo "bench: prepare failed:" >&2; tail -5 "$BT/prepare.out" >&2; exit 1; }
# on_cli1 COMMAND...: COMMAND on cli1; with CLIENT_CPU, over SSH from ctl, so that it is born
# under cli1's sshd, in the group the lab's cli-limit holds to CLIENT_CPU (as `run`'s sessions
# are); after prepare, which reaches cli1 over SSH too
if [[ -n $CLIENT_CPU ]]; then
	"$LAB_SH" cli-limit cli1 "$CLIENT_CPU" >/dev/null || { echo "bench: cli-limit cli1 $CLIENT_CPU failed" >&2; exit 1; }
	on_cli1() { on ctl ssh -F "$LAB/ssh/ssh_config" cli1 "$(printf '%q ' "$@")"; }
else
	on_cli1() { on cli1 "$@"; }
fi

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# load_input N RATE [ENCRYPTION]: provision load's stdin for users bl-cli1-u1..uN (their
# trees' shares as `server` put them: user i of cli1 in fsroot((i - 1) mod 2 + 1))
load_input() {
	cat "$LAB/user.pass"
	echo
	echo "config rate=$2 late=1 overload=1 interval=1 seed=1 auth=ntlm encryption=${3:-auto} weights=15,150,40,7,15,50,15,5,15,7,7,5,0 limits=2,1,2,3,3,1,2,1,1,1,2,5,10"
	for n in $(seq 1 "$1"); do echo "user bl-cli1-u$n srvu$n fsroot$(((n - 1) % 2 + 1)) $n"; done
	echo start
}

# run_load N RATE SECS [OPS [ENCRYPTION]]: provision load on cli1; its CPU seconds
# (go once every user has logged on: `ready` on stdout; the seconds that took in $in.ready)
cat >"$BT/load.sh" <<'SH'
in=$1; secs=$2; shift 2
t0=$(date +%s%N)
{
	cat "$in"
	until grep -q '^ready' "$in.out" 2>/dev/null; do sleep 0.1; done
	echo $((($(date +%s%N) - t0) / 1000000)) >"$in.ready"
	echo go
	sleep "$((secs + 5))"
} | /usr/bin/time -f '%U %S' -o "$in.time" "$@" >"$in.out"
SH
run_load() {
	load_input "$1" "$2" "${5:-auto}" >"$BT/in"
	on_cli1 "${ON_CPU[@]}" bash "$BT/load.sh" "$BT/in" "$3" "$PV" load --client cli1 --workgroup LAB \
		--duration "$3" ${4:+--ops "$4"} || { echo "bench: provision load failed" >&2; exit 1; }
	awk '{ print $1 + $2 }' "$BT/in.time"
}

# window MARKER: once the file MARKER exists (the tool's operations began), SAMPLE seconds of
# the server's count, 2 s on: ops/s into $BT/window
window() {
	local c1 c2 t1 t2 k1 k2
	until [[ -e $1 ]]; do sleep 0.05; done
	sleep 2
	t1=$(date +%s%N) c1=$(srv_ops) k1=$(cpu_ticks)
	sleep "$SAMPLE"
	t2=$(date +%s%N) c2=$(srv_ops) k2=$(cpu_ticks)
	awk -v c="$((c2 - c1))" -v t="$((t2 - t1))" 'BEGIN { printf "%.1f\n", c / t * 1e9 }' >"$BT/window"
	# srv's busy and stolen shares of the window, in %
	echo "$k1 $k2" | awk '{ b = $4 - $1; i = $5 - $2; s = $6 - $3; t = b + i + s; printf "%.0f %.0f\n", (t > 0 ? 100 * b / t : 0), (t > 0 ? 100 * s / t : 0) }' >"$BT/busy"
}

((SECS > 0)) && echo "bench: (1) client CPU per simulated user, $USERS users on cli1, ${SECS} s"
for rate in $( ((SECS > 0)) && echo 331 3310); do
	cpu=$(run_load "$USERS" "$rate" "$SECS")
	# scenarios completed: the counts of the kinds' latency histograms, every interval's
	scen=$(python3 -c 'import json, sys
n = 0
for line in open(sys.argv[1]):
    if line.startswith("{"):
        n += sum(c for k in json.loads(line).get("kinds", {}).values() for _, c in k.get("hist", []))
print(n)' "$BT/in.out")
	awk -v c="$cpu" -v s="$scen" -v u="$USERS" -v t="$SECS" -v r="$rate" -v rd="$(cat "$BT/in.ready")" 'BEGIN {
		per_user = c / t / u          # CPU seconds per second per user, at this rate
		per_scen = s ? c / s : 0
		printf "  rate %5d/h: %d scenarios, CPU %.2f s: %.3f ms per scenario, %.4f%% of a core per user", r, s, c, per_scen * 1000, per_user * 100
		if (r == 331) printf " -> %.0f users per core at 331/h (measured)\n", 1 / per_user
		else printf " -> %.0f users per core at 331/h (from the CPU per scenario)\n", 1 / (per_scen * 331 / 3600)
		printf "      (%d users logged on and their trees listed in %.1f s; the CPU includes it)\n", u, rd / 1000
	}'
done

printf 'username = bl-cli1-u1\npassword = %s\ndomain = LAB\n' "$(cat "$LAB/user.pass")" >"$BT/st.auth"
chmod 600 "$BT/st.auth"
for enc in $ENCRYPT; do
	[[ -n $CONNS ]] && printf '\nbench: (2) operations per second, %s connections, %s rounds, encryption %s%s\n' \
		"$CONNS" "$ROUNDS" "$([[ $enc == on ]] && echo "on both sides (ours: load.encryption on; smbtorture: --client-protection=encrypt)" || echo "as the server asks (none on the lab's base srv)")" \
		"$( ((PIN)) && echo "; the clients on CPU 0, srv on CPUs 1-$((NCPU - 1)), each host's receive on its own CPUs (PIN)")"
	for n in $CONNS; do
		: >"$BT/a" && : >"$BT/b" && : >"$BT/c" && : >"$BT/acpu" && : >"$BT/bcpu"
		for ((r = 0; r <= ROUNDS; r++)); do # round 0: a warm-up, shown, not counted
			for side in a b c; do
				rm -f "$BT/in.ready" "$BT/window"
				c0=$(srv_ops)
				case $side in
				a | c)
					window "$BT/in.ready" &
					cpu=$(run_load "$n" 331 10 "$([[ $side == a ]] && echo open-close || echo open-write-close)" "$enc")
					grep -q '"spoke":"SMB [0-9.]*, encrypted' "$BT/in.out" && spoke=encrypted || spoke=clear
					[[ $side == a ]] && echo "$spoke" >"$BT/a.spoke"
					;;
				b)
					prot=()
					[[ $enc == on ]] && prot=(--client-protection=encrypt)
					: >"$BT/st.out"
					(until grep -q '^Running for' "$BT/st.out" 2>/dev/null; do sleep 0.05; done; : >"$BT/in.ready") &
					window "$BT/in.ready" &
					on_cli1 "${ON_CPU[@]}" /usr/bin/time -f '%U %S' -o "$BT/st.time" smbtorture //srvu1/fsroot1 \
						-A "$BT/st.auth" smb2.bench.path-contention-shared \
						"${prot[@]}" \
						--option=torture:nprocs="$n" --option=torture:timelimit=10 \
						>"$BT/st.out" 2>&1 || { echo "bench: smbtorture failed" >&2; tail -5 "$BT/st.out" >&2; exit 1; }
					cpu=$(awk '{ print $1 + $2 }' "$BT/st.time")
					# its own count, shown beside the server's: its last line, open[num/s=...]
					# close[num/s=...] over its time limit
					tr '\r' '\n' <"$BT/st.out" | grep -E '^[0-9.]+ second: open' | tail -1 |
						sed -n 's/.*open\[num\/s=\([0-9]*\).*close\[num\/s=\([0-9]*\).*/\1 \2/p' |
						awk '{ print $1 + $2 }' >"$BT/b.own"
					;;
				esac
				wait # the window
				ops=$(($(srv_ops) - c0)) # every operation the server counted while the tool ran
				cat "$BT/window" >>"$BT/$side"
				read -r busy stolen <"$BT/busy"
				echo "srv $busy% busy, $stolen% stolen" >"$BT/$side.busy"
				echo "$stolen" >>"$BT/stolen"
				[[ $side == c ]] || awk -v c="$cpu" -v o="$ops" 'BEGIN { printf "%.2f\n", c / o * 1e6 }' >>"$BT/${side}cpu"
			done
			((r == 0)) && printf '  %3d conns, warm-up (not counted):' "$n"
			((r == 0)) || printf '  %3d conns, round %d:' "$n" "$r"
			printf ' a %8.0f ops/s (%.1f us CPU/op, %s; %s)   b %8.0f ops/s (%.1f us/op; its own count %s/s; %s)   a/b %.2fx ops, %.2fx CPU/op   c %8.0f ops/s\n' \
				"$(tail -1 "$BT/a")" "$(tail -1 "$BT/acpu")" "$(cat "$BT/a.spoke")" "$(cat "$BT/a.busy")" "$(tail -1 "$BT/b")" \
				"$(tail -1 "$BT/bcpu")" "$(cat "$BT/b.own")" "$(cat "$BT/b.busy")" "$(awk -v a="$(tail -1 "$BT/a")" -v b="$(tail -1 "$BT/b")" 'BEGIN { print a / b }')" \
				"$(awk -v a="$(tail -1 "$BT/acpu")" -v b="$(tail -1 "$BT/bcpu")" 'BEGIN { print a / b }')" "$(tail -1 "$BT/c")"
			((r == 0)) && for f in a b c acpu bcpu; do : >"$BT/$f"; done
		done
		st=$(sort -n "$BT/stolen" 2>/dev/null | tail -1)
		((${st:-0} < 10)) || echo "  (srv's CPUs lost up to $st% of a window to the hypervisor (stolen): those windows' ops and CPU times say more about this machine than about the tools; run again when it is quiet)"
		: >"$BT/stolen"
		ma=$(median <"$BT/a") mb=$(median <"$BT/b") mc=$(median <"$BT/c")
		mac=$(median <"$BT/acpu") mbc=$(median <"$BT/bcpu")
		awk -v a="$ma" -v b="$mb" -v c="$mc" -v ac="$mac" -v bc="$mbc" -v n="$n" 'BEGIN {
			printf "  %3d conns, medians: a %.0f ops/s, b %.0f ops/s: a/b %.2fx the operations; CPU per operation a %.1f us, b %.1f us: a/b %.2fx; c (open-write-close) %.0f ops/s\n", n, a, b, a / b, ac, bc, ac / bc, c
		}'
	done
done
