/* SPDX-License-Identifier: BSD-3-Clause */
/* The RFC 9293 state machine between two engines: opens, closes, RST
 * rules and the RFC 5961 protections. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tcp_test_util.h"
#include "tcp_impl.h"

static struct tcp_engine_params pa, pb;

static struct wire *
setup_wire(void)
{
	struct wire *w;

	wire_params(&pa, "a", NULL);
	wire_params(&pb, "b", NULL);
	w = wire_new(&pa, &pb);
	assert_non_null(w->a);
	assert_non_null(w->b);
	return w;
}

static struct tcp_conn_info
info(struct tcp_conn *c)
{
	struct tcp_conn_info i;

	tcp_conn_get_info(c, &i);
	return i;
}

/* A crafted segment from B's end of ep (A's view), parsed. */
static struct rte_mbuf *
frame_from_b(const struct tcp_endpoints *ep, uint8_t flags, uint32_t seq, uint32_t ack)
{
	struct tcp_endpoints r;
	struct tcp_seg_out o = { .seq = seq, .ack = ack, .flags = flags, .wnd = 1000 };
	struct rte_mbuf *m;

	ep_reverse(&r, ep);
	m = tcp_seg_build(test_pool, &r, &o, NULL, 0, 0);
	assert_non_null(m);
	pkt_parse(m, pkt_meta(m), 0);
	return m;
}

/* Hand a crafted segment from B's 4-tuple to A. */
static void
inject_to_a(struct wire *w, uint8_t flags, uint32_t seq, uint32_t ack)
{
	assert_int_equal(tcp_input(w->a, frame_from_b(&w->ep_a, flags, seq, ack), w->now),
			 TCP_INPUT_CONSUMED);
}

static uint64_t
cnt(struct tcp_engine *e, enum tcp_cnt c)
{
	return tcp_engine_counters(e)[c];
}

static void
a_three_way_handshake_connects_both_sides_with_every_option(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c = wire_connect(w);
	struct tcp_conn_info ia, ib;

	(void)state;
	assert_non_null(c);
	assert_non_null(w->app_b.conn);
	ia = info(c);
	ib = info(w->app_b.conn);
	assert_int_equal(ia.state, TCP_ESTABLISHED);
	assert_int_equal(ib.state, TCP_ESTABLISHED);
	assert_true(w->app_a.events & TCP_EV_CONNECTED);
	assert_true(w->app_b.events & TCP_EV_CONNECTED);
	assert_true(ia.ts_ok && ia.sack_ok && ib.ts_ok && ib.sack_ok);
	/* 256 KiB buffers need a shift of 3 (65535 << 2 < 262144). */
	assert_int_equal(ia.rcv_wscale, 3);
	assert_int_equal(ia.snd_wscale, 3);
	assert_int_equal(ia.mss, 1460 - 12);
	assert_int_equal(ia.snd_una, ia.iss + 1);
	assert_int_equal(ia.rcv_nxt, ib.iss + 1);
	assert_int_equal(ib.rcv_nxt, ia.iss + 1);
	/* The SYN/SYN-ACK exchange took 10 ms: SRTT 10, RTTVAR 5, and the
	 * RTO is 10 + 4*5 = 30 ms raised to the 200 ms floor. */
	assert_int_equal(ia.srtt_ns, MS(10));
	assert_int_equal(ia.rttvar_ns, MS(5));
	assert_int_equal(ia.rto_ns, MS(200));
	assert_int_equal(ia.cwnd, 10 * ia.mss);
	wire_free(w);
}

static void
a_handshake_over_ipv6_announces_an_mss_20_bytes_smaller(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c;

	(void)state;
	wire_ep_v6(&w->ep_a);
	c = wire_connect(w);
	assert_non_null(c);
	assert_int_equal(info(c).state, TCP_ESTABLISHED);
	assert_int_equal(info(c).mss, 1440 - 12);
	assert_int_equal(tcp_conn_endpoints(w->app_b.conn)->family, 6);
	wire_free(w);
}

static void
options_disabled_on_one_side_are_not_used_by_either(void **state)
{
	struct wire *w;
	struct tcp_conn *c;

	(void)state;
	wire_params(&pa, "a", NULL);
	wire_params(&pb, "b", NULL);
	pb.flags = TCP_F_NO_TS | TCP_F_NO_SACK | TCP_F_NO_WS;
	w = wire_new(&pa, &pb);
	c = wire_connect(w);
	assert_int_equal(info(c).state, TCP_ESTABLISHED);
	assert_false(info(c).ts_ok);
	assert_false(info(c).sack_ok);
	assert_int_equal(info(c).snd_wscale, 0);
	assert_int_equal(info(c).mss, 1460);
	assert_int_equal(info(w->app_b.conn).snd_wscale, 0);
	/* Without timestamps the SYN was timed directly. */
	assert_int_equal(info(c).srtt_ns, MS(10));
	wire_free(w);
}

static void
a_syn_to_a_closed_port_is_refused_with_rst(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c;

	(void)state;
	c = tcp_connect(w->a, &w->ep_a, &w->app_a, w->now);
	assert_non_null(c);
	wire_run(w, MS(20));
	assert_true(w->app_a.events & TCP_EV_REFUSED);
	assert_true(w->app_a.events & TCP_EV_CLOSED);
	assert_int_equal(w->app_a.n_closed, 1);
	assert_int_equal(tcp_engine_conn_count(w->a), 0);
	assert_int_equal(cnt(w->b, TCP_CNT_RST_SENT), 1);
	wire_free(w);
}

static void
connecting_twice_from_the_same_tuple_fails_with_eexist(void **state)
{
	struct wire *w = setup_wire();

	(void)state;
	assert_non_null(tcp_connect(w->a, &w->ep_a, &w->app_a, w->now));
	assert_null(tcp_connect(w->a, &w->ep_a, &w->app_a, w->now));
	assert_int_equal(rte_errno, EEXIST);
	wire_free(w);
}

static void
simultaneous_open_establishes_both_sides(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_endpoints rb;
	struct tcp_conn *ca, *cb;

	(void)state;
	ep_reverse(&rb, &w->ep_a);
	ca = tcp_connect(w->a, &w->ep_a, &w->app_a, w->now);
	cb = tcp_connect(w->b, &rb, &w->app_b, w->now);
	assert_non_null(ca);
	assert_non_null(cb);
	wire_run(w, w->delay);
	assert_int_equal(info(ca).state, TCP_SYN_RECEIVED);
	assert_int_equal(info(cb).state, TCP_SYN_RECEIVED);
	wire_run(w, MS(30));
	assert_int_equal(info(ca).state, TCP_ESTABLISHED);
	assert_int_equal(info(cb).state, TCP_ESTABLISHED);
	assert_true(w->app_a.events & TCP_EV_CONNECTED);
	assert_true(w->app_b.events & TCP_EV_CONNECTED);
	assert_int_equal(info(ca).rcv_nxt, info(cb).snd_nxt);
	assert_int_equal(info(cb).rcv_nxt, info(ca).snd_nxt);
	wire_free(w);
}

