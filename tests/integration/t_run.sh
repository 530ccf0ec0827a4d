#!/usr/bin/env bash
# tests/integration/t_run.sh: `provision run` with the command driver on cli1 and cli2. A
# 2-step ramp runs the lab playbook's load (every user reads its own tree through its own alias
# with smbclient): the right commands ran on the right hosts with the right user counts (each
# command writes who it is, checked against the lab host's own hostname), the results and the
# manifest were gathered (the playbook's SHA-256 checked with sha256sum), and the server watch's
# CSVs are there and plausible. Then the faults: impossible plans refused before anything
# starts, a failing command, a client whose sshd dies mid-step (once provision knows every
# client's command runs: the controller's command started; reported lost, the rest stopped,
# results kept, status 10, its processes gone), Ctrl-C (status 15) and the run's timeout (status 14), each leaving
# no process of the run on any host; and the drain between steps (drain.between_steps), one
# that drains and one that never does (status 14, the ramp stops). The lab's hosts share one PID namespace, so `ps` on each
# host sees the same processes; it is asked on every host all the same, as on a real lab.
. "$(dirname "$0")/lib.sh"

RES=$LAB/results
# on any exit, the lab as the next test expects it: cli2's sshd up, nothing of this lab's left
trap '"$LAB_SH" sshd cli2 start >/dev/null 2>&1; on ctl "${PVT[@]}" "$PV" -p "$PLAYBOOK" cleanup --leave >/dev/null 2>&1; rm -rf "$T_TMP"' EXIT

# leftovers PATTERN: processes of the run still alive on any host (printed)
leftovers() {
	local h
	for h in srv cli1 cli2 ctl; do
		on "$h" ps -eo args= | grep -E -- "$1" | grep -v grep
	done
}

# wait_procs PATTERN N: until N processes match on the hosts (10 s at most)
wait_procs() {
	for _ in $(seq 100); do
		[[ $(leftovers "$1" | wc -l) -ge $2 ]] && return 0
		sleep 0.1
	done
	return 1
}

pv -p "$PLAYBOOK" prepare
expect_rc 0 "prepare before the runs"

# ---- 1. a 2-step ramp of the lab's load on cli1 and cli2 -----------------------------------
echo "  2-step ramp on cli1 and cli2" >&2
R=$RES/it-ramp
rm -rf "$R"
pv -p "$PLAYBOOK" --json run --id it-ramp --min-users 4 --max-users 8 --step 4 --duration 4 \
	--warmup 1
expect_rc 0 "run, 2-step ramp"
python3 - "$OUT" <<'EOF' || fail "run --json: steps, users or host states wrong"
import json, sys
d = json.loads(sys.argv[1])
assert d["command"] == "run" and d["exit"] == 0, d
steps = d["steps"]
assert [s["users"] for s in steps] == [4, 8], steps
for s, per in zip(steps, (2, 4)):
    clients = [h for h in s["hosts"] if h["role"] == "client"]
    assert [h["name"] for h in clients] == ["cli1", "cli2"], clients
    assert all(h["users"] == per for h in clients), clients
    assert all(h["state"] in ("done", "stopped") and h["error"] is None for h in clients), s
    assert s["watch"]["samples"] >= 1, s
EOF
for step in 1 2; do
	users=$((step * 2))
	for c in cli1 cli2; do
		d=$R/step-0$step/$c
		who=$(cat "$d/who.txt" 2>/dev/null)
		[[ $who == "$c $c users=$users total=$((users * 2)) step=$step/2" ]] ||
			fail "step $step on $c: who.txt says '$who'"
		# every user of the step read its own tree through its own alias, and no other user
		for n in $(seq "$users"); do
			grep -Eq "^$c-u$n srvu$n fsroot[12] 1\$" "$d/reads.log" 2>/dev/null ||
				fail "step $step: $c-u$n did not read its tree through srvu$n"
		done
		grep -q "^$c-u$((users + 1)) " "$d/reads.log" 2>/dev/null &&
			fail "step $step: $c-u$((users + 1)) read though the step had $users users on $c"
	done
	# the server watch: a CSV with a row per sample, the machine busy while users read
	csv=$R/step-0$step/watch.csv
	[[ $(head -1 "$csv" 2>/dev/null) == seconds,phase,cpu,* ]] || fail "step $step: no watch.csv"
	awk -F, 'NR > 1 && $3 > 0 { busy = 1 } END { exit !busy }' "$csv" ||
		fail "step $step: no sample in watch.csv shows CPU above 0"
	python3 -c "
