#!/usr/bin/env bash
# tests/docs/t_needs.sh: what `check` asks a host about its prerequisites
# (phases/scripts/needs.sh), run here against smb.conf files made for each case through a
# testparm that reads them (PATH), its n_KEY=VALUE lines checked: the facts phases/needs.c
# judges (its unit test, check_phases.c, judges lines of this shape). A client's part (root,
# perl) and the server's: Samba's tools, server.service's command, the security, realm,
# registry shares (include = registry too) and the idmap of smb.conf. No lab, no network.
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

# the script checked as `make lint` checks it: what goes to hosts stays POSIX sh
if command -v shellcheck >/dev/null; then
	shellcheck -s sh "$SCRIPT" || fail "shellcheck $SCRIPT"
fi
finish
