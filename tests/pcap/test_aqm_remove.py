# SPDX-License-Identifier: BSD-3-Clause
"""Removing a subscriber at run time (issue 18 item 5): a SIGHUP reload
of a CSV without subscriber A, while A and B both have a long queue.

B's packets must all leave, in order, still shaped; A's queued packets
leave at once, in order, unshaped, and none is lost. FIFO pipes, so no
AQM drop muddies the exact counts. Addresses only from 198.18.0.0/15.
"""
import os
import signal
import struct
import subprocess
import time

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

import harness as h

A, B, SERVER = "198.18.1.1", "198.18.1.2", "198.18.2.1"
N = 1500  # per subscriber: 1500 x 200 B at 500 kbit/s is 4.8 s of queue
CFG = ("[aqm]\nports = 0\nqdisc = fifo\nfifo_limit = 4mb\ndefault = pass\n"
       "subscribers = subs.csv\nsubscriber_limit = 4000\nmax_queued = 8000\n"
       "bypass = off\n")


def _frame(dst, seq):
    return (Ether(src="02:00:00:00:00:02", dst="02:00:00:00:00:01") /
            IP(src=SERVER, dst=dst) / UDP(sport=5001, dport=6000) /
            Raw(struct.pack("!I", seq) + b"\0" * 154))


def _seqs(frames, dst):
    out = []
    for i, f in enumerate(frames):
        p = Ether(f)
        if IP in p and p[IP].dst == dst:
            out.append((i, struct.unpack("!I", bytes(p[Raw])[:4])[0]))
    return out


def test_a_subscriber_removed_by_a_reload_under_traffic_loses_nothing_and_leaves_the_others_shaped():
    with h.Scratch("aqmrm") as s:
        tmp, prefix = s.tmp, s.prefix
        csv = s.path("subs.csv")
        ini = s.path("test.ini")
        with open(csv, "w") as f:
            f.write("%s/32,500kbit,500kbit\n%s/32,500kbit,500kbit\n" % (A, B))
        with open(ini, "w") as f:
            f.write(CFG)
        frames = []
        for i in range(N):
            frames += [_frame(A, i), _frame(B, i)]
        h.write_pcap(os.path.join(tmp, "in0.pcap"), [])
        h.write_pcap(os.path.join(tmp, "in1.pcap"), frames)
        args = [h.SLUICE, "--no-huge", "-m", "512", "--no-pci", "-l", h.LCORE,
                "--file-prefix", prefix, "--log-level=lib.*:warning"]
        for port in range(2):
            args += ["--vdev", "net_pcap%d,rx_pcap=%s,tx_pcap=%s" %
                     (port, os.path.join(tmp, "in%d.pcap" % port),
                      os.path.join(tmp, "out%d.pcap" % port))]
        args += ["--", "--idle-exit", "1000", "-c", ini]
        p = s.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL)

        o = h.Output(p)
        o.wait_for(" worker(s), 1 port pair(s)")
        # Both queues fill at once (the pcap is read in milliseconds);
        # a second later each still holds about 3.8 s of packets.
        time.sleep(1.0)
        with open(csv + ".new", "w") as f:
            f.write("%s/32,500kbit,500kbit\n" % B)
        os.rename(csv + ".new", csv)
        p.send_signal(signal.SIGHUP)
        o.wait_for("sluice: aqm: reloaded")
        out = o.finish(timeout=120)
        outs = [h.read_pcap(os.path.join(tmp, "out%d.pcap" % i)) for i in range(2)]
    r = h.Run(p.returncode, out, "", outs)
    h.assert_clean_exit(r)
    assert "(0 new, 0 changed, 1 removed)" in out, out[-3000:]
    a, b = _seqs(outs[0], A), _seqs(outs[0], B)
    # Every packet of each, in order: nothing lost, nothing reordered.
    assert [s for _, s in b] == list(range(N)), "B: %d of %d" % (len(b), N)
    assert [s for _, s in a] == list(range(N)), "A: %d of %d" % (len(a), N)
    moved = r.counter("aqm dir=down", "removed_moved")
    assert 0 < moved < N, out[-3000:]
    assert r.counter("aqm dir=down", "removed_sent") == moved
    assert r.counter("aqm dir=down", "removed_pipes") == 1
    for why in ("drop_codel", "drop_overflow", "drop_memory", "drop_blue", "drop_ecn"):
        assert r.counter("aqm dir=down", why) == 0, (why, out[-3000:])
    # A's queue left at once, as one run, ahead of B's later packets...
    tail = [i for i, _ in a[N - moved:]]
    assert tail == list(range(tail[0], tail[0] + moved)), "A's moved packets interleaved"
    # ...and B stayed shaped: most of its packets left after A's burst.
    assert sum(1 for i, _ in b if i > tail[-1]) > moved // 2
    assert r.counter("aqm_control", "subscribers") == 1
    assert r.counter("aqm_control", "removed") == 1
    assert r.counter("aqm_control", "reloads") == 1
