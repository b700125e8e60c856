// SPDX-License-Identifier: BSD-3-Clause
//
// lib/impair micro-benchmarks: enqueue + dequeue per packet in steady
// state, ~1000 packets held (1 ms of delay, one packet per virtual
// microsecond). Inputs come from rte_pktmbuf_alloc_bulk and outputs go
// back with rte_pktmbuf_free_bulk, because lost packets are freed inside
// the library; BM_impair_mempool_only is that cost alone, to subtract.

#include <benchmark/benchmark.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "../../tests/test_eal.h"

#include "impair.h"

namespace {

constexpr unsigned kBurst = 32;
constexpr uint64_t kGapNs = 1000;
rte_mempool *g_pool;

void
run(benchmark::State &state, const impair_params &p, bool use_impair)
{
	impair *im = use_impair ? impair_create(&p) : nullptr;
	rte_mbuf *in[kBurst], *out[2 * kBurst];
	uint64_t now = 1000000000ULL;

	if (use_impair && im == nullptr) {
		state.SkipWithError("impair_create failed");
		return;
	}
	for (auto _ : state) {
		if (rte_pktmbuf_alloc_bulk(g_pool, in, kBurst) != 0) {
			state.SkipWithError("mempool empty");
			break;
		}
		for (unsigned i = 0; i < kBurst; i++)
			rte_pktmbuf_append(in[i], 64);
		if (im == nullptr) {
			rte_pktmbuf_free_bulk(in, kBurst);
			continue;
		}
		impair_enqueue_burst(im, in, kBurst, now);
		now += kBurst * kGapNs;
		uint16_t n;
		while ((n = impair_dequeue_burst(im, out, 2 * kBurst, now)) > 0)
			rte_pktmbuf_free_bulk(out, n);
	}
	state.SetItemsProcessed(state.iterations() * kBurst);
	state.counters["ns_per_pkt"] = benchmark::Counter(
		(double)state.iterations() * kBurst,
		benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
	impair_free(im);
}

impair_params
base()
{
	impair_params p;

	impair_params_default(&p);
	p.limit = 4096;
	return p;
}

void BM_impair_mempool_only(benchmark::State &st) { run(st, base(), false); }

void
BM_impair_loss_only(benchmark::State &st)
{
	impair_params p = base();
	p.loss = 0.01;
	run(st, p, true);
}

void
BM_impair_delay(benchmark::State &st)
{
	impair_params p = base();
	p.delay_ns = 1000000;
	run(st, p, true);
}

void
BM_impair_delay_jitter_keep_order(benchmark::State &st)
{
	impair_params p = base();
	p.delay_ns = 1000000;
	p.jitter_ns = 200000;
	run(st, p, true);
}

void
BM_impair_delay_jitter_reorder(benchmark::State &st)
{
	impair_params p = base();
	p.delay_ns = 1000000;
	p.jitter_ns = 200000;
	p.jitter_dist = IMPAIR_JITTER_NORMAL;
	p.jitter_reorder = true;
	p.reorder = 0.01;
	run(st, p, true);
}

void
BM_impair_loss_ge_delay(benchmark::State &st)
{
	impair_params p = base();
	p.delay_ns = 1000000;
	p.loss = 0.01;
	p.ge_p = 0.001;
	p.ge_r = 0.3;
	p.ge_loss_bad = 0.5;
	run(st, p, true);
}

BENCHMARK(BM_impair_mempool_only);
BENCHMARK(BM_impair_loss_only);
BENCHMARK(BM_impair_delay);
BENCHMARK(BM_impair_delay_jitter_keep_order);
BENCHMARK(BM_impair_delay_jitter_reorder);
BENCHMARK(BM_impair_loss_ge_delay);

} // namespace

int
main(int argc, char **argv)
{
	if (test_eal_start("bench_impair", 256) < 0)
		return 1;
	g_pool = rte_pktmbuf_pool_create("bench_impair", 16383, 256, 64,
					 RTE_PKTMBUF_HEADROOM + 256, SOCKET_ID_ANY);
	if (g_pool == nullptr)
		return 1;
	benchmark::Initialize(&argc, argv);
	benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	rte_eal_cleanup();
	return 0;
}
