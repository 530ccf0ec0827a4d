#!/usr/bin/env bash
# tests/integration/t_rogue.sh: something that is not the file server answers on port 445 where
# the server and its aliases point (lab 'pvrogue', 2 users per client). srv's smbd is stopped
# and tests/integration/rogue_smb.py listens on srv's address in its place: it answers every
# SESSION_SETUP with STATUS_SUCCESS at once, no token, signed under the keys of a zero session
# key. Claims, each asserted:
#  1. `check` fails its smb line, naming a logon that never authenticated, and exits non-zero;
#  2. `server`, with one user's tree missing, refuses that user's logon with the same words,
#     exits non-zero, and writes no file there (find on srv's disk);
#  3. `run` with the built-in driver, NTLM and Kerberos logons, exits 8 (nobody logged on)
#     with the same words for each mechanism;
#  4. no client went as far as a TREE_CONNECT: the rogue counted the SESSION_SETUPs it
#     answered (at least one per command above) and no TREE_CONNECT;
#  5. with smbd back, `server` builds the missing tree (find on srv's disk).
. "$(dirname "$0")/lib.sh"

P=(-p "$PLAYBOOK" --set lab=pvrogue --set "users.name_template=rg-{client}-u{n}"
	--set users.per_client=2 --set driver.name=builtin)
RES=$LAB/results
ROGUE_PID=$LAB/rogue.pid
ROGUE_COUNT=$LAB/rogue.count
SVC=$LAB/bin/lab-service
WORDS='the server claimed a logon that never authenticated'

rogue_stop() {
	local p
	p=$(cat "$ROGUE_PID" 2>/dev/null) && kill "$p" 2>/dev/null
	rm -f "$ROGUE_PID"
	on srv "$SVC" status smbd >/dev/null 2>&1 || on srv "$SVC" start smbd >/dev/null
}
trap 'rogue_stop; on ctl "${PVT[@]}" "$PV" "${P[@]}" cleanup --leave >/dev/null 2>&1; rm -rf "$RES"/rg-* "$ROGUE_COUNT" "$T_TMP"' EXIT

pv "${P[@]}" cleanup --leave >/dev/null
pv "${P[@]}" prepare
expect_rc 0 "prepare"
TREE=$SP/fsroot1/rg-cli1-u1
[[ $(srv_tree fsroot1 rg-cli1-u1) == "$SMALL_FILES $SMALL_BYTES" ]] || fail "prepare left no whole tree for rg-cli1-u1"
on srv rm -rf "$TREE"

# the rogue in smbd's place, on srv's address
on srv "$SVC" stop smbd >/dev/null || fail "smbd did not stop"
rm -f "$ROGUE_PID"
"$LAB_SH" exec srv -- python3 "$TOP/tests/integration/rogue_smb.py" 198.18.0.20 "$ROGUE_PID" \
	"$ROGUE_COUNT" >/dev/null 2>&1 &
for _ in $(seq 100); do [[ -s $ROGUE_PID ]] && break; sleep 0.05; done
[[ -s $ROGUE_PID ]] || fail "the rogue server did not start"
setups() { cut -d' ' -f1 "$ROGUE_COUNT"; }

# 1. check
before=$(setups)
pv "${P[@]}" check
[[ $RC -ne 0 ]] || fail "check passed against a rogue server"
expect_out "^FAIL +smb +srv .*$WORDS: it answered success to the NTLM NEGOTIATE"
(($(setups) > before)) || fail "check never logged on at the rogue"

# 2. server: the missing tree's user refused, nothing written
before=$(setups)
pv "${P[@]}" server
[[ $RC -ne 0 ]] || fail "server exited 0 against a rogue server"
expect_err "rg-cli1-u1: SMB logon as LAB.rg-cli1-u1 on '[^']*': $WORDS"
(($(setups) > before)) || fail "server never logged on at the rogue"
n=$(on srv sh -c "find '$TREE' -type f 2>/dev/null | wc -l")
[[ $n == 0 ]] || fail "server wrote $n files into rg-cli1-u1's tree through the rogue"

# 3. run, NTLM and Kerberos: nobody logs on (8), the words for each mechanism
pv "${P[@]}" run --id rg-ntlm --min-users 2 --max-users 2 --step 2 --duration 3 --warmup 1
expect_rc 8 "run (NTLM) against a rogue server"
expect_err "$WORDS: it answered success to the NTLM NEGOTIATE"
pv "${P[@]}" --set load.auth=kerberos run --id rg-krb --min-users 2 --max-users 2 --step 2 \
	--duration 3 --warmup 1
expect_rc 8 "run (Kerberos) against a rogue server"
expect_err "$WORDS: its final answer did not complete the Kerberos exchange"

# 4. nobody went on to use the session
read -r n_setup n_tree <"$ROGUE_COUNT"
((n_setup >= 4)) || fail "the rogue saw $n_setup SESSION_SETUPs, expected at least 4"
[[ $n_tree == 0 ]] || fail "a client trusted the rogue's logon: $n_tree TREE_CONNECTs"

# 5. the real server back: the tree is built
rogue_stop
pv "${P[@]}" server
expect_rc 0 "server with smbd back"
[[ $(srv_tree fsroot1 rg-cli1-u1) == "$SMALL_FILES $SMALL_BYTES" ]] || fail "server did not build rg-cli1-u1's tree with smbd back"

finish
