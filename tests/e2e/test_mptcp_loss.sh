#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# e2e-timeout: 600
#
# MPTCP termination on paths that lose, duplicate and reorder: the
# kernel's MPTCP client over the two paths of tests/e2e/mptcp_lib.sh,
# sluice terminating it ([proxy] mptcp = on, as
# config/examples/mptcp-proxy.ini), the server's kernel speaking plain TCP.
# test_mptcp.sh proves the protocol on clean paths and test_proxy_loss.sh
# the plain proxy under loss; this proves the subflows' retransmissions,
# the data-level reassembly and the mappings of resent segments against a
# real kernel when the paths lose.
#
# Two kinds of drop:
# - what sluice sends (its subflows toward the client, its leg toward the
#   server) is lost on the wire: the impair stage ([impair], last in the
#   pipeline). These are the losses the checks count and sluice resends.
# - what the client sends on each path, and the server on its link: a
#   classic BPF program on the peers' clsact egress hook drops a share of
#   the frames at random (this kernel has neither netem nor the gact
#   action; cls_bpf in direct-action mode needs neither); `tc -s qdisc`
#   counts them (clsact's "dropped"). A pure ACK dropped there is lost.
#   A data segment is not: the drop is local, the peer's TCP sees its
#   transmit fail, keeps the segment unsent, sends it again and reduces
#   its window (CWR). So the peers' ACKs are lost and their data is held
#   up, but no data the peers send goes missing on the way to sluice;
#   out-of-order data reaches sluice only from the two paths' different
#   delays.
#
# Settings, each one sluice run ("every hop": impair on what sluice sends,
# the filter on what the peers send):
#   loss2        2% random loss on every hop, both paths; up and down
#                over IPv4 and IPv6; then the IPv4 transfers kernel to
#                kernel through the plain bridge with the same loss, their
#                goodput logged beside, not asserted
#   loss5        5% on every hop, both paths; up and down over IPv4
#   bursty_path  path 0 clean; path 1 as a bad radio: Gilbert-Elliott
#                bursts (ge_p 1%, ge_r 25%, half of a Bad spell lost),
#                up to 1 ms of jitter that reorders, and 5% of the
#                client's frames on it lost (no delay: the schedulers
#                prefer the path of lower RTT, and one 20 ms longer
#                carried nothing here)
#   dup_reorder  every hop: 1% loss, 2% duplicated, 2% held back 5 ms
#                (reordered) by sluice, and 1% of the peers' frames lost
# One more download per setting starts with the client's DATA_FIN (its
# request ended in shutdown()). Each transfer (E2E_MPTCP_LOSS_MB, 16 MB)
# must arrive intact (sha256 and length), over MPTCP at the client with
# both subflows (a join the client's kernel reset leaves one) and plain
# TCP at the server (the proxy terminated it: nothing fell back), and in
# its data's direction the impair stage must have lost frames sluice
# sent (its subflows' on a download, its server leg's on an upload),
# sluice must have resent (tcp_retransmits), and the peers' filter must
# have dropped frames too; each line also gives the sending kernel's
# retransmissions and both sides' RTOs. Each run ends with exit
# status 0 and every mbuf back in the pool, with losses counted on every
# impaired direction, and with none of the client kernel's MPTCP error
# counters moved (fallbacks, unusable mappings, checksum errors, resets
# received or sent, and fast closes: CLI_ERRS below).
set -u
. "$(dirname "$0")/mptcp_lib.sh"
. "$(dirname "$0")/stream_xfer.sh"
E2E_TEST=mptcp_loss
ROOT=$(cd "$E2E_DIR/../.." && pwd)
MB=${E2E_MPTCP_LOSS_MB:-16}
SIZE=$((MB * 1000000))
PROXY_CONF=$ROOT/config/examples/mptcp-proxy.ini

e2e_require_tools nstat tc
if ! mptcp_proxy_supported; then
	e2e_skip mptcp_loss "this sluice has no [proxy] mptcp key"
	e2e_finish
fi
mptcp_setup
# The peers' sockets run CUBIC (mptcp_peer.py), as sluice's legs do by
# default ([proxy] cc), so that the bridge's figures beside compare like
# with like: a namespace inherits the host's default, BBR here, which
# ignores loss (and may not be allowed to choose another).
export MPTCP_PEER_CC=${MPTCP_PEER_CC-cubic}

