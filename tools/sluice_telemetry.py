# SPDX-License-Identifier: BSD-3-Clause
"""Read a running sluice's counters from its DPDK telemetry socket.

Shared by sluice-exporter and sluice-top. Standard library only.

    t = Telemetry.open(prefix="sluice")      # /var/run/dpdk/sluice/...
    t.commands()                             # every /sluice/... command
    t.query("/sluice/ports")                 # the reply's value, or None
    snapshot(t)                              # {command: reply} for all
    snapshot(t, pipes=Busiest(100))          # ... but only the busiest pipes
    samples(snap)                            # flat (name, labels, value)

The socket is DPDK's telemetry v2: SOCK_SEQPACKET, a JSON greeting on
connect, then one command per message and one JSON object per reply,
{"<command>": <value>}. A command that needs a parameter it was not given
answers null.
"""
import heapq
import json
import os
import re
import socket
import threading

# Commands never read by a scrape: they change state.
MUTATING = re.compile(r"_(set|del)$")
# Per-subscriber pipes: "/sluice/aqm_pipe,<id>" for id 1..max_pipe_id (ids
# are handed out in order; a removed subscriber's id is free, answers
# null, and is given to a later subscriber, its counters from zero and its
# "gen" one higher), plus the default pipe.
PIPE_CMD = "/sluice/aqm_pipe"
# Every pipe's sent bytes and drops in columns, 128 pipes per call: what
# ranking the subscribers needs, without one call per subscriber.
PIPES_CMD = "/sluice/aqm_pipes"
PIPES_COLS = ("sent_bytes_down", "sent_bytes_up", "drops_down", "drops_up")
PIPES_GEN = "gen"
# The NIC's own counters (bytes, which sluice's per-port counters lack),
# read for every port /sluice/ports lists.
ETHDEV_CMD = "/ethdev/stats"


def runtime_dir(prefix):
    """Where EAL puts a process's runtime files (same rule as DPDK)."""
    if os.getuid() == 0:
        base = "/var/run"
    else:
        base = os.environ.get("XDG_RUNTIME_DIR", "/tmp")
    return os.path.join(base, "dpdk", prefix)


def socket_path(prefix):
    return os.path.join(runtime_dir(prefix), "dpdk_telemetry.v2")


class Telemetry:
    def __init__(self, path, timeout=2.0):
        self.path = path
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.s.settimeout(timeout)
        self.s.connect(path)
        info = json.loads(self.s.recv(16384).decode())
        self.max_len = int(info.get("max_output_len", 16384))

    @classmethod
    def open(cls, prefix="sluice", path=None, timeout=2.0):
        return cls(path or socket_path(prefix), timeout)

    def query(self, cmd):
        self.s.send(cmd.encode())
        reply = json.loads(self.s.recv(self.max_len).decode())
        return reply.get(cmd.split(",", 1)[0])

    def commands(self):
        """Every /sluice/ command the process registered, sorted."""
        return sorted(c for c in (self.query("/") or [])
                      if c.startswith("/sluice/"))

    def close(self):
        self.s.close()


def pipe_rows(t):
    """{id: (sent_bytes_down, sent_bytes_up, drops_down, drops_up)} for
    every subscriber pipe, read page by page from /sluice/aqm_pipes."""
    rows, first = {}, 1
    while first:
        v = t.query("%s,%d" % (PIPES_CMD, first))
        if not isinstance(v, dict):
            break
        cols = [v.get(c) or [] for c in PIPES_COLS]
        gens = v.get(PIPES_GEN) or []
        for i, pid in enumerate(v.get("id") or []):
            rows[int(pid)] = tuple(int(c[i]) for c in cols) + (
                int(gens[i]) if i < len(gens) else 0,)
        nxt = int(v.get("next") or 0)
        first = nxt if nxt > first else 0
    return rows


def busiest(rows, prev, n):
    """Ids of the n pipes that sent the most bytes since prev (rows of an
    earlier pipe_rows(); None: since start), and of the n that dropped the
    most (only those that dropped), in one sorted list. Ties go to the
    lower id, so an idle table always gives the same pipes."""
    zero = (0, 0, 0, 0, 0)
    d = {}
    for pid, r in rows.items():
        p = (prev or {}).get(pid, zero)
        # restarted sluice, or the id went to another subscriber
        if any(a < b for a, b in zip(r[:4], p[:4])) or r[4:] != p[4:]:
            p = zero
        d[pid] = (r[0] + r[1] - p[0] - p[1], r[2] + r[3] - p[2] - p[3])
    top = heapq.nlargest(n, d, key=lambda k: (d[k][0], -k))
    drops = heapq.nlargest(n, d, key=lambda k: (d[k][1], -k))
    return sorted(set(top) | {k for k in drops if d[k][1] > 0})


