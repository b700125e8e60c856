/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/pkt: offsets, tuple and hash of every encapsulation; malformed
 * frames flagged by reason. Frames are built byte by byte here so the test
 * does not depend on the parser's view of them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pkt.h"
#include "pkt_tcpopt.h"

struct frame {
	uint8_t b[2048];
	uint32_t len;
};

static void
put(struct frame *f, const void *p, uint32_t n)
{
	memcpy(f->b + f->len, p, n);
	f->len += n;
}

static void
put16(struct frame *f, uint16_t v)
{
	uint8_t x[2] = { (uint8_t)(v >> 8), (uint8_t)v };
	put(f, x, 2);
}

static void
eth(struct frame *f, uint16_t type)
{
	static const uint8_t macs[12] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1 };
	f->len = 0;
	put(f, macs, 12);
	put16(f, type);
}

static void
ipv4(struct frame *f, uint8_t proto, uint16_t l4len, uint8_t ihl_words,
     uint16_t frag)
{
	uint8_t h[60] = { 0 };
	uint16_t tot = (uint16_t)(ihl_words * 4 + l4len);
	h[0] = (uint8_t)(0x40 | ihl_words);
	h[2] = (uint8_t)(tot >> 8);
	h[3] = (uint8_t)tot;
	h[6] = (uint8_t)(frag >> 8);
	h[7] = (uint8_t)frag;
	h[8] = 64;
	h[9] = proto;
	uint8_t src[4] = { 198, 18, 0, 1 }, dst[4] = { 198, 19, 0, 1 };
	memcpy(h + 12, src, 4);
	memcpy(h + 16, dst, 4);
	put(f, h, (uint32_t)ihl_words * 4);
}

static void
ipv6(struct frame *f, uint8_t nh, uint16_t plen)
{
	uint8_t h[40] = { 0x60 };
	h[4] = (uint8_t)(plen >> 8);
	h[5] = (uint8_t)plen;
	h[6] = nh;
	h[7] = 64;
	h[8] = 0x20; h[9] = 0x01; h[10] = 0x0d; h[11] = 0xb8; h[23] = 1;
	h[24] = 0x20; h[25] = 0x01; h[26] = 0x0d; h[27] = 0xb8; h[39] = 2;
	put(f, h, 40);
}

static void
tcp(struct frame *f, uint16_t sport, uint16_t dport, uint8_t doff_words)
{
	uint8_t h[60] = { 0 };
	h[0] = (uint8_t)(sport >> 8); h[1] = (uint8_t)sport;
	h[2] = (uint8_t)(dport >> 8); h[3] = (uint8_t)dport;
	h[12] = (uint8_t)(doff_words << 4);
	h[13] = 0x02;
	for (unsigned i = 20; i < (unsigned)doff_words * 4; i++)
		h[i] = 1; /* NOP options */
	put(f, h, (uint32_t)doff_words * 4);
}

static void
udp(struct frame *f, uint16_t sport, uint16_t dport, uint16_t len)
{
	put16(f, sport);
	put16(f, dport);
	put16(f, len);
	put16(f, 0);
}

static void
test_ipv4_tcp_offsets_and_ports_are_found(void **state)
{
	(void)state;
	struct frame f;
	struct pkt_meta m;
	eth(&f, 0x0800);
	ipv4(&f, 6, 24, 5, 0);
	tcp(&f, 40000, 443, 6);
	assert_int_equal(pkt_parse_buf(f.b, f.len, &m, 3), PKT_ERR_NONE);
	assert_int_equal(m.l3, PKT_L3_IPV4);
	assert_int_equal(m.l3_off, 14);
	assert_int_equal(m.l4_off, 34);
	assert_int_equal(m.l4_len, 24);
	assert_int_equal(m.payload_off, 58);
	assert_int_equal(m.l4_proto, 6);
	assert_int_equal(m.sport, 40000);
	assert_int_equal(m.dport, 443);
	assert_int_equal(m.in_port, 3);
	assert_true(m.flags & PKT_F_L4);
	assert_int_equal(m.src[0], 198);
	assert_int_equal(m.dst[1], 19);
	assert_int_equal(m.src[4], 0); /* IPv4 zero-fills the rest */
}

