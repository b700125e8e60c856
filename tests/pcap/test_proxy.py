# SPDX-License-Identifier: BSD-3-Clause
"""The proxy stage on pcap ports: its configuration, a held SYN and the
server leg's SYN from the client's own address, and pass-through of
everything it does not intercept."""
import os
import re

from scapy.all import IP, TCP, UDP, Ether, Raw

import frames
import harness as h

REPO = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _syn(dst=frames.V4S, mss=1400):
    return (frames.eth() / IP(src=frames.V4C, dst=dst, ttl=64) /
            TCP(sport=40000, dport=443, flags="S", seq=1000,
                options=[("MSS", mss), ("SAckOK", b""), ("Timestamp", (1, 0)),
                         ("NOP", None), ("WScale", 7)]))


def test_bad_proxy_keys_name_file_line_and_key():
    h.assert_config_error("[proxy]\nintercept = 198.18.0.0/15, nonsense\n", 2, "intercept", "not PREFIX")
    h.assert_config_error("[proxy]\nintercept = 198.18.0.0/33\n", 2, "intercept", "out of range")
    h.assert_config_error("[proxy]\nintercept = ::/0\nsnd_buf = 1k\n", 3, "snd_buf", "out of range")
    h.assert_config_error("[proxy]\ncc = bbr\n", 2, "cc", "cubic or newreno")
    h.assert_config_error("[proxy]\nsyn_retries = 0\n", 2, "syn_retries", "out of range")
    h.assert_config_error("[proxy]\nsyn_retries = 11\n", 2, "syn_retries", "out of range")
    h.assert_config_error("[proxy]\nmax_conns = 5\n", 2, "max_conns", "unknown key")
    h.assert_config_error("[proxy]\npersist_timeout = 10ms\n", 2, "persist_timeout", "out of range")
    h.assert_config_error("[proxy]\nidle_timeout = soon\n", 2, "idle_timeout", "not a time")
    h.assert_config_error("[proxy]\nfin_wait2_timeout = 900000s\n", 2, "fin_wait2_timeout", "out of range")
    # A budget the pool cannot hold is an error, whatever the order.
    h.assert_config_error("[proxy]\nmbuf_budget = 20000\n", 2, "mbuf_budget", "do not fit")
    h.assert_config_error("[proxy]\nmbuf_budget = 3000\n[sluice]\nmbufs = 2047\n", 2,
                          "mbuf_budget", "do not fit")


def test_the_reference_config_intercepts_nothing():
    syn = bytes(_syn())
    r = h.run([[syn], []], config_file=os.path.join(REPO, "config", "proxy.ini"))
    h.assert_clean_exit(r)
    h.assert_same(r.outs[1], [syn], "SYN through proxy.ini")
    assert not re.search(r"^proxy", r.stdout, re.M), r.stdout  # stage off


def test_an_intercepted_syn_is_held_and_the_server_leg_opens_from_the_client():
    syn = bytes(_syn())
    r = h.run([[syn], []], config="[proxy]\nintercept = 198.18.0.0/15:443\n")
    h.assert_clean_exit(r)
    assert r.outs[0] == [], "the client was answered before the server: %r" % r.outs[0]
    assert len(r.outs[1]) == 1, "want one SYN toward the server, got %d" % len(r.outs[1])
    out = Ether(r.outs[1][0])
    assert out.src == frames.C_MAC and out.dst == frames.S_MAC, out.summary()
    assert out[IP].src == frames.V4C and out[IP].dst == frames.V4S, out.summary()
    t = out[TCP]
    assert (t.sport, t.dport, str(t.flags)) == (40000, 443, "S"), out.summary()
    assert dict((k, v) for k, v in t.options).get("MSS") == 1400, t.options
    assert bytes(out) != syn  # sluice's own SYN, not the client's
    assert r.counter("proxy", "syn_intercepted") == 1
    assert r.counter("proxy", "connections_opened") == 0
    assert r.counter("proxy", "aborted_at_exit") == 1


