/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for tcp_seg_parse() (lib/tcp/tcp_seg.c): the parser
 * every frame offered to the engine goes through.
 *
 * Input layout:
 *   byte 0   control bits (CTL_*)
 *   byte 1   where to split the frame into a two-mbuf chain (CTL_SPLIT)
 *   byte 2.. an Ethernet frame, parsed by pkt_parse() first
 *
 * Each mbuf's data lives in a heap buffer of exactly its size, so ASan
 * reports any read outside the frame. Beyond memory safety the target
 * aborts when:
 *   - a segment parses with a payload that does not end where the IP
 *     datagram ends, more than 4 SACK blocks or a window shift above 14;
 *   - an IP fragment is not refused as TCP_SEG_EFRAGMENT;
 *   - verifying the checksum accepts what the unverified parse refuses,
 *     or refuses a segment whose checksum was made valid (CTL_FIX_CSUM);
 *   - the options a proxy would carry (tcp_seg_xopts()) overflow their
 *     buffer or include a kind that must never be carried.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ip.h>

#include "pkt.h"
#include "tcp_seg.h"
#include "tcpopt.h"

#define CTL_FIX_CSUM 0x01 /* make the TCP checksum valid first */
#define CTL_NIC_GOOD 0x02 /* the NIC says the checksum is good */
#define CTL_SPLIT    0x04 /* two mbufs, split at byte 1 */

#define HDR 2
#define CHECK(c) do { if (!(c)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fake_mbuf {
	struct rte_mbuf m;
	uint8_t priv[PKT_META_PRIV_SIZE];
} __attribute__((aligned(64)));

static void
fake(struct fake_mbuf *fm, uint8_t *buf, size_t len)
{
	struct rte_mbuf *m = &fm->m;

	memset(fm, 0, sizeof(*fm));
	m->buf_addr = buf;
	m->buf_len = (uint16_t)len;
	m->priv_size = PKT_META_PRIV_SIZE;
	m->nb_segs = 1;
	rte_mbuf_refcnt_set(m, 1);
	m->data_len = (uint16_t)len;
	m->pkt_len = (uint32_t)len;
}

/* Make the TCP checksum of a flat frame valid (for a whole datagram). */
static void
fix_csum(uint8_t *f, size_t len)
{
	struct pkt_meta meta;
	uint32_t tcp_len, sum;
	uint16_t raw;

	if (pkt_parse_buf(f, (uint32_t)len, &meta, 0) != PKT_ERR_NONE ||
	    !(meta.flags & PKT_F_L4) || meta.l4_proto != IPPROTO_TCP ||
	    (meta.flags & PKT_F_FRAGMENT))
		return;
	tcp_len = (uint32_t)meta.l3_off + meta.l3_len - meta.l4_off;
	f[meta.l4_off + 16] = 0;
	f[meta.l4_off + 17] = 0;
	raw = rte_raw_cksum(f + meta.l4_off, tcp_len);
	sum = tcp_pseudo_sum(meta.l3 == PKT_L3_IPV4 ? 4 : 6, meta.src, meta.dst,
			     tcp_len) + raw;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	raw = (uint16_t)~sum;
	memcpy(f + meta.l4_off + 16, &raw, 2);
}