# peer_loss NS DEV PCT: DEV (in NS) loses PCT% of the frames it sends, at
# random. The program: A = a random 32-bit number (the ancillary load
# SKF_AD_RANDOM, offset -0x1000 + 56); A >= PCT% of 2^32: pass (0,
# TC_ACT_OK), else drop (2, TC_ACT_SHOT). PCT 0 removes it.
peer_loss() {
	local k
	tc -n "$1" qdisc del dev "$2" clsact 2>/dev/null
	[ "$3" = 0 ] && return 0
	k=$(awk -v p="$3" 'BEGIN { printf "%d", p / 100 * 4294967296 }')
	tc -n "$1" qdisc add dev "$2" clsact &&
		tc -n "$1" filter add dev "$2" egress prio 1 bpf da \
			bytecode "4,32 0 0 4294963256,53 0 1 $k,6 0 0 0,6 0 0 2" ||
		e2e_die "tc clsact/bpf on $2 in $1 failed"
}
# peer_dropped NS DEV: what peer_loss dropped on DEV so far (0 without it).
peer_dropped() {
	tc -s -n "$1" qdisc show dev "$2" 2>/dev/null | awk '
		/^qdisc clsact/ { on = 1; next }
		on && /dropped/ { sub(/.*dropped /, ""); sub(/,.*/, ""); print $0 + 0; found = 1; exit }
		END { if (!found) print 0 }'
}
# The peers' frames toward sluice: the client's two paths and the
# server's link (the server's second link carries nothing when sluice
# terminates MPTCP: its one leg leaves from port 1).
peers_loss() { # CLIENT_PATH0_PCT CLIENT_PATH1_PCT SERVER_PCT
	peer_loss "$NS_CLI" "$CLI_IF" "$1"
	peer_loss "$NS_CLI" "$CLI1_IF" "$2"
	peer_loss "$NS_SRV" "$SRV_IF" "$3"
}
peers_dropped() {
	echo $(( $(peer_dropped "$NS_CLI" "$CLI_IF") + $(peer_dropped "$NS_CLI" "$CLI1_IF") +
		 $(peer_dropped "$NS_SRV" "$SRV_IF") ))
}

# What the impair stage dropped so far, summed over pairs 0 and 1, in one
# direction (up: toward the server; down: toward the client).
impair_lost_now() { # up|down
	e2e_tel /sluice/impair | "$E2E_PY" -c 'import json, sys
d = json.load(sys.stdin)
print(sum(v.get("lost_random", 0) + v.get("lost_ge", 0)
          for k, v in d.items() if isinstance(v, dict) and k.endswith("_" + sys.argv[1])))' "$1"
}
proxy_cnt() { e2e_tel /sluice/proxy "$1"; }

