/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_AQM_CODEL_H
#define SLUICE_AQM_CODEL_H

/**
 * @file
 * CoDel (RFC 8289) as a generic, header-only algorithm.
 *
 * The caller owns the queue. It passes in the time and a small table of
 * callbacks: take the head packet (and say when it was enqueued and how many
 * bytes stay queued behind it), drop a packet, and try to CE-mark a packet.
 * Everything but the dropping state's work is inlined at the call site
 * (that work, rare, is one call out of line: aqm_codel_dequeue_drop_()).
 * A caller that wants its take of the head inlined for sure takes it
 * itself and calls aqm_codel_dequeue_taken().
 *
 * The control law interval / sqrt(count) (RFC 8289 section 5.5) is computed
 * without division: the state keeps 1/sqrt(count) in Q0.32 fixed point and
 * refreshes it with a Newton step each time count changes.
 */

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** CoDel parameters (RFC 8289 section 4). */
struct aqm_codel_params {
	uint64_t target_ns;       /**< acceptable standing delay (5 ms) */
	uint64_t interval_ns;     /**< sliding window (100 ms); < 2^32 ns */
	uint64_t ce_threshold_ns; /**< CE-mark ECT packets above this sojourn; 0 = off */
	uint32_t mtu;             /**< never drop while backlog <= mtu bytes */
	bool ecn;                 /**< mark CE instead of dropping ECT packets */
	/**
	 * Marks that do not work become drops: once count (the dropping
	 * state's signals, resumed on a quick re-entry) reaches this, an ECT
	 * packet the control law picks is dropped (ops->drop_ect), not
	 * marked. 0 = off (always mark).
	 */
	uint16_t ecn_drop_count;
};

/**
 * Per-queue CoDel state: 32 bytes. Zero it to start. The last three bytes,
 * which would otherwise pad it, hold the queue's BLUE state (COBALT keeps
 * both together); aqm_codel_dequeue() never reads them.
 */
struct aqm_codel_vars {
	uint64_t first_above_ns; /**< deadline for leaving "above target"; 0 = below */
	uint64_t drop_next_ns;   /**< next scheduled drop while dropping */
	uint32_t count;          /**< drops since entering the dropping state */
	uint32_t lastcount;      /**< count when the last dropping state began;
				  *   bit 31: AQM_CODEL_ECN_DROPS */
	uint32_t rec_inv_sqrt;   /**< 1/sqrt(count) in Q0.32 */
	uint8_t dropping;        /**< in the dropping state */
	uint8_t blue_when;       /**< BLUE: when p last changed, 2^20 ns ticks (mod 256) */
	uint16_t blue_p;         /**< BLUE: drop probability, Q0.16 */
};

/**
 * In aqm_codel_vars.lastcount: the queue reached params.ecn_drop_count and
 * its ECT packets are dropped, not marked, until a dropping state begins
 * so long after the last one that count starts over at 1 (RFC 8289's
 * re-entry rule: 16 intervals), the state in which CoDel forgets too.
 */
#define AQM_CODEL_ECN_DROPS (1u << 31)

/** Why a packet is being CE-marked. */
enum aqm_codel_mark_reason {
	AQM_CODEL_MARK_CONTROL_LAW, /**< CoDel would have dropped it */
	AQM_CODEL_MARK_THRESHOLD,   /**< sojourn above ce_threshold */
};

/** Callbacks supplied by the queue owner. */
struct aqm_codel_ops {
	/**
	 * Remove and return the head packet, or NULL when empty.
	 * @param enq_ns  out: when the packet was enqueued.
	 * @param backlog out: bytes still queued after removing it.
	 */
	void *(*dequeue)(void *ctx, uint64_t *enq_ns, uint32_t *backlog);
	/** Free a packet CoDel decided to drop (and count it). */
	void (*drop)(void *ctx, void *pkt);
	/** CE-mark pkt if it is ECN-capable; return true if it now carries CE. */
	bool (*mark)(void *ctx, void *pkt, enum aqm_codel_mark_reason why);
	/**
	 * Free pkt if it is ECN-capable and return true (a mark escalated to
	 * a drop, params.ecn_drop_count: counted apart from drop()); return
	 * false, keeping pkt, if it is not. Needed only with ecn_drop_count.
	 */
	bool (*drop_ect)(void *ctx, void *pkt);
};

/** 1.0 in Q0.32, rounded down so it fits in 32 bits. */
#define AQM_CODEL_ONE UINT32_MAX

/**
 * One Newton-Raphson step of x' = x * (3 - count * x^2) / 2, which converges
 * to 1/sqrt(count). All values are Q0.32; no division.
 */
