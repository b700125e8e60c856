#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# e2e-timeout: 300
#
# A middlebox between an MPTCP client and sluice strips the DSS option
# after the handshake (issue 16, "a scapy middlebox that strips DSS";
# RFC 8684 §3.7): sluice terminates MPTCP (config/examples/
# mptcp-proxy.ini) and must fall back to plain TCP on that subflow,
# counted by cause, with the stream intact both ways.
#
#   client ns           middlebox ns                      sluice ns         server ns
#   eth0 198.18.0.1 <-> e2e-mbc [mptcp_dss_strip.py] e2e-mbs <-> e2e-sub | e2e-inet <-> eth0 198.18.0.2
#
# The middlebox (tests/e2e/mptcp_dss_strip.py, scapy) bridges its two
# veths and replaces every DSS of a segment without SYN by NOPs, in one
# direction or both; MP_CAPABLE passes, so the handshake succeeds.
# For each direction, a 200 kB upload and a 200 kB download, sha256
# checked, and sluice's mptcp_fallback_* counter of the expected cause
# must have moved: data_without_dss when the client's data reached
# sluice without a mapping, ack_without_dss when the client acknowledged
# sluice's data without a DATA_ACK.
#
# sluice runs with [proxy] mptcp_fallback_mss_room = on (the default,
# set here explicitly so that the check does not follow it): when DSS is
# stripped only on the client's way to sluice, the client still gets
# sluice's DATA_ACKs and would keep speaking MPTCP, its DATA_FIN
# stripped; sluice tells it with MP_FAIL, and the Linux client's answer,
# an infinite mapping on a segment sized for no option, fits in the path
# MTU only with that room (config/proxy.ini).
#
# E2E_MPTCP_DSS_SIZE (200000) sets the transfer size.
set -u
. "$(dirname "$0")/mptcp_lib.sh"
E2E_TEST=mptcp_dss
ROOT=$(cd "$E2E_DIR/../.." && pwd)
E2E_PORT_IFS=("$SUB_IF" "$INET_IF")
NS_MBX=sle2e-mbx-$E2E_ID
MBX_CLI_IF=e2e-mbc MBX_SLU_IF=e2e-mbs
STRIP=$E2E_DIR/mptcp_dss_strip.py
SIZE=${E2E_MPTCP_DSS_SIZE:-200000}

e2e_setup
trap 'ip netns del "$NS_MBX" 2>/dev/null; e2e_cleanup' EXIT
"$E2E_PY" -c 'import scapy' 2>/dev/null || e2e_die "scapy missing for $E2E_PY"

# Put the middlebox namespace between the client's eth0 and sluice's
# port 0: the veth pair lib.sh made goes, two pairs take its place.
ip netns add "$NS_MBX" || e2e_die "ip netns add $NS_MBX failed"
ip -n "$NS_MBX" link set lo up
ip netns exec "$NS_MBX" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
	net.ipv6.conf.default.disable_ipv6=1
ip -n "$NS_CLI" link del "$CLI_IF"
ip -n "$NS_MID" link add "$SUB_IF" type veth peer name "$MBX_SLU_IF" netns "$NS_MBX" ||
	e2e_die "veth $SUB_IF failed"
ip -n "$NS_MBX" link add "$MBX_CLI_IF" type veth peer name "$CLI_IF" netns "$NS_CLI" ||
	e2e_die "veth $MBX_CLI_IF failed"
_e2e_offloads_off "$NS_MID" "$SUB_IF"
_e2e_offloads_off "$NS_MBX" "$MBX_SLU_IF"
_e2e_offloads_off "$NS_MBX" "$MBX_CLI_IF"
_e2e_offloads_off "$NS_CLI" "$CLI_IF"
ip -n "$NS_CLI" addr add "$CLI4/24" dev "$CLI_IF"
ip -n "$NS_CLI" addr add "$CLI6/64" dev "$CLI_IF" nodad
for l in "$NS_MID $SUB_IF" "$NS_MBX $MBX_SLU_IF" "$NS_MBX $MBX_CLI_IF" "$NS_CLI $CLI_IF"; do
	set -- $l
	ip -n "$1" link set "$2" up
