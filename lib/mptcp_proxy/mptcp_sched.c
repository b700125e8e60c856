/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which subflow carries the next bytes of an MPTCP connection.
 *
 * The scheduler hands out chunks of the connection's send queue, each
 * one DSS mapping of at most MPTCP_CHUNK_MAX bytes, as indirect mbufs
 * (the queue keeps the payload until DATA_ACK; the subflow's clones go
 * when the subflow is acknowledged). Bytes to send again (reinjection)
 * go before new ones.
 *
 * The subflow: among the established ones that are neither stale (a
 * retransmission timeout in a row) nor dead, with a free mapping slot,
 * nothing queued unsent and room in its windows now, the one with the
 * lowest smoothed RTT; the chunk is what that room lets out at once
 * (tcp_conn_send_room()) in whole segments, and a subflow with less
 * room than a segment and data in flight waits for its ACKs. Backup subflows
 * (MP_JOIN B flag, MP_PRIO) are used only when no active subflow is
 * left or every one is stale, never because active ones lack room.
 * A subflow whose window is full gets nothing until its ACKs open it
 * (the writable hook and every ACK bring us back), so no data waits in
 * a slow subflow's queue while a faster one could send it; what a
 * subflow holds in flight goes out again on the others once it turns
 * stale.
 *
 * Congestion control is coupled (LIA, RFC 6356) through the connection's
 * tcp_cc_group: subflows join it when established.
 */
#include <errno.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "proxy_priv.h"

/* New bytes the subflow takes now: what its windows let out at once, and
 * only once everything queued before went out, so that no segment spans
 * two chunks (two mappings; tcp_conn_unsent()). 0: not now. Less than a
 * full segment of room counts only with nothing in flight: otherwise
 * the ACKs on their way open more (the writable hook brings us back),
 * and a segment queued now would wait in this subflow while another
 * could send it.
 *
 * A join carries one segment until the client shows it holds the
 * subflow fully established (SF_JOIN_SEEN). Until then Linux resets a
 * join on any segment from us that does not start at the first
 * sequence (RFC 8684 3.2 forbids the joining host to send data before
 * the fourth ACK, and the kernel takes a gap as that breach): a burst
 * whose head was lost or overtaken cost the join. One segment at the
 * first sequence, resent at the same one, cannot. */
static uint32_t
sf_budget(const struct mptcp_subflow *sf)
{
	uint32_t room, mss;

	if (sf->tx_n >= MPTCP_TX_MAPS || tcp_conn_unsent(sf->c) != 0)
		return 0;
	room = tcp_conn_send_room(sf->c);
	mss = tcp_conn_data_mss(sf->c);
	if (room < mss && mptcp_sf_sent_unacked(sf) != 0)
		return 0;
	if (mptcp_sf_join_unseen(sf))
		return mptcp_sf_join_waits(sf) ? 0 : RTE_MIN(room, mss);
	return room;
}

/* n cut down to whole segments of seg bytes; n itself if under one.
 *
 * A chunk is one mapping and no segment spans two, so a chunk's last
 * segment is short unless the chunk is a multiple of the subflow's data
 * payload, which is its MSS less the DSS: cut at the window's byte count
 * (whole MSS, 1,448) a chunk of n MSS left as n segments of 1,420 bytes
 * and one of 28 n, a fifth of the frames on a shaped path, each paying
 * its headers on the link. Only the end of what is queued goes short. */
static inline uint32_t
whole_segs(uint32_t n, uint32_t seg)
{
	return n < seg ? n : n - n % seg;
}

/* Whether sf may send a short segment now: the client acknowledged its
 * last one (Minshall's refinement of Nagle's rule, RFC 1122 4.2.3.4 and
 * draft-minshall-nagle), or no more data comes (DATA_FIN asked). The
 * server's bytes arrive as its window opens, a few segments at a time
 * while the subflows' queues are long, and every such piece would
 * otherwise end in a short segment. A held tail waits at most for that
 * ACK, and goes with the next bytes that fill a segment. */
static inline bool
short_ok(const struct mptcp_meta *mt, const struct mptcp_subflow *sf)
{
	return (mt->flags & MT_SND_FIN) ||
	       (int32_t)(sf->short_end_rel - sf->tx_una_rel) <= 0;
}

