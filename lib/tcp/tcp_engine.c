/* SPDX-License-Identifier: BSD-3-Clause */
/* Engine lifetime, the connection pool and table, events, and the user
 * API (connect, accept, send, recv, shutdown, abort). */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <netinet/in.h>

#include <rte_errno.h>
#include <rte_jhash.h>
#include <rte_malloc.h>

#include "tcp_impl.h"
#include "tcp_siphash.h"

#define MIN2(a, b) ((a) < (b) ? (a) : (b))

static const char *const cnt_names[] = {
#define TCP_CNT_NAME(e, s) s,
	TCP_CNT_LIST(TCP_CNT_NAME)
#undef TCP_CNT_NAME
};

static const char *const state_names[] = {
#define TCP_STATE_NAME(e, s) s,
	TCP_STATE_LIST(TCP_STATE_NAME)
#undef TCP_STATE_NAME
};

const char *
tcp_cnt_name(enum tcp_cnt cnt)
{
	return (unsigned int)cnt < TCP_CNT_MAX ? cnt_names[cnt] : "invalid";
}

const char *
tcp_state_name(enum tcp_state st)
{
	return (unsigned int)st < TCP_STATE_MAX ? state_names[st] : "invalid";
}

size_t
tcp_conn_size(void)
{
	return sizeof(struct tcp_conn);
}

void
tcp_engine_params_init(struct tcp_engine_params *p)
{
	memset(p, 0, sizeof(*p));
	p->name = "tcp";
	p->socket_id = SOCKET_ID_ANY;
	p->max_conns = 1024;
	p->snd_buf = 256 * 1024;
	p->rcv_buf = 256 * 1024;
	p->mss = 1460;
	p->cc = TCP_CC_CUBIC;
	p->rto_min_ns = 200ull * 1000000;
	p->rto_max_ns = 60ull * 1000000000;
	p->rto_init_ns = 1000ull * 1000000;
	p->delack_ns = 40ull * 1000000;
	p->time_wait_ns = 60ull * 1000000000;
	p->oow_ack_ns = 500ull * 1000000;
	p->syn_retries = 6;
	p->data_retries = 15;
	p->timer_tick_ns = 1000000;
	p->timer_slots = 1024;
	p->txq_size = 1024;
}

static int
params_fill(struct tcp_engine_params *p, const struct tcp_engine_params *in)
{
	struct tcp_engine_params d;

	tcp_engine_params_init(&d);
	*p = *in;
#define DEF(f) do { if (p->f == 0) p->f = d.f; } while (0)
	DEF(max_conns); DEF(snd_buf); DEF(rcv_buf); DEF(mss); DEF(rto_min_ns);
	DEF(rto_max_ns); DEF(rto_init_ns); DEF(delack_ns); DEF(time_wait_ns); DEF(oow_ack_ns);
	DEF(syn_retries); DEF(data_retries); DEF(timer_tick_ns); DEF(timer_slots);
	DEF(txq_size);
#undef DEF
	if (p->max_tx_segments == 0)
		p->max_tx_segments = p->max_conns * 64;
	if (p->syn_backlog == 0)
		p->syn_backlog = p->max_conns / 2 ? p->max_conns / 2 : 1;
	if (p->name == NULL)
		p->name = d.name;
	if (p->pool == NULL || p->cb == NULL || p->mss < 88 ||
	    !rte_is_power_of_2(p->timer_slots) || p->cc > TCP_CC_NEWRENO ||
	    p->rto_min_ns > p->rto_max_ns || p->snd_buf > (1u << 30) ||
	    p->rcv_buf > (1u << 30) ||
	    rte_pktmbuf_priv_size(p->pool) < PKT_META_PRIV_SIZE)
		return -EINVAL;
	return 0;
}

