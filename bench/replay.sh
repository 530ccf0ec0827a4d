#!/usr/bin/env bash
# bench/replay.sh: how closely a learned workload's replay (load.workload) matches the capture it
# was learned from, as the server counts it, on the lab (lab 'pvrp': USERS users per client on
# the office-sized fileset, prepared here and cleaned up at the end).
#
#   1. The capture: tcpdump in srv's namespace while SOURCE makes traffic: 'builtin' (the
#      built-in driver's FSCT-like load, every user, DURATION s at RATE scenarios per
#      user-hour) or 'smbclient' (each user's smbclient from its client, a session of
#      listings, gets, puts and deletes, ROUNDS times, PAUSE seconds apart: a script's
#      user with no pause drives the server as fast as it answers, and its replay at the
#      captured rate is then at the server's knee), or 'smbtorture' (`smbtorture
#      smb2.bench.path-contention-shared` from ctl, once as rp-cli1-u1 and once as rp-cli2-u1 at
#      the same time, each one connection opening and closing the share's root for DURATION s:
#      a client we did not write, replayed by two users, one a client).
#   2. provision learn -o: the workload.
#   3. The replay: `run` with load.workload set, every user, at the learned rate times SPEED.
#      Samba's profile ('smbd profiling level = on', smbstatus --profile) counts what srv
#      served; as in bench/mix.sh, a SHORT run's counts are taken from a LONG one's, so that
#      what is left is the load alone, without the logons and the listing of the users' trees.
#
# The match is on the commands a user's file work sends (what a replay makes: CREATE, CLOSE,
# READ, WRITE, QUERY_INFO, QUERY_DIRECTORY, SET_INFO, IOCTL, LOCK, FLUSH, CHANGE_NOTIFY), each
# as a share of them: the capture's by learn's count, the replay's by the server's. The issue's
# bounds: every command above 1% within 3 points, the total-variation distance at most 0.05.
# Then the same on the wire: the long replay is captured too, and provision learn --check reads
# it against the capture with every bound of issue 29 (mix, rates, gaps, sizes, status).
#   4. With SCALES (default "1"; "1 10 100": the issue's table), the replay of 3 made by that
#      many times the captured users, each the same way (a short run taken from a long one),
#      and a table: the users, the activities a second against those expected, the overload,
#      the mix's total variation and largest difference, the file requests a user-hour the
#      server served against the capture's, and where the server stops carrying the load (the
#      knee: overload over 1%). The lab is prepared for the largest scale.
# Environment: SOURCE (builtin), USERS (5 per client), RATE (3310), DURATION (40), ROUNDS (20),
# PAUSE (0), SPEED (1), SHORT (10), LONG (40), SCALES (1), FILESET, SRV_LIMIT (srv's Samba held to that % of
# one CPU for the replays: a knee within the scales), KEEP (lab pvrp stays prepared), OUT (a
# folder the capture, the workload and learn's JSON are copied to), CAPTURE (a capture made
# before, of SOURCE: learned and replayed, none made).
. "$(dirname "$0")/lib.sh"

SOURCE=${SOURCE:-builtin}
USERS=${USERS:-5}
RATE=${RATE:-3310}
DURATION=${DURATION:-40}
ROUNDS=${ROUNDS:-20}
PAUSE=${PAUSE:-0}
SPEED=${SPEED:-1}
SHORT=${SHORT:-10}
LONG=${LONG:-40}
SCALES=${SCALES:-1}
MAXS=$(printf '%s\n' $SCALES | sort -n | tail -1)
FILESET=${FILESET:-$TOP/playbooks/filesets/homefolders.yaml}
"$LAB_SH" status >/dev/null || { echo "bench: the lab is not up (make lab-up)" >&2; exit 1; }
chmod 0755 "$BT"
P=(-p "$PLAYBOOK" --set lab=pvrp --set "users.name_template=rp-{client}-u{n}"
	--set "users.per_client=$((USERS * MAXS))" --set "server.fileset=$FILESET" --set driver.name=builtin
	--set "controller.results=$BT/results")
