# SPDX-License-Identifier: BSD-3-Clause
"""Passive RTT and autorate in the aqm stage, on pcap files.

net_pcap feeds both ports at once and sluice reads the clock, so which of
a data segment and its ACK is seen first is not fixed here: these tests
check what does not depend on timing (samples started, one-way-delay
samples, counters, config errors, frames unchanged). Exact RTT values are
checked on a virtual clock in tests/unit/prtt/. Addresses only from
198.18.0.0/15.
"""
import os
import shutil
import tempfile

from scapy.all import IP, TCP, UDP, Ether, Raw

import harness as h

REPO = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
CFG = open(os.path.join(REPO, "config", "examples", "fq_codel-10mbit.ini")).read()
CFG_PRTT = CFG.rstrip("\n") + "\nblue = off\npassive_rtt = on\n"
C_MAC, S_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02"
SUB, NET = "198.18.0.1", "198.19.0.1"


def down(sport, seq, tsval=None, size=500):
    opts = [("NOP", None), ("NOP", None), ("Timestamp", (tsval, 7))] if tsval is not None else []
    return bytes(Ether(src=S_MAC, dst=C_MAC) / IP(src=NET, dst=SUB) /
                 TCP(sport=443, dport=sport, flags="PA", seq=seq, ack=1, options=opts) /
                 Raw(b"d" * size))


def up(sport, seq, tsval, size=100):
    return bytes(Ether(src=C_MAC, dst=S_MAC) / IP(src=SUB, dst=NET) /
                 TCP(sport=sport, dport=5001, flags="PA", seq=seq, ack=1,
                     options=[("NOP", None), ("NOP", None), ("Timestamp", (tsval, 9))]) /
                 Raw(b"u" * size))


