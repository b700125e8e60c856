/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for lib/tcpopt: the walker, the rewriter and the mbuf
 * entry point.
 *
 * Input layout (see gen_corpus.py):
 *   byte 0   control bits (CTL_*)
 *   byte 1-2 clamp, big endian: an MSS, or an MTU with CTL_MTU
 *   byte 3   kind to strip (0: none)
 *   byte 4   kind to drop (0: none)
 *   byte 5.. a TCP segment (header + payload), or with CTL_FRAME a whole
 *            Ethernet frame that goes through pkt_parse() first
 *
 * The data is copied into a heap buffer of exactly its size, so ASan
 * reports any read or write outside it. Beyond memory safety the target
 * aborts when:
 *   - a checksum that was valid before a rewrite is not valid after it;
 *   - a byte changes that policy did not ask to change (only the checksum,
 *     an MSS value on a SYN or SYN/ACK, or option bytes turned into NOPs);
 *   - anything is written into a read-only, dropped or malformed segment;
 *   - tcpopt_parse() and tcpopt_process() disagree about malformation, or
 *     a rewritten header no longer parses;
 *   - tcpopt_burst() (with its fast paths), tcpopt_parse_burst() (the
 *     parse and the burst in one pass) and tcpopt_process_mbuf() leave
 *     different bytes or counters for the same frame, or the one pass
 *     counts parse errors other than pkt_parse() says.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkt.h"
#include "tcpopt.h"

#define CTL_FRAME     0x01 /* input is an Ethernet frame */
#define CTL_IPV6      0x02 /* raw mode: IP version given to the clamp */
#define CTL_FIX_CSUM  0x04 /* raw mode: make the checksum valid first */
#define CTL_READONLY  0x08
#define CTL_PARTIAL   0x10 /* checksum left to the NIC */
#define CTL_MAL_DROP  0x20
#define CTL_MTU       0x40

#define HDR 5

/* Segments in the burst that is checked against the per-segment path. */
#define FUZZ_BURST 25

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static uint8_t ctx_mem[1 << 14] __attribute__((aligned(64)));
static uint8_t ctx_mem2[1 << 14] __attribute__((aligned(64)));
static uint8_t ctx_mem3[1 << 14] __attribute__((aligned(64)));