struct tcp_engine *
tcp_engine_create(const struct tcp_engine_params *in)
{
	struct rte_hash_parameters hp = { 0 };
	struct tcp_engine *e;
	struct tcp_engine_params p;

	if (in == NULL || params_fill(&p, in) != 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	e = rte_zmalloc_socket("tcp_engine", sizeof(*e), RTE_CACHE_LINE_SIZE,
			       p.socket_id);
	if (e == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	e->p = p;
	e->cc = p.cc == TCP_CC_NEWRENO ? &tcp_cc_newreno : &tcp_cc_cubic;
	snprintf(e->hash_name, sizeof(e->hash_name), "tcp_%s", p.name);
	e->p.name = e->hash_name;
	hp.name = e->hash_name;
	hp.entries = p.max_conns < 8 ? 8 : p.max_conns;
	hp.key_len = sizeof(struct tcp_key);
	hp.hash_func = rte_jhash;
	hp.socket_id = p.socket_id;
	e->table = rte_hash_create(&hp);
	e->conns = rte_zmalloc_socket("tcp_conns", sizeof(struct tcp_conn) * p.max_conns,
				      RTE_CACHE_LINE_SIZE, p.socket_id);
	e->free = rte_zmalloc_socket("tcp_free", sizeof(void *) * p.max_conns, 0,
				     p.socket_id);
	e->slots = rte_zmalloc_socket("tcp_wheel",
				      sizeof(struct tcp_conn_list) * p.timer_slots, 0,
				      p.socket_id);
	e->txq = rte_zmalloc_socket("tcp_txq", sizeof(void *) * p.txq_size, 0,
				    p.socket_id);
	e->recs = rte_zmalloc_socket("tcp_txrec",
				     sizeof(struct tcp_txrec) * p.max_tx_segments,
				     RTE_CACHE_LINE_SIZE, p.socket_id);
	if (e->conns != NULL)
		for (uint32_t i = 0; i < p.max_conns; i++)
			e->conns[i].flags = TCP_CF_FREE;
	if (e->table == NULL || e->conns == NULL || e->free == NULL ||
	    e->slots == NULL || e->txq == NULL || e->recs == NULL) {
		int err = e->table == NULL ? rte_errno : ENOMEM;

		tcp_engine_free(e);
		rte_errno = err == 0 ? ENOMEM : err;
		return NULL;
	}
	for (uint32_t i = 0; i < p.timer_slots; i++)
		LIST_INIT(&e->slots[i]);
	for (uint32_t i = 0; i < p.max_conns; i++)
		e->free[p.max_conns - 1 - i] = &e->conns[i];
	e->nfree = p.max_conns;
	tcp_rq_init(e);
	return e;
}

static void
conn_release(struct tcp_conn *c)
{
	struct tcp_engine *e = c->eng;

	tcp_timer_cancel(c);
	tcp_backlog_leave(c);
	tcp_rq_free_all(c);
	tcp_mq_free(&c->sndq);
	tcp_mq_free(&c->rcvq);
	for (unsigned int i = 0; i < c->ooo_n; i++)
		tcp_mq_free(&c->ooo[i].q);
	c->ooo_n = 0;
	rte_hash_del_key(e->table, &c->key);
	c->flags = TCP_CF_FREE;
	e->free[e->nfree++] = c;
	e->nconns--;
	TCP_CNT(e, CONN_CLOSED);
}

void
tcp_engine_free(struct tcp_engine *e)
{
	if (e == NULL)
		return;
	if (e->conns != NULL)
		for (uint32_t i = 0; i < e->p.max_conns; i++)
			if (!(e->conns[i].flags & TCP_CF_FREE))
				conn_release(&e->conns[i]);
	if (e->txq != NULL)
		for (uint32_t i = 0; i < e->tx_count; i++)
			rte_pktmbuf_free(e->txq[(e->tx_head + i) % e->p.txq_size]);
	rte_hash_free(e->table);
	rte_free(e->conns);
	rte_free(e->free);
	rte_free(e->slots);
	rte_free(e->txq);
	rte_free(e->recs);
	rte_free(e);
}

void
tcp_listen(struct tcp_engine *e, uint16_t port, bool on)
{
	if (on)
		e->listen_bits[port / 64] |= UINT64_C(1) << (port % 64);
	else
		e->listen_bits[port / 64] &= ~(UINT64_C(1) << (port % 64));
}

static int
listening(const struct tcp_engine *e, uint16_t port)
{
	return (e->listen_bits[port / 64] >> (port % 64)) & 1;
}

void
tcp_txq_push(struct tcp_engine *e, struct rte_mbuf *m)
{
	if (e->tx_count == e->p.txq_size) {
		TCP_CNT(e, TXQ_FULL);
		rte_pktmbuf_free(m);
		return;
	}
	e->txq[(e->tx_head + e->tx_count) % e->p.txq_size] = m;
	e->tx_count++;
	TCP_CNT(e, SEG_OUT);
}

uint16_t
tcp_tx_burst(struct tcp_engine *e, struct rte_mbuf **pkts, uint16_t max)
{
	uint16_t n = (uint16_t)MIN2((uint32_t)max, e->tx_count);

	for (uint16_t i = 0; i < n; i++) {
		pkts[i] = e->txq[e->tx_head];
		e->tx_head = (e->tx_head + 1) % e->p.txq_size;
	}
	e->tx_count -= n;
	return n;
}

/* RFC 6528: ISN = M + F(4-tuple, secret), M a 4 us clock. */
uint32_t
tcp_isn(const struct tcp_engine *e, const struct tcp_key *k)
{
	uint64_t f = tcp_siphash24(e->p.isn_key, k, offsetof(struct tcp_key, pad));

	return (uint32_t)(e->now / 4000) + (uint32_t)f;
}

static void
key_from_ep(struct tcp_key *k, const struct tcp_endpoints *ep)
{
	memset(k, 0, sizeof(*k));
	memcpy(k->laddr, ep->laddr, ep->family == 4 ? 4 : 16);
	memcpy(k->raddr, ep->raddr, ep->family == 4 ? 4 : 16);
	k->lport = ep->lport;
	k->rport = ep->rport;
	k->family = ep->family;
}

static uint8_t
wscale_for(uint32_t buf)
{
	uint8_t ws = 0;

	while (ws < 14 && (UINT32_C(65535) << ws) < buf)
		ws++;
	return ws;
}

struct tcp_conn *
tcp_conn_new(struct tcp_engine *e, const struct tcp_endpoints *ep, void *arg)
{
	struct tcp_conn *c;
	struct tcp_key k;
	uint8_t tskey[sizeof(k) + 1];

	if (ep->family != 4 && ep->family != 6) {
		rte_errno = EINVAL;
		return NULL;
	}
	key_from_ep(&k, ep);
	{
		void *data;

		if (rte_hash_lookup_data(e->table, &k, &data) >= 0) {
			struct tcp_conn *old = data;

			/* A 4-tuple in TIME-WAIT may be reused by a new
			 * connection (RFC 6191): our ISNs and timestamps
			 * only move forward. */
			if (old->state != TCP_TIME_WAIT ||
			    !(old->flags & TCP_CF_DETACHED)) {
				rte_errno = EEXIST;
				return NULL;
			}
			TCP_CNT(e, TIME_WAIT_REUSED);
			conn_release(old);
		}
	}
	if (e->nfree == 0) {
		rte_errno = ENOSPC;
		return NULL;
	}
	c = e->free[--e->nfree];
	memset(c, 0, sizeof(*c));
	if (rte_hash_add_key_data(e->table, &k, c) < 0) {
		c->flags = TCP_CF_FREE;
		e->free[e->nfree++] = c;
		rte_errno = ENOSPC;
		return NULL;
	}
	e->nconns++;
	TCP_CNT(e, CONN_OPENED);
	c->eng = e;
	c->arg = arg;
	c->ep = *ep;
	c->key = k;
	c->state = TCP_CLOSED;
	c->rcv_mss = (uint16_t)(ep->family == 4 ? e->p.mss : e->p.mss - 20);
	c->mss = 536; /* RFC 9293 3.7.1 default until the peer says */
	c->rcv_wscale = (e->p.flags & TCP_F_NO_WS) ? 0xff : wscale_for(e->p.rcv_buf);
	c->snd_wscale = 0xff;
	c->rto_ns = e->p.rto_init_ns;
	memcpy(tskey, &k, sizeof(k));
	tskey[sizeof(k)] = 'T';
	c->ts_off = (uint32_t)tcp_siphash24(e->p.isn_key, tskey, sizeof(tskey));
	c->iss = tcp_isn(e, &k);
	c->snd_una = c->snd_nxt = c->snd_max = c->iss;
	c->recover = c->iss;
	c->rq_head = c->rq_tail = TCP_TR_NONE;
	c->reo_wnd_mult = 1;
	c->rack_fack = c->rack_end = c->iss;
	return c;
}

void
tcp_conn_set_state(struct tcp_conn *c, uint8_t st)
{
	c->state = st;
}

void
tcp_conn_event(struct tcp_conn *c, uint16_t ev)
{
	c->ev_pending |= ev;
}

void
tcp_conn_close(struct tcp_conn *c)
{
	c->state = TCP_CLOSED;
	c->rtx_at = 0;
	c->delack_at = 0;
	c->rack_at = 0;
	tcp_timer_update(c);
	tcp_conn_event(c, TCP_EV_CLOSED);
}

/* Deliver pending events, then release a closed, detached connection.
 * Called at the end of every entry point; nested calls are absorbed by
 * the outermost one. */
void
tcp_conn_deliver(struct tcp_conn *c)
{
	struct tcp_engine *e = c->eng;

	if (c->flags & (TCP_CF_IN_CB | TCP_CF_FREE))
		return;
	if (!(c->flags & TCP_CF_DETACHED)) {
		c->flags |= TCP_CF_IN_CB;
		while (c->ev_pending != 0) {
			uint16_t ev = c->ev_pending;

			c->ev_pending = 0;
			if (ev & TCP_EV_CLOSED)
				c->flags |= TCP_CF_DETACHED;
			e->p.cb(c, c->arg, ev, e->now);
			if (c->flags & TCP_CF_DETACHED)
				break;
		}
		c->flags &= ~TCP_CF_IN_CB;
	}
	c->ev_pending = 0;
	if (c->flags & TCP_CF_DETACHED) {
		if (c->state == TCP_CLOSED) {
			conn_release(c);
		} else {
			/* TIME-WAIT lives on without its user: drop data. */
			c->arg = NULL;
			tcp_mq_free(&c->rcvq);
			tcp_mq_free(&c->sndq);
		}
	}
}

struct tcp_conn *
tcp_connect(struct tcp_engine *e, const struct tcp_endpoints *ep, void *arg,
	    uint64_t now_ns)
{
	struct tcp_conn *c;

	e->now = now_ns;
	c = tcp_conn_new(e, ep, arg);
	if (c == NULL)
		return NULL;
	c->state = TCP_SYN_SENT;
	c->snd_nxt = c->snd_max = c->iss + 1;
	c->flags |= TCP_CF_RTT_TIMING;
	c->rtt_seq = c->iss + 1;
	c->rtt_ts = now_ns;
	tcp_send_syn(c);
	tcp_rto_arm(c);
	return c;
}

static void
ep_from_frame(struct tcp_endpoints *ep, const struct rte_mbuf *m,
	      const struct pkt_meta *meta)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);

	memset(ep, 0, sizeof(*ep));
	ep->family = meta->l3 == PKT_L3_IPV4 ? 4 : 6;
	memcpy(ep->laddr, meta->dst, 16);
	memcpy(ep->raddr, meta->src, 16);
	ep->lport = meta->dport;
	ep->rport = meta->sport;
	memcpy(&ep->lmac, d, 6);
	memcpy(&ep->rmac, d + 6, 6);
	ep->port = meta->in_port;
}

