/* SPDX-License-Identifier: BSD-3-Clause */
/* SEGMENT ARRIVES (RFC 9293 3.10.7) with the RFC 5961 protections, RFC
 * 7323 PAWS, RFC 6298 RTT sampling, out-of-order reassembly reported by
 * SACK (RFC 2018), and fast retransmit (RFC 5681, RFC 6582, RFC 6675). */

#include <string.h>

#include "tcp_impl.h"
#include "tcpopt.h"

#define MIN2(a, b) ((a) < (b) ? (a) : (b))
#define MAX2(a, b) ((a) > (b) ? (a) : (b))

void
tcp_apply_syn_opts(struct tcp_conn *c, const struct tcp_seg_in *s)
{
	const struct tcp_engine_params *p = &c->eng->p;
	uint16_t mss = (s->opts & TCP_SO_MSS) ? s->mss : 536;
	uint16_t hdr_room;

	/* Window scaling only if both sides sent the option (RFC 7323 2.2). */
	if ((s->opts & TCP_SO_WS) && c->rcv_wscale != 0xff) {
		c->snd_wscale = s->ws;
	} else {
		c->snd_wscale = 0xff;
		c->rcv_wscale = 0xff;
	}
	if ((s->opts & TCP_SO_SACK_PERM) && !(p->flags & TCP_F_NO_SACK))
		c->flags |= TCP_CF_SACK;
	if ((s->opts & TCP_SO_TS) && !(p->flags & TCP_F_NO_TS)) {
		c->flags |= TCP_CF_TS;
		c->ts_recent = s->tsval;
	}
	/* Our own MTU (the engine's MSS) bounds what we send too; an MSS
	 * announced per connection (tcp_endpoints.mss) does not. */
	if (mss > (c->ep.family == 4 ? p->mss : p->mss - 20))
		mss = (uint16_t)(c->ep.family == 4 ? p->mss : p->mss - 20);
	/* RFC 9293 3.7.1: the MSS excludes options; leave room for TS. */
	hdr_room = (c->flags & TCP_CF_TS) ? 12 : 0;
	if (mss < 64 + hdr_room)
		mss = (uint16_t)(64 + hdr_room);
	c->mss = (uint16_t)(mss - hdr_room);
	c->eng->cc->init(&c->cc, c->mss,
			 /* RFC 6928 initial window: min(10*MSS, max(2*MSS, 14600)) */
			 MIN2(10u * c->mss, MAX2(2u * c->mss, 14600u)));
}

static inline uint32_t
wscale(const struct tcp_conn *c)
{
	return c->snd_wscale == 0xff ? 0 : c->snd_wscale;
}

/* ---- receive side */

/* Append q2 to q: merging a small segment into the last mbuf, unless
 * the owner keeps segment boundaries (tcp_conn_keep_segments()). */
static inline void
rcv_concat(const struct tcp_conn *c, struct tcp_mq *q, struct tcp_mq *q2)
{
	if (c->flags & TCP_CF_KEEP_SEGS)
		tcp_mq_concat_raw(q, q2);
	else
		tcp_mq_concat(q, q2, c->eng->psum.flag);
}

static void
ooo_free_all(struct tcp_conn *c)
{
	for (unsigned int i = 0; i < c->ooo_n; i++)
		tcp_mq_free(&c->ooo[i].q);
	c->ooo_n = 0;
}

/* Remember a duplicate to report as a D-SACK block (RFC 2883). */
static void
dsack_note(struct tcp_conn *c, uint32_t left, uint32_t right)
{
	if (!(c->flags & TCP_CF_SACK) || !tcp_seq_lt(left, right))
		return;
	c->dsack_left = left;
	c->dsack_right = right;
	c->flags |= TCP_CF_DSACK;
}

/* Store [seq, seq+len) (chain..tail) out of order, trimming overlaps
 * with what is stored and merging adjacent ranges. */
static void
ooo_insert(struct tcp_conn *c, uint32_t seq, struct rte_mbuf *chain,
	   struct rte_mbuf *tail, uint32_t len)
{
	uint32_t end = seq + len;
	struct tcp_mq nq;
	unsigned int i;

	for (i = 0; i < c->ooo_n; i++) {
		uint32_t rs = c->ooo[i].seq, re = rs + c->ooo[i].q.bytes;

		if (tcp_seq_le(end, rs))
			break;
		if (tcp_seq_ge(seq, re))
			continue;
		if (tcp_seq_lt(seq, rs)) {
			/* Keep the part before this range; the rest is
			 * either stored already or comes again. */
			chain = tcp_chain_slice(chain, 0, rs - seq, &tail);
			end = rs;
			break;
		}
		if (tcp_seq_le(end, re)) {
			struct tcp_mq dup = { 0 };

			tcp_mq_append(&dup, chain);
			/* Held already: report the duplicate, and the block
			 * holding it as the next block (RFC 2883 4). */
			dsack_note(c, seq, end);
			c->ooo_recent = rs;
			tcp_mq_free(&dup);
			return;
		}
		chain = tcp_chain_slice(chain, re - seq, end - re, &tail);
		seq = re;
	}
	RTE_SET_USED(tail);
	memset(&nq, 0, sizeof(nq));
	tcp_mq_append(&nq, chain);
	/* i: first range after the new one */
	for (i = 0; i < c->ooo_n && tcp_seq_lt(c->ooo[i].seq, seq); i++)
		;
	if (i > 0 && c->ooo[i - 1].seq + c->ooo[i - 1].q.bytes == seq) {
		struct tcp_ooo *prev = &c->ooo[i - 1];

		rcv_concat(c, &prev->q, &nq);
		if (i < c->ooo_n && prev->seq + prev->q.bytes == c->ooo[i].seq) {
			rcv_concat(c, &prev->q, &c->ooo[i].q);
			memmove(&c->ooo[i], &c->ooo[i + 1],
				(c->ooo_n - i - 1) * sizeof(c->ooo[0]));
			c->ooo_n--;
		}
		c->ooo_recent = prev->seq;
		return;
	}
	if (i < c->ooo_n && end == c->ooo[i].seq) {
		rcv_concat(c, &nq, &c->ooo[i].q);
		c->ooo[i].q = nq;
		c->ooo[i].seq = seq;
		c->ooo_recent = seq;
		return;
	}
	if (c->ooo_n == TCP_OOO_MAX) {
		TCP_CNT(c->eng, OOO_DROPPED);
		tcp_mq_free(&nq);
		return;
	}
	memmove(&c->ooo[i + 1], &c->ooo[i], (c->ooo_n - i) * sizeof(c->ooo[0]));
	c->ooo[i].seq = seq;
	c->ooo[i].q = nq;
	c->ooo_n++;
	c->ooo_recent = seq;
}

