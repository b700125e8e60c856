/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-packet side: count, judge and rewrite the options of one segment. */

#include <netinet/in.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_mbuf.h>

#include "pkt.h"
#include "tcpopt.h"
#include "tcpopt_csum.h"
#include "tcpopt_ctx.h"
#include "tcpopt_walk.h"

/*
 * Second walk, only when something must change: the first walk proved the
 * layout valid, so this one cannot fail. Strip wins over clamp when the
 * MSS option itself is stripped. Every MSS option above the clamp is
 * clamped (a receiver may honour any of them).
 */
static uint8_t
rewrite_options(struct tcpopt_ctx *ctx, uint8_t *tcp, unsigned int hlen,
		bool strip, uint16_t clamp, bool partial,
		struct tcpopt_result *res)
{
	uint8_t nops[TCPOPT_SPACE_MAX], done = 0;
	unsigned int pos = TCPOPT_HDR_MIN;
	struct tcpopt_opt o;

	memset(nops, TCPOPT_KIND_NOP, sizeof(nops));
	while (tcpopt_walk_next(tcp, &pos, hlen, &o) > 0) {
		if (strip && ctx->action[o.kind] == TCPOPT_ACT_STRIP) {
			tcpopt_rewrite(tcp, o.off, nops, o.len, partial);
			ctx->cnt.event[TCPOPT_EV_STRIPPED]++;
			done |= TCPOPT_RW_STRIP;
			if (o.kind == TCPOPT_KIND_MSS)
				res->mss_after = 0;
		} else if (o.kind == TCPOPT_KIND_MSS) {
			if (clamp != 0 && tcpopt_word(tcp + o.off + 2) > clamp) {
				uint8_t v[2] = { (uint8_t)(clamp >> 8),
						 (uint8_t)clamp };

				tcpopt_rewrite(tcp, o.off + 2u, v, 2, partial);
				ctx->cnt.event[TCPOPT_EV_MSS_CLAMPED]++;
				done |= TCPOPT_RW_MSS;
			}
			/* Like mss_before, this follows the last MSS option. */
			res->mss_after = tcpopt_word(tcp + o.off + 2);
		}
	}
	return done;
}

enum tcpopt_verdict
tcpopt_process(struct tcpopt_ctx *ctx, uint8_t *tcp, uint32_t avail,
	       uint8_t ip_version, uint16_t mss_clamp, uint32_t flags,
	       struct tcpopt_result *res)
{
	struct tcpopt_counters *c = &ctx->cnt;
	struct tcpopt_result scratch;
	unsigned int hlen = 0, pos = TCPOPT_HDR_MIN;
	bool drop = false, strip = false, mp_capable = false, clamp_due = false;
	bool signed_seg = false;
	enum tcpopt_seg seg;
	enum tcpopt_mal mal;
	struct tcpopt_opt o;
	uint64_t *kind_cnt;
	uint16_t clamp = 0;
	int r;

	if (res == NULL)
		res = &scratch;
	seg = avail > 13 ? tcpopt_seg_of(tcp[13]) : TCPOPT_SEG_OTHER;
	res->verdict = TCPOPT_FORWARD;
	res->seg = (uint8_t)seg;
	res->malformed = TCPOPT_MAL_NONE;
	res->rewrites = 0;
	res->mss_before = 0;
	res->mss_after = 0;
	c->segments[seg]++;

	mal = tcpopt_hdr_check(tcp, avail, &hlen);
	if (unlikely(mal != TCPOPT_MAL_NONE))
		goto malformed;

	/*
	 * Fast path for what nearly every segment after the handshake looks
	 * like: no options, or NOP NOP TS (RFC 7323, appendix A layout).
	 * Same counts as the walk would give, without walking.
	 */
	if (likely(seg == TCPOPT_SEG_OTHER && !ctx->has_policy)) {
		uint32_t w;

		if (hlen == TCPOPT_HDR_MIN)
			return TCPOPT_FORWARD;
		memcpy(&w, tcp + TCPOPT_HDR_MIN, sizeof(w));
		if (hlen == TCPOPT_HDR_MIN + 12 &&
		    w == rte_cpu_to_be_32(0x0101080a)) {
			c->kind[TCPOPT_SEG_OTHER][TCPOPT_KIND_NOP] += 2;
			c->kind[TCPOPT_SEG_OTHER][TCPOPT_KIND_TS]++;
			return TCPOPT_FORWARD;
		}
	}

