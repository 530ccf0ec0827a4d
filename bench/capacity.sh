#!/usr/bin/env bash
# bench/capacity.sh: the capacity answer of the built-in driver on the lab, with srv's Samba
# daemons held to a share of one CPU (lab.sh srv-limit) so that a ramp reaches overload on
# this one machine while the clients stay far from theirs (lab 'pvcb', PER users per client,
# prepared here and cleaned up at the end):
#   (1) ROUNDS rounds, alternating: a ramp at CAP % of a CPU, then at 2 x CAP, the same rate
#       (RATE scenarios per user-hour) and seed, each refined to REFINE users: the answers, their
#       median and spread (max - min) at each cap, and the ratio of the answers (2 x CAP over
#       CAP: 2.0 when the instrument is linear in the server's capacity), per round and median;
#   (2) the SMB2 operation mix: the server's own counts (smbstatus --profile, smbd built with
#       profiling: 'smbd profiling level = on', counted from before the ramp's first round to
#       after) against what the driver says it sent (load.json's ops) and FSCT HomeFolders'
#       published mix (Nutanix TN-2117: create 22, close 19, read 14, query_info 13,
#       query_directory 10, write 7, the rest 15).
# Environment: CAP (default 5), RATE (3310: 10 x FSCT's), MIN, MAX, STEP (the ramp at CAP; at
# 2 x CAP it is twice), REFINE (default STEP / 2), DURATION (8), ROUNDS (3), PER (users per
# client, default MAX), FILESET (the playbook's, or a path: playbooks/filesets/homefolders.yaml
# for office-sized documents), KEEP (lab pvcb stays prepared).
. "$(dirname "$0")/lib.sh"

CAP=${CAP:-5}
RATE=${RATE:-3310}
MIN=${MIN:-20}
MAX=${MAX:-200}
STEP=${STEP:-40}
REFINE=${REFINE:-$((STEP / 2))}
DURATION=${DURATION:-8}
ROUNDS=${ROUNDS:-3}
PER=${PER:-$MAX}
"$LAB_SH" status >/dev/null || { echo "bench: the lab is not up (make lab-up)" >&2; exit 1; }
P=(-p "$PLAYBOOK" --set lab=pvcb --set "users.name_template=cb-{client}-u{n}"
	--set "users.per_client=$PER" --set driver.name=builtin --set "load.rate=$RATE"
	--set load.keep_logged_on=true --set "controller.results=$BT/results")
[[ -n ${FILESET:-} ]] && P+=(--set "server.fileset=$FILESET")
cleanup() {
	"$LAB_SH" srv-limit off >/dev/null 2>&1
	"$LAB_SH" srv-conf >/dev/null 2>&1
	if [[ -n ${KEEP:-} ]]; then
		echo "bench: lab pvcb left prepared (KEEP); to clean it: provision ${P[*]} cleanup --leave" >&2
	else
		on ctl "$PV" "${P[@]}" cleanup --leave >/dev/null 2>&1
	fi
	rm -rf "$BT"
}
trap cleanup EXIT
"$LAB_SH" srv-conf 'smbd profiling level=on' >/dev/null || { echo "bench: srv-conf failed" >&2; exit 1; }
on ctl "$PV" "${P[@]}" prepare >"$BT/prepare.out" 2>&1 ||
	{ echo "bench: prepare failed:" >&2; tail -5 "$BT/prepare.out" >&2; exit 1; }

# limit PERCENT: srv's daemons under it (a process leaving as it is moved is tried again)
limit() {
	local _
	for _ in 1 2 3 4 5; do
		"$LAB_SH" srv-limit "$1" >/dev/null 2>&1 && return 0
		sleep 2
	done
	echo "bench: srv-limit $1 failed" >&2
	exit 1
}
# the server's SMB2 counts now: "command count" lines
profile() { on srv smbstatus --profile 2>/dev/null | sed -n 's/^smb2_\([a-z_]*\)_count: *\([0-9]*\)$/\1 \2/p'; }

# ramp ID CAP MIN MAX STEP REFINE: the answer's users (0: none) on stdout
ramp() {
	local id=$1
	limit "$2"
	on ctl "$PV" "${P[@]}" --json run --id "$id" --min-users "$3" --max-users "$4" --step "$5" \
		--refine "$6" --duration "$DURATION" --warmup 2 >"$BT/$id.json" 2>"$BT/$id.err" || {
		echo "bench: run $id failed:" >&2
		tail -5 "$BT/$id.err" >&2
		exit 1
	}
	python3 -c 'import json, sys
a = json.load(open(sys.argv[1]))["answer"]
print(a["users"] or 0)' "$BT/results/$id/load.json"
}

