/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/tcp costs: building and parsing a full-sized data segment (software
 * checksums included), the engine per segment in a bulk transfer between
 * two engines in memory (both sides' work: send, receive, ACK), and a
 * whole connection (handshake + close) per iteration. Items are segments
 * or connections, so ns/item = 1e9 / items/s.
 */

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "../../tests/test_eal.h"

extern "C" {
#include "pkt.h"
#include "tcp.h"
#include "tcp_seg.h"
}

namespace {

rte_mempool *g_pool;
uint8_t g_payload[65536];

void
endpoints(tcp_endpoints *ep, uint16_t lport)
{
	std::memset(ep, 0, sizeof(*ep));
	ep->family = 4;
	ep->laddr[0] = 198; ep->laddr[1] = 18; ep->laddr[3] = 1;
	ep->raddr[0] = 198; ep->raddr[1] = 18; ep->raddr[2] = 1; ep->raddr[3] = 2;
	ep->lport = lport;
	ep->rport = 80;
}

rte_mbuf *
payload_chain(uint32_t len)
{
	rte_mbuf *m = rte_pktmbuf_alloc(g_pool);
	std::memcpy(rte_pktmbuf_append(m, (uint16_t)len), g_payload, len);
	return m;
}

void
BM_SegmentBuild1448(benchmark::State &st)
{
	tcp_endpoints ep;
	tcp_seg_out o = {};
	rte_mbuf *data = payload_chain(1448);

	endpoints(&ep, 40000);
	o.flags = TCP_FL_ACK;
	o.opts = TCP_SO_TS;
	for (auto _ : st) {
		o.seq += 1448;
		rte_mbuf *m = tcp_seg_build(g_pool, &ep, &o, data, 0, 1448);
		benchmark::DoNotOptimize(m);
		rte_pktmbuf_free(m);
	}
	rte_pktmbuf_free(data);
	st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_SegmentBuild1448);

void
BM_SegmentParseVerify1448(benchmark::State &st)
{
	tcp_endpoints ep;
	tcp_seg_out o = {};
	tcp_seg_in s;
	rte_mbuf *data = payload_chain(1448);

	endpoints(&ep, 40000);
	o.flags = TCP_FL_ACK;
	o.opts = TCP_SO_TS;
	rte_mbuf *m = tcp_seg_build(g_pool, &ep, &o, data, 0, 1448);
	pkt_parse(m, pkt_meta(m), 0);
	for (auto _ : st) {
		int rc = tcp_seg_parse(m, pkt_meta(m), &s, 1);
		benchmark::DoNotOptimize(rc);
	}
	rte_pktmbuf_free(m);
	rte_pktmbuf_free(data);
	st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_SegmentParseVerify1448);

struct sink {
	tcp_conn *conn;
};

void
sink_cb(tcp_conn *c, void *arg, uint32_t ev, uint64_t now)
{
	sink *s = static_cast<sink *>(arg);
	static uint8_t buf[65536];

	if (ev & TCP_EV_CONNECTED)
		s->conn = c;
	if (ev & TCP_EV_READABLE)
		while (tcp_recv(c, buf, sizeof(buf), now) > 0)
			;
	if (ev & TCP_EV_CLOSED)
		s->conn = nullptr;
}

struct pair {
	tcp_engine *a, *b;
	sink sa, sb;
	uint64_t now = 1000000000ull;
	uint64_t segs = 0;

	explicit pair(const char *tag)
	{
		tcp_engine_params p;
		char na[32], nb[32];

		std::snprintf(na, sizeof(na), "%s_a", tag);
		std::snprintf(nb, sizeof(nb), "%s_b", tag);
		tcp_engine_params_init(&p);
		p.pool = g_pool;
		p.cb = sink_cb;
		p.max_conns = 256;
		p.name = na;
		p.cb_arg = &sa;
		a = tcp_engine_create(&p);
		p.name = nb;
		p.cb_arg = &sb;
		b = tcp_engine_create(&p);
		tcp_listen(b, 80, true);
	}
	~pair()
	{
		tcp_engine_free(a);
		tcp_engine_free(b);
	}
	/* Move every queued frame across, both ways, until quiet; zero
	 * delay, the clock ticks 10 us per exchange. */
	void settle()
	{
		rte_mbuf *pkts[64];
		bool moved = true;

		while (moved) {
			moved = false;
			for (int dir = 0; dir < 2; dir++) {
				tcp_engine *src = dir ? a : b, *dst = dir ? b : a;
				uint16_t n;

				while ((n = tcp_tx_burst(src, pkts, 64)) > 0) {
					moved = true;
					segs += n;
					for (uint16_t i = 0; i < n; i++) {
						pkt_parse(pkts[i], pkt_meta(pkts[i]), 0);
						if (tcp_input(dst, pkts[i], now) != TCP_INPUT_CONSUMED)
							rte_pktmbuf_free(pkts[i]);
					}
				}
			}
			now += 10000;
			tcp_timers_run(a, now);
			tcp_timers_run(b, now);
		}
	}
};

void
BM_BulkTransferPerSegment(benchmark::State &st)
{
	pair p("bulk");
	tcp_endpoints ep;

	endpoints(&ep, 40000);
	tcp_conn *c = tcp_connect(p.a, &ep, &p.sa, p.now);
	p.sa.conn = c;
	p.settle();
	p.segs = 0;
	for (auto _ : st) {
		int32_t n = tcp_send(c, g_payload, sizeof(g_payload), p.now);
		benchmark::DoNotOptimize(n);
		p.settle();
	}
	st.SetItemsProcessed((int64_t)p.segs);
	st.counters["segments"] = (double)p.segs;
}
BENCHMARK(BM_BulkTransferPerSegment);

void
BM_ConnectionOpenAndClose(benchmark::State &st)
{
	pair p("conn");
	tcp_endpoints ep;
	uint16_t port = 1024;

	for (auto _ : st) {
		endpoints(&ep, port);
		port = port == 65535 ? 1024 : port + 1;
		tcp_conn *c = tcp_connect(p.a, &ep, &p.sa, p.now);
		p.sa.conn = c;
		p.settle();
		tcp_shutdown(c, p.now);
		if (p.sb.conn)
			tcp_shutdown(p.sb.conn, p.now);
		p.settle();
		/* skip TIME-WAIT so the pool does not fill */
		p.now += 61000000000ull;
		tcp_timers_run(p.a, p.now);
		tcp_timers_run(p.b, p.now);
	}
	st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_ConnectionOpenAndClose);

} // namespace

int
main(int argc, char **argv)
{
	if (test_eal_start("bench_tcp", 256) < 0)
		return 1;
	g_pool = rte_pktmbuf_pool_create("bench_tcp", 16383, 256, PKT_META_PRIV_SIZE,
					 RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (g_pool == nullptr)
		return 1;
	benchmark::Initialize(&argc, argv);
	benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	return 0;
}
