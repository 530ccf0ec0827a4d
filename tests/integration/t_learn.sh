#!/usr/bin/env bash
# provision learn on captures made on the lab (tcpdump in srv's namespace), its counts checked
# against Wireshark's dissector (tshark: every SMB2 request and answer by command, compounds
# included):
#   1. an smbclient session mix from ctl (a client we did not write): every request and answer
#      as tshark counts them, each request answered, one connection, nothing lost; its user
#      the account its NTLM logon named, as its hash;
#   1b. smbtorture's smb2.bench.path-contention-shared (another client we did not write, 4
#      connections): the same equality, 99% of its requests answered, no hole read in the
#      capture, its user by its logon;
#   1c. smbtorture's smb2.notify.* (watches answered with changes, cancelled, closed, refused):
#      the watches, those of a whole subtree, each one's answer by its status, those still on,
#      and their median time, as tshark reads them;
#   every lab capture is whole: tcpdump's own count of packets the kernel dropped is 0, or the
#      test fails;
#   2. the built-in driver's own load (2 users on each client, one step): the same equality,
#      99% at least of its requests answered in the capture; its 4 users by their logons
#      (their names nowhere in the output), activities with the gap learned (and --gap), open
#      times, read and write sizes;
#   2b. -o: the learned workload is YAML another parser reads, its figures (users, requests,
#      mix, activities, the gap, the kinds and their weights, sizes, open times) learn's
#      JSON's, each kind's think time and the watches (change notify) too, the weights adding up to 100, no user named in it even with --keep-names, and
#      the file replaced whole;
#   3. the same load encrypted (load.encryption: on): nothing decoded, the encrypted frames
#      counted and said with their share of the SMB bytes, as tshark sees transform headers;
#   4. the captures committed in tests/learn/captures (lab captures, their logon tokens zeroed
#      by tests/learn/scrub.py, cut with editcap: the start of a load, its middle where every
#      stream began before the capture, and one cut to 300 bytes a frame): the same equality,
#      the streams begun midway found again, the cut frames' headers read and the rest said;
#   5. bad input: no capture (3), not a capture (3), a link type not read (3), a capture cut
#      in mid-record (3, what came before it still counted and shown; with -o no workload
#      written), -o into a folder that does not exist (9), no operand or a bad --port (2).
# Everything it makes is in $T_TMP; lab 'pvlearn' is prepared for 2. and 3. and cleaned up.
# LEARN_KEEP=DIR keeps the lab captures there, their logon tokens zeroed (tests/learn/scrub.py):
# how tests/learn/captures was made.
. "$(dirname "$0")/lib.sh"

P=(-p "$PLAYBOOK" --set lab=pvlearn --set "users.name_template=pl-{client}-u{n}"
	--set users.per_client=2 --set driver.name=builtin)
CAPTURING=
cleanup() {
	local f
	[[ -n $CAPTURING ]] && "$LAB_SH" capture srv stop >/dev/null 2>&1
	if [[ -n ${LEARN_KEEP:-} ]]; then
		for f in smbclient builtin; do
			[[ -f $T_TMP/$f.pcap ]] && python3 "$TOP/tests/learn/scrub.py" "$T_TMP/$f.pcap" "$LEARN_KEEP/lab-$f.pcap"
		done
	fi
	on ctl "${PVT[@]}" "$PV" "${P[@]}" cleanup --leave >/dev/null 2>&1
	rm -rf "$T_TMP"
}
trap cleanup EXIT
chmod 0755 "$T_TMP"

# capture_start FILE: tcpdump on srv's interface, port 445, into FILE (lab.sh capture: a
# kernel buffer of 128 MiB, so that a burst of smbtorture's, 80,000 packets in 3 s once srv runs
# at full speed, is not dropped before tcpdump writes it); returns once it listens
capture_start() {
	"$LAB_SH" capture srv start "$1" || fail "tcpdump on srv did not start"
	CAPTURING=1
}
# capture_stop: tcpdump ended, its count of packets said; a capture that lost packets in the
# kernel fails the test (what learn says of a whole capture is what the test asserts: a lossy
# one would only be skipped in part)
capture_stop() {
	CAPTURING=
	"$LAB_SH" capture srv stop 2> >(sed 's/^/    /' >&2) || fail "the capture is not whole (lab.sh capture srv stop)"
}

