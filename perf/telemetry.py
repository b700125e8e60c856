#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A small DPDK telemetry (v2) client for the sluice benchmarks.

    telemetry.py SOCKET CMD [CMD...]          print each reply as JSON
    telemetry.py SOCKET --wait SECONDS        wait until the socket answers
    telemetry.py SOCKET --sample PORTS...     one line: "<ns> <tx> <rx>"

--sample reads /ethdev/stats,P for every port P given and prints the wall
clock (CLOCK_MONOTONIC, ns) taken half-way between the first and the last
query, with the summed opackets (tx) and ipackets (rx). The same command
works for sluice and testpmd, so both are measured by the same counters.
Add --sluice to also append sluice's own /sluice/totals tx and rx.

    telemetry.py SOCKET --stage NAME          one line: "<cycles> <packets> <tsc_hz>"

--stage reads /sluice/stages (sluice with [sluice] stage_cycles = on) for
the stage NAME: TSC cycles spent in its burst calls and the packets given
to them, summed over workers, and the TSC rate.
"""
import json
import os
import socket
import sys
import time

# A contender under valgrind (perf/bench.sh --instructions) answers slowly.
TIMEOUT = float(os.environ.get("BENCH_TELEMETRY_TIMEOUT", "2"))


class Telemetry:
    def __init__(self, path, timeout=None):
        timeout = TIMEOUT if timeout is None else max(timeout, TIMEOUT)
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.s.settimeout(timeout)
        self.s.connect(path)
        info = json.loads(self.s.recv(16384).decode())
        self.max_len = int(info.get("max_output_len", 16384))

    def query(self, cmd):
        self.s.send(cmd.encode())
        reply = json.loads(self.s.recv(self.max_len).decode())
        return reply.get(cmd.split(",", 1)[0])

    def close(self):
        self.s.close()


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    path, args = argv[1], argv[2:]
    if args[0] == "--wait":
        deadline = time.monotonic() + float(args[1])
        while True:
            try:
                t = Telemetry(path, timeout=1.0)
                t.query("/info")
                t.close()
                return 0
            except (OSError, ValueError):
                if time.monotonic() > deadline:
                    return 1
                time.sleep(0.1)
    t = Telemetry(path)
    if args[0] == "--sample":
        sluice = "--sluice" in args
        ports = [int(p) for p in args[1:] if p != "--sluice"]
        t0 = time.monotonic_ns()
        tx = rx = 0
        for p in ports:
            st = t.query("/ethdev/stats,%d" % p)
            tx += int(st["opackets"])
            rx += int(st["ipackets"])
        t1 = time.monotonic_ns()
        out = ["%d" % ((t0 + t1) // 2), "%d" % tx, "%d" % rx]
        if sluice:
            tot = t.query("/sluice/totals")
            out += ["%d" % tot["tx"], "%d" % tot["rx"]]
        print(" ".join(out))
    elif args[0] == "--stage":
        st = t.query("/sluice/stages")
        if not st or args[1] not in st:
            sys.stderr.write("no stage %r in /sluice/stages\n" % args[1])
            return 1
        one = st[args[1]]
        print("%d %d %d" % (one["cycles"], one["packets"], st["tsc_hz"]))
    else:
        for cmd in args:
            print(json.dumps(t.query(cmd)))
    t.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
