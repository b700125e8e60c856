# SPDX-License-Identifier: BSD-3-Clause
"""With no configuration sluice is a transparent bridge: every frame leaves
the other port of its pair byte for byte, in order, and is counted."""
import random

from scapy.all import IP, IPv6, TCP, UDP, fuzz

import frames
import harness as h


def test_every_encapsulation_is_bridged_byte_for_byte_in_both_directions():
    up = [b for _, b in frames.well_formed(up=True)]
    down = [b for _, b in frames.well_formed(up=False)]
    r = h.run([up, down])
    h.assert_clean_exit(r)
    h.assert_same(r.outs[1], up, "port 0 -> port 1")
    h.assert_same(r.outs[0], down, "port 1 -> port 0")
    assert r.counter("totals", "malformed") == 0, r.stdout
    assert r.counter("totals", "non_ip") == 2 * 3, r.stdout  # arp, lldp, pppoe lcp
    assert r.counter("port 0", "rx") == len(up)
    assert r.counter("port 1", "tx") == len(up)


def test_jumbo_frames_travel_as_chained_mbufs_unchanged():
    up = [b for n, b in frames.well_formed() if "jumbo" in n]
    assert all(len(b) > 8900 for b in up)
    r = h.run([up, []])
    h.assert_clean_exit(r)
    h.assert_same(r.outs[1], up, "jumbo")
    assert r.counter("totals", "multiseg") == len(up)


def test_frames_larger_than_max_frame_are_dropped_and_counted():
    big = bytes(frames.eth() / IP(src="198.18.0.1", dst="198.19.0.1") / UDP() / (b"x" * 1500))
    small = bytes(frames.eth() / IP(src="198.18.0.1", dst="198.19.0.1") / UDP() / (b"y" * 100))
    r = h.run([[small, big, small], []], config="[sluice]\nmax_frame = 1518\n")
    h.assert_clean_exit(r)
    h.assert_same(r.outs[1], [small, small], "oversize dropped")
    assert r.counter("totals", "dropped_oversize") == 1


def test_malformed_frames_are_forwarded_unchanged_and_counted_by_reason():
    cases = frames.malformed()
    r = h.run([[b for _, b, _ in cases], []])
    h.assert_clean_exit(r)
    h.assert_same(r.outs[1], [b for _, b, _ in cases], "malformed")
    want = {}
    for _, _, reason in cases:
        want[reason] = want.get(reason, 0) + 1
    for reason, n in want.items():
        got = r.counter("malformed", reason)
        assert got == n, "%s: counted %d, expected %d\n%s" % (reason, got, n, r.stdout)
    assert r.counter("totals", "malformed") == len(cases)


def test_malformed_policy_drop_removes_only_malformed_frames():
    good = [b for _, b in frames.well_formed()][:5]
    bad = [b for _, b, _ in frames.malformed()][:5]
    mixed = [x for pair in zip(good, bad) for x in pair]
    r = h.run([mixed, []], config="[policy]\nmalformed = drop\n")
    h.assert_clean_exit(r)
    h.assert_same(r.outs[1], good, "policy drop")
    assert r.counter("totals", "dropped_malformed") == len(bad)


def test_non_ip_policy_drop_removes_arp_and_lldp_only():
    allf = frames.well_formed()
    keep = [b for n, b in allf if n not in ("arp", "lldp", "pppoe_lcp")]
    r = h.run([[b for _, b in allf], []], config="[policy]\nnon_ip = drop\n")
    h.assert_clean_exit(r)
    h.assert_same(r.outs[1], keep, "non-ip drop")
    assert r.counter("totals", "dropped_non_ip") == 3


def test_random_malformed_corpus_is_forwarded_without_leaking_mbufs():
    random.seed(8290)
    corpus = []
    layers = [
        lambda: frames.eth() / fuzz(IP()),
        lambda: frames.eth() / IP(src="198.18.0.1", dst="198.19.0.1") / fuzz(TCP()),
        lambda: frames.eth() / IP(src="198.18.0.1", dst="198.19.0.1") / fuzz(UDP()),
        lambda: frames.eth() / fuzz(IPv6()),
        lambda: frames.eth() / IPv6(src="2001:db8::1", dst="2001:db8::2") / fuzz(TCP()),
        lambda: fuzz(frames.eth()),
    ]
    for i in range(1500):
        b = bytearray(bytes(random.choice(layers)()))
        # Also cut some short and flip a few bytes, so lengths lie.
        if i % 3 == 0 and len(b) > 15:
            b = b[:random.randint(1, len(b))]
        if i % 5 == 0 and len(b) > 20:
            for _ in range(3):
                b[random.randrange(14, len(b))] = random.randrange(256)
        corpus.append(bytes(b))
    r = h.run([corpus, list(reversed(corpus))])
    h.assert_clean_exit(r)
    h.assert_same(r.outs[1], corpus, "fuzz up")
    h.assert_same(r.outs[0], list(reversed(corpus)), "fuzz down")
    assert r.counter("totals", "rx") == 2 * len(corpus)
    assert r.counter("totals", "tx") == 2 * len(corpus)


def test_two_port_pairs_stay_separate():
    a = [bytes(frames.eth() / IP(src="198.18.0.1", dst="198.19.0.%d" % i) / UDP()) for i in range(1, 6)]
    b = [bytes(frames.eth() / IPv6(src="2001:db8::1", dst="2001:db8::%x" % i) / UDP()) for i in range(1, 4)]
    r = h.run([a, [], b, []], pairs=2)
    h.assert_clean_exit(r)
    h.assert_same(r.outs[1], a, "pair 0")
    h.assert_same(r.outs[3], b, "pair 1")
    assert r.outs[0] == [] and r.outs[2] == []
