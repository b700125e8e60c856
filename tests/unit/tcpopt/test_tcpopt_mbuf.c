/* SPDX-License-Identifier: BSD-3-Clause */
/* The mbuf entry points: tcpopt_process_mbuf() on frames parsed by
 * pkt_parse(), and tcpopt_burst() compacting and freeing drops. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "pkt.h"
#include "tcpopt.h"
#include "seg.h"
#include "eal_pool.h"

static const uint8_t linux_syn[20] = {
	2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0x10, 0, 0, 0, 0, 0, 1, 3, 3, 7,
};

/* An mbuf with its private area and data room in one static block, so
 * most tests need no EAL and no mempool. */
struct fake_mbuf {
	struct rte_mbuf m;
	uint8_t priv[PKT_META_PRIV_SIZE];
	uint8_t room[RTE_PKTMBUF_HEADROOM + 512];
} __rte_cache_aligned;

static struct fake_mbuf fm;
static uint8_t ctx_mem[1 << 14] __rte_cache_aligned;

static struct tcpopt_ctx *
ctx_new(uint16_t clamp, int drop_kind)
{
	struct tcpopt_params p;
	struct tcpopt_ctx *ctx;

	assert_true(tcpopt_ctx_size() <= sizeof(ctx_mem));
	tcpopt_params_init(&p);
	p.mss_clamp = clamp;
	if (drop_kind >= 0)
		p.kind_action[drop_kind] = TCPOPT_ACT_DROP;
	ctx = tcpopt_init(ctx_mem, &p);
	assert_non_null(ctx);
	return ctx;
}

/* Put an Ethernet header in front of s (built with l3_off 14). */
static void
seg_eth(struct seg *s)
{
	static const uint8_t mac[12] = { 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2 };

	memcpy(s->buf, mac, 12);
	s->buf[12] = s->ip_ver == 4 ? 0x08 : 0x86;
	s->buf[13] = s->ip_ver == 4 ? 0x00 : 0xdd;
}

/* Load frame bytes into the fake mbuf and parse them. */
static struct rte_mbuf *
fake_load(const uint8_t *frame, unsigned int len)
{
	struct rte_mbuf *m = &fm.m;

	memset(&fm, 0, sizeof(fm));
	m->buf_addr = fm.room;
	m->buf_len = sizeof(fm.room);
	m->data_off = RTE_PKTMBUF_HEADROOM;
	m->priv_size = PKT_META_PRIV_SIZE;
	m->nb_segs = 1;
	rte_mbuf_refcnt_set(m, 1);
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	memcpy(rte_pktmbuf_mtod(m, uint8_t *), frame, len);
	pkt_parse(m, pkt_meta(m), 0);
	return m;
}

/* Copy the mbuf's bytes back into s, to verify them. */
static void
fake_store(struct seg *s)
{
	memcpy(s->buf, rte_pktmbuf_mtod(&fm.m, uint8_t *), 14 + s->len);
}

static void
test_an_ipv4_syn_in_an_mbuf_is_clamped_through_its_parsed_metadata(void **state)
{
	struct tcpopt_ctx *ctx = ctx_new(1400, -1);
	struct tcpopt_result r;
	struct rte_mbuf *m;
	struct seg s;

	(void)state;
	seg_build(&s, 4, 14, SEG_SYN, linux_syn, 20, 0);
	seg_eth(&s);
	m = fake_load(s.buf, 14 + s.len);
	assert_true(pkt_meta(m)->flags & PKT_F_L4);
	assert_int_equal(tcpopt_process_mbuf(ctx, m, 0, &r), TCPOPT_FORWARD);
	assert_int_equal(r.mss_after, 1400);
	fake_store(&s);
	assert_int_equal(s.buf[s.l4_off + 22] << 8 | s.buf[s.l4_off + 23], 1400);
	assert_true(seg_csum_ok(&s));
}

