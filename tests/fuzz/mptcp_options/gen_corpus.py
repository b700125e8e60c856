#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Hand-made seeds for fuzz_mptcp_options: the forms the kernel capture
(kernel_*) lacks. Layout: TCP flags byte, then an option area."""
import os

SYN, SYNACK, ACK = 0x02, 0x12, 0x10
K1 = bytes.fromhex("0123456789abcdef")
K2 = bytes.fromhex("fedcba9876543210")
SEEDS = {
    "mpc_data": (ACK, bytes([30, 22, 0x01, 0x01]) + K1 + K2 + bytes([5, 0xdc])),
    "mpc_data_csum": (ACK, bytes([30, 24, 0x01, 0x81]) + K1 + K2 +
                      bytes([5, 0xdc, 0xbe, 0xef])),
    "mpc_v0_syn": (SYN, bytes([30, 12, 0x00, 0x81]) + K1),
    "join_syn_backup": (SYN, bytes([30, 12, 0x11, 5, 1, 2, 3, 4, 5, 6, 7, 8])),
    "dss_ack32_map32_csum": (ACK, bytes([30, 20, 0x20, 0x05, 0, 0, 0, 1,
                                         0, 0, 0, 2, 0, 0, 0, 3, 0, 100, 0x12, 0x34])),
    "dss_ack64_fin": (ACK, bytes([30, 12, 0x20, 0x13]) + K1),
    "dss_infinite_map": (ACK, bytes([30, 14, 0x20, 0x04, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0])),
    "add_addr_v6_port": (ACK, bytes([30, 30, 0x30, 9]) + bytes.fromhex(
        "20010db8000200000000000000000002") + bytes([0x1f, 0x90]) + K2),
    "add_addr_v6_echo": (ACK, bytes([30, 20, 0x31, 9]) + bytes.fromhex(
        "20010db8000200000000000000000002")),
    "add_addr_v4_port_echo": (ACK, bytes([30, 10, 0x31, 3, 198, 18, 2, 2, 0x1f, 0x90])),
    "remove_addr_3": (ACK, bytes([30, 6, 0x40, 1, 2, 3])),
    "mp_prio_v0": (ACK, bytes([30, 4, 0x51, 7])),
    "mp_fail": (ACK, bytes([30, 12, 0x60, 0]) + K1),
    "mp_tcprst_transient": (ACK | 0x04, bytes([30, 4, 0x81, 0x02])),
    "mp_experimental": (ACK, bytes([30, 6, 0xf0, 1, 2, 3])),
    "unknown_subtype": (ACK, bytes([30, 4, 0x90, 0])),
    "two_dss": (ACK, bytes([30, 8, 0x20, 0x01, 0, 0, 0, 7] * 2)),
    "area_bad_len": (ACK, bytes([1, 1, 2, 0, 30, 3, 0x51])),
}

d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
os.makedirs(d, exist_ok=True)
for name, (flags, area) in SEEDS.items():
    with open(os.path.join(d, name), "wb") as f:
        f.write(bytes([flags]) + area)
