# samba/scripts/keytab-rebuild.sh: make the dedicated keytab anew from the computer account
# (after as-admin.sh: KRB5CCNAME holds the admin's ticket), the old one kept aside and put back
# if that fails. Samba 4.17 has no 'net ads keytab delete', and 'flush' also clears every SPN
# of the account (ads_keytab_flush), host/ ones included. Exit 3: no dedicated keytab file.
kt=$(testparm -s --parameter-name='dedicated keytab file' 2>/dev/null | sed 's/^FILE://')
if [ -z "$kt" ] || [ ! -f "$kt" ]; then
	echo "no dedicated keytab file" >&2
	exit 3
fi
mv -f -- "$kt" "$kt.provision-old"
if net ads keytab create --use-kerberos=required -N </dev/null >&2; then
	rm -f -- "$kt.provision-old"
else
	mv -f -- "$kt.provision-old" "$kt"
	exit 1
fi