static struct tcp_conn *
passive_open(struct tcp_engine *e, struct rte_mbuf *m, const struct tcp_seg_in *s,
	     void *arg)
{
	struct tcp_endpoints ep;
	struct tcp_conn *c;

	ep_from_frame(&ep, m, pkt_meta(m));
	c = tcp_conn_new(e, &ep, arg);
	if (c == NULL)
		return NULL;
	c->state = TCP_SYN_RECEIVED;
	c->flags |= TCP_CF_PASSIVE;
	c->irs = s->seq;
	c->rcv_nxt = s->seq + 1;
	c->rcv_adv = c->rcv_nxt;
	tcp_apply_syn_opts(c, s);
	c->snd_nxt = c->snd_max = c->iss + 1;
	c->flags |= TCP_CF_RTT_TIMING;
	c->rtt_seq = c->iss + 1;
	c->rtt_ts = e->now;
	tcp_send_syn(c);
	tcp_rto_arm(c);
	rte_pktmbuf_free(m);
	return c;
}

void
tcp_backlog_leave(struct tcp_conn *c)
{
	if (c->flags & TCP_CF_BACKLOG) {
		c->flags &= ~TCP_CF_BACKLOG;
		c->eng->nsynrcvd--;
	}
}

/* The stateless SYN-ACK: our ISN is the cookie, MSS is the only option. */
static void
syn_cookie_reply(struct tcp_engine *e, const struct rte_mbuf *m,
		 const struct tcp_seg_in *s, const struct tcp_key *k)
{
	struct tcp_endpoints ep;
	struct tcp_seg_out o = { 0 };
	struct rte_mbuf *out;
	uint16_t peer_mss = (s->opts & TCP_SO_MSS) ? s->mss : 536;

	ep_from_frame(&ep, m, pkt_meta((struct rte_mbuf *)(uintptr_t)m));
	o.seq = tcp_cookie_make(e, k, s->seq, peer_mss);
	o.ack = s->seq + 1;
	o.flags = TCP_FL_SYN | TCP_FL_ACK;
	o.wnd = (uint16_t)RTE_MIN(e->p.rcv_buf, 65535u);
	o.opts = TCP_SO_MSS;
	o.mss = (uint16_t)(ep.family == 4 ? e->p.mss : e->p.mss - 20);
	out = tcp_seg_build(e->p.pool, &ep, &o, NULL, 0, 0);
	if (out == NULL) {
		TCP_CNT(e, MBUF_ALLOC_FAIL);
		return;
	}
	TCP_CNT(e, SYN_COOKIE_SENT);
	tcp_txq_push(e, out);
}

