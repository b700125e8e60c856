/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcpopt_burst() and tcpopt_parse_burst() against tcpopt_process_mbuf(),
 * their reference: random bursts built around the layouts the fast paths
 * recognise (the Linux SYN layout with MSS values around the clamp, data
 * segments, near misses, malformed options, shared and offloaded mbufs,
 * bad checksums) must leave the same bytes, the same counters and the
 * same survivors in the same order. tcpopt_parse_burst() must also count
 * what pkt_parse() says, and stop before a chained or oversize frame,
 * leaving it and the rest untouched. And the RFC 1624 update in
 * tcpopt_csum.h against the two-fold formula it replaced, for every sum it
 * can be given.
 *
 * Built twice: as it is, and with the library compiled without SSE4.1
 * (test_tcpopt_burst_scalar), so both forms of the fast path's checks are
 * held to the same reference.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "pkt.h"
#include "tcpopt.h"
#include "tcpopt_csum.h"
#include "seg.h"
#include "eal_pool.h"

#if defined(TCPOPT_TEST_SCALAR) && defined(__SSE4_1__)
#error "the scalar variant must be built without SSE4.1"
#endif

#define BURST_MAX 32

/* ---- the checksum update ------------------------------------------- */

/* What tcpopt_replace16() computed before: the sum, two folds, the
 * complement. */
static uint16_t
ref_update16(uint16_t hc, uint16_t old, uint16_t new)
{
	uint32_t sum = (uint32_t)(uint16_t)~hc + (uint16_t)~old + new;

	sum = (sum & 0xffff) + (sum >> 16);
	sum += sum >> 16;
	return (uint16_t)~sum;
}

static uint64_t rng_state;

static uint64_t
rng(void)
{
	/* xorshift64*: deterministic, so a failure reproduces. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static void
test_the_checksum_update_matches_two_folds_for_every_sum(void **state)
{
	uint32_t s, i;

	(void)state;
	/* Both forms depend on (hc, old, new) only through the sum
	 * s = ~hc + ~old + new, 0 <= s <= 0x2fffd. Reach every s once. */
	for (s = 0; s <= 0x2fffd; s++) {
		uint16_t new = s > 0xffff ? 0xffff : (uint16_t)s;
		uint32_t rest = s - new; /* ~hc + ~old, <= 0x1fffe */
		uint16_t nhc = rest > 0xffff ? 0xffff : (uint16_t)rest;
		uint16_t hc = (uint16_t)~nhc, old = (uint16_t)~(rest - nhc);

		assert_int_equal((uint32_t)(uint16_t)~hc + (uint16_t)~old + new,
				 s);
		if (tcpopt_csum_update16(hc, old, tcpopt_csum_k(new)) !=
		    ref_update16(hc, old, new))
			fail_msg("s=%#x hc=%#x old=%#x new=%#x", s, hc, old, new);
	}
	/* And random triples, through tcpopt_replace16() on a header. */
	rng_state = 0x5eed0001;
	for (i = 0; i < 1000000; i++) {
		uint64_t r = rng();
		uint16_t hc = (uint16_t)r, old = (uint16_t)(r >> 16),
			 new = (uint16_t)(r >> 32), got;
		uint8_t tcp[24] = { 0 };

		memcpy(tcp + TCPOPT_CSUM_OFF, &hc, 2);
		memcpy(tcp + 22, &old, 2);
		tcpopt_replace16(tcp, 22, new);
		memcpy(&got, tcp + TCPOPT_CSUM_OFF, 2);
		assert_int_equal(got, ref_update16(hc, old, new));
		assert_memory_equal(tcp + 22, &new, 2);
	}
}

/* ---- bursts --------------------------------------------------------- */

static struct rte_mempool *pool;
static uint8_t ctx_mem[3][1 << 14] __rte_cache_aligned;

static int
eal_setup(void **state)
{
	(void)state;
#ifdef TCPOPT_TEST_SCALAR
	pool = test_eal_pool("test_tcpopt_burst_scalar", 8 * BURST_MAX - 1);
#else
	pool = test_eal_pool("test_tcpopt_burst", 8 * BURST_MAX - 1);
#endif
	return 0;
}

