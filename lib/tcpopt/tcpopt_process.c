/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-packet side: count, judge and rewrite the options of one segment. */

#include <netinet/in.h>
#include <stddef.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "pkt.h"
#include "pkt_tcpopt.h"
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
	if (pkt_tcp_csum_partial(m))
		flags |= TCPOPT_F_CSUM_PARTIAL;
	if (pkt_data_shared(m))
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

/* What pkt_parse() said of the TCP header (flags set only for a valid TCP
 * header within the first mbuf segment). */
#define TCPOPT_SHAPE_MASK (PKT_F_L4 | PKT_F_TCP_SYN | PKT_F_TCP_NOOPT | \
			   PKT_F_TCP_TSOPT)

/*
 * The metadata of a candidate for the SYN path: a SYN or SYN/ACK with a
 * 40-byte header (l4_len is doff * 4; pkt_parse() checked that it is all
 * in the first segment) over IPv4 or IPv6 (l3 & 0xfd == 4, so l3 indexes
 * the context's clamp table).
 */
#define TCPOPT_SYN_L3_MASK 0xfdu

#ifdef __SSE4_1__
#include <smmintrin.h>

/* flags through l4_len of struct pkt_meta, as one 16-byte window. */
static const struct pkt_meta tcpopt_syn_meta = {
	.flags = PKT_F_L4 | PKT_F_TCP_SYN, .l3 = PKT_L3_IPV4, .l4_len = 40,
};
static const struct pkt_meta tcpopt_syn_meta_mask = {
	.flags = TCPOPT_SHAPE_MASK, .l3 = TCPOPT_SYN_L3_MASK, .l4_len = 0xffff,
};

static inline __m128i
tcpopt_meta_window(const struct pkt_meta *meta)
{
	RTE_BUILD_BUG_ON(offsetof(struct pkt_meta, l4_len) + 2 -
			 offsetof(struct pkt_meta, flags) > 16 ||
			 offsetof(struct pkt_meta, flags) + 16 >
			 sizeof(struct pkt_meta));
	return _mm_loadu_si128((const __m128i *)(const void *)&meta->flags);
}

static inline bool
tcpopt_syn_meta_ok(const struct pkt_meta *meta)
{
	return _mm_testz_si128(_mm_xor_si128(tcpopt_meta_window(meta),
				tcpopt_meta_window(&tcpopt_syn_meta)),
			       tcpopt_meta_window(&tcpopt_syn_meta_mask));
}

/* tcp + 24..39 in the Linux layout: SACK-permitted, TS kind and length,
 * the two timestamps (any value), NOP, WS kind and length, the shift (any
 * value). */
static inline bool
tcpopt_syn_layout_24(const uint8_t *tcp)
{
	const __m128i tmpl = _mm_setr_epi8(4, 2, 8, 10, 0, 0, 0, 0,
					   0, 0, 0, 0, 1, 3, 3, 0);
	const __m128i mask = _mm_setr_epi8(-1, -1, -1, -1, 0, 0, 0, 0,
					   0, 0, 0, 0, -1, -1, -1, 0);
	const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(tcp + 24));

	return _mm_testz_si128(_mm_xor_si128(v, tmpl), mask);
}
#else
static inline bool
tcpopt_syn_meta_ok(const struct pkt_meta *meta)
{
	return (meta->flags & TCPOPT_SHAPE_MASK) == (PKT_F_L4 | PKT_F_TCP_SYN) &&
	       meta->l4_len == 40 &&
	       (meta->l3 & TCPOPT_SYN_L3_MASK) == PKT_L3_IPV4;
}

/* The same with two words, compared as stored. */
static inline bool
tcpopt_syn_layout_24(const uint8_t *tcp)
{
	return pkt_raw32(tcp + 24) == RTE_BE32(0x0402080au) &&
	       (pkt_raw32(tcp + 36) & RTE_BE32(0xffffff00u)) ==
		       RTE_BE32(0x01030300u);
}
#endif

