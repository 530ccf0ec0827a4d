#!/usr/bin/env bash
# Faults during prepare, on the real lab: prepare killed with SIGKILL at several points and run
# again (it converges, with no duplicates); the DC's samba killed in the middle of dc (named,
# status 6 for unreachable, and a re-run after it is back converges); a client's sshd down
# (that client named with its cause, the others done, status 10); a second command on the lab
# while prepare runs is refused (busy, 16). Checked with ldapsearch,
# net conf, getent and find on srv. Lab 'pvfault' (users pf-cli1-u1...), left as found.
. "$(dirname "$0")/lib.sh"

D=$(mktemp -d /tmp/pv-fault-it.XXXXXX)
trap '"$LAB_SH" sshd cli2 start >/dev/null 2>&1; "$LAB_SH" dc start >/dev/null 2>&1; rm -rf "$D" "$T_TMP"' EXIT
P=(-p "$PLAYBOOK" --set lab=pvfault --set "users.name_template=pf-{client}-u{n}"
	--set users.per_client=40 --set "controller.results=$D/results")
FTAG="provision:pvfault"
# the probes (lib.sh: one that cannot look fails the test, never reads as none): the lab's
# users, the sAMAccountNames held twice (nothing when the probe failed: recorded), srv's shares
# (lib.sh), HOST's hosts blocks of the lab
tagged() {
	probe_count "tagged (ldapsearch for $FTAG)" 0 '^dn:' \
		lds -b "$BASE_DN" "(&(objectClass=user)(description=$FTAG))" dn
}
samnames() {
	probe "samnames (ldapsearch for $FTAG)" 0 \
		lds -b "$BASE_DN" "(&(objectClass=user)(description=$FTAG))" sAMAccountName || return
	grep '^sAMAccountName:' <<<"$PROBE" | sort | uniq -d
}
block() { hosts_blocks "$1" pvfault; }

pv "${P[@]}" cleanup --leave >/dev/null

# 1. prepare killed with SIGKILL at several points, each time run again: during the users' adds
#    (with the join beside them), during the trees, and early on (the probes); then a last run
#    to the end converges
pv_bg "${P[@]}" prepare
pv_when "created OU" && sleep 0.5
# meanwhile a second command that changes this lab is refused at once (16, the holder's pid
# named, nothing done); one that only reads it, and a dry run, go ahead
pv "${P[@]}" cleanup
expect_rc 16 "cleanup while prepare runs"
expect_err "lab 'pvfault' is busy: another provision \(pid $PV_PID\) is changing it" "the holder named"
pv "${P[@]}" --dry-run cleanup
[[ $RC -eq 0 || $RC -eq 10 ]] || { fail "cleanup --dry-run while prepare runs: exit $RC"; show; }
pv "${P[@]}" status
[[ $RC -eq 0 || $RC -eq 13 ]] || { fail "status while prepare runs: exit $RC"; show; }
kill -0 "$PV_PID" 2>/dev/null || fail "prepare ended before the kill: the lock test proved nothing"
kill -9 "$PV_PID"
pv_bg_wait
[[ $RC -eq 137 ]] || fail "kill -9 during dc: exit $RC"
echo "    killed during dc after $(tagged) of 80 users" >&2
pv_bg "${P[@]}" prepare
pv_when "trees: [0-9]+ SMB connections" && sleep 0.5
kill -9 "$PV_PID"
pv_bg_wait
echo "    killed during the trees" >&2
pv_bg "${P[@]}" prepare
sleep 0.3
kill -9 "$PV_PID"
pv_bg_wait
pv "${P[@]}" --json prepare
expect_rc 0 "prepare after three kills"
python3 -c 'import json,sys; d=json.load(sys.stdin); s={p["phase"]: p["state"] for p in d["phases"]}; assert s["dc"]=="already" and s["server"] in ("done","already"), s' <<<"$OUT" ||
	fail "prepare after three kills: $OUT"
[[ $(tagged) -eq 80 ]] || fail "users after the kills: $(tagged), expected 80"
[[ -z $(samnames) ]] || fail "duplicate users: $(samnames)"
[[ $(shares) -eq 2 && $(spns) -eq 80 && $(block cli1) -eq 1 && $(block cli2) -eq 1 ]] ||
	fail "after the kills: shares $(shares), SPNs $(spns), blocks $(block cli1) $(block cli2)"
pv "${P[@]}" status
expect_rc 0 "status after the kills"
expect_out "trees +ok +80 of 80"

# 2. the DC's samba killed in the middle of dc: named, status 6; once it is back, dc converges
pv "${P[@]}" cleanup dc
pv_bg "${P[@]}" -v dc
pv_when "created OU" && sleep 0.7
"$LAB_SH" dc crash >/dev/null || fail "lab.sh dc crash"
pv_bg_wait
expect_rc 6 "dc while the DC is killed"
expect_err "the DC 'dc\.lab\.test' went away while .*run the same command again once it is back"
"$LAB_SH" dc start >/dev/null || fail "lab.sh dc start"
pv "${P[@]}" dc
expect_rc 0 "dc once the DC is back"
[[ $(tagged) -eq 80 ]] || fail "users after the DC came back: $(tagged), expected 80"
[[ -z $(samnames) ]] || fail "duplicate users after the DC came back: $(samnames)"

# 3. a client's sshd down: that client is named with its cause, the others are done, status 10
pv "${P[@]}" cleanup client
"$LAB_SH" sshd cli2 stop >/dev/null
pv "${P[@]}" prepare
"$LAB_SH" sshd cli2 start >/dev/null
expect_rc 10 "prepare with cli2's sshd down"
expect_out "^prepare: client +partial +1 of 2 clients failed, the others are done; cli2 \(unreachable\): "
expect_out "^prepare: dc +already"
expect_err "cli2 \(unreachable\)"
[[ $(block cli1) -eq 1 ]] || fail "cli1 not done while cli2 was down"
[[ $(block cli2) -eq 0 ]] || fail "cli2 has a block though its sshd was down"
pv "${P[@]}" prepare
expect_rc 0 "prepare once cli2 is back"
[[ $(block cli2) -eq 1 ]] || fail "cli2 not done once it was back"

# 4. a cleanup never gets stuck: with cli2's sshd down, every other cleanup is done, the run
#    ends partial naming cli2, and a re-run once it is back finishes
"$LAB_SH" sshd cli2 stop >/dev/null
pv "${P[@]}" cleanup --leave
"$LAB_SH" sshd cli2 start >/dev/null
expect_rc 10 "cleanup with cli2's sshd down"
expect_out "^cleanup: client +partial +1 of 2 clients failed, the others are done; cli2 \(unreachable\)"
for p in controller server join dc; do
	expect_out "^cleanup: $p +(done|already) " "cleanup: $p done though cli2 is down"
done
[[ $(tagged) -eq 0 && $(shares) -eq 0 && $(block cli1) -eq 0 ]] ||
	fail "cleanup with cli2 down left: users $(tagged), shares $(shares), cli1's block $(block cli1)"
[[ $(block cli2) -eq 1 ]] || fail "cli2's block went though its sshd was down"
pv "${P[@]}" cleanup --leave
expect_rc 0 "cleanup once cli2 is back"
[[ $(block cli2) -eq 0 ]] || fail "cli2's block left after the re-run"
finish
