#!/usr/bin/env bash
# tests/docs/t_examples.sh: every example playbook of playbooks/examples/ (docs/your-servers.md)
# is accepted as it is: read and checked, its ramp and its driver's settings too, by `run
# --dry-run`, which contacts no host (it runs here in a network namespace of its own, so it
# cannot: no lab, no network). Per kind of site what the page says: the Samba member takes the
# built-in driver; the Windows site renders FSCT's command lines for its own hosts; the NAS has
# the watch off and refuses the join and server phases before touching anything (status 3);
# the FSCT site, without its controller host, is refused naming controller.host.
. "$(dirname "$0")/../integration/lib.sh"

EX=$TOP/playbooks/examples
# NET: a network namespace of our own where this machine allows one; --dry-run contacts no
# host either way
NET=()
unshare -n true 2>/dev/null && NET=(unshare -n)

# dry PLAYBOOK ARGS...: provision ARGS on that example, dry, with no network
dry() {
	local pb=$1
	shift
	"${NET[@]}" "$PV" -p "$EX/$pb" --dry-run "$@" >"$T_TMP/out" 2>"$T_TMP/err"
	RC=$?
	OUT=$(cat "$T_TMP/out")
	ERR=$(cat "$T_TMP/err")
}

n=0
for f in "$EX"/*.yaml; do
	n=$((n + 1))
	grep -q '^driver:' "$f" || fail "$(basename "$f") has no driver: section (run needs one)"
	dry "$(basename "$f")" run
	expect_rc 0 "$(basename "$f"): run --dry-run"
	expect_out "^run: would make the run's folder" "$(basename "$f"): the run's plan"
done
((n >= 3)) || fail "only $n example playbooks in $EX"

# a Samba member with the built-in driver: every client's load planned
dry samba-member.yaml run
expect_out "^run: would run provision load on load1 for the whole run" "samba-member: the built-in driver"
expect_out "would step 10/10 on load2 \(100 users\)" "samba-member: the ramp to 200 users"

# a Windows file server with FSCT: its clients name the controller host, never localhost
dry windows-fsct.yaml run
expect_out "^run: would run on client1 .*run client /controller 'cntrlr' /server 'fs1' /password \\\$pw" \
	"windows-fsct: FSCT's run client"
expect_out "run controller /server 'fs1' /password \\\$pw /volumes '\\\\\\\\fs1\\\\fsroot1' /clients 'client1,client2' /min_users 50 /max_users 400 /step 50 /duration 720" \
	"windows-fsct: FSCT's run controller"
grep -q localhost <<<"$OUT" && fail "windows-fsct: a command names localhost"
# the same without its controller host (the controller: section's host: mapping taken out)
sed '/^  host:/,/^    ssh:/d' "$EX/windows-fsct.yaml" >"$T_TMP/no-ctl.yaml"
grep -q '^    name: cntrlr' "$T_TMP/no-ctl.yaml" && fail "the controller host was not taken out"
OUT=$("${NET[@]}" "$PV" -p "$T_TMP/no-ctl.yaml" --dry-run run 2>"$T_TMP/err")
RC=$?
ERR=$(cat "$T_TMP/err")
expect_rc 3 "windows-fsct without controller.host"
expect_err "driver 'fsct' needs FSCT's controller, a Windows host every client reaches by name.*set controller.host.name to that host's name" \
	"the refusal naming what to set"
dry windows-fsct.yaml prepare join
expect_rc 3 "windows-fsct: prepare join"
expect_err "'join' does not apply to this server: server.kind is windows"

# a NAS whose shares exist: the watch off, and join and server not provision's
grep -qE '^  watch: 0 ' "$EX/nas.yaml" || fail "nas.yaml: the watch is not off"
dry nas.yaml prepare server
expect_rc 3 "nas: prepare server"
expect_err "'server' does not apply to this server: server.kind is nas.*its phases are dc, client and controller"
dry nas.yaml cleanup join
expect_rc 3 "nas: cleanup join"
expect_err "'cleanup join' does not apply to this server"

# the example at the end of docs/playbook.md, as the page shows it
awk '/^## Example/ { on = 1 } on && /^```yaml/ { y = 1; next } y && /^```/ { exit } y' \
	"$TOP/docs/playbook.md" >"$T_TMP/playbook-md.yaml"
grep -q '^driver:' "$T_TMP/playbook-md.yaml" || fail "docs/playbook.md's example has no driver: section"
OUT=$("${NET[@]}" "$PV" -p "$T_TMP/playbook-md.yaml" --dry-run run 2>"$T_TMP/err")
RC=$?
ERR=$(cat "$T_TMP/err")
expect_rc 0 "docs/playbook.md's example: run --dry-run"
expect_out "^run: would run provision load on load2 for the whole run" "docs/playbook.md's example"
expect_out "drain|writeback" "docs/playbook.md's example: the drain between steps"

echo "t_examples: $n example playbooks accepted by run --dry-run${NET[*]:+ (in a network namespace of their own)}" >&2
finish
