/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/prtt on a virtual clock: exact RTT samples with and without TCP
 * timestamps, Karn's rule, wrapped sequence numbers, SACK, the upstream
 * one-way-delay rise, table eviction, and the option parser.
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
make(uint32_t flows, uint32_t subs)
{
	struct prtt_params p;
	void *mem;

	prtt_params_default(&p);
	p.flows = flows;
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

static void
test_an_ack_that_echoes_the_tsval_gives_the_time_since_that_tsval_was_first_sent(void **state)
{
	struct prtt *t = make(64, 4);
	struct prtt_seg d1 = ts(data(7, 1000, 1448), 500, 90);
	struct prtt_seg d2 = ts(data(7, 2448, 1448), 500, 90);
	struct prtt_seg d3 = ts(data(7, 3896, 1448), 501, 90);

	(void)state;
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
	struct prtt *t = make(64, 4);
	struct prtt_seg d1 = ts(data(7, 1000, 1448), 500, 90);
	struct prtt_seg d2 = ts(data(7, 2448, 1448), 501, 90);
	struct prtt_seg d3 = ts(data(7, 3896, 1448), 501, 90);
	struct prtt_seg d4 = ts(data(7, 5344, 1448), 502, 90);
	struct prtt_seg a;

	(void)state;
	prtt_down_segment(t, &d1, T0);           /* sample on 500 */
	prtt_down_segment(t, &d2, T0 + 1 * MS);  /* 501 first sent here */
	a = ts(ackseg(7, 2448), 91, 500);
	prtt_up_segment(t, &a, T0 + 30 * MS);    /* 30 ms */
	/* More of tick 501 after the sample ended: timing it from here
	 * would read 5 ms short when the echo of 501 comes. */
	prtt_down_segment(t, &d3, T0 + 6 * MS + 30 * MS);
	assert_int_equal(prtt_counters(t)->ts_armed, 2);
	a = ts(ackseg(7, 5344), 92, 501);
	prtt_up_segment(t, &a, T0 + 61 * MS);     /* from 501's first: 60 ms */
	assert_int_equal(samples(t, 1, PRTT_DOWN), 2);
	assert_int_equal(last_down(t, 1), 60 * MS);
	prtt_down_segment(t, &d4, T0 + 62 * MS); /* a new tick: a sample */
	assert_int_equal(prtt_counters(t)->ts_armed, 3);
	a = ts(ackseg(7, 6792), 93, 502);
	prtt_up_segment(t, &a, T0 + 92 * MS);
	assert_int_equal(last_down(t, 1), 30 * MS);
	free(t);
}

static void
test_four_tsvals_are_timed_at_once_and_an_echo_of_any_of_them_matches(void **state)
{
	struct prtt *t = make(64, 4);
	struct prtt_seg d, a;

	(void)state;
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
test_an_echo_newer_than_the_armed_tsval_drops_the_sample_as_unknowable(void **state)
{
	struct prtt *t = make(64, 4);
	struct prtt_seg d = ts(data(7, 1000, 1448), 500, 90);
	struct prtt_seg a = ts(ackseg(7, 2448), 91, 502);

	(void)state;
	prtt_down_segment(t, &d, T0);
	prtt_up_segment(t, &a, T0 + 30 * MS);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 0);
	assert_int_equal(prtt_counters(t)->ts_skipped, 1);
	/* The next data segment starts a new sample. */
	d = ts(data(7, 2448, 1448), 510, 91);
	prtt_down_segment(t, &d, T0 + 31 * MS);
	a = ts(ackseg(7, 3896), 95, 510);
	prtt_up_segment(t, &a, T0 + 52 * MS);
	assert_int_equal(last_down(t, 1), 21 * MS);
	free(t);
}

static void
test_without_timestamps_the_first_cumulative_ack_covering_the_segment_gives_the_sample(void **state)
{
	struct prtt *t = make(64, 4);
	struct prtt_seg d1 = data(9, 1000, 1000), d2 = data(9, 2000, 1000);
	struct prtt_seg a;

	(void)state;
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
	assert_int_equal(w.acked_bytes, 1500); /* 1500 -> 3000; the first ACK set the mark */
	assert_int_equal(w.sent_payload, 2000);
	assert_int_equal(w.sent_wire, 2108);
	assert_int_equal(prtt_sub_window_take(t, 1, PRTT_DOWN, &w), 0);
	assert_int_equal(w.samples, 0);
	assert_int_equal(w.min_ns, UINT64_MAX);
	free(t);
}

static void
test_karn_a_resent_range_gives_no_sample(void **state)
{
	struct prtt *t = make(64, 4);
	struct prtt_seg d1 = data(9, 1000, 1000), d2 = data(9, 2000, 1000);
	struct prtt_seg a = ackseg(9, 2000);

	(void)state;
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
	struct prtt *t = make(64, 4);
	struct prtt_seg d1 = data(9, 1000, 1000), d2 = data(9, 2000, 1000);
	struct prtt_seg a = ackseg(9, 3000);

	(void)state;
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
	struct prtt *t = make(64, 4);
	struct prtt_seg d1 = data(3, 0xFFFFFC00u, 2048); /* ends at 0x400 */
	struct prtt_seg a;

	(void)state;
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
	prtt_down_segment(t, &d3, T0 + 10 * MS);
	assert_int_equal(prtt_counters(t)->seq_armed, 2);
	free(t);
}

static void
test_a_sack_block_covering_the_segment_gives_the_sample_before_the_cumulative_ack(void **state)
{
	struct prtt *t = make(64, 4);
	struct prtt_seg d0 = data(4, 1000, 1000), hole = data(4, 2000, 1000);
	struct prtt_seg dn = data(4, 3000, 1000), a;

	(void)state;
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
	struct prtt *t = make(64, 4);
	struct prtt_seg d = data(4, 1000, 1000), a = ackseg(4, 2000);

	(void)state;
	prtt_down_segment(t, &d, T0);
	prtt_up_segment(t, &a, T0 + 4000 * MS + 1);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 0);
	assert_int_equal(prtt_counters(t)->expired, 1);
	free(t);
}

