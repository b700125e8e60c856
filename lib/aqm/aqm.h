/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_AQM_H
#define SLUICE_AQM_H

/**
 * @file
 * Active queue management for sluice: many shaped pipes per worker, each a
 * time-based deficit shaper in front of an FQ-CoDel instance (RFC 8290) or a
 * plain tail-drop FIFO.
 *
 * A struct aqm_sched belongs to one worker lcore. It holds up to max_pipes
 * pipes and a shared pool of flow slots that the pipes carve up when they
 * are added. Packets go in with aqm_sched_enqueue_burst() (every packet is
 * consumed: queued, or dropped and counted) and come out with
 * aqm_sched_dequeue_burst(), which only visits pipes that have a backlog
 * and whose shaper is due (a ready list plus a timer wheel keyed by each
 * shaper's next-send time).
 *
 * Packets must come from a pool with PKT_META_PRIV_SIZE of private area and
 * be parsed (struct pkt_meta valid). The library owns pkt_meta.enq_ns
 * (enqueue time; lib/pkt/README.md lists every scratch field's owner) and,
 * while a packet is queued, one 8-byte mbuf dynamic field (the queue
 * link, registered as "sluice_aqm_link").
 *
 * Time is always passed in as now_ns, nanoseconds of a monotonic clock.
 * Nothing here reads a clock, allocates after create, or locks.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "aqm_codel.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Slowest and fastest shaped rates, bit/s. A rate of 0 means unshaped. */
#define AQM_RATE_MIN 64000ULL
#define AQM_RATE_MAX 100000000000ULL

/** Largest flow count of one FQ-CoDel instance. */
#define AQM_FLOWS_MAX 65536

/** Bytes of state per FQ-CoDel flow (checked at compile time). */
#define AQM_FLOW_STATE_BYTES 64

/** Link-layer framing compensation of the shaper. */
enum aqm_framing {
	AQM_FRAMING_NONE = 0,
	AQM_FRAMING_ATM,  /**< 48 payload bytes per 53-byte cell, last cell padded */
	AQM_FRAMING_PTM,  /**< 64/65 encoding: one byte per started 64 bytes */
};

/** Queue discipline behind a pipe's shaper. */
enum aqm_qdisc {
	AQM_QDISC_FQ_CODEL = 0, /**< RFC 8290 */
	AQM_QDISC_FIFO,         /**< one tail-drop FIFO, a bufferbloat baseline */
};

/** Shaper: rate and how a frame's length becomes time on the real link. */
struct aqm_shaper_params {
	uint64_t rate_bps;  /**< bit/s, AQM_RATE_MIN..AQM_RATE_MAX, or 0 = unshaped */
	int16_t overhead;   /**< bytes added to each frame (may be negative) */
	uint16_t mpu;       /**< minimum packet unit, after overhead */
	uint8_t framing;    /**< enum aqm_framing, applied last */
};

/**
 * BLUE, next to each flow's CoDel, as CAKE's COBALT pairs them: a drop
 * probability p per flow that rises while the flow's queue overflows or
 * its sojourn stays far above target whatever CE marks did, and falls
 * when the flow's queue empties or runs below target. Packets are dropped
 * with probability p before CoDel sees them, ECN-capable or not. See
 * "BLUE" in lib/aqm/README.md. inc = 0 turns it off (the default).
 */
struct aqm_blue_params {
	uint64_t threshold_ns; /**< raise p when a packet's sojourn exceeds this
				*   (400 ms); 1 ms .. 4 s, in whole ms */
	uint64_t interval_ns;  /**< least time between two changes of p (10 ms);
				*   a change is one step per interval elapsed
				*   since the last (at most 16); 1 ms .. 250 ms,
				*   counted in 2^20 ns ticks */
	uint16_t inc;          /**< step up, Q0.16 (1024 = 1/64); 0 = BLUE off */
	uint16_t dec;          /**< step down, Q0.16 (64 = 1/1024) */
	/**
	 * Raise p for a long sojourn only while the flow also holds more
	 * than this many codel.mtu of bytes behind the packet (0: at any
	 * backlog; the app uses 24). A window-based sender's queue is
	 * bounded in packets, so where a flow's share of the rate is low a
	 * responsive flow's couple of dozen packets already wait longer than
	 * threshold_ns: the threshold in force is max(threshold_ns, the time
	 * min_queue packets take at the flow's share).
	 */
	uint16_t min_queue;
};

