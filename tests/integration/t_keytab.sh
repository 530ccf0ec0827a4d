#!/usr/bin/env bash
# The keytab scripts the server phase and its cleanup run on srv as root (samba/scripts/
# keytab-add.sh, keytab-remove.sh, keytab.pl), run on srv by hand exactly as provision sends
# them, on scratch keytabs made for each case, and checked with MIT's klist (an independent
# reader of the same file format):
#   - the 32-bit kvno 0 is zero-fill: the 8-bit kvno is the host/ entry's (MIT's rule);
#   - a keytab that is a symbolic link stays one, and its target is what changes;
#   - the file keeps its inode and extended attributes (an SELinux label is one) when the
#     script writes it; the ktutil fallback keeps the link;
#   - a fallback whose rename fails (the keytab is a mount point: EBUSY) says so and exits 1,
#     never "removed";
#   - a writer holding the keytab's fcntl lock (as MIT's and Heimdal's keytab code take it)
#     is waited for, and what it wrote meanwhile is kept.
# No lab state is changed: everything is under a scratch folder.
. "$(dirname "$0")/lib.sh"

KT_PL="$TOP/samba/scripts/keytab.pl"
W=$T_TMP/kt
mkdir -p "$W"

# mkkt FILE SPEC...: a keytab of version 0x0502 with one entry per SPEC
# "principal@REALM kvno8 kvno32|- enctype keyhex" (kvno32 '-': none written)
mkkt() {
	python3 - "$@" <<'EOF'
import struct, sys
out = open(sys.argv[1], "wb")
out.write(b"\x05\x02")
for spec in sys.argv[2:]:
    princ, k8, k32, et, key = spec.split()
    name, realm = princ.rsplit("@", 1)
    comps = name.split("/")
    d = struct.pack(">H", len(comps)) + struct.pack(">H", len(realm)) + realm.encode()
    for c in comps:
        d += struct.pack(">H", len(c)) + c.encode()
    key = bytes.fromhex(key)
    d += struct.pack(">IIBH", 1, 1700000000, int(k8), int(et)) + struct.pack(">H", len(key)) + key
    if k32 != "-":
        d += struct.pack(">I", int(k32))
    out.write(struct.pack(">i", len(d)) + d)
EOF
}
K1=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
K2=ffeeddccbbaa99887766554433221100
# klist: "kvno principal enctype key" lines, sorted; nothing when klist cannot read the keytab,
# a failed probe (lib.sh) that fails the test, so that "no longer holds" never passes on it
kl() {
	probe "klist -k -e -K $1 on srv" 0 on srv klist -k -e -K "$1" || return 1
	awk 'NR > 3 { gsub(/[()]/, ""); print $1, $2, $3, $4 }' <<<"$PROBE" | sort
}
add() { # KEYTAB: the principals on stdin, as the server phase adds them
	on srv env kt="$1" prog="$(cat "$KT_PL")" sh "$TOP/samba/scripts/keytab-add.sh"
}
remove() { # KEYTAB [PROG]: as cleanup takes them out; PROG 'exit 3' forces the ktutil fallback
	on srv env kt="$1" prog="${2:-$(cat "$KT_PL")}" sh "$TOP/samba/scripts/keytab-remove.sh"
}
host_kt() { # FILE: host/srv with kvno 7 in the 8-bit field and a 32-bit field of 0 (zero-fill)
	mkkt "$1" "host/srv@LAB.TEST 7 0 18 $K1" "host/srv@LAB.TEST 7 0 17 $K2"
}

# 1. the kvno: MIT reads 7 for the host/ entries; the copies must carry 7 too
host_kt "$W/a.kt"
[[ $(kl "$W/a.kt" | awk '{ print $1 }' | sort -u) == 7 ]] || fail "klist does not read kvno 7 in the scratch keytab: $(kl "$W/a.kt")"
out=$(printf 'cifs/srvu1\ncifs/srvu1.lab.test\n' | add "$W/a.kt" 2>&1)
[[ $out == "pv-kt added 2" ]] || fail "adding to a keytab with a zero 32-bit kvno: '$out'"
got=$(kl "$W/a.kt" | grep cifs/)
want=$(for p in cifs/srvu1 cifs/srvu1.lab.test; do
	printf '7 %s@LAB.TEST aes128-cts-hmac-sha1-96 0x%s\n7 %s@LAB.TEST aes256-cts-hmac-sha1-96 0x%s\n' "$p" $K2 "$p" $K1
done)
[[ $got == "$(sort <<<"$want")" ]] || fail "the copies do not carry the host/ entries' kvno 7 and keys: $got"

# 2. the file keeps its inode and extended attributes (an SELinux label is one): add, remove
host_kt "$W/x.kt"
setfattr -n user.pv -v label "$W/x.kt" || fail "cannot set an extended attribute in $W"
ino=$(stat -c %i "$W/x.kt")
for step in add remove; do
	out=$(printf 'cifs/srvu2\n' | $step "$W/x.kt" 2>&1)
	[[ $out == "pv-kt $step"* ]] || fail "$step: '$out'"
	[[ $(stat -c %i "$W/x.kt") == "$ino" ]] || fail "$step made a new file (inode $ino is now $(stat -c %i "$W/x.kt"))"
	[[ $(getfattr --only-values -n user.pv "$W/x.kt" 2>/dev/null) == label ]] ||
		fail "$step dropped the keytab's extended attribute (an SELinux label goes the same way)"
