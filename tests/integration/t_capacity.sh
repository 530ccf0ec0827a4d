#!/usr/bin/env bash
# tests/integration/t_capacity.sh: the capacity answer of the built-in driver can be trusted
# (issue 19), on the lab (lab 'pvcap': 140 users per client, users pc-cli1-u1...). srv's Samba
# daemons are held to a share of one CPU (lab.sh srv-limit), so that a ramp reaches overload on
# this one machine while the clients stay far from their limit; users stay logged on between
# steps (load.keep_logged_on), so a step logs on only its new users and the ramps are short.
# What one run on this machine can show is asserted here (a step's overload, the order of two
# answers, a bound a broken build would cross); how linear and how repeatable the answers are
# is statistical, measured by bench/capacity.sh (medians over rounds), not asserted here.
#   1. the ramp finds overload at a cap (10% of a CPU, 20x FSCT's rate): an answer, a first step
#      over it that is overloaded (over 1%) or has scenarios in error (the server failed them:
#      such a step is not carried either) and not client-bound, no step up to it client-bound,
#      and the answer line naming both steps; the DC's CPU in run's step table and in load.txt,
#      watch-dc.csv with watch.csv's columns; a kept step logs on its new users only, and srv's
#      smbstatus shows it: at each step's start the server holds a session per user of the
#      step, and the sessions of the step before are still there (the same session ids); the
#      ramp ends after 2 steps in a row over the answer (--over-steps 2), the rest said skipped
#      in the manifest;
#   2. the cap doubled and the rate doubled: overload found likewise, the server's;
#   3. the cap doubled, the rate the same: overload found likewise (under the 210 users the
#      ramp reaches: a cap that did nothing would carry them all); the answer not below 1.'s
#      (more CPU never carries fewer users) and not below 2.'s (twice the rate never carries
#      more); every ramp refined (--refine) to half its step, 3.'s bisecting to 5 users;
#   5. users who cannot log on (2 of 4 disabled in the directory): the step's overload shows
#      them (their scenarios unserved), its logons say 2 failed, and it does not count;
#   6. a client made the limit (cli1's sshd, so its provision load, held to 1% of a CPU): the
#      step is client-bound, cli1 named, never carried, and the answer says the clients were
#      the limit;
#   7. the reports of 5. and 6. in headless Chromium (tests/integration/browser.py): 6.'s step
#      says "no: client-bound" in words and never "yes", its answer box and bottleneck hint
#      name cli1 as the limit; 5.'s step shows the logon p95 beside the DC's CPU with the 2
#      logons that failed, and its answer box and hint say so; compare of 6. with itself
#      compares no step as the server's and names cli1 (text, --json, --html). Pages and
#      screenshots in build/test-output/t_capacity/.
. "$(dirname "$0")/lib.sh"

P=(-p "$PLAYBOOK" --set lab=pvcap --set "users.name_template=pc-{client}-u{n}"
	--set users.per_client=140 --set driver.name=builtin --set load.keep_logged_on=true)
RES=$LAB/results
OUTDIR=$TOP/build/test-output/t_capacity
rm -rf "$OUTDIR"
mkdir -p "$OUTDIR"
trap '"$LAB_SH" srv-limit off >/dev/null 2>&1; "$LAB_SH" cli-limit cli1 off >/dev/null 2>&1;
	enable_users 512 >/dev/null 2>&1; on ctl "${PVT[@]}" "$PV" "${P[@]}" cleanup --leave >/dev/null 2>&1;
	rm -rf "$RES"/cap-* "$T_TMP"' EXIT

# enable_users UAC: userAccountControl of pc-cli1-u2 and pc-cli2-u2 (514 disabled, 512 not)
enable_users() {
	local u
	for u in pc-cli1-u2 pc-cli2-u2; do
		printf 'dn: CN=%s,OU=pvcap,%s\nchangetype: modify\nreplace: userAccountControl\nuserAccountControl: %s\n\n' \
			"$u" "$BASE_DN" "$1"
	done | ldm
}

# limit PERCENT: srv's daemons under it (one that exits while it is moved makes srv-limit
# fail: it is tried again)
limit() {
	local _
	for _ in 1 2 3 4 5; do
		"$LAB_SH" srv-limit "$1" >/dev/null 2>&1 && return 0
		sleep 2
	done
	fail "srv-limit $1"
}

