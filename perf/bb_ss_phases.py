#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""When do a bufferbloat run's high bulk RTTs happen? Reads <mode>/ss.txt
of perf/bufferbloat.sh (ss -tinH samples, "# <time>" and "ns <cli|srv>"
lines) and, per namespace (cli: the upload senders, srv: the download
senders), gives the RTT p50/p90/p95 and the BBR phase of every sample and
of those at or above p90 (from pacing_gain: 2.88672 startup, 0.34375 drain,
1.25 / 0.75 / 1 ProbeBW, 1 with cwnd <= 4 taken as ProbeRTT), with the
seconds into the load at which the top decile was sampled.

Usage: perf/bb_ss_phases.py OUT/MODE/ss.txt
"""
import collections
import re
import sys

PHASES = {2.88672: "startup", 0.34375: "drain", 1.25: "probe_up",
          0.75: "probe_down", 1.0: "cruise"}


def parse(path):
    t0 = t = ns = None
    out = []
    with open(path) as f:
        for line in f:
            if line.startswith("# "):
                t = float(line[2:])
                t0 = t if t0 is None else t0
            elif line.startswith("ns "):
                ns = line[3:].strip()
            elif line[:1] in ("\t", " "):
                acked = re.search(r"bytes_acked:(\d+)", line)
                rtt = re.search(r"\brtt:([\d.]+)", line)
                if not acked or int(acked.group(1)) < 65536 or not rtt:
                    continue
                gain = re.search(r"pacing_gain:([\d.]+)", line)
                cwnd = re.search(r"cwnd:(\d+)", line)
                cwnd = int(cwnd.group(1)) if cwnd else 0
                if gain:
                    g = round(float(gain.group(1)), 5)
                    phase = PHASES.get(g, "gain %.5f" % g)
                    if phase == "cruise" and cwnd <= 4:
                        phase = "probe_rtt"
                else:
                    phase = "not bbr"
                out.append((t - t0, ns, float(rtt.group(1)), phase))
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    samples = parse(sys.argv[1])
    for ns in ("cli", "srv"):
        x = [s for s in samples if s[1] == ns]
        if not x:
            continue
        rtts = sorted(s[2] for s in x)
        p90 = rtts[len(rtts) * 90 // 100]
        print("%s: %d samples, RTT p50 %.1f p90 %.1f p95 %.1f ms" %
              (ns, len(x), rtts[len(rtts) // 2], p90, rtts[len(rtts) * 95 // 100]))
        print("  phases, all:      %s" % dict(collections.Counter(s[3] for s in x)))
        top = [s for s in x if s[2] >= p90]
        print("  phases, top 10%%:  %s" % dict(collections.Counter(s[3] for s in top)))
        print("  top 10%% at s:     %s" % " ".join("%.1f" % s[0] for s in sorted(top)))


if __name__ == "__main__":
    main()
