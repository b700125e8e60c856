#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Analysis for perf/autorate.sh (Debian's /usr/bin/python3).

  autorate.py report OUT MODE...   OUT/table.md, OUT/autorate.png, result lines

Latency: irtt probes (10 ms) sent while the load ran; added = RTT - the
median RTT of the idle probes before the load. Capacity used: the download
flows' received payload over the trace's capacity during the same seconds,
payload-equivalent (x 1448/1514: the TBF counts whole frames). Recovery:
for each drop of capacity, the time from the drop until the added
latency is under 30 ms and stays there for a second (or to the step's
end); the whole step if it never does.

Probe stalls: irtt sends every 10 ms, so a gap of more than STALL_MS
between two sends means the client did not run. On this kind of shared
VM such gaps come with a pause of the whole path (ping's kernel-stamped
replies bunch with irtt's), and a probe sent just before one reads the
pause as queue. They are counted (`probe_stalls`) and named next to each
recovery over 0.5 s that holds one; recovery itself is never corrected
for them.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bufferbloat import pct, read_irtt, read_ping  # noqa: E402

PAYLOAD = 1448.0 / 1514.0
RECOVER_MS = 30.0
STALL_MS = 15.0


def stalls(sends, lo, hi):
    """[(start_s, ms)] of the gaps over STALL_MS between probe sends in
    [lo, hi)."""
    return [(a, (b - a) * 1e3) for a, b in zip(sends, sends[1:])
            if lo <= a < hi and (b - a) * 1e3 > STALL_MS]


def read_meta(d):
    m = {}
    for line in open(os.path.join(d, "meta.env")):
        if "=" in line:
            k, v = line.strip().split("=", 1)
            m[k] = v
    return m


def read_applied(d):
    """[(wall_s, mbit)] of the TBF changes as applied."""
    out = []
    p = os.path.join(d, "trace_applied.txt")
    if os.path.exists(p):
        for line in open(p):
            t, r = line.split()
            out.append((float(t), float(r)))
    return out


def read_rate_log(d, start_mbit):
    """[(wall_s, mbit)] of sluice's downstream rate for pipe 0."""
    out = []
    p = os.path.join(d, "autorate_log.txt")
    if not os.path.exists(p):
        return out
    for line in open(p):
        wall, _, js = line.partition(" ")
        try:
            j = json.loads(js)
        except ValueError:
            continue
        j = j.get("/sluice/autorate_log", j)
        off = float(wall) - j["now_ns"] / 1e9
        for e in j.get("changes", []):
            f = e.split()
            # t_ns pipe subscriber... dir event from to ...: the subscriber
            # name may hold a space ("pipe 3"), so read from the end.
            t_ns, dirn, to = int(f[0]), f[-6], int(f[-3])
            if dirn == "down":
                out.append((t_ns / 1e9 + off, to / 1e6))
    out.sort()
    return out


def capacity_bits(applied, lo, hi):
    bits = 0.0
    for i, (t, r) in enumerate(applied):
        end = applied[i + 1][0] if i + 1 < len(applied) else hi
        a, b = max(t, lo), min(end, hi)
        if b > a:
            bits += (b - a) * r * 1e6
    return bits


def recovery(step, t_d, t_n, hold=1.0):
    """Seconds from the drop t_d until the added latency is under
    RECOVER_MS and stays there for hold seconds (or to the step's end);
    the whole step if it never does."""
    for i, (t, a) in enumerate(step):
        if a >= RECOVER_MS:
            continue
        end = min(t + hold, t_n)
        if all(b < RECOVER_MS for u, b in step[i:] if u < end):
            return max(0.0, t - t_d)
    return t_n - t_d


def analyse(d):
    m = read_meta(d)
    tl, te = float(m["t_load"]), float(m["t_end"])
    irtt = read_irtt(d)
    ping = read_ping(d, float(m["t0"]), 0.05)
    idle = [r for t, r in irtt if t < tl and r is not None]
    base = pct(idle, 50) or 0.0
    loaded = [(t, r - base) for t, r in irtt if tl + 1 <= t < te and r is not None]
    added = [a for _, a in loaded]
    applied = read_applied(d)
    got, secs = 0.0, 0.0
    for name in sorted(os.listdir(d)):
        if name.startswith("iperf-down") and name.endswith(".json"):
            try:
                j = json.load(open(os.path.join(d, name)))
                r = j["end"]["sum_received"]
                got += r["bytes"] * 8.0
                secs = max(secs, r["seconds"])
            except (ValueError, KeyError):
                pass
    cap = capacity_bits(applied, tl, tl + secs) * PAYLOAD if secs else 0.0
    gaps = stalls(sorted(t for t, _ in irtt), tl + 1, te)
    rec, rec_stall = [], []
    for i in range(1, len(applied)):
        if applied[i][1] >= applied[i - 1][1]:
            continue
        t_d = applied[i][0]
        t_n = applied[i + 1][0] if i + 1 < len(applied) else te
        step = [(t, a) for t, a in loaded if t_d <= t < t_n]
        r = recovery(step, t_d, t_n)
        rec.append(r)
        # The longest probe stall in the slow recovery, if any (a probe
        # sent up to 50 ms before it can read it).
        inside = [g for a, g in gaps if t_d - 0.05 <= a <= t_d + r + 0.05] if r > 0.5 else []
        rec_stall.append(max(inside) if inside else None)
    prtt = {}
    try:
        j = json.load(open(os.path.join(d, "prtt.json")))
        prtt = j.get("/sluice/prtt", j).get("down", {})
    except (OSError, ValueError):
        pass
    ping_loaded = [r for t, r in ping if tl + 1 <= t < te and r is not None]
    return {
        "mode": m["mode"], "rate": float(m["rate"]), "tl": tl, "te": te,
        "base": base, "p50": pct(added, 50), "p95": pct(added, 95), "p99": pct(added, 99),
        "used": 100.0 * got / cap if cap else None, "recover": rec,
        "recover_stall": rec_stall, "stalls": gaps,
        "irtt": [(t - tl, r) for t, r in irtt],
        "applied": [(t - tl, r) for t, r in applied],
        "rates": [(t - tl, r) for t, r in read_rate_log(d, float(m["rate"]))],
        "prtt_p50_ms": prtt.get("p50_us", 0) / 1000.0 if prtt else None,
        "ping_p50_ms": pct(ping_loaded, 50),
    }


def fmt(v, nd=1):
    return "-" if v is None else ("%.*f" % (nd, v))


def plot(out, runs):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(runs), 1, figsize=(11, 3.2 * len(runs)), sharex=True)
    if len(runs) == 1:
        axes = [axes]
    for ax, s in zip(axes, runs):
        end = s["te"] - s["tl"]
        ts = [t for t, _ in s["applied"]] + [end]
        ax.step(ts, [r for _, r in s["applied"]] + [s["applied"][-1][1]] if s["applied"] else [],
                where="post", color="k", label="capacity (TBF)")
        if s["rates"]:
            rt = [0.0] + [t for t, _ in s["rates"]] + [end]
            rv = [s["rate"]] + [r for _, r in s["rates"]] + [s["rates"][-1][1]]
        else:
            rt, rv = [0.0, end], [s["rate"], s["rate"]]
        ax.step(rt, rv, where="post", color="tab:blue", label="sluice rate")
        ax.set_ylabel("Mbit/s")
        ax.set_xlim(-1, end)
        ax2 = ax.twinx()
        pts = [(t, r - s["base"]) for t, r in s["irtt"] if r is not None and t >= -1]
        ax2.plot([t for t, _ in pts], [max(a, 0.1) for _, a in pts], ".", ms=1.5,
                 color="tab:red", label="irtt added latency")
        ax2.set_yscale("log")
        ax2.set_ylabel("added latency, ms")
        ax.set_title("%s: p95 %s ms, p99 %s ms added; %s%% of capacity used" % (
            s["mode"], fmt(s["p95"]), fmt(s["p99"]), fmt(s["used"])))
        h1, l1 = ax.get_legend_handles_labels()
        h2, l2 = ax2.get_legend_handles_labels()
        ax.legend(h1 + h2, l1 + l2, loc="upper right", fontsize=8, markerscale=6)
    axes[-1].set_xlabel("seconds since the load started")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "autorate.png"), dpi=110)