static void
a_rst_at_exactly_rcv_nxt_resets_the_connection(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c = wire_connect(w);
	struct tcp_conn_info i = info(c);

	(void)state;
	inject_to_a(w, TCP_FL_RST, i.rcv_nxt, 0);
	assert_true(w->app_a.events & TCP_EV_RESET);
	assert_true(w->app_a.events & TCP_EV_CLOSED);
	assert_int_equal(cnt(w->a, TCP_CNT_RST_IN), 1);
	wire_free(w);
}

static void
an_in_window_rst_off_rcv_nxt_draws_a_challenge_ack_only(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c = wire_connect(w);
	struct tcp_conn_info i = info(c);

	(void)state;
	inject_to_a(w, TCP_FL_RST, i.rcv_nxt + 100, 0);
	assert_int_equal(info(c).state, TCP_ESTABLISHED);
	assert_false(w->app_a.events & TCP_EV_RESET);
	assert_int_equal(cnt(w->a, TCP_CNT_CHALLENGE_ACK), 1);
	wire_collect(w);
	/* The challenge ACK: <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK>. */
	assert_int_equal(w->last[1].flags, TCP_FL_ACK);
	assert_int_equal(w->last[1].seq, i.snd_nxt);
	assert_int_equal(w->last[1].ack, i.rcv_nxt);
	/* B answers with nothing (it is a pure ACK): the pair stays up. */
	wire_run(w, MS(50));
	assert_int_equal(info(c).state, TCP_ESTABLISHED);
	wire_free(w);
}

static void
an_out_of_window_rst_is_dropped_silently(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c = wire_connect(w);
	uint64_t sent = w->sent[1];

	(void)state;
	inject_to_a(w, TCP_FL_RST, info(c).rcv_nxt + 10000000, 0);
	wire_collect(w);
	assert_int_equal(w->sent[1], sent);
	assert_int_equal(cnt(w->a, TCP_CNT_RST_IGNORED), 1);
	assert_int_equal(info(c).state, TCP_ESTABLISHED);
	wire_free(w);
}

/* Linux resets after its FIN with the FIN's sequence number (RCV.NXT -
 * 1 here), when data reaches a socket its application closed: accepted
 * once the FIN is taken, and only then. */
static void
an_rst_at_the_fin_s_sequence_number_resets_a_connection_in_close_wait(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c = wire_connect(w);
	struct tcp_conn_info i;

	(void)state;
	/* Before any FIN, RCV.NXT - 1 is out of the window: ignored. */
	inject_to_a(w, TCP_FL_RST, info(c).rcv_nxt - 1, 0);
	assert_int_equal(cnt(w->a, TCP_CNT_RST_IGNORED), 1);
	assert_int_equal(info(c).state, TCP_ESTABLISHED);
	/* B closes: A takes the FIN and is in CLOSE-WAIT. */
	assert_int_equal(tcp_shutdown(w->app_b.conn, w->now), 0);
	wire_run(w, w->delay);
	i = info(c);
	assert_int_equal(i.state, TCP_CLOSE_WAIT);
	/* One below the FIN's own number is still ignored. */
	inject_to_a(w, TCP_FL_RST, i.rcv_nxt - 2, 0);
	assert_int_equal(cnt(w->a, TCP_CNT_RST_IGNORED), 2);
	assert_int_equal(info(c).state, TCP_CLOSE_WAIT);
	assert_false(w->app_a.events & TCP_EV_RESET);
	/* The FIN's own number resets it, as RCV.NXT would. */
	inject_to_a(w, TCP_FL_RST, i.rcv_nxt - 1, 0);
	assert_true(w->app_a.events & TCP_EV_RESET);
	assert_true(w->app_a.events & TCP_EV_CLOSED);
	assert_int_equal(cnt(w->a, TCP_CNT_RST_IN), 1);
	assert_int_equal(cnt(w->a, TCP_CNT_RST_IGNORED), 2);
	wire_free(w);
}

static void
a_syn_on_an_established_connection_draws_a_challenge_ack(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c = wire_connect(w);

	(void)state;
	inject_to_a(w, TCP_FL_SYN, info(c).rcv_nxt + 5, 0);
	inject_to_a(w, TCP_FL_SYN, info(c).rcv_nxt - 5000000, 0); /* out of window */
	assert_int_equal(info(c).state, TCP_ESTABLISHED);
	/* The out-of-window one draws the plain unacceptable-segment ACK. */
	assert_int_equal(cnt(w->a, TCP_CNT_CHALLENGE_ACK), 1);
	assert_int_equal(cnt(w->a, TCP_CNT_UNACCEPTABLE), 1);
	wire_free(w);
}

static void
an_ack_for_data_never_sent_is_dropped_and_answered(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c = wire_connect(w);
	struct tcp_conn_info i = info(c);

	(void)state;
	inject_to_a(w, TCP_FL_ACK, i.rcv_nxt, i.snd_nxt + 1000);
	assert_int_equal(cnt(w->a, TCP_CNT_ACK_TOO_NEW), 1);
	assert_int_equal(info(c).snd_una, i.snd_una);
	inject_to_a(w, TCP_FL_ACK, i.rcv_nxt, i.snd_una - 3000000);
	assert_int_equal(cnt(w->a, TCP_CNT_ACK_TOO_OLD), 1);
	wire_free(w);
}

static void
an_rst_without_ack_in_syn_sent_is_ignored(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c = tcp_connect(w->a, &w->ep_a, &w->app_a, w->now);

	(void)state;
	inject_to_a(w, TCP_FL_RST, 12345, 0);
	assert_int_equal(info(c).state, TCP_SYN_SENT);
	inject_to_a(w, TCP_FL_RST | TCP_FL_ACK, 0, info(c).iss + 7); /* bad ACK */
	assert_int_equal(info(c).state, TCP_SYN_SENT);
	inject_to_a(w, TCP_FL_RST | TCP_FL_ACK, 0, info(c).iss + 1);
	assert_true(w->app_a.events & TCP_EV_REFUSED);
	wire_free(w);
}

