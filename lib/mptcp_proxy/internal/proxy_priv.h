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
#include <rte_mbuf_dyn.h>

#include "mptcp_proxy.h"
#include "tcp.h"
#include "mptcp_priv.h"

#define PX_CNT(px, c) ((px)->cnt[MPTCP_PROXY_CNT_##c])

struct mptcp_proxy;
struct proxy_pair;

/* One end of a pair: ep.ctx is NULL until the leg exists and after it
 * closed. Its pair is found from server (proxy_leg_pair()), not a
 * pointer: 16 bytes less per connection. */
struct proxy_leg {
	uint8_t obj;      /* PX_OBJ_LEG (mptcp_priv.h): lib/tcp's callback
			   * argument is a leg or a subflow */
	uint8_t server;   /* 1: the leg toward the server */
	uint8_t peer_fin; /* FIN received, not yet passed on */
	uint8_t in_relay; /* proxy_relay() reads it now: it passes the FIN */
	struct mptcp_proxy_endpoint ep;
};

struct proxy_pair {
	struct mptcp_proxy *px;
	struct proxy_leg cl, sv;
	struct rte_mbuf *held_syn;
	struct proxy_pair *next_free;
	struct mptcp_meta *meta; /* the client leg is MPTCP (ep.ctx once open) */
	struct mptcp_opt mpc;    /* the held SYN's MP_CAPABLE */
	/* Pairs that may still be half open, oldest first (proxy_pair.c). */
	struct proxy_pair *ho_next, *ho_prev;
	uint64_t born_ns;
	uint8_t in_use;
	uint8_t mptcp;           /* the held SYN asked for MPTCP */
	uint8_t ho_listed;
};

/* The intercept rules as proxy_policy.c's match reads them, by family
 * (the order of rules does not change whether one matches): each
 * prefix with its mask as the bytes of an address lie in memory, host
 * bits clear; an IPv4 rule in one 4-byte word, an IPv6 rule in two
 * 8-byte words. Port 0: any. */
struct proxy_rules {
	uint32_t n4, n6;
	struct { uint32_t addr, mask; uint16_t port; } r4[MPTCP_PROXY_MAX_RULES];
	struct { uint64_t addr[2], mask[2]; uint16_t port; } r6[MPTCP_PROXY_MAX_RULES];
};

struct mptcp_proxy {
	struct tcp_engine *e;
	struct rte_mempool *pool;
	uint32_t pool_base;   /* mbufs in use when the proxy was made */
	uint32_t budget;      /* mbuf_budget, 0: none */
	uint64_t reclaim_ns;  /* rcv_reclaim_idle_ns */
	uint32_t rcv_buf;
	uint32_t snd_buf;
	uint32_t rcv_limit;   /* window limit in force (rcv_buf: none) */
	uint32_t held;        /* mbufs in use beyond pool_base, last sample */
	uint64_t pressure_ns; /* last sample */
	uint64_t pool_bytes;  /* receive pool set at it (UINT64_MAX: none) */
	uint64_t offered_bytes; /* what the windows let in then */
	uint64_t reopen_ns;   /* last walk announcing reopened windows */
	uint32_t npairs;
	uint32_t active;
	struct proxy_pair *free;
	struct proxy_pair *ho_head, *ho_tail; /* maybe half open, oldest first */
	uint64_t half_open_yield_ns;          /* 0: never evict */
	uint64_t cnt[MPTCP_PROXY_CNT_MAX];
	uint64_t eng_cnt[TCP_CNT_MAX]; /* the engine's, kept when it goes */
	struct proxy_rules rules;
	/* MPTCP (mptcp_priv.h) */
	uint8_t mptcp_on;
	uint8_t mptcp_lia;           /* subflows' CC coupled (RFC 6356) */
	uint8_t mptcp_csum_off;      /* refuse DSS checksums: plain TCP */
	uint8_t mptcp_mss_room;      /* MSS announced to MPTCP clients: room
					for a DSS (MT_MSS_ROOM) */
	uint8_t max_subflows;
	uint8_t worker_bits;
	uint16_t worker_id;
	/* Subflows handed to their owner worker (mptcp_redirect.h); NULL:
	 * no hand-over. */
	struct mptcp_redirect *rd;
	mptcp_proxy_handover_fn handover;
	void *handover_arg;
	int dsn_off;                 /* mbuf dynfield: a segment's DSN */
	uint64_t tick_ns;            /* last mptcp_meta_tick() */
	/* The watched clock (mptcp_watch_ns()): time the proxy ran to see
	 * ACKs, a long gap between two ticks counted as STALE_GAP_NS. */
	uint64_t watch_ns;
	struct mptcp_meta *metas;    /* max_conns */
	struct mptcp_meta *meta_free, *meta_active;
	struct mptcp_meta *dirty;
	struct mptcp_subflow *sfs;   /* 2 * max_conns */
	struct mptcp_subflow *sf_free;
	struct mptcp_token_table tok;
	struct mptcp_opt_counters opt_err;
	uint32_t mptcp_active, sf_active;
	struct proxy_pair pairs[];
};

/* proxy_policy.c */
/* Add r to rs (at most MPTCP_PROXY_MAX_RULES of each family): its host
 * bits cleared, its length capped at the family's. */
void proxy_rules_add(struct proxy_rules *rs, const struct mptcp_proxy_rule *r);
/* Whether a rule of rs takes address a (family 4: its first 4 bytes;
 * 6: 16 bytes) and port; port < 0: unknown (a fragment, a header cut
 * short), the address decides. */
bool proxy_rules_match(const struct proxy_rules *rs, uint8_t family, const uint8_t *a,
		       int port);
/* The same with the proxy's rules. */
bool proxy_policy_match(const struct mptcp_proxy *px, uint8_t family,
			const uint8_t *a, int port);
/* Which SYN options cross from one leg to the other (tcp_xopt_carry_fn). */
bool proxy_xopt_carried(uint8_t kind);
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

/* The events of a leg, from lib/tcp or from an MPTCP connection. */
void proxy_leg_event(struct proxy_leg *l, uint32_t ev, uint64_t now);

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
/* The DSN an MPTCP connection stored in a segment it holds. */
#define MPTCP_DSN(px, m) (*RTE_MBUF_DYNFIELD((m), (px)->dsn_off, uint64_t *))
/* The endpoint of a lib/tcp connection (NULL: none). */
void proxy_leg_set_tcp(struct proxy_leg *l, struct tcp_conn *c);

#endif /* MPTCP_PROXY_PRIV_H */
