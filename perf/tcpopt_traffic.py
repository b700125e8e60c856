#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Traffic for perf/bench.sh tcpopt: two pcaps, one per port, that net_pcap
replays forever (infinite_rx=1).

    tcpopt_traffic.py syn|data OUT_PORT0 OUT_PORT1 [FLOWS]

syn:  port 0 sends SYNs, port 1 SYN/ACKs, with the options Linux sends
      (MSS, SACK-permitted, timestamps, NOP, window scale). MSS is 1460
      over IPv4 and 1440 over IPv6 (every 4th flow), both above a 1400
      clamp, so every segment is rewritten.
data: both ports send established-flow segments with NOP NOP TS: pure
      ACKs (66 bytes) and 64-byte data segments (130 bytes), alternating.
Addresses from 198.18.0.0/15 and 2001:db8::/32; checksums are valid.
"""
import sys

from scapy.all import IP, IPv6, TCP, Ether, PcapWriter, Raw

C_MAC, S_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02"


def frame(kind, i, up):
    v6 = i % 4 == 3
    if v6:
        c, s = "2001:db8:1::%x" % i, "2001:db8:2::1"
        ip = IPv6(src=c, dst=s) if up else IPv6(src=s, dst=c)
    else:
        c, s = "198.18.%d.%d" % ((i >> 8) & 255, i & 255), "198.19.0.1"
        ip = IP(src=c, dst=s) if up else IP(src=s, dst=c)
    eth = Ether(src=C_MAC, dst=S_MAC) if up else Ether(src=S_MAC, dst=C_MAC)
    sp, dp = (10000 + i, 443) if up else (443, 10000 + i)
    if kind == "syn":
        opts = [("MSS", 1440 if v6 else 1460), ("SAckOK", b""),
                ("Timestamp", (i * 7 + 1, 0 if up else i)), ("NOP", None),
                ("WScale", 7)]
        tcp = TCP(sport=sp, dport=dp, flags="S" if up else "SA",
                  seq=i * 1000, ack=0 if up else i * 1000 + 1, window=64240,
                  options=opts)
        return eth / ip / tcp
    opts = [("NOP", None), ("NOP", None), ("Timestamp", (i * 7 + 1, i))]
    tcp = TCP(sport=sp, dport=dp, flags="PA" if i % 2 else "A",
              seq=i * 1000, ack=5, window=501, options=opts)
    return eth / ip / tcp / Raw(b"d" * (64 if i % 2 else 0))


def main(argv):
    if len(argv) not in (4, 5) or argv[1] not in ("syn", "data"):
        sys.stderr.write(__doc__)
        return 2
    flows = int(argv[4]) if len(argv) == 5 else 1024
    for path, up in ((argv[2], True), (argv[3], False)):
        w = PcapWriter(path, linktype=1, sync=False)
        for i in range(flows):
            w.write(frame(argv[1], i, up))
        w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
