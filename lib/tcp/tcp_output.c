/* SPDX-License-Identifier: BSD-3-Clause */
/* Sending: data and FIN within min(cwnd, SND.WND), ACKs with the receive
 * window, retransmission and persist timers (RFC 9293, RFC 6298). */

#include "tcp_impl.h"

#define MIN2(a, b) ((a) < (b) ? (a) : (b))
#define MAX2(a, b) ((a) > (b) ? (a) : (b))

/* RFC 8985 7.2 WCDelAckT: the worst-case delayed ACK timer. */
#define TCP_WC_DELACK_NS 200000000ull
/* Added to 2 SRTT when more than one segment is out. RTT samples come
 * from the 1 ms timestamp clock, so on a sub-millisecond path most are 0
 * and SRTT tends to 0: a bare 2 SRTT fired a probe microseconds after the
 * segment it resent, before the ACK already on its way (Linux adds 2 ms
 * as well). */
#define TCP_PTO_SLACK_NS 2000000ull

uint32_t
tcp_ts_now(const struct tcp_conn *c)
{
	/* 1 ms timestamp clock (RFC 7323 5.4 allows 1 ms to 1 s per tick). */
	return (uint32_t)(c->eng->now / 1000000) + c->ts_off;
}

uint32_t
tcp_flight(const struct tcp_conn *c)
{
	return c->snd_max - c->snd_una;
}

/* A connection-level window shared by subflows: never more than this
 * connection can hold itself. Out of line: plain connections skip it
 * (tcp_rcv_window(), tcp_impl.h). */
uint32_t
tcp_rcv_window_hooked(struct tcp_conn *c, uint32_t w)
{
	if (c->hooks->rcv_wnd != NULL) {
		uint32_t ow = c->hooks->rcv_wnd(c->hook_owner, c, w);

		w = MIN2(w, ow);
	}
	return w;
}

/* The 40 option bytes are shared in a fixed order (tcp.h, opts_space):
 * on SYNs the engine's own options, then the hook, then carried ones;
 * on other segments timestamps, then the hook, then SACK blocks. For
 * data, what the hook takes also comes off the payload, so the segment
 * stays within the MSS the peer announced (RFC 6691). */
uint32_t
tcp_hook_room(struct tcp_conn *c, uint8_t kind, uint32_t len)
{
	uint32_t want, cap;

	if (c->hooks == NULL || c->hooks->opts_space == NULL)
		return 0;
	want = c->hooks->opts_space(c->hook_owner, c, kind);
	want = (want + 3u) & ~3u;
	cap = TCP_OPT_SPACE - ((c->flags & TCP_CF_TS) ? 12u : 0u);
	if (kind == TCP_SEG_DATA) {
		/* c->mss is the payload room with timestamps already off: a
		 * new segment keeps at least 64 bytes of payload, a resent
		 * one has its length and gets what that leaves. */
		uint32_t keep = len != 0 ? len : 64u;
		uint32_t left = c->mss > keep ? (c->mss - keep) & ~3u : 0;

		cap = MIN2(cap, left);
	}
	return MIN2(want, cap);
}

/* Let the hook write its options for the segment o describes (out of
 * line: only for connections with hooks). Returns the hook's
 * tcp_hook_seg.same_until when it wrote some (0: none). */
static __rte_noinline uint32_t
hook_opts(struct tcp_conn *c, struct tcp_seg_out *o, uint8_t kind, uint32_t room,
	  uint32_t len, uint8_t *buf)
{
	struct tcp_hook_seg hs = {
		.seq = o->seq, .ack = o->ack, .len = len, .flags = o->flags,
		.kind = kind, .retransmit = tcp_seq_lt(o->seq, c->snd_max) &&
					    kind == TCP_SEG_DATA,
	};
	uint32_t n = 0;

	if (c->hooks->opts_out != NULL)
		n = c->hooks->opts_out(c->hook_owner, c, &hs, buf, room);
	if (n > room)
		n = room;
	if (n == 0)
		return 0;
	while (n & 3u)
		buf[n++] = 1; /* NOP */
	o->hopt = buf;
	o->hopt_len = (uint8_t)n;
	o->hopt_gen++;
	return hs.same_until;
}

/* The window field to announce (inlined into hdr_init()), moving rcv_adv (the right edge) forward
 * only by at least min(RCV.BUFF/2, MSS) (receiver SWS avoidance, RFC 9293
 * 3.8.6.2.2) and never backward (3.8.6.2.2: do not shrink). */