static inline void
aqm_codel_newton_step(struct aqm_codel_vars *v)
{
	const uint64_t three = 3ULL << 32;
	uint64_t x = v->rec_inv_sqrt;
	uint64_t x2 = (x * x) >> 32;
	uint64_t y = (uint64_t)v->count * x2; /* count * x^2, Q32.32 */

	if (y >= three) { /* far above the root: step would go negative */
		v->rec_inv_sqrt = (uint32_t)(x >> 1);
		return;
	}
	/* (3 - y) needs 34 bits; drop 2 so the product fits in 64. */
	x = (x * ((three - y) >> 2)) >> 31;
	v->rec_inv_sqrt = x > UINT32_MAX ? UINT32_MAX : (uint32_t)x;
}

/** Set 1/sqrt(count) for a new count; small counts get extra steps. */
static inline void
aqm_codel_update_inv_sqrt(struct aqm_codel_vars *v)
{
	if (v->count <= 1) {
		v->rec_inv_sqrt = AQM_CODEL_ONE;
		return;
	}
	/*
	 * One step per increment tracks large counts closely; right after a
	 * (re)start the estimate is far off, so iterate a little more. These
	 * only run when a packet is dropped or marked.
	 */
	aqm_codel_newton_step(v);
	if (v->count < 64) {
		for (int i = v->count < 16 ? 6 : 2; i > 0; i--)
			aqm_codel_newton_step(v);
	}
}

/** Control law (RFC 8289 section 5.5): t + interval / sqrt(count). */
static inline uint64_t
aqm_codel_control_law(const struct aqm_codel_vars *v,
		      const struct aqm_codel_params *p, uint64_t t)
{
	return t + ((p->interval_ns * v->rec_inv_sqrt) >> 32);
}

/* RFC 8289 dodequeue()'s decision for a packet taken from the head, which
 * was enqueued at enq and leaves backlog bytes behind it. */
static inline void
aqm_codel_judge_(struct aqm_codel_vars *v, const struct aqm_codel_params *p,
		 uint64_t now, uint64_t enq, uint32_t backlog, bool *ok_to_drop,
		 uint64_t *sojourn)
{
	*ok_to_drop = false;
	*sojourn = now > enq ? now - enq : 0;
	if (*sojourn < p->target_ns || backlog <= p->mtu) {
		/* Below target, or less than one packet queued (section 4.2). */
		v->first_above_ns = 0;
	} else if (v->first_above_ns == 0) {
		/* Just went above: give it one interval to come back down. */
		v->first_above_ns = now + p->interval_ns;
	} else if (now >= v->first_above_ns) {
		*ok_to_drop = true;
	}
}

/* RFC 8289 dodequeue(): take the head and decide whether it may be dropped. */
static inline void *
aqm_codel_dodequeue_(struct aqm_codel_vars *v, const struct aqm_codel_params *p,
		     const struct aqm_codel_ops *ops, void *ctx, uint64_t now,
		     bool *ok_to_drop, uint64_t *sojourn)
{
	uint64_t enq;
	uint32_t backlog;
	void *pkt = ops->dequeue(ctx, &enq, &backlog);

	if (pkt == NULL) {
		*ok_to_drop = false;
		v->first_above_ns = 0; /* empty queue: below target by definition */
		return NULL;
	}
	aqm_codel_judge_(v, p, now, enq, backlog, ok_to_drop, sojourn);
	return pkt;
}

/*
 * Signal pkt in the dropping state, count already set: CE-mark it (true:
 * send it) or drop it (false). With ecn_drop_count, from that count on an
 * ECT packet is dropped, in this dropping state and in those that follow
 * it soon enough to resume its count (AQM_CODEL_ECN_DROPS): count grows by about one per interval/sqrt(count)
 * for as long as the sojourn stays above target, so it reaches 256 after
 * some 3.2 s of marks that moved nothing (with a 100 ms interval). Four
 * flows that answer marks stayed below 120 in tests/unit/aqm/test_aqm_cobalt.c;
 * flows that answer but cannot get below target (a small share of a slow
 * pipe) climb too, hence 0 (off) by default in the app.
 */
static inline bool
aqm_codel_signal_(struct aqm_codel_vars *v, const struct aqm_codel_params *p,
		  const struct aqm_codel_ops *ops, void *ctx, void *pkt)
{
	if (!p->ecn)
		goto drop;
	if (p->ecn_drop_count != 0 && v->count >= p->ecn_drop_count)
		v->lastcount |= AQM_CODEL_ECN_DROPS;
	if (v->lastcount & AQM_CODEL_ECN_DROPS) {
		if (ops->drop_ect(ctx, pkt))
			return false;
		goto drop;
	}
	if (ops->mark(ctx, pkt, AQM_CODEL_MARK_CONTROL_LAW))
		return true;
drop:
	ops->drop(ctx, pkt);
	return false;
}

/*
 * The rest of aqm_codel_dequeue() for pkt, once it is known that CoDel
 * is in its dropping state or may enter it (ok): out of line, so that
 * the common case (neither) inlines only the take and two tests.
 */