static bool
usable(const struct mptcp_subflow *sf)
{
	return sf != NULL && sf->c != NULL && (sf->flags & SF_ESTAB) &&
	       !(sf->flags & (SF_DEAD | SF_CLOSED | SF_RESET));
}

static struct mptcp_subflow *
pick(struct mptcp_meta *mt, uint32_t *budget)
{
	struct mptcp_subflow *best = NULL, *bk = NULL;
	uint64_t best_rtt = UINT64_MAX, bk_rtt = UINT64_MAX;
	uint32_t best_b = 0, bk_b = 0;
	bool active_fresh = false; /* an active subflow, not stale */

	for (unsigned i = 0; i < MPTCP_SUBFLOWS_MAX; i++) {
		struct mptcp_subflow *sf = mt->sf[i];
		uint64_t rtt;
		uint32_t b;

		if (!usable(sf) || (sf->flags & SF_STALE))
			continue;
		if (!(sf->flags & SF_BACKUP))
			active_fresh = true;
		b = sf_budget(sf);
		if (b == 0)
			continue;
		rtt = tcp_conn_srtt_ns(sf->c);
		if (rtt == 0)
			rtt = UINT64_MAX / 2; /* no sample yet: last */
		if (sf->flags & SF_BACKUP) {
			if (rtt < bk_rtt) {
				bk = sf;
				bk_rtt = rtt;
				bk_b = b;
			}
		} else if (rtt < best_rtt) {
			best = sf;
			best_rtt = rtt;
			best_b = b;
		}
	}
	/* The backup only when no active subflow is left, or every one
	 * is stale: an active one that merely has no room now is waited
	 * for (its ACKs bring us back). */
	if (best == NULL && !active_fresh) {
		best = bk;
		best_b = bk_b;
	}
	if (best != NULL)
		*budget = best_b;
	return best;
}

static void
push_fallback(struct mptcp_meta *mt, uint64_t now)
{
	struct mptcp_subflow *sf = NULL;

	for (unsigned i = 0; i < MPTCP_SUBFLOWS_MAX && sf == NULL; i++)
		if (usable(mt->sf[i]) && (mt->sf[i]->flags & SF_MPC))
			sf = mt->sf[i];
	while (sf != NULL && mt->snd_nxt < mt->snd_end) {
		uint32_t seg = tcp_conn_data_mss(sf->c);
		uint32_t len = (uint32_t)RTE_MIN(mt->snd_end - mt->snd_nxt,
						 (uint64_t)whole_segs(MPTCP_CHUNK_MAX, seg));
		uint32_t room = tcp_send_space(sf->c, len);
		struct rte_mbuf *m;

		if (room < len)
			len = whole_segs(room, seg);
		if (len == 0)
			break;
		m = mptcp_sq_clone(mt, mt->snd_nxt, len);
		if (m == NULL)
			break;
		if (tcp_send_mbuf(sf->c, m, now) <= 0) {
			rte_pktmbuf_free(m);
			break;
		}
		/* Plain TCP: the subflow's ACK is the connection's. */
		mt->snd_nxt += len;
		sf->tx_end_rel += len;
		mptcp_meta_data_ack(mt, mt->snd_nxt, 0, now);
	}
}

/* Head-of-line blocking (RFC 8684 leaves it to the implementation; the
 * rule of Raiciu et al., NSDI 2012, "opportunistic retransmission and
 * penalisation"): new data waits for the client's data-level window, and
 * the byte at its left edge travels on a subflow that has not delivered
 * it while another one has room now. Send that mapping's bytes again on
 * the other subflow, once per left edge, and penalise the holder: its
 * congestion window is reduced as for a loss, at most once per its RTT.
 * Returns true if a reinjection was set up. */
