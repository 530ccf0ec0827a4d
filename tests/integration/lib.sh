# tests/integration/lib.sh: helpers shared by the integration tests (sourced, not run).
# Each test runs the built binary inside the lab's controller namespace (ctl) and checks what
# it did with independent tools. Assertions record failures; the test exits non-zero if any,
# 77 when nothing failed but a part could not run on this lab (skip: run.sh says SKIP).
# Every provision call runs under a timeout (PVT, PV_TIMEOUT), and a probe that cannot look
# (ldapsearch, net, klist... failing) fails the test instead of reading as "none" (probe).
set -uo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LAB_SH="$TOP/tests/lab/lab.sh"
LAB=${PROVISION_LAB_DIR:-/var/lib/provision-lab}
PV="$TOP/bin/provision"
PLAYBOOK="$TOP/playbooks/lab.yaml"
T_FAILS=0
T_SKIPS=0
T_TMP=$(mktemp -d /tmp/pv-it.XXXXXX)
trap 'rm -rf "$T_TMP"' EXIT
# T_TRACE=FILE: every line the test runs appended to FILE with the time it began (bash's
# xtrace) and the line of the test it runs for (the call's, in a function), for
# tests/integration/times.py to say where a test's time goes
if [[ -n ${T_TRACE:-} ]]; then
	exec {T_TRACE_FD}>>"$T_TRACE"
	BASH_XTRACEFD=$T_TRACE_FD
	PS4='+${EPOCHREALTIME} ${BASH_SOURCE[-1]##*/}:${BASH_LINENO[@]: -2:1}:${LINENO} '
	set -x
fi

# Every provision call runs under a timeout, so that one that hangs fails its test instead of
# holding the suite (and the shared lab) forever: PVT goes right before "$PV", inside `on`, so
# that timeout is provision's parent. --foreground keeps provision in the test's process group
# (a Ctrl-C of the test still reaches it) and has timeout signal provision itself: SIGTERM after
# PV_TIMEOUT seconds (provision stops what it started, exit 15), SIGKILL 10 s later.
PV_TIMEOUT=${PV_TIMEOUT:-600}
PVT=(timeout --foreground --kill-after=10 "$PV_TIMEOUT")

# pv_timed_out RC T0 WHAT [LIMIT]: whether a provision call started at SECONDS=T0 that ended
# with RC was stopped by its timeout (LIMIT seconds, PV_TIMEOUT by default): timeout's 124, or
# 137 (SIGKILL) once the limit had passed (a test's own SIGKILL comes sooner); then a FAIL
# naming WHAT.
pv_timed_out() {
	local rc=$1 t0=$2 what=$3 limit=${4:-$PV_TIMEOUT}
	if ((rc == 124 || rc == 137)) && ((SECONDS - t0 >= limit)); then
		fail "${what:0:200}: still running after its timeout of ${limit} s: stopped (exit $rc)"
		return 0
	fi
	return 1
}

# on HOST CMD...: run a command on a lab host.
on() {
	local host=$1
	shift
	"$LAB_SH" exec "$host" -- "$@"
}

# child_named PID NAME: the PID of a process named NAME below PID (which this test started)
child_named() {
	local c
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		[[ $(cat /proc/"$c"/comm 2>/dev/null) == "$2" ]] && { echo "$c"; return 0; }
		child_named "$c" "$2" && return 0
	done
	return 1
}

# pv_bg ARGS...: provision in ctl in the background, under the timeout (stdout and stderr in
# $T_TMP/bgout, bgerr); sets BG (the lab exec) and PV_PID (provision itself, for signals)
pv_bg() {
	: >"$T_TMP/bgerr"
	BG_T0=$SECONDS
	BG_WHAT="provision $*"
	on ctl "${PVT[@]}" "$PV" "$@" >"$T_TMP/bgout" 2>"$T_TMP/bgerr" &
	BG=$!
	PV_PID=
	for _ in $(seq 100); do
		PV_PID=$(child_named "$BG" provision) && break
		sleep 0.05
	done
	[[ -n $PV_PID ]] || fail "provision did not start"
}

