/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/impair timing and queueing: exact delay, jitter bounds and shape,
 * order preservation, reordering, duplication, the bounded queue and
 * flush. Virtual clock, exact release times.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "impair_test_util.h"

static struct impair *
make(const struct impair_params *p)
{
	struct impair *im = impair_create(p);

	assert_non_null(im);
	return im;
}

static void
test_fixed_delay_releases_every_packet_exactly_that_late_and_in_order(void **state)
{
	struct impair_params p;
	struct trace t;
	struct impair *im;

	(void)state;
	impair_params_default(&p);
	p.delay_ns = 40 * MS;
	im = make(&p);
	assert_int_equal(run_trace(im, 3000, T0, 333 * US, &t), 0);
	assert_int_equal(t.n, 3000);
	for (uint32_t i = 0; i < t.n; i++) {
		assert_int_equal(t.seq[i], i);
		assert_int_equal(t.out_ns[i] - t.in_ns[i], 40 * MS);
	}
	assert_true(stats_balance(im));
	trace_free(&t);
	impair_free(im);
}

static void
test_a_packet_is_not_released_one_nanosecond_before_its_time(void **state)
{
	struct impair_params p;
	struct impair *im;
	struct rte_mbuf *m = test_pkt(7), *out[4];

	(void)state;
	impair_params_default(&p);
	p.delay_ns = 20 * MS;
	im = make(&p);
	assert_int_equal(impair_enqueue_burst(im, &m, 1, T0), 1);
	assert_int_equal(impair_next_release_ns(im), T0 + 20 * MS);
	assert_int_equal(impair_dequeue_burst(im, out, 4, T0 + 20 * MS - 1), 0);
	assert_int_equal(impair_pending(im), 1);
	assert_int_equal(impair_dequeue_burst(im, out, 4, T0 + 20 * MS), 1);
	assert_ptr_equal(out[0], m);
	assert_int_equal(impair_next_release_ns(im), UINT64_MAX);
	rte_pktmbuf_free(out[0]);
	impair_free(im);
}

static void
test_uniform_jitter_stays_within_bounds_and_keeps_order_by_default(void **state)
{
	struct impair_params p;
	struct trace t;
	struct impair *im;
	uint64_t lo = UINT64_MAX, hi = 0, clamped = 0;

	(void)state;
	impair_params_default(&p);
	p.delay_ns = 20 * MS;
	p.jitter_ns = 5 * MS;
	p.limit = 10000;
	im = make(&p);
	assert_int_equal(run_trace(im, 20000, T0, 100 * US, &t), 0);
	assert_int_equal(t.n, 20000);
	for (uint32_t i = 0; i < t.n; i++) {
		uint64_t d = t.out_ns[i] - t.in_ns[i];

		assert_int_equal(t.seq[i], i);
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
		if (i > 0 && t.out_ns[i] == t.out_ns[i - 1])
			clamped++;
	}
	print_message("uniform jitter, order kept: delay %.3f..%.3f ms, %" PRIu64 " packets held to keep order\n",
		      lo / 1e6, hi / 1e6, clamped);
	assert_true(lo >= 15 * MS);
	assert_true(hi <= 25 * MS);
	assert_true(clamped > 0);
	assert_int_equal(impair_stats(im)->jitter_reordered, 0);
	trace_free(&t);
	impair_free(im);
}

