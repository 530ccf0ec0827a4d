# samba/scripts/join.sh: join the domain and make the keytab (after as-admin.sh: KRB5CCNAME
# holds the admin's ticket). Set before it: join (1: 'net ads join'; 0: only the keytab),
# stale (a dedicated keytab file to remove before joining, or ""), keytab (1: the kerberos
# method uses a keytab: 'net ads keytab create'), mark (a file made before the join: the join is
# this lab's until its computer account carries the lab's tag; "" for none).
: "${join:?}" "${keytab:?}"
stale=${stale-} mark=${mark-}
# A keytab left by an earlier membership holds keys of an account that is gone (same kvno,
# other keys); 'keytab create' would keep them and Kerberos would fail.
if [ "$join" = 1 ] && [ -n "$stale" ]; then
	rm -f -- "$stale"
fi
if [ "$join" = 1 ] && [ -n "$mark" ]; then
	: >"$mark"
fi
if [ "$join" = 1 ]; then
	net ads join --use-kerberos=required -N --no-dns-updates </dev/null >&2
fi
# With 'kerberos method = dedicated keytab' the join writes no keytab, and Kerberos SMB then
# fails with NT_STATUS_INVALID_PARAMETER: make it.
if [ "$keytab" = 1 ]; then
	net ads keytab create --use-kerberos=required -N </dev/null >&2
fi
