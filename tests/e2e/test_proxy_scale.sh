#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The transparent TCP proxy at scale, against the kernel's TCP on both
# sides (issue 6):
# - transfers of 1 B, 1 KB+1, 64 KB, 1 MB, 100 MB and 1 GB each way over
#   IPv4, and 1 KB+1, 1 MB and 100 MB each way over IPv6, through
#   config/examples/proxy-all-tcp.ini: the sender generates a seeded
#   pseudo-random stream on the fly and hashes it, the receiver hashes what
#   arrives, and the sha256 and lengths must be equal (tests/e2e/stream_peer.py);
# - 1,000 connections open at the same time (one selector-driven process
#   each side), each carrying data both ways, all verified, with the
#   proxy's counters showing 1,000 proxied connections open at once;
# - a server that never answers: through the plain bridge and through the
#   proxy the client sees the same connect timeout, and the proxy counts
#   it as unreachable and releases the connection's table entry.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_xfer.sh"
E2E_TEST=proxy_scale
CFG=$E2E_DIR/../../config/examples/proxy-all-tcp.ini
PEER=$E2E_DIR/stream_peer.py
NCONN=${E2E_PROXY_NCONN:-1000}
BIG=${E2E_PROXY_BIG:-1000000000}   # the largest transfer, bytes
UNREACH4=198.18.0.99               # owned by no host

e2e_require_tools
e2e_setup
# The peers set CUBIC on each socket (STREAM_PEER_CC in stream_peer.py):
# a namespace may not pick it when the host only allows others (bbr here).
# 1,000 connections at once (each peer raises its own file limit:
# stream_peer.py).
e2e_many_connections


human() {
	awk -v b="$1" 'BEGIN { if (b >= 1e9) printf "%g GB", b / 1e9; else if (b >= 1e6) printf "%g MB", b / 1e6;
		else if (b >= 1000) printf "%g kB", b / 1000; else printf "%d B", b }'
}

# xfer up|down HOST SIZE PORT: one transfer, sha256 compared. Sets
# E2E_WHY to the size, the time and (from 1 MB) the goodput.
xfer() {
	stream_xfer "$1" "$2" "$3" "$4" 90 || return 1
	E2E_WHY="$(human "$3") in $XFER_SECS s, sha256 equal"
	[ "$3" -ge 1000000 ] && E2E_WHY="$E2E_WHY, $(stream_mbps "$3" "$XFER_SECS") Mbit/s"
	return 0
}

