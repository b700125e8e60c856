/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FQ-CoDel (RFC 8290) and the plain FIFO, per pipe. Flows are hashed into
 * the pipe's slice of the flow pool, 8-way set-associative (flow_find());
 * DRR++ serves the new-flow list before the old-flow list (section 4.2),
 * and each flow runs its own CoDel.
 */
#include <rte_vect.h>

#include "aqm_priv.h"

static inline void
list_push(struct aqm_flow *flows, struct aqm_list *l, uint32_t i)
{
	flows[i].next = AQM_NONE;
	if (l->head == AQM_NONE)
		l->head = i;
	else
		flows[l->tail].next = i;
	l->tail = i;
}

static inline uint32_t
list_pop(struct aqm_flow *flows, struct aqm_list *l)
{
	uint32_t i = l->head;

	l->head = flows[i].next;
	if (l->head == AQM_NONE)
		l->tail = AQM_NONE;
	return i;
}

/* The tin whose lists hold flow f of p (p has tins). */
static inline struct aqm_tin *
flow_tin(const struct aqm_sched *s, const struct aqm_pipe *p,
	 const struct aqm_flow *f)
{
	return &aqm_pipe_tins(s, p)->tin[f->tin];
}

/* Count a drop of a packet of flow f in its tin (AQM_DS_INNER: p is
 * running DRR++ on a tin's lists, see dequeue_diffserv()). */
static inline void
tin_count_drop(const struct aqm_sched *s, const struct aqm_pipe *p,
	       const struct aqm_flow *f)
{
	if (unlikely(p->diffserv & (AQM_DS_MODE | AQM_DS_INNER)))
		flow_tin(s, p, f)->st.drops++;
}

/* Unlink the head packet of a flow and account for it. */
static inline struct rte_mbuf *
flow_take_head(struct aqm_sched *s, struct aqm_pipe *p, struct aqm_flow *f)
{
	struct rte_mbuf *m = f->head;
	uint32_t len;

	if (m == NULL)
		return NULL;
	len = rte_pktmbuf_pkt_len(m);
	f->head = *aqm_link(s, m);
	if (f->head == NULL)
		f->tail = NULL;
	f->backlog -= len;
	p->backlog_pkts--;
	p->backlog_bytes -= len;
	p->mem -= aqm_truesize(m);
	s->pending--;
	return m;
}

static inline void
flow_append(struct aqm_sched *s, struct aqm_flow *f, struct rte_mbuf *m)
{
	*aqm_link(s, m) = NULL;
	if (f->tail == NULL)
		f->head = m;
	else
		*aqm_link(s, f->tail) = m;
	f->tail = m;
}

/*
 * BLUE (COBALT's second half): p is a flow's drop probability, Q0.16. It
 * rises when the flow overflows a limit, or when a packet of it waited
 * longer than blue_threshold_ms while more than blue_min_bytes stay queued
 * behind it; it falls when the flow's queue empties or a packet leaves it
 * below CoDel's target. A change waits at least blue_ticks ticks after the
 * last one (a rise from 0 never waits), and is inc (dec) per blue_ticks
 * elapsed, at most BLUE_STEPS_MAX of them at once: p moves at the same
 * speed whether the flow's packets are seen every millisecond or, at a
 * small share of a slow pipe, every hundred. The tick stamp is 8 bits:
 * after 256 ticks (268 ms) without a change the elapsed time reads short,
 * so a change may come later or smaller than it should, never sooner or
 * larger.
 */
#define BLUE_STEPS_MAX 16

static inline unsigned int
blue_steps(const struct aqm_pipe *p, const struct aqm_flow *f, uint64_t now)
{
	uint8_t elapsed = (uint8_t)((uint8_t)(now >> AQM_BLUE_TICK_SHIFT) -
				    f->cv.blue_when);

	/* Runs only when p may change: at most once per blue_ticks. */
	return RTE_MIN((unsigned int)(elapsed / p->blue_ticks), (unsigned int)BLUE_STEPS_MAX);
}

static inline void
blue_raise(struct aqm_pipe *p, struct aqm_flow *f, uint64_t now)
{
	unsigned int steps = 1;
	uint32_t v;

	if (p->blue_inc == 0)
		return;
	if (f->cv.blue_p != 0 && (steps = blue_steps(p, f, now)) == 0)
		return;
	p->blue_flows += f->cv.blue_p == 0;
	v = (uint32_t)f->cv.blue_p + steps * p->blue_inc;
	f->cv.blue_p = (uint16_t)RTE_MIN(v, (uint32_t)UINT16_MAX);
	f->cv.blue_when = (uint8_t)(now >> AQM_BLUE_TICK_SHIFT);
}

