/* SPDX-License-Identifier: BSD-3-Clause */
/* MSS clamping, strip/drop policy, malformed actions and counters through
 * tcpopt_process() on raw buffers. Every checksum is verified from scratch,
 * pseudo header included, never with the library's own arithmetic. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tcpopt.h"
#include "seg.h"

/* Typical Linux SYN: MSS 1460, SACK-permitted, TS, NOP, WS 7. */
static const uint8_t linux_syn[20] = {
	2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0x10, 0, 0, 0, 0, 0, 1, 3, 3, 7,
};

static struct tcpopt_ctx *
ctx_new(const struct tcpopt_params *p)
{
	size_t sz = (tcpopt_ctx_size() + 63) & ~(size_t)63;
	void *mem = aligned_alloc(64, sz);
	struct tcpopt_ctx *ctx;

	assert_non_null(mem);
	ctx = tcpopt_init(mem, p);
	assert_non_null(ctx);
	return ctx;
}

static struct tcpopt_ctx *
ctx_with_clamp(uint16_t mss)
{
	struct tcpopt_params p;

	tcpopt_params_init(&p);
	p.mss_clamp = mss;
	return ctx_new(&p);
}

/* Every byte of the segment equal, except [skip_lo, skip_hi) and the
 * checksum (offsets relative to the TCP header). */
static void
assert_same_except(const struct seg *a, const struct seg *b,
		   unsigned int skip_lo, unsigned int skip_hi)
{
	unsigned int i;

	assert_int_equal(a->len, b->len);
	for (i = 0; i < a->l3_off + a->len; i++) {
		int rel = (int)i - (int)a->l4_off;

		if (rel == 16 || rel == 17)
			continue;
		if (rel >= (int)skip_lo && rel < (int)skip_hi)
			continue;
		if (a->buf[i] != b->buf[i])
			fail_msg("byte %u (tcp+%d) changed: %02x -> %02x", i,
				 rel, a->buf[i], b->buf[i]);
	}
}

static uint16_t
mss_at(const struct seg *s, unsigned int off)
{
	const uint8_t *t = s->buf + s->l4_off + off;

	return (uint16_t)(t[0] << 8 | t[1]);
}

static enum tcpopt_verdict
run(struct tcpopt_ctx *ctx, struct seg *s, uint16_t clamp, uint32_t flags,
    struct tcpopt_result *res)
{
	return tcpopt_process(ctx, s->buf + s->l4_off, seg_tcp_len(s),
			      (uint8_t)s->ip_ver, clamp, flags, res);
}

static void
test_syn_mss_above_the_clamp_is_clamped_on_ipv4(void **state)
{
	struct tcpopt_ctx *ctx = ctx_with_clamp(1400);
	struct tcpopt_result r;
	struct seg s, orig;

	(void)state;
	seg_build(&s, 4, 0, SEG_SYN, linux_syn, 20, 0);
	orig = s;
	assert_int_equal(run(ctx, &s, 0, 0, &r), TCPOPT_FORWARD);
	assert_int_equal(r.rewrites, TCPOPT_RW_MSS);
	assert_int_equal(r.mss_before, 1460);
	assert_int_equal(r.mss_after, 1400);
	assert_int_equal(mss_at(&s, 22), 1400);
	assert_true(seg_csum_ok(&s));
	assert_same_except(&orig, &s, 22, 24);
	assert_int_equal(tcpopt_counters(ctx)->event[TCPOPT_EV_MSS_CLAMPED], 1);
	free(ctx);
}

