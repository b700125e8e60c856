/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/prtt on a virtual clock: exact RTT samples with and without TCP
 * timestamps, Karn's rule, wrapped sequence numbers, SACK, the upstream
 * one-way-delay rise, one sample per subscriber, and the option parser.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "prtt.h"

#define US 1000ULL
#define MS 1000000ULL
#define T0 (5 * 1000000000ULL)

#define FIN 0x01
#define SYN 0x02
#define ACK 0x10

static struct prtt *
make(uint32_t subs)
{
	struct prtt_params p;
	void *mem;

	prtt_params_default(&p);
	p.subs = subs;
	mem = aligned_alloc(64, (prtt_memsize(&p) + 63) & ~(size_t)63);
	assert_non_null(mem);
	assert_non_null(prtt_init(mem, &p));
	return mem;
}

static struct prtt_seg
data(uint64_t flow, uint32_t seq, uint32_t len)
{
	struct prtt_seg s = { .flow = flow, .sub = 1, .seq = seq,
			      .payload = len, .wire_len = len + 54,
			      .flags = ACK };
	return s;
}

static struct prtt_seg
ackseg(uint64_t flow, uint32_t ack)
{
	struct prtt_seg s = { .flow = flow, .sub = 1, .ack = ack, .flags = ACK,
			      .wire_len = 54 };
	return s;
}

static struct prtt_seg
ts(struct prtt_seg s, uint32_t tsval, uint32_t tsecr)
{
	s.has_ts = 1;
	s.tsval = tsval;
	s.tsecr = tsecr;
	return s;
}

static uint64_t
last_down(const struct prtt *t, uint32_t sub)
{
	struct prtt_summary sm;

	assert_int_equal(prtt_sub_summary(t, sub, PRTT_DOWN, &sm), 0);
	return sm.last_ns;
}

static uint64_t
samples(const struct prtt *t, uint32_t sub, enum prtt_dir d)
{
	struct prtt_summary sm;

	assert_int_equal(prtt_sub_summary(t, sub, d, &sm), 0);
	return sm.samples;
}

/* Choose flow `flow` with one segment of tick `tv` (or of [seq, seq+len)
 * without timestamps): its next new data starts the sample. */
static void
choose(struct prtt *t, struct prtt_seg s, uint64_t now)
{
	prtt_down_segment(t, &s, now);
}

static void
test_an_ack_that_echoes_the_tsval_gives_the_time_since_that_tsval_was_first_sent(void **state)
{
	struct prtt *t = make(4);
	struct prtt_seg d1 = ts(data(7, 1000, 1448), 500, 90);
	struct prtt_seg d2 = ts(data(7, 2448, 1448), 500, 90);
	struct prtt_seg d3 = ts(data(7, 3896, 1448), 501, 90);

	(void)state;
	/* The first segment seen chooses the flow: its tick may have begun
	 * before, so it starts nothing. */
	choose(t, ts(data(7, 0, 1000), 499, 90), T0 - 1 * MS);
	assert_int_equal(prtt_counters(t)->ts_armed, 0);
	prtt_down_segment(t, &d1, T0);
	prtt_down_segment(t, &d2, T0 + 1 * MS);  /* same TSval: keeps T0 */
	prtt_down_segment(t, &d3, T0 + 2 * MS);  /* a second one in flight */
	struct prtt_seg a = ts(ackseg(7, 3896), 91, 500);
	prtt_up_segment(t, &a, T0 + 37 * MS + 250 * US);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 1);
	assert_int_equal(last_down(t, 1), 37 * MS + 250 * US);
	assert_int_equal(prtt_counters(t)->ts_samples, 1);
	assert_int_equal(prtt_counters(t)->ts_armed, 2);
	/* A duplicate echo of the same TSval matches nothing more. */
	prtt_up_segment(t, &a, T0 + 40 * MS);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 1);
	free(t);
}

static void
test_a_later_segment_of_a_tick_already_sent_starts_no_sample(void **state)
{
	struct prtt *t = make(4);
	struct prtt_seg d1 = ts(data(7, 1000, 1448), 500, 90);
	struct prtt_seg d2 = ts(data(7, 2448, 1448), 501, 90);
	struct prtt_seg d3 = ts(data(7, 3896, 1448), 501, 90);
	struct prtt_seg d4 = ts(data(7, 5344, 1448), 502, 90);
	struct prtt_seg a;

	(void)state;
	choose(t, ts(data(7, 0, 1000), 499, 90), T0 - 1 * MS);
	prtt_down_segment(t, &d1, T0);           /* sample on 500 */
	prtt_down_segment(t, &d2, T0 + 1 * MS);  /* 501 first sent here */
	a = ts(ackseg(7, 2448), 91, 500);
	prtt_up_segment(t, &a, T0 + 30 * MS);    /* 30 ms */
	/* More of tick 501 after the sample ended: timing it from here
	 * would read 35 ms short when the echo of 501 comes. */
	prtt_down_segment(t, &d3, T0 + 36 * MS);
	assert_int_equal(prtt_counters(t)->ts_armed, 2);
	a = ts(ackseg(7, 5344), 92, 501);
	prtt_up_segment(t, &a, T0 + 61 * MS);     /* from 501's first: 60 ms */
	assert_int_equal(samples(t, 1, PRTT_DOWN), 2);
	assert_int_equal(last_down(t, 1), 60 * MS);
	prtt_down_segment(t, &d4, T0 + 62 * MS); /* a new tick: a sample */
	assert_int_equal(prtt_counters(t)->ts_armed, 3);
	a = ts(ackseg(7, 6792), 93, 502);
	prtt_up_segment(t, &a, T0 + 92 * MS);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 3);
	assert_int_equal(last_down(t, 1), 30 * MS);
	free(t);
}

static void
test_four_tsvals_are_timed_at_once_and_an_echo_of_any_of_them_matches(void **state)
{
	struct prtt *t = make(4);
	struct prtt_seg d, a;

	(void)state;
	choose(t, ts(data(7, 0, 1000), 599, 90), T0 - 1 * MS);
	for (uint32_t i = 0; i < 6; i++) { /* 600..605, 1 ms apart; 4 slots */
		d = ts(data(7, 1000 + 1448 * i, 1448), 600 + i, 90);
		prtt_down_segment(t, &d, T0 + i * MS);
	}
	assert_int_equal(prtt_counters(t)->ts_armed, 4);
	/* The receiver echoes 602 (it acked after 601): 600 and 601 can no
	 * longer be answered, 602 is, 603 stays in flight. */
	a = ts(ackseg(7, 1000 + 1448 * 3), 91, 602);
	prtt_up_segment(t, &a, T0 + 40 * MS);
	assert_int_equal(prtt_counters(t)->ts_skipped, 2);
	assert_int_equal(last_down(t, 1), 38 * MS);
	a = ts(ackseg(7, 1000 + 1448 * 5), 92, 603);
	prtt_up_segment(t, &a, T0 + 41 * MS);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 2);
	assert_int_equal(last_down(t, 1), 38 * MS);
	free(t);
}

