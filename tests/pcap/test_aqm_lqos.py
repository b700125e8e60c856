# SPDX-License-Identifier: BSD-3-Clause
"""sluice started on a LibreQoS ShapedDevices.csv, on pcap files.

The devices of one circuit share that circuit's pipe: two devices sending
at once leave together at the circuit's Max Mbps, not at twice it.
net_pcap stamps each frame with its tx time (see test_aqm.py for why the
rate is judged tightly only on the safe side). Addresses only from
198.18.0.0/15 and 2001:db8::/32.
"""
import os
import re

import harness as h
from test_aqm import EXAMPLES, run, up4

SHAPED = ("Circuit ID,Circuit Name,Device ID,Device Name,Parent Node,MAC,IPv4,IPv6,"
          "Download Min Mbps,Upload Min Mbps,Download Max Mbps,Upload Max Mbps,Comment\n"
          "c1,\"Flat 1, Example Road\",1,Laptop,AP_A,,\"198.18.0.1, 198.18.0.2\",,1,1,8,2,\n"
          "c1,\"Flat 1, Example Road\",2,Phone,AP_A,,198.18.0.3,2001:db8:1::/56,1,1,8,2,\n"
          "c2,Shop,3,CPE,,,198.18.1.0/29,,0,0,20,10,\n")
CFG = "[aqm]\nports = 0\nqdisc = fq_codel\nblue = off\nsubscribers = ShapedDevices.csv\n"


def test_two_devices_of_one_circuit_share_its_max_rate_upstream():
    # 150 frames of 1000 bytes from each of two devices of circuit c1
    # (Upload Max 2 Mbps): about 2.4 Mbit, 1.2 s at the circuit's rate.
    frames = []
    for i in range(150):
        frames.append(up4(src="198.18.0.1", sport=40001, seq=i, tos=0x02))
        frames.append(up4(src="198.18.0.3", sport=40002, seq=i, tos=0x02))
    r = run([frames, []], CFG, files={"ShapedDevices.csv": SHAPED})
    h.assert_clean_exit(r)
    assert r.aqm("up", "enqueued") == 300, r.stdout
    assert r.drops("up") == 0, r.stdout
    ts, out = r.stamps[1], r.outs[1]
    assert len(out) == 300
    bits = sum(len(f) for f in out[1:]) * 8
    rate = bits / (ts[-1] - ts[0])
    # Two pipes of 2 Mbit/s would give about 4.
    assert rate <= 2.1e6, "c1 left at %.2f Mbit/s, its Upload Max is 2" % (rate / 1e6)
    assert rate >= 1.0e6, "c1 left at %.2f Mbit/s, its Upload Max is 2" % (rate / 1e6)
    # One line at load says what the file held and what is not honoured.
    log = r.stdout + r.stderr
    m = re.search(r"LibreQoS ShapedDevices format: 3 rows, 2 circuits \(one pipe pair each\), "
                  r"5 prefixes; not honoured[^:]*: 'Download Min Mbps' in 2 rows, "
                  r"'Upload Min Mbps' in 2 rows, 'Parent Node' in 2 rows", log)
    assert m, log
    assert r.counter("aqm_control", "subscribers") == 5, r.stdout


def test_the_example_libreqos_config_loads_its_shaped_devices_file():
    r = h.run([[up4(src="198.18.0.2", seq=1)], []], config=None,
              extra=["-c", os.path.join(EXAMPLES, "libreqos.ini")])
    h.assert_clean_exit(r)
    assert r.counter("aqm dir=up", "enqueued") == 1
    assert r.counter("aqm_control", "subscribers") == 8


def test_a_bad_shaped_devices_row_exits_2_naming_the_line():
    h.assert_config_error(CFG, 5, "subscribers", r"ShapedDevices\.csv:3: bad Upload Max Mbps 'x'",
                          files={"ShapedDevices.csv": SHAPED.replace(
                              "198.18.0.3,2001:db8:1::/56,1,1,8,2,", "198.18.0.3,2001:db8:1::/56,1,1,8,x,")})
