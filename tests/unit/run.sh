#!/usr/bin/env bash
# tests/unit/run.sh JOBS BINARY...: the unit binaries (make unit), JOBS of them at a time; each
# one's output is printed whole once all have ended, in the order given, so that two never
# interleave; exits 1 when any failed, naming it. Each runs as `make unit` always ran them:
# every test in a process of its own (CK_FORK), leaks and undefined behaviour fatal.
set -uo pipefail
jobs=${1:?usage: run.sh JOBS BINARY...}
shift
dir=$(mktemp -d /tmp/pv-unit.XXXXXX) || exit 1
trap 'rm -rf "$dir"' EXIT
export PV_UNIT_DIR=$dir
printf '%s\n' "$@" | xargs -P "$jobs" -I{} sh -c \
	'n=$(basename "$1"); CK_FORK=yes ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	"$1" >"$PV_UNIT_DIR/$n.out" 2>&1; echo $? >"$PV_UNIT_DIR/$n.rc"' _ {}
fail=0
for t in "$@"; do
	n=$(basename "$t")
	cat "$dir/$n.out" 2>/dev/null
	if [[ $(cat "$dir/$n.rc" 2>/dev/null) != 0 ]]; then
		echo "unit: $n failed (exit $(cat "$dir/$n.rc" 2>/dev/null || echo "unknown: it did not run"))" >&2
		fail=1
	fi
done
exit $fail
