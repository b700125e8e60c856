/* SPDX-License-Identifier: BSD-3-Clause */
/* Sending: data and FIN within min(cwnd, SND.WND), ACKs with the receive
 * window, retransmission and persist timers (RFC 9293, RFC 6298). */

#include "tcp_impl.h"

#define MIN2(a, b) ((a) < (b) ? (a) : (b))
#define MAX2(a, b) ((a) > (b) ? (a) : (b))

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

/* Receive window = free receive buffer, so a slow reader closes it. */
uint32_t
tcp_rcv_window(const struct tcp_conn *c)
{
	uint32_t lim = c->eng->p.rcv_buf;

	return c->rcvq.bytes >= lim ? 0 : lim - c->rcvq.bytes;
}

/* The window field to announce, moving rcv_adv (the right edge) forward
 * only by at least min(RCV.BUFF/2, MSS) (receiver SWS avoidance, RFC 9293
 * 3.8.6.2.2) and never backward (3.8.6.2.2: do not shrink). */
static uint16_t
announce_window(struct tcp_conn *c, int syn)
{
	uint32_t w = tcp_rcv_window(c);
	uint32_t edge = c->rcv_nxt + w;
	uint32_t shift = syn || c->rcv_wscale == 0xff ? 0 : c->rcv_wscale;
	uint32_t thresh = MIN2(c->eng->p.rcv_buf / 2, c->rcv_mss);
	uint32_t ad, field;

	if (tcp_seq_gt(edge, c->rcv_adv) &&
	    (edge - c->rcv_adv >= thresh || tcp_seq_le(c->rcv_adv, c->rcv_nxt)))
		c->rcv_adv = edge;
	if (tcp_seq_lt(c->rcv_adv, c->rcv_nxt))
		c->rcv_adv = c->rcv_nxt;
	ad = c->rcv_adv - c->rcv_nxt;
	field = ad >> shift;
	if (field > 0xffff)
		field = 0xffff;
	return (uint16_t)field;
}