	/* MSS is only meaningful, and only clamped, on SYN and SYN/ACK. */
	if (seg != TCPOPT_SEG_OTHER)
		clamp = mss_clamp != 0 ? mss_clamp : ctx->clamp[ip_version == 6];

	kind_cnt = c->kind[seg];
	while ((r = tcpopt_walk_next(tcp, &pos, hlen, &o)) > 0) {
		kind_cnt[o.kind]++;
		if (o.kind == TCPOPT_KIND_MSS) {
			res->mss_before = tcpopt_word(tcp + o.off + 2);
			if (clamp != 0 && res->mss_before > clamp)
				clamp_due = true;
		} else if (o.kind == TCPOPT_KIND_MPTCP) {
			c->mptcp_sub[seg][o.sub]++;
			mp_capable |= o.sub == TCPOPT_MPTCP_MP_CAPABLE;
		} else if (o.kind == 19 || o.kind == 29) {
			signed_seg = true; /* TCP-MD5 (RFC 2385), TCP-AO (RFC 5925) */
		}
		if (ctx->has_policy) {
			drop |= ctx->action[o.kind] == TCPOPT_ACT_DROP;
			strip |= ctx->action[o.kind] == TCPOPT_ACT_STRIP;
		}
	}
	res->mss_after = res->mss_before;
	if (mp_capable) {
		if (seg == TCPOPT_SEG_SYN)
			c->syn_mp_capable++;
		else if (seg == TCPOPT_SEG_SYNACK)
			c->synack_mp_capable++;
	}
	mal = r < 0 ? (enum tcpopt_mal)-r : TCPOPT_MAL_NONE;
	if (unlikely(drop)) {
		/* An explicit policy on a kind we decoded outranks malformed. */
		if (mal != TCPOPT_MAL_NONE) {
			c->malformed[mal]++;
			res->malformed = (uint8_t)mal;
		}
		c->event[TCPOPT_EV_DROPPED_BY_POLICY]++;
		res->verdict = TCPOPT_DROP;
		return TCPOPT_DROP;
	}
	if (unlikely(mal != TCPOPT_MAL_NONE))
		goto malformed;
	/* The MD5 and AO signatures cover the options: a clamped MSS would
	 * make the peer discard the SYN and the connection would never open.
	 * Leave signed segments as they are (an explicit strip policy still
	 * applies: the operator asked for it by kind). */
	if (unlikely(clamp_due && signed_seg)) {
		c->event[TCPOPT_EV_CLAMP_SKIPPED_SIGNED]++;
		clamp_due = false;
	}
	if (likely(!strip && !clamp_due))
		return TCPOPT_FORWARD;

	if (flags & TCPOPT_F_READONLY) {
		c->event[TCPOPT_EV_REWRITE_SKIPPED]++;
		return TCPOPT_FORWARD;
	}
	res->rewrites = rewrite_options(ctx, tcp, hlen, strip,
					clamp_due ? clamp : 0,
					flags & TCPOPT_F_CSUM_PARTIAL, res);
	if (res->rewrites != 0 && (flags & TCPOPT_F_CSUM_PARTIAL))
		c->event[TCPOPT_EV_CSUM_OFFLOADED]++;
	return TCPOPT_FORWARD;

malformed:
	/* The layout cannot be trusted: never rewrite, only count or drop. */
	c->malformed[mal]++;
	res->malformed = (uint8_t)mal;
	res->mss_after = res->mss_before;
	if (ctx->malformed_drop) {
		c->event[TCPOPT_EV_DROPPED_MALFORMED]++;
		res->verdict = TCPOPT_DROP;
		return TCPOPT_DROP;
	}
	return TCPOPT_FORWARD;
}

