# SPDX-License-Identifier: BSD-3-Clause
"""The tcpopt stage: every TCP option passes byte for byte, the MSS clamp
rewrites only the two MSS bytes and the checksum, and strip / drop /
malformed policies do exactly what they say. Segments are built by scapy;
an independent option walker written here from the RFCs predicts what
sluice must count and rewrite; tshark checks every output checksum."""
import os
import random
import shutil
import struct
import subprocess
import tempfile

from scapy.all import (IP, IPv6, IPv6ExtHdrDestOpt, IPv6ExtHdrHopByHop,
                       IPv6ExtHdrRouting, Dot1AD, Dot1Q, PPP, PPPoE, Raw,
                       TCP, UDP)

import frames
import harness as h

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CLAMP_1400 = os.path.join(ROOT, "config", "examples", "mss-clamp-1400.ini")
REFERENCE = os.path.join(ROOT, "config", "tcpopt.ini")

# ------------------------------------------------------------ the oracle
# Valid lengths per known kind (RFC 9293, 7323, 2018, 2385, 5925, 8684,
# 7413 + erratum 4238, AccECN draft, 6994). Other kinds: any length >= 2.
KIND_LEN = {
    2: {4}, 3: {3}, 4: {2}, 5: {10, 18, 26, 34}, 8: {10}, 19: {18},
    29: set(range(4, 41)), 30: set(range(3, 41)),
    34: {2, 6, 8, 10, 12, 14, 16, 18}, 172: {2, 5, 8, 11}, 174: {2, 5, 8, 11},
    253: set(range(4, 41)), 254: set(range(4, 41)),
}
MPTCP_LEN = {
    0: {4, 12, 20, 22, 24}, 1: {12, 16, 24}, 3: {8, 10, 16, 18, 20, 22, 28, 30},
    4: set(range(4, 41)), 5: {3, 4}, 6: {12}, 7: {12}, 8: {4},
    15: set(range(3, 41)),
}
KIND_NAME = {0: "eol", 1: "nop", 2: "mss", 3: "window_scale", 4: "sack_permitted",
             5: "sack", 8: "timestamp", 19: "md5sig", 29: "tcp_ao", 30: "mptcp",
             34: "fast_open", 172: "accecn0", 174: "accecn1",
             253: "experimental_253", 254: "experimental_254"}
SUB_NAME = {0: "mp_capable", 1: "mp_join", 2: "dss", 3: "add_addr",
            4: "remove_addr", 5: "mp_prio", 6: "mp_fail", 7: "mp_fastclose",
            8: "mp_tcprst", 15: "mp_experimental"}
SEGS = ("syn", "synack", "other")


def dss_len_ok(o):
    if len(o) < 4:
        return False
    fl = o[3]
    want = 4
    if fl & 0x01:
        want += 8 if fl & 0x02 else 4
    if fl & 0x04:
        want += (8 if fl & 0x08 else 4) + 4 + 2
    return len(o) == want or (bool(fl & 0x04) and len(o) == want + 2)


def walk(area):
    """Options of one option area: ([(kind, off, len, sub)], reason)."""
    out, p = [], 0
    while p < len(area):
        k = area[p]
        if k <= 1:
            out.append((k, p, 1, 0))
            if k == 0:
                break  # what follows EOL is padding
            p += 1
            continue
        if p + 1 >= len(area):
            return out, "truncated_option"
        n = area[p + 1]
        if n < 2:
            return out, "length_below_2"
        if n > len(area) - p:
            return out, "length_past_header"
        if k in KIND_LEN and n not in KIND_LEN[k]:
            return out, "bad_length_for_kind"
        sub = 0
        if k == 30:
            sub = area[p + 2] >> 4
            o = area[p:p + n]
            if (sub == 2 and not dss_len_ok(o)) or (sub != 2 and sub in MPTCP_LEN and n not in MPTCP_LEN[sub]):
                return out, "bad_length_for_mptcp_subtype"
        out.append((k, p, n, sub))
        p += n
    return out, None


def seg_class(flags):
    if not flags & 0x02:
        return "other"
    return "synack" if flags & 0x10 else "syn"


# ----------------------------------------------------------- the corpus
def o(kind, body=b""):
    return bytes([kind, 2 + len(body)]) + body


NOP, EOL = b"\x01", b"\x00"


def mss(v):
    return o(2, struct.pack("!H", v))


def ws(s):
    return o(3, bytes([s]))


SACKOK = o(4)


def sack(n):
    return o(5, b"".join(struct.pack("!II", 1000 * i, 1000 * i + 500) for i in range(1, n + 1)))


def ts(a=0x11223344, b=0):
    return o(8, struct.pack("!II", a, b))


def mp(sub, rest, ver_or_flags=0x01):
    """MPTCP option: subtype nibble, low nibble, then rest."""
    return o(30, bytes([(sub << 4) | (ver_or_flags & 0xF)]) + rest)


LINUX_SYN = mss(1460) + SACKOK + ts() + NOP + ws(7)

