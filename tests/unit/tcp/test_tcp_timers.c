/* SPDX-License-Identifier: BSD-3-Clause */
/* Timers on the virtual clock: RFC 6298 RTO values and backoff, SYN
 * retries, Karn's rule, delayed ACKs and ACKs per input burst (the
 * out-of-order ones included), zero-window probes. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tcp_test_util.h"
#include "tcp_impl.h"

static struct tcp_engine_params pa, pb;

/* What the drop hooks saw. */
static struct {
	int drop_data_to_b;   /* drop A's data segments */
	int drop_syn;         /* drop A's SYNs */
	int drop_first_data;  /* drop only the first data segment once */
	uint64_t at[64];      /* times of the matching segments */
	uint32_t n;
	uint32_t probe_seq;   /* record A's segments with this seq and no data */
	uint32_t drop_nth_data; /* drop A's nth data segment (1: the first), once */
	uint32_t nth_data;    /* give A's nth data segment nth_verdict: */
	int nth_verdict;      /* 2 deliver twice, 3 hold back by w->hold */
	uint32_t n_data;      /* A's data segments seen */
	/* B's pure ACKs: when, what they acknowledge, their window field */
	uint64_t ack_at[64];
	uint32_t ack[64], ack_wnd[64];
	uint32_t n_acks;
} rec;

static int
hook(struct wire *w, int to_b, const struct tcp_seg_in *s)
{
	if (!to_b) {
		if (s->len == 0 && !(s->flags & (TCP_FL_SYN | TCP_FL_FIN | TCP_FL_RST)) &&
		    rec.n_acks < 64) {
			rec.ack_at[rec.n_acks] = w->now;
			rec.ack[rec.n_acks] = s->ack;
			rec.ack_wnd[rec.n_acks++] = s->wnd;
		}
		return 0;
	}
	if (s->len && ++rec.n_data == rec.drop_nth_data)
		return 1;
	if (s->len && rec.n_data == rec.nth_data)
		return rec.nth_verdict;
	if (s->len && rec.drop_data_to_b) {
		if (rec.n < 64)
			rec.at[rec.n++] = w->now;
		return 1;
	}
	if (s->len && rec.drop_first_data) {
		rec.drop_first_data = 0;
		return 1;
	}
	if ((s->flags & TCP_FL_SYN) && rec.drop_syn) {
		if (rec.n < 64)
			rec.at[rec.n++] = w->now;
		return 1;
	}
	if (rec.probe_seq && s->seq == rec.probe_seq && s->len == 0 && rec.n < 64)
		rec.at[rec.n++] = w->now;
	return 0;
}

static struct wire *
setup(uint8_t flags)
{
	struct wire *w;

	memset(&rec, 0, sizeof(rec));
	wire_params(&pa, "a", NULL);
	wire_params(&pb, "b", NULL);
	pa.flags = flags;
	w = wire_new(&pa, &pb);
	assert_non_null(w->a);
	w->drop = hook;
	return w;
}

static struct tcp_conn_info
info(struct tcp_conn *c)
{
	struct tcp_conn_info i;

	tcp_conn_get_info(c, &i);
	return i;
}

static void
the_rto_starts_at_200ms_and_doubles_on_each_expiry(void **state)
{
	struct wire *w = setup(0);
	struct tcp_conn *c = wire_connect(w);
	uint64_t t0;

	(void)state;
	assert_int_equal(info(c).rto_ns, MS(200));
	rec.drop_data_to_b = 1;
	t0 = w->now;
	assert_int_equal(tcp_send(c, "abc", 3, w->now), 3);
	wire_run(w, MS(3100));
	/* Sent at t0, then 200, 400, 800 and 1600 ms later. */
	assert_true(rec.n >= 5);
	assert_int_equal(rec.at[0] - t0, 0);
	assert_int_equal(rec.at[1] - t0, MS(200));
	assert_int_equal(rec.at[2] - t0, MS(600));
	assert_int_equal(rec.at[3] - t0, MS(1400));
	assert_int_equal(rec.at[4] - t0, MS(3000));
	assert_int_equal(info(c).backoff, 4);
	assert_int_equal(info(c).cwnd, info(c).mss); /* loss window */
	/* Let the next one through: the ACK ends the backoff. */
	rec.drop_data_to_b = 0;
	wire_run(w, MS(3300));
	assert_int_equal(w->app_b.rx_bytes, 3);
	assert_int_equal(info(c).backoff, 0);
	assert_int_equal(info(c).snd_una, info(c).snd_nxt);
	assert_int_equal(tcp_engine_counters(w->a)[TCP_CNT_RTO], 5);
	wire_free(w);
}

