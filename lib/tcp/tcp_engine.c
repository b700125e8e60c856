/* SPDX-License-Identifier: BSD-3-Clause */
/* Engine lifetime, the connection pool and table, the transmit queue,
 * event delivery and connection info. Opening connections and the
 * per-frame dispatch are in tcp_open.c, the byte-stream calls in
 * tcp_stream.c. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <netinet/in.h>

#include <rte_errno.h>
#include <rte_hash_crc.h>
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

const char *
tcp_cnt_name(enum tcp_cnt cnt)
{
	return (unsigned int)cnt < TCP_CNT_MAX ? cnt_names[cnt] : "invalid";
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
	p->reset_memory_ns = 5ull * 1000000000;
	p->keepalive_intvl_ns = 75ull * 1000000000;
	p->keepalive_probes = 9;
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
	uint32_t floor;

	tcp_engine_params_init(&d);
	*p = *in;
#define DEF(f) do { if (p->f == 0) p->f = d.f; } while (0)
	DEF(max_conns); DEF(snd_buf); DEF(rcv_buf); DEF(mss); DEF(rto_min_ns);
	DEF(rto_max_ns); DEF(rto_init_ns); DEF(delack_ns); DEF(time_wait_ns); DEF(oow_ack_ns);
	DEF(reset_memory_ns);
	DEF(keepalive_intvl_ns); DEF(keepalive_probes);
	DEF(syn_retries); DEF(data_retries); DEF(timer_tick_ns); DEF(timer_slots);
	DEF(txq_size);
#undef DEF
	if (p->max_tx_segments == 0)
		p->max_tx_segments = p->max_conns * 64;
	if (p->max_conn_tx_segments == 0)
		p->max_conn_tx_segments = 256;
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
	/* A full buffer, collapsed, must fit with room to spare: its bytes,
	 * a partly filled mbuf per queue, and the segment arriving. */
	floor = p->rcv_buf + (TCP_OOO_MAX + 4) * (uint32_t)rte_pktmbuf_data_room_size(p->pool);
	if (p->rcv_mem == 0)
		p->rcv_mem = 2 * p->rcv_buf;
	if (p->rcv_mem < floor)
		p->rcv_mem = floor;
	if (p->reset_memory > (1u << 24))
		return -EINVAL;
	if (p->reset_memory != 0)
		p->reset_memory = rte_align32pow2(RTE_MAX(p->reset_memory,
							  (uint32_t)TCP_RMEM_WAYS));
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
	e->rcv_limit = e->p.rcv_buf;
	e->rcv_pool = UINT64_MAX;
	(void)tcp_psum_register(&e->psum); /* without it, sums are computed */
	hp.name = e->hash_name;
	hp.entries = p.max_conns < 8 ? 8 : p.max_conns;
	hp.key_len = sizeof(struct tcp_key);
	hp.hash_func = rte_jhash;
	hp.socket_id = p.socket_id;
	/* Cuckoo hashing alone fails some inserts before the table holds
	 * max_conns keys, and a refused insert is a refused connection
	 * with free entries left (and no TIME-WAIT recycled): the
	 * extendable buckets take every key up to max_conns. */
	hp.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE;
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
	if (p.reset_memory != 0) {
		e->rmem = rte_zmalloc_socket("tcp_rmem",
					     sizeof(struct tcp_rmem) * p.reset_memory,
					     RTE_CACHE_LINE_SIZE, p.socket_id);
		e->rmem_mask = p.reset_memory / TCP_RMEM_WAYS - 1;
	}
	if (e->conns != NULL)
		for (uint32_t i = 0; i < p.max_conns; i++)
			e->conns[i].flags = TCP_CF_FREE;
	if (e->table == NULL || e->conns == NULL || e->free == NULL ||
	    e->slots == NULL || e->txq == NULL || e->recs == NULL ||
	    (p.reset_memory != 0 && e->rmem == NULL)) {
		int err = e->table == NULL ? rte_errno : ENOMEM;

		tcp_engine_free(e);
		rte_errno = err == 0 ? ENOMEM : err;
		return NULL;
	}
	for (uint32_t i = 0; i < p.timer_slots; i++)
		LIST_INIT(&e->slots[i]);
	TAILQ_INIT(&e->tw);
	for (uint32_t i = 0; i < p.max_conns; i++)
		e->free[p.max_conns - 1 - i] = &e->conns[i];
	e->nfree = p.max_conns;
	tcp_rq_init(e);
	return e;
}

