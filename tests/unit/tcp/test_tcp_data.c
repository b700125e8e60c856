/* SPDX-License-Identifier: BSD-3-Clause */
/* Byte streams between two engines: integrity, back-pressure, receive
 * windows that follow the reader, half-close. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tcp_test_util.h"

static struct tcp_engine_params pa, pb;

static inline uint8_t
pattern(uint64_t i)
{
	return (uint8_t)((i * 2654435761u) >> 13);
}

/* Push up to `total` pattern bytes through c, from offset *off. */
static void
push(struct wire *w, struct tcp_conn *c, uint64_t total, uint64_t *off, uint64_t *hash)
{
	uint8_t buf[8192];

	while (*off < total) {
		uint32_t n = (uint32_t)RTE_MIN((uint64_t)sizeof(buf), total - *off);
		int32_t got;

		for (uint32_t i = 0; i < n; i++)
			buf[i] = pattern(*off + i);
		got = tcp_send(c, buf, n, w->now);
		assert_true(got >= 0);
		if (got == 0)
			return;
		*hash = fnv1a(*hash, buf, (size_t)got);
		*off += (uint64_t)got;
	}
}

/* Transfer total bytes from A to B (and, if both, B to A at once). */
static void
transfer(struct wire *w, uint64_t total, int both, uint64_t deadline)
{
	struct tcp_conn *ca = w->app_a.conn, *cb = w->app_b.conn;
	uint64_t offa = 0, offb = 0, ha = FNV_INIT, hb = FNV_INIT;

	assert_non_null(ca);
	assert_non_null(cb);
	while (w->now < deadline &&
	       (w->app_b.rx_bytes < total || (both && w->app_a.rx_bytes < total))) {
		push(w, ca, total, &offa, &ha);
		if (both)
			push(w, cb, total, &offb, &hb);
		wire_run(w, MS(1));
	}
	assert_int_equal(w->app_b.rx_bytes, total);
	assert_true(w->app_b.rx_hash == ha);
	if (both) {
		assert_int_equal(w->app_a.rx_bytes, total);
		assert_true(w->app_a.rx_hash == hb);
	}
}

static struct wire *
setup(uint8_t flags_b, uint32_t rcv_buf_b, uint32_t snd_buf_a)
{
	struct wire *w;

	wire_params(&pa, "a", NULL);
	wire_params(&pb, "b", NULL);
	pb.flags = flags_b;
	if (rcv_buf_b)
		pb.rcv_buf = rcv_buf_b;
	if (snd_buf_a)
		pa.snd_buf = snd_buf_a;
	w = wire_new(&pa, &pb);
	assert_non_null(w->a);
	assert_non_null(w->b);
	return w;
}

static void
a_megabyte_crosses_each_way_at_once_byte_for_byte(void **state)
{
	struct wire *w = setup(0, 0, 0);

	(void)state;
	wire_connect(w);
	transfer(w, 1 << 20, 1, w->now + MS(10000));
	assert_int_equal(tcp_engine_counters(w->a)[TCP_CNT_RETRANSMIT], 0);
	assert_int_equal(rte_mempool_in_use_count(test_pool) > 0, 1);
	wire_free(w);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
}

static void
a_transfer_over_ipv6_arrives_intact(void **state)
{
	struct wire *w = setup(0, 0, 0);

	(void)state;
	wire_ep_v6(&w->ep_a);
	wire_connect(w);
	transfer(w, 300000, 0, w->now + MS(10000));
	wire_free(w);
}

static void
a_transfer_without_any_option_arrives_intact(void **state)
{
	struct wire *w = setup(TCP_F_NO_TS | TCP_F_NO_SACK | TCP_F_NO_WS, 60000, 0);

	(void)state;
	wire_connect(w);
	transfer(w, 300000, 1, w->now + MS(10000));
	wire_free(w);
}

static void
a_one_byte_transfer_arrives(void **state)
{
	struct wire *w = setup(0, 0, 0);

	(void)state;
	wire_connect(w);
	transfer(w, 1, 0, w->now + MS(1000));
	wire_free(w);
}