def test_what_is_not_intercepted_passes_byte_for_byte():
    other_port = bytes(frames.eth() / IP(src=frames.V4C, dst=frames.V4S) /
                       TCP(sport=40001, dport=80, flags="S", seq=7))
    other_dst = bytes(_syn(dst="198.19.0.9"))
    udp = bytes(frames.eth() / IP(src=frames.V4C, dst=frames.V4S) /
                UDP(sport=5000, dport=443))
    down = bytes(frames.eth(src=frames.S_MAC, dst=frames.C_MAC) /
                 IP(src=frames.V4S, dst=frames.V4C) /
                 TCP(sport=443, dport=40000, flags="A", seq=1, ack=1))
    r = h.run([[other_port, other_dst, udp], [down]],
              config="[proxy]\nintercept = 198.19.0.1/32:443\n")
    h.assert_clean_exit(r)
    h.assert_same(r.outs[1], [other_port, other_dst, udp], "up")
    h.assert_same(r.outs[0], [down], "down")
    assert r.counter("proxy", "syn_intercepted") == 0


def test_tfo_and_unknown_options_ride_on_the_server_leg_syn_mptcp_does_not():
    # TFO cookie, an unknown kind 99 and MPTCP MP_CAPABLE (version 1).
    syn = bytes(frames.eth() / IP(src=frames.V4C, dst=frames.V4S, ttl=64) /
                TCP(sport=40002, dport=443, flags="S", seq=5000,
                    options=[("MSS", 1460), ("SAckOK", b""),
                             (34, b"\x11\x22\x33\x44\x55\x66\x77\x88"),
                             (99, b"\xab\xcd"), (30, b"\x81\x00")]))
    r = h.run([[syn], []], config="[proxy]\nintercept = 198.18.0.0/15:443\n")
    h.assert_clean_exit(r)
    assert len(r.outs[1]) == 1, r.outs
    t = Ether(r.outs[1][0])[TCP]
    raw = bytes(t)[20:t.dataofs * 4]
    kinds = [k for k, _ in t.options]
    assert b"\x22\x0a\x11\x22\x33\x44\x55\x66\x77\x88" in raw, t.options  # TFO whole
    assert b"\x63\x04\xab\xcd" in raw, t.options                          # kind 99 whole
    assert 30 not in kinds and "MPTCP" not in kinds, t.options
    assert dict((k, v) for k, v in t.options).get("MSS") == 1460, t.options
    assert r.counter("proxy", "syn_options_carried") == 1
    assert r.counter("proxy", "syn_options_not_carried") == 0


def test_a_signed_syn_is_bridged_not_intercepted():
    md5 = bytes(frames.eth() / IP(src=frames.V4C, dst=frames.V4S, ttl=64) /
                TCP(sport=40003, dport=443, flags="S", seq=9,
                    options=[("MSS", 1460), (19, b"\x00" * 16)]))
    r = h.run([[md5], []], config="[proxy]\nintercept = 198.18.0.0/15:443\n")
    h.assert_clean_exit(r)
    h.assert_same(r.outs[1], [md5], "signed SYN")
    assert r.counter("proxy", "syn_bridged_signed") == 1
    assert r.counter("proxy", "syn_intercepted") == 0


def _not_owned_frames():
    """Frames toward an intercepted prefix that no proxied connection owns:
    (name, bytes). Each must leave on the other port byte for byte."""
    from scapy.all import IPv6
    up = lambda: frames.eth() / IP(src=frames.V4C, dst=frames.V4S, ttl=64)  # noqa: E731
    bad_csum = up() / TCP(sport=40010, dport=443, flags="PA", seq=77, ack=99,
                          chksum=0x1234) / Raw(b"bridged flow" * 10)
    bad_csum6 = (frames.eth() / IPv6(src=frames.V6C, dst=frames.V6S) /
                 TCP(sport=40011, dport=443, flags="A", seq=5, ack=6,
                     chksum=0x4321) / Raw(b"v6" * 20))
    bad_syn = up() / TCP(sport=40012, dport=443, flags="S", seq=3,
                         options=[("MSS", 1460)], chksum=0xbeef)
    # A first fragment: its TCP checksum covers bytes it does not carry.
    whole = bytes(TCP(sport=40013, dport=443, flags="PA", seq=1, ack=1) /
                  Raw(b"F" * 400))
    first = frames.eth() / IP(src=frames.V4C, dst=frames.V4S, ttl=64,
                              flags="MF", id=31, proto=6) / Raw(whole[:200])
    later = frames.eth() / IP(src=frames.V4C, dst=frames.V4S, ttl=64,
                              frag=25, id=31, proto=6) / Raw(whole[200:])
    # A TCP header that claims 60 bytes in a frame that ends after 20.
    trunc = bytearray(bytes(up() / TCP(sport=40014, dport=443, flags="A")))
    trunc[14 + 20 + 12] = 0xf0
    # An option area that lies: an option of length 1 (RFC 9293 3.1).
    badopt = bytearray(bytes(up() / TCP(sport=40015, dport=443, flags="A",
                                        options=[("NOP", None)] * 4)))
    badopt[14 + 20 + 20:14 + 20 + 24] = b"\x08\x01\x00\x00"
    return [("bad_checksum", bytes(bad_csum)), ("bad_checksum_v6", bytes(bad_csum6)),
            ("bad_checksum_syn", bytes(bad_syn)), ("first_fragment", bytes(first)),
            ("later_fragment", bytes(later)), ("truncated_header", bytes(trunc)),
            ("malformed_options", bytes(badopt))]