/* The ACK carried a valid cookie: build the connection it stands for,
 * then let the ACK (and any data or FIN in it) through as usual. */
static int
cookie_open(struct tcp_engine *e, struct rte_mbuf *m, struct tcp_seg_in *s,
	    uint16_t mss)
{
	struct tcp_endpoints ep;
	struct tcp_conn *c;

	ep_from_frame(&ep, m, pkt_meta(m));
	c = tcp_conn_new(e, &ep, e->p.cb_arg);
	if (c == NULL) {
		TCP_CNT(e, SYN_DROPPED_FULL);
		return -1;
	}
	TCP_CNT(e, SYN_COOKIE_OK);
	c->flags |= TCP_CF_PASSIVE;
	c->state = TCP_ESTABLISHED;
	c->iss = s->ack - 1;
	c->snd_una = c->snd_nxt = c->snd_max = s->ack;
	c->recover = c->iss;
	c->rack_fack = c->rack_end = c->iss;
	c->irs = s->seq - 1;
	c->rcv_nxt = s->seq;
	c->rcv_adv = s->seq + RTE_MIN(e->p.rcv_buf, 65535u);
	c->rcv_wscale = c->snd_wscale = 0xff;
	c->mss = RTE_MIN(mss, c->rcv_mss);
	c->snd_wl1 = s->seq - 1; /* so this ACK sets the window */
	c->snd_wl2 = s->ack;
	e->cc->init(&c->cc, c->mss, RTE_MIN(10u * c->mss, RTE_MAX(2u * c->mss, 14600u)));
	tcp_conn_event(c, TCP_EV_CONNECTED);
	tcp_conn_input(c, m, s);
	tcp_timer_update(c);
	tcp_conn_deliver(c);
	return 0;
}

