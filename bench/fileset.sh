#!/usr/bin/env bash
# bench/fileset.sh: building users' trees on the file server, provision against the reference
# tools, side by side in one run on the lab: the same tree, FILES files of 10 KiB for USERS
# users (2000 files for 20 users by default), built
#   (a) by one smbclient session with mput (one user, NTLM, 20 folders: lab-notes figure e.)
#   (b) by provision server over SMB (each user as itself; --parallel connections, each carrying
#       its users' sessions in turn)
#   (c) by provision server --via ssh (a tar stream into the server's disk, users' uid/gid)
#   (d) by cp -r of such a tree on the server's disk (page cache warm)
# Prints files/s per round and the medians, the ratios b/a and c/d (of the medians, and the
# median of the ratios within each round), and smbd's CPU per file
# in (a) and (b) (the CPU of smbd processes in srv, reaped children included). For (b) and (c)
# the wall time of the whole command (probe, shares, SPNs, users' folders) and of the tree
# phase alone (from --json) are both given. Environment: USERS_PER_CLIENT (10: 20 users on the
# lab's two clients), FILES (per user, 100), ROUNDS (3), PARALLEL (provision --parallel;
# default: provision's own, one session per server core).
# The bench joins srv when it is not joined and leaves it again at the end; its users belong to
# lab 'fsbench' (names fb-cli1-u1...), removed at the end.
. "$(dirname "$0")/lib.sh"

PERC=${USERS_PER_CLIENT:-10}
FILES=${FILES:-100}
ROUNDS=${ROUNDS:-3}
PARALLEL=${PARALLEL:-}
PAR_OPT=()
[[ -z $PARALLEL ]] || PAR_OPT=(--parallel "$PARALLEL")
USERS=$((PERC * 2))
TOTAL=$((USERS * FILES))
SP=/srv/provision
P=("$PV" -p "$PLAYBOOK" --no-progress --set lab=fsbench --set "users.name_template=fb-{client}-u{n}"
	--set "server.fileset=$BT/bench.yaml")

"$LAB_SH" status >/dev/null || { echo "bench: the lab is not up (make lab-up)" >&2; exit 1; }
[[ -x $PV ]] || { echo "bench: build first (make)" >&2; exit 1; }

# smbd_cpu: CPU seconds of every smbd in srv (children that ended are in their parent's cutime)
smbd_cpu() {
	local t=0 pid f
	for pid in $(ip netns pids pvlab-srv 2>/dev/null); do
		[[ $(cat "/proc/$pid/comm" 2>/dev/null) == smbd ]] || continue
		f=$(cut -d' ' -f14-17 "/proc/$pid/stat" 2>/dev/null) || continue
		set -- $f
		t=$((t + $1 + $2 + $3 + $4))
	done
	awk -v t="$t" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", t / hz }'
}
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
per_file_ms() { awk -v c="$1" -v n="$2" 'BEGIN { printf "%.2f", (n > 0 ? c * 1000 / n : 0) }'; }
json_secs() { python3 -c 'import json,sys; print("%.3f" % json.loads(sys.stdin.read().splitlines()[-1])["trees"]["seconds"])' <"$1"; }

cat >"$BT/bench.yaml" <<EOF
name: bench
parts:
  static:
    files: $FILES
    sizes: [{size: 10KiB}]
EOF
# (a)'s source: the same shape, USERS folders of FILES files of 10 KiB, on ctl's disk
for ((u = 1; u <= USERS; u++)); do
	mkdir -p "$BT/src/d$u"
	for ((f = 1; f <= FILES; f++)); do head -c 10240 /dev/urandom >"$BT/src/d$u/f$f.dat"; done
