#!/usr/bin/env bash
# The file-server configurations people have, each a variant of srv's smb.conf (lab.sh
# srv-conf: a restart of smbd and winbindd, not a new lab): prepare, status, Kerberos through
# an alias, cleanup --leave, and nothing left, shown by independent tools: net conf listshares
# and klist -k on the keytab Samba uses (srv), ldapsearch for the lab's tag and the alias SPNs,
# getent on the clients. Each variant's time is printed. Lab 'pvmx' (users mx-cli1-u1...);
# srv goes back to the base configuration at the end. The SMB variants (signing or encryption
# required of every session, only SMB 3.1.1, a share that requires encryption) also check what
# our SMB2 client said it spoke while it built the trees (nothing goes to libsmbclient), and
# run the built-in driver with NTLM and with Kerberos logons: every user connected, no error,
# and srv's smbstatus shows its sessions signed with AES-128-GMAC, encrypted with AES-128-GCM,
# at SMB 3.1.1, or its tree connects to the share that requires it encrypted.
. "$(dirname "$0")/lib.sh"

P=(-p "$PLAYBOOK" --set lab=pvmx --set "users.name_template=mx-{client}-u{n}" --set users.per_client=2)
MTAG="provision:pvmx"
RES=$LAB/results
trap '"$LAB_SH" srv-conf >/dev/null 2>&1; rm -rf "$RES"/mx-* "$T_TMP"' EXIT
# the probes (lib.sh: one that cannot look fails the test and counts -1, never 0): objects
# tagged for the lab, alias SPNs anywhere in the directory
tagged() { probe_count "tagged (ldapsearch for $MTAG)" 0 '^dn:' lds -b "$BASE_DN" "(description=$MTAG*)" dn; }
all_spns() {
	probe_count -i "all_spns (ldapsearch)" 0 '^servicePrincipalName: cifs/srvu' \
		lds -b "$BASE_DN" '(servicePrincipalName=cifs/srvu*)' servicePrincipalName
}
# alias principals in the keytab Samba uses now (the dedicated file, or the system keytab):
# klist -k on srv, each principal once. A keytab file that is not there holds none (checked
# with test -e, not taken from klist's failure); testparm printing nothing, or klist failing
# otherwise (a keytab klist cannot read), is a failed probe, -1: "no keytab touched" must not
# pass then.
kt_aliases() {
	probe "kt_aliases (testparm, klist -k on srv)" 0 on srv sh -c '
		m=$(testparm -s --parameter-name="kerberos method" 2>/dev/null)
		[ -n "$m" ] || { echo "testparm printed no kerberos method" >&2; exit 90; }
		kt=
		if [ "$m" = "dedicated keytab" ]; then
			kt=$(testparm -s --parameter-name="dedicated keytab file" 2>/dev/null)
			[ -n "$kt" ] || { echo "testparm printed no dedicated keytab file" >&2; exit 90; }
		fi
		out=$(klist -k ${kt:+"$kt"} 2>&1) && { printf "%s\n" "$out"; exit 0; }
		rc=$?
		f=$(printf "%s\n" "$out" | sed -n "s/^Keytab name: FILE://p")
		[ -n "$f" ] && [ ! -e "$f" ] && exit 0
		printf "%s\n" "$out" | grep -v "^Keytab name:" >&2
		exit "$rc"' || {
		echo -1
		return
	}
	awk '{ print $2 }' <<<"$PROBE" | sort -u | n_lines -i '^cifs/srvu'
}
# smb_k USER ALIAS SHARE CMD: smbclient as USER with Kerberos (a fresh ticket) to ALIAS
smb_k() {
	local cc="$T_TMP/cc.$1.$RANDOM"
	on ctl sh -c "KRB5CCNAME=FILE:$cc kinit '$1@LAB.TEST' <'$LAB/user.pass' >/dev/null &&
		KRB5CCNAME=FILE:$cc smbclient -N --use-kerberos=required '//$2/$3' -I 198.18.0.20 -c '$4'; rc=\$?; rm -f '$cc'; exit \$rc" 2>&1
}

# run_builtin NAME: the built-in driver on both clients (4 users), with NTLM then Kerberos
# logons: every user connected, scenarios done, no error; and while its load goes, srv's
# smbstatus (lib.sh's srv_smb) has VAR_SMB_N of its lines matching VAR_SMB: what srv says the
# sessions or tree connects speak, not what our client says
run_builtin() {
	local auth n
	for auth in ntlm kerberos; do
		pv_bg "${P[@]}" "${VAR_SET[@]}" --set driver.name=builtin --set load.rate=3310 \
			--set load.auth=$auth --json run --id "mx-$auth" --min-users 4 --max-users 4 \
			--step 1 --duration 5 --warmup 1
		if pv_when 'run: step 1: the load goes' 120 && srv_sessions_until 'mx-cli[12]-u[12]' 4 15; then
			n=$(n_lines "$VAR_SMB" <<<"$SMB")
			((n >= VAR_SMB_N)) ||
				fail "$1, $auth: srv's smbstatus has $n lines /$VAR_SMB/, not $VAR_SMB_N: $(head -8 <<<"$SMB")"
		fi
		pv_bg_wait 300
		expect_rc 0 "$1: the built-in driver with $auth logons"
		python3 -c "
import json, sys
l = json.loads(sys.argv[1])['steps'][0]['load']
assert l['connected'] == 4 and l['errors'] == 0 and l['completed'] > 0, l
" "$OUT" || fail "$1: the built-in driver with $auth logons: $OUT"
	done
}

