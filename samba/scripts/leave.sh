# samba/scripts/leave.sh: leave the domain (after as-admin.sh: KRB5CCNAME holds the admin's
# ticket). Set before it: admin (the admin's name), flush (1: the kerberos method uses a keytab:
# flush it first, and remove a dedicated keytab file that is left empty).
# mark: the lab's join mark, removed too ("" for none).
: "${admin:?}" "${flush:?}"
mark=${mark-}
if [ -n "$mark" ]; then
	rm -f -- "$mark"
fi
if [ "$flush" = 1 ]; then
	net ads keytab flush --use-kerberos=required -N </dev/null >/dev/null || true
	kt=$(testparm -s --parameter-name='dedicated keytab file' 2>/dev/null | sed 's/^FILE://')
	if [ -n "$kt" ] && [ -f "$kt" ] && ! klist -k -- "$kt" 2>/dev/null | grep -q '@'; then
		rm -f -- "$kt"
	fi
fi
# --user=VALUE: the value is bound to the option whatever it starts with
net ads leave --user="$admin" --use-kerberos=required -N </dev/null >&2
