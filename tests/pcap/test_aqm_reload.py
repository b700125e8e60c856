# SPDX-License-Identifier: BSD-3-Clause
"""SIGHUP reloads of a large subscriber table (issue 18 item 5).

A SIGHUP that arrives while a reload runs must not be lost: the control
thread reloads again afterwards, and that reload reads the newest file.
Addresses only from 198.18.0.0/15.
"""
import os
import re
import signal
import subprocess
import time

import harness as h

N = 50000


def _csv(path, down):
    with open(path + ".new", "w") as f:
        f.write("prefix,down,up\n")
        for i in range(N):
            f.write("198.%d.%d.%d/32,%s,5mbit\n" % (18 + (i >> 16), (i >> 8) & 255, i & 255, down))
    os.rename(path + ".new", path)


def _start(prefix, ini, mem_mb):
    """sluice on two net_null ports that receive nothing, reading ini:
    only its reloads matter here."""
    return subprocess.Popen([h.SLUICE, "--no-huge", "-m", str(mem_mb), "--no-pci", "-l", h.LCORE,
                             "--file-prefix", prefix, "--log-level=lib.*:warning",
                             "--vdev", "net_null0,no-rx=1", "--vdev", "net_null1,no-rx=1",
                             "--", "-c", ini],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)


def test_sighups_sent_during_a_reload_are_followed_by_a_reload_of_the_newest_file():
    with h.Scratch("aqmhup") as s:
        prefix = s.prefix
        ini = s.path("aqm.ini")
        csv = s.path("subs.csv")
        _csv(csv, "20mbit")
        with open(ini, "w") as f:
            f.write("[aqm]\ndefault = pipe\nrate_down = 10mbit\nrate_up = 10mbit\n"
                    "subscribers = subs.csv\nmax_subscribers = %d\nmax_v6_subscribers = 1\n"
                    "subscriber_flows = 4\n" % N)
        p = s.proc = _start(prefix, ini, 1024)
        o = h.Output(p)
        o.wait_for(" worker(s), 1 port pair(s)")
        # A first reload of the unchanged file; while it reads and
        # applies 50k lines, the file changes and two more signals come.
        p.send_signal(signal.SIGHUP)
        time.sleep(0.05)
        _csv(csv, "30mbit")
        with open(ini, "a") as f:
            f.write("rate_down = 40mbit\n")
        p.send_signal(signal.SIGHUP)
        p.send_signal(signal.SIGHUP)
        o.wait_for("sluice: aqm: reload", 2)
        time.sleep(1.0)  # room for a third, if one comes
        p.send_signal(signal.SIGTERM)
        out = o.finish()
    r = h.Run(p.returncode, out, "", [])
    h.assert_clean_exit(r)
    reloads = re.findall(r"sluice: aqm: reloaded .*", out)
    assert len(reloads) >= 2, out[-3000:]
    assert "default rates down=40000000 " in reloads[-1], reloads
    assert r.counter("aqm_control", "reload_errors") == 0, out[-3000:]
    assert r.counter("aqm_control", "reloads") == len(reloads), out[-3000:]


def test_a_new_prefix_listed_twice_counts_once_against_max_subscribers():
    """Its last line wins, as for a prefix already running: a table that
    fits is not refused for the repeat."""
    with h.Scratch("aqmdup") as s:
        prefix = s.prefix
        ini = s.path("aqm.ini")
        csv = s.path("subs.csv")
        with open(csv, "w") as f:
            f.write("198.18.1.1/32,10mbit,10mbit\n")
        with open(ini, "w") as f:
            f.write("[aqm]\ndefault = pipe\nrate_down = 10mbit\nrate_up = 10mbit\n"
                    "subscribers = subs.csv\nmax_subscribers = 2\nmax_v6_subscribers = 1\n"
                    "subscriber_flows = 4\n")
        p = s.proc = _start(prefix, ini, 512)
        o = h.Output(p)
        o.wait_for(" worker(s), 1 port pair(s)")
        # 198.18.1.1 goes, 198.18.1.2 comes, listed twice: one subscriber
        # after the reload, max_subscribers = 2.
        with open(csv + ".new", "w") as f:
            f.write("198.18.1.2/32,20mbit,20mbit\n198.18.1.2/32,30mbit,30mbit\n")
        os.rename(csv + ".new", csv)
        p.send_signal(signal.SIGHUP)
        o.wait_for("sluice: aqm: reload")
        p.send_signal(signal.SIGTERM)
        out = o.finish()
    r = h.Run(p.returncode, out, "", [])
    h.assert_clean_exit(r)
    assert "(1 new, 0 changed, 1 removed)" in out, out[-3000:]
    assert r.counter("aqm_control", "reload_errors") == 0, out[-3000:]
    assert r.counter("aqm_control", "subscribers") == 1, out[-3000:]
