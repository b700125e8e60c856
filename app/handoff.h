/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_APP_HANDOFF_H
#define SLUICE_APP_HANDOFF_H

/**
 * @file
 * Cross-worker hand-off: which worker owns a key, and single-producer /
 * single-consumer rings that carry packets to it.
 *
 * A stage whose state is split over workers (the aqm stage's pipes; MPTCP
 * connections later) gives each key one owner, handoff_owner(), which
 * every worker computes alike without talking. A worker that receives a
 * packet for a key another worker owns stages it with handoff_stage_add();
 * the owner drains its rings with handoff_recv() between bursts. Between
 * any two workers there is one ring each way, so every ring has one
 * producer and one consumer and nothing locks.
 *
 * The mesh is built at boot (handoff_mesh_create(), once) and each
 * worker takes its own end (handoff_port_init()). Only that worker uses
 * its end.
 */

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

/** Packets a struct handoff_stage collects before it sends them. */
#define HANDOFF_BATCH 64

struct handoff_mesh;

/** One worker's end of the mesh. */
struct handoff_port {
	unsigned index;           /**< this worker */
	unsigned nb_workers;
	struct rte_ring **out;    /**< [to]: this worker -> to (NULL for self) */
	struct rte_ring **in;     /**< [from]: from -> this worker */
};

/** Packets on their way to other workers, in arrival order. */
struct handoff_stage {
	uint16_t n;
	uint16_t to[HANDOFF_BATCH];
	struct rte_mbuf *pkts[HANDOFF_BATCH];
};

/**
 * Which of nb_workers owns key: a fixed hash, so that every worker agrees
 * without talking. Multiply-shift: no division.
 */
static inline unsigned
handoff_owner(uint32_t key, unsigned nb_workers)
{
	uint32_t h = (key + 1) * 0x9e3779b1u;

	return (unsigned)(((uint64_t)h * nb_workers) >> 32);
}

/**
 * Build the rings between nb_workers workers (boot, once). With one
 * worker there are none.
 * @param name      unique per process (ring names derive from it)
 * @param ring_size slots per ring, rounded up to a power of two
 * @return the mesh, or NULL with rte_errno set.
 */
struct handoff_mesh *handoff_mesh_create(const char *name, unsigned nb_workers,
					 uint32_t ring_size);

/**
 * Fill worker's end of the mesh. out[] and in[] point at 2 * nb_workers
 * slots the caller provides (the worker's own memory).
 */
void handoff_port_init(const struct handoff_mesh *mesh, unsigned worker,
		       struct handoff_port *port, struct rte_ring **slots);

/**
 * Send n packets to worker to. Those its ring cannot take are freed.
 * @return how many were sent; n minus that were dropped.
 */
static inline unsigned
handoff_send(const struct handoff_port *port, unsigned to,
	     struct rte_mbuf **pkts, unsigned n)
{
	unsigned sent = rte_ring_sp_enqueue_burst(port->out[to],
						  (void *const *)pkts, n, NULL);

	if (unlikely(sent < n))
		rte_pktmbuf_free_bulk(pkts + sent, n - sent);
	return sent;
}

/**
 * Send what st holds, one ring burst per owner, each owner's packets in
 * arrival order; st is then empty. Adds to *sent and *dropped.
 */
void handoff_stage_flush(const struct handoff_port *port,
			 struct handoff_stage *st, uint64_t *sent,
			 uint64_t *dropped);

/**
 * Stage m for worker to. When HANDOFF_BATCH are staged they go at once,
 * so a burst of any size is sent in order per owner (hence per flow).
 */
static inline void
handoff_stage_add(const struct handoff_port *port, struct handoff_stage *st,
		  struct rte_mbuf *m, unsigned to, uint64_t *sent,
		  uint64_t *dropped)
{
	st->pkts[st->n] = m;
	st->to[st->n++] = (uint16_t)to;
	if (st->n == HANDOFF_BATCH)
		handoff_stage_flush(port, st, sent, dropped);
}

/** Take up to max packets that worker from sent to this one. */
static inline unsigned
handoff_recv(const struct handoff_port *port, unsigned from,
	     struct rte_mbuf **pkts, unsigned max)
{
	if (port->in[from] == NULL)
		return 0;
	return rte_ring_sc_dequeue_burst(port->in[from], (void **)pkts, max,
					 NULL);
}

/** Packets waiting in this worker's incoming rings. */
static inline uint32_t
handoff_pending(const struct handoff_port *port)
{
	uint32_t n = 0;

	for (unsigned from = 0; from < port->nb_workers; from++)
		if (port->in[from] != NULL)
			n += rte_ring_count(port->in[from]);
	return n;
}

#endif
