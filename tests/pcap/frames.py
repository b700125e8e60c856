# SPDX-License-Identifier: BSD-3-Clause
"""Frames for the bridge tests: every encapsulation the parser knows, and
the ways each can lie. Addresses only from 198.18.0.0/15 and 2001:db8::/32.
Each entry is (name, frame bytes, expected malformed reason or None)."""
import struct

from scapy.all import (ARP, Dot1AD, Dot1Q, Ether, ICMP, ICMPv6EchoRequest,
                       IP, IPOption_RR, IPv6, IPv6ExtHdrDestOpt,
                       IPv6ExtHdrFragment, IPv6ExtHdrHopByHop,
                       IPv6ExtHdrRouting, PPP, PPPoE, Raw, TCP, UDP)

C_MAC = "02:00:00:00:00:01"
S_MAC = "02:00:00:00:00:02"
V4C, V4S = "198.18.0.1", "198.19.0.1"
V6C, V6S = "2001:db8:1::1", "2001:db8:2::1"


def eth(src=C_MAC, dst=S_MAC, **kw):
    return Ether(src=src, dst=dst, **kw)


def well_formed(up=True):
    """(name, bytes) of valid frames; up=True: subscriber -> internet."""
    s4, d4 = (V4C, V4S) if up else (V4S, V4C)
    s6, d6 = (V6C, V6S) if up else (V6S, V6C)
    sm, dm = (C_MAC, S_MAC) if up else (S_MAC, C_MAC)
    E = lambda **kw: Ether(src=sm, dst=dm, **kw)  # noqa: E731
    tcp = TCP(sport=40000, dport=443, flags="S", seq=1,
              options=[("MSS", 1460), ("SAckOK", b""), ("Timestamp", (1, 0)),
                       ("NOP", None), ("WScale", 7)])
    f = [
        ("ipv4_tcp_syn", E() / IP(src=s4, dst=d4) / tcp),
        ("ipv4_tcp_data", E() / IP(src=s4, dst=d4) / TCP(sport=40000, dport=443, flags="PA") / Raw(b"d" * 100)),
        ("ipv4_udp", E() / IP(src=s4, dst=d4) / UDP(sport=5353, dport=53) / Raw(b"q" * 30)),
        ("ipv4_icmp", E() / IP(src=s4, dst=d4) / ICMP() / Raw(b"ping")),
        ("ipv4_options", E() / IP(src=s4, dst=d4, options=[IPOption_RR(routers=["198.18.0.9"])]) / UDP() / Raw(b"o")),
        ("ipv4_gre_unknown_l4", E() / IP(src=s4, dst=d4, proto=47) / Raw(b"\x00" * 24)),
        ("ipv4_first_fragment", E() / IP(src=s4, dst=d4, flags="MF", id=7) / UDP(sport=1, dport=2, len=1000) / Raw(b"f" * 64)),
        ("ipv4_later_fragment", E() / IP(src=s4, dst=d4, frag=100, id=7, proto=17) / Raw(b"g" * 64)),
        ("ipv4_padded_short", E() / IP(src=s4, dst=d4) / UDP() / Raw(b"z")),
        ("ipv6_tcp", E() / IPv6(src=s6, dst=d6) / TCP(sport=40001, dport=80, flags="S")),
        ("ipv6_udp", E() / IPv6(src=s6, dst=d6) / UDP(sport=1234, dport=53) / Raw(b"q6")),
        ("ipv6_icmpv6", E() / IPv6(src=s6, dst=d6) / ICMPv6EchoRequest(data=b"p6")),
        ("ipv6_hbh_dst_rh_tcp", E() / IPv6(src=s6, dst=d6) / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt()
            / IPv6ExtHdrRouting(addresses=["2001:db8:3::1"], segleft=0) / TCP(sport=1, dport=2)),
        ("ipv6_fragment_first", E() / IPv6(src=s6, dst=d6) / IPv6ExtHdrFragment(m=1, id=9) / UDP(sport=3, dport=4) / Raw(b"x" * 40)),
        ("ipv6_fragment_later", E() / IPv6(src=s6, dst=d6) / IPv6ExtHdrFragment(offset=10, id=9, nh=17) / Raw(b"y" * 40)),
        ("vlan_ipv4", E() / Dot1Q(vlan=100) / IP(src=s4, dst=d4) / TCP(sport=5, dport=6)),
        ("vlan_ipv6", E() / Dot1Q(vlan=101, prio=5) / IPv6(src=s6, dst=d6) / UDP(sport=5, dport=6)),
        ("qinq_ipv4", E() / Dot1AD(vlan=200) / Dot1Q(vlan=300) / IP(src=s4, dst=d4) / UDP(sport=7, dport=8)),
        ("qinq_8100_8100_ipv6", E() / Dot1Q(vlan=10) / Dot1Q(vlan=20) / IPv6(src=s6, dst=d6) / TCP(sport=9, dport=10)),
        ("pppoe_ipv4", E(type=0x8864) / PPPoE(sessionid=0x1234) / PPP(proto=0x0021) / IP(src=s4, dst=d4) / TCP(sport=11, dport=12)),
        ("pppoe_ipv6", E(type=0x8864) / PPPoE(sessionid=0x1234) / PPP(proto=0x0057) / IPv6(src=s6, dst=d6) / UDP(sport=13, dport=14)),
        ("vlan_pppoe_ipv4", E() / Dot1Q(vlan=7) / PPPoE(sessionid=1) / PPP(proto=0x0021) / IP(src=s4, dst=d4) / UDP()),
        ("pppoe_lcp", E(type=0x8864) / PPPoE(sessionid=2) / PPP(proto=0xc021) / Raw(b"\x01\x01\x00\x04")),
        ("arp", Ether(src=sm, dst="ff:ff:ff:ff:ff:ff") / ARP(psrc=s4, pdst=d4)),
        ("lldp", Ether(src=sm, dst="01:80:c2:00:00:0e", type=0x88cc) / Raw(b"\x02\x07\x04" + b"\x00" * 40)),
        ("ipv4_jumbo_9000", E() / IP(src=s4, dst=d4) / UDP(sport=20, dport=21) / Raw(bytes(range(256)) * 34 + b"j" * 200)),
        ("ipv6_jumbo_9000", E() / IPv6(src=s6, dst=d6) / TCP(sport=22, dport=23) / Raw(b"J" * 8940)),
    ]
    out = []
    for name, p in f:
        b = bytes(p)
        if name == "ipv4_padded_short":
            b = b + b"\x00" * (60 - len(b))  # Ethernet padding after the datagram
        out.append((name, b))
    return out