/* What one burst counted off the SYN fast path, added to the context at
 * its end. Only tcpopt_burst_other() and the first loop touch it, so it
 * may live in memory while the fast path keeps its registers. */
struct tcpopt_burst_acc {
	uint64_t other;     /* data segments counted from their shape */
	uint64_t other_ts;  /* of which NOP NOP TS */
	uint64_t slow;      /* through tcpopt_process_mbuf() */
	uint64_t unclamped; /* Linux-layout SYNs at or below the clamp */
	uint64_t synack;    /* of which SYN/ACKs, times TCPOPT_TH_ACK */
};

/* A segment the fast path may rewrite in place: direct, not offloaded.
 * Stricter than tcpopt_process_mbuf() (any tx L4 request goes the slow
 * way), so one test does. Every bit is in the upper half of ol_flags, so
 * the test reads only that. */
#define TCPOPT_MBUF_UNSAFE (RTE_MBUF_F_INDIRECT | RTE_MBUF_F_EXTERNAL | \
			    RTE_MBUF_F_TX_L4_MASK | RTE_MBUF_F_TX_TCP_SEG)

#ifdef __SSE4_1__
/* data_off, refcnt, nb_segs, port and ol_flags are one 16-byte window of
 * the mbuf: refcnt == 1 and no unsafe flag is one xor and one ptest. */
static inline bool
tcpopt_mbuf_writable(const struct rte_mbuf *m)
{
	const __m128i tmpl = _mm_set_epi64x(0, 1ll << 16);
	const __m128i mask = _mm_set_epi64x((long long)TCPOPT_MBUF_UNSAFE,
					    0xffffll << 16);
	const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)
					  &m->data_off);

	RTE_BUILD_BUG_ON(offsetof(struct rte_mbuf, refcnt) !=
			 offsetof(struct rte_mbuf, data_off) + 2 ||
			 offsetof(struct rte_mbuf, ol_flags) !=
			 offsetof(struct rte_mbuf, data_off) + 8 ||
			 sizeof(m->refcnt) != 2 || sizeof(m->ol_flags) != 8);
	return _mm_testz_si128(_mm_xor_si128(v, tmpl), mask);
}
#else
static inline bool
tcpopt_mbuf_writable(const struct rte_mbuf *m)
{
	RTE_BUILD_BUG_ON((TCPOPT_MBUF_UNSAFE & 0xffffffffu) != 0);
	return ((uint32_t)(m->ol_flags >> 32) &
		(uint32_t)(TCPOPT_MBUF_UNSAFE >> 32)) == 0 &&
	       rte_mbuf_refcnt_read(m) == 1;
}
#endif

/* Neither a data segment nor a SYN the fast path clamps: a SYN in the
 * Linux layout at or below the clamp (syn_cand: its metadata passed
 * tcpopt_syn_meta_ok()), or the full walk. false when the segment was
 * dropped (and freed). */
static __rte_noinline bool
tcpopt_walk_other(struct tcpopt_ctx *ctx, struct rte_mbuf *m,
		  struct tcpopt_burst_acc *a, bool syn_cand)
{
	const struct pkt_meta *meta = pkt_meta(m);

	/* A SYN in the Linux layout at or below the clamp: counted as the
	 * fast path counts, without a write. */
	if (syn_cand) {
		const uint8_t *tcp = rte_pktmbuf_mtod_offset(m, const uint8_t *,
							     meta->l4_off);
		uint32_t w;

		memcpy(&w, tcp + 20, 4);
		w = rte_be_to_cpu_32(w);
		if ((w >> 16) == 0x0204 && tcpopt_syn_layout_24(tcp) &&
		    w - ctx->syn_lo[meta->l3] >= ctx->syn_range[meta->l3]) {
			a->unclamped++;
			a->synack += tcp[13] & TCPOPT_TH_ACK;
			return true;
		}
	}
	a->slow++;
	if (likely(tcpopt_process_mbuf(ctx, m, 0, NULL) == TCPOPT_FORWARD))
		return true;
	rte_pktmbuf_free(m); /* counted by tcpopt_process() */
	return false;
}