done
for ns in "$NS_CLI" "$NS_SRV"; do
	_e2e_nsx "$ns" sysctl -qw net.mptcp.enabled=1 || e2e_die "sysctl in $ns failed"
	_e2e_nsx "$ns" sysctl -qw net.mptcp.syn_retrans_before_tcp_fallback=10 \
		net.mptcp.blackhole_timeout=0 2>/dev/null
done
ip -n "$NS_CLI" neigh replace "$SRV4" lladdr "$(_mptcp_mac "$NS_SRV" "$SRV_IF")" dev "$CLI_IF" nud permanent
ip -n "$NS_SRV" neigh replace "$CLI4" lladdr "$(_mptcp_mac "$NS_CLI" "$CLI_IF")" dev "$SRV_IF" nud permanent

MBX_PID=
MBX_STATS=
# mbx_start DIRS: the stripping middlebox, in directions DIRS (up, down,
# both, or none: it only bridges).
mbx_start() {
	MBX_STATS=$E2E_TMP/mbx.$1
	rm -f "$MBX_STATS" "$MBX_STATS.ready"
	ip netns exec "$NS_MBX" "$E2E_PY" "$STRIP" "$MBX_CLI_IF" "$MBX_SLU_IF" "$1" "$MBX_STATS" \
		2>"$MBX_STATS.err" &
	MBX_PID=$!
	E2E_PIDS+=("$MBX_PID")
	local i
	for i in $(seq 1 100); do
		[ -e "$MBX_STATS.ready" ] && return 0
		sleep 0.1
	done
	e2e_die "middlebox not ready: $(tail -1 "$MBX_STATS.err")"
}
mbx_stop() {
	[ -n "$MBX_PID" ] || return 0
	_e2e_kill_child "$MBX_PID" TERM
	wait "$MBX_PID" 2>/dev/null
	MBX_PID=
	MBX_LINE=$(cat "$MBX_STATS" 2>/dev/null)
}

PORT=7400
# stripped DIRS XFER CAUSE: with the middlebox stripping DIRS, one
# transfer (up or down), intact, and the fallback counter CAUSE (or any
# mptcp_fallback_* if CAUSE is "any") moved.
stripped() {
	local dirs=$1 dir=$2 cause=$3 before after n what
	PORT=$((PORT + 1))
	before=$(mptcp_sluice_counters)
	mbx_start "$dirs"
	mptcp_xfer "$dir" "$SRV4" "$SIZE" "$PORT" 30
	local rc=$? why=$E2E_WHY
	mbx_stop
	after=$(mptcp_sluice_counters)
	if [ $rc != 0 ]; then
		E2E_WHY="transfer: $why; middlebox $MBX_LINE"
		return 1
	fi
	n=$(mptcp_kv "$MBX_LINE" "stripped_$dirs" 2>/dev/null)
	[ "$dirs" = both ] && n=$(( $(mptcp_kv "$MBX_LINE" stripped_up) + $(mptcp_kv "$MBX_LINE" stripped_down) ))
	what=$("$E2E_PY" - "$before" "$after" <<'EOF'
import sys
b = dict(kv.split("=") for kv in sys.argv[1].split())
a = dict(kv.split("=") for kv in sys.argv[2].split())
print(" ".join("%s+%d" % (k, int(v) - int(b.get(k, 0)))
               for k, v in sorted(a.items())
               if k.startswith("mptcp_fallback") and int(v) != int(b.get(k, 0))))
EOF
)
	E2E_WHY="$SIZE bytes intact; middlebox $MBX_LINE; sluice ${what:-no fallback counted}; client $XFER_CLI"
	[ "${n:-0}" -ge 1 ] || { E2E_WHY="the middlebox stripped nothing: $E2E_WHY"; return 1; }
	if [ "$cause" = any ]; then
		[ -n "$what" ]
	else
		grep -q "mptcp_fallback_$cause+" <<<"$what"
	fi
}

