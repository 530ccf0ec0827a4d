#!/usr/bin/env bash
# scale/t_dcs.sh (make check-scale): a domain with two DCs (DCS=2). The users are made on dc
# while the server's winbindd is pinned to dc2 and dc2's inbound replication is paused:
# server waits for dc2 (a progress line) instead of failing on "no such user", and goes on
# once replication resumes; status and check say which DC the server uses; cleanup with
# replication paused deletes on dc, then on dc2 what replication did not bring, so that
# neither DC holds anything of the lab. Then the other way round, with prepare: dc2 written,
# the server's winbindd on dc, dc's inbound replication paused. Checked with ldapsearch on each
# DC and wbinfo. No sleep stands for replication: "the users are not back once it resumed" is
# checked once each DC has pulled from the other since (a marker OU made on one, seen on the
# other, removed), and a paused wait is resumed once server or prepare says it waits.
. "$(dirname "$0")/../lib.sh"

PB=(-p "$LAB/lab.yaml" --set users.per_client=2)
N=$(grep -c '^cli[0-9]* ansible_host=' "$LAB/clients.ini")
U=$((N * 2)) # the lab's users
lds2() {
	on ctl ldapsearch -LLL -o ldif-wrap=no -H ldaps://dc2.lab.test -D "Administrator@LAB.TEST" \
		-y "$LAB/admin.pass" "$@"
}
# ldm_on DC: ldapmodify over LDAPS as the admin on that DC, LDIF on stdin
ldm_on() {
	on ctl ldapmodify -H "ldaps://$1.lab.test" -D "Administrator@LAB.TEST" -y "$LAB/admin.pass" "${@:2}"
}
# has_mark DC NAME: 0 when DC holds the marker OU NAME, 1 when it does not, 2 when the probe failed
has_mark() {
	local f=lds
	[[ $1 == dc2 ]] && f=lds2
	probe_has "the marker $2 on $1 (ldapsearch)" "0 32" '^dn:' $f -b "OU=$2,$BASE_DN" -s base dn
}
# replicated FROM TO: until TO has pulled from FROM since now: a marker OU made on FROM is
# seen on TO (replication sends a DC's changes in the order it made them, so TO then holds
# every change FROM made before it), then removed, its removal seen on TO too (120 s each)
replicated() {
	local from=$1 to=$2 m="pv-mark-$$-$RANDOM"
	printf 'dn: OU=%s,%s\nchangetype: add\nobjectClass: organizationalUnit\n\n' "$m" "$BASE_DN" |
		ldm_on "$from" >/dev/null || { fail "the marker $m could not be made on $from"; return 1; }
	wait_until 120 "$to replicating from $from (the marker $m)" \
		eval '(($(has_mark "$to" "$m"; echo $?) == 0))'
	printf 'dn: OU=%s,%s\nchangetype: delete\n\n' "$m" "$BASE_DN" | ldm_on "$from" >/dev/null ||
		fail "the marker $m could not be removed from $from"
	wait_until 120 "$to replicating the marker's removal from $from" \
		eval '(($(has_mark "$to" "$m"; echo $?) == 1))'
}
on_dc() { # DC: the lab's users it holds (-1: the probe failed, lib.sh)
	local f=lds
	[[ $1 == dc2 ]] && f=lds2
	probe_count "on_dc $1 (ldapsearch for $TAG)" 0 '^dn:' $f -b "$BASE_DN" "(&(objectClass=user)(description=$TAG))" dn
}
pin_winbind() { # DC: srv's winbindd made to use DC (it remembers the DC it used in its
	# cache, which a restart keeps: flushed first)
	"$LAB_SH" srv-conf "password server=$1.lab.test"
	on srv net cache flush
	on srv "$LAB/bin/lab-service" restart winbindd >/dev/null
	for _ in $(seq 50); do on srv wbinfo -P 2>/dev/null | grep -q "\"$1.lab.test\"" && break; sleep 0.2; done
	on srv wbinfo -P | grep -q "\"$1.lab.test\"" || fail "srv's winbindd does not use $1: $(on srv wbinfo -P 2>&1)"
}
grep -q other_dcs "$LAB/lab.yaml" || { fail "the lab has no second DC; make check-scale brings it up"; finish; exit; }

pv "${PB[@]}" check
expect_rc 0 "check with two DCs"
expect_out "ok +ldap +dc2.lab.test +another DC: bound as Administrator"
expect_out "ok +dc +controller +writes to dc.lab.test .*1 other DC named"

# the server joined (through dc), then pinned to dc2
pv "${PB[@]}" join
expect_rc 0 "join"
pin_winbind dc2

# users on dc while dc2 does not replicate; server waits, then goes on
"$LAB_SH" repl pause
pv "${PB[@]}" dc
expect_rc 0 "dc on dc"
[[ $(on_dc dc2) -eq 0 ]] || fail "dc2 got users while its replication was paused"
pv_bg "${PB[@]}" -v server
# resumed once server says it waits (the resume takes effect at dc2's next pull: 5 s)
pv_when "dc2.lab.test holds 0 of the $U users made on dc.lab.test: waiting for replication" 60
"$LAB_SH" repl resume
pv_bg_wait 300
expect_rc 0 "server once dc2 has the users"
expect_out "waited [0-9.]+ s for dc2.lab.test \(the DC srv uses\)"
echo "  $(grep -o 'waited [0-9.]* s for dc2.lab.test' <<<"$OUT") (paused, resumed once it waited)" >&2
[[ $(on_dc dc2) -eq $U ]] || fail "dc2 holds $(on_dc dc2) users, not $U"
[[ $(srv_tree fsroot2 cli1-u2) == "$SMALL_FILES $SMALL_BYTES" ]] ||
	fail "cli1-u2's tree is '$(srv_tree fsroot2 cli1-u2)', not $SMALL_FILES files"

