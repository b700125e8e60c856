#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The transparent TCP proxy against the kernel's TCP on both sides, with
# config/examples/proxy-all-tcp.ini: 1 MB each way with sha256 compared
# (the sender half-closes and waits for the other side's FIN), 1 MB over
# IPv6, a RST from either side reaching the other as a reset, a stalled
# reader that must not make sluice buffer the whole transfer, 200
# concurrent echoed connections, TCP Fast Open cookies crossing both legs, iperf3
# through the proxy against the same iperf3 through the plain bridge, a
# closed port refused at the client as without the proxy, counters that
# show the connections were proxied and not bridged, and a clean exit
# with every mbuf back in the pool.
set -u
. "$(dirname "$0")/lib.sh"
E2E_TEST=proxy
CFG=$E2E_DIR/../../config/examples/proxy-all-tcp.ini

e2e_require_tools sha256sum head
e2e_setup
for ns in "$NS_CLI" "$NS_SRV"; do
	ip netns exec "$ns" sysctl -qw net.ipv4.tcp_congestion_control=cubic 2>/dev/null
done

PEER=$E2E_TMP/peer.py
cat >"$PEER" <<'PY'
import errno, hashlib, socket, sys

def sha_of_stream(s):
    h = hashlib.sha256()
    n = 0
    while True:
        b = s.recv(65536)
        if not b:
            return h.hexdigest(), n
        h.update(b)
        n += len(b)

def listen(port):
    ls = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    ls.bind(("::", port))
    ls.listen(1)
    ls.settimeout(30)
    c, _ = ls.accept()
    c.settimeout(30)
    return c

def connect(host, port):
    c = socket.create_connection((host, port), timeout=10)
    c.settimeout(30)
    return c

mode = sys.argv[1]
if mode == "sink":          # sink PORT: read to EOF, print sha, close
    c = listen(int(sys.argv[2]))
    print("%s %d" % sha_of_stream(c)); c.close()
elif mode == "source":      # source PORT FILE: send FILE, half-close, wait EOF
    c = listen(int(sys.argv[2]))
    c.sendall(open(sys.argv[3], "rb").read()); c.shutdown(socket.SHUT_WR)
    sha_of_stream(c); c.close()
elif mode == "send":        # send HOST PORT FILE: send, half-close, wait EOF
    c = connect(sys.argv[2], int(sys.argv[3]))
    c.sendall(open(sys.argv[4], "rb").read()); c.shutdown(socket.SHUT_WR)
    sha_of_stream(c); c.close()
elif mode == "recv":        # recv HOST PORT: read to EOF, print sha
    c = connect(sys.argv[2], int(sys.argv[3]))
    print("%s %d" % sha_of_stream(c)); c.close()
elif mode == "rstwait":     # rstwait PORT: read until the peer resets
    c = listen(int(sys.argv[2]))
    try:
        while c.recv(65536):
            pass
        print("EOF")
    except ConnectionResetError:
        print("RESET")
elif mode == "rst":         # rst HOST PORT: send a little, then abort (RST)
    c = connect(sys.argv[2], int(sys.argv[3]))
    c.sendall(b"x" * 1000)
    import struct, time
    time.sleep(0.3)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()
elif mode == "srvrst":      # srvrst PORT: accept, then abort (RST)
    c = listen(int(sys.argv[2]))
    import struct, time
    time.sleep(0.3)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()
elif mode == "cliwait":     # cliwait HOST PORT: read until the peer resets
    c = connect(sys.argv[2], int(sys.argv[3]))
    try:
        while c.recv(65536):
            pass
        print("EOF")
    except ConnectionResetError:
        print("RESET")
elif mode == "slowsink":    # slowsink PORT SECS: read nothing for SECS, then to EOF
    c = listen(int(sys.argv[2]))
    import time
    time.sleep(float(sys.argv[3]))
    print("%s %d" % sha_of_stream(c)); c.close()
