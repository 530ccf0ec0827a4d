#!/usr/bin/env bash
# provision client / cleanup client against cli1 and cli2, checked with getent, cmp and sha256sum
# inside the clients' namespaces (where /etc/hosts is a bind mount: the in-place write path).
# Leaves both hosts files byte-identical to how it found them, and no backup behind.
. "$(dirname "$0")/lib.sh"

CLIENTS=(cli1 cli2)
SRV=198.18.0.20
BEGIN="# BEGIN provision provision"
END="# END provision provision"

get() { on "$1" cat /etc/hosts || probe_failed "cat /etc/hosts on $1: exit $?"; }
put() { on "$1" sh -c 'cat >/etc/hosts' <"$2"; } # in place, as the bind mount requires
sha() { on "$1" sha256sum /etc/hosts | cut -d' ' -f1; }
bak() { echo "/etc/hosts.provision-provision-$1.orig"; }
ino() { on "$1" stat -c '%i %y' /etc/hosts; }
# resolves HOST NAME: NAME resolves on HOST, to the server's address only (glibc may print a
# name's address once per hosts line that has it)
resolves() { [[ $(on "$1" getent hosts "$2" | awk '{ print $1 }' | sort -u) == "$SRV" ]]; }
same_as() { # same_as HOST FILE [what]
	get "$1" >"$T_TMP/now.$1"
	cmp -s "$T_TMP/now.$1" "$2" || { fail "${3:-$1}: /etc/hosts differs from $2"; diff "$2" "$T_TMP/now.$1" | head -20 >&2; }
}

for h in "${CLIENTS[@]}"; do get "$h" >"$T_TMP/found.$h"; done
restore() {
	"$LAB_SH" sshd cli2 start >/dev/null 2>&1
	for h in "${CLIENTS[@]}"; do
		put "$h" "$T_TMP/found.$h"
		on "$h" rm -f "$(bak "$h")"
	done
	rm -rf "$T_TMP"
}
trap restore EXIT

# start from files without our block (an earlier run may have left one)
pv -p "$PLAYBOOK" cleanup client
expect_rc 0 "cleanup before the test"
for h in "${CLIENTS[@]}"; do
	get "$h" >"$T_TMP/orig.$h"
	grep -qx "$BEGIN" "$T_TMP/orig.$h" && fail "$h still has a block after cleanup"
	on "$h" rm -f "$(bak "$h")"
done

# 1. three aliases: written, resolving, everything outside the block kept, backup = original
pv -p "$PLAYBOOK" client --users 3
expect_rc 0 "client --users 3"
for h in "${CLIENTS[@]}"; do
	expect_out "^$h: written, srv \+ 3 aliases \(in place: the file is a mount point\), backup $(bak "$h") made, getent ok"
	for n in srvu1 srvu2 srvu3 srv; do resolves "$h" "$n" || fail "$h: $n does not resolve to $SRV"; done
	name_resolves "$h" srvu4 && fail "$h: srvu4 resolves though N is 3"
	get "$h" >"$T_TMP/now.$h"
	sed "/^$BEGIN\$/,/^$END\$/d" "$T_TMP/now.$h" | cmp -s - "$T_TMP/orig.$h" ||
		fail "$h: the lines outside the block changed"
	printf '%s\n' "$BEGIN" "# managed by provision: edits between these markers are replaced" \
		"$SRV srv" "$SRV srvu1 srvu2 srvu3" "$END" >"$T_TMP/block"
	sed -n "/^$BEGIN\$/,/^$END\$/p" "$T_TMP/now.$h" | cmp -s - "$T_TMP/block" ||
		fail "$h: the block is not the expected one: $(sed -n "/^$BEGIN\$/,/^$END\$/p" "$T_TMP/now.$h")"
	on "$h" cat "$(bak "$h")" | cmp -s - "$T_TMP/orig.$h" || fail "$h: the backup is not the original"
done
expect_out "^client: 2 clients: 2 written, 0 unchanged, 0 failed"

