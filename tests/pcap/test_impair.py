# SPDX-License-Identifier: BSD-3-Clause
"""The impair stage through sluice on pcap ports: loss, bursty loss,
duplication, delay seen in the output timestamps, order, reordering, the
exit report, determinism, every mbuf back, and config errors."""
import math
import os

from scapy.all import IP, UDP, Raw
from scapy.utils import RawPcapReader

import frames
import harness as h

REPO = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _udp(i, up=True):
    """Frame number i, carried in the payload; up = subscriber -> internet."""
    src, dst = (frames.V4C, frames.V4S) if up else (frames.V4S, frames.V4C)
    e = frames.eth() if up else frames.eth(src=frames.S_MAC, dst=frames.C_MAC)
    return bytes(e / IP(src=src, dst=dst) / UDP(sport=4000, dport=5000) /
                 Raw(b"%08d" % i + b"." * 40))


def _num(frame):
    return int(frame[42:50])


class _Stamped(bytes):
    """A frame that remembers its pcap timestamp (seconds)."""
    ts = 0.0


def _read_with_ts(path):
    if not os.path.exists(path):
        return []
    out = []
    reader = RawPcapReader(path)
    # net_pcap writes nanosecond pcaps; scapy then puts ns in "usec".
    frac = 1e9 if getattr(reader, "nano", False) else 1e6
    for data, meta in reader:
        f = _Stamped(bytes(data))
        f.ts = meta.sec + meta.usec / frac
        out.append(f)
    reader.close()
    return out


def _run_ts(inputs, config, **kw):
    """h.run, with the output frames carrying their pcap timestamps."""
    saved = h.read_pcap
    h.read_pcap = _read_with_ts
    try:
        return h.run(inputs, config=config, **kw)
    finally:
        h.read_pcap = saved


def _line(r, direction, pair=0):
    return "impair dir=%s pair=%d" % (direction, pair)


def test_one_percent_loss_drops_about_one_percent_and_counts_each():
    n = 5000
    ins = [_udp(i) for i in range(n)]
    r = h.run([ins, []], config="[impair]\nloss = 1%\nlimit = 10000\n")
    h.assert_clean_exit(r)
    lost = r.counter(_line(r, "up"), "lost_random")
    assert r.counter(_line(r, "up"), "in") == n
    assert len(r.outs[1]) == n - lost == r.counter(_line(r, "up"), "out")
    sigma = math.sqrt(n * 0.01 * 0.99)
    assert abs(lost - n * 0.01) < 4 * sigma, lost
    # What survives is untouched and in order.
    nums = [_num(f) for f in r.outs[1]]
    assert nums == sorted(nums)
    assert all(f == ins[_num(f)] for f in r.outs[1])


def test_the_same_seed_loses_the_same_frames_and_another_seed_does_not():
    ins = [_udp(i) for i in range(3000)]
    cfg = "[impair]\nseed = %d\nloss = 5%%\nduplicate = 2%%\nlimit = 10000\n"
    a = h.run([ins, []], config=cfg % 7)
    b = h.run([ins, []], config=cfg % 7)
    c = h.run([ins, []], config=cfg % 8)
    for r in (a, b, c):
        h.assert_clean_exit(r)
    assert a.outs[1] == b.outs[1]
    assert a.outs[1] != c.outs[1]


def test_gilbert_elliott_loses_frames_in_bursts():
    n = 8000
    ins = [_udp(i) for i in range(n)]
    r = h.run([ins, []], config="[impair]\nge_p = 1%\nge_r = 25%\nlimit = 10000\n")
    h.assert_clean_exit(r)
    lost = r.counter(_line(r, "up"), "lost_ge")
    assert lost == n - len(r.outs[1]) and lost > 0
    kept = set(_num(f) for f in r.outs[1])
    runs, prev_lost = 0, False
    for i in range(n):
        cur = i not in kept
        runs += cur and not prev_lost
        prev_lost = cur
    # Model: loss p/(p+r) = 3.8%, mean burst 1/r = 4 frames.
    print("ge: lost %d of %d in %d bursts" % (lost, n, runs))
    assert 0.02 < lost / n < 0.06
    assert 2.5 < lost / runs < 6


def test_duplicates_follow_their_original_byte_for_byte():
    n = 2000
    ins = [_udp(i) for i in range(n)]
    r = h.run([ins, []], config="[impair]\nduplicate = 10%\nlimit = 10000\n")
    h.assert_clean_exit(r)
    dup = r.counter(_line(r, "up"), "duplicated")
    out = r.outs[1]
    assert len(out) == n + dup and dup > 100
    i = 0
    for k in range(n):
        assert out[i] == ins[k], "frame %d out of place" % k
        i += 1
        if i < len(out) and out[i] == ins[k]:
            i += 1
    assert i == len(out)