static void
test_uniform_jitter_with_reorder_spreads_delays_evenly_and_reorders(void **state)
{
	enum { N = 20000 };
	struct impair_params p;
	struct trace t;
	struct impair *im;
	double sum = 0;
	uint64_t lo = UINT64_MAX, hi = 0, below_mid = 0, inversions = 0;

	(void)state;
	impair_params_default(&p);
	p.delay_ns = 20 * MS;
	p.jitter_ns = 5 * MS;
	p.jitter_reorder = true;
	p.limit = 10000;
	im = make(&p);
	assert_int_equal(run_trace(im, N, T0, 100 * US, &t), 0);
	assert_int_equal(t.n, N);
	for (uint32_t i = 0; i < t.n; i++) {
		uint64_t d = t.out_ns[i] - t.in_ns[i];

		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
		sum += (double)d;
		below_mid += d < 20 * MS;
		if (i > 0 && t.seq[i] < t.seq[i - 1])
			inversions++;
	}
	print_message("uniform jitter, reorder on: delay %.3f..%.3f ms, mean %.3f ms, %" PRIu64 " inversions, jitter_reordered %" PRIu64 "\n",
		      lo / 1e6, hi / 1e6, sum / N / 1e6, inversions,
		      impair_stats(im)->jitter_reordered);
	assert_true(lo >= 15 * MS && hi <= 25 * MS);
	/* Uniform on [15, 25] ms: mean 20 ms (sd of the mean 20 us), and
	 * half below the middle. */
	assert_true(fabs(sum / N - 20e6) < 100e3);
	assert_true(fabs((double)below_mid - N / 2.0) < 4 * sqrt(N / 4.0));
	assert_true(inversions > 0);
	assert_true(impair_stats(im)->jitter_reordered >= inversions);
	trace_free(&t);
	impair_free(im);
}

static void
test_normal_jitter_has_the_configured_standard_deviation(void **state)
{
	enum { N = 20000 };
	struct impair_params p;
	struct trace t;
	struct impair *im;
	double sum = 0, sq = 0;
	uint32_t within1 = 0;

	(void)state;
	impair_params_default(&p);
	p.delay_ns = 40 * MS;
	p.jitter_ns = 5 * MS;
	p.jitter_dist = IMPAIR_JITTER_NORMAL;
	p.jitter_reorder = true;
	p.limit = 10000;
	im = make(&p);
	assert_int_equal(run_trace(im, N, T0, 100 * US, &t), 0);
	assert_int_equal(t.n, N);
	for (uint32_t i = 0; i < t.n; i++) {
		double d = (double)(t.out_ns[i] - t.in_ns[i]) - 40e6;

		sum += d;
		sq += d * d;
		within1 += fabs(d) <= 5e6;
		assert_true(fabs(d) <= 30e6); /* 6 sigma */
	}
	double mean = sum / N, sd = sqrt(sq / N - mean * mean);
	print_message("normal jitter: mean offset %.1f us, sd %.3f ms, %.1f%% within 1 sd\n",
		      mean / 1e3, sd / 1e6, 100.0 * within1 / N);
	assert_true(fabs(mean) < 150e3);
	assert_true(fabs(sd - 5e6) < 0.05 * 5e6);
	assert_true(fabs((double)within1 / N - 0.683) < 0.02);
	trace_free(&t);
	impair_free(im);
}

static void
test_jitter_larger_than_the_delay_never_releases_before_arrival(void **state)
{
	struct impair_params p;
	struct trace t;
	struct impair *im;

	(void)state;
	impair_params_default(&p);
	p.delay_ns = 1 * MS;
	p.jitter_ns = 5 * MS;
	p.jitter_reorder = true;
	im = make(&p);
	assert_int_equal(run_trace(im, 2000, T0, 100 * US, &t), 0);
	assert_int_equal(t.n, 2000);
	for (uint32_t i = 0; i < t.n; i++)
		assert_true(t.out_ns[i] >= t.in_ns[i] &&
			    t.out_ns[i] <= t.in_ns[i] + 6 * MS);
	trace_free(&t);
	impair_free(im);
}

static void
test_reorder_holds_back_the_counted_packets_by_exactly_the_gap(void **state)
{
	enum { N = 10000 };
	struct impair_params p;
	struct trace t;
	struct impair *im;
	uint64_t late = 0;
	uint32_t last_on_time = 0;
	bool any = false;

	(void)state;
	impair_params_default(&p);
	p.delay_ns = 5 * MS;
	p.reorder = 0.05;
	p.reorder_gap_ns = 10 * MS;
	im = make(&p);
	assert_int_equal(run_trace(im, N, T0, 1 * MS, &t), 0);
	assert_int_equal(t.n, N);
	for (uint32_t i = 0; i < t.n; i++) {
		uint64_t d = t.out_ns[i] - t.in_ns[i];

		if (d == 15 * MS) {
			late++;
		} else {
			/* The others keep their order and their delay. */
			assert_int_equal(d, 5 * MS);
			if (any)
				assert_true(t.seq[i] > last_on_time);
			last_on_time = t.seq[i];
			any = true;
		}
	}
	print_message("reorder 5%%: %" PRIu64 " of %d packets held back 10 ms\n",
		      late, N);
	assert_int_equal(late, impair_stats(im)->reordered);
	assert_true(fabs((double)late - N * 0.05) < 4 * sqrt(N * 0.05 * 0.95));
	trace_free(&t);
	impair_free(im);
}