static __rte_always_inline uint16_t
announce_window(struct tcp_conn *c, int syn)
{
	uint32_t w = tcp_rcv_window(c), edge;
	const struct tcp_engine *e = c->eng;

	if (syn && e->rcv_pool != UINT64_MAX) {
		/* Under a receive pool the edge is what the SYN says: its
		 * window field is not scaled, 65535 at most (without a pool
		 * the edge may lie beyond, as it always has). */
		if (w > 0xffff)
			w = 0xffff;
		/* And with more than half of the pool offered, a handshake
		 * offers two segments: a flood of half-open connections, each
		 * holding what its SYN-ACK offered until it is evicted, would
		 * otherwise hold the pool. The window grows with the first
		 * data, as the pool allows. */
		if (w > tcp_rcv_min(c) && e->rcv_offered - c->rcv_counted > e->rcv_pool / 2)
			w = tcp_rcv_min(c);
	}
	edge = c->rcv_nxt + w;
	uint32_t shift = syn || c->rcv_wscale == 0xff ? 0 : c->rcv_wscale;
	uint32_t thresh = MIN2(e->p.rcv_buf / 2, c->rcv_mss);
	uint32_t ad, field;

	if (tcp_seq_gt(edge, c->rcv_adv) &&
	    (edge - c->rcv_adv >= thresh || tcp_seq_le(c->rcv_adv, c->rcv_nxt)))
		c->rcv_adv = edge;
	if (tcp_seq_lt(c->rcv_adv, c->rcv_nxt))
		c->rcv_adv = c->rcv_nxt;
	ad = c->rcv_adv - c->rcv_nxt;
	tcp_rcv_account_ad(c, ad);
	field = ad >> shift;
	if (field > 0xffff)
		field = 0xffff;
	return (uint16_t)field;
}

/* hroom: option bytes granted to the hook (SACK blocks get what is left).
 * Inlined: on the per-segment path the call cost more than the body. */
static __rte_always_inline void
hdr_init(struct tcp_conn *c, struct tcp_seg_out *o, uint32_t seq, uint8_t flags,
	 uint32_t hroom)
{
	o->seq = seq;
	o->flags = flags;
	o->opts = 0;
	o->nsack = 0;
	o->xopt_len = 0;
	o->hopt_len = 0;
	o->hopt_gen = 0;
	o->fresh = 0;
	o->no_meta = (c->eng->p.flags & TCP_F_TX_NO_META) != 0;
	if (flags & TCP_FL_ACK) {
		o->ack = c->rcv_nxt;
		c->flags &= ~(TCP_CF_ACK_NOW | TCP_CF_ACK_BURST);
		c->rcv_unacked = 0;
		c->delack_at = 0;
	} else {
		o->ack = 0;
	}
	o->wnd = announce_window(c, flags & TCP_FL_SYN);
	if (c->flags & TCP_CF_TS) {
		o->opts |= TCP_SO_TS;
		o->tsval = tcp_ts_now(c);
		o->tsecr = c->ts_recent;
	}
	if ((c->flags & TCP_CF_SACK) && (c->ooo_n || (c->flags & TCP_CF_DSACK)) &&
	    (flags & TCP_FL_ACK) && !(flags & TCP_FL_SYN)) {
		/* What timestamps and the hook leave: 4 bytes of header
		 * (NOP NOP kind len) and 8 per block. */
		uint32_t left = TCP_OPT_SPACE - ((c->flags & TCP_CF_TS) ? 12u : 0u) - hroom;
		unsigned int max = left >= 12 ? (left - 4) / 8 : 0, first = 0;

		if (max > TCP_SACK_MAX)
			max = TCP_SACK_MAX;
		/* RFC 2883: a duplicate we received goes first, once. */
		if ((c->flags & TCP_CF_DSACK) && max > 0) {
			c->flags &= ~TCP_CF_DSACK;
			o->sack[o->nsack].left = c->dsack_left;
			o->sack[o->nsack++].right = c->dsack_right;
			TCP_CNT(c->eng, DSACK_SENT);
		}
		/* RFC 2018 4: then the block holding the latest segment. */
		for (unsigned int i = 0; i < c->ooo_n; i++)
			if (c->ooo[i].seq == c->ooo_recent)
				first = i;
		for (unsigned int k = 0; k < c->ooo_n && o->nsack < max; k++) {
			unsigned int i = k == 0 ? first : (k <= first ? k - 1 : k);

			o->sack[o->nsack].left = c->ooo[i].seq;
			o->sack[o->nsack++].right = c->ooo[i].seq + c->ooo[i].q.bytes;
		}
		if (o->nsack)
			o->opts |= TCP_SO_SACK;
	}
}

/* The send-buffer mbuf that holds byte off, found from the cursor when
 * the byte is not before it, and left there; *base gets the offset of
 * that mbuf's first byte. NULL past the buffer's end. */
static inline struct rte_mbuf *
snd_seek(struct tcp_conn *c, uint32_t off, uint32_t *base)
{
	struct rte_mbuf *d = c->snd_cur;
	uint32_t b = c->snd_cur_off;

	/* The cursor's own mbuf starts at off: the next segment's, after
	 * one that ended with its mbuf (emit()). */
	if (d != NULL && off == b) {
		*base = b;
		return d;
	}
	if (d == NULL || off < b) {
		d = c->sndq.head;
		b = 0;
	}
	while (d != NULL && off - b >= d->data_len) {
		b += d->data_len;
		d = d->next;
	}
	c->snd_cur = d;
	c->snd_cur_off = b;
	*base = b;
	return d;
}