static void
send_accepts_only_what_fits_and_reports_writable_later(void **state)
{
	static uint8_t buf[30000];
	struct wire *w = setup(0, 0, 10000);
	struct tcp_conn *c;

	(void)state;
	c = wire_connect(w);
	assert_int_equal(tcp_send(c, buf, sizeof(buf), w->now), 10000);
	assert_int_equal(tcp_send(c, buf, sizeof(buf), w->now), 0);
	assert_false(w->app_a.events & TCP_EV_WRITABLE);
	wire_run(w, MS(50));
	assert_true(w->app_a.events & TCP_EV_WRITABLE);
	assert_int_equal(w->app_b.rx_bytes, 10000);
	wire_free(w);
}

static void
a_slow_reader_closes_the_window_and_reading_reopens_it(void **state)
{
	struct wire *w = setup(0, 20000, 1 << 20);
	struct tcp_conn *c, *cb;
	struct tcp_conn_info i;
	uint64_t off = 0, h = FNV_INIT, hb = FNV_INIT, got = 0;
	uint8_t buf[4096];
	uint32_t n;

	(void)state;
	c = wire_connect(w);
	cb = w->app_b.conn;
	w->app_b.auto_read = 0;
	push(w, c, 100000, &off, &h);
	assert_int_equal(off, 100000);
	wire_run(w, MS(1000));
	/* B holds exactly its buffer, A holds the rest: nothing beyond the
	 * window was sent or lost. */
	tcp_conn_get_info(cb, &i);
	assert_int_equal(i.rcv_queued, 20000);
	assert_int_equal(i.rcv_wnd, 0);
	tcp_conn_get_info(c, &i);
	assert_int_equal(i.snd_wnd, 0);
	assert_int_equal(i.snd_queued, 80000);
	assert_int_equal(i.snd_una, i.snd_nxt);
	assert_true(tcp_engine_counters(w->a)[TCP_CNT_ZWP] > 0);
	while (got < 100000 && w->now < MS(20000)) {
		while ((n = tcp_recv(cb, buf, sizeof(buf), w->now)) > 0) {
			hb = fnv1a(hb, buf, n);
			got += n;
		}
		wire_run(w, MS(1));
	}
	assert_int_equal(got, 100000);
	assert_true(hb == h);
	wire_free(w);
}

static void
after_a_half_close_the_other_direction_still_flows(void **state)
{
	struct wire *w = setup(0, 0, 0);
	struct tcp_conn *c;
	uint64_t off = 0, h = FNV_INIT;

	(void)state;
	c = wire_connect(w);
	tcp_shutdown(c, w->now);
	wire_run(w, MS(20));
	assert_true(w->app_b.events & TCP_EV_PEER_FIN);
	while (w->app_a.rx_bytes < 200000 && w->now < MS(10000)) {
		push(w, w->app_b.conn, 200000, &off, &h);
		wire_run(w, MS(1));
	}
	assert_int_equal(w->app_a.rx_bytes, 200000);
	assert_true(w->app_a.rx_hash == h);
	assert_int_equal(tcp_shutdown(w->app_b.conn, w->now), 0);
	wire_run(w, MS(50));
	assert_int_equal(w->app_a.n_closed, 1);
	assert_int_equal(w->app_b.n_closed, 1);
	wire_free(w);
}

static void
data_queued_before_the_handshake_goes_out_once_connected(void **state)
{
	struct wire *w = setup(0, 0, 0);
	struct tcp_conn *c;

	(void)state;
	tcp_listen(w->b, 80, true);
	c = tcp_connect(w->a, &w->ep_a, &w->app_a, w->now);
	assert_int_equal(tcp_send(c, "hello", 5, w->now), 5);
	assert_int_equal(tcp_shutdown(c, w->now), 0);
	wire_run(w, MS(50));
	assert_int_equal(w->app_b.rx_bytes, 5);
	assert_true(w->app_b.events & TCP_EV_PEER_FIN);
	wire_free(w);
}