static void
test_a_syn_signed_with_md5_or_ao_is_not_clamped_and_is_counted(void **state)
{
	/* MSS 1460, NOP NOP, TCP-MD5 (kind 19, 18 bytes), EOL padding. */
	static const uint8_t md5_syn[24] = {
		2, 4, 0x05, 0xb4, 1, 1, 19, 18,
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
	};
	/* MSS 1460, TCP-AO (kind 29, 16 bytes: key ids and a 12-byte MAC). */
	static const uint8_t ao_syn[20] = {
		2, 4, 0x05, 0xb4, 29, 16, 7, 7,
		0xa, 0xb, 0xc, 0xd, 0xe, 0xf, 0x1, 0x2, 0x3, 0x4, 0x5, 0x6,
	};
	struct tcpopt_ctx *ctx = ctx_with_clamp(1400);
	struct tcpopt_result r;
	struct seg s, orig;

	(void)state;
	seg_build(&s, 4, 0, SEG_SYN, md5_syn, sizeof(md5_syn), 0);
	orig = s;
	assert_int_equal(run(ctx, &s, 0, 0, &r), TCPOPT_FORWARD);
	assert_int_equal(r.rewrites, 0);
	assert_memory_equal(orig.buf, s.buf, orig.l3_off + orig.len);
	seg_build(&s, 6, 0, SEG_SYN | SEG_ACK, ao_syn, sizeof(ao_syn), 0);
	orig = s;
	assert_int_equal(run(ctx, &s, 0, 0, &r), TCPOPT_FORWARD);
	assert_int_equal(r.rewrites, 0);
	assert_memory_equal(orig.buf, s.buf, orig.l3_off + orig.len);
	assert_int_equal(tcpopt_counters(ctx)->event[TCPOPT_EV_CLAMP_SKIPPED_SIGNED], 2);
	assert_int_equal(tcpopt_counters(ctx)->event[TCPOPT_EV_MSS_CLAMPED], 0);
	free(ctx);
}

static void
test_synack_mss_above_the_clamp_is_clamped_on_ipv6(void **state)
{
	struct tcpopt_ctx *ctx = ctx_with_clamp(1380);
	struct tcpopt_result r;
	struct seg s, orig;

	(void)state;
	seg_build(&s, 6, 14, SEG_SYN | SEG_ACK, linux_syn, 20, 0);
	orig = s;
	assert_int_equal(run(ctx, &s, 0, 0, &r), TCPOPT_FORWARD);
	assert_int_equal(r.seg, TCPOPT_SEG_SYNACK);
	assert_int_equal(mss_at(&s, 22), 1380);
	assert_true(seg_csum_ok(&s));
	assert_same_except(&orig, &s, 22, 24);
	free(ctx);
}

static void
test_mss_at_or_below_the_clamp_is_left_alone(void **state)
{
	struct tcpopt_ctx *ctx = ctx_with_clamp(1460);
	struct tcpopt_result r;
	struct seg s, orig;

	(void)state;
	seg_build(&s, 4, 0, SEG_SYN, linux_syn, 20, 0);
	orig = s;
	run(ctx, &s, 0, 0, &r);
	assert_int_equal(r.rewrites, 0);
	assert_memory_equal(orig.buf, s.buf, sizeof(s.buf));
	assert_int_equal(tcpopt_counters(ctx)->event[TCPOPT_EV_MSS_CLAMPED], 0);
	free(ctx);
}

static void
test_mss_on_a_segment_without_syn_is_never_clamped(void **state)
{
	struct tcpopt_ctx *ctx = ctx_with_clamp(536);
	struct seg s, orig;

	(void)state;
	seg_build(&s, 4, 0, SEG_ACK | SEG_PSH, linux_syn, 20, 100);
	orig = s;
	run(ctx, &s, 0, 0, NULL);
	assert_memory_equal(orig.buf, s.buf, sizeof(s.buf));
	free(ctx);
}

static void
test_mss_at_an_odd_offset_is_clamped_with_a_valid_checksum(void **state)
{
	/* NOP, MSS at tcp+21: the value straddles two checksum words. */
	static const uint8_t o[] = { 1, 2, 4, 0x23, 0x28, 1, 1, 0 };
	struct tcpopt_ctx *ctx = ctx_with_clamp(1200);
	struct seg s, orig;
	unsigned int v;

	(void)state;
	for (v = 4; v <= 6; v += 2) {
		seg_build(&s, v, 0, SEG_SYN, o, sizeof(o), 7);
		orig = s;
		run(ctx, &s, 0, 0, NULL);
		assert_int_equal(mss_at(&s, 23), 1200);
		assert_true(seg_csum_ok(&s));
		assert_same_except(&orig, &s, 23, 25);
	}
	free(ctx);
}

