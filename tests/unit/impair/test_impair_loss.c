/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/impair loss: random loss, Gilbert-Elliott bursts against the model,
 * determinism and stream independence, parameter checks. Virtual clock.
 *
 * The exact counts below are what seed 1 (or the seed named) gives with
 * xoshiro256** seeded through splitmix64; each also sits inside a
 * statistical bound, so a failure says whether the generator changed (the
 * exact count) or the model broke (the bound).
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

/* Lost packet numbers as a bitmap-free list: count runs of consecutive
 * missing numbers in a trace without duplicates or reordering. */
static void
loss_runs(const struct trace *t, uint32_t n, uint64_t *lost, uint64_t *runs)
{
	uint32_t expect = 0;

	*lost = 0;
	*runs = 0;
	for (uint32_t i = 0; i <= t->n; i++) {
		uint32_t s = i < t->n ? t->seq[i] : n;

		if (s > expect) {
			*lost += s - expect;
			(*runs)++;
		}
		expect = s + 1;
	}
}

static void
test_random_loss_of_one_percent_loses_the_seeded_count_within_binomial_bounds(void **state)
{
	enum { N = 100000 };
	struct impair_params p;
	struct trace t;
	struct impair *im;
	const struct impair_stats *s;
	double sigma = sqrt(N * 0.01 * 0.99);

	(void)state;
	impair_params_default(&p);
	p.loss = 0.01;
	im = make(&p);
	assert_int_equal(run_trace(im, N, T0, 10 * US, &t), 0);
	s = impair_stats(im);
	assert_int_equal(s->in, N);
	assert_int_equal(s->out, t.n);
	assert_int_equal(s->lost_random + t.n, N);
	assert_true(fabs((double)s->lost_random - N * 0.01) < 4 * sigma);
	assert_int_equal(s->lost_random, 958);
	assert_int_equal(s->lost_ge, 0);
	for (uint32_t i = 1; i < t.n; i++)
		assert_true(t.seq[i] > t.seq[i - 1]);
	assert_true(stats_balance(im));
	trace_free(&t);
	impair_free(im);
}

static void
test_loss_of_zero_keeps_every_packet_and_loss_of_one_drops_every_packet(void **state)
{
	struct impair_params p;
	struct trace t;
	struct impair *im;

	(void)state;
	impair_params_default(&p);
	p.delay_ns = 1; /* active, but keeps everything */
	im = make(&p);
	assert_int_equal(run_trace(im, 5000, T0, US, &t), 0);
	assert_int_equal(t.n, 5000);
	trace_free(&t);
	impair_free(im);

	p.loss = 1.0;
	im = make(&p);
	assert_int_equal(run_trace(im, 5000, T0, US, &t), 0);
	assert_int_equal(t.n, 0);
	assert_int_equal(impair_stats(im)->lost_random, 5000);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
	trace_free(&t);
	impair_free(im);
}

static void
test_gilbert_loss_matches_the_stationary_rate_and_mean_burst_of_the_model(void **state)
{
	enum { N = 200000 };
	const double gp = 0.01, gr = 0.25;
	const double want_rate = gp / (gp + gr); /* 0.0385 */
	const double want_burst = 1.0 / gr;      /* 4 packets */
	struct impair_params p;
	struct trace t;
	struct impair *im;
	const struct impair_stats *s;
	uint64_t lost, runs;

	(void)state;
	impair_params_default(&p);
	p.ge_p = gp;
	p.ge_r = gr;
	p.ge_loss_good = 0.0;
	p.ge_loss_bad = 1.0;
	im = make(&p);
	assert_int_equal(run_trace(im, N, T0, US, &t), 0);
	s = impair_stats(im);
	loss_runs(&t, N, &lost, &runs);
	assert_int_equal(lost, s->lost_ge);
	/* Every Bad run is a loss burst here, so runs == Good->Bad moves,
	 * less one if the very last packet moved the channel to Bad. */
	assert_true(runs == s->ge_bursts || runs + 1 == s->ge_bursts);
	assert_int_equal(lost, s->ge_bad);
	double rate = (double)lost / N, burst = (double)lost / (double)runs;
	print_message("gilbert p=%.2f r=%.2f: loss %.4f (model %.4f), mean burst %.3f (model %.1f), %" PRIu64 " bursts\n",
		      gp, gr, rate, want_rate, burst, want_burst, runs);
	/* ~1900 bursts: the mean burst's standard error is sqrt(12)/sqrt(1900)
	 * = 0.08; the rate's relative error about 3%. Bounds are ~5 sigma. */
	assert_true(fabs(rate - want_rate) < 0.15 * want_rate);
	assert_true(fabs(burst - want_burst) < 0.4);
	assert_int_equal(s->lost_ge, 7407);
	assert_int_equal(s->ge_bursts, 1906);
	assert_true(stats_balance(im));
	trace_free(&t);
	impair_free(im);
}

