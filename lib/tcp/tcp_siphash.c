/* SPDX-License-Identifier: BSD-3-Clause */
/* SipHash-2-4: 2 compression rounds per 8-byte word, 4 finalisation rounds. */

#include "tcp_siphash.h"

static inline uint64_t rotl(uint64_t x, unsigned int b) { return x << b | x >> (64 - b); }

static inline uint64_t
le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

#define SIPROUND(v0, v1, v2, v3) do { \
	v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32); \
	v2 += v3; v3 = rotl(v3, 16); v3 ^= v2; \
	v0 += v3; v3 = rotl(v3, 21); v3 ^= v0; \
	v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32); \
} while (0)

uint64_t
tcp_siphash24(const uint8_t key[16], const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t k0 = le64(key), k1 = le64(key + 8);
	uint64_t v0 = k0 ^ UINT64_C(0x736f6d6570736575);
	uint64_t v1 = k1 ^ UINT64_C(0x646f72616e646f6d);
	uint64_t v2 = k0 ^ UINT64_C(0x6c7967656e657261);
	uint64_t v3 = k1 ^ UINT64_C(0x7465646279746573);
	uint64_t last = (uint64_t)(len & 0xff) << 56;
	size_t whole = len & ~(size_t)7;

	for (size_t i = 0; i < whole; i += 8) {
		uint64_t m = le64(p + i);

		v3 ^= m;
		SIPROUND(v0, v1, v2, v3);
		SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	for (size_t i = 0; i < (len & 7); i++)
		last |= (uint64_t)p[whole + i] << (8 * i);
	v3 ^= last;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	v0 ^= last;
	v2 ^= 0xff;
	for (int r = 0; r < 4; r++)
		SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}
