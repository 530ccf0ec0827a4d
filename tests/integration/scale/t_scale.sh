#!/usr/bin/env bash
# scale/t_scale.sh (make check-scale): a lab of 32 clients (CLIENTS=32), its clients from the
# lab's Ansible inventory: prepare, status, run and cleanup pass over all of them, and a client
# whose sshd is down is named while the others are done. Checked with ldapsearch and every
# client's own hosts file.
. "$(dirname "$0")/../lib.sh"

PB=(-p "$LAB/lab.yaml" --set users.per_client=10)
N=$(grep -c '^cli[0-9]* ansible_host=' "$LAB/clients.ini")
((N >= 32)) || { fail "the lab has $N clients; make check-scale brings up 32"; finish; exit; }
blocks() { # how many clients hold the lab's hosts block (-1: a client's file could not be
	# read, lib.sh's probes)
	local h c=0 n
	for h in $(seq 1 "$N"); do
		n=$(hosts_blocks "cli$h" provision)
		((n >= 0)) || {
			echo -1
			return
		}
		((n == 0)) || c=$((c + 1))
	done
	echo "$c"
}

pv "${PB[@]}" check
expect_rc 0 "check over $N clients"
[[ $(grep -Ec '^ok +ssh +cli[0-9]+ ' <<<"$OUT") -eq $N ]] || fail "check did not reach all $N clients"

pv "${PB[@]}" prepare
expect_rc 0 "prepare over $N clients"
[[ $(count_tagged) -eq $((N * 10)) ]] || fail "$(count_tagged) users, expected $((N * 10))"
[[ $(blocks) -eq $N ]] || fail "$(blocks) of $N clients hold the hosts block"
pv "${PB[@]}" status
expect_rc 0 "status over $N clients"

users=$((N * 2))
pv "${PB[@]}" --json run --id scale-cmd --min-users $users --max-users $users --step $users \
	--duration 4 --warmup 0
expect_rc 0 "run, command driver, $N clients"
[[ $(ls -d "$LAB/results/scale-cmd/step-01/"cli* 2>/dev/null | wc -l) -eq $N ]] ||
	fail "the run gathered results of $(ls -d "$LAB/results/scale-cmd/step-01/"cli* 2>/dev/null | wc -l) clients, not $N"

# a client lost: named, with its cause; the other clients are done (status, client), and a
# run, whose steps share the users over every client, does not start
"$LAB_SH" sshd cli17 stop
pv "${PB[@]}" status
expect_out "FAILED +.*cli17"
[[ $(grep -Ec '^  client +ok +cli' <<<"$OUT") -eq $((N - 1)) ]] || fail "status did not show the other $((N - 1)) clients"
pv "${PB[@]}" run --id scale-lost --min-users $users --max-users $users --step $users --duration 2
expect_rc 6 "run with cli17 unreachable"
expect_err "1 of $N clients cannot be reached, so nothing was started; cli17 \(unreachable\): cannot connect to 'cli17'"
pv "${PB[@]}" cleanup client
expect_rc 10 "cleanup client with cli17 unreachable"
expect_err "1 of $N clients failed, the others are done; cli17"
[[ $(blocks) -eq 1 ]] || fail "$(blocks) clients still hold the block (only cli17 should)"
"$LAB_SH" sshd cli17 start

pv "${PB[@]}" cleanup --leave
expect_rc 0 "cleanup over $N clients"
[[ $(count_tagged) -eq 0 ]] || fail "cleanup left $(count_tagged) users"
[[ $(blocks) -eq 0 ]] || fail "cleanup left the hosts block on $(blocks) clients"
finish
