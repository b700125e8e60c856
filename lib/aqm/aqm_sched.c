/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scheduling many shaped pipes on one worker. A pipe with backlog sits in
 * exactly one place: the ready list (its shaper is due) or the timer wheel
 * slot of its next-send time. Dequeue advances the wheel to now, moves due
 * pipes to the ready list, and serves ready pipes round-robin, so it never
 * touches an idle pipe or one whose shaper is not due.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_prefetch.h>

#include "aqm_priv.h"

static const char *const aqm_drop_names[AQM_DROP_MAX] = {
#define AQM_DROP_NAME(e, s) [AQM_DROP_##e] = s,
	AQM_DROP_LIST(AQM_DROP_NAME)
#undef AQM_DROP_NAME
};

static const struct rte_mbuf_dynfield aqm_link_desc = {
	.name = "sluice_aqm_link",
	.size = sizeof(struct rte_mbuf *),
	.align = __alignof__(struct rte_mbuf *),
};

const char *
aqm_drop_reason_name(enum aqm_drop_reason r)
{
	return (unsigned int)r < AQM_DROP_MAX ? aqm_drop_names[r] : "unknown";
}

void
aqm_pipe_params_default(struct aqm_pipe_params *p)
{
	memset(p, 0, sizeof(*p));
	p->qdisc = AQM_QDISC_FQ_CODEL;
	p->fq.flows = 1024;
	p->fq.quantum = 1514;
	p->fq.limit_pkts = 10240;
	p->fq.memory_limit = 32u << 20;
	p->fq.drop_batch = 64;
	p->fq.seed = 0x5eed1e55;
	p->fq.codel.target_ns = 5000000;
	p->fq.codel.interval_ns = 100000000;
	p->fq.codel.mtu = 1514;
	p->fq.codel.ecn = true;
	p->fifo_limit_ms = 1000;
}

void
aqm_sched_params_default(struct aqm_sched_params *p)
{
	memset(p, 0, sizeof(*p));
	p->name = "aqm";
	p->socket_id = SOCKET_ID_ANY;
	p->max_pipes = 1;
	p->max_flows = 1024;
	p->burst_per_pipe = 16;
	p->wheel_slots = 4096;
	p->wheel_slot_ns = 4096;
	p->max_lag_ns = 250000;
	p->ack_hold_ns = 0;
	p->ack_hold_slots = 1024;
}

struct aqm_sched *
aqm_sched_create(const struct aqm_sched_params *p)
{
	struct aqm_sched *s;
	int off;

	if (p == NULL || p->max_pipes == 0 || p->max_flows == 0 ||
	    !rte_is_power_of_2(p->wheel_slots) ||
	    !rte_is_power_of_2(p->wheel_slot_ns) || p->burst_per_pipe == 0 ||
	    (p->ack_hold_ns != 0 &&
	     (!rte_is_power_of_2(p->ack_hold_slots) ||
	      p->ack_hold_slots > AQM_ACK_HOLD_SLOTS_MAX))) {
		rte_errno = EINVAL;
		return NULL;
	}
	off = rte_mbuf_dynfield_register(&aqm_link_desc);
	if (off < 0)
		return NULL; /* rte_errno set */
	s = rte_zmalloc_socket("aqm_sched", sizeof(*s), RTE_CACHE_LINE_SIZE,
			       p->socket_id);
	if (s == NULL)
		goto nomem;
	s->pipes = rte_zmalloc_socket("aqm_pipes",
				      (size_t)p->max_pipes * sizeof(struct aqm_pipe),
				      RTE_CACHE_LINE_SIZE, p->socket_id);
	s->flow_pool = rte_zmalloc_socket("aqm_flows",
					  (size_t)p->max_flows * sizeof(struct aqm_flow),
					  RTE_CACHE_LINE_SIZE, p->socket_id);
	s->wheel = rte_malloc_socket("aqm_wheel",
				     (size_t)p->wheel_slots * sizeof(uint32_t),
				     RTE_CACHE_LINE_SIZE, p->socket_id);
	/* Padded: the flow hash reads a whole set of tags at once. */
	s->flow_tag = rte_zmalloc_socket("aqm_flow_tag",
					 ((size_t)p->max_flows + AQM_FLOW_WAYS - 1) *
					 sizeof(uint32_t),
					 RTE_CACHE_LINE_SIZE, p->socket_id);
	if (s->pipes == NULL || s->flow_pool == NULL || s->wheel == NULL ||
	    s->flow_tag == NULL)
		goto nomem;
	if (p->isolation) {
		s->hosts = rte_malloc_socket("aqm_hosts",
					     (size_t)p->max_flows * 2 * sizeof(struct aqm_host),
					     RTE_CACHE_LINE_SIZE, p->socket_id);
		s->flow_host = rte_malloc_socket("aqm_flow_host",
						 (size_t)p->max_flows * sizeof(uint32_t),
						 RTE_CACHE_LINE_SIZE, p->socket_id);
		if (s->hosts == NULL || s->flow_host == NULL)
			goto nomem;
		for (uint32_t l = 1; l < AQM_HOST_RECIP; l++)
			s->recip[l] = 65536 / l;
	}
	if (p->diffserv) {
		s->tins = rte_zmalloc_socket("aqm_tins",
					     (size_t)p->max_pipes * sizeof(struct aqm_pipe_tins),
					     RTE_CACHE_LINE_SIZE, p->socket_id);
		if (s->tins == NULL)
			goto nomem;
	}
	if (p->ack_hold_ns != 0) {
		s->hold = rte_zmalloc_socket("aqm_hold",
					     (size_t)p->ack_hold_slots * sizeof(struct aqm_hold),
					     RTE_CACHE_LINE_SIZE, p->socket_id);
		if (s->hold == NULL)
			goto nomem;
		s->hold_ns = p->ack_hold_ns;
		s->hold_mask = p->ack_hold_slots - 1;
	}
	for (uint32_t i = 0; i < p->wheel_slots; i++)
		s->wheel[i] = AQM_NONE;
	s->max_pipes = p->max_pipes;
	s->max_flows = p->max_flows;
	s->ready.head = s->ready.tail = AQM_NONE;
	s->wheel_mask = p->wheel_slots - 1;
	s->wheel_shift = (uint32_t)__builtin_ctz(p->wheel_slot_ns);
	s->limit_pkts = p->limit_pkts;
	s->burst_per_pipe = p->burst_per_pipe;
	s->max_lag_ns = p->max_lag_ns;
	s->rng = p->rng_seed != 0 ? p->rng_seed : 0x9e3779b97f4a7c15ULL;
	s->link_off = off;
	s->socket_id = p->socket_id;
	snprintf(s->name, sizeof(s->name), "%s", p->name ? p->name : "aqm");
	return s;
nomem:
	if (s != NULL) {
		rte_free(s->pipes);
		rte_free(s->flow_pool);
		rte_free(s->flow_tag);
		rte_free(s->wheel);
		rte_free(s->hold);
		rte_free(s->hosts);
		rte_free(s->flow_host);
		rte_free(s->tins);
		rte_free(s);
	}
	rte_errno = ENOMEM;
	return NULL;
}

