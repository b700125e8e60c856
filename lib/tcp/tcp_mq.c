/* SPDX-License-Identifier: BSD-3-Clause */
/* Byte queues on mbuf segments: the send and receive buffers. */

#include <string.h>

#include "tcp_impl.h"

static inline void
mq_count(struct tcp_mq *q, const struct rte_mbuf *m)
{
	q->bytes += m->data_len;
	q->mbufs++;
	q->mem += m->buf_len;
}

static inline void
mq_uncount(struct tcp_mq *q, const struct rte_mbuf *m)
{
	q->mbufs--;
	q->mem -= m->buf_len;
}

void
tcp_mq_append(struct tcp_mq *q, struct rte_mbuf *chain)
{
	struct rte_mbuf *last = chain;

	if (chain == NULL)
		return;
	mq_count(q, chain);
	while (last->next != NULL) {
		last = last->next;
		mq_count(q, last);
	}
	if (q->tail != NULL)
		q->tail->next = chain;
	else
		q->head = chain;
	q->tail = last;
}

void
tcp_mq_concat_raw(struct tcp_mq *q, struct tcp_mq *q2)
{
	if (q2->head == NULL)
		return;
	if (q->tail != NULL)
		q->tail->next = q2->head;
	else
		q->head = q2->head;
	q->tail = q2->tail;
	q->bytes += q2->bytes;
	q->mbufs += q2->mbufs;
	q->mem += q2->mem;
	q2->head = q2->tail = NULL;
	q2->bytes = q2->mbufs = q2->mem = 0;
}

/* Small segments are copied into the tail's free room instead of being
 * kept as mbufs of their own: a peer sending 1-byte segments would
 * otherwise hold a 2 KB mbuf per byte of window (Linux collapses its
 * queues for the same reason). */
#define TCP_MQ_COALESCE_MAX 512

void
tcp_mq_concat(struct tcp_mq *q, struct tcp_mq *q2, uint64_t clear)
{
	struct rte_mbuf *t = q->tail, *m = q2->head;

	if (m != NULL && m->next == NULL && t != NULL && m->data_len <= TCP_MQ_COALESCE_MAX &&
	    rte_pktmbuf_tailroom(t) >= m->data_len && RTE_MBUF_DIRECT(t) &&
	    rte_mbuf_refcnt_read(t) == 1) {
		memcpy(rte_pktmbuf_mtod_offset(t, uint8_t *, t->data_len),
		       rte_pktmbuf_mtod(m, const uint8_t *), m->data_len);
		t->data_len = (uint16_t)(t->data_len + m->data_len);
		t->ol_flags &= ~clear;
		q->bytes += m->data_len;
		rte_pktmbuf_free_seg(m);
		q2->head = q2->tail = NULL;
		q2->bytes = q2->mbufs = q2->mem = 0;
		return;
	}
	tcp_mq_concat_raw(q, q2);
}

void
tcp_mq_drop_front(struct tcp_mq *q, uint32_t n, struct tcp_engine *e)
{
	while (n > 0 && q->head != NULL) {
		struct rte_mbuf *m = q->head;

		if (n < m->data_len) {
			m->data_off = (uint16_t)(m->data_off + n);
			m->data_len = (uint16_t)(m->data_len - n);
			q->bytes -= n;
			return;
		}
		n -= m->data_len;
		q->bytes -= m->data_len;
		mq_uncount(q, m);
		q->head = m->next;
		tcp_free_seg(e, m);
	}
	if (q->head == NULL)
		q->tail = NULL;
}

void
tcp_mq_free(struct tcp_mq *q)
{
	struct rte_mbuf *m = q->head;

	while (m != NULL) {
		struct rte_mbuf *next = m->next;

		rte_pktmbuf_free_seg(m);
		m = next;
	}
	q->head = q->tail = NULL;
	q->bytes = q->mbufs = q->mem = 0;
}

int
tcp_mq_collapse(struct tcp_mq *q, struct rte_mempool *mp)
{
	struct tcp_mq out = { 0 };
	struct rte_mbuf *m = q->head, *t = NULL;
	int rc = 0;

	while (m != NULL) {
		struct rte_mbuf *next = m->next;

		if ((t == NULL || rte_pktmbuf_tailroom(t) == 0) &&
		    m->data_off == 0 && m->data_len == m->buf_len) {
			/* Full already (collapsed before): moved as is. */
			m->next = NULL;
			tcp_mq_append(&out, m);
			t = m;
			m = next;
			continue;
		}
		while (m->data_len > 0) {
			uint16_t k;

			if (t == NULL || rte_pktmbuf_tailroom(t) == 0) {
				struct rte_mbuf *n = rte_pktmbuf_alloc(mp);

				if (n == NULL) {
					rc = -1;
					goto out;
				}
				n->data_off = 0; /* no headers go in front */
				tcp_mq_append(&out, n);
				t = n;
			}
			k = (uint16_t)RTE_MIN(m->data_len, rte_pktmbuf_tailroom(t));
			memcpy(rte_pktmbuf_mtod_offset(t, uint8_t *, t->data_len),
			       rte_pktmbuf_mtod(m, const uint8_t *), k);
			t->data_len = (uint16_t)(t->data_len + k);
			t->pkt_len = t->data_len;
			out.bytes += k;
			m->data_off = (uint16_t)(m->data_off + k);
			m->data_len = (uint16_t)(m->data_len - k);
		}
		rte_pktmbuf_free_seg(m);
		m = next;
	}
out:
	/* What could not be copied stays, in order, after what was. */
	tcp_mq_append(&out, m);
	*q = out;
	return rc;
}

struct rte_mbuf *
tcp_chain_slice_walk(struct rte_mbuf *m, uint32_t off, uint32_t len,
		     struct rte_mbuf **tail)
{
	struct rte_mbuf *head = NULL, *last = NULL;

	while (m != NULL) {
		struct rte_mbuf *next = m->next;
		uint32_t dl = m->data_len;

		if (off >= dl || len == 0) {
			off -= off >= dl ? dl : off;
			rte_pktmbuf_free_seg(m);
		} else {
			uint32_t take = dl - off;

			if (take > len)
				take = len;
			m->data_off = (uint16_t)(m->data_off + off);
			m->data_len = (uint16_t)take;
			m->next = NULL;
			m->nb_segs = 1;
			m->pkt_len = take;
			len -= take;
			off = 0;
			if (last != NULL)
				last->next = m;
			else
				head = m;
			last = m;
		}
		m = next;
	}
	*tail = last;
	return head;
}
