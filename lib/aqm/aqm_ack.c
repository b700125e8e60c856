/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ACK filter: on an asymmetric link the upstream carries the downloads'
 * pure ACKs. When a newer pure ACK of a connection arrives while an older
 * one still waits in the same flow queue, the older one tells the sender
 * nothing the newer one does not, so it can go (the idea of CAKE's ACK
 * filter). Only the flow queue's tail is considered: the newer ACK then
 * takes the older one's place at the end of the queue, so nothing is
 * reordered and the newest ACK is always kept.
 */
#include <string.h>

#include "aqm_priv.h"
#include "pkt_tcpopt.h"

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_ACK 0x10
#define TCP_URG 0x20

#define OPT_SACK 5
#define OPT_TS 8

#define MAX_SACK 4

/* What the rule compares, read from a pure ACK's headers. */
struct ack_info {
	uint32_t ack;
	uint32_t tsval;
	uint32_t tsecr;
	uint32_t sack[MAX_SACK][2]; /* left, right edge */
	uint16_t win;
	uint8_t flags;  /* TCP byte 13 */
	uint8_t flags4; /* low nibble of TCP byte 12: AE and reserved bits */
	uint8_t tos;    /* IPv4 TOS or IPv6 traffic class */
	uint8_t has_ts;
	uint8_t nsack;
};

static inline bool
seq_le(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) <= 0;
}

/* a is b or less than half the number space after it (RFC 1982): at
 * exactly half, neither is after the other. */
static inline bool
seq_at_or_after(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) >= 0;
}

/*
 * The furthest a newer ACK can be ahead of an older one still queued
 * here: the sender has seen neither, so it has at most one window in
 * flight beyond the older, and a window is at most 2^30 bytes (RFC 7323
 * s. 2.2). An ACK further ahead acks data never sent; a sender drops it.
 */
#define ACK_ADVANCE_MAX (1u << 30)

/* A pure ACK's fields; false if m is not a pure ACK the filter may touch. */
static bool
ack_parse(const struct rte_mbuf *m, struct ack_info *a)
{
	const struct pkt_meta *meta = pkt_meta((struct rte_mbuf *)(uintptr_t)m);
	const uint8_t *d, *t;

	if (meta->l4_proto != 6 /* TCP */ ||
	    (meta->flags & (PKT_F_L4 | PKT_F_MALFORMED | PKT_F_FRAGMENT)) != PKT_F_L4)
		return false;
	/* No payload: the IP datagram ends where the TCP header does. */
	if ((uint32_t)meta->l3_off + meta->l3_len != meta->payload_off ||
	    meta->payload_off > rte_pktmbuf_data_len(m) || meta->l4_len < 20)
		return false;
	d = rte_pktmbuf_mtod(m, const uint8_t *);
	t = d + meta->l4_off;
	a->flags = t[13];
	if ((a->flags & (TCP_FIN | TCP_SYN | TCP_RST | TCP_URG | TCP_ACK)) != TCP_ACK)
		return false;
	a->flags4 = t[12] & 0x0f;
	a->ack = pkt_rd32(t + 8);
	a->win = (uint16_t)(t[14] << 8 | t[15]);
	if (meta->l3 == PKT_L3_IPV4)
		a->tos = d[meta->l3_off + 1];
	else
		a->tos = (uint8_t)((d[meta->l3_off] & 0x0f) << 4 | d[meta->l3_off + 1] >> 4);
	a->has_ts = 0;
	a->tsval = a->tsecr = 0;
	a->nsack = 0;
	for (uint32_t i = 20;;) {
		uint8_t len;
		int kind = pkt_tcpopt_next(t, meta->l4_len, &i, &len);
		const uint8_t *o = t + i;

		if (kind == PKT_TCPOPT_END)
			break;
		if (kind == PKT_TCPOPT_BAD)
			return false;
		if (kind == OPT_TS && len == 10 && !a->has_ts) {
			a->has_ts = 1;
			a->tsval = pkt_rd32(o + 2);
			a->tsecr = pkt_rd32(o + 6);
		} else if (kind == OPT_SACK && len >= 10 && (len - 2) % 8 == 0 &&
			   (len - 2) / 8 <= MAX_SACK && a->nsack == 0) {
			a->nsack = (uint8_t)((len - 2) / 8);
			for (unsigned int k = 0; k < a->nsack; k++) {
				a->sack[k][0] = pkt_rd32(o + 2 + 8 * k);
				a->sack[k][1] = pkt_rd32(o + 6 + 8 * k);
			}
		} else {
			/* Anything else (MPTCP, TCP-AO, MD5, experiments, a
			 * second TS or SACK) may carry what we cannot judge. */
			return false;
		}
		i += len;
	}
	return true;
}

bool
aqm_ack_is_pure(const struct rte_mbuf *m)
{
	struct ack_info a;

	return ack_parse(m, &a);
}

static bool
same_connection(const struct pkt_meta *x, const struct pkt_meta *y)
{
	size_t alen = x->l3 == PKT_L3_IPV4 ? 4 : 16;

	return x->l3 == y->l3 && x->sport == y->sport && x->dport == y->dport &&
	       x->vlan_count == y->vlan_count &&
	       (x->vlan_count == 0 || x->vlan_tci[0] == y->vlan_tci[0]) &&
	       (x->vlan_count < 2 || x->vlan_tci[1] == y->vlan_tci[1]) &&
	       memcmp(x->src, y->src, alen) == 0 && memcmp(x->dst, y->dst, alen) == 0;
}