/* PKT_F_TCP_TSOPT: a 32-byte TCP header whose options begin NOP NOP
 * kind 8 length 10, and no other. Each of those four bytes changed, or
 * the same twelve bytes in a longer header, clears it; the fast path and
 * the full walk agree, over IPv4 and IPv6. */
static void
test_the_timestamp_shape_is_exactly_nop_nop_ts(void **state)
{
	static const uint8_t ts[4] = { 1, 1, 8, 10 };
	(void)state;

	for (int v6 = 0; v6 < 2; v6++) {
		for (int bad = -1; bad < 5; bad++) {
			uint8_t doff = bad == 4 ? 9 : 8;
			uint32_t l4 = v6 ? 14 + 40 : 14 + 20;
			struct frame f;
			struct pkt_meta fast, walk;

			eth(&f, v6 ? 0x86dd : 0x0800);
			if (v6)
				ipv6(&f, 6, (uint16_t)(doff * 4));
			else
				ipv4(&f, 6, (uint16_t)(doff * 4), 5, 0);
			tcp(&f, 40000, 443, doff);
			f.b[l4 + 13] = 0x10; /* ACK */
			memcpy(f.b + l4 + 20, ts, 4);
			if (bad >= 0 && bad < 4)
				f.b[l4 + 20 + bad] ^= 0x40;
			assert_int_equal(pkt_parse_buf(f.b, f.len, &fast, 0), PKT_ERR_NONE);
			assert_int_equal(pkt_parse_buf_walk(f.b, f.len, &walk, 0), PKT_ERR_NONE);
			assert_int_equal(fast.flags, walk.flags);
			if (bad < 0)
				assert_true(fast.flags & PKT_F_TCP_TSOPT);
			else
				assert_false(fast.flags & PKT_F_TCP_TSOPT);
			assert_false(fast.flags & (PKT_F_TCP_SYN | PKT_F_TCP_NOOPT));
		}
	}
}

static void
test_ipv4_options_move_the_transport_header(void **state)
{
	(void)state;
	struct frame f;
	struct pkt_meta m;
	eth(&f, 0x0800);
	ipv4(&f, 17, 8, 7, 0);
	udp(&f, 53, 5353, 8);
	assert_int_equal(pkt_parse_buf(f.b, f.len, &m, 0), PKT_ERR_NONE);
	assert_int_equal(m.l4_off, 14 + 28);
	assert_true(m.flags & PKT_F_IPV4_OPTS);
}

static void
test_qinq_and_pppoe_are_walked_to_the_ip_header(void **state)
{
	(void)state;
	struct frame f;
	struct pkt_meta m;
	eth(&f, 0x88a8);
	put16(&f, 200);
	put16(&f, 0x8100);
	put16(&f, 300);
	put16(&f, 0x8864);
	uint8_t pppoe[6] = { 0x11, 0, 0x12, 0x34, 0, 2 + 20 + 8 };
	put(&f, pppoe, 6);
	put16(&f, 0x0021);
	ipv4(&f, 17, 8, 5, 0);
	udp(&f, 1, 2, 8);
	assert_int_equal(pkt_parse_buf(f.b, f.len, &m, 0), PKT_ERR_NONE);
	assert_int_equal(m.vlan_count, 2);
	assert_int_equal(m.vlan_tci[0], 200);
	assert_int_equal(m.vlan_tci[1], 300);
	assert_true(m.flags & PKT_F_QINQ);
	assert_true(m.flags & PKT_F_PPPOE);
	assert_int_equal(m.l3_off, 14 + 8 + 8);
	assert_int_equal(m.l4_off, 14 + 8 + 8 + 20);
}

