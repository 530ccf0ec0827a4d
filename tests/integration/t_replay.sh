#!/usr/bin/env bash
# load.workload: a workload learned from a lab capture, replayed by the built-in driver.
#   1. the built-in driver's own load (2 users on each client, one step) captured on srv
#      (lab.sh capture) and learned: `learn -o` writes the workload;
#   2. `run --dry-run` says it would replay the workload's kinds, at what rate, and how many of
#      its documents it opens without a lease (files.opens: the capture's share); `run` with
#      load.workload set replays it: exit 0; the run's settings say the learned
#      kind is the only one drawn, at the capture's rate of the kinds replayed (the workload's
#      per_user_hour, logons' kinds left out); its scenarios all of kind learned, none in
#      error (every open finds what it opens, every request is taken), no other kind started;
#   2b. none learned again of the driver's capture (each user logged on once), none replayed;
#      the workload's users.logons_again_per_hour (made 3600): the dry run says it; the users log
#      off and on again at that rate, counted in load.json (logons_again, not as drops), and
#      Samba's profile counts a LOGOFF and the SESSION_SETUPs for each;
#   3. the server's own count (Samba's profile, smbstatus --profile on srv) of the replay's
#      file commands against the capture's (learn's count): every command above 1% of the
#      capture's file requests is served, and its share is within 8 points of the capture's
#      (bench/replay.sh measures the match to the issue's 3 points, with the logons taken out);
#   4. on the wire: the replay captured too, and `learn CAPTURE --check REPLAY --json` read
#      against Wireshark's dissector: every mix row's share of the replay is tshark's count
#      (CREATE by disposition, IOCTL by code, QUERY_DIRECTORY by pattern), every part above
#      1% has a row, each row's verdict is its 3-point bound, the watches answered in the replay as in the capture,
#      the opens of a file to read or edit asking a lease or an oplock as many in the replay as
#      in the capture (a part of them; both shares tshark's), the exit status is 1 exactly when
#      a check failed; and --check on a file that is not a capture: exit 3, --check named;
#   5. bad input: a workload that is not one (an unknown command), a file that is not there,
#      load.scenarios.learned weighed without a workload, and a workload whose kinds read and
#      list static/ with a fileset that has none: exit 3, the key and the fix named, nothing
#      run (no run folder made).
#   6. the namespace learned: w.yaml's fileset against the captured users' homes (find on
#      srv: no more files than they hold, each size bucket one of theirs); a playbook with no
#      server.fileset prepares it (find on srv: its shape), and the replay on it finds what it
#      opens (no scenario in error, --check's names-not-found row passes).
#   7. an IOCTL's code: the committed smbclient capture's referral (IOCTL(REFERRAL)) replayed
#      alone sends FSCTL_DFS_GET_REFERRALS (tshark on srv), every one answered, none in error.
#   8. a stat open: the same capture's (FILE_READ_ATTRIBUTES alone, by tshark) learned as
#      CREATE(STAT); its kind replayed alone sends them so (tshark on srv: no lease, no open to
#      read), every CREATE answered STATUS_SUCCESS, none in error.
#   9. a listing's pattern: the same capture's del (one name, by tshark) learned as
#      QUERY_DIRECTORY(NAME); a kind that lists part of a folder and then one name replayed
#      alone asks them so (tshark on srv: a pattern with a wildcard, a name without), none
#      answered not found, a name's listing answered with that name, none in error; and where
#      (the kind's depths: [0, 1, -1]): the pattern's listing of the user's home, the name's of
#      a folder one level into static/, a third of the share's root (tshark: the CREATE of
#      each listing's file id); learn's count of that capture's listings by place (the home,
#      below it, outside) is tshark's.
# In 2, w.yaml's think times and gaps within an activity have their quantiles, and the dry run
# says the activities are paced as the capture's.
# Everything it makes is in $T_TMP; lab 'pvreplay' is prepared and cleaned up, srv's smb.conf
# put back (lab.sh srv-conf).
. "$(dirname "$0")/lib.sh"

P=(-p "$PLAYBOOK" --set lab=pvreplay --set "users.name_template=rp-{client}-u{n}"
	--set users.per_client=2 --set driver.name=builtin --set "controller.results=$T_TMP/results")
CAPTURING=
cleanup() {
	[[ -n $CAPTURING ]] && "$LAB_SH" capture srv stop >/dev/null 2>&1
	"$LAB_SH" srv-conf >/dev/null 2>&1
	on ctl "${PVT[@]}" "$PV" "${P[@]}" cleanup --leave >/dev/null 2>&1
	rm -rf "$T_TMP"
}
trap cleanup EXIT
chmod 0755 "$T_TMP"
# alone SRC DST KIND: the workload SRC with KIND's weight 100 and every other kind's 0, as DST
alone() {
	python3 - "$@" <<'EOF' 2>"$T_TMP/py" || fail "$2: $(tail -n 1 "$T_TMP/py")"
import sys
out, kind = [], None
for line in open(sys.argv[1]):
    if line.startswith("  - commands: "):
        kind = line.split(": ", 1)[1].strip()
    elif line.startswith("    weight: ") and kind is not None:
        line = "    weight: %s\n" % ("100" if kind == sys.argv[3] else "0")
    elif not line.startswith(" "):
        kind = None
    out.append(line)
open(sys.argv[2], "w").write("".join(out))
EOF
}
# captured ID WORKLOAD RATE WHAT: WORKLOAD run by 4 users for 5 s as run ID, captured on srv
# into $T_TMP/ID.pcap, whole
captured() {
	"$LAB_SH" capture srv start "$T_TMP/$1.pcap" || fail "tcpdump on srv did not start"
	CAPTURING=1
	pv "${P[@]}" --set "load.workload=$2" --set "load.rate=$3" --json run --id "$1" --min-users 4 --max-users 4 --step 1 --duration 5 --warmup 0 --watch 0
	expect_rc 0 "run with $4"
	CAPTURING=
	"$LAB_SH" capture srv stop 2>/dev/null || fail "the capture of the run with $4 is not whole"
}

pv "${P[@]}" cleanup --leave >/dev/null
pv "${P[@]}" prepare
expect_rc 0 "prepare lab pvreplay"
"$LAB_SH" srv-conf 'smbd profiling level=on' >/dev/null || fail "srv-conf: profiling on"

