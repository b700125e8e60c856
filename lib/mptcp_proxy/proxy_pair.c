/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A proxied connection (a pair of legs), from the held SYN to release.
 *
 * Set-up follows lib/tcp/README.md: the proxy answers the client, as the
 * server, only once the server accepted (tcp_accept_opts() on the held
 * SYN). A refused server makes the proxy answer the held SYN with the
 * RST the server sent it (tcp_reply_rst()); an unreachable server (SYN
 * timeout) leaves the client's SYN unanswered. Either way the client
 * sees what it would have seen without the proxy.
 *
 * MSS: each leg announces what the other side's SYN announced: the
 * server leg the client's MSS, the client leg the server's (capped at
 * the engine's 1460 over IPv4, 1440 over IPv6).
 *
 * SYN options that the legs do not negotiate themselves (TCP Fast Open,
 * experiments, unknown kinds) cross from the client's SYN to the server
 * leg's SYN and from the server's SYN-ACK to the client's.
 *
 * A RST or a timeout on one leg aborts the other; the pair is released
 * once neither leg nor the held SYN is left.
 *
 * Half open: a pair whose server has not answered yet, or whose client
 * has not completed its handshake, stays on a list in the order SYNs
 * came. With the table full, a new SYN takes the place of the oldest
 * such pair that is at least half_open_yield_ns old (half_open_evicted):
 * spoofed SYNs toward a server that answers leave the client leg in
 * SYN-RECEIVED for the SYN retries' minutes, and would otherwise hold
 * the table, and bridge every new connection, that long. Pairs that
 * completed are dropped from the list when they reach its head.
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>

#include "pkt.h"
#include "proxy_priv.h"

static void
ho_unlink(struct proxy_pair *p)
{
	struct mptcp_proxy *px = p->px;

	if (!p->ho_listed)
		return;
	if (p->ho_prev != NULL)
		p->ho_prev->ho_next = p->ho_next;
	else
		px->ho_head = p->ho_next;
	if (p->ho_next != NULL)
		p->ho_next->ho_prev = p->ho_prev;
	else
		px->ho_tail = p->ho_prev;
	p->ho_next = p->ho_prev = NULL;
	p->ho_listed = 0;
}

static void
ho_append(struct mptcp_proxy *px, struct proxy_pair *p)
{
	p->ho_next = NULL;
	p->ho_prev = px->ho_tail;
	if (px->ho_tail != NULL)
		px->ho_tail->ho_next = p;
	else
		px->ho_head = p;
	px->ho_tail = p;
	p->ho_listed = 1;
}

/* The server has not answered, or the client not completed its side. */
static bool
pair_half_open(const struct proxy_pair *p)
{
	if (p->held_syn != NULL)
		return true;
	if (p->meta != NULL)
		return !(p->meta->flags & MT_ESTAB);
	if (p->cl.ep.ctx != NULL && p->cl.ep.ops == &mptcp_proxy_tcp_endpoint)
		return tcp_conn_state(p->cl.ep.ctx) == TCP_SYN_RECEIVED;
	return false;
}

/* Table full: make room by resetting the oldest half-open pair, if it is
 * old enough. Returns the free pair, or NULL. */
static struct proxy_pair *
evict_half_open(struct mptcp_proxy *px, uint64_t now)
{
	struct proxy_pair *p;

	while ((p = px->ho_head) != NULL) {
		if (!pair_half_open(p)) {
			ho_unlink(p);
			continue;
		}
		if (now - p->born_ns < px->half_open_yield_ns)
			return NULL;
		ho_unlink(p);
		PX_CNT(px, HALF_OPEN_EVICTED)++;
		proxy_pair_abort(p, now);
		return px->free;
	}
	return NULL;
}

static void
pair_put(struct proxy_pair *p)
{
	struct mptcp_proxy *px = p->px;

	ho_unlink(p);
	p->in_use = 0;
	p->next_free = px->free;
	px->free = p;
	px->active--;
	PX_CNT(px, CLOSED)++;
}

static void
pair_maybe_put(struct proxy_pair *p)
{
	if (p->in_use && p->held_syn == NULL && p->sv.ep.ctx == NULL &&
	    p->cl.ep.ctx == NULL)
		pair_put(p);
}

/* Does the client's SYN ask for MPTCP, and do we answer it as MPTCP?
 * Either way the server leg's SYN carries no MPTCP option (kind 30 is
 * never carried, proxy_xopt_carried()): the server sees plain TCP. */
static void
syn_mptcp(struct mptcp_proxy *px, struct proxy_pair *p, const uint8_t *th,
	  unsigned l4len)
{
	unsigned hlen = (unsigned)(th[12] >> 4) * 4;
	struct mptcp_opts o;

	if (hlen <= 20 || hlen > l4len)
		return;
	if (mptcp_opts_parse(th + 20, hlen - 20, th[13], &o, &px->opt_err) == 0 &&
	    o.n_err == 0)
		return;
	if (o.n_err)
		PX_CNT(px, MPTCP_OPT_ERR)++;
	if (!(o.present & (1u << MPTCP_SUB_MP_CAPABLE)))
		return; /* version 0, no HMAC-SHA256: plain TCP (RFC 8684 3.1) */
	PX_CNT(px, MPTCP_SYN)++;
	if (!px->mptcp_on) {
		PX_CNT(px, MPTCP_FALLBACK_OFF)++;
		return;
	}
	if ((o.mpc.u.mpc.flags & MPTCP_MPC_FLAG_A) && px->mptcp_csum_off) {
		/* Checksums refused by configuration: answer as plain TCP,
		 * which the client accepts (RFC 8684 3.1, no MP_CAPABLE in
		 * the SYN-ACK). */
		PX_CNT(px, MPTCP_FALLBACK_CSUM)++;
		return;
	}
	p->mptcp = 1;
	p->mpc = o.mpc;
}

int
proxy_pair_intercept(struct mptcp_proxy *px, struct rte_mbuf *m,
		     uint16_t out_port, uint64_t now)
{
	const struct pkt_meta *meta = pkt_meta(m);
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	struct tcp_endpoints ep;
	struct proxy_pair *p = px->free;
	struct tcp_conn *c;
	uint32_t left;
	bool sig;

	if (p == NULL && px->half_open_yield_ns == 0) {
		PX_CNT(px, BRIDGED_FULL)++;
		return -1;
	}
	memset(&ep, 0, sizeof(ep));
	ep.mss = proxy_syn_scan(d + meta->l4_off, meta->l4_len, &sig);
	if (sig) {
		/* A signature covers the segment and a key the proxy does
		 * not hold: only the real ends can speak this connection. */
		PX_CNT(px, SIGNED_BRIDGED)++;
		return -1;
	}
	if (p == NULL && (p = evict_half_open(px, now)) == NULL) {
		PX_CNT(px, BRIDGED_FULL)++;
		return -1;
	}
	ep.family = meta->l3 == PKT_L3_IPV4 ? 4 : 6;
	memcpy(ep.laddr, meta->src, 16);
	memcpy(ep.raddr, meta->dst, 16);
	ep.lport = meta->sport;
	ep.rport = meta->dport;
	/* The client's frame as it was: same MACs and tags, other port. */
	memcpy(&ep.lmac, d + 6, 6);
	memcpy(&ep.rmac, d, 6);
	ep.port = out_port;
	ep.vlan_count = meta->vlan_count > 2 ? 2 : meta->vlan_count;
	for (unsigned t = 0; t < ep.vlan_count; t++) {
		ep.vlan_tpid[t] = (uint16_t)(d[12 + 4 * t] << 8 | d[13 + 4 * t]);
		ep.vlan_tci[t] = meta->vlan_tci[t];
	}
	/* TFO, experiments and unknown kinds ride on our SYN to the server
	 * (proxy_xopt_carried() says which); the server's answer rides back on
	 * our SYN-ACK to the client (proxy_pair_event()). */
	ep.xopt_len = (uint8_t)tcp_syn_xopts(m, ep.xopt, TCP_XOPT_MAX, &left,
					     proxy_xopt_carried);

	memset(&p->cl, 0, sizeof(p->cl));
	memset(&p->sv, 0, sizeof(p->sv));
	p->cl.obj = p->sv.obj = PX_OBJ_LEG;
	p->sv.server = 1;
	p->meta = NULL;
	p->mptcp = 0;
	syn_mptcp(px, p, d + meta->l4_off, meta->l4_len);
	if (p->mptcp && ep.mss >= 536 + MPTCP_DSS_DATA_LEN)
		/* Every data segment toward an MPTCP client gives
		 * MPTCP_DSS_DATA_LEN bytes of its MSS to the DSS: the server
		 * is asked for segments that much smaller, so that each of
		 * them leaves on a subflow as one segment, not as a full one
		 * and a tail of that many bytes (which doubled the segments built,
		 * sent and acknowledged toward the client). */
		ep.mss = (uint16_t)(ep.mss - MPTCP_DSS_DATA_LEN);
	c = tcp_connect(px->e, &ep, &p->sv, now);
	if (c == NULL) {
		if (rte_errno == EEXIST) {
			/* A retransmitted SYN while the server leg opens. */
			PX_CNT(px, SYN_DUPLICATE)++;
			rte_pktmbuf_free(m);
			return 0;
		}
		PX_CNT(px, BRIDGED_FAILED)++;
		return -1;
	}
	if (ep.xopt_len)
		PX_CNT(px, XOPT_CARRIED)++;
	if (left)
		PX_CNT(px, XOPT_DROPPED)++;
	px->free = p->next_free;
	p->in_use = 1;
	p->held_syn = m;
	p->born_ns = now;
	ho_append(px, p);
	proxy_leg_set_tcp(&p->sv, c);
	px->active++;
	PX_CNT(px, SYN_INTERCEPTED)++;
	return 0;
}

/* The server accepted: now answer the client as it, with what the
 * server's SYN-ACK carried for it, its MSS included. An MPTCP client is
 * answered by a meta-connection's first subflow, whose hooks put our
 * MP_CAPABLE on the SYN-ACK. */
static int
server_accepted(struct proxy_pair *p, struct tcp_conn *c, uint64_t now)
{
	struct mptcp_proxy *px = p->px;
	struct tcp_accept_opts ao;
	struct mptcp_meta *mt = NULL;
	struct mptcp_subflow *sf = NULL;
	struct tcp_conn *cc;
	void *arg = &p->cl;

	memset(&ao, 0, sizeof(ao));
	ao.mss = tcp_conn_peer_mss(c);
	ao.xopt_len = (uint8_t)tcp_conn_peer_xopts(c, ao.xopt);
	if (p->mptcp) {
		mt = mptcp_meta_new(px, p, now);
		if (mt != NULL && mptcp_meta_open(mt, &p->mpc, NULL, now) == 0)
			sf = mptcp_sf_new(mt, NULL);
		if (sf != NULL && px->mptcp_mss_room && ao.mss >= 536 + MPTCP_FALLBACK_MSS_ROOM) {
			/* Room for the DSS of the client's infinite mapping,
			 * which Linux puts on a segment sized for none
			 * (mptcp_fallback_mss_room). */
			ao.mss = (uint16_t)(ao.mss - MPTCP_FALLBACK_MSS_ROOM);
			mt->flags |= MT_MSS_ROOM;
		}
		if (sf != NULL) {
			sf->flags |= SF_MPC;
			ao.hooks = &mptcp_subflow_hooks;
			ao.hook_owner = sf;
			arg = sf;
		} else {
			/* Out of MPTCP state: the client gets plain TCP. */
			PX_CNT(px, MPTCP_TABLE_FULL)++;
			if (mt != NULL) {
				mt->pair = NULL;
				mptcp_meta_abort(mt, now);
			}
			mt = NULL;
		}
	}
	cc = tcp_accept_opts(px->e, p->held_syn, &ao, arg, now);
	if (cc == NULL) {
		PX_CNT(px, ACCEPT_FAILED)++;
		if (mt != NULL) {
			mt->pair = NULL;
			sf->flags |= SF_CLOSED;
			mptcp_meta_sf_gone(mt, sf, now);
		}
		rte_pktmbuf_free(p->held_syn);
		p->held_syn = NULL;
		tcp_abort(c, now); /* its CLOSED releases the pair */
		return -1;
	}
	p->held_syn = NULL;
	if (mt != NULL) {
		mptcp_sf_attach(sf, cc);
		p->meta = mt;
		p->cl.ep.ops = &mptcp_meta_endpoint;
		p->cl.ep.ctx = mt;
	} else {
		proxy_leg_set_tcp(&p->cl, cc);
	}
	PX_CNT(px, OPENED)++;
	return 0;
}

/* What the two kinds of leg share: data, FIN, reset, close. */
void
proxy_leg_event(struct proxy_leg *l, uint32_t ev, uint64_t now)
{
	struct proxy_pair *p = proxy_leg_pair(l);
	struct mptcp_proxy *px = p->px;
	struct proxy_leg *o;

	if (ev & TCP_EV_PEER_FIN)
		l->peer_fin = 1;
	if (ev & (TCP_EV_READABLE | TCP_EV_PEER_FIN))
		proxy_relay(l, now);
	if (ev & TCP_EV_WRITABLE)
		proxy_relay(proxy_other(l), now);
	if (ev & (TCP_EV_RESET | TCP_EV_TIMEOUT)) {
		if (ev & TCP_EV_RESET)
			PX_CNT(px, RESET)++;
		o = proxy_other(l);
		if (o->ep.ctx != NULL)
			o->ep.ops->abort(o->ep.ctx, now);
	}
	if (ev & TCP_EV_CLOSED) {
		/* A leg that ended in order is told CLOSED once its last
		 * bytes were read: its FIN, if still held, goes on now. */
		o = proxy_other(l);
		if (l->peer_fin && !l->in_relay && !(ev & (TCP_EV_RESET | TCP_EV_TIMEOUT)) &&
		    o->ep.ctx != NULL) {
			l->peer_fin = 0;
			o->ep.ops->shutdown(o->ep.ctx, now);
		}
		l->ep.ctx = NULL;
		if (!l->server && p->meta != NULL) {
			p->meta->pair = NULL;
			p->meta = NULL;
		}
		pair_maybe_put(p);
	}
}

void
proxy_pair_event(struct tcp_conn *c, void *arg, uint32_t ev, uint64_t now)
{
	struct proxy_leg *l = arg;
	struct proxy_pair *p = proxy_leg_pair(l);
	struct mptcp_proxy *px = p->px;

	if (ev & TCP_EV_CONNECTED) {
		proxy_leg_set_tcp(l, c);
		if (l->server && p->held_syn != NULL) {
			if (server_accepted(p, c, now) < 0)
				return;
		} else if (!l->server) {
			proxy_relay(&p->sv, now); /* what the server already said */
		}
	}
	if ((ev & TCP_EV_REFUSED) && l->server && p->held_syn != NULL) {
		PX_CNT(px, REFUSED)++;
		(void)tcp_reply_rst(px->e, p->held_syn, now);
		rte_pktmbuf_free(p->held_syn);
		p->held_syn = NULL;
	}
	if ((ev & TCP_EV_TIMEOUT) && l->server && p->held_syn != NULL) {
		/* Unreachable: the client's own SYN retries time out too. */
		PX_CNT(px, UNREACHABLE)++;
		rte_pktmbuf_free(p->held_syn);
		p->held_syn = NULL;
	}
	proxy_leg_event(l, ev, now);
}

void
proxy_pair_abort(struct proxy_pair *p, uint64_t now)
{
	rte_pktmbuf_free(p->held_syn);
	p->held_syn = NULL;
	if (p->sv.ep.ctx != NULL)
		p->sv.ep.ops->abort(p->sv.ep.ctx, now);
	if (p->in_use && p->cl.ep.ctx != NULL)
		p->cl.ep.ops->abort(p->cl.ep.ctx, now);
	pair_maybe_put(p);
}
