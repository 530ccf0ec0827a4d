#!/usr/bin/env bash
# tests/lab/lab.sh: the embedded test lab of provision (see tests/lab/README.md and
# docs/lab-notes.md). A Samba AD DC, an unjoined Samba member file server with sshd and two
# sshd clients, each in its own network namespace on the bridge pvlab0 (198.18.0.0/24).
#
#   lab.sh up | down | status | selfcheck
#   lab.sh exec HOST [--] CMD [ARGS...]      HOST = ctl dc srv cli1 cli2 (cli3.. dc2)
#   lab.sh sshd HOST stop|kill|start         HOST = dc srv cli1 cli2 ... (kill: sessions too)
#   lab.sh dc crash|start                    the DC's samba killed (-9, as a crash), started
#   lab.sh repl pause|resume [dc|dc2]        a DC's inbound replication off, on (DCS=2; dc2's
#                                            by default)
#   lab.sh srv-conf [KEY=VALUE]...           srv's smb.conf: the base with these [global]
#                                            settings (none: the base; include=... goes last);
#                                            running daemons restarted
#   lab.sh srv-limit PERCENT|off|status      srv's Samba daemons held to PERCENT of one CPU
#   lab.sh cli-limit HOST PERCENT|off        a client's sshd and its sessions held so too
#   lab.sh srv-disk ext4|off|status          srv's /srv on a journaled ext4 of its own (a loop
#                                            image) or back on this machine's root file system
#   lab.sh capture HOST start FILE | stop    tcpdump of HOST's SMB traffic (TCP 445) into FILE,
#                                            in the background once it listens; stop ends it,
#                                            says its counts, fails if the kernel dropped any
#
# Environment: PROVISION_LAB_DIR (state, default /var/lib/provision-lab), LAB_ADMIN_PASS,
# LAB_USER_PASS, KEEP=1 (down keeps the provisioned DC and keys for a faster next up).
# The lab's size, read by `up` (and recorded, so that every later command knows it):
# CLIENTS=N (default 2: cli1..cliN at .31 upwards, at most 200), DCS=2 (a second Samba DC,
# dc2 at .11, joined to the domain and replicating). Without them the lab is the default one.
# DC_STORE=mdb: the DCs' database on LMDB (samba-tool --backend-store=mdb) instead of Samba's
# default, tdb; the cost of a user add or delete then stays flat as the domain grows
# (docs/scale.md). A DC kept (KEEP=1) on the other store is provisioned again.
# shellcheck disable=SC2016 # single-quoted scripts run in the namespaces, expanded there
set -euo pipefail
export LC_ALL=C
umask 022
# The lab's daemons must not inherit the caller's descriptors: a lock held around this script
# (flock) would otherwise be held by samba, smbd and sshd for as long as the lab runs. Bash
# reads this script on fd 255.
for _fd in /proc/$$/fd/*; do
  _fd=${_fd##*/}
  if [[ $_fd =~ ^[0-9]+$ ]] && ((_fd > 2 && _fd != 255)); then
    eval "exec $_fd>&-" 2>/dev/null || true
  fi
done
unset _fd

LAB=${PROVISION_LAB_DIR:-/var/lib/provision-lab}
LAB=${LAB%/}
HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
SELF=$HERE/$(basename -- "${BASH_SOURCE[0]}")
BR=pvlab0
BR_IP=198.18.0.1
NET=198.18.0
# The lab's size: `up` takes CLIENTS and DCS from the environment and records them in
# $LAB/.size; every other command uses what was recorded (the default lab when none was).
NCLIENTS=2
NDCS=1
if [ "${1:-}" = up ]; then
  NCLIENTS=${CLIENTS:-2}
  NDCS=${DCS:-1}
elif [ -r "${PROVISION_LAB_DIR:-/var/lib/provision-lab}/.size" ]; then
  read -r NCLIENTS NDCS <"${PROVISION_LAB_DIR:-/var/lib/provision-lab}/.size" || true
fi
[[ $NCLIENTS =~ ^[1-9][0-9]*$ ]] && ((NCLIENTS <= 200)) || {
  echo "lab.sh: CLIENTS must be 1 to 200, not '$NCLIENTS'" >&2
  exit 2
}
[[ $NDCS =~ ^[12]$ ]] || {
  echo "lab.sh: DCS must be 1 or 2, not '$NDCS'" >&2
  exit 2
}
DC_STORE=${DC_STORE:-tdb}
[[ $DC_STORE =~ ^(tdb|mdb)$ ]] || {
  echo "lab.sh: DC_STORE must be tdb or mdb, not '$DC_STORE'" >&2
  exit 2
}
CLIENT_HOSTS=()
for ((_i = 1; _i <= NCLIENTS; _i++)); do CLIENT_HOSTS+=("cli$_i"); done
DC_HOSTS=(dc)
((NDCS < 2)) || DC_HOSTS+=(dc2)
HOSTS=(ctl "${DC_HOSTS[@]}" srv "${CLIENT_HOSTS[@]}")
SSH_HOSTS=(dc srv "${CLIENT_HOSTS[@]}") # dc's starts once samba runs: dc_start may clear its namespace
declare -A IP=([ctl]=$NET.5 [dc]=$NET.10 [dc2]=$NET.11 [srv]=$NET.20)
for ((_i = 1; _i <= NCLIENTS; _i++)); do IP[cli$_i]=$NET.$((30 + _i)); done
unset _i
REALM=LAB.TEST
DNSDOM=lab.test
WG=LAB
BASEDN=DC=lab,DC=test
DCNAME=dc.$DNSDOM
T0=${EPOCHREALTIME/[.,]/}

# ---------------------------------------------------------------- helpers
say() {
  local now=${EPOCHREALTIME/[.,]/} ms
  ms=$(((now - T0) / 1000))
  printf '[lab %3d.%01ds] %s\n' $((ms / 1000)) $((ms % 1000 / 100)) "$*" >&2
}

# fail MSG [LOGFILE...]: print MSG and the tail of each log, exit 1
fail() {
  local msg=$1 f
  shift
  say "FAILED: $msg"
  for f in "$@"; do
    if [ -s "$f" ]; then
      printf -- '---- tail of %s\n' "$f" >&2
      tail -n 25 "$f" >&2
    fi
  done
  exit 1
}

die() {
  echo "lab.sh: $*" >&2
  exit 2
}

usage() {
  sed -n '6,20p' "$SELF" | sed 's/^#   //' >&2
  exit 2
}

valid_host() {
  local h
  for h in "${HOSTS[@]}"; do [ "$h" = "$1" ] && return 0; done
  return 1
}

ns() { printf 'pvlab-%s' "$1"; }

ns_exists() { [ -e "/run/netns/pvlab-$1" ] && ip netns exec "pvlab-$1" true 2>/dev/null; }

# run in the namespace only (no hostname, no private /run/samba, no lab env); cheap checks
ns_exec() {
  local h=$1
  shift
  ip netns exec "pvlab-$h" "$@" 9<&-
}

# run in the namespace with the lab environment: hostname = HOST (own UTS namespace), private
# /run/samba ($LAB/HOST/run, bound inside the mount namespace that `ip netns exec` creates, so
# it never leaks into the root namespace), on srv a private /srv ($LAB/srv/srv: the shares and
# trees the toolkit makes there go with the lab's state at `down`), per-namespace /etc files,
# KRB5_CONFIG, KRB5CCNAME, LDAPCONF. fd 9 (the lab lock) is not inherited.
# The cgroup file system a host shows under /sys/fs/cgroup, for the namespaces: `ip netns
# exec` mounts a fresh sysfs on /sys, which hides the machine's cgroup mounts, and a real
# server has them (the copy's watch reads the CPU quota that holds each smbd there). "v2", or
# "v1 OPTS" of the cpu controller's hierarchy (read-only again inside), or nothing.
CG_VIEW=
cg_view() {
  local kind mnt opts o
  [ -z "$CG_VIEW" ] || { echo "$CG_VIEW"; return 0; }
  while read -r _ mnt kind opts _; do
    if [ "$kind" = cgroup2 ] && [ "$mnt" = /sys/fs/cgroup ]; then CG_VIEW=v2; break; fi
    if [ "$kind" = cgroup ] && [[ ,$opts, == *,cpu,* ]]; then
      o=$(tr , '\n' <<<"$opts" | grep -xE 'cpu|cpuacct' | paste -sd, -)
      CG_VIEW="v1 $o"
      break
    fi
  done </proc/self/mounts
  echo "$CG_VIEW"
}

lab_exec() {
  local h=$1 data=
  shift
  [ "$h" != srv ] || data=$LAB/srv/srv
  KRB5_CONFIG=$LAB/krb5.conf KRB5CCNAME=FILE:$LAB/cc/$h LDAPCONF=$LAB/ldap.conf \
    PROVISION_LAB_DIR=$LAB LAB_HOST=$h \
    ip netns exec "pvlab-$h" unshare --uts -- /bin/sh -c '
      printf "%s\n" "$1" >/proc/sys/kernel/hostname && mount -n --bind "$2" /run/samba || exit 125
      [ -z "$3" ] || mount -n --bind "$3" /srv || exit 125
      case $4 in
        v2) mount -n -t cgroup2 -o ro cgroup2 /sys/fs/cgroup 2>/dev/null ;;
        "v1 "*) mount -n -t tmpfs -o mode=755,size=64k cgroups /sys/fs/cgroup 2>/dev/null &&
          mkdir /sys/fs/cgroup/cpu && mount -n -t cgroup -o "ro,${4#v1 }" cgroup /sys/fs/cgroup/cpu ;;
      esac
      shift 4
      exec "$@"' lab-exec "$h" "$LAB/$h/run" "$data" "$(cg_view)" "$@" 9<&-
}

