#!/usr/bin/env bash
# provision wait --drain on the real lab: each built-in probe (writeback with dirty
# data made on srv first, inflight, smb with a lab user's session and open file held from cli1
# beside an admin session that must not count), command probes that drain, never drain (14),
# print garbage or fail (8), fail once after a reading (asked again) or twice in a row (8),
# Ctrl-C and SIGTERM (15, one SSH session throughout; during a slow probe, provision ends
# while the probe still runs on srv: the stop does not wait for it),
# --json and --dry-run. Depths are checked against srv's own /proc/meminfo and smbstatus.
# Nothing is timed here (how fast a stop is is printed, not asserted), and no sleep stands for
# a state: the test polls for it (provision's own -v lines, processes on srv).
# Everything it makes lives in a scratch folder on srv (and $T_TMP here) and is removed; on a
# lab not prepared, the smb probe's test prepares lab 'pvwait' and cleans it up. When the lab's
# users already have SMB sessions on srv (a lab in use), the smb probe's session test cannot
# run: it is skipped, said so, and the test exits 77 (SKIP in run.sh, not PASS).
. "$(dirname "$0")/lib.sh"

P=(-p "$PLAYBOOK")
SD=$(on srv mktemp -d /srv/pv-wait-it.XXXXXX) || { echo "no scratch folder on srv" >&2; exit 1; }
FIFOS=()
cleanup() {
	local f
	for f in "${FIFOS[@]}"; do
		{ exec {f}>&-; } 2>/dev/null
	done
	[[ -n ${BG:-} ]] && kill "$BG" 2>/dev/null
	on srv rm -rf "$SD"
	[[ -n ${OURS:-} ]] && on ctl "${PVT[@]}" "$PV" "${P[@]}" cleanup --leave >/dev/null 2>&1
	rm -rf "$T_TMP"
}
trap cleanup EXIT