static inline void
blue_lower(struct aqm_pipe *p, struct aqm_flow *f, uint64_t now)
{
	unsigned int steps;
	uint32_t d;

	if (f->cv.blue_p == 0 || (steps = blue_steps(p, f, now)) == 0)
		return;
	d = steps * p->blue_dec;
	f->cv.blue_p = f->cv.blue_p > d ? (uint16_t)(f->cv.blue_p - d) : 0;
	p->blue_flows -= f->cv.blue_p == 0;
	f->cv.blue_when = (uint8_t)(now >> AQM_BLUE_TICK_SHIFT);
}

/* 16 pseudo-random bits from the scheduler's xorshift64 (one draw per
 * packet of a flow with p > 0, so the same seed gives the same drops). */
static inline uint32_t
blue_draw(struct aqm_sched *s)
{
	uint64_t x = s->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	s->rng = x;
	return (uint32_t)(x >> 48);
}

/*
 * Host isolation (CAKE's dual-srchost, dual-dsthost, triple-isolate). A
 * flow that enters the lists takes a reference on the host of its source
 * and of its destination address, in two small open-addressed tables per
 * pipe (as many slots as flows: a host is only there while one of its
 * flows is, so they never fill up); it gives them back when it leaves the
 * lists. A flow that spent a quantum counts as one of its hosts' bulk
 * flows, and its refills are the quantum divided by that count: each
 * host's bulk flows together get one quantum per round.
 */
static inline struct aqm_host *
pipe_hosts(const struct aqm_sched *s, const struct aqm_pipe *p)
{
	return &s->hosts[2 * (size_t)(p->flows - s->flow_pool)];
}

static inline uint32_t *
flow_host(const struct aqm_sched *s, const struct aqm_pipe *p, uint32_t fi)
{
	return &s->flow_host[(size_t)(p->flows - s->flow_pool) + fi];
}

static inline uint32_t
host_tag(const uint8_t *addr, unsigned int words, uint32_t seed)
{
	uint32_t h = seed;

	for (unsigned int i = 0; i < words; i++) {
		uint32_t w;

		memcpy(&w, addr + 4 * i, sizeof(w));
		h = (h ^ w) * 0x9e3779b1u;
		h ^= h >> 16;
	}
	return h;
}

/* The slot of host tag in table t (mask + 1 slots), with a reference
 * taken. A host keeps its slot while referenced, and sits within
 * AQM_HOST_PROBES of its home slot; if those are all taken by others
 * (more than that many hosts hash close together), it shares its home
 * slot with whoever holds it. */
static inline uint32_t
host_get(struct aqm_host *t, uint32_t mask, uint32_t tag, uint64_t *shared)
{
	uint32_t home = (uint32_t)(((uint64_t)tag * (mask + 1)) >> 32);
	uint32_t probes = RTE_MIN(mask + 1, (uint32_t)AQM_HOST_PROBES);
	uint32_t slot = AQM_NONE;

	for (uint32_t j = 0; j < probes; j++) {
		uint32_t i = (home + j) & mask;

		if (t[i].refs == 0) {
			if (slot == AQM_NONE)
				slot = i;
		} else if (t[i].tag == tag) {
			t[i].refs++;
			return i;
		}
	}
	if (slot == AQM_NONE) {
		slot = home;
		(*shared)++;
	} else {
		t[slot].tag = tag;
	}
	t[slot].refs++;
	return slot;
}

/* Flow fi of p enters the lists with packet m: bind it to m's hosts. */
static inline void
hosts_bind(struct aqm_sched *s, struct aqm_pipe *p, uint32_t fi,
	   const struct rte_mbuf *m)
{
	const struct pkt_meta *meta = rte_mbuf_to_priv((struct rte_mbuf *)(uintptr_t)m);
	struct aqm_host *t = pipe_hosts(s, p);
	unsigned int words = meta->l3 == PKT_L3_IPV6 ? 4 : 1;
	uint32_t src, dst;

	src = host_get(t, p->flow_mask, host_tag(meta->src, words, p->seed),
		       &s->host_shared);
	dst = host_get(t + p->flow_mask + 1, p->flow_mask,
		       host_tag(meta->dst, words, p->seed), &s->host_shared);
	*flow_host(s, p, fi) = src | dst << 16;
}

