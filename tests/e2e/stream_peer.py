# SPDX-License-Identifier: BSD-3-Clause
"""Peers for the proxy's end-to-end tests (test_proxy_scale.sh,
test_proxy_loss.sh): kernel TCP sockets on both sides of sluice.

A sender generates a deterministic pseudo-random stream on the fly
(random.Random(SEED).randbytes, 1 MiB at a time, nothing on disk) and
hashes what it sends; a receiver hashes what it receives. Each prints one
line, "SHA256 BYTES SECONDS", and the test compares the two lines' first
two fields. SECONDS runs from the connection's set-up (connect() or
accept()) to the other side's FIN; the sender's comes after the receiver
read everything and closed.

  sink PORT                   accept one, read to EOF, print, close
  source PORT SIZE SEED       accept one, send SIZE bytes, half-close,
                              wait for EOF, print
  send HOST PORT SIZE SEED    connect, send, half-close, wait for EOF, print
  recv HOST PORT              connect, read to EOF, print
  recv-shut HOST PORT         the same, half-closed first: the client's
                              FIN goes before the server's first byte
                              (a request that ends in shutdown(), as
                              netcat -N or an HTTP/1.0 client does)
  hold-srv PORT N SIZE        accept N connections; once all N are open,
                              echo each one's bytes back, then send SIZE
                              bytes of its own (seeded by the
                              connection's first 4 bytes), and close once
                              the client half-closed; print "served N"
  hold-cli HOST PORT N SIZE READY GO
                              open N connections at once (non-blocking),
                              and once all N are established write READY
                              and wait (up to 30 s) for the file GO; then
                              send SIZE bytes on each (4-byte index, then
                              its stream), half-close, and check that what
                              comes back is the echo followed by the
                              server's own SIZE bytes; print "OK N/N" or
                              what went wrong
  connect HOST PORT           one connect(), blocking with the kernel's
                              SYN retries: print "ETIMEDOUT SECONDS",
                              "connected", "ECONNREFUSED" or "errno N"

STREAM_PEER_PROTO=mptcp makes every socket an MPTCP one (IPPROTO_MPTCP,
for tests/e2e/test_mptcp.sh); hold-srv and hold-cli then add " mptcp K"
to their line: how many of the connections are MPTCP (TCP_IS_MPTCP).

Every socket uses the congestion control named by STREAM_PEER_CC (default
cubic, as the proxy's engine does), set per socket: a network namespace
may only choose among the host's tcp_allowed_congestion_control, a
root-owned socket may choose any module the kernel has. Empty: leave the
namespace's default.
"""
import errno
import hashlib
import os
import random
import resource
import selectors
import socket
import sys
import time

CHUNK = 1 << 20
CC = os.environ.get("STREAM_PEER_CC", "cubic").encode()
MPTCP = os.environ.get("STREAM_PEER_PROTO", "") == "mptcp"
PROTO = 262 if MPTCP else 0     # IPPROTO_MPTCP
TCP_IS_MPTCP = 43


def count_mptcp(socks):
    """ " mptcp K" (K of socks are MPTCP), or "" for plain TCP peers."""
    if not MPTCP:
        return ""
    k = 0
    for s in socks:
        try:
            k += s.getsockopt(socket.IPPROTO_TCP, TCP_IS_MPTCP) == 1
        except OSError:
            pass
    return " mptcp %d" % k


def set_cc(s):
    if CC:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, CC)
    return s


def stream(size, seed):
    r = random.Random(seed)
    left = size
    while left > 0:
        n = min(CHUNK, left)
        yield r.randbytes(n)
        left -= n


def listen(port, backlog=1):
    ls = set_cc(socket.socket(socket.AF_INET6, socket.SOCK_STREAM, PROTO))
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    ls.bind(("::", port))
    ls.listen(backlog)
    return ls


def accept_one(port):
    ls = listen(port)
    ls.settimeout(60)
    c, _ = ls.accept()
    ls.close()
    c.settimeout(60)
    return set_cc(c)