static void
test_every_mss_option_above_the_clamp_is_clamped(void **state)
{
	static const uint8_t o[] = { 2, 4, 0x05, 0xb4, 2, 4, 0x20, 0x00 };
	struct tcpopt_ctx *ctx = ctx_with_clamp(1400);
	struct seg s;

	(void)state;
	seg_build(&s, 4, 0, SEG_SYN, o, sizeof(o), 0);
	run(ctx, &s, 0, 0, NULL);
	assert_int_equal(mss_at(&s, 22), 1400);
	assert_int_equal(mss_at(&s, 26), 1400);
	assert_true(seg_csum_ok(&s));
	assert_int_equal(tcpopt_counters(ctx)->event[TCPOPT_EV_MSS_CLAMPED], 2);
	free(ctx);
}

static void
test_an_mtu_gives_a_clamp_that_depends_on_the_ip_version(void **state)
{
	struct tcpopt_params p;
	struct tcpopt_ctx *ctx;
	struct seg s;

	(void)state;
	tcpopt_params_init(&p);
	p.mtu = 1400;
	ctx = ctx_new(&p);
	assert_int_equal(tcpopt_mss_clamp(ctx, 4), 1360);
	assert_int_equal(tcpopt_mss_clamp(ctx, 6), 1340);
	seg_build(&s, 4, 0, SEG_SYN, linux_syn, 20, 0);
	run(ctx, &s, 0, 0, NULL);
	assert_int_equal(mss_at(&s, 22), 1360);
	assert_true(seg_csum_ok(&s));
	seg_build(&s, 6, 0, SEG_SYN, linux_syn, 20, 0);
	run(ctx, &s, 0, 0, NULL);
	assert_int_equal(mss_at(&s, 22), 1340);
	assert_true(seg_csum_ok(&s));
	assert_int_equal(tcpopt_mss_from_mtu(40, 4), 0);
	free(ctx);
}

static void
test_a_per_segment_clamp_overrides_the_context_clamp(void **state)
{
	struct tcpopt_ctx *ctx = ctx_with_clamp(1400);
	struct seg s;

	(void)state;
	seg_build(&s, 4, 0, SEG_SYN, linux_syn, 20, 0);
	run(ctx, &s, 1000, 0, NULL);
	assert_int_equal(mss_at(&s, 22), 1000);
	assert_true(seg_csum_ok(&s));
	free(ctx);
}

static void
test_a_context_without_clamp_changes_nothing(void **state)
{
	struct tcpopt_ctx *ctx = ctx_with_clamp(0);
	struct seg s, orig;

	(void)state;
	seg_build(&s, 4, 0, SEG_SYN, linux_syn, 20, 0);
	orig = s;
	run(ctx, &s, 0, 0, NULL);
	assert_memory_equal(orig.buf, s.buf, sizeof(s.buf));
	free(ctx);
}