# pv_when PATTERN [SECONDS]: until the background provision's stderr shows PATTERN (60 s)
pv_when() {
	local end=$((SECONDS + ${2:-60}))
	until grep -Eq -- "$1" "$T_TMP/bgerr"; do
		if ((SECONDS > end)) || ! kill -0 "$BG" 2>/dev/null; then
			fail "provision never printed /$1/: $(tail -n 3 "$T_TMP/bgerr")"
			return 1
		fi
		sleep 0.05
	done
}

# pv_bg_wait [SECONDS]: wait for the background provision (killed after SECONDS when given:
# RC 124 then); sets RC, OUT, ERR
pv_bg_wait() {
	local i
	if [[ -n ${1:-} ]]; then
		for ((i = 0; i < $1 * 10; i++)); do
			kill -0 "$BG" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$BG" 2>/dev/null; then
			[[ -n $PV_PID ]] && kill -KILL "$PV_PID" 2>/dev/null
			fail "provision still ran after $1 s: killed"
		fi
	fi
	wait "$BG"
	RC=$?
	BG=
	OUT=$(cat "$T_TMP/bgout")
	ERR=$(cat "$T_TMP/bgerr")
	pv_timed_out "$RC" "$BG_T0" "$BG_WHAT" && show
}

# pv ARGS...: run provision in ctl, under the timeout; sets OUT, ERR, RC.
pv() {
	local t0=$SECONDS
	on ctl "${PVT[@]}" "$PV" "$@" >"$T_TMP/out" 2>"$T_TMP/err"
	RC=$?
	OUT=$(cat "$T_TMP/out")
	ERR=$(cat "$T_TMP/err")
	pv_timed_out "$RC" "$t0" "provision $*" && show
}

fail() {
	echo "    FAIL: $*" >&2
	T_FAILS=$((T_FAILS + 1))
}

show() {
	echo "    --- stdout:" >&2
	printf '%s\n' "$OUT" | sed 's/^/    /' >&2
	echo "    --- stderr:" >&2
	printf '%s\n' "$ERR" | sed 's/^/    /' >&2
}

expect_rc() {
	if [[ $RC -ne $1 ]]; then
		fail "${2:-command}: exit status $RC, expected $1"
		show
	fi
}

# expect_out REGEX [what]: stdout matches (grep -E).
expect_out() {
	if ! grep -Eq -- "$1" <<<"$OUT"; then
		fail "${2:-stdout} does not match /$1/"
		show
	fi
}

expect_err() {
	if ! grep -Eq -- "$1" <<<"$ERR"; then
		fail "${2:-stderr} does not match /$1/"
		show
	fi
}

expect_no_out() {
	if grep -Eq -- "$1" <<<"$OUT$ERR"; then
		fail "${2:-output} matches /$1/ but should not"
		show
	fi
}

# skip WHY: a part of this test cannot run on this lab (said why, on stderr). The test still
# runs the rest; when nothing failed it exits 77, which run.sh reports as SKIP, not PASS.
skip() {
	echo "    SKIP: $*" >&2
	T_SKIPS=$((T_SKIPS + 1))
}

# finish: the test's status, its last command: 0, 1 on any failure (probes that could not look
# included), 77 when nothing failed but something was skipped
finish() {
	local n
	if [[ -s $T_TMP/probes ]]; then
		n=$(wc -l <"$T_TMP/probes")
		echo "    $n probe(s) could not look (each FAIL: probe above): nothing they read counts" >&2
		T_FAILS=$((T_FAILS + n))
	fi
	((T_FAILS == 0)) || return 1
	((T_SKIPS == 0)) || return 77
	return 0
}

# ---- probes: what a test reads back from the lab with independent tools ----
# A probe that cannot look (ldapsearch refused or the DC away, net conf or klist failing, a
# host not reached) must never read as "none found", or every "nothing left" check would pass
# with the lab unreachable. A failed probe is said on stderr (FAIL: probe ...) and written to
# $T_TMP/probes, which finish() counts as failures: probes run in $(...), a subshell, where
# fail() cannot reach T_FAILS. A count it cannot make is -1, which no count equals.

# probe_failed WHAT...: record a probe that could not look
probe_failed() {
	echo "    FAIL: probe $*" >&2
	echo "$*" >>"$T_TMP/probes"
}

