/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_AQM_PRIV_H
#define SLUICE_AQM_PRIV_H

/* Internal layout of lib/aqm; not installed, not for other modules. */

#include <assert.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "aqm.h"
#include "pkt.h"

#define AQM_NONE UINT32_MAX

enum aqm_list_id { AQM_LIST_NONE = 0, AQM_LIST_NEW, AQM_LIST_OLD };

/* aqm_pipe.enq_extra bits: what a packet queued in the pipe meets
 * besides plain FQ-CoDel. A pipe with none takes aqm_fq_enqueue()'s short
 * path; set when the pipe is set up (the host isolation mode may change
 * later, whether hosts are tracked does not). */
#define AQM_ACKF_FILTER 1 /* aqm_fq_params.ack_filter */
#define AQM_ACKF_HOLD 2   /* ... and the scheduler holds ACKs */
#define AQM_ENQ_HOSTS 4   /* flows bind to hosts (isolation & AQM_ISO_TRACKED) */
#define AQM_ENQ_TINS 8    /* diffserv tins (diffserv & AQM_DS_MODE) */
#define AQM_ENQ_FIFO 16   /* the FIFO qdisc */

/*
 * One held ACK. The hold table is a ring in arrival order; with one hold
 * duration per scheduler and a clock that does not go back, that is
 * deadline order, so expiry only looks at the head. An entry released
 * early (m = NULL) stays until the head passes it.
 */
struct aqm_hold {
	struct rte_mbuf *m;   /* the newest ACK of the hold, or NULL */
	uint64_t deadline;    /* first ACK's arrival + the hold */
	uint32_t pipe;
	uint32_t flow;        /* flow index in the pipe */
};

/*
 * One host of a pipe's host table (host isolation). A flow in the new or
 * old list holds a reference on its source and its destination host;
 * bulk counts those of its flows that spent a quantum (in the old list).
 */
struct aqm_host {
	uint32_t tag;  /* hash of the address; meaningful while refs > 0 */
	uint16_t refs;
	uint16_t bulk;
};

/* aqm_pipe.isolation: the mode (enum aqm_isolation) in the low bits, and
 * whether the pipe tracks its flows' hosts (in every mode, so that the
 * mode can change at run time). */
#define AQM_ISO_MODE 0x03
#define AQM_ISO_TRACKED 0x80

/* Slots probed for a host (from its home slot on). */
#define AQM_HOST_PROBES 8
/* Host loads with a precomputed reciprocal; above, a division. */
#define AQM_HOST_RECIP 256
/* Flow queues per set of the set-associative flow hash (aqm_fq.c,
 * flow_find()): a power of two. */
#define AQM_FLOW_WAYS 8

/* A singly linked list of flow or pipe indices. */
struct aqm_list {
	uint32_t head;
	uint32_t tail;
};

/* One FQ-CoDel flow queue: exactly one cache line. */
struct aqm_flow {
	struct rte_mbuf *head;
	struct rte_mbuf *tail;
	struct aqm_codel_vars cv;
	uint32_t backlog;  /* bytes queued */
	int32_t deficit;   /* DRR++ credit, bytes */
	uint32_t next;     /* link in the new or old list */
	uint32_t list : 5; /* enum aqm_list_id */
	uint32_t tin : 2;  /* diffserv tin whose lists hold it (pipes with tins) */
	uint32_t bulk : 1; /* counted in its hosts' bulk (host isolation) */
	uint32_t hold : 23; /* 1 + the ACK hold slot of the flow's held ACK, or 0 */
	uint32_t guest : 1; /* a flow without a queue of its own (a collision)
			     * queued here since the queue was last free */
};
static_assert(sizeof(struct aqm_flow) <= AQM_FLOW_STATE_BYTES,
	      "FQ-CoDel flow state must stay within 64 bytes");

/* A flow queue is free while it holds no packet, no held ACK and no
 * place in the new or old lists: a flow may then claim it (aqm_fq.c). */
static inline bool
aqm_flow_free(const struct aqm_flow *f)
{
	return f->list == AQM_LIST_NONE && f->head == NULL && f->hold == 0;
}

/*
 * Diffserv tins. A pipe with tins keeps its flows in one tin's lists
 * each (aqm_flow.tin, set when the flow enters the lists) and a
 * virtual clock per tin, counted in wire bytes: the pipe's clock vt
 * advances by each packet it sends, a tin's by that packet times
 * 2^shift (its threshold is 1/2^shift of the pipe), from the pipe's
 * clock at the latest (idle time earns no credit). A tin is under its
 * threshold while its clock is not ahead of the pipe's.
 */
