/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The deficit shaper and the pipe scheduler: rate accuracy, link overhead
 * arithmetic, rate changes, idle behaviour, many pipes. Virtual clock.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "aqm_test_util.h"

#define US 1000ULL
#define MS 1000000ULL
#define T0 (1000 * MS)

/* Bits per second a backlogged pipe sends during one virtual second. */
static double
measure_rate(uint64_t rate, uint16_t len, const char *profile)
{
	struct aqm_pipe_params pp;
	struct aqm_sched *s;
	struct rte_mbuf *out[256];
	uint64_t bytes = 0, first = 0, last = 0, last_len = 0;
	unsigned int queued = 0;

	aqm_pipe_params_default(&pp);
	pp.shaper.rate_bps = rate;
	pp.fq.codel.target_ns = 10000 * MS; /* measure the shaper alone */
	if (profile != NULL)
		assert_int_equal(aqm_shaper_profile(profile, &pp.shaper), 0);
	s = test_sched(&pp, 1);
	assert_non_null(s);
	for (uint64_t now = T0; now < T0 + 1000 * MS; now += 10 * US) {
		uint16_t n;

		while (queued < 200) {
			struct rte_mbuf *m = test_pkt4(1, len, 0);

			assert_non_null(m);
			aqm_sched_pipe_enqueue_burst(s, 0, &m, 1, now);
			queued++;
		}
		n = aqm_sched_dequeue_burst(s, out, 256, now);
		for (uint16_t i = 0; i < n; i++) {
			last_len = aqm_wire_len(&pp.shaper, rte_pktmbuf_pkt_len(out[i]));
			bytes += last_len;
			if (first == 0)
				first = now;
			last = now;
		}
		queued -= n;
		rte_pktmbuf_free_bulk(out, n);
	}
	while ((queued = aqm_sched_flush_burst(s, out, 256)) > 0)
		rte_pktmbuf_free_bulk(out, queued);
	aqm_sched_free(s);
	/* Bits over the time the link was busy: first start to last end. */
	return (double)bytes * 8 /
	       ((double)(last - first) / 1e9 + (double)last_len * 8 / (double)rate);
}

static void
test_shaper_output_is_within_half_a_percent_of_the_rate_from_1mbit_to_40gbit(void **state)
{
	static const uint64_t rates[] = {
		1000000ULL, 10000000ULL, 100000000ULL, 1000000000ULL,
		10000000000ULL, 40000000000ULL,
	};

	(void)state;
	for (size_t i = 0; i < RTE_DIM(rates); i++) {
		double got = measure_rate(rates[i], 1500, NULL);
		double err = fabs(got - (double)rates[i]) / (double)rates[i];

		print_message("rate %llu: got %.0f (%.4f%%)\n",
			      (unsigned long long)rates[i], got, err * 100);
		assert_true(err <= 0.005);
	}
}

static void
test_a_pipe_reads_back_the_shaper_it_was_given_within_a_millionth(void **state)
{
	static const uint64_t rates[] = { 64000ULL, 2999999ULL, 30000000ULL,
					  1000000000ULL, 100000000000ULL };
	struct aqm_pipe_params pp;
	struct aqm_shaper_params sp, got;
	struct aqm_sched *s;

	(void)state;
	aqm_pipe_params_default(&pp);
	pp.shaper.rate_bps = 10000000;
	s = test_sched(&pp, 1);
	assert_non_null(s);
	assert_int_equal(aqm_shaper_profile("adsl-pppoe", &sp), 0);
	for (size_t i = 0; i < RTE_DIM(rates); i++) {
		sp.rate_bps = rates[i];
		assert_int_equal(aqm_sched_pipe_set_shaper(s, 0, &sp), 0);
		assert_int_equal(aqm_sched_pipe_shaper(s, 0, &got), 0);
		/* The pipe keeps ns per byte in Q24: exact to 1 Gbit/s,
		 * 2e-7 off at 100 Gbit/s. */
		assert_in_range(got.rate_bps, rates[i] - rates[i] / 1000000,
				rates[i] + rates[i] / 1000000);
		assert_int_equal(got.overhead, sp.overhead);
		assert_int_equal(got.mpu, sp.mpu);
		assert_int_equal(got.framing, sp.framing);
	}
	assert_int_equal(aqm_sched_pipe_shaper(s, 1, &got), -EINVAL);
	aqm_sched_free(s);
}

static void
test_shaper_counts_atm_cells_on_the_wire(void **state)
{
	double got;

	(void)state;
	got = measure_rate(2000000, 100, "adsl-pppoe");
	assert_true(fabs(got - 2e6) / 2e6 <= 0.005);
}

