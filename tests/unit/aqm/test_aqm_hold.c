/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ACK hold (aqm_sched_params.ack_hold_ns): on a backlogged pipe a pure
 * ACK waits outside the queue for up to the hold, newer ACKs of its
 * connection replace it, and it joins its flow queue at its deadline, when
 * the queue runs empty, or before any other packet of its flow queue.
 * Virtual clock; real frames through the real parser.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "aqm_test_util.h"
#include "aqm_test_tcp.h"

#define US 1000ULL
#define MS 1000000ULL
#define T0 (1000 * MS)
#define HOLD (20 * MS)
#define RATE 10000000ULL          /* 10 Mbit/s: a 1514-byte frame is 1.2112 ms */
#define FRAME_NS 1211200ULL
#define MAX_OUT 4096

/* The upload's data segments that keep the pipe backlogged. */
#define UP_PORT 50000
/* The download's ACKs go out from this port (and +1, +2... for others). */
#define DN_PORT 40000

struct out {
	uint16_t sport;
	uint16_t payload;
	uint32_t ack;
	uint32_t tsval;
	uint64_t at;   /* dequeued at */
	uint64_t enq;  /* when it joined the queue (pkt_meta.enq_ns) */
};

static struct out outs[MAX_OUT];
static unsigned int nout;
static uint32_t clock_ts; /* TSval of the next segment: arrival order */

static struct aqm_sched *
hold_sched(uint64_t rate, uint64_t hold, uint32_t slots, uint32_t limit)
{
	struct aqm_sched_params sp;
	struct aqm_pipe_params pp;
	struct aqm_sched *s;

	aqm_sched_params_default(&sp);
	sp.max_pipes = 2;
	sp.max_flows = 2048;
	sp.ack_hold_ns = hold;
	sp.ack_hold_slots = slots;
	sp.limit_pkts = limit;
	s = aqm_sched_create(&sp);
	assert_non_null(s);
	aqm_pipe_params_default(&pp);
	pp.shaper.rate_bps = rate;
	pp.fq.ack_filter = true;
	assert_int_equal(aqm_sched_pipe_add(s, &pp), 0);
	assert_int_equal(aqm_sched_pipe_add(s, &pp), 1);
	nout = 0;
	clock_ts = 100;
	return s;
}

static struct rte_mbuf *
seg_pkt(uint16_t sport, uint32_t a, uint16_t payload)
{
	struct seg g = ack(a, clock_ts++);

	g.sport = sport;
	g.payload = payload;
	if (payload)
		g.flags |= F_PSH;
	return mk(&g);
}

static void
put(struct aqm_sched *s, uint32_t pipe, struct rte_mbuf *m, uint64_t now)
{
	assert_int_equal(aqm_sched_pipe_enqueue_burst(s, pipe, &m, 1, now), 1);
}

/* n data frames of 1514 bytes (upload connection) at now. */
static void
backlog(struct aqm_sched *s, unsigned int n, uint64_t now)
{
	for (unsigned int i = 0; i < n; i++)
		put(s, 0, seg_pkt(UP_PORT, 1, 1448), now);
}

static void
put_ack(struct aqm_sched *s, uint16_t sport, uint32_t a, uint64_t now)
{
	put(s, 0, seg_pkt(sport, a, 0), now);
}

static uint32_t
tsval_of(struct rte_mbuf *m)
{
	const uint8_t *t = rte_pktmbuf_mtod(m, const uint8_t *) + pkt_meta(m)->l4_off;

	/* NOP NOP TS: TSval at offset 24 of the TCP header. */
	assert_int_equal(t[22], 8);
	return (uint32_t)t[24] << 24 | (uint32_t)t[25] << 16 | (uint32_t)t[26] << 8 | t[27];
}

static void
record(struct rte_mbuf **pk, uint16_t n, uint64_t now)
{
	for (uint16_t i = 0; i < n; i++) {
		struct pkt_meta *meta = pkt_meta(pk[i]);
		const uint8_t *t = rte_pktmbuf_mtod(pk[i], const uint8_t *) + meta->l4_off;

		assert_true(nout < MAX_OUT);
		outs[nout].sport = (uint16_t)(t[0] << 8 | t[1]);
		outs[nout].payload = (uint16_t)(meta->l3_off + meta->l3_len - meta->payload_off);
		outs[nout].ack = ack_of(pk[i]);
		outs[nout].tsval = tsval_of(pk[i]);
		outs[nout].at = now;
		outs[nout].enq = meta->enq_ns;
		nout++;
		rte_pktmbuf_free(pk[i]);
	}
}

