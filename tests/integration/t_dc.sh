#!/usr/bin/env bash
# provision dc / cleanup dc against the lab's DC, checked with ldapsearch and kinit: users made
# over LDAPS, StartTLS and SASL/GSSAPI, re-runs that change nothing, --reset-passwords,
# --clients, --dry-run, bad input (each its exit status, nothing written), a kill -9 that lands
# while the users are added (confirmed by the count before and after) and a re-run that
# converges without duplicates, a name held by a foreign object, cleanup (tree delete and one
# by one, a foreign object and an OU the lab did not make kept), and the secrets of the
# playbook given as {stdin: true} and {prompt: true} end to end.
. "$(dirname "$0")/lib.sh"

cleanup_all() { pv -p "$PLAYBOOK" cleanup dc; }
cleanup_all # a clean start, whatever an earlier run left
[[ $(count_tagged) -eq 0 ]] || fail "lab users left before the test"

# 1. 3 users per client over LDAPS, verified with kinit
pv -p "$PLAYBOOK" dc --users 3 --verify
expect_rc 0 "dc --users 3"
expect_out "created 6, already present 0, failed 0 \(of 6\)"
expect_err "verified: kinit cli1-u1@LAB.TEST"
expect_err "verified: kinit cli2-u3@LAB.TEST"
[[ $(count_tagged) -eq 6 ]] || fail "expected 6 tagged users, found $(count_tagged)"
ent=$(lds -b "CN=cli2-u3,$LAB_OU" -s base '(objectClass=user)' sAMAccountName userPrincipalName \
	displayName userAccountControl description)
for want in "sAMAccountName: cli2-u3" "userPrincipalName: cli2-u3@LAB.TEST" "displayName: cli2-u3" \
	"userAccountControl: 66048" "description: $TAG"; do
	grep -qx "$want" <<<"$ent" || fail "cli2-u3 lacks '$want': $ent"
done
user_kinit cli1-u2 || fail "kinit cli1-u2 with the shared password"
printf 'wrong-password' >"$T_TMP/wrong"
user_kinit cli1-u2 "$T_TMP/wrong" && fail "kinit cli1-u2 with a wrong password succeeded"

# 2. a re-run changes nothing; a larger N adds only the missing ones
pv -p "$PLAYBOOK" dc --users 3
expect_rc 0 "re-run"
expect_out "created 0, already present 6"
pv -p "$PLAYBOOK" --json dc --users 4
expect_rc 0 "dc --users 4"
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["created"]==2 and d["present"]==6, d' \
	<<<"$OUT" || fail "JSON summary of the --users 4 run: $OUT"
[[ $(count_tagged) -eq 8 ]] || fail "expected 8 users after --users 4"

# 2b. --reset-passwords sets the shared password again on users already there
printf 'An0ther-Passw0rd!' >"$T_TMP/new.pass"
pv -p "$PLAYBOOK" dc --users 4 --reset-passwords --password-file "$T_TMP/new.pass"
expect_rc 0 "--reset-passwords"
expect_out "created 0, already present 8 \(passwords reset\)"
user_kinit cli2-u4 "$T_TMP/new.pass" || fail "kinit with the reset password"
user_kinit cli2-u4 && fail "the old password still works after --reset-passwords"
pv -p "$PLAYBOOK" dc --users 4 --reset-passwords
expect_rc 0 "--reset-passwords back to the lab password"
user_kinit cli1-u1 || fail "kinit after resetting back"

# 3. --clients limits the run; --dry-run writes nothing
pv -p "$PLAYBOOK" dc --users 6 --clients cli2 --dry-run
expect_rc 0 "dry run"
expect_out "6 users planned .* 4 already present, 2 would be created"
[[ $(count_tagged) -eq 8 ]] || fail "--dry-run wrote something"
pv -p "$PLAYBOOK" dc --users 5 --clients cli2
expect_rc 0 "--clients cli2"
expect_out "created 1, already present 4"
probe_has "cli1-u5 (ldapsearch)" 0 '^dn:' lds -b "$LAB_OU" '(sAMAccountName=cli1-u5)' dn &&
	fail "cli1-u5 made though only cli2 was asked"