def _ipv4(payload_proto=6, ihl=5, tot=None, body=b""):
    hdr = IP(src=V4C, dst=V4S, proto=payload_proto, ihl=ihl)
    b = bytearray(bytes(hdr / Raw(body)))
    if tot is not None:
        b[2:4] = struct.pack("!H", tot)
    return bytes(b)


def malformed():
    """(name, bytes, reason): frames whose headers lie; sluice forwards
    them unchanged and counts the reason."""
    e = bytes(eth(type=0x0800))
    e6 = bytes(eth(type=0x86DD))
    tcp_ok = bytes(TCP(sport=1, dport=2))
    bad_doff = bytearray(tcp_ok)
    bad_doff[12] = 0x30  # data offset 3 words
    long_doff = bytearray(tcp_ok)
    long_doff[12] = 0xF0  # 60 bytes, only 20 present
    udp_bad = bytearray(bytes(UDP(sport=1, dport=2) / Raw(b"abcd")))
    udp_bad[4:6] = struct.pack("!H", 200)
    ip6 = bytearray(bytes(IPv6(src=V6C, dst=V6S, nh=0)))
    return [
        ("runt_10_bytes", bytes(eth())[:10], "truncated_l2"),
        ("empty_ethertype_only", bytes(eth(type=0x0800))[:14], "truncated_ip"),
        ("truncated_vlan", bytes(eth(type=0x8100))[:14] + b"\x00", "truncated_vlan"),
        ("three_vlans", bytes(eth() / Dot1Q(vlan=1) / Dot1Q(vlan=2) / Dot1Q(vlan=3) / IP(src=V4C, dst=V4S)), "too_many_vlans"),
        ("truncated_pppoe", bytes(eth(type=0x8864)) + b"\x11\x00\x00", "truncated_pppoe"),
        ("pppoe_lying_length", bytes(eth(type=0x8864) / PPPoE(sessionid=1, len=1400) / PPP(proto=0x21) / IP(src=V4C, dst=V4S)), "pppoe_bad_length"),
        ("ipv4_truncated_header", e + _ipv4()[:12], "truncated_ip"),
        ("ipv4_version_6_in_ipv4_ethertype", e + bytes(IPv6(src=V6C, dst=V6S)), "ip_bad_version"),
        ("ipv4_ihl_3", e + _ipv4(ihl=3, body=b"x" * 20), "ipv4_bad_ihl"),
        ("ipv4_ihl_past_end", e + _ipv4(ihl=15)[:30], "truncated_ip"),
        ("ipv4_total_length_lies_long", e + _ipv4(tot=1500, body=tcp_ok), "ip_bad_total_length"),
        ("ipv4_total_length_below_ihl", e + _ipv4(tot=10, body=tcp_ok), "ip_bad_total_length"),
        ("ipv4_tcp_truncated", e + _ipv4(body=tcp_ok[:10]), "truncated_l4"),
        ("ipv4_tcp_doff_3", e + _ipv4(body=bytes(bad_doff)), "tcp_bad_data_offset"),
        ("ipv4_tcp_doff_past_end", e + _ipv4(body=bytes(long_doff)), "tcp_bad_data_offset"),
        ("ipv4_udp_length_lies", e + _ipv4(payload_proto=17, body=bytes(udp_bad)), "udp_bad_length"),
        ("ipv6_truncated", e6 + bytes(ip6)[:30], "truncated_ip"),
        ("ipv6_payload_length_lies", e6 + bytes(IPv6(src=V6C, dst=V6S, plen=900) / UDP()), "ip_bad_total_length"),
        ("ipv6_ext_header_truncated", e6 + bytes(IPv6(src=V6C, dst=V6S, nh=0, plen=4)) + b"\x06\x00\x00\x00", "ipv6_bad_ext_header"),
        ("ipv6_ext_header_length_lies", e6 + bytes(IPv6(src=V6C, dst=V6S, nh=60, plen=8)) + b"\x06\x05" + b"\x00" * 6, "ipv6_bad_ext_header"),
        ("ipv6_ext_header_chain_too_long", e6 + bytes(IPv6(src=V6C, dst=V6S, nh=60, plen=80)) + (b"\x3c\x00" + b"\x00" * 6) * 10, "ipv6_too_many_ext_headers"),
    ]
