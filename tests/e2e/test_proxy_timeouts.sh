#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The proxy gives up on a reader that never reads (issue 17, defect 3).
# The client's kernel connects through config/examples/proxy-all-tcp.ini
# with [proxy] persist_timeout = 3s and never reads; the server sends
# until its socket blocks. The client's kernel advertises a zero window
# and answers every zero-window probe, so only the persist timeout can end
# this: both ends must see a reset within persist_timeout plus slack of
# the window closing, sluice must count it (tcp_persist_timeouts), and
# every mbuf must be back in the pool at exit. Without the timeout the
# connection (and the half megabyte it pins) lives forever.
set -u
. "$(dirname "$0")/lib.sh"
E2E_TEST=proxy_timeouts
ROOT=$(cd "$E2E_DIR/../.." && pwd)
PORT=7600

e2e_require_tools
e2e_setup
{ cat "$ROOT/config/examples/proxy-all-tcp.ini"; printf 'persist_timeout = %s\n' "${E2E_PERSIST:-3s}"; } \
	>"$E2E_TMP/persist.ini"

PEER=$E2E_TMP/peer.py
cat >"$PEER" <<'PY'
import socket, sys, time

mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode == "flood":      # accept, send until the connection dies
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((host, port)); ls.listen(1); ls.settimeout(20)
    c, _ = ls.accept()
    c.settimeout(30)
    sent, last = 0, time.monotonic()
    try:
        while True:
            sent += c.send(b"z" * 65536)
            last = time.monotonic()    # the last send that moved data
    except ConnectionResetError:
        print("RESET %d %.1f" % (sent, time.monotonic() - last))
    except OSError as e:
        print("ERR %s %d" % (e, sent))
else:                    # stall: connect with a small buffer, never read
    c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
    c.connect((host, port))
    t0 = time.monotonic()
    time.sleep(float(sys.argv[4]))
    try:
        n = len(c.recv(1 << 20))
        while n:
            n = len(c.recv(1 << 20))
        print("EOF")
    except ConnectionResetError:
        print("RESET")
PY

stalled_reader_is_reset() {
	local port=$PORT out cout
	PORT=$((PORT + 1))
	srv timeout --foreground 40 "$E2E_PY" "$PEER" flood "$SRV4" "$port" \
		</dev/null >"$E2E_TMP/flood.$port" 2>&1 &
	local spid=$!
	E2E_PIDS+=($spid)
	e2e_wait_listen "$port" || { E2E_WHY="the server did not listen"; return 1; }
	# The client sleeps 8 s without reading, then looks at its socket.
	cout=$(cli timeout --foreground 40 "$E2E_PY" "$PEER" stall "$SRV4" "$port" 8 \
		</dev/null 2>&1)
	wait "$spid"
	out=$(cat "$E2E_TMP/flood.$port")
	set -- $out
	if [ "${1:-}" != RESET ]; then
		E2E_WHY="the server was not reset: '$out'"; return 1
	fi
	# Reset within persist_timeout (3 s) and probe slack of its last send.
	if ! awk -v t="$3" 'BEGIN { exit !(t <= 8.0) }'; then
		E2E_WHY="the server was reset $3 s after its last send, want <= 8 s"; return 1
	fi
	if [ "$cout" != RESET ]; then
		E2E_WHY="the client saw '$cout', want RESET"; return 1
	fi
	E2E_WHY="server reset $3 s after its last send of $2 bytes; client reset"
}

persist_counted() {
	local res
	res=$("$E2E_PY" -c 'import json, sys
t = json.loads(sys.argv[1])
ok = t["tcp_persist_timeouts"] == 1 and t["connections_active"] == 0
print(("OK " if ok else "ERR ") + "tcp_persist_timeouts=%d connections_active=%d tcp_zero_window_probes=%d" %
      (t["tcp_persist_timeouts"], t["connections_active"], t["tcp_zero_window_probes"]))' \
		"$(e2e_tel /sluice/proxy)" 2>&1)
	E2E_WHY=${res#* }
	case "$res" in OK*) return 0 ;; esac
	return 1
}

e2e_start_sluice "$E2E_TMP/persist.ini" || e2e_die "sluice start: $E2E_WHY"
e2e_check a_reader_that_never_reads_is_reset_after_the_persist_timeout stalled_reader_is_reset
e2e_check the_persist_timeout_is_counted persist_counted
e2e_check proxy_timeouts_clean_exit e2e_stop_sluice
e2e_finish