static void
test_one_flow_per_subscriber_is_sampled_others_wait_until_it_goes_quiet(void **state)
{
	struct prtt *t = make(4);
	struct prtt_seg d, a;

	(void)state;
	choose(t, ts(data(7, 0, 1000), 499, 90), T0 - 1 * MS);
	d = ts(data(7, 1000, 1000), 500, 90);
	prtt_down_segment(t, &d, T0);            /* flow 7: sample on 500 */
	for (uint32_t i = 0; i < 2; i++) {       /* flow 8: nothing */
		d = ts(data(8, 1000 * i, 1000), 800 + i, 90);
		prtt_down_segment(t, &d, T0 + (2 + i) * MS);
	}
	assert_int_equal(prtt_counters(t)->ts_armed, 1);
	assert_int_equal(prtt_counters(t)->candidates, 1);
	a = ts(ackseg(8, 1000), 91, 800);        /* flow 8's echo: not ours */
	prtt_up_segment(t, &a, T0 + 20 * MS);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 0);
	a = ts(ackseg(7, 2000), 91, 500);
	prtt_up_segment(t, &a, T0 + 31 * MS);    /* 31 ms; flow 7 stays chosen */
	assert_int_equal(last_down(t, 1), 31 * MS);
	d = ts(data(8, 2000, 1000), 802, 90);
	prtt_down_segment(t, &d, T0 + 31 * MS + 250 * MS);
	assert_int_equal(prtt_counters(t)->candidates, 1);
	/* Flow 7 quiet for more than idle (250 ms): flow 8 takes over, and
	 * its next tick starts the sample. */
	d = ts(data(8, 3000, 1000), 803, 90);
	prtt_down_segment(t, &d, T0 + 31 * MS + 250 * MS + 1);
	assert_int_equal(prtt_counters(t)->candidates, 2);
	assert_int_equal(prtt_counters(t)->ts_armed, 1);
	d = ts(data(8, 4000, 1000), 804, 90);
	prtt_down_segment(t, &d, T0 + 300 * MS);
	assert_int_equal(prtt_counters(t)->ts_armed, 2);
	a = ts(ackseg(8, 5000), 95, 804);
	prtt_up_segment(t, &a, T0 + 312 * MS);
	assert_int_equal(last_down(t, 1), 12 * MS);
	/* Another subscriber has a slot of its own. */
	d = ts(data(9, 0, 1000), 900, 90);
	d.sub = 2;
	prtt_down_segment(t, &d, T0 + 313 * MS);
	assert_int_equal(prtt_counters(t)->candidates, 3);
	free(t);
}

static void
test_a_flow_keeps_its_place_while_quiet_for_less_than_two_of_its_rtts(void **state)
{
	struct prtt *t = make(4);
	struct prtt_seg d, a;

	(void)state;
	choose(t, ts(data(7, 0, 1000), 499, 90), T0 - 1 * MS);
	d = ts(data(7, 1000, 1000), 500, 90);
	prtt_down_segment(t, &d, T0);
	a = ts(ackseg(7, 2000), 91, 500);
	prtt_up_segment(t, &a, T0 + 200 * MS);   /* 200 ms: quiet after 400 */
	d = ts(data(8, 0, 1000), 800, 90);
	prtt_down_segment(t, &d, T0 + 600 * MS);
	assert_int_equal(prtt_counters(t)->candidates, 1);
	prtt_down_segment(t, &d, T0 + 600 * MS + 1);
	assert_int_equal(prtt_counters(t)->candidates, 2);
	free(t);
}

/*
 * A receiver echoes the earliest TSval it has not ACKed: a flow that sends
 * two segments and stops (a control connection) leaves the second's
 * sample unanswered. The subscriber must go to a flow that sends once the
 * chosen one has been silent for its quiet time, not after max_age (the
 * lab's autorate saw no sample for 4 s at start-up and let 200 ms queue
 * beyond). A chosen flow that keeps sending keeps its place, answered or
 * not.
 */
static void
test_a_chosen_flow_silent_with_a_sample_unanswered_gives_way_after_its_quiet_time(void **state)
{
	struct prtt *t = make(4);
	struct prtt_fast f;
	struct prtt_seg d;

	(void)state;
	choose(t, ts(data(7, 0, 300), 499, 90), T0 - 1 * MS);
	d = ts(data(7, 300, 300), 500, 90);
	prtt_down_segment(t, &d, T0);            /* armed; its echo never comes */
	d = ts(data(8, 0, 1000), 800, 90);
	prtt_down_segment(t, &d, T0 + 200 * MS); /* within the quiet time */
	assert_int_equal(prtt_counters(t)->candidates, 1);
	prtt_fast_get(t, &f);
	assert_false(prtt_down_fast(&f, 1, 8, 1000, 1054, T0 + 251 * MS));
	prtt_fast_put(t, &f);
	d = ts(data(8, 1000, 1000), 801, 90);
	prtt_down_segment(t, &d, T0 + 251 * MS);
	assert_int_equal(prtt_counters(t)->candidates, 2);
	assert_int_equal(prtt_counters(t)->expired, 1);
	/* Flow 8 is chosen now and keeps sending with its sample unanswered
	 * for 300 ms: flow 9 does not take it. */
	d = ts(data(8, 2000, 1000), 802, 90);
	prtt_down_segment(t, &d, T0 + 260 * MS); /* armed */
	for (uint32_t i = 1; i <= 30; i++) {
		d = ts(data(8, 2000 + 1000 * i, 1000), 802, 90);
		prtt_down_segment(t, &d, T0 + (260 + 10 * i) * MS);
		d = ts(data(9, 1000 * i, 1000), 900 + i, 90);
		prtt_down_segment(t, &d, T0 + (260 + 10 * i) * MS + 1);
	}
	assert_int_equal(prtt_counters(t)->candidates, 2);
	assert_int_equal(prtt_counters(t)->expired, 1);
	free(t);
}