static void
an_orderly_close_walks_both_sides_through_every_state(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c = wire_connect(w);
	struct tcp_conn *cb = w->app_b.conn;

	(void)state;
	assert_int_equal(tcp_shutdown(c, w->now), 0);
	assert_int_equal(info(c).state, TCP_FIN_WAIT_1);
	wire_run(w, w->delay);
	assert_int_equal(info(cb).state, TCP_CLOSE_WAIT);
	assert_true(w->app_b.events & TCP_EV_PEER_FIN);
	wire_run(w, w->delay);
	assert_int_equal(info(c).state, TCP_FIN_WAIT_2);
	assert_int_equal(tcp_send(c, "x", 1, w->now), -EPIPE);
	/* B can still send after A's half-close. */
	assert_int_equal(tcp_send(cb, "late", 4, w->now), 4);
	wire_run(w, MS(20));
	assert_int_equal(w->app_a.rx_bytes, 4);
	assert_int_equal(tcp_shutdown(cb, w->now), 0);
	assert_int_equal(info(cb).state, TCP_LAST_ACK);
	wire_run(w, w->delay);
	/* A got the FIN: TIME-WAIT, and the user handle is released. */
	assert_int_equal(w->app_a.n_closed, 1);
	assert_int_equal(tcp_engine_conn_count(w->a), 1);
	wire_run(w, w->delay);
	assert_int_equal(w->app_b.n_closed, 1);
	assert_int_equal(tcp_engine_conn_count(w->b), 0);
	/* TIME-WAIT lasts 2 MSL, 60 s by default. */
	wire_run(w, MS(59900));
	assert_int_equal(tcp_engine_conn_count(w->a), 1);
	wire_run(w, MS(200));
	assert_int_equal(tcp_engine_conn_count(w->a), 0);
	wire_free(w);
}

static void
a_simultaneous_close_passes_through_closing_on_both_sides(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c = wire_connect(w);
	struct tcp_conn *cb = w->app_b.conn;

	(void)state;
	tcp_shutdown(c, w->now);
	tcp_shutdown(cb, w->now);
	assert_int_equal(info(c).state, TCP_FIN_WAIT_1);
	assert_int_equal(info(cb).state, TCP_FIN_WAIT_1);
	wire_run(w, w->delay);
	assert_int_equal(info(c).state, TCP_CLOSING);
	assert_int_equal(info(cb).state, TCP_CLOSING);
	wire_run(w, w->delay);
	/* Both are in TIME-WAIT, detached from their users. */
	assert_int_equal(w->app_a.n_closed, 1);
	assert_int_equal(w->app_b.n_closed, 1);
	assert_int_equal(tcp_engine_conn_count(w->a), 1);
	assert_int_equal(tcp_engine_conn_count(w->b), 1);
	wire_run(w, MS(61000));
	assert_int_equal(tcp_engine_conn_count(w->a), 0);
	assert_int_equal(tcp_engine_conn_count(w->b), 0);
	wire_free(w);
}

/* A pool full of TIME-WAIT gives its oldest entry to a new connection,
 * so a closed connection's 2 MSL never blocks the next one. */
static void
a_full_pool_recycles_the_oldest_time_wait_connection(void **state)
{
	struct wire *w;

	(void)state;
	wire_params(&pa, "a", NULL);
	wire_params(&pb, "b", NULL);
	pa.max_conns = 3;
	w = wire_new(&pa, &pb);
	assert_non_null(w->a);
	tcp_listen(w->b, w->ep_a.rport, true);
	for (int i = 0; i < 5; i++) {
		struct tcp_conn *c;

		w->ep_a.lport = (uint16_t)(40000 + i);
		w->app_b.conn = NULL;
		c = tcp_connect(w->a, &w->ep_a, &w->app_a, w->now);
		assert_non_null(c);
		wire_run(w, MS(50));
		assert_int_equal(info(c).state, TCP_ESTABLISHED);
		assert_non_null(w->app_b.conn);
		tcp_shutdown(c, w->now);
		tcp_shutdown(w->app_b.conn, w->now);
		wire_run(w, MS(50));
		assert_int_equal(tcp_engine_conn_count(w->a), i < 3 ? i + 1 : 3);
		/* The first three fill the pool; each later one took the
		 * oldest TIME-WAIT entry. */
		assert_int_equal(cnt(w->a, TCP_CNT_TIME_WAIT_RECYCLED),
				 i < 3 ? 0 : (uint64_t)(i - 2));
	}
	/* The tuples of the first two were recycled: opening them again
	 * finds no TIME-WAIT to reuse. That of the last one is still held. */
	w->ep_a.lport = 40000;
	assert_non_null(tcp_connect(w->a, &w->ep_a, &w->app_a, w->now));
	assert_int_equal(cnt(w->a, TCP_CNT_TIME_WAIT_REUSED), 0);
	w->ep_a.lport = 40004;
	assert_non_null(tcp_connect(w->a, &w->ep_a, &w->app_a, w->now));
	assert_int_equal(cnt(w->a, TCP_CNT_TIME_WAIT_REUSED), 1);
	wire_free(w);
}

static void
a_tuple_in_time_wait_can_be_reused_by_either_side(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c = wire_connect(w);

	(void)state;
	/* A closes first and sits in TIME-WAIT; it opens again at once. */
	tcp_shutdown(c, w->now);
	tcp_shutdown(w->app_b.conn, w->now);
	wire_run(w, MS(50));
	assert_int_equal(tcp_engine_conn_count(w->a), 1);
	assert_int_equal(tcp_engine_conn_count(w->b), 1); /* both closed at once */
	w->app_b.conn = NULL;
	c = tcp_connect(w->a, &w->ep_a, &w->app_a, w->now);
	assert_non_null(c);
	assert_int_equal(cnt(w->a, TCP_CNT_TIME_WAIT_REUSED), 1);
	/* B's TIME-WAIT gives way to the new SYN, whose ISN is beyond. */
	wire_run(w, MS(50));
	assert_int_equal(cnt(w->b, TCP_CNT_TIME_WAIT_REUSED), 1);
	assert_int_equal(info(c).state, TCP_ESTABLISHED);
	assert_non_null(w->app_b.conn);
	assert_int_equal(info(w->app_b.conn).state, TCP_ESTABLISHED);
	wire_free(w);
}

static void
aborting_sends_rst_and_the_peer_reports_reset(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c = wire_connect(w);

	(void)state;
	tcp_abort(c, w->now);
	assert_int_equal(w->app_a.n_closed, 1);
	assert_int_equal(tcp_engine_conn_count(w->a), 0);
	wire_run(w, MS(20));
	assert_true(w->app_b.events & TCP_EV_RESET);
	assert_int_equal(w->app_b.n_closed, 1);
	assert_int_equal(tcp_engine_conn_count(w->b), 0);
	wire_free(w);
}

