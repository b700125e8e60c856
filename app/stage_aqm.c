/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The aqm stage: lib/aqm's subscriber pipes (shaper + FQ-CoDel or FIFO) in
 * the datapath.
 *
 *   burst    classify by subscriber (upstream: source address, downstream:
 *            destination), then enqueue on this worker if it owns the
 *            subscriber, else hand the packet to the owner through a
 *            single-producer/single-consumer ring. Unknown addresses pass
 *            unshaped or go to the default pipe, as configured.
 *   poll     apply pending control changes (mailbox), enqueue hand-offs,
 *            dequeue what the shapers allow and emit each packet toward
 *            the port remembered at enqueue (pkt_meta.out_port).
 *   control  stage_aqm_control.c: reload and telemetry post changes to
 *            every worker's mailbox (app/control.h); each worker applies
 *            them here, in its own poll, so no other thread ever writes
 *            a worker's structures. Configuration: stage_aqm_config.c.
 *
 * Ownership: every worker holds the same subscriber table (same prefixes,
 * applied in the same order, so the same pipe ids), but only the owner of
 * a pipe, aqm_pipe_owner() of its id, ever queues packets in it: the
 * worker whose rx queues the ports give the subscriber's IPv4 address
 * when they steer by subscriber ([sluice] rss, app/port.c), else
 * handoff_owner(id) (app/handoff.h). Each worker keeps its own copy of
 * the owners, set as it applies a change: a pipe keeps its owner for its
 * life, and a reused id gets one for its new subscriber.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_random.h>
#include <rte_ring.h>

#include "pkt.h"
#include "stage_aqm.h"
#include "port.h"
#include "stage_aqm_priv.h"

/* ------------------------------------------------------------------ */
/* Datapath.                                                           */

static inline enum aqm_dir
dir_of_out_port(uint16_t out_port)
{
	/* Out on 2k+1 (internet side): it came from the subscriber. */
	return (out_port & 1) ? AQM_DIR_UP : AQM_DIR_DOWN;
}

/*
 * Queue a batch in its pipes. With [aqm] bypass, a packet its pipe would
 * send in this very turn (nothing queued there, shaper due) is not queued:
 * it is written to out[] and goes on with the burst. Returns how many.
 * out[] may only hold slots of packets already taken from the burst.
 */
static inline uint16_t
enqueue_local(struct aqm_worker *w, enum aqm_dir dir,
	      struct aqm_sched *sched, const uint32_t *pipes,
	      struct rte_mbuf **local, uint16_t n, struct rte_mbuf **out,
	      uint64_t now_ns)
{
	uint16_t nb = 0;

	/* Passive RTT: the subscriber's segments before sluice's own queue. */
	if (w->ar != NULL && dir == AQM_DIR_UP)
		aqm_ar_up(w->ar, local, pipes, n, now_ns);
	/* Window clamp: every segment before its queue, both ways. */
	if (w->rw != NULL)
		aqm_rwnd_burst(w, dir, local, n, now_ns);
	if (!w->bypass) {
		aqm_sched_enqueue_burst(sched, pipes, local, n, now_ns);
		return 0;
	}
	nb = aqm_sched_enqueue_bypass_burst(sched, pipes, local, n, now_ns, out);
	/* ... and toward the subscriber as they leave it. */
	if (w->ar != NULL && dir == AQM_DIR_DOWN && nb)
		aqm_ar_down(w->ar, out, nb, now_ns);
	return nb;
}

