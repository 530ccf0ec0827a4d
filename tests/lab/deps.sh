#!/usr/bin/env bash
# tests/lab/deps.sh: install every Debian package that the build, the tests and the lab need.
# Quiet and quick (one dpkg-query) when they are all present. Run as root.
set -euo pipefail

pkgs=(
	# build
	gcc make pkg-config libldap-dev libkrb5-dev libsasl2-dev libsmbclient-dev libssh-dev
	libyaml-dev libjansson-dev check shellcheck
	# provision learn: captures read with libpcap
	libpcap-dev
	# the unit tests' golden digests (SHA-256)
	nettle-dev
	# fuzzing (make fuzz, make fuzz-replay): clang with libFuzzer and its sanitizer runtimes
	clang-14 libclang-rt-14-dev
	# runtime of the tool
	libsasl2-modules-gssapi-mit krb5-user
	# the lab and the integration tests' independent checks
	samba samba-ad-provision smbclient winbind libnss-winbind python3-samba samba-dsdb-modules
	samba-vfs-modules ldap-utils openssh-server openssh-client iproute2 bind9-dnsutils
	openssl attr acl time procps util-linux
	# t_learn: the learned workload read as YAML by another parser than ours
	python3-yaml
	# the benchmarks' reference tools (bench/load.sh: smbtorture)
	samba-testsuite
	# captures on the lab (tcpdump in srv's namespace) and their independent decoding (tshark,
	# the oracle of provision learn's counts)
	tcpdump tshark
	# make docs-check: the man page rendered (man -l, groff), plain text for the checks (col)
	man-db groff-base bsdextrautils
	# report.html and compare --html checked in a real browser (t_report: headless chromium)
	chromium
)

declare -A have=()
while read -r name st; do
	[[ $st == installed ]] && have[${name%%:*}]=1
done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${pkgs[@]}" 2>/dev/null || true)
missing=()
for p in "${pkgs[@]}"; do
	[[ -n ${have[$p]:-} ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
	echo "deps: missing packages: ${missing[*]}; run 'make deps' as root" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# Packages must not start daemons in the root namespace: the lab starts its own.
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod 0755 /usr/sbin/policy-rc.d
	trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