def test_passive_rtt_samples_one_flow_per_subscriber_and_leaves_every_frame_unchanged():
    # One subscriber (the default pipe). The first flow's first segment
    # chooses it; its next tick (78) starts the one sample in flight; the
    # other flows, with timestamps or without, wait.
    d = [down(41000, 1000 + 500 * i, tsval=77 + i // 2) for i in range(3)]
    for f in range(3):        # with timestamps: the same TSval three times
        d += [down(41001 + f, 1000 + 500 * i, tsval=77) for i in range(3)]
    for f in range(2):        # without: new data
        d += [down(42000 + f, 5000 + 500 * i) for i in range(3)]
    u = [up(43000, 100 * i, tsval) for i, tsval in enumerate([300, 300, 301, 302])]
    u.append(bytes(Ether(src=C_MAC, dst=S_MAC) / IP(src=SUB, dst=NET) /
                   UDP(sport=43001, dport=53) / Raw(b"q" * 40)))
    r = h.run([u, d], config=CFG_PRTT)
    h.assert_clean_exit(r)
    assert sorted(r.outs[0]) == sorted(d), "frames toward the subscriber changed"
    assert sorted(r.outs[1]) == sorted(u), "frames toward the internet changed"
    assert r.counter("prtt", "candidates") == 1, r.stdout
    assert r.counter("prtt", "ts_armed") == 1, r.stdout
    assert r.counter("prtt", "seq_armed") == 0, r.stdout
    # Flow 43000 is pinned upstream: first sight, then TSvals 301 and 302;
    # the second 300 is the same tick and gives none.
    assert r.counter("prtt", "owd_pins") == 1, r.stdout
    assert r.counter("prtt", "owd_samples") == 3, r.stdout
    assert r.counter("prtt", "segments") == 22, r.stdout
    assert r.counter("prtt", "non_tcp") == 1, r.stdout
    assert r.counter("prtt dir=up", "subscribers_sampled") == 1, r.stdout
    assert "prtt_top dir=up rank=1 pipe=0 subscriber=default samples=3" in r.stdout, r.stdout


def test_autorate_without_passive_rtt_is_refused_naming_the_key():
    h.assert_config_error(CFG.rstrip("\n") + "\nautorate = down\n",
                          CFG.rstrip("\n").count("\n") + 2, "autorate",
                          "needs passive_rtt = on")


def test_the_prtt_flows_key_of_older_files_still_loads():
    r = h.run([[], []], config=CFG_PRTT + "prtt_flows = 1000\n")
    h.assert_clean_exit(r)


def test_autorate_ticks_the_pipe_and_reports_every_kind_of_tick():
    d = [down(41000, 1000 + 500 * i, tsval=77) for i in range(20)]
    r = h.run([[], d], config=CFG_PRTT + "autorate = both\n", idle_ms=400)
    h.assert_clean_exit(r)
    assert sorted(r.outs[0]) == sorted(d)
    for dr in ("down", "up"):
        line = [l for l in r.stdout.splitlines() if l.startswith("autorate dir=%s " % dr)]
        assert line, r.stdout
        for k in ("idle", "hold", "raise", "cut", "recover", "stall", "rate_changes"):
            assert " %s=" % k in line[0], line[0]
    # No answer ever came, but the run is shorter than the 1 s stall time.
    assert r.counter("autorate dir=down", "idle") > 0, r.stdout
    assert r.counter("autorate dir=down", "rate_changes") == 0, r.stdout


def test_a_segment_whose_timestamp_option_is_malformed_is_counted_and_timed_by_sequence():
    # The first chooses the flow, the second (new data) starts the sample.
    bad = [bytes(Ether(src=S_MAC, dst=C_MAC) / IP(src=NET, dst=SUB) /
                 TCP(sport=443, dport=44000, flags="PA", seq=1 + 100 * i, ack=1,
                     options=[(8, b"\x00" * 7)]) / Raw(b"d" * 100)) for i in range(2)]
    r = h.run([[], bad], config=CFG_PRTT)
    h.assert_clean_exit(r)
    assert r.outs[0] == bad, "the frames must leave unchanged"
    assert r.counter("prtt", "bad_options") == 2, r.stdout
    assert r.counter("prtt", "ts_armed") == 0, r.stdout
    assert r.counter("prtt", "seq_armed") == 1, r.stdout


def _with_subs(cfg, csv):
    """A config file with subscribers = subs.csv and that CSV beside it."""
    tmp = tempfile.mkdtemp(prefix="sluice-prtt-")
    with open(os.path.join(tmp, "subs.csv"), "w") as f:
        f.write(csv)
    path = os.path.join(tmp, "test.ini")
    with open(path, "w") as f:
        f.write(cfg + "subscribers = subs.csv\n")
    return tmp, path


def test_a_subscriber_s_autorate_column_needs_passive_rtt_and_is_refused_on_its_line():
    h.assert_config_error(CFG.rstrip("\n") + "\nsubscribers = s.csv\n",
                          CFG.rstrip("\n").count("\n") + 2, "subscribers",
                          r"s\.csv:3: autorate column needs \[aqm\] passive_rtt = on",
                          files={"s.csv": "prefix,down,up\n198.18.0.2,5mbit,5mbit\n"
                                          "198.18.0.1,20mbit,5mbit,,,down\n"})
    h.assert_config_error(CFG_PRTT + "autorate_floor_down = 4mbit\nsubscribers = s.csv\n",
                          CFG_PRTT.count("\n") + 2, "subscribers",
                          r"s\.csv:1: autorate ceiling_down 3000000 bit/s below floor_down 4000000",
                          files={"s.csv": "198.18.0.1,20mbit,5mbit,,,down,,,3mbit\n"})


def test_a_subscriber_s_autorate_column_turns_autorate_on_for_its_pipe_alone_within_its_ceiling():
    # [aqm] autorate is off; 198.18.0.1 asks for it downstream with a
    # ceiling of 2 Mbit/s under its configured 20: its pipe starts at the
    # ceiling (one rate change, down only); 198.18.0.2 is not touched.
    tmp, path = _with_subs(CFG_PRTT, "prefix,down,up,profile,isolation,autorate,floor_down,floor_up,ceiling_down,ceiling_up\n"
                                     "198.18.0.1,20mbit,5mbit,,,down,1mbit,,2mbit\n"
                                     "198.18.0.2,20mbit,5mbit\n")
    try:
        d = [down(41000, 1000 + 500 * i, tsval=77) for i in range(20)]
        r = h.run([[], d], config_file=path, idle_ms=400)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    h.assert_clean_exit(r)
    assert sorted(r.outs[0]) == sorted(d)
    assert r.counter("autorate dir=down", "rate_changes") == 1, r.stdout
    assert r.counter("autorate dir=up", "rate_changes") == 0, r.stdout
    assert r.counter("autorate dir=down", "idle") > 0, r.stdout
    assert r.counter("autorate dir=up", "idle") == 0, r.stdout
