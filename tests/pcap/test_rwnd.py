# SPDX-License-Identifier: BSD-3-Clause
"""The receive-window clamp ([aqm] rwnd_clamp, lib/rwnd) on pcap files.

Time: sluice stamps each rx burst with its own TSC clock; the pcap
timestamps are ignored, and net_pcap reads both ports as fast as the
worker polls them. What these tests can fix is the order: with
[sluice] burst = 1 the one worker reads one frame of port 0, then one of
port 1, every turn of its loop (app/worker.c, rx queues in port order).
So frame k of the subscriber's file is seen before frame k of the
server's, which comes before frame k + 1 of the subscriber's; UDP
fillers from an address of no subscriber (passed unshaped, never looked
at by the clamp) hold a port's place while the other catches up.

The legs of a handshake read this way are a few microseconds of the
machine's, not chosen by the test, so the rule's leg ratio is not
known. The exact window still is when the ACK leaves nothing of the
server's outstanding data beyond sluice: beyond = 0, so window =
rwnd_headroom (the clamp knows no data rate before it has watched ACKs
for 10 ms) and the field is ceil(3000 / 2^7) = 24 whatever the legs.
The ACK of the exact tests acknowledges 17 of 20 segments, and the 3
left are still queued. An ACK that leaves data beyond sluice is checked
for what does not depend on the legs.

The server's 20 segments of 1448 bytes take a 1 Mbit/s pipe 240 ms to
send; the ACK is read about 25 loop turns (well under a millisecond)
after the last of them, when the queue holds all of them or all but the
first. CoDel is kept out of the way (target 1 s) so that every frame
leaves. Addresses only from 198.18.0.0/15 and 2001:db8::/32.
"""
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

from scapy.all import IP, IPv6, TCP, UDP, Ether, Raw

import harness as h

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import telemetry  # noqa: E402  tests/e2e/telemetry.py, standard library only

C_MAC, S_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02"
SUB4, NET4 = "198.18.0.1", "198.19.0.1"
SUB6, NET6 = "2001:db8:1::1", "2001:db8:2::1"
# Fillers come from (and go to) an address of no subscriber: passed.
FILL4 = "198.18.200.1"
SUBS = "prefix,down,up\n198.18.0.0/24,1mbit,1mbit\n2001:db8:1::/48,1mbit,1mbit\n"
CFG = ("[sluice]\nburst = 1\n"
       "[aqm]\nports = 0\nqdisc = fq_codel\ndefault = pass\nsubscribers = subs.csv\n"
       "target = 1s\ninterval = 3s\nblue = off\nflow_seed = 1\n"
       "rwnd_clamp = %s\n")
HEADROOM = 3000
SEGS = 20
MSS = 1448
C_ISN, S_ISN = 1000, 5000000
WS = 7


class Conn:
    """One connection, client (subscriber side) to server: its segments as
    a Linux client and server send them (MSS, SACK-permitted, timestamps,
    window scale 7 on both SYNs; timestamps on every later segment)."""

    def __init__(self, family=4, sport=40000, dport=443):
        self.family = family
        self.sport, self.dport = sport, dport

    def _l3(self, up):
        if self.family == 4:
            return IP(src=SUB4, dst=NET4) if up else IP(src=NET4, dst=SUB4)
        return IPv6(src=SUB6, dst=NET6) if up else IPv6(src=NET6, dst=SUB6)

    def up(self, **kw):
        return bytes(Ether(src=C_MAC, dst=S_MAC) / self._l3(True) /
                     TCP(sport=self.sport, dport=self.dport, **kw))

    def down(self, payload=b"", **kw):
        p = Ether(src=S_MAC, dst=C_MAC) / self._l3(False) / TCP(sport=self.dport, dport=self.sport, **kw)
        return bytes(p / Raw(payload)) if payload else bytes(p)

    def syn(self):
        return self.up(flags="S", seq=C_ISN, window=64240, options=[
            ("MSS", 1460), ("SAckOK", b""), ("Timestamp", (100, 0)), ("NOP", None), ("WScale", WS)])

    def synack(self, wscale=True):
        opts = [("MSS", 1460), ("SAckOK", b""), ("Timestamp", (200, 100))]
        if wscale:
            opts += [("NOP", None), ("WScale", WS)]
        return self.down(flags="SA", seq=S_ISN, ack=C_ISN + 1, window=65160, options=opts)

    def ack3(self):
        return self.up(flags="A", seq=C_ISN + 1, ack=S_ISN + 1, window=502,
                       options=[("NOP", None), ("NOP", None), ("Timestamp", (101, 200))])

    def data(self, i):
        return self.down(flags="A" if i < SEGS - 1 else "PA", seq=S_ISN + 1 + MSS * i,
                         ack=C_ISN + 1, window=509, payload=bytes([0x61 + i % 26]) * MSS,
                         options=[("NOP", None), ("NOP", None), ("Timestamp", (201 + i, 101))])

    def ack(self, acked, window=0xFFFF):
        """A pure ACK of the first `acked` data segments."""
        return self.up(flags="A", seq=C_ISN + 1, ack=S_ISN + 1 + MSS * acked, window=window,
                       options=[("NOP", None), ("NOP", None), ("Timestamp", (102, 201 + acked))])