static void
srtt_rttvar_and_rto_follow_rfc6298_exactly(void **state)
{
	static uint8_t buf[2 * 1448];
	struct wire *w;
	struct tcp_conn *c;

	(void)state;
	memset(&rec, 0, sizeof(rec));
	wire_params(&pa, "a", NULL);
	wire_params(&pb, "b", NULL);
	pa.rto_min_ns = US(1); /* see the raw formula */
	w = wire_new(&pa, &pb);
	c = wire_connect(w);
	/* First sample R = 10 ms: SRTT = R, RTTVAR = R/2, RTO = 10 + 4*5. */
	assert_int_equal(info(c).srtt_ns, MS(10));
	assert_int_equal(info(c).rttvar_ns, MS(5));
	assert_int_equal(info(c).rto_ns, MS(30));
	/* Two full segments: B acks at once, R = 10 ms again. RTTVAR =
	 * 3/4 * 5 + 1/4 * 0 = 3.75 ms; SRTT = 10 ms; RTO = 25 ms. */
	tcp_send(c, buf, sizeof(buf), w->now);
	wire_run(w, MS(15));
	assert_int_equal(info(c).srtt_ns, MS(10));
	assert_int_equal(info(c).rttvar_ns, US(3750));
	assert_int_equal(info(c).rto_ns, MS(25));
	/* Now R = 40 ms: RTTVAR = 3/4 * 3.75 + 1/4 * 30 = 10.3125 ms,
	 * SRTT = 7/8 * 10 + 1/8 * 40 = 13.75 ms, RTO = 13.75 + 41.25. */
	w->delay = MS(20);
	tcp_send(c, buf, sizeof(buf), w->now);
	wire_run(w, MS(45));
	assert_int_equal(info(c).rttvar_ns, 10312500);
	assert_int_equal(info(c).srtt_ns, US(13750));
	assert_int_equal(info(c).rto_ns, MS(55));
	wire_free(w);
}

static void
syns_are_retried_at_1_3_7_15_31_63_s_then_the_open_times_out(void **state)
{
	struct wire *w = setup(0);
	static const uint64_t want[] = { 0, 1, 3, 7, 15, 31, 63 };
	struct tcp_conn *c;
	uint64_t t0 = w->now;

	(void)state;
	rec.drop_syn = 1;
	tcp_listen(w->b, 80, true);
	c = tcp_connect(w->a, &w->ep_a, &w->app_a, w->now);
	assert_non_null(c);
	wire_run(w, MS(122999));
	assert_int_equal(rec.n, 7);
	for (unsigned int i = 0; i < 7; i++)
		assert_int_equal(rec.at[i] - t0, MS(1000) * want[i]);
	assert_int_equal(w->app_a.n_closed, 0);
	/* The seventh wait is 64 s capped at rto_max (60 s): 63 + 60. */
	wire_run(w, MS(1));
	assert_true(w->app_a.events & TCP_EV_TIMEOUT);
	assert_int_equal(w->app_a.n_closed, 1);
	assert_int_equal(tcp_engine_conn_count(w->a), 0);
	wire_free(w);
}

static void
a_retransmitted_segment_gives_no_rtt_sample_without_timestamps(void **state)
{
	struct wire *w = setup(TCP_F_NO_TS);
	struct tcp_conn *c = wire_connect(w);

	(void)state;
	assert_int_equal(info(c).srtt_ns, MS(10));
	rec.drop_first_data = 1;
	tcp_send(c, "karn", 4, w->now);
	wire_run(w, MS(300));
	assert_int_equal(w->app_b.rx_bytes, 4);
	assert_int_equal(info(c).retransmits, 1);
	/* Karn: the ACK of the retransmission could belong to either send,
	 * so the 210 ms it took is not a sample. */
	assert_int_equal(info(c).srtt_ns, MS(10));
	assert_int_equal(info(c).rttvar_ns, MS(5));
	wire_free(w);
}