struct aqm_tin {
	struct aqm_list new_flows;
	struct aqm_list old_flows;
	uint64_t vt;
	uint8_t shift;
	uint8_t pad[7];
	struct {
		uint64_t tx_pkts, tx_bytes, drops, marks;
	} st;                  /* counted by the worker; no backlog (it would
				* cost every packet of every pipe a test) */
};
static_assert(sizeof(struct aqm_tin) == 64, "a tin is one cache line");

struct aqm_pipe_tins {
	uint64_t vt;           /* wire bytes the pipe sent */
	uint8_t mode;          /* enum aqm_diffserv */
	uint8_t ntins;
	uint8_t order[AQM_TINS_MAX]; /* tin indices, highest priority first */
	struct aqm_tin tin[AQM_TINS_MAX] __rte_cache_aligned;
} __rte_cache_aligned;

/* aqm_pipe.diffserv: the mode (enum aqm_diffserv, 0 = no tins) in the
 * low bits, and wash. */
#define AQM_DS_MODE 0x03
#define AQM_DS_INNER 0x40 /* DRR++ runs on a tin's lists (aqm_fq.c) */
#define AQM_DS_WASH 0x80

enum aqm_pipe_where {
	AQM_PIPE_IDLE = 0, /* no backlog, in no list */
	AQM_PIPE_READY,    /* in the ready list: due now */
	AQM_PIPE_WHEEL,    /* in a wheel slot: due later */
	AQM_PIPE_SERVING,  /* taken off the ready list by dequeue */
	AQM_PIPE_REMOVED,  /* aqm_sched_pipe_remove(): in no list, takes nothing */
};

/*
 * A pipe's own counters: struct aqm_pipe_stats without what the stats
 * call fills in (bypassed, backlog, held), so a new drop reason does not
 * cost the pipe a cache line. pipe_stats() (aqm_sched.c) copies them out.
 */
struct aqm_pipe_ctr {
	uint64_t enq_pkts;
	uint64_t enq_bytes;
	uint64_t tx_pkts;
	uint64_t tx_bytes;
	uint64_t drops[AQM_DROP_MAX];
	uint64_t ce_marks;
	uint64_t ce_threshold_marks;
	uint64_t ack_filtered;
	uint64_t ack_held;
	uint32_t sojourn_hist[AQM_HIST_BUCKETS];
};

struct aqm_pipe {
	/* Shaper and scheduling: read every turn. */
	uint64_t next_ns;      /* earliest time the next packet may leave */
	uint64_t ns_per_byte;  /* Q24; 0 = unshaped */
	uint32_t next_frac;    /* sub-ns part of next_ns, Q24 */
	uint32_t link;         /* ready list or wheel slot chain */
	int16_t overhead;
	uint16_t mpu;          /* at least 1: the floor of a wire length */
	uint8_t framing;
	uint8_t qdisc;
	uint8_t where;         /* enum aqm_pipe_where */
	uint8_t enq_extra;     /* AQM_ACKF_* and AQM_ENQ_* bits */
	/* Queue. */
	struct aqm_flow *flows;
	uint32_t flow_mask;
	uint32_t seed;
	struct aqm_list new_flows;
	struct aqm_list old_flows;
	uint32_t backlog_pkts;
	uint32_t quantum;
	uint64_t backlog_bytes;
	uint64_t mem;          /* mbuf memory held, bytes */
	uint64_t mem_limit;
	uint32_t limit_pkts;
	uint16_t drop_batch;
	uint8_t isolation;     /* AQM_ISO_* bits (FQ-CoDel only) */
	uint8_t diffserv;      /* AQM_DS_* bits */
	uint32_t held;         /* ACKs of this pipe in the hold */
	uint32_t blue_flows;   /* flows whose BLUE p is not 0 */
	uint64_t hold_age_ns;  /* EWMA of how long the hold kept a slot */
	uint64_t rate_Bps;     /* the shaper's rate in bytes/s; 0 = unshaped */
	union {
		struct { /* AQM_QDISC_FIFO */
			uint64_t fifo_limit_bytes;
			uint32_t fifo_limit_ms;
		};
		struct { /* AQM_QDISC_FQ_CODEL */
			uint32_t codel_target_cfg;   /* ns, as configured */
			uint32_t codel_interval_cfg; /* ns, as configured */
			uint16_t blue_inc;           /* Q0.16; 0 = BLUE off */
			uint16_t blue_dec;           /* Q0.16 */
			uint16_t blue_threshold_ms;
			uint8_t blue_ticks; /* least 2^20 ns ticks between changes of p */
			uint8_t codel_rate_aware;
		};
	};
	struct aqm_codel_params codel; /* in force: raised for the rate if rate aware */
	/* Counters. */
	struct aqm_pipe_ctr st;
	/*
	 * Packets sent by the bypass, counted in one line of their own after
	 * the queue's counters, so that the queue path touches no more lines
	 * than before. The stats calls add them to enq_*, tx_* and sojourn
	 * bucket 0; so that bucket 0 decays with the histogram, a halving
	 * folds the count since the last one (byp_pkts - byp_mark) into
	 * byp_hist and halves that.
	 */
	uint64_t byp_pkts;
	uint64_t byp_bytes;
	uint64_t byp_mark;
	uint32_t byp_hist;
	/* FQ-CoDel: a long sojourn raises BLUE's p only while the flow holds
	 * more than this many bytes. Read only past blue_threshold_ms, so it
	 * lives in the last line's spare bytes. */
	uint32_t blue_min_bytes;
} __rte_cache_aligned;

