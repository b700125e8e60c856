/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_TCP_TEST_UTIL_H
#define SLUICE_TCP_TEST_UTIL_H

/*
 * Helpers for the lib/tcp tests: EAL and a mempool, and "a wire": two
 * engines back to back in memory on a virtual clock. Frames one engine
 * sends reach the other after a one-way delay, unless a drop hook says
 * otherwise. Applications on each side record events and hash the bytes
 * they read.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "../../test_eal.h"
#include "pkt.h"
#include "tcp.h"
#include "tcp_seg.h"

#define MS(x) ((uint64_t)(x) * 1000000ull)
#define US(x) ((uint64_t)(x) * 1000ull)

static struct rte_mempool *test_pool;

static inline int
test_eal_init(const char *tag)
{
	char name[64];

	snprintf(name, sizeof(name), "tcp_%s", tag);
	if (test_eal_start(name, 256) < 0)
		return -1;
	test_pool = rte_pktmbuf_pool_create("tcp_test", 16383, 0, PKT_META_PRIV_SIZE,
					    RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	return test_pool ? 0 : -1;
}

/* FNV-1a, 64 bit: enough to compare byte streams. */
static inline uint64_t
fnv1a(uint64_t h, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}
#define FNV_INIT 0xcbf29ce484222325ull

/* One side's application. */
struct app {
	struct tcp_conn *conn;
	uint32_t events;      /* every event seen, OR-ed */
	uint32_t n_closed;
	uint32_t n_readable;  /* callbacks with TCP_EV_READABLE */
	int auto_read;        /* read everything on READABLE */
	uint64_t rx_bytes;
	uint64_t rx_hash;
	uint64_t connected_at;
	uint32_t last_state_at_close;
};

static inline void
app_cb(struct tcp_conn *c, void *arg, uint32_t ev, uint64_t now)
{
	struct app *a = arg;
	uint8_t buf[4096];
	uint32_t n;

	(void)now;
	a->events |= ev;
	if (ev & TCP_EV_CONNECTED) {
		a->conn = c;
		a->connected_at = now;
	}
	if (ev & TCP_EV_READABLE)
		a->n_readable++;
	if ((ev & TCP_EV_READABLE) && a->auto_read) {
		while ((n = tcp_recv(c, buf, sizeof(buf), now)) > 0) {
			a->rx_hash = fnv1a(a->rx_hash, buf, n);
			a->rx_bytes += n;
		}
	}
	if (ev & TCP_EV_CLOSED) {
		a->n_closed++;
		a->conn = NULL;
	}
}

#define WIRE_MAX 8192

struct frame {
	struct rte_mbuf *m;
	uint64_t due;
	int to_b;
};

struct wire;
/* Return 1 to drop, 2 to deliver twice, 3 to hold back by w->hold, 0 to
 * pass. seg is the parsed TCP header of the frame. */
typedef int (*drop_fn)(struct wire *w, int to_b, const struct tcp_seg_in *seg);

struct wire {
	struct tcp_engine *a, *b;
	struct app app_a, app_b;
	uint64_t now;
	uint64_t delay;          /* one way */
	uint64_t jitter;         /* extra delay drawn in [0, jitter): reorders */
	uint64_t hold;           /* extra delay for frames the hook holds (3) */
	uint64_t rng;            /* xorshift state for jitter and hooks */
	struct frame f[WIRE_MAX];
	uint32_t head, n;
	drop_fn drop;
	void *drop_arg;
	uint64_t sent[2], dropped[2];  /* [0]: b->a, [1]: a->b */
	uint64_t chained[2];           /* frames that referenced the send queue */
	uint64_t in_place[2];          /* of them, one mbuf: headers in its headroom */
	/* the last frames that crossed, for assertions */
	struct tcp_seg_in last[2];
	uint64_t last_at[2];
	uint32_t n_data[2];      /* data segments carried */
	uint32_t n_pure_ack[2];
	struct tcp_endpoints ep_a;   /* a's view: a -> b */
	int burst;               /* deliver the frames due at once as one
				  * input burst of each engine
				  * (tcp_input_burst_begin() .. _end()) */
	int runs;                /* with burst: deliver each engine's
				  * consecutive frames with
				  * tcp_input_conn_run(), each first copied
				  * into one mbuf, as a NIC gives them */
	uint8_t meta_poison;     /* nonzero: count the frames whose pkt_meta
				  * is still this byte throughout, as the
				  * engine handed them over */
	uint64_t meta_kept[2];
};