static void
a_lone_segment_is_acked_after_the_40ms_delay(void **state)
{
	struct wire *w = setup(0);
	struct tcp_conn *c = wire_connect(w);
	uint64_t t0, acks;

	(void)state;
	wire_run(w, MS(100));
	acks = w->n_pure_ack[0];
	t0 = w->now;
	tcp_send(c, "x", 1, w->now);
	wire_run(w, MS(44));
	assert_int_equal(w->n_pure_ack[0], acks);
	wire_run(w, MS(1));
	assert_int_equal(w->n_pure_ack[0], acks + 1);
	assert_int_equal(w->last_at[0] - t0, w->delay + MS(40));
	assert_int_equal(tcp_engine_counters(w->b)[TCP_CNT_DELACK], 1);
	wire_free(w);
}

/* Send len bytes on an idle connection: the receiver must ACK at once,
 * want_acks pure ACKs one path delay later, with no delayed-ACK timer. */
static void
check_acked_at_once(size_t len, uint64_t want_acks)
{
	static uint8_t buf[4 * 1448];
	struct wire *w = setup(0);
	struct tcp_conn *c = wire_connect(w);
	uint64_t t0, acks;

	assert_true(len <= sizeof(buf));
	wire_run(w, MS(100));
	acks = w->n_pure_ack[0];
	t0 = w->now;
	tcp_send(c, buf, len, w->now);
	wire_run(w, w->delay);
	assert_int_equal(w->n_pure_ack[0], acks + want_acks);
	assert_int_equal(w->last_at[0] - t0, w->delay);
	assert_int_equal(tcp_engine_counters(w->b)[TCP_CNT_DELACK], 0);
	wire_free(w);
}

static void
every_second_full_segment_is_acked_at_once(void **state)
{
	(void)state;
	check_acked_at_once(4 * 1448, 2);
}

/* A full segment and a short tail are more than one full segment: the
 * ACK goes at once, not after the delayed-ACK timer (the sender would
 * otherwise probe the tail). */
static void
a_full_segment_and_a_short_tail_are_acked_at_once(void **state)
{
	(void)state;
	check_acked_at_once(1448 + 500, 1);
}

/* An idle connection, 100 ms after its handshake (A's TCP_F_* flags),
 * on a wire that delivers what is due at once as one input burst of each
 * engine; t0 is now, when the test sends. */
static struct wire *
burst_setup(struct tcp_conn **c, uint64_t *t0, uint8_t flags)
{
	struct wire *w = setup(flags);

	*c = wire_connect(w);
	assert_non_null(*c);
	wire_run(w, MS(100));
	w->burst = 1;
	rec.n_acks = 0;
	rec.n_data = 0;
	*t0 = w->now;
	return w;
}

/* Eight full segments arrive in one burst: the every-second-segment rule
 * would ACK four times; the burst sends one ACK at its end, for all
 * eight, with the window as it is after the reader took them. */
static void
in_order_segments_of_one_burst_get_one_cumulative_ack(void **state)
{
	static uint8_t buf[8 * 1448];
	struct tcp_conn *c;
	uint64_t t0;
	struct wire *w = burst_setup(&c, &t0, 0);
	struct tcp_conn_info ib;

	(void)state;
	assert_int_equal(tcp_send(c, buf, sizeof(buf), w->now), sizeof(buf));
	wire_run(w, w->delay);
	assert_int_equal(w->app_b.rx_bytes, sizeof(buf));
	assert_int_equal(rec.n_data, 8);
	assert_int_equal(rec.n_acks, 1);
	assert_int_equal(rec.ack_at[0] - t0, w->delay);
	assert_int_equal(rec.ack[0], info(c).snd_nxt);
	ib = info(w->app_b.conn);
	assert_int_equal(rec.ack_wnd[0], pb.rcv_buf >> ib.rcv_wscale);
	assert_int_equal(tcp_engine_counters(w->b)[TCP_CNT_ACK_COALESCED], 3);
	/* Nothing is left for the delayed-ACK timer. */
	wire_run(w, MS(100));
	assert_int_equal(rec.n_acks, 1);
	assert_int_equal(tcp_engine_counters(w->b)[TCP_CNT_DELACK], 0);
	assert_int_equal(info(c).snd_una, info(c).snd_nxt);
	wire_free(w);
}

/* The ACKs for a hole reach A one delay later: the hole goes again at
 * once, not at the RTO, and the whole of len arrives. */
static void
hole_goes_again_at_once(struct wire *w, struct tcp_conn *c, uint64_t len)
{
	wire_run(w, w->delay);
	assert_int_equal(info(c).retransmits, 1);
	assert_int_equal(tcp_engine_counters(w->a)[TCP_CNT_RTO], 0);
	wire_run(w, 2 * w->delay);
	assert_int_equal(w->app_b.rx_bytes, len);
	assert_int_equal(info(c).snd_una, info(c).snd_nxt);
	wire_free(w);
}

