#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Short-connection load for `perf/bench.sh proxy`: one process, selectors,
standard library only.

    proxy_load.py server PORT [--req B] [--resp B]
        Accept connections; on each, read B (--req, 64) bytes, answer with
        --resp (64) bytes, then read until the client closes and close.
        Runs until SIGTERM, or until its parent process goes away.

    proxy_load.py rate HOST PORT [--secs S] [--max N] [--conc C] [--req B] [--resp B] [--mptcp]
        For S seconds, or until N connections completed (--max, 0: no
        limit), keep C connections in flight, each: connect, send the
        request, read the whole reply, close. Prints one JSON line:
        {"conns": completed, "secs": window, "inflight": left at the end,
         "rate": completed/secs, "errors": failed, "p50_ms": .., "p99_ms":
         .., "p999_ms": .., "max_ms": .., "mean_ms": ..} (connect to close).

    proxy_load.py hold HOST PORT N [--secs S] [--req B] [--resp B] [--mptcp]
        Open N connections, do one request/reply on each, keep them open
        and idle; print "held N" (or "held K failed F") on stdout, wait S
        seconds (--secs), then close them all.

    --mptcp (rate, hold) opens the client's sockets as Multipath TCP
    (IPPROTO_MPTCP), as a phone would.

The client closes first, so TIME-WAIT stays on the client's side (and on
the proxy's server leg), as with most request/response protocols.
"""
import errno
import json
import os
import selectors
import signal
import socket
import sys
import time

IPPROTO_MPTCP = 262  # --mptcp (not in Python's socket module before 3.10)


def opt(args, name, default):
    if name in args:
        i = args.index(name)
        v = args[i + 1]
        del args[i:i + 2]
        return type(default)(v)
    return default


def family_of(host):
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def server(port, req, resp):
    sel = selectors.DefaultSelector()
    ls = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    ls.bind(("::", port))
    ls.listen(4096)
    ls.setblocking(False)
    sel.register(ls, selectors.EVENT_READ, None)
    reply = b"r" * resp
    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    parent = os.getppid()
    while not stop and os.getppid() == parent:
        for key, _ in sel.select(0.5):
            if key.data is None:
                for _ in range(64):
                    try:
                        c, _a = ls.accept()
                    except (BlockingIOError, InterruptedError):
                        break
                    except OSError:
                        break
                    c.setblocking(False)
                    sel.register(c, selectors.EVENT_READ, [0])
                continue
            c, st = key.fileobj, key.data
            try:
                b = c.recv(65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                b = b""
            if not b:
                sel.unregister(c)
                c.close()
                continue
            before = st[0]
            st[0] += len(b)
            if before < req <= st[0]:
                try:
                    c.send(reply)  # small: fits in the socket buffer
                except OSError:
                    sel.unregister(c)
                    c.close()
    return 0


class Conn:
    __slots__ = ("s", "t0", "got", "sent")


def rate(host, port, secs, maxn, conc, req, resp, proto=0):
    sel = selectors.DefaultSelector()
    fam = family_of(host)
    request = b"q" * req
    done = errors = 0
    lat = []
    t_start = time.monotonic()
    t_end = t_start + secs

    def start():
        s = socket.socket(fam, socket.SOCK_STREAM, proto)
        s.setblocking(False)
        c = Conn()
        c.s, c.t0, c.got, c.sent = s, time.monotonic(), 0, False
        rc = s.connect_ex((host, port))
        if rc not in (0, errno.EINPROGRESS):
            s.close()
            return False
        sel.register(s, selectors.EVENT_WRITE, c)
        return True

    def finish(c, ok):
        nonlocal done, errors
        sel.unregister(c.s)
        c.s.close()
        if ok:
            done += 1
            lat.append(time.monotonic() - c.t0)
        else:
            errors += 1

    def more():
        return time.monotonic() < t_end and (maxn == 0 or done + len(sel.get_map()) < maxn)

    for _ in range(conc):
        if not start():
            errors += 1
    while sel.get_map():
        now = time.monotonic()
        if now >= t_end:
            break
        for key, ev in sel.select(min(0.2, t_end - now)):
            c = key.data
            if not c.sent:
                err = c.s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err != 0:
                    finish(c, False)
                else:
                    try:
                        c.s.send(request)
                        c.sent = True
                        sel.modify(c.s, selectors.EVENT_READ, c)
                        continue
                    except OSError:
                        finish(c, False)
            else:
                try:
                    b = c.s.recv(65536)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    b = b""
                if not b:
                    finish(c, False)
                    continue
                c.got += len(b)
                if c.got < resp:
                    continue
                finish(c, True)
            if more() and not start():
                errors += 1
        # connections stuck for 5 s count as failed and are replaced
        now = time.monotonic()
        for key in list(sel.get_map().values()):
            c = key.data
            if now - c.t0 > 5.0:
                finish(c, False)
                if more() and not start():
                    errors += 1
    window = time.monotonic() - t_start
    inflight = len(sel.get_map())
    for key in list(sel.get_map().values()):
        key.fileobj.close()
    lat.sort()

    def pct(p):
        return round(1000 * lat[min(len(lat) - 1, int(p * len(lat)))], 2) if lat else None

    print(json.dumps({"conns": done, "secs": round(window, 3), "inflight": inflight,
                      "rate": round(done / window, 1), "errors": errors,
                      "p50_ms": pct(0.5), "p99_ms": pct(0.99),
                      "p999_ms": pct(0.999), "max_ms": pct(1.0),
                      "mean_ms": round(1000 * sum(lat) / len(lat), 2) if lat else None}))
    return 0


def hold(host, port, n, secs, req, resp, proto=0):
    held, failed = [], 0
    request = b"q" * req
    for _ in range(n):
        try:
            s = socket.socket(family_of(host), socket.SOCK_STREAM, proto)
            s.settimeout(5)
            s.connect((host, port))
            s.sendall(request)
            got = 0
            while got < resp:
                b = s.recv(65536)
                if not b:
                    raise OSError("closed")
                got += len(b)
            held.append(s)
        except OSError:
            failed += 1
    print("held %d" % len(held) + (" failed %d" % failed if failed else ""),
          flush=True)
    time.sleep(secs)
    for s in held:
        s.close()
    return 0


def main(argv):
    args = argv[1:]
    req = opt(args, "--req", 64)
    resp = opt(args, "--resp", 64)
    secs = opt(args, "--secs", 3.0)
    conc = opt(args, "--conc", 16)
    maxn = opt(args, "--max", 0)
    proto = 0
    if "--mptcp" in args:
        args.remove("--mptcp")
        proto = IPPROTO_MPTCP
    if len(args) >= 2 and args[0] == "server":
        return server(int(args[1]), req, resp)
    if len(args) >= 3 and args[0] == "rate":
        return rate(args[1], int(args[2]), secs, maxn, conc, req, resp, proto)
    if len(args) >= 4 and args[0] == "hold":
        return hold(args[1], int(args[2]), int(args[3]), secs, req, resp, proto)
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