/** Bounds of aqm_blue_params (ns). */
#define AQM_BLUE_THRESHOLD_MIN 1000000ULL
#define AQM_BLUE_THRESHOLD_MAX 4000000000ULL
#define AQM_BLUE_INTERVAL_MIN 1000000ULL
#define AQM_BLUE_INTERVAL_MAX 250000000ULL

/**
 * Host isolation inside one FQ-CoDel instance (CAKE's modes and names):
 * DRR++ shares the rate between hosts first, then between each host's
 * flows, so a host does not get more by opening more flows. A flow's
 * quantum is divided by the number of bulk flows of its source host
 * (SRCHOST), of its destination host (DSTHOST), or by the larger of the
 * two (TRIPLE). See "Host isolation" in lib/aqm/README.md.
 */
enum aqm_isolation {
	AQM_ISO_FLOWS = 0,   /**< "flows": fairness per flow only */
	AQM_ISO_SRCHOST = 1, /**< "dual-srchost" */
	AQM_ISO_DSTHOST = 2, /**< "dual-dsthost" */
	AQM_ISO_TRIPLE = 3,  /**< "triple-isolate": both */
};

/** Most flows of an instance with host isolation. */
#define AQM_ISO_FLOWS_MAX 32768

/**
 * Diffserv tins (CAKE's presets and names): the DSCP a packet arrives
 * with selects a tin; each tin has its own flow lists and a bandwidth
 * threshold (a share of the pipe's rate). A tin under its threshold is
 * served before the others, in priority order; over it, it gets only
 * what the tins under theirs leave. See "Diffserv tins" in
 * lib/aqm/README.md for the DSCP mapping and the rule.
 */
enum aqm_diffserv {
	AQM_DIFFSERV_BESTEFFORT = 0, /**< "besteffort": one tin, no tin state */
	AQM_DIFFSERV_3 = 1,          /**< "diffserv3": Best Effort, Bulk, Voice */
	AQM_DIFFSERV_4 = 2,          /**< "diffserv4": Best Effort, Bulk, Video, Voice */
};

/** Most tins of a pipe. */
#define AQM_TINS_MAX 4

/** FQ-CoDel parameters (RFC 8290 section 5). */
struct aqm_fq_params {
	uint32_t flows;        /**< power of two, 1..AQM_FLOWS_MAX (1024) */
	uint32_t quantum;      /**< DRR++ quantum, bytes (1514) */
	uint32_t limit_pkts;   /**< packets held by the instance (10240) */
	uint64_t memory_limit; /**< bytes of mbuf memory held (32 MiB) */
	uint32_t drop_batch;   /**< most packets dropped per overflow (64) */
	uint32_t seed;         /**< flow-hash perturbation; random in production */
	struct aqm_codel_params codel; /**< 5 ms, 100 ms, mtu 1514, ECN on */
	/**
	 * Rate-aware CoDel (off), as CAKE does: at the pipe's shaped rate,
	 * target becomes at least 1.5 times the time one codel.mtu takes on
	 * the link, and interval grows by as much as target did. Recomputed
	 * whenever the pipe's rate changes (aqm_sched_pipe_set_shaper()).
	 * codel.target_ns must then be below 2^32 ns.
	 */
	bool codel_rate_aware;
	struct aqm_blue_params blue; /**< off */
	/**
	 * ACK filter (off): a pure TCP ACK that arrives while the tail of its
	 * flow queue is an older pure ACK of the same connection which the new
	 * one makes redundant removes that older ACK (counted ack_filtered).
	 * See aqm_ack_supersedes() for exactly when.
	 */
	bool ack_filter;
	/** enum aqm_isolation (AQM_ISO_FLOWS); anything else needs a
	 *  scheduler created with isolation and flows <= AQM_ISO_FLOWS_MAX
	 *  (such pipes track their flows' hosts in every mode). */
	uint8_t isolation;
	/** enum aqm_diffserv (AQM_DIFFSERV_BESTEFFORT); anything else needs a
	 *  scheduler created with diffserv. */
	uint8_t diffserv;
};

