# SPDX-License-Identifier: BSD-3-Clause
"""The aqm stage on pcap files: FQ-CoDel behind a 10 Mbit/s shaper.

net_pcap hands sluice the whole input file at once, so a queue builds in
the pipe and CoDel acts on it; the shaper then releases packets at the
configured rate and net_pcap stamps each with its tx time. Addresses only
from 198.18.0.0/15 and 2001:db8::/32.
"""
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile

from scapy.all import IP, UDP, Ether, IPv6, Raw, TCP
from scapy.utils import RawPcapReader

import harness as h

REPO = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLES = os.path.join(REPO, "config", "examples")
CFG_10M = open(os.path.join(EXAMPLES, "fq_codel-10mbit.ini")).read()
# The same without BLUE: pcap input arrives all at once, a flood that never
# answers marks, so BLUE would drop from it once its sojourn passes 400 ms.
# Tests of CoDel's own marking, of the shaper and of the ACK filter turn it
# off; test_an_ect_flood_that_ignores_marks_loses_packets_to_blue turns it on.
CFG_10M_NOBLUE = CFG_10M.rstrip("\n") + "\nblue = off\n"
C_MAC, S_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02"
SUB4, NET4 = "198.18.0.1", "198.19.0.1"
SUB6, NET6 = "2001:db8:1::1", "2001:db8:2::1"
_seq = [0]
# The flow-hash seed of these runs. sluice picks a random one by default,
# and 1 run in 60 to 1 in 1,000 two of a test's flows then share a flow
# queue, which changes the order the scheduler tests check. A fixed seed
# keeps the queues, and so the order, the same every run.
FLOW_SEED = 1


def up4(sport=40000, dport=5001, size=1000, tos=0, seq=0, proto="udp", src=SUB4):
    """A subscriber -> internet IPv4 frame carrying a sequence number."""
    l4 = (UDP(sport=sport, dport=dport) if proto == "udp"
          else TCP(sport=sport, dport=dport, flags="PA", seq=seq))
    return (Ether(src=C_MAC, dst=S_MAC) / IP(src=src, dst=NET4, tos=tos) / l4
            / Raw(struct.pack("!I", seq) + b"x" * (size - 4)))


def down4(dst=SUB4, sport=443, dport=40000, size=1000, seq=0):
    return (Ether(src=S_MAC, dst=C_MAC) / IP(src=NET4, dst=dst) /
            UDP(sport=sport, dport=dport) / Raw(struct.pack("!I", seq) + b"y" * (size - 4)))


def up6(sport=40000, size=1000, tc=0, seq=0):
    return (Ether(src=C_MAC, dst=S_MAC) / IPv6(src=SUB6, dst=NET6, tc=tc) /
            UDP(sport=sport, dport=5001) / Raw(struct.pack("!I", seq) + b"z" * (size - 4)))


class TsRun(h.Run):
    """A harness Run whose outputs also keep net_pcap's tx timestamps."""

    def __init__(self, rc, stdout, stderr, outs, stamps, tmp):
        super().__init__(rc, stdout, stderr, outs)
        self.stamps = stamps  # per port: list of float seconds
        self.tmp = tmp

    def aqm(self, d, key):
        return self.counter("aqm dir=%s" % d, key)

    def drops(self, d):
        return sum(self.aqm(d, k) for k in
                   ("drop_codel", "drop_overflow", "drop_memory", "drop_blue", "drop_ecn",
                    "handoff_drops"))


def run(inputs, config, lcores=None, idle_ms=300, keep=False, files=None,
        queues=1, flow_seed=FLOW_SEED):
    """Like harness.run, but with a choice of lcores, tx timestamps, and
    extra files (name -> text) written beside the config. With queues > 1
    every port gets that many rx and tx queues (one pcap each, so worker q
    reads file q): inputs[p] is then a list of frame lists, one per queue,
    and outs[p] holds queue 0's output, then queue 1's, and so on.
    An [aqm] section without a flow_seed gets flow_seed (None: none)."""
    if flow_seed is not None and "[aqm]\n" in config and "flow_seed" not in config:
        config = config.replace("[aqm]\n", "[aqm]\nflow_seed = %d\n" % flow_seed, 1)
    _seq[0] += 1
    prefix = "aqm%d_%d" % (os.getpid(), _seq[0])
    tmp = tempfile.mkdtemp(prefix="sluice-aqm-")
    try:
        args = [h.SLUICE, "--no-huge", "-m", "512", "--no-pci", "-l", lcores or h.LCORE,
                "--file-prefix", prefix,
                "--log-level=lib.*:warning"]
        for p in range(2):
            if queues == 1:
                fin = os.path.join(tmp, "in%d.pcap" % p)
                h.write_pcap(fin, inputs[p] if p < len(inputs) else [])
                args += ["--vdev", "net_pcap%d,rx_pcap=%s,tx_pcap=%s" %
                         (p, fin, os.path.join(tmp, "out%d.pcap" % p))]
                continue
            dev = "net_pcap%d" % p
            for q in range(queues):
                fin = os.path.join(tmp, "in%d_q%d.pcap" % (p, q))
                per_q = inputs[p] if p < len(inputs) else []
                h.write_pcap(fin, per_q[q] if q < len(per_q) else [])
                dev += ",rx_pcap=%s,tx_pcap=%s" % (
                    fin, os.path.join(tmp, "out%d_q%d.pcap" % (p, q)))
            args += ["--vdev", dev]
        for name, text in (files or {}).items():
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text)
        cpath = os.path.join(tmp, "test.ini")
        with open(cpath, "w") as f:
            f.write(config)
        args += ["--", "--idle-exit", str(idle_ms), "-c", cpath]
        p = subprocess.run(args, capture_output=True, text=True, timeout=90,
                           stdin=subprocess.DEVNULL)
        outs, stamps = [], []
        for i in range(2):
            paths = ([os.path.join(tmp, "out%d.pcap" % i)] if queues == 1 else
                     [os.path.join(tmp, "out%d_q%d.pcap" % (i, q)) for q in range(queues)])
            frames, ts = [], []
            for path in paths:
                # A crashed run leaves empty files, not even a header.
                if not os.path.exists(path) or os.path.getsize(path) == 0:
                    continue
                rd = RawPcapReader(path)
                div = 1e9 if getattr(rd, "nano", False) else 1e6
                for data, meta in rd:
                    frames.append(bytes(data))
                    ts.append(meta.sec + meta.usec / div)
                rd.close()
            outs.append(frames)
            stamps.append(ts)
        return TsRun(p.returncode, p.stdout, p.stderr, outs, stamps, tmp)
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(h.eal_runtime_dir(prefix), ignore_errors=True)