static void
test_ipv6_extension_headers_are_skipped_to_tcp(void **state)
{
	(void)state;
	struct frame f;
	struct pkt_meta m;
	eth(&f, 0x86dd);
	ipv6(&f, 0, 8 + 16 + 20);
	uint8_t hbh[8] = { 60, 0, 1, 4, 0, 0, 0, 0 };   /* -> dst opts */
	uint8_t dst[16] = { 6, 1 };                      /* -> TCP, 16 bytes */
	put(&f, hbh, 8);
	put(&f, dst, 16);
	tcp(&f, 1000, 80, 5);
	assert_int_equal(pkt_parse_buf(f.b, f.len, &m, 0), PKT_ERR_NONE);
	assert_int_equal(m.l3, PKT_L3_IPV6);
	assert_int_equal(m.l4_proto, 6);
	assert_int_equal(m.l4_off, 14 + 40 + 24);
	assert_true(m.flags & PKT_F_IPV6_EXT);
	assert_int_equal(m.dport, 80);
}

static void
test_later_fragments_have_addresses_but_no_ports(void **state)
{
	(void)state;
	struct frame f;
	struct pkt_meta m;
	eth(&f, 0x0800);
	ipv4(&f, 17, 16, 5, 100);
	uint8_t junk[16] = { 0xff, 0xff, 0xff, 0xff };
	put(&f, junk, 16);
	assert_int_equal(pkt_parse_buf(f.b, f.len, &m, 0), PKT_ERR_NONE);
	assert_true(m.flags & PKT_F_FRAGMENT);
	assert_false(m.flags & PKT_F_L4);
	assert_int_equal(m.sport, 0);
}

static void
test_lying_lengths_are_flagged_by_reason(void **state)
{
	(void)state;
	struct frame f;
	struct pkt_meta m;

	eth(&f, 0x0800);
	ipv4(&f, 6, 20, 5, 0);
	tcp(&f, 1, 2, 5);
	f.b[14 + 2] = 0x05; /* total length 1300+ */
	assert_int_equal(pkt_parse_buf(f.b, f.len, &m, 0), PKT_ERR_IP_TOTLEN);
	assert_true(m.flags & PKT_F_MALFORMED);

	eth(&f, 0x0800);
	ipv4(&f, 6, 20, 5, 0);
	tcp(&f, 1, 2, 5);
	f.b[34 + 12] = 0x30;
	assert_int_equal(pkt_parse_buf(f.b, f.len, &m, 0), PKT_ERR_TCP_DOFF);

	eth(&f, 0x0800);
	ipv4(&f, 17, 8, 5, 0);
	udp(&f, 1, 2, 400);
	assert_int_equal(pkt_parse_buf(f.b, f.len, &m, 0), PKT_ERR_UDP_LEN);

	eth(&f, 0x86dd);
	ipv6(&f, 17, 8);
	assert_int_equal(pkt_parse_buf(f.b, f.len, &m, 0), PKT_ERR_IP_TOTLEN);

	assert_int_equal(pkt_parse_buf(f.b, 13, &m, 0), PKT_ERR_TRUNC_L2);
}

static void
test_every_prefix_of_a_frame_parses_without_reading_past_it(void **state)
{
	(void)state;
	struct frame f;
	struct pkt_meta m;
	eth(&f, 0x8100);
	put16(&f, 5);
	put16(&f, 0x86dd);
	ipv6(&f, 44, 8 + 20);
	uint8_t frag[8] = { 6, 0, 0, 1, 0, 0, 0, 9 };
	put(&f, frag, 8);
	tcp(&f, 9, 10, 5);
	/* Each prefix is copied to an exact-size buffer: ASan catches any
	 * read past it. */
	for (uint32_t n = 0; n <= f.len; n++) {
		uint8_t *copy = malloc(n ? n : 1);
		memcpy(copy, f.b, n);
		enum pkt_err e = pkt_parse_buf(copy, n, &m, 0);
		if (n == f.len)
			assert_int_equal(e, PKT_ERR_NONE);
		else
			assert_int_not_equal(e, PKT_ERR_NONE);
		free(copy);
	}
}

