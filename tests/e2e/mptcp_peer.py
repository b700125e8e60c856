#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""MPTCP peers for tests/e2e/test_mptcp.sh and perf/bench.sh mptcp: the
Linux kernel's MPTCP (IPPROTO_MPTCP sockets) on both sides of sluice.

The client is always an MPTCP socket. The server listens on an MPTCP
socket too, so through a plain bridge the connection is MPTCP end to end,
and when sluice terminates MPTCP the server sees plain TCP: its accepted
socket reports is_mptcp=0 (TCP_IS_MPTCP), which nothing else could cause.

A sender generates a seeded pseudo-random stream on the fly (as
stream_peer.py does) and hashes it; a receiver hashes what arrives. Each
prints one line: "SHA256 BYTES SECONDS key=value...", where the keys are

  is_mptcp    TCP_IS_MPTCP of the connected socket (1: MPTCP)
  subflows    (client) most subflows seen at once, from MPTCP_INFO
              (mptcpi_subflows_total, or mptcpi_subflows + 1), sampled
              every 10 ms while the transfer runs
  subflows_end  (client) the same at the end
  gap         the longest time between two reads that returned data (a
              receiver) or two writes (a sender), seconds: the stall
              when a path dies

  sink PORT                     accept one, read to EOF, print, close
  source PORT SIZE SEED         accept one, send SIZE bytes, half-close,
                                wait for EOF, print
  hold PORT                     accept one, read to EOF, close (no output)
  send HOST PORT SIZE SEED [--at BYTES FILE] [--rate MBIT] [--tcp] [--subflows N]
                                connect, send, half-close, wait for EOF
  recv HOST PORT [--at BYTES FILE] [--tcp] [--subflows N] [--shut-first]
                                connect, read to EOF
  abort PORT                    accept one, after 1 s abort it (RST)
  cabort HOST PORT              connect, send 1000 bytes, after 1 s abort
  waitend PORT | HOST PORT      accept one (or connect), read until the
                                other end closes: print "RESET", "EOF"
                                or, after 10 s, "TIMEOUT"