static void
test_duplicates_are_identical_independent_copies_right_after_the_original(void **state)
{
	enum { N = 10000 };
	struct impair_params p;
	struct impair *im;
	struct rte_mbuf *in, *out[8];
	uint64_t dups = 0;

	(void)state;
	impair_params_default(&p);
	p.duplicate = 0.1;
	im = make(&p);
	for (uint32_t i = 0; i < N; i++) {
		uint16_t q, k;

		in = test_pkt(i);
		assert_non_null(in);
		q = impair_enqueue_burst(im, &in, 1, T0 + i * US);
		k = impair_dequeue_burst(im, out, 8, T0 + i * US);
		assert_int_equal(k, q);
		assert_ptr_equal(out[0], in);
		if (k == 2) {
			dups++;
			assert_ptr_not_equal(out[1], out[0]);
			assert_int_equal(rte_mbuf_refcnt_read(out[1]), 1);
			assert_int_equal(RTE_MBUF_DIRECT(out[1]), 1);
			assert_int_equal(out[1]->pkt_len, out[0]->pkt_len);
			assert_memory_equal(rte_pktmbuf_mtod(out[1], void *),
					    rte_pktmbuf_mtod(out[0], void *),
					    PKT_LEN);
			assert_memory_equal(rte_mbuf_to_priv(out[1]),
					    rte_mbuf_to_priv(out[0]), PRIV_SIZE);
			/* Writing one leaves the other alone. */
			rte_pktmbuf_mtod(out[0], uint8_t *)[5] ^= 0xff;
			assert_int_not_equal(rte_pktmbuf_mtod(out[1], uint8_t *)[5],
					     rte_pktmbuf_mtod(out[0], uint8_t *)[5]);
		} else {
			assert_int_equal(k, 1);
		}
		rte_pktmbuf_free_bulk(out, k);
	}
	print_message("duplicate 10%%: %" PRIu64 " copies of %d packets\n", dups, N);
	assert_int_equal(dups, impair_stats(im)->duplicated);
	assert_int_equal(impair_stats(im)->out, N + dups);
	assert_true(fabs((double)dups - N * 0.1) < 4 * sqrt(N * 0.1 * 0.9));
	assert_true(stats_balance(im));
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
	impair_free(im);
}

static void
test_a_full_queue_drops_arrivals_and_copies_as_overflow(void **state)
{
	struct impair_params p;
	struct impair *im;
	struct rte_mbuf *pkts[25], *out[32];

	(void)state;
	impair_params_default(&p);
	p.delay_ns = 1000 * MS;
	p.limit = 10;
	p.duplicate = 1.0;
	im = make(&p);
	for (uint32_t i = 0; i < 25; i++)
		pkts[i] = test_pkt(i);
	/* 25 arrivals, each with a copy: 5 originals + 5 copies fit. */
	assert_int_equal(impair_enqueue_burst(im, pkts, 25, T0), 10);
	assert_int_equal(impair_pending(im), 10);
	assert_int_equal(impair_stats(im)->duplicated, 25);
	assert_int_equal(impair_stats(im)->overflow, 40);
	assert_true(stats_balance(im));
	assert_int_equal(rte_mempool_in_use_count(test_pool), 10);
	/* Shutdown releases the rest at once, in order, counted as early. */
	assert_int_equal(impair_flush_burst(im, out, 32, T0 + MS), 10);
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(pkt_seq(out[i]), i / 2);
	assert_int_equal(impair_stats(im)->flushed_early, 10);
	assert_int_equal(impair_pending(im), 0);
	assert_true(stats_balance(im));
	rte_pktmbuf_free_bulk(out, 10);
	impair_free(im);
}

