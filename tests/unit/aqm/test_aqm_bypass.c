/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * aqm_sched_enqueue_bypass_burst() against aqm_sched_enqueue_burst(): the
 * same random traffic, on the same virtual clock, through two schedulers
 * built alike, one queueing everything and one letting idle pipes send at
 * once. Every pipe must send the same packets, at the same instants, in the
 * same order, with the same CE marks, and drop and count the same; only
 * the `bypassed` counter may differ.
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
#define NPIPES 8
#define NFLOWS 5
#define MAX_OUT 100000

/* One packet as it left: which, when, and its TOS byte (CE marks). */
struct departure {
	uint32_t seq;
	uint32_t flow;
	uint64_t at;
	uint8_t tos;
};

struct run {
	struct aqm_sched *s;
	struct departure out[NPIPES][MAX_OUT];
	uint32_t nout[NPIPES];
};

static struct run run_a, run_b;
static uint64_t arrivals[NPIPES];
/* With the ACK filter and hold on some pipes, whose last flow then
 * carries pure ACKs; what they did, summed over the bypass run. */
static bool with_hold;
static uint64_t held_total, filtered_total, blue_total;

static bool
acks_on(uint32_t pipe)
{
	return with_hold && (pipe == 1 || pipe == 2 || pipe == 3 || pipe == 6 ||
			     pipe == 7);
}

static uint64_t rng_state;

static uint32_t
rng(void)
{
	return test_rng(&rng_state);
}

/* Pipe i: a mix of what [aqm] can build. */
static void
pipe_params(uint32_t i, struct aqm_pipe_params *pp)
{
	aqm_pipe_params_default(pp);
	pp->fq.seed = 0x1234567u + i;
	pp->fq.flows = 16;
	pp->fq.limit_pkts = 200; /* bounds the mbufs both runs hold */
	switch (i) {
	case 0: /* unshaped */
		break;
	case 1: /* shaped, the bulk of the traffic: CoDel acts, and BLUE */
		pp->shaper.rate_bps = 20000000;
		pp->fq.blue.threshold_ns = 2 * MS;
		pp->fq.blue.interval_ns = 1 * MS;
		pp->fq.blue.inc = 4096;
		pp->fq.blue.dec = 1024;
		pp->fq.isolation = AQM_ISO_TRIPLE; /* all flows share a dst host */
		pp->fq.diffserv = AQM_DIFFSERV_4;  /* flows' DSCPs pick 4 tins */
		pp->wash = true;
		break;
	case 2: /* ECN, and a CE threshold */
		pp->shaper.rate_bps = 5000000;
		pp->fq.isolation = AQM_ISO_DSTHOST;
		pp->fq.diffserv = AQM_DIFFSERV_3;
		pp->fq.codel.ecn = true;
		pp->fq.codel.ce_threshold_ns = 1 * MS;
		break;
	case 3: /* a tiny packet limit: overflow drops from the fattest,
		 * and raises its BLUE probability */
		pp->shaper.rate_bps = 2000000;
		pp->fq.limit_pkts = 6;
		pp->fq.drop_batch = 2;
		pp->fq.blue.threshold_ns = 400 * MS;
		pp->fq.blue.interval_ns = 10 * MS;
		pp->fq.blue.inc = 1024;
		pp->fq.blue.dec = 64;
		break;
	case 4: /* a FIFO smaller than the largest frame */
		pp->qdisc = AQM_QDISC_FIFO;
		pp->shaper.rate_bps = 3000000;
		pp->fifo_limit_bytes = 1200;
		break;
	case 5: /* a bloated FIFO */
		pp->qdisc = AQM_QDISC_FIFO;
		pp->shaper.rate_bps = 1000000;
		pp->fifo_limit_ms = 200;
		break;
	case 6: /* ATM framing, and a memory limit of a few mbufs */
		pp->shaper.rate_bps = 4000000;
		assert_int_equal(aqm_shaper_profile("adsl-pppoe", &pp->shaper), 0);
		pp->fq.memory_limit = 3 * 2500;
		pp->fq.isolation = AQM_ISO_SRCHOST;
		break;
	default: /* fast, rarely holds anything */
		pp->shaper.rate_bps = 1000000000;
		break;
	}
}