/* A bursty wire: A sends eight full segments, the third is lost, the
 * rest arrive in one burst. *hole: the lost segment's sequence. */
static struct wire *
eight_with_the_third_lost(struct tcp_conn **c, uint64_t *t0, uint32_t *hole,
			  uint8_t flags, const uint8_t buf[8 * 1448])
{
	struct wire *w = burst_setup(c, t0, flags);

	rec.drop_nth_data = 3;
	*hole = info(*c).snd_nxt + 2 * 1448;
	assert_int_equal(tcp_send(*c, buf, 8 * 1448, w->now), 8 * 1448);
	wire_run(w, w->delay);
	assert_int_equal(rec.n_data, 8);
	return w;
}

/* The third of eight segments is lost. With SACK, the fourth and each
 * after it are out of order, and their ACK waits for the burst's end
 * (ooo_ack()): one duplicate ACK there, SACKing all five, where a
 * receiver without bursts sends five. It is enough: the sender
 * retransmits the hole when it arrives, not at its RTO. */
static void
a_hole_in_a_burst_is_sacked_once_at_the_end_and_resent_at_once(void **state)
{
	static uint8_t buf[8 * 1448];
	struct tcp_conn *c;
	uint64_t t0;
	uint32_t hole;
	struct wire *w = eight_with_the_third_lost(&c, &t0, &hole, 0, buf);

	(void)state;
	assert_true(info(c).sack_ok);
	assert_int_equal(rec.n_acks, 1);
	assert_int_equal(rec.ack[0], hole);
	assert_int_equal(rec.ack_at[0] - t0, w->delay);
	assert_int_equal(w->last[0].nsack, 1);
	assert_int_equal(w->last[0].sack[0].left, hole + 1448);
	assert_int_equal(w->last[0].sack[0].right, hole + 6 * 1448);
	/* The second segment's ACK, then the five out-of-order ones. */
	assert_int_equal(tcp_engine_counters(w->b)[TCP_CNT_OOO_ACK_HELD], 5);
	hole_goes_again_at_once(w, c, sizeof(buf));
}

/* The same loss without SACK: the sender counts duplicate ACKs, so each
 * out-of-order segment is ACKed at once (RFC 5681 4.2), as without a
 * burst: five duplicate ACKs for the hole, none held back, and no ACK
 * added at the end. */
static void
without_sack_each_out_of_order_segment_in_a_burst_is_acked_at_once(void **state)
{
	static uint8_t buf[8 * 1448];
	struct tcp_conn *c;
	uint64_t t0;
	uint32_t hole;
	struct wire *w = eight_with_the_third_lost(&c, &t0, &hole, TCP_F_NO_SACK, buf);

	(void)state;
	assert_false(info(c).sack_ok);
	assert_int_equal(rec.n_acks, 5);
	for (uint32_t i = 0; i < rec.n_acks; i++) {
		assert_int_equal(rec.ack[i], hole);
		assert_int_equal(rec.ack_at[i] - t0, w->delay);
	}
	assert_int_equal(tcp_engine_counters(w->b)[TCP_CNT_OOO_ACK_HELD], 0);
	hole_goes_again_at_once(w, c, sizeof(buf));
}

/* A sends len bytes, and all it sent reaches B as one input burst,
 * late ns after one delay (frames held back by up to late come last). */
static void
send_as_one_burst(struct wire *w, struct tcp_conn *c, const uint8_t *buf,
		  uint32_t len, uint64_t late)
{
	assert_int_equal(tcp_send(c, buf, len, w->now), len);
	wire_collect(w);
	w->now += w->delay + late;
	wire_deliver(w);
	wire_collect(w);
}

/* The third of eight segments comes last in the same burst (the path
 * reordered it, as veth does between two CPUs' backlogs). The sender
 * sees no hole: one cumulative ACK at the burst's end, no duplicate ACK,
 * no SACK block, nothing retransmitted. */