static void
test_a_stripped_option_becomes_nops_with_a_valid_checksum(void **state)
{
	/* NOP, MPTCP MP_CAPABLE (12) at tcp+21, odd; TS at tcp+33; NOP NOP */
	static const uint8_t o[24] = {
		1, 30, 12, 0x01, 0x81, 1, 2, 3, 4, 5, 6, 7, 8,
		8, 10, 0, 0, 0, 9, 0, 0, 0, 0, 1,
	};
	struct tcpopt_params p;
	struct tcpopt_ctx *ctx;
	struct tcpopt_result r;
	struct seg s, orig;
	unsigned int i;

	(void)state;
	tcpopt_params_init(&p);
	p.kind_action[TCPOPT_KIND_MPTCP] = TCPOPT_ACT_STRIP;
	ctx = ctx_new(&p);
	seg_build(&s, 6, 0, SEG_SYN, o, sizeof(o), 3);
	orig = s;
	assert_int_equal(run(ctx, &s, 0, 0, &r), TCPOPT_FORWARD);
	assert_int_equal(r.rewrites, TCPOPT_RW_STRIP);
	for (i = 21; i < 33; i++)
		assert_int_equal(s.buf[s.l4_off + i], TCPOPT_KIND_NOP);
	assert_true(seg_csum_ok(&s));
	assert_same_except(&orig, &s, 21, 33);
	assert_int_equal(tcpopt_counters(ctx)->event[TCPOPT_EV_STRIPPED], 1);
	free(ctx);
}

static void
test_stripping_the_mss_wins_over_clamping_it(void **state)
{
	struct tcpopt_params p;
	struct tcpopt_ctx *ctx;
	struct tcpopt_result r;
	struct seg s;

	(void)state;
	tcpopt_params_init(&p);
	p.mss_clamp = 1000;
	p.kind_action[TCPOPT_KIND_MSS] = TCPOPT_ACT_STRIP;
	ctx = ctx_new(&p);
	seg_build(&s, 4, 0, SEG_SYN, linux_syn, 20, 0);
	run(ctx, &s, 0, 0, &r);
	assert_int_equal(r.rewrites, TCPOPT_RW_STRIP);
	assert_int_equal(r.mss_after, 0);
	assert_memory_equal(s.buf + s.l4_off + 20, "\1\1\1\1", 4);
	assert_true(seg_csum_ok(&s));
	assert_int_equal(tcpopt_counters(ctx)->event[TCPOPT_EV_MSS_CLAMPED], 0);
	free(ctx);
}

static void
test_a_kind_with_the_drop_action_drops_the_segment(void **state)
{
	struct tcpopt_params p;
	struct tcpopt_ctx *ctx;
	struct seg s, orig;

	(void)state;
	tcpopt_params_init(&p);
	p.mss_clamp = 1000;
	p.kind_action[TCPOPT_KIND_SACK_PERM] = TCPOPT_ACT_DROP;
	ctx = ctx_new(&p);
	seg_build(&s, 4, 0, SEG_SYN, linux_syn, 20, 0);
	orig = s;
	assert_int_equal(run(ctx, &s, 0, 0, NULL), TCPOPT_DROP);
	/* A dropped segment is not rewritten either. */
	assert_memory_equal(orig.buf, s.buf, sizeof(s.buf));
	assert_int_equal(tcpopt_counters(ctx)->event[TCPOPT_EV_DROPPED_BY_POLICY], 1);
	/* A segment without that kind passes. */
	seg_build(&s, 4, 0, SEG_ACK, NULL, 0, 10);
	assert_int_equal(run(ctx, &s, 0, 0, NULL), TCPOPT_FORWARD);
	free(ctx);
}

static void
test_a_malformed_segment_is_forwarded_unchanged_and_counted_by_default(void **state)
{
	/* MSS 1460 first, then a length-1 option: nothing may be rewritten. */
	static const uint8_t o[] = { 2, 4, 0x05, 0xb4, 99, 1, 0, 0 };
	struct tcpopt_ctx *ctx = ctx_with_clamp(1000);
	struct tcpopt_result r;
	struct seg s, orig;

	(void)state;
	seg_build(&s, 4, 0, SEG_SYN, o, sizeof(o), 0);
	orig = s;
	assert_int_equal(run(ctx, &s, 0, 0, &r), TCPOPT_FORWARD);
	assert_int_equal(r.malformed, TCPOPT_MAL_LEN_BELOW_2);
	assert_int_equal(r.rewrites, 0);
	assert_memory_equal(orig.buf, s.buf, sizeof(s.buf));
	assert_int_equal(tcpopt_counters(ctx)->malformed[TCPOPT_MAL_LEN_BELOW_2], 1);
	assert_int_equal(tcpopt_counters(ctx)->event[TCPOPT_EV_MSS_CLAMPED], 0);
	free(ctx);
}

