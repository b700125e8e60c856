/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * relaybench: one bulk transfer through sluice's proxy, in memory, on a
 * virtual clock, so that callgrind counts the same instructions on every
 * run (perf/relay_instr.sh; perf/README.md, "The relay in memory").
 *
 *   C --port 0-- P --port 1-- S
 *
 * C and S are two lib/tcp engines standing for the Linux peers (MSS 1460,
 * timestamps, SACK, window scaling: 1448 bytes a full segment). P is
 * lib/mptcp_proxy with the [proxy] defaults sluice's proxy stage gives it
 * (app/stage_proxy.c), intercepting 198.18.0.0/15: it terminates C's
 * connection to S and opens its own to S, two legs. Each hop (C to P,
 * P to S) delays frames by DELAY_NS one way. What an engine sends in one
 * pass reaches P together; P takes what is due on each port as rx bursts
 * of at most BURST frames, then polls, as sluice's worker runs the stage
 * (mptcp_proxy_input_burst(), mptcp_proxy_poll()). Frames cross between
 * P's pool and the peers' pool by a copy, as a port's rx and tx would.
 *
 * C connects, then the sender (C; S with --download) writes BYTES of a
 * known pattern as fast as its send buffer takes them, and shuts its side
 * down; the receiver reads everything as it arrives, checks every byte
 * against the pattern, and shuts down at the sender's FIN. The run ends
 * when both ends have closed and P has closed the pair.
 *
 * With --mptcp, C speaks MPTCP v1 (RFC 8684) to P over one subflow, as
 * a Linux client would, and P terminates it (as config/examples/
 * mptcp-proxy.ini does); S stays plain TCP. C's MPTCP rides on lib/tcp's
 * connection hooks (mp_client.c): MP_CAPABLE in the SYN (no checksums),
 * both keys on the third ACK; a DSS on every later segment, with the
 * DATA_ACK of what C holds in order at the data level, and on data the
 * mapping of the segment's bytes (64-bit DSN). C reads P's bytes through
 * P's mappings and checks each at its DSN. The sender's DATA_FIN goes
 * with its last byte; C closes its subflow once it read P's DATA_FIN
 * (the FIN carries its DATA_ACK, and the receiver's own DATA_FIN); P
 * closes the pair once both DATA_FINs are acknowledged.
 *
 * relay_step() holds everything the proxy stage runs in a worker loop,
 * and nothing else: callgrind --toggle-collect=relay_step counts it.
 * Nothing depends on a real clock or on a random draw: the same frames
 * in the same order every run.
 *
 * Usage: relaybench [--bytes N[K|M|G]] [--download] [--mptcp]
 *                   [--rate MBIT] [--loop-us N]
 *   --bytes    what the sender writes (16M; K, M, G are binary)
 *   --download S sends to C (default: C to S, an upload)
 *   --mptcp    C speaks MPTCP to P over one subflow (default: plain TCP)
 *   --rate     space the frames on each link and way by this rate, in
 *              Mbit/s (default: none, a pass's frames arrive together)
 *   --loop-us  run the worker loop on a grid of N us (default: a loop
 *              whenever a frame is due, and at least every millisecond)
 * Prints "name value" lines (segments_in: the data segments P received
 * from the sender). Exits 0 when the receiver got exactly the bytes sent
 * and everything closed, else 1.
 */
#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_random.h>

#include "mptcp_proxy.h"
#include "pkt.h"
#include "relaybench.h"
#include "tcp.h"

#define MS(x) ((uint64_t)(x) * 1000000ull)
#define US(x) ((uint64_t)(x) * 1000ull)

#define DELAY_NS MS(1)        /* one way, per hop */
#define BURST 32              /* rx burst per port ([sluice] burst) */
#define START_NS MS(1000)     /* the virtual clock's start */
#define LIMIT_NS MS(600000)   /* give up after 10 virtual minutes */
#define PEER_BUF (1u << 20)   /* the peers' send and receive buffers */
#define P_MBUFS 16383         /* [sluice] mbufs */
#define P_MBUF_CACHE 256      /* [sluice] mbuf_cache */
#define H_MBUFS 65535         /* the peers' pool */
#define LINK_SLOTS (1u << 15) /* frames in flight per link and way */
#define OUT_MAX 16384         /* frames P may emit in one poll */
#define RNG_SEED 0x736c75696365ull

/* A link one way: frames in order of arrival (due times never go back). */
struct link {
	struct rte_mbuf *m[LINK_SLOTS];
	uint64_t due[LINK_SLOTS];
	uint32_t head, n;
	uint64_t free_at; /* with a rate: when the last frame is on the wire */
};

enum { L_CP, L_SP, L_PC, L_PS, L_MAX }; /* C>P, S>P, P>C, P>S */

/* One end's application. */
struct peer {
	struct tcp_engine *e;
	struct tcp_conn *conn;
	struct mp_client *mp;  /* C with --mptcp, else NULL */
	bool sender;
	bool connected, shut, peer_fin, closed, failed;
	uint64_t sent, rcvd;  /* bytes written, bytes read and checked */
	uint64_t bad_at;      /* first byte that differed (+1), 0: none */
};

struct bench {
	uint64_t bytes;
	bool download;
	bool mptcp;
	uint64_t rate_bps;    /* 0: no rate, frames of one pass arrive together */
	uint64_t loop_ns;     /* 0: a loop at every event */
	struct rte_mempool *ppool, *hpool;
	struct mptcp_proxy *px;
	struct peer c, s;
	struct link link[L_MAX];
	/* What P emitted in the current relay_step(). */
	struct rte_mbuf *out[OUT_MAX];
	uint32_t nout;
	bool out_overflow;
	uint64_t now;
	/* Figures. */
	uint64_t segments_in, frames_in, frames_out, frames_passed;
	uint64_t bursts, steps;
	struct mp_client mp;
};

static struct bench B;

/* ------------------------------------------------------------------ */
/* The counted region                                                  */

static void
p_emit(void *arg, struct rte_mbuf **pkts, uint16_t n)
{
	struct bench *b = arg;

	if (b->nout + n > OUT_MAX) {
		b->out_overflow = true;
		rte_pktmbuf_free_bulk(pkts, n);
		return;
	}
	memcpy(&b->out[b->nout], pkts, n * sizeof(*pkts));
	b->nout += n;
}

/*
 * What the proxy stage runs in one loop of sluice's worker: a burst of
 * what port 0 (the subscriber side, upstream) received, one of what port
 * 1 received, then the poll (app/worker.c, app/stage_proxy.c). A port
 * with nothing received is not called. Returns the frames that passed
 * (rx[p][0..kept[p]) for port p).
 */
__attribute__((noinline, noclone)) void
relay_step(struct mptcp_proxy *px, struct rte_mbuf **rx0, uint16_t n0,
	   struct rte_mbuf **rx1, uint16_t n1, uint16_t *kept, uint64_t now,
	   struct bench *b)
{
	kept[0] = n0 ? mptcp_proxy_input_burst(px, rx0, n0, true, 1, now) : 0;
	kept[1] = n1 ? mptcp_proxy_input_burst(px, rx1, n1, false, 0, now) : 0;
	mptcp_proxy_poll(px, now, p_emit, b);
}

/* ------------------------------------------------------------------ */
/* The harness (not counted)                                           */

static void
peer_cb(struct tcp_conn *c, void *arg, uint32_t ev, uint64_t now)
{
	struct peer *p = arg;
	static uint8_t buf[65536];
	uint32_t n;

	if (ev & TCP_EV_CONNECTED) {
		p->conn = c;
		p->connected = true;
	}
	if ((ev & TCP_EV_READABLE) && p->mp != NULL) {
		while ((n = tcp_recv(c, buf, sizeof(buf), now)) > 0)
			p->rcvd = mp_client_read(p->mp, buf, n, &p->bad_at);
	} else if (ev & TCP_EV_READABLE) {
		while ((n = tcp_recv(c, buf, sizeof(buf), now)) > 0) {
			for (uint32_t i = 0; i < n && p->bad_at == 0; i++)
				if (buf[i] != pattern(p->rcvd + i))
					p->bad_at = p->rcvd + i + 1;
			p->rcvd += n;
		}
	}
	if (ev & TCP_EV_PEER_FIN)
		p->peer_fin = true;
	if (ev & (TCP_EV_REFUSED | TCP_EV_RESET | TCP_EV_TIMEOUT))
		p->failed = true;
	if (ev & TCP_EV_CLOSED) {
		p->closed = true;
		p->conn = NULL;
	}
}

/* The sender writes as much as its send buffer takes; at the end it
 * shuts its side down. The receiver shuts down at the sender's FIN. */
static void
peer_app(struct bench *b, struct peer *p)
{
	static uint8_t buf[16384];

	if (p->conn == NULL || !p->connected || p->shut)
		return;
	if (p->sender) {
		while (p->sent < b->bytes) {
			uint32_t n = (uint32_t)RTE_MIN((uint64_t)sizeof(buf), b->bytes - p->sent);
			int32_t got;

			for (uint32_t i = 0; i < n; i++)
				buf[i] = pattern(p->sent + i);
			got = tcp_send(p->conn, buf, n, b->now);
			if (got <= 0)
				break;
			p->sent += (uint64_t)got;
		}
		if (p->sent == b->bytes && p->mp == NULL) {
			tcp_shutdown(p->conn, b->now);
			p->shut = true;
		}
	} else if (p->peer_fin && p->mp == NULL) {
		tcp_shutdown(p->conn, b->now);
		p->shut = true;
	}
	/* C with --mptcp closes at P's DATA_FIN, whichever way the data
	 * went: its FIN carries the DATA_ACK of it (mp_client.c). */
	if (p->mp != NULL && mp_client_closing(p->mp, p->sent)) {
		tcp_shutdown(p->conn, b->now);
		p->shut = true;
	}
}

static void
link_push(struct bench *b, int l, struct rte_mbuf *m)
{
	struct link *k = &b->link[l];
	uint64_t due = b->now;

	if (k->n == LINK_SLOTS) {
		fprintf(stderr, "relaybench: link %d full\n", l);
		exit(1);
	}
	if (b->rate_bps != 0) {
		uint64_t start = RTE_MAX(b->now, k->free_at);

		/* Ethernet preamble, FCS and gap: 24 bytes more per frame. */
		k->free_at = start + ((uint64_t)(m->pkt_len + 24) * 8 * 1000000000ull) /
			     b->rate_bps;
		due = k->free_at;
	}
	due += DELAY_NS;
	if (k->n > 0 && due < k->due[(k->head + k->n - 1) % LINK_SLOTS])
		due = k->due[(k->head + k->n - 1) % LINK_SLOTS];
	k->m[(k->head + k->n) % LINK_SLOTS] = m;
	k->due[(k->head + k->n) % LINK_SLOTS] = due;
	k->n++;
}

static uint64_t
link_next_due(const struct link *k)
{
	return k->n ? k->due[k->head] : UINT64_MAX;
}

static struct rte_mbuf *
link_pop_due(struct link *k, uint64_t now)
{
	struct rte_mbuf *m;

	if (k->n == 0 || k->due[k->head] > now)
		return NULL;
	m = k->m[k->head];
	k->head = (k->head + 1) % LINK_SLOTS;
	k->n--;
	return m;
}

/* A frame crosses into another pool, in one mbuf, as a port's tx and the
 * other side's rx would carry it; the original is freed. */
static struct rte_mbuf *
cross(struct rte_mbuf *m, struct rte_mempool *to, uint16_t in_port)
{
	struct rte_mbuf *c = rte_pktmbuf_copy(m, to, 0, UINT32_MAX);

	if (c == NULL || c->nb_segs != 1) {
		fprintf(stderr, "relaybench: cannot copy a frame into one mbuf\n");
		exit(1);
	}
	rte_pktmbuf_free(m);
	c->port = in_port;
	if (pkt_parse(c, pkt_meta(c), in_port) != PKT_ERR_NONE) {
		fprintf(stderr, "relaybench: a frame that does not parse\n");
		exit(1);
	}
	return c;
}

/* TCP payload bytes of a parsed frame. */
static uint32_t
payload_len(struct rte_mbuf *m)
{
	const struct pkt_meta *pm = pkt_meta(m);
	uint32_t hdr = (uint32_t)(pm->l4_off - pm->l3_off) + pm->l4_len;

	return pm->l3_len > hdr ? pm->l3_len - hdr : 0;
}

/* What a peer wants to send goes on its link toward P. */
static void
collect(struct bench *b, struct peer *p, int l, uint16_t p_port)
{
	struct rte_mbuf *pk[64];
	uint16_t n;

	while ((n = tcp_tx_burst(p->e, pk, RTE_DIM(pk))) > 0)
		for (uint16_t i = 0; i < n; i++)
			link_push(b, l, cross(pk[i], b->ppool, p_port));
}

/* What is due at a peer goes into its engine. */
static void
deliver(struct bench *b, struct peer *p, int l)
{
	struct rte_mbuf *m;

	while ((m = link_pop_due(&b->link[l], b->now)) != NULL)
		if (tcp_input(p->e, m, b->now) != TCP_INPUT_CONSUMED) {
			tcp_reply_rst(p->e, m, b->now);
			rte_pktmbuf_free(m);
		}
}

/* Up to BURST frames due at P on a link. */
static uint16_t
rx_burst(struct bench *b, int l, struct rte_mbuf **pk, bool data_from_here)
{
	uint16_t n = 0;
	struct rte_mbuf *m;

	while (n < BURST && (m = link_pop_due(&b->link[l], b->now)) != NULL) {
		pk[n++] = m;
		b->frames_in++;
		if (data_from_here && payload_len(m) > 0)
			b->segments_in++;
	}
	return n;
}

static void
proxy_loop(struct bench *b)
{
	struct rte_mbuf *rx0[BURST], *rx1[BURST];
	uint16_t n0, n1, kept[2];

	n0 = rx_burst(b, L_CP, rx0, !b->download);
	n1 = rx_burst(b, L_SP, rx1, b->download);
	b->bursts += (n0 > 0) + (n1 > 0);
	b->nout = 0;
	relay_step(b->px, rx0, n0, rx1, n1, kept, b->now, b);
	b->steps++;
	/* Frames P let pass cross to the other side as a bridge's would. */
	for (uint16_t i = 0; i < kept[0]; i++)
		link_push(b, L_PS, cross(rx0[i], b->hpool, 0));
	for (uint16_t i = 0; i < kept[1]; i++)
		link_push(b, L_PC, cross(rx1[i], b->hpool, 0));
	b->frames_passed += kept[0] + kept[1];
	b->frames_out += b->nout;
	for (uint32_t i = 0; i < b->nout; i++) {
		struct rte_mbuf *m = b->out[i];
		int l = m->port == 0 ? L_PC : L_PS;

		link_push(b, l, cross(m, b->hpool, 0));
	}
	b->nout = 0;
}

static bool
done(const struct bench *b)
{
	struct mptcp_proxy_stats st;

	if (!b->c.closed || !b->s.closed)
		return false;
	mptcp_proxy_stats_get(b->px, &st);
	return st.cnt[MPTCP_PROXY_CNT_CLOSED] + st.cnt[MPTCP_PROXY_CNT_RESET] > 0 &&
	       st.active == 0;
}

/* The next loop's time: the next frame due, at most a millisecond on (the
 * engines' timer tick), on the loop period's grid if there is one. */
static uint64_t
next_time(const struct bench *b)
{
	uint64_t next = b->now + MS(1);

	for (int l = 0; l < L_MAX; l++)
		next = RTE_MIN(next, link_next_due(&b->link[l]));
	if (b->loop_ns != 0) {
		next = RTE_MAX(next, b->now + b->loop_ns);
		next = (next - START_NS + b->loop_ns - 1) / b->loop_ns * b->loop_ns + START_NS;
	}
	return next;
}

/* ------------------------------------------------------------------ */
/* Set-up                                                              */

static char eal_dir[PATH_MAX];

/* The EAL leaves its runtime directory behind (a few MB under
 * --no-huge), and every run has a prefix of its own: remove it. */
static void
eal_dir_remove(void)
{
	char path[PATH_MAX + 256];
	struct dirent *e;
	DIR *d = opendir(eal_dir);

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", eal_dir, e->d_name);
		(void)unlink(path);
	}
	closedir(d);
	(void)rmdir(eal_dir);
}

static int
eal_start(void)
{
	char a0[] = "relaybench", a1[] = "--no-huge", a2[] = "-m", a3[] = "512",
	     a4[] = "--no-pci", a5[] = "--no-shconf", a6[] = "--log-level=error",
	     a7[] = "--no-telemetry";
	char prefix[64];
	char *argv[] = { a0, a1, a2, a3, a4, a5, a6, a7, prefix, NULL };

	snprintf(prefix, sizeof(prefix), "--file-prefix=relaybench_%d", (int)getpid());
	if (rte_eal_init((int)RTE_DIM(argv) - 1, argv) < 0)
		return -1;
	snprintf(eal_dir, sizeof(eal_dir), "%s", rte_eal_get_runtime_dir());
	(void)atexit(eal_dir_remove);
	return 0;
}

static struct tcp_engine *
peer_engine(const char *name, struct peer *p, struct rte_mempool *pool)
{
	struct tcp_engine_params e;

	tcp_engine_params_init(&e);
	e.name = name;
	e.pool = pool;
	e.cb = peer_cb;
	e.cb_arg = p;
	e.max_conns = 16;
	e.snd_buf = PEER_BUF;
	e.rcv_buf = PEER_BUF;
	for (int i = 0; i < 16; i++)
		e.isn_key[i] = (uint8_t)(name[0] + 7 * i);
	return tcp_engine_create(&e);
}

/* P as app/stage_proxy.c builds it from the [proxy] defaults, one
 * worker, the stage last (nothing reads what it sends), on a port that
 * sends chained mbufs (net_af_packet). */
static struct mptcp_proxy *
proxy(struct rte_mempool *pool)
{
	static const struct mptcp_proxy_rule rule = {
		.family = 4, .plen = 15, .addr = { 198, 18, 0, 0 },
	};
	struct mptcp_proxy_params pp;

	memset(&pp, 0, sizeof(pp));
	pp.name = "relay_p";
	pp.socket_id = SOCKET_ID_ANY;
	pp.pool = pool;
	pp.tx_copy = false;
	pp.tx_no_meta = true;
	pp.max_conns = 1024;
	pp.snd_buf = 256 * 1024;
	pp.rcv_buf = 256 * 1024;
	pp.cc = TCP_CC_CUBIC;
	pp.syn_retries = 6;
	pp.rto_min_ns = MS(200);
	pp.idle_timeout_ns = MS(7440000);
	pp.fin_wait2_timeout_ns = MS(60000);
	pp.persist_timeout_ns = MS(60000);
	pp.half_open_yield_ns = MS(1000);
	pp.reset_memory_ns = MS(5000);
	pp.mbuf_budget = P_MBUFS / 3;
	pp.rcv_reclaim_idle_ns = MS(200);
	pp.mptcp = true;
	pp.max_subflows = 8;
	pp.mptcp_fallback_mss_room = true;
	pp.nrules = 1;
	pp.rules = &rule;
	for (int i = 0; i < 16; i++)
		pp.isn_key[i] = (uint8_t)(0x50 + 3 * i);
	return mptcp_proxy_create(&pp);
}

static void
endpoints(struct tcp_endpoints *ep)
{
	static const struct rte_ether_addr mc = { { 2, 0, 0, 0, 0, 0xc } },
					   ms = { { 2, 0, 0, 0, 0, 0x5 } };

	memset(ep, 0, sizeof(*ep));
	ep->family = 4;
	memcpy(ep->laddr, (const uint8_t[]){ 198, 18, 0, 1 }, 4);
	memcpy(ep->raddr, (const uint8_t[]){ 198, 18, 1, 2 }, 4);
	ep->lport = 40000;
	ep->rport = 5201;
	ep->lmac = mc;
	ep->rmac = ms;
}

static int
parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	unsigned shift = 0;

	if (end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (*end != '\0' || v == 0 || v > (1ull << 40) >> shift)
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static void
usage(void)
{
	fprintf(stderr, "usage: relaybench [--bytes N[K|M|G]] [--download] [--mptcp] "
		"[--rate MBIT] [--loop-us N]\n");
}

static void
free_all(struct bench *b)
{
	for (int l = 0; l < L_MAX; l++) {
		struct link *k = &b->link[l];

		for (uint32_t i = 0; i < k->n; i++)
			rte_pktmbuf_free(k->m[(k->head + i) % LINK_SLOTS]);
		k->n = 0;
	}
	tcp_engine_free(b->c.e);
	tcp_engine_free(b->s.e);
	mptcp_proxy_free(b->px);
	rte_mempool_free(b->ppool);
	rte_mempool_free(b->hpool);
}

int
main(int argc, char **argv)
{
	struct bench *b = &B;
	struct tcp_endpoints ep;
	struct mptcp_proxy_stats st;
	const uint64_t *pc;
	struct peer *snd, *rcv;
	uint64_t v;
	int ok;

	b->bytes = 16ull << 20;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--bytes") == 0 && i + 1 < argc &&
		    parse_size(argv[i + 1], &b->bytes) == 0) {
			i++;
		} else if (strcmp(argv[i], "--download") == 0) {
			b->download = true;
		} else if (strcmp(argv[i], "--mptcp") == 0) {
			b->mptcp = true;
		} else if (strcmp(argv[i], "--rate") == 0 && i + 1 < argc &&
			   parse_size(argv[i + 1], &v) == 0 && v <= 1000000) {
			b->rate_bps = v * 1000000ull;
			i++;
		} else if (strcmp(argv[i], "--loop-us") == 0 && i + 1 < argc &&
			   parse_size(argv[i + 1], &v) == 0 && v <= 100000) {
			b->loop_ns = US(v);
			i++;
		} else {
			usage();
			return 2;
		}
	}
	if (eal_start() < 0) {
		fprintf(stderr, "relaybench: EAL: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	rte_srand(RNG_SEED);
	b->ppool = rte_pktmbuf_pool_create("relay_p", P_MBUFS, P_MBUF_CACHE, PKT_META_PRIV_SIZE,
					   RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	b->hpool = rte_pktmbuf_pool_create("relay_h", H_MBUFS, P_MBUF_CACHE, PKT_META_PRIV_SIZE,
					   RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (b->ppool == NULL || b->hpool == NULL) {
		fprintf(stderr, "relaybench: pools: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	b->c.e = peer_engine("c", &b->c, b->hpool);
	b->s.e = peer_engine("s", &b->s, b->hpool);
	b->px = proxy(b->ppool);
	if (b->c.e == NULL || b->s.e == NULL || b->px == NULL) {
		fprintf(stderr, "relaybench: engines: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	snd = b->download ? &b->s : &b->c;
	rcv = b->download ? &b->c : &b->s;
	snd->sender = true;
	b->now = START_NS;
	tcp_listen(b->s.e, 5201, true);
	endpoints(&ep);
	if (b->mptcp) {
		b->c.mp = &b->mp;
		mp_client_init(&b->mp, b->download ? 0 : b->bytes);
	}
	b->c.conn = tcp_connect_hooked(b->c.e, &ep, b->mptcp ? &mp_client_hooks : NULL,
				       b->mptcp ? &b->mp : NULL, &b->c, b->now);
	if (b->c.conn == NULL) {
		fprintf(stderr, "relaybench: connect: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	while (!done(b) && b->now < START_NS + LIMIT_NS && !b->out_overflow) {
		deliver(b, &b->c, L_PC);
		deliver(b, &b->s, L_PS);
		tcp_timers_run(b->c.e, b->now);
		tcp_timers_run(b->s.e, b->now);
		peer_app(b, &b->c);
		peer_app(b, &b->s);
		collect(b, &b->c, L_CP, 0);
		collect(b, &b->s, L_SP, 1);
		proxy_loop(b);
		/* More due at P than a burst takes: another loop at once
		 * (on a grid, the next loop takes them). */
		if (b->loop_ns == 0 && (link_next_due(&b->link[L_CP]) <= b->now ||
					link_next_due(&b->link[L_SP]) <= b->now))
			continue;
		b->now = next_time(b);
	}
	mptcp_proxy_stats_get(b->px, &st);
	pc = mptcp_proxy_tcp_counters(b->px);
	ok = done(b) && !b->out_overflow && !b->c.failed && !b->s.failed &&
	     snd->sent == b->bytes && rcv->rcvd == b->bytes && rcv->bad_at == 0 &&
	     b->frames_passed == 0 && b->mp.bad == NULL;
	printf("direction %s\n", b->download ? "download" : "upload");
	printf("bytes %" PRIu64 "\n", rcv->rcvd);
	printf("segments_in %" PRIu64 "\n", b->segments_in);
	printf("frames_in %" PRIu64 "\n", b->frames_in);
	printf("frames_out %" PRIu64 "\n", b->frames_out);
	printf("frames_passed %" PRIu64 "\n", b->frames_passed);
	printf("bursts %" PRIu64 "\n", b->bursts);
	printf("steps %" PRIu64 "\n", b->steps);
	printf("engine_segments_in %" PRIu64 "\n", pc[TCP_CNT_SEG_IN]);
	printf("engine_segments_coalesced %" PRIu64 "\n", pc[TCP_CNT_SEG_COALESCED]);
	printf("engine_retransmits %" PRIu64 "\n", pc[TCP_CNT_RETRANSMIT]);
	printf("virtual_ms %.3f\n", (double)(b->now - START_NS) / 1e6);
	if (b->mptcp) {
		/* C's side of the data level, and every counter of P's
		 * that moved: fallbacks, reinjections, retransmissions. */
		printf("client_dss_in %" PRIu64 "\n", b->mp.dss_in);
		printf("client_mappings_in %" PRIu64 "\n", b->mp.maps_in);
		printf("client_dss_out %" PRIu64 "\n", b->mp.dss_out);
		for (unsigned int i = 0; i < MPTCP_PROXY_CNT_MAX; i++)
			if (st.cnt[i] != 0)
				printf("proxy_%s %" PRIu64 "\n",
				       mptcp_proxy_cnt_name((enum mptcp_proxy_cnt)i), st.cnt[i]);
	}
	if (!ok)
		fprintf(stderr, "relaybench: FAILED: sent %" PRIu64 ", received %" PRIu64
			" of %" PRIu64 " bytes%s%s%s%s%s%s, proxy pairs closed %" PRIu64
			" reset %" PRIu64 " active %u, frames passed %" PRIu64 "\n",
			snd->sent, rcv->rcvd, b->bytes,
			rcv->bad_at ? ", content differs" : "",
			b->c.failed || b->s.failed ? ", a connection failed" : "",
			b->out_overflow ? ", emit overflow" : "",
			done(b) ? "" : ", not closed in time",
			b->mp.bad != NULL ? ", MPTCP: " : "", b->mp.bad != NULL ? b->mp.bad : "",
			st.cnt[MPTCP_PROXY_CNT_CLOSED], st.cnt[MPTCP_PROXY_CNT_RESET],
			st.active, b->frames_passed);
	free_all(b);
	rte_eal_cleanup();
	return ok ? 0 : 1;
}
