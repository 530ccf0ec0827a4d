# samba/scripts/keytab-net.sh: the principals given as positional parameters into the keytab
# with 'net ads keytab add', $chunk at a time, the options first and then --, so a principal is
# an operand whatever it holds (net derives each one's keys from the machine password, ~0.1 s a
# principal: the fallback where keytab-clone.pl cannot copy the host/ keys). Runs after
# samba/scripts/as-admin.sh, with the admin's ticket. GNU xargs gives net /dev/null as stdin,
# and exits 123 when a run of net failed.
: "${chunk:?}"
printf '%s\n' "$@" | xargs -d '\n' -n "$chunk" net ads keytab add --use-kerberos=required -N -- >&2
