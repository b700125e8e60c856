/* SPDX-License-Identifier: BSD-3-Clause */
/* Opening connections (active, listener, held SYN, SYN cookie), answering
 * frames that have none, and the per-frame dispatch: tcp_input(). */

#include <errno.h>
#include <string.h>

#include <netinet/in.h>

#include <rte_errno.h>

#include "tcp_impl.h"

struct tcp_conn *
tcp_connect(struct tcp_engine *e, const struct tcp_endpoints *ep, void *arg,
	    uint64_t now_ns)
{
	return tcp_connect_hooked(e, ep, NULL, NULL, arg, now_ns);
}

struct tcp_conn *
tcp_connect_hooked(struct tcp_engine *e, const struct tcp_endpoints *ep,
		   const struct tcp_conn_hooks *hooks, void *owner, void *arg,
		   uint64_t now_ns)
{
	struct tcp_conn *c;

	e->now = now_ns;
	if (ep->xopt_len > TCP_XOPT_MAX) {
		rte_errno = EINVAL;
		return NULL;
	}
	c = tcp_conn_new(e, ep, arg);
	if (c == NULL)
		return NULL;
	c->state = TCP_SYN_SENT;
	c->hooks = hooks;
	c->hook_owner = owner;
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
	/* Answer with the tags the peer used (pkt_parse() walked them). */
	ep->vlan_count = meta->vlan_count > 2 ? 2 : meta->vlan_count;
	for (unsigned int t = 0; t < ep->vlan_count; t++) {
		ep->vlan_tpid[t] = (uint16_t)(d[12 + 4 * t] << 8 | d[13 + 4 * t]);
		ep->vlan_tci[t] = meta->vlan_tci[t];
	}
}

static struct tcp_conn *
passive_open(struct tcp_engine *e, struct rte_mbuf *m, const struct tcp_seg_in *s,
	     const struct tcp_accept_opts *ao, void *arg)
{
	struct tcp_endpoints ep;
	struct tcp_conn *c;

	ep_from_frame(&ep, m, pkt_meta(m));
	if (ao != NULL) {
		memcpy(ep.xopt, ao->xopt, ao->xopt_len);
		ep.xopt_len = ao->xopt_len;
		ep.mss = ao->mss;
	}
	c = tcp_conn_new(e, &ep, arg);
	if (c == NULL)
		return NULL;
	c->state = TCP_SYN_RECEIVED;
	c->flags |= TCP_CF_PASSIVE;
	if (ao != NULL) {
		c->hooks = ao->hooks;
		c->hook_owner = ao->hook_owner;
	}
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
	tcp_rcv_account(c); /* the cookie's SYN-ACK offered it */
	c->rcv_wscale = c->snd_wscale = 0xff;
	c->mss = RTE_MIN(mss, c->rcv_mss);
	c->snd_wl1 = s->seq - 1; /* so this ACK sets the window */
	c->snd_wl2 = s->ack;
	e->cc->init(&c->cc, c->mss, RTE_MIN(10u * c->mss, RTE_MAX(2u * c->mss, 14600u)));
	tcp_conn_event(c, TCP_EV_CONNECTED);
	(void)tcp_conn_input(c, m, s); /* CONNECTED pending: never deferred */
	tcp_timer_update(c);
	tcp_conn_deliver(c);
	return 0;
}

static int
parse_or_count(struct tcp_engine *e, const struct rte_mbuf *m, struct tcp_seg_in *s)
{
	struct rte_mbuf *w = (struct rte_mbuf *)(uintptr_t)m;
	/* The frame is the engine's from here: the payload sum it stores
	 * in the mbuf is the one write. */
	int rc = tcp_seg_parse_psum(w, pkt_meta(w), s, 1, &e->psum);

	if (rc == TCP_SEG_ECSUM)
		TCP_CNT(e, BAD_CSUM);
	else if (rc == TCP_SEG_EFRAGMENT)
		TCP_CNT(e, FRAGMENT);
	else if (rc != 0)
		TCP_CNT(e, MALFORMED);
	return rc;
}

