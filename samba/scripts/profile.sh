# samba/scripts/profile.sh: Samba's own counters of what smbd does (`smbd profiling level`),
# for the copy job. Set before it: action: "level" prints what the running smbd counts
# (smbcontrol's "Profiling off|count only|time only|count and time on pid N"); "off",
# "count", "on" set it for the running smbd and every smbd it forks from then on (not the
# configuration: nothing of smb.conf or the registry changes); "read" prints the counters
# (smbstatus --profile, at most 256 KiB of it); "conns" prints the sessions as JSON
# (smbstatus --processes --json: each smbd's pid and the client's address and port).
: "${action:?}"
case $action in
level) exec smbcontrol smbd profilelevel ;;
off | count | on) exec smbcontrol smbd profile "$action" ;;
read) smbstatus --profile 2>/dev/null | head -c 262144 ;;
conns) smbstatus --processes --json 2>/dev/null | head -c 262144 ;;
*) echo "profile.sh: unknown action '$action'" >&2; exit 2 ;;
esac