/* Build and queue o with len payload bytes from off in the send buffer;
 * a segment of the given kind, with hroom option bytes for the hook.
 * With r (the segments of one tcp_output() call, struct tcp_seg_rep), a
 * segment that is one whole send-buffer mbuf copies the headers r keeps,
 * and the first one built in full makes r; hooked when o may carry the
 * hook's options already written (emit_hooked()). */
static inline int
emit(struct tcp_conn *c, struct tcp_seg_out *o, uint32_t off, uint32_t len,
     uint8_t kind, uint32_t hroom, struct tcp_seg_rep *r, bool hooked)
{
	struct tcp_engine *e = c->eng;
	const bool chain = !(e->p.flags & TCP_F_TX_COPY);
	uint8_t hbuf[TCP_OPT_SPACE];
	struct rte_mbuf *m, *d = c->sndq.head;
	uint32_t base = 0;

	if (unlikely(hroom != 0))
		hook_opts(c, o, kind, hroom, len, hbuf);
	if (len != 0)
		d = snd_seek(c, off, &base);
	if (r != NULL && r->ok && d != NULL && off == base && d->data_len == len) {
		m = tcp_seg_build_rep(e->p.pool, r, &c->ep, o, d, &e->psum, hooked);
		if (m != NULL) {
			/* The next segment starts with the next mbuf. */
			if (d->next != NULL) {
				c->snd_cur = d->next;
				c->snd_cur_off = off + len;
			}
			goto queue;
		}
	}
	m = tcp_seg_build_tmpl(e->p.pool, &c->tmpl, &c->ep, o, d, off - base, len,
			       &e->psum, chain);
	if (m == NULL) {
		TCP_CNT(e, MBUF_ALLOC_FAIL);
		return -1;
	}
	if (r != NULL && !r->ok && chain)
		tcp_seg_rep_init(r, &c->ep, o, m);
queue:
	tcp_txq_push(e, m);
	return 0;
}

/* The hook's options of the new data of one tcp_output() call, and how
 * far they hold (tcp_hook_seg.same_until). */
struct hook_keep {
	uint32_t room;  /* the room they were written in; 0: none kept */
	uint32_t until; /* they stand for segments that end by here */
	uint8_t buf[TCP_OPT_SPACE];
};

/* emit() of new data with the hook's options, for tcp_output(): out of
 * line, so that a plain connection's emit() is inlined with no room for
 * a hook. The hook writes them once for the segments they stand for
 * (an MPTCP mapping's), and those segments' frames take them from the
 * first one's headers (tcp_seg_build_rep(), o->hopt_gen). */
static __rte_noinline int
emit_hooked(struct tcp_conn *c, struct tcp_seg_out *o, uint32_t len, uint32_t hroom,
	    struct tcp_seg_rep *r, struct hook_keep *k)
{
	if (k->room != hroom || tcp_seq_gt(o->seq + len, k->until)) {
		o->hopt_len = 0;
		k->until = hook_opts(c, o, TCP_SEG_DATA, hroom, len, k->buf);
		k->room = k->until != 0 ? hroom : 0;
	}
	return emit(c, o, c->snd_nxt - c->snd_una, len, TCP_SEG_DATA, 0, r, true);
}

void
tcp_send_syn(struct tcp_conn *c)
{
	struct tcp_engine *e = c->eng;
	struct tcp_seg_out o;
	int passive = c->state == TCP_SYN_RECEIVED;
	uint8_t kind = passive ? TCP_SEG_SYN_ACK : TCP_SEG_SYN;
	uint32_t hroom = 0;

	hdr_init(c, &o, c->iss, passive ? TCP_FL_SYN | TCP_FL_ACK : TCP_FL_SYN, 0);
	o.opts |= TCP_SO_MSS;
	o.mss = c->rcv_mss;
	if (passive) {
		/* Options only as the peer offered them (RFC 7323 1.3, 2018 2). */
		if (c->flags & TCP_CF_SACK)
			o.opts |= TCP_SO_SACK_PERM;
		if (c->rcv_wscale != 0xff && c->snd_wscale != 0xff) {
			o.opts |= TCP_SO_WS;
			o.ws = c->rcv_wscale;
		}
	} else {
		if (!(e->p.flags & TCP_F_NO_SACK))
			o.opts |= TCP_SO_SACK_PERM;
		if (!(e->p.flags & TCP_F_NO_WS)) {
			o.opts |= TCP_SO_WS;
			o.ws = c->rcv_wscale;
		}
		if (!(e->p.flags & TCP_F_NO_TS)) {
			o.opts |= TCP_SO_TS;
			o.tsval = tcp_ts_now(c);
			o.tsecr = 0;
		}
	}
	/* The hook after the engine's own options (at most 20 bytes, so
	 * it has at least 20), then what the caller carries over from a
	 * proxy's other leg, if it still fits. */
	if (c->hooks != NULL) {
		uint32_t used = tcp_seg_opt_len(&o);

		hroom = tcp_hook_room(c, kind, 0);
		hroom = MIN2(hroom, TCP_OPT_SPACE - used);
	}
	o.xopt_len = c->ep.xopt_len;
	o.xopt = c->ep.xopt;
	if (hroom != 0 && tcp_seg_opt_len(&o) + hroom > TCP_OPT_SPACE) {
		o.xopt_len = 0;
		TCP_CNT(e, XOPT_NOT_CARRIED);
	}
	emit(c, &o, 0, 0, kind, hroom, NULL, false);
}

