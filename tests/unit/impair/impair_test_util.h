/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_IMPAIR_TEST_UTIL_H
#define SLUICE_IMPAIR_TEST_UTIL_H

/*
 * Helpers for the lib/impair tests: an EAL without hugepages, numbered
 * packets, and an event-driven run on a virtual clock that records when
 * each packet left. The clock jumps straight to the next arrival or the
 * next release (impair_next_release_ns), so release times are observed
 * exactly, to the nanosecond.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "../../test_eal.h"
#include "impair.h"

#define MS 1000000ULL
#define US 1000ULL
#define T0 (1000 * MS)
#define PKT_LEN 64
#define PRIV_SIZE 64

static struct rte_mempool *test_pool;

static inline int
test_eal_init(const char *tag, unsigned int nb_mbufs)
{
	char name[64];

	snprintf(name, sizeof(name), "impair_%s", tag);
	if (test_eal_start(name, 128) < 0)
		return -1;
	test_pool = rte_pktmbuf_pool_create("impair_test", nb_mbufs, 0,
					    PRIV_SIZE, RTE_MBUF_DEFAULT_BUF_SIZE,
					    SOCKET_ID_ANY);
	return test_pool ? 0 : -1;
}

/* A 64-byte frame carrying its number in the first 4 bytes, and the same
 * number in its private area (as stage metadata would be). */
static inline struct rte_mbuf *
test_pkt(uint32_t seq)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_pool);
	uint8_t *d;

	if (m == NULL)
		return NULL;
	d = (uint8_t *)rte_pktmbuf_append(m, PKT_LEN);
	for (unsigned int i = 0; i < PKT_LEN; i++)
		d[i] = (uint8_t)(i * 7 + seq);
	memcpy(d, &seq, sizeof(seq));
	memset(rte_mbuf_to_priv(m), 0, PRIV_SIZE);
	memcpy(rte_mbuf_to_priv(m), &seq, sizeof(seq));
	return m;
}

static inline uint32_t
pkt_seq(const struct rte_mbuf *m)
{
	uint32_t seq;

	memcpy(&seq, rte_pktmbuf_mtod(m, const void *), sizeof(seq));
	return seq;
}

/* What left, in order. */
struct trace {
	uint32_t n, cap;
	uint32_t *seq;
	uint64_t *in_ns;  /* arrival time of that packet number */
	uint64_t *out_ns;
};

static inline void
trace_free(struct trace *t)
{
	free(t->seq);
	free(t->in_ns);
	free(t->out_ns);
	memset(t, 0, sizeof(*t));
}

static inline int
trace_same(const struct trace *a, const struct trace *b)
{
	return a->n == b->n &&
	       memcmp(a->seq, b->seq, a->n * sizeof(a->seq[0])) == 0 &&
	       memcmp(a->out_ns, b->out_ns, a->n * sizeof(a->out_ns[0])) == 0;
}

static inline void
drain_due(struct impair *im, uint64_t now, struct trace *t, uint64_t t0,
	  uint64_t gap)
{
	struct rte_mbuf *out[32];
	uint16_t k;

	while ((k = impair_dequeue_burst(im, out, 32, now)) > 0) {
		for (uint16_t i = 0; i < k; i++) {
			if (t->n < t->cap) {
				uint32_t s = pkt_seq(out[i]);

				t->seq[t->n] = s;
				t->in_ns[t->n] = t0 + (uint64_t)s * gap;
				t->out_ns[t->n] = now;
				t->n++;
			}
		}
		rte_pktmbuf_free_bulk(out, k);
	}
}

/*
 * Send packets 0..n-1, packet i at t0 + i * gap, one per enqueue call,
 * and record every release at its exact time. Returns 0 or -1 (no mbuf).
 * The instance is empty at the end.
 */
static inline int
run_trace(struct impair *im, uint32_t n, uint64_t t0, uint64_t gap,
	  struct trace *t)
{
	uint32_t next = 0;

	memset(t, 0, sizeof(*t));
	t->cap = 2 * n + 16;
	t->seq = calloc(t->cap, sizeof(*t->seq));
	t->in_ns = calloc(t->cap, sizeof(*t->in_ns));
	t->out_ns = calloc(t->cap, sizeof(*t->out_ns));
	if (t->seq == NULL || t->in_ns == NULL || t->out_ns == NULL)
		return -1;
	for (;;) {
		uint64_t arrive = next < n ? t0 + (uint64_t)next * gap : UINT64_MAX;
		uint64_t rel = impair_next_release_ns(im);

		if (arrive == UINT64_MAX && rel == UINT64_MAX)
			break;
		if (rel < arrive) {
			drain_due(im, rel, t, t0, gap);
			continue;
		}
		struct rte_mbuf *m = test_pkt(next);
		if (m == NULL)
			return -1;
		impair_enqueue_burst(im, &m, 1, arrive);
		next++;
		drain_due(im, arrive, t, t0, gap);
	}
	return 0;
}

/* in + duplicated == out + lost + overflow + pending, always. */
static inline int
stats_balance(const struct impair *im)
{
	const struct impair_stats *s = impair_stats(im);

	return s->in + s->duplicated ==
	       s->out + s->lost_random + s->lost_ge + s->overflow +
	       impair_pending(im);
}

#endif
