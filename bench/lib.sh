# bench/lib.sh: helpers for the side-by-side benchmarks (sourced). They run on the embedded lab
# (make lab-up first): the tool and the reference both run in the controller namespace (ctl).
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LAB_SH="$TOP/tests/lab/lab.sh"
LAB=${PROVISION_LAB_DIR:-/var/lib/provision-lab}
PV="$TOP/bin/provision"
PLAYBOOK="$TOP/playbooks/lab.yaml"
BT=$(mktemp -d /tmp/pv-bench.XXXXXX)
trap 'rm -rf "$BT"' EXIT

on() {
	local host=$1
	shift
	"$LAB_SH" exec "$host" -- "$@"
}

now() { date +%s.%N; }

# cpu_of HOST: CPU seconds (user+sys, children included) of every process in HOST's namespace
cpu_of() {
	local t=0 pid f
	for pid in $(ip netns pids "pvlab-$1" 2>/dev/null); do
		f=$(cut -d' ' -f14-17 "/proc/$pid/stat" 2>/dev/null) || continue
		set -- $f
		t=$((t + $1 + $2 + $3 + $4))
	done
	awk -v t="$t" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", t / hz }'
}

# timed LABEL HOST CMD...: run CMD on lab host HOST, record wall time, the DC's CPU and the
# command's own CPU (user+sys, from /usr/bin/time) and peak RSS in $BT/LABEL.{wall,dccpu,cpu,rss}
timed() {
	local label=$1 host=$2 t0 t1 c0 c1
	shift 2
	c0=$(cpu_of dc)
	t0=$(now)
	/usr/bin/time -f '%U %S %M' -o "$BT/$label.time" "$LAB_SH" exec "$host" -- "$@" \
		>"$BT/$label.out" 2>"$BT/$label.err" || {
		echo "bench: '$label' failed:" >&2
		tail -5 "$BT/$label.err" >&2
		return 1
	}
	t1=$(now)
	c1=$(cpu_of dc)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }' >"$BT/$label.wall"
	awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.2f", b - a }' >"$BT/$label.dccpu"
	awk '{ printf "%.2f", $1 + $2 }' "$BT/$label.time" >"$BT/$label.cpu"
	awk '{ print $3 }' "$BT/$label.time" >"$BT/$label.rss"
}

val() { cat "$BT/$1.$2"; }

# median of the arguments
median() {
	printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.1f", (s > 0 ? n / s : 0) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

# prepare_lab NAME RESET...: the lab of the playbook arguments P (lab NAME) prepared; at exit
# RESET is run (what the bench changed on the lab put back), then the lab cleaned up, unless
# KEEP is set (it is left prepared, and how to clean it is said)
prepare_lab() {
	BENCH_LAB=$1
	shift
	BENCH_RESET=("$@")
	trap bench_cleanup EXIT
	on ctl "$PV" "${P[@]}" prepare >"$BT/prepare.out" 2>&1 ||
		{ echo "bench: prepare failed:" >&2; tail -5 "$BT/prepare.out" >&2; exit 1; }
}

bench_cleanup() {
	# a capture left running (CAPTURING: the host) is ended
	[[ -z ${CAPTURING:-} ]] || "$LAB_SH" capture "$CAPTURING" stop >/dev/null 2>&1
	# a CPU limit put on srv (SRV_LIMITED) is taken off
	[[ -z ${SRV_LIMITED:-} ]] || "$LAB_SH" srv-limit off >/dev/null 2>&1
	"${BENCH_RESET[@]}" >/dev/null 2>&1
	if [[ -n ${KEEP:-} ]]; then
		echo "bench: lab $BENCH_LAB left prepared (KEEP); to clean it: provision ${P[*]} cleanup --leave" >&2
	else
		on ctl "$PV" "${P[@]}" cleanup --leave >/dev/null 2>&1
	fi
	rm -rf "$BT"
}
