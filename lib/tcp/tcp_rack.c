/* SPDX-License-Identifier: BSD-3-Clause */
/* The retransmission queue: SACK scoreboard (RFC 6675), RACK loss
 * detection (RFC 8985 6) and the pipe estimate. */

#include "tcp_impl.h"

#define MIN2(a, b) ((a) < (b) ? (a) : (b))

void
tcp_rq_init(struct tcp_engine *e)
{
	uint32_t n = e->p.max_tx_segments;

	for (uint32_t i = 0; i < n; i++)
		e->recs[i].next = i + 1 < n ? i + 1 : TCP_TR_NONE;
	e->rec_free = n ? 0 : TCP_TR_NONE;
}

int
tcp_rq_add(struct tcp_conn *c, uint32_t seq, uint32_t end, int fin)
{
	struct tcp_engine *e = c->eng;
	uint32_t i = e->rec_free;
	struct tcp_txrec *r;

	if (i == TCP_TR_NONE) {
		TCP_CNT(e, TXREC_FULL);
		return -1;
	}
	/* One connection writing tiny segments must not take the pool. */
	if (c->rq_count >= e->p.max_conn_tx_segments) {
		TCP_CNT(e, TXREC_CONN_CAP);
		return -1;
	}
	c->rq_count++;
	r = &e->recs[i];
	e->rec_free = r->next;
	r->seq = seq;
	r->end = end;
	r->xmit_ns = tcp_xmit_clock(e);
	r->next = TCP_TR_NONE;
	r->flags = fin ? TCP_TR_FIN : 0;
	if (c->rq_tail != TCP_TR_NONE)
		e->recs[c->rq_tail].next = i;
	else
		c->rq_head = i;
	c->rq_tail = i;
	return 0;
}

static void
rec_release(struct tcp_engine *e, uint32_t i)
{
	e->recs[i].next = e->rec_free;
	e->rec_free = i;
}

void
tcp_rq_free_all(struct tcp_conn *c)
{
	uint32_t i = c->rq_head;

	while (i != TCP_TR_NONE) {
		uint32_t next = c->eng->recs[i].next;

		rec_release(c->eng, i);
		i = next;
	}
	c->rq_count = 0;
	c->rq_head = c->rq_tail = TCP_TR_NONE;
	c->sacked_bytes = 0;
}

struct tcp_txrec *
tcp_rq_last(struct tcp_conn *c)
{
	return tcp_rec(c->eng, c->rq_tail);
}

/* RACK_sent_after (RFC 8985 6.2 step 2). */
static inline int
sent_after(uint64_t t1, uint32_t seq1, uint64_t t2, uint32_t seq2)
{
	return t1 > t2 || (t1 == t2 && tcp_seq_gt(seq1, seq2));
}

/* RFC 8985 6.2 steps 2 and 3, for one segment delivered by this ACK;
 * cum: delivered by the cumulative ACK, not by a SACK block. */
static void
rack_update(struct tcp_conn *c, const struct tcp_txrec *r, const struct tcp_seg_in *s,
	    int cum)
{
	uint64_t now = c->eng->now;
	uint64_t rtt = now - r->xmit_ns;

	if (r->flags & TCP_TR_RETRANS) {
		/* Ambiguous: was the original delivered, or the
		 * retransmission? An RTT below the minimum says the
		 * original. So does a cumulative ACK whose TSecr is older
		 * than the retransmission: it echoes the segment that
		 * filled the hole (RFC 7323 4.3), sent before. Taking the
		 * resend time as RACK.xmit_ts there would mark everything
		 * sent before it and still in flight lost at once. (For
		 * SACKed data the TSecr echoes an older in-order segment
		 * and tells nothing.) The timestamp is tcp_ts_now()'s
		 * clock at the resend. */
		if (c->min_rtt_ns && rtt < c->min_rtt_ns)
			return;
		if (cum && (c->flags & TCP_CF_TS) && (s->opts & TCP_SO_TS) &&
		    (int32_t)(s->tsecr - ((uint32_t)(r->xmit_ns / 1000000) + c->ts_off)) < 0)
			return;
	}
	if (c->min_rtt_ns == 0 || rtt < c->min_rtt_ns)
		c->min_rtt_ns = rtt;
	c->rack_rtt_ns = rtt;
	if (sent_after(r->xmit_ns, r->end, c->rack_xmit_ns, c->rack_end)) {
		c->rack_xmit_ns = r->xmit_ns;
		c->rack_end = r->end;
	}
	/* Step 3: delivered below the highest delivered, never resent:
	 * the network reordered. */
	if (tcp_seq_lt(r->end, c->rack_fack) && !(r->flags & TCP_TR_RETRANS)) {
		c->flags |= TCP_CF_REORDER;
	}
	if (tcp_seq_gt(r->end, c->rack_fack))
		c->rack_fack = r->end;
}