static void
segments_reordered_within_a_burst_show_the_sender_no_hole(void **state)
{
	static uint8_t buf[8 * 1448];
	struct tcp_conn *c;
	uint64_t t0;
	struct wire *w = burst_setup(&c, &t0, 0);

	(void)state;
	rec.nth_data = 3;
	rec.nth_verdict = 3;
	w->hold = 1000;
	/* One burst with all eight, the third after the eighth. */
	send_as_one_burst(w, c, buf, sizeof(buf), w->hold);
	assert_int_equal(rec.n_data, 8);
	assert_int_equal(w->app_b.rx_bytes, sizeof(buf));
	assert_int_equal(rec.n_acks, 1);
	assert_int_equal(rec.ack[0], info(c).snd_nxt);
	assert_int_equal(w->last[0].nsack, 0);
	/* Five out-of-order segments and the one that filled the hole. */
	assert_int_equal(tcp_engine_counters(w->b)[TCP_CNT_OOO_ACK_HELD], 6);
	wire_run(w, MS(300));
	assert_int_equal(info(c).retransmits, 0);
	assert_int_equal(info(c).snd_una, info(c).snd_nxt);
	wire_free(w);
}

/* The third segment is lost and the fourth arrives twice in the same
 * burst: the duplicate gets its ACK at once with its D-SACK block (RFC
 * 2883), which also settles the ACK held for the fourth; the four after
 * it share one ACK at the burst's end. */
static void
a_duplicate_in_a_burst_gets_its_own_d_sack_at_once(void **state)
{
	static uint8_t buf[8 * 1448];
	struct tcp_conn *c;
	uint64_t t0;
	struct wire *w = burst_setup(&c, &t0, 0);
	uint32_t hole;

	(void)state;
	rec.drop_nth_data = 3;
	rec.nth_data = 4;
	rec.nth_verdict = 2;
	hole = info(c).snd_nxt + 2 * 1448;
	send_as_one_burst(w, c, buf, sizeof(buf), 0);
	assert_int_equal(rec.n_acks, 2);
	assert_int_equal(rec.ack[0], hole);
	assert_int_equal(rec.ack[1], hole);
	assert_int_equal(tcp_engine_counters(w->b)[TCP_CNT_DSACK_SENT], 1);
	/* The last ACK SACKs the five that arrived after the hole. */
	assert_int_equal(w->last[0].nsack, 1);
	assert_int_equal(w->last[0].sack[0].left, hole + 1448);
	assert_int_equal(w->last[0].sack[0].right, hole + 6 * 1448);
	wire_run(w, MS(10));
	assert_int_equal(w->app_b.rx_bytes, sizeof(buf));
	wire_free(w);
}

/* Three full segments and a FIN in one burst: the FIN is ACKed at once,
 * and that ACK also covers the segments whose ACK the burst held. */
static void
a_fin_in_a_burst_is_acked_at_once_with_the_data_before_it(void **state)
{
	static uint8_t buf[3 * 1448];
	struct tcp_conn *c;
	uint64_t t0;
	struct wire *w = burst_setup(&c, &t0, 0);

	(void)state;
	assert_int_equal(tcp_send(c, buf, sizeof(buf), w->now), sizeof(buf));
	assert_int_equal(tcp_shutdown(c, w->now), 0);
	wire_run(w, w->delay);
	assert_true(w->app_b.events & TCP_EV_PEER_FIN);
	assert_int_equal(info(w->app_b.conn).state, TCP_CLOSE_WAIT);
	assert_int_equal(rec.n_acks, 1);
	assert_int_equal(rec.ack_at[0] - t0, w->delay);
	assert_int_equal(rec.ack[0], info(c).snd_nxt); /* the FIN counted */
	wire_run(w, w->delay);
	assert_int_equal(info(c).state, TCP_FIN_WAIT_2);
	wire_run(w, MS(100));
	assert_int_equal(rec.n_acks, 1);
	wire_free(w);
}

/* Eight full segments in one burst: B's connection leaves its output,
 * timer update and events to the end of the burst, so its reader is
 * called once, for all eight, and the one ACK follows that read. */
static void
a_burst_of_segments_is_delivered_in_one_readable_event(void **state)
{
	static uint8_t buf[8 * 1448];
	struct tcp_conn *c;
	uint64_t t0;
	struct wire *w = burst_setup(&c, &t0, 0);
	uint32_t before = w->app_b.n_readable;

	(void)state;
	assert_int_equal(tcp_send(c, buf, sizeof(buf), w->now), sizeof(buf));
	wire_run(w, w->delay);
	assert_int_equal(w->app_b.rx_bytes, sizeof(buf));
	assert_int_equal(w->app_b.n_readable - before, 1);
	assert_int_equal(tcp_engine_counters(w->b)[TCP_CNT_BURST_DEFERRED], 8);
	assert_int_equal(rec.n_acks, 1);
	assert_int_equal(rec.ack_at[0] - t0, w->delay);
	assert_int_equal(rec.ack[0], info(c).snd_nxt);
	wire_free(w);
}