/* B relays what it receives back to A without copying, as the proxy
 * will between its two legs. */
static void
echo_cb(struct tcp_conn *c, void *arg, uint32_t ev, uint64_t now)
{
	struct app *a = arg;

	a->events |= ev;
	if (ev & TCP_EV_CONNECTED)
		a->conn = c;
	if (ev & (TCP_EV_READABLE | TCP_EV_WRITABLE)) {
		for (;;) {
			struct tcp_conn_info i;
			struct rte_mbuf *m;

			tcp_conn_get_info(c, &i);
			m = tcp_recv_mbuf(c, 256 * 1024 - i.snd_queued, now);
			if (m == NULL)
				break;
			a->rx_bytes += rte_pktmbuf_pkt_len(m);
			assert_int_equal(tcp_send_mbuf(c, m, now), (int32_t)rte_pktmbuf_pkt_len(m));
		}
	}
	if (ev & TCP_EV_CLOSED)
		a->conn = NULL;
}

static void
received_mbufs_relay_back_without_copying(void **state)
{
	struct wire *w;
	uint64_t off = 0, h = FNV_INIT;
	const uint64_t total = 2000000;

	(void)state;
	wire_params(&pa, "a", NULL);
	wire_params(&pb, "b", NULL);
	pb.cb = echo_cb;
	pb.rcv_buf = 64 * 1024; /* the relay, not the buffer, is the limit */
	w = wire_new(&pa, &pb);
	wire_connect(w);
	while (w->app_a.rx_bytes < total && w->now < MS(20000)) {
		push(w, w->app_a.conn, total, &off, &h);
		wire_run(w, MS(1));
	}
	assert_int_equal(w->app_b.rx_bytes, total);
	assert_int_equal(w->app_a.rx_bytes, total);
	assert_true(w->app_a.rx_hash == h);
	wire_free(w);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
}

/* The relay leg (B to A) loses the first transmission of every data
 * segment; each retransmission is let through. */
struct first_tx {
	uint32_t seq[1024];
	uint32_t n;
	uint32_t dropped_since_scribble;
};

static int
drop_first_relayed_tx(struct wire *w, int to_b, const struct tcp_seg_in *s)
{
	struct first_tx *f = w->drop_arg;

	if (to_b || s->len == 0)
		return 0;
	for (uint32_t i = 0; i < f->n; i++)
		if (f->seq[i] == s->seq)
			return 0;
	assert_true(f->n < RTE_DIM(f->seq));
	f->seq[f->n++] = s->seq;
	f->dropped_since_scribble++;
	return 1;
}

/* Take every free mbuf of the pool, fill its whole buffer with 0xee and
 * give it back: whatever a freed frame held is overwritten, as when the
 * pool hands its mbufs to the other leg's next packets. */
static void
scribble_free_mbufs(void)
{
	static struct rte_mbuf *all[16384];
	unsigned int n = 0;

	while (n < RTE_DIM(all) && (all[n] = rte_pktmbuf_alloc(test_pool)) != NULL) {
		memset(all[n]->buf_addr, 0xee, all[n]->buf_len);
		n++;
	}
	rte_pktmbuf_free_bulk(all, n);
}

/* B relays A's bytes back with tcp_recv_mbuf() and tcp_send_mbuf(), and
 * every first transmission of the relay is lost. Each time frames were
 * dropped, the pool's free mbufs, among them the dropped frames', are
 * reused and overwritten before the retransmissions go out. The
 * retransmissions must still carry the relayed bytes: whatever the relay
 * transmits from must stay its own until A has acknowledged it. */