def filler_up(i):
    return bytes(Ether(src=C_MAC, dst=S_MAC) / IP(src=FILL4, dst=NET4) /
                 UDP(sport=9000, dport=9) / Raw(struct.pack("!I", i)))


def filler_down(i):
    return bytes(Ether(src=S_MAC, dst=C_MAC) / IP(src=NET4, dst=FILL4) /
                 UDP(sport=9, dport=9000) / Raw(struct.pack("!I", i)))


def fillers_up(n, start=0):
    return [filler_up(start + i) for i in range(n)]


class Result:
    """A run and its kept output files (for tshark); remove() when done."""

    def __init__(self, r, tmp):
        self.r, self.tmp = r, tmp

    def rwnd(self, key):
        return self.r.counter("aqm_rwnd", key)

    def remove(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


def run(up, down, clamp="on", extra=""):
    tmp = tempfile.mkdtemp(prefix="sluice-rwnd-")
    with open(os.path.join(tmp, "subs.csv"), "w") as f:
        f.write(SUBS)
    r = h.run([up, down], config=CFG % clamp + extra, workdir=tmp, idle_ms=400)
    return Result(r, tmp)


def tcp_off(frame):
    """Offset of the TCP header in an untagged Ethernet frame."""
    et = struct.unpack("!H", frame[12:14])[0]
    if et == 0x0800:
        return 14 + (frame[14] & 0x0F) * 4
    assert et == 0x86DD and frame[20] == 6, "not plain IPv6 + TCP"
    return 14 + 40


def win_of(frame):
    o = tcp_off(frame)
    return struct.unpack("!H", frame[o + 14:o + 16])[0]


def same_but_window(got, want):
    """got is want with at most the window field and the TCP checksum
    rewritten."""
    o = tcp_off(want)
    return len(got) == len(want) and got[:o + 14] == want[:o + 14] and got[o + 18:] == want[o + 18:]


def checksum_ok(frame):
    """scapy recomputes the TCP checksum of frame, independently."""
    p = Ether(frame)
    tcp = p[TCP]
    want = tcp.chksum
    del tcp.chksum
    return Ether(bytes(p))[TCP].chksum == want


def tshark_tcp_checksums(path):
    """tcp.checksum.status of each TCP frame of a pcap (1: good, 0: bad)."""
    out = subprocess.run(["tshark", "-r", path, "-o", "tcp.check_checksum:TRUE",
                          "-Y", "tcp", "-T", "fields", "-e", "frame.number",
                          "-e", "tcp.checksum.status"],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    return [line.split("\t") for line in out.splitlines()]


def the_one(frames, want, what):
    """The single output frame that is want but for the window and checksum."""
    got = [f for f in frames if same_but_window(f, want)]
    assert len(got) == 1, "%s: %d matching frames out" % (what, len(got))
    return got[0]


def handshake_and_burst(conn, final_ack):
    """Subscriber port: SYN, ACK, fillers, then final_ack once the last data
    segment has been read; server port: SYN-ACK, then the burst."""
    up = [conn.syn(), conn.ack3()] + fillers_up(SEGS + 2) + [final_ack]
    down = [conn.synack()] + [conn.data(i) for i in range(SEGS)]
    return up, down



def field_for(window_bytes, shift=WS):
    """The window field for window_bytes at shift, rounded up (rwnd_window())."""
    return max(1, -(-window_bytes // (1 << shift)))


def assert_counters(res, **want):
    got = {k: res.rwnd(k) for k in want}
    assert got == want, "aqm_rwnd %r, expected %r\n%s" % (got, want, res.r.stdout)


def assert_others_unchanged(res, up, down, ack, out_ack):
    """Every frame but the ACK leaves byte for byte (the ACK as out_ack);
    the server's data keeps its order."""
    h.assert_clean_exit(res.r)
    assert sorted(res.r.outs[1]) == sorted(out_ack if f == ack else f for f in up), \
        "frames toward the internet changed"
    assert sorted(res.r.outs[0]) == sorted(down), "frames toward the subscriber changed"
    data = [f for f in down if len(f) > 1000]
    h.assert_same([f for f in res.r.outs[0] if len(f) > 1000], data, "the server's data")


def check_clamped(res, up, down, ack, want_field=None):
    """The ACK left with a lower window and a valid checksum, every other
    byte of it and every other frame unchanged. Returns its window field."""
    out_ack = the_one(res.r.outs[1], ack, "the clamped ACK")
    assert_others_unchanged(res, up, down, ack, out_ack)
    field = win_of(out_ack)
    assert field < win_of(ack), "window %d not lowered from %d" % (field, win_of(ack))
    if want_field is not None:
        assert field == want_field, "window field %d, the rule gives %d" % (field, want_field)
    # The checksum was updated, not left: the ACK differs from the input
    # in exactly the window and the checksum, and both checkers agree.
    assert out_ack != ack
    assert checksum_ok(out_ack), "scapy: bad TCP checksum after the rewrite"
    rows = tshark_tcp_checksums(os.path.join(res.tmp, "out1.pcap"))
    bad = [r for r in rows if r[1] != "1"]
    assert rows and not bad, "tshark: TCP checksums not good in frames %r" % bad
    return field


# ---------------------------------------------------------------- the tests

def test_an_ipv4_ack_that_leaves_nothing_beyond_sluice_gets_exactly_the_headroom():
    # The ACK covers 17 of the 20 segments: 3 x 1448 outstanding, all of
    # it still queued here (3 frames of 1514 bytes at least), so
    # beyond = 0 and the window is the 3000-byte headroom: field 24 at
    # scale 7, down from 0xffff.
    c = Conn()
    ack = c.ack(SEGS - 3)
    up, down = handshake_and_burst(c, ack)
    res = run(up, down)
    try:
        check_clamped(res, up, down, ack, want_field=field_for(HEADROOM))
        assert field_for(HEADROOM) == 24
        # SYN, ACK, the 20 data segments and the ACK; the SYN-ACK too.
        assert_counters(res, segments=SEGS + 4, syns=1, handshakes=1, ambiguous=0,
                        bad_syn=0, engaged=1, clamped=1, not_lowered=0, released=0,
                        resets=0, evicted=0, expired=0, shared_unwritten=0)
    finally:
        res.remove()


def test_an_ipv6_ack_is_clamped_the_same_with_a_valid_checksum():
    c = Conn(family=6)
    ack = c.ack(SEGS - 3)
    up, down = handshake_and_burst(c, ack)
    res = run(up, down)
    try:
        check_clamped(res, up, down, ack, want_field=field_for(HEADROOM))
        assert_counters(res, segments=SEGS + 4, syns=1, handshakes=1, ambiguous=0,
                        bad_syn=0, engaged=1, clamped=1, not_lowered=0)
    finally:
        res.remove()


def test_an_ack_of_nothing_yet_is_lowered_to_at_least_the_headroom():
    # The ACK of the handshake's ACK number: all 20 segments outstanding.
    # How many left sluice before the ACK came, and the legs, are the
    # machine's: the field is below the original and at least what the
    # headroom alone gives.
    c = Conn()
    ack = c.ack(0)
    up, down = handshake_and_burst(c, ack)
    res = run(up, down)
    try:
        field = check_clamped(res, up, down, ack)
        assert field >= field_for(HEADROOM), field
        assert_counters(res, handshakes=1, engaged=1, clamped=1)
    finally:
        res.remove()


def test_without_window_scaling_on_both_syns_the_field_is_in_bytes():
    # The client offers scale 7, the server none: RFC 7323 s. 2.2, neither
    # side scales, so the ACK's 0xffff means 65535 bytes and the clamp
    # writes the headroom itself (24, the field at scale 7, would be 3 kB
    # read as bytes: too small by 128 times the other way round).
    c = Conn()
    ack = c.ack(SEGS - 3)
    up = [c.syn(), c.ack3()] + fillers_up(SEGS + 2) + [ack]
    down = [c.synack(wscale=False)] + [c.data(i) for i in range(SEGS)]
    res = run(up, down)
    try:
        check_clamped(res, up, down, ack, want_field=HEADROOM)
        assert_counters(res, handshakes=1, engaged=1, clamped=1)
    finally:
        res.remove()


def test_rwnd_headroom_sets_the_window_and_the_queue_that_engages_the_clamp():
    # 5000 bytes: field ceil(5000 / 128) = 40. The flow has about 30 kB
    # queued, so it engages.
    c = Conn()
    ack = c.ack(SEGS - 3)
    up, down = handshake_and_burst(c, ack)
    res = run(up, down, extra="rwnd_headroom = 5000\n")
    try:
        check_clamped(res, up, down, ack, want_field=40)
        assert_counters(res, handshakes=1, engaged=1, clamped=1)
    finally:
        res.remove()
    # 100000 bytes: more than the 20 segments (about 30 kB) ever queue, so
    # the flow is never clamped.
    res = run(up, down, extra="rwnd_headroom = 100000\n")
    try:
        assert_others_unchanged(res, up, down, ack, ack)
        assert_counters(res, handshakes=1, engaged=0, clamped=0, not_lowered=0)
    finally:
        res.remove()


def test_an_ack_whose_own_window_is_already_lower_is_left_alone_and_counted():
    # 20 x 128 = 2560 bytes, below the 3000 the clamp would allow.
    c = Conn()
    ack = c.ack(SEGS - 3, window=20)
    up, down = handshake_and_burst(c, ack)
    res = run(up, down)
    try:
        assert_others_unchanged(res, up, down, ack, ack)
        assert_counters(res, handshakes=1, engaged=1, clamped=0, not_lowered=1)
    finally:
        res.remove()


def test_a_syn_queued_behind_the_subscriber_s_upload_is_timed_from_when_it_left():
    # The server's leg starts when the SYN leaves sluice, not when it came:
    # the time it waited in the subscriber's up pipe is not the path's
    # (rwnd_departed()). Eight datagrams of the subscriber's own (about 90
    # ms of its 1 Mbit/s) are queued when the SYN comes, so the SYN waits
    # its turn and is counted (syn_queued) as it leaves. No SYN-ACK comes:
    # in a replay it would be read before the SYN left (see the top).
    c = Conn()
    busy = [bytes(Ether(src=C_MAC, dst=S_MAC) / IP(src=SUB4, dst=NET4) /
                  UDP(sport=7000, dport=7000) / Raw(b"u" * 1400)) for _ in range(8)]
    res = run(busy + [c.syn()], [filler_down(0)])
    try:
        h.assert_clean_exit(res.r)
        assert sorted(res.r.outs[1]) == sorted(busy + [c.syn()])
        assert_counters(res, syns=1, handshakes=0, syn_queued=1)
    finally:
        res.remove()
    # With the pipe idle the SYN is sent at once (the bypass): its arrival
    # was its departure, nothing to count.
    res = run([c.syn()], [filler_down(0)])
    try:
        h.assert_clean_exit(res.r)
        assert res.r.outs[1] == [c.syn()]
        assert_counters(res, syns=1, handshakes=0, syn_queued=0)
    finally:
        res.remove()


def test_with_rwnd_clamp_off_every_frame_leaves_byte_identical():
    c = Conn()
    ack = c.ack(SEGS - 3)
    up, down = handshake_and_burst(c, ack)
    res = run(up, down, clamp="off")
    try:
        assert_others_unchanged(res, up, down, ack, ack)
        assert not [l for l in res.r.stdout.splitlines() if l.startswith("aqm_rwnd")], \
            "an aqm_rwnd line with the clamp off:\n" + res.r.stdout
    finally:
        res.remove()


def test_without_a_handshake_seen_no_ack_is_clamped():
    # The connection was open before sluice started: data and ACKs only.
    c = Conn()
    ack = c.ack(SEGS - 3)
    up = fillers_up(SEGS + 2) + [ack]
    down = [c.data(i) for i in range(SEGS)]
    res = run(up, down)
    try:
        assert_others_unchanged(res, up, down, ack, ack)
        assert_counters(res, segments=SEGS + 1, syns=0, handshakes=0, engaged=0,
                        clamped=0, not_lowered=0)
    finally:
        res.remove()


def test_a_retransmitted_syn_makes_the_handshake_ambiguous_and_the_ack_is_left_alone():
    # The same SYN twice: which one the SYN-ACK answers is unknown (Karn),
    # so is the server's leg. Both orders: the second SYN before the
    # SYN-ACK (a passed filler holds the SYN-ACK back one turn), and after
    # it (the SYN-ACK was lost beyond sluice; the server answers again).
    c = Conn()
    ack = c.ack(SEGS - 3)
    data = [c.data(i) for i in range(SEGS)]
    cases = {
        "before the SYN-ACK": ([c.syn(), c.syn(), c.ack3()], [filler_down(0), c.synack()]),
        "after the SYN-ACK": ([c.syn(), c.syn(), c.ack3()], [c.synack(), c.synack()]),
    }
    for name, (up, down) in cases.items():
        up = up + fillers_up(SEGS + 2) + [ack]
        down = down + data
        res = run(up, down)
        try:
            assert_others_unchanged(res, up, down, ack, ack)
            got = {k: res.rwnd(k) for k in ("syns", "handshakes", "ambiguous", "engaged", "clamped")}
            assert got == dict(syns=2, handshakes=0, ambiguous=1, engaged=0, clamped=0), \
                "SYN again %s: %r" % (name, got)
        finally:
            res.remove()


def test_a_retransmitted_syn_ack_makes_the_handshake_ambiguous_too():
    # The client's leg: which SYN-ACK its ACK answers is unknown.
    c = Conn()
    ack = c.ack(SEGS - 3)
    up = [c.syn(), filler_up(100), c.ack3()] + fillers_up(SEGS + 2) + [ack]
    down = [c.synack(), c.synack()] + [c.data(i) for i in range(SEGS)]
    res = run(up, down)
    try:
        assert_others_unchanged(res, up, down, ack, ack)
        assert_counters(res, syns=1, handshakes=0, ambiguous=1, engaged=0, clamped=0)
    finally:
        res.remove()


def raw_syn(conn, opts):
    """A SYN of conn whose option area is opts (bytes, a multiple of 4),
    with a valid checksum: scapy's checksum covers header and payload
    alike, so the options can ride as the payload of a longer header."""
    l3 = IP(src=SUB4, dst=NET4) if conn.family == 4 else IPv6(src=SUB6, dst=NET6)
    assert len(opts) % 4 == 0
    return bytes(Ether(src=C_MAC, dst=S_MAC) / l3 /
                 TCP(sport=conn.sport, dport=conn.dport, flags="S", seq=C_ISN,
                     window=64240, dataofs=5 + len(opts) // 4) / Raw(opts))


def truncated_tcp(sport, n):
    """An IPv4 datagram from the subscriber whose TCP header (a SYN's) is
    cut to n bytes: the IP lengths agree, the TCP header does not fit."""
    tcp = bytes(TCP(sport=sport, dport=443, flags="S", seq=C_ISN))
    return bytes(Ether(src=C_MAC, dst=S_MAC) / IP(src=SUB4, dst=NET4, proto=6) / Raw(tcp[:n]))


def test_hostile_syns_are_counted_and_never_tracked_and_malformed_tcp_passes_unchanged():
    mss_sack_ts = b"\x02\x04\x05\xb4" + b"\x04\x02" + b"\x08\x0a" + struct.pack("!II", 100, 0)
    # Window scale with length 4 (RFC 7323 says 3); option length 0; an
    # MSS whose length (8) runs past the header's end.
    bad = [raw_syn(Conn(sport=40001), mss_sack_ts + b"\x01" + b"\x03\x04\x07\x00" + b"\x01\x01\x01"),
           raw_syn(Conn(sport=40002), b"\x01\x01\x08\x00" + b"\x00" * 4),
           raw_syn(Conn(sport=40003), mss_sack_ts + b"\x01" * 4 + b"\x02\x08\x05\xb4")]
    # A SYN whose TCP header is cut to 16 bytes (its flags are there), and
    # one whose data offset says 12 bytes.
    short = truncated_tcp(40004, 16)
    doff3 = bytearray(bytes(Ether(src=C_MAC, dst=S_MAC) / IP(src=SUB4, dst=NET4) /
                            TCP(sport=40005, dport=443, flags="S", seq=C_ISN)))
    doff3[14 + 20 + 12] = 0x30
    malformed = [short, bytes(doff3)]
    # The connection of the first bad SYN goes on as in the clamped test.
    c = Conn(sport=40001)
    ack = c.ack(SEGS - 3)
    up = bad + malformed + [c.ack3()] + fillers_up(SEGS + 2) + [ack]
    down = ([filler_down(i) for i in range(len(bad) + len(malformed) - 1)] +
            [c.synack()] + [c.data(i) for i in range(SEGS)])
    res = run(up, down)
    try:
        assert_others_unchanged(res, up, down, ack, ack)
        for f in bad + malformed:
            assert f in res.r.outs[1], "a hostile SYN did not leave unchanged"
        assert_counters(res, bad_syn=len(bad), syns=0, handshakes=0, ambiguous=0,
                        engaged=0, clamped=0)
        # Malformed frames never reach the clamp: counted by reason as
        # every stage counts them, and forwarded.
        assert res.r.counter("malformed", "truncated_l4") == 1, res.r.stdout
        assert res.r.counter("malformed", "tcp_bad_data_offset") == 1, res.r.stdout
        assert res.r.counter("totals", "malformed") == 2, res.r.stdout
        # 3 bad SYNs, the SYN-ACK, the ACK, 20 data segments, the last ACK.
        assert res.rwnd("segments") == len(bad) + SEGS + 3, res.r.stdout
    finally:
        res.remove()


def test_telemetry_shows_the_rwnd_counters_of_the_exit_report():
    c = Conn()
    ack = c.ack(SEGS - 3)
    up, down = handshake_and_burst(c, ack)
    with h.Scratch("rwndtel") as s:
        with open(s.path("subs.csv"), "w") as f:
            f.write(SUBS)
        with open(s.path("test.ini"), "w") as f:
            f.write(CFG % "on")
        args = [h.SLUICE, "--no-huge", "-m", "512", "--no-pci", "-l", h.LCORE,
                "--file-prefix", s.prefix, "--log-level=lib.*:warning"]
        for p, frames in enumerate((up, down)):
            h.write_pcap(s.path("in%d.pcap" % p), frames)
            args += ["--vdev", "net_pcap%d,rx_pcap=%s,tx_pcap=%s" %
                     (p, s.path("in%d.pcap" % p), s.path("out%d.pcap" % p))]
        args += ["--", "-c", s.path("test.ini")]
        s.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, stdin=subprocess.DEVNULL)
        tel, deadline = None, time.time() + 60
        while time.time() < deadline and s.proc.poll() is None:
            try:
                tel = telemetry.query(s.prefix, "/sluice/aqm").get("/sluice/aqm")
            except (OSError, ValueError):
                tel = None
            # Every frame read and every data segment sent (240 ms at 1 Mbit/s).
            if tel and tel.get("rwnd", {}).get("segments") == SEGS + 4 and \
                    tel["down"].get("sent") == SEGS + 1:
                break
            time.sleep(0.05)
        s.proc.send_signal(signal.SIGTERM)
        out, err = s.proc.communicate(timeout=30)
        r = h.Run(s.proc.returncode, out, err, [h.read_pcap(s.path("out%d.pcap" % p)) for p in (0, 1)])
    h.assert_clean_exit(r)
    assert tel and "rwnd" in tel, "no rwnd in /sluice/aqm: %r" % tel
    rw = tel["rwnd"]
    assert (rw["handshakes"], rw["engaged"], rw["clamped"]) == (1, 1, 1), rw
    line = [l for l in out.splitlines() if l.startswith("aqm_rwnd ")]
    assert len(line) == 1, out
    names = [kv.split("=")[0] for kv in line[0].split()[1:]]
    assert sorted(names) == sorted(rw), "exit line %r, telemetry %r" % (names, sorted(rw))
    for k in names:
        assert r.counter("aqm_rwnd", k) == rw[k], "%s: exit %d, telemetry %d" % (
            k, r.counter("aqm_rwnd", k), rw[k])
    assert win_of(the_one(r.outs[1], ack, "the clamped ACK")) == field_for(HEADROOM)


def test_a_table_that_does_not_fit_stops_the_boot_with_a_clear_error():
    # 2^26 entries take 4.25 GB per worker, more than the EAL's -m 512:
    # sluice refuses to start, names the key, and forwards nothing.
    c = Conn()
    up, down = handshake_and_burst(c, c.ack(SEGS - 3))
    res = run(up, down, extra="rwnd_flows = 67108864\n")
    try:
        assert res.r.rc != 0, "started anyway:\n" + res.r.stdout
        assert "rwnd_flows = 67108864 needs 4353 MB per worker" in res.r.stderr, res.r.stderr
        assert "Cannot allocate memory" in res.r.stderr, res.r.stderr
        assert res.r.outs == [[], []], "frames left with the boot refused"
        assert "AddressSanitizer" not in res.r.stderr, res.r.stderr
    finally:
        res.remove()