done
{
	for ((u = 1; u <= USERS; u++)); do echo "mkdir d$u"; done
	echo prompt # toggles: exactly once (lab-notes pitfall 7)
	for ((u = 1; u <= USERS; u++)); do printf 'cd d%s\nlcd %s\nmput *\ncd ..\n' "$u" "$BT/src/d$u"; done
} >"$BT/mput.cmds"
printf 'username = fb-cli1-u1\npassword = %s\ndomain = LAB\n' "$(cat "$LAB/user.pass")" >"$BT/auth"
chmod 0600 "$BT/auth"

# setup: membership, users, shares and SPNs (and a first build, not measured)
joined_here=0
if ! on srv net ads testjoin >/dev/null 2>&1; then
	on ctl "${P[@]}" -q join >/dev/null || { echo "bench: provision join failed" >&2; exit 1; }
	joined_here=1
fi
finish_bench() {
	on srv rm -rf "$SP/cpdst" "$SP/fsroot1/mput"
	on ctl "${P[@]}" -q cleanup server >/dev/null 2>&1
	on ctl "${P[@]}" -q cleanup dc >/dev/null 2>&1
	[[ $joined_here -eq 0 ]] || on ctl "${P[@]}" -q cleanup join --leave >/dev/null 2>&1
	rm -rf "$BT"
}
trap finish_bench EXIT
on ctl "${P[@]}" -q dc --users "$PERC" >/dev/null || { echo "bench: provision dc failed" >&2; exit 1; }
on ctl "${P[@]}" -q server --users "$PERC" >/dev/null || { echo "bench: provision server failed" >&2; exit 1; }
clear_trees() { on srv sh -c "rm -rf $SP/fsroot*/fb-* $SP/fsroot1/mput $SP/cpdst; sync"; }

declare -a A B BT_ C CT D ACPU BCPU BW CW
for ((r = 1; r <= ROUNDS; r++)); do
	# (a) smbclient mput, one session, into a folder of fb-cli1-u1's
	clear_trees
	on srv sh -c "mkdir -p $SP/fsroot1/mput && chown 'LAB\\fb-cli1-u1' $SP/fsroot1/mput"
	c0=$(smbd_cpu)
	timed mput ctl sh -c "smbclient -N -A '$BT/auth' //198.18.0.20/fsroot1 -D mput <'$BT/mput.cmds'"
	sleep 0.5
	c1=$(smbd_cpu)
	n=$(on srv sh -c "find $SP/fsroot1/mput -type f | wc -l")
	[[ $n -eq $TOTAL ]] || { echo "bench: mput wrote $n files, not $TOTAL" >&2; exit 1; }
	A+=("$(val mput wall)") ACPU+=("$(sub "$c0" "$c1")")

	# (b) provision server over SMB
	clear_trees
	c0=$(smbd_cpu)
	timed pvsmb ctl "${P[@]}" --json server --users "$PERC" "${PAR_OPT[@]}"
	sleep 0.5
	c1=$(smbd_cpu)
	grep -q "\"files_written\":$TOTAL," "$BT/pvsmb.out" || { echo "bench: provision (smb) did not write $TOTAL files:" >&2; cat "$BT/pvsmb.out" "$BT/pvsmb.err" >&2; exit 1; }
	B+=("$(val pvsmb wall)") BT_+=("$(json_secs "$BT/pvsmb.out")") BCPU+=("$(sub "$c0" "$c1")")
	BW+=("$(val pvsmb cpu)")

	# (c) provision server --via ssh
	clear_trees
	timed pvssh ctl "${P[@]}" --json server --users "$PERC" --via ssh
	grep -q "\"files_written\":$TOTAL," "$BT/pvssh.out" || { echo "bench: provision (ssh) did not write $TOTAL files" >&2; cat "$BT/pvssh.out" "$BT/pvssh.err" >&2; exit 1; }
	C+=("$(val pvssh wall)") CT+=("$(json_secs "$BT/pvssh.out")") CW+=("$(val pvssh cpu)")

	# (d) cp -r of the same tree (the one (c) made) on the server's disk
	# timed inside srv: at 16,000 files/s, starting a command in the namespace would dominate
	D+=("$(on srv sh -c "sync; mkdir -p $SP/cpdst; t0=\$(date +%s.%N); cp -r $SP/fsroot1 $SP/fsroot2 $SP/cpdst/; t1=\$(date +%s.%N); echo \"\$t1 - \$t0\" | bc")")

	printf 'round %d: (a) mput %s files/s | (b) provision smb %s files/s (trees %s) | (c) provision ssh %s files/s (trees %s) | (d) cp -r %s files/s | smbd ms/file a %s b %s\n' \
		"$r" "$(rate $TOTAL "${A[-1]}")" "$(rate $TOTAL "${B[-1]}")" "$(rate $TOTAL "${BT_[-1]}")" \
		"$(rate $TOTAL "${C[-1]}")" "$(rate $TOTAL "${CT[-1]}")" "$(rate $TOTAL "${D[-1]}")" \
		"$(per_file_ms "${ACPU[-1]}" $TOTAL)" "$(per_file_ms "${BCPU[-1]}" $TOTAL)"