static void
test_gilbert_elliott_with_lossy_good_state_matches_the_four_parameter_model(void **state)
{
	enum { N = 200000 };
	const double gp = 0.05, gr = 0.5, lg = 0.02, lb = 0.6;
	const double pi_bad = gp / (gp + gr);
	const double want = (1 - pi_bad) * lg + pi_bad * lb; /* 0.0727 */
	struct impair_params p;
	struct trace t;
	struct impair *im;
	const struct impair_stats *s;

	(void)state;
	impair_params_default(&p);
	p.ge_p = gp;
	p.ge_r = gr;
	p.ge_loss_good = lg;
	p.ge_loss_bad = lb;
	im = make(&p);
	assert_int_equal(run_trace(im, N, T0, US, &t), 0);
	s = impair_stats(im);
	double rate = (double)s->lost_ge / N, bad = (double)s->ge_bad / N;
	print_message("gilbert-elliott: loss %.4f (model %.4f), time in Bad %.4f (model %.4f)\n",
		      rate, want, bad, pi_bad);
	assert_true(fabs(rate - want) < 0.05 * want);
	assert_true(fabs(bad - pi_bad) < 0.05 * pi_bad);
	assert_int_equal(t.n + s->lost_ge, N);
	assert_true(stats_balance(im));
	trace_free(&t);
	impair_free(im);
}

static void
test_same_seed_and_input_give_the_same_output_and_another_seed_does_not(void **state)
{
	struct impair_params p;
	struct trace a, b, c;
	struct impair *ia, *ib, *ic;

	(void)state;
	impair_params_default(&p);
	p.seed = 42;
	p.loss = 0.05;
	p.ge_p = 0.02;
	p.ge_r = 0.3;
	p.delay_ns = 5 * MS;
	p.jitter_ns = 2 * MS;
	p.jitter_reorder = true;
	p.duplicate = 0.03;
	p.reorder = 0.02;
	p.reorder_gap_ns = 3 * MS;
	ia = make(&p);
	ib = make(&p);
	assert_int_equal(run_trace(ia, 20000, T0, 50 * US, &a), 0);
	assert_int_equal(run_trace(ib, 20000, T0, 50 * US, &b), 0);
	assert_true(trace_same(&a, &b));
	assert_memory_equal(impair_stats(ia), impair_stats(ib),
			    sizeof(struct impair_stats));
	p.seed = 43;
	ic = make(&p);
	assert_int_equal(run_trace(ic, 20000, T0, 50 * US, &c), 0);
	assert_false(trace_same(&a, &c));
	trace_free(&a);
	trace_free(&b);
	trace_free(&c);
	impair_free(ia);
	impair_free(ib);
	impair_free(ic);
}

static void
test_turning_jitter_on_does_not_change_which_packets_are_lost(void **state)
{
	struct impair_params p;
	struct trace a, b;
	struct impair *ia, *ib;
	uint8_t *seen_a = calloc(20000, 1), *seen_b = calloc(20000, 1);

	(void)state;
	assert_non_null(seen_a);
	assert_non_null(seen_b);
	impair_params_default(&p);
	p.loss = 0.1;
	p.delay_ns = 10 * MS;
	ia = make(&p);
	p.jitter_ns = 5 * MS;
	p.jitter_reorder = true;
	p.reorder = 0.1;
	ib = make(&p);
	assert_int_equal(run_trace(ia, 20000, T0, 100 * US, &a), 0);
	assert_int_equal(run_trace(ib, 20000, T0, 100 * US, &b), 0);
	assert_int_equal(a.n, b.n);
	for (uint32_t i = 0; i < a.n; i++) {
		seen_a[a.seq[i]] = 1;
		seen_b[b.seq[i]] = 1;
	}
	assert_memory_equal(seen_a, seen_b, 20000);
	free(seen_a);
	free(seen_b);
	trace_free(&a);
	trace_free(&b);
	impair_free(ia);
	impair_free(ib);
}

static void
test_bad_parameters_are_refused_with_a_reason(void **state)
{
	struct impair_params p;
	char why[160];

	(void)state;
	impair_params_default(&p);
	assert_int_equal(impair_params_check(&p, why, sizeof(why)), 0);
	assert_false(impair_params_active(&p));
	p.loss = 1.5;
	assert_int_equal(impair_params_check(&p, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "loss"));
	p.loss = NAN;
	assert_int_equal(impair_params_check(&p, why, sizeof(why)), -EINVAL);
	impair_params_default(&p);
	p.ge_p = 0.1;
	p.ge_r = 0.0;
	assert_int_equal(impair_params_check(&p, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "ge_r"));
	assert_null(impair_create(&p));
	assert_int_equal(rte_errno, EINVAL);
	impair_params_default(&p);
	p.limit = 0;
	assert_int_equal(impair_params_check(&p, why, sizeof(why)), -EINVAL);
	impair_params_default(&p);
	p.delay_ns = IMPAIR_TIME_MAX + 1;
	assert_int_equal(impair_params_check(&p, why, sizeof(why)), -EINVAL);
	impair_params_default(&p);
	p.ge_loss_good = 0.01;
	assert_true(impair_params_active(&p));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_loss_of_one_percent_loses_the_seeded_count_within_binomial_bounds),
		cmocka_unit_test(test_loss_of_zero_keeps_every_packet_and_loss_of_one_drops_every_packet),
		cmocka_unit_test(test_gilbert_loss_matches_the_stationary_rate_and_mean_burst_of_the_model),
		cmocka_unit_test(test_gilbert_elliott_with_lossy_good_state_matches_the_four_parameter_model),
		cmocka_unit_test(test_same_seed_and_input_give_the_same_output_and_another_seed_does_not),
		cmocka_unit_test(test_turning_jitter_on_does_not_change_which_packets_are_lost),
		cmocka_unit_test(test_bad_parameters_are_refused_with_a_reason),
	};

	if (test_eal_init("loss", 8191) != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