/** Largest ACK hold table of a scheduler (entries). */
#define AQM_ACK_HOLD_SLOTS_MAX (1u << 20)

/** One pipe: shaper + queue discipline. */
struct aqm_pipe_params {
	enum aqm_qdisc qdisc;
	struct aqm_shaper_params shaper;
	struct aqm_fq_params fq;      /**< FQ-CoDel; fq.limit_pkts also caps FIFO */
	uint64_t fifo_limit_bytes;    /**< FIFO size in bytes, or */
	uint32_t fifo_limit_ms;       /**< FIFO size as ms at the shaped rate */
	/**
	 * Wash (off): clear the DSCP of every packet that leaves the pipe,
	 * keeping its ECN bits (IPv4 header checksum fixed incrementally,
	 * RFC 1624; IPv6 traffic class). Tins are chosen before, from the
	 * DSCP as received.
	 */
	bool wash;
};

/** Per-worker scheduler of many pipes. */
struct aqm_sched_params {
	const char *name;         /**< for memory zone names and logs */
	int socket_id;            /**< NUMA node of the owning worker */
	uint32_t max_pipes;       /**< pipes that can ever be added */
	uint32_t max_flows;       /**< flow slots shared by all pipes */
	uint32_t limit_pkts;      /**< packets all pipes may hold (0 = none) */
	uint32_t burst_per_pipe;  /**< packets per pipe per turn (16) */
	uint32_t wheel_slots;     /**< power of two (4096) */
	uint32_t wheel_slot_ns;   /**< power of two, granularity (4096 ns) */
	uint64_t max_lag_ns;      /**< credit a late shaper may catch up (250 us) */
	/** Seed of the scheduler's pseudo-random source (BLUE's drops); 0 picks
	 *  a fixed one. The same seed and input give the same drops. */
	uint64_t rng_seed;
	/**
	 * ACK hold (0 = off): on the pipes with fq.ack_filter, a pure ACK
	 * that the filter could act on and that arrives while its pipe is
	 * backlogged (shaped, at least one quantum of bytes queued) is held
	 * back, outside the queue, for up to this long, so that newer ACKs
	 * of the same connection replace it (counted ack_filtered) and
	 * fewer reach the link. See "ACK hold" in lib/aqm/README.md.
	 */
	uint64_t ack_hold_ns;
	/** Held ACKs the scheduler can track at once: a power of two,
	 *  1..AQM_ACK_HOLD_SLOTS_MAX (1024). When full, ACKs are queued at
	 *  once. Allocated only when ack_hold_ns is set. */
	uint32_t ack_hold_slots;
	/**
	 * Reserve host state (20 bytes per flow slot) so that pipes may use
	 * fq.isolation (false).
	 */
	bool isolation;
	/**
	 * Reserve tin state (320 bytes per pipe) so that pipes may use
	 * fq.diffserv (false).
	 */
	bool diffserv;
};

/** Buckets of the sojourn histogram: two per octave from 4 us to 68 s. */
#define AQM_HIST_BUCKETS 48
/** Sojourn below 2^AQM_HIST_MIN_SHIFT ns falls in bucket 0. */
#define AQM_HIST_MIN_SHIFT 12