static void
test_upstream_one_way_delay_reads_the_rise_over_the_flows_minimum(void **state)
{
	struct prtt *t = make(64, 4);
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
test_a_pure_ack_gives_an_upstream_delay_sample_only_when_it_ends_an_rtt_sample(void **state)
{
	struct prtt *t = make(64, 4);
	struct prtt_seg d = ts(data(6, 1000, 1448), 500, 90);
	struct prtt_seg a;

	(void)state;
	/* A download's ACKs, each on a new tick of the subscriber's clock:
	 * only the one that answers the sample in flight is timed upstream
	 * too (one per RTT sample, as pping does); the others cost a
	 * compare. */
	prtt_down_segment(t, &d, T0);
	a = ts(ackseg(6, 1000), 91, 499);
	prtt_up_segment(t, &a, T0 + 10 * MS);
	a = ts(ackseg(6, 1000), 92, 499);
	prtt_up_segment(t, &a, T0 + 11 * MS);
	assert_int_equal(samples(t, 1, PRTT_UP), 0);
	a = ts(ackseg(6, 2448), 93, 500);
	prtt_up_segment(t, &a, T0 + 30 * MS);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 1);
	assert_int_equal(samples(t, 1, PRTT_UP), 1);
	assert_int_equal(prtt_counters(t)->owd_samples, 1);
	free(t);
}

static void
test_a_flood_of_flows_evicts_the_least_recently_used_and_never_grows(void **state)
{
	struct prtt *t = make(4, 4); /* one bucket of 4 */
	struct prtt_seg d;

	(void)state;
	for (uint64_t f = 1; f <= 4; f++) {
		d = data(f, 1000, 100);
		prtt_down_segment(t, &d, T0 + f * MS);
	}
	assert_int_equal(prtt_counters(t)->evictions, 0);
	/* Flow 1 is touched again: flow 2 is now the oldest. */
	struct prtt_seg a = ackseg(1, 1100);
	prtt_up_segment(t, &a, T0 + 10 * MS);
	d = data(99, 5000, 100);
	prtt_down_segment(t, &d, T0 + 11 * MS);
	assert_int_equal(prtt_counters(t)->evictions, 1);
	/* Flow 2's sample went with it; flow 3's is still there. */
	a = ackseg(2, 1100);
	prtt_up_segment(t, &a, T0 + 12 * MS);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 1);
	a = ackseg(3, 1100);
	prtt_up_segment(t, &a, T0 + 13 * MS);
	assert_int_equal(samples(t, 1, PRTT_DOWN), 2);
	assert_int_equal(last_down(t, 1), 10 * MS);
	for (uint64_t f = 1000; f < 11000; f++) {
		d = data(f, 1, 100);
		prtt_down_segment(t, &d, T0 + 20 * MS + f);
	}
	assert_int_equal(prtt_counters(t)->flows_inserted, 10005);
	assert_int_equal(prtt_counters(t)->evictions, 10001);
	free(t);
}