# 4. the other transports: StartTLS and sealed SASL/GSSAPI also work
pv -p "$PLAYBOOK" --set domain.transport=starttls dc --users 6 --clients cli1 -v
expect_rc 0 "dc over StartTLS"
expect_out "created 2, already present 4"
pv -p "$PLAYBOOK" --set domain.transport=gssapi dc --users 7 --clients cli1 -vv
expect_rc 0 "dc over GSSAPI"
expect_out "created 1, already present 6"
expect_err "SASL/GSSAPI sealed"
user_kinit cli1-u7 || fail "kinit of the user made over GSSAPI"

# 5. bad input: a clear error, its exit code, and nothing written
before=$(count_tagged)
pv -p "$PLAYBOOK" dc --users 0;          expect_rc 2 "--users 0";   expect_err "at least 1"
pv -p "$PLAYBOOK" dc --users -4;         expect_rc 2 "--users -4";  expect_err "not a number"
pv -p "$PLAYBOOK" dc --users many;       expect_rc 2 "--users many"; expect_err "not a number"
pv -p "$PLAYBOOK" dc --users 1000001;    expect_rc 2 "--users 1000001"; expect_err "pass --force"
pv -p "$PLAYBOOK" dc --users 3 --name-template 'averylongprefix-{client}-{n}'
expect_rc 3 "template over 20 characters"; expect_err "'averylongprefix-cli1-3' is 22 characters"
pv -p "$PLAYBOOK" dc --users 3 --name-template '{client}*{n}'
expect_rc 3 "template with a forbidden character"; expect_err "contains '\*'"
pv -p "$PLAYBOOK" dc --users 3 --clients cli1,nosuch
expect_rc 3 "unknown client"; expect_err "unknown client 'nosuch'"
printf 'a' >"$T_TMP/weak"
pv -p "$PLAYBOOK" dc --users 50 --password-file "$T_TMP/weak"
expect_rc 3 "password the policy rejects"
expect_err "refused the first user, so no other was tried"
pv -p "$PLAYBOOK" --set domain.dc=ctl.lab.test dc --users 50
expect_rc 6 "DC that does not answer"; expect_err "ctl.lab.test"
pv -p "$PLAYBOOK" dc --users 50 --admin-password-file "$T_TMP/wrong"
expect_rc 4 "wrong admin password"; expect_err "refused the credentials"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T_TMP/o.key" -out "$T_TMP/o.pem" -days 1 \
	-subj "/CN=Other" >/dev/null 2>&1
pv -p "$PLAYBOOK" dc --users 50 --ca-file "$T_TMP/o.pem"
expect_rc 5 "CA that does not match"; expect_err "TLS"
[[ $(count_tagged) -eq $before ]] || fail "bad input wrote users: $before before, $(count_tagged) after"

# 6. killed with SIGKILL mid-run (once the directory holds some of its users, and before it
#    holds them all: confirmed after the kill): the next run completes it, no duplicates
before=$(count_tagged)
pv_bg -p "$PLAYBOOK" -q dc --users 120
wait_until 120 "dc --users 120 adding its users" eval '(($(count_tagged) > before))'
kill -0 "$PV_PID" 2>/dev/null || fail "dc ended before the kill: nothing was killed mid-run"
kill -KILL "$PV_PID"
pv_bg_wait
[[ $RC -eq 137 ]] || fail "dc killed with SIGKILL: exit $RC"
mid=$(count_tagged)
((mid > before && mid < 240)) ||
	fail "the kill did not land while dc added its users: $mid tagged users after it ($before before, 240 planned)"
