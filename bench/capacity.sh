#!/usr/bin/env bash
# bench/capacity.sh: the capacity answer of the built-in driver on the lab, with srv's Samba
# daemons held to a share of one CPU (lab.sh srv-limit) so that a ramp reaches overload on
# this one machine while the clients stay far from theirs (lab 'pvcb', PER users per client,
# prepared here and cleaned up at the end). What tests/integration/t_capacity.sh cannot assert
# from one run, measured over ROUNDS rounds, each of three ramps with the same seed, refined
# to REFINE users:
#   (1) at CAP % of a CPU and RATE scenarios per user-hour (MIN..MAX by STEP);
#   (2) at 2 x CAP, the same rate (every user count twice): twice (1)'s answer when the
#       instrument is linear in the server's capacity;
#   (3) at 2 x CAP and 2 x RATE (the user counts of (1)): (1)'s answer again, the load per
#       user doubled as the server's CPU is.
# Printed: each round's answers and ratios (2)/(1) (2.00 is linear) and (3)/(1) (1.00); then
# per ramp the median and spread (max - min) of the answers over the rounds, which is how
# repeatable one answer is (the same seed each round), how many rounds were within one STEP
# of the median, and the median ratios. The SMB2 operation mix the server counts is
# bench/mix.sh's.
# Users stay logged on between steps (load.keep_logged_on), so each step logs on only its new
# users. Environment: CAP (default 10: at 5% of a CPU the lab's server saturated at 40% of its
# quota, and the answers were not linear), RATE (6620: 20 x FSCT's), MIN (10), MAX (70), STEP
# (10), REFINE (5: since the mix learned from the fileset, srv at 10% carries about 20 users at
# this rate, the edge of a ramp from 20), OVER (2: --over-steps, the ramp ends 2 steps over the
# answer), DURATION (6), ROUNDS (3), PER (users per client, default MAX: what each
# of the two clients has at (2)'s 2 x MAX), FILESET (the playbook's, or a path), KEEP (lab pvcb
# stays prepared).
. "$(dirname "$0")/lib.sh"

CAP=${CAP:-10}
RATE=${RATE:-6620}
MIN=${MIN:-10}
MAX=${MAX:-70}
STEP=${STEP:-10}
REFINE=${REFINE:-5}
OVER=${OVER:-2}
DURATION=${DURATION:-6}
ROUNDS=${ROUNDS:-3}
PER=${PER:-$MAX}
"$LAB_SH" status >/dev/null || { echo "bench: the lab is not up (make lab-up)" >&2; exit 1; }
P=(-p "$PLAYBOOK" --set lab=pvcb --set "users.name_template=cb-{client}-u{n}"
	--set "users.per_client=$PER" --set driver.name=builtin
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
# ramp ID CAP RATE MIN MAX STEP: the answer's users (0: none) on stdout
ramp() {
	local id=$1
	limit "$2"
	on ctl "$PV" "${P[@]}" --set "load.rate=$3" --json run --id "$id" --min-users "$4" \
		--max-users "$5" --step "$6" --refine "$REFINE" --over-steps "$OVER" --duration "$DURATION" --warmup 2 \
		>"$BT/$id.json" 2>"$BT/$id.err" || {
		echo "bench: run $id failed:" >&2
		tail -5 "$BT/$id.err" >&2
		exit 1
	}
	python3 -c 'import json, sys
a = json.load(open(sys.argv[1]))["answer"]
print(a["users"] or 0)' "$BT/results/$id/load.json"
}

printf 'bench: capacity answers, srv held to %s%% and %s%% of a CPU, %s and %s scenarios per user-hour, %s rounds, refined to %s users\n' \
	"$CAP" "$((2 * CAP))" "$RATE" "$((2 * RATE))" "$ROUNDS" "$REFINE"
: >"$BT/answers"
for ((r = 1; r <= ROUNDS; r++)); do
	a1=$(ramp "c1-$r" "$CAP" "$RATE" "$MIN" "$MAX" "$STEP")
	a2=$(ramp "c2-$r" "$((2 * CAP))" "$RATE" "$((2 * MIN))" "$((2 * MAX))" "$((2 * STEP))")
	a3=$(ramp "c3-$r" "$((2 * CAP))" "$((2 * RATE))" "$MIN" "$MAX" "$STEP")
	echo "$a1 $a2 $a3" >>"$BT/answers"
	printf '  round %d: (1) %s%% -> %4d users, (2) %s%% -> %4d, (3) %s%% at twice the rate -> %4d; (2)/(1) %s, (3)/(1) %s\n' \
		"$r" "$CAP" "$a1" "$((2 * CAP))" "$a2" "$((2 * CAP))" "$a3" "$(ratio "$a2" "$a1")" "$(ratio "$a3" "$a1")"
done
python3 - "$BT/answers" "$STEP" <<'EOF'
import statistics, sys
rows = [[int(x) for x in l.split()] for l in open(sys.argv[1]) if l.strip()]
step = int(sys.argv[2])
names = ("(1) cap", "(2) 2 x cap", "(3) 2 x cap, 2 x rate")
for k, name in enumerate(names):
    v = [r[k] for r in rows]
    med = statistics.median(v)
    near = sum(1 for x in v if abs(x - med) <= (2 if k == 1 else 1) * step)
    print("  %s: median %g users, spread %d (%s); %d of %d rounds within one step of the median" % (
        name, med, max(v) - min(v), " ".join(map(str, v)), near, len(v)))
for k, name, linear in ((1, "(2)/(1)", "2.00"), (2, "(3)/(1)", "1.00")):
    ratios = [r[k] / r[0] for r in rows if r[0]]
    if ratios:
        print("  ratio %s: median %.2f (rounds %s); %s is linear" % (
            name, statistics.median(ratios), " ".join("%.2f" % x for x in ratios), linear))
EOF