/* Dequeue at from, from + step, ... up to and including to. */
static void
run(struct aqm_sched *s, uint64_t from, uint64_t to, uint64_t step)
{
	for (uint64_t now = from; now <= to; now += step) {
		struct rte_mbuf *pk[32];
		uint16_t n;

		while ((n = aqm_sched_dequeue_burst(s, pk, RTE_DIM(pk), now)) > 0)
			record(pk, n, now);
	}
}

static struct aqm_pipe_stats
stats(struct aqm_sched *s, uint32_t pipe)
{
	struct aqm_pipe_stats st;

	assert_int_equal(aqm_sched_pipe_stats(s, pipe, &st), 0);
	return st;
}

/* Every packet that came in is sent, dropped, replaced, queued or held. */
static void
check_conservation(struct aqm_sched *s)
{
	uint64_t in = 0, acct = 0;

	for (uint32_t p = 0; p < aqm_sched_pipe_count(s); p++) {
		struct aqm_pipe_stats st = stats(s, p);

		in += st.enq_pkts;
		acct += st.tx_pkts + st.ack_filtered + st.backlog_pkts + st.held_pkts;
		for (int r = 0; r < AQM_DROP_MAX; r++)
			acct += st.drops[r];
	}
	assert_int_equal(in, acct);
}

/* The ACKs (no payload) of connection sport among the departures. */
static unsigned int
acks_out(uint16_t sport, struct out *a, unsigned int max)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < nout; i++)
		if (outs[i].sport == sport && outs[i].payload == 0) {
			assert_true(k < max);
			a[k++] = outs[i];
		}
	return k;
}

static void
test_acks_within_the_hold_leave_as_one_the_newest_at_the_deadline(void **state)
{
	struct aqm_sched *s = hold_sched(RATE, HOLD, 1024, 0);
	struct aqm_pipe_stats st;
	struct out a[8];

	(void)state;
	backlog(s, 40, T0);          /* 48 ms of link time */
	run(s, T0, T0, 1);           /* the first data frame leaves */
	for (uint32_t i = 0; i < 10; i++) {
		put_ack(s, DN_PORT, 10000 + 1448 * i, T0 + i * MS);
		run(s, T0 + i * MS + 500 * US, T0 + i * MS + 500 * US, 1);
	}
	st = stats(s, 0);
	assert_int_equal(st.ack_held, 10);
	assert_int_equal(st.ack_filtered, 9);
	assert_int_equal(st.held_pkts, 1);
	assert_int_equal(aqm_sched_pending(s), st.backlog_pkts + 1);
	check_conservation(s);
	run(s, T0 + 10 * MS, T0 + 100 * MS, 100 * US);
	assert_int_equal(aqm_sched_pending(s), 0);
	/* One ACK, the newest, queued exactly at the first one's arrival
	 * plus the hold, and sent at the next frame boundary after it. */
	assert_int_equal(acks_out(DN_PORT, a, RTE_DIM(a)), 1);
	assert_int_equal(a[0].ack, 10000 + 1448 * 9);
	assert_int_equal(a[0].enq, T0 + HOLD);
	assert_true(a[0].at >= T0 + HOLD);
	assert_true(a[0].at <= T0 + HOLD + FRAME_NS + 100 * US);
	st = stats(s, 0);
	assert_int_equal(st.tx_pkts, 41);
	assert_int_equal(st.held_pkts, 0);
	check_conservation(s);
	aqm_sched_free(s);
}

static void
test_replacement_never_extends_the_deadline(void **state)
{
	struct aqm_sched *s = hold_sched(RATE, HOLD, 1024, 0);
	struct aqm_pipe_stats st;
	struct out a[16];
	unsigned int k;

	(void)state;
	backlog(s, 150, T0);         /* 181 ms of link time */
	for (uint32_t i = 0; i < 100; i++) {
		put_ack(s, DN_PORT, 10000 + 1448 * i, T0 + i * MS);
		run(s, T0 + i * MS + 500 * US, T0 + i * MS + 500 * US, 1);
	}
	run(s, T0 + 100 * MS, T0 + 300 * MS, 100 * US);
	assert_int_equal(aqm_sched_pending(s), 0);
	/*
	 * An ACK arrives every 1 ms for 100 ms. Some leave, the newest last,
	 * and never more than the hold (plus the wait for the link: two
	 * frames, and a dequeue call every 1 ms) after the one before: a
	 * hold ends at its deadline, and an ACK that replaces a released one
	 * in the queue is not held again.
	 */
	k = acks_out(DN_PORT, a, RTE_DIM(a));
	assert_true(k >= 5 && k <= 10);
	assert_int_equal(a[k - 1].ack, 10000 + 1448 * 99);
	for (uint32_t i = 0; i < k; i++) {
		uint64_t prev = i == 0 ? T0 : a[i - 1].at;

		assert_true(a[i].at - prev <= HOLD + 2 * FRAME_NS + 1 * MS);
		assert_true(a[i].at - a[i].enq <= 2 * FRAME_NS + 1 * MS);
	}
	st = stats(s, 0);
	assert_true(st.ack_held >= 90);
	assert_int_equal(st.ack_filtered, 100 - k);
	check_conservation(s);
	aqm_sched_free(s);
}

