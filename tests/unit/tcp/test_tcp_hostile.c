/* SPDX-License-Identifier: BSD-3-Clause */
/* Input a peer (or anybody who can spoof one) sends to hurt the engine:
 * tiny out-of-order segments that would pin an mbuf per byte, IP
 * fragments that are not the engine's to take, and bad segments with
 * data that would each draw an ACK. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <rte_ip.h>

#include "tcp_test_util.h"

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

static uint64_t
cnt(struct tcp_engine *e, enum tcp_cnt c)
{
	return tcp_engine_counters(e)[c];
}

static inline uint8_t
pattern(uint32_t i)
{
	return (uint8_t)((i * 2654435761u) >> 13);
}

/* A frame from A's 4-tuple to B carrying len pattern bytes that start
 * pattern offset poff, parsed. */
static struct rte_mbuf *
frame_to_b(struct wire *w, uint8_t flags, uint32_t seq, uint32_t ack,
	   uint32_t poff, uint32_t len)
{
	struct tcp_seg_out o = { .seq = seq, .ack = ack, .flags = flags, .wnd = 1000 };
	struct rte_mbuf *m, *payload = NULL;

	if (len > 0) {
		uint8_t *d;

		payload = rte_pktmbuf_alloc(test_pool);
		assert_non_null(payload);
		d = (uint8_t *)rte_pktmbuf_append(payload, (uint16_t)len);
		assert_non_null(d);
		for (uint32_t i = 0; i < len; i++)
			d[i] = pattern(poff + i);
	}
	m = tcp_seg_build(test_pool, &w->ep_a, &o, payload, 0, len);
	rte_pktmbuf_free(payload);
	assert_non_null(m);
	pkt_parse(m, pkt_meta(m), 0);
	return m;
}

static void
inject_to_b(struct wire *w, uint8_t flags, uint32_t seq, uint32_t ack,
	    uint32_t poff, uint32_t len)
{
	struct rte_mbuf *m = frame_to_b(w, flags, seq, ack, poff, len);

	assert_int_equal(tcp_input(w->b, m, w->now), TCP_INPUT_CONSUMED);
}

/* Take what B wants to send and throw it away; return how many frames. */
static uint32_t
drain_b(struct wire *w)
{
	struct rte_mbuf *pkts[64];
	uint32_t total = 0;
	uint16_t n;

	while ((n = tcp_tx_burst(w->b, pkts, 64)) > 0) {
		rte_pktmbuf_free_bulk(pkts, n);
		total += n;
	}
	return total;
}

/* Issue 17, defect 2: one-byte segments in descending order behind a
 * hole each kept an mbuf of their own once the range passed 512 bytes,
 * so about 1 MB of them emptied the pool shared with NIC rx. */
static void
tiny_out_of_order_segments_hold_mbufs_bounded_by_the_receive_buffer(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *cb;
	struct tcp_conn_info ib;
	const uint32_t n = 12000;
	unsigned int in_use, peak = 0, limit;
	uint8_t buf[4096];
	uint32_t got = 0, r;
	uint64_t h = FNV_INIT, want = FNV_INIT;

	(void)state;
	wire_connect(w);
	cb = w->app_b.conn;
	assert_non_null(cb);
	w->app_b.auto_read = 0;
	ib = info(cb);
	/* Bytes 1..n, highest first; byte 0 is the hole. */
	for (uint32_t k = n; k >= 1; k--) {
		inject_to_b(w, TCP_FL_ACK, ib.rcv_nxt + k, ib.snd_nxt, k, 1);
		drain_b(w);
		assert_int_equal(tcp_conn_check(cb), 0);
		in_use = rte_mempool_in_use_count(test_pool);
		if (in_use > peak)
			peak = in_use;
	}
	/* Mbuf memory stays within twice the receive buffer (plus the
	 * few mbufs a collapse works with), whatever the segment size. */
	limit = 2 * pb.rcv_buf / RTE_MBUF_DEFAULT_BUF_SIZE + 8;
	print_message("peak mbufs in use for %u one-byte segments: %u (limit %u)\n",
		      n, peak, limit);
	assert_true(peak <= limit);
	assert_true(cnt(w->b, TCP_CNT_RCV_COLLAPSE) > 0);
	assert_int_equal(cnt(w->b, TCP_CNT_OOO_PRUNED), 0);
	assert_true(info(cb).rcv_mbufs <= limit);
	/* Filling the hole delivers every byte, in order and intact. */
	inject_to_b(w, TCP_FL_ACK, ib.rcv_nxt, ib.snd_nxt, 0, 1);
	drain_b(w);
	assert_int_equal(info(cb).rcv_queued, n + 1);
	while ((r = tcp_recv(cb, buf, sizeof(buf), w->now)) > 0) {
		h = fnv1a(h, buf, r);
		got += r;
	}
	for (uint32_t k = 0; k <= n; k++) {
		uint8_t b = pattern(k);

		want = fnv1a(want, &b, 1);
	}
	assert_int_equal(got, n + 1);
	assert_true(h == want);
	tcp_abort(cb, w->now);
	wire_free(w);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
}