static struct aqm_sched *
make_sched(uint32_t limit_pkts)
{
	struct aqm_sched_params sp;
	struct aqm_pipe_params pp;
	struct aqm_sched *s;

	aqm_sched_params_default(&sp);
	sp.max_pipes = NPIPES;
	sp.max_flows = NPIPES * 16;
	sp.limit_pkts = limit_pkts;
	sp.max_lag_ns = 250 * US;
	sp.ack_hold_ns = with_hold ? 3 * MS : 0;
	sp.isolation = true; /* pipes 1, 2 and 6 isolate hosts */
	sp.diffserv = true;  /* pipes 1 and 2 have tins */
	s = aqm_sched_create(&sp);
	assert_non_null(s);
	for (uint32_t i = 0; i < NPIPES; i++) {
		pipe_params(i, &pp);
		pp.fq.ack_filter = acks_on(i);
		/* Near its offered load: now idle (bypass), now backlogged (hold). */
		if (with_hold && i == 7)
			pp.shaper.rate_bps = 30000000;
		assert_int_equal(aqm_sched_pipe_add(s, &pp), (int)i);
	}
	return s;
}

/* Packet seq of flow `flow` in pipe `pipe`: the pipe, the flow and the
 * sequence number ride in the source MAC address, which no part of
 * lib/aqm reads. With the hold, the last flow of a pipe with the ACK
 * filter is a TCP connection's pure ACKs (cumulative ACK ackno). */
static struct rte_mbuf *
make_pkt(uint32_t pipe, uint32_t flow, uint16_t len, uint8_t tos, uint32_t seq,
	 uint32_t ackno)
{
	struct rte_mbuf *m;
	uint8_t *d;

	if (acks_on(pipe) && flow == NFLOWS - 1) {
		struct seg g = ack(ackno, seq);

		g.sport = (uint16_t)(40000 + pipe);
		m = mk(&g);
	} else {
		m = test_pkt4(flow | pipe << 8, len, tos);
	}
	assert_non_null(m);
	d = rte_pktmbuf_mtod(m, uint8_t *);
	d[6] = (uint8_t)pipe;
	d[7] = (uint8_t)flow;
	memcpy(d + 8, &seq, 4);
	return m;
}

static void
record(struct run *r, struct rte_mbuf *m, uint64_t now)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t pipe = d[6];
	struct departure *dp;

	assert_true(pipe < NPIPES);
	assert_true(r->nout[pipe] < MAX_OUT);
	dp = &r->out[pipe][r->nout[pipe]++];
	memcpy(&dp->seq, d + 8, 4);
	dp->flow = d[7];
	dp->at = now;
	dp->tos = d[15];
	rte_pktmbuf_free(m);
}

static void
drain(struct run *r, uint64_t now)
{
	struct rte_mbuf *out[64];
	uint16_t n;

	/* Until nothing due is left: a capped dequeue would make pipes wait
	 * a turn that the bypass does not. */
	do {
		n = aqm_sched_dequeue_burst(r->s, out, RTE_DIM(out), now);
		for (uint16_t i = 0; i < n; i++)
			record(r, out[i], now);
	} while (n == RTE_DIM(out));
}

/* The departures of one flow of one pipe, in order, into f[]. */
static uint32_t
flow_departures(const struct run *r, uint32_t pipe, uint32_t flow,
		struct departure *f)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < r->nout[pipe]; i++)
		if (r->out[pipe][i].flow == flow)
			f[n++] = r->out[pipe][i];
	return n;
}

static struct departure fb[MAX_OUT];

