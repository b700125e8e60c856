/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/mptcp_proxy's own proxy, driven end to end with two lib/tcp engines
 * in memory: a client C and a server S, with the proxy P between them as
 * sluice's proxy stage runs it (mptcp_proxy_input_burst() for what
 * arrives, mptcp_proxy_poll() for what it sends). What P lets pass
 * crosses unchanged to the other side, as a bridge.
 *
 *   C --port 0-- P --port 1-- S
 *
 * 1. C's SYN to a prefix P intercepts is held; P opens the server leg
 *    from the client's own address and port, announcing the client's MSS.
 * 2. When S accepts, P answers the held SYN as S; if S refuses, P answers
 *    it with a RST, so C sees what it would see without P.
 * 3. Bytes cross through the relay, bounded by the other leg's send
 *    buffer; a FIN is passed on once its bytes are; a reset resets the
 *    other leg.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <rte_ip.h>

#include "tcp_test_util.h"
#include "mptcp_proxy.h"

#define SNDBUF (128 * 1024)

static struct tcp_engine *C, *S;
static struct mptcp_proxy *P;
/* Options S's SYN-ACK carries: set, S holds SYNs and accepts them itself
 * (as a proxy's client leg does) with these; the first SYN S and C see
 * are copied into syn_at_s and synack_at_c. */
static uint8_t s_xopt[TCP_XOPT_MAX];
static uint32_t s_xopt_len;
static int s_holds;
static uint8_t syn_at_s[128], synack_at_c[128];
static uint32_t syn_at_s_len, synack_at_c_len;
static struct app app_c, app_s;
static uint64_t now;
/* Frames P sends toward C's ports [hole_lo, hole_hi] vanish: spoofed
 * clients, which never answer the SYN-ACK. */
static uint16_t hole_lo, hole_hi;
/* mptcp_proxy_params.half_open_yield_ns of the next setup_proxy(). */
static uint64_t yield_ns;
/* mptcp_proxy_params.rto_min_ns of the next setup_proxy(). */
static uint64_t rto_min_ns;
/* mptcp_proxy_params.rcv_reclaim_idle_ns of the next setup_proxy(). */
static uint64_t reclaim_ns;
/* Set: frames on their way to S vanish; the times S would have got data
 * segments starting at the first one's sequence number are kept. */
static int s_silent;
static uint64_t s_first_at[4];
static uint32_t s_first_n, s_first_seq;
/* Set: the frames due at P on one port reach it in one call, as an rx
 * burst does; p_acks_to_c counts the pure ACKs P sends C meanwhile. */
static int p_burst;
static uint32_t p_acks_to_c;

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

/* What P sends leaves by m->port: port 0 faces C, port 1 S. */
static void
p_emit(void *arg, struct rte_mbuf **pk, uint16_t n)
{
	(void)arg;
	for (uint16_t i = 0; i < n; i++) {
		enqueue(pk[i], pk[i]->port == 0 ? 0 : 2);
		if (p_burst && pk[i]->port == 0) {
			struct tcp_seg_in s;

			assert_int_equal(tcp_seg_parse(pk[i], pkt_meta(pk[i]), &s, 1), 0);
			if (s.len == 0 && s.flags == TCP_FL_ACK)
				p_acks_to_c++;
		}
	}
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
}

static struct mptcp_proxy_stats
stats(void)
{
	struct mptcp_proxy_stats s;

	mptcp_proxy_stats_get(P, &s);
	return s;
}

#define CNT(name) (stats().cnt[MPTCP_PROXY_CNT_##name])

/* With p_burst: what is due at P, one call per port; what P lets pass
 * goes on to the other side at once. */
static void
deliver_burst_to_p(void)
{
	for (uint16_t port = 0; port < 2; port++) {
		struct rte_mbuf *b[64];
		uint16_t n = 0, keep;
		uint32_t k = 0;

		for (uint32_t i = 0; i < qn; i++) {
			if (q[i].due <= now && q[i].dst == 1 && q[i].m->port == port && n < 64)
				b[n++] = q[i].m;
			else
				q[k++] = q[i];
		}
		qn = k;
		if (n == 0)
			continue;
		keep = mptcp_proxy_input_burst(P, b, n, port == 0, (uint16_t)(port ^ 1), now);
		for (uint16_t i = 0; i < keep; i++) {
			pkt_parse(b[i], pkt_meta(b[i]), 0);
			q[qn].m = b[i];
			q[qn].due = now;
			q[qn].dst = port == 0 ? 2 : 0;
			qn++;
		}
	}
}