/** Drop and mark reasons, declared once for enums, names and counters. */
#define AQM_DROP_LIST(X) \
	X(CODEL,    "codel") \
	X(OVERFLOW, "overflow") \
	X(MEMORY,   "memory") \
	X(BLUE,     "blue") \
	X(ECN,      "ecn")

enum aqm_drop_reason {
#define AQM_DROP_ENUM(e, s) AQM_DROP_##e,
	AQM_DROP_LIST(AQM_DROP_ENUM)
#undef AQM_DROP_ENUM
	AQM_DROP_MAX
};

/** Counters of one pipe (or, summed, of a scheduler). Plain data. */
struct aqm_pipe_stats {
	uint64_t enq_pkts;
	uint64_t enq_bytes;
	uint64_t tx_pkts;
	uint64_t tx_bytes;
	uint64_t drops[AQM_DROP_MAX];  /**< by enum aqm_drop_reason */
	uint64_t ce_marks;             /**< CoDel marked instead of dropping */
	uint64_t ce_threshold_marks;   /**< marked for sojourn > ce_threshold */
	uint64_t ack_filtered;         /**< queued or held pure ACKs a newer one replaced */
	uint64_t bypassed;             /**< sent at once by aqm_sched_enqueue_bypass_burst() */
	uint64_t ack_held;             /**< pure ACKs that went into the ACK hold */
	uint64_t backlog_pkts;         /**< filled in by the stats call */
	uint64_t backlog_bytes;        /**< filled in by the stats call */
	uint64_t held_pkts;            /**< ACKs in the hold now (stats call) */
	/** Sojourn of sent packets; halved as a whole before a bucket overflows. */
	uint32_t sojourn_hist[AQM_HIST_BUCKETS];
};

/** Pipes removed at run time, and what happened to their packets. */
struct aqm_removed_stats {
	uint64_t pipes;        /**< aqm_sched_pipe_remove() calls */
	uint64_t moved_pkts;   /**< queued or held in a pipe when it was removed */
	uint64_t late_pkts;    /**< enqueued to a removed pipe afterwards */
	uint64_t sent_pkts;    /**< of both, handed out by dequeue or flush */
	uint64_t sent_bytes;
	uint64_t queued_pkts;  /**< of both, still waiting to be handed out */
};

/** Counters of one diffserv tin of a pipe (or, summed, of a scheduler). */
struct aqm_tin_stats {
	uint64_t tx_pkts;      /**< sent (bypassed packets included) */
	uint64_t tx_bytes;
	uint64_t drops;        /**< every reason: CoDel, BLUE, ECN, overflow, memory */
	uint64_t marks;        /**< CE marks, CoDel's and ce_threshold's */
};

/** Fill p with the Linux fq_codel defaults and no shaping. */
void aqm_pipe_params_default(struct aqm_pipe_params *p);

/** Fill p with defaults: 1 pipe of 1024 flows, 16 per turn, 4096 x 4 us wheel. */
void aqm_sched_params_default(struct aqm_sched_params *p);

/**
 * Create a scheduler (boot time; uses rte_zmalloc_socket).
 * @return the scheduler, or NULL with rte_errno = EINVAL or ENOMEM.
 */
struct aqm_sched *aqm_sched_create(const struct aqm_sched_params *p);

/** Free a scheduler, and every packet it still holds. NULL is fine. */
void aqm_sched_free(struct aqm_sched *s);

/**
 * Add a pipe (boot or reload time; takes p->fq.flows slots from the pool).
 * @return the pipe id (0, 1, 2... in order) or -EINVAL / -ENOSPC.
 */
int aqm_sched_pipe_add(struct aqm_sched *s, const struct aqm_pipe_params *p);

/**
 * Undo the last aqm_sched_pipe_add() calls: remove pipes npipes.. so that
 * the next add gets id npipes again (a caller rolls back a batch that
 * failed part way). The removed pipes must hold nothing.
 * @return 0, -EINVAL if npipes is above the count, -EBUSY if a removed
 *         pipe holds packets (then nothing is removed).
 */
