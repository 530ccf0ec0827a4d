#!/usr/bin/env bash
# tests/integration/t_copy.sh: `provision copy` (lab 'pvcopy', 1 user per client). Claims, each
# asserted with independent tools on srv (find, stat, getent, smbcontrol):
#  1. a real folder on cli1 of 5,000 files in 120 folders (sizes 0 to 200 KiB, times set in
#     the past, a link and a FIFO among them) is copied: on srv's disk every file is there
#     with its size, its modification time (to the microsecond) and the user's uid, every
#     folder too; the link and the FIFO are not copied and are counted as skipped;
#  2. the figures: files/s with an interval, latency per size class, the busiest smbd named
#     and tied to the copy's connection, smbd's system calls taken, Samba's profiling level
#     put back to what it was (off);
#  3. a second copy of the same tree sends no file and removes nothing;
#  4. a file changed at the source (size, or a time 10 s later) is sent again, one within
#     2 s (/FFT) is not; an extra file and folder at the target stay without --mirror and go
#     with it;
#  5. srv's smbd held by a CPU quota (lab.sh srv-limit 30): the verdict names the quota and
#     the smbd; srv's net.unix.max_dgram_qlen (512) is read and not named; at 10, the verdict
#     names it with its fix;
#  6. Ctrl-C in the middle of a copy: exit 15, and Samba's profiling level is off again;
#  7. a target the user may not write (a folder at the share's root): exit 8, the server's
#     refusal in the error (the agent's words, not only the status's), the profiling put back.
. "$(dirname "$0")/lib.sh"

P=(-p "$PLAYBOOK" --set lab=pvcopy --set "users.name_template=pc-{client}-u{n}"
	--set users.per_client=1)
RES=$LAB/results
SRC=$LAB/copy-src # on the machine's disk: cli1 sees it at the same path
USER1=pc-cli1-u1
DST=$SP/fsroot1/$USER1/copy
trap 'on ctl "${PVT[@]}" "$PV" "${P[@]}" cleanup --leave >/dev/null 2>&1; qlen 512; "$LAB_SH" srv-limit off >/dev/null 2>&1; rm -rf "$SRC" "$RES"/pc-* "$T_TMP"' EXIT

qlen() { on srv sh -c "echo $1 >/proc/sys/net/unix/max_dgram_qlen"; }
level() { on srv smbcontrol smbd profilelevel 2>&1 | grep -o 'Profiling [a-z ]*on pid' | head -1; }

pv "${P[@]}" cleanup --leave >/dev/null
pv "${P[@]}" prepare
expect_rc 0 "prepare"
on srv smbcontrol smbd profile off >/dev/null || fail "smbcontrol on srv"
[[ $(level) == "Profiling off on pid" ]] || fail "Samba's profiling is not off before the copy: $(level)"

# the source: 5,000 files in 120 folders, sizes and times of their own, a link and a FIFO
rm -rf "$SRC"
python3 - "$SRC" <<'PY' || fail "cannot make the source tree"
import os, random, sys
root = sys.argv[1]
random.seed(5)
dirs = [root]
for i in range(12):
    d = os.path.join(root, "top%02d" % i)
    dirs.append(d)
    for j in range(9):
        dirs.append(os.path.join(d, "sub %d" % j))  # a space in the name
for d in dirs:
    os.makedirs(d, exist_ok=True)
for n in range(5000):
    d = dirs[n % len(dirs)]
    size = random.choice([0, random.randint(1, 4095), random.randint(4096, 65535), random.randint(65536, 204800)])
    p = os.path.join(d, "f%04d.dat" % n)
    with open(p, "wb") as f:
        f.write(os.urandom(size))
    t = 1600000000 + random.randint(0, 100000000) + random.randint(0, 999999) / 1e6
    os.utime(p, (t, t))
os.symlink("/etc/shadow", os.path.join(root, "link"))
os.mkfifo(os.path.join(root, "fifo"))
PY
# TIMES: "path size mtime" with the mtime cut to SMB's 100 ns as text, never through a float
# (a double holds a time of 2020 to about 0.24 us: a microsecond rounded from it came out one
# off now and then)
cut_times() { awk '{ split($3, t, "."); printf "%s %s %s.%s\n", $1, $2, t[1], substr(t[2] "0000000", 1, 7) }'; }
listing() { # ROOT: "path size mtime(100 ns)" of every file, sorted (find on the host itself)
	find "$1" -type f -printf '%P %s %T@\n' | cut_times | sort
}
on_srv_listing() {
	on srv sh -c "find '$DST' -type f -printf '%P %s %T@\n'" | cut_times | sort
}

