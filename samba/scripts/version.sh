# samba/scripts/version.sh: the server's Samba version and system, one line each, for the
# run's manifest (what cannot be said is left out).
smbd --version 2>/dev/null
uname -sr