void
aqm_sched_free(struct aqm_sched *s)
{
	struct rte_mbuf *pkts[64];
	uint16_t n;

	if (s == NULL)
		return;
	while ((n = aqm_sched_flush_burst(s, pkts, RTE_DIM(pkts))) > 0)
		rte_pktmbuf_free_bulk(pkts, n);
	rte_free(s->pipes);
	rte_free(s->flow_pool);
	rte_free(s->flow_tag);
	rte_free(s->wheel);
	rte_free(s->hold);
	rte_free(s->hosts);
	rte_free(s->flow_host);
	rte_free(s->tins);
	rte_free(s);
}

static void
fifo_size(struct aqm_pipe *p)
{
	/* A FIFO sized in time holds that many ms of the shaped rate. */
	if (p->qdisc == AQM_QDISC_FIFO && p->fifo_limit_ms != 0 && p->ns_per_byte != 0)
		p->fifo_limit_bytes = ((8000000000ULL << 24) / p->ns_per_byte) *
				      p->fifo_limit_ms / 8000;
}

/* A pipe's counters as the API shows them: the bypass folded in. */
static void
pipe_stats(const struct aqm_pipe *p, struct aqm_pipe_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->enq_pkts = p->st.enq_pkts;
	st->enq_bytes = p->st.enq_bytes;
	st->tx_pkts = p->st.tx_pkts;
	st->tx_bytes = p->st.tx_bytes;
	memcpy(st->drops, p->st.drops, sizeof(st->drops));
	st->ce_marks = p->st.ce_marks;
	st->ce_threshold_marks = p->st.ce_threshold_marks;
	st->ack_filtered = p->st.ack_filtered;
	st->ack_held = p->st.ack_held;
	memcpy(st->sojourn_hist, p->st.sojourn_hist, sizeof(st->sojourn_hist));
	st->enq_pkts += p->byp_pkts;
	st->enq_bytes += p->byp_bytes;
	st->tx_pkts += p->byp_pkts;
	st->tx_bytes += p->byp_bytes;
	st->bypassed = p->byp_pkts;
	st->sojourn_hist[0] = aqm_hist_bucket0(p);
	st->backlog_pkts = p->backlog_pkts;
	st->backlog_bytes = p->backlog_bytes;
	st->held_pkts = p->held;
}

static int
pipe_params_check(const struct aqm_sched *s, const struct aqm_pipe_params *pp,
		  uint32_t flows)
{
	const struct aqm_fq_params *fq = &pp->fq;

	if (pp->qdisc > AQM_QDISC_FIFO || aqm_shaper_check(&pp->shaper) != 0 ||
	    flows == 0 || flows > AQM_FLOWS_MAX || !rte_is_power_of_2(flows) ||
	    fq->limit_pkts == 0)
		return -EINVAL;
	if (pp->qdisc == AQM_QDISC_FQ_CODEL &&
	    (fq->quantum == 0 || fq->quantum > INT32_MAX / 2 ||
	     fq->drop_batch == 0 || fq->codel.interval_ns == 0 ||
	     fq->codel.interval_ns >= (1ULL << 32) ||
	     (fq->codel_rate_aware && fq->codel.target_ns >= (1ULL << 32)) ||
	     fq->isolation > AQM_ISO_TRIPLE ||
	     (fq->isolation != AQM_ISO_FLOWS &&
	      (s->hosts == NULL || flows > AQM_ISO_FLOWS_MAX)) ||
	     fq->diffserv > AQM_DIFFSERV_4 ||
	     (fq->diffserv != AQM_DIFFSERV_BESTEFFORT && s->tins == NULL) ||
	     (fq->blue.inc != 0 &&
	      (fq->blue.threshold_ns < AQM_BLUE_THRESHOLD_MIN ||
	       fq->blue.threshold_ns > AQM_BLUE_THRESHOLD_MAX ||
	       fq->blue.interval_ns < AQM_BLUE_INTERVAL_MIN ||
	       fq->blue.interval_ns > AQM_BLUE_INTERVAL_MAX))))
		return -EINVAL;
	if (pp->qdisc == AQM_QDISC_FIFO && pp->fifo_limit_bytes == 0 &&
	    (pp->fifo_limit_ms == 0 || pp->shaper.rate_bps == 0))
		return -EINVAL;
	return 0;
}