# 1. the copy
pv "${P[@]}" --json copy --from "$SRC" --id pc-1
expect_rc 0 "copy of 5,000 files"
python3 - "$OUT" <<'PY' || { fail "copy's JSON"; show; }
import json, sys
d = json.loads(sys.argv[1])
assert d["source_files"] == 5000 and d["files_copied"] == 5000 and d["files_skipped"] == 0, d
assert d["dirs_made"] == 12 + 12 * 9, d["dirs_made"]
assert d["files_per_s"] > 0 and d["files_per_s_lo"] is not None and d["files_per_s_lo"] <= d["files_per_s"] <= d["files_per_s_hi"], d
assert sum(c["files"] for c in d["latency"]) == 5000, d["latency"]
assert all(c["median_ms"] <= c["p95_ms"] for c in d["latency"] if c["files"]), d["latency"]
s = d["smbd"]
assert s and s[0]["copy_connection"] and s[0]["threads"] >= 1, s
assert d["profiled"] and "turned on for the copy and off again" in d["profile_note"], d["profile_note"]
calls = {c["name"]: c for c in d["samba_counters"]}
assert calls["pwrite"]["count"] > 0 and calls["openat"]["count"] >= 5000, calls
PY
src=$(cd "$SRC" && listing .)
dst=$(on_srv_listing)
[[ $(wc -l <<<"$dst") -eq 5000 ]] || fail "srv holds $(wc -l <<<"$dst") files of the copy, not 5000"
[[ "$src" == "$dst" ]] || fail "the files on srv differ from the source (path, size or mtime): $(diff <(echo "$src") <(echo "$dst") | head -5)"
ndirs=$(on srv find "$DST" -mindepth 1 -type d | wc -l)
[[ $ndirs -eq 120 ]] || fail "srv holds $ndirs folders of the copy, not 120"
uid=$(on srv getent passwd "LAB\\$USER1" | cut -d: -f3)
[[ -n $uid ]] || fail "getent knows no $USER1 on srv"
others=$(on srv find "$DST" ! -uid "$uid" | wc -l)
[[ $others -eq 0 ]] || fail "$others entries of the copy are not $USER1's (uid $uid)"
on srv test ! -e "$DST/link" -a ! -e "$DST/fifo" || fail "the link or the FIFO was copied"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["done"] and d["files"] == 5000' "$RES/pc-1/copy.json" ||
	fail "copy.json does not say the copy is done"
grep -Eq '2 entries of the source not copied: (fifo|link) \(' "$RES/pc-1/copy.txt" ||
	fail "copy.txt does not count the link and the FIFO as skipped: $(grep -i 'not copied' "$RES/pc-1/copy.txt")"
[[ $(level) == "Profiling off on pid" ]] || fail "Samba's profiling was not put back to off: $(level)"
for f in copy.txt copy.json ticks.csv watch.csv smbd.csv report.html; do
	[[ -s $RES/pc-1/$f ]] || fail "no $f in the copy's folder"
done

# 3. the second copy sends nothing
pv "${P[@]}" --json copy --from "$SRC" --id pc-2 --mirror
expect_rc 0 "second copy"
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["files_copied"] == 0 and d["files_skipped"] == 5000 and d["files_removed"] == 0 and d["dirs_removed"] == 0, d' <<<"$OUT" ||
	fail "the second copy sent or removed something: $OUT"

# 4. changes at the source, extras at the target
f1=$(cd "$SRC" && find . -type f -size +1k | sort | head -1)
f2=$(cd "$SRC" && find . -type f -size +1k | sort | sed -n 2p)
f3=$(cd "$SRC" && find . -type f -size +1k | sort | sed -n 3p)
printf 'x' >>"$SRC/$f1" # another size
python3 -c 'import os, sys
for p, d in ((sys.argv[1], 10.0), (sys.argv[2], 1.0)):  # 10 s later; 1 s later (within /FFT)
    t = os.stat(p).st_mtime_ns + int(d * 1e9)
    os.utime(p, ns=(t, t))' "$SRC/$f2" "$SRC/$f3"
on srv sh -c "mkdir -p '$DST/extra dir' && echo x >'$DST/extra dir/e' && echo y >'$DST/extra' && chown -R $uid '$DST/extra dir' '$DST/extra'"
pv "${P[@]}" --json copy --from "$SRC" --id pc-3
expect_rc 0 "copy of a changed source"
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["files_copied"] == 2 and d["files_removed"] == 0, d' <<<"$OUT" ||
	fail "changed source: not exactly the 2 files beyond /FFT sent: $OUT"