static void
test_an_echo_newer_than_the_armed_tsval_drops_the_sample_as_unknowable(void **state)
{
	struct prtt *t = make(4);
	struct prtt_seg d = ts(data(7, 1000, 1448), 500, 90);
	struct prtt_seg a = ts(ackseg(7, 2448), 91, 502);

	(void)state;
	choose(t, ts(data(7, 0, 1000), 499, 90), T0 - 1 * MS);
	prtt_down_segment(t, &d, T0);
	prtt_up_segment(t, &a, T0 + 30 * MS);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 0);
	assert_int_equal(prtt_counters(t)->ts_skipped, 1);
	/* The flow's next new tick starts a new sample. */
	d = ts(data(7, 2448, 1448), 510, 91);
	prtt_down_segment(t, &d, T0 + 31 * MS);
	a = ts(ackseg(7, 3896), 95, 510);
	prtt_up_segment(t, &a, T0 + 52 * MS);
	assert_int_equal(last_down(t, 1), 21 * MS);
	free(t);
}

static void
test_timestamps_compare_across_the_wrap_of_the_tsval_clock(void **state)
{
	struct prtt *t = make(4);
	struct prtt_seg d, a;

	(void)state;
	choose(t, ts(data(7, 0, 1000), 0xFFFFFFFEu, 90), T0 - 1 * MS);
	d = ts(data(7, 1000, 1000), 0xFFFFFFFFu, 90);
	prtt_down_segment(t, &d, T0);             /* sample on 2^32 - 1 */
	d = ts(data(7, 2000, 1000), 0, 90);
	prtt_down_segment(t, &d, T0 + 1 * MS);    /* and on 0, past the wrap */
	a = ts(ackseg(7, 3000), 91, 0);            /* 2^32 - 1 unknowable, 0 timed */
	prtt_up_segment(t, &a, T0 + 20 * MS);
	assert_int_equal(prtt_counters(t)->ts_skipped, 1);
	assert_int_equal(last_down(t, 1), 19 * MS);
	d = ts(data(7, 3000, 1000), 0, 90);        /* tick 0 again: nothing */
	prtt_down_segment(t, &d, T0 + 21 * MS);
	assert_int_equal(prtt_counters(t)->ts_armed, 2);
	d = ts(data(7, 4000, 1000), 1, 90);
	prtt_down_segment(t, &d, T0 + 22 * MS);
	a = ts(ackseg(7, 5000), 92, 1);
	prtt_up_segment(t, &a, T0 + 40 * MS);
	assert_int_equal(last_down(t, 1), 18 * MS);
	free(t);
}

static void
test_without_timestamps_the_first_cumulative_ack_covering_the_segment_gives_the_sample(void **state)
{
	struct prtt *t = make(4);
	struct prtt_seg d1 = data(9, 1000, 1000), d2 = data(9, 2000, 1000);
	struct prtt_seg a;

	(void)state;
	choose(t, data(9, 0, 1000), T0 - 1 * MS);
	prtt_down_segment(t, &d1, T0);
	prtt_down_segment(t, &d2, T0 + 1 * MS);
	a = ackseg(9, 1500); /* covers half: no sample */
	prtt_up_segment(t, &a, T0 + 20 * MS);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 0);
	a = ackseg(9, 3000); /* covers the first segment, and more */
	prtt_up_segment(t, &a, T0 + 25 * MS);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 1);
	assert_int_equal(last_down(t, 1), 25 * MS);
	assert_int_equal(prtt_counters(t)->seq_samples, 1);
	struct prtt_window w;
	assert_int_equal(prtt_sub_window_take(t, 1, PRTT_DOWN, &w), 0);
	assert_int_equal(w.samples, 1);
	assert_int_equal(w.min_ns, 25 * MS);
	assert_int_equal(w.armed, 1);
	assert_int_equal(w.acked_bytes, 0); /* one answer: no rate yet */
	assert_int_equal(w.acked_ns, 0);
	assert_int_equal(w.sent_payload, 3000);
	assert_int_equal(w.sent_wire, 3162);
	assert_int_equal(prtt_sub_window_take(t, 1, PRTT_DOWN, &w), 0);
	assert_int_equal(w.samples, 0);
	assert_int_equal(w.min_ns, UINT64_MAX);
	assert_int_equal(w.sent_payload, 0);
	free(t);
}

static void
test_the_delivered_rate_is_what_left_between_two_sample_starts_over_the_time_between_their_answers(void **state)
{
	struct prtt *t = make(4);
	struct prtt_seg d, a;
	struct prtt_window w;

	(void)state;
	choose(t, data(9, 0, 1000), T0 - 1 * MS);
	d = data(9, 1000, 1000);
	prtt_down_segment(t, &d, T0);               /* starts at 2000 sent */
	d = data(9, 2000, 1000);
	prtt_down_segment(t, &d, T0 + 5 * MS);
	a = ackseg(9, 2000);
	prtt_up_segment(t, &a, T0 + 20 * MS);
	d = data(9, 3000, 1000);
	prtt_down_segment(t, &d, T0 + 21 * MS);     /* starts at 4000 sent */
	d = data(9, 4000, 1000);
	prtt_down_segment(t, &d, T0 + 25 * MS);
	a = ackseg(9, 4000);
	prtt_up_segment(t, &a, T0 + 41 * MS);
	assert_int_equal(prtt_sub_window_take(t, 1, PRTT_DOWN, &w), 0);
	assert_int_equal(w.samples, 2);
	assert_int_equal(w.acked_bytes, 2000);
	assert_int_equal(w.acked_ns, 21 * MS);
	/* After a pause longer than the RTT, no rate: it would read the
	 * pause as a slow path. */
	d = data(9, 5000, 1000);
	prtt_down_segment(t, &d, T0 + 1041 * MS);
	a = ackseg(9, 6000);
	prtt_up_segment(t, &a, T0 + 1061 * MS);
	assert_int_equal(prtt_sub_window_take(t, 1, PRTT_DOWN, &w), 0);
	assert_int_equal(w.samples, 1);
	assert_int_equal(w.acked_bytes, 0);
	assert_int_equal(w.acked_ns, 0);
	free(t);
}

