#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the seed corpus of fuzz_aqm_ack (tests/fuzz/aqm_ack/corpus/).

Each seed is a control byte, a shared-prefix length and a few frame
records ([dt][len][frame]); see the header of fuzz_aqm_ack.c. The frames
are the pure ACKs (and their near misses) the filter meets: trains of
cumulative ACKs, growing SACK, D-SACKs below and above the ACK, ECN echo,
data, SYN, MPTCP, IPv6 and VLAN tags.

Run with Debian's interpreter, which sees python3-scapy:
    /usr/bin/python3 tests/fuzz/aqm_ack/gen_corpus.py
"""

import os
import struct

from scapy.all import IP, IPv6, TCP, Ether, Dot1Q, Raw

CTL_ONE_FLOW = 0x01
CTL_HOLD = 0x02
CTL_DEQUEUE = 0x04

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def ack(a, tsval=100, sack=(), flags="A", v6=False, vlan=None, sport=40000,
        payload=b"", extra=(), win=500, ts=True):
    opts = []
    if ts:
        opts += [("NOP", None), ("NOP", None), ("Timestamp", (tsval, 7))]
    if sack:
        opts += [("NOP", None), ("NOP", None), ("SAck", tuple(x for b in sack for x in b))]
    opts += list(extra)
    l3 = (IPv6(src="2001:db8::1", dst="2001:db8::2") if v6 else
          IP(src="198.18.0.1", dst="198.18.0.2"))
    e = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    if vlan is not None:
        e = e / Dot1Q(vlan=vlan)
    f = e / l3 / TCP(sport=sport, dport=5201, seq=1000, ack=a, flags=flags,
                     window=win, options=opts)
    if payload:
        f = f / Raw(payload)
    return bytes(f)


def seed(name, ctl, frames, k=0, dt=1):
    b = bytes([ctl, k])
    for f in frames:
        assert len(f) < 256, name
        b += bytes([dt, len(f)]) + f
    with open(os.path.join(OUT, name), "wb") as fh:
        fh.write(b)


def main():
    os.makedirs(OUT, exist_ok=True)
    train = [ack(10000 + 1448 * i, 100 + i) for i in range(6)]
    for ctl, tag in ((0, ""), (CTL_ONE_FLOW, "_one_flow"), (CTL_HOLD, "_hold"),
                     (CTL_DEQUEUE, "_dequeue"), (CTL_HOLD | CTL_DEQUEUE, "_hold_dequeue")):
        seed("train" + tag, ctl, train)
    seed("train_v6", 0, [ack(10000 + 1448 * i, 100 + i, v6=True) for i in range(4)])
    seed("train_vlan", 0, [ack(10000 + 1448 * i, 100 + i, vlan=7) for i in range(4)])
    seed("train_no_ts", 0, [ack(10000 + 1448 * i, ts=False) for i in range(4)])
    seed("train_wraps", 0, [ack((0xfffffc00 + 1448 * i) & 0xffffffff, 100 + i) for i in range(4)])
    seed("sack_grows", CTL_HOLD, [
        ack(10000, 100, sack=[(11448, 12896)]),
        ack(10000, 101, sack=[(11448, 14344)]),
        ack(10000, 102, sack=[(11448, 15792)]),
        ack(15792, 103)])
    seed("sack_two_holes", 0, [
        ack(10000, 100, sack=[(11448, 12896)]),
        ack(10000, 101, sack=[(14344, 15792), (11448, 12896)]),
        ack(12896, 102, sack=[(14344, 15792)])])
    seed("dsack_below_ack", 0, [
        ack(10000, 100, sack=[(8552, 10000)]),
        ack(11448, 101), ack(12896, 102)])
    seed("dsack_above_ack", CTL_ONE_FLOW, [
        ack(10000, 100, sack=[(12896, 14344), (11448, 15792)]),
        ack(10000, 101, sack=[(11448, 17240)]),
        ack(20000, 102)])
    seed("dsack_above_ack_hold", CTL_HOLD | CTL_DEQUEUE, [
        ack(10000, 100, sack=[(11448, 12896)]),
        ack(10000, 101, sack=[(12896, 14344), (11448, 15792)]),
        ack(10000, 102, sack=[(11448, 17240)]),
        ack(20000, 103)])
    seed("dsack_straddles_ack", 0, [
        ack(10000, 100, sack=[(8552, 11448)]), ack(20000, 101)])
    seed("dup_acks", 0, [ack(10000, 100), ack(10000, 101), ack(10000, 102, win=600)])
    seed("ece_cwr", 0, [ack(10000, 100, flags="AE"), ack(11448, 101, flags="AE"),
                        ack(12896, 102, flags="AC"), ack(14344, 103)])
    seed("data_between", CTL_ONE_FLOW, [ack(10000, 100), ack(10000, 100, flags="PA", payload=b"x" * 100),
                                        ack(11448, 101), ack(12896, 102)])
    seed("syn_fin_rst", 0, [ack(10000, 100, flags="SA"), ack(11448, 101, flags="FA"),
                            ack(12896, 102, flags="RA"), ack(14344, 103, flags="UA")])
    seed("mptcp_dss", 0, [ack(10000, 100, extra=[(30, b"\x20\x01\x00\x00\x00\x01")]),
                          ack(11448, 101, extra=[(30, b"\x20\x01\x00\x00\x00\x02")])])
    seed("two_connections", CTL_ONE_FLOW, [ack(10000, 100), ack(50000, 100, sport=40001),
                                           ack(11448, 101), ack(50000, 101, sport=40001),
                                           ack(12896, 102)])
    seed("older_tsval", 0, [ack(10000, 100), ack(11448, 99)])
    seed("shared_prefix", 0, [ack(10000, 100), ack(11448, 101), ack(12896, 102)], k=42)
    seed("slow_clock_hold", CTL_HOLD | CTL_DEQUEUE, train, dt=40)


if __name__ == "__main__":
    main()