PORT=7600
PROXIED=1 NEED_LOSS=1
XFER_MBPS=
# xfer up|down 4|6 [shut]: SIZE bytes through the running sluice, judged
# as the header says; shut: the client half-closes (DATA_FIN) before the
# download's first byte. Sets XFER_MBPS.
xfer() {
	local dir=$1 dst=$SRV4 sf cm sm want_s=0 lost0 lost drop0 drop rtx0 rto0 rtx rto resent k
	local before after d="" a b kns=cli who="the client's" krtx0 kto0 krtx kto
	[ "$2" = 6 ] && dst=$SRV6
	[ $PROXIED = 1 ] || want_s=1
	PORT=$((PORT + 1))
	XFER_MBPS=
	drop0=$(peers_dropped)
	if [ $PROXIED = 1 ]; then
		lost0=$(impair_lost_now "$dir")
		rtx0=$(proxy_cnt tcp_retransmits) rto0=$(proxy_cnt tcp_rto_expired)
		before=$(mptcp_sluice_counters)
	fi
	# The kernel that sends the data: the client's on an upload, the
	# server's on a download.
	[ "$dir" = down ] && kns=srv who="the server's"
	krtx0=$(mptcp_nstat "$kns" TcpRetransSegs) kto0=$(mptcp_nstat "$kns" TcpExtTCPTimeouts)
	# --subflows 2: the client starts once its second subflow joined, so
	# that the second path carries part of a transfer that lasts a
	# fraction of a second here rather than racing it.
	mptcp_xfer "$dir" "$dst" "$SIZE" "$PORT" 60 --subflows 2 ${3:+--shut-first} || return 1
	XFER_MBPS=$(stream_mbps "$SIZE" "$XFER_SECS")
	cm=$(mptcp_kv "$XFER_CLI" is_mptcp) sm=$(mptcp_kv "$XFER_SRV" is_mptcp)
	sf=$(mptcp_kv "$XFER_CLI" subflows)
	drop=$(( $(peers_dropped) - drop0 ))
	E2E_WHY="$MB MB in $XFER_SECS s ($XFER_MBPS Mbit/s), sha256 equal, client is_mptcp=$cm subflows=$sf (joined after $(mptcp_kv "$XFER_CLI" waited_for_subflows) s), server is_mptcp=$sm; peers' egress dropped $drop"
	# Two subflows both ways: a client whose join was reset by its kernel
	# ends with one (a join's first frames from sluice lost or reordered:
	# see sf_budget() in lib/mptcp_proxy/mptcp_sched.c).
	if [ "$cm" != 1 ] || [ "$sm" != "$want_s" ] || [ "${sf:-0}" -lt 2 ]; then
		E2E_WHY="$E2E_WHY (want client MPTCP over 2 subflows, server is_mptcp=$want_s)"
		return 1
	fi
	[ $PROXIED = 1 ] || return 0
	lost=$(( $(impair_lost_now "$dir") - lost0 ))
	after=$(mptcp_sluice_counters)
	for k in mptcp_data_level_retransmissions mptcp_bytes_reinjected mptcp_subflows_penalised \
		mptcp_subflows_reset mptcp_joins_unknown_token; do
		a=$(mptcp_kv "$after" "$k") b=$(mptcp_kv "$before" "$k")
		d+=" $k+$(( ${a:-0} - ${b:-0} ))"
	done
	rtx=$(( $(proxy_cnt tcp_retransmits) - rtx0 )) rto=$(( $(proxy_cnt tcp_rto_expired) - rto0 ))
	krtx=$(( $(mptcp_nstat "$kns" TcpRetransSegs) - krtx0 )) kto=$(( $(mptcp_nstat "$kns" TcpExtTCPTimeouts) - kto0 ))
	# Who resends in the data's direction: sluice what the impair stage
	# lost (toward the server on an upload, toward the client on a
	# download), and the sending kernel for its own reasons (timeouts
	# after lost ACKs; none of its data is lost on the way).
	resent="sluice retransmitted $rtx segments ($rto RTOs), $who kernel $krtx ($kto RTOs)"
	E2E_WHY="$E2E_WHY, impair dropped $lost going $dir; $resent;$d"
	# The data's own direction lost frames sluice sent, and sluice resent;
	# not where only one path is impaired and the schedulers may leave it
	# nearly idle (NEED_LOSS=0: its losses are judged over the whole run).
	[ "$NEED_LOSS" = 0 ] && return 0
	[ "$lost" -gt 0 ] && [ "$drop" -gt 0 ] && [ "$rtx" -gt 0 ]
}

