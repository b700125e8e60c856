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
 * RFC 1624 eqn. 3 for one 16-bit word: HC' = ~(~HC + ~m + m'), with HC, m
 * and m' as stored (network order). The ones-complement sum does not
 * depend on byte order (RFC 1071 2(B)), so the words are added as loaded,
 * without swapping.
 *
 * With 16-bit ~x = 0xffff - x, the sum s = ~HC + ~m + m' is
 * 0x1fffe + m' - HC - m, 0 <= s < 2^18.
 *
 * The end-around-carry fold of s (what "add the halves, twice" gives) is
 * bits 32..47 of s * c, c = 0x100010001: the product is s + (s << 16) +
 * (s << 32), and bits 32..47 hold L + H (s's halves) plus the carry out of
 * bits 16..31, which is exactly the carry of L + H. It is 0 only for
 * s == 0, else ((s - 1) mod 0xffff) + 1, like the two folds
 * (tests/unit/tcpopt/test_tcpopt_burst.c compares both for every s).
 * HC' is its complement, and mod 2^64
 *
 *	~(s * c) = -s * c - 1 = (-s - c^-1) * c,  c^-1 = 0xffffffff0001
 *
 * (c * (2^48 - 2^16 + 1) = 2^80 + 2^64 + 1). So with the constant
 * k = 0x1fffe + m' + c^-1, which a caller rewriting many words to the same
 * value computes once (tcpopt_csum_k()):
 *
 *	HC' = bits 32..47 of (HC + m - k) * c
 *
 * an add, a subtract, one multiply and a shift.
 */
#define TCPOPT_CSUM_FOLD     0x100010001ull
#define TCPOPT_CSUM_FOLD_INV 0xffffffff0001ull /* mod 2^64 */

static inline uint64_t
tcpopt_csum_k(uint16_t new_be)
{
	return 0x1fffeu + (uint64_t)new_be + TCPOPT_CSUM_FOLD_INV;
}

/* fold is TCPOPT_CSUM_FOLD; a caller may pass it from memory. */
static inline uint16_t
tcpopt_csum_update16_f(uint16_t hc, uint16_t old_be, uint64_t k,
		       uint64_t fold)
{
	return (uint16_t)((((uint64_t)hc + old_be - k) * fold) >> 32);
}

static inline uint16_t
tcpopt_csum_update16(uint16_t hc, uint16_t old_be, uint64_t k)
{
	return tcpopt_csum_update16_f(hc, old_be, k, TCPOPT_CSUM_FOLD);
}

/* The same, in place, for one 16-bit word at an even offset. */
static inline void
tcpopt_replace16(uint8_t *tcp, unsigned int off, uint16_t new_be)
{
	uint16_t old_be, hc;

	memcpy(&old_be, tcp + off, 2);
	memcpy(&hc, tcp + TCPOPT_CSUM_OFF, 2);
	hc = tcpopt_csum_update16(hc, old_be, tcpopt_csum_k(new_be));
	memcpy(tcp + off, &new_be, 2);
	memcpy(tcp + TCPOPT_CSUM_OFF, &hc, 2);
}

#endif /* SLUICE_TCPOPT_CSUM_H */