static void
test_karn_a_resent_range_gives_no_sample(void **state)
{
	struct prtt *t = make(4);
	struct prtt_seg d1 = data(9, 1000, 1000), d2 = data(9, 2000, 1000);
	struct prtt_seg a = ackseg(9, 2000);

	(void)state;
	choose(t, data(9, 0, 1000), T0 - 1 * MS);
	prtt_down_segment(t, &d1, T0);
	prtt_down_segment(t, &d2, T0 + 1 * MS);
	prtt_down_segment(t, &d1, T0 + 200 * MS); /* RTO: sent again */
	prtt_up_segment(t, &a, T0 + 230 * MS);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 0);
	assert_int_equal(prtt_counters(t)->karn_discarded, 1);
	/* A resend starts no sample either; new data does. */
	struct prtt_seg d3 = data(9, 3000, 1000);
	prtt_down_segment(t, &d2, T0 + 231 * MS);
	assert_int_equal(prtt_counters(t)->seq_armed, 1);
	prtt_down_segment(t, &d3, T0 + 232 * MS);
	assert_int_equal(prtt_counters(t)->seq_armed, 2);
	a = ackseg(9, 4000);
	prtt_up_segment(t, &a, T0 + 262 * MS);
	assert_int_equal(last_down(t, 1), 30 * MS);
	free(t);
}

static void
test_a_resend_of_other_data_keeps_the_sample_in_flight(void **state)
{
	struct prtt *t = make(4);
	struct prtt_seg d1 = data(9, 1000, 1000), d2 = data(9, 2000, 1000);
	struct prtt_seg a;

	(void)state;
	choose(t, data(9, 0, 1000), T0 - 1 * MS);
	prtt_down_segment(t, &d1, T0);          /* sample on [1000, 2000) */
	prtt_down_segment(t, &d2, T0 + 1 * MS);
	a = ackseg(9, 2000);
	prtt_up_segment(t, &a, T0 + 10 * MS);   /* sample: 10 ms */
	struct prtt_seg d3 = data(9, 3000, 1000);
	prtt_down_segment(t, &d3, T0 + 11 * MS); /* sample on [3000, 4000) */
	prtt_down_segment(t, &d2, T0 + 12 * MS); /* resend of [2000, 3000) */
	a = ackseg(9, 4000);
	prtt_up_segment(t, &a, T0 + 31 * MS);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 2);
	assert_int_equal(last_down(t, 1), 20 * MS);
	assert_int_equal(prtt_counters(t)->karn_discarded, 0);
	free(t);
}

static void
test_sequence_matching_works_across_the_wrap_of_the_sequence_space(void **state)
{
	struct prtt *t = make(4);
	struct prtt_seg d1 = data(3, 0xFFFFFC00u, 2048); /* ends at 0x400 */
	struct prtt_seg a;

	(void)state;
	choose(t, data(3, 0xFFFFF800u, 1024), T0 - 1 * MS);
	prtt_down_segment(t, &d1, T0);
	a = ackseg(3, 0xFFFFFF00u);
	prtt_up_segment(t, &a, T0 + 5 * MS);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 0);
	a = ackseg(3, 0x400u);
	prtt_up_segment(t, &a, T0 + 8 * MS);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 1);
	assert_int_equal(last_down(t, 1), 8 * MS);
	/* After the wrap, new data is still new (and a resend still Karn). */
	struct prtt_seg d2 = data(3, 0x400u, 1000);
	prtt_down_segment(t, &d2, T0 + 9 * MS);
	assert_int_equal(prtt_counters(t)->seq_armed, 2);
	struct prtt_seg d3 = data(3, 0xFFFFFC00u, 2048);
	prtt_down_segment(t, &d3, T0 + 10 * MS);   /* before the sample: kept */
	assert_int_equal(prtt_counters(t)->seq_armed, 2);
	assert_int_equal(prtt_counters(t)->karn_discarded, 0);
	prtt_down_segment(t, &d2, T0 + 11 * MS);   /* the sampled range again */
	assert_int_equal(prtt_counters(t)->karn_discarded, 1);
	free(t);
}

static void
test_a_sack_block_covering_the_segment_gives_the_sample_before_the_cumulative_ack(void **state)
{
	struct prtt *t = make(4);
	struct prtt_seg d0 = data(4, 1000, 1000), hole = data(4, 2000, 1000);
	struct prtt_seg dn = data(4, 3000, 1000), a;

	(void)state;
	choose(t, data(4, 0, 1000), T0 - 1 * MS);
	prtt_down_segment(t, &d0, T0);            /* sample on [1000, 2000) */
	prtt_down_segment(t, &hole, T0 + 1 * MS); /* lost on the way */
	a = ackseg(4, 2000);
	prtt_up_segment(t, &a, T0 + 10 * MS);     /* sample: 10 ms */
	prtt_down_segment(t, &dn, T0 + 20 * MS);  /* sample on [3000, 4000) */
	/* A block covering part of it is no answer for the whole. */
	a.nsack = 1;
	a.sack[0][0] = 3500;
	a.sack[0][1] = 4000;
	prtt_up_segment(t, &a, T0 + 33 * MS);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 1);
	/* A block covering it is, while the ACK still waits for the hole. */
	a.nsack = 2;
	a.sack[1][0] = 3000;
	a.sack[1][1] = 4000;
	prtt_up_segment(t, &a, T0 + 34 * MS);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 2);
	assert_int_equal(last_down(t, 1), 14 * MS);
	assert_int_equal(prtt_counters(t)->sack_samples, 1);
	free(t);
}

static void
test_a_sample_nobody_answers_expires_after_max_age(void **state)
{
	struct prtt *t = make(4);
	struct prtt_seg d = data(4, 1000, 1000), a = ackseg(4, 2000);

	(void)state;
	choose(t, data(4, 0, 1000), T0 - 1 * MS);
	prtt_down_segment(t, &d, T0);
	prtt_up_segment(t, &a, T0 + 4000 * MS + 1);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 0);
	assert_int_equal(prtt_counters(t)->expired, 1);
	/* The flow's next new data starts another; unanswered and its flow
	 * gone, the next flow's segment finds it expired and takes the
	 * subscriber. */
	d = data(4, 2000, 1000);
	prtt_down_segment(t, &d, T0 + 4001 * MS);
	assert_int_equal(prtt_counters(t)->seq_armed, 2);
	d = data(5, 9000, 100);
	prtt_down_segment(t, &d, T0 + 8002 * MS);
	assert_int_equal(prtt_counters(t)->expired, 2);
	assert_int_equal(prtt_counters(t)->candidates, 2);
	free(t);
}

