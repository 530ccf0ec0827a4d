#!/usr/bin/env bash
# tests/integration/run.sh [--with-lab] [TEST...]: run the integration tests against the lab.
# --with-lab brings the lab up first and down at the end (make check does this).
# Prints one line per test (PASS, FAIL, or SKIP for a test that exited 77: a part of it could
# not run on this lab, it says which on stderr) and a closing "N passed, N failed, N skipped"
# line; exits non-zero on a failure, and on a skip unless the test is allowed to skip on this
# lab: PV_ALLOW_SKIP, test names separated by spaces ("t_wait"), for a lab in use by others.
# CI allows none: a skip there is a test that did not run what it claims.
# PV_TIMEOUT (seconds, 600) bounds each provision call of the tests (lib.sh).
set -uo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP" || exit 1

with_lab=0
tests=()
for a in "$@"; do
	case $a in
	--with-lab) with_lab=1 ;;
	*) tests+=("$a") ;;
	esac
done
[[ ${#tests[@]} -gt 0 ]] || tests=(tests/integration/t_*.sh)

if [[ $with_lab -eq 1 ]]; then
	# Start from a fresh lab: a lab left up (by make demo, say) holds joined servers,
	# users and hosts blocks that the tests would trip over.
	tests/lab/lab.sh down >/dev/null || { echo "integration: lab down failed" >&2; exit 1; }
	t0=$(date +%s%N)
	tests/lab/lab.sh up || { echo "integration: lab up failed" >&2; exit 1; }
	ms=$((($(date +%s%N) - t0) / 1000000))
	echo "integration: lab up in $((ms / 1000)).$(printf %03d $((ms % 1000))) s" >&2
	trap 'tests/lab/lab.sh down' EXIT
elif ! tests/lab/lab.sh status >/dev/null 2>&1; then
	echo "integration: the lab is not up; run 'make lab-up' first (or use --with-lab)" >&2
	exit 1
fi
[[ -x bin/provision ]] || { echo "integration: bin/provision missing; run make" >&2; exit 1; }

pass=0
failed=0
skipped=0
refused=() # skipped, not allowed to
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	start=$(date +%s)
	bash "$t"
	rc=$?
	took="$(($(date +%s) - start)) s"
	if [[ $rc -eq 0 ]]; then
		echo "PASS $name ($took)"
		pass=$((pass + 1))
	elif [[ $rc -eq 77 ]]; then
		skipped=$((skipped + 1))
		if [[ " ${PV_ALLOW_SKIP:-} " == *" $name "* ]]; then
			echo "SKIP $name ($took; allowed here by PV_ALLOW_SKIP)"
		else
			echo "SKIP $name ($took; not allowed: a failure, unless PV_ALLOW_SKIP names it)"
			refused+=("$name")
		fi
	else
		echo "FAIL $name ($took)"
		failed=$((failed + 1))
	fi
	# the machine's own /dev/null, which a tool writing "to" it by renaming a file over it
	# would replace (every later '>/dev/null' then writes a file): named, and put back
	if [[ ! -c /dev/null ]]; then
		echo "FAIL $name: /dev/null is no longer a device (made again)"
		failed=$((failed + 1))
		rm -f /dev/null && mknod -m 666 /dev/null c 1 3
	fi
done
# With --with-lab the lab goes down here, and nothing it made may be left behind.
if [[ $with_lab -eq 1 ]]; then
	trap - EXIT
	t0=$(date +%s%N)
	if tests/lab/lab.sh down; then
		ms=$((($(date +%s%N) - t0) / 1000000))
		echo "integration: lab down in $((ms / 1000)).$(printf %03d $((ms % 1000))) s" >&2
	fi
	left=$(
		ip netns list 2>/dev/null | grep -o '^pvlab-[a-z0-9]*' || true
		ip link show pvlab0 >/dev/null 2>&1 && echo "bridge pvlab0"
		ls -d /etc/netns/pvlab-* 2>/dev/null || true
		grep -o '[^ ]*provision-lab[^ ]*' /proc/self/mountinfo 2>/dev/null || true
		[[ -e ${PROVISION_LAB_DIR:-/var/lib/provision-lab} ]] && echo "${PROVISION_LAB_DIR:-/var/lib/provision-lab}"
	)
	if [[ -n $left ]]; then
		echo "FAIL lab_down_leaves_nothing: left behind: $(echo $left)"
		failed=$((failed + 1))
	else
		echo "PASS lab_down_leaves_nothing"
		pass=$((pass + 1))
	fi
fi
echo "integration: $pass passed, $failed failed, $skipped skipped${refused[*]:+ (not allowed: ${refused[*]})}"
[[ $failed -eq 0 && ${#refused[@]} -eq 0 ]]