# sample_steps ID: while the background run goes, srv's sessions of the lab's users (srv_smb)
# at each step's start (when its load goes: every user of the step logged on), into
# $T_TMP/sess.ID.N: what up to three looks saw together while the step went on (srv's
# smbstatus, overloaded at 10% of a CPU, once listed 65 of the 70 sessions there); a look that
# ended after its step did is dropped (the next step logs users on or off), and a step with
# no look in time gets $T_TMP/sess.ID.N.late instead (smbstatus can take seconds there)
sample_steps() {
	local n=1 i
	while kill -0 "$BG" 2>/dev/null; do
		if grep -q "run: step $n: the load goes" "$T_TMP/bgerr"; then
			: >"$T_TMP/sess.$1.$n.all"
			for i in 1 2 3; do
				srv_smb 'pc-cli[12]-u[0-9]+' || break
				grep -q "run: step $n ends" "$T_TMP/bgerr" && break
				printf '%s\n' "$SMB" >>"$T_TMP/sess.$1.$n.all"
				sleep 0.3
			done
			if [[ -s $T_TMP/sess.$1.$n.all ]]; then
				sort -u "$T_TMP/sess.$1.$n.all" >"$T_TMP/sess.$1.$n"
			else
				: >"$T_TMP/sess.$1.$n.late"
			fi
			n=$((n + 1))
			continue
		fi
		sleep 0.05
	done
}

# ramp ID CAP RATE MIN MAX STEP [ARGS...]: a run at that cap and rate (srv's sessions sampled
# at each step: sample_steps); ANSWER the users it carried (0: none), OVER the users of the
# first step over it (0: none), its overload % in OVERLOAD and whether it was client-bound in
# BOUND, whether any step up to it was in ANYBOUND. Then what one ramp must show, whatever the
# noise: an answer, and a first step over it that is overloaded or in error and not
# client-bound, no step up to it client-bound (the answer is the server's).
ramp() {
	local id=$1 cap=$2 rate=$3 min=$4 max=$5 step=$6
	shift 6
	limit "$cap"
	echo "  $id: srv at $cap% of a CPU, $rate scenarios per user-hour, $min..$max by $step $*" >&2
	rm -f "$T_TMP/sess.$id".*
	pv_bg "${P[@]}" --set "load.rate=$rate" run --id "$id" --min-users "$min" --max-users "$max" \
		--step "$step" --duration 5 --warmup 1 "$@"
	sample_steps "$id"
	pv_bg_wait
	expect_rc 0 "run $id"
	ANSWER=0 OVER=0 OVERLOAD=0 BOUND=1 ANYBOUND=1 ERRORS=0
	read -r ANSWER OVER OVERLOAD BOUND ANYBOUND ERRORS < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
a, o = d["answer"], d["answer"]["first_over"]
over = d["steps"][o["step"] - 1] if o else None
print(a["users"] or 0, o["users"] if o else 0, over["all"]["overload_pct"] if over else 0,
      int(bool(o and o["client_bound"])),
      int(any(s["client_bound"] for s in d["steps"] if o and s["users"] <= o["users"])),
      over["all"]["errors"] if over else 0)' "$RES/$id/load.json") ||
		fail "$id: no load.json"
	echo "    answer $ANSWER, first over it $OVER (overload $OVERLOAD%, scenarios in error $ERRORS, client-bound $BOUND)" >&2
	[[ $ANSWER -ge $min && $OVER -gt $ANSWER && $BOUND -eq 0 && $ANYBOUND -eq 0 ]] ||
		fail "$id at $cap%: no overload found that is the server's (answer $ANSWER, first over $OVER, client-bound $BOUND, any step client-bound $ANYBOUND)"
	# over the answer: overloaded, or the server failed scenarios there (a step with an error
	# is not carried: CI once met 0.21% and 2 errors at 20% of a CPU and twice the rate)
	python3 -c "import sys; assert float(sys.argv[1]) > 1 or int(sys.argv[2]) > 0" "$OVERLOAD" "$ERRORS" ||
		fail "$id: the step over the answer is neither overloaded nor in error: $OVERLOAD% (what put it over: $(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
o = d["answer"]["first_over"]
s = d["steps"][o["step"] - 1] if o else {}
print("errors %s, not connected %s, clients lost %s, client-bound %s" % (s.get("all", {}).get("errors"),
      s.get("not_connected"), s.get("clients_lost"), s.get("client_bound")))' "$RES/$id/load.json" 2>&1))"
}

