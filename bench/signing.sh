#!/usr/bin/env bash
# bench/signing.sh: `server` building the users' trees when the file server requires signing
# (srv's smb.conf: server signing = mandatory), or with SETTING='server smb encrypt=required'
# encryption, side by side, ROUNDS rounds alternating:
#   (a) our SMB2 client, which signs every request (AES-128-GMAC at SMB 3.1.1 with Samba 4.17)
#       or encrypts it (AES-128-GCM), a compound per file, one connection per worker;
#   (b) libsmbclient, a connection per user (PROVISION_SMB_CLIENT=libsmbclient), which signs or
#       encrypts as the server requires;
# from empty trees each time (cleanup server between). Prints files per second of the tree
# phase (the command's own JSON figure) each round with its ratio, the medians and the ratio
# a/b. Lab 'pvbs', USERS per client (default 20) with the small fileset (70 files each); srv's
# smb.conf and the lab are put back at the end.
# srv's /srv is put on a journaled ext4 of its own for the bench (lab.sh srv-disk ext4, undone
# at the end): on this machine's root file system (ext4 without a journal) a build right after
# the previous round's cleanup spends most of srv's CPU skipping the inodes just freed, which
# measures the kernel, not the clients (docs/bench.md). SRV_DISK=root keeps /srv where it is.
. "$(dirname "$0")/lib.sh"

USERS=${USERS:-20}
ROUNDS=${ROUNDS:-3}
SETTING=${SETTING:-server signing=mandatory}
"$LAB_SH" status >/dev/null || { echo "bench: the lab is not up (make lab-up)" >&2; exit 1; }
P=(-p "$PLAYBOOK" --set lab=pvbs --set "users.name_template=bs-{client}-u{n}"
	--set "users.per_client=$USERS" --set "controller.results=$BT/results")
DISK_MADE=
trap '"$LAB_SH" srv-conf >/dev/null 2>&1; on ctl "$PV" "${P[@]}" cleanup --leave >/dev/null 2>&1
	[[ -z $DISK_MADE ]] || "$LAB_SH" srv-disk off >/dev/null 2>&1; rm -rf "$BT"' EXIT

if [[ ${SRV_DISK:-ext4} == ext4 ]] && ! "$LAB_SH" srv-disk status | grep -q 'its own ext4'; then
	"$LAB_SH" srv-disk ext4 >/dev/null || { echo "bench: lab.sh srv-disk ext4 failed (SRV_DISK=root to bench on the root file system)" >&2; exit 1; }
	DISK_MADE=1
fi

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

"$LAB_SH" srv-conf "$SETTING" >/dev/null || { echo "bench: srv-conf failed" >&2; exit 1; }
for phase in dc join; do
	on ctl "$PV" "${P[@]}" "$phase" >"$BT/$phase.out" 2>&1 ||
		{ echo "bench: $phase failed:" >&2; tail -3 "$BT/$phase.out" >&2; exit 1; }
done

# build LABEL [ENV]: server from empty trees; files/s of the tree phase into $BT/LABEL
build() {
	local label=$1
	shift
	on ctl "$PV" "${P[@]}" cleanup server >/dev/null 2>&1
	on ctl env "$@" "$PV" "${P[@]}" --json server >"$BT/out.json" 2>"$BT/err" ||
		{ echo "bench: server ($label) failed:" >&2; tail -3 "$BT/err" >&2; exit 1; }
	python3 -c 'import json,sys; t=json.load(sys.stdin)["trees"]; print("%.1f %d" % (t["files_per_second"], t["files_written"]))' \
		<"$BT/out.json" >"$BT/last"
	cut -d' ' -f1 "$BT/last" >>"$BT/$label"
	sed -n 's/.*trees: our SMB2 client speaks \(.*\) to .*/ours: \1/p' "$BT/err" >"$BT/last.client"
	[[ -s $BT/last.client ]] || echo libsmbclient >"$BT/last.client"
}

echo "bench: tree building with '$SETTING', $((2 * USERS)) users x 70 files, $ROUNDS rounds; $("$LAB_SH" srv-disk status | cut -d'(' -f1)"
: >"$BT/a" && : >"$BT/b"
# a build before the rounds, not counted: the first build of a lab meets srv's caches cold
# (winbindd's look-ups of every user, idmap), which would be charged to whichever side goes first
build warm PROVISION_LAB_BENCH=1
printf '  warm-up (not counted): %s files/s\n' "$(cat "$BT/warm")"
for ((r = 1; r <= ROUNDS; r++)); do
	for side in a b; do
		if [[ $side == a ]]; then build a PROVISION_LAB_BENCH=1; else build b PROVISION_SMB_CLIENT=libsmbclient; fi
		printf '  round %d %s: %8s files/s (%s files, %s)\n' "$r" \
			"$([[ $side == a ]] && echo "(a) ours        " || echo "(b) libsmbclient")" \
			"$(tail -1 "$BT/$side")" "$(cut -d' ' -f2 "$BT/last")" "$(cat "$BT/last.client")"
	done
	printf '  round %d: a/b %sx\n' "$r" "$(ratio "$(tail -1 "$BT/a")" "$(tail -1 "$BT/b")")"
done
ma=$(median <"$BT/a") mb=$(median <"$BT/b")
awk -v a="$ma" -v b="$mb" 'BEGIN { printf "medians: (a) ours %.0f files/s, (b) libsmbclient %.0f files/s: a/b %.2fx\n", a, b, a / b }'
