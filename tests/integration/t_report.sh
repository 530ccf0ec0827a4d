#!/usr/bin/env bash
# tests/integration/t_report.sh: report.html and `provision compare` on real runs of the lab
# (lab 'pvrep': 30 users per client, driver builtin at 10x FSCT's rate so that 5-second steps
# count; a ramp of 20, 40 and 60 users, kept logged on between steps: at 5% of a CPU srv logs
# on about 2 users a second, each logon costing it 25 ms of a core). Claims, each asserted:
#
# - The page checker is shown to catch what it must: a page with a script that logs an error
#   and an image from 127.0.0.1 fails it (console error, request named).
# - Run A: `run` writes report.html and names it (text and --json); `provision report` makes
#   the same page byte for byte, and `report --html FILE` the same page at FILE, the run's own
#   page left as it was; in headless Chromium (tests/integration/browser.py: Debian's
#   chromium in a network namespace of its own, driven over the DevTools pipe) it loads with no
#   console message and no request beyond the file, has no script, every table has header
#   cells, the plots are drawn with the run's data (the ramp: one point and interval per step;
#   the server's time series: every sample), the answer is load.json's, the DC's CPU is drawn
#   and in the steps table with the logon p95 beside it (every user logged on), no step is
#   marked client-bound and each step carried says so; the screenshots are kept in
#   build/test-output/t_report/.
# - The manifest's server_config is srv's `testparm -s`, asked on srv apart.
# - Run B, the same with srv's Samba daemons held to 5% of one CPU (lab.sh srv-limit) and
#   `server signing = mandatory` (lab.sh srv-conf, which restarts the daemons): it exits 0 and
#   names its report; every user of every step logged on (load.json), and at its last step
#   srv's smbstatus holds the 20 users' sessions of its first step, each signed; every smbd and winbindd of
#   srv, the restarted ones and those forked for the run's connections included, is in the
#   limit's cgroup (/proc/PID/cgroup, read while the run goes), the server watch saw smbd
#   under the cap, report B shows the signing, and `off` removes the group: the folder lab.sh
#   made for it (its state file names it; cgroup v1 or v2), checked to be where srv's smbd
#   was, is gone.
# - Run A2, A again. compare A B: a real difference in the answer (B carried fewer users) for
#   the server's reason, its overload or errors beyond the noise, never because B's users did
#   not log on (they all did, above); throughput lower at some step, and under what differs
#   the server signing (not set in A, required in B); the --html page passes the same browser
#   checks with its overlay plot. compare A A2, what two runs of one setting show for sure:
#   the same steps compared, each with a verdict, the server signing no longer among what
#   differs (whether the noise hides every difference is chance: not asserted here).
# - compare refuses (exit 3, naming why) a run of driver command, a folder that is no run, and
#   (exit 2) a single run. A run of driver command gets its report: no load sections, said so,
#   the server's plots drawn; one whose command fails (exit 8) gets its report too
#   (docs/run.md: whatever the outcome), named in its --json.
# Adds about 3 minutes to make check.
. "$(dirname "$0")/lib.sh"

P=(-p "$PLAYBOOK" --set lab=pvrep --set "users.name_template=pr-{client}-u{n}"
	--set users.per_client=30 --set driver.name=builtin --set load.rate=3310
	--set load.keep_logged_on=true)
RAMP=(--min-users 20 --max-users 60 --step 20 --duration 5 --warmup 1)
RES=$LAB/results
CAP=5
OUTDIR=$TOP/build/test-output/t_report
rm -rf "$OUTDIR"
mkdir -p "$OUTDIR"
trap '"$LAB_SH" srv-limit off >/dev/null 2>&1; "$LAB_SH" srv-conf >/dev/null 2>&1; on ctl "${PVT[@]}" "$PV" "${P[@]}" cleanup --leave >/dev/null 2>&1; rm -rf "$RES"/rp-* "$T_TMP"' EXIT

# browse PAGE NAME: PAGE in headless Chromium; what it saw in $OUTDIR/NAME/, BR (its JSON), BRC
browse() {
	python3 "$TOP/tests/integration/browser.py" "$1" "$OUTDIR/$2" >"$T_TMP/br.json" 2>"$T_TMP/br.err"
	BRC=$?
	BR=$(cat "$T_TMP/br.json")
	[[ $BRC -ne 2 ]] || fail "chromium could not be driven: $(cat "$T_TMP/br.err")"
}