# ---- 1. the capture, learned ------------------------------------------------------------------
echo "  1. the built-in driver's load, captured and learned" >&2
"$LAB_SH" capture srv start "$T_TMP/cap.pcap" || fail "tcpdump on srv did not start"
CAPTURING=1
pv "${P[@]}" --set load.rate=20000 run --id cap --min-users 4 --max-users 4 --step 1 --duration 8 --warmup 0 --watch 0
expect_rc 0 "the captured run"
CAPTURING=
"$LAB_SH" capture srv stop 2>/dev/null || fail "the capture is not whole (lab.sh capture srv stop)"
pv --json learn "$T_TMP/cap.pcap" -o "$T_TMP/w.yaml"
expect_rc 0 "learn -o"
printf '%s\n' "$OUT" >"$T_TMP/learn.json"
[[ -s $T_TMP/w.yaml ]] || fail "learn -o wrote no workload"

# ---- 2. replayed ------------------------------------------------------------------------------
echo "  2. replayed with load.workload" >&2
pv "${P[@]}" --set "load.workload=$T_TMP/w.yaml" run --dry-run --id dry --min-users 4 --max-users 4 --step 1
expect_rc 0 "run --dry-run with load.workload"
expect_out "^run: would replay the [0-9]+ kinds of $T_TMP/w.yaml \(load.workload\) as the scenario 'learned', [0-9]+ activities a user-hour(, each user logging off and on again [0-9.e+]+ times an hour)?$"
# paced as the capture: its think times' quantiles and its gaps within an activity written
for k in think within; do
	grep -Eq "^  $k: \{median: [0-9.e+-]+, p95: [0-9.e+-]+, quantiles: \{0: [0-9.e+-]+, (.*, )?5: .*, 100: [0-9.e+-]+\}\}" "$T_TMP/w.yaml" ||
		fail "w.yaml: activity.$k has no quantiles: $(grep "^  $k:" "$T_TMP/w.yaml")"
done
# the capture's opens to read or edit with a lease (w.yaml's files.opens): the rest made without
leased=$(sed -n 's/^  opens: {of: [0-9]*, leased: \([0-9.e+-]*\)}.*/\1/p' "$T_TMP/w.yaml")
[[ -n $leased ]] || fail "w.yaml: no files.opens: $(grep -A3 '^files:' "$T_TMP/w.yaml")"
expect_out "^run: would open $(awk -v l="$leased" 'BEGIN { printf "%.3g", 100 - l }')% of the documents it reads or edits without a lease, as the capture's client did \(files.opens\)$"
expect_out "^run: would pace the learned activities as the capture's: each due its kind's length and a think time \(from [0-9.e+-]+ s to [0-9.e+-]+ s, the capture's\) after the last began, scaled to the rate$"
profile() { on srv smbstatus --profile 2>/dev/null | sed -n 's/^smb2_\([a-z_]*\)_count: *\([0-9]*\)$/\1 \2/p'; }
profile >"$T_TMP/p0"
[[ -s $T_TMP/p0 ]] || probe_failed "smbstatus --profile on srv printed no SMB2 count"
"$LAB_SH" capture srv start "$T_TMP/replay.pcap" || fail "tcpdump on srv did not start"
CAPTURING=1
pv "${P[@]}" --set "load.workload=$T_TMP/w.yaml" --json run --id replay --min-users 4 --max-users 4 --step 1 --duration 12 --warmup 0 --watch 0
expect_rc 0 "run with load.workload"
profile >"$T_TMP/p1"
CAPTURING=
"$LAB_SH" capture srv stop 2>/dev/null || fail "the replay's capture is not whole (lab.sh capture srv stop)"
rm -f "$T_TMP/info"
python3 - "$T_TMP" <<'EOF' 2>"$T_TMP/py" || fail "the replay: $(tail -n 1 "$T_TMP/py")"
import json, sys
t = sys.argv[1]
lj = json.load(open(t + "/results/replay/load.json"))
cfg, step = lj["config"], lj["steps"][0]
sc = cfg["scenarios"]
assert sc["learned"]["weight"] == 1 and all(v["weight"] == 0 for k, v in sc.items() if k != "learned"), \
    "the settings: not the learned kind alone: %s" % {k: v["weight"] for k, v in sc.items()}
# the capture's rate of the kinds replayed: those with a file command
file_cmds = {"CREATE", "CLOSE", "FLUSH", "READ", "WRITE", "LOCK", "IOCTL", "QUERY_DIRECTORY",
             "CHANGE_NOTIFY", "QUERY_INFO", "SET_INFO"}
rate, kinds = 0.0, []
for line in open(t + "/w.yaml"):
    if line.startswith("  - commands: "):
        kinds.append(set(w.rstrip("+").split("(")[0] for w in line.split()[2:]))  # CREATE(OPEN_IF): CREATE
    elif line.startswith("    per_user_hour: ") and kinds[-1] & file_cmds:
        rate += float(line.split()[1])
assert cfg["rate"] == max(1, min(36000000, int(rate + 0.5))), "rate %s, the workload's %.1f" % (cfg["rate"], rate)
k = step["kinds"]
assert k["learned"]["started"] >= 20, "only %d learned scenarios started" % k["learned"]["started"]
assert k["learned"]["errors"] == 0, "%d learned scenarios in error" % k["learned"]["errors"]
others = {n: v["started"] for n, v in k.items() if n != "learned" and v["started"]}
assert not others, "other kinds started: %s" % others
open(t + "/info", "w").write("    %d learned scenarios, none in error, at %d per user-hour\n" % (k["learned"]["started"], cfg["rate"]))
EOF
cat "$T_TMP/info" >&2 2>/dev/null

# ---- 2b. the users' logons, at the workload's rate --------------------------------------------
# the captured driver logs each user on once: none again learned (the median 0, no user with
# two), so the replay makes none; the workload's users.logons_again_per_hour made 3600 (as a
# person edits it): 4 users for 8 s log off and on again about 32 times; the step counts them,
# and Samba's profile counts a LOGOFF and a logon's SESSION_SETUPs (NTLM: two) for each
echo "  2b. the users' logons at the workload's rate" >&2
grep -q '^  logons_again_per_hour: {median: 0, users: 0}' "$T_TMP/w.yaml" ||
	fail "w.yaml: logons again learned of a capture whose users logged on once: $(grep logons_again "$T_TMP/w.yaml")"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["steps"][0]; sys.exit(s["logons_again"] != 0)' \
	"$T_TMP/results/replay/load.json" || fail "the replay of w.yaml logged users on again"
