#!/usr/bin/env bash
# provision check against the lab: all good, then each broken case fails with its own code.
. "$(dirname "$0")/lib.sh"

# 1. the lab as brought up: usable (smb may only warn: srv is not joined yet)
pv -p "$PLAYBOOK" check
expect_rc 0 "check on the lab"
for c in "playbook" "secret +admin" "dns +dc.lab.test" "ldap +dc.lab.test" "ldaps +dc.lab.test" \
	"kerberos +LAB.TEST" "ssh +srv" "ssh +cli1" "ssh +cli2"; do
	expect_out "^ok +$c" "check line '$c'"
done
expect_out "usable"
expect_no_out "^FAIL"

# JSON: one object, every check present, ok true (parsed by an independent tool)
pv -p "$PLAYBOOK" --json check
expect_rc 0 "check --json"
if ! python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["ok"] and d["exit"]==0; \
assert {c["target"] for c in d["checks"] if c["check"]=="ssh"}=={"srv","cli1","cli2"}' <<<"$OUT"; then
	fail "check --json output is not the expected JSON"
	show
fi

# 2. sshd on cli2 stopped: unreachable (6), the line names cli2, the others still pass
"$LAB_SH" sshd cli2 stop
pv -p "$PLAYBOOK" check
"$LAB_SH" sshd cli2 start
expect_rc 6 "check with sshd on cli2 stopped"
expect_out "^FAIL +ssh +cli2 .*198\.18\.0\.32.*[Rr]efused"
expect_out "^ok +ssh +cli1"
expect_out "^ok +ssh +srv"

# 3. wrong admin password: credentials (4) from LDAPS and from Kerberos
printf 'not-the-password' >"$T_TMP/wrong.pass"
chmod 0600 "$T_TMP/wrong.pass"
pv -p "$PLAYBOOK" check --admin-password-file "$T_TMP/wrong.pass"
expect_rc 4 "check with a wrong admin password"
expect_out "^FAIL +ldaps .*refused the credentials"
expect_out "^FAIL +kerberos .*refused"
expect_no_out "not-the-password" "output leaking the password"

# 4. a CA that did not sign the DC's certificate: trust (5)
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T_TMP/other.key" -out "$T_TMP/other.pem" \
	-days 1 -subj "/CN=Other CA" >/dev/null 2>&1
pv -p "$PLAYBOOK" check --ca-file "$T_TMP/other.pem"
expect_rc 5 "check with a CA that does not match"
expect_out "^FAIL +ldaps .*TLS.*other\.pem"
expect_out "^ok +kerberos"

# 5. the DC not answering on LDAPS names the DC and is unreachable (6): point at a lab address
#    where nothing listens (ctl itself)
pv -p "$PLAYBOOK" --set domain.dc=ctl.lab.test check
expect_rc 6 "check with a DC that does not answer"
expect_out "^FAIL +ldap +ctl\.lab\.test .*(refused|Connection)"

finish