def tshark(path, *fields):
    out = subprocess.run(["tshark", "-r", path, "-o", "ip.check_checksum:TRUE",
                          "-T", "fields"] + sum([["-e", f] for f in fields], []),
                         capture_output=True, text=True, timeout=60, check=True).stdout
    return [line.split("\t") for line in out.splitlines()]


def seq_of(frame):
    """(flow key, sequence number) of a frame built by up4/down4/up6."""
    eth = Ether(frame)
    l3 = eth[IP] if IP in eth else eth[IPv6]
    l4 = l3.payload
    return (l4.sport, l4.dport), struct.unpack("!I", bytes(l4.payload)[:4])[0]


def test_nothing_is_lost_silently_when_codel_drops_under_overload():
    frames = [up4(sport=40000 + i % 4, seq=i) for i in range(2000)]
    r = run([frames, []], CFG_10M)
    h.assert_clean_exit(r)
    out = len(r.outs[1])
    drops = r.drops("up")
    assert r.aqm("up", "drop_codel") > 0, "CoDel never dropped:\n" + r.stdout
    assert out + drops == 2000, "out %d + drops %d != in 2000" % (out, drops)
    assert r.aqm("up", "enqueued") == 2000 and r.aqm("up", "sent") == out
    assert r.aqm("up", "backlog_pkts") == 0


def _ce_case(frames, family):
    r = run([frames, []], CFG_10M_NOBLUE, keep=True)
    try:
        h.assert_clean_exit(r)
        n = len(frames)
        assert len(r.outs[1]) == n, "ECT packets were dropped: %d of %d out" % (len(r.outs[1]), n)
        assert r.aqm("up", "drop_codel") == 0
        ce = r.aqm("up", "ce_marked")
        assert ce > 0, "no CE marks:\n" + r.stdout
        path = os.path.join(r.tmp, "out1.pcap")
        if family == 4:
            rows = tshark(path, "ip.checksum.status", "ip.dsfield.ecn")
            bad = [x for x in rows if x[0] != "1"]
            assert not bad, "%d frames with a bad IPv4 checksum: %r" % (len(bad), bad[:3])
        else:
            rows = tshark(path, "ipv6.tclass.ecn")
        marked = sum(1 for x in rows if x[-1] == "3")
        assert marked == ce, "tshark sees %d CE, counter says %d" % (marked, ce)
        assert all(x[-1] in ("2", "3") for x in rows), "ECN field damaged"
        return ce
    finally:
        shutil.rmtree(r.tmp, ignore_errors=True)


def test_ect_ipv4_packets_are_ce_marked_with_valid_checksums_instead_of_dropped():
    _ce_case([up4(sport=40000 + i % 4, seq=i, tos=0x02) for i in range(1500)], 4)


def test_ect_ipv6_packets_are_ce_marked_instead_of_dropped():
    _ce_case([up6(sport=40000 + i % 4, seq=i, tc=0x02) for i in range(1500)], 6)


def test_an_ect_flood_that_ignores_marks_loses_packets_to_blue():
    # 3000 ECT frames of 1000 bytes at once: 2.4 s of queue at 10 Mbit/s.
    # CoDel only marks them; once a packet has waited 400 ms, BLUE drops
    # from the flows whatever their ECN bits say, and counts it.
    frames = [up4(sport=40000 + i % 4, seq=i, tos=0x02) for i in range(3000)]
    r = run([frames, []], CFG_10M)
    h.assert_clean_exit(r)
    out = len(r.outs[1])
    assert r.aqm("up", "drop_blue") > 0, "BLUE never dropped:\n" + r.stdout
    assert r.aqm("up", "drop_codel") == 0
    assert r.aqm("up", "ce_marked") > 0
    assert out + r.drops("up") == 3000, r.stdout
    assert r.aqm("up", "sent") == out and r.aqm("up", "backlog_pkts") == 0


