#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# ICMP echo over IPv4 and IPv6 through a bridging sluice: no loss, then a
# clean SIGTERM exit with every mbuf returned and nothing dropped on tx.
set -u
. "$(dirname "$0")/lib.sh"
E2E_TEST=ping
COUNT=${E2E_PING_COUNT:-20}
INTERVAL=${E2E_PING_INTERVAL:-0.05}

e2e_require_tools
e2e_setup
e2e_start_sluice "" || e2e_die "sluice start: $E2E_WHY"

if e2e_ping 4 "$COUNT" "$INTERVAL"; then
	e2e_pass ping_ipv4 "$COUNT echoes, rtt min/avg/max $E2E_RTT ms"
else
	e2e_fail ping_ipv4 "$E2E_WHY"
fi
if e2e_ping 6 "$COUNT" "$INTERVAL"; then
	e2e_pass ping_ipv6 "$COUNT echoes, rtt min/avg/max $E2E_RTT ms"
else
	e2e_fail ping_ipv6 "$E2E_WHY"
fi

check_exit() {
	e2e_stop_sluice || return 1
	local p0rx p1tx txd
	txd=$(e2e_final totals tx_dropped)
	p0rx=$(e2e_final "port 0" rx)
	p1tx=$(e2e_final "port 1" tx)
	if [ -z "$txd" ] || [ "$txd" != 0 ]; then
		E2E_WHY="totals tx_dropped=${txd:-missing}, want 0"; return 1
	fi
	# 2 x COUNT echo requests (plus warm-up, ARP, ND) crossed port 0 -> 1.
	if [ -z "$p0rx" ] || [ "$p0rx" -lt $((2 * COUNT)) ] || [ "$p0rx" != "$p1tx" ]; then
		E2E_WHY="port 0 rx=${p0rx:-?} port 1 tx=${p1tx:-?}: want equal and >= $((2 * COUNT))"
		return 1
	fi
	E2E_WHY="port 0 rx=$p0rx = port 1 tx"
	return 0
}
if check_exit; then
	e2e_pass ping_clean_exit "exit 0, mempool at baseline, tx_dropped=0, $E2E_WHY"
else
	e2e_fail ping_clean_exit "$E2E_WHY"
fi
e2e_finish