# tshark_counts FILE: "req CMD N" and "rsp CMD N" lines, by Wireshark's dissector
tshark_counts() {
	tshark -r "$1" -Y smb2 -T fields -e smb2.cmd -e smb2.flags.response 2>"$T_TMP/tshark.err" |
		python3 -c '
import collections, sys
c = collections.Counter()
for line in sys.stdin:
    cmds, flags = (line.rstrip("\n").split("\t") + [""])[:2]
    for cmd, f in zip(cmds.split(","), flags.split(",")):
        if cmd:
            c[("rsp" if f in ("1", "True") else "req", int(cmd))] += 1
for (k, cmd), n in sorted(c.items()):
    print(k, cmd, n)'
}
# ours_counts JSON: the same lines from provision learn --json
ours_counts() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
names = ["NEGOTIATE", "SESSION_SETUP", "LOGOFF", "TREE_CONNECT", "TREE_DISCONNECT", "CREATE",
         "CLOSE", "FLUSH", "READ", "WRITE", "LOCK", "IOCTL", "CANCEL", "ECHO", "QUERY_DIRECTORY",
         "CHANGE_NOTIFY", "QUERY_INFO", "SET_INFO", "OPLOCK_BREAK"]
out = [("req", names.index(k), n) for k, n in d["requests"].items()]
out += [("rsp", names.index(k), n) for k, n in d["responses"].items()]
for k, cmd, n in sorted(out):
    print(k, cmd, n)' "$1"
}
# same_as_tshark WHAT FILE: provision learn's counts of FILE equal tshark's (JSON in OUT)
same_as_tshark() {
	local t o
	pv --json learn "$2"
	expect_rc 0 "learn $1"
	printf '%s\n' "$OUT" >"$T_TMP/learn.json"
	t=$(tshark_counts "$2") || { probe_failed "tshark -r $2: $(head -n 1 "$T_TMP/tshark.err")"; return; }
	o=$(ours_counts "$T_TMP/learn.json")
	[[ -n $t ]] || fail "$1: tshark found no SMB2 in the capture"
	[[ $o == "$t" ]] || fail "$1: provision learn's counts differ from tshark's: $(diff <(echo "$t") <(echo "$o") | head -8 | tr '\n' ' ')"
	echo "    $1: $(grep -c '^req' <<<"$o") commands, $(awk '$1 == "req" { n += $3 } END { print n }' <<<"$o") requests and $(awk '$1 == "rsp" { n += $3 } END { print n }' <<<"$o") answers, as tshark counts them" >&2
}
# jq_ok PYTHON-EXPR WHAT: the JSON in $T_TMP/learn.json as d satisfies it
jq_ok() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[2])); assert eval(sys.argv[1]), {k: v for k, v in d.items() if not isinstance(v, dict)}' "$1" "$T_TMP/learn.json" 2>"$T_TMP/py" ||
		fail "$2: $1: $(tail -n 1 "$T_TMP/py")"
}

# ---- 1. smbclient ----------------------------------------------------------------------------
echo "  1. an smbclient session mix" >&2
pv "${P[@]}" cleanup --leave >/dev/null
pv "${P[@]}" prepare
expect_rc 0 "prepare lab pvlearn"
capture_start "$T_TMP/smbclient.pcap"
smb_n pl-cli1-u1 srv fsroot1 'cd pl-cli1-u1; mkdir lx; cd lx; put /etc/services s1; get s1 /dev/null; ls; allinfo s1; rename s1 s2; del s2; cd ..; rmdir lx; ls; cd ..; ls' >"$T_TMP/smbc.out" ||
	fail "smbclient: $(tail -n 3 "$T_TMP/smbc.out")"