# 2. the same N again: same bytes, and no write at all (same inode, same mtime)
declare -A sum1 ino1
for h in "${CLIENTS[@]}"; do sum1[$h]=$(sha "$h"); ino1[$h]=$(ino "$h"); done
pv -p "$PLAYBOOK" client --users 3
expect_rc 0 "second run"
expect_out "^cli1: unchanged, srv \+ 3 aliases, getent ok"
expect_out "^client: 2 clients: 0 written, 2 unchanged, 0 failed"
for h in "${CLIENTS[@]}"; do
	[[ $(sha "$h") == "${sum1[$h]}" ]] || fail "$h: a second run changed the bytes"
	[[ $(ino "$h") == "${ino1[$h]}" ]] || fail "$h: a second run rewrote the file (${ino1[$h]} -> $(ino "$h"))"
done

# 3. another N replaces the block (one block, still the original outside); a smaller N drops names
pv -p "$PLAYBOOK" client --users 5
expect_rc 0 "client --users 5"
expect_no_out "backup .* made" "a second change making a backup"
for h in "${CLIENTS[@]}"; do
	resolves "$h" srvu5 || fail "$h: srvu5 does not resolve"
	[[ $(get "$h" | grep -cx "$BEGIN") -eq 1 ]] || fail "$h: not exactly one block"
	get "$h" | sed "/^$BEGIN\$/,/^$END\$/d" | cmp -s - "$T_TMP/orig.$h" || fail "$h: outside changed at N=5"
done
pv -p "$PLAYBOOK" client --users 2
expect_rc 0 "client --users 2"
name_resolves cli1 srvu3 && fail "srvu3 still resolves after --users 2"
resolves cli2 srvu2 || fail "cli2: srvu2 does not resolve after --users 2"

# 4. JSON, one client, a dry run that writes nothing
pv -p "$PLAYBOOK" --json client --clients cli2 --users 2
expect_rc 0 "client --json"
python3 -c 'import json,sys; d=json.load(sys.stdin); c=d["clients"]; assert d["ok"] and len(c)==1 and c[0]["name"]=="cli2" and c[0]["state"]=="unchanged" and c[0]["verified"], d' \
	<<<"$OUT" || fail "JSON of client --clients cli2: $OUT"
s=$(sha cli1)
pv -p "$PLAYBOOK" client --users 7 --dry-run
expect_rc 0 "dry run"
expect_out "^cli1: would write, srv \+ 7 aliases"
[[ $(sha cli1) == "$s" ]] || fail "--dry-run wrote"

# 5. bad input: refused before anything is touched, each with its own status
s1=$(sha cli1) s2=$(sha cli2)
pv -p "$PLAYBOOK" client --users 3 --clients cli1,nosuch
expect_rc 3 "unknown client"; expect_err "unknown client 'nosuch' in --clients; the playbook's clients are: cli1, cli2"
pv -p "$PLAYBOOK" --set server.address=srv.lab.test client --users 3
expect_rc 3 "server address that is not an IP"; expect_err "server.address' is 'srv.lab.test', not an IP address"
pv -p "$PLAYBOOK" --set 'server.alias_template=fileserver-user{n}' client --users 3
expect_rc 3 "alias over 15 characters"; expect_err "'fileserver-user3' is 16 characters.*15"
pv -p "$PLAYBOOK" client --users 0
expect_rc 2 "--users 0"; expect_err "at least 1"
pv -p "$PLAYBOOK" cleanup client --backup /tmp
expect_rc 2 "cleanup client --backup"; expect_err "belongs to 'cleanup controller'"
[[ $(sha cli1) == "$s1" && $(sha cli2) == "$s2" ]] || fail "bad input changed a hosts file"

# 6. a name of ours given another address outside the block: conflict (11), nothing written
get cli1 >"$T_TMP/cur.cli1"
{ cat "$T_TMP/cur.cli1"; echo "10.1.2.3 other SRVU2"; } >"$T_TMP/clash"
put cli1 "$T_TMP/clash"
pv -p "$PLAYBOOK" client --clients cli1 --users 3
expect_rc 11 "alias clash"
expect_err "cli1.*line $(wc -l <"$T_TMP/clash") maps 'SRVU2' to 10.1.2.3, not to the server's $SRV"
same_as cli1 "$T_TMP/clash" "the file after a clash"
# a damaged block of ours (BEGIN without END): conflict, nothing written
{ cat "$T_TMP/orig.cli1"; echo "$BEGIN"; echo "$SRV srvu1"; } >"$T_TMP/broken"
put cli1 "$T_TMP/broken"
pv -p "$PLAYBOOK" client --clients cli1 --users 3
expect_rc 11 "block without END"
expect_err "'$BEGIN' has no '$END' after it"
same_as cli1 "$T_TMP/broken" "the file with a broken block"
put cli1 "$T_TMP/cur.cli1"