echo "    killed with $mid of 240 users made" >&2
pv -p "$PLAYBOOK" dc --users 120
expect_rc 0 "run after a kill -9"
[[ $(count_tagged) -eq 240 ]] || fail "after kill and re-run: $(count_tagged) users, expected 240 (mid: $mid)"
user_kinit cli2-u120 || fail "kinit of the last user after the re-run"
dups=
probe "duplicate names (ldapsearch for $TAG)" 0 lds -b "$BASE_DN" "(description=$TAG)" sAMAccountName &&
	dups=$(grep '^sAMAccountName:' <<<"$PROBE" | sort | uniq -d)
[[ -z $dups ]] || fail "duplicate names: $dups"

# 7. a name held by someone else's object is a conflict, reported by name; the rest is made
ldm -a >/dev/null <<LDIF
dn: CN=foreign,$LAB_OU
objectClass: user
sAMAccountName: cli1-u121
LDIF
pv -p "$PLAYBOOK" dc --users 121
expect_rc 10 "conflict with a foreign object"
expect_err "cli1-u121"
expect_out "created 1, already present 240, failed 1"

# 8. cleanup removes exactly this lab's users and keeps the foreign one (so the OU stays and
# no tree delete is tried)
pv -p "$PLAYBOOK" -v cleanup dc
expect_rc 0 "cleanup dc"
expect_out "deleted 241 users"
expect_err "holds objects this lab did not make \(1, first: CN=foreign,$LAB_OU\)"
expect_err "left in place"
[[ $(count_tagged) -eq 0 ]] || fail "cleanup left $(count_tagged) lab users"
lds -b "$LAB_OU" '(cn=foreign)' dn | grep -q '^dn:' || fail "cleanup removed a foreign object"
on ctl ldapdelete -H ldaps://dc.lab.test -D Administrator@LAB.TEST -y "$LAB/admin.pass" \
	"CN=foreign,$LAB_OU" || fail "removing the foreign test object"
pv -p "$PLAYBOOK" cleanup dc
expect_rc 0 "cleanup dc of the now empty OU"
expect_out "deleted 0 users and the lab's OU"
ou_exists "$LAB_OU" && fail "the lab's OU is still there"
pv -p "$PLAYBOOK" cleanup dc
expect_rc 0 "second cleanup"
expect_out "nothing to do"

# 8b. the lab's OU holding only the lab's users goes in one request (tree delete)
pv -p "$PLAYBOOK" dc --users 5
expect_rc 0 "dc --users 5 before a tree delete"
pv -p "$PLAYBOOK" cleanup dc --dry-run
expect_out "would delete 10 users and the lab's OU \(in one tree delete\)"
pv -p "$PLAYBOOK" -v cleanup dc
expect_rc 0 "cleanup dc by tree delete"
expect_out "deleted 10 users and the lab's OU"
expect_err "and its 10 users in one request \(tree delete\)"
[[ $(count_tagged) -eq 0 ]] || fail "tree delete left $(count_tagged) lab users"
ou_exists "$LAB_OU" && fail "the lab's OU is still there after the tree delete"

# 8c. the same one by one (what a DC without the tree-delete control gets)
pv -p "$PLAYBOOK" dc --users 5
expect_rc 0 "dc --users 5 before a one-by-one cleanup"
PROVISION_TREE_DELETE=0 pv -p "$PLAYBOOK" -v cleanup dc
expect_rc 0 "cleanup dc one by one"
expect_out "deleted 10 users and the lab's OU"
grep -q "tree delete" <<<"$ERR" && fail "PROVISION_TREE_DELETE=0 still used the tree delete"
[[ $(count_tagged) -eq 0 ]] || fail "one-by-one cleanup left $(count_tagged) lab users"
ou_exists "$LAB_OU" && fail "the lab's OU is still there after the one-by-one cleanup"

