/* SPDX-License-Identifier: BSD-3-Clause */
/* Congestion control alone: NewReno (RFC 5681) and CUBIC (RFC 9438)
 * windows against values computed by hand from the RFC formulas. */

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tcp_cc.h"

#define MSS 1000u
#define MS(x) ((uint64_t)(x) * 1000000ull)

static void
newreno_slow_start_adds_the_bytes_acked_up_to_two_mss_per_ack(void **state)
{
	struct tcp_cc cc;

	(void)state;
	tcp_cc_newreno.init(&cc, MSS, 10 * MSS);
	tcp_cc_newreno.on_ack(&cc, MSS, MS(1), 0);
	assert_int_equal(cc.cwnd, 11 * MSS);
	tcp_cc_newreno.on_ack(&cc, 5 * MSS, MS(2), 0); /* a stretch ACK */
	assert_int_equal(cc.cwnd, 13 * MSS);
}

static void
newreno_congestion_avoidance_adds_one_mss_per_window_acked(void **state)
{
	struct tcp_cc cc;

	(void)state;
	tcp_cc_newreno.init(&cc, MSS, 10 * MSS);
	cc.ssthresh = 10 * MSS;
	for (int i = 0; i < 9; i++)
		tcp_cc_newreno.on_ack(&cc, MSS, MS(i), 0);
	assert_int_equal(cc.cwnd, 10 * MSS);
	tcp_cc_newreno.on_ack(&cc, MSS, MS(10), 0);
	assert_int_equal(cc.cwnd, 11 * MSS);
}

static void
newreno_halves_the_flight_on_loss_and_drops_to_one_mss_on_rto(void **state)
{
	struct tcp_cc cc;

	(void)state;
	tcp_cc_newreno.init(&cc, MSS, 40 * MSS);
	tcp_cc_newreno.on_congestion(&cc, 40 * MSS, 0);
	assert_int_equal(cc.ssthresh, 20 * MSS);
	assert_int_equal(cc.cwnd, 20 * MSS);
	tcp_cc_newreno.on_rto(&cc, 3 * MSS, 0);
	assert_int_equal(cc.ssthresh, 2 * MSS); /* never below 2 MSS */
	assert_int_equal(cc.cwnd, MSS);
}

static void
cubic_cuts_to_beta_and_remembers_the_window_before(void **state)
{
	struct tcp_cc cc;

	(void)state;
	tcp_cc_cubic.init(&cc, MSS, 100 * MSS);
	tcp_cc_cubic.on_congestion(&cc, 100 * MSS, 0);
	assert_int_equal(cc.cwnd, 70 * MSS);
	assert_int_equal(cc.ssthresh, 70 * MSS);
	assert_true(fabs(cc.w_max - 100.0) < 1e-9);
	/* Fast convergence (4.7): a loss below w_max lowers it further,
	 * to cwnd * (1 + beta) / 2. */
	cc.cwnd = 90 * MSS;
	tcp_cc_cubic.on_congestion(&cc, 90 * MSS, 0);
	assert_true(fabs(cc.w_max - 76.5) < 1e-9);
	assert_int_equal(cc.cwnd, 63 * MSS);
	tcp_cc_cubic.on_rto(&cc, 63 * MSS, 0);
	assert_int_equal(cc.cwnd, MSS);
	assert_int_equal(cc.ssthresh, 44100); /* 63 * 0.7 = 44.1 segments */
}

/* Ack a full window every RTT, one ACK per MSS spread over the round;
 * return cwnd in segments at time t (s) after the reduction. */
static double
cubic_after(double t_end, double rtt_s)
{
	struct tcp_cc cc;
	uint64_t now = MS(1000), rtt = (uint64_t)(rtt_s * 1e9), t0;

	tcp_cc_cubic.init(&cc, MSS, 100 * MSS);
	cc.ssthresh = 100 * MSS;
	tcp_cc_cubic.on_congestion(&cc, 100 * MSS, now);
	t0 = now;
	while (now - t0 < (uint64_t)(t_end * 1e9)) {
		uint32_t n = cc.cwnd / MSS;

		for (uint32_t i = 0; i < n; i++)
			tcp_cc_cubic.on_ack(&cc, MSS, now + rtt * i / n, rtt);
		now += rtt;
	}
	return (double)cc.cwnd / MSS;
}

static void
cubic_follows_w_cubic_through_its_plateau(void **state)
{
	/* W_max = 100, cwnd after the cut 70, C = 0.4:
	 * K = cbrt((100 - 70) / 0.4) = cbrt(75) = 4.2172 s and
	 * W(t) = 0.4 (t - K)^3 + 100:
	 *   W(1) = 86.68, W(2) = 95.64, W(K) = 100.00, W(5) = 100.19.
	 * The window follows W within a segment or two (it aims at
	 * W(t + RTT) and lags one round). */
	static const struct { double t, w; } pts[] = {
		{ 1.0, 86.68 }, { 2.0, 95.64 }, { 4.2172, 100.00 }, { 5.0, 100.19 },
	};

	(void)state;
	for (unsigned int i = 0; i < sizeof(pts) / sizeof(pts[0]); i++) {
		double got = cubic_after(pts[i].t, 0.1);

		print_message("t=%.2f s: cwnd %.2f, W_cubic %.2f\n", pts[i].t, got, pts[i].w);
		assert_true(fabs(got - pts[i].w) <= 1.5);
	}
}

static void
cubic_grows_like_reno_where_reno_would_be_faster(void **state)
{
	/* W_est (4.3) starts at 70 and gains alpha = 3 * 0.3 / 1.7 = 0.529
	 * segments per RTT until it reaches W_max = 100 (56.7 rounds), then
	 * 1 per RTT: after 80 rounds of 100 ms, 100 + 23.3 = 123.3, above
	 * W(8) = 0.4 * (8 - 4.2172)^3 + 100 = 121.65. */
	double got = cubic_after(8.0, 0.1);

	(void)state;
	print_message("t=8 s: cwnd %.2f (W_est 123.3, W_cubic 121.65)\n", got);
	assert_true(fabs(got - 123.3) <= 1.5);
}

static void
cubic_never_grows_more_than_half_a_window_per_rtt(void **state)
{
	struct tcp_cc cc;
	uint64_t now = MS(1000);

	(void)state;
	tcp_cc_cubic.init(&cc, MSS, 100 * MSS);
	cc.ssthresh = 100 * MSS;
	tcp_cc_cubic.on_congestion(&cc, 100 * MSS, now);
	/* 60 s later W(t) is far above 1.5 cwnd; one round may only add
	 * half a window. */
	tcp_cc_cubic.on_ack(&cc, MSS, now, MS(100));
	now += MS(60000);
	for (int i = 0; i < 70; i++)
		tcp_cc_cubic.on_ack(&cc, MSS, now, MS(100));
	assert_true(cc.cwnd <= 105 * MSS + MSS);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(newreno_slow_start_adds_the_bytes_acked_up_to_two_mss_per_ack),
		cmocka_unit_test(newreno_congestion_avoidance_adds_one_mss_per_window_acked),
		cmocka_unit_test(newreno_halves_the_flight_on_loss_and_drops_to_one_mss_on_rto),
		cmocka_unit_test(cubic_cuts_to_beta_and_remembers_the_window_before),
		cmocka_unit_test(cubic_follows_w_cubic_through_its_plateau),
		cmocka_unit_test(cubic_grows_like_reno_where_reno_would_be_faster),
		cmocka_unit_test(cubic_never_grows_more_than_half_a_window_per_rtt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
