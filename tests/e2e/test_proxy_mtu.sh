#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A client behind a smaller MTU than the server's, through the proxy
# (config/examples/proxy-all-tcp.ini), as a phone on a 1400-byte cellular
# MTU. The client's interface alone has MTU 1400, so its kernel sends
# 1348-byte segments (1400 less IPv4, TCP and the timestamp option) and
# the server leg's MSS is 1448.
#
#   upload   NBYTES from the client, checked by SHA-256 at the server; a
#            capture at the server's interface must show the relayed
#            segments at the client's size: ending a full-sized segment
#            with the received segment it starts in (lib/tcp/README.md,
#            "Segments that end with their mbuf") sends each one whole.
#            Without it every segment is 1448 bytes, across two received
#            ones. At most a quarter may be larger than 1348: a segment
#            the client sent short puts the following ones off their
#            boundaries for a while (0-5% of them in runs on an idle
#            machine, 96% without the rule).
#   download NBYTES from the server (iperf3 -R): sluice's client leg
#            must keep to the client's MSS, or the client's kernel drops
#            what does not fit its MTU and the transfer stalls.
set -u
. "$(dirname "$0")/lib.sh"
E2E_TEST=proxy_mtu
PEER=$E2E_DIR/tcpopt_peer.py
ROOT=$(cd "$E2E_DIR/../.." && pwd)
NBYTES=${E2E_PROXY_MTU_BYTES:-4000000}
PORT=7600

e2e_require_tools tshark dumpcap iperf3
e2e_setup
ip -n "$NS_CLI" link set "$CLI_IF" mtu 1400 || e2e_die "cannot set the client's MTU"

upload_whole_segments() {
	local cap=$E2E_TMP/mtu-srv.pcap out capid sizes n big port=$PORT
	PORT=$((PORT + 1))
	srv timeout --foreground 40 "$E2E_PY" "$PEER" serve "$SRV4" "$port" tcp \
		</dev/null >"$E2E_TMP/serve.$port.log" 2>&1 &
	E2E_PIDS+=($!)
	e2e_wait_listen "$port" || { E2E_WHY="the server did not listen on $port"; return 1; }
	ip netns exec "$NS_SRV" dumpcap -q -i "$SRV_IF" -s 96 -w "$cap" \
		-f "tcp dst port $port" >/dev/null 2>&1 &
	capid=$!
	E2E_PIDS+=("$capid")
	sleep 1
	out=$(cli timeout --foreground 40 "$E2E_PY" "$PEER" send "$SRV4" "$port" tcp \
		"$NBYTES" </dev/null 2>"$E2E_TMP/send.$port.err") || {
		E2E_WHY="client failed: $(head -c 300 "$E2E_TMP/send.$port.err")"; return 1; }
	sleep 0.5
	_e2e_kill_child "$capid" TERM
	wait "$capid" 2>/dev/null
	set -- $out
	if [ $# != 9 ]; then E2E_WHY="unexpected peer output '$out'"; return 1; fi
	local csha=$1 cmss=$3 ssha=$6 slen=$7
	if [ "$ssha" != "$csha" ] || [ "$slen" != "$NBYTES" ]; then
		E2E_WHY="the server got $slen bytes, sha256 $ssha; sent $NBYTES, $csha"; return 1
	fi
	sizes=$(tshark -r "$cap" -Y "tcp.len > 0" -T fields -e tcp.len 2>/dev/null)
	n=$(printf '%s\n' "$sizes" | grep -c .)
	big=$(printf '%s\n' "$sizes" | awk -v m="$cmss" '$1 > m' | grep -c .)
	if [ "$n" -lt $((NBYTES / 1448)) ]; then
		E2E_WHY="the capture holds $n data segments, fewer than $((NBYTES / 1448))"; return 1
	fi
	if [ $((big * 4)) -gt "$n" ]; then
		E2E_WHY="$big of $n segments to the server are larger than the client's $cmss"; return 1
	fi
	E2E_WHY="$NBYTES bytes intact; client MSS $cmss; $big of $n segments to the server larger"
}

download_fits() {
	local port=$PORT out
	PORT=$((PORT + 1))
	srv timeout --foreground 40 iperf3 -s -1 -B "$SRV4" -p "$port" </dev/null \
		>"$E2E_TMP/iperf-s.$port.log" 2>&1 &
	E2E_PIDS+=($!)
	e2e_wait_listen "$port" || { E2E_WHY="iperf3 did not listen on $port"; return 1; }
	out=$(cli timeout --foreground 40 iperf3 -c "$SRV4" -p "$port" -R -n "$NBYTES" -J \
		</dev/null 2>&1) || { E2E_WHY="iperf3 -R failed: $(printf '%s' "$out" | tail -c 300)"; return 1; }
	out=$(printf '%s' "$out" | "$E2E_PY" -c 'import json, sys
e = json.load(sys.stdin)["end"]
print(e["sum_received"]["bytes"])' 2>&1) || { E2E_WHY="iperf3 output: $out"; return 1; }
	if [ "$out" -lt "$NBYTES" ]; then
		E2E_WHY="the client got $out bytes of $NBYTES"; return 1
	fi
	E2E_WHY="$out bytes down"
}

e2e_start_sluice "$ROOT/config/examples/proxy-all-tcp.ini" || e2e_die "sluice start: $E2E_WHY"
e2e_check proxy_upload_from_a_smaller_mtu_leaves_in_whole_segments upload_whole_segments
e2e_check proxy_download_to_a_smaller_mtu_fits_it download_fits
e2e_check proxy_mtu_clean_exit e2e_stop_sluice
e2e_finish
