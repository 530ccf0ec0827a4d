#!/usr/bin/env bash
# tests/integration/t_longday.sh: `run` (driver builtin) through the faults of a long test day
# (lab 'pvday', 20 users per client, 10x FSCT's rate). Claims, each asserted with what the run
# wrote and independent tools (smbstatus on srv, the run's folders):
#  1. srv's smbd restarted in the middle of a step: every user's connection drops and logs on
#     again within the step (smbstatus counts their sessions again), the step says so ("N
#     connections dropped, N logged on again"), its gap counts as overload (unserved
#     scenarios), and the run goes on to its next step, exit 0;
#  2. a client's provision load killed in the middle of a step (the kill confirmed to land
#     while the step runs): the other client goes on to the step's end, the step counts for
#     nothing (one client lost), the killed client's figures until then are kept, the next
#     step starts it again and runs with both, exit 10 (partial);
#  3. the DC stopped while a step's new users log on: their failed logons are counted and
#     named beside the DC's CPU, and once the DC is back the next step logs every user on;
#  4. the controller's results disk fills: the run stops with a clear error naming the full
#     disk, what it gathered is kept (every JSON file there whole: it parses) and `report`
#     reads it.
. "$(dirname "$0")/lib.sh"

D=$(mktemp -d /tmp/pv-day-it.XXXXXX)
RES=$D/results
P=(-p "$PLAYBOOK" --set lab=pvday --set "users.name_template=pd-{client}-u{n}"
	--set users.per_client=20 --set driver.name=builtin --set load.rate=3310
	--set "controller.results=$RES")
trap '"$LAB_SH" dc start >/dev/null 2>&1; mountpoint -q "$D/small" && umount "$D/small"
	on ctl "${PVT[@]}" "$PV" "${P[@]}" cleanup --leave >/dev/null 2>&1; rm -rf "$D" "$T_TMP"' EXIT

# sessions: this lab's users' sessions on srv (smbstatus, a probe)
sessions() {
	probe "smbstatus on srv" 0 on srv smbstatus -b --json || { echo -1; return; }
	python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(1 for s in d["sessions"].values() if "pd-" in s.get("username","")))' <<<"$PROBE"
}
# until_sessions N SECONDS: until srv has N sessions of the lab's users at least
until_sessions() {
	local end=$((SECONDS + $2))
	while ((SECONDS < end)); do
		(($(sessions) >= $1)) && return 0
		sleep 0.2
	done
	return 1
}
# the run's load.json, a step's field: json_step RUN STEP KEY...
json_step() {
	python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["steps"][int(sys.argv[2])-1]
for k in sys.argv[3:]: s = s[k]
print(s)' "$RES/$1/load.json" "${@:2}"
}

pv "${P[@]}" cleanup --leave >/dev/null
pv "${P[@]}" prepare
expect_rc 0 "prepare"

# 1. smbd restarted in the middle of step 1 (of 2)
pv_bg "${P[@]}" run --id day-restart --min-users 20 --max-users 40 --step 20 --duration 15 --warmup 0
pv_when 'run: step 1: the load goes' 120
until_sessions 20 20 || fail "the step's 20 users were never all logged on at srv"
on srv "$LAB/bin/lab-service" restart smbd >/dev/null || fail "smbd did not restart"
until_sessions 20 12 || fail "the users did not log on again within 12 s of smbd's restart ($(sessions) sessions)"
pv_bg_wait 200
expect_rc 0 "run through an smbd restart"
expect_out " 20 connections dropped, 20 logged on again" "step 1 says its connections dropped and came back"
[[ $(json_step day-restart 1 connections_dropped) == 20 && $(json_step day-restart 1 reconnected) == 20 ]] ||
	fail "load.json's step 1: $(json_step day-restart 1 connections_dropped) dropped, $(json_step day-restart 1 reconnected) reconnected"
(($(json_step day-restart 1 all unserved) > 0)) || fail "the restart's gap is not counted as unserved scenarios"
[[ $(json_step day-restart 2 connected) == 40 && $(json_step day-restart 2 connections_dropped) == 0 ]] ||
	fail "step 2 did not run with its 40 users connected"

# 2. cli2's provision load killed in the middle of step 1 (of 2)
pv_bg "${P[@]}" run --id day-kill --min-users 20 --max-users 40 --step 20 --duration 8 --warmup 0
pv_when 'run: step 1: the load goes' 120
pid=
for _ in $(seq 100); do
	pid=$(pgrep -f -- '^/var/tmp/provision-[0-9a-f]+/provision load --client cli2 ' | head -1)
	[[ -n $pid ]] && break
	sleep 0.1