static void
compare_runs(uint64_t *bypassed)
{
	struct aqm_pipe_stats a, b;

	*bypassed = 0;
	for (uint32_t p = 0; p < NPIPES; p++) {
		assert_int_equal(aqm_sched_pipe_stats(run_a.s, p, &a), 0);
		assert_int_equal(aqm_sched_pipe_stats(run_b.s, p, &b), 0);
		if (run_a.nout[p] != run_b.nout[p])
			fail_msg("pipe %u: sent %u/%u enq %llu/%llu drops %llu/%llu %llu/%llu %llu/%llu", p,
				 run_a.nout[p], run_b.nout[p],
				 (unsigned long long)a.enq_pkts, (unsigned long long)b.enq_pkts,
				 (unsigned long long)a.drops[0], (unsigned long long)b.drops[0],
				 (unsigned long long)a.drops[1], (unsigned long long)b.drops[1],
				 (unsigned long long)a.drops[2], (unsigned long long)b.drops[2]);
		for (uint32_t i = 0; i < run_a.nout[p]; i++) {
			const struct departure *x = &run_a.out[p][i];
			const struct departure *y = &run_b.out[p][i];

			if (x->seq != y->seq || x->at != y->at || x->tos != y->tos)
				fail_msg("pipe %u departure %u: seq %u/%u at %llu/%llu tos %#x/%#x",
					 p, i, x->seq, y->seq,
					 (unsigned long long)x->at,
					 (unsigned long long)y->at, x->tos, y->tos);
		}
		assert_int_equal(a.bypassed, 0);
		*bypassed += b.bypassed;
		held_total += b.ack_held;
		filtered_total += b.ack_filtered;
		blue_total += b.drops[AQM_DROP_BLUE];
		{
			struct aqm_tin_stats ta[AQM_TINS_MAX], tb[AQM_TINS_MAX];
			int na = aqm_sched_pipe_tin_stats(run_a.s, p, ta);

			assert_int_equal(na, aqm_sched_pipe_tin_stats(run_b.s, p, tb));
			if (na > 0 && memcmp(ta, tb, (size_t)na * sizeof(ta[0])) != 0)
				fail_msg("pipe %u: tin counters differ", p);
		}
		b.bypassed = 0;
		if (memcmp(&a, &b, sizeof(a)) != 0)
			fail_msg("pipe %u: counters differ (enq %llu/%llu tx %llu/%llu)", p,
				 (unsigned long long)a.enq_pkts, (unsigned long long)b.enq_pkts,
				 (unsigned long long)a.tx_pkts, (unsigned long long)b.tx_pkts);
	}
	assert_int_equal(aqm_sched_pending(run_a.s), aqm_sched_pending(run_b.s));
}

/*
 * With a limit on all pipes together, the two differ on purpose: a packet
 * that queues for an instant counts against the limit, a bypassed one
 * never does. Check what must still hold for the bypass run: the limit,
 * every packet accounted for, and each flow in order.
 */
static void
check_bypass_run(uint32_t limit_pkts, uint64_t *bypassed)
{
	struct aqm_pipe_stats b;

	*bypassed = 0;
	for (uint32_t p = 0; p < NPIPES; p++) {
		uint64_t dropped = 0;

		assert_int_equal(aqm_sched_pipe_stats(run_b.s, p, &b), 0);
		for (int r = 0; r < AQM_DROP_MAX; r++)
			dropped += b.drops[r];
		/* (a FIFO counts what it refuses as dropped, not enqueued) */
		assert_int_equal(arrivals[p], b.tx_pkts + dropped + b.ack_filtered +
				 b.backlog_pkts + b.held_pkts);
		assert_int_equal(b.tx_pkts, run_b.nout[p]);
		*bypassed += b.bypassed;
		for (uint32_t fl = 0; fl < NFLOWS; fl++) {
			uint32_t n = flow_departures(&run_b, p, fl, fb);

			for (uint32_t i = 1; i < n; i++)
				assert_true(fb[i].seq > fb[i - 1].seq);
		}
	}
	assert_true(aqm_sched_pending(run_b.s) <= limit_pkts);
}

/*
 * Random bursts every 20-400 us for 3 virtual seconds (now and then a
 * stall of several ms, as when the lcore is preempted), packets of 64 to
 * 1514 bytes over 8 pipes and 40 flows, half of them ECT(0); rates change
 * twice on the way.
 */