static int
parse_or_count(struct tcp_engine *e, const struct rte_mbuf *m, struct tcp_seg_in *s)
{
	int rc = tcp_seg_parse(m, pkt_meta((struct rte_mbuf *)(uintptr_t)m), s, 1);

	if (rc == TCP_SEG_ECSUM)
		TCP_CNT(e, BAD_CSUM);
	else if (rc != 0)
		TCP_CNT(e, MALFORMED);
	return rc;
}

struct tcp_conn *
tcp_accept(struct tcp_engine *e, struct rte_mbuf *syn, void *arg, uint64_t now_ns)
{
	struct tcp_seg_in s;

	e->now = now_ns;
	if (parse_or_count(e, syn, &s) != 0 ||
	    (s.flags & (TCP_FL_SYN | TCP_FL_ACK | TCP_FL_RST)) != TCP_FL_SYN) {
		rte_errno = EINVAL;
		return NULL;
	}
	return passive_open(e, syn, &s, arg);
}

int
tcp_reply_rst(struct tcp_engine *e, const struct rte_mbuf *m, uint64_t now_ns)
{
	struct tcp_endpoints ep;
	struct tcp_seg_in s;

	e->now = now_ns;
	if (parse_or_count(e, m, &s) != 0)
		return -EINVAL;
	if (s.flags & TCP_FL_RST)
		return 0;
	ep_from_frame(&ep, m, pkt_meta((struct rte_mbuf *)(uintptr_t)m));
	/* RFC 9293 3.10.7.1 */
	if (s.flags & TCP_FL_ACK)
		return tcp_send_rst_for(e, &ep, s.ack, 0, TCP_FL_RST);
	return tcp_send_rst_for(e, &ep, 0,
				s.seq + s.len + !!(s.flags & TCP_FL_SYN) +
				!!(s.flags & TCP_FL_FIN),
				TCP_FL_RST | TCP_FL_ACK);
}

