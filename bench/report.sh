#!/usr/bin/env bash
# bench/report.sh: how long `provision report` takes on a big run and how large the page is,
# against the targets of docs/report.md (under 1 s and under 2 MB for a 2,000-user run of 10
# steps of 300 s, the server and the DC sampled every 2 s). The run folder is made up by
# bench/synthrun.py as `run` leaves one (manifest.json, load.json, per step watch.csv,
# watch-dc.csv and each client's load.jsonl with a line of figures a second): nothing in it
# is measured, it only has the size of the real thing. Then `provision compare` of two such
# runs. No reference tool writes such a page, so the figures are put against the targets.
# Needs no lab. Environment: USERS (2000), STEPS (10), SECS (300), CLIENTS (2), ROUNDS (5).
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PV="$TOP/bin/provision"
BT=$(mktemp -d /tmp/pv-bench.XXXXXX)
trap 'rm -rf "$BT"' EXIT
USERS=${USERS:-2000}
STEPS=${STEPS:-10}
SECS=${SECS:-300}
CLIENTS=${CLIENTS:-2}
ROUNDS=${ROUNDS:-5}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

[[ -x $PV ]] || { echo "bench: bin/provision missing; run make" >&2; exit 1; }
for s in 1 2; do
	python3 "$TOP/bench/synthrun.py" "$BT/run$s" --users "$USERS" --steps "$STEPS" \
		--secs "$SECS" --clients "$CLIENTS" --watch 2 --seed "$s"
done
echo "bench: report of a made-up run: $USERS users, $STEPS steps of $SECS s, $CLIENTS clients," \
	"samples every 2 s; its folder holds $(du -sm "$BT/run1" | cut -f1) MiB" \
	"($(find "$BT/run1" -name load.jsonl | wc -l) load.jsonl files, $(cat "$BT"/run1/step-*/watch.csv | wc -l) watch rows)"
printf '%-6s %10s %12s %14s\n' round "report s" "max RSS MiB" "compare s"
: >"$BT/t"
: >"$BT/c"
for ((r = 1; r <= ROUNDS; r++)); do
	/usr/bin/time -f '%e %M' -o "$BT/time" "$PV" report "$BT/run1" >/dev/null
	read -r t rss <"$BT/time"
	/usr/bin/time -f '%e' -o "$BT/ctime" "$PV" compare "$BT/run1" "$BT/run2" >/dev/null
	c=$(cat "$BT/ctime")
	echo "$t" >>"$BT/t"
	echo "$c" >>"$BT/c"
	printf '%-6s %10s %12s %14s\n' "$r" "$t" "$((rss / 1024))" "$c"
done
t=$(median <"$BT/t")
c=$(median <"$BT/c")
size=$(stat -c %s "$BT/run1/report.html")
echo "median: report.html written in $t s ($(awk -v t="$t" 'BEGIN { printf "%.2f", t / 1 }')x the 1 s target)," \
	"$(awk -v s="$size" 'BEGIN { printf "%.0f KiB", s / 1024 }') ($(awk -v s="$size" 'BEGIN { printf "%.2f", s / 2e6 }')x the 2 MB target);" \
	"compare of two such runs $c s"
awk -v t="$t" -v s="$size" 'BEGIN { exit !(t < 1 && s < 2e6) }' || {
	echo "bench: over a target" >&2
	exit 1
}