# impaired: after sluice stopped, each direction of each pair named lost
# frames (exit-report lines "impair dir=D pair=N ... lost_random= lost_ge=").
impaired() { # "D:N ..." (direction:pair)
	local a dir pair in lost ge out=
	for a in "$@"; do
		dir=${a%:*} pair=${a#*:}
		in=$(e2e_final "impair dir=$dir pair=$pair" in)
		lost=$(e2e_final "impair dir=$dir pair=$pair" lost_random)
		ge=$(e2e_final "impair dir=$dir pair=$pair" lost_ge)
		lost=$(( ${lost:-0} + ${ge:-0} ))
		if [ -z "$in" ] || [ "$lost" -le 0 ]; then
			E2E_WHY="impair dir=$dir pair=$pair lost $lost of in=${in:-?}, want > 0"
			return 1
		fi
		out+=" $dir$pair $lost/$in"
	done
	E2E_WHY="exit 0, mempool at baseline; impair lost$out"
}

# What the client's kernel counts when MPTCP went wrong (a fallback, a
# mapping or checksum it could not use, a reset or fast close of the
# connection or a subflow, received or sent, a join's bad HMAC), and
# what it counts on the way (informational: data-level retransmissions,
# out-of-order and duplicate data at the connection level).
CLI_ERRS="MPTcpExtMPCapableFallbackSYNACK MPTcpExtMPCapableFallbackACK MPTcpExtDssFallback
	MPTcpExtDSSNotMatching MPTcpExtDSSCorruptionFallback MPTcpExtDSSCorruptionReset
	MPTcpExtDSSNoMatchTCP MPTcpExtInfiniteMapRx MPTcpExtDataCsumErr MPTcpExtMPFailRx
	MPTcpExtMPFastcloseRx MPTcpExtMPRstRx MPTcpExtMPRstTx MPTcpExtMPJoinSynAckHMacFailure"
CLI_INFO="MPTcpExtMPTCPRetrans MPTcpExtOFOQueue MPTcpExtDuplicateData"
cli_snap() { local k; for k in $CLI_ERRS $CLI_INFO; do echo "$k=$(mptcp_nstat cli "$k")"; done; }
# cli_clean BEFORE: none of CLI_ERRS moved since BEFORE (cli_snap's lines).
cli_clean() {
	local k v0 v1 bad='' info=''
	for k in $CLI_ERRS $CLI_INFO; do
		v0=$(sed -n "s/^$k=//p" <<<"$1") v1=$(mptcp_nstat cli "$k")
		if [[ " $CLI_INFO " == *" $k "* ]]; then
			info+=" ${k#MPTcpExt}+$((v1 - ${v0:-0}))"
		elif [ "$v1" != "${v0:-0}" ]; then
			bad+=" ${k#MPTcpExt}+$((v1 - ${v0:-0}))"
		fi
	done
	E2E_WHY="client kernel:${bad:- no fallback, mapping, checksum, reset or fast-close error};$info"
	[ -z "$bad" ]
}

# setting NAME "PEER PCTS" "IMPAIRED DIRECTIONS" "FAMILIES" IMPAIR-LINES...
setting() {
	local name=$1 pcts=$2 dirs=$3 fams=$4 cfg=$E2E_TMP/$1.ini fam dir snap
	shift 4
	snap=$(cli_snap)
	{ cat "$PROXY_CONF"; printf '%s\n' "[impair]" "seed = 7" "$@"; } >"$cfg"
	PROXIED=1
	peers_loss 0 0 0
	e2e_start_sluice "$cfg" || { e2e_fail "mptcp_loss_$name" "sluice start: $E2E_WHY"; return; }
	mptcp_warmup || { e2e_fail "mptcp_loss_$name" "warm-up: $E2E_WHY"; e2e_stop_sluice; return; }
	# shellcheck disable=SC2086 # three words
	peers_loss $pcts
	for fam in $fams; do
		for dir in up down; do
			e2e_check "mptcp_loss_${name}_${dir}${fam}_arrives_intact" xfer "$dir" "$fam"
		done
	done
	# The client's DATA_FIN first, then the server's bytes and FIN: the
	# server leg ends in order (both FINs) while the subflows still owe
	# the client the tail it holds.
	e2e_check "mptcp_loss_${name}_down4_after_the_clients_data_fin_arrives_intact" xfer down 4 shut
	peers_loss 0 0 0
	# Every connection ends before sluice stops: one still open at exit
	# is aborted (MP_FASTCLOSE), which the client's kernel would count.
	# A subflow on a lossy path may still be resending for a while after
	# the data level completed over the other.
	local i
	for i in $(seq 1 200); do
		[ "$(proxy_cnt connections_active)" = 0 ] && break
		sleep 0.1
	done
	# shellcheck disable=SC2086 # words
	if e2e_stop_sluice && impaired $dirs; then
		e2e_pass "mptcp_loss_${name}_clean_exit" "$E2E_WHY"
	else
		e2e_fail "mptcp_loss_${name}_clean_exit" "$E2E_WHY"
	fi
	e2e_check "mptcp_loss_${name}_client_saw_no_mptcp_error" cli_clean "$snap"
}

setting loss2 "2 2 2" "up:0 down:0 down:1" "4 6" "loss = 2%"

# The same loss kernel to kernel through the plain bridge: figures only.
{ printf '%s\n' "[impair]" "seed = 7" "loss = 2%"; } >"$E2E_TMP/bridge.ini"
PROXIED=0
if e2e_start_sluice "$E2E_TMP/bridge.ini" && mptcp_warmup; then
	peers_loss 2 2 2
	up_b="failed" down_b="failed"
	xfer up 4 && up_b="$XFER_MBPS Mbit/s"
	xfer down 4 && down_b="$XFER_MBPS Mbit/s"
	peers_loss 0 0 0
	# The check is the bridge's clean exit; the goodput rides along.
	if e2e_stop_sluice; then
		e2e_pass mptcp_loss_loss2_bridge_clean_exit "kernel MPTCP end to end through the bridge, the same loss (not judged): $MB MB up $up_b, down $down_b"
	else
		e2e_fail mptcp_loss_loss2_bridge_clean_exit "$E2E_WHY"
	fi
else
	e2e_fail mptcp_loss_bridge "sluice start or warm-up: $E2E_WHY"
	e2e_stop_sluice
fi

setting loss5 "5 5 5" "up:0 down:0 down:1" 4 "loss = 5%"
NEED_LOSS=0
setting bursty_path "0 5 0" "down:1" 4 \
	"[impair.pair1]" "ge_p = 1%" "ge_r = 25%" "ge_loss_bad = 50%" \
	"jitter = 1ms" "jitter_reorder = yes"
NEED_LOSS=1
setting dup_reorder "1 1 1" "up:0 down:0 down:1" 4 \
	"loss = 1%" "duplicate = 2%" "reorder = 2%" "reorder_gap = 5ms"
e2e_finish