/* A segment without payload: the hook's room, then the header. */
static void
send_bare(struct tcp_conn *c, uint32_t seq, uint8_t flags, uint8_t kind)
{
	struct tcp_seg_out o;
	uint32_t hroom = unlikely(c->hooks != NULL) ? tcp_hook_room(c, kind, 0) : 0;

	hdr_init(c, &o, seq, flags, hroom);
	if (flags & TCP_FL_RST) {
		o.opts &= (uint8_t)~TCP_SO_SACK;
		o.nsack = 0;
		o.wnd = 0;
	}
	emit(c, &o, 0, 0, kind, hroom, NULL, false);
}

void
tcp_send_ack(struct tcp_conn *c)
{
	send_bare(c, c->snd_nxt, TCP_FL_ACK, TCP_SEG_ACK);
}

void
tcp_send_rst(struct tcp_conn *c)
{
	send_bare(c, c->snd_max, TCP_FL_RST | TCP_FL_ACK, TCP_SEG_RST);
	TCP_CNT(c->eng, RST_SENT);
	c->reset_end = 1;
}

int
tcp_send_rst_for(struct tcp_engine *e, const struct tcp_endpoints *ep,
		 uint32_t seq, uint32_t ack, uint8_t flags)
{
	struct tcp_seg_out o = { .seq = seq, .ack = ack, .flags = flags };
	struct rte_mbuf *m;

	m = tcp_seg_build(e->p.pool, ep, &o, NULL, 0, 0);
	if (m == NULL) {
		TCP_CNT(e, MBUF_ALLOC_FAIL);
		return -ENOMEM;
	}
	TCP_CNT(e, RST_SENT);
	tcp_txq_push(e, m);
	return 0;
}

static uint64_t
rto_backed_off(const struct tcp_conn *c)
{
	uint64_t rto = c->rto_ns;
	uint64_t max = c->eng->p.rto_max_ns;

	for (unsigned int i = 0; i < c->backoff && rto < max; i++)
		rto <<= 1;
	return rto > max ? max : rto;
}

void
tcp_rto_arm(struct tcp_conn *c)
{
	c->flags &= ~TCP_CF_PERSIST;
	c->rtx_at = c->eng->now + rto_backed_off(c);
	tcp_timer_update(c);
}

/* RFC 6298 section 2: SRTT, RTTVAR and RTO from a measurement. */
void
tcp_rtt_sample(struct tcp_conn *c, uint64_t r)
{
	const struct tcp_engine_params *p = &c->eng->p;
	uint64_t k_var;

	/* srtt_ns 0 means "no sample yet": a path faster than the 1 ms
	 * timestamp clock still has one. */
	if (r == 0)
		r = 1;
	if (c->srtt_ns == 0) {
		c->srtt_ns = r;
		c->rttvar_ns = r / 2;
	} else {
		uint64_t delta = c->srtt_ns > r ? c->srtt_ns - r : r - c->srtt_ns;

		c->rttvar_ns = (3 * c->rttvar_ns + delta) / 4; /* beta = 1/4 */
		c->srtt_ns = (7 * c->srtt_ns + r) / 8;          /* alpha = 1/8 */
	}
	k_var = 4 * c->rttvar_ns;
	if (k_var < p->timer_tick_ns)
		k_var = p->timer_tick_ns; /* G: clock granularity */
	c->rto_ns = c->srtt_ns + k_var;
	if (c->rto_ns < p->rto_min_ns)
		c->rto_ns = p->rto_min_ns;
	if (c->rto_ns > p->rto_max_ns)
		c->rto_ns = p->rto_max_ns;
}

/* Ask the hook for its room on this segment (xmit()). */
#define TCP_HOOK_ASK UINT32_MAX

/* Send [seq, seq+len) of the send buffer (or the FIN at fin_seq), with
 * hroom option bytes for the hook (TCP_HOOK_ASK: ask it now). */
static int
xmit(struct tcp_conn *c, uint32_t seq, uint32_t len, int fin, uint32_t hroom)
{
	struct tcp_seg_out o;
	uint8_t flags = TCP_FL_ACK;
	uint8_t kind = len ? TCP_SEG_DATA : TCP_SEG_ACK;

	if (fin)
		flags |= TCP_FL_FIN;
	if (len && seq + len == c->snd_una + c->sndq.bytes)
		flags |= TCP_FL_PSH;
	if (hroom == TCP_HOOK_ASK)
		hroom = unlikely(c->hooks != NULL) ? tcp_hook_room(c, kind, len) : 0;
	hdr_init(c, &o, seq, flags, hroom);
	/* Keep room for SACK blocks off data segments: they are only for
	 * ACKs of out-of-order data and would steal payload. */
	if (len) {
		o.opts &= (uint8_t)~TCP_SO_SACK;
		o.nsack = 0;
	}
	if (tcp_seq_lt(seq, c->snd_max)) {
		c->retransmits++;
		TCP_CNT(c->eng, RETRANSMIT);
		/* Karn: a retransmitted segment gives no RTT sample. */
		if ((c->flags & TCP_CF_RTT_TIMING) && tcp_seq_lt(seq, c->rtt_seq))
			c->flags &= ~TCP_CF_RTT_TIMING;
	} else {
		o.fresh = 1;
	}
	return emit(c, &o, seq - c->snd_una, len, kind, hroom, NULL, false);
}

