#!/usr/bin/env bash
# tests/integration/run.sh [--with-lab] [TEST...]: run the integration tests against the lab.
# --with-lab brings the lab up first and down at the end (make check does this).
# Prints one line per test and a closing "N passed, N failed" line; exits non-zero on failure.
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
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	start=$(date +%s)
	if bash "$t"; then
		echo "PASS $name ($(($(date +%s) - start)) s)"
		pass=$((pass + 1))
	else
		echo "FAIL $name ($(($(date +%s) - start)) s)"
		failed=$((failed + 1))
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
echo "integration: $pass passed, $failed failed"
[[ $failed -eq 0 ]]
