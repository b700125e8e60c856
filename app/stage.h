/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_STAGE_H
#define SLUICE_STAGE_H

/**
 * @file
 * The stage pipeline every worker runs between rx and tx.
 *
 * A worker receives a burst on one port of a pair, parses it (struct
 * pkt_meta is then valid in every mbuf), and hands it to each stage in
 * order. (The first stage may do the parse itself, in its own pass:
 * parse_burst.) A stage may, per packet:
 *   - pass it on: leave it in pkts[] (the stage compacts the array and
 *     returns how many are left, keeping their order);
 *   - consume it: keep the mbuf (a queue, a proxy) and release it later
 *     through stage_emit() from its poll callback;
 *   - drop it: free it, after counting why.
 * A stage may also create packets (a proxy answering a SYN) and emit them
 * toward either port. Emitted packets continue through the stages after
 * the emitter, then go to tx on the port they were emitted to.
 *
 * Stages are created once per worker at boot and are owned by that worker:
 * nothing in a stage is shared between lcores, so nothing locks.
 * Time is passed in, in nanoseconds of a monotonic clock.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

struct pkt_classify;
struct sl_config;
struct stage_emitter;

/** Where a burst comes from and goes to. */
struct stage_burst {
	uint16_t pair;      /**< port pair index k (ports 2k, 2k+1) */
	uint16_t in_port;
	uint16_t out_port;
	uint8_t  upstream;  /**< 1: from the subscriber side (port 2k) */
	uint8_t  worker;    /**< worker index */
	/**
	 * 1: the worker is shutting down (its flush runs, other workers may
	 * have flushed already), so nothing should be handed to another
	 * worker any more.
	 */
	uint8_t  stopping;
};

/** Operations of a stage. Every callback but burst may be NULL. */
struct stage_ops {
	const char *name;
	/**
	 * Handle a burst. pkts[0..n) are parsed. Return the number of packets
	 * left in pkts[] to go on, compacted in their original order.
	 */
	uint16_t (*burst)(void *ctx, const struct stage_burst *b,
			  struct rte_mbuf **pkts, uint16_t n, uint64_t now_ns);
	/**
	 * Optional, and called only for the first stage of a pipeline: do
	 * the worker's classification of pkts[0..n), which come straight
	 * from rx (lib/pkt's pkt_classify_burst(), with c), and handle them
	 * as burst() would, in the same pass over the burst. The worker
	 * calls it instead of its own pass and burst() when no [policy]
	 * drops malformed or non-IP frames and [sluice] stage_cycles is off
	 * (which times each stage on its own).
	 *
	 * It stops where pkt_classify_burst() would (pkt_classify_stops():
	 * a chained frame or one longer than c->max_frame) and leaves the
	 * rest to the worker, which classifies them its general way and
	 * hands them to burst(). Returns k: pkts[0..k) go on, compacted in
	 * order, and pkts[k..k + *rest) are the frames it did not look at,
	 * in order.
	 */
	uint16_t (*parse_burst)(void *ctx, const struct stage_burst *b,
				struct rte_mbuf **pkts, uint16_t n,
				const struct pkt_classify *c, uint16_t *rest);
	/** Called every loop iteration: release what is due via stage_emit(). */
	void (*poll)(void *ctx, struct stage_emitter *em, uint64_t now_ns);
	/** Packets the stage holds right now (0 when drained). */
	uint32_t (*pending)(void *ctx);
	/**
	 * Shutdown: release everything still held, now. This is the last
	 * call a stage gets from the worker: every mbuf it owns must be sent
	 * or freed here, because the app then reports mbufs in use against
	 * the boot baseline and exits.
	 */
	void (*flush)(void *ctx, struct stage_emitter *em, uint64_t now_ns);
	/**
	 * Free the instance's boot-time memory. The app does not call it at
	 * exit (the telemetry thread may read an instance until the EAL
	 * stops, and the process ends right after); modules use it to undo a
	 * partly built instance when create() fails.
	 */
	void (*destroy)(void *ctx);
};

/** One stage instance in a worker's pipeline. */
struct stage {
	const struct stage_ops *ops;
	void *ctx;
};

/**
 * Send a packet from a stage's poll/flush toward port out_port. It goes
 * through the stages after the emitter, then to tx. Never fails: if the
 * staging array is full it is flushed through the rest of the pipeline
 * first.
 */
void stage_emit(struct stage_emitter *em, uint16_t out_port,
		struct rte_mbuf *m);

#endif /* SLUICE_STAGE_H */