done
# a keytab that is a link stays one, and its target changes
host_kt "$W/real.kt"
ln -s real.kt "$W/link.kt"
out=$(printf 'cifs/srvu2\n' | add "$W/link.kt" 2>&1)
[[ $out == "pv-kt added 1" ]] || fail "adding through a link: '$out'"
[[ -L $W/link.kt ]] || fail "adding replaced the link $W/link.kt by a file"
[[ $(kl "$W/real.kt" | grep -c cifs/srvu2@) -eq 2 ]] || fail "the link's target does not hold cifs/srvu2: $(kl "$W/real.kt")"
out=$(printf 'cifs/srvu2\n' | remove "$W/link.kt" 2>&1)
[[ $out == "pv-kt removed 2" ]] || fail "removing through a link: '$out'"
[[ -L $W/link.kt ]] || fail "removing replaced the link $W/link.kt by a file"
kl "$W/real.kt" | grep -q cifs/srvu2@ && fail "the link's target still holds cifs/srvu2"
[[ $(kl "$W/real.kt" | grep -c host/srv@) -eq 2 ]] || fail "removing took more than cifs/srvu2: $(kl "$W/real.kt")"
# the ktutil fallback (no perl there): the link stays, its target loses the entries
printf 'cifs/srvu3\n' | add "$W/link.kt" >/dev/null 2>&1
out=$(printf 'cifs/srvu3\n' | remove "$W/link.kt" 'exit 3' 2>&1)
[[ $out == "pv-kt removed 2" ]] || fail "the ktutil fallback through a link: '$out'"
[[ -L $W/link.kt ]] || fail "the ktutil fallback replaced the link by a file"
kl "$W/real.kt" | grep -q cifs/srvu3@ && fail "the ktutil fallback left cifs/srvu3 in the link's target"

# 3. the fallback's rename fails (the keytab is a mount point there): exit 1, never "removed"
host_kt "$W/b.kt"
printf 'cifs/srvu4\n' | add "$W/b.kt" >/dev/null 2>&1
cp "$W/b.kt" "$W/b.before"
out=$(printf 'cifs/srvu4\n' | on srv env kt="$W/b.kt" prog='exit 3' W="$W" script="$TOP/samba/scripts/keytab-remove.sh" \
	unshare -m sh -c 'mount --bind "$W/b.kt" "$W/b.kt" && sh "$script"' 2>&1)
rc=$?
[[ $rc -eq 1 && $out == *"cannot replace"* && $out != *"pv-kt removed"* ]] ||
	fail "a failed rename in the ktutil fallback: exit $rc, '$out'"
cmp -s "$W/b.kt" "$W/b.before" || fail "a failed rename changed the keytab"

# 4. another writer holds the keytab's lock and appends an entry meanwhile: add waits for it,
# and both its entry and the copies are in the keytab at the end
host_kt "$W/c.kt"
mkkt "$W/other.kt" "cifs/other@LAB.TEST 7 7 18 $K1"
on srv python3 - "$W/c.kt" "$W/other.kt" "$W/held" <<'EOF' &
import fcntl, os, sys, time
kt, other, flag = sys.argv[1:]
fd = os.open(kt, os.O_RDWR)
fcntl.lockf(fd, fcntl.LOCK_EX)          # fcntl(F_SETLKW): the lock MIT and Heimdal take
open(flag, "w").close()
# until the copier is either done (it did not wait) or waiting for this lock
# (a waiter on this file is a "->" line of /proc/locks ending in its inode's "dev:ino")
ino = ":%d " % os.fstat(fd).st_ino
for _ in range(300):
    if os.path.exists(flag + ".done") or any(
            "->" in l and ino in l for l in open("/proc/locks")):
        break
    time.sleep(0.05)
entry = open(other, "rb").read()[2:]
os.lseek(fd, 0, os.SEEK_END)
os.write(fd, entry)                      # what 'net ads keytab add' would append
os.fsync(fd)
os.close(fd)                             # the lock goes with it
EOF
holder=$!
for _ in $(seq 100); do [[ -e $W/held ]] && break; sleep 0.05; done
out=$(printf 'cifs/srvu5\n' | add "$W/c.kt" 2>&1)
touch "$W/held.done"
wait "$holder"
[[ $out == "pv-kt added 1" ]] || fail "adding while another writer held the lock: '$out'"
got=$(kl "$W/c.kt")
[[ $(grep -c cifs/other@ <<<"$got") -eq 1 && $(grep -c cifs/srvu5@ <<<"$got") -eq 2 ]] ||
	fail "the other writer's entry and the copies are not both in the keytab: $got"

finish