def test_output_never_leaves_faster_than_the_shaped_rate():
    frames = [up4(sport=40000 + i % 8, seq=i, tos=0x02) for i in range(1200)]
    r = run([frames, []], CFG_10M_NOBLUE)
    h.assert_clean_exit(r)
    ts, out = r.stamps[1], r.outs[1]
    assert len(ts) == 1200
    # Bits after the first frame over the time they took. These are real
    # tx timestamps: a shaper that loses its CPU loses link time (it never
    # bursts to catch up beyond max_lag), so on a busy machine the rate
    # can only come out lower. The exact rate is pinned on a virtual clock
    # by tests/unit/aqm (within 0.5%); here we check the safety side
    # tightly and only gross errors on the other.
    bits = sum(len(f) for f in out[1:]) * 8
    rate = bits / (ts[-1] - ts[0])
    assert rate <= 10.5e6, "output at %.2f Mbit/s, shaped to 10" % (rate / 1e6)
    assert rate >= 5.0e6, "output at %.2f Mbit/s, shaped to 10" % (rate / 1e6)


def test_a_sparse_flow_leaves_ahead_of_a_bulk_backlog():
    bulk = [up4(sport=40000, seq=i, tos=0x02) for i in range(800)]
    sparse = [up4(sport=53000, dport=53, size=80, seq=i) for i in range(5)]
    r = run([bulk + sparse, []], CFG_10M)
    h.assert_clean_exit(r)
    pos = [i for i, f in enumerate(r.outs[1]) if seq_of(f)[0][0] == 53000]
    assert len(pos) == 5, pos
    # They arrived behind 800 bulk packets; FQ-CoDel's new-flow list
    # serves them within the first few packets sent.
    assert max(pos) < 40, "sparse packets left at positions %r" % pos


def test_order_within_each_flow_is_preserved():
    frames = [up4(sport=40000 + i % 5, seq=i) for i in range(1500)]
    frames += [up4(sport=41000, proto="tcp", seq=i) for i in range(200)]
    r = run([frames, []], CFG_10M)
    h.assert_clean_exit(r)
    last = {}
    for f in r.outs[1]:
        k, s = seq_of(f)
        assert s > last.get(k, -1), "flow %r: %d after %d" % (k, s, last[k])
        last[k] = s
    assert len(last) == 6


# Host isolation: CoDel and BLUE out of the way, so the order packets
# leave in is the scheduler's alone.
CFG_ISO = ("[aqm]\nports = 0\nqdisc = fq_codel\ndefault = pipe\n"
           "rate_down = 10mbit\nrate_up = 10mbit\ntarget = 1s\ninterval = 3s\n"
           "blue = off\nisolation = %s\n")
HOST_B = "198.18.0.2"


def _hosts_input(b_server=NET4):
    """Host A (198.18.0.1) uploads on 8 flows to one server, host B
    (198.18.0.2) on 1 to b_server, all at once: 8 x 100 and 400 packets
    of 1000 bytes, interleaved as they would arrive."""
    frames = []
    for i in range(100):
        for k in range(8):
            frames.append(up4(sport=40000 + k, seq=i))
        for k in range(4):
            f = up4(sport=45000, seq=4 * i + k, src=HOST_B)
            f[IP].dst = b_server
            frames.append(f)
    return frames


def _host_b_share(isolation, b_server=NET4):
    """Host B's packets among packets 300..699 that left: both hosts are
    backlogged then (B has sent at most 350 of its 400 by packet 699, A
    at most 622 of 800), every frame has been read in (the pcap port
    reads them in a few milliseconds; 300 packets leave in 240 ms), and
    the first rounds, where every flow still had its first quantum as a
    new flow, are long past. An earlier window (100..499) depended on how
    far the reading had got when sending began, and failed on a slow
    (sanitizer) build or a loaded machine."""
    r = run([_hosts_input(b_server), []], CFG_ISO % isolation)
    h.assert_clean_exit(r)
    assert len(r.outs[1]) == 1200, len(r.outs[1])
    return sum(1 for f in r.outs[1][300:700] if Ether(f)[IP].src == HOST_B)


def test_dual_srchost_gives_a_host_with_eight_flows_and_a_host_with_one_equal_shares():
    # Each host gets half: DRR++ refills each of A's bulk flows with an
    # eighth of the quantum.
    b = _host_b_share("dual-srchost")
    assert 198 <= b <= 202, "host B sent %d of packets 300..699" % b


def test_flow_fairness_gives_a_host_with_eight_flows_eight_ninths():
    b = _host_b_share("flows")
    assert 42 <= b <= 47, "host B sent %d of packets 300..699" % b