sed -E '/^  logons_again_per_hour:/s/median: [^,]+,/median: 3600,/' "$T_TMP/w.yaml" >"$T_TMP/w2.yaml"
grep -q '^  logons_again_per_hour: {median: 3600,' "$T_TMP/w2.yaml" || fail "w2.yaml: the logons' median not set"
pv "${P[@]}" --set "load.workload=$T_TMP/w2.yaml" run --dry-run --id dry2 --min-users 4 --max-users 4 --step 1
expect_rc 0 "run --dry-run with logons_per_hour 3600"
expect_out "^run: would replay .*, each user logging off and on again 3600 times an hour$"
profile >"$T_TMP/p2"
pv "${P[@]}" --set "load.workload=$T_TMP/w2.yaml" run --id relog --min-users 4 --max-users 4 --step 1 --duration 8 --warmup 0 --watch 0
expect_rc 0 "run with logons_per_hour 3600"
profile >"$T_TMP/p3"
rm -f "$T_TMP/info"
python3 - "$T_TMP" <<'EOF' 2>"$T_TMP/py" || fail "the logons: $(tail -n 1 "$T_TMP/py")"
import json, sys
t = sys.argv[1]
step = json.load(open(t + "/results/relog/load.json"))["steps"][0]
prof = lambda f: {l.split()[0]: int(l.split()[1]) for l in open(f) if len(l.split()) == 2}
a, b = prof(t + "/p2"), prof(t + "/p3")
d = {k: b.get(k, 0) - a.get(k, 0) for k in ("sesssetup", "logoff")}
n = step["logons_again"]
# 4 users x 8 s at one a second: 32 on average (a user busy when one falls due waits for it)
assert 10 <= n <= 60, "%d logons again in the step, 32 expected" % n
assert step["connections_dropped"] == 0 and step["reconnected"] == 0, \
    "a logon of the workload's rate counted as a drop: %s" % step
assert d["logoff"] >= n, "Samba counted %d LOGOFFs, the step %d logons again" % (d["logoff"], n)
assert d["sesssetup"] >= 2 * (n + 4), "Samba counted %d SESSION_SETUPs for %d logons (NTLM: two each)" % (d["sesssetup"], n + 4)
open(t + "/info", "w").write("    %d logons again in 8 s of 4 users; Samba: %d LOGOFF, %d SESSION_SETUP\n" % (n, d["logoff"], d["sesssetup"]))
EOF
cat "$T_TMP/info" >&2 2>/dev/null

# ---- 3. as the server counts it --------------------------------------------------------------
echo "  3. the server's count of the replay against the capture's" >&2
rm -f "$T_TMP/info"
python3 - "$T_TMP" <<'EOF' 2>"$T_TMP/py" || fail "the server's mix: $(tail -n 1 "$T_TMP/py")"
import json, sys
t = sys.argv[1]
names = [("create", "CREATE"), ("close", "CLOSE"), ("read", "READ"), ("write", "WRITE"),
         ("getinfo", "QUERY_INFO"), ("find", "QUERY_DIRECTORY"), ("setinfo", "SET_INFO"),
         ("ioctl", "IOCTL"), ("lock", "LOCK"), ("flush", "FLUSH"), ("notify", "CHANGE_NOTIFY")]
prof = lambda f: {l.split()[0]: int(l.split()[1]) for l in open(f) if len(l.split()) == 2}
a, b = prof(t + "/p0"), prof(t + "/p1")
srv = {s: b.get(s, 0) - a.get(s, 0) for s, _ in names}
cap = json.load(open(t + "/learn.json"))["requests"]
cap = {s: cap.get(l, 0) for s, l in names}
ct, st = sum(cap.values()), sum(srv.values())
assert ct > 100 and st > 100, "too few file requests: capture %d, served %d" % (ct, st)
rows = []
for s, l in names:
    c, r = 100.0 * cap[s] / ct, 100.0 * srv[s] / st
    rows.append("%s %.1f/%.1f" % (l, c, r))
    if c > 1:
        assert srv[s] > 0, "%s is %.1f%% of the capture's, and the server served none" % (l, c)
        assert abs(c - r) <= 8, "%s: %.1f%% of the capture's file requests, %.1f%% of the server's" % (l, c, r)
open(t + "/info", "w").write("    capture/server %: " + ", ".join(rows) + "\n")
EOF
cat "$T_TMP/info" >&2 2>/dev/null

# ---- 4. on the wire: learn --check ------------------------------------------------------------
echo "  4. learn --check: the replay's capture against the capture" >&2
pv --json learn "$T_TMP/cap.pcap" --check "$T_TMP/replay.pcap"
[[ $RC == 0 || $RC == 1 ]] || { fail "learn --check: exit $RC (0 or 1 expected)"; show; }
printf '%s\n' "$OUT" >"$T_TMP/check.json"
tshark -r "$T_TMP/replay.pcap" -Y smb2 -T fields -e smb2.cmd -e smb2.flags.response \
	-e smb2.create.disposition -e smb2.ioctl.function -e smb2.find.pattern >"$T_TMP/replay.tshark" 2>"$T_TMP/tshark.err" ||
	probe_failed "tshark -r replay.pcap: $(head -n 1 "$T_TMP/tshark.err")"
for x in cap replay; do
	tshark -r "$T_TMP/$x.pcap" -Y 'smb2.cmd == 5' -T fields -e tcp.stream -e smb2.cmd -e smb2.flags.response \
		-e smb2.msg_id -e smb2.nt_status -e smb2.create.disposition -e smb2.create.oplock -e smb.access_mask \
		-e smb.create_options >"$T_TMP/$x.opens" 2>"$T_TMP/tshark.err" ||
		probe_failed "tshark -r $x.pcap: $(head -n 1 "$T_TMP/tshark.err")"
