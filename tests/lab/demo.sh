#!/usr/bin/env bash
# tests/lab/demo.sh: `make demo`: bring up the embedded lab and run the main job on it, as far
# as the phases are built, then show what happened with independent tools. The lab is left
# up to explore; `make lab-down` removes it.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
LAB_SH=tests/lab/lab.sh
LAB=${PROVISION_LAB_DIR:-/var/lib/provision-lab}
USERS=${DEMO_USERS:-10}

step() { printf '\n==> %s\n' "$*"; }
pv() {
	printf '$ provision -p playbooks/lab.yaml %s\n' "$*"
	$LAB_SH exec ctl -- "$TOP/bin/provision" -p "$TOP/playbooks/lab.yaml" "$@"
}
built() { ! "$TOP/bin/provision" --help | grep -q "^  $1 .*not built yet"; }

step "bringing up the lab (Samba AD DC, file server, two clients, in network namespaces)"
t0=$(date +%s)
$LAB_SH up
echo "lab up in $(($(date +%s) - t0)) s"

step "preflight, from the controller (ctl 198.18.0.5)"
pv check

step "prepare dc: $USERS users per client, with a Kerberos check of three of them"
pv dc --users "$USERS" --verify
if built join; then
	step "join: the file server joins the domain over SSH"
	pv join
fi
if built server; then
	step "prepare server: shares, alias SPNs, home trees"
	pv server --users "$USERS"
fi
step "prepare client: one hosts alias per user on every client"
pv client --users "$USERS"
step "prepare controller: results folder reset"
pv controller

step "what happened (seen with independent tools)"
echo "- users in the lab's OU (ldapsearch over LDAPS):"
$LAB_SH exec ctl -- ldapsearch -LLL -H ldaps://dc.lab.test -D Administrator@LAB.TEST \
	-y "$LAB/admin.pass" -b OU=provision,DC=lab,DC=test '(objectClass=user)' sAMAccountName |
	awk '/^sAMAccountName:/ { n++; if (n <= 3 || 0) print "    " $2 } END { print "    ... " n " users" }'
echo "- aliases on cli1 (getent hosts):"
$LAB_SH exec cli1 -- getent hosts srvu1 "srvu$USERS" | sed 's/^/    /'
cat <<TXT

Explore:  tests/lab/lab.sh exec ctl -- $TOP/bin/provision -p $TOP/playbooks/lab.yaml check -v
Undo, phase by phase (each removes exactly what its phase made):
          P="tests/lab/lab.sh exec ctl -- $TOP/bin/provision -p $TOP/playbooks/lab.yaml"
          \$P cleanup client; \$P cleanup server; \$P cleanup join --leave; \$P cleanup dc
Remove the lab:  make lab-down
TXT