void
tcp_time_wait_list(struct tcp_conn *c)
{
	struct tcp_engine *e = c->eng;

	if (c->flags & TCP_CF_TW_LISTED)
		TAILQ_REMOVE(&e->tw, c, tw_link);
	TAILQ_INSERT_TAIL(&e->tw, c, tw_link);
	c->flags |= TCP_CF_TW_LISTED;
}

/* The set of the reset memory that k belongs to. */
static inline struct tcp_rmem *
rmem_set(const struct tcp_engine *e, const struct tcp_key *k)
{
	return &e->rmem[(rte_hash_crc(k, sizeof(*k), 0) & e->rmem_mask) * TCP_RMEM_WAYS];
}

struct tcp_rmem *
tcp_rmem_find(struct tcp_engine *e, const struct tcp_key *k)
{
	struct tcp_rmem *set;

	/* Every frame of a connection the proxy bridges asks: with no
	 * reset within reset_memory_ns, it costs one compare. */
	if (e->rmem == NULL || e->now >= e->rmem_until)
		return NULL;
	set = rmem_set(e, k);
	for (unsigned int i = 0; i < TCP_RMEM_WAYS; i++)
		if (set[i].until > e->now && memcmp(&set[i].key, k, sizeof(*k)) == 0)
			return &set[i];
	return NULL;
}

/* Remember k, a connection that ended by a reset, for reset_memory_ns:
 * in its own way if it is there, else in a free or expired way, else in
 * place of the one that would expire first (counted). */
static void
rmem_put(struct tcp_engine *e, const struct tcp_key *k)
{
	struct tcp_rmem *set = rmem_set(e, k), *v = &set[0];

	for (unsigned int i = 0; i < TCP_RMEM_WAYS; i++) {
		if (set[i].until != 0 && memcmp(&set[i].key, k, sizeof(*k)) == 0) {
			v = &set[i];
			break;
		}
		if (set[i].until < v->until)
			v = &set[i];
	}
	if (v->until > e->now && memcmp(&v->key, k, sizeof(*k)) != 0)
		TCP_CNT(e, RESET_FORGOTTEN);
	v->key = *k;
	v->until = e->now + e->p.reset_memory_ns;
	e->rmem_until = v->until;
	TCP_CNT(e, RESET_REMEMBERED);
}