done
rm -f "$T_TMP/info"
python3 - "$T_TMP" "$RC" <<'EOF' 2>"$T_TMP/py" || fail "learn --check: $(tail -n 1 "$T_TMP/py")"
import collections, json, sys
t, rc = sys.argv[1], int(sys.argv[2])
chk = json.load(open(t + "/check.json"))["check"]
names = ["NEGOTIATE", "SESSION_SETUP", "LOGOFF", "TREE_CONNECT", "TREE_DISCONNECT", "CREATE",
         "CLOSE", "FLUSH", "READ", "WRITE", "LOCK", "IOCTL", "CANCEL", "ECHO", "QUERY_DIRECTORY",
         "CHANGE_NOTIFY", "QUERY_INFO", "SET_INFO", "OPLOCK_BREAK"]
disp = ["SUPERSEDE", "OPEN", "CREATE", "OPEN_IF", "OVERWRITE", "OVERWRITE_IF"]
# Wireshark's count of the replay's file requests, CREATE by disposition, IOCTL by code,
# QUERY_DIRECTORY by its pattern (every name, a wildcard with letters, one name)
parts = collections.Counter()
for line in open(t + "/replay.tshark"):
    f = (line.rstrip("\n").split("\t") + ["", "", "", ""])[:5]
    cmds, flags = f[0].split(","), f[1].split(",")
    dl, il = [x for x in f[2].split(",") if x], [x for x in f[3].split(",") if x]
    pl = f[4].split(",") if f[4] else []
    for cmd, fl in zip(cmds, flags):
        if not cmd:
            continue
        cmd, rsp = int(cmd), fl in ("1", "True")
        code = il.pop(0) if cmd == 11 and il else None
        if rsp or cmd <= 4 or cmd in (12, 13):
            continue
        if cmd == 5:
            d = int(dl.pop(0), 0) if dl else -1
            parts["CREATE (%s)" % disp[d] if 0 <= d < 6 else "CREATE (others)"] += 1
        elif cmd == 11:
            parts["IOCTL (0x%x)" % int(code, 0) if code else "IOCTL (others)"] += 1
        elif cmd == 14:
            p = pl.pop(0) if pl else ""
            parts["QUERY_DIRECTORY (%s)" % ("*" if p in ("", "*", "*.*") else "PATTERN" if any(c in p for c in "*?<>\"") else "NAME")] += 1
        else:
            parts[names[cmd]] += 1
total = sum(parts.values())
assert total > 100, "tshark saw %d file requests in the replay" % total
mix = [r for r in chk["checks"] if r["group"] == "mix" and r["check"] != "total variation"]
assert mix, "no mix rows: %s" % chk["checks"]
for r in mix:
    want = 100.0 * parts.get(r["check"], 0) / total
    assert abs(r["replay"] - want) < 0.01, "%s: learn --check says %.3f%% of the replay, tshark %.3f%%" % (r["check"], r["replay"], want)
    assert r["pass"] == (abs(r["replay"] - r["capture"]) <= 3), "%s: pass is %s at %.2f/%.2f" % (r["check"], r["pass"], r["capture"], r["replay"])
    # the built-in load's capture and its replay: the same commands, none far off (the
    # logons' listings are in both)
    assert r["capture"] <= 1 or abs(r["replay"] - r["capture"]) <= 8, "%s: %.1f%% of the capture, %.1f%% of the replay" % (r["check"], r["capture"], r["replay"])
for k, n in parts.items():
    if 100.0 * n / total > 1:
        assert any(r["check"] == k for r in mix), "%s is %.1f%% of the replay and not checked" % (k, 100.0 * n / total)
# the watches: answered in the replay as in the capture (here, with smbd profiling on, Samba
# 4.17 refuses every watch, OBJECT_NAME_NOT_FOUND: "error"; on the base srv the load closes
# each folder it watched, NOTIFY_CLEANUP), each row's verdict its 3-point bound
notify = [r for r in chk["checks"] if r["group"] == "notify"]
assert notify and max(r["capture"] for r in notify) > 50 and all(r["pass"] for r in notify), "notify: %s" % notify
assert all(r["pass"] == (abs(r["replay"] - r["capture"]) <= 3) for r in notify), "notify: %s" % notify
# the opens of a file to read or to edit in place (OPEN, not a stat open nor a folder) that the
# server granted, and those of them that asked a lease or an oplock: each side's share is
# tshark's, the capture's a part of them (the built-in load leases its documents, not the files
# it deletes), and the replay asks as many
def leased(x):
    asked, granted = {}, set()
    for line in open(t + "/" + x + ".opens"):
        f = [[w for w in v.split(",") if w] for v in (line.rstrip("\n").split("\t") + [""] * 9)[:9]]
        stream, cmds, rsps, mids, sts, ds, os, acs, cos = f
        for cmd, rsp, mid in zip(cmds, rsps, mids):
            key = (stream[0], mid)
            if rsp in ("1", "True"):
                st = int(sts.pop(0), 0)
                if cmd == "5":  # (an answer's oplock, which an error has not, is left: a frame of answers has no request)
                    if st != 0x103 and not st & 0xC0000000:
                        granted.add(key)
            elif cmd == "5":
                d, o, a, c = int(ds.pop(0), 0), int(os.pop(0), 0), int(acs.pop(0), 0), int(cos.pop(0), 0)
                if d == 1 and not c & 1 and not (a and not a & ~0x120180):
                    asked[key] = o != 0
    n = [k for k in asked if k in granted]
    return len(n), 100.0 * sum(asked[k] for k in n) / len(n) if n else 0
opens = [r for r in chk["checks"] if r["group"] == "opens"]
(nc, lc), (nr, lr) = leased("cap"), leased("replay")
assert len(opens) == 1 and nc >= 10 and nr >= 10, "the opens row: %s; tshark: %d opens in the capture, %d in the replay" % (opens, nc, nr)
o = opens[0]
assert abs(o["capture"] - lc) < 0.01 and abs(o["replay"] - lr) < 0.01, "opens asking a lease: learn --check says %.2f%% and %.2f%%, tshark %.2f%% of %d and %.2f%% of %d" % (o["capture"], o["replay"], lc, nc, lr, nr)
assert 10 < lc < 90, "the capture's opens asking a lease: %.1f%% of %d (a part expected)" % (lc, nc)
assert o["pass"] and abs(lr - lc) <= 3, "opens asking a lease: %.2f%% of the capture's %d, %.2f%% of the replay's %d" % (lc, nc, lr, nr)
failed = sum(1 for r in chk["checks"] if not r["pass"])
assert failed == chk["failed"] and rc == (1 if failed else 0) and chk["match"] == (failed == 0), \
    "%d checks failed, the JSON says %d, exit %d" % (failed, chk["failed"], rc)