capture_stop
same_as_tshark smbclient "$T_TMP/smbclient.pcap"
jq_ok 'd["connections"] == 1 and d["connections_midway"] == 0 and d["lost_bytes"] == 0 and d["malformed"] == 0' "smbclient: one connection, nothing lost"
jq_ok 'd["matched"] == sum(d["requests"].values()) - d["requests"].get("CANCEL", 0) and d["unanswered"] == 0' "smbclient: every request answered"
jq_ok 'd["requests"]["WRITE"] >= 1 and d["written"] >= 10000 and d["read_got"] >= 10000' "smbclient: the put and the get"
# its user: the account of its NTLM logon, as a hash of LAB\pl-cli1-u1 in lower case
ID=$(python3 -c 'import hashlib; print("ntlm:" + hashlib.sha256(b"lab\\pl-cli1-u1").hexdigest()[:12])')
jq_ok "[(u['id'], u['by'], u['logons']) for u in d['users']] == [('$ID', 'ntlm', 1)] and d['logons'] == 1" "smbclient: one user, LAB\\pl-cli1-u1 hashed"
jq_ok 'd["users"][0]["requests"] >= 50 and d["users"][0]["opens"] >= 10 and d["open_times"]["n"] >= 10 and d["activities"] >= 1' "smbclient: what its user did"
pv learn "$T_TMP/smbclient.pcap"
expect_rc 0 "learn (text)"
expect_out "^learn: .*smbclient.pcap: [0-9]+ frames over [0-9.]+ s, 1 TCP connection to the SMB port \(0 begun before the capture\)$"
expect_out "^  CREATE +[0-9]+ +[0-9.]+$"

# ---- 1b. smbtorture -------------------------------------------------------------------------
echo "  1b. smbtorture smb2.bench.path-contention-shared, 4 connections for 3 s" >&2
printf 'username = %s\npassword = %s\ndomain = LAB\n' pl-cli1-u1 "$(cat "$LAB/user.pass")" >"$T_TMP/auth"
capture_start "$T_TMP/torture.pcap"
on ctl smbtorture //198.18.0.20/fsroot1 -A "$T_TMP/auth" smb2.bench.path-contention-shared \
	--option=torture:nprocs=4 --option=torture:timelimit=3 >"$T_TMP/torture.out" 2>&1 ||
	fail "smbtorture: $(tail -n 3 "$T_TMP/torture.out")"
capture_stop
same_as_tshark smbtorture "$T_TMP/torture.pcap"
# the capture is whole (capture_stop): learn saw no hole in it
jq_ok 'd["holes"] == 0 and d["lost_bytes"] == 0' "smbtorture: a whole capture read without a hole"
jq_ok 'd["connections"] >= 4 and d["malformed"] == 0 and d["requests"]["CREATE"] > 100' "smbtorture: its connections, its opens"
jq_ok 'd["matched"] >= 0.99 * (sum(d["requests"].values()) - d["requests"].get("CANCEL", 0)) and d["unmatched_answers"] <= 0.01 * d["matched"]' "smbtorture: 99% of its requests answered, answers after their requests"
jq_ok "{u['id'] for u in d['users'] if u['by'] == 'ntlm'} == {'$ID'}" "smbtorture: its user, LAB\\pl-cli1-u1 hashed"
# its opens are stat opens (tshark: FILE_READ_ATTRIBUTES alone, FILE_OPEN), learned as such:
# its most frequent kind opens with CREATE(STAT) and closes, nothing else
tshark -r "$T_TMP/torture.pcap" -Y 'smb2.cmd == 5 && smb2.flags.response == 0' -T fields \
	-e smb.access_mask -e smb2.create.disposition >"$T_TMP/torture.access" 2>"$T_TMP/tshark.err" ||
	probe_failed "tshark -r torture.pcap: $(head -n 1 "$T_TMP/tshark.err")"
STATS=$(awk '$1 == "0x00000080" && $2 == 1 { s++ } END { printf "%d of %d", s, NR; exit !(NR > 100 && s * 10 >= NR * 9) }' "$T_TMP/torture.access") ||
	fail "smbtorture: tshark finds $STATS of its CREATEs stat opens"