# 9. an OU the lab did not make is used but never deleted
ldm -a >/dev/null <<LDIF
dn: $LAB_OU
objectClass: organizationalUnit
LDIF
pv -p "$PLAYBOOK" dc --users 1
expect_rc 0 "dc in an existing OU"
pv -p "$PLAYBOOK" cleanup dc
expect_rc 0 "cleanup in an existing OU"
expect_out "deleted 2 users, failed 0"
ou_exists "$LAB_OU" || fail "cleanup deleted an OU the lab did not make"
on ctl ldapdelete -H ldaps://dc.lab.test -D Administrator@LAB.TEST -y "$LAB/admin.pass" "$LAB_OU"

# 10. secrets given as {stdin: true} and {prompt: true} (docs/playbook.md), end to end: the
#     admin's password from stdin makes the users (a wrong one there is refused, 4, nothing
#     made); the users' password from stdin, then typed at a prompt on a terminal of its own
#     (tests/integration/pty_type.py: not echoed), is what the users get (--reset-passwords),
#     each checked with kinit; {prompt: true} with no terminal is refused (3), naming the ways
#     out
pv -p "$PLAYBOOK" --set domain.admin_password.stdin=true dc --users 1 <"$T_TMP/wrong"
expect_rc 4 "dc with a wrong admin password from stdin"
expect_err "refused the credentials"
[[ $(count_tagged) -eq 0 ]] || fail "a refused admin password from stdin made users: $(count_tagged)"
pv -p "$PLAYBOOK" --set domain.admin_password.stdin=true dc --users 1 <"$LAB/admin.pass"
expect_rc 0 "dc with the admin password from stdin"
expect_out "created 2, already present 0"
[[ $(count_tagged) -eq 2 ]] || fail "dc with the admin password from stdin: $(count_tagged) users, expected 2"
user_kinit cli1-u1 || fail "kinit cli1-u1, made with the admin password from stdin"
pv -p "$PLAYBOOK" --set users.password.stdin=true dc --users 1 --reset-passwords <"$T_TMP/new.pass"
expect_rc 0 "dc --reset-passwords with the users' password from stdin"
expect_out "created 0, already present 2 \(passwords reset\)"
user_kinit cli2-u1 "$T_TMP/new.pass" || fail "kinit with the users' password that came from stdin"
user_kinit cli2-u1 && fail "the lab's password still works after the users' password from stdin"
# the lab's password typed back at the prompt
on ctl python3 "$TOP/tests/integration/pty_type.py" "users' password: " "$LAB/user.pass" \
	"${PVT[@]}" "$PV" -p "$PLAYBOOK" --set users.password.prompt=true dc --users 1 --reset-passwords \
	>"$T_TMP/out" 2>"$T_TMP/err"
RC=$?
OUT=$(cat "$T_TMP/out")
ERR=$(cat "$T_TMP/err")
expect_rc 0 "dc --reset-passwords with the users' password typed at a prompt (pty_type: 90 no prompt, 91 echoed)"
expect_out "users' password: " "the prompt on the terminal"
expect_out "created 0, already present 2 \(passwords reset\)"
user_kinit cli2-u1 || fail "kinit with the users' password typed at the prompt"
user_kinit cli2-u1 "$T_TMP/new.pass" && fail "the password from stdin still works after the one typed at the prompt"
# no terminal (a session of its own, stdin not one): refused before anything is done
on ctl setsid -w "${PVT[@]}" "$PV" -p "$PLAYBOOK" --set users.password.prompt=true dc --users 1 \
	--reset-passwords </dev/null >"$T_TMP/out" 2>"$T_TMP/err"
RC=$?
OUT=$(cat "$T_TMP/out")
ERR=$(cat "$T_TMP/err")
expect_rc 3 "{prompt: true} without a terminal"
expect_err "\{prompt: true\} needs a terminal; use \{file: PATH\} or \{env: NAME\} when running unattended"
pv -p "$PLAYBOOK" cleanup dc
expect_rc 0 "cleanup dc after the secrets' tests"
[[ $(count_tagged) -eq 0 ]] || fail "cleanup left $(count_tagged) lab users"

finish
