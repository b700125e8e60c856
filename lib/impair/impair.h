/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_IMPAIR_H
#define SLUICE_IMPAIR_H

/**
 * @file
 * Link impairment for one direction of one port pair: what a lab needs from
 * a lossy, slow, jittery link, on DPDK mbufs, with no kernel netem.
 *
 * Per packet, in this order:
 *  1. Loss. Gilbert-Elliott bursty loss first, then independent random loss
 *     (a packet both would lose counts as lost_ge).
 *  2. Duplication: a surviving packet is copied with probability
 *     `duplicate`; the copy is queued right after the original and draws
 *     its own delay. The copy is a deep copy (rte_pktmbuf_copy() from the
 *     original's pool, private area included), not a refcount clone: the
 *     two frames then share nothing, so a later stage or a PMD that writes
 *     into one can never change the other, and both free normally. It
 *     costs one frame copy, only at the configured duplication rate.
 *  3. Delay: delay_ns plus a jitter sample (uniform in [-jitter, +jitter],
 *     or near-normal with standard deviation jitter: a sum of 12 uniforms,
 *     so never beyond 6 sigma), never below zero. Unless jitter_reorder
 *     is set, a packet is never released before the packet queued ahead
 *     of it, so jitter alone keeps order.
 *  4. Reordering: with probability `reorder` a packet is held back by
 *     reorder_gap_ns more, and later packets may overtake it.
 *  5. Queueing: at most `limit` packets are held; an arrival (or copy)
 *     that finds the queue full is dropped and counted as overflow.
 *
 * Gilbert-Elliott model (four parameters). The channel is in state Good or
 * Bad. A packet is lost with probability loss_good in Good and loss_bad in
 * Bad; after each packet the state moves Good->Bad with probability p and
 * Bad->Good with probability r. The chain spends p/(p+r) of the packets in
 * Bad, so the stationary loss rate is (r*loss_good + p*loss_bad)/(p+r);
 * a Bad run lasts 1/r packets on average (geometric). With loss_good = 0
 * and loss_bad = 1 (the Gilbert model) that is also the mean loss-burst
 * length. The channel starts in Good.
 *
 * Determinism: every impairment draws from its own xoshiro256** stream,
 * derived from the seed. The loss, Gilbert-Elliott and duplication streams
 * advance once per arriving packet, the jitter and reorder streams once per
 * packet that reaches the queue (copies included), whether or not the other
 * impairments are on. The same seed, the same packets and the same now_ns
 * values give the same output, and turning jitter on does not change which
 * packets are lost.
 *
 * An instance belongs to one lcore. It never allocates after
 * impair_create() except the copies that duplication makes (from the
 * original's mempool), never locks and never reads a clock: time is the
 * caller's now_ns (any monotonic nanosecond clock).
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Largest queue an instance accepts (packets). */
#define IMPAIR_LIMIT_MAX (1u << 22)
/** Largest delay, jitter or reorder gap (ns): 60 s. */
#define IMPAIR_TIME_MAX (60ULL * 1000000000ULL)

/** Shape of the jitter added to the delay. */
enum impair_jitter_dist {
	IMPAIR_JITTER_UNIFORM = 0, /**< uniform in [-jitter, +jitter] */
	IMPAIR_JITTER_NORMAL,      /**< near-normal, sigma = jitter, within 6 sigma */
};