import json, sys
w = json.load(open(sys.argv[1]))
assert w['samples'] >= 1 and w['smbd']['max'] > 0 and w['cpu']['mean'] > 0, w
" "$R/step-0$step/watch.json" || fail "step $step: watch.json has no smbd or CPU figures"
done
python3 - "$R/manifest.json" "$(sha256sum <"$PLAYBOOK" | cut -d' ' -f1)" <<'EOF' || fail "manifest.json wrong"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["status"] == "done" and m["exit_code"] == 0, m["status"]
assert m["playbook"]["sha256"] == sys.argv[2], m["playbook"]
assert [s["step"] for s in m["steps"]] == [1, 2], m["steps"]
assert all(s["start"] < s["end"] for s in m["steps"]), m["steps"]
hosts = {h["name"]: h for h in m["hosts"]}
assert hosts["cli1"]["version"].startswith("Linux"), hosts
assert "Samba" in hosts["srv"]["version"] or "Version" in hosts["srv"]["version"], hosts
EOF
grep -rqF -- "$(cat "$LAB/user.pass")" "$R" && fail "the users' password is in the results"
ls -d /tmp/provision-run-provision-it-ramp-* 2>/dev/null && fail "the run's folders on the clients are left"
[[ -z $(leftovers '^provision-run|^smbclient') ]] || fail "processes of the run left"

# ---- 2. impossible plans are refused before anything starts --------------------------------
echo "  impossible plans" >&2
before=$(find "$RES" -mindepth 1 -maxdepth 1 | wc -l)
for bad in "--min-users 9 --max-users 4:more than .?driver.max_users" \
	"--step 0:driver.step" "--duration 0:driver.duration" \
	"--min-users 4 --max-users 100:prepare makes 20 users" \
	"--min-users 1 --max-users 4:fewer than the 2 clients"; do
	args=${bad%%:*}
	# shellcheck disable=SC2086 # the options are words on purpose
	pv -p "$PLAYBOOK" run --step 4 --duration 4 --min-users 4 --max-users 8 $args
	expect_rc 3 "run $args"
	expect_err "${bad#*:}" "run $args"
done
[[ $(find "$RES" -mindepth 1 -maxdepth 1 | wc -l) -eq $before ]] ||
	fail "a refused run made something in the results folder"

# ---- 3. a command that fails on every client ------------------------------------------------
echo "  a failing command" >&2
pv -p "$PLAYBOOK" --set 'driver.client_command=echo broken >&2; exit 3' run --id it-fail \
	--min-users 2 --max-users 2 --step 1 --duration 30
expect_rc 8 "run with a command exiting 3"
expect_err "status 3" "the failing command's status"
grep -q broken "$RES/it-fail/step-01/cli1/stderr" 2>/dev/null || fail "the failing command's stderr was not gathered"

# ---- 4. a client's sshd dies in the middle of a step ------------------------------------------
echo "  cli2's sshd killed mid-step" >&2
# the controller's command starts once provision has every client's word that its command
# runs (docs/playbook.md: controller_command): once it runs, cli2's session is one whose
# command ran, and its end a host lost
pv_bg -p "$PLAYBOOK" --set 'driver.client_command=sleep 61; echo ran > {results}/ran' \
	--set 'driver.controller_command=sleep 64' run --id it-lost --min-users 2 --max-users 4 \
	--step 2 --duration 40
wait_procs '^sleep 61' 2 || fail "the clients' commands did not start"
wait_procs '^sleep 64' 1 || fail "the controller's command did not start: provision never heard that both clients' commands run"
"$LAB_SH" sshd cli2 kill
pv_bg_wait 45
"$LAB_SH" sshd cli2 start >/dev/null
expect_rc 10 "run with cli2's sshd killed"
expect_err "cli2.*lost" "cli2 reported lost"
[[ -e $RES/it-lost/step-01/cli1/stdout ]] || fail "cli1's results of the step were not kept"
python3 - "$RES/it-lost/manifest.json" <<'EOF' || fail "manifest of the lost run wrong"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["status"] == "partial" and m["exit_code"] == 10, (m["status"], m["exit_code"])
assert len(m["steps"]) == 1, "the ramp went on after a host was lost"
st = {h["name"]: h["state"] for h in m["steps"][0]["hosts"]}
assert st == {"cli1": "stopped", "cli2": "lost", "controller": "stopped"}, st
EOF
# no process of the run left (cli2's command stopped by its wrapper once its session went:
# waited for, 30 s at most)
wait_until 30 "the run's processes gone after cli2 was lost" \
	eval '[[ -z $(leftovers "^sleep 6[14]|^provision-run") ]]' ||
	echo "    left: $(leftovers '^sleep 6[14]|^provision-run' | sort -u)" >&2
