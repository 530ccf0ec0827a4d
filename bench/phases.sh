#!/usr/bin/env bash
# bench/phases.sh: every phase at USERS users (default 20000, two clients: USERS/2 per
# client, so USERS/2 aliases and USERS alias SPNs), one after the other on a fresh lab, each
# timed with its peak memory (/usr/bin/time: the controller's RSS) and the DC's CPU: dc, join,
# server (shares and alias SPNs; no home trees: 20,000 trees are the fileset bench's matter),
# client, controller, status, cleanup dc, then the rest of cleanup. cleanup dc's result is
# also added to bench/cleanup-dc.sh's results (method provision) when RESULTS is shared.
#
#   bench/phases.sh [USERS]
# Holds the lab for about 20 minutes at 20,000 users; leaves it down.
. "$(dirname "$0")/lib.sh"

USERS=${1:-20000}
PER=$((USERS / 2))
RESULTS=${RESULTS:-/var/tmp/provision-bench-cleanup-dc.tsv}

# the lab's playbook without its fileset
sed '/^  fileset:/d' "$PLAYBOOK" >"$BT/pb.yaml"
P=(-p "$BT/pb.yaml" --no-progress --set "users.per_client=$PER")
chmod 0644 "$BT/pb.yaml"
chmod 0755 "$BT"

"$LAB_SH" down >/dev/null 2>&1
"$LAB_SH" up >/dev/null || { echo "bench: lab up failed" >&2; exit 1; }
phases=(dc join server client controller status "cleanup dc" cleanup)
for ph in "${phases[@]}"; do
	label=${ph// /_}
	read -r -a args <<<"$ph"
	[[ $ph == cleanup ]] && args=(cleanup --leave)
	timed "$label" ctl "$PV" "${P[@]}" "${args[@]}" || { cat "$BT/$label.out" >&2; exit 1; }
	printf 'phases.sh: %-11s %9s s  %8s KiB peak  DC CPU %8s s  | %s\n' "$ph" "$(val "$label" wall)" \
		"$(val "$label" rss)" "$(val "$label" dccpu)" "$(head -n 1 "$BT/$label.out")"
done
printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$USERS" provision "$(val dc wall)" \
	"$(rate "$USERS" "$(val dc wall)")" "$(val dc rss)" "$(val cleanup_dc wall)" \
	"$(val cleanup_dc dccpu)" >>"$RESULTS"
"$LAB_SH" down >/dev/null 2>&1
echo
echo "phases.sh: $USERS users ($PER per client, $PER aliases, $USERS alias SPNs), lab, 2 cores"
printf '  %-11s %10s %12s %10s\n' phase "wall s" "peak KiB" "DC CPU s"
for ph in "${phases[@]}"; do
	label=${ph// /_}
	printf '  %-11s %10s %12s %10s\n' "$ph" "$(val "$label" wall)" "$(val "$label" rss)" "$(val "$label" dccpu)"
done
echo "  dc: $(rate "$USERS" "$(val dc wall)") users/s"