static void
test_upstream_one_way_delay_reads_the_rise_over_the_flows_minimum(void **state)
{
	struct prtt *t = make(4);
	struct prtt_seg u;
	struct prtt_summary sm;

	(void)state;
	/* TSval ticks 1 ms; arrivals 3 ms late on the third, then 10 ms. */
	const uint64_t at[] = { 0, 1, 5, 13, 14 };
	const uint32_t tv[] = { 100, 101, 102, 103, 104 };
	const uint64_t want[] = { 0, 0, 3, 10, 10 };
	for (int i = 0; i < 5; i++) {
		u = ts(data(5, 1000 + 100 * (uint32_t)i, 100), tv[i], 7);
		prtt_up_segment(t, &u, T0 + at[i] * MS);
		assert_int_equal(prtt_sub_summary(t, 1, PRTT_UP, &sm), 0);
		assert_int_equal(sm.samples, (uint64_t)i + 1);
		assert_int_equal(sm.last_ns, want[i] * MS);
	}
	/* A second segment of the same tick gives no sample. */
	prtt_up_segment(t, &u, T0 + 15 * MS);
	assert_int_equal(prtt_counters(t)->owd_samples, 5);
	/* Arriving earlier than ever lowers the baseline: 0 again. */
	u = ts(data(5, 2000, 100), 120, 7);
	prtt_up_segment(t, &u, T0 + 19 * MS);
	assert_int_equal(prtt_sub_summary(t, 1, PRTT_UP, &sm), 0);
	assert_int_equal(sm.last_ns, 0);
	free(t);
}

static void
test_upstream_delay_comes_from_one_pinned_flow_per_subscriber_until_it_goes_quiet(void **state)
{
	struct prtt *t = make(4);
	struct prtt_seg a;

	(void)state;
	/* A download's ACKs: flow 6 is pinned by the first, and each of its
	 * new ticks gives a sample; flow 7's ACKs cost a compare. */
	a = ts(ackseg(6, 1000), 91, 499);
	prtt_up_segment(t, &a, T0);
	a = ts(ackseg(6, 1000), 91, 499);
	prtt_up_segment(t, &a, T0 + 1 * MS / 2);
	a = ts(ackseg(7, 1000), 300, 499);
	prtt_up_segment(t, &a, T0 + 1 * MS);
	a = ts(ackseg(6, 2000), 93, 500);
	prtt_up_segment(t, &a, T0 + 2 * MS);
	assert_int_equal(samples(t, 1, PRTT_UP), 2);
	assert_int_equal(prtt_counters(t)->owd_pins, 1);
	/* Flow 6 quiet for more than idle (250 ms): flow 7 takes the pin and
	 * starts its own baseline. */
	a = ts(ackseg(7, 1000), 301, 499);
	prtt_up_segment(t, &a, T0 + 252 * MS);
	assert_int_equal(prtt_counters(t)->owd_pins, 1);
	a = ts(ackseg(7, 1000), 302, 499);
	prtt_up_segment(t, &a, T0 + 253 * MS);
	assert_int_equal(prtt_counters(t)->owd_pins, 2);
	assert_int_equal(samples(t, 1, PRTT_UP), 3);
	/* Without timestamps: nothing upstream. */
	a = ackseg(8, 1000);
	prtt_up_segment(t, &a, T0 + 900 * MS);
	assert_int_equal(prtt_counters(t)->owd_pins, 2);
	assert_int_equal(prtt_counters(t)->owd_samples, 3);
	free(t);
}

/*
 * Any 64-bit value is a flow key, 0 too: a caller's key (sluice's: the
 * port pair and the address xor) need not spend instructions on a value
 * the library would reserve. A flow whose key is 0 is pinned, counted and
 * let go like any other, and the inline check tells it from the others.
 */
static void
test_a_flow_whose_key_is_zero_is_pinned_and_released_like_any_other(void **state)
{
	struct prtt *t = make(4);
	struct prtt_fast f;
	struct prtt_seg a;

	(void)state;
	a = ts(ackseg(0, 1000), 91, 499);
	prtt_up_segment(t, &a, T0);
	assert_int_equal(prtt_counters(t)->owd_pins, 1);
	a = ts(ackseg(0, 2000), 92, 500);
	prtt_up_segment(t, &a, T0 + 1 * MS);
	assert_int_equal(samples(t, 1, PRTT_UP), 2);
	prtt_fast_get(t, &f);
	assert_false(prtt_up_fast(&f, 1, 0, T0 + 2 * MS)); /* the pinned one */
	assert_true(prtt_up_fast(&f, 1, 7, T0 + 2 * MS));  /* another: a compare */
	prtt_fast_put(t, &f);
	/* Flow 7 takes the pin once flow 0 has been quiet for idle. */
	a = ts(ackseg(7, 1000), 300, 499);
	prtt_up_segment(t, &a, T0 + 300 * MS);
	assert_int_equal(prtt_counters(t)->owd_pins, 2);
	free(t);
}

static void
test_a_flood_of_flows_neither_grows_the_state_nor_takes_the_sample_in_flight(void **state)
{
	struct prtt *t = make(4);
	struct prtt_seg d;

	(void)state;
	choose(t, data(1, 0, 100), T0);
	d = data(1, 100, 100);
	prtt_down_segment(t, &d, T0 + 1 * MS);
	for (uint64_t f = 1000; f < 11000; f++) {
		d = data(f, 1, 100);
		prtt_down_segment(t, &d, T0 + 2 * MS + f);
		struct prtt_seg a = ackseg(f, 101);
		prtt_up_segment(t, &a, T0 + 2 * MS + f);
	}
	assert_int_equal(prtt_counters(t)->candidates, 1);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 0);
	struct prtt_seg a = ackseg(1, 200);
	prtt_up_segment(t, &a, T0 + 21 * MS);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 1);
	assert_int_equal(last_down(t, 1), 20 * MS);
	free(t);
}

static void
test_a_subscriber_id_out_of_range_is_counted_and_ignored(void **state)
{
	struct prtt *t = make(4);
	struct prtt_seg d = data(4, 1000, 1000);

	(void)state;
	d.sub = 4;
	prtt_down_segment(t, &d, T0);
	prtt_up_segment(t, &d, T0);
	assert_int_equal(prtt_counters(t)->bad_sub, 2);
	assert_int_equal(prtt_counters(t)->candidates, 0);
	assert_int_equal(prtt_counters(t)->segments, 0);
	free(t);
}