static uint16_t
aqm_stage_burst(void *ctx, const struct stage_burst *b,
		struct rte_mbuf **pkts, uint16_t n, uint64_t now_ns)
{
	struct aqm_worker *w = ctx;
	const enum aqm_dir dir = b->upstream ? AQM_DIR_UP : AQM_DIR_DOWN;
	struct aqm_sched *sched = aqm_subs_sched(w->subs, dir);
	struct aqm_dir_stats *st = &w->st[dir];
	struct rte_mbuf *local[AQM_BATCH];
	uint32_t pipes[AQM_BATCH];
	struct handoff_stage away;
	uint64_t hop[AQM_SUBS_LOOKUP_BURST];
	uint16_t keep = 0, nl = 0;
	/* At shutdown the owner may have flushed already: keep it here. */
	const bool stopping = b->stopping;
	const unsigned nb_workers = w->nb_workers, me = w->index;
	/* One worker owns every pipe: no owner to work out per packet. */
	const bool single = nb_workers == 1;
	const uint16_t out_port = b->out_port;
	/* Unknown addresses (id 0) pass, if they do, with one compare per
	 * packet: pipe ids stay below 2^24, so none is UINT32_MAX. */
	const uint32_t pass_id = aqm_subs_default_pass(w->subs) ? 0 : UINT32_MAX;
	/* (A copy: its slots pointer stays in a register.) */
	const struct prtt_fast pf = w->prtt_pf;

	if (!((w->pairs >> b->pair) & 1))
		return n;
	away.n = 0;
	/*
	 * One table lookup per run of packets: the loop rewrites only
	 * positions up to i, which it has read already.
	 */
	for (uint16_t run = 0; run < n; run += AQM_SUBS_LOOKUP_BURST) {
		const uint16_t end = RTE_MIN(n, run + AQM_SUBS_LOOKUP_BURST);
		const uint64_t *hop_of = hop - run;

		aqm_subs_lookup_burst(w->subs, dir, pkts + run, end - run, hop);
		for (uint16_t i = run; i < end; i++) {
			struct rte_mbuf *m = pkts[i];
			struct pkt_meta *meta = pkt_meta(m);
			/* 0: no subscriber; the default pipe's id is 0 */
			const uint32_t id = (uint32_t)hop_of[i];
			unsigned int owner;

			if (unlikely(meta->err != PKT_ERR_NONE)) {
				/* Never CE-mark or reorder what we cannot parse. */
				st->malformed++;
				pkts[keep++] = m;
				continue;
			}
			if (unlikely(id == pass_id)) {
				st->passed++;
				pkts[keep++] = m;
				continue;
			}
			meta->out_port = out_port;
			meta->pipe = id; /* passive RTT reads it as it leaves */
			/* ... and its subscriber's line, a few packets on (up
			 * before the queue; down at once if it bypasses). */
			if (pf.slots != NULL)
				prtt_fast_prefetch(&pf, id);
			/* Pipe ids are the same on every worker; one owns each. */
			if (likely(single ||
				   (owner = aqm_pipe_owner(w->owner, id, nb_workers)) == me ||
				   stopping)) {
				local[nl] = m;
				pipes[nl++] = id;
				if (nl == AQM_BATCH) {
					keep += enqueue_local(w, dir, sched, pipes, local,
							      nl, pkts + keep, now_ns);
					nl = 0;
				}
			} else {
				/* With its incarnation: the owner may have removed it. */
				meta->pipe = aqm_subs_pipe_tag(w->subs, id);
				handoff_stage_add(&w->hp, &away, m, owner,
						  &st->handoffs, &st->handoff_drops);
			}
		}
	}
	if (nl)
		keep += enqueue_local(w, dir, sched, pipes, local, nl,
				      pkts + keep, now_ns);
	if (away.n)
		handoff_stage_flush(&w->hp, &away, &st->handoffs,
				    &st->handoff_drops);
	return keep;
}

/* How far ahead the hand-off drain asks for mbufs. Measured with 2
 * workers and the RSS split: 8 ahead forwarded 5-13% more than no
 * prefetch and cut the hand-off drops by half or more; all 64 at once
 * gave 4% (perf/README.md, "scale"). */
#define HANDOFF_PREFETCH 8u

/* An mbuf's first line (length, refcount) and its pkt_meta. */
static inline void
handoff_prefetch(struct rte_mbuf *m)
{
	rte_prefetch0(m);
	rte_prefetch0(pkt_meta(m));
}