static __attribute__((noinline, unused)) void *
aqm_codel_dequeue_drop_(struct aqm_codel_vars *v, const struct aqm_codel_params *p,
			const struct aqm_codel_ops *ops, void *ctx, uint64_t now,
			void *pkt, bool ok, uint64_t sojourn)
{
	if (v->dropping) {
		if (!ok) {
			/* Sojourn fell below target: leave the dropping state. */
			v->dropping = 0;
		}
		while (v->dropping && (int64_t)(now - v->drop_next_ns) >= 0) {
			v->count++;
			aqm_codel_update_inv_sqrt(v);
			if (aqm_codel_signal_(v, p, ops, ctx, pkt)) {
				/* Marked instead of dropped: send it now. */
				v->drop_next_ns = aqm_codel_control_law(v, p, v->drop_next_ns);
				return pkt;
			}
			pkt = aqm_codel_dodequeue_(v, p, ops, ctx, now, &ok, &sojourn);
			if (pkt == NULL || !ok)
				v->dropping = 0;
			else
				v->drop_next_ns = aqm_codel_control_law(v, p, v->drop_next_ns);
		}
	} else {
		uint32_t delta = v->count - (v->lastcount & ~AQM_CODEL_ECN_DROPS);
		/*
		 * Re-entering soon after the last dropping state: resume near
		 * the drop rate that controlled the queue then (section 5.6).
		 * Later, everything starts over, AQM_CODEL_ECN_DROPS too.
		 */
		bool soon = (int64_t)(now - v->drop_next_ns) < (int64_t)(16 * p->interval_ns);
		uint32_t esc = soon ? v->lastcount & AQM_CODEL_ECN_DROPS : 0;
		bool marked;

		v->dropping = 1;
		v->count = delta > 1 && soon ? delta : 1;
		aqm_codel_update_inv_sqrt(v);
		v->lastcount = v->count | esc;
		v->drop_next_ns = aqm_codel_control_law(v, p, now);
		marked = aqm_codel_signal_(v, p, ops, ctx, pkt);
		if (marked)
			return pkt;
		pkt = aqm_codel_dodequeue_(v, p, ops, ctx, now, &ok, &sojourn);
	}
	if (pkt != NULL && p->ce_threshold_ns != 0 && sojourn > p->ce_threshold_ns)
		ops->mark(ctx, pkt, AQM_CODEL_MARK_THRESHOLD);
	return pkt;
}

/**
 * aqm_codel_dequeue() for a head packet the caller took itself, as
 * ops->dequeue() would have: pkt (NULL if the queue was empty), when it
 * was enqueued and the bytes that stay queued behind it. For a caller
 * whose take is worth inlining (a call through ops is not always
 * inlined); every later take goes through ops->dequeue().
 *
 * @return the packet to send, or NULL if the queue is (now) empty.
 */
static inline void *
aqm_codel_dequeue_taken(struct aqm_codel_vars *v, const struct aqm_codel_params *p,
			const struct aqm_codel_ops *ops, void *ctx, uint64_t now,
			void *pkt, uint64_t enq, uint32_t backlog)
{
	bool ok;
	uint64_t sojourn = 0;

	if (pkt == NULL) {
		v->first_above_ns = 0; /* empty queue: below target by definition */
		v->dropping = 0;
		return NULL;
	}
	aqm_codel_judge_(v, p, now, enq, backlog, &ok, &sojourn);
	if (__builtin_expect(v->dropping || ok, 0))
		return aqm_codel_dequeue_drop_(v, p, ops, ctx, now, pkt, ok, sojourn);
	if (p->ce_threshold_ns != 0 && sojourn > p->ce_threshold_ns)
		ops->mark(ctx, pkt, AQM_CODEL_MARK_THRESHOLD);
	return pkt;
}

/**
 * CoDel dequeue (RFC 8289 section 5.4 / 5.6): return the next packet to
 * send, after dropping (or CE-marking) what the control law says.
 *
 * @param v    the queue's state.
 * @param p    parameters.
 * @param ops  callbacks on the caller's queue.
 * @param ctx  passed to every callback.
 * @param now  current time in ns (monotonic, never 0 after the first call).
 * @return the packet to send, or NULL if the queue is (now) empty.
 */
static inline void *
aqm_codel_dequeue(struct aqm_codel_vars *v, const struct aqm_codel_params *p,
		  const struct aqm_codel_ops *ops, void *ctx, uint64_t now)
{
	uint64_t enq = 0;
	uint32_t backlog = 0;
	void *pkt = ops->dequeue(ctx, &enq, &backlog);

	return aqm_codel_dequeue_taken(v, p, ops, ctx, now, pkt, enq, backlog);
}

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_AQM_CODEL_H */
