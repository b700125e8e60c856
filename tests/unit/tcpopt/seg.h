/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_TEST_TCPOPT_SEG_H
#define SLUICE_TEST_TCPOPT_SEG_H

/*
 * Test helper: build an IPv4 or IPv6 TCP segment with given options and a
 * correct checksum, and verify a checksum from scratch (pseudo header
 * included), independently of the library's incremental arithmetic.
 */

#include <stdint.h>
#include <string.h>

#define SEG_SYN 0x02
#define SEG_ACK 0x10
#define SEG_PSH 0x08

struct seg {
	uint8_t buf[256];
	unsigned int ip_ver;
	unsigned int l3_off;  /* 0: IP header at buf[0] */
	unsigned int l4_off;  /* offset of the TCP header in buf */
	unsigned int len;     /* total bytes: IP header .. end of payload */
};

static inline uint32_t
seg_sum(const uint8_t *p, unsigned int n, uint32_t s)
{
	unsigned int i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

static inline uint16_t
seg_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* One's-complement sum over pseudo header + TCP segment (checksum field
 * included). 0xffff means the checksum is valid. */
static inline uint16_t
seg_verify_sum(const struct seg *s)
{
	const uint8_t *ip = s->buf + s->l3_off;
	unsigned int tcp_len = s->len - (s->l4_off - s->l3_off);
	uint32_t sum = 0;

	if (s->ip_ver == 4)
		sum = seg_sum(ip + 12, 8, 0);
	else
		sum = seg_sum(ip + 8, 32, 0);
	sum += 6 + tcp_len;
	sum = seg_sum(s->buf + s->l4_off, tcp_len, sum);
	return seg_fold(sum);
}

static inline int
seg_csum_ok(const struct seg *s)
{
	return seg_verify_sum(s) == 0xffff;
}

/* Recompute the TCP checksum from scratch. */
static inline void
seg_fix_csum(struct seg *s)
{
	uint8_t *tcp = s->buf + s->l4_off;
	uint16_t c;

	tcp[16] = tcp[17] = 0;
	c = (uint16_t)~seg_verify_sum(s);
	tcp[16] = (uint8_t)(c >> 8);
	tcp[17] = (uint8_t)c;
}

/*
 * Build a segment at buf + l3_off. optlen must be a multiple of 4 and at
 * most 40. The payload is a counting pattern. Addresses come from the
 * benchmarking ranges 198.18.0.0/15 and 2001:db8::/32.
 */
static inline uint8_t *
seg_build(struct seg *s, unsigned int ip_ver, unsigned int l3_off,
	  uint8_t flags, const uint8_t *opts, unsigned int optlen,
	  unsigned int payload)
{
	unsigned int ip_hlen = ip_ver == 4 ? 20 : 40;
	unsigned int tcp_len = 20 + optlen + payload, i;
	uint8_t *ip, *tcp;

	memset(s, 0, sizeof(*s));
	s->ip_ver = ip_ver;
	s->l3_off = l3_off;
	s->l4_off = l3_off + ip_hlen;
	s->len = ip_hlen + tcp_len;
	ip = s->buf + l3_off;
	if (ip_ver == 4) {
		ip[0] = 0x45;
		ip[2] = (uint8_t)(s->len >> 8);
		ip[3] = (uint8_t)s->len;
		ip[8] = 64;
		ip[9] = 6;
		ip[12] = 198; ip[13] = 18; ip[14] = 0; ip[15] = 1;
		ip[16] = 198; ip[17] = 19; ip[18] = 0; ip[19] = 2;
		/* IPv4 header checksum, so pkt_parse() accepts it. */
		uint16_t hc = (uint16_t)~seg_fold(seg_sum(ip, 20, 0));
		ip[10] = (uint8_t)(hc >> 8);
		ip[11] = (uint8_t)hc;
	} else {
		ip[0] = 0x60;
		ip[4] = (uint8_t)(tcp_len >> 8);
		ip[5] = (uint8_t)tcp_len;
		ip[6] = 6;
		ip[7] = 64;
		ip[8] = 0x20; ip[9] = 0x01; ip[10] = 0x0d; ip[11] = 0xb8;
		ip[23] = 1;
		ip[24] = 0x20; ip[25] = 0x01; ip[26] = 0x0d; ip[27] = 0xb8;
		ip[39] = 2;
	}
	tcp = s->buf + s->l4_off;
	tcp[0] = 0xc3; tcp[1] = 0x50;    /* sport 50000 */
	tcp[2] = 0x01; tcp[3] = 0xbb;    /* dport 443 */
	tcp[4] = 0x12; tcp[5] = 0x34; tcp[6] = 0x56; tcp[7] = 0x78;
	if (flags & SEG_ACK) {
		tcp[8] = 0x9a; tcp[9] = 0xbc; tcp[10] = 0xde; tcp[11] = 0xf1;
	}
	tcp[12] = (uint8_t)(((20 + optlen) / 4) << 4);
	tcp[13] = flags;
	tcp[14] = 0xfa; tcp[15] = 0xf0; /* window */
	if (optlen)
		memcpy(tcp + 20, opts, optlen);
	for (i = 0; i < payload; i++)
		tcp[20 + optlen + i] = (uint8_t)(i * 7 + 1);
	seg_fix_csum(s);
	return tcp;
}

/* Bytes of the TCP segment (header + payload). */
static inline unsigned int
seg_tcp_len(const struct seg *s)
{
	return s->len - (s->l4_off - s->l3_off);
}

#endif /* SLUICE_TEST_TCPOPT_SEG_H */
