#!/usr/bin/env bash
# bench/capacity.sh: the capacity answer of the built-in driver on the lab, with srv's Samba
# daemons held to a share of one CPU (lab.sh srv-limit) so that a ramp reaches overload on
# this one machine while the clients stay far from theirs (lab 'pvcb', PER users per client,
# prepared here and cleaned up at the end):
#   (1) ROUNDS rounds, alternating: a ramp at CAP % of a CPU, then at 2 x CAP, the same rate
#       (RATE scenarios per user-hour) and seed, each refined to REFINE users: the answers, their
#       median and spread (max - min) at each cap, and the ratio of the answers (2 x CAP over
#       CAP: 2.0 when the instrument is linear in the server's capacity), per round and median.
#   The SMB2 operation mix the server counts is bench/mix.sh's.
# Users stay logged on between steps (load.keep_logged_on), so each step logs on only its new
# users. Environment: CAP (default 10: at 5% of a CPU the lab's server saturated at 40% of its
# quota, and the answers were not linear), RATE (6620: 20 x FSCT's), MIN (20), MAX (140), STEP
# (20: the ramp at CAP; at 2 x CAP every one of them is twice), REFINE (10), DURATION (6),
# ROUNDS (3), PER (users per client, default MAX), FILESET (the playbook's, or a path), KEEP
# (lab pvcb stays prepared).
. "$(dirname "$0")/lib.sh"

CAP=${CAP:-10}
RATE=${RATE:-6620}
MIN=${MIN:-20}
MAX=${MAX:-140}
STEP=${STEP:-20}
REFINE=${REFINE:-10}
DURATION=${DURATION:-6}
ROUNDS=${ROUNDS:-3}
PER=${PER:-$MAX}
"$LAB_SH" status >/dev/null || { echo "bench: the lab is not up (make lab-up)" >&2; exit 1; }
P=(-p "$PLAYBOOK" --set lab=pvcb --set "users.name_template=cb-{client}-u{n}"
	--set "users.per_client=$PER" --set driver.name=builtin --set "load.rate=$RATE"
	--set load.keep_logged_on=true --set "controller.results=$BT/results")
[[ -n ${FILESET:-} ]] && P+=(--set "server.fileset=$FILESET")
prepare_lab pvcb "$LAB_SH" srv-limit off

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
EOF