/* A full-sized segment that would end a little way into the next mbuf
 * of the send buffer ends with the mbuf it starts in instead, when that
 * keeps at least 7/8 of the segment ("Segments that end with their mbuf",
 * lib/tcp/README.md). Then it is one whole received segment, sent in
 * place with its kept sum (tcp_seg_build_ex()), where a segment across
 * two mbufs takes a chain and sums again what the kept sums do not
 * cover. This is what relaying from a peer with a smaller MSS gives
 * (a phone behind a 1400-byte MTU, an MPTCP client whose DSS takes
 * room from every segment): its segments arrive one per mbuf, smaller
 * than ours. After a short piece, a segment ends before the next piece
 * rather than split it (below). Not on a connection with hooks: an
 * MPTCP subflow's scheduler cuts its chunks in whole segments itself,
 * and a segment must not cross from one chunk's mapping into the next. */
static inline uint32_t
to_piece_end(struct tcp_conn *c, uint32_t off, uint32_t len)
{
	uint32_t base, left;
	struct rte_mbuf *d = snd_seek(c, off, &base), *n;

	if (d == NULL)
		return len;
	/* Only mbufs no longer than a segment: a buffer the application
	 * filled (tcp_send(), mbufs of a whole data room) is not cut up. */
	left = base + d->data_len - off;
	if (d->data_len > len || left >= len)
		return len;
	if (left >= len - len / 8)
		return left;
	/* A segment that starts inside an mbuf (after a short one) and
	 * would split the next, itself a segment's worth: it ends before
	 * that one instead (or with it, if both fit), and the segments
	 * after it are whole mbufs again. Else each would start a little
	 * further into its mbuf, for as many segments as that offset takes
	 * to go round. */
	n = d->next;
	if (n != NULL && n->data_len <= len && n->data_len >= len - len / 8)
		return left + n->data_len <= len ? left + n->data_len : left;
	return len;
}

static int
sendable_state(uint8_t st)
{
	return st == TCP_ESTABLISHED || st == TCP_CLOSE_WAIT ||
	       st == TCP_FIN_WAIT_1 || st == TCP_CLOSING || st == TCP_LAST_ACK;
}

/* Retransmit segments marked lost, oldest first, while the pipe has
 * room (RFC 6675 NextSeg rule 1 with RACK's marks). */
static int
retransmit_lost(struct tcp_conn *c, uint32_t *inflight)
{
	struct tcp_engine *e = c->eng;
	int sent = 0;

	uint32_t i;

	for (i = c->rq_head; i != TCP_TR_NONE && *inflight < c->cc.cwnd;
	     i = e->recs[i].next) {
		struct tcp_txrec *r = &e->recs[i];
		int fin = !!(r->flags & TCP_TR_FIN);
		uint32_t size = r->end - r->seq;

		if (!(r->flags & TCP_TR_LOST))
			continue;
		if (xmit(c, r->seq, size - (uint32_t)fin, fin, TCP_HOOK_ASK) != 0)
			break;
		r->flags = (r->flags & ~TCP_TR_LOST) | TCP_TR_RETRANS;
		r->xmit_ns = tcp_xmit_clock(e);
		*inflight += size;
		if (c->flags & TCP_CF_IN_RECOVERY)
			c->prr_out += size;
		sent = 1;
	}
	if (i == TCP_TR_NONE)
		c->flags &= ~TCP_CF_HAS_LOST; /* walked them all: none left */
	return sent;
}

/* Arm the retransmission timer, or in its place the tail loss probe
 * (RFC 8985 7.2): PTO = 2 SRTT, plus the worst-case delayed ACK when a
 * single segment is out and 2 ms else, never later than the RTO would
 * fire. */
void
tcp_arm_rtx(struct tcp_conn *c)
{
	struct tcp_engine *e = c->eng;
	uint64_t pto;

	if (c->snd_una == c->snd_max) {
		c->rtx_at = 0;
		c->flags &= ~(TCP_CF_TLP_ARMED | TCP_CF_PERSIST);
		return;
	}
	if ((c->flags & (TCP_CF_SACK | TCP_CF_IN_RECOVERY | TCP_CF_TLP_OUT)) == TCP_CF_SACK &&
	    c->srtt_ns != 0 && c->retries == 0 && sendable_state(c->state)) {
		pto = 2 * c->srtt_ns;
		if (c->snd_max - c->snd_una <= c->mss)
			pto += TCP_WC_DELACK_NS;
		else
			pto += TCP_PTO_SLACK_NS;
		if (pto < rto_backed_off(c)) {
			c->flags &= ~TCP_CF_PERSIST;
			c->flags |= TCP_CF_TLP_ARMED;
			c->rtx_at = e->now + pto;
			tcp_timer_update(c);
			return;
		}
	}
	c->flags &= ~TCP_CF_TLP_ARMED;
	tcp_rto_arm(c);
}