done
[[ -n $pid ]] || fail "provision load is not running on cli2"
# the kill lands mid-step: the step has begun (above); two of its 1 s intervals go by first,
# and the step must not have ended (it is said so after the kill too: the kill is before it)
sleep 2
grep -q 'run: step 1 ends' "$T_TMP/bgerr" && fail "step 1 ended before the kill could land in it"
kill -KILL "$pid" || fail "cli2's provision load was gone before the kill"
pv_bg_wait 200
expect_rc 10 "run with cli2's load killed in step 1"
expect_err "the run went on" "the run says it went on"
python3 - "$RES/day-kill" <<'EOF' || fail "the killed client's step and the next one"
import json, os, sys
d = sys.argv[1]
m = json.load(open(os.path.join(d, "manifest.json")))
s1 = {h["name"]: h["state"] for h in m["steps"][0]["hosts"]}
s2 = {h["name"]: h["state"] for h in m["steps"][1]["hosts"]}
assert s1["cli2"] in ("lost", "failed") and s1["cli1"] in ("done", "stopped"), s1
assert s2["cli1"] in ("done", "stopped") and s2["cli2"] in ("done", "stopped"), s2
l = json.load(open(os.path.join(d, "load.json")))["steps"]
assert l[0]["clients_lost"] == 1 and not l[0]["carried"], l[0]
assert l[1]["clients_lost"] == 0 and l[1]["connected"] == 40, l[1]
# the killed client's figures until its death are kept: lines of figures in step 1
lines = [x for x in open(os.path.join(d, "step-01", "cli2", "load.jsonl")) if x.startswith('{"load"')]
assert len(lines) >= 1, lines
# the other went to the step's end: more intervals than the killed one
other = [x for x in open(os.path.join(d, "step-01", "cli1", "load.jsonl")) if x.startswith('{"load"')]
assert len(other) > len(lines), (len(other), len(lines))
EOF

# 3. the DC stopped while step 2's new users log on; back for step 3
pv_bg "${P[@]}" run --id day-dc --min-users 20 --max-users 40 --step 10 --duration 6 --warmup 0
pv_when 'run: step 1: the load goes' 120
"$LAB_SH" dc crash >/dev/null || fail "dc crash"
pv_when 'run: step 2: the load goes' 120
"$LAB_SH" dc start >/dev/null || fail "dc start"
pv_bg_wait 300
expect_rc 0 "run with the DC stopped for step 2's logons"
python3 - "$RES/day-dc" <<'EOF' || fail "the DC's stop in the run's figures"
import json, os, sys
l = json.load(open(os.path.join(sys.argv[1], "load.json")))["steps"]
assert l[1]["logon"]["failed"] >= 10 and not l[1]["carried"], l[1]["logon"]
assert "dc_cpu_pct" in l[1], l[1]
assert l[2]["logon"]["failed"] == 0 and l[2]["connected"] == 40, l[2]["logon"]
EOF
grep -Eq "^ +2 +30 .*logons failed" "$RES/day-dc/load.txt" || grep -q "10 logons failed" "$RES/day-dc/load.txt" ||
	fail "load.txt does not name step 2's failed logons: $(grep -E '^ +2 ' "$RES/day-dc/load.txt")"

# 4. the controller's results disk fills
mkdir -p "$D/small"
mount -t tmpfs -o size=48k pvday-small "$D/small" || fail "cannot mount a small tmpfs"
pv "${P[@]}" --set "controller.results=$D/small" run --id day-full --min-users 10 --max-users 40 --step 10 \
	--duration 3 --warmup 0
expect_rc 9 "a run onto a disk that fills"
expect_err "the run's results could not be written on the controller \(.*No space left on device\): the run stopped after step [123]; what it gathered is in $D/small/day-full" \
	"the run stops, naming the full disk"
[[ -s $D/small/day-full/manifest.json ]] || fail "no manifest kept on the full disk"
# nothing half-written under a name read as whole: every JSON file kept parses
while IFS= read -r -d '' f; do
	python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f" 2>/dev/null ||
		fail "a half-written file left on the full disk: $f ($(stat -c %s "$f") bytes)"
done < <(find "$D/small/day-full" -name '*.json' -print0)
pv report "$D/small/day-full" --html "$D/full-report.html"
expect_rc 0 "report on what a run onto a full disk kept"
[[ -s $D/full-report.html ]] || fail "report wrote no page"
umount "$D/small"

pv "${P[@]}" cleanup --leave
finish
