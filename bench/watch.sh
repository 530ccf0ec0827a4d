#!/usr/bin/env bash
# bench/watch.sh: what the server watch of `provision run` costs the server, side by side with
# two references, all three sampling at the same time on the lab's server (srv) every INTERVAL
# seconds for SECS seconds:
#   (a) ours: run/scripts/watch.pl exactly as run starts it (perl -e "$prog" -- INTERVAL,
#       one long-lived process reading /proc; CPU total and per process name, memory, disk,
#       network);
#   (b) vmstat INTERVAL: the standard long-lived sampler (CPU, memory, I/O totals; no per-process
#       figures, no network);
#   (c) a shell loop starting top -bn1 and cat per sample: what one scripts by hand to get
#       per-process CPU over SSH.
# Each side runs under /usr/bin/time in srv (user+sys over wall time, children included: start
# and compile costs count). Prints each round, the medians over ROUNDS, and the ratios; also the
# median of what the sampler says it costs itself (its self= field). Environment: SECS
# (default 30), ROUNDS (default 3), INTERVAL (default 2).
. "$(dirname "$0")/lib.sh"

SECS=${SECS:-30}
ROUNDS=${ROUNDS:-3}
INTERVAL=${INTERVAL:-2}
"$LAB_SH" status >/dev/null || { echo "bench: the lab is not up (make lab-up)" >&2; exit 1; }
prog=$(cat "$TOP/run/scripts/watch.pl")
n=$((SECS / INTERVAL)) # samples per round for the references (they end on their own)

# pct FILE: CPU % of one core from /usr/bin/time's "%e %U %S"
pct() { awk '{ printf "%.3f", ($2 + $3) / $1 * 100 }' "$1"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

: >"$BT/a" && : >"$BT/b" && : >"$BT/c" && : >"$BT/self"
echo "bench: server watch cost on srv, ${SECS} s per round, a sample every ${INTERVAL} s"
printf '%-6s %14s %14s %18s\n' round "ours % core" "vmstat % core" "top loop % core"
for ((r = 1; r <= ROUNDS; r++)); do
	# (a) stdin held open by sleep, as provision's channel holds it; its end stops the sampler
	sleep "$SECS" | on srv /usr/bin/time -f '%e %U %S' -o "$BT/a.$r" perl -e "$prog" -- \
		"$INTERVAL" >"$BT/a.out.$r" &
	a=$!
	on srv /usr/bin/time -f '%e %U %S' -o "$BT/b.$r" vmstat "$INTERVAL" "$n" >/dev/null &
	b=$!
	on srv /usr/bin/time -f '%e %U %S' -o "$BT/c.$r" sh -c "
		i=0
		while [ \$i -lt $n ]; do
			top -bn1 >/dev/null
			cat /proc/diskstats /proc/net/dev /proc/meminfo >/dev/null
			sleep $INTERVAL
			i=\$((i + 1))
		done" >/dev/null &
	c=$!
	wait "$a" "$b" "$c" || { echo "bench: a sampler failed" >&2; exit 1; }
	pct "$BT/a.$r" >>"$BT/a" && echo >>"$BT/a"
	pct "$BT/b.$r" >>"$BT/b" && echo >>"$BT/b"
	pct "$BT/c.$r" >>"$BT/c" && echo >>"$BT/c"
	grep -o 'self=[0-9.]*' "$BT/a.out.$r" | cut -d= -f2 >>"$BT/self"
	printf '%-6s %14s %14s %18s\n' "$r" "$(tail -1 "$BT/a")" "$(tail -1 "$BT/b")" \
		"$(tail -1 "$BT/c")"
done
ma=$(median <"$BT/a")
mb=$(median <"$BT/b")
mc=$(median <"$BT/c")
ms=$(median <"$BT/self")
printf '%-6s %14s %14s %18s\n' median "$ma" "$mb" "$mc"
awk -v a="$ma" -v b="$mb" -v c="$mc" -v s="$ms" 'BEGIN {
	if (b > 0)
		printf "ours / vmstat: %.2fx the CPU", a / b
	else
		printf "vmstat: below what time(1) measures (10 ms a round)"
	printf "; top loop / ours: %.1fx the CPU\n", c / a
	printf "the sampler'"'"'s own figure (self=, median of samples): %.2f%% of one core\n", s
	printf "ours under 1%% of one core: %s\n", a < 1 ? "yes" : "NO"
}'
