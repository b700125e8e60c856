/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One direction of link impairment. Held packets sit in one preallocated
 * array of (release time, arrival sequence, mbuf) slots, used two ways:
 *  - in order (no jitter_reorder, no reorder): release times never
 *    decrease, so it is a FIFO ring and push and pop are O(1);
 *  - otherwise a binary min-heap on (release time, sequence), O(log limit).
 * The sequence number makes equal release times leave in arrival order, so
 * the output is a pure function of (seed, packets, now_ns).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "impair.h"
#include "impair_rand.h"

enum impair_stream {
	STREAM_LOSS,
	STREAM_GE,
	STREAM_DUP,
	STREAM_JITTER,
	STREAM_REORDER,
	STREAM_MAX
};

struct impair_slot {
	uint64_t release_ns;
	uint64_t seq;
	struct rte_mbuf *m;
};

struct impair {
	/* Per-packet state first. */
	struct impair_rng rng[STREAM_MAX];
	uint64_t thr_loss, thr_ge_p, thr_ge_r, thr_ge_good, thr_ge_bad;
	uint64_t thr_dup, thr_reorder;
	uint64_t delay_ns, jitter_ns, reorder_gap_ns;
	uint64_t last_release_ns;  /* latest release given to an in-order packet */
	uint64_t seq;
	uint32_t count, limit;
	uint32_t head;             /* FIFO mode: index of the oldest slot */
	bool fifo;                 /* release times never decrease */
	bool ge_on, ge_bad;
	bool jitter_normal, jitter_reorder;
	struct impair_stats st;
	struct impair_slot *heap;  /* limit entries */
};

void
impair_params_default(struct impair_params *p)
{
	memset(p, 0, sizeof(*p));
	p->socket_id = SOCKET_ID_ANY;
	p->seed = 1;
	p->ge_loss_bad = 1.0;
	p->reorder_gap_ns = 10 * 1000000ULL;
	p->limit = 1000;
}

static bool
prob_ok(double p)
{
	return p >= 0.0 && p <= 1.0; /* false for NaN */
}

int
impair_params_check(const struct impair_params *p, char *why, size_t whylen)
{
	const char *bad = NULL;
	char tmp[160];

	if (!prob_ok(p->loss))
		bad = "loss must be a probability in [0, 1]";
	else if (!prob_ok(p->ge_p) || !prob_ok(p->ge_r) ||
		 !prob_ok(p->ge_loss_good) || !prob_ok(p->ge_loss_bad))
		bad = "Gilbert-Elliott parameters must be probabilities in [0, 1]";
	else if (p->ge_p > 0.0 && p->ge_r <= 0.0)
		bad = "ge_p > 0 needs ge_r > 0, or the channel stays Bad for ever";
	else if (!prob_ok(p->duplicate))
		bad = "duplicate must be a probability in [0, 1]";
	else if (!prob_ok(p->reorder))
		bad = "reorder must be a probability in [0, 1]";
	else if (p->delay_ns > IMPAIR_TIME_MAX || p->jitter_ns > IMPAIR_TIME_MAX ||
		 p->reorder_gap_ns > IMPAIR_TIME_MAX)
		bad = "delay, jitter and reorder gap must be at most 60 s";
	else if (p->jitter_dist != IMPAIR_JITTER_UNIFORM &&
		 p->jitter_dist != IMPAIR_JITTER_NORMAL)
		bad = "unknown jitter distribution";
	else if (p->limit < 1 || p->limit > IMPAIR_LIMIT_MAX) {
		snprintf(tmp, sizeof(tmp), "limit must be 1..%u packets",
			 IMPAIR_LIMIT_MAX);
		bad = tmp;
	}
	if (bad == NULL)
		return 0;
	if (why != NULL && whylen > 0)
		snprintf(why, whylen, "%s", bad);
	return -EINVAL;
}

bool
impair_params_active(const struct impair_params *p)
{
	return p->loss > 0.0 || p->ge_p > 0.0 || p->ge_loss_good > 0.0 ||
	       p->delay_ns > 0 || p->jitter_ns > 0 || p->duplicate > 0.0 ||
	       p->reorder > 0.0;
}

