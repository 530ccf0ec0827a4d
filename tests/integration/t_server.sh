#!/usr/bin/env bash
# provision join / server / cleanup server / cleanup join --leave against the lab's srv, checked
# with independent tools: wbinfo and net ads testjoin on srv, ldapsearch, smbclient with
# Kerberos (fresh ccaches: lab-notes pitfall 12) and with NTLM, find/stat/md5sum on srv.
# Among its claims: server.alias_spns: false makes no SPN and no keytab entry, and the aliases
# then work with NTLM, not Kerberos (8a); under `server signing = mandatory` and `server smb
# encrypt = required` our client builds the trees (Samba itself refuses an unsigned or
# unencrypted session then: that is the independent check here; the ciphers, as srv's
# smbstatus sees them on long-lived sessions, are checked by t_matrix and t_load).
#
# State: expects srv as the lab brings it up (not joined, smbd/winbindd stopped) and leaves it
# so (left, computer account deleted, services stopped, no share, no SPN), because `make check`
# runs the tests in order and later ones may expect the lab's start state. Its users belong to
# lab 'srvtest' with their own names (st-cli1-u1...), so the users of lab 'provision' (t_dc.sh,
# benchmarks) are never touched.
. "$(dirname "$0")/lib.sh"

P=(-p "$PLAYBOOK" --set lab=srvtest --set "users.name_template=st-{client}-u{n}")
ST_TAG="provision:srvtest"
JOIN_TAG="provision:srvtest:join"
SP_HERE=$LAB/srv/srv/provision # the same folder seen from here (srv's /srv is $LAB/srv/srv)

# smb_k USER TARGET SHARE CMD: smbclient as USER with Kerberos (a fresh ticket) to TARGET at srv's IP
smb_k() {
	local cc="$T_TMP/cc.$1.$RANDOM"
	on ctl sh -c "KRB5CCNAME=FILE:$cc kinit '$1@LAB.TEST' <'$LAB/user.pass' >/dev/null &&
		KRB5CCNAME=FILE:$cc smbclient -N --use-kerberos=required '//$2/$3' -I 198.18.0.20 -c '$4'; rc=\$?; rm -f '$cc'; exit \$rc" 2>&1
}

clean_all() {
	pv "${P[@]}" cleanup server
	pv "${P[@]}" cleanup dc
	pv "${P[@]}" cleanup join --leave
}

joined && echo "    note: srv was joined before the test; it is left unjoined" >&2
clean_all

# 1. server before join: a clear error
pv "${P[@]}" server --users 2
expect_rc 1 "server on an unjoined server"
expect_err "not joined .*run provision join first"

# 2. join: trust and membership checked with wbinfo and net ads testjoin; re-run changes nothing
pv "${P[@]}" join
expect_rc 0 "join"
expect_out "joined LAB.TEST \(account SRV\\$\), smbd and winbindd started"
on srv wbinfo -t >/dev/null 2>&1 || fail "wbinfo -t fails on srv after join"
joined || fail "net ads testjoin fails after join"
lds -b "$SRV_DN" -s base '(objectClass=computer)' description | grep -qx "description: $JOIN_TAG" ||
	fail "computer account not tagged $JOIN_TAG"
pv "${P[@]}" join
expect_rc 0 "join re-run"
expect_out "already a member .*nothing changed"

