#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Idle proxied connections do not starve one that moves data. sluice runs
# config/examples/mptcp-proxy.ini at its defaults (every TCP connection
# proxied, MPTCP terminated; mbuf_budget auto: 5,461 mbufs) with 5 ms of
# delay each way ([impair] delay), so a transfer's goodput follows the
# window the proxy offers it. One 40 MB transfer each way is timed
# alone; then NIDLE connections (one 64-byte request and reply each,
# then silent: perf/proxy_load.py hold), half of them plain TCP and half
# Multipath TCP (--mptcp: the client's kernel MPTCP, one subflow each),
# are held open and the same transfers run beside them.
# - The idle legs give back what they were offered (telemetry:
#   tcp_receive_windows_reclaimed), MPTCP subflows included, and what
#   every window still lets in beyond its two segments stays within the
#   pool (rcv_offered_bytes <= rcv_pool_bytes).
# - Beside them, each transfer arrives intact at no less than a quarter
#   of its goodput alone. When every leg got one share of what was left
#   of the budget, 1,000 idle connections held each window to 3.9 kB:
#   4.5 Mbit/s against 371 alone. When MPTCP subflows kept theirs,
#   1,000 idle MPTCP connections did the same: 4.5 Mbit/s against 365.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_xfer.sh"
E2E_TEST=proxy_idle
ROOT=$(cd "$E2E_DIR/../.." && pwd)
PEER=$E2E_DIR/stream_peer.py
NIDLE=${E2E_PROXY_NIDLE:-1000}
NMP=$((NIDLE / 2)) # of them MPTCP
SIZE=40000000
HOLD_PORT=7150
XPORT=7160

e2e_require_tools
e2e_setup
e2e_many_connections
{ cat "$ROOT/config/examples/mptcp-proxy.ini"; printf '\n[impair]\ndelay = 5ms\nlimit = 20000\n'; } \
	>"$E2E_TMP/idle.ini"

# timed DIR TAG: one transfer; its goodput goes to MBPS_<DIR>_<TAG>.
timed() {
	stream_xfer "$1" "$SRV4" "$SIZE" "$XPORT" 60 || return 1
	XPORT=$((XPORT + 1))
	local mbps
	mbps=$(stream_mbps "$SIZE" "$XFER_SECS")
	eval "MBPS_$1_$2=\$mbps"
	E2E_WHY="40 MB intact in $XFER_SECS s, $mbps Mbit/s"
}

# not_starved DIR: the transfer beside the idle connections, against the
# same transfer alone.
not_starved() {
	local alone with
	timed "$1" idle || return 1
	eval "alone=\${MBPS_$1_alone:-0} with=\$MBPS_$1_idle"
	E2E_WHY="$with Mbit/s beside $NIDLE idle connections, $alone alone"
	[ "$alone" != 0 ] && [ $((with * 4)) -ge "$alone" ]
}

# held_idle KIND PID N: perf/proxy_load.py hold (output hold.KIND.*) has
# its N connections open.
held_idle() {
	local i out=$E2E_TMP/hold.$1.out
	for ((i = 0; i < 1200; i++)); do
		grep -q '^held' "$out" && break
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	E2E_WHY="$1: $(head -1 "$out")"
	[ "$E2E_WHY" = "$1: held $3" ] || { E2E_WHY="$E2E_WHY $(tail -1 "$E2E_TMP/hold.$1.err")"; return 1; }
}

windows_taken_back() {
	local res
	res=$("$E2E_PY" -c 'import json, sys
t, n, m = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
ok = (t["connections_active"] >= n and t["mptcp_connections_active"] >= m
      and t["tcp_receive_windows_reclaimed"] >= n
      and t["rcv_offered_bytes"] <= t["rcv_pool_bytes"])
print(("OK " if ok else "ERR ") +
      "connections_active=%d mptcp_connections_active=%d tcp_receive_windows_reclaimed=%d "
      "rcv_offered_bytes=%d rcv_pool_bytes=%d" %
      (t["connections_active"], t["mptcp_connections_active"], t["tcp_receive_windows_reclaimed"],
       t["rcv_offered_bytes"], t["rcv_pool_bytes"]))' "$(e2e_tel /sluice/proxy)" "$NIDLE" "$NMP" 2>&1)
	E2E_WHY=${res#* }
	case "$res" in OK*) return 0 ;; esac
	return 1
}

e2e_start_sluice "$E2E_TMP/idle.ini" || e2e_die "sluice start: $E2E_WHY"
e2e_ping 4 3 0.05 || e2e_die "no ping through sluice: $E2E_WHY"
srv_daemon timeout 300 "$E2E_PY" "$ROOT/perf/proxy_load.py" server "$HOLD_PORT"
e2e_wait_listen "$HOLD_PORT" || e2e_die "proxy_load.py server did not listen"
e2e_check transfer_up_alone timed up alone
e2e_check transfer_down_alone timed down alone
cli timeout --foreground 240 "$E2E_PY" "$ROOT/perf/proxy_load.py" hold "$SRV4" "$HOLD_PORT" \
	"$((NIDLE - NMP))" --secs 120 >"$E2E_TMP/hold.tcp.out" 2>"$E2E_TMP/hold.tcp.err" &
HOLD_PID=$!
E2E_PIDS+=("$HOLD_PID")
cli timeout --foreground 240 "$E2E_PY" "$ROOT/perf/proxy_load.py" hold "$SRV4" "$HOLD_PORT" \
	"$NMP" --secs 120 --mptcp >"$E2E_TMP/hold.mptcp.out" 2>"$E2E_TMP/hold.mptcp.err" &
HOLD_MP_PID=$!
E2E_PIDS+=("$HOLD_MP_PID")
e2e_check idle_connections_held held_idle tcp "$HOLD_PID" "$((NIDLE - NMP))"
e2e_check idle_mptcp_connections_held held_idle mptcp "$HOLD_MP_PID" "$NMP"
sleep 1 # past the 200 ms after which an idle leg's window is taken back
e2e_check idle_legs_give_their_windows_back windows_taken_back
e2e_check transfer_up_beside_idle_connections_is_not_starved not_starved up
e2e_check transfer_down_beside_idle_connections_is_not_starved not_starved down
_e2e_kill_child "$HOLD_PID" TERM
_e2e_kill_child "$HOLD_MP_PID" TERM
wait "$HOLD_PID" "$HOLD_MP_PID" 2>/dev/null
e2e_check proxy_idle_clean_exit e2e_stop_sluice
e2e_finish