/* Everything but a SYN the fast path clamps: a data segment counted from
 * its shape, or tcpopt_walk_other(). false when the segment was dropped
 * (and freed). */
static __rte_noinline bool
tcpopt_burst_other(struct tcpopt_ctx *ctx, struct rte_mbuf *m,
		   struct tcpopt_burst_acc *a)
{
	const struct pkt_meta *meta = pkt_meta(m);
	const uint16_t shape = meta->flags & TCPOPT_SHAPE_MASK;

	/* A segment after the handshake with no options or with NOP NOP TS
	 * is only counted: the parser read it already. */
	if (shape == (PKT_F_L4 | PKT_F_TCP_NOOPT) ||
	    shape == (PKT_F_L4 | PKT_F_TCP_TSOPT)) {
		a->other++;
		a->other_ts += shape == (PKT_F_L4 | PKT_F_TCP_TSOPT);
		return true;
	}
	return tcpopt_walk_other(ctx, m, a, tcpopt_syn_meta_ok(meta));
}

/*
 * The clamp of a SYN or SYN/ACK whose metadata passed the candidate test:
 * MSS kind, length and a value above the clamp at tcp + 20, the rest of
 * the Linux layout, and an mbuf it may write. true when it was clamped;
 * *synack then grows by tcp[13] & ACK.
 */
static __rte_always_inline bool
tcpopt_syn_clamp(const struct tcpopt_ctx *ctx, struct rte_mbuf *m,
		 const struct pkt_meta *meta, uint64_t *synack,
		 const bool uniform)
{
	uint8_t *tcp = rte_pktmbuf_mtod_offset(m, uint8_t *, meta->l4_off);
	/* 4 or 6 (the candidate test); one clamp for both: either. */
	const unsigned int v = uniform ? PKT_L3_IPV4 : meta->l3;
	uint32_t w;
	uint16_t mss_be, hc;

	memcpy(&w, tcp + 20, 4);
	if (likely(rte_be_to_cpu_32(w) - ctx->syn_lo[v] < ctx->syn_range[v] &&
		   tcpopt_syn_layout_24(tcp) && tcpopt_mbuf_writable(m))) {
		memcpy(&mss_be, tcp + 22, 2);
		memcpy(&hc, tcp + TCPOPT_CSUM_OFF, 2);
		hc = tcpopt_csum_update16_f(hc, mss_be, ctx->syn_csum_k[v],
					    ctx->csum_fold);
		memcpy(tcp + 22, &ctx->syn_mss_be[v], 2);
		memcpy(tcp + TCPOPT_CSUM_OFF, &hc, 2);
		*synack += tcp[13] & TCPOPT_TH_ACK;
		return true;
	}
	return false;
}

/*
 * One segment of a burst: counted, maybe clamped. false when it was
 * dropped (and freed). Every segment that a->other and a->slow do not
 * count is a Linux-layout SYN or SYN/ACK, so the clamping path counts only
 * SYN/ACKs, as tcp[13] & ACK (divided out at the end of the burst): about
 * 40 instructions per clamped SYN (perf/README.md, tcpopt).
 */
static __rte_always_inline bool
tcpopt_burst_one(struct tcpopt_ctx *ctx, struct rte_mbuf *m,
		 uint64_t *synack, struct tcpopt_burst_acc *a,
		 const bool uniform)
{
	const struct pkt_meta *meta = pkt_meta(m);

	/* Data segments rarely get here: the first loop of tcpopt_burst()
	 * takes every leading one. So SYNs are tested first. */
	if (likely(tcpopt_syn_meta_ok(meta)) &&
	    likely(tcpopt_syn_clamp(ctx, m, meta, synack, uniform)))
		return true;
	return tcpopt_burst_other(ctx, m, a);
}

