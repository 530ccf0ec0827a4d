#!/usr/bin/env bash
# bench/samba-index.sh: why dc slows down and cleanup dc is not linear on the lab's Samba DC,
# measured inside Samba itself (bench/samba-index.py: a private sam.ldb, no lab, no lock, no
# provision): users added one per transaction to 2,000 .. N, then deleted, on the two database
# stores Samba offers (tdb, its default, and LMDB) and the two layouts (every user in one OU,
# or sub-OUs of 1,000), interleaved, ROUNDS times. Prints for each: the milliseconds per add
# (wall) over the first and the last 1,000 users, the users/s of the adds and the deletes, and
# their ratio to the first 1,000 (1.0: flat; the issue asks that it not fall).
#
#   bench/samba-index.sh [USERS [DELETE [LAYOUTS [STORES]]]]
#     USERS (default 10000), DELETE 1by1|tree|none (default 1by1), LAYOUTS (default "flat sub"),
#     STORES (default "tdb mdb"); ROUNDS (default 1). One CPU busy for minutes per run (tdb,
#     10,000 users: ~1 min of adds and ~2 of deletes). Log: $OUT (default /var/tmp/
#     provision-bench-samba-index.log), appended.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
USERS=${1:-10000}
DELETE=${2:-1by1}
LAYOUTS=${3:-flat sub}
STORES=${4:-tdb mdb}
ROUNDS=${ROUNDS:-1}
OUT=${OUT:-/var/tmp/provision-bench-samba-index.log}
T=$(mktemp -d /tmp/pv-bench-si.XXXXXX)
trap 'rm -rf "$T"' EXIT

for ((r = 1; r <= ROUNDS; r++)); do
	for layout in $LAYOUTS; do
		for store in $STORES; do
			echo "### round $r: $store $layout $USERS users, delete $DELETE ($(date -u +%H:%M:%S))" | tee -a "$OUT"
			/usr/bin/python3 "$HERE/samba-index.py" --backend "$store" --layout "$layout" \
				--users "$USERS" --delete "$DELETE" --dir "$T/w" | tee -a "$OUT" >"$T/run.$r.$store.$layout"
		done
	done
done

echo
echo "samba-index.sh: $USERS users, delete $DELETE, $ROUNDS round(s): ms per add, wall (first 1000 -> last 1000), users/s"
printf '  %-5s %-5s %8s %8s %7s %10s %10s\n' store layout "first" "last" "x" "add u/s" "del u/s"
for layout in $LAYOUTS; do
	for store in $STORES; do
		for f in "$T"/run.*."$store.$layout"; do
			awk -v s="$store" -v l="$layout" '
				$3 == "add" && $4 == "1000:" { first = $5 }
				$3 == "add" && $4 ~ /:$/ { last = $5 }
				$3 == "add" && $4 == "total" { add = $10; sub(/^\(/, "", add) }
				$3 == "delete" && $5 == "total" { del = $11; sub(/^\(/, "", del) }
				END { printf "  %-5s %-5s %8.2f %8.2f %7.2f %10s %10s\n", s, l, first, last, (first > 0 ? last / first : 0), add, (del == "" ? "-" : del) }
			' "$f"
		done
	done
done