/* Flow fi leaves the lists: give its hosts back. */
static inline void
hosts_release(struct aqm_sched *s, struct aqm_pipe *p, uint32_t fi)
{
	struct aqm_host *t = pipe_hosts(s, p);
	struct aqm_flow *f = &p->flows[fi];
	uint32_t hb = *flow_host(s, p, fi);
	struct aqm_host *src = &t[hb & 0xffff];
	struct aqm_host *dst = &t[p->flow_mask + 1 + (hb >> 16)];

	src->refs--;
	dst->refs--;
	if (f->bulk) {
		src->bulk--;
		dst->bulk--;
		f->bulk = 0;
	}
}

/* Flow fi leaves the new and old lists. */
static inline void
flow_unlist(struct aqm_sched *s, struct aqm_pipe *p, uint32_t fi)
{
	p->flows[fi].list = AQM_LIST_NONE;
	if (p->isolation & AQM_ISO_TRACKED)
		hosts_release(s, p, fi);
}

/* What flow fi earns when its deficit is refilled: the quantum, or with
 * host isolation the quantum over its host's bulk flows (it now being
 * one of them). */
static inline int32_t
flow_quantum(struct aqm_sched *s, struct aqm_pipe *p, uint32_t fi)
{
	struct aqm_flow *f = &p->flows[fi];
	struct aqm_host *t;
	uint32_t hb, load = 0;
	uint64_t q;

	if (!(p->isolation & AQM_ISO_TRACKED))
		return (int32_t)p->quantum;
	t = pipe_hosts(s, p);
	hb = *flow_host(s, p, fi);
	if (!f->bulk) {
		f->bulk = 1;
		t[hb & 0xffff].bulk++;
		t[p->flow_mask + 1 + (hb >> 16)].bulk++;
	}
	if (p->isolation & AQM_ISO_SRCHOST)
		load = t[hb & 0xffff].bulk;
	if (p->isolation & AQM_ISO_DSTHOST)
		load = RTE_MAX(load, (uint32_t)t[p->flow_mask + 1 + (hb >> 16)].bulk);
	if (load <= 1)
		return (int32_t)p->quantum;
	q = load < AQM_HOST_RECIP ? ((uint64_t)p->quantum * s->recip[load]) >> 16 :
				    p->quantum / load;
	return q != 0 ? (int32_t)q : 1;
}

void
aqm_fq_drop_fattest(struct aqm_sched *s, struct aqm_pipe *p,
		    enum aqm_drop_reason why, uint64_t now)
{
	uint32_t fat = 0, max = 0, dropped = 0, n = 0, half;

	/* O(flows), but only on overflow; batching amortises it (s. 4.1). */
	for (uint32_t i = 0; i <= p->flow_mask; i++) {
		if (p->flows[i].backlog > max) {
			max = p->flows[i].backlog;
			fat = i;
		}
	}
	if (max == 0)
		return;
	/* The flow overflowed a buffer: BLUE's reason to raise p. */
	blue_raise(p, &p->flows[fat], now);
	half = max / 2;
	do {
		struct rte_mbuf *m = flow_take_head(s, p, &p->flows[fat]);

		if (m == NULL)
			break;
		dropped += rte_pktmbuf_pkt_len(m);
		p->st.drops[why]++;
		tin_count_drop(s, p, &p->flows[fat]);
		rte_pktmbuf_free(m);
	} while (++n < p->drop_batch && dropped < half);
}

/*
 * The set-associative flow hash, as CAKE's. A pipe's n queues (or a
 * tin's slice of them) are cut into sets of AQM_FLOW_WAYS; a flow's tag
 * (aqm_flow_tag()) picks its set and, in it, its home queue. A queue
 * keeps the tag of the flow that last claimed it, and is free while it
 * holds no packet, no held ACK and no place in the lists. A packet goes
 * to the queue of its set that holds its flow's tag; a flow without
 * one claims a free queue of its set (flow_claim()); when all are busy
 * it shares its home queue with the flow there, whose tag stays. Mapped directly (one way), 17 flows in 1024 queues have two
 * in one queue in one draw of eight; with 8 ways, a set must fill.
 *
 * A flow only moves when its queue is free, so its packets never
 * overtake each other. A flow that shares its home marks the home
 * (aqm_flow.guest) until the home is next free; until then every flow
 * of that home without a queue of its own shares it too, instead of
 * claiming a queue that came free while its packets still wait at home.
 */
/* Bit j set: way j of the set at tag holds tag x. The array has
 * AQM_FLOW_WAYS - 1 tags of padding, so a short last set reads no
 * further than it; the caller masks the ways past its end. */
static __rte_always_inline uint32_t
ways_matching(const uint32_t *tag, uint32_t x)
{
#if defined(RTE_ARCH_X86)
	static_assert(AQM_FLOW_WAYS == 8, "two 4-lane compares");
	const __m128i xv = _mm_set1_epi32((int)x);
	__m128i lo = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)tag), xv);
	__m128i hi = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(tag + 4)), xv);

	return (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(lo)) |
	       (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(hi)) << 4;
