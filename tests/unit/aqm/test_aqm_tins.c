/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Diffserv tins and wash on a virtual clock: greedy senders keep their
 * tins backlogged, a voice flow sends at a fixed rate, and what each tin
 * gets out of a shaped pipe, and how long voice waits, is counted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "aqm_test_util.h"

#define US 1000ULL
#define MS 1000000ULL
#define T0 (1000 * MS)
#define STEP (100 * US)
#define RATE 10000000ULL
#define MAX_FLOWS 16

#define TOS_EF (46 << 2)
#define TOS_CS1 (8 << 2)
#define TOS_AF41 (34 << 2)

/* One simulated flow: a greedy one keeps two packets queued, a paced
 * one sends len bytes every gap_ns. */
struct tin_flow {
	uint8_t tos;
	uint16_t len;
	uint64_t gap_ns;  /* 0: greedy */
	uint64_t next_ns;
	uint32_t queued;
	uint64_t tx;      /* bytes sent from 1 s on */
	uint64_t sojourn_max;
	uint64_t sent, dropped;
};

struct tin_run {
	enum aqm_diffserv ds;
	unsigned int nflows;
	struct tin_flow f[MAX_FLOWS];
	struct aqm_tin_stats tins[AQM_TINS_MAX];
	struct aqm_pipe_stats st;
};

static struct tin_flow *
add_flow(struct tin_run *r, uint8_t tos, uint16_t len, uint64_t gap_ns)
{
	struct tin_flow *f = &r->f[r->nflows++];

	assert_true(r->nflows <= MAX_FLOWS);
	memset(f, 0, sizeof(*f));
	f->tos = tos;
	f->len = len;
	f->gap_ns = gap_ns;
	f->next_ns = T0;
	return f;
}

/*
 * A scheduler with one 10 Mbit/s FQ-CoDel pipe of 1024 flow queues in
 * mode ds (flow-hash seed: the library's default if 0). CoDel is out of
 * the way (a greedy sender here would stall on a drop): only the
 * scheduler's order, shares and waits are measured.
 */
static struct aqm_sched *
tin_sched(enum aqm_diffserv ds, uint32_t seed)
{
	struct aqm_pipe_params pp;
	struct aqm_sched_params sp;
	struct aqm_sched *s;

	aqm_pipe_params_default(&pp);
	pp.shaper.rate_bps = RATE;
	pp.fq.flows = 1024;
	pp.fq.diffserv = (uint8_t)ds;
	pp.fq.limit_pkts = 1000;
	if (seed != 0)
		pp.fq.seed = seed;
	pp.fq.codel.target_ns = 1000 * MS;
	pp.fq.codel.interval_ns = 2000 * MS;
	aqm_sched_params_default(&sp);
	sp.max_pipes = 1;
	sp.max_flows = 1024;
	sp.diffserv = true;
	s = aqm_sched_create(&sp);
	assert_non_null(s);
	assert_int_equal(aqm_sched_pipe_add(s, &pp), 0);
	return s;
}

