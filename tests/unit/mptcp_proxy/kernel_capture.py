#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
Capture MPTCP options sent by the Linux kernel and turn them into C
fixtures for test_mptcp_options.c and seeds for tests/fuzz/mptcp_options.

Two namespaces joined by two veth pairs (198.18.1.0/24, 198.18.2.0/24 and
2001:db8:1::/64, 2001:db8:2::/64). The client has a second "subflow"
endpoint (MP_JOIN), the server announces a second address (ADD_ADDR) and
later withdraws it (REMOVE_ADDR); the client marks its subflow backup
(MP_PRIO). Connections: IPv4 plain, IPv4 with DSS checksums, IPv6, and one
closed with unread data (MP_FASTCLOSE, MP_TCPRST). tshark captures on the
first pair and dissects every packet; its values (an implementation
independent of ours) go into the fixtures next to the raw option bytes.

Run as root:  /usr/bin/python3 tests/unit/mptcp_proxy/kernel_capture.py
Writes tests/unit/mptcp_proxy/kernel_options.h and the fuzz seeds
tests/fuzz/mptcp_options/corpus/kernel_*. Needs ip, tshark, scapy and a
kernel with MPTCP.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
TAG = "mpcap%d" % os.getpid()
NS_C, NS_S = TAG + "c", TAG + "s"
PY = "/usr/bin/python3"

FIELDS = [
    "frame.number", "tcp.flags", "tcp.options.mptcp.subtype",
    "tcp.options.mptcp.version", "tcp.options.mptcp.flags",
    "tcp.options.mptcp.sendkey", "tcp.options.mptcp.recvkey",
    "tcp.options.mptcp.recvtok", "tcp.options.mptcp.sendrand",
    "tcp.options.mptcp.sendtrunchmac", "tcp.options.mptcp.sendhmac",
    "tcp.options.mptcp.addrid", "tcp.options.mptcp.backup.flag",
    "tcp.options.mptcp.rawdataack", "tcp.options.mptcp.rawdataseqno",
    "tcp.options.mptcp.subflowseqno", "tcp.options.mptcp.datalvllen",
    "tcp.options.mptcp.checksum", "tcp.options.mptcp.datafin.flag",
    "tcp.options.mptcp.echo", "tcp.options.mptcp.ipv4",
    "tcp.options.mptcp.ipv6", "tcp.options.mptcp.port",
    "tcp.options.mptcp.addaddrtrunchmac", "tcp.options.mptcp.rst_reason",
    "mptcp.expected_token", "mptcp.expected_idsn", "tcp.option_len",
]

SERVER = r'''
import socket, sys, time
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(fam, socket.SOCK_STREAM, 262)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(8)
print("ready", flush=True)
for mode in sys.argv[3:]:
    c, _ = s.accept()
    if mode == "unread":
        c.sendall(b"s" * 3000); time.sleep(1.5); c.close(); continue
    n = 0
    while True:
        b = c.recv(65536)
        if not b: break
        n += len(b)
    c.sendall(b"ok %d" % n); c.close()
'''

CLIENT = r'''
import socket, sys, time
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
mode = sys.argv[3]
c = socket.socket(fam, socket.SOCK_STREAM, 262)
c.connect((sys.argv[1], int(sys.argv[2])))
if mode == "unread":
    time.sleep(1.0)                       # data arrives, never read
    c.close(); sys.exit(0)
c.sendall(b"x" * 5)                       # first data: MP_CAPABLE with data
time.sleep(1.0)                           # MP_JOIN, ADD_ADDR
for i in range(20):
    c.sendall(bytes([i]) * 1000); time.sleep(0.05)
time.sleep(float(sys.argv[4]) if len(sys.argv) > 4 else 0)
c.shutdown(socket.SHUT_WR)                # DATA_FIN
print(c.recv(100).decode(), flush=True)
c.close()
'''


def sh(*args, check=True):
    r = subprocess.run(list(args), capture_output=True, text=True)
    if check and r.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(args), r.stderr))
    return r.stdout


def nsx(ns, *args, check=True):
    return sh("ip", "netns", "exec", ns, *args, check=check)