/* Move ranges that became in order into the receive queue. */
static int
ooo_drain(struct tcp_conn *c)
{
	int moved = 0;

	while (c->ooo_n > 0 && tcp_seq_le(c->ooo[0].seq, c->rcv_nxt)) {
		struct tcp_ooo *r = &c->ooo[0];
		uint32_t re = r->seq + r->q.bytes;

		if (tcp_seq_gt(re, c->rcv_nxt)) {
			tcp_mq_drop_front(&r->q, c->rcv_nxt - r->seq, c->eng);
			rcv_concat(c, &c->rcvq, &r->q);
			c->rcv_nxt = re;
			moved = 1;
		} else {
			tcp_mq_free(&r->q);
		}
		memmove(&c->ooo[0], &c->ooo[1], (c->ooo_n - 1) * sizeof(c->ooo[0]));
		c->ooo_n--;
	}
	return moved;
}

/* Mbuf memory the receive side holds (tcp_mq.mem). */
static uint32_t
rcv_mem(const struct tcp_conn *c)
{
	uint32_t mem = c->rcvq.mem;

	for (unsigned int i = 0; i < c->ooo_n; i++)
		mem += c->ooo[i].q.mem;
	return mem;
}

/*
 * The byte limit lets a peer hold rcv_buf bytes, but in tiny segments
 * (one byte each, in descending order behind a hole) those would pin an
 * mbuf per byte, and the pool is shared with NIC rx. So the mbuf memory
 * is bounded too (rcv_mem); a segment that would need more than is left
 * first gets the queues collapsed (copied into full mbufs), as Linux
 * does; if the pool cannot give mbufs for that, out-of-order ranges
 * beyond the segment are given up, highest first (RFC 2018 8 allows the
 * receiver to renege on SACKed data). Returns whether need more fits.
 * Only under pressure: normal segments keep their mbufs and boundaries.
 */
static int
rcv_mem_room(struct tcp_conn *c, uint32_t seq, uint32_t need)
{
	struct tcp_engine *e = c->eng;
	uint32_t lim = e->p.rcv_mem;

	if (rcv_mem(c) + need <= lim)
		return 1;
	/* Collapsing merges segments: an owner that keeps their
	 * boundaries (subflow mappings) gets pruning and drops instead,
	 * both counted, and the sender resends. */
	if (!(c->flags & TCP_CF_KEEP_SEGS)) {
		TCP_CNT(e, RCV_COLLAPSE);
		if (tcp_mq_collapse(&c->rcvq, e->p.pool) != 0)
			TCP_CNT(e, MBUF_ALLOC_FAIL);
		for (unsigned int i = 0; i < c->ooo_n; i++)
			if (tcp_mq_collapse(&c->ooo[i].q, e->p.pool) != 0)
				TCP_CNT(e, MBUF_ALLOC_FAIL);
	}
	while (rcv_mem(c) + need > lim && c->ooo_n > 0 &&
	       tcp_seq_gt(c->ooo[c->ooo_n - 1].seq, seq)) {
		c->ooo_n--;
		tcp_mq_free(&c->ooo[c->ooo_n].q);
		TCP_CNT(e, OOO_PRUNED);
	}
	return rcv_mem(c) + need <= lim;
}

/* Inside an input burst, the ACK the every-second-segment rule owes
 * waits for tcp_input_burst_end(). The rule counts again from here, as
 * if that ACK had left: each time it fires again before the burst ends,
 * one ACK is saved. false: the burst's list is full, ACK at once. */
static bool
burst_defer_ack(struct tcp_conn *c)
{
	struct tcp_engine *e = c->eng;

	if (c->flags & TCP_CF_ACK_BURST) {
		TCP_CNT(e, ACK_COALESCED);
	} else {
		if (!tcp_burst_list(c))
			return false;
		c->flags |= TCP_CF_ACK_BURST;
	}
	c->rcv_unacked = 0;
	/* A caller that never ends the burst still gets its ACK. */
	if (c->delack_at == 0)
		c->delack_at = e->now + e->p.delack_ns;
	return true;
}

/* Out-of-order data, or data that fills a hole, is ACKed at once (RFC
 * 5681 4.2). Within a burst, a connection that negotiated SACK and holds
 * at most one out-of-order range sends that ACK at the burst's end
 * instead, with its SACK block as it is then: segments that the path
 * reordered within one burst (veth queues a frame on the backlog of the
 * CPU that sent it) then show the sender no hole at all, where one
 * duplicate ACK each made it retransmit them spuriously. A loss still
 * shows: the ACK at the end of the burst SACKs what arrived after it.
 * Without SACK the sender counts duplicate ACKs, with two ranges or
 * more one ACK could not report them all, and a duplicate gets its own
 * D-SACK (RFC 2883): those ACK at once. */
static void
ooo_ack(struct tcp_conn *c)
{
	if (c->eng->in_burst && (c->flags & (TCP_CF_SACK | TCP_CF_DSACK)) == TCP_CF_SACK &&
	    c->ooo_n <= 1 && burst_defer_ack(c)) {
		TCP_CNT(c->eng, OOO_ACK_HELD);
		return;
	}
	c->flags |= TCP_CF_ACK_NOW;
}

void
tcp_input_burst_begin(struct tcp_engine *e)
{
	e->in_burst = 1;
}

void
tcp_dead_flush(struct tcp_engine *e)
{
	if (e->n_dead != 0)
		rte_mempool_put_bulk(e->dead[0]->pool, (void **)e->dead, e->n_dead);
	e->n_dead = 0;
}