class Busiest:
    """Which subscriber pipes a snapshot reads in full: every one while
    there are at most n subscribers, else busiest(n) since the previous
    snapshot made with this object (the first one ranks by totals since
    start). Safe to share between threads."""

    def __init__(self, n):
        self.n, self.prev, self.lock = n, None, threading.Lock()

    def choose(self, t, cmds, nsubs):
        if nsubs <= self.n or PIPES_CMD not in cmds:
            return range(1, nsubs + 1)
        rows = pipe_rows(t)
        with self.lock:
            prev, self.prev = self.prev, rows
        return busiest(rows, prev, self.n)


def snapshot(t, pipes=True):
    """{command: reply} for every readable /sluice/ command. pipes: True
    reads "/sluice/aqm_pipe,<id>" for the default pipe and every
    subscriber, False none, a Busiest the default pipe and the subscribers
    it chooses."""
    snap = {}
    cmds = t.commands()
    for c in cmds:
        if MUTATING.search(c) or c in (PIPE_CMD, PIPES_CMD):
            continue
        v = t.query(c)
        if v is not None:
            snap[c] = v
    for port in sorted((snap.get("/sluice/ports") or {}), key=str):
        v = t.query("%s,%s" % (ETHDEV_CMD, port))
        if isinstance(v, dict):
            snap["%s,%s" % (ETHDEV_CMD, port)] = {
                k: x for k, x in v.items() if not k.startswith("q_")}
    if pipes and PIPE_CMD in cmds:
        aqm = snap.get("/sluice/aqm") or {}
        n = int(aqm.get("max_pipe_id", aqm.get("subscribers", 0)))
        ids = range(1, n + 1) if pipes is True else pipes.choose(t, cmds, n)
        for pid in ["default"] + [str(i) for i in ids]:
            v = t.query("%s,%s" % (PIPE_CMD, pid))
            if v is not None:
                snap["%s,%s" % (PIPE_CMD, pid)] = v
    return snap


# ---- flattening into Prometheus samples -----------------------------------
#
# The rule, stable for any command a future stage registers:
#  - "/sluice/<cmd>" gives the metric name prefix "sluice_<cmd>_".
#  - A number (or a string that parses as one) at key path a.b.c gives the
#    metric sluice_<cmd>_a_b_c, except for these levels, which become labels:
#      * the top level of a command in TABLE_LABEL (its children are rows:
#        ports by number, workers by number, stages by name);
#      * a dict under the key "down" or "up" -> label dir;
#      * any dict whose keys are all decimal numbers -> label "index";
#      * a key that ROWS matches: its groups become labels, the key is
#        replaced by the row's name (impair's "pair0_up" -> pair="0",
#        dir="up"), and, where the row names one, the child dict's keys
#        become that label (tcpopt's "options_syn": {"mss": 3} ->
#        sluice_tcpopt_options{segment="syn",kind="mss"} 3).
#  - Other strings in a dict become labels of every number in and below that
#    dict (port driver and faces, a pipe's prefix), except the keys in
#    INFO_KEYS (text that changes: errors), which give
#    sluice_<cmd>_<key>_info{value="..."} 1 instead. A string that is not
#    a number and not a label value ("-") is skipped.
#  - "/sluice/aqm_pipe,<id>" gives sluice_aqm_pipe_* with label pipe="<id>"
#    ("0" for the default pipe).
#  - The commands of KEY_LABEL are one metric each, their keys a label:
#    sluice_malformed{reason="truncated_l2"}.
#  - "/ethdev/stats,<port>" (DPDK's own, per-queue arrays left out) gives
#    sluice_ethdev_stats_* with label port="<port>".
# Names are lowercased, and characters outside [a-z0-9_] become "_".