struct tcp_conn *
tcp_accept_opts(struct tcp_engine *e, struct rte_mbuf *syn,
		const struct tcp_accept_opts *o, void *arg, uint64_t now_ns)
{
	struct tcp_seg_in s;

	e->now = now_ns;
	if ((o != NULL && o->xopt_len > TCP_XOPT_MAX) ||
	    parse_or_count(e, syn, &s) != 0 ||
	    (s.flags & (TCP_FL_SYN | TCP_FL_ACK | TCP_FL_RST)) != TCP_FL_SYN) {
		rte_errno = EINVAL;
		return NULL;
	}
	return passive_open(e, syn, &s, o, arg);
}

struct tcp_conn *
tcp_accept_xopts(struct tcp_engine *e, struct rte_mbuf *syn, const uint8_t *xopt,
		 uint32_t xopt_len, void *arg, uint64_t now_ns)
{
	struct tcp_accept_opts o = { .xopt_len = (uint8_t)xopt_len };

	if (xopt_len > TCP_XOPT_MAX || (xopt_len && xopt == NULL)) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (xopt_len)
		memcpy(o.xopt, xopt, xopt_len);
	return tcp_accept_opts(e, syn, &o, arg, now_ns);
}

struct tcp_conn *
tcp_accept(struct tcp_engine *e, struct rte_mbuf *syn, void *arg, uint64_t now_ns)
{
	return tcp_accept_opts(e, syn, NULL, arg, now_ns);
}

uint16_t
tcp_conn_peer_mss(const struct tcp_conn *c)
{
	if (c->state == TCP_CLOSED || c->state == TCP_SYN_SENT ||
	    c->state == TCP_LISTEN)
		return 0;
	/* tcp_apply_syn_opts() kept the peer's MSS, capped at ours, less
	 * the timestamp option's room. */
	return (uint16_t)(c->mss + ((c->flags & TCP_CF_TS) ? 12 : 0));
}

uint32_t
tcp_syn_xopts(const struct rte_mbuf *m, uint8_t *buf, uint32_t cap, uint32_t *left,
	      tcp_xopt_carry_fn carry)
{
	const struct pkt_meta *meta = pkt_meta((struct rte_mbuf *)(uintptr_t)m);
	uint32_t dummy;

	if (left == NULL)
		left = &dummy;
	*left = 0;
	if (meta->l3 == PKT_L3_NONE || meta->l4_proto != IPPROTO_TCP ||
	    (meta->flags & (PKT_F_L4 | PKT_F_MALFORMED)) != PKT_F_L4 ||
	    meta->l4_len < 20 || (uint32_t)meta->l4_off + meta->l4_len > m->data_len)
		return 0;
	return tcp_seg_xopts(rte_pktmbuf_mtod_offset(m, const uint8_t *, meta->l4_off),
			     meta->l4_len, buf, cap, left, carry);
}

