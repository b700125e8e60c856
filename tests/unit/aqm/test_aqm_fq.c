/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FQ-CoDel inside a pipe: flow isolation, DRR++ fairness, limits, ECN.
 * Virtual clock; real mbufs from an EAL without hugepages.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "aqm_test_util.h"
#include "aqm_priv.h"

#define MS 1000000ULL
#define T0 (1000 * MS)

static uint32_t
flow_of(struct rte_mbuf *m)
{
	return (uint32_t)(pkt_meta(m)->sport - 1000);
}

static void
enqueue_n(struct aqm_sched *s, uint32_t flow, unsigned int n, uint16_t len,
	  uint64_t now)
{
	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *m = test_pkt4(flow, len, 0);

		assert_non_null(m);
		aqm_sched_pipe_enqueue_burst(s, 0, &m, 1, now);
	}
}

static void
drain_free(struct aqm_sched *s)
{
	struct rte_mbuf *pkts[64];
	uint16_t n;

	while ((n = aqm_sched_flush_burst(s, pkts, 64)) > 0)
		rte_pktmbuf_free_bulk(pkts, n);
}

static void
test_sparse_flow_is_dequeued_ahead_of_bulk_backlog(void **state)
{
	struct aqm_pipe_params pp;
	struct aqm_sched *s;
	struct rte_mbuf *m;

	(void)state;
	aqm_pipe_params_default(&pp);
	s = test_sched(&pp, 1);
	assert_non_null(s);
	enqueue_n(s, 1, 200, 1500, T0);
	for (int i = 0; i < 10; i++) {
		assert_int_equal(aqm_sched_dequeue_burst(s, &m, 1, T0), 1);
		assert_int_equal(flow_of(m), 1);
		rte_pktmbuf_free(m);
	}
	enqueue_n(s, 2, 1, 100, T0 + 1000);
	assert_int_equal(aqm_sched_dequeue_burst(s, &m, 1, T0 + 2000), 1);
	assert_int_equal(flow_of(m), 2);
	rte_pktmbuf_free(m);
	drain_free(s);
	aqm_sched_free(s);
}

static void
test_equal_bulk_flows_get_equal_shares_by_jains_index(void **state)
{
	enum { N = 8 };
	struct aqm_pipe_params pp;
	struct aqm_sched *s;
	uint64_t bytes[N] = { 0 }, sum = 0, sq = 0;
	unsigned int queued[N] = { 0 };
	struct rte_mbuf *out[64];
	double jain;

	(void)state;
	aqm_pipe_params_default(&pp);
	pp.shaper.rate_bps = 10000000;
	pp.fq.codel.target_ns = 10000 * MS; /* measure DRR++ alone */
	s = test_sched(&pp, 1);
	assert_non_null(s);
	/*
	 * Every flow always has packets queued; sizes differ per flow, since
	 * DRR++ shares bytes, not packets.
	 */
	for (uint64_t now = T0; now < T0 + 2000 * MS; now += 100000) {
		uint16_t n;

		for (uint32_t f = 0; f < N; f++)
			if (queued[f] < 4) {
				enqueue_n(s, f, 4, (uint16_t)(300 + 150 * f), now);
				queued[f] += 4;
			}
		n = aqm_sched_dequeue_burst(s, out, 64, now);
		for (uint16_t i = 0; i < n; i++) {
			bytes[flow_of(out[i])] += rte_pktmbuf_pkt_len(out[i]);
			queued[flow_of(out[i])]--;
		}
		rte_pktmbuf_free_bulk(out, n);
	}
	for (int f = 0; f < N; f++) {
		sum += bytes[f];
		sq += bytes[f] * bytes[f];
	}
	jain = (double)sum * (double)sum / ((double)N * (double)sq);
	print_message("jain index %.5f over %llu bytes\n", jain, (unsigned long long)sum);
	assert_true(jain >= 0.99);
	drain_free(s);
	aqm_sched_free(s);
}

