#!/usr/bin/env bash
# tests/fuzz/run.sh: runs the libFuzzer targets the Makefile built (build/fuzz/bin/fuzz_<name>).
#
#   run.sh replay BIN...          every input of tests/fuzz/corpus/<name>/ and
#                                 tests/fuzz/crashes/<name>/ once; fails on any crash
#   run.sh fuzz SECONDS BIN...    fuzz each target for SECONDS, one after the other, on a copy
#                                 of its corpus in build/fuzz/corpus/<name>/ (new inputs go
#                                 there, not into the tree), then print per target what it did
#
# Targets run one at a time: the machine has two cores and ASan's shadow memory is large.
# A target may also be a Perl script tests/fuzz/fuzz_<name>.pl (the keytab reader runs in
# Perl on the server): it takes "replay DIR..." and "fuzz SECONDS WORK ART DIR..." and reports
# as libFuzzer does.
# A crash is written to build/fuzz/artifacts/<name>/; once fixed, it moves to
# tests/fuzz/crashes/<name>/ and is replayed forever (make fuzz-replay, in make check).
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
mode=${1:-}
shift || true

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

name_of() {
	local b=${1##*/}
	b=${b%.pl}
	echo "${b#fuzz_}"
}

# The last "cov: N ft: N corp: N/..." libFuzzer printed, as "cov ft corp".
coverage() {
	grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$1" | tail -n 1 |
		awk '{ print $2, $4, $6 }'
}

stat_of() { grep -E "^stat::$2:" "$1" | awk '{ print $2 }' | tail -n 1; }

# The directories of inputs for a target: its committed corpus and its crash reproducers.
inputs() {
	local name=$1
	[[ -d tests/fuzz/corpus/$name ]] && echo "tests/fuzz/corpus/$name"
	[[ -d tests/fuzz/crashes/$name ]] && echo "tests/fuzz/crashes/$name"
	return 0
}

# libFuzzer options a target may add, one per line (tests/fuzz/<name>.options).
options() {
	local f=tests/fuzz/$1.options
	[[ -f $f ]] && grep -vE '^(#|$)' "$f"
	[[ -f tests/fuzz/$1.dict ]] && echo "-dict=tests/fuzz/$1.dict"
	return 0
}

replay() {
	local fail=0 bin name log dirs opts n cov ft run
	mkdir -p build/fuzz/log
	for bin in "$@"; do
		name=$(name_of "$bin")
		log=build/fuzz/log/$name.replay.log
		mapfile -t dirs < <(inputs "$name")
		mapfile -t opts < <(options "$name" | grep -v '^-dict=')
		n=0
		((${#dirs[@]})) && n=$(find "${dirs[@]}" -type f | wc -l)
		# -runs=0 with directories: each input is executed once, nothing is mutated
		if [[ $bin == *.pl ]]; then
			run=(perl "$bin" replay "${dirs[@]}")
		else
			run=("$bin" -runs=0 "${opts[@]}" "${dirs[@]}")
		fi
		if "${run[@]}" >"$log" 2>&1; then
			read -r cov ft _ < <(coverage "$log")
			printf 'fuzz-replay: %-10s %4d inputs  cov %-5s ft %-6s ok\n' "$name" "$n" \
				"${cov:-?}" "${ft:-?}"
		else
			echo "fuzz-replay: $name: FAILED over ${dirs[*]:-no inputs} (full log: $log)" >&2
			grep -E 'ERROR|runtime error|Running:|Test unit written|SUMMARY' "$log" |
				head -n 20 >&2
			fail=1
		fi
	done
	return $fail
}

fuzz() {
	local seconds=$1 fail=0 bin name log work art opts extra cov ft corp run
	shift
	mkdir -p build/fuzz/log
	for bin in "$@"; do
		name=$(name_of "$bin")
		log=build/fuzz/log/$name.fuzz.log
		work=build/fuzz/corpus/$name
		art=build/fuzz/artifacts/$name/
		mkdir -p "$work" "$art"
		[[ -d tests/fuzz/corpus/$name ]] && cp -n tests/fuzz/corpus/"$name"/* "$work"/ 2>/dev/null
		mapfile -t opts < <(options "$name")
		# a big crash reproducer (ntlm's is 64 KiB) would otherwise raise the length of
		# every mutation to its size, and the speed would drop by 30 times
		[[ " ${opts[*]} " == *" -max_len="* ]] || opts+=(-max_len=4096)
		extra=()
		[[ -d tests/fuzz/crashes/$name ]] && extra=("tests/fuzz/crashes/$name")
		echo "fuzz: $name for ${seconds} s (log: $log)" >&2
		# new inputs are written to the first directory only: the copy in build/
		if [[ $bin == *.pl ]]; then
			run=(perl "$bin" fuzz "$seconds" "$work" "$art" "${extra[@]}")
		else
			run=("$bin" -max_total_time="$seconds" -print_final_stats=1
				-artifact_prefix="$art" "${opts[@]}" "$work" "${extra[@]}")
		fi
		if ! "${run[@]}" >"$log" 2>&1; then
			echo "fuzz: $name: CRASH (see $log; the input is in $art)" >&2
			grep -E 'ERROR|runtime error|Test unit written|SUMMARY' "$log" | head -n 20 >&2
			fail=1
		fi
	done
	printf '\n%-10s %12s %8s %6s %7s %7s\n' target executions exec/s cov ft corpus
	for bin in "$@"; do
		name=$(name_of "$bin")
		log=build/fuzz/log/$name.fuzz.log
		read -r cov ft corp < <(coverage "$log")
		printf '%-10s %12s %8s %6s %7s %7s\n' "$name" \
			"$(stat_of "$log" number_of_executed_units)" \
			"$(stat_of "$log" average_exec_per_sec)" "${cov:-?}" "${ft:-?}" "${corp:-?}"
	done
	return $fail
}

case $mode in
replay) replay "$@" ;;
fuzz)
	[[ ${1:-} =~ ^[0-9]+$ ]] || {
		echo "usage: $0 fuzz SECONDS BIN..." >&2
		exit 2
	}
	fuzz "$@"
	;;
*)
	echo "usage: $0 replay BIN... | fuzz SECONDS BIN..." >&2
	exit 2
	;;
esac