uint32_t
tcp_conn_peer_xopts(const struct tcp_conn *c, uint8_t *buf)
{
	if (!(c->flags & TCP_CF_XOPT_PEER))
		return 0;
	memcpy(buf, c->ep.xopt, c->ep.xopt_len);
	return c->ep.xopt_len;
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

/* A parsed segment for its connection. 0: consumed; -1: the connection
 * was in TIME-WAIT and gave way to a new SYN (RFC 6191), whose mbuf the
 * caller keeps. */
static int
conn_segment(struct tcp_conn *c, struct rte_mbuf *m, struct tcp_seg_in *s)
{
	if (c->state == TCP_TIME_WAIT && (c->flags & TCP_CF_DETACHED) &&
	    (s->flags & (TCP_FL_SYN | TCP_FL_ACK | TCP_FL_RST)) == TCP_FL_SYN &&
	    tcp_seq_gt(s->seq, c->rcv_nxt)) {
		TCP_CNT(c->eng, TIME_WAIT_REUSED);
		tcp_conn_release(c);
		return -1;
	}
	if (tcp_conn_input(c, m, s))
		return 0; /* the rest at tcp_input_burst_end() */
	tcp_timer_update(c);
	tcp_conn_deliver(c);
	return 0;
}

/* The key of a frame's connection: our address is its destination. */
static inline void
key_from_meta(struct tcp_key *k, const struct pkt_meta *meta)
{
	uint32_t alen = meta->l3 == PKT_L3_IPV4 ? 4 : 16;

	memset(k, 0, sizeof(*k));
	memcpy(k->laddr, meta->dst, alen);
	memcpy(k->raddr, meta->src, alen);
	k->lport = meta->dport;
	k->rport = meta->sport;
	k->family = meta->l3 == PKT_L3_IPV4 ? 4 : 6;
}

/* Is k the key of the frame meta describes? */
static inline bool
key_is(const struct tcp_key *k, const struct pkt_meta *meta)
{
	uint64_t a[2], b[2], x[2], y[2];

	if (k->lport != meta->dport || k->rport != meta->sport)
		return false;
	if (meta->l3 == PKT_L3_IPV4) {
		uint32_t la, ra, d, s;

		memcpy(&la, k->laddr, 4);
		memcpy(&ra, k->raddr, 4);
		memcpy(&d, meta->dst, 4);
		memcpy(&s, meta->src, 4);
		return k->family == 4 && la == d && ra == s;
	}
	memcpy(a, k->laddr, 16);
	memcpy(b, k->raddr, 16);
	memcpy(x, meta->dst, 16);
	memcpy(y, meta->src, 16);
	return k->family == 6 && ((a[0] ^ x[0]) | (a[1] ^ x[1]) | (b[0] ^ y[0]) |
				  (b[1] ^ y[1])) == 0;
}

/* A TCP frame whose ports the parser read: one a connection may own. */
static inline bool
has_tcp_ports(const struct pkt_meta *meta)
{
	return meta->l3 != PKT_L3_NONE && meta->l4_proto == IPPROTO_TCP &&
	       (meta->flags & PKT_F_L4);
}

/* The connection the frame's ports found last, if the frame is of it. */
static inline struct tcp_conn *
hot_hit(const struct tcp_engine *e, const struct pkt_meta *meta, uint32_t slot)
{
	struct tcp_conn *c = e->hot[slot];

	return c != NULL && key_is(&c->key, meta) ? c : NULL;
}

struct tcp_conn *
tcp_conn_find(struct tcp_engine *e, const struct pkt_meta *meta)
{
	uint32_t slot = tcp_hot_slot(meta->dport, meta->sport);
	struct tcp_conn *c;
	struct tcp_key k;
	void *data;

	/* A bulk transfer brings bursts of one connection's segments:
	 * compare with the one its ports found last before hashing the
	 * 40-byte key. */
	c = hot_hit(e, meta, slot);
	if (c != NULL)
		return c;
	key_from_meta(&k, meta);
	if (rte_hash_lookup_data(e->table, &k, &data) < 0)
		return NULL;
	e->hot[slot] = data;
	return data;
}

struct tcp_conn *
tcp_conn_lookup_cached(struct tcp_engine *e, const struct rte_mbuf *m)
{
	const struct pkt_meta *meta = pkt_meta((struct rte_mbuf *)(uintptr_t)m);

	if (!has_tcp_ports(meta))
		return NULL;
	return hot_hit(e, meta, tcp_hot_slot(meta->dport, meta->sport));
}

struct tcp_conn *
tcp_conn_lookup(struct tcp_engine *e, const struct rte_mbuf *m)
{
	const struct pkt_meta *meta = pkt_meta((struct rte_mbuf *)(uintptr_t)m);

	if (!has_tcp_ports(meta))
		return NULL;
	return tcp_conn_find(e, meta);
}

enum tcp_input_result
tcp_input_after_reset(struct tcp_engine *e, struct rte_mbuf *m, uint64_t now_ns)
{
	const struct pkt_meta *meta = pkt_meta(m);
	struct tcp_rmem *r;
	struct tcp_key k;
	uint8_t fl;

	e->now = now_ns;
	if (e->rmem == NULL || now_ns >= e->rmem_until || !has_tcp_ports(meta) ||
	    (meta->flags & (PKT_F_FRAGMENT | PKT_F_MALFORMED)))
		return TCP_INPUT_NO_CONN;
	key_from_meta(&k, meta);
	r = tcp_rmem_find(e, &k);
	if (r == NULL)
		return TCP_INPUT_NO_CONN;
	fl = rte_pktmbuf_mtod(m, const uint8_t *)[meta->l4_off + 13];
	if ((fl & (TCP_FL_SYN | TCP_FL_ACK | TCP_FL_RST)) == TCP_FL_SYN) {
		/* A new connection on the 4-tuple, whoever takes it. */
		r->until = 0;
		return TCP_INPUT_NO_CONN;
	}
	TCP_CNT(e, AFTER_RESET);
	(void)tcp_reply_rst(e, m, now_ns);
	rte_pktmbuf_free(m);
	return TCP_INPUT_CONSUMED;
}

/* Run coalescing (tcp_input_conn_run()): at most this many frames in
 * one merged segment, so that its chain stays short. */
#define TCP_RUN_MAX_SEGS 16

/* May frame i of a run (i > 0) go to c: is it a whole TCP frame, not
 * PPPoE, that the connection cache gives c? (c released since: its
 * slot was cleared, so no.) */
static inline bool
run_member(const struct tcp_engine *e, const struct tcp_conn *c, const struct rte_mbuf *m)
{
	const struct pkt_meta *meta = pkt_meta((struct rte_mbuf *)(uintptr_t)m);

	return has_tcp_ports(meta) &&
	       !(meta->flags & (PKT_F_MALFORMED | PKT_F_FRAGMENT | PKT_F_PPPOE)) &&
	       hot_hit(e, meta, tcp_hot_slot(meta->dport, meta->sport)) == c;
}

/* An in-order data segment that later frames may be merged into: it
 * would be read at once into the receive queue, by a connection whose
 * owner sees only bytes (no hooks, segment boundaries not kept), or
 * whose hooks merge their options (tcp_conn_hooks.opts_merge: then it
 * carries one option of their kind and no other the engine does not
 * read; the receive queue keeps each frame's payload as its own mbuf
 * all the same). The frame ends with its payload, so the next payload
 * can follow it. */
static inline bool
run_head(const struct tcp_conn *c, const struct rte_mbuf *m, const struct tcp_seg_in *s)
{
	return c->state == TCP_ESTABLISHED && c->ooo_n == 0 && s->flags == TCP_FL_ACK &&
	       s->len > 0 && s->seq == c->rcv_nxt && s->nsack == 0 &&
	       m->next == NULL && (uint32_t)s->payload_off + s->len == m->data_len &&
	       (likely(c->hooks == NULL) ?
			!(c->flags & TCP_CF_KEEP_SEGS) && s->xo_n == 0 :
			c->hooks->opts_merge != NULL && s->xo_n == 1 &&
			s->xo_kind == c->hooks->opt_kind);
}

/* A hooked connection's run: the two frames' option areas are laid out
 * alike (same length, the one option of the hooks' kind at the same
 * place, run_head() checked the held one), and the owner merges them
 * (tcp_conn_hooks.opts_merge), rewriting the held frame's. */
static __rte_noinline bool
run_merge_opts(struct tcp_conn *c, struct rte_mbuf *head, const struct tcp_seg_in *hs,
	       const struct rte_mbuf *m, const struct tcp_seg_in *s)
{
	const struct pkt_meta *hm = pkt_meta(head);
	const struct pkt_meta *mm = pkt_meta((struct rte_mbuf *)(uintptr_t)m);

	if (s->xo_n != 1 || s->xo_kind != hs->xo_kind || s->xo_off != hs->xo_off ||
	    mm->l4_len != hm->l4_len)
		return false;
	/* tcp_seg_parse() checked each header is whole in its first mbuf. */
	return c->hooks->opts_merge(c->hook_owner, c,
				    rte_pktmbuf_mtod_offset(head, uint8_t *, hm->l4_off + 20u),
				    rte_pktmbuf_mtod_offset(m, const uint8_t *, mm->l4_off + 20u),
				    (uint32_t)hm->l4_len - 20u, (uint32_t)s->xo_off - 20u);
}

/* Merge m (segment s) into the held segment hs (frames head..tail) if
 * the connection would read the two the same way one after the other:
 * the bytes follow on, the header says the same (ACK, window,
 * timestamps; no SACK block, no option the engine does not read but
 * the one a hooked connection's owner merges), ACK alone or ACK and PSH
 * (which ends the merge, as in GRO), and every byte fits the window,
 * the receive buffer and the receive side's mbuf memory (rcv_mem), so
 * that none of them would have been cut or refused on its own. *mem:
 * the held frames' mbuf memory. */
static inline bool
run_merge(struct tcp_engine *e, struct tcp_conn *c, struct tcp_seg_in *hs,
	  struct rte_mbuf *head, struct rte_mbuf *tail, struct rte_mbuf *m,
	  const struct tcp_seg_in *s, uint32_t *mem)
{
	uint32_t end = hs->seq + hs->len;

	if (s->seq != end || s->ack != hs->ack || s->wnd != hs->wnd ||
	    (hs->flags & TCP_FL_PSH) || (s->flags & ~TCP_FL_PSH) != TCP_FL_ACK ||
	    s->len == 0 || s->opts != hs->opts || s->tsval != hs->tsval ||
	    s->tsecr != hs->tsecr || s->nsack != 0 ||
	    m->next != NULL || (uint32_t)s->payload_off + s->len != m->data_len ||
	    head->nb_segs >= TCP_RUN_MAX_SEGS || tcp_seq_gt(end + s->len, c->rcv_adv) ||
	    (uint64_t)c->rcvq.bytes + hs->len + s->len > e->p.rcv_buf ||
	    (uint64_t)c->rcvq.mem + *mem + m->buf_len > e->p.rcv_mem)
		return false;
	/* Options the engine does not read: only a hooked connection's
	 * (run_head()), and only as its owner says (last: it may rewrite
	 * the held frame's). */
	if (unlikely(s->xo_n != 0 || c->hooks != NULL) &&
	    (c->hooks == NULL || !run_merge_opts(c, head, hs, m, s)))
		return false;
	/* The payload alone follows the held frame's (whose headers
	 * rcv_data() slices off); its kept sum stays valid: it names the
	 * bytes by their place in the buffer. */
	m->data_off = (uint16_t)(m->data_off + s->payload_off);
	m->data_len = (uint16_t)s->len;
	m->pkt_len = s->len;
	tail->next = m;
	head->nb_segs++;
	head->pkt_len += s->len;
	hs->len += s->len;
	hs->flags |= s->flags;
	*mem += m->buf_len;
	TCP_CNT(e, SEG_COALESCED);
	return true;
}

uint16_t
tcp_input_conn_run(struct tcp_engine *e, struct tcp_conn *c,
		   struct rte_mbuf **pkts, uint16_t n, uint64_t now_ns)
{
	struct rte_mbuf *head = NULL, *tail = NULL;
	struct tcp_seg_in seg[2], *hs = NULL;
	uint32_t mem = 0; /* the held frames' mbuf memory */
	uint16_t i;

	e->now = now_ns;
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		/* (Parsed beside the held segment, never over it.) */
		struct tcp_seg_in *s = hs == &seg[0] ? &seg[1] : &seg[0];

		if (i > 0 && !run_member(e, c, m))
			break;
		if (parse_or_count(e, m, s) != 0) {
			TCP_CNT(e, SEG_IN);
			rte_pktmbuf_free(m);
			continue;
		}
		if (head != NULL) {
			if (run_merge(e, c, hs, head, tail, m, s, &mem)) {
				TCP_CNT(e, SEG_IN);
				tail = m;
				continue;
			}
			/* The held segment goes in first. Its events wait
			 * for the burst's end, but an ACK it owes at once
			 * may not, and its owner may end the connection:
			 * m then is the caller's again. */
			(void)conn_segment(c, head, hs);
			head = NULL;
			hs = NULL;
			if (!run_member(e, c, m))
				break;
		}
		TCP_CNT(e, SEG_IN);
		if (e->in_burst && i + 1 < n && run_head(c, m, s)) {
			head = tail = m;
			hs = s;
			mem = m->buf_len;
			continue;
		}
		if (conn_segment(c, m, s) != 0) {
			TCP_CNT(e, NO_CONN);
			break;
		}
	}
	if (head != NULL)
		(void)conn_segment(c, head, hs);
	return i;
}