static void
test_percentiles_come_from_buckets_narrower_than_an_eighth_of_the_value(void **state)
{
	struct prtt *t = make(4);
	struct prtt_summary sm;
	uint64_t now = T0;

	(void)state;
	for (unsigned b = 0; b + 1 < PRTT_HIST_BUCKETS; b++) {
		uint64_t lo = prtt_hist_lower_ns(b), hi = prtt_hist_lower_ns(b + 1);
		assert_int_equal(prtt_hist_bucket(lo), b);
		assert_int_equal(prtt_hist_bucket(hi - 1), b);
		if (b >= 16)
			assert_true((hi - lo) * 8 <= lo);
	}
	/* 98 samples of 20 ms, 2 of 400 ms, one after the other. */
	choose(t, data(100, 0, 100), now);
	for (uint32_t i = 0; i < 100; i++) {
		struct prtt_seg d = data(100, 100 * (i + 1), 100);
		struct prtt_seg a = ackseg(100, 100 * (i + 2));
		prtt_down_segment(t, &d, now);
		now += (i < 98 ? 20 : 400) * MS;
		prtt_up_segment(t, &a, now);
	}
	assert_int_equal(prtt_sub_summary(t, 1, PRTT_DOWN, &sm), 0);
	assert_int_equal(sm.samples, 100);
	assert_int_equal(sm.min_ns, 20 * MS);
	assert_true(sm.p50_ns >= 20 * MS * 7 / 8 && sm.p50_ns <= 20 * MS * 9 / 8);
	assert_true(sm.p99_ns >= 400 * MS * 7 / 8 && sm.p99_ns <= 400 * MS * 9 / 8);
	free(t);
}

static void
test_the_option_parser_reads_timestamps_and_sack_and_refuses_bad_lengths(void **state)
{
	uint8_t h[60] = { 0 };
	struct prtt_seg s;

	(void)state;
	h[4] = 0x12; h[5] = 0x34; h[6] = 0x56; h[7] = 0x78;   /* seq */
	h[8] = 0x9a;                                          /* ack */
	h[12] = 11 << 4;                                      /* 44 bytes */
	h[13] = ACK;
	/* NOP NOP TS(10) NOP NOP SACK(1 block, 10) */
	uint8_t o[] = { 1, 1, 8, 10, 0, 0, 1, 2, 0, 0, 0, 3,
			1, 1, 5, 10, 0, 0, 0x10, 0, 0, 0, 0x20, 0 };
	memcpy(h + 20, o, sizeof(o));
	assert_int_equal(prtt_tcp_parse(h, 44, &s), 0);
	assert_int_equal(s.seq, 0x12345678u);
	assert_int_equal(s.ack, 0x9a000000u);
	assert_int_equal(s.flags, ACK);
	assert_int_equal(s.has_ts, 1);
	assert_int_equal(s.tsval, 0x102);
	assert_int_equal(s.tsecr, 3);
	assert_int_equal(s.nsack, 1);
	assert_int_equal(s.sack[0][0], 0x1000);
	assert_int_equal(s.sack[0][1], 0x2000);
	h[23] = 9; /* TS of length 9 */
	assert_int_equal(prtt_tcp_parse(h, 44, &s), -1);
	assert_int_equal(s.has_ts, 0);
	h[23] = 40; /* runs past the header */
	assert_int_equal(prtt_tcp_parse(h, 44, &s), -1);
	assert_int_equal(prtt_tcp_parse(h, 43, &s), -1); /* doff > len */
	assert_int_equal(prtt_tcp_parse(h, 19, &s), -1);
}

/* A TCP header: 20 bytes, or 32 with NOP NOP TS when tsval or tsecr is set. */
static uint32_t
hdr(uint8_t *h, uint32_t seq, uint32_t ack, uint8_t flags, uint32_t tsval, uint32_t tsecr)
{
	uint32_t len = tsval || tsecr ? 32 : 20;

	memset(h, 0, 32);
	h[4] = (uint8_t)(seq >> 24); h[5] = (uint8_t)(seq >> 16);
	h[6] = (uint8_t)(seq >> 8); h[7] = (uint8_t)seq;
	h[8] = (uint8_t)(ack >> 24); h[9] = (uint8_t)(ack >> 16);
	h[10] = (uint8_t)(ack >> 8); h[11] = (uint8_t)ack;
	h[12] = (uint8_t)(len / 4 << 4);
	h[13] = flags;
	if (len == 32) {
		h[20] = 1; h[21] = 1; h[22] = 8; h[23] = 10;
		h[24] = (uint8_t)(tsval >> 24); h[25] = (uint8_t)(tsval >> 16);
		h[26] = (uint8_t)(tsval >> 8); h[27] = (uint8_t)tsval;
		h[28] = (uint8_t)(tsecr >> 24); h[29] = (uint8_t)(tsecr >> 16);
		h[30] = (uint8_t)(tsecr >> 8); h[31] = (uint8_t)tsecr;
	}
	return len;
}

static void
test_the_header_entry_points_give_the_same_samples_and_count_bad_options(void **state)
{
	struct prtt *t = make(4);
	uint8_t h[32];
	uint32_t n;

	(void)state;
	/* With timestamps: choose, start on 500, another flow in between
	 * (not read), the echo. */
	n = hdr(h, 0, 1, ACK, 499, 90);
	prtt_down_tcp(t, 1, 7, h, n, 1000, 1054, T0 - 1 * MS);
	n = hdr(h, 1000, 1, ACK, 500, 90);
	prtt_down_tcp(t, 1, 7, h, n, 1000, 1054, T0);
	n = hdr(h, 5000, 1, ACK, 800, 90);
	prtt_down_tcp(t, 1, 8, h, n, 1000, 1054, T0 + 1 * MS);
	n = hdr(h, 1, 0, ACK, 0, 0);              /* a pure ACK down: nothing */
	prtt_down_tcp(t, 1, 7, h, n, 0, 54, T0 + 2 * MS);
	n = hdr(h, 1, 2000, ACK, 91, 500);
	prtt_up_tcp(t, 1, 7, h, n, 0, 66, T0 + 23 * MS);
	assert_int_equal(prtt_counters(t)->ts_armed, 1);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 1);
	assert_int_equal(last_down(t, 1), 23 * MS);
	assert_int_equal(samples(t, 1, PRTT_UP), 1); /* flow 7 pinned */
	/* Without timestamps, on subscriber 2. */
	n = hdr(h, 0, 1, ACK, 0, 0);
	prtt_down_tcp(t, 2, 9, h, n, 1000, 1054, T0);
	n = hdr(h, 1000, 1, ACK, 0, 0);
	prtt_down_tcp(t, 2, 9, h, n, 1000, 1054, T0 + 1 * MS);
	n = hdr(h, 1, 2000, ACK, 0, 0);
	prtt_up_tcp(t, 2, 9, h, n, 0, 54, T0 + 18 * MS);
	assert_int_equal(samples(t, 2, PRTT_DOWN), 1);
	assert_int_equal(last_down(t, 2), 17 * MS);
	struct prtt_window w;
	assert_int_equal(prtt_sub_window_take(t, 2, PRTT_DOWN, &w), 0);
	assert_int_equal(w.sent_payload, 2000);
	assert_int_equal(w.sent_wire, 2108);
	/* A timestamp option of the wrong length: counted, timed by sequence. */
	n = hdr(h, 0, 1, ACK, 600, 90);
	h[23] = 9;
	prtt_down_tcp(t, 3, 11, h, n, 1000, 1054, T0);
	assert_int_equal(prtt_counters(t)->bad_options, 1);
	n = hdr(h, 1000, 1, ACK, 0, 0);
	prtt_down_tcp(t, 3, 11, h, n, 1000, 1054, T0 + 1 * MS);
	assert_int_equal(prtt_counters(t)->seq_armed, 2);
	/* Shorter than a TCP header: counted as a segment, nothing read. */
	prtt_down_tcp(t, 3, 11, h, 19, 1000, 1054, T0 + 2 * MS);
	prtt_up_tcp(t, 3, 11, h, 19, 0, 54, T0 + 2 * MS);
	assert_int_equal(prtt_counters(t)->segments, 12);
	free(t);
}