/* Control changes and hand-offs reach the worker here, between bursts. */
static void
aqm_take_inputs(struct aqm_worker *w, struct stage_emitter *em, uint64_t now_ns)
{
	unsigned n;

	ctl_mailbox_take(w->mailbox, aqm_ctl_apply, w);
	for (unsigned from = 0; from < w->nb_workers; from++) {
		struct rte_mbuf *in[AQM_BATCH];
		struct rte_mbuf *pk[2][AQM_BATCH];
		uint32_t pipes[2][AQM_BATCH];
		uint16_t np[2] = { 0, 0 };

		n = handoff_recv(&w->hp, from, in, AQM_BATCH);
		/* These mbufs were last written on the sender's core: each
		 * read of one is a miss. Ask for them a few packets ahead,
		 * so that the misses overlap (all of them at once overflow
		 * the core's miss buffers and the first stall as before). */
		for (unsigned i = 0; i < RTE_MIN(n, HANDOFF_PREFETCH); i++)
			handoff_prefetch(in[i]);
		for (unsigned i = 0; i < n; i++) {
			struct rte_mbuf *m = in[i];
			if (i + HANDOFF_PREFETCH < n)
				handoff_prefetch(in[i + HANDOFF_PREFETCH]);
			struct pkt_meta *meta = pkt_meta(m);
			enum aqm_dir d = dir_of_out_port(meta->out_port);
			int id = aqm_subs_pipe_of_tag(w->subs, meta->pipe);

			if (unlikely(id < 0)) {
				/* Its pipe was removed (and perhaps reused) since
				 * the sender classified it: it goes on unshaped,
				 * as the pipe's queue did. */
				w->st[d].handoff_stale++;
				stage_emit(em, meta->out_port, m);
				continue;
			}
			meta->pipe = (uint32_t)id; /* passive RTT reads the id */
			pk[d][np[d]] = m;
			pipes[d][np[d]++] = (uint32_t)id;
		}
		for (int d = 0; d < 2; d++) {
			if (np[d] == 0)
				continue;
			w->st[d].handoff_in += np[d];
			uint16_t nb = enqueue_local(w, (enum aqm_dir)d,
				aqm_subs_sched(w->subs, (enum aqm_dir)d),
				pipes[d], pk[d], np[d], pk[d], now_ns);
			for (uint16_t i = 0; i < nb; i++)
				stage_emit(em, pkt_meta(pk[d][i])->out_port, pk[d][i]);
		}
	}
}

static void
aqm_stage_poll(void *ctx, struct stage_emitter *em, uint64_t now_ns)
{
	struct aqm_worker *w = ctx;
	struct rte_mbuf *pkts[AQM_BATCH];

	aqm_take_inputs(w, em, now_ns);
	if (w->ar != NULL)
		aqm_ar_poll(w->ar, w, now_ns);
	for (int d = 0; d < 2; d++) {
		for (int b = 0; b < AQM_POLL_BATCHES; b++) {
			uint16_t n = aqm_subs_dequeue_burst(w->subs, (enum aqm_dir)d,
							    pkts, AQM_BATCH, now_ns);
			if (w->ar != NULL && d == AQM_DIR_DOWN && n)
				aqm_ar_down(w->ar, pkts, n, now_ns);
			if (w->rw != NULL && n)
				aqm_rwnd_departed(w, (enum aqm_dir)d, pkts, n, now_ns);
			for (uint16_t i = 0; i < n; i++)
				stage_emit(em, pkt_meta(pkts[i])->out_port, pkts[i]);
			if (n < AQM_BATCH)
				break;
		}
	}
}

static uint32_t
aqm_stage_pending(void *ctx)
{
	struct aqm_worker *w = ctx;

	return aqm_subs_pending(w->subs) + handoff_pending(&w->hp);
}

static void
aqm_stage_flush(void *ctx, struct stage_emitter *em, uint64_t now_ns)
{
	struct aqm_worker *w = ctx;
	struct rte_mbuf *pkts[AQM_BATCH];
	uint16_t n;

	aqm_take_inputs(w, em, now_ns);
	for (int d = 0; d < 2; d++)
		while ((n = aqm_subs_flush_burst(w->subs, (enum aqm_dir)d, pkts,
						 AQM_BATCH)) > 0)
			for (uint16_t i = 0; i < n; i++)
				stage_emit(em, pkt_meta(pkts[i])->out_port, pkts[i]);
}