/* Is every byte of m's pkt_meta up to in_port b? */
static inline int
meta_is_all(struct rte_mbuf *m, uint8_t b)
{
	const uint8_t *p = (const uint8_t *)pkt_meta(m);

	for (size_t i = 0; i < offsetof(struct pkt_meta, in_port) + 2; i++)
		if (p[i] != b)
			return 0;
	return 1;
}

static inline void
wire_params(struct tcp_engine_params *p, const char *name, struct app *app)
{
	tcp_engine_params_init(p);
	p->name = name;
	p->pool = test_pool;
	p->cb = app_cb;
	p->cb_arg = app;
	p->max_conns = 64;
	for (int i = 0; i < 16; i++)
		p->isn_key[i] = (uint8_t)(name[0] + i);
}

static inline void
wire_ep_v4(struct tcp_endpoints *ep)
{
	static const uint8_t ma[6] = { 2, 0, 0, 0, 0, 0xa }, mb[6] = { 2, 0, 0, 0, 0, 0xb };

	memset(ep, 0, sizeof(*ep));
	ep->family = 4;
	ep->laddr[0] = 198; ep->laddr[1] = 18; ep->laddr[2] = 0; ep->laddr[3] = 1;
	ep->raddr[0] = 198; ep->raddr[1] = 18; ep->raddr[2] = 1; ep->raddr[3] = 2;
	ep->lport = 40000;
	ep->rport = 80;
	memcpy(&ep->lmac, ma, 6);
	memcpy(&ep->rmac, mb, 6);
}

static inline void
wire_ep_v6(struct tcp_endpoints *ep)
{
	wire_ep_v4(ep);
	memset(ep->laddr, 0, 16);
	memset(ep->raddr, 0, 16);
	ep->family = 6;
	ep->laddr[0] = 0x20; ep->laddr[1] = 0x01; ep->laddr[2] = 0x0d; ep->laddr[3] = 0xb8;
	ep->laddr[15] = 1;
	memcpy(ep->raddr, ep->laddr, 16);
	ep->raddr[15] = 2;
}

/* The same endpoints seen from the other side. */
static inline void
ep_reverse(struct tcp_endpoints *r, const struct tcp_endpoints *ep)
{
	*r = *ep;
	memcpy(r->laddr, ep->raddr, 16);
	memcpy(r->raddr, ep->laddr, 16);
	r->lport = ep->rport;
	r->rport = ep->lport;
	r->lmac = ep->rmac;
	r->rmac = ep->lmac;
}

static inline void wire_free(struct wire *w);

static inline uint64_t
wire_rand(struct wire *w)
{
	uint64_t x = w->rng ? w->rng : 0x9e3779b97f4a7c15ull;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	w->rng = x;
	return x;
}

static inline struct wire *
wire_new(const struct tcp_engine_params *pa, const struct tcp_engine_params *pb)
{
	static struct wire w;

	/* A failed test skips wire_free(): clean up after it here. */
	if (w.a != NULL || w.b != NULL)
		wire_free(&w);
	memset(&w, 0, sizeof(w));
	w.app_a.rx_hash = FNV_INIT;
	w.app_b.rx_hash = FNV_INIT;
	w.app_a.auto_read = 1;
	w.app_b.auto_read = 1;
	w.delay = MS(5);
	w.now = MS(1000);
	{
		struct tcp_engine_params p = *pa, q = *pb;

		p.cb_arg = &w.app_a;
		q.cb_arg = &w.app_b;
		w.a = tcp_engine_create(&p);
		w.b = tcp_engine_create(&q);
	}
	wire_ep_v4(&w.ep_a);
	return &w;
}