void
tcp_conn_release(struct tcp_conn *c)
{
	struct tcp_engine *e = c->eng;

	if (c->reset_end && e->rmem != NULL)
		rmem_put(e, &c->key);

	e->rcv_offered -= c->rcv_counted;
	c->rcv_counted = 0;
	tcp_timer_cancel(c);
	tcp_backlog_leave(c);
	tcp_cc_group_leave(c);
	if (c->flags & TCP_CF_TW_LISTED)
		TAILQ_REMOVE(&e->tw, c, tw_link);
	tcp_rq_free_all(c);
	tcp_mq_free(&c->sndq);
	c->snd_cur = NULL;
	tcp_mq_free(&c->rcvq);
	for (unsigned int i = 0; i < c->ooo_n; i++)
		tcp_mq_free(&c->ooo[i].q);
	c->ooo_n = 0;
	rte_hash_del_key(e->table, &c->key);
	{
		uint32_t slot = tcp_hot_slot(c->key.lport, c->key.rport);

		if (e->hot[slot] == c)
			e->hot[slot] = NULL;
	}
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
				tcp_conn_release(&e->conns[i]);
	/* What a burst left unfinished frees at once from here. */
	e->in_burst = 0;
	tcp_dead_flush(e);
	if (e->txq != NULL)
		for (uint32_t i = 0; i < e->tx_count; i++)
			rte_pktmbuf_free(e->txq[(e->tx_head + i) % e->p.txq_size]);
	rte_hash_free(e->table);
	rte_free(e->conns);
	rte_free(e->free);
	rte_free(e->slots);
	rte_free(e->txq);
	rte_free(e->recs);
	rte_free(e->rmem);
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

int
tcp_listening(const struct tcp_engine *e, uint16_t port)
{
	return (e->listen_bits[port / 64] >> (port % 64)) & 1;
}

void
tcp_txq_push(struct tcp_engine *e, struct rte_mbuf *m)
{
	uint32_t at = e->tx_head + e->tx_count;

	if (e->tx_count == e->p.txq_size) {
		TCP_CNT(e, TXQ_FULL);
		rte_pktmbuf_free(m);
		return;
	}
	/* (Both under txq_size: a compare, not a division, per frame.) */
	if (at >= e->p.txq_size)
		at -= e->p.txq_size;
	e->txq[at] = m;
	e->tx_count++;
	TCP_CNT(e, SEG_OUT);
}

uint16_t
tcp_tx_burst(struct tcp_engine *e, struct rte_mbuf **pkts, uint16_t max)
{
	uint16_t n = (uint16_t)MIN2((uint32_t)max, e->tx_count);

	for (uint16_t i = 0; i < n; i++) {
		pkts[i] = e->txq[e->tx_head];
		if (++e->tx_head == e->p.txq_size)
			e->tx_head = 0;
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

void
tcp_key_from_ep(struct tcp_key *k, const struct tcp_endpoints *ep)
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
	tcp_key_from_ep(&k, ep);
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
			tcp_conn_release(old);
		}
	}
	{
		/* A new connection on a 4-tuple that ended by a reset:
		 * what comes now is its own. */
		struct tcp_rmem *r = tcp_rmem_find(e, &k);

		if (r != NULL)
			r->until = 0;
	}
	if (e->nfree == 0) {
		/* Full: the connection longest in TIME-WAIT gives way, as
		 * Linux does past tcp_max_tw_buckets. Its 2 MSL guard is cut
		 * short; its user was told it closed long ago. */
		struct tcp_conn *tw;

		/* (One whose user still reads what it holds stays.) */
		TAILQ_FOREACH(tw, &e->tw, tw_link)
			if (tw->flags & TCP_CF_DETACHED)
				break;
		if (tw == NULL) {
			rte_errno = ENOSPC;
			return NULL;
		}
		TCP_CNT(e, TIME_WAIT_RECYCLED);
		tcp_conn_release(tw);
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
	tcp_hdr_tmpl_init(&c->tmpl, ep);
	c->key = k;
	c->rcv_data_at = (uint32_t)(e->now >> 20); /* idle from its start */
	c->state = TCP_CLOSED;
	c->rcv_mss = (uint16_t)(ep->family == 4 ? e->p.mss : e->p.mss - 20);
	if (ep->mss >= 88 && ep->mss < c->rcv_mss)
		c->rcv_mss = ep->mss;
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
	c->flags &= ~TCP_CF_ACK_BURST;
	c->rtx_at = 0;
	c->delack_at = 0;
	c->rack_at = 0;
	c->ka_at = 0;
	tcp_timer_update(c);
	tcp_conn_event(c, TCP_EV_CLOSED);
}

/* Whether TCP_EV_CLOSED waits for the user to read: the connection
 * ended in order (both FINs; not reset, timed out or aborted) with bytes
 * it received still unread. They are the peer's, acknowledged: released
 * with the handle they would be lost (a proxy's leg that reached
 * TIME-WAIT or CLOSED while the other leg had no room for them). */
static inline bool
close_waits_for_reader(const struct tcp_conn *c)
{
	return c->rcvq.bytes != 0 && !c->reset_end &&
	       !(c->ev_pending & (TCP_EV_RESET | TCP_EV_TIMEOUT | TCP_EV_REFUSED));
}

/* Deliver pending events, then release a closed, detached connection.
 * Called at the end of every entry point (tcp_recv*() too, which is
 * where a CLOSED that waited for the reader goes out); nested calls are
 * absorbed by the outermost one. */
void
tcp_conn_deliver(struct tcp_conn *c)
{
	struct tcp_engine *e = c->eng;

	if (c->flags & (TCP_CF_IN_CB | TCP_CF_FREE))
		return;
	if (c->flags & TCP_CF_UNANNOUNCED) {
		/* A listener connection the user never saw ends unseen. */
		c->ev_pending = 0;
		if (c->state == TCP_CLOSED)
			tcp_conn_release(c);
		return;
	}
	if (!(c->flags & TCP_CF_DETACHED)) {
		c->flags |= TCP_CF_IN_CB;
		for (;;) {
			uint16_t ev = c->ev_pending;

			if ((ev & TCP_EV_CLOSED) && close_waits_for_reader(c)) {
				ev &= (uint16_t)~TCP_EV_CLOSED;
				if (!c->close_held) {
					c->close_held = 1;
					TCP_CNT(e, CLOSE_HELD);
				}
			}
			if (ev == 0)
				break;
			c->ev_pending &= (uint16_t)~ev;
			if (ev & TCP_EV_CLOSED)
				c->flags |= TCP_CF_DETACHED;
			e->p.cb(c, c->arg, ev, e->now);
			if (c->flags & TCP_CF_DETACHED)
				break;
		}
		c->flags &= ~TCP_CF_IN_CB;
		if (!(c->flags & TCP_CF_DETACHED))
			return; /* (a CLOSED that waits stays pending) */
	}
	c->ev_pending = 0;
	if (c->flags & TCP_CF_DETACHED) {
		/* The owner may free what its hooks point to once it was
		 * told the connection closed: TIME-WAIT runs without them. */
		c->hooks = NULL;
		tcp_cc_group_leave(c);
		if (c->state == TCP_CLOSED) {
			tcp_conn_release(c);
		} else {
			/* TIME-WAIT lives on without its user: drop data. */
			c->arg = NULL;
			tcp_mq_free(&c->rcvq);
			tcp_mq_free(&c->sndq);
			c->snd_cur = NULL;
		}
	}
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
	o->rcv_mbufs = c->rcvq.mbufs;
	o->rcv_mem = c->rcvq.mem;
	for (unsigned int i = 0; i < c->ooo_n; i++) {
		o->rcv_mbufs += c->ooo[i].q.mbufs;
		o->rcv_mem += c->ooo[i].q.mem;
	}
}

static int
mq_check(const struct tcp_mq *q)
{
	const struct rte_mbuf *m, *last = NULL;
	uint32_t bytes = 0, mbufs = 0, mem = 0;

	for (m = q->head; m != NULL; m = m->next) {
		bytes += m->data_len;
		mbufs++;
		mem += m->buf_len;
		last = m;
	}
	if (bytes != q->bytes || mbufs != q->mbufs || mem != q->mem || last != q->tail)
		return -1;
	return 0;
}

#define CHECK_OR_LINE(cond) do { if (!(cond)) return -__LINE__; } while (0)

int
tcp_conn_check(const struct tcp_conn *c)
{
	const struct tcp_engine *e = c->eng;
	uint32_t stored = c->rcvq.bytes, mem = c->rcvq.mem, sacked = 0, n = 0;
	uint32_t prev_end = c->snd_una;

	CHECK_OR_LINE(mq_check(&c->sndq) == 0);
	CHECK_OR_LINE(mq_check(&c->rcvq) == 0);
	CHECK_OR_LINE(c->ooo_n <= TCP_OOO_MAX);
	for (unsigned int i = 0; i < c->ooo_n; i++) {
		const struct tcp_ooo *r = &c->ooo[i];

		CHECK_OR_LINE(mq_check(&r->q) == 0);
		CHECK_OR_LINE(r->q.bytes > 0);
		/* Apart from the next (adjacent ones are merged)... */
		CHECK_OR_LINE(i + 1 == c->ooo_n ||
			      tcp_seq_lt(r->seq + r->q.bytes, c->ooo[i + 1].seq));
		stored += r->q.bytes;
		mem += r->q.mem;
	}
	/* ...and above RCV.NXT (those that reached it were delivered),
	 * unless a FIN came first: nothing is delivered after it. */
	CHECK_OR_LINE(c->ooo_n == 0 || (c->flags & TCP_CF_PEER_FIN) ||
		      tcp_seq_gt(c->ooo[0].seq, c->rcv_nxt));
	CHECK_OR_LINE(stored <= e->p.rcv_buf);
	CHECK_OR_LINE(mem <= e->p.rcv_mem);
	CHECK_OR_LINE(c->sndq.bytes <= e->p.snd_buf);
	if (c->state == TCP_CLOSED || c->state == TCP_LISTEN)
		return 0;
	CHECK_OR_LINE(tcp_seq_le(c->snd_una, c->snd_nxt));
	CHECK_OR_LINE(tcp_seq_le(c->snd_nxt, c->snd_max));
	for (uint32_t i = c->rq_head; i != TCP_TR_NONE; i = e->recs[i].next) {
		const struct tcp_txrec *r = &e->recs[i];

		CHECK_OR_LINE(tcp_seq_lt(r->seq, r->end));
		CHECK_OR_LINE(tcp_seq_le(prev_end, r->seq));
		CHECK_OR_LINE(tcp_seq_le(r->end, c->snd_max));
		if (r->flags & TCP_TR_SACKED)
			sacked += r->end - r->seq;
		prev_end = r->end;
		CHECK_OR_LINE(++n <= c->rq_count);
		CHECK_OR_LINE(e->recs[i].next != TCP_TR_NONE || i == c->rq_tail);
	}
	CHECK_OR_LINE(n == c->rq_count);
	CHECK_OR_LINE(sacked == c->sacked_bytes);
	return 0;
}

void
tcp_engine_set_rcv_limit(struct tcp_engine *e, uint32_t bytes)
{
	e->rcv_limit = bytes < e->p.rcv_buf ? bytes : e->p.rcv_buf;
}

void
tcp_engine_set_rcv_pool(struct tcp_engine *e, uint64_t bytes)
{
	e->rcv_pool = bytes;
	e->rcv_counting = 1; /* before the first connection: tcp.h */
}

uint64_t
tcp_engine_rcv_offered(const struct tcp_engine *e)
{
	return e->rcv_offered;
}

uint32_t
tcp_engine_reclaim_idle(struct tcp_engine *e, uint64_t now_ns, uint64_t idle_ns,
			uint32_t scan)
{
	uint32_t n = 0, now_at = (uint32_t)(now_ns >> 20);
	uint64_t idle_at = idle_ns >> 20; /* rcv_data_at's unit */

	e->now = now_ns;
	if (scan > e->p.max_conns)
		scan = e->p.max_conns; /* each once */
	for (; scan > 0; scan--) {
		struct tcp_conn *c = &e->conns[e->reclaim_at];

		if (++e->reclaim_at >= e->p.max_conns)
			e->reclaim_at = 0;
		/* MPTCP subflows too: each announces its meta-connection's
		 * window, so an idle one holds it like a plain connection;
		 * the pin caps the subflow's own edge (tcp_rcv_window()),
		 * which its sender's TCP respects whatever the edge at the
		 * data level (RFC 8684 3.3.4 has it tracked per subflow). */
		if ((c->flags & (TCP_CF_FREE | TCP_CF_DETACHED | TCP_CF_PEER_FIN)) ||
		    (c->state != TCP_ESTABLISHED && c->state != TCP_FIN_WAIT_1 &&
		     c->state != TCP_FIN_WAIT_2) ||
		    c->rcv_counted + tcp_rcv_min(c) <= tcp_rcv_floor(c) ||
		    (uint32_t)(now_at - c->rcv_data_at) < idle_at)
			continue;
		/* RFC 9293 3.8.6.2.2 lets a receiver shrink its window (SHLD-14
		 * advises against it) and requires senders to cope (MUST-34);
		 * a sender that sent no data this long has most likely none on
		 * the way that the new edge would cut (what it has is trimmed
		 * and sent again). Only its data counts: the leg a download's
		 * client acknowledges on hears ACKs and nothing else. */
		c->rcv_adv = c->rcv_nxt + tcp_rcv_floor(c);
		c->rcv_pinned = 1;
		tcp_rcv_account(c);
		tcp_send_ack(c);
		tcp_timer_update(c);
		tcp_conn_deliver(c);
		TCP_CNT(e, RCV_RECLAIMED);
		n++;
	}
	return n;
}

uint32_t
tcp_engine_window_update(struct tcp_engine *e, uint64_t now_ns)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < e->p.max_conns; i++) {
		struct tcp_conn *c = &e->conns[i];

		if (c->flags & (TCP_CF_FREE | TCP_CF_DETACHED))
			continue;
		/* Only senders the window stopped, or nearly: one that has two
		 * segments of room sends them, and the ACKs carry the rest.
		 * Idle connections have theirs (at least the floor of a
		 * receive pool) and no sender waiting; announced again, each
		 * would take a share of the pool until taken back. */
		if (tcp_rcv_announced(c) >= tcp_rcv_min(c))
			continue;
		if (tcp_window_update(c, now_ns)) {
			n++;
			tcp_conn_deliver(c);
		}
	}
	return n;
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


