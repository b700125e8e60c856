/* SPDX-License-Identifier: BSD-3-Clause */
/* NewReno (RFC 5681 with RFC 3465 byte counting) and CUBIC (RFC 9438). */

#include <math.h>

#include "tcp_cc.h"

#define MAX2(a, b) ((a) > (b) ? (a) : (b))
#define MIN2(a, b) ((a) < (b) ? (a) : (b))

static void
reno_init(struct tcp_cc *cc, uint32_t mss, uint32_t iw)
{
	cc->mss = mss;
	cc->cwnd = iw;
	cc->ssthresh = UINT32_MAX;
	cc->ca_acked = 0;
}

/* Slow start: RFC 5681 3.1 with byte counting limited to 2*SMSS per ACK
 * (RFC 3465 L = 2). Returns the bytes not used by slow start. */
static uint32_t
slow_start(struct tcp_cc *cc, uint32_t acked)
{
	uint32_t room = cc->ssthresh - cc->cwnd;
	uint32_t inc = MIN2(acked, 2 * cc->mss);

	if (inc >= room) {
		cc->cwnd = cc->ssthresh;
		return acked > room ? acked - room : 0;
	}
	cc->cwnd += inc;
	return 0;
}

static void
reno_on_ack(struct tcp_cc *cc, uint32_t acked, uint64_t now_ns, uint64_t srtt_ns)
{
	(void)now_ns; (void)srtt_ns;
	if (cc->cwnd < cc->ssthresh) {
		acked = slow_start(cc, acked);
		if (acked == 0)
			return;
	}
	/* Congestion avoidance: one SMSS per cwnd of bytes acked (3.1). */
	cc->ca_acked += acked;
	if (cc->ca_acked >= cc->cwnd) {
		cc->ca_acked -= cc->cwnd;
		cc->cwnd += cc->mss;
	}
}

static uint32_t
half_flight(const struct tcp_cc *cc, uint32_t flight)
{
	/* RFC 5681 eq. 4: ssthresh = max(FlightSize / 2, 2*SMSS). */
	return MAX2(flight / 2, 2 * cc->mss);
}

static void
reno_on_congestion(struct tcp_cc *cc, uint32_t flight, uint64_t now_ns)
{
	(void)now_ns;
	cc->ssthresh = half_flight(cc, flight);
	cc->cwnd = cc->ssthresh;
	cc->ca_acked = 0;
}

static void
reno_on_rto(struct tcp_cc *cc, uint32_t flight, uint64_t now_ns)
{
	(void)now_ns;
	cc->ssthresh = half_flight(cc, flight);
	cc->cwnd = cc->mss; /* loss window, RFC 5681 3.1 */
	cc->ca_acked = 0;
}

const struct tcp_cc_ops tcp_cc_newreno = {
	.name = "newreno",
	.init = reno_init,
	.on_ack = reno_on_ack,
	.on_congestion = reno_on_congestion,
	.on_rto = reno_on_rto,
};

double
tcp_cubic_window(const struct tcp_cc *cc, double t)
{
	double d = t - cc->k;

	return TCP_CUBIC_C * d * d * d + cc->w_max;
}

static void
cubic_init(struct tcp_cc *cc, uint32_t mss, uint32_t iw)
{
	reno_init(cc, mss, iw);
	cc->w_max = 0;
	cc->w_est = 0;
	cc->k = 0;
	cc->cwnd_epoch = 0;
	cc->epoch_ns = 0;
}

static void
cubic_on_ack(struct tcp_cc *cc, uint32_t acked, uint64_t now_ns, uint64_t srtt_ns)
{
	double cwnd, target, t, segs;

	if (cc->cwnd < cc->ssthresh) {
		acked = slow_start(cc, acked);
		if (acked == 0)
			return;
	}
	cwnd = (double)cc->cwnd / cc->mss;
	if (cc->epoch_ns == 0) {
		/* Section 4.2: a new congestion avoidance stage starts. If no
		 * reduction set w_max (slow start exited by ssthresh), the
		 * curve starts on its plateau at the current window. */
		cc->epoch_ns = now_ns;
		cc->cwnd_epoch = cwnd;
		if (cc->w_max < cwnd)
			cc->w_max = cwnd;
		cc->k = cbrt((cc->w_max - cwnd) / TCP_CUBIC_C); /* eq. 2 */
		cc->w_est = cwnd;
	}
	t = (double)(now_ns - cc->epoch_ns) / 1e9;
	segs = (double)acked / cc->mss;

	/* Reno-friendly estimate (section 4.3, eq. 4); alpha becomes 1 once
	 * the estimate passes w_max. */
	{
		double alpha = cc->w_est >= cc->w_max ? 1.0 :
			3.0 * (1.0 - TCP_CUBIC_BETA) / (1.0 + TCP_CUBIC_BETA);
		cc->w_est += alpha * segs / cwnd;
	}
	if (tcp_cubic_window(cc, t) < cc->w_est) {
		cwnd = cc->w_est;
	} else {
		/* Concave and convex regions (4.4, 4.5): move toward
		 * W_cubic(t + RTT), at most 1.5 cwnd. */
		target = tcp_cubic_window(cc, t + (double)srtt_ns / 1e9);
		if (target < cwnd)
			target = cwnd;
		if (target > 1.5 * cwnd)
			target = 1.5 * cwnd;
		cwnd += (target - cwnd) / cwnd * segs;
	}
	if (cwnd * cc->mss > (double)UINT32_MAX / 2)
		cwnd = (double)UINT32_MAX / 2 / cc->mss;
	if ((uint32_t)(cwnd * cc->mss) > cc->cwnd)
		cc->cwnd = (uint32_t)(cwnd * cc->mss);
}

/* Section 4.6 (multiplicative decrease) and 4.7 (fast convergence). */
static void
cubic_reduce(struct tcp_cc *cc)
{
	double cwnd = (double)cc->cwnd / cc->mss;
	uint32_t ss;

	if (cwnd < cc->w_max)
		cc->w_max = cwnd * (1.0 + TCP_CUBIC_BETA) / 2.0;
	else
		cc->w_max = cwnd;
	ss = (uint32_t)(cwnd * TCP_CUBIC_BETA * cc->mss + 0.5);
	cc->ssthresh = MAX2(ss, 2 * cc->mss);
	cc->epoch_ns = 0;
}

static void
cubic_on_congestion(struct tcp_cc *cc, uint32_t flight, uint64_t now_ns)
{
	(void)flight; (void)now_ns;
	cubic_reduce(cc);
	cc->cwnd = cc->ssthresh;
}

static void
cubic_on_rto(struct tcp_cc *cc, uint32_t flight, uint64_t now_ns)
{
	(void)flight; (void)now_ns;
	/* Section 4.8: ssthresh as for any congestion event, cwnd as Reno. */
	cubic_reduce(cc);
	cc->cwnd = cc->mss;
}

const struct tcp_cc_ops tcp_cc_cubic = {
	.name = "cubic",
	.init = cubic_init,
	.on_ack = cubic_on_ack,
	.on_congestion = cubic_on_congestion,
	.on_rto = cubic_on_rto,
};