open(t + "/info", "w").write("    %d checks, %d failed (%s); %d mix rows equal tshark's count of %d file requests; opens asking a lease %.1f%% of %d, replayed %.1f%% of %d\n" % (
    len(chk["checks"]), failed, ", ".join(r["check"] for r in chk["checks"] if not r["pass"]), len(mix), total, lc, nc, lr, nr))
EOF
cat "$T_TMP/info" >&2 2>/dev/null
pv learn "$T_TMP/cap.pcap" --check "$T_TMP/w.yaml"
expect_rc 3 "learn --check on a file that is not a capture"
grep -qF -- "the replay's capture (--check $T_TMP/w.yaml)" <<<"$ERR" || { fail "learn --check on a YAML file: the error does not name --check"; show; }

# ---- 7. an IOCTL's code, learned and sent again ----------------------------------------------
# the committed smbclient session (tests/learn/captures/lab-smbclient.pcap): its referral on
# connect (FSCTL_DFS_GET_REFERRALS) is a kind of its own, IOCTL(REFERRAL); replayed alone (its
# weight the only one), the replay's capture holds that code's requests (tshark), every one
# answered, and no scenario ends in error though the server may refuse them, as it did in the
# capture
echo "  7. an IOCTL's code learned (smbclient's referral) and sent again" >&2
pv learn "$TOP/tests/learn/captures/lab-smbclient.pcap" -o "$T_TMP/s.yaml"
expect_rc 0 "learn -o of lab-smbclient.pcap"
grep -q '^  - commands: IOCTL(REFERRAL)$' "$T_TMP/s.yaml" || fail "s.yaml: no kind IOCTL(REFERRAL): $(grep -c 'commands:' "$T_TMP/s.yaml") kinds"
alone "$T_TMP/s.yaml" "$T_TMP/s1.yaml" 'IOCTL(REFERRAL)'
captured ioctl "$T_TMP/s1.yaml" 7200 "IOCTL(REFERRAL) alone"
tshark -r "$T_TMP/ioctl.pcap" -Y 'smb2.cmd == 11' -T fields -e smb2.flags.response -e smb2.ioctl.function \
	-e smb2.nt_status >"$T_TMP/ioctl.tshark" 2>"$T_TMP/tshark.err" || probe_failed "tshark -r ioctl.pcap: $(head -n 1 "$T_TMP/tshark.err")"
rm -f "$T_TMP/info"
python3 - "$T_TMP" <<'EOF' 2>"$T_TMP/py" || fail "the IOCTL replay: $(tail -n 1 "$T_TMP/py")"
import collections, json, sys
t = sys.argv[1]
k = json.load(open(t + "/results/ioctl/load.json"))["steps"][0]["kinds"]["learned"]
req, ans = collections.Counter(), collections.Counter()
for line in open(t + "/ioctl.tshark"):
    f = (line.rstrip("\n").split("\t") + ["", ""])[:3]
    if f[0] in ("0", "False"):
        req[int(f[1], 0) if f[1] else -1] += 1
    else:
        ans[f[2]] += 1
assert k["started"] >= 10, "only %d scenarios of IOCTL(REFERRAL)" % k["started"]
assert k["errors"] == 0, "%d scenarios in error" % k["errors"]
assert req[0x60194] >= k["started"] * 9 // 10, "tshark saw %d FSCTL_DFS_GET_REFERRALS for %d scenarios: %s" % (req[0x60194], k["started"], dict(req))
assert set(req) == {0x60194}, "other IOCTL codes sent: %s" % dict(req)
assert sum(ans.values()) >= req[0x60194], "%d answers to %d requests" % (sum(ans.values()), req[0x60194])
open(t + "/info", "w").write("    %d scenarios, none in error: %d FSCTL_DFS_GET_REFERRALS sent, answered %s\n" % (
    k["started"], req[0x60194], ", ".join("%s x%d" % (s, n) for s, n in ans.most_common())))
EOF
cat "$T_TMP/info" >&2 2>/dev/null

# ---- 8. a stat open, learned and made as one ---------------------------------------------------
# the committed smbclient session's stat opens (FILE_READ_ATTRIBUTES alone, by tshark on the
# capture) are learned as CREATE(STAT); its kind of two listings, each with a stat open of the
# folder after it, replayed alone: tshark on srv sees each open of the replay that is not of a
# folder (FILE_DIRECTORY_FILE: the listings, and the users' trees learned at logon) ask
# FILE_READ_ATTRIBUTES alone with no oplock or lease, none open to read, every CREATE answered
# STATUS_SUCCESS, no scenario in error
echo "  8. a stat open learned (smbclient's) and made as one" >&2
tshark -r "$TOP/tests/learn/captures/lab-smbclient.pcap" -Y 'smb2.cmd == 5 && smb2.flags.response == 0' \
	-T fields -e smb.access_mask >"$T_TMP/stat.tshark" 2>"$T_TMP/tshark.err" || probe_failed "tshark -r lab-smbclient.pcap: $(head -n 1 "$T_TMP/tshark.err")"
grep -qx '0x00000080' "$T_TMP/stat.tshark" || fail "lab-smbclient.pcap: tshark sees no stat open: $(sort "$T_TMP/stat.tshark" | uniq -c | tr '\n' ' ')"
STAT_KIND='CREATE QUERY_DIRECTORY+ CLOSE CREATE(STAT) QUERY_INFO CLOSE CREATE QUERY_DIRECTORY+ CLOSE CREATE(STAT) QUERY_INFO CLOSE TREE_DISCONNECT'
grep -qxF "  - commands: $STAT_KIND" "$T_TMP/s.yaml" || fail "s.yaml: no kind '$STAT_KIND': $(grep 'commands:' "$T_TMP/s.yaml")"
alone "$T_TMP/s.yaml" "$T_TMP/s2.yaml" "$STAT_KIND"
captured stat "$T_TMP/s2.yaml" 3600 "the stat opens' kind alone"
tshark -r "$T_TMP/stat.pcap" -Y 'smb2.cmd == 5' -T fields -e smb2.flags.response -e smb.access_mask \
	-e smb2.create.oplock -e smb2.nt_status -e smb.nt.create_options.directory >"$T_TMP/stat.tshark" 2>"$T_TMP/tshark.err" || probe_failed "tshark -r stat.pcap: $(head -n 1 "$T_TMP/tshark.err")"