void
tcp_input_burst_end(struct tcp_engine *e, uint64_t now_ns)
{
	if (e->n_ack_owed == 0) {
		e->in_burst = 0;
		tcp_dead_flush(e);
		return;
	}
	e->now = now_ns;
	/* The burst stays open while the list is worked through: what the
	 * events delivered here send (the relay's tcp_send_mbuf() to the
	 * other leg) joins the list and leaves in one tcp_output() too. */
	for (uint16_t i = 0; i < e->n_ack_owed; i++) {
		struct tcp_conn *c = e->ack_owed[i];

		/* Gone: the connection was released (and its entry may be
		 * another connection now), or it is listed again further on. */
		if (!(c->flags & TCP_CF_BURST_LISTED))
			continue;
		c->flags &= ~(TCP_CF_BURST_LISTED | TCP_CF_BURST_DEFER);
		/* Events first: the owner reads what the burst brought, so
		 * the ACK announces the window as it is after that. */
		tcp_conn_deliver(c);
		if (c->flags & TCP_CF_FREE)
			continue;
		/* An ACK or data since may have settled the one owed. */
		if (c->flags & TCP_CF_ACK_BURST)
			c->flags = (c->flags & ~TCP_CF_ACK_BURST) | TCP_CF_ACK_NOW;
		if (c->state != TCP_CLOSED)
			tcp_output(c);
		tcp_timer_update(c);
		tcp_conn_deliver(c);
	}
	e->n_ack_owed = 0;
	e->in_burst = 0;
	tcp_dead_flush(e);
}

/* Step 7 of 3.10.7.4: segment text. Takes the mbuf. */
static void
rcv_data(struct tcp_conn *c, struct rte_mbuf *m, const struct tcp_seg_in *s)
{
	struct tcp_engine *e = c->eng;
	uint32_t seq = s->seq, len = s->len, skip = 0, stored;
	struct rte_mbuf *chain, *tail;

	if (tcp_seq_lt(seq, c->rcv_nxt)) {
		skip = c->rcv_nxt - seq;
		dsack_note(c, s->seq, c->rcv_nxt);
		seq = c->rcv_nxt;
		len -= skip;
	}
	if (tcp_seq_gt(seq + len, c->rcv_adv))
		len = tcp_seq_gt(c->rcv_adv, seq) ? c->rcv_adv - seq : 0;
	stored = c->rcvq.bytes;
	for (unsigned int i = 0; i < c->ooo_n; i++)
		stored += c->ooo[i].q.bytes;
	if (stored + len > e->p.rcv_buf) {
		TCP_CNT(e, RCV_OVERFLOW);
		len = stored >= e->p.rcv_buf ? 0 : e->p.rcv_buf - stored;
	}
	if (len == 0) {
		rte_pktmbuf_free(m);
		c->flags |= TCP_CF_ACK_NOW;
		return;
	}
	c->rcv_pinned = 0; /* in use again: its window may grow */
	c->rcv_data_at = (uint32_t)(e->now >> 20);
	chain = tcp_chain_slice(m, s->payload_off + skip, len, &tail);
	{
		uint32_t need = 0;

		for (struct rte_mbuf *t = chain; t != NULL; t = t->next)
			need += t->buf_len;
		if (!rcv_mem_room(c, seq, need)) {
			struct tcp_mq q = { 0 };

			TCP_CNT(e, RCV_MEM_DROPPED);
			tcp_mq_append(&q, chain);
			tcp_mq_free(&q);
			c->flags |= TCP_CF_ACK_NOW;
			return;
		}
	}
	if (seq != c->rcv_nxt) {
		/* Out of order: keep it and ACK at once (or at the burst's
		 * end, ooo_ack()), so the sender sees a duplicate ACK with
		 * SACK blocks (RFC 5681 4.2). */
		ooo_insert(c, seq, chain, tail, len);
		ooo_ack(c);
		return;
	}
	{
		struct tcp_mq q = { 0 };

		tcp_mq_append(&q, chain);
		rcv_concat(c, &c->rcvq, &q);
	}
	c->rcv_nxt += len;
	tcp_conn_event(c, TCP_EV_READABLE);
	if (c->ooo_n > 0) {
		ooo_drain(c);
		ooo_ack(c); /* a hole was filled (4.2) */
		return;
	}
	/* Delayed ACK (RFC 9293 3.8.6.3, RFC 1122 4.2.3.2): at once when
	 * more than one full-sized segment is unacknowledged (so at least
	 * every second full one, and a full one plus a short tail, as Linux
	 * does), else within delack_ns. */
	c->rcv_unacked += len;
	if (c->rcv_unacked > (uint32_t)(c->rcv_mss - ((c->flags & TCP_CF_TS) ? 12 : 0))) {
		if (!e->in_burst || !burst_defer_ack(c))
			c->flags |= TCP_CF_ACK_NOW;
	} else if (c->delack_at == 0) {
		c->delack_at = e->now + e->p.delack_ns;
	}
}

/* An RTT measured from the timestamp the segment echoes (1 ms clock). */
static inline uint64_t
ts_rtt_ns(const struct tcp_conn *c, const struct tcp_seg_in *s)
{
	return (uint64_t)(uint32_t)(tcp_ts_now(c) - s->tsecr) * 1000000;
}

/* The RTT sample of a completed handshake: the echoed timestamp, else
 * the SYN's own timing unless it was resent (Karn); with neither, the
 * RTO stays at the 3 s RFC 6298 5.7 asks for after a resent SYN. */
static void
handshake_rtt(struct tcp_conn *c, const struct tcp_seg_in *s)
{
	if ((c->flags & TCP_CF_TS) && s->tsecr != 0)
		tcp_rtt_sample(c, ts_rtt_ns(c, s));
	else if (!(c->flags & TCP_CF_SYN_RTX))
		tcp_rtt_sample(c, c->eng->now - c->rtt_ts);
	else if (c->srtt_ns == 0)
		c->rto_ns = 3000000000ull; /* RFC 6298 5.7 */
}