/*
 * The leading run of data segments of a burst (shape L4|NOOPT or
 * L4|TSOPT): returns the index (k < 0 counts up to 0, end[k] is the
 * segment) of the first segment that is not one, or 0; *ts gets the
 * number of NOP NOP TS segments among them. Groups of segments are judged
 * with one test, and the TS segments are counted without a branch: with
 * d = shape - (L4|NOOPT), a data segment has d = 0 or d = TCPOPT_D_TS, and
 * anything else has some other bit of d set (the subtraction wraps below).
 */
#define TCPOPT_D_TS ((PKT_F_L4 | PKT_F_TCP_TSOPT) - (PKT_F_L4 | PKT_F_TCP_NOOPT))

static inline uint32_t
tcpopt_shape_d(struct rte_mbuf *m)
{
	return (uint32_t)(pkt_meta(m)->flags & TCPOPT_SHAPE_MASK) -
	       (PKT_F_L4 | PKT_F_TCP_NOOPT);
}

#ifdef __SSE4_1__
/* d of eight segments, one per 16-bit lane: each shape is read straight
 * into its lane (pinsrw from memory), two instructions per segment. */
static inline __m128i
tcpopt_shape_d8(struct rte_mbuf *const *p)
{
	__m128i v = _mm_undefined_si128();

	v = _mm_insert_epi16(v, pkt_meta(p[0])->flags, 0);
	v = _mm_insert_epi16(v, pkt_meta(p[1])->flags, 1);
	v = _mm_insert_epi16(v, pkt_meta(p[2])->flags, 2);
	v = _mm_insert_epi16(v, pkt_meta(p[3])->flags, 3);
	v = _mm_insert_epi16(v, pkt_meta(p[4])->flags, 4);
	v = _mm_insert_epi16(v, pkt_meta(p[5])->flags, 5);
	v = _mm_insert_epi16(v, pkt_meta(p[6])->flags, 6);
	v = _mm_insert_epi16(v, pkt_meta(p[7])->flags, 7);
	/* mod 2^16: 0 or TCPOPT_D_TS only for the two data shapes */
	return _mm_sub_epi16(_mm_and_si128(v, _mm_set1_epi16(TCPOPT_SHAPE_MASK)),
			     _mm_set1_epi16(PKT_F_L4 | PKT_F_TCP_NOOPT));
}
#endif

static inline ptrdiff_t
tcpopt_data_run(struct rte_mbuf **end, ptrdiff_t k, uint64_t *ts)
{
	uint64_t sum = 0; /* of d: TCPOPT_D_TS per TS segment */
	uint64_t cnt = 0; /* TS segments counted one each */
	uint32_t d;

	RTE_BUILD_BUG_ON(TCPOPT_D_TS != 1 << 9);
	/* A burst of SYNs should not pay for a group: look at the first. */
	if (k != 0 && (tcpopt_shape_d(end[k]) & ~(uint32_t)TCPOPT_D_TS) != 0)
		goto out;
#ifdef __SSE4_1__
	/* Sixteen shapes per group, then eight, one test for the group. */
	if (k <= -8) {
		const __m128i not_ts = _mm_set1_epi16((short)~TCPOPT_D_TS);
		__m128i acc = _mm_setzero_si128(); /* d >> 9: 1 per TS */
		__m128i d0, d1;

		for (; k <= -16; k += 16) {
			d0 = tcpopt_shape_d8(end + k);
			d1 = tcpopt_shape_d8(end + k + 8);
			if (!_mm_testz_si128(_mm_or_si128(d0, d1), not_ts))
				break;
			/* 0 + 0x200 + 0x200 fits a lane */
			acc = _mm_add_epi16(acc, _mm_srli_epi16(
						_mm_add_epi16(d0, d1), 9));
		}
		if (k <= -8) {
			d0 = tcpopt_shape_d8(end + k);
			if (_mm_testz_si128(d0, not_ts)) {
				acc = _mm_add_epi16(acc, _mm_srli_epi16(d0, 9));
				k += 8;
			}
		}
		/* Lanes hold at most 65535 / 8: add them as 32-bit pairs. */
		acc = _mm_madd_epi16(acc, _mm_set1_epi16(1));
		acc = _mm_add_epi32(acc, _mm_shuffle_epi32(acc, 0x4e));
		acc = _mm_add_epi32(acc, _mm_shuffle_epi32(acc, 0xb1));
		cnt = (uint32_t)_mm_cvtsi128_si32(acc);
	}
#else
	/* Four per group, one test for the four. */
	for (; k <= -4; k += 4) {
		const uint32_t d0 = tcpopt_shape_d(end[k]);
		const uint32_t d1 = tcpopt_shape_d(end[k + 1]);
		const uint32_t d2 = tcpopt_shape_d(end[k + 2]);
		const uint32_t d3 = tcpopt_shape_d(end[k + 3]);

		if (((d0 | d1 | d2 | d3) & ~(uint32_t)TCPOPT_D_TS) != 0)
			break;
		sum += d0 + d1 + d2 + d3;
	}
#endif
	/* The rest one by one, up to the first that is not data. */
	for (; k != 0; k++) {
		d = tcpopt_shape_d(end[k]);
		if ((d & ~(uint32_t)TCPOPT_D_TS) != 0)
			break;
		sum += d;
	}
out:
	*ts = cnt + sum / TCPOPT_D_TS;
	return k;
}