static void
run_both(uint64_t seed, uint32_t limit_pkts, uint64_t *bypassed)
{
	uint64_t now = T0;
	uint32_t seq = 0, acked[NPIPES] = { 0 };

	memset(&run_a.nout, 0, sizeof(run_a.nout));
	memset(&run_b.nout, 0, sizeof(run_b.nout));
	memset(arrivals, 0, sizeof(arrivals));
	run_a.s = make_sched(limit_pkts);
	run_b.s = make_sched(limit_pkts);
	rng_state = seed;
	while (now < T0 + 3000 * MS) {
		struct rte_mbuf *a[48], *b[48], *sent[48];
		uint32_t pipes[48];
		uint16_t n = (uint16_t)(rng() % 24), nb;
		uint32_t gap = rng() % 100 == 0 ? 2000 + rng() % 8000 : 20 + rng() % 380;

		now += gap * US;
		for (uint16_t i = 0; i < n; i++) {
			/* pipe 1 gets half the packets, so it backs up */
			uint32_t pipe = rng() % 2 ? 1 : rng() % NPIPES;
			uint32_t flow = rng() % NFLOWS;
			uint16_t len = (uint16_t)(rng() % 3 ? 1514 : 64 + rng() % 1450);
			uint8_t tos = rng() % 2 ? 0x02 : 0x00;
			/* A DSCP per flow: Best Effort, CS1, AF41, EF (no draw). */
			static const uint8_t dscp[4] = { 0, 8, 34, 46 };

			tos = (uint8_t)(tos | dscp[flow % 4] << 2);

			/* (the other tests draw no extra numbers: same traffic) */
			if (acks_on(pipe) && flow == NFLOWS - 1 && rng() % 8 != 0)
				acked[pipe] += 1448; /* else a duplicate ACK */
			pipes[i] = pipe;
			arrivals[pipe]++;
			a[i] = make_pkt(pipe, flow, len, tos, seq, acked[pipe]);
			b[i] = make_pkt(pipe, flow, len, tos, seq, acked[pipe]);
			seq++;
		}
		if (now > T0 + 1000 * MS && now < T0 + 1000 * MS + 500 * US) {
			struct aqm_shaper_params sp = { .rate_bps = 500000 };

			assert_int_equal(aqm_sched_pipe_set_shaper(run_a.s, 1, &sp), 0);
			assert_int_equal(aqm_sched_pipe_set_shaper(run_b.s, 1, &sp), 0);
		}
		if (now > T0 + 2000 * MS && now < T0 + 2000 * MS + 500 * US) {
			struct aqm_shaper_params sp = { .rate_bps = 50000000 };

			assert_int_equal(aqm_sched_pipe_set_shaper(run_a.s, 1, &sp), 0);
			assert_int_equal(aqm_sched_pipe_set_shaper(run_b.s, 1, &sp), 0);
		}
		aqm_sched_enqueue_burst(run_a.s, pipes, a, n, now);
		nb = aqm_sched_enqueue_bypass_burst(run_b.s, pipes, b, n, now, sent);
		for (uint16_t i = 0; i < nb; i++)
			record(&run_b, sent[i], now);
		drain(&run_a, now);
		drain(&run_b, now);
		if (limit_pkts != 0)
			assert_true(aqm_sched_pending(run_b.s) <= limit_pkts);
	}
	/* Let everything queued leave. */
	for (int i = 0; i < 20000; i++) {
		now += 100 * US;
		drain(&run_a, now);
		drain(&run_b, now);
	}
	if (limit_pkts == 0)
		compare_runs(bypassed);
	else
		check_bypass_run(limit_pkts, bypassed);
	assert_int_equal(aqm_sched_pending(run_a.s), 0);
	assert_int_equal(aqm_sched_pending(run_b.s), 0);
	aqm_sched_free(run_a.s);
	aqm_sched_free(run_b.s);
}

static void
test_bypass_sends_the_same_packets_at_the_same_times_as_queueing(void **state)
{
	uint64_t bypassed = 0;
	uint32_t total = 0;

	(void)state;
	blue_total = 0;
	run_both(0x9e3779b97f4a7c15ULL, 0, &bypassed);
	for (uint32_t p = 0; p < NPIPES; p++)
		total += run_a.nout[p];
	print_message("%u packets sent, %llu of them bypassed, %llu BLUE drops\n",
		      total, (unsigned long long)bypassed,
		      (unsigned long long)blue_total);
	/* The traffic must exercise both paths, or the test proves nothing. */
	assert_true(bypassed > total / 10);
	assert_true(bypassed < total);
	assert_true(blue_total > 0);
}

/* The same with the ACK filter and a 3 ms ACK hold on five pipes, one of
 * them loaded near its rate: a held ACK's pipe never bypasses, and a pipe
 * that can bypass holds nothing. */
static void
test_bypass_with_the_ack_hold_sends_what_queueing_sends(void **state)
{
	uint64_t bypassed = 0;
	uint32_t total = 0;

	(void)state;
	with_hold = true;
	held_total = filtered_total = 0;
	run_both(0x6a09e667f3bcc909ULL, 0, &bypassed);
	with_hold = false;
	for (uint32_t p = 0; p < NPIPES; p++)
		total += run_a.nout[p];
	print_message("%u packets sent, %llu bypassed, %llu ACKs held, %llu filtered\n",
		      total, (unsigned long long)bypassed,
		      (unsigned long long)held_total, (unsigned long long)filtered_total);
	assert_true(bypassed > total / 10);
	assert_true(held_total > 100);
	assert_true(filtered_total > 100);
}

