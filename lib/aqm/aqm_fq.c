/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FQ-CoDel (RFC 8290) and the plain FIFO, per pipe. Flows are hashed into
 * the pipe's slice of the flow pool; DRR++ serves the new-flow list before
 * the old-flow list (section 4.2), and each flow runs its own CoDel.
 */
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
 * rises by blue_inc when the flow overflows a limit or a packet of it waited
 * longer than blue_threshold_ms, and falls by blue_dec when the flow's queue
 * empties or a packet leaves it below CoDel's target; at most one change
 * per blue_ticks ticks, except that a rise from 0 is never held back. The
 * tick stamp is 8 bits: after 256 ticks (268 ms) without a change the next
 * one may wait up to blue_ticks longer than it should, never less.
 */
static inline bool
blue_may_change(const struct aqm_pipe *p, const struct aqm_flow *f, uint64_t now)
{
	uint8_t tick = (uint8_t)(now >> AQM_BLUE_TICK_SHIFT);

	return (uint8_t)(tick - f->cv.blue_when) >= p->blue_ticks;
}

static inline void
blue_raise(struct aqm_pipe *p, struct aqm_flow *f, uint64_t now)
{
	uint32_t v;

	if (p->blue_inc == 0 || (f->cv.blue_p != 0 && !blue_may_change(p, f, now)))
		return;
	p->blue_flows += f->cv.blue_p == 0;
	v = (uint32_t)f->cv.blue_p + p->blue_inc;
	f->cv.blue_p = (uint16_t)RTE_MIN(v, (uint32_t)UINT16_MAX);
	f->cv.blue_when = (uint8_t)(now >> AQM_BLUE_TICK_SHIFT);
}

static inline void
blue_lower(struct aqm_pipe *p, struct aqm_flow *f, uint64_t now)
{
	if (f->cv.blue_p == 0 || !blue_may_change(p, f, now))
		return;
	f->cv.blue_p = f->cv.blue_p > p->blue_dec ?
		(uint16_t)(f->cv.blue_p - p->blue_dec) : 0;
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
		rte_pktmbuf_free(m);
	} while (++n < p->drop_batch && dropped < half);
}

static inline void
fq_queue(struct aqm_sched *s, struct aqm_pipe *p, uint32_t fi,
	 struct rte_mbuf *m, uint64_t now)
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
	if (p->qdisc == AQM_QDISC_FIFO)
		return;
	if (f->list == AQM_LIST_NONE) {
		/* A flow with no queue and no list entry is new (s. 4.1). */
		f->list = AQM_LIST_NEW;
		f->deficit = (int32_t)p->quantum;
		list_push(p->flows, &p->new_flows, fi);
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
	fq_queue(s, p, fi, m, now);
}

uint32_t
aqm_fq_enqueue(struct aqm_sched *s, struct aqm_pipe *p, struct rte_mbuf *m,
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
		fi = aqm_flow_index(pkt_flow_hash(pkt_meta(m)), p->seed, p->flow_mask);
	}
	p->st.enq_pkts++;
	p->st.enq_bytes += len;
	/* The ACK filter, and the hold, which may keep m back for now. */
	if (unlikely(p->ack_filter != 0) && aqm_hold_enqueue(s, p, fi, m, now))
		return 1;
	fq_queue(s, p, fi, m, now);
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

	if (sojourn > p->blue_threshold_ms * 1000000ULL)
		blue_raise(p, f, c->now);
	else if (sojourn < p->codel.target_ns || f->head == NULL)
		blue_lower(p, f, c->now);
	/* The flow's last packet is never dropped: that would only idle
	 * the link (CoDel spares it too). */
	if (f->cv.blue_p == 0 || f->head == NULL || blue_draw(c->s) >= f->cv.blue_p)
		return false;
	p->st.drops[AQM_DROP_BLUE]++;
	rte_pktmbuf_free(m);
	return true;
}

static void *
codel_cb_dequeue(void *arg, uint64_t *enq_ns, uint32_t *backlog)
{
	struct codel_ctx *c = arg;
	struct rte_mbuf *m;

	do {
		m = flow_take_head(c->s, c->p, c->f);
		if (m == NULL)
			return NULL;
	} while (unlikely(c->p->blue_inc != 0) && blue_head(c, m));
	*enq_ns = pkt_meta(m)->enq_ns;
	*backlog = c->f->backlog;
	return m;
}