void
tcp_output(struct tcp_conn *c)
{
	struct tcp_engine *e = c->eng;
	int sent = 0, blocked = 0, hdr_made = 0, rc;
	struct tcp_seg_out hdr;
	struct tcp_seg_rep rep;
	struct hook_keep hk;
	uint32_t inflight;

	if (!sendable_state(c->state)) {
		if ((c->flags & TCP_CF_ACK_NOW) && c->state != TCP_SYN_SENT &&
		    c->state != TCP_CLOSED)
			tcp_send_ack(c);
		return;
	}
	/* Without SACKed or lost segments every record is in the pipe:
	 * skip the walk in the common case. */
	if (c->sacked_bytes == 0 && !(c->flags & TCP_CF_HAS_LOST)) {
		inflight = c->snd_nxt - c->snd_una;
	} else {
		inflight = tcp_rq_pipe(c);
		sent = retransmit_lost(c, &inflight);
	}
	for (;;) {
		uint32_t off = c->snd_nxt - c->snd_una;
		uint32_t wnd = MIN2(c->snd_wnd, c->cc.cwnd);
		uint32_t avail, len, hroom = 0;
		int fin = 0;

		if ((c->flags & TCP_CF_FIN_SENT) && tcp_seq_gt(c->snd_nxt, c->fin_seq))
			break; /* everything, FIN included, is out */
		avail = off < c->sndq.bytes ? c->sndq.bytes - off : 0;
		if (avail == 0) {
			if (!(c->flags & TCP_CF_FIN_QUEUED))
				break;
			fin = 1;
			len = 0;
		} else {
			if (inflight >= wnd || off >= c->snd_wnd) {
				blocked = 1;
				break;
			}
			/* The hook's options come off the payload: the room
			 * of its last ones while they stand (same_until), else
			 * what it asks. (A segment it gives no room has none of
			 * the last one's.) */
			if (unlikely(c->hooks != NULL)) {
				if (hdr_made && hk.room != 0 && tcp_seq_lt(c->snd_nxt, hk.until))
					hroom = hk.room;
				else
					hroom = tcp_hook_room(c, TCP_SEG_DATA, 0);
				if (hroom == 0)
					hdr.hopt_len = 0;
			}
			len = MIN2(avail, (uint32_t)c->mss - hroom);
			len = MIN2(len, wnd - inflight);
			len = MIN2(len, c->snd_wnd - off);
			/* Sender SWS avoidance (RFC 9293 3.8.6.2.1); no Nagle:
			 * the proxy relays what it has as soon as it can. */
			if (len < c->mss - hroom && len < avail && len < c->max_snd_wnd / 2 &&
			    !(c->flags & TCP_CF_FORCE)) {
				blocked = 1;
				break;
			}
			if (len == avail && (c->flags & TCP_CF_FIN_QUEUED))
				fin = 1;
			else if (len == c->mss && len < avail && c->hooks == NULL)
				len = to_piece_end(c, off, len);
		}
		if (tcp_rq_add(c, c->snd_nxt, c->snd_nxt + len + (uint32_t)fin, fin) != 0)
			break;
		if (len != 0 && !fin && !tcp_seq_lt(c->snd_nxt, c->snd_max)) {
			/* New data: every segment of this call carries the
			 * same ACK, window and timestamps, so the header is
			 * made once (hdr_init()) and each segment only sets
			 * its sequence number, PSH and the hook's options;
			 * after the first frame, a frame sent in place copies
			 * that one's headers (emit() with rep). */
			if (!hdr_made) {
				hdr_init(c, &hdr, c->snd_nxt, TCP_FL_ACK, 0);
				hdr.opts &= (uint8_t)~TCP_SO_SACK;
				hdr.nsack = 0;
				hdr.fresh = 1;
				hdr_made = 1;
				rep.ok = 0;
				hk.room = 0;
			}
			hdr.seq = c->snd_nxt;
			hdr.flags = c->snd_nxt + len == c->snd_una + c->sndq.bytes ?
				    TCP_FL_ACK | TCP_FL_PSH : TCP_FL_ACK;
			if (likely(hroom == 0))
				rc = emit(c, &hdr, c->snd_nxt - c->snd_una, len,
					  TCP_SEG_DATA, 0, &rep, false);
			else
				rc = emit_hooked(c, &hdr, len, hroom, &rep, &hk);
		} else {
			rc = xmit(c, c->snd_nxt, len, fin, len != 0 ? hroom : TCP_HOOK_ASK);
		}
		if (rc != 0) {
			/* Recorded but not sent: it goes out as a loss. */
			tcp_rq_last(c)->flags |= TCP_TR_LOST;
			c->flags |= TCP_CF_HAS_LOST;
		}
		if (fin && !(c->flags & TCP_CF_FIN_SENT)) {
			c->flags |= TCP_CF_FIN_SENT;
			c->fin_seq = c->snd_nxt + len;
		}
		sent = 1;
		if (!(c->flags & TCP_CF_RTT_TIMING) && !(c->flags & TCP_CF_TS)) {
			c->flags |= TCP_CF_RTT_TIMING;
			c->rtt_seq = c->snd_nxt + len + (uint32_t)fin;
			c->rtt_ts = e->now;
		}
		if (len > 0)
			c->persist_at = 0; /* the window let data out */
		c->snd_nxt += len + (uint32_t)fin;
		c->snd_max = c->snd_nxt;
		inflight += len + (uint32_t)fin;
		if (c->flags & TCP_CF_IN_RECOVERY)
			c->prr_out += len + (uint32_t)fin;
		if (fin)
			break;
	}
	if (sent && (c->rtx_at == 0 || (c->flags & (TCP_CF_PERSIST | TCP_CF_TLP_ARMED))))
		tcp_arm_rtx(c);
	if (!sent && (c->flags & TCP_CF_ACK_NOW))
		tcp_send_ack(c);
	c->flags &= ~TCP_CF_FORCE;
	/* Blocked by the peer's window with nothing in flight: a zero window
	 * needs probes to learn that it opened (RFC 9293 3.8.6.1), a small
	 * one the SWS override timeout (3.8.6.2.1). */
	if (blocked && c->snd_max == c->snd_una && c->rtx_at == 0 &&
	    c->snd_wnd < c->mss) {
		/* The persist timeout counts from the first probe's arming
		 * until data moves again (below: any new data sent). */
		if (c->persist_at == 0 && e->p.persist_timeout_ns != 0)
			c->persist_at = e->now + e->p.persist_timeout_ns;
		c->flags |= TCP_CF_PERSIST;
		c->rtx_at = e->now + rto_backed_off(c);
		tcp_timer_update(c);
	}
}