struct aqm_sched {
	struct aqm_pipe *pipes;
	struct aqm_flow *flow_pool;
	uint32_t *wheel;          /* slot -> first pipe index */
	uint32_t npipes;
	uint32_t max_pipes;
	uint32_t flows_used;
	uint32_t max_flows;
	struct aqm_list ready;
	uint64_t cur_tick;
	uint32_t wheel_mask;
	uint32_t wheel_shift;
	uint32_t pending;
	/* Packets of removed pipes, oldest first: the next dequeue sends
	 * them before anything else, unshaped (aqm_sched_pipe_remove()). */
	struct rte_mbuf *orphan_head;
	struct rte_mbuf *orphan_tail;
	uint32_t limit_pkts;
	uint32_t burst_per_pipe;
	int link_off;             /* mbuf dynfield offset of the queue link */
	uint64_t max_lag_ns;
	/* ACK hold; pending counts held ACKs too. */
	struct aqm_hold *hold;    /* hold_mask + 1 entries, or NULL */
	uint64_t hold_ns;         /* 0: off */
	uint32_t hold_mask;
	uint32_t hold_head;       /* free-running; slot = index & hold_mask */
	uint32_t hold_tail;
	uint32_t held;
	uint64_t rng;             /* xorshift64 state: BLUE's draws */
	/* Host isolation (NULL when the scheduler has none): per flow slot
	 * i, flow_host[i] = its source host | its destination host << 16;
	 * the pipe whose flows start at slot b has its source hosts at
	 * hosts[2b..], its destination hosts right after them. */
	struct aqm_host *hosts;
	uint32_t *flow_host;
	uint32_t recip[AQM_HOST_RECIP]; /* 65536 / load */
	uint64_t host_shared;     /* aqm_sched_host_shared() */
	/* The set-associative flow hash: per flow slot, the tag of the flow
	 * that last claimed it (aqm_flow_tag()), and what lookups found. */
	uint32_t *flow_tag;
	struct aqm_way_stats ways;
	/* Diffserv: per pipe (index as s->pipes), NULL when the scheduler
	 * has none. */
	struct aqm_pipe_tins *tins;
	uint64_t washed;          /* aqm_sched_wash_stats() */
	uint64_t wash_shared;
	int socket_id;
	char name[32];
	/* Removed pipes: their counters, folded in when they went, so the
	 * scheduler's totals never go back; their tins' by diffserv mode. */
	struct aqm_pipe_stats retired;
	struct aqm_tin_stats retired_tins[AQM_DS_MODE + 1][AQM_TINS_MAX];
	struct aqm_removed_stats removed;
	uint64_t orphan_bytes;
} __rte_cache_aligned;
static_assert(sizeof(struct aqm_pipe) <= 512, "a pipe stays within 8 cache lines");

/*
 * Whether a pure ACK entering p now is held back (aqm_hold_enqueue(), less
 * its per-packet and table tests): p holds ACKs, is shaped, and has at
 * least a quantum queued, so its link is busy for a packet time anyway.
 */
static inline bool
aqm_hold_busy(const struct aqm_pipe *p)
{
	return (p->enq_extra & AQM_ACKF_HOLD) && p->ns_per_byte != 0 &&
	       p->backlog_bytes >= p->quantum;
}