elif mode in ("echosrv", "many"):
    # echosrv PORT N: echo N connections back, each to EOF.
    # many HOST PORT N: N concurrent connections, 20 kB each, echoed.
    import asyncio, os
    async def echo(r, w):
        while True:
            b = await r.read(65536)
            if not b:
                break
            w.write(b)
            await w.drain()
        w.close()
        done[0] += 1
        if done[0] == n:
            finished.set()
    async def srv(port):
        global finished
        finished = asyncio.Event()
        s = await asyncio.start_server(echo, None, port, backlog=4096)
        await asyncio.wait_for(finished.wait(), 60)
        s.close()
        print("echoed %d" % done[0])
    async def one(host, port, i):
        data = os.urandom(20000)
        r, w = await asyncio.wait_for(asyncio.open_connection(host, port), 20)
        w.write(data)
        await w.drain()
        w.write_eof()
        got = await asyncio.wait_for(r.read(-1), 40)
        w.close()
        return got == data
    async def cli(host, port):
        res = await asyncio.gather(*(one(host, port, i) for i in range(n)),
                                   return_exceptions=True)
        ok = sum(1 for x in res if x is True)
        bad = [repr(x) for x in res if x is not True][:3]
        print("%d/%d ok %s" % (ok, n, " ".join(bad)))
    done = [0]
    if mode == "echosrv":
        n = int(sys.argv[3]); asyncio.run(srv(int(sys.argv[2])))
    else:
        n = int(sys.argv[4]); asyncio.run(cli(sys.argv[2], int(sys.argv[3])))
elif mode == "tfosrv":      # tfosrv PORT N: TCP Fast Open listener, echo N
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.setsockopt(socket.IPPROTO_TCP, socket.TCP_FASTOPEN, 16)
    ls.bind(("0.0.0.0", int(sys.argv[2]))); ls.listen(16); ls.settimeout(30)
    for _ in range(int(sys.argv[3])):
        c, _ = ls.accept(); c.settimeout(30)
        c.sendall(sha_of_stream(c)[0].encode()); c.close()
elif mode == "tfocli":      # tfocli HOST PORT: data in the SYN if a cookie is cached
    data = b"fast open through sluice " * 20
    c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # blocking connect
    c.sendto(data, socket.MSG_FASTOPEN, (sys.argv[2], int(sys.argv[3])))
    c.settimeout(30)
    c.shutdown(socket.SHUT_WR)
    got = b""
    while True:
        b = c.recv(4096)
        if not b:
            break
        got += b
    print("OK" if got.decode() == hashlib.sha256(data).hexdigest() else "BAD %r" % got)
elif mode == "refused":     # refused HOST PORT: must get ECONNREFUSED
    try:
        connect(sys.argv[2], int(sys.argv[3]))
        print("connected")
    except OSError as e:
        print("ECONNREFUSED" if e.errno == errno.ECONNREFUSED else "errno %s" % e.errno)
PY
DATA=$E2E_TMP/data.bin
head -c 1000000 /dev/urandom >"$DATA"
WANT="$(sha256sum "$DATA" | cut -d' ' -f1) 1000000"

# 1 MB client -> server: the server prints what it received.
# xfer_up [PORT [SERVER-ADDRESS]]
xfer_up() {
	local port=${1:-7001} dst=${2:-$SRV4} out=$E2E_TMP/up.out spid
	srv timeout --foreground 40 "$E2E_PY" "$PEER" sink "$port" >"$out" 2>&1 &
	spid=$!; E2E_PIDS+=("$spid")
	e2e_wait_listen "$port" || { E2E_WHY="server did not listen"; return 1; }
	e2e_run cli timeout --foreground 40 "$E2E_PY" "$PEER" send "$dst" "$port" "$DATA" \
		>"$E2E_TMP/up.cli" 2>&1 || { E2E_WHY="client: $(tail -1 "$E2E_TMP/up.cli")"; return 1; }
	wait "$spid"
	[ "$(cat "$out")" = "$WANT" ] || { E2E_WHY="server got '$(tail -1 "$out")', want '$WANT'"; return 1; }
	E2E_WHY="sha256 and length equal"
}