int aqm_sched_pipe_truncate(struct aqm_sched *s, uint32_t npipes);

/**
 * Remove a pipe at run time (a subscriber leaves). What it holds, queued
 * packets and held ACKs, leaves it at once, each flow's in order (held
 * ACKs after their flow's packets), onto the scheduler's list of orphans,
 * which the next aqm_sched_dequeue_burst() hands out before anything else,
 * unshaped; nothing is dropped. Packets enqueued to it later join the
 * orphans too. Its counters stay in the scheduler's totals
 * (aqm_sched_stats()); the pipe itself takes no part in scheduling until
 * aqm_sched_pipe_reuse(). Pipes other than this one are not touched.
 * @return how many packets it held, or -EINVAL (bad id, already removed).
 */
int aqm_sched_pipe_remove(struct aqm_sched *s, uint32_t pipe);

/**
 * Give a removed pipe new parameters, as aqm_sched_pipe_add() would a new
 * one, keeping its id and its flow slots: p must ask for as many flows as
 * the pipe had. Its counters start from zero.
 * @return 0, -EINVAL (bad id or parameters, not removed, another flow
 *         count).
 */
int aqm_sched_pipe_reuse(struct aqm_sched *s, uint32_t pipe,
			 const struct aqm_pipe_params *p);

/** Whether pipe exists and is not removed. */
bool aqm_sched_pipe_live(const struct aqm_sched *s, uint32_t pipe);

/** Counters of removed pipes (aqm_sched_pipe_remove()). */
void aqm_sched_removed_stats(const struct aqm_sched *s,
			     struct aqm_removed_stats *st);

/**
 * Change a pipe's shaper at run time. Queued packets stay, in order; the new
 * rate applies from the next packet sent.
 * @return 0, or -EINVAL (bad pipe id or rate).
 */
int aqm_sched_pipe_set_shaper(struct aqm_sched *s, uint32_t pipe,
			      const struct aqm_shaper_params *sp);

/**
 * The shaper a pipe runs with now. rate_bps is recomputed from the
 * per-byte cost the pipe keeps (Q24 ns), so it may differ from the rate
 * last set: by nothing up to about 1 Gbit/s, by 2e-7 at 100 Gbit/s.
 * @return 0, or -EINVAL (bad pipe id).
 */
int aqm_sched_pipe_shaper(const struct aqm_sched *s, uint32_t pipe,
			  struct aqm_shaper_params *sp);

/**
 * Change a pipe's host isolation at run time (enum aqm_isolation). Queued
 * packets stay, in order; flows' next refills follow the new mode. A pipe
 * tracks its flows' hosts whenever its scheduler was created with
 * isolation and it has at most AQM_ISO_FLOWS_MAX flows, whatever its mode,
 * so any change is safe.
 * @return 0, or -EINVAL (bad pipe id or mode, or the pipe tracks no hosts
 *         and the mode is not AQM_ISO_FLOWS).
 */
int aqm_sched_pipe_set_isolation(struct aqm_sched *s, uint32_t pipe,
				 enum aqm_isolation iso);

/**
 * The CoDel parameters pipe runs with now: the configured ones, or with
 * fq.codel_rate_aware those raised for its current rate.
 * @return 0 or -EINVAL.
 */
int aqm_sched_pipe_codel_params(const struct aqm_sched *s, uint32_t pipe,
				struct aqm_codel_params *cp);

/**
 * Bytes queued in pipe for the connection whose direction-symmetric flow
 * hash is flow_hash (pkt_flow_hash(): the same for its data and for the
 * ACKs coming back), if it has a flow queue of its own in the pipe; 0
 * otherwise (no such queue, a queue it shares with another flow, a FIFO
 * pipe, an unknown pipe). Reads only; claims nothing.
 */
uint32_t aqm_sched_flow_backlog(const struct aqm_sched *s, uint32_t pipe,
				uint32_t flow_hash);

