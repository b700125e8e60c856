/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/tcpopt per-packet cost: parse + clamp of a SYN with typical Linux
 * options, and the data-segment case (NOP NOP TS) that dominates traffic;
 * and the datapath's parse loop alone against it with tcpopt in two
 * passes and in one (BM_datapath_*).
 * Every benchmark reports items = packets, so ns/packet = 1e9 / items/s.
 * No EAL: contexts live in static memory and mbufs are laid out by hand.
 */

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <rte_prefetch.h>

#include "pkt.h"
#include "tcpopt.h"

namespace {

constexpr unsigned kBurst = 32;

/* MSS 1460, SACK-permitted, TS, NOP, WS 7: what Linux sends. */
const uint8_t kSynOpts[20] = {
	2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0x10, 0, 0, 0, 0, 0, 1, 3, 3, 7,
};
/* NOP NOP TS: every segment of a Linux connection after the handshake. */
const uint8_t kDataOpts[12] = { 1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2 };

alignas(64) uint8_t g_ctx_mem[1 << 14];

tcpopt_ctx *
make_ctx(uint16_t clamp)
{
	tcpopt_params p;

	tcpopt_params_init(&p);
	p.mss_clamp = clamp;
	return tcpopt_init(g_ctx_mem, &p);
}

/* Ethernet + IPv4 + TCP with the given options and payload; returns the
 * frame length. The TCP checksum is arbitrary: the library never checks
 * it, only updates it. */
unsigned
build_frame(uint8_t *f, uint8_t flags, const uint8_t *opts, unsigned optlen,
	    unsigned payload)
{
	unsigned iplen = 20 + 20 + optlen + payload;

	std::memset(f, 0, 14 + iplen);
	f[12] = 0x08;
	uint8_t *ip = f + 14;
	ip[0] = 0x45;
	ip[2] = uint8_t(iplen >> 8);
	ip[3] = uint8_t(iplen);
	ip[8] = 64;
	ip[9] = 6;
	ip[12] = 198; ip[13] = 18; ip[15] = 1;
	ip[16] = 198; ip[17] = 19; ip[19] = 2;
	uint32_t s = 0;
	for (unsigned i = 0; i < 20; i += 2)
		s += uint32_t(ip[i] << 8 | ip[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	ip[10] = uint8_t(~s >> 8);
	ip[11] = uint8_t(~s);
	uint8_t *tcp = ip + 20;
	tcp[0] = 0xc3; tcp[1] = 0x50; tcp[2] = 0x01; tcp[3] = 0xbb;
	tcp[12] = uint8_t(((20 + optlen) / 4) << 4);
	tcp[13] = flags;
	tcp[16] = 0x5a; tcp[17] = 0xa5;
	std::memcpy(tcp + 20, opts, optlen);
	return 14 + iplen;
}

/* Raw-buffer path: a SYN whose MSS (1460) is clamped to 1400 every time.
 * The two MSS bytes and the checksum are restored after each call (four
 * byte stores), so every iteration does the full parse + rewrite. */
void
BM_tcpopt_syn_parse_clamp(benchmark::State &st)
{
	uint8_t f[128];
	build_frame(f, 0x02, kSynOpts, sizeof(kSynOpts), 0);
	uint8_t *tcp = f + 34;
	tcpopt_ctx *ctx = make_ctx(1400);

	for (auto _ : st) {
		benchmark::DoNotOptimize(
			tcpopt_process(ctx, tcp, 40, 4, 0, 0, nullptr));
		tcp[22] = 0x05; tcp[23] = 0xb4;
		tcp[16] = 0x5a; tcp[17] = 0xa5;
		benchmark::ClobberMemory();
	}
	if (tcpopt_counters(ctx)->event[TCPOPT_EV_MSS_CLAMPED] !=
	    uint64_t(st.iterations()))
		st.SkipWithError("the SYN was not clamped every time");
	st.SetItemsProcessed(int64_t(st.iterations()));
}
BENCHMARK(BM_tcpopt_syn_parse_clamp);

/* Same SYN, MSS already below the clamp: parse and count only. */
void
BM_tcpopt_syn_parse_no_clamp(benchmark::State &st)
{
	uint8_t f[128];
	build_frame(f, 0x02, kSynOpts, sizeof(kSynOpts), 0);
	tcpopt_ctx *ctx = make_ctx(1460);

	for (auto _ : st)
		benchmark::DoNotOptimize(
			tcpopt_process(ctx, f + 34, 40, 4, 0, 0, nullptr));
	st.SetItemsProcessed(int64_t(st.iterations()));
}
BENCHMARK(BM_tcpopt_syn_parse_no_clamp);

/* Data segment, TS only: the common case, nothing to rewrite. */
void
BM_tcpopt_data_ts_only(benchmark::State &st)
{
	uint8_t f[256];
	build_frame(f, 0x10, kDataOpts, sizeof(kDataOpts), 100);
	tcpopt_ctx *ctx = make_ctx(1400);

	for (auto _ : st)
		benchmark::DoNotOptimize(
			tcpopt_process(ctx, f + 34, 132, 4, 0, 0, nullptr));
	st.SetItemsProcessed(int64_t(st.iterations()));
}
BENCHMARK(BM_tcpopt_data_ts_only);

/* The context-free walker alone, on the SYN. */
void
BM_tcpopt_parse_syn(benchmark::State &st)
{
	uint8_t f[128];
	build_frame(f, 0x02, kSynOpts, sizeof(kSynOpts), 0);
	tcpopt_parsed p;

	for (auto _ : st) {
		benchmark::DoNotOptimize(tcpopt_parse(f + 34, 40, &p));
		benchmark::ClobberMemory();
	}
	st.SetItemsProcessed(int64_t(st.iterations()));
}
BENCHMARK(BM_tcpopt_parse_syn);

/* What the stage calls: tcpopt_burst() over 32 parsed mbufs. */
struct alignas(64) FakeMbuf {
	rte_mbuf m;
	uint8_t priv[PKT_META_PRIV_SIZE];
	uint8_t room[RTE_PKTMBUF_HEADROOM + 256];
};
FakeMbuf g_mbufs[kBurst];

void
load_burst(rte_mbuf **pkts, uint8_t flags, const uint8_t *opts,
	   unsigned optlen, unsigned payload, FakeMbuf *mbufs = g_mbufs)
{
	for (unsigned i = 0; i < kBurst; i++) {
		FakeMbuf *fm = &mbufs[i];
		rte_mbuf *m = &fm->m;

		std::memset(fm, 0, sizeof(*fm));
		m->buf_addr = fm->room;
		m->buf_len = sizeof(fm->room);
		m->data_off = RTE_PKTMBUF_HEADROOM;
		m->priv_size = PKT_META_PRIV_SIZE;
		m->nb_segs = 1;
		rte_mbuf_refcnt_set(m, 1);
		unsigned len = build_frame(rte_pktmbuf_mtod(m, uint8_t *), flags,
					   opts, optlen, payload);
		m->data_len = uint16_t(len);
		m->pkt_len = len;
		pkt_parse(m, pkt_meta(m), 0);
		pkts[i] = m;
	}
}

void
BM_tcpopt_burst_data_ts_only(benchmark::State &st)
{
	rte_mbuf *pkts[kBurst];
	load_burst(pkts, 0x10, kDataOpts, sizeof(kDataOpts), 100);
	tcpopt_ctx *ctx = make_ctx(1400);

	for (auto _ : st)
		benchmark::DoNotOptimize(tcpopt_burst(ctx, pkts, kBurst));
	st.SetItemsProcessed(int64_t(st.iterations()) * kBurst);
}
BENCHMARK(BM_tcpopt_burst_data_ts_only);

void
BM_tcpopt_burst_syn_no_clamp(benchmark::State &st)
{
	rte_mbuf *pkts[kBurst];
	load_burst(pkts, 0x02, kSynOpts, sizeof(kSynOpts), 0);
	tcpopt_ctx *ctx = make_ctx(1460);

	for (auto _ : st)
		benchmark::DoNotOptimize(tcpopt_burst(ctx, pkts, kBurst));
	st.SetItemsProcessed(int64_t(st.iterations()) * kBurst);
}
BENCHMARK(BM_tcpopt_burst_syn_no_clamp);

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
uint64_t g_parse_err[PKT_ERR_MAX];
uint64_t g_non_ip;

/* app/worker.c classify(), common case: no drop policy, frames that fit. */
uint16_t
parse_loop(rte_mbuf **pkts, uint16_t n, uint32_t max_frame)
{
	uint64_t non_ip = 0;
	uint16_t i;

	for (i = 0; i < n; i++) {
		rte_mbuf *m = pkts[i];
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
uint8_t g_frame[256];

void
rx_copy(rte_mbuf **pkts)
{
	for (unsigned i = 0; i < kBurst; i++)
		std::memcpy(rte_pktmbuf_mtod(pkts[i], uint8_t *), g_frame,
			    pkts[i]->data_len);
}

enum class Way { kParseOnly, kTwoPasses, kOnePass };

void
datapath(benchmark::State &st, Way way, bool syn)
{
	const size_t nb = size_t(st.range(0));
	std::vector<rte_mbuf *> bursts(nb * kBurst);
	FakeMbuf *mem = static_cast<FakeMbuf *>(
		std::aligned_alloc(alignof(FakeMbuf), nb * kBurst * sizeof(FakeMbuf)));

	if (mem == nullptr) {
		st.SkipWithError("out of memory");
		return;
	}
	for (size_t b = 0; b < nb; b++) {
		if (syn)
			load_burst(&bursts[b * kBurst], 0x02, kSynOpts,
				   sizeof(kSynOpts), 0, mem + b * kBurst);
		else
			load_burst(&bursts[b * kBurst], 0x10, kDataOpts,
				   sizeof(kDataOpts), 100, mem + b * kBurst);
	}
	tcpopt_ctx *ctx = make_ctx(1400);
	const tcpopt_parse_args pa = { 0, 9018, g_parse_err, &g_non_ip };
	uint16_t rest;
	size_t b = 0;

	std::memcpy(g_frame, rte_pktmbuf_mtod(bursts[0], uint8_t *),
		    bursts[0]->data_len);
	for (auto _ : st) {
		rte_mbuf **pkts = &bursts[b * kBurst];

		b = b + 1 == nb ? 0 : b + 1;
		rx_copy(pkts);
		benchmark::ClobberMemory();
		switch (way) {
		case Way::kParseOnly:
			benchmark::DoNotOptimize(parse_loop(pkts, kBurst, 9018));
			break;
		case Way::kTwoPasses:
			benchmark::DoNotOptimize(tcpopt_burst(
				ctx, pkts, parse_loop(pkts, kBurst, 9018)));
			break;
		case Way::kOnePass:
			benchmark::DoNotOptimize(tcpopt_parse_burst(
				ctx, pkts, kBurst, &pa, &rest));
			break;
		}
	}
	if (way != Way::kParseOnly && syn &&
	    tcpopt_counters(ctx)->event[TCPOPT_EV_MSS_CLAMPED] !=
	    uint64_t(st.iterations()) * kBurst)
		st.SkipWithError("not every SYN was clamped");
	st.SetItemsProcessed(int64_t(st.iterations()) * kBurst);
	std::free(mem);
}

void BM_datapath_syn_parse_only(benchmark::State &st) { datapath(st, Way::kParseOnly, true); }
void BM_datapath_syn_two_passes(benchmark::State &st) { datapath(st, Way::kTwoPasses, true); }
void BM_datapath_syn_one_pass(benchmark::State &st) { datapath(st, Way::kOnePass, true); }
void BM_datapath_data_parse_only(benchmark::State &st) { datapath(st, Way::kParseOnly, false); }
void BM_datapath_data_two_passes(benchmark::State &st) { datapath(st, Way::kTwoPasses, false); }
void BM_datapath_data_one_pass(benchmark::State &st) { datapath(st, Way::kOnePass, false); }
BENCHMARK(BM_datapath_syn_parse_only)->Arg(1)->Arg(512);
BENCHMARK(BM_datapath_syn_two_passes)->Arg(1)->Arg(512);
BENCHMARK(BM_datapath_syn_one_pass)->Arg(1)->Arg(512);
BENCHMARK(BM_datapath_data_parse_only)->Arg(1)->Arg(512);
BENCHMARK(BM_datapath_data_two_passes)->Arg(1)->Arg(512);
BENCHMARK(BM_datapath_data_one_pass)->Arg(1)->Arg(512);

} // namespace

BENCHMARK_MAIN();