rm -f "$T_TMP/info"
python3 - "$T_TMP" <<'EOF' 2>"$T_TMP/py" || fail "the stat opens' replay: $(tail -n 1 "$T_TMP/py")"
import collections, json, sys
t = sys.argv[1]
k = json.load(open(t + "/results/stat/load.json"))["steps"][0]["kinds"]["learned"]
req, ans, folders = collections.Counter(), collections.Counter(), 0
for line in open(t + "/stat.tshark"):
    f = (line.rstrip("\n").split("\t") + ["", "", "", ""])[:5]
    if f[0] in ("0", "False") and f[4] in ("1", "True"):
        folders += 1
    elif f[0] in ("0", "False"):
        req[(int(f[1], 0) if f[1] else -1, int(f[2], 0) if f[2] else -1)] += 1
    else:
        ans[int(f[3], 0) if f[3] else -1] += 1
assert k["started"] >= 10, "only %d scenarios of the stat opens' kind" % k["started"]
assert k["errors"] == 0, "%d scenarios in error" % k["errors"]
stat = req[(0x80, 0)]
# each scenario: two folders listed, two stat opens; every other open is a folder's
assert stat >= 2 * k["started"] * 9 // 10, "tshark saw %d stat opens for %d scenarios: %s" % (stat, k["started"], dict(req))
assert set(req) == {(0x80, 0)}, "opens of a file other than a stat open with no lease (access, oplock): %s" % dict(req)
assert set(ans) == {0}, "CREATEs answered other than STATUS_SUCCESS: %s" % dict(ans)
open(t + "/info", "w").write("    %d scenarios, none in error: %d stat opens (FILE_READ_ATTRIBUTES, no lease), %d opens of folders, every CREATE answered STATUS_SUCCESS\n" % (
    k["started"], stat, folders))
EOF
cat "$T_TMP/info" >&2 2>/dev/null

# ---- 9. a listing's pattern, learned and asked again -------------------------------------------
# the committed smbclient session's del lists one name (tshark: "s2"), learned as
# QUERY_DIRECTORY(NAME); a kind that lists part of a folder, then one name of it, replayed
# alone: tshark on srv sees each scenario's listings ask a pattern with a wildcard and letters
# ("f000*": the names like the folder's first file's) and one name with no wildcard, every
# listing but the users' trees learned at logon ("*") one of these, none answered with a name
# not found, and each name's listing answered with that one name
echo "  9. a listing's pattern learned (smbclient's del: one name) and asked again" >&2
grep -q '^  - commands: .*QUERY_DIRECTORY(NAME)' "$T_TMP/s.yaml" || fail "s.yaml: no kind lists one name (QUERY_DIRECTORY(NAME)): $(grep -o 'QUERY_DIRECTORY[^ ]*' "$T_TMP/s.yaml" | sort | uniq -c | tr '\n' ' ')"
LIST_KIND='CREATE QUERY_DIRECTORY(PATTERN)+ CLOSE CREATE QUERY_DIRECTORY(NAME)+ CLOSE CREATE QUERY_DIRECTORY CLOSE'
python3 - "$T_TMP/s.yaml" "$T_TMP/s3.yaml" "$STAT_KIND" "$LIST_KIND" <<'EOF' 2>"$T_TMP/py" || fail "s3.yaml: $(tail -n 1 "$T_TMP/py")"
import sys
out, kind = [], None
for line in open(sys.argv[1]):
    if line.startswith("  - commands: "):
        kind = line.split(": ", 1)[1].strip()
        if kind == sys.argv[3]:
            line = "  - commands: %s\n" % sys.argv[4]
    elif line.startswith("    weight: ") and kind is not None:
        line = "    weight: %s\n" % ("100" if kind == sys.argv[3] else "0")
    elif line.startswith("    counts: ") and kind == sys.argv[3]:
        line = "    counts: [1, 2, 1, 1, 2, 1, 1, 1, 1]\n    depths: [0, 1, -1]\n"
    elif line.startswith("    depths: ") and kind == sys.argv[3]:
        continue
    elif not line.startswith(" "):
        kind = None
    out.append(line)
assert any(sys.argv[4] in l for l in out), "no kind %s made" % sys.argv[3]
open(sys.argv[2], "w").write("".join(out))
EOF
captured list "$T_TMP/s3.yaml" 3600 "the listings' kind alone"
tshark -r "$T_TMP/list.pcap" -Y 'smb2.cmd == 14' -T fields -e smb2.flags.response -e smb2.msg_id -e tcp.stream \
	-e smb2.find.pattern -e smb2.nt_status -e smb2.filename >"$T_TMP/list.tshark" 2>"$T_TMP/tshark.err" || probe_failed "tshark -r list.pcap: $(head -n 1 "$T_TMP/tshark.err")"
tshark -r "$T_TMP/list.pcap" -Y 'smb2.cmd == 5' -T fields -e smb2.flags.response -e smb2.msg_id -e tcp.stream \
	-e smb2.filename -e smb2.fid >"$T_TMP/list.creates" 2>"$T_TMP/tshark.err" || probe_failed "tshark -r list.pcap: $(head -n 1 "$T_TMP/tshark.err")"
tshark -r "$T_TMP/list.pcap" -Y 'smb2.cmd == 14 && smb2.flags.response == 0' -T fields -e tcp.stream \
	-e smb2.find.pattern -e smb2.fid >"$T_TMP/list.fids" 2>"$T_TMP/tshark.err" || probe_failed "tshark -r list.pcap: $(head -n 1 "$T_TMP/tshark.err")"
