#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A middlebox that strips MPTCP's DSS option after the handshake, for
tests/e2e/test_mptcp_dss.sh: it bridges two interfaces of its own
namespace (AF_PACKET sockets) and, in the directions asked for, replaces
every DSS option (kind 30, subtype 2) of a segment without SYN by NOPs,
the TCP checksum recomputed by scapy. Everything else passes unchanged.

  mptcp_dss_strip.py CLIENT_IF SLUICE_IF DIRS STATS_FILE

DIRS: "up" (client to sluice), "down" (sluice to client) or "both".
On SIGTERM it writes "frames_up=N frames_down=N stripped_up=N
stripped_down=N" to STATS_FILE and exits. It writes the same line once
it is ready to STATS_FILE.ready.
"""
import os
import select
import signal
import socket
import sys

from scapy.layers.inet import IP, TCP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

ETH_P_ALL = 0x0003
MPTCP_KIND = 30
DSS = 2


def strip_dss(opts):
    """The options with every DSS replaced by NOPs, and how many."""
    out = bytearray(opts)
    i = n = 0
    while i < len(out):
        kind = out[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        if i + 1 >= len(out) or out[i + 1] < 2:
            break
        ln = out[i + 1]
        if kind == MPTCP_KIND and ln >= 3 and (out[i + 2] >> 4) == DSS:
            out[i:i + ln] = b"\x01" * ln
            n += 1
        i += ln
    return bytes(out), n


def process(frame):
    """The frame to forward, and whether a DSS was stripped from it."""
    pkt = Ether(frame)
    tcp = pkt.getlayer(TCP)
    if tcp is None or (int(tcp.flags) & 0x02):
        return frame, 0
    raw = bytes(tcp)
    hlen = (raw[12] >> 4) * 4
    if hlen <= 20 or b"\x1e" not in raw[20:hlen]:
        return frame, 0
    opts, n = strip_dss(raw[20:hlen])
    if n == 0:
        return frame, 0
    ip = pkt.getlayer(IP) or pkt.getlayer(IPv6)
    tcp_new = TCP(raw[:20] + opts + raw[hlen:])
    del tcp_new.chksum
    ip.remove_payload()
    ip.add_payload(tcp_new)
    if isinstance(ip, IP):
        del ip.chksum
    return bytes(pkt), n


def main():
    cli_if, slu_if, dirs, stats_file = sys.argv[1:5]
    strip_up = dirs in ("up", "both")
    strip_down = dirs in ("down", "both")
    socks = {}
    for name in (cli_if, slu_if):
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        s.bind((name, 0))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        socks[name] = s
    peer = {cli_if: socks[slu_if], slu_if: socks[cli_if]}
    st = {"frames_up": 0, "frames_down": 0, "stripped_up": 0, "stripped_down": 0}

    def line():
        return " ".join("%s=%d" % kv for kv in st.items())

    def stop(_sig, _frm):
        with open(stats_file, "w") as f:
            f.write(line() + "\n")
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    with open(stats_file + ".ready", "w") as f:
        f.write(line() + "\n")
    fds = {socks[n].fileno(): n for n in socks}
    while True:
        for fd in select.select(list(fds), [], [])[0]:
            name = fds[fd]
            up = name == cli_if
            try:
                frame, addr = socks[name].recvfrom(65536)
            except BlockingIOError:
                continue
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            d = "up" if up else "down"
            st["frames_" + d] += 1
            if (strip_up and up) or (strip_down and not up):
                frame, n = process(frame)
                st["stripped_" + d] += n
            try:
                peer[name].send(frame)
            except OSError:
                pass


if __name__ == "__main__":
    main()