# 3. the users (2 per client) and the server: shares, SPNs, trees of the small fileset over SMB
pv "${P[@]}" dc --users 2
expect_rc 0 "dc --users 2"
pv "${P[@]}" server --users 2
expect_rc 0 "server"
expect_out "shares 2 created, 0 present; alias SPNs 4 added"
expect_out "trees of 4 users \(fileset 'small'.* over smb: 280 files written \(0 fixed\)"
# our SMB2 client: one connection per server core (at least 2, at most one per user) carries
# the 4 users' sessions in turn, and every file is owned by the user whose session wrote it
cores=$(on srv nproc)
conns=$((cores < 2 ? 2 : cores > 4 ? 4 : cores))
expect_err "trees: $conns SMB connections at once, each logging its users on in turn"
# the alias principals went into srv's keytab with the host/ keys copied (not derived by net
# ads keytab add): MIT's kvno -k checks that a ticket for each decrypts with its own entry
expect_err "added 4 alias principals to the keytab of 'srv' \(copying the host/ keys\)"
out=$(on srv sh -c 'kt=$(testparm -s --parameter-name="dedicated keytab file" 2>/dev/null)
	d=$(mktemp -d) && KRB5CCNAME=FILE:$d/cc kinit st-cli1-u1@LAB.TEST <"$1" >/dev/null &&
	KRB5CCNAME=FILE:$d/cc kvno -k "${kt#FILE:}" cifs/srvu1@LAB.TEST cifs/srvu1.lab.test@LAB.TEST \
		cifs/srvu2@LAB.TEST cifs/srvu2.lab.test@LAB.TEST; rm -rf "$d"' sh "$LAB/user.pass" 2>&1)
[[ $(grep -c ": kvno = [0-9]*, keytab entry valid" <<<"$out") -eq 4 ]] ||
	fail "kvno -k on srv's keytab does not find the 4 alias principals valid: $out"
# the copier refuses what it cannot read, and changes nothing then (exit 3: net is used)
printf 'not a keytab' >"$T_TMP/bad.kt"
printf 'cifs/x\n' | perl samba/scripts/keytab.pl add "$T_TMP/bad.kt" >/dev/null 2>&1
rc=$?
[[ $rc -eq 3 && $(cat "$T_TMP/bad.kt") == "not a keytab" ]] ||
	fail "keytab.pl add on a file that is no keytab: exit $rc, file now '$(cat "$T_TMP/bad.kt")'"
for t in fsroot1/st-cli1-u1 fsroot2/st-cli1-u2 fsroot1/st-cli2-u1 fsroot2/st-cli2-u2; do
	owners=$(on srv sh -c "find $SP/$t -type f -printf '%u\n' | sort | uniq -c")
	[[ ${owners,,} =~ ^\ *70\ lab.${t#*/}$ ]] || fail "files of $t owned by: $owners"
done
out=$(on ctl sh -c "KRB5CCNAME=FILE:$T_TMP/cc.adm kinit Administrator@LAB.TEST <'$LAB/admin.pass' >/dev/null &&
	KRB5CCNAME=FILE:$T_TMP/cc.adm smbclient -N --use-kerberos=required -L srv.lab.test; rm -f $T_TMP/cc.adm" 2>&1)
for s in fsroot1 fsroot2; do
	grep -Eq "^\s+$s\s+Disk\s+$ST_TAG" <<<"$out" || fail "smbclient -k -L does not list $s tagged: $out"
done
[[ $(spns) -eq 4 ]] || fail "expected 4 cifs/srvu SPNs, found $(spns)"
for s in cifs/srvu1 cifs/srvu1.lab.test cifs/srvu2 cifs/srvu2.lab.test; do
	lds -b "$SRV_DN" -s base '(objectClass=computer)' servicePrincipalName | grep -qix "servicePrincipalName: $s" ||
		fail "SPN $s missing"
done
# user i lives in share i mod 2 + 1: st-cli1-u1 fsroot1, st-cli1-u2 fsroot2, st-cli2-u1 fsroot1...
for t in fsroot1/st-cli1-u1 fsroot2/st-cli1-u2 fsroot1/st-cli2-u1 fsroot2/st-cli2-u2; do
	got=$(srv_tree "${t%/*}" "${t#*/}")
	[[ $got == "$SMALL_FILES $SMALL_BYTES" ]] || fail "$t holds '$got', expected '$SMALL_FILES $SMALL_BYTES'"
done
owner=$(on srv stat -c %U "$SP/fsroot2/st-cli1-u2/static/d01")
[[ ${owner,,} == 'lab\st-cli1-u2' ]] || fail "tree of st-cli1-u2 owned by '$owner'"

# 4. a user reaches its own tree through its alias, with Kerberos and with NTLM; without an SPN
# (srvu3) Kerberos fails
out=$(smb_k st-cli1-u1 srvu1.lab.test fsroot1 'ls st-cli1-u1/static/d01/*')
grep -q 'f0001\.' <<<"$out" || fail "Kerberos via srvu1.lab.test: $out"
out=$(smb_k st-cli1-u2 srvu2 fsroot2 'ls st-cli1-u2/volatile/*')
grep -q 'f0001\.' <<<"$out" || fail "Kerberos via srvu2 (short name): $out"
out=$(smb_n st-cli2-u1 srvu1 fsroot1 'ls st-cli2-u1/static/d03/*')
grep -q 'f0001\.' <<<"$out" || fail "NTLM via srvu1: $out"
out=$(smb_k st-cli1-u1 srvu3.lab.test fsroot1 'ls')
grep -q 'f0001\.\|blocks available' <<<"$out" && fail "Kerberos via srvu3 (no SPN) worked: $out"
# and the home folder is the user's: another user cannot list it
out=$(smb_n st-cli2-u1 srvu1 fsroot1 'ls st-cli1-u1/*')
grep -q 'NT_STATUS_ACCESS_DENIED' <<<"$out" || fail "st-cli2-u1 could list st-cli1-u1's tree: $out"

# 5. a re-run changes nothing; damage is repaired and only that
pv "${P[@]}" --json server --users 2
expect_rc 0 "server re-run"
python3 -c 'import json,sys; d=json.load(sys.stdin); t=d["trees"]; assert d["shares_created"]==0 and d["spns_added"]==0 and t["files_written"]==0 and t["files_ok"]==280, d' <<<"$OUT" ||
	fail "re-run JSON: $OUT"
damage() { on srv sh -c "cd $SP/fsroot1/st-cli1-u1 && rm static/d02/f0003.* && truncate -s 1 volatile/f0001.* && rm -r static/d03"; }
damage
pv "${P[@]}" server --users 2
expect_rc 0 "server after damage"
expect_out "22 files written \(1 fixed\), 258 already right, 1 folders made"
got=$(srv_tree fsroot1 st-cli1-u1)
[[ $got == "$SMALL_FILES $SMALL_BYTES" ]] || fail "repaired tree holds '$got'"
# the same repaired by libsmbclient, a connection per user (only when asked for: nothing falls
# back to it)
damage
PROVISION_SMB_CLIENT=libsmbclient pv "${P[@]}" server --users 2
expect_rc 0 "server after damage (libsmbclient)"
expect_err "SMB sessions at once \(libsmbclient"
expect_out "22 files written \(1 fixed\), 258 already right, 1 folders made"
got=$(srv_tree fsroot1 st-cli1-u1)
[[ $got == "$SMALL_FILES $SMALL_BYTES" ]] || fail "tree repaired by libsmbclient holds '$got'"
# a server that requires signing (Windows Server 2025 does by default): our client signs every
# request, checks every answer and builds the trees itself (SMB 3.1.1 with Samba 4.17, AES-GMAC
# negotiated); one that requires encryption: our client encrypts every request and opens every
# answer (AES-128-GCM, Samba's first choice), and libsmbclient is never used
smbd_param() { # add|del LINE: a [global] line of srv's smb.conf, then smbd restarted
	local edit="/^\t$2\$/d"
	[[ $1 == del ]] || edit="s/^\tregistry shares = yes\$/&\n\t$2/"
	on srv sh -c "sed -i '$edit' /etc/samba/smb.conf && $LAB/bin/lab-service restart smbd" >/dev/null
}
for want in "server signing = mandatory:our SMB2 client speaks SMB 3\\.1\\.1, signed \\(AES-128-GMAC\\) to '[^']*' \\(the server requires signing" \
	"server smb encrypt = required:our SMB2 client speaks SMB 3\\.1\\.1, encrypted \\(AES-128-GCM\\) to '[^']*' \\(the server or the share requires encryption"; do
	smbd_param add "${want%%:*}"
	damage
	pv "${P[@]}" server --users 2
	expect_rc 0 "server when smbd has '${want%%:*}'"
	expect_err "${want#*:}"
	expect_no_out "libsmbclient" "stderr with '${want%%:*}'"
	expect_out "22 files written \(1 fixed\), 258 already right, 1 folders made"
	got=$(srv_tree fsroot1 st-cli1-u1)
	[[ $got == "$SMALL_FILES $SMALL_BYTES" ]] || fail "tree repaired with '${want%%:*}' holds '$got'"
	smbd_param del "${want%%:*}"
	on srv grep -q "${want%%:*}" /etc/samba/smb.conf && fail "'${want%%:*}' left in srv's smb.conf"
done

# a share's folder removed by hand: seen by the probe, made again (root, 0755), and the two
# trees that lived in it are built again
on srv rm -rf "$SP/fsroot2"
pv "${P[@]}" server --users 2
expect_rc 0 "server after the folder of fsroot2 was removed"
expect_out "shares 0 created, 2 present"
expect_out "140 files written \(0 fixed\), 140 already right"
got=$(on srv stat -c '%U %a' "$SP/fsroot2")
[[ $got == "root 755" ]] || fail "the folder of fsroot2 made again as '$got'"

# the users made again (cleanup dc, dc): the same names, new accounts and uids. Their trees hold
# the earlier accounts' files, which the new ones could not write: removed and built anew
old_uid=$(on srv stat -c %u "$SP/fsroot1/st-cli1-u1/static/d01/f0001.docx")
pv "${P[@]}" cleanup dc
expect_rc 0 "cleanup dc before the users are made again"
pv "${P[@]}" dc --users 2
expect_rc 0 "dc: the same users made again"
pv "${P[@]}" --json server --users 2
expect_rc 0 "server over the earlier accounts' trees"
python3 -c 'import json,sys; t=json.loads(sys.stdin.read().splitlines()[-1])["trees"]; assert t["replaced"]==4 and t["files_written"]==280 and t["complete"]==0, t' <<<"$OUT" ||
	fail "server over the earlier accounts' trees: $OUT"
new_uid=$(on srv getent passwd 'LAB\st-cli1-u1' | cut -d: -f3)
[[ -n $new_uid && $new_uid != "$old_uid" ]] || fail "st-cli1-u1 has the same uid ($old_uid) as before: not made again"
others=$(on srv find "$SP/fsroot1/st-cli1-u1" ! -uid "$new_uid" | head -3)
[[ -z $others ]] || fail "st-cli1-u1's tree still holds another uid's: $others"
got=$(srv_tree fsroot1 st-cli1-u1)
[[ $got == "$SMALL_FILES $SMALL_BYTES" ]] || fail "the tree built anew holds '$got'"
pv "${P[@]}" server --users 2
expect_out "0 files written .*4 trees complete already"

# 6. --via ssh: the same bytes on the server's disk, owned by the user
on srv sh -c "rm -rf $SP/fsroot1/st-cli2-u1/static $SP/fsroot1/st-cli2-u1/volatile"
pv "${P[@]}" server --users 2 --via ssh
expect_rc 0 "server --via ssh"
expect_out "over ssh: 70 files written \(0 fixed\), 210 already right"
got=$(srv_tree fsroot1 st-cli2-u1)
[[ $got == "$SMALL_FILES $SMALL_BYTES" ]] || fail "tree written over ssh holds '$got'"
owner=$(on srv stat -c %U "$SP/fsroot1/st-cli2-u1/static/d02/f0001.xlsx")
[[ ${owner,,} == 'lab\st-cli2-u1' ]] || fail "file written over ssh owned by '$owner'"
# content 'shared': a file written over ssh equals the same file written over SMB for another user
sums=$(on srv sh -c "md5sum $SP/fsroot1/st-cli2-u1/static/d02/f0001.xlsx $SP/fsroot2/st-cli1-u2/static/d02/f0001.xlsx" | awk '{ print $1 }' | sort -u | wc -l)
[[ $sums -eq 1 ]] || fail "the same fileset file differs between users (ssh vs smb)"

# 7. bad input: each with its own code and message, nothing made
printf 'name: bad\nparts:\n  static: {files: 3, sizes: [{size: 10 parsecs}]}\n' >"$T_TMP/bad.yaml"
pv "${P[@]}" --set "server.fileset=$T_TMP/bad.yaml" server --users 2
expect_rc 3 "fileset that does not parse"
expect_err "bad.yaml:3:37: 'parts.static.sizes.0.size' is '10 parsecs', not a size; expected a size such as 4096"
pv "${P[@]}" --set 'server.share_template=fs:root{k}' server --users 2
expect_rc 3 "share name Samba refuses (refused by the playbook check now, before Samba sees it)"
expect_err "'server.share_template': share name 'fs:root1' contains ':'"
pv "${P[@]}" server --users 3
expect_rc 1 "a user missing from the domain"
expect_err "2 of 6 users are not in the domain .*st-cli1-u3"
pv "${P[@]}" server --users 2 --via ftp
expect_rc 2 "--via ftp"
# more alias SPNs than the DC can hold: refused before any is written (the limit lowered)
PROVISION_SPN_MAX=5 pv "${P[@]}" --set 'server.alias_template={server}x{n}' server --users 2
expect_rc 3 "alias SPNs past the DC's limit"
expect_err "the alias SPNs would not fit: $SRV_DN would hold [0-9]+ SPNs \([0-9]+ now, 4 to add: 2 per alias, 2 aliases\), more than the 5 PROVISION_SPN_MAX allows; nothing was written. Use NTLM-only aliases \(server.alias_spns: false"
probe_has -i "SPNs of $SRV_DN (ldapsearch)" 0 'cifs/srvx' lds -b "$SRV_DN" -s base servicePrincipalName &&
	fail "a refused server wrote SPNs"
# the password is only needed for trees to build: one file of one tree goes first
on srv sh -c "rm -f $SP/fsroot1/st-cli1-u1/static/d02/f0003.*"
pv "${P[@]}" server --users 2 --password-file "$T_TMP/bad.yaml"
expect_rc 4 "wrong users' password"
expect_err "logon as LAB.st-cli[12]-u[12] on '198.18.0.20' refused"

# 8. cleanup server: no share, tree or SPN left, nor alias keytab entries; a second run has nothing.
# An alias-like SPN the lab did not add (cifs/srvu9, added by hand) stays.
ldm >/dev/null <<LDIF
dn: $SRV_DN
changetype: modify
add: servicePrincipalName
servicePrincipalName: cifs/srvu9
LDIF
pv "${P[@]}" -v cleanup server
expect_rc 0 "cleanup server"
expect_out "removed 2 shares \(with their trees\) and 4 alias SPNs"
expect_err "alias SPN 'cifs/srvu9' left on .*: lab 'srvtest' did not add it"
lds -b "$SRV_DN" -s base '(objectClass=computer)' servicePrincipalName | grep -qix "servicePrincipalName: cifs/srvu9" ||
	fail "cleanup server removed an SPN the lab did not add"
ldm >/dev/null <<LDIF
dn: $SRV_DN
changetype: modify
delete: servicePrincipalName
servicePrincipalName: cifs/srvu9
LDIF
[[ $(shares) -eq 0 ]] || fail "shares left: $(on srv net conf listshares)"
host_test srv -e "$SP" && fail "$SP left on srv"
[[ $(spns) -eq 0 ]] || fail "$(spns) alias SPNs left"
probe_has -i "net ads keytab list on srv" 0 'cifs/srvu' on srv net ads keytab list &&
	fail "alias principals left in the keytab"
joined || fail "cleanup server broke the membership"
pv "${P[@]}" cleanup server
expect_rc 0 "second cleanup server"
expect_out "nothing to do"

# 8a. server.alias_spns: false (docs/playbook.md: no SPN, the aliases work with NTLM only): the
#     shares and trees made, no alias SPN on the account and no alias principal in the keytab;
#     a user reaches its tree through its alias with NTLM, not with Kerberos; cleanup server
#     leaves nothing
NS=("${P[@]}" --set server.alias_spns=false)
pv "${NS[@]}" server --users 2
expect_rc 0 "server with alias_spns false"
expect_out "alias SPNs 0 added, 0 present"
[[ $(shares) -eq 2 ]] || fail "alias_spns false: shares on srv: $(shares)"
[[ $(spns) -eq 0 ]] || fail "alias_spns false: $(spns) alias SPNs on $SRV_DN"
probe_has -i "net ads keytab list on srv" 0 'cifs/srvu' on srv net ads keytab list &&
	fail "alias_spns false: alias principals in the keytab"
got=$(srv_tree fsroot1 st-cli1-u1)
[[ $got == "$SMALL_FILES $SMALL_BYTES" ]] || fail "alias_spns false: the tree of st-cli1-u1 holds '$got'"
out=$(smb_n st-cli1-u1 srvu1 fsroot1 'ls st-cli1-u1/static/d01/*')
grep -q 'f0001\.' <<<"$out" || fail "alias_spns false: NTLM via srvu1: $out"
out=$(smb_k st-cli1-u1 srvu1.lab.test fsroot1 'ls')
grep -q 'f0001\.\|blocks available' <<<"$out" && fail "alias_spns false: Kerberos via srvu1 worked without its SPN: $out"
pv "${NS[@]}" cleanup server
expect_rc 0 "cleanup server with alias_spns false"
[[ $(shares) -eq 0 && $(spns) -eq 0 ]] || fail "cleanup server with alias_spns false left shares $(shares), SPNs $(spns)"

# 8b. a full disk: share_path on a 3 MiB tmpfs (mounted here, then sshd and smbd on srv are
# restarted so that their mount namespaces hold it too). Over SMB and over ssh the build stops
# with exit 8 naming the server and the file, leaves whole files only, and a re-run with room
# (the tmpfs grown) finishes the trees.
FULL=$LAB/full
F=("${P[@]}" --set "server.share_path=$FULL" --set 'server.share_template=full{k}'
	--set "server.fileset=$T_TMP/full.yaml")
printf 'name: full\nparts:\n  static: {files: 12, sizes: [{size: 100KiB}]}\ncontent: unique\n' \
	>"$T_TMP/full.yaml" # 4 users x 1.2 MB
restart_srv() {
	"$LAB_SH" sshd srv stop >/dev/null && "$LAB_SH" sshd srv start >/dev/null &&
		on srv "$LAB/bin/lab-service" restart smbd >/dev/null
}
unmount_full() {
	if mountpoint -q "$FULL"; then umount "$FULL" && rmdir "$FULL" && restart_srv; fi
}
trap 'unmount_full; rm -rf "$T_TMP"' EXIT
full_files() { on srv sh -c "find $FULL -mindepth 2 -type f | wc -l"; }
cut_short() { on srv sh -c "find $FULL -mindepth 2 -type f ! -size 102400c | wc -l"; }
mkdir -p "$FULL" && mount -t tmpfs -o size=3m,mode=0755 pvlab-full "$FULL" || fail "mounting a tmpfs at $FULL"
restart_srv || fail "restarting sshd and smbd on srv"
pv "${F[@]}" server --users 2
expect_rc 8 "server over SMB on a full disk"
expect_err "the disk of '198.18.0.20' is full: SMB writing //198.18.0.20/full[12]/st-cli[12]-u[12]/static/f00[0-9]+\.dat"
[[ $(cut_short) -eq 0 ]] || fail "files cut short left by SMB: $(cut_short)"
n=$(full_files)
((n > 0 && n < 48)) || fail "expected part of the 48 files before the disk filled, found $n"
mount -o remount,size=8m "$FULL"
pv "${F[@]}" server --users 2
expect_rc 0 "server over SMB with room again"
[[ $(full_files) -eq 48 && $(cut_short) -eq 0 ]] || fail "after the re-run: $(full_files) files, $(cut_short) cut short"
pv "${F[@]}" cleanup server
expect_rc 0 "cleanup server of the full-disk shares"
mount -o remount,size=3m "$FULL"
pv "${F[@]}" server --users 2 --via ssh
expect_rc 8 "server --via ssh on a full disk"
expect_err "the disk of 'srv' is full under $FULL: .*st-cli[12]-u[12]/static/f00[0-9]+\.dat: No space left on device"
[[ $(cut_short) -eq 0 ]] || fail "files cut short left by ssh: $(cut_short)"
mount -o remount,size=8m "$FULL"
pv "${F[@]}" server --users 2 --via ssh
expect_rc 0 "server --via ssh with room again"
[[ $(full_files) -eq 48 && $(cut_short) -eq 0 ]] || fail "after the ssh re-run: $(full_files) files, $(cut_short) cut short"
pv "${F[@]}" cleanup server
expect_rc 0 "cleanup server of the full-disk shares (ssh)"
# content shared over ssh: one template on the server, copied into the folders by a copier per
# core; the disk fills during the copy
sed -i 's/^content: unique/content: shared/' "$T_TMP/full.yaml"
mount -o remount,size=3m "$FULL"
pv "${F[@]}" server --users 2 --via ssh
expect_rc 8 "server --via ssh (template copy) on a full disk"
expect_err "the disk of 'srv' is full under $FULL: copying the template .*No space left on device"
[[ $(cut_short) -eq 0 ]] || fail "files cut short left by the template copy: $(cut_short)"
on srv sh -c "ls -a $FULL" | grep -q provision-tpl && fail "template folder left after a full disk"
mount -o remount,size=8m "$FULL"
pv "${F[@]}" server --users 2 --via ssh
expect_rc 0 "server --via ssh (template copy) with room again"
[[ $(full_files) -eq 48 && $(cut_short) -eq 0 ]] || fail "after the template re-run: $(full_files) files, $(cut_short) cut short"
sums=$(on srv sh -c "md5sum $FULL/full*/st-*/static/f0012.dat" | awk '{ print $1 }' | sort -u | wc -l)
[[ $sums -eq 1 ]] || fail "content shared differs between users after the template copy"
pv "${F[@]}" cleanup server
expect_rc 0 "cleanup server of the full-disk shares (template)"
unmount_full || fail "unmounting $FULL"

# 8c. files larger than one compound request (over 256 KiB: CREATE, WRITEs in flight with the
# file's id, CLOSE), files of exactly one write and empty files: over SMB the bytes are those
# written over ssh (content unique: every user's differ)
B=("${P[@]}" --set 'server.share_template=big{k}' --set "server.fileset=$T_TMP/big.yaml")
printf 'name: big\nparts:\n  static: {files: 3, sizes: [{size: [300KiB, 3MiB]}]}\n  volatile: {files: 4, sizes: [{size: 64KiB}, {size: 0}]}\ncontent: unique\n' \
	>"$T_TMP/big.yaml"
big_sums() { on srv sh -c "cd $SP && find big1 big2 -type f | sort | xargs md5sum"; }
pv "${B[@]}" server --users 2
expect_rc 0 "server with big files"
sums=$(big_sums)
[[ $(wc -l <<<"$sums") -eq 28 && $(awk '{ print $1 }' <<<"$sums" | sort -u | wc -l) -ge 14 ]] ||
	fail "big files over SMB: $sums"
on srv sh -c "find $SP/big1 $SP/big2 -mindepth 2 -maxdepth 2 -exec rm -rf {} +"
pv "${B[@]}" server --users 2 --via ssh
expect_rc 0 "server --via ssh with big files"
[[ $(big_sums) == "$sums" ]] || fail "big files over SMB differ from those over ssh: $(diff <(echo "$sums") <(big_sums))"
pv "${B[@]}" cleanup server
expect_rc 0 "cleanup server of the big-file shares"

# 8d. Ctrl-C (SIGINT) in the middle of the build over SMB: the workers finish what they are
# writing, provision says how far it got and what to do (10); no file is cut short (the
# re-run fixes none) and the same command again finishes the trees
I=("${P[@]}" --set 'server.share_template=int{k}' --set "server.fileset=$T_TMP/int.yaml")
printf 'name: int\nparts:\n  static: {files: 300, sizes: [{size: [8KiB, 200KiB]}]}\n' >"$T_TMP/int.yaml"
# build_started: `server` of the int shares in the background (bg, under the timeout), back
# once 20 files are written; build_ended: wait for it and set RC, OUT, ERR as pv does
build_started() {
	bg_t0=$SECONDS
	on ctl "${PVT[@]}" "$PV" "${I[@]}" server --users 2 >"$T_TMP/out" 2>"$T_TMP/err" &
	bg=$!
	for _ in $(seq 400); do
		[[ $(find "$SP_HERE"/int1 "$SP_HERE"/int2 -type f 2>/dev/null | wc -l) -ge 20 ]] && return
		sleep 0.02
	done
}
build_ended() {
	wait "$bg"
	RC=$? OUT=$(cat "$T_TMP/out") ERR=$(cat "$T_TMP/err")
	pv_timed_out "$RC" "$bg_t0" "server of the int shares (background)" && show
}
build_started
kill -INT "$(child_named "$bg" provision)" 2>/dev/null || fail "no provision process to interrupt"
build_ended
expect_rc 10 "server interrupted by SIGINT"
expect_err "interrupted by SIGINT after the trees of [0-3] of 4 users: every file written is whole; run the same command again"
pv "${I[@]}" --json server --users 2
expect_rc 0 "server after the interruption"
python3 -c 'import json,sys; t=json.loads(sys.stdin.read().splitlines()[-1])["trees"]; assert t["files_fixed"]==0 and 0 < t["files_ok"] < 1200 and t["files_written"]+t["files_ok"]==1200, t' <<<"$OUT" ||
	fail "re-run after the interruption: $OUT"
# the SMB connections cut in the middle of the build (ss -K in ctl, as a network failure would):
# each worker connects again, once, and goes on from what its listing finds
on srv sh -c "rm -rf $SP/int1/st-* $SP/int2/st-*"
build_started
ip netns exec pvlab-ctl ss -K dst 198.18.0.20 dport = 445 >/dev/null 2>&1 # (on ctl: ~0.2 s later)
build_ended
expect_rc 0 "server with its SMB connections cut"
expect_err "SMB to .198.18.0.20.: .*; connecting again for st-cli" # closed, aborted, or gone
pv "${I[@]}" --json server --users 2
python3 -c 'import json,sys; t=json.loads(sys.stdin.read().splitlines()[-1])["trees"]; assert t["files_written"]==0 and t["files_ok"]==1200, t' <<<"$OUT" ||
	fail "after the connections were cut: $OUT"
pv "${I[@]}" cleanup server
expect_rc 0 "cleanup server of the interrupted shares"

# 9. cleanup join --leave: not a member, no computer account, services stopped
pv "${P[@]}" cleanup dc
expect_rc 0 "cleanup dc (lab srvtest)"
pv "${P[@]}" cleanup join --leave
expect_rc 0 "cleanup join --leave"
expect_out "left LAB.TEST; computer account SRV\\$ deleted"
joined && fail "srv still joined after cleanup join --leave"
probe_has "SRV\$ (ldapsearch)" 0 '^dn:' lds -b "$BASE_DN" '(sAMAccountName=SRV$)' dn &&
	fail "computer account SRV$ left"
on srv sh -c "$LAB/bin/lab-service status smbd" >/dev/null 2>&1 && fail "smbd still running"
pv "${P[@]}" cleanup join --leave
expect_rc 0 "second cleanup join"
expect_out "nothing to do"

finish
