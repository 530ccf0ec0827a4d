#!/usr/bin/env bash
# bench/mix.sh: the SMB2 operation mix of the built-in driver as the server counts it, against
# FSCT HomeFolders' published one (Nutanix TN-2117, "Nutanix Files Performance", its FSCT
# section: create 22, close 19, read 14, query_info 13, query_directory 10, write 7 %, the rest
# 15), on the lab (lab 'pvmx': USERS users per client on the office-sized fileset
# playbooks/filesets/homefolders.yaml, prepared here and cleaned up at the end).
#
# The server's own counts: Samba's profile (smbd is built with it; 'smbd profiling level = on'
# on srv, read with smbstatus --profile). To count the load alone, without the logons and the
# tree listings every run starts with, two runs of the same users, rate and seed are made, a
# short one (SHORT seconds) and a long one (LONG), and the server's counts of the short are
# taken from those of the long: what is left is LONG - SHORT seconds of load (each run's
# schedules start afresh from the seed, so the two begin alike). The driver's own counts
# (load.json's ops, every interval: no warm-up) are taken the same way, and shown beside. The
# long run's own counts are shown too: the whole step as a sceptic counts it, logons and
# everything the users do before their first scenario included.
# Environment: USERS (default 20 per client), RATE (3310: 10 x FSCT's), SHORT (10), LONG (70),
# FILESET (default playbooks/filesets/homefolders.yaml), KEEP (lab pvmx stays prepared).
. "$(dirname "$0")/lib.sh"

USERS=${USERS:-20}
RATE=${RATE:-3310}
SHORT=${SHORT:-10}
LONG=${LONG:-70}
FILESET=${FILESET:-$TOP/playbooks/filesets/homefolders.yaml}
"$LAB_SH" status >/dev/null || { echo "bench: the lab is not up (make lab-up)" >&2; exit 1; }
P=(-p "$PLAYBOOK" --set lab=pvmx --set "users.name_template=mx-{client}-u{n}"
	--set "users.per_client=$USERS" --set "server.fileset=$FILESET" --set driver.name=builtin
	--set "load.rate=$RATE" --set "controller.results=$BT/results")
prepare_lab pvmx "$LAB_SH" srv-conf
"$LAB_SH" srv-conf 'smbd profiling level=on' >/dev/null || { echo "bench: srv-conf failed" >&2; exit 1; }

# the server's SMB2 counts now: "command count" lines
profile() { on srv smbstatus --profile 2>/dev/null | sed -n 's/^smb2_\([a-z_]*\)_count: *\([0-9]*\)$/\1 \2/p'; }

# one ID SECONDS: a run of every user for SECONDS; the server's counts before and after
one() {
	profile >"$BT/$1.p0"
	on ctl "$PV" "${P[@]}" --json run --id "$1" --min-users $((2 * USERS)) \
		--max-users $((2 * USERS)) --step 1 --duration "$2" --warmup 0 >"$BT/$1.json" \
		2>"$BT/$1.err" || { echo "bench: run $1 failed:" >&2; tail -5 "$BT/$1.err" >&2; exit 1; }
	profile >"$BT/$1.p1"
}
one short "$SHORT"
one long "$LONG"
[[ -s $BT/long.p1 ]] || { echo "bench: smbstatus --profile printed no SMB2 count" >&2; exit 1; }

python3 - "$BT" "$((LONG - SHORT))" "$((2 * USERS))" "$RATE" "$SHORT" <<'EOF'
import json, sys
bt, secs, users, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def prof(f):
    return {l.split()[0]: int(l.split()[1]) for l in open(f) if len(l.split()) == 2}
def server(run):
    a, b = prof("%s/%s.p0" % (bt, run)), prof("%s/%s.p1" % (bt, run))
    return {k: b[k] - a.get(k, 0) for k in b}
def driver(run):
    d = json.load(open("%s/results/%s/load.json" % (bt, run)))
    return d["steps"][0]["ops"], d["steps"][0]
s = {k: server("long").get(k, 0) - server("short").get(k, 0) for k in server("long")}
dl, stl = driver("long")
ds, sts = driver("short")
d = {k: dl[k] - ds.get(k, 0) for k in dl}
# Samba's profile names (source3/smbd/smb2_server.c): find is QUERY_DIRECTORY, getinfo
# QUERY_INFO, setinfo SET_INFO, notify CHANGE_NOTIFY
rows = [("create", "create", 22), ("close", "close", 19), ("read", "read", 14),
        ("getinfo", "query_info", 13), ("find", "query_directory", 10), ("write", "write", 7),
        ("setinfo", "set_info", None), ("ioctl", "ioctl", None), ("notify", "change_notify", None),
        ("lock", "lock", None), ("flush", "flush", None), ("break", "oplock_break", None),
        ("sesssetup", "session_setup", None), ("tcon", "tree_connect", None),
        ("logoff", "logoff", None), ("cancel", "cancel", None), ("keepalive", "echo", None)]
w = server("long")  # the whole step: logons, what the users learn, the load
st = sum(v for v in s.values() if v > 0)
wt = sum(v for v in w.values() if v > 0)
dt = sum(v for v in d.values() if v > 0)
print("bench: the SMB2 mix of %d users at %d scenarios per user-hour: the whole %d s step as the"
      " server counted it (logons included), and %d s of load alone (the long run less the short"
      " one)" % (users, rate, secs + int(sys.argv[5]), secs))
print("  the long run: %.2f scenarios/s (expected %.2f), overload %.2f%%, errors %d" % (
    stl["scen_per_s"], stl["expected_per_s"], stl["all"]["overload_pct"], stl["all"]["errors"]))
print("  %-16s %8s %6s %6s  %8s %6s %6s  %8s %6s  %5s" % (
    "command", "step", "%", "-FSCT", "load", "%", "-FSCT", "driver", "%", "FSCT"))
rest_w = rest_s = rest_d = 100.0
worst_w = worst_s = 0.0
for sk, dk, f in rows:
    wv, sv, dv = w.get(sk, 0), s.get(sk, 0), d.get(dk, 0)
    wp = 100.0 * wv / wt if wt else 0
    sp = 100.0 * sv / st if st else 0
    dp = 100.0 * dv / dt if dt else 0
    if f is not None:
        rest_w -= wp
        rest_s -= sp
        rest_d -= dp
        worst_w = max(worst_w, abs(wp - f))
        worst_s = max(worst_s, abs(sp - f))
    print("  %-16s %8d %5.1f%% %6s  %8d %5.1f%% %6s  %8d %5.1f%%  %5s" % (
        dk, wv, wp, "%+.1f" % (wp - f) if f is not None else "", sv, sp,
        "%+.1f" % (sp - f) if f is not None else "", dv, dp, f if f is not None else ""))
print("  %-16s %8s %5.1f%% %+6.1f  %8s %5.1f%% %+6.1f  %8s %5.1f%%  %5d" % (
    "the rest", "", rest_w, rest_w - 15, "", rest_s, rest_s - 15, "", rest_d, 15))
print("  the furthest named command from FSCT's share: the whole step %.1f points, the load"
      " alone %.1f (the aim: 3 or less)" % (worst_w, worst_s))
print("  requests: server %d, driver %d (%+.2f%%)" % (st, dt, 100.0 * (st - dt) / dt if dt else 0))
EOF