/* Set up pipe p on the flow slots from base (a new pipe, or a removed one). */
static void
pipe_init(struct aqm_sched *s, struct aqm_pipe *p, const struct aqm_pipe_params *pp,
	  uint32_t flows, uint32_t base)
{
	const struct aqm_fq_params *fq = &pp->fq;

	memset(p, 0, sizeof(*p));
	p->flows = &s->flow_pool[base];
	memset(p->flows, 0, flows * sizeof(*p->flows));
	p->flow_mask = flows - 1;
	p->seed = fq->seed;
	p->new_flows.head = p->new_flows.tail = AQM_NONE;
	p->old_flows.head = p->old_flows.tail = AQM_NONE;
	p->quantum = fq->quantum;
	p->mem_limit = fq->memory_limit ? fq->memory_limit : UINT64_MAX;
	p->limit_pkts = fq->limit_pkts;
	p->drop_batch = (uint16_t)RTE_MIN(fq->drop_batch, (uint32_t)UINT16_MAX);
	p->codel = fq->codel;
	p->enq_extra = pp->qdisc == AQM_QDISC_FQ_CODEL && fq->ack_filter ?
		AQM_ACKF_FILTER | (s->hold_ns != 0 ? AQM_ACKF_HOLD : 0) : 0;
	p->hold_age_ns = s->hold_ns;
	p->qdisc = (uint8_t)pp->qdisc;
	if (pp->qdisc == AQM_QDISC_FIFO) {
		p->enq_extra |= AQM_ENQ_FIFO;
		p->fifo_limit_bytes = pp->fifo_limit_bytes;
		p->fifo_limit_ms = pp->fifo_limit_bytes ? 0 : pp->fifo_limit_ms;
	} else {
		p->codel_target_cfg = (uint32_t)fq->codel.target_ns;
		p->codel_interval_cfg = (uint32_t)fq->codel.interval_ns;
		p->codel_rate_aware = fq->codel_rate_aware;
		p->isolation = fq->isolation;
		if (s->hosts != NULL && flows <= AQM_ISO_FLOWS_MAX)
			p->isolation |= AQM_ISO_TRACKED;
		if (p->isolation & AQM_ISO_TRACKED) {
			memset(&s->hosts[2 * (size_t)base], 0,
			       2 * (size_t)flows * sizeof(struct aqm_host));
			p->enq_extra |= AQM_ENQ_HOSTS;
		}
		p->blue_inc = fq->blue.inc;
		p->blue_dec = fq->blue.dec;
		p->blue_threshold_ms = (uint16_t)((fq->blue.threshold_ns + 500000) / 1000000);
		p->blue_min_bytes = (uint32_t)RTE_MIN((uint64_t)fq->blue.min_queue *
						      fq->codel.mtu, (uint64_t)UINT32_MAX);
		/* Whole ticks, rounded up: never less than asked for. */
		p->blue_ticks = (uint8_t)((fq->blue.interval_ns +
					   (1ULL << AQM_BLUE_TICK_SHIFT) - 1) >>
					  AQM_BLUE_TICK_SHIFT);
		p->diffserv = fq->diffserv;
		if (fq->diffserv != AQM_DIFFSERV_BESTEFFORT) {
			aqm_tins_init(s, p, fq->diffserv);
			p->enq_extra |= AQM_ENQ_TINS;
		}
	}
	if (pp->wash)
		p->diffserv |= AQM_DS_WASH;
	p->link = AQM_NONE;
	aqm_shaper_apply(p, &pp->shaper);
	fifo_size(p);
}

static inline uint32_t
params_flows(const struct aqm_pipe_params *pp)
{
	return pp->qdisc == AQM_QDISC_FIFO ? 1 : pp->fq.flows;
}

int
aqm_sched_pipe_add(struct aqm_sched *s, const struct aqm_pipe_params *pp)
{
	uint32_t flows = params_flows(pp);
	int rc = pipe_params_check(s, pp, flows);

	if (rc < 0)
		return rc;
	if (s->npipes >= s->max_pipes || s->max_flows - s->flows_used < flows)
		return -ENOSPC;
	pipe_init(s, &s->pipes[s->npipes], pp, flows, s->flows_used);
	s->flows_used += flows;
	return (int)s->npipes++;
}

int
aqm_sched_pipe_reuse(struct aqm_sched *s, uint32_t pipe,
		     const struct aqm_pipe_params *pp)
{
	uint32_t flows = params_flows(pp);
	struct aqm_pipe *p;

	if (pipe >= s->npipes || s->pipes[pipe].where != AQM_PIPE_REMOVED)
		return -EINVAL;
	p = &s->pipes[pipe];
	if (flows != p->flow_mask + 1 || pipe_params_check(s, pp, flows) < 0)
		return -EINVAL;
	pipe_init(s, p, pp, flows, (uint32_t)(p->flows - s->flow_pool));
	return 0;
}

bool
aqm_sched_pipe_live(const struct aqm_sched *s, uint32_t pipe)
{
	return pipe < s->npipes && s->pipes[pipe].where != AQM_PIPE_REMOVED;
}

/* Append m to the orphans (packets of removed pipes); pending counts it. */
static inline void
orphan_push(struct aqm_sched *s, struct rte_mbuf *m)
{
	*aqm_link(s, m) = NULL;
	if (s->orphan_head == NULL)
		s->orphan_head = m;
	else
		*aqm_link(s, s->orphan_tail) = m;
	s->orphan_tail = m;
	s->pending++;
	s->removed.queued_pkts++;
	s->orphan_bytes += rte_pktmbuf_pkt_len(m);
}

