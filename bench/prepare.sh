#!/usr/bin/env bash
# bench/prepare.sh: `provision prepare` against the five phases run one by one, side by side on
# the lab, from nothing each time (cleanup --leave before each side):
#   (a) provision prepare                                   (dc beside join and beside
#                                                            client -> controller; then server)
#   (b) provision dc; join; server; client; controller      (one after the other: the sum)
# and the same again on a prepared lab (nothing to do: the re-run cost). Both sides are timed
# inside the controller namespace (no lab.sh overhead), in alternating order per round. Prints
# each round, the medians over ROUNDS, the ratio b/a, and each phase's own time within (a),
# which shows what overlapped. Environment: USERS (per client, default 10), ROUNDS (default 3).
. "$(dirname "$0")/lib.sh"

USERS=${USERS:-10}
ROUNDS=${ROUNDS:-3}
"$LAB_SH" status >/dev/null || { echo "bench: the lab is not up (make lab-up)" >&2; exit 1; }
[[ -x $PV ]] || { echo "bench: build first (make)" >&2; exit 1; }
P=(-p "$PLAYBOOK" --set lab=pvbench --set "users.name_template=pb-{client}-u{n}"
	--set "users.per_client=$USERS" --set "controller.results=$BT/results")

# in ctl: each command timed there; "wall" lines, one a command, in $BT/LABEL.wall
cat >"$BT/timed.sh" <<'SH'
label=$1; shift
: >"$label.wall"
while [ $# -gt 0 ]; do
	cmd=$1; shift
	t0=$(date +%s%N)
	eval "$cmd" >>"$label.out" 2>>"$label.err" || { echo "failed: $cmd" >>"$label.err"; exit 1; }
	t1=$(date +%s%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", (b - a) / 1e9 }' >>"$label.wall"
done
SH
pvq() { printf '%q ' "$PV" "${P[@]}" "$@"; }
run() { # LABEL COMMAND...
	local label=$1
	shift
	: >"$BT/$label.out"
	: >"$BT/$label.err"
	on ctl bash "$BT/timed.sh" "$BT/$label" "$@" || {
		echo "bench: '$label' failed:" >&2
		tail -5 "$BT/$label.err" >&2
		exit 1
	}
}
sum() { awk '{ s += $1 } END { printf "%.3f", s }' "$BT/$1.wall"; }
fresh() { run clean "$(pvq cleanup --leave)"; }
trap 'on ctl "$PV" "${P[@]}" cleanup --leave >/dev/null 2>&1; rm -rf "$BT"' EXIT

declare -a A B A2 B2 PH
echo "prepare vs the five phases one by one: $USERS users per client, 2 clients, $ROUNDS rounds"
for ((i = 1; i <= ROUNDS; i++)); do
	for side in a b; do
		[[ $((i % 2)) -eq 0 ]] && side=$([[ $side == a ]] && echo b || echo a)
		fresh
		if [[ $side == a ]]; then
			run "a$i" "$(pvq --json prepare) >'$BT/a$i.json'"
			run "a2$i" "$(pvq prepare)"
		else
			run "b$i" "$(pvq dc)" "$(pvq join)" "$(pvq server)" "$(pvq client)" "$(pvq controller)"
			run "b2$i" "$(pvq dc)" "$(pvq join)" "$(pvq server)" "$(pvq client)" "$(pvq controller)"
		fi
	done
	A+=("$(sum "a$i")")
	B+=("$(sum "b$i")")
	A2+=("$(sum "a2$i")")
	B2+=("$(sum "b2$i")")
	PH+=("$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join("%s %.1f" % (p["phase"], p["seconds"]) for p in d["phases"]))' "$BT/a$i.json")")
	printf '  round %d: (a) prepare %.2f s [%s], (b) one by one %.2f s [%s]; again: %.2f vs %.2f s\n' \
		"$i" "${A[-1]}" "${PH[-1]}" "${B[-1]}" "$(paste -sd' ' "$BT/b$i.wall")" "${A2[-1]}" "${B2[-1]}"
done
ma=$(median "${A[@]}")
mb=$(median "${B[@]}")
ma2=$(median "${A2[@]}")
mb2=$(median "${B2[@]}")
printf 'median, from nothing: prepare %.2f s, one by one %.2f s: b/a %s\n' "$ma" "$mb" "$(ratio "$mb" "$ma")"
printf 'median, prepared lab: prepare %.2f s, one by one %.2f s: b/a %s\n' "$ma2" "$mb2" "$(ratio "$mb2" "$ma2")"
echo "(within prepare, join and client -> controller run beside dc, server once dc and join are through: their seconds overlap)"
