/* SPDX-License-Identifier: BSD-3-Clause */
/* Posting changes to every worker, and the control thread (SIGHUP). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_lcore.h>

#include "control.h"
#include "stages.h"
#include "worker.h"

#define CTL_MAILBOX_SIZE 64
#define CTL_TAKE_MAX 64

struct ctl_bus {
	char name[24];
	unsigned nb_workers;
	struct ctl_change *late;     /* posted, timed out, not yet seen done */
	struct rte_ring *mb[];       /* [worker]: MP/SC, struct ctl_change * */
};

static void
sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

struct ctl_bus *
ctl_bus_create(const char *name, unsigned nb_workers)
{
	struct ctl_bus *b = calloc(1, sizeof(*b) + nb_workers * sizeof(b->mb[0]));

	if (b == NULL)
		return NULL;
	snprintf(b->name, sizeof(b->name), "%s", name);
	b->nb_workers = nb_workers;
	return b;
}

struct rte_ring *
ctl_bus_mailbox(struct ctl_bus *bus, unsigned worker, int socket)
{
	char name[RTE_RING_NAMESIZE];

	snprintf(name, sizeof(name), "%s%u", bus->name, worker);
	bus->mb[worker] = rte_ring_create(name, CTL_MAILBOX_SIZE, socket,
					  RING_F_SC_DEQ);
	return bus->mb[worker];
}

void
ctl_change_put(struct ctl_change *c)
{
	if (__atomic_sub_fetch(&c->ref, 1, __ATOMIC_ACQ_REL) == 0)
		c->free(c);
}

int
ctl_catch_up(struct ctl_bus *bus, char *err, size_t errlen)
{
	struct ctl_change *c = bus->late;

	if (c == NULL)
		return 0;
	if (__atomic_load_n(&c->done, __ATOMIC_ACQUIRE) < bus->nb_workers) {
		snprintf(err, errlen, "the workers are still applying the previous change; try again");
		return -EBUSY;
	}
	if (c->rc == 0 && c->record != NULL)
		c->record(c);
	bus->late = NULL;
	ctl_change_put(c);
	return 0;
}

int
ctl_post(struct ctl_bus *bus, struct ctl_change *c, unsigned wait_ms,
	 char *err, size_t errlen)
{
	unsigned n = bus->nb_workers;
	int rc;

	c->ref = 1;
	c->done = 0;
	c->rc = 0;
	c->err[0] = '\0';
	rc = ctl_catch_up(bus, err, errlen);
	if (rc < 0) {
		ctl_change_put(c);
		return rc;
	}
	/* All or nothing: only we enqueue, so room seen now stays. */
	for (unsigned i = 0; i < n; i++) {
		if (rte_ring_free_count(bus->mb[i]) == 0) {
			ctl_change_put(c);
			snprintf(err, errlen, "worker %u is not taking changes (mailbox full)", i);
			return -EBUSY;
		}
	}
	c->ref = n + 1;
	for (unsigned i = 0; i < n; i++)
		rte_ring_mp_enqueue(bus->mb[i], c);
	for (unsigned t = 0; t < wait_ms &&
	     __atomic_load_n(&c->done, __ATOMIC_ACQUIRE) < n; t++) {
		if (sl_control.stop)
			break;
		sleep_ms(1);
	}
	if (__atomic_load_n(&c->done, __ATOMIC_ACQUIRE) < n) {
		/* The workers may still apply it: ctl_catch_up() will see. */
		snprintf(err, errlen, "workers did not apply the change within %u ms; it may still apply",
			 wait_ms);
		bus->late = c;
		return -ETIMEDOUT;
	}
	if (c->rc < 0) {
		snprintf(err, errlen, "%s", c->err);
		rc = c->rc;
	} else {
		rc = 0;
		if (c->record != NULL)
			c->record(c);
	}
	ctl_change_put(c);
	return rc;
}

unsigned
ctl_mailbox_take(struct rte_ring *mb, ctl_apply_fn apply, void *ctx)
{
	void *objs[CTL_TAKE_MAX];
	unsigned n;

	if (likely(rte_ring_count(mb) == 0))
		return 0;
	n = rte_ring_sc_dequeue_burst(mb, objs, CTL_TAKE_MAX, NULL);
	for (unsigned i = 0; i < n; i++) {
		struct ctl_change *c = objs[i];
		char err[160] = "";
		int rc = apply(ctx, c, err, sizeof(err));

		if (rc < 0) {
			int32_t zero = 0;

			if (__atomic_compare_exchange_n(&c->rc, &zero, rc, false,
							__ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE))
				snprintf(c->err, sizeof(c->err), "%s", err);
		}
		__atomic_add_fetch(&c->done, 1, __ATOMIC_RELEASE);
		ctl_change_put(c);
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* The control thread.                                                 */

static struct {
	pthread_t thread;
	bool started;
	volatile bool stop;
	unsigned n;
	const struct stage_module *mods[SL_MAX_STAGES];
} ctl_g;

static void *
ctl_thread(void *arg)
{
	(void)arg;
	while (!ctl_g.stop && !sl_control.stop) {
		if (__atomic_exchange_n(&sl_control.reload, false, __ATOMIC_ACQ_REL))
			for (unsigned i = 0; i < ctl_g.n; i++)
				ctl_g.mods[i]->reload();
		sleep_ms(10);
	}
	return NULL;
}

int
ctl_thread_start(const struct stage_module *const *mods, unsigned n)
{
	int rc;

	if (ctl_g.started)
		return -EALREADY;
	ctl_g.n = 0;
	for (unsigned i = 0; i < n && ctl_g.n < SL_MAX_STAGES; i++)
		if (mods[i]->reload != NULL)
			ctl_g.mods[ctl_g.n++] = mods[i];
	if (ctl_g.n == 0)
		return 0;
	rc = rte_ctrl_thread_create(&ctl_g.thread, "sluice-ctl", NULL,
				    ctl_thread, NULL);
	if (rc != 0)
		return -rc;
	ctl_g.started = true;
	return 0;
}

void
ctl_thread_stop(void)
{
	if (!ctl_g.started)
		return;
	ctl_g.stop = true;
	pthread_join(ctl_g.thread, NULL);
	ctl_g.started = false;
}
