/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/aqm micro-benchmarks: enqueue + dequeue per packet through FQ-CoDel
 * and the shaper (at 100 Gbit/s, so it never limits), with 1, 1k and 64k
 * active flows in one pipe, and 10k flows spread over 1k pipes; the
 * same with host isolation, and with diffserv4 tins (flows' DSCPs 0,
 * CS1, AF41, EF in turn). Packets are 64 bytes and recycled; the clock
 * is virtual. And the
 * subscriber table's classification of IPv4 packets among 100k /32
 * subscribers, a packet at a time (aqm_subs_lookup()) and a burst at a
 * time (aqm_subs_lookup_burst()).
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "../../tests/test_eal.h"

#include "aqm.h"
#include "aqm_subs.h"
#include "cbench.h"
#include "pkt.h"

#define BURST 32

static struct rte_mempool *g_pool;

/* One scheduler and the packets it cycles through: a FIFO ring of the
 * free ones. */
struct fixture {
	struct aqm_sched *s;
	struct rte_mbuf **ring;
	size_t size;
	size_t head, count;
};

static int
fixture_init(struct fixture *fx, uint32_t flows, uint32_t pipes,
	     uint32_t flows_per_pipe, enum aqm_isolation iso, enum aqm_diffserv ds)
{
	static const uint8_t dscp[4] = { 0, 8, 34, 46 };
	struct aqm_sched_params sp;
	struct aqm_pipe_params pp;
	uint32_t npkts = flows < 4096 ? 4096 : flows;

	memset(fx, 0, sizeof(*fx));
	aqm_sched_params_default(&sp);
	sp.max_pipes = pipes;
	sp.max_flows = pipes * flows_per_pipe;
	sp.isolation = iso != AQM_ISO_FLOWS;
	sp.diffserv = ds != AQM_DIFFSERV_BESTEFFORT;
	fx->s = aqm_sched_create(&sp);
	fx->ring = calloc(npkts, sizeof(*fx->ring));
	if (fx->s == NULL || fx->ring == NULL)
		return -1;
	aqm_pipe_params_default(&pp);
	pp.fq.flows = flows_per_pipe;
	pp.shaper.rate_bps = AQM_RATE_MAX;
	pp.fq.isolation = (uint8_t)iso;
	pp.fq.diffserv = (uint8_t)ds;
	for (uint32_t i = 0; i < pipes; i++)
		aqm_sched_pipe_add(fx->s, &pp);
	for (uint32_t i = 0; i < npkts; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(g_pool);

		if (m == NULL)
			return -1;
		fx->ring[i] = m;
		fx->count++;
		uint8_t *d = (uint8_t *)rte_pktmbuf_append(m, 64);
		struct pkt_meta *meta = pkt_meta(m);
		uint32_t f = i % flows;

		memset(d, 0, 64);
		d[12] = 0x08;
		d[14] = 0x45;
		d[15] = (uint8_t)(dscp[f % 4] << 2);
		memset(meta, 0, sizeof(*meta));
		meta->l3 = PKT_L3_IPV4;
		meta->l3_off = 14;
		meta->flow_hash = f * 0x9e3779b1u;
		meta->sport = (uint16_t)(f % pipes); /* pipe of this packet */
		/* Four flows per source host, one destination (isolation). */
		meta->src[0] = 198;
		meta->src[1] = 18;
		meta->src[2] = (uint8_t)(f >> 10);
		meta->src[3] = (uint8_t)(f >> 2);
		meta->dst[0] = 198;
		meta->dst[1] = 19;
	}
	fx->size = npkts;
	return 0;
}

static void
fixture_fini(struct fixture *fx)
{
	struct rte_mbuf *out[64];
	uint16_t n;

	if (fx->s != NULL) {
		while ((n = aqm_sched_flush_burst(fx->s, out, 64)) > 0)
			rte_pktmbuf_free_bulk(out, n);
		aqm_sched_free(fx->s);
	}
	for (size_t i = 0; i < fx->count; i++)
		rte_pktmbuf_free(fx->ring[(fx->head + i) % fx->size]);
	free(fx->ring);
}

static void
run_ds(struct cbench_state *st, uint32_t flows, uint32_t pipes, uint32_t fpp,
       enum aqm_isolation iso, enum aqm_diffserv ds)
{
	struct fixture fx;
	struct rte_mbuf *in[BURST], *out[BURST];
	uint32_t pipe_ids[BURST];
	uint64_t now = 1000000000ULL;