static void
test_packet_limit_holds_and_overflow_drops_from_the_fattest_flow(void **state)
{
	struct aqm_pipe_params pp;
	struct aqm_pipe_stats st;
	struct aqm_sched *s;
	struct rte_mbuf *out[64];
	unsigned int thin = 0;
	uint16_t n;

	(void)state;
	aqm_pipe_params_default(&pp);
	pp.fq.limit_pkts = 100;
	pp.fq.drop_batch = 8;
	s = test_sched(&pp, 1);
	assert_non_null(s);
	enqueue_n(s, 7, 5, 200, T0);        /* a sparse flow */
	enqueue_n(s, 1, 300, 1500, T0);     /* a fat one */
	enqueue_n(s, 7, 3, 200, T0);        /* the sparse flow's new arrivals */
	aqm_sched_pipe_stats(s, 0, &st);
	assert_true(st.backlog_pkts <= 100);
	assert_true(st.drops[AQM_DROP_OVERFLOW] >= 208);
	assert_int_equal(st.drops[AQM_DROP_MEMORY], 0);
	while ((n = aqm_sched_dequeue_burst(s, out, 64, T0)) > 0) {
		for (uint16_t i = 0; i < n; i++)
			thin += flow_of(out[i]) == 7;
		rte_pktmbuf_free_bulk(out, n);
	}
	/* Every packet of the sparse flow survived, arrivals included. */
	assert_int_equal(thin, 8);
	aqm_sched_free(s);
}

static void
test_memory_limit_holds_and_counts_memory_drops(void **state)
{
	struct aqm_pipe_params pp;
	struct aqm_pipe_stats st;
	struct aqm_sched *s;
	struct rte_mbuf *probe = test_pkt4(0, 64, 0);
	uint32_t ts = aqm_truesize(probe);

	(void)state;
	rte_pktmbuf_free(probe);
	aqm_pipe_params_default(&pp);
	pp.fq.memory_limit = 50 * ts;
	s = test_sched(&pp, 1);
	assert_non_null(s);
	enqueue_n(s, 1, 200, 64, T0);
	enqueue_n(s, 2, 20, 64, T0);
	aqm_sched_pipe_stats(s, 0, &st);
	assert_true(st.backlog_pkts <= 50);
	assert_true(st.drops[AQM_DROP_MEMORY] >= 170);
	assert_int_equal(st.drops[AQM_DROP_OVERFLOW], 0);
	drain_free(s);
	aqm_sched_free(s);
}

static void
test_fifo_tail_drops_the_arrival_when_full(void **state)
{
	struct aqm_pipe_params pp;
	struct aqm_pipe_stats st;
	struct aqm_sched *s;
	struct rte_mbuf *m;

	(void)state;
	aqm_pipe_params_default(&pp);
	pp.qdisc = AQM_QDISC_FIFO;
	pp.shaper.rate_bps = 8000000;       /* 1 MB/s */
	pp.fifo_limit_ms = 10;               /* 10 kB */
	s = test_sched(&pp, 1);
	assert_non_null(s);
	enqueue_n(s, 1, 20, 1000, T0);
	aqm_sched_pipe_stats(s, 0, &st);
	assert_int_equal(st.backlog_pkts, 10);
	assert_int_equal(st.drops[AQM_DROP_OVERFLOW], 10);
	/* FIFO: first in, first out, whatever the flow. */
	enqueue_n(s, 2, 1, 100, T0);
	assert_int_equal(aqm_sched_dequeue_burst(s, &m, 1, T0), 1);
	assert_int_equal(flow_of(m), 1);
	rte_pktmbuf_free(m);
	drain_free(s);
	aqm_sched_free(s);
}

/* Recompute the IPv4 header checksum from scratch and compare. */
static bool
ipv4_csum_ok(struct rte_mbuf *m)
{
	const struct rte_ipv4_hdr *ip =
		rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, 14);
	struct rte_ipv4_hdr copy = *ip;

	copy.hdr_checksum = 0;
	return rte_ipv4_cksum(&copy) == ip->hdr_checksum;
}

static void
test_ecn_mark_sets_ce_and_leaves_a_valid_ipv4_checksum(void **state)
{
	(void)state;
	for (uint8_t tos = 0; tos < 255; tos++) {
		struct rte_mbuf *m = test_pkt4(tos, 100, tos);
		const uint8_t *ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, 14);
		bool ect = (tos & 3) != 0;

		assert_int_equal(aqm_ecn_mark_ce(m), ect);
		assert_int_equal(ip[1], ect ? (tos | 3) : tos);
		assert_true(ipv4_csum_ok(m));
		rte_pktmbuf_free(m);
	}
}

