/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/tcpopt per-packet cost: parse + clamp of a SYN with typical Linux
 * options, and the data-segment case (NOP NOP TS) that dominates traffic;
 * and the datapath's parse loop alone against it with tcpopt in two
 * passes and in one (BM_datapath_*).
 * Every benchmark reports items = packets, so ns/packet = 1e9 / items/s.
 * No EAL: contexts live in static memory and mbufs are laid out by hand.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_prefetch.h>

#include "cbench.h"
#include "pkt.h"
#include "tcpopt.h"

#define BURST 32

/* MSS 1460, SACK-permitted, TS, NOP, WS 7: what Linux sends. */
static const uint8_t syn_opts[20] = {
	2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0x10, 0, 0, 0, 0, 0, 1, 3, 3, 7,
};
/* NOP NOP TS: every segment of a Linux connection after the handshake. */
static const uint8_t data_opts[12] = { 1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2 };

static uint8_t g_ctx_mem[1 << 14] __rte_aligned(64);

static struct tcpopt_ctx *
make_ctx(uint16_t clamp)
{
	struct tcpopt_params p;

	tcpopt_params_init(&p);
	p.mss_clamp = clamp;
	return tcpopt_init(g_ctx_mem, &p);
}

/* Ethernet + IPv4 + TCP with the given options and payload; returns the
 * frame length. The TCP checksum is arbitrary: the library never checks
 * it, only updates it. */
static unsigned int
build_frame(uint8_t *f, uint8_t flags, const uint8_t *opts, unsigned int optlen,
	    unsigned int payload)
{
	unsigned int iplen = 20 + 20 + optlen + payload;

	memset(f, 0, 14 + iplen);
	f[12] = 0x08;
	uint8_t *ip = f + 14;

	ip[0] = 0x45;
	ip[2] = (uint8_t)(iplen >> 8);
	ip[3] = (uint8_t)iplen;
	ip[8] = 64;
	ip[9] = 6;
	ip[12] = 198; ip[13] = 18; ip[15] = 1;
	ip[16] = 198; ip[17] = 19; ip[19] = 2;
	uint32_t s = 0;

	for (unsigned int i = 0; i < 20; i += 2)
		s += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	ip[10] = (uint8_t)(~s >> 8);
	ip[11] = (uint8_t)~s;
	uint8_t *tcp = ip + 20;

	tcp[0] = 0xc3; tcp[1] = 0x50; tcp[2] = 0x01; tcp[3] = 0xbb;
	tcp[12] = (uint8_t)(((20 + optlen) / 4) << 4);
	tcp[13] = flags;
	tcp[16] = 0x5a; tcp[17] = 0xa5;
	memcpy(tcp + 20, opts, optlen);
	return 14 + iplen;
}

/* Raw-buffer path: a SYN whose MSS (1460) is clamped to 1400 every time.
 * The two MSS bytes and the checksum are restored after each call (four
 * byte stores), so every iteration does the full parse + rewrite. */
static void
BM_tcpopt_syn_parse_clamp(struct cbench_state *st)
{
	uint8_t f[128];

	build_frame(f, 0x02, syn_opts, sizeof(syn_opts), 0);
	uint8_t *tcp = f + 34;
	struct tcpopt_ctx *ctx = make_ctx(1400);

	CBENCH_LOOP(st) {
		cbench_do_not_optimize(tcpopt_process(ctx, tcp, 40, 4, 0, 0, NULL));
		tcp[22] = 0x05; tcp[23] = 0xb4;
		tcp[16] = 0x5a; tcp[17] = 0xa5;
		cbench_clobber_memory();
	}
	if (tcpopt_counters(ctx)->event[TCPOPT_EV_MSS_CLAMPED] !=
	    (uint64_t)cbench_iterations(st))
		cbench_skip_with_error(st, "the SYN was not clamped every time");
	cbench_set_items_processed(st, cbench_iterations(st));
}

/* Same SYN, MSS already below the clamp: parse and count only. */
static void
BM_tcpopt_syn_parse_no_clamp(struct cbench_state *st)
{
	uint8_t f[128];

	build_frame(f, 0x02, syn_opts, sizeof(syn_opts), 0);
	struct tcpopt_ctx *ctx = make_ctx(1460);

	CBENCH_LOOP(st)
		cbench_do_not_optimize(tcpopt_process(ctx, f + 34, 40, 4, 0, 0, NULL));
	cbench_set_items_processed(st, cbench_iterations(st));
}

/* Data segment, TS only: the common case, nothing to rewrite. */
static void
BM_tcpopt_data_ts_only(struct cbench_state *st)
{
	uint8_t f[256];

	build_frame(f, 0x10, data_opts, sizeof(data_opts), 100);
	struct tcpopt_ctx *ctx = make_ctx(1400);

	CBENCH_LOOP(st)
		cbench_do_not_optimize(tcpopt_process(ctx, f + 34, 132, 4, 0, 0, NULL));
	cbench_set_items_processed(st, cbench_iterations(st));
}

