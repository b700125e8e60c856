/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The generic CoDel (lib/aqm/aqm_codel.h) against a fake queue on a virtual
 * clock: every dequeued "packet" has a sojourn and a backlog the test sets.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "aqm_codel.h"

#define MS 1000000ULL

struct fake_queue {
	uint64_t now;
	uint64_t sojourn;   /* of every packet */
	uint32_t backlog;   /* bytes left after each dequeue */
	uint64_t drops;
	uint64_t marks;
	uint64_t ect_drops; /* ops.drop_ect */
	bool ect;
	uint64_t drop_times[256];
	int token;
};

static void *
fq_dequeue(void *ctx, uint64_t *enq, uint32_t *backlog)
{
	struct fake_queue *q = ctx;

	*enq = q->now - q->sojourn;
	*backlog = q->backlog;
	return &q->token;
}

static void
fq_drop(void *ctx, void *pkt)
{
	struct fake_queue *q = ctx;

	(void)pkt;
	if (q->drops < 256)
		q->drop_times[q->drops] = q->now;
	q->drops++;
}

static bool
fq_mark(void *ctx, void *pkt, enum aqm_codel_mark_reason why)
{
	struct fake_queue *q = ctx;

	(void)pkt;
	(void)why;
	if (!q->ect)
		return false;
	q->marks++;
	return true;
}

static bool
fq_drop_ect(void *ctx, void *pkt)
{
	struct fake_queue *q = ctx;

	(void)pkt;
	if (!q->ect)
		return false;
	q->ect_drops++;
	return true;
}

static const struct aqm_codel_ops ops = {
	.dequeue = fq_dequeue, .drop = fq_drop, .mark = fq_mark,
	.drop_ect = fq_drop_ect,
};

static const struct aqm_codel_params params = {
	.target_ns = 5 * MS, .interval_ns = 100 * MS, .mtu = 1514, .ecn = true,
};

/* Dequeue one packet every step_ns from start to end. */
static void
run(struct aqm_codel_vars *v, const struct aqm_codel_params *p,
    struct fake_queue *q, uint64_t start, uint64_t end, uint64_t step)
{
	/* Shift by 1 s so now - sojourn never wraps below zero. */
	for (q->now = start + 1000 * MS; q->now < end + 1000 * MS; q->now += step)
		aqm_codel_dequeue(v, p, &ops, q, q->now);
}

static void
test_reciprocal_sqrt_tracks_one_over_sqrt_count_without_division(void **state)
{
	struct aqm_codel_vars v = { .count = 1 };

	(void)state;
	aqm_codel_update_inv_sqrt(&v);
	for (v.count = 2; v.count < 100000; v.count++) {
		double want = 1.0 / sqrt((double)v.count);
		double got;

		aqm_codel_update_inv_sqrt(&v);
		got = v.rec_inv_sqrt / 4294967296.0;
		assert_true(fabs(got - want) / want < 0.001);
	}
}

static void
test_drop_schedule_under_steady_overload_follows_the_control_law(void **state)
{
	struct aqm_codel_vars v = { 0 };
	struct fake_queue q = { .sojourn = 50 * MS, .backlog = 100000 };
	uint64_t step = 10000; /* 10 us */

	(void)state;
	run(&v, &params, &q, 1 * MS, 3000 * MS, step);
	/* Above target for one interval, then the first drop. */
	assert_true(q.drops > 30);
	assert_in_range(q.drop_times[0], 1101 * MS - step, 1101 * MS + step);
	/* Then drop k+1 comes interval/sqrt(k) after drop k. */
	for (unsigned int k = 1; k < 30; k++) {
		double gap = (double)(q.drop_times[k] - q.drop_times[k - 1]);
		double want = 100.0 * MS / sqrt((double)k);

		assert_true(fabs(gap - want) <= want * 0.005 + 2.0 * step);
	}
}

static void
test_nothing_is_dropped_while_sojourn_stays_under_target(void **state)
{
	struct aqm_codel_vars v = { 0 };
	struct fake_queue q = { .sojourn = 5 * MS - 1, .backlog = 1000000 };

	(void)state;
	run(&v, &params, &q, 1 * MS, 10000 * MS, 100000);
	assert_int_equal(q.drops, 0);
	assert_int_equal(v.dropping, 0);
}

static void
test_nothing_is_dropped_while_backlog_is_at_most_one_mtu(void **state)
{
	struct aqm_codel_vars v = { 0 };
	struct fake_queue q = { .sojourn = 500 * MS, .backlog = 1514 };

	(void)state;
	run(&v, &params, &q, 1 * MS, 5000 * MS, 100000);
	assert_int_equal(q.drops, 0);
}

