#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Seeds for fuzz_mptcp_mapping: one file per scenario in corpus/.

A seed is a configuration byte and 16-byte records (see the layout at the
top of fuzz_mptcp_mapping.c)."""
import os
import struct

A, a, M, m, F = 0x01, 0x02, 0x04, 0x08, 0x10
DSS64 = A | a | M | m


def rec(op, dss=DSS64, start=0, maplen=0, paylen=0, dseq=0, ack=0, clock=1,
        aux=b"\0\0\0\0"):
    return struct.pack(">BBhHHhbB4s", op, dss, start, maplen, paylen, dseq,
                       ack, clock, aux)


def data(n, sub=0, **kw):
    kw.setdefault("maplen", n)
    return rec(0 | (0x08 if sub else 0), paylen=n, **kw)


def join(shift=0, backup=0, bad=0):
    aux = struct.pack(">HBB", 1000 + shift, backup | (4 if bad else 0), 1)
    return rec(3, aux=aux, clock=2) + rec(3, aux=aux, clock=2)


SEEDS = {
    # in order on the first subflow, one mapping per segment, then a
    # DATA_FIN on a pure ACK and the server closing
    "in_order": b"\0" + data(1000) + data(1000) + data(500)
    + rec(2, dss=DSS64 | F, start=0, maplen=1)
    + rec(6, aux=b"\x01\0\0\0"),
    # one mapping over three segments, announced on each
    "mapping_repeated": b"\0" + data(1000, maplen=3000)
    + data(1000, start=-1000, maplen=3000) + data(1000, start=-2000, maplen=3000),
    # a segment spanning two mappings carries the second
    "spanning": b"\0" + data(1000, maplen=1400) + data(1000, start=400, maplen=2000),
    # the second segment first (subflow reordering)
    "out_of_order": b"\0" + data(1000, dseq=1000) + data(1000, dseq=-2000),
    # 32-bit DSNs and DATA_ACKs
    "dsn32": b"\x02" + data(1000, dss=A | M) + data(1000, dss=A | M),
    # no DSS at all: fallback
    "no_dss": b"\0" + data(1000, dss=0x20) + data(1000, dss=0x20),
    # infinite mapping
    "infinite": b"\0" + data(1000) + data(1000, dss=DSS64 | 0x80),
    # a second subflow joins and carries the stream's next bytes
    "join_data": b"\0" + data(1000) + join(shift=1000) + data(1000, sub=1),
    # the same bytes on both subflows
    "join_duplicate": b"\0" + data(1000) + join(shift=0) + data(1000, sub=1),
    # the join's bytes 500..1499 held out of order, then the first
    # subflow's 0..999: the held segment's front is delivered already and
    # must be cut (no seed reached that cut before)
    "join_overlap_in_part": b"\0" + join(shift=500) + data(1000, sub=1) + data(1000),
    # a join with a wrong HMAC
    "join_bad_hmac": b"\0" + data(1000) + join(bad=1) + data(1000, sub=1),
    # a backup join, REMOVE_ADDR of it, MP_PRIO
    "remove_addr": b"\0" + join(backup=1) + rec(4, aux=b"\x01\x01\0\0")
    + rec(4, aux=b"\x02\x00\0\0") + data(1000),
    # the server sends, the client acknowledges at the data level
    "server_sends": b"\0" + rec(6, aux=b"\0\xff\0\0") + rec(2, dss=A | a)
    + rec(6, aux=b"\0\xff\0\0") + rec(2, dss=A | a, clock=50),
    # the server sends over two subflows, one then resets
    "reset_reinject": b"\0" + join() + rec(6, aux=b"\0\xff\0\0")
    + rec(6, aux=b"\0\xff\0\0") + rec(5 | 0x08) + rec(2, dss=A | a, clock=250),
    # MP_FASTCLOSE with the right key
    "fastclose": b"\0" + data(500) + rec(4, aux=b"\x04\x01\0\0"),
    # MP_CAPABLE with data (first data before our DSS was seen)
    "mpc_data": b"\0" + rec(4, maplen=800, paylen=800, aux=b"\x00\x81\0\0"),
    # DSS checksums (configuration 0x04): a mapping over two segments,
    # DATA_FIN, the server closing; the server sending
    "csum_in_order": b"\x04" + data(1000, maplen=2000)
    + data(1000, start=-1000, maplen=2000)
    + rec(2, dss=DSS64 | F, start=0, maplen=1) + rec(6, aux=b"\x01\0\0\0"),
    "csum_server_sends": b"\x04" + rec(6, aux=b"\0\xff\0\0") + rec(2, dss=A | a)
    + rec(6, aux=b"\0\xff\0\0") + rec(2, dss=A | a, clock=50),
    # a spoiled checksum on the only subflow (MP_FAIL), then an infinite
    # mapping; and on a second subflow (reset, the bytes again on the first)
    "csum_bad_only_subflow": b"\x04" + data(1000) + data(1000, aux=b"\0\0\0\x01")
    + data(1000, dss=DSS64 | 0x80),
    "csum_bad_second_subflow": b"\x04" + data(1000) + join(shift=1000)
    + data(1000, sub=1, aux=b"\0\0\0\x01") + data(1000, start=0),
    # MP_CAPABLE with data and a checksum
    "csum_mpc_data": b"\x04" + rec(4, maplen=800, paylen=800, aux=b"\x00\x81\0\0"),
    # proxy shut down with data in flight
    "shutdown": b"\x01" + data(1000, dseq=2000) + rec(6, aux=b"\0\x40\0\0"),
    # two workers (configuration 0x08): the join lands on worker 1, which
    # hands it and its segments to the owner
    "two_workers_join_data": b"\x08" + data(1000) + join(shift=1000)
    + data(1000, sub=1) + data(1000, sub=1) + data(500),
    # the same with a reset memory (0x10): the client resets the handed
    # subflow, then a segment it sent before arrives
    "two_workers_reset_leftover": b"\x18" + data(1000) + join(shift=1000)
    + data(1000, sub=1) + rec(5 | 0x08) + data(1000, sub=1, dseq=-1000)
    + data(500),
    # the hand-over ring drained at one pump in 16 (0x20): it fills
    "two_workers_ring_full": b"\x28" + data(1000) + join(shift=1000)
    + b"".join(data(100, sub=1) for _ in range(12)) + data(500),
    # the client's segments in bursts (0x40): a mapping per segment, each
    # continuing the one before, read as runs; 64-bit DSNs and DATA_ACKs,
    # then 32-bit ones (0x02), then a mapping over three segments
    "runs_mapping_per_segment": b"\x40"
    + b"".join(data(1000, clock=0) for _ in range(12)) + data(1000, clock=5)
    + b"".join(data(1000, clock=0) for _ in range(6)) + data(1000, clock=50),
    "runs_dsn32": b"\x42"
    + b"".join(data(1000, dss=A | M, clock=0) for _ in range(12))
    + data(1000, dss=A | M, clock=50),
    "runs_mapping_repeated": b"\x40" + data(1000, maplen=3000, clock=0)
    + data(1000, start=-1000, maplen=3000, clock=0)
    + data(1000, start=-2000, maplen=3000, clock=50),
}

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
os.makedirs(here, exist_ok=True)
for name, blob in SEEDS.items():
    with open(os.path.join(here, name), "wb") as f:
        f.write(blob)