# every ramp: 10..210 by 20, ended 2 steps over its answer (--over-steps 2), refined to 5 users.
# The answers moved with the machine and with what else srv did (10, 10, 30 in one CI run when
# the test's own smbstatus walked srv's open files; 40, 55, 70 here once it no longer did): the
# ramp reaches far past them, and costs only 2 steps over the answer
R_MIN=10 R_MAX=210 R_STEP=20
export R_MIN R_MAX R_STEP
pv "${P[@]}" cleanup --leave >/dev/null
pv "${P[@]}" prepare
expect_rc 0 "prepare 140 users per client"

# ---- 1. overload at a cap; the DC in the table; only new users log on ---------------------
ramp cap-a 10 6620 $R_MIN $R_MAX $R_STEP --refine 5 --over-steps 2
A=$ANSWER
grep -Eq "the server carried $A users without overload \(step [0-9]+, $A users: .*; the first step over it, step [0-9]+, $OVER users: overload" \
	"$RES/cap-a/load.txt" || fail "load.txt's answer does not name both steps: $(tail -1 "$RES/cap-a/load.txt")"
# the step table: the DC's CPU (mean/max, samba) on every step's row, as load.txt's column
grep -Eq '^ +1 +10 .* [0-9]+\.[0-9]/[0-9]+\.[0-9], [0-9]+\.[0-9]$' <<<"$OUT" ||
	fail "the step table has no DC CPU for step 1: $(grep -E '^ +1 ' <<<"$OUT" | head -1)"
grep -q "DC CPU % (samba)" "$RES/cap-a/load.txt" || fail "load.txt has no DC CPU column"
[[ $(head -1 "$RES/cap-a/step-01/watch-dc.csv") == "$(head -1 "$RES/cap-a/step-01/watch.csv")" ]] ||
	fail "watch-dc.csv's columns are not watch.csv's"
python3 - "$RES/cap-a" <<'EOF' || fail "the DC's watch or the kept logons are wrong"
import json, os, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
d = json.load(open(sys.argv[1] + "/load.json"))
for s in m["steps"]:
    assert s["watch_dc"]["samples"] >= 1 and s["watch_dc"]["cpu"]["mean"] >= 0, s["watch_dc"]
    assert s["load"]["dc_cpu"] is not None, s["load"]
# users kept logged on: every step of the ramp logs on only its new users (a refining step
# after the ramp fewer: its users are logged on already, those over it logged off)
ramp = [s for s in m["steps"] if not s["refine"]]
lo, st = int(os.environ["R_MIN"]), int(os.environ["R_STEP"])
assert [s["logon"]["ok"] for s in d["steps"][:len(ramp)]] == [lo] + [st] * (len(ramp) - 1), [s["logon"] for s in d["steps"]]
for s in d["steps"]:
    assert len(s["clients"]) == 2 and all(not c["bound"] for c in s["clients"]), s["clients"]
    assert sum(s["ops"].values()) > 0 and s["ops"]["create"] > 0, s["ops"]
EOF
# ... and as srv has them: at each step of the ramp a session per user of the step, and the
# sessions of the step before kept (the same ids; a connection the step says dropped apart)
python3 - "$RES/cap-a" "$T_TMP/sess.cap-a" <<'EOF' || fail "srv's sessions do not show the users kept logged on"
import json, os, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
d = json.load(open(sys.argv[1] + "/load.json"))
def sessions(n):
    f = "%s.%d" % (sys.argv[2], n)
    if os.path.exists(f + ".late"):
        return None  # the look ended after the step: nothing to say of it
    assert os.path.exists(f), "no look at srv's sessions at step %d" % n
    return {tuple(l.split()[1:3]) for l in open(f) if l.startswith("session ")}
ramp = [s for s in m["steps"] if not s["refine"]]
looks = [sessions(i + 1) for i in range(len(ramp))]
# the first steps, where srv keeps up, are looked at in time whatever the machine
assert all(x is not None for x in looks[:3]), "late looks at steps %s" % [i + 1 for i, x in enumerate(looks) if x is None]
prev = None
for i, s in enumerate(ramp):
    now = looks[i]
    if now is None:
        prev = None
        continue
    # every user of the step, but those whose connection the step says dropped (an
    # overloaded server's requests time out: the user connects again, as a Windows client)
    gone = d["steps"][i]["connections_dropped"]
    # (and a dropped connection's old session can outlive its new one a while on a slow srv)
    assert s["users"] - gone <= len(now) <= s["users"] + gone, (
        "step %d: %d sessions on srv for %d users, %d connections dropped" % (i + 1, len(now), s["users"], gone))
    if prev is not None:
        lost = prev - now
        dropped = d["steps"][i - 1]["connections_dropped"] + d["steps"][i]["connections_dropped"]
        assert len(lost) <= dropped, ("step %d: %d sessions of step %d gone, %d dropped" % (i + 1, len(lost), i, dropped))
    prev = now
