/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The poll-mode loop: rx burst -> parse -> stages -> tx buffer, then poll
 * the stages for packets they release, then flush tx buffers that are full
 * or older than tx_drain_us. Run to completion, no locks: every structure
 * touched here belongs to this worker.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_prefetch.h>

#include "worker.h"

struct control sl_control;

static void
tx_flush(struct worker *w, uint16_t port)
{
	struct txbuf *b = &w->tx[port];
	uint16_t sent = 0;
	uint32_t tries = 0;

	if (b->n == 0)
		return;
	/* A full ring (af_packet, a slow NIC) gets a few more tries before
	 * we drop: a drop here is counted as tx_dropped, never silent. */
	for (;;) {
		sent += rte_eth_tx_burst(port, w->txq, b->pkts + sent,
					 b->n - sent);
		if (sent == b->n || tries++ >= w->cfg->tx_retries)
			break;
		rte_pause();
	}
	w->stats.tx[port] += sent;
	if (unlikely(sent < b->n)) {
		w->stats.tx_dropped[port] += b->n - sent;
		rte_pktmbuf_free_bulk(b->pkts + sent, b->n - sent);
	}
	b->n = 0;
}

/*
 * net_af_packet copies a tx burst into the port's TX ring and asks the
 * kernel to send it: one sendto() per burst. Where the port's frames pass
 * a qdisc (qdisc_bypass=0) the kernel stops at a full socket send buffer
 * (about 92 full-size frames held in the qdisc) and leaves the rest of the
 * ring for the next sendto(). With no next burst (the end of a transfer,
 * or a sender whose ACKs wait on those very frames) they waited for a
 * retransmission timer, 120-180 ms at the end of every shaped MPTCP
 * download of perf/bench.sh mptcp. So every tx_kick_us a port this worker
 * sent on, and sent no burst on since the last tick, gets sendto() again,
 * until the kernel finds nothing left in the ring (0).
 */