jq_ok 'set(w.rstrip("+") for w in d["kinds"][0]["commands"].split()) == {"CREATE(STAT)", "CLOSE"}' "smbtorture: its stat opens ($STATS by tshark) learned as CREATE(STAT)"

# ---- 1c. change notify -----------------------------------------------------------------------
echo "  1c. smbtorture smb2.notify.*: watches answered with changes, cancelled, closed, refused" >&2
# smbtorture makes its folder at the share's root: the user may, for this test (an ACL entry on
# srv, taken out after, with the folder)
ROOT1=$(on srv net conf getparm fsroot1 path) && on srv test -d "$ROOT1" || fail "fsroot1's path on srv: $ROOT1"
UID1=$(on srv getent passwd 'LAB\pl-cli1-u1' | cut -d: -f3)
[[ $UID1 =~ ^[0-9]+$ ]] || fail "pl-cli1-u1 is not a user on srv (getent): $UID1"
on srv setfacl -m "u:$UID1:rwx" "$ROOT1" || fail "setfacl on srv's $ROOT1"
capture_start "$T_TMP/notify.pcap"
# smbtorture's own verdict is not this test's: its watches, whatever they find, are (dir's
# recursive ones are of a whole subtree; not smb2.notify.tree: until this Samba's counts are
# the ones it expects, it asks and cancels 20 watches in a loop for 20 s, 650,000 requests
# that tshark then took minutes to read)
on ctl smbtorture //198.18.0.20/fsroot1 -A "$T_TMP/auth" smb2.notify.dir smb2.notify.close \
	smb2.notify.valid-req >"$T_TMP/notify.out" 2>&1 ||
	tail -n 4 "$T_TMP/notify.out" | sed 's/^/    smbtorture: /' >&2
capture_stop
on srv setfacl -x "u:$UID1" "$ROOT1"
on srv rm -rf "$ROOT1/test_notify"
same_as_tshark notify "$T_TMP/notify.pcap"
# each watch's final answer by its status, and the time from its request to it, as Wireshark
# reads them (each message's command, direction, id and status; a request paired with its final
# answer by connection and message id); learn's figure the same
tshark -r "$T_TMP/notify.pcap" -Y smb2 -T fields -e frame.time_epoch -e tcp.stream -e smb2.cmd \
	-e smb2.flags.response -e smb2.msg_id -e smb2.nt_status >"$T_TMP/notify.ts" 2>"$T_TMP/tshark.err" ||
	fail "tshark -r notify.pcap: $(head -n 1 "$T_TMP/tshark.err")"
TREE=$(tshark -r "$T_TMP/notify.pcap" -Y smb2.notify.watch_tree -T fields -e smb2.notify.watch_tree 2>/dev/null | tr ',' '\n' | grep -cE '^(1|True)$')
python3 - "$T_TMP/learn.json" "$T_TMP/notify.ts" "$TREE" <<'PY' || fail "notify: learn's change_notify is not what tshark reads"
import json, statistics, sys
d = json.load(open(sys.argv[1]))["change_notify"]
ends = {0: "changed", 0x10C: "enum_dir", 0x10B: "closed", 0xC0000120: "cancelled"}
want = dict.fromkeys(["changed", "enum_dir", "closed", "cancelled", "error"], 0)
asked, held, watches = {}, [], 0
for line in open(sys.argv[2]):
    t, stream, cmds, resp, mids, sts = (line.rstrip("\n").split("\t") + [""] * 6)[:6]
    for cmd, r, mid, st in zip(cmds.split(","), resp.split(","), mids.split(","), sts.split(",")):
        if cmd != "15":
            continue
        key = (stream, mid)
        if r not in ("1", "True"):
            watches += 1
            asked[key] = float(t)
        elif int(st, 16) != 0x103 and key in asked:
            want[ends.get(int(st, 16), "error")] += 1
            held.append(float(t) - asked.pop(key))
