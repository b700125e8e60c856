/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory pressure's window limit, and the timeouts that end a connection whose peer is alive but holds it
 * open for nothing, on the virtual clock: a window that never opens
 * (persist), a peer that says nothing (idle), a half-close the peer never
 * finishes (FIN-WAIT-2). Each resets the peer, reports TCP_EV_TIMEOUT
 * and counts its own counter. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tcp_test_util.h"
#include "tcp_impl.h"

static struct tcp_engine_params pa, pb;

static void
setup(void)
{
	wire_params(&pa, "a", NULL);
	wire_params(&pb, "b", NULL);
}

static struct tcp_conn_info
info(struct tcp_conn *c)
{
	struct tcp_conn_info i;

	tcp_conn_get_info(c, &i);
	return i;
}

static uint64_t
cnt(struct tcp_engine *e, enum tcp_cnt k)
{
	return tcp_engine_counters(e)[k];
}

/* B reads nothing: A's data fills B's 8-segment window, which closes. */
static struct wire *
stalled_reader(struct tcp_conn **c)
{
	static uint8_t buf[100000];
	struct wire *w;

	pb.rcv_buf = 8 * 1448;
	w = wire_new(&pa, &pb);
	*c = wire_connect(w);
	w->app_b.auto_read = 0;
	assert_int_equal(tcp_send(*c, buf, 50000, w->now), 50000);
	wire_run(w, MS(30));
	assert_int_equal(info(*c).snd_wnd, 0);
	return w;
}

static void
a_window_that_never_opens_is_given_up_after_the_persist_timeout(void **state)
{
	struct tcp_conn *c;
	struct wire *w;
	uint64_t t0;

	(void)state;
	setup();
	pa.persist_timeout_ns = MS(5000);
	w = stalled_reader(&c);
	t0 = w->now;
	/* B answers every probe, with a zero window. */
	wire_run(w, MS(4900));
	assert_int_equal(info(c).state, TCP_ESTABLISHED);
	assert_true(cnt(w->a, TCP_CNT_ZWP) >= 3);
	wire_run(w, MS(200));
	assert_true(w->app_a.events & TCP_EV_TIMEOUT);
	assert_int_equal(w->app_a.n_closed, 1);
	assert_int_equal(cnt(w->a, TCP_CNT_PERSIST_TIMEOUT), 1);
	assert_int_equal(cnt(w->a, TCP_CNT_TIMEOUT), 0);
	assert_true(w->now - t0 <= MS(5100));
	/* The reader hears about it. */
	wire_run(w, MS(10));
	assert_true(w->app_b.events & TCP_EV_RESET);
	wire_free(w);
}

static void
a_window_that_opens_in_time_restarts_the_persist_clock(void **state)
{
	uint8_t sink[4096];
	struct tcp_conn *c;
	struct wire *w;

	(void)state;
	setup();
	pa.persist_timeout_ns = MS(5000);
	w = stalled_reader(&c);
	/* Every 3 s B reads one segment's worth: the window opens, A sends,
	 * it closes again. 12 s of zero window in all, never 5 in a row. */
	for (int i = 0; i < 4; i++) {
		wire_run(w, MS(3000));
		assert_true(tcp_recv(w->app_b.conn, sink, sizeof(sink), w->now) > 0);
	}
	assert_int_equal(info(c).state, TCP_ESTABLISHED);
	assert_int_equal(cnt(w->a, TCP_CNT_PERSIST_TIMEOUT), 0);
	wire_free(w);
}

static void
without_a_persist_timeout_probing_goes_on(void **state)
{
	struct tcp_conn *c;
	struct wire *w;

	(void)state;
	setup();
	w = stalled_reader(&c);
	wire_run(w, MS(120000));
	assert_int_equal(info(c).state, TCP_ESTABLISHED);
	assert_int_equal(cnt(w->a, TCP_CNT_PERSIST_TIMEOUT), 0);
	wire_free(w);
}

static void
a_connection_that_hears_nothing_is_reset_after_the_idle_timeout(void **state)
{
	struct tcp_conn *c;
	struct wire *w;

	(void)state;
	setup();
	pa.idle_timeout_ns = MS(10000);
	w = wire_new(&pa, &pb);
	c = wire_connect(w);
	/* Traffic every 6 s keeps it alive for 24 s. */
	for (int i = 0; i < 4; i++) {
		wire_run(w, MS(6000));
		assert_int_equal(tcp_send(w->app_b.conn, "ping", 4, w->now), 4);
	}
	wire_run(w, MS(100));
	assert_int_equal(info(c).state, TCP_ESTABLISHED);
	/* Then silence: 10 s after B's last segment, A gives up. */
	wire_run(w, MS(9800));
	assert_int_equal(info(c).state, TCP_ESTABLISHED);
	wire_run(w, MS(300));
	assert_true(w->app_a.events & TCP_EV_TIMEOUT);
	assert_int_equal(w->app_a.n_closed, 1);
	assert_int_equal(cnt(w->a, TCP_CNT_IDLE_TIMEOUT), 1);
	wire_run(w, MS(10));
	assert_true(w->app_b.events & TCP_EV_RESET);
	wire_free(w);
}

