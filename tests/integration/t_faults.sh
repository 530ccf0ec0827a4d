#!/usr/bin/env bash
# Faults during prepare, on the real lab: prepare killed with SIGKILL at several points (in the
# users' adds, in the trees, early on; each kill made once that point is seen reached, and
# confirmed after by what was made: part of what was planned) and run again (it converges,
# with no duplicates); the DC's samba killed in the middle of dc, once users are being added
# (named, status 6 for unreachable, part of the users made, and a re-run after it is back
# converges); a client's sshd down (that client named with its cause, the others done,
# status 10); a second command on the lab while prepare runs is refused (busy, 16), one that
# reads goes ahead and status shows the users made so far. Checked with ldapsearch, net conf,
# getent and find on srv. Lab 'pvfault' (users pf-cli1-u1...), left as found.
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
# tree_files: the files of this lab's trees on srv's disk (find; -1: the probe failed)
tree_files() {
	probe_count "tree_files (find on srv)" 0 . on srv sh -c \
		'set -- "$1"/fsroot*/pf-cli*; [ -e "$1" ] || exit 0; find "$@" -type f' sh "$SP"
}

pv "${P[@]}" cleanup --leave >/dev/null

# 1. prepare killed with SIGKILL at several points, each time run again: during the users' adds
#    (with the join beside them), during the trees, and early on (its first steps); then a
#    last run to the end converges. Each kill is made once the point is reached (the users or
#    the trees seen appearing, a line printed) and confirmed after: what was made is part of
#    what was planned, and the exit is SIGKILL's (137), not an end of its own.
pv_bg "${P[@]}" prepare
wait_until 120 "prepare adding this lab's users" eval '(($(tagged) > 0))'
# held there (SIGSTOP: it keeps its lock), meanwhile a second command that changes this lab
# is refused at once (16, the holder's pid named, nothing done); one that only reads it, and a
# dry run, go ahead, and status shows the users part made
kill -STOP "$PV_PID"
pv "${P[@]}" cleanup
expect_rc 16 "cleanup while prepare runs"
expect_err "lab 'pvfault' is busy: another provision \(pid $PV_PID\) is changing it" "the holder named"
pv "${P[@]}" --dry-run cleanup
[[ $RC -eq 0 || $RC -eq 10 ]] || { fail "cleanup --dry-run while prepare runs: exit $RC"; show; }
pv "${P[@]}" status
expect_rc 13 "status while prepare is held in the users' adds"
made=$(sed -nE 's/^ +users +MISSING +([0-9]+) of 80 planned.*/\1/p' <<<"$OUT")
((made > 0 && made < 80)) || { fail "status does not show part of the users made while prepare was held"; show; }
kill -0 "$PV_PID" 2>/dev/null || fail "prepare ended before the kill: the lock test proved nothing"
kill -KILL "$PV_PID"
pv_bg_wait
[[ $RC -eq 137 ]] || fail "kill -9 during dc: exit $RC"
n=$(tagged)
((n > 0 && n < 80)) ||
	fail "the kill did not land while dc added the users: $n of 80 after it (status said ${made:-?} while it was held)"
echo "    killed during dc after $n of 80 users" >&2
# during the trees: once files of this lab's trees appear on srv
pv_bg "${P[@]}" prepare
pv_when "trees: [0-9]+ SMB connections" 300 &&
	wait_until 120 "prepare writing the trees" eval '(($(tree_files) > 0))'
kill -0 "$PV_PID" 2>/dev/null || fail "prepare ended before the kill during the trees"
kill -KILL "$PV_PID"
pv_bg_wait
[[ $RC -eq 137 ]] || fail "kill -9 during the trees: exit $RC"
n=$(tree_files)
((n > 0 && n < 80 * SMALL_FILES)) ||
	fail "the kill did not land while the trees were written: $n of $((80 * SMALL_FILES)) files on srv"
echo "    killed during the trees after $n of $((80 * SMALL_FILES)) files" >&2
# early on: once it has printed its first line (-v)
pv_bg "${P[@]}" -v prepare
pv_when "debug: " 60
kill -0 "$PV_PID" 2>/dev/null || fail "prepare ended before the early kill"
kill -KILL "$PV_PID"
pv_bg_wait
[[ $RC -eq 137 ]] || fail "kill -9 early in prepare: exit $RC"
grep -q "^prepare: " <<<"$OUT" && fail "prepare printed its phases' lines: it had ended before the kill: $OUT"
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
wait_until 120 "dc adding this lab's users" eval '(($(tagged) > 0))'
kill -0 "$PV_PID" 2>/dev/null || fail "dc ended before the DC was killed"
"$LAB_SH" dc crash >/dev/null || fail "lab.sh dc crash"
pv_bg_wait
expect_rc 6 "dc while the DC is killed"
expect_err "the DC 'dc\.lab\.test' went away while .*run the same command again once it is back"
"$LAB_SH" dc start >/dev/null || fail "lab.sh dc start"
n=$(tagged)
((n > 0 && n < 80)) || fail "the DC was not killed while dc added the users: $n of 80 there"
echo "    the DC killed after $n of 80 users" >&2
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