--at BYTES FILE creates FILE once BYTES have been sent or received, so a
test can take a path down in the middle of a transfer. --subflows N
makes the client wait until the connection has N subflows (at most 10 s;
the wait, in seconds, is the output's waited_for_subflows): recv before
it reads its first byte (SECONDS then counts from the wait's end), send
after its first 1,000 bytes (SECONDS includes the wait), since a client
opens its other subflows only once the connection is fully established,
which takes a DSS from the server, and on an upload only data brings
one. --tcp makes the client a plain TCP socket (the single-path
baseline); --rate MBIT paces the sender. --shut-first half-closes the
receiving client before it reads (after the --subflows wait): its
DATA_FIN goes first, as a request that ends in shutdown() sends it.
MPTCP_PEER_CC in the
environment names every socket's congestion control (default: the
namespace's).
"""
import hashlib
import os
import random
import socket
import struct
import sys
import time

IPPROTO_MPTCP = 262
SOL_MPTCP = 284
MPTCP_INFO = 1
TCP_IS_MPTCP = 43
CHUNK = 1 << 20
SAMPLE_S = 0.01


def stream(size, seed):
    r = random.Random(seed)
    left = size
    while left > 0:
        n = min(CHUNK, left)
        yield r.randbytes(n)
        left -= n


def is_mptcp(s):
    try:
        return s.getsockopt(socket.IPPROTO_TCP, TCP_IS_MPTCP)
    except OSError:
        return -1


def subflows(s):
    """Subflows of the connection now, from MPTCP_INFO; 0 if none."""
    try:
        b = s.getsockopt(SOL_MPTCP, MPTCP_INFO, 256)
    except OSError:
        return 0
    if len(b) > 80 and b[80]:      # mptcpi_subflows_total (Linux 6.10+)
        return b[80]
    if len(b) >= 1:                # mptcpi_subflows: additional ones
        return b[0] + 1
    return 0


class Probe:
    """Samples the subflow count and records the longest read gap."""

    def __init__(self, s, at):
        self.s = s
        self.max = 0
        self.next = 0.0
        self.last = None
        self.gap = 0.0
        self.done = 0
        self.at = at

    def tick(self, n):
        now = time.monotonic()
        if n:
            if self.last is not None:
                self.gap = max(self.gap, now - self.last)
            self.last = now
            self.done += n
            if self.at and self.done >= self.at[0]:
                open(self.at[1], "w").close()
                self.at = None
        if now >= self.next:
            self.next = now + SAMPLE_S
            self.max = max(self.max, subflows(self.s))

    def fields(self, client):
        out = "is_mptcp=%d" % is_mptcp(self.s)
        if client:
            end = subflows(self.s)
            out += " subflows=%d subflows_end=%d" % (max(self.max, end), end)
        return out + " gap=%.3f" % self.gap


# MPTCP_PEER_CC: the congestion control of every socket (an MPTCP
# socket passes it to its subflows; an accepted one inherits the
# listener's); empty or unset, the namespace's default.
CC = os.environ.get("MPTCP_PEER_CC", "").encode()


def set_cc(s):
    if CC:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, CC)


def listen(port):
    ls = socket.socket(socket.AF_INET6, socket.SOCK_STREAM, IPPROTO_MPTCP)
    set_cc(ls)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    ls.bind(("::", port))
    ls.listen(4)
    ls.settimeout(60)
    c, _ = ls.accept()
    c.settimeout(60)
    # The listener stays open: the client's MP_JOINs come to it.
    return ls, c


def connect(host, port, proto=IPPROTO_MPTCP):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    c = socket.socket(fam, socket.SOCK_STREAM, proto)
    set_cc(c)
    c.settimeout(10)
    c.connect((host, port))
    c.settimeout(60)
    return c


def read_to_eof(c, p, t0):
    h = hashlib.sha256()
    n = 0
    buf = bytearray(262144)
    while True:
        k = c.recv_into(buf)
        p.tick(k)
        if k == 0:
            return "%s %d %.3f" % (h.hexdigest(), n, time.monotonic() - t0)
        h.update(memoryview(buf)[:k])
        n += k


def send_stream(c, p, size, seed, t0, rate=0.0, after_first=None):
    """after_first: called once the first 1,000 bytes are sent (sent in
    a piece of their own when it is set)."""
    h = hashlib.sha256()
    sent = 0
    for b in stream(size, seed):
        h.update(b)
        for off in range(0, len(b), 65536):
            piece = memoryview(b)[off:off + 65536]
            if after_first is not None:
                first = piece[:1000]
                c.sendall(first)
                sent += len(first)
                p.tick(len(first))
                after_first()
                after_first = None
                piece = piece[1000:]
            c.sendall(piece)
            sent += len(piece)
            p.tick(len(piece))
            if rate:
                ahead = t0 + sent * 8 / (rate * 1e6) - time.monotonic()
                if ahead > 0:
                    time.sleep(ahead)
    c.shutdown(socket.SHUT_WR)
    while True:               # the other side's FIN: it has read it all
        k = len(c.recv(65536))
        p.tick(0)
        if not k:
            break
    return "%s %d %.3f" % (h.hexdigest(), size, time.monotonic() - t0)


def options(a):
    at, rate, proto, want = None, 0.0, IPPROTO_MPTCP, 0
    i = 0
    while i < len(a):
        if a[i] == "--tcp":
            proto = 0
            i += 1
        elif a[i] == "--subflows":
            want = int(a[i + 1])
            i += 2
        elif a[i] == "--at":
            at = (int(a[i + 1]), a[i + 2])
            i += 3
        elif a[i] == "--rate":
            rate = float(a[i + 1])
            i += 2
        else:
            sys.exit("unknown option " + a[i])
    return at, rate, proto, want


WAIT_SUBFLOWS_S = 10.0


def wait_subflows(c, want):
    """With --subflows N: wait until the connection has N subflows
    (MPTCP_INFO), at most WAIT_SUBFLOWS_S; the seconds it took, for the
    output line (a join whose SYN a lossy path
    dropped waits for the kernel's SYN retransmission, 1 s or more,
    longer than a fast transfer lasts)."""
    t0 = time.monotonic()
    while subflows(c) < want and time.monotonic() - t0 < WAIT_SUBFLOWS_S:
        time.sleep(0.01)
    return time.monotonic() - t0


def abort(c):
    """Close c with a RST (MPTCP: MP_FASTCLOSE) after a second, so that
    the client's second subflow has joined by then."""
    time.sleep(1)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()


def wait_end(c):
    mp = is_mptcp(c)   # now: a reset socket no longer says
    c.settimeout(10)
    try:
        while c.recv(65536):
            pass
        end = "EOF"
    except ConnectionResetError:
        end = "RESET"
    except socket.timeout:
        end = "TIMEOUT"
    print(end, "is_mptcp=%d" % mp)
    c.close()


def main(a):
    mode = a[0]
    if mode == "abort":
        ls, c = listen(int(a[1]))
        abort(c)
        ls.close()
        return
    if mode == "cabort":
        c = connect(a[1], int(a[2]))
        c.sendall(b"x" * 1000)
        abort(c)
        return
    if mode == "waitend":
        if len(a) == 2:
            ls, c = listen(int(a[1]))
            wait_end(c)
            ls.close()
        else:
            wait_end(connect(a[1], int(a[2])))
        sys.stdout.flush()
        return
    if mode in ("sink", "source", "hold"):
        ls, c = listen(int(a[1]))
        t0 = time.monotonic()
        p = Probe(c, None)
        if mode == "sink":
            line = read_to_eof(c, p, t0)
        elif mode == "source":
            line = send_stream(c, p, int(a[2]), int(a[3]), t0)
        else:
            while c.recv(65536):
                pass
            c.close()
            ls.close()
            return
        print(line, p.fields(False))
    elif mode == "send":
        at, rate, proto, want = options(a[5:])
        t0 = time.monotonic()
        c = connect(a[1], int(a[2]), proto)
        p = Probe(c, at)
        p.tick(0)
        joined = []
        # An MPTCP client opens its other subflows once the connection is
        # fully established: after the server's first DSS, which an
        # upload gets only for data it sent. So the first bytes go first.
        line = send_stream(c, p, int(a[3]), int(a[4]), t0, rate,
                           (lambda: joined.append(wait_subflows(c, want)))
                           if want else None)
        print(line, p.fields(True) +
              ("" if not joined else " waited_for_subflows=%.3f" % joined[0]))
    elif mode == "recv":
        shut = "--shut-first" in a[3:]
        at, _, proto, want = options([o for o in a[3:] if o != "--shut-first"])
        t0 = time.monotonic()
        c = connect(a[1], int(a[2]), proto)
        joined = wait_subflows(c, want) if want else None
        if joined is not None:
            t0 = time.monotonic()
        if shut:
            c.shutdown(socket.SHUT_WR)
        p = Probe(c, at)
        p.tick(0)
        line = read_to_eof(c, p, t0)
        print(line, p.fields(True) +
              ("" if joined is None else " waited_for_subflows=%.3f" % joined))
    else:
        sys.exit("unknown mode " + mode)
    c.close()
    sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