TABLE_LABEL = {"ports": "port", "workers": "worker", "stages": "stage"}
INFO_KEYS = {"last_error", "error", "status"}
KEY_LABEL = {"malformed": "reason"}
# (key pattern, name part, {label: group}, label for the child dict's keys)
ROWS = [
    (re.compile(r"^(down|up)$"), "", {"dir": 1}, None),
    (re.compile(r"^pair(\d+)_(up|down)$"), "", {"pair": 1, "dir": 2}, None),
    (re.compile(r"^pair(\d+)$"), "", {"pair": 1}, None),
    (re.compile(r"^options_(syn|synack|other)$"), "options", {"segment": 1}, "kind"),
    (re.compile(r"^mptcp_(syn|synack|other)$"), "mptcp", {"segment": 1}, "subtype"),
]
# Values that go up and down, by the end of the metric name; everything
# else counts up. A new stage's gauge is typed "counter" until it is named
# here; its name and labels do not depend on this list.
GAUGE = re.compile(
    r"(_backlog_pkts|_backlog_bytes|_held_pkts|_sojourn_p\d+_us|_mempool_in_use"
    r"|_mempool_baseline|_rate_down|_rate_up|_aqm_subscribers|_aqm_workers"
    r"|_aqm_pipes|_aqm_max_pipe_id|_aqm_pipe_gen"
    r"|^sluice_workers_held|_lcore|_tsc_hz|_cycles_per_packet|_owner_worker"
    r"|_pipe_id|_connections_active|_subflows_active|_entries_active|_engine_connections"
    r"|_state_bytes_in_use|_state_bytes_2_subflows|_mbufs_held|_rcv_window_limit"
    r"|_rcv_pool_bytes|_rcv_offered_bytes"
    r"|_conn_state_bytes|_pair_state_bytes|_impair_pending|_impair_limit"
    r"|_impair_seed|_delay_us|_jitter_us|_reorder_gap_us|_jitter_reorder"
    r"|_ppm|_codel_target_us|_codel_interval_us|_info)$")


def _clean(s):
    return re.sub(r"[^a-z0-9_]", "_", str(s).lower())


def _number(v):
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None


def _walk(out, name, labels, v):
    if isinstance(v, dict):
        labels = dict(labels)
        for k, x in v.items():
            if (isinstance(x, str) and _number(x) is None
                    and k not in INFO_KEYS):
                labels[_clean(k)] = x
        keys = set(v.keys())
        if keys and all(str(k).isdigit() for k in keys):
            for k, x in v.items():
                _walk(out, name, dict(labels, index=str(k)), x)
            return
        for k, x in v.items():
            row = next(((r, m) for r in ROWS for m in [r[0].match(str(k))]
                        if m), None)
            if row is not None and isinstance(x, dict):
                (_, part, groups, child), m = row
                sub = dict(labels, **{lab: m.group(g) for lab, g in groups.items()})
                n = name + ("_" + part if part else "")
                if child is None:
                    _walk(out, n, sub, x)
                else:
                    for ck, cx in x.items():
                        _walk(out, n, dict(sub, **{child: str(ck)}), cx)
                continue
            if isinstance(x, str) and _number(x) is None:
                if k in INFO_KEYS:
                    out.append((name + "_" + _clean(k) + "_info",
                                dict(labels, value=x), 1.0))
                continue
            _walk(out, name + "_" + _clean(k), labels, x)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            _walk(out, name, dict(labels, index=str(i)), x)
    else:
        n = _number(v)
        if n is not None:
            out.append((name, labels, n))


def samples(snap):
    """Flatten a snapshot into [(metric name, {label: value}, float)]."""
    out = []
    for cmd in sorted(snap):
        base, _, param = cmd.partition(",")
        short = _clean(base[len("/sluice/"):])
        name = "sluice_" + short
        v = snap[cmd]
        if not base.startswith("/sluice/"):
            name = "sluice_" + _clean(base.strip("/"))
            _walk(out, name, {"port": param}, v)
        elif short in KEY_LABEL and isinstance(v, dict):
            for k, x in v.items():
                _walk(out, name, {KEY_LABEL[short]: str(k)}, x)
        elif base == PIPE_CMD:
            pid = "0" if param == "default" else param
            _walk(out, name, {"pipe": pid}, v)
        elif short in TABLE_LABEL and isinstance(v, dict):
            top = {k: x for k, x in v.items() if not isinstance(x, dict)}
            _walk(out, name, {}, top)
            for k, x in v.items():
                if isinstance(x, dict):
                    _walk(out, name, {TABLE_LABEL[short]: str(k)}, x)
        else:
            _walk(out, name, {}, v)
    return out


def kind(name):
    """"gauge" or "counter" for a metric name."""
    return "gauge" if GAUGE.search(name) else "counter"
