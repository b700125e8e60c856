/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MPTCP_PROXY_PRIV_H
#define MPTCP_PROXY_PRIV_H

/*
 * Internals of the proxy, shared by its files and by nothing else:
 *   mptcp_proxy.c   the context and its burst entry points
 *   proxy_policy.c  which SYNs are intercepted
 *   proxy_pair.c    a proxied connection: SYN held, legs opened, closed
 *   proxy_relay.c   the relay between two endpoints, and the lib/tcp
 *                   endpoint
 */

#include <rte_common.h>
#include <rte_mbuf.h>

#include "mptcp_proxy.h"
#include "tcp.h"

#define PX_CNT(px, c) ((px)->cnt[MPTCP_PROXY_CNT_##c])

struct mptcp_proxy;
struct proxy_pair;

/* One end of a pair: ep.ctx is NULL until the leg exists and after it
 * closed. Its pair is found from server (proxy_leg_pair()), not a
 * pointer: 16 bytes less per connection. */
struct proxy_leg {
	struct mptcp_proxy_endpoint ep;
	uint8_t server;   /* 1: the leg toward the server */
	uint8_t peer_fin; /* FIN received, not yet passed on */
};

struct proxy_pair {
	struct mptcp_proxy *px;
	struct proxy_leg cl, sv;
	struct rte_mbuf *held_syn;
	struct proxy_pair *next_free;
	uint8_t in_use;
};

struct mptcp_proxy {
	struct tcp_engine *e;
	struct rte_mempool *pool;
	uint32_t pool_base;   /* mbufs in use when the proxy was made */
	uint32_t budget;      /* mbuf_budget, 0: none */
	uint32_t rcv_buf;
	uint32_t rcv_limit;   /* window limit in force (rcv_buf: none) */
	uint32_t held;        /* mbufs in use beyond pool_base, last sample */
	uint64_t pressure_ns; /* last sample */
	uint32_t nrules;
	uint32_t npairs;
	uint32_t active;
	struct proxy_pair *free;
	uint64_t cnt[MPTCP_PROXY_CNT_MAX];
	uint64_t eng_cnt[TCP_CNT_MAX]; /* the engine's, kept when it goes */
	struct mptcp_proxy_rule rules[MPTCP_PROXY_MAX_RULES];
	struct proxy_pair pairs[];
};

/* proxy_policy.c */
/* port < 0: unknown (a fragment, a header cut short): the address decides. */
bool proxy_policy_match(const struct mptcp_proxy *px, uint8_t family,
			const uint8_t *a, int port);
/* The MSS of a SYN (536 when absent); *sig: signed (TCP-MD5 or TCP-AO). */
uint16_t proxy_syn_scan(const uint8_t *th, unsigned hlen, bool *sig);

/* proxy_pair.c */
/* Hold the client's SYN and open the server leg. 0: consumed (held, or
 * dropped as a duplicate); -1: let it pass, bridged. */
int proxy_pair_intercept(struct mptcp_proxy *px, struct rte_mbuf *m,
			 uint16_t out_port, uint64_t now);
/* The engine's event callback: arg is a struct proxy_leg. */
void proxy_pair_event(struct tcp_conn *c, void *arg, uint32_t ev, uint64_t now);
/* Reset both legs and drop the held SYN (shutdown). */
void proxy_pair_abort(struct proxy_pair *p, uint64_t now);

/* proxy_relay.c */
static inline struct proxy_pair *
proxy_leg_pair(struct proxy_leg *l)
{
	return l->server ? container_of(l, struct proxy_pair, sv)
			 : container_of(l, struct proxy_pair, cl);
}

static inline struct proxy_leg *
proxy_other(struct proxy_leg *l)
{
	struct proxy_pair *p = proxy_leg_pair(l);

	return l->server ? &p->cl : &p->sv;
}
/* Move what src holds to the other leg; pass a FIN on after it. */
void proxy_relay(struct proxy_leg *src, uint64_t now);
/* The endpoint of a lib/tcp connection (NULL: none). */
void proxy_leg_set_tcp(struct proxy_leg *l, struct tcp_conn *c);

#endif /* MPTCP_PROXY_PRIV_H */