/* ---- extension points (tcp.h, "tcp_hooks") */

void
tcp_conn_set_hooks(struct tcp_conn *c, const struct tcp_conn_hooks *h, void *owner)
{
	c->hooks = h;
	c->hook_owner = owner;
}

void
tcp_conn_keep_segments(struct tcp_conn *c, bool on)
{
	if (on)
		c->flags |= TCP_CF_KEEP_SEGS;
	else
		c->flags &= ~TCP_CF_KEEP_SEGS;
}

int
tcp_conn_send_ack(struct tcp_conn *c, uint64_t now_ns)
{
	uint8_t st = c->state;

	if (st != TCP_ESTABLISHED && st != TCP_CLOSE_WAIT && st != TCP_FIN_WAIT_1 &&
	    st != TCP_FIN_WAIT_2 && st != TCP_CLOSING && st != TCP_LAST_ACK)
		return -ENOTCONN;
	c->eng->now = now_ns;
	tcp_send_ack(c);
	tcp_timer_update(c);
	tcp_conn_deliver(c);
	return 0;
}

uint32_t
tcp_conn_unsent(const struct tcp_conn *c)
{
	uint32_t off = c->snd_nxt - c->snd_una;

	return c->sndq.bytes > off ? c->sndq.bytes - off : 0;
}

