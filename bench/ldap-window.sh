#!/usr/bin/env bash
# bench/ldap-window.sh: how the number of LDAP adds kept in flight (PROVISION_LDAP_WINDOW)
# changes speed and the DC's CPU per user, beside ldapadd (one synchronous add at a time), on
# the lab. Each size runs ROUNDS times, interleaved; medians are printed.
# Environment: USERS (total per run, default 400), WINDOWS (default "1 4 32"), ROUNDS (3).
. "$(dirname "$0")/lib.sh"

USERS=${USERS:-400}
WINDOWS=${WINDOWS:-1 4 32}
ROUNDS=${ROUNDS:-3}
PER=$((USERS / 2))
REF_OU="OU=bench-window,DC=lab,DC=test"
LDAP_ARGS=(-H ldaps://dc.lab.test -D Administrator@LAB.TEST -y "$LAB/admin.pass")

pw_b64=$(printf '"%s"' "$(cat "$LAB/user.pass")" | iconv -f UTF-8 -t UTF-16LE | base64 -w0)
{
	printf 'dn: %s\nobjectClass: organizationalUnit\n\n' "$REF_OU"
	for ((i = 1; i <= USERS; i++)); do
		printf 'dn: CN=w-u%s,%s\nobjectClass: user\nsAMAccountName: w-u%s\nuserPrincipalName: w-u%s@LAB.TEST\ndisplayName: w-u%s\ndescription: bench\nuserAccountControl: 66048\nunicodePwd:: %s\n\n' \
			"$i" "$REF_OU" "$i" "$i" "$i" "$pw_b64"
	done
} >"$BT/w.ldif"
{ for ((i = USERS; i >= 1; i--)); do printf 'CN=w-u%s,%s\n' "$i" "$REF_OU"; done; echo "$REF_OU"; } >"$BT/w.dns"

on ctl "$PV" -p "$PLAYBOOK" -q cleanup dc >/dev/null 2>&1 || true
on ctl ldapdelete "${LDAP_ARGS[@]}" -c -f "$BT/w.dns" >/dev/null 2>&1 || true
declare -A W S D
for ((r = 1; r <= ROUNDS; r++)); do
	timed ref ctl ldapadd "${LDAP_ARGS[@]}" -f "$BT/w.ldif"
	W[ref]+=" $(val ref wall)" D[ref]+=" $(val ref dccpu)"
	timed refdel ctl ldapdelete "${LDAP_ARGS[@]}" -f "$BT/w.dns"
	for w in $WINDOWS; do
		timed "w$w" ctl env PROVISION_LDAP_WINDOW="$w" "$PV" -p "$PLAYBOOK" --no-progress dc --users "$PER"
		W[$w]+=" $(val "w$w" wall)" D[$w]+=" $(val "w$w" dccpu)"
		timed "d$w" ctl env PROVISION_LDAP_WINDOW="$w" "$PV" -p "$PLAYBOOK" --no-progress cleanup dc
		S[$w]+=" $(val "d$w" wall)" S[ref]+=""
	done
done
printf '\n%-10s %10s %12s %14s %12s\n' "adds" "users/s" "wall (s)" "DC ms/user" "delete/s"
for k in ref $WINDOWS; do
	# shellcheck disable=SC2086
	mw=$(median ${W[$k]}) md=$(median ${D[$k]})
	del="-"
	[[ $k != ref ]] && del=$(rate "$USERS" "$(median ${S[$k]})")
	printf '%-10s %10s %12s %14s %12s\n' "$([[ $k == ref ]] && echo ldapadd || echo "window $k")" \
		"$(rate "$USERS" "$mw")" "$mw" "$(awk -v d="$md" -v n="$USERS" 'BEGIN { printf "%.1f", 1000 * d / n }')" "$del"
done