static void
enter_time_wait(struct tcp_conn *c)
{
	c->state = TCP_TIME_WAIT;
	c->delack_at = 0;
	tcp_cc_group_leave(c);
	c->rtx_at = c->eng->now + c->eng->p.time_wait_ns;
	tcp_time_wait_list(c);
	tcp_conn_event(c, TCP_EV_CLOSED);
}

/* FIN in order (3.10.7.4 step 8). */
static void
rcv_fin(struct tcp_conn *c)
{
	c->rcv_nxt++;
	c->flags |= TCP_CF_PEER_FIN | TCP_CF_ACK_NOW;
	c->flags &= ~TCP_CF_OOO_FIN;
	tcp_conn_event(c, TCP_EV_PEER_FIN | TCP_EV_READABLE);
	switch (c->state) {
	case TCP_SYN_RECEIVED:
	case TCP_ESTABLISHED:
		c->state = TCP_CLOSE_WAIT;
		break;
	case TCP_FIN_WAIT_1:
		if ((c->flags & TCP_CF_FIN_SENT) && c->snd_una == c->fin_seq + 1)
			enter_time_wait(c);
		else
			c->state = TCP_CLOSING;
		break;
	case TCP_FIN_WAIT_2:
		enter_time_wait(c);
		break;
	default:
		break;
	}
}

/* The ACK owed to a segment we discard. Two engines that disagree
 * (after a blind injection, say) would answer each other's ACKs forever,
 * and a spoofer would get an ACK for every segment it sends, so every
 * such ACK, whether the segment carried data, a FIN or nothing, is
 * limited to one per oow_ack_ns (RFC 5961 10). A sender retransmitting
 * needlessly learns all it needs from the first one: its cumulative ACK
 * (and D-SACK) moves SND.UNA past what it would resend. */
static void
oow_ack(struct tcp_conn *c)
{
	struct tcp_engine *e = c->eng;

	if (c->last_oow_ack_ns != 0 && e->now - c->last_oow_ack_ns < e->p.oow_ack_ns) {
		TCP_CNT(e, OOW_ACK_LIMITED);
		return;
	}
	c->last_oow_ack_ns = e->now;
	tcp_send_ack(c);
}

static void
challenge_ack(struct tcp_conn *c)
{
	/* RFC 5961 3.2 / 4.2: <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK>. */
	TCP_CNT(c->eng, CHALLENGE_ACK);
	oow_ack(c);
}

/* Where the options of the hooks' kind are, for an area the engine's walk
 * could not tell: several options of kinds it does not read, or a kind
 * (2 to 8) it reads itself. tcp_seg_parse() walked it without error. */
static __rte_noinline void
hook_opt_walk(struct tcp_hook_seg *hs, uint8_t kind, const uint8_t *th, uint32_t hlen)
{
	struct tcpopt_parsed po;

	if (tcpopt_parse(th, hlen, &po) != TCPOPT_MAL_NONE)
		return;
	for (unsigned int i = 0; i < po.n; i++) {
		if (po.opt[i].kind != kind)
			continue;
		if (hs->opt_n++ == 0)
			hs->opt_at = (int8_t)(po.opt[i].off - 20u);
	}
}

/* The owner's look at a segment's options (tcp_conn_hooks.opts_in). Out
 * of line, as every hook path: plain connections only test c->hooks. */
static __rte_noinline void
hook_opts_in(struct tcp_conn *c, const struct rte_mbuf *m, const struct tcp_seg_in *s)
{
	const struct pkt_meta *meta = pkt_meta((struct rte_mbuf *)(uintptr_t)m);
	/* tcp_seg_parse() checked the header is whole in the first mbuf. */
	const uint8_t *th = rte_pktmbuf_mtod_offset(m, const uint8_t *, meta->l4_off);
	struct tcp_hook_seg hs = {
		.seq = s->seq, .ack = (s->flags & TCP_FL_ACK) ? s->ack : 0,
		.len = s->len, .flags = s->flags,
		/* A SYN's window is never scaled (RFC 7323 2.2). */
		.wnd = (uint32_t)s->wnd << ((s->flags & TCP_FL_SYN) ? 0 : wscale(c)),
		.opt_at = -1,
	};
	uint8_t kind = c->hooks->opt_kind;

	/* tcp_seg_parse() noted the first option of a kind it does not read
	 * (none of them is below 9) and how many there were; with none,
	 * xo_kind is 0. */
	if (likely(s->xo_n <= 1 && kind > TCPOPT_KIND_TS)) {
		if (s->xo_kind == kind) {
			hs.opt_at = (int8_t)(s->xo_off - 20u);
			hs.opt_n = 1;
		}
	} else if (kind != TCPOPT_KIND_EOL) {
		hook_opt_walk(&hs, kind, th, meta->l4_len);
	}
	c->hooks->opts_in(c->hook_owner, c, &hs, th + 20, (uint32_t)meta->l4_len - 20u,
			  c->eng->now);
}