#else
	uint32_t m = 0;

	for (uint32_t j = 0; j < AQM_FLOW_WAYS; j++)
		m |= (uint32_t)(tag[j] == x) << j;
	return m;
#endif
}

/* The queue among tags[0, n) whose tag is x, looked for in the set of
 * home (which does not hold it), or AQM_NONE. */
static __rte_always_inline uint32_t
set_match(const uint32_t *tag, uint32_t n, uint32_t home, uint32_t x)
{
	uint32_t set = home & ~(uint32_t)(AQM_FLOW_WAYS - 1);
	uint32_t ways = RTE_MIN(n - set, (uint32_t)AQM_FLOW_WAYS);
	uint32_t m = ways_matching(tag + set, x) & ((1u << ways) - 1);

	return m != 0 ? set + (uint32_t)__builtin_ctz(m) : AQM_NONE;
}

/* No queue of the set holds tag x: claim a free one, from home on.
 * First one that is not the home of the flow that last had it (a flow
 * whose tag is there would find it when it comes back), then any. So
 * a set never visited by more flows than it has ways keeps each flow
 * in the same queue, at home where it can, and flows that share a home
 * do not take turns evicting each other. */
static __rte_noinline uint32_t
flow_claim(struct aqm_sched *s, struct aqm_pipe *p, uint32_t base, uint32_t n,
	   uint32_t set, uint32_t k, uint32_t x)
{
	uint32_t *tag = aqm_pipe_tags(s, p) + base + set;
	struct aqm_flow *home = &p->flows[base + set + k];
	uint32_t ways = RTE_MIN(n - set, (uint32_t)AQM_FLOW_WAYS);
	uint32_t w = k, spare = AQM_NONE;

	/* A flow that shared its home may still have packets there: while
	 * the home holds a guest's packets, a flow without a queue stays
	 * there too, so none overtakes its own packets by moving. */
	if (unlikely(home->guest) && !aqm_flow_free(home))
		goto share;
	for (uint32_t j = 0; j < ways; j++, w = w + 1 < ways ? w + 1 : 0) {
		if (!aqm_flow_free(&p->flows[base + set + w]))
			continue;
		if (tag[w] == 0 || aqm_flow_home(tag[w], n) != set + w)
			goto take;
		if (spare == AQM_NONE)
			spare = w;
	}
	if (spare == AQM_NONE) {
share:
		s->ways.collisions++;
		home->guest = 1;
		return base + set + k;
	}
	w = spare;
take:
	tag[w] = x;
	s->ways.misses++;
	return base + set + w;
}

/* The queue of the flow with tag x among queues [base, base + n) of p. */
static __rte_always_inline uint32_t
flow_find(struct aqm_sched *s, struct aqm_pipe *p, uint32_t base, uint32_t n,
	  uint32_t x)
{
	uint32_t home = aqm_flow_home(x, n);
	const uint32_t *tag = aqm_pipe_tags(s, p) + base;
	uint32_t set, q;

	/* Most packets: a flow already in its home queue. */
	if (likely(tag[home] == x))
		return base + home;
	q = set_match(tag, n, home, x);
	if (likely(q != AQM_NONE)) {
		s->ways.hits++;
		return base + q;
	}
	set = home & ~(uint32_t)(AQM_FLOW_WAYS - 1);
	return flow_claim(s, p, base, n, set, home - set, x);
}

uint32_t
aqm_fq_flow_lookup(const struct aqm_sched *s, const struct aqm_pipe *p,
		   uint32_t h)
{
	uint32_t x = aqm_flow_tag(h, p->seed);
	uint32_t n = p->flow_mask + 1;
	uint32_t home = aqm_flow_home(x, n);
	const uint32_t *tag = aqm_pipe_tags(s, p);
	uint32_t q;

	if (tag[home] == x)
		return home;
	q = set_match(tag, n, home, x);
	return q != AQM_NONE ? q : home;
}

/* Queue m in flow fi of p. plain (a constant): p->enq_extra is 0, so p
 * runs FQ-CoDel without host tracking or tins. */
static __rte_always_inline void
fq_queue_(struct aqm_sched *s, struct aqm_pipe *p, uint32_t fi,
	  struct rte_mbuf *m, uint64_t now, const bool plain)
{
	struct aqm_flow *f = &p->flows[fi];
	uint32_t len = rte_pktmbuf_pkt_len(m);