# probe WHAT OK CMD...: run the probe CMD, its stdout into PROBE. 0 when its exit status is
# one of OK (a list: "0", or "0 32" for an ldapsearch whose base may be gone); else the probe
# failed (recorded, naming WHAT, the status and the first line CMD said on stderr), and 1.
probe() {
	local what=$1 ok=$2 rc said
	shift 2
	PROBE=$("$@" 2>"$T_TMP/probe.err")
	rc=$?
	[[ " $ok " == *" $rc "* ]] && return 0
	said=$(head -n 1 "$T_TMP/probe.err" | cut -c1-300)
	probe_failed "$what: exit $rc${said:+: $said}"
	return 1
}

# n_lines [-i|-F|-x]... REGEX: how many lines of stdin match (grep -Ec; -F: a fixed string):
# 0 when none (grep's status 1); a grep that fails (2: a bad pattern, a read error) is a failed
# probe, and -1
n_lines() {
	local opts=(-E) n rc
	while [[ ${1:-} == -[iFx] ]]; do
		if [[ $1 == -F ]]; then opts[0]=-F; else opts+=("$1"); fi
		shift
	done
	n=$(grep -c "${opts[@]}" -- "$1")
	rc=$?
	if ((rc > 1)); then
		probe_failed "grep -c '$1': exit $rc"
		echo -1
		return 1
	fi
	echo "$n"
}

# probe_count [-i|-F|-x]... WHAT OK REGEX CMD...: how many lines of CMD's stdout match REGEX;
# -1 (and a failed probe) when CMD's exit status is not in OK
probe_count() {
	local opts=()
	while [[ ${1:-} == -[iFx] ]]; do
		opts+=("$1")
		shift
	done
	local what=$1 ok=$2 re=$3
	shift 3
	probe "$what" "$ok" "$@" || {
		echo -1
		return 1
	}
	n_lines "${opts[@]}" "$re" <<<"$PROBE"
}

# probe_has [-i|-F|-x]... WHAT OK REGEX CMD...: 0 when a line of CMD's stdout matches REGEX, 1
# when none does, 2 when the probe failed (recorded: the test fails whichever way it is read)
probe_has() {
	local n
	n=$(probe_count "$@")
	((n > 0)) && return 0
	((n == 0)) && return 1
	return 2
}

# ---- directory helpers (independent of provision: ldapsearch/ldapadd/kinit in ctl) ----
BASE_DN="DC=lab,DC=test"
LAB_OU="OU=provision,$BASE_DN"
TAG="provision:provision"

# lds ARGS...: ldapsearch over LDAPS as the admin (CA from the lab's ldap.conf), no wrapping
lds() {
	on ctl ldapsearch -LLL -o ldif-wrap=no -H ldaps://dc.lab.test -D "Administrator@LAB.TEST" \
		-y "$LAB/admin.pass" "$@"
}

# ldm: ldapmodify/ldapadd over LDAPS as the admin, LDIF on stdin
ldm() {
	on ctl ldapmodify -H ldaps://dc.lab.test -D "Administrator@LAB.TEST" -y "$LAB/admin.pass" "$@"
}

# count_tagged: number of users carrying the lab's tag anywhere in the domain (-1: the probe
# failed; ldapsearch's size limit, 4, is a failure too: the count would be cut)
count_tagged() {
	probe_count "count_tagged (ldapsearch for $TAG)" 0 '^dn:' \
		lds -b "$BASE_DN" "(&(objectClass=user)(description=$TAG))" dn
}

# user_kinit NAME [PASSFILE]: a ticket for NAME with the shared password, in a fresh ccache
user_kinit() {
	local pass=${2:-$LAB/user.pass} cc="$T_TMP/cc.$1"
	on ctl env KRB5CCNAME="FILE:$cc" kinit "$1@LAB.TEST" <"$pass" >/dev/null 2>&1
	local rc=$?
	rm -f "$cc"
	return $rc
}

# ou_exists DN: 0 when DN exists, 1 when the DC says it does not (ldapsearch's 32, no such
# object), 2 when the probe failed (recorded)
ou_exists() {
	probe_has "ou_exists $1 (ldapsearch)" "0 32" '^dn:' lds -b "$1" -s base '(objectClass=*)' dn
}

# ---- the file server (independent of provision: find on srv's disk, net, smbclient) ----
SRV_DN="CN=SRV,CN=Computers,$BASE_DN"
SP=/srv/provision
# the shipped small fileset, per user: 70 files, 953657 bytes (sizes are deterministic)
SMALL_FILES=70
SMALL_BYTES=953657