pv --json learn "$T_TMP/list.pcap"
expect_rc 0 "learn list.pcap"
printf '%s\n' "$OUT" >"$T_TMP/list.json"
rm -f "$T_TMP/info"
python3 - "$T_TMP" <<'EOF' 2>"$T_TMP/py" || fail "the listings' replay: $(tail -n 1 "$T_TMP/py")"
import collections, json, sys
t = sys.argv[1]
k = json.load(open(t + "/results/list/load.json"))["steps"][0]["kinds"]["learned"]
asked, shapes, status, names = {}, collections.Counter(), collections.Counter(), {}
wild = lambda p: any(c in p for c in "*?<>\"")
for line in open(t + "/list.tshark"):
    f = (line.rstrip("\n").split("\t") + [""] * 6)[:6]
    f = [f[0], f[1] + "/" + f[2]] + f[3:]  # a request by its stream and message id
    if f[0] in ("0", "False"):
        asked[f[1]] = f[2]
        shapes["every name" if f[2] in ("*", "") else "pattern" if wild(f[2]) else "name"] += 1
    else:
        status[int(f[3], 0) if f[3] else -1] += 1
        names[f[1]] = [x for x in f[4].split(",") if x]
assert k["started"] >= 10, "only %d scenarios of the listings' kind" % k["started"]
assert k["errors"] == 0, "%d scenarios in error" % k["errors"]
pat = [p for p in asked.values() if p not in ("*", "") and wild(p) and len(p) > 1]
one = {m: p for m, p in asked.items() if p and not wild(p)}
assert len(pat) >= k["started"] * 9 // 10, "%d listings of a pattern for %d scenarios: %s" % (len(pat), k["started"], dict(shapes))
assert len(one) >= k["started"] * 9 // 10, "%d listings of one name for %d scenarios: %s" % (len(one), k["started"], dict(shapes))
assert 0xC000000F not in status and 0xC0000034 not in status, "listings answered name not found: %s" % dict(status)
seen = [(p, names[m]) for m, p in one.items() if names.get(m)]
assert seen and all(n == [p] for p, n in seen), "a name's listing answered with other names: %s" % [x for x in seen if x[1] != [x[0]]][:3]
# the folder each listing is of (its file id's CREATE, by tshark): the pattern's the user's
# home (depths [0, 1, -1]: its first CREATE at depth 0), the name's a folder of static/ one
# level down (a name of two parts below the home), the third's (every name) the share's root
named, fids, at = {}, {}, collections.Counter()
for line in open(t + "/list.creates"):
    r, mid, stream, name, fid = (line.rstrip("\n").split("\t") + [""] * 5)[:5]
    if r in ("0", "False"):
        named[stream + "/" + mid] = name
    elif fid and stream + "/" + mid in named:
        fids[stream + "/" + fid] = named[stream + "/" + mid]
for line in open(t + "/list.fids"):
    stream, p, fid = (line.rstrip("\n").split("\t") + [""] * 3)[:3]
    if p in ("*", ""):
        continue  # the trees learned at logon
    folder = fids.get(stream + "/" + fid)
    assert folder is not None, "a listing of %s on a file id no CREATE answered: %s" % (p, fid)
    parts = [x for x in folder.split("\\") if x]
    shape = "pattern" if wild(p) else "name"
    at[(shape, len(parts) - 1, parts[1] if len(parts) > 1 else "")] += 1
assert set(at) == {("pattern", 0, ""), ("name", 2, "static")}, \
    "the folders listed by depth (shape, parts below the home, the first): %s" % dict(at)
# learn's count of the listings by where their folder is (its users' homes: their folders
# rp-cliN-uM, each the deepest holding what its user opened) is tshark's: every
# QUERY_DIRECTORY request's folder, the user's own, or below it
where = collections.Counter()
for line in open(t + "/list.fids"):
    stream, p, fid = (line.rstrip("\n").split("\t") + [""] * 3)[:3]
    parts = [x for x in fids.get(stream + "/" + fid, "?").split("\\") if x]
    where["home" if len(parts) == 1 and parts[0].startswith("rp-") else
          "below" if len(parts) > 1 and parts[0].startswith("rp-") else "outside"] += 1
assert where["outside"] >= k["started"] * 9 // 10, \
    "%d listings outside the users' homes (the share's root: depth -1) for %d scenarios" % (where["outside"], k["started"])
learned = json.load(open(t + "/list.json"))["namespace"]["listings_at"]
assert learned == {k: where[k] for k in ("home", "below", "outside")}, \
    "learn's listings by place %s, tshark's %s" % (learned, dict(where))
open(t + "/info", "w").write("    %d scenarios, none in error: listings %s (e.g. %s, %s), answered %s; by depth %s; learn's by place %s\n" % (
    k["started"], dict(shapes), pat[0], next(iter(one.values())),
    ", ".join("0x%08x x%d" % (s, n) for s, n in status.most_common()), dict(at), learned))
EOF
cat "$T_TMP/info" >&2 2>/dev/null

# ---- 6. the namespace learned, built by prepare, replayed on -----------------------------------
# w.yaml's fileset against the homes the captured users had (small.yaml's, read with find on
# srv): no more files a home than they hold, every learned size bucket one their files are in;
# a playbook with no server.fileset and load.workload: w.yaml prepares the learned home (find
# on srv: the shape the fileset says), and the replay on it finds what it opens: no scenario in
# error, and --check's names-not-found row passes (0.5 points at most over the capture's)
echo "  6. the namespace learned: built by prepare, replayed on" >&2
on srv sh -c 'find /srv/provision -path "*/rp-cli[12]-u[12]/*" -type f -printf "%s\n"' >"$T_TMP/sizes" ||
	probe_failed "find on srv"
grep -v '^ *fileset: .*filesets/' "$PLAYBOOK" >"$T_TMP/pb.yaml"
sed -i 's|^\(  fileset:.*\)$|# \1|' "$T_TMP/pb.yaml"
grep -q '^  fileset:' "$T_TMP/pb.yaml" && fail "the playbook copy still names a fileset"
rm -f "$T_TMP/info"
python3 - "$T_TMP" <<'EOF' 2>"$T_TMP/py" || fail "the learned fileset: $(tail -n 1 "$T_TMP/py")"
import re, sys
t = sys.argv[1]
real = [int(x) for x in open(t + "/sizes")]
assert len(real) >= 4 * 70, "srv holds %d files for the 4 users, 280 expected" % len(real)
w = open(t + "/w.yaml").read()
m = re.search(r"^fileset: # .* the median of (\d+) homes \((\d+) files and (\d+) folders seen", w, re.M)
assert m, "w.yaml has no fileset: section"
homes, seen = int(m.group(1)), int(m.group(2))
assert homes == 4, "%d homes learned, the capture's 4 users had one each" % homes
assert 0 < seen <= len(real), "%d files seen in the homes; they hold %d" % (seen, len(real))
static = w[w.index("    static:"):w.index("    volatile:")]
bucket = lambda n: n.bit_length()  # learn's: [2^(k-1), 2^k) is k, 0 is 0
have = {bucket(n) for n in real}
for lo, hi in re.findall(r"size: \[(\d+), (\d+)\]", static):
    assert bucket(int(lo)) == bucket(int(hi)) and bucket(int(lo)) in have, \
        "a learned size bucket %s..%s that no file of the homes is in (theirs: %s)" % (lo, hi, sorted(have))