print("    notify: %d watches; learn's answers %s, tshark's %s; held median %.6f s, tshark's %.6f s" % (d["watches"], d["answered"], want, d["median"], statistics.median_low(held)), file=sys.stderr)
assert d["watches"] == watches and d["answered"] == want and d["n"] == len(held), "the counts differ"
assert sum(1 for v in want.values() if v) >= 3, "fewer than 3 kinds of answer: the capture does not test the figure"
assert d["still_watching"] == len(asked), "still watching"
assert d["tree"] == int(sys.argv[3]) and d["tree"] > 0, ("whole subtree", d["tree"], sys.argv[3])
# a median by learn's bins (12% wide) against tshark's own (of an even count, the lower of the
# two middle ones, as learn takes the rank ceil(n / 2))
m = statistics.median_low(held)
assert abs(d["median"] / m - 1) <= 0.13, (d["median"], m)
PY
pv learn "$T_TMP/notify.pcap"
expect_out "^learn: change notify: [0-9]+ watch(es)? \([0-9]+ of a whole subtree\), held [0-9.]+ [mu]?s \(median; p95 [0-9.]+ [mu]?s\) to their answer: changed [0-9.]+%, enum_dir [0-9.]+%, closed [0-9.]+%, cancelled [0-9.]+%, error [0-9.]+%; [0-9]+ still watching at the end$"