/* Hand out up to max orphans, oldest first. */
static uint16_t
orphans_take(struct aqm_sched *s, struct rte_mbuf **pkts, uint16_t max)
{
	uint16_t n = 0;

	while (n < max && s->orphan_head != NULL) {
		struct rte_mbuf *m = s->orphan_head;
		uint32_t len = rte_pktmbuf_pkt_len(m);

		s->orphan_head = *aqm_link(s, m);
		pkts[n++] = m;
		s->pending--;
		s->removed.queued_pkts--;
		s->removed.sent_pkts++;
		s->removed.sent_bytes += len;
		s->orphan_bytes -= len;
		/* Sent, in the totals: the removed pipe's enqueue counted it. */
		s->retired.tx_pkts++;
		s->retired.tx_bytes += len;
	}
	if (s->orphan_head == NULL)
		s->orphan_tail = NULL;
	return n;
}

/* Take pipe idx out of the ready list or its wheel slot. */
static void
pipe_unfile(struct aqm_sched *s, uint32_t idx)
{
	struct aqm_pipe *p = &s->pipes[idx];
	uint32_t *at = NULL;

	if (p->where == AQM_PIPE_READY) {
		uint32_t prev = AQM_NONE;

		for (at = &s->ready.head; *at != idx && *at != AQM_NONE;
		     at = &s->pipes[*at].link)
			prev = *at;
		if (*at == idx && s->ready.tail == idx)
			s->ready.tail = prev;
	} else if (p->where == AQM_PIPE_WHEEL) {
		/* Its slot is that of its next-send time, unless it was
		 * filed late (then the slot of the tick it was filed at):
		 * look there first, then everywhere. */
		uint32_t home = (uint32_t)(p->next_ns >> s->wheel_shift) & s->wheel_mask;

		for (uint32_t k = 0; k <= s->wheel_mask + 1; k++) {
			uint32_t slot = k == 0 ? home : k - 1;

			for (at = &s->wheel[slot]; *at != idx && *at != AQM_NONE;
			     at = &s->pipes[*at].link)
				;
			if (*at == idx)
				break;
		}
	}
	if (at != NULL && *at == idx)
		*at = p->link;
	p->link = AQM_NONE;
	p->where = AQM_PIPE_IDLE;
}

int
aqm_sched_pipe_remove(struct aqm_sched *s, uint32_t pipe)
{
	struct aqm_pipe_stats st;
	struct aqm_pipe *p;
	uint32_t n = 0;

	if (!aqm_sched_pipe_live(s, pipe))
		return -EINVAL;
	p = &s->pipes[pipe];
	pipe_unfile(s, pipe);
	/* Each flow's packets in order, as the shutdown flush gives them. */
	while (p->backlog_pkts != 0) {
		struct rte_mbuf *m = aqm_fq_flush_one(s, p);

		if (m == NULL)
			break;
		if (p->diffserv & AQM_DS_WASH)
			aqm_dscp_wash(s, m);
		orphan_push(s, m);
		n++;
	}
	aqm_fq_idle(s, p);
	/* Held ACKs come after their flows' queued packets. */
	for (uint32_t i = s->hold_head; p->held != 0 && i != s->hold_tail; i++) {
		struct aqm_hold *h = &s->hold[i & s->hold_mask];
		struct rte_mbuf *m;

		if (h->m == NULL || h->pipe != pipe)
			continue;
		m = aqm_hold_take(s, h);
		if (p->diffserv & AQM_DS_WASH)
			aqm_dscp_wash(s, m);
		orphan_push(s, m);
		n++;
	}
	s->removed.pipes++;
	s->removed.moved_pkts += n;
	/* Its counters stay in the totals. */
	pipe_stats(p, &st);
	st.backlog_pkts = st.backlog_bytes = st.held_pkts = 0;
	aqm_pipe_stats_add(&s->retired, &st);
	if ((p->diffserv & AQM_DS_MODE) != 0) {
		struct aqm_tin_stats ts[AQM_TINS_MAX];
		int nt = aqm_sched_pipe_tin_stats(s, pipe, ts);

		for (int t = 0; t < nt; t++) {
			struct aqm_tin_stats *r = &s->retired_tins[p->diffserv & AQM_DS_MODE][t];

			r->tx_pkts += ts[t].tx_pkts;
			r->tx_bytes += ts[t].tx_bytes;
			r->drops += ts[t].drops;
			r->marks += ts[t].marks;
		}
	}
	p->where = AQM_PIPE_REMOVED;
	return (int)n;
}

void
aqm_sched_removed_stats(const struct aqm_sched *s, struct aqm_removed_stats *st)
{
	*st = s->removed;
}

int
aqm_sched_pipe_truncate(struct aqm_sched *s, uint32_t npipes)
{
	if (npipes > s->npipes)
		return -EINVAL;
	for (uint32_t i = npipes; i < s->npipes; i++) {
		const struct aqm_pipe *p = &s->pipes[i];

		if (p->backlog_pkts != 0 || p->held != 0 ||
		    p->where != AQM_PIPE_IDLE)
			return -EBUSY;
	}
	/* Pipes take their flows from the pool in order: give back the tail. */
	while (s->npipes > npipes)
		s->flows_used -= s->pipes[--s->npipes].flow_mask + 1;
	return 0;
}

int
aqm_sched_pipe_set_shaper(struct aqm_sched *s, uint32_t pipe,
			  const struct aqm_shaper_params *sp)
{
	struct aqm_pipe *p;

	if (pipe >= s->npipes || aqm_shaper_check(sp) != 0)
		return -EINVAL;
	p = &s->pipes[pipe];
	/*
	 * Only the cost of future packets changes. The pipe keeps its place
	 * (ready list or wheel slot); if its next-send time is now too far
	 * out, the wheel re-files it when its slot comes round.
	 */
	aqm_shaper_apply(p, sp);
	fifo_size(p);
	return 0;
}