static int
eal_teardown(void **state)
{
	(void)state;
	test_eal_release(pool);
	return 0;
}

static const uint8_t linux_syn[20] = {
	2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0x10, 0, 0, 0, 0, 0, 1, 3, 3, 7,
};

/* Set for bursts of mostly data segments: long runs of them take the
 * grouped tests of tcpopt_burst()'s first loop, and the odd segment in
 * such a run ends a group at every position. */
static bool gen_data_heavy;

/* One random segment as an Ethernet frame in s. */
static void
gen_frame(struct seg *s, const struct tcpopt_ctx *ctx)
{
	static const uint8_t ts[12] = { 1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2 };
	static const uint8_t bad_mss[4] = { 2, 5, 5, 0xb4 };
	static const uint8_t mac[12] = { 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2 };
	unsigned int ipv = rng() & 1 ? 6 : 4, payload = (unsigned int)(rng() % 4);
	uint8_t opts[40], flags = SEG_SYN;
	unsigned int optlen = 20;
	uint16_t clamp = tcpopt_mss_clamp(ctx, (uint8_t)ipv), mss;
	uint64_t r = rng();
	uint8_t *tcp;

	if (clamp == 0)
		clamp = 1400;

	memcpy(opts, linux_syn, sizeof(linux_syn));
	if (rng() & 1)
		flags |= SEG_ACK;
	if (rng() % 8 == 0)
		flags |= 0xc0 | (uint8_t)(rng() & 0x0d); /* ECE CWR, FIN RST PSH */
	switch (r % 8) {
	case 0: mss = clamp; break;
	case 1: mss = (uint16_t)(clamp + 1); break;
	case 2: mss = (uint16_t)(clamp - 1); break;
	case 3: mss = ipv == 4 ? 1460 : 1440; break;
	case 4: mss = (uint16_t)(r >> 8); break;
	case 5: mss = r & 0x100 ? 0xffff : 0; break;
	default: mss = (uint16_t)(1200 + (r >> 8) % 400); break;
	}
	opts[2] = (uint8_t)(mss >> 8);
	opts[3] = (uint8_t)mss;
	for (unsigned int i = 8; i < 16; i++)
		opts[i] = (uint8_t)rng();
	opts[19] = (uint8_t)(rng() % 15);

	unsigned int sel = (unsigned int)(rng() % 16);
	bool near_data = false;

	if (gen_data_heavy && rng() % 24 != 0) {
		sel = rng() & 1 ? 0 : 1;
		near_data = rng() % 12 == 0;
	}
	switch (sel) {
	case 0: /* a data segment without options */
		optlen = 0;
		flags = SEG_ACK | (rng() & 1 ? SEG_PSH : 0);
		break;
	case 1: /* a data segment with NOP NOP TS */
	case 2:
		memcpy(opts, ts, sizeof(ts));
		optlen = sizeof(ts);
		flags = SEG_ACK;
		break;
	case 3: /* one option byte changed: a near miss, or malformed */
	case 4: {
		unsigned int at = (unsigned int)(rng() % 20);

		if (rng() & 1)
			opts[at] = (uint8_t)rng(); /* anything */
		else
			opts[at] = (uint8_t)(opts[at] + (rng() & 1 ? 1 : 0xff)); /* +-1 */
		break;
	}
	case 5: /* the Linux layout plus 4 or 16 more bytes (doff 11, 14) */
		optlen = rng() & 1 ? 24 : 36;
		memset(opts + 20, TCPOPT_KIND_NOP, optlen - 20);
		if (rng() & 1)
			opts[optlen - 1] = TCPOPT_KIND_EOL;
		break;
	case 9: /* MSS only, then a payload that looks like the rest of the
		 * Linux layout: never read as options */
		optlen = 4;
		payload = 16;
		break;
	case 6: /* a malformed MSS, on a SYN or a data segment */
		memcpy(opts, bad_mss, sizeof(bad_mss));
		optlen = 4;
		if (rng() & 1)
			flags = SEG_ACK;
		break;
	case 7: /* the Linux layout without the SYN flag */
		flags = SEG_ACK;
		break;
	case 8: /* SACK-permitted and WS only (16 bytes) */
		memcpy(opts, "\1\1\4\2\1\3\3\7\2\4\5\xb4\1\1\1\1", 16);
		optlen = 16;
		break;
	default: /* the Linux layout */
		break;
	}
	/* Almost a data segment: its layout on a SYN, or NOP NOP TS with
	 * one byte off. */
	if (near_data) {
		if (optlen == 0 || rng() & 1)
			flags |= SEG_SYN;
		else
			opts[rng() % optlen] ^= (uint8_t)(1 + rng() % 255);
	}
	seg_build(s, ipv, 14, flags, opts, optlen, payload);
	if (optlen == 4 && payload == 16) {
		memcpy(s->buf + s->l4_off + 24, linux_syn + 4, 16);
		seg_fix_csum(s);
	}
	memcpy(s->buf, mac, 12);
	s->buf[12] = ipv == 4 ? 0x08 : 0x86;
	s->buf[13] = ipv == 4 ? 0x00 : 0xdd;
	tcp = s->buf + s->l4_off;
	if (rng() % 16 == 0)
		tcp[17] ^= 0x5a; /* a bad checksum stays exactly as bad */
	if (rng() % 32 == 0)
		s->buf[s->l3_off + (ipv == 4 ? 9 : 6)] = 17; /* not TCP */
	if (rng() % 32 == 0) { /* not IP (LLDP) */
		s->buf[12] = 0x88;
		s->buf[13] = 0xcc;
	}
}