/* Run r's flows through one 10 Mbit/s FQ-CoDel pipe for 6 s. */
static void
tin_simulate(struct tin_run *r)
{
	struct aqm_sched *s = tin_sched(r->ds, 0);
	uint64_t sent_before[MAX_FLOWS];

	for (uint64_t now = T0; now < T0 + 6000 * MS; now += STEP) {
		struct rte_mbuf *out[16];
		uint16_t n;

		for (unsigned int i = 0; i < r->nflows; i++) {
			struct tin_flow *f = &r->f[i];

			while (f->gap_ns == 0 ? f->queued < 2 : f->next_ns <= now) {
				struct rte_mbuf *m = test_pkt4(i, f->len, f->tos);

				assert_non_null(m);
				aqm_sched_pipe_enqueue_burst(s, 0, &m, 1, now);
				f->queued++;
				f->next_ns += f->gap_ns;
			}
		}
		n = aqm_sched_dequeue_burst(s, out, 16, now);
		for (uint16_t k = 0; k < n; k++) {
			unsigned int i = pkt_meta(out[k])->sport - 1000u;
			struct tin_flow *f = &r->f[i];
			uint64_t sj = now - pkt_meta(out[k])->enq_ns;

			assert_true(i < r->nflows);
			f->queued--;
			f->sent++;
			if (now >= T0 + 1000 * MS) {
				f->tx += rte_pktmbuf_pkt_len(out[k]);
				if (sj > f->sojourn_max)
					f->sojourn_max = sj;
			}
		}
		rte_pktmbuf_free_bulk(out, n);
	}
	/* What did not leave and is not queued was dropped. */
	for (unsigned int i = 0; i < r->nflows; i++)
		sent_before[i] = r->f[i].sent;
	{
		struct rte_mbuf *out[64];
		uint16_t n;

		assert_int_equal(aqm_sched_pipe_stats(s, 0, &r->st), 0);
		assert_int_equal(aqm_sched_pipe_tin_stats(s, 0, r->tins),
				 (int)aqm_diffserv_tins(r->ds) * (r->ds != AQM_DIFFSERV_BESTEFFORT));
		while ((n = aqm_sched_flush_burst(s, out, 64)) > 0) {
			for (uint16_t k = 0; k < n; k++)
				r->f[pkt_meta(out[k])->sport - 1000u].queued--;
			rte_pktmbuf_free_bulk(out, n);
		}
	}
	/* Greedy flows lost nothing (a paced one may overflow). */
	for (unsigned int i = 0; i < r->nflows; i++)
		if (r->f[i].gap_ns == 0)
			assert_int_equal(r->f[i].queued, 0);
	(void)sent_before;
	aqm_sched_free(s);
}

static double
share(const struct tin_run *r, unsigned int i)
{
	uint64_t all = 0;

	for (unsigned int k = 0; k < r->nflows; k++)
		all += r->f[k].tx;
	return 100.0 * (double)r->f[i].tx / (double)all;
}

/*
 * 8 Best Effort and 2 Bulk (CS1) flows saturate the pipe; a voice flow
 * (EF) sends 2 Mbit/s in 250-byte packets: twice its per-flow fair
 * share, so without tins FQ-CoDel queues it like a bulk flow, but a
 * fifth of the pipe, under Voice's quarter.
 */
static void
voice_under_load(struct tin_run *r, enum aqm_diffserv ds)
{
	memset(r, 0, sizeof(*r));
	r->ds = ds;
	add_flow(r, TOS_EF, 250, 1000 * US);
	for (int i = 0; i < 8; i++)
		add_flow(r, 0, 1514, 0);
	for (int i = 0; i < 2; i++)
		add_flow(r, TOS_CS1, 1514, 0);
	tin_simulate(r);
}

static void
test_voice_under_its_threshold_keeps_a_low_sojourn_while_bulk_and_best_effort_saturate(void **state)
{
	struct tin_run r, be;
	double bulk;

	(void)state;
	voice_under_load(&r, AQM_DIFFSERV_3);
	voice_under_load(&be, AQM_DIFFSERV_BESTEFFORT);
	bulk = share(&r, 9) + share(&r, 10);
	print_message("diffserv3: voice sojourn max %.2f ms, %.1f%% of the pipe, %" PRIu64
		      " voice drops; bulk %.2f%%; besteffort: voice sojourn max %.2f ms, %.1f%%\n",
		      (double)r.f[0].sojourn_max / 1e6, share(&r, 0), r.tins[2].drops, bulk,
		      (double)be.f[0].sojourn_max / 1e6, share(&be, 0));
	/* Voice waits at most for the one full-size frame on the link
	 * (1.2 ms at 10 Mbit/s) and a step of the clock, and loses nothing. */
	assert_true(r.f[0].sojourn_max <= 1400 * US);
	assert_int_equal(r.tins[2].drops, 0);
	assert_int_equal(r.f[0].sent * 250, r.tins[2].tx_bytes);
	assert_true(share(&r, 0) > 19.9);
	/* Bulk keeps its sixteenth (6.25%), and no more. */
	assert_true(bulk > 6.0 && bulk < 6.5);
	/* Without tins the same voice flow queues behind its fair share. */
	assert_true(be.f[0].sojourn_max > 5 * MS);
}

/*
 * Voice floods (4 greedy EF flows) next to one Best Effort flow: Voice
 * gets its quarter while under its threshold and nothing more while
 * Best Effort has packets, so Best Effort keeps three quarters.
 */
