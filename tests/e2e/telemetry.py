#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Query one DPDK telemetry v2 command and print the answer as JSON.

usage: telemetry.py FILE_PREFIX COMMAND [KEY.PATH]

With KEY.PATH (dot-separated, e.g. "0.rx"), print only that value of the
command's reply. Exit status 1 if the socket, the command or the key is
missing. Standard library only, so any python3 will do.
"""
import json
import os
import socket
import sys


def runtime_dir(prefix):
    base = os.environ.get("XDG_RUNTIME_DIR", "/tmp") if os.getuid() else "/var/run"
    return os.path.join(base, "dpdk", prefix)


def query(prefix, cmd):
    path = os.path.join(runtime_dir(prefix), "dpdk_telemetry.v2")
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
        s.settimeout(5)
        s.connect(path)
        info = json.loads(s.recv(1024).decode())
        s.send(cmd.encode())
        reply = json.loads(s.recv(int(info.get("max_output_len", 16384))).decode())
    return reply


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    prefix, cmd = argv[1], argv[2]
    try:
        reply = query(prefix, cmd)
    except (OSError, ValueError) as e:
        sys.stderr.write("telemetry.py: %s: %s\n" % (prefix, e))
        return 1
    if cmd.split(",")[0] not in reply or reply[cmd.split(",")[0]] is None:
        sys.stderr.write("telemetry.py: no answer to %s: %s\n" % (cmd, reply))
        return 1
    val = reply[cmd.split(",")[0]]
    if len(argv) > 3:
        for k in argv[3].split("."):
            if not isinstance(val, dict) or k not in val:
                sys.stderr.write("telemetry.py: %s has no key %s\n" % (cmd, argv[3]))
                return 1
            val = val[k]
    print(json.dumps(val))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