def test_frames_no_proxied_connection_owns_leave_byte_for_byte():
    # The held SYN gives the engine a connection, so every TCP segment of
    # the intercepted prefixes is looked at by the stage after it.
    syn = bytes(_syn())
    named = _not_owned_frames()
    r = h.run([[syn] + [b for _, b in named], []],
              config="[proxy]\nintercept = 198.18.0.0/15, 2001:db8::/32\n")
    h.assert_clean_exit(r)
    out = r.outs[1]
    for name, b in named:
        assert b in out, "%s was not forwarded unchanged (%d frames out)" % (name, len(out))
    assert len(out) == len(named) + 1, "want the passed frames and one SYN, got %d" % len(out)
    assert r.counter("proxy", "syn_intercepted") == 1
    assert r.counter("proxy", "segments_not_owned") == 4   # 3 bad checksums, 1 bad option area
    assert r.counter("proxy", "fragments_passed") == 2
    assert r.counter("proxy", "malformed_passed") == 1


def test_a_worst_case_beyond_the_mbuf_budget_is_named_at_start():
    # MPTCP on (the default): 1024 x (a leg of 256k + 256k, 363 mbufs, and
    # 8 subflows of 256k + 3 x 256k, 8 x 725 mbufs).
    r = h.run([[], []], config="[proxy]\nintercept = 198.18.0.0/15\n")
    h.assert_clean_exit(r)
    assert re.search(r"warning: \[proxy\] max_connections x \(server leg \+ client leg, "
                     r"mptcp_max_subflows subflows\) could hold 6310912 mbufs, more than "
                     r"mbuf_budget \(5461\)", r.stderr), r.stderr
    # Plain TCP: 1024 x 2 legs x 363.
    r = h.run([[], []], config="[proxy]\nintercept = 198.18.0.0/15\nmptcp = off\n")
    h.assert_clean_exit(r)
    assert re.search(r"warning: \[proxy\] max_connections x \(server leg \+ client leg, "
                     r"one subflow\) could hold 743424 mbufs, more than mbuf_budget \(5461\)",
                     r.stderr), r.stderr
    r = h.run([[], []], config="[proxy]\nintercept = 198.18.0.0/15\nmax_connections = 3\n"
                               "snd_buf = 64k\nrcv_buf = 64k\n")
    h.assert_clean_exit(r)
    assert "warning" not in r.stderr, r.stderr  # 3 x (91 + 8 x 182) mbufs fit


def test_mbuf_budget_auto_is_a_third_of_the_pool_and_a_number_overrides_it():
    r = h.run([[], []], config="[proxy]\nintercept = 198.18.0.0/15\nmbuf_budget = auto\n"
                               "[sluice]\nmbufs = 4095\n")
    h.assert_clean_exit(r)
    assert re.search(r"mbuf_budget 1365 of \d+", r.stderr), r.stderr
    r = h.run([[], []], config="[proxy]\nintercept = 198.18.0.0/15\nmbuf_budget = 3000\n")
    h.assert_clean_exit(r)
    assert re.search(r"mbuf_budget 3000 of \d+", r.stderr), r.stderr
    h.assert_config_error("[proxy]\nmbuf_budget = half\n", 2, "mbuf_budget", "not a non-negative integer")