/* The same with a reader that never reads and segments that arrive in
 * order but just too large to be copied into the previous one. */
static void
in_order_segments_of_a_stalled_reader_hold_mbufs_bounded(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn *cb;
	struct tcp_conn_info ib;
	const uint32_t seg = 513;
	unsigned int in_use, peak = 0, limit;
	uint32_t off = 0;

	(void)state;
	wire_connect(w);
	cb = w->app_b.conn;
	w->app_b.auto_read = 0;
	ib = info(cb);
	while (off + seg <= pb.rcv_buf) {
		inject_to_b(w, TCP_FL_ACK, ib.rcv_nxt + off, ib.snd_nxt, off, seg);
		drain_b(w);
		assert_int_equal(tcp_conn_check(cb), 0);
		off += seg;
		in_use = rte_mempool_in_use_count(test_pool);
		if (in_use > peak)
			peak = in_use;
	}
	limit = 2 * pb.rcv_buf / RTE_MBUF_DEFAULT_BUF_SIZE + 8;
	print_message("peak mbufs in use for %u bytes in %u-byte segments: %u (limit %u)\n",
		      off, seg, peak, limit);
	assert_int_equal(info(cb).rcv_queued, off);
	assert_true(peak <= limit);
	tcp_abort(cb, w->now);
	wire_free(w);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
}

/* When the pool cannot give the mbufs a collapse needs, the highest
 * out-of-order data is given up instead, and what is kept is intact. */