static void
aqm_stage_destroy(void *ctx)
{
	struct aqm_worker *w = ctx;

	if (w == NULL)
		return;
	aqm_ar_free(w->ar);
	aqm_rwnd_free(w);
	aqm_subs_free(w->subs);
	rte_free(w->del_tags);
	rte_free(w->owner);
	rte_free(w->owner_tag);
	rte_free(w);
}

void
aqm_owner_fill(struct aqm_worker *w, const struct aqm_sub_entry *e, uint32_t n)
{
	if (w->owner == NULL)
		return;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t id = aqm_subs_find(w->subs, &e[i]);
		uint32_t tag;

		if (id == 0)
			continue;
		tag = aqm_subs_pipe_tag(w->subs, id);
		if (w->owner_tag[id] == tag)
			continue; /* lives on, or a later prefix of its group */
		w->owner_tag[id] = tag;
		/* IPv6 by its /64 where the ports hash that (a prefix of
		 * /64 or longer pins it down); else the NIC hashes whole
		 * addresses, which a prefix does not pin down: its packets
		 * reach whichever worker. */
		if (e[i].family == 4)
			w->owner[id] = (uint8_t)port_steer_queue(e[i].addr, w->nb_workers);
		else if (w->steer_v6 && e[i].depth >= 64)
			w->owner[id] = (uint8_t)port_steer_queue_v6(e[i].addr, w->nb_workers);
		else
			w->owner[id] = (uint8_t)handoff_owner(id, w->nb_workers);
	}
}

static const struct stage_ops aqm_stage_ops = {
	.name = "aqm",
	.burst = aqm_stage_burst,
	.poll = aqm_stage_poll,
	.pending = aqm_stage_pending,
	.flush = aqm_stage_flush,
	.destroy = aqm_stage_destroy,
};

/* ------------------------------------------------------------------ */
/* Boot: per-worker instance; the last one wires the shared parts.      */

/* Boot state shared by the workers' instances: the hand-off rings. */
static struct handoff_mesh *aqm_mesh;

static int
aqm_shared_init(const struct aqm_conf *c, const struct stage_env *env)
{
	int rc = aqm_ctl_boot(c, env->nb_workers);

	if (rc < 0)
		return rc;
	aqm_mesh = handoff_mesh_create("aqm_h", env->nb_workers,
				       c->handoff_ring);
	if (aqm_mesh == NULL)
		return rte_errno ? -rte_errno : -ENOMEM;
	return 0;
}

