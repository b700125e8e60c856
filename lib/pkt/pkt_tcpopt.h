/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_PKT_TCPOPT_H
#define SLUICE_PKT_TCPOPT_H

/*
 * Reading a TCP header's option list, in plain C (no DPDK), for the
 * libraries that read a few options of every segment: lib/aqm's ACK
 * filter, lib/prtt and lib/rwnd. lib/tcpopt, which checks and rewrites
 * every option, has its own walker (lib/tcpopt/internal/tcpopt_walk.h).
 *
 *	uint32_t i = 20;
 *	uint8_t len;
 *	int kind;
 *
 *	while ((kind = pkt_tcpopt_next(hdr, doff, &i, &len)) >= 0) {
 *		... the option is hdr[i .. i + len) ...
 *		i += len;
 *	}
 *	if (kind == PKT_TCPOPT_BAD)
 *		... malformed ...
 */

#include <stdint.h>
#include <string.h>

#define PKT_TCPOPT_EOL 0
#define PKT_TCPOPT_NOP 1

/* pkt_tcpopt_next(): the list ended (EOL, or the header's end). */
#define PKT_TCPOPT_END (-1)
/* pkt_tcpopt_next(): an option's length is missing, below 2, or runs
 * past the header. */
#define PKT_TCPOPT_BAD (-2)

/* The big-endian 32-bit value at p. */
static inline uint32_t
pkt_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The 32 and 64 bits at p as they lie, in host order: for comparing
 * option bytes with each other or with a constant in network order
 * (RTE_BE32()), where no byte swap is needed. */
static inline uint32_t
pkt_raw32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t
pkt_raw64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * The next option of the list in hdr[*pos .. doff), doff being the TCP
 * header's length (its data offset in bytes, at most the bytes there
 * are). RFC 9293 s. 3.1: kind 0 ends the list, kind 1 is one byte of
 * padding, every other kind has a length byte that counts itself and the
 * kind. Skips NOPs; returns the option's kind with *pos at its first byte
 * and *len its length (at least 2, within the header); the caller steps
 * past it. Else PKT_TCPOPT_END or PKT_TCPOPT_BAD, *pos where it stopped.
 */
static inline int
pkt_tcpopt_next(const uint8_t *hdr, uint32_t doff, uint32_t *pos, uint8_t *len)
{
	uint32_t i = *pos;
	uint8_t l;

	while (i < doff && hdr[i] == PKT_TCPOPT_NOP)
		i++;
	*pos = i;
	if (i >= doff || hdr[i] == PKT_TCPOPT_EOL)
		return PKT_TCPOPT_END;
	if (doff - i < 2)
		return PKT_TCPOPT_BAD;
	l = hdr[i + 1];
	if (l < 2 || l > doff - i)
		return PKT_TCPOPT_BAD;
	*len = l;
	return hdr[i];
}

#endif /* SLUICE_PKT_TCPOPT_H */
