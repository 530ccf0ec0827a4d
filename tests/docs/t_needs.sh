#!/usr/bin/env bash
# tests/docs/t_needs.sh: what `check` asks a host about its prerequisites
# (phases/scripts/needs.sh), run here against smb.conf files made for each case through a
# testparm that reads them (PATH), its n_KEY=VALUE lines checked: the facts phases/needs.c
# judges (its unit test, check_phases.c, judges lines of this shape). A client's part (root,
# perl) and the server's: Samba's tools, server.service's command, the security, realm,
# registry shares (include = registry too) and the idmap of smb.conf. And the controller's own:
# check names the DC's CA file missing or not PEM. No lab, no network.
. "$(dirname "$0")/../integration/lib.sh"

SCRIPT=$TOP/phases/scripts/needs.sh
TP=$(command -v testparm) || { echo "t_needs: no testparm here (make deps installs samba)" >&2; exit 1; }
mkdir -p "$T_TMP/bin"
# testparm reading $CONF whatever it is asked
cat >"$T_TMP/bin/testparm" <<EOF
#!/bin/sh
exec "$TP" "\$@" "\$CONF"
EOF
chmod +x "$T_TMP/bin/testparm"

# needs VARS...: the script's output with VARS set before it (as phases/needs.c sets them)
needs() {
	OUT=$({ printf '%s\n' "$@"; cat "$SCRIPT"; } | PATH="$T_TMP/bin:$PATH" sh 2>"$T_TMP/err")
	RC=$?
	ERR=$(cat "$T_TMP/err")
	expect_rc 0 "needs.sh $*"
	[[ -z $ERR ]] || fail "needs.sh $* wrote to stderr: $ERR"
}
has() { grep -qxF -- "$1" <<<"$OUT" || { fail "${2:-needs.sh}: no line '$1'"; show; }; }
hasnt() { ! grep -q -- "^$1=" <<<"$OUT" || { fail "${2:-needs.sh}: a line $1= ($(grep -- "^$1=" <<<"$OUT"))"; show; }; }

# a client: root and perl, nothing of Samba's
needs role=client wg=LAB svc=
has "n_uid=$(id -u)" "client"
has "n_perl=$(command -v perl)" "client"
hasnt n_net "client"
hasnt n_security "client"

# a member server as the lab's: every fact there
export CONF=$T_TMP/member.conf
cat >"$CONF" <<'EOF'
[global]
	workgroup = LAB
	realm = LAB.TEST
	security = ads
	idmap config * : backend = tdb
	idmap config * : range = 3000-7999
	idmap config LAB : backend = rid
	idmap config LAB : range = 10000-999999
	registry shares = yes
EOF
needs role=server wg=LAB svc=sh
has "n_security=ADS" "member"
has "n_realm=LAB.TEST" "member"
has "n_registry_shares=Yes" "member"
has "n_idmap_star_backend=tdb" "member"
has "n_idmap_star_range=3000-7999" "member"
has "n_idmap_dom_backend=rid" "member"
has "n_idmap_dom_range=10000-999999" "member"
has "n_testparm=$T_TMP/bin/testparm" "member"
has "n_svc=$(command -v sh)" "member"
grep -q '^n_nss_passwd=' <<<"$OUT" || fail "member: no n_nss_passwd line"
hasnt n_include_registry "member"
hasnt n_testparm_failed "member"

# the domain's idmap in another case, registry shares through include = registry, a service
# command given by a path that is not there
cat >"$CONF" <<'EOF'
[global]
	workgroup = LAB
	realm = LAB.TEST
	security = ads
	idmap config * : backend = autorid
	idmap config * : range = 100000-19999999
	idmap config lab : backend = ad
	include = registry
EOF
needs role=server wg=LAB svc=/nonexistent/lab-service
has "n_include_registry=1" "include = registry"
has "n_idmap_star_backend=autorid" "autorid"
has "n_idmap_dom_backend=ad" "the domain's idmap, its name in another case"
hasnt n_idmap_dom_range "no range for the domain"
has "n_svc=" "a service command not there"

# a standalone server: no idmap, no registry shares, user security
cat >"$CONF" <<'EOF'
[global]
	workgroup = WG
	security = user
EOF
needs role=server wg=LAB svc=sh
has "n_security=USER" "standalone"
has "n_realm=" "standalone"
has "n_registry_shares=No" "standalone"
hasnt n_idmap_star_range "standalone"
hasnt n_idmap_dom_backend "standalone"

# an smb.conf that does not load
export CONF=$T_TMP/no-such.conf
needs role=server wg=LAB svc=sh
has "n_testparm_failed=1" "a missing smb.conf"
hasnt n_security "a missing smb.conf"

# the controller's own prerequisite, the DC's CA file, named by check before any TLS: run with
# no host to reach (a network namespace of its own where this machine allows one; the DC's name
# under .invalid and its address the loopback's, down there)
NET=()
unshare -n true 2>/dev/null && NET=(unshare -n)
cat >"$T_TMP/ca.yaml" <<'YAML'
domain: {realm: LAB.INVALID, netbios: LAB, dc: dc.lab.invalid, dc_address: 127.0.0.1,
         ca_file: no-such-ca.pem, admin_password: {env: T_NEEDS_PW}}
YAML
ca_check() {
	OUT=$(T_NEEDS_PW=x timeout 120 "${NET[@]}" "$PV" -p "$T_TMP/ca.yaml" check "$@" 2>"$T_TMP/err")
	RC=$?
	ERR=$(cat "$T_TMP/err")
}
ca_check
expect_rc 3 "check with no CA file"
expect_out "^FAIL +needs +controller +domain\.ca_file '$T_TMP/no-such-ca\.pem' cannot be read: No such file or directory; put there the CA certificate \(PEM\) that signed the DC's LDAPS certificate"
printf 'not a certificate\n' >"$T_TMP/der.pem"
ca_check --ca-file "$T_TMP/der.pem"
expect_rc 3 "check with a CA file that is not PEM"
expect_out "^FAIL +needs +controller +domain\.ca_file '$T_TMP/der\.pem' holds no PEM certificate"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T_TMP/ca.key" -out "$T_TMP/ca.pem" -days 1 \
	-subj "/CN=t_needs CA" >/dev/null 2>&1 || fail "openssl could not make a CA"
cat "$T_TMP/ca.pem" "$T_TMP/ca.pem" >"$T_TMP/bundle.pem"
ca_check --ca-file "$T_TMP/bundle.pem"
expect_out "^ok +needs +controller +domain\.ca_file $T_TMP/bundle\.pem: 2 PEM certificates"
grep -Eq "^FAIL +needs" <<<"$OUT" && fail "check named a good CA bundle: $OUT"

# the script checked as `make lint` checks it: what goes to hosts stays POSIX sh
if command -v shellcheck >/dev/null; then
	shellcheck -s sh "$SCRIPT" || fail "shellcheck $SCRIPT"
fi
finish