static void
test_dropping_state_ends_when_sojourn_falls_below_target(void **state)
{
	struct aqm_codel_vars v = { 0 };
	struct fake_queue q = { .sojourn = 50 * MS, .backlog = 100000 };
	uint64_t drops;

	(void)state;
	run(&v, &params, &q, 1 * MS, 500 * MS, 10000);
	assert_int_equal(v.dropping, 1);
	q.sojourn = 1 * MS;
	run(&v, &params, &q, 500 * MS, 501 * MS, 10000);
	assert_int_equal(v.dropping, 0);
	drops = q.drops;
	run(&v, &params, &q, 501 * MS, 5000 * MS, 10000);
	assert_int_equal(q.drops, drops);
}

static void
test_reentering_soon_resumes_count_from_the_last_cycle(void **state)
{
	struct aqm_codel_vars v = { 0 };
	struct fake_queue q = { .sojourn = 50 * MS, .backlog = 100000 };
	uint32_t count_before;

	(void)state;
	run(&v, &params, &q, 1 * MS, 2000 * MS, 10000);
	count_before = v.count;
	assert_true(count_before > 10);
	/* Below target briefly, then above again well within 16 intervals. */
	q.sojourn = 1 * MS;
	run(&v, &params, &q, 2000 * MS, 2010 * MS, 10000);
	q.sojourn = 50 * MS;
	run(&v, &params, &q, 2010 * MS, 2200 * MS, 10000);
	assert_int_equal(v.dropping, 1);
	/* count = delta = count - lastcount (lastcount was 1), plus new drops. */
	assert_true(v.count >= count_before - 1);

	/* After a long quiet period it starts over from count 1. */
	q.sojourn = 1 * MS;
	run(&v, &params, &q, 2200 * MS, 6000 * MS, 10000);
	q.sojourn = 50 * MS;
	run(&v, &params, &q, 6000 * MS, 6101 * MS + 20000, 10000);
	assert_int_equal(v.dropping, 1);
	assert_int_equal(v.count, 1);
}

static void
test_ecn_capable_packets_are_marked_instead_of_dropped(void **state)
{
	struct aqm_codel_vars v = { 0 };
	struct fake_queue q = { .sojourn = 50 * MS, .backlog = 100000, .ect = true };

	(void)state;
	run(&v, &params, &q, 1 * MS, 3000 * MS, 10000);
	assert_int_equal(q.drops, 0);
	assert_true(q.marks > 30);
}

/*
 * ecn_drop_count: the first count - 1 signals of a dropping state are
 * marks, the rest drops of the ECT packets; the drops go on in a dropping
 * state that resumes the count (re-entry within 16 intervals), and stop in
 * one that starts over at count 1.
 */
static void
test_marks_become_drops_at_ecn_drop_count_until_the_count_starts_over(void **state)
{
	struct aqm_codel_params p = params;
	struct aqm_codel_vars v = { 0 };
	struct fake_queue q = { .sojourn = 50 * MS, .backlog = 100000, .ect = true };
	uint64_t marks, ect_drops;

	(void)state;
	p.ecn_drop_count = 16;
	run(&v, &p, &q, 1 * MS, 3000 * MS, 10000);
	/* 15 marks (counts 1..15), then about 2 s of drops at count >= 16. */
	assert_int_equal(q.marks, 15);
	assert_true(q.ect_drops > 10);
	assert_int_equal(q.drops, 0); /* every packet was ECT */
	assert_true(v.lastcount & AQM_CODEL_ECN_DROPS);
	/* 200 ms below target, then above again: resumed, still drops. */
	q.sojourn = 0;
	run(&v, &p, &q, 3000 * MS, 3200 * MS, 10000);
	q.sojourn = 50 * MS;
	marks = q.marks;
	ect_drops = q.ect_drops;
	run(&v, &p, &q, 3200 * MS, 3600 * MS, 10000);
	assert_int_equal(q.marks, marks);
	assert_true(q.ect_drops > ect_drops);
	/* Short dropping states of one signal each (from the second on,
	 * count starts at 1: a delta of 0 does not resume): still drops,
	 * not marks. */
	for (int i = 0; i < 3; i++) {
		uint64_t t = 3600 * MS + (uint64_t)i * 400 * MS;

		q.sojourn = 0;
		run(&v, &p, &q, t, t + 200 * MS, 10000);
		q.sojourn = 50 * MS;
		run(&v, &p, &q, t + 200 * MS, t + 305 * MS, 10000);
		if (i > 0)
			assert_int_equal(v.count, 1);
		q.sojourn = 0;
		run(&v, &p, &q, t + 305 * MS, t + 400 * MS, 10000);
	}
	assert_int_equal(q.marks, marks);
	/* 3 s below target: the next dropping state starts over, marking. */
	q.sojourn = 0;
	run(&v, &p, &q, 4800 * MS, 7800 * MS, 10000);
	q.sojourn = 50 * MS;
	ect_drops = q.ect_drops;
	run(&v, &p, &q, 7800 * MS, 8200 * MS, 10000);
	assert_true(q.marks > marks);
	assert_int_equal(q.ect_drops, ect_drops);
	assert_false(v.lastcount & AQM_CODEL_ECN_DROPS);
	/* Off (0): marks only, as before. */
	memset(&v, 0, sizeof(v));
	memset(&q, 0, sizeof(q));
	q.sojourn = 50 * MS;
	q.backlog = 100000;
	q.ect = true;
	run(&v, &params, &q, 1 * MS, 3000 * MS, 10000);
	assert_int_equal(q.ect_drops, 0);
	assert_true(q.marks > 30);
}