# (name, option bytes, TCP flags). Lengths need not be multiples of 4:
# pad() adds NOPs or EOL + zero padding.
VALID = [
    ("linux_syn", LINUX_SYN, "S"),
    ("linux_synack", mss(1460) + SACKOK + ts(5, 0x11223344) + NOP + ws(9), "SA"),
    ("mss_1400_not_clamped", mss(1400), "S"),
    ("mss_1401_clamped", mss(1401), "S"),
    ("mss_536_small", mss(536), "SA"),
    ("mss_65495_loopback", mss(65495) + NOP + ws(14), "S"),
    ("mss_on_data_segment_not_clamped", mss(1460), "A"),
    ("mss_on_rst_not_clamped", mss(9000), "R"),
    ("odd_nop_padding", NOP + mss(8960) + NOP * 3 + ws(2) + NOP, "S"),
    ("mss_at_odd_offset_after_ws", ws(1) + mss(1500) + NOP, "SA"),
    ("mss_then_eol_then_garbage", mss(1460) + EOL + b"\xff\x7f\x02", "S"),
    ("eol_only_all_zero", EOL * 8, "S"),
    ("nops_fill_40", NOP * 40, "S"),
    ("two_mss_options_both_clamped", mss(1460) + mss(1500), "S"),
    ("data_no_options", b"", "PA"),
    ("data_nop_nop_ts", NOP + NOP + ts(7, 8), "PA"),
    ("ack_ts_other_layout", ts(9, 10) + NOP + NOP, "A"),
    ("sack_1_block", NOP + NOP + sack(1), "A"),
    ("sack_2_blocks_with_ts", NOP + NOP + ts() + NOP + NOP + sack(2), "A"),
    ("sack_3_blocks", NOP + NOP + sack(3), "A"),
    ("sack_4_blocks_fill_36", NOP + NOP + sack(4), "A"),
    ("md5_syn", mss(1460) + NOP + NOP + o(19, bytes(range(16))), "S"),
    ("tcp_ao_synack", mss(1460) + o(29, b"\x01\x02" + bytes(12)) + NOP + NOP, "SA"),
    ("md5_data", NOP + NOP + o(19, b"\xaa" * 16), "PA"),
    ("tcp_ao_syn", mss(1460) + o(29, b"\x07\x08" + b"\x5a" * 12), "S"),
    ("tcp_ao_min", o(29, b"\x01\x02"), "A"),
    ("mptcp_mp_capable_syn", LINUX_SYN + mp(0, b"\x81"), "S"),
    ("mptcp_mp_capable_synack", mss(1460) + SACKOK + NOP + ws(7) + mp(0, b"\x81" + b"K" * 8), "SA"),
    ("mptcp_mp_capable_ack", NOP + NOP + ts() + mp(0, b"\x81" + b"k" * 16), "A"),
    ("mptcp_mp_capable_ack_data_22", mp(0, b"\x81" + b"k" * 16 + b"\x05\xdc"), "PA"),
    ("mptcp_mp_capable_ack_data_csum_24", mp(0, b"\x81" + b"k" * 16 + b"\x05\xdc\xbe\xef"), "PA"),
    ("mptcp_mp_join_syn", mss(1460) + mp(1, b"\x05" + b"T" * 4 + b"R" * 4, 0x0), "S"),
    ("mptcp_mp_join_synack", mss(1460) + mp(1, b"\x05" + b"H" * 8 + b"R" * 4, 0x0), "SA"),
    ("mptcp_mp_join_ack", mp(1, b"\x00" + b"H" * 20, 0x0), "A"),
    ("mptcp_dss_ack4", NOP + NOP + ts() + mp(2, b"\x01" + b"A" * 4, 0), "A"),
    ("mptcp_dss_ack8", mp(2, b"\x03" + b"A" * 8, 0), "A"),
    ("mptcp_dss_map4", mp(2, b"\x04" + b"D" * 4 + b"S" * 4 + b"\x05\xdc", 0), "PA"),
    ("mptcp_dss_map4_csum", mp(2, b"\x04" + b"D" * 4 + b"S" * 4 + b"\x05\xdc\xca\xfe", 0), "PA"),
    ("mptcp_dss_ack8_map8_csum_28", mp(2, b"\x0f" + b"A" * 8 + b"D" * 8 + b"S" * 4 + b"\x05\xdc\x12\x34", 0), "PA"),
    ("mptcp_add_addr_v4_echo", mp(3, b"\x01" + bytes([198, 18, 0, 9]), 0x1), "A"),
    ("mptcp_add_addr_v4_hmac", mp(3, b"\x02" + bytes([198, 18, 0, 9]) + b"M" * 8, 0x0), "A"),
    ("mptcp_add_addr_v4_port_hmac_18", mp(3, b"\x03" + bytes([198, 18, 0, 9]) + b"\x1f\x90" + b"M" * 8, 0x0), "A"),
    ("mptcp_add_addr_v6_hmac_28", mp(3, b"\x04" + bytes(16) + b"M" * 8, 0x0), "A"),
    ("mptcp_remove_addr", mp(4, b"\x01\x02", 0x0), "A"),
    ("mptcp_mp_prio_3", mp(5, b"", 0x1), "A"),
    ("mptcp_mp_prio_4", mp(5, b"\x02", 0x1), "A"),
    ("mptcp_mp_fail", mp(6, b"\x00" + b"F" * 8, 0x0), "A"),
    ("mptcp_mp_fastclose", mp(7, b"\x00" + b"K" * 8, 0x0), "RA"),
    ("mptcp_mp_tcprst", mp(8, b"\x01", 0x1), "R"),
    ("mptcp_mp_experimental", mp(15, b"xyz", 0x0), "A"),
    ("mptcp_unknown_subtype_9", mp(9, b"??" * 3, 0x0), "A"),
    ("tfo_cookie_request", mss(1460) + o(34) + SACKOK + ts() + NOP + ws(7), "S"),
    ("tfo_cookie_8", mss(1460) + o(34, b"C" * 8) + SACKOK + NOP + NOP, "S"),
    ("tfo_cookie_16_synack", mss(1460) + o(34, b"C" * 16), "SA"),
    ("accecn0_11", NOP + o(172, b"\x00\x00\x01" * 3), "A"),
    ("accecn1_8", NOP + NOP + o(174, b"\x00\x00\x02\x00\x00\x03"), "A"),
    ("accecn_2_and_5_on_syn", mss(1460) + o(172) + o(174, b"\x00\x00\x01") + NOP, "S"),
    ("exp253_tfo_exid", mss(1460) + o(253, b"\xf9\x89" + b"c" * 8), "S"),
    ("exp253_exid_only", o(253, b"\xf9\x89"), "S"),
    ("exp254_unknown_exid", NOP + NOP + o(254, b"\x12\x34\x56\x78"), "A"),
    ("unknown_kinds_6_7_27_28", o(6, b"ECHO") + o(7, b"REPL") + o(27, b"\x00" * 6) + o(28, b"\x80\x10"), "A"),
    ("unknown_kind_69_on_syn", mss(1460) + o(69, b"\x21\x05"), "S"),
    ("unknown_kind_200_len2", o(200) + NOP + NOP, "SA"),
    ("unknown_kind_255_len40", o(255, bytes(range(38))), "S"),
    ("unknown_kind_99_len38_plus_nops", NOP + NOP + o(99, b"\xee" * 36), "A"),
    ("full_40_bytes_syn", mss(1460) + SACKOK + ts() + NOP + ws(7) + mp(0, b"\x81") + o(34, b"C" * 8) + o(200, b"\x00" * 4), "S"),
    ("full_40_bytes_synack", mss(1500) + o(29, b"\x01\x02" + b"m" * 12) + o(19, b"5" * 16) + NOP + NOP, "SA"),
]

