/* SPDX-License-Identifier: BSD-3-Clause */
/* The retransmission queue alone: SACK marking (RFC 6675), the pipe,
 * RACK's time-based loss marking (RFC 8985 6.2) and D-SACK detection,
 * driven by hand-made ACKs on a virtual clock. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tcp_test_util.h"
#include "tcp_impl.h"

#define SEG 1000u

static struct tcp_engine *eng;
static struct tcp_conn *conn;
static uint32_t base;

/* A connection with SACK and ten 1000-byte segments sent at t0. */
static void
setup_queue(uint64_t t0)
{
	struct tcp_engine_params p;
	struct tcp_endpoints ep;

	if (eng != NULL)
		tcp_engine_free(eng);
	wire_params(&p, "sb", NULL);
	p.cb = app_cb;
	eng = tcp_engine_create(&p);
	assert_non_null(eng);
	wire_ep_v4(&ep);
	conn = tcp_connect(eng, &ep, NULL, t0);
	assert_non_null(conn);
	conn->state = TCP_ESTABLISHED;
	conn->flags |= TCP_CF_SACK;
	conn->mss = SEG;
	base = conn->snd_una = conn->snd_nxt = conn->iss + 1;
	eng->now = t0;
	for (int i = 0; i < 10; i++)
		assert_int_equal(tcp_rq_add(conn, base + SEG * i, base + SEG * (i + 1), 0), 0);
	conn->snd_nxt = conn->snd_max = base + 10 * SEG;
}

static struct tcp_seg_in
ack_with(uint32_t ack, int nblocks, const uint32_t *blocks)
{
	struct tcp_seg_in s;

	memset(&s, 0, sizeof(s));
	s.ack = ack;
	s.flags = TCP_FL_ACK;
	if (nblocks) {
		s.opts = TCP_SO_SACK;
		s.nsack = (uint8_t)nblocks;
		for (int i = 0; i < nblocks; i++) {
			s.sack[i].left = blocks[2 * i];
			s.sack[i].right = blocks[2 * i + 1];
		}
	}
	return s;
}

static uint32_t
flags_of(int idx)
{
	uint32_t i = conn->rq_head;

	while (i != TCP_TR_NONE) {
		struct tcp_txrec *r = tcp_rec(eng, i);

		if (r->seq == base + SEG * (uint32_t)idx)
			return r->flags;
		i = r->next;
	}
	return 0xdead;
}

static void
sack_blocks_mark_whole_segments_and_shrink_the_pipe(void **state)
{
	uint32_t b[] = { 0, 0, 0, 0 };
	struct tcp_seg_in s;

	(void)state;
	setup_queue(MS(1000));
	assert_int_equal(tcp_rq_pipe(conn), 10 * SEG);
	b[0] = base + 3 * SEG; b[1] = base + 5 * SEG;       /* segments 3, 4 */
	b[2] = base + 7 * SEG + 500; b[3] = base + 9 * SEG; /* 8 only: 7 is partly covered */
	eng->now = MS(1010);
	s = ack_with(base, 2, b);
	assert_int_equal(tcp_rq_sack(conn, &s), 3 * SEG);
	assert_int_equal(conn->sacked_bytes, 3 * SEG);
	assert_true(flags_of(3) & TCP_TR_SACKED);
	assert_true(flags_of(4) & TCP_TR_SACKED);
	assert_false(flags_of(7) & TCP_TR_SACKED);
	assert_true(flags_of(8) & TCP_TR_SACKED);
	assert_int_equal(tcp_rq_pipe(conn), 7 * SEG);
	/* The same blocks again add nothing. */
	assert_int_equal(tcp_rq_sack(conn, &s), 0);
}

static void
a_cumulative_ack_frees_records_and_their_sacked_bytes(void **state)
{
	uint32_t b[] = { 0, 0 };
	struct tcp_seg_in s;

	(void)state;
	setup_queue(MS(1000));
	b[0] = base + 2 * SEG; b[1] = base + 4 * SEG;
	s = ack_with(base, 1, b);
	tcp_rq_sack(conn, &s);
	assert_int_equal(conn->sacked_bytes, 2 * SEG);
	/* ACK up to the middle of segment 5. */
	conn->snd_una = base + 5 * SEG + 300;
	s = ack_with(conn->snd_una, 0, NULL);
	tcp_rq_ack(conn, &s);
	assert_int_equal(conn->rq_count, 5);
	assert_int_equal(conn->sacked_bytes, 0);
	assert_int_equal(tcp_rec(eng, conn->rq_head)->seq, base + 5 * SEG + 300);
	assert_int_equal(tcp_rq_pipe(conn), 5 * SEG - 300);
}

