#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A scripted TCP peer for sluice's proxy: loss patterns on demand.

The peer plays a server at an address that no kernel owns (198.18.0.3 in
tests/e2e/test_proxy_peer.sh). It reads and writes raw frames on an
interface (AF_PACKET), builds and parses them with scapy, and implements
just enough TCP for one connection: the handshake with MSS, SACK-permitted,
timestamps and window scale; an ACK for every segment, with SACK blocks
(RFC 2018) and D-SACK (RFC 2883); FIN both ways. It misbehaves on purpose,
by script, in ways the kernel cannot be made to on demand.

  tcp_peer.py serve IFACE ADDR PORT SCENARIO OUT.json
      Accept one connection on ADDR:PORT and run SCENARIO:
        lost_rtx   receive: drop the segment at offset 30000 and its first
                   retransmission; SACK everything else
        reorder    send 120 segments in reordered groups ("one behind
                   three", swaps, reversal, three holes at once) and
                   check every ACK's cumulative point and SACK blocks
        dup_data   send segments twice (in order, out of order, after the
                   hole closed) and check that each draws a D-SACK block
                   (first; for out-of-order data followed by the block
                   holding it)
        dup_ack    receive, sending every ACK three times
        reorder_rx receive, delaying the segments at offsets 30000 and
                   120000 behind the three after them; a retransmission
                   of one fills the hole, the late original draws a D-SACK
        reset_strays receive 20 segments, reset the connection, then send
                   what a closed Linux socket's end sends while segments
                   still arrive: three RSTs at the same number and two
                   data segments; count what sluice answers in 1.5 s
      Writes what it saw (facts), the errors it found and, when receiving,
      a trace of the data segments to OUT.json.
  tcp_peer.py client-send HOST PORT NBYTES   send NBYTES (kernel socket),
                   half-close, wait for EOF; print "sha256 length"
  tcp_peer.py client-recv HOST PORT          read to EOF; print "sha256 length"
  tcp_peer.py client-reset HOST PORT         send until the connection is
                   reset; print "RESET" (or what ended it instead)

The frames use only the addresses given; the caller (the test) sets up a
static neighbour entry on the client so its kernel sends to the peer's
MAC.
"""
import hashlib
import json
import random
import select
import socket
import sys
import time

from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

ETH_P_ALL = 3
PACKET_OUTGOING = 4
M32 = 0xFFFFFFFF
MSS = 1400          # payload bytes per segment the peer sends
ISS = 0x7FFFFF00    # the peer's initial sequence number (wraps early)
WSCALE = 7          # the peer's window: 65535 << 7, always open


def s_lt(a, b):
    return ((a - b) & M32) >= 0x80000000


def s_le(a, b):
    return a == b or s_lt(a, b)


def s_diff(a, b):
    """a - b in sequence space, signed."""
    d = (a - b) & M32
    return d - (1 << 32) if d >= 0x80000000 else d


class Seg:
    """One TCP segment from sluice, parsed."""
    __slots__ = ("t", "seq", "ack", "flags", "win", "data", "ts", "sack",
                 "mss", "ws", "sackok", "src_mac", "src", "sport")


class Link:
    """Raw frames on one interface, for one local address and port."""

    def __init__(self, iface, addr, port):
        self.addr, self.port = addr, port
        self.mac = open("/sys/class/net/%s/address" % iface).read().strip()
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                               socket.htons(ETH_P_ALL))
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.s.bind((iface, 0))
        self.dst_ip = socket.inet_aton(addr)
        self.sent = 0

    def recv(self, timeout):
        """The next TCP segment to addr:port, or None after timeout s."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.s], [], [], left)
            if not r:
                return None
            raw, sa = self.s.recvfrom(65535)
            if sa[2] == PACKET_OUTGOING or len(raw) < 54:
                continue
            # Cheap filter first: IPv4, TCP, to our address.
            if raw[12:14] != b"\x08\x00" or raw[23] != 6 or raw[30:34] != self.dst_ip:
                continue
            p = Ether(raw)
            if TCP not in p or p[TCP].dport != self.port:
                continue
            return self._seg(p)

    @staticmethod
    def _seg(p):
        t = p[TCP]
        s = Seg()
        s.t = time.monotonic()
        s.seq, s.ack, s.flags, s.win = t.seq, t.ack, str(t.flags), t.window
        s.data = bytes(t.payload)
        # An IPv4 frame shorter than 60 bytes carries Ethernet padding.
        s.data = s.data[:max(0, p[IP].len - p[IP].ihl * 4 - t.dataofs * 4)]
        s.ts, s.sack, s.mss, s.ws, s.sackok = None, [], None, None, False
        for k, v in t.options:
            if k == "Timestamp":
                s.ts = v
            elif k == "SAck":
                s.sack = [(v[i], v[i + 1]) for i in range(0, len(v) - 1, 2)]
            elif k == "MSS":
                s.mss = v
            elif k == "WScale":
                s.ws = v
            elif k == "SAckOK":
                s.sackok = True
        s.src_mac, s.src, s.sport = p[Ether].src, p[IP].src, t.sport
        return s


class Peer:
    """One connection's worth of TCP, with hooks for misbehaviour."""

    def __init__(self, link, scenario):
        self.l = link
        self.scenario = scenario
        self.t0 = time.monotonic()
        self.ts_last = 0
        self.errors = []
        self.facts = {}
        self.snd_una = self.snd_nxt = ISS
        self.rcv_nxt = None
        self.ts_recent = 0
        self.peer_ws = 0
        self.peer_mss = 536
        self.peer_win = 0
        # receiver: intervals of stream offsets held [(l, r, touched)]
        self.ivals = []
        self.buf = bytearray()
        self.touch = 0
        self.dsack = None
        self.fin_rcvd = False
        self.fin_sent = False
        self.peer_timeouts = 0
        self.acks_in = []     # (ack, sack blocks, t) of every segment from sluice
        self.trace = []       # receiving: (ms, offset, length, action) per data segment

    # -------- sending --------
    def tsval(self):
        v = int((time.monotonic() - self.t0) * 1000) + 1
        self.ts_last = max(self.ts_last, v)
        return self.ts_last

    def frame(self, seq, flags, data=b"", sack=(), syn_opts=None):
        if syn_opts is not None:
            opts = syn_opts
        else:
            opts = [("NOP", None), ("NOP", None),
                    ("Timestamp", (self.tsval(), self.ts_recent))]
            if sack:
                flat = []
                for a, b in sack:
                    flat += [a & M32, b & M32]
                opts += [("NOP", None), ("NOP", None), ("SAck", tuple(flat))]
        ack = self.rcv_nxt if self.rcv_nxt is not None else 0
        f = (Ether(src=self.l.mac, dst=self.cli_mac) /
             IP(src=self.l.addr, dst=self.cli, ttl=64) /
             TCP(sport=self.l.port, dport=self.cli_port, seq=seq & M32,
                 ack=ack & M32, flags=flags, window=65535, options=opts))
        if data:
            f = f / Raw(data)
        return f

    def send(self, seq, flags, data=b"", sack=(), copies=1, syn_opts=None):
        f = bytes(self.frame(seq, flags, data, sack, syn_opts))
        for _ in range(copies):
            self.l.s.send(f)
            self.l.sent += 1
        return f

    # -------- handshake --------
    def accept(self, timeout):
        end = time.monotonic() + timeout
        syn = None
        while time.monotonic() < end:
            s = self.l.recv(end - time.monotonic())
            if s is None:
                break
            if s.flags == "S":
                syn = s
                break
        if syn is None:
            raise SystemExit("no SYN within %d s" % timeout)
        self.cli_mac, self.cli, self.cli_port = syn.src_mac, syn.src, syn.sport
        self.irs = syn.seq
        self.rcv_nxt = (syn.seq + 1) & M32
        self.peer_mss = syn.mss or 536
        self.peer_ws = syn.ws if syn.ws is not None else 0
        self.facts["syn_options"] = {
            "mss": syn.mss, "wscale": syn.ws, "sack_permitted": syn.sackok,
            "timestamps": syn.ts is not None}
        if not (syn.sackok and syn.ts is not None and syn.ws is not None):
            self.errors.append("sluice's SYN lacks SACK-permitted, timestamps or "
                               "window scale: %s" % self.facts["syn_options"])
        self.ts_recent = syn.ts[0] if syn.ts else 0
        synack = lambda: self.send(ISS, "SA", syn_opts=[
            ("MSS", 1460), ("SAckOK", b""),
            ("Timestamp", (self.tsval(), self.ts_recent)), ("WScale", WSCALE)])
        synack()
        self.snd_nxt = (ISS + 1) & M32
        while time.monotonic() < end:
            s = self.l.recv(1.0)
            if s is None:
                synack()
                continue
            if s.flags == "S":          # our SYN/ACK was lost
                synack()
                continue
            if "A" in s.flags and s.ack == self.snd_nxt:
                self.snd_una = s.ack
                self.peer_win = s.win << self.peer_ws
                if s.ts:
                    self.ts_recent = s.ts[0]
                if s.data or "F" in s.flags:
                    self.on_segment(s)
                return
        raise SystemExit("handshake not completed")

    # -------- receiving sluice's data --------
    def off(self, seq):
        return s_diff(seq, (self.irs + 1) & M32)

    def rcv_off(self):
        return self.off(self.rcv_nxt)

    def store(self, o, data):
        """Keep data at stream offset o; update the intervals. Returns
        whether every byte of it was held already (a duplicate)."""
        r = o + len(data)
        if any(a <= o and r <= b for a, b, _ in self.ivals):
            return True
        if r > len(self.buf):
            self.buf.extend(b"\0" * (r - len(self.buf)))
        self.buf[o:r] = data
        self.touch += 1
        lo, hi, keep = o, r, []
        for a, b, t in self.ivals:
            if b < lo or a > hi:
                keep.append((a, b, t))
            else:
                lo, hi = min(a, lo), max(b, hi)
        self.ivals = sorted(keep + [(lo, hi, self.touch)])
        return False

    def sack_blocks(self):
        """Blocks above the cumulative ACK, most recently changed first;
        a pending D-SACK block goes in front (RFC 2883)."""
        base = (self.irs + 1) & M32
        blocks = [(base + a, base + b) for a, b, t in
                  sorted((x for x in self.ivals if x[0] > 0), key=lambda x: -x[2])]
        if self.dsack:
            blocks = [self.dsack] + blocks
            self.dsack = None
        return blocks[:3]

    def advance(self):
        if self.ivals and self.ivals[0][0] <= 0 and not self.fin_rcvd:
            self.rcv_nxt = (self.irs + 1 + self.ivals[0][1]) & M32

    def on_segment(self, s, ack_copies=1):
        """Process one segment of sluice's: data, FIN, ACK. ACK every
        segment that carries data or FIN, at once."""
        self.acks_in.append((s.ack, s.sack, s.t))
        if "A" in s.flags and s_lt(self.snd_una, s.ack) and s_le(s.ack, self.snd_nxt):
            self.snd_una = s.ack
        if "A" in s.flags:
            self.peer_win = s.win << self.peer_ws
        old_nxt = self.rcv_nxt
        # RFC 7323 4.3: TS.Recent from segments at or left of RCV.NXT.
        if s.ts and s_le(s.seq, self.rcv_nxt):
            self.ts_recent = s.ts[0]
        if s.data:
            o = self.off(s.seq)
            if o + len(s.data) <= self.rcv_off() or self.store(max(o, 0), s.data[max(0, -o):]):
                self.dsack = (s.seq, (s.seq + len(s.data)) & M32)
                self.facts["dsacks_sent"] = self.facts.get("dsacks_sent", 0) + 1
            self.advance()
        if "F" in s.flags and not self.fin_rcvd:
            if ((s.seq + len(s.data)) & M32) == self.rcv_nxt:
                self.fin_rcvd = True
                self.rcv_nxt = (self.rcv_nxt + 1) & M32
        if s.data or "F" in s.flags:
            self.send(self.snd_nxt, "A", sack=self.sack_blocks(), copies=ack_copies)
        return old_nxt != self.rcv_nxt

    def close_after_fin(self, timeout):
        """Once sluice's FIN is in: send ours and wait for its ACK."""
        end = time.monotonic() + timeout
        fin_seq = self.snd_nxt
        self.send(fin_seq, "FA")
        self.snd_nxt = (fin_seq + 1) & M32
        self.fin_sent = True
        last = time.monotonic()
        while time.monotonic() < end:
            if self.snd_una == self.snd_nxt:
                return True
            s = self.l.recv(0.2)
            if s is not None:
                self.on_segment(s)
            elif time.monotonic() - last > 1.0:
                self.peer_timeouts += 1
                self.send(fin_seq, "FA")
                last = time.monotonic()
        self.errors.append("our FIN was never acknowledged")
        return False

    def receive_all(self, timeout, policy=None, ack_copies=1):
        """Receive until sluice's FIN. policy(seg) returns "drop", "hold" or
        None (process)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end and not self.fin_rcvd:
            s = self.l.recv(min(1.0, max(0.01, end - time.monotonic())))
            if s is None:
                continue
            act = policy(s) if policy else None
            if s.data:
                self.trace.append((round((s.t - self.t0) * 1000, 1), self.off(s.seq),
                                   len(s.data), act or ""))
            if act == "drop":
                continue
            if act == "hold":
                continue
            self.on_segment(s, ack_copies)
            if policy and hasattr(policy, "after"):
                for h in policy.after(s):
                    self.on_segment(h, ack_copies)
        if not self.fin_rcvd:
            self.errors.append("no FIN from sluice within %d s (have %d bytes)" %
                               (timeout, self.rcv_off()))
            return False
        self.close_after_fin(10)
        data = bytes(self.buf[:self.rcv_off() - 1])
        self.facts["received"] = "%s %d" % (hashlib.sha256(data).hexdigest(), len(data))
        return True

    # -------- sending data to sluice --------
    def send_script(self, data, groups, timeout_each=2.0):
        """Send data as the groups say: each group is a list of segment
        indexes in the order to send them (repeats are duplicates). Waits
        for the ACK of each group's highest byte before the next. Returns
        a list per group of (acks seen, expected) for the checks."""
        nseg = (len(data) + MSS - 1) // MSS
        base = self.snd_nxt
        seg_of = lambda i: (base + i * MSS, data[i * MSS:(i + 1) * MSS])
        result = []
        for g in groups:
            top = max(i for i in g) + 1
            top_seq = (base + min(top * MSS, len(data))) & M32
            while s_diff(top_seq, self.snd_una) > self.peer_win:
                s = self.l.recv(1.0)
                if s is None:
                    self.errors.append("sluice's window stayed shut")
                    return result
                self.on_segment(s)
            mark = len(self.acks_in)
            for i in g:
                seq, d = seg_of(i)
                self.send(seq, "PA", d)
            self.snd_nxt = top_seq if s_lt(self.snd_nxt, top_seq) else self.snd_nxt
            last = time.monotonic()
            while s_lt(self.snd_una, top_seq):
                s = self.l.recv(0.2)
                if s is not None:
                    self.on_segment(s)
                    continue
                if time.monotonic() - last > timeout_each:
                    # Sluice did not ACK: go back, as an RTO would.
                    self.peer_timeouts += 1
                    for i in sorted(set(g)):
                        seq, d = seg_of(i)
                        if s_le(self.snd_una, seq):
                            self.send(seq, "PA", d)
                    last = time.monotonic()
                    if self.peer_timeouts > 5:
                        self.errors.append("sluice never acknowledged group %s" % g)
                        return result
            # ACKs that trail the group's last (window updates) come later;
            # give sluice a moment so they are not mixed into the next group.
            while True:
                s = self.l.recv(0.02)
                if s is None:
                    break
                self.on_segment(s)
            result.append((g, self.acks_in[mark:]))
        assert nseg == max(max(g) for g in groups) + 1
        return result

    def finish_sending(self, timeout):
        """Send our FIN, wait for its ACK and for sluice's FIN."""
        fin_seq = self.snd_nxt
        self.send(fin_seq, "FA")
        self.snd_nxt = (fin_seq + 1) & M32
        end = time.monotonic() + timeout
        last = time.monotonic()
        while time.monotonic() < end and not (self.fin_rcvd and self.snd_una == self.snd_nxt):
            s = self.l.recv(0.2)
            if s is not None:
                self.on_segment(s)
            elif self.snd_una != self.snd_nxt and time.monotonic() - last > 1.0:
                self.peer_timeouts += 1
                self.send(fin_seq, "FA")
                last = time.monotonic()
        if not self.fin_rcvd:
            self.errors.append("no FIN from sluice after ours")
        if self.snd_una != self.snd_nxt:
            self.errors.append("our FIN was never acknowledged")


# ------------------------------------------------------------------ #
# Expected ACKs of a correct SACK receiver (RFC 2018, RFC 2883)        #

def expected_acks(group, have, base, nbytes, states=None):
    """Simulate a receiver that ACKs out-of-order segments, filled holes
    and duplicates at once (RFC 5681 4.2, RFC 2883). have: set of segment
    indexes held before the group. Returns, per segment sent, None (an ACK
    may be delayed) or (ack, first SACK block or None, D-SACK?, set of
    the SACK blocks above the ACK, the block a D-SACK must be followed
    by or None), and updates have. If states is a list, the receiver's
    state after each segment, (cumulative ACK, set of SACK blocks), is
    appended to it."""
    out = []
    seg = lambda i: ((base + i * MSS) & M32, (base + min((i + 1) * MSS, nbytes)) & M32)

    def nxt():
        i = 0
        while i in have:
            i += 1
        return i

    def blocks():
        res, i = [], nxt()
        while i <= max(have | {0}):
            if i in have:
                j = i
                while j + 1 in have:
                    j += 1
                res.append((seg(i)[0], seg(j)[1]))
                i = j + 1
            else:
                i += 1
        return set(res)

    for n, i in enumerate(group):
        if n and states is not None:        # the state after the one before
            states.append((seg(nxt())[0], blocks()))
        before = nxt()
        if i in have:
            # A duplicate: a D-SACK block for it first; if it is held
            # out of order, the block holding it second (RFC 2883 4).
            second = None
            if i > before:
                second = [b for b in blocks() if s_le(b[0], seg(i)[0]) and
                          s_le(seg(i)[1], b[1])][0]
            out.append((seg(before)[0], seg(i), True, blocks(), second))
            continue
        have.add(i)
        after = nxt()
        if i != before:                     # out of order
            first = [b for b in blocks() if s_le(b[0], seg(i)[0]) and s_le(seg(i)[1], b[1])]
            out.append((seg(after)[0], first[0], False, blocks(), None))
        elif after != before + 1:           # filled a hole
            out.append((seg(after)[0], None, False, blocks(), None))
        else:
            out.append(None)
    if group and states is not None:
        states.append((seg(nxt())[0], blocks()))
    return out


def check_group_acks(peer, res, base, nbytes, require_dsack):
    """Compare the ACKs sluice sent during each group with a correct
    receiver's. Returns (immediate ACKs matched, D-SACKs seen)."""
    have = set()
    matched = dsacks = 0
    for g, acks in res:
        states = []
        exp = expected_acks(g, have, base, nbytes, states)
        last = max((j for j, e in enumerate(exp) if e is not None), default=-1)
        k = 0
        for j, e in enumerate(exp):
            if e is None:
                continue
            ack, first, is_dup, blks, second = e
            # Segments that reached sluice in one rx burst: on a SACK
            # connection left with at most one out-of-order range, the
            # ACK that out-of-order data or a filled hole owes leaves at
            # the burst's end, so a later ACK of the group may stand for
            # it (lib/tcp/README.md, "ACKs per burst"). The last such
            # ACK of a group may wait only for a later segment of the
            # group that owes none at once (in order after it): the ACK
            # that then leaves carries the state after that segment.
            may_wait = not is_dup and len(blks) <= 1 and j != last
            may_merge = not is_dup and len(blks) <= 1 and j == last
            k0 = k
            found = False
            while k < len(acks):
                a, sack, _ = acks[k]
                k += 1
                if a != ack:
                    continue
                if is_dup:
                    if sack and sack[0] == first and set(sack[1:]) <= blks and \
                            (second is None or (len(sack) > 1 and sack[1] == second)):
                        dsacks += 1
                        found = True
                        break
                    if not require_dsack and set(sack) == blks:
                        found = True
                        break
                    continue
                if (first is None or (sack and sack[0] == first)) and \
                        set(sack) <= blks and len(sack) == min(3, len(blks)):
                    found = True
                    break
            if not found and may_wait:
                k = k0
                continue
            if not found and may_merge:
                for a, sack, _ in acks[k0:]:
                    if any(a == st_ack and set(sack) <= st_blks and
                           len(sack) == min(3, len(st_blks))
                           for st_ack, st_blks in states[j + 1:]):
                        found = True
                        break
            if not found:
                peer.errors.append(
                    "group %s: no ACK %s with first SACK block %s%s%s (blocks held %s); "
                    "sluice sent %s" % (
                        g, ack, first, " as D-SACK" if is_dup else "",
                        ", then %s" % (second,) if second else "", sorted(blks),
                        [(a, s) for a, s, _ in acks]))
                return matched, dsacks
            matched += 1
    return matched, dsacks


# ------------------------------------------------------------------ #
# Scenarios                                                            #

def sc_lost_rtx(peer):
    """Drop the segment holding offset 30000, then its first
    retransmission; take the second."""
    target = 30000
    seen = []

    def policy(s):
        if not s.data:
            return None
        o = peer.off(s.seq)
        if o <= target < o + len(s.data):
            seen.append(s.t)
            if len(seen) <= 2:
                return "drop"
        return None
    peer.accept(10)
    ok = peer.receive_all(40, policy)
    peer.facts["transmissions_of_lost"] = len(seen)
    peer.facts["other_retransmissions"] = other_retransmissions(peer, [target])
    peer.facts["times_ms"] = [round((t - seen[0]) * 1000, 1) for t in seen]
    if len(seen) < 3:
        peer.errors.append("segment at offset %d sent %d times, want 3" % (target, len(seen)))
    elif len(seen) > 3:
        peer.errors.append("segment at offset %d sent %d times after it arrived, want 3"
                           % (target, len(seen)))
    if ok and len(seen) >= 3:
        peer.facts["rtx2_gap_ms"] = round((seen[2] - seen[1]) * 1000, 1)


def other_retransmissions(peer, targets):
    """Data segments that arrived more than once, other than those holding
    the target offsets and the stream's last segment (a tail loss probe
    may resend it when the peer is slow to ACK). Offsets, at most 10."""
    seen, again = set(), []
    last = max((o for _, o, _, _ in peer.trace), default=0)
    for _, o, n, _ in peer.trace:
        if o in seen and o != last and not any(o <= t < o + n for t in targets):
            again.append(o)
        seen.add(o)
    return again[:10]


def sc_reorder_rx(peer):
    """Hold the segments at offsets 30000 and 120000 until the three after
    them were processed; a retransmission arriving meanwhile is dropped
    (the original is on its way), one arriving later draws a D-SACK."""
    targets = [30000, 120000]
    state = {"held": None, "after": 0, "spurious": [], "released": set()}

    class Policy:
        def __call__(self, s):
            if not s.data:
                return None
            o = peer.off(s.seq)
            for t in targets:
                if o <= t < o + len(s.data):
                    if state["held"] is not None and state["held"][0] == t or \
                            t in state["released"]:
                        # sluice retransmitted it: it is processed (it
                        # fills the hole), the late original then draws
                        # a D-SACK
                        state["spurious"].append(t)
                        return None
                    if state["held"] is None:
                        state["held"] = (t, s)
                        state["after"] = 0
                        return "hold"
            return None

        def after(self, s):
            if state["held"] is None or not s.data:
                return []
            state["after"] += 1
            if state["after"] < 3:
                return []
            t, h = state["held"]
            state["held"] = None
            state["released"].add(t)
            return [h]
    peer.accept(10)
    peer.receive_all(40, Policy())
    peer.facts["spurious_retransmissions"] = state["spurious"]
    peer.facts["other_retransmissions"] = other_retransmissions(peer, targets)


def sc_dup_ack(peer):
    peer.accept(10)
    peer.receive_all(40, None, ack_copies=3)


def make_data(n):
    return random.Random(6).randbytes(n)


def sc_reorder(peer):
    """120 segments: groups reordered five ways."""
    pats = [[1, 2, 3, 0],               # one behind three
            [1, 0, 3, 2],               # two swaps
            [3, 2, 1, 0],               # reversed
            [1, 3, 5, 0, 2, 4],         # three holes at once
            [0, 2, 1, 3]]               # swap in the middle
    groups, base = [], 0
    while base < 120:
        p = pats[len(groups) % len(pats)]
        if base + len(p) > 120:
            p = list(range(120 - base))
        groups.append([base + i for i in p])
        base += len(p)
    run_send(peer, groups, require_dsack=False)


def sc_dup_data(peer):
    """60 segments, duplicated: at once, out of order, after the hole."""
    pats = [[0, 0, 1, 2, 3],            # an in-order segment twice
            [1, 1, 0, 2, 3],            # an out-of-order one twice
            [1, 0, 1, 2, 3],            # again after the hole closed
            [0, 1, 2, 3]]
    groups, base = [], 0
    while base < 60:
        p = pats[len(groups) % len(pats)]
        groups.append([base + i for i in p])
        base += 4
    run_send(peer, groups, require_dsack=True)


def sc_reset_strays(peer):
    """Reset mid-transfer, then play the leftovers of a closed socket."""
    peer.accept(10)
    got, end = 0, time.monotonic() + 20
    while got < 20 and time.monotonic() < end:
        s = peer.l.recv(1.0)
        if s is not None and s.data:
            peer.on_segment(s)
            got += 1
    if got < 20:
        raise SystemExit("only %d data segments before the reset" % got)
    seq, ack = peer.snd_nxt, peer.rcv_nxt
    peer.send(seq, "RA")
    # The leftovers come after the reset, as they do from a kernel: a
    # frame sent from another CPU could overtake it on the veth.
    time.sleep(0.05)
    # A Linux end with no socket answers each segment that still comes
    # with an RST at its ACK number, the same number every time; data it
    # had queued behind may be on the wire too.
    for _ in range(3):
        peer.send(seq, "R")
    peer.send(seq, "PA", data=b"x" * 100)
    peer.send((seq + 100) & M32, "PA", data=b"y" * 100)
    rst_ok = rst_other = other = 0
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        s = peer.l.recv(max(0.01, end - time.monotonic()))
        if s is None or s.src != peer.cli or s.sport != peer.cli_port:
            continue
        if "R" in s.flags and s.seq == ack:
            rst_ok += 1
        elif "R" in s.flags:
            rst_other += 1
        else:
            other += 1
    peer.facts.update({"data_segments_before_reset": got, "rst_answers": rst_ok,
                       "rst_other": rst_other, "other_frames_after_reset": other})
    # Other frames may be sluice's data sent before our RST reached it.
    if rst_ok != 2 or rst_other:
        peer.errors.append("after the reset: %d RSTs at our ACK number for 2 data "
                           "segments, %d other RSTs" % (rst_ok, rst_other))


def run_send(peer, groups, require_dsack):
    n = (max(max(g) for g in groups) + 1) * MSS
    data = make_data(n)
    peer.accept(10)
    base = peer.snd_nxt
    res = peer.send_script(data, groups)
    peer.finish_sending(20)
    peer.facts["sent"] = "%s %d" % (hashlib.sha256(data).hexdigest(), n)
    matched, dsacks = check_group_acks(peer, res, base, n, require_dsack)
    peer.facts["immediate_acks_matched"] = matched
    peer.facts["dsack_blocks_seen"] = dsacks
    peer.facts["segments_sent"] = sum(len(g) for g in groups)
    peer.facts["duplicates_sent"] = sum(len(g) - len(set(g)) for g in groups)


SCENARIOS = {"lost_rtx": sc_lost_rtx, "reorder_rx": sc_reorder_rx,
             "dup_ack": sc_dup_ack, "reorder": sc_reorder, "dup_data": sc_dup_data,
             "reset_strays": sc_reset_strays}


def serve(iface, addr, port, scenario, out):
    peer = Peer(Link(iface, addr, int(port)), scenario)
    sys.stderr.write("ready\n")
    sys.stderr.flush()
    try:
        SCENARIOS[scenario](peer)
    except SystemExit as e:
        peer.errors.append(str(e))
    peer.facts["peer_timeouts"] = peer.peer_timeouts
    peer.facts["frames_sent"] = peer.l.sent
    peer.facts["seconds"] = round(time.monotonic() - peer.t0, 2)
    if peer.peer_timeouts:
        peer.errors.append("the peer had to retransmit %d times (sluice did not ACK)"
                           % peer.peer_timeouts)
    json.dump({"errors": peer.errors, "facts": peer.facts,
               "trace": peer.trace},
              open(out, "w"))


def client_send(host, port, n):
    data = make_data(int(n))
    c = socket.create_connection((host, int(port)), timeout=10)
    c.settimeout(40)
    c.sendall(data)
    c.shutdown(socket.SHUT_WR)
    while c.recv(65536):
        pass
    c.close()
    print("%s %d" % (hashlib.sha256(data).hexdigest(), len(data)))


def client_recv(host, port):
    c = socket.create_connection((host, int(port)), timeout=10)
    c.settimeout(40)
    h, n = hashlib.sha256(), 0
    while True:
        b = c.recv(65536)
        if not b:
            break
        h.update(b)
        n += len(b)
    c.close()
    print("%s %d" % (h.hexdigest(), n))


def client_reset(host, port):
    c = socket.create_connection((host, int(port)), timeout=10)
    c.settimeout(40)
    chunk = make_data(65536)
    try:
        while True:
            c.sendall(chunk)
    except ConnectionResetError:
        print("RESET")
    except OSError as e:
        print("ended by %s" % e)
    c.close()


if __name__ == "__main__":
    a = sys.argv[1:]
    if a and a[0] == "serve" and len(a) == 6:
        serve(*a[1:])
    elif a and a[0] == "client-send" and len(a) == 4:
        client_send(*a[1:])
    elif a and a[0] == "client-recv" and len(a) == 3:
        client_recv(*a[1:])
    elif a and a[0] == "client-reset" and len(a) == 3:
        client_reset(*a[1:])
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)