static void
test_an_ipv6_syn_behind_an_extension_header_is_clamped(void **state)
{
	struct tcpopt_ctx *ctx = ctx_new(1300, -1);
	struct rte_mbuf *m;
	struct seg s;
	uint8_t *ip;
	unsigned int plen;

	(void)state;
	seg_build(&s, 6, 14, SEG_SYN | SEG_ACK, linux_syn, 20, 0);
	seg_eth(&s);
	/* Insert an 8-byte hop-by-hop header (PadN) before TCP. */
	memmove(s.buf + s.l4_off + 8, s.buf + s.l4_off, s.len - 40);
	memcpy(s.buf + s.l4_off, "\x06\x00\x01\x04\x00\x00\x00\x00", 8);
	ip = s.buf + 14;
	ip[6] = 0;
	plen = (unsigned int)(ip[4] << 8 | ip[5]) + 8;
	ip[4] = (uint8_t)(plen >> 8);
	ip[5] = (uint8_t)plen;
	s.l4_off += 8;
	s.len += 8;
	assert_true(seg_csum_ok(&s));
	m = fake_load(s.buf, 14 + s.len);
	assert_true(pkt_meta(m)->flags & PKT_F_IPV6_EXT);
	tcpopt_process_mbuf(ctx, m, 0, NULL);
	fake_store(&s);
	assert_int_equal(s.buf[s.l4_off + 22] << 8 | s.buf[s.l4_off + 23], 1300);
	assert_true(seg_csum_ok(&s));
}

static void
test_a_frame_without_tcp_is_skipped_and_counted(void **state)
{
	struct tcpopt_ctx *ctx = ctx_new(1400, -1);
	struct rte_mbuf *m;
	struct seg s;

	(void)state;
	seg_build(&s, 4, 14, SEG_SYN, linux_syn, 20, 0);
	seg_eth(&s);
	s.buf[14 + 9] = 17; /* now UDP; the IPv4 checksum is off, so refix */
	s.buf[14 + 10] = s.buf[14 + 11] = 0;
	{
		uint16_t hc = (uint16_t)~seg_fold(seg_sum(s.buf + 14, 20, 0));

		s.buf[14 + 10] = (uint8_t)(hc >> 8);
		s.buf[14 + 11] = (uint8_t)hc;
	}
	m = fake_load(s.buf, 14 + s.len);
	assert_int_equal(tcpopt_process_mbuf(ctx, m, 0, NULL), TCPOPT_FORWARD);
	assert_int_equal(tcpopt_counters(ctx)->event[TCPOPT_EV_NO_TCP_HEADER], 1);
	assert_int_equal(tcpopt_counters(ctx)->segments[TCPOPT_SEG_SYN], 0);
}

static void
test_a_bad_data_offset_found_by_pkt_parse_is_counted_as_malformed(void **state)
{
	struct tcpopt_ctx *ctx = ctx_new(0, -1);
	struct rte_mbuf *m;
	struct seg s;

	(void)state;
	seg_build(&s, 4, 14, SEG_ACK, NULL, 0, 0);
	seg_eth(&s);
	s.buf[s.l4_off + 12] = 0xf0;
	m = fake_load(s.buf, 14 + s.len);
	assert_int_equal(pkt_meta(m)->err, PKT_ERR_TCP_DOFF);
	assert_int_equal(tcpopt_process_mbuf(ctx, m, 0, NULL), TCPOPT_FORWARD);
	assert_int_equal(tcpopt_counters(ctx)->malformed[TCPOPT_MAL_DOFF_PAST_END], 1);
}

static void
test_ethernet_padding_is_never_read_as_options(void **state)
{
	struct tcpopt_ctx *ctx = ctx_new(0, -1);
	struct tcpopt_parsed p;
	uint8_t frame[60];
	struct seg s;
	struct rte_mbuf *m;

	(void)state;
	seg_build(&s, 4, 14, SEG_ACK, NULL, 0, 0); /* 54-byte frame */
	seg_eth(&s);
	memcpy(frame, s.buf, 54);
	memcpy(frame + 54, "\x02\x04\x05\xb4\x00\x00", 6); /* padding */
	frame[s.l4_off + 12] = 0x60;  /* claims 24 bytes: 4 of them padding */
	m = fake_load(frame, sizeof(frame));
	/* Even if the parser let it through, the datagram end bounds us. */
	pkt_meta(m)->flags |= PKT_F_L4;
	tcpopt_process_mbuf(ctx, m, 0, NULL);
	assert_int_equal(tcpopt_counters(ctx)->malformed[TCPOPT_MAL_DOFF_PAST_END], 1);
	assert_int_equal(tcpopt_counters(ctx)->kind[TCPOPT_SEG_OTHER][TCPOPT_KIND_MSS], 0);
	/* The raw parser, given the whole frame, would have read them. */
	assert_int_equal(tcpopt_parse(frame + s.l4_off, 26, &p), TCPOPT_MAL_NONE);
}

