# SPDX-License-Identifier: BSD-3-Clause
"""Telemetry commands that take parameters, given malformed ones; and
queries that keep coming while sluice stops.

sluice runs on net_pcap ports that receive nothing and without
--idle-exit, so it stays up while the tests ask its DPDK telemetry
socket; SIGTERM ends it. Every malformed parameter must get a defined
answer (null for a read command, status "rejected" with a readable error
for a change) and change nothing.
"""
import json
import os
import shutil
import signal
import socket
import string
import subprocess
import sys
import tempfile
import threading
import time

import harness as h

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import telemetry  # noqa: E402  tests/e2e/telemetry.py, standard library only

SUB4 = "198.18.0.1"
CFG = ("[aqm]\nports = 0\nqdisc = fq_codel\ndefault = pipe\n"
       "rate_down = 10mbit\nrate_up = 10mbit\nsubscribers = subs.csv\n"
       "[tcpopt]\nmss_clamp = 1400\n"
       "[impair]\nloss = 1%\n")
SUBS = "%s/32,20mbit,5mbit\n" % SUB4
PRINTABLE = set(string.printable) - set("\t\n\r\x0b\x0c")

# Parameters no command can make sense of.
JUNK = ["#", " ", "  # note", "prefix", "prefix,1m,1m", ",", ",,,",
        "x" * 900, "\x01\x02", "-1", "1x", "99999999999999999999999"]


class Sluice:
    """One sluice on idle net_pcap ports, reachable through telemetry."""

    def __init__(self, config, files):
        self.tmp = tempfile.mkdtemp(prefix="sluice-tel-")
        self.prefix = "tel%d" % os.getpid()
        for name, text in files.items():
            with open(os.path.join(self.tmp, name), "w") as f:
                f.write(text)
        cpath = os.path.join(self.tmp, "test.ini")
        with open(cpath, "w") as f:
            f.write(config)
        args = [h.SLUICE, "--no-huge", "-m", "512", "--no-pci", "-l", h.LCORE,
                "--file-prefix", self.prefix, "--log-level=lib.*:warning"]
        for p in range(2):
            fin = os.path.join(self.tmp, "in%d.pcap" % p)
            h.write_pcap(fin, [])
            args += ["--vdev", "net_pcap%d,rx_pcap=%s,tx_pcap=%s" %
                     (p, fin, os.path.join(self.tmp, "out%d.pcap" % p))]
        args += ["--", "-c", cpath]
        self.p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, stdin=subprocess.DEVNULL)
        # An ASan build on a busy machine can take many seconds to start.
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if telemetry.query(self.prefix, "/sluice/totals").get("/sluice/totals"):
                    return
            except (OSError, ValueError):
                pass
            if self.p.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise AssertionError("sluice did not answer telemetry:\n%s\n%s" % self.out)

    def ask(self, cmd):
        """The reply's value for cmd (None when the command refused)."""
        reply = telemetry.query(self.prefix, cmd)
        return reply.get(cmd.split(",")[0])

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        self.out = self.p.communicate(timeout=30)
        shutil.rmtree(self.tmp, ignore_errors=True)
        shutil.rmtree(h.eal_runtime_dir(self.prefix), ignore_errors=True)
        return h.Run(self.p.returncode, self.out[0], self.out[1], [])


def _readable(text, what):
    assert isinstance(text, str) and text, "%s: no text: %r" % (what, text)
    bad = [c for c in text if c not in PRINTABLE]
    assert not bad, "%s: unprintable bytes %r in %r" % (what, bad, text)


def _with_sluice(body):
    s = Sluice(CFG, {"subs.csv": SUBS})
    try:
        body(s)
    finally:
        r = s.stop()
    h.assert_clean_exit(r)


def test_aqm_set_rejects_blank_comment_header_and_junk_parameters_with_a_readable_reason():
    def body(s):
        before = s.ask("/sluice/aqm")
        for junk in JUNK + ["default,#", "default, ", "default,prefix,1m",
                            "default,1mbit", "default,fast,slow",
                            SUB4 + "/32", SUB4 + "/32,1mbit", SUB4 + "/33,1mbit,1mbit",
                            SUB4 + "/32,1mbit,1mbit,carrier-pigeon",
                            "default,1mbit,1mbit,ethernet",
                            "default,1mbit,1mbit" + " " * 200 + "x",
                            "198.18.0.0/24,1mbit,1mbit,none,extra,fields"]:
            ans = s.ask("/sluice/aqm_set," + junk)
            assert ans is not None and ans.get("status") == "rejected", \
                "aqm_set,%r: %r" % (junk, ans)
            _readable(ans.get("error"), "aqm_set,%r error" % junk)
            if junk.strip().startswith("#") or junk.strip() in ("", "prefix,1m,1m"):
                assert "not a subscriber" in ans["error"], \
                    "aqm_set,%r: %r" % (junk, ans["error"])
        after = s.ask("/sluice/aqm")
        assert after["subscribers"] == before["subscribers"] == 1, after
        assert after["telemetry_changes"] == 0, after
        assert after["default_rate_down"] == 10000000, after
        _readable(after.get("last_error"), "/sluice/aqm last_error")
        pipe = s.ask("/sluice/aqm_pipe," + SUB4 + "/32")
        assert pipe["rate_down"] == 20000000 and pipe["rate_up"] == 5000000, pipe
    _with_sluice(body)


