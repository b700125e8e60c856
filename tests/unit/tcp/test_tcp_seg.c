/* SPDX-License-Identifier: BSD-3-Clause */
/* Segment I/O: frames built by the engine parse back to what was asked,
 * with valid checksums, over IPv4 and IPv6; SipHash-2-4 and ISNs. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rte_ip.h>
#include <rte_mbuf_dyn.h>

#include "tcp_test_util.h"
#include "tcp_impl.h"
#include "tcp_siphash.h"

static struct rte_mbuf *
chain_of(const uint8_t *data, uint32_t len, uint32_t seg_size)
{
	struct rte_mbuf *head = NULL, *tail = NULL;

	for (uint32_t off = 0; off < len; off += seg_size) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(test_pool);
		uint32_t n = len - off < seg_size ? len - off : seg_size;

		assert_non_null(m);
		memcpy(rte_pktmbuf_append(m, (uint16_t)n), data + off, n);
		if (tail)
			tail->next = m;
		else
			head = m;
		tail = m;
	}
	return head;
}

static void
chain_free(struct rte_mbuf *m)
{
	struct tcp_mq q = { .head = m };

	tcp_mq_free(&q);
}

static void
a_syn_with_every_option_parses_back_identically_over_ipv4(void **state)
{
	struct tcp_endpoints ep;
	struct tcp_seg_out o = { 0 };
	struct tcp_seg_in s;
	struct rte_mbuf *m;

	(void)state;
	wire_ep_v4(&ep);
	o.seq = 0xfffffff0u;
	o.flags = TCP_FL_SYN;
	o.wnd = 65535;
	o.opts = TCP_SO_MSS | TCP_SO_WS | TCP_SO_SACK_PERM | TCP_SO_TS;
	o.mss = 1460;
	o.ws = 7;
	o.tsval = 123456;
	o.tsecr = 0;
	assert_int_equal(tcp_seg_opt_len(&o), 20);
	m = tcp_seg_build(test_pool, &ep, &o, NULL, 0, 0);
	assert_non_null(m);
	assert_int_equal(rte_pktmbuf_pkt_len(m), 14 + 20 + 40);
	assert_int_equal(pkt_parse(m, pkt_meta(m), 0), PKT_ERR_NONE);
	assert_int_equal(tcp_seg_parse(m, pkt_meta(m), &s, 1), 0);
	assert_int_equal(s.seq, 0xfffffff0u);
	assert_int_equal(s.flags, TCP_FL_SYN);
	assert_int_equal(s.wnd, 65535);
	assert_int_equal(s.opts, TCP_SO_MSS | TCP_SO_WS | TCP_SO_SACK_PERM | TCP_SO_TS);
	assert_int_equal(s.mss, 1460);
	assert_int_equal(s.ws, 7);
	assert_int_equal(s.tsval, 123456);
	assert_int_equal(s.len, 0);
	assert_int_equal(pkt_meta(m)->sport, 40000);
	assert_int_equal(pkt_meta(m)->dport, 80);
	assert_memory_equal(pkt_meta(m)->src, ep.laddr, 4);
	rte_pktmbuf_free(m);
}

static void
a_data_segment_copies_payload_across_mbuf_boundaries_over_ipv6(void **state)
{
	uint8_t data[3000], out[1400];
	struct tcp_endpoints ep;
	struct tcp_seg_out o = { 0 };
	struct tcp_seg_in s;
	struct rte_mbuf *m, *chain;

	(void)state;
	for (unsigned int i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 3);
	chain = chain_of(data, sizeof(data), 500);
	wire_ep_v6(&ep);
	o.seq = 1000;
	o.ack = 2000;
	o.flags = TCP_FL_ACK | TCP_FL_PSH;
	o.wnd = 1234;
	o.opts = TCP_SO_TS | TCP_SO_SACK;
	o.tsval = 1;
	o.tsecr = 2;
	o.nsack = 3;
	for (int i = 0; i < 3; i++) {
		o.sack[i].left = 5000 + 1000u * i;
		o.sack[i].right = 5500 + 1000u * i;
	}
	assert_int_equal(tcp_seg_opt_len(&o), 40);
	m = tcp_seg_build(test_pool, &ep, &o, chain, 777, 1400);
	assert_non_null(m);
	assert_int_equal(pkt_parse(m, pkt_meta(m), 0), PKT_ERR_NONE);
	assert_int_equal(pkt_meta(m)->l3, PKT_L3_IPV6);
	assert_int_equal(tcp_seg_parse(m, pkt_meta(m), &s, 1), 0);
	assert_int_equal(s.len, 1400);
	assert_int_equal(s.ack, 2000);
	assert_int_equal(s.nsack, 3);
	assert_int_equal(s.sack[2].left, 7000);
	assert_int_equal(s.sack[2].right, 7500);
	assert_int_equal(tcp_chain_copy(m, s.payload_off, out, 1400), 1400);
	assert_memory_equal(out, data + 777, 1400);
	rte_pktmbuf_free(m);
	chain_free(chain);
}

static void
a_flipped_payload_bit_fails_the_checksum(void **state)
{
	uint8_t data[100] = { 1, 2, 3 };
	struct tcp_endpoints ep;
	struct tcp_seg_out o = { .seq = 1, .ack = 1, .flags = TCP_FL_ACK, .wnd = 10 };
	struct tcp_seg_in s;
	struct rte_mbuf *m, *chain = chain_of(data, sizeof(data), 100);

	(void)state;
	for (int fam = 4; fam <= 6; fam += 2) {
		if (fam == 4)
			wire_ep_v4(&ep);
		else
			wire_ep_v6(&ep);
		m = tcp_seg_build(test_pool, &ep, &o, chain, 0, 100);
		assert_non_null(m);
		pkt_parse(m, pkt_meta(m), 0);
		assert_int_equal(tcp_seg_parse(m, pkt_meta(m), &s, 1), 0);
		rte_pktmbuf_mtod(m, uint8_t *)[rte_pktmbuf_pkt_len(m) - 1] ^= 0x10;
		assert_int_equal(tcp_seg_parse(m, pkt_meta(m), &s, 1), TCP_SEG_ECSUM);
		assert_int_equal(tcp_seg_parse(m, pkt_meta(m), &s, 0), 0);
		rte_pktmbuf_free(m);
	}
	chain_free(chain);
}

static void
slicing_a_chain_keeps_exactly_the_requested_bytes(void **state)
{
	uint8_t data[2000], out[2000];
	struct rte_mbuf *tail, *m;
	struct tcp_mq q = { 0 };

	(void)state;
	for (unsigned int i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)i;
	m = tcp_chain_slice(chain_of(data, 2000, 300), 450, 1000, &tail);
	assert_non_null(m);
	tcp_mq_append(&q, m);
	assert_int_equal(q.bytes, 1000);
	assert_ptr_equal(q.tail, tail);
	assert_int_equal(tcp_chain_copy(q.head, 0, out, 2000), 1000);
	assert_memory_equal(out, data + 450, 1000);
	tcp_mq_drop_front(&q, 260, NULL);
	assert_int_equal(q.bytes, 740);
	assert_int_equal(tcp_chain_copy(q.head, 0, out, 2000), 740);
	assert_memory_equal(out, data + 710, 740);
	tcp_mq_drop_front(&q, 740, NULL);
	assert_null(q.head);
	assert_null(q.tail);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
}

/* Whole mbufs dropped off a queue within an engine's input burst wait
 * in the engine and go back to the pool together at the burst's end, or
 * when 64 wait; a dropped mbuf that a frame still references only loses
 * that reference; outside a burst a drop frees at once. */