/* The probe (RFC 8985 7.3): new data if the receive window allows, else
 * the last segment again. */
static void
tlp_fire(struct tcp_conn *c)
{
	struct tcp_engine *e = c->eng;
	uint32_t off = c->snd_nxt - c->snd_una;

	c->flags &= ~TCP_CF_TLP_ARMED;
	TCP_CNT(e, TLP);
	if (off < c->sndq.bytes && off < c->snd_wnd) {
		uint32_t saved = c->cc.cwnd;

		c->cc.cwnd = tcp_rq_pipe(c) + c->mss; /* exactly one segment */
		c->flags |= TCP_CF_FORCE;
		tcp_output(c);
		c->cc.cwnd = saved;
	} else {
		struct tcp_txrec *r = tcp_rq_last(c);

		if (r != NULL) {
			int fin = !!(r->flags & TCP_TR_FIN);

			xmit(c, r->seq, r->end - r->seq - (uint32_t)fin, fin, TCP_HOOK_ASK);
			r->flags = (r->flags & ~TCP_TR_LOST) | TCP_TR_RETRANS;
			r->xmit_ns = tcp_xmit_clock(e);
		}
	}
	c->flags |= TCP_CF_TLP_OUT;
	c->tlp_end = c->snd_max;
	c->flags &= ~TCP_CF_TLP_ARMED;
	tcp_rto_arm(c);
}

static void
enter_timeout(struct tcp_conn *c)
{
	TCP_CNT(c->eng, TIMEOUT);
	if (c->state != TCP_SYN_SENT)
		tcp_send_rst(c);
	tcp_conn_event(c, TCP_EV_TIMEOUT);
	tcp_conn_close(c);
}