# put FILE MODE <content: write only when the content differs, in place (same inode: files
# under /etc/netns are bind-mounted into running namespaces, pitfall 5). Builtins only.
put() {
  local f=$1 mode=$2 new="" cur=""
  IFS= read -r -d '' new || true
  if [ -f "$f" ]; then IFS= read -r -d '' cur <"$f" || true; fi
  if [ ! -f "$f" ] || [ "$new" != "$cur" ]; then
    if [ ! -e "$f" ]; then
      umask 077
      : >"$f"
      umask 022
    fi
    printf '%s' "$new" >"$f"
    chmod "$mode" "$f"
  fi
}

# pid from a pid file if that process is alive (not a zombie) and in namespace pvlab-HOST
daemon_pid() { # HOST PIDFILE
  local p="" st
  if [ -r "$2" ]; then read -r p _ 2>/dev/null <"$2" || true; fi
  [[ $p =~ ^[0-9]+$ ]] || return 0
  st=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$p/status" 2>/dev/null) || return 0
  [ -n "$st" ] && [ "$st" != Z ] || return 0
  [ "$(ip netns identify "$p" 2>/dev/null)" = "pvlab-$1" ] || return 0
  echo "$p"
}

# a live process named COMM from our PIDFILE that is outside the root network namespace but
# not in its lab namespace any more (that namespace was deleted under it): ours, to be killed
stray_pid() { # PIDFILE COMM
  local p="" c
  if [ -r "$1" ]; then read -r p _ 2>/dev/null <"$1" || true; fi
  [[ $p =~ ^[0-9]+$ ]] && alive "$p" || return 0
  read -r c 2>/dev/null <"/proc/$p/comm" || return 0
  [ "$c" = "$2" ] || return 0
  [ "$(readlink "/proc/$p/ns/net")" != "$(readlink /proc/$$/ns/net)" ] || return 0
  [ -n "$(ip netns identify "$p" 2>/dev/null)" ] || echo "$p"
}

kill_strays() {
  local h p
  for h in "${SSH_HOSTS[@]}"; do
    p=$(stray_pid "$LAB/$h/sshd.pid" sshd)
    [ -z "$p" ] || kill_wait "$p" || true
  done
  for p in "dc/pid/samba.pid samba" "dc2/pid/samba.pid samba" "srv/pid/smbd.pid smbd" \
    "srv/pid/winbindd.pid winbindd"; do
    p=$(stray_pid "$LAB/${p% *}" "${p#* }")
    [ -z "$p" ] || kill_wait "$p" || true
  done
}

dc_pid() { daemon_pid dc "$LAB/dc/pid/samba.pid"; }
dc_empty() { [ -z "$(ns_pids dc)" ]; }
sshd_pid() { daemon_pid "$1" "$LAB/$1/sshd.pid"; }

alive() { [ -d "/proc/$1" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

# wait_for SECONDS CMD...: retry CMD (quietly) every 0.1 s
wait_for() {
  local end=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < end)) || return 1
    sleep 0.1
  done
}

tcp_ok() { # FROMHOST IP PORT
  ns_exec "$1" timeout 2 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$2" "$3" 2>/dev/null
}

# all pids in the given lab namespaces (except ourselves)
ns_pids() {
  local h p
  for h in "$@"; do
    [ -e "/run/netns/pvlab-$h" ] || continue
    for p in $(ip netns pids "pvlab-$h" 2>/dev/null); do
      [ "$p" = "$$" ] || echo "$p"
    done
  done
  return 0
}