static void
test_each_malformed_reason_is_counted_under_its_own_name(void **state)
{
	struct tcpopt_ctx *ctx = ctx_with_clamp(0);
	const struct tcpopt_counters *c = tcpopt_counters(ctx);
	struct seg s;
	uint8_t *tcp;
	unsigned int m;

	(void)state;
	/* header truncated */
	tcp = seg_build(&s, 4, 0, SEG_ACK, NULL, 0, 0);
	tcpopt_process(ctx, tcp, 10, 4, 0, 0, NULL);
	/* data offset 4 */
	tcp[12] = 0x40;
	tcpopt_process(ctx, tcp, 20, 4, 0, 0, NULL);
	/* data offset past the end */
	tcp[12] = 0x60;
	tcpopt_process(ctx, tcp, 20, 4, 0, 0, NULL);
	{
		static const uint8_t l0[] = { 77, 0, 0, 0 };
		static const uint8_t past[] = { 77, 9, 0, 0 };
		static const uint8_t trunc[] = { 1, 1, 1, 77 };
		static const uint8_t badlen[] = { 3, 4, 0, 0 };
		static const uint8_t badmp[] = { 30, 4, 0x60, 0 };

		seg_build(&s, 4, 0, SEG_ACK, l0, 4, 0);
		run(ctx, &s, 0, 0, NULL);
		seg_build(&s, 4, 0, SEG_ACK, past, 4, 0);
		run(ctx, &s, 0, 0, NULL);
		seg_build(&s, 4, 0, SEG_ACK, trunc, 4, 0);
		run(ctx, &s, 0, 0, NULL);
		seg_build(&s, 4, 0, SEG_ACK, badlen, 4, 0);
		run(ctx, &s, 0, 0, NULL);
		seg_build(&s, 4, 0, SEG_ACK, badmp, 4, 0);
		run(ctx, &s, 0, 0, NULL);
	}
	assert_int_equal(c->malformed[TCPOPT_MAL_NONE], 0);
	for (m = 1; m < TCPOPT_MAL_MAX; m++)
		if (c->malformed[m] != 1)
			fail_msg("reason %s counted %llu times",
				 tcpopt_mal_name((enum tcpopt_mal)m),
				 (unsigned long long)c->malformed[m]);
	free(ctx);
}

static void
test_a_malformed_segment_is_dropped_when_policy_says_so(void **state)
{
	static const uint8_t o[] = { 1, 1, 1, 2 };
	struct tcpopt_params p;
	struct tcpopt_ctx *ctx;
	struct tcpopt_result r;
	struct seg s;

	(void)state;
	tcpopt_params_init(&p);
	p.malformed_action = TCPOPT_ACT_DROP;
	ctx = ctx_new(&p);
	seg_build(&s, 6, 0, SEG_ACK, o, sizeof(o), 0);
	assert_int_equal(run(ctx, &s, 0, 0, &r), TCPOPT_DROP);
	assert_int_equal(r.malformed, TCPOPT_MAL_TRUNCATED);
	assert_int_equal(tcpopt_counters(ctx)->event[TCPOPT_EV_DROPPED_MALFORMED], 1);
	/* Well-formed segments still pass. */
	seg_build(&s, 6, 0, SEG_SYN, linux_syn, 20, 0);
	assert_int_equal(run(ctx, &s, 0, 0, &r), TCPOPT_FORWARD);
	free(ctx);
}

static void
test_a_partial_checksum_is_left_for_the_nic(void **state)
{
	struct tcpopt_ctx *ctx = ctx_with_clamp(1400);
	struct seg s, orig;

	(void)state;
	seg_build(&s, 4, 0, SEG_SYN, linux_syn, 20, 0);
	orig = s;
	run(ctx, &s, 0, TCPOPT_F_CSUM_PARTIAL, NULL);
	assert_int_equal(mss_at(&s, 22), 1400);
	assert_memory_equal(orig.buf + orig.l4_off + 16, s.buf + s.l4_off + 16, 2);
	assert_int_equal(tcpopt_counters(ctx)->event[TCPOPT_EV_CSUM_OFFLOADED], 1);
	free(ctx);
}