static void
without_mbufs_to_collapse_into_the_highest_out_of_order_data_is_pruned(void **state)
{
	struct rte_mempool *small;
	struct rte_mbuf *held[64];
	struct tcp_conn *cb;
	struct tcp_conn_info ib;
	struct wire *w;
	unsigned int nheld = 0;
	uint8_t buf[4096];
	uint32_t got = 0, r, limit;
	const uint32_t n = 3000;

	(void)state;
	small = rte_pktmbuf_pool_create("tcp_small", 63, 0, PKT_META_PRIV_SIZE,
					RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	assert_non_null(small);
	wire_params(&pa, "a", NULL);
	wire_params(&pb, "b", NULL);
	pb.pool = small;
	pb.rcv_buf = 16384;
	w = wire_new(&pa, &pb);
	wire_connect(w);
	cb = w->app_b.conn;
	assert_non_null(cb);
	w->app_b.auto_read = 0;
	ib = info(cb);
	while (nheld < 64 && (held[nheld] = rte_pktmbuf_alloc(small)) != NULL)
		nheld++;
	for (uint32_t k = n; k >= 1; k--) {
		inject_to_b(w, TCP_FL_ACK, ib.rcv_nxt + k, ib.snd_nxt, k, 1);
		drain_b(w);
		assert_int_equal(tcp_conn_check(cb), 0);
	}
	limit = (16384 + 10 * RTE_MBUF_DEFAULT_BUF_SIZE) / RTE_MBUF_DEFAULT_BUF_SIZE + 1;
	print_message("mbufs held: %u (limit %u), ranges pruned: %llu\n", info(cb).rcv_mbufs,
		      limit, (unsigned long long)cnt(w->b, TCP_CNT_OOO_PRUNED));
	assert_true(info(cb).rcv_mbufs <= limit);
	assert_true(cnt(w->b, TCP_CNT_OOO_PRUNED) > 0);
	rte_pktmbuf_free_bulk(held, nheld);
	/* The hole filled: a prefix in order, byte for byte. */
	inject_to_b(w, TCP_FL_ACK, ib.rcv_nxt, ib.snd_nxt, 0, 1);
	drain_b(w);
	while ((r = tcp_recv(cb, buf, sizeof(buf), w->now)) > 0) {
		for (uint32_t i = 0; i < r; i++)
			assert_int_equal(buf[i], pattern(got + i));
		got += r;
	}
	print_message("bytes delivered after the hole was filled: %u\n", got);
	assert_true(got > 1);
	tcp_abort(cb, w->now);
	wire_free(w);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
	assert_int_equal(rte_mempool_in_use_count(small), 0);
	rte_mempool_free(small);
}

/* An IPv4 first fragment: the frame of a data segment with MF set and
 * its tail cut off, as a fragmenting router sends it. */
static struct rte_mbuf *
first_fragment_to_b(struct wire *w, uint8_t flags, uint32_t seq, uint32_t ack)
{
	struct rte_mbuf *m = frame_to_b(w, flags, seq, ack, 0, 200);
	uint8_t *ip = rte_pktmbuf_mtod_offset(m, uint8_t *, 14);
	uint16_t tot = (uint16_t)(ip[2] << 8 | ip[3]);

	tot = (uint16_t)(tot - 96); /* a multiple of 8 stays */
	ip[2] = (uint8_t)(tot >> 8);
	ip[3] = (uint8_t)tot;
	ip[6] = 0x20; /* MF, offset 0 */
	ip[7] = 0;
	ip[10] = ip[11] = 0;
	{
		uint16_t ck = rte_ipv4_cksum((const struct rte_ipv4_hdr *)ip);

		memcpy(ip + 10, &ck, 2);
	}
	rte_pktmbuf_trim(m, 96);
	pkt_parse(m, pkt_meta(m), 0);
	assert_true(pkt_meta(m)->flags & PKT_F_FRAGMENT);
	assert_true(pkt_meta(m)->flags & PKT_F_L4);
	return m;
}

/* Issue 17, defect 4: a first fragment failed the checksum and was
 * freed, so a fragmented flow through an intercepted prefix vanished. */
static void
an_ip_fragment_is_handed_back_untouched_not_consumed(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn_info ib;
	struct rte_mbuf *m;
	uint8_t before[256];
	uint32_t len;

	(void)state;
	wire_connect(w);
	ib = info(w->app_b.conn);
	/* On a connection of the engine. */
	m = first_fragment_to_b(w, TCP_FL_ACK, ib.rcv_nxt, ib.snd_nxt);
	len = rte_pktmbuf_pkt_len(m);
	assert_true(len <= sizeof(before));
	memcpy(before, rte_pktmbuf_mtod(m, const void *), len);
	assert_int_not_equal(tcp_input(w->b, m, w->now), TCP_INPUT_CONSUMED);
	assert_int_equal(rte_pktmbuf_pkt_len(m), len);
	assert_memory_equal(rte_pktmbuf_mtod(m, const void *), before, len);
	assert_int_equal(cnt(w->b, TCP_CNT_BAD_CSUM), 0);
	assert_int_equal(cnt(w->b, TCP_CNT_FRAGMENT), 1);
	assert_int_equal(info(w->app_b.conn).rcv_queued, 0);
	rte_pktmbuf_free(m);
	/* A fragmented SYN to a listening port is not answered either. */
	w->ep_a.lport = 40001;
	m = first_fragment_to_b(w, TCP_FL_SYN, 12345, 0);
	assert_int_not_equal(tcp_input(w->b, m, w->now), TCP_INPUT_CONSUMED);
	assert_int_equal(drain_b(w), 0);
	assert_int_equal(cnt(w->b, TCP_CNT_FRAGMENT), 2);
	rte_pktmbuf_free(m);
	wire_free(w);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
}

/* Issue 17, defect 10: the ACKs owed to discarded segments were limited
 * only for segments without data, so a spoofer sending data got an ACK
 * for each segment. */
static void
bad_segments_with_data_draw_one_ack_per_interval(void **state)
{
	struct wire *w = setup_wire();
	struct tcp_conn_info ib;
	uint32_t acks = 0;

	(void)state;
	wire_connect(w);
	ib = info(w->app_b.conn);
	drain_b(w);
	for (int k = 0; k < 10; k++) {
		/* out of window */
		inject_to_b(w, TCP_FL_ACK, ib.rcv_nxt + 50000000, ib.snd_nxt, 0, 100);
		/* an ACK of data never sent */
		inject_to_b(w, TCP_FL_ACK, ib.rcv_nxt, ib.snd_nxt + 100000, 0, 100);
		/* a SYN with data, in window: a challenge ACK */
		inject_to_b(w, TCP_FL_SYN, ib.rcv_nxt + 10, 0, 0, 100);
		acks += drain_b(w);
	}
	assert_int_equal(acks, 1);
	assert_int_equal(info(w->app_b.conn).state, TCP_ESTABLISHED);
	assert_int_equal(info(w->app_b.conn).rcv_queued, 0);
	/* The next interval gets its ACK. */
	w->now += pb.oow_ack_ns;
	inject_to_b(w, TCP_FL_ACK, ib.rcv_nxt + 50000000, ib.snd_nxt, 0, 100);
	assert_int_equal(drain_b(w), 1);
	wire_free(w);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tiny_out_of_order_segments_hold_mbufs_bounded_by_the_receive_buffer),
		cmocka_unit_test(in_order_segments_of_a_stalled_reader_hold_mbufs_bounded),
		cmocka_unit_test(without_mbufs_to_collapse_into_the_highest_out_of_order_data_is_pruned),
		cmocka_unit_test(an_ip_fragment_is_handed_back_untouched_not_consumed),
		cmocka_unit_test(bad_segments_with_data_draw_one_ack_per_interval),
	};

	if (test_eal_init("hostile") != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