struct impair *
impair_create(const struct impair_params *p)
{
	struct impair *im;
	uint64_t x;

	if (p == NULL || impair_params_check(p, NULL, 0) != 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	im = rte_zmalloc_socket(p->name ? p->name : "impair", sizeof(*im),
				RTE_CACHE_LINE_SIZE, p->socket_id);
	if (im == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	im->heap = rte_malloc_socket(p->name ? p->name : "impair",
				     (size_t)p->limit * sizeof(im->heap[0]),
				     RTE_CACHE_LINE_SIZE, p->socket_id);
	if (im->heap == NULL) {
		rte_free(im);
		rte_errno = ENOMEM;
		return NULL;
	}
	/* One seed per stream, so each impairment has its own sequence. */
	x = p->seed;
	for (int s = 0; s < STREAM_MAX; s++)
		impair_rng_seed(&im->rng[s], impair_splitmix64(&x));
	im->thr_loss = impair_prob_threshold(p->loss);
	im->thr_ge_p = impair_prob_threshold(p->ge_p);
	im->thr_ge_r = impair_prob_threshold(p->ge_r);
	im->thr_ge_good = impair_prob_threshold(p->ge_loss_good);
	im->thr_ge_bad = impair_prob_threshold(p->ge_loss_bad);
	im->ge_on = p->ge_p > 0.0 || p->ge_loss_good > 0.0;
	im->thr_dup = impair_prob_threshold(p->duplicate);
	im->thr_reorder = impair_prob_threshold(p->reorder);
	im->delay_ns = p->delay_ns;
	im->jitter_ns = p->jitter_ns;
	im->jitter_normal = p->jitter_dist == IMPAIR_JITTER_NORMAL;
	im->jitter_reorder = p->jitter_reorder;
	im->reorder_gap_ns = p->reorder_gap_ns;
	im->limit = p->limit;
	im->fifo = !p->jitter_reorder && !(p->reorder > 0.0);
	return im;
}

void
impair_free(struct impair *im)
{
	if (im == NULL)
		return;
	for (uint32_t i = 0; i < im->count; i++)
		rte_pktmbuf_free(im->heap[im->fifo ? (im->head + i) % im->limit : i].m);
	rte_free(im->heap);
	rte_free(im);
}

/* ---- the heap ---------------------------------------------------- */

static inline bool
slot_before(const struct impair_slot *a, const struct impair_slot *b)
{
	return a->release_ns < b->release_ns ||
	       (a->release_ns == b->release_ns && a->seq < b->seq);
}

static inline void
heap_push(struct impair *im, uint64_t release_ns, struct rte_mbuf *m)
{
	struct impair_slot *h = im->heap;
	struct impair_slot e = { release_ns, im->seq++, m };
	uint32_t i = im->count++;

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (!slot_before(&e, &h[parent]))
			break;
		h[i] = h[parent];
		i = parent;
	}
	h[i] = e;
}

static inline struct rte_mbuf *
heap_pop(struct impair *im)
{
	struct impair_slot *h = im->heap;
	struct rte_mbuf *top = h[0].m;
	struct impair_slot last = h[--im->count];
	uint32_t n = im->count, i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && slot_before(&h[c + 1], &h[c]))
			c++;
		if (!slot_before(&h[c], &last))
			break;
		h[i] = h[c];
		i = c;
	}
	if (n > 0)
		h[i] = last;
	return top;
}

/* ---- the queue: FIFO ring or heap ------------------------------- */

static inline void
queue_push(struct impair *im, uint64_t release_ns, struct rte_mbuf *m)
{
	if (im->fifo) {
		uint32_t t = im->head + im->count;

		if (t >= im->limit)
			t -= im->limit;
		im->heap[t] = (struct impair_slot){ release_ns, im->seq++, m };
		im->count++;
		return;
	}
	heap_push(im, release_ns, m);
}

static inline const struct impair_slot *
queue_first(const struct impair *im)
{
	return &im->heap[im->fifo ? im->head : 0];
}

static inline struct rte_mbuf *
queue_pop(struct impair *im)
{
	if (im->fifo) {
		struct rte_mbuf *m = im->heap[im->head].m;

		if (++im->head == im->limit)
			im->head = 0;
		im->count--;
		return m;
	}
	return heap_pop(im);
}

/* ---- per packet -------------------------------------------------- */

/* Signed jitter sample in ns. */
static inline int64_t
jitter_sample(struct impair *im)
{
	const uint64_t j = im->jitter_ns;

	if (!im->jitter_normal) {
		/* Uniform in [-j, j]: the high half of r * (2j + 1). */
		uint64_t r = impair_rng_next(&im->rng[STREAM_JITTER]);
		uint64_t k = (uint64_t)(((unsigned __int128)r * (2 * j + 1)) >> 64);

		return (int64_t)k - (int64_t)j;
	}
	/* Irwin-Hall: twelve 16-bit uniforms from three draws. Their sum has
	 * mean 12 * 65535 / 2 and, scaled by 1/65536, variance ~1; so
	 * z2 = 2 * sum - 12 * 65535 is ~N(0, 1) in units of 1/131072, within
	 * +-6 sigma. Integer only, so bit-exact everywhere. */
	int64_t s = 0;
	for (int d = 0; d < 3; d++) {
		uint64_t r = impair_rng_next(&im->rng[STREAM_JITTER]);

		for (int q = 0; q < 4; q++)
			s += (int64_t)((r >> (16 * q)) & 0xffff);
	}
	int64_t z2 = 2 * s - 12 * 65535;

	return z2 * (int64_t)j / 131072;
}

/* Queue one packet that survived loss: pick its release time, or drop it
 * when the queue is full. */