static bool
hol_reinject(struct mptcp_meta *mt, uint64_t now)
{
	uint64_t edge = mt->snd_una, hi = 0;
	struct mptcp_subflow *holder = NULL, *fast;
	uint32_t budget = 0;

	if (edge >= mt->snd_nxt || edge == mt->hol_dsn)
		return false;
	for (unsigned i = 0; i < MPTCP_SUBFLOWS_MAX && holder == NULL; i++) {
		struct mptcp_subflow *sf = mt->sf[i];

		if (!usable(sf))
			continue;
		for (uint32_t k = 0; k < sf->tx_n; k++) {
			const struct mptcp_map *mp =
				&sf->tx[(sf->tx_first + k) % MPTCP_TX_MAPS];

			if (edge < mp->dsn || edge >= mp->dsn + mp->len)
				continue;
			/* Delivered on the subflow: the client has it, and
			 * its DATA_ACK is on the way. */
			if ((int32_t)(sf->tx_una_rel - mp->ssn -
				      (uint32_t)(edge - mp->dsn)) > 0)
				return false;
			holder = sf;
			hi = mp->dsn + mp->len;
			break;
		}
	}
	if (holder == NULL)
		return false;
	fast = pick(mt, &budget);
	if (fast == NULL || fast == holder)
		return false;
	mt->hol_dsn = edge;
	mt->reinj_lo = edge;
	mt->reinj_hi = RTE_MIN(hi, edge + MPTCP_CHUNK_MAX);
	PX_CNT(mt->px, MPTCP_HOL_REINJECT)++;
	if (now - holder->penal_ns >= tcp_conn_srtt_ns(holder->c) &&
	    tcp_conn_cwnd_reduce(holder->c, now)) {
		holder->penal_ns = now;
		PX_CNT(mt->px, MPTCP_PENALISED)++;
	}
	return true;
}

/* Hand [lo, lo + len) of the send queue to sf as one mapping. Returns
 * what tcp_send_mbuf() returned (<= 0: nothing was handed over). */
static int32_t
send_chunk(struct mptcp_meta *mt, struct mptcp_subflow *sf, uint64_t lo,
	   uint32_t len, uint64_t now)
{
	struct rte_mbuf *m = mptcp_sq_clone(mt, lo, len);
	struct mptcp_map *mp;
	int32_t rc;

	if (m == NULL) {
		PX_CNT(mt->px, MPTCP_NO_MBUF)++;
		return -ENOMEM;
	}
	/* The mapping first: the engine may send at once, and asks the
	 * hook for the segment's DSS. */
	if (mptcp_sf_sent_unacked(sf) == 0) /* its silence counts from here */
		sf->quiet_from = mptcp_watch_ns(mt->px, now);
	mp = &sf->tx[(sf->tx_first + sf->tx_n) % MPTCP_TX_MAPS];
	mp->dsn = lo;
	mp->ssn = sf->tx_end_rel;
	mp->len = (uint16_t)len;
	mp->flags = 0;
	if (mt->flags & MT_CSUM) {
		/* The DSS checksum over the chunk (RFC 8684 3.3.1), once per
		 * mapping: every segment of it repeats it. */
		struct mptcp_csum cs;

		mptcp_dss_csum_start(&cs, lo, mp->ssn, (uint16_t)len);
		for (const struct rte_mbuf *s = m; s != NULL; s = s->next)
			mptcp_dss_csum_add(&cs, rte_pktmbuf_mtod(s, const void *), s->data_len);
		mp->csum = mptcp_dss_csum_final(&cs);
	}
	sf->tx_n++;
	sf->tx_end_rel += len;
	rc = tcp_send_mbuf(sf->c, m, now);
	if (rc <= 0) {
		sf->tx_n--;
		sf->tx_end_rel -= len;
		rte_pktmbuf_free(m);
	}
	return rc;
}

/* Zero-window probe at the data level (RFC 9293 3.8.6.1; RFC 8684
 * 3.3.6 leaves the data level's to the implementation): data waits,
 * nothing is in flight, and the client's windows let nothing out. One
 * new byte goes to the fresh subflow with the lowest RTT that has
 * nothing queued unsent, beyond the windows if need be: with its
 * subflow window open it goes out at once and the client's answer
 * carries its DATA_ACK and window; closed, the subflow's own persist
 * timer probes it. Returns true if the byte was handed over. */
bool
mptcp_sched_probe(struct mptcp_meta *mt, uint64_t now)
{
	struct mptcp_subflow *best = NULL;
	uint64_t best_rtt = UINT64_MAX;

	if (!(mt->flags & MT_ESTAB) || (mt->flags & (MT_ABORTED | MT_FALLBACK)) ||
	    mt->snd_nxt >= mt->snd_end)
		return false;
	for (unsigned i = 0; i < MPTCP_SUBFLOWS_MAX; i++) {
		struct mptcp_subflow *sf = mt->sf[i];
		uint64_t rtt;

		if (!usable(sf) || (sf->flags & SF_STALE) ||
		    sf->tx_n >= MPTCP_TX_MAPS || tcp_conn_unsent(sf->c) != 0 ||
		    mptcp_sf_join_waits(sf))
			continue; /* (a join's first segment only: sf_budget()) */
		rtt = tcp_conn_srtt_ns(sf->c) + ((sf->flags & SF_BACKUP) ? UINT64_MAX / 2 : 0);
		if (rtt < best_rtt) {
			best = sf;
			best_rtt = rtt;
		}
	}
	if (best == NULL || tcp_send_space(best->c, 1) == 0 ||
	    send_chunk(mt, best, mt->snd_nxt, 1, now) <= 0)
		return false;
	mt->snd_nxt++;
	return true;
}