	pkt_meta(m)->enq_ns = now;
	flow_append(s, f, m);
	f->backlog += len;
	p->backlog_pkts++;
	p->backlog_bytes += len;
	p->mem += aqm_truesize(m);
	s->pending++;
	if (!plain && p->qdisc == AQM_QDISC_FIFO)
		return;
	if (f->list == AQM_LIST_NONE) {
		struct aqm_list *nl = &p->new_flows;

		/* A flow with no queue and no list entry is new (s. 4.1).
		 * Without a held ACK, the queue was free: no guest waits. */
		if (f->hold == 0)
			f->guest = 0;
		if (!plain && (p->isolation & AQM_ISO_TRACKED))
			hosts_bind(s, p, fi, m);
		if (!plain && unlikely(p->diffserv & AQM_DS_MODE))
			nl = aqm_tin_new_list(s, p, f, m);
		f->list = AQM_LIST_NEW;
		f->deficit = (int32_t)p->quantum;
		list_push(p->flows, nl, fi);
	}
	if (unlikely(p->backlog_pkts > p->limit_pkts))
		aqm_fq_drop_fattest(s, p, AQM_DROP_OVERFLOW, now);
	else if (unlikely(p->mem > p->mem_limit))
		aqm_fq_drop_fattest(s, p, AQM_DROP_MEMORY, now);
	else if (unlikely(s->limit_pkts && s->pending > s->limit_pkts))
		aqm_fq_drop_fattest(s, p, AQM_DROP_MEMORY, now);
}

void
aqm_fq_queue(struct aqm_sched *s, struct aqm_pipe *p, uint32_t fi,
	     struct rte_mbuf *m, uint64_t now)
{
	fq_queue_(s, p, fi, m, now, false);
}

/* aqm_fq_enqueue() for a pipe with anything in p->enq_extra. */
static __rte_noinline uint32_t
fq_enqueue_extra(struct aqm_sched *s, struct aqm_pipe *p, struct rte_mbuf *m,
		 uint64_t now)
{
	uint32_t len = rte_pktmbuf_pkt_len(m);
	uint32_t fi = 0;

	if (p->qdisc == AQM_QDISC_FIFO) {
		if (p->backlog_bytes + len > p->fifo_limit_bytes ||
		    p->backlog_pkts >= p->limit_pkts) {
			p->st.drops[AQM_DROP_OVERFLOW]++;
			rte_pktmbuf_free(m);
			return 0;
		}
		if (s->limit_pkts && s->pending >= s->limit_pkts) {
			p->st.drops[AQM_DROP_MEMORY]++;
			rte_pktmbuf_free(m);
			return 0;
		}
	} else {
		uint32_t x = aqm_flow_tag(pkt_flow_hash(pkt_meta(m)), p->seed);
		uint32_t base = 0, n = p->flow_mask + 1;

		/* Each tin has its own flow queues (aqm_tin_slice()). */
		if (unlikely(p->diffserv & AQM_DS_MODE))
			aqm_tin_slice(p, m, &base, &n);
		fi = flow_find(s, p, base, n, x);
	}
	p->st.enq_pkts++;
	p->st.enq_bytes += len;
	/* The ACK filter, and the hold, which may keep m back for now. */
	if ((p->enq_extra & (AQM_ACKF_FILTER | AQM_ACKF_HOLD)) &&
	    aqm_hold_enqueue(s, p, fi, m, now))
		return 1;
	fq_queue_(s, p, fi, m, now, false);
	return 1;
}

/*
 * Inlined into the scheduler's enqueue (aqm_sched.c, through LTO). Most
 * pipes run plain FQ-CoDel: one test of p->enq_extra sends the others
 * (FIFO, the ACK filter, host isolation, tins) out of line, and the plain
 * ones do exactly what fq_enqueue_extra() would do for them.
 */
__rte_always_inline uint32_t
aqm_fq_enqueue(struct aqm_sched *s, struct aqm_pipe *p, struct rte_mbuf *m,
	       uint64_t now)
{
	uint32_t len;

	if (unlikely(p->enq_extra != 0))
		return fq_enqueue_extra(s, p, m, now);
	len = rte_pktmbuf_pkt_len(m);
	p->st.enq_pkts++;
	p->st.enq_bytes += len;
	fq_queue_(s, p, flow_find(s, p, 0, p->flow_mask + 1,
				  aqm_flow_tag(pkt_flow_hash(pkt_meta(m)), p->seed)),
		  m, now, true);
	return 1;
}

struct codel_ctx {
	struct aqm_sched *s;
	struct aqm_pipe *p;
	struct aqm_flow *f;
	uint64_t now;
};

