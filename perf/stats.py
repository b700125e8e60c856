#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Small arithmetic for perf/bench.sh, so the shell never does floats.

    stats.py rate T1 C1 T2 C2       (C2-C1) / (T2-T1) per second, T in ns
    stats.py median V...            the median, as an integer
    stats.py ratio A B [DIGITS]     A / B with DIGITS decimals (default 3)
    stats.py spread V...            (max-min)/median, as a percentage
"""
import statistics
import sys


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    op, args = argv[1], argv[2:]
    if op == "rate":
        t1, c1, t2, c2 = (int(a) for a in args[:4])
        if t2 <= t1:
            return 1
        print("%d" % round((c2 - c1) * 1e9 / (t2 - t1)))
    elif op == "median":
        vals = [float(a) for a in args]
        if not vals:
            return 1
        print("%d" % round(statistics.median(vals)))
    elif op == "ratio":
        a, b = float(args[0]), float(args[1])
        digits = int(args[2]) if len(args) > 2 else 3
        if b == 0:
            return 1
        print("%.*f" % (digits, a / b))
    elif op == "spread":
        vals = [float(a) for a in args]
        med = statistics.median(vals) if vals else 0
        if med == 0:
            print("0.0")
        else:
            print("%.1f" % (100.0 * (max(vals) - min(vals)) / med))
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
