#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the seed corpus of fuzz_tcpopt (tests/fuzz/tcpopt/corpus/).

Each seed is 5 control bytes followed by a TCP segment or, with CTL_FRAME,
a whole Ethernet frame; see the header of fuzz_tcpopt.c for the layout.
Segments are built with scapy where scapy can express them, and by hand
for the malformed layouts scapy refuses to produce.

Run with Debian's interpreter, which sees python3-scapy:
    /usr/bin/python3 tests/fuzz/tcpopt/gen_corpus.py
"""

import os
import struct
import sys

from scapy.all import IP, IPv6, IPv6ExtHdrHopByHop, TCP, Ether, Dot1Q, Raw

CTL_FRAME = 0x01
CTL_IPV6 = 0x02
CTL_FIX_CSUM = 0x04
CTL_READONLY = 0x08
CTL_PARTIAL = 0x10
CTL_MAL_DROP = 0x20
CTL_MTU = 0x40

LINUX_SYN = [("MSS", 1460), ("SAckOK", b""), ("Timestamp", (0x1000, 0)),
             ("NOP", None), ("WScale", 7)]


def ctl(bits=CTL_FIX_CSUM, clamp=1400, strip=0, drop=0):
    return bytes([bits]) + struct.pack("!H", clamp) + bytes([strip, drop])


def seg(flags="S", options=(), payload=b""):
    """A TCP segment with scapy-encoded options."""
    return bytes(TCP(sport=50000, dport=443, seq=0x12345678, flags=flags,
                     window=64240, options=list(options)) / Raw(payload))


def raw_seg(opt_bytes, flags=0x02, doff=None, payload=b""):
    """A TCP segment with option bytes exactly as given (may be malformed)."""
    if doff is None:
        doff = 5 + (len(opt_bytes) + 3) // 4
        opt_bytes = opt_bytes + b"\0" * (-len(opt_bytes) % 4)
    hdr = struct.pack("!HHIIBBHHH", 50000, 443, 0x12345678, 0,
                      (doff & 0xF) << 4, flags, 64240, 0, 0)
    return hdr + opt_bytes + payload


def mptcp(sub, body=b"", flags_nibble=0):
    return (30, bytes([(sub << 4) | flags_nibble]) + body)


SEEDS = {
    # Well-formed segments, every known kind at least once.
    "syn_linux_v4_clamp1400": ctl() + seg("S", LINUX_SYN),
    "synack_linux_v6_mtu1400": ctl(CTL_FIX_CSUM | CTL_IPV6 | CTL_MTU, 1400)
        + seg("SA", LINUX_SYN),
    "data_ts_only": ctl() + seg("PA", [("NOP", None), ("NOP", None),
                                       ("Timestamp", (1, 2))], b"x" * 64),
    "ack_sack_3_blocks": ctl() + seg("A", [("NOP", None), ("NOP", None),
                                           ("SAck", (1, 2, 3, 4, 5, 6))]),
    "syn_mp_capable_v1": ctl() + seg("S", LINUX_SYN[:1] + [mptcp(0, b"\x81")]),
    "synack_mp_capable_key": ctl() + seg("SA", [("MSS", 1400),
                                               mptcp(0, b"\x81" + b"K" * 8)]),
    "ack_mp_capable_keys": ctl() + seg("A", [mptcp(0, b"\x81" + b"k" * 16)]),
    "syn_mp_join": ctl() + seg("S", [("MSS", 1460),
                                     mptcp(1, b"\x01" + b"T" * 8)]),
    "synack_mp_join": ctl() + seg("SA", [mptcp(1, b"\x01" + b"H" * 12)]),
    "ack_mp_join_hmac": ctl() + seg("A", [mptcp(1, b"\x00" + b"h" * 20)]),
    "dss_ack_and_map_csum": ctl() + seg("A", [mptcp(2, b"\x05" + b"\0" * 16)]),
    "dss_ack8_map8": ctl() + seg("A", [mptcp(2, b"\x0f" + b"\0" * 22)]),
    "add_addr_v4_hmac": ctl() + seg("A", [mptcp(3, b"\x01\xc6\x12\x00\x01"
                                               + b"m" * 8)]),
    "add_addr_v6_echo": ctl() + seg("A", [mptcp(3, b"\x02" + b"\x20" * 16,
                                               1)]),
    "remove_addr_two": ctl() + seg("A", [mptcp(4, b"\x01\x02")]),
    "mp_prio_fail_fastclose": ctl() + seg("A", [mptcp(5, b"\x00"),
                                               mptcp(6, b"\0" * 9),
                                               mptcp(7, b"\0" * 9)]),
    "mp_tcprst": ctl() + seg("RA", [mptcp(8, b"\x01")]),
    "tfo_cookie_request": ctl() + seg("S", [("MSS", 1460), (34, b"")]),
    "tfo_cookie_8": ctl() + seg("S", [("MSS", 1460), (34, b"C" * 8)], b"GET"),
    "tfo_experimental_254": ctl() + seg("S", [("MSS", 1460),
                                             (254, b"\xf9\x89" + b"c" * 8)]),
    "exp_253_unknown_exid": ctl() + seg("A", [(253, b"\xab\xcd\x01\x02")]),
    "accecn0_accecn1": ctl() + seg("A", [(172, b"\0\0\1\0\0\2\0\0\3"),
                                         (174, b"\0\0\4")]),
    "md5sig": ctl() + seg("A", [(19, b"5" * 16), ("NOP", None),
                                ("NOP", None)]),
    "tcp_ao": ctl() + seg("A", [(29, b"\x01\x02" + b"a" * 12)]),
    "unknown_kinds": ctl() + seg("A", [(99, b""), (200, b"\1\2\3\4\5"),
                                       (76, b"\xee")]),
    "odd_nop_padding_mss": ctl() + raw_seg(b"\x01\x02\x04\x23\x28\x01\x01"
                                           b"\x03\x03\x07\x00"),
    "forty_bytes": ctl() + raw_seg(b"\x02\x04\x05\xb4\x04\x02\x08\x0a"
                                   + b"\0" * 8 + b"\x01\x03\x03\x08"
                                   + b"\x1e\x0c\x01\x81" + b"\0" * 8
                                   + b"\x01" * 8),
    "forty_nops": ctl() + raw_seg(b"\x01" * 40),
    "two_mss_options": ctl() + raw_seg(b"\x02\x04\x05\xb4\x02\x04\x20\x00"),
    # Found by the fuzzer: the last MSS is the small one.
    "two_mss_last_below_clamp": ctl() + raw_seg(b"\x02\x04\x23\xb4"
                                                b"\x02\x04\x00\x00"),
    # Policies.
    "strip_mptcp": ctl(strip=30) + seg("S", LINUX_SYN + [mptcp(0, b"\x81")]),
    "strip_mss": ctl(strip=2) + seg("S", LINUX_SYN),
    "drop_sack_perm": ctl(drop=4) + seg("S", LINUX_SYN),
    "readonly_clamp": ctl(CTL_FIX_CSUM | CTL_READONLY) + seg("S", LINUX_SYN),
    "partial_csum_clamp": ctl(CTL_FIX_CSUM | CTL_PARTIAL) + seg("S", LINUX_SYN),
    # Malformed layouts, one per reason.
    "mal_len_zero": ctl() + raw_seg(b"\x01\x02\x00\x00"),
    "mal_len_one": ctl(CTL_FIX_CSUM | CTL_MAL_DROP) + raw_seg(b"\x63\x01\x00\x00"),
    "mal_len_past_header": ctl() + raw_seg(b"\x01\x01\x01\x01\x08\x0a\0\0",
                                           doff=7, payload=b"\0" * 8),
    "mal_truncated_option": ctl() + raw_seg(b"\x01\x01\x01\x02"),
    "mal_doff_below_5": ctl() + raw_seg(b"", doff=4, payload=b"\0" * 8),
    "mal_doff_past_end": ctl() + raw_seg(b"\x02\x04\x05\xb4", doff=15),
    "mal_header_truncated": ctl() + raw_seg(b"")[:15],
    "mal_mss_length_5": ctl() + raw_seg(b"\x02\x05\x05\xb4\x00"),
    "mal_mp_fail_length": ctl() + raw_seg(b"\x1e\x04\x60\x00"),
    "mal_dss_length": ctl() + raw_seg(b"\x1e\x0c\x20\x01" + b"\0" * 8),
}


def frames():
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    v4 = IP(src="198.18.0.1", dst="198.19.0.2")
    v6 = IPv6(src="2001:db8::1", dst="2001:db8::2")
    syn = TCP(sport=50000, dport=443, flags="S", options=LINUX_SYN)
    synack = TCP(sport=443, dport=50000, flags="SA",
                 options=LINUX_SYN[:1] + [mptcp(0, b"\x81" + b"K" * 8)])
    data = TCP(sport=50000, dport=443, flags="A",
               options=[("NOP", None), ("NOP", None), ("Timestamp", (1, 2))])
    f = CTL_FRAME
    return {
        "frame_v4_syn": ctl(f) + bytes(eth / v4 / syn),
        "frame_v6_synack_mptcp": ctl(f | CTL_MTU, 1400)
            + bytes(eth / v6 / synack),
        "frame_v6_hbh_syn": ctl(f) + bytes(eth / v6 / IPv6ExtHdrHopByHop()
                                           / syn),
        "frame_vlan_v4_data": ctl(f) + bytes(eth / Dot1Q(vlan=7) / v4 / data
                                             / Raw(b"d" * 20)),
        "frame_v4_padded_ack": ctl(f) + bytes(eth / v4 / TCP(flags="A"))
            + b"\x02\x04\x05\xb4\x00\x00",
        "frame_v4_syn_readonly": ctl(f | CTL_READONLY) + bytes(eth / v4 / syn),
        "frame_v4_syn_offload": ctl(f | CTL_PARTIAL) + bytes(eth / v4 / syn),
    }


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    os.makedirs(out, exist_ok=True)
    seeds = dict(SEEDS)
    seeds.update(frames())
    for name, blob in sorted(seeds.items()):
        with open(os.path.join(out, name), "wb") as fh:
            fh.write(blob)
    print(f"wrote {len(seeds)} seeds to {os.path.relpath(out)}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
