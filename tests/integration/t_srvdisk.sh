#!/usr/bin/env bash
# lab.sh srv-disk, the journaled disk the benchmarks give srv's /srv (bench/signing.sh): `ext4`
# refuses while /srv holds anything, then puts /srv on a loop-mounted ext4 with a journal that
# srv's sshd and the Samba daemons see; `server` builds its trees there (findmnt and df on srv);
# `off` refuses while the trees are there, and after cleanup unmounts the disk, deletes its
# image and lets the loop device go (losetup). Lab 'pvdisk' (users dk-cli1-u1...), left as
# found: the disk off, the lab clean.
. "$(dirname "$0")/lib.sh"

P=(-p "$PLAYBOOK" --set lab=pvdisk --set "users.name_template=dk-{client}-u{n}" --set users.per_client=1)
IMG=$LAB/srv/disk.img
trap 'on srv rm -f /srv/pv-disk-stray; on ctl "${PVT[@]}" "$PV" "${P[@]}" cleanup --leave >/dev/null 2>&1
	"$LAB_SH" srv-disk off >/dev/null 2>&1; rm -rf "$T_TMP"' EXIT

disk() { # lab.sh srv-disk ARG: its exit status in RC, stderr in ERR
	ERR=$("$LAB_SH" srv-disk "$1" 2>&1 >/dev/null)
	RC=$?
}
# the loop devices that hold the image (losetup -a failing is a failed probe, -1: lib.sh)
loops() { probe_count -F "loops (losetup -a)" 0 "$IMG" losetup -a; }
# mounted DIR: 0 when DIR is a mount point, 1 when not (mountpoint's 32), 2 when mountpoint
# could not tell (its 1: recorded as a failed probe)
mounted() {
	mountpoint -q "$1"
	case $? in
	0) return 0 ;;
	32) return 1 ;;
	esac
	probe_failed "mountpoint $1: cannot tell"
	return 2
}

pv "${P[@]}" cleanup --leave
[[ -z $(ls -A "$LAB/srv/srv") ]] || fail "srv's /srv is not empty before the test: $(ls -A "$LAB/srv/srv")"

# something in /srv: refused, nothing mounted
on srv touch /srv/pv-disk-stray
disk ext4
[[ $RC -eq 2 ]] || fail "srv-disk ext4 with a file in /srv: exit $RC, not 2"
grep -q "srv's /srv holds pv-disk-stray.*clean the lab's server up first" <<<"$ERR" || fail "refusal does not say what /srv holds: $ERR"
mounted "$LAB/srv/srv" && fail "srv-disk ext4 mounted a disk over a /srv that holds files"
on srv rm -f /srv/pv-disk-stray

disk ext4
[[ $RC -eq 0 ]] || fail "srv-disk ext4: exit $RC: $ERR"
src=$(on srv findmnt -n -o SOURCE,FSTYPE /srv)
[[ $src =~ ^/dev/loop[0-9]+\ +ext4$ ]] || fail "srv's sshd does not see /srv on a loop ext4: '$src'"
on srv sh -c 'dumpe2fs -h "$(findmnt -n -o SOURCE /srv)" 2>/dev/null' | grep -q '^Filesystem features:.*has_journal' ||
	fail "srv's disk has no journal"
"$LAB_SH" srv-disk status | grep -q "its own ext4" || fail "srv-disk status does not say so: $("$LAB_SH" srv-disk status)"

# trees built on it, through smbd (a daemon still on the old /srv would write under the mount,
# where sshd's sessions do not see)
pv "${P[@]}" prepare
expect_rc 0 "prepare on srv's own disk"
[[ $(srv_tree fsroot1 dk-cli1-u1) == "$SMALL_FILES $SMALL_BYTES" ]] ||
	fail "dk-cli1-u1's tree is '$(srv_tree fsroot1 dk-cli1-u1)', not $SMALL_FILES files"
[[ $(on srv df --output=source "$SP/fsroot1/dk-cli1-u1" | tail -1) == "${src%% *}" ]] ||
	fail "the tree is not on srv's disk: $(on srv df --output=source "$SP/fsroot1/dk-cli1-u1")"

disk off
[[ $RC -eq 2 ]] || fail "srv-disk off with the trees on it: exit $RC, not 2"
grep -q "srv's /srv holds provision" <<<"$ERR" || fail "off's refusal does not name what /srv holds: $ERR"
mounted "$LAB/srv/srv" || fail "srv-disk off unmounted the disk though it refused"

pv "${P[@]}" cleanup --leave
expect_rc 0 "cleanup --leave"
disk off
[[ $RC -eq 0 ]] || fail "srv-disk off: exit $RC: $ERR"
mounted "$LAB/srv/srv" && fail "srv's disk is still mounted"
[[ -e $IMG ]] && fail "srv's disk image $IMG is left"
for _ in $(seq 50); do (($(loops) <= 0)) && break; sleep 0.1; done # (-1: the probe failed)
[[ $(loops) -eq 0 ]] || fail "the loop device still holds the image: $(losetup -a)"
src=$(on srv findmnt -n -o SOURCE /srv)
[[ $src != /dev/loop* ]] || fail "srv's sshd still sees the disk: $src"
finish
