#!/usr/bin/env bash
# A hostile client (issue 22): what a client's root can send the controller, and what it must
# not get from it.
#   1. A client whose step folder holds a link to /etc/shadow, a link to a marker file of
#      random bytes, a block device, a character device, a FIFO and a link to /: with the
#      results on a remote controller (srv), none of them reaches the results folder there,
#      in any form (run/sink.h: only folders and regular files are made there, never what a
#      link points to), and no gathered file holds the marker's bytes, as one would had the
#      gatherer followed the links (tar -h); the regular file and the folder do (find, grep on
#      srv).
#   2. A client whose sshd answers for it (a second sshd on cli1, port 2222, whose
#      ForceCommand runs every command as asked but those the test picks, which it answers
#      itself), as a compromised client would:
#      - the built-in driver's figures for interval 30,000 of a 1-interval step: the client is
#        failed, and the controller's memory stays small (main kept an array of 30,000
#        intervals of 17 KB, about 500 MB: /usr/bin/time's maximum resident set);
#      - a 3 MB line without a break: refused at 1 MiB, the client failed;
#      - 100 MB from a small command (the client's facts): refused at 64 MiB;
#      - a provision load that exits with ESC and BEL sequences on its stderr: shown escaped;
#      - a provision load that never says ready: the step does not wait for it forever (its
#        logons' budget, 2 x 3 tries of the request timeout per 64 users, plus lost_after:
#        here 2 s and 6 s, 18 s for 2 users), the client is lost, the run fails (and the
#        run ends within 120 s, or the test stops it and fails).
#    Every run is under a timeout (lib.sh's PVT): a controller that hangs fails the test.
# Lab 'pvhostile'; the results folder on srv and the second sshd go at the end.
. "$(dirname "$0")/lib.sh"

W=$T_TMP/hostile
RES=/var/tmp/pv-hostile-results
mkdir -p "$W"
trap '[[ -s $W/sshd.pid ]] && kill "$(cat "$W/sshd.pid")" 2>/dev/null; on srv rm -rf "$RES"; rm -rf "$T_TMP"' EXIT
# a one-step run of 2 users, no watch, no drain
P=(-p "$PLAYBOOK" --set lab=pvhostile --set driver.min_users=2 --set driver.max_users=2
	--set driver.step=1 --set driver.duration=1 --set driver.warmup=0 --set driver.watch=0)

# ---- 1. a step folder holding links, devices and a FIFO, gathered to a remote controller ----
on srv rm -rf "$RES"
on srv mkdir -m 0755 "$RES"
# the marker: random bytes in a file outside the step folder (the lab's hosts share this /tmp),
# its path only in the command: a gathered file holding them came through the link
printf 'pv-hostile-marker %s\n' "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')" >"$W/marker"
chmod 0644 "$W/marker"
pv "${P[@]}" --set controller.host.name=srv --set controller.host.address=198.18.0.20 \
	--set controller.results="$RES" --set driver.client_command="cd {results} &&
		ln -s /etc/shadow shadow && ln -s '$W/marker' marker && mknod sda b 8 0 &&
		mknod null c 1 3 && mkfifo fifo && mkdir sub && ln -s / sub/root && echo ok >ok" run
expect_rc 0 "a run whose clients' step folders hold links, devices and a FIFO"
# (ok is made last: its being gathered says every entry above was made on the client)
[[ $(on srv sh -c "cat $RES/*/step-01/cli1/ok") == ok ]] || fail "the client's regular file was not gathered"
if probe "find in $RES on srv" 0 on srv find "$RES" -mindepth 1 -printf '%y %P\n'; then
	found=$PROBE
	grep -Eq '^d [^/]+/step-01/cli1/sub$' <<<"$found" || fail "the client's folder was not gathered: $found"
	odd=$(grep -v '^[df] ' <<<"$found")
	[[ -z $odd ]] || fail "a client's links, devices or FIFOs reached the controller's results: $odd"
	# not as what they point to either: none of their names is there, of any type
	planted=$(grep -E '^. [^/]+/step-01/cli[12]/(shadow|marker|sda|null|fifo|sub/root)(/|$)' <<<"$found")
	[[ -z $planted ]] || fail "what a client planted reached the results (followed?): $planted"
fi
if probe "grep -rF for the marker in $RES on srv" "0 1" on srv grep -rlF -- "$(cat "$W/marker")" "$RES"; then
	[[ -z $PROBE ]] || fail "a gathered file holds the marker's bytes: the link to it was followed: $PROBE"
fi

# ---- 2. a client whose sshd answers for it ----------------------------------------------------
on ctl mkdir -p "$LAB/results" # the lab playbook's local results folder
# figures for interval 30000, as provision load writes them (format 3)
python3 - "$TOP/tests/fuzz/corpus/loadline/quiet" >"$W/figures" <<'EOF'
import json, sys
d = json.loads(open(sys.argv[1]).readline())
d["i"] = 30000
print(json.dumps(d, separators=(",", ":")))
EOF
cat >"$W/hostile.sh" <<EOF
#!/bin/sh
# the ForceCommand of t_hostile's sshd: $W/mode picks what it answers itself
mode=\$(cat "$W/mode" 2>/dev/null)
cmd=\${SSH_ORIGINAL_COMMAND-}
case \$cmd in internal-sftp | *sftp-server*) exec /usr/lib/openssh/sftp-server ;; esac
case \$mode:\$cmd in
facts:*'uname -sr'*)
	head -c 100000000 /dev/zero
	exit 0 ;;