	if (fixture_init(&fx, flows, pipes, fpp, iso, ds) < 0) {
		cbench_skip_with_error(st, "fixture set-up failed");
		fixture_fini(&fx);
		return;
	}
	CBENCH_LOOP(st) {
		for (unsigned int i = 0; i < BURST; i++) {
			in[i] = fx.ring[fx.head];
			fx.head = (fx.head + 1) % fx.size;
			pipe_ids[i] = pkt_meta(in[i])->sport;
		}
		fx.count -= BURST;
		aqm_sched_enqueue_burst(fx.s, pipe_ids, in, BURST, now);
		now += 1000;
		uint16_t n = aqm_sched_dequeue_burst(fx.s, out, BURST, now);
		for (uint16_t i = 0; i < n; i++) {
			fx.ring[(fx.head + fx.count) % fx.size] = out[i];
			fx.count++;
		}
		cbench_do_not_optimize(n);
	}
	cbench_set_items_processed(st, cbench_iterations(st) * BURST);
	cbench_counter(st, "ns_per_pkt", (double)cbench_iterations(st) * BURST,
		       CBENCH_COUNTER_RATE | CBENCH_COUNTER_INVERT);
	fixture_fini(&fx);
}

static void
run(struct cbench_state *st, uint32_t flows, uint32_t pipes, uint32_t fpp,
    enum aqm_isolation iso)
{
	run_ds(st, flows, pipes, fpp, iso, AQM_DIFFSERV_BESTEFFORT);
}

static void BM_aqm_1_flow(struct cbench_state *st) { run(st, 1, 1, 1024, AQM_ISO_FLOWS); }
static void BM_aqm_1k_flows(struct cbench_state *st) { run(st, 1024, 1, 1024, AQM_ISO_FLOWS); }
static void BM_aqm_64k_flows(struct cbench_state *st) { run(st, 65536, 1, 65536, AQM_ISO_FLOWS); }
static void BM_aqm_10k_flows_1k_pipes(struct cbench_state *st) { run(st, 10240, 1000, 16, AQM_ISO_FLOWS); }
/* The same with host isolation (triple-isolate, four flows per host). */
static void BM_aqm_1k_flows_triple(struct cbench_state *st) { run(st, 1024, 1, 1024, AQM_ISO_TRIPLE); }
static void BM_aqm_10k_flows_1k_pipes_triple(struct cbench_state *st) { run(st, 10240, 1000, 16, AQM_ISO_TRIPLE); }
static void BM_aqm_1k_flows_diffserv4(struct cbench_state *st)
{
	run_ds(st, 1024, 1, 1024, AQM_ISO_FLOWS, AQM_DIFFSERV_4);
}
static void BM_aqm_10k_flows_1k_pipes_diffserv4(struct cbench_state *st)
{
	run_ds(st, 10240, 1000, 16, AQM_ISO_FLOWS, AQM_DIFFSERV_4);
}

/* A subscriber table of 100k /32s (198.18.0.0 + i) and packets whose
 * destinations are spread over them, for the classification benchmarks. */
enum { LOOKUP_SUBS = 100000, LOOKUP_PKTS = 4096 };

struct lookup_fixture {
	struct aqm_subs *s;
	struct rte_mbuf *m[LOOKUP_PKTS];
};

static void
lookup_fixture_free(struct lookup_fixture *f)
{
	for (unsigned int i = 0; i < LOOKUP_PKTS; i++)
		rte_pktmbuf_free(f->m[i]);
	aqm_subs_free(f->s);
}