int
aqm_sched_pipe_shaper(const struct aqm_sched *s, uint32_t pipe,
		      struct aqm_shaper_params *sp)
{
	const struct aqm_pipe *p;

	if (pipe >= s->npipes)
		return -EINVAL;
	p = &s->pipes[pipe];
	/* The inverse of aqm_shaper_apply(), rounded to the nearest bit/s. */
	sp->rate_bps = p->ns_per_byte ?
		((8000000000ULL << 24) + p->ns_per_byte / 2) / p->ns_per_byte : 0;
	sp->overhead = p->overhead;
	sp->mpu = p->mpu == 1 ? 0 : p->mpu;
	sp->framing = p->framing;
	return 0;
}

int
aqm_sched_pipe_set_isolation(struct aqm_sched *s, uint32_t pipe,
			     enum aqm_isolation iso)
{
	struct aqm_pipe *p;

	if (pipe >= s->npipes || (unsigned int)iso > AQM_ISO_TRIPLE)
		return -EINVAL;
	p = &s->pipes[pipe];
	if (p->qdisc != AQM_QDISC_FQ_CODEL)
		return 0; /* a FIFO has no flows to isolate */
	if (iso != AQM_ISO_FLOWS && !(p->isolation & AQM_ISO_TRACKED))
		return -EINVAL;
	p->isolation = (uint8_t)((p->isolation & ~AQM_ISO_MODE) | iso);
	return 0;
}

int
aqm_sched_pipe_codel_params(const struct aqm_sched *s, uint32_t pipe,
			    struct aqm_codel_params *cp)
{
	if (pipe >= s->npipes)
		return -EINVAL;
	*cp = s->pipes[pipe].codel;
	return 0;
}

uint32_t
aqm_sched_flow_backlog(const struct aqm_sched *s, uint32_t pipe,
		       uint32_t flow_hash)
{
	const struct aqm_pipe *p;
	const struct aqm_flow *f;
	uint32_t x, q;

	if (pipe >= s->npipes)
		return 0;
	p = &s->pipes[pipe];
	if (p->qdisc != AQM_QDISC_FQ_CODEL || p->flows == NULL)
		return 0;
	x = aqm_flow_tag(flow_hash, p->seed);
	q = aqm_fq_flow_lookup(s, p, flow_hash);
	if (aqm_pipe_tags(s, p)[q] != x)
		return 0;
	f = &p->flows[q];
	return f->guest ? 0 : f->backlog;
}

uint64_t
aqm_sched_ack_hold_ns(const struct aqm_sched *s, uint32_t pipe)
{
	const struct aqm_pipe *p;

	if (pipe >= s->npipes)
		return 0;
	p = &s->pipes[pipe];
	/* A pipe that holds an ACK already, or would hold the next one. */
	if (!(p->enq_extra & AQM_ACKF_HOLD) || p->ns_per_byte == 0)
		return 0;
	return p->held != 0 || aqm_hold_busy(p) ? p->hold_age_ns : 0;
}

uint64_t
aqm_sched_pipe_rate_Bps(const struct aqm_sched *s, uint32_t pipe)
{
	return pipe < s->npipes ? s->pipes[pipe].rate_Bps : 0;
}

static inline void
ready_push(struct aqm_sched *s, uint32_t idx)
{
	s->pipes[idx].link = AQM_NONE;
	s->pipes[idx].where = AQM_PIPE_READY;
	if (s->ready.head == AQM_NONE)
		s->ready.head = idx;
	else
		s->pipes[s->ready.tail].link = idx;
	s->ready.tail = idx;
}

static inline void
wheel_insert(struct aqm_sched *s, uint32_t idx)
{
	struct aqm_pipe *p = &s->pipes[idx];
	uint64_t tick = p->next_ns >> s->wheel_shift;
	uint32_t slot;

	if (tick < s->cur_tick)
		tick = s->cur_tick;
	slot = (uint32_t)tick & s->wheel_mask;
	p->where = AQM_PIPE_WHEEL;
	p->link = s->wheel[slot];
	s->wheel[slot] = idx;
}

/* A pipe got its first packet: file it by its shaper's next-send time. */
static inline void
pipe_activate(struct aqm_sched *s, uint32_t idx, uint64_t now)
{
	struct aqm_pipe *p = &s->pipes[idx];

	if (p->next_ns < now) {
		/* Idle time earns no credit: no bursts after a pause. */
		p->next_ns = now;
		p->next_frac = 0;
	}
	if (p->next_ns <= now || p->ns_per_byte == 0)
		ready_push(s, idx);
	else
		wheel_insert(s, idx);
}

/* File pipe idx if it holds packets but sits idle: an enqueue, or ACKs
 * released from the hold, just gave it some. */
static inline void
pipe_wake(struct aqm_sched *s, uint32_t idx, uint64_t now)
{
	const struct aqm_pipe *p = &s->pipes[idx];

	if (p->where == AQM_PIPE_IDLE && p->backlog_pkts != 0)
		pipe_activate(s, idx, now);
}

void
aqm_sched_pipe_wake(struct aqm_sched *s, uint32_t idx, uint64_t now)
{
	pipe_wake(s, idx, now);
}

/* Queue m in pipe idx of s (the pipe exists), and file the pipe if that
 * made it busy. Returns 1 if m was queued or held, 0 if it was dropped. */
static inline uint32_t
enqueue_one(struct aqm_sched *s, uint32_t idx, struct rte_mbuf *m,
	    uint64_t now_ns)
{
	uint32_t queued;

	if (unlikely(s->pipes[idx].where == AQM_PIPE_REMOVED)) {
		/* Late for a removed pipe: it goes on as its packets did. */
		orphan_push(s, m);
		s->removed.late_pkts++;
		return 1;
	}
	queued = aqm_fq_enqueue(s, &s->pipes[idx], m, now_ns);
	pipe_wake(s, idx, now_ns);
	return queued;
}

