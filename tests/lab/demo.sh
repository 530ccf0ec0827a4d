#!/usr/bin/env bash
# tests/lab/demo.sh: `make demo`: bring up the embedded lab and go through a test day on it:
# check, prepare (every phase at once), what the lab holds (status, and the same with
# independent tools), a short run of the lab's load (every user reading its tree through its
# own alias with smbclient) with the server watched, a wait until the server's write queue has
# drained, and cleanup (exactly what prepare made). It ends by pointing at the run's
# report.html (docs/report.md). The lab is left up, empty, to explore; `make lab-down`
# removes it.
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
step "run: a short ramp of the lab's load (driver 'command' in playbooks/lab.yaml), the server watched"
pv run --min-users 4 --max-users 12 --step 8 --duration 6 --warmup 1 --id demo
echo "- what the run gathered on the controller (report.html: the run on one page):"
(cd "$LAB/results/demo" && find . -maxdepth 2 | sort | sed 's/^/    /')

step "wait until the server's write queue (Dirty + Writeback in /proc/meminfo) has drained"
pv wait --drain --probe writeback --threshold 65536 --timeout 120

step "cleanup: every phase's undo, in reverse; exactly what prepare made"
pv cleanup --leave

step "what the lab holds after cleanup (status 13: nothing of this lab is left)"
pv status --users "$USERS" || [ $? -eq 13 ]
# cleanup moved the results folder aside: the demo's page is in the newest backup
report=$(ls -td "$LAB"/results.*/demo/report.html 2>/dev/null | head -1)
cat <<TXT

The lab is up and empty. Do it again, step by step:
  tests/lab/lab.sh exec ctl -- $TOP/bin/provision -p $TOP/playbooks/lab.yaml prepare
  tests/lab/lab.sh exec ctl -- $TOP/bin/provision -p $TOP/playbooks/lab.yaml run
  tests/lab/lab.sh exec ctl -- $TOP/bin/provision -p $TOP/playbooks/lab.yaml status -v
A run's results: $LAB/results/<run-id>/ (manifest.json, step-NN/<host>/, watch.csv); cleanup
moved the demo's into the backup beside it: $LAB/results.<time>/demo/
Remove the lab:  make lab-down

The demo run on one page (open it in a browser; it fetches nothing, docs/report.md):
  file://${report:-$LAB/results.<time>/demo/report.html}
TXT
