/* SPDX-License-Identifier: BSD-3-Clause */
/* Runs of one connection's frames (tcp_input_conn_run()): in-order data
 * merged as GRO merges it within an input burst, and everything that
 * must stop the merge, on the virtual clock. The wire copies each frame
 * into one mbuf, as a NIC gives it, and feeds each engine's consecutive
 * frames as runs. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tcp_test_util.h"
#include "tcp_impl.h"

static struct tcp_engine_params pa, pb;

/* What crossed: B's pure ACKs, and A's data segments, of which the
 * hook may drop the nth. */
static struct {
	uint32_t n_acks;
	uint32_t ack[64];
	uint32_t nsack[64];
	uint32_t n_data;
	uint32_t drop_nth_data;
} rec;

static int
hook(struct wire *w, int to_b, const struct tcp_seg_in *s)
{
	(void)w;
	if (!to_b) {
		if (s->len == 0 && !(s->flags & (TCP_FL_SYN | TCP_FL_FIN | TCP_FL_RST)) &&
		    rec.n_acks < 64) {
			rec.nsack[rec.n_acks] = s->nsack;
			rec.ack[rec.n_acks++] = s->ack;
		}
		return 0;
	}
	if (s->len && ++rec.n_data == rec.drop_nth_data)
		return 1;
	return 0;
}

/* A connection 100 ms after its handshake, on a wire that delivers in
 * runs (bursts if burst is set); A's flags as TCP_F_*. */
static struct wire *
runs_setup(struct tcp_conn **c, uint8_t flags, int burst)
{
	struct wire *w;

	memset(&rec, 0, sizeof(rec));
	wire_params(&pa, "a", NULL);
	wire_params(&pb, "b", NULL);
	pa.flags = flags;
	w = wire_new(&pa, &pb);
	assert_non_null(w->a);
	w->drop = hook;
	*c = wire_connect(w);
	assert_non_null(*c);
	wire_run(w, MS(100));
	w->burst = burst;
	w->runs = 1;
	rec.n_acks = 0;
	rec.n_data = 0;
	return w;
}

static uint32_t
snd_nxt(struct tcp_conn *c)
{
	struct tcp_conn_info i;

	tcp_conn_get_info(c, &i);
	return i.snd_nxt;
}

static const uint64_t *
cnt_b(const struct wire *w)
{
	return tcp_engine_counters(w->b);
}

/* A stream the test can tell apart byte by byte. */
static void
fill(uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 7 + i / 251);
}

/* len bytes of buf, all sent at once, reach B as one burst; B read
 * exactly them, in order. */
static void
send_and_check(struct wire *w, struct tcp_conn *c, const uint8_t *buf, uint32_t len)
{
	assert_int_equal(tcp_send(c, buf, len, w->now), len);
	wire_run(w, w->delay);
	assert_int_equal(w->app_b.rx_bytes, len);
	assert_int_equal(w->app_b.rx_hash, fnv1a(FNV_INIT, buf, len));
}

/* Eight full segments in one burst are read as one: seven merged into
 * the first, one cumulative ACK, the same bytes. */
static void
eight_in_order_segments_of_a_burst_are_read_as_one(void **state)
{
	static uint8_t buf[8 * 1448];
	struct tcp_conn *c;
	struct wire *w = runs_setup(&c, 0, 1);

	(void)state;
	fill(buf, sizeof(buf));
	send_and_check(w, c, buf, sizeof(buf));
	assert_int_equal(rec.n_data, 8);
	assert_int_equal(cnt_b(w)[TCP_CNT_SEG_COALESCED], 7);
	assert_int_equal(rec.n_acks, 1);
	assert_int_equal(rec.ack[0], snd_nxt(c));
	/* One segment's worth of the state machine: no ACK was owed
	 * twice within the burst. */
	assert_int_equal(cnt_b(w)[TCP_CNT_ACK_COALESCED], 0);
	wire_run(w, MS(100));
	assert_int_equal(rec.n_acks, 1);
	wire_free(w);
}

/* A merged segment holds at most 16 frames: 40 in one burst are read as
 * three (16, 16, 8). */
static void
a_merged_segment_holds_at_most_sixteen_frames(void **state)
{
	static uint8_t buf[40 * 1448];
	struct tcp_conn *c;
	struct wire *w = runs_setup(&c, 0, 1);

	(void)state;
	fill(buf, sizeof(buf));
	c->cc.cwnd = 64 * 1448; /* all forty in one flight */
	send_and_check(w, c, buf, sizeof(buf));
	assert_int_equal(rec.n_data, 40);
	assert_int_equal(cnt_b(w)[TCP_CNT_SEG_COALESCED], 15 + 15 + 7);
	wire_free(w);
}

