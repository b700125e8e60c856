#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Frames that net_af_packet leaves in its TX ring ([sluice] tx_kick_us).
#
# The driver copies a tx burst into the port's TX ring and asks the kernel
# to send it once per burst. Where sluice's frames pass a qdisc
# (qdisc_bypass=0; here TBF at 20 and 30 Mbit/s on the client-facing veths
# of the two-path topology, as perf/bench.sh mptcp shapes them), the kernel
# stops at a full socket send buffer, about 92 full-size frames held in the
# qdisc, and leaves the rest in the ring for the next burst. At the end of
# a download there is no next burst: sluice terminating MPTCP held the
# last frames of every such download for 120-180 ms, until a timer sent
# something. Two runs of the same shaped MPTCP download through
# config/examples/mptcp-proxy.ini:
#
#   txkick_off_strands_the_end_of_a_shaped_download
#            [sluice] tx_kick_us = 0: the client's longest wait between
#            two reads is 0.05 s or more, in one of up to four downloads.
#            This shows that the check below can fail.
#   txkick_sends_the_end_of_a_shaped_download
#            the default (100 us): under 0.05 s, and the exit report counts
#            tx_kicked on a port.
set -u
. "$(dirname "$0")/mptcp_lib.sh"
E2E_TEST=txkick
ROOT=$(cd "$E2E_DIR/../.." && pwd)
PROXY_CONF=$ROOT/config/examples/mptcp-proxy.ini
SECS=${E2E_TXKICK_SECS:-2}      # of 50 Mbit/s: the download's size
STALL=0.05                      # seconds: seen 0.072-0.172 off, 0.004-0.016 on
TRIES=${E2E_TXKICK_TRIES:-4}    # downloads with the kicks off, until one stalls
PORT=7600

e2e_require_tools tc
E2E_AFP_ARGS=framecnt=4096,qdisc_bypass=0
mptcp_setup
if ! mptcp_proxy_supported; then
	for n in off_strands sends; do
		e2e_skip "txkick_${n}_the_end_of_a_shaped_download" "this sluice has no [proxy] mptcp key"
	done
	e2e_finish
fi
SIZE=$((SECS * 50000000 / 8))

# shaped_download CONFIG: sluice with CONFIG, TBF on both client-facing
# veths, one download; sets GAP (the client's longest wait between two
# reads, seconds) and KICKED (tx_kicked summed over the ports).
shaped_download() {
	local p
	GAP="" KICKED=0
	e2e_start_sluice "$1" || { E2E_WHY="sluice start: $E2E_WHY"; return 1; }
	mptcp_warmup || return 1
	mptcp_shape "$SUB_IF" 20mbit
	mptcp_shape "$SUB1_IF" 30mbit
	PORT=$((PORT + 1))
	if ! mptcp_xfer down "$SRV4" "$SIZE" "$PORT" 60; then
		mptcp_unshape "$SUB_IF"; mptcp_unshape "$SUB1_IF"
		e2e_stop_sluice
		return 1
	fi
	mptcp_unshape "$SUB_IF"
	mptcp_unshape "$SUB1_IF"
	e2e_stop_sluice || return 1
	GAP=$(mptcp_kv "$XFER_CLI" gap)
	for p in 0 1 2 3; do
		KICKED=$((KICKED + $(e2e_final "port $p" tx_kicked)))
	done
	E2E_WHY="$SIZE bytes in $XFER_SECS s, $(mptcp_kv "$XFER_CLI" subflows) subflows, longest wait between reads $GAP s, tx_kicked=$KICKED"
}

# slower GAP: whether GAP >= STALL.
slower() { "$E2E_PY" -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)' "$1" "$STALL"; }

# The stall needs the download's last burst to find the qdisc's share
# full, which most downloads do but not all (one CI run of 2 s read a
# longest wait of 0.009 s with the kicks off): up to TRIES downloads, and
# the first that stalls passes.
kick_off() {
	local conf=$E2E_TMP/txkick-off.ini try gaps=
	{ echo "[sluice]"; echo "tx_kick_us = 0"; sed '/^\[sluice\]/d' "$PROXY_CONF"; } >"$conf"
	grep -q '^\[sluice\]' "$PROXY_CONF" && { E2E_WHY="$PROXY_CONF has a [sluice] section: merge it"; return 1; }
	for try in $(seq 1 "$TRIES"); do
		shaped_download "$conf" || return 1
		[ "$KICKED" = 0 ] || { E2E_WHY="$E2E_WHY: want 0 with the kicks off"; return 1; }
		gaps=${gaps:+$gaps, }$GAP
		if slower "$GAP"; then
			E2E_WHY="$E2E_WHY; try $try of $TRIES, longest waits $gaps s"
			return 0
		fi
	done
	E2E_WHY="$E2E_WHY: want >= $STALL s with the kicks off in one of $TRIES downloads, longest waits $gaps s"
	return 1
}

kick_on() {
	shaped_download "$PROXY_CONF" || return 1
	! slower "$GAP" || { E2E_WHY="$E2E_WHY: want under $STALL s"; return 1; }
	[ "$KICKED" -gt 0 ] || { E2E_WHY="$E2E_WHY: want tx_kicked > 0"; return 1; }
}

e2e_check txkick_off_strands_the_end_of_a_shaped_download kick_off
e2e_check txkick_sends_the_end_of_a_shaped_download kick_on
e2e_finish