static void
test_no_hold_on_an_idle_lightly_loaded_or_unshaped_pipe(void **state)
{
	struct aqm_sched *s = hold_sched(RATE, HOLD, 1024, 0);
	struct aqm_sched *u = hold_sched(0, HOLD, 1024, 0);
	struct rte_mbuf *m, *o[1];
	uint32_t pipe = 1;

	(void)state;
	/* Idle: queued at once, and sent by the next dequeue. */
	put_ack(s, DN_PORT, 10000, T0);
	assert_int_equal(stats(s, 0).ack_held, 0);
	run(s, T0, T0, 1);
	assert_int_equal(nout, 1);
	assert_int_equal(outs[0].at, T0);
	/* The bypass sends it without queueing. */
	m = seg_pkt(DN_PORT, 11448, 0);
	assert_int_equal(aqm_sched_enqueue_bypass_burst(s, &pipe, &m, 1, T0 + 10 * MS, o), 1);
	rte_pktmbuf_free(o[0]);
	assert_int_equal(stats(s, 1).bypassed, 1);
	/* Less than a quantum queued: the link is not the bottleneck. */
	put(s, 0, seg_pkt(UP_PORT, 1, 1000), T0 + 20 * MS);
	put_ack(s, DN_PORT, 12896, T0 + 20 * MS);
	assert_int_equal(stats(s, 0).ack_held, 0);
	/* A full quantum queued: held, unless it replaces a queued ACK,
	 * whose place in the queue it takes. */
	put(s, 0, seg_pkt(UP_PORT, 1, 1000), T0 + 20 * MS);
	put_ack(s, DN_PORT, 14344, T0 + 20 * MS);
	assert_int_equal(stats(s, 0).ack_held, 0);
	assert_int_equal(stats(s, 0).ack_filtered, 1);
	put_ack(s, DN_PORT + 1, 14344, T0 + 20 * MS);
	assert_int_equal(stats(s, 0).ack_held, 1);
	check_conservation(s);
	/* Unshaped: a backlog never lasts, so nothing is held. */
	backlog(u, 10, T0);
	put_ack(u, DN_PORT, 10000, T0);
	assert_int_equal(stats(u, 0).ack_held, 0);
	assert_int_equal(aqm_sched_pending(u), 11);
	aqm_sched_free(s);
	aqm_sched_free(u);
}

static void
test_a_held_ack_goes_before_any_later_packet_of_its_flow(void **state)
{
	struct aqm_sched *s = hold_sched(RATE, HOLD, 1024, 0);
	struct aqm_pipe_stats st;
	struct rte_mbuf *m, *o[1];
	uint32_t pipe = 0;
	uint32_t first_ts = clock_ts;

	(void)state;
	backlog(s, 20, T0);
	first_ts = clock_ts;
	put_ack(s, DN_PORT, 10000, T0 + 1 * MS);          /* A1: held */
	put(s, 0, seg_pkt(DN_PORT, 10000, 500), T0 + 2 * MS); /* data: A1 goes first */
	put_ack(s, DN_PORT, 11448, T0 + 3 * MS);          /* A2: held */
	put_ack(s, DN_PORT, 11448, T0 + 4 * MS);          /* duplicate: A2 first, dup held */
	st = stats(s, 0);
	assert_int_equal(st.ack_held, 3);
	assert_int_equal(st.held_pkts, 1);
	assert_int_equal(st.ack_filtered, 0);
	/* Data through the bypass entry point: not ahead of the held dup. */
	m = seg_pkt(DN_PORT, 11448, 300);
	assert_int_equal(aqm_sched_enqueue_bypass_burst(s, &pipe, &m, 1, T0 + 5 * MS, o), 0);
	assert_int_equal(stats(s, 0).held_pkts, 0);
	check_conservation(s);
	run(s, T0, T0 + 100 * MS, 100 * US);
	assert_int_equal(aqm_sched_pending(s), 0);
	{
		uint32_t want[5] = { first_ts, first_ts + 1, first_ts + 2,
				     first_ts + 3, first_ts + 4 };
		unsigned int k = 0;

		for (unsigned int i = 0; i < nout; i++)
			if (outs[i].sport == DN_PORT) {
				assert_true(k < 5);
				assert_int_equal(outs[i].tsval, want[k]);
				k++;
			}
		assert_int_equal(k, 5);
	}
	/* A1 and A2 joined the queue when the next packet came. */
	for (unsigned int i = 0; i < nout; i++)
		if (outs[i].sport == DN_PORT && outs[i].tsval == first_ts)
			assert_int_equal(outs[i].enq, T0 + 2 * MS);
	aqm_sched_free(s);
}

