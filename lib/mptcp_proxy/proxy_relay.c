/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The relay between the two legs of a pair, through their endpoint ops
 * only: whole received segments move from one leg's receive buffer to
 * the other leg's send buffer, only when they fit; the writable event of
 * the other leg resumes. A slow reader on one side thus fills that leg's
 * send buffer, then the other leg's receive buffer, and then the window
 * toward the fast side closes: per connection the proxy buffers at most
 * snd_buf + rcv_buf bytes each way. A FIN is passed on once every byte
 * before it was relayed.
 *
 * Also here: the endpoint of a plain lib/tcp connection.
 */
#include "proxy_priv.h"

void
proxy_relay(struct proxy_leg *src, uint64_t now)
{
	struct proxy_leg *dst = proxy_other(src);
	struct mptcp_proxy *px = proxy_leg_pair(src)->px;
	const struct mptcp_proxy_endpoint_ops *so, *dop;
	void *s, *d;
	uint8_t was;

	if (src->ep.ctx == NULL || dst->ep.ctx == NULL)
		return;
	so = src->ep.ops;
	dop = dst->ep.ops;
	d = dst->ep.ctx;
	was = src->in_relay; /* (a relay of src nested in this one's send) */
	src->in_relay = 1;
	for (;;) {
		uint32_t need, room;
		struct rte_mbuf *m;
		int32_t got;

		/* Reading the last bytes of a leg that ended in order
		 * closes it (lib/tcp tells CLOSED once they are read). */
		s = src->ep.ctx;
		if (s == NULL || dst->ep.ctx == NULL)
			break;
		need = so->readable(s);
		if (need == 0)
			break;
		room = dop->send_space(d, need);
		if (room < need)
			break; /* dst's writable event calls us again */
		m = so->recv(s, room, now);
		if (m == NULL)
			break;
		got = dop->send(d, m, now);
		if (got <= 0) {
			/* Cannot happen with the room checked; never leak. */
			PX_CNT(px, RELAY_FAILED)++;
			rte_pktmbuf_free(m);
			break;
		}
		px->cnt[src->server ? MPTCP_PROXY_CNT_BYTES_DOWN
				    : MPTCP_PROXY_CNT_BYTES_UP] += (uint64_t)got;
	}
	src->in_relay = was;
	/* Sending may have closed either leg (an event of its own); the
	 * FIN goes after every byte before it, which a closed src no longer
	 * holds. */
	if (src->peer_fin && dst->ep.ctx != NULL &&
	    (src->ep.ctx == NULL || src->ep.ops->readable(src->ep.ctx) == 0)) {
		src->peer_fin = 0;
		dst->ep.ops->shutdown(dst->ep.ctx, now);
	}
}

/* ------------------------------------------------------------------ */
/* A lib/tcp connection as an endpoint                                 */

static uint32_t
tcp_ep_readable(void *ctx)
{
	return tcp_recv_next_len(ctx);
}

static struct rte_mbuf *
tcp_ep_recv(void *ctx, uint32_t max, uint64_t now)
{
	return tcp_recv_mbuf(ctx, max, now);
}

static uint32_t
tcp_ep_send_space(void *ctx, uint32_t want)
{
	return tcp_send_space(ctx, want);
}

static int32_t
tcp_ep_send(void *ctx, struct rte_mbuf *m, uint64_t now)
{
	return tcp_send_mbuf(ctx, m, now);
}

static void
tcp_ep_shutdown(void *ctx, uint64_t now)
{
	(void)tcp_shutdown(ctx, now);
}

static void
tcp_ep_abort(void *ctx, uint64_t now)
{
	tcp_abort(ctx, now);
}

const struct mptcp_proxy_endpoint_ops mptcp_proxy_tcp_endpoint = {
	.readable = tcp_ep_readable,
	.recv = tcp_ep_recv,
	.send_space = tcp_ep_send_space,
	.send = tcp_ep_send,
	.shutdown = tcp_ep_shutdown,
	.abort = tcp_ep_abort,
};

void
proxy_leg_set_tcp(struct proxy_leg *l, struct tcp_conn *c)
{
	l->ep.ops = &mptcp_proxy_tcp_endpoint;
	l->ep.ctx = c;
}
