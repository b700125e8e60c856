#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Traffic and subscriber table for `perf/bench.sh aqm`.

    aqm_traffic.py OUTDIR [--flows N] [--subscribers S] [--size B]
                          [--rate R] [--seed X] [--queues Q [--by owner|subscriber]]
                          [--dscp-mix] [--tcp [--segments K]]

Writes, deterministically (same arguments, same bytes):

OUTDIR/down.pcap     N downstream UDP/IPv4 frames of B bytes (without FCS),
                     one per flow, in a shuffled order so that consecutive
                     packets hit different subscribers. Flow f goes from
                     server 198.19.(f>>8 & 255).(f & 255), port 1024 + f % 50000,
                     to subscriber f % S on port 443. Replayed forever by
                     net_pcap (infinite_rx=1), this is N active flows spread
                     evenly over S subscribers, arriving on the internet-facing
                     port of the pair.
OUTDIR/subscribers.csv
                     sluice's subscriber table: subscriber i is
                     198.18.(i >> 8).(i & 255)/32 with rate R both ways.
                     Row i (after the header) is pipe i; sched_fwd reads the
                     same file, so both give a subscriber the same pipe.

With --dscp-mix, flow f carries DSCP 0, CS1, AF41 or EF (f % 4), so that
every tin of [aqm] diffserv = diffserv4 sees traffic (perf/bench.sh with
BENCH_AQM_DIFFSERV); without it every frame has DSCP 0.

With --queues Q (perf/bench.sh scale), the same frames also go into
OUTDIR/down-q0.pcap .. down-q<Q-1>.pcap, one per rx queue, as a NIC's RSS
would spread them: queue = symmetric Toeplitz hash (sluice's key, 0x6d5a
repeated) of the IPv4 addresses and UDP ports, modulo Q (the default
redirection table). With --by owner a subscriber's frames all go to the
queue of the worker that owns its pipe (app/handoff.h handoff_owner() of
the pipe id, row i + PIPE_ID_BASE), so none crosses a hand-off ring: the
baseline that shows what the hand-off costs. With --by subscriber they go
where a NIC steering by subscriber puts them ([sluice] rss = subscriber,
app/port.c): queue = (Toeplitz hash of the subscriber's address alone mod
64) mod Q, the queue whose worker sluice then gives the subscriber's
pipes.

With --tcp (perf/bench.sh aqm-prtt), the frames are TCP instead, the way
a bulk download looks to passive RTT (lib/prtt): down.pcap holds K
(--segments, 3) data segments of B bytes per flow from the server (NOP NOP
TS options, ACK flag), and OUTDIR/up.pcap the subscriber's K ACKs that
answer them (66 bytes, each echoing the TSval of its segment), one round
behind the segments. Replayed
forever, a static pcap would repeat its sequence numbers and TSvals, which
passive RTT rightly takes for resends and old ticks. So the K segments of a
flow step their sequence numbers and TSvals by 2^32 / K: every step is
forward in serial arithmetic (RFC 1982), the step from the last back to
the first too, and every segment the box sees is new data with a new
TSval. That is the costly case, and the common one at 10k flows: a flow
of 1 Mbit/s sends less than one segment per 1 ms TSval tick.

Pure Python (no scapy) so that it takes well under a second; the headers
are built by hand and the IPv4 checksum is computed. Check a file with
`tshark -r down.pcap -c 3 -V`.
"""
import argparse
import os
import random
import struct
import sys

DST_MAC = bytes.fromhex("020000000001")
SRC_MAC = bytes.fromhex("020000000002")


def ip_checksum(hdr):
    s = sum(struct.unpack("!%dH" % (len(hdr) // 2), hdr))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


RSS_KEY = bytes([0x6D, 0x5A] * 20)
PIPE_ID_BASE = 1  # pipe ids of the subscriber table start after id 0


def toeplitz(key, data):
    """The Toeplitz hash of data (RSS), 32 bits."""
    k = int.from_bytes(key, "big")
    klen = len(key) * 8
    h = 0
    for i, byte in enumerate(data):
        for b in range(8):
            if byte & (0x80 >> b):
                bit = i * 8 + b
                h ^= (k >> (klen - 32 - bit)) & 0xFFFFFFFF
    return h


def handoff_owner(key, workers):
    """app/handoff.h: a multiplicative hash of the key scaled to workers."""
    h = ((key + 1) * 0x9E3779B1) & 0xFFFFFFFF
    return (h * workers) >> 32


STEER_SPAN = 64  # app/port.h PORT_STEER_SPAN


def flow_queue(f, subs, queues, by):
    if by == "owner":
        return handoff_owner(f % subs + PIPE_ID_BASE, queues)
    if by == "subscriber":
        # A NIC steering by subscriber (sluice's [sluice] rss =
        # subscriber): the hash of the subscriber's address alone,
        # through the redirection table sluice writes.
        return (toeplitz(RSS_KEY, sub_addr(f % subs)) % STEER_SPAN) % queues
    src = bytes((198, 19, (f >> 8) & 255, f & 255))
    dst = sub_addr(f % subs)
    ports = struct.pack("!HH", 1024 + f % 50000, 443)
    return toeplitz(RSS_KEY, src + dst + ports) % queues


def sub_addr(i):
    return bytes((198, 18, (i >> 8) & 255, i & 255))


DSCP_MIX = (0, 8, 34, 46)  # Best Effort, CS1 (Bulk), AF41 (Video), EF (Voice)


def frame(f, subs, size, dscp_mix=False):
    src = bytes((198, 19, (f >> 8) & 255, f & 255))
    dst = sub_addr(f % subs)
    udp_len = size - 14 - 20
    tos = DSCP_MIX[f % 4] << 2 if dscp_mix else 0
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + udp_len, f & 0xFFFF, 0,
                     64, 17, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", ip_checksum(ip)) + ip[12:]
    # UDP checksum 0: "none" for IPv4, valid and cheap.
    udp = struct.pack("!HHHH", 1024 + f % 50000, 443, udp_len, 0)
    return DST_MAC + SRC_MAC + b"\x08\x00" + ip + udp + bytes(udp_len - 8)


def tcp_frames(f, subs, size, k):
    """Flow f's k data segments (down) and the k ACKs answering them (up)."""
    srv = bytes((198, 19, (f >> 8) & 255, f & 255))
    dst = sub_addr(f % subs)
    sport, dport = 1024 + f % 50000, 443
    step = (1 << 32) // k
    iss, irs = (f * 7919) & 0xFFFFFFFF, (f * 104729) & 0xFFFFFFFF
    down, up = [], []
    payload = size - 14 - 20 - 32
    for i in range(k):
        seq = (iss + i * step) & 0xFFFFFFFF
        tsv = (f * 31 + i * step) & 0xFFFFFFFF
        sub_tsv = (f * 17 + i * step) & 0xFFFFFFFF
        for src, dst_, sp, dp, sq, ak, tv, te, plen in (
                (srv, dst, sport, dport, seq, irs, tsv, sub_tsv, payload),
                (dst, srv, dport, sport, irs, (seq + payload) & 0xFFFFFFFF,
                 sub_tsv, tsv, 0)):
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 32 + plen,
                             (f + i) & 0xFFFF, 0, 64, 6, 0, src, dst_)
            ip = ip[:10] + struct.pack("!H", ip_checksum(ip)) + ip[12:]
            opts = b"\x01\x01\x08\x0a" + struct.pack("!II", tv, te)
            tcp = struct.pack("!HHIIBBHHH", sp, dp, sq, ak, 8 << 4, 0x10,
                              65535, 0, 0) + opts
            # The TCP checksum is left 0: nothing on this path checks it.
            fr = DST_MAC + SRC_MAC + b"\x08\x00" + ip + tcp + bytes(plen)
            (down if plen else up).append(fr)
    return down, up


