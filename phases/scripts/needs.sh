# phases/scripts/needs.sh: what `check` asks a Linux host about the prerequisites of the phases
# and of `run` there (phases/needs.h judges the answers; docs/your-servers.md lists them). Set
# before it: role (server: a Samba server provision joins and fills; client; controller), wg
# (the domain's NetBIOS name: its idmap lines), svc (server: the first word of server.service).
# Prints n_KEY=VALUE lines, VALUE empty when not found; never fails.
: "${role:?}"
wg=${wg:-}
svc=${svc:-}
echo "n_uid=$(id -u 2>/dev/null)"
echo "n_perl=$(command -v perl 2>/dev/null)"
[ "$role" = server ] || exit 0
# Samba's tools, where the phases run them (net, testparm, wbinfo; smbd and winbindd started by
# server.service), looked for in sbin too: root's PATH over SSH may lack it
PATH=$PATH:/usr/sbin:/sbin:/usr/local/sbin
for t in net testparm wbinfo smbd winbindd; do
	echo "n_$t=$(command -v "$t" 2>/dev/null)"
done
case $svc in
/*) if [ -x "$svc" ]; then echo "n_svc=$svc"; else echo "n_svc="; fi ;;
*) echo "n_svc=$(command -v "$svc" 2>/dev/null)" ;;
esac
# passwd and group through winbind: the trees are owned by the domain's users (getent passwd)
for db in passwd group; do
	echo "n_nss_$db=$(sed -n "s/^[[:space:]]*$db:[[:space:]]*//p" /etc/nsswitch.conf 2>/dev/null | head -n 1)"
done
command -v testparm >/dev/null 2>&1 || exit 0
conf=$(testparm -sv 2>/dev/null </dev/null)
[ -n "$conf" ] || { echo "n_testparm_failed=1"; exit 0; }
tp() { printf '%s\n' "$conf" | sed -n "s/^[[:space:]]*$1 = //p" | head -n 1; }
echo "n_security=$(tp security)"
echo "n_realm=$(tp realm)"
echo "n_registry_shares=$(tp 'registry shares')"
echo "n_config_backend=$(tp 'config backend')"
# include = registry turns registry shares on too (smb.conf(5)), and testparm does not show it
file=$(testparm -s 2>&1 >/dev/null </dev/null | sed -n 's/^Load smb config files from //p' | head -n 1)
if [ -n "$file" ] && grep -iqE '^[[:space:]]*include[[:space:]]*=[[:space:]]*registry[[:space:]]*$' "$file"; then
	echo "n_include_registry=1"
fi
# the idmap: "idmap config * : backend" and the domain's own, with their ranges (the name as
# smb.conf spells it, any case)
printf '%s\n' "$conf" | awk -v wg="$wg" '
	{ l = $0; sub(/^[ \t]+/, "", l) }
	tolower(l) ~ /^idmap config / {
		rest = substr(l, 14); c = index(rest, ":"); if (!c) next
		dom = rest; sub(/[ \t]*:.*$/, "", dom)
		kv = substr(rest, c + 1); sub(/^[ \t]+/, "", kv)
		e = index(kv, "="); if (!e) next
		key = substr(kv, 1, e - 1); sub(/[ \t]+$/, "", key)
		val = substr(kv, e + 1); sub(/^[ \t]+/, "", val)
		if (key != "backend" && key != "range") next
		if (dom == "*") print "n_idmap_star_" key "=" val
		else if (toupper(dom) == toupper(wg)) print "n_idmap_dom_" key "=" val
	}'
exit 0