static void
test_voice_over_its_threshold_does_not_starve_best_effort(void **state)
{
	struct tin_run r;
	double voice;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.ds = AQM_DIFFSERV_3;
	for (int i = 0; i < 4; i++)
		add_flow(&r, TOS_EF, 1514, 0);
	add_flow(&r, 0, 1514, 0);
	tin_simulate(&r);
	voice = share(&r, 0) + share(&r, 1) + share(&r, 2) + share(&r, 3);
	print_message("diffserv3 voice flood: voice %.2f%%, best effort %.2f%%\n",
		      voice, share(&r, 4));
	assert_true(share(&r, 4) >= 74.9);
	assert_true(voice >= 24.9 && voice <= 25.1);
}

/*
 * diffserv4 with every tin saturated: each tin under its threshold is
 * served before Best Effort, so Voice gets 1/4, Video 1/2, Bulk 1/16 and
 * Best Effort what is left (3/16).
 */
static void
test_diffserv4_gives_each_saturated_tin_its_threshold(void **state)
{
	struct tin_run r;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.ds = AQM_DIFFSERV_4;
	add_flow(&r, TOS_EF, 1514, 0);
	add_flow(&r, TOS_AF41, 1514, 0);
	add_flow(&r, TOS_CS1, 1514, 0);
	add_flow(&r, 0, 1514, 0);
	tin_simulate(&r);
	print_message("diffserv4: voice %.2f%% video %.2f%% bulk %.2f%% best effort %.2f%%\n",
		      share(&r, 0), share(&r, 1), share(&r, 2), share(&r, 3));
	assert_true(share(&r, 0) > 24.8 && share(&r, 0) < 25.2);
	assert_true(share(&r, 1) > 49.8 && share(&r, 1) < 50.2);
	assert_true(share(&r, 2) > 6.1 && share(&r, 2) < 6.4);
	assert_true(share(&r, 3) > 18.6 && share(&r, 3) < 18.9);
	/* Per-tin counters add up to the pipe's. */
	assert_int_equal(r.tins[0].tx_pkts + r.tins[1].tx_pkts + r.tins[2].tx_pkts +
			 r.tins[3].tx_pkts, r.st.tx_pkts);
	assert_int_equal(r.tins[0].tx_bytes + r.tins[1].tx_bytes + r.tins[2].tx_bytes +
			 r.tins[3].tx_bytes, r.st.tx_bytes);
}

/* With Best Effort idle, a tin over its threshold takes the whole pipe. */
static void
test_a_tin_alone_uses_the_whole_pipe(void **state)
{
	struct tin_run r;
	uint64_t bytes;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.ds = AQM_DIFFSERV_4;
	add_flow(&r, TOS_CS1, 1514, 0);
	tin_simulate(&r);
	bytes = r.f[0].tx;
	/* 5 s at 10 Mbit/s, within a frame. */
	assert_true(bytes >= 6250000 - 1514 && bytes <= 6250000 + 1514);
}

/* Every packet the pipe holds, in the order it sends them. */
static uint16_t
drain(struct aqm_sched *s, struct rte_mbuf **out, uint16_t max, uint64_t now)
{
	uint16_t n = 0;

	for (int i = 0; i < 100 && aqm_sched_pending(s) != 0; i++, now += MS)
		n = (uint16_t)(n + aqm_sched_dequeue_burst(s, out + n, (uint16_t)(max - n), now));
	return n;
}

