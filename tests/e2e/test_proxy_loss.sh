#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The transparent TCP proxy under loss from the impair stage (issue 6):
# 1% random loss, 5% random loss, Gilbert-Elliott bursty loss
# (ge_p = 1%, ge_r = 25%, ge_loss_bad = 50%: Bad spells of 4 packets on
# average that lose half their packets, 1.9% in all), and 1% loss with
# 2% of the packets duplicated and 2% held back 5 ms, on both directions
# of pair 0, with [proxy] intercept = 0.0.0.0/0, ::/0. The impair stage is
# the last one, so it drops what the proxy sends: the data and ACKs of the
# server leg going up, of the client leg going down. Each setting carries
# E2E_LOSS_MB (8) MB up and down, over IPv4 and (at 1% loss) IPv6, and
# down once more with the client's FIN sent first (its request ended in
# shutdown()), between the kernel's TCP on both sides, with sha256 compared
# (tests/e2e/stream_peer.py); the impair counters must show losses in
# both directions, and during each transfer the proxy engine must have
# retransmitted at least as many segments as were dropped in the data's
# direction. The same transfers through the plain bridge (kernel
# TCP end to end, same loss) are printed beside them, not asserted.
#
# Why ge_loss_bad is 50% and not 100%: the Gilbert-Elliott chain moves
# once per packet, so when a loss leaves only retransmissions crossing a
# direction, a Bad spell lasts for as many retransmissions, and with 100%
# loss in it a loss-based sender (CUBIC, the proxy's and the kernel's
# alike) backs its RTO off again and again: 8 MB took 5 to 49 s through
# the proxy and 12 to over 40 s kernel to kernel. E2E_GE_LOSS_BAD=100%
# runs that case.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_xfer.sh"
E2E_TEST=proxy_loss
PEER=$E2E_DIR/stream_peer.py
MB=${E2E_LOSS_MB:-8}
GE_LOSS_BAD=${E2E_GE_LOSS_BAD:-50%}
SIZE=$((MB * 1000000))

e2e_require_tools
e2e_setup
# The peers set CUBIC on each socket (STREAM_PEER_CC in stream_peer.py):
# a namespace may not pick it when the host only allows others (bbr here).

proxy_cnt() { e2e_tel /sluice/proxy "$1"; }
# Frames the impair stage dropped so far in one direction of pair 0.
impair_lost_now() { # up|down
	e2e_tel /sluice/impair | "$E2E_PY" -c 'import json, sys
d = json.load(sys.stdin)["pair0_" + sys.argv[1]]
print(d["lost_random"] + d["lost_ge"])' "$1"
}

# xfer up|down HOST PORT: SIZE bytes, sha256 compared. Sets XFER_MBPS
# (timed at the client, connect() to the server's FIN). Through the
# proxy, the impair stage must have dropped frames in the data's
# direction (all sent by the proxy: the server leg's going up, the client
# leg's going down), and the engine must have retransmitted at least as
# many segments as that, but for 3 (a lost handshake or FIN ACK is not
# resent). Nothing lost gives a few retransmissions too (tail loss probes),
# so "it grew" alone would prove little.
PROXIED=0
xfer() {
	local dir=$1 to=$((PROXIED ? 60 : 30)) rtx0=0 rtx1 lost0=0 lost ldir=${1%-shut}
	XFER_MBPS= XFER_RTX=
	if [ $PROXIED = 1 ]; then
		rtx0=$(proxy_cnt tcp_retransmits) lost0=$(impair_lost_now "$ldir")
	fi
	stream_xfer "$dir" "$2" "$SIZE" "$3" $to || return 1
	XFER_MBPS=$(stream_mbps "$SIZE" "$XFER_SECS")
	E2E_WHY="$MB MB in $XFER_SECS s, $XFER_MBPS Mbit/s, sha256 equal"
	if [ $PROXIED = 1 ]; then
		rtx1=$(proxy_cnt tcp_retransmits)
		lost=$(( $(impair_lost_now "$ldir") - lost0 ))
		XFER_RTX=$((rtx1 - rtx0))
		if [ "$lost" -le 0 ] || [ "$XFER_RTX" -lt $((lost - 3)) ]; then
			E2E_WHY="$E2E_WHY, but impair dropped $lost frames going $ldir and the proxy retransmitted $XFER_RTX segments"
			return 1
		fi
		E2E_WHY="$E2E_WHY, $lost frames dropped going $ldir, $XFER_RTX retransmitted by the proxy"
	fi
	return 0
}