static void
a_retransmission_after_the_relayed_mbufs_were_reused_sends_the_relayed_bytes(void **state)
{
	static struct first_tx f;
	struct wire *w;
	uint64_t off = 0, h = FNV_INIT;
	const uint64_t total = 64 * 1024;

	(void)state;
	memset(&f, 0, sizeof(f));
	wire_params(&pa, "a", NULL);
	wire_params(&pb, "b", NULL);
	pb.cb = echo_cb;
	w = wire_new(&pa, &pb);
	wire_connect(w);
	w->drop = drop_first_relayed_tx;
	w->drop_arg = &f;
	while (w->app_a.rx_bytes < total && w->now < MS(30000)) {
		push(w, w->app_a.conn, total, &off, &h);
		wire_run(w, MS(1));
		if (f.dropped_since_scribble) {
			scribble_free_mbufs();
			f.dropped_since_scribble = 0;
		}
	}
	assert_int_equal(w->app_b.rx_bytes, total);
	assert_int_equal(w->app_a.rx_bytes, total);
	assert_true(w->app_a.rx_hash == h);
	assert_true(f.n >= total / 1460); /* every relayed segment was lost once */
	/* The relay sent its segments as references to the received
	 * mbufs, not copies: the case where reuse would show. */
	assert_true(w->chained[0] >= total / 1460);
	wire_free(w);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
}

/* The sizes of the data segments toward A (a drop hook that drops
 * nothing). */
struct seg_sizes {
	uint32_t n, min, max;
};

static int
note_sizes_to_a(struct wire *w, int to_b, const struct tcp_seg_in *s)
{
	struct seg_sizes *z = w->drop_arg;

	if (!to_b && s->len != 0) {
		z->n++;
		z->min = z->n == 1 || s->len < z->min ? s->len : z->min;
		z->max = s->len > z->max ? s->len : z->max;
	}
	return 0;
}

/* B sends count mbufs of size bytes each to A with tcp_send_mbuf(), as
 * a relay does with the segments of a peer whose MSS is smaller: each
 * mbuf holds payload only, after the headroom a received frame's
 * headers leave, and they come 16 to an input burst, so that they leave
 * in one output at its end. *off and *h carry the stream's offset and
 * hash from one call to the next. Returns B's MSS toward A. */
static uint32_t
relay_pieces_odd(struct wire *w, uint32_t piece, uint32_t count, uint32_t odd_at,
		 uint32_t odd_size, struct seg_sizes *z, uint64_t *off, uint64_t *h)
{
	struct tcp_conn *b = w->app_b.conn;
	struct tcp_conn_info i;

	memset(z, 0, sizeof(*z));
	w->drop = note_sizes_to_a;
	w->drop_arg = z;
	w->chained[0] = w->in_place[0] = 0;
	for (uint32_t k = 0; k < count;) {
		tcp_input_burst_begin(w->b);
		for (uint32_t j = 0; j < 16 && k < count; j++) {
			struct rte_mbuf *m = rte_pktmbuf_alloc(test_pool);
			uint32_t size = k == odd_at ? odd_size : piece;
			uint8_t *p;
			int32_t got;

			assert_non_null(m);
			rte_pktmbuf_adj(m, 66); /* the headers of the frame it came in */
			p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)size);
			assert_non_null(p);
			for (uint32_t q = 0; q < size; q++)
				p[q] = pattern(*off + q);
			got = tcp_send_mbuf(b, m, w->now);
			if (got == 0) { /* the send buffer is full */
				rte_pktmbuf_free(m);
				break;
			}
			assert_int_equal(got, (int32_t)size);
			*h = fnv1a(*h, p, size);
			*off += size;
			k++;
		}
		tcp_input_burst_end(w->b, w->now);
		wire_run(w, MS(1));
	}
	wire_run(w, MS(200));
	assert_int_equal(w->app_a.rx_bytes, *off);
	assert_true(w->app_a.rx_hash == *h);
	w->drop = NULL;
	tcp_conn_get_info(b, &i);
	return i.mss;
}

/* count pieces of size bytes (relay_pieces_odd() without an odd one). */
static uint32_t
relay_pieces(struct wire *w, uint32_t size, uint32_t count, struct seg_sizes *z,
	     uint64_t *off, uint64_t *h)
{
	return relay_pieces_odd(w, size, count, UINT32_MAX, 0, z, off, h);
}