static int
aqm_create(const void *conf, const struct stage_env *env, struct stage *out)
{
	const struct aqm_conf *c = conf;
	struct aqm_subs_params sp;
	struct aqm_worker *w;
	char name[32];
	int rc;

	if (env->worker == 0) {
		rc = aqm_shared_init(c, env);
		if (rc < 0)
			return rc;
		if (c->ports != UINT64_MAX && (c->ports >> env->nb_pairs) != 0)
			aqm_log(RTE_LOG_WARNING, "[aqm] ports lists a pair this run does not have (%u pair(s)); it is ignored",
				env->nb_pairs);
	}
	w = rte_zmalloc_socket("aqm_worker", sizeof(*w) +
			       2 * env->nb_workers * sizeof(struct rte_ring *),
			       RTE_CACHE_LINE_SIZE, env->socket);
	if (w == NULL)
		return -ENOMEM;
	w->index = env->worker;
	w->nb_workers = env->nb_workers;
	w->pairs = c->ports;
	w->bypass = c->bypass;
	w->steer_v6 = env->steer_v6;
	w->conf = aqm_ctl_running();
	handoff_port_init(aqm_mesh, env->worker, &w->hp,
			  (struct rte_ring **)(w + 1));
	w->mailbox = aqm_ctl_mailbox(env->worker, env->socket);
	if (w->mailbox == NULL) {
		rc = -rte_errno;
		rte_free(w);
		return rc;
	}

	aqm_subs_params_default(&sp);
	snprintf(name, sizeof(name), "aqm_w%u", env->worker);
	sp.name = name;
	sp.socket_id = env->socket;
	sp.max_subs = c->max_subs;
	sp.max_v6_subs = c->max_v6_subs;
	aqm_conf_pipe(c, true, &sp.pipe);
	sp.default_policy = (enum aqm_default_policy)c->default_policy;
	aqm_conf_pipe(c, false, &sp.default_pipe);
	sp.default_up_bps = c->rate_up;
	sp.ack_filter_dirs = c->ack_filter;
	sp.sched.ack_hold_ns = c->ack_hold_ns;
	sp.sched.ack_hold_slots = AQM_ACK_HOLD_SLOTS;
	/* Keep a share of the mempool free for rx: queues may hold at most
	 * half of it, split over workers and directions. */
	uint32_t maxq = c->max_queued;
	if (maxq == 0 && env->pool != NULL)
		maxq = RTE_MAX(env->pool->size / 2 / (2 * env->nb_workers), 64u);
	sp.sched.limit_pkts = maxq;
	sp.sched.max_lag_ns = c->max_lag_ns;
	/* BLUE's draws: a different sequence per worker and run. */
	sp.sched.rng_seed = rte_rand() | 1;
	w->subs = aqm_subs_create(&sp);
	w->del_tags = rte_malloc_socket("aqm_del_tags", (size_t)c->max_subs * sizeof(uint32_t),
					0, env->socket);
	const bool steered = env->steer && env->nb_workers > 1;
	if (steered) {
		/* Tags start at UINT32_MAX, which no incarnation has. */
		w->owner = rte_malloc_socket("aqm_owner", (size_t)c->max_subs + 1, 0, env->socket);
		w->owner_tag = rte_malloc_socket("aqm_owner_tag",
						 ((size_t)c->max_subs + 1) * sizeof(uint32_t),
						 0, env->socket);
		if (w->owner != NULL && w->owner_tag != NULL) {
			memset(w->owner_tag, 0xff, ((size_t)c->max_subs + 1) * sizeof(uint32_t));
			for (uint32_t id = 0; id <= c->max_subs; id++)
				w->owner[id] = (uint8_t)handoff_owner(id, env->nb_workers);
		}
	}
	if (w->subs == NULL || w->del_tags == NULL ||
	    (steered && (w->owner == NULL || w->owner_tag == NULL))) {
		rc = rte_errno ? -rte_errno : -EINVAL;
		goto fail;
	}
	char err[192];
	if (c->nsubs && aqm_subs_apply(w->subs, c->subs, c->nsubs, err, sizeof(err)) < 0) {
		aqm_log(RTE_LOG_ERR, "%s: %s", c->subs_path, err);
		rc = -EINVAL;
		goto fail;
	}
	rc = aqm_ar_create(w, &c->ar, sp.max_subs, env, &w->ar);
	if (rc < 0)
		goto fail;
	rc = aqm_rwnd_create(w, c, env->socket);
	if (rc < 0)
		goto fail;
	aqm_owner_fill(w, c->subs, c->nsubs);
	aqm_ar_subs_applied(w->ar, w->subs, c->subs, c->nsubs);
	aqm_ar_slots(w->ar, &w->prtt_pf);
	out->ops = &aqm_stage_ops;
	out->ctx = w;
	aqm_log(RTE_LOG_DEBUG, "worker %u: pipes for %u subscriber(s) of at most %u (%u IPv6), %u flow queues each, queues hold at most %u packets per direction, hand-off ring %u slots",
		env->worker, c->nsubs, sp.max_subs, sp.max_v6_subs,
		sp.pipe.fq.flows, maxq, c->handoff_ring);
	aqm_ctl_worker_ready(w, c, env);
	return 0;

fail:
	/* What was made so far; the rest is NULL (w was zeroed). */
	rte_ring_free(w->mailbox);
	aqm_stage_destroy(w);
	return rc;
}

const struct stage_module sl_stage_aqm = {
	.name = "aqm",
	.parse = aqm_parse,
	.conf_free = aqm_conf_free,
	.print_keys = aqm_print_keys,
	.owns_section = aqm_owns_section,
	.create = aqm_create,
	.telemetry = aqm_telemetry,
	.telemetry_help = "AQM totals per direction, reload counters. No parameters.",
	.report = aqm_report,
	.reload = aqm_module_reload,
};
