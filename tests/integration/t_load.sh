#!/usr/bin/env bash
# tests/integration/t_load.sh: `run` with the built-in driver on cli1 and cli2 (lab 'pvload':
# 100 users per client, users pl-cli1-u1...). Claims, each asserted:
#  1. a ramp from 10 to 100 users per client (20 to 200 in all, short steps, load.rate 3310)
#     makes the table, load.txt, the CSVs, load.json and load.svg (well-formed, one marker per
#     step); every user connected, no error; each step's scenarios started follow users x rate
#     / 3600 x the measured seconds, the rate and users taken here from what the test asked
#     (the tool's `expected` must equal it, not stand for it), within 4 sd of Poisson (an
#     overloaded step may fall short, never exceed); the measured seconds are the step's
#     duration; every file the driver made is in its own user's tree and owned by that user
#     (find and stat on srv); while the ramp runs, no command line on any lab host holds the
#     lab's passwords (/proc/*/cmdline at every exec and polled: lib.sh's argv_watch);
#  2. the server's `server signing = mandatory`: every user connected, and srv's smbstatus
#     shows each of the step's 40 sessions signed (AES-128-GMAC, SMB 3.1.1);
#  2b. load.encryption: srv's smbstatus shows each of the 40 sessions encrypted with the cipher
#     asked for (AES-128-CCM; AES-256-GCM with Kerberos logons, AES-256-CCM with NTLM), as the
#     client says it spoke; a server that requires encryption but offers no SMB 3: exit 8, the
#     setting named, and the run's report.html written all the same (docs/run.md: whatever its
#     outcome);
#  3. Kerberos logons (tickets for cifs/<alias>): every user connected; with srvu2's SPNs
#     removed: exit 0, the step's logons 2 ok and 2 failed, the refusals naming pl-cli1-u2 and
#     pl-cli2-u2 with cifs@srvu2, and srv's smbstatus shows the sessions of pl-cli1-u1 and
#     pl-cli2-u1 only;
#  5. provision load by hand under open-file limits: raised from a soft limit, refused (9)
#     under a hard one; its stdin fed as run feeds it, `go` once it printed ready and the end
#     of stdin once it printed done (polled, no sleep);
#  6. a logon storm (srv's smbd stopped while 20 users log on with --timeout 1, until a first
#     try has timed out): every user logs on in the end, the first tries made again;
#  7. run --repeat 2 (its JSON, the answer's range, repeats.txt, each repeat's manifest and
#     report); compare of two folders of repeats as two groups, and of groups given as folders
#     joined by commas (A1,A2 B1,B2: docs/report.md), each group its runs in that order.
# A client killed in the middle of a step is t_longday's.
. "$(dirname "$0")/lib.sh"

P=(-p "$PLAYBOOK" --set lab=pvload --set "users.name_template=pl-{client}-u{n}"
	--set users.per_client=100 --set driver.name=builtin)
RES=$LAB/results
trap '[[ -n ${smbd:-} ]] && kill -CONT "$smbd" 2>/dev/null; [[ -n ${ARGV_PID:-} ]] && kill "$ARGV_PID" 2>/dev/null
	"$LAB_SH" srv-conf >/dev/null 2>&1; on ctl "${PVT[@]}" "$PV" "${P[@]}" cleanup --leave >/dev/null 2>&1; rm -rf "$RES"/lt-* "$T_TMP"' EXIT

pv "${P[@]}" cleanup --leave >/dev/null
pv "${P[@]}" prepare
expect_rc 0 "prepare 100 users per client"

# ---- 1. the ramp: 20, 80, 140, 200 users; 10x FSCT's rate so that short steps count ------
RATE=3310
DUR=6
echo "  ramp 20..200 users" >&2
argv_watch_start "$LAB/user.pass" "$LAB/admin.pass"
for h in ctl dc srv cli1 cli2; do argv_watch_canary "$h"; done # the watcher shown to see each host
pv "${P[@]}" --set "load.rate=$RATE" --json run --id lt-ramp --min-users 20 --max-users 200 \
	--step 60 --duration "$DUR" --warmup 1