pv "${PB[@]}" status
expect_rc 13 "status: the clients' blocks and the results folder are not made yet"
expect_out "own DC +ok +dc2.lab.test \(the DC srv uses\) holds $U of the $U users made on dc.lab.test"
pv "${PB[@]}" check
expect_out "ok +dc +srv +winbindd talks to dc2.lab.test"

# cleanup with dc2 not replicating: deleted on dc, then the rest on dc2 itself
"$LAB_SH" repl pause
pv "${PB[@]}" --set domain.replication_timeout=5 cleanup dc
expect_rc 0 "cleanup dc with dc2's replication paused"
expect_out "cleanup dc: dc2.lab.test: replication was behind: $U users deleted there"
echo "  $(grep '^cleanup dc:' <<<"$OUT" | tr '\n' ' ')" >&2
[[ $(on_dc dc) -eq 0 && $(on_dc dc2) -eq 0 ]] || fail "users left: dc $(on_dc dc), dc2 $(on_dc dc2)"
"$LAB_SH" repl resume
replicated dc dc2
replicated dc2 dc
[[ $(on_dc dc) -eq 0 && $(on_dc dc2) -eq 0 ]] || fail "users back after replication resumed"
ou_exists "$LAB_OU" && fail "the OU is left on dc"
probe_has "the OU on dc2 (ldapsearch)" "0 32" '^dn:' lds2 -b "$LAB_OU" -s base dn && fail "the OU is left on dc2"

# The other way round: dc writes to dc2, the server's winbindd uses dc, and dc does not
# replicate in. The playbook names dc2 as the DC written and dc as the other.
pin_winbind dc
sed -e 's/^  dc: dc\.lab\.test .*/  dc: dc2.lab.test\n  dc_address: 198.18.0.11/' \
	-e 's/^  other_dcs: .*/  other_dcs: [{name: dc.lab.test, address: 198.18.0.10}]/' "$LAB/lab.yaml" >"$T_TMP/rev.yaml"
grep -q '^  dc: dc2.lab.test' "$T_TMP/rev.yaml" && grep -q 'other_dcs: \[{name: dc.lab.test' "$T_TMP/rev.yaml" ||
	fail "the reversed playbook was not written: $(grep -E '^  (dc|other_dcs):' "$T_TMP/rev.yaml")"
RB=(-p "$T_TMP/rev.yaml" --set users.per_client=2)
pv "${RB[@]}" check
expect_out "ok +dc +controller +writes to dc2.lab.test"
# (prepare this time: dc, join, server, client and controller in one command)
"$LAB_SH" repl pause dc
pv_bg "${RB[@]}" -v prepare
pv_when "dc.lab.test holds 0 of the $U users made on dc2.lab.test: waiting for replication" 120
[[ $(on_dc dc2) -eq $U ]] || fail "dc2 holds $(on_dc dc2) users, not $U"
[[ $(on_dc dc) -eq 0 ]] || fail "dc got users while its replication was paused"
"$LAB_SH" repl resume dc
pv_bg_wait 300
expect_rc 0 "prepare once dc has the users"
expect_out "waited [0-9.]+ s for dc.lab.test \(its DC\) to replicate the users"
echo "  reversed: $(grep -o 'waited [0-9.]* s for dc.lab.test' <<<"$OUT") (paused, resumed once it waited)" >&2
[[ $(on_dc dc) -eq $U ]] || fail "dc holds $(on_dc dc) users, not $U"
[[ $(srv_tree fsroot2 cli1-u2) == "$SMALL_FILES $SMALL_BYTES" ]] ||
	fail "cli1-u2's tree is '$(srv_tree fsroot2 cli1-u2)', not $SMALL_FILES files (reversed)"
pv "${RB[@]}" status
expect_rc 0 "status after prepare"
expect_out "own DC +ok +dc.lab.test \(the DC srv uses\) holds $U of the $U users made on dc2.lab.test"
"$LAB_SH" repl pause dc
pv "${RB[@]}" --set domain.replication_timeout=5 cleanup dc
expect_rc 0 "cleanup with dc's replication paused"
expect_out "cleanup dc: dc.lab.test: replication was behind: $U users deleted there"
echo "  reversed: $(grep '^cleanup dc:' <<<"$OUT" | tr '\n' ' ')" >&2
[[ $(on_dc dc) -eq 0 && $(on_dc dc2) -eq 0 ]] || fail "users left (reversed): dc $(on_dc dc), dc2 $(on_dc dc2)"
"$LAB_SH" repl resume dc
replicated dc2 dc
replicated dc dc2
[[ $(on_dc dc) -eq 0 && $(on_dc dc2) -eq 0 ]] || fail "users back after dc's replication resumed"
ou_exists "$LAB_OU" && fail "the OU is left on dc (reversed)"
probe_has "the OU on dc2 (ldapsearch)" "0 32" '^dn:' lds2 -b "$LAB_OU" -s base dn &&
	fail "the OU is left on dc2 (reversed)"

pv "${PB[@]}" cleanup --leave
expect_rc 0 "cleanup --leave"
"$LAB_SH" srv-conf
finish