static void
deliver_due(void)
{
	uint32_t k = 0;

	if (p_burst)
		deliver_burst_to_p();
	for (uint32_t i = 0; i < qn; i++) {
		struct qframe f = q[i];
		enum tcp_input_result r;

		if (f.due > now) {
			q[k++] = f;
			continue;
		}
		if (f.dst == 1) {
			/* Through P; what it lets pass crosses unchanged. */
			uint16_t port = f.m->port;

			if (mptcp_proxy_input_burst(P, &f.m, 1, port == 0,
						    (uint16_t)(port ^ 1), now) == 0)
				continue;
			f.dst = port == 0 ? 2 : 0;
			pkt_parse(f.m, pkt_meta(f.m), 0);
		}
		{
			const struct pkt_meta *pm = pkt_meta(f.m);
			const uint8_t *th = rte_pktmbuf_mtod_offset(f.m, const uint8_t *, pm->l4_off);
			uint8_t *keep = f.dst == 0 ? synack_at_c : syn_at_s;
			uint32_t *keep_len = f.dst == 0 ? &synack_at_c_len : &syn_at_s_len;

			if ((th[13] & TCP_FL_SYN) && *keep_len == 0) {
				*keep_len = pm->l4_len;
				memcpy(keep, th, pm->l4_len);
			}
		}
		if (f.dst == 2 && s_silent) {
			struct tcp_seg_in sg;

			if (tcp_seg_parse(f.m, pkt_meta(f.m), &sg, 1) == 0 && sg.len > 0) {
				if (s_first_n == 0)
					s_first_seq = sg.seq;
				if (sg.seq == s_first_seq && s_first_n < RTE_DIM(s_first_at))
					s_first_at[s_first_n++] = now;
			}
			rte_pktmbuf_free(f.m);
			continue;
		}
		if (f.dst == 0) {
			const struct pkt_meta *pm = pkt_meta(f.m);
			const uint8_t *th = rte_pktmbuf_mtod_offset(f.m, const uint8_t *,
								    pm->l4_off);
			uint16_t dport = (uint16_t)(th[2] << 8 | th[3]);

			if (dport >= hole_lo && dport <= hole_hi && hole_hi != 0) {
				rte_pktmbuf_free(f.m);
				continue;
			}
			r = tcp_input(C, f.m, now);
		} else {
			r = tcp_input(S, f.m, now);
			if (r == TCP_INPUT_NO_CONN && s_holds) {
				assert_non_null(tcp_accept_xopts(S, f.m, s_xopt, s_xopt_len,
								 &app_s, now));
				continue;
			}
		}
		if (r != TCP_INPUT_CONSUMED) {
			tcp_reply_rst(f.dst == 0 ? C : S, f.m, now);
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
	tcp_timers_run(S, now);
	mptcp_proxy_poll(P, now, p_emit, NULL);
	collect();
	now += US(500);
}

static struct tcp_engine *
engine(const char *name, struct app *a)
{
	struct tcp_engine_params p;

	wire_params(&p, name, a);
	p.snd_buf = SNDBUF;
	return tcp_engine_create(&p);
}

static void teardown_three(void);

static uint32_t budget; /* setup_proxy()'s mbuf_budget once; 0: 8000 */
/* setup_proxy()'s rules once, in place of its one rule. */
static const struct mptcp_proxy_rule *rules_once;
static uint32_t nrules_once;

/* P intercepts 198.18.1.0/24 (S is 198.18.1.2), every port unless
 * port is set; it holds at most max_conns connections. */
static void
setup_proxy(int server_listens, uint16_t port, uint32_t max_conns)
{
	struct mptcp_proxy_rule rule = { .family = 4, .plen = 24, .port = port,
					 .addr = { 198, 18, 1, 77 } }; /* host bits: ignored */
	struct mptcp_proxy_params pp;

	if (C != NULL)
		teardown_three(); /* a failed test skipped it */
	memset(&app_c, 0, sizeof(app_c));
	memset(&app_s, 0, sizeof(app_s));
	app_c.rx_hash = app_s.rx_hash = FNV_INIT;
	app_c.auto_read = app_s.auto_read = 1;
	C = engine("c", &app_c);
	S = engine("s", &app_s);
	memset(&pp, 0, sizeof(pp));
	pp.name = "p";
	pp.socket_id = SOCKET_ID_ANY;
	pp.pool = test_pool;
	pp.max_conns = max_conns;
	pp.snd_buf = SNDBUF;
	pp.rcv_buf = 256 * 1024;
	pp.cc = TCP_CC_CUBIC;
	pp.syn_retries = 6;
	pp.mbuf_budget = budget != 0 ? budget : 8000;
	budget = 0;
	for (int i = 0; i < 16; i++)
		pp.isn_key[i] = (uint8_t)('p' + i);
	pp.nrules = rules_once != NULL ? nrules_once : 1;
	pp.rules = rules_once != NULL ? rules_once : &rule;
	rules_once = NULL;
	pp.half_open_yield_ns = yield_ns;
	yield_ns = 0;
	pp.rto_min_ns = rto_min_ns;
	rto_min_ns = 0;
	pp.rcv_reclaim_idle_ns = reclaim_ns;
	reclaim_ns = 0;
	s_silent = 0;
	s_first_n = 0;
	hole_lo = hole_hi = 0;
	P = mptcp_proxy_create(&pp);
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
setup_three(int server_listens)
{
	setup_proxy(server_listens, 0, 16);
}

static void
teardown_three(void)
{
	for (uint32_t i = 0; i < qn; i++)
		rte_pktmbuf_free(q[i].m);
	qn = 0;
	tcp_engine_free(C);
	mptcp_proxy_free(P);
	tcp_engine_free(S);
	C = S = NULL;
	P = NULL;
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

/* C connects to S through P; C's connection, once S has accepted it and
 * 100 ms more have let everything settle. */
static struct tcp_conn *
connect_through_p(void)
{
	struct tcp_endpoints ep;
	struct tcp_conn *cc;

	wire_ep_v4(&ep);
	cc = tcp_connect(C, &ep, &app_c, now);
	app_c.conn = cc;
	while (now < MS(1200) && app_s.conn == NULL)
		step();
	assert_non_null(app_s.conn);
	for (int i = 0; i < 200; i++)
		step();
	return cc;
}

/* The client sends up bytes and closes its side; the server sends down
 * bytes, and closes once the client's FIN came (server_first: once its
 * bytes are out). With pause_at, the client (server_first: the server)
 * stops reading for a second once it has that many bytes. */
static void
relay_and_close(uint64_t up, uint64_t down, uint64_t pause_at, int server_first)
{
	struct tcp_endpoints ep;
	struct tcp_conn *cc;
	uint64_t offc = 0, offs = 0, hc = FNV_INIT, hs = FNV_INIT, paused_at = 0;
	int shut_c = 0, shut_s = 0, checked = 0;
	struct app *r = server_first ? &app_s : &app_c;

	setup_three(1);
	wire_ep_v4(&ep);
	ep.mss = 1300;
	cc = tcp_connect(C, &ep, &app_c, now);
	app_c.conn = cc;
	while (now < MS(20000) && (app_c.n_closed == 0 || app_s.n_closed == 0 ||
				    CNT(CLOSED) == 0)) {
		if (pause_at != 0 && paused_at == 0 && r->rx_bytes >= pause_at) {
			r->auto_read = 0;
			paused_at = now;
		}
		if (paused_at != 0 && !r->auto_read && now - paused_at >= MS(1000)) {
			uint8_t buf[4096];
			uint32_t n;

			r->auto_read = 1;
			while (r->conn != NULL &&
			       (n = tcp_recv(r->conn, buf, sizeof(buf), now)) > 0) {
				r->rx_hash = fnv1a(r->rx_hash, buf, n);
				r->rx_bytes += n;
			}
		}
		if (app_c.conn && (app_c.events & TCP_EV_CONNECTED)) {
			push(app_c.conn, up, &offc, &hc, 0);
			if (offc == up && !shut_c) {
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
			push(app_s.conn, down, &offs, &hs, 1);
			if (offs == down && !shut_s &&
			    (server_first || (app_s.events & TCP_EV_PEER_FIN))) {
				tcp_shutdown(app_s.conn, now);
				shut_s = 1;
			}
		}
		step();
	}
	assert_true(checked);
	assert_int_equal(app_s.rx_bytes, up);
	assert_int_equal(app_c.rx_bytes, down);
	assert_true(app_s.rx_hash == hc);
	assert_true(app_c.rx_hash == hs);
	assert_true(app_c.events & TCP_EV_PEER_FIN);
	assert_true(app_s.events & TCP_EV_PEER_FIN);
	assert_false((app_c.events | app_s.events) & (TCP_EV_RESET | TCP_EV_REFUSED));
	assert_int_equal(CNT(CLOSED), 1);
	assert_int_equal(stats().active, 0);
	assert_int_equal(CNT(BYTES_UP), up);
	assert_int_equal(CNT(BYTES_DOWN), down);
	print_message("proxied %llu bytes up, %llu down in %.2f virtual s\n",
		      (unsigned long long)up, (unsigned long long)down,
		      (double)(now - MS(1000)) / 1e9);
	teardown_three();
}

static void
a_proxied_connection_relays_both_ways_and_closes_cleanly(void **state)
{
	(void)state;
	relay_and_close(1000000, 1000000, 0, 0);
}

/* A request, the client's FIN at once (HTTP/1.0 with a half-close, a
 * netcat that shuts down its side), and a reply the client stops reading
 * for a second near its end. The server leg ends in order (both FINs)
 * while the reply's tail still waits in it for room on the client leg:
 * those bytes are read before the leg is told CLOSED, and its FIN
 * follows them. It was released with them, and the download stood
 * still, short of its tail, for good. */
static void
a_reply_after_the_clients_fin_arrives_whole_when_the_server_leg_closes_first(void **state)
{
	(void)state;
	relay_and_close(1000, 4000000, 3500000, 0);
}

/* The same the other way: the server answers and closes at once, and
 * stops reading the upload for a second near its end; the client leg
 * ends in order while the upload's tail waits in it. */
static void
an_upload_after_the_servers_fin_arrives_whole_when_the_client_leg_closes_first(void **state)
{
	(void)state;
	relay_and_close(4000000, 1000, 3400000, 1);
}

/* The rules are read for a frame of no connection P holds. A held
 * connection's frames skip them (it was taken by the same rules), so
 * its relay costs the same however many prefixes are intercepted; a
 * fragment on its 4-tuple is still not the engine's, and passes. Here
 * the rule that takes S's address is the last of 64, after 62 other
 * prefixes and one of S's own /24 limited to another port. */
static void
a_held_connection_s_frames_skip_the_rules_but_its_fragments_pass(void **state)
{
	static struct mptcp_proxy_rule r[MPTCP_PROXY_MAX_RULES];
	static uint8_t buf[64 * 1024];
	struct rte_mbuf *pk[64], *frag = NULL;
	struct tcp_conn *cc;
	uint64_t sent = 0, hash = FNV_INIT;
	uint16_t n;

	(void)state;
	for (uint32_t i = 0; i < RTE_DIM(r) - 2; i++)
		r[i] = (struct mptcp_proxy_rule){ .family = 4, .plen = 16,
						  .addr = { 10, (uint8_t)i, 0, 0 } };
	r[RTE_DIM(r) - 2] = (struct mptcp_proxy_rule){ .family = 4, .plen = 24, .port = 443,
							.addr = { 198, 18, 1, 0 } };
	r[RTE_DIM(r) - 1] = (struct mptcp_proxy_rule){ .family = 4, .plen = 24,
							.addr = { 198, 18, 1, 0 } };
	rules_once = r;
	nrules_once = RTE_DIM(r);
	setup_three(1);
	cc = connect_through_p();
	assert_int_equal(stats().active, 1);
	for (uint32_t i = 0; i < sizeof(buf); i++)
		buf[i] = pattern(i, 0);
	for (int i = 0; i < 4000 && app_s.rx_bytes < 4 * sizeof(buf); i++) {
		if (sent < 4 * sizeof(buf)) {
			int32_t got = tcp_send(cc, buf + sent % sizeof(buf),
					       (uint32_t)RTE_MIN(sizeof(buf) - sent % sizeof(buf),
								 4 * sizeof(buf) - sent), now);

			if (got > 0) {
				hash = fnv1a(hash, buf + sent % sizeof(buf), (size_t)got);
				sent += (uint64_t)got;
			}
		}
		/* The first data frame C sends: a copy of it, its IPv4
		 * header marked as a first fragment, goes to P alone. */
		if (frag == NULL && (n = tcp_tx_burst(C, pk, 64)) > 0) {
			for (uint16_t j = 0; j < n; j++) {
				if (frag == NULL && pk[j]->pkt_len > 54 + 12) {
					frag = rte_pktmbuf_copy(pk[j], pk[j]->pool, 0, UINT32_MAX);
					assert_non_null(frag);
				}
				pk[j]->port = 0;
				enqueue(pk[j], 1);
			}
		}
		step();
	}
	assert_int_equal(app_s.rx_bytes, 4 * sizeof(buf));
	assert_true(app_s.rx_hash == hash);
	assert_non_null(frag);
	{
		struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(frag, struct rte_ipv4_hdr *,
								 RTE_ETHER_HDR_LEN);
		uint8_t before[2048];
		uint32_t len = frag->pkt_len;

		ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG);
		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		frag->port = 0;
		pkt_parse(frag, pkt_meta(frag), 0);
		assert_true(pkt_meta(frag)->flags & PKT_F_FRAGMENT);
		assert_true(len <= sizeof(before));
		memcpy(before, rte_pktmbuf_mtod(frag, const uint8_t *), len);
		assert_int_equal(CNT(FRAG_PASSED), 0);
		assert_int_equal(mptcp_proxy_input_burst(P, &frag, 1, true, 1, now), 1);
		assert_int_equal(CNT(FRAG_PASSED), 1);
		assert_int_equal(frag->pkt_len, len);
		assert_memory_equal(rte_pktmbuf_mtod(frag, const uint8_t *), before, len);
		rte_pktmbuf_free(frag);
	}
	assert_int_equal(stats().active, 1);
	teardown_three();
}

/* Eight of the client's full segments reach P in one rx burst: P's
 * client leg ACKs them once, at the end of the burst, for all eight
 * (lib/tcp/README.md, "ACKs per burst"), where it ACKed every second
 * one; the bytes go on to the server as before. */
static void
the_client_leg_acks_a_burst_of_segments_once(void **state)
{
	static uint8_t buf[8 * 1448];
	struct tcp_conn *cc;
	struct tcp_conn_info ic;
	const uint64_t *pc;

	(void)state;
	setup_three(1);
	cc = connect_through_p();
	p_burst = 1;
	p_acks_to_c = 0;
	assert_int_equal(tcp_send(cc, buf, sizeof(buf), now), sizeof(buf));
	collect();
	now += MS(2); /* the eight segments are due at P together */
	deliver_due();
	mptcp_proxy_poll(P, now, p_emit, NULL);
	assert_int_equal(p_acks_to_c, 1);
	pc = mptcp_proxy_tcp_counters(P);
	assert_int_equal(pc[TCP_CNT_ACK_COALESCED], 3);
	/* The client leg's output, timers and events waited for the end of
	 * the burst (8), and the relay then moved all eight in one send,
	 * whose output waited as well (1). */
	assert_int_equal(pc[TCP_CNT_BURST_DEFERRED], 9);
	for (int i = 0; i < 200; i++)
		step();
	p_burst = 0;
	assert_int_equal(app_s.rx_bytes, sizeof(buf));
	tcp_conn_get_info(cc, &ic);
	assert_int_equal(ic.snd_una, ic.snd_nxt);
	assert_int_equal(pc[TCP_CNT_DELACK], 0);
	teardown_three();
}

/*
 * The server goes silent after the handshake and the client sends 1000
 * bytes: P's server leg sends them, then resends them at each RTO,
 * backing off. The RTT is 4 ms, so the first RTO is the floor: 200 ms
 * by default, 1 s with rto_min_ns at 1 s.
 */
static void
rto_min_is_the_least_retransmission_timeout_of_a_leg(void **state)
{
	static const uint8_t buf[1000];

	(void)state;
	for (int k = 0; k < 2; k++) {
		struct tcp_conn *cc;
		uint64_t gap[3];

		rto_min_ns = k == 0 ? 0 : MS(1000);
		setup_three(1);
		cc = connect_through_p();
		s_silent = 1;
		assert_int_equal(tcp_send(cc, buf, sizeof(buf), now), sizeof(buf));
		while (s_first_n < 4 && now < MS(9000))
			step();
		assert_int_equal(s_first_n, 4);
		for (uint32_t n = 1; n < 4; n++)
			gap[n - 1] = s_first_at[n] - s_first_at[n - 1];
		if (k == 0) {
			/* RTOs: 200 ms, backing off (the probe would be later). */
			assert_int_equal(gap[0], MS(200));
			assert_int_equal(gap[1], MS(400));
			assert_int_equal(gap[2], MS(800));
		} else {
			/* The tail loss probe (2 SRTT + 200 ms, RFC 8985 7.2)
			 * is not an RTO; the RTOs after it are 1 s, 2 s. */
			assert_true(gap[0] < MS(250));
			assert_int_equal(gap[1], MS(1000));
			assert_int_equal(gap[2], MS(2000));
		}
		teardown_three();
	}
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
	assert_int_equal(CNT(REFUSED), 1);
	assert_true(app_c.events & TCP_EV_REFUSED);
	assert_int_equal(app_c.n_closed, 1);
	/* P never answered C with a SYN-ACK: no client leg was made. */
	assert_int_equal(CNT(OPENED), 0);
	assert_int_equal(stats().engine_conns, 0);
	assert_int_equal(CNT(CLOSED), 1);
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
	assert_int_equal(CNT(RESET), 1);
	assert_int_equal(CNT(CLOSED), 1);
	assert_int_equal(stats().active, 0);
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

/* A carry policy that leaves out signatures, as the proxy's does. */
static bool
no_signatures(uint8_t kind)
{
	return kind != 19 && kind != 29; /* TCP-MD5, TCP-AO */
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
	n = tcp_syn_xopts(m, buf, TCP_XOPT_MAX, &left, no_signatures);
	assert_int_equal(n, 18);              /* TFO and kind 200; no MSS, no MD5 */
	assert_memory_equal(buf, opt + 22, 18);
	assert_int_equal(left, 0);
	n = tcp_syn_xopts(m, buf, 12, &left, no_signatures);  /* room for the cookie only */
	assert_int_equal(n, 10);
	assert_int_equal(left, 1);
	/* Without a policy every kind the engine does not negotiate itself
	 * is carried: MD5 (18) fills the room, TFO and kind 200 are left. */
	n = tcp_syn_xopts(m, buf, TCP_XOPT_MAX, &left, NULL);
	assert_int_equal(n, 18);
	assert_int_equal(buf[0], 19);
	assert_int_equal(left, 2);
	rte_pktmbuf_free(m);
}

static void
a_syn_to_a_port_the_rules_do_not_name_is_bridged_untouched(void **state)
{
	struct tcp_endpoints ep;

	(void)state;
	setup_proxy(1, 443, 16); /* only port 443 is intercepted; S is on 80 */
	wire_ep_v4(&ep);
	app_c.conn = tcp_connect(C, &ep, &app_c, now);
	for (int i = 0; i < 100; i++)
		step();
	/* C and S speak to each other directly: P holds nothing. */
	assert_true(app_c.events & TCP_EV_CONNECTED);
	assert_non_null(app_s.conn);
	assert_int_equal(CNT(SYN_INTERCEPTED), 0);
	assert_int_equal(CNT(NOT_OWNED), 0);
	assert_int_equal(stats().engine_conns, 0);
	teardown_three();
}

static void
a_syn_that_finds_the_table_full_is_bridged_and_counted(void **state)
{
	struct tcp_endpoints ep;
	struct app app_c2;
	struct tcp_conn *c2;

	(void)state;
	setup_proxy(1, 0, 1);
	wire_ep_v4(&ep);
	app_c.conn = tcp_connect(C, &ep, &app_c, now);
	for (int i = 0; i < 100; i++)
		step();
	assert_int_equal(CNT(OPENED), 1);
	/* A second connection from another port: no pair left for it. */
	memset(&app_c2, 0, sizeof(app_c2));
	app_c2.rx_hash = FNV_INIT;
	ep.lport = 40001;
	c2 = tcp_connect(C, &ep, &app_c2, now);
	assert_non_null(c2);
	for (int i = 0; i < 100; i++)
		step();
	assert_int_equal(CNT(BRIDGED_FULL), 1);
	assert_int_equal(CNT(SYN_INTERCEPTED), 1);
	/* The bridged one reached S itself (S answers to app_s). */
	assert_true(app_c2.events & TCP_EV_CONNECTED);
	teardown_three();
}

/* Spoofed SYNs toward a server that answers leave client legs in
 * SYN-RECEIVED for the SYN retries' minutes. With half_open_yield_ns,
 * a new SYN takes the place of the oldest one past that age; a
 * connection that completed its handshake never gives way. */
static void
a_full_table_of_half_open_connections_gives_way_to_new_syns_after_a_second(void **state)
{
	struct tcp_endpoints ep;
	struct app a[4];

	(void)state;
	yield_ns = MS(1000);
	setup_proxy(1, 0, 3);
	hole_lo = 41000;
	hole_hi = 41999;
	wire_ep_v4(&ep);
	/* One real client, then two spoofed: the table is full. */
	app_c.conn = tcp_connect(C, &ep, &app_c, now);
	for (int i = 0; i < 100; i++)
		step();
	assert_true(app_c.events & TCP_EV_CONNECTED);
	for (int k = 0; k < 2; k++) {
		memset(&a[k], 0, sizeof(a[k]));
		ep.lport = (uint16_t)(41000 + k);
		assert_non_null(tcp_connect(C, &ep, &a[k], now));
		for (int i = 0; i < 20; i++)
			step();
	}
	assert_int_equal(CNT(SYN_INTERCEPTED), 3);
	assert_int_equal(CNT(OPENED), 3);
	/* Young half-open ones hold their place: this SYN is bridged. */
	memset(&a[2], 0, sizeof(a[2]));
	a[2].rx_hash = FNV_INIT;
	ep.lport = 40001;
	assert_non_null(tcp_connect(C, &ep, &a[2], now));
	for (int i = 0; i < 100; i++)
		step();
	assert_true(a[2].events & TCP_EV_CONNECTED);
	assert_int_equal(CNT(BRIDGED_FULL), 1);
	assert_int_equal(CNT(HALF_OPEN_EVICTED), 0);
	/* Past a second the oldest spoofed one gives way, then the other. */
	for (int i = 0; i < 2000; i++)
		step();
	for (int k = 0; k < 2; k++) {
		struct app *n = k == 0 ? &a[3] : &a[2];

		memset(n, 0, sizeof(*n));
		n->rx_hash = FNV_INIT;
		ep.lport = (uint16_t)(40002 + k);
		assert_non_null(tcp_connect(C, &ep, n, now));
		for (int i = 0; i < 100; i++)
			step();
		assert_true(n->events & TCP_EV_CONNECTED);
		assert_int_equal(CNT(HALF_OPEN_EVICTED), (uint64_t)k + 1);
		assert_int_equal(CNT(SYN_INTERCEPTED), (uint64_t)k + 4);
	}
	/* Now every connection in the table is established: the next SYN
	 * is bridged, and the real client's first connection still works. */
	for (int i = 0; i < 2000; i++)
		step();
	memset(&a[0], 0, sizeof(a[0]));
	a[0].rx_hash = FNV_INIT;
	ep.lport = 40010;
	assert_non_null(tcp_connect(C, &ep, &a[0], now));
	for (int i = 0; i < 100; i++)
		step();
	assert_true(a[0].events & TCP_EV_CONNECTED);
	assert_int_equal(CNT(HALF_OPEN_EVICTED), 2);
	assert_int_equal(CNT(BRIDGED_FULL), 2);
	assert_int_equal(tcp_conn_state(app_c.conn), TCP_ESTABLISHED);
	teardown_three();
}

static void
shutdown_resets_both_ends_of_every_proxied_connection(void **state)
{
	struct tcp_endpoints ep;

	(void)state;
	setup_three(1);
	wire_ep_v4(&ep);
	app_c.conn = tcp_connect(C, &ep, &app_c, now);
	for (int i = 0; i < 100; i++)
		step();
	assert_true(app_c.events & TCP_EV_CONNECTED);
	assert_non_null(app_s.conn);
	mptcp_proxy_shutdown(P, now, p_emit, NULL);
	assert_int_equal(CNT(ABORTED_AT_EXIT), 1);
	assert_int_equal(stats().active, 0);
	/* After shutdown P passes everything and keeps its counters. */
	assert_true(mptcp_proxy_tcp_counters(P) != NULL);
	for (int i = 0; i < 20; i++)
		step();
	assert_true(app_c.events & TCP_EV_RESET);
	assert_true(app_s.events & TCP_EV_RESET);
	teardown_three();
}

/* Memory pressure. The linear rule: from a quarter of the budget every
 * window shrinks, to nothing at the budget. The pool: what every leg's
 * announced window still lets in is counted, and stays within what is
 * left of the budget (in 1448-byte segments), the idle legs giving back
 * what they were offered when more than half of it is taken. */
static void
after_poll(struct mptcp_proxy_stats *st)
{
	now += MS(2); /* past the 1 ms sampling period */
	mptcp_proxy_poll(P, now, p_emit, NULL);
	collect();
	mptcp_proxy_stats_get(P, st);
}

static uint32_t
linear_limit(const struct mptcp_proxy_stats *st, uint32_t b, uint32_t rcv_buf)
{
	uint64_t left = b - st->mbufs_held;

	if (st->mbufs_held <= b / 4)
		return rcv_buf;
	return (uint32_t)((uint64_t)rcv_buf * left / (b - b / 4));
}

static uint64_t
reclaimed(void)
{
	return mptcp_proxy_tcp_counters(P)[TCP_CNT_RCV_RECLAIMED];
}

/* Idle for longer than the proxy waits before it takes a window back
 * (200 ms), stepping. */
static void
idle(uint64_t ns)
{
	for (uint64_t t = 0; t < ns; t += US(500))
		step();
}

/* Another user of the pool takes n more of its mbufs, kept in hold[]
 * after the *nhold there already. */
static void
hold_mbufs(struct rte_mbuf **hold, uint32_t *nhold, uint32_t n)
{
	for (; n > 0; n--) {
		hold[*nhold] = rte_pktmbuf_alloc(test_pool);
		assert_non_null(hold[*nhold]);
		(*nhold)++;
	}
}

/* n connections of C through P, from ports port0 on, each with its own
 * app a[i]; all proxied once this returns. */
static void
open_clients(struct app *a, int n, uint16_t port0)
{
	struct tcp_endpoints ep;

	wire_ep_v4(&ep);
	for (int i = 0; i < n; i++) {
		memset(&a[i], 0, sizeof(a[i]));
		a[i].rx_hash = FNV_INIT;
		a[i].auto_read = 1;
		ep.lport = (uint16_t)(port0 + i);
		a[i].conn = tcp_connect(C, &ep, &a[i], now);
		assert_non_null(a[i].conn);
		step();
	}
	for (int i = 0; i < 100; i++)
		step();
	assert_int_equal(CNT(OPENED), (uint64_t)n);
}

static void
what_all_windows_let_in_stays_within_what_is_left_of_the_budget(void **state)
{
	enum { NC = 8, B = 1000 };
	struct app a[NC];
	struct mptcp_proxy_stats st;
	struct rte_mbuf *hold[B];
	uint64_t off = 0, h = FNV_INIT;
	uint32_t nhold = 0;

	(void)state;
	budget = B;
	setup_proxy(1, 0, 16);
	open_clients(a, NC, 40000);
	/* Little held: whole windows, and a pool of what is left. */
	after_poll(&st);
	assert_int_equal(st.active, NC);
	assert_true(st.mbufs_held < B / 8);
	assert_int_equal(st.rcv_limit, 256 * 1024);
	assert_true(st.rcv_pool == (uint64_t)(B - st.mbufs_held) * 1448);
	assert_true(st.rcv_offered > 0 && st.rcv_offered <= st.rcv_pool);
	assert_int_equal(reclaimed(), 0);
	/* Other users take half the budget: the pool halves, below what
	 * the 16 legs were offered (each up to its handshake's 64 KiB), and
	 * idle legs give theirs back, down to two segments each, until at
	 * most half of the pool is offered. */
	hold_mbufs(hold, &nhold, B / 2);
	after_poll(&st);
	assert_int_equal(st.rcv_limit, linear_limit(&st, B, 256 * 1024));
	assert_true(st.rcv_offered > st.rcv_pool / 2);
	idle(MS(300));
	after_poll(&st);
	/* Until no more than half of the pool is offered (beyond the two
	 * segments of every leg, which are outside it). */
	assert_true(reclaimed() > 0 && reclaimed() <= 2 * NC);
	assert_true(st.rcv_offered <= st.rcv_pool / 2);
	/* Nearly all of it: the linear rule's limit is under two segments. */
	hold_mbufs(hold, &nhold, B - 5 - st.mbufs_held);
	after_poll(&st);
	assert_int_equal(st.rcv_limit, linear_limit(&st, B, 256 * 1024));
	assert_true(st.rcv_limit < 2 * 1448);
	/* Released: a transfer still moves, with every byte intact. */
	while (nhold > 0)
		rte_pktmbuf_free(hold[--nhold]);
	after_poll(&st);
	assert_int_equal(st.rcv_limit, 256 * 1024);
	push(a[0].conn, 300000, &off, &h, 0);
	for (int i = 0; i < 4000 && (app_s.rx_bytes < 300000 || off < 300000); i++) {
		push(a[0].conn, 300000, &off, &h, 0);
		step();
	}
	assert_int_equal(app_s.rx_bytes, 300000);
	assert_int_equal(app_s.rx_hash, h);
	teardown_three();
}

/* NC idle connections (NC <= 64) through a proxy of budget b, then a
 * 300,000-byte upload on the first: it arrives whole. Returns the
 * largest window the client saw. */
static uint32_t
upload_beside_idle_connections(uint32_t b, uint16_t port0)
{
	enum { NC = 64 };
	static struct app a[NC];
	struct mptcp_proxy_stats st;
	struct tcp_conn_info ci;
	uint64_t off = 0, h = FNV_INIT;
	uint32_t max_wnd = 0;

	budget = b;
	setup_proxy(1, 0, 2 * NC);
	open_clients(a, NC, port0);
	idle(MS(300));
	after_poll(&st);
	assert_int_equal(st.active, NC);
	assert_true(st.rcv_offered <= st.rcv_pool);
	push(a[0].conn, 300000, &off, &h, 0);
	for (int i = 0; i < 8000 && (app_s.rx_bytes < 300000 || off < 300000); i++) {
		push(a[0].conn, 300000, &off, &h, 0);
		step();
		tcp_conn_get_info(a[0].conn, &ci);
		if (ci.snd_wnd > max_wnd)
			max_wnd = ci.snd_wnd;
		mptcp_proxy_stats_get(P, &st);
		/* Beyond two segments a leg, within the pool, give or take
		 * what the pool shrank by since the windows were announced:
		 * the transfer's own mbufs, held as they arrive (up to 49,022
		 * bytes over it with a budget of 1,000). When the easing of
		 * the linear rule announced idle legs' windows again too, it
		 * was 205,000. */
		assert_true(st.rcv_offered <= st.rcv_pool + 64 * 1448);
	}
	assert_int_equal(app_s.rx_bytes, 300000);
	assert_int_equal(app_s.rx_hash, h);
	assert_true(reclaimed() > 0);
	teardown_three();
	return max_wnd;
}

/* Many idle connections and one that moves data: the moving one's window
 * grows into what the idle ones gave back. A share of the pool for every
 * leg alike would be 1000 x 1448 / 128 = 11,312 bytes; the two segments
 * of each of the other 127 legs are outside the pool. */
static void
a_moving_leg_gets_the_window_idle_legs_gave_back(void **state)
{
	(void)state;
	assert_true(upload_beside_idle_connections(1000, 41000) > 8 * 11312);
}

/* More idle legs than the pool has floors for: 128 legs of two segments
 * (2,920 bytes) each are 373,760 bytes, and a budget of 200 mbufs is a
 * pool of 289,600. Counted in the pool, the floors held every window to
 * its floor, the moving one's too; outside it, the moving leg grows
 * beyond its two segments into the pool. */
static void
a_moving_leg_grows_beside_more_idle_floors_than_the_pool_holds(void **state)
{
	(void)state;
	assert_true((uint64_t)2 * 64 * 2 * 1460 > (uint64_t)200 * 1448);
	assert_true(upload_beside_idle_connections(200, 42000) > 16 * 1460);
}

/* rcv_reclaim_idle_ns: with more than half of the pool offered, legs
 * silent for less than it keep their windows; past it they give them
 * back, as they do past the default 200 ms (the first test above). */
static void
idle_legs_keep_their_windows_for_rcv_reclaim_idle(void **state)
{
	enum { NC = 8, B = 1000 };
	struct app a[NC];
	struct mptcp_proxy_stats st;
	struct rte_mbuf *hold[B / 2];
	uint32_t nhold = 0;

	(void)state;
	budget = B;
	reclaim_ns = MS(1000);
	setup_proxy(1, 0, 16);
	open_clients(a, NC, 43000); /* the last data: about 55 ms ago */
	hold_mbufs(hold, &nhold, B / 2);
	after_poll(&st);
	assert_true(st.rcv_offered > st.rcv_pool / 2);
	idle(MS(700));
	after_poll(&st);
	assert_int_equal(reclaimed(), 0);
	assert_true(st.rcv_offered > st.rcv_pool / 2);
	idle(MS(400));
	after_poll(&st);
	assert_true(reclaimed() > 0 && reclaimed() <= 2 * NC);
	assert_true(st.rcv_offered <= st.rcv_pool / 2);
	while (nhold > 0)
		rte_pktmbuf_free(hold[--nhold]);
	teardown_three();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_proxied_connection_relays_both_ways_and_closes_cleanly),
		cmocka_unit_test(a_reply_after_the_clients_fin_arrives_whole_when_the_server_leg_closes_first),
		cmocka_unit_test(an_upload_after_the_servers_fin_arrives_whole_when_the_client_leg_closes_first),
		cmocka_unit_test(rto_min_is_the_least_retransmission_timeout_of_a_leg),
		cmocka_unit_test(a_refused_server_connection_looks_refused_to_the_client),
		cmocka_unit_test(a_server_reset_reaches_the_client_as_a_reset),
		cmocka_unit_test(tfo_and_unknown_options_cross_the_proxy_mptcp_does_not),
		cmocka_unit_test(the_client_is_offered_the_mss_the_server_announced),
		cmocka_unit_test(tcp_syn_xopts_keeps_whole_options_that_fit_and_counts_the_rest),
		cmocka_unit_test(a_syn_to_a_port_the_rules_do_not_name_is_bridged_untouched),
		cmocka_unit_test(a_syn_that_finds_the_table_full_is_bridged_and_counted),
		cmocka_unit_test(a_full_table_of_half_open_connections_gives_way_to_new_syns_after_a_second),
		cmocka_unit_test(shutdown_resets_both_ends_of_every_proxied_connection),
		cmocka_unit_test(the_client_leg_acks_a_burst_of_segments_once),
		cmocka_unit_test(a_held_connection_s_frames_skip_the_rules_but_its_fragments_pass),
		cmocka_unit_test(what_all_windows_let_in_stays_within_what_is_left_of_the_budget),
		cmocka_unit_test(a_moving_leg_gets_the_window_idle_legs_gave_back),
		cmocka_unit_test(a_moving_leg_grows_beside_more_idle_floors_than_the_pool_holds),
		cmocka_unit_test(idle_legs_keep_their_windows_for_rcv_reclaim_idle),
	};

	if (test_eal_init("proxy_relay") != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