static void
test_freeing_an_instance_returns_every_held_packet_to_the_pool(void **state)
{
	struct impair_params p;
	struct impair *im;

	(void)state;
	impair_params_default(&p);
	p.delay_ns = 50 * MS;
	p.jitter_ns = 20 * MS;
	p.jitter_reorder = true;
	im = make(&p);
	for (uint32_t i = 0; i < 500; i++) {
		struct rte_mbuf *m = test_pkt(i);

		impair_enqueue_burst(im, &m, 1, T0 + i * US);
	}
	assert_int_equal(impair_pending(im), 500);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 500);
	impair_free(im);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
}

static void
test_the_in_order_ring_wraps_and_frees_what_it_holds(void **state)
{
	struct impair_params p;
	struct impair *im;
	struct rte_mbuf *m, *out[4];
	uint32_t next_out = 0;

	(void)state;
	impair_params_default(&p);
	p.delay_ns = 5 * US;
	p.limit = 7;
	im = make(&p);
	/* One arrival per microsecond, 5 us of delay: 5 or 6 held, and the
	 * ring wraps every 7 slots. */
	for (uint32_t i = 0; i < 100; i++) {
		uint16_t k;

		m = test_pkt(i);
		assert_int_equal(impair_enqueue_burst(im, &m, 1, T0 + i * US), 1);
		k = impair_dequeue_burst(im, out, 4, T0 + i * US);
		for (uint16_t j = 0; j < k; j++)
			assert_int_equal(pkt_seq(out[j]), next_out++);
		rte_pktmbuf_free_bulk(out, k);
	}
	assert_int_equal(next_out, 95);
	assert_int_equal(impair_pending(im), 5);
	assert_int_equal(impair_stats(im)->overflow, 0);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 5);
	impair_free(im);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
}

static void
test_everything_at_once_keeps_the_books_balanced(void **state)
{
	struct impair_params p;
	struct trace t;
	struct impair *im;
	const struct impair_stats *s;

	(void)state;
	impair_params_default(&p);
	p.loss = 0.02;
	p.ge_p = 0.01;
	p.ge_r = 0.3;
	p.ge_loss_good = 0.001;
	p.ge_loss_bad = 0.8;
	p.delay_ns = 30 * MS;
	p.jitter_ns = 10 * MS;
	p.jitter_dist = IMPAIR_JITTER_NORMAL;
	p.duplicate = 0.02;
	p.reorder = 0.01;
	p.limit = 200;
	im = make(&p);
	assert_int_equal(run_trace(im, 50000, T0, 50 * US, &t), 0);
	s = impair_stats(im);
	assert_int_equal(s->in, 50000);
	assert_true(s->overflow > 0); /* 600 packets in flight, limit 200 */
	assert_int_equal(s->out, t.n);
	assert_true(stats_balance(im));
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
	trace_free(&t);
	impair_free(im);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixed_delay_releases_every_packet_exactly_that_late_and_in_order),
		cmocka_unit_test(test_a_packet_is_not_released_one_nanosecond_before_its_time),
		cmocka_unit_test(test_uniform_jitter_stays_within_bounds_and_keeps_order_by_default),
		cmocka_unit_test(test_uniform_jitter_with_reorder_spreads_delays_evenly_and_reorders),
		cmocka_unit_test(test_normal_jitter_has_the_configured_standard_deviation),
		cmocka_unit_test(test_jitter_larger_than_the_delay_never_releases_before_arrival),
		cmocka_unit_test(test_reorder_holds_back_the_counted_packets_by_exactly_the_gap),
		cmocka_unit_test(test_duplicates_are_identical_independent_copies_right_after_the_original),
		cmocka_unit_test(test_a_full_queue_drops_arrivals_and_copies_as_overflow),
		cmocka_unit_test(test_freeing_an_instance_returns_every_held_packet_to_the_pool),
		cmocka_unit_test(test_the_in_order_ring_wraps_and_frees_what_it_holds),
		cmocka_unit_test(test_everything_at_once_keeps_the_books_balanced),
	};

	if (test_eal_init("delay", 8191) != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