static void
test_tuple_hash_is_the_same_in_both_directions(void **state)
{
	(void)state;
	struct frame f;
	struct pkt_meta a, b;
	eth(&f, 0x0800);
	ipv4(&f, 6, 20, 5, 0);
	tcp(&f, 40000, 443, 5);
	assert_int_equal(pkt_parse_buf(f.b, f.len, &a, 0), PKT_ERR_NONE);
	b = a;
	memcpy(b.src, a.dst, 16);
	memcpy(b.dst, a.src, 16);
	b.sport = a.dport;
	b.dport = a.sport;
	assert_int_equal(pkt_tuple_hash(&a, 7), pkt_tuple_hash(&b, 7));
	assert_int_not_equal(pkt_tuple_hash(&a, 7), pkt_tuple_hash(&a, 8));
	b.sport++;
	assert_int_not_equal(pkt_tuple_hash(&a, 7), pkt_tuple_hash(&b, 7));
}

static void
test_the_flow_hash_separates_flows_and_joins_directions(void **state)
{
	(void)state;
	struct frame f;
	struct pkt_meta a, b, c;
	eth(&f, 0x0800);
	ipv4(&f, 6, 20, 5, 0);
	tcp(&f, 40000, 443, 5);
	assert_int_equal(pkt_parse_buf(f.b, f.len, &a, 0), PKT_ERR_NONE);
	/* The reverse direction: swap addresses and ports in the bytes. */
	uint8_t tmp[4];
	memcpy(tmp, f.b + 26, 4);
	memcpy(f.b + 26, f.b + 30, 4);
	memcpy(f.b + 30, tmp, 4);
	memcpy(tmp, f.b + 34, 2);
	memcpy(f.b + 34, f.b + 36, 2);
	memcpy(f.b + 36, tmp, 2);
	assert_int_equal(pkt_parse_buf(f.b, f.len, &b, 1), PKT_ERR_NONE);
	assert_int_equal(b.sport, 443);
	/* Not computed by the parser: on first use, then kept. */
	assert_false(a.flags & PKT_F_HASHED);
	assert_int_equal(pkt_flow_hash(&a), pkt_flow_hash(&b));
	assert_true(a.flags & PKT_F_HASHED);
	assert_int_equal(a.flow_hash, pkt_tuple_hash(&a, 0));
	/* Another source port is another flow. */
	f.b[35]++;
	assert_int_equal(pkt_parse_buf(f.b, f.len, &c, 1), PKT_ERR_NONE);
	assert_int_not_equal(pkt_flow_hash(&a), pkt_flow_hash(&c));
	/* Non-IP frames have no flow hash. */
	eth(&f, 0x0806);
	uint8_t arp[28] = { 0 };
	put(&f, arp, 28);
	assert_int_equal(pkt_parse_buf(f.b, f.len, &c, 0), PKT_ERR_NONE);
	assert_int_equal(c.l3, PKT_L3_NONE);
	assert_int_equal(pkt_flow_hash(&c), 0);
}

static void
test_error_names_are_stable(void **state)
{
	(void)state;
	assert_string_equal(pkt_err_name(PKT_ERR_TRUNC_IP), "truncated_ip");
	assert_string_equal(pkt_err_name(PKT_ERR_NONE), "none");
	assert_string_equal(pkt_err_name(PKT_ERR_MAX), "unknown");
}

/* An mbuf without a pool: header, metadata area, then the frame. Enough
 * for the classification, which reads only these fields. */
struct fake_mbuf {
	struct rte_mbuf m;
	uint8_t priv[PKT_META_PRIV_SIZE];
	uint8_t data[256];
};

static struct rte_mbuf *
fake(struct fake_mbuf *fm, const struct frame *f, uint16_t segs)
{
	memset(fm, 0, sizeof(*fm));
	memcpy(fm->data, f->b, f->len);
	fm->m.buf_addr = fm->data;
	fm->m.data_off = 0;
	fm->m.buf_len = sizeof(fm->data);
	fm->m.priv_size = PKT_META_PRIV_SIZE;
	fm->m.data_len = (uint16_t)f->len;
	fm->m.pkt_len = f->len;
	fm->m.nb_segs = segs;
	memset(pkt_meta(&fm->m), 0xee, sizeof(struct pkt_meta));
	return &fm->m;
}

