/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_TCP_SIPHASH_H
#define SLUICE_TCP_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

/*
 * SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed 64-bit PRF, used for
 * RFC 6528 initial sequence numbers and per-connection timestamp offsets.
 * Written from the paper's description.
 */
uint64_t tcp_siphash24(const uint8_t key[16], const void *data, size_t len);

#endif /* SLUICE_TCP_SIPHASH_H */