/* Halve the sojourn histogram: it keeps its shape and forgets the past. */
static inline void
aqm_hist_halve(struct aqm_pipe *p)
{
	for (unsigned int i = 0; i < AQM_HIST_BUCKETS; i++)
		p->st.sojourn_hist[i] >>= 1;
	p->byp_hist = (uint32_t)RTE_MIN(((uint64_t)p->byp_hist +
					 (p->byp_pkts - p->byp_mark)) >> 1,
					(uint64_t)UINT32_MAX);
	p->byp_mark = p->byp_pkts;
}

/* Bucket 0 of the sojourn histogram with the bypassed packets in it. */
static inline uint32_t
aqm_hist_bucket0(const struct aqm_pipe *p)
{
	uint64_t v = (uint64_t)p->st.sojourn_hist[0] + p->byp_hist +
		     (p->byp_pkts - p->byp_mark);

	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static inline struct rte_mbuf **
aqm_link(const struct aqm_sched *s, struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, s->link_off, struct rte_mbuf **);
}

/* Perturb the 5-tuple hash (pkt_flow_hash()) with the pipe's seed (RFC 8290
 * section 4.1.1): the flow's tag, kept in s->flow_tag by the queue it
 * takes. Half a finalizer (xor-shift, odd multiply): its high bits are
 * the well mixed ones, and aqm_flow_home() uses those. */
static inline uint32_t
aqm_flow_tag(uint32_t hash, uint32_t seed)
{
	uint32_t x = hash ^ seed;

	x ^= x >> 16;
	return x * 0x7feb352dU;
}

/* The home queue of tag x among n queues (multiply-shift range
 * reduction). Here so that enqueue can prefetch the flow ahead. */
static inline uint32_t
aqm_flow_home(uint32_t x, uint32_t n)
{
	return (uint32_t)(((uint64_t)x * n) >> 32);
}

/* Pipe p's slice of s->flow_tag: the tag of its flow queue i is at [i]. */
static inline uint32_t *
aqm_pipe_tags(const struct aqm_sched *s, const struct aqm_pipe *p)
{
	return &s->flow_tag[(size_t)(p->flows - s->flow_pool)];
}

/* The home queue of a flow hash in a pipe of mask + 1 queues, without
 * tins: where the flow goes when its set has room there. */
static inline uint32_t
aqm_flow_index(uint32_t hash, uint32_t seed, uint32_t mask)
{
	return aqm_flow_home(aqm_flow_tag(hash, seed), mask + 1);
}

/* Memory an mbuf really pins: what Linux calls truesize. */
static inline uint32_t
aqm_truesize(const struct rte_mbuf *m)
{
	return (uint32_t)m->nb_segs *
	       ((uint32_t)sizeof(struct rte_mbuf) + m->priv_size + m->buf_len);
}

/* Whether m alone stays within a memory limit. A one-segment mbuf pins
 * at most this much, so most limits need no arithmetic. */
#define AQM_TRUESIZE_SEG_MAX ((uint64_t)sizeof(struct rte_mbuf) + 2 * UINT16_MAX)
static inline bool
aqm_fits_mem(const struct rte_mbuf *m, uint64_t limit)
{
	return (limit >= AQM_TRUESIZE_SEG_MAX && m->nb_segs == 1) ||
	       aqm_truesize(m) <= limit;
}

static inline uint32_t
aqm_wire_len_(int16_t overhead, uint16_t mpu, uint8_t framing, uint32_t len)
{
	/* At least the MPU, and at least one byte (a large negative
	 * overhead must not make a packet free). */
	int32_t floor = mpu | (mpu == 0);
	int32_t l = (int32_t)len + overhead;

	if (l < floor)
		l = floor;
	if (framing == AQM_FRAMING_ATM)
		l = (l + 47) / 48 * 53; /* constant divisor: no div instruction */
	else if (framing == AQM_FRAMING_PTM)
		l += (l + 63) / 64;
	return (uint32_t)l;
}

/* Wire length of a packet on p's link. A pipe's mpu is at least 1
 * (aqm_shaper_apply()), so the floor is mpu. */
static inline uint32_t
aqm_pipe_wire_len(const struct aqm_pipe *p, uint32_t len)
{
	int32_t l = (int32_t)len + p->overhead;

	if (l < (int32_t)p->mpu)
		l = p->mpu;
	if (unlikely(p->framing != AQM_FRAMING_NONE))
		return aqm_wire_len_(p->overhead, p->mpu, p->framing, len);
	return (uint32_t)l;
}