/*
 * BLUE's part of taking the head packet m of flow f: update p from m's
 * sojourn and from whether the queue is now empty, then, unless m was the
 * last packet queued, drop m with probability p, ECN-capable or not.
 * Returns true if m was dropped (freed and counted).
 */
static bool
blue_head(struct codel_ctx *c, struct rte_mbuf *m)
{
	struct aqm_pipe *p = c->p;
	struct aqm_flow *f = c->f;
	uint64_t sojourn = c->now - pkt_meta(m)->enq_ns;

	/* Long sojourn with a long queue: a window-based sender's queue is
	 * bounded in packets, so at a small share of a slow pipe a flow that
	 * answers marks may wait long, but it does not also queue much. */
	if (sojourn > p->blue_threshold_ms * 1000000ULL &&
	    f->backlog > p->blue_min_bytes)
		blue_raise(p, f, c->now);
	else if (sojourn < p->codel.target_ns || f->head == NULL)
		blue_lower(p, f, c->now);
	/* The flow's last packet is never dropped: that would only idle
	 * the link (CoDel spares it too). */
	if (f->cv.blue_p == 0 || f->head == NULL || blue_draw(c->s) >= f->cv.blue_p)
		return false;
	p->st.drops[AQM_DROP_BLUE]++;
	tin_count_drop(c->s, p, f);
	rte_pktmbuf_free(m);
	return true;
}

/*
 * codel_cb_dequeue() for a flow BLUE may act on, out of line: BLUE's work
 * at the head for m, and for the packets after it for as long as BLUE
 * drops them. Returns the packet that stays, or NULL if the flow ran
 * empty.
 */
static __rte_noinline void *
blue_dequeue(struct codel_ctx *c, struct rte_mbuf *m, uint64_t *enq_ns,
	     uint32_t *backlog)
{
	while (blue_head(c, m)) {
		m = flow_take_head(c->s, c->p, c->f);
		if (m == NULL)
			return NULL;
	}
	*enq_ns = pkt_meta(m)->enq_ns;
	*backlog = c->f->backlog;
	return m;
}

/* (Always inlined: fq_dequeue_lists() calls it directly for the head.) */
static __rte_always_inline void *
codel_cb_dequeue(void *arg, uint64_t *enq_ns, uint32_t *backlog)
{
	struct codel_ctx *c = arg;
	struct rte_mbuf *m = flow_take_head(c->s, c->p, c->f);

	if (m == NULL)
		return NULL;
	/*
	 * BLUE has nothing to do for a flow whose p is 0 and that keeps no
	 * more than blue_min_bytes queued behind m: blue_head() would
	 * neither raise p (that needs more queued), nor lower it, nor draw.
	 * That common case costs two compares; the rest runs out of line
	 * (a tail call, so the common case saves no registers for it).
	 */
	if (unlikely(c->f->cv.blue_p != 0 || c->f->backlog > c->p->blue_min_bytes) &&
	    c->p->blue_inc != 0)
		return blue_dequeue(c, m, enq_ns, backlog);
	*enq_ns = pkt_meta(m)->enq_ns;
	*backlog = c->f->backlog;
	return m;
}

static void
codel_cb_drop(void *arg, void *pkt)
{
	struct codel_ctx *c = arg;

	c->p->st.drops[AQM_DROP_CODEL]++;
	tin_count_drop(c->s, c->p, c->f);
	rte_pktmbuf_free(pkt);
}

/* A CoDel mark escalated to a drop (aqm_codel_params.ecn_drop_count). */
static bool
codel_cb_drop_ect(void *arg, void *pkt)
{
	struct codel_ctx *c = arg;

	if (!aqm_ecn_capable(pkt))
		return false;
	c->p->st.drops[AQM_DROP_ECN]++;
	tin_count_drop(c->s, c->p, c->f);
	rte_pktmbuf_free(pkt);
	return true;
}

static bool
codel_cb_mark(void *arg, void *pkt, enum aqm_codel_mark_reason why)
{
	struct codel_ctx *c = arg;

	if (!aqm_ecn_mark_ce(pkt))
		return false;
	if (why == AQM_CODEL_MARK_CONTROL_LAW)
		c->p->st.ce_marks++;
	else
		c->p->st.ce_threshold_marks++;
	if (unlikely(c->p->diffserv & (AQM_DS_MODE | AQM_DS_INNER)))
		flow_tin(c->s, c->p, c->f)->st.marks++;
	return true;
}

static const struct aqm_codel_ops codel_ops = {
	.dequeue = codel_cb_dequeue,
	.drop = codel_cb_drop,
	.mark = codel_cb_mark,
	.drop_ect = codel_cb_drop_ect,
};