N=$((2 * USERS))
[[ $SOURCE != smbtorture ]] || N=2 # its two accounts
prepare_lab pvrp "$LAB_SH" srv-conf
"$LAB_SH" srv-conf 'smbd profiling level=on' >/dev/null || { echo "bench: srv-conf failed" >&2; exit 1; }

# ---- 1. the capture ----
if [[ -n ${CAPTURE:-} ]]; then
	cp "$CAPTURE" "$BT/cap.pcap"
else
	"$LAB_SH" capture srv start "$BT/cap.pcap" || exit 1
	CAPTURING=srv
	case $SOURCE in
	builtin)
		on ctl "$PV" "${P[@]}" --set "load.rate=$RATE" run --id cap --min-users "$N" --max-users "$N" \
			--step 1 --duration "$DURATION" --warmup 0 --watch 0 >"$BT/cap.out" 2>&1 ||
			{ echo "bench: the captured run failed:" >&2; tail -5 "$BT/cap.out" >&2; exit 1; }
		;;
	smbclient)
		# each user's smbclient on its client: its password in an auth file (never on a command
		# line), its home found on fsroot1 or fsroot2
		for c in cli1 cli2; do
			for u in $(seq "$USERS"); do
				(
					user=rp-$c-u$u
					(umask 077 && printf 'username = %s\npassword = %s\ndomain = LAB\n' "$user" "$(cat "$LAB/user.pass")" >"$BT/auth-$user")
					share=fsroot1
					mkdir -p "$BT/got-$user"
					out=$(on "$c" smbclient -N -A "$BT/auth-$user" //srv/fsroot1 -c "cd $user" 2>&1 || true)
					[[ $out != *NT_STATUS* ]] || share=fsroot2
					for r in $(seq "$ROUNDS"); do
						[[ $PAUSE == 0 || $r == 1 ]] || printf '!sleep %s\n' "$PAUSE"
						printf 'lcd %s\ncd %s\nls\ncd static/d%02d/d%02d\nls\nprompt\nmget f000*\ncd ../../../new\nput /etc/services s%s\nls\nallinfo s%s\ndel s%s\ncd ..\nls volatile/*\ncd ..\n' \
							"$BT/got-$user" \
							"$user" $((r % 6 + 1)) $((r % 4 + 1)) "$r" "$r" "$r"
					done | on "$c" smbclient -N -A "$BT/auth-$user" "//srv/$share" >"$BT/smbc-$user.out" 2>&1
				) &
			done
		done
		wait
		grep -l NT_STATUS_ "$BT"/smbc-*.out >/dev/null 2>&1 &&
			echo "bench: smbclient said: $(grep -h NT_STATUS_ "$BT"/smbc-*.out | sort | uniq -c | sort -rn | head -3 | tr '\n' ' ')" >&2
		;;
	smbtorture)
		# each user's password in an auth file, never on a command line
		for user in rp-cli1-u1 rp-cli2-u1; do
			(umask 077 && printf 'username = %s\npassword = %s\ndomain = LAB\n' "$user" "$(cat "$LAB/user.pass")" >"$BT/auth-$user")
			on ctl smbtorture //198.18.0.20/fsroot1 -A "$BT/auth-$user" smb2.bench.path-contention-shared \
				--option=torture:nprocs=1 --option=torture:timelimit="$DURATION" >"$BT/torture-$user.out" 2>&1 &
		done
		wait -n && wait -n || { echo "bench: smbtorture failed:" >&2; tail -3 "$BT"/torture-*.out >&2; exit 1; }
		;;
	*) echo "bench: SOURCE is builtin, smbclient or smbtorture" >&2; exit 2 ;;
	esac
	CAPTURING=
	"$LAB_SH" capture srv stop || { echo "bench: the capture is not whole" >&2; exit 1; }
fi

# ---- 2. learned ----
"$PV" --json learn "$BT/cap.pcap" -o "$BT/w.yaml" >"$BT/learn.json" 2>"$BT/learn.err" ||
	{ echo "bench: learn failed:" >&2; tail -3 "$BT/learn.err" >&2; exit 1; }