static void
test_a_subscriber_id_out_of_range_is_counted_and_ignored(void **state)
{
	struct prtt *t = make(64, 4);
	struct prtt_seg d = data(4, 1000, 1000);

	(void)state;
	d.sub = 4;
	prtt_down_segment(t, &d, T0);
	prtt_up_segment(t, &d, T0);
	assert_int_equal(prtt_counters(t)->bad_sub, 2);
	assert_int_equal(prtt_counters(t)->flows_inserted, 0);
	free(t);
}

static void
test_percentiles_come_from_buckets_narrower_than_an_eighth_of_the_value(void **state)
{
	struct prtt *t = make(64, 4);
	struct prtt_summary sm;

	(void)state;
	for (unsigned b = 0; b + 1 < PRTT_HIST_BUCKETS; b++) {
		uint64_t lo = prtt_hist_lower_ns(b), hi = prtt_hist_lower_ns(b + 1);
		assert_int_equal(prtt_hist_bucket(lo), b);
		assert_int_equal(prtt_hist_bucket(hi - 1), b);
		if (b >= 16)
			assert_true((hi - lo) * 8 <= lo);
	}
	/* 98 samples of 20 ms, 2 of 400 ms (RTTs from 100 flows). */
	for (uint32_t i = 0; i < 100; i++) {
		struct prtt_seg d = data(100 + i, 1000, 100), a = ackseg(100 + i, 1100);
		prtt_down_segment(t, &d, T0);
		prtt_up_segment(t, &a, T0 + (i < 98 ? 20 : 400) * MS);
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

static void
test_the_init_refuses_a_table_that_is_not_a_power_of_two(void **state)
{
	struct prtt_params p;

	(void)state;
	prtt_params_default(&p);
	p.flows = 1000;
	assert_int_equal(prtt_memsize(&p), 0);
	p.flows = 1024;
	p.subs = 0;
	assert_int_equal(prtt_memsize(&p), 0);
	p.subs = 8;
	assert_true(prtt_memsize(&p) >= 1024 * 144);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_an_ack_that_echoes_the_tsval_gives_the_time_since_that_tsval_was_first_sent),
		cmocka_unit_test(test_a_later_segment_of_a_tick_already_sent_starts_no_sample),
		cmocka_unit_test(test_four_tsvals_are_timed_at_once_and_an_echo_of_any_of_them_matches),
		cmocka_unit_test(test_an_echo_newer_than_the_armed_tsval_drops_the_sample_as_unknowable),
		cmocka_unit_test(test_without_timestamps_the_first_cumulative_ack_covering_the_segment_gives_the_sample),
		cmocka_unit_test(test_karn_a_resent_range_gives_no_sample),
		cmocka_unit_test(test_a_resend_of_other_data_keeps_the_sample_in_flight),
		cmocka_unit_test(test_sequence_matching_works_across_the_wrap_of_the_sequence_space),
		cmocka_unit_test(test_a_sack_block_covering_the_segment_gives_the_sample_before_the_cumulative_ack),
		cmocka_unit_test(test_a_sample_nobody_answers_expires_after_max_age),
		cmocka_unit_test(test_upstream_one_way_delay_reads_the_rise_over_the_flows_minimum),
		cmocka_unit_test(test_a_pure_ack_gives_an_upstream_delay_sample_only_when_it_ends_an_rtt_sample),
		cmocka_unit_test(test_a_flood_of_flows_evicts_the_least_recently_used_and_never_grows),
		cmocka_unit_test(test_a_subscriber_id_out_of_range_is_counted_and_ignored),
		cmocka_unit_test(test_percentiles_come_from_buckets_narrower_than_an_eighth_of_the_value),
		cmocka_unit_test(test_the_option_parser_reads_timestamps_and_sack_and_refuses_bad_lengths),
		cmocka_unit_test(test_the_init_refuses_a_table_that_is_not_a_power_of_two),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
