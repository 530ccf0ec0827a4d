#!/usr/bin/env bash
# tests/integration/t_sweep.sh: `provision sweep copy` (lab 'pvsweep', 1 user per client).
# Claims, each asserted with independent tools on srv (testparm -s, net conf, a log the
# setting commands write):
#  1. a setting the server's testparm refuses (an unknown name, a value it does not take, a
#     global parameter's too) is refused before anything runs: exit 3, the parameter named,
#     no job's folder made, the configuration untouched;
#  2. a global parameter is refused while [global] does not read the registry (exit 3,
#     saying 'include = registry');
#  3. a sweep of two settings x two rounds: six jobs in the order baseline, setting 1,
#     setting 2, round after round; each setting applied just before its job and put back
#     just after it (a command pair's own log on srv: apply, revert, apply, revert); the
#     Samba setting is not in the registry after the sweep, as before; testparm -s on srv is
#     the same byte for byte before and after; every job's target folder is gone; sweep.json,
#     sweep.txt, revert.txt and report.html are written;
#  4. with 'include = registry' in srv's [global], a global parameter is swept and put back
#     (testparm -s the same before and after);
#  5. Ctrl-C in the middle of a sweep: exit 15, it says what it put back, and testparm -s and
#     the registry are as they were before.
. "$(dirname "$0")/lib.sh"

P=(-p "$PLAYBOOK" --set lab=pvsweep --set "users.name_template=ps-{client}-u{n}"
	--set users.per_client=1)
RES=$LAB/results
FS=$TOP/playbooks/filesets/small.yaml
USER1=ps-cli1-u1
LOG=/var/tmp/pv-sweep-test.log
trap 'on ctl "${PVT[@]}" "$PV" "${P[@]}" cleanup --leave >/dev/null 2>&1; "$LAB_SH" srv-limit off >/dev/null 2>&1; "$LAB_SH" srv-conf >/dev/null 2>&1; on srv rm -f "$LOG"; rm -rf "$RES"/ps-* "$T_TMP"' EXIT

# the configuration in effect on srv, read there (a probe: a failing testparm fails the test)
config() { probe "testparm -s on srv" 0 on srv testparm -s && printf '%s\n' "$PROBE"; }
getparm() { on srv net conf getparm fsroot1 "$1" 2>/dev/null; }

pv "${P[@]}" cleanup --leave >/dev/null
pv "${P[@]}" prepare
expect_rc 0 "prepare"
before=$(config)
[[ -n $before ]] || fail "testparm -s on srv printed nothing"

# 1. refused before anything runs
pv "${P[@]}" sweep copy --fileset "$FS" --setting 'case sensitive=yes' --setting 'case sensitivity=yes' --id ps-bad
expect_rc 3 "a setting testparm does not know"
expect_err "does not know the parameter 'case sensitivity'"
pv "${P[@]}" sweep copy --fileset "$FS" --setting 'oplocks=maybe' --id ps-bad
expect_rc 3 "a value testparm refuses"
expect_err "refuses the value of 'oplocks' \(it says: .*not boolean"
# a global parameter's value: testparm reads it only in [global]
pv "${P[@]}" sweep copy --fileset "$FS" --setting 'max xmit=abc' --id ps-bad
expect_rc 3 "a global parameter's value testparm refuses"
expect_err "refuses the value of 'max xmit' \(it says: .*not a valid size specifier"
[[ ! -e $RES/ps-bad && ! -e $RES/ps-bad-base-r1 ]] || fail "a refused sweep made a results folder"
[[ "$(config)" == "$before" ]] || fail "a refused sweep changed the configuration"
[[ -z $(getparm 'case sensitive') ]] || fail "a refused sweep set 'case sensitive'"

# 2. a global parameter without the registry in [global]
pv "${P[@]}" sweep copy --fileset "$FS" --setting 'socket options=TCP_NODELAY' --id ps-bad
expect_rc 3 "a global parameter without include = registry"
expect_err "'socket options' is a global parameter.*include = registry"

# 3. two settings x two rounds
on srv rm -f "$LOG"
pv "${P[@]}" --json sweep copy --fileset "$FS" --setting 'case sensitive=yes' \
	--setting-command "echo apply >>$LOG ;; echo revert >>$LOG" --repeat 2 --id ps-1