def test_delay_on_one_direction_shows_in_the_output_timestamps():
    ups = [_udp(i) for i in range(50)]
    downs = [_udp(i, up=False) for i in range(50)]
    r = _run_ts([ups, downs], "[impair.pair0.up]\ndelay = 200ms\n")
    h.assert_clean_exit(r)
    assert len(r.outs[1]) == 50 and len(r.outs[0]) == 50
    up_first = min(f.ts for f in r.outs[1])
    down_first = min(f.ts for f in r.outs[0])
    gap = up_first - down_first
    print("up frames left %.1f ms after the undelayed down frames" % (gap * 1e3))
    assert 0.19 <= gap <= 0.5, gap
    assert r.outs[1] == ups and r.outs[0] == downs
    # Only the impaired direction has a report line; telemetry is there.
    assert "impair dir=down" not in r.stdout
    assert "not registered" not in r.stdout + r.stderr, r.stderr


def test_jitter_without_reorder_keeps_the_order():
    ins = [_udp(i) for i in range(2000)]
    r = h.run([ins, []], config="[impair]\ndelay = 30ms\njitter = 20ms\nlimit = 10000\n")
    h.assert_clean_exit(r)
    assert r.outs[1] == ins
    assert r.counter(_line(r, "up"), "jitter_reordered") == 0


def test_jitter_with_reorder_and_held_back_frames_reorder_without_loss():
    ins = [_udp(i) for i in range(2000)]
    r = h.run([ins, []], config="[impair]\ndelay = 5ms\nreorder = 10%\n"
              "reorder_gap = 20ms\njitter = 3ms\njitter_reorder = yes\nlimit = 10000\n")
    h.assert_clean_exit(r)
    out = r.outs[1]
    assert sorted(out) == sorted(ins) and out != ins
    held = r.counter(_line(r, "up"), "reordered")
    assert abs(held - 200) < 4 * math.sqrt(2000 * 0.1 * 0.9), held


def test_overflow_drops_are_counted_and_every_mbuf_comes_back():
    ins = [_udp(i) for i in range(3000)]
    r = h.run([ins, []], config="[impair]\ndelay = 100ms\nlimit = 100\n")
    h.assert_clean_exit(r)
    over = r.counter(_line(r, "up"), "overflow")
    assert over > 0 and len(r.outs[1]) + over == 3000


def test_each_direction_takes_the_most_specific_section():
    ups = [_udp(i) for i in range(1000)]
    downs = [_udp(i, up=False) for i in range(1000)]
    r = h.run([ups, downs], config="[impair]\nloss = 100%\nlimit = 5000\n"
              "[impair.pair0]\nloss = 50%\n[impair.pair0.down]\nloss = 0\nduplicate = 100%\n")
    h.assert_clean_exit(r)
    assert 400 < len(r.outs[1]) < 600
    assert len(r.outs[0]) == 2000
    assert r.counter(_line(r, "down"), "duplicated") == 1000


def test_reference_config_is_a_no_op_bridge():
    ins = [_udp(i) for i in range(20)]
    r = h.run([ins, []], config_file=os.path.join(REPO, "config", "impair.ini"))
    h.assert_clean_exit(r)
    h.assert_same(r.outs[1], ins, "impair.ini")
    assert "impair dir=" not in r.stdout


def test_config_errors_name_the_file_line_and_key_and_exit_2():
    h.assert_config_error("[impair]\nloss = 150%\n", 2, "loss", r"out of range \[0%, 100%\]")
    h.assert_config_error("[impair]\n\nloss = lots\n", 3, "loss", "not a percentage")
    h.assert_config_error("[impair.pair0.up]\ndelay = soon\n", 2, "delay", ".")
    h.assert_config_error("[impair]\njitter = 61s\n", 2, "jitter", "out of range")
    h.assert_config_error("[impair]\njitter_dist = pareto\n", 2, "jitter_dist", "uniform or normal")
    h.assert_config_error("[impair]\nlimit = 0\n", 2, "limit", ".")
    h.assert_config_error("[impair.pair1.down]\ndelay = 1ms\nfrobnicate = 1\n", 3, "frobnicate", "unknown key")
    h.assert_config_error("[impair.pair0.sideways]\ndelay = 1ms\n", 1, "impair.pair0.sideways", "unknown section")
    h.assert_config_error("[impair]\nge_r = 0\n[impair.pair0]\nge_p = 1%\n", 4, "ge_p", "needs ge_r")