# After sluice stopped: both directions of pair 0 lost packets, by the
# reason this setting uses.
impair_lost() { # counter (lost_random | lost_ge)
	local d in lost out=
	for d in up down; do
		in=$(e2e_final "impair dir=$d pair=0" in)
		lost=$(e2e_final "impair dir=$d pair=0" "$1")
		if [ -z "$lost" ] || [ "$lost" -le 0 ] 2>/dev/null; then
			E2E_WHY="impair dir=$d: $1=${lost:-?} of in=${in:-?}, want > 0"
			return 1
		fi
		out="$out $d $1=$lost/$in ($(awk -v l="$lost" -v i="$in" 'BEGIN { printf "%.1f%%", 100 * l / i }'))"
	done
	E2E_WHY="exit 0, mempool at baseline,$out"
}

# setting NAME IMPAIR-KEYS...: the transfers through the proxy, then the
# same through the plain bridge, with the same loss.
port=7400
setting() {
	local name=$1 counter=$2; shift 2
	local cfg=$E2E_TMP/$name.ini bcfg=$E2E_TMP/$name-bridge.ini k up_p down_p up_b down_b
	{
		echo "[impair]"
		echo "seed = 6"
		echo "[impair.pair0]"
		for k in "$@"; do echo "$k"; done
	} >"$bcfg"
	{ cat "$bcfg"; echo "[proxy]"; echo "intercept = 0.0.0.0/0, ::/0"; } >"$cfg"

	PROXIED=1
	e2e_start_sluice "$cfg" || { e2e_fail "proxy_loss_$name" "sluice start: $E2E_WHY"; return; }
	e2e_check "proxy_loss_${name}_up" xfer up "$SRV4" $port; up_p=$XFER_MBPS; port=$((port + 1))
	e2e_check "proxy_loss_${name}_down" xfer down "$SRV4" $port; down_p=$XFER_MBPS; port=$((port + 1))
	if [ "$name" = loss1 ]; then
		e2e_check "proxy_loss_${name}_up_ipv6" xfer up "$SRV6" $port; port=$((port + 1))
		e2e_check "proxy_loss_${name}_down_ipv6" xfer down "$SRV6" $port; port=$((port + 1))
	fi
	# The client's FIN first, then the server's bytes and FIN: the
	# server leg ends in order (both FINs) while the slower client leg
	# still owes the client the tail it holds.
	e2e_check "proxy_loss_${name}_down_after_the_clients_fin" xfer down-shut "$SRV4" $port
	port=$((port + 1))
	if e2e_stop_sluice && impair_lost "$counter"; then
		e2e_pass "proxy_loss_${name}_impaired" "$E2E_WHY"
	else
		e2e_fail "proxy_loss_${name}_impaired" "$E2E_WHY"
	fi

	PROXIED=0
	e2e_start_sluice "$bcfg" || { e2e_fail "bridge_loss_$name" "sluice start: $E2E_WHY"; return; }
	xfer up "$SRV4" $port && up_b=$XFER_MBPS || up_b="failed: $E2E_WHY"; port=$((port + 1))
	xfer down "$SRV4" $port && down_b=$XFER_MBPS || down_b="failed: $E2E_WHY"; port=$((port + 1))
	e2e_stop_sluice || e2e_fail "bridge_loss_${name}_clean_exit" "$E2E_WHY"
	e2e_pass "proxy_loss_${name}_goodput" "$*: proxy up ${up_p:-?} down ${down_p:-?} Mbit/s; bridged (kernel TCP end to end) up $up_b down $down_b Mbit/s"
}

setting loss1 lost_random "loss = 1%"
setting loss5 lost_random "loss = 5%"
setting ge lost_ge "ge_p = 1%" "ge_r = 25%" "ge_loss_bad = $GE_LOSS_BAD"
# Duplicates and reordering beside 1% loss: duplicate ACKs and segments
# that arrive out of order without being lost (the engine must neither
# deliver a byte twice nor take reordering for loss for good: RACK and
# D-SACK undo).
setting dup_reorder lost_random "loss = 1%" "duplicate = 2%" "reorder = 2%" "reorder_gap = 5ms"
e2e_finish