# 1 MB server -> client: the client prints what it received.
xfer_down() {
	local out=$E2E_TMP/down.out spid
	srv timeout --foreground 40 "$E2E_PY" "$PEER" source 7002 "$DATA" >"$E2E_TMP/down.srv" 2>&1 &
	spid=$!; E2E_PIDS+=("$spid")
	e2e_wait_listen 7002 || { E2E_WHY="server did not listen"; return 1; }
	e2e_run cli timeout --foreground 40 "$E2E_PY" "$PEER" recv "$SRV4" 7002 \
		>"$out" 2>&1 || { E2E_WHY="client: $(tail -1 "$out")"; return 1; }
	wait "$spid" || { E2E_WHY="server: $(tail -1 "$E2E_TMP/down.srv")"; return 1; }
	[ "$(cat "$out")" = "$WANT" ] || { E2E_WHY="client got '$(tail -1 "$out")', want '$WANT'"; return 1; }
	E2E_WHY="sha256 and length equal"
}

# A server that reads nothing for 3 s while the client sends 8 MB: the
# proxy must close the window toward the client instead of buffering it
# all. Its mbufs in use, sampled during the stall, stay under the two
# buffer limits of the connection's client-to-server direction (256 KiB
# each, at most about 2 mbufs per KiB) plus slack; then every byte
# arrives.
slow_reader() {
	local out=$E2E_TMP/slow.out spid big=$E2E_TMP/big.bin want peak=0 i u b
	head -c 8000000 /dev/urandom >"$big"
	want="$(sha256sum "$big" | cut -d' ' -f1) 8000000"
	srv timeout --foreground 40 "$E2E_PY" "$PEER" slowsink 7006 3 >"$out" 2>&1 &
	spid=$!; E2E_PIDS+=("$spid")
	e2e_wait_listen 7006 || { E2E_WHY="server did not listen"; return 1; }
	cli timeout --foreground 40 "$E2E_PY" "$PEER" send "$SRV4" 7006 "$big" \
		>"$E2E_TMP/slow.cli" 2>&1 &
	local cpid=$!; E2E_PIDS+=("$cpid")
	for i in 1 2 3 4 5; do
		sleep 0.4
		u=$(e2e_tel /sluice/totals mempool_in_use) b=$(e2e_tel /sluice/totals mempool_baseline)
		[ $((u - b)) -gt "$peak" ] && peak=$((u - b))
	done
	wait "$cpid" || { E2E_WHY="client: $(tail -1 "$E2E_TMP/slow.cli")"; return 1; }
	wait "$spid"
	[ "$(cat "$out")" = "$want" ] || { E2E_WHY="server got '$(tail -1 "$out")', want '$want'"; return 1; }
	if [ "$peak" -gt 1500 ]; then
		E2E_WHY="$peak mbufs held while the reader stalled (limit 1500)"; return 1
	fi
	E2E_WHY="8 MB intact; at most $peak mbufs held during the 3 s stall"
}

# 200 connections at once, 20 kB each, echoed back intact.
many_conns() {
	local n=200 out=$E2E_TMP/many.out spid
	srv timeout --foreground 70 "$E2E_PY" "$PEER" echosrv 7007 $n >"$E2E_TMP/many.srv" 2>&1 &
	spid=$!; E2E_PIDS+=("$spid")
	e2e_wait_listen 7007 || { E2E_WHY="server did not listen"; return 1; }
	e2e_run cli timeout --foreground 70 "$E2E_PY" "$PEER" many "$SRV4" 7007 $n \
		>"$out" 2>&1 || { E2E_WHY="client: $(tail -1 "$out")"; return 1; }
	wait "$spid"
	[ "$(cat "$out")" = "$n/$n ok " ] || { E2E_WHY="client: $(tail -1 "$out")"; return 1; }
	E2E_WHY="$n/$n connections echoed 20 kB intact"
}