def test_triple_isolate_gives_each_host_half_when_they_use_different_servers():
    # The default mode: A's 8 flows to one server, B's flow to another.
    b = _host_b_share("triple-isolate", b_server="198.19.0.2")
    assert 198 <= b <= 202, "host B sent %d of packets 300..699" % b


def test_triple_isolate_shares_per_flow_when_every_flow_goes_to_one_server():
    # CAKE's rule: the busier of a flow's two hosts sets its share, and the
    # one server has all 9 bulk flows.
    b = _host_b_share("triple-isolate")
    assert 42 <= b <= 47, "host B sent %d of packets 300..699" % b


# CoDel is kept out of the way (target 1 s; everything leaves in < 1 s),
# so every missing ACK is the filter's doing.
CFG_ACKF = ("[aqm]\nports = 0\nqdisc = fq_codel\ndefault = pipe\n"
            "rate_down = 10mbit\nrate_up = 1mbit\ntarget = 1s\ninterval = 3s\n"
            "ack_filter = %s\nblue = off\n")


def ack4(ack, tsval, sport=40001, sack=()):
    """A pure ACK of a download flow, subscriber -> internet, as Linux
    sends it (NOP NOP timestamps, then NOP NOP SACK blocks if any)."""
    opts = [("NOP", None), ("NOP", None), ("Timestamp", (tsval, 77))]
    if sack:
        opts += [("NOP", None), ("NOP", None), ("SAck", tuple(x for b in sack for x in b))]
    return (Ether(src=C_MAC, dst=S_MAC) / IP(src=SUB4, dst=NET4) /
            TCP(sport=sport, dport=443, flags="A", seq=1, ack=ack, window=500, options=opts))


def _ackf_input():
    """A bulk upload interleaved with two download flows' ACKs, all at
    once, so that a 1 Mbit/s upstream queues them: flow 40001 acks 1448
    more bytes each time, flow 40002 sends duplicate ACKs (same ACK, no
    SACK), which a sender may count and the filter must keep."""
    frames, acks, dups = [], [], []
    for i in range(150):
        frames.append(up4(sport=41000, proto="tcp", size=500, seq=i))
        for k in range(2):
            a = ack4(1 + 1448 * (2 * i + k + 1), 1000 + 2 * i + k)
            frames.append(a)
            acks.append(bytes(a))
        if i % 3 == 0:
            d = ack4(1, 1000 + i, sport=40002)
            frames.append(d)
            dups.append(bytes(d))
    return frames, acks, dups


def _flow(out, sport):
    return [f for f in out if TCP in Ether(f) and Ether(f)[TCP].sport == sport]


def _assert_thinned(out, frames, acks, dups, filtered):
    """The ACKs of 40001 that were kept leave byte for byte as they came, in
    order, the newest one included, and exactly the filtered ones are
    missing; the duplicate ACKs of 40002 (never replaced) and the data of
    41000 all leave, unchanged and in order."""
    got = _flow(out, 40001)
    pos = [acks.index(f) for f in got]
    assert pos == sorted(pos) and len(set(pos)) == len(pos), "reordered or duplicated"
    assert pos[-1] == len(acks) - 1, "the newest ACK was dropped"
    assert len(got) + filtered == len(acks), (len(got), filtered, len(acks))
    h.assert_same(_flow(out, 40002), dups, "duplicate ACKs")
    h.assert_same(_flow(out, 41000), [bytes(f) for f in frames if TCP in f and f[TCP].sport == 41000],
                  "bulk data")


def test_ack_filter_up_removes_only_superseded_acks_and_keeps_the_newest():
    frames, acks, dups = _ackf_input()
    r = run([frames, []], CFG_ACKF % "up")
    h.assert_clean_exit(r)
    out = r.outs[1]
    filtered = r.aqm("up", "ack_filtered")
    assert r.drops("up") == 0, "CoDel dropped: the test cannot judge\n" + r.stdout
    assert filtered > 0, "nothing filtered:\n" + r.stdout
    assert r.aqm("down", "ack_filtered") == 0
    assert len(out) + filtered == len(frames), r.stdout
    _assert_thinned(out, frames, acks, dups, filtered)


def test_ack_filter_off_or_down_passes_every_upstream_ack():
    frames, acks, dups = _ackf_input()
    for mode in ("off", "down"):
        r = run([frames, []], CFG_ACKF % mode)
        h.assert_clean_exit(r)
        assert r.drops("up") == 0, "CoDel dropped: the test cannot judge\n" + r.stdout
        assert r.aqm("up", "ack_filtered") == 0
        h.assert_same(_flow(r.outs[1], 40001), acks, "ACKs with ack_filter = " + mode)
        assert len(r.outs[1]) == len(frames)