# srv_tree SHARE USER: "files bytes" of the user's tree, from srv's own disk
srv_tree() {
	on srv sh -c "cd $SP/$1/$2 && echo \$(find . -type f | wc -l) \$(find . -type f -printf '%s\n' | awk '{ s += \$1 } END { print s + 0 }')"
}
joined() { on srv net ads testjoin >/dev/null 2>&1; }
# spns: how many cifs/srvu* SPNs the server's computer account holds (none when the account
# is gone: ldapsearch's 32; -1: the probe failed)
spns() {
	probe_count -i "spns (ldapsearch of $SRV_DN)" "0 32" '^servicePrincipalName: cifs/srvu' \
		lds -b "$SRV_DN" -s base '(objectClass=computer)' servicePrincipalName
}
# shares: how many fsroot* shares srv's registry holds (net conf listshares; -1: it failed)
shares() { probe_count "shares (net conf listshares on srv)" 0 '^fsroot' on srv net conf listshares; }
# name_resolves HOST NAME: 0 when NAME resolves on HOST (getent hosts), 1 when it does not
# (getent's 2, not found), 2 when the probe failed (recorded). getent's status is read from
# what the host printed, as lab.sh's own failure is a 2 too.
name_resolves() {
	probe "resolves $2 on $1 (getent hosts)" 0 on "$1" sh -c 'getent hosts "$1"; echo "getent=$?"' sh "$2" ||
		return 2
	case $PROBE in
	*getent=0) return 0 ;;
	*getent=2) return 1 ;;
	esac
	probe_failed "resolves $2 on $1: getent hosts said: ${PROBE//$'\n'/ }"
	return 2
}
# host_test HOST TEST-ARGS...: test(1) on HOST: 0 true, 1 false, 2 when the probe failed
# (recorded: lab.sh's own failure must not read as false)
host_test() {
	local h=$1
	shift
	probe "test $* on $h" 0 on "$h" sh -c 'test "$@"; echo "test=$?"' sh "$@" || return 2
	case $PROBE in
	test=0) return 0 ;;
	test=1) return 1 ;;
	esac
	probe_failed "test $* on $h: $PROBE"
	return 2
}
# hosts_blocks HOST LAB: how many hosts blocks of lab LAB HOST's /etc/hosts holds (-1: it
# could not be read)
hosts_blocks() {
	probe_count -x "hosts_blocks $1 (cat /etc/hosts)" 0 "# BEGIN provision $2" on "$1" cat /etc/hosts
}
# smb_n USER TARGET SHARE CMD: smbclient as USER with NTLM (the shared password, domain LAB)
smb_n() {
	(umask 077 && printf 'username = %s\npassword = %s\ndomain = LAB\n' "$1" "$(cat "$LAB/user.pass")" >"$T_TMP/auth")
	on ctl smbclient -N -A "$T_TMP/auth" "//$2/$3" -I 198.18.0.20 -c "$4" 2>&1
}

# ---- waiting for a state (never a sleep as synchronisation) ----
# wait_until SECONDS WHAT CMD...: run CMD every 0.1 s until it succeeds; 0 then. After SECONDS,
# a FAIL naming WHAT, and 1.
wait_until() {
	local secs=$1 what=$2 end=$((SECONDS + $1))
	shift 2
	until "$@"; do
		if ((SECONDS >= end)); then
			fail "$what: not within $secs s"
			return 1
		fi
		sleep 0.1
	done
}

