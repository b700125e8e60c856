#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
Checks mptcp_opt_write() against tshark's MPTCP dissector, an
implementation independent of ours: writer_pcap writes one segment per
option form and prints what each should read as; tshark reads them.

Usage: tshark_writer.py WRITER_PCAP_EXE
Exit 77 (meson: skipped) without tshark.
"""
import os
import shutil
import subprocess
import sys
import tempfile


def norm(v):
    v = v.strip()
    try:
        return str(int(v, 0))
    except ValueError:
        return v.replace(":", "").lower()


def main():
    if shutil.which("tshark") is None:
        print("tshark not installed")
        return 77
    tmp = tempfile.mkdtemp()
    try:
        pcap = os.path.join(tmp, "w.pcap")
        out = subprocess.run([sys.argv[1], pcap], check=True,
                             capture_output=True, text=True).stdout
        want = {}
        fields = []
        for line in out.splitlines():
            num, *pairs = line.split()
            want[num] = dict(p.split("=", 1) for p in pairs)
            for k in want[num]:
                if k not in fields:
                    fields.append(k)
        args = ["tshark", "-r", pcap, "-T", "fields", "-E", "separator=|",
                "-E", "occurrence=a", "-E", "aggregator=,",
                "-e", "frame.number"]
        for f in fields:
            args += ["-e", "tcp.options.mptcp." + f]
        r = subprocess.run(args, check=True, capture_output=True, text=True)
        got = {}
        for line in r.stdout.splitlines():
            v = line.split("|")
            got[v[0]] = dict(zip(fields, v[1:]))
        bad = 0
        for num, exp in want.items():
            for k, v in exp.items():
                g = got.get(num, {}).get(k, "<no frame>")
                gv = ",".join(norm(x) for x in g.split(",")) if g else ""
                wv = ",".join(norm(x) for x in v.split(","))
                if gv != wv:
                    print("frame %s: %s: tshark %r, want %r" % (num, k, g, v))
                    bad += 1
        print("%d frames, %d fields compared, %d mismatches" %
              (len(want), sum(len(e) for e in want.values()), bad))
        return 1 if bad else 0
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
