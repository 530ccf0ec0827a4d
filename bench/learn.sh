#!/usr/bin/env bash
# bench/learn.sh: reading a capture of SMB traffic, provision learn against Wireshark's tshark
# extracting the same fields (each SMB2 message's command, response flag, message id, status,
# session and tree, compounds included: tshark -Y smb2 -T fields), on the same file, side by
# side, ROUNDS times each, one after the other: the medians of wall time, CPU (user+sys) and
# peak memory, the ratio, MB/s, and what a 1 GB capture would take at that rate. The two must
# count the same requests (checked, as t_learn checks it). Issue 29's targets: 1 GB in under
# 30 s on one core, at least 5x faster than tshark, memory that does not grow with the length.
# Environment: CAPTURE (a pcap or pcapng file; default: one made here on the lab, tcpdump on
# srv while the built-in driver runs USERS users (default 20) for DURATION seconds (default 60) at RATE
# scenarios per user-hour (default 20000), in the clear), ROUNDS (3).
. "$(dirname "$0")/lib.sh"

ROUNDS=${ROUNDS:-3}
USERS=${USERS:-20}
DURATION=${DURATION:-60}
RATE=${RATE:-20000}
CAP=${CAPTURE:-}

if [[ -z $CAP ]]; then
	CAP=$BT/lab.pcap
	P=(-p "$PLAYBOOK" --set lab=pvbl --set "users.name_template=bl-{client}-u{n}"
		--set "users.per_client=$(((USERS + 1) / 2))" --set driver.name=builtin)
	chmod 0755 "$BT"
	on ctl "$PV" "${P[@]}" prepare >/dev/null
	"$LAB_SH" capture srv start "$CAP" || exit 1
	on ctl "$PV" "${P[@]}" --set "load.rate=$RATE" run --id "pvbl-$$" --min-users "$USERS" \
		--max-users "$USERS" --step 1 --duration "$DURATION" --warmup 1 --watch 0 >/dev/null
	"$LAB_SH" capture srv stop
	on ctl "$PV" "${P[@]}" cleanup --leave >/dev/null
fi
MB=$(awk -v b="$(stat -c %s "$CAP")" 'BEGIN { printf "%.1f", b / 1048576 }')
echo "bench learn: $CAP ($MB MB), $ROUNDS rounds each" >&2

# one LABEL CMD...: a round, its wall, CPU and peak RSS appended to $BT/LABEL.runs
one() {
	local label=$1 t0 t1
	shift
	t0=$(now)
	/usr/bin/time -f '%U %S %M' -o "$BT/$label.time" "$@" >"$BT/$label.out" 2>"$BT/$label.err" || {
		echo "bench: '$label' failed: $(tail -n 2 "$BT/$label.err")" >&2
		exit 1
	}
	t1=$(now)
	read -r u s m <"$BT/$label.time"
	echo "$(echo "$t1 - $t0" | bc) $(echo "$u + $s" | bc) $m" >>"$BT/$label.runs"
}
for ((i = 0; i < ROUNDS; i++)); do
	one tshark tshark -r "$CAP" -Y smb2 -T fields -e smb2.cmd -e smb2.flags.response \
		-e smb2.msg_id -e smb2.nt_status -e smb2.sesid -e smb2.tid
	one learn "$PV" --json learn "$CAP"
done

# the same requests counted by both
t=$(awk -F'\t' '{ n = split($1, c, ","); split($2, f, ","); for (i = 1; i <= n; i++) if (f[i] == "0" || f[i] == "False") r++ } END { print r + 0 }' "$BT/tshark.out")
o=$(python3 -c 'import json,sys; print(sum(json.load(open(sys.argv[1]))["requests"].values()))' "$BT/learn.out")
[[ $t == "$o" ]] || { echo "bench: tshark counts $t requests, provision learn $o" >&2; exit 1; }

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { awk -v c="$2" '{ print $c }' "$BT/$1.runs" | median; }
tw=$(col tshark 1) tc=$(col tshark 2) tm=$(col tshark 3)
lw=$(col learn 1) lc=$(col learn 2) lm=$(col learn 3)
awk -v mb="$MB" -v req="$o" -v tw="$tw" -v tc="$tc" -v tm="$tm" -v lw="$lw" -v lc="$lc" -v lm="$lm" 'BEGIN {
	printf "%-24s %10s %10s %12s %10s %14s\n", "", "wall s", "CPU s", "peak RSS MB", "MB/s", "1 GB would take"
	printf "%-24s %10.2f %10.2f %12.1f %10.1f %12.0f s\n", "tshark -T fields", tw, tc, tm / 1024, mb / tw, 1024 / (mb / tw)
	printf "%-24s %10.2f %10.2f %12.1f %10.1f %12.0f s\n", "provision learn", lw, lc, lm / 1024, mb / lw, 1024 / (mb / lw)
	if (lc < 0.01) lc = 0.01
	printf "requests %d, counted alike; tshark/learn: wall %.1fx, CPU %.1fx, memory %.1fx\n", req, tw / lw, tc / lc, tm / lm
}'