static void
test_a_read_only_segment_is_judged_and_counted_but_never_written(void **state)
{
	struct tcpopt_ctx *ctx = ctx_with_clamp(1400);
	struct seg s, orig;

	(void)state;
	seg_build(&s, 4, 0, SEG_SYN, linux_syn, 20, 0);
	orig = s;
	assert_int_equal(run(ctx, &s, 0, TCPOPT_F_READONLY, NULL), TCPOPT_FORWARD);
	assert_memory_equal(orig.buf, s.buf, sizeof(s.buf));
	assert_int_equal(tcpopt_counters(ctx)->event[TCPOPT_EV_REWRITE_SKIPPED], 1);
	assert_int_equal(tcpopt_counters(ctx)->kind[TCPOPT_SEG_SYN][TCPOPT_KIND_MSS], 1);
	free(ctx);
}

static void
test_counters_are_split_by_syn_synack_and_other(void **state)
{
	static const uint8_t ts[] = { 1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2 };
	struct tcpopt_ctx *ctx = ctx_with_clamp(0);
	const struct tcpopt_counters *c = tcpopt_counters(ctx);
	struct seg s;

	(void)state;
	seg_build(&s, 4, 0, SEG_SYN, linux_syn, 20, 0);
	run(ctx, &s, 0, 0, NULL);
	seg_build(&s, 6, 0, SEG_SYN | SEG_ACK, linux_syn, 20, 0);
	run(ctx, &s, 0, 0, NULL);
	seg_build(&s, 4, 0, SEG_ACK, ts, sizeof(ts), 100);
	run(ctx, &s, 0, 0, NULL);
	run(ctx, &s, 0, 0, NULL);
	assert_int_equal(c->segments[TCPOPT_SEG_SYN], 1);
	assert_int_equal(c->segments[TCPOPT_SEG_SYNACK], 1);
	assert_int_equal(c->segments[TCPOPT_SEG_OTHER], 2);
	assert_int_equal(c->kind[TCPOPT_SEG_SYN][TCPOPT_KIND_WS], 1);
	assert_int_equal(c->kind[TCPOPT_SEG_SYNACK][TCPOPT_KIND_SACK_PERM], 1);
	assert_int_equal(c->kind[TCPOPT_SEG_OTHER][TCPOPT_KIND_TS], 2);
	assert_int_equal(c->kind[TCPOPT_SEG_OTHER][TCPOPT_KIND_NOP], 4);
	assert_int_equal(c->kind[TCPOPT_SEG_OTHER][TCPOPT_KIND_MSS], 0);
	tcpopt_counters_reset(ctx);
	assert_int_equal(c->segments[TCPOPT_SEG_OTHER], 0);
	free(ctx);
}

static void
test_mptcp_health_pair_counts_mp_capable_on_syn_and_synack(void **state)
{
	static const uint8_t syn[] = { 2, 4, 0x05, 0xb4, 30, 4, 0x01, 0x81 };
	static const uint8_t synack[16] = { 2, 4, 0x05, 0xb4, 30, 12, 0x01, 0x81 };
	static const uint8_t dss[] = { 30, 8, 0x20, 0x01, 0, 0, 0, 1 };
	struct tcpopt_ctx *ctx = ctx_with_clamp(0);
	const struct tcpopt_counters *c = tcpopt_counters(ctx);
	struct seg s;
	int i;

	(void)state;
	seg_build(&s, 4, 0, SEG_SYN, syn, sizeof(syn), 0);
	for (i = 0; i < 3; i++)
		run(ctx, &s, 0, 0, NULL);
	seg_build(&s, 4, 0, SEG_SYN | SEG_ACK, synack, sizeof(synack), 0);
	run(ctx, &s, 0, 0, NULL);
	seg_build(&s, 4, 0, SEG_ACK, dss, sizeof(dss), 10);
	run(ctx, &s, 0, 0, NULL);
	assert_int_equal(c->syn_mp_capable, 3);
	assert_int_equal(c->synack_mp_capable, 1);
	assert_int_equal(c->mptcp_sub[TCPOPT_SEG_SYN][TCPOPT_MPTCP_MP_CAPABLE], 3);
	assert_int_equal(c->mptcp_sub[TCPOPT_SEG_OTHER][TCPOPT_MPTCP_DSS], 1);
	free(ctx);
}

