# phases/scripts/which-dc.sh: what check asks a Linux host: its system (uname -sn, the first
# line), and which DC it would use for the realm set before it ($realm): the KDCs its Kerberos
# library is told of (the [realms] section of its krb5.conf: KRB5_CONFIG, else
# /etc/krb5.conf), and the DC winbindd talks to (wbinfo -P) where winbindd runs.
# Prints "kdc=NAME ..." (empty: none named, so DNS SRV records decide) and "winbind=NAME".
: "${realm:?}"
uname -sn
conf=${KRB5_CONFIG:-/etc/krb5.conf}
conf=${conf%%:*}
kdc=$(awk -v r="$realm" '
	/^[ \t]*\[/ { realms = ($0 ~ /\[realms\]/); inr = 0; next }
	realms && !inr && $1 == r && /\{/ { inr = 1; next }
	inr && /\}/ { inr = 0; next }
	inr && $1 == "kdc" { sub(/^[^=]*=[ \t]*/, ""); k = k (k == "" ? "" : " ") $0 }
	END { print k }' "$conf" 2>/dev/null)
echo "kdc=$kdc"
if command -v wbinfo >/dev/null 2>&1; then
	wbinfo -P </dev/null 2>/dev/null | sed -n 's/.*dc connection to "\([^"]*\)".*/winbind=\1/p'
fi
exit 0
