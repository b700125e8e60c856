#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Attackers for sluice's adversarial end-to-end tests
(tests/e2e/test_adversarial.sh, perf/soak.sh).

  synpcap OUT.pcap N SRCMAC DSTMAC DST PORT
        write N spoofed TCP SYNs from random sources in 198.19.0.0/16
        (inside the test prefix 198.18.0.0/15) toward DST:PORT, for
        tcpreplay. Built with struct, not scapy: 50,000 frames in a second.
  mpsynpcap OUT.pcap N SRCMAC DSTMAC DST PORT
        like synpcap, but every SYN speaks MPTCP: even ones carry
        MP_CAPABLE v1, odd ones MP_JOIN with a random token (no
        connection has it) and nonce, each from its own spoofed source.
  mixpcap OUT.pcap SRCMAC DSTMAC SRC DST PORT
        write a mix of hostile frames toward DST:PORT (scapy): IP fragments
        of TCP (first, middle, last, overlapping, tiny), TCP segments with
        bad checksums (SYNs and data), TCP headers cut short (IP length
        below 20 + 20, data offset past the end, data offset below 5), IP
        headers cut short and IP lengths beyond the frame.
  ooo IFACE SRC SPORT DST DPORT NSEG
        open one connection from SRC:SPORT (an address no kernel owns; the
        caller adds the neighbour entries) with raw frames, then send NSEG
        1-byte segments in descending sequence order, leaving a hole at the
        first byte, and reset the connection. Prints "sent N in S s" or
        "ERR why".
  floods PORT N SECS   server: accept N connections, send on each until it
                       dies or SECS pass
  stalls HOST PORT N SECS
                       client: open N connections with a tiny SO_RCVBUF,
                       never read (a zero window), hold them SECS, close
  listen PORT SECS     server: accept and close every connection for SECS
  connect HOST PORT TIMEOUT
                       one connect() with TIMEOUT seconds; prints
                       "connected S" or "ERR why" (exit 1)
