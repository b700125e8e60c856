# SPDX-License-Identifier: BSD-3-Clause
"""IP fragments of TCP inside intercepted prefixes are not the engine's:
lib/tcp does not reassemble, so they leave unchanged (issue 17, defect 4:
a first fragment failed the checksum and vanished)."""
from scapy.all import (IP, IPv6, IPv6ExtHdrFragment, TCP, Raw, fragment,
                       fragment6)

import frames
import harness as h


def _syn(ip):
    return (frames.eth() / ip /
            TCP(sport=40000, dport=443, flags="S", seq=1000,
                options=[("MSS", 1400), ("SAckOK", b""), ("NOP", None),
                         ("WScale", 7)]))


def test_fragments_of_tcp_in_an_intercepted_prefix_leave_unchanged():
    # A held SYN gives the engine a connection, so later TCP of the
    # prefix is offered to it (with none it is never looked at).
    syn4 = bytes(_syn(IP(src=frames.V4C, dst=frames.V4S)))
    syn6 = bytes(_syn(IPv6(src=frames.V6C, dst=frames.V6S)))
    seg4 = (IP(src=frames.V4C, dst=frames.V4S, id=77) /
            TCP(sport=40001, dport=443, flags="PA", seq=5, ack=9) / Raw(b"a" * 1200))
    frag4 = [bytes(frames.eth() / f) for f in fragment(seg4, fragsize=600)]
    seg6 = (IPv6(src=frames.V6C, dst=frames.V6S) / IPv6ExtHdrFragment(id=78) /
            TCP(sport=40001, dport=443, flags="PA", seq=5, ack=9) / Raw(b"b" * 1200))
    frag6 = [bytes(frames.eth() / f) for f in fragment6(seg6, 700)]
    assert len(frag4) > 1 and len(frag6) > 1
    r = h.run([[syn4, syn6] + frag4 + frag6, []],
              config="[proxy]\nintercept = 198.18.0.0/15:443, 2001:db8::/32:443\n")
    h.assert_clean_exit(r)
    for f in frag4 + frag6:
        assert f in r.outs[1], "a fragment was lost or changed"
    # The server legs' two SYNs, and every fragment once.
    assert len(r.outs[1]) == 2 + len(frag4) + len(frag6), len(r.outs[1])
    # The stage hands the engine no fragment at all (lib/tcp refuses them
    # too, tests/unit/tcp/test_tcp_hostile.c): each is counted once, as
    # passed, by the proxy.
    assert r.counter("proxy", "fragments_passed") == len(frag4) + len(frag6), r.stdout
    assert r.counter("proxy tcp", "ip_fragments_not_taken") == 0
    assert r.counter("proxy tcp", "bad_checksum") == 0