/* A run of one frame: nothing to merge it with. */
enum tcp_input_result
tcp_input_conn(struct tcp_engine *e, struct tcp_conn *c, struct rte_mbuf *m,
	       uint64_t now_ns)
{
	return tcp_input_conn_run(e, c, &m, 1, now_ns) == 1 ? TCP_INPUT_CONSUMED :
							   TCP_INPUT_NO_CONN;
}

int
tcp_frame_check(const struct rte_mbuf *m)
{
	const struct pkt_meta *meta = pkt_meta((struct rte_mbuf *)(uintptr_t)m);
	struct tcp_seg_in s;
	int rc;

	if (meta->l3 == PKT_L3_NONE || meta->l4_proto != IPPROTO_TCP ||
	    (meta->flags & (PKT_F_L4 | PKT_F_FRAGMENT)) != PKT_F_L4)
		return -EINVAL;
	rc = tcp_seg_parse(m, meta, &s, 1);
	if (rc == TCP_SEG_ECSUM)
		return -EBADMSG;
	return rc == 0 ? 0 : -EINVAL;
}

enum tcp_input_result
tcp_input(struct tcp_engine *e, struct rte_mbuf *m, uint64_t now_ns)
{
	struct pkt_meta *meta = pkt_meta(m);
	struct tcp_seg_in s;
	struct tcp_conn *c;
	struct tcp_key k;

	e->now = now_ns;
	/* PPPoE sessions are not terminated here (replies would need the
	 * session header): they stay the caller's, like non-TCP frames. */
	if (!has_tcp_ports(meta) || (meta->flags & PKT_F_PPPOE))
		return TCP_INPUT_NOT_TCP;
	/* Nor fragments: there is no reassembly here, and a first fragment
	 * would fail the checksum and vanish. Whoever owns the flow (the
	 * peer's own stack, past us) reassembles it. */
	if (meta->flags & PKT_F_FRAGMENT) {
		TCP_CNT(e, FRAGMENT);
		return TCP_INPUT_NOT_TCP;
	}
	TCP_CNT(e, SEG_IN);
	if (parse_or_count(e, m, &s) != 0) {
		rte_pktmbuf_free(m);
		return TCP_INPUT_CONSUMED;
	}
	c = tcp_conn_find(e, meta);
	if (c != NULL && conn_segment(c, m, &s) == 0)
		return TCP_INPUT_CONSUMED;
	key_from_meta(&k, meta);
	if ((s.flags & (TCP_FL_SYN | TCP_FL_ACK | TCP_FL_RST)) == TCP_FL_SYN &&
	    tcp_listening(e, meta->dport)) {
		if (e->nsynrcvd >= e->p.syn_backlog || e->nfree == 0) {
			/* A flood (or just a full table) costs no state. */
			syn_cookie_reply(e, m, &s, &k);
			rte_pktmbuf_free(m);
			return TCP_INPUT_CONSUMED;
		}
		c = passive_open(e, m, &s, NULL, e->p.cb_arg);
		if (c != NULL) {
			/* Unknown to the user until it is connected. */
			c->flags |= TCP_CF_UNANNOUNCED | TCP_CF_BACKLOG;
			e->nsynrcvd++;
			return TCP_INPUT_CONSUMED;
		}
		TCP_CNT(e, SYN_DROPPED_FULL);
		rte_pktmbuf_free(m);
		return TCP_INPUT_CONSUMED;
	}
	if ((s.flags & (TCP_FL_SYN | TCP_FL_ACK | TCP_FL_RST)) == TCP_FL_ACK &&
	    tcp_listening(e, meta->dport)) {
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