uint16_t
aqm_sched_pipe_enqueue_burst(struct aqm_sched *s, uint32_t pipe,
			     struct rte_mbuf **pkts, uint16_t n, uint64_t now_ns)
{
	struct aqm_pipe *p;
	uint16_t queued = 0;

	if (unlikely(pipe >= s->npipes)) {
		rte_pktmbuf_free_bulk(pkts, n);
		return 0;
	}
	p = &s->pipes[pipe];
	if (unlikely(p->where == AQM_PIPE_REMOVED)) {
		for (uint16_t i = 0; i < n; i++)
			queued += (uint16_t)enqueue_one(s, pipe, pkts[i], now_ns);
		return queued;
	}
	for (uint16_t i = 0; i < n; i++)
		queued += (uint16_t)aqm_fq_enqueue(s, p, pkts[i], now_ns);
	pipe_wake(s, pipe, now_ns);
	return queued;
}

/*
 * With many pipes, consecutive packets of a burst belong to different
 * pipes, and each one's pipe lines and flow line are cold (1k pipes x 32
 * flows is 2.5 MB of state). Prefetch them a few packets ahead: the pipe's
 * lines that enqueue touches first, then, once its seed and flow array
 * are in cache, the flow.
 */
#define AQM_PF_PIPE_AHEAD 8
#define AQM_PF_FLOW_AHEAD 4

static inline void
prefetch_pipe(const struct aqm_sched *s, uint32_t idx)
{
	const struct aqm_pipe *p;

	if (unlikely(idx >= s->npipes))
		return;
	p = &s->pipes[idx];
	rte_prefetch0(p);
	rte_prefetch0((const char *)p + RTE_CACHE_LINE_SIZE);
	rte_prefetch0(&p->st.enq_pkts);
}

static inline void
prefetch_flow(const struct aqm_sched *s, uint32_t idx, struct rte_mbuf *m)
{
	const struct aqm_pipe *p;
	uint32_t x, fi, base = 0, n;

	if (unlikely(idx >= s->npipes))
		return;
	p = &s->pipes[idx];
	if (p->qdisc == AQM_QDISC_FIFO)
		return;
	n = p->flow_mask + 1;
	/* The queue fq_enqueue() will look at first (with tins, in the
	 * tin's slice). */
	x = aqm_flow_tag(pkt_flow_hash(pkt_meta(m)), p->seed);
	if (unlikely(p->diffserv & AQM_DS_MODE))
		aqm_tin_slice(p, m, &base, &n);
	fi = base + aqm_flow_home(x, n);
	/* Its set's tags, and its home queue: where a flow sits unless its
	 * set was crowded when it came. */
	rte_prefetch0(&aqm_pipe_tags(s, p)[fi]);
	rte_prefetch0(&p->flows[fi]);
}

uint16_t
aqm_sched_enqueue_burst(struct aqm_sched *s, const uint32_t *pipes,
			struct rte_mbuf **pkts, uint16_t n, uint64_t now_ns)
{
	uint16_t queued = 0;

	for (uint16_t i = 0; i < n && i < AQM_PF_PIPE_AHEAD; i++)
		prefetch_pipe(s, pipes[i]);
	for (uint16_t i = 0; i < n && i < AQM_PF_FLOW_AHEAD; i++)
		prefetch_flow(s, pipes[i], pkts[i]);
	for (uint16_t i = 0; i < n; i++) {
		uint32_t idx = pipes[i];

		if (i + AQM_PF_PIPE_AHEAD < n)
			prefetch_pipe(s, pipes[i + AQM_PF_PIPE_AHEAD]);
		if (i + AQM_PF_FLOW_AHEAD < n)
			prefetch_flow(s, pipes[i + AQM_PF_FLOW_AHEAD],
				      pkts[i + AQM_PF_FLOW_AHEAD]);
		if (unlikely(idx >= s->npipes)) {
			rte_pktmbuf_free(pkts[i]);
			continue;
		}
		if (i + 1 < n)
			rte_prefetch0(pkt_meta(pkts[i + 1]));
		queued += (uint16_t)enqueue_one(s, idx, pkts[i], now_ns);
	}
	return queued;
}

/* Bits of the filter that spots pipes with two packets in one burst. */
#define AQM_BYP_FILTER_BITS 1024

static inline bool
sched_full(const struct aqm_sched *s)
{
	return s->limit_pkts != 0 && s->pending >= s->limit_pkts;
}

