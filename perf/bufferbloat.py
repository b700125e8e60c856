#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Analysis for perf/bufferbloat.sh (run with Debian's /usr/bin/python3).

  bufferbloat.py mode DIR              parse one mode's raw files, write
                                       DIR/summary.json, print a one-line digest
  bufferbloat.py report OUT MODE...    OUT/table.md, OUT/latency_time.png,
                                       OUT/latency_cdf.png, then the result lines

Latency: every probe sent while all load flows ran (from the moment the
iperf3 clients were launched until the last one ended) is "loaded"; every
probe sent before the launch is "idle". Added latency = loaded percentile -
idle median (of the same probe). Lost probes are counted, not averaged in.

Goodput: iperf3's receiver-side bytes per direction (end.sum_received of
each flow), over the longest receiver duration, against the shaped rate. The shaper counts Ethernet frames (no FCS, profile "none"),
iperf3 counts TCP payload, so a full-size segment carries MSS/(MSS+66) of
its frame as payload (1448/1514 = 95.6%). We report goodput against both:
the raw shaped rate, and the payload-equivalent rate (shaped rate x
MSS/(MSS+66)); the result lines use the latter. The link utilisation (L2
bytes sluice sent on that side, from the kernel's veth counters, over the
shaped rate) shows whether the shaper delivered its rate at all; the rest
of the gap is the reverse flows' ACKs, which share the link.
"""
import json
import math
import os
import re
import sys

FRAME_OVERHEAD = 14 + 20 + 20 + 12  # Ethernet + IPv4 + TCP + timestamps option


def read_meta(d):
    m = {}
    with open(os.path.join(d, "meta.env")) as f:
        for line in f:
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                m[k] = v
    return m


def pct(vals, p):
    """Percentile with linear interpolation (numpy's default), or None."""
    if not vals:
        return None
    v = sorted(vals)
    k = (len(v) - 1) * p / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def read_irtt(d):
    """[(send_time_s, rtt_ms or None)]"""
    path = os.path.join(d, "irtt.json")
    if not os.path.exists(path):
        return []
    try:
        j = json.load(open(path))
    except ValueError:
        return []
    out = []
    for rt in j.get("round_trips") or []:
        ts = rt["timestamps"]["client"]["send"]["wall"] / 1e9
        if rt.get("lost", "false") != "false" or "rtt" not in rt.get("delay", {}):
            out.append((ts, None))
        else:
            out.append((ts, rt["delay"]["rtt"] / 1e6))
    return out


PING_RE = re.compile(r"^\[(\d+\.\d+)\] .*icmp_seq=(\d+) .*time=([\d.]+) ms")


def read_ping(d, t0, interval):
    """[(send_time_s, rtt_ms or None)]: the send time is the receive stamp
    (-D) minus the RTT; sequence numbers never answered count as lost."""
    path = os.path.join(d, "ping.txt")
    got = {}
    sent = 0
    if os.path.exists(path):
        for line in open(path, errors="replace"):
            m = PING_RE.match(line)
            if m:
                rtt = float(m.group(3))
                got[int(m.group(2))] = (float(m.group(1)) - rtt / 1e3, rtt)
            m = re.match(r"^(\d+) packets transmitted", line)
            if m:
                sent = int(m.group(1))
    out = list(got.values())
    for seq in range(1, sent + 1):
        if seq not in got:  # lost: place it on its nominal send time
            out.append((t0 + (seq - 1) * interval, None))
    out.sort()
    return out


def lat_stats(samples, lo, hi):
    win = [r for t, r in samples if lo <= t < hi]
    ok = [r for r in win if r is not None]
    return {
        "n": len(win),
        "lost_pct": (100.0 * (len(win) - len(ok)) / len(win)) if win else None,
        "p50": pct(ok, 50), "p95": pct(ok, 95), "p99": pct(ok, 99),
        "max": max(ok) if ok else None,
    }


def read_iperf(d, direction, n):
    """Receiver-side goodput (bit/s) of the direction's flows together: the
    bytes they received over the longest receiver duration. (Summing each
    flow's own rate would overstate it when a bloated queue delays some
    flows' start, so their windows do not overlap.)"""
    total, secs, mss, errs = 0, [], None, []
    for i in range(n):
        path = os.path.join(d, "iperf-%s%d.json" % (direction, i))
        try:
            j = json.load(open(path))
        except (OSError, ValueError) as e:
            errs.append("%s%d: no JSON (%s)" % (direction, i, e))
            continue
        if j.get("error"):
            errs.append("%s%d: %s" % (direction, i, j["error"]))
        r = j.get("end", {}).get("sum_received", {})
        total += r.get("bytes", 0)
        secs.append(r.get("seconds", 0.0))
        mss = mss or j.get("start", {}).get("tcp_mss_default")
    longest = max(secs) if secs else 0.0
    return (8.0 * total / longest if longest > 0 else 0.0), longest, mss, errs


CAPTURE_KINDS = ("data", "pure_ack", "pure_ack_sack", "irtt", "ping", "other")


def read_capture(d, side, addr):
    """What one host (IPv4 address addr) received during the optional capture (BB_CAPTURE),
    sorted by kind: TCP segments with payload ("data"; retransmissions
    included, they fill holes the receiver counts), pure ACKs without and
    with SACK blocks, irtt (UDP), ping (ICMP), anything else. Frame bytes
    as the shaper counts them (Ethernet, no FCS). None without a capture."""
    import subprocess
    path = os.path.join(d, "capture-%s.pcapng" % side)
    if not os.path.exists(path):
        return None
    try:
        out = subprocess.run(
            ["tshark", "-r", path, "-T", "fields", "-E", "separator=,",
             "-e", "frame.time_epoch", "-e", "frame.len", "-e", "ip.dst", "-e", "ip.proto",
             "-e", "tcp.len", "-e", "tcp.options.sack_le"],
            capture_output=True, text=True, timeout=300).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    frames = {k: 0 for k in CAPTURE_KINDS}
    nbytes = {k: 0 for k in CAPTURE_KINDS}
    t_lo = t_hi = None
    for line in out.splitlines():
        f = line.split(",")
        if len(f) < 6 or not f[1] or f[2] != addr:
            continue  # what the host sent, or not IPv4
        del f[2]
        try:
            t = float(f[0])
        except ValueError:  # newer tshark prints dates: use order only
            t = None
        if t is not None:
            t_lo = t if t_lo is None else min(t_lo, t)
            t_hi = t if t_hi is None else max(t_hi, t)
        if f[2] == "6":
            k = "data" if int(f[3] or 0) > 0 else ("pure_ack_sack" if f[4] else "pure_ack")
        elif f[2] == "17":
            k = "irtt"
        elif f[2] == "1":
            k = "ping"
        else:
            k = "other"
        frames[k] += 1
        nbytes[k] += int(f[1])
    secs = (t_hi - t_lo) if t_lo is not None and t_hi > t_lo else None
    return {"secs": secs, "frames": frames, "bytes": nbytes}


# A socket counts as a bulk sender once it has this many bytes acked (the
# iperf3 control connections and the receivers' sockets send a few kB).
BULK_MIN_ACKED = 64 * 1024


def read_ss(d):
    """Smoothed RTT samples (ms) of the bulk senders from ss.txt (`ss -tinH`
    every BB_SS_INTERVAL s in both namespaces): upload flows send from the
    client namespace, download flows from the server's. Returns
    {"up": [...], "down": [...], "cc": set of algorithms seen}."""
    res = {"up": [], "down": [], "cc": set()}
    path = os.path.join(d, "ss.txt")
    if not os.path.exists(path):
        return res
    ns = None
    for line in open(path, errors="replace"):
        if line.startswith("# "):
            continue
        if line.startswith("ns "):
            ns = line.split()[1]
            continue
        if not line[:1].isspace():
            continue  # a socket's address line; its details follow
        rtt = re.search(r"\brtt:([0-9.]+)/", line)
        acked = re.search(r"\bbytes_acked:([0-9]+)", line)
        if not rtt or not acked or int(acked.group(1)) < BULK_MIN_ACKED:
            continue
        for cc in ("cubic", "bbr", "reno"):
            if re.search(r"(^|\s)%s(\s|$)" % cc, line):
                res["cc"].add(cc)
        res["up" if ns == "cli" else "down"].append(float(rtt.group(1)))
    return res


def rtt_stats(v):
    return {"n": len(v), "p50": pct(v, 50), "p95": pct(v, 95),
            "max": max(v) if v else None}


def read_aqm(d):
    """Drops by reason and CE marks per direction: from telemetry /sluice/aqm
    if it answered, else from the exit report's "aqm dir=up|down" lines."""
    res = {}
    path = os.path.join(d, "aqm.json")
    tel = None
    if os.path.exists(path):
        try:
            tel = json.load(open(path))
        except ValueError:
            tel = None
    if isinstance(tel, dict):
        tel = tel.get("/sluice/aqm", tel)
        for dname in ("down", "up"):
            node = tel.get(dname) if isinstance(tel, dict) else None
            if isinstance(node, dict):
                res[dname] = flatten_counters(node)
    if not res:
        log = os.path.join(d, "sluice.log")
        if os.path.exists(log):
            for line in open(log, errors="replace"):
                m = re.match(r"^aqm dir=(up|down)\s+(.*)", line)
                if m:
                    kv = dict(x.split("=", 1) for x in m.group(2).split() if "=" in x)
                    res[m.group(1)] = {k: num(v) for k, v in kv.items()}
    return res


def num(v):
    try:
        return int(v)
    except (TypeError, ValueError):
        try:
            return float(v)
        except (TypeError, ValueError):
            return v


def flatten_counters(node, prefix=""):
    out = {}
    for k, v in node.items():
        if isinstance(v, dict):
            out.update(flatten_counters(v, prefix + k + "_"))
        else:
            out[prefix + k] = num(v)
    return out


def drops_of(c):
    """(total drops, {reason: n}, ce marks) from a flattened counter dict."""
    if not c:
        return None, {}, None
    reasons = {}
    for k, v in c.items():
        if not isinstance(v, (int, float)):
            continue
        m = re.match(r"^(?:drops?_|dropped_)(\w+)$", k)
        if m and m.group(1) not in ("total", "pkts"):
            reasons[m.group(1)] = v
    if isinstance(c.get("handoff_drops"), (int, float)):
        reasons["handoff"] = c["handoff_drops"]
    total = c.get("drops", c.get("dropped", c.get("drops_total")))
    if not isinstance(total, (int, float)):
        total = sum(reasons.values()) if reasons else None
    ce = None
    for k in ("ce_marked", "ce_marks", "ce"):
        if isinstance(c.get(k), (int, float)):
            ce = c[k]
            break
    return total, reasons, ce


def analyse_mode(d):
    m = read_meta(d)
    t0, tl, te = float(m["t0"]), float(m["t_load"]), float(m["t_end"])
    ping_iv = float(m.get("ping_interval") or os.environ.get("BB_PING_INTERVAL", "0.05"))
    irtt = read_irtt(d)
    ping = read_ping(d, t0, ping_iv)
    s = {"mode": m["mode"], "meta": m, "probes": {}}
    for name, smp in (("irtt", irtt), ("ping", ping)):
        idle = lat_stats(smp, t0, tl)
        load = lat_stats(smp, tl, te)
        added = {}
        for p in ("p50", "p95", "p99"):
            if load[p] is not None and idle["p50"] is not None:
                added[p] = load[p] - idle["p50"]
            else:
                added[p] = None
        s["probes"][name] = {"idle": idle, "load": load, "added": added}
    for dirn, key in (("down", "down_bps"), ("up", "up_bps")):
        n = int(m["flows_" + dirn])
        bps, secs, mss, errs = read_iperf(d, dirn, n)
        rate = float(m[key])
        mss = mss or 1448
        eff = mss / float(mss + FRAME_OVERHEAD)
        l2 = int(m.get("l2_bytes_" + dirn) or 0)
        l2_s = float(m.get("l2_secs") or 0)
        s[dirn] = {
            "goodput_bps": bps, "iperf_seconds": secs, "mss": mss,
            "rate_bps": rate, "payload_eff": eff,
            "pct_raw": 100.0 * bps / rate if rate else None,
            "pct_payload": 100.0 * bps / (rate * eff) if rate else None,
            "link_util_pct": 100.0 * l2 * 8 / (rate * l2_s) if rate and l2_s > 0 else None,
            "errors": errs,
        }
    # The server receives the upstream, the client the downstream.
    for dirn, side, key in (("up", "srv", "srv4"), ("down", "cli", "cli4")):
        s[dirn]["capture"] = read_capture(d, side, m.get(key, ""))
    aqm = read_aqm(d)
    for dirn in ("down", "up"):
        total, reasons, ce = drops_of(aqm.get(dirn))
        af = (aqm.get(dirn) or {}).get("ack_filtered")
        ah = (aqm.get(dirn) or {}).get("ack_held")
        s[dirn].update({"drops": total, "drop_reasons": reasons, "ce_marks": ce,
                        "ack_filtered": af if isinstance(af, (int, float)) else None,
                        "ack_held": ah if isinstance(ah, (int, float)) else None,
                        "aqm": aqm.get(dirn)})
    ss = read_ss(d)
    for dirn in ("down", "up"):
        s[dirn]["bulk_rtt"] = rtt_stats(ss[dirn])
    s["cc_seen"] = sorted(ss["cc"])
    s["ring_drops"] = num(m.get("ring_drops"))
    # Share of the measured load window in which sluice's lcore thread ran
    # (from /proc/PID/schedstat). Below ~100%, it shared its CPU with other
    # work, and the shaper cannot send while it is not running.
    s["sluice_cpu_pct"] = num(m.get("sluice_cpu_pct") or None)
    s["series"] = {"irtt": irtt, "ping": ping, "t0": t0, "t_load": tl, "t_end": te}
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(s, f, indent=1)
    return s


def fmt(v, nd=1):
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return "%.*f" % (nd, v)
    return str(v)


def digest(s):
    i = s["probes"]["irtt"]
    return ("%s: irtt idle p50 %s ms, loaded p99 %s ms (+%s); goodput down %s%% up %s%% "
            "of payload-equivalent rate" % (
                s["mode"], fmt(i["idle"]["p50"], 2), fmt(i["load"]["p99"]),
                fmt(i["added"]["p99"]), fmt(s["down"]["pct_payload"]),
                fmt(s["up"]["pct_payload"])))


def table(summaries):
    L = []
    m0 = summaries[0]["meta"]
    fq = [s for s in summaries if s["mode"].startswith("fq_codel")]
    af = sorted(set(s["meta"].get("ack_filter", "off") for s in fq))
    ah = sorted(set(s["meta"].get("ack_hold_ms", "0") for s in fq))
    rc = sorted(set(s["meta"].get("rwnd_clamp", "off") for s in fq))

    def hz(iv):
        """'10ms' (irtt) or '0.05' (ping, seconds) -> '100 Hz'."""
        m = re.match(r"^([\d.]+)(us|ms|s)?$", iv or "")
        if not m or float(m.group(1)) <= 0:
            return iv
        unit = {"us": 1e-6, "ms": 1e-3}.get(m.group(2), 1.0)
        return "%g Hz" % (1.0 / (float(m.group(1)) * unit))
    L.append("Shaped %.1f Mbit/s down, %.1f Mbit/s up; %s up + %s down TCP flows (iperf3) "
             "for %.0f s; probes: irtt (UDP, %s) and ping (ICMP, %s); FQ-CoDel "
             "`ack_filter = %s`, `ack_hold = %s ms`, `rwnd_clamp = %s`. "
             "Latency in ms; *added* = loaded minus idle p50; *n* = probes sent idle/loaded." % (
                 float(m0["down_bps"]) / 1e6, float(m0["up_bps"]) / 1e6,
                 m0["flows_up"], m0["flows_down"], float(m0["load_s"]),
                 hz(m0.get("irtt_interval", "10ms")), hz(m0.get("ping_interval", "0.05")),
                 "/".join(af) or "off", "/".join(ah) or "0", "/".join(rc) or "off"))
    L.append("")
    L.append("| mode | probe | n | idle p50 | idle p95 | idle p99 | loaded p50 | loaded p95 | "
             "loaded p99 | **p99 added** | lost (loaded) |")
    L.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for s in summaries:
        for probe in ("irtt", "ping"):
            p = s["probes"][probe]
            L.append("| %s | %s | %s/%s | %s | %s | %s | %s | %s | %s | **%s** | %s%% |" % (
                s["mode"], probe, p["idle"]["n"], p["load"]["n"],
                fmt(p["idle"]["p50"], 2), fmt(p["idle"]["p95"], 2),
                fmt(p["idle"]["p99"], 2), fmt(p["load"]["p50"]), fmt(p["load"]["p95"]),
                fmt(p["load"]["p99"]), fmt(p["added"]["p99"]), fmt(p["load"]["lost_pct"])))
    L.append("")
    L.append("| mode | dir | goodput Mbit/s | % of shaped rate | **% of payload-equivalent rate** "
             "| link utilisation | other on link | drops (by reason) | CE marks | ACKs filtered "
             "| ACKs held | sojourn p50/p99 |")
    L.append("|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|")
    for s in summaries:
        for dirn in ("down", "up"):
            g = s[dirn]
            rs = ", ".join("%s %s" % (k, v) for k, v in sorted(g["drop_reasons"].items()) if v)
            drops = fmt(g["drops"]) + (" (%s)" % rs if rs else "")
            other = None
            if g["link_util_pct"] is not None and g["pct_payload"] is not None:
                other = g["link_util_pct"] - g["pct_payload"]
            soj = "n/a"
            a = g.get("aqm") or {}
            p50 = a.get("sojourn_p50_us", a.get("p50_us"))
            p99 = a.get("sojourn_p99_us", a.get("p99_us"))
            if isinstance(p50, (int, float)) and isinstance(p99, (int, float)):
                soj = "%s/%s ms" % (fmt(p50 / 1e3), fmt(p99 / 1e3))
            L.append("| %s | %s | %.2f | %s%% | **%s%%** | %s%% | %s%% | %s | %s | %s | %s | %s |" % (
                s["mode"], dirn, g["goodput_bps"] / 1e6, fmt(g["pct_raw"]),
                fmt(g["pct_payload"]), fmt(g["link_util_pct"]), fmt(other), drops,
                fmt(g["ce_marks"]), fmt(g.get("ack_filtered")), fmt(g.get("ack_held")), soj))
    L.append("")
    eff = summaries[0]["down"]["payload_eff"]
    L.append("*Payload-equivalent rate* = shaped rate x MSS/(MSS+66) = %.1f%% of it: sluice "
             "shapes Ethernet frames (no FCS), iperf3 counts TCP payload. *Link utilisation* = "
             "bytes sluice sent on that side (kernel veth counters, from 1 s into the load to its "
             "end) / (rate x that time). "
             "*Other on link* = utilisation minus the data frames behind the goodput: the "
             "reverse flows' pure ACKs, the probes, spurious retransmissions. The upstream "
             "carries the four download flows' ACKs (the receivers here send 60-90 per 100 "
             "segments; `--capture` counts them); without the ACK hold they keep its goodput "
             "below 95%% of the payload-equivalent rate when the link is full. *ACKs filtered*: "
             "queued or held pure ACKs that a newer one of the same connection superseded "
             "(`[aqm] ack_filter`). *ACKs held*: pure ACKs that waited in the ACK hold "
             "(`[aqm] ack_hold`; replacements included). "
             "*Sojourn*: sluice's own queueing-time percentiles for the whole mode (histogram "
             "bucket upper edges, within a factor 1.5)." % (100 * eff))
    caps = [s for s in summaries if s["up"].get("capture") and s["down"].get("capture")]
    if caps:
        L.append("")
        L.append("What each link carried (headers captured at the receiving host during the "
                 "load, `--capture`), as % of the shaped rate:")
        L.append("")
        L.append("| mode | dir | seconds | data | pure ACKs | of which with SACK | irtt | ping "
                 "| other | total | ACKs per 100 reverse data segments |")
        L.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for s in caps:
            for dirn, rev in (("down", "up"), ("up", "down")):
                c, r = s[dirn]["capture"], s[rev]["capture"]
                if not c["secs"]:
                    continue
                pc = {k: 100.0 * 8 * c["bytes"][k] / (s[dirn]["rate_bps"] * c["secs"])
                      for k in CAPTURE_KINDS}
                acks = c["frames"]["pure_ack"] + c["frames"]["pure_ack_sack"]
                per = None
                if r["secs"] and r["frames"]["data"]:
                    per = 100.0 * (acks / c["secs"]) / (r["frames"]["data"] / r["secs"])
                L.append("| %s | %s | %.1f | %s%% | %s%% | %s%% | %s%% | %s%% | %s%% | %s%% | %s |" % (
                    s["mode"], dirn, c["secs"], fmt(pc["data"]),
                    fmt(pc["pure_ack"] + pc["pure_ack_sack"]), fmt(pc["pure_ack_sack"]),
                    fmt(pc["irtt"]), fmt(pc["ping"]), fmt(pc["other"]),
                    fmt(sum(pc.values())), fmt(per)))
    L.append("")
    L.append("Bulk flows' smoothed RTT (the senders' `ss -ti` srtt, every %s s in both "
             "namespaces from 1 s into the load; upload flows send from the client, "
             "download flows from the server), ms:" % os.environ.get("BB_SS_INTERVAL", "0.2"))
    pd = m0.get("path_delay_ms", "0")
    if pd not in ("", "0"):
        L.append("")
        L.append("sluice's impair stage added %s ms each way after the shaper "
                 "(`--path-delay`), so the idle RTT includes %d ms of path." % (pd, 2 * int(pd)))
    rb = (m0.get("rcvbuf_up", "0"), m0.get("rcvbuf_down", "0"))  # (one run, all modes)
    if rb != ("0", "0"):
        L.append("")
        L.append("Receive windows clamped at the hosts (`--rcvbuf`, tcp_rmem max, bytes): "
                 "upload receivers %s, download receivers %s (0: the kernel's own)." % rb)
    L.append("")
    L.append("| mode | senders | tcp_ecn | [aqm] extra | dir | samples | p50 | p95 | max |")
    L.append("|---|---|---:|---|---|---:|---:|---:|---:|")
    for s in summaries:
        for dirn in ("up", "down"):
            br = s[dirn].get("bulk_rtt") or {}
            L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                s["mode"], ",".join(s.get("cc_seen") or []) or s["meta"].get("cc", "?"),
                s["meta"].get("tcp_ecn", "?"), s["meta"].get("aqm_extra") or "-", dirn,
                fmt(br.get("n")), fmt(br.get("p50")), fmt(br.get("p95")), fmt(br.get("max"))))
    rd = [fmt(max(0, s["ring_drops"])) if isinstance(s["ring_drops"], int) else "n/a"
          for s in summaries]
    L.append("")
    L.append("Frames lost in the AF_PACKET rx rings (kernel rx minus sluice rx), per mode: %s."
             % ", ".join(rd))
    lp = ["%s %s%%" % (s["mode"], fmt(s.get("sluice_cpu_pct"))) for s in summaries]
    L.append("")
    L.append("Share of the load window in which sluice's polling thread was on a CPU "
             "(/proc schedstat; below 100%% it shared its core with other work, and the "
             "shaper cannot send while descheduled): %s." % ", ".join(lp))
    return "\n".join(L) + "\n"