/* A relay's send queue holds what the other leg received, one segment
 * per mbuf. Where those are a little smaller than this leg's MSS (a
 * phone behind a 1400-byte MTU, an MPTCP client's DSS), a full-sized
 * segment would span two of them: a chain, and the payload summed again
 * where the kept sums do not cover it. It ends with its mbuf instead,
 * and goes out in place. Pieces under 7/8 of the MSS still fill whole
 * segments. (A buffer the application filled, in mbufs larger than a
 * segment, is never cut up: test_tcp_hooks.c's
 * send_room_is_what_the_engine_then_sends fails if it is.) */
static void
a_relayed_segment_a_little_smaller_than_the_mss_leaves_whole(void **state)
{
	struct wire *w = setup(0, 0, 0);
	struct seg_sizes z;
	uint32_t mss, small;
	uint64_t off = 0, h = FNV_INIT;

	(void)state;
	wire_connect(w);
	mss = relay_pieces(w, 1348, 300, &z, &off, &h);
	assert_int_equal(mss, 1448);
	assert_int_equal(z.n, 300);
	assert_int_equal(z.min, 1348);
	assert_int_equal(z.max, 1348);
	assert_int_equal(w->in_place[0], 300);
	/* 7/8 of the MSS is the least a segment is cut to. */
	small = mss - mss / 8;
	(void)relay_pieces(w, small, 200, &z, &off, &h);
	assert_int_equal(z.n, 200);
	assert_int_equal(z.max, small);
	assert_int_equal(w->in_place[0], 200);
	(void)relay_pieces(w, small - 1, 200, &z, &off, &h);
	assert_int_equal(z.max, mss);
	assert_true(z.n < 200);
	assert_true(w->in_place[0] < w->chained[0]);
	wire_free(w);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
}

/* One odd piece among them (a short segment the peer sent) leaves one
 * segment of its own, or one with the piece after it when both fit, and
 * every segment after it is again one whole piece, sent in place.
 * (Before, each segment after a short one started a little further
 * into its piece, a chain of two, until the offset went round.) */
static void
segments_after_a_short_piece_are_whole_pieces_again(void **state)
{
	struct wire *w = setup(0, 0, 0);
	struct seg_sizes z;
	uint64_t off = 0, h = FNV_INIT;

	(void)state;
	wire_connect(w);
	/* 500 bytes: a segment of its own, then 99 whole pieces. */
	assert_int_equal(relay_pieces_odd(w, 1348, 150, 50, 500, &z, &off, &h), 1448);
	assert_int_equal(z.n, 150);
	assert_int_equal(z.min, 500);
	assert_int_equal(z.max, 1348);
	assert_int_equal(w->in_place[0], 150);
	assert_int_equal(w->chained[0], 150); /* (which counts those too) */
	/* 60 bytes: with the next piece, 1408 bytes in one segment (a
	 * chain), then whole pieces. */
	(void)relay_pieces_odd(w, 1348, 150, 50, 60, &z, &off, &h);
	assert_int_equal(z.n, 149);
	assert_int_equal(z.max, 1408);
	assert_int_equal(w->in_place[0], 148);
	assert_int_equal(w->chained[0], 149);
	wire_free(w);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
}

static void
tiny_segments_neither_pile_up_mbufs_nor_take_the_segment_pool(void **state)
{
	struct wire *w = setup(0, 0, 0);
	struct tcp_conn *c;
	struct tcp_conn_info i;
	uint8_t byte = 0;
	unsigned int in_use;

	(void)state;
	c = wire_connect(w);
	w->app_b.auto_read = 0;
	/* 3000 one-byte writes at once: without Nagle each is a segment;
	 * at most 256 are in flight, the rest wait in the send buffer. */
	for (int k = 0; k < 3000; k++, byte++)
		assert_int_equal(tcp_send(c, &byte, 1, w->now), 1);
	tcp_conn_get_info(c, &i);
	assert_int_equal(i.snd_nxt - i.snd_una, 256);
	assert_true(tcp_engine_counters(w->a)[TCP_CNT_TXREC_CONN_CAP] > 0);
	wire_run(w, MS(2000));
	tcp_conn_get_info(w->app_b.conn, &i);
	assert_int_equal(i.rcv_queued, 3000);
	/* B holds 3000 bytes that came in hundreds of segments in a few
	 * mbufs: small segments are copied into the previous one's room. */
	in_use = rte_mempool_in_use_count(test_pool);
	print_message("mbufs in use holding 3000 one-byte segments: %u\n", in_use);
	assert_true(in_use <= 8);
	wire_free(w);
}