static void
hdr_init(struct tcp_conn *c, struct tcp_seg_out *o, uint32_t seq, uint8_t flags)
{
	o->seq = seq;
	o->flags = flags;
	o->opts = 0;
	o->nsack = 0;
	if (flags & TCP_FL_ACK) {
		o->ack = c->rcv_nxt;
		c->flags &= ~TCP_CF_ACK_NOW;
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
	if ((c->flags & TCP_CF_SACK) && c->ooo_n && (flags & TCP_FL_ACK) &&
	    !(flags & TCP_FL_SYN)) {
		/* RFC 2018 4: the first block holds the latest segment. */
		unsigned int max = (c->flags & TCP_CF_TS) ? 3 : 4, first = 0;

		for (unsigned int i = 0; i < c->ooo_n; i++)
			if (c->ooo[i].seq == c->ooo_recent)
				first = i;
		o->sack[o->nsack].left = c->ooo[first].seq;
		o->sack[o->nsack++].right = c->ooo[first].seq + c->ooo[first].q.bytes;
		for (unsigned int i = 0; i < c->ooo_n && o->nsack < max; i++) {
			if (i == first)
				continue;
			o->sack[o->nsack].left = c->ooo[i].seq;
			o->sack[o->nsack++].right = c->ooo[i].seq + c->ooo[i].q.bytes;
		}
		o->opts |= TCP_SO_SACK;
	}
}

static int
emit(struct tcp_conn *c, const struct tcp_seg_out *o, uint32_t off, uint32_t len)
{
	struct tcp_engine *e = c->eng;
	struct rte_mbuf *m;

	m = tcp_seg_build(e->p.pool, &c->ep, o, c->sndq.head, off, len);
	if (m == NULL) {
		TCP_CNT(e, MBUF_ALLOC_FAIL);
		return -1;
	}
	tcp_txq_push(e, m);
	return 0;
}

void
tcp_send_syn(struct tcp_conn *c)
{
	struct tcp_engine *e = c->eng;
	struct tcp_seg_out o;
	int passive = c->state == TCP_SYN_RECEIVED;

	hdr_init(c, &o, c->iss, passive ? TCP_FL_SYN | TCP_FL_ACK : TCP_FL_SYN);
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
	emit(c, &o, 0, 0);
}

void
tcp_send_ack(struct tcp_conn *c)
{
	struct tcp_seg_out o;

	hdr_init(c, &o, c->snd_nxt, TCP_FL_ACK);
	emit(c, &o, 0, 0);
}

void
tcp_send_rst(struct tcp_conn *c)
{
	struct tcp_seg_out o;

	hdr_init(c, &o, c->snd_max, TCP_FL_RST | TCP_FL_ACK);
	o.opts &= (uint8_t)~TCP_SO_SACK;
	o.nsack = 0;
	o.wnd = 0;
	emit(c, &o, 0, 0);
	TCP_CNT(c->eng, RST_SENT);
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

/* Send [seq, seq+len) of the send buffer (or the FIN at fin_seq). */
static int
xmit(struct tcp_conn *c, uint32_t seq, uint32_t len, int fin)
{
	struct tcp_seg_out o;
	uint8_t flags = TCP_FL_ACK;

	if (fin)
		flags |= TCP_FL_FIN;
	if (len && seq + len == c->snd_una + c->sndq.bytes)
		flags |= TCP_FL_PSH;
	hdr_init(c, &o, seq, flags);
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
	}
	return emit(c, &o, seq - c->snd_una, len);
}

/* Retransmit the segment starting at SND.UNA. */
void
tcp_retransmit_una(struct tcp_conn *c)
{
	uint32_t off_end = c->sndq.bytes;
	uint32_t len = MIN2(off_end, (uint32_t)c->mss);
	int fin = 0;

	if (len > c->snd_max - c->snd_una)
		len = c->snd_max - c->snd_una;
	if ((c->flags & TCP_CF_FIN_SENT) && c->snd_una + len == c->fin_seq &&
	    len < c->mss)
		fin = 1;
	if ((c->flags & TCP_CF_FIN_SENT) && len == 0 && c->snd_una == c->fin_seq)
		fin = 1;
	if (len == 0 && !fin)
		return;
	xmit(c, c->snd_una, len, fin);
	if (tcp_seq_lt(c->snd_nxt, c->snd_una + len + fin))
		c->snd_nxt = c->snd_una + len + fin;
}

static int
sendable_state(uint8_t st)
{
	return st == TCP_ESTABLISHED || st == TCP_CLOSE_WAIT ||
	       st == TCP_FIN_WAIT_1 || st == TCP_CLOSING || st == TCP_LAST_ACK;
}

/* RFC 6675 4: the sender's estimate of bytes in the network. Any hole
 * below SACKed data counts as lost (so only its retransmitted part is in
 * the pipe); bytes above the highest SACK are in flight. */
static uint32_t
sack_pipe(const struct tcp_conn *c)
{
	uint32_t pipe = 0, start = c->snd_una;

	for (unsigned int i = 0; i < c->nsacked; i++) {
		uint32_t hole_end = c->sacked[i].left;
		uint32_t rx_end = tcp_seq_lt(c->rtx_hi, hole_end) ? c->rtx_hi : hole_end;

		if (tcp_seq_gt(rx_end, start))
			pipe += rx_end - start;
		start = c->sacked[i].right;
	}
	if (tcp_seq_gt(c->snd_nxt, start))
		pipe += c->snd_nxt - start;
	return pipe;
}

/* RFC 6675 NextSeg rule 1: the first lost byte not yet retransmitted. */
static int
sack_next_hole(const struct tcp_conn *c, uint32_t *seq, uint32_t *len)
{
	uint32_t start = c->snd_una;

	for (unsigned int i = 0; i < c->nsacked; i++) {
		uint32_t x = tcp_seq_gt(c->rtx_hi, start) ? c->rtx_hi : start;

		if (tcp_seq_lt(x, c->sacked[i].left)) {
			*seq = x;
			*len = MIN2(c->sacked[i].left - x, (uint32_t)c->mss);
			return 1;
		}
		start = c->sacked[i].right;
	}
	return 0;
}

void
tcp_output(struct tcp_conn *c)
{
	struct tcp_engine *e = c->eng;
	int sent = 0, blocked = 0;
	int sack_rec = (c->flags & (TCP_CF_IN_RECOVERY | TCP_CF_SACK)) ==
		       (TCP_CF_IN_RECOVERY | TCP_CF_SACK);
	uint32_t inflight;

	if (!sendable_state(c->state)) {
		if ((c->flags & TCP_CF_ACK_NOW) && c->state != TCP_SYN_SENT &&
		    c->state != TCP_CLOSED)
			tcp_send_ack(c);
		return;
	}
	inflight = sack_rec ? sack_pipe(c) : c->snd_nxt - c->snd_una;
	if (sack_rec) {
		uint32_t seq, len;

		/* Retransmit lost holes first while the pipe has room. */
		while (inflight < c->cc.cwnd && sack_next_hole(c, &seq, &len)) {
			if (xmit(c, seq, len, 0) != 0)
				break;
			c->rtx_hi = seq + len;
			inflight += len;
			sent = 1;
		}
	}
	for (;;) {
		uint32_t off = c->snd_nxt - c->snd_una;
		uint32_t wnd = MIN2(c->snd_wnd, c->cc.cwnd);
		uint32_t avail, len;
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
			len = MIN2(avail, (uint32_t)c->mss);
			len = MIN2(len, wnd - inflight);
			len = MIN2(len, c->snd_wnd - off);
			/* Sender SWS avoidance (RFC 9293 3.8.6.2.1); no Nagle:
			 * the proxy relays what it has as soon as it can. */
			if (len < c->mss && len < avail && len < c->max_snd_wnd / 2 &&
			    !(c->flags & TCP_CF_FORCE)) {
				blocked = 1;
				break;
			}
			if (len == avail && (c->flags & TCP_CF_FIN_QUEUED))
				fin = 1;
		}
		if (fin && !(c->flags & TCP_CF_FIN_SENT)) {
			c->flags |= TCP_CF_FIN_SENT;
			c->fin_seq = c->snd_nxt + len;
		}
		if (xmit(c, c->snd_nxt, len, fin) != 0)
			break;
		sent = 1;
		if (!(c->flags & TCP_CF_RTT_TIMING) && tcp_seq_ge(c->snd_nxt, c->snd_max) &&
		    !(c->flags & TCP_CF_TS)) {
			c->flags |= TCP_CF_RTT_TIMING;
			c->rtt_seq = c->snd_nxt + len + fin;
			c->rtt_ts = e->now;
		}
		c->snd_nxt += len + fin;
		inflight += len + fin;
		if (tcp_seq_gt(c->snd_nxt, c->snd_max))
			c->snd_max = c->snd_nxt;
		if (c->rtx_at == 0 || (c->flags & TCP_CF_PERSIST))
			tcp_rto_arm(c);
		if (fin)
			break;
	}
	if (sent && c->rtx_at == 0)
		tcp_rto_arm(c);
	if (!sent && (c->flags & TCP_CF_ACK_NOW))
		tcp_send_ack(c);
	c->flags &= ~TCP_CF_FORCE;
	/* Blocked by the peer's window with nothing in flight: a zero window
	 * needs probes to learn that it opened (RFC 9293 3.8.6.1), a small
	 * one the SWS override timeout (3.8.6.2.1). */
	if (blocked && c->snd_max == c->snd_una && c->rtx_at == 0 &&
	    c->snd_wnd < c->mss) {
		c->flags |= TCP_CF_PERSIST;
		c->rtx_at = e->now + rto_backed_off(c);
		tcp_timer_update(c);
	}
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
	if (c->flags & TCP_CF_PERSIST) {
		/* Zero-window probe: an old sequence number makes the peer
		 * answer with an ACK carrying its current window. */
		struct tcp_seg_out o;

		hdr_init(c, &o, c->snd_una - 1, TCP_FL_ACK);
		emit(c, &o, 0, 0);
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
		/* RFC 5681 3.1 eq. 4 and loss window; RFC 2018 8: forget
		 * SACK information after a timeout; go back to SND.UNA. */
		e->cc->on_rto(&c->cc, tcp_flight(c), e->now);
		c->flags &= ~(TCP_CF_IN_RECOVERY | TCP_CF_RTT_TIMING);
		c->nsacked = 0;
		c->dupacks = 0;
		c->recover = c->snd_max;
		c->snd_nxt = c->snd_una;
		tcp_retransmit_una(c);
	}
	tcp_rto_arm(c);
}

void
tcp_timer_fire(struct tcp_conn *c)
{
	uint64_t now = c->eng->now;

	if (c->delack_at != 0 && c->delack_at <= now) {
		c->delack_at = 0;
		if (c->state != TCP_CLOSED && c->state != TCP_SYN_SENT) {
			TCP_CNT(c->eng, DELACK);
			tcp_send_ack(c);
		}
	}
	if (c->rtx_at != 0 && c->rtx_at <= now)
		rtx_fire(c);
	if (c->state != TCP_CLOSED)
		tcp_output(c);
}