/* The context-free walker alone, on the SYN. */
static void
BM_tcpopt_parse_syn(struct cbench_state *st)
{
	uint8_t f[128];

	build_frame(f, 0x02, syn_opts, sizeof(syn_opts), 0);
	struct tcpopt_parsed p;

	CBENCH_LOOP(st) {
		cbench_do_not_optimize(tcpopt_parse(f + 34, 40, &p));
		cbench_clobber_memory();
	}
	cbench_set_items_processed(st, cbench_iterations(st));
}

/* What the stage calls: tcpopt_burst() over 32 parsed mbufs. */
struct fake_mbuf {
	struct rte_mbuf m;
	uint8_t priv[PKT_META_PRIV_SIZE];
	uint8_t room[RTE_PKTMBUF_HEADROOM + 256];
} __rte_aligned(64);

static struct fake_mbuf g_mbufs[BURST];

static void
load_burst(struct rte_mbuf **pkts, uint8_t flags, const uint8_t *opts,
	   unsigned int optlen, unsigned int payload, struct fake_mbuf *mbufs)
{
	for (unsigned int i = 0; i < BURST; i++) {
		struct fake_mbuf *fm = &mbufs[i];
		struct rte_mbuf *m = &fm->m;

		memset(fm, 0, sizeof(*fm));
		m->buf_addr = fm->room;
		m->buf_len = sizeof(fm->room);
		m->data_off = RTE_PKTMBUF_HEADROOM;
		m->priv_size = PKT_META_PRIV_SIZE;
		m->nb_segs = 1;
		rte_mbuf_refcnt_set(m, 1);
		unsigned int len = build_frame(rte_pktmbuf_mtod(m, uint8_t *),
					       flags, opts, optlen, payload);
		m->data_len = (uint16_t)len;
		m->pkt_len = len;
		pkt_parse(m, pkt_meta(m), 0);
		pkts[i] = m;
	}
}

static void
BM_tcpopt_burst_data_ts_only(struct cbench_state *st)
{
	struct rte_mbuf *pkts[BURST];

	load_burst(pkts, 0x10, data_opts, sizeof(data_opts), 100, g_mbufs);
	struct tcpopt_ctx *ctx = make_ctx(1400);

	CBENCH_LOOP(st)
		cbench_do_not_optimize(tcpopt_burst(ctx, pkts, BURST));
	cbench_set_items_processed(st, cbench_iterations(st) * BURST);
}

static void
BM_tcpopt_burst_syn_no_clamp(struct cbench_state *st)
{
	struct rte_mbuf *pkts[BURST];

	load_burst(pkts, 0x02, syn_opts, sizeof(syn_opts), 0, g_mbufs);
	struct tcpopt_ctx *ctx = make_ctx(1460);

	CBENCH_LOOP(st)
		cbench_do_not_optimize(tcpopt_burst(ctx, pkts, BURST));
	cbench_set_items_processed(st, cbench_iterations(st) * BURST);
}

/*
 * The datapath's two ways side by side, per packet of a 32-frame burst:
 * the worker's parse loop alone (what pass-through runs), that loop and
 * then tcpopt_burst() (two passes: stage_cycles = on), and
 * tcpopt_parse_burst() (one pass: what sluice runs). Every variant first
 * copies each frame into its mbuf again, as a PMD's rx does, so every
 * iteration clamps every SYN and all three pay the same copy. (Putting
 * back only the MSS and checksum bytes would not do: two-byte stores
 * right before a wider load of the same bytes make that load wait for
 * them, which the datapath never sees.)
 *
 * The argument is how many bursts of distinct mbufs the iterations cycle
 * through: 1 keeps 32 mbufs hot in L1; 512 (16384 mbufs, about 10 MB, as
 * many as sluice's default pool) makes each burst's mbufs come from
 * farther away, as they do from a mempool.
 */
static uint64_t g_parse_err[PKT_ERR_MAX];
static uint64_t g_non_ip;

/* app/worker.c classify(), common case: no drop policy, frames that fit. */
static uint16_t
parse_loop(struct rte_mbuf **pkts, uint16_t n, uint32_t max_frame)
{
	uint64_t non_ip = 0;
	uint16_t i;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		if (i + 2 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 2], void *));
		if (m->nb_segs > 1 || m->pkt_len > max_frame)
			break;
		struct pkt_meta *meta = pkt_meta(m);
		enum pkt_err e = pkt_parse(m, meta, 0);

		if (e != PKT_ERR_NONE)
			g_parse_err[e]++;
		else
			non_ip += meta->l3 == PKT_L3_NONE;
	}
	g_non_ip += non_ip;
	return i;
}

