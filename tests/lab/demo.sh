#!/usr/bin/env bash
# tests/lab/demo.sh: `make demo`: bring up the embedded lab, run the main job on it (check, then
# prepare: every phase at once), show what the lab holds (status) and the same with independent
# tools. The lab is left up to explore; `provision cleanup --leave` undoes the job and
# `make lab-down` removes the lab.
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

step "bringing up the lab (Samba AD DC, file server, two clients, in network namespaces)"
t0=$(date +%s)
$LAB_SH up
echo "lab up in $(($(date +%s) - t0)) s"

step "preflight, from the controller (ctl 198.18.0.5)"
pv check

step "prepare: dc ($USERS users per client), join, server (shares, alias SPNs, home trees), client (hosts aliases) and controller, independent work at once"
pv prepare --users "$USERS" --verify

step "what the lab holds now, as the hosts say"
pv status --users "$USERS"

step "the same, seen with independent tools"
echo "- users in the lab's OU (ldapsearch over LDAPS):"
$LAB_SH exec ctl -- ldapsearch -LLL -H ldaps://dc.lab.test -D Administrator@LAB.TEST \
	-y "$LAB/admin.pass" -b OU=provision,DC=lab,DC=test '(objectClass=user)' sAMAccountName |
	awk '/^sAMAccountName:/ { n++; if (n <= 3) print "    " $2 } END { print "    ... " n " users" }'
echo "- shares on srv (net conf listshares):"
$LAB_SH exec srv -- net conf listshares | sed 's/^/    /'
echo "- aliases on cli1 (getent hosts):"
$LAB_SH exec cli1 -- getent hosts srvu1 "srvu$USERS" | sed 's/^/    /'
cat <<TXT

A second 'prepare' finds everything in place and changes nothing (seconds, not minutes).
Explore:  tests/lab/lab.sh exec ctl -- $TOP/bin/provision -p $TOP/playbooks/lab.yaml status -v
Undo the job (every phase's cleanup, in reverse; exactly what it made):
          tests/lab/lab.sh exec ctl -- $TOP/bin/provision -p $TOP/playbooks/lab.yaml cleanup --leave
Remove the lab:  make lab-down
TXT
