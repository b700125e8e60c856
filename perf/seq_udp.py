# SPDX-License-Identifier: BSD-3-Clause
"""A UDP stream with sequence numbers through sluice, on raw sockets.

  seq_udp.py send IFACE RATE_PPS STOPFILE DST_FIRST NDST
      Ethernet frames from 198.18.255.1 to NDST subscriber addresses
      (198.x.y.z from index DST_FIRST, as perf/subscribers.sh numbers
      them), round robin, one sequence number per destination, at
      RATE_PPS, until STOPFILE exists. Prints "sent N".
  seq_udp.py recv IFACE SECONDS_IDLE
      Counts what arrives until nothing came for SECONDS_IDLE once
      something did, and prints "received N lost N reordered N": per
      destination, a number below the highest seen is reordered, a gap
      is lost (a duplicate counts as reordered).

Standard library only; run inside the namespace that owns IFACE.
"""
import os
import socket
import struct
import sys
import time

ETH_P_ALL = 3
MAGIC = b"SLSQ"


def addr(i):
    return bytes((198, 18 + (i >> 16), (i >> 8) & 255, i & 255))


def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s & 0xffff) + (s >> 16)
    s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def frame(dst_i, seq):
    payload = MAGIC + struct.pack("!II", dst_i, seq) + b"\0" * 50
    udp = struct.pack("!HHHH", 5001, 6001, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                     bytes((198, 18, 255, 1)), addr(dst_i))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return b"\x02\0\0\0\0\x01" + b"\x02\0\0\0\0\x02" + b"\x08\x00" + ip + udp


def send(iface, pps, stopfile, first, ndst):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    seq = [0] * ndst
    n, t0, k = 0, time.time(), 0
    while not os.path.exists(stopfile):
        due = t0 + n / pps
        now = time.time()
        if due > now:
            time.sleep(min(due - now, 0.01))
            continue
        s.send(frame(first + k, seq[k]))
        seq[k] += 1
        k = (k + 1) % ndst
        n += 1
    print("sent %d" % n, flush=True)


def recv(iface, idle):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    s.settimeout(0.2)
    top, got, lost, reord = {}, 0, 0, 0
    last = None
    while True:
        try:
            f = s.recv(2048)
        except socket.timeout:
            if last is not None and time.time() - last > idle:
                break
            continue
        if len(f) < 14 + 20 + 8 + 12 or f[42:46] != MAGIC:
            continue
        last = time.time()
        d, q = struct.unpack("!II", f[46:54])
        got += 1
        hi = top.get(d, -1)
        if q > hi:
            lost += q - hi - 1
            top[d] = q
        else:
            reord += 1
            lost -= 1  # counted as lost when the gap opened
    print("received %d lost %d reordered %d" % (got, max(lost, 0), reord), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "send":
        send(sys.argv[2], float(sys.argv[3]), sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))
    else:
        recv(sys.argv[2], float(sys.argv[3]))