static void
test_overhead_mpu_atm_and_ptm_arithmetic_matches_hand_computed_values(void **state)
{
	struct aqm_shaper_params sp = { 0 };

	(void)state;
	assert_int_equal(aqm_wire_len(&sp, 1500), 1500);
	sp.overhead = 24;
	sp.mpu = 84;
	assert_int_equal(aqm_wire_len(&sp, 1500), 1524);
	assert_int_equal(aqm_wire_len(&sp, 40), 84);     /* 64 < mpu */
	sp = (struct aqm_shaper_params){ .overhead = 10, .framing = AQM_FRAMING_ATM };
	assert_int_equal(aqm_wire_len(&sp, 100), 159);    /* 110 B: 3 cells */
	assert_int_equal(aqm_wire_len(&sp, 86), 106);     /* 96 B: exactly 2 */
	assert_int_equal(aqm_wire_len(&sp, 87), 159);     /* 97 B: 3 cells */
	sp = (struct aqm_shaper_params){ .overhead = 8, .framing = AQM_FRAMING_PTM };
	assert_int_equal(aqm_wire_len(&sp, 1500), 1532);  /* 1508 + 24 */
	assert_int_equal(aqm_wire_len(&sp, 56), 65);      /* 64 + 1 */
	sp = (struct aqm_shaper_params){ .overhead = -8 };
	assert_int_equal(aqm_wire_len(&sp, 60), 52);
	assert_int_equal(aqm_shaper_profile("vdsl2", &sp), 0);
	assert_int_equal(aqm_wire_len(&sp, 1500), 1540);  /* 1516 + 24 */
	assert_int_equal(aqm_shaper_profile("adsl-pppoe", &sp), 0);
	assert_int_equal(aqm_wire_len(&sp, 1514), 1749);  /* 1540 B: 33 cells */
	assert_int_equal(aqm_shaper_profile("ethernet", &sp), 0);
	assert_int_equal(aqm_wire_len(&sp, 60), 84);
	assert_int_equal(aqm_shaper_profile("nope", &sp), -ENOENT);
}

static void
test_rates_parse_with_units(void **state)
{
	uint64_t r;

	(void)state;
	assert_int_equal(aqm_parse_rate("40mbit", &r), 0);
	assert_int_equal(r, 40000000);
	assert_int_equal(aqm_parse_rate("1.5G", &r), 0);
	assert_int_equal(r, 1500000000);
	assert_int_equal(aqm_parse_rate("64kbit", &r), 0);
	assert_int_equal(r, 64000);
	assert_int_equal(aqm_parse_rate("100000", &r), 0);
	assert_int_equal(r, 100000);
	assert_int_equal(aqm_parse_rate("fast", &r), -EINVAL);
	assert_int_equal(aqm_parse_rate("10 mbits", &r), -EINVAL);
}

static void
test_rate_change_keeps_queued_packets_and_their_order(void **state)
{
	struct aqm_pipe_params pp;
	struct aqm_shaper_params sp;
	struct aqm_pipe_stats st;
	struct aqm_sched *s;
	struct rte_mbuf *in[100], *out[256];
	unsigned int got = 0;
	uint64_t now = T0, first_slow = 0;

	(void)state;
	aqm_pipe_params_default(&pp);
	pp.shaper.rate_bps = 10000000;
	pp.fq.codel.target_ns = 10000 * MS;
	s = test_sched(&pp, 1);
	assert_non_null(s);
	for (int i = 0; i < 100; i++)
		in[i] = test_pkt4(1, 1000, 0);
	aqm_sched_pipe_enqueue_burst(s, 0, in, 100, now);
	for (; got < 100; now += 100 * US) {
		uint16_t n;

		if (got >= 10 && first_slow == 0) {
			sp = pp.shaper;
			sp.rate_bps = 1000000;
			assert_int_equal(aqm_sched_pipe_set_shaper(s, 0, &sp), 0);
			first_slow = now;
		}
		n = aqm_sched_dequeue_burst(s, out, 256, now);
		for (uint16_t i = 0; i < n; i++, got++)
			assert_ptr_equal(out[i], in[got]);
		rte_pktmbuf_free_bulk(out, n);
	}
	aqm_sched_pipe_stats(s, 0, &st);
	assert_int_equal(st.tx_pkts, 100);
	assert_int_equal(st.drops[AQM_DROP_CODEL] + st.drops[AQM_DROP_OVERFLOW], 0);
	/* The last 90 went at 1 Mbit/s: 8 ms each. */
	assert_in_range(now - first_slow, 89 * 8 * MS, 91 * 8 * MS);
	aqm_sched_free(s);
}