# ---- 2. the built-in driver's load -----------------------------------------------------------
echo "  2. the built-in driver's load" >&2
capture_start "$T_TMP/builtin.pcap"
pv "${P[@]}" --set load.rate=20000 run --id pvlearn-1 --min-users 4 --max-users 4 --step 1 --duration 4 --warmup 1 --watch 0
expect_rc 0 "a step of the built-in load"
capture_stop
same_as_tshark builtin "$T_TMP/builtin.pcap"
jq_ok 'd["connections"] >= 4 and d["lost_bytes"] == 0 and d["malformed"] == 0' "builtin: the users' connections, nothing lost"
jq_ok 'd["matched"] >= 0.99 * (sum(d["requests"].values()) - d["requests"].get("CANCEL", 0))' "builtin: 99% of the requests answered"
jq_ok 'd["requests"]["CREATE"] > 50 and d["netbios_frames"]["encrypted"] == 0' "builtin: its load in the clear"
# its 4 users, each an NTLM account logged on once, their names nowhere in what learn says
IDS=$(python3 -c '
import hashlib
print(sorted("ntlm:" + hashlib.sha256(("lab\\pl-cli%d-u%d" % (c, u)).encode()).hexdigest()[:12] for c in (1, 2) for u in (1, 2)))')
jq_ok "sorted(u['id'] for u in d['users']) == $IDS and all(u['by'] == 'ntlm' and u['logons'] == 1 for u in d['users'])" "builtin: its 4 users, by their NTLM logons"
# the driver ends a step by closing its connections, no LOGOFF: 4 sessions still on at the end
jq_ok 'd["session_times"]["still_on"] == 4 and d["session_times"]["logoffs"] == 0 and d["session_times"]["n"] == 0' "builtin: its sessions, none logged off"
jq_ok 'd["activity_gap_learned"] and d["activity_gap"] > 0 and d["activities"] >= 4 and d["think_times"]["median"] > d["gaps_within"]["median"]' "builtin: activities, the gap learned"
jq_ok 'd["open_times"]["n"] > 50 and d["read_sizes"]["n"] > 10 and d["write_sizes"]["n"] > 10' "builtin: open times and sizes"
# its kinds of activity: every activity one of them, the driver's open-stat-close among them
jq_ok 'd["kinds"] and sum(k["count"] for k in d["kinds"]) + d["kinds_other"] == d["activities"] and abs(sum(k["share"] for k in d["kinds"]) - 1) < 1e-6' "builtin: the kinds add up to the activities"
jq_ok 'any(k["commands"].startswith("CREATE QUERY_INFO") and k["commands"].endswith("CLOSE") for k in d["kinds"])' "builtin: an open-stat-close kind"
# fewer kinds than a workload holds: each written, none replayed as another
jq_ok 'len(d["kinds"]) <= 256 and d["kinds_made_as_another_command"] == 0 and not any("replayed_as" in k for k in d["kinds"])' "builtin: every kind written, none stood in for"
grep -qi "pl-cli" "$T_TMP/learn.json" && fail "builtin: a user's name is in learn's JSON"
pv learn -o "$T_TMP/w2.yaml" "$T_TMP/builtin.pcap"
expect_out "^learn: the learned workload written to .*w2.yaml \(the playbook's load.workload replays it: docs/learn.md\)$"
expect_out "^learn: 4 users: 4 accounts by NTLM logon \(kept as hashes\), 0 by client address \(no name seen: Kerberos, or a logon not captured whole\), 0 by session only \(logon not captured\)$"
expect_out "^learn: activities: a user's requests more than [0-9.]+ (us|ms|s) apart \(learned: the split of the gaps' two modes\) start another, unless it holds a file open: [0-9]+ activities"
expect_out "^learn: [0-9]+ kinds? of activity \(their commands, repeats folded: READ\+\), the [0-9]+ most frequent:$"
expect_no_out "pl-cli"
pv --json learn --gap 0.5 "$T_TMP/builtin.pcap"
printf '%s\n' "$OUT" >"$T_TMP/learn.json"
jq_ok 'd["activity_gap"] == 0.5 and not d["activity_gap_learned"]' "builtin: --gap 0.5"
# with -o, the learned workload from the same reading: read by another YAML parser (PyYAML),
# its figures this JSON's, no user named in it (not even with --keep-names), the file
# replaced whole
printf 'old\n' >"$T_TMP/w.yaml"
pv --json learn --keep-names -o "$T_TMP/w.yaml" "$T_TMP/builtin.pcap"
expect_rc 0 "learn --keep-names -o"
printf '%s\n' "$OUT" >"$T_TMP/learn.json"
jq_ok 'sorted(u["id"] for u in d["users"]) == ["ntlm:lab\\pl-cli%d-u%d" % (c, u) for c in (1, 2) for u in (1, 2)]' "builtin: --keep-names, its users by name"
jq_ok "d['workload'] == '$T_TMP/w.yaml'" "builtin: the JSON names the workload written"
python3 -c '
import json, sys, yaml
d = json.load(open(sys.argv[1])); w = yaml.safe_load(open(sys.argv[2]))
reqs = sum(d["requests"].values())
assert w["source"]["users"] == len(d["users"]) == 4 and w["source"]["requests"] == reqs, w["source"]
assert w["source"]["answered"] == d["matched"], w["source"]
assert all(abs(w["mix"][c] - 100.0 * n / reqs) < 1e-3 for c, n in d["requests"].items()) and set(w["mix"]) == set(d["requests"]), w["mix"]
assert w["activity"]["activities"] == d["activities"] and abs(w["activity"]["gap"] - d["activity_gap"]) <= 1e-5 * d["activity_gap"], w["activity"]
assert [k["commands"] for k in w["kinds"]] == [k["commands"] for k in d["kinds"][:256]], "the kinds differ"
# the times a replay draws from: the same quantiles, at the same levels
# (and the gaps after each command that learn writes: those of 50 or more, one a kind replays)
wa, ja = w["activity"]["within_after"], d["gaps_within_after"]
assert set(wa) == {c for c in ja if ja[c]["n"] >= 50 and c not in ("NEGOTIATE", "SESSION_SETUP", "LOGOFF", "TREE_CONNECT", "TREE_DISCONNECT", "CANCEL", "ECHO", "OPLOCK_BREAK")} and "CLOSE" in wa, (wa.keys(), ja)
for y, q, jq in [(y, w["activity"][y]["quantiles"], d[j]["quantiles"]) for y, j in (("think", "think_times"), ("within", "gaps_within"), ("client", "client_times"))] + \
        [("after " + c, wa[c]["quantiles"], ja[c]["quantiles"]) for c in wa]:
    assert sorted(float(k) for k in q) == sorted(float(k) for k in jq) and 17 <= len(q) <= 31, (y, q, jq)
    assert all(abs(q[k] - jq[("%g" % k)]) <= 1e-5 * jq[("%g" % k)] for k in q), (y, q, jq)
    assert list(q.values()) == sorted(q.values()), (y, "not rising", q)
assert all(abs(k["weight"] - 100 * j["share"]) < 1e-3 for k, j in zip(w["kinds"], d["kinds"])), "the weights differ"
assert abs(sum(k["weight"] for k in w["kinds"]) + w.get("other_kinds", {}).get("weight", 0) - 100) < 0.01, "the weights do not add up to 100"
assert w["sizes"]["read"]["n"] == d["read_sizes"]["n"] and w["sizes"]["read"]["p95_up_to"] == d["read_sizes"]["p95_up_to"], w["sizes"]
assert w["files"]["open_seconds"]["n"] == d["open_times"]["n"], w["files"]
# the opens of a file to read or edit granted, and the share of them that asked a lease
fo = d["file_opens"]
assert w["files"]["opens"]["of"] == fo["n"] > 0 and abs(w["files"]["opens"]["leased"] - 100.0 * fo["leased"] / fo["n"]) < 1e-3, (w["files"], fo)
# the folders listed: the load lists the trees of its users at logon, its scenarios list again
lp, ns = w["files"]["listings_per_folder"], d["namespace"]
assert lp["folders"] == ns["folders_listed"] > 0 and lp["median"] == ns["listings_per_folder"]["median"] >= 1, (lp, ns)
assert lp["p95"] == ns["listings_per_folder"]["p95"] >= lp["median"], (lp, ns)
# each kind: its own think time, the median of those after it, as the JSON says it
for k, j in zip(w["kinds"], d["kinds"]):
    if j["think"]["n"]:
        assert abs(k["think"] - j["think"]["median"]) <= 1e-5 * j["think"]["median"], (k, j["think"])
    else:
        assert "think" not in k, k
assert any("think" in k for k in w["kinds"]), "no kind has a think time"
# the watches, as the JSON says them
cn, jn = w["files"]["change_notify"], d["change_notify"]
assert cn["watches"] == jn["watches"] > 0 and cn["whole_subtree"] == jn["tree"] and cn["still_watching"] == jn["still_watching"], (cn, jn)
assert abs(cn["held_seconds"]["median"] - jn["median"]) <= 1e-5 * jn["median"], (cn, jn)
ans = sum(jn["answered"].values())
assert ans > 0 and all(abs(cn["answered"][k] - 100.0 * v / ans) < 1e-3 for k, v in jn["answered"].items()), (cn, jn)
' "$T_TMP/learn.json" "$T_TMP/w.yaml" || fail "learn -o: the workload is not learn's: $(head -c 600 "$T_TMP/w.yaml")"
grep -qiE "pl-cli|ntlm:" "$T_TMP/w.yaml" && fail "learn -o: a user is named in the workload"

# ---- 3. encrypted -----------------------------------------------------------------------------
echo "  3. the built-in driver's load, encrypted" >&2
capture_start "$T_TMP/enc.pcap"
pv "${P[@]}" --set load.rate=20000 --set load.encryption=on run --id pvlearn-2 --min-users 4 --max-users 4 --step 1 --duration 3 --warmup 1 --watch 0
expect_rc 0 "a step of the encrypted load"
capture_stop
pv --json learn "$T_TMP/enc.pcap"
expect_rc 0 "learn an encrypted capture"
printf '%s\n' "$OUT" >"$T_TMP/learn.json"
n=$(tshark -r "$T_TMP/enc.pcap" -Y 'smb2.header.transform.msg_size' -T fields -e frame.number 2>/dev/null | wc -l)
jq_ok "d['netbios_frames']['encrypted'] >= $n > 0 and d['requests'].get('CREATE', 0) == 0" "encrypted: the transform frames counted (tshark: $n frames with one)"
pv learn "$T_TMP/enc.pcap"
expect_out "^learn: not read: [0-9]+ encrypted frames \([0-9.]+% of the SMB bytes\)"

# ---- 4. the committed captures ----------------------------------------------------------------
echo "  4. the committed captures" >&2
for f in "$TOP"/tests/learn/captures/*.pcap; do
	same_as_tshark "$(basename "$f")" "$f"
	case $f in
	*midway*) jq_ok 'd["connections_midway"] == d["connections"] > 0 and d["netbios_frames"]["resyncs"] >= d["connections"] and all(u["by"] == "session" for u in d["users"])' "$(basename "$f"): streams begun before the capture, found again, their users by session" ;;
	*start*)
		jq_ok 'len(d["users"]) == 4 and all(u["by"] == "ntlm" for u in d["users"])' "$(basename "$f"): its 4 users by their NTLM logons"
		# the logons' first listings: 10 folders opened and listed once each, each listing two
		# QUERY_DIRECTORYs (the entries, then STATUS_NO_MORE_FILES): one listing, not two
		jq_ok 'd["namespace"]["folders_listed"] == 10 and d["namespace"]["listings_per_folder"] == {"median": 1, "p95": 1} and d["requests"]["QUERY_DIRECTORY"] == 20' "$(basename "$f"): 10 folders listed once each, in 20 QUERY_DIRECTORYs"
		;;
	*snap300*) jq_ok 'd["cut_frames"] > 0 and d["lost_bytes"] > 0 and d["holes"] == 0' "$(basename "$f"): frames cut by the snapshot, their headers read" ;;
	esac
done
pv learn "$TOP/tests/learn/captures/lab-builtin-snap300.pcap"
expect_out "^learn: not read: [0-9]+ bytes the capture did not keep \([0-9]+ frames cut by its snapshot length, 0 holes\); the headers before them were read$"

# ---- 5. bad input -----------------------------------------------------------------------------
echo "  5. bad input" >&2
pv learn "$T_TMP/none.pcap"
expect_rc 3 "learn of no file"
expect_err "cannot open the capture .*none.pcap: No such file or directory"
printf 'not a capture\n' >"$T_TMP/text.pcap"
pv learn "$T_TMP/text.pcap"
expect_rc 3 "learn of a text file"
expect_err "text.pcap is not a capture provision can read \(.*\); give a pcap or pcapng file"
# the link type (bytes 20..23 of a classic pcap header) made 802.11's (105)
python3 -c '
import sys
d = bytearray(open(sys.argv[1], "rb").read()); d[20:24] = (105).to_bytes(4, "little")
open(sys.argv[2], "wb").write(d)' "$T_TMP/smbclient.pcap" "$T_TMP/wifi.pcap"
pv learn "$T_TMP/wifi.pcap"
expect_rc 3 "learn of an 802.11 capture"
expect_err "wifi.pcap has link type IEEE802_11 \(105\), which provision does not read"
# cut in the middle of its 40th record: the 39 before it read and shown
python3 -c '
import struct, sys
d = open(sys.argv[1], "rb").read(); at = 24
for _ in range(39):
    at += 16 + struct.unpack_from("<I", d, at + 8)[0]
open(sys.argv[2], "wb").write(d[:at + 20])' "$T_TMP/smbclient.pcap" "$T_TMP/cut.pcap"
pv learn "$T_TMP/cut.pcap"
expect_rc 3 "learn of a capture cut in a record"
expect_err "cut.pcap is damaged after frame 39: "
expect_out "^learn: .*cut.pcap: 39 frames over"
# -o where nothing can be written: 9, the path named; a capture it cannot read: no workload
pv learn -o "$T_TMP/no/such/dir/w.yaml" "$T_TMP/smbclient.pcap"
expect_rc 9 "learn -o into a folder that does not exist"
expect_err "the learned workload \(-o .*no/such/dir/w.yaml\)"
pv learn -o "$T_TMP/cut.yaml" "$T_TMP/cut.pcap"
expect_rc 3 "learn -o of a damaged capture"
[[ ! -e $T_TMP/cut.yaml ]] || fail "learn -o of a damaged capture wrote a workload"
pv learn
expect_rc 2 "learn without a capture"
expect_err "learn needs one capture: provision learn CAPTURE"
pv learn --port 99999 "$T_TMP/smbclient.pcap"
expect_rc 2 "learn --port 99999"
expect_err "--port '99999' is not a TCP port"
pv learn --gap -1 "$T_TMP/smbclient.pcap"
expect_rc 2 "learn --gap -1"
expect_err "--gap '-1' is not a time in seconds"
finish