static inline void
wire_free(struct wire *w)
{
	for (uint32_t i = 0; i < w->n; i++)
		rte_pktmbuf_free(w->f[(w->head + i) % WIRE_MAX].m);
	w->n = 0;
	tcp_engine_free(w->a);
	tcp_engine_free(w->b);
	w->a = w->b = NULL;
}

/* Collect what both engines want to send. */
static inline void
wire_collect(struct wire *w)
{
	struct rte_mbuf *pkts[64];
	uint16_t n;

	for (int to_b = 0; to_b < 2; to_b++) {
		struct tcp_engine *src = to_b ? w->a : w->b;

		while ((n = tcp_tx_burst(src, pkts, 64)) > 0) {
			for (uint16_t i = 0; i < n; i++) {
				struct rte_mbuf *m = pkts[i];
				struct tcp_seg_in s;
				struct frame *f;
				int verdict;

				if (w->meta_poison && meta_is_all(m, w->meta_poison))
					w->meta_kept[to_b]++;
				if (m->nb_segs == 1 && !RTE_MBUF_DIRECT(m))
					w->in_place[to_b]++;
				if (m->nb_segs > 1 || !RTE_MBUF_DIRECT(m)) {
					/* What a NIC does with a chained frame, or
					 * one built in place on a send queue's
					 * buffer: it sends the bytes and frees the
					 * mbufs; the other end receives them in a
					 * buffer of its own. */
					struct rte_mbuf *lin = rte_pktmbuf_copy(m, m->pool, 0,
										UINT32_MAX);

					if (lin == NULL || lin->nb_segs != 1) {
						fprintf(stderr, "wire: cannot copy a chained frame\n");
						abort();
					}
					rte_pktmbuf_free(m);
					m = lin;
					w->chained[to_b]++;
				}
				pkt_parse(m, pkt_meta(m), 0);
				if (tcp_seg_parse(m, pkt_meta(m), &s, 1) != 0) {
					fprintf(stderr, "engine built a bad segment\n");
					abort();
				}
				if (getenv("WIRE_TRACE"))
					fprintf(stderr, "%llu %s seq=%u ack=%u len=%u fl=%x wnd=%u\n",
						(unsigned long long)(w->now / 1000), to_b ? "A>B" : "B>A",
						s.seq, s.ack, s.len, s.flags, s.wnd);
				w->sent[to_b]++;
				w->last[to_b] = s;
				w->last_at[to_b] = w->now;
				if (s.len)
					w->n_data[to_b]++;
				else if (!(s.flags & (TCP_FL_SYN | TCP_FL_FIN | TCP_FL_RST)))
					w->n_pure_ack[to_b]++;
				verdict = w->drop ? w->drop(w, to_b, &s) : 0;
				if (verdict == 1 && getenv("WIRE_TRACE"))
					fprintf(stderr, "  ^ dropped\n");
				if (verdict == 1 || w->n + 2 > WIRE_MAX) {
					w->dropped[to_b]++;
					rte_pktmbuf_free(m);
					continue;
				}
				for (int copy = 0; copy < (verdict == 2 ? 2 : 1); copy++) {
					uint64_t due = w->now + w->delay;
					uint32_t pos = w->n;

					if (copy == 1) {
						m = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
						if (m == NULL)
							break;
						pkt_parse(m, pkt_meta(m), 0);
					}
					if (w->jitter)
						due += wire_rand(w) % w->jitter;
					if (verdict == 3)
						due += w->hold;
					/* keep the queue sorted by due time */
					while (pos > 0 && w->f[(w->head + pos - 1) % WIRE_MAX].due > due) {
						w->f[(w->head + pos) % WIRE_MAX] =
							w->f[(w->head + pos - 1) % WIRE_MAX];
						pos--;
					}
					f = &w->f[(w->head + pos) % WIRE_MAX];
					f->m = m;
					f->due = due;
					f->to_b = to_b;
					w->n++;
				}
			}
		}
	}
}