/* What A has queued to send: how many frames, and the last one parsed. */
static unsigned int
a_sent(struct wire *w, struct tcp_seg_in *last)
{
	struct rte_mbuf *pkts[16];
	unsigned int n = 0;
	uint16_t k;

	while ((k = tcp_tx_burst(w->a, pkts, 16)) > 0) {
		for (uint16_t i = 0; i < k; i++) {
			pkt_parse(pkts[i], pkt_meta(pkts[i]), 0);
			assert_int_equal(tcp_seg_parse(pkts[i], pkt_meta(pkts[i]), last, 1), 0);
			rte_pktmbuf_free(pkts[i]);
		}
		n += k;
	}
	return n;
}

/* Hand m to A as a caller with no connection for it would: the reset
 * memory's answer; a frame it leaves is freed here. */
static enum tcp_input_result
after_reset(struct wire *w, struct rte_mbuf *m)
{
	enum tcp_input_result r = tcp_input_after_reset(w->a, m, w->now);

	if (r != TCP_INPUT_CONSUMED)
		rte_pktmbuf_free(m);
	return r;
}

static void
what_was_in_flight_after_a_reset_is_answered_as_a_closed_port_would(void **state)
{
	struct wire *w;
	struct tcp_conn *c;
	struct tcp_conn_info i;
	struct tcp_seg_in s;
	uint64_t t0;

	(void)state;
	wire_params(&pa, "a", NULL);
	wire_params(&pb, "b", NULL);
	pa.reset_memory = 8;
	pa.reset_memory_ns = MS(3000);
	w = wire_new(&pa, &pb);
	assert_non_null(w->a);
	c = wire_connect(w);
	i = info(c);
	t0 = w->now;
	tcp_abort(c, w->now);
	assert_int_equal(cnt(w->a, TCP_CNT_RESET_REMEMBERED), 1);
	wire_run(w, MS(20)); /* B takes the abort's RST */
	assert_int_equal(w->app_b.n_closed, 1);
	/* A data-less ACK still in flight from B: answered with an RST at
	 * its ACK number, and gone. */
	assert_int_equal(after_reset(w, frame_from_b(&w->ep_a, TCP_FL_ACK, i.rcv_nxt, i.snd_nxt)),
			 TCP_INPUT_CONSUMED);
	assert_int_equal(a_sent(w, &s), 1);
	assert_int_equal(s.flags, TCP_FL_RST);
	assert_int_equal(s.seq, i.snd_nxt);
	/* B's own RSTs for the segments it still had: dropped, unanswered. */
	assert_int_equal(after_reset(w, frame_from_b(&w->ep_a, TCP_FL_RST, i.rcv_nxt, 0)),
			 TCP_INPUT_CONSUMED);
	assert_int_equal(a_sent(w, &s), 0);
	assert_int_equal(cnt(w->a, TCP_CNT_AFTER_RESET), 2);
	/* Another 4-tuple is not remembered. */
	{
		struct tcp_endpoints o = w->ep_a;

		o.lport++;
		assert_int_equal(after_reset(w, frame_from_b(&o, TCP_FL_ACK, 1, 1)),
				 TCP_INPUT_NO_CONN);
	}
	/* Until reset_memory_ns has passed, and not after. */
	w->now = t0 + MS(2999);
	assert_int_equal(after_reset(w, frame_from_b(&w->ep_a, TCP_FL_RST, i.rcv_nxt, 0)),
			 TCP_INPUT_CONSUMED);
	w->now += MS(1);
	assert_int_equal(after_reset(w, frame_from_b(&w->ep_a, TCP_FL_RST, i.rcv_nxt, 0)),
			 TCP_INPUT_NO_CONN);
	assert_int_equal(cnt(w->a, TCP_CNT_AFTER_RESET), 3);

	/* The peer's reset is remembered too, and a SYN (a new connection
	 * on the 4-tuple) ends the memory: it and what follows are the
	 * caller's. */
	c = wire_connect(w);
	assert_non_null(c);
	assert_non_null(w->app_b.conn);
	i = info(c);
	tcp_abort(w->app_b.conn, w->now);
	wire_run(w, MS(20));
	assert_true(w->app_a.events & TCP_EV_RESET);
	assert_int_equal(cnt(w->a, TCP_CNT_RESET_REMEMBERED), 2);
	assert_int_equal(after_reset(w, frame_from_b(&w->ep_a, TCP_FL_SYN, i.rcv_nxt + 100000, 0)),
			 TCP_INPUT_NO_CONN);
	assert_int_equal(after_reset(w, frame_from_b(&w->ep_a, TCP_FL_ACK, i.rcv_nxt, i.snd_nxt)),
			 TCP_INPUT_NO_CONN);
	assert_int_equal(cnt(w->a, TCP_CNT_AFTER_RESET), 3);

	/* An orderly close is not a reset: nothing is remembered. */
	c = wire_connect(w);
	assert_non_null(c);
	assert_non_null(w->app_b.conn);
	assert_int_equal(tcp_shutdown(c, w->now), 0);
	assert_int_equal(tcp_shutdown(w->app_b.conn, w->now), 0);
	wire_run(w, MS(100));
	assert_int_equal(cnt(w->a, TCP_CNT_RESET_REMEMBERED), 2);
	assert_int_equal(cnt(w->b, TCP_CNT_RESET_REMEMBERED), 0); /* B's is off */
	wire_free(w);
}

static void
a_full_reset_memory_forgets_the_entry_nearest_its_end(void **state)
{
	struct tcp_endpoints ep[TCP_RMEM_WAYS + 1];
	struct wire *w;

	(void)state;
	wire_params(&pa, "a", NULL);
	wire_params(&pb, "b", NULL);
	pa.reset_memory = 1; /* rounded up to one set */
	w = wire_new(&pa, &pb);
	assert_non_null(w->a);
	tcp_listen(w->b, w->ep_a.rport, true);
	for (unsigned int k = 0; k <= TCP_RMEM_WAYS; k++) {
		struct tcp_conn *c;

		ep[k] = w->ep_a;
		ep[k].lport = (uint16_t)(ep[k].lport + k);
		c = tcp_connect(w->a, &ep[k], &w->app_a, w->now);
		assert_non_null(c);
		wire_run(w, 4 * w->delay + MS(1));
		tcp_abort(c, w->now);
		wire_run(w, MS(10));
	}
	assert_int_equal(cnt(w->a, TCP_CNT_RESET_REMEMBERED), TCP_RMEM_WAYS + 1);
	assert_int_equal(cnt(w->a, TCP_CNT_RESET_FORGOTTEN), 1);
	/* The first was reset first, so its entry was nearest its end. */
	assert_int_equal(after_reset(w, frame_from_b(&ep[0], TCP_FL_RST, 1, 0)), TCP_INPUT_NO_CONN);
	for (unsigned int k = 1; k <= TCP_RMEM_WAYS; k++)
		assert_int_equal(after_reset(w, frame_from_b(&ep[k], TCP_FL_RST, 1, 0)),
				 TCP_INPUT_CONSUMED);
	/* An engine without the memory leaves every frame to its caller. */
	{
		struct rte_mbuf *m = frame_from_b(&ep[1], TCP_FL_RST, 1, 0);

		assert_int_equal(tcp_input_after_reset(w->b, m, w->now), TCP_INPUT_NO_CONN);
		rte_pktmbuf_free(m);
	}
	wire_free(w);
}

