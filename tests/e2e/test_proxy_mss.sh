#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The MSS clamp holds on proxied connections (issue 17, defect 5). With
# config/examples/mss-clamp-1400.ini and config/examples/proxy-all-tcp.ini
# in one file, each kernel's connection is terminated by the proxy, so the
# SYN-ACK the client sees and the SYN the server sees are sluice's own.
# Neither may announce more than 1400: TCP_MAXSEG must be 1388 (1400 less
# the timestamp option) at both kernel ends, over IPv4 and IPv6, and the
# transfer must arrive intact. The proxy counters must show the
# connections were proxied, not bridged.
set -u
. "$(dirname "$0")/lib.sh"
E2E_TEST=proxy_mss
PEER=$E2E_DIR/tcpopt_peer.py
ROOT=$(cd "$E2E_DIR/../.." && pwd)
NBYTES=${E2E_TCPOPT_BYTES:-1000000}
PORT=7500

e2e_require_tools
e2e_setup
cat "$ROOT/config/examples/mss-clamp-1400.ini" \
	"$ROOT/config/examples/proxy-all-tcp.ini" >"$E2E_TMP/clamp-proxy.ini"

# xfer FAMILY: one TCP connection, NBYTES checked by SHA-256 at the
# server; TCP_MAXSEG at both ends must be 1388.
xfer() {
	local fam=$1 dst out port=$PORT
	PORT=$((PORT + 1))
	if [ "$fam" = 6 ]; then dst=$SRV6; else dst=$SRV4; fi
	srv timeout --foreground 40 "$E2E_PY" "$PEER" serve "$dst" "$port" tcp \
		</dev/null >"$E2E_TMP/serve.$port.log" 2>&1 &
	E2E_PIDS+=($!)
	e2e_wait_listen "$port" || { E2E_WHY="the server did not listen on $port"; return 1; }
	out=$(cli timeout --foreground 40 "$E2E_PY" "$PEER" send "$dst" "$port" tcp \
		"$NBYTES" </dev/null 2>"$E2E_TMP/send.$port.err") || {
		E2E_WHY="client failed: $(head -c 300 "$E2E_TMP/send.$port.err")"; return 1; }
	set -- $out
	if [ $# != 9 ]; then E2E_WHY="unexpected peer output '$out'"; return 1; fi
	local csha=$1 cmss=$3 ssha=$6 slen=$7 smss=$8
	if [ "$ssha" != "$csha" ] || [ "$slen" != "$NBYTES" ]; then
		E2E_WHY="the server got $slen bytes, sha256 $ssha; sent $NBYTES, $csha"; return 1
	fi
	if [ "$cmss" != 1388 ] || [ "$smss" != 1388 ]; then
		E2E_WHY="TCP_MAXSEG client $cmss server $smss, want 1388 at both"; return 1
	fi
	E2E_WHY="$NBYTES bytes intact; TCP_MAXSEG $cmss/$smss (client/server)"
}

proxied() {
	local res
	res=$("$E2E_PY" -c 'import json, sys
t = json.loads(sys.argv[1])
ok = t["connections_opened"] >= 2 and t["syn_bridged_table_full"] == 0
print(("OK " if ok else "ERR ") + "connections_opened=%d" % t["connections_opened"])' \
		"$(e2e_tel /sluice/proxy)" 2>&1)
	E2E_WHY=${res#* }
	case "$res" in OK*) return 0 ;; esac
	return 1
}

e2e_start_sluice "$E2E_TMP/clamp-proxy.ini" || e2e_die "sluice start: $E2E_WHY"
e2e_check proxied_tcp4_never_announces_mss_above_clamp xfer 4
e2e_check proxied_tcp6_never_announces_mss_above_clamp xfer 6
e2e_check clamped_connections_were_proxied proxied
e2e_check proxy_mss_clean_exit e2e_stop_sluice
e2e_finish
