#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run pcap tests: run.py [--sluice PATH] [module[:test] ...]

Each module tests/pcap/test_*.py holds functions named test_*; every one
is a test whose name reads as a sentence. Prints PASS/FAIL per test and
'N passed, N failed' last; exits 1 if anything failed.
"""
import importlib
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main(argv):
    if len(argv) > 2 and argv[1] == "--sluice":
        os.environ["SLUICE"] = os.path.abspath(argv[2])
        argv = argv[:1] + argv[3:]
    import harness
    harness.SLUICE = os.environ.get("SLUICE", harness.SLUICE)
    if not os.access(harness.SLUICE, os.X_OK):
        print("FAIL setup: sluice binary not found at %s (build first)" % harness.SLUICE)
        print("0 passed, 1 failed")
        return 1
    wanted = argv[1:] or sorted(f[:-3] for f in os.listdir(HERE)
                                if f.startswith("test_") and f.endswith(".py"))
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