static void
mbufs_dropped_in_a_burst_go_back_at_its_end(void **state)
{
	struct tcp_engine_params p;
	struct tcp_engine *e;
	struct tcp_mq q = { 0 };
	struct rte_mbuf *held;
	uint8_t data[100 * 10];
	unsigned int base;

	(void)state;
	memset(data, 7, sizeof(data));
	wire_params(&p, "dead", NULL);
	e = tcp_engine_create(&p);
	assert_non_null(e);
	base = rte_mempool_in_use_count(test_pool);

	/* 100 mbufs of 10 bytes; a frame holds a second reference on the
	 * first. */
	tcp_mq_append(&q, chain_of(data, sizeof(data), 10));
	held = q.head;
	rte_mbuf_refcnt_update(held, 1);
	assert_int_equal(rte_mempool_in_use_count(test_pool), base + 100);
	tcp_input_burst_begin(e);
	tcp_mq_drop_front(&q, 500, e);
	/* 49 wait (the held one is not free yet); nothing went back. */
	assert_int_equal(e->n_dead, 49);
	assert_int_equal(rte_mempool_in_use_count(test_pool), base + 100);
	tcp_mq_drop_front(&q, 300, e);
	/* The 64th filled the batch: it went back, 15 more wait since. */
	assert_int_equal(e->n_dead, 15);
	assert_int_equal(rte_mempool_in_use_count(test_pool), base + 100 - 64);
	tcp_input_burst_end(e, 0);
	assert_int_equal(e->n_dead, 0);
	assert_int_equal(rte_mempool_in_use_count(test_pool), base + 100 - 79);
	assert_int_equal(rte_mbuf_refcnt_read(held), 1);
	rte_pktmbuf_free(held);
	/* Outside a burst: at once. */
	tcp_mq_drop_front(&q, 200, e);
	assert_null(q.head);
	assert_int_equal(e->n_dead, 0);
	assert_int_equal(rte_mempool_in_use_count(test_pool), base);
	tcp_engine_free(e);
}

/* One mbuf, the received segment's usual shape, takes the inline path
 * of tcp_chain_slice(): for every cut of a 40-byte mbuf (any start, any
 * length, past its end too) it keeps what the walk keeps, or frees the
 * mbuf as the walk does. */