def setup():
    for ns in (NS_C, NS_S):
        sh("ip", "netns", "add", ns)
        nsx(ns, "sysctl", "-qw", "net.mptcp.enabled=1",
            "net.ipv6.conf.all.accept_dad=0",
            "net.ipv6.conf.default.accept_dad=0")
        sh("ip", "-n", ns, "link", "set", "lo", "up")
    for i in (1, 2):
        sh("ip", "-n", NS_C, "link", "add", "c%d" % i, "type", "veth",
           "peer", "name", "s%d" % i, "netns", NS_S)
        for ns, dev, host in ((NS_C, "c%d" % i, 1), (NS_S, "s%d" % i, 2)):
            nsx(ns, "ethtool", "-K", dev, "tx", "off", "tso", "off",
                "gso", "off", "gro", "off", check=False)
            sh("ip", "-n", ns, "addr", "add", "198.18.%d.%d/24" % (i, host),
               "dev", dev)
            sh("ip", "-n", ns, "addr", "add", "2001:db8:%d::%d/64" % (i, host),
               "dev", dev, "nodad")
            sh("ip", "-n", ns, "link", "set", dev, "up")
    for ns in (NS_C, NS_S):
        sh("ip", "-n", ns, "mptcp", "limits", "set", "subflows", "4",
           "add_addr_accepted", "4")
    sh("ip", "-n", NS_C, "mptcp", "endpoint", "add", "198.18.2.1",
       "dev", "c2", "id", "5", "subflow")
    sh("ip", "-n", NS_C, "mptcp", "endpoint", "add", "2001:db8:2::1",
       "dev", "c2", "id", "6", "subflow")
    sh("ip", "-n", NS_S, "mptcp", "endpoint", "add", "198.18.2.2",
       "id", "7", "signal")
    sh("ip", "-n", NS_S, "mptcp", "endpoint", "add", "2001:db8:2::2",
       "id", "8", "port", "10080", "signal")


def cleanup():
    for ns in (NS_C, NS_S):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def run_conn(dst, port, mode, after=None, linger="0"):
    srv = subprocess.Popen(["ip", "netns", "exec", NS_S, PY, "-c", SERVER,
                            dst, str(port), mode],
                           stdout=subprocess.PIPE, text=True)
    srv.stdout.readline()
    cli = subprocess.Popen(["ip", "netns", "exec", NS_C, PY, "-c", CLIENT,
                            dst, str(port), mode, linger],
                           stdout=subprocess.PIPE, text=True)
    if after:
        time.sleep(1.5)
        after()
    cli.wait(timeout=30)
    srv.wait(timeout=30)
    time.sleep(0.3)