def connect(host, port):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    c = set_cc(socket.socket(fam, socket.SOCK_STREAM, PROTO))
    c.settimeout(10)
    c.connect((host, port))
    c.settimeout(60)
    return c


def read_to_eof(c, t0):
    h = hashlib.sha256()
    n = 0
    buf = bytearray(262144)
    while True:
        k = c.recv_into(buf)
        if k == 0:
            return "%s %d %.3f" % (h.hexdigest(), n, time.monotonic() - t0)
        h.update(memoryview(buf)[:k])
        n += k


def send_stream(c, size, seed, t0):
    h = hashlib.sha256()
    for b in stream(size, seed):
        h.update(b)
        c.sendall(b)
    c.shutdown(socket.SHUT_WR)
    while c.recv(65536):      # the other side's FIN: it has read it all
        pass
    return "%s %d %.3f" % (h.hexdigest(), size, time.monotonic() - t0)


def raise_nofile(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(n, hard), max(n, hard)))


def hold_srv(port, n, size):
    raise_nofile(n + 64)
    ls = listen(port, backlog=n + 64)
    ls.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(ls, selectors.EVENT_READ)
    conns = {}
    deadline = time.monotonic() + 60
    while len(conns) < n:
        if time.monotonic() > deadline:
            print("only %d/%d accepted" % (len(conns), n))
            return
        for _key, _ev in sel.select(1):
            while True:
                try:
                    c, _ = ls.accept()
                except BlockingIOError:
                    break
                c.setblocking(False)
                # out: bytes to send; in: the client's first 4 bytes
                # (seed of our own stream); own: that stream is queued
                conns[c] = {"out": bytearray(), "in": bytearray(),
                            "eof": False, "own": False}
    sel.unregister(ls)    # open until the end: MPTCP's MP_JOINs come to it
    mp = count_mptcp(conns)
    for c in conns:
        sel.register(c, selectors.EVENT_READ)
    served = 0
    deadline = time.monotonic() + 90
    while conns and time.monotonic() < deadline:
        for key, ev in sel.select(1):
            c = key.fileobj
            st = conns[c]
            if ev & selectors.EVENT_READ and not st["eof"]:
                try:
                    b = c.recv(65536)
                except (BlockingIOError, InterruptedError):
                    b = None
                if b == b"":
                    st["eof"] = True
                elif b:
                    st["out"] += b
                    st["in"] += b[:max(0, 4 - len(st["in"]))]
            if st["eof"] and not st["own"]:
                # The client's bytes are all echoed or queued: our own.
                st["own"] = True
                st["out"] += b"".join(stream(size, int.from_bytes(
                    bytes(st["in"]).ljust(4, b"\0"), "big")))
            if st["out"]:
                try:
                    del st["out"][:c.send(st["out"])]
                except (BlockingIOError, InterruptedError):
                    pass
            if st["own"] and not st["out"]:
                sel.unregister(c)
                c.close()
                del conns[c]
                served += 1
                continue
            want = 0 if st["eof"] else selectors.EVENT_READ
            if st["out"]:
                want |= selectors.EVENT_WRITE
            sel.modify(c, want)
    ls.close()
    print("served %d%s%s" % (served, "" if not conns else
                             " (%d unfinished)" % len(conns), mp))