# --over-steps 2: the ramp ran until 2 steps in a row were over the answer, the rest said
sk = m["driver"]["skipped"]
over = lambda s: not s["carried"] and not s["client_bound"]
ls = {s["users"]: s for s in d["steps"]}  # --refine never measures users twice
tail = [ls[s["users"]] for s in ramp[-2:]]
lo, hi, st = (int(os.environ[k]) for k in ("R_MIN", "R_MAX", "R_STEP"))
total = (hi - lo) // st + 1
if len(ramp) < total:
    assert len(ramp) >= 2 and all(over(s) for s in tail), ("the ramp ended with a step carried", tail)
    assert not any(all(over(ls[x["users"]]) for x in ramp[i:i + 2]) for i in range(len(ramp) - 2)), (
        "the ramp went on past 2 steps over the answer", ramp)
    assert sk == {"steps": total - len(ramp), "from_users": ramp[-1]["users"] + st, "to_users": hi}, sk
else:
    assert sk is None, sk
print("    the ramp: %d of its %d steps, the rest skipped by --over-steps 2: %s" % (len(ramp), total, sk), file=sys.stderr)
print("    srv's sessions at each step of the ramp: %s, each step's kept into the next (looks in time: %d of %d)" % (
    [s["users"] for s in ramp], sum(x is not None for x in looks), len(ramp)), file=sys.stderr)
EOF

# ---- 2. cap and rate doubled: overload found, the server's ----------------------------------
ramp cap-b 20 13240 $R_MIN $R_MAX $R_STEP --refine 5 --over-steps 2
B=$ANSWER

# ---- 3. cap doubled, rate the same: overload found; never fewer users than 1. or 2. ---------
ramp cap-c 20 6620 $R_MIN $R_MAX $R_STEP --refine 5 --over-steps 2
C=$ANSWER
((C >= A)) || fail "twice the CPU carried fewer users: $C at 20% against $A at 10%"
((C >= B)) || fail "the same CPU carried more users at twice the rate: $B at 13240 against $C at 6620"
python3 -c '
import json, os, sys
d = json.load(open(sys.argv[1]))
r = [s for s in d["steps"] if s["refine"]]
lo, st = int(os.environ["R_MIN"]), int(os.environ["R_STEP"])
assert r and all(s["users"] % 5 == 0 and (s["users"] - lo) % st for s in r), r
a = json.load(open(sys.argv[2]))["answer"]
assert a["first_over"]["users"] - a["users"] <= 5, a
' "$RES/cap-c/manifest.json" "$RES/cap-c/load.json" || fail "--refine did not bisect to 5 users"
echo "    answers: $A at 10%, $B at 20% and twice the rate, $C at 20% (their ratios: bench/capacity.sh)" >&2
"$LAB_SH" srv-limit off >/dev/null

# ---- 5. users who cannot log on: their scenarios unserved, the overload shows it ----------
enable_users 514 >/dev/null || fail "disabling pc-cli1-u2 and pc-cli2-u2"
echo "  2 of 4 users disabled" >&2
pv "${P[@]}" --set load.rate=6620 --set load.keep_logged_on=false run --id cap-e \
	--min-users 4 --max-users 4 --step 1 --duration 5 --warmup 1
expect_rc 0 "run with 2 of 4 users disabled"
python3 - "$RES/cap-e/load.json" <<'EOF' || fail "users who could not log on are not in the overload"
import json, sys
s = json.load(open(sys.argv[1]))["steps"][0]
a = s["all"]
assert s["logon"]["failed"] == 2 and s["logon"]["ok"] == 2, s["logon"]
assert a["unserved"] > 0 and a["errors"] == 0, a
# half the users had no connection: about half the scenarios were unserved
assert 25 <= a["overload_pct"] <= 75, a["overload_pct"]
assert a["overloaded"] >= a["unserved"] and not s["carried"], s
EOF
grep -q "2 users not connected, 2 logons failed" "$RES/cap-e/load.txt" ||
	fail "load.txt does not say 2 users could not log on"
enable_users 512 >/dev/null || fail "enabling pc-cli1-u2 and pc-cli2-u2"

# ---- 6. a client made the limit: never credited to the server ----------------------------
"$LAB_SH" cli-limit cli1 1 >/dev/null || fail "cli-limit cli1 1"
echo "  cli1 held to 1% of a CPU" >&2
pv "${P[@]}" --set load.rate=6620 run --id cap-f --min-users 200 --max-users 200 --step 1 \
	--duration 5 --warmup 1