# ---- 0. the checker fails a page that fetches or errs ---------------------------------------
cat >"$T_TMP/bad.html" <<'EOF'
<!DOCTYPE html><html><head><meta charset="utf-8"><title>bad</title></head><body>
<img src="http://127.0.0.1:9/pixel.png" alt=""><script>console.error("broken");</script>
</body></html>
EOF
browse "$T_TMP/bad.html" bad
[[ $BRC -eq 1 ]] || fail "the browser check passed a page that fetches and errs (status $BRC)"
python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert "http://127.0.0.1:9/pixel.png" in d["requests_out"], d["requests_out"]
assert any("broken" in (m.get("text") or "") for m in d["bad_console"]), d["bad_console"]
' "$BR" || fail "the browser check did not name the request and the console error: $BR"

pv "${P[@]}" cleanup --leave >/dev/null
pv "${P[@]}" prepare
expect_rc 0 "prepare 30 users per client"

# ---- 1. run A and its report -----------------------------------------------------------------
echo "  run A and its report.html" >&2
pv "${P[@]}" --json run --id rp-a "${RAMP[@]}"
expect_rc 0 "run A"
A=$RES/rp-a
python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["report"] == sys.argv[2] + "/report.html" and d["report_error"] is None, d
' "$OUT" "$A" || fail "run --json does not name its report: $OUT"
[[ -s $A/report.html ]] || fail "run A wrote no report.html"
cp "$A/report.html" "$T_TMP/by-run.html"
pv report "$A" --json
expect_rc 0 "provision report A"
cmp -s "$A/report.html" "$T_TMP/by-run.html" || fail "provision report made another page than run did"
python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["command"] == "report" and d["report"] == sys.argv[2] + "/report.html", d
assert d["driver"] == "builtin" and d["steps"] == 3 and d["answer"], d
assert d["notes"] is None, d["notes"]  # every file read whole, the histograms adding up
' "$OUT" "$A" || fail "report --json: $OUT"
# report --html FILE: the same page at FILE; the run's own page not written again
before=$(stat -c '%i %Y %s' "$A/report.html")
pv report "$A" --html "$T_TMP/elsewhere.html" --json
expect_rc 0 "provision report A --html FILE"
python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["report"] == sys.argv[2] and d["bytes"] == int(sys.argv[3]), d
' "$OUT" "$T_TMP/elsewhere.html" "$(stat -c %s "$T_TMP/by-run.html")" || fail "report --html FILE --json: $OUT"
cmp -s "$T_TMP/elsewhere.html" "$T_TMP/by-run.html" || fail "report --html FILE made another page"
[[ $(stat -c '%i %Y %s' "$A/report.html") == "$before" ]] || fail "report --html FILE wrote the run's report.html too"
# the server's configuration as the run saw it: testparm -s on srv, asked here
on srv testparm -s 2>/dev/null >"$T_TMP/testparm"
python3 -c '
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
assert m["server_config"] == open(sys.argv[2]).read(), m["server_config"]
assert "[global]" in m["server_config"], m["server_config"]
' "$A" "$T_TMP/testparm" || fail "manifest.json's server_config is not the server's testparm -s"
browse "$A/report.html" report-a
[[ $BRC -eq 0 ]] || fail "report A in chromium: $(head -c 2000 <<<"$BR")"
python3 - "$BR" "$A" "$OUTDIR/report-a" <<'EOF' || fail "report A's page is not what the run says"
import json, struct, sys
d, run, out = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
load = json.load(open(run + "/load.json"))
man = json.load(open(run + "/manifest.json"))
dom = d["dom"]
assert d["requests"] == [d["url"]] and not d["console"] and not d["exceptions"], d
assert dom["scripts"] == 0 and "default-src 'none'" in dom["csp"], dom["csp"]
assert dom["tables"] >= 5 and dom["tables_with_headers"] == dom["tables"], dom["tables"]
assert "rp-a" in dom["h1"], dom["h1"]
ans = load["answer"]
if ans["users"] is not None:
    assert "carried %d users" % ans["users"] in dom["answer"], (ans, dom["answer"])
else:
    assert "carried no step" in dom["answer"], dom["answer"]
plots = {p["id"]: p for p in dom["plots"]}
for need in ("plot-ramp", "plot-srv-cpu", "plot-srv-procs", "plot-srv-mem", "plot-srv-disk",
             "plot-srv-net"):
    assert need in plots, (need, list(plots))