/* The frame every mbuf holds, to copy in again. */
static uint8_t g_frame[256];

static void
rx_copy(struct rte_mbuf **pkts)
{
	for (unsigned int i = 0; i < BURST; i++)
		memcpy(rte_pktmbuf_mtod(pkts[i], uint8_t *), g_frame,
		       pkts[i]->data_len);
}

enum way { WAY_PARSE_ONLY, WAY_TWO_PASSES, WAY_ONE_PASS };

static void
datapath(struct cbench_state *st, enum way way, bool syn)
{
	const size_t nb = (size_t)cbench_range(st, 0);
	struct rte_mbuf **bursts = malloc(nb * BURST * sizeof(*bursts));
	struct fake_mbuf *mem = aligned_alloc(_Alignof(struct fake_mbuf),
					      nb * BURST * sizeof(struct fake_mbuf));

	if (bursts == NULL || mem == NULL) {
		cbench_skip_with_error(st, "out of memory");
		free(bursts);
		free(mem);
		return;
	}
	for (size_t b = 0; b < nb; b++) {
		if (syn)
			load_burst(&bursts[b * BURST], 0x02, syn_opts,
				   sizeof(syn_opts), 0, mem + b * BURST);
		else
			load_burst(&bursts[b * BURST], 0x10, data_opts,
				   sizeof(data_opts), 100, mem + b * BURST);
	}
	struct tcpopt_ctx *ctx = make_ctx(1400);
	const struct pkt_classify pa = { 0, 9018, g_parse_err, &g_non_ip };
	uint16_t rest;
	size_t b = 0;

	memcpy(g_frame, rte_pktmbuf_mtod(bursts[0], uint8_t *),
	       bursts[0]->data_len);
	CBENCH_LOOP(st) {
		struct rte_mbuf **pkts = &bursts[b * BURST];

		b = b + 1 == nb ? 0 : b + 1;
		rx_copy(pkts);
		cbench_clobber_memory();
		switch (way) {
		case WAY_PARSE_ONLY:
			cbench_do_not_optimize(parse_loop(pkts, BURST, 9018));
			break;
		case WAY_TWO_PASSES:
			cbench_do_not_optimize(tcpopt_burst(
				ctx, pkts, parse_loop(pkts, BURST, 9018)));
			break;
		case WAY_ONE_PASS:
			cbench_do_not_optimize(tcpopt_parse_burst(
				ctx, pkts, BURST, &pa, &rest));
			break;
		}
	}
	if (way != WAY_PARSE_ONLY && syn &&
	    tcpopt_counters(ctx)->event[TCPOPT_EV_MSS_CLAMPED] !=
	    (uint64_t)cbench_iterations(st) * BURST)
		cbench_skip_with_error(st, "not every SYN was clamped");
	cbench_set_items_processed(st, cbench_iterations(st) * BURST);
	free(mem);
	free(bursts);
}

static void BM_datapath_syn_parse_only(struct cbench_state *st) { datapath(st, WAY_PARSE_ONLY, true); }
static void BM_datapath_syn_two_passes(struct cbench_state *st) { datapath(st, WAY_TWO_PASSES, true); }
static void BM_datapath_syn_one_pass(struct cbench_state *st) { datapath(st, WAY_ONE_PASS, true); }
static void BM_datapath_data_parse_only(struct cbench_state *st) { datapath(st, WAY_PARSE_ONLY, false); }
static void BM_datapath_data_two_passes(struct cbench_state *st) { datapath(st, WAY_TWO_PASSES, false); }
static void BM_datapath_data_one_pass(struct cbench_state *st) { datapath(st, WAY_ONE_PASS, false); }

static const struct cbench_def benches[] = {
	{ CBENCH(BM_tcpopt_syn_parse_clamp) },
	{ CBENCH(BM_tcpopt_syn_parse_no_clamp) },
	{ CBENCH(BM_tcpopt_data_ts_only) },
	{ CBENCH(BM_tcpopt_parse_syn) },
	{ CBENCH(BM_tcpopt_burst_data_ts_only) },
	{ CBENCH(BM_tcpopt_burst_syn_no_clamp) },
	{ CBENCH(BM_datapath_syn_parse_only), CBENCH_ARGS(1, 512) },
	{ CBENCH(BM_datapath_syn_two_passes), CBENCH_ARGS(1, 512) },
	{ CBENCH(BM_datapath_syn_one_pass), CBENCH_ARGS(1, 512) },
	{ CBENCH(BM_datapath_data_parse_only), CBENCH_ARGS(1, 512) },
	{ CBENCH(BM_datapath_data_two_passes), CBENCH_ARGS(1, 512) },
	{ CBENCH(BM_datapath_data_one_pass), CBENCH_ARGS(1, 512) },
};

CBENCH_MAIN(benches)