# kill everything in the given namespaces by PID: TERM (repeated, daemons fork helpers
# while shutting down), then KILL after 10 s (pitfall 7)
kill_ns() {
  local pids i
  mapfile -t pids < <(ns_pids "$@")
  [ ${#pids[@]} -gt 0 ] || return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for ((i = 1; i <= 150; i++)); do
    sleep 0.1
    mapfile -t pids < <(ns_pids "$@")
    [ ${#pids[@]} -gt 0 ] || return 0
    if ((i == 100)); then
      kill -KILL "${pids[@]}" 2>/dev/null || true
    elif ((i % 10 == 0)); then
      kill -TERM "${pids[@]}" 2>/dev/null || true
    fi
  done
  say "warning: still in the namespaces: ${pids[*]}"
  return 1
}

kill_wait() { # PIDS...: TERM, wait up to 15 s, KILL
  local p i left=("$@") still
  [ ${#left[@]} -gt 0 ] || return 0
  kill -TERM "${left[@]}" 2>/dev/null || true
  for ((i = 1; i <= 200; i++)); do
    still=()
    for p in "${left[@]}"; do if alive "$p"; then still+=("$p"); fi; done
    left=("${still[@]}")
    [ ${#left[@]} -gt 0 ] || return 0
    ((i != 150)) || kill -KILL "${left[@]}" 2>/dev/null || true
    sleep 0.1
  done
  return 1
}

lock() {
  exec 9<"$SELF"
  flock -w 300 9 || die "another lab.sh up/down is running"
}

need_root() { [ "$(id -u)" = 0 ] || die "must run as root"; }

check_tools() {
  local t missing=()
  for t in ip unshare flock samba samba-tool smbd winbindd net wbinfo testparm smbclient \
    kinit klist ldapsearch dig ssh ssh-keygen timeout; do
    command -v "$t" >/dev/null 2>&1 || missing+=("$t")
  done
  [ -x /usr/sbin/sshd ] || missing+=(sshd)
  [ -x /usr/bin/python3 ] || missing+=(python3)
  [ -d /usr/share/samba/setup ] || missing+=(samba-ad-provision)
  [ ${#missing[@]} -eq 0 ] || die "missing tools: ${missing[*]} (run make deps)"
}

check_labdir() {
  [[ $LAB =~ ^/[A-Za-z0-9._/-]+$ && $LAB != / && $LAB != *..* ]] ||
    die "PROVISION_LAB_DIR must be an absolute path of [A-Za-z0-9._/-]: $LAB"
}

# ---------------------------------------------------------------- configuration content
hosts_lines() {
  local h
  printf '127.0.0.1\tlocalhost\n'
  for h in "${HOSTS[@]}"; do printf '%s\t%s.%s %s\n' "${IP[$h]}" "$h" "$DNSDOM" "$h"; done
}

hosts_ok() { # FILE has every lab line
  local l
  [ -f "$1" ] || return 1
  while IFS= read -r l; do grep -qxF "$l" "$1" || return 1; done < <(hosts_lines)
}

krb5_conf() {
  cat <<EOF
# provision lab: realm $REALM, KDC on the lab DC only
[libdefaults]
	default_realm = $REALM
	dns_lookup_kdc = false
	dns_lookup_realm = false
	rdns = false
	dns_canonicalize_hostname = false
	forwardable = true
	# the "system keytab" of the lab's hosts (srv's with 'kerberos method = system keytab' or
	# 'secrets and keytab'): a lab file, never this machine's /etc/krb5.keytab
	default_keytab_name = FILE:$LAB/srv/system.keytab

[realms]
	$REALM = {
		kdc = $DCNAME
		admin_server = $DCNAME
		kpasswd_server = $DCNAME
		default_domain = $DNSDOM
	}

[domain_realm]
	.$DNSDOM = $REALM
	$DNSDOM = $REALM
EOF
}

ldap_conf() {
  cat <<EOF
# provision lab
BASE	$BASEDN
TLS_CACERT	$LAB/ca.pem
TLS_REQCERT	demand
SASL_NOCANON	on
EOF
}

# runtime dirs of a non-DC host, all under $LAB/HOST
samba_dirs() {
  local d=$LAB/$1
  cat <<EOF
	private dir = $d/private
	lock directory = $d/lock
	state directory = $d/state
	cache directory = $d/cache
	pid directory = $d/pid
	ncalrpc dir = $d/ncalrpc
	binddns dir = $d/bind-dns
	usershare path = $d/usershares
	log file = $LAB/log/$1.%m.log
	max log size = 10000
	logging = file
EOF
}

member_smb_conf() {
  cat <<EOF
# provision lab: base config of the member file server srv (security = ads), NOT joined.
[global]
	netbios name = SRV
	workgroup = $WG
	realm = $REALM
	security = ads
	server role = member server
	kerberos method = dedicated keytab
	dedicated keytab file = FILE:$LAB/srv/krb5.keytab
	idmap config * : backend = tdb
	idmap config * : range = 3000-7999
	idmap config $WG : backend = rid
	idmap config $WG : range = 10000-999999
	winbind use default domain = no
	winbind refresh tickets = no
	template shell = /bin/false
	registry shares = yes
	disable netbios = yes
	smb ports = 445
	interfaces = ${IP[srv]} 127.0.0.1
	bind interfaces only = yes
	dns proxy = no
	load printers = no
	printing = bsd
	printcap name = /dev/null
	disable spoolss = yes
$(samba_dirs srv)
EOF
}

client_smb_conf() { # HOST
  local up
  up=$(printf '%s' "$1" | tr '[:lower:]' '[:upper:]')
  cat <<EOF
# provision lab: client config of $1 (own cache/lock/state dirs, pitfall 4)
[global]
	netbios name = $up
	workgroup = $WG
	realm = $REALM
	security = ads
	disable netbios = yes
	interfaces = ${IP[$1]} 127.0.0.1
	bind interfaces only = yes
	load printers = no
	printcap name = /dev/null
$(samba_dirs "$1")
EOF
}

nsswitch_srv() {
  cat <<'EOF'
# provision lab: srv resolves domain users through the member's winbindd
passwd:         files winbind
group:          files winbind
shadow:         files
hosts:          files dns
networks:       files
protocols:      files
services:       files
ethers:         files
rpc:            files
netgroup:       files
EOF
}

sshd_conf() { # HOST
  cat <<EOF
# provision lab: sshd of $1 (started by tests/lab/lab.sh inside pvlab-$1)
ListenAddress ${IP[$1]}:22
HostKey $LAB/ssh/host_${1}_ed25519
PidFile $LAB/$1/sshd.pid
AuthorizedKeysFile $LAB/ssh/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
GSSAPIAuthentication no
UsePAM no
UseDNS no
StrictModes yes
X11Forwarding no
PrintMotd no
PrintLastLog no
MaxStartups 64:30:128
MaxSessions 64
LogLevel INFO
Subsystem sftp internal-sftp
SetEnv HOME=$LAB/$1/home KRB5_CONFIG=$LAB/krb5.conf KRB5CCNAME=FILE:$LAB/cc/$1 LDAPCONF=$LAB/ldap.conf PROVISION_LAB_DIR=$LAB LAB_HOST=$1 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$LAB/bin
EOF
}

ssh_config() {
  cat <<EOF
# provision lab: ssh -F $LAB/ssh/ssh_config srv|cli1|cli2 (from a lab namespace, e.g. ctl)
Host *
	User root
	IdentityFile $LAB/ssh/id_ed25519
	IdentitiesOnly yes
	UserKnownHostsFile $LAB/ssh/known_hosts
	GlobalKnownHostsFile /dev/null
	StrictHostKeyChecking yes
	UpdateHostKeys no
	HashKnownHosts no
	BatchMode yes
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	GSSAPIAuthentication no
	ConnectTimeout 5
	ServerAliveInterval 15
	LogLevel ERROR
EOF
}

# ---------------------------------------------------------------- up: steps
# marks what the lab created outside its own dirs, so down removes exactly that
mark_created() { # PATH MARKER
  [ -e "$1" ] || {
    mkdir -p "$1"
    : >"$LAB/.made-$2"
  }
}

setup_state() {
  install -d -m 0755 "$LAB"
  install -d -m 0755 "$LAB/bin" "$LAB/log" "$LAB/ctl" "$LAB/srv"
  for h in "${CLIENT_HOSTS[@]}"; do install -d -m 0755 "$LAB/$h"; done
  printf '%s %s\n' "$NCLIENTS" "$NDCS" | put "$LAB/.size" 644
  install -d -m 0700 "$LAB/cc" "$LAB/ssh"
  local h
  for h in "${HOSTS[@]}"; do install -d -m 0755 "$LAB/$h/run"; done
  install -d -m 0755 "$LAB/srv/srv"
  [ -d /srv ] || install -d -m 0755 /srv # the mount point of srv's private /srv
  # HOME of ssh sessions (SetEnv): keeps the machine's ~root/.bashrc and ~/.ssh out of the lab
  for h in "${SSH_HOSTS[@]}"; do install -d -m 0700 "$LAB/$h/home"; done
  # Samba runtime dirs of srv and the clients (private must exist, 0700)
  for h in ctl srv "${CLIENT_HOSTS[@]}"; do
    install -d -m 0755 "$LAB/$h/lock" "$LAB/$h/state" "$LAB/$h/cache" "$LAB/$h/pid" "$LAB/$h/ncalrpc"
    install -d -m 0700 "$LAB/$h/private"
  done
  # the DC's admin password is fixed when it is provisioned; a kept DC keeps its file
  if [ ! -f "$LAB/dc/.provisioned" ] || [ ! -s "$LAB/admin.pass" ]; then
    printf '%s' "${LAB_ADMIN_PASS:-Lab-Adm1n-Passw0rd!}" | put "$LAB/admin.pass" 600
  fi
  printf '%s' "${LAB_USER_PASS:-Us3r-Passw0rd!x}" | put "$LAB/user.pass" 600
  { printf 'username = Administrator\npassword = ' && cat "$LAB/admin.pass" &&
    printf '\ndomain = %s\n' "$WG"; } | put "$LAB/admin.auth" 600
  krb5_conf | put "$LAB/krb5.conf" 644
  ldap_conf | put "$LAB/ldap.conf" 644
  sed "s|@LAB@|$LAB|" "$HERE/lab-service" | put "$LAB/bin/lab-service" 755
  # ssh: one client key, one host key per sshd host
  [ -s "$LAB/ssh/id_ed25519" ] ||
    ssh-keygen -q -t ed25519 -N '' -C provision-lab-client -f "$LAB/ssh/id_ed25519" </dev/null
  for h in "${SSH_HOSTS[@]}"; do
    [ -s "$LAB/ssh/host_${h}_ed25519" ] ||
      ssh-keygen -q -t ed25519 -N '' -C "$h.$DNSDOM" -f "$LAB/ssh/host_${h}_ed25519" </dev/null
    sshd_conf "$h" | put "$LAB/ssh/sshd_$h.conf" 600
  done
  printf 'from="%s.0/24" %s\n' "$NET" "$(cat "$LAB/ssh/id_ed25519.pub")" | put "$LAB/ssh/authorized_keys" 600
  for h in "${SSH_HOSTS[@]}"; do
    printf '%s,%s.%s,%s %s\n' "$h" "$h" "$DNSDOM" "${IP[$h]}" \
      "$(cut -d' ' -f1,2 "$LAB/ssh/host_${h}_ed25519.pub")"
  done | put "$LAB/ssh/known_hosts" 644
  ssh_config | put "$LAB/ssh/ssh_config" 644
  # sshd's privilege separation dir (shared by all namespaces, pitfall 13)
  mark_created /run/sshd run-sshd
  chmod 0755 /run/sshd
  [ -d /run/samba ] || mark_created /run/samba run-samba
}

v6off() { # INTERFACE in the root namespace
  [ ! -w "/proc/sys/net/ipv6/conf/$1/disable_ipv6" ] || echo 1 >"/proc/sys/net/ipv6/conf/$1/disable_ipv6"
}

setup_net() {
  local h n v
  if ! ip link show "$BR" >/dev/null 2>&1; then
    ip link add "$BR" type bridge
  fi
  v6off "$BR"
  ip addr replace "$BR_IP/24" dev "$BR"
  ip link set "$BR" up
  mountpoint -q /run/netns || : >"$LAB/.made-run-netns"
  local line
  local -A upv=()
  while IFS= read -r line; do
    if [[ $line =~ ^[0-9]+:\ ([^@:]+)@[^\ ]*\ .*\ state\ UP\  ]]; then upv[${BASH_REMATCH[1]}]=1; fi
  done < <(ip -o link show master "$BR" 2>/dev/null)
  for h in "${HOSTS[@]}"; do
    n=$(ns "$h")
    v=pvlab-v$h
    # fast path: root end on the bridge and up, namespace end up with its address
    if [ -n "${upv[$v]:-}" ] &&
      [[ $(ip -n "$n" -4 -o addr show dev eth0 up 2>/dev/null) == *" ${IP[$h]}/24 "* ]]; then
      continue
    fi
    if ! ns_exists "$h"; then
      ip netns del "$n" 2>/dev/null || true
      ip netns add "$n"
    fi
    if ! ip -n "$n" link show eth0 >/dev/null 2>&1; then
      ip link del "$v" 2>/dev/null || true
      ip link add "$v" type veth peer name eth0 netns "$n"
    fi
    v6off "$v"
    ip link set "$v" master "$BR" up
    ns_exec "$h" sh -c 'for f in /proc/sys/net/ipv6/conf/*/disable_ipv6; do echo 1 >"$f"; done'
    ip -n "$n" link set lo up
    ip -n "$n" addr replace "${IP[$h]}/24" dev eth0
    ip -n "$n" link set eth0 up
    # a recreated host has a new MAC: drop stale ARP entries for it everywhere
    local o
    ip neigh flush to "${IP[$h]}" dev "$BR" 2>/dev/null || true
    for o in "${HOSTS[@]}"; do
      [ "$o" = "$h" ] || ip -n "pvlab-$o" neigh flush to "${IP[$h]}" 2>/dev/null || true
    done
  done
  # A new network namespace starts with the kernel's default of 10 queued datagrams per Unix
  # socket, where a Debian or Ubuntu server has systemd's 512 (sysctl.d/50-default.conf). With
  # 10, smbd's change-notify messages to smbd-notifyd overflow into smbd's own send queue, a
  # tevent request with a 60 s timer each, and a copy of 44,000 files ran at 741 files/s
  # against 5,223 with 512 (docs/bench.md). Set before the daemons make their sockets.
  for h in "${HOSTS[@]}"; do
    ns_exec "$h" sh -c 'echo 512 >/proc/sys/net/unix/max_dgram_qlen'
  done
}

setup_netns_files() {
  local h d
  [ -d /etc/netns ] || mark_created /etc/netns etc-netns
  for h in "${HOSTS[@]}"; do
    d=/etc/netns/$(ns "$h")
    install -d -m 0755 "$d" "$d/samba"
    # hosts: repaired when a lab entry is missing; extra lines (aliases added by tests) stay
    if ! hosts_ok "$d/hosts"; then
      hosts_lines | put "$d/hosts" 644
    fi
    printf 'nameserver %s\nsearch %s\noptions timeout:2 attempts:2\n' "${IP[dc]}" "$DNSDOM" |
      put "$d/resolv.conf" 644
    put "$d/krb5.conf" 644 <"$LAB/krb5.conf"
    # smb.conf is written once: the toolkit owns it afterwards (join, shares, ...)
    case $h in
      dc) [ ! -f "$LAB/dc/.provisioned" ] || put "$d/samba/smb.conf" 644 <"$LAB/dc/etc/smb.conf" ;;
      dc2) [ ! -f "$LAB/dc2/.joined" ] || put "$d/samba/smb.conf" 644 <"$LAB/dc2/etc/smb.conf" ;;
      srv)
        [ -f "$d/samba/smb.conf" ] || member_smb_conf | put "$d/samba/smb.conf" 644
        nsswitch_srv | put "$d/nsswitch.conf" 644
        ;;
      *) [ -f "$d/samba/smb.conf" ] || client_smb_conf "$h" | put "$d/samba/smb.conf" 644 ;;
    esac
  done
}

# provision the DC from nothing (runs in the background of `up`), pitfalls 2 and 3
dc_provision() {
  local d=$LAB/dc
  rm -rf "$d"
  install -d -m 0755 "$d" "$d/run" "$d/pid"
  : >"$d/empty.conf"
  lab_exec dc /usr/bin/python3 "$HERE/lab-samba.py" provision -s "$d/empty.conf" \
    --realm="$REALM" --domain="$WG" --server-role=dc --dns-backend=SAMBA_INTERNAL \
    --use-rfc2307 --host-name=dc --host-ip="${IP[dc]}" --targetdir="$d" \
    --backend-store="$DC_STORE" \
    --option="interfaces = 127.0.0.1 ${IP[dc]}" --option="bind interfaces only = yes" \
    --option="pid directory = $d/pid" --option="ncalrpc dir = $d/ncalrpc" \
    --option="ntp signd socket directory = $d/ntp_signd" \
    --option="usershare path = $d/usershares" \
    --option="disable netbios = yes" --option="smb ports = 445" \
    --option="log file = $LAB/log/dc.log" --option="max log size = 10000" \
    --option="logging = file" </dev/null
  sed -i '/dns forwarder/d' "$d/etc/smb.conf" # never forward: nothing leaves the lab
  echo "$DC_STORE" >"$d/.provisioned"
}

dc_start() {
  local pid
  pid=$(dc_pid)
  [ -z "$pid" ] || return 0
  # a dead DC master may leave workers holding the ports: clear the namespace
  pid=$(stray_pid "$LAB/dc/pid/samba.pid" samba)
  [ -z "$pid" ] || kill_wait "$pid" || true
  kill_ns dc || true
  rm -f "$LAB/dc/pid/"*.pid
  # with a second DC, dc pulls from it every 5 s too, as dc2 does from dc (Samba's default,
  # 300 s, made a resumed dc wait up to five minutes for what dc2 wrote: docs/scale.md)
  if ((NDCS > 1)) && ! grep -q 'dreplsrv:periodic_interval' "$LAB/dc/etc/smb.conf"; then
    sed -i 's/^\[global\]$/&\n\tdreplsrv:periodic_interval = 5/' "$LAB/dc/etc/smb.conf"
  fi
  say "starting samba (AD DC) in dc"
  echo "=== $(date '+%F %T') samba -D" >>"$LAB/log/dc.out"
  lab_exec dc /usr/sbin/samba -D -s "$LAB/dc/etc/smb.conf" </dev/null >>"$LAB/log/dc.out" 2>&1 ||
    fail "samba did not start" "$LAB/log/dc.out" "$LAB/log/dc.log"
}

# $LAB/ca.pem: the CA of every DC's self-signed certificate (each Samba DC makes its own)
ca_bundle() {
  local f
  for f in "$LAB/dc/private/tls/ca.pem" "$LAB/dc2/private/tls/ca.pem"; do
    [ ! -s "$f" ] || cat "$f"
  done | put "$LAB/ca.pem" 644
}

ldaps_ok() {
  lab_exec ctl ldapsearch -x -o nettimeout=3 -H "ldaps://$DCNAME" -b '' -s base -LLL dnsHostName
}

kinit_admin() { # HOST [CCACHE]
  local cc=${2:-FILE:$LAB/cc/$1}
  lab_exec "$1" env KRB5CCNAME="$cc" kinit "Administrator@$REALM" <"$LAB/admin.pass"
}

dc_wait_ready() {
  wait_for 60 test -s "$LAB/dc/private/tls/ca.pem" ||
    fail "the DC made no TLS certificate" "$LAB/log/dc.out" "$LAB/log/dc.log"
  ca_bundle
  wait_for 60 tcp_ok ctl "${IP[dc]}" 636 || fail "LDAPS (636) does not answer" "$LAB/log/dc.log"
  wait_for 30 tcp_ok ctl "${IP[dc]}" 88 || fail "Kerberos (88) does not answer" "$LAB/log/dc.log"
  wait_for 30 ldaps_ok || fail "LDAPS search with the CA verified fails" "$LAB/log/dc.log"
  wait_for 30 kinit_admin dc || fail "kinit Administrator in dc fails" "$LAB/log/dc.log"
}

dns_missing() {
  local h ans q=()
  for h in srv "${CLIENT_HOSTS[@]}" ctl; do q+=("$h.$DNSDOM" A); done
  ans=$(ns_exec ctl dig +noall +answer +time=2 +tries=2 "@${IP[dc]}" "${q[@]}" 2>/dev/null) || ans=""
  ans=$(printf '%s\n' "$ans" | awk '$4 == "A" {print $1, $5}')
  for h in srv "${CLIENT_HOSTS[@]}" ctl; do
    grep -qxF "$h.$DNSDOM. ${IP[$h]}" <<<"$ans" || echo "$h=${IP[$h]}"
  done
}

dc_dns_records() {
  local missing
  mapfile -t missing < <(dns_missing)
  [ ${#missing[@]} -gt 0 ] || return 0
  say "adding DNS A records: ${missing[*]}"
  lab_exec dc /usr/bin/python3 "$HERE/lab-samba.py" dns-add "$DCNAME" "$DNSDOM" "${missing[@]}" \
    </dev/null >>"$LAB/log/dc-dns.log" 2>&1 || fail "samba-tool dns add failed" "$LAB/log/dc-dns.log"
  mapfile -t missing < <(dns_missing)
  [ ${#missing[@]} -eq 0 ] || fail "DNS records still missing: ${missing[*]}" "$LAB/log/dc-dns.log"
}

# ---------------------------------------------------------------- the second DC (DCS=2)
# dc2 joins the domain as a DC (samba-tool domain join, in-process: the password stays off
# every command line), pulls from dc every 5 s (dreplsrv:periodic_interval; Samba's default is
# 300), and is started like dc. Its certificate's CA joins $LAB/ca.pem.
dc2_join() {
  local d=$LAB/dc2
  rm -rf "$d"
  install -d -m 0755 "$d" "$d/run" "$d/pid" "$d/etc"
  : >"$d/empty.conf"
  lab_exec dc2 /usr/bin/python3 "$HERE/lab-samba.py" join "$DNSDOM" DC -s "$d/empty.conf" \
    --server="$DCNAME" --targetdir="$d" --dns-backend=SAMBA_INTERNAL \
    --backend-store="$DC_STORE" \
    --option="interfaces = 127.0.0.1 ${IP[dc2]}" --option="bind interfaces only = yes" \
    --option="pid directory = $d/pid" --option="ncalrpc dir = $d/ncalrpc" \
    --option="ntp signd socket directory = $d/ntp_signd" \
    --option="usershare path = $d/usershares" \
    --option="disable netbios = yes" --option="smb ports = 445" \
    --option="log file = $LAB/log/dc2.log" --option="max log size = 10000" \
    --option="logging = file" --option="dreplsrv:periodic_interval = 5" </dev/null
  sed -i '/dns forwarder/d' "$d/etc/smb.conf"
  : >"$d/.joined"
}

dc2_ldaps_ok() {
  lab_exec ctl ldapsearch -x -o nettimeout=3 -H "ldaps://dc2.$DNSDOM" -b '' -s base -LLL dnsHostName
}

dc2_up() {
  local pid
  if [ ! -f "$LAB/dc2/.joined" ]; then
    say "joining dc2 to the domain as a second DC (log: $LAB/log/dc2-join.log)"
    dc2_join >"$LAB/log/dc2-join.log" 2>&1 || fail "dc2's join failed" "$LAB/log/dc2-join.log"
    setup_netns_files
  fi
  pid=$(daemon_pid dc2 "$LAB/dc2/pid/samba.pid")
  if [ -z "$pid" ]; then
    say "starting samba (second AD DC) in dc2"
    lab_exec dc2 /usr/sbin/samba -D -s "$LAB/dc2/etc/smb.conf" </dev/null \
      >>"$LAB/log/dc2.out" 2>&1 || fail "samba did not start in dc2" "$LAB/log/dc2.out"
  fi
  wait_for 60 test -s "$LAB/dc2/private/tls/ca.pem" || fail "dc2 made no TLS certificate" "$LAB/log/dc2.log"
  ca_bundle
  wait_for 60 dc2_ldaps_ok || fail "LDAPS on dc2 fails" "$LAB/log/dc2.log"
}

# repl pause|resume [dc|dc2]: a DC's inbound replication (dc2's by default) off or on: the
# DISABLE_INBOUND_REPL option of its NTDS Settings, set in its own database (samba-tool drs
# options would do it over DRS); its replication service reads it at every pull, so resume
# takes effect at the next (5 s)
cmd_repl() { # pause|resume [DC]: DC's inbound replication (default dc2's)
  need_root
  [ $# -eq 1 ] || [ $# -eq 2 ] || usage
  ((NDCS > 1)) && ns_exists dc2 || die "repl: the lab has no second DC (lab.sh up with DCS=2)"
  local sign h=${2:-dc2}
  case $1 in
    pause) sign=+ ;;
    resume) sign=- ;;
    *) usage ;;
  esac
  [[ $h == dc || $h == dc2 ]] || die "repl: the DC must be dc or dc2, not '$h'"
  lab_exec "$h" /usr/bin/python3 "$HERE/lab-samba.py" dsa-option "$LAB/$h/etc/smb.conf" \
    "${sign}DISABLE_INBOUND_REPL" </dev/null >/dev/null || die "repl $1 $h: the option was not set"
}

# $LAB/clients.ini (an Ansible inventory of the lab's clients) and $LAB/lab.yaml (the lab's
# playbook, its clients taken from that inventory, dc2 named when there is one)
lab_files() {
  local h
  {
    printf '# provision lab: the %d clients (tests/lab/lab.sh up)\n[clients]\n' "$NCLIENTS"
    for h in "${CLIENT_HOSTS[@]}"; do printf '%s ansible_host=%s\n' "$h" "${IP[$h]}"; done
    printf '\n[clients:vars]\nansible_user=root\n'
  } | put "$LAB/clients.ini" 644
  awk -v inv="$LAB/clients.ini" -v dc2="$( ((NDCS > 1)) && echo "dc2.$DNSDOM ${IP[dc2]}")" \
    -v sets="$(cd "$HERE/../../playbooks" && pwd)/filesets" '
    /^clients:/ { print "clients: {inventory: " inv ", group: clients}"; skip = 1; next }
    skip && /^# Where results/ { skip = 0; print "" }
    skip { next }
    /^  fileset: filesets\// { sub(/filesets/, sets) }
    { print }
    /^  admin_password:/ && dc2 != "" {
      split(dc2, d, " ")
      print "  other_dcs: [{name: " d[1] ", address: " d[2] "}]"
    }' "$HERE/../../playbooks/lab.yaml" | put "$LAB/lab.yaml" 644
}

sshd_start() { # HOST
  local h=$1 log=$LAB/log/sshd-$1.log p
  if [ -n "$(sshd_pid "$h")" ]; then
    [ "$LAB/ssh/sshd_$h.conf" -nt "$LAB/$h/sshd.pid" ] || return 0
    say "restarting sshd in $h (config changed)"
    sshd_stop "$h"
  fi
  p=$(stray_pid "$LAB/$h/sshd.pid" sshd)
  [ -z "$p" ] || kill_wait "$p" || true
  rm -f "$LAB/$h/sshd.pid"
  lab_exec "$h" /usr/sbin/sshd -f "$LAB/ssh/sshd_$h.conf" -E "$log" </dev/null \
    >>"$LAB/log/sshd-$h.out" 2>&1 || fail "sshd did not start in $h" "$LAB/log/sshd-$h.out" "$log"
}

sshd_wait() { # HOST
  wait_for 15 tcp_ok ctl "${IP[$1]}" 22 || fail "sshd of $1 does not answer" "$LAB/log/sshd-$1.log"
}

sshd_stop() { # HOST
  local pid
  pid=$(sshd_pid "$1")
  [ -z "$pid" ] || kill_wait "$pid" || fail "sshd of $1 did not stop"
  rm -f "$LAB/$1/sshd.pid"
}

# sshd kill: the listener and every session's sshd below it killed at once (SIGKILL), as when
# the host's SSH side dies: the sessions' commands lose their stdin and stdout, nothing else
descendants() { # PID: every process below PID
  local c
  for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
    echo "$c"
    descendants "$c"
  done
}

sshd_kill() { # HOST
  local pid p c pids=()
  pid=$(sshd_pid "$1")
  [ -n "$pid" ] || return 0
  pids=("$pid")
  for p in $(descendants "$pid"); do
    read -r c 2>/dev/null <"/proc/$p/comm" || continue
    [ "$c" != sshd ] || pids+=("$p")
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
  rm -f "$LAB/$1/sshd.pid"
}

# ---------------------------------------------------------------- commands
cmd_up() {
  need_root
  check_labdir
  check_tools
  lock
  local prov_pid="" h
  rm -f "$LAB/.up"
  setup_state
  setup_net
  setup_netns_files
  # a DC kept by KEEP=1 on the other store (an empty record: tdb) is provisioned again
  if [ -f "$LAB/dc/.provisioned" ] && [ "$(cat "$LAB/dc/.provisioned")" != "$DC_STORE" ] &&
    { [ "$DC_STORE" != tdb ] || [ -s "$LAB/dc/.provisioned" ]; }; then
    rm -f "$LAB/dc/.provisioned"
  fi
  if [ ! -f "$LAB/dc/.provisioned" ]; then
    /usr/bin/python3 -c 'import samba.netcmd.main' 2>/dev/null || die "python3-samba is missing"
    kill_ns dc || true
    say "provisioning the DC (log: $LAB/log/dc-provision.log)"
    dc_provision >"$LAB/log/dc-provision.log" 2>&1 &
    prov_pid=$!
    trap '[ -z "${prov_pid:-}" ] || kill "$prov_pid" 2>/dev/null || true' EXIT
  fi
  for h in srv "${CLIENT_HOSTS[@]}"; do sshd_start "$h"; done
  if [ -n "$prov_pid" ]; then
    wait "$prov_pid" || fail "DC provision failed" "$LAB/log/dc-provision.log"
    prov_pid=""
    trap - EXIT
    say "DC provisioned"
    setup_netns_files
  fi
  dc_start
  sshd_start dc
  dc_wait_ready
  dc_dns_records
  ((NDCS < 2)) || dc2_up
  lab_files
  for h in "${SSH_HOSTS[@]}"; do sshd_wait "$h"; done
  : >"$LAB/.up"
  say "lab up (state $LAB)"
}

cmd_down() {
  need_root
  check_labdir
  lock
  local h present=() all=("${HOSTS[@]}")
  # a lab of another size left up (its record lost) goes too: every pvlab- namespace
  for h in $(ip netns list 2>/dev/null | sed -n 's/^pvlab-\([a-z0-9]*\).*/\1/p'); do
    [[ " ${all[*]} " == *" $h "* ]] || all+=("$h")
  done
  for h in "${all[@]}"; do [ ! -e "/run/netns/pvlab-$h" ] || present+=("$h"); done
  if [ ${#present[@]} -gt 0 ]; then
    kill_ns "${present[@]}" || say "warning: some processes did not exit"
  fi
  kill_strays
  srv_disk_umount || say "warning: srv's disk ($LAB/srv/srv) could not be unmounted"
  (cg_off) >/dev/null 2>&1 || say "warning: srv's CPU limit group could not be removed"
  for h in "${CLIENT_HOSTS[@]}"; do
    (cli_limit_off "$h") >/dev/null 2>&1 || say "warning: $h's CPU limit group could not be removed"
  done
  for h in "${all[@]}"; do
    [ ! -e "/run/netns/pvlab-$h" ] || ip netns del "pvlab-$h" 2>/dev/null || true
    ! ip link show "pvlab-v$h" >/dev/null 2>&1 || ip link del "pvlab-v$h" 2>/dev/null || true
  done
  ! ip link show "$BR" >/dev/null 2>&1 || ip link del "$BR"
  for h in "${all[@]}"; do rm -rf "/etc/netns/pvlab-$h"; done
  # what the lab created outside its dirs (markers written by up)
  if [ -e "$LAB/.made-etc-netns" ]; then rmdir /etc/netns 2>/dev/null || true; fi
  if [ -e "$LAB/.made-run-netns" ] && [ -d /run/netns ] && [ -z "$(ls -A /run/netns)" ]; then
    umount -n /run/netns 2>/dev/null || true
    rmdir /run/netns 2>/dev/null || true
  fi
  if [ -e "$LAB/.made-run-sshd" ]; then rmdir /run/sshd 2>/dev/null || true; fi
  if [ -e "$LAB/.made-run-samba" ]; then rmdir /run/samba 2>/dev/null || true; fi
  # (not with a second DC: dc keeps dc2's account and NTDS Settings, and a new dc2 could not
  # join as the same DC again)
  if [ "${KEEP:-0}" = 1 ] && [ -f "$LAB/dc/.provisioned" ] && [ ! -e "$LAB/dc2" ]; then
    # keep the provisioned DC, keys and passwords; srv and the clients start afresh (unjoined)
    rm -rf "$LAB/srv" "$LAB/ctl" "$LAB"/cli[0-9]* "$LAB/dc2" "$LAB/cc" "$LAB/.up" \
      "$LAB"/.made-* "$LAB"/.put.* "$LAB/dc/pid" "$LAB/dc/run" "$LAB/.size"
  else
    rm -rf "$LAB"
  fi
  say "lab down"
}

cmd_status() {
  local h rc=0 line pid
  if ip link show "$BR" >/dev/null 2>&1; then echo "bridge $BR: present"; else
    echo "bridge $BR: missing"
    rc=1
  fi
  for h in "${HOSTS[@]}"; do
    line=$(printf '%-5s %-12s' "$h" "${IP[$h]}")
    if ns_exists "$h"; then line+=" ns=yes"; else
      line+=" ns=NO"
      rc=1
    fi
    case $h in
      dc)
        pid=$(dc_pid)
        line+=" samba=${pid:--}"
        [ -n "$pid" ] || rc=1
        pid=$(sshd_pid "$h")
        line+=" sshd=${pid:--}"
        [ -n "$pid" ] || rc=1
        ;;
      dc2)
        pid=$(daemon_pid dc2 "$LAB/dc2/pid/samba.pid")
        line+=" samba=${pid:--}"
        [ -n "$pid" ] || rc=1
        ;;
      srv | cli*)
        pid=$(sshd_pid "$h")
        line+=" sshd=${pid:--}"
        [ -n "$pid" ] || rc=1
        if [ "$h" = srv ]; then
          line+=" winbindd=$(daemon_pid srv "$LAB/srv/pid/winbindd.pid" | grep . || echo -)"
          line+=" smbd=$(daemon_pid srv "$LAB/srv/pid/smbd.pid" | grep . || echo -)"
        fi
        ;;
    esac
    echo "$line"
  done
  [ ! -f "$LAB/srv/cpu-limit" ] || echo "srv cpu limit: $(cut -d' ' -f1 "$LAB/srv/cpu-limit")% of one CPU (lab.sh srv-limit)"
  ! mountpoint -q "$LAB/srv/srv" 2>/dev/null || echo "srv /srv: its own ext4 (lab.sh srv-disk)"
  if [ ! -f "$LAB/.up" ]; then
    echo "state $LAB: up not completed"
    rc=1
  fi
  if [ "$rc" = 0 ]; then echo "lab: UP"; else echo "lab: DOWN or incomplete"; fi
  return "$rc"
}

cmd_exec() {
  need_root
  [ $# -ge 1 ] || usage
  local h=$1
  shift
  valid_host "$h" || die "unknown host '$h' (${HOSTS[*]})"
  [ "${1:-}" != -- ] || shift
  [ $# -ge 1 ] || die "exec: no command"
  if ! [ -d "$LAB/$h/run" ] || ! ns_exists "$h"; then die "lab host $h is not up (lab.sh up)"; fi
  lab_exec "$h" "$@"
}

cmd_sshd() {
  need_root
  [ $# -eq 2 ] || usage
  local h=$1
  [[ " ${SSH_HOSTS[*]} " == *" $h "* ]] || die "sshd: host must be one of ${SSH_HOSTS[*]}"
  ns_exists "$h" || die "lab host $h is not up"
  lock
  case $2 in
    stop) sshd_stop "$h" ;;
    kill) sshd_kill "$h" ;;
    start)
      sshd_start "$h"
      sshd_wait "$h"
      ;;
    *) usage ;;
  esac
}

# dc crash: the DC's samba and every process it forked killed at once (SIGKILL, as a crash
# or a power cut would; its sshd goes too), for the tests of what provision does when the DC goes away; start: it
# runs again and answers LDAPS and Kerberos.
cmd_dc() {
  need_root
  [ $# -eq 1 ] || usage
  ns_exists dc || die "lab host dc is not up"
  lock
  case $1 in
    crash)
      local pids
      mapfile -t pids < <(ns_pids dc)
      [ ${#pids[@]} -eq 0 ] || kill -KILL "${pids[@]}" 2>/dev/null || true
      wait_for 15 dc_empty || die "processes left in dc: $(ns_pids dc)"
      ;;
    start)
      dc_start
      sshd_start dc
      dc_wait_ready
      sshd_wait dc
      ;;
    *) usage ;;
  esac
}

# srv-conf: the member's smb.conf made anew from the lab's base with the given [global]
# settings in place of the base's (a configuration variant of the tests: kerberos method,
# winbind use default domain, server signing...), then smbd and winbindd restarted if they run.
# A variant costs a restart, not a new lab. Registry shares and the membership are kept.
# srv's running winbindd and smbd restarted (CMD names the caller in errors); restarted
# daemons are new processes: back under the CPU limit, when one is set
srv_restart_daemons() { # CMD
  local unit
  for unit in winbindd smbd; do
    if lab_exec srv "$LAB/bin/lab-service" status "$unit" >/dev/null 2>&1; then
      lab_exec srv "$LAB/bin/lab-service" restart "$unit" >/dev/null || die "$1: $unit did not restart"
    fi
  done
  [ ! -f "$LAB/srv/cpu-limit" ] || cg_apply "$(cut -d' ' -f1 "$LAB/srv/cpu-limit")"
}

cmd_srv_conf() {
  need_root
  ns_exists srv || die "lab host srv is not up"
  lock
  local f=/etc/netns/pvlab-srv/samba/smb.conf kv conf
  conf=$(member_smb_conf)
  for kv in "$@"; do
    [[ $kv == *=* && ${kv%%=*} != "" ]] || die "srv-conf: expected KEY=VALUE, got '$kv'"
    # include = registry reads the registry's [global] where it stands, and the registry's
    # folder is set above it: it goes last (the base is [global] alone)
    if [ "${kv%%=*}" = include ]; then
      conf+=$'\n\t'"include = ${kv#*=}"
      continue
    fi
    conf=$(awk -v k="${kv%%=*}" -v v="${kv#*=}" '
      { line = $0; sub(/^[ \t]+/, "", line) }
      tolower(substr(line, 1, length(k) + 3)) == tolower(k " = ") { next }
      { print }
      $0 == "[global]" { print "\t" k " = " v }' <<<"$conf")
  done
  put "$f" 644 <<<"$conf"
  srv_restart_daemons srv-conf
  say "srv's smb.conf: the base${1:+ with $*}"
}

# ---------------------------------------------------------------- srv-limit
# srv's Samba daemons (smbd and everything it forks, winbindd, samba-dcerpcd and its rpcd_*)
# held to a share of one CPU with the kernel's CPU controller: a cgroup of the lab's, its
# quota PERCENT ms of CPU every 100 ms. cgroup v1 (cpu.cfs_quota_us) or, where the cpu
# controller is on a cgroup2 hierarchy, v2 (cpu.max). The daemons' processes are moved into
# it; what they fork later is born there. State: $LAB/srv/cpu-limit ("PERCENT KIND GROUP
# ORIGIN"); srv-conf, which restarts the daemons, moves the new ones in; down removes it.
CG_NAME=pvlab-srv

# "v1 MOUNT" or "v2 MOUNT" of the cpu controller, or nothing
cg_find() {
  local kind mnt opts m
  while read -r _ mnt kind opts _; do
    if [ "$kind" = cgroup ] && [[ ,$opts, == *,cpu,* ]] && [ -f "$mnt/cpu.cfs_quota_us" ]; then
      echo "v1 $mnt"
      return 0
    fi
  done </proc/self/mounts
  while read -r _ m kind _; do
    if [ "$kind" = cgroup2 ] && grep -qw cpu "$m/cgroup.controllers" 2>/dev/null; then
      echo "v2 $m"
      return 0
    fi
  done </proc/self/mounts
  return 1
}

# the Samba daemons of srv now: the masters, all they forked, and any by name in srv
srv_daemons() {
  local p c
  {
    for p in "$LAB/srv/pid/smbd.pid" "$LAB/srv/pid/winbindd.pid" "$LAB/srv/pid/samba-dcerpcd.pid"; do
      p=$(daemon_pid srv "$p")
      [ -z "$p" ] || { echo "$p" && descendants "$p"; }
    done
    for p in $(ns_pids srv); do
      read -r c 2>/dev/null <"/proc/$p/comm" || continue
      [[ $c =~ ^(smbd|winbindd|samba-dcerpcd|rpcd_.*|smbd-.*|samba-bgqd|cleanupd|notifyd|lpqd)$ ]] && echo "$p"
    done
  } | sort -un
}

# the cgroup (path within its hierarchy) of PID for the cpu controller
cg_of() { # KIND PID
  if [ "$1" = v1 ]; then
    awk -F: '$2 ~ /(^|,)cpu(,|$)/ { print $3; exit }' "/proc/$2/cgroup" 2>/dev/null
  else
    awk -F: '$1 == "0" { print $3; exit }' "/proc/$2/cgroup" 2>/dev/null
  fi
}

# move every daemon into DIR until none is left outside (a daemon may fork while it moves)
cg_move_all() { # KIND DIR
  local kind=$1 dir=$2 pass p moved n=0 want
  want=${dir#"$CG_MNT"}
  for ((pass = 0; pass < 5; pass++)); do
    moved=0
    for p in $(srv_daemons); do
      [ "$(cg_of "$kind" "$p")" != "${want:-/}" ] || continue
      if echo "$p" >"$dir/cgroup.procs" 2>/dev/null; then moved=$((moved + 1)); fi
    done
    n=$((n + moved))
    [ "$moved" -gt 0 ] || break
  done
  echo "$n"
}

# WHAT KIND MNT DIR PERCENT: the group DIR made (when missing) and held to PERCENT of one CPU
cg_quota() {
  local what=$1 kind=$2 mnt=$3 dir=$4 pct=$5
  [ -d "$dir" ] || mkdir "$dir" || die "$what: cannot make $dir"
  if [ "$kind" = v1 ]; then
    echo 100000 >"$dir/cpu.cfs_period_us"
    echo $((pct * 1000)) >"$dir/cpu.cfs_quota_us" || die "$what: $dir refused a quota of $((pct * 1000)) us"
  else
    grep -qw cpu "$mnt/cgroup.subtree_control" || echo +cpu >"$mnt/cgroup.subtree_control" ||
      die "$what: cannot enable the cpu controller under $mnt"
    echo "$((pct * 1000)) 100000" >"$dir/cpu.max" || die "$what: $dir refused cpu.max"
  fi
}

# WHAT STATE NAME: the group a state file ("PERCENT KIND DIR ORIGIN") names emptied back into
# ORIGIN and removed, the state file too; prints PERCENT
cg_release() {
  local what=$1 state=$2 name=$3 pct kind dir origin mnt p i
  read -r pct kind dir origin <"$state"
  mnt=${dir%"${origin%/}/$name"}
  if [ -d "$dir" ]; then
    for ((i = 0; i < 5; i++)); do
      while read -r p; do
        echo "$p" >"$mnt${origin%/}/cgroup.procs" 2>/dev/null || true
      done <"$dir/cgroup.procs"
      rmdir "$dir" 2>/dev/null && break
      sleep 0.2
    done
    [ ! -d "$dir" ] || die "$what: $dir still holds $(wc -l <"$dir/cgroup.procs") processes"
  fi
  rm -f "$state"
  echo "$pct"
}

cg_apply() { # PERCENT
  local pct=$1 kind mnt origin dir n left=() p
  read -r kind CG_MNT < <(cg_find) || die "srv-limit: no CPU controller (cgroup v1 cpu or v2 with cpu) is mounted"
  mnt=$CG_MNT
  [ -n "$(srv_daemons)" ] || die "srv-limit: no Samba daemon runs on srv (join it, or lab-service start samba there, first)"
  if [ -f "$LAB/srv/cpu-limit" ]; then
    read -r _ _ dir origin <"$LAB/srv/cpu-limit"
  else
    # v1: beside where smbd was; v2: at the root (a cgroup2 with processes cannot give its
    # children a controller)
    origin=/
    [ "$kind" = v2 ] || origin=$(cg_of v1 "$(srv_daemons | head -1)")
    dir=$mnt${origin%/}/$CG_NAME
  fi
  cg_quota srv-limit "$kind" "$mnt" "$dir" "$pct"
  printf '%s %s %s %s\n' "$pct" "$kind" "$dir" "$origin" >"$LAB/srv/cpu-limit"
  n=$(cg_move_all "$kind" "$dir")
  for p in $(srv_daemons); do
    [ "$(cg_of "$kind" "$p")" = "${dir#"$mnt"}" ] || left+=("$p")
  done
  [ ${#left[@]} -eq 0 ] || die "srv-limit: pids not in $dir: ${left[*]}"
  say "srv's Samba daemons held to $pct% of one CPU (cgroup $kind $dir; $(srv_daemons | wc -l) processes, $n moved)"
}

# back where they came from, the group removed
cg_off() {
  local pct
  [ -f "$LAB/srv/cpu-limit" ] || { cg_remove_default; return 0; }
  pct=$(cg_release srv-limit "$LAB/srv/cpu-limit" "$CG_NAME") || exit 1
  say "srv's Samba daemons: no CPU limit (was $pct%)"
}

# a group of ours left where a lost state file would have named it
cg_remove_default() {
  local kind mnt p
  read -r kind mnt < <(cg_find) || return 0
  [ -d "$mnt/$CG_NAME" ] || return 0
  while read -r p; do echo "$p" >"$mnt/cgroup.procs" 2>/dev/null || true; done <"$mnt/$CG_NAME/cgroup.procs"
  rmdir "$mnt/$CG_NAME" 2>/dev/null || say "warning: cannot remove $mnt/$CG_NAME"
}

cmd_srv_limit() {
  need_root
  [ $# -eq 1 ] || usage
  case $1 in
    off)
      lock
      cg_off
      ;;
    status)
      if [ -f "$LAB/srv/cpu-limit" ]; then
        local pct kind dir origin
        read -r pct kind dir origin <"$LAB/srv/cpu-limit"
        echo "srv cpu limit: $pct% of one CPU, cgroup $kind $dir, $(wc -l <"$dir/cgroup.procs" 2>/dev/null || echo 0) processes"
      else
        echo "srv cpu limit: none"
      fi
      ;;
    *)
      [[ $1 =~ ^[1-9][0-9]*$ ]] && (($1 <= 100 * $(nproc))) ||
        die "srv-limit: PERCENT must be a whole number from 1 to $((100 * $(nproc))) (of one CPU), or off, or status"
      ns_exists srv || die "lab host srv is not up"
      lock
      cg_apply "$1"
      ;;
  esac
}

# ---------------------------------------------------------------- srv-disk
# srv's /srv (its shares and the users' trees) on a file system of its own, as a file server's
# data disk: a sparse image $LAB/srv/disk.img (SRV_DISK_SIZE, default 16G) formatted ext4 with
# its journal, loop-mounted on $LAB/srv/srv, the folder lab_exec binds as srv's /srv. Without
# it /srv is a folder of this machine's root file system, which is ext4 without a journal;
# there the kernel skips, for every new inode, each inode freed in the last 60 s (300 s while
# its inode table block is dirty), reading it to see when it was freed (fs/ext4/ialloc.c,
# recently_deleted). A tree build right after a cleanup then spends most of srv's CPU there
# (docs/bench.md, "srv's disk"). srv's sshd and its running Samba daemons are restarted so that
# they see the new /srv; the sessions open now keep the old one. ext4 and off want /srv empty:
# nothing the lab holds is hidden or lost.
srv_disk_umount() {
  mountpoint -q "$LAB/srv/srv" 2>/dev/null || return 0
  umount "$LAB/srv/srv" 2>/dev/null || umount -l "$LAB/srv/srv"
}

srv_disk_restart() {
  sshd_stop srv
  sshd_start srv
  sshd_wait srv
  srv_restart_daemons srv-disk
  # what smbd and winbindd started on demand (samba-dcerpcd, its rpcd_*) in the old /srv goes
  # too (they are started again when asked); the old disk is let go with the last of them
  local dev p old=()
  dev=$(stat -c %d "$LAB/srv/srv")
  for p in $(srv_daemons); do
    [ "$(stat -c %d "/proc/$p/root/srv" 2>/dev/null)" = "$dev" ] || old+=("$p")
  done
  [ ${#old[@]} -eq 0 ] || kill_wait "${old[@]}" || true
}

srv_disk_empty() { # what /srv holds besides lost+found, or nothing
  find "$LAB/srv/srv" -mindepth 1 -maxdepth 1 ! -name lost+found -printf '%f ' | head -c 200
}

cmd_srv_disk() {
  need_root
  [ $# -eq 1 ] || usage
  local d=$LAB/srv/srv img=$LAB/srv/disk.img held
  case $1 in
    status)
      if mountpoint -q "$d" 2>/dev/null; then
        echo "srv /srv: its own ext4 ($img, $(df -h --output=used,size "$d" | tail -1 | awk '{ print $1 " of " $2 }') used)"
      else
        echo "srv /srv: a folder of this machine's root file system ($d)"
      fi
      return 0
      ;;
    ext4 | off) ;;
    *) usage ;;
  esac
  ns_exists srv || die "lab host srv is not up"
  lock
  held=$(srv_disk_empty)
  if [ "$1" = ext4 ]; then
    if mountpoint -q "$d"; then
      say "srv's /srv: already its own ext4"
      return 0
    fi
    [ -z "$held" ] || die "srv-disk: srv's /srv holds $held; clean the lab's server up first (provision ... cleanup server), so that nothing is hidden under the new disk"
    command -v mkfs.ext4 >/dev/null || die "srv-disk: mkfs.ext4 is missing (apt-get install e2fsprogs)"
    rm -f "$img"
    truncate -s "${SRV_DISK_SIZE:-16G}" "$img" || die "srv-disk: cannot make $img (SRV_DISK_SIZE '${SRV_DISK_SIZE:-16G}')"
    # the inode tables written now, not by ext4lazyinit while a benchmark runs
    mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$img" ||
      { rm -f "$img"; die "srv-disk: mkfs.ext4 failed on $img"; }
    mount -o loop "$img" "$d" ||
      { rm -f "$img"; die "srv-disk: cannot loop-mount $img on $d (no loop device? modprobe loop)"; }
    srv_disk_restart
    say "srv's /srv: its own ext4 with a journal ($img, ${SRV_DISK_SIZE:-16G} sparse)"
  else
    mountpoint -q "$d" || { say "srv's /srv: already on the root file system"; return 0; }
    [ -z "$held" ] || die "srv-disk: srv's /srv holds $held; clean the lab's server up first (provision ... cleanup server), or it is lost with the disk"
    srv_disk_umount || die "srv-disk: cannot unmount $d"
    rm -f "$img"
    srv_disk_restart
    say "srv's /srv: back on this machine's root file system"
  fi
}

# ---------------------------------------------------------------- cli-limit
# A client's sshd and everything it forks (the sessions `run` opens there, so `provision load`)
# held to a share of one CPU with the same CPU controller as srv-limit: a client made the limit
# on purpose, for the tests that it is never credited to the server. The sshd and what runs
# below it now are moved in; what its sessions start later is born there. State:
# $LAB/HOST/cpu-limit ("PERCENT KIND GROUP ORIGIN"); down removes it.
cli_pids() { # HOST: its sshd and every process below it
  local p
  p=$(sshd_pid "$1")
  [ -z "$p" ] || { echo "$p" && descendants "$p"; }
}

cli_limit_apply() { # HOST PERCENT
  local h=$1 pct=$2 kind mnt origin dir p pass
  read -r kind mnt < <(cg_find) || die "cli-limit: no CPU controller (cgroup v1 cpu or v2 with cpu) is mounted"
  [ -n "$(sshd_pid "$h")" ] || die "cli-limit: no sshd runs on $h"
  if [ -f "$LAB/$h/cpu-limit" ]; then
    read -r _ _ dir origin <"$LAB/$h/cpu-limit"
  else
    origin=/
    [ "$kind" = v2 ] || origin=$(cg_of v1 "$(sshd_pid "$h")")
    dir=$mnt${origin%/}/pvlab-$h
  fi
  cg_quota cli-limit "$kind" "$mnt" "$dir" "$pct"
  printf '%s %s %s %s\n' "$pct" "$kind" "$dir" "$origin" >"$LAB/$h/cpu-limit"
  for ((pass = 0; pass < 3; pass++)); do
    for p in $(cli_pids "$h"); do echo "$p" >"$dir/cgroup.procs" 2>/dev/null || true; done
  done
  say "$h's sshd and its sessions held to $pct% of one CPU (cgroup $kind $dir)"
}

cli_limit_off() { # HOST
  local h=$1 pct
  [ -f "$LAB/$h/cpu-limit" ] || return 0
  pct=$(cg_release cli-limit "$LAB/$h/cpu-limit" "pvlab-$h") || exit 1
  say "$h: no CPU limit (was $pct%)"
}

cmd_cli_limit() {
  need_root
  [ $# -eq 2 ] || usage
  [[ " ${CLIENT_HOSTS[*]} " == *" $1 "* ]] || die "cli-limit: host must be one of ${CLIENT_HOSTS[*]}"
  case $2 in
    off)
      lock
      cli_limit_off "$1"
      ;;
    *)
      [[ $2 =~ ^[1-9][0-9]*$ ]] && (($2 <= 100 * $(nproc))) ||
        die "cli-limit: PERCENT must be a whole number from 1 to $((100 * $(nproc))) (of one CPU), or off"
      ns_exists "$1" || die "lab host $1 is not up"
      lock
      cli_limit_apply "$1" "$2"
      ;;
  esac
}

# ---------------------------------------------------------------- selfcheck
SC_BAD=0
check() { # NAME CMD...
  local name=$1 out
  shift
  if out=$("$@" 2>&1); then
    printf 'ok   %s\n' "$name"
  else
    printf 'FAIL %s\n' "$name"
    printf '%s\n' "$out" | tail -n 5 | sed 's/^/       /'
    SC_BAD=$((SC_BAD + 1))
  fi
}

sc_dig() { # TYPE NAME EXPECT-REGEX
  local ans
  ans=$(ns_exec ctl dig +short +time=2 +tries=1 "@${IP[dc]}" "$2" "$1")
  printf '%s\n' "$ans"
  grep -Eq "$3" <<<"$ans"
}
sc_no_route() {
  local h
  for h in "${HOSTS[@]}"; do [ -z "$(ip -n "pvlab-$h" route show default)" ] || return 1; done
}
sc_no_forwarder() { ! grep -qi 'dns forwarder' "$LAB/dc/etc/smb.conf"; }
sc_hostname() { [ "$(lab_exec "$1" hostname)" = "$1" ]; }
sc_ldaps() {
  lab_exec ctl ldapsearch -x -o nettimeout=5 -H "ldaps://$DCNAME" -D "Administrator@$DNSDOM" \
    -y "$LAB/admin.pass" -b "$BASEDN" -s base -LLL dn | grep -qi "^dn: $BASEDN"
}
sc_ldaps_ip_refused() { ! lab_exec ctl ldapsearch -x -o nettimeout=5 -H "ldaps://${IP[dc]}" -b '' -s base -LLL; }
sc_gssapi() {
  lab_exec ctl env KRB5CCNAME="FILE:$LAB/cc/ctl.selfcheck" ldapsearch -Q -Y GSSAPI \
    -o nettimeout=5 -H "ldap://$DCNAME" -b "$BASEDN" -s base -LLL dn | grep -qi "^dn: $BASEDN"
}
sc_ssh() { # HOST
  [ "$(lab_exec ctl ssh -F "$LAB/ssh/ssh_config" "$1" hostname </dev/null)" = "$1" ]
}
sc_ssh_srv_env() {
  local out
  out=$(lab_exec ctl ssh -F "$LAB/ssh/ssh_config" srv \
    'testparm -s 2>/dev/null | grep -E "^\s*(realm|security|workgroup) ="; klist -V >/dev/null;
     [ "$(stat -c %d:%i /run/samba)" = "$(stat -c %d:%i "$PROVISION_LAB_DIR/srv/run")" ] && echo private-run-samba' </dev/null)
  printf '%s\n' "$out"
  grep -q 'realm = LAB.TEST' <<<"$out" && grep -q 'security = ADS' <<<"$out" &&
    grep -q private-run-samba <<<"$out"
}
sc_ssh_srv_kinit() {
  lab_exec ctl ssh -F "$LAB/ssh/ssh_config" srv \
    'KRB5CCNAME=FILE:$PROVISION_LAB_DIR/cc/srv.selfcheck; export KRB5CCNAME; kinit Administrator && klist | grep -q "krbtgt/LAB.TEST@LAB.TEST"; rc=$?; kdestroy -q; exit $rc' \
    <"$LAB/admin.pass"
}

cmd_selfcheck() {
  need_root
  local port h
  for port in 389 636 88 445 53; do check "tcp $port dc from cli1" tcp_ok cli1 "${IP[dc]}" "$port"; done
  check "DNS A srv.$DNSDOM = ${IP[srv]}" sc_dig A "srv.$DNSDOM" "^${IP[srv]//./\\.}\$"
  check "DNS A ctl.$DNSDOM = ${IP[ctl]}" sc_dig A "ctl.$DNSDOM" "^${IP[ctl]//./\\.}\$"
  check "DNS SRV _ldap._tcp.$DNSDOM" sc_dig SRV "_ldap._tcp.$DNSDOM" "389 dc\\.$DNSDOM\\.?$"
  check "DC has no dns forwarder" sc_no_forwarder
  check "no default route in the namespaces" sc_no_route
  check "hostname = host (exec cli1)" sc_hostname cli1
  check "LDAPS simple bind, CA verified (ctl)" sc_ldaps
  check "LDAPS by IP refused (no SAN)" sc_ldaps_ip_refused
  check "kinit Administrator, password on stdin (ctl)" kinit_admin ctl "FILE:$LAB/cc/ctl.selfcheck"
  check "SASL/GSSAPI ldapsearch (ctl)" sc_gssapi
  rm -f "$LAB/cc/ctl.selfcheck"
  for h in "${SSH_HOSTS[@]}"; do check "ssh ctl -> $h" sc_ssh "$h"; done
  check "ssh srv: member smb.conf, private /run/samba" sc_ssh_srv_env
  check "ssh srv: kinit finds the lab realm" sc_ssh_srv_kinit
  if [ "$SC_BAD" = 0 ]; then echo "selfcheck: all ok"; else echo "selfcheck: $SC_BAD FAILED"; fi
  [ "$SC_BAD" = 0 ]
}

# ---------------------------------------------------------------- capture
# capture HOST start FILE: tcpdump in HOST's namespace, every packet of TCP port 445 into FILE,
# whole (-s 0), with a kernel buffer of 128 MiB in which packets take the room they need
# (libpcap's TPACKET_V3, what it uses unless asked for --immediate-mode: that one gives each
# packet a slot of the snapshot length, 256 KiB, so the buffer held about 500 packets and a
# burst of smbtorture's, 110,000 in 3 s, was dropped in part); written buffered, not packet by
# packet (-U), so that tcpdump keeps up. Returns once it listens, its pid in
# $LAB/HOST/capture.pid. capture HOST stop: the packets' last block handed over first (libpcap
# hands one over when it is full or after a second), then SIGINT, its end waited for, its
# counts said; exit 1 when the kernel dropped packets (the capture is not whole).
cmd_capture() {
  local h=${1:-} act=${2:-} f pid i dropped
  valid_host "$h" || usage
  f=$LAB/$h/capture
  case $act in
    start)
      [ -n "${3:-}" ] || usage
      [ ! -f "$f.pid" ] || ! kill -0 "$(cat "$f.pid")" 2>/dev/null ||
        die "a capture runs on $h already: lab.sh capture $h stop"
      : >"$f.err"
      # a simple command, not ns_exec: its pid is tcpdump's (ip execs it), which SIGINT reaches
      ip netns exec "$(ns "$h")" tcpdump -i eth0 -B 131072 -Z root -s 0 \
        -w "$3" 'tcp port 445' </dev/null >/dev/null 2>"$f.err" 9<&- &
      pid=$!
      echo "$pid" >"$f.pid"
      for i in $(seq 200); do
        grep -q "listening on" "$f.err" && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      kill "$pid" 2>/dev/null || true
      rm -f "$f.pid"
      die "tcpdump on $h did not start listening: $(tail -n 2 "$f.err" | tr '\n' ' ')"
      ;;
    stop)
      [ -f "$f.pid" ] || die "no capture runs on $h (lab.sh capture $h start FILE)"
      pid=$(cat "$f.pid")
      rm -f "$f.pid"
      sleep 1.5 # the last block of packets handed to tcpdump (after a second at most)
      kill -INT "$pid" 2>/dev/null || true
      for i in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      ! kill -0 "$pid" 2>/dev/null || die "tcpdump on $h (pid $pid) still runs 20 s after SIGINT"
      grep -E "packets (captured|received|dropped)" "$f.err" | sed 's/^/tcpdump: /' >&2
      dropped=$(sed -n 's/^\([0-9]*\) packets dropped by kernel.*/\1/p' "$f.err")
      [ "$dropped" = 0 ] ||
        die "tcpdump on $h: ${dropped:-an unknown number of} packets dropped by the kernel: the capture is not whole"
      ;;
    *) usage ;;
  esac
}

# ---------------------------------------------------------------- main
[ $# -ge 1 ] || usage
cmd=$1
shift
case $cmd in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  selfcheck) cmd_selfcheck ;;
  exec) cmd_exec "$@" ;;
  sshd) cmd_sshd "$@" ;;
  dc) cmd_dc "$@" ;;
  srv-conf) cmd_srv_conf "$@" ;;
  srv-limit) cmd_srv_limit "$@" ;;
  cli-limit) cmd_cli_limit "$@" ;;
  srv-disk) cmd_srv_disk "$@" ;;
  repl) cmd_repl "$@" ;;
  capture) cmd_capture "$@" ;;
  -h | --help | help) usage ;;
  *) usage ;;
esac