static void
a_held_syn_can_be_accepted_later_by_the_caller(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c, *cb;
	struct rte_mbuf *pkts[4];
	struct app held = { .rx_hash = FNV_INIT, .auto_read = 1 };

	(void)state;
	c = tcp_connect(w->a, &w->ep_a, &w->app_a, w->now);
	assert_int_equal(tcp_tx_burst(w->a, pkts, 4), 1);
	pkt_parse(pkts[0], pkt_meta(pkts[0]), 0);
	/* Nobody listens: the caller gets the SYN back and decides. */
	assert_int_equal(tcp_input(w->b, pkts[0], w->now), TCP_INPUT_NO_CONN);
	w->now += MS(50);
	cb = tcp_accept(w->b, pkts[0], &held, w->now);
	assert_non_null(cb);
	wire_run(w, MS(30));
	assert_int_equal(info(c).state, TCP_ESTABLISHED);
	assert_int_equal(info(cb).state, TCP_ESTABLISHED);
	assert_true(held.events & TCP_EV_CONNECTED);
	assert_ptr_equal(tcp_conn_arg(cb), &held);
	wire_free(w);
}

static void
the_pool_refuses_connections_beyond_its_size(void **state)
{
	struct wire *w;

	(void)state;
	wire_params(&pa, "a", NULL);
	wire_params(&pb, "b", NULL);
	pa.max_conns = 2;
	w = wire_new(&pa, &pb);
	assert_non_null(tcp_connect(w->a, &w->ep_a, &w->app_a, w->now));
	w->ep_a.lport++;
	assert_non_null(tcp_connect(w->a, &w->ep_a, &w->app_a, w->now));
	w->ep_a.lport++;
	assert_null(tcp_connect(w->a, &w->ep_a, &w->app_a, w->now));
	assert_int_equal(rte_errno, ENOSPC);
	wire_free(w);
}

static void
syns_beyond_the_backlog_get_cookies_and_still_connect(void **state)
{
	static uint8_t buf[50000];
	struct wire *w;
	struct tcp_conn *c[6];

	(void)state;
	wire_params(&pa, "a", NULL);
	wire_params(&pb, "b", NULL);
	pb.syn_backlog = 2;
	w = wire_new(&pa, &pb);
	tcp_listen(w->b, 80, true);
	for (int i = 0; i < 6; i++) {
		w->ep_a.lport = (uint16_t)(41000 + i);
		c[i] = tcp_connect(w->a, &w->ep_a, &w->app_a, w->now);
		assert_non_null(c[i]);
	}
	wire_run(w, MS(30));
	/* Two SYNs took backlog slots, four were answered statelessly. */
	assert_int_equal(cnt(w->b, TCP_CNT_SYN_COOKIE_SENT), 4);
	assert_int_equal(cnt(w->b, TCP_CNT_SYN_COOKIE_OK), 4);
	assert_int_equal(tcp_engine_conn_count(w->b), 6);
	for (int i = 0; i < 6; i++) {
		assert_int_equal(info(c[i]).state, TCP_ESTABLISHED);
		assert_int_equal(tcp_send(c[i], buf, sizeof(buf), w->now), (int32_t)sizeof(buf));
	}
	/* A cookie connection has no window scaling, SACK or timestamps,
	 * and still carries data. */
	assert_false(info(c[5]).ts_ok);
	assert_false(info(c[5]).sack_ok);
	assert_int_equal(info(c[5]).mss, 1460);
	assert_true(info(c[0]).ts_ok);
	wire_run(w, MS(500));
	assert_int_equal(w->app_b.rx_bytes, 6 * sizeof(buf));
	wire_free(w);
}

static void
an_ack_with_a_forged_cookie_opens_nothing(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_endpoints r;
	struct tcp_seg_out o = { .seq = 1000, .ack = 123456789, .flags = TCP_FL_ACK, .wnd = 100 };
	struct rte_mbuf *m;

	(void)state;
	tcp_listen(w->b, 80, true);
	r = w->ep_a; /* from A's tuple, to B */
	m = tcp_seg_build(test_pool, &r, &o, NULL, 0, 0);
	pkt_parse(m, pkt_meta(m), 0);
	assert_int_equal(tcp_input(w->b, m, w->now), TCP_INPUT_NO_CONN);
	rte_pktmbuf_free(m);
	assert_int_equal(cnt(w->b, TCP_CNT_SYN_COOKIE_BAD), 1);
	assert_int_equal(tcp_engine_conn_count(w->b), 0);
	wire_free(w);
}

/* Drop the n-th frame (counting from 0) that matches flags exactly, in
 * the given direction (to_b = 1: A's frames). */
static struct {
	int to_b;
	uint8_t flags;
	int n, seen;
} dropper;

static int
drop_nth(struct wire *w, int to_b, const struct tcp_seg_in *s)
{
	(void)w;
	if (to_b == dropper.to_b && s->flags == dropper.flags && s->len == 0 &&
	    dropper.seen++ == dropper.n)
		return 1;
	return 0;
}

static void
a_lost_syn_ack_is_sent_again_when_the_syn_comes_again(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c;

	(void)state;
	dropper = (typeof(dropper)){ .to_b = 0, .flags = TCP_FL_SYN | TCP_FL_ACK, .n = 0 };
	w->drop = drop_nth;
	tcp_listen(w->b, 80, true);
	c = tcp_connect(w->a, &w->ep_a, &w->app_a, w->now);
	wire_run(w, MS(500));
	assert_int_equal(info(c).state, TCP_SYN_SENT);
	/* A's SYN comes again at 1 s; B, in SYN-RECEIVED, answers it. */
	wire_run(w, MS(600));
	assert_int_equal(info(c).state, TCP_ESTABLISHED);
	assert_non_null(w->app_b.conn);
	/* RFC 6298 5.7: the SYN was retransmitted and no RTT was measured
	 * on it, but timestamps give a sample on the SYN-ACK. */
	assert_int_equal(info(c).rto_ns, MS(200));
	wire_free(w);
}