uint8_t
tcp_conn_state(const struct tcp_conn *c)
{
	return c->state;
}

uint32_t
tcp_conn_rto_streak(const struct tcp_conn *c)
{
	return c->retries;
}

uint32_t
tcp_conn_cwnd(const struct tcp_conn *c)
{
	return c->cc.cwnd;
}

int
tcp_conn_cwnd_reduce(struct tcp_conn *c, uint64_t now_ns)
{
	struct tcp_engine *e = c->eng;

	if ((c->state != TCP_ESTABLISHED && c->state != TCP_CLOSE_WAIT) ||
	    (c->flags & TCP_CF_IN_RECOVERY))
		return 0;
	e->now = now_ns;
	e->cc->on_congestion(&c->cc, tcp_flight(c), now_ns);
	return 1;
}

uint64_t
tcp_conn_srtt_ns(const struct tcp_conn *c)
{
	return c->srtt_ns;
}

uint64_t
tcp_conn_rttvar_ns(const struct tcp_conn *c)
{
	return c->rttvar_ns;
}

uint32_t
tcp_conn_mss(const struct tcp_conn *c)
{
	return c->mss;
}

uint32_t
tcp_conn_data_mss(struct tcp_conn *c)
{
	return c->mss - tcp_hook_room(c, TCP_SEG_DATA, 0);
}

