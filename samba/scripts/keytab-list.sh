# samba/scripts/keytab-list.sh: the principals in the keytab Samba uses, one a line, sorted.
net ads keytab list </dev/null 2>/dev/null | awk 'NR > 1 { print $3 }' | sort -u
