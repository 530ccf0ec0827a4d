#!/usr/bin/env bash
# tests/integration/long/t_hour.sh (make check-long; not in make check): a run of LONG_MINUTES
# (default 60) minutes, driver builtin, 40 users (20 per client) at 10x FSCT's rate in one
# step of that length, on a lab of its own. Every 30 s the controller's provision and each
# client's provision load are sampled: resident memory (VmRSS) and open files (/proc/PID/fd).
# Claims: the run ends well (exit 0), and neither grows: each process's last samples (its
# last sixth) against its first (its first sixth after a minute's warm-up): memory within 10%
# plus 4 MiB, open files within 4. The figures are printed (the note quotes them).
. "$(dirname "$(dirname "$0")")/lib.sh"

MIN=${LONG_MINUTES:-60}
D=$(mktemp -d /tmp/pv-hour-it.XXXXXX)
P=(-p "$PLAYBOOK" --set lab=pvhour --set "users.name_template=ph-{client}-u{n}"
	--set users.per_client=20 --set driver.name=builtin --set load.rate=3310
	--set "controller.results=$D/results")
trap 'on ctl "${PVT[@]}" "$PV" "${P[@]}" cleanup --leave >/dev/null 2>&1; rm -rf "$D" "$T_TMP"' EXIT
PV_TIMEOUT=$(((MIN + 10) * 60))
PVT=(timeout --foreground --kill-after=10 "$PV_TIMEOUT")

pv "${P[@]}" cleanup --leave >/dev/null
pv "${P[@]}" prepare
expect_rc 0 "prepare"
pv_bg "${P[@]}" run --id hour --min-users 40 --max-users 40 --step 1 --duration $((MIN * 60)) --warmup 0
pv_when 'run: step 1: the load goes' 300
sample() { # NAME PID: "seconds rss_kB fds" into $D/NAME
	local rss fds
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$2/status" 2>/dev/null) || return
	fds=$(find "/proc/$2/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
	[[ -n $rss ]] && echo "$SECONDS $rss $fds" >>"$D/$1"
}
t0=$SECONDS
while kill -0 "$BG" 2>/dev/null; do
	sample controller "$PV_PID"
	for c in cli1 cli2; do
		p=$(pgrep -f -- "^/var/tmp/provision-[0-9a-f]+/provision load --client $c " | head -1)
		[[ -n $p ]] && sample "$c" "$p"
	done
	sleep 30
done
pv_bg_wait
expect_rc 0 "a run of $MIN minutes"
echo "  $(((SECONDS - t0) / 60)) minutes sampled" >&2
for n in controller cli1 cli2; do
	python3 - "$D/$n" "$n" <<'PY' || fail "$n grew over the run"
import statistics, sys
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1])]
t0 = rows[0][0]
rows = [r for r in rows if r[0] - t0 >= 60] or rows  # after a minute's warm-up
k = max(1, len(rows) // 6)
first, last = rows[:k], rows[-k:]
m0, m1 = statistics.median(r[1] for r in first), statistics.median(r[1] for r in last)
f0, f1 = max(r[2] for r in first), max(r[2] for r in last)
print("  %-10s memory %6.1f MiB -> %6.1f MiB (peak %6.1f), open files %d -> %d, %d samples"
      % (sys.argv[2], m0 / 1024, m1 / 1024, max(r[1] for r in rows) / 1024, f0, f1, len(rows)), file=sys.stderr)
assert m1 <= m0 * 1.10 + 4096, (m0, m1)
assert f1 <= f0 + 4, (f0, f1)
PY
done
pv "${P[@]}" cleanup --leave
finish