enum tcp_input_result
tcp_input(struct tcp_engine *e, struct rte_mbuf *m, uint64_t now_ns)
{
	struct pkt_meta *meta = pkt_meta(m);
	struct tcp_endpoints ep;
	struct tcp_seg_in s;
	struct tcp_key k;
	void *data;

	e->now = now_ns;
	if (meta->l3 == PKT_L3_NONE || meta->l4_proto != IPPROTO_TCP ||
	    !(meta->flags & PKT_F_L4))
		return TCP_INPUT_NOT_TCP;
	TCP_CNT(e, SEG_IN);
	if (parse_or_count(e, m, &s) != 0) {
		rte_pktmbuf_free(m);
		return TCP_INPUT_CONSUMED;
	}
	memset(&ep, 0, sizeof(ep));
	ep.family = meta->l3 == PKT_L3_IPV4 ? 4 : 6;
	memcpy(ep.laddr, meta->dst, 16);
	memcpy(ep.raddr, meta->src, 16);
	ep.lport = meta->dport;
	ep.rport = meta->sport;
	key_from_ep(&k, &ep);
	if (rte_hash_lookup_data(e->table, &k, &data) >= 0) {
		struct tcp_conn *c = data;

		/* RFC 6191: a SYN beyond what TIME-WAIT received may open a
		 * new incarnation; the old one gives way. */
		if (c->state == TCP_TIME_WAIT &&
		    (s.flags & (TCP_FL_SYN | TCP_FL_ACK | TCP_FL_RST)) == TCP_FL_SYN &&
		    tcp_seq_gt(s.seq, c->rcv_nxt)) {
			TCP_CNT(e, TIME_WAIT_REUSED);
			conn_release(c);
			goto no_conn;
		}
		tcp_conn_input(c, m, &s);
		tcp_timer_update(c);
		tcp_conn_deliver(c);
		return TCP_INPUT_CONSUMED;
	}
no_conn:
	if ((s.flags & (TCP_FL_SYN | TCP_FL_ACK | TCP_FL_RST)) == TCP_FL_SYN &&
	    listening(e, meta->dport)) {
		struct tcp_conn *c;

		if (e->nsynrcvd >= e->p.syn_backlog || e->nfree == 0) {
			/* A flood (or just a full table) costs no state. */
			syn_cookie_reply(e, m, &s, &k);
			rte_pktmbuf_free(m);
			return TCP_INPUT_CONSUMED;
		}
		c = passive_open(e, m, &s, e->p.cb_arg);
		if (c != NULL) {
			/* Unknown to the user until it is connected. */
			c->flags |= TCP_CF_DETACHED | TCP_CF_BACKLOG;
			e->nsynrcvd++;
			return TCP_INPUT_CONSUMED;
		}
		TCP_CNT(e, SYN_DROPPED_FULL);
		rte_pktmbuf_free(m);
		return TCP_INPUT_CONSUMED;
	}
	if ((s.flags & (TCP_FL_SYN | TCP_FL_ACK | TCP_FL_RST)) == TCP_FL_ACK &&
	    listening(e, meta->dport)) {
		uint16_t mss;

		if (tcp_cookie_check(e, &k, s.seq - 1, s.ack - 1, &mss) == 0) {
			if (cookie_open(e, m, &s, mss) == 0)
				return TCP_INPUT_CONSUMED;
		} else {
			TCP_CNT(e, SYN_COOKIE_BAD);
		}
	}
	TCP_CNT(e, NO_CONN);
	return TCP_INPUT_NO_CONN;
}