def hold_cli(host, port, n, size, ready, go):
    raise_nofile(n + 64)
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    sel = selectors.DefaultSelector()
    conns = {}
    for i in range(n):
        c = set_cc(socket.socket(fam, socket.SOCK_STREAM, PROTO))
        c.setblocking(False)
        rc = c.connect_ex((host, port))
        if rc not in (0, errno.EINPROGRESS):
            print("connect %d: errno %d" % (i, rc))
            return
        conns[c] = {"i": i, "up": False}
        sel.register(c, selectors.EVENT_WRITE)
    up = 0
    deadline = time.monotonic() + 30
    while up < n:
        if time.monotonic() > deadline:
            print("only %d/%d connected" % (up, n))
            return
        for key, _ev in sel.select(1):
            c = key.fileobj
            err = c.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                print("connection %d: %s" % (conns[c]["i"], os.strerror(err)))
                return
            conns[c]["up"] = True
            sel.unregister(c)
            up += 1
    mp = count_mptcp(conns)
    with open(ready, "w") as f:
        f.write("%d\n" % up)
    deadline = time.monotonic() + 30
    while not os.path.exists(go):
        if time.monotonic() > deadline:
            print("no go file after 30 s")
            return
        time.sleep(0.05)
    for c, st in conns.items():
        i = st["i"]
        st["sent"] = i.to_bytes(4, "big") + b"".join(stream(size, i + 1))
        st["want"] = st["sent"] + b"".join(stream(size, i))
        st["off"] = 0
        st["got"] = bytearray()
        st["shut"] = False
        sel.register(c, selectors.EVENT_READ | selectors.EVENT_WRITE)
    done = ok = 0
    bad = []
    deadline = time.monotonic() + 90
    while done < n and time.monotonic() < deadline:
        for key, ev in sel.select(1):
            c = key.fileobj
            st = conns[c]
            if ev & selectors.EVENT_WRITE and not st["shut"]:
                try:
                    st["off"] += c.send(memoryview(st["sent"])[st["off"]:])
                except (BlockingIOError, InterruptedError):
                    pass
                if st["off"] == len(st["sent"]):
                    c.shutdown(socket.SHUT_WR)
                    st["shut"] = True
                    sel.modify(c, selectors.EVENT_READ)
            if ev & selectors.EVENT_READ:
                try:
                    b = c.recv(65536)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError as e:
                    bad.append("%d: %s" % (st["i"], e))
                    b = b""
                if b:
                    st["got"] += b
                    continue
                sel.unregister(c)
                c.close()
                done += 1
                if st["got"] == st["want"]:
                    ok += 1
                elif len(bad) < 3:
                    bad.append("%d: got %d bytes, want %d%s" % (
                        st["i"], len(st["got"]), len(st["want"]),
                        "" if len(st["got"]) != len(st["want"]) else " (differ)"))
    if done < n:
        bad.append("%d still open after 90 s" % (n - done))
    print(("OK %d/%d" % (ok, n) if ok == n else "%d/%d ok %s" % (ok, n, "; ".join(bad[:3]))) + mp)


def connect_once(host, port):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    c = set_cc(socket.socket(fam, socket.SOCK_STREAM, PROTO))
    t0 = time.monotonic()
    try:
        c.connect((host, port))
        print("connected")
    except OSError as e:
        name = errno.errorcode.get(e.errno, "errno %s" % e.errno)
        print("%s %.1f" % (name, time.monotonic() - t0))


def main(a):
    mode = a[0]
    if mode == "sink":
        c = accept_one(int(a[1]))
        print(read_to_eof(c, time.monotonic()))
        c.close()
    elif mode == "source":
        c = accept_one(int(a[1]))
        print(send_stream(c, int(a[2]), int(a[3]), time.monotonic()))
        c.close()
    elif mode == "send":
        t0 = time.monotonic()
        c = connect(a[1], int(a[2]))
        print(send_stream(c, int(a[3]), int(a[4]), t0))
        c.close()
    elif mode in ("recv", "recv-shut"):
        t0 = time.monotonic()
        c = connect(a[1], int(a[2]))
        if mode == "recv-shut":
            c.shutdown(socket.SHUT_WR)
        print(read_to_eof(c, t0))
        c.close()
    elif mode == "hold-srv":
        hold_srv(int(a[1]), int(a[2]), int(a[3]))
    elif mode == "hold-cli":
        hold_cli(a[1], int(a[2]), int(a[3]), int(a[4]), a[5], a[6])
    elif mode == "connect":
        connect_once(a[1], int(a[2]))
    else:
        sys.exit("unknown mode " + mode)
    sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