static int
lookup_fixture_init(struct cbench_state *st, struct lookup_fixture *f)
{
	struct aqm_subs_params p;
	struct aqm_sub_entry *e = calloc(LOOKUP_SUBS, sizeof(*e));
	uint64_t x = 88172645463325252ULL;
	char err[128];
	int ok;

	memset(f, 0, sizeof(*f));
	aqm_subs_params_default(&p);
	p.name = "bench_subs";
	p.max_subs = LOOKUP_SUBS;
	p.max_v6_subs = 0;
	p.pipe.fq.flows = 1;
	p.pipe.fq.isolation = AQM_ISO_FLOWS;
	f->s = aqm_subs_create(&p);
	for (uint32_t i = 0; e != NULL && i < LOOKUP_SUBS; i++) {
		uint32_t a = 0xc6120000u + i;

		e[i].family = 4;
		e[i].depth = 32;
		e[i].addr[0] = (uint8_t)(a >> 24);
		e[i].addr[1] = (uint8_t)(a >> 16);
		e[i].addr[2] = (uint8_t)(a >> 8);
		e[i].addr[3] = (uint8_t)a;
		e[i].down_bps = e[i].up_bps = 10000000;
	}
	ok = f->s != NULL && e != NULL &&
	     aqm_subs_apply(f->s, e, LOOKUP_SUBS, err, sizeof(err)) == LOOKUP_SUBS;
	free(e);
	if (!ok) {
		cbench_skip_with_error(st, "table set-up failed");
		return -1;
	}
	for (unsigned int i = 0; i < LOOKUP_PKTS; i++) {
		struct pkt_meta *meta;
		uint32_t a;

		f->m[i] = rte_pktmbuf_alloc(g_pool);
		if (f->m[i] == NULL) {
			cbench_skip_with_error(st, "no mbufs");
			return -1;
		}
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		a = rte_cpu_to_be_32(0xc6120000u + (uint32_t)(x % LOOKUP_SUBS));
		meta = pkt_meta(f->m[i]);
		memset(meta, 0, sizeof(*meta));
		meta->l3 = PKT_L3_IPV4;
		memcpy(meta->dst, &a, 4);
	}
	return 0;
}

/* One aqm_subs_lookup() per packet. */
static void
BM_aqm_subs_lookup_100k(struct cbench_state *st)
{
	struct lookup_fixture f;
	uint64_t hits = 0;
	size_t k = 0;

	if (lookup_fixture_init(st, &f) == 0) {
		CBENCH_LOOP(st) {
			for (unsigned int i = 0; i < BURST; i++)
				hits += aqm_subs_lookup(f.s, AQM_DIR_DOWN,
							f.m[(k + i) % LOOKUP_PKTS]) > 0;
			k += BURST;
		}
		cbench_do_not_optimize(hits);
		cbench_set_items_processed(st, cbench_iterations(st) * BURST);
		cbench_counter(st, "ns_per_pkt", (double)cbench_iterations(st) * BURST,
			       CBENCH_COUNTER_RATE | CBENCH_COUNTER_INVERT);
	}
	lookup_fixture_free(&f);
}

/* The same packets, BURST at a time through aqm_subs_lookup_burst() (one
 * rte_fib bulk call per burst: what the aqm stage does). */
static void
BM_aqm_subs_lookup_burst_100k(struct cbench_state *st)
{
	struct lookup_fixture f;
	uint64_t hop[BURST];
	uint64_t hits = 0;
	size_t k = 0;

	if (lookup_fixture_init(st, &f) == 0) {
		CBENCH_LOOP(st) {
			aqm_subs_lookup_burst(f.s, AQM_DIR_DOWN, &f.m[k], BURST, hop);
			hits += hop[0] + hop[BURST - 1];
			k = (k + BURST) % LOOKUP_PKTS;
		}
		cbench_do_not_optimize(hits);
		cbench_set_items_processed(st, cbench_iterations(st) * BURST);
		cbench_counter(st, "ns_per_pkt", (double)cbench_iterations(st) * BURST,
			       CBENCH_COUNTER_RATE | CBENCH_COUNTER_INVERT);
	}
	lookup_fixture_free(&f);
}

static const struct cbench_def benches[] = {
	{ CBENCH(BM_aqm_subs_lookup_100k) },
	{ CBENCH(BM_aqm_subs_lookup_burst_100k) },
	{ CBENCH(BM_aqm_1_flow) },
	{ CBENCH(BM_aqm_1k_flows) },
	{ CBENCH(BM_aqm_64k_flows) },
	{ CBENCH(BM_aqm_10k_flows_1k_pipes) },
	{ CBENCH(BM_aqm_1k_flows_triple) },
	{ CBENCH(BM_aqm_10k_flows_1k_pipes_triple) },
	{ CBENCH(BM_aqm_1k_flows_diffserv4) },
	{ CBENCH(BM_aqm_10k_flows_1k_pipes_diffserv4) },
};

int
main(int argc, char **argv)
{
	int rc;

	/* The 100k-subscriber table needs about 400 MB. */
	if (test_eal_start("bench_aqm", 1024) < 0)
		return 1;
	g_pool = rte_pktmbuf_pool_create("bench_aqm", 80000, 256, PKT_META_PRIV_SIZE,
					 RTE_PKTMBUF_HEADROOM + 256, SOCKET_ID_ANY);
	if (g_pool == NULL)
		return 1;
	rc = cbench_main(argc, argv, benches, RTE_DIM(benches));
	rte_eal_cleanup();
	return rc;
}
