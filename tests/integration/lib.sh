# tests/integration/lib.sh: helpers shared by the integration tests (sourced, not run).
# Each test runs the built binary inside the lab's controller namespace (ctl) and checks what
# it did with independent tools. Assertions record failures; the test exits non-zero if any.
set -uo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LAB_SH="$TOP/tests/lab/lab.sh"
LAB=${PROVISION_LAB_DIR:-/var/lib/provision-lab}
PV="$TOP/bin/provision"
PLAYBOOK="$TOP/playbooks/lab.yaml"
T_FAILS=0
T_TMP=$(mktemp -d /tmp/pv-it.XXXXXX)
trap 'rm -rf "$T_TMP"' EXIT

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

# pv_bg ARGS...: provision in ctl in the background (stdout and stderr in $T_TMP/bgout,
# bgerr); sets BG (the lab exec) and PV_PID (provision itself, for signals)
pv_bg() {
	: >"$T_TMP/bgerr"
	on ctl "$PV" "$@" >"$T_TMP/bgout" 2>"$T_TMP/bgerr" &
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
}

# pv ARGS...: run provision in ctl; sets OUT, ERR, RC.
pv() {
	on ctl "$PV" "$@" >"$T_TMP/out" 2>"$T_TMP/err"
	RC=$?
	OUT=$(cat "$T_TMP/out")
	ERR=$(cat "$T_TMP/err")
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

finish() {
	[[ $T_FAILS -eq 0 ]]
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

# count_tagged: number of users carrying the lab's tag anywhere in the domain
count_tagged() {
	lds -b "$BASE_DN" "(&(objectClass=user)(description=$TAG))" dn | grep -c '^dn:' || true
}

# user_kinit NAME [PASSFILE]: a ticket for NAME with the shared password, in a fresh ccache
user_kinit() {
	local pass=${2:-$LAB/user.pass} cc="$T_TMP/cc.$1"
	on ctl env KRB5CCNAME="FILE:$cc" kinit "$1@LAB.TEST" <"$pass" >/dev/null 2>&1
	local rc=$?
	rm -f "$cc"
	return $rc
}

# ou_exists DN
ou_exists() {
	lds -b "$1" -s base '(objectClass=*)' dn 2>/dev/null | grep -q '^dn:'
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
# spns: how many cifs/srvu* SPNs the server's computer account holds
spns() { lds -b "$SRV_DN" -s base '(objectClass=computer)' servicePrincipalName 2>/dev/null | grep -ci '^servicePrincipalName: cifs/srvu' || true; }
# smb_n USER TARGET SHARE CMD: smbclient as USER with NTLM (the shared password, domain LAB)
smb_n() {
	printf 'username = %s\npassword = %s\ndomain = LAB\n' "$1" "$(cat "$LAB/user.pass")" >"$T_TMP/auth"
	on ctl smbclient -N -A "$T_TMP/auth" "//$2/$3" -I 198.18.0.20 -c "$4" 2>&1
}
