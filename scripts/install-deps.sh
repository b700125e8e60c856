#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Install what sluice needs to build, test and demo on Debian 12.
# Idempotent: skips apt when everything is already there. Needs root.
set -euo pipefail
PKGS=(build-essential pkg-config meson ninja-build clang libclang-rt-14-dev
      dpdk dpdk-dev libdpdk-dev libnuma-dev libpcap-dev libbenchmark-dev
      libcmocka-dev libssl-dev python3 python3-scapy python3-matplotlib
      tshark iperf3 irtt mptcpize ethtool iproute2 iputils-ping tcpreplay
      valgrind linux-perf procps systemd prometheus tmux)
missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: everything is installed" >&2
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing packages: ${missing[*]}; run as root" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer no.
echo "wireshark-common wireshark-common/install-setuid boolean false" |
	debconf-set-selections 2>/dev/null || true
echo "install-deps: installing ${missing[*]}" >&2
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