/* An ACK whose options are not the common layout (NOP NOP SACK) goes
 * through the option parser: its SACK block must reach the sample. */
static void
test_a_sack_block_the_header_entry_point_parses_answers_the_sample(void **state)
{
	struct prtt *t = make(4);
	uint8_t h[32];
	uint32_t n;

	(void)state;
	n = hdr(h, 0, 1, ACK, 0, 0);
	prtt_down_tcp(t, 1, 7, h, n, 1000, 1054, T0 - 1 * MS);   /* chooses */
	n = hdr(h, 1000, 1, ACK, 0, 0);
	prtt_down_tcp(t, 1, 7, h, n, 1000, 1054, T0);            /* [1000, 2000) */
	assert_int_equal(prtt_counters(t)->seq_armed, 1);
	/* Cumulative ACK 1000 (short of the range), SACK [1000, 2000). */
	n = hdr(h, 1, 1000, ACK, 0, 0);
	memset(h + 20, 0, 12);
	h[12] = 8 << 4;
	h[20] = 1; h[21] = 1; h[22] = 5; h[23] = 10;
	h[26] = 0x03; h[27] = 0xe8; /* 1000 */
	h[30] = 0x07; h[31] = 0xd0; /* 2000 */
	prtt_up_tcp(t, 1, 7, h, 32, 0, 66, T0 + 9 * MS);
	assert_int_equal(prtt_counters(t)->bad_options, 0);
	assert_int_equal(prtt_counters(t)->sack_samples, 1);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 1);
	assert_int_equal(last_down(t, 1), 9 * MS);
	free(t);
}

/* The same through the burst call the aqm stage uses: its own check of
 * other flows must let them through once the chosen one is silent. */
static void
test_through_the_burst_call_a_silent_chosen_flow_gives_way_after_its_quiet_time(void **state)
{
	struct prtt *t = make(4);
	uint8_t h[3][32];
	struct prtt_pkt p[3];

	(void)state;
	p[0] = (struct prtt_pkt){ .hdr = h[0], .flow = 7, .sub = 1,
				  .hdr_len = hdr(h[0], 0, 1, ACK, 499, 90),
				  .payload = 300, .wire_len = 354 };
	p[1] = (struct prtt_pkt){ .hdr = h[1], .flow = 7, .sub = 1,
				  .hdr_len = hdr(h[1], 300, 1, ACK, 500, 90),
				  .payload = 300, .wire_len = 354 };
	prtt_down_burst(t, p, 2, T0);            /* chosen, armed on 500 */
	assert_int_equal(prtt_counters(t)->ts_armed, 1);
	p[2] = (struct prtt_pkt){ .hdr = h[2], .flow = 8, .sub = 1,
				  .hdr_len = hdr(h[2], 0, 1, ACK, 800, 90),
				  .payload = 1000, .wire_len = 1054 };
	prtt_down_burst(t, &p[2], 1, T0 + 200 * MS);
	assert_int_equal(prtt_counters(t)->candidates, 1);
	prtt_down_burst(t, &p[2], 1, T0 + 251 * MS);
	assert_int_equal(prtt_counters(t)->candidates, 2);
	assert_int_equal(prtt_counters(t)->expired, 1);
	free(t);
}

static void
test_the_inline_checks_take_only_segments_of_other_flows_while_the_chosen_ones_are_alive(void **state)
{
	struct prtt *t = make(4);
	struct prtt_fast f;
	struct prtt_seg d, a;
	struct prtt_window w;

	(void)state;
	prtt_fast_get(t, &f);
	assert_false(prtt_down_fast(&f, 1, 8, 1000, 1054, T0)); /* none chosen */
	assert_false(prtt_up_fast(&f, 1, 8, T0));               /* none pinned */
	assert_false(prtt_down_fast(&f, 4, 8, 1000, 1054, T0)); /* bad sub: the call counts it */
	choose(t, ts(data(7, 0, 1000), 499, 90), T0);
	a = ts(ackseg(7, 1000), 91, 400);
	prtt_up_segment(t, &a, T0);                              /* pins 7 */
	assert_true(prtt_down_fast(&f, 1, 8, 1000, 1054, T0 + 1 * MS));
	assert_false(prtt_down_fast(&f, 1, 7, 1000, 1054, T0 + 1 * MS));
	assert_false(prtt_down_fast(&f, 1, 8, 0, 54, T0 + 1 * MS)); /* SYN/FIN? the header says */
	assert_true(prtt_up_fast(&f, 1, 8, T0 + 1 * MS));
	assert_false(prtt_up_fast(&f, 1, 7, T0 + 1 * MS));
	d = ts(data(7, 1000, 1000), 500, 90);
	prtt_down_segment(t, &d, T0 + 2 * MS);                   /* in flight */
	/* Quiet for longer than idle: the next segment of any flow is looked at. */
	assert_false(prtt_up_fast(&f, 1, 8, T0 + 251 * MS));
	assert_false(prtt_down_fast(&f, 1, 8, 1000, 1054, T0 + 4003 * MS));
	prtt_fast_put(t, &f);
	assert_int_equal(prtt_counters(t)->segments, 5);        /* 2 taken inline, 3 by the calls */
	assert_int_equal(prtt_sub_window_take(t, 1, PRTT_DOWN, &w), 0);
	assert_int_equal(w.sent_payload, 3000);
	assert_int_equal(w.sent_wire, 1054 + 2 * 1054);
	free(t);
}