static void
rack_marks_lost_only_once_the_reordering_window_has_passed(void **state)
{
	uint32_t b[2];
	struct tcp_seg_in s;

	(void)state;
	setup_queue(MS(1000));
	conn->min_rtt_ns = MS(20);
	conn->srtt_ns = MS(20);
	/* Segment 9 is SACKed 20 ms after it left: RACK.rtt = 20 ms. One
	 * SACKed segment is below DupThresh, so the window is min_RTT/4. */
	eng->now = MS(1020);
	b[0] = base + 9 * SEG; b[1] = base + 10 * SEG;
	s = ack_with(base, 1, b);
	tcp_rq_sack(conn, &s);
	assert_int_equal(tcp_rack_detect(conn), 0);
	/* 1000 + 20 + 5 ms (send times are kept 1 ns apart, so a few ns
	 * less) */
	assert_true(conn->rack_at <= MS(1025) && conn->rack_at > MS(1025) - 20);
	eng->now = MS(1025);
	assert_int_equal(tcp_rack_detect(conn), 9);
	for (int i = 0; i < 9; i++)
		assert_true(flags_of(i) & TCP_TR_LOST);
	assert_int_equal(tcp_rq_pipe(conn), 0);
}

static void
three_sacked_segments_leave_no_reordering_window(void **state)
{
	uint32_t b[2];
	struct tcp_seg_in s;

	(void)state;
	setup_queue(MS(1000));
	conn->min_rtt_ns = MS(20);
	eng->now = MS(1020);
	b[0] = base + 7 * SEG; b[1] = base + 10 * SEG;
	s = ack_with(base, 1, b);
	tcp_rq_sack(conn, &s);
	/* RFC 8985 6.2 step 4: DupThresh SACKed, no reordering seen. */
	assert_int_equal(tcp_rack_detect(conn), 7);
}

static void
a_retransmission_is_judged_by_its_own_send_time(void **state)
{
	uint32_t b[2];
	struct tcp_seg_in s;
	struct tcp_txrec *r0;

	(void)state;
	setup_queue(MS(1000));
	conn->min_rtt_ns = MS(20);
	/* Segment 0 was retransmitted at 1030; segment 9 sent at 1000 is
	 * SACKed at 1040. Segment 9 left before the retransmission, so it
	 * says nothing about it. */
	r0 = tcp_rec(eng, conn->rq_head);
	r0->flags |= TCP_TR_RETRANS;
	r0->xmit_ns = MS(1030);
	eng->now = MS(1040);
	b[0] = base + 9 * SEG; b[1] = base + 10 * SEG;
	s = ack_with(base, 1, b);
	tcp_rq_sack(conn, &s);
	tcp_rack_detect(conn);
	/* RACK.rtt = 40 ms, window min_RTT/4 = 5 ms: at 1045 the others
	 * sent at 1000 are overdue; the retransmission is not. */
	eng->now = MS(1045);
	tcp_rack_detect(conn);
	assert_false(flags_of(0) & TCP_TR_LOST);
	assert_true(flags_of(1) & TCP_TR_LOST);
	assert_true(flags_of(8) & TCP_TR_LOST);
}

static void
a_first_block_below_the_ack_is_a_dsack(void **state)
{
	uint32_t b[4];
	struct tcp_seg_in s;

	(void)state;
	setup_queue(MS(1000));
	conn->snd_una = base + 2 * SEG;
	s = ack_with(conn->snd_una, 0, NULL);
	tcp_rq_ack(conn, &s);
	b[0] = base; b[1] = base + SEG; /* duplicate of segment 0 */
	b[2] = base + 5 * SEG; b[3] = base + 6 * SEG;
	s = ack_with(conn->snd_una, 2, b);
	assert_int_equal(tcp_rq_sack(conn, &s), SEG);
	assert_int_equal(tcp_engine_counters(eng)[TCP_CNT_DSACK_RECEIVED], 1);
	assert_int_equal(conn->reo_wnd_mult, 2);
	/* A second D-SACK in the same round does not widen it again. */
	tcp_rq_sack(conn, &s);
	assert_int_equal(conn->reo_wnd_mult, 2);
}