void
tcp_rq_ack(struct tcp_conn *c, const struct tcp_seg_in *s)
{
	struct tcp_engine *e = c->eng;

	while (c->rq_head != TCP_TR_NONE) {
		struct tcp_txrec *r = &e->recs[c->rq_head];
		uint32_t i = c->rq_head;

		if (tcp_seq_gt(r->end, c->snd_una)) {
			/* Partly acknowledged: keep the rest. */
			if (tcp_seq_gt(c->snd_una, r->seq)) {
				if (r->flags & TCP_TR_SACKED)
					c->sacked_bytes -= c->snd_una - r->seq;
				r->seq = c->snd_una;
			}
			break;
		}
		if (r->flags & TCP_TR_SACKED)
			c->sacked_bytes -= r->end - r->seq;
		else
			rack_update(c, r, s, 1);
		c->rq_head = r->next;
		c->rq_count--;
		rec_release(e, i);
	}
	if (c->rq_head == TCP_TR_NONE)
		c->rq_tail = TCP_TR_NONE;
}

uint32_t
tcp_rq_sack(struct tcp_conn *c, const struct tcp_seg_in *s)
{
	struct tcp_engine *e = c->eng;
	uint32_t added = 0;

	if (!(c->flags & TCP_CF_SACK) || !(s->opts & TCP_SO_SACK))
		return 0;
	/* RFC 2883 4: a first block below the cumulative ACK, or inside the
	 * second block, reports a duplicate: we retransmitted needlessly
	 * (RFC 8985 6.2 step 4 widens the reordering window). */
	if (s->nsack > 0 &&
	    (tcp_seq_le(s->sack[0].right, s->ack) ||
	     (s->nsack > 1 && tcp_seq_ge(s->sack[0].left, s->sack[1].left) &&
	      tcp_seq_le(s->sack[0].right, s->sack[1].right)))) {
		TCP_CNT(e, DSACK_RECEIVED);
		if ((c->flags & TCP_CF_DSACK_RND) && tcp_seq_ge(c->snd_una, c->dsack_round))
			c->flags &= ~TCP_CF_DSACK_RND;
		if (!(c->flags & TCP_CF_DSACK_RND)) {
			c->flags |= TCP_CF_DSACK_RND;
			c->dsack_round = c->snd_max;
			if (c->reo_wnd_mult < 255)
				c->reo_wnd_mult++;
			c->reo_wnd_persist = 16;
		}
	}
	for (unsigned int b = 0; b < s->nsack; b++) {
		uint32_t left = s->sack[b].left, right = s->sack[b].right;

		/* Only blocks inside (SND.UNA, SND.MAX]; D-SACKs (RFC 2883)
		 * below SND.UNA are ignored. */
		if (!tcp_seq_lt(left, right) || tcp_seq_le(right, c->snd_una) ||
		    tcp_seq_gt(right, c->snd_max))
			continue;
		for (uint32_t i = c->rq_head; i != TCP_TR_NONE; i = e->recs[i].next) {
			struct tcp_txrec *r = &e->recs[i];

			if (tcp_seq_ge(r->seq, right))
				break;
			if ((r->flags & TCP_TR_SACKED) || tcp_seq_lt(r->seq, left) ||
			    tcp_seq_gt(r->end, right))
				continue;
			r->flags |= TCP_TR_SACKED;
			r->flags &= ~TCP_TR_LOST;
			c->sacked_bytes += r->end - r->seq;
			added += r->end - r->seq;
			rack_update(c, r, s, 0);
		}
	}
	return added;
}