"""
import os
import random
import socket
import struct
import sys
import threading
import time


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def mac(s):
    return bytes(int(x, 16) for x in s.split(":"))


def ip4(a):
    return socket.inet_aton(a)


def tcp4(src, dst, sport, dport, seq, ack, flags, win, payload=b"", opts=b""):
    off = (20 + len(opts)) // 4
    hdr = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, off << 4, flags, win, 0, 0) + opts
    ph = src + dst + struct.pack("!BBH", 0, 6, len(hdr) + len(payload))
    c = csum(ph + hdr + payload)
    return hdr[:16] + struct.pack("!H", c) + hdr[18:] + payload


def ip4hdr(src, dst, plen, ident=0, proto=6):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + plen, ident, 0x4000, 64, proto, 0, src, dst)
    return h[:10] + struct.pack("!H", csum(h)) + h[12:]


def pcap_writer(path):
    f = open(path, "wb")
    f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    def w(frame):
        f.write(struct.pack("<IIII", 0, 0, len(frame), len(frame)) + frame)
    return f, w


def synpcap(out, n, smac, dmac, dst, port):
    f, w = pcap_writer(out)
    eth = mac(dmac) + mac(smac) + b"\x08\x00"
    d = ip4(dst)
    r = random.Random(17)
    mss = struct.pack("!BBH", 2, 4, 1460)
    for i in range(n):
        s = bytes([198, 19, r.randrange(256), r.randrange(1, 255)])
        t = tcp4(s, d, r.randrange(1024, 65536), port, r.getrandbits(32), 0, 0x02, 64240,
                 opts=mss)
        w(eth + ip4hdr(s, d, len(t), ident=i & 0xFFFF) + t)
    f.close()


def mpsynpcap(out, n, smac, dmac, dst, port):
    f, w = pcap_writer(out)
    eth = mac(dmac) + mac(smac) + b"\x08\x00"
    d = ip4(dst)
    r = random.Random(29)
    mss = struct.pack("!BBH", 2, 4, 1460)
    # RFC 8684 3.1: MP_CAPABLE on a SYN, length 4, version 1, H (HMAC-SHA256).
    mpc = bytes([30, 4, 0x01, 0x01])
    for i in range(n):
        s = bytes([198, 19, r.randrange(256), r.randrange(1, 255)])
        if i % 2 == 0:
            opts = mss + mpc
        else:
            # 3.2: MP_JOIN on a SYN, length 12: subtype 1, address ID,
            # the receiver's token, the sender's nonce.
            opts = mss + bytes([30, 12, 0x10, r.randrange(256)]) + \
                struct.pack("!II", r.getrandbits(32), r.getrandbits(32))
        t = tcp4(s, d, r.randrange(1024, 65536), port, r.getrandbits(32), 0, 0x02, 64240,
                 opts=opts)
        w(eth + ip4hdr(s, d, len(t), ident=i & 0xFFFF) + t)
    f.close()


def mixpcap(out, smac, dmac, src, dst, port):
    from scapy.all import Ether, IP, TCP, Raw, fragment, wrpcap
    e = Ether(src=smac, dst=dmac)
    r = random.Random(23)
    frames = []
    for i in range(200):
        sport = 20000 + i
        # fragments of a SYN and of data on an intercepted 4-tuple
        syn = IP(src=src, dst=dst, id=i) / TCP(sport=sport, dport=port, flags="S",
                                                seq=r.getrandbits(32)) / Raw(b"x" * 64)
        frames += [e / f for f in fragment(syn, fragsize=24)]
        data = IP(src=src, dst=dst, id=i + 1000) / TCP(sport=sport, dport=port, flags="PA",
                                                       seq=r.getrandbits(32)) / Raw(b"y" * 600)
        frs = fragment(data, fragsize=200)
        frames += [e / f for f in reversed(frs)]       # last fragment first
        frames.append(e / frs[0])                        # a duplicate first fragment
        # an overlapping tiny fragment at offset 8
        frames.append(e / IP(src=src, dst=dst, id=i + 1000, flags="MF", frag=1, proto=6) /
                      Raw(b"\xff" * 8))
        # bad checksums: a SYN, a data segment, a RST
        for fl, pl in (("S", b""), ("PA", b"z" * 100), ("R", b"")):
            p = e / IP(src=src, dst=dst) / TCP(sport=sport, dport=port, flags=fl,
                                               seq=r.getrandbits(32), chksum=0xDEAD) / Raw(pl)
            frames.append(p)
        # truncated TCP headers: IP says 30 bytes, only 10 of TCP
        tcpb = bytes(TCP(sport=sport, dport=port, flags="S"))[:10]
        frames.append(e / IP(src=src, dst=dst, proto=6, len=30) / Raw(tcpb))
        # data offset past the segment's end and below 5
        for doff in (15, 2):
            frames.append(e / IP(src=src, dst=dst) /
                          TCP(sport=sport, dport=port, flags="S", dataofs=doff) / Raw(b"o" * 8))
        # IP total length beyond the frame, and an IP header cut short
        frames.append(e / IP(src=src, dst=dst, len=1400) / TCP(sport=sport, dport=port, flags="S"))
        frames.append(Ether(bytes(e / IP(src=src, dst=dst) / TCP(sport=sport, dport=port))[:14 + 12]))
        # IHL 15 with options that run past the frame
        frames.append(e / IP(src=src, dst=dst, ihl=15) / Raw(b"\x01" * 8))
    wrpcap(out, frames)
    print(len(frames))


class Link:
    def __init__(self, iface):
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
        self.s.bind((iface, 0))
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.mac = self.s.getsockname()[4]

    def send(self, f):
        while True:
            try:
                return self.s.send(f)
            except BlockingIOError:
                time.sleep(0.001)
            except OSError as e:
                if e.errno != 105:   # ENOBUFS: the veth queue is full, retry
                    raise
                time.sleep(0.001)


def ooo(iface, src, sport, dst, dport, nseg):
    link = Link(iface)
    s, d = ip4(src), ip4(dst)
    # The server's MAC: ask the kernel's neighbour table through a UDP probe
    # would race; the caller passes it in DSTMAC via the environment.
    dmac = mac(os.environ["ADV_DSTMAC"])
    eth = dmac + link.mac + b"\x08\x00"

    def frame(seq, ack, flags, payload=b"", opts=b""):
        t = tcp4(s, d, sport, dport, seq, ack, flags, 65535, payload, opts)
        return eth + ip4hdr(s, d, len(t)) + t

    isn = random.getrandbits(32)
    link.s.settimeout(0.5)
    peer_isn = None
    deadline = time.time() + 10
    while peer_isn is None and time.time() < deadline:
        link.send(frame(isn, 0, 0x02, opts=struct.pack("!BBH", 2, 4, 1460)))
        end = time.time() + 1
        while time.time() < end:
            try:
                f = link.s.recv(2048)
            except socket.timeout:
                break
            if len(f) < 54 or f[23] != 6 or f[26:30] != d or f[30:34] != s:
                continue
            ihl = (f[14] & 15) * 4
            t = f[14 + ihl:]
            sp, dp, seq, ack, _, fl = struct.unpack("!HHIIBB", t[:14])
            if sp == dport and dp == sport and fl & 0x12 == 0x12 and ack == (isn + 1) & 0xFFFFFFFF:
                peer_isn = seq
                break
    if peer_isn is None:
        print("ERR no SYN-ACK")
        return 1
    ack = (peer_isn + 1) & 0xFFFFFFFF
    link.send(frame(isn + 1, ack, 0x10))
    t0 = time.time()
    base = (isn + 1) & 0xFFFFFFFF
    # Descending order, leaving the first byte (offset 0) as a hole.
    for off in range(nseg, 0, -1):
        link.send(frame((base + off) & 0xFFFFFFFF, ack, 0x10, b"o"))
    dt = time.time() - t0
    time.sleep(0.5)
    link.send(frame((base + nseg + 1) & 0xFFFFFFFF, ack, 0x04))
    link.send(frame(base, ack, 0x04))
    print("sent %d in %.2f s" % (nseg, dt))
    return 0


def floods(port, n, secs):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(256)
    ls.settimeout(secs)
    end = time.time() + secs

    def flood(c):
        c.settimeout(1)
        buf = b"z" * 65536
        while time.time() < end:
            try:
                c.send(buf)
            except socket.timeout:
                continue
            except OSError:
                break
        c.close()

    ts = []
    try:
        for _ in range(n):
            c, _ = ls.accept()
            t = threading.Thread(target=flood, args=(c,), daemon=True)
            t.start()
            ts.append(t)
    except OSError:
        pass
    for t in ts:
        t.join(max(0.1, end - time.time() + 2))
    print("flooded %d" % len(ts))


def stalls(host, port, n, secs):
    cs = []
    for _ in range(n):
        c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
        c.settimeout(10)
        try:
            c.connect((host, port))
        except OSError as e:
            print("ERR connect %d: %s" % (len(cs), e))
            break
        cs.append(c)
    time.sleep(secs)
    for c in cs:
        c.close()          # unread data: the kernel resets
    print("stalled %d" % len(cs))


def listen(port, secs):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(1024)
    end = time.time() + secs
    n = 0
    while time.time() < end:
        ls.settimeout(max(0.1, end - time.time()))
        try:
            c, _ = ls.accept()
        except OSError:
            continue
        c.close()
        n += 1
    print("accepted %d" % n)


def connect(host, port, timeout):
    t0 = time.time()
    try:
        c = socket.create_connection((host, port), timeout=timeout)
    except OSError as e:
        print("ERR %s after %.3f s" % (e, time.time() - t0))
        return 1
    dt = time.time() - t0
    c.close()
    print("connected %.3f" % dt)
    return 0


def main(a):
    cmd = a[1]
    if cmd == "synpcap":
        synpcap(a[2], int(a[3]), a[4], a[5], a[6], int(a[7]))
    elif cmd == "mpsynpcap":
        mpsynpcap(a[2], int(a[3]), a[4], a[5], a[6], int(a[7]))
    elif cmd == "mixpcap":
        mixpcap(a[2], a[3], a[4], a[5], a[6], int(a[7]))
    elif cmd == "ooo":
        return ooo(a[2], a[3], int(a[4]), a[5], int(a[6]), int(a[7]))
    elif cmd == "floods":
        floods(int(a[2]), int(a[3]), float(a[4]))
    elif cmd == "stalls":
        stalls(a[2], int(a[3]), int(a[4]), float(a[5]))
    elif cmd == "listen":
        listen(int(a[2]), float(a[3]))
    elif cmd == "connect":
        return connect(a[2], int(a[3]), float(a[4]))
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
