#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run pcap tests: run.py [--sluice PATH] [--jobs N] [module[:test] ...]

Each module tests/pcap/test_*.py holds functions named test_*; every one
is a test whose name reads as a sentence. Prints PASS/FAIL per test and
'N passed, N failed' last; exits 1 if anything failed.

--jobs N runs N modules at a time (at most one per CPU), each in a
runner of its own whose one-worker sluices run on its own lcore
(SLUICE_PCAP_LCORE); a module's lines are printed when it ends.
"""
import importlib
import os
import queue
import re
import subprocess
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def run_parallel(specs, jobs):
    """Run each module spec in a runner of its own, jobs at a time; the
    runner of slot i puts its sluices on lcore i. Returns (passed,
    failed)."""
    todo = queue.Queue()
    for spec in specs:
        todo.put(spec)
    lock = threading.Lock()
    totals = [0, 0]

    def slot(i):
        env = dict(os.environ, SLUICE_PCAP_LCORE=str(i))
        while True:
            try:
                spec = todo.get_nowait()
            except queue.Empty:
                return
            p = subprocess.run([sys.executable, os.path.abspath(__file__), spec],
                               env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
            lines = p.stdout.splitlines()
            last = [l for l in lines if re.match(r"^\d+ passed, \d+ failed$", l)]
            with lock:
                for line in lines:
                    if line not in last:
                        print(line)
                if last:
                    ok, bad = (int(x) for x in re.findall(r"\d+", last[-1]))
                else:
                    ok, bad = 0, 1
                    print("FAIL %s: its runner printed no result (exit %d)" %
                          (spec, p.returncode))
                if p.returncode != 0 and bad == 0:
                    bad = 1
                    print("FAIL %s: its runner exited %d" % (spec, p.returncode))
                totals[0] += ok
                totals[1] += bad
                sys.stdout.flush()

    threads = [threading.Thread(target=slot, args=(i,)) for i in range(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return totals[0], totals[1]


def main(argv):
    jobs = 1
    while len(argv) > 2 and argv[1] in ("--sluice", "--jobs"):
        if argv[1] == "--sluice":
            os.environ["SLUICE"] = os.path.abspath(argv[2])
        else:
            jobs = int(argv[2])
        argv = argv[:1] + argv[3:]
    import harness
    harness.SLUICE = os.environ.get("SLUICE", harness.SLUICE)
    if not os.access(harness.SLUICE, os.X_OK):
        print("FAIL setup: sluice binary not found at %s (build first)" % harness.SLUICE)
        print("0 passed, 1 failed")
        return 1
    wanted = argv[1:] or sorted(f[:-3] for f in os.listdir(HERE)
                                if f.startswith("test_") and f.endswith(".py"))
    jobs = max(1, min(jobs, len(os.sched_getaffinity(0)), len(wanted)))
    if jobs > 1:
        passed, failed = run_parallel(wanted, jobs)
        print("%d passed, %d failed" % (passed, failed))
        return 1 if failed else 0
    passed = failed = 0
    for spec in wanted:
        mod_name, _, only = spec.partition(":")
        mod = importlib.import_module(mod_name)
        for name in sorted(n for n in dir(mod) if n.startswith("test_")):
            if only and name != only:
                continue
            t0 = time.time()
            try:
                getattr(mod, name)()
                passed += 1
                print("PASS %s.%s (%.1fs)" % (mod_name, name, time.time() - t0), flush=True)
            except Exception as e:  # noqa: BLE001 - report every failure
                failed += 1
                print("FAIL %s.%s: %s" % (mod_name, name, e), flush=True)
                traceback.print_exc(file=sys.stdout)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