static void
codel_cb_drop(void *arg, void *pkt)
{
	struct codel_ctx *c = arg;

	c->p->st.drops[AQM_DROP_CODEL]++;
	rte_pktmbuf_free(pkt);
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
	return true;
}

static const struct aqm_codel_ops codel_ops = {
	.dequeue = codel_cb_dequeue,
	.drop = codel_cb_drop,
	.mark = codel_cb_mark,
};

struct rte_mbuf *
aqm_fq_dequeue(struct aqm_sched *s, struct aqm_pipe *p, uint64_t now)
{
	struct codel_ctx c = { .s = s, .p = p, .now = now };

	if (p->qdisc == AQM_QDISC_FIFO)
		return flow_take_head(s, p, &p->flows[0]);

	for (;;) {
		struct aqm_list *l;
		struct aqm_flow *f;
		struct rte_mbuf *m;
		uint32_t fi;

		if (p->new_flows.head != AQM_NONE)
			l = &p->new_flows;
		else if (p->old_flows.head != AQM_NONE)
			l = &p->old_flows;
		else
			return NULL;
		fi = l->head;
		f = &p->flows[fi];
		if (f->deficit <= 0) {
			/* Spent its quantum: refill, go to the back of the old list. */
			f->deficit += (int32_t)p->quantum;
			list_pop(p->flows, l);
			f->list = AQM_LIST_OLD;
			list_push(p->flows, &p->old_flows, fi);
			continue;
		}
		c.f = f;
		m = aqm_codel_dequeue(&f->cv, &p->codel, &codel_ops, &c, now);
		if (m == NULL) {
			list_pop(p->flows, l);
			/*
			 * An emptied new flow goes to the old list so it cannot
			 * jump the queue again right away (s. 4.2); an emptied
			 * old flow leaves the lists.
			 */
			if (l == &p->new_flows && p->old_flows.head != AQM_NONE) {
				f->list = AQM_LIST_OLD;
				list_push(p->flows, &p->old_flows, fi);
			} else {
				f->list = AQM_LIST_NONE;
			}
			continue;
		}
		f->deficit -= (int32_t)rte_pktmbuf_pkt_len(m);
		return m;
	}
}

/* One list of an idle pipe: what the dequeue loop does to empty flows,
 * without CoDel calls. A flow that spent its quantum is refilled until it
 * is positive (it would go round the old list), and visiting an empty
 * flow ends CoDel's dropping state; then it leaves the list. */
static inline void
idle_list(struct aqm_flow *flows, struct aqm_list *l, int32_t quantum)
{
	uint32_t fi = l->head;

	while (fi != AQM_NONE) {
		struct aqm_flow *f = &flows[fi];

		fi = f->next;
		while (f->deficit <= 0)
			f->deficit += quantum;
		f->cv.dropping = 0;
		f->cv.first_above_ns = 0;
		f->list = AQM_LIST_NONE;
	}
	l->head = l->tail = AQM_NONE;
}

void
aqm_fq_idle(struct aqm_pipe *p)
{
	if (p->qdisc == AQM_QDISC_FIFO)
		return;
	idle_list(p->flows, &p->new_flows, (int32_t)p->quantum);
	idle_list(p->flows, &p->old_flows, (int32_t)p->quantum);
}

struct rte_mbuf *
aqm_fq_flush_one(struct aqm_sched *s, struct aqm_pipe *p)
{
	if (p->qdisc == AQM_QDISC_FIFO)
		return flow_take_head(s, p, &p->flows[0]);
	for (;;) {
		struct aqm_list *l;
		struct rte_mbuf *m;
		uint32_t fi;

		if (p->new_flows.head != AQM_NONE)
			l = &p->new_flows;
		else if (p->old_flows.head != AQM_NONE)
			l = &p->old_flows;
		else
			return NULL;
		fi = l->head;
		m = flow_take_head(s, p, &p->flows[fi]);
		if (m != NULL)
			return m;
		list_pop(p->flows, l);
		p->flows[fi].list = AQM_LIST_NONE;
	}
}