/* One short segment in a burst owes no ACK at the burst's end: the
 * deferred timer update still arms the delayed-ACK timer, which sends
 * it delack_ns later. */
static void
a_lone_segment_of_a_burst_still_gets_its_delayed_ack(void **state)
{
	struct tcp_conn *c;
	uint64_t t0;
	struct wire *w = burst_setup(&c, &t0, 0);

	(void)state;
	assert_int_equal(tcp_send(c, "short", 5, w->now), 5);
	wire_run(w, w->delay);
	assert_int_equal(w->app_b.rx_bytes, 5);
	assert_int_equal(tcp_engine_counters(w->b)[TCP_CNT_BURST_DEFERRED], 1);
	assert_int_equal(rec.n_acks, 0);
	wire_run(w, MS(100));
	assert_int_equal(rec.n_acks, 1);
	assert_int_equal(rec.ack_at[0] - t0, w->delay + pb.delack_ns);
	assert_int_equal(tcp_engine_counters(w->b)[TCP_CNT_DELACK], 1);
	assert_int_equal(info(c).snd_una, info(c).snd_nxt);
	wire_free(w);
}

/* A caller that starts a burst and never ends it: what the burst
 * deferred (the read, the ACK) waits for no timer but happens at the
 * next tcp_timers_run(), at once. */
static void
a_burst_left_open_ends_at_the_next_timer_run(void **state)
{
	static uint8_t buf[4 * 1448];
	struct tcp_conn *c;
	uint64_t t0;
	struct wire *w = burst_setup(&c, &t0, 0);

	(void)state;
	w->burst = 0;
	assert_int_equal(tcp_send(c, buf, sizeof(buf), w->now), sizeof(buf));
	wire_collect(w);
	w->now += w->delay;
	tcp_input_burst_begin(w->b);
	wire_deliver(w);
	assert_int_equal(w->app_b.rx_bytes, 0);
	wire_collect(w);
	assert_int_equal(rec.n_acks, 0);
	tcp_timers_run(w->b, w->now);
	assert_int_equal(w->app_b.rx_bytes, sizeof(buf));
	wire_collect(w);
	assert_int_equal(rec.n_acks, 1);
	assert_int_equal(rec.ack_at[0] - t0, w->delay);
	assert_int_equal(rec.ack[0], info(c).snd_nxt);
	wire_free(w);
}

static void
zero_window_probes_back_off_from_the_rto(void **state)
{
	struct wire *w = setup(0);
	struct tcp_conn *c;
	static uint8_t buf[100000];
	uint8_t sink[8192];

	(void)state;
	wire_params(&pb, "b", NULL);
	pb.rcv_buf = 8 * 1448;
	w = wire_new(&pa, &pb);
	w->drop = hook;
	c = wire_connect(w);
	w->app_b.auto_read = 0;
	assert_int_equal(tcp_send(c, buf, 50000, w->now), 50000);
	wire_run(w, MS(30));
	assert_int_equal(info(c).snd_wnd, 0);
	assert_int_equal(info(c).snd_una, info(c).snd_nxt);
	rec.probe_seq = info(c).snd_una - 1;
	rec.n = 0;
	wire_run(w, MS(3200));
	/* Probes 200, 400, 800, 1600 ms apart (the RTO, doubled). */
	assert_true(rec.n >= 4);
	assert_int_equal(rec.at[1] - rec.at[0], MS(400));
	assert_int_equal(rec.at[2] - rec.at[1], MS(800));
	assert_int_equal(rec.at[3] - rec.at[2], MS(1600));
	assert_int_equal(tcp_engine_counters(w->a)[TCP_CNT_ZWP], rec.n);
	/* The connection survives the stall, and reading resumes it. */
	assert_int_equal(info(c).state, TCP_ESTABLISHED);
	while (tcp_recv(w->app_b.conn, sink, sizeof(sink), w->now) > 0)
		;
	w->app_b.auto_read = 1;
	wire_run(w, MS(500));
	assert_int_equal(info(c).snd_queued, 0);
	wire_free(w);
}

