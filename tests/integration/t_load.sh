#!/usr/bin/env bash
# tests/integration/t_load.sh: `run` with the built-in driver on cli1 and cli2 (lab 'pvload':
# 100 users per client, users pl-cli1-u1...). A ramp from 10 to 100 users per client (20 to 200
# in all, short steps) makes the table, load.txt, the CSVs, load.json and load.svg (well-formed,
# one marker per step and series); the throughput follows users x rate / 3600 within what
# chance allows; no error; every file the driver made is in its own user's tree and owned by
# that user (find and stat on srv, getent for the uids). Then: the same with the server's
# `server signing = mandatory` (our client signs); Kerberos logons (tickets for cifs/<alias>;
# with an alias's SPN removed its users cannot log on). A client killed in the middle of a
# step is t_longday's.
. "$(dirname "$0")/lib.sh"

P=(-p "$PLAYBOOK" --set lab=pvload --set "users.name_template=pl-{client}-u{n}"
	--set users.per_client=100 --set driver.name=builtin)
RES=$LAB/results
trap '[[ -n ${smbd:-} ]] && kill -CONT "$smbd" 2>/dev/null; "$LAB_SH" srv-conf >/dev/null 2>&1; on ctl "${PVT[@]}" "$PV" "${P[@]}" cleanup --leave >/dev/null 2>&1; rm -rf "$RES"/lt-* "$T_TMP"' EXIT

pv "${P[@]}" cleanup --leave >/dev/null
pv "${P[@]}" prepare
expect_rc 0 "prepare 100 users per client"

# ---- 1. the ramp: 20, 80, 140, 200 users; 10x FSCT's rate so that short steps count ------
echo "  ramp 20..200 users" >&2
pv "${P[@]}" --set load.rate=3310 --json run --id lt-ramp --min-users 20 --max-users 200 \
	--step 60 --duration 6 --warmup 1
expect_rc 0 "run, builtin ramp"
R=$RES/lt-ramp
for f in load.txt load.csv load-kinds.csv load.json load.svg manifest.json; do
	[[ -s $R/$f ]] || fail "no $f in the run's folder"
done
python3 - "$OUT" "$R" <<'EOF' || fail "the ramp's figures are wrong"
import json, math, sys, xml.etree.ElementTree as ET
d = json.loads(sys.argv[1])
steps = d["steps"]
assert [s["users"] for s in steps] == [20, 80, 140, 200], [s["users"] for s in steps]
for s in steps:
    l = s["load"]
    assert l["errors"] == 0 and l["connected"] == s["users"] and l["clients_lost"] == 0, (s["users"], l)
    # Poisson: the count in the measured time is within 4 sd of the expected count, or the
    # step is overloaded (then it may fall short, not exceed)
    secs = l["completed"] / l["scenarios_per_second"] if l["scenarios_per_second"] else 0
    exp_n = l["expected"] * secs
    got_n = l["completed"]
    assert got_n > 0, l
    if l["overload"] <= 1:
        assert abs(got_n - exp_n) <= 4 * math.sqrt(exp_n) + 3, (s["users"], got_n, exp_n)
    assert got_n <= exp_n + 4 * math.sqrt(exp_n) + 3, (s["users"], got_n, exp_n)
assert d["answer"] and "users" in d["answer"], d["answer"]
j = json.load(open(sys.argv[2] + "/load.json"))
assert len(j["steps"]) == 4, j.keys()
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

# ---- 2. signing required by the server: our client signs ---------------------------------
echo "  server signing = mandatory" >&2
"$LAB_SH" srv-conf 'server signing=mandatory' >/dev/null || fail "srv-conf signing"
pv "${P[@]}" --set load.rate=3310 --json run --id lt-sign --min-users 40 --max-users 40 \
	--step 1 --duration 4 --warmup 1
expect_rc 0 "run with signing required"
all_40 "$OUT" || fail "signed run: $OUT"
"$LAB_SH" srv-conf >/dev/null

# ---- 2b. encryption: asked for by the playbook (load.encryption), and refused ------------
echo "  load.encryption" >&2
pv "${P[@]}" --set load.rate=3310 --set load.encryption=aes-128-ccm --json run --id lt-enc \
	--min-users 40 --max-users 40 --step 1 --duration 4 --warmup 1
expect_rc 0 "run with every session encrypted (AES-128-CCM asked for)"
all_40 "$OUT" || fail "encrypted run: $OUT"
expect_err "run: cli[12]'s users speak SMB 3\.1\.1, encrypted \(AES-128-CCM\) to the server" \
	"what the users' sessions spoke"
# the AES-256 ciphers: their keys come from the whole session key (Kerberos's is 32 bytes)
for enc in aes-256-gcm:kerberos aes-256-ccm:ntlm; do
	pv "${P[@]}" --set load.rate=3310 --set "load.encryption=${enc%%:*}" --set "load.auth=${enc#*:}" \
		--json run --id "lt-${enc%%:*}" --min-users 40 --max-users 40 --step 1 --duration 3 --warmup 1
	expect_rc 0 "run encrypted with ${enc%%:*}, ${enc#*:} logons"
	all_40 "$OUT" || fail "run encrypted with $enc: $OUT"
	expect_err "users speak SMB 3\.1\.1, encrypted \($(tr a-z A-Z <<<"${enc%%:*}")\)" "$enc spoken"