def test_aqm_del_rejects_junk_and_unknown_prefixes_then_removes_and_frees_the_id():
    def body(s):
        for junk in JUNK + ["default", SUB4 + "/32,1mbit,1mbit", SUB4 + "/33",
                            "198.18.9.9/32", SUB4 + "/31", "2001:db8::/129",
                            SUB4 + "/32" + " " * 200 + "x", SUB4 + "/32,"]:
            ans = s.ask("/sluice/aqm_del," + junk)
            assert ans is not None and ans.get("status") == "rejected", \
                "aqm_del,%r: %r" % (junk, ans)
            _readable(ans.get("error"), "aqm_del,%r error" % junk)
        aqm = s.ask("/sluice/aqm")
        assert aqm["subscribers"] == 1 and aqm["removed"] == 0, aqm
        assert aqm["telemetry_changes"] == 0, aqm
        assert s.ask("/sluice/aqm_pipe,1")["gen"] == 0
        # The good form: the subscriber and its pipe id go.
        ans = s.ask("/sluice/aqm_del," + SUB4 + "/32")
        assert ans == {"status": "removed"}, ans
        aqm = s.ask("/sluice/aqm")
        assert aqm["subscribers"] == 0 and aqm["pipes"] == 0 and aqm["removed"] == 1, aqm
        assert s.ask("/sluice/aqm_pipe,1") is None
        assert s.ask("/sluice/aqm_pipe," + SUB4) is None
        assert s.ask("/sluice/aqm_pipes")["id"] == []
        again = s.ask("/sluice/aqm_del," + SUB4 + "/32")
        assert again["status"] == "rejected" and "no subscriber" in again["error"], again
        # A new subscriber takes the freed id, as its next incarnation.
        assert s.ask("/sluice/aqm_set,198.18.0.7/32,3mbit,1mbit")["status"] == "applied"
        pipe = s.ask("/sluice/aqm_pipe,1")
        assert pipe["prefix"] == "198.18.0.7/32" and pipe["gen"] == 1, pipe
        assert pipe["down"]["sent"] == 0, pipe
        assert s.ask("/sluice/aqm_pipes")["gen"] == [1]
    _with_sluice(body)


def test_aqm_pipe_answers_null_to_junk_and_to_unknown_pipes():
    def body(s):
        for junk in JUNK + ["default,", "0x1", "198.18.9.9/32", "2001:db8::/129",
                            SUB4 + "/32" + " " * 200 + "x",
                            SUB4 + "/32,1mbit,1mbit"]:
            assert s.ask("/sluice/aqm_pipe," + junk) is None, junk
        # The good forms still answer.
        assert s.ask("/sluice/aqm_pipe,default")["id"] == 0
        assert s.ask("/sluice/aqm_pipe,1")["prefix"] == SUB4 + "/32"
        assert s.ask("/sluice/aqm_pipe," + SUB4)["id"] == 1
    _with_sluice(body)