static inline uint64_t
wire_next_due(const struct wire *w)
{
	return w->n ? w->f[w->head].due : UINT64_MAX;
}

/* One frame into dst; an unknown 4-tuple gets an RST. */
static inline void
wire_input(struct wire *w, struct tcp_engine *dst, struct rte_mbuf *m)
{
	if (tcp_input(dst, m, w->now) != TCP_INPUT_CONSUMED) {
		tcp_reply_rst(dst, m, w->now);
		rte_pktmbuf_free(m);
	}
}

/* The frames due now that go the same way as the first, up to 64, each
 * copied into one mbuf: fed by runs of one connection. */
static inline void
wire_deliver_run(struct wire *w, struct tcp_engine *dst, int to_b)
{
	struct rte_mbuf *pk[64];
	uint16_t k = 0, j = 0;

	while (k < 64 && w->n && w->f[w->head].due <= w->now &&
	       w->f[w->head].to_b == to_b) {
		struct rte_mbuf *m = w->f[w->head].m;
		struct rte_mbuf *l = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);

		w->head = (w->head + 1) % WIRE_MAX;
		w->n--;
		rte_pktmbuf_free(m);
		if (l == NULL || l->next != NULL) {
			fprintf(stderr, "wire: cannot copy a frame into one mbuf\n");
			abort();
		}
		pkt_parse(l, pkt_meta(l), 0);
		pk[k++] = l;
	}
	while (j < k) {
		struct tcp_conn *c = tcp_conn_lookup(dst, pk[j]);
		uint16_t t = c != NULL ? tcp_input_conn_run(dst, c, pk + j, k - j, w->now) : 0;

		if (t == 0) {
			wire_input(w, dst, pk[j]);
			t = 1;
		}
		j += t;
	}
}

/* Deliver frames due by now; unknown 4-tuples get an RST. */
static inline void
wire_deliver(struct wire *w)
{
	if (w->burst) {
		tcp_input_burst_begin(w->a);
		tcp_input_burst_begin(w->b);
	}
	while (w->n && w->f[w->head].due <= w->now) {
		struct frame f = w->f[w->head];
		struct tcp_engine *dst = f.to_b ? w->b : w->a;

		if (w->runs) {
			wire_deliver_run(w, dst, f.to_b);
			continue;
		}
		w->head = (w->head + 1) % WIRE_MAX;
		w->n--;
		wire_input(w, dst, f.m);
	}
	if (w->burst) {
		tcp_input_burst_end(w->a, w->now);
		tcp_input_burst_end(w->b, w->now);
	}
}

/* Run the wire until the virtual clock reaches `until`, stepping at most
 * 1 ms at a time (or to the next frame). */
static inline void
wire_run_until(struct wire *w, uint64_t until)
{
	for (;;) {
		uint64_t next;

		wire_collect(w);
		wire_deliver(w);
		tcp_timers_run(w->a, w->now);
		tcp_timers_run(w->b, w->now);
		wire_collect(w);
		if (w->now >= until)
			break;
		next = w->now + MS(1);
		if (wire_next_due(w) < next)
			next = wire_next_due(w);
		if (next > until)
			next = until;
		w->now = next;
	}
}

static inline void
wire_run(struct wire *w, uint64_t dt)
{
	wire_run_until(w, w->now + dt);
}

/* A connects to B (which listens on 80); run the handshake. */
static inline struct tcp_conn *
wire_connect(struct wire *w)
{
	struct tcp_conn *c;

	tcp_listen(w->b, w->ep_a.rport, true);
	c = tcp_connect(w->a, &w->ep_a, &w->app_a, w->now);
	if (c != NULL)
		w->app_a.conn = c;
	wire_run(w, 4 * w->delay + MS(1));
	return c;
}

#endif /* SLUICE_TCP_TEST_UTIL_H */
