#!/usr/bin/env bash
# bench/copy.sh: the small-file copy (docs/copy.md) side by side in one run, ROUNDS rounds, the
# methods interleaved in each, every one into an empty target on srv:
#   (a) provision copy --from a real folder on cli1 (one connection, --mt MT)
#   (b) smbclient mput of the same folder from cli1 (prompt off, recurse on), one request in
#       flight: the tool people reach for
#   (c) provision copy --fileset of the same shape (the bytes made on the client, no disk read)
#   (d) provision server --parallel 1: the tree builder, one connection, the same fileset
#   (e) the same with libsmbclient (PROVISION_SMB_CLIENT=libsmbclient)
# Prints files/s per method and round, the client's CPU per file of (a) and (b), the busiest smbd
# thread's share of a core during (a) (the copy's own watch), and the medians and ratios a/b,
# a/d, c/d, e/d. The source: DIRS ("20 20 20": folders per level) x PER files (11) with the
# sizes of playbooks/filesets/srctree.yaml: 88,000 files in 8,420 folders, 1.32 GB.
# srv's /srv is put on a journaled ext4 of its own (lab.sh srv-disk ext4; SRV_DISK=root to keep
# it where it is): on this machine's root file system (ext4 without a journal) a copy right
# after the previous round's delete measures the kernel's inode allocator (docs/bench.md).
# Before each method the previous method's target (the same number of files) is deleted.
. "$(dirname "$0")/lib.sh"

ROUNDS=${ROUNDS:-3}
MT=${MT:-8}
DIRS=${DIRS:-20 20 20}
PER=${PER:-11}
METHODS=${METHODS:-a b c d e}
"$LAB_SH" status >/dev/null || { echo "bench: the lab is not up (make lab-up)" >&2; exit 1; }
P=(-p "$PLAYBOOK" --set lab=pvbc --set "users.name_template=bc-{client}-u{n}"
	--set users.per_client=1 --set "controller.results=$BT/results" --set server.shares=1)
SRC=$LAB/bench-copy-src
USER1=bc-cli1-u1
HOME1=/srv/provision/fsroot1/$USER1
HOME2=/srv/provision/fsroot1/bc-cli2-u1 # the server phase builds cli2's user's tree too
DISK_MADE=
trap 'on ctl "$PV" "${P[@]}" cleanup --leave >/dev/null 2>&1
	[[ -z $DISK_MADE ]] || "$LAB_SH" srv-disk off >/dev/null 2>&1; rm -rf "$BT" "$SRC"' EXIT

if [[ ${SRV_DISK:-ext4} == ext4 ]] && ! "$LAB_SH" srv-disk status | grep -q 'its own ext4'; then
	"$LAB_SH" srv-disk ext4 >/dev/null || { echo "bench: lab.sh srv-disk ext4 failed" >&2; exit 1; }
	DISK_MADE=1
fi

# the fileset of the source's shape, and the folder itself (on the machine's disk: cli1 sees it)
read -ra lv <<<"$DIRS"
cat >"$BT/shape.yaml" <<EOF
name: shape
seed: 7
content: unique
parts:
  static:
    folders: [$(IFS=,; echo "${lv[*]}")]
    files: $PER
    sizes:
      - {size: [100, 4KiB], weight: 50}
      - {size: [4KiB, 16KiB], weight: 30}
      - {size: [16KiB, 64KiB], weight: 17}
      - {size: [64KiB, 192KiB], weight: 3}
EOF
rm -rf "$SRC"
python3 - "$SRC" "$PER" "${lv[@]}" <<'PY'
import os, random, sys
root, per, levels = sys.argv[1], int(sys.argv[2]), [int(x) for x in sys.argv[3:]]
random.seed(7)
def sizes():
    w = random.random() * 100
    if w < 50: return random.randint(100, 4096)
    if w < 80: return random.randint(4096, 16384)
    if w < 97: return random.randint(16384, 65536)
    return random.randint(65536, 196608)
def build(path, depth):
    os.makedirs(path, exist_ok=True)
    if depth == len(levels):
        for f in range(1, per + 1):
            with open(os.path.join(path, "f%04d.c" % f), "wb") as fh:
                fh.write(os.urandom(sizes()))
        return
    for d in range(1, levels[depth] + 1):
        build(os.path.join(path, "d%02d" % d), depth + 1)
build(os.path.join(root, "static"), 0)
PY
NFILES=$(find "$SRC" -type f | wc -l)
NBYTES=$(du -sb "$SRC" | cut -f1)

on ctl "$PV" "${P[@]}" --set "server.fileset=$BT/shape.yaml" prepare >"$BT/prepare.out" 2>&1 ||
	{ echo "bench: prepare failed:" >&2; tail -3 "$BT/prepare.out" >&2; exit 1; }
printf 'username = %s\npassword = %s\ndomain = LAB\n' "$USER1" "$(cat "$LAB/user.pass")" >"$BT/auth"
chmod 600 "$BT/auth"

# empty the user's home on srv: the last method's files go (their count said once)
empty() { on srv sh -c "rm -rf '$HOME1'/* '$HOME2'/*; sync"; }