static void
test_an_emptied_queue_releases_the_held_acks_at_once(void **state)
{
	struct aqm_sched *s = hold_sched(RATE, HOLD, 1024, 0);
	struct out a[4];

	(void)state;
	backlog(s, 2, T0);
	run(s, T0, T0, 1);                 /* one frame leaves, one queued */
	put_ack(s, DN_PORT, 10000, T0 + 100 * US);
	put_ack(s, DN_PORT + 1, 50000, T0 + 100 * US);
	assert_int_equal(stats(s, 0).held_pkts, 2);
	run(s, T0 + 100 * US, T0 + 10 * MS, 100 * US);
	assert_int_equal(aqm_sched_pending(s), 0);
	/* The second frame leaves at T0 + 1 frame time, emptying the queue:
	 * both ACKs go at the next frame boundary, not at the deadline. */
	assert_int_equal(acks_out(DN_PORT, a, RTE_DIM(a)), 1);
	assert_true(a[0].at <= T0 + 2 * FRAME_NS + 100 * US);
	assert_int_equal(acks_out(DN_PORT + 1, a, RTE_DIM(a)), 1);
	assert_true(a[0].at <= T0 + 3 * FRAME_NS + 100 * US);
	check_conservation(s);
	aqm_sched_free(s);
}

/* The same when the table holds more entries than the pipe has flows, so
 * that the release walks the pipe's flows instead of the table. */
static void
test_an_emptied_queue_releases_them_with_a_long_table_too(void **state)
{
	struct aqm_sched_params sp;
	struct aqm_pipe_params pp;
	struct aqm_sched *s;
	struct out a[4];

	(void)state;
	aqm_sched_params_default(&sp);
	sp.max_pipes = 2;
	sp.max_flows = 8;
	sp.ack_hold_ns = HOLD;
	s = aqm_sched_create(&sp);
	assert_non_null(s);
	aqm_pipe_params_default(&pp);
	pp.shaper.rate_bps = RATE;
	pp.fq.flows = 4;
	pp.fq.ack_filter = true;
	assert_int_equal(aqm_sched_pipe_add(s, &pp), 0);
	assert_int_equal(aqm_sched_pipe_add(s, &pp), 1);
	nout = 0;
	/* Pipe 1: backlogged, six connections' ACKs into the table. */
	for (unsigned int i = 0; i < 10; i++)
		put(s, 1, seg_pkt(UP_PORT, 1, 1448), T0);
	for (uint16_t c = 0; c < 6; c++)
		put(s, 1, seg_pkt((uint16_t)(DN_PORT + 10 + c), 1000, 0), T0);
	assert_true(stats(s, 1).ack_held >= 6);
	/* Pipe 0: one frame queued behind the one leaving, one ACK held. */
	backlog(s, 2, T0);
	run(s, T0, T0, 1);
	nout = 0;
	put_ack(s, DN_PORT, 10000, T0 + 100 * US);
	assert_int_equal(stats(s, 0).held_pkts, 1);
	run(s, T0 + 100 * US, T0 + 10 * MS, 100 * US);
	assert_int_equal(acks_out(DN_PORT, a, RTE_DIM(a)), 1);
	assert_true(a[0].at <= T0 + 2 * FRAME_NS + 100 * US);
	assert_int_equal(stats(s, 0).held_pkts, 0);
	check_conservation(s);
	aqm_sched_free(s);
}