printf 'bench: capacity answers, srv held to %s%% and %s%% of a CPU, %s scenarios per user-hour, %s rounds\n' \
	"$CAP" "$((2 * CAP))" "$RATE" "$ROUNDS"
profile >"$BT/prof0"
: >"$BT/a1"
: >"$BT/a2"
for ((r = 1; r <= ROUNDS; r++)); do
	a1=$(ramp "c1-$r" "$CAP" "$MIN" "$MAX" "$STEP" "$REFINE")
	a2=$(ramp "c2-$r" "$((2 * CAP))" "$((2 * MIN))" "$((2 * MAX))" "$((2 * STEP))" "$REFINE")
	echo "$a1" >>"$BT/a1"
	echo "$a2" >>"$BT/a2"
	printf '  round %d: %s%% -> %4d users, %s%% -> %4d users, ratio %s\n' "$r" "$CAP" "$a1" \
		"$((2 * CAP))" "$a2" "$(ratio "$a2" "$a1")"
done
profile >"$BT/prof1"
python3 - "$BT" "$ROUNDS" "$CAP" <<'EOF'
import json, statistics, sys
bt, rounds, cap = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
a1 = [int(x) for x in open(bt + "/a1").read().split()]
a2 = [int(x) for x in open(bt + "/a2").read().split()]
ratios = [b / a for a, b in zip(a1, a2) if a]
print("  %d%%: median %g users, spread %d (%s); %d%%: median %g, spread %d (%s)" % (
    cap, statistics.median(a1), max(a1) - min(a1), " ".join(map(str, a1)),
    2 * cap, statistics.median(a2), max(a2) - min(a2), " ".join(map(str, a2))))
if ratios:
    print("  ratio 2x cap / cap: median %.2f (rounds %s); 2.00 is linear" % (
        statistics.median(ratios), " ".join("%.2f" % x for x in ratios)))
# the mix: the server's counts over every round, the driver's, FSCT's
def prof(f):
    return {l.split()[0]: int(l.split()[1]) for l in open(f) if len(l.split()) == 2}
p0, p1 = prof(bt + "/prof0"), prof(bt + "/prof1")
server = {k: p1[k] - p0.get(k, 0) for k in p1}
driver = {}
for r in range(1, rounds + 1):
    for c in (1, 2):
        j = json.load(open("%s/results/c%d-%d/load.json" % (bt, c, r)))
        for s in j["steps"]:
            for k, v in s["ops"].items():
                driver[k] = driver.get(k, 0) + v
# Samba's profile names (smbd/smb2_server.c): find is QUERY_DIRECTORY, getinfo QUERY_INFO
fsct = {"create": 22, "close": 19, "read": 14, "getinfo": 13, "find": 10, "write": 7}
names = [("create", "create"), ("close", "close"), ("read", "read"), ("write", "write"),
         ("getinfo", "query_info"), ("find", "query_directory"), ("setinfo", "set_info"),
         ("ioctl", "ioctl"), ("notify", "change_notify"), ("lock", "lock"), ("flush", "flush")]
# what the scenarios sent is what the server counts, but for the logons, tree listings and
# logoffs the driver does not count: those commands are left out of both
skip = {"negprot", "sesssetup", "logoff", "tcon", "tdis", "keepalive", "cancel", "break"}
st = sum(v for k, v in server.items() if k not in skip)
dt = sum(v for k, v in driver.items() if k not in ("negotiate", "session_setup", "logoff",
                                                    "tree_connect", "tree_disconnect"))
print("  SMB2 mix, %% of requests (server: smbstatus --profile; driver: load.json): %d server, %d driver" % (st, dt))
print("  %-16s %8s %8s %6s %7s" % ("command", "server", "driver", "FSCT", "s-FSCT"))
rest_s = rest_d = 100.0
for sk, dk in names:
    s = 100.0 * server.get(sk, 0) / st if st else 0
    d = 100.0 * driver.get(dk, 0) / dt if dt else 0
    f = fsct.get(sk)
    if f is not None:
        rest_s -= s
        rest_d -= d
    print("  %-16s %8.1f %8.1f %6s %7s" % (dk, s, d, f if f is not None else "", "%+.1f" % (s - f) if f is not None else ""))
print("  %-16s %8.1f %8.1f %6d %+7.1f" % ("the rest", rest_s, rest_d, 15, rest_s - 15))
EOF