# at the capture's rate of the kinds replayed (what load.workload sets), or SPEED times it
RATE_SET=()
if [[ $SPEED != 1 ]]; then
	r=$(awk '/^  - commands:/ { k = 1 } k && /per_user_hour:/ { s += $2 } END { printf "%d", s * '"$SPEED"' + 0.5 }' "$BT/w.yaml")
	RATE_SET=(--set "load.rate=$(( r > 36000000 ? 36000000 : r < 1 ? 1 : r ))")
fi

[[ -z ${OUT:-} ]] || { mkdir -p "$OUT" && cp "$BT/cap.pcap" "$BT/w.yaml" "$BT/learn.json" "$OUT/"; }
# SRV_LIMIT: srv's Samba held to that % of one CPU for the replays (lab.sh srv-limit), so that
# the scales reach the knee on a lab whose server would carry them all
if [[ -n ${SRV_LIMIT:-} ]]; then
	"$LAB_SH" srv-limit "$SRV_LIMIT" >/dev/null || { echo "bench: srv-limit $SRV_LIMIT failed" >&2; exit 1; }
	SRV_LIMITED=1
fi

# ---- 3. the replay ----
profile() { on srv smbstatus --profile 2>/dev/null | sed -n 's/^smb2_\([a-z_]*\)_count: *\([0-9]*\)$/\1 \2/p'; }
# one ID SECONDS USERS: a replay by USERS users, Samba's counts before and after
one() {
	profile >"$BT/$1.p0"
	on ctl "$PV" "${P[@]}" --set "load.workload=$BT/w.yaml" "${RATE_SET[@]}" --json run \
		--id "$1" --min-users "$3" --max-users "$3" --step 1 --duration "$2" --warmup 0 \
		--watch 0 >"$BT/$1.json" 2>"$BT/$1.err" ||
		{ echo "bench: replay $1 failed:" >&2; tail -5 "$BT/$1.err" >&2; exit 1; }
	profile >"$BT/$1.p1"
}
for s in $SCALES; do
	[[ $s == "${SCALES%% *}" ]] || rm -rf "$BT/results/short" "$BT/results/long"
	one short "$SHORT" $((N * s))
	# the first scale's long run captured too: learn --check reads it against the capture
	if [[ $s == "${SCALES%% *}" ]]; then
		"$LAB_SH" capture srv start "$BT/replay.pcap" || exit 1
		CAPTURING=srv
	fi
	one long "$LONG" $((N * s))
	if [[ $s == "${SCALES%% *}" ]]; then
		CAPTURING=
		"$LAB_SH" capture srv stop || { echo "bench: the replay's capture is not whole" >&2; exit 1; }
		[[ -z ${OUT:-} ]] || cp "$BT/replay.pcap" "$OUT/"
	fi
	python3 - "$BT" "$SOURCE" $((N * s)) "$s" "$N" "$((LONG - SHORT))" <<'EOF' || exit 1
import json, sys
bt, source, users, scale, cap_users, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
    int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
# Samba's profile names (source3/smbd/smb2_server.c) and learn's
names = [("create", "CREATE"), ("close", "CLOSE"), ("read", "READ"), ("write", "WRITE"),
         ("getinfo", "QUERY_INFO"), ("find", "QUERY_DIRECTORY"), ("setinfo", "SET_INFO"),
         ("ioctl", "IOCTL"), ("lock", "LOCK"), ("flush", "FLUSH"), ("notify", "CHANGE_NOTIFY")]
def prof(f):
    return {l.split()[0]: int(l.split()[1]) for l in open(f) if len(l.split()) == 2}
def server(run):
    a, b = prof("%s/%s.p0" % (bt, run)), prof("%s/%s.p1" % (bt, run))
    return {k: b[k] - a.get(k, 0) for k in b}
lg, sh = server("long"), server("short")
rep = {s: max(lg.get(s, 0) - sh.get(s, 0), 0) for s, _ in names}
cap = json.load(open(bt + "/learn.json"))["requests"]
cap = {s: cap.get(l, 0) for s, l in names}
ct, rt = sum(cap.values()), sum(rep.values())
if not ct or not rt:
    sys.exit("bench: no file commands counted (capture %d, replay %d)" % (ct, rt))