ramp = {s["name"]: s for s in plots["plot-ramp"]["series"]}
scen = ramp["scenarios/s (95% interval)"]
assert scen["points"] == 3 and scen["markers"] == 3 and scen["whiskers"] == 3 and scen["path"] > 10, scen
assert ramp["overload % (threshold dotted)"]["markers"] == 3, ramp
samples = sum(s["watch"]["samples"] for s in man["steps"])
busy = {s["name"]: s for s in plots["plot-srv-cpu"]["series"]}["CPU busy"]
# every sample of every step (the warm-up's too) and a gap between steps
assert busy["points"] >= samples + 3 and busy["path"] > 10 * samples, (busy, samples)
for p in plots.values():
    assert p["width"] > 300 and p["height"] > 150, p
text = open(out + "/text.txt").read()
for s in load["steps"]:
    assert "%.2f" % s["scen_per_s"] in text, s["scen_per_s"]
# the lab's playbook watches the DC too (domain.ssh): its CPU over the run, and in the steps
# table with the logon p95 beside it, each step's from load.json
assert man.get("watch_dc") and not man["watch_dc"].get("error"), man.get("watch_dc")
assert "plot-dc-cpu" in plots and "The DC's watch: not recorded" not in text, list(plots)
page = open(out + "/dom.html").read()
head = page[page.index("<caption>Every step</caption>"):]
head = head[:head.index("</thead>")]
assert 'DC CPU %<br>(samba % of a core)</th><th scope="col">logon p95 ms' in head, head
for s in load["steps"]:
    # kept logged on: a step logs on its 20 new users; all of the step's are connected
    assert s["logon"]["ok"] == 20 and s["logon"]["failed"] == 0, s["logon"]
    assert s["connected"] == s["users"], s
    v = s["logon"]["latency"]["p95_ms"]
    assert any("%.1f" % (v + d) in text for d in (-0.05, 0, 0.05)), s["logon"]
# the clients were not the limit: no step marked so, every step carried says yes in words
assert not any(s["client_bound"] for s in load["steps"]), [s["clients"] for s in load["steps"]]
assert "<td><b>no: client-bound</b></td>" not in page  # (the note under the table names it)
assert page.count("<td>yes</td>") == sum(1 for s in load["steps"] if s["carried"]), page.count("<td>yes</td>")
png = open(out + "/screenshot.png", "rb").read(24)
assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24]) == (1280, 1000), png
EOF

# ---- 2. run B: srv's Samba daemons held to $CAP% of one CPU -----------------------------------
echo "  run B, srv held to $CAP% of one CPU" >&2
"$LAB_SH" srv-limit "$CAP" >/dev/null || fail "srv-limit $CAP"
# srv-conf restarts the daemons: the new ones go under the limit too
"$LAB_SH" srv-conf 'server signing=mandatory' >/dev/null || fail "srv-conf signing"
on_cap() { # the srv processes named $1 outside the limit's group (printed)
	local p
	for p in $(ip netns pids pvlab-srv); do
		[[ $(cat "/proc/$p/comm" 2>/dev/null) =~ $1 ]] || continue
		grep -Eq '^[0-9]+:([^:]*,)?cpu(,[^:]*)?:/(.*/)?pvlab-srv$|^0::/pvlab-srv$' "/proc/$p/cgroup" 2>/dev/null ||
			echo "$p $(cat "/proc/$p/comm" 2>/dev/null)"
	done
}
left=$(on_cap '^(smbd|winbindd)$')
[[ -z $left ]] || fail "srv-limit left these out of its group: $left"
# the group's folder, where lab.sh made it (state "PERCENT KIND FOLDER ORIGIN": v2, the cgroup2
# mount's pvlab-srv; v1, pvlab-srv beside smbd's group under the cpu controller's mount), and
# checked against the group srv's master smbd is in now (/proc/PID/cgroup: the cpu
# controller's line on v1, the 0:: line on v2): `off` must remove that folder
cg_kind='' cg_dir='' cg_smbd=''
read -r _ cg_kind cg_dir _ <"$LAB/srv/cpu-limit" || fail "srv-limit $CAP wrote no $LAB/srv/cpu-limit"
if [[ $cg_kind == v1 ]]; then
	cg_smbd=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ { print $3; exit }' "/proc/$(cat "$LAB/srv/pid/smbd.pid")/cgroup")
else
	cg_smbd=$(awk -F: '$1 == "0" { print $3; exit }' "/proc/$(cat "$LAB/srv/pid/smbd.pid")/cgroup")