static void
a_lost_final_ack_is_repaired_by_the_syn_ack_retransmission(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c;

	(void)state;
	dropper = (typeof(dropper)){ .to_b = 1, .flags = TCP_FL_ACK, .n = 0 };
	w->drop = drop_nth;
	tcp_listen(w->b, 80, true);
	c = tcp_connect(w->a, &w->ep_a, &w->app_a, w->now);
	wire_run(w, MS(100));
	assert_int_equal(info(c).state, TCP_ESTABLISHED);
	assert_null(w->app_b.conn); /* B is still in SYN-RECEIVED */
	assert_int_equal(tcp_engine_conn_count(w->b), 1);
	/* B's SYN-ACK again at 1 s; A answers with an ACK. */
	wire_run(w, MS(1000));
	assert_non_null(w->app_b.conn);
	assert_int_equal(info(w->app_b.conn).state, TCP_ESTABLISHED);
	wire_free(w);
}

static void
data_completes_a_handshake_whose_final_ack_was_lost(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c;

	(void)state;
	dropper = (typeof(dropper)){ .to_b = 1, .flags = TCP_FL_ACK, .n = 0 };
	w->drop = drop_nth;
	tcp_listen(w->b, 80, true);
	c = tcp_connect(w->a, &w->ep_a, &w->app_a, w->now);
	wire_run(w, MS(20));
	assert_int_equal(tcp_send(c, "hello", 5, w->now), 5);
	wire_run(w, MS(20));
	assert_non_null(w->app_b.conn);
	assert_int_equal(w->app_b.rx_bytes, 5);
	wire_free(w);
}

static void
a_lost_fin_is_retransmitted_by_the_rto(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c = wire_connect(w);

	(void)state;
	dropper = (typeof(dropper)){ .to_b = 1, .flags = TCP_FL_FIN | TCP_FL_ACK, .n = 0 };
	w->drop = drop_nth;
	tcp_shutdown(c, w->now);
	wire_run(w, MS(100));
	assert_int_equal(info(c).state, TCP_FIN_WAIT_1);
	assert_false(w->app_b.events & TCP_EV_PEER_FIN);
	wire_run(w, MS(200));
	assert_true(w->app_b.events & TCP_EV_PEER_FIN);
	assert_int_equal(info(c).state, TCP_FIN_WAIT_2);
	wire_free(w);
}

static void
a_connection_reset_before_it_was_accepted_vanishes_silently(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c;

	(void)state;
	dropper = (typeof(dropper)){ .to_b = 1, .flags = TCP_FL_ACK, .n = 0 };
	w->drop = drop_nth;
	tcp_listen(w->b, 80, true);
	c = tcp_connect(w->a, &w->ep_a, &w->app_a, w->now);
	wire_run(w, MS(20));
	assert_int_equal(tcp_engine_conn_count(w->b), 1);
	tcp_abort(c, w->now);
	wire_run(w, MS(20));
	/* B never reported it, so it reports nothing now either. */
	assert_int_equal(tcp_engine_conn_count(w->b), 0);
	assert_int_equal(w->app_b.events, 0);
	wire_free(w);
}

static void
time_wait_answers_a_retransmitted_fin_and_restarts(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c = wire_connect(w);
	struct tcp_conn *cb = w->app_b.conn;

	(void)state;
	tcp_shutdown(c, w->now);
	wire_run(w, MS(50));
	/* A's last ACK (of B's FIN) is lost: B sends its FIN again. */
	dropper = (typeof(dropper)){ .to_b = 1, .flags = TCP_FL_ACK, .n = 0 };
	w->drop = drop_nth;
	tcp_shutdown(cb, w->now);
	wire_run(w, MS(50));
	assert_int_equal(tcp_engine_conn_count(w->a), 1); /* TIME-WAIT */
	assert_int_equal(tcp_engine_conn_count(w->b), 1); /* LAST-ACK */
	wire_run(w, MS(400));
	assert_int_equal(tcp_engine_conn_count(w->b), 0);
	assert_int_equal(w->app_b.n_closed, 1);
	wire_free(w);
}

/* B's user reads what is left: every byte, in order; true once the
 * connection told it CLOSED. */
static bool
b_reads_the_rest(struct wire *w, struct tcp_conn *cb, uint64_t expect)
{
	uint8_t buf[3000];
	uint64_t got = 0;
	uint32_t n;

	while (w->app_b.n_closed == 0 && (n = tcp_recv(cb, buf, sizeof(buf), w->now)) > 0) {
		for (uint32_t i = 0; i < n; i++)
			assert_int_equal(buf[i], (uint8_t)(got + i));
		got += n;
	}
	assert_int_equal(got, expect);
	return w->app_b.n_closed == 1;
}

static void
a_sends(struct wire *w, struct tcp_conn *c, uint32_t len)
{
	uint8_t buf[20000];

	assert_true(len <= sizeof(buf));
	for (uint32_t i = 0; i < len; i++)
		buf[i] = (uint8_t)i;
	assert_int_equal(tcp_send(c, buf, len, w->now), (int32_t)len);
}

/* B closes its side first, then A sends len bytes and closes, and B's
 * user reads none of them: B's connection ends in TIME-WAIT with them. */
static void
b_in_time_wait_unread(struct wire *w, struct tcp_conn *c, struct tcp_conn *cb, uint32_t len)
{
	w->app_b.auto_read = 0;
	tcp_shutdown(cb, w->now);
	wire_run(w, MS(20));
	a_sends(w, c, len);
	tcp_shutdown(c, w->now);
	wire_run(w, MS(50));
	assert_int_equal(info(cb).state, TCP_TIME_WAIT);
	assert_int_equal(w->app_b.n_closed, 0);
	assert_int_equal(info(cb).rcv_queued, len);
}

/* B closed its side first and has not read A's last bytes when A's FIN
 * puts it in TIME-WAIT: those bytes are A's, acknowledged, and CLOSED
 * (which releases the handle and what it holds) waits until B's user
 * read them, even past 2 MSL. A proxy's leg was released with them. */