on srv test -e "$DST/extra" || fail "an extra file went without --mirror"
pv "${P[@]}" --json copy --from "$SRC" --id pc-4 --mirror
expect_rc 0 "copy --mirror"
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["files_copied"] == 0 and d["files_removed"] == 2 and d["dirs_removed"] == 1, d' <<<"$OUT" ||
	fail "--mirror did not remove exactly the extras: $OUT"
on srv test ! -e "$DST/extra" -a ! -e "$DST/extra dir" || fail "the extras are still on srv"
# the same as the source, but for the file changed within /FFT (not sent: its old time)
f3=${f3#./}
[[ "$(cd "$SRC" && listing . | grep -v "^$f3 ")" == "$(on_srv_listing | grep -v "^$f3 ")" ]] ||
	fail "after the mirror srv differs from the source (< source, > srv): $(diff <(cd "$SRC" && listing . | grep -v "^$f3 ") <(on_srv_listing | grep -v "^$f3 ") | grep '^[<>]' | head -4 | tr '\n' ' ')"
[[ $(on_srv_listing | grep -c "^$f3 $(stat -c %s "$SRC/$f3") ") -eq 1 ]] || fail "$f3 changed on srv"

# 5. a CPU quota on srv's Samba: the verdict says so
on srv rm -rf "$DST"
"$LAB_SH" srv-limit 30 >/dev/null || fail "srv-limit 30"
pv "${P[@]}" --json copy --from "$SRC" --id pc-5
"$LAB_SH" srv-limit off >/dev/null
expect_rc 0 "copy under a CPU quota"
python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["bound"] == "quota", d["bound"]
s = d["smbd"][0]
assert s["copy_connection"] and abs(s["quota"] - 30) < 0.5, s
assert ("smbd %d" % s["pid"]) in d["bound_text"] and "30%" in d["bound_text"], d["bound_text"]
assert d["dgram_qlen"] == 512 and "max_dgram_qlen" not in d["bound_text"], (d["dgram_qlen"], d["bound_text"])' <<<"$OUT" ||
	fail "the verdict under a 30% quota: $(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("bound"), d.get("bound_text"), d.get("smbd"), d.get("dgram_qlen"))' <<<"$OUT")"
# srv's Unix sockets at the kernel's default (the running daemons keep their 512: the reading
# is of the setting, which is what the verdict names)
on srv rm -rf "$DST"
qlen 10
[[ $(on srv cat /proc/sys/net/unix/max_dgram_qlen) == 10 ]] || fail "srv's max_dgram_qlen not set to 10"
pv "${P[@]}" --json copy --from "$SRC" --id pc-5q
qlen 512
expect_rc 0 "copy with srv's max_dgram_qlen at 10"
python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["dgram_qlen"] == 10, d["dgram_qlen"]
assert "queue at most 10 datagrams" in d["bound_text"] and "sysctl net.unix.max_dgram_qlen=512" in d["bound_text"], d["bound_text"]' <<<"$OUT" ||
	fail "the verdict with max_dgram_qlen 10: $(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("dgram_qlen"), d.get("bound_text"))' <<<"$OUT")"

# 6. Ctrl-C in the middle: stopped, the profiling level put back
on srv rm -rf "$DST"
"$LAB_SH" srv-limit 20 >/dev/null # slow enough to be stopped in the middle
pv_bg "${P[@]}" copy --from "$SRC" --id pc-6
pv_when 'copy: [0-9]+ files .* to send' 120
sleep 1
kill -INT "$PV_PID" 2>/dev/null
pv_bg_wait 60
"$LAB_SH" srv-limit off >/dev/null
expect_rc 15 "copy stopped with Ctrl-C"
n=$(on srv find "$DST" -type f | wc -l)
((n > 0 && n < 5000)) || fail "the stop did not land in the middle of the copy ($n files on srv)"
[[ $(level) == "Profiling off on pid" ]] || fail "after Ctrl-C Samba's profiling is not off: $(level)"

# 7. a target the user may not write: the server's refusal named
pv "${P[@]}" copy --from "$SRC" --to not-yours --id pc-7
expect_rc 8 "copy to a folder the user may not make"
expect_err "copy on 'cli1': SMB making folder //[^ ]+/fsroot1/not-yours as $USER1: NT_STATUS_ACCESS_DENIED" \
	"the refusal in the error"
on srv test ! -e "$SP/fsroot1/not-yours" || fail "the refused folder is on srv"
[[ $(level) == "Profiling off on pid" ]] || fail "after a refused copy Samba's profiling is not off: $(level)"

finish