static __rte_always_inline uint16_t
tcpopt_burst_loop(struct tcpopt_ctx *ctx, struct rte_mbuf **pkts,
		  uint16_t n, ptrdiff_t k, uint64_t *synack,
		  struct tcpopt_burst_acc *a, const bool uniform)
{
	struct rte_mbuf **const end = pkts + n;
	uint16_t kept;

	/* Until a segment is dropped, every one stays where it is. */
	for (; k != 0; k++) {
		if (unlikely(!tcpopt_burst_one(ctx, end[k], synack, a,
					       uniform))) {
			kept = (uint16_t)(n + k);
			for (k++; k != 0; k++)
				if (tcpopt_burst_one(ctx, end[k], synack, a,
						     uniform))
					pkts[kept++] = end[k];
			return kept;
		}
	}
	return n;
}

/* n data segments counted from their shape, ts of them NOP NOP TS: what
 * the full walk would add. */
static inline void
tcpopt_count_data(struct tcpopt_counters *c, uint64_t n, uint64_t ts)
{
	c->segments[TCPOPT_SEG_OTHER] += n;
	c->kind[TCPOPT_SEG_OTHER][TCPOPT_KIND_NOP] += 2 * ts;
	c->kind[TCPOPT_SEG_OTHER][TCPOPT_KIND_TS] += ts;
}

/*
 * The counts of n segments of which a counted the data segments, the slow
 * ones and the unclamped Linux-layout SYNs: every other one is a clamped
 * Linux-layout SYN or SYN/ACK, synack + a->synack of them SYN/ACKs (times
 * TCPOPT_TH_ACK).
 */
static inline void
tcpopt_burst_account(struct tcpopt_counters *c, uint64_t n,
		     const struct tcpopt_burst_acc *a, uint64_t synack)
{
	uint64_t fast;
	unsigned int i;

	/* A burst of SYNs has no data segment. */
	if (a->other != 0)
		tcpopt_count_data(c, a->other, a->other_ts);
	fast = n - a->other - a->slow;
	if (fast == 0)
		return;
	synack = (synack + a->synack) / TCPOPT_TH_ACK;
	for (i = 0; i < 2; i++) {
		const uint64_t cnt = i == 0 ? fast - synack : synack;
		uint64_t *kc = c->kind[TCPOPT_SEG_SYN + i];

		c->segments[TCPOPT_SEG_SYN + i] += cnt;
		kc[TCPOPT_KIND_MSS] += cnt;
		kc[TCPOPT_KIND_SACK_PERM] += cnt;
		kc[TCPOPT_KIND_TS] += cnt;
		kc[TCPOPT_KIND_NOP] += cnt;
		kc[TCPOPT_KIND_WS] += cnt;
	}
	c->event[TCPOPT_EV_MSS_CLAMPED] += fast - a->unclamped;
}