expect_rc 0 "run, builtin ramp"
argv_watch_stop "run lt-ramp (the built-in driver on cli1 and cli2)" ctl srv cli1 cli2
R=$RES/lt-ramp
for f in load.txt load.csv load-kinds.csv load.json load.svg manifest.json; do
	[[ -s $R/$f ]] || fail "no $f in the run's folder"
done
python3 - "$OUT" "$R" "$RATE" "$DUR" <<'EOF' || fail "the ramp's figures are wrong"
import json, math, sys, xml.etree.ElementTree as ET
d = json.loads(sys.argv[1])
rate, dur = int(sys.argv[3]), float(sys.argv[4])
steps = d["steps"]
assert [s["users"] for s in steps] == [20, 80, 140, 200], [s["users"] for s in steps]
j = json.load(open(sys.argv[2] + "/load.json"))
assert len(j["steps"]) == 4, j.keys()
for s, js in zip(steps, j["steps"]):
    l = s["load"]
    assert l["errors"] == 0 and l["connected"] == s["users"] and l["clients_lost"] == 0, (s["users"], l)
    # the throughput the load should have, from what was asked: users x rate / 3600 a second
    want = s["users"] * rate / 3600
    assert abs(l["expected"] - want) < 0.01, ("the tool's expected", s["users"], l["expected"], want)
    # measured over the step's duration (the warm-up left out)
    secs = js["seconds"]
    assert abs(secs - dur) <= 0.1 * dur + 0.5, ("measured seconds", s["users"], secs, dur)
    # Poisson: the scenarios started in the measured time are within 4 sd of want x seconds,
    # or the step is overloaded (then it may fall short, never exceed)
    exp_n = want * secs
    got_n = js["all"]["started"]
    assert got_n > 0 and l["started"] == got_n, (l, js["all"])
    if l["overload"] <= 1:
        assert abs(got_n - exp_n) <= 4 * math.sqrt(exp_n) + 3, (s["users"], got_n, exp_n)
    assert got_n <= exp_n + 4 * math.sqrt(exp_n) + 3, (s["users"], got_n, exp_n)
    print("    %d users: %d scenarios started in %.1f s; %d x %d / 3600 x %.1f = %.1f" % (
        s["users"], got_n, secs, s["users"], rate, secs, exp_n), file=sys.stderr)
assert d["answer"] and "users" in d["answer"], d["answer"]
svg = ET.parse(sys.argv[2] + "/load.svg").getroot()
assert svg.tag.endswith("svg"), svg.tag
pts = [e for e in svg.iter() if "pt scen" in (e.get("class") or "")]
assert len(pts) == 4, len(pts)
EOF
head -1 "$R/load.csv" | grep -q users || fail "load.csv has no header"
[[ $(($(wc -l <"$R/load.csv") - 1)) -eq 4 ]] || fail "load.csv has not one row per step"
grep -q "the server carried" "$R/load.txt" || fail "load.txt has no answer line"