# (name, option bytes, flags, reason). pad() is applied to these too: the
# option area must be a whole number of words, so the malformed option is
# placed so that the area ends where the test needs it.
MALFORMED = [
    ("mss_len_0", mss(1460) + b"\x02\x00\x05\xb4", "S", "length_below_2"),
    ("unknown_len_1", NOP + NOP + b"\xc8\x01" + NOP * 4, "A", "length_below_2"),
    ("ts_len_past_header", mss(1460) + NOP + NOP + b"\x08\x0a\x00\x00", "S", "length_past_header"),
    ("unknown_len_past_header", b"\xc8\x1e" + b"\x00" * 10, "A", "length_past_header"),
    ("kind_in_last_byte", NOP * 3 + b"\x03", "S", "truncated_option"),
    ("mss_then_kind_in_last_byte", mss(1460) + NOP * 3 + b"\x1e", "S", "truncated_option"),
    ("mss_len_3", b"\x02\x03\x05" + NOP, "S", "bad_length_for_kind"),
    ("mss_len_6", b"\x02\x06\x05\xb4\x00\x00" + NOP + NOP, "SA", "bad_length_for_kind"),
    ("ws_len_4", mss(1460) + b"\x03\x04\x07\x00", "S", "bad_length_for_kind"),
    ("ts_len_8", b"\x08\x08" + b"\x00" * 6 + NOP * 4, "A", "bad_length_for_kind"),
    ("sack_len_12", b"\x05\x0c" + b"\x00" * 10 + NOP * 4, "A", "bad_length_for_kind"),
    ("sackok_len_3", b"\x04\x03\x00" + NOP, "S", "bad_length_for_kind"),
    ("md5_len_16", b"\x13\x10" + b"\x00" * 14 + NOP * 4, "A", "bad_length_for_kind"),
    ("tfo_len_4", mss(1460) + b"\x22\x04CC", "S", "bad_length_for_kind"),
    ("tfo_len_7", b"\x22\x07" + b"C" * 5 + NOP, "S", "bad_length_for_kind"),
    ("accecn_len_3", b"\xac\x03\x00" + NOP, "A", "bad_length_for_kind"),
    ("exp253_len_3", b"\xfd\x03\xf9" + NOP, "S", "bad_length_for_kind"),
    ("ao_len_3", b"\x1d\x03\x00" + NOP, "A", "bad_length_for_kind"),
    ("mptcp_len_2", mss(1460) + b"\x1e\x02" + NOP + NOP, "S", "bad_length_for_kind"),
    ("mp_capable_len_8", mss(1460) + mp(0, b"\x81" + b"k" * 4), "S", "bad_length_for_mptcp_subtype"),
    ("mp_join_len_13", mp(1, b"\x00" + b"T" * 9, 0) + NOP * 3, "S", "bad_length_for_mptcp_subtype"),
    ("dss_ack_flag_len_12", mp(2, b"\x01" + b"A" * 8, 0), "A", "bad_length_for_mptcp_subtype"),
    ("mp_fail_len_8", mp(6, b"\x00" + b"F" * 4, 0), "A", "bad_length_for_mptcp_subtype"),
    ("valid_then_garbage", mss(1460) + SACKOK + ts() + NOP + ws(7) + b"\xfe\x00\x00\x00", "S", "length_below_2"),
]


def pad(opts):
    """A whole number of 32-bit words: NOPs for a clean layout."""
    return opts + NOP * (-len(opts) % 4)