# variant NAME [SMB.CONF-SETTINGS...]: one whole cycle under that configuration (the playbook
# with VAR_SET's settings); with VAR_SPOKE set, prepare must say that our SMB2 client spoke
# that (a regex) while it built the trees, and the built-in driver runs
VAR_SET=()
VAR_SPOKE=
VAR_SMB=
VAR_SMB_N=0
variant() {
	local name=$1 t0 out
	shift
	t0=$(date +%s)
	"$LAB_SH" srv-conf "$@" >/dev/null || { fail "$name: srv-conf $*"; return; }
	pv "${P[@]}" "${VAR_SET[@]}" prepare
	expect_rc 0 "$name: prepare"
	VAR_ERR=$ERR
	if [[ -n $VAR_SPOKE ]]; then
		grep -Eq "trees: our SMB2 client speaks $VAR_SPOKE to " <<<"$VAR_ERR" ||
			fail "$name: our client did not say it spoke /$VAR_SPOKE/: $VAR_ERR"
		grep -q libsmbclient <<<"$VAR_ERR" && fail "$name: libsmbclient named: $VAR_ERR"
	fi
	pv "${P[@]}" "${VAR_SET[@]}" status
	expect_rc 0 "$name: status"
	expect_out "trees +ok +4 of 4"
	out=$(smb_k mx-cli1-u1 srvu1.lab.test fsroot1 'ls mx-cli1-u1/static/d01/*')
	grep -q 'f0001\.' <<<"$out" || fail "$name: Kerberos through srvu1.lab.test: $out"
	if [[ ${VAR_SET[*]} == *smb_encrypt=required* ]]; then
		on srv net conf showshare fsroot2 | grep -q 'smb encrypt = required' ||
			fail "$name: fsroot2 has no 'smb encrypt = required': $(on srv net conf showshare fsroot2)"
	fi
	if [[ -n $VAR_SPOKE ]]; then
		# check's SMB line: our client, as the admin, to each share the playbook expects
		pv "${P[@]}" "${VAR_SET[@]}" check
		expect_out "smb +srv +logged on as LAB.Administrator with our SMB2 client \\(${VAR_SPOKE}\\); shares fsroot1, fsroot2\$" \
			"$name: check's SMB line"
		run_builtin "$name"
	fi
	[[ $name != *"secrets only"* && $(kt_aliases) -eq 4 ]] || [[ $name == *"secrets only"* && $(kt_aliases) -eq 0 ]] ||
		fail "$name: alias principals in the keytab in use after prepare: $(kt_aliases)"
	pv "${P[@]}" cleanup --leave
	expect_rc 0 "$name: cleanup --leave"
	[[ $(shares) -eq 0 ]] || fail "$name: shares left: $(on srv net conf listshares)"
	[[ $(kt_aliases) -eq 0 ]] || fail "$name: alias principals left in the keytab in use: $(kt_aliases)"
	[[ $(tagged) -eq 0 ]] || fail "$name: objects tagged $MTAG left: $(tagged)"
	[[ $(all_spns) -eq 0 ]] || fail "$name: alias SPNs left in the directory: $(all_spns)"
	for c in cli1 cli2; do
		name_resolves "$c" srvu1 && fail "$name: srvu1 still resolves on $c"
	done
	pv "${P[@]}" status
	expect_rc 13 "$name: status after cleanup"
	expect_out "status: the lab holds nothing"
	echo "    variant '$name': $(($(date +%s) - t0)) s" >&2
}

pv "${P[@]}" cleanup --leave >/dev/null
variant "secrets and keytab, winbind use default domain" \
	"kerberos method=secrets and keytab" "winbind use default domain=yes"