def test_ack_hold_keeps_every_flows_order_and_accounts_for_every_ack():
    # With the hold, ACKs that arrive while the upstream is backlogged
    # wait outside its queue, and newer ones replace them. net_pcap hands
    # over the whole file at once, so the filter alone already leaves one
    # ACK of 40001 here (the unit tests measure the thinning on a clock):
    # this checks the hold in the running stage, its counters, the drain
    # at exit and each flow's order.
    frames, acks, dups = _ackf_input()
    r = run([frames, []], CFG_ACKF % "up" + "ack_hold = 50ms\n")
    h.assert_clean_exit(r)
    out = r.outs[1]
    filtered, held = r.aqm("up", "ack_filtered"), r.aqm("up", "ack_held")
    assert r.drops("up") == 0, "CoDel dropped: the test cannot judge\n" + r.stdout
    assert held > 0 and filtered > 0, r.stdout
    assert r.aqm("up", "held_pkts") == 0 and r.aqm("up", "backlog_pkts") == 0, r.stdout
    assert r.aqm("down", "ack_held") == 0
    assert len(out) + filtered == len(frames), r.stdout
    assert r.aqm("up", "sent") == len(out), r.stdout
    _assert_thinned(out, frames, acks, dups, filtered)


def test_ack_filter_keeps_an_ack_whose_dsack_lies_above_its_ack_number():
    # RFC 2883 s. 4: a duplicate above the cumulative ACK is reported as a
    # first SACK block inside the second. The next ACK of the flow acks
    # past both blocks, so only the D-SACK rule keeps it; it must leave
    # unchanged, with and without the hold.
    frames, acks, dups = _ackf_input()
    i = next(k for k, a in enumerate(acks) if k > 40)
    base = Ether(acks[i])[TCP].ack
    d = ack4(base, 1000 + i, sack=[(base + 1000, base + 1448), (base + 500, base + 1448)])
    frames = [d if bytes(f) == acks[i] else f for f in frames]
    acks[i] = bytes(d)
    for extra in ("", "ack_hold = 50ms\n"):
        r = run([frames, []], CFG_ACKF % "up" + extra)
        h.assert_clean_exit(r)
        out = r.outs[1]
        filtered = r.aqm("up", "ack_filtered")
        assert r.drops("up") == 0, "CoDel dropped: the test cannot judge\n" + r.stdout
        assert filtered > 0, "nothing filtered:\n" + r.stdout
        assert bytes(d) in _flow(out, 40001), "the D-SACK was filtered (%s)" % (extra or "no hold")
        assert len(out) + filtered == len(frames), r.stdout
        _assert_thinned(out, frames, acks, dups, filtered)


SUBS_CSV = "prefix,down,up\n198.18.0.0/24,2mbit,1mbit\n2001:db8:1::/48,2mbit,1mbit\n"


def _subs_cfg(default):
    return ("[aqm]\nsubscribers = subs.csv\ndefault = %s\nrate_down = 5mbit\n"
            "rate_up = 5mbit\n" % default)


def test_unknown_addresses_pass_unshaped_when_default_is_pass():
    known = [up4(seq=i, size=200, tos=0x02) for i in range(50)]
    unknown = [up4(src="198.18.9.9", seq=i, size=200) for i in range(70)]
    down = [down4(seq=i, size=200) for i in range(30)]
    r = run([known + unknown, down], _subs_cfg("pass"), files={"subs.csv": SUBS_CSV})
    h.assert_clean_exit(r)
    assert r.aqm("up", "enqueued") == 50 and r.aqm("up", "passed") == 70, r.stdout
    # Downstream is classified by destination: the subscriber's pipe.
    assert r.aqm("down", "enqueued") == 30 and r.aqm("down", "passed") == 0, r.stdout
    assert len(r.outs[1]) == 120 and len(r.outs[0]) == 30
    # Unknown traffic was not held behind the subscriber's 1 Mbit/s queue.
    pos = [i for i, f in enumerate(r.outs[1]) if IP(f[14:]).src != SUB4]
    assert max(pos) < 80, "unknown packets left at %r" % pos


def test_unknown_addresses_go_to_the_default_pipe_when_default_is_pipe():
    known = [up4(seq=i, size=200, tos=0x02) for i in range(50)]
    unknown = [up4(src="198.18.9.9", seq=i, size=200, tos=0x02) for i in range(70)]
    r = run([known + unknown, []], _subs_cfg("pipe"), files={"subs.csv": SUBS_CSV})
    h.assert_clean_exit(r)
    assert r.aqm("up", "enqueued") == 120 and r.aqm("up", "passed") == 0, r.stdout
    assert len(r.outs[1]) == 120
    assert re.search(r"aqm_control subscribers=2 ", r.stdout), r.stdout


def test_the_example_subscriber_config_loads_its_csv_relative_to_itself():
    r = h.run([[up4(src="198.18.1.5", seq=1)], []], config=None,
              extra=["-c", os.path.join(EXAMPLES, "subscribers.ini")])
    h.assert_clean_exit(r)
    assert r.counter("aqm dir=up", "enqueued") == 1
    assert r.counter("aqm_control", "subscribers") == 4


def test_the_fifo_example_tail_drops_and_never_marks():
    frames = [up4(sport=40000 + i % 4, seq=i, tos=0x02) for i in range(800)]
    cfg = open(os.path.join(EXAMPLES, "fifo-10mbit.ini")).read()
    r = run([frames, []], cfg)
    h.assert_clean_exit(r)
    # 800 kB fits in a 1 s FIFO (1.25 MB): all out, each waiting long.
    assert len(r.outs[1]) == 800 and r.aqm("up", "ce_marked") == 0
    assert r.aqm("up", "p99_us") > 300000, r.stdout