/* RFC 6675 4 with RACK's marks: SACKed and lost-not-resent segments are
 * out of the network, everything else is in it. */
uint32_t
tcp_rq_pipe(const struct tcp_conn *c)
{
	const struct tcp_engine *e = c->eng;
	uint32_t pipe = 0;

	for (uint32_t i = c->rq_head; i != TCP_TR_NONE; i = e->recs[i].next) {
		const struct tcp_txrec *r = &e->recs[i];

		if (!(r->flags & (TCP_TR_SACKED | TCP_TR_LOST)))
			pipe += r->end - r->seq;
	}
	return pipe;
}

void
tcp_rq_mark_all_lost(struct tcp_conn *c)
{
	struct tcp_engine *e = c->eng;

	for (uint32_t i = c->rq_head; i != TCP_TR_NONE; i = e->recs[i].next)
		if (!(e->recs[i].flags & TCP_TR_SACKED))
			e->recs[i].flags |= TCP_TR_LOST;
	c->flags |= TCP_CF_HAS_LOST;
}

void
tcp_rq_unmark_lost(struct tcp_conn *c)
{
	struct tcp_engine *e = c->eng;

	for (uint32_t i = c->rq_head; i != TCP_TR_NONE; i = e->recs[i].next)
		e->recs[i].flags &= ~TCP_TR_LOST;
}

void
tcp_rq_mark_head_lost(struct tcp_conn *c)
{
	struct tcp_txrec *r = tcp_rec(c->eng, c->rq_head);

	if (r != NULL && !(r->flags & TCP_TR_SACKED)) {
		r->flags |= TCP_TR_LOST;
		c->flags |= TCP_CF_HAS_LOST;
	}
}

/* RACK_detect_loss (RFC 8985 6.2 steps 4 and 5). Returns the segments
 * newly marked lost and arms the reordering timer for the others. */
uint32_t
tcp_rack_detect(struct tcp_conn *c)
{
	struct tcp_engine *e = c->eng;
	uint64_t now = e->now, reo_wnd, timeout = 0;
	uint32_t lost = 0;

	if (c->rack_xmit_ns == 0)
		return 0;
	/* Step 4: no reordering seen and either in recovery or DupThresh
	 * segments SACKed: no reordering window, as with RFC 6675. */
	if (!(c->flags & TCP_CF_REORDER) &&
	    ((c->flags & TCP_CF_IN_RECOVERY) || c->sacked_bytes >= 3u * c->mss))
		reo_wnd = 0;
	else
		reo_wnd = MIN2(c->min_rtt_ns / 4 * c->reo_wnd_mult,
			       c->srtt_ns ? c->srtt_ns : c->min_rtt_ns);
	c->rack_at = 0;
	for (uint32_t i = c->rq_head; i != TCP_TR_NONE; i = e->recs[i].next) {
		struct tcp_txrec *r = &e->recs[i];
		uint64_t deadline;

		if (r->flags & (TCP_TR_SACKED | TCP_TR_LOST))
			continue;
		if (!sent_after(c->rack_xmit_ns, c->rack_end, r->xmit_ns, r->end))
			continue;
		deadline = r->xmit_ns + c->rack_rtt_ns + reo_wnd;
		if (deadline <= now) {
			r->flags |= TCP_TR_LOST;
			c->flags |= TCP_CF_HAS_LOST;
			lost++;
			TCP_CNT(e, RACK_LOST);
		} else if (deadline - now > timeout) {
			timeout = deadline - now;
		}
	}
	if (timeout)
		c->rack_at = now + timeout;
	return lost;
}