uint16_t
aqm_sched_enqueue_bypass_burst(struct aqm_sched *s, const uint32_t *pipes,
			       struct rte_mbuf **pkts, uint16_t n,
			       uint64_t now_ns, struct rte_mbuf **out)
{
	uint64_t seen[AQM_BYP_FILTER_BITS / 64] = { 0 };
	uint64_t twice[AQM_BYP_FILTER_BITS / 64] = { 0 };
	struct aqm_pipe *const base = s->pipes;
	const uint32_t npipes = s->npipes;
	const unsigned int cnt = n;
	struct rte_mbuf **o = out;
	bool full;

	/*
	 * Pass 1, over the pipe indices: prefetch each pipe's lines for pass
	 * 2, and find the pipes that may get more than one packet of this
	 * burst. A filter, not a set: two pipes that share a bit both count
	 * as twice, which only costs them the bypass.
	 */
	for (unsigned int i = 0; i < cnt; i++) {
		const uint32_t idx = pipes[i];
		const uint32_t b = idx & (AQM_BYP_FILTER_BITS - 1);
		const uint64_t bit = 1ULL << (b & 63);

		if (likely(idx < npipes)) {
			const char *l = (const char *)&base[idx];

			rte_prefetch0(l);
			rte_prefetch0(l + RTE_CACHE_LINE_SIZE);
			rte_prefetch0(l + offsetof(struct aqm_pipe, byp_pkts));
		}
		twice[b >> 6] |= seen[b >> 6] & bit;
		seen[b >> 6] |= bit;
	}
	/*
	 * Pass 2. A packet goes at once when the next dequeue would send it
	 * and leave its pipe empty again: the pipe holds nothing (where is
	 * IDLE only then) and gets no other packet of this burst, its shaper
	 * is due, and enqueue would take it (the limits aqm_fq_enqueue()
	 * applies to an empty pipe; limit_pkts is at least 1). Then CoDel
	 * would see a sojourn below target and DRR++ one flow alone, and the
	 * flow lists end as they began (aqm_fq_idle()). A second packet for
	 * the pipe would make DRR++ charge the first to its flow's quantum
	 * and order the flows, so such packets all take the queue.
	 */
	full = sched_full(s);
	for (unsigned int i = 0; i < cnt; i++) {
		const uint32_t idx = pipes[i];
		const uint32_t b = idx & (AQM_BYP_FILTER_BITS - 1);
		struct rte_mbuf *const m = pkts[i];
		struct aqm_pipe *p;
		uint32_t len;
		uint64_t npb;

		if (unlikely(idx >= npipes)) {
			rte_pktmbuf_free(m);
			continue;
		}
		p = &base[idx];
		len = rte_pktmbuf_pkt_len(m);
		npb = p->ns_per_byte;
		/* (An idle pipe with held ACKs is not normally seen: they
		 * are released when its queue runs empty. A guard.) */
		if (p->where != AQM_PIPE_IDLE || p->held != 0 ||
		    p->blue_flows != 0 ||
		    ((twice[b >> 6] >> (b & 63)) & 1) ||
		    (npb != 0 && p->next_ns > now_ns) || unlikely(full) ||
		    unlikely(p->qdisc == AQM_QDISC_FIFO ?
			     len > p->fifo_limit_bytes :
			     !aqm_fits_mem(m, p->mem_limit))) {
			enqueue_one(s, idx, m, now_ns);
			full = sched_full(s);
			continue;
		}
		p->byp_pkts++;
		p->byp_bytes += len;
		if (unlikely(p->diffserv != 0)) {
			if (p->diffserv & AQM_DS_MODE)
				aqm_tins_bypass(s, p, m);
			if (p->diffserv & AQM_DS_WASH)
				aqm_dscp_wash(s, m);
		}
		if (npb != 0) {
			uint64_t t = (uint64_t)aqm_pipe_wire_len(p, len) * npb;

			if (p->next_ns < now_ns) {
				/* Idle time earns no credit (pipe_activate()). */
				p->next_ns = now_ns + (t >> 24);
				p->next_frac = (uint32_t)(t & 0xffffff);
			} else {
				aqm_shaper_charge(p, len);
			}
		}
		*o++ = m;
	}
	return (uint16_t)(o - out);
}

/* Move every pipe whose wheel slot has come round and whose time is due. */
static void
wheel_advance(struct aqm_sched *s, uint64_t now)
{
	uint64_t now_tick = now >> s->wheel_shift;
	uint64_t t = s->cur_tick;
	uint64_t slots = (uint64_t)s->wheel_mask + 1;

	if (now_tick < t)
		return;
	if (now_tick - t >= slots)
		t = now_tick - slots + 1; /* one full turn visits every slot */
	for (; t <= now_tick; t++) {
		uint32_t slot = (uint32_t)t & s->wheel_mask;
		uint32_t idx = s->wheel[slot];

		if (idx == AQM_NONE)
			continue;
		s->wheel[slot] = AQM_NONE;
		s->cur_tick = t;
		while (idx != AQM_NONE) {
			struct aqm_pipe *p = &s->pipes[idx];
			uint32_t next = p->link;

			if (p->next_ns <= now)
				ready_push(s, idx);
			else
				wheel_insert(s, idx); /* a later turn of the wheel */
			idx = next;
		}
	}
	s->cur_tick = now_tick;
}

uint16_t
aqm_sched_dequeue_burst(struct aqm_sched *s, struct rte_mbuf **pkts,
			uint16_t max, uint64_t now_ns)
{
	uint16_t n = 0;

	if (unlikely(s->orphan_head != NULL))
		n = orphans_take(s, pkts, max);
	if (s->hold_head != s->hold_tail)
		aqm_hold_expire(s, now_ns);
	wheel_advance(s, now_ns);
	while (n < max && s->ready.head != AQM_NONE) {
		uint32_t idx = s->ready.head;
		struct aqm_pipe *p = &s->pipes[idx];
		uint32_t k = 0;

		s->ready.head = p->link;
		if (s->ready.head == AQM_NONE)
			s->ready.tail = AQM_NONE;
		else
			rte_prefetch0(&s->pipes[s->ready.head]);
		p->where = AQM_PIPE_SERVING;
		/* A shaper that fell far behind (a stalled loop) may not burst. */
		if (now_ns > p->next_ns + s->max_lag_ns) {
			p->next_ns = now_ns - s->max_lag_ns;
			p->next_frac = 0;
		}
		while (n < max && k < s->burst_per_pipe &&
		       (p->next_ns <= now_ns || p->ns_per_byte == 0)) {
			struct rte_mbuf *m = aqm_fq_dequeue(s, p, now_ns);
			uint64_t sojourn;
			unsigned int b;

			if (m == NULL)
				break;
			pkts[n++] = m;
			k++;
			p->st.tx_pkts++;
			p->st.tx_bytes += rte_pktmbuf_pkt_len(m);
			sojourn = now_ns - pkt_meta(m)->enq_ns;
			b = aqm_hist_bucket(sojourn);
			if (unlikely(++p->st.sojourn_hist[b] == 0x80000000u))
				aqm_hist_halve(p);
			if (p->ns_per_byte != 0)
				aqm_shaper_charge(p, rte_pktmbuf_pkt_len(m));
			if (p->backlog_pkts == 0) {
				/* Empty: tidy the lists directly rather than
				 * dequeue once more to find nothing. */
				aqm_fq_idle(s, p);
				break;
			}
		}
		/* The link would idle while ACKs wait in the hold: they
		 * join the queue now. */
		if (unlikely(p->backlog_pkts == 0 && p->held != 0))
			aqm_hold_release_pipe(s, idx, now_ns);
		if (p->backlog_pkts == 0)
			p->where = AQM_PIPE_IDLE;
		else if (p->next_ns <= now_ns || p->ns_per_byte == 0)
			ready_push(s, idx);
		else
			wheel_insert(s, idx);
	}
	return n;
}

