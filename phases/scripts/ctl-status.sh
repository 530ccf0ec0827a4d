# phases/scripts/ctl-status.sh: what the remote controller's results folder holds (status).
# Set before it: r (results). Prints "pv-ctl-status <kind> <entries> <backups>", kind one of
# absent, dir, other.
: "${r:?}"
# r is absolute (the playbook checks it): find, which takes no --, never reads it as an option
case $r in /*) ;; *) echo "results folder $r is not an absolute path" >&2; exit 33 ;; esac
backups=0
for b in "$r".[0-9]*; do
	[ -d "$b" ] && backups=$((backups + 1))
done
if [ -L "$r" ] || { [ -e "$r" ] && [ ! -d "$r" ]; }; then
	echo "pv-ctl-status other 0 $backups"
elif [ -d "$r" ]; then
	echo "pv-ctl-status dir $(find "$r" -mindepth 1 -maxdepth 1 -printf x | wc -c) $backups"
else
	echo "pv-ctl-status absent 0 $backups"
fi