static void
test_classify_parses_and_counts_until_a_chained_or_oversize_frame(void **state)
{
	(void)state;
	static struct fake_mbuf fm[6];
	struct frame udp4, arp, trunc, big;
	uint64_t err[PKT_ERR_MAX] = { 0 }, non_ip = 5;
	const struct pkt_classify c = {
		.in_port = 7, .max_frame = 100, .err_count = err, .non_ip = &non_ip,
	};

	eth(&udp4, 0x0800);
	ipv4(&udp4, 17, 8, 5, 0);
	udp(&udp4, 40000, 53, 8);
	eth(&arp, 0x0806);
	put(&arp, udp4.b, 28);
	eth(&trunc, 0x0800);
	put(&trunc, udp4.b + 14, 10);
	eth(&big, 0x0800);
	ipv4(&big, 17, 108, 5, 0);
	udp(&big, 40000, 53, 108);
	big.len += 100;

	struct rte_mbuf *pkts[6] = {
		fake(&fm[0], &udp4, 1), fake(&fm[1], &arp, 1), fake(&fm[2], &trunc, 1),
		fake(&fm[3], &udp4, 2), fake(&fm[4], &udp4, 1), fake(&fm[5], &big, 1),
	};

	/* Three parsed and counted; the chained fourth stops the pass. */
	assert_int_equal(pkt_classify_burst(pkts, 6, &c), 3);
	assert_int_equal(pkt_meta(pkts[0])->l3, PKT_L3_IPV4);
	assert_int_equal(pkt_meta(pkts[0])->in_port, 7);
	assert_int_equal(pkt_meta(pkts[1])->l3, PKT_L3_NONE);
	assert_int_equal(pkt_meta(pkts[2])->err, PKT_ERR_TRUNC_IP);
	assert_int_equal(non_ip, 6);
	assert_int_equal(err[PKT_ERR_TRUNC_IP], 1);
	assert_int_equal(pkt_meta(pkts[3])->in_port, 0xeeee); /* not looked at */
	/* Past the chained frame: one more, then the oversize one stops it. */
	assert_int_equal(pkt_classify_burst(pkts + 4, 2, &c), 1);
	assert_true(pkt_classify_stops(pkts[5], c.max_frame));
	assert_false(pkt_classify_stops(pkts[4], c.max_frame));
	assert_int_equal(pkt_meta(pkts[5])->in_port, 0xeeee);
	assert_int_equal(non_ip, 6);
}

/* Microsoft's RSS verification suite ("Verifying the RSS Hash
 * Calculation"): its key, and the IPv4-only and IPv4/TCP hashes of its
 * first two rows. */
static void
test_rss_hash_gives_the_published_values(void **state)
{
	static const uint8_t key[40] = {
		0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67,
		0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb,
		0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30,
		0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
	};
	/* source 66.9.149.187:2794, destination 161.142.100.80:1766 */
	static const uint8_t r1[12] = { 66, 9, 149, 187, 161, 142, 100, 80,
					 2794 >> 8, 2794 & 255, 1766 >> 8, 1766 & 255 };
	/* source 199.92.111.2:14230, destination 65.69.140.83:4739 */
	static const uint8_t r2[12] = { 199, 92, 111, 2, 65, 69, 140, 83,
					 14230 >> 8, 14230 & 255, 4739 >> 8, 4739 & 255 };
	(void)state;

	assert_int_equal(pkt_rss_hash(key, r1, 8), 0x323e8fc2);
	assert_int_equal(pkt_rss_hash(key, r1, 12), 0x51ccc178);
	assert_int_equal(pkt_rss_hash(key, r2, 8), 0xd718262a);
	assert_int_equal(pkt_rss_hash(key, r2, 12), 0xc626b0ea);
	assert_int_equal(pkt_rss_hash(key, r1, 0), 0);
}