struct frame {
	/* [0] tcpopt_burst(), [1] the reference, [2] tcpopt_parse_burst() */
	struct rte_mbuf *m[3];
	unsigned int len;
	bool shared;
	bool offload;
	bool csum_ok;
	struct seg s;
};

/* What the parser leaves in a metadata area it has not been given yet. */
#define META_UNTOUCHED 0xa5

static struct rte_mbuf *
frame_mbuf_raw(const struct frame *f)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);

	assert_non_null(m);
	memcpy(rte_pktmbuf_append(m, (uint16_t)f->len), f->s.buf, f->len);
	if (f->shared)
		rte_mbuf_refcnt_set(m, 2);
	if (f->offload)
		m->ol_flags |= rng() & 1 ? RTE_MBUF_F_TX_TCP_CKSUM
					 : RTE_MBUF_F_TX_TCP_SEG;
	memset(pkt_meta(m), META_UNTOUCHED, sizeof(struct pkt_meta));
	return m;
}

static struct rte_mbuf *
frame_mbuf(const struct frame *f)
{
	struct rte_mbuf *m = frame_mbuf_raw(f);

	pkt_parse(m, pkt_meta(m), 0);
	return m;
}

static bool
meta_untouched(struct rte_mbuf *m)
{
	const uint8_t *p = (const uint8_t *)pkt_meta(m);

	for (size_t i = 0; i < sizeof(struct pkt_meta); i++)
		if (p[i] != META_UNTOUCHED)
			return false;
	return true;
}

/* A second segment of one byte: a chained frame the one-pass parse must
 * leave alone. */
static void
chain_one_byte(struct rte_mbuf *m)
{
	struct rte_mbuf *t = rte_pktmbuf_alloc(pool);

	assert_non_null(t);
	*(uint8_t *)rte_pktmbuf_append(t, 1) = 0xee;
	assert_int_equal(rte_pktmbuf_chain(m, t), 0);
}

static void
params_random(struct tcpopt_params *p)
{
	tcpopt_params_init(p);
	switch (rng() % 4) {
	case 0:
		break; /* no clamp */
	case 1:
		p->mtu = (uint16_t)(TCPOPT_MTU_MIN + rng() % (1500 - TCPOPT_MTU_MIN));
		break;
	default:
		p->mss_clamp = (uint16_t)(TCPOPT_MSS_MIN +
					  rng() % (1460 - TCPOPT_MSS_MIN));
		break;
	}
	if (rng() % 3 == 0)
		p->malformed_action = TCPOPT_ACT_DROP;
	if (rng() % 16 == 0)
		p->kind_action[TCPOPT_KIND_WS] = rng() & 1 ? TCPOPT_ACT_STRIP
							   : TCPOPT_ACT_DROP;
}

