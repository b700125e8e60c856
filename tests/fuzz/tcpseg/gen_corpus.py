#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the seed corpora of fuzz_tcpseg and fuzz_tcpconn.

fuzz_tcpseg: 2 control bytes, then an Ethernet frame (see fuzz_tcpseg.c).
fuzz_tcpconn: a configuration byte, then records of 17 bytes, one segment
each (see fuzz_tcpconn.c).

Run with Debian's interpreter, which sees python3-scapy:
    /usr/bin/python3 tests/fuzz/tcpseg/gen_corpus.py
"""

import os
import struct

from scapy.all import IP, IPv6, IPv6ExtHdrFragment, TCP, Ether, Dot1Q, Raw

HERE = os.path.dirname(os.path.abspath(__file__))
SEG = os.path.join(HERE, "corpus")
CONN = os.path.join(HERE, "..", "tcpconn", "corpus")

CTL_FIX_CSUM = 0x01
CTL_NIC_GOOD = 0x02
CTL_SPLIT = 0x04

ETH = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
V4 = IP(src="198.18.0.1", dst="198.19.0.1")
V6 = IPv6(src="2001:db8::1", dst="2001:db8:1::1")
SYN_OPTS = [("MSS", 1460), ("SAckOK", b""), ("Timestamp", (0x1000, 0)),
            ("NOP", None), ("WScale", 7)]


def seg(name, ctl, split, frame):
    with open(os.path.join(SEG, name), "wb") as f:
        f.write(bytes([ctl, split]) + bytes(frame))


def conn(name, cfg, records):
    with open(os.path.join(CONN, name), "wb") as f:
        f.write(bytes([cfg]))
        for r in records:
            assert len(r) == 17
            f.write(r)


def rec(flags, ctl=0, dseq=0, dack=0, length=0, wnd=1024, dt=1, dts=1,
        extra=b"\0\0\0\0", app=0):
    return struct.pack(">BBhhHHBb4sB", flags, ctl, dseq, dack, length, wnd,
                       dt, dts, extra, app)


def main():
    os.makedirs(SEG, exist_ok=True)
    os.makedirs(CONN, exist_ok=True)
    syn = ETH / V4 / TCP(sport=40000, dport=80, flags="S", seq=1000,
                         options=SYN_OPTS)
    data = ETH / V4 / TCP(sport=40000, dport=80, flags="PA", seq=1, ack=1,
                          options=[("NOP", None), ("NOP", None),
                                   ("Timestamp", (5, 6))]) / Raw(b"x" * 300)
    sack = ETH / V4 / TCP(sport=40000, dport=80, flags="A", seq=1, ack=1,
                          options=[("NOP", None), ("NOP", None),
                                   ("SAck", (100, 200, 300, 400))])
    seg("ipv4_syn", CTL_FIX_CSUM, 0, syn)
    seg("ipv4_syn_bad_csum", 0, 0, syn)
    seg("ipv4_data_ts", CTL_FIX_CSUM, 0, data)
    seg("ipv4_data_split", CTL_FIX_CSUM | CTL_SPLIT, 200, data)
    seg("ipv4_sack", CTL_FIX_CSUM, 0, sack)
    seg("ipv4_nic_good", CTL_NIC_GOOD, 0, data)
    seg("ipv6_data", CTL_FIX_CSUM, 0,
        ETH / V6 / TCP(sport=40000, dport=80, flags="A") / Raw(b"y" * 100))
    seg("vlan_syn", CTL_FIX_CSUM, 0,
        Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / Dot1Q(vlan=7) /
        V4 / TCP(sport=1, dport=2, flags="S", options=SYN_OPTS))
    seg("ipv4_first_fragment", 0, 0,
        ETH / IP(src="198.18.0.1", dst="198.19.0.1", flags="MF") /
        TCP(sport=40000, dport=80, flags="A") / Raw(b"z" * 64))
    seg("ipv6_first_fragment", 0, 0,
        ETH / V6 / IPv6ExtHdrFragment(m=1, offset=0, id=7) /
        TCP(sport=40000, dport=80, flags="A") / Raw(b"z" * 64))
    seg("unknown_options", CTL_FIX_CSUM, 0,
        ETH / V4 / TCP(sport=1, dport=2, flags="S",
                       options=[(34, b""), (253, b"\x12\x34"), (99, b"ab")]))

    # fuzz_tcpconn: ACK=0x10, PSH=0x08, FIN=0x01, SYN=0x02, RST=0x04;
    # configuration: 0x01 IPv6, 0x02 no SACK, 0x04 no timestamps, 0x08 no
    # window scaling, 0x10 NewReno, 0x20 active open, 0x40 MSS 536, 0x80 a
    # pool of 31 mbufs for the engine
    A, PA, F, S, R = 0x10, 0x18, 0x01, 0x02, 0x04
    conn("in_order_data_and_read", 0x00, [
        rec(PA, 0x01, 0, 0, 500, app=0x51),
        rec(PA, 0x01, 500, 0, 500, app=0x52),
        rec(A | F, 0x01, 1000, 0, 0, app=0x06)])
    conn("out_of_order_descending", 0x80, [
        rec(A, 0x01, 10 - k, 0, 1) for k in range(0, 9)] +
        [rec(A, 0x01, 0, 0, 1, app=0xf1)])
    conn("send_and_sack", 0x20, [
        rec(A, 0x01, 0, 0, 0, app=0xf4),
        rec(A, 0x03, 0, 0, 0, extra=b"\0\x05\x10\0"),
        rec(A, 0x03, 0, 0, 0, dt=0x83, extra=b"\x01\x0a\x10\0"),
        rec(A, 0x01, 0, 3000, 0)])
    conn("challenges", 0x01, [
        rec(R, 0x01, 100, 0, 0),
        rec(S, 0x00, 5, 0, 0),
        rec(A, 0x01, 0, 30000, 50),
        rec(A, 0x09, 300, 0, 50),
        rec(0x40 | A, 0x01, 0, 0, 10),
        rec(0x80 | A, 0x01, 0, 0, 100)])
    conn("zero_window_then_close", 0x16, [
        rec(A, 0x01, 0, 0, 0, wnd=0, app=0xf5),
        rec(A, 0x01, 0, 0, 0, wnd=0, dt=0x8a),
        rec(A, 0x01, 0, 0, 0, wnd=0, dt=0x8a, app=0x06),
        rec(A | F, 0x01, 0, 0, 0, wnd=4000, dt=0x85),
        rec(A, 0x01, 1, 1, 0, dt=0xff)])
    conn("out_of_order_collapse", 0x00, [
        rec(A, 0x01, 600 * (26 - k), 0, 600) for k in range(0, 25)] +
        [rec(A, 0x01, 0, 0, 600, app=0xf1)])
    conn("out_of_order_pruned", 0x80, [
        rec(A, 0x01, 600 * (26 - k), 0, 600) for k in range(0, 25)] +
        [rec(A, 0x01, 0, 0, 600, app=0xf1)])
    conn("raw_options", 0xeb, [
        rec(A, 0x05, 0, 0, 10, extra=b"\x22\x02\x01\x01"),
        rec(A, 0x04, 0, 0, 0, extra=b"\x08\x0a\x00\x00"),
        rec(A, 0x24, 0, 0, 20, extra=b"\x1e\x04\x20\x01")])


if __name__ == "__main__":
    main()
