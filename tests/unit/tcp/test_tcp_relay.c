/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transparent-proxy pattern this API is designed for, with three
 * engines in memory: a client C, a proxy P and a server S. P is one engine
 * holding both legs of each relayed connection (their 4-tuples differ:
 * the client leg is server->client, the server leg client->server).
 *
 *   C --port 0-- P --port 1-- S
 *
 * 1. C's SYN reaches P, which has no connection and no listener:
 *    tcp_input() says TCP_INPUT_NO_CONN and the proxy holds the SYN.
 * 2. The proxy opens the server leg from the client's own address and
 *    port (tcp_connect()), announcing the client's MSS.
 * 3. When S accepts (TCP_EV_CONNECTED), the proxy accepts the held SYN
 *    (tcp_accept()); if S refuses (TCP_EV_REFUSED), it answers the held
 *    SYN with tcp_reply_rst(), so C sees what it would see without P.
 * 4. Bytes move with tcp_recv_mbuf() / tcp_send_mbuf(), bounded by the
 *    other leg's send buffer; TCP_EV_WRITABLE resumes a stalled side.
 * 5. A FIN (TCP_EV_PEER_FIN) becomes tcp_shutdown() on the other leg once
 *    its bytes are relayed; a reset becomes tcp_abort().
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tcp_test_util.h"

#define SNDBUF (128 * 1024)

struct pair;
struct leg {
	struct pair *pair;
	int server;            /* 1: the leg toward S */
	struct tcp_conn *conn;
	int peer_fin;          /* FIN received, still to pass on */
	int closed;
};

struct pair {
	struct leg cl, sv;     /* client leg, server leg */
	struct rte_mbuf *held_syn;
	int refused;
};

static struct tcp_engine *C, *P, *S;
/* Options S's SYN-ACK carries: set, S holds SYNs and accepts them itself
 * (as a proxy's client leg does) with these; the first SYN S and C see
 * are copied into syn_at_s and synack_at_c. */
static uint8_t s_xopt[TCP_XOPT_MAX];
static uint32_t s_xopt_len;
static int s_holds;
static uint8_t syn_at_s[128], synack_at_c[128];
static uint32_t syn_at_s_len, synack_at_c_len;
static struct app app_c, app_s;
static struct pair pr;
static uint64_t now;

struct qframe { struct rte_mbuf *m; uint64_t due; int dst; }; /* 0 C, 1 P, 2 S */
static struct qframe q[16384];
static uint32_t qn;

static void
enqueue(struct rte_mbuf *m, int dst)
{
	pkt_parse(m, pkt_meta(m), (uint16_t)(dst == 1 ? m->port : 0));
	q[qn].m = m;
	q[qn].due = now + MS(2);
	q[qn].dst = dst;
	qn++;
}

static void
collect(void)
{
	struct rte_mbuf *pk[64];
	uint16_t n;

	while ((n = tcp_tx_burst(C, pk, 64)) > 0)
		for (uint16_t i = 0; i < n; i++) {
			pk[i]->port = 0; /* arrives on P's port 0 */
			enqueue(pk[i], 1);
		}
	while ((n = tcp_tx_burst(S, pk, 64)) > 0)
		for (uint16_t i = 0; i < n; i++) {
			pk[i]->port = 1;
			enqueue(pk[i], 1);
		}
	while ((n = tcp_tx_burst(P, pk, 64)) > 0)
		for (uint16_t i = 0; i < n; i++)
			enqueue(pk[i], pk[i]->port == 0 ? 0 : 2);
}

static struct leg *
other(struct leg *l)
{
	return l->server ? &l->pair->cl : &l->pair->sv;
}

/* Move what src holds into dst's send buffer; pass a FIN on after it. */
static void
relay(struct leg *src)
{
	struct leg *dst = other(src);
	struct tcp_conn_info i;

	if (src->conn == NULL || dst->conn == NULL)
		return;
	for (;;) {
		uint32_t need = tcp_recv_next_len(src->conn), room;
		struct rte_mbuf *m;

		if (need == 0)
			break;
		/* Not enough room: TCP_EV_WRITABLE on dst will call us. */
		room = tcp_send_space(dst->conn, need);
		if (room < need)
			break;
		m = tcp_recv_mbuf(src->conn, room, now);
		assert_non_null(m);
		assert_true(tcp_send_mbuf(dst->conn, m, now) > 0);
	}
	tcp_conn_get_info(src->conn, &i);
	if (src->peer_fin && i.rcv_queued == 0) {
		src->peer_fin = 0;
		tcp_shutdown(dst->conn, now);
	}
}