def write_pcap(path, frames):
    with open(path, "wb") as out:
        # pcap global header: microsecond timestamps, Ethernet, snaplen 65535
        out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for n, fr in enumerate(frames):
            out.write(struct.pack("<IIII", n // 1000000, n % 1000000,
                                  len(fr), len(fr)))
            out.write(fr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--flows", type=int, default=10000)
    ap.add_argument("--subscribers", type=int, default=1000)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--rate", default="10gbit")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--queues", type=int, default=0)
    ap.add_argument("--by", choices=("rss", "owner", "subscriber"), default="rss")
    ap.add_argument("--dscp-mix", action="store_true")
    ap.add_argument("--tcp", action="store_true")
    ap.add_argument("--segments", type=int, default=3)
    a = ap.parse_args()
    if not 1 <= a.subscribers <= 65536 or a.flows < a.subscribers or a.flows > 65536:
        sys.exit("aqm_traffic: want 1 <= subscribers <= flows <= 65536")
    if not 60 <= a.size <= 1514:
        sys.exit("aqm_traffic: --size must be 60..1514")
    if a.tcp and (a.size < 67 or a.queues or not 2 <= a.segments <= 16):
        sys.exit("aqm_traffic: --tcp wants --size >= 67, 2..16 --segments, no --queues")
    os.makedirs(a.outdir, exist_ok=True)
    order = list(range(a.flows))
    random.Random(a.seed).shuffle(order)
    if a.tcp:
        # Round by round: segment i of every flow (shuffled), then i + 1.
        per = [tcp_frames(f, a.subscribers, a.size, a.segments) for f in range(a.flows)]
        write_pcap(os.path.join(a.outdir, "down.pcap"),
                   [per[f][0][i] for i in range(a.segments) for f in order])
        # The ACKs one round behind: replayed side by side with down.pcap,
        # the ACK of segment i - 1 comes by as segment i leaves.
        write_pcap(os.path.join(a.outdir, "up.pcap"),
                   [per[f][1][(i - 1) % a.segments]
                    for i in range(a.segments) for f in order])
        order = []  # down.pcap is written
    if not a.tcp:
        write_pcap(os.path.join(a.outdir, "down.pcap"),
                   [frame(f, a.subscribers, a.size, a.dscp_mix) for f in order])
    if a.queues > 0:
        outs = [open(os.path.join(a.outdir, "down-q%d.pcap" % q), "wb")
                for q in range(a.queues)]
        counts = [0] * a.queues
        for out in outs:
            out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for f in order:
            q = flow_queue(f, a.subscribers, a.queues, a.by)
            fr = frame(f, a.subscribers, a.size, a.dscp_mix)
            n = counts[q]
            counts[q] += 1
            outs[q].write(struct.pack("<IIII", n // 1000000, n % 1000000,
                                      len(fr), len(fr)))
            outs[q].write(fr)
        for out in outs:
            out.close()
        print("aqm_traffic: flows per queue (%s): %s" % (a.by, " ".join(map(str, counts))))
    with open(os.path.join(a.outdir, "subscribers.csv"), "w") as out:
        out.write("# perf/bench.sh aqm: %d subscribers, row i = pipe i\n"
                  % a.subscribers)
        out.write("prefix,down,up\n")
        for i in range(a.subscribers):
            out.write("%s/32,%s,%s\n" % (".".join(map(str, sub_addr(i))),
                                         a.rate, a.rate))
    return 0


if __name__ == "__main__":
    sys.exit(main())