/* Give back the mbufs of a burst path: the ones kept, and the second
 * reference of a shared frame that a drop released only once. */
static void
release(struct frame *fr, unsigned int n, unsigned int j,
	struct rte_mbuf *const *kept, unsigned int nkept)
{
	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *m = fr[i].m[j];
		bool k = false;

		for (unsigned int x = 0; x < nkept; x++)
			k |= kept[x] == m;
		if (k) {
			rte_mbuf_refcnt_set(m, 1);
			rte_pktmbuf_free(m);
		} else if (fr[i].shared) {
			rte_pktmbuf_free(m);
		}
	}
}

/* The survivors of a burst path in pkts[0..left) against the reference's
 * in ref[0..nref), among the first n frames: same frames, same order,
 * same bytes, checksums still valid. */
static void
check_survivors(unsigned int trial, const char *path, struct frame *fr,
		unsigned int n, unsigned int j, struct rte_mbuf *const *pkts,
		unsigned int left, struct rte_mbuf *const *ref,
		unsigned int nref)
{
	unsigned int i, k;

	if (left != nref)
		fail_msg("trial %u, %s: %u kept, reference %u", trial, path,
			 left, nref);
	for (i = 0, k = 0; i < n && k < nref; i++) {
		struct frame *f = &fr[i];
		struct seg after;

		if (ref[k] != f->m[1])
			continue; /* dropped by the reference */
		if (pkts[k] != f->m[j])
			fail_msg("trial %u, %s: segment %u out of order", trial,
				 path, i);
		if (memcmp(rte_pktmbuf_mtod(f->m[j], void *),
			   rte_pktmbuf_mtod(f->m[1], void *), f->len) != 0)
			fail_msg("trial %u, %s: segment %u bytes differ", trial,
				 path, i);
		/* Independently of both: a valid checksum stays valid. */
		after = f->s;
		memcpy(after.buf, rte_pktmbuf_mtod(f->m[j], void *), f->len);
		if (f->csum_ok && !f->offload && !seg_csum_ok(&after))
			fail_msg("trial %u, %s: segment %u checksum broken",
				 trial, path, i);
		k++;
	}
}

/*
 * One burst through the three: tcpopt_burst() and the reference on the
 * frames before the first chained or oversize one (stop), and
 * tcpopt_parse_burst() on all of them, unparsed. What the burst path
 * clamped.
 */