static void
data_that_is_never_acked_times_out_with_a_reset(void **state)
{
	struct wire *w;
	struct tcp_conn *c;

	(void)state;
	memset(&rec, 0, sizeof(rec));
	wire_params(&pa, "a", NULL);
	wire_params(&pb, "b", NULL);
	pa.data_retries = 3;
	w = wire_new(&pa, &pb);
	w->drop = hook;
	c = wire_connect(w);
	rec.drop_data_to_b = 1;
	tcp_send(c, "lost", 4, w->now);
	/* 200 + 400 + 800 ms of retransmissions, then the fourth expiry
	 * (after 1600 ms more) gives up. */
	wire_run(w, MS(2999));
	assert_int_equal(w->app_a.n_closed, 0);
	wire_run(w, MS(2));
	assert_true(w->app_a.events & TCP_EV_TIMEOUT);
	assert_int_equal(w->app_a.n_closed, 1);
	assert_int_equal(tcp_engine_counters(w->a)[TCP_CNT_TIMEOUT], 1);
	/* The peer hears about it. */
	wire_run(w, MS(20));
	assert_true(w->app_b.events & TCP_EV_RESET);
	wire_free(w);
}

static int drop_all_to_a;

static int
drop_to_a(struct wire *w, int to_b, const struct tcp_seg_in *s)
{
	(void)w; (void)s;
	return !to_b && drop_all_to_a;
}

static void
keepalive_probes_an_idle_peer_and_gives_up_when_it_is_gone(void **state)
{
	struct wire *w;
	struct tcp_conn *c;
	uint64_t t0;

	(void)state;
	wire_params(&pa, "a", NULL);
	wire_params(&pb, "b", NULL);
	pa.keepalive_idle_ns = MS(1000);
	pa.keepalive_intvl_ns = MS(100);
	pa.keepalive_probes = 3;
	w = wire_new(&pa, &pb);
	drop_all_to_a = 0;
	w->drop = drop_to_a;
	c = wire_connect(w);
	t0 = w->now;
	/* The peer answers: one probe per idle second. */
	wire_run(w, MS(3500));
	assert_int_equal(tcp_engine_counters(w->a)[TCP_CNT_KEEPALIVE], 3);
	assert_int_equal(info(c).state, TCP_ESTABLISHED);
	/* The peer vanishes: three more probes 100 ms apart, then give up
	 * at the fourth expiry. */
	drop_all_to_a = 1;
	wire_run(w, MS(1500));
	assert_int_equal(tcp_engine_counters(w->a)[TCP_CNT_KEEPALIVE], 6);
	assert_true(w->app_a.events & TCP_EV_TIMEOUT);
	assert_int_equal(w->app_a.n_closed, 1);
	(void)t0;
	wire_free(w);
}

static uint64_t spike_until;

static int
ack_spike(struct wire *w, int to_b, const struct tcp_seg_in *s)
{
	(void)s;
	return !to_b && w->now < spike_until ? 3 : 0;
}

static void
an_rto_caused_by_a_delay_spike_is_detected_and_undone(void **state)
{
	static uint8_t buf[10 * 1448];
	struct wire *w = setup(0);
	struct tcp_conn *c = wire_connect(w);
	uint32_t cwnd_before;

	(void)state;
	cwnd_before = info(c).cwnd;
	/* B's ACKs are held back 300 ms, longer than the 200 ms RTO. */
	w->drop = ack_spike;
	w->hold = MS(300);
	spike_until = w->now + MS(100);
	tcp_send(c, buf, sizeof(buf), w->now);
	wire_run(w, MS(600));
	assert_int_equal(w->app_b.rx_bytes, sizeof(buf));
	assert_int_equal(tcp_engine_counters(w->a)[TCP_CNT_RTO], 1);
	assert_int_equal(tcp_engine_counters(w->a)[TCP_CNT_SPURIOUS_RTO], 1);
	/* The tail loss probe resent the last segment at 2 SRTT, the RTO
	 * the first; the other eight were not resent, and the window is
	 * back. */
	assert_int_equal(tcp_engine_counters(w->a)[TCP_CNT_TLP], 1);
	assert_int_equal(info(c).retransmits, 2);
	assert_true(info(c).cwnd >= cwnd_before);
	/* The delayed ACKs measured the spike: the RTO grew. */
	assert_true(info(c).rto_ns > MS(200));
	wire_free(w);
}

