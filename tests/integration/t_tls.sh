#!/usr/bin/env bash
# TLS trust is the playbook's CA and nothing else: a second CA in a cacertdir named by the
# environment (LDAPTLS_CACERTDIR, as ldap.conf's TLS_CACERTDIR would), with LDAPTLS_REQCERT=never
# beside it, signs a rogue certificate for dc.lab.test served by `openssl s_server`; provision
# must refuse it (status 5) before any LDAP is spoken, and the rogue server must see no finished
# handshake. The real DC still works with the same environment. (libldap 2.5 with GnuTLS does not
# carry TLS_CACERTDIR into a handle's own TLS context, so this held before provision cleared it
# too; the test pins it, whatever libldap does.)
. "$(dirname "$0")/lib.sh"

R=$T_TMP/rogue
mkdir -p "$R/cadir"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=Rogue CA" \
	-keyout "$R/ca.key" -out "$R/cadir/rogue-ca.pem" >/dev/null 2>&1 || fail "rogue CA"
openssl req -newkey rsa:2048 -nodes -subj "/CN=dc.lab.test" -keyout "$R/srv.key" \
	-out "$R/srv.csr" >/dev/null 2>&1 || fail "rogue CSR"
printf 'subjectAltName=DNS:dc.lab.test\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$R/ext"
openssl x509 -req -in "$R/srv.csr" -CA "$R/cadir/rogue-ca.pem" -CAkey "$R/ca.key" \
	-CAcreateserial -days 2 -extfile "$R/ext" -out "$R/srv.pem" >/dev/null 2>&1 || fail "rogue certificate"
openssl rehash "$R/cadir" >/dev/null 2>&1 || c_rehash "$R/cadir" >/dev/null 2>&1
# the rogue certificate does verify against the rogue CA: the cacertdir would trust it
openssl verify -CApath "$R/cadir" "$R/srv.pem" >/dev/null 2>&1 || fail "the rogue chain does not verify by itself"

# the rogue server, on the controller's own address; dc.lab.test points there for provision
{ echo "198.18.0.5 dc.lab.test dc"; grep -v 'dc\.lab\.test' /etc/netns/pvlab-ctl/hosts; } >"$R/hosts"
# (s_server ends when its stdin does: a sleep keeps it open)
on ctl sh -c "sleep 6 | timeout 10 openssl s_server -accept 198.18.0.5:636 -cert '$R/srv.pem' \
	-key '$R/srv.key' -naccept 1" >"$R/server.log" 2>&1 &
srv_pid=$!
for _ in $(seq 50); do on ctl ss -ltn 2>/dev/null | grep -q '198\.18\.0\.5:636' && break; sleep 0.1; done
on ctl unshare -m sh -c "mount --bind '$R/hosts' /etc/hosts &&
	LDAPTLS_CACERTDIR='$R/cadir' LDAPTLS_REQCERT=never ${PVT[*]} '$PV' -p '$PLAYBOOK' --json dc --dry-run" \
	>"$T_TMP/out" 2>"$T_TMP/err"
RC=$?
OUT=$(cat "$T_TMP/out")
ERR=$(cat "$T_TMP/err")
wait "$srv_pid" 2>/dev/null
expect_rc 5 "LDAPS to a rogue server whose CA only the environment's cacertdir holds"
expect_err "TLS with DC 'dc\.lab\.test' failed"
if grep -aEq 'Shared ciphers|CIPHER is|^-----BEGIN SSL SESSION' "$R/server.log"; then
	fail "provision finished a TLS handshake with the rogue server: $(head -c 400 "$R/server.log")"
fi

# the same environment against the real DC: the playbook's CA still works
on ctl env LDAPTLS_CACERTDIR="$R/cadir" LDAPTLS_REQCERT=never "${PVT[@]}" "$PV" -p "$PLAYBOOK" dc --dry-run \
	>"$T_TMP/out" 2>"$T_TMP/err"
RC=$?
OUT=$(cat "$T_TMP/out")
ERR=$(cat "$T_TMP/err")
expect_rc 0 "dc --dry-run against the real DC with the rogue cacertdir in the environment"
finish
