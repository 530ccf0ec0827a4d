#!/usr/bin/env bash
# provision prepare / status / cleanup over every phase, from nothing and back, checked with
# independent tools: ldapsearch (users, OU, SPNs), net conf and find on srv (shares, trees),
# smbclient as a user, getent on the clients, ls on the results folder; and, while prepare
# runs from nothing, every command line of every lab host (/proc/PID/cmdline at each exec and
# polled, tests/integration/argv_watch.py): the admin's and the users' passwords on none.
#
# Lab 'pvprep' with its own user names (pp-cli1-u1...) and a scratch results folder; it leaves
# the lab as it found it (cleanup --leave: srv unjoined).
. "$(dirname "$0")/lib.sh"

D=$(mktemp -d /tmp/pv-prep-it.XXXXXX)
trap '[[ -n ${ARGV_PID:-} ]] && kill "$ARGV_PID" 2>/dev/null; rm -rf "$D" "$T_TMP"' EXIT
P=(-p "$PLAYBOOK" --set lab=pvprep --set "users.name_template=pp-{client}-u{n}"
	--set users.per_client=5 --set "controller.results=$D/results")
PTAG="provision:pvprep"
# the probes (lib.sh: one that cannot look fails the test, never reads as none): the lab's
# users, HOST's hosts blocks of the lab; srv's shares and SPNs are lib.sh's
tagged() {
	probe_count "tagged (ldapsearch for $PTAG)" 0 '^dn:' \
		lds -b "$BASE_DN" "(&(objectClass=user)(description=$PTAG))" dn
}
block() { hosts_blocks "$1" pvprep; }
# json EXPR: evaluate a Python expression over the last JSON document (d) on stdout
json() { python3 -c "import json,sys; d=json.load(sys.stdin); assert $1, d" <<<"$OUT" >/dev/null 2>&1; }

pv "${P[@]}" cleanup --leave >/dev/null

# 1. before: status says the lab holds nothing, exit 13
pv "${P[@]}" status
expect_rc 13 "status of an empty lab"
expect_out "status: the lab holds nothing"
expect_out "users +MISSING +0 of 10 planned"

# 2. prepare from nothing: every phase done, the exit 0; all along, no command line on any lab
#    host holds the lab's passwords (the admin's, the users'; lib.sh's argv_watch)
argv_watch_start "$LAB/user.pass" "$LAB/admin.pass"
for h in ctl dc srv cli1 cli2; do argv_watch_canary "$h"; done # the watcher shown to see each host
pv "${P[@]}" prepare
expect_rc 0 "prepare from nothing"
argv_watch_stop "prepare from nothing" ctl srv cli1 cli2
for p in dc join server client controller; do
	expect_out "^prepare: $p +done " "prepare: $p done"
done
expect_out "prepare: the lab is prepared"
[[ $(tagged) -eq 10 ]] || fail "users of lab pvprep: $(tagged), expected 10"
user_kinit pp-cli2-u5 || fail "kinit as pp-cli2-u5 failed after prepare"
joined || fail "srv is not joined after prepare"
[[ $(shares) -eq 2 ]] || fail "shares on srv after prepare: $(shares)"
[[ $(spns) -eq 10 ]] || fail "alias SPNs after prepare: $(spns), expected 10"
got=$(srv_tree fsroot2 pp-cli2-u5)
[[ $got == "$SMALL_FILES $SMALL_BYTES" ]] || fail "the tree of pp-cli2-u5 holds '$got'"
out=$(smb_n pp-cli1-u1 srvu1 fsroot1 'ls pp-cli1-u1/static/d01/*')
grep -q 'f0001\.' <<<"$out" || fail "smbclient as pp-cli1-u1: $out"
for c in cli1 cli2; do
	[[ $(block "$c") -eq 1 ]] || fail "$c: $(block "$c") hosts blocks of pvprep"
	on "$c" getent hosts srvu5 | grep -q '^198\.18\.0\.20 ' || fail "$c: srvu5 does not resolve to srv"
done
[[ -d $D/results ]] || fail "no results folder after prepare"