static void
test_ecn_mark_sets_ce_in_the_ipv6_traffic_class(void **state)
{
	(void)state;
	for (unsigned int tc = 0; tc < 256; tc++) {
		struct rte_mbuf *m = test_pkt6(1, 100, (uint8_t)tc);
		const uint8_t *ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, 14);
		bool ect = (tc & 3) != 0;
		uint8_t got;

		assert_int_equal(aqm_ecn_mark_ce(m), ect);
		got = (uint8_t)((ip[0] & 0x0f) << 4 | ip[1] >> 4);
		assert_int_equal(got, ect ? (tc | 3) : tc);
		assert_int_equal(ip[0] >> 4, 6);
		rte_pktmbuf_free(m);
	}
}

static void
test_overloaded_pipe_marks_ect_packets_and_drops_the_rest(void **state)
{
	struct aqm_pipe_params pp;
	struct aqm_pipe_stats st;
	struct aqm_sched *s;
	struct rte_mbuf *out[64];
	uint64_t bad = 0;

	(void)state;
	aqm_pipe_params_default(&pp);
	pp.shaper.rate_bps = 1000000;
	s = test_sched(&pp, 1);
	assert_non_null(s);
	/* Flow 1 is ECN-capable, flow 2 is not; both offer 2x the rate. */
	for (uint64_t now = T0; now < T0 + 3000 * MS; now += MS) {
		uint16_t n;

		if ((now / MS) % 12 == 0) {
			struct rte_mbuf *a = test_pkt4(1, 1500, 0x02);
			struct rte_mbuf *b = test_pkt4(2, 1500, 0x00);

			aqm_sched_pipe_enqueue_burst(s, 0, &a, 1, now);
			aqm_sched_pipe_enqueue_burst(s, 0, &b, 1, now);
		}
		n = aqm_sched_dequeue_burst(s, out, 64, now);
		for (uint16_t i = 0; i < n; i++)
			bad += !ipv4_csum_ok(out[i]);
		rte_pktmbuf_free_bulk(out, n);
	}
	aqm_sched_pipe_stats(s, 0, &st);
	assert_int_equal(bad, 0);
	assert_true(st.ce_marks > 0);
	assert_true(st.drops[AQM_DROP_CODEL] > 0);
	drain_free(s);
	aqm_sched_free(s);
}

static void
test_flow_hash_seed_changes_which_flows_share_a_queue(void **state)
{
	struct aqm_pipe_params pp;
	struct aqm_sched *a, *b;
	unsigned int same = 0;

	(void)state;
	aqm_pipe_params_default(&pp);
	pp.fq.flows = 64;
	a = test_sched(&pp, 1);
	pp.fq.seed = 12345;
	b = test_sched(&pp, 1);
	assert_non_null(a);
	assert_non_null(b);
	for (uint32_t f = 0; f < 256; f++) {
		enqueue_n(a, f, 1, 64, T0);
		enqueue_n(b, f, 1, 64, T0);
	}
	/* Compare the occupied flow slots of both instances. */
	for (uint32_t i = 0; i < 64; i++)
		same += a->pipes[0].flows[i].backlog == b->pipes[0].flows[i].backlog;
	assert_true(same < 40);
	drain_free(a);
	drain_free(b);
	aqm_sched_free(a);
	aqm_sched_free(b);
}

/* The first n flow ids (test_pkt4()) whose home queue in p is home. */
static void
flows_with_home(const struct aqm_pipe *p, uint32_t home, uint32_t *ids,
		unsigned int n)
{
	unsigned int got = 0;

	for (uint32_t f = 1; got < n && f < 1000000; f++) {
		struct rte_mbuf *m = test_pkt4(f, 64, 0);

		assert_non_null(m);
		if (aqm_flow_index(pkt_flow_hash(pkt_meta(m)), p->seed, p->flow_mask) == home)
			ids[got++] = f;
		rte_pktmbuf_free(m);
	}
	assert_int_equal(got, n);
}