uint16_t
aqm_sched_flush_burst(struct aqm_sched *s, struct rte_mbuf **pkts, uint16_t max)
{
	uint16_t n = orphans_take(s, pkts, max);

	for (uint32_t i = 0; i < s->npipes && n < max; i++) {
		struct aqm_pipe *p = &s->pipes[i];

		while (n < max && p->backlog_pkts != 0) {
			struct rte_mbuf *m = aqm_fq_flush_one(s, p);

			if (m == NULL)
				break;
			if (p->diffserv & AQM_DS_WASH)
				aqm_dscp_wash(s, m);
			pkts[n++] = m;
		}
	}
	/* Every queue is empty once n < max: the held ACKs, which come
	 * after their connections' queued packets, go last. */
	if (n < max && s->held != 0)
		n += aqm_hold_flush(s, pkts + n, (uint16_t)(max - n));
	if (s->pending == 0) {
		/* Everything is out: forget where pipes were filed. */
		for (uint32_t i = 0; i < s->npipes; i++)
			if (s->pipes[i].where != AQM_PIPE_REMOVED)
				s->pipes[i].where = AQM_PIPE_IDLE;
		for (uint32_t i = 0; i <= s->wheel_mask; i++)
			s->wheel[i] = AQM_NONE;
		s->ready.head = s->ready.tail = AQM_NONE;
		s->hold_head = s->hold_tail;
	}
	return n;
}

uint32_t
aqm_sched_pending(const struct aqm_sched *s)
{
	return s->pending;
}

uint64_t
aqm_sched_host_shared(const struct aqm_sched *s)
{
	return s->host_shared;
}

void
aqm_sched_way_stats(const struct aqm_sched *s, struct aqm_way_stats *st)
{
	*st = s->ways;
}

uint32_t
aqm_sched_pipe_count(const struct aqm_sched *s)
{
	return s->npipes;
}

int
aqm_sched_pipe_stats(const struct aqm_sched *s, uint32_t pipe,
		     struct aqm_pipe_stats *st)
{
	if (pipe >= s->npipes)
		return -EINVAL;
	pipe_stats(&s->pipes[pipe], st);
	return 0;
}

void
aqm_pipe_stats_add(struct aqm_pipe_stats *t, const struct aqm_pipe_stats *s)
{
	t->enq_pkts += s->enq_pkts;
	t->enq_bytes += s->enq_bytes;
	t->tx_pkts += s->tx_pkts;
	t->tx_bytes += s->tx_bytes;
	for (int r = 0; r < AQM_DROP_MAX; r++)
		t->drops[r] += s->drops[r];
	t->ce_marks += s->ce_marks;
	t->ce_threshold_marks += s->ce_threshold_marks;
	t->ack_filtered += s->ack_filtered;
	t->bypassed += s->bypassed;
	t->ack_held += s->ack_held;
	t->held_pkts += s->held_pkts;
	t->backlog_pkts += s->backlog_pkts;
	t->backlog_bytes += s->backlog_bytes;
	for (int b = 0; b < AQM_HIST_BUCKETS; b++) {
		uint64_t v = (uint64_t)t->sojourn_hist[b] + s->sojourn_hist[b];

		t->sojourn_hist[b] = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
	}
}

void
aqm_sched_stats(const struct aqm_sched *s, struct aqm_pipe_stats *st)
{
	*st = s->retired;
	st->backlog_pkts = s->removed.queued_pkts;
	st->backlog_bytes = s->orphan_bytes;
	for (uint32_t i = 0; i < s->npipes; i++) {
		struct aqm_pipe_stats one;

		if (s->pipes[i].where == AQM_PIPE_REMOVED)
			continue; /* in retired */
		pipe_stats(&s->pipes[i], &one);
		aqm_pipe_stats_add(st, &one);
	}
}

uint64_t
aqm_sojourn_percentile(const uint32_t hist[AQM_HIST_BUCKETS], unsigned int pct)
{
	uint64_t total = 0, want, acc = 0;

	for (int b = 0; b < AQM_HIST_BUCKETS; b++)
		total += hist[b];
	if (total == 0 || pct == 0)
		return 0;
	if (pct > 100)
		pct = 100;
	want = (total * pct + 99) / 100;
	for (unsigned int b = 0; b < AQM_HIST_BUCKETS; b++) {
		acc += hist[b];
		if (acc >= want) {
			/* Upper edge: bucket 2k spans [2^m, 1.5*2^m), 2k+1 the rest. */
			unsigned int m = AQM_HIST_MIN_SHIFT + b / 2;

			return (b & 1) ? (2ULL << m) : (3ULL << (m - 1));
		}
	}
	return 0;
}