/* Everything after the leading run of data segments. */
static __rte_noinline uint16_t
tcpopt_burst_mixed(struct tcpopt_ctx *ctx, struct rte_mbuf **pkts,
		   uint16_t n, ptrdiff_t k, uint64_t other_ts)
{
	struct tcpopt_counters *c = &ctx->cnt;
	struct tcpopt_burst_acc a;
	uint64_t synack = 0;
	uint16_t kept;

	a = (struct tcpopt_burst_acc){ .other = (uint64_t)(n + k),
				       .other_ts = other_ts };
	/* The same clamp over IPv4 and IPv6 (mss_clamp, not mtu) saves the
	 * SYN loop reading the IP version. */
	if (likely(ctx->syn_uniform))
		kept = tcpopt_burst_loop(ctx, pkts, n, k, &synack, &a, true);
	else
		kept = tcpopt_burst_loop(ctx, pkts, n, k, &synack, &a, false);
	tcpopt_burst_account(c, n, &a, synack);
	return kept;
}

static __rte_noinline uint16_t
tcpopt_burst_policy(struct tcpopt_ctx *ctx, struct rte_mbuf **pkts,
		    uint16_t n)
{
	uint16_t i, kept;

	for (i = 0, kept = 0; i < n; i++) {
		if (likely(tcpopt_process_mbuf(ctx, pkts[i], 0, NULL) ==
			   TCPOPT_FORWARD))
			pkts[kept++] = pkts[i];
		else
			rte_pktmbuf_free(pkts[i]); /* counted there */
	}
	return kept;
}

uint16_t
tcpopt_burst(struct tcpopt_ctx *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	uint64_t other_ts;
	ptrdiff_t k; /* end[k] is the segment at hand, k < 0 */

	if (unlikely(ctx->has_policy))
		return tcpopt_burst_policy(ctx, pkts, n);
	/* Bursts of established traffic: nothing to move, only to count.
	 * (The loops count k up to 0: one test fewer per segment.) */
	k = tcpopt_data_run(pkts + n, -(ptrdiff_t)n, &other_ts);
	if (likely(k == 0)) {
		tcpopt_count_data(&ctx->cnt, n, other_ts);
		return n;
	}
	return tcpopt_burst_mixed(ctx, pkts, n, k, other_ts);
}

/*
 * tcpopt_parse_burst(): the parser and tcpopt_burst() in one pass. Each
 * segment's metadata is tested right after pkt_parse() wrote it, so the
 * tests are scalar loads the store buffer forwards: a 16-byte load of
 * fields just stored one by one (tcpopt_syn_meta_ok()) would wait for
 * the stores to reach the cache.
 */
#define TCPOPT_D_SYN \
	((uint32_t)(PKT_F_L4 | PKT_F_TCP_SYN) - (PKT_F_L4 | PKT_F_TCP_NOOPT))

/* What the pass counts in registers, added once at the end. */
struct tcpopt_parse_acc {
	uint64_t data;   /* data segments (shape L4|NOOPT or L4|TSOPT) */
	uint64_t ts;     /* TCPOPT_D_TS per NOP NOP TS one */
	uint64_t synack; /* clamped SYN/ACKs, times TCPOPT_TH_ACK */
	uint64_t non_ip;
};

/* One frame: parsed, counted, maybe clamped. false when it was dropped
 * (and freed). */