/**
 * How long a pure ACK entering pipe now is held back: where the pipe holds
 * ACKs (fq.ack_filter, shaped, an ack_hold_ns set) and either holds one
 * already or has at least a quantum of bytes queued (the hold's own test),
 * the time the hold has lately kept a connection's slot (a moving average
 * over the slots it released: the hold time if they wait it out, less if
 * the queue runs empty first); 0 elsewhere. On a busy pipe the newest ACK
 * of a connection reaches the queue about that long after the last one.
 */
uint64_t aqm_sched_ack_hold_ns(const struct aqm_sched *s, uint32_t pipe);

/** pipe's shaped rate in bytes per second (0: unshaped or unknown). */
uint64_t aqm_sched_pipe_rate_Bps(const struct aqm_sched *s, uint32_t pipe);

/**
 * Enqueue a burst; pkts[i] goes to pipes[i]. Every packet is consumed:
 * queued, or dropped (freed and counted) by a limit. When a pipe overflows,
 * FQ-CoDel drops a batch from the head of its fattest flow, so the
 * arriving packet of a sparse flow is kept; a FIFO drops the arrival.
 * @return how many of the burst's packets were queued.
 */
uint16_t aqm_sched_enqueue_burst(struct aqm_sched *s, const uint32_t *pipes,
				 struct rte_mbuf **pkts, uint16_t n,
				 uint64_t now_ns);

/**
 * aqm_sched_enqueue_burst(), except that a packet which would leave in the
 * very next aqm_sched_dequeue_burst() anyway is not queued at all: its pipe
 * holds nothing (no ACK in the hold either), its shaper is due, no limit would refuse it, and it is the
 * only packet of the burst for that pipe. Such a
 * packet is charged to the shaper and counted exactly as the queue would
 * count it (enqueued, sent, sojourn 0), plus `bypassed`, and written to
 * out[] in arrival order for the caller to send now. CoDel, DRR++ and the
 * ACK filter have nothing to act on in a pipe that holds one packet, so
 * what leaves, when and in which order is the same as with queueing and a
 * dequeue at the same now_ns; only the work is saved.
 * Linux qdiscs skip an empty queue the same way (TCQ_F_CAN_BYPASS).
 *
 * out may be pkts itself, or any array whose slots the caller no longer
 * needs; at most n are written.
 * @return how many packets were written to out.
 */
uint16_t aqm_sched_enqueue_bypass_burst(struct aqm_sched *s,
					const uint32_t *pipes,
					struct rte_mbuf **pkts, uint16_t n,
					uint64_t now_ns, struct rte_mbuf **out);

/** Enqueue n packets to one pipe; same rules as aqm_sched_enqueue_burst(). */
uint16_t aqm_sched_pipe_enqueue_burst(struct aqm_sched *s, uint32_t pipe,
				      struct rte_mbuf **pkts, uint16_t n,
				      uint64_t now_ns);

/**
 * Dequeue up to max packets that due shapers allow, round-robin over due
 * pipes; CoDel may drop (or mark) on the way. First, held ACKs whose hold
 * ended (deadline <= now_ns) join their flow queues; so do those of a
 * pipe whose queue runs empty. Call it with a now_ns that never goes back.
 * @return number of packets written to pkts.
 */
uint16_t aqm_sched_dequeue_burst(struct aqm_sched *s, struct rte_mbuf **pkts,
				 uint16_t max, uint64_t now_ns);

/**
 * Shutdown: hand back up to max held packets at once, ignoring shapers and
 * CoDel, oldest first within each pipe, then the ACKs in the hold (each
 * connection's order is kept). Call until it returns 0.
 */
uint16_t aqm_sched_flush_burst(struct aqm_sched *s, struct rte_mbuf **pkts,
			       uint16_t max);

/** Packets held by all pipes, ACKs in the hold included. */
uint32_t aqm_sched_pending(const struct aqm_sched *s);