static void
test_flush_releases_everything_queued_first_then_held(void **state)
{
	struct aqm_sched *s = hold_sched(RATE, HOLD, 1024, 0);
	unsigned int avail = rte_mempool_avail_count(test_pool);
	struct rte_mbuf *pk[4];
	unsigned int total = 0, acks = 0;
	uint16_t n;

	(void)state;
	backlog(s, 10, T0);
	for (uint16_t c = 0; c < 3; c++)
		put_ack(s, (uint16_t)(DN_PORT + c), 10000, T0 + c);
	assert_int_equal(stats(s, 0).held_pkts, 3);
	assert_int_equal(aqm_sched_pending(s), 13);
	/* Small bursts: the boundary between queue and hold falls inside one. */
	while ((n = aqm_sched_flush_burst(s, pk, RTE_DIM(pk))) > 0) {
		for (uint16_t i = 0; i < n; i++) {
			const uint8_t *t = rte_pktmbuf_mtod(pk[i], const uint8_t *) +
					   pkt_meta(pk[i])->l4_off;
			uint16_t sport = (uint16_t)(t[0] << 8 | t[1]);

			if (sport == UP_PORT) {
				assert_int_equal(acks, 0); /* data first */
			} else {
				assert_int_equal(sport, DN_PORT + acks);
				acks++;
			}
			total++;
			rte_pktmbuf_free(pk[i]);
		}
	}
	assert_int_equal(total, 13);
	assert_int_equal(acks, 3);
	assert_int_equal(aqm_sched_pending(s), 0);
	assert_int_equal(stats(s, 0).held_pkts, 0);
	/* The scheduler works on after a flush: hold, release, send. */
	backlog(s, 3, T0 + 1000 * MS);
	put_ack(s, DN_PORT, 20000, T0 + 1000 * MS);
	assert_int_equal(stats(s, 0).held_pkts, 1);
	run(s, T0 + 1000 * MS, T0 + 1100 * MS, 100 * US);
	assert_int_equal(aqm_sched_pending(s), 0);
	assert_int_equal(nout, 4);
	/* Freeing a scheduler with held ACKs frees them too. */
	backlog(s, 3, T0 + 2000 * MS);
	put_ack(s, DN_PORT, 30000, T0 + 2000 * MS);
	assert_int_equal(stats(s, 0).held_pkts, 1);
	aqm_sched_free(s);
	assert_int_equal(rte_mempool_avail_count(test_pool), avail);
}

/*
 * Removing a pipe with queued data and held ACKs: the next dequeue hands
 * them all out at once, the data first and then the ACKs, in order; the
 * other pipe's queue is untouched and still shaped; nothing leaks; the
 * removed pipe can be given new parameters and used again.
 */
static void
test_removing_a_pipe_sends_its_queue_then_its_held_acks_and_leaves_the_other_pipe_alone(void **state)
{
	struct aqm_sched *s = hold_sched(RATE, HOLD, 1024, 0);
	unsigned int avail = rte_mempool_avail_count(test_pool);
	struct aqm_pipe_params pp;
	struct aqm_removed_stats rs;
	struct rte_mbuf *pk[32];
	uint16_t n;

	(void)state;
	backlog(s, 10, T0);
	for (uint16_t c = 0; c < 3; c++)
		put_ack(s, (uint16_t)(DN_PORT + c), 10000, T0 + c);
	for (int i = 0; i < 6; i++)
		put(s, 1, seg_pkt(UP_PORT + 1, 1, 1448), T0);
	assert_int_equal(stats(s, 0).held_pkts, 3);
	assert_int_equal(aqm_sched_pending(s), 19);
	assert_int_equal(aqm_sched_pipe_remove(s, 0), 13);
	assert_false(aqm_sched_pipe_live(s, 0));
	assert_int_equal(aqm_sched_pipe_remove(s, 0), -EINVAL);
	assert_int_equal(aqm_sched_pending(s), 19);
	n = aqm_sched_dequeue_burst(s, pk, 13, T0);
	assert_int_equal(n, 13);
	record(pk, n, T0);
	for (unsigned int i = 0; i < 10; i++)
		assert_int_equal(outs[i].sport, UP_PORT);
	for (unsigned int i = 0; i < 3; i++) {
		assert_int_equal(outs[10 + i].sport, DN_PORT + i);
		assert_int_equal(outs[10 + i].payload, 0);
	}
	aqm_sched_removed_stats(s, &rs);
	assert_int_equal(rs.moved_pkts, 13);
	assert_int_equal(rs.sent_pkts, 13);
	/* Pipe 1 still shaped: 6 x 1514 B take about 1.2 ms each at RATE. */
	run(s, T0, T0 + 200 * MS, 100 * US);
	assert_int_equal(nout, 19);
	for (unsigned int i = 13; i < 19; i++)
		assert_int_equal(outs[i].sport, UP_PORT + 1);
	assert_true(outs[18].at > outs[13].at);
	assert_int_equal(aqm_sched_pending(s), 0);
	/* Used again, with new parameters and fresh counters. */
	aqm_pipe_params_default(&pp);
	pp.shaper.rate_bps = RATE;
	pp.fq.flows = 512;
	assert_int_equal(aqm_sched_pipe_reuse(s, 0, &pp), -EINVAL); /* other flow count */
	pp.fq.flows = 1024;
	assert_int_equal(aqm_sched_pipe_reuse(s, 0, &pp), 0);
	assert_int_equal(stats(s, 0).enq_pkts, 0);
	backlog(s, 2, T0 + 300 * MS);
	run(s, T0 + 300 * MS, T0 + 400 * MS, 100 * US);
	assert_int_equal(nout, 21);
	aqm_sched_free(s);
	assert_int_equal(rte_mempool_avail_count(test_pool), avail);
}

