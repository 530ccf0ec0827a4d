# samba/scripts/config.sh: the server's Samba configuration as it is in effect (testparm -s:
# the settings that are not Samba's defaults, then the shares), for the run's manifest; at
# most 256 KiB of it.
testparm -s 2>/dev/null | head -c 262144