static __rte_noinline void
tx_kick(struct worker *w)
{
	for (uint16_t p = 0; p < w->nb_ports; p++) {
		struct txkick *k = &w->kick[p];
		ssize_t r;

		if (k->fd < 0)
			continue;
		if (w->stats.tx[p] != k->tx_seen) {
			/* A burst since the last tick: the driver asked. */
			k->tx_seen = w->stats.tx[p];
			k->pending = true;
			continue;
		}
		if (!k->pending)
			continue;
		r = sendto(k->fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
		if (r > 0) {
			w->stats.tx_kicked[p]++; /* and more may be left */
		} else if (r == 0) {
			k->pending = false;
		} else if (errno != EAGAIN && errno != ENOBUFS && errno != EINTR) {
			/* Not the socket it was (closed, reused): stop. */
			k->fd = -1;
			k->pending = false;
		}
	}
}

static bool
tx_kick_any(const struct worker *w)
{
	for (uint16_t p = 0; p < w->nb_ports; p++)
		if (w->kick[p].fd >= 0)
			return true;
	return false;
}

static inline void
tx_enqueue(struct worker *w, uint16_t port, struct rte_mbuf **pkts,
	   uint16_t n, uint64_t now)
{
	struct txbuf *b = &w->tx[port];
	const uint16_t burst = w->cfg->burst;

	/* A full burst and nothing buffered: send it from the rx array as
	 * it is, with no copy (what testpmd's io forward does). */
	if (b->n == 0 && n >= burst) {
		uint16_t sent = rte_eth_tx_burst(port, w->txq, pkts, n);
		w->stats.tx[port] += sent;
		if (likely(sent == n))
			return;
		pkts += sent;
		n -= sent;
	}
	while (n > 0) {
		if (b->n == 0)
			b->first_ns = now;
		uint16_t room = burst > b->n ? burst - b->n : 0;
		uint16_t k = n < room ? n : room;
		memcpy(&b->pkts[b->n], pkts, k * sizeof(*pkts));
		b->n += k;
		pkts += k;
		n -= k;
		if (b->n >= burst)
			tx_flush(w, port);
	}
}

/* The stages of pipeline_run() with [sluice] stage_cycles = on: the TSC
 * is read around each call (about 1 cycle per packet of a 32-packet
 * burst, which falls outside the stage's own count). */
static __rte_noinline uint16_t
stages_timed(struct worker *w, unsigned from, const struct stage_burst *sb,
	     struct rte_mbuf **pkts, uint16_t n, uint64_t now)
{
	for (unsigned s = from; s < w->nb_stages && n > 0; s++) {
		struct stage_time *t = &w->stats.stage[s];
		uint64_t t0 = rte_rdtsc();

		t->bursts++;
		t->packets += n;
		n = w->stages[s].ops->burst(w->stages[s].ctx, sb, pkts, n, now);
		t->cycles += rte_rdtsc() - t0;
	}
	return n;
}

/* Run stages [from, nb_stages) on a burst, then buffer it for tx. */
static void
pipeline_run(struct worker *w, unsigned from, const struct stage_burst *sb,
	     struct rte_mbuf **pkts, uint16_t n, uint64_t now)
{
	if (unlikely(w->stage_cycles))
		n = stages_timed(w, from, sb, pkts, n, now);
	else
		for (unsigned s = from; s < w->nb_stages && n > 0; s++)
			n = w->stages[s].ops->burst(w->stages[s].ctx, sb, pkts,
						    n, now);
	if (n > 0)
		tx_enqueue(w, sb->out_port, pkts, n, now);
}

/* Packets a stage emitted go on through the stages after it. Runs of the
 * same out port keep their order. */
static void
emitter_drain(struct stage_emitter *em, uint64_t now)
{
	struct worker *w = em->w;
	uint16_t i = 0;

	while (i < em->n) {
		uint16_t port = em->port[i], j = i;
		while (j < em->n && em->port[j] == port)
			j++;
		struct stage_burst sb = {
			.pair = port / 2,
			.in_port = port ^ 1,
			.out_port = port,
			.upstream = (port & 1) != 0,
			.worker = (uint8_t)w->index,
			.stopping = sl_control.stop,
		};
		pipeline_run(w, em->from + 1, &sb, em->pkts + i, j - i, now);
		i = j;
	}
	em->n = 0;
}

/* The staging array is full: send it on through the later stages. */
static __rte_noinline void
emitter_full(struct stage_emitter *em)
{
	if (unlikely(em->w->stage_cycles)) {
		uint64_t t0 = rte_rdtsc();

		em->emitted += em->n;
		emitter_drain(em, worker_now_ns(em->w));
		em->drain_cycles += rte_rdtsc() - t0;
	} else {
		emitter_drain(em, worker_now_ns(em->w));
	}
}

/* Inlined into the stages' polls (through LTO): called once per packet a
 * stage releases, and as a call, with the registers the drain needs
 * saved, it cost 22 instructions a packet. */
__rte_always_inline void
stage_emit(struct stage_emitter *em, uint16_t out_port, struct rte_mbuf *m)
{
	if (unlikely(em->n == SL_EMIT_MAX))
		emitter_full(em);
	em->port[em->n] = out_port;
	em->pkts[em->n++] = m;
}

/* The pass of lib/pkt's classification for one rx queue of this worker. */
static inline struct pkt_classify
classify_of(struct worker *w, const struct rxq *q)
{
	return (struct pkt_classify){
		.in_port = q->port,
		.max_frame = w->cfg->max_frame,
		.err_count = w->stats.malformed,
		.non_ip = &w->stats.non_ip,
	};
}

/* The general case: oversize or chained frames, or a drop policy. */
static uint16_t
classify_slow(struct worker *w, const struct rxq *q, struct rte_mbuf **pkts,
	      uint16_t n, uint16_t start)
{
	struct worker_stats *st = &w->stats;
	const struct pkt_classify c = classify_of(w, q);
	const bool drop_malformed = w->cfg->malformed == SL_ACTION_DROP;
	const bool drop_non_ip = w->cfg->non_ip == SL_ACTION_DROP;
	uint16_t keep = start;

	for (uint16_t i = start; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		bool drop = false;
		if (m->nb_segs > 1)
			st->multiseg++;
		/* Larger than we promise to carry (a PMD may also have cut
		 * it short): a documented, counted drop. */
		if (m->pkt_len > c.max_frame) {
			st->dropped_oversize++;
			drop = true;
		} else {
			uint64_t non_ip = 0;
			enum pkt_err e = pkt_classify_one(m, &c, &non_ip);

			st->non_ip += non_ip;
			if (e != PKT_ERR_NONE) {
				if (drop_malformed) {
					st->dropped_malformed++;
					drop = true;
				}
			} else if (non_ip && drop_non_ip) {
				st->dropped_non_ip++;
				drop = true;
			}
		}
		if (drop) {
			rte_pktmbuf_free(m);
			continue;
		}
		pkts[keep++] = m;
	}
	return keep;
}

/* Parse a burst; apply the non-IP / malformed policy; count. Returns the
 * packets left, compacted. This runs for every packet sluice sees, so the
 * common case (no drop policy, single-segment frames that fit) is lib/pkt's
 * tight pass, which never rewrites the array; anything else finishes the
 * burst in classify_slow() from the first packet that needs it. */
static uint16_t
classify(struct worker *w, const struct rxq *q, struct rte_mbuf **pkts,
	 uint16_t n)
{
	if (unlikely(w->cfg->malformed == SL_ACTION_DROP ||
		     w->cfg->non_ip == SL_ACTION_DROP))
		return classify_slow(w, q, pkts, n, 0);

	const struct pkt_classify c = classify_of(w, q);
	uint16_t i = pkt_classify_burst(pkts, n, &c);

	if (unlikely(i < n))
		return classify_slow(w, q, pkts, n, i);
	return n;
}

/* classify() and the first stage in one pass, by the stage's parse_burst
 * (struct stage_ops). Frames it leaves (chained or oversize, and all
 * after the first of them) take classify_slow() and the stage's burst(). */
static uint16_t
classify_in_stage(struct worker *w, const struct rxq *q,
		  const struct stage_burst *sb, struct rte_mbuf **pkts,
		  uint16_t n, uint64_t now)
{
	const struct stage *s = &w->stages[0];
	const struct pkt_classify c = classify_of(w, q);
	uint16_t rest, kept, m;

	kept = s->ops->parse_burst(s->ctx, sb, pkts, n, &c, &rest);
	if (likely(rest == 0))
		return kept;
	m = classify_slow(w, q, pkts + kept, rest, 0);
	if (m > 0)
		m = s->ops->burst(s->ctx, sb, pkts + kept, m, now);
	return kept + m;
}

static void
stages_poll(struct worker *w, uint64_t now, bool flush)
{
	for (unsigned s = 0; s < w->nb_stages; s++) {
		const struct stage_ops *ops = w->stages[s].ops;
		void (*fn)(void *, struct stage_emitter *, uint64_t) =
			flush ? ops->flush : ops->poll;
		if (fn == NULL)
			continue;
		/* The header only: stage_emit() fills port[] and pkts[]
		 * below n, and zeroing both arrays on every poll of every
		 * loop was a 660-byte memset per stage. */
		struct stage_emitter em;

		em.w = w;
		em.from = s;
		em.n = 0;
		if (unlikely(w->stage_cycles)) {
			struct stage_time *t = &w->stats.stage[s];
			uint64_t t0 = rte_rdtsc();

			em.emitted = 0;
			em.drain_cycles = 0;
			fn(w->stages[s].ctx, &em, now);
			t->poll_cycles += rte_rdtsc() - t0 - em.drain_cycles;
			t->polls++;
			t->emitted += em.emitted + em.n;
		} else {
			fn(w->stages[s].ctx, &em, now);
		}
		if (em.n)
			emitter_drain(&em, now);
	}
}

static uint32_t
stages_pending(const struct worker *w)
{
	uint32_t held = 0;
	for (unsigned s = 0; s < w->nb_stages; s++)
		if (w->stages[s].ops->pending != NULL)
			held += w->stages[s].ops->pending(w->stages[s].ctx);
	return held;
}

static uint32_t
held_packets(const struct worker *w)
{
	uint32_t held = stages_pending(w);
	for (uint16_t p = 0; p < w->nb_ports; p++)
		held += w->tx[p].n;
	return held;
}

/* Control duties of the main lcore: idle exit. Signals only set flags. */
static void
control_tick(uint64_t now)
{
	struct control *c = &sl_control;
	if (c->stop || c->idle_exit_ns == 0)
		return;
	for (unsigned i = 0; i < c->nb_workers; i++) {
		const struct worker *o = c->workers[i];
		if (now - o->last_rx_ns < c->idle_exit_ns || o->held != 0)
			return;
	}
	c->stop = true;
}

int
worker_main(void *arg)
{
	struct worker *w = arg;
	const struct sl_config *cfg = w->cfg;
	const uint16_t burst = cfg->burst;
	const uint64_t drain_ns = (uint64_t)cfg->tx_drain_us * 1000;
	struct rte_mbuf *pkts[SL_MAX_BURST];
	uint64_t now = worker_now_ns(w);
	uint64_t next_ctl = now;
	/* A worker with no socket to kick (bypass ports, other drivers)
	 * never takes the tick: kick_ns 0 is "off". */
	const uint64_t kick_ns = tx_kick_any(w) ?
		(uint64_t)cfg->tx_kick_us * 1000 : 0;
	uint64_t next_kick = now + kick_ns;

	/* The first stage parses, when it can and nothing else must see the
	 * parse on its own: a drop policy takes classify_slow(), and
	 * stage_cycles times the stages one by one. */
	const bool parse_in_stage = w->nb_stages > 0 &&
		w->stages[0].ops->parse_burst != NULL && !w->stage_cycles &&
		cfg->malformed != SL_ACTION_DROP && cfg->non_ip != SL_ACTION_DROP;

	w->last_rx_ns = now;
	while (!sl_control.stop) {
		now = worker_now_ns(w);
		bool busy = false;
		for (uint16_t qi = 0; qi < w->nb_rxq; qi++) {
			const struct rxq *q = &w->rxq[qi];
			uint16_t n = rte_eth_rx_burst(q->port, q->queue, pkts,
						      burst);
			if (n == 0)
				continue;
			/* Stamp the burst after it arrived: an lcore preempted
			 * between a clock read and rx would otherwise date the
			 * packets early (delays came out short, sojourns long). */
			now = worker_now_ns(w);
			busy = true;
			w->stats.rx[q->port] += n;
			struct stage_burst sb = {
				.pair = q->pair, .in_port = q->port,
				.out_port = q->peer, .upstream = q->upstream,
				.worker = (uint8_t)w->index,
				.stopping = sl_control.stop,
			};
			if (parse_in_stage) {
				n = classify_in_stage(w, q, &sb, pkts, n, now);
				pipeline_run(w, 1, &sb, pkts, n, now);
			} else {
				n = classify(w, q, pkts, n);
				pipeline_run(w, 0, &sb, pkts, n, now);
			}
		}
		if (busy) {
			w->last_rx_ns = now;
			w->stats.busy_loops++;
		}
		w->stats.loops++;
		if (w->nb_stages)
			stages_poll(w, now, false);
		for (uint16_t p = 0; p < w->nb_ports; p++)
			if (w->tx[p].n && now - w->tx[p].first_ns >= drain_ns)
				tx_flush(w, p);
		if (unlikely(kick_ns != 0 && now >= next_kick)) {
			tx_kick(w);
			next_kick = now + kick_ns;
		}
		if (unlikely(now >= next_ctl)) {
			/* ~every 100 us: publish what we hold, run control. */
			w->held = held_packets(w);
			if (w->is_main)
				control_tick(now);
			next_ctl = now + 100000;
		}
	}

	/* Shutdown: rx is stopped; let the stages drain at their own pace
	 * for up to drain_timeout_ms, then release the rest at once.
	 *
	 * A worker that read stop as false a moment ago may still be in its
	 * last burst, handing packets to our rings. So we are empty only
	 * once every worker has left its rx loop: each says so with a
	 * release, and what it handed before is in our rings by the time
	 * we see its count (the poll below takes it). Leaving earlier lost
	 * that last hand-off: its mbufs sat in a ring no one read. */
	__atomic_add_fetch(&sl_control.rx_left, 1, __ATOMIC_RELEASE);
	uint64_t deadline = worker_now_ns(w) + (uint64_t)cfg->drain_timeout_ms * 1000000;
	for (;;) {
		const bool all_out = __atomic_load_n(&sl_control.rx_left, __ATOMIC_ACQUIRE) >=
			sl_control.nb_workers;

		now = worker_now_ns(w);
		stages_poll(w, now, false);
		if ((all_out && stages_pending(w) == 0) || now >= deadline)
			break;
		for (uint16_t p = 0; p < w->nb_ports; p++)
			if (w->tx[p].n && now - w->tx[p].first_ns >= drain_ns)
				tx_flush(w, p);
		if (kick_ns != 0 && now >= next_kick) {
			tx_kick(w);
			next_kick = now + kick_ns;
		}
	}
	stages_poll(w, worker_now_ns(w), true);
	for (uint16_t p = 0; p < w->nb_ports; p++)
		tx_flush(w, p);
	/* What the kernel left in a TX ring goes before the ports close
	 * (main stops them), or it is lost: a tick to see the last bursts,
	 * then kicks until every ring is empty, for at most 200 ms. */
	for (uint64_t end = worker_now_ns(w) + 200000000; kick_ns != 0;) {
		bool pending = false;

		tx_kick(w);
		for (uint16_t p = 0; p < w->nb_ports; p++)
			pending = pending || w->kick[p].pending;
		if (!pending || worker_now_ns(w) >= end)
			break;
		rte_delay_us_block(cfg->tx_kick_us);
	}
	w->held = 0;
	w->done = true;
	return 0;
}