static void
test_bypass_respects_the_limit_on_all_pipes(void **state)
{
	uint64_t bypassed = 0;

	(void)state;
	/* So few that the global limit refuses packets all the time. */
	run_both(0x2545f4914f6cdd1dULL, 12, &bypassed);
	assert_true(bypassed > 0);
}

/* A pipe that holds packets, whose shaper is not due, or that gets two
 * packets in the burst, never bypasses; the counters of a bypassed packet
 * are those of a sent one. */
static void
test_bypass_only_for_an_idle_pipe_whose_shaper_is_due(void **state)
{
	struct aqm_pipe_params pp;
	struct aqm_pipe_stats st;
	struct aqm_sched *s;
	struct rte_mbuf *in[2], *out[4];
	uint32_t pipes[2] = { 0, 1 };

	(void)state;
	aqm_pipe_params_default(&pp);
	pp.shaper.rate_bps = 8000000; /* 1 byte per us */
	s = test_sched(&pp, 2);
	assert_non_null(s);
	/* Idle and due: it goes at once, and the shaper owes 1000 us. */
	in[0] = test_pkt4(1, 1000, 0);
	assert_int_equal(aqm_sched_enqueue_bypass_burst(s, pipes, in, 1, T0, out), 1);
	assert_ptr_equal(out[0], in[0]);
	rte_pktmbuf_free(out[0]);
	assert_int_equal(aqm_sched_pipe_stats(s, 0, &st), 0);
	assert_int_equal(st.bypassed, 1);
	assert_int_equal(st.enq_pkts, 1);
	assert_int_equal(st.tx_pkts, 1);
	assert_int_equal(st.tx_bytes, 1000);
	assert_int_equal(st.sojourn_hist[0], 1);
	assert_int_equal(aqm_sched_pending(s), 0);
	/* Idle, but not due: it queues, and leaves when the shaper says. */
	in[0] = test_pkt4(2, 1000, 0);
	assert_int_equal(aqm_sched_enqueue_bypass_burst(s, pipes, in, 1,
							T0 + 500 * US, out), 0);
	assert_int_equal(aqm_sched_pending(s), 1);
	assert_int_equal(aqm_sched_dequeue_burst(s, out, 4, T0 + 999 * US), 0);
	assert_int_equal(aqm_sched_dequeue_burst(s, out, 4, T0 + 1000 * US), 1);
	rte_pktmbuf_free(out[0]);
	/* Due again, but holding a packet: a new one queues behind it. */
	in[0] = test_pkt4(3, 1000, 0);
	assert_int_equal(aqm_sched_enqueue_bypass_burst(s, pipes, in, 1,
							T0 + 1500 * US, out), 0);
	in[0] = test_pkt4(4, 1000, 0);
	assert_int_equal(aqm_sched_enqueue_bypass_burst(s, pipes, in, 1,
							T0 + 5000 * US, out), 0);
	assert_int_equal(aqm_sched_pending(s), 2);
	assert_int_equal(aqm_sched_dequeue_burst(s, out, 4, T0 + 5000 * US), 1);
	rte_pktmbuf_free(out[0]);
	assert_int_equal(aqm_sched_dequeue_burst(s, out, 4, T0 + 6000 * US), 1);
	rte_pktmbuf_free(out[0]);
	/* Pipe 1, idle and due, gets two packets in one burst: both queue. */
	pipes[0] = 1;
	in[0] = test_pkt4(5, 100, 0);
	in[1] = test_pkt4(6, 100, 0);
	assert_int_equal(aqm_sched_enqueue_bypass_burst(s, pipes, in, 2,
							T0 + 7000 * US, out), 0);
	assert_int_equal(aqm_sched_pending(s), 2);
	assert_int_equal(aqm_sched_pipe_stats(s, 1, &st), 0);
	assert_int_equal(st.bypassed, 0);
	while (aqm_sched_pending(s) != 0) {
		uint16_t n = aqm_sched_flush_burst(s, out, 4);

		rte_pktmbuf_free_bulk(out, n);
	}
	aqm_sched_free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bypass_sends_the_same_packets_at_the_same_times_as_queueing),
		cmocka_unit_test(test_bypass_with_the_ack_hold_sends_what_queueing_sends),
		cmocka_unit_test(test_bypass_respects_the_limit_on_all_pipes),
		cmocka_unit_test(test_bypass_only_for_an_idle_pipe_whose_shaper_is_due),
	};

	if (test_eal_init("bypass", 65535, 512) != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