static void
test_limits_hold_with_acks_in_the_hold(void **state)
{
	/* A 4-entry table and a scheduler cap of 8 packets, held included. */
	struct aqm_sched *s = hold_sched(RATE, HOLD, 4, 8);
	unsigned int avail = rte_mempool_avail_count(test_pool);
	struct aqm_pipe_stats st;

	(void)state;
	backlog(s, 3, T0);
	for (uint16_t c = 0; c < 6; c++) {
		put_ack(s, (uint16_t)(DN_PORT + c), 10000, T0 + c);
		assert_true(aqm_sched_pending(s) <= 8);
	}
	/* Four held (the table is full), the other two queued at once; the
	 * second of those passes the cap of 8 (3 data + 4 held + 2), and
	 * the fattest flow, the data, loses half its bytes. */
	st = stats(s, 0);
	assert_int_equal(st.ack_held, 4);
	assert_int_equal(st.held_pkts, 4);
	assert_int_equal(st.drops[AQM_DROP_MEMORY], 2);
	assert_int_equal(st.backlog_pkts, 3);
	assert_int_equal(aqm_sched_pending(s), 7);
	check_conservation(s);
	/* Newer ACKs still replace held ones in a full table. */
	put_ack(s, DN_PORT, 11448, T0 + 10);
	st = stats(s, 0);
	assert_int_equal(st.ack_held, 5);
	assert_int_equal(st.ack_filtered, 1);
	assert_true(aqm_sched_pending(s) <= 8);
	run(s, T0, T0 + 200 * MS, 100 * US);
	assert_int_equal(aqm_sched_pending(s), 0);
	check_conservation(s);
	aqm_sched_free(s);
	assert_int_equal(rte_mempool_avail_count(test_pool), avail);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint32_t
rng(void)
{
	return test_rng(&rng_state);
}

/*
 * Random traffic of 8 connections (data, pure ACKs, duplicates) through
 * 4-flow pipes (so connections share flow queues), dequeues at random
 * instants, a small table and a scheduler cap: every connection's packets
 * leave in arrival order, every packet joins its queue within the hold of
 * its arrival, and the counters account for every packet.
 */
static void
test_random_traffic_keeps_order_and_accounts_for_everything(void **state)
{
	struct aqm_sched_params sp;
	struct aqm_pipe_params pp;
	struct aqm_sched *s;
	unsigned int avail = rte_mempool_avail_count(test_pool);
	uint32_t acked[8] = { 0 }, last_ts[8] = { 0 };
	static uint64_t arrived[8192]; /* by TSval */
	uint64_t now = T0;

	(void)state;
	aqm_sched_params_default(&sp);
	sp.max_pipes = 2;
	sp.max_flows = 8;
	sp.ack_hold_ns = HOLD;
	sp.ack_hold_slots = 8;
	sp.limit_pkts = 300;
	s = aqm_sched_create(&sp);
	assert_non_null(s);
	aqm_pipe_params_default(&pp);
	pp.shaper.rate_bps = 2000000;
	pp.fq.flows = 4;
	pp.fq.ack_filter = true;
	assert_int_equal(aqm_sched_pipe_add(s, &pp), 0);
	assert_int_equal(aqm_sched_pipe_add(s, &pp), 1);
	nout = 0;
	clock_ts = 1;
	for (int step = 0; step < 4000; step++) {
		uint32_t r = rng(), c = r & 7;
		uint32_t pipe = c & 1; /* a connection stays in one pipe */
		struct rte_mbuf *m;

		now += (r >> 4) % (2 * MS);
		assert_true(clock_ts < RTE_DIM(arrived));
		arrived[clock_ts] = now;
		if ((r >> 24) % 4 == 0) {
			m = seg_pkt((uint16_t)(DN_PORT + c), acked[c], (uint16_t)(100 + (r >> 8) % 1300));
		} else {
			if ((r >> 26) % 8 != 0) /* else a duplicate */
				acked[c] += 1448;
			m = seg_pkt((uint16_t)(DN_PORT + c), acked[c], 0);
		}
		if ((r >> 29) & 1) {
			struct rte_mbuf *o[1];
			uint16_t k = aqm_sched_enqueue_bypass_burst(s, &pipe, &m, 1, now, o);

			if (k == 1)
				pkt_meta(o[0])->enq_ns = now; /* never queued */
			record(o, k, now);
		} else {
			aqm_sched_pipe_enqueue_burst(s, pipe, &m, 1, now);
		}
		assert_true(aqm_sched_pending(s) <= 300);
		if ((r >> 30) & 1)
			run(s, now, now, 1);
		check_conservation(s);
	}
	run(s, now, now + 2000 * MS, 500 * US);
	assert_int_equal(aqm_sched_pending(s), 0);
	check_conservation(s);
	/* Arrival order (TSval) per connection, and a bounded wait. */
	for (unsigned int i = 0; i < nout; i++) {
		uint32_t c = outs[i].sport - DN_PORT;

		assert_true(c < 8);
		assert_true(outs[i].tsval > last_ts[c]);
		last_ts[c] = outs[i].tsval;
		/* Queued at its arrival, or at most the hold after it. */
		assert_true(outs[i].enq >= arrived[outs[i].tsval]);
		assert_true(outs[i].enq <= arrived[outs[i].tsval] + HOLD);
	}
	{
		struct aqm_pipe_stats a = stats(s, 0), b = stats(s, 1);

		assert_true(a.ack_held + b.ack_held > 100);
		assert_true(a.ack_filtered + b.ack_filtered > 50);
		assert_int_equal(a.held_pkts + b.held_pkts, 0);
	}
	aqm_sched_free(s);
	assert_int_equal(rte_mempool_avail_count(test_pool), avail);
}

static void
test_a_hold_of_zero_or_a_bad_table_size(void **state)
{
	struct aqm_sched_params sp;
	struct aqm_sched *s;

	(void)state;
	aqm_sched_params_default(&sp);
	assert_int_equal(sp.ack_hold_ns, 0);
	sp.ack_hold_ns = HOLD;
	sp.ack_hold_slots = 1000;   /* not a power of two */
	assert_null(aqm_sched_create(&sp));
	sp.ack_hold_slots = AQM_ACK_HOLD_SLOTS_MAX * 2;
	assert_null(aqm_sched_create(&sp));
	/* Off: the filter works as before, nothing is held. */
	s = hold_sched(RATE, 0, 1024, 0);
	backlog(s, 10, T0);
	for (uint32_t i = 0; i < 3; i++)
		put_ack(s, DN_PORT, 10000 + 1448 * i, T0 + i);
	assert_int_equal(stats(s, 0).ack_held, 0);
	assert_int_equal(stats(s, 0).ack_filtered, 2);
	aqm_sched_free(s);
}

/*
 * aqm_sched_ack_hold_ns() tells the window clamp how long the ACKs of a
 * pipe are held back: where an ACK entering now would be held (the same
 * test as the hold's), the time the hold lately kept a connection's slot,
 * averaged over the slots it released (1/8 each); 0 elsewhere.
 */
static void
test_ack_hold_ns_is_how_long_the_hold_lately_kept_a_slot(void **state)
{
	struct aqm_sched *s = hold_sched(RATE, HOLD, 1024, 0);
	struct aqm_sched *u = hold_sched(0, HOLD, 1024, 0);
	struct aqm_sched *z = hold_sched(RATE, 0, 1024, 0);
	const uint64_t t1 = T0 + 5 * MS;
	uint64_t avg = HOLD;

	(void)state;
	/* Idle, then less than a quantum queued: not held, 0. */
	assert_int_equal(aqm_sched_ack_hold_ns(s, 0), 0);
	put(s, 0, seg_pkt(UP_PORT, 1, 1000), T0);
	assert_int_equal(aqm_sched_ack_hold_ns(s, 0), 0);
	put_ack(s, DN_PORT, 10000, T0);
	assert_int_equal(stats(s, 0).ack_held, 0);
	/* A quantum queued: the next ACK is held, and until a slot has been
	 * released the pipe reads the whole hold. */
	put(s, 0, seg_pkt(UP_PORT, 1, 1000), T0);
	assert_int_equal(aqm_sched_ack_hold_ns(s, 0), HOLD);
	put_ack(s, DN_PORT + 1, 10000, T0);
	assert_int_equal(stats(s, 0).ack_held, 1);
	/* Data of the held ACK's connection releases it 3 ms on: the
	 * average moves an eighth of the way to 3 ms. */
	put(s, 0, seg_pkt(DN_PORT + 1, 10000, 500), T0 + 3 * MS);
	assert_int_equal(stats(s, 0).held_pkts, 0);
	avg = avg - avg / 8 + 3 * MS / 8;
	assert_int_equal(aqm_sched_ack_hold_ns(s, 0), avg);
	/* The other pipe is idle; an unknown pipe has none. */
	assert_int_equal(aqm_sched_ack_hold_ns(s, 1), 0);
	assert_int_equal(aqm_sched_ack_hold_ns(s, 99), 0);
	/* The queue runs empty: nothing is held back any more. */
	run(s, T0 + 3 * MS, t1, 100 * US);
	assert_int_equal(aqm_sched_pending(s), 0);
	assert_int_equal(aqm_sched_ack_hold_ns(s, 0), 0);
	/* A pipe busy for longer than the hold: the ACK waits it out, and
	 * the average moves an eighth of the way back to the whole hold. */
	backlog(s, 30, t1);
	put_ack(s, DN_PORT + 2, 10000, t1);
	assert_int_equal(stats(s, 0).held_pkts, 1);
	run(s, t1, t1 + HOLD + MS, 100 * US);
	assert_int_equal(stats(s, 0).held_pkts, 0);
	avg = avg - avg / 8 + HOLD / 8;
	assert_int_equal(aqm_sched_ack_hold_ns(s, 0), avg);
	run(s, t1 + HOLD + MS, t1 + 60 * MS, 100 * US);
	assert_int_equal(aqm_sched_pending(s), 0);
	assert_int_equal(aqm_sched_ack_hold_ns(s, 0), 0);
	check_conservation(s);
	/* Unshaped, or no hold: 0 whatever is queued. */
	backlog(u, 10, T0);
	backlog(z, 10, T0);
	assert_int_equal(aqm_sched_ack_hold_ns(u, 0), 0);
	assert_int_equal(aqm_sched_ack_hold_ns(z, 0), 0);
	/* The pipe's rate, for the clamp's cap: 10 Mbit/s in bytes/s. */
	assert_int_equal(aqm_sched_pipe_rate_Bps(s, 0), RATE / 8);
	assert_int_equal(aqm_sched_pipe_rate_Bps(u, 0), 0);
	assert_int_equal(aqm_sched_pipe_rate_Bps(s, 99), 0);
	run(u, T0, T0, 1);
	run(z, T0, T0 + 20 * MS, 100 * US);
	aqm_sched_free(s);
	aqm_sched_free(u);
	aqm_sched_free(z);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_acks_within_the_hold_leave_as_one_the_newest_at_the_deadline),
		cmocka_unit_test(test_replacement_never_extends_the_deadline),
		cmocka_unit_test(test_no_hold_on_an_idle_lightly_loaded_or_unshaped_pipe),
		cmocka_unit_test(test_a_held_ack_goes_before_any_later_packet_of_its_flow),
		cmocka_unit_test(test_an_emptied_queue_releases_the_held_acks_at_once),
		cmocka_unit_test(test_an_emptied_queue_releases_them_with_a_long_table_too),
		cmocka_unit_test(test_flush_releases_everything_queued_first_then_held),
		cmocka_unit_test(test_removing_a_pipe_sends_its_queue_then_its_held_acks_and_leaves_the_other_pipe_alone),
		cmocka_unit_test(test_limits_hold_with_acks_in_the_hold),
		cmocka_unit_test(test_random_traffic_keeps_order_and_accounts_for_everything),
		cmocka_unit_test(test_a_hold_of_zero_or_a_bad_table_size),
		cmocka_unit_test(test_ack_hold_ns_is_how_long_the_hold_lately_kept_a_slot),
	};

	if (test_eal_init("hold", 8192, 64) < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