/* A carry policy like the proxy's: the check below sees it honoured. */
static bool
no_sig_no_mptcp(uint8_t kind)
{
	return kind != TCPOPT_KIND_MPTCP && kind != TCPOPT_KIND_MD5 &&
	       kind != TCPOPT_KIND_AO;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fake_mbuf f1, f2;
	struct tcp_seg_in s, s0;
	struct pkt_meta *meta;
	struct rte_mbuf *m;
	uint8_t *flat, *b1, *b2 = NULL;
	uint8_t ctl;
	size_t len, cut;
	int rc, rc0;

	if (size < HDR || size - HDR > 9000)
		return 0;
	ctl = data[0];
	len = size - HDR;
	flat = malloc(len ? len : 1);
	CHECK(flat != NULL);
	memcpy(flat, data + HDR, len);
	if (ctl & CTL_FIX_CSUM)
		fix_csum(flat, len);
	cut = len;
	if ((ctl & CTL_SPLIT) && len > 1)
		cut = 1 + (size_t)data[1] * (len - 1) / 256;
	b1 = malloc(cut ? cut : 1);
	CHECK(b1 != NULL);
	memcpy(b1, flat, cut);
	fake(&f1, b1, cut);
	m = &f1.m;
	if (cut < len) {
		b2 = malloc(len - cut);
		CHECK(b2 != NULL);
		memcpy(b2, flat + cut, len - cut);
		fake(&f2, b2, len - cut);
		m->next = &f2.m;
		m->nb_segs = 2;
		m->pkt_len = (uint32_t)len;
	}
	if (ctl & CTL_NIC_GOOD)
		m->ol_flags = RTE_MBUF_F_RX_L4_CKSUM_GOOD;
	meta = pkt_meta(m);
	(void)pkt_parse(m, meta, 0);
	if (meta->l4_proto != IPPROTO_TCP || !(meta->flags & PKT_F_L4))
		goto out;

	rc0 = tcp_seg_parse(m, meta, &s0, 0);
	rc = tcp_seg_parse(m, meta, &s, 1);
	if (meta->flags & PKT_F_FRAGMENT) {
		CHECK(rc0 == TCP_SEG_EFRAGMENT && rc == TCP_SEG_EFRAGMENT);
		goto out;
	}
	CHECK(rc0 == 0 || rc0 == TCP_SEG_EMALFORMED);
	CHECK(rc == 0 || rc == TCP_SEG_EMALFORMED || rc == TCP_SEG_ECSUM);
	/* Verifying adds a check, nothing else. */
	if (rc0 != 0)
		CHECK(rc != 0);
	if (rc == 0) {
		CHECK(rc0 == 0);
		CHECK(memcmp(&s, &s0, offsetof(struct tcp_seg_in, sack)) == 0);
	}
	/* A checksum made valid passes, unless the header walk splits
	 * across mbufs in a way the parser refuses as malformed. */
	if ((ctl & CTL_FIX_CSUM) && rc0 == 0 && !(ctl & CTL_SPLIT))
		CHECK(rc == 0);
	/* The options: accepted and rejected as tcpopt_parse() does, and
	 * the first option of a kind the engine does not read noted with
	 * the count of them (tcp_conn_hooks.opt_kind). */
	if (meta->l4_len > 20 && meta->l4_off + meta->l4_len <= cut &&
	    !(meta->flags & PKT_F_TCP_TSOPT)) {
		struct tcpopt_parsed po;
		enum tcpopt_mal mal = tcpopt_parse(flat + meta->l4_off, meta->l4_len, &po);

		if (mal != TCPOPT_MAL_NONE)
			CHECK(rc0 != 0);
		if (rc0 == 0) {
			uint8_t n = 0, kind = 0, off = 0;

			CHECK(mal == TCPOPT_MAL_NONE);
			for (unsigned int i = 0; i < po.n; i++) {
				uint8_t k = po.opt[i].kind;

				if (k <= TCPOPT_KIND_NOP || k == TCPOPT_KIND_MSS ||
				    k == TCPOPT_KIND_WS || k == TCPOPT_KIND_SACK_PERM ||
				    k == TCPOPT_KIND_SACK || k == TCPOPT_KIND_TS)
					continue;
				if (n++ == 0) {
					kind = k;
					off = po.opt[i].off;
				}
			}
			CHECK(s0.xo_n == n && s0.xo_kind == kind && (n == 0 || s0.xo_off == off));
		}
	}
	if (rc0 == 0) {
		uint8_t xo[TCP_XOPT_MAX + 8];
		uint32_t left, n;

		CHECK(s0.payload_off + s0.len == (uint32_t)meta->l3_off + meta->l3_len);
		CHECK(s0.payload_off + s0.len <= len);
		CHECK(s0.nsack <= TCP_SACK_MAX);
		CHECK(!(s0.opts & TCP_SO_WS) || s0.ws <= 14);
		CHECK((s0.flags & ~0x3f) == 0);
		if (meta->l4_off + meta->l4_len <= cut) {
			memset(xo, 0xa5, sizeof(xo));
			n = tcp_seg_xopts(flat + meta->l4_off, meta->l4_len, xo,
					  TCP_XOPT_MAX, &left, no_sig_no_mptcp);
			CHECK(n <= TCP_XOPT_MAX);
			for (uint32_t k = TCP_XOPT_MAX; k < sizeof(xo); k++)
				CHECK(xo[k] == 0xa5);
			for (uint32_t k = 0; k < n;) {
				uint8_t kind = xo[k];

				CHECK(kind != TCPOPT_KIND_EOL && kind != TCPOPT_KIND_NOP &&
				      kind != TCPOPT_KIND_MSS && kind != TCPOPT_KIND_TS &&
				      kind != TCPOPT_KIND_MPTCP && kind != TCPOPT_KIND_MD5 &&
				      kind != TCPOPT_KIND_AO);
				CHECK(k + 1 < n && xo[k + 1] >= 2);
				k += xo[k + 1];
				CHECK(k <= n);
			}
		}
	}
out:
	free(b2);
	free(b1);
	free(flat);
	return 0;
}