/* What tcp_output() would let out of new data: the same arithmetic. */
uint32_t
tcp_conn_send_room(const struct tcp_conn *c)
{
	uint32_t off = c->snd_nxt - c->snd_una, inflight, wnd, room, unsent;

	if (c->state != TCP_ESTABLISHED && c->state != TCP_CLOSE_WAIT)
		return 0;
	if (c->sacked_bytes == 0 && !(c->flags & TCP_CF_HAS_LOST))
		inflight = off;
	else
		inflight = tcp_rq_pipe(c);
	wnd = MIN2(c->snd_wnd, c->cc.cwnd);
	if (inflight >= wnd || off >= c->snd_wnd)
		return 0;
	room = MIN2(wnd - inflight, c->snd_wnd - off);
	unsent = c->sndq.bytes > off ? c->sndq.bytes - off : 0;
	return room > unsent ? room - unsent : 0;
}

int
tcp_cc_group_join(struct tcp_cc_group *g, struct tcp_conn *c)
{
	if (c->ccg == g)
		return 0;
	if (g->n >= TCP_CC_GROUP_MAX)
		return -ENOSPC;
	tcp_cc_group_leave(c);
	g->member[g->n++] = c;
	c->ccg = g;
	c->ccg_frac = 0;
	return 0;
}