done
# a server that requires encryption but speaks no dialect that can: every logon refused, the
# run fails (no user of any step logged on) and names the setting
"$LAB_SH" srv-conf 'server smb encrypt=required' 'server max protocol=SMB2_10' >/dev/null ||
	fail "srv-conf encrypt without SMB 3"
pv "${P[@]}" run --id lt-noenc --min-users 4 --max-users 4 --step 1 --duration 2 --warmup 0
expect_rc 8 "run where nobody can log on"
expect_err "no user of any of the 1 step could log on; the first refusal: cli[12]: pl-cli[12]-u[0-9]+: SMB logon as LAB.pl-cli[12]-u[0-9]+ on 'srvu[0-9]+' refused \(NT_STATUS_ACCESS_DENIED\): a server that requires encryption \(Samba: \`server smb encrypt = required\`" \
	"the refusal's setting named"
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
pv "${P[@]}" --set load.auth=kerberos run --id lt-nospn --min-users 4 --max-users 4 --step 1 \
	--duration 2 --warmup 0
expect_err "pl-cli1-u2.*cifs@srvu2.*(not found|unknown)" "the missing SPN named"
expect_out "2 of 4 users not connected|not connected" "users without a ticket reported"
pv "${P[@]}" server
expect_rc 0 "server puts the SPNs back"

# ---- 4. (a client's provision load killed in the middle of a step: t_longday) -------------

# ---- 5. provision load by hand, under open-file limits too low for its 100 users --------
# stdin as run renders it (docs/load.md): the password, the config, a line per user, start;
# then go once ready, and the end of stdin after the duration
{
	cat "$LAB/user.pass"
	echo
	echo "config rate=3310 late=1 overload=1 interval=1 seed=1 auth=ntlm weights=15,150,40,7,15,50,15,5,15,7,7,5 limits=2,1,2,3,3,1,2,1,1,1,2,5"
	for n in $(seq 100); do echo "user pl-cli1-u$n srvu$n fsroot$(((n - 1) % 2 + 1)) $n"; done
	echo start
} >"$T_TMP/load.in"
# load_by_hand SOFT HARD: provision load on cli1 with those open-file limits; RC, OUT, ERR
load_by_hand() {
	pv_shell "ulimit -Sn $1 && ulimit -Hn $2 && { cat '$T_TMP/load.in'; sleep 2; echo go; sleep 4; } |
		${PVT[*]} '$PV' load --client cli1 --workgroup LAB --duration 2"
}
pv_shell() {
	on cli1 bash -c "$1" >"$T_TMP/out" 2>"$T_TMP/err"
	RC=$?
	OUT=$(cat "$T_TMP/out")
	ERR=$(cat "$T_TMP/err")
}
load_by_hand 40 4096
expect_rc 0 "provision load with 100 users and a soft limit of 40 open files (raised)"
expect_out '^ready \{"users":100,"connected":100,"failed":0' "every user connected under a raised limit"
load_by_hand 40 100
expect_rc 9 "provision load with 100 users and a hard limit of 100 open files"
expect_err "100 users need 164 open files and this host allows 100 \(the hard limit, ulimit -Hn\)" \
	"the limit named"
expect_no_out "^ready" "nothing started under a hard limit too low"

# ---- 6. a logon storm: users the server is too slow for log on again ----------------------
# srv's smbd (its master, which takes new connections) is stopped just before 20 users start
# logging on with --timeout 1, and goes on 1.5 s later: every first try times out, and the
# users log on at a later try (without the retries none would)
smbd=$(cat "$LAB/srv/pid/smbd.pid")
{ head -n 2 "$T_TMP/load.in"; grep -E '^user pl-cli1-u([1-9]|1[0-9]|20) ' "$T_TMP/load.in"; } >"$T_TMP/storm.in"
pv_shell "{ cat '$T_TMP/storm.in'; sleep 0.5; kill -STOP $smbd; echo start; sleep 1.5; kill -CONT $smbd;
	sleep 3; echo go; sleep 3; } | ${PVT[*]} '$PV' -vv load --client cli1 --workgroup LAB --duration 1 --timeout 1"
kill -CONT "$smbd" 2>/dev/null
expect_rc 0 "provision load through a 1.5 s stop of srv's smbd"
expect_out '^ready \{"users":20,"connected":20,"failed":0' "every user logged on in the end"
expect_err "not open within 1 s; logging on again \(try 2 of 3\)" "the first tries timed out and were made again"

# ---- 7. run --repeat: the answer with its range, compare of the repeats as one group ------
pv "${P[@]}" --set load.rate=3310 --json run --id lt-rep --min-users 20 --max-users 40 --step 20 \
	--duration 3 --warmup 1 --repeat 2
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
pv "${P[@]}" run --id lt-rep2 --min-users 20 --max-users 40 --step 20 --duration 3 --warmup 1 --repeat 2
expect_out "^the server carried [0-9]+ users \([0-9]+-[0-9]+ over 2 repeats\)$" "the answer line with its range"
pv --json compare "$RES/lt-rep" "$RES/lt-rep2"
expect_rc 0 "compare of two folders of repeats"
python3 -c 'import json,sys; d=json.load(sys.stdin); g=[[r["id"] for r in x["runs"]] for x in d["groups"]]; assert g == [["lt-rep-r1", "lt-rep-r2"], ["lt-rep2-r1", "lt-rep2-r2"]], g' <<<"$OUT" ||
	fail "compare did not take each folder of repeats as one group of two: $OUT"

pv "${P[@]}" cleanup --leave
expect_rc 0 "cleanup"
finish
