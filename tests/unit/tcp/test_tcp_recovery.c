/* SPDX-License-Identifier: BSD-3-Clause */
/* Loss recovery between two engines: SACK-based (RFC 6675) and NewReno
 * (RFC 6582) fast retransmit, the receiver's SACK blocks. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tcp_test_util.h"

static struct tcp_engine_params pa, pb;

/* Drop A's data segments by index (first transmission count), and any
 * retransmission of a sequence number listed in drop_rtx_seq. */
static struct {
	uint32_t n_data;
	uint32_t drop_idx[8];
	uint32_t n_drop;
	uint32_t seq_of_dropped[8];
	uint32_t drop_rtx_of;     /* index into seq_of_dropped + 1, 0 = none */
	uint32_t rtx_dropped;
} rec;

static int
hook(struct wire *w, int to_b, const struct tcp_seg_in *s)
{
	(void)w;
	if (!to_b || s->len == 0)
		return 0;
	if (rec.drop_rtx_of && rec.rtx_dropped == 0 &&
	    s->seq == rec.seq_of_dropped[rec.drop_rtx_of - 1] &&
	    rec.n_data > rec.drop_idx[rec.drop_rtx_of - 1]) {
		rec.rtx_dropped = 1;
		return 1;
	}
	for (uint32_t i = 0; i < rec.n_drop; i++) {
		if (rec.drop_idx[i] == rec.n_data) {
			rec.seq_of_dropped[i] = s->seq;
			rec.n_data++;
			return 1;
		}
	}
	rec.n_data++;
	return 0;
}

static inline uint8_t
pattern(uint64_t i)
{
	return (uint8_t)((i * 2654435761u) >> 13);
}

static struct wire *
setup(uint8_t flags_b)
{
	struct wire *w;

	memset(&rec, 0, sizeof(rec));
	wire_params(&pa, "a", NULL);
	wire_params(&pb, "b", NULL);
	pb.flags = flags_b;
	w = wire_new(&pa, &pb);
	assert_non_null(w->a);
	w->drop = hook;
	return w;
}

/* Send total bytes A -> B, checking the stream. */
static void
transfer(struct wire *w, uint64_t total)
{
	struct tcp_conn *c = w->app_a.conn;
	uint64_t off = 0, h = FNV_INIT;
	uint8_t buf[8192];

	while (w->app_b.rx_bytes < total && w->now < MS(60000)) {
		while (off < total) {
			uint32_t n = (uint32_t)RTE_MIN((uint64_t)sizeof(buf), total - off);
			int32_t got;

			for (uint32_t i = 0; i < n; i++)
				buf[i] = pattern(off + i);
			got = tcp_send(c, buf, n, w->now);
			if (got <= 0)
				break;
			h = fnv1a(h, buf, (size_t)got);
			off += (uint64_t)got;
		}
		wire_run(w, MS(1));
	}
	assert_int_equal(w->app_b.rx_bytes, total);
	assert_true(w->app_b.rx_hash == h);
}

static uint64_t
cnt(struct tcp_engine *e, enum tcp_cnt c)
{
	return tcp_engine_counters(e)[c];
}

static void
one_lost_segment_is_repaired_by_sack_recovery_without_an_rto(void **state)
{
	struct wire *w = setup(0);
	struct tcp_conn_info i;

	(void)state;
	rec.drop_idx[rec.n_drop++] = 20;
	wire_connect(w);
	transfer(w, 300000);
	tcp_conn_get_info(w->app_a.conn, &i);
	assert_int_equal(cnt(w->a, TCP_CNT_RTO), 0);
	assert_int_equal(cnt(w->a, TCP_CNT_FAST_RETRANSMIT), 1);
	assert_int_equal(i.retransmits, 1);
	/* CUBIC cut the window once, to 0.7 of what it was. */
	assert_true(i.ssthresh < UINT32_MAX);
	wire_free(w);
}

static void
one_lost_segment_is_repaired_by_newreno_without_sack(void **state)
{
	struct wire *w = setup(TCP_F_NO_SACK);

	(void)state;
	rec.drop_idx[rec.n_drop++] = 20;
	wire_connect(w);
	transfer(w, 300000);
	assert_int_equal(cnt(w->a, TCP_CNT_RTO), 0);
	assert_int_equal(cnt(w->a, TCP_CNT_FAST_RETRANSMIT), 1);
	assert_int_equal(cnt(w->a, TCP_CNT_RETRANSMIT), 1);
	wire_free(w);
}

static void
three_losses_in_one_window_are_repaired_in_one_sack_recovery(void **state)
{
	struct wire *w = setup(0);

	(void)state;
	rec.drop_idx[rec.n_drop++] = 20;
	rec.drop_idx[rec.n_drop++] = 23;
	rec.drop_idx[rec.n_drop++] = 27;
	wire_connect(w);
	transfer(w, 300000);
	assert_int_equal(cnt(w->a, TCP_CNT_RTO), 0);
	assert_int_equal(cnt(w->a, TCP_CNT_FAST_RETRANSMIT), 1);
	assert_int_equal(cnt(w->a, TCP_CNT_RETRANSMIT), 3);
	wire_free(w);
}

