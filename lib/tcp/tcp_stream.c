/* SPDX-License-Identifier: BSD-3-Clause */
/* The byte-stream calls: send (copy or mbufs), receive (copy or mbufs),
 * half-close and abort. */

#include <errno.h>
#include <string.h>

#include "tcp_impl.h"

#define MIN2(a, b) ((a) < (b) ? (a) : (b))

/* Why c takes no more data, or 0: after shutdown (-EPIPE), or in a state
 * that sends none (-ENOTCONN; the SYN states queue it). */
static int32_t
send_refused(const struct tcp_conn *c)
{
	if (c->flags & TCP_CF_FIN_QUEUED)
		return -EPIPE;
	if (c->state != TCP_ESTABLISHED && c->state != TCP_CLOSE_WAIT &&
	    c->state != TCP_SYN_SENT && c->state != TCP_SYN_RECEIVED)
		return -ENOTCONN;
	return 0;
}

int32_t
tcp_send(struct tcp_conn *c, const void *data, uint32_t len, uint64_t now_ns)
{
	struct tcp_engine *e = c->eng;
	const uint8_t *p = data;
	uint32_t room, done = 0, want = len;
	int32_t rc;

	e->now = now_ns;
	if ((rc = send_refused(c)) != 0)
		return rc;
	room = c->sndq.bytes >= e->p.snd_buf ? 0 : e->p.snd_buf - c->sndq.bytes;
	if (len > room)
		len = room;
	while (done < len) {
		struct rte_mbuf *t = c->sndq.tail;
		uint32_t n;

		/* Fill our own last mbuf; never write into one a caller gave
		 * us (tcp_send_mbuf()), which may be shared. */
		if (t == NULL || rte_pktmbuf_tailroom(t) == 0 || !RTE_MBUF_DIRECT(t) ||
		    rte_mbuf_refcnt_read(t) != 1 || t->pool != e->p.pool) {
			t = rte_pktmbuf_alloc(e->p.pool);
			if (t == NULL) {
				TCP_CNT(e, MBUF_ALLOC_FAIL);
				break;
			}
			tcp_mq_append(&c->sndq, t);
		}
		n = MIN2(len - done, (uint32_t)rte_pktmbuf_tailroom(t));
		t->ol_flags &= ~e->psum.flag; /* bytes change: no kept sum */
		memcpy(rte_pktmbuf_mtod_offset(t, uint8_t *, t->data_len), p + done, n);
		t->data_len = (uint16_t)(t->data_len + n);
		t->pkt_len = t->data_len;
		c->sndq.bytes += n;
		done += n;
	}
	if (done < want) {
		c->flags |= TCP_CF_WANT_WRITE;
		c->want_space = 1;
	}
	tcp_output(c);
	tcp_timer_update(c);
	tcp_conn_deliver(c);
	return (int32_t)done;
}

int32_t
tcp_send_mbuf(struct tcp_conn *c, struct rte_mbuf *m, uint64_t now_ns)
{
	struct tcp_engine *e = c->eng;
	uint32_t len = rte_pktmbuf_pkt_len(m);
	int32_t rc;

	e->now = now_ns;
	if ((rc = send_refused(c)) != 0)
		return rc;
	if (len > e->p.snd_buf)
		return -EMSGSIZE;
	if (c->sndq.bytes + len > e->p.snd_buf) {
		c->flags |= TCP_CF_WANT_WRITE;
		c->want_space = len;
		return 0;
	}
	tcp_mq_append(&c->sndq, m);
	/* Inside an input burst (the relay of its events), what the
	 * burst brings leaves in one tcp_output() at its end. */
	if (tcp_burst_defer(c))
		return (int32_t)len;
	tcp_output(c);
	tcp_timer_update(c);
	tcp_conn_deliver(c);
	return (int32_t)len;
}

uint32_t
tcp_send_space(struct tcp_conn *c, uint32_t want)
{
	uint32_t lim = c->eng->p.snd_buf;
	uint32_t room = c->sndq.bytes >= lim ? 0 : lim - c->sndq.bytes;

	if (room < want) {
		c->flags |= TCP_CF_WANT_WRITE;
		c->want_space = want > lim ? lim : want;
	}
	return room;
}

int
tcp_window_update(struct tcp_conn *c, uint64_t now_ns)
{
	struct tcp_engine *e = c->eng;
	uint32_t announced, w;

	e->now = now_ns;
	if (c->state != TCP_ESTABLISHED && c->state != TCP_FIN_WAIT_1 &&
	    c->state != TCP_FIN_WAIT_2)
		return 0;
	announced = tcp_rcv_announced(c);
	w = tcp_rcv_window(c);
	if (w <= announced || w - announced < MIN2(e->p.rcv_buf / 2, c->rcv_mss))
		return 0;
	tcp_send_ack(c);
	tcp_timer_update(c);
	return 1;
}

uint32_t
tcp_recv_next_len(const struct tcp_conn *c)
{
	return c->rcvq.head != NULL ? c->rcvq.head->data_len : 0;
}

