/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_APP_CONTROL_H
#define SLUICE_APP_CONTROL_H

/**
 * @file
 * The control plane's way into the workers, and its thread.
 *
 * No thread but a worker ever writes that worker's structures. To change
 * them at run time (a reload, a telemetry command), the control side
 * posts one change to every worker's mailbox and waits until all have
 * applied it; each worker applies it in its own poll, between bursts, so
 * every worker sees every change in the same order.
 *
 *   control side                     worker w
 *   ctl_post(bus, c, ...)  ------>   ctl_mailbox_take(mb[w], apply, ctx)
 *     waits for c->done == n           apply(ctx, c) -> rc, err
 *     c->record(c) if all succeeded
 *
 * A change whose workers were too slow (ctl_post() returned -ETIMEDOUT)
 * may still be applied: the next ctl_post() or ctl_catch_up() records it
 * then, and refuses new changes until it is, so the control side's view
 * (e.g. which pipe id a prefix has) never drifts from the workers'.
 *
 * ctl_thread_start() runs the control thread: it turns SIGHUP
 * (sl_control.reload) into each stage module's reload operation, off
 * every worker lcore, since a reload waits for the workers.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_ring.h>

struct stage_module;

/** A change for every worker. Embed it first in the module's own type. */
struct ctl_change {
	uint32_t ref;   /**< workers still to apply it, plus the poster */
	uint32_t done;  /**< workers that applied it */
	int32_t rc;     /**< first worker's error, 0 if none */
	char err[192];  /**< that worker's reason */
	/** Control side, once every worker applied it with no error. */
	void (*record)(struct ctl_change *c);
	/** Free the change when the last reference goes (any thread). */
	void (*free)(struct ctl_change *c);
};

/** A worker's side: apply c to ctx; return 0 or -errno with err set. */
typedef int (*ctl_apply_fn)(void *ctx, struct ctl_change *c, char *err,
			    size_t errlen);

struct ctl_bus;

/**
 * Mailboxes for nb_workers workers (boot). The mailboxes themselves are
 * made by ctl_bus_mailbox(), on each worker's socket.
 * @return the bus, or NULL (out of memory).
 */
struct ctl_bus *ctl_bus_create(const char *name, unsigned nb_workers);

/**
 * Create worker's mailbox (boot).
 * @return it, or NULL with rte_errno set.
 */
struct rte_ring *ctl_bus_mailbox(struct ctl_bus *bus, unsigned worker,
				 int socket);

/**
 * Post c to every worker and wait up to wait_ms for all to apply it.
 * Takes ownership of c. One poster at a time: the caller serialises
 * posts on a bus (a lock of its own).
 * @return 0 (applied everywhere, c->record() called), the first worker's
 *         error (err says why; workers are all-or-nothing per change),
 *         -EBUSY (a mailbox is full, or a late change is still being
 *         applied: nothing posted), or -ETIMEDOUT (see above).
 */
int ctl_post(struct ctl_bus *bus, struct ctl_change *c, unsigned wait_ms,
	     char *err, size_t errlen);

/**
 * Record a late change once every worker applied it. Call, under the
 * same lock as ctl_post(), before reading state that record() keeps.
 * @return 0, or -EBUSY (with err) while workers are still at it.
 */
int ctl_catch_up(struct ctl_bus *bus, char *err, size_t errlen);

/** Drop one reference to c (its poster's, or a worker's). */
void ctl_change_put(struct ctl_change *c);

/**
 * Worker side, between bursts: apply every change waiting in mb, in order.
 * @return how many were taken.
 */
unsigned ctl_mailbox_take(struct rte_ring *mb, ctl_apply_fn apply, void *ctx);

/**
 * Start the control thread for the given modules (those configured in
 * this run): on SIGHUP, each one's reload() in order.
 * @return 0, or -errno (then SIGHUP reloads are off).
 */
int ctl_thread_start(const struct stage_module *const *mods, unsigned n);

/** Stop and join the control thread (after the workers returned). */
void ctl_thread_stop(void);

#endif