/* DRR++ over one pair of new and old lists (the pipe's, or a tin's). */
static inline struct rte_mbuf *
fq_dequeue_lists(struct aqm_sched *s, struct aqm_pipe *p,
		 struct aqm_list *new_flows, struct aqm_list *old_flows,
		 uint64_t now)
{
	struct codel_ctx c = { .s = s, .p = p, .now = now };

	for (;;) {
		struct aqm_list *l;
		struct aqm_flow *f;
		struct rte_mbuf *m;
		uint64_t enq;
		uint32_t fi, backlog;

		if (new_flows->head != AQM_NONE)
			l = new_flows;
		else if (old_flows->head != AQM_NONE)
			l = old_flows;
		else
			return NULL;
		fi = l->head;
		f = &p->flows[fi];
		if (f->deficit <= 0) {
			/* Spent its quantum: refill, go to the back of the old list. */
			f->deficit += flow_quantum(s, p, fi);
			list_pop(p->flows, l);
			f->list = AQM_LIST_OLD;
			list_push(p->flows, old_flows, fi);
			continue;
		}
		c.f = f;
		/* The take inlined here; CoDel's drops take through codel_ops. */
		enq = 0;
		backlog = 0;
		m = codel_cb_dequeue(&c, &enq, &backlog);
		m = aqm_codel_dequeue_taken(&f->cv, &p->codel, &codel_ops, &c, now,
					    m, enq, backlog);
		if (m == NULL) {
			list_pop(p->flows, l);
			/*
			 * An emptied new flow goes to the old list so it cannot
			 * jump the queue again right away (s. 4.2); an emptied
			 * old flow leaves the lists.
			 */
			if (l == new_flows && old_flows->head != AQM_NONE) {
				f->list = AQM_LIST_OLD;
				list_push(p->flows, old_flows, fi);
			} else {
				flow_unlist(s, p, fi);
			}
			continue;
		}
		f->deficit -= (int32_t)rte_pktmbuf_pkt_len(m);
		return m;
	}
}

/*
 * A pipe with tins: the highest-priority tin with flows listed that is
 * under its threshold (its clock not ahead of the pipe's), else the tin
 * with flows listed whose clock is earliest (over their thresholds, tins
 * share what is left in proportion to their thresholds); NULL if no tin
 * has flows listed.
 */
static struct aqm_tin *
tin_pick(struct aqm_pipe_tins *pt)
{
	struct aqm_tin *best = NULL;

	for (unsigned int i = 0; i < pt->ntins; i++) {
		struct aqm_tin *t = &pt->tin[pt->order[i]];

		if (t->new_flows.head == AQM_NONE && t->old_flows.head == AQM_NONE)
			continue;
		if (t->vt <= pt->vt)
			return t;
		if (best == NULL || t->vt < best->vt)
			best = t;
	}
	return best;
}

/* m left tin t (NULL: no tins) of p: charge the clocks, count, wash. */
static void
diffserv_sent(struct aqm_sched *s, struct aqm_pipe *p, struct aqm_tin *t,
	      struct rte_mbuf *m)
{
	if (t != NULL) {
		aqm_tin_charge(p, aqm_pipe_tins(s, p), t,
			       aqm_pipe_wire_len(p, rte_pktmbuf_pkt_len(m)));
		t->st.tx_pkts++;
		t->st.tx_bytes += rte_pktmbuf_pkt_len(m);
	}
	if (p->diffserv & AQM_DS_WASH)
		aqm_dscp_wash(s, m);
}

static __rte_noinline struct rte_mbuf *
dequeue_diffserv(struct aqm_sched *s, struct aqm_pipe *p, uint64_t now);

/* Inlined into the scheduler's dequeue loop (aqm_sched.c, through LTO):
 * called there once per packet sent, and a call with the registers it
 * saves cost about 20 instructions a packet. */
__rte_always_inline struct rte_mbuf *
aqm_fq_dequeue(struct aqm_sched *s, struct aqm_pipe *p, uint64_t now)
{
	if (unlikely(p->diffserv & (AQM_DS_MODE | AQM_DS_WASH)))
		return dequeue_diffserv(s, p, now);
	if (p->qdisc == AQM_QDISC_FIFO)
		return flow_take_head(s, p, &p->flows[0]);
	return fq_dequeue_lists(s, p, &p->new_flows, &p->old_flows, now);
}

/*
 * Pipes with tins or wash, off the common path. A tin's lists take the
 * pipe's place for one aqm_fq_dequeue() with the mode bits cleared
 * (AQM_DS_INNER set, so drops and marks still count in the tin): the
 * same DRR++ loop serves every pipe. A tin whose listed flows turn out
 * empty (they leave the lists only when DRR++ next visits them) gives
 * NULL with its lists cleaned: pick again.
 */