static void
syn_sent_input(struct tcp_conn *c, const struct rte_mbuf *m, const struct tcp_seg_in *s)
{
	struct tcp_engine *e = c->eng;
	int ack = s->flags & TCP_FL_ACK;

	if (ack && (tcp_seq_le(s->ack, c->iss) || tcp_seq_gt(s->ack, c->snd_max))) {
		if (!(s->flags & TCP_FL_RST))
			tcp_send_rst_for(e, &c->ep, s->ack, 0, TCP_FL_RST);
		TCP_CNT(e, ACK_TOO_NEW);
		return;
	}
	if (s->flags & TCP_FL_RST) {
		/* Only an RST that acknowledges our SYN (RFC 5961 3.2). */
		if (ack) {
			TCP_CNT(e, RST_IN);
			tcp_conn_event(c, TCP_EV_REFUSED);
			tcp_conn_close(c);
		} else {
			TCP_CNT(e, RST_IGNORED);
		}
		return;
	}
	if (!(s->flags & TCP_FL_SYN))
		return;
	if (unlikely(c->hooks != NULL) && c->hooks->opts_in != NULL)
		hook_opts_in(c, m, s);
	c->irs = s->seq;
	c->rcv_nxt = s->seq + 1;
	c->rcv_adv = c->rcv_nxt;
	tcp_apply_syn_opts(c, s);
	if (ack) {
		c->snd_una = s->ack;
		c->snd_wnd = (uint32_t)s->wnd << wscale(c);
		c->max_snd_wnd = c->snd_wnd;
		c->snd_wl1 = s->seq;
		c->snd_wl2 = s->ack;
		c->state = TCP_ESTABLISHED;
		handshake_rtt(c, s);
		c->flags &= ~TCP_CF_RTT_TIMING;
		c->backoff = 0;
		c->retries = 0;
		c->rtx_at = 0;
		tcp_conn_event(c, TCP_EV_CONNECTED);
		tcp_keepalive_touch(c);
		if (c->flags & TCP_CF_FIN_QUEUED)
			c->state = TCP_FIN_WAIT_1;
		c->flags |= TCP_CF_ACK_NOW;
		tcp_output(c);
		return;
	}
	/* Simultaneous open (RFC 9293 figure 7). */
	c->state = TCP_SYN_RECEIVED;
	c->snd_wnd = s->wnd;
	c->snd_wl1 = s->seq;
	c->snd_wl2 = s->ack;
	tcp_send_syn(c);
}

static int
seq_acceptable(const struct tcp_conn *c, const struct tcp_seg_in *s, uint32_t seglen)
{
	uint32_t rw = tcp_rcv_announced(c);
	uint32_t seq = s->seq;

	/* The four cases of RFC 9293 3.10.7.4. */
	if (seglen == 0) {
		if (rw == 0)
			return seq == c->rcv_nxt;
		return tcp_seq_ge(seq, c->rcv_nxt) && tcp_seq_lt(seq, c->rcv_nxt + rw);
	}
	if (rw == 0)
		return 0;
	return (tcp_seq_ge(seq, c->rcv_nxt) && tcp_seq_lt(seq, c->rcv_nxt + rw)) ||
	       (tcp_seq_ge(seq + seglen - 1, c->rcv_nxt) &&
		tcp_seq_lt(seq + seglen - 1, c->rcv_nxt + rw));
}

/*
 * A peer that sent its FIN and then aborts resets with the FIN's own
 * sequence number, RCV.NXT - 1, not RCV.NXT: Linux does so when data
 * reaches a socket its application closed after the FIN went out (an
 * iperf3 server at the end of a test; every later segment draws another
 * such RST). RFC 5961 3.2 accepts only RCV.NXT, so a proxy leg kept
 * relaying into the closed socket, drew an RST for each segment and
 * ignored them all. Accepted, as Linux accepts it, only where that FIN
 * was taken and nothing more can come after it (CLOSE-WAIT, LAST-ACK,
 * CLOSING; TIME-WAIT keeps ignoring RSTs, RFC 1337): a blind attacker
 * gains one more sequence number to guess, and only on a connection
 * whose peer is already closing.
 */
static inline bool
rst_after_fin(const struct tcp_conn *c, const struct tcp_seg_in *s)
{
	return (c->flags & TCP_CF_PEER_FIN) && s->seq == c->rcv_nxt - 1 &&
	       (c->state == TCP_CLOSE_WAIT || c->state == TCP_LAST_ACK ||
		c->state == TCP_CLOSING);
}

static void
reset_by_peer(struct tcp_conn *c)
{
	TCP_CNT(c->eng, RST_IN);
	c->reset_end = 1;
	switch (c->state) {
	case TCP_SYN_RECEIVED:
		tcp_conn_event(c, (c->flags & TCP_CF_PASSIVE) ? TCP_EV_RESET : TCP_EV_REFUSED);
		break;
	case TCP_ESTABLISHED:
	case TCP_FIN_WAIT_1:
	case TCP_FIN_WAIT_2:
	case TCP_CLOSE_WAIT:
		tcp_conn_event(c, TCP_EV_RESET);
		break;
	default:
		break;
	}
	ooo_free_all(c);
	tcp_conn_close(c);
}

static void
enter_recovery(struct tcp_conn *c)
{
	struct tcp_engine *e = c->eng;

	TCP_CNT(e, FAST_RETRANSMIT);
	c->flags |= TCP_CF_IN_RECOVERY;
	c->flags &= ~(TCP_CF_RTT_TIMING | TCP_CF_TLP_OUT);
	c->recover = c->snd_max;
	/* PRR (RFC 6937 3): RecoverFS = SND.NXT - SND.UNA. */
	c->recover_fs = c->snd_max - c->snd_una;
	c->prr_delivered = 0;
	c->prr_out = 0;
	e->cc->on_congestion(&c->cc, tcp_flight(c), e->now);
}

/* PRR (RFC 6937 3, with the SSRB bound): how much this ACK lets out,
 * expressed as cwnd = pipe + sndcnt. */
static void
prr_update(struct tcp_conn *c, uint32_t delivered)
{
	uint32_t pipe = tcp_rq_pipe(c), ss = c->cc.ssthresh;
	int64_t sndcnt;

	c->prr_delivered += delivered;
	if (pipe > ss) {
		uint64_t fs = c->recover_fs ? c->recover_fs : 1;

		sndcnt = (int64_t)(((uint64_t)c->prr_delivered * ss + fs - 1) / fs) -
			 (int64_t)c->prr_out;
	} else {
		int64_t limit = (int64_t)c->prr_delivered - (int64_t)c->prr_out;

		if (limit < (int64_t)delivered)
			limit = delivered;
		limit += c->mss;
		sndcnt = (int64_t)(ss - pipe);
		if (sndcnt > limit)
			sndcnt = limit;
	}
	if (sndcnt < 0)
		sndcnt = 0;
	/* The first retransmission of the episode always goes out. */
	if (c->prr_out == 0 && sndcnt < c->mss)
		sndcnt = c->mss;
	c->cc.cwnd = pipe + (uint32_t)sndcnt;
}

/* After RACK (on an ACK or its timer) marked segments lost, or while in
 * recovery: enter recovery once per window, then pace by PRR. */