static void
test_counters_add_sums_every_field(void **state)
{
	struct tcpopt_counters a, b;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.kind[2][255] = 5;
	b.kind[2][255] = 7;
	b.synack_mp_capable = 2;
	b.event[TCPOPT_EV_MAX - 1] = 1;
	tcpopt_counters_add(&a, &b);
	assert_int_equal(a.kind[2][255], 12);
	assert_int_equal(a.synack_mp_capable, 2);
	assert_int_equal(a.event[TCPOPT_EV_MAX - 1], 1);
}

static void
test_bad_parameters_are_refused(void **state)
{
	struct tcpopt_params p;
	void *mem = aligned_alloc(64, (tcpopt_ctx_size() + 63) & ~(size_t)63);

	(void)state;
	tcpopt_params_init(&p);
	assert_int_equal(tcpopt_params_check(&p), 0);
	p.mss_clamp = 1400;
	p.mtu = 1500;
	assert_int_equal(tcpopt_params_check(&p), -EINVAL);
	p.mtu = 0;
	p.mss_clamp = 50;
	assert_int_equal(tcpopt_params_check(&p), -EINVAL);
	p.mss_clamp = 0;
	p.mtu = 500;
	assert_int_equal(tcpopt_params_check(&p), -EINVAL);
	p.mtu = 0;
	p.kind_action[TCPOPT_KIND_NOP] = TCPOPT_ACT_STRIP;
	assert_int_equal(tcpopt_params_check(&p), -EINVAL);
	p.kind_action[TCPOPT_KIND_NOP] = TCPOPT_ACT_PRESERVE;
	p.kind_action[200] = 7;
	assert_int_equal(tcpopt_params_check(&p), -EINVAL);
	p.kind_action[200] = TCPOPT_ACT_PRESERVE;
	p.malformed_action = TCPOPT_ACT_STRIP;
	assert_null(tcpopt_init(mem, &p));
	p.malformed_action = TCPOPT_ACT_DROP;
	assert_null(tcpopt_init((char *)mem + 8, &p)); /* misaligned */
	assert_non_null(tcpopt_init(mem, &p));
	free(mem);
}