# jq_ok PYTHON-EXPR [what]: the JSON document in OUT as d satisfies the expression
jq_ok() {
	python3 -c 'import json,sys; d=json.load(sys.stdin); assert eval(sys.argv[1]), d' "$1" <<<"$OUT" 2>"$T_TMP/py" ||
		{ fail "${2:-JSON}: $1: $(tail -n 1 "$T_TMP/py")"; show; }
}
# jget KEY: a field of the JSON document in OUT
jget() { python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1" <<<"$OUT"; }

# 1. help answers what the probes read, the back-off, the settle and the exit codes
pv help wait
expect_rc 0 "help wait"
for w in "Dirty \+ Writeback" "/sys/block/\*/inflight" "smbstatus --json" "grows by half" \
	"up to 8 times --interval" "--settle seconds" "0 drained; 14 \(timeout\)" "15 \(stopped\)" \
	"8 \(remote\)"; do
	expect_out "$w" "help wait ($w)"
done

# 2. no probe in the playbook or the options: config (3), naming the key and the option
pv "${P[@]}" wait --drain
expect_rc 3 "wait with no probe"
expect_err "no drain probe configured: pass --probe writeback.*drain.probe"

# 3. --dry-run: what would be polled, nothing polled
pv "${P[@]}" --dry-run wait --drain --probe writeback --threshold 100
expect_rc 0 "wait --dry-run"
expect_out "^wait: would poll dirty\+writeback kB on srv: Dirty \+ Writeback of /proc/meminfo$"
expect_out "until it is at most 100 for 4 s, giving up after 600 s$"
pv "${P[@]}" --json --dry-run wait --probe-command 'nasq --token s3cret'
expect_rc 0 "wait --dry-run --json"
jq_ok 'd["dry_run"] and d["polls"] == 0 and d["probe"] == "command" and len(d["plan"]) == 2 and d["first"] is None' "dry run JSON"
expect_no_out "s3cret" "the probe command's arguments"

# 4. inflight: nothing in flight on the lab's disks most of the time; drained at the first
#    zero with --settle 0
pv "${P[@]}" --json wait --drain --probe inflight --settle 0 --timeout 60
expect_rc 0 "wait --probe inflight"
jq_ok 'd["ok"] and d["drained"] and d["probe"] == "inflight" and d["metric"] == "I/O in flight" and d["last"] == 0 and d["polls"] >= 1 and d["peak"] >= d["first"] >= 0 and d["peak"] >= d["last"]' "inflight JSON"
pv "${P[@]}" wait --probe inflight --settle 1 --interval 1
expect_rc 0 "wait --probe inflight (text)"
expect_out "^wait: I/O in flight drained to 0 \(threshold 0\) in [0-9.]+ s, [0-9]+ polls, peak [0-9]+$"

# 5. writeback: 400 MB written on srv's disk and not synced are Dirty in srv's /proc/meminfo
#    until they are written back; the wait sees them, then sees them go (a sync on srv once
#    the wait has read them, so the test does not wait for the kernel's own 30 s
#    dirty_expire)
meminfo_kb() { on srv awk '/^(Dirty|Writeback):/ { s += $2 } END { print s }' /proc/meminfo; }
TH=131072 # kB
on srv dd if=/dev/zero of="$SD/dirty" bs=1M count=400 status=none
before=$(meminfo_kb)
pv_bg "${P[@]}" -v --json wait --drain --probe writeback --threshold $TH --settle 2 --timeout 150
pv_when "poll 1: " 60
on srv sync
pv_bg_wait
expect_rc 0 "wait --probe writeback"
if ((before <= TH)); then
	fail "the 400 MB written on srv were not dirty ($before kB): the test proves nothing"
fi
jq_ok "d['drained'] and d['metric'] == 'dirty+writeback kB' and d['first'] > $TH and d['peak'] >= d['first'] and d['last'] <= $TH and d['polls'] >= 2" "writeback JSON (before: $before kB)"
echo "    writeback: $before kB dirty before; first $(jget first), last $(jget last) after $(jget seconds) s, $(jget polls) polls" >&2
on srv rm -f "$SD/dirty"

# 6. command probes
# 6a. one that drains: a counter on srv the probe itself counts down (prints it, then one less)
on srv sh -c "echo 5 >$SD/counter"
DOWN="n=\$(cat $SD/counter); echo \"\$n\"; if [ \"\$n\" -gt 0 ]; then echo \$((n - 1)) >$SD/counter; fi"
pv "${P[@]}" --json --set drain.metric=nas_queue wait --drain --probe-command "$DOWN" --interval 1 --settle 2
expect_rc 0 "command probe counting down"
jq_ok 'd["drained"] and d["metric"] == "nas_queue" and d["first"] == 5 and d["peak"] == 5 and d["last"] == 0 and d["polls"] >= 8' "counting down JSON"
[[ $(on srv cat "$SD/counter") == 0 ]] || fail "the counter on srv is $(on srv cat "$SD/counter"), expected 0"
# the same in text, and a decimal printed with spaces around it
on srv sh -c "echo 2 >$SD/counter"
pv "${P[@]}" --set drain.metric=nas_queue wait --probe-command "$DOWN" --interval 1 --settle 0
expect_rc 0 "command probe counting down (text)"
expect_out "^wait: nas_queue drained to 0 \(threshold 0\) in [0-9.]+ s, 3 polls, peak 2$"
pv "${P[@]}" wait --probe-command "printf ' 0.00 \n'" --settle 0
expect_rc 0 "a decimal with white space"

# 6b. one that never drains: the timeout's own status (14), the last depth and the threshold
pv "${P[@]}" wait --probe-command 'echo 5' --threshold 0 --timeout 3 --interval 1
expect_rc 14 "a probe that never drains"
expect_err "error: req_queue on srv did not drain within the timeout of 3 s: the last depth was 5 \(threshold 0; first 5, peak 5, [0-9]+ polls\); raise --timeout"
expect_out "^wait: req_queue not drained: 5 \(threshold 0\) after [0-9.]+ s"
pv "${P[@]}" --json wait --probe-command 'echo 5' --timeout 2
expect_rc 14 "a probe that never drains (JSON)"
jq_ok 'd["outcome"] == "timeout" and d["exit"] == 14 and not d["drained"] and d["last"] == 5 and "did not drain" in d["message"]' "timeout JSON"

# 6c. garbage: an error quoting what it printed (8); a failing probe names its status and why
pv "${P[@]}" wait --probe-command 'echo hello'
expect_rc 8 "a probe printing a word"
expect_err "drain.command 'echo ...' on srv printed 'hello', which is not a queue depth"
pv "${P[@]}" --json wait --probe-command "printf '12\n13\n'"
expect_rc 8 "a probe printing two numbers"
jq_ok 'd["outcome"] == "remote" and "printed '"'"'12\\n13'"'"'" in d["message"] and d["polls"] == 0' "two numbers JSON"
pv "${P[@]}" wait --probe-command 'echo queue is empty >&2; exit 3'
expect_rc 8 "a failing probe"
expect_err "drain.command 'echo ...' on srv failed \(status 3\): 'queue is empty'"

# 6d. a probe that has read and then fails once is asked again (a warning naming why), and the
#     wait goes on to drain; one that fails twice in a row ends it (8). A counter on srv: the
#     probe's first poll prints 3, the next FAILS polls fail (status 3), then it prints 0
FLAKY="n=\$(cat $SD/flaky); echo \$((n + 1)) >$SD/flaky; if [ \"\$n\" -eq 0 ]; then echo 3; elif [ \"\$n\" -le \$(cat $SD/fails) ]; then echo smbstatus PANIC >&2; exit 3; else echo 0; fi"
on srv sh -c "echo 0 >$SD/flaky; echo 1 >$SD/fails"
pv "${P[@]}" --json wait --probe-command "$FLAKY" --interval 1 --settle 0
expect_rc 0 "a probe failing once after a reading"
jq_ok 'd["drained"] and d["first"] == 3 and d["last"] == 0 and d["polls"] == 2' "a probe failing once: JSON"
expect_err "warning: drain.command 'n=.*' on srv failed \(status 3\): 'smbstatus PANIC'; asking again in 1 s"
on srv sh -c "echo 0 >$SD/flaky; echo 2 >$SD/fails"
pv "${P[@]}" wait --probe-command "$FLAKY" --interval 1 --settle 0
expect_rc 8 "a probe failing twice in a row"
expect_err "error: drain.command 'n=.*' on srv failed \(status 3\): 'smbstatus PANIC'"
[[ $(on srv cat "$SD/flaky") == 3 ]] || fail "the twice-failing probe ran $(on srv cat "$SD/flaky") times, expected 3 (a reading, two failures)"

# 7. Ctrl-C (SIGINT) and SIGTERM during a wait: stopped (15), its readings so far reported; all
#    along one SSH connection (the same local port from its first poll to its third). How fast
#    it stops is printed, not asserted (a time is for bench/, not make check)
for sig in INT TERM; do
	pv_bg "${P[@]}" -v wait --drain --probe-command 'echo 7' --interval 1 --timeout 600
	pv_when "poll 1: " || continue
	conns() { on ctl ss -tnpH state established dst 198.18.0.20 dport = 22 | grep "pid=$PV_PID," | awk '{ print $3 }'; }
	c1=$(conns)
	pv_when "poll 3: " || continue
	c2=$(conns)
	[[ $(wc -l <<<"$c1") -eq 1 && -n $c1 && $c1 == "$c2" ]] || fail "SIG$sig: not one SSH connection all along: '$c1' then '$c2'"
	t0=$(date +%s%N)
	kill -"$sig" "$PV_PID"
	pv_bg_wait 60
	ms=$((($(date +%s%N) - t0) / 1000000))
	expect_rc 15 "wait interrupted by SIG$sig"
	expect_err "stopped \(Ctrl-C or SIGTERM\) while waiting for req_queue on srv to drain: the last depth was 7 \(threshold 0\)"
	expect_out "^wait: stopped: req_queue not drained: 7"
	echo "    SIG$sig: stopped in $ms ms" >&2
done

# 7b. Ctrl-C while a slow probe runs (seen running on srv): the poll is cut short, no waiting
#     for the probe: provision has ended while the probe still runs (which sshd, refusing
#     signals for root logins, leaves to end on its own: ended here by its PID)
SLOW='sleep 15.0417; echo 1'
slow_runs() { [[ -n $(on srv pgrep -f '^sleep 15\.0417$') ]]; }
pv_bg "${P[@]}" wait --probe-command "$SLOW"
pv_when "waiting until req_queue" && wait_until 30 "the slow probe running on srv" slow_runs
t0=$(date +%s%N)
kill -INT "$PV_PID"
pv_bg_wait 60
ms=$((($(date +%s%N) - t0) / 1000000))
expect_rc 15 "wait interrupted during a slow probe"
expect_err "stopped \(Ctrl-C or SIGTERM\) while waiting for req_queue on srv to drain, before the first reading"
slow_runs || fail "the slow probe had ended when provision stopped: the stop waited for it (or it never ran)"
echo "    SIGINT during a 15 s probe: stopped in $ms ms, the probe still running" >&2
for p in $(on srv pgrep -f '^(sleep 15\.0417|.*sh -c sleep 15\.0417; echo 1)$'); do
	on srv kill "$p" 2>/dev/null
done

# 8. smb: this lab's users' sessions and open files, others not counted. Needs a prepared lab
#    (srv joined, smbd running, the users made): when the lab is not prepared, the test
#    prepares one of its own (lab 'pvwait', one user per client) and cleans it up at the end.
U=cli1-u1
udir=$(on srv sh -c "ls -d /srv/provision/fsroot*/$U 2>/dev/null | head -n 1")
if ! joined || ! grep -Eq '^srv .* smbd=[0-9]' <<<"$("$LAB_SH" status 2>/dev/null)" || [[ -z $udir ]]; then
	P=(-p "$PLAYBOOK" --set lab=pvwait --set "users.name_template=wt-{client}-u{n}"
		--set users.per_client=1)
	OURS=1
	U=wt-cli1-u1
	pv "${P[@]}" prepare
	expect_rc 0 "prepare lab pvwait (one user per client) for the smb probe"
	udir=$(on srv sh -c "ls -d /srv/provision/fsroot*/$U 2>/dev/null | head -n 1")
	[[ -n $udir ]] || fail "prepare made no tree for $U on srv"
fi
smb_count() { # REGEX: sessions + opens of the users it matches (whole name, any case, after
	# the domain) in srv's smbstatus, counted here; -1 (a failed probe, lib.sh) when smbstatus
	# fails or prints no JSON, never 0
	local n
	probe "smb_count (smbstatus --json on srv)" 0 on srv smbstatus --json --resolve-uids || {
		echo -1
		return
	}
	n=$(python3 -c '
import json, re, sys
d = json.load(sys.stdin)
mine = lambda n: re.fullmatch(sys.argv[1], (n or "").split("\\")[-1], re.I) is not None
n = sum(mine(s.get("username")) for s in d["sessions"].values())
n += sum(mine(o.get("username")) for f in d.get("open_files", {}).values() for o in f["opens"].values())
print(n)' "$1" <<<"$PROBE" 2>"$T_TMP/smb_count.err")
	if [[ ! $n =~ ^[0-9]+$ ]]; then
		probe_failed "smb_count: smbstatus's JSON: $(tail -n 1 "$T_TMP/smb_count.err")"
		n=-1
	fi
	echo "$n"
}
LAB_USERS="${U%%cli1-u1}(cli1|cli2)-u[1-9][0-9]*" # users.name_template, the lab's clients
busy=$(smb_count "$LAB_USERS")
pv "${P[@]}" --json wait --probe smb --settle 0 --timeout 10
if [[ $busy -lt 0 ]]; then
	: # the probe failed: said, and the test fails
elif [[ $busy -eq 0 ]]; then
	expect_rc 0 "wait --probe smb"
	jq_ok 'd["drained"] and d["probe"] == "smb" and d["metric"] == "SMB opens and sessions"' "smb JSON"
else
	jq_ok 'd["probe"] == "smb" and d["first"] is not None' "smb JSON with the lab in use ($busy)"
fi
# hold NAME AUTHFILE SHARE [CMD]: smbclient on cli1 kept connected, commands from a fifo
hold() {
	local fifo="$T_TMP/fifo.$1" fd
	mkfifo "$fifo"
	on cli1 smbclient -N -A "$2" "//srv/$3" -I 198.18.0.20 <"$fifo" >"$T_TMP/smbc.$1" 2>&1 &
	exec {fd}>"$fifo"
	FIFOS+=("$fd")
	eval "FD_$1=$fd"
	[[ -n ${4:-} ]] && echo "$4" >&"$fd"
}
release() {
	local fd
	eval "fd=\$FD_$1"
	echo quit >&"$fd"
	exec {fd}>&-
}
if [[ -z $udir || $busy -lt 0 ]]; then
	: # said above (a failure)
elif [[ $busy -ne 0 || $(smb_count "$LAB_USERS") -ne 0 ]]; then
	skip "smb sessions: lab users have SMB sessions open on srv already (the lab is in use)"
else
	share=$(basename "$(dirname "$udir")")
	printf 'username = %s\npassword = %s\ndomain = LAB\n' "$U" "$(cat "$LAB/user.pass")" >"$T_TMP/u.auth"
	hold admin "$LAB/admin.auth" "$share"
	hold user "$T_TMP/u.auth" "$share" "open $U/$(on srv sh -c "cd $udir && find . -type f | head -n 1 | cut -c3-")"
	for _ in $(seq 100); do
		n=$(smb_count "$U")
		((n >= 2 || n < 0)) && break # (-1: the probe failed, said once)
		sleep 0.1
	done
	want=$(smb_count "$U")
	[[ $want -ge 2 ]] || fail "smbstatus on srv shows $want sessions and opens of $U, expected 2: $(cat "$T_TMP/smbc.user")"
	pv "${P[@]}" --json wait --probe smb --threshold 0 --timeout 4 --interval 1
	expect_rc 14 "wait --probe smb with a session open"
	jq_ok "d['last'] == $want and d['first'] == $want and 'SMB opens and sessions on srv did not drain' in d['message']" "smb JSON with $U connected ($want)"
	echo "    smb: $U's session and open file are $want in srv's smbstatus; wait read $(jget last), exit $RC" >&2
	release user
	pv "${P[@]}" --json wait --probe smb --threshold 0 --timeout 30 --interval 1 --settle 1
	expect_rc 0 "wait --probe smb once the session is closed"
	jq_ok 'd["drained"] and d["last"] == 0' "smb JSON after the close"
	echo "    smb: after the close (the admin's session still open) wait read $(jget last), exit $RC" >&2
	[[ $(on srv smbstatus --json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["sessions"]))') -ge 1 ]] ||
		fail "the admin's session was gone: the test would not show it is not counted"
	release admin
fi

finish