done

a=$(median "${A[@]}") b=$(median "${B[@]}") bt=$(median "${BT_[@]}") c=$(median "${C[@]}")
ct=$(median "${CT[@]}") d=$(median "${D[@]}")
echo
echo "fileset bench: $TOTAL files of 10 KiB for $USERS users, median of $ROUNDS rounds (load: $(cut -d' ' -f1-3 /proc/loadavg))"
printf '  (a) smbclient mput, 1 session       %8s files/s  (%s s)  smbd %s ms CPU/file\n' "$(rate $TOTAL "$a")" "$a" "$(per_file_ms "$(median "${ACPU[@]}")" $TOTAL)"
printf '  (b) provision server, SMB (x%s)      %8s files/s  (%s s; tree phase %s files/s)  smbd %s ms CPU/file, provision CPU %s s\n' \
	"${PARALLEL:-d}" "$(rate $TOTAL "$b")" "$b" "$(rate $TOTAL "$bt")" "$(per_file_ms "$(median "${BCPU[@]}")" $TOTAL)" "$(median "${BW[@]}")"
printf '  (c) provision server --via ssh      %8s files/s  (%s s; tree phase %s files/s)  provision CPU %s s\n' \
	"$(rate $TOTAL "$c")" "$c" "$(rate $TOTAL "$ct")" "$(median "${CW[@]}")"
printf '  (d) cp -r on the server'"'"'s disk       %8s files/s  (%s s)\n' "$(rate $TOTAL "$d")" "$d"
printf '  ratios: b/a %s (tree phase %s; target >= 1.5), c/d %s (tree phase %s; target >= 0.5)\n' \
	"$(ratio "$a" "$b")" "$(ratio "$a" "$bt")" "$(ratio "$d" "$c")" "$(ratio "$d" "$ct")"
# the same ratios taken within each round (a and b, c and d run back to back), then their
# median: drift between rounds (this machine's load, the filesystem's state) cancels out
declare -a RB RBT RC RCT RCPU
for ((i = 0; i < ROUNDS; i++)); do
	RB+=("$(ratio "${A[i]}" "${B[i]}")") RBT+=("$(ratio "${A[i]}" "${BT_[i]}")")
	RC+=("$(ratio "${D[i]}" "${C[i]}")") RCT+=("$(ratio "${D[i]}" "${CT[i]}")")
	RCPU+=("$(ratio "${BCPU[i]}" "${ACPU[i]}")")
done
printf '  per-round ratios, median: b/a %s (tree phase %s), c/d %s (tree phase %s), smbd CPU/file b/a %s (target <= 1)\n' \
	"$(median "${RB[@]}")" "$(median "${RBT[@]}")" "$(median "${RC[@]}")" "$(median "${RCT[@]}")" "$(median "${RCPU[@]}")"