static void
a_connection_in_time_wait_is_closed_for_its_user_once_it_read_every_byte(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c = wire_connect(w);
	struct tcp_conn *cb = w->app_b.conn;

	(void)state;
	b_in_time_wait_unread(w, c, cb, 10000);
	assert_true(w->app_b.events & TCP_EV_PEER_FIN);
	/* 2 MSL pass: the connection is CLOSED, its handle still B's. */
	wire_run(w, pb.time_wait_ns + MS(100));
	assert_int_equal(w->app_b.n_closed, 0);
	assert_int_equal(tcp_engine_conn_count(w->b), 1);
	assert_true(b_reads_the_rest(w, cb, 10000));
	assert_int_equal(tcp_engine_conn_count(w->b), 0);
	assert_false(w->app_b.events & (TCP_EV_RESET | TCP_EV_TIMEOUT));
	assert_int_equal(cnt(w->b, TCP_CNT_CLOSE_HELD), 1);
	wire_free(w);
}

/* A full pool recycles the oldest TIME-WAIT entry whose user let go,
 * not an older one whose user still reads what it holds. */
static void
a_full_pool_recycles_no_time_wait_connection_whose_user_still_reads(void **state)
{
	struct wire *w;
	struct tcp_conn *held, *c;

	(void)state;
	wire_params(&pa, "a", NULL);
	wire_params(&pb, "b", NULL);
	pb.max_conns = 2;
	w = wire_new(&pa, &pb);
	assert_non_null(w->b);
	/* B's first connection: B closes first, A sends and closes, B
	 * reads nothing: TIME-WAIT, held for B's user. */
	c = wire_connect(w);
	held = w->app_b.conn;
	b_in_time_wait_unread(w, c, held, 3000);
	/* B's second: an ordinary close into TIME-WAIT. */
	w->app_b.auto_read = 1;
	w->ep_a.lport++;
	c = wire_connect(w);
	tcp_shutdown(w->app_b.conn, w->now);
	tcp_shutdown(c, w->now);
	wire_run(w, MS(50));
	assert_int_equal(tcp_engine_conn_count(w->b), 2);
	/* B opens a third: the second's entry gives way. */
	{
		struct tcp_endpoints ep = w->ep_a;

		memcpy(ep.laddr, w->ep_a.raddr, sizeof(ep.laddr));
		memcpy(ep.raddr, w->ep_a.laddr, sizeof(ep.raddr));
		ep.lport = 50000;
		ep.rport = 9;
		assert_non_null(tcp_connect(w->b, &ep, &w->app_b, w->now));
	}
	assert_int_equal(cnt(w->b, TCP_CNT_TIME_WAIT_RECYCLED), 1);
	assert_int_equal(info(held).state, TCP_TIME_WAIT);
	assert_int_equal(info(held).rcv_queued, 3000);
	wire_free(w);
}

/* The same after LAST-ACK: A closed first, B's user shut down without
 * reading, and A acknowledged B's FIN. */
static void
a_connection_past_last_ack_is_closed_for_its_user_once_it_read_every_byte(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c = wire_connect(w);
	struct tcp_conn *cb = w->app_b.conn;

	(void)state;
	w->app_b.auto_read = 0;
	a_sends(w, c, 20000);
	tcp_shutdown(c, w->now);
	wire_run(w, MS(50));
	assert_int_equal(info(cb).state, TCP_CLOSE_WAIT);
	tcp_shutdown(cb, w->now);
	wire_run(w, MS(50));
	assert_int_equal(info(cb).state, TCP_CLOSED);
	assert_int_equal(w->app_b.n_closed, 0);
	assert_int_equal(w->app_a.n_closed, 1);
	assert_true(b_reads_the_rest(w, cb, 20000));
	assert_int_equal(tcp_engine_conn_count(w->b), 0);
	assert_int_equal(cnt(w->b, TCP_CNT_CLOSE_HELD), 1);
	wire_free(w);
}

/* A user that aborts gives up what it did not read: CLOSED at once. */
static void
an_abort_with_bytes_unread_closes_at_once(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c = wire_connect(w);
	struct tcp_conn *cb = w->app_b.conn;

	(void)state;
	b_in_time_wait_unread(w, c, cb, 5000);
	tcp_abort(cb, w->now);
	assert_int_equal(w->app_b.n_closed, 1);
	/* (TIME-WAIT lives on without its user, as after any close.) */
	wire_run(w, pb.time_wait_ns + MS(100));
	assert_int_equal(tcp_engine_conn_count(w->b), 0);
	wire_free(w);
}

static void
an_active_open_can_announce_a_smaller_mss(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *c;

	(void)state;
	w->ep_a.mss = 1200;
	c = wire_connect(w);
	assert_int_equal(info(c).state, TCP_ESTABLISHED);
	assert_int_equal(info(w->app_b.conn).mss, 1200 - 12);
	assert_int_equal(info(c).mss, 1460 - 12);
	wire_free(w);
}

static void
only_frames_without_a_connection_are_handed_back(void **state)
{
	struct wire *w = setup_wire();
	struct rte_mbuf *pkts[3], *out[4];
	struct tcp_endpoints other = w->ep_a;
	uint16_t left = 0;

	(void)state;
	tcp_listen(w->b, 80, true);
	other.rport = 81; /* nobody listens there */
	tcp_connect(w->a, &w->ep_a, &w->app_a, w->now);
	tcp_connect(w->a, &other, &w->app_a, w->now);
	assert_int_equal(tcp_tx_burst(w->a, out, 4), 2);
	pkts[0] = out[1]; /* to 81 */
	pkts[1] = out[0]; /* to 80 */
	pkts[2] = rte_pktmbuf_alloc(test_pool); /* not IP */
	memset(rte_pktmbuf_append(pkts[2], 60), 0, 60);
	for (int i = 0; i < 3; i++)
		pkt_parse(pkts[i], pkt_meta(pkts[i]), 0);
	for (int i = 0; i < 3; i++)
		if (tcp_input(w->b, pkts[i], w->now) != TCP_INPUT_CONSUMED)
			pkts[left++] = pkts[i];
	assert_int_equal(left, 2);
	assert_ptr_equal(pkts[0], out[1]);
	assert_int_equal(pkt_meta(pkts[1])->l3, PKT_L3_NONE);
	rte_pktmbuf_free(pkts[0]);
	rte_pktmbuf_free(pkts[1]);
	assert_int_equal(tcp_engine_conn_count(w->b), 1);
	wire_free(w);
}