/* Walks hdr's options (doff bytes) and writes "kind@offset/len " for each,
 * then "end" or "bad@offset". */
static void
walk(const uint8_t *hdr, uint32_t doff, char *out, size_t n)
{
	uint32_t i = 20;
	uint8_t len;
	int kind;
	size_t w = 0;

	out[0] = '\0';
	while ((kind = pkt_tcpopt_next(hdr, doff, &i, &len)) >= 0) {
		w += (size_t)snprintf(out + w, n - w, "%d@%u/%u ", kind, i, len);
		i += len;
	}
	snprintf(out + w, n - w, kind == PKT_TCPOPT_END ? "end@%u" : "bad@%u", i);
}

static void
test_the_option_walker_skips_nops_stops_at_eol_and_flags_bad_lengths(void **state)
{
	(void)state;
	uint8_t h[60];
	char out[128];

	memset(h, 0, sizeof(h));
	/* The Linux SYN layout: MSS, SACK-permitted, TS, NOP, WS. */
	const uint8_t syn[] = { 2, 4, 5, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7 };
	memcpy(h + 20, syn, sizeof(syn));
	walk(h, 40, out, sizeof(out));
	assert_string_equal(out, "2@20/4 4@24/2 8@26/10 3@37/3 end@40");
	/* EOL ends the list; what follows it is padding, never read. */
	const uint8_t eol[] = { 1, 1, 0, 2, 1 };
	memcpy(h + 20, eol, sizeof(eol));
	walk(h, 28, out, sizeof(out));
	assert_string_equal(out, "end@22");
	/* NOPs to the header's end. */
	memset(h + 20, 1, 8);
	walk(h, 28, out, sizeof(out));
	assert_string_equal(out, "end@28");
	/* A kind in the last byte, with no length byte. */
	h[27] = 8;
	walk(h, 28, out, sizeof(out));
	assert_string_equal(out, "bad@27");
	/* Lengths 0 and 1 (would loop or step into the length byte). */
	for (uint8_t l = 0; l < 2; l++) {
		memset(h + 20, 1, 8);
		h[24] = 30;
		h[25] = l;
		walk(h, 28, out, sizeof(out));
		assert_string_equal(out, "bad@24");
	}
	/* A length that runs past the header by one, and one that ends on it. */
	memset(h + 20, 1, 8);
	h[22] = 5;
	h[23] = 7;
	walk(h, 28, out, sizeof(out));
	assert_string_equal(out, "bad@22");
	h[23] = 6;
	walk(h, 28, out, sizeof(out));
	assert_string_equal(out, "5@22/6 end@28");
	/* No options at all. */
	walk(h, 20, out, sizeof(out));
	assert_string_equal(out, "end@20");
	assert_int_equal(pkt_rd32((const uint8_t[]){ 0x81, 2, 3, 0xfe }), 0x810203feu);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4_tcp_offsets_and_ports_are_found),
		cmocka_unit_test(test_ipv4_options_move_the_transport_header),
		cmocka_unit_test(test_the_timestamp_shape_is_exactly_nop_nop_ts),
		cmocka_unit_test(test_qinq_and_pppoe_are_walked_to_the_ip_header),
		cmocka_unit_test(test_ipv6_extension_headers_are_skipped_to_tcp),
		cmocka_unit_test(test_later_fragments_have_addresses_but_no_ports),
		cmocka_unit_test(test_lying_lengths_are_flagged_by_reason),
		cmocka_unit_test(test_every_prefix_of_a_frame_parses_without_reading_past_it),
		cmocka_unit_test(test_tuple_hash_is_the_same_in_both_directions),
		cmocka_unit_test(test_the_flow_hash_separates_flows_and_joins_directions),
		cmocka_unit_test(test_error_names_are_stable),
		cmocka_unit_test(test_classify_parses_and_counts_until_a_chained_or_oversize_frame),
		cmocka_unit_test(test_rss_hash_gives_the_published_values),
		cmocka_unit_test(test_the_option_walker_skips_nops_stops_at_eol_and_flags_bad_lengths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