void
tcp_cc_group_leave(struct tcp_conn *c)
{
	struct tcp_cc_group *g = c->ccg;

	if (g == NULL)
		return;
	for (uint32_t i = 0; i < g->n; i++) {
		if (g->member[i] == c) {
			g->member[i] = g->member[--g->n];
			break;
		}
	}
	c->ccg = NULL;
}

uint64_t
tcp_cc_lia_increase(const struct tcp_cc_group *g, const struct tcp_conn *c,
		    uint32_t acked)
{
	double total = 0, best = 0, sum = 0, alpha, a, b, rtt_dflt = 0;

	for (uint32_t k = 0; k < g->n; k++)
		if ((double)g->member[k]->srtt_ns > rtt_dflt)
			rtt_dflt = (double)g->member[k]->srtt_ns;
	if (rtt_dflt == 0)
		rtt_dflt = 1e6;
	for (uint32_t k = 0; k < g->n; k++) {
		const struct tcp_conn *m = g->member[k];
		double w = m->cc.cwnd;
		double r = m->srtt_ns ? (double)m->srtt_ns : rtt_dflt;

		total += w;
		if (w / (r * r) > best)
			best = w / (r * r);
		sum += w / r;
	}
	if (total == 0 || sum == 0 || c->cc.cwnd == 0)
		return 0;
	/* RFC 6356 section 3, in bytes: alpha, then the smaller of the
	 * coupled and the uncoupled (Reno) increase. */
	alpha = total * best / (sum * sum);
	a = alpha * acked * c->mss / total;
	b = (double)acked * c->mss / c->cc.cwnd;
	return (uint64_t)((a < b ? a : b) * 65536.0);
}
