# SPDX-License-Identifier: BSD-3-Clause
"""Diffserv tins and wash in the aqm stage, on pcap files.

Every input arrives at once and the shaper releases it at the pipe's
rate (see test_aqm.py), so the order packets leave in is the
scheduler's. CoDel and BLUE are kept out of the way where only the
scheduler's order is measured. Checksums are checked by tshark, not by
sluice's own code. Addresses only from 198.18.0.0/15 and 2001:db8::/32.
"""
import os
import shutil

import harness as h
from test_aqm import run, seq_of, tshark, up4, up6

CFG = ("[aqm]\nports = 0\nqdisc = fq_codel\ndefault = pipe\n"
       "rate_down = 10mbit\nrate_up = 10mbit\ntarget = 1s\ninterval = 3s\n"
       "blue = off\nisolation = flows\n")
EF, CS1, AF41 = 46 << 2, 8 << 2, 34 << 2


def _voice_input():
    """16 Best Effort flows and 1 Bulk (CS1) flow of 1000-byte frames,
    then one EF voice flow of 60 frames of 200 bytes, all at once."""
    frames = [up4(sport=40000 + i % 16, seq=i) for i in range(640)]
    frames += [up4(sport=41000, seq=i, tos=CS1) for i in range(100)]
    frames += [up4(sport=42000, size=200, seq=i, tos=EF) for i in range(60)]
    return frames


def _voice_positions(r):
    return [i for i, f in enumerate(r.outs[1]) if seq_of(f)[0][0] == 42000]


def test_diffserv3_sends_ef_voice_ahead_of_best_effort_and_bulk_backlogs():
    r = run([_voice_input(), []], CFG + "diffserv = diffserv3\n")
    h.assert_clean_exit(r)
    assert len(r.outs[1]) == 800 and r.drops("up") == 0, r.stdout
    pos = _voice_positions(r)
    assert len(pos) == 60, pos
    # Voice may take a quarter of the bytes: its 12000 bytes leave
    # within the first 48000 bytes the pipe sends (about 36 frames of
    # 1000 bytes besides them), plus its one quantum of credit.
    assert max(pos) < 110, "voice left at positions %r" % pos
    assert r.counter("aqm_tin dir=up tin=voice", "sent") == 60
    assert r.counter("aqm_tin dir=up tin=voice", "sent_bytes") == 60 * 242  # 200 bytes of UDP payload
    assert r.counter("aqm_tin dir=up tin=bulk", "sent") == 100
    assert r.counter("aqm_tin dir=up tin=besteffort", "sent") == 640
    assert r.counter("aqm_tin dir=up tin=besteffort", "drops") == 0
    # Nothing went down, and the down pipes' tins say so.
    assert r.counter("aqm_tin dir=down tin=voice", "sent") == 0


def test_besteffort_gives_ef_no_priority_and_reports_no_tins():
    r = run([_voice_input(), []], CFG)
    h.assert_clean_exit(r)
    assert len(r.outs[1]) == 800
    pos = _voice_positions(r)
    assert len(pos) == 60
    # One quantum (7 frames) per DRR++ round of 18 flows: voice is
    # spread over the backlog, as before tins existed.
    assert max(pos) > 250, "voice left at positions %r" % pos
    assert "aqm_tin " not in r.stdout


def test_voice_over_its_threshold_leaves_best_effort_three_quarters():
    # 4 EF flows and 1 Best Effort flow, 400 frames each side, at once.
    frames = []
    for i in range(400):
        frames.append(up4(sport=42000 + i % 4, seq=i, tos=EF))
        frames.append(up4(sport=40000, seq=i))
    r = run([frames, []], CFG + "diffserv = diffserv3\n")
    h.assert_clean_exit(r)
    assert len(r.outs[1]) == 800 and r.drops("up") == 0
    first = [seq_of(f)[0][0] for f in r.outs[1][:400]]
    be = sum(1 for s in first if s == 40000)
    # Voice gets its quarter (plus one quantum of credit, 4 frames at
    # 1/4) while Best Effort has packets; Best Effort the rest.
    assert 290 <= be <= 302, "best effort sent %d of the first 400" % be
    assert r.counter("aqm_tin dir=up tin=voice", "sent") == 400
    assert r.counter("aqm_tin dir=up tin=besteffort", "sent") == 400