static uint64_t
one_burst(unsigned int trial)
{
	struct frame fr[BURST_MAX];
	struct rte_mbuf *pkts[BURST_MAX], *ref[BURST_MAX], *raw[BURST_MAX];
	struct tcpopt_ctx *ctx[3];
	struct tcpopt_params p;
	unsigned int n = 1 + (unsigned int)(rng() % BURST_MAX), i, nref = 0;
	unsigned int stop;
	uint64_t err[PKT_ERR_MAX] = { 0 }, err_ref[PKT_ERR_MAX] = { 0 };
	uint64_t non_ip = 0, non_ip_ref = 0;
	struct pkt_classify pa = {
		.in_port = 0, .max_frame = 9018,
		.err_count = err, .non_ip = &non_ip,
	};
	uint16_t left, left_raw, rest;

	params_random(&p);
	gen_data_heavy = trial % 4 == 3;
	if (gen_data_heavy)
		n = BURST_MAX - (unsigned int)(rng() % 4);
	for (i = 0; i < 3; i++) {
		ctx[i] = tcpopt_init(ctx_mem[i], &p);
		assert_non_null(ctx[i]);
	}
	for (i = 0; i < n; i++) {
		struct frame *f = &fr[i];

		gen_frame(&f->s, ctx[0]);
		f->len = 14 + f->s.len;
		f->shared = rng() % 12 == 0;
		f->offload = rng() % 12 == 0;
		f->csum_ok = seg_csum_ok(&f->s);
		f->m[0] = frame_mbuf(f);
		f->m[1] = frame_mbuf(f);
		f->m[2] = frame_mbuf_raw(f);
		if (f->offload) { /* the same request on all */
			f->m[1]->ol_flags = f->m[0]->ol_flags;
			f->m[2]->ol_flags = f->m[0]->ol_flags;
		}
		pkts[i] = f->m[0];
		raw[i] = f->m[2];
	}
	/* One trial in eight has a frame the one-pass parse stops at:
	 * chained, or longer than max_frame. */
	stop = n;
	if (rng() % 8 == 0) {
		stop = (unsigned int)(rng() % n);
		if (rng() & 1)
			chain_one_byte(fr[stop].m[2]);
		else
			pa.max_frame = fr[stop].len - 1;
		for (i = 0; i < stop; i++)
			if (fr[i].len > pa.max_frame)
				stop = i;
	}

	left = tcpopt_burst(ctx[0], pkts, (uint16_t)stop);
	left_raw = tcpopt_parse_burst(ctx[2], raw, (uint16_t)n, &pa, &rest);
	for (i = 0; i < stop; i++) {
		const struct pkt_meta *meta = pkt_meta(fr[i].m[1]);

		if (meta->err != PKT_ERR_NONE)
			err_ref[meta->err]++;
		else
			non_ip_ref += meta->l3 == PKT_L3_NONE;
		if (tcpopt_process_mbuf(ctx[1], fr[i].m[1], 0, NULL) ==
		    TCPOPT_FORWARD)
			ref[nref++] = fr[i].m[1];
		else
			rte_pktmbuf_free(fr[i].m[1]);
	}

	check_survivors(trial, "tcpopt_burst", fr, stop, 0, pkts, left, ref,
			nref);
	check_survivors(trial, "tcpopt_parse_burst", fr, stop, 2, raw,
			left_raw, ref, nref);
	if (memcmp(tcpopt_counters(ctx[0]), tcpopt_counters(ctx[1]),
		   sizeof(struct tcpopt_counters)) != 0)
		fail_msg("trial %u: tcpopt_burst counters differ", trial);
	if (memcmp(tcpopt_counters(ctx[2]), tcpopt_counters(ctx[1]),
		   sizeof(struct tcpopt_counters)) != 0)
		fail_msg("trial %u: tcpopt_parse_burst counters differ", trial);
	if (memcmp(err, err_ref, sizeof(err)) != 0 || non_ip != non_ip_ref)
		fail_msg("trial %u: parse counts differ", trial);
	/* The frames from stop on: after the survivors, in order, unparsed
	 * and unchanged. */
	if (rest != n - stop)
		fail_msg("trial %u: rest %u, not %u", trial, rest, n - stop);
	for (i = stop; i < n; i++) {
		struct rte_mbuf *m = fr[i].m[2];

		if (raw[left_raw + i - stop] != m)
			fail_msg("trial %u: frame %u not in the rest", trial, i);
		if (!meta_untouched(m) ||
		    memcmp(rte_pktmbuf_mtod(m, void *), fr[i].s.buf,
			   fr[i].len) != 0)
			fail_msg("trial %u: frame %u touched", trial, i);
	}

	/* The first two never saw the frames from stop on: still theirs. */
	for (i = stop; i < n; i++) {
		pkts[left++] = fr[i].m[0];
		ref[nref++] = fr[i].m[1];
	}
	release(fr, n, 0, pkts, left);
	release(fr, n, 1, ref, nref);
	release(fr, n, 2, raw, left_raw + rest);
	return tcpopt_counters(ctx[0])->event[TCPOPT_EV_MSS_CLAMPED];
}

static void
test_bursts_leave_what_the_per_segment_walk_leaves(void **state)
{
	unsigned int avail, t;
	uint64_t clamped = 0;

	(void)state;
	if (pool == NULL)
		skip();
	avail = rte_mempool_avail_count(pool);
	rng_state = 0x5eed0002;
	for (t = 0; t < 4000; t++)
		clamped += one_burst(t);
	assert_int_equal(rte_mempool_avail_count(pool), avail);
	/* The generator does reach the rewrite. */
	assert_true(clamped > 1000);
}

/* The boundaries of the fast path's MSS test, one burst each: MSS kind
 * and length next to 2/4, values next to the clamp and at the ends. */