/* A frame the peer of ep would send to us (ep is our view). */
static struct rte_mbuf *
frame_to(const struct tcp_endpoints *ep)
{
	struct tcp_endpoints r = *ep;
	struct tcp_seg_out o = { .seq = 1, .ack = 1, .flags = TCP_FL_ACK, .wnd = 100 };
	struct rte_mbuf *m;

	memcpy(r.laddr, ep->raddr, 16);
	memcpy(r.raddr, ep->laddr, 16);
	r.lport = ep->rport;
	r.rport = ep->lport;
	m = tcp_seg_build(test_pool, &r, &o, NULL, 0, 0);
	assert_non_null(m);
	pkt_parse(m, pkt_meta(m), 0);
	return m;
}

/* The connection cache in front of the table: two connections whose
 * ports share a slot each find their own frames, in turn, and a
 * released connection is not found any more, through the cache or the
 * table, until a new one takes its 4-tuple. */
static void
the_connection_cache_finds_each_connection_and_forgets_a_released_one(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_endpoints e1 = w->ep_a, e2 = w->ep_a;
	struct rte_mbuf *out[4], *f1, *f2;
	struct tcp_conn *c1, *c2, *c3;
	uint16_t n;

	(void)state;
	e2.lport = e1.lport;
	do
		e2.lport++;
	while (tcp_hot_slot(e2.lport, e2.rport) != tcp_hot_slot(e1.lport, e1.rport));
	c1 = tcp_connect(w->a, &e1, &w->app_a, w->now);
	c2 = tcp_connect(w->a, &e2, &w->app_a, w->now);
	assert_non_null(c1);
	assert_non_null(c2);
	while ((n = tcp_tx_burst(w->a, out, 4)) > 0)
		for (uint16_t i = 0; i < n; i++)
			rte_pktmbuf_free(out[i]);
	f1 = frame_to(&e1);
	f2 = frame_to(&e2);
	for (int round = 0; round < 3; round++) {
		assert_ptr_equal(tcp_conn_lookup(w->a, f1), c1);
		assert_ptr_equal(tcp_conn_lookup(w->a, f1), c1);
		assert_ptr_equal(tcp_conn_lookup(w->a, f2), c2);
	}
	assert_ptr_equal(tcp_conn_lookup(w->a, f1), c1); /* c1 holds the slot */
	tcp_abort(c1, w->now); /* SYN-SENT: gone at once */
	assert_null(tcp_conn_lookup(w->a, f1));
	assert_ptr_equal(tcp_conn_lookup(w->a, f2), c2);
	c3 = tcp_connect(w->a, &e1, &w->app_a, w->now);
	assert_non_null(c3);
	assert_ptr_equal(tcp_conn_lookup(w->a, f1), c3);
	assert_ptr_equal(tcp_conn_lookup(w->a, f2), c2);
	tcp_abort(c2, w->now);
	assert_null(tcp_conn_lookup(w->a, f2));
	assert_ptr_equal(tcp_conn_lookup(w->a, f1), c3);
	rte_pktmbuf_free(f1);
	rte_pktmbuf_free(f2);
	wire_free(w);
}

static void
connection_state_fits_in_2kb(void **state)
{
	(void)state;
	assert_true(tcp_conn_size() <= 2048);
	print_message("struct tcp_conn: %zu bytes\n", tcp_conn_size());
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_three_way_handshake_connects_both_sides_with_every_option),
		cmocka_unit_test(a_handshake_over_ipv6_announces_an_mss_20_bytes_smaller),
		cmocka_unit_test(options_disabled_on_one_side_are_not_used_by_either),
		cmocka_unit_test(a_syn_to_a_closed_port_is_refused_with_rst),
		cmocka_unit_test(connecting_twice_from_the_same_tuple_fails_with_eexist),
		cmocka_unit_test(simultaneous_open_establishes_both_sides),
		cmocka_unit_test(a_rst_at_exactly_rcv_nxt_resets_the_connection),
		cmocka_unit_test(an_in_window_rst_off_rcv_nxt_draws_a_challenge_ack_only),
		cmocka_unit_test(an_out_of_window_rst_is_dropped_silently),
		cmocka_unit_test(an_rst_at_the_fin_s_sequence_number_resets_a_connection_in_close_wait),
		cmocka_unit_test(a_syn_on_an_established_connection_draws_a_challenge_ack),
		cmocka_unit_test(an_ack_for_data_never_sent_is_dropped_and_answered),
		cmocka_unit_test(an_rst_without_ack_in_syn_sent_is_ignored),
		cmocka_unit_test(an_orderly_close_walks_both_sides_through_every_state),
		cmocka_unit_test(a_simultaneous_close_passes_through_closing_on_both_sides),
		cmocka_unit_test(a_tuple_in_time_wait_can_be_reused_by_either_side),
		cmocka_unit_test(a_full_pool_recycles_the_oldest_time_wait_connection),
		cmocka_unit_test(aborting_sends_rst_and_the_peer_reports_reset),
		cmocka_unit_test(what_was_in_flight_after_a_reset_is_answered_as_a_closed_port_would),
		cmocka_unit_test(a_full_reset_memory_forgets_the_entry_nearest_its_end),
		cmocka_unit_test(a_held_syn_can_be_accepted_later_by_the_caller),
		cmocka_unit_test(the_pool_refuses_connections_beyond_its_size),
		cmocka_unit_test(syns_beyond_the_backlog_get_cookies_and_still_connect),
		cmocka_unit_test(an_ack_with_a_forged_cookie_opens_nothing),
		cmocka_unit_test(a_lost_syn_ack_is_sent_again_when_the_syn_comes_again),
		cmocka_unit_test(a_lost_final_ack_is_repaired_by_the_syn_ack_retransmission),
		cmocka_unit_test(data_completes_a_handshake_whose_final_ack_was_lost),
		cmocka_unit_test(a_lost_fin_is_retransmitted_by_the_rto),
		cmocka_unit_test(a_connection_reset_before_it_was_accepted_vanishes_silently),
		cmocka_unit_test(time_wait_answers_a_retransmitted_fin_and_restarts),
		cmocka_unit_test(a_connection_in_time_wait_is_closed_for_its_user_once_it_read_every_byte),
		cmocka_unit_test(a_connection_past_last_ack_is_closed_for_its_user_once_it_read_every_byte),
		cmocka_unit_test(an_abort_with_bytes_unread_closes_at_once),
		cmocka_unit_test(a_full_pool_recycles_no_time_wait_connection_whose_user_still_reads),
		cmocka_unit_test(an_active_open_can_announce_a_smaller_mss),
		cmocka_unit_test(only_frames_without_a_connection_are_handed_back),
		cmocka_unit_test(the_connection_cache_finds_each_connection_and_forgets_a_released_one),
		cmocka_unit_test(connection_state_fits_in_2kb),
	};

	if (test_eal_init("hs") != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