def test_a_reload_applies_rates_and_refuses_a_boot_only_key_by_name():
    """SIGHUP: a file that changes quantum (boot only) is refused, naming
    the line and the key, and nothing changes; one that changes rate_down
    and spells out a default (profile = none) is applied."""
    import signal
    tmp = tempfile.mkdtemp(prefix="sluice-reload-")
    prefix = "aqmreload%d" % os.getpid()
    path = os.path.join(tmp, "aqm.ini")
    base = "[aqm]\ndefault = pipe\nrate_down = 10mbit\nrate_up = 10mbit\n"
    try:
        with open(path, "w") as f:
            f.write(base)
        # Log lines go to stderr (one stream with stdout here), at info:
        # only the DPDK libraries are capped at warning.
        args = [h.SLUICE, "--no-huge", "-m", "512", "--no-pci", "-l", "0,1",
                "--file-prefix", prefix, "--log-level=lib.*:warning",
                "--vdev", "net_null0", "--vdev", "net_null1", "--", "-c", path]
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL)
        o = h.Output(p)
        o.wait_for(" worker(s), 1 port pair(s)", timeout=30)  # booted: SIGHUP reloads
        for n, text in enumerate((base + "quantum = 3000\n",
                                  base.replace("rate_down = 10mbit", "rate_down = 20mbit") +
                                  "profile = none\n"), 1):
            with open(path, "w") as f:
                f.write(text)
            p.send_signal(signal.SIGHUP)
            o.wait_for("sluice: aqm: reload", count=n, timeout=30)
        p.send_signal(signal.SIGTERM)
        out = o.finish(timeout=30)
        err = ""
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(h.eal_runtime_dir(prefix), ignore_errors=True)
    r = h.Run(p.returncode, out, err, [])
    h.assert_clean_exit(r)
    assert "reload rejected, nothing changed: %s:5: [aqm] quantum: cannot change at run time" % path in out, out
    assert re.search(r"reloaded .*default rates down=20000000 up=10000000", out), out
    assert r.counter("aqm_control", "reloads") == 1, out
    assert r.counter("aqm_control", "reload_errors") == 1, out


def test_two_workers_hand_packets_to_the_owner_and_account_for_every_one():
    # net_null ports with a queue per worker flood both workers. The
    # default pipe belongs to one of them, so the other hands every packet
    # over its ring (and drops, counted, when that ring is full). At exit,
    # every packet received is sent or counted as dropped.
    import signal
    import time
    prefix = "aqmnull%d" % os.getpid()
    args = [h.SLUICE, "--no-huge", "-m", "512", "--no-pci", "-l", "0,1",
            "--file-prefix", prefix, "--log-level=lib.*:warning",
            "--vdev", "net_null0", "--vdev", "net_null1", "--", "-c",
            os.path.join(EXAMPLES, "fq_codel-10mbit.ini")]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, stdin=subprocess.DEVNULL)
    # SIGTERM only once sluice says it runs (its handlers are installed
    # by then): a fixed sleep raced start-up on a loaded machine.
    head = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = p.stderr.readline()
        if not line:
            break
        head.append(line)
        if re.search(r"^sluice \S+ .*worker\(s\)", line):
            break
    time.sleep(2.5)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=30)
    err = "".join(head) + err
    shutil.rmtree(h.eal_runtime_dir(prefix), ignore_errors=True)
    r = h.Run(p.returncode, out, err, [])
    h.assert_clean_exit(r)
    rx = r.counter("totals", "rx")
    tx = r.counter("totals", "tx") + r.counter("totals", "tx_dropped")
    dropped = sum(r.counter("aqm dir=%s" % d, k) for d in ("up", "down")
                  for k in ("drop_codel", "drop_overflow", "drop_memory", "drop_blue", "drop_ecn",
                            "handoff_drops"))
    assert rx > 10000, out
    assert rx == tx + dropped, "rx %d != tx %d + aqm drops %d\n%s" % (rx, tx, dropped, out)
    handed = sum(r.counter("aqm dir=%s" % d, "handoffs") for d in ("up", "down"))
    taken = sum(r.counter("aqm dir=%s" % d, "handoff_in") for d in ("up", "down"))
    assert handed > 0 and taken == handed, out


# RSS's Toeplitz hash as the bench's traffic generator computes it, in
# Python, apart from sluice's lib/pkt pkt_rss_hash().
sys.path.insert(0, os.path.join(REPO, "perf"))
from aqm_traffic import toeplitz  # noqa: E402

MS_RSS_KEY = bytes.fromhex("6d5a56da255b0ec24167253d43a38fb0d0ca2bcb"
                           "ae7b30b477cb2da38030f20c6a42b73bbeac01fa")
# The published IPv4-only hash of 66.9.149.187 -> 161.142.100.80.
assert toeplitz(MS_RSS_KEY, bytes((66, 9, 149, 187, 161, 142, 100, 80))) == 0x323E8FC2
SLUICE_RSS_KEY = bytes([0x6D, 0x5A] * 26)  # app/port.c