static void
test_the_mss_boundaries_match_the_walk(void **state)
{
	static const uint16_t kls[] = { 0x0204, 0x0205, 0x0203, 0x0304,
					0x0104, 0x0244, 0x0004, 0x1e04 };
	struct rte_mbuf *pkts[BURST_MAX], *ref[BURST_MAX];
	unsigned int mode, k, v, i, n, nref;
	uint64_t clamped = 0;

	(void)state;
	if (pool == NULL)
		skip();
	for (mode = 0; mode < 3; mode++) {
		struct tcpopt_params p;
		struct tcpopt_ctx *ctx[2];

		tcpopt_params_init(&p);
		if (mode == 1)
			p.mss_clamp = 1400;
		else if (mode == 2)
			p.mtu = 1400; /* 1360 over IPv4, 1340 over IPv6 */
		ctx[0] = tcpopt_init(ctx_mem[0], &p);
		ctx[1] = tcpopt_init(ctx_mem[1], &p);
		assert_non_null(ctx[0]);
		assert_non_null(ctx[1]);
		for (k = 0; k < RTE_DIM(kls); k++) {
			for (v = 4; v <= 6; v += 2) {
				uint16_t c = tcpopt_mss_clamp(ctx[0], (uint8_t)v);
				const uint16_t mss[] = { 0, 1, (uint16_t)(c - 1), c,
							 (uint16_t)(c + 1), 0xfffe,
							 0xffff, 1460 };
				struct frame fr[RTE_DIM(mss) * 2];

				n = 0;
				for (i = 0; i < RTE_DIM(mss) * 2; i++) {
					struct frame *f = &fr[n++];
					uint8_t opts[20];

					memcpy(opts, linux_syn, sizeof(opts));
					opts[0] = (uint8_t)(kls[k] >> 8);
					opts[1] = (uint8_t)kls[k];
					opts[2] = (uint8_t)(mss[i / 2] >> 8);
					opts[3] = (uint8_t)mss[i / 2];
					seg_build(&f->s, v, 14,
						  SEG_SYN | (i & 1 ? SEG_ACK : 0),
						  opts, sizeof(opts), 0);
					memcpy(f->s.buf, "\2\0\0\0\0\1\2\0\0\0\0\2", 12);
					f->s.buf[12] = v == 4 ? 0x08 : 0x86;
					f->s.buf[13] = v == 4 ? 0x00 : 0xdd;
					f->len = 14 + f->s.len;
					f->shared = false;
					f->offload = false;
					f->m[0] = frame_mbuf(f);
					f->m[1] = frame_mbuf(f);
					pkts[i] = f->m[0];
				}
				assert_int_equal(tcpopt_burst(ctx[0], pkts, (uint16_t)n), n);
				for (i = 0, nref = 0; i < n; i++)
					if (tcpopt_process_mbuf(ctx[1], fr[i].m[1], 0,
								NULL) == TCPOPT_FORWARD)
						ref[nref++] = fr[i].m[1];
				assert_int_equal(nref, n);
				for (i = 0; i < n; i++) {
					if (memcmp(rte_pktmbuf_mtod(fr[i].m[0], void *),
						   rte_pktmbuf_mtod(ref[i], void *),
						   fr[i].len) != 0)
						fail_msg("mode %u kl %#x v%u mss %u: bytes differ",
							 mode, kls[k], v, mss[i / 2]);
					rte_pktmbuf_free(fr[i].m[0]);
					rte_pktmbuf_free(fr[i].m[1]);
				}
				if (memcmp(tcpopt_counters(ctx[0]),
					   tcpopt_counters(ctx[1]),
					   sizeof(struct tcpopt_counters)) != 0)
					fail_msg("mode %u kl %#x v%u: counters differ",
						 mode, kls[k], v);
			}
		}
		clamped += tcpopt_counters(ctx[0])->event[TCPOPT_EV_MSS_CLAMPED];
	}
	/* 2 clamps x 2 versions x (c + 1, 0xfffe, 0xffff, 1460) x SYN, SYN/ACK */
	assert_int_equal(clamped, 2 * 2 * 4 * 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_checksum_update_matches_two_folds_for_every_sum),
		cmocka_unit_test(test_bursts_leave_what_the_per_segment_walk_leaves),
		cmocka_unit_test(test_the_mss_boundaries_match_the_walk),
	};

	return cmocka_run_group_tests(tests, eal_setup, eal_teardown);
}