# every file the driver made is in its own user's tree and owned by that user
bad=$(on srv sh -c "find $SP -name 'pv-pl-*' -printf '%u %p\n'" | while read -r owner path; do
	u=${path#"$SP"/fsroot*/}
	u=${u%%/*}
	name=${path##*/}
	[[ $name == pv-$u-* || $name == pv-d-$u-* ]] || echo "$path: not $u's name"
	[[ ${owner,,} == *"${u,,}" ]] || echo "$path: owned by $owner, not $u"
done)
[[ -z $bad ]] || fail "files outside their user's tree or not theirs: $(head -3 <<<"$bad")"
made=$(on srv sh -c "find $SP -name 'pv-pl-*' | wc -l")
[[ $made -gt 0 ]] || fail "the driver made no file (upload, copy_in): the check above proves nothing"
echo "    $made files made by the driver, each in its user's tree and owned by the user" >&2

# all_40 JSON: the run's one step had its 40 users connected, scenarios done, no error
all_40() {
	python3 -c "
import json, sys
l = json.loads(sys.argv[1])['steps'][0]['load']
assert l['completed'] > 0 and l['errors'] == 0 and l['connected'] == 40, l
" "$1"
}
LT_USERS='pl-cli[12]-u[0-9]+'
# run_40 WANT WHAT ARGS...: provision ARGS... (a run of one step of 40 users) in the background;
# once its load goes, srv's smbstatus must hold 40 sessions of the lab's users, each a line of
# srv_smb's matching "session USER ID WANT" (WANT: the dialect, the encryption and the
# signing, a regex); then the run's end: RC, OUT, ERR as pv's
run_40() {
	local want=$1 what=$2 n ok
	shift 2
	pv_bg "$@"
	if pv_when 'run: step 1: the load goes' 180 && srv_sessions_until "$LT_USERS" 40 20; then
		n=$(n_lines '^session ' <<<"$SMB")
		ok=$(n_lines "^session [^ ]+ [0-9]+ $want\$" <<<"$SMB")
		[[ $ok -eq $n ]] || fail "$what: srv's smbstatus: $ok of the $n sessions are /$want/: $(grep -Ev "^session [^ ]+ [0-9]+ $want\$" <<<"$SMB" | grep '^session' | head -3)"
		echo "    $what: srv's smbstatus: $ok of $n sessions /$want/" >&2
	fi
	pv_bg_wait 300
}

# ---- 2. signing required by the server: our client signs ---------------------------------
echo "  server signing = mandatory" >&2
"$LAB_SH" srv-conf 'server signing=mandatory' >/dev/null || fail "srv-conf signing"
run_40 'SMB3_11 [^ ]+ AES-128-GMAC/(full|partial)' "signing required" \
	"${P[@]}" --set load.rate=3310 --json run --id lt-sign --min-users 40 --max-users 40 \
	--step 1 --duration 6 --warmup 1
expect_rc 0 "run with signing required"
all_40 "$OUT" || fail "signed run: $OUT"
"$LAB_SH" srv-conf >/dev/null

# ---- 2b. encryption: asked for by the playbook (load.encryption), and refused ------------
echo "  load.encryption" >&2
run_40 'SMB3_11 AES-128-CCM/(full|partial) [^ ]+' "AES-128-CCM asked for" \
	"${P[@]}" --set load.rate=3310 --set load.encryption=aes-128-ccm --json run --id lt-enc \
	--min-users 40 --max-users 40 --step 1 --duration 6 --warmup 1
expect_rc 0 "run with every session encrypted (AES-128-CCM asked for)"
all_40 "$OUT" || fail "encrypted run: $OUT"
expect_err "run: cli[12]'s users speak SMB 3\.1\.1, encrypted \(AES-128-CCM\) to the server" \
	"what the users' sessions spoke"
# the AES-256 ciphers: their keys come from the whole session key (Kerberos's is 32 bytes)
for enc in aes-256-gcm:kerberos aes-256-ccm:ntlm; do
	cipher=$(tr a-z A-Z <<<"${enc%%:*}")
	run_40 "SMB3_11 $cipher/(full|partial) [^ ]+" "$cipher asked for, ${enc#*:} logons" \
		"${P[@]}" --set load.rate=3310 --set "load.encryption=${enc%%:*}" --set "load.auth=${enc#*:}" \
		--json run --id "lt-${enc%%:*}" --min-users 40 --max-users 40 --step 1 --duration 5 --warmup 1
	expect_rc 0 "run encrypted with ${enc%%:*}, ${enc#*:} logons"
	all_40 "$OUT" || fail "run encrypted with $enc: $OUT"
	expect_err "users speak SMB 3\.1\.1, encrypted \($cipher\)" "$enc spoken"
done
# a server that requires encryption but speaks no dialect that can: every logon refused, the
# run fails (no user of any step logged on) and names the setting
"$LAB_SH" srv-conf 'server smb encrypt=required' 'server max protocol=SMB2_10' >/dev/null ||
	fail "srv-conf encrypt without SMB 3"
pv "${P[@]}" run --id lt-noenc --min-users 4 --max-users 4 --step 1 --duration 2 --warmup 0
expect_rc 8 "run where nobody can log on"
expect_err "no user of any of the 1 step could log on; the first refusal: cli[12]: pl-cli[12]-u[0-9]+: SMB logon as LAB.pl-cli[12]-u[0-9]+ on 'srvu[0-9]+' refused \(NT_STATUS_ACCESS_DENIED\): a server that requires encryption \(Samba: \`server smb encrypt = required\`" \
	"the refusal's setting named"
# a run that failed still gets its page (docs/run.md: report.html whatever the outcome)
[[ -s $RES/lt-noenc/report.html ]] || fail "the failed run wrote no report.html"
"$LAB_SH" srv-conf >/dev/null

# ---- 3. Kerberos: every user's ticket for cifs/<its alias> -------------------------------
echo "  Kerberos logons" >&2
pv "${P[@]}" --set load.rate=3310 --set load.auth=kerberos --json run --id lt-krb \
	--min-users 40 --max-users 40 --step 1 --duration 4 --warmup 1
expect_rc 0 "run with Kerberos logons"
all_40 "$OUT" || fail "Kerberos run: $OUT"
# without the alias's SPN there is no ticket: the SPNs `server` made are what make it work
printf 'dn: %s\nchangetype: modify\ndelete: servicePrincipalName\nservicePrincipalName: cifs/srvu2\nservicePrincipalName: cifs/srvu2.lab.test\n' "$SRV_DN" |
	ldm >/dev/null || fail "removing srvu2's SPNs"
pv_bg "${P[@]}" --set load.auth=kerberos run --id lt-nospn --min-users 4 --max-users 4 --step 1 \
	--duration 4 --warmup 0
# which users logged on, as srv sees it: pl-cli1-u1 and pl-cli2-u1 (alias srvu1), not the
# users of srvu2
if pv_when 'run: step 1: the load goes' 120 && srv_sessions_until 'pl-cli[12]-u[12]' 2 10; then
	got=$(awk '$1 == "session" { print $2 }' <<<"$SMB" | sort | paste -sd' ')
	[[ $got == "pl-cli1-u1 pl-cli2-u1" ]] ||
		fail "srv's sessions while srvu2 has no SPN: '$got', expected pl-cli1-u1 and pl-cli2-u1"
fi
pv_bg_wait 200
expect_rc 0 "a run where 2 of its 4 users get no ticket (the others carry the step)"
expect_err "cli1: 1 of its users could not log on \(pl-cli1-u2.*cifs@srvu2.*(not found|unknown)" \
	"pl-cli1-u2's missing SPN named"
expect_err "cli2: 1 of its users could not log on \(pl-cli2-u2.*cifs@srvu2.*(not found|unknown)" \
	"pl-cli2-u2's missing SPN named"
python3 - "$RES/lt-nospn/load.json" <<'EOF' || fail "the step's logons do not say 2 failed"
import json, sys
s = json.load(open(sys.argv[1]))["steps"][0]
assert s["logon"]["ok"] == 2 and s["logon"]["failed"] == 2, s["logon"]
assert s["not_connected"] == 2 and s["connected"] == 2 and not s["carried"], s
EOF
grep -q "2 users not connected, 2 logons failed" "$RES/lt-nospn/load.txt" ||
	fail "load.txt does not say 2 users could not log on: $(grep -i 'not connected' "$RES/lt-nospn/load.txt")"
pv "${P[@]}" server
expect_rc 0 "server puts the SPNs back"

# ---- 4. (a client's provision load killed in the middle of a step: t_longday) -------------

# ---- 5. provision load by hand, under open-file limits too low for its 100 users --------
# stdin as run renders it (docs/load.md): the password, the config, a line per user, start;
# then go once it printed ready, and the end of stdin once it printed done
{
	cat "$LAB/user.pass"
	echo
	echo "config rate=3310 late=1 overload=1 interval=1 seed=1 auth=ntlm weights=15,150,40,7,15,50,15,5,15,7,7,5,0 limits=2,1,2,3,3,1,2,1,1,1,2,5,10"
	for n in $(seq 100); do echo "user pl-cli1-u$n srvu$n fsroot$(((n - 1) % 2 + 1)) $n"; done
	echo start
} >"$T_TMP/load.in"
# load_start CMD: CMD (bash -c) on cli1 in the background, its stdin a FIFO this test writes
# (load_send), its stdout and stderr in $T_TMP/lout, lerr
load_start() {
	rm -f "$T_TMP/load.fifo"
	mkfifo "$T_TMP/load.fifo"
	on cli1 bash -c "$1" <"$T_TMP/load.fifo" >"$T_TMP/lout" 2>"$T_TMP/lerr" &
	LOAD_BG=$!
	exec {LOAD_FD}>"$T_TMP/load.fifo"
}
# load_send LINE | load_send -f FILE: to its stdin (in a subshell: one that ended already
# breaks the pipe of the subshell, not of this test)
load_send() {
	if [[ $1 == -f ]]; then
		(cat "$2" >&"$LOAD_FD") 2>/dev/null
	else
		(printf '%s\n' "$1" >&"$LOAD_FD") 2>/dev/null
	fi
}
# load_when REGEX FILE SECONDS: until FILE (lout or lerr) has a line matching REGEX; 1 when
# provision load ended first or SECONDS passed
load_when() {
	local end=$((SECONDS + $3))
	until grep -Eq -- "$1" "$T_TMP/$2"; do
		kill -0 "$LOAD_BG" 2>/dev/null && ((SECONDS < end)) || return 1
		sleep 0.05
	done
}
# load_end: the end of its stdin; once it ended, RC, OUT, ERR
load_end() {
	exec {LOAD_FD}>&-
	wait "$LOAD_BG"
	RC=$?
	OUT=$(cat "$T_TMP/lout")
	ERR=$(cat "$T_TMP/lerr")
}
# load_by_hand SOFT HARD: provision load on cli1 with those open-file limits; RC, OUT, ERR
load_by_hand() {
	load_start "ulimit -Sn $1 && ulimit -Hn $2 && exec ${PVT[*]} '$PV' load --client cli1 --workgroup LAB --duration 2"
	load_send -f "$T_TMP/load.in"
	load_when '^ready ' lout 180 && load_send go && load_when '^done$' lout 60
	load_end
}
load_by_hand 40 4096
expect_rc 0 "provision load with 100 users and a soft limit of 40 open files (raised)"
expect_out '^ready \{"users":100,"connected":100,"failed":0' "every user connected under a raised limit"
expect_out '^done$' "the step ran to its end"
load_by_hand 40 100
expect_rc 9 "provision load with 100 users and a hard limit of 100 open files"
expect_err "100 users need 164 open files and this host allows 100 \(the hard limit, ulimit -Hn\)" \
	"the limit named"
expect_no_out "^ready" "nothing started under a hard limit too low"

# ---- 6. a logon storm: users the server is too slow for log on again ----------------------
# srv's smbd (its master, which takes new connections) is stopped before 20 users start
# logging on with --timeout 1, and goes on once a first try has timed out (provision load
# says so, -vv): the first tries time out, and the users log on at a later try (without the
# retries none would)
smbd=$(cat "$LAB/srv/pid/smbd.pid")
{ head -n 2 "$T_TMP/load.in"; grep -E '^user pl-cli1-u([1-9]|1[0-9]|20) ' "$T_TMP/load.in"; } >"$T_TMP/storm.in"
load_start "exec ${PVT[*]} '$PV' -vv load --client cli1 --workgroup LAB --duration 1 --timeout 1"
load_send -f "$T_TMP/storm.in"
kill -STOP "$smbd"
load_send start
load_when 'not open: no answer within 1 s; logging on again \(try 2 of 3\)' lerr 60 ||
	fail "no first try timed out while srv's smbd was stopped"
kill -CONT "$smbd"
load_when '^ready ' lout 120 && load_send go && load_when '^done$' lout 60
load_end
kill -CONT "$smbd" 2>/dev/null
expect_rc 0 "provision load through a stop of srv's smbd"
expect_out '^ready \{"users":20,"connected":20,"failed":0' "every user logged on in the end"
expect_err "not open: no answer within 1 s; logging on again \(try 2 of 3\)" "the first tries timed out and were made again"

# ---- 7. run --repeat: the answer with its range; compare of repeats as groups -------------
pv "${P[@]}" --set load.rate=3310 --json run --id lt-rep --min-users 4 --max-users 8 --step 4 \
	--duration 2 --warmup 0 --repeat 2
expect_rc 0 "run --repeat 2"
python3 - "$OUT" "$RES" <<'EOF' || { fail "run --repeat 2: its JSON or its folders"; show; }
import json, os, sys
d = json.loads(sys.argv[1])
res = sys.argv[2]
assert d["repeat"] == 2 and [r["id"] for r in d["repeats"]] == ["lt-rep-r1", "lt-rep-r2"], d
assert d["answers"] == 2 and d["answer_lo"] <= d["answer_users"] <= d["answer_hi"], d
assert sorted(r["answer_users"] for r in d["repeats"]) == [d["answer_lo"], d["answer_hi"]], d
assert open(os.path.join(res, "lt-rep", "repeats.txt")).read() == "lt-rep-r1\nlt-rep-r2\n"
for r in ("lt-rep-r1", "lt-rep-r2"):
    assert os.path.isfile(os.path.join(res, r, "manifest.json")) and os.path.isfile(os.path.join(res, r, "report.html")), r
EOF
pv "${P[@]}" run --id lt-rep2 --min-users 4 --max-users 8 --step 4 --duration 2 --warmup 0 --repeat 2
expect_out "^the server carried [0-9]+ users \([0-9]+-[0-9]+ over 2 repeats\)$" "the answer line with its range"
pv --json compare "$RES/lt-rep" "$RES/lt-rep2"
expect_rc 0 "compare of two folders of repeats"
python3 -c 'import json,sys; d=json.load(sys.stdin); g=[[r["id"] for r in x["runs"]] for x in d["groups"]]; assert g == [["lt-rep-r1", "lt-rep-r2"], ["lt-rep2-r1", "lt-rep2-r2"]], g' <<<"$OUT" ||
	fail "compare did not take each folder of repeats as one group of two: $OUT"
# groups given as folders joined by commas (docs/report.md: compare A1,A2 B1,B2), each run in
# the group the argument puts it in, in its order
pv --json compare "$RES/lt-rep-r1,$RES/lt-rep-r2" "$RES/lt-rep2-r2,$RES/lt-rep2-r1"
expect_rc 0 "compare A1,A2 B2,B1"
python3 -c '
import json, sys
d = json.load(sys.stdin)
g = [[r["id"] for r in x["runs"]] for x in d["groups"]]
assert g == [["lt-rep-r1", "lt-rep-r2"], ["lt-rep2-r2", "lt-rep2-r1"]], g
assert [s["users"] for s in d["steps"]] == [4, 8], d["steps"]
assert all(len(s["groups"]) == 2 for s in d["steps"]), d["steps"]
' <<<"$OUT" || fail "compare A1,A2 B2,B1 did not make the two groups given: $OUT"
pv compare "$RES/lt-rep-r1,$RES/lt-rep-r2" "$RES/lt-rep2-r1"
expect_rc 0 "compare A1,A2 B1 (a group of two against one run)"

pv "${P[@]}" cleanup --leave
expect_rc 0 "cleanup"
finish