# 7. a changed host key is refused: alone (5), and beside a good client (10: the other is done)
ssh-keygen -q -t ed25519 -N '' -f "$T_TMP/fake" >/dev/null
{ grep -v '^cli1,' "$LAB/ssh/known_hosts"; echo "cli1,cli1.lab.test,198.18.0.31 $(cut -d' ' -f1,2 "$T_TMP/fake.pub")"; } >"$T_TMP/kh"
s1=$(sha cli1)
pv -p "$PLAYBOOK" --set "ssh.known_hosts=$T_TMP/kh" client --clients cli1 --users 4
expect_rc 5 "changed host key"; expect_err "host key for 'cli1' \(198\.18\.0\.31\) has CHANGED"
pv -p "$PLAYBOOK" --set "ssh.known_hosts=$T_TMP/kh" client --users 4
expect_rc 10 "changed host key on one of two clients"
expect_out "^cli1: FAILED \(trust, 5\)"
expect_out "^cli2: written, srv \+ 4 aliases"
expect_err "1 of 2 clients failed, the others are done; cli1 \(trust\): host key"
[[ $(sha cli1) == "$s1" ]] || fail "cli1 was written through a changed host key"
resolves cli2 srvu4 || fail "cli2 not done beside a refused cli1"

# 8. one client down: the other is done, the exit status says partial, the error names it
"$LAB_SH" sshd cli2 stop >/dev/null
pv -p "$PLAYBOOK" client --users 6
"$LAB_SH" sshd cli2 start >/dev/null
expect_rc 10 "client with sshd on cli2 stopped"
expect_out "^cli2: FAILED \(unreachable, 6\): .*198\.18\.0\.32.*[Rr]efused"
expect_out "^cli1: written, srv \+ 6 aliases"
expect_err "cli2 \(unreachable\): cannot connect"
resolves cli1 srvu6 || fail "cli1 not done while cli2 was down"
name_resolves cli2 srvu6 && fail "cli2 has srvu6 though it was down"
pv -p "$PLAYBOOK" client --users 6
expect_rc 0 "re-run with cli2 back"
expect_out "^cli1: unchanged"
expect_out "^cli2: written"

# 9. blocks of other labs are left alone, by client and by cleanup
get cli1 >"$T_TMP/cur.cli1"
other=$'# BEGIN provision otherlab\n10.9.9.9 otherhost\n# END provision otherlab'
{ printf '%s\n' "$other"; cat "$T_TMP/cur.cli1"; } >"$T_TMP/with-other"
put cli1 "$T_TMP/with-other"
pv -p "$PLAYBOOK" client --clients cli1 --users 6
expect_rc 0 "client beside another lab's block"
expect_out "^cli1: unchanged"
expect_err "1 block of other labs \(first: 'otherlab'\), left as they are"
pv -p "$PLAYBOOK" cleanup client --clients cli1
expect_rc 0 "cleanup beside another lab's block"
get cli1 | head -3 | cmp -s - <(printf '%s\n' "$other") || fail "cleanup touched the other lab's block"
{ printf '%s\n' "$other"; cat "$T_TMP/orig.cli1"; } >"$T_TMP/expect"
same_as cli1 "$T_TMP/expect" "cleanup beside another lab's block"
# the backup held the file without the other block, so it differs now: kept, and said so
expect_out "^cli1: removed the block of lab 'provision' .*backup $(bak cli1) kept"
expect_err "backup $(bak cli1) kept: it differs"
put cli1 "$T_TMP/orig.cli1"
on cli1 rm -f "$(bak cli1)"

# 10. cleanup gives back the original bytes and removes the backups; a second one has nothing to do
pv -p "$PLAYBOOK" cleanup client
expect_rc 0 "cleanup client"
expect_out "^cli2: removed the block of lab 'provision' \(in place: the file is a mount point\), backup $(bak cli2) removed"
expect_out "^cli1: nothing to remove"
for h in "${CLIENTS[@]}"; do
	same_as "$h" "$T_TMP/orig.$h" "$h after cleanup"
	host_test "$h" -e "$(bak "$h")" && fail "$h: backup left after cleanup"
	name_resolves "$h" srvu1 && fail "$h: srvu1 still resolves after cleanup"