static uint32_t
queue_of(const struct aqm_sched *s, uint32_t flow)
{
	struct rte_mbuf *m = test_pkt4(flow, 64, 0);
	uint32_t fi;

	assert_non_null(m);
	fi = aqm_fq_flow_lookup(s, &s->pipes[0], pkt_flow_hash(pkt_meta(m)));
	rte_pktmbuf_free(m);
	return fi;
}

static void
test_flows_with_one_home_queue_take_the_free_queues_of_its_set(void **state)
{
	struct aqm_pipe_params pp;
	struct aqm_way_stats ws;
	struct aqm_sched *s;
	uint32_t ids[AQM_FLOW_WAYS + 1], busy = 0;
	const uint32_t home = 21; /* way 5 of the set of queues 16-23 */

	(void)state;
	aqm_pipe_params_default(&pp);
	pp.fq.flows = 64;
	s = test_sched(&pp, 1);
	assert_non_null(s);
	flows_with_home(&s->pipes[0], home, ids, RTE_DIM(ids));
	for (unsigned int i = 0; i < RTE_DIM(ids); i++)
		enqueue_n(s, ids[i], 2, 100, T0);
	/* Eight flows, one queue each, the home queue first and then the
	 * ways after it; the ninth found the set full and shares home. */
	for (unsigned int i = 0; i < AQM_FLOW_WAYS; i++)
		assert_int_equal(queue_of(s, ids[i]), 16 + (5 + i) % 8);
	assert_int_equal(queue_of(s, ids[AQM_FLOW_WAYS]), home);
	for (uint32_t i = 0; i < 64; i++) {
		uint32_t want = i == home ? 400 : i >= 16 && i < 24 ? 200 : 0;

		assert_int_equal(s->pipes[0].flows[i].backlog, want);
		busy += s->pipes[0].flows[i].backlog != 0;
	}
	assert_int_equal(busy, AQM_FLOW_WAYS);
	aqm_sched_way_stats(s, &ws);
	assert_int_equal(ws.misses, AQM_FLOW_WAYS);
	/* Counted per packet: the ninth flow's second packet collides
	 * again. Hits away from home: the second packets of the seven
	 * flows not at home. */
	assert_int_equal(ws.collisions, 2);
	assert_int_equal(ws.hits, AQM_FLOW_WAYS - 1);
	drain_free(s);
	aqm_sched_free(s);
}

/*
 * A flow that found its set full shares its home queue. When another
 * queue of the set comes free while the sharing flow's packets still
 * wait at home, its next packets must not take that queue: they would
 * leave ahead of the ones at home.
 */
static void
test_a_flow_that_shared_its_home_does_not_overtake_itself(void **state)
{
	struct aqm_pipe_params pp;
	struct aqm_way_stats ws;
	struct aqm_sched *s;
	struct aqm_pipe *p;
	struct rte_mbuf *m;
	uint32_t ids[AQM_FLOW_WAYS + 1], x;
	const uint32_t home = 21, away = 16 + (5 + 1) % 8;
	uint16_t want = 100;
	unsigned int out = 0;

	(void)state;
	aqm_pipe_params_default(&pp);
	pp.fq.flows = 64;
	s = test_sched(&pp, 1);
	assert_non_null(s);
	p = &s->pipes[0];
	flows_with_home(p, home, ids, RTE_DIM(ids));
	x = ids[AQM_FLOW_WAYS];
	/* The flow at home has a long backlog; the other seven a short one. */
	enqueue_n(s, ids[0], 20, 1000, T0);
	for (unsigned int i = 1; i < AQM_FLOW_WAYS; i++)
		enqueue_n(s, ids[i], 2, 100, T0);
	enqueue_n(s, x, 1, want, T0);
	assert_int_equal(queue_of(s, x), home);
	/* Serve until the second flow's queue is free again; x's packet
	 * still waits at home behind the first flow's. */
	while (!(p->flows[away].list == AQM_LIST_NONE && p->flows[away].head == NULL)) {
		assert_int_equal(aqm_sched_dequeue_burst(s, &m, 1, T0), 1);
		assert_int_not_equal(flow_of(m), x);
		rte_pktmbuf_free(m);
	}
	assert_true(p->flows[home].backlog > 1000);
	/* x comes back: it stays at home, behind its own packet. */
	enqueue_n(s, x, 1, want + 1, T0);
	enqueue_n(s, x, 1, want + 2, T0);
	assert_int_equal(p->flows[away].backlog, 0);
	while (aqm_sched_dequeue_burst(s, &m, 1, T0) == 1) {
		if (flow_of(m) == x) {
			assert_int_equal(rte_pktmbuf_pkt_len(m), want);
			want++;
			out++;
		}
		rte_pktmbuf_free(m);
	}
	assert_int_equal(out, 3);
	aqm_sched_way_stats(s, &ws);
	assert_int_equal(ws.collisions, 3);
	/* Once home is free, x claims a queue as any flow does, and the
	 * home forgets its guest when it next takes a packet. */
	drain_free(s);
	enqueue_n(s, x, 1, 100, T0 + MS);
	assert_int_equal(queue_of(s, x), away);
	enqueue_n(s, ids[0], 1, 100, T0 + MS);
	assert_int_equal(queue_of(s, ids[0]), home);
	assert_int_equal(p->flows[home].guest, 0);
	aqm_sched_way_stats(s, &ws);
	assert_int_equal(ws.collisions, 3);
	drain_free(s);
	aqm_sched_free(s);
}