static void
proxy_cb(struct tcp_conn *c, void *arg, uint32_t ev, uint64_t t)
{
	struct leg *l = arg;
	struct pair *p = l->pair;

	(void)t;
	if ((ev & TCP_EV_CONNECTED) && l->server) {
		/* The server accepted: now answer the client as the server,
		 * with its MSS and the options its SYN-ACK carried. */
		struct tcp_accept_opts ao;

		l->conn = c;
		memset(&ao, 0, sizeof(ao));
		ao.mss = tcp_conn_peer_mss(c);
		ao.xopt_len = (uint8_t)tcp_conn_peer_xopts(c, ao.xopt);
		p->cl.conn = tcp_accept_opts(P, p->held_syn, &ao, &p->cl, now);
		assert_non_null(p->cl.conn);
		p->held_syn = NULL;
	} else if (ev & TCP_EV_CONNECTED) {
		l->conn = c;
		relay(&p->sv); /* anything the server already said */
	}
	if (ev & TCP_EV_REFUSED && l->server) {
		p->refused = 1;
		assert_int_equal(tcp_reply_rst(P, p->held_syn, now), 0);
		rte_pktmbuf_free(p->held_syn);
		p->held_syn = NULL;
	}
	if (ev & TCP_EV_PEER_FIN)
		l->peer_fin = 1;
	if (ev & (TCP_EV_READABLE | TCP_EV_PEER_FIN))
		relay(l);
	if (ev & TCP_EV_WRITABLE)
		relay(other(l));
	if ((ev & (TCP_EV_RESET | TCP_EV_TIMEOUT)) && other(l)->conn)
		tcp_abort(other(l)->conn, now);
	if (ev & TCP_EV_CLOSED) {
		l->conn = NULL;
		l->closed = 1;
	}
}

static void
deliver_due(void)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < qn; i++) {
		struct qframe f = q[i];
		enum tcp_input_result r;

		if (f.due > now) {
			q[k++] = f;
			continue;
		}
		if (f.dst != 1) {
			const struct pkt_meta *pm = pkt_meta(f.m);
			const uint8_t *th = rte_pktmbuf_mtod_offset(f.m, const uint8_t *, pm->l4_off);
			uint8_t *keep = f.dst == 0 ? synack_at_c : syn_at_s;
			uint32_t *keep_len = f.dst == 0 ? &synack_at_c_len : &syn_at_s_len;

			if ((th[13] & TCP_FL_SYN) && *keep_len == 0) {
				*keep_len = pm->l4_len;
				memcpy(keep, th, pm->l4_len);
			}
		}
		if (f.dst == 0) {
			r = tcp_input(C, f.m, now);
		} else if (f.dst == 2) {
			r = tcp_input(S, f.m, now);
			if (r == TCP_INPUT_NO_CONN && s_holds) {
				assert_non_null(tcp_accept_xopts(S, f.m, s_xopt, s_xopt_len,
								 &app_s, now));
				continue;
			}
		} else {
			r = tcp_input(P, f.m, now);
			if (r == TCP_INPUT_NO_CONN && pr.held_syn == NULL &&
			    pr.sv.conn == NULL && !pr.sv.closed) {
				/* Intercept: hold the SYN, open the server leg
				 * from the client's address and port. */
				const struct pkt_meta *pm = pkt_meta(f.m);
				struct tcp_seg_in s;
				struct tcp_endpoints ep;

				assert_int_equal(tcp_seg_parse(f.m, pm, &s, 1), 0);
				assert_int_equal(s.flags, TCP_FL_SYN);
				memset(&ep, 0, sizeof(ep));
				ep.family = pm->l3 == PKT_L3_IPV4 ? 4 : 6;
				memcpy(ep.laddr, pm->src, 16);
				memcpy(ep.raddr, pm->dst, 16);
				ep.lport = pm->sport;
				ep.rport = pm->dport;
				ep.port = 1;
				ep.mss = s.mss;
				ep.xopt_len = (uint8_t)tcp_syn_xopts(f.m, ep.xopt,
								     TCP_XOPT_MAX, NULL);
				pr.held_syn = f.m;
				assert_non_null(tcp_connect(P, &ep, &pr.sv, now));
				continue;
			}
		}
		if (r != TCP_INPUT_CONSUMED) {
			tcp_reply_rst(f.dst == 0 ? C : f.dst == 2 ? S : P, f.m, now);
			rte_pktmbuf_free(f.m);
		}
	}
	qn = k;
}