/* Advance the shaper clock by the time len bytes take on the link. */
static inline void
aqm_shaper_charge(struct aqm_pipe *p, uint32_t len)
{
	uint64_t t = (uint64_t)aqm_pipe_wire_len(p, len) * p->ns_per_byte;
	uint64_t frac = (uint64_t)p->next_frac + (t & 0xffffff);

	p->next_ns += (t >> 24) + (frac >> 24);
	p->next_frac = (uint32_t)(frac & 0xffffff);
}

/* Sojourn histogram bucket: two per octave from 2^12 ns. */
static inline unsigned int
aqm_hist_bucket(uint64_t ns)
{
	unsigned int msb, b;

	if (ns < (1ULL << AQM_HIST_MIN_SHIFT))
		return 0;
	msb = 63 - (unsigned int)__builtin_clzll(ns);
	b = (msb - AQM_HIST_MIN_SHIFT) * 2 + (unsigned int)((ns >> (msb - 1)) & 1);
	return b < AQM_HIST_BUCKETS ? b : AQM_HIST_BUCKETS - 1;
}

/* fq.c */
uint32_t aqm_fq_enqueue(struct aqm_sched *s, struct aqm_pipe *p,
			struct rte_mbuf *m, uint64_t now);
struct rte_mbuf *aqm_fq_dequeue(struct aqm_sched *s, struct aqm_pipe *p,
				uint64_t now);
struct rte_mbuf *aqm_fq_flush_one(struct aqm_sched *s, struct aqm_pipe *p);
/* The pipe just sent its last packet: leave the flow lists exactly as one
 * more aqm_fq_dequeue() would (it would only walk them clean). */
void aqm_fq_idle(struct aqm_sched *s, struct aqm_pipe *p);
void aqm_fq_drop_fattest(struct aqm_sched *s, struct aqm_pipe *p,
			 enum aqm_drop_reason why, uint64_t now);
/* The queue of p (no tins) that holds the flow of hash h: the one whose
 * tag is the flow's, else its home queue. Changes nothing (tests). */
uint32_t aqm_fq_flow_lookup(const struct aqm_sched *s, const struct aqm_pipe *p,
			    uint32_t h);

/* Queue m at the tail of flow fi of p (the filters already ran), with
 * enqueue time now; drops from the fattest flow if a limit is passed. */
void aqm_fq_queue(struct aqm_sched *s, struct aqm_pipe *p, uint32_t fi,
		  struct rte_mbuf *m, uint64_t now);

/* ack.c: if m supersedes the pure ACK at f's tail, unlink and free that
 * one (counted ack_filtered) and return true. */
bool aqm_ack_filter(struct aqm_sched *s, struct aqm_pipe *p, struct aqm_flow *f,
		    const struct rte_mbuf *m);
/* Whether m is a pure ACK the filter may judge (aqm_ack_supersedes()'s
 * first rule). */
bool aqm_ack_is_pure(const struct rte_mbuf *m);

/* hold.c */
/* The ACK filter and hold for m, bound for flow fi of p (p->enq_extra has AQM_ACKF_FILTER).
 * Returns true if m went into the hold (consumed, counted ack_held), false
 * if the caller queues it. */
bool aqm_hold_enqueue(struct aqm_sched *s, struct aqm_pipe *p, uint32_t fi,
		      struct rte_mbuf *m, uint64_t now);
/* Queue the held ACKs whose deadline is <= now, in deadline order. */
void aqm_hold_expire(struct aqm_sched *s, uint64_t now);
/* Queue every held ACK of pipe idx now (its queue ran empty); the caller
 * files the pipe. */
void aqm_hold_release_pipe(struct aqm_sched *s, uint32_t idx, uint64_t now);
/* Take h's ACK out of the hold (its flow, pipe and scheduler counts)
 * and return it; the slot stays in the ring, empty. */
struct rte_mbuf *aqm_hold_take(struct aqm_sched *s, struct aqm_hold *h);
/* Shutdown: take up to max held ACKs out, in arrival order. */
uint16_t aqm_hold_flush(struct aqm_sched *s, struct rte_mbuf **pkts, uint16_t max);

/* BLUE's clock: 2^20 ns (1.05 ms) ticks, kept mod 256 per flow. */
#define AQM_BLUE_TICK_SHIFT 20

/* shaper.c: CoDel's parameters for the pipe's current rate (rate-aware
 * CoDel); called whenever the shaper changes. */
