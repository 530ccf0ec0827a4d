#!/usr/bin/env bash
# tests/integration/t_durable.sh: a network blip in the middle of a step (lab 'pvdh', 20 users
# per client, 100x FSCT's rate, `run` with the built-in driver). Claims, each asserted with what
# the run wrote and a capture of srv's traffic read by tshark (an independent SMB2 decoder):
#  1. the driver asks a durable handle (DH2Q, SMB 3) with each lease open, and Samba grants
#     them with its defaults (durable handles yes, kernel share modes and kernel oplocks no);
#  2. the clients' connections to srv are cut (`ss -K` in their namespaces: a reset, as a
#     blip between switches gives), several times during the step: every user logs on again,
#     and the users whose scenario held durable files claim them again on the new connection
#     (DH2C) and go on; load.json counts them (durable_reclaimed) exactly as many as the DH2C
#     CREATEs Samba answered with success, and the step says so;
#  3. with `durable handles = no` (none granted) a blip ends the scenarios under way in errors
#     and nothing is claimed again, as before durable handles.
. "$(dirname "$0")/lib.sh"

command -v tshark >/dev/null || { echo "t_durable: tshark is missing (make deps installs it)" >&2; exit 1; }
D=$(mktemp -d /tmp/pv-dh-it.XXXXXX)
RES=$D/results
P=(-p "$PLAYBOOK" --set lab=pvdh --set "users.name_template=dh-{client}-u{n}"
	--set users.per_client=20 --set driver.name=builtin --set load.rate=33100
	--set "controller.results=$RES")
trap '"$LAB_SH" capture srv stop >/dev/null 2>&1; "$LAB_SH" srv-limit off >/dev/null 2>&1
	"$LAB_SH" srv-conf >/dev/null 2>&1
	on ctl "${PVT[@]}" "$PV" "${P[@]}" cleanup --leave >/dev/null 2>&1; rm -rf "$D" "$T_TMP"' EXIT

# the load.json field of step 1 of run ID: json_step ID KEY...
json_step() {
	python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["steps"][0]
for k in sys.argv[2:]: s = s[k]
print(s)' "$RES/$1/load.json" "${@:2}"
}

# blips ID: the run ID's step 1 under way, every client's connections to srv:445 cut 6 times,
# a second apart (the users log on again within RELOG_FIRST, 0.5 s, of each)
blips() {
	local i
	pv_bg "${P[@]}" run --id "$1" --min-users 40 --max-users 40 --duration 18 --warmup 0
	pv_when 'run: step 1: the load goes' 120 || return 1
	sleep 3
	for i in 1 2 3 4 5 6; do
		for h in cli1 cli2; do
			on "$h" ss -K dst 198.18.0.20 dport = 445 >/dev/null 2>&1 || fail "ss -K on $h"
		done
		sleep 1
	done
	pv_bg_wait 200
}

pv "${P[@]}" cleanup --leave >/dev/null
pv "${P[@]}" prepare
expect_rc 0 "prepare"

# 1 and 2: Samba's defaults (durable handles granted), blips
# srv held to 30% of a core (for both runs): requests wait, so that users are in their
# scenarios, their files open, when a blip comes
"$LAB_SH" srv-limit 30 >/dev/null || fail "srv-limit 30"
"$LAB_SH" capture srv start "$D/blip.pcap" || fail "capture on srv"
blips dh-blip
"$LAB_SH" capture srv stop 2>/dev/null || fail "capture stop"
expect_rc 0 "run through blips with durable handles"
dropped=$(json_step dh-blip connections_dropped) again=$(json_step dh-blip reconnected)
reclaimed=$(json_step dh-blip durable_reclaimed)
((dropped >= 40 && again == dropped)) || fail "step 1: $dropped connections dropped, $again logged on again (40 users, 6 blips)"
# what srv saw (tshark): lease CREATEs with a DH2Q, answers that carry one (granted); the
# DH2C CREATEs (claims again) and those answered with success, matched by stream and message id
tsh() { tshark -r "$D/blip.pcap" -Y "$1" -T fields "${@:2}" 2>/dev/null; }
asked=$(tsh 'smb2.tag == "DH2Q" && smb2.flags.response == 0' -e frame.number | wc -l)
granted=$(tsh 'smb2.tag == "DH2Q" && smb2.flags.response == 1' -e frame.number | wc -l)
tsh 'smb2.tag == "DH2C"' -e tcp.stream -e smb2.msg_id >"$D/claims"
tsh 'smb2.cmd == 5 && smb2.flags.response == 1' -e tcp.stream -e smb2.msg_id -e smb2.nt_status -e smb2.cmd >"$D/answers"
read -r claims claimed refused < <(python3 - "$D/claims" "$D/answers" <<'EOF'
import sys
claims = set()
for line in open(sys.argv[1]):
    stream, mid = line.split()
    assert "," not in mid, line  # one request a frame: the client sends them so
    claims.add((stream, mid))
ok, refused = 0, {}
for line in open(sys.argv[2]):
    stream, mids, sts, cmds = line.split()
    for mid, st, cmd in zip(mids.split(","), sts.split(","), cmds.split(",")):
        if cmd == "5" and (stream, mid) in claims:
            ok += int(st, 16) == 0
            if int(st, 16):
                refused[st] = refused.get(st, 0) + 1
print(len(claims), ok, ",".join("%s:%d" % kv for kv in sorted(refused.items())) or "-")
EOF
)
echo "t_durable: step 1: $dropped dropped, $again logged on again, $reclaimed reclaimed; srv: $asked DH2Q asked, $granted granted, $claims DH2C, $claimed answered with success (refused, by status: $refused)" >&2
((asked > 0 && granted > 0)) || fail "no durable handle asked ($asked) or granted ($granted) on the share that allows them"
((reclaimed > 0)) || fail "no durable file claimed again over 6 blips (load.json's durable_reclaimed is $reclaimed)"
((claimed == reclaimed)) || fail "load.json counts $reclaimed durable files claimed again, Samba answered $claimed DH2C CREATEs with success"
grep -q "durable files\? claimed again" "$RES/dh-blip/load.txt" || fail "the step's text does not say the durable files claimed again"

# 3: durable handles = no: nothing granted, nothing claimed again, scenarios lost in errors
"$LAB_SH" srv-conf "durable handles=no" >/dev/null || fail "srv-conf: durable handles = no"
blips dh-none
"$LAB_SH" srv-limit off >/dev/null || fail "srv-limit off"
expect_rc 0 "run through blips with durable handles = no"
((($(json_step dh-none connections_dropped)) >= 40)) || fail "dh-none: the blips dropped no connection"
[[ $(json_step dh-none durable_reclaimed) == 0 ]] || fail "dh-none: durable files claimed again where none is granted"
echo "t_durable: scenario errors in step 1: $(json_step dh-blip all errors) with durable handles, $(json_step dh-none all errors) without" >&2

exit $((T_FAILS > 0))