def main():
    if len(sys.argv) < 4 or sys.argv[1] != "report":
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[2]
    runs = []
    for mode in sys.argv[3:]:
        d = os.path.join(out, mode)
        try:
            runs.append(analyse(d))
        except (OSError, KeyError, ValueError) as e:
            print("autorate: %s: no usable data (%s)" % (mode, e), file=sys.stderr)
    if not runs:
        return 1
    L = ["| mode | sluice rate | idle RTT ms | added p50 / p95 / p99 ms | capacity used | "
         "recoveries <= 0.5 s | passive RTT p50 vs ping p50 (loaded) | probe stalls > %g ms |" % STALL_MS,
         "|---|---|---|---|---|---|---|---|"]
    for s in runs:
        rec = s["recover"]
        ok = sum(1 for r in rec if r <= 0.5)
        held = sum(1 for g in s["recover_stall"] if g is not None)
        L.append("| %s | %s | %s | %s / %s / %s | %s%% | %d of %d (median %s s, max %s s%s) | %s / %s ms | %d |" % (
            s["mode"], "autorate" if s["rates"] else "%g Mbit/s" % s["rate"], fmt(s["base"]),
            fmt(s["p50"]), fmt(s["p95"]), fmt(s["p99"]), fmt(s["used"]), ok, len(rec),
            fmt(pct(rec, 50), 2), fmt(max(rec) if rec else None, 2),
            "; %d of the slow with a probe stall" % held if held else "",
            fmt(s["prtt_p50_ms"]), fmt(s["ping_p50_ms"]), len(s["stalls"])))
    open(os.path.join(out, "table.md"), "w").write("\n".join(L) + "\n")
    plot(out, runs)
    for s in runs:
        print("result %s p95_added_ms %s" % (s["mode"], fmt(s["p95"])))
        print("result %s p99_added_ms %s" % (s["mode"], fmt(s["p99"])))
        print("result %s capacity_used_pct %s" % (s["mode"], fmt(s["used"])))
        print("result %s recovery_s %s" % (s["mode"], " ".join("%.2f" % r for r in s["recover"])))
        print("result %s probe_stalls %d" % (s["mode"], len(s["stalls"])))
        for r, g in zip(s["recover"], s["recover_stall"]):
            if g is not None:
                print("note %s: the %.2f s recovery holds a %.1f ms probe stall" % (s["mode"], r, g))
    return 0


if __name__ == "__main__":
    sys.exit(main())