/* Deterministic pseudo-random numbers: the test is the same every run. */
static unsigned int
lcg(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

/*
 * Property: over many pseudo-random SYNs with random option layouts
 * (NOP padding at any parity, unknown kinds, MPTCP) and random strip
 * policies, a checksum that was valid stays valid and every byte outside
 * the rewritten options stays identical.
 */
static void
test_rewrites_keep_the_checksum_valid_for_many_random_segments(void **state)
{
	static const uint8_t menu[][12] = {
		{ 1 }, { 2, 4, 0x05, 0xb4 }, { 3, 3, 9 }, { 4, 2 },
		{ 8, 10, 1, 2, 3, 4, 5, 6, 7, 8 }, { 30, 4, 0x01, 0x81 },
		{ 34, 6, 9, 8, 7, 6 }, { 99, 5, 0xaa, 0xbb, 0xcc },
		{ 254, 4, 0xf9, 0x89 }, { 2, 4, 0xff, 0xff },
	};
	static const uint8_t menu_len[] = { 1, 4, 3, 2, 10, 4, 6, 5, 4, 4 };
	uint32_t rnd = 12345;
	unsigned int iter;

	(void)state;
	for (iter = 0; iter < 5000; iter++) {
		struct tcpopt_params p;
		struct tcpopt_ctx *ctx;
		uint8_t o[40];
		unsigned int n = 0, i, ipv;
		struct seg s, orig;
		uint8_t flags;

		while (n < 36) {
			unsigned int k = lcg(&rnd) % 10;

			if (n + menu_len[k] > 40)
				break;
			memcpy(o + n, menu[k], menu_len[k]);
			n += menu_len[k];
		}
		while (n % 4)
			o[n++] = 0;
		tcpopt_params_init(&p);
		p.mss_clamp = (uint16_t)(TCPOPT_MSS_MIN + lcg(&rnd) % 2000);
		if (lcg(&rnd) % 3 == 0)
			p.kind_action[30] = TCPOPT_ACT_STRIP;
		if (lcg(&rnd) % 3 == 0)
			p.kind_action[99] = TCPOPT_ACT_STRIP;
		ctx = ctx_new(&p);
		ipv = lcg(&rnd) % 2 ? 4 : 6;
		flags = lcg(&rnd) % 2 ? SEG_SYN : SEG_SYN | SEG_ACK;
		seg_build(&s, ipv, 0, flags, o, n, lcg(&rnd) % 50);
		orig = s;
		assert_int_equal(run(ctx, &s, 0, 0, NULL), TCPOPT_FORWARD);
		assert_true(seg_csum_ok(&s));
		/* Only option bytes may change, and only to NOP or a clamp. */
		assert_same_except(&orig, &s, 20, 20 + n);
		for (i = 0; i < s.l4_off; i++)
			assert_int_equal(orig.buf[i], s.buf[i]);
		free(ctx);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_syn_mss_above_the_clamp_is_clamped_on_ipv4),
		cmocka_unit_test(test_a_syn_signed_with_md5_or_ao_is_not_clamped_and_is_counted),
		cmocka_unit_test(test_synack_mss_above_the_clamp_is_clamped_on_ipv6),
		cmocka_unit_test(test_mss_at_or_below_the_clamp_is_left_alone),
		cmocka_unit_test(test_mss_on_a_segment_without_syn_is_never_clamped),
		cmocka_unit_test(test_mss_at_an_odd_offset_is_clamped_with_a_valid_checksum),
		cmocka_unit_test(test_every_mss_option_above_the_clamp_is_clamped),
		cmocka_unit_test(test_an_mtu_gives_a_clamp_that_depends_on_the_ip_version),
		cmocka_unit_test(test_a_per_segment_clamp_overrides_the_context_clamp),
		cmocka_unit_test(test_a_context_without_clamp_changes_nothing),
		cmocka_unit_test(test_a_stripped_option_becomes_nops_with_a_valid_checksum),
		cmocka_unit_test(test_stripping_the_mss_wins_over_clamping_it),
		cmocka_unit_test(test_a_kind_with_the_drop_action_drops_the_segment),
		cmocka_unit_test(test_a_malformed_segment_is_forwarded_unchanged_and_counted_by_default),
		cmocka_unit_test(test_each_malformed_reason_is_counted_under_its_own_name),
		cmocka_unit_test(test_a_malformed_segment_is_dropped_when_policy_says_so),
		cmocka_unit_test(test_a_partial_checksum_is_left_for_the_nic),
		cmocka_unit_test(test_a_read_only_segment_is_judged_and_counted_but_never_written),
		cmocka_unit_test(test_counters_are_split_by_syn_synack_and_other),
		cmocka_unit_test(test_mptcp_health_pair_counts_mp_capable_on_syn_and_synack),
		cmocka_unit_test(test_counters_add_sums_every_field),
		cmocka_unit_test(test_bad_parameters_are_refused),
		cmocka_unit_test(test_rewrites_keep_the_checksum_valid_for_many_random_segments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