static void
test_a_flow_keeps_its_queue_while_listed_and_a_returning_flow_finds_it(void **state)
{
	struct aqm_pipe_params pp;
	struct aqm_way_stats ws;
	struct aqm_sched *s;
	struct rte_mbuf *m;
	uint32_t ids[3], qa, qb;

	(void)state;
	aqm_pipe_params_default(&pp);
	pp.fq.flows = 64;
	s = test_sched(&pp, 1);
	assert_non_null(s);
	flows_with_home(&s->pipes[0], 40, ids, RTE_DIM(ids));
	/* A and B share a home: A takes it, B the next way. */
	enqueue_n(s, ids[0], 1, 100, T0);
	enqueue_n(s, ids[1], 1, 100, T0);
	enqueue_n(s, 7, 5, 1500, T0);
	qa = queue_of(s, ids[0]);
	qb = queue_of(s, ids[1]);
	assert_int_equal(qa, 40);
	assert_int_equal(qb, 41);
	/* A's packet leaves; A's queue is empty but still listed, so C,
	 * new, must not take it. */
	assert_int_equal(aqm_sched_dequeue_burst(s, &m, 1, T0), 1);
	assert_int_equal(flow_of(m), ids[0]);
	rte_pktmbuf_free(m);
	assert_int_equal(s->pipes[0].flows[qa].backlog, 0);
	assert_int_not_equal(s->pipes[0].flows[qa].list, AQM_LIST_NONE);
	enqueue_n(s, ids[2], 1, 100, T0);
	assert_int_equal(queue_of(s, ids[2]), 42);
	/* Once everything has gone, B comes back to its own queue, away
	 * from home: a hit, not a new claim. */
	drain_free(s);
	aqm_sched_way_stats(s, &ws);
	assert_int_equal(ws.misses, 4);
	enqueue_n(s, ids[1], 1, 100, T0 + 1000);
	assert_int_equal(s->pipes[0].flows[41].backlog, 100);
	aqm_sched_way_stats(s, &ws);
	assert_int_equal(ws.misses, 4);
	assert_int_equal(ws.hits, 1);
	assert_int_equal(ws.collisions, 0);
	drain_free(s);
	aqm_sched_free(s);
}

static void
test_flows_that_share_a_home_and_come_in_turns_keep_their_queues(void **state)
{
	struct aqm_pipe_params pp;
	struct aqm_way_stats ws;
	struct aqm_sched *s;
	uint32_t ids[2];

	(void)state;
	aqm_pipe_params_default(&pp);
	pp.fq.flows = 64;
	s = test_sched(&pp, 1);
	assert_non_null(s);
	flows_with_home(&s->pipes[0], 13, ids, RTE_DIM(ids));
	/* A and B never queue at the same time: each finds the other's
	 * queue free, but not its own to take. */
	for (unsigned int round = 0; round < 5; round++) {
		for (unsigned int i = 0; i < 2; i++) {
			enqueue_n(s, ids[i], 1, 100, T0 + round * MS);
			assert_int_equal(queue_of(s, ids[i]), 13 + i);
			drain_free(s);
		}
	}
	aqm_sched_way_stats(s, &ws);
	assert_int_equal(ws.misses, 2);
	assert_int_equal(ws.hits, 4);
	assert_int_equal(ws.collisions, 0);
	aqm_sched_free(s);
}