void aqm_codel_rate_apply(struct aqm_pipe *p);

/* ecn.c */
bool aqm_ecn_mark_ce(struct rte_mbuf *m);
/* ECT(0), ECT(1) or CE: the sender negotiated ECN. */
bool aqm_ecn_capable(struct rte_mbuf *m);

/* tins.c */
static inline struct aqm_pipe_tins *
aqm_pipe_tins(const struct aqm_sched *s, const struct aqm_pipe *p)
{
	return &s->tins[p - s->pipes];
}

/* The DSCP of a parsed IP packet as received (0 for anything else). */
static inline uint8_t
aqm_dscp(const struct rte_mbuf *m)
{
	const struct pkt_meta *meta = rte_mbuf_to_priv((struct rte_mbuf *)(uintptr_t)m);
	const uint8_t *ip;

	if ((meta->l3 != PKT_L3_IPV4 && meta->l3 != PKT_L3_IPV6) ||
	    (uint32_t)meta->l3_off + 2 > rte_pktmbuf_data_len(m))
		return 0;
	ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, meta->l3_off);
	if (meta->l3 == PKT_L3_IPV4)
		return ip[1] >> 2;
	/* IPv6: traffic class = low nibble of byte 0, high nibble of byte 1. */
	return (uint8_t)((ip[0] & 0x0f) << 2 | ip[1] >> 6);
}

extern const uint8_t aqm_tin_map[3][64];

/* The tin m goes to in a pipe of mode ds (not besteffort). */
static inline unsigned int
aqm_tin_of(unsigned int ds, const struct rte_mbuf *m)
{
	return aqm_tin_map[ds][aqm_dscp(m)];
}

/*
 * Tin t of p sends wire bytes: its clock advances by them times 2^shift,
 * from no further back than one quantum (times 2^shift) behind the
 * pipe's clock. That much credit lets a tin of small packets (voice)
 * send a few of them back to back after a large packet of another tin,
 * instead of one per other packet; idle time earns no more.
 */
static inline void
aqm_tin_charge(const struct aqm_pipe *p, struct aqm_pipe_tins *pt,
	       struct aqm_tin *t, uint64_t wire)
{
	uint64_t credit = (uint64_t)p->quantum << t->shift;
	uint64_t floor = pt->vt > credit ? pt->vt - credit : 0;

	t->vt = RTE_MAX(t->vt, floor) + (wire << t->shift);
	pt->vt += wire;
}

/* Out of line, so that pipes without tins keep their inlining: the
 * slice of p's flow queues that m's tin owns (first queue *base, *n of
 * them), and the new-flow list of m's tin for flow f, which joins that
 * tin. */
void aqm_tin_slice(const struct aqm_pipe *p, const struct rte_mbuf *m,
		   uint32_t *base, uint32_t *n);
struct aqm_list *aqm_tin_new_list(struct aqm_sched *s, struct aqm_pipe *p,
				  struct aqm_flow *f, const struct rte_mbuf *m);

/* Set up the tins of pipe p for mode ds (pipe add). */
void aqm_tins_init(struct aqm_sched *s, struct aqm_pipe *p, unsigned int ds);
/* Bypass: m leaves pipe p at once; charge and count its tin as a dequeue
 * would. */
void aqm_tins_bypass(struct aqm_sched *s, struct aqm_pipe *p, const struct rte_mbuf *m);
/* Clear m's DSCP, keep ECN (counted in s). */
void aqm_dscp_wash(struct aqm_sched *s, struct rte_mbuf *m);

/* sched.c: file pipe idx by its shaper if it is idle and has a backlog. */
void aqm_sched_pipe_wake(struct aqm_sched *s, uint32_t idx, uint64_t now);

/* shaper.c */
int aqm_shaper_check(const struct aqm_shaper_params *sp);
void aqm_shaper_apply(struct aqm_pipe *p, const struct aqm_shaper_params *sp);

/* A 16-bit word of a checksummed header changed from old to new: the
 * checksum hc updated incrementally (RFC 1624 eqn. 3: HC' = ~(~HC + ~m +
 * m')). ECN marking and DSCP washing rewrite the IPv4 header with it. */
static inline uint16_t
aqm_csum_replace16(uint16_t hc, uint16_t old, uint16_t new)
{
	uint32_t sum = (uint16_t)~hc + (uint32_t)(uint16_t)~old + new;

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

#endif /* SLUICE_AQM_PRIV_H */