/* The third of eight is lost: the two before it merge; the five after
 * it are out of order and each goes in on its own, so the ACK at the
 * burst's end SACKs them and the hole is resent at once. */
static void
a_hole_ends_the_merge_and_what_follows_goes_in_alone(void **state)
{
	static uint8_t buf[8 * 1448];
	struct tcp_conn *c;
	struct wire *w = runs_setup(&c, 0, 1);

	(void)state;
	fill(buf, sizeof(buf));
	rec.drop_nth_data = 3;
	assert_int_equal(tcp_send(c, buf, sizeof(buf), w->now), sizeof(buf));
	wire_run(w, w->delay);
	assert_int_equal(cnt_b(w)[TCP_CNT_SEG_COALESCED], 1);
	assert_int_equal(w->app_b.rx_bytes, 2 * 1448);
	assert_int_equal(rec.n_acks, 1);
	assert_int_equal(rec.ack[0], snd_nxt(c) - 6 * 1448);
	assert_int_equal(rec.nsack[0], 1);
	/* The hole goes again one delay later, and fills it. */
	wire_run(w, 2 * w->delay);
	assert_int_equal(w->app_b.rx_bytes, sizeof(buf));
	assert_int_equal(w->app_b.rx_hash, fnv1a(FNV_INIT, buf, sizeof(buf)));
	assert_int_equal(tcp_engine_counters(w->a)[TCP_CNT_RTO], 0);
	wire_free(w);
}

/* Without a burst each frame of a run goes in on its own, as
 * tcp_input_conn() takes it: the every-second-segment ACKs leave at
 * once. */
static void
without_a_burst_nothing_is_merged(void **state)
{
	static uint8_t buf[8 * 1448];
	struct tcp_conn *c;
	struct wire *w = runs_setup(&c, 0, 0);

	(void)state;
	fill(buf, sizeof(buf));
	send_and_check(w, c, buf, sizeof(buf));
	assert_int_equal(cnt_b(w)[TCP_CNT_SEG_COALESCED], 0);
	assert_int_equal(rec.n_acks, 4);
	wire_free(w);
}

/* A short last segment with PSH (the end of a write) merges as the
 * last of its run; the next write's segments start another. */
static void
a_segment_with_psh_ends_its_merge(void **state)
{
	static uint8_t buf[2 * (3 * 1448 + 100)];
	struct tcp_conn *c;
	struct wire *w = runs_setup(&c, 0, 1);
	const uint32_t half = 3 * 1448 + 100;

	(void)state;
	fill(buf, sizeof(buf));
	assert_int_equal(tcp_send(c, buf, half, w->now), half);
	wire_collect(w);
	assert_int_equal(tcp_send(c, buf + half, half, w->now), half);
	wire_collect(w);
	w->now += w->delay;
	wire_deliver(w);
	wire_collect(w);
	assert_int_equal(w->app_b.rx_bytes, sizeof(buf));
	assert_int_equal(w->app_b.rx_hash, fnv1a(FNV_INIT, buf, sizeof(buf)));
	/* However the sender cut the two writes into segments, a merge
	 * never runs past a PSH: fewer merged than segments less one. */
	assert_true(cnt_b(w)[TCP_CNT_SEG_COALESCED] < rec.n_data - 1);
	assert_true(cnt_b(w)[TCP_CNT_SEG_COALESCED] > 0);
	wire_free(w);
}


/* ---- Crafted runs: frames from A's end that A never sent, fed to B
 * directly, so that one field at a time can differ. */

struct craft {
	struct wire *w;
	struct tcp_conn *cb;   /* B's end */
	uint32_t seq, ack;     /* the next byte from A; what A acknowledges */
	uint32_t tsval, tsecr;
	uint32_t at;           /* bytes of data crafted so far */
	uint8_t data[16 * 1448];
	struct rte_mbuf *pk[16];
	uint16_t n;
};