static __rte_noinline struct rte_mbuf *
dequeue_diffserv(struct aqm_sched *s, struct aqm_pipe *p, uint64_t now)
{
	const uint8_t ds = p->diffserv;
	struct aqm_tin *t = NULL;
	struct rte_mbuf *m;

	if (p->qdisc == AQM_QDISC_FIFO || !(ds & AQM_DS_MODE)) {
		p->diffserv = 0;
		m = aqm_fq_dequeue(s, p, now);
		p->diffserv = ds;
	} else {
		do {
			t = tin_pick(aqm_pipe_tins(s, p));
			if (t == NULL)
				return NULL;
			p->new_flows = t->new_flows;
			p->old_flows = t->old_flows;
			p->diffserv = AQM_DS_INNER;
			m = aqm_fq_dequeue(s, p, now);
			p->diffserv = ds;
			t->new_flows = p->new_flows;
			t->old_flows = p->old_flows;
			p->new_flows.head = p->new_flows.tail = AQM_NONE;
			p->old_flows.head = p->old_flows.tail = AQM_NONE;
		} while (m == NULL);
	}
	if (m != NULL)
		diffserv_sent(s, p, t, m);
	return m;
}

/* One list of an idle pipe: what the dequeue loop does to empty flows,
 * without CoDel calls. A flow that spent its quantum is refilled until it
 * is positive (it would go round the old list), and visiting an empty
 * flow ends CoDel's dropping state; then it leaves the list. */
static __rte_noinline void
idle_refill(struct aqm_sched *s, struct aqm_pipe *p, uint32_t fi)
{
	struct aqm_flow *f = &p->flows[fi];

	while (f->deficit <= 0)
		f->deficit += flow_quantum(s, p, fi);
}

static inline void
idle_list(struct aqm_sched *s, struct aqm_pipe *p, struct aqm_list *l)
{
	uint32_t fi = l->head;

	while (fi != AQM_NONE) {
		struct aqm_flow *f = &p->flows[fi];
		uint32_t i = fi;

		fi = f->next;
		/* (Out of line: a flow that had a quantum's worth queued.) */
		if (unlikely(f->deficit <= 0))
			idle_refill(s, p, i);
		f->cv.dropping = 0;
		f->cv.first_above_ns = 0;
		flow_unlist(s, p, i);
	}
	l->head = l->tail = AQM_NONE;
}

void
aqm_fq_idle(struct aqm_sched *s, struct aqm_pipe *p)
{
	if (p->qdisc == AQM_QDISC_FIFO)
		return;
	idle_list(s, p, &p->new_flows);
	idle_list(s, p, &p->old_flows);
	if (unlikely(p->diffserv & AQM_DS_MODE)) {
		struct aqm_pipe_tins *pt = aqm_pipe_tins(s, p);

		for (unsigned int t = 0; t < pt->ntins; t++) {
			idle_list(s, p, &pt->tin[t].new_flows);
			idle_list(s, p, &pt->tin[t].old_flows);
		}
	}
}

/* Shutdown: the head packet of the first flow of one pair of lists. */
static struct rte_mbuf *
flush_lists(struct aqm_sched *s, struct aqm_pipe *p,
	    struct aqm_list *new_flows, struct aqm_list *old_flows)
{
	for (;;) {
		struct aqm_list *l;
		struct rte_mbuf *m;
		uint32_t fi;

		if (new_flows->head != AQM_NONE)
			l = new_flows;
		else if (old_flows->head != AQM_NONE)
			l = old_flows;
		else
			return NULL;
		fi = l->head;
		m = flow_take_head(s, p, &p->flows[fi]);
		if (m != NULL)
			return m;
		list_pop(p->flows, l);
		flow_unlist(s, p, fi);
	}
}

struct rte_mbuf *
aqm_fq_flush_one(struct aqm_sched *s, struct aqm_pipe *p)
{
	struct aqm_pipe_tins *pt;

	if (p->qdisc == AQM_QDISC_FIFO)
		return flow_take_head(s, p, &p->flows[0]);
	if (!(p->diffserv & AQM_DS_MODE))
		return flush_lists(s, p, &p->new_flows, &p->old_flows);
	pt = aqm_pipe_tins(s, p);
	for (unsigned int i = 0; i < pt->ntins; i++) {
		struct aqm_tin *t = &pt->tin[pt->order[i]];
		struct rte_mbuf *m = flush_lists(s, p, &t->new_flows, &t->old_flows);

		if (m != NULL)
			return m;
	}
	return NULL;
}