/** Number of pipes added so far. */
uint32_t aqm_sched_pipe_count(const struct aqm_sched *s);

/**
 * Copy one pipe's counters (with its current backlog) to st.
 * @return 0 or -EINVAL.
 */
int aqm_sched_pipe_stats(const struct aqm_sched *s, uint32_t pipe,
			 struct aqm_pipe_stats *st);

/** Sum the counters of all pipes into st (histograms included), removed
 *  pipes' too: their packets still waiting count as backlog, and as sent
 *  once handed out (their sojourn is not in the histogram). */
void aqm_sched_stats(const struct aqm_sched *s, struct aqm_pipe_stats *st);

/**
 * Host isolation: how many times a host found no slot of its own within
 * its probe window and shared another host's (its flows then share that
 * host's quantum). Counted per scheduler: a pipe has no room for it.
 */
uint64_t aqm_sched_host_shared(const struct aqm_sched *s);

/**
 * How packets found their flow queues. The flow hash is 8-way
 * set-associative, as CAKE's: a flow's queue is one of the 8 of its set
 * (its home queue when that is free), and a new flow shares a queue only
 * when all 8 are busy with others. Counted per scheduler.
 */
struct aqm_way_stats {
	uint64_t hits;       /**< packets whose flow sat in its set away from its home queue */
	uint64_t misses;     /**< flows new to their set that took a free queue of it */
	uint64_t collisions; /**< packets of flows that found every queue of
			      *   their set busy, so went to their home queue */
};

/** Copy the scheduler's set-associative hash counters to st. */
void aqm_sched_way_stats(const struct aqm_sched *s, struct aqm_way_stats *st);

/**
 * Copy the tin counters of one pipe to st[0..n-1], tins in the order
 * aqm_diffserv_tin_name() names them.
 * @return n, the pipe's tin count (0 for a besteffort pipe or a FIFO:
 *         the pipe's own counters are its one tin's), or -EINVAL.
 */
int aqm_sched_pipe_tin_stats(const struct aqm_sched *s, uint32_t pipe,
			     struct aqm_tin_stats st[AQM_TINS_MAX]);

/**
 * Sum the tin counters of every pipe with tins of mode ds into st[0..n-1].
 * @return n, the tin count of ds (0 for besteffort).
 */
unsigned int aqm_sched_tin_stats(const struct aqm_sched *s, enum aqm_diffserv ds,
				 struct aqm_tin_stats st[AQM_TINS_MAX]);

/**
 * Wash: packets whose DSCP was cleared as they left a pipe with wash on,
 * and those left as they were because their buffer is shared (refcnt > 1
 * or indirect: others may read it).
 */
void aqm_sched_wash_stats(const struct aqm_sched *s, uint64_t *washed,
			  uint64_t *shared);

/** Number of tins of a diffserv mode (1 for besteffort), 0 if unknown. */
unsigned int aqm_diffserv_tins(enum aqm_diffserv ds);

/**
 * The tin a DSCP (0..63) selects in mode ds (0 = Best Effort in every
 * mode), or 0 for a bad mode.
 */
unsigned int aqm_diffserv_tin(enum aqm_diffserv ds, uint8_t dscp);

/** Name of tin t of mode ds: "besteffort", "bulk", "video", "voice"; NULL if none. */
const char *aqm_diffserv_tin_name(enum aqm_diffserv ds, unsigned int t);

/**
 * Parse a diffserv mode by CAKE's name: "besteffort", "diffserv3" or
 * "diffserv4" (any case).
 * @return 0, or -EINVAL.
 */
int aqm_parse_diffserv(const char *s, enum aqm_diffserv *ds);

/** CAKE's name of a diffserv mode, e.g. "diffserv4". */
const char *aqm_diffserv_name(enum aqm_diffserv ds);

