/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MPTCP_BE_H
#define MPTCP_BE_H

/*
 * Big-endian fields at any alignment, as the MPTCP options (RFC 8684 §3)
 * and the key, token and HMAC derivations (§3.1, §3.2) lay them out.
 */
#include <stdint.h>

static inline uint32_t
get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* Two 32-bit halves: compilers make each a load and a byte swap, where
 * a loop over the eight bytes stays eight loads, shifts and ors (DSS
 * DATA_ACKs and DSNs are read so on every segment). */
static inline uint64_t
get_be64(const uint8_t *p)
{
	return (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
}

static inline uint16_t
get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void
put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void
put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, (uint32_t)(v >> 32));
	put_be32(p + 4, (uint32_t)v);
}

static inline void
put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

#endif /* MPTCP_BE_H */
