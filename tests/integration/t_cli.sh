#!/usr/bin/env bash
# The command line: help, version, usage errors, playbook errors, and what this version does
# not do (run with driver fsct: exit 12, not-implemented, saying so).
. "$(dirname "$0")/lib.sh"

pv --version
expect_rc 0 "--version"
expect_out "^provision [0-9]+\.[0-9]+\.[0-9]+$"
# libsmbclient (and the 66 Samba libraries behind it) is loaded only when a command needs it
ldd "$PV" | grep -q libsmbclient && fail "bin/provision is linked with libsmbclient: every command pays ~40 ms to load it"

pv --help
expect_rc 0 "--help"
for c in check prepare dc join server client controller run wait cleanup status; do
	expect_out "^  $c " "--help lists '$c'"
done
expect_out "^  6 +unreachable"

pv help check
expect_rc 0 "help check"
expect_out "usage: provision \[global options\] check"

pv frobnicate
expect_rc 2 "unknown command"
expect_err "unknown command 'frobnicate'"

pv check --users 3
expect_rc 2 "option of another command"
expect_err "'--users' is not an option of 'check'"

# what this version does not do exits 12 (not-implemented) and says so: every command is
# built now (none is marked so in --help, whose check this replaces), and `run` with driver
# fsct renders FSCT's commands (--dry-run) but does not start them; it stops at its checks,
# before it touches a host
pv --help
expect_no_out "not built yet" "--help marking a command not built"
pv -p "$PLAYBOOK" --set driver.name=fsct run
expect_rc 12 "run with driver fsct"
expect_err "driver 'fsct' is rendered, not run, by provision [0-9.]+: see the commands with --dry-run"

# 'lab' is gone: prepare, cleanup and status do its work; prepare takes FSCT's phase words
pv lab up
expect_rc 2 "the lab command is gone"
expect_err "unknown command 'lab'"
pv prepare sideways
expect_rc 2 "prepare with an unknown phase"
expect_err "expected one of dc\|join\|server\|client\|controller"
pv prepare client --via ssh
expect_rc 2 "an option of another phase"
expect_err "'--via' is not an option of 'prepare client'"
pv help prepare
expect_rc 0 "help prepare"
expect_out "usage: provision \[global options\] prepare \[dc\|join\|server\|client\|controller\]"

# playbook errors carry file:line:column and exit 3
cat >"$T_TMP/bad.yaml" <<'YAML'
domain:
  realm: LAB.TEST
  netbios: LAB
  dc: dc.lab.test
  ca_file: /nonexistent.pem
  admin_password: {file: /nonexistent}
  relam: x
YAML
pv -p "$T_TMP/bad.yaml" check
expect_rc 3 "playbook with an unknown key"
expect_out "bad\.yaml:7:3: unknown key 'relam'"

pv -p "$T_TMP/missing.yaml" check
expect_rc 9 "playbook that does not exist"

# a secret written in the playbook is refused
sed 's|admin_password: {file: /nonexistent}|admin_password: hunter2|' "$T_TMP/bad.yaml" |
	grep -v relam >"$T_TMP/secret.yaml"
pv -p "$T_TMP/secret.yaml" check
expect_rc 3 "plain secret in a playbook"
expect_out "secret.yaml:6:19: .*not allowed"
expect_no_out "hunter2" "output leaking the secret"

finish