expect_rc 0 "sweep of two settings x two rounds"
python3 - "$OUT" <<'PY' || { fail "the sweep's JSON"; show; }
import json, sys
d = json.loads(sys.argv[1])
order = [(j["condition"], j["round"]) for j in d["jobs"]]
assert order == [(0, 1), (1, 1), (2, 1), (0, 2), (1, 2), (2, 2)], order
assert all(j["exit"] == 0 and j["value"] > 0 for j in d["jobs"]), d["jobs"]
c = d["conditions"]
assert [x["label"] for x in c][:2] == ["baseline", "case sensitive = yes"], c
assert all(x["n"] == 2 and x["lo"] <= x["hi"] for x in c), c
assert c[0]["diff"] is None and c[1]["diff"] is not None and isinstance(c[1]["beyond_noise"], bool), c
assert d["config_same"] and d["put_back"] == "", d
assert 0 < d["apply_max_s"] < 10 and 0 < d["revert_max_s"] < 10, d
PY
[[ "$(on srv cat "$LOG" | tr '\n' ' ')" == "apply revert apply revert " ]] ||
	fail "the command pair did not run apply then revert once per round: $(on srv cat "$LOG" | tr '\n' ' ')"
[[ "$(config)" == "$before" ]] || fail "testparm -s on srv differs after the sweep: $(diff <(echo "$before") <(config) | head -5)"
[[ -z $(getparm 'case sensitive') ]] || fail "'case sensitive' is still in the registry after the sweep"
left=$(on srv find "$SP/fsroot1/$USER1" -maxdepth 1 -name 'ps-1-*' | wc -l)
[[ $left -eq 0 ]] || fail "$left of the sweep's copy targets are left on srv"
for f in sweep.json sweep.txt revert.txt report.html; do
	[[ -s $RES/ps-1/$f ]] || fail "no $f in the sweep's folder"
done
grep -Eq "net conf delparm '?fsroot1'? 'case sensitive'" "$RES/ps-1/revert.txt" ||
	fail "revert.txt does not say how to put 'case sensitive' back: $(cat "$RES/ps-1/revert.txt")"
for j in ps-1-base-r1 ps-1-s1-r2 ps-1-s2-r2; do
	[[ -s $RES/$j/report.html && -s $RES/$j/copy.json ]] || fail "the job $j has no report.html or copy.json"
done
if python3 "$TOP/tests/integration/browser.py" "$RES/ps-1/report.html" "$T_TMP/br" >"$T_TMP/br.json"; then
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ok"]' "$T_TMP/br.json" || fail "report.html in Chromium"
	grep -q 'class="bars"' "$RES/ps-1/report.html" || fail "no bar chart in the sweep's report.html"
else
	fail "the sweep's report.html did not load cleanly in Chromium"
fi

# 4. a global parameter once [global] reads the registry
"$LAB_SH" srv-conf 'include=registry' >/dev/null || fail "srv-conf include=registry"
before_g=$(config)
sock_before=$(on srv net conf getparm global 'socket options' 2>/dev/null)
pv "${P[@]}" sweep copy --fileset "$FS" --setting 'socket options=TCP_NODELAY' --repeat 1 --id ps-2
expect_rc 0 "a global parameter with include = registry"
[[ "$(config)" == "$before_g" ]] || fail "testparm -s differs after sweeping a global parameter"
[[ $(on srv net conf getparm global 'socket options' 2>/dev/null) == "$sock_before" ]] ||
	fail "the registry's [global] 'socket options' is not as it was ('$sock_before')"
"$LAB_SH" srv-conf >/dev/null || fail "srv-conf back to the base"

# 5. Ctrl-C in the middle: everything put back (a copy of 2,000 files, srv held to 20% of a
#    CPU: the stop lands inside the setting's job)
cat >"$T_TMP/long.yaml" <<'EOF'
name: long
parts:
  static:
    folders: [4]
    files: 500
    sizes: [{size: [100, 2KiB]}]
EOF
"$LAB_SH" srv-limit 20 >/dev/null || fail "srv-limit 20"
pv_bg "${P[@]}" sweep copy --fileset "$T_TMP/long.yaml" --setting 'case sensitive=yes' --setting 'aio write size=1' --repeat 3 --id ps-3
pv_when 'sweep: round 1, case sensitive = yes' 120
# then its copy under way (the second plan line: the setting is applied by then)
for _ in $(seq 600); do
	(($(grep -c 'files .* to send' "$T_TMP/bgerr") >= 2)) && break
	sleep 0.1
done
(($(grep -c 'files .* to send' "$T_TMP/bgerr") >= 2)) || fail "the setting's copy never started"
kill -INT "$PV_PID" 2>/dev/null
pv_bg_wait 120
"$LAB_SH" srv-limit off >/dev/null
expect_rc 15 "sweep stopped with Ctrl-C"
grep -Eq "'case sensitive = yes' put back" <<<"$OUT$ERR" || fail "the stopped sweep does not say it put 'case sensitive' back: $OUT $ERR"
[[ "$(config)" == "$before" ]] || fail "testparm -s differs after a stopped sweep"
[[ -z $(getparm 'case sensitive') && -z $(getparm 'aio write size') ]] || fail "a setting is left in the registry after Ctrl-C"

finish
