#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Kernel TCP or MPTCP endpoints for tests/e2e/test_tcpopt.sh: one
connection, one transfer checked by SHA-256, and what each end's kernel
settled on.

  tcpopt_peer.py serve ADDR PORT tcp|mptcp
      Accept one connection, read to EOF, answer with a line
      "<sha256> <length> <mss> <is_mptcp>", close.
  tcpopt_peer.py send ADDR PORT tcp|mptcp NBYTES
      Connect, send NBYTES, half-close, read the answer, and print
      "<sha256> <length> <mss> <is_mptcp> | <the server's line>".

mss is TCP_MAXSEG of the connected socket (for TCP: the MSS the peer's
SYN carried, less the 12 bytes of the timestamp option), or -1 where the
kernel does not report it. is_mptcp is TCP_IS_MPTCP: 1 for an MPTCP
connection, 0 for plain TCP, including an MPTCP socket that fell back to
TCP because the peer's handshake carried no MP_CAPABLE.
"""
import hashlib
import socket
import sys

IPPROTO_MPTCP = 262
TCP_IS_MPTCP = 43


def new_socket(addr, proto):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    return socket.socket(fam, socket.SOCK_STREAM,
                         IPPROTO_MPTCP if proto == "mptcp" else 0)


def facts(s):
    def opt(o):
        try:
            return s.getsockopt(socket.IPPROTO_TCP, o)
        except OSError:
            return -1
    return opt(socket.TCP_MAXSEG), opt(TCP_IS_MPTCP)


def read_to_eof(s, take):
    """Hand every chunk s receives to take, until the peer half-closes."""
    while True:
        b = s.recv(65536)
        if not b:
            return
        take(b)


def pattern(n):
    block = bytes(range(256)) * 256
    while n > 0:
        yield block[:n]
        n -= len(block)


def serve(addr, port, proto):
    ls = new_socket(addr, proto)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(1)
    ls.settimeout(30)
    c, _ = ls.accept()
    c.settimeout(30)
    h = hashlib.sha256()
    got = [0]

    def take(b):
        h.update(b)
        got[0] += len(b)
    read_to_eof(c, take)
    mss, mp = facts(c)
    c.sendall(("%s %d %d %d\n" % (h.hexdigest(), got[0], mss, mp)).encode())
    c.close()
    ls.close()
    return 0


def send(addr, port, proto, nbytes):
    s = new_socket(addr, proto)
    s.settimeout(30)
    s.connect((addr, port))
    h = hashlib.sha256()
    for b in pattern(nbytes):
        s.sendall(b)
        h.update(b)
    mss, mp = facts(s)
    s.shutdown(socket.SHUT_WR)
    answer = []
    read_to_eof(s, answer.append)
    s.close()
    print("%s %d %d %d | %s" % (h.hexdigest(), nbytes, mss, mp,
                                b"".join(answer).decode().strip()))
    return 0


def main(argv):
    if len(argv) == 5 and argv[1] == "serve" and argv[4] in ("tcp", "mptcp"):
        return serve(argv[2], int(argv[3]), argv[4])
    if len(argv) == 6 and argv[1] == "send" and argv[4] in ("tcp", "mptcp"):
        return send(argv[2], int(argv[3]), argv[4], int(argv[5]))
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
