/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_IMPAIR_RAND_H
#define SLUICE_IMPAIR_RAND_H

/*
 * Seeded pseudo-random numbers for lib/impair: splitmix64 to expand a seed,
 * xoshiro256** (Blackman and Vigna, 2018) for the streams. Both are small,
 * fast, pass BigCrush, and give the same sequence on every platform, which
 * is what reproducible lab runs need. Not for cryptography.
 */

#include <stdint.h>

struct impair_rng {
	uint64_t s[4];
};

/* One splitmix64 step: advances *x, returns a well-mixed 64-bit value. */
static inline uint64_t
impair_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Seed a stream. splitmix64 never yields four zero words in a row, so the
 * xoshiro state is never the all-zero fixed point. */
static inline void
impair_rng_seed(struct impair_rng *r, uint64_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < 4; i++)
		r->s[i] = impair_splitmix64(&x);
}

static inline uint64_t
impair_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256**: the next 64 random bits. */
static inline uint64_t
impair_rng_next(struct impair_rng *r)
{
	uint64_t *s = r->s;
	const uint64_t out = impair_rotl(s[1] * 5, 7) * 9;
	const uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = impair_rotl(s[3], 45);
	return out;
}

/*
 * Probabilities are thresholds on 32 random bits: an event of probability
 * p happens when the draw is below thr = round(p * 2^32), so 0 never and
 * 2^32 (p = 1) always. The resolution, 2^-32, is far below anything a
 * test can measure.
 */
#define IMPAIR_P_ONE (1ULL << 32)

static inline uint64_t
impair_prob_threshold(double p)
{
	if (!(p > 0.0))
		return 0;
	if (p >= 1.0)
		return IMPAIR_P_ONE;
	return (uint64_t)(p * 4294967296.0 + 0.5);
}

static inline int
impair_chance(uint32_t draw, uint64_t thr)
{
	return (uint64_t)draw < thr;
}

#endif /* SLUICE_IMPAIR_RAND_H */