static void
craft_setup(struct craft *k)
{
	struct tcp_conn *c;
	struct tcp_conn_info ia;

	memset(k, 0, sizeof(*k));
	k->w = runs_setup(&c, 0, 1);
	k->cb = k->w->app_b.conn;
	assert_non_null(k->cb);
	tcp_conn_get_info(c, &ia);
	k->seq = ia.snd_nxt;
	k->ack = ia.rcv_nxt;
	k->tsval = k->cb->ts_recent + 1; /* newer: PAWS lets it in */
	k->tsecr = 0;    /* (B times nothing by it) */
	fill(k->data, sizeof(k->data));
}

/* The next len bytes from A as one frame (one mbuf, as a NIC gives it),
 * parsed, with A's timestamps and window as given. */
static void
craft_frame(struct craft *k, uint32_t len, uint16_t wnd, uint8_t flags)
{
	struct tcp_seg_out o = {
		.seq = k->seq, .ack = k->ack, .flags = flags, .wnd = wnd,
		.opts = TCP_SO_TS, .tsval = k->tsval, .tsecr = k->tsecr,
	};
	struct rte_mbuf *d = rte_pktmbuf_alloc(test_pool), *m;

	assert_non_null(d);
	memcpy(rte_pktmbuf_append(d, (uint16_t)len), k->data + k->at, len);
	m = tcp_seg_build(test_pool, &k->w->ep_a, &o, d, 0, len);
	rte_pktmbuf_free(d);
	assert_non_null(m);
	assert_null(m->next);
	pkt_parse(m, pkt_meta(m), 0);
	k->pk[k->n++] = m;
	k->seq += len;
	k->at += len;
}

/* Feed the crafted frames to B as one burst; returns what the run took.
 * Those it did not take are freed. */
static uint16_t
craft_feed(struct craft *k)
{
	struct tcp_engine *b = k->w->b;
	uint16_t t;

	assert_ptr_equal(tcp_conn_lookup(b, k->pk[0]), k->cb);
	tcp_input_burst_begin(b);
	t = tcp_input_conn_run(b, k->cb, k->pk, k->n, k->w->now);
	tcp_input_burst_end(b, k->w->now);
	for (uint16_t i = t; i < k->n; i++)
		rte_pktmbuf_free(k->pk[i]);
	return t;
}

/* B read the first len bytes of the crafted stream, and no more. */
static void
craft_read(struct craft *k, uint32_t len)
{
	assert_int_equal(k->w->app_b.rx_bytes, len);
	assert_int_equal(k->w->app_b.rx_hash, fnv1a(FNV_INIT, k->data, len));
}

/* The timestamps change after the fourth (no PSH anywhere): four and
 * four. */
static void
a_new_timestamp_starts_a_new_merge(void **state)
{
	static struct craft k;

	(void)state;
	craft_setup(&k);
	for (int i = 0; i < 8; i++) {
		if (i == 4)
			k.tsval++;
		craft_frame(&k, 1448, 1000, TCP_FL_ACK);
	}
	assert_int_equal(craft_feed(&k), 8);
	craft_read(&k, 8 * 1448);
	assert_int_equal(cnt_b(k.w)[TCP_CNT_SEG_COALESCED], 6);
	wire_free(k.w);
}

/* The window field changes after the third: three and five. */
static void
a_new_window_starts_a_new_merge(void **state)
{
	static struct craft k;

	(void)state;
	craft_setup(&k);
	for (int i = 0; i < 8; i++)
		craft_frame(&k, 1448, i < 3 ? 1000 : 1001, TCP_FL_ACK);
	assert_int_equal(craft_feed(&k), 8);
	craft_read(&k, 8 * 1448);
	assert_int_equal(cnt_b(k.w)[TCP_CNT_SEG_COALESCED], 2 + 4);
	wire_free(k.w);
}

/* A frame with bytes after its payload (Ethernet padding) is not merged
 * into, and is not merged: what follows it starts anew. */
static void
a_frame_with_trailing_bytes_is_taken_alone(void **state)
{
	static struct craft k;

	(void)state;
	craft_setup(&k);
	for (int i = 0; i < 6; i++)
		craft_frame(&k, 1448, 1000, TCP_FL_ACK);
	assert_non_null(rte_pktmbuf_append(k.pk[2], 4));
	assert_int_equal(craft_feed(&k), 6);
	craft_read(&k, 6 * 1448);
	/* 0-1 merged, 2 alone, 3-5 merged. */
	assert_int_equal(cnt_b(k.w)[TCP_CNT_SEG_COALESCED], 1 + 2);
	wire_free(k.w);
}

/* A frame whose checksum is wrong is counted and dropped, as on its
 * own; the bytes after it are out of order and go in alone. */
