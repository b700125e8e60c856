/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/tcpopt per-packet cost: parse + clamp of a SYN with typical Linux
 * options, and the data-segment case (NOP NOP TS) that dominates traffic.
 * Every benchmark reports items = packets, so ns/packet = 1e9 / items/s.
 * No EAL: contexts live in static memory and mbufs are laid out by hand.
 */

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>

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
	   unsigned optlen, unsigned payload)
{
	for (unsigned i = 0; i < kBurst; i++) {
		FakeMbuf *fm = &g_mbufs[i];
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

} // namespace

BENCHMARK_MAIN();
