#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The tcpopt stage between two kernels' TCP and MPTCP stacks, with
# config/examples/mss-clamp-1400.ini:
#   - Each kernel's SYN or SYN/ACK (MSS 1460 over IPv4, 1440 over IPv6, on
#     1500-byte veths) reaches the other clamped to 1400: TCP_MAXSEG is
#     1388 at both ends (1400 less the timestamp option). The connection
#     opens and carries 2 MB intact: a checksum left wrong by the rewrite
#     would make the kernel drop the segment.
#   - An MPTCP connection opens as MPTCP at both ends (TCP_IS_MPTCP), with
#     the same clamp: MP_CAPABLE passes both ways, and the health pair
#     counts it.
#   - iperf3 runs through the stage at a sane rate.
#   - /sluice/tcpopt agrees, and sluice exits clean.
# Then the control that shows the MPTCP check can fail: with
# option.mptcp = strip the same connection falls back to plain TCP at both
# ends, and still carries its data.
set -u
. "$(dirname "$0")/lib.sh"
E2E_TEST=tcpopt
PEER=$E2E_DIR/tcpopt_peer.py
CLAMP_INI=$(cd "$E2E_DIR/../.." && pwd)/config/examples/mss-clamp-1400.ini
NBYTES=${E2E_TCPOPT_BYTES:-2000000}
PORT=7400

e2e_require_tools
[ -r "$CLAMP_INI" ] || e2e_die "no $CLAMP_INI"
[ "$(sysctl -n net.mptcp.enabled 2>/dev/null)" = 1 ] ||
	e2e_die "the kernel has no MPTCP (sysctl net.mptcp.enabled is not 1)"
e2e_setup

# xfer FAMILY PROTO WANT_MSS WANT_MPTCP: one connection from client to
# server, NBYTES checked by SHA-256 at the server; TCP_MAXSEG at both ends
# must be WANT_MSS (- for any) and TCP_IS_MPTCP WANT_MPTCP.
xfer() {
	local fam=$1 proto=$2 want_mss=$3 want_mp=$4 dst out port=$PORT
	PORT=$((PORT + 1))
	if [ "$fam" = 6 ]; then dst=$SRV6; else dst=$SRV4; fi
	srv timeout --foreground 40 "$E2E_PY" "$PEER" serve "$dst" "$port" "$proto" \
		</dev/null >"$E2E_TMP/serve.$port.log" 2>&1 &
	E2E_PIDS+=($!)
	e2e_wait_listen "$port" || { E2E_WHY="the server did not listen on $port"; return 1; }
	out=$(cli timeout --foreground 40 "$E2E_PY" "$PEER" send "$dst" "$port" "$proto" \
		"$NBYTES" </dev/null 2>"$E2E_TMP/send.$port.err") || {
		E2E_WHY="client failed: $(head -c 300 "$E2E_TMP/send.$port.err")"; return 1; }
	# "<sha> <len> <mss> <mptcp> | <sha> <len> <mss> <mptcp>"
	set -- $out
	if [ $# != 9 ]; then E2E_WHY="unexpected peer output '$out'"; return 1; fi
	local csha=$1 cmss=$3 cmp=$4 ssha=$6 slen=$7 smss=$8 smp=$9
	if [ "$ssha" != "$csha" ] || [ "$slen" != "$NBYTES" ]; then
		E2E_WHY="the server got $slen bytes, sha256 $ssha; sent $NBYTES, $csha"; return 1
	fi
	if [ "$want_mss" != - ] && { [ "$cmss" != "$want_mss" ] || [ "$smss" != "$want_mss" ]; }; then
		E2E_WHY="TCP_MAXSEG client $cmss server $smss, want $want_mss at both"; return 1
	fi
	if [ "$cmp" != "$want_mp" ] || [ "$smp" != "$want_mp" ]; then
		E2E_WHY="TCP_IS_MPTCP client $cmp server $smp, want $want_mp at both"; return 1
	fi
	E2E_WHY="$NBYTES bytes intact; TCP_MAXSEG $cmss/$smss, TCP_IS_MPTCP $cmp/$smp (client/server)"
}

# tel_check EXPR...: Python conditions on t, the /sluice/tcpopt answer.
tel_check() {
	local res
	res=$("$E2E_PY" - "$(e2e_tel /sluice/tcpopt)" "$@" <<'PY'
import json, sys
try:
    t = json.loads(sys.argv[1])
except Exception as e:
    print("ERR bad telemetry answer: %s" % e); sys.exit()
bad = [c for c in sys.argv[2:] if not eval(c, {"t": t})]
keys = ("mss_clamped", "stripped", "syn_mp_capable", "synack_mp_capable",
        "segments_syn", "segments_synack", "segments_other")
print(("ERR failed: %s; " % ", ".join(bad) if bad else "OK ") +
      " ".join("%s=%s" % (k, t.get(k)) for k in keys))
PY
)
	E2E_WHY=${res#* }
	case "$res" in OK*) return 0 ;; esac
	return 1
}

e2e_start_sluice "$CLAMP_INI" || e2e_die "sluice start: $E2E_WHY"
e2e_check tcp4_mss_clamped_both_ways xfer 4 tcp 1388 0
e2e_check tcp6_mss_clamped_both_ways xfer 6 tcp 1388 0
e2e_check mptcp4_opens_as_mptcp_and_clamped xfer 4 mptcp 1388 1
e2e_check mptcp6_opens_as_mptcp_and_clamped xfer 6 mptcp 1388 1
if e2e_iperf 4; then
	e2e_pass iperf_tcp4_through_tcpopt "$E2E_MBPS Mbit/s, $E2E_RETRANS retransmits"
else
	e2e_fail iperf_tcp4_through_tcpopt "$E2E_WHY"
fi
# 4 connections of ours and iperf3's 2: a SYN and a SYN/ACK each, all
# clamped; 2 of them MPTCP. No option area is malformed.
e2e_check tcpopt_telemetry tel_check 't["mss_clamped"] >= 12' \
	't["syn_mp_capable"] >= 2' 't["synack_mp_capable"] >= 2' \
	't["stripped"] == 0' \
	'sum(v for k, v in t.items() if k.startswith("malformed_")) == 0'
e2e_check tcpopt_clean_exit e2e_stop_sluice

printf '[tcpopt]\nmss_clamp = 1400\noption.mptcp = strip\n' >"$E2E_TMP/strip.ini"
e2e_start_sluice "$E2E_TMP/strip.ini" || e2e_die "sluice start: $E2E_WHY"
e2e_check mptcp4_falls_back_when_stripped xfer 4 mptcp 1388 0
e2e_check strip_telemetry tel_check 't["stripped"] >= 1' 't["synack_mp_capable"] == 0'
e2e_check strip_clean_exit e2e_stop_sluice
e2e_finish