/* After the reader took bytes: a window update of its own only when
 * the announced window fell below half the buffer and reading at least
 * doubles it, and by at least min(RCV.BUFF/2, MSS) (RFC 1122 4.2.3.3).
 * Otherwise the next ACK carries the new window: a reader that keeps up
 * costs no extra segments. */
static void
after_read(struct tcp_conn *c, uint32_t before)
{
	struct tcp_engine *e = c->eng;

	/* The window is worked out only when the one announced is small
	 * enough for an update to be due: a reader that keeps up pays
	 * nothing for it. */
	if ((c->state == TCP_ESTABLISHED || c->state == TCP_FIN_WAIT_1 ||
	     c->state == TCP_FIN_WAIT_2) && before <= e->p.rcv_buf / 2) {
		uint32_t after = tcp_rcv_window(c);

		if (after > before && after >= 2 * before &&
		    after - before >= MIN2(e->p.rcv_buf / 2, c->rcv_mss)) {
			tcp_send_ack(c);
			tcp_timer_update(c);
		}
	}
	tcp_conn_deliver(c);
}

uint32_t
tcp_recv(struct tcp_conn *c, void *buf, uint32_t len, uint64_t now_ns)
{
	uint32_t n, before;

	c->eng->now = now_ns;
	n = tcp_chain_copy(c->rcvq.head, 0, buf, MIN2(len, c->rcvq.bytes));
	if (n == 0)
		return 0;
	before = c->rcv_adv - c->rcv_nxt;
	tcp_mq_drop_front(&c->rcvq, n, c->eng);
	after_read(c, before);
	return n;
}

struct rte_mbuf *
tcp_recv_mbuf(struct tcp_conn *c, uint32_t max, uint64_t now_ns)
{
	struct rte_mbuf *head = c->rcvq.head, *last = NULL, *m;
	uint32_t bytes = 0, before;
	uint16_t nseg = 0;
	uint32_t mem = 0;

	c->eng->now = now_ns;
	for (m = head; m != NULL && bytes + m->data_len <= max &&
	     nseg < UINT16_MAX; m = m->next) {
		bytes += m->data_len;
		mem += m->buf_len;
		nseg++;
		last = m;
	}
	if (last == NULL)
		return NULL;
	before = c->rcv_adv - c->rcv_nxt;
	c->rcvq.head = last->next;
	if (c->rcvq.head == NULL)
		c->rcvq.tail = NULL;
	c->rcvq.bytes -= bytes;
	c->rcvq.mbufs -= nseg;
	c->rcvq.mem -= mem;
	last->next = NULL;
	head->nb_segs = nseg;
	head->pkt_len = bytes;
	after_read(c, before);
	return head;
}

struct rte_mbuf *
tcp_recv_seg(struct tcp_conn *c, uint32_t *seq, uint64_t now_ns)
{
	struct rte_mbuf *m = c->rcvq.head;
	uint32_t before;

	c->eng->now = now_ns;
	if (m == NULL)
		return NULL;
	/* The queue ends at RCV.NXT, less the peer's FIN if it counted. */
	*seq = c->rcv_nxt - !!(c->flags & TCP_CF_PEER_FIN) - c->rcvq.bytes;
	before = c->rcv_adv - c->rcv_nxt;
	c->rcvq.head = m->next;
	if (c->rcvq.head == NULL)
		c->rcvq.tail = NULL;
	c->rcvq.bytes -= m->data_len;
	c->rcvq.mbufs--;
	c->rcvq.mem -= m->buf_len;
	m->next = NULL;
	m->nb_segs = 1;
	m->pkt_len = m->data_len;
	after_read(c, before);
	return m;
}

int
tcp_shutdown(struct tcp_conn *c, uint64_t now_ns)
{
	c->eng->now = now_ns;
	switch (c->state) {
	case TCP_SYN_SENT:
	case TCP_SYN_RECEIVED:
		/* A half-close never deletes (tcp_abort() does): the FIN
		 * follows the queued data once established. */
		c->flags |= TCP_CF_FIN_QUEUED;
		break;
	case TCP_ESTABLISHED:
		c->flags |= TCP_CF_FIN_QUEUED;
		c->state = TCP_FIN_WAIT_1;
		tcp_output(c);
		break;
	case TCP_CLOSE_WAIT:
		c->flags |= TCP_CF_FIN_QUEUED;
		c->state = TCP_LAST_ACK;
		tcp_output(c);
		break;
	default:
		return (c->flags & TCP_CF_FIN_QUEUED) ? 0 : -ENOTCONN;
	}
	tcp_timer_update(c);
	tcp_conn_deliver(c);
	return 0;
}

void
tcp_abort(struct tcp_conn *c, uint64_t now_ns)
{
	c->eng->now = now_ns;
	if (c->state != TCP_CLOSED && c->state != TCP_SYN_SENT &&
	    c->state != TCP_TIME_WAIT && c->state != TCP_LISTEN)
		tcp_send_rst(c);
	/* The user gives up what it did not read: CLOSED does not wait. */
	tcp_mq_free(&c->rcvq);
	if (c->state != TCP_CLOSED)
		tcp_conn_close(c);
	else
		tcp_conn_event(c, TCP_EV_CLOSED); /* one that waited */
	tcp_conn_deliver(c);
}