# stripped_mp_fail DIRS XFER CAUSE: stripped, and sluice sent MP_FAIL
# which the client's kernel received (MPTcpExtMPFailRx) and answered
# with an infinite mapping (MPTcpExtInfiniteMapTx).
stripped_mp_fail() {
	local f0 i0 s0 why
	f0=$(mptcp_nstat cli MPTcpExtMPFailRx) i0=$(mptcp_nstat cli MPTcpExtInfiniteMapTx)
	s0=$(mptcp_kv "$(mptcp_sluice_counters)" mptcp_mp_fail_sent)
	stripped "$@" || return 1
	local f=$(( $(mptcp_nstat cli MPTcpExtMPFailRx) - f0 )) i=$(( $(mptcp_nstat cli MPTcpExtInfiniteMapTx) - i0 ))
	local s=$(( $(mptcp_kv "$(mptcp_sluice_counters)" mptcp_mp_fail_sent) - ${s0:-0} ))
	E2E_WHY="$E2E_WHY; sluice mptcp_mp_fail_sent +$s; client MPTcpExtMPFailRx +$f MPTcpExtInfiniteMapTx +$i"
	[ "$s" -ge 1 ] && [ "$f" -ge 1 ] && [ "$i" -ge 1 ]
}

# Through the middlebox, stripping nothing: MPTCP works, no fallback.
unstripped() {
	local before after
	PORT=$((PORT + 1))
	before=$(mptcp_sluice_counters)
	mbx_start none
	mptcp_xfer up "$SRV4" "$SIZE" "$PORT" 30
	local rc=$? why=$E2E_WHY
	mbx_stop
	[ $rc = 0 ] || { E2E_WHY="transfer: $why"; return 1; }
	after=$(mptcp_sluice_counters)
	E2E_WHY="client $XFER_CLI; middlebox $MBX_LINE"
	[ "$(mptcp_kv "$XFER_CLI" is_mptcp)" = 1 ] &&
		[ "$(tr ' ' '\n' <<<"$before" | grep '^mptcp_fallback_[a-z_]*=' | grep -v checksum)" = \
		  "$(tr ' ' '\n' <<<"$after" | grep '^mptcp_fallback_[a-z_]*=' | grep -v checksum)" ]
}

# The client announces a second address (an MPTCP "signal" endpoint):
# sluice acknowledges the ADD_ADDR with an echo (RFC 8684 3.4.1), which
# the client's kernel counts (MPTcpExtEchoAdd); without it the kernel
# resends the ADD_ADDR. Through the middlebox, stripping nothing.
ANNOUNCED4=198.18.0.11
add_addr_echoed() {
	local e0 a0 after
	PORT=$((PORT + 1))
	e0=$(mptcp_nstat cli MPTcpExtEchoAdd)
	a0=$(mptcp_kv "$(mptcp_sluice_counters)" mptcp_add_addr_echoed)
	ip -n "$NS_CLI" addr add "$ANNOUNCED4/32" dev "$CLI_IF"
	ip -n "$NS_CLI" mptcp endpoint add "$ANNOUNCED4" dev "$CLI_IF" signal ||
		{ E2E_WHY="ip mptcp endpoint add signal failed"; return 1; }
	mbx_start none
	mptcp_xfer up "$SRV4" "$SIZE" "$PORT" 30 --rate 2
	local rc=$? why=$E2E_WHY
	mbx_stop
	ip -n "$NS_CLI" mptcp endpoint flush
	[ $rc = 0 ] || { E2E_WHY="transfer: $why"; return 1; }
	after=$(mptcp_sluice_counters)
	local echo_rx=$(( $(mptcp_nstat cli MPTcpExtEchoAdd) - e0 ))
	local echoed=$(( $(mptcp_kv "$after" mptcp_add_addr_echoed) - ${a0:-0} ))
	E2E_WHY="sluice mptcp_add_addr_received=$(mptcp_kv "$after" mptcp_add_addr_received) mptcp_add_addr_echoed +$echoed; client MPTcpExtEchoAdd +$echo_rx, MPTcpExtAddAddrTx $(mptcp_nstat cli MPTcpExtAddAddrTx)"
	[ "$echoed" -ge 1 ] && [ "$echo_rx" -ge 1 ]
}