static void
a_corrupt_frame_in_a_run_is_dropped_and_counted(void **state)
{
	static struct craft k;
	uint8_t *p;

	(void)state;
	craft_setup(&k);
	for (int i = 0; i < 5; i++)
		craft_frame(&k, 1448, 1000, TCP_FL_ACK);
	p = rte_pktmbuf_mtod_offset(k.pk[2], uint8_t *, k.pk[2]->data_len - 1);
	*p ^= 0x5a;
	assert_int_equal(craft_feed(&k), 5);
	craft_read(&k, 2 * 1448);
	assert_int_equal(cnt_b(k.w)[TCP_CNT_BAD_CSUM], 1);
	assert_int_equal(cnt_b(k.w)[TCP_CNT_SEG_COALESCED], 1);
	assert_int_equal(cnt_b(k.w)[TCP_CNT_SEG_IN] >= 5, 1);
	wire_free(k.w);
}

/* Bytes beyond the receive window are not merged: the segments that
 * fit merge, the one that does not goes in alone and is cut there, as
 * it would have been on its own. */
static void
a_segment_past_the_window_is_not_merged(void **state)
{
	static struct craft k;

	(void)state;
	craft_setup(&k);
	k.cb->rcv_adv = k.seq + 3 * 1448;
	for (int i = 0; i < 4; i++)
		craft_frame(&k, 1448, 1000, TCP_FL_ACK);
	assert_int_equal(craft_feed(&k), 4);
	assert_int_equal(cnt_b(k.w)[TCP_CNT_SEG_COALESCED], 2);
	craft_read(&k, 3 * 1448);
	wire_free(k.w);
}

/* Frames are not merged past the receive side's mbuf memory (rcv_mem):
 * with room for three buffers, three merge and the fourth goes in
 * alone, where the engine makes room for it as it would have. */
static void
the_merge_stops_at_the_receive_memory(void **state)
{
	static struct craft k;
	uint32_t buf_len;

	(void)state;
	craft_setup(&k);
	for (int i = 0; i < 4; i++)
		craft_frame(&k, 1448, 1000, TCP_FL_ACK);
	buf_len = k.pk[0]->buf_len;
	k.w->b->p.rcv_mem = 3 * buf_len + buf_len / 2;
	assert_int_equal(craft_feed(&k), 4);
	assert_int_equal(cnt_b(k.w)[TCP_CNT_SEG_COALESCED], 2);
	assert_int_equal(cnt_b(k.w)[TCP_CNT_RCV_COLLAPSE], 1);
	craft_read(&k, 4 * 1448);
	wire_free(k.w);
}

/* A frame of another connection ends the run: the run takes the frames
 * before it, and the caller keeps it. */
static void
a_frame_of_another_connection_ends_the_run(void **state)
{
	static struct craft k;
	uint16_t port;

	(void)state;
	craft_setup(&k);
	for (int i = 0; i < 3; i++)
		craft_frame(&k, 1448, 1000, TCP_FL_ACK);
	port = k.w->ep_a.lport;
	k.w->ep_a.lport = (uint16_t)(port + 1);
	craft_frame(&k, 1448, 1000, TCP_FL_ACK);
	k.w->ep_a.lport = port;
	assert_int_equal(craft_feed(&k), 3);
	craft_read(&k, 3 * 1448);
	assert_int_equal(cnt_b(k.w)[TCP_CNT_SEG_COALESCED], 2);
	wire_free(k.w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(eight_in_order_segments_of_a_burst_are_read_as_one),
		cmocka_unit_test(a_merged_segment_holds_at_most_sixteen_frames),
		cmocka_unit_test(a_hole_ends_the_merge_and_what_follows_goes_in_alone),
		cmocka_unit_test(without_a_burst_nothing_is_merged),
		cmocka_unit_test(a_segment_with_psh_ends_its_merge),
		cmocka_unit_test(a_new_timestamp_starts_a_new_merge),
		cmocka_unit_test(a_new_window_starts_a_new_merge),
		cmocka_unit_test(a_frame_with_trailing_bytes_is_taken_alone),
		cmocka_unit_test(a_corrupt_frame_in_a_run_is_dropped_and_counted),
		cmocka_unit_test(a_segment_past_the_window_is_not_merged),
		cmocka_unit_test(the_merge_stops_at_the_receive_memory),
		cmocka_unit_test(a_frame_of_another_connection_ends_the_run),
	};

	if (test_eal_init("runs") < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