static void
slicing_one_mbuf_keeps_what_the_walk_keeps(void **state)
{
	uint8_t data[40];

	(void)state;
	for (unsigned int i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(3 * i + 1);
	for (uint32_t off = 0; off <= 41; off++)
		for (uint32_t len = 0; len <= 42; len++) {
			struct rte_mbuf *a = chain_of(data, sizeof(data), 64);
			struct rte_mbuf *b = chain_of(data, sizeof(data), 64);
			struct rte_mbuf *ta = NULL, *tb = NULL;
			uint32_t keep = off >= sizeof(data) ? 0 : RTE_MIN(len, (uint32_t)sizeof(data) - off);

			a = tcp_chain_slice(a, off, len, &ta);
			b = tcp_chain_slice_walk(b, off, len, &tb);
			if (keep == 0) {
				assert_null(a);
				assert_null(b);
				continue;
			}
			assert_non_null(a);
			assert_non_null(b);
			assert_ptr_equal(ta, a);
			assert_ptr_equal(tb, b);
			assert_int_equal(a->data_len, keep);
			assert_int_equal(a->pkt_len, keep);
			assert_int_equal(a->nb_segs, 1);
			assert_null(a->next);
			assert_int_equal(b->data_len, keep);
			assert_int_equal(b->pkt_len, keep);
			assert_int_equal(a->data_off, b->data_off);
			assert_memory_equal(rte_pktmbuf_mtod(a, const uint8_t *), data + off, keep);
			rte_pktmbuf_free(a);
			rte_pktmbuf_free(b);
		}
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
}

/* ------------------------------------------------------------------ */
/* Chained frames and kept payload sums                               */

/* RFC 1071 written out: 16-bit big-endian words, an odd last byte
 * padded with zero, end-around carry. Independent of rte_raw_cksum(). */
static uint32_t
ref_sum(uint32_t sum, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

/* Whether frames x and y hold the same bytes; they must be as long. */
static bool
same_frame_bytes(const struct rte_mbuf *x, const struct rte_mbuf *y)
{
	static uint8_t a[2048], b[2048];

	assert_int_equal(rte_pktmbuf_pkt_len(x), rte_pktmbuf_pkt_len(y));
	assert_true(rte_pktmbuf_pkt_len(x) <= sizeof(a));
	assert_int_equal(tcp_chain_copy(x, 0, a, x->pkt_len), x->pkt_len);
	assert_int_equal(tcp_chain_copy(y, 0, b, y->pkt_len), y->pkt_len);
	return memcmp(a, b, x->pkt_len) == 0;
}

/* Whether the frame (any chain) carries a correct TCP checksum, by the
 * reference sum over a linear copy and a pseudo header built by hand. */
static int
ref_tcp_csum_ok(const struct rte_mbuf *m, const struct tcp_endpoints *ep)
{
	static uint8_t f[4096];
	uint8_t ph[40];
	uint32_t len = rte_pktmbuf_pkt_len(m), l3 = ep->family == 4 ? 20 : 40;
	uint32_t l4 = 14 + l3, tl = len - l4, alen = ep->family == 4 ? 4 : 16;

	assert_true(len <= sizeof(f));
	assert_int_equal(tcp_chain_copy(m, 0, f, len), len);
	memset(ph, 0, sizeof(ph));
	memcpy(ph, ep->laddr, alen);
	memcpy(ph + alen, ep->raddr, alen);
	return ref_sum(ref_sum(ref_sum(0, ph, 2 * alen), (const uint8_t[]){
		0, 6, (uint8_t)(tl >> 8), (uint8_t)tl }, 4), f + l4, tl) == 0xffff;
}

static void
fill_random(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

/* Is [off, off + len) exactly one of the pieces sizes[] lays end to end? */
static bool
whole_piece(const uint32_t *sizes, unsigned int n, uint32_t off, uint32_t len)
{
	for (uint32_t i = 0, at = 0; i < n; at += sizes[i++])
		if (at == off && sizes[i] == len)
			return true;
	return false;
}

/* A send queue of odd-sized pieces (333, 1001, 77, 590 bytes); every
 * slice of it, at every parity of offset and length, is built chained
 * and copied: the two frames hold the same bytes, the chained one holds
 * no payload byte of its own (indirect mbufs on the queue's buffers,
 * which count one more reference each while the frame lives), and both
 * checksums are right by an independent computation. */
static void
a_chained_segment_references_the_queue_and_matches_the_copied_one(void **state)
{
	static const uint32_t sizes[] = { 333, 1001, 77, 590 };
	static uint8_t data[2001], a[4096], b[4096];
	const uint32_t slices[][2] = {
		{ 0, 333 }, { 0, 334 }, { 1, 1400 }, { 333, 1001 }, { 332, 1003 },
		{ 700, 1301 }, { 1333, 77 }, { 1334, 667 }, { 1, 1500 }, { 2000, 1 },
	};
	struct rte_mbuf *q = NULL, *t = NULL, *qm[4];
	unsigned int in_use;

	(void)state;
	fill_random(data, sizeof(data), 7);
	for (uint32_t i = 0, off = 0; i < RTE_DIM(sizes); off += sizes[i++]) {
		qm[i] = chain_of(data + off, sizes[i], sizes[i]);
		if (t != NULL)
			t->next = qm[i];
		else
			q = qm[i];
		t = qm[i];
	}
	in_use = rte_mempool_in_use_count(test_pool);
	for (int fam = 4; fam <= 6; fam += 2)
		for (unsigned int k = 0; k < RTE_DIM(slices); k++) {
			struct tcp_endpoints ep;
			struct tcp_seg_out o = { .seq = 1, .ack = 2, .wnd = 100,
						 .flags = TCP_FL_ACK, .opts = TCP_SO_TS,
						 .tsval = 3, .tsecr = 4 };
			uint32_t off = slices[k][0], len = slices[k][1];
			struct rte_mbuf *c, *p;
			struct tcp_seg_in s;
			uint32_t hl = 14 + (fam == 4 ? 20 : 40) + 32;

			if (fam == 4)
				wire_ep_v4(&ep);
			else
				wire_ep_v6(&ep);
			c = tcp_seg_build_ex(test_pool, &ep, &o, q, off, len, NULL, true);
			p = tcp_seg_build_ex(test_pool, &ep, &o, q, off, len, NULL, false);
			assert_non_null(c);
			assert_non_null(p);
			assert_int_equal(p->nb_segs, 1);
			assert_int_equal(rte_pktmbuf_pkt_len(c), hl + len);
			assert_int_equal(rte_pktmbuf_pkt_len(p), hl + len);
			if (whole_piece(sizes, RTE_DIM(sizes), off, len)) {
				/* One whole queue mbuf: the frame is built in
				 * place, its headers in that mbuf's headroom. */
				assert_int_equal(c->nb_segs, 1);
				assert_true(RTE_MBUF_CLONED(c));
				assert_int_equal(rte_pktmbuf_data_len(c), hl + len);
				assert_int_equal(rte_mbuf_refcnt_read(
					rte_mbuf_from_indirect(c)), 2);
			} else {
				assert_true(c->nb_segs >= 2);
				assert_int_equal(rte_pktmbuf_data_len(c), hl);
			}
			for (struct rte_mbuf *x = c->next; x != NULL; x = x->next) {
				struct rte_mbuf *d = rte_mbuf_from_indirect(x);

				assert_true(RTE_MBUF_CLONED(x));
				assert_int_equal(rte_mbuf_refcnt_read(d), 2);
			}
			assert_int_equal(tcp_chain_copy(c, 0, a, hl + len), hl + len);
			assert_int_equal(tcp_chain_copy(p, 0, b, hl + len), hl + len);
			assert_memory_equal(a, b, hl + len);
			assert_memory_equal(a + hl, data + off, len);
			assert_true(ref_tcp_csum_ok(c, &ep));
			assert_true(ref_tcp_csum_ok(p, &ep));
			/* The engine's own check of a received chain agrees. */
			assert_int_equal(pkt_parse(c, pkt_meta(c), 0), PKT_ERR_NONE);
			assert_int_equal(tcp_seg_parse(c, pkt_meta(c), &s, 1), 0);
			assert_int_equal(s.len, len);
			rte_pktmbuf_free(c);
			rte_pktmbuf_free(p);
			for (unsigned int i = 0; i < RTE_DIM(qm); i++)
				assert_int_equal(rte_mbuf_refcnt_read(qm[i]), 1);
			assert_int_equal(rte_mempool_in_use_count(test_pool), in_use);
		}
	chain_free(q);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
}

/* The bytes of the frame of q's first len bytes, built by copying the
 * payload: what a frame built in place must equal. */
static void
copied_frame(const struct tcp_endpoints *ep, const struct tcp_seg_out *o,
	     struct rte_mbuf *q, uint32_t len, uint32_t hl, uint8_t *ref)
{
	struct rte_mbuf *pa = tcp_seg_build_ex(test_pool, ep, o, q, 0, len, NULL, false);

	assert_non_null(pa);
	assert_int_equal(tcp_chain_copy(pa, 0, ref, hl + len), hl + len);
	rte_pktmbuf_free(pa);
}

/* The frame of d's first len bytes is not built in place: it takes a
 * header mbuf and a chain, with a right checksum. */
static void
built_with_a_header_mbuf(const struct tcp_endpoints *ep, const struct tcp_seg_out *o,
			 struct rte_mbuf *d, uint32_t len)
{
	struct rte_mbuf *b = tcp_seg_build_ex(test_pool, ep, o, d, 0, len, NULL, true);

	assert_non_null(b);
	assert_true(b->nb_segs >= 2);
	assert_true(ref_tcp_csum_ok(b, ep));
	rte_pktmbuf_free(b);
}

/* A segment that is one whole mbuf of the queue is built in place: an
 * indirect mbuf of it, its headers in that mbuf's headroom. While that
 * frame lives (the buffer has a second reference) the same bytes sent
 * again, say a retransmission with other sequence and timestamp fields,
 * must not write the headroom the first frame still reads: it gets a
 * header mbuf of its own. Once the first frame is freed, the headroom
 * is free again. Every frame keeps its own bytes and checksum. */
static void
a_frame_built_in_place_keeps_its_headers_while_the_bytes_go_again(void **state)
{
	static uint8_t data[1448], ref[2048], got[2048];
	struct tcp_endpoints ep;
	struct tcp_seg_out o = { .seq = 1, .ack = 2, .wnd = 100,
				 .flags = TCP_FL_ACK, .opts = TCP_SO_TS,
				 .tsval = 3, .tsecr = 4 };
	struct rte_mbuf *q, *a, *b, *c;
	const uint32_t hl = 14 + 20 + 32, len = sizeof(data);

	(void)state;
	fill_random(data, sizeof(data), 11);
	wire_ep_v4(&ep);
	q = chain_of(data, len, len);
	/* The expected bytes of the first frame, copied. */
	copied_frame(&ep, &o, q, len, hl, ref);

	a = tcp_seg_build_ex(test_pool, &ep, &o, q, 0, len, NULL, true);
	assert_non_null(a);
	assert_int_equal(a->nb_segs, 1);
	assert_true(RTE_MBUF_CLONED(a));
	assert_int_equal(rte_mbuf_refcnt_read(q), 2);
	/* The same bytes again while a lives: a header mbuf and a chain. */
	o.seq = 1000;
	o.tsval = 99;
	b = tcp_seg_build_ex(test_pool, &ep, &o, q, 0, len, NULL, true);
	assert_non_null(b);
	assert_true(b->nb_segs >= 2);
	assert_int_equal(rte_pktmbuf_data_len(b), hl);
	assert_int_equal(tcp_chain_copy(a, 0, got, hl + len), hl + len);
	assert_memory_equal(got, ref, hl + len);
	assert_true(ref_tcp_csum_ok(a, &ep));
	assert_true(ref_tcp_csum_ok(b, &ep));
	/* a gone: the headroom is free for the next one. */
	rte_pktmbuf_free(a);
	assert_int_equal(rte_mbuf_refcnt_read(q), 2); /* b's piece */
	rte_pktmbuf_free(b);
	assert_int_equal(rte_mbuf_refcnt_read(q), 1);
	c = tcp_seg_build_ex(test_pool, &ep, &o, q, 0, len, NULL, true);
	assert_non_null(c);
	assert_int_equal(c->nb_segs, 1);
	assert_true(RTE_MBUF_CLONED(c));
	assert_true(ref_tcp_csum_ok(c, &ep));
	assert_int_equal(pkt_parse(c, pkt_meta(c), 0), PKT_ERR_NONE);
	/* The queue's own view of its mbuf did not move. */
	assert_int_equal(rte_pktmbuf_data_len(q), len);
	assert_memory_equal(rte_pktmbuf_mtod(q, uint8_t *), data, len);
	rte_pktmbuf_free(c);
	/* Too little headroom for the headers: a header mbuf. */
	rte_pktmbuf_prepend(q, (uint16_t)(rte_pktmbuf_headroom(q) - hl + 1));
	rte_pktmbuf_adj(q, 0);
	assert_true(rte_pktmbuf_headroom(q) < hl);
	built_with_a_header_mbuf(&ep, &o, q, rte_pktmbuf_data_len(q));
	chain_free(q);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
}

/* A clone of another queue's mbuf (an MPTCP subflow's chunk of the
 * meta-connection's send queue, mptcp_sq_clone()) is built in place
 * too, on its first transmission: the buffer then has exactly the two
 * references of its owner and the clone. Not while a frame of it lives
 * (three references), not on a retransmission (the owner may have let
 * go, so two references may be the clone's and a frame's), not with a
 * second clone of the same bytes, and not for a clone that starts past
 * the buffer's own data (the bytes before it are the owner's). */
static void
a_clone_of_a_queue_s_mbuf_is_built_in_place_on_its_first_transmission(void **state)
{
	static uint8_t data[1448], ref[2048], got[2048];
	struct tcp_endpoints ep;
	struct tcp_seg_out o = { .seq = 1, .ack = 2, .wnd = 100,
				 .flags = TCP_FL_ACK, .opts = TCP_SO_TS,
				 .tsval = 3, .tsecr = 4, .fresh = 1 };
	struct rte_mbuf *q, *d, *d2, *a;
	const uint32_t hl = 14 + 20 + 32, len = sizeof(data);

	(void)state;
	fill_random(data, sizeof(data), 12);
	wire_ep_v4(&ep);
	q = chain_of(data, len, len);   /* the owner's */
	d = rte_pktmbuf_alloc(test_pool);       /* the clone */
	assert_non_null(d);
	rte_pktmbuf_attach(d, q);
	assert_int_equal(rte_mbuf_refcnt_read(q), 2);
	copied_frame(&ep, &o, q, len, hl, ref);

	a = tcp_seg_build_ex(test_pool, &ep, &o, d, 0, len, NULL, true);
	assert_non_null(a);
	assert_int_equal(a->nb_segs, 1);
	assert_true(RTE_MBUF_CLONED(a));
	assert_int_equal(rte_mbuf_refcnt_read(q), 3);
	assert_int_equal(tcp_chain_copy(a, 0, got, hl + len), hl + len);
	assert_memory_equal(got, ref, hl + len);
	assert_true(ref_tcp_csum_ok(a, &ep));
	/* While a lives, and on a retransmission after it: header mbufs. */
	built_with_a_header_mbuf(&ep, &o, d, len);
	rte_pktmbuf_free(a);
	assert_int_equal(rte_mbuf_refcnt_read(q), 2);
	o.fresh = 0;
	built_with_a_header_mbuf(&ep, &o, d, len);
	o.fresh = 1;
	/* A second clone of the same bytes (a reinjection). */
	d2 = rte_pktmbuf_alloc(test_pool);
	assert_non_null(d2);
	rte_pktmbuf_attach(d2, q);
	built_with_a_header_mbuf(&ep, &o, d, len);
	rte_pktmbuf_free(d2);
	/* A clone of the tail of the owner's bytes. */
	rte_pktmbuf_adj(d, 100);
	built_with_a_header_mbuf(&ep, &o, d, len - 100);
	/* The owner's view of its bytes did not move. */
	assert_int_equal(rte_pktmbuf_data_len(q), len);
	assert_memory_equal(rte_pktmbuf_mtod(q, uint8_t *), data, len);
	rte_pktmbuf_free(d);
	chain_free(q);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
}

/* A received frame, as the engine keeps it: the payload alone. */
static struct rte_mbuf *
received_payload(const struct tcp_psum_reg *ps, const uint8_t *data, uint32_t len)
{
	struct tcp_endpoints ep;
	struct tcp_seg_out o = { .seq = 1, .ack = 2, .wnd = 100, .flags = TCP_FL_ACK };
	struct rte_mbuf *src = chain_of(data, len, len), *m;
	struct tcp_seg_in s;

	wire_ep_v4(&ep);
	m = tcp_seg_build(test_pool, &ep, &o, src, 0, len);
	chain_free(src);
	assert_non_null(m);
	assert_int_equal(pkt_parse(m, pkt_meta(m), 0), PKT_ERR_NONE);
	assert_int_equal(tcp_seg_parse_psum(m, pkt_meta(m), &s, 1, ps), 0);
	assert_true(m->ol_flags & ps->flag);
	rte_pktmbuf_adj(m, s.payload_off);
	assert_int_equal(m->data_len, len);
	return m;
}

/* A received mbuf whose front was acknowledged and cut off (adj) still
 * has a kept sum that covers the cut bytes, and piece_sum() reads them
 * back to take them out: its frame must not be built in place, where
 * the headers would overwrite them. An uncut one is built in place, and
 * built again in place, from its kept sum, with the previous frame's
 * headers in its headroom. Every checksum is right by an independent
 * computation. */
static void
in_place_never_writes_over_bytes_a_kept_sum_still_covers(void **state)
{
	static uint8_t d1[1001];
	struct tcp_psum_reg ps;
	struct tcp_endpoints ep;
	struct tcp_seg_out o = { .seq = 10, .ack = 20, .wnd = 300, .flags = TCP_FL_ACK,
				 .opts = TCP_SO_TS, .tsval = 5, .tsecr = 6 };
	struct rte_mbuf *r, *m;

	(void)state;
	assert_int_equal(tcp_psum_register(&ps), 0);
	fill_random(d1, sizeof(d1), 3);
	wire_ep_v4(&ep);
	/* Uncut: in place, twice; the second after the first is gone. */
	r = received_payload(&ps, d1, sizeof(d1));
	for (int i = 0; i < 2; i++) {
		o.seq = 10 + (uint32_t)i;
		m = tcp_seg_build_ex(test_pool, &ep, &o, r, 0, sizeof(d1), &ps, true);
		assert_non_null(m);
		assert_int_equal(m->nb_segs, 1);
		assert_true(RTE_MBUF_CLONED(m));
		assert_true(ref_tcp_csum_ok(m, &ep));
		rte_pktmbuf_free(m);
	}
	/* 100 bytes acknowledged: the rest goes with a header mbuf. */
	rte_pktmbuf_adj(r, 100);
	m = tcp_seg_build_ex(test_pool, &ep, &o, r, 0, sizeof(d1) - 100, &ps, true);
	assert_non_null(m);
	assert_true(ref_tcp_csum_ok(m, &ep));
	assert_true(m->nb_segs >= 2);
	rte_pktmbuf_free(m);
	assert_memory_equal(rte_pktmbuf_mtod(r, uint8_t *), d1 + 100, sizeof(d1) - 100);
	rte_pktmbuf_free(r);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
}

/* Two received segments of odd lengths (1001 and 445 bytes) sent on in
 * segments cut anywhere: whole, across both (the second then starts at
 * an odd offset, so its kept sum adds byte-swapped), or a part of one
 * (the kept sum less what it covers before and after the part, when
 * that is shorter). Every frame's checksum is right by an independent
 * computation. Poisoned, the kept sum spoils the frames that use it (so
 * it was used) and not one whose part is cheaper to sum directly. */
static void
a_kept_payload_sum_is_used_wherever_it_covers_the_piece(void **state)
{
	static uint8_t d1[1001], d2[445];
	static const uint32_t cuts[][2] = {
		{ 0, 1446 }, { 1, 1445 }, { 0, 1001 }, { 0, 1000 }, { 1, 1000 },
		{ 3, 997 }, { 500, 946 }, { 999, 447 }, { 1000, 446 }, { 1001, 445 },
		{ 1002, 443 }, { 700, 300 }, { 1200, 101 }, { 2, 1443 },
	};
	struct tcp_psum_reg ps;
	struct tcp_endpoints ep;
	struct tcp_seg_out o = { .seq = 10, .ack = 20, .wnd = 300, .flags = TCP_FL_ACK };
	struct rte_mbuf *r1, *r2, *m;
	struct tcp_psum *c1;

	(void)state;
	assert_int_equal(tcp_psum_register(&ps), 0);
	fill_random(d1, sizeof(d1), 1);
	fill_random(d2, sizeof(d2), 2);
	r1 = received_payload(&ps, d1, sizeof(d1));
	r2 = received_payload(&ps, d2, sizeof(d2));
	r1->next = r2;
	wire_ep_v6(&ep);
	for (int chain = 0; chain <= 1; chain++)
		for (unsigned int k = 0; k < RTE_DIM(cuts); k++) {
			m = tcp_seg_build_ex(test_pool, &ep, &o, r1, cuts[k][0], cuts[k][1],
					     &ps, chain);
			assert_non_null(m);
			if (!ref_tcp_csum_ok(m, &ep))
				fail_msg("chain %d, %u bytes from %u: bad checksum", chain,
					 cuts[k][1], cuts[k][0]);
			rte_pktmbuf_free(m);
		}
	c1 = RTE_MBUF_DYNFIELD(r1, ps.off, struct tcp_psum *);
	c1->sum = (uint16_t)(c1->sum + 1);
	m = tcp_seg_build_ex(test_pool, &ep, &o, r1, 0, 1001, &ps, true);
	assert_false(ref_tcp_csum_ok(m, &ep));
	rte_pktmbuf_free(m);
	m = tcp_seg_build_ex(test_pool, &ep, &o, r1, 1, 999, &ps, true);
	assert_false(ref_tcp_csum_ok(m, &ep));
	rte_pktmbuf_free(m);
	m = tcp_seg_build_ex(test_pool, &ep, &o, r1, 300, 400, &ps, true);
	assert_true(ref_tcp_csum_ok(m, &ep));
	rte_pktmbuf_free(m);
	r1->next = NULL;
	rte_pktmbuf_free(r1);
	rte_pktmbuf_free(r2);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
}

/* rte_raw_cksum_mbuf() of DPDK 22.11 truncates a segment's unreduced
 * sum before it byte-swaps it; the engine's own walk does not. A chain
 * whose second piece starts at an odd offset and sums past 16 bits. */
static void
a_chain_with_an_odd_piece_sums_like_its_linear_copy(void **state)
{
	static uint8_t data[1500];
	uint16_t got;

	(void)state;
	memset(data, 0xff, sizeof(data));
	for (uint32_t first = 1; first < 40; first += 6) {
		struct rte_mbuf *q = chain_of(data, first, first);

		q->next = chain_of(data + first, sizeof(data) - first, sizeof(data));
		assert_int_equal(tcp_chain_sum(q, 0, sizeof(data), &got), 0);
		assert_int_equal(ref_sum(0, data, sizeof(data)),
				 rte_be_to_cpu_16(got) == 0 ? 0xffff : rte_be_to_cpu_16(got));
		fill_random(data, sizeof(data), first);
		chain_free(q);
		q = chain_of(data, first, first);
		q->next = chain_of(data + first, sizeof(data) - first, sizeof(data));
		assert_int_equal(tcp_chain_sum(q, 0, sizeof(data), &got), 0);
		assert_int_equal(ref_sum(0, data, sizeof(data)), rte_be_to_cpu_16(got));
		assert_int_equal(tcp_chain_sum(q, 0, sizeof(data) + 1, &got), -1);
		chain_free(q);
		memset(data, 0xff, sizeof(data));
	}
}

/* The engine's 64-bit sum gives rte_raw_cksum()'s value, bit for bit,
 * for every length and every alignment of the first byte: random bytes,
 * all ones (sums that wrap many times) and all zeros (the one 0). */
static void
the_64_bit_sum_equals_rte_raw_cksum_at_every_length_and_alignment(void **state)
{
	static uint8_t buf[2100 + 8];

	(void)state;
	for (int fill = 0; fill < 3; fill++) {
		if (fill == 0)
			fill_random(buf, sizeof(buf), 21);
		else
			memset(buf, fill == 1 ? 0xff : 0, sizeof(buf));
		for (uint32_t align = 0; align < 8; align++)
			for (uint32_t len = 0; len <= 2100; len++) {
				uint16_t want = rte_raw_cksum(buf + align, len);

				if (tcp_raw_sum(buf + align, len) != want ||
				    tcp_raw_sum_scalar(buf + align, len) != want)
					fail_msg("fill %d align %u len %u: %#x and %#x, want %#x",
						 fill, align, len, tcp_raw_sum(buf + align, len),
						 tcp_raw_sum_scalar(buf + align, len), want);
			}
	}
}

/* Long runs: the vector sum's lanes are added up every 256 KiB (a
 * larger chunk overflows them, and this fails), and a 64 KiB frame of
 * all ones wraps the most. Checked against a sum of 16-bit words done
 * one at a time. */
static void
the_sum_of_long_runs_is_exact(void **state)
{
	static const uint32_t lens[] = { 256, 65535, 65536, 1u << 20,
					 (1u << 20) + 32, (3u << 20) + 77 };
	const uint32_t cap = (3u << 20) + 77 + 8;
	uint8_t *buf = malloc(cap);

	(void)state;
	assert_non_null(buf);
	for (int fill = 0; fill < 2; fill++) {
		if (fill == 0)
			fill_random(buf, cap, 7);
		else
			memset(buf, 0xff, cap);
		for (size_t i = 0; i < RTE_DIM(lens); i++)
			for (uint32_t align = 0; align < 2; align++) {
				const uint8_t *p = buf + align;
				uint64_t s = 0;
				uint16_t w;

				for (uint32_t k = 0; k + 1 < lens[i]; k += 2) {
					memcpy(&w, p + k, 2);
					s += w;
				}
				if (lens[i] & 1)
					s += p[lens[i] - 1];
				while (s >> 16)
					s = (s & 0xffff) + (s >> 16);
				if (tcp_raw_sum(p, lens[i]) != s ||
				    tcp_raw_sum_scalar(p, lens[i]) != s)
					fail_msg("fill %d len %u align %u: %#x and %#x, want %#x",
						 fill, lens[i], align, tcp_raw_sum(p, lens[i]),
						 tcp_raw_sum_scalar(p, lens[i]), (unsigned)s);
			}
	}
	free(buf);
}

/* The stages after the engine read pkt_meta without parsing its frames
 * again: what the builder writes must be what pkt_parse() would, over
 * both families, every tag layout, every option layout, with and
 * without payload, chained or copied. */
static void
every_built_frame_carries_the_metadata_pkt_parse_gives_it(void **state)
{
	static const uint16_t tpids[] = { 0, RTE_ETHER_TYPE_QINQ, RTE_ETHER_TYPE_QINQ1 };
	static uint8_t data[3000];
	struct rte_mbuf *q;
	unsigned int n = 0;

	(void)state;
	fill_random(data, sizeof(data), 5);
	q = chain_of(data, sizeof(data), 1000);
	for (int fam = 4; fam <= 6; fam += 2)
	for (unsigned int tags = 0; tags <= 2; tags++)
	for (unsigned int tp = 0; tp < RTE_DIM(tpids); tp++)
	for (unsigned int opt = 0; opt < 4; opt++)
	for (unsigned int len = 0; len <= 1500; len += 1500)
	for (int chain = 0; chain <= 1; chain++) {
		struct tcp_endpoints ep;
		struct tcp_seg_out o = { 0 };
		struct pkt_meta built, parsed;
		struct rte_mbuf *m;

		if (fam == 4)
			wire_ep_v4(&ep);
		else
			wire_ep_v6(&ep);
		ep.port = 3;
		ep.vlan_count = (uint8_t)tags;
		ep.vlan_tpid[0] = tpids[tp];
		ep.vlan_tci[0] = 0x123;
		ep.vlan_tci[1] = 0xfed;
		o.seq = 1000;
		o.ack = 2000;
		o.wnd = 1000;
		o.flags = TCP_FL_ACK | (len ? TCP_FL_PSH : 0);
		if (opt == 1 || opt == 2) {
			o.opts = TCP_SO_TS;
			o.tsval = 7;
			o.tsecr = 8;
		}
		if (opt == 2) {
			o.opts |= TCP_SO_SACK;
			o.nsack = 2;
			o.sack[0].left = 10; o.sack[0].right = 20;
			o.sack[1].left = 30; o.sack[1].right = 40;
		}
		if (opt == 3) {
			o.flags = TCP_FL_SYN;
			o.opts = TCP_SO_MSS | TCP_SO_WS | TCP_SO_SACK_PERM | TCP_SO_TS;
			o.mss = 1400;
			o.ws = 7;
		}
		m = tcp_seg_build_ex(test_pool, &ep, &o, q, 3, len, NULL, chain);
		assert_non_null(m);
		built = *(const struct pkt_meta *)rte_mbuf_to_priv(m);
		assert_int_equal(pkt_parse(m, &parsed, 3), PKT_ERR_NONE);
		if (memcmp(&built, &parsed, offsetof(struct pkt_meta, in_port) + 2) != 0)
			fail_msg("family %d, %u tags (TPID %#x), options %u, %u bytes, chain %d",
				 fam, tags, tpids[tp], opt, len, chain);
		rte_pktmbuf_free(m);
		n++;
	}
	assert_int_equal(n, 2 * 3 * 3 * 4 * 2 * 2);
	chain_free(q);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
}

/* An engine whose frames go straight to a port (TCP_F_TX_NO_META)
 * leaves their metadata alone: no stage would read it. Both ends take
 * their mbufs from a fresh pool whose every pkt_meta holds 0xa5; it
 * hands them out oldest first, so a transfer this short never gets one
 * back that was written. Every frame of A (handshake, data, ACKs, FIN)
 * still holds 0xa5 as the wire takes it; no frame of B, which writes
 * it, does. */
static void
an_engine_that_sends_to_a_port_leaves_the_metadata_unwritten(void **state)
{
	static uint8_t buf[64 * 1024];
	struct rte_mempool *mp;
	struct rte_mbuf *all[4095];
	struct tcp_engine_params pa, pb;
	struct wire *w;
	struct tcp_conn *c;

	(void)state;
	mp = rte_pktmbuf_pool_create("tcp_nometa", RTE_DIM(all), 0, PKT_META_PRIV_SIZE,
				     RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	assert_non_null(mp);
	assert_int_equal(rte_pktmbuf_alloc_bulk(mp, all, RTE_DIM(all)), 0);
	for (unsigned int i = 0; i < RTE_DIM(all); i++)
		memset(pkt_meta(all[i]), 0xa5, sizeof(struct pkt_meta));
	rte_pktmbuf_free_bulk(all, RTE_DIM(all));
	wire_params(&pa, "a", NULL);
	wire_params(&pb, "b", NULL);
	pa.pool = pb.pool = mp;
	pa.flags |= TCP_F_TX_NO_META;
	w = wire_new(&pa, &pb);
	assert_non_null(w);
	w->meta_poison = 0xa5;
	c = wire_connect(w);
	assert_non_null(c);
	assert_non_null(w->app_b.conn);
	fill_random(buf, sizeof(buf), 9);
	assert_int_equal(tcp_send(c, buf, sizeof(buf), w->now), sizeof(buf));
	tcp_shutdown(c, w->now);
	wire_run(w, MS(200));
	assert_int_equal(w->app_b.rx_bytes, sizeof(buf));
	assert_true(w->app_b.rx_hash == fnv1a(FNV_INIT, buf, sizeof(buf)));
	assert_true(w->n_data[1] >= sizeof(buf) / 1460);
	assert_int_equal(w->meta_kept[1], w->sent[1]);
	assert_true(w->sent[0] > 0);
	assert_int_equal(w->meta_kept[0], 0);
	wire_free(w);
	assert_int_equal(rte_mempool_in_use_count(mp), 0);
	rte_mempool_free(mp);
}

/* Endpoints of family fam with addresses, ports and tags from rnd (48
 * bytes), which move every sum's carries; the segment's sequence
 * number and ACK from rnd too. */
static void
random_ep(struct tcp_endpoints *ep, struct tcp_seg_out *o, unsigned int fam,
	  unsigned int tags, uint16_t port, const uint8_t *rnd)
{
	if (fam == 4)
		wire_ep_v4(ep);
	else
		wire_ep_v6(ep);
	memcpy(ep->laddr, rnd, fam == 4 ? 4 : 16);
	memcpy(ep->raddr, rnd + 16, fam == 4 ? 4 : 16);
	memcpy(&ep->lport, rnd + 32, 2);
	memcpy(&ep->rport, rnd + 34, 2);
	ep->port = port;
	ep->vlan_count = (uint8_t)tags;
	memcpy(ep->vlan_tci, rnd + 36, 4);
	memcpy(&o->seq, rnd + 40, 4);
	memcpy(&o->ack, rnd + 44, 4);
}

/* The frames of one output call after its first copy the first one's
 * headers (tcp_seg_build_rep()): byte for byte, in metadata and in
 * their mbuf fields they are the frames tcp_seg_build_tmpl() makes with
 * the same sequence number, flags, hook options and payload, over both
 * families, every tag layout, with and without timestamps, with and
 * without hook options (other bytes than the first frame's, as an MPTCP
 * subflow's DSS has), for payloads of other lengths than the first's.
 * A payload that may not go in place (a frame of it still queued), or
 * hook options of another length than the first frame's, are refused,
 * for the caller to build in full. Hook options of the writing r holds
 * (tcp_seg_out.hopt_gen) are taken from r: the frame after the second
 * one carries the second's, whatever o->hopt points to. */
static void
frames_that_repeat_a_call_s_headers_equal_those_built_in_full(void **state)
{
	static const uint32_t lens[] = { 1, 99, 1000, 1448 };
	static uint8_t data[2][1448];
	const unsigned int cases = 2 * 3 * 2 * RTE_DIM(lens) * 2 * 2;
	unsigned int n = 0;

	(void)state;
	fill_random(data[0], sizeof(data[0]), 31);
	fill_random(data[1], sizeof(data[1]), 32);
	for (unsigned int k = 0; k < cases; k++) {
		unsigned int fam = k % 2 ? 6 : 4, tags = (k / 2) % 3, opt = (k / 6) % 2;
		uint32_t len = lens[(k / 12) % RTE_DIM(lens)];
		bool meta = (k / (12 * RTE_DIM(lens))) % 2;
		bool hook = (k / (24 * RTE_DIM(lens))) % 2;
		struct tcp_endpoints ep;
		struct tcp_hdr_tmpl t;
		struct tcp_seg_rep r;
		struct tcp_seg_out o = { 0 };
		struct rte_mbuf *q1, *q2, *first, *x, *y;
		struct pkt_meta ma, mb;
		uint8_t rnd[48], h1[20], h2[20];

		fill_random(rnd, sizeof(rnd), 200 + k);
		fill_random(h1, sizeof(h1), 400 + k);
		fill_random(h2, sizeof(h2), 600 + k);
		random_ep(&ep, &o, fam, tags, 3, rnd);
		memcpy(&o.wnd, rnd + 38, 2);
		o.flags = TCP_FL_ACK;
		o.fresh = 1;
		o.no_meta = !meta;
		if (opt) {
			o.opts = TCP_SO_TS;
			memcpy(&o.tsval, rnd + 8, 4);
			memcpy(&o.tsecr, rnd + 24, 4);
		}
		if (hook) {
			o.hopt = h1;
			o.hopt_len = sizeof(h1);
		}
		tcp_hdr_tmpl_init(&t, &ep);
		q1 = chain_of(data[0], 1448, 1448);
		q2 = chain_of(data[1], len, len);
		first = tcp_seg_build_tmpl(test_pool, &t, &ep, &o, q1, 0, 1448, NULL, true);
		assert_non_null(first);
		tcp_seg_rep_init(&r, &ep, &o, first);
		assert_true(r.ok);
		o.seq += 1448;
		o.flags = TCP_FL_ACK | TCP_FL_PSH;
		if (hook) {
			/* Hook options of another length: built in full. */
			o.hopt_len = 16;
			assert_null(tcp_seg_build_rep(test_pool, &r, &ep, &o, q2, NULL, hook));
			o.hopt = h2;
			o.hopt_len = sizeof(h2);
			o.hopt_gen++;
		}
		y = tcp_seg_build_rep(test_pool, &r, &ep, &o, q2, NULL, hook);
		assert_non_null(y);
		assert_int_equal(y->nb_segs, 1);
		assert_true(RTE_MBUF_CLONED(y));
		/* A frame of q2 queued: not in place, and not here. */
		assert_null(tcp_seg_build_rep(test_pool, &r, &ep, &o, q2, NULL, hook));
		x = tcp_seg_build_tmpl(test_pool, &t, &ep, &o, q2, 0, len, NULL, true);
		assert_non_null(x);
		if (!same_frame_bytes(x, y))
			fail_msg("family %u, %u tags, options %u, hook %d, %u bytes: frames differ",
				 fam, tags, opt, hook, len);
		assert_int_equal(x->port, y->port);
		assert_int_equal(x->l2_len, y->l2_len);
		assert_int_equal(x->l3_len, y->l3_len);
		assert_int_equal(x->l4_len, y->l4_len);
		assert_int_equal(y->ol_flags, RTE_MBUF_F_INDIRECT);
		assert_int_equal(y->packet_type, 0);
		assert_int_equal(y->vlan_tci, 0);
		if (meta) {
			ma = *(const struct pkt_meta *)rte_mbuf_to_priv(x);
			mb = *(const struct pkt_meta *)rte_mbuf_to_priv(y);
			if (memcmp(&ma, &mb, offsetof(struct pkt_meta, in_port) + 2) != 0)
				fail_msg("family %u, %u tags, options %u, %u bytes: metadata differs",
					 fam, tags, opt, len);
		}
		if (tags == 0)
			assert_true(ref_tcp_csum_ok(y, &ep));
		if (hook) {
			/* The same writing again: r's copy of h2, not h1. */
			struct rte_mbuf *q3 = chain_of(data[0], len, len), *z, *w;

			o.seq += len;
			o.hopt = h1;
			z = tcp_seg_build_rep(test_pool, &r, &ep, &o, q3, NULL, true);
			assert_non_null(z);
			o.hopt = h2;
			w = tcp_seg_build_tmpl(test_pool, &t, &ep, &o, q3, 0, len, NULL, true);
			assert_non_null(w);
			if (!same_frame_bytes(w, z))
				fail_msg("family %u, %u tags, options %u, %u bytes: the kept "
					 "hook options differ", fam, tags, opt, len);
			if (tags == 0)
				assert_true(ref_tcp_csum_ok(z, &ep));
			rte_pktmbuf_free(z);
			rte_pktmbuf_free(w);
			chain_free(q3);
		}
		rte_pktmbuf_free(first);
		rte_pktmbuf_free(x);
		rte_pktmbuf_free(y);
		chain_free(q1);
		chain_free(q2);
		n++;
	}
	assert_int_equal(n, cases);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
}

/* A connection's frames built with its kept header sums and wide
 * stores (tcp_seg_build_tmpl()) are byte for byte and in metadata the
 * frames the endpoints give field by field, whatever the addresses,
 * ports, tags, options, payload length and layout. */
static void
frames_from_the_header_template_equal_those_built_field_by_field(void **state)
{
	static const uint16_t tpids[] = { 0, RTE_ETHER_TYPE_QINQ };
	static const uint32_t lens[] = { 0, 1, 2, 3, 777, 1448, 1500 };
	static const uint8_t hopt[8] = { 30, 8, 0x20, 1, 2, 3, 4, 5 };
	static uint8_t data[3000];
	struct rte_mbuf *q;
	unsigned int n = 0, tmpl = 0;

	(void)state;
	fill_random(data, sizeof(data), 11);
	q = chain_of(data, sizeof(data), 1000);
	for (int fam = 4; fam <= 6; fam += 2)
	for (unsigned int tags = 0; tags <= 2; tags++)
	for (unsigned int tp = 0; tp < RTE_DIM(tpids); tp++)
	for (unsigned int opt = 0; opt < 5; opt++)
	for (unsigned int l = 0; l < RTE_DIM(lens); l++)
	for (int chain = 0; chain <= 1; chain++)
	for (unsigned int r = 0; r < 8; r++) {
		struct tcp_endpoints ep;
		struct tcp_hdr_tmpl t;
		struct tcp_seg_out o = { 0 };
		struct pkt_meta ma, mb;
		struct rte_mbuf *x, *y;
		uint8_t rnd[48];
		uint32_t len = lens[l];

		fill_random(rnd, sizeof(rnd), 100 + n);
		random_ep(&ep, &o, fam, tags, 1, rnd);
		ep.vlan_tpid[0] = tpids[tp];
		memcpy(&o.wnd, rnd + 36, 2);
		o.flags = TCP_FL_ACK | (len ? TCP_FL_PSH : 0);
		if (opt >= 1) {
			o.opts = TCP_SO_TS;
			memcpy(&o.tsval, rnd + 8, 4);
			memcpy(&o.tsecr, rnd + 24, 4);
		}
		if (opt == 2) {
			o.opts |= TCP_SO_SACK;
			o.nsack = 2;
			o.sack[0].left = o.ack + 10; o.sack[0].right = o.ack + 20;
			o.sack[1].left = o.ack + 30; o.sack[1].right = o.ack + 40;
		}
		if (opt == 3) {
			o.flags = TCP_FL_SYN | TCP_FL_ACK;
			o.opts |= TCP_SO_MSS | TCP_SO_WS | TCP_SO_SACK_PERM;
			o.mss = 1400;
			o.ws = 7;
		}
		if (opt == 4) {
			o.hopt = hopt;
			o.hopt_len = sizeof(hopt);
		}
		tcp_hdr_tmpl_init(&t, &ep);
		tmpl += t.ok != 0;
		x = tcp_seg_build_ex(test_pool, &ep, &o, q, 3, len, NULL, chain);
		y = tcp_seg_build_tmpl(test_pool, &t, &ep, &o, q, 3, len, NULL, chain);
		assert_non_null(x);
		assert_non_null(y);
		assert_int_equal(x->nb_segs, y->nb_segs);
		ma = *(const struct pkt_meta *)rte_mbuf_to_priv(x);
		mb = *(const struct pkt_meta *)rte_mbuf_to_priv(y);
		if (!same_frame_bytes(x, y) ||
		    memcmp(&ma, &mb, offsetof(struct pkt_meta, in_port) + 2) != 0)
			fail_msg("family %d, %u tags (TPID %#x), options %u, %u bytes, chain %d, "
				 "endpoints %u", fam, tags, tpids[tp], opt, len, chain, r);
		if (tags == 0) /* the reference reads an untagged frame */
			assert_true(ref_tcp_csum_ok(y, &ep));
		rte_pktmbuf_free(x);
		rte_pktmbuf_free(y);
		n++;
	}
	assert_int_equal(n, 2 * 3 * 2 * 5 * RTE_DIM(lens) * 2 * 8);
	assert_int_equal(tmpl, n);
	chain_free(q);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
}

/* A pure ACK with timestamps (0x01020304, echoing 0xfffefdfc), the
 * segment the timestamp tests build. */
static void
ack_with_ts(struct tcp_seg_out *o)
{
	o->seq = 5;
	o->ack = 6;
	o->flags = TCP_FL_ACK;
	o->wnd = 77;
	o->opts = TCP_SO_TS;
	o->tsval = 0x01020304;
	o->tsecr = 0xfffefdfc;
}

/* A segment whose options are exactly NOP NOP TS is read through the
 * parser's shape flag, without the option walk: the same fields as the
 * walk gives. */
static void
timestamps_read_through_the_shape_flag_match_the_option_walk(void **state)
{
	struct tcp_endpoints ep;
	struct tcp_seg_out o = { 0 };
	struct tcp_seg_in fast, walk;
	struct pkt_meta meta;
	struct rte_mbuf *m;

	(void)state;
	wire_ep_v6(&ep);
	ack_with_ts(&o);
	m = tcp_seg_build(test_pool, &ep, &o, NULL, 0, 0);
	assert_non_null(m);
	assert_int_equal(pkt_parse(m, &meta, 0), PKT_ERR_NONE);
	assert_true(meta.flags & PKT_F_TCP_TSOPT);
	assert_int_equal(tcp_seg_parse(m, &meta, &fast, 1), 0);
	meta.flags &= (uint16_t)~PKT_F_TCP_TSOPT;
	assert_int_equal(tcp_seg_parse(m, &meta, &walk, 1), 0);
	assert_memory_equal(&fast, &walk, offsetof(struct tcp_seg_in, sack));
	assert_int_equal(fast.opts, TCP_SO_TS);
	assert_int_equal(fast.tsval, 0x01020304);
	assert_int_equal(fast.tsecr, 0xfffefdfc);
	rte_pktmbuf_free(m);
}

/* NOP NOP TS followed by more options (an MPTCP subflow's DSS on every
 * segment) is read without walking the first twelve bytes: the same
 * fields as the walk over the same options in another order, and what
 * follows is still walked, so a bad option there still makes the
 * segment malformed. */
static void
timestamps_before_other_options_read_as_the_walk_reads_them(void **state)
{
	static const uint8_t dss[8] = { 30, 8, 0x20, 0x01, 0xde, 0xad, 0xbe, 0xef };
	struct tcp_endpoints ep;
	struct tcp_seg_out o = { 0 };
	struct tcp_seg_in fast, walk;
	struct pkt_meta meta;
	struct rte_mbuf *m;
	uint8_t *opt, ts[12];

	(void)state;
	wire_ep_v4(&ep);
	ack_with_ts(&o);
	o.hopt = dss;
	o.hopt_len = sizeof(dss);
	m = tcp_seg_build(test_pool, &ep, &o, NULL, 0, 0);
	assert_non_null(m);
	assert_int_equal(pkt_parse(m, &meta, 0), PKT_ERR_NONE);
	assert_false(meta.flags & PKT_F_TCP_TSOPT);
	opt = rte_pktmbuf_mtod_offset(m, uint8_t *, meta.l4_off + 20);
	assert_int_equal(opt[0], 1);
	assert_int_equal(opt[2], 8);
	assert_int_equal(tcp_seg_parse(m, &meta, &fast, 1), 0);
	assert_int_equal(fast.opts, TCP_SO_TS);
	assert_int_equal(fast.tsval, 0x01020304);
	assert_int_equal(fast.tsecr, 0xfffefdfc);
	assert_int_equal(fast.xo_n, 1);
	assert_int_equal(fast.xo_kind, 30);
	assert_int_equal(fast.xo_off, 32);
	/* The DSS first, then NOP NOP TS: walked from the start. */
	memcpy(ts, opt, sizeof(ts));
	memcpy(opt, dss, sizeof(dss));
	memcpy(opt + sizeof(dss), ts, sizeof(ts));
	assert_int_equal(tcp_seg_parse(m, &meta, &walk, 0), 0);
	assert_int_equal(walk.opts, fast.opts);
	assert_int_equal(walk.tsval, fast.tsval);
	assert_int_equal(walk.tsecr, fast.tsecr);
	assert_int_equal(walk.xo_n, fast.xo_n);
	assert_int_equal(walk.xo_kind, fast.xo_kind);
	assert_int_equal(walk.xo_off, 20);
	/* Back in the first order, with the DSS's length past the header. */
	memcpy(opt, ts, sizeof(ts));
	memcpy(opt + sizeof(ts), dss, sizeof(dss));
	opt[sizeof(ts) + 1] = 20;
	assert_int_equal(tcp_seg_parse(m, &meta, &walk, 0), TCP_SEG_EMALFORMED);
	rte_pktmbuf_free(m);
}

static void
siphash24_matches_the_reference_vectors(void **state)
{
	uint8_t key[16], msg[64];

	(void)state;
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 64; i++)
		msg[i] = (uint8_t)i;
	/* Appendix A of the SipHash paper: key 00..0f, message 00..(n-1). */
	assert_true(tcp_siphash24(key, msg, 0) == UINT64_C(0x726fdb47dd0e0e31));
	assert_true(tcp_siphash24(key, msg, 15) == UINT64_C(0xa129ca6149be45e5));
}

static void
isns_depend_on_key_and_tuple_and_advance_every_4us(void **state)
{
	struct tcp_engine_params p;
	struct tcp_engine *e1, *e2;
	struct tcp_key k = { 0 };
	uint32_t a, b;

	(void)state;
	wire_params(&p, "isn1", NULL);
	e1 = tcp_engine_create(&p);
	p.name = "isn2";
	p.isn_key[0] ^= 1;
	e2 = tcp_engine_create(&p);
	assert_non_null(e1);
	assert_non_null(e2);
	k.family = 4;
	k.lport = 1;
	k.rport = 2;
	a = tcp_isn(e1, &k);
	assert_int_equal(tcp_isn(e1, &k), a);
	assert_int_not_equal(tcp_isn(e2, &k), a);
	k.rport = 3;
	b = tcp_isn(e1, &k);
	assert_int_not_equal(b, a);
	tcp_timers_run(e1, US(400));
	assert_int_equal(tcp_isn(e1, &k), b + 100);
	tcp_engine_free(e1);
	tcp_engine_free(e2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_syn_with_every_option_parses_back_identically_over_ipv4),
		cmocka_unit_test(a_data_segment_copies_payload_across_mbuf_boundaries_over_ipv6),
		cmocka_unit_test(a_flipped_payload_bit_fails_the_checksum),
		cmocka_unit_test(slicing_a_chain_keeps_exactly_the_requested_bytes),
		cmocka_unit_test(mbufs_dropped_in_a_burst_go_back_at_its_end),
		cmocka_unit_test(slicing_one_mbuf_keeps_what_the_walk_keeps),
		cmocka_unit_test(a_chained_segment_references_the_queue_and_matches_the_copied_one),
		cmocka_unit_test(a_frame_built_in_place_keeps_its_headers_while_the_bytes_go_again),
		cmocka_unit_test(a_clone_of_a_queue_s_mbuf_is_built_in_place_on_its_first_transmission),
		cmocka_unit_test(a_kept_payload_sum_is_used_wherever_it_covers_the_piece),
		cmocka_unit_test(in_place_never_writes_over_bytes_a_kept_sum_still_covers),
		cmocka_unit_test(a_chain_with_an_odd_piece_sums_like_its_linear_copy),
		cmocka_unit_test(the_64_bit_sum_equals_rte_raw_cksum_at_every_length_and_alignment),
		cmocka_unit_test(the_sum_of_long_runs_is_exact),
		cmocka_unit_test(every_built_frame_carries_the_metadata_pkt_parse_gives_it),
		cmocka_unit_test(frames_from_the_header_template_equal_those_built_field_by_field),
		cmocka_unit_test(frames_that_repeat_a_call_s_headers_equal_those_built_in_full),
		cmocka_unit_test(an_engine_that_sends_to_a_port_leaves_the_metadata_unwritten),
		cmocka_unit_test(timestamps_read_through_the_shape_flag_match_the_option_walk),
		cmocka_unit_test(timestamps_before_other_options_read_as_the_walk_reads_them),
		cmocka_unit_test(siphash24_matches_the_reference_vectors),
		cmocka_unit_test(isns_depend_on_key_and_tuple_and_advance_every_4us),
	};

	if (test_eal_init("seg") != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