done
pv -p "$PLAYBOOK" cleanup client
expect_rc 0 "second cleanup"
expect_out "^cleanup client: 2 clients: 0 cleaned, 2 unchanged, 0 failed"

# 11. a file whose last line has no line break: the round trip gives back the same bytes
head -c -1 "$T_TMP/orig.cli1" >"$T_TMP/nobreak"
put cli1 "$T_TMP/nobreak"
pv -p "$PLAYBOOK" client --clients cli1 --users 2
expect_rc 0 "client on a file without a final line break"
resolves cli1 srvu2 || fail "srvu2 does not resolve (file without a final break)"
get cli1 | grep -q "^# provision ended the line above with a line break" || fail "no note of the added break"
pv -p "$PLAYBOOK" cleanup client --clients cli1
expect_rc 0 "cleanup of a file without a final line break"
same_as cli1 "$T_TMP/nobreak" "the file without a final break after the round trip"
host_test cli1 -e "$(bak cli1)" && fail "backup left (file without a final break)"
put cli1 "$T_TMP/orig.cli1"

# 12. an edit outside the block between client and cleanup is kept, and so is the backup
pv -p "$PLAYBOOK" client --clients cli2 --users 2
expect_rc 0 "client before an outside edit"
on cli2 sh -c 'echo "10.5.5.5 added-by-test" >>/etc/hosts'
pv -p "$PLAYBOOK" cleanup client --clients cli2
expect_rc 0 "cleanup after an outside edit"
{ cat "$T_TMP/orig.cli2"; echo "10.5.5.5 added-by-test"; } >"$T_TMP/expect"
same_as cli2 "$T_TMP/expect" "cleanup after an outside edit"
expect_err "backup $(bak cli2) kept"
on cli2 cat "$(bak cli2)" | cmp -s - "$T_TMP/orig.cli2" || fail "the kept backup is not the original"

# 13. a TERM to the whole process group during the in-place rewrite (the window between the
# truncation and the new content, held open by a cat that waits for the test): the file ends
# with its new content, never empty, and the script still says it wrote. The writer runs by
# hand on cli1, as provision sends it, on a scratch file made a mount point (in-place there).
W=$T_TMP/w13
mkdir -p "$W/bin"
printf '127.0.0.1 localhost\n' >"$W/hosts"
printf '127.0.0.1 localhost\n198.18.0.20 srvu1\n' >"$W/new"
# a cat that, writing the new content over the file, lets the test know and waits for it
cat >"$W/bin/cat" <<EOS
#!/bin/sh
case "\$*" in *provision-new.*) case "\$*" in *.old) ;; *) : >"$W/window"; while [ ! -e "$W/go" ]; do sleep 0.05; done ;; esac ;; esac
exec /bin/cat "\$@"
EOS
chmod +x "$W/bin/cat"
on cli1 env PATH="$W/bin:/usr/sbin:/usr/bin:/sbin:/bin" f="$W/hosts" b= old="$(cksum <"$W/hosts")" \
	new="$(cksum <"$W/new")" mkbak=0 dropbak=0 wait=5 W="$W" script="$TOP/hosts/scripts/write.sh" \
	unshare -m sh -c 'mount --bind "$W/hosts" "$W/hosts" && exec setsid sh "$script" <"$W/new"' \
	>"$W/out" 2>&1 &
writer=$!
for _ in $(seq 200); do [[ -e $W/window ]] && break; sleep 0.05; done
[[ -e $W/window ]] || fail "the writer never reached the in-place rewrite: $(cat "$W/out")"
[[ -s $W/hosts ]] && fail "the file was not truncated at the window: the test proves nothing"
pgid=$(ps -o pgid= -p "$(pgrep -f "sh $TOP/hosts/scripts/write.sh" | head -n 1)" | tr -d ' ')
[[ -n $pgid ]] && kill -TERM -- "-$pgid"
touch "$W/go"
wait "$writer"
cmp -s "$W/hosts" "$W/new" || fail "a TERM during the in-place rewrite left the file as: '$(cat "$W/hosts")' (out: $(cat "$W/out"))"
grep -q '^pv-write in-place$' "$W/out" || fail "the writer did not finish the in-place rewrite: $(cat "$W/out")"
ls "$W"/hosts.provision-new.* >/dev/null 2>&1 && fail "the writer left its temporary files"

finish