static void
step(void)
{
	collect();
	deliver_due();
	tcp_timers_run(C, now);
	tcp_timers_run(P, now);
	tcp_timers_run(S, now);
	collect();
	now += US(500);
}

static struct tcp_engine *
engine(const char *name, struct app *a, tcp_event_cb cb)
{
	struct tcp_engine_params p;

	wire_params(&p, name, a);
	p.cb = cb;
	p.snd_buf = SNDBUF;
	return tcp_engine_create(&p);
}

static void teardown_three(void);

static void
setup_three(int server_listens)
{
	if (C != NULL)
		teardown_three(); /* a failed test skipped it */
	memset(&pr, 0, sizeof(pr));
	pr.cl.pair = pr.sv.pair = &pr;
	pr.sv.server = 1;
	memset(&app_c, 0, sizeof(app_c));
	memset(&app_s, 0, sizeof(app_s));
	app_c.rx_hash = app_s.rx_hash = FNV_INIT;
	app_c.auto_read = app_s.auto_read = 1;
	C = engine("c", &app_c, app_cb);
	P = engine("p", NULL, proxy_cb);
	S = engine("s", &app_s, app_cb);
	assert_non_null(C);
	assert_non_null(P);
	assert_non_null(S);
	if (server_listens)
		tcp_listen(S, 80, true);
	s_holds = 0;
	s_xopt_len = syn_at_s_len = synack_at_c_len = 0;
	now = MS(1000);
	qn = 0;
}

static void
teardown_three(void)
{
	for (uint32_t i = 0; i < qn; i++)
		rte_pktmbuf_free(q[i].m);
	qn = 0;
	rte_pktmbuf_free(pr.held_syn);
	pr.held_syn = NULL;
	tcp_engine_free(C);
	tcp_engine_free(P);
	tcp_engine_free(S);
	C = P = S = NULL;
}

static inline uint8_t
pattern(uint64_t i, int dir)
{
	return (uint8_t)(((i + (uint64_t)dir * 977) * 2654435761u) >> 13);
}

static void
push(struct tcp_conn *c, uint64_t total, uint64_t *off, uint64_t *h, int dir)
{
	uint8_t buf[4096];

	while (*off < total) {
		uint32_t n = (uint32_t)RTE_MIN((uint64_t)sizeof(buf), total - *off);
		int32_t got;

		for (uint32_t i = 0; i < n; i++)
			buf[i] = pattern(*off + i, dir);
		got = tcp_send(c, buf, n, now);
		if (got <= 0)
			return;
		*h = fnv1a(*h, buf, (size_t)got);
		*off += (uint64_t)got;
	}
}

static void
a_proxied_connection_relays_both_ways_and_closes_cleanly(void **state)
{
	struct tcp_endpoints ep;
	struct tcp_conn *cc;
	uint64_t offc = 0, offs = 0, hc = FNV_INIT, hs = FNV_INIT;
	const uint64_t total = 1000000;
	int shut_c = 0, shut_s = 0, checked = 0;

	(void)state;
	setup_three(1);
	wire_ep_v4(&ep);
	ep.mss = 1300;
	cc = tcp_connect(C, &ep, &app_c, now);
	app_c.conn = cc;
	while (now < MS(20000) && (app_c.n_closed == 0 || app_s.n_closed == 0 ||
				    !pr.cl.closed || !pr.sv.closed)) {
		if (app_c.conn && (app_c.events & TCP_EV_CONNECTED)) {
			push(app_c.conn, total, &offc, &hc, 0);
			if (offc == total && !shut_c) {
				tcp_shutdown(app_c.conn, now);
				shut_c = 1;
			}
		}
		if (app_s.conn && !checked) {
			const struct tcp_endpoints *es = tcp_conn_endpoints(app_s.conn);
			struct tcp_conn_info is;

			/* The server sees the client's own address and port,
			 * and the MSS the client announced (less 12 bytes for
			 * timestamps). */
			assert_memory_equal(es->raddr, ep.laddr, 4);
			assert_int_equal(es->rport, ep.lport);
			tcp_conn_get_info(app_s.conn, &is);
			assert_int_equal(is.mss, 1300 - 12);
			checked = 1;
		}
		if (app_s.conn) {
			push(app_s.conn, total, &offs, &hs, 1);
			if (offs == total && !shut_s && (app_s.events & TCP_EV_PEER_FIN)) {
				tcp_shutdown(app_s.conn, now);
				shut_s = 1;
			}
		}
		step();
	}
	assert_true(checked);
	assert_int_equal(app_s.rx_bytes, total);
	assert_int_equal(app_c.rx_bytes, total);
	assert_true(app_s.rx_hash == hc);
	assert_true(app_c.rx_hash == hs);
	assert_true(app_c.events & TCP_EV_PEER_FIN);
	assert_true(app_s.events & TCP_EV_PEER_FIN);
	assert_false((app_c.events | app_s.events) & (TCP_EV_RESET | TCP_EV_REFUSED));
	assert_true(pr.cl.closed && pr.sv.closed);
	print_message("proxied 2 x %llu bytes in %.2f virtual s\n",
		      (unsigned long long)total, (double)(now - MS(1000)) / 1e9);
	teardown_three();
}