enum tcpopt_verdict
tcpopt_process_mbuf(struct tcpopt_ctx *ctx, struct rte_mbuf *m,
		    uint16_t mss_clamp, struct tcpopt_result *res)
{
	const struct pkt_meta *meta = pkt_meta(m);
	uint32_t end, avail, flags = 0;

	/* pkt_parse() leaves l4_off set when the TCP header is truncated or
	 * its data offset is bad: those are ours to classify and count. */
	if (meta->l4_proto != IPPROTO_TCP ||
	    !((meta->flags & PKT_F_L4) ||
	      (meta->l4_off != 0 && (meta->err == PKT_ERR_TCP_DOFF ||
				     meta->err == PKT_ERR_TRUNC_L4)))) {
		ctx->cnt.event[TCPOPT_EV_NO_TCP_HEADER]++;
		if (res != NULL)
			memset(res, 0, sizeof(*res));
		return TCPOPT_FORWARD;
	}
	/* The segment ends where the IP datagram ends, not at the Ethernet
	 * padding; and only the first mbuf segment is read (pkt.h). */
	end = rte_pktmbuf_data_len(m);
	if (meta->l3_len != 0 && (uint32_t)meta->l3_off + meta->l3_len < end)
		end = (uint32_t)meta->l3_off + meta->l3_len;
	avail = end > meta->l4_off ? end - meta->l4_off : 0;
	if ((m->ol_flags & RTE_MBUF_F_TX_L4_MASK) == RTE_MBUF_F_TX_TCP_CKSUM ||
	    (m->ol_flags & RTE_MBUF_F_TX_TCP_SEG))
		flags |= TCPOPT_F_CSUM_PARTIAL;
	/* Writing into a buffer another mbuf also points at would change
	 * that packet too. */
	if (!RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1)
		flags |= TCPOPT_F_READONLY;
	return tcpopt_process(ctx,
			      rte_pktmbuf_mtod_offset(m, uint8_t *, meta->l4_off),
			      avail, meta->l3, mss_clamp, flags, res);
}

/*
 * Burst fast paths. With no per-kind policy, three layouts make up nearly
 * all real traffic, and for them the walk's outcome is known from a few
 * fixed bytes: a segment without SYN and without options, one with
 * NOP NOP TS (RFC 7323, appendix A), and the SYN or SYN/ACK layout Linux
 * sends: MSS, SACK-permitted, TS, NOP, WS (20 bytes, every kind and length
 * byte fixed). They are counted in locals and added once per burst; the
 * counts are exactly what tcpopt_process() would give. Anything else,
 * including such a SYN whose clamp needs a write that must not happen
 * here (shared mbuf, checksum offload), takes tcpopt_process_mbuf().
 */
#define TCPOPT_W_NOP_NOP_TS   0x0101080au
#define TCPOPT_W_MSS          0x02040000u /* & 0xffff0000 */
#define TCPOPT_W_SACKOK_TS    0x0402080au
#define TCPOPT_W_NOP_WS       0x01030300u /* & 0xffffff00 */

static inline uint32_t
tcpopt_raw32_at(const uint8_t *p)
{
	uint32_t w;

	memcpy(&w, p, sizeof(w));
	return w;
}

/* Compared as stored (network order): the constants swap at compile time. */
static inline bool
tcpopt_linux_syn_layout(const uint8_t *tcp)
{
	return (tcpopt_raw32_at(tcp + 20) & RTE_BE32(0xffff0000u)) == RTE_BE32(TCPOPT_W_MSS) &&
	       tcpopt_raw32_at(tcp + 24) == RTE_BE32(TCPOPT_W_SACKOK_TS) &&
	       (tcpopt_raw32_at(tcp + 36) & RTE_BE32(0xffffff00u)) == RTE_BE32(TCPOPT_W_NOP_WS);
}