void
mptcp_sched_push(struct mptcp_meta *mt, uint64_t now)
{
	if (!(mt->flags & MT_ESTAB) || (mt->flags & MT_ABORTED))
		return;
	if (mt->flags & MT_FALLBACK) {
		push_fallback(mt, now);
		return;
	}
	for (;;) {
		struct mptcp_subflow *sf;
		uint64_t lo, hi;
		uint32_t budget = 0, len, room, seg;
		bool reinj = false;

		if (mt->reinj_lo < mt->snd_una)
			mt->reinj_lo = RTE_MIN(mt->snd_una, mt->reinj_hi);
		if (mt->reinj_lo < mt->reinj_hi) {
			lo = mt->reinj_lo;
			hi = RTE_MIN(mt->reinj_hi, mt->snd_nxt);
			reinj = true;
			if (lo >= hi) {
				mt->reinj_lo = mt->reinj_hi = mt->snd_una;
				continue;
			}
		} else if (mt->snd_nxt < mt->snd_end && mt->snd_nxt < mt->snd_wnd_end) {
			/* New data only within the client's data-level window:
			 * the subflows' windows together may allow more, and
			 * what lies beyond it the client drops. */
			lo = mt->snd_nxt;
			hi = RTE_MIN(mt->snd_end, mt->snd_wnd_end);
		} else if (mt->snd_nxt < mt->snd_end && hol_reinject(mt, now)) {
			continue; /* the reinjection branch above sends it */
		} else {
			break;
		}
		sf = pick(mt, &budget);
		if (sf == NULL)
			break;
		/* Whole segments (whole_segs()). Less room than one segment
		 * is the client's window about to close (sf_budget()): fill
		 * it exactly, or what does not fit would wait in the subflow,
		 * in flight for the data level, until the window opens. The
		 * end of what is queued goes short only as short_ok() lets
		 * it. */
		seg = tcp_conn_data_mss(sf->c);
		len = (uint32_t)RTE_MIN(hi - lo, (uint64_t)whole_segs(MPTCP_CHUNK_MAX, seg));
		if (budget < len)
			len = whole_segs(budget, seg);
		else if (len % seg != 0 && !reinj && !short_ok(mt, sf))
			len -= len % seg;
		room = tcp_send_space(sf->c, len);
		if (room < len)
			len = whole_segs(room, seg);
		if (len == 0)
			break;
		if (send_chunk(mt, sf, lo, len, now) <= 0)
			break;
		if (len % seg != 0)
			sf->short_end_rel = sf->tx_end_rel;
		if (reinj) {
			PX_CNT(mt->px, MPTCP_REINJECTED) += len;
			mt->reinj_lo = lo + len;
		} else {
			mt->snd_nxt = lo + len;
		}
	}
}

/* What sf was given and the client has not DATA_ACKed goes out again on
 * the other subflows. */
void
mptcp_sched_reinject_sf(struct mptcp_meta *mt, struct mptcp_subflow *sf)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	for (uint32_t k = 0; k < sf->tx_n; k++) {
		const struct mptcp_map *mp = &sf->tx[(sf->tx_first + k) % MPTCP_TX_MAPS];

		if (mp->dsn + mp->len <= mt->snd_una)
			continue;
		lo = RTE_MIN(lo, RTE_MAX(mp->dsn, mt->snd_una));
		hi = RTE_MAX(hi, mp->dsn + mp->len);
	}
	if (lo >= hi)
		return;
	if (mt->reinj_lo < mt->reinj_hi) {
		lo = RTE_MIN(lo, mt->reinj_lo);
		hi = RTE_MAX(hi, mt->reinj_hi);
	}
	mt->reinj_lo = lo;
	mt->reinj_hi = hi;
	mptcp_meta_mark(mt);
}