static void
a_refused_server_connection_looks_refused_to_the_client(void **state)
{
	struct tcp_endpoints ep;

	(void)state;
	setup_three(0);
	wire_ep_v4(&ep);
	app_c.conn = tcp_connect(C, &ep, &app_c, now);
	for (int i = 0; i < 100; i++)
		step();
	assert_true(pr.refused);
	assert_true(app_c.events & TCP_EV_REFUSED);
	assert_int_equal(app_c.n_closed, 1);
	/* P never answered C with a SYN-ACK: no client leg was made. */
	assert_null(pr.cl.conn);
	assert_int_equal(tcp_engine_conn_count(P), 0);
	teardown_three();
}

static void
a_server_reset_reaches_the_client_as_a_reset(void **state)
{
	struct tcp_endpoints ep;

	(void)state;
	setup_three(1);
	wire_ep_v4(&ep);
	app_c.conn = tcp_connect(C, &ep, &app_c, now);
	for (int i = 0; i < 100; i++)
		step();
	assert_non_null(app_s.conn);
	assert_true(app_c.events & TCP_EV_CONNECTED);
	tcp_abort(app_s.conn, now);
	for (int i = 0; i < 100; i++)
		step();
	assert_true(app_c.events & TCP_EV_RESET);
	assert_true(pr.cl.closed && pr.sv.closed);
	teardown_three();
}

/* Offset of the first option of this kind in a TCP header, or -1. */
static int
find_opt(const uint8_t *th, uint32_t hlen, uint8_t kind)
{
	uint32_t i = 20;

	while (i < hlen && th[i] != 0) {
		if (th[i] == 1) {
			i++;
			continue;
		}
		if (th[i] == kind)
			return (int)i;
		i += th[i + 1];
	}
	return -1;
}

static void
tfo_and_unknown_options_cross_the_proxy_mptcp_does_not(void **state)
{
	/* C's SYN: TFO cookie request, unknown kind 99, an MPTCP option. */
	static const uint8_t c_x[] = { 34, 2, 99, 4, 0xab, 0xcd, 30, 4, 0x01, 0x81 };
	/* S's SYN-ACK: a TFO cookie and kind 253 with an ExID. */
	static const uint8_t s_x[] = { 34, 10, 1, 2, 3, 4, 5, 6, 7, 8, 253, 4, 0x12, 0x34 };
	struct tcp_endpoints ep;
	int o;

	(void)state;
	setup_three(0);
	s_holds = 1;
	memcpy(s_xopt, s_x, sizeof(s_x));
	s_xopt_len = sizeof(s_x);
	wire_ep_v4(&ep);
	memcpy(ep.xopt, c_x, sizeof(c_x));
	ep.xopt_len = sizeof(c_x);
	app_c.conn = tcp_connect(C, &ep, &app_c, now);
	assert_non_null(app_c.conn);
	for (int i = 0; i < 100; i++)
		step();
	assert_true(app_c.events & TCP_EV_CONNECTED);
	assert_non_null(app_s.conn);

	/* P's SYN to S: TFO request and kind 99 whole; no MPTCP. */
	assert_true(syn_at_s_len > 20 && syn_at_s_len <= 60);
	o = find_opt(syn_at_s, syn_at_s_len, 34);
	assert_true(o > 0);
	assert_int_equal(syn_at_s[o + 1], 2);
	o = find_opt(syn_at_s, syn_at_s_len, 99);
	assert_true(o > 0);
	assert_memory_equal(syn_at_s + o, c_x + 2, 4);
	assert_int_equal(find_opt(syn_at_s, syn_at_s_len, 30), -1);
	assert_true(find_opt(syn_at_s, syn_at_s_len, 2) > 0); /* P's own MSS */
	/* P's SYN-ACK to C: S's cookie and experiment, whole. */
	o = find_opt(synack_at_c, synack_at_c_len, 34);
	assert_true(o > 0);
	assert_memory_equal(synack_at_c + o, s_x, 10);
	o = find_opt(synack_at_c, synack_at_c_len, 253);
	assert_true(o > 0);
	assert_memory_equal(synack_at_c + o, s_x + 10, 4);
	teardown_three();
}

