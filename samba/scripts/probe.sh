# samba/scripts/probe.sh: what one round trip learns about a Samba file server (samba/samba.h).
# Set before it: full=1 also asks the DC for the clock offset ('net ads info'); quick=1 takes
# winbindd's link to the DC as proof of membership and lists the shares and the keytab; lab
# (the lab id: whether a join of this lab's was started and not finished).
# Prints key=value lines; share lines are share=NAME<US>COMMENT<US>PATH<US>DIR (US = \037).
: "${full:?}" "${quick:?}" "${lab:?}"
command -v net >/dev/null || { echo 'net (Samba) is not installed' >&2; exit 3; }
conf=$(testparm -sv 2>/dev/null)
tp() { printf '%s\n' "$conf" | sed -n "s/^[[:space:]]*$1 = //p" | head -n 1; }
echo "netbios=$(tp 'netbios name')"
echo "realm=$(tp realm)"
echo "security=$(tp security)"
echo "kmethod=$(tp 'kerberos method')"
echo "ktfile=$(tp 'dedicated keytab file' | sed 's/^FILE://')"
if [ "$full" = 1 ]; then
	info=$(net ads info 2>&1 </dev/null)
	echo "offset=$(printf '%s\n' "$info" | sed -n 's/^Server time offset: *//p')"
	echo "info=$(printf '%s\n' "$info" | tail -n 1)"
fi
printf 'sep=%s\n' "$(tp 'winbind separator')"
# quick: winbindd's netlogon link to the DC, which needs the machine account, is what SMB
# logons use, and 'wbinfo -P' costs 45 ms where 'net ads testjoin' costs 250 (lab); testjoin
# still decides when it fails
# (and it names the DC winbindd uses: with several DCs, the one that must hold the lab's users)
if [ "$quick" = 1 ] && ping=$(wbinfo -P </dev/null 2>/dev/null); then
	echo joined=1
	printf '%s\n' "$ping" | sed -n 's/.*dc connection to "\([^"]*\)".*/dc=\1/p' | head -n 1
elif net ads testjoin </dev/null >/dev/null 2>&1; then
	echo joined=1
else
	echo joined=0
fi
[ "$quick" = 1 ] || echo "keytab=$(net ads keytab list </dev/null 2>/dev/null | grep -c '/')"
echo "cores=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null)"
# quick: the shares as Samba sees them and the keytab's principals, so that a re-run needs no
# 'net conf list' and no 'net ads keytab list' (klist reads a dedicated keytab in ~10 ms, net
# takes ~65)
if [ "$quick" = 1 ]; then
	us=$(printf '\037')
	printf '%s\n' "$conf" | awk -v us="$us" '
		/^\[/ { s = substr($0, 2, length($0) - 2); if (tolower(s) != "global") n[++k] = s; next }
		k && $1 == "comment" { sub(/^[^=]*= ?/, ""); cm[k] = $0 }
		k && $1 == "path" { sub(/^[^=]*= ?/, ""); pa[k] = $0 }
		END { for (i = 1; i <= k; i++) print n[i] us cm[i] us pa[i] }' |
		while IFS="$us" read -r n c p; do
			d=0
			[ -n "$p" ] && [ -d "$p" ] && d=1
			printf 'share=%s%s%s%s%s%s%s\n' "$n" "$us" "$c" "$us" "$p" "$us" "$d"
		done
	case $(tp 'kerberos method') in *keytab*)
		kf=$(tp 'dedicated keytab file')
		if [ -n "$kf" ] && command -v klist >/dev/null 2>&1; then
			klist -k -- "$kf" 2>/dev/null | awk 'NR > 3 { print "kt=" $2 }'
		else
			net ads keytab list </dev/null 2>/dev/null | awk 'NR > 1 { print "kt=" $3 }'
		fi | sort -u
		echo ktlisted=1
		;;
	esac
fi
# a join this lab started leaves a mark in Samba's state folder until its account is tagged
statedir=$(tp 'state directory')
echo "statedir=$statedir"
if [ -e "$statedir/.provision-join.$lab" ]; then echo joinmark=1; fi
# by their pid files: on a host shared with other Samba instances pidof would lie
piddir=$(tp 'pid directory')
for d in smbd winbindd; do
	pid=$(cat -- "$piddir/$d.pid" 2>/dev/null)
	# a pid file holding anything but a number (kill -0 -1 would ask about every process) is
	# no running daemon
	case $pid in '' | *[!0-9]*) pid= ;; esac
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then echo "$d=1"; else echo "$d=0"; fi
done