/*
 * The checks on the key's upper half: a segment whose upper half differs
 * from the chosen and the pinned flow's is another flow's and is taken;
 * one that shares it says nothing, and the whole key decides.
 */
static void
test_the_checks_on_the_key_s_upper_half_take_other_flows_and_leave_the_rest_to_the_whole_key(void **state)
{
	const uint64_t chosen = 5ull << 32 | 70, pinned = 9ull << 32 | 90;
	const uint64_t same_hi = 5ull << 32 | 71; /* the chosen flow's ports, other addresses */
	struct prtt *t = make(4);
	struct prtt_fast f;
	struct prtt_seg a;
	struct prtt_window w;

	(void)state;
	prtt_fast_get(t, &f);
	assert_false(prtt_down_fast_hi(&f, 1, 6, 1000, 1054, T0)); /* none chosen */
	assert_false(prtt_up_fast_hi(&f, 1, 6, T0));               /* none pinned */
	choose(t, ts(data(chosen, 0, 1000), 499, 90), T0);
	a = ts(ackseg(pinned, 1000), 91, 400);
	prtt_up_segment(t, &a, T0);
	assert_true(prtt_down_fast_hi(&f, 1, 6, 1000, 1054, T0 + 1 * MS));
	assert_false(prtt_down_fast_hi(&f, 1, 5, 1000, 1054, T0 + 1 * MS));
	assert_true(prtt_down_fast(&f, 1, same_hi, 1000, 1054, T0 + 1 * MS));
	assert_false(prtt_down_fast_hi(&f, 4, 6, 1000, 1054, T0 + 1 * MS)); /* bad sub */
	assert_false(prtt_down_fast_hi(&f, 1, 6, 0, 54, T0 + 1 * MS));      /* SYN/FIN? */
	assert_true(prtt_up_fast_hi(&f, 1, 6, T0 + 1 * MS));
	assert_false(prtt_up_fast_hi(&f, 1, 5, T0 + 1 * MS));
	assert_false(prtt_up_fast_hi(&f, 1, 9, T0 + 1 * MS));
	/* The pinned flow quiet for longer than idle: nothing taken. */
	assert_false(prtt_up_fast_hi(&f, 1, 6, T0 + 251 * MS));
	assert_false(prtt_down_fast_hi(&f, 1, 6, 1000, 1054, T0 + 251 * MS));
	prtt_fast_put(t, &f);
	assert_int_equal(prtt_counters(t)->segments, 2 + 3);    /* 2 calls, 3 taken inline */
	assert_int_equal(prtt_sub_window_take(t, 1, PRTT_DOWN, &w), 0);
	assert_int_equal(w.sent_payload, 3000);
	free(t);
}

static void
test_the_init_refuses_no_subscribers_and_zero_times_and_needs_no_flow_table(void **state)
{
	struct prtt_params p;

	(void)state;
	prtt_params_default(&p);
	p.subs = 0;
	assert_int_equal(prtt_memsize(&p), 0);
	p.subs = 8;
	p.idle_ns = 0;
	assert_int_equal(prtt_memsize(&p), 0);
	p.idle_ns = 1;
	p.max_age_ns = 0;
	assert_int_equal(prtt_memsize(&p), 0);
	p.max_age_ns = 1;
	size_t eight = prtt_memsize(&p);
	p.subs = 16;
	/* Per subscriber: a 256-byte slot and the histograms; nothing else. */
	assert_true(prtt_memsize(&p) - eight < 8 * 1800);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_an_ack_that_echoes_the_tsval_gives_the_time_since_that_tsval_was_first_sent),
		cmocka_unit_test(test_a_later_segment_of_a_tick_already_sent_starts_no_sample),
		cmocka_unit_test(test_four_tsvals_are_timed_at_once_and_an_echo_of_any_of_them_matches),
		cmocka_unit_test(test_one_flow_per_subscriber_is_sampled_others_wait_until_it_goes_quiet),
		cmocka_unit_test(test_a_flow_keeps_its_place_while_quiet_for_less_than_two_of_its_rtts),
		cmocka_unit_test(test_a_chosen_flow_silent_with_a_sample_unanswered_gives_way_after_its_quiet_time),
		cmocka_unit_test(test_an_echo_newer_than_the_armed_tsval_drops_the_sample_as_unknowable),
		cmocka_unit_test(test_timestamps_compare_across_the_wrap_of_the_tsval_clock),
		cmocka_unit_test(test_without_timestamps_the_first_cumulative_ack_covering_the_segment_gives_the_sample),
		cmocka_unit_test(test_the_delivered_rate_is_what_left_between_two_sample_starts_over_the_time_between_their_answers),
		cmocka_unit_test(test_karn_a_resent_range_gives_no_sample),
		cmocka_unit_test(test_a_resend_of_other_data_keeps_the_sample_in_flight),
		cmocka_unit_test(test_sequence_matching_works_across_the_wrap_of_the_sequence_space),
		cmocka_unit_test(test_a_sack_block_covering_the_segment_gives_the_sample_before_the_cumulative_ack),
		cmocka_unit_test(test_a_sample_nobody_answers_expires_after_max_age),
		cmocka_unit_test(test_upstream_one_way_delay_reads_the_rise_over_the_flows_minimum),
		cmocka_unit_test(test_upstream_delay_comes_from_one_pinned_flow_per_subscriber_until_it_goes_quiet),
		cmocka_unit_test(test_a_flow_whose_key_is_zero_is_pinned_and_released_like_any_other),
		cmocka_unit_test(test_a_flood_of_flows_neither_grows_the_state_nor_takes_the_sample_in_flight),
		cmocka_unit_test(test_a_subscriber_id_out_of_range_is_counted_and_ignored),
		cmocka_unit_test(test_percentiles_come_from_buckets_narrower_than_an_eighth_of_the_value),
		cmocka_unit_test(test_the_option_parser_reads_timestamps_and_sack_and_refuses_bad_lengths),
		cmocka_unit_test(test_the_header_entry_points_give_the_same_samples_and_count_bad_options),
		cmocka_unit_test(test_a_sack_block_the_header_entry_point_parses_answers_the_sample),
		cmocka_unit_test(test_through_the_burst_call_a_silent_chosen_flow_gives_way_after_its_quiet_time),
		cmocka_unit_test(test_the_inline_checks_take_only_segments_of_other_flows_while_the_chosen_ones_are_alive),
		cmocka_unit_test(test_the_checks_on_the_key_s_upper_half_take_other_flows_and_leave_the_rest_to_the_whole_key),
		cmocka_unit_test(test_the_init_refuses_no_subscribers_and_zero_times_and_needs_no_flow_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