files = int(re.search(r"^      files: (\d+)", static, re.M).group(1))
folders = [int(x) for x in re.search(r"folders: \[([\d, ]+)\]", static).group(1).split(",")] if "folders:" in static else []
per_home = files
for f in folders:
    per_home *= f
assert per_home <= 70, "the learned home holds %d files in static/, the real one 70" % per_home
open(t + "/shape", "w").write("%d %s\n" % (files, " ".join(map(str, folders))))
open(t + "/info", "w").write("    learned: %d homes, %d files seen (srv: %d), static/ %s x %d files\n" % (homes, seen, len(real), folders, files))
EOF
cat "$T_TMP/info" >&2 2>/dev/null
mkdir -p "$TOP/build/test-output/t_replay" && cp "$T_TMP/w.yaml" "$TOP/build/test-output/t_replay/w.yaml"
N=(-p "$T_TMP/pb.yaml" --set lab=pvreplay --set "users.name_template=rp-{client}-u{n}"
	--set users.per_client=2 --set driver.name=builtin --set "controller.results=$T_TMP/results"
	--set "load.workload=$T_TMP/w.yaml")
pv "${P[@]}" cleanup --leave >/dev/null
pv "${N[@]}" --json prepare
expect_rc 0 "prepare with the learned fileset (no server.fileset)"
grep -q '"fileset": *"learned"' <<<"$OUT" || { fail "prepare's JSON does not name the fileset 'learned'"; show; }
read -r files folders <"$T_TMP/shape"
for u in rp-cli1-u1 rp-cli2-u2; do
	got=$(on srv sh -c "find /srv/provision/*/$u/static -type f | wc -l")
	want=$files
	for f in $folders; do want=$((want * f)); done
	[[ $got == "$want" ]] || fail "$u: static/ holds $got files on srv, the learned fileset $want"
	on srv test -d "/srv/provision/fsroot1/$u/new" -o -d "/srv/provision/fsroot2/$u/new" || fail "$u: no new/ on srv"
	[[ $(on srv sh -c "ls /srv/provision/*/$u/volatile | wc -l") -ge 1 ]] || fail "$u: no volatile/ file on srv"
done
"$LAB_SH" capture srv start "$T_TMP/ns.pcap" || fail "tcpdump on srv did not start"
CAPTURING=1
pv "${N[@]}" --json run --id ns --min-users 4 --max-users 4 --step 1 --duration 8 --warmup 0 --watch 0
expect_rc 0 "the replay on the learned home"
CAPTURING=
"$LAB_SH" capture srv stop 2>/dev/null || fail "the capture of the replay on the learned home is not whole"
pv --json learn "$T_TMP/cap.pcap" --check "$T_TMP/ns.pcap"
[[ $RC == 0 || $RC == 1 ]] || { fail "learn --check of the replay on the learned home: exit $RC"; show; }
printf '%s\n' "$OUT" >"$T_TMP/nscheck.json"
rm -f "$T_TMP/info"
python3 - "$T_TMP" <<'EOF' 2>"$T_TMP/py" || fail "the replay on the learned home: $(tail -n 1 "$T_TMP/py")"
import json, sys
t = sys.argv[1]
k = json.load(open(t + "/results/ns/load.json"))["steps"][0]["kinds"]["learned"]
assert k["started"] >= 10 and k["errors"] == 0, "learned scenarios: %d started, %d in error" % (k["started"], k["errors"])
rows = [r for r in json.load(open(t + "/nscheck.json"))["check"]["checks"] if "not found" in r["check"]]
assert rows, "learn --check has no names-not-found row"
for r in rows:
    assert r["pass"], "learn --check: %s: capture %s, replay %s" % (r["check"], r["capture"], r["replay"])
open(t + "/info", "w").write("    on the learned home: %d learned scenarios, none in error; %s\n" % (
    k["started"], "; ".join("%s %.2f/%.2f" % (r["check"], r["capture"], r["replay"]) for r in rows)))
EOF
cat "$T_TMP/info" >&2 2>/dev/null
pv "${N[@]}" cleanup --leave >/dev/null

# ---- 5. bad input -----------------------------------------------------------------------------
echo "  5. bad input" >&2
printf 'kinds:\n  - {commands: CREATE JUMP CLOSE, weight: 50}\n' >"$T_TMP/bad.yaml"
bad() {
	local what=$1 want=$2
	shift 2
	pv "${P[@]}" "$@" run --id bad --min-users 4 --max-users 4 --step 1 --duration 5 --warmup 0 --watch 0
	expect_rc 3 "$what"
	grep -qF -- "$want" <<<"$ERR" || { fail "$what: the error does not say '$want'"; show; }
	[[ ! -e $T_TMP/results/bad ]] || fail "$what: a run folder was made"
}
bad "a workload with an unknown command" "load.workload (write one with \`provision learn CAPTURE -o FILE\`): $T_TMP/bad.yaml:2:16: 'kinds.0.commands' has 'JUMP', which is no SMB2 command" --set "load.workload=$T_TMP/bad.yaml"
bad "a workload that is not there" "load.workload (write one with \`provision learn CAPTURE -o FILE\`): cannot open learned workload '$T_TMP/none.yaml'" --set "load.workload=$T_TMP/none.yaml"
bad "the learned kind without a workload" "'load.scenarios.learned' has a weight, but there is no load.workload" --set load.scenarios.learned.weight=1
printf 'name: newonly\nparts:\n  new:\n    folders: [2]\n' >"$T_TMP/newonly.yaml"
bad "a workload that opens what the users' trees lack" "load.workload $T_TMP/w.yaml opens what the users' trees lack (server.fileset $T_TMP/newonly.yaml has no files in static/ to read" \
	--set "load.workload=$T_TMP/w.yaml" --set "server.fileset=$T_TMP/newonly.yaml"

finish