static void
test_tx_checksum_offload_leaves_the_checksum_field_alone(void **state)
{
	struct tcpopt_ctx *ctx = ctx_new(1400, -1);
	struct rte_mbuf *m;
	struct seg s;
	uint8_t before[2];

	(void)state;
	seg_build(&s, 4, 14, SEG_SYN, linux_syn, 20, 0);
	seg_eth(&s);
	memcpy(before, s.buf + s.l4_off + 16, 2);
	m = fake_load(s.buf, 14 + s.len);
	m->ol_flags |= RTE_MBUF_F_TX_TCP_CKSUM | RTE_MBUF_F_TX_IPV4;
	tcpopt_process_mbuf(ctx, m, 0, NULL);
	fake_store(&s);
	assert_int_equal(s.buf[s.l4_off + 22] << 8 | s.buf[s.l4_off + 23], 1400);
	assert_memory_equal(before, s.buf + s.l4_off + 16, 2);
	assert_int_equal(tcpopt_counters(ctx)->event[TCPOPT_EV_CSUM_OFFLOADED], 1);
}

static void
test_a_shared_mbuf_is_never_written(void **state)
{
	struct tcpopt_ctx *ctx = ctx_new(1400, -1);
	struct rte_mbuf *m;
	struct seg s, orig;

	(void)state;
	seg_build(&s, 4, 14, SEG_SYN, linux_syn, 20, 0);
	seg_eth(&s);
	orig = s;
	m = fake_load(s.buf, 14 + s.len);
	rte_mbuf_refcnt_set(m, 2);
	tcpopt_process_mbuf(ctx, m, 0, NULL);
	fake_store(&s);
	assert_memory_equal(orig.buf, s.buf, 14 + s.len);
	assert_int_equal(tcpopt_counters(ctx)->event[TCPOPT_EV_REWRITE_SKIPPED], 1);
}

/* ---- tcpopt_burst(): real mbufs from a mempool, so the EAL is needed. */

static struct rte_mempool *pool;

static int
eal_setup(void **state)
{
	(void)state;
	pool = test_eal_pool("test_tcpopt_mbuf", 63);
	return 0;
}

static int
eal_teardown(void **state)
{
	(void)state;
	test_eal_release(pool);
	return 0;
}

static void
test_a_burst_frees_dropped_segments_and_keeps_the_others_in_order(void **state)
{
	static const uint8_t ts[] = { 1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2 };
	static const uint8_t fo[] = { 34, 2, 1, 1 };
	struct tcpopt_ctx *ctx;
	struct rte_mbuf *pkts[6], *want[6];
	unsigned int i, nwant = 0, avail;
	uint16_t left;

	(void)state;
	if (pool == NULL)
		skip();
	ctx = ctx_new(1400, TCPOPT_KIND_TFO);
	avail = rte_mempool_avail_count(pool);
	for (i = 0; i < 6; i++) {
		struct seg s;
		struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
		bool tfo = i == 1 || i == 4;

		assert_non_null(m);
		if (tfo)
			seg_build(&s, 4, 14, SEG_SYN, fo, sizeof(fo), 0);
		else
			seg_build(&s, i % 2 ? 6 : 4, 14, SEG_ACK, ts, sizeof(ts),
				  i * 10);
		seg_eth(&s);
		memcpy(rte_pktmbuf_append(m, (uint16_t)(14 + s.len)), s.buf,
		       14 + s.len);
		pkt_parse(m, pkt_meta(m), 0);
		pkts[i] = m;
		if (!tfo)
			want[nwant++] = m;
	}
	left = tcpopt_burst(ctx, pkts, 6);
	assert_int_equal(left, nwant);
	for (i = 0; i < nwant; i++)
		assert_ptr_equal(pkts[i], want[i]);
	assert_int_equal(tcpopt_counters(ctx)->event[TCPOPT_EV_DROPPED_BY_POLICY], 2);
	/* The two drops went back to the pool. */
	assert_int_equal(rte_mempool_avail_count(pool), avail - nwant);
	for (i = 0; i < left; i++)
		rte_pktmbuf_free(pkts[i]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_an_ipv4_syn_in_an_mbuf_is_clamped_through_its_parsed_metadata),
		cmocka_unit_test(test_an_ipv6_syn_behind_an_extension_header_is_clamped),
		cmocka_unit_test(test_a_frame_without_tcp_is_skipped_and_counted),
		cmocka_unit_test(test_a_bad_data_offset_found_by_pkt_parse_is_counted_as_malformed),
		cmocka_unit_test(test_ethernet_padding_is_never_read_as_options),
		cmocka_unit_test(test_tx_checksum_offload_leaves_the_checksum_field_alone),
		cmocka_unit_test(test_a_shared_mbuf_is_never_written),
		cmocka_unit_test(test_a_burst_frees_dropped_segments_and_keeps_the_others_in_order),
	};

	return cmocka_run_group_tests(tests, eal_setup, eal_teardown);
}