void
tcp_recovery_on_loss(struct tcp_conn *c, uint32_t delivered)
{
	if (!(c->flags & TCP_CF_IN_RECOVERY))
		enter_recovery(c);
	prr_update(c, delivered);
}

/* Coupled congestion avoidance (tcp_cc_group). */
static __rte_noinline void
coupled_increase(struct tcp_conn *c, uint32_t acked)
{
	c->ccg_frac += c->ccg->increase(c->ccg, c, acked);
	c->cc.cwnd += (uint32_t)(c->ccg_frac >> 16);
	c->ccg_frac &= 0xffff;
}

/* The window opened: let a scheduler fill it (tcp_conn_hooks). Events
 * its tcp_send() raises wait for the entry point's own delivery, as in
 * the event callback. */
static __rte_noinline void
hook_writable(struct tcp_conn *c)
{
	uint32_t room = tcp_conn_send_room(c);
	uint32_t in_cb = c->flags & TCP_CF_IN_CB;

	if (room == 0)
		return;
	c->flags |= TCP_CF_IN_CB;
	c->hooks->writable(c->hook_owner, c, room, c->eng->now);
	c->flags = (c->flags & ~TCP_CF_IN_CB) | in_cb;
}

/* An ACK that advances SND.UNA. */
static void
new_ack(struct tcp_conn *c, const struct tcp_seg_in *s)
{
	struct tcp_engine *e = c->eng;
	uint32_t acked = s->ack - c->snd_una;
	uint32_t data_acked = acked;

	if ((c->flags & TCP_CF_FIN_SENT) && tcp_seq_gt(s->ack, c->fin_seq))
		data_acked--;
	{
		uint32_t n = MIN2(data_acked, c->sndq.bytes);

		/* The cursor's mbuf stays only if it starts at or after the
		 * first byte kept (those before are freed or trimmed). */
		if (c->snd_cur != NULL && c->snd_cur_off >= n)
			c->snd_cur_off -= n;
		else
			c->snd_cur = NULL;
		tcp_mq_drop_front(&c->sndq, n, c->eng);
	}
	c->snd_una = s->ack;
	if (tcp_seq_lt(c->snd_nxt, c->snd_una))
		c->snd_nxt = c->snd_una;
	tcp_rq_ack(c, s);

	/* RTT: timestamps on every ACK of new data (RFC 7323 4.1), else one
	 * timed segment per RTT, never a retransmitted one (Karn). */
	if ((c->flags & TCP_CF_TS) && (s->opts & TCP_SO_TS) && s->tsecr != 0) {
		tcp_rtt_sample(c, ts_rtt_ns(c, s));
	} else if ((c->flags & TCP_CF_RTT_TIMING) && tcp_seq_ge(s->ack, c->rtt_seq)) {
		c->flags &= ~TCP_CF_RTT_TIMING;
		tcp_rtt_sample(c, e->now - c->rtt_ts);
	}
	if (c->flags & TCP_CF_EIFEL) {
		c->flags &= ~TCP_CF_EIFEL;
		if ((s->opts & TCP_SO_TS) && (int32_t)(s->tsecr - c->eifel_tsval) < 0) {
			/* The original was delivered: the RTO came from a delay
			 * spike, not a loss (mobile links do that). Undo the
			 * cut and the go-back (RFC 4015 3.2); the RTT sample
			 * just taken already widened the RTO. */
			TCP_CNT(e, SPURIOUS_RTO);
			c->cc.cwnd = c->prior_cwnd;
			c->cc.ssthresh = c->prior_ssthresh;
			c->recover = c->snd_una;
			tcp_rq_unmark_lost(c);
		}
	}
	c->backoff = 0;
	c->retries = 0;
	if ((c->flags & TCP_CF_TLP_OUT) && tcp_seq_ge(s->ack, c->tlp_end))
		c->flags &= ~TCP_CF_TLP_OUT;

	if (c->flags & TCP_CF_IN_RECOVERY) {
		if (tcp_seq_ge(s->ack, c->recover)) {
			/* Full ACK: leave recovery (RFC 6937: cwnd = ssthresh;
			 * RFC 6582 3.2 step 3 without SACK). */
			c->flags &= ~TCP_CF_IN_RECOVERY;
			/* RFC 8985 6.2 step 4: after 16 recoveries without a
			 * D-SACK the reordering window shrinks back. */
			if (c->reo_wnd_persist > 0 && --c->reo_wnd_persist == 0)
				c->reo_wnd_mult = 1;
			if (c->flags & TCP_CF_SACK)
				c->cc.cwnd = c->cc.ssthresh;
			else
				c->cc.cwnd = MIN2(c->cc.ssthresh,
						  MAX2(tcp_flight(c), (uint32_t)c->mss) + c->mss);
		} else if (!(c->flags & TCP_CF_SACK)) {
			/* Partial ACK: the next hole is lost too; deflate. */
			tcp_rq_mark_head_lost(c);
			c->cc.cwnd = c->cc.cwnd > acked ? c->cc.cwnd - acked : 0;
			c->cc.cwnd += c->mss;
		}
	} else if (unlikely(c->ccg != NULL) && c->cc.cwnd >= c->cc.ssthresh) {
		coupled_increase(c, acked);
	} else {
		e->cc->on_ack(&c->cc, acked, e->now, c->srtt_ns);
	}
	c->dupacks = 0;
	tcp_arm_rtx(c);
	if ((c->flags & TCP_CF_WANT_WRITE) &&
	    c->sndq.bytes + c->want_space <= e->p.snd_buf) {
		c->flags &= ~TCP_CF_WANT_WRITE;
		tcp_conn_event(c, TCP_EV_WRITABLE);
	}
}

/* Duplicate ACKs without SACK: RFC 5681 3.2 / RFC 6582. With SACK, RACK
 * decides what is lost. */
static void
dup_ack(struct tcp_conn *c)
{
	c->dupacks++;
	if (c->flags & TCP_CF_IN_RECOVERY) {
		c->cc.cwnd += c->mss; /* RFC 6582 3.2 step 4: inflation */
		return;
	}
	if (c->dupacks == 3 && !tcp_seq_lt(c->snd_una, c->recover)) {
		/* RFC 6582 4.1: losses of a window already handled do not
		 * start a new recovery. */
		enter_recovery(c);
		tcp_rq_mark_head_lost(c);
		c->cc.cwnd += 3u * c->mss;
	}
}