static void
a_half_close_the_peer_never_finishes_ends_after_the_fin_wait_2_timeout(void **state)
{
	struct tcp_conn *c;
	struct wire *w;

	(void)state;
	setup();
	pa.fin_wait2_timeout_ns = MS(3000);
	pa.idle_timeout_ns = MS(60000);
	w = wire_new(&pa, &pb);
	c = wire_connect(w);
	assert_int_equal(tcp_shutdown(c, w->now), 0);
	wire_run(w, MS(50));
	assert_int_equal(info(c).state, TCP_FIN_WAIT_2);
	/* B keeps its side open and silent. */
	wire_run(w, MS(2900));
	assert_int_equal(info(c).state, TCP_FIN_WAIT_2);
	wire_run(w, MS(200));
	assert_true(w->app_a.events & TCP_EV_TIMEOUT);
	assert_int_equal(w->app_a.n_closed, 1);
	assert_int_equal(cnt(w->a, TCP_CNT_FIN_WAIT2_TIMEOUT), 1);
	assert_int_equal(cnt(w->a, TCP_CNT_IDLE_TIMEOUT), 0);
	wire_run(w, MS(10));
	assert_true(w->app_b.events & TCP_EV_RESET);
	wire_free(w);
}

static void
a_half_close_with_data_still_flowing_in_does_not_time_out(void **state)
{
	struct tcp_conn *c;
	struct wire *w;

	(void)state;
	setup();
	pa.fin_wait2_timeout_ns = MS(3000);
	w = wire_new(&pa, &pb);
	c = wire_connect(w);
	assert_int_equal(tcp_shutdown(c, w->now), 0);
	for (int i = 0; i < 5; i++) {
		wire_run(w, MS(2000));
		assert_int_equal(tcp_send(w->app_b.conn, "more", 4, w->now), 4);
	}
	wire_run(w, MS(100));
	assert_int_equal(info(c).state, TCP_FIN_WAIT_2);
	assert_int_equal(w->app_a.rx_bytes, 20);
	wire_free(w);
}

/* Memory pressure (tcp_engine_set_rcv_limit()): a receiver that reads
 * nothing takes only what the limit lets it offer, and reading with the
 * limit still in force opens nothing; lifting it lets the rest through. */
static void
a_receive_limit_bounds_what_a_stalled_reader_holds(void **state)
{
	static uint8_t buf[200000];
	uint8_t sink[65536];
	struct tcp_conn *c;
	struct wire *w;
	uint32_t got;

	(void)state;
	setup();
	pb.rcv_buf = 128 * 1024;
	w = wire_new(&pa, &pb);
	tcp_engine_set_rcv_limit(w->b, 16 * 1024);
	c = wire_connect(w);
	w->app_b.auto_read = 0;
	assert_int_equal(tcp_send(c, buf, 100000, w->now), 100000);
	wire_run(w, MS(500));
	assert_int_equal(info(c).snd_wnd, 0);
	assert_int_equal(info(w->app_b.conn).rcv_queued, 16 * 1024);
	/* At a limit of 0, reading everything opens nothing. */
	tcp_engine_set_rcv_limit(w->b, 0);
	got = tcp_recv(w->app_b.conn, sink, sizeof(sink), w->now);
	assert_int_equal(got, 16 * 1024);
	wire_run(w, MS(500));
	assert_int_equal(info(w->app_b.conn).rcv_queued, 0);
	assert_int_equal(info(c).snd_wnd, 0);
	/* Pressure gone: the window reopens (a probe finds it at worst). */
	tcp_engine_set_rcv_limit(w->b, UINT32_MAX);
	w->app_b.auto_read = 1;
	got = tcp_recv(w->app_b.conn, sink, sizeof(sink), w->now);
	wire_run(w, MS(3000));
	assert_int_equal(w->app_b.rx_bytes + got + 16 * 1024, 100000);
	assert_int_equal(info(c).snd_queued, 0);
	wire_free(w);
}

