/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_TCPOPT_CSUM_H
#define SLUICE_TCPOPT_CSUM_H

/*
 * Internal: in-place rewrite of header bytes with an incremental TCP
 * checksum update, RFC 1624 eqn. 3:  HC' = ~(~HC + ~m + m').
 *
 * The checksum covers the header as 16-bit words aligned to the start of
 * the TCP header (the pseudo header has an even length). An option may
 * start at an odd offset, so a rewrite is widened to whole words: the old
 * words are subtracted and the new ones added. The pseudo header does not
 * change, so it is never needed.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define TCPOPT_CSUM_OFF 16

static inline uint16_t
tcpopt_word(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
tcpopt_fold(uint32_t s)
{
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return s;
}

/*
 * Write len bytes of src at tcp + off (off >= 20, off + len <= hlen, hlen
 * even) and keep the checksum consistent unless csum_partial: then the NIC
 * computes it, and the field holds only the pseudo-header sum.
 */
static inline void
tcpopt_rewrite(uint8_t *tcp, unsigned int off, const uint8_t *src,
	       unsigned int len, bool csum_partial)
{
	unsigned int lo = off & ~1u, hi = (off + len + 1) & ~1u, i;
	uint32_t sum;
	uint16_t hc;

	if (csum_partial) {
		memcpy(tcp + off, src, len);
		return;
	}
	hc = tcpopt_word(tcp + TCPOPT_CSUM_OFF);
	sum = (uint16_t)~hc;
	for (i = lo; i < hi; i += 2)
		sum += (uint16_t)~tcpopt_word(tcp + i);
	memcpy(tcp + off, src, len);
	for (i = lo; i < hi; i += 2)
		sum += tcpopt_word(tcp + i);
	hc = (uint16_t)~tcpopt_fold(sum);
	tcp[TCPOPT_CSUM_OFF] = (uint8_t)(hc >> 8);
	tcp[TCPOPT_CSUM_OFF + 1] = (uint8_t)hc;
}

/*
 * The same for one 16-bit word at an even offset, given in network order
 * (as stored). The ones-complement sum does not depend on byte order
 * (RFC 1071 2(B)), so the words are added as loaded, without swapping.
 */
static inline void
tcpopt_replace16(uint8_t *tcp, unsigned int off, uint16_t new_be)
{
	uint16_t old_be, hc;
	uint32_t sum;

	memcpy(&old_be, tcp + off, 2);
	memcpy(&hc, tcp + TCPOPT_CSUM_OFF, 2);
	sum = (uint32_t)(uint16_t)~hc + (uint16_t)~old_be + new_be;
	sum = (sum & 0xffff) + (sum >> 16);
	sum += sum >> 16;
	hc = (uint16_t)~sum;
	memcpy(tcp + off, &new_be, 2);
	memcpy(tcp + TCPOPT_CSUM_OFF, &hc, 2);
}

#endif /* SLUICE_TCPOPT_CSUM_H */
