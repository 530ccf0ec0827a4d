# samba/scripts/setting.sh: one Samba parameter, for `sweep` (docs/copy.md). Set before it:
# action, and param, value, section as the action needs them.
#   check     testparm on a file holding only param = value in a share's section: its
#             stderr says whether the server knows the parameter, takes the value, and
#             whether it is a global one ("Global parameter ... found in service section");
#             a global one is read again in [global] (its value is checked only there)
#   get       net conf getparm SECTION PARAM (exit non-zero: not set in the registry)
#   set       net conf setparm SECTION PARAM VALUE
#   del       net conf delparm SECTION PARAM
#   reload    smbd reads its configuration again (smbcontrol smbd reload-config)
#   registry  "config backend = registry" or "include = registry" when [global] reads the
#             registry (only then can a global parameter be set there), nothing otherwise
#   config    the configuration in effect (testparm -s), at most 256 KiB
: "${action:?}"
case $action in
check)
	t=$(mktemp) || exit 1
	printf '[global]\n[pv-check]\n\tpath = /tmp\n\t%s = %s\n' "${param:?}" "${value?}" >"$t"
	testparm -s "$t" >/dev/null 2>"$t.err"
	rc=$?
	# a global parameter in a share's section is ignored, its value never read: read it
	# again in [global] alone, where testparm checks the value
	if [ "$rc" -eq 0 ] && grep -q '^Global parameter .* found in service section' "$t.err"; then
		printf '[global]\n\t%s = %s\n' "$param" "$value" >"$t"
		testparm -s "$t" >/dev/null 2>>"$t.err"
		rc=$?
	fi
	grep -v '^Load smb config files from' "$t.err" | head -c 4096
	rm -f "$t" "$t.err"
	exit $rc
	;;
get) exec net conf getparm "${section:?}" "${param:?}" ;;
set) exec net conf setparm "${section:?}" "${param:?}" "${value?}" ;;
del) exec net conf delparm "${section:?}" "${param:?}" ;;
reload) exec smbcontrol smbd reload-config ;;
registry)
	if [ "$(testparm -s --parameter-name='config backend' 2>/dev/null)" = registry ]; then
		echo "config backend = registry"
	fi
	conf=$(testparm -s 2>&1 >/dev/null | sed -n 's/^Load smb config files from //p' | head -1)
	if [ -n "$conf" ] && grep -iqE '^[[:space:]]*include[[:space:]]*=[[:space:]]*registry[[:space:]]*$' "$conf"; then
		echo "include = registry"
	fi
	;;
config) testparm -s 2>/dev/null | head -c 262144 ;;
*) echo "setting.sh: unknown action '$action'" >&2; exit 2 ;;
esac