# 3. status: complete, in text and in JSON
pv "${P[@]}" status
expect_rc 0 "status after prepare"
expect_out "status: the lab is complete"
expect_out "trees +ok +10 of 10 users have a complete tree"
pv "${P[@]}" --json status
expect_rc 0 "status --json after prepare"
json 'd["complete"] and d["dc"]["users_present"]==10 and d["server"]["spns_present"]==10 and d["server"]["trees_complete"]==10 and all(c["block"]=="in place" for c in d["clients"])' ||
	fail "status JSON after prepare: $OUT"

# 4. a second prepare changes nothing: every phase 'already'; its time is reported
pv "${P[@]}" --json prepare
expect_rc 0 "second prepare"
json 'all(p["state"]=="already" for p in d["phases"])' || fail "second prepare changed something: $OUT"
json 'd["phases"][2]["result"]["trees"]["complete"]==10 and d["phases"][2]["result"]["trees"]["files_written"]==0' ||
	fail "second prepare touched the trees: $OUT"
secs=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["seconds"])' <<<"$OUT" 2>/dev/null)
echo "    second prepare (nothing to do): ${secs:-?} s" >&2
[[ $(tagged) -eq 10 && $(block cli1) -eq 1 && $(shares) -eq 2 && $(spns) -eq 10 ]] ||
	fail "a second prepare left duplicates: users $(tagged), blocks $(block cli1), shares $(shares), SPNs $(spns)"

# 5. the FSCT words: prepare <phase> is the phase alone
pv "${P[@]}" prepare client
expect_rc 0 "prepare client"
expect_out "^cli1: unchanged"

# 6. a damaged lab: status names what is missing; prepare puts back only that
on cli2 sh -c 'cp /etc/hosts /tmp/h && sed "/BEGIN provision pvprep/,/END provision pvprep/d" /tmp/h >/etc/hosts; rm -f /tmp/h'
on srv sh -c "rm -f $SP/fsroot1/pp-cli1-u3/static/d01/*"
pv "${P[@]}" status
expect_rc 13 "status of a damaged lab"
expect_out "client +MISSING +cli2: hosts block absent"
expect_out "trees +MISSING +9 of 10"
pv "${P[@]}" --json prepare
expect_rc 0 "prepare of a damaged lab"
json '[p["state"] for p in d["phases"]]==["already","already","done","done","already"]' ||
	fail "prepare of a damaged lab: $OUT"
[[ $(block cli2) -eq 1 ]] || fail "cli2's block not put back"

# 7. cleanup: every phase in reverse; then status says the lab holds nothing, and so do the tools
mkdir -p "$D/results/run1" # results are kept as a backup
pv "${P[@]}" cleanup --leave
expect_rc 0 "cleanup --leave"
for p in controller client server join dc; do
	expect_out "^cleanup: $p +done " "cleanup: $p done"
done
[[ $(tagged) -eq 0 ]] || fail "users left after cleanup: $(tagged)"
ou_exists "OU=pvprep,$BASE_DN" && fail "the lab's OU is left after cleanup"
[[ $(shares) -eq 0 ]] || fail "shares left after cleanup: $(shares)"
[[ $(spns) -eq 0 ]] || fail "alias SPNs left after cleanup: $(spns)"
joined && fail "srv still joined after cleanup --leave"
for c in cli1 cli2; do
	[[ $(block "$c") -eq 0 ]] || fail "$c: hosts block left after cleanup"
	name_resolves "$c" srvu5 && fail "$c: srvu5 still resolves after cleanup"
done
[[ -d $(ls -d "$D"/results.2* 2>/dev/null | head -n 1)/run1 ]] || fail "the results were not kept as a backup"
pv "${P[@]}" status
expect_rc 13 "status after cleanup"
expect_out "status: the lab holds nothing"
pv "${P[@]}" --json status
json 'd["empty"] and not d["complete"] and d["exit"]==13 and d["outcome"]=="incomplete"' ||
	fail "status JSON after cleanup: $OUT"

# 8. a second cleanup has nothing to do
pv "${P[@]}" --json cleanup --leave
expect_rc 0 "second cleanup"
json 'all(p["state"]=="already" for p in d["phases"])' || fail "second cleanup did something: $OUT"

finish