"$LAB_SH" cli-limit cli1 off >/dev/null
expect_rc 0 "run with cli1 held to 1% of a CPU"
python3 - "$RES/cap-f/load.json" <<'EOF' || fail "a client-bound step was credited to the server"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["steps"][0]
c = {x["name"]: x for x in s["clients"]}
assert s["client_bound"] and not s["carried"], s
assert c["cli1"]["bound"], c
assert d["answer"]["users"] is None and d["answer"]["client_bound"], d["answer"]
EOF
expect_out "the clients were the limit there, not the server \(cli1: busiest loop" \
	"the answer says the clients were the limit"

# ---- 7. what the report and compare make of 5. and 6. -----------------------------------
# browse PAGE NAME: PAGE in headless Chromium, what it saw in $OUTDIR/NAME/ (dom.html,
# text.txt, the screenshots); the test fails when the page errs or fetches
browse() {
	python3 "$TOP/tests/integration/browser.py" "$1" "$OUTDIR/$2" >"$T_TMP/br.json" 2>"$T_TMP/br.err" ||
		fail "$2 in chromium: $(head -c 2000 "$T_TMP/br.json") $(head -c 500 "$T_TMP/br.err")"
}
echo "  the reports of the client-bound run and of the failed logons; compare" >&2
browse "$RES/cap-f/report.html" report-f
python3 - "$T_TMP/br.json" "$OUTDIR/report-f" <<'PY' || fail "report.html of the client-bound run"
import json, sys
d, out = json.load(open(sys.argv[1])), sys.argv[2]
page, text = open(out + "/dom.html").read(), open(out + "/text.txt").read()
# the step in words, in its row, and never shown carried
assert "<td><b>no: client-bound</b></td>" in page, "no client-bound marking"
assert "<td>yes</td>" not in page, "a client-bound step shown carried"
assert "cli1 bound !" in page, "the bound client is not named in the table"
assert "logon p95 ms" in text and "DC CPU %" in text, "no logon or DC column"
ramp = {x["name"]: x for p in d["dom"]["plots"] if p["id"] == "plot-ramp" for x in p["series"]}
assert ramp["client-bound: the clients' limit, not the server's"]["markers"] == 1, ramp
ans = d["dom"]["answer"]
assert "the clients were the limit there, not the server (cli1" in ans, ans
assert "The run's answer line: " in ans, ans
assert "were client-bound: the clients were the limit there, not the server. Client cli1" in text, \
    "the hint does not name cli1 as the limit"
PY
browse "$RES/cap-e/report.html" report-e
python3 - "$T_TMP/br.json" "$OUTDIR/report-e" <<'PY' || fail "report.html of the run with failed logons"
import json, sys
d, out = json.load(open(sys.argv[1])), sys.argv[2]
page, text = open(out + "/dom.html").read(), open(out + "/text.txt").read()
head = page[page.index("<caption>Every step</caption>"):]
head = head[:head.index("</thead>")]
# the logon p95 right beside the DC's CPU
assert 'DC CPU %<br>(samba % of a core)</th><th scope="col">logon p95 ms' in head, head
assert "2 failed !, " in page, "the failed logons are not in the step's row"
assert "Logons failed there: 2 of 4 users could not log on" in text, "the hint does not say so"
assert "2 of 4 users could not log on" in d["dom"]["answer"], d["dom"]["answer"]
PY
pv compare "$RES/cap-f" "$RES/cap-f" --json --html "$OUTDIR/compare-f.html"
expect_rc 0 "compare the client-bound run with itself"
python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["compared_steps"] == 0 and d["differ"] == 0, d
s = d["steps"][0]
assert not s["compared"] and "cli1" in s["note"], s
assert all(g["client_bound"] and not g["carried"] for g in s["groups"]), s["groups"]
assert s["groups"][1]["throughput"]["verdict"] == "n/a", s["groups"][1]
' "$OUT" || fail "compare compared a client-bound step as the server's: $OUT"
pv compare "$RES/cap-f" "$RES/cap-f"
expect_out "not compared as the server's: A was client-bound \(cli1: " "compare's text names the client"
browse "$OUTDIR/compare-f.html" compare-f
grep -Eq "not compared as the server(&#39;|')s: A was client-bound \(cli1: " "$OUTDIR/compare-f/dom.html" ||
	fail "compare's page does not say the step is not compared"

pv "${P[@]}" cleanup --leave
expect_rc 0 "cleanup"
finish