static __rte_always_inline bool
tcpopt_parse_one(struct tcpopt_ctx *ctx, struct rte_mbuf *m,
		 const struct pkt_classify *c, struct tcpopt_parse_acc *l,
		 struct tcpopt_burst_acc *a, const bool uniform)
{
	struct pkt_meta *meta = pkt_meta(m);
	uint32_t d;
	bool cand;

	if (unlikely(pkt_classify_one(m, c, &l->non_ip) != PKT_ERR_NONE))
		return tcpopt_walk_other(ctx, m, a, false);
	d = tcpopt_shape_d(m);
	if ((d & ~(uint32_t)TCPOPT_D_TS) == 0) {
		l->data++;
		l->ts += d;
		return true;
	}
	/* tcpopt_syn_meta_ok(), one field at a time */
	cand = d == TCPOPT_D_SYN && meta->l4_len == 40 &&
	       (meta->l3 & TCPOPT_SYN_L3_MASK) == PKT_L3_IPV4;
	if (likely(cand) &&
	    likely(tcpopt_syn_clamp(ctx, m, meta, &l->synack, uniform)))
		return true;
	return tcpopt_walk_other(ctx, m, a, cand);
}

static __rte_always_inline uint16_t
tcpopt_parse_loop(struct tcpopt_ctx *ctx, struct rte_mbuf **pkts, uint16_t n,
		  const struct pkt_classify *c, uint16_t *rest,
		  const bool uniform)
{
	struct tcpopt_burst_acc a = { 0 };
	struct tcpopt_parse_acc l = { 0 };
	const uint32_t max_frame = c->max_frame;
	struct rte_mbuf *m;
	uint16_t i, kept;

	/* Until a frame is dropped, every one stays where it is. */
	for (i = 0; i < n; i++) {
		m = pkts[i];
		if (i + 2 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 2], void *));
		if (unlikely(pkt_classify_stops(m, max_frame)))
			break;
		if (unlikely(!tcpopt_parse_one(ctx, m, c, &l, &a, uniform)))
			goto compact;
	}
	kept = i;
	goto done;
compact:
	for (kept = i++; i < n; i++) {
		m = pkts[i];
		if (i + 2 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 2], void *));
		if (unlikely(pkt_classify_stops(m, max_frame)))
			break;
		if (tcpopt_parse_one(ctx, m, c, &l, &a, uniform))
			pkts[kept++] = m;
	}
done:
	/* The frames not looked at follow the survivors. */
	if (unlikely(i < n) && kept < i)
		memmove(pkts + kept, pkts + i, (size_t)(n - i) * sizeof(*pkts));
	*rest = (uint16_t)(n - i);
	*c->non_ip += l.non_ip;
	a.other = l.data;
	a.other_ts = l.ts / TCPOPT_D_TS;
	tcpopt_burst_account(&ctx->cnt, i, &a, l.synack);
	return kept;
}

/* With a per-kind policy every segment takes the walk: classify, then
 * tcpopt_burst_policy(). */
static __rte_noinline uint16_t
tcpopt_parse_policy(struct tcpopt_ctx *ctx, struct rte_mbuf **pkts,
		    uint16_t n, const struct pkt_classify *c, uint16_t *rest)
{
	uint16_t i = pkt_classify_burst(pkts, n, c);
	uint16_t kept = tcpopt_burst_policy(ctx, pkts, i);

	if (i < n && kept < i)
		memmove(pkts + kept, pkts + i, (size_t)(n - i) * sizeof(*pkts));
	*rest = (uint16_t)(n - i);
	return kept;
}

uint16_t
tcpopt_parse_burst(struct tcpopt_ctx *ctx, struct rte_mbuf **pkts,
		   uint16_t n, const struct pkt_classify *c, uint16_t *rest)
{
	if (unlikely(ctx->has_policy))
		return tcpopt_parse_policy(ctx, pkts, n, c, rest);
	if (likely(ctx->syn_uniform))
		return tcpopt_parse_loop(ctx, pkts, n, c, rest, true);
	return tcpopt_parse_loop(ctx, pkts, n, c, rest, false);
}
