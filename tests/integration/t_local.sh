#!/usr/bin/env bash
# What another local user of the controller, and a playbook's values, can make provision do
# (issue 22): the lab lock lives in a folder only root writes to, so a user holding a lock on
# a file of the old world-writable /run/lock (or anywhere else) blocks nothing; values that
# fill the command driver's placeholders never run as shell code; an unknown placeholder is
# refused when the playbook is read; control characters reach no terminal. Lab 'pvlocal';
# nothing on the lab hosts is changed.
. "$(dirname "$0")/lib.sh"

P=(-p "$PLAYBOOK" --set lab=pvlocal)

# 1. the lock: a user holds an fcntl lock on /run/lock/provision-pvlocal.lock (the old name)
old=/run/lock/provision-pvlocal.lock
flag=$(mktemp -d /tmp/pv-lockflag.XXXXXX) # where user nobody says it holds the lock
chmod 0777 "$flag"
rm -f "$old" # a file an older provision left there (as root): the user makes its own
runuser -u nobody -- python3 -c '
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.lockf(fd, fcntl.LOCK_EX)
open(sys.argv[2] + "/held", "w").close()
time.sleep(120)' "$old" "$flag" &
holder=$!
for _ in $(seq 100); do [[ -e $flag/held ]] && break; sleep 0.05; done
[[ -e $flag/held ]] || fail "the local user's lock holder did not start"
pv "${P[@]}" cleanup client
expect_rc 0 "cleanup client while a local user holds a lock on $old"
[[ $(stat -c '%F %a %U' /run/provision 2>&1) == "directory 700 root" ]] ||
	fail "the lock folder is not root's alone: $(stat -c '%F %a %U' /run/provision 2>&1)"
[[ $(stat -c '%F %a' /run/provision/pvlocal.lock 2>&1) == "regular empty file 600" ]] ||
	fail "the lock file is not a 0600 plain file: $(stat -c '%F %a' /run/provision/pvlocal.lock 2>&1)"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
rm -rf "$old" "$flag"
# PROVISION_LOCK_DIR is still honoured, and a folder others may write to is refused
mkdir -m 0700 "$T_TMP/locks"
on ctl env PROVISION_LOCK_DIR="$T_TMP/locks" "${PVT[@]}" "$PV" "${P[@]}" cleanup client >/dev/null 2>&1 ||
	fail "cleanup client with PROVISION_LOCK_DIR=$T_TMP/locks failed"
[[ -f $T_TMP/locks/pvlocal.lock ]] || fail "PROVISION_LOCK_DIR was not used"
on ctl env PROVISION_LOCK_DIR=/tmp "${PVT[@]}" "$PV" "${P[@]}" cleanup client >"$T_TMP/out" 2>"$T_TMP/err"
RC=$? OUT=$(cat "$T_TMP/out") ERR=$(cat "$T_TMP/err")
[[ $RC -ne 0 ]] || fail "a lock folder anyone may write to (/tmp) was accepted"
expect_err "the lock folder /tmp is writable by others"

# 2. placeholders: a value that is shell code never reaches a command line; an unknown
# placeholder is refused when the playbook is read (3, its place named), not by the run
rm -f /tmp/pv-PWNED
pv "${P[@]}" --set 'controller.results=/tmp/x$(touch /tmp/pv-PWNED)' run --dry-run
expect_rc 3 "controller.results holding \$( )"
expect_err "'controller.results' is '/tmp/x\\\$\(touch /tmp/pv-PWNED\)', which contains '\\\$'"
pv "${P[@]}" --set 'server.share_template=f`touch /tmp/pv-PWNED`{k}' run --dry-run
expect_rc 3 "server.share_template holding \` \`"
[[ -e /tmp/pv-PWNED ]] && fail "a placeholder's value ran as shell code"
sed 's/^  client_command: |$/  client_command: |\n    echo {nope}/' "$PLAYBOOK" >"$T_TMP/bad.yaml"
line=$(grep -n '^  client_command: |$' "$T_TMP/bad.yaml" | cut -d: -f1)
pv -p "$T_TMP/bad.yaml" --set lab=pvlocal run --dry-run
expect_rc 3 "an unknown placeholder"
expect_err "bad.yaml:$line:19: 'driver.client_command' uses '\{nope\}' \(character 6 of the command\)"
pv -p "$T_TMP/bad.yaml" --set lab=pvlocal check
expect_rc 3 "check on a playbook with an unknown placeholder"
# a playbook in a folder with a space, its results folder relative to it: {results} is quoted
# where it lands
mkdir -p "$T_TMP/my lab"
sed 's#^  results: .*#  results: results#' "$PLAYBOOK" >"$T_TMP/my lab/lab.yaml"
pv -p "$T_TMP/my lab/lab.yaml" --set lab=pvlocal --set 'driver.controller_command=echo hi >{results}/x' run --dry-run
expect_rc 0 "run --dry-run from a folder with a space"
expect_out "echo hi >'$T_TMP/my lab/results/[^']*'/x"

# 3. control characters: a lab id with ESC and BEL is shown escaped, on stdout and stderr
pv -p "$PLAYBOOK" --set $'lab=x\033]0;pwned\007' check
expect_rc 3 "a lab id with control characters"
grep -q $'[\033\007]' "$T_TMP/out" "$T_TMP/err" && fail "raw ESC or BEL reached the terminal: $(od -c "$T_TMP/err" | head -3)"
expect_out "'lab' is 'x\\\\x1b\]0;pwned\\\\x07'"
pv -p "$PLAYBOOK" --set $'lab=x\033]0;pwned\007' --json check
grep -q $'[\033\007]' "$T_TMP/out" "$T_TMP/err" && fail "raw ESC or BEL with --json"
expect_out 'x\\u001B\]0;pwned\\u0007'

# 4. the local controller's password file lives for its step only: step 1's controller command
# names it in its results, and the drain probe between the steps, on srv (the lab's hosts
# share one file system), says the queue is 1 while that file is there: a file left after its
# step makes the wait time out (14)
id=pvpw-$$
on ctl mkdir -p "$LAB/results"
pv -p "$PLAYBOOK" --set lab=pvlocal --set driver.min_users=2 --set driver.max_users=4 \
	--set driver.step=2 --set driver.duration=1 --set driver.warmup=0 --set driver.watch=0 \
	--set 'driver.client_command=true' \
	--set 'driver.controller_command=test -s {password_file} && echo {password_file} >{results}/pwpath' \
	--set "drain.command=f=\$(cat $LAB/results/$id/step-01/controller/pwpath) && if [ -e \"\$f\" ]; then echo 1; else echo 0; fi" \
	--set drain.between_steps=true --set drain.timeout=5 --set drain.settle=0 --set drain.interval=1 \
	run --id "$id"
expect_rc 0 "a 2-step run whose drain probe looks for step 1's password file"
[[ -s $LAB/results/$id/step-01/controller/pwpath ]] || fail "step 1's controller command did not see its password file"
rm -rf "${LAB:?}/results/$id"

finish
