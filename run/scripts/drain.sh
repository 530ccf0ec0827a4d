# run/scripts/drain.sh: one reading of a built-in drain probe on the file server, run by
# run/drain.c once per poll (pv_remote_sh_line) with the variable probe set before it; it
# prints what drain.c parses.
#   writeback  the Dirty: and Writeback: lines of /proc/meminfo (kB): the kernel's write queue
#   inflight   every /sys/block/*/inflight: the reads and writes in flight, a device a line
#   smb        smbstatus --json --resolve-uids (Samba 4.17 and later): sessions and open
#              files, each with its user's name
set -u
case ${probe-} in
writeback)
	grep -E '^(Dirty|Writeback):' /proc/meminfo
	;;
inflight)
	for f in /sys/block/*/inflight; do
		# a device may go between the glob and the read (loop devices come and go)
		if [ -r "$f" ]; then
			cat "$f" 2>/dev/null
		fi
	done
	exit 0
	;;
smb)
	exec smbstatus --json --resolve-uids
	;;
*)
	echo "drain.sh: unknown probe '${probe-}'" >&2
	exit 2
	;;
esac