/* Every pure ACK from B is late by w->hold: its host was busy. */
static int
late_ack(struct wire *w, int to_b, const struct tcp_seg_in *s)
{
	(void)w;
	return !to_b && s->len == 0 && !(s->flags & (TCP_FL_SYN | TCP_FL_FIN)) ? 3 : 0;
}

static void
a_late_ack_on_a_sub_millisecond_path_draws_no_probe(void **state)
{
	static uint8_t buf[2 * 1448];
	struct wire *w = setup(0);
	struct tcp_conn *c;

	(void)state;
	w->delay = US(50);
	c = wire_connect(w);
	/* RTT samples come from the 1 ms timestamp clock: on a path of
	 * 100 us most are 0 and SRTT decays to microseconds (the proxy e2e
	 * test saw a probe 6 us after the segment it resent). */
	c->srtt_ns = US(20);
	w->drop = late_ack;
	w->hold = MS(1);
	assert_int_equal(tcp_send(c, buf, sizeof(buf), w->now), (int32_t)sizeof(buf));
	wire_run(w, MS(20));
	assert_int_equal(w->app_b.rx_bytes, sizeof(buf));
	/* The ACK, 1.1 ms after the two segments, came before the probe. */
	assert_int_equal(tcp_engine_counters(w->a)[TCP_CNT_TLP], 0);
	assert_int_equal(tcp_engine_counters(w->a)[TCP_CNT_RETRANSMIT], 0);
	wire_free(w);
}

/* A path faster than the 1 ms timestamp clock gives RTT samples of 0:
 * they are samples, not "no sample yet" (srtt_ns 0). */
static void
zero_millisecond_rtt_samples_still_count_as_samples(void **state)
{
	static uint8_t buf[64 * 1448];
	struct wire *w = setup(0);
	struct tcp_conn *c;

	(void)state;
	w->delay = US(50);
	c = wire_connect(w);
	assert_int_equal(tcp_send(c, buf, sizeof(buf), w->now), (int32_t)sizeof(buf));
	wire_run(w, MS(20));
	assert_int_equal(w->app_b.rx_bytes, sizeof(buf));
	assert_true(info(c).srtt_ns > 0);
	assert_true(info(c).srtt_ns < US(1000));
	wire_free(w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_rto_starts_at_200ms_and_doubles_on_each_expiry),
		cmocka_unit_test(srtt_rttvar_and_rto_follow_rfc6298_exactly),
		cmocka_unit_test(syns_are_retried_at_1_3_7_15_31_63_s_then_the_open_times_out),
		cmocka_unit_test(a_retransmitted_segment_gives_no_rtt_sample_without_timestamps),
		cmocka_unit_test(a_lone_segment_is_acked_after_the_40ms_delay),
		cmocka_unit_test(every_second_full_segment_is_acked_at_once),
		cmocka_unit_test(a_full_segment_and_a_short_tail_are_acked_at_once),
		cmocka_unit_test(in_order_segments_of_one_burst_get_one_cumulative_ack),
		cmocka_unit_test(a_hole_in_a_burst_is_sacked_once_at_the_end_and_resent_at_once),
		cmocka_unit_test(without_sack_each_out_of_order_segment_in_a_burst_is_acked_at_once),
		cmocka_unit_test(segments_reordered_within_a_burst_show_the_sender_no_hole),
		cmocka_unit_test(a_duplicate_in_a_burst_gets_its_own_d_sack_at_once),
		cmocka_unit_test(a_fin_in_a_burst_is_acked_at_once_with_the_data_before_it),
		cmocka_unit_test(a_burst_of_segments_is_delivered_in_one_readable_event),
		cmocka_unit_test(a_lone_segment_of_a_burst_still_gets_its_delayed_ack),
		cmocka_unit_test(a_burst_left_open_ends_at_the_next_timer_run),
		cmocka_unit_test(zero_window_probes_back_off_from_the_rto),
		cmocka_unit_test(data_that_is_never_acked_times_out_with_a_reset),
		cmocka_unit_test(keepalive_probes_an_idle_peer_and_gives_up_when_it_is_gone),
		cmocka_unit_test(an_rto_caused_by_a_delay_spike_is_detected_and_undone),
		cmocka_unit_test(a_late_ack_on_a_sub_millisecond_path_draws_no_probe),
		cmocka_unit_test(zero_millisecond_rtt_samples_still_count_as_samples),
	};

	if (test_eal_init("tmr") != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