int32_t
tcp_send(struct tcp_conn *c, const void *data, uint32_t len, uint64_t now_ns)
{
	struct tcp_engine *e = c->eng;
	const uint8_t *p = data;
	uint32_t room, done = 0, want = len;

	e->now = now_ns;
	if (c->flags & TCP_CF_FIN_QUEUED)
		return -EPIPE;
	if (c->state != TCP_ESTABLISHED && c->state != TCP_CLOSE_WAIT &&
	    c->state != TCP_SYN_SENT && c->state != TCP_SYN_RECEIVED)
		return -ENOTCONN;
	room = c->sndq.bytes >= e->p.snd_buf ? 0 : e->p.snd_buf - c->sndq.bytes;
	if (len > room)
		len = room;
	while (done < len) {
		struct rte_mbuf *t = c->sndq.tail;
		uint32_t n;

		/* Fill our own last mbuf; never write into one a caller gave
		 * us (tcp_send_mbuf()), which may be shared. */
		if (t == NULL || rte_pktmbuf_tailroom(t) == 0 || !RTE_MBUF_DIRECT(t) ||
		    rte_mbuf_refcnt_read(t) != 1 || t->pool != e->p.pool) {
			t = rte_pktmbuf_alloc(e->p.pool);
			if (t == NULL) {
				TCP_CNT(e, MBUF_ALLOC_FAIL);
				break;
			}
			tcp_mq_append(&c->sndq, t);
		}
		n = MIN2(len - done, (uint32_t)rte_pktmbuf_tailroom(t));
		memcpy(rte_pktmbuf_mtod_offset(t, uint8_t *, t->data_len), p + done, n);
		t->data_len = (uint16_t)(t->data_len + n);
		t->pkt_len = t->data_len;
		c->sndq.bytes += n;
		done += n;
	}
	if (done < want)
		c->flags |= TCP_CF_WANT_WRITE;
	tcp_output(c);
	tcp_timer_update(c);
	tcp_conn_deliver(c);
	return (int32_t)done;
}

int32_t
tcp_send_mbuf(struct tcp_conn *c, struct rte_mbuf *m, uint64_t now_ns)
{
	struct tcp_engine *e = c->eng;
	uint32_t len = rte_pktmbuf_pkt_len(m);

	e->now = now_ns;
	if (c->flags & TCP_CF_FIN_QUEUED)
		return -EPIPE;
	if (c->state != TCP_ESTABLISHED && c->state != TCP_CLOSE_WAIT &&
	    c->state != TCP_SYN_SENT && c->state != TCP_SYN_RECEIVED)
		return -ENOTCONN;
	if (c->sndq.bytes + len > e->p.snd_buf) {
		c->flags |= TCP_CF_WANT_WRITE;
		return 0;
	}
	tcp_mq_append(&c->sndq, m);
	tcp_output(c);
	tcp_timer_update(c);
	tcp_conn_deliver(c);
	return (int32_t)len;
}

/* After the reader took bytes: a window update of its own only when
 * the announced window fell below half the buffer and reading at least
 * doubles it, and by at least min(RCV.BUFF/2, MSS) (RFC 1122 4.2.3.3).
 * Otherwise the next ACK carries the new window: a reader that keeps up
 * costs no extra segments. */
static void
after_read(struct tcp_conn *c, uint32_t before)
{
	struct tcp_engine *e = c->eng;
	uint32_t after = tcp_rcv_window(c);

	if ((c->state == TCP_ESTABLISHED || c->state == TCP_FIN_WAIT_1 ||
	     c->state == TCP_FIN_WAIT_2) && after > before &&
	    before <= e->p.rcv_buf / 2 && after >= 2 * before &&
	    after - before >= MIN2(e->p.rcv_buf / 2, c->rcv_mss)) {
		tcp_send_ack(c);
		tcp_timer_update(c);
	}
	tcp_conn_deliver(c);
}

uint32_t
tcp_recv(struct tcp_conn *c, void *buf, uint32_t len, uint64_t now_ns)
{
	uint32_t n, before;

	c->eng->now = now_ns;
	n = tcp_chain_copy(c->rcvq.head, 0, buf, MIN2(len, c->rcvq.bytes));
	if (n == 0)
		return 0;
	before = c->rcv_adv - c->rcv_nxt;
	tcp_mq_drop_front(&c->rcvq, n);
	after_read(c, before);
	return n;
}

