#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Stalled readers cannot drain the mbuf pool through the proxy (issue 17,
# defect 3). sluice runs config/examples/proxy-all-tcp.ini with a small
# pool ([sluice] mbufs = 4095), [proxy] mbuf_budget = 1000 and
# persist_timeout = 5s. 12 connections whose reader never reads each
# could pin snd_buf + rcv_buf (512 KiB, about 360 mbufs): far more than
# the pool. Memory pressure must close the windows first: sampled through
# telemetry, the pool never falls below 25% free. A victim transfer of
# 1 MB started during the stall must still arrive intact once the persist
# timeout has reset the stalled connections, and every mbuf must be back
# at exit. With the budget as large as the pool allows (E2E_BUDGET=3071)
# the pool falls below 25% free and the first check fails.
set -u
. "$(dirname "$0")/lib.sh"
E2E_TEST=proxy_pressure
ROOT=$(cd "$E2E_DIR/../.." && pwd)
NSTALL=12
PORT=7700

e2e_require_tools sha256sum
e2e_setup
{ printf '[sluice]\nmbufs = 4095\n\n'; cat "$ROOT/config/examples/proxy-all-tcp.ini"
  printf 'persist_timeout = 5s\nmbuf_budget = %s\n' "${E2E_BUDGET:-1000}"; } >"$E2E_TMP/pressure.ini"

PEER=$E2E_TMP/peer.py
cat >"$PEER" <<'PY'
import hashlib, socket, sys, threading, time

mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])

def flood(c):
    try:
        while c.send(b"z" * 65536):
            pass
    except OSError:
        pass

if mode == "floods":     # floods N: accept N connections, send on each until it dies
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((host, port)); ls.listen(64); ls.settimeout(30)
    ts = []
    for _ in range(int(sys.argv[4])):
        c, _ = ls.accept()
        t = threading.Thread(target=flood, args=(c,), daemon=True); t.start(); ts.append(t)
    for t in ts:
        t.join(60)
elif mode == "stalls":   # stalls N SECS: N connections that never read
    cs = []
    for _ in range(int(sys.argv[4])):
        c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
        c.settimeout(10)
        c.connect((host, port)); cs.append(c)
    time.sleep(float(sys.argv[5]))
elif mode == "sink":     # sink: accept one, print sha256 and length of what came
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((host, port)); ls.listen(1); ls.settimeout(60)
    c, _ = ls.accept(); c.settimeout(60)
    h, n = hashlib.sha256(), 0
    while True:
        b = c.recv(65536)
        if not b:
            break
        h.update(b); n += len(b)
    print(h.hexdigest(), n)
else:                    # send FILE: send it, half-close, wait for EOF
    c = socket.create_connection((host, port), timeout=60)
    c.settimeout(60)
    c.sendall(open(sys.argv[4], "rb").read()); c.shutdown(socket.SHUT_WR)
    while c.recv(65536):
        pass
PY

# Sample the pool every 100 ms while the attack runs.
sample_pool() {
	while :; do
		e2e_tel /sluice/totals 2>/dev/null | "$E2E_PY" -c 'import json, sys
t = json.load(sys.stdin); print(t["mempool_in_use"])' 2>/dev/null
		sleep 0.1
	done >"$E2E_TMP/pool.samples"
}

attack_and_victim() {
	local fport=$PORT vport=$((PORT + 1)) vout spid
	head -c 1000000 /dev/urandom >"$E2E_TMP/victim.bin"
	srv timeout --foreground 60 "$E2E_PY" "$PEER" floods "$SRV4" "$fport" "$NSTALL" \
		</dev/null >/dev/null 2>&1 &
	E2E_PIDS+=($!)
	srv timeout --foreground 60 "$E2E_PY" "$PEER" sink "$SRV4" "$vport" \
		</dev/null >"$E2E_TMP/victim.out" 2>&1 &
	spid=$!
	E2E_PIDS+=($spid)
	e2e_wait_listen "$fport" && e2e_wait_listen "$vport" ||
		{ E2E_WHY="servers did not listen"; return 1; }
	sample_pool &
	local sampler=$!
	E2E_PIDS+=($sampler)
	cli timeout --foreground 60 "$E2E_PY" "$PEER" stalls "$SRV4" "$fport" "$NSTALL" 15 \
		</dev/null >/dev/null 2>&1 &
	E2E_PIDS+=($!)
	sleep 2   # the stalled connections fill up
	cli timeout --foreground 60 "$E2E_PY" "$PEER" send "$SRV4" "$vport" "$E2E_TMP/victim.bin" \
		</dev/null >/dev/null 2>"$E2E_TMP/victim.err"
	wait "$spid"
	kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
	vout=$(cat "$E2E_TMP/victim.out")
	[ "$vout" = "$(sha256sum <"$E2E_TMP/victim.bin" | cut -d' ' -f1) 1000000" ] ||
		{ VICTIM_WHY="victim got '$vout': $(head -c 200 "$E2E_TMP/victim.err")"; return 1; }
	VICTIM_WHY="1 MB intact"
}

pool_stayed_free() {
	local peak
	peak=$(sort -n "$E2E_TMP/pool.samples" | tail -1)
	[ -n "$peak" ] || { E2E_WHY="no pool samples"; return 1; }
	E2E_WHY="peak $peak of 4095 mbufs in use over $(wc -l <"$E2E_TMP/pool.samples") samples"
	[ "$peak" -le $((4095 * 3 / 4)) ]
}

pressure_counted() {
	local res
	res=$("$E2E_PY" -c 'import json, sys
t = json.loads(sys.argv[1])
ok = (t["memory_pressure_ms"] > 0 and t["tcp_persist_timeouts"] >= 1
      and t["windows_reopened"] >= 1)
print(("OK " if ok else "ERR ") +
      "memory_pressure_ms=%d tcp_persist_timeouts=%d windows_reopened=%d" %
      (t["memory_pressure_ms"], t["tcp_persist_timeouts"], t["windows_reopened"]))' "$(e2e_tel /sluice/proxy)" 2>&1)
	E2E_WHY=${res#* }
	case "$res" in OK*) return 0 ;; esac
	return 1
}

VICTIM_WHY=
e2e_start_sluice "$E2E_TMP/pressure.ini" || e2e_die "sluice start: $E2E_WHY"
attack_and_victim; victim_rc=$?
e2e_check stalled_readers_leave_a_quarter_of_the_pool_free pool_stayed_free
victim() { E2E_WHY=$VICTIM_WHY; return "$victim_rc"; }
e2e_check a_transfer_during_the_stall_arrives_intact victim
e2e_check memory_pressure_and_persist_timeouts_are_counted pressure_counted
e2e_check proxy_pressure_clean_exit e2e_stop_sluice
e2e_finish