static void
the_client_is_offered_the_mss_the_server_announced(void **state)
{
	struct tcp_engine_params p;
	struct tcp_endpoints ep;
	int o;

	(void)state;
	setup_three(1);
	/* A server behind a smaller MTU (or a SYN-ACK a clamp lowered on
	 * its way in) announces 1200. */
	tcp_engine_free(S);
	wire_params(&p, "s1200", &app_s);
	p.cb = app_cb;
	p.snd_buf = SNDBUF;
	p.mss = 1200;
	S = tcp_engine_create(&p);
	assert_non_null(S);
	tcp_listen(S, 80, true);
	wire_ep_v4(&ep);
	app_c.conn = tcp_connect(C, &ep, &app_c, now);
	assert_non_null(app_c.conn);
	for (int i = 0; i < 100; i++)
		step();
	assert_true(app_c.events & TCP_EV_CONNECTED);
	/* P's SYN to S announced C's MSS; P's SYN-ACK to C announces S's,
	 * not the engine's 1460. */
	o = find_opt(syn_at_s, syn_at_s_len, 2);
	assert_true(o > 0);
	assert_int_equal(syn_at_s[o + 2] << 8 | syn_at_s[o + 3], 1460);
	o = find_opt(synack_at_c, synack_at_c_len, 2);
	assert_true(o > 0);
	assert_int_equal(synack_at_c[o + 2] << 8 | synack_at_c[o + 3], 1200);
	teardown_three();
}

static void
tcp_syn_xopts_keeps_whole_options_that_fit_and_counts_the_rest(void **state)
{
	/* A SYN with 40 option bytes: MSS, MD5 (18), TFO (10), kind 200 (8). */
	uint8_t opt[40] = { 2, 4, 0x05, 0xb4, 19, 18 };
	uint8_t buf[TCP_XOPT_MAX];
	uint32_t left, n;
	struct rte_mbuf *m;
	struct tcp_endpoints ep;
	struct tcp_seg_out so = { .seq = 1, .flags = TCP_FL_SYN, .wnd = 100 };

	(void)state;
	memcpy(opt + 22, (const uint8_t[]){ 34, 10, 9, 9, 9, 9, 9, 9, 9, 9 }, 10);
	memcpy(opt + 32, (const uint8_t[]){ 200, 8, 1, 1, 1, 1, 1, 1 }, 8);
	/* Build it as raw options: carried by xopt with nothing else. */
	so.xopt = opt;
	so.xopt_len = sizeof(opt);
	wire_ep_v4(&ep);
	m = tcp_seg_build(test_pool, &ep, &so, NULL, 0, 0);
	assert_non_null(m);
	pkt_parse(m, pkt_meta(m), 0);
	n = tcp_syn_xopts(m, buf, TCP_XOPT_MAX, &left);
	assert_int_equal(n, 18);              /* TFO and kind 200; no MSS, no MD5 */
	assert_memory_equal(buf, opt + 22, 18);
	assert_int_equal(left, 0);
	n = tcp_syn_xopts(m, buf, 12, &left);  /* room for the cookie only */
	assert_int_equal(n, 10);
	assert_int_equal(left, 1);
	rte_pktmbuf_free(m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_proxied_connection_relays_both_ways_and_closes_cleanly),
		cmocka_unit_test(a_refused_server_connection_looks_refused_to_the_client),
		cmocka_unit_test(a_server_reset_reaches_the_client_as_a_reset),
		cmocka_unit_test(tfo_and_unknown_options_cross_the_proxy_mptcp_does_not),
		cmocka_unit_test(the_client_is_offered_the_mss_the_server_announced),
		cmocka_unit_test(tcp_syn_xopts_keeps_whole_options_that_fit_and_counts_the_rest),
	};

	if (test_eal_init("relay") != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