# The client aborts: the server must see the reset, not an EOF.
client_reset() {
	local out=$E2E_TMP/rst.out spid
	srv timeout --foreground 20 "$E2E_PY" "$PEER" rstwait 7003 >"$out" 2>&1 &
	spid=$!; E2E_PIDS+=("$spid")
	e2e_wait_listen 7003 || { E2E_WHY="server did not listen"; return 1; }
	e2e_run cli timeout --foreground 20 "$E2E_PY" "$PEER" rst "$SRV4" 7003 \
		>"$E2E_TMP/rst.cli" 2>&1 || { E2E_WHY="client: $(tail -1 "$E2E_TMP/rst.cli")"; return 1; }
	wait "$spid"
	[ "$(cat "$out")" = RESET ] || { E2E_WHY="server saw '$(tail -1 "$out")', want RESET"; return 1; }
	E2E_WHY="server saw the reset"
}

# The server aborts: the client must see the reset, not an EOF.
server_reset() {
	local out=$E2E_TMP/srst.out spid
	srv timeout --foreground 20 "$E2E_PY" "$PEER" srvrst 7005 >"$E2E_TMP/srst.srv" 2>&1 &
	spid=$!; E2E_PIDS+=("$spid")
	e2e_wait_listen 7005 || { E2E_WHY="server did not listen"; return 1; }
	e2e_run cli timeout --foreground 20 "$E2E_PY" "$PEER" cliwait "$SRV4" 7005 \
		>"$out" 2>&1 || { E2E_WHY="client: $(tail -1 "$out")"; return 1; }
	wait "$spid"
	[ "$(cat "$out")" = RESET ] || { E2E_WHY="client saw '$(tail -1 "$out")', want RESET"; return 1; }
	E2E_WHY="client saw the reset"
}

# TCP Fast Open through the proxy: the first connection asks for a
# cookie, which must cross both legs (the server's SYN-ACK to the
# client's), so the client caches the server's cookie; the second sends
# data in its SYN with that cookie, which sluice's engine does not keep:
# the client sends it again after the handshake, and it arrives intact.
tfo() {
	local spid r1 r2 m
	srv sysctl -qw net.ipv4.tcp_fastopen=3
	cli sysctl -qw net.ipv4.tcp_fastopen=1
	cli ip tcp_metrics flush all 2>/dev/null
	srv timeout --foreground 40 "$E2E_PY" "$PEER" tfosrv 7010 2 >"$E2E_TMP/tfo.srv" 2>&1 &
	spid=$!; E2E_PIDS+=("$spid")
	e2e_wait_listen 7010 || { E2E_WHY="server did not listen"; return 1; }
	r1=$(cli timeout --foreground 20 "$E2E_PY" "$PEER" tfocli "$SRV4" 7010 2>&1)
	m=$(cli ip tcp_metrics show "$SRV4" 2>&1)
	r2=$(cli timeout --foreground 20 "$E2E_PY" "$PEER" tfocli "$SRV4" 7010 2>&1)
	wait "$spid"
	[ "$r1" = OK ] && [ "$r2" = OK ] || { E2E_WHY="client: '$r1' then '$r2'"; return 1; }
	case "$m" in *fo_cookie*) ;; *) E2E_WHY="no TFO cookie cached by the client: $m"; return 1 ;; esac
	E2E_WHY="client cached the server's cookie $(echo "$m" | awk '{ for (i = 1; i < NF; i++) if ($i == "fo_cookie") print $(i + 1) }'); data sent after a SYN with it arrived intact"
}

refused() {
	local r
	r=$(cli timeout --foreground 20 "$E2E_PY" "$PEER" refused "$SRV4" 7009 2>&1)
	[ "$r" = ECONNREFUSED ] || { E2E_WHY="client saw: $r"; return 1; }
	E2E_WHY=ECONNREFUSED
}