static inline uint16_t
queue_one(struct impair *im, struct rte_mbuf *m, uint64_t now_ns)
{
	uint64_t release = now_ns + im->delay_ns;
	bool held_back = false;

	if (im->jitter_ns != 0) {
		int64_t d = (int64_t)im->delay_ns + jitter_sample(im);

		release = now_ns + (d > 0 ? (uint64_t)d : 0);
	}
	if (im->thr_reorder != 0)
		held_back = impair_chance((uint32_t)(impair_rng_next(&im->rng[STREAM_REORDER]) >> 32),
					  im->thr_reorder);
	if (unlikely(im->count >= im->limit)) {
		im->st.overflow++;
		if (m != NULL)
			rte_pktmbuf_free(m);
		return 0;
	}
	if (release < im->last_release_ns) {
		/* Jitter put it ahead of a packet queued earlier. */
		if (im->jitter_reorder)
			im->st.jitter_reordered++;
		else
			release = im->last_release_ns;
	}
	if (held_back) {
		/* Out of line: later packets keep the in-order schedule and
		 * overtake it. */
		im->st.reordered++;
		release += im->reorder_gap_ns;
	} else if (release > im->last_release_ns) {
		im->last_release_ns = release;
	}
	queue_push(im, release, m);
	return 1;
}

/* A deep copy, private area (pkt_meta) included. */
static struct rte_mbuf *
copy_packet(struct rte_mbuf *m)
{
	struct rte_mbuf *c = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
	uint16_t priv;

	if (c == NULL)
		return NULL;
	priv = rte_pktmbuf_priv_size(m->pool);
	if (priv != 0)
		memcpy(rte_mbuf_to_priv(c), rte_mbuf_to_priv(m), priv);
	return c;
}

uint16_t
impair_enqueue_burst(struct impair *im, struct rte_mbuf **pkts, uint16_t n,
		     uint64_t now_ns)
{
	uint16_t queued = 0;

	im->st.in += n;
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		bool lost_ge = false, lost_rand = false, dup = false;

		if (im->ge_on) {
			/* High half: loss in the current state; low half:
			 * the transition that the next packet will see. */
			uint64_t r = impair_rng_next(&im->rng[STREAM_GE]);
			uint32_t lose = (uint32_t)(r >> 32), move = (uint32_t)r;

			if (im->ge_bad) {
				im->st.ge_bad++;
				lost_ge = impair_chance(lose, im->thr_ge_bad);
				if (impair_chance(move, im->thr_ge_r))
					im->ge_bad = false;
			} else {
				lost_ge = impair_chance(lose, im->thr_ge_good);
				if (impair_chance(move, im->thr_ge_p)) {
					im->ge_bad = true;
					im->st.ge_bursts++;
				}
			}
		}
		if (im->thr_loss != 0)
			lost_rand = impair_chance((uint32_t)(impair_rng_next(&im->rng[STREAM_LOSS]) >> 32),
						  im->thr_loss);
		if (im->thr_dup != 0)
			dup = impair_chance((uint32_t)(impair_rng_next(&im->rng[STREAM_DUP]) >> 32),
					    im->thr_dup);
		if (lost_ge || lost_rand) {
			if (lost_ge)
				im->st.lost_ge++;
			else
				im->st.lost_random++;
			rte_pktmbuf_free(m);
			continue;
		}
		queued += queue_one(im, m, now_ns);
		if (!dup)
			continue;
		if (im->count >= im->limit) {
			/* No room for the copy: do not make it at all. */
			im->st.duplicated++;
			queued += queue_one(im, NULL, now_ns);
			continue;
		}
		struct rte_mbuf *c = copy_packet(m);
		if (c == NULL) {
			im->st.dup_nombuf++;
			continue;
		}
		im->st.duplicated++;
		queued += queue_one(im, c, now_ns);
	}
	return queued;
}

uint16_t
impair_dequeue_burst(struct impair *im, struct rte_mbuf **out, uint16_t max,
		     uint64_t now_ns)
{
	uint16_t n = 0;

	while (n < max && im->count > 0 && queue_first(im)->release_ns <= now_ns)
		out[n++] = queue_pop(im);
	im->st.out += n;
	return n;
}

uint16_t
impair_flush_burst(struct impair *im, struct rte_mbuf **out, uint16_t max,
		   uint64_t now_ns)
{
	uint16_t n = 0;

	while (n < max && im->count > 0) {
		if (queue_first(im)->release_ns > now_ns)
			im->st.flushed_early++;
		out[n++] = queue_pop(im);
	}
	im->st.out += n;
	return n;
}

uint32_t
impair_pending(const struct impair *im)
{
	return im->count;
}

uint64_t
impair_next_release_ns(const struct impair *im)
{
	return im->count ? queue_first(im)->release_ns : UINT64_MAX;
}

const struct impair_stats *
impair_stats(const struct impair *im)
{
	return &im->st;
}

void
impair_stats_add(struct impair_stats *a, const struct impair_stats *b)
{
	a->in += b->in;
	a->out += b->out;
	a->lost_random += b->lost_random;
	a->lost_ge += b->lost_ge;
	a->ge_bad += b->ge_bad;
	a->ge_bursts += b->ge_bursts;
	a->duplicated += b->duplicated;
	a->dup_nombuf += b->dup_nombuf;
	a->reordered += b->reordered;
	a->jitter_reordered += b->jitter_reordered;
	a->overflow += b->overflow;
	a->flushed_early += b->flushed_early;
}
