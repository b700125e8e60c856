/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/tcp costs: building and parsing a full-sized data segment (software
 * checksums included), the engine per segment in a bulk transfer between
 * two engines in memory (both sides' work: send, receive, ACK), and a
 * whole connection (handshake + close) per iteration, and the lookup of
 * a received frame's connection (cache hit or table). Items are segments,
 * connections or lookups, so ns/item = 1e9 / items/s.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "../../tests/test_eal.h"

#include "cbench.h"
#include "pkt.h"
#include "tcp.h"
#include "tcp_seg.h"

static struct rte_mempool *g_pool;
static uint8_t g_payload[65536];

static void
endpoints(struct tcp_endpoints *ep, uint16_t lport)
{
	memset(ep, 0, sizeof(*ep));
	ep->family = 4;
	ep->laddr[0] = 198; ep->laddr[1] = 18; ep->laddr[3] = 1;
	ep->raddr[0] = 198; ep->raddr[1] = 18; ep->raddr[2] = 1; ep->raddr[3] = 2;
	ep->lport = lport;
	ep->rport = 80;
}

static struct rte_mbuf *
payload_chain(uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(g_pool);

	memcpy(rte_pktmbuf_append(m, (uint16_t)len), g_payload, len);
	return m;
}

static void
BM_SegmentBuild1448(struct cbench_state *st)
{
	struct tcp_endpoints ep;
	struct tcp_seg_out o = { 0 };
	struct rte_mbuf *data = payload_chain(1448);

	endpoints(&ep, 40000);
	o.flags = TCP_FL_ACK;
	o.opts = TCP_SO_TS;
	CBENCH_LOOP(st) {
		o.seq += 1448;
		struct rte_mbuf *m = tcp_seg_build(g_pool, &ep, &o, data, 0, 1448);

		cbench_do_not_optimize(m);
		rte_pktmbuf_free(m);
	}
	rte_pktmbuf_free(data);
	cbench_set_items_processed(st, cbench_iterations(st));
}

static void
BM_SegmentParseVerify1448(struct cbench_state *st)
{
	struct tcp_endpoints ep;
	struct tcp_seg_out o = { 0 };
	struct tcp_seg_in s;
	struct rte_mbuf *data = payload_chain(1448);

	endpoints(&ep, 40000);
	o.flags = TCP_FL_ACK;
	o.opts = TCP_SO_TS;
	struct rte_mbuf *m = tcp_seg_build(g_pool, &ep, &o, data, 0, 1448);

	pkt_parse(m, pkt_meta(m), 0);
	CBENCH_LOOP(st) {
		int rc = tcp_seg_parse(m, pkt_meta(m), &s, 1);

		cbench_do_not_optimize(rc);
	}
	rte_pktmbuf_free(m);
	rte_pktmbuf_free(data);
	cbench_set_items_processed(st, cbench_iterations(st));
}

/* The payload checksum alone, over bytes/arg, as tcp_raw_sum() runs it
 * (AVX2 where the CPU has it) and in 64-bit steps only: the two side by
 * side give the vector loop's ratio. Items are bytes. */
static void
raw_sum(struct cbench_state *st, uint16_t (*fn)(const void *, uint32_t))
{
	const uint32_t len = (uint32_t)cbench_range(st, 0);

	CBENCH_LOOP(st) {
		uint16_t s = fn(g_payload, len);

		cbench_do_not_optimize(s);
	}
	cbench_set_bytes_processed(st, cbench_iterations(st) * len);
}
static void BM_RawSum(struct cbench_state *st) { raw_sum(st, tcp_raw_sum); }
static void BM_RawSumScalar(struct cbench_state *st) { raw_sum(st, tcp_raw_sum_scalar); }

/* One engine's side: the connection it has, drained of what arrives. */
struct sink {
	struct tcp_conn *conn;
};

static void
sink_cb(struct tcp_conn *c, void *arg, uint32_t ev, uint64_t now)
{
	struct sink *s = arg;
	static uint8_t buf[65536];

	if (ev & TCP_EV_CONNECTED)
		s->conn = c;
	if (ev & TCP_EV_READABLE)
		while (tcp_recv(c, buf, sizeof(buf), now) > 0)
			;
	if (ev & TCP_EV_CLOSED)
		s->conn = NULL;
}

/* Two engines wired back to back in memory: a connects, b listens on 80. */
struct pair {
	struct tcp_engine *a, *b;
	struct sink sa, sb;
	uint64_t now;
	uint64_t segs;
};

static int
pair_init(struct pair *p, const char *tag)
{
	struct tcp_engine_params ep;
	char na[32], nb[32];

	memset(p, 0, sizeof(*p));
	p->now = 1000000000ull;
	snprintf(na, sizeof(na), "%s_a", tag);
	snprintf(nb, sizeof(nb), "%s_b", tag);
	tcp_engine_params_init(&ep);
	ep.pool = g_pool;
	ep.cb = sink_cb;
	ep.max_conns = 256;
	ep.name = na;
	ep.cb_arg = &p->sa;
	p->a = tcp_engine_create(&ep);
	ep.name = nb;
	ep.cb_arg = &p->sb;
	p->b = tcp_engine_create(&ep);
	if (p->a == NULL || p->b == NULL)
		return -1;
	tcp_listen(p->b, 80, true);
	return 0;
}

static void
pair_fini(struct pair *p)
{
	tcp_engine_free(p->a);
	tcp_engine_free(p->b);
}

/* Move every queued frame across, both ways, until quiet; zero delay,
 * the clock ticks 10 us per exchange. */
static void
pair_settle(struct pair *p)
{
	struct rte_mbuf *pkts[64];
	bool moved = true;

	while (moved) {
		moved = false;
		for (int dir = 0; dir < 2; dir++) {
			struct tcp_engine *src = dir ? p->a : p->b;
			struct tcp_engine *dst = dir ? p->b : p->a;
			uint16_t n;

			while ((n = tcp_tx_burst(src, pkts, 64)) > 0) {
				moved = true;
				p->segs += n;
				for (uint16_t i = 0; i < n; i++) {
					pkt_parse(pkts[i], pkt_meta(pkts[i]), 0);
					if (tcp_input(dst, pkts[i], p->now) !=
					    TCP_INPUT_CONSUMED)
						rte_pktmbuf_free(pkts[i]);
				}
			}
		}
		p->now += 10000;
		tcp_timers_run(p->a, p->now);
		tcp_timers_run(p->b, p->now);
	}
}

static void
BM_BulkTransferPerSegment(struct cbench_state *st)
{
	struct pair p;
	struct tcp_endpoints ep;

	if (pair_init(&p, "bulk") < 0) {
		cbench_skip_with_error(st, "tcp_engine_create failed");
		pair_fini(&p);
		return;
	}
	endpoints(&ep, 40000);
	struct tcp_conn *c = tcp_connect(p.a, &ep, &p.sa, p.now);

	p.sa.conn = c;
	pair_settle(&p);
	p.segs = 0;
	CBENCH_LOOP(st) {
		int32_t n = tcp_send(c, g_payload, sizeof(g_payload), p.now);

		cbench_do_not_optimize(n);
		pair_settle(&p);
	}
	cbench_set_items_processed(st, (int64_t)p.segs);
	cbench_counter(st, "segments", (double)p.segs, CBENCH_COUNTER_PLAIN);
	pair_fini(&p);
}

static void
BM_ConnectionOpenAndClose(struct cbench_state *st)
{
	struct pair p;
	struct tcp_endpoints ep;
	uint16_t port = 1024;

	if (pair_init(&p, "conn") < 0) {
		cbench_skip_with_error(st, "tcp_engine_create failed");
		pair_fini(&p);
		return;
	}
	CBENCH_LOOP(st) {
		endpoints(&ep, port);
		port = port == 65535 ? 1024 : port + 1;
		struct tcp_conn *c = tcp_connect(p.a, &ep, &p.sa, p.now);

		p.sa.conn = c;
		pair_settle(&p);
		tcp_shutdown(c, p.now);
		if (p.sb.conn)
			tcp_shutdown(p.sb.conn, p.now);
		pair_settle(&p);
		/* skip TIME-WAIT so the pool does not fill */
		p.now += 61000000000ull;
		tcp_timers_run(p.a, p.now);
		tcp_timers_run(p.b, p.now);
	}
	cbench_set_items_processed(st, cbench_iterations(st));
	pair_fini(&p);
}

/*
 * tcp_conn_lookup() of a received frame among conns connections: the
 * 64-slot cache by ports, then the rte_hash table. Each connection has one
 * frame from its peer; run frames of one connection come in a row (32: a
 * bulk burst; 1: every frame another connection). Items are lookups.
 */
static void
conn_lookup(struct cbench_state *st, uint32_t run)
{
	const uint32_t conns = (uint32_t)cbench_range(st, 0);
	struct tcp_engine_params p;
	struct tcp_engine *e;
	struct rte_mbuf *frames[4096] = { 0 }, *pkts[64];
	struct sink sk = { 0 };
	uint64_t now = 1000000000ull, hits = 0;
	uint32_t k = 0;

	tcp_engine_params_init(&p);
	p.pool = g_pool;
	p.cb = sink_cb;
	p.cb_arg = &sk;
	p.max_conns = 8192;
	p.name = "lookup";
	e = tcp_engine_create(&p);
	if (e == NULL || conns > RTE_DIM(frames)) {
		cbench_skip_with_error(st, "tcp_engine_create failed");
		tcp_engine_free(e);
		return;
	}
	for (uint32_t i = 0; i < conns; i++) {
		struct tcp_endpoints ep, peer;
		struct tcp_seg_out o = { 0 };
		uint16_t n;

		endpoints(&ep, (uint16_t)(1024 + i));
		if (tcp_connect(e, &ep, &sk, now) == NULL)
			break;
		while ((n = tcp_tx_burst(e, pkts, 64)) > 0)
			rte_pktmbuf_free_bulk(pkts, n);
		/* The peer's frame: the endpoints the other way round. */
		peer = ep;
		memcpy(peer.laddr, ep.raddr, sizeof(peer.laddr));
		memcpy(peer.raddr, ep.laddr, sizeof(peer.raddr));
		peer.lport = ep.rport;
		peer.rport = ep.lport;
		o.flags = TCP_FL_ACK;
		frames[i] = tcp_seg_build(g_pool, &peer, &o, NULL, 0, 0);
		if (frames[i] == NULL)
			break;
		pkt_parse(frames[i], pkt_meta(frames[i]), 0);
		if (tcp_conn_lookup(e, frames[i]) == NULL) {
			cbench_skip_with_error(st, "a frame does not find its connection");
			goto out;
		}
	}
	if (frames[conns - 1] == NULL) {
		cbench_skip_with_error(st, "set-up failed");
		goto out;
	}
	CBENCH_LOOP(st) {
		for (uint32_t i = 0; i < 32; i++)
			hits += tcp_conn_lookup(e, frames[(k + i / run) % conns]) != NULL;
		k += 32 / run;
	}
	cbench_do_not_optimize(hits);
	cbench_set_items_processed(st, cbench_iterations(st) * 32);
out:
	for (uint32_t i = 0; i < conns; i++)
		rte_pktmbuf_free(frames[i]);
	tcp_engine_free(e);
}

static void BM_ConnLookupBursts(struct cbench_state *st) { conn_lookup(st, 32); }
static void BM_ConnLookupInterleaved(struct cbench_state *st) { conn_lookup(st, 1); }

static const struct cbench_def benches[] = {
	{ CBENCH(BM_SegmentBuild1448) },
	{ CBENCH(BM_SegmentParseVerify1448) },
	{ CBENCH(BM_RawSum), CBENCH_ARGS(1448, 9000) },
	{ CBENCH(BM_RawSumScalar), CBENCH_ARGS(1448, 9000) },
	{ CBENCH(BM_BulkTransferPerSegment) },
	{ CBENCH(BM_ConnectionOpenAndClose) },
	{ CBENCH(BM_ConnLookupBursts), CBENCH_ARGS(1, 16, 4096) },
	{ CBENCH(BM_ConnLookupInterleaved), CBENCH_ARGS(1, 16, 4096) },
};

int
main(int argc, char **argv)
{
	int rc;

	if (test_eal_start("bench_tcp", 256) < 0)
		return 1;
	g_pool = rte_pktmbuf_pool_create("bench_tcp", 16383, 256, PKT_META_PRIV_SIZE,
					 RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (g_pool == NULL)
		return 1;
	rc = cbench_main(argc, argv, benches, RTE_DIM(benches));
	rte_eal_cleanup();
	return rc;
}