/** Parameters of one direction. Probabilities are in [0, 1]. */
struct impair_params {
	const char *name;      /**< for rte_malloc; may be NULL */
	int socket_id;         /**< NUMA socket of the owning lcore */
	uint64_t seed;         /**< PRNG seed; 0 is a valid seed */
	double loss;           /**< independent random loss */
	double ge_p;           /**< Gilbert-Elliott: P(Good -> Bad) per packet */
	double ge_r;           /**< Gilbert-Elliott: P(Bad -> Good) per packet */
	double ge_loss_good;   /**< loss probability in Good (1 - k) */
	double ge_loss_bad;    /**< loss probability in Bad (1 - h) */
	uint64_t delay_ns;     /**< fixed one-way delay */
	uint64_t jitter_ns;    /**< jitter amplitude (uniform) or sigma (normal) */
	enum impair_jitter_dist jitter_dist;
	bool jitter_reorder;   /**< let jitter reorder packets */
	double duplicate;      /**< probability a surviving packet is copied */
	double reorder;        /**< probability a packet is held back */
	uint64_t reorder_gap_ns; /**< how much longer a held-back packet waits */
	uint32_t limit;        /**< packets held at most, 1..IMPAIR_LIMIT_MAX */
};

/** Counters of one instance. in + duplicated == out + lost_random +
 * lost_ge + overflow + pending, always. */
struct impair_stats {
	uint64_t in;           /**< packets offered to impair_enqueue_burst() */
	uint64_t out;          /**< packets released (dequeue or flush) */
	uint64_t lost_random;  /**< dropped by random loss */
	uint64_t lost_ge;      /**< dropped by Gilbert-Elliott loss */
	uint64_t ge_bad;       /**< packets that met the channel in Bad */
	uint64_t ge_bursts;    /**< Good -> Bad transitions */
	uint64_t duplicated;   /**< copies decided (a copy that finds the queue
				 full is counted here and in overflow) */
	uint64_t dup_nombuf;   /**< copies that failed: mempool empty */
	uint64_t reordered;    /**< packets held back by reorder_gap_ns */
	uint64_t jitter_reordered; /**< packets jitter scheduled ahead of an earlier one */
	uint64_t overflow;     /**< packets (or copies) dropped: queue full */
	uint64_t flushed_early;/**< released by impair_flush() before their time */
};

struct impair;

/** Fill p with the defaults: no impairment, seed 1, limit 1000. */
void impair_params_default(struct impair_params *p);

/**
 * Check parameters.
 * @return 0, or -EINVAL with a reason in why (when why != NULL).
 */
int impair_params_check(const struct impair_params *p, char *why,
			size_t whylen);

/**
 * Whether the parameters impair anything at all. A direction that does not
 * may skip the instance and pass its packets straight through.
 */
bool impair_params_active(const struct impair_params *p);

/**
 * Create an instance; its queue (limit entries) is allocated here.
 * @return the instance, or NULL with rte_errno set (EINVAL, ENOMEM).
 */
struct impair *impair_create(const struct impair_params *p);

/** Free an instance, and every packet it still holds. NULL is fine. */
void impair_free(struct impair *im);

/**
 * Take a burst. Every mbuf in pkts[0..n) now belongs to the instance: it
 * is queued, or dropped (freed and counted).
 * @return the number of packets queued (copies included).
 */
uint16_t impair_enqueue_burst(struct impair *im, struct rte_mbuf **pkts,
			      uint16_t n, uint64_t now_ns);

/**
 * Release the packets due at now_ns, earliest release time first (ties in
 * arrival order), at most max of them.
 * @return the number written to out.
 */
uint16_t impair_dequeue_burst(struct impair *im, struct rte_mbuf **out,
			      uint16_t max, uint64_t now_ns);

/**
 * Release up to max packets at once, due or not, in release order
 * (shutdown). Call until it returns 0. Packets not yet due at now_ns count
 * as flushed_early.
 */
uint16_t impair_flush_burst(struct impair *im, struct rte_mbuf **out,
			    uint16_t max, uint64_t now_ns);

/** Packets held now. */
uint32_t impair_pending(const struct impair *im);

/** Release time of the next packet, or UINT64_MAX when none is held. */
uint64_t impair_next_release_ns(const struct impair *im);

/** The instance's counters (owned by the instance; read them on its lcore
 * or accept a torn but monotonic view from another). */
const struct impair_stats *impair_stats(const struct impair *im);

/** Add b into a (for totals over instances). */
void impair_stats_add(struct impair_stats *a, const struct impair_stats *b);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_IMPAIR_H */