static void
test_an_idle_pipe_earns_no_burst(void **state)
{
	struct aqm_pipe_params pp;
	struct aqm_sched *s;
	struct rte_mbuf *in[10], *out[16];
	unsigned int sent = 0;

	(void)state;
	aqm_pipe_params_default(&pp);
	pp.shaper.rate_bps = 8000000; /* 1000 B take 1 ms */
	s = test_sched(&pp, 1);
	assert_non_null(s);
	for (int i = 0; i < 10; i++)
		in[i] = test_pkt4(1, 1000, 0);
	/* Idle for a second, then a burst arrives: one goes, the rest wait. */
	aqm_sched_pipe_enqueue_burst(s, 0, in, 10, T0 + 1000 * MS);
	assert_int_equal(aqm_sched_dequeue_burst(s, out, 16, T0 + 1000 * MS), 1);
	rte_pktmbuf_free(out[0]);
	assert_int_equal(aqm_sched_dequeue_burst(s, out, 16, T0 + 1000 * MS + 999 * US), 0);
	assert_int_equal(aqm_sched_dequeue_burst(s, out, 16, T0 + 1001 * MS), 1);
	rte_pktmbuf_free(out[0]);
	/* Then one every millisecond: 8 more by 1009.95 ms. */
	for (uint64_t now = T0 + 1001 * MS + 100 * US; now < T0 + 1010 * MS; now += 100 * US) {
		uint16_t n = aqm_sched_dequeue_burst(s, out, 16, now);

		assert_true(n <= 1);
		sent += n;
		rte_pktmbuf_free_bulk(out, n);
	}
	assert_int_equal(sent, 8);
	aqm_sched_free(s);
}

static void
test_many_pipes_each_get_their_own_rate(void **state)
{
	enum { NP = 1000 };
	struct aqm_pipe_params pp;
	struct aqm_sched *s;
	static uint64_t bytes[NP];
	struct rte_mbuf *out[256];
	uint16_t n;

	(void)state;
	aqm_pipe_params_default(&pp);
	pp.fq.flows = 4;
	pp.fq.codel.target_ns = 10000 * MS;
	s = test_sched(&pp, NP);
	assert_non_null(s);
	/* Pipe i runs at (i % 10 + 1) * 64 kbit/s, from 64 to 640 kbit/s. */
	for (uint32_t i = 0; i < NP; i++) {
		struct aqm_shaper_params sp = { .rate_bps = (i % 10 + 1) * 64000ULL };

		assert_int_equal(aqm_sched_pipe_set_shaper(s, i, &sp), 0);
		for (int k = 0; k < 5; k++) {
			struct rte_mbuf *m = test_pkt4(i, 200, 0);

			aqm_sched_pipe_enqueue_burst(s, i, &m, 1, T0);
		}
	}
	/* 200 B at 64 kbit/s take 25 ms: after 60 ms the slowest sent 3. */
	for (uint64_t now = T0; now <= T0 + 60 * MS; now += 100 * US) {
		while ((n = aqm_sched_dequeue_burst(s, out, 256, now)) > 0) {
			for (uint16_t i = 0; i < n; i++)
				bytes[pkt_meta(out[i])->sport - 1000] += 200;
			rte_pktmbuf_free_bulk(out, n);
		}
	}
	for (uint32_t i = 0; i < NP; i++) {
		uint64_t want = RTE_MIN(5ULL, 1 + 60 * (i % 10 + 1) / 25) * 200;

		assert_int_equal(bytes[i], want);
	}
	while ((n = aqm_sched_flush_burst(s, out, 256)) > 0)
		rte_pktmbuf_free_bulk(out, n);
	aqm_sched_free(s);
}

static void
test_sojourn_percentiles_come_from_a_log_scale_histogram(void **state)
{
	uint32_t h[AQM_HIST_BUCKETS] = { 0 };

	(void)state;
	assert_int_equal(aqm_sojourn_percentile(h, 50), 0);
	h[0] = 50;   /* < 6 us */
	h[10] = 45;  /* 2^17 .. 1.5 * 2^17 ns */
	h[21] = 5;   /* 1.5 * 2^22 .. 2^23 ns */
	assert_int_equal(aqm_sojourn_percentile(h, 50), 3ULL << 11);
	assert_int_equal(aqm_sojourn_percentile(h, 95), 3ULL << 16);
	assert_int_equal(aqm_sojourn_percentile(h, 99), 1ULL << 23);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shaper_output_is_within_half_a_percent_of_the_rate_from_1mbit_to_40gbit),
		cmocka_unit_test(test_shaper_counts_atm_cells_on_the_wire),
		cmocka_unit_test(test_overhead_mpu_atm_and_ptm_arithmetic_matches_hand_computed_values),
		cmocka_unit_test(test_rates_parse_with_units),
		cmocka_unit_test(test_rate_change_keeps_queued_packets_and_their_order),
		cmocka_unit_test(test_an_idle_pipe_earns_no_burst),
		cmocka_unit_test(test_many_pipes_each_get_their_own_rate),
		cmocka_unit_test(test_sojourn_percentiles_come_from_a_log_scale_histogram),
		cmocka_unit_test(test_a_pipe_reads_back_the_shaper_it_was_given_within_a_millionth),
	};

	if (test_eal_init("shaper", 16383, 256) != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