def capture(pcap):
    cap = subprocess.Popen(["ip", "netns", "exec", NS_C, "tshark", "-q",
                            "-i", "c1", "-i", "c2", "-w", pcap,
                            "-f", "tcp"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True)
    # tshark says "Capturing on ..." once it captures; a slow start would
    # miss the first handshake.
    line = ""
    deadline = time.time() + 30
    while "Capturing on" not in line and time.time() < deadline:
        line = cap.stderr.readline()
    time.sleep(0.5)
    try:
        run_conn("198.18.1.2", 8001, "plain")

        def prio_and_remove():
            sh("ip", "-n", NS_C, "mptcp", "endpoint", "change", "id", "5",
               "backup")
            time.sleep(0.3)
            sh("ip", "-n", NS_S, "mptcp", "endpoint", "del", "id", "7")
        run_conn("198.18.1.2", 8002, "plain", prio_and_remove, "1.0")
        sh("ip", "-n", NS_S, "mptcp", "endpoint", "add", "198.18.2.2",
           "id", "7", "signal")
        sh("ip", "-n", NS_C, "mptcp", "endpoint", "change", "id", "5",
           "nobackup")
        nsx(NS_C, "sysctl", "-qw", "net.mptcp.checksum_enabled=1")
        run_conn("198.18.1.2", 8003, "plain")
        nsx(NS_C, "sysctl", "-qw", "net.mptcp.checksum_enabled=0")
        # Withdraw the IPv4 announcement so that the IPv6 one (with a
        # port) is the one sent.
        sh("ip", "-n", NS_S, "mptcp", "endpoint", "del", "id", "7")
        run_conn("2001:db8:1::2", 8004, "plain")
        run_conn("198.18.1.2", 8005, "unread")
    finally:
        time.sleep(1.0)
        cap.terminate()
        cap.wait(timeout=10)


def dissect(pcap):
    args = ["tshark", "-r", pcap, "-T", "fields", "-E", "separator=|",
            "-E", "occurrence=a", "-E", "aggregator=;",
            "-o", "mptcp.analyze_mptcp:TRUE",
            "-o", "mptcp.relative_sequence_numbers:FALSE",
            "-o", "tcp.relative_sequence_numbers:FALSE",
            "-Y", "tcp.options.mptcp.subtype"]
    for f in FIELDS:
        args += ["-e", f]
    out = {}
    for line in sh(*args).splitlines():
        v = line.split("|")
        out[int(v[0])] = dict(zip(FIELDS, v))
    return out


def main():
    if os.geteuid() != 0:
        sys.exit("run as root")
    from scapy.all import rdpcap, TCP
    tmp = tempfile.mkdtemp()
    pcap = os.path.join(tmp, "kernel_mptcp.pcapng")
    try:
        setup()
        capture(pcap)
    finally:
        cleanup()
    tsh = dissect(pcap)
    rows = []
    for num, pkt in enumerate(rdpcap(pcap), 1):
        if num not in tsh or TCP not in pkt:
            continue
        tcp = bytes(pkt[TCP])
        doff = (tcp[12] >> 4) * 4
        t = dict(tsh[num])
        t["ports"] = frozenset((pkt[TCP].sport, pkt[TCP].dport))
        rows.append((num, tcp[13], tcp[20:doff], t, tcp[doff:]))
    write_header(rows)
    write_seeds(rows)
    shutil.rmtree(tmp)
    print("%d segments with MPTCP options" % len(rows))


def cval(s):
    """tshark number (decimal or 0x hex) -> C literal, or 0 if absent."""
    if not s:
        return "0"
    s = s.split(";")[0]
    if s in ("True", "False"):
        return "1" if s == "True" else "0"
    if s.startswith("0x"):
        return s + "ULL"
    return s + "ULL"


def write_header(rows):
    # Keep one segment per distinct shape (subtype, TCP flags, option bytes
    # length) plus every segment that carries more than one MPTCP option.
    # Start at the first MP_CAPABLE SYN: the test verifies the first
    # connection's handshake, and needs all of it.
    first = next(i for i, r in enumerate(rows)
                 if r[3]["tcp.options.mptcp.subtype"] == "0" and r[1] == 0x02)
    rows = rows[first:]
    conn = rows[0][3]["ports"]
    # The MP_JOIN SYN, SYN/ACK and ACK kept must be one subflow's, so that
    # the test can verify the HMACs: that of the first SYN/ACK.
    join = next(r[3]["ports"] for r in rows
                if r[3]["tcp.options.mptcp.subtype"] == "1" and r[1] == 0x12)
    # The first DSS mapping kept is the first connection's first one, at
    # IDSN + 1.
    dss = next(r for r in rows if r[3]["ports"] == conn and
               r[3]["tcp.options.mptcp.rawdataseqno"] != "")
    seen, keep = set(), [dss]
    seen.add((dss[3]["tcp.options.mptcp.subtype"], dss[1],
              dss[3]["tcp.option_len"], dss[3]["tcp.options.mptcp.flags"]))
    for r in rows:
        num, flags, opts, t, _ = r
        if t["tcp.options.mptcp.subtype"] == "1" and t["ports"] != join:
            continue
        key = (t["tcp.options.mptcp.subtype"], flags,
               t["tcp.option_len"], t["tcp.options.mptcp.flags"])
        if key in seen:
            continue
        seen.add(key)
        keep.append(r)
    L = []
    L.append("/* SPDX-License-Identifier: BSD-3-Clause */")
    L.append("/*")
    L.append(" * Generated by tests/unit/mptcp_proxy/kernel_capture.py: TCP option")
    L.append(" * areas the Linux kernel's MPTCP sent, captured with tshark, and the")
    L.append(" * values tshark's own MPTCP dissector read from them. Do not edit.")
    L.append(" * Kernel: %s" % os.uname().release)
    L.append(" */")
    L.append("#ifndef KERNEL_OPTIONS_H")
    L.append("#define KERNEL_OPTIONS_H")
    L.append("#include <stdint.h>")
    L.append("struct kernel_seg {")
    L.append("\tuint8_t tcp_flags;")
    L.append("\tuint8_t len;")
    L.append("\tuint8_t opts[40];")
    L.append("\tconst char *subtypes;   /* tshark: MPTCP subtypes, ';' separated */")
    L.append("\tuint64_t send_key, recv_key, trunc_hmac, data_ack, dsn, addaddr_hmac;")
    L.append("\tuint32_t token, nonce, ssn;")
    L.append("\tuint16_t data_len, csum, port;")
    L.append("\tuint8_t addr_id, backup, data_fin, echo, rst_reason;")
    L.append("\tuint64_t expected_idsn; /* tshark: from the key in this segment */")
    L.append("\tuint32_t expected_token;")
    L.append("\tconst char *hmac;       /* tshark: full HMAC, hex, or \"\" */")
    L.append("\tconst char *addr;       /* tshark: ADD_ADDR address, or \"\" */")
    L.append("};")
    L.append("static const struct kernel_seg kernel_segs[] = {")
    for num, flags, opts, t, _ in keep:
        g = lambda f: cval(t.get("tcp.options.mptcp." + f, ""))
        L.append("\t{ /* frame %d */" % num)
        L.append("\t\t.tcp_flags = 0x%02x, .len = %d," % (flags, len(opts)))
        b = ", ".join("0x%02x" % x for x in opts)
        L.append("\t\t.opts = { %s }," % b)
        L.append('\t\t.subtypes = "%s",' % t["tcp.options.mptcp.subtype"])
        L.append("\t\t.send_key = %s, .recv_key = %s, .trunc_hmac = %s," %
                 (g("sendkey"), g("recvkey"), g("sendtrunchmac")))
        L.append("\t\t.data_ack = %s, .dsn = %s, .addaddr_hmac = %s," %
                 (g("rawdataack"), g("rawdataseqno"), g("addaddrtrunchmac")))
        L.append("\t\t.token = %s, .nonce = %s, .ssn = %s," %
                 (g("recvtok"), g("sendrand"), g("subflowseqno")))
        L.append("\t\t.data_len = %s, .csum = %s, .port = %s," %
                 (g("datalvllen"), g("checksum"), g("port")))
        L.append("\t\t.addr_id = %s, .backup = %s, .data_fin = %s, .echo = %s,"
                 " .rst_reason = %s," % (g("addrid"), g("backup.flag"),
                                         g("datafin.flag"), g("echo"),
                                         g("rst_reason")))
        L.append("\t\t.expected_idsn = %s, .expected_token = %s," %
                 (cval(t["mptcp.expected_idsn"]),
                  cval(t["mptcp.expected_token"])))
        hm = t["tcp.options.mptcp.sendhmac"].split(";")[0].replace(":", "")
        L.append('\t\t.hmac = "%s",' % hm)
        ad = (t["tcp.options.mptcp.ipv4"] or t["tcp.options.mptcp.ipv6"])
        L.append('\t\t.addr = "%s",' % ad.split(";")[0])
        L.append("\t},")
    L.append("};")
    write_csum(L, rows)
    L.append("#endif")
    with open(os.path.join(HERE, "kernel_options.h"), "w") as f:
        f.write("\n".join(L) + "\n")
    print("%d fixtures" % len(keep))


def dss_csum_map(opts):
    """(dsn, ssn, data_len, csum) of a DSS mapping with a checksum, or None.
    Only locates the fields; the checksum itself is the kernel's."""
    i = 0
    while i + 1 < len(opts):
        k = opts[i]
        if k in (0, 1):
            i += 1
            continue
        ln = opts[i + 1]
        if k == 30 and ln >= 4 and opts[i + 2] >> 4 == 2:
            f = opts[i + 3]
            q = i + 4
            if f & 1:
                q += 8 if f & 2 else 4
            if f & 4:
                w = 8 if f & 8 else 4
                if i + ln == q + w + 8:
                    dsn = int.from_bytes(opts[q:q + w], "big")
                    ssn = int.from_bytes(opts[q + w:q + w + 4], "big")
                    dl = int.from_bytes(opts[q + w + 4:q + w + 6], "big")
                    cs = int.from_bytes(opts[q + w + 6:q + w + 8], "big")
                    return (w, dsn, ssn, dl, cs)
        if ln < 2:
            break
        i += ln
    return None


def write_csum(L, rows):
    # DSS checksums the kernel computed, with the data they cover: the
    # mapping must cover exactly this segment's payload (RFC 8684 §3.3.1).
    L.append("struct kernel_csum {")
    L.append("\tuint64_t dsn;          /* 64-bit on the wire */")
    L.append("\tuint32_t ssn;")
    L.append("\tuint16_t data_len, csum, payload_len;")
    L.append("\tconst uint8_t *payload;")
    L.append("};")
    out, lens = [], set()
    for num, flags, opts, t, payload in rows:
        m = dss_csum_map(opts)
        if not m or m[0] != 8 or m[3] != len(payload) or m[3] in lens:
            continue
        lens.add(m[3])
        out.append((num, m, payload))
        if len(out) == 3:
            break
    for num, m, payload in out:
        L.append("static const uint8_t kernel_payload_%d[] = {" % num)
        for j in range(0, len(payload), 16):
            L.append("\t" + ", ".join("0x%02x" % x for x in payload[j:j + 16]) + ",")
        L.append("};")
    L.append("static const struct kernel_csum kernel_csums[] = {")
    for num, m, payload in out:
        L.append("\t{ /* frame %d */ .dsn = 0x%016xULL, .ssn = %d, .data_len = %d,"
                 " .csum = 0x%04x, .payload_len = %d, .payload = kernel_payload_%d },"
                 % (num, m[1], m[2], m[3], m[4], len(payload), num))
    L.append("};")


def write_seeds(rows):
    # Fuzz input layout (tests/fuzz/mptcp_options/fuzz_mptcp_options.c):
    # byte 0 TCP flags, then the option area.
    d = os.path.join(ROOT, "tests", "fuzz", "mptcp_options", "corpus")
    os.makedirs(d, exist_ok=True)
    seen = set()
    for num, flags, opts, t, _ in rows:
        data = bytes([flags]) + opts
        key = (t["tcp.options.mptcp.subtype"], flags, t["tcp.option_len"],
               t["tcp.options.mptcp.flags"])
        if key in seen:
            continue
        seen.add(key)
        with open(os.path.join(d, "kernel_%03d" % len(seen)), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