# unreachable_connect: one connect() to UNREACH4 from the client, whose
# SYN retries are cut to 2 (this kernel then gives up after about 7 s;
# with tcp_syn_linear_timeouts it resends every second meanwhile). Sets
# UNREACH_OUT.
unreachable_connect() {
	UNREACH_OUT=$(cli timeout --foreground 30 "$E2E_PY" "$PEER" connect "$UNREACH4" 7100 2>&1)
	case "$UNREACH_OUT" in
	ETIMEDOUT*) E2E_WHY="client saw $UNREACH_OUT s"; return 0 ;;
	esac
	E2E_WHY="client saw '$UNREACH_OUT', want ETIMEDOUT"
	return 1
}
cli sysctl -qw net.ipv4.tcp_syn_retries=2 || e2e_die "sysctl tcp_syn_retries failed"
# Frames to the unowned address go to the server's MAC, so they cross
# sluice and the server's kernel drops them (not its address, no forwarding).
SRV_MAC=$(ip -n "$NS_SRV" -j link show "$SRV_IF" | "$E2E_PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])')
ip -n "$NS_CLI" neigh replace "$UNREACH4" lladdr "$SRV_MAC" dev "$CLI_IF" nud permanent ||
	e2e_die "static neighbour for $UNREACH4 failed"

# --- the plain bridge: what a client sees from an unreachable server ---
e2e_start_sluice "" || e2e_die "sluice start (bridge): $E2E_WHY"
e2e_ping 4 3 0.05 || e2e_die "no ping through the bridge: $E2E_WHY"
e2e_check unreachable_bridged unreachable_connect
BRIDGED_UNREACH=$UNREACH_OUT
e2e_stop_sluice || e2e_fail bridge_clean_exit "$E2E_WHY"
cli sysctl -qw net.ipv4.tcp_syn_retries=6

# --- the size ladder and 1,000 connections through proxy-all-tcp.ini ---
e2e_start_sluice "$CFG" || e2e_die "sluice start (proxy): $E2E_WHY"
grep -q '^proxy: intercepting' "$SLUICE_LOG" ||
	e2e_fail proxy_configured "no 'proxy: intercepting' line in sluice's output"
e2e_ping 4 3 0.05 || e2e_fail proxy_ping "$E2E_WHY"
e2e_ping 6 3 0.05 || e2e_fail proxy_ping6 "$E2E_WHY"

port=7200
for size in 1 1025 65536 1000000 100000000 "$BIG"; do
	for dir in up down; do
		e2e_check "proxy_xfer_${dir}_$(human "$size" | tr -d ' ')" xfer "$dir" "$SRV4" "$size" $port
		port=$((port + 1))
	done
done
for size in 1025 1000000 100000000; do
	for dir in up down; do
		e2e_check "proxy_xfer6_${dir}_$(human "$size" | tr -d ' ')" xfer "$dir" "$SRV6" "$size" $port
		port=$((port + 1))
	done
done
NXFER=$(( (port - 7200) ))

# NCONN connections opened at once; only when every one is established
# does any of them carry data. Telemetry, read while they are all open,
# must show NCONN proxied connections active.
many() {
	local ready=$E2E_TMP/many.ready go=$E2E_TMP/many.go spid cpid i act=
	local before
	before=$(e2e_tel /sluice/proxy connections_opened)
	srv timeout --foreground 120 "$E2E_PY" "$PEER" hold-srv 7300 "$NCONN" 16384 \
		>"$E2E_TMP/many.srv" 2>&1 &
	spid=$!; E2E_PIDS+=("$spid")
	e2e_wait_listen 7300 || { E2E_WHY="server did not listen"; return 1; }
	cli timeout --foreground 120 "$E2E_PY" "$PEER" hold-cli "$SRV4" 7300 "$NCONN" 16384 \
		"$ready" "$go" >"$E2E_TMP/many.cli" 2>&1 &
	cpid=$!; E2E_PIDS+=("$cpid")
	for i in $(seq 1 300); do
		[ -s "$ready" ] && break
		kill -0 "$cpid" 2>/dev/null || break
		sleep 0.1
	done
	if [ -s "$ready" ]; then
		act=$(e2e_tel /sluice/proxy connections_active)
		MANY_OPENED=$(( $(e2e_tel /sluice/proxy connections_opened) - before ))
	fi
	touch "$go"
	wait "$cpid"; wait "$spid"
	[ -s "$ready" ] || { E2E_WHY="client: $(tail -1 "$E2E_TMP/many.cli")"; return 1; }
	[ "$(cat "$E2E_TMP/many.cli")" = "OK $NCONN/$NCONN" ] ||
		{ E2E_WHY="client: $(tail -1 "$E2E_TMP/many.cli"); server: $(tail -1 "$E2E_TMP/many.srv")"; return 1; }
	[ "$(cat "$E2E_TMP/many.srv")" = "served $NCONN" ] ||
		{ E2E_WHY="server: $(tail -1 "$E2E_TMP/many.srv")"; return 1; }
	if [ "${act:-0}" -lt "$NCONN" ] || [ "$MANY_OPENED" -lt "$NCONN" ]; then
		E2E_WHY="while all $NCONN were open: connections_active=$act, $MANY_OPENED opened"
		return 1
	fi
	E2E_WHY="$NCONN/$NCONN open at once (connections_active=$act), 16 kB up and 32 kB back each, intact"
}
e2e_check proxy_1000_connections many

counters() {
	local out
	out=$("$E2E_PY" - "$(e2e_tel /sluice/proxy)" "$NXFER" "$NCONN" <<'PY'
import json, sys
c = json.loads(sys.argv[1])
nx, nc = int(sys.argv[2]), int(sys.argv[3])
errs = []
if c["connections_opened"] < nx + nc:
    errs.append("connections_opened=%d < %d" % (c["connections_opened"], nx + nc))
for k in ("syn_bridged_table_full", "syn_bridged_connect_failed", "accept_failed",
          "relay_failed", "connections_reset", "tcp_syn_dropped_table_full"):
    if c[k]: errs.append("%s=%d" % (k, c[k]))
if errs: print("ERR " + "; ".join(errs))
else: print("OK opened=%d closed=%d bytes_up=%d bytes_down=%d syn_duplicates_dropped=%d" % (
    c["connections_opened"], c["connections_closed"], c["bytes_up"], c["bytes_down"],
    c["syn_duplicates_dropped"]))
PY
)
	case "$out" in OK*) E2E_WHY=${out#OK }; return 0 ;; esac
	E2E_WHY=${out#ERR }
	return 1
}
e2e_check proxy_scale_counters counters
e2e_check proxy_scale_clean_exit e2e_stop_sluice

# --- an unreachable server through the proxy ---
# The engine's SYN retries cut to 2 as well (by default 6, about 2
# minutes), so that the entry is seen released within the test.
UCFG=$E2E_TMP/proxy-unreachable.ini
{ cat "$CFG"; echo "syn_retries = 2"; } >"$UCFG"
cli sysctl -qw net.ipv4.tcp_syn_retries=2
e2e_start_sluice "$UCFG" || e2e_die "sluice start (proxy, unreachable): $E2E_WHY"
unreach_proxy() {
	unreachable_connect || return 1
	local t=$E2E_WHY c i
	# The server leg gives up 7 s after the SYN too; allow it 3 s more.
	for i in $(seq 1 30); do
		c=$(e2e_tel /sluice/proxy)
		[ "$("$E2E_PY" -c 'import json,sys; print(json.loads(sys.argv[1])["connections_unreachable"])' "$c")" = 1 ] && break
		sleep 0.1
	done
	"$E2E_PY" - "$c" "$t" "$BRIDGED_UNREACH" "$UNREACH_OUT" <<'PY' >"$E2E_TMP/unreach.out"
import json, sys
c = json.loads(sys.argv[1])
errs = []
if c["syn_intercepted"] != 1: errs.append("syn_intercepted=%d, want 1" % c["syn_intercepted"])
if c["connections_unreachable"] != 1: errs.append("connections_unreachable=%d, want 1" % c["connections_unreachable"])
if c["connections_active"] != 0: errs.append("connections_active=%d, want 0 (entry not released)" % c["connections_active"])
if c["connections_closed"] != 1: errs.append("connections_closed=%d, want 1" % c["connections_closed"])
if c["syn_duplicates_dropped"] < 1: errs.append("syn_duplicates_dropped=%d, want the client's retries" % c["syn_duplicates_dropped"])
try:
    b, p = float(sys.argv[3].split()[1]), float(sys.argv[4].split()[1])
    if abs(b - p) > 2: errs.append("timed out after %.1f s, %.1f s through the bridge" % (p, b))
except (IndexError, ValueError):
    errs.append("no bridged timeout to compare with ('%s')" % sys.argv[3])
print(("ERR " + "; ".join(errs)) if errs else
      "OK %s; bridge: %s s; unreachable=1, syn_duplicates_dropped=%d, active=0" % (
          sys.argv[2], sys.argv[3], c["syn_duplicates_dropped"]))
PY
	local out
	out=$(cat "$E2E_TMP/unreach.out")
	case "$out" in OK*) E2E_WHY=${out#OK }; return 0 ;; esac
	E2E_WHY=${out#ERR }
	return 1
}
e2e_check proxy_unreachable unreach_proxy
e2e_check proxy_unreachable_clean_exit e2e_stop_sluice

e2e_finish