struct rte_mbuf *
tcp_recv_mbuf(struct tcp_conn *c, uint32_t max, uint64_t now_ns)
{
	struct rte_mbuf *head = c->rcvq.head, *last = NULL, *m;
	uint32_t bytes = 0, before;
	uint16_t nseg = 0;

	c->eng->now = now_ns;
	for (m = head; m != NULL && bytes + m->data_len <= max &&
	     nseg < UINT16_MAX; m = m->next) {
		bytes += m->data_len;
		nseg++;
		last = m;
	}
	if (last == NULL)
		return NULL;
	before = c->rcv_adv - c->rcv_nxt;
	c->rcvq.head = last->next;
	if (c->rcvq.head == NULL)
		c->rcvq.tail = NULL;
	c->rcvq.bytes -= bytes;
	last->next = NULL;
	head->nb_segs = nseg;
	head->pkt_len = bytes;
	after_read(c, before);
	return head;
}

int
tcp_shutdown(struct tcp_conn *c, uint64_t now_ns)
{
	c->eng->now = now_ns;
	switch (c->state) {
	case TCP_SYN_SENT:
	case TCP_SYN_RECEIVED:
		/* A half-close never deletes (tcp_abort() does): the FIN
		 * follows the queued data once established. */
		c->flags |= TCP_CF_FIN_QUEUED;
		break;
	case TCP_ESTABLISHED:
		c->flags |= TCP_CF_FIN_QUEUED;
		c->state = TCP_FIN_WAIT_1;
		tcp_output(c);
		break;
	case TCP_CLOSE_WAIT:
		c->flags |= TCP_CF_FIN_QUEUED;
		c->state = TCP_LAST_ACK;
		tcp_output(c);
		break;
	default:
		return (c->flags & TCP_CF_FIN_QUEUED) ? 0 : -ENOTCONN;
	}
	tcp_timer_update(c);
	tcp_conn_deliver(c);
	return 0;
}

void
tcp_abort(struct tcp_conn *c, uint64_t now_ns)
{
	c->eng->now = now_ns;
	if (c->state != TCP_CLOSED && c->state != TCP_SYN_SENT &&
	    c->state != TCP_TIME_WAIT && c->state != TCP_LISTEN)
		tcp_send_rst(c);
	if (c->state != TCP_CLOSED)
		tcp_conn_close(c);
	tcp_conn_deliver(c);
}

void
tcp_conn_set_arg(struct tcp_conn *c, void *arg)
{
	c->arg = arg;
}

void *
tcp_conn_arg(const struct tcp_conn *c)
{
	return c->arg;
}

const struct tcp_endpoints *
tcp_conn_endpoints(const struct tcp_conn *c)
{
	return &c->ep;
}

void
tcp_conn_get_info(const struct tcp_conn *c, struct tcp_conn_info *o)
{
	memset(o, 0, sizeof(*o));
	o->state = c->state;
	o->ts_ok = !!(c->flags & TCP_CF_TS);
	o->sack_ok = !!(c->flags & TCP_CF_SACK);
	o->snd_wscale = c->snd_wscale == 0xff ? 0 : c->snd_wscale;
	o->rcv_wscale = c->rcv_wscale == 0xff ? 0 : c->rcv_wscale;
	o->mss = c->mss;
	o->iss = c->iss;
	o->irs = c->irs;
	o->snd_una = c->snd_una;
	o->snd_nxt = c->snd_nxt;
	o->snd_wnd = c->snd_wnd;
	o->rcv_nxt = c->rcv_nxt;
	o->rcv_wnd = c->rcv_adv - c->rcv_nxt;
	o->cwnd = c->cc.cwnd;
	o->ssthresh = c->cc.ssthresh;
	o->snd_queued = c->sndq.bytes;
	o->rcv_queued = c->rcvq.bytes;
	o->backoff = c->backoff;
	o->srtt_ns = c->srtt_ns;
	o->rttvar_ns = c->rttvar_ns;
	o->rto_ns = c->rto_ns;
	o->retransmits = c->retransmits;
	o->prr_delivered = c->prr_delivered;
	o->prr_out = c->prr_out;
	o->in_recovery = !!(c->flags & TCP_CF_IN_RECOVERY);
	o->reo_wnd_mult = c->reo_wnd_mult;
}

uint32_t
tcp_engine_conn_count(const struct tcp_engine *e)
{
	return e->nconns;
}

const uint64_t *
tcp_engine_counters(const struct tcp_engine *e)
{
	return e->cnt;
}