variant "system keytab" "kerberos method=system keytab"
variant "secrets only" "kerberos method=secrets only"
# SMB: our own client signs, encrypts, speaks 3.1.1; it says what it spoke, once; srv's
# smbstatus says the same of the built-in driver's sessions (VAR_SMB: its lines "session USER
# ID DIALECT ENCRYPTION SIGNING" and "tcon SHARE USER ENCRYPTION SIGNING", lib.sh's srv_smb)
VAR_SPOKE='SMB 3\.1\.1, signed \(AES-128-GMAC\)'
VAR_SMB='^session [^ ]+ [0-9]+ SMB3_11 [^ ]+ AES-128-GMAC/(full|partial)$' VAR_SMB_N=4
variant "server signing mandatory" "server signing=mandatory"
VAR_SPOKE='SMB 3\.1\.1, encrypted \(AES-128-GCM\)'
VAR_SMB='^session [^ ]+ [0-9]+ SMB3_11 AES-128-GCM/(full|partial) ' VAR_SMB_N=4
variant "server smb encrypt required" "server smb encrypt=required"
VAR_SPOKE='SMB 3\.1\.1'
VAR_SMB='^session [^ ]+ [0-9]+ SMB3_11 ' VAR_SMB_N=4
variant "server min protocol SMB3_11" "server min protocol=SMB3_11"
# a share that requires encryption (Samba's share-level `smb encrypt = required`, set by the
# playbook's server.smb_encrypt when the shares are made, before any tree is built): the tree
# connects to fsroot2 (mx-cli1-u2's and mx-cli2-u2's) encrypted
VAR_SET=(--set server.smb_encrypt=required)
VAR_SPOKE='SMB 3\.1\.1, encrypted \(AES-128-GCM\) on this share'
VAR_SMB='^tcon fsroot2 [^ ]+ AES-128-GCM/(full|partial) ' VAR_SMB_N=2
variant "a share with smb encrypt required"
VAR_SET=()
VAR_SPOKE=
VAR_SMB=
VAR_SMB_N=0
"$LAB_SH" srv-conf >/dev/null

# A controller that knows nothing of the domain: no name for the DC (hosts and resolv.conf with
# nothing of the lab), no krb5.conf for the realm, no ldap.conf; only domain.dc_address.
C=$T_TMP/ctl-bare
mkdir -p "$C"
printf '127.0.0.1 localhost\n' >"$C/hosts"
printf 'nameserver 127.0.0.1\n' >"$C/resolv.conf"
: >"$C/krb5.conf"
bare() { # provision ARGS... in ctl, knowing nothing of the domain, under the timeout (lib.sh);
	# sets OUT, ERR, RC
	local t0=$SECONDS
	on ctl unshare -m sh -c "mount --bind '$C/hosts' /etc/hosts && mount --bind '$C/resolv.conf' /etc/resolv.conf &&
		mount --bind '$C/krb5.conf' /etc/krb5.conf && exec env -u KRB5_CONFIG -u LDAPCONF \"\$0\" \"\$@\"" \
		"${PVT[@]}" "$PV" "$@" >"$T_TMP/out" 2>"$T_TMP/err"
	RC=$?
	OUT=$(cat "$T_TMP/out")
	ERR=$(cat "$T_TMP/err")
	pv_timed_out "$RC" "$t0" "provision (bare controller) $*" && show
}
t0=$(date +%s)
bare "${P[@]}" dc --dry-run
expect_rc 6 "bare controller without dc_address"
expect_err "cannot resolve DC name 'dc\.lab\.test'.*set domain\.dc_address"
A=(--set domain.dc_address=198.18.0.10)
bare "${P[@]}" "${A[@]}" check
expect_rc 0 "bare controller: check with dc_address"
expect_out "dns +dc\.lab\.test +does not resolve here .*domain\.dc_address 198\.18\.0\.10, and TLS is still checked against dc\.lab\.test"
expect_out "ldaps +dc\.lab\.test +bound as Administrator \(LDAPS, CA verified, by address 198\.18\.0\.10\)"
expect_out "kerberos +LAB\.TEST +ticket for Administrator@LAB\.TEST \(KDC at 198\.18\.0\.10: domain\.dc_address, in a private profile\)"
bare "${P[@]}" "${A[@]}" --set domain.transport=gssapi check
expect_rc 0 "bare controller: check over SASL/GSSAPI with dc_address"
expect_out "gssapi +dc\.lab\.test +bound as Administrator \(SASL/GSSAPI sealed .*by address 198\.18\.0\.10\)"
bare "${P[@]}" "${A[@]}" prepare --verify
expect_rc 0 "bare controller: prepare"
bare "${P[@]}" "${A[@]}" status
expect_rc 0 "bare controller: status"
bare "${P[@]}" "${A[@]}" cleanup --leave
expect_rc 0 "bare controller: cleanup --leave"
[[ $(tagged) -eq 0 && $(all_spns) -eq 0 ]] || fail "bare controller: left: tagged $(tagged), SPNs $(all_spns)"
on ctl sh -c 'ls -d /tmp/provision-krb5.* 2>/dev/null' && fail "the private Kerberos profile was left in /tmp"
echo "    variant 'controller without the domain': $(($(date +%s) - t0)) s" >&2
finish