# ---- SMB sessions on srv, as srv's smbd has them (smbstatus --json on srv) ----
# srv_smb REGEX: srv's SMB sessions and tree connects of the users REGEX matches (grep -E, the
# whole name after the domain, any case), one line each, into SMB:
#   session USER SESSION-ID DIALECT ENCRYPTION-CIPHER/DEGREE SIGNING-CIPHER/DEGREE
#   tcon SERVICE USER ENCRYPTION-CIPHER/DEGREE SIGNING-CIPHER/DEGREE
# in Samba 4.17's words (source3/utils/status.c): a cipher such as AES-128-GCM or AES-128-GMAC,
# "-" when none, and a degree "full", "partial" or "none"; the dialect "SMB3_11". 1 when the
# probe failed (recorded: the test fails), SMB then empty.
srv_smb() {
	local sessions tcons
	SMB=
	# two looks, sessions (-p) then tree connects (-S): a tcon is joined to its session by id, so
	# any tcon of a session that was there at the first look has its user. Not the one plain
	# look: it walks the open files too, and Samba 4.17's smbstatus --json PANICs there on an
	# oplock or access mask it has no name for (status_json.c, map_mask_to_json: "tomap == 0",
	# met by a CI run while the load ran)
	probe "smbstatus --json -p on srv" 0 on srv smbstatus --json -p || return 1
	sessions=$PROBE
	probe "smbstatus --json -S on srv" 0 on srv smbstatus --json -S || return 1
	tcons=$PROBE
	SMB=$(python3 -c '
import json, re, sys
d = json.load(sys.stdin)
mine = lambda n: re.fullmatch(sys.argv[1], (n or "").split("\\")[-1], re.I) is not None
c = lambda x: "%s/%s" % ((x or {}).get("cipher") or "-", (x or {}).get("degree") or "none")
user = {}
for s in d.get("sessions", {}).values():
    u = (s.get("username") or "").split("\\")[-1]
    user[str(s.get("session_id"))] = u
    if mine(u):
        print("session", u, s.get("session_id"), s.get("session_dialect") or "-",
              c(s.get("encryption")), c(s.get("signing")))
for t in json.loads(sys.argv[2]).get("tcons", {}).values():
    u = user.get(str(t.get("session_id")), "")
    if mine(u):
        print("tcon", t.get("service") or "-", u, c(t.get("encryption")), c(t.get("signing")))
' "$1" "$tcons" <<<"$sessions" 2>"$T_TMP/srv_smb.err") || {
		probe_failed "srv_smb: smbstatus's JSON: $(tail -n 1 "$T_TMP/srv_smb.err")"
		SMB=
		return 1
	}
}
# srv_sessions REGEX: how many sessions of the users REGEX matches srv has (-1: the probe
# failed); SMB holds them (srv_smb)
srv_sessions() {
	srv_smb "$1" || { echo -1; return 1; }
	n_lines '^session ' <<<"$SMB"
}
# srv_sessions_until REGEX N SECONDS: until srv has N sessions at least of the users REGEX
# matches (polled); SMB holds what the looks saw together (each session once: srv's smbstatus,
# its smbd held to a few % of a CPU, lists a different part of the sessions from one look to
# the next). 1 (and a FAIL) when they never were, or the probe failed.
srv_sessions_until() {
	local end=$((SECONDS + $3)) n seen=""
	while :; do
		srv_smb "$1" || return 1
		# each session once (its latest line: keyed by its id), each tcon line once
		seen=$(printf '%s\n%s\n' "$seen" "$SMB" | awk 'NF { k = $1 == "session" ? $1 " " $3 : $0; if (!(k in v)) o[n++] = k; v[k] = $0 } END { for (i = 0; i < n; i++) print v[o[i]] }')
		SMB=$seen
		n=$(n_lines '^session ' <<<"$SMB")
		((n >= $2)) && return 0
		if ((SECONDS >= end)); then
			fail "srv's smbstatus never showed $2 sessions of /$1/ within $3 s (the looks together: $n)"
			return 1
		fi
		sleep 0.2
	done
}