/* One's-complement sum of a TCP segment with a fixed pseudo header. */
static uint16_t
tcp_sum(const uint8_t *t, size_t len)
{
	uint32_t s = 0xc612 + 0x0001 + 0xc613 + 0x0002 + 6 + (uint32_t)len;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		s += (uint32_t)(t[i] << 8 | t[i + 1]);
	if (len & 1)
		s += (uint32_t)t[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static struct tcpopt_ctx *
make_ctx_in(void *mem, const uint8_t *d)
{
	struct tcpopt_params p;
	uint16_t clamp = (uint16_t)(d[1] << 8 | d[2]);

	tcpopt_params_init(&p);
	if (d[0] & CTL_MTU) {
		if (clamp >= TCPOPT_MTU_MIN)
			p.mtu = clamp;
	} else if (clamp >= TCPOPT_MSS_MIN) {
		p.mss_clamp = clamp;
	}
	if (d[3] > TCPOPT_KIND_NOP)
		p.kind_action[d[3]] = TCPOPT_ACT_STRIP;
	if (d[4] != 0 && d[4] != d[3])
		p.kind_action[d[4]] = TCPOPT_ACT_DROP;
	p.malformed_action = (d[0] & CTL_MAL_DROP) ? TCPOPT_ACT_DROP
						   : TCPOPT_ACT_PRESERVE;
	return tcpopt_init(mem, &p);
}

static struct tcpopt_ctx *
make_ctx(const uint8_t *d)
{
	return make_ctx_in(ctx_mem, d);
}

/*
 * Compare before/after of one TCP segment of len bytes against what the
 * result says happened.
 */
static void
check_rewrite(const uint8_t *before, const uint8_t *after, size_t len,
	      const struct tcpopt_parsed *p, const struct tcpopt_result *r,
	      const struct tcpopt_ctx *ctx, uint8_t ip_version, bool readonly)
{
	size_t i;
	unsigned int k;

	if (r->rewrites == 0 || readonly || r->verdict == TCPOPT_DROP ||
	    p->malformed != TCPOPT_MAL_NONE) {
		CHECK(r->rewrites == 0);
		CHECK(memcmp(before, after, len) == 0);
		return;
	}
	for (i = 0; i < len; i++) {
		bool allowed = false;

		if (before[i] == after[i] || i == 16 || i == 17)
			continue;
		CHECK(i >= 20 && i < p->hdr_len);
		for (k = 0; k < p->n && !allowed; k++) {
			const struct tcpopt_opt *o = &p->opt[k];

			if (i < o->off || i >= (size_t)o->off + o->len)
				continue;
			if (after[i] == TCPOPT_KIND_NOP)
				allowed = true;
			else if (o->kind == TCPOPT_KIND_MSS && i >= o->off + 2u &&
				 p->seg != TCPOPT_SEG_OTHER)
				allowed = true;
		}
		CHECK(allowed);
	}
	if (r->rewrites & TCPOPT_RW_MSS) {
		CHECK(p->seg != TCPOPT_SEG_OTHER);
		CHECK(tcpopt_mss_clamp(ctx, ip_version) != 0);
		CHECK(r->mss_after <= tcpopt_mss_clamp(ctx, ip_version));
		CHECK(r->mss_after <= r->mss_before);
	}
	/* A rewritten header still parses, to the same length. */
	{
		struct tcpopt_parsed q;

		CHECK(tcpopt_parse(after, (uint32_t)len, &q) == TCPOPT_MAL_NONE);
		CHECK(q.hdr_len == p->hdr_len);
	}
}

static void
fuzz_raw(const uint8_t *ctl, const uint8_t *data, size_t size)
{
	struct tcpopt_ctx *ctx = make_ctx(ctl);
	uint8_t ipv = (ctl[0] & CTL_IPV6) ? 6 : 4;
	uint32_t flags = 0;
	struct tcpopt_parsed p;
	struct tcpopt_result r;
	uint8_t *buf, *before;
	bool valid_before;
	size_t k;

	if (ctx == NULL)
		return;
	buf = malloc(size ? size : 1);
	before = malloc(size ? size : 1);
	memcpy(buf, data, size);
	if ((ctl[0] & CTL_FIX_CSUM) && size >= 20) {
		uint16_t c;

		buf[16] = buf[17] = 0;
		c = (uint16_t)~tcp_sum(buf, size);
		buf[16] = (uint8_t)(c >> 8);
		buf[17] = (uint8_t)c;
	}
	valid_before = size >= 20 && tcp_sum(buf, size) == 0xffff;
	memcpy(before, buf, size);

	/* The context-free walker, which must agree with itself. */
	tcpopt_parse(buf, (uint32_t)size, &p);
	CHECK(p.n <= TCPOPT_MAX_OPTS);
	for (k = 0; k < p.n; k++) {
		CHECK(p.opt[k].off >= 20);
		CHECK((size_t)p.opt[k].off + p.opt[k].len <= p.hdr_len);
		if (k > 0)
			CHECK(p.opt[k].off == p.opt[k - 1].off + p.opt[k - 1].len);
	}

	if (ctl[0] & CTL_READONLY)
		flags |= TCPOPT_F_READONLY;
	if (ctl[0] & CTL_PARTIAL)
		flags |= TCPOPT_F_CSUM_PARTIAL;
	tcpopt_process(ctx, buf, (uint32_t)size, ipv, 0, flags, &r);
	CHECK(r.malformed == p.malformed);
	CHECK(r.seg == p.seg);
	check_rewrite(before, buf, size, &p, &r, ctx, ipv,
		      ctl[0] & CTL_READONLY);
	if (valid_before && !(flags & TCPOPT_F_CSUM_PARTIAL))
		CHECK(tcp_sum(buf, size) == 0xffff);
	free(before);
	free(buf);
}

/* A bare mbuf plus private area; the data lives in its own exact buffer. */
struct fake_mbuf {
	struct rte_mbuf m;
	uint8_t priv[PKT_META_PRIV_SIZE];
} __attribute__((aligned(64)));

/* An established IPv4 segment with NOP NOP TS: a data segment. */
static const uint8_t data_frame[66] = {
	2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00,
	0x45, 0, 0, 52, 0, 0, 0x40, 0, 64, 6, 0, 0,
	198, 18, 0, 1, 198, 19, 0, 1,
	0x27, 0x10, 0x01, 0xbb, 0, 0, 0, 1, 0, 0, 0, 1,
	0x80, 0x10, 0xff, 0xff, 0, 0, 0, 0,
	1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2,
};

/* size bytes at buf (exactly that buffer) in an mbuf, not parsed. */
static struct rte_mbuf *
raw_mbuf(struct fake_mbuf *fm, uint8_t *buf, size_t size, uint16_t refcnt,
	 uint64_t ol_flags)
{
	struct rte_mbuf *m = &fm->m;

	memset(fm, 0, sizeof(*fm));
	m->buf_addr = buf;
	m->buf_len = (uint16_t)size;
	m->priv_size = PKT_META_PRIV_SIZE;
	m->nb_segs = 1;
	rte_mbuf_refcnt_set(m, refcnt);
	m->data_len = (uint16_t)size;
	m->pkt_len = (uint32_t)size;
	m->ol_flags = ol_flags;
	return m;
}

/* data_frame in an mbuf, parsed. */
static struct rte_mbuf *
data_mbuf(struct fake_mbuf *fm, uint8_t *buf)
{
	struct rte_mbuf *m;

	memcpy(buf, data_frame, sizeof(data_frame));
	m = raw_mbuf(fm, buf, sizeof(data_frame), 1, 0);
	pkt_parse(m, pkt_meta(m), 0);
	return m;
}

static void
fuzz_frame(const uint8_t *ctl, const uint8_t *data, size_t size)
{
	struct tcpopt_ctx *ctx = make_ctx(ctl);
	const uint16_t refcnt = (ctl[0] & CTL_READONLY) ? 2 : 1;
	const uint64_t ol_flags = (ctl[0] & CTL_PARTIAL) ?
				  RTE_MBUF_F_TX_TCP_CKSUM : 0;
	static struct fake_mbuf fm;
	struct rte_mbuf *m;
	struct tcpopt_result r;
	uint8_t *buf, *before;

	if (ctx == NULL || size == 0 || size > UINT16_MAX)
		return;
	buf = malloc(size);
	before = malloc(size);
	memcpy(buf, data, size);
	memcpy(before, data, size);
	m = raw_mbuf(&fm, buf, size, refcnt, ol_flags);
	pkt_parse(m, pkt_meta(m), 0);
	tcpopt_process_mbuf(ctx, m, 0, &r);
	if (r.rewrites == 0) {
		CHECK(memcmp(before, buf, size) == 0);
	} else {
		const struct pkt_meta *meta = pkt_meta(m);
		size_t i;

		/* Nothing outside the TCP header may change. */
		for (i = 0; i < size; i++)
			if (before[i] != buf[i])
				CHECK(i >= (size_t)meta->l4_off + 16 &&
				      i < (size_t)meta->l4_off + meta->l4_len);
	}
	/* The burst entry point, with its fast paths, must leave the same
	 * bytes and the same counters as the per-segment one. Policies that
	 * drop are left out: the burst frees what it drops, and this mbuf
	 * has no pool. */
	if (ctl[3] <= TCPOPT_KIND_NOP && ctl[4] == 0 && !(ctl[0] & CTL_MAL_DROP)) {
		struct tcpopt_ctx *ctx2 = make_ctx_in(ctx_mem2, ctl);
		static struct fake_mbuf fm2;
		struct rte_mbuf *m2;
		uint8_t *buf2 = malloc(size);
		struct rte_mbuf *burst[FUZZ_BURST];
		static struct fake_mbuf fm3;
		static uint8_t buf3[sizeof(data_frame)];
		unsigned int i;

		memcpy(buf2, data, size);
		m2 = raw_mbuf(&fm2, buf2, size, refcnt, ol_flags);
		pkt_parse(m2, pkt_meta(m2), 0);
		CHECK(ctx2 != NULL);
		/* A data segment, then this segment FUZZ_BURST - 1 times: it
		 * is judged in every lane of the burst's grouped first loop
		 * (a group of 16, then of 8) but the first, and in its scalar
		 * tail. The reference sees the same segments. */
		burst[0] = data_mbuf(&fm3, buf3);
		for (i = 1; i < FUZZ_BURST; i++)
			burst[i] = m2;
		CHECK(tcpopt_burst(ctx2, burst, FUZZ_BURST) == FUZZ_BURST);
		CHECK(tcpopt_process_mbuf(ctx, data_mbuf(&fm3, buf3), 0,
					  NULL) == TCPOPT_FORWARD);
		for (i = 2; i < FUZZ_BURST; i++)
			tcpopt_process_mbuf(ctx, m, 0, NULL);
		CHECK(memcmp(buf, buf2, size) == 0);
		CHECK(memcmp(tcpopt_counters(ctx), tcpopt_counters(ctx2),
			     sizeof(struct tcpopt_counters)) == 0);
		free(buf2);

		/* The same burst, unparsed, through the one pass. */
		struct tcpopt_ctx *ctx3 = make_ctx_in(ctx_mem3, ctl);
		static struct fake_mbuf fm4, fm5;
		static uint8_t buf5[sizeof(data_frame)];
		uint8_t *buf4 = malloc(size);
		uint64_t err[PKT_ERR_MAX] = { 0 }, non_ip = 0;
		const struct pkt_classify pa = {
			.in_port = 0, .max_frame = UINT16_MAX,
			.err_count = err, .non_ip = &non_ip,
		};
		const struct pkt_meta *meta = pkt_meta(m);
		uint16_t rest;

		CHECK(ctx3 != NULL);
		memcpy(buf4, data, size);
		burst[0] = data_mbuf(&fm5, buf5);
		burst[1] = raw_mbuf(&fm4, buf4, size, refcnt, ol_flags);
		for (i = 2; i < FUZZ_BURST; i++)
			burst[i] = burst[1];
		CHECK(tcpopt_parse_burst(ctx3, burst, FUZZ_BURST, &pa, &rest) ==
		      FUZZ_BURST && rest == 0);
		CHECK(memcmp(buf, buf4, size) == 0);
		CHECK(memcmp(tcpopt_counters(ctx), tcpopt_counters(ctx3),
			     sizeof(struct tcpopt_counters)) == 0);
		for (i = 0; i < PKT_ERR_MAX; i++)
			CHECK(err[i] == (i != PKT_ERR_NONE && meta->err == i ?
					 FUZZ_BURST - 1u : 0));
		CHECK(non_ip == (meta->err == PKT_ERR_NONE &&
				 meta->l3 == PKT_L3_NONE ? FUZZ_BURST - 1u : 0));
		free(buf4);
	}
	free(before);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HDR)
		return 0;
	if (data[0] & CTL_FRAME)
		fuzz_frame(data, data + HDR, size - HDR);
	else
		fuzz_raw(data, data + HDR, size - HDR);
	return 0;
}