/** Add the counters of s to t (histogram buckets saturate at UINT32_MAX). */
void aqm_pipe_stats_add(struct aqm_pipe_stats *t, const struct aqm_pipe_stats *s);

/**
 * Sojourn percentile from a histogram: the upper edge of the bucket holding
 * the pct-th percentile (so a conservative figure, within a factor 1.5).
 * @param pct 1..100.
 * @return ns, or 0 if the histogram is empty.
 */
uint64_t aqm_sojourn_percentile(const uint32_t hist[AQM_HIST_BUCKETS],
				unsigned int pct);

/**
 * The ACK filter's rule. Both frames must be parsed (struct pkt_meta valid).
 * True when newer makes older redundant, so that dropping older loses no
 * information the TCP sender uses:
 * - both are pure ACKs: TCP, ACK set, SYN/FIN/RST/URG clear, no payload,
 *   not a fragment, not malformed; same addresses, ports and VLAN tags;
 * - the same TCP flag byte (ECE, CWR, AE, PSH) and the same IP DSCP/ECN;
 * - their options are only NOP/EOL, timestamps and SACK; both or neither
 *   carry timestamps, and newer's TSval and TSecr are equal to older's
 *   or less than half the number space after them;
 * - newer's cumulative ACK is older's or at most 2^30 after it (no
 *   sender has more than the largest window, RFC 7323 s. 2.2, in
 *   flight beyond an ACK it has not seen yet); if it is equal, newer
 *   carries SACK blocks and a window no smaller than older's (so a plain
 *   duplicate ACK, which a sender may count, is never dropped);
 * - every SACK block of older is below newer's cumulative ACK or inside a
 *   block of newer that lies within (ACK, ACK + 2^30] of newer and is not
 *   its first block inside its second (a D-SACK, whose data a sender need
 *   not mark; a block outside that range a sender ignores);
 * - older carries no D-SACK (RFC 2883 s. 4) and no block a sender
 *   ignores: every block is non-empty and within (ACK, ACK + 2^30] of its
 *   own cumulative ACK, and none lies inside another (a duplicate
 *   reported above the cumulative ACK).
 */
bool aqm_ack_supersedes(const struct rte_mbuf *newer, const struct rte_mbuf *older);

/** Stable name of a drop reason, e.g. "overflow". */
const char *aqm_drop_reason_name(enum aqm_drop_reason r);

/**
 * Bytes a frame of len bytes (Ethernet header on, FCS off) occupies on the
 * shaped link: max(len + overhead, mpu), then ATM or PTM framing.
 */
uint32_t aqm_wire_len(const struct aqm_shaper_params *sp, uint32_t len);

/**
 * Fill overhead, mpu and framing from a named link profile, keeping the
 * rate. Overheads count from the Ethernet frame sluice sees (no FCS).
 * Names: "none", "ethernet", "vdsl2" (PPPoE over PTM), "vdsl2-bridged",
 * "adsl-pppoe" (PPPoE LLC/SNAP over ATM), "adsl-pppoa" (VC-mux over ATM),
 * "docsis", "lte".
 * @return 0, or -ENOENT for an unknown name.
 */
int aqm_shaper_profile(const char *name, struct aqm_shaper_params *sp);

/**
 * Parse a host isolation by CAKE's name: "flows", "dual-srchost",
 * "dual-dsthost" or "triple-isolate" (any case).
 * @return 0, or -EINVAL.
 */
int aqm_parse_isolation(const char *s, enum aqm_isolation *iso);

/** CAKE's name of a host isolation, e.g. "triple-isolate". */
const char *aqm_isolation_name(enum aqm_isolation iso);

/**
 * Parse a rate: a decimal number with an optional k/m/g/t multiplier
 * (powers of 1000) and an optional "bit" or "bps" (bits) suffix, e.g.
 * "40mbit", "1.5G", "64000".
 * @return 0, or -EINVAL.
 */
int aqm_parse_rate(const char *s, uint64_t *bps);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_AQM_H */