seq:*'" load --client'* | line:*'" load --client'*)
	while IFS= read -r l; do case \$l in start*) break ;; esac; done
	echo 'ready {"users":1,"connected":1,"failed":0,"error":null,"spoke":null,"logon":{"failed":0,"retries":0,"max":0,"hist":[]}}'
	IFS= read -r go
	if [ "\$mode" = seq ]; then cat "$W/figures"; else head -c 3000000 /dev/zero | tr '\\0' '{'; fi
	cat >/dev/null # until the controller closes the session
	exit 0 ;;
mute:*'" load --client'*)
	cat >/dev/null # reads all it is sent, says nothing
	exit 0 ;;
esc:*'" load --client'*)
	printf '\\033]0;pwned\\007\\033[2J boom\\n' >&2
	exit 3 ;;
esac
exec /bin/sh -c "\$cmd"
EOF
chmod 0755 "$W/hostile.sh"
sed -e 's/^ListenAddress .*/ListenAddress 198.18.0.31:2222/' -e "s#^PidFile .*#PidFile $W/sshd.pid#" \
	"$LAB/ssh/sshd_cli1.conf" >"$W/sshd.conf"
echo "ForceCommand $W/hostile.sh" >>"$W/sshd.conf"
on cli1 /usr/sbin/sshd -f "$W/sshd.conf" -E "$W/sshd.log" || fail "the hostile sshd did not start: $(cat "$W/sshd.log")"
echo "[198.18.0.31]:2222 $(cut -d' ' -f1,2 "$LAB/ssh/host_cli1_ed25519.pub")" >"$W/kh"
for _ in $(seq 100); do on ctl bash -c ': </dev/tcp/198.18.0.31/2222' 2>/dev/null && break; sleep 0.1; done
# both clients are cli1 through the hostile sshd
H=("${P[@]}" --set driver.name=builtin)
for i in 0 1; do
	H+=(--set "clients.$i.address=198.18.0.31" --set "clients.$i.ssh.port=2222" --set "clients.$i.ssh.known_hosts=$W/kh")
done
# hrun MODE [SECONDS]: run through the hostile sshd in MODE, under /usr/bin/time (MAXRSS: KB)
# and a timeout of SECONDS (PV_TIMEOUT): one that fires fails the test. time is outside the
# timeout so that it waits for both (its figure is the larger, provision's)
hrun() {
	local t0=$SECONDS limit=${2:-$PV_TIMEOUT}
	echo "$1" >"$W/mode"
	on ctl /usr/bin/time -f 'maxrss %M' -o "$W/time" timeout --foreground --kill-after=10 "$limit" \
		"$PV" "${H[@]}" run >"$T_TMP/out" 2>"$T_TMP/err"
	RC=$?
	OUT=$(cat "$T_TMP/out")
	ERR=$(cat "$T_TMP/err")
	MAXRSS=$(awk '/^maxrss/ { print $2 }' "$W/time")
	pv_timed_out "$RC" "$t0" "run through the hostile sshd ($1)" "$limit" && show
}

hrun seq
[[ $RC -ne 0 ]] || fail "a client sending interval 30000 of a 1-interval step was not failed"
expect_err "sent figures for interval 30000; the step has at most [0-9]+"
[[ ${MAXRSS:-0} -lt 200000 ]] || fail "the controller grew to $MAXRSS KB reading one line of figures"

hrun line
[[ $RC -ne 0 ]] || fail "a client sending a 3 MB line was not failed"
expect_err "printed a line longer than 1024 KiB"

hrun facts
[[ $RC -ne 0 ]] || fail "a client answering 100 MB to a small command was not refused"
expect_err "printed more than 64 MiB: refused"
[[ ${MAXRSS:-0} -lt 200000 ]] || fail "the controller grew to $MAXRSS KB reading a client's facts"

hrun esc
[[ $RC -ne 0 ]] || fail "a provision load that exited 3 did not fail the run"
grep -q $'[\033\007]' "$T_TMP/out" "$T_TMP/err" && fail "a client's ESC or BEL reached the terminal: $(od -c "$T_TMP/err" | grep -m1 033)"
expect_err 'boom|\\x1b'

# the step's logons' budget with the request timeout at 2 s: 2 x 3 x 2 s for up to 64 users,
# and lost_after (6 s: 3 heartbeats)
H+=(--set clients.0.ssh.timeout=2 --set clients.1.ssh.timeout=2)
hrun mute 120
[[ $RC -ne 0 ]] || fail "a client that never said ready did not fail the run"
expect_err "did not say ready within 18 s of being given 1 user \\(their logons"

finish