# a lost host keeps its run folder (nobody could remove it); the others' are gone
[[ -d /tmp/provision-run-provision-it-lost-cli1 ]] && fail "cli1's run folder is left after the run"

# ---- 5. Ctrl-C in the middle of a step -----------------------------------------------------
echo "  Ctrl-C" >&2
pv_bg -p "$PLAYBOOK" --set 'driver.client_command=sleep 62 & sleep 62' run --id it-int \
	--min-users 2 --max-users 4 --step 2 --duration 40
wait_procs '^sleep 62' 4 || fail "the clients' commands did not start"
kill -INT "$PV_PID"
pv_bg_wait 30
expect_rc 15 "run after Ctrl-C"
expect_err "stopped" "Ctrl-C reported"
left=$(leftovers '^sleep 62|^provision-run')
[[ -z $left ]] || fail "processes of the run left after Ctrl-C: $left"
python3 -c "
import json, sys
m = json.load(open(sys.argv[1]))
assert m['status'] == 'stopped' and m['steps'][0]['ended'] == 'stopped', m['status']
" "$RES/it-int/manifest.json" || fail "manifest after Ctrl-C wrong"

# ---- 6. the run's timeout ------------------------------------------------------------------
echo "  the run's timeout" >&2
pv -p "$PLAYBOOK" --set 'driver.client_command=sleep 63' run --id it-timeout --min-users 2 \
	--max-users 2 --step 1 --duration 60 --timeout 3
expect_rc 14 "run past its timeout"
expect_err "timeout" "the timeout named"
[[ -z $(leftovers '^sleep 63|^provision-run') ]] || fail "processes of the run left after its timeout"

# ---- 7. --dry-run shows every command and starts nothing ------------------------------------
pv -p "$PLAYBOOK" --dry-run run --id it-dry --min-users 4 --max-users 8 --step 4 --duration 4
expect_rc 0 "run --dry-run"
[[ $(grep -c "would run on cli[12] (" <<<"$OUT") -eq 4 ]] || { fail "dry run: not 2 steps x 2 clients"; show; }
expect_out "would run on cli2 \\(4 users\\) in step 2/2 \\(8 users\\): end=" "dry run: step 2 on cli2"
[[ -e $RES/it-dry ]] && fail "--dry-run made the run's folder"

# ---- 8. drain between steps --------------------------------------------------------------
echo "  drain between steps" >&2
D=(--set drain.probe=command --set drain.between_steps=true --set drain.settle=1
	--set 'driver.client_command=sleep 1')
pv -p "$PLAYBOOK" "${D[@]}" --set 'drain.command=echo 0' run --id it-drain --min-users 2 \
	--max-users 4 --step 2 --duration 2 --warmup 0
expect_rc 0 "run with a drain between steps"
python3 -c "
import json, sys
m = json.load(open(sys.argv[1]))
d = [s['drain'] for s in m['steps']]
assert d[0] is not None and d[0]['first'] == 0 and d[1] is None, d
" "$RES/it-drain/manifest.json" || fail "the drain between steps is not in the manifest"
pv -p "$PLAYBOOK" "${D[@]}" --set 'drain.command=echo 7' --set drain.timeout=2 run \
	--id it-nodrain --min-users 2 --max-users 4 --step 2 --duration 2 --warmup 0
expect_rc 14 "run whose server never drains"
expect_err "after step 1, waiting for the server to drain" "the drain named"
python3 -c "
import json, sys
m = json.load(open(sys.argv[1]))
assert len(m['steps']) == 1 and m['status'] == 'timeout', (len(m['steps']), m['status'])
" "$RES/it-nodrain/manifest.json" || fail "a run that could not drain went on"

rm -rf "$RES"/it-* /tmp/provision-run-provision-it-*
# the lab as the next test expects it: nothing of this lab's left
pv -p "$PLAYBOOK" cleanup --leave
expect_rc 0 "cleanup after the runs"
finish