lj = json.load(open(bt + "/results/long/load.json"))
run, rate = lj["steps"][0], lj["config"]["rate"]
print("bench: %s's capture (%d file requests) learned and replayed by %d users at %d activities"
      " per user-hour: %d file requests served in the long run less the short one" % (
          source, ct, users, rate, rt))
print("  the long run: %.2f activities/s (expected %.2f), overload %.2f%%, errors %d" % (
    run["scen_per_s"], run["expected_per_s"], run["all"]["overload_pct"], run["all"]["errors"]))
print("  %-16s %9s %9s %7s" % ("command", "capture%", "replay%", "diff"))
tv, worst = 0.0, 0.0
for s, l in names:
    c, r = 100.0 * cap[s] / ct, 100.0 * rep[s] / rt
    tv += abs(c - r) / 200
    if c > 1 or r > 1:
        worst = max(worst, abs(c - r))
    if c or r:
        print("  %-16s %9.2f %9.2f %+7.2f" % (l, c, r, r - c))
print("  total-variation distance %.3f (bound 0.05); largest difference of a command above 1%%:"
      " %.2f points (bound 3)" % (tv, worst))
print("  verdict: %s" % ("match" if tv <= 0.05 and worst <= 3 else "no match"))
# the scale's row: file requests a user-hour, the server's (the long run less the short one)
# against the capture's
lj_all = json.load(open(bt + "/learn.json"))
cap_secs = lj_all.get("seconds") or 0
cap_uh = ct / cap_users / cap_secs * 3600 if cap_secs else 0
rep_uh = rt / users / secs * 3600 if secs else 0
ov = run["all"]["overload_pct"]
open(bt + "/table", "a").write("  %5dx %6d %9.2f %9.2f %9.2f %7.3f %7.2f %10.0f %10.0f  %s, %s\n" % (
    scale, users, run["scen_per_s"], run["expected_per_s"], ov, tv, worst, cap_uh, rep_uh,
    "mix match" if tv <= 0.05 and worst <= 3 else "mix off",
    "carried" if ov <= 1 else "overloaded: past the knee"))
EOF
done
if [[ $SCALES != 1 ]]; then
	echo "bench: the match at $(echo $SCALES | sed 's/ /, /g') times the captured users ($N):"
	printf '  %6s %6s %9s %9s %9s %7s %7s %10s %10s  %s\n' scale users "act/s" expected \
		"overload%" TV worst "cap req/uh" "srv req/uh" verdict
	cat "$BT/table"
	# the knee: the first scale whose step was overloaded (over 1%), after the last carried
	awk '{ s = $1; sub(/x$/, "", s) } /carried$/ { last = s "x (" $2 " users, " $3 " activities/s)"; next }
		!knee { knee = s "x (" $2 " users, " $3 " of " $4 " activities/s, overload " $5 "%)" }
		END { if (knee) printf "bench: the knee: %s carried, %s not%s\n", (last ? last : "no scale"), knee, srv
			else printf "bench: no knee: every scale carried%s\n", srv }' \
		srv="${SRV_LIMIT:+ (srv held to $SRV_LIMIT% of one CPU)}" "$BT/table"
fi
# on the wire: the replay's capture read as the capture was (learn --check; its status 1 is a
# verdict, not a failure of the bench)
echo "bench: on the wire, provision learn CAPTURE --check REPLAY (the long run's capture: the logons and the listing of the users' trees in it):"
rc=0
"$PV" learn "$BT/cap.pcap" --check "$BT/replay.pcap" >"$BT/check.out" 2>&1 || rc=$?
[[ $rc == 0 || $rc == 1 ]] || { echo "bench: learn --check failed (exit $rc):" >&2; tail -3 "$BT/check.out" >&2; exit 1; }
sed -n '/^learn: the replay /,$p' "$BT/check.out" | grep -v '^provision: error'
exit 0