# Baseline: the same iperf3 through sluice as a plain bridge.
BRIDGE_MBPS=
e2e_start_sluice "" || e2e_die "sluice start (bridge): $E2E_WHY"
e2e_ping 4 3 0.05 || e2e_die "no ping through the bridge: $E2E_WHY"
if e2e_iperf 4; then BRIDGE_MBPS=$E2E_MBPS; else e2e_fail bridge_iperf "$E2E_WHY"; fi
e2e_check refused_bridged refused
e2e_stop_sluice || e2e_fail bridge_clean_exit "$E2E_WHY"

e2e_start_sluice "$CFG" || e2e_die "sluice start (proxy): $E2E_WHY"
grep -q '^proxy: intercepting' "$SLUICE_LOG" ||
	e2e_fail proxy_configured "no 'proxy: intercepting' line in sluice's output"
e2e_ping 4 3 0.05 || e2e_fail proxy_ping "$E2E_WHY"
e2e_check proxy_transfer_up xfer_up
e2e_check proxy_transfer_down xfer_down
e2e_check proxy_transfer_up_ipv6 xfer_up 7004 "$SRV6"
e2e_check proxy_client_reset client_reset
e2e_check proxy_server_reset server_reset
e2e_check proxy_slow_reader slow_reader
e2e_check proxy_concurrent_connections many_conns
e2e_check proxy_refused refused
e2e_check proxy_tcp_fast_open tfo
if e2e_iperf 4; then
	ratio=$(awk -v p="$E2E_MBPS" -v b="${BRIDGE_MBPS:-0}" 'BEGIN { if (b > 0) printf "%.2f", p / b; else print "n/a" }')
	e2e_pass proxy_iperf "proxy $E2E_MBPS Mbit/s, bridge ${BRIDGE_MBPS:-?} Mbit/s, ratio $ratio, $E2E_RETRANS retransmits"
else
	e2e_fail proxy_iperf "$E2E_WHY"
fi

counters() {
	local out
	out=$("$E2E_PY" - "$(e2e_tel /sluice/proxy)" <<'PY'
import json, sys
try:
    c = json.loads(sys.argv[1])
except Exception as e:
    print("ERR bad telemetry answer: %s" % e); sys.exit()
errs = []
# up, down, IPv6 up, two resets, slow reader, 200 concurrent, iperf3's control and data connections
if c["connections_opened"] < 208: errs.append("connections_opened=%d < 208" % c["connections_opened"])
if c["connections_reset"] < 2: errs.append("connections_reset=%d < 2" % c["connections_reset"])
if c["connections_refused"] < 1: errs.append("connections_refused=%d < 1" % c["connections_refused"])
if c.get("syn_options_carried", 0) < 2: errs.append("syn_options_carried=%d < 2 (TFO)" % c.get("syn_options_carried", 0))
if c["bytes_up"] < 1000000: errs.append("bytes_up=%d < 1000000" % c["bytes_up"])
if c["bytes_down"] < 1000000: errs.append("bytes_down=%d < 1000000" % c["bytes_down"])
if errs: print("ERR " + "; ".join(errs))
else: print("OK opened=%d refused=%d reset=%d active=%d bytes_up=%d bytes_down=%d" % (
    c["connections_opened"], c["connections_refused"], c["connections_reset"],
    c["connections_active"], c["bytes_up"], c["bytes_down"]))
PY
)
	case "$out" in OK*) E2E_WHY=${out#OK }; return 0 ;; esac
	E2E_WHY=${out#ERR }
	return 1
}
e2e_check proxy_counters counters

final() {
	e2e_stop_sluice || return 1
	local line
	line=$(grep '^proxy connections_active=' "$SLUICE_LOG" | tail -1)
	[ -n "$line" ] || { E2E_WHY="no 'proxy ...' line in the exit report"; return 1; }
	E2E_WHY="exit 0, mempool at baseline, opened=$(e2e_field "$line" connections_opened) aborted_at_exit=$(e2e_field "$line" aborted_at_exit)"
}
e2e_check proxy_clean_exit final
e2e_finish