/* Pressure gone: a window update brings back a sender that saw a zero
 * window at once, not at its next (backed-off) zero-window probe. The
 * engine's walk leaves an idle connection alone: it has the room it
 * announced, and no sender waiting. */
static void
a_window_update_after_the_limit_lifts_resumes_the_sender_at_once(void **state)
{
	static uint8_t buf[100000];
	uint8_t sink[65536];
	struct tcp_endpoints ep;
	struct tcp_conn *c, *bc;
	struct wire *w;

	(void)state;
	setup();
	pb.rcv_buf = 128 * 1024;
	w = wire_new(&pa, &pb);
	tcp_engine_set_rcv_limit(w->b, 16 * 1024);
	c = wire_connect(w);
	bc = w->app_b.conn;
	w->app_b.auto_read = 0;
	/* A second connection, idle: it announced the 16 KiB allowed. */
	ep = w->ep_a;
	ep.lport = (uint16_t)(ep.lport + 1);
	assert_non_null(tcp_connect(w->a, &ep, &w->app_a, w->now));
	wire_run(w, 4 * w->delay + MS(1));
	assert_int_equal(tcp_engine_conn_count(w->b), 2);
	w->app_a.conn = c;
	w->app_b.conn = bc;
	assert_int_equal(tcp_send(c, buf, sizeof(buf), w->now), (int32_t)sizeof(buf));
	wire_run(w, MS(2000)); /* the probes are 1.6 s apart by now */
	assert_int_equal(info(c).snd_wnd, 0);
	/* Nothing to announce while the limit holds. */
	assert_int_equal(tcp_window_update(bc, w->now), 0);
	assert_int_equal(tcp_engine_window_update(w->b, w->now), 0);
	tcp_engine_set_rcv_limit(w->b, UINT32_MAX);
	/* The stopped sender's, not the idle connection's. */
	assert_int_equal(tcp_engine_window_update(w->b, w->now), 1);
	/* Announced once: no second update for the same window. */
	assert_int_equal(tcp_window_update(bc, w->now), 0);
	wire_run(w, MS(50));
	assert_int_equal(info(bc).rcv_queued, sizeof(buf));
	while (tcp_recv(bc, sink, sizeof(sink), w->now) > 0)
		;
	wire_free(w);
}

/* The receive pool (tcp_engine_set_rcv_pool()): what the windows let in
 * beyond their two segments is summed; a window grows into at most half
 * of what the pool has left, beyond its two segments; an idle
 * connection's is taken back to two segments and grows again once data
 * comes; a released connection's leaves the sum. */
static void
a_receive_pool_bounds_windows_and_takes_back_idle_ones(void **state)
{
	static uint8_t buf[200000];
	struct tcp_conn *c;
	struct wire *w;
	uint32_t floor = 2 * 1460;

	(void)state;
	setup();
	pb.rcv_buf = 128 * 1024;
	w = wire_new(&pa, &pb);
	tcp_engine_set_rcv_pool(w->b, 40000);
	c = wire_connect(w);
	assert_int_equal(tcp_send(c, buf, 100000, w->now), 100000);
	wire_run(w, MS(200));
	assert_int_equal(w->app_b.rx_bytes, 100000);
	/* Alone, B's connection offers half the pool at most, beyond its
	 * two segments. */
	assert_true(info(c).snd_wnd <= 20000 + floor);
	assert_true(info(c).snd_wnd > floor);
	assert_int_equal(tcp_engine_rcv_offered(w->b), info(c).snd_wnd - floor);
	/* Not idle long enough: nothing is taken back. */
	assert_int_equal(tcp_engine_reclaim_idle(w->b, w->now, MS(500), UINT32_MAX), 0);
	wire_run(w, MS(600));
	assert_int_equal(tcp_engine_reclaim_idle(w->b, w->now, MS(500), UINT32_MAX), 1);
	assert_int_equal(cnt(w->b, TCP_CNT_RCV_RECLAIMED), 1);
	assert_int_equal(tcp_engine_rcv_offered(w->b), 0);
	wire_run(w, MS(10));
	assert_true(info(c).snd_wnd <= floor);
	/* At the floor already: no second time. */
	wire_run(w, MS(600));
	assert_int_equal(tcp_engine_reclaim_idle(w->b, w->now, MS(500), UINT32_MAX), 0);
	/* Data again: it all arrives, and the window grows back. */
	assert_int_equal(tcp_send(c, buf, 100000, w->now), 100000);
	wire_run(w, MS(200));
	assert_int_equal(w->app_b.rx_bytes, 200000);
	assert_true(info(c).snd_wnd > floor);
	/* Closed both ways: nothing of it is counted. */
	assert_int_equal(tcp_shutdown(c, w->now), 0);
	assert_int_equal(tcp_shutdown(w->app_b.conn, w->now), 0);
	wire_run(w, MS(100));
	assert_int_equal(tcp_engine_rcv_offered(w->b), 0);
	wire_free(w);
}

