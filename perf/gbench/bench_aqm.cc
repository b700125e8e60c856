// SPDX-License-Identifier: BSD-3-Clause
//
// lib/aqm micro-benchmarks: enqueue + dequeue per packet through FQ-CoDel
// and the shaper (at 100 Gbit/s, so it never limits), with 1, 1k and 64k
// active flows in one pipe, and 10k flows spread over 1k pipes.
// Packets are 64 bytes and recycled; the clock is virtual.

#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "../../tests/test_eal.h"

#include "aqm.h"
#include "pkt.h"

namespace {

constexpr unsigned kBurst = 32;
rte_mempool *g_pool;

struct Fixture {
	aqm_sched *s = nullptr;
	std::vector<rte_mbuf *> ring; // free packets, FIFO
	size_t head = 0, tail = 0, count = 0;

	Fixture(uint32_t flows, uint32_t pipes, uint32_t flows_per_pipe)
	{
		aqm_sched_params sp;
		aqm_pipe_params pp;

		aqm_sched_params_default(&sp);
		sp.max_pipes = pipes;
		sp.max_flows = pipes * flows_per_pipe;
		s = aqm_sched_create(&sp);
		aqm_pipe_params_default(&pp);
		pp.fq.flows = flows_per_pipe;
		pp.shaper.rate_bps = AQM_RATE_MAX;
		for (uint32_t i = 0; i < pipes; i++)
			aqm_sched_pipe_add(s, &pp);
		uint32_t npkts = flows < 4096 ? 4096 : flows;
		ring.resize(npkts);
		for (uint32_t i = 0; i < npkts; i++) {
			rte_mbuf *m = rte_pktmbuf_alloc(g_pool);
			rte_pktmbuf_append(m, 64);
			struct pkt_meta *meta = pkt_meta(m);
			memset(meta, 0, sizeof(*meta));
			uint32_t f = i % flows;
			meta->l3 = PKT_L3_IPV4;
			meta->l3_off = 14;
			meta->flow_hash = f * 0x9e3779b1u;
			meta->sport = (uint16_t)(f % pipes); // pipe of this packet
			ring[i] = m;
		}
		count = npkts;
		tail = 0;
	}
	~Fixture()
	{
		rte_mbuf *out[64];
		uint16_t n;

		while ((n = aqm_sched_flush_burst(s, out, 64)) > 0)
			rte_pktmbuf_free_bulk(out, n);
		aqm_sched_free(s);
		for (size_t i = 0; i < count; i++)
			rte_pktmbuf_free(ring[(head + i) % ring.size()]);
	}
};

void
run(benchmark::State &state, uint32_t flows, uint32_t pipes, uint32_t fpp)
{
	Fixture fx(flows, pipes, fpp);
	rte_mbuf *in[kBurst], *out[kBurst];
	uint32_t pipe_ids[kBurst];
	uint64_t now = 1000000000ULL;
	size_t size = fx.ring.size();

	for (auto _ : state) {
		for (unsigned i = 0; i < kBurst; i++) {
			in[i] = fx.ring[fx.head];
			fx.head = (fx.head + 1) % size;
			pipe_ids[i] = pkt_meta(in[i])->sport;
		}
		fx.count -= kBurst;
		aqm_sched_enqueue_burst(fx.s, pipe_ids, in, kBurst, now);
		now += 1000;
		uint16_t n = aqm_sched_dequeue_burst(fx.s, out, kBurst, now);
		for (uint16_t i = 0; i < n; i++) {
			fx.ring[(fx.head + fx.count) % size] = out[i];
			fx.count++;
		}
		benchmark::DoNotOptimize(n);
	}
	state.SetItemsProcessed(state.iterations() * kBurst);
	state.counters["ns_per_pkt"] = benchmark::Counter(
		(double)state.iterations() * kBurst,
		benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_aqm_1_flow(benchmark::State &st) { run(st, 1, 1, 1024); }
void BM_aqm_1k_flows(benchmark::State &st) { run(st, 1024, 1, 1024); }
void BM_aqm_64k_flows(benchmark::State &st) { run(st, 65536, 1, 65536); }
void BM_aqm_10k_flows_1k_pipes(benchmark::State &st) { run(st, 10240, 1000, 16); }

BENCHMARK(BM_aqm_1_flow);
BENCHMARK(BM_aqm_1k_flows);
BENCHMARK(BM_aqm_64k_flows);
BENCHMARK(BM_aqm_10k_flows_1k_pipes);

} // namespace

int
main(int argc, char **argv)
{
	if (test_eal_start("bench_aqm", 512) < 0)
		return 1;
	g_pool = rte_pktmbuf_pool_create("bench_aqm", 80000, 256, PKT_META_PRIV_SIZE,
					 RTE_PKTMBUF_HEADROOM + 256, SOCKET_ID_ANY);
	if (g_pool == nullptr)
		return 1;
	benchmark::Initialize(&argc, argv);
	benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	rte_eal_cleanup();
	return 0;
}