/*
 * With tins, each tin's slice of the queues has its own sets; 1024
 * queues in 3 tins are slices of 341, whose last set has 5 queues. Six
 * flows with their home in that short set: five get one of its queues,
 * the sixth shares its home, and none spills into the next tin's slice.
 */
static void
test_a_short_last_set_of_a_tin_slice_stays_inside_its_slice(void **state)
{
	struct aqm_sched_params sp;
	struct aqm_pipe_params pp;
	struct aqm_way_stats ws;
	struct aqm_sched *s;
	struct aqm_pipe *p;
	uint32_t base = 0, n = 0, got = 0, used = 0, inside = 0, total = 0;

	(void)state;
	aqm_sched_params_default(&sp);
	sp.max_pipes = 1;
	sp.max_flows = 1024;
	sp.diffserv = true;
	s = aqm_sched_create(&sp);
	assert_non_null(s);
	aqm_pipe_params_default(&pp);
	pp.fq.flows = 1024;
	pp.fq.diffserv = AQM_DIFFSERV_3;
	assert_int_equal(aqm_sched_pipe_add(s, &pp), 0);
	p = &s->pipes[0];
	for (uint32_t f = 1; got < 6 && f < 1000000; f++) {
		struct rte_mbuf *m = test_pkt4(f, 100, 0);

		assert_non_null(m);
		aqm_tin_slice(p, m, &base, &n);
		assert_int_equal(n, 341);
		if (aqm_flow_home(aqm_flow_tag(pkt_flow_hash(pkt_meta(m)), p->seed), n) == 338) {
			aqm_sched_pipe_enqueue_burst(s, 0, &m, 1, T0);
			got++;
		} else {
			rte_pktmbuf_free(m);
		}
	}
	assert_int_equal(got, 6);
	for (uint32_t i = 0; i < 1024; i++) {
		total += p->flows[i].backlog;
		if (i >= base + 336 && i < base + 341) {
			inside += p->flows[i].backlog;
			used += p->flows[i].backlog != 0;
		}
	}
	assert_int_equal(total, 600);
	assert_int_equal(inside, 600);
	assert_int_equal(used, 5);
	assert_int_equal(p->flows[base + 338].backlog, 200);
	aqm_sched_way_stats(s, &ws);
	assert_int_equal(ws.misses, 5);
	assert_int_equal(ws.collisions, 1);
	drain_free(s);
	aqm_sched_free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sparse_flow_is_dequeued_ahead_of_bulk_backlog),
		cmocka_unit_test(test_equal_bulk_flows_get_equal_shares_by_jains_index),
		cmocka_unit_test(test_packet_limit_holds_and_overflow_drops_from_the_fattest_flow),
		cmocka_unit_test(test_memory_limit_holds_and_counts_memory_drops),
		cmocka_unit_test(test_fifo_tail_drops_the_arrival_when_full),
		cmocka_unit_test(test_ecn_mark_sets_ce_and_leaves_a_valid_ipv4_checksum),
		cmocka_unit_test(test_ecn_mark_sets_ce_in_the_ipv6_traffic_class),
		cmocka_unit_test(test_overloaded_pipe_marks_ect_packets_and_drops_the_rest),
		cmocka_unit_test(test_flow_hash_seed_changes_which_flows_share_a_queue),
		cmocka_unit_test(test_flows_with_one_home_queue_take_the_free_queues_of_its_set),
		cmocka_unit_test(test_a_flow_that_shared_its_home_does_not_overtake_itself),
		cmocka_unit_test(test_a_flow_keeps_its_queue_while_listed_and_a_returning_flow_finds_it),
		cmocka_unit_test(test_flows_that_share_a_home_and_come_in_turns_keep_their_queues),
		cmocka_unit_test(test_a_short_last_set_of_a_tin_slice_stays_inside_its_slice),
	};

	if (test_eal_init("fq", 8191, 256) != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