COLORS = {"fifo": "tab:red", "fq_codel": "tab:blue", "fq_codel_ecn": "tab:green",
          "bridge": "tab:gray"}


def plots(out, summaries):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(summaries)
    fig, axes = plt.subplots(n, 1, figsize=(9, 2.6 * n + 0.6), sharex=True, sharey=True,
                             squeeze=False)
    for ax, s in zip(axes[:, 0], summaries):
        ser = s["series"]
        t0 = ser["t0"]
        for probe, style in (("irtt", "-"), ("ping", ":")):
            pts = [(t - t0, r) for t, r in ser[probe] if r is not None]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, lw=0.8,
                        color=COLORS.get(s["mode"], "k"), alpha=0.9 if probe == "irtt" else 0.6,
                        label="%s %s" % (s["mode"], probe))
        ax.axvspan(ser["t_load"] - t0, ser["t_end"] - t0, color="0.92", zorder=0)
        ax.set_yscale("log")
        ax.set_ylabel("RTT (ms)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
    axes[-1, 0].set_xlabel("time (s); shaded: 4 up + 4 down TCP flows")
    m0 = summaries[0]["meta"]
    fig.suptitle("Latency under load through sluice (%.0f/%.0f Mbit/s down/up)" % (
        float(m0["down_bps"]) / 1e6, float(m0["up_bps"]) / 1e6))
    fig.tight_layout()
    fig.savefig(os.path.join(out, "latency_time.png"), dpi=90)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for s in summaries:
        ser = s["series"]
        for probe, style in (("irtt", "-"), ("ping", ":")):
            for phase, lo, hi, lw in (("loaded", ser["t_load"], ser["t_end"], 1.6),
                                      ("idle", ser["t0"], ser["t_load"], 0.8)):
                v = sorted(r for t, r in ser[probe] if r is not None and lo <= t < hi)
                if not v:
                    continue
                y = [(i + 1) / len(v) for i in range(len(v))]
                ax.step(v, y, style, where="post", lw=lw, color=COLORS.get(s["mode"], "k"),
                        alpha=1.0 if phase == "loaded" else 0.5,
                        label="%s %s %s" % (s["mode"], probe, phase))
    ax.set_xscale("log")
    ax.set_xlabel("RTT (ms)")
    ax.set_ylabel("fraction of probes")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2, loc="lower right")
    ax.set_title("Latency CDF, idle and under load")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "latency_cdf.png"), dpi=90)
    plt.close(fig)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "mode":
        print(digest(analyse_mode(sys.argv[2])))
        return 0
    if len(sys.argv) >= 4 and sys.argv[1] == "report":
        out = sys.argv[2]
        summaries = []
        for mode in sys.argv[3:]:
            path = os.path.join(out, mode, "summary.json")
            summaries.append(json.load(open(path)))
        with open(os.path.join(out, "table.md"), "w") as f:
            f.write(table(summaries))
        try:
            plots(out, summaries)
        except ImportError as e:
            print("bufferbloat: no plots: %s (apt-get install python3-matplotlib)" % e,
                  file=sys.stderr)
        for s in summaries:
            print("result %s p99_added_ms %s" % (s["mode"], fmt(s["probes"]["irtt"]["added"]["p99"])))
            print("result %s goodput_down_pct %s" % (s["mode"], fmt(s["down"]["pct_payload"])))
            print("result %s goodput_up_pct %s" % (s["mode"], fmt(s["up"]["pct_payload"])))
            for dirn in ("up", "down"):
                br = s[dirn].get("bulk_rtt") or {}
                print("result %s bulk_rtt_%s_p50_ms %s" % (s["mode"], dirn, fmt(br.get("p50"))))
                print("result %s bulk_rtt_%s_p95_ms %s" % (s["mode"], dirn, fmt(br.get("p95"))))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