/* RFC 1071: the one's complement sum of the header is 0xffff. */
static bool
ipv4_header_ok(const uint8_t *ip)
{
	uint32_t sum = 0;

	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

static void
test_wash_clears_the_dscp_keeps_ecn_and_fixes_the_checksum(void **state)
{
	struct aqm_pipe_params pp;
	struct aqm_sched_params sp;
	struct aqm_sched *s;
	struct aqm_tin_stats tins[AQM_TINS_MAX];
	struct rte_mbuf *in[4], *out[8];
	uint64_t washed, shared;
	uint16_t n;

	(void)state;
	aqm_pipe_params_default(&pp);
	pp.shaper.rate_bps = RATE;
	pp.fq.flows = 64;
	pp.fq.diffserv = AQM_DIFFSERV_3;
	pp.wash = true;
	aqm_sched_params_default(&sp);
	sp.max_pipes = 1;
	sp.max_flows = 64;
	sp.diffserv = true;
	s = aqm_sched_create(&sp);
	assert_non_null(s);
	assert_int_equal(aqm_sched_pipe_add(s, &pp), 0);
	in[0] = test_pkt4(1, 200, TOS_EF | 1);      /* EF, ECT(1) */
	in[1] = test_pkt4(2, 200, TOS_CS1 | 3);     /* CS1, CE */
	in[2] = test_pkt6(3, 200, TOS_EF | 2);      /* EF, ECT(0) */
	in[3] = test_pkt4(4, 200, 2);               /* no DSCP: untouched */
	assert_int_equal(aqm_sched_pipe_enqueue_burst(s, 0, in, 4, T0), 4);
	n = drain(s, out, 8, T0 + 10 * MS);
	assert_int_equal(n, 4);
	for (uint16_t k = 0; k < n; k++) {
		const uint8_t *ip = rte_pktmbuf_mtod_offset(out[k], const uint8_t *, 14);
		unsigned int flow = pkt_meta(out[k])->sport - 1000u;

		if (pkt_meta(out[k])->l3 == PKT_L3_IPV6) {
			assert_int_equal(ip[0], 0x60);
			assert_int_equal(ip[1], 2 << 4);
			continue;
		}
		assert_true(ipv4_header_ok(ip));
		assert_int_equal(ip[1], flow == 1 ? 1 : flow == 2 ? 3 : 2);
	}
	rte_pktmbuf_free_bulk(out, n);
	/* The tins saw the DSCP as received. */
	assert_int_equal(aqm_sched_pipe_tin_stats(s, 0, tins), 3);
	assert_int_equal(tins[0].tx_pkts, 1);
	assert_int_equal(tins[1].tx_pkts, 1);
	assert_int_equal(tins[2].tx_pkts, 2);
	aqm_sched_wash_stats(s, &washed, &shared);
	assert_int_equal(washed, 3);
	assert_int_equal(shared, 0);
	/* A buffer others share is left as it is, and counted. */
	in[0] = test_pkt4(1, 200, TOS_EF);
	rte_mbuf_refcnt_update(in[0], 1);
	assert_int_equal(aqm_sched_pipe_enqueue_burst(s, 0, in, 1, T0 + 20 * MS), 1);
	assert_int_equal(drain(s, out, 8, T0 + 300 * MS), 1);
	assert_int_equal(rte_pktmbuf_mtod_offset(out[0], const uint8_t *, 14)[1], TOS_EF);
	aqm_sched_wash_stats(s, &washed, &shared);
	assert_int_equal(shared, 1);
	rte_pktmbuf_free(out[0]);
	rte_pktmbuf_free(out[0]);
	aqm_sched_free(s);
}

static void
test_dscp_selects_the_tins_of_cakes_presets(void **state)
{
	(void)state;
	/* diffserv3: Bulk (CS1, LE), Voice (CS7, CS6, EF, VA, CS5, CS4). */
	assert_int_equal(aqm_diffserv_tin(AQM_DIFFSERV_3, 8), 1);
	assert_int_equal(aqm_diffserv_tin(AQM_DIFFSERV_3, 1), 1);
	assert_int_equal(aqm_diffserv_tin(AQM_DIFFSERV_3, 0), 0);
	assert_int_equal(aqm_diffserv_tin(AQM_DIFFSERV_3, 34), 0);
	for (unsigned int d = 0; d < 6; d++) {
		static const uint8_t voice[] = { 56, 48, 46, 44, 40, 32 };

		assert_int_equal(aqm_diffserv_tin(AQM_DIFFSERV_3, voice[d]), 2);
		assert_int_equal(aqm_diffserv_tin(AQM_DIFFSERV_4, voice[d]), 3);
	}
	/* diffserv4: Video (AF4x, AF3x, CS3, AF2x, CS2). */
	for (unsigned int d = 0; d < 11; d++) {
		static const uint8_t video[] = { 34, 36, 38, 26, 28, 30, 24, 18, 20, 22, 16 };

		assert_int_equal(aqm_diffserv_tin(AQM_DIFFSERV_4, video[d]), 2);
	}
	assert_int_equal(aqm_diffserv_tin(AQM_DIFFSERV_4, 10), 0); /* AF11 */
	assert_int_equal(aqm_diffserv_tin(AQM_DIFFSERV_4, 8), 1);
	assert_string_equal(aqm_diffserv_tin_name(AQM_DIFFSERV_4, 2), "video");
	assert_null(aqm_diffserv_tin_name(AQM_DIFFSERV_3, 3));
}

/*
 * 16 Best Effort flows of 10 packets and then one voice flow of 5 arrive
 * at once, for 2,000 flow-hash seeds: voice leaves within the first 12
 * packets every time. With one set of queues for all tins, a seed that
 * put voice into a Best Effort flow's queue (1 in 60) left it behind
 * that flow's backlog.
 */
static void
test_a_voice_flow_never_shares_a_queue_with_a_best_effort_flow(void **state)
{
	unsigned int worst = 0;

	(void)state;
	for (uint32_t seed = 1; seed <= 2000; seed++) {
		struct aqm_sched *s = tin_sched(AQM_DIFFSERV_3, seed * 0x9e3779b1u);
		unsigned int pos = 0, last_voice = 0;
		uint64_t now = T0;

		for (unsigned int k = 0; k < 10; k++)
			for (uint32_t i = 0; i < 16; i++) {
				struct rte_mbuf *m = test_pkt4(i, 1000, 0);

				assert_non_null(m);
				aqm_sched_pipe_enqueue_burst(s, 0, &m, 1, now);
			}
		for (unsigned int k = 0; k < 5; k++) {
			struct rte_mbuf *m = test_pkt4(16, 200, TOS_EF);

			assert_non_null(m);
			aqm_sched_pipe_enqueue_burst(s, 0, &m, 1, now);
		}
		while (pos < 165) {
			struct rte_mbuf *out[16];
			uint16_t n = aqm_sched_dequeue_burst(s, out, 16, now);

			for (uint16_t k = 0; k < n; k++, pos++)
				if (pkt_meta(out[k])->sport == 1016)
					last_voice = pos;
			rte_pktmbuf_free_bulk(out, n);
			now += STEP;
			assert_true(now < T0 + 1000 * MS);
		}
		if (last_voice > worst)
			worst = last_voice;
		aqm_sched_free(s);
	}
	assert_true(worst < 12);
}

static void
test_tins_need_a_scheduler_with_tin_state(void **state)
{
	struct aqm_pipe_params pp;
	struct aqm_sched *s;
	struct aqm_tin_stats tins[AQM_TINS_MAX];
	enum aqm_diffserv ds;

	(void)state;
	aqm_pipe_params_default(&pp);
	pp.fq.flows = 64;
	s = test_sched(&pp, 2);
	assert_non_null(s);
	/* A besteffort pipe has no tins of its own. */
	assert_int_equal(aqm_sched_pipe_tin_stats(s, 0, tins), 0);
	aqm_sched_free(s);
	pp.fq.diffserv = AQM_DIFFSERV_4;
	assert_null(test_sched(&pp, 1));
	assert_int_equal(aqm_parse_diffserv("DiffServ4", &ds), 0);
	assert_int_equal(ds, AQM_DIFFSERV_4);
	assert_int_equal(aqm_parse_diffserv("diffserv8", &ds), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_voice_under_its_threshold_keeps_a_low_sojourn_while_bulk_and_best_effort_saturate),
		cmocka_unit_test(test_voice_over_its_threshold_does_not_starve_best_effort),
		cmocka_unit_test(test_diffserv4_gives_each_saturated_tin_its_threshold),
		cmocka_unit_test(test_a_tin_alone_uses_the_whole_pipe),
		cmocka_unit_test(test_wash_clears_the_dscp_keeps_ecn_and_fixes_the_checksum),
		cmocka_unit_test(test_dscp_selects_the_tins_of_cakes_presets),
		cmocka_unit_test(test_a_voice_flow_never_shares_a_queue_with_a_best_effort_flow),
		cmocka_unit_test(test_tins_need_a_scheduler_with_tin_state),
	};

	if (test_eal_init("tins", 16383, 256) != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
