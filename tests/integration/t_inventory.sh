#!/usr/bin/env bash
# t_inventory.sh: clients from an Ansible inventory drive the lab: the lab's own INI inventory
# ($LAB/clients.ini, through $LAB/lab.yaml), the same clients as YAML with a per-host setting
# of the playbook over the inventory's, and refusals (Jinja, a dynamic inventory) before any
# host is touched. Checked with ssh and the clients' own hosts files.
. "$(dirname "$0")/lib.sh"

PB=$LAB/lab.yaml
[[ -s $PB && -s $LAB/clients.ini ]] || { fail "lab.sh up wrote no $PB or clients.ini"; finish; exit; }

# 1. the INI inventory: check reaches every client it names, client writes their blocks
pv -p "$PB" check
expect_rc 0 "check with the lab's INI inventory"
expect_out "2 clients \(group clients of the inventory $LAB/clients.ini\)"
expect_out "ok +ssh +cli2 "
expect_out "ok +dc +cli2 +.*Kerberos KDC \(krb5.conf\): dc.lab.test"
pv -p "$PB" client
expect_rc 0 "client, clients from the INI inventory"
for h in cli1 cli2; do
	on "$h" grep -q "^# BEGIN provision provision" /etc/hosts || fail "no block on $h (INI)"
done
pv -p "$PB" cleanup client
expect_rc 0 "cleanup client (INI)"

# 2. the same as YAML, cli2's port from the inventory, then the playbook's own over it
cat >"$T_TMP/inv.yml" <<EOF
all:
  children:
    load:
      hosts:
        cli1: {ansible_host: 198.18.0.31}
        cli2: {ansible_host: 198.18.0.32, ansible_port: 2222}
      vars: {ansible_user: root}
EOF
Y=(-p "$PB" --set clients.inventory="$T_TMP/inv.yml" --set clients.group=load)
pv "${Y[@]}" client
expect_rc 10 "client with cli2 on a port where nothing listens (cli1 done)"
expect_err "cli2 .*2222"
pv "${Y[@]}" --set clients.hosts.cli2.ssh.port=22 client
expect_rc 0 "client, YAML inventory, the playbook's port over the inventory's"
on cli2 grep -q "^# BEGIN provision provision" /etc/hosts || fail "no block on cli2 (YAML)"
pv "${Y[@]}" --set clients.hosts.cli2.ssh.port=22 cleanup client
expect_rc 0 "cleanup client (YAML)"
[[ $(hosts_blocks cli2 provision) -eq 0 ]] || fail "block left on cli2"

# 3. refused with the inventory's file and line, before anything is done
printf '[load]\ncli1 ansible_host="{{ lookup(\x27env\x27, \x27IP\x27) }}"\n' >"$T_TMP/jinja.ini"
pv -p "$PB" --set clients.inventory="$T_TMP/jinja.ini" --set clients.group=load client
expect_rc 3 "an inventory with Jinja"
expect_err "jinja.ini:2: host 'cli1': a value uses Jinja"
printf '#!/bin/sh\necho {}\n' >"$T_TMP/dyn.sh"
chmod 0755 "$T_TMP/dyn.sh"
pv -p "$PB" --set clients.inventory="$T_TMP/dyn.sh" client
expect_rc 3 "a dynamic inventory"
expect_err "is executable: Ansible runs such a file as a dynamic inventory script"
finish