static void
rtx_fire(struct tcp_conn *c)
{
	struct tcp_engine *e = c->eng;

	c->rtx_at = 0;
	if (c->state == TCP_TIME_WAIT) {
		tcp_conn_close(c);
		return;
	}
	if ((c->flags & TCP_CF_PERSIST) && c->snd_wnd > 0) {
		/* SWS override: send what the small window allows. */
		c->flags &= ~TCP_CF_PERSIST;
		c->flags |= TCP_CF_FORCE;
		return;
	}
	if (c->flags & TCP_CF_TLP_ARMED) {
		tlp_fire(c);
		return;
	}
	if (c->flags & TCP_CF_PERSIST) {
		/* Zero-window probe: an old sequence number makes the peer
		 * answer with an ACK carrying its current window. */
		send_bare(c, c->snd_una - 1, TCP_FL_ACK, TCP_SEG_ACK);
		TCP_CNT(e, ZWP);
		if (c->backoff < 16)
			c->backoff++;
		c->flags |= TCP_CF_PERSIST;
		c->rtx_at = e->now + rto_backed_off(c);
		return;
	}
	if (c->snd_una == c->snd_max)
		return;
	c->retries++;
	if (c->retries > (c->state == TCP_SYN_SENT || c->state == TCP_SYN_RECEIVED ?
			  e->p.syn_retries : e->p.data_retries)) {
		enter_timeout(c);
		return;
	}
	TCP_CNT(e, RTO);
	if (c->backoff < 16)
		c->backoff++; /* RFC 6298 5.5 */
	if (c->state == TCP_SYN_SENT || c->state == TCP_SYN_RECEIVED) {
		c->flags |= TCP_CF_SYN_RTX;
		c->retransmits++;
		TCP_CNT(e, RETRANSMIT);
		tcp_send_syn(c);
	} else {
		/* RFC 5681 3.1 eq. 4 and loss window; RFC 8985 6.3: every
		 * segment not SACKed is lost, resent as the window regrows. */
		/* Eifel (RFC 3522): remember the first retransmission's
		 * timestamp and the window before the cut, to undo both if
		 * the next ACK echoes an older timestamp. */
		if ((c->flags & TCP_CF_TS) && c->retries == 1) {
			c->flags |= TCP_CF_EIFEL;
			c->eifel_tsval = tcp_ts_now(c);
			c->prior_cwnd = c->cc.cwnd;
			c->prior_ssthresh = c->cc.ssthresh;
		}
		e->cc->on_rto(&c->cc, tcp_flight(c), e->now);
		c->flags &= ~(TCP_CF_IN_RECOVERY | TCP_CF_RTT_TIMING | TCP_CF_TLP_OUT);
		c->dupacks = 0;
		c->recover = c->snd_max;
		tcp_rq_mark_all_lost(c);
	}
	tcp_rto_arm(c);
}

/* Any segment from the peer shows it is alive: the keepalive, idle and
 * FIN-WAIT-2 clocks start again (the wheel learns of the later idle
 * deadline lazily, when the earlier one it holds fires). */
void
tcp_keepalive_touch(struct tcp_conn *c)
{
	const struct tcp_engine_params *p = &c->eng->p;

	c->last_rx_ns = c->eng->now;
	if (p->keepalive_idle_ns == 0)
		return;
	c->ka_probes = 0;
	c->ka_at = c->eng->now + p->keepalive_idle_ns;
}

/* RFC 1122 4.2.3.6: after an idle period, probe with an old sequence
 * number (the peer must answer with an ACK); give up after
 * keepalive_probes unanswered ones. Outstanding data has the RTO and
 * persist timers for that. */
static void
keepalive_fire(struct tcp_conn *c)
{
	struct tcp_engine *e = c->eng;

	c->ka_at = 0;
	if (c->state != TCP_ESTABLISHED && c->state != TCP_CLOSE_WAIT &&
	    c->state != TCP_FIN_WAIT_2)
		return;
	if (c->snd_una != c->snd_max || (c->flags & TCP_CF_PERSIST)) {
		c->ka_at = e->now + e->p.keepalive_idle_ns;
		return;
	}
	if (c->ka_probes >= e->p.keepalive_probes) {
		enter_timeout(c);
		return;
	}
	send_bare(c, c->snd_una - 1, TCP_FL_ACK, TCP_SEG_ACK);
	TCP_CNT(e, KEEPALIVE);
	c->ka_probes++;
	c->ka_at = e->now + e->p.keepalive_intvl_ns;
}

/* A peer that is there but holds the connection for nothing: reset it
 * and report the timeout, counted by cause. */
static void
give_up(struct tcp_conn *c)
{
	struct tcp_engine *e = c->eng;

	if ((c->flags & TCP_CF_PERSIST) && c->persist_at != 0 &&
	    c->persist_at <= e->now)
		TCP_CNT(e, PERSIST_TIMEOUT);
	else if (c->state == TCP_FIN_WAIT_2)
		TCP_CNT(e, FIN_WAIT2_TIMEOUT);
	else
		TCP_CNT(e, IDLE_TIMEOUT);
	tcp_send_rst(c);
	tcp_conn_event(c, TCP_EV_TIMEOUT);
	tcp_conn_close(c);
}

void
tcp_timer_fire(struct tcp_conn *c)
{
	uint64_t now = c->eng->now;
	uint64_t life = tcp_life_deadline(c);

	if (life != 0 && life <= now) {
		give_up(c);
		return;
	}

	if (c->delack_at != 0 && c->delack_at <= now) {
		c->delack_at = 0;
		if (c->state != TCP_CLOSED && c->state != TCP_SYN_SENT) {
			TCP_CNT(c->eng, DELACK);
			tcp_send_ack(c);
		}
	}
	if (c->rtx_at != 0 && c->rtx_at <= now)
		rtx_fire(c);
	if (c->rack_at != 0 && c->rack_at <= now && c->state != TCP_CLOSED) {
		c->rack_at = 0;
		if (tcp_rack_detect(c) > 0 || (c->flags & TCP_CF_IN_RECOVERY))
			tcp_recovery_on_loss(c, 0);
	}
	if (c->ka_at != 0 && c->ka_at <= now)
		keepalive_fire(c);
	if (c->state != TCP_CLOSED)
		tcp_output(c);
}