/* A connection that only sends hears ACKs and no data: its window is
 * taken back all the same (it is the data that counts, not the peer's
 * segments). */
static void
a_connection_that_hears_only_acks_gives_its_window_back(void **state)
{
	static uint8_t buf[100000];
	struct tcp_conn *c, *bc;
	struct wire *w;

	(void)state;
	setup();
	pb.rcv_buf = 128 * 1024;
	w = wire_new(&pa, &pb);
	tcp_engine_set_rcv_pool(w->b, 1000000);
	c = wire_connect(w);
	bc = w->app_b.conn;
	assert_non_null(bc);
	assert_true(tcp_engine_rcv_offered(w->b) > 0);
	for (int i = 0; i < 12; i++) {
		(void)tcp_send(bc, buf, sizeof(buf), w->now);
		wire_run(w, MS(50));
	}
	assert_true(w->app_a.rx_bytes > 200000);
	assert_int_equal(tcp_engine_reclaim_idle(w->b, w->now, MS(500), UINT32_MAX), 1);
	assert_int_equal(tcp_engine_rcv_offered(w->b), 0);
	wire_run(w, MS(10));
	assert_true(info(c).snd_wnd <= 2 * 1460);
	wire_free(w);
}

/* With more than half of the pool offered, a handshake offers two
 * segments; with less, what the pool allows (and never more than a
 * SYN's unscaled field says). */
static void
a_handshake_offers_two_segments_when_the_pool_is_half_offered(void **state)
{
	static uint8_t buf[200000];
	struct tcp_endpoints ep;
	struct tcp_conn *c, *c2;
	struct wire *w;
	uint64_t off;

	(void)state;
	setup();
	pb.rcv_buf = 128 * 1024;
	w = wire_new(&pa, &pb);
	tcp_engine_set_rcv_pool(w->b, 100000);
	c = wire_connect(w);
	/* A SYN-ACK under a pool: at most 65535, at most half the pool. */
	assert_true(tcp_engine_rcv_offered(w->b) <= 50000);
	assert_int_equal(tcp_send(c, buf, sizeof(buf), w->now), (int32_t)sizeof(buf));
	wire_run(w, MS(100));
	/* The first connection offers half the pool; then the pool shrinks
	 * (the owner's next sample), and that is more than half of it. */
	assert_true(tcp_engine_rcv_offered(w->b) > 40000);
	tcp_engine_set_rcv_pool(w->b, 80000);
	off = tcp_engine_rcv_offered(w->b);
	ep = w->ep_a;
	ep.lport = (uint16_t)(ep.lport + 1);
	c2 = tcp_connect(w->a, &ep, &w->app_a, w->now);
	assert_non_null(c2);
	/* The SYN-ACK is out, its ACK not yet in: a half-open connection
	 * holds two segments, which are outside the pool. */
	wire_run(w, w->delay + US(100));
	assert_int_equal(tcp_engine_rcv_offered(w->b), off);
	wire_run(w, 4 * w->delay + MS(1));
	assert_int_equal(info(c2).state, TCP_ESTABLISHED);
	wire_free(w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_window_that_never_opens_is_given_up_after_the_persist_timeout),
		cmocka_unit_test(a_window_that_opens_in_time_restarts_the_persist_clock),
		cmocka_unit_test(without_a_persist_timeout_probing_goes_on),
		cmocka_unit_test(a_connection_that_hears_nothing_is_reset_after_the_idle_timeout),
		cmocka_unit_test(a_half_close_the_peer_never_finishes_ends_after_the_fin_wait_2_timeout),
		cmocka_unit_test(a_half_close_with_data_still_flowing_in_does_not_time_out),
		cmocka_unit_test(a_receive_limit_bounds_what_a_stalled_reader_holds),
		cmocka_unit_test(a_window_update_after_the_limit_lifts_resumes_the_sender_at_once),
		cmocka_unit_test(a_receive_pool_bounds_windows_and_takes_back_idle_ones),
		cmocka_unit_test(a_connection_that_hears_only_acks_gives_its_window_back),
		cmocka_unit_test(a_handshake_offers_two_segments_when_the_pool_is_half_offered),
	};

	if (test_eal_init("tmo") != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