/* The SYN-ACK that established an active open: keep what a proxy may
 * pass on (tcp_conn_peer_xopts()) where our SYN's own options were; the
 * SYN is never sent again. */
static void
keep_peer_xopts(struct tcp_conn *c, const struct rte_mbuf *m)
{
	uint32_t left;

	c->ep.xopt_len = (uint8_t)tcp_syn_xopts(m, c->ep.xopt, TCP_XOPT_MAX, &left,
						c->eng->p.xopt_carry);
	c->flags |= TCP_CF_XOPT_PEER;
	if (left)
		TCP_CNT(c->eng, XOPT_NOT_CARRIED);
}

bool
tcp_conn_input(struct tcp_conn *c, struct rte_mbuf *m, struct tcp_seg_in *s)
{
	struct tcp_engine *e = c->eng;
	uint32_t seglen;
	uint32_t prior_una, prior_wnd, prior_sacked;
	int64_t delivered;

	if (c->state == TCP_SYN_SENT) {
		syn_sent_input(c, m, s);
		if (c->state == TCP_ESTABLISHED)
			keep_peer_xopts(c, m);
		rte_pktmbuf_free(m);
		return false;
	}
	if (c->state == TCP_CLOSED || c->state == TCP_LISTEN) {
		rte_pktmbuf_free(m);
		return false;
	}
	/* Our SYN-ACK was lost and the peer sent its SYN again. */
	if (c->state == TCP_SYN_RECEIVED &&
	    (s->flags & (TCP_FL_SYN | TCP_FL_ACK | TCP_FL_RST)) == TCP_FL_SYN &&
	    s->seq == c->irs) {
		/* Echo this SYN's timestamp, not the first one's, or the
		 * peer measures our wait as its RTT (RFC 7323 4.3). */
		if ((c->flags & TCP_CF_TS) && (s->opts & TCP_SO_TS))
			c->ts_recent = s->tsval;
		tcp_send_syn(c);
		rte_pktmbuf_free(m);
		return false;
	}
	seglen = s->len + !!(s->flags & TCP_FL_SYN) + !!(s->flags & TCP_FL_FIN);

	/* PAWS (RFC 7323 5.3): an older timestamp marks an old duplicate. */
	if ((c->flags & TCP_CF_TS) && (s->opts & TCP_SO_TS) &&
	    !(s->flags & TCP_FL_RST) && (int32_t)(s->tsval - c->ts_recent) < 0) {
		TCP_CNT(e, UNACCEPTABLE);
		/* An old duplicate: report what of it we hold (RFC 2883). */
		if (s->len > 0 && tcp_seq_lt(s->seq, c->rcv_nxt))
			dsack_note(c, s->seq, tcp_seq_lt(s->seq + s->len, c->rcv_nxt) ?
				   s->seq + s->len : c->rcv_nxt);
		oow_ack(c);
		rte_pktmbuf_free(m);
		return false;
	}
	/* Step 1: sequence number. */
	if (!seq_acceptable(c, s, seglen)) {
		if (s->flags & TCP_FL_RST) {
			if (rst_after_fin(c, s)) {
				reset_by_peer(c);
				rte_pktmbuf_free(m);
				return false;
			}
			TCP_CNT(e, RST_IGNORED);
		} else {
			TCP_CNT(e, UNACCEPTABLE);
			if (s->len > 0 && tcp_seq_le(s->seq + s->len, c->rcv_nxt)) {
				dsack_note(c, s->seq, s->seq + s->len);
				/* A resend of data we hold that ends within a
				 * receive buffer of RCV.NXT is what a real
				 * sender's spurious retransmission looks like:
				 * RFC 2883 wants its D-SACK at once, and a
				 * blind spoofer must land that close, as for
				 * any accepted segment. Older ones share the
				 * rate limit. */
				if (tcp_seq_ge(s->seq + s->len, c->rcv_nxt - e->p.rcv_buf)) {
					tcp_send_ack(c);
					rte_pktmbuf_free(m);
					return false;
				}
			}
			oow_ack(c);
		}
		rte_pktmbuf_free(m);
		return false;
	}
	tcp_keepalive_touch(c);
	if (unlikely(c->hooks != NULL) && c->hooks->opts_in != NULL)
		hook_opts_in(c, m, s);
	/* RFC 7323 4.3: TS.Recent from segments that start at or before the
	 * left edge of the window. */
	if ((c->flags & TCP_CF_TS) && (s->opts & TCP_SO_TS) &&
	    tcp_seq_le(s->seq, c->rcv_nxt))
		c->ts_recent = s->tsval;

	/* Step 2: RST, accepted only at exactly RCV.NXT (RFC 5961 3.2). */
	if (s->flags & TCP_FL_RST) {
		if (s->seq == c->rcv_nxt)
			reset_by_peer(c);
		else
			challenge_ack(c);
		rte_pktmbuf_free(m);
		return false;
	}
	/* Step 4: a SYN in a synchronised state is answered with a
	 * challenge ACK, whatever its sequence number (RFC 5961 4.2). */
	if (s->flags & TCP_FL_SYN) {
		challenge_ack(c);
		rte_pktmbuf_free(m);
		return false;
	}
	/* Step 5: ACK. */
	if (!(s->flags & TCP_FL_ACK)) {
		rte_pktmbuf_free(m);
		return false;
	}
	if (c->state == TCP_SYN_RECEIVED) {
		if (tcp_seq_le(s->ack, c->snd_una) || tcp_seq_gt(s->ack, c->snd_max)) {
			tcp_send_rst_for(e, &c->ep, s->ack, 0, TCP_FL_RST);
			rte_pktmbuf_free(m);
			return false;
		}
		c->state = TCP_ESTABLISHED;
		c->snd_wnd = (uint32_t)s->wnd << wscale(c);
		c->max_snd_wnd = c->snd_wnd;
		c->snd_wl1 = s->seq;
		c->snd_wl2 = s->ack;
		handshake_rtt(c, s);
		c->flags &= ~(TCP_CF_RTT_TIMING | TCP_CF_UNANNOUNCED);
		tcp_backlog_leave(c);
		c->snd_una = s->ack;
		c->backoff = 0;
		c->retries = 0;
		c->rtx_at = 0;
		tcp_conn_event(c, TCP_EV_CONNECTED);
		if (c->flags & TCP_CF_FIN_QUEUED)
			c->state = TCP_FIN_WAIT_1;
	}
	/* RFC 5961 5.2: SND.UNA - MAX.SND.WND <= SEG.ACK <= SND.NXT. */
	if (tcp_seq_gt(s->ack, c->snd_max)) {
		TCP_CNT(e, ACK_TOO_NEW);
		oow_ack(c);
		rte_pktmbuf_free(m);
		return false;
	}
	if (tcp_seq_lt(s->ack, c->snd_una - c->max_snd_wnd)) {
		TCP_CNT(e, ACK_TOO_OLD);
		oow_ack(c);
		rte_pktmbuf_free(m);
		return false;
	}
	prior_una = c->snd_una;
	prior_wnd = c->snd_wnd;
	prior_sacked = c->sacked_bytes;
	/* Cumulative ACK first, then SACK blocks: RACK sees deliveries in
	 * sequence order, as RFC 8985 6.2 step 3 compares them. */
	if (tcp_seq_gt(s->ack, c->snd_una)) {
		new_ack(c, s);
	} else if (s->ack == c->snd_una && s->len == 0 &&
		   !(s->flags & TCP_FL_FIN) && c->snd_max != c->snd_una &&
		   ((uint32_t)s->wnd << wscale(c)) == c->snd_wnd &&
		   !(c->flags & TCP_CF_SACK)) {
		/* Duplicate ACK as RFC 5681 2 defines it. */
		dup_ack(c);
	}
	tcp_rq_sack(c, s);
	/* RACK can only find a loss once something was delivered out of
	 * order, a recovery is on, or its timer runs: skip the walk else. */
	if ((c->flags & TCP_CF_SACK) && c->rq_head != TCP_TR_NONE &&
	    (c->sacked_bytes != 0 || (c->flags & (TCP_CF_IN_RECOVERY | TCP_CF_HAS_LOST)) ||
	     c->rack_at != 0 || prior_sacked != 0)) {
		/* RACK (RFC 8985 6.2) on every ACK, PRR while recovering.
		 * DeliveredData (RFC 6937) = change in SND.UNA + change in
		 * SACKed bytes. */
		uint32_t lost = tcp_rack_detect(c);

		delivered = (int64_t)(c->snd_una - prior_una) +
			    (int64_t)c->sacked_bytes - (int64_t)prior_sacked;
		if (delivered < 0)
			delivered = 0;
		if (lost > 0 || (c->flags & TCP_CF_IN_RECOVERY))
			tcp_recovery_on_loss(c, (uint32_t)delivered);
	}
	/* Window update (3.10.7.4 step 5, SND.WL1/WL2 rule). */
	if (tcp_seq_lt(c->snd_wl1, s->seq) ||
	    (c->snd_wl1 == s->seq && tcp_seq_le(c->snd_wl2, s->ack))) {
		c->snd_wnd = (uint32_t)s->wnd << wscale(c);
		c->snd_wl1 = s->seq;
		c->snd_wl2 = s->ack;
		if (c->snd_wnd > c->max_snd_wnd)
			c->max_snd_wnd = c->snd_wnd;
		if (c->snd_wnd > 0 && (c->flags & TCP_CF_PERSIST)) {
			c->flags &= ~TCP_CF_PERSIST;
			c->rtx_at = 0;
			c->backoff = 0;
		}
	}
	if ((c->flags & TCP_CF_FIN_SENT) && tcp_seq_gt(c->snd_una, c->fin_seq)) {
		switch (c->state) {
		case TCP_FIN_WAIT_1:
			c->state = TCP_FIN_WAIT_2;
			break;
		case TCP_CLOSING:
			enter_time_wait(c);
			break;
		case TCP_LAST_ACK:
			tcp_conn_close(c);
			rte_pktmbuf_free(m);
			return false;
		default:
			break;
		}
	}
	/* Step 7: text. */
	if (s->len > 0 && (c->state == TCP_ESTABLISHED || c->state == TCP_FIN_WAIT_1 ||
			   c->state == TCP_FIN_WAIT_2)) {
		rcv_data(c, m, s);
	} else {
		tcp_free_frame(c->eng, m);
		if (s->len > 0)
			c->flags |= TCP_CF_ACK_NOW;
	}
	/* Step 8: FIN. */
	if (s->flags & TCP_FL_FIN) {
		uint32_t fseq = s->seq + s->len;

		if (c->state == TCP_TIME_WAIT) {
			/* The peer lost our ACK: answer and restart 2 MSL. */
			c->flags |= TCP_CF_ACK_NOW;
			c->rtx_at = e->now + e->p.time_wait_ns;
			tcp_time_wait_list(c);
		} else if (c->flags & TCP_CF_PEER_FIN) {
			c->flags |= TCP_CF_ACK_NOW;
		} else if (fseq == c->rcv_nxt) {
			rcv_fin(c);
		} else if (tcp_seq_gt(fseq, c->rcv_nxt) && tcp_seq_lt(fseq, c->rcv_adv)) {
			c->flags |= TCP_CF_OOO_FIN;
			c->peer_fin_seq = fseq;
		}
	}
	if ((c->flags & TCP_CF_OOO_FIN) && c->peer_fin_seq == c->rcv_nxt)
		rcv_fin(c);
	if (c->state != TCP_CLOSED) {
		if (tcp_burst_defer(c))
			return true;
		tcp_output(c);
	}
	if (unlikely(c->hooks != NULL) && c->hooks->writable != NULL &&
	    (c->snd_una != prior_una || c->snd_wnd != prior_wnd))
		hook_writable(c);
	return false;
}
