#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Forged MP_JOINs for tests/e2e/test_mptcp.sh (RFC 8684 section 3.2).
Run in the client namespace; frames go out of IFACE from a spoofed
source address SRC that no kernel owns, so the answers reach only this
script (the client's kernel drops them: not its address, no forwarding).
The server's side needs a neighbour entry sending SRC to IFACE's MAC.

  mptcp_join.py unknown-token IFACE SRC DST DPORT DSTMAC
      A SYN with MP_JOIN whose token no connection has, sent up to three
      times: prints "synack=N rst=N" (answers seen).
  mptcp_join.py bad-hmac IFACE SRC DST DPORT DSTMAC
      Opens a real MPTCP connection to DST:DPORT from the kernel (the
      server must accept and hold it), reads the answerer's key from its
      MP_CAPABLE SYN-ACK and derives the token (the most significant 32
      bits of SHA-256 of the key, section 3.2). A SYN with MP_JOIN and
      that token must draw a SYN-ACK with MP_JOIN; the third ACK then
      carries a wrong HMAC and must draw a RST. Prints "token=HEX
      synack=N rst=N joined=N" (joined: SYN-ACKs that carried MP_JOIN).
"""
import hashlib
import os
import random
import socket
import sys
import time

from scapy.all import AsyncSniffer, Ether, IP, TCP, conf, get_if_hwaddr, sendp

conf.verb = 0
IPPROTO_MPTCP = 262
MPTCP = 30


def mptcp_opts(pkt):
    """The values (bytes after kind and length) of pkt's MPTCP options."""
    return [v for k, v in pkt[TCP].options if k == MPTCP and isinstance(v, bytes)]


def join_syn(token, nonce, addr_id=5):
    # subtype 1 (MP_JOIN), B=0; address ID; receiver's token; our nonce
    return (MPTCP, bytes([0x10, addr_id]) + token + nonce.to_bytes(4, "big"))


def replies(iface, src, dst, sport, got):
    """A started sniffer that appends the answers to (src, sport) to got."""
    sn = AsyncSniffer(iface=iface, store=False, prn=got.append, lfilter=lambda p: (
        IP in p and TCP in p and p[IP].src == dst and p[IP].dst == src
        and p[TCP].dport == sport))
    sn.start()
    time.sleep(0.3)
    return sn


def joined(pkts):
    """SYN-ACKs that carry MP_JOIN."""
    return sum(1 for p in pkts if p[TCP].flags.S and p[TCP].flags.A
               and any(v and v[0] >> 4 == 1 for v in mptcp_opts(p)))


def frame(iface, dstmac, src, dst):
    return Ether(src=get_if_hwaddr(iface), dst=dstmac) / IP(src=src, dst=dst)


def count(pkts):
    synack = sum(1 for p in pkts if p[TCP].flags.S and p[TCP].flags.A)
    rst = sum(1 for p in pkts if p[TCP].flags.R)
    return synack, rst


def unknown_token(iface, src, dst, dport, dstmac):
    sport = random.randint(20000, 60000)
    token = os.urandom(4)
    got = []
    sn = replies(iface, src, dst, sport, got)
    syn = frame(iface, dstmac, src, dst) / TCP(
        sport=sport, dport=dport, flags="S", seq=random.getrandbits(32),
        options=[("MSS", 1460), ("SAckOK", b""), join_syn(token, random.getrandbits(32))])
    for _ in range(3):
        sendp(syn, iface=iface)
        time.sleep(1)
        if got:
            break
    time.sleep(0.5)   # anything more it would send
    sn.stop()
    synack, rst = count(got)
    print("token=%s synack=%d rst=%d" % (token.hex(), synack, rst))


def bad_hmac(iface, src, dst, dport, dstmac):
    # The real connection, and its MP_CAPABLE SYN-ACK seen on the wire.
    cap = AsyncSniffer(iface=iface, store=True, lfilter=lambda p: (
        IP in p and TCP in p and p[IP].src == dst and p[TCP].sport == dport
        and p[TCP].flags.S and p[TCP].flags.A))
    cap.start()
    time.sleep(0.2)
    c = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
    c.settimeout(5)
    c.connect((dst, dport))
    c.sendall(b"hold")
    time.sleep(0.5)
    key = None
    for p in cap.stop():
        for v in mptcp_opts(p):
            if len(v) >= 10 and v[0] >> 4 == 0:     # MP_CAPABLE with a key
                key = v[2:10]
    if key is None:
        print("token=none synack=0 rst=0 joined=0 (no MP_CAPABLE SYN-ACK seen)")
        return
    token = hashlib.sha256(key).digest()[:4]

    sport = random.randint(20000, 60000)
    isn = random.getrandbits(32)
    got = []
    sn = replies(iface, src, dst, sport, got)
    base = frame(iface, dstmac, src, dst)
    syn = base / TCP(sport=sport, dport=dport, flags="S", seq=isn,
                     options=[("MSS", 1460), ("SAckOK", b""),
                              join_syn(token, random.getrandbits(32))])
    synack = None
    for _ in range(3):
        sendp(syn, iface=iface)
        deadline = time.monotonic() + 1
        while time.monotonic() < deadline and synack is None:
            time.sleep(0.05)
            synack = next((p for p in got if p[TCP].flags.S and p[TCP].flags.A), None)
        if synack is not None:
            break
    if synack is not None:
        # The third ACK with MP_JOIN and an HMAC of 20 random bytes.
        ack = base / TCP(sport=sport, dport=dport, flags="A", seq=isn + 1,
                         ack=synack[TCP].seq + 1,
                         options=[(MPTCP, bytes([0x10, 0]) + os.urandom(20))])
        sendp(ack, iface=iface)
    time.sleep(1.5)
    sn.stop()
    sa, rst = count(got)
    print("token=%s synack=%d rst=%d joined=%d" % (token.hex(), sa, rst, joined(got)))
    c.close()


def main(a):
    if len(a) == 6 and a[0] in ("unknown-token", "bad-hmac"):
        fn = unknown_token if a[0] == "unknown-token" else bad_hmac
        fn(a[1], a[2], a[3], int(a[4]), a[5])
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