uint16_t
tcpopt_burst(struct tcpopt_ctx *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	/* What pkt_parse() said of the TCP header (flags set only for a
	 * valid TCP header within the first mbuf segment): */
	const uint16_t shape_mask = PKT_F_L4 | PKT_F_TCP_SYN | PKT_F_TCP_NOOPT |
				    PKT_F_TCP_TSOPT;
	/* A segment the fast path may rewrite in place: direct, not
	 * offloaded. Stricter than tcpopt_process_mbuf() (any tx L4 request
	 * goes the slow way), so one test does. */
	const uint64_t unsafe = RTE_MBUF_F_INDIRECT | RTE_MBUF_F_EXTERNAL |
				RTE_MBUF_F_TX_L4_MASK | RTE_MBUF_F_TX_TCP_SEG;
	struct tcpopt_counters *c = &ctx->cnt;
	uint64_t other = 0, other_ts = 0, syn[2] = { 0, 0 }, clamped = 0;
	const uint16_t clamp4 = ctx->clamp[0], clamp6 = ctx->clamp[1];
	uint16_t i, kept = 0;

	if (unlikely(ctx->has_policy)) {
		for (i = 0; i < n; i++) {
			if (likely(tcpopt_process_mbuf(ctx, pkts[i], 0, NULL) ==
				   TCPOPT_FORWARD))
				pkts[kept++] = pkts[i];
			else
				rte_pktmbuf_free(pkts[i]); /* counted there */
		}
		return kept;
	}
	/* Bursts of established traffic: nothing to move, only to count. */
	for (i = 0; i < n; i++) {
		const uint16_t shape = pkt_meta(pkts[i])->flags & shape_mask;

		if (shape == (PKT_F_L4 | PKT_F_TCP_TSOPT))
			other_ts++;
		else if (shape != (PKT_F_L4 | PKT_F_TCP_NOOPT))
			break;
	}
	other = i;
	kept = i;
	for (; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const struct pkt_meta *meta = pkt_meta(m);
		const uint16_t shape = meta->flags & shape_mask;

		/* A segment after the handshake with no options or with
		 * NOP NOP TS is only counted: the parser read it already. */
		if (likely(shape == (PKT_F_L4 | PKT_F_TCP_NOOPT) ||
			   shape == (PKT_F_L4 | PKT_F_TCP_TSOPT))) {
			other++;
			other_ts += shape == (PKT_F_L4 | PKT_F_TCP_TSOPT);
			pkts[kept++] = m;
			continue;
		}
		if (shape == (PKT_F_L4 | PKT_F_TCP_SYN)) {
			uint8_t *tcp = rte_pktmbuf_mtod_offset(m, uint8_t *,
							       meta->l4_off);

			/* 40-byte header (pkt_parse() checked it is all in
			 * the first segment) in the Linux SYN layout. */
			if ((tcp[12] & 0xf0u) == 0xa0u && tcpopt_linux_syn_layout(tcp)) {
				uint16_t clamp = meta->l3 == PKT_L3_IPV6 ? clamp6 : clamp4;
				uint16_t mss_be;
				bool due;

				memcpy(&mss_be, tcp + 22, 2);
				due = clamp != 0 && __builtin_bswap16(mss_be) > clamp;
				if (!due || ((m->ol_flags & unsafe) == 0 &&
					     rte_mbuf_refcnt_read(m) == 1)) {
					if (due) {
						tcpopt_replace16(tcp, 22,
							__builtin_bswap16(clamp));
						clamped++;
					}
					syn[(tcp[13] & TCPOPT_TH_ACK) != 0]++;
					pkts[kept++] = m;
					continue;
				}
			}
		}
		if (likely(tcpopt_process_mbuf(ctx, m, 0, NULL) ==
			   TCPOPT_FORWARD))
			pkts[kept++] = m;
		else
			rte_pktmbuf_free(m); /* counted by tcpopt_process() */
	}
	c->segments[TCPOPT_SEG_OTHER] += other;
	c->kind[TCPOPT_SEG_OTHER][TCPOPT_KIND_NOP] += 2 * other_ts;
	c->kind[TCPOPT_SEG_OTHER][TCPOPT_KIND_TS] += other_ts;
	for (i = 0; i < 2; i++) {
		uint64_t *k;

		if (syn[i] == 0)
			continue;
		k = c->kind[TCPOPT_SEG_SYN + i];
		c->segments[TCPOPT_SEG_SYN + i] += syn[i];
		k[TCPOPT_KIND_MSS] += syn[i];
		k[TCPOPT_KIND_SACK_PERM] += syn[i];
		k[TCPOPT_KIND_TS] += syn[i];
		k[TCPOPT_KIND_NOP] += syn[i];
		k[TCPOPT_KIND_WS] += syn[i];
	}
	c->event[TCPOPT_EV_MSS_CLAMPED] += clamped;
	return kept;
}