static void
test_ce_threshold_marks_every_packet_above_it(void **state)
{
	struct aqm_codel_params p = params;
	struct aqm_codel_vars v = { 0 };
	struct fake_queue q = { .sojourn = 2 * MS, .backlog = 100000, .ect = true };

	(void)state;
	p.ce_threshold_ns = 1 * MS;
	run(&v, &p, &q, 1 * MS, 101 * MS, 1 * MS);
	assert_int_equal(q.marks, 100);
	assert_int_equal(q.drops, 0);
}

/*
 * The take handed in by the caller (aqm_codel_dequeue_taken(), as FQ-CoDel
 * does) gives the same drops, marks and state as the take through ops,
 * step by step: overload, recovery, overload again soon after (count
 * resumes), ECN on and off, a CE threshold, and an empty queue.
 */
static void
test_a_take_handed_in_decides_as_the_take_through_ops(void **state)
{
	struct aqm_codel_params p = params;
	struct aqm_codel_vars va = { 0 }, vb = { 0 };
	struct fake_queue a = { .backlog = 100000 }, b = { .backlog = 100000 };
	uint64_t t = 1000 * MS;

	(void)state;
	p.ce_threshold_ns = 20 * MS;
	for (unsigned int i = 0; i < 40000; i++, t += 100000) {
		/* 1 s phases: overload, calm, overload, calm with ECN... */
		unsigned int phase = (unsigned int)(i / 10000);
		uint64_t sojourn = phase % 2 == 0 ? 30 * MS + (i % 7) * MS : 1 * MS;
		bool empty = phase % 2 == 1 && i % 997 == 0;
		void *pa, *pb;

		a.now = b.now = t;
		a.sojourn = b.sojourn = sojourn;
		a.ect = b.ect = phase >= 2;
		if (empty) {
			pa = aqm_codel_dequeue_taken(&va, &p, &ops, &a, t, NULL, 0, 0);
		} else {
			uint64_t enq;
			uint32_t backlog;
			void *head = fq_dequeue(&a, &enq, &backlog);

			pa = aqm_codel_dequeue_taken(&va, &p, &ops, &a, t, head, enq,
						     backlog);
		}
		if (empty) {
			/* The take through ops on an empty queue, by hand. */
			vb.first_above_ns = 0;
			vb.dropping = 0;
			pb = NULL;
		} else {
			pb = aqm_codel_dequeue(&vb, &p, &ops, &b, t);
		}
		assert_true((pa == NULL) == (pb == NULL));
		assert_int_equal(a.drops, b.drops);
		assert_int_equal(a.marks, b.marks);
		assert_memory_equal(&va, &vb, sizeof(va));
	}
	/* The phases did drop and mark, or the test proves nothing. */
	assert_true(a.drops > 10);
	assert_true(a.marks > 10);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reciprocal_sqrt_tracks_one_over_sqrt_count_without_division),
		cmocka_unit_test(test_drop_schedule_under_steady_overload_follows_the_control_law),
		cmocka_unit_test(test_nothing_is_dropped_while_sojourn_stays_under_target),
		cmocka_unit_test(test_nothing_is_dropped_while_backlog_is_at_most_one_mtu),
		cmocka_unit_test(test_dropping_state_ends_when_sojourn_falls_below_target),
		cmocka_unit_test(test_reentering_soon_resumes_count_from_the_last_cycle),
		cmocka_unit_test(test_ecn_capable_packets_are_marked_instead_of_dropped),
		cmocka_unit_test(test_marks_become_drops_at_ecn_drop_count_until_the_count_starts_over),
		cmocka_unit_test(test_ce_threshold_marks_every_packet_above_it),
		cmocka_unit_test(test_a_take_handed_in_decides_as_the_take_through_ops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