# ---- no secret on any host's command lines (/proc/*/cmdline, every process of the lab) ----
# argv_watch_start FILE...: start watching the command line of every process of the lab's
# hosts (tests/integration/argv_watch.py: at every exec, told by the kernel, and every 0.25 s)
# for the secrets FILE... hold (each file one secret, as provision reads {file: PATH}: its
# trailing newline dropped), and for a canary of its own (ARGV_CANARY, argv_watch_canary);
# returns once it looks (10 s at most, else a FAIL).
argv_watch_start() {
	local f
	ARGV_PID=
	ARGV_NSECRETS=$#
	ARGV_CANARY=pv-canary-$RANDOM$RANDOM-$$
	ARGV_CANARY_ON=
	(umask 077 && : >"$T_TMP/argv.secrets") || { fail "argv_watch: no secrets file"; return 1; }
	for f; do
		printf '%s\n' "$(cat "$f")" >>"$T_TMP/argv.secrets"
	done
	printf '%s\n' "$ARGV_CANARY" >>"$T_TMP/argv.secrets"
	rm -f "$T_TMP/argv.json" "$T_TMP/argv.ready"
	python3 "$TOP/tests/integration/argv_watch.py" "$T_TMP/argv.secrets" "$T_TMP/argv.json" \
		"$T_TMP/argv.ready" --canary-last 2>"$T_TMP/argv.err" &
	ARGV_PID=$!
	wait_until 10 "the command-line watcher started" test -s "$T_TMP/argv.ready"
}
# argv_watch_canary HOST: a command living 10 ms on HOST with the watcher's canary on its
# command line, as a password would be: argv_watch_stop fails unless the watcher saw it (a
# watcher that misses it would miss a password too). The watcher reads a command line when
# the kernel says it was exec'd: one that lives under a millisecond may be gone first (in a
# trial here 39 of 40 such were seen, every one of 40 that lived 10 ms): it is a sample.
argv_watch_canary() {
	on "$1" sh -c ": $ARGV_CANARY; sleep 0.01"
	ARGV_CANARY_ON+=" $1"
}
# argv_watch_stop WHAT [HOST...]: stop the watcher; a FAIL for every secret it saw on a command
# line (the host, pid and command line, each secret shown as <secret N>), for a canary it did
# not see where argv_watch_canary put it, and for each HOST where it saw nothing of
# provision's during WHAT (it would prove nothing there): on ctl a provision process, on
# another host a command an SSH session started; a SKIP when the kernel's process events
# could not be had (the command lines were then only polled).
argv_watch_stop() {
	local what=$1 said
	shift
	[[ -n ${ARGV_PID:-} ]] || { fail "argv_watch_stop $what: no watcher"; return 1; }
	kill -TERM "$ARGV_PID" 2>/dev/null
	wait "$ARGV_PID"
	ARGV_PID=
	said=$(python3 - "$T_TMP/argv.json" "$what" "$ARGV_NSECRETS" "${ARGV_CANARY_ON:-}" "$@" <<'PY' 2>&1
import json, sys
out, what, canary, canary_on, need = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split(), sys.argv[5:]
d = json.load(open(out))
if d.get("error") and "hosts" not in d:
    print("FAIL %s: the watcher: %s" % (what, d["error"]))
    sys.exit()
for h in d["hits"]:
    if h["secret"] != canary:
        print("FAIL %s: secret %d on a command line on %s (pid %d, seen at its %s): %s" % (
            what, h["secret"], h["host"], h["pid"], h["via"], h["argv"]))
for h in canary_on:
    if not any(x["secret"] == canary and x["host"] == h for x in d["hits"]):
        print("FAIL %s: the watcher missed the canary's command line on %s: it would miss a password" % (what, h))
for h in need:
    s = d["hosts"].get(h)
    if not s or not (("provision" in s["progs"]) if h == "ctl" else s["ssh"]):
        print("FAIL %s: the watcher saw nothing of provision's on %s%s: it proves nothing there" % (
            what, h, "" if s else " (no such lab host)"))
if not d["connector"]:
    print("SKIP %s: only polled every 0.25 s (%s): a short-lived command line may be missed" % (
        what, d["error"]))
hits = [h for h in d["hits"] if h["secret"] != canary]
print("INFO %s: %d programs started and %s processes looked at on the lab's hosts (%s), %d lost "
      "events, the canary seen %d times; no secret on any command line" % (
      what, sum(s["execs"] for s in d["hosts"].values()), sum(s["examined"] for s in d["hosts"].values()),
      ", ".join("%s %d, %d over SSH" % (h, s["execs"], s["ssh"]) for h, s in sorted(d["hosts"].items())), d["overruns"],
      len(d["hits"]) - len(hits)) if not hits else "INFO %s: %d hits" % (what, len(hits)))
PY
	) || said="FAIL $what: the watcher's summary could not be read: $said $(tail -n 2 "$T_TMP/argv.err")"
	while IFS= read -r line; do
		case $line in
		"FAIL "*) fail "${line#FAIL }" ;;
		"SKIP "*) skip "${line#SKIP }" ;;
		*) echo "    ${line#INFO }" >&2 ;;
		esac
	done <<<"$said"
}