static void
a_transfer_over_qinq_answers_with_the_same_tags(void **state)
{
	struct wire *w = setup(0, 0, 0);
	const struct tcp_endpoints *eb;

	(void)state;
	w->ep_a.vlan_count = 2;
	w->ep_a.vlan_tpid[0] = 0x88a8;
	w->ep_a.vlan_tpid[1] = 0x8100;
	w->ep_a.vlan_tci[0] = 100;
	w->ep_a.vlan_tci[1] = 200;
	wire_connect(w);
	assert_non_null(w->app_b.conn);
	eb = tcp_conn_endpoints(w->app_b.conn);
	assert_int_equal(eb->vlan_count, 2);
	assert_int_equal(eb->vlan_tpid[0], 0x88a8);
	assert_int_equal(eb->vlan_tpid[1], 0x8100);
	assert_int_equal(eb->vlan_tci[0], 100);
	assert_int_equal(eb->vlan_tci[1], 200);
	transfer(w, 200000, 1, w->now + MS(5000));
	wire_free(w);
}

static void
sequence_numbers_wrap_around_zero_without_a_hitch(void **state)
{
	struct wire *w = setup(0, 0, 0);
	struct tcp_conn *c;
	struct tcp_conn_info i;
	uint64_t t;

	(void)state;
	/* Find a start time that puts A's ISN 100 kB below 2^32: the ISN
	 * grows by one every 4 us (RFC 6528). */
	c = tcp_connect(w->a, &w->ep_a, &w->app_a, w->now);
	tcp_conn_get_info(c, &i);
	tcp_abort(c, w->now);
	wire_run(w, MS(10)); /* let the RST go */
	t = w->now + 4000ull * (uint32_t)(0xfffe7960u - i.iss);
	w->now = t;
	w->app_a.events = 0;
	w->app_a.n_closed = 0;
	c = wire_connect(w);
	tcp_conn_get_info(c, &i);
	assert_true(i.iss > 0xfff00000u);
	transfer(w, 1000000, 1, w->now + MS(10000));
	tcp_conn_get_info(c, &i);
	assert_true(i.snd_una < 0x00100000u); /* it wrapped */
	wire_free(w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_megabyte_crosses_each_way_at_once_byte_for_byte),
		cmocka_unit_test(a_transfer_over_ipv6_arrives_intact),
		cmocka_unit_test(a_transfer_without_any_option_arrives_intact),
		cmocka_unit_test(a_one_byte_transfer_arrives),
		cmocka_unit_test(send_accepts_only_what_fits_and_reports_writable_later),
		cmocka_unit_test(a_slow_reader_closes_the_window_and_reading_reopens_it),
		cmocka_unit_test(after_a_half_close_the_other_direction_still_flows),
		cmocka_unit_test(data_queued_before_the_handshake_goes_out_once_connected),
		cmocka_unit_test(received_mbufs_relay_back_without_copying),
		cmocka_unit_test(a_retransmission_after_the_relayed_mbufs_were_reused_sends_the_relayed_bytes),
		cmocka_unit_test(a_relayed_segment_a_little_smaller_than_the_mss_leaves_whole),
		cmocka_unit_test(segments_after_a_short_piece_are_whole_pieces_again),
		cmocka_unit_test(tiny_segments_neither_pile_up_mbufs_nor_take_the_segment_pool),
		cmocka_unit_test(a_transfer_over_qinq_answers_with_the_same_tags),
		cmocka_unit_test(sequence_numbers_wrap_around_zero_without_a_hitch),
	};

	if (test_eal_init("data") != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