static void
newreno_repairs_two_losses_with_a_partial_ack(void **state)
{
	struct wire *w = setup(TCP_F_NO_SACK);

	(void)state;
	rec.drop_idx[rec.n_drop++] = 20;
	rec.drop_idx[rec.n_drop++] = 24;
	wire_connect(w);
	transfer(w, 300000);
	assert_int_equal(cnt(w->a, TCP_CNT_RTO), 0);
	assert_int_equal(cnt(w->a, TCP_CNT_FAST_RETRANSMIT), 1);
	assert_int_equal(cnt(w->a, TCP_CNT_RETRANSMIT), 2);
	wire_free(w);
}

static void
the_receiver_reports_the_newest_sack_block_first(void **state)
{
	static uint8_t buf[10 * 1448];
	struct wire *w = setup(0);
	struct tcp_conn *c;
	uint32_t base;

	(void)state;
	rec.drop_idx[rec.n_drop++] = 2;
	rec.drop_idx[rec.n_drop++] = 5;
	c = wire_connect(w);
	{
		struct tcp_conn_info i;

		tcp_conn_get_info(c, &i);
		base = i.snd_nxt;
	}
	tcp_send(c, buf, sizeof(buf), w->now);
	/* All ten leave at once; B sees 0 1 _ 3 4 _ 6 7 8 9. */
	wire_run(w, w->delay);
	assert_true(w->last[0].opts & TCP_SO_SACK);
	assert_int_equal(w->last[0].ack, base + 2 * 1448);
	assert_int_equal(w->last[0].nsack, 2);
	assert_int_equal(w->last[0].sack[0].left, base + 6 * 1448);
	assert_int_equal(w->last[0].sack[0].right, base + 10 * 1448);
	assert_int_equal(w->last[0].sack[1].left, base + 3 * 1448);
	assert_int_equal(w->last[0].sack[1].right, base + 5 * 1448);
	wire_run(w, MS(100));
	assert_int_equal(w->app_b.rx_bytes, sizeof(buf));
	assert_int_equal(cnt(w->a, TCP_CNT_RTO), 0);
	wire_free(w);
}

static void
a_lost_retransmission_is_found_by_rack_without_an_rto(void **state)
{
	struct wire *w = setup(0);

	(void)state;
	rec.drop_idx[rec.n_drop++] = 20;
	rec.drop_rtx_of = 1; /* and the first retransmission of it */
	wire_connect(w);
	transfer(w, 400000);
	assert_int_equal(rec.rtx_dropped, 1);
	/* Segments sent after the retransmission were SACKed and RACK's
	 * reordering window passed: marked lost again, resent, no RTO. */
	assert_int_equal(cnt(w->a, TCP_CNT_RTO), 0);
	assert_int_equal(cnt(w->a, TCP_CNT_RETRANSMIT), 2);
	assert_int_equal(cnt(w->a, TCP_CNT_FAST_RETRANSMIT), 1);
	assert_true(cnt(w->a, TCP_CNT_RACK_LOST) >= 2);
	wire_free(w);
}

static void
a_lost_tail_is_repaired_by_a_probe_not_an_rto(void **state)
{
	static uint8_t buf[10 * 1448];
	struct wire *w = setup(0);
	struct tcp_conn *c;
	uint64_t t0;

	(void)state;
	rec.drop_idx[rec.n_drop++] = 7;
	rec.drop_idx[rec.n_drop++] = 8;
	rec.drop_idx[rec.n_drop++] = 9;
	c = wire_connect(w);
	t0 = w->now;
	assert_int_equal(tcp_send(c, buf, sizeof(buf), w->now), (int32_t)sizeof(buf));
	wire_run(w, MS(150));
	assert_int_equal(w->app_b.rx_bytes, sizeof(buf));
	assert_int_equal(cnt(w->a, TCP_CNT_TLP), 1);
	assert_int_equal(cnt(w->a, TCP_CNT_RTO), 0);
	/* The probe resent the last segment 2 SRTT after the last ACK; its
	 * SACK let RACK find the other two. */
	assert_int_equal(cnt(w->a, TCP_CNT_RETRANSMIT), 3);
	(void)t0;
	wire_free(w);
}

static void
prr_sends_beta_times_what_was_delivered_during_recovery(void **state)
{
	struct wire *w = setup(0);
	struct tcp_conn_info i;

	(void)state;
	rec.drop_idx[rec.n_drop++] = 60;
	wire_connect(w);
	transfer(w, 400000);
	tcp_conn_get_info(w->app_a.conn, &i);
	assert_int_equal(cnt(w->a, TCP_CNT_FAST_RETRANSMIT), 1);
	assert_false(i.in_recovery);
	print_message("PRR: delivered %u, sent %u (%.3f)\n", i.prr_delivered, i.prr_out,
		      (double)i.prr_out / i.prr_delivered);
	/* RFC 6937: sndcnt = ceil(prr_delivered * ssthresh / RecoverFS)
	 * - prr_out, with CUBIC's ssthresh = 0.7 * RecoverFS. */
	assert_true(i.prr_delivered > 20 * 1448);
	assert_true(i.prr_out * 10 >= i.prr_delivered * 6);
	assert_true(i.prr_out * 10 <= i.prr_delivered * 8);
	wire_free(w);
}

