/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/impair micro-benchmarks: enqueue + dequeue per packet in steady
 * state, ~1000 packets held (1 ms of delay, one packet per virtual
 * microsecond). Inputs come from rte_pktmbuf_alloc_bulk and outputs go
 * back with rte_pktmbuf_free_bulk, because lost packets are freed inside
 * the library; BM_impair_mempool_only is that cost alone, to subtract.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "../../tests/test_eal.h"

#include "cbench.h"
#include "impair.h"

#define BURST 32
#define GAP_NS 1000

static struct rte_mempool *g_pool;

static void
run(struct cbench_state *st, const struct impair_params *p, bool use_impair)
{
	struct impair *im = use_impair ? impair_create(p) : NULL;
	struct rte_mbuf *in[BURST], *out[2 * BURST];
	uint64_t now = 1000000000ULL;

	if (use_impair && im == NULL) {
		cbench_skip_with_error(st, "impair_create failed");
		return;
	}
	CBENCH_LOOP(st) {
		if (rte_pktmbuf_alloc_bulk(g_pool, in, BURST) != 0) {
			cbench_skip_with_error(st, "mempool empty");
			break;
		}
		for (unsigned int i = 0; i < BURST; i++)
			rte_pktmbuf_append(in[i], 64);
		if (im == NULL) {
			rte_pktmbuf_free_bulk(in, BURST);
			continue;
		}
		impair_enqueue_burst(im, in, BURST, now);
		now += BURST * GAP_NS;
		uint16_t n;
		while ((n = impair_dequeue_burst(im, out, 2 * BURST, now)) > 0)
			rte_pktmbuf_free_bulk(out, n);
	}
	cbench_set_items_processed(st, cbench_iterations(st) * BURST);
	cbench_counter(st, "ns_per_pkt", (double)cbench_iterations(st) * BURST,
		       CBENCH_COUNTER_RATE | CBENCH_COUNTER_INVERT);
	impair_free(im);
}

static struct impair_params
base(void)
{
	struct impair_params p;

	impair_params_default(&p);
	p.limit = 4096;
	return p;
}

static void
BM_impair_mempool_only(struct cbench_state *st)
{
	struct impair_params p = base();

	run(st, &p, false);
}

static void
BM_impair_loss_only(struct cbench_state *st)
{
	struct impair_params p = base();

	p.loss = 0.01;
	run(st, &p, true);
}

static void
BM_impair_delay(struct cbench_state *st)
{
	struct impair_params p = base();

	p.delay_ns = 1000000;
	run(st, &p, true);
}

static void
BM_impair_delay_jitter_keep_order(struct cbench_state *st)
{
	struct impair_params p = base();

	p.delay_ns = 1000000;
	p.jitter_ns = 200000;
	run(st, &p, true);
}

static void
BM_impair_delay_jitter_reorder(struct cbench_state *st)
{
	struct impair_params p = base();

	p.delay_ns = 1000000;
	p.jitter_ns = 200000;
	p.jitter_dist = IMPAIR_JITTER_NORMAL;
	p.jitter_reorder = true;
	p.reorder = 0.01;
	run(st, &p, true);
}

static void
BM_impair_loss_ge_delay(struct cbench_state *st)
{
	struct impair_params p = base();

	p.delay_ns = 1000000;
	p.loss = 0.01;
	p.ge_p = 0.001;
	p.ge_r = 0.3;
	p.ge_loss_bad = 0.5;
	run(st, &p, true);
}

static const struct cbench_def benches[] = {
	{ CBENCH(BM_impair_mempool_only) },
	{ CBENCH(BM_impair_loss_only) },
	{ CBENCH(BM_impair_delay) },
	{ CBENCH(BM_impair_delay_jitter_keep_order) },
	{ CBENCH(BM_impair_delay_jitter_reorder) },
	{ CBENCH(BM_impair_loss_ge_delay) },
};

int
main(int argc, char **argv)
{
	int rc;

	if (test_eal_start("bench_impair", 256) < 0)
		return 1;
	g_pool = rte_pktmbuf_pool_create("bench_impair", 16383, 256, 64,
					 RTE_PKTMBUF_HEADROOM + 256, SOCKET_ID_ANY);
	if (g_pool == NULL)
		return 1;
	rc = cbench_main(argc, argv, benches, RTE_DIM(benches));
	rte_eal_cleanup();
	return rc;
}