/* Segment 0 is held up in the network; 1, 2 and 3 are SACKed at 1020, so
 * RACK marks 0 lost and it is resent at 1020. At 1026 the original
 * arrives and a cumulative ACK covers 0..3. */
static void
hold_up_segment_0_and_resend_it(void)
{
	uint32_t b[2] = { 0, 0 };
	struct tcp_seg_in s;
	struct tcp_txrec *r0;

	setup_queue(MS(1000));
	conn->flags |= TCP_CF_TS;
	conn->min_rtt_ns = MS(5);
	conn->srtt_ns = MS(20);
	eng->now = MS(1020);
	b[0] = base + SEG; b[1] = base + 4 * SEG;
	s = ack_with(base, 1, b);
	tcp_rq_sack(conn, &s);
	assert_int_equal(tcp_rack_detect(conn), 1);
	assert_true(flags_of(0) & TCP_TR_LOST);
	r0 = tcp_rec(eng, conn->rq_head);
	r0->flags = (r0->flags & ~TCP_TR_LOST) | TCP_TR_RETRANS;
	r0->xmit_ns = MS(1020);
	eng->now = MS(1026);
	conn->snd_una = base + 4 * SEG;
}

static void
an_ack_of_the_original_does_not_date_the_retransmission(void **state)
{
	struct tcp_seg_in s;

	(void)state;
	hold_up_segment_0_and_resend_it();
	/* The ACK echoes the original's timestamp (sent at 1000): the
	 * retransmission was not delivered (RFC 8985 6.2 step 2), although
	 * 6 ms after it is above min_RTT. Segments 4..9 left with 1..3,
	 * which took 20 ms: they are not overdue. Taking the resend time as
	 * RACK.xmit_ts would mark all six lost at once. */
	s = ack_with(conn->snd_una, 0, NULL);
	s.opts |= TCP_SO_TS;
	s.tsecr = (uint32_t)(MS(1000) / MS(1)) + conn->ts_off;
	tcp_rq_ack(conn, &s);
	assert_true(conn->rack_xmit_ns < MS(1001));
	assert_int_equal(tcp_rack_detect(conn), 0);
	for (int i = 4; i < 10; i++)
		assert_false(flags_of(i) & TCP_TR_LOST);
}

static void
an_ack_that_echoes_the_retransmission_dates_it(void **state)
{
	struct tcp_seg_in s;

	(void)state;
	hold_up_segment_0_and_resend_it();
	/* This time the ACK echoes the retransmission's own timestamp: it
	 * was delivered, 6 ms after it left, so segments 4..9, sent at 1000,
	 * are overdue. */
	s = ack_with(conn->snd_una, 0, NULL);
	s.opts |= TCP_SO_TS;
	s.tsecr = (uint32_t)(MS(1020) / MS(1)) + conn->ts_off;
	tcp_rq_ack(conn, &s);
	assert_int_equal(conn->rack_xmit_ns, MS(1020));
	assert_int_equal(conn->rack_rtt_ns, MS(6));
	assert_int_equal(tcp_rack_detect(conn), 6);
}

static void
blocks_outside_the_window_are_ignored(void **state)
{
	uint32_t b[4];
	struct tcp_seg_in s;

	(void)state;
	setup_queue(MS(1000));
	b[0] = base + 9 * SEG; b[1] = base + 12 * SEG;  /* past SND.MAX */
	b[2] = base + 5 * SEG; b[3] = base + 4 * SEG;   /* inverted */
	s = ack_with(base, 2, b);
	assert_int_equal(tcp_rq_sack(conn, &s), 0);
	assert_int_equal(conn->sacked_bytes, 0);
	tcp_engine_free(eng);
	eng = NULL;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sack_blocks_mark_whole_segments_and_shrink_the_pipe),
		cmocka_unit_test(a_cumulative_ack_frees_records_and_their_sacked_bytes),
		cmocka_unit_test(rack_marks_lost_only_once_the_reordering_window_has_passed),
		cmocka_unit_test(three_sacked_segments_leave_no_reordering_window),
		cmocka_unit_test(a_retransmission_is_judged_by_its_own_send_time),
		cmocka_unit_test(a_first_block_below_the_ack_is_a_dsack),
		cmocka_unit_test(an_ack_of_the_original_does_not_date_the_retransmission),
		cmocka_unit_test(an_ack_that_echoes_the_retransmission_dates_it),
		cmocka_unit_test(blocks_outside_the_window_are_ignored),
	};

	if (test_eal_init("sb") != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