static uint32_t hold_idx;

static int
hold_hook(struct wire *w, int to_b, const struct tcp_seg_in *s)
{
	(void)w;
	if (!to_b || s->len == 0)
		return 0;
	return rec.n_data++ == hold_idx ? 3 : 0;
}

static void
a_needless_retransmission_comes_back_as_dsack_and_widens_rack_window(void **state)
{
	struct wire *w = setup(0);
	struct tcp_conn_info i;

	(void)state;
	/* Segment 30 arrives 30 ms late: RACK (window min_RTT/4 = 2.5 ms)
	 * resends it, then the original arrives too. */
	w->drop = hold_hook;
	w->hold = MS(30);
	hold_idx = 30;
	wire_connect(w);
	transfer(w, 400000);
	tcp_conn_get_info(w->app_a.conn, &i);
	assert_int_equal(cnt(w->a, TCP_CNT_RETRANSMIT), 1);
	assert_int_equal(cnt(w->b, TCP_CNT_DSACK_SENT), 1);
	assert_int_equal(cnt(w->a, TCP_CNT_DSACK_RECEIVED), 1);
	/* RFC 8985 6.2 step 4: the window grows by min_RTT/4 per round
	 * with a D-SACK. */
	assert_int_equal(i.reo_wnd_mult, 2);
	wire_free(w);
}

/* B sees 0..19, _, 21, 22, 22, 23...: the second copy of 22 is a duplicate
 * of out-of-order data. */
static struct {
	uint32_t dup_seq, dup_end;
	uint32_t dsack, dsack_then_block;
} dd;

static int
dup_ooo_hook(struct wire *w, int to_b, const struct tcp_seg_in *s)
{
	(void)w;
	if (!to_b) {
		if (dd.dup_end != 0 && s->nsack > 0 && s->sack[0].left == dd.dup_seq &&
		    s->sack[0].right == dd.dup_end) {
			dd.dsack++;
			if (s->nsack > 1 && tcp_seq_le(s->sack[1].left, dd.dup_seq - 1448) &&
			    tcp_seq_ge(s->sack[1].right, dd.dup_end))
				dd.dsack_then_block++;
		}
		return 0;
	}
	if (s->len == 0)
		return 0;
	if (rec.n_data == 22 && dd.dup_end == 0) {
		dd.dup_seq = s->seq;
		dd.dup_end = s->seq + s->len;
	}
	switch (rec.n_data++) {
	case 20:
		return 1;
	case 22:
		return 2;
	default:
		return 0;
	}
}

static void
a_duplicate_of_out_of_order_data_is_reported_by_dsack(void **state)
{
	struct wire *w = setup(0);

	(void)state;
	memset(&dd, 0, sizeof(dd));
	w->drop = dup_ooo_hook;
	wire_connect(w);
	transfer(w, 200000);
	/* RFC 2883 4: the duplicate first, then the block holding it (21
	 * and 22 at least). Only 22 alone as the first block marks it: the
	 * block of 21..23 is larger. */
	assert_int_equal(dd.dsack, 1);
	assert_int_equal(dd.dsack_then_block, 1);
	assert_int_equal(cnt(w->b, TCP_CNT_DSACK_SENT), 1);
	assert_int_equal(cnt(w->a, TCP_CNT_DSACK_RECEIVED), 1);
	assert_int_equal(cnt(w->a, TCP_CNT_RETRANSMIT), 1);
	assert_int_equal(cnt(w->a, TCP_CNT_RTO), 0);
	wire_free(w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_lost_segment_is_repaired_by_sack_recovery_without_an_rto),
		cmocka_unit_test(one_lost_segment_is_repaired_by_newreno_without_sack),
		cmocka_unit_test(three_losses_in_one_window_are_repaired_in_one_sack_recovery),
		cmocka_unit_test(newreno_repairs_two_losses_with_a_partial_ack),
		cmocka_unit_test(the_receiver_reports_the_newest_sack_block_first),
		cmocka_unit_test(a_lost_retransmission_is_found_by_rack_without_an_rto),
		cmocka_unit_test(a_lost_tail_is_repaired_by_a_probe_not_an_rto),
		cmocka_unit_test(prr_sends_beta_times_what_was_delivered_during_recovery),
		cmocka_unit_test(a_needless_retransmission_comes_back_as_dsack_and_widens_rack_window),
		cmocka_unit_test(a_duplicate_of_out_of_order_data_is_reported_by_dsack),
	};

	if (test_eal_init("rec") != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