# one METHOD: files/s into $BT/METHOD, and extras
one() {
	local m=$1 t0 t1
	empty
	case $m in
	a | c)
		local src=(--from "$SRC")
		[[ $m == c ]] && src=(--fileset "$BT/shape.yaml")
		on ctl "$PV" "${P[@]}" --json copy "${src[@]}" --mt "$MT" --no-profile --to "$USER1/copy" >"$BT/o.json" 2>"$BT/o.err" ||
			{ echo "bench: copy ($m) failed: $(tail -2 "$BT/o.err")" >&2; exit 1; }
		python3 -c 'import json,sys; d=json.load(sys.stdin); s=d["smbd"][0] if d["smbd"] else {}
print("%.1f %.4f %.1f %d" % (d["files_per_s"], d["client_cpu"] * d["put_s"] / 100 / max(d["files_copied"], 1) * 1000, s.get("busiest_thread", 0), d["files_copied"]))' <"$BT/o.json" >"$BT/last"
		;;
	b)
		t0=$(now)
		/usr/bin/time -f '%U %S' -o "$BT/b.time" "$LAB_SH" exec cli1 -- smbclient -N -A "$BT/auth" \
			//198.18.0.20/fsroot1 -c "prompt; recurse; mkdir $USER1/mput; cd $USER1/mput; lcd $SRC; mput *" \
			>"$BT/b.out" 2>&1 || { echo "bench: smbclient failed: $(tail -2 "$BT/b.out")" >&2; exit 1; }
		t1=$(now)
		n=$(on srv find "$HOME1/mput" -type f | wc -l)
		awk -v n="$n" -v a="$t0" -v b="$t1" -v c="$(awk '{ print $1 + $2 }' "$BT/b.time")" \
			'BEGIN { printf "%.1f %.4f - %d\n", n / (b - a), c / n * 1000, n }' >"$BT/last"
		;;
	d | e)
		local env=(PROVISION_LAB_BENCH=1)
		[[ $m == e ]] && env=(PROVISION_SMB_CLIENT=libsmbclient)
		on ctl env "${env[@]}" "$PV" "${P[@]}" --set "server.fileset=$BT/shape.yaml" --json server --parallel 1 \
			>"$BT/o.json" 2>"$BT/o.err" || { echo "bench: server ($m) failed: $(tail -2 "$BT/o.err")" >&2; exit 1; }
		python3 -c 'import json,sys; t=json.load(sys.stdin)["trees"]; print("%.1f - - %d" % (t["files_per_second"], t["files_written"]))' \
			<"$BT/o.json" >"$BT/last"
		;;
	esac
	cut -d' ' -f1 "$BT/last" >>"$BT/$m"
	cut -d' ' -f2 "$BT/last" >>"$BT/$m.cpu"
	cut -d' ' -f3 "$BT/last" >>"$BT/$m.top"
}

declare -A NAME=([a]="(a) copy --from a folder " [b]="(b) smbclient mput       " [c]="(c) copy --fileset       "
	[d]="(d) server, our client  " [e]="(e) server, libsmbclient ")
echo "bench: copy of $NFILES files ($((NBYTES / 1000000)) MB) from cli1, $ROUNDS rounds, --mt $MT, one connection; $("$LAB_SH" srv-disk status | cut -d'(' -f1)"
echo "  before each method its target is emptied: the previous method's $NFILES files deleted (on srv's disk)"
one c >/dev/null # a warm-up, not counted: srv's caches and winbindd's look-ups start cold
for m in $METHODS; do : >"$BT/$m"; : >"$BT/$m.cpu"; : >"$BT/$m.top"; done # the warm-up not counted
for ((r = 1; r <= ROUNDS; r++)); do
	for m in $METHODS; do
		one "$m"
		read -r fs cpu top n <"$BT/last"
		printf '  round %d %s %8s files/s  (%s files%s%s)\n' "$r" "${NAME[$m]}" "$fs" "$n" \
			"$([[ $cpu != - ]] && echo ", client CPU ${cpu} ms/file")" \
			"$([[ $top != - ]] && echo ", busiest smbd thread ${top}% of a core")"
	done
done
# the median of a file's lines
medf() { mapfile -t _v <"$1" && median "${_v[@]}"; }
med() { medf "$BT/$1"; }
echo "medians:"
for m in $METHODS; do printf '  %s %8s files/s\n' "${NAME[$m]}" "$(med "$m")"; done
has() { [[ " $METHODS " == *" $1 "* ]]; }
has a && has b && echo "  a/b $(ratio "$(med a)" "$(med b)")x (goal 3x, every round: $(paste -d' ' "$BT/a" "$BT/b" | awk '{ printf "%s%.2f", (NR > 1 ? " " : ""), $1 / $2 }')); client CPU per file a/b $(ratio "$(medf "$BT/a.cpu")" "$(medf "$BT/b.cpu")")x (goal at most 1)"
has a && has d && echo "  a/d $(ratio "$(med a)" "$(med d)")x (goal 1.0x: the copy against the tree builder, one connection each)"
has c && has d && echo "  c/d $(ratio "$(med c)" "$(med d)")x"
has e && has d && echo "  e/d $(ratio "$(med e)" "$(med d)")x (libsmbclient against our client)"
has a && echo "  the busiest smbd thread during (a): $(medf "$BT/a.top")% of a core, median over rounds (goal 90%)"