def test_aqm_pipes_pages_through_every_subscriber_and_refuses_junk():
    """/sluice/aqm_pipes,<first id> gives 128 pipes per call in columns and
    the id to ask next, so a client reads 300 subscribers in three calls;
    the pipe the CSV lists first is id 1, the last is id 300."""
    subs = "".join("198.18.%d.%d/32,20mbit,5mbit\n" % (i >> 8, i & 255)
                   for i in range(1, 301))
    cfg = CFG.replace("subscribers = subs.csv\n",
                      "subscribers = subs.csv\nmax_subscribers = 300\n")
    s = Sluice(cfg, {"subs.csv": subs})
    try:
        ids, first, calls = [], 1, 0
        while first:
            page = s.ask("/sluice/aqm_pipes,%d" % first)
            assert page is not None and page["first"] == first, (first, page)
            assert page["subscribers"] == 300, page
            cols = [page[c] for c in ("id", "sent_bytes_down", "sent_bytes_up",
                                      "drops_down", "drops_up")]
            assert len({len(c) for c in cols}) == 1, page
            assert len(cols[0]) == min(128, 301 - first), (first, len(cols[0]))
            ids += cols[0]
            first, calls = page["next"], calls + 1
        assert ids == list(range(1, 301)) and calls == 3, (calls, ids[:3], ids[-3:])
        assert s.ask("/sluice/aqm_pipes")["id"][:2] == [1, 2]
        past = s.ask("/sluice/aqm_pipes,301")
        assert past["id"] == [] and past["next"] == 0, past
        for junk in JUNK + ["0", "1,2", "0x1", " 1"]:
            assert s.ask("/sluice/aqm_pipes," + junk) is None, junk
        # The full reply of the last pipe, by id, is found at once.
        assert s.ask("/sluice/aqm_pipe,300")["prefix"] == "198.18.1.44/32"
    finally:
        r = s.stop()
    h.assert_clean_exit(r)


def test_ports_impair_and_tcpopt_answer_null_to_a_parameter_that_is_not_a_pair_or_port():
    def body(s):
        for cmd in ("/sluice/ports", "/sluice/impair", "/sluice/tcpopt"):
            for junk in JUNK + ["2", "0 ", "0,1", "0x0"]:
                assert s.ask(cmd + "," + junk) is None, "%s,%r" % (cmd, junk)
        assert set(s.ask("/sluice/ports,1")) == {"1"}
        one = s.ask("/sluice/ports,1")["1"]
        assert one["rss"] == "none", one  # one worker: one rx queue
        assert len(s.ask("/sluice/ports")) == 2
        assert s.ask("/sluice/impair,0") is not None
        assert s.ask("/sluice/tcpopt,0") is not None
    _with_sluice(body)


def _query_loop(path, stop, answers):
    """Ask /sluice/totals (and the stage commands) over and over, each on
    a new connection, until stop is set or the socket goes away."""
    cmds = ["/sluice/totals", "/sluice/ports", "/sluice/workers", "/sluice/stages"]
    i = 0
    while not stop.is_set():
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
                s.settimeout(2)
                s.connect(path)
                s.recv(1024)
                s.send(cmds[i % len(cmds)].encode())
                reply = s.recv(65536)
                if reply:
                    answers.append(json.loads(reply.decode()))
        except (OSError, ValueError):
            time.sleep(0.001)
        i += 1


def test_queries_during_shutdown_never_crash_sluice():
    """A monitoring poller (sluice-exporter, sluice-top) that keeps asking
    while sluice stops must not crash it: five SIGTERMs under a stream of
    queries each exit 0 with the final report."""
    for rnd in range(5):
        prefix = "pcaptel%d_%d" % (os.getpid(), rnd)
        args = [h.SLUICE, "--no-huge", "-m", "512", "--no-pci", "-l", h.LCORE,
                "--file-prefix", prefix, "--log-level=lib.*:warning",
                "--vdev", "net_null0", "--vdev", "net_null1", "--"]
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, text=True)
        sock = os.path.join(h.eal_runtime_dir(prefix), "dpdk_telemetry.v2")
        stop, answers, threads, lines, log = threading.Event(), [], [], [], []
        reader = threading.Thread(target=lambda: lines.extend(p.stdout))
        reader.start()
        # The log (stderr, app/log.h) says when start-up is over.
        log_reader = threading.Thread(target=lambda: log.extend(p.stderr))
        log_reader.start()
        try:
            # Signals are handled once sluice says how many workers run.
            deadline = time.time() + 30
            while not any("worker(s)" in l for l in log) and time.time() < deadline:
                assert p.poll() is None, "sluice exited during start-up"
                time.sleep(0.05)
            assert os.path.exists(sock), "no telemetry socket"
            for _ in range(3):
                t = threading.Thread(target=_query_loop, args=(sock, stop, answers))
                t.start()
                threads.append(t)
            while len(answers) < 20 and time.time() < deadline:
                time.sleep(0.01)
            assert answers, "telemetry never answered"
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=30)
        finally:
            stop.set()
            for t in threads:
                t.join()
            if p.poll() is None:
                p.kill()
                p.wait()
            reader.join()
            log_reader.join()
            err = "".join(log)
            shutil.rmtree(h.eal_runtime_dir(prefix), ignore_errors=True)
        assert p.returncode == 0, "round %d: exit %d\n%s" % (rnd, p.returncode, err[-2000:])
        out = "".join(lines)
        assert "sluice: final counters" in out, out[-2000:]