/*
 * Is [l, r) a SACK block a sender takes for data received above ack: not
 * empty, starting at or after ack, ending at most a window (2^30) past
 * it? Offsets from ack keep this exact across wrap. A block below the ACK
 * is a D-SACK (RFC 2883 s. 4); an empty, inverted or far block is one no
 * sender could have sent data for, and it ignores it.
 */
static inline bool
block_sane(uint32_t ack, uint32_t l, uint32_t r)
{
	return l - ack < r - ack && r - ack <= ACK_ADVANCE_MAX;
}

/* Is a's first block inside its second: a D-SACK above the ACK? */
static inline bool
first_inside_second(const struct ack_info *a)
{
	return a->nsack > 1 && seq_le(a->sack[1][0], a->sack[0][0]) &&
	       seq_le(a->sack[0][1], a->sack[1][1]);
}

/*
 * Does a carry a D-SACK (RFC 2883 s. 4), or a block we cannot judge? The
 * duplicate is reported in the first block, in one of two forms: below
 * the cumulative ACK, or above it and inside the second block (the block
 * that holds the duplicate). Some senders also take a first block whose
 * left edge alone is below the ACK for one. A sender uses a D-SACK to
 * undo a needless retransmission's congestion response and to widen its
 * reordering window, and no later ACK repeats it, so an ACK with one is
 * never dropped. Judged over every block, not only the first: blocks of
 * an ordinary SACK are disjoint and above the ACK, and anything else is
 * not ours to judge.
 */
static bool
has_dsack(const struct ack_info *a)
{
	for (unsigned int i = 0; i < a->nsack; i++) {
		uint32_t l = a->sack[i][0], r = a->sack[i][1];

		if (!block_sane(a->ack, l, r))
			return true;
		for (unsigned int j = 0; j < a->nsack; j++)
			if (j != i && a->sack[j][0] - a->ack <= l - a->ack &&
			    r - a->ack <= a->sack[j][1] - a->ack)
				return true;
	}
	return false;
}

/*
 * Is [l, r) of older known to the sender from n's cumulative ACK or SACK?
 * Only n's blocks a sender takes for new data count: not one below n's
 * ACK or inside the next (a D-SACK, whose data a sender need not mark
 * SACKed), nor one it ignores.
 */
static bool
block_covered(const struct ack_info *n, uint32_t l, uint32_t r)
{
	if (seq_le(r, n->ack))
		return true;
	for (unsigned int i = 0; i < n->nsack; i++) {
		if (i == 0 && first_inside_second(n))
			continue;
		if (block_sane(n->ack, n->sack[i][0], n->sack[i][1]) &&
		    seq_le(n->sack[i][0], l) && seq_le(r, n->sack[i][1]))
			return true;
	}
	return false;
}

bool
aqm_ack_supersedes(const struct rte_mbuf *newer, const struct rte_mbuf *older)
{
	struct ack_info n, o;

	if (!ack_parse(newer, &n) || !ack_parse(older, &o))
		return false;
	if (!same_connection(pkt_meta((struct rte_mbuf *)(uintptr_t)newer),
			     pkt_meta((struct rte_mbuf *)(uintptr_t)older)))
		return false;
	if (n.flags != o.flags || n.flags4 != o.flags4 || n.tos != o.tos ||
	    n.has_ts != o.has_ts)
		return false;
	if (n.has_ts &&
	    (!seq_at_or_after(n.tsval, o.tsval) || !seq_at_or_after(n.tsecr, o.tsecr)))
		return false;
	if (n.ack - o.ack > ACK_ADVANCE_MAX) /* behind (wraps), or too far ahead */
		return false;
	if (n.ack == o.ack && (n.nsack == 0 || n.win < o.win))
		return false;
	if (has_dsack(&o))
		return false;
	for (unsigned int i = 0; i < o.nsack; i++)
		if (!block_covered(&n, o.sack[i][0], o.sack[i][1]))
			return false;
	return true;
}

/* Predecessors walked to unlink a tail that is not the head. */
#define ACK_FILTER_SCAN 64

bool
aqm_ack_filter(struct aqm_sched *s, struct aqm_pipe *p, struct aqm_flow *f,
	       const struct rte_mbuf *m)
{
	struct rte_mbuf *old = f->tail, *prev = NULL;
	uint32_t len;

	if (old == NULL || !aqm_ack_supersedes(m, old))
		return false;
	if (f->head != old) {
		struct rte_mbuf *x = f->head;

		for (unsigned int i = 0; i < ACK_FILTER_SCAN && x != NULL; i++) {
			struct rte_mbuf *next = *aqm_link(s, x);

			if (next == old) {
				prev = x;
				break;
			}
			x = next;
		}
		if (prev == NULL)
			return false; /* too deep a queue to walk: keep it */
		*aqm_link(s, prev) = NULL;
		f->tail = prev;
	} else {
		f->head = f->tail = NULL;
	}
	len = rte_pktmbuf_pkt_len(old);
	f->backlog -= len;
	p->backlog_pkts--;
	p->backlog_bytes -= len;
	p->mem -= aqm_truesize(old);
	s->pending--;
	p->st.ack_filtered++;
	rte_pktmbuf_free(old);
	return true;
}
