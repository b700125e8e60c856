# SPDX-License-Identifier: BSD-3-Clause
"""Telemetry while sluice runs and while it stops."""
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time

import harness as h


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
        args = [h.SLUICE, "--no-huge", "-m", "512", "--no-pci", "-l", "0",
                "--file-prefix", prefix, "--log-level=warning",
                "--vdev", "net_null0", "--vdev", "net_null1", "--"]
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, text=True)
        sock = os.path.join(h.eal_runtime_dir(prefix), "dpdk_telemetry.v2")
        stop, answers, threads, lines = threading.Event(), [], [], []
        reader = threading.Thread(target=lambda: lines.extend(p.stdout))
        reader.start()
        try:
            # Signals are handled once sluice says how many workers run.
            deadline = time.time() + 30
            while not any("worker(s)" in l for l in lines) and time.time() < deadline:
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
            err = p.stderr.read()
            shutil.rmtree(h.eal_runtime_dir(prefix), ignore_errors=True)
        assert p.returncode == 0, "round %d: exit %d\n%s" % (rnd, p.returncode, err[-2000:])
        out = "".join(lines)
        assert "sluice: final counters" in out, out[-2000:]
