#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Small arithmetic for perf/bench.sh, so the shell never does floats.

    stats.py rate T1 C1 T2 C2       (C2-C1) / (T2-T1) per second, T in ns
    stats.py median V...            the median, as an integer
    stats.py ratio A B [DIGITS]     A / B with DIGITS decimals (default 3)
    stats.py spread V...            (max-min)/median, as a percentage
    stats.py paired N A1..AN B1..BN the per-round ratios Ai/Bi: their median
                                    and a distribution-free confidence
                                    interval of at least 95% for it (order
                                    statistics), as "median lo hi level"
"""
import math
import statistics
import sys


def median_ci(vals, level=0.95):
    """(lo, hi, coverage): the widest-k order statistics interval
    [x_(k), x_(n+1-k)] whose coverage of the median is at least level."""
    xs = sorted(vals)
    n = len(xs)
    k, cover = 1, 1.0 - 2.0 * 0.5 ** n
    while k + 1 <= (n + 1) // 2:
        # coverage of [x_(k+1), x_(n-k)] is 1 - 2 P(Binomial(n, 1/2) <= k)
        tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0 ** n
        if 1.0 - 2.0 * tail < level:
            break
        k, cover = k + 1, 1.0 - 2.0 * tail
    return xs[k - 1], xs[n - k], cover


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
    elif op == "paired":
        n = int(args[0])
        a = [float(v) for v in args[1:1 + n]]
        b = [float(v) for v in args[1 + n:1 + 2 * n]]
        if n < 1 or len(a) != n or len(b) != n or 0 in b:
            return 1
        r = [x / y for x, y in zip(a, b)]
        lo, hi, cover = median_ci(r)
        print("%.3f %.3f %.3f %.1f" % (statistics.median(r), lo, hi, 100.0 * cover))
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
