/* SPDX-License-Identifier: BSD-3-Clause */
/* Segment I/O: frames built by the engine parse back to what was asked,
 * with valid checksums, over IPv4 and IPv6; SipHash-2-4 and ISNs. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

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
	tcp_mq_drop_front(&q, 260);
	assert_int_equal(q.bytes, 740);
	assert_int_equal(tcp_chain_copy(q.head, 0, out, 2000), 740);
	assert_memory_equal(out, data + 710, 740);
	tcp_mq_drop_front(&q, 740);
	assert_null(q.head);
	assert_null(q.tail);
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
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
		cmocka_unit_test(siphash24_matches_the_reference_vectors),
		cmocka_unit_test(isns_depend_on_key_and_tuple_and_advance_every_4us),
	};

	if (test_eal_init("seg") != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
