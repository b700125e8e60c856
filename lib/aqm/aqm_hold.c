/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ACK hold (ACK decimation, the idea of RFC 3449 sections 5.2 and 5.3): on
 * a backlogged upstream the ACK filter alone removes few ACKs, because
 * DRR++ serves each ACK flow as a sparse flow within about one round, so an
 * ACK rarely waits behind a newer one. The hold makes it wait: a pure ACK
 * that arrives while its pipe is backlogged is kept outside the queue for
 * up to the scheduler's hold time, and a newer ACK of the same connection
 * that supersedes it (aqm_ack_supersedes()) takes its place without
 * extending the deadline. When the deadline comes, or the pipe's queue runs
 * empty, or any other packet for the same flow queue arrives, the held ACK
 * joins the tail of its flow queue first, so nothing is reordered.
 *
 * Bookkeeping: one held ACK per flow queue at most (aqm_flow.hold names its
 * slot), and a ring of slots in arrival order, which is deadline order.
 */
#include "aqm_priv.h"

struct rte_mbuf *
aqm_hold_take(struct aqm_sched *s, struct aqm_hold *h)
{
	struct aqm_pipe *p = &s->pipes[h->pipe];
	struct rte_mbuf *m = h->m;

	h->m = NULL;
	p->flows[h->flow].hold = 0;
	p->held--;
	s->held--;
	s->pending--;
	return m;
}

/* Move the ACK of h into its flow queue, as if it arrived at now. */
static void
hold_release(struct aqm_sched *s, struct aqm_hold *h, uint64_t now)
{
	struct aqm_pipe *p = &s->pipes[h->pipe];
	struct aqm_flow *f = &p->flows[h->flow];
	struct rte_mbuf *m = aqm_hold_take(s, h);
	/* How long the slot was kept (it opened a hold time before its
	 * deadline), into the pipe's average: 1/8 per slot. */
	const uint64_t open = h->deadline - s->hold_ns;
	const uint64_t age = RTE_MIN(now > open ? now - open : 0, s->hold_ns);

	p->hold_age_ns = p->hold_age_ns - (p->hold_age_ns >> 3) + (age >> 3);
	if (f->tail != NULL)
		aqm_ack_filter(s, p, f, m);
	aqm_fq_queue(s, p, h->flow, m, now);
}

bool
aqm_hold_enqueue(struct aqm_sched *s, struct aqm_pipe *p, uint32_t fi,
		 struct rte_mbuf *m, uint64_t now)
{
	struct aqm_flow *f = &p->flows[fi];

	if (unlikely(f->hold != 0)) {
		struct aqm_hold *h = &s->hold[f->hold - 1];

		if (h->deadline <= now) {
			/* Its time is up (no dequeue came since): it went
			 * into the queue at its deadline, before m. */
			hold_release(s, h, h->deadline);
		} else if (aqm_ack_supersedes(m, h->m)) {
			/* Same slot, same deadline: replacing never delays. */
			rte_pktmbuf_free(h->m);
			h->m = m;
			p->st.ack_filtered++;
			p->st.ack_held++;
			return true;
		} else {
			/* Anything else for this flow queue goes behind it. */
			hold_release(s, h, now);
		}
	}
	/*
	 * An ACK that replaces a queued one takes its place in the queue:
	 * that one may have been released from the hold a moment ago, and
	 * holding its successor again would let a steady stream of ACKs
	 * keep the connection's newest ACK from the link for ever.
	 */
	if (f->tail != NULL && aqm_ack_filter(s, p, f, m))
		return false;
	/*
	 * Hold only where it helps: the pipe is shaped and at least one
	 * quantum of bytes waits in its queue, so the link is busy anyway
	 * for a packet time and the ACK would wait too. An idle or lightly
	 * loaded pipe sends its ACKs at once.
	 */
	if (aqm_hold_busy(p) &&
	    s->hold_tail - s->hold_head <= s->hold_mask &&
	    (s->limit_pkts == 0 || s->pending < s->limit_pkts) &&
	    aqm_ack_is_pure(m)) {
		uint32_t slot = s->hold_tail++ & s->hold_mask;
		struct aqm_hold *h = &s->hold[slot];

		h->m = m;
		h->deadline = now + s->hold_ns;
		h->pipe = (uint32_t)(p - s->pipes);
		h->flow = fi;
		if (aqm_flow_free(f))
			f->guest = 0; /* the queue was free: no guest waits */
		f->hold = slot + 1;
		p->held++;
		s->held++;
		s->pending++;
		p->st.ack_held++;
		return true;
	}
	return false;
}

void
aqm_hold_expire(struct aqm_sched *s, uint64_t now)
{
	while (s->hold_head != s->hold_tail) {
		struct aqm_hold *h = &s->hold[s->hold_head & s->hold_mask];

		if (h->m != NULL) {
			uint32_t idx = h->pipe;

			if (h->deadline > now)
				break;
			/* It joined the queue at its deadline, whenever we
			 * got round to it: the sojourn counts the delay. */
			hold_release(s, h, h->deadline);
			aqm_sched_pipe_wake(s, idx, now);
		}
		s->hold_head++;
	}
}

void
aqm_hold_release_pipe(struct aqm_sched *s, uint32_t idx, uint64_t now)
{
	struct aqm_pipe *p = &s->pipes[idx];

	/* Walk the pipe's flows or the ring, whichever is shorter (many
	 * pipes may hold ACKs at once). Its held ACKs are of different flow
	 * queues, so the order among them does not matter. */
	if (p->flow_mask < s->hold_tail - s->hold_head) {
		for (uint32_t fi = 0; p->held != 0 && fi <= p->flow_mask; fi++)
			if (p->flows[fi].hold != 0)
				hold_release(s, &s->hold[p->flows[fi].hold - 1], now);
		return;
	}
	for (uint32_t i = s->hold_head; p->held != 0 && i != s->hold_tail; i++) {
		struct aqm_hold *h = &s->hold[i & s->hold_mask];

		if (h->m != NULL && h->pipe == idx)
			hold_release(s, h, now);
	}
}

uint16_t
aqm_hold_flush(struct aqm_sched *s, struct rte_mbuf **pkts, uint16_t max)
{
	uint16_t n = 0;

	while (n < max && s->hold_head != s->hold_tail) {
		struct aqm_hold *h = &s->hold[s->hold_head & s->hold_mask];

		if (h->m != NULL) {
			const bool wash = s->pipes[h->pipe].diffserv & AQM_DS_WASH;
			struct rte_mbuf *m = aqm_hold_take(s, h);

			if (wash)
				aqm_dscp_wash(s, m);
			pkts[n++] = m;
		}
		s->hold_head++;
	}
	return n;
}