# DSS checksums: the client asks (net.mptcp.checksum_enabled=1 in its
# namespace); sluice uses them, verifies every mapping it receives and
# sends correct ones (the kernel would count MPTcpExtDataCsumErr and
# reset). Through the middlebox, stripping nothing.
checksummed() {
	local dir=$1 before after c0 e0
	PORT=$((PORT + 1))
	before=$(mptcp_sluice_counters)
	e0=$(mptcp_nstat cli MPTcpExtDataCsumErr)
	ip netns exec "$NS_CLI" sysctl -qw net.mptcp.checksum_enabled=1
	mbx_start none
	mptcp_xfer "$dir" "$SRV4" "$SIZE" "$PORT" 30
	local rc=$? why=$E2E_WHY
	mbx_stop
	ip netns exec "$NS_CLI" sysctl -qw net.mptcp.checksum_enabled=0
	[ $rc = 0 ] || { E2E_WHY="transfer: $why"; return 1; }
	after=$(mptcp_sluice_counters)
	local k d=""
	for k in mptcp_connections_checksummed mptcp_checksums_verified mptcp_checksums_failed \
		mptcp_fallback_checksum_requested; do
		d+=" $k+$(( $(mptcp_kv "$after" $k) - $(mptcp_kv "$before" $k) ))"
	done
	c0=$(( $(mptcp_nstat cli MPTcpExtDataCsumErr) - e0 ))
	E2E_WHY="$SIZE bytes intact; sluice$d; client is_mptcp=$(mptcp_kv "$XFER_CLI" is_mptcp) MPTcpExtDataCsumErr +$c0"
	[ "$(mptcp_kv "$XFER_CLI" is_mptcp)" = 1 ] && [ "$c0" = 0 ] &&
		grep -q "mptcp_connections_checksummed+1 " <<<"$d " &&
		grep -q "mptcp_checksums_failed+0 " <<<"$d " &&
		{ [ "$dir" = down ] || ! grep -q "mptcp_checksums_verified+0 " <<<"$d "; }
}

mptcp_proxy_supported || { e2e_skip mptcp_dss "this sluice has no [proxy] mptcp"; e2e_finish; }
sed 's/^\[proxy\]$/[proxy]\nmptcp_fallback_mss_room = on/' "$ROOT/config/examples/mptcp-proxy.ini" \
	>"$E2E_TMP/mptcp-proxy-room.ini"
grep -q '^mptcp_fallback_mss_room = on' "$E2E_TMP/mptcp-proxy-room.ini" ||
	e2e_die "no [proxy] section in config/examples/mptcp-proxy.ini"
e2e_start_sluice "$E2E_TMP/mptcp-proxy-room.ini" || e2e_die "sluice start: $E2E_WHY"
# Warm up: both ends reach each other through the middlebox and sluice.
for i in $(seq 1 20); do
	mbx_start none
	ip netns exec "$NS_CLI" ping -c 1 -W 1 "$SRV4" >/dev/null 2>&1
	r=$?
	mbx_stop
	[ $r = 0 ] && break
done

e2e_check mptcp_through_a_middlebox_that_strips_nothing_stays_mptcp unstripped
e2e_check mptcp_add_addr_from_the_client_is_echoed add_addr_echoed
e2e_check mptcp_with_dss_checksums_an_upload_arrives_intact_every_mapping_verified checksummed up
e2e_check mptcp_with_dss_checksums_a_download_arrives_intact_the_client_finds_no_error checksummed down
# DSS stripped only toward sluice on an upload (sluice has no data to
# carry an infinite mapping): sluice falls back on the first unmapped
# bytes and sends MP_FAIL, the client answers with an infinite mapping
# and plain TCP, its FIN ends the stream.
e2e_check mptcp_dss_stripped_toward_sluice_on_an_upload_only_mp_fail_tells_the_client \
	stripped_mp_fail up up data_without_dss
e2e_check mptcp_dss_stripped_toward_sluice_falls_back_and_a_download_arrives_intact \
	stripped up down ack_without_dss
e2e_check mptcp_dss_stripped_toward_the_client_falls_back_and_an_upload_arrives_intact \
	stripped down up data_without_dss
e2e_check mptcp_dss_stripped_toward_the_client_falls_back_and_a_download_arrives_intact \
	stripped down down ack_without_dss
e2e_check mptcp_dss_stripped_both_ways_falls_back_and_an_upload_arrives_intact \
	stripped both up data_without_dss
e2e_check mptcp_dss_stripped_both_ways_falls_back_and_a_download_arrives_intact \
	stripped both down ack_without_dss
e2e_check mptcp_dss_strip_clean_exit e2e_stop_sluice
exit_report() {
	E2E_WHY=$(grep -o 'mptcp_fallback_[a-z0-9_]*=[0-9]*' "$SLUICE_LOG" | tr '\n' ' ')
	grep -q 'mptcp_fallback_[a-z_]*=[1-9]' <<<"$E2E_WHY"
}
e2e_check mptcp_dss_strip_exit_report_counts_the_fallbacks exit_report
e2e_finish
