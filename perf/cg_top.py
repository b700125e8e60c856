#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The functions with the most instructions of their own in a callgrind
profile, per packet or per segment: the "top" lines of perf/bench.sh
--instructions (and of its proxy and mptcp modes).

    cg_top.py FILE UNITS NAME UNIT N [IDLE_FILE SCALE]

FILE      a callgrind output file
UNITS     the packets (or segments) the run moved: each function's count
          is divided by it
NAME      the contender, printed on each line
UNIT      the word after "per" (packet, segment)
N         how many functions at most
IDLE_FILE, SCALE
          optional: a profile of the same binary idle; each function is
          charged less SCALE times its idle count (the loops of the run
          over the loops of the idle profile), so polling that found
          nothing does not head the list

Prints "top NAME <per unit> per UNIT <function>" lines, largest first,
down to 0.05 per unit. A file callgrind dumped while running also charges
the callers on the stack at the dump with everything: lines that hold all
of the total are left out. A stripped library's function is named by its
address and object.
"""
import re
import subprocess
import sys

LINE = re.compile(r"^\s*([\d,]+)\s+(?:\([\s\d.]+%\)\s+)?(\S.*?)\s*$")


def own(path):
    """{function: instructions of its own} of one profile."""
    out = subprocess.run(["callgrind_annotate", "--threshold=100", "--auto=no", path],
                         capture_output=True, text=True, check=False).stdout
    fns, total = {}, float("inf")
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        ir = int(m.group(1).replace(",", ""))
        if "PROGRAM TOTALS" in line:
            total = ir
            continue
        if ":" not in m.group(2) or ir >= 0.999 * total:
            continue
        o = re.search(r" \[([^]]*)\]$", m.group(2))
        fn = re.sub(r" \[[^]]*\]$", "", m.group(2)).split(":", 1)[1]
        fn = re.sub(r" \([\d,]+x\)$", "", fn)  # call counts, where shown
        if fn.startswith("0x"):
            fn = "%s in %s" % (hex(int(fn, 16)), o.group(1).rsplit("/", 1)[-1] if o else "?")
        fns[fn] = fns.get(fn, 0) + ir
    return fns


def main(argv):
    if len(argv) not in (6, 8):
        sys.stderr.write(__doc__)
        return 2
    path, units, name, unit, n = argv[1], float(argv[2]), argv[3], argv[4], int(argv[5])
    if units <= 0 or n <= 0:
        return 0
    fns = own(path)
    if len(argv) == 8:
        idle, scale = own(argv[6]), float(argv[7])
        fns = {fn: ir - idle.get(fn, 0) * scale for fn, ir in fns.items()}
    for fn, ir in sorted(fns.items(), key=lambda kv: -kv[1])[:n]:
        if ir / units < 0.05:
            break
        print("top %-22s %8.1f per %s  %s" % (name, ir / units, unit, fn))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