def tcp_bytes(opts, flags, payload=b"", doff=None, sport=40000, dport=443):
    """Unchecksummed TCP header + options + payload (scapy adds the sum)."""
    return TCP(sport=sport, dport=dport, flags=flags, seq=1000,
               ack=77 if "A" in flags else 0, window=64240,
               dataofs=doff if doff is not None else 5 + len(opts) // 4) / Raw(opts + payload)


ENCAPS = ("eth", "vlan", "qinq", "pppoe", "vlan_pppoe")


def build(opts, flags, ip=4, encap="eth", up=True, payload=b"", ext6=False,
          doff=None, sport=40000):
    """(frame bytes, offset of the TCP header)."""
    s4, d4 = (frames.V4C, frames.V4S) if up else (frames.V4S, frames.V4C)
    s6, d6 = (frames.V6C, frames.V6S) if up else (frames.V6S, frames.V6C)
    sm, dm = (frames.C_MAC, frames.S_MAC) if up else (frames.S_MAC, frames.C_MAC)
    t = tcp_bytes(opts, flags, payload, doff, sport=sport if up else 443,
                  dport=443 if up else sport)
    if ip == 4:
        l3 = IP(src=s4, dst=d4, id=sport & 0xFFFF) / t
    elif ext6:
        l3 = (IPv6(src=s6, dst=d6) / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt()
              / IPv6ExtHdrRouting(addresses=["2001:db8:3::1"], segleft=0) / t)
    else:
        l3 = IPv6(src=s6, dst=d6) / t
    ppp = 0x0021 if ip == 4 else 0x0057
    E = frames.eth(src=sm, dst=dm)
    if encap == "eth":
        f = E / l3
    elif encap == "vlan":
        f = E / Dot1Q(vlan=100, prio=3) / l3
    elif encap == "qinq":
        f = E / Dot1AD(vlan=200) / Dot1Q(vlan=300) / l3
    elif encap == "pppoe":
        f = frames.eth(src=sm, dst=dm, type=0x8864) / PPPoE(sessionid=0x1234) / PPP(proto=ppp) / l3
    else:
        f = E / Dot1Q(vlan=7) / PPPoE(sessionid=1) / PPP(proto=ppp) / l3
    b = bytes(f)
    return b, len(b) - 20 - len(opts) - len(payload)


class Seg:
    """One TCP frame and what the oracle says about it."""

    def __init__(self, name, frame, tcp_off, up=True, avail=None):
        self.name, self.frame, self.off, self.up = name, frame, tcp_off, up
        tcp = frame[tcp_off:]
        if avail is not None:
            tcp = tcp[:avail]
        self.tcp = tcp
        self.flags = tcp[13] if len(tcp) > 13 else 0
        self.seg = seg_class(self.flags) if len(tcp) > 13 else "other"
        self.opts, self.reason = [], None
        if len(tcp) < 20:
            self.reason = "header_truncated"
            return
        doff = (tcp[12] >> 4) * 4
        if doff < 20:
            self.reason = "data_offset_below_5"
        elif doff > len(tcp):
            self.reason = "data_offset_past_end"
        else:
            self.area = tcp[20:doff]
            self.opts, self.reason = walk(self.area)

    def expected(self, clamp=0, strip=(), drop=(), malformed_drop=False):
        """(bytes expected out or None if dropped, positions allowed to
        differ, MSS options clamped, options stripped)."""
        kinds = {k for k, _, _, _ in self.opts}
        if kinds & set(drop):
            return None, set(), 0, 0
        if self.reason is not None:
            return (None if malformed_drop else self.frame), set(), 0, 0
        out = bytearray(self.frame)
        changed, clamped, stripped = set(), 0, 0
        base = self.off + 20
        # A signature (TCP-MD5 19, TCP-AO 29) covers the options: the clamp
        # leaves signed segments alone, an explicit strip still applies.
        if kinds & {19, 29}:
            clamp = 0
        for k, p, n, _ in self.opts:
            if k in strip:
                out[base + p:base + p + n] = NOP * n
                changed |= set(range(base + p, base + p + n))
                stripped += 1
            elif k == 2 and clamp and self.seg != "other":
                v = struct.unpack("!H", self.area[p + 2:p + 4])[0]
                if v > clamp:
                    out[base + p + 2:base + p + 4] = struct.pack("!H", clamp)
                    changed |= {base + p + 2, base + p + 3}
                    clamped += 1
        if changed:
            changed |= {self.off + 16, self.off + 17}
        return bytes(out), changed, clamped, stripped


def corpus(ip_versions=(4, 6), encaps=ENCAPS):
    """Every VALID layout on every encapsulation and IP version, both
    directions, plus IPv6 with extension headers."""
    segs = []
    n = 0
    for name, opts, flags in VALID:
        opts = pad(opts)
        assert len(opts) <= 40, name
        for ip in ip_versions:
            for enc in encaps:
                n += 1
                up = n % 2 == 0
                payload = b"p" * (n % 7) if "P" in flags else b""
                f, off = build(opts, flags, ip, enc, up, payload, sport=20000 + n)
                segs.append(Seg("%s/ipv%d/%s" % (name, ip, enc), f, off, up))
        f, off = build(opts, flags, 6, "eth", True, ext6=True, sport=30000 + n)
        segs.append(Seg("%s/ipv6_ext_headers" % name, f, off, True))
    return segs


def malformed_corpus():
    segs = []
    for i, (name, opts, flags, reason) in enumerate(MALFORMED):
        opts = pad(opts)
        for ip in (4, 6):
            f, off = build(opts, flags, ip, ENCAPS[i % len(ENCAPS)], True, sport=50000 + i)
            s = Seg("%s/ipv%d" % (name, ip), f, off)
            assert s.reason == reason, (name, s.reason, reason)
            segs.append(s)
    # Header-level layouts: the data offset and the IP length lie.
    f, off = build(b"", "S", 4, doff=4)
    segs.append(Seg("data_offset_4", f, off))
    f, off = build(b"", "S", 6, doff=0)
    segs.append(Seg("data_offset_0_ipv6", f, off))
    f, off = build(pad(mss(1460)), "S", 4, doff=15)
    segs.append(Seg("data_offset_15_with_24_bytes", f, off))
    f, off = build(pad(mss(1460) + ws(3)), "S", 6, "vlan", doff=10)
    segs.append(Seg("data_offset_10_with_28_bytes_ipv6", f, off))
    # TCP header cut by the IP total length: only 12 bytes belong to it.
    b, off = build(pad(LINUX_SYN), "S", 4)
    b = bytearray(b)
    b[off - 20 + 2:off - 20 + 4] = struct.pack("!H", 20 + 12)
    b[off - 20 + 10:off - 20 + 12] = b"\x00\x00"
    segs.append(Seg("ipv4_total_length_cuts_tcp_header", fix_ip4_sum(bytes(b), off - 20), off, avail=12))
    # Data offset says 24 bytes, the datagram has 20, Ethernet padding
    # holds 4 more bytes that look like an MSS option: never options.
    b, off = build(b"", "S", 4, doff=6)
    b = b + mss(1460) + b"\x00" * 8
    segs.append(Seg("data_offset_into_ethernet_padding", b, off, avail=20))
    return segs


def fix_ip4_sum(b, ip_off):
    b = bytearray(b)
    ihl = (b[ip_off] & 0xF) * 4
    b[ip_off + 10:ip_off + 12] = b"\x00\x00"
    s = sum(struct.unpack("!%dH" % (ihl // 2), bytes(b[ip_off:ip_off + ihl])))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    b[ip_off + 10:ip_off + 12] = struct.pack("!H", ~s & 0xFFFF)
    return bytes(b)


# ---------------------------------------------------------------- checks
def run_segs(segs, config=None, config_file=None, extra_up=(), extra_down=(), pairs=1, workdir=None):
    up = [s.frame for s in segs if s.up] + list(extra_up)
    down = [s.frame for s in segs if not s.up] + list(extra_down)
    return h.run([up, down] + [[]] * (2 * pairs - 2), config=config,
                 config_file=config_file, workdir=workdir, pairs=pairs)


def check_outputs(r, segs, **policy):
    """Every output frame is its input, except exactly the positions the
    oracle allows; returns (clamped, stripped, dropped) totals."""
    clamped = stripped = dropped = 0
    for port, up in ((1, True), (0, False)):
        want = []
        for s in segs:
            if s.up != up:
                continue
            exp, changed, c, st = s.expected(**policy)
            if exp is None:
                dropped += 1
                continue
            clamped += c
            stripped += st
            want.append((s, exp, changed))
        got = r.outs[port]
        assert len(got) == len(want), "port %d: %d frames out, %d expected\n%s" % (
            port, len(got), len(want), r.stdout)
        for g, (s, exp, changed) in zip(got, want):
            assert len(g) == len(s.frame), s.name
            diff = {i for i in range(len(g)) if g[i] != s.frame[i]}
            assert diff <= changed, "%s: bytes %s changed, only %s may" % (
                s.name, sorted(diff - changed), sorted(changed))
            for i in changed - {s.off + 16, s.off + 17}:
                assert g[i] == exp[i], "%s: byte %d is %#x, want %#x" % (s.name, i, g[i], exp[i])
            if changed:
                assert diff & {s.off + 16, s.off + 17}, "%s: rewritten, checksum untouched" % s.name
    return clamped, stripped, dropped


def tshark_status(path):
    """tcp.checksum.status per frame number: 1 Good, 0 Bad (tshark -G
    values: 0 Bad, 1 Good, 2 Unverified); '' where no TCP was decoded."""
    p = subprocess.run(["tshark", "-r", path, "-o", "tcp.check_checksum:TRUE",
                        "-T", "fields", "-e", "frame.number", "-e", "tcp.checksum.status"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    st = {}
    for line in p.stdout.splitlines():
        num, _, val = line.partition("\t")
        st[int(num)] = val
    return st


def check_checksums_with_tshark(tmp, nports=2, must_be_good=None):
    """For every port, each output frame's TCP checksum status equals that
    of the input frame it came from (matched in order, drops removed by
    must_be_good's caller) and is Good where the input was Good."""
    total_good = 0
    for p in range(nports):
        out = os.path.join(tmp, "out%d.pcap" % p)
        if not os.path.exists(out):
            continue
        st = tshark_status(out)
        for num, val in st.items():
            if must_be_good is not None and must_be_good(p, num):
                assert val == "1", "port %d frame %d: tshark checksum status %r (want 1 = Good)" % (p, num, val)
                total_good += 1
    return total_good


def expect_counters(r, segs):
    """Segments, options per kind and class, MPTCP subtypes, malformed
    reasons and the MPTCP health pair, all from the oracle."""
    kinds = {c: {} for c in SEGS}
    subs = {c: {} for c in SEGS}
    mal = {}
    segments = dict.fromkeys(SEGS, 0)
    syn_mpc = synack_mpc = 0
    for s in segs:
        segments[s.seg] += 1
        for k, _, _, sub in s.opts:
            name = KIND_NAME.get(k, "kind_%d" % k)
            kinds[s.seg][name] = kinds[s.seg].get(name, 0) + 1
            if k == 30:
                sn = SUB_NAME.get(sub, "subtype_%d" % sub)
                subs[s.seg][sn] = subs[s.seg].get(sn, 0) + 1
        if any(k == 30 and sub == 0 for k, _, _, sub in s.opts):
            syn_mpc += s.seg == "syn"
            synack_mpc += s.seg == "synack"
        if s.reason:  # counted even when a drop policy also applies
            mal[s.reason] = mal.get(s.reason, 0) + 1
    for c in SEGS:
        assert r.counter("tcpopt", "segments_" + c) == segments[c], (c, segments[c], r.stdout)
        got = parse_line(r, "tcpopt options_" + c)
        assert got == kinds[c], "options_%s: sluice %s\noracle %s" % (c, got, kinds[c])
        got = parse_line(r, "tcpopt mptcp_" + c)
        assert got == subs[c], "mptcp_%s: sluice %s\noracle %s" % (c, got, subs[c])
    got = parse_line(r, "tcpopt malformed")
    assert got == mal, "malformed: sluice %s\noracle %s" % (got, mal)
    assert r.counter("tcpopt", "syn_mp_capable") == syn_mpc, r.stdout
    assert r.counter("tcpopt", "synack_mp_capable") == synack_mpc, r.stdout


def parse_line(r, prefix):
    for line in r.stdout.splitlines():
        if line == prefix or line.startswith(prefix + " "):
            return {k: int(v) for k, v in (kv.split("=") for kv in line[len(prefix):].split())}
    raise AssertionError("no line %r:\n%s" % (prefix, r.stdout))


def good_in_checksum_map(segs, kept):
    """(port, frame number) -> True for output frames whose input was a
    TCP segment that tshark can verify (a whole, valid header)."""
    m = {}
    for port, up in ((1, True), (0, False)):
        n = 0
        for s in segs:
            if s.up != up or not kept(s):
                continue
            n += 1
            m[(port, n)] = s.reason is None or s.reason not in (
                "header_truncated", "data_offset_below_5", "data_offset_past_end")
    return m


class Workdir:
    def __enter__(self):
        self.path = tempfile.mkdtemp(prefix="sluice-tcpopt-")
        return self.path

    def __exit__(self, *a):
        shutil.rmtree(self.path, ignore_errors=True)


# ----------------------------------------------------------------- tests
def test_every_option_kind_passes_byte_for_byte_and_only_mss_above_1400_is_clamped():
    segs = corpus()
    # Input checksums are good: tshark agrees before sluice touches them.
    with Workdir() as tmp:
        r = run_segs(segs, config_file=CLAMP_1400, workdir=tmp)
        h.assert_clean_exit(r)
        clamped, stripped, dropped = check_outputs(r, segs, clamp=1400)
        assert stripped == 0 and dropped == 0
        assert clamped > 100, clamped
        assert r.counter("tcpopt", "mss_clamped") == clamped, r.stdout
        signed = sum(1 for s in segs if s.reason is None and s.seg != "other"
                     and {k for k, _, _, _ in s.opts} & {19, 29}
                     and any(k == 2 and struct.unpack("!H", s.area[p + 2:p + 4])[0] > 1400
                             for k, p, _, _ in s.opts))
        assert signed > 0
        assert r.counter("tcpopt", "clamp_skipped_signed") == signed, r.stdout
        m = good_in_checksum_map(segs, lambda s: True)
        for port in (0, 1):
            st = tshark_status(os.path.join(tmp, "in%d.pcap" % port))
            assert all(v == "1" for v in st.values()), "input checksums: %s" % st
        good = check_checksums_with_tshark(tmp, must_be_good=lambda p, n: m[(p, n)])
        assert good == len(segs), (good, len(segs))
    expect_counters(r, segs)
    assert r.counter("tcpopt", "stripped") == 0
    assert r.counter("tcpopt", "dropped_by_policy") == 0
    assert r.counter("tcpopt", "dropped_malformed") == 0
    assert r.counter("tcpopt", "skipped_no_tcp_header") == 0


def test_malformed_option_areas_are_forwarded_unchanged_and_counted_by_reason():
    segs = malformed_corpus()
    reasons = {s.reason for s in segs}
    assert reasons == {"length_below_2", "length_past_header", "truncated_option",
                       "bad_length_for_kind", "bad_length_for_mptcp_subtype",
                       "data_offset_below_5", "data_offset_past_end",
                       "header_truncated"}, reasons
    with Workdir() as tmp:
        r = run_segs(segs, config_file=CLAMP_1400, workdir=tmp)
        h.assert_clean_exit(r)
        # A malformed SYN with MSS 1460 is never clamped: unchanged.
        h.assert_same(r.outs[1], [s.frame for s in segs], "malformed, clamp on")
        st = tshark_status(os.path.join(tmp, "out1.pcap"))
        assert st == tshark_status(os.path.join(tmp, "in0.pcap")), "checksum status changed"
    expect_counters(r, segs)
    assert r.counter("tcpopt", "mss_clamped") == 0


def test_malformed_drop_policy_drops_only_the_malformed_segments():
    good = corpus(ip_versions=(4,), encaps=("eth",))
    bad = malformed_corpus()
    segs = [x for pair in zip(good, bad) for x in pair] + good[len(bad):]
    r = run_segs(segs, config="[tcpopt]\nmss_clamp = 1400\nmalformed = drop\n")
    h.assert_clean_exit(r)
    clamped, _, dropped = check_outputs(r, segs, clamp=1400, malformed_drop=True)
    assert dropped == len(bad)
    assert r.counter("tcpopt", "dropped_malformed") == len(bad), r.stdout
    assert r.counter("tcpopt", "mss_clamped") == clamped
    expect_counters(r, segs)


def test_strip_policy_turns_exactly_that_option_into_nops_with_a_valid_checksum():
    segs = corpus(encaps=("eth", "pppoe"))
    with_tfo = [s for s in segs if any(k == 34 for k, _, _, _ in s.opts)]
    assert len(with_tfo) >= 10
    for cfg in ("[tcpopt]\nmss_clamp = 1400\noption.34 = strip\n",
                "[tcpopt]\noption.fast_open = strip\n"):
        clamp = 1400 if "mss_clamp" in cfg else 0
        with Workdir() as tmp:
            r = run_segs(segs, config=cfg, workdir=tmp)
            h.assert_clean_exit(r)
            clamped, stripped, _ = check_outputs(r, segs, clamp=clamp, strip=(34,))
            assert stripped == len(with_tfo), (stripped, len(with_tfo))
            m = good_in_checksum_map(segs, lambda s: True)
            assert check_checksums_with_tshark(tmp, must_be_good=lambda p, n: m[(p, n)]) == len(segs)
        assert r.counter("tcpopt", "stripped") == stripped, r.stdout
        assert r.counter("tcpopt", "mss_clamped") == clamped, r.stdout
        expect_counters(r, segs)


def test_strip_of_the_mss_option_wins_over_the_clamp():
    segs = [Seg("syn", *build(pad(LINUX_SYN), "S"))]
    with Workdir() as tmp:
        r = run_segs(segs, config="[tcpopt]\nmss_clamp = 1400\noption.mss = strip\n", workdir=tmp)
        h.assert_clean_exit(r)
        check_outputs(r, segs, clamp=1400, strip=(2,))
        assert check_checksums_with_tshark(tmp, must_be_good=lambda p, n: True) == 1
    assert r.counter("tcpopt", "stripped") == 1
    assert r.counter("tcpopt", "mss_clamped") == 0


def test_drop_policy_drops_every_segment_carrying_the_kind_and_counts_it():
    segs = corpus(ip_versions=(4, 6), encaps=("eth", "vlan"))
    for cfg, kinds in (("[tcpopt]\noption.md5sig = drop\n", (19,)),
                       ("[tcpopt]\nmss_clamp = 1400\noption.200 = drop\noption.tcp_ao = drop\n", (200, 29))):
        r = run_segs(segs, config=cfg)
        h.assert_clean_exit(r)
        clamp = 1400 if "mss_clamp" in cfg else 0
        _, _, dropped = check_outputs(r, segs, clamp=clamp, drop=kinds)
        want = sum(1 for s in segs if {k for k, _, _, _ in s.opts} & set(kinds))
        assert dropped == want and want >= 6, (dropped, want)
        assert r.counter("tcpopt", "dropped_by_policy") == want, r.stdout
        expect_counters(r, segs)


def test_mptcp_health_pair_counts_mp_capable_syns_against_synacks():
    syn = pad(LINUX_SYN + mp(0, b"\x81"))
    synack = pad(mss(1460) + SACKOK + NOP + ws(7) + mp(0, b"\x81" + b"K" * 8))
    stripped_synack = pad(mss(1460) + SACKOK + NOP + ws(7))
    segs = [Seg("syn%d" % i, *build(syn, "S", 4 if i % 2 else 6, sport=41000 + i), up=True) for i in range(10)]
    # Six servers answer with MP_CAPABLE; four answers lost it on the way.
    segs += [Seg("synack%d" % i, *build(synack if i < 6 else stripped_synack, "SA", 4 if i % 2 else 6,
                                        up=False, sport=41000 + i), up=False) for i in range(10)]
    r = run_segs(segs, config_file=CLAMP_1400)
    h.assert_clean_exit(r)
    check_outputs(r, segs, clamp=1400)
    assert r.counter("tcpopt", "syn_mp_capable") == 10
    assert r.counter("tcpopt", "synack_mp_capable") == 6
    assert parse_line(r, "tcpopt mptcp_syn") == {"mp_capable": 10}
    assert parse_line(r, "tcpopt mptcp_synack") == {"mp_capable": 6}


def test_a_wrong_checksum_stays_exactly_as_wrong_after_the_clamp():
    good, off = build(pad(LINUX_SYN), "S", 4)
    bad = bytearray(good)
    bad[off + 16] ^= 0x5a  # the sender's checksum was wrong
    segs = [Seg("good", good, off), Seg("bad", bytes(bad), off)]
    with Workdir() as tmp:
        r = run_segs(segs, config_file=CLAMP_1400, workdir=tmp)
        h.assert_clean_exit(r)
        check_outputs(r, segs, clamp=1400)
        st = tshark_status(os.path.join(tmp, "out1.pcap"))
    assert st == {1: "1", 2: "0"}, st
    g, b = r.outs[1]
    assert g[off + 16] ^ b[off + 16] == 0x5a and g[off + 17] == b[off + 17]


def test_an_mtu_clamp_depends_on_the_ip_version():
    segs = [Seg("v4", *build(pad(LINUX_SYN), "S", 4)),
            Seg("v6", *build(pad(LINUX_SYN), "S", 6)),
            Seg("v6ext", *build(pad(LINUX_SYN), "S", 6, ext6=True))]
    r = run_segs(segs, config="[tcpopt]\nmtu = 1440\n")
    h.assert_clean_exit(r)
    mss_out = [struct.unpack("!H", f[s.off + 22:s.off + 24])[0] for f, s in zip(r.outs[1], segs)]
    assert mss_out == [1400, 1380, 1380], mss_out


def test_a_pair_section_overrides_the_clamp_for_that_pair_only():
    f, off = build(pad(LINUX_SYN), "S", 4)
    cfg = "[tcpopt]\nmss_clamp = 1400\n[tcpopt.pair1]\nmss_clamp = 1300\n"
    r = h.run([[f], [], [f], []], config=cfg, pairs=2)
    h.assert_clean_exit(r)
    got = [struct.unpack("!H", r.outs[p][0][off + 22:off + 24])[0] for p in (1, 3)]
    assert got == [1400, 1300], got


def test_non_tcp_frames_and_later_fragments_pass_untouched_and_are_counted_as_skipped():
    udp = bytes(frames.eth() / IP(src=frames.V4C, dst=frames.V4S) / UDP(sport=1, dport=2) / Raw(mss(1460)))
    frag = bytes(frames.eth() / IP(src=frames.V4C, dst=frames.V4S, proto=6, frag=100, id=9) / Raw(b"\x02\x04\x05\xb4" * 8))
    syn, off = build(pad(LINUX_SYN), "S")
    r = h.run([[udp, frag, syn], []], config_file=CLAMP_1400)
    h.assert_clean_exit(r)
    assert r.outs[1][:2] == [udp, frag]
    assert r.counter("tcpopt", "skipped_no_tcp_header") == 2, r.stdout
    assert r.counter("tcpopt", "mss_clamped") == 1


def test_without_a_tcpopt_section_the_stage_is_off_and_the_reference_config_changes_nothing():
    segs = corpus(ip_versions=(4,), encaps=("eth",))
    frames_in = [s.frame for s in segs]
    r = h.run([frames_in, []])
    h.assert_clean_exit(r)
    h.assert_same(r.outs[1], frames_in, "no config")
    assert "tcpopt" not in r.stdout
    r = h.run([frames_in, []], config_file=REFERENCE)
    h.assert_clean_exit(r)
    h.assert_same(r.outs[1], frames_in, "config/tcpopt.ini")
    expect_counters(r, segs)


def test_the_one_pass_parse_gives_what_the_parse_and_then_the_stage_give():
    """By default the stage parses each burst itself, in one pass
    (stage_ops.parse_burst), and hands a chained or oversize frame and the
    rest of its burst to the worker's general path. With [sluice]
    stage_cycles = on the worker parses first and the stage runs on its
    own. Both must leave the same bytes and the same counters."""
    segs = corpus(encaps=("eth", "vlan")) + malformed_corpus()
    others = [b for _, b in frames.well_formed()] + [b for _, b, _ in frames.malformed()]
    big = bytes(frames.eth() / IP(src=frames.V4C, dst=frames.V4S) / UDP(sport=7, dport=9) / Raw(b"o" * 9100))
    jumbo = [b for b in others if len(b) > 8900]
    assert len(jumbo) == 2
    # A frame of another kind, or an oversize one, between every few
    # segments: every burst has some of each where the one pass stops.
    port = ([], [])
    for i, sg in enumerate(segs):
        port[0 if sg.up else 1].append(sg.frame)
        if i % 3 == 2:
            port[i % 2].append(others[(i // 3) % len(others)])
        if i % 40 == 39:
            port[i % 2].append(big)
    runs = []
    for timed in ("", "[sluice]\nstage_cycles = on\n"):
        r = h.run(list(port), config="[tcpopt]\nmss_clamp = 1400\n" + timed)
        h.assert_clean_exit(r)
        report = [ln for ln in r.stdout.splitlines()
                  if ln.split(" ")[0] in ("port", "totals", "malformed", "tcpopt")]
        runs.append((r, report))
    (a, ra), (b, rb) = runs
    assert "stage tcpopt" in b.stdout and "stage tcpopt" not in a.stdout
    assert a.outs == b.outs, "the outputs differ"
    assert ra == rb, "\n".join(ra + ["--- stage_cycles = on:"] + rb)
    n_big = sum(f == big for f in port[0] + port[1])
    n_jumbo = sum(f in jumbo for f in port[0] + port[1])
    assert n_big >= 4 and n_jumbo >= 2
    assert a.counter("totals", "dropped_oversize") == n_big, a.stdout
    assert a.counter("totals", "multiseg") == n_jumbo + n_big, a.stdout
    assert a.counter("tcpopt", "mss_clamped") > 50, a.stdout
    assert a.counter("totals", "malformed") > 0 and a.counter("totals", "non_ip") > 0


def test_bad_tcpopt_keys_are_refused_with_file_line_and_key():
    for cfg, line, word in (("[tcpopt]\nmss_clamp = 40\n", 2, "mss_clamp"),
                            ("[tcpopt]\nmss_clamp = 1400\nmtu = 1500\n", 3, "mtu"),
                            ("[tcpopt]\noption.bogus = strip\n", 2, "option.bogus"),
                            ("[tcpopt]\noption.34 = mangle\n", 2, "option.34"),
                            ("[tcpopt]\noption.nop = strip\n", 2, "option.nop"),
                            ("[tcpopt]\nmalformed = fix\n", 2, "malformed"),
                            ("[tcpopt]\nclamp = 1400\n", 2, "clamp")):
        h.assert_config_error(cfg, line, word, ".")


def test_random_option_areas_never_crash_and_change_only_what_the_oracle_allows():
    rnd = random.Random(1624)
    pieces = [NOP, EOL, mss(1460), mss(1200), SACKOK, ts(), ws(7), sack(2),
              mp(0, b"\x81"), o(34, b"C" * 8), o(172), o(253, b"\xf9\x89"),
              o(200, b"x" * 3)]
    segs = []
    for i in range(1200):
        if i % 2:
            area = b"".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 8)))[:40]
        else:
            area = bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 40)))
        if rnd.random() < 0.3 and area:
            area = bytearray(area)
            area[rnd.randrange(len(area))] = rnd.randrange(256)
            area = bytes(area)
        area = pad(area)[:40]
        area += NOP * (-len(area) % 4)
        flags = rnd.choice(["S", "SA", "A", "PA", "SE"])
        f, off = build(area, flags, rnd.choice((4, 6)), rnd.choice(ENCAPS), i % 3 != 0, sport=1024 + i)
        segs.append(Seg("random%d" % i, f, off, i % 3 != 0))
    with Workdir() as tmp:
        r = run_segs(segs, config_file=CLAMP_1400, workdir=tmp)
        h.assert_clean_exit(r)
        clamped, _, _ = check_outputs(r, segs, clamp=1400)
        m = good_in_checksum_map(segs, lambda s: True)
        assert check_checksums_with_tshark(tmp, must_be_good=lambda p, n: m[(p, n)]) == len(segs)
    assert r.counter("tcpopt", "mss_clamped") == clamped
    expect_counters(r, segs)