fi
[[ $cg_smbd == */pvlab-srv && $cg_dir == /*"$cg_smbd" && -d $cg_dir ]] ||
	fail "the limit's group: lab.sh names '$cg_dir' ($cg_kind), srv's smbd is in '$cg_smbd'"
pv_bg "${P[@]}" --json run --id rp-b "${RAMP[@]}"
# while the users are connected: the smbd forked for them were born in the group
n=0
for _ in $(seq 600); do
	n=$(ip netns pids pvlab-srv | while read -r p; do cat "/proc/$p/comm" 2>/dev/null; done | grep -c '^smbd$')
	((n >= 15)) && break
	sleep 0.1
done
((n >= 15)) || fail "the run's connections never showed as smbd processes on srv ($n)"
left=$(on_cap '^smbd$')
[[ -z $left ]] || fail "smbd forked for the run's connections outside the limit's group: $left"
# the users logged on, as srv has them: at the first step all 20 sessions, each signed (at
# the last, 3x what srv carries at 5%, smbstatus once saw 41 of the 60 in 10 s of looks)
if pv_when 'run: step 1: the load goes' 400 && srv_sessions_until 'pr-cli[12]-u[0-9]+' 20 10; then
	signed=$(n_lines '^session [^ ]+ [0-9]+ [^ ]+ [^ ]+ AES-128-(GMAC|CMAC)/(full|partial)$' <<<"$SMB")
	[[ $signed -eq $(n_lines '^session ' <<<"$SMB") ]] ||
		fail "run B: $signed of srv's $(n_lines '^session ' <<<"$SMB") sessions signed: $(grep -m 3 '^session' <<<"$SMB")"
fi
pv_bg_wait 400
expect_rc 0 "run B"
B=$RES/rp-b
python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["report"] == sys.argv[2] + "/report.html" and d["report_error"] is None, d
' "$OUT" "$B" || fail "run B --json does not name its report: $OUT"
[[ -s $B/report.html ]] || fail "run B wrote no report.html (status $RC)"
# every user of every step logged on: what compare weighs below is the server's, not logons
python3 - "$B/load.json" <<'EOF' || fail "run B: users that did not log on"
import json, sys
for s in json.load(open(sys.argv[1]))["steps"]:
    assert s["logon"]["failed"] == 0 and s["logon"]["ok"] == 20, (s["users"], s["logon"])
    assert s["not_connected"] == 0 and s["clients_lost"] == 0 and s["connected"] == s["users"], s
print("    run B: overload %s" % ", ".join("%.2f%% at %d users" % (s["all"]["overload_pct"], s["users"])
                                        for s in json.load(open(sys.argv[1]))["steps"]), file=sys.stderr)
EOF
"$LAB_SH" srv-conf >/dev/null || fail "srv-conf back to the base"
"$LAB_SH" srv-limit off >/dev/null || fail "srv-limit off"
[[ -n $cg_dir && ! -e $cg_dir ]] || fail "srv-limit off left its group ${cg_dir:-(its folder unknown)}"
[[ ! -e $LAB/srv/cpu-limit ]] || fail "srv-limit off left its state, $LAB/srv/cpu-limit"
python3 -c '
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
cap = float(sys.argv[2])
for s in m["steps"]:
    w = s["watch"]
    assert w["samples"] and w["smbd"]["mean"] <= cap + 2, (s["users"], w["smbd"])
' "$B" "$CAP" || fail "the server watch saw smbd over the $CAP% cap"
browse "$B/report.html" report-b
[[ $BRC -eq 0 ]] || fail "report B in chromium: $(head -c 2000 <<<"$BR")"
grep -q 'signing: server signing</th><td class="l">required' "$B/report.html" ||
	fail "report B does not show the server's signing as its configuration had it: $(grep -i 'not recorded\|server' <<<"$ERR" | head -3)"

# ---- 3. run A2, and the comparisons ----------------------------------------------------------
echo "  run A2; compare A B, compare A A2" >&2
pv "${P[@]}" run --id rp-a2 "${RAMP[@]}"
expect_rc 0 "run A2"
A2=$RES/rp-a2
pv compare "$A" "$B" --json --html "$RES/rp-cmp.html"
expect_rc 0 "compare A B"
python3 -c '
import json, sys
d = json.loads(sys.argv[1])
a, b = d["groups"]
assert [s["users"] for s in d["steps"]] == [20, 40, 60], d["steps"]
assert b["answer"]["users_low"] < a["answer"]["users_low"], (a["answer"], b["answer"])
assert b["answer"]["diff"] < 0 and b["answer"]["real"] is True, b["answer"]
# the reason is the server: the overload or the errors beyond the noise, never logons that failed
why = b["answer"]["why"]
assert "beyond the noise" in why and "did not log on" not in why, why
assert d["differ_throughput"] >= 1, d["differ_throughput"]
lower = [s["users"] for s in d["steps"] if s["groups"][1]["throughput"]["verdict"] == "lower"]
assert lower and max(lower) == 60, lower
assert d["html"] == sys.argv[2], d["html"]
# what differs: the server signing B ran with, as the two manifests recorded it
# (testparm says mandatory as required)
st = {x["key"]: x["values"] for x in d["settings"]}
assert st.get("server [global] server signing") == ["(not set: the default)", "required"], st
' "$OUT" "$RES/rp-cmp.html" || fail "compare A B: no real difference found: $OUT"
pv compare "$A" "$B"
expect_out "B carried [0-9]+ users; -[0-9]+ against A: real: " "compare A B's text: the answer's difference real"
expect_out "throughput differs beyond the noise at [1-9]" "compare A B's text: throughput"
browse "$RES/rp-cmp.html" compare-a-b
[[ $BRC -eq 0 ]] || fail "compare's page in chromium: $(head -c 2000 <<<"$BR")"
python3 -c '
import json, sys
d = json.loads(sys.argv[1])
p = {p["id"]: p for p in d["dom"]["plots"]}["plot-compare"]
assert len(p["series"]) == 4 and all(s["points"] == 3 and s["markers"] == 3 for s in p["series"]), p
assert d["dom"]["tables_with_headers"] == d["dom"]["tables"] >= 2 and d["dom"]["scripts"] == 0, d["dom"]
' "$BR" || fail "compare's page: the overlay plot or tables: $BR"
pv compare "$A" "$A2" --json
expect_rc 0 "compare A A2"
# two runs of one setting: what is sure is the steps compared, a verdict for each, and the
# configuration B changed put back (whether the noise hides every difference is chance; the
# runs' repeatability is the benchmarks')
python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert [s["users"] for s in d["steps"]] == [20, 40, 60], d["steps"]
assert all(s["groups"][1]["throughput"]["verdict"] in ("same", "higher", "lower") for s in d["steps"]), d["steps"]
st = {x["key"]: x["values"] for x in d["settings"]}
assert "server [global] server signing" not in st, st
print("    compare A A2: throughput %s; answer difference %s (%s)" % (
    [s["groups"][1]["throughput"]["verdict"] for s in d["steps"]], d["groups"][1]["answer"]["diff"],
    d["groups"][1]["answer"]["why"]), file=sys.stderr)
' "$OUT" || fail "compare A A2: $OUT"
pv compare "$A" "$A2"
expect_rc 0 "compare A A2 (text)"
expect_out "(no step's throughput differs beyond the noise|throughput differs beyond the noise at [0-9]+ step)" "compare A A2's text"

# ---- 4. what compare refuses; a command run's report -----------------------------------------
echo "  a command run; what compare refuses" >&2
pv "${P[@]}" --set driver.name=command --set "driver.client_command=sleep 4" run --id rp-cmd \
	--min-users 4 --max-users 4 --step 1 --duration 5 --warmup 0 --watch 1
expect_rc 0 "run of driver command"
C=$RES/rp-cmd
[[ -s $C/report.html ]] || fail "the command run wrote no report.html"
browse "$C/report.html" report-command
[[ $BRC -eq 0 ]] || fail "the command run's report in chromium: $(head -c 2000 <<<"$BR")"
python3 -c '
import json, sys
d = json.loads(sys.argv[1])
ids = [p["id"] for p in d["dom"]["plots"]]
assert "plot-srv-cpu" in ids and "plot-ramp" in ids, ids
assert "measures no scenarios" in d["dom"]["answer"], d["dom"]["answer"]
assert not any(s["name"].startswith("scenarios/s") for p in d["dom"]["plots"] for s in p["series"])
' "$BR" || fail "the command run's report: $BR"
# a run that fails (its command exits 3 on every client) gets its page too
pv "${P[@]}" --set driver.name=command --set 'driver.client_command=exit 3' --json run \
	--id rp-fail --min-users 4 --max-users 4 --step 1 --duration 5 --warmup 0
expect_rc 8 "run whose command fails"
python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["report"] == sys.argv[2] + "/report.html" and d["report_error"] is None, d
' "$OUT" "$RES/rp-fail" || fail "the failed run --json does not name its report: $OUT"
[[ -s $RES/rp-fail/report.html ]] || fail "the failed run wrote no report.html"
pv compare "$A" "$C"
expect_rc 3 "compare with a run of driver command"
expect_err "run '.*rp-cmd' is of driver 'command'" "compare names the other driver"
pv compare "$A" "$T_TMP"
expect_rc 3 "compare with a folder that is no run"
expect_err "no manifest.json: not a run's folder" "compare names the folder that is no run"
pv compare "$A"
expect_rc 2 "compare with one run"
finish