def steer_queue(addr, queues):
    """The rx queue a port steering by subscriber gives an address
    ([sluice] rss = subscriber): hash mod 64 through the table sluice
    writes, then mod the queues. IPv4: the whole address; IPv6: its /64
    (RTE_ETH_RSS_L3_PRE64)."""
    if ":" in addr:
        return (toeplitz(SLUICE_RSS_KEY, socket.inet_pton(socket.AF_INET6, addr)[:8]) % 64) % queues
    return (toeplitz(SLUICE_RSS_KEY, bytes(int(b) for b in addr.split("."))) % 64) % queues


def test_rss_by_subscriber_keeps_every_packet_on_the_worker_that_owns_its_pipes():
    """Two workers, 48 IPv4 subscribers and 16 IPv6 /64s, traffic both ways
    split into the two rx queues of each port as a NIC steering by
    subscriber would split it.
    With [sluice] rss = subscriber no packet crosses a hand-off ring and
    every one comes out in its flow's order; with rss = flow (pipes owned
    by a hash of their id) the same split hands a good share over."""
    subs = ["198.18.1.%d" % i for i in range(1, 49)]
    # IPv6 subscribers by /64: each of a phone's addresses (the last 64
    # bits differ) reaches the queue of its /64.
    subs6 = ["2001:db8:0:%x::" % i for i in range(1, 17)]
    csv = "".join("%s/32,100mbit,100mbit\n" % a for a in subs)
    csv += "".join("%s/64,100mbit,100mbit\n" % a for a in subs6)
    ups, downs = [[], []], [[], []]
    for k in range(6):
        for i, a in enumerate(subs):
            q = steer_queue(a, 2)
            ups[q].append(up4(src=a, sport=40000 + i, size=200, seq=k))
            downs[q].append(down4(dst=a, dport=40000 + i, size=200, seq=k))
        for i, p in enumerate(subs6):
            a = p + "%x:%x" % (k + 1, 7 * i + 3)  # a new address each round
            q = steer_queue(a, 2)
            ups[q].append(Ether(src=C_MAC, dst=S_MAC) / IPv6(src=a, dst=NET6) /
                          UDP(sport=41000 + i, dport=5001) / Raw(struct.pack("!I", k) + b"v" * 196))
            downs[q].append(Ether(src=S_MAC, dst=C_MAC) / IPv6(src=NET6, dst=a) /
                            UDP(sport=443, dport=41000 + i) / Raw(struct.pack("!I", k) + b"w" * 196))
    assert min(len(ups[0]), len(ups[1])) > len(subs)  # both workers busy
    total = 2 * 6 * (len(subs) + len(subs6))
    res = {}
    for mode in ("subscriber", "flow"):
        cfg = ("[sluice]\nrss = %s\n[aqm]\nports = 0\nqdisc = fq_codel\n"
               "default = pass\nsubscribers = subs.csv\n" % mode)
        r = run([ups, downs], cfg, lcores="0,1", queues=2, files={"subs.csv": csv})
        h.assert_clean_exit(r)
        res[mode] = r
        out = len(r.outs[0]) + len(r.outs[1])
        assert out + r.drops("up") + r.drops("down") == total, r.stdout
        assert r.drops("up") + r.drops("down") == 0, r.stdout
        last = {}
        for f in r.outs[0] + r.outs[1]:
            key, seq = seq_of(f)
            assert seq > last.get(key, -1), "flow %r: %d after %d" % (key, seq, last[key])
            last[key] = seq
    st = res["subscriber"]
    assert "rss = subscriber takes its rx queues as split by subscriber" in st.stderr, st.stderr
    for d in ("up", "down"):
        assert st.aqm(d, "handoffs") + st.aqm(d, "handoff_drops") == 0, st.stdout
    fl = res["flow"]
    handed = sum(fl.aqm(d, "handoffs") for d in ("up", "down"))
    assert handed > total // 8, fl.stdout


def test_bad_aqm_values_exit_2_naming_file_line_and_key():
    h.assert_config_error("[aqm]\ndefault = pipe\nrate_down = fast\n", 3, "rate_down", "not a rate")
    h.assert_config_error("[aqm]\nflows = 1000\n", 2, "flows", "power of two")
    h.assert_config_error("[aqm]\nqdisc = red\n", 2, "qdisc", "fq_codel or fifo")
    h.assert_config_error("[aqm]\n\ntarget = 5ms\ninterval = 2ms\n", 3, "target", "below interval")
    h.assert_config_error("[aqm]\nrate_up = 10mbit\nbogus = 1\n", 3, "bogus", "unknown key")
    h.assert_config_error("[aqm]\nports = 0,x\n", 2, "ports", "port pair index")
    h.assert_config_error("[aqm]\nprofile = carrier-pigeon\n", 2, "profile", "unknown profile")
    h.assert_config_error("[aqm]\nack_filter = yes\n", 2, "ack_filter", "off, up, down or both")
    h.assert_config_error("[aqm]\nack_hold = 20ms\n", 2, "ack_hold", "works with the ACK filter")
    h.assert_config_error("[aqm]\nack_filter = up\nack_hold = 5s\n", 3, "ack_hold", "out of range")
    h.assert_config_error("[aqm]\nqdisc = fifo\nfifo_limit = 1s\ndefault = pipe\nrate_down = 1mbit\n",
         3, "fifo_limit", "needs rate_down and rate_up")