def test_diffserv4_puts_af41_in_video_and_counts_every_tin():
    frames = [up4(sport=40000, seq=i, tos=AF41) for i in range(50)]
    frames += [up4(sport=40001, seq=i, tos=CS1) for i in range(30)]
    frames += [up4(sport=40002, seq=i, tos=EF) for i in range(20)]
    frames += [up6(sport=40004, seq=i, tc=AF41) for i in range(10)]
    r = run([frames, []], CFG + "diffserv = diffserv4\n")
    h.assert_clean_exit(r)
    assert len(r.outs[1]) == 110
    t = lambda n, k: r.counter("aqm_tin dir=up tin=%s" % n, k)  # noqa: E731
    assert (t("besteffort", "sent"), t("bulk", "sent"), t("video", "sent"),
            t("voice", "sent")) == (0, 30, 60, 20), r.stdout


def _wash_input():
    frames = [up4(sport=40000, seq=i, tos=EF | 0x02) for i in range(50)]     # EF, ECT(0)
    frames += [up4(sport=40001, seq=i, tos=CS1 | 0x03) for i in range(50)]   # CS1, CE
    frames += [up4(sport=40002, seq=i, tos=AF41 | 0x01) for i in range(50)]  # AF41, ECT(1)
    frames += [up6(sport=40003, seq=i, tc=EF | 0x02) for i in range(50)]
    return frames


def test_wash_clears_the_dscp_keeps_ecn_and_leaves_valid_ipv4_checksums():
    r = run([_wash_input(), []], CFG + "diffserv = diffserv3\nwash = on\n", keep=True)
    try:
        h.assert_clean_exit(r)
        assert len(r.outs[1]) == 200
        path = os.path.join(r.tmp, "out1.pcap")
        rows = tshark(path, "udp.srcport", "ip.checksum.status", "ip.dsfield.dscp",
                      "ip.dsfield.ecn", "ipv6.tclass.dscp", "ipv6.tclass.ecn")
        assert len(rows) == 200
        want_ecn = {"40000": "2", "40001": "3", "40002": "1", "40003": "2"}
        for sport, csum, dscp4, ecn4, dscp6, ecn6 in rows:
            if sport == "40003":
                assert (dscp6, ecn6) == ("0", want_ecn[sport]), (sport, dscp6, ecn6)
            else:
                assert csum == "1", "bad IPv4 checksum on %s" % sport
                assert (dscp4, ecn4) == ("0", want_ecn[sport]), (sport, dscp4, ecn4)
        # Tins saw the DSCP as received: EF is voice, CS1 bulk.
        assert r.counter("aqm_tin dir=up tin=voice", "sent") == 100
        assert r.counter("aqm_tin dir=up tin=bulk", "sent") == 50
        assert r.counter("aqm_tin dir=up tin=besteffort", "sent") == 50
        assert r.aqm("up", "washed") == 200 and r.aqm("up", "wash_shared") == 0
    finally:
        shutil.rmtree(r.tmp, ignore_errors=True)


def test_without_wash_the_dscp_leaves_as_it_came():
    r = run([_wash_input(), []], CFG + "diffserv = diffserv3\n", keep=True)
    try:
        h.assert_clean_exit(r)
        rows = tshark(os.path.join(r.tmp, "out1.pcap"), "udp.srcport", "ip.dsfield.dscp",
                      "ipv6.tclass.dscp")
        want = {"40000": "46", "40001": "8", "40002": "34", "40003": "46"}
        for sport, d4, d6 in rows:
            assert (d4 or d6) == want[sport], (sport, d4, d6)
        assert r.aqm("up", "washed") == 0
    finally:
        shutil.rmtree(r.tmp, ignore_errors=True)


def test_tins_with_a_fifo_are_refused_naming_the_key():
    r = run([[], []], "[aqm]\nports = 0\nqdisc = fifo\ndefault = pipe\n"
            "rate_down = 10mbit\nrate_up = 10mbit\ndiffserv = diffserv4\n")
    assert r.rc == 2, r.stdout + r.stderr
    assert "diffserv" in r.stdout + r.stderr
