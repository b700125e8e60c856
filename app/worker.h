/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_APP_WORKER_H
#define SLUICE_APP_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "config.h"
#include "pkt.h"
#include "port.h"
#include "stage.h"
#include "stages.h"

#define SL_MAX_PORTS 32
#define SL_MAX_BURST 512
#define SL_EMIT_MAX 64

/** Where one stage's time goes ([sluice] stage_cycles = on; all 0 when
 * off). TSC cycles, read around each call. */
struct stage_time {
	uint64_t bursts;      /**< burst() calls */
	uint64_t packets;     /**< packets handed to burst() */
	uint64_t cycles;      /**< cycles inside burst() */
	uint64_t polls;       /**< poll() and flush() calls */
	uint64_t emitted;     /**< packets poll() released */
	uint64_t poll_cycles; /**< cycles inside poll() */
};

/** Counters of one worker. Only that worker writes them. */
struct worker_stats {
	uint64_t rx[SL_MAX_PORTS];
	uint64_t tx[SL_MAX_PORTS];
	uint64_t tx_dropped[SL_MAX_PORTS];
	uint64_t tx_kicked[SL_MAX_PORTS]; /**< sends of frames left in a TX ring */
	uint64_t non_ip;            /**< frames without an IP header */
	uint64_t malformed[PKT_ERR_MAX]; /**< by reason ([0] unused) */
	uint64_t dropped_non_ip;    /**< dropped by [policy] non_ip = drop */
	uint64_t dropped_malformed; /**< dropped by [policy] malformed = drop */
	uint64_t multiseg;          /**< multi-segment (jumbo) frames seen */
	uint64_t dropped_oversize;  /**< frames longer than [sluice] max_frame */
	uint64_t loops;
	uint64_t busy_loops;        /**< loops that received something */
	struct stage_time stage[SL_MAX_STAGES]; /**< as in worker.stages */
};

/** A tx buffer for one port. */
struct txbuf {
	uint16_t n;
	uint64_t first_ns; /**< when the oldest buffered packet arrived */
	struct rte_mbuf *pkts[SL_MAX_BURST];
};

/** net_af_packet: this worker's tx queue on a port, which the kernel may
 * not have emptied ([sluice] tx_kick_us, app/worker.c tx_kick()). */
struct txkick {
	int fd;            /**< the queue's AF_PACKET socket; -1: none */
	bool pending;      /**< the ring may hold frames */
	uint64_t tx_seen;  /**< stats.tx of the port at the last tick */
};

/** A queue this worker polls. */
struct rxq {
	uint16_t port;
	uint16_t queue;
	uint16_t peer;   /**< the other port of the pair */
	uint16_t pair;
	uint8_t upstream;
};

struct worker;

struct stage_emitter {
	struct worker *w;
	unsigned from;   /**< index of the emitting stage */
	uint32_t emitted;      /**< stage_cycles: packets this poll released */
	uint64_t drain_cycles; /**< stage_cycles: spent in later stages
				*  while the poll ran (counted there) */
	uint16_t n;
	uint16_t port[SL_EMIT_MAX];
	struct rte_mbuf *pkts[SL_EMIT_MAX];
};

/** A worker: one per lcore, owns its queues, stages and counters. */
struct worker {
	unsigned index;
	unsigned lcore;
	bool is_main;             /**< also does control work */
	const struct sl_config *cfg;
	uint16_t nb_ports;
	uint16_t nb_rxq;
	struct rxq rxq[SL_MAX_PORTS];
	uint16_t txq;             /**< this worker's tx queue on every port */
	unsigned nb_stages;
	bool stage_cycles;        /**< [sluice] stage_cycles: time each stage */
	struct stage stages[SL_MAX_STAGES];
	int stage_module[SL_MAX_STAGES]; /**< index in sl_stage_modules */
	uint64_t tsc_hz;
	uint64_t ns_mult;         /**< ns = tsc * ns_mult >> 32 */
	volatile uint64_t last_rx_ns; /**< read by the control lcore */
	volatile uint32_t held;   /**< packets in stages+tx buffers, last loop */
	volatile bool done;
	struct worker_stats stats __rte_cache_aligned;
	struct txkick kick[SL_MAX_PORTS];
	struct txbuf tx[SL_MAX_PORTS] __rte_cache_aligned;
};

/** Shared control flags. Written by the control lcore or signal handler. */
struct control {
	volatile bool stop;        /**< stop rx, drain, flush, return */
	volatile bool reload;      /**< SIGHUP seen */
	uint32_t rx_left;          /**< workers out of their rx loop (atomic) */
	uint64_t idle_exit_ns;     /**< 0: off */
	struct worker **workers;
	unsigned nb_workers;
};

/** The loop; launched on every lcore. arg is struct worker *. */
int worker_main(void *arg);

/** Monotonic nanoseconds from the TSC. */
static inline uint64_t
worker_now_ns(const struct worker *w)
{
	return (uint64_t)(((unsigned __int128)rte_rdtsc() * w->ns_mult) >> 32);
}

extern struct control sl_control;

#endif