def test_bad_subscriber_csv_exits_2_naming_the_config_line_and_the_csv_line():
    h.assert_config_error("[aqm]\nsubscribers = s.csv\n", 2, "subscribers", r"s\.csv:3: bad down rate",
         files={"s.csv": "prefix,down,up\n198.18.0.0/24,1mbit,1mbit\n198.18.1.0/24,lots,1mbit\n"})
    h.assert_config_error("[aqm]\nmax_subscribers = 1\nsubscribers = s.csv\n", 3, "subscribers", "max_subscribers",
         files={"s.csv": "198.18.0.0/24,1mbit,1mbit\n198.18.1.0/24,1mbit,1mbit\n"})
    h.assert_config_error("[aqm]\nsubscribers = missing.csv\n", 2, "subscribers", "No such file")


# Many subscribers, each with a fast pipe: most packets find their pipe
# idle and due, and the bypass sends them on without queueing them.
CFG_BYPASS = ("[aqm]\nports = 0\nqdisc = fq_codel\ndefault = pass\n"
              "subscribers = subs.csv\nbypass = %s\n")


def _bypass_input():
    subs = "".join("198.18.%d.%d/32,10gbit,%s\n" % (1 + i // 200, i % 200 + 1,
                                                    "10gbit" if i % 4 else "2mbit")
                   for i in range(400))
    frames = []
    for i in range(3000):
        k = (i * 7919) % 400  # scatter subscribers over each rx burst
        src = "198.18.%d.%d" % (1 + k // 200, k % 200 + 1)
        frames.append(up4(src=src, sport=40000 + i % 3, size=200 + i % 1000, seq=i))
    return frames, subs


def test_bypass_sends_what_queueing_sends_in_each_flows_order():
    """bypass = on and off give the same frames, each flow in its order,
    and the same counts; on, most go by the bypass (the 2 Mbit/s pipes
    queue what their shaper holds back)."""
    frames, subs = _bypass_input()
    res = {}
    for mode in ("on", "off"):
        r = run([frames, []], CFG_BYPASS % mode, files={"subs.csv": subs})
        h.assert_clean_exit(r)
        res[mode] = r
    on, off = res["on"], res["off"]
    assert sorted(on.outs[1]) == sorted(off.outs[1])
    for r in (on, off):
        last = {}
        for f in r.outs[1]:
            eth = Ether(f)
            k = (eth[IP].src, eth[UDP].sport)
            s = struct.unpack("!I", bytes(eth[UDP].payload)[:4])[0]
            assert s > last.get(k, -1), "flow %r: %d after %d" % (k, s, last[k])
            last[k] = s
    for key in ("enqueued", "sent", "drop_codel", "drop_overflow", "drop_memory",
                "drop_blue", "drop_ecn"):
        assert on.aqm("up", key) == off.aqm("up", key), key
    assert off.aqm("up", "bypassed") == 0
    assert on.aqm("up", "bypassed") > on.aqm("up", "sent") // 2, on.stdout
    assert on.aqm("up", "bypassed") < on.aqm("up", "sent"), on.stdout


def test_two_workers_with_burst_512_hand_a_flood_toward_one_subscriber_to_its_owner():
    """[sluice] burst = 512 and two workers: one rx burst carries 600
    frames toward one subscriber. Whichever worker does not own the
    subscriber's pipe hands all of them (far more than one 64-packet
    batch) over its ring; every frame comes out or is counted as dropped."""
    cfg = ("[sluice]\nburst = 512\n"
           "[aqm]\nports = 0\nqdisc = fq_codel\ndefault = pass\n"
           "subscribers = subs.csv\n")
    subs = "%s/32,100mbit,100mbit\n" % SUB4
    flood = [[down4(sport=443 + q, dport=40000 + i % 8, size=60, seq=i)
              for i in range(600)] for q in range(2)]
    r = run([[[], []], flood], cfg, lcores="0,1", queues=2,
            files={"subs.csv": subs})
    h.assert_clean_exit(r)
    handed = r.aqm("down", "handoffs") + r.aqm("down", "handoff_drops")
    assert handed == 600, "handed over %d, want 600\n%s" % (handed, r.stdout)
    assert r.aqm("down", "handoff_in") == r.aqm("down", "handoffs"), r.stdout
    assert len(r.outs[0]) + r.drops("down") == 1200, \
        "out %d + drops %d != 1200\n%s" % (len(r.outs[0]), r.drops("down"), r.stdout)
    # Each flow keeps its order through the hand-off.
    last = {}
    for f in r.outs[0]:
        k, s = seq_of(f)
        assert s > last.get(k, -1), "flow %r: %d after %d" % (k, s, last[k])
        last[k] = s
