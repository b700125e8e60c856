/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The proxy context: one lib/tcp engine holding both legs of every
 * proxied connection, and its burst entry points.
 *
 *   input  a SYN from the subscriber side whose destination matches a
 *          rule is held, and the engine opens its own connection to the
 *          server from the client's address and port (proxy_pair.c).
 *          Segments of connections the engine holds are fed to it.
 *          Everything else passes on unchanged.
 *   poll   memory pressure, the engine's timers, and what it sends.
 *
 * Memory pressure: what the proxy holds is estimated as the pool's mbufs
 * in use beyond those in use at create (rx rings), so queues of other
 * users of the pool count against it too. Up to a quarter of the budget the
 * windows are whole; from there to the budget the receive window every
 * leg offers shrinks linearly to zero, so senders stop before the pool
 * runs dry. What all windows together still let in stays within what is
 * left of the budget, the moving legs sharing it and the idle ones giving
 * theirs back (pressure()). Sampled at most once a millisecond.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf_dyn.h>
#include <rte_memzone.h>
#include <rte_mempool.h>
#include <rte_tcp.h>

#include "pkt.h"
#include "proxy_priv.h"

#define PROXY_TX_BATCH 32
#define PROXY_PRESSURE_NS 1000000ull /* pool sampled: 1 ms */
#define PROXY_REOPEN_NS 10000000ull  /* windows reannounced at most every 10 ms */
#define PROXY_REDIRECT_SCAN 64       /* redirect entries aged per poll */
#define PROXY_RECLAIM_IDLE_NS 200000000ull /* rcv_reclaim_idle_ns's default */
#define PROXY_RECLAIM_SCAN 64        /* legs looked at per pressure sample */
#define PROXY_SEG_BYTES 1448u        /* a full-sized segment's payload */

static const char *const cnt_names[MPTCP_PROXY_CNT_MAX] = {
#define MPTCP_PROXY_CNT_NAME(e, s) s,
	MPTCP_PROXY_CNT_LIST(MPTCP_PROXY_CNT_NAME)
#undef MPTCP_PROXY_CNT_NAME
};

const char *
mptcp_proxy_cnt_name(enum mptcp_proxy_cnt c)
{
	return (unsigned)c < MPTCP_PROXY_CNT_MAX ? cnt_names[c] : "?";
}

size_t
mptcp_proxy_pair_size(void)
{
	return sizeof(struct proxy_pair);
}

size_t
mptcp_proxy_mptcp_conn_size(unsigned n)
{
	return sizeof(struct mptcp_meta) + n * sizeof(struct mptcp_subflow);
}

/* lib/tcp's callback: the argument is a leg of a pair or a subflow. */
static void
proxy_tcp_event(struct tcp_conn *c, void *arg, uint32_t ev, uint64_t now)
{
	if (*(const uint8_t *)arg == PX_OBJ_SUBFLOW)
		mptcp_sf_event(arg, c, ev, now);
	else
		proxy_pair_event(c, arg, ev, now);
}

static int
mptcp_setup(struct mptcp_proxy *px, const struct mptcp_proxy_params *p)
{
	static const struct rte_mbuf_dynfield dsn_field = {
		.name = "sluice_mptcp_dsn",
		.size = sizeof(uint64_t),
		.align = __alignof__(uint64_t),
	};
	uint32_t nsf;

	px->mptcp_on = p->mptcp;
	px->mptcp_lia = p->mptcp_lia;
	px->mptcp_csum_off = p->mptcp_csum_off;
	px->mptcp_mss_room = p->mptcp_fallback_mss_room;
	px->max_subflows = p->max_subflows == 0 || p->max_subflows > MPTCP_SUBFLOWS_MAX ?
			   MPTCP_SUBFLOWS_MAX : p->max_subflows;
	px->worker_bits = p->worker_bits;
	px->worker_id = p->worker_id;
	if (p->worker_bits > MPTCP_KEY_WORKER_BITS_MAX ||
	    p->worker_id >= (1u << p->worker_bits))
		return -EINVAL;
	if (p->worker_bits > 0 && p->handover != NULL && p->redirect_entries > 0) {
		char name[RTE_MEMZONE_NAMESIZE];

		snprintf(name, sizeof(name), "%s_rd", p->name != NULL ? p->name : "mptcp");
		px->rd = mptcp_redirect_create(&(struct mptcp_redirect_params){
			.name = name, .socket_id = p->socket_id,
			.entries = p->redirect_entries, .idle_ns = p->redirect_idle_ns,
			/* A reset subflow's leftovers go where its reset
			 * is remembered, for as long as it is. */
			.rst_ns = p->reset_memory_ns });
		if (px->rd == NULL)
			return -ENOMEM;
		px->handover = p->handover;
		px->handover_arg = p->handover_arg;
	}
	px->dsn_off = rte_mbuf_dynfield_register(&dsn_field);
	if (px->dsn_off < 0)
		return -rte_errno;
	px->metas = rte_zmalloc_socket("mptcp_metas", (size_t)p->max_conns * sizeof(*px->metas),
				       RTE_CACHE_LINE_SIZE, p->socket_id);
	nsf = p->max_conns * RTE_MIN(px->max_subflows, 4u);
	px->sfs = rte_zmalloc_socket("mptcp_subflows", (size_t)nsf * sizeof(*px->sfs),
				     RTE_CACHE_LINE_SIZE, p->socket_id);
	if (px->metas == NULL || px->sfs == NULL ||
	    mptcp_token_init(&px->tok, p->max_conns, p->socket_id) != 0)
		return -ENOMEM;
	for (uint32_t i = p->max_conns; i-- > 0;) {
		px->metas[i].flags = MT_FREED;
		px->metas[i].next = px->meta_free;
		px->meta_free = &px->metas[i];
	}
	for (uint32_t i = nsf; i-- > 0;) {
		px->sfs[i].next_free = px->sf_free;
		px->sf_free = &px->sfs[i];
	}
	return 0;
}

static void
mptcp_teardown(struct mptcp_proxy *px)
{
	for (struct mptcp_meta *mt = px->meta_active; mt != NULL; mt = mt->next) {
		rte_pktmbuf_free(mt->rq_head);
		rte_pktmbuf_free(mt->ooo_head);
		rte_pktmbuf_free(mt->sq_head);
		mt->rq_head = mt->ooo_head = mt->sq_head = NULL;
		for (unsigned i = 0; i < MPTCP_SUBFLOWS_MAX; i++)
			if (mt->sf[i] != NULL)
				(void)mptcp_sf_held_free(mt->sf[i]);
	}
	mptcp_token_fini(&px->tok);
	mptcp_redirect_free(px->rd);
	px->rd = NULL;
	rte_free(px->metas);
	rte_free(px->sfs);
	px->metas = NULL;
	px->sfs = NULL;
}

/* The receive pool of this worker for mbufs of the budget: each a
 * full-sized segment, and each worker its share (workers rounded up to a
 * power of two). */
static uint64_t
rcv_pool_of(const struct mptcp_proxy *px, uint64_t mbufs)
{
	return (mbufs * PROXY_SEG_BYTES) >> px->worker_bits;
}

struct mptcp_proxy *
mptcp_proxy_create(const struct mptcp_proxy_params *p)
{
	struct tcp_engine_params prm;
	struct mptcp_proxy *px;

	if (p == NULL || p->pool == NULL || p->max_conns == 0 ||
	    p->nrules > MPTCP_PROXY_MAX_RULES || (p->nrules && p->rules == NULL)) {
		rte_errno = EINVAL;
		return NULL;
	}
	px = rte_zmalloc_socket("mptcp_proxy",
				sizeof(*px) + (size_t)p->max_conns * sizeof(px->pairs[0]),
				RTE_CACHE_LINE_SIZE, p->socket_id);
	if (px == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < p->nrules; i++)
		proxy_rules_add(&px->rules, &p->rules[i]);
	if (mptcp_setup(px, p) != 0) {
		mptcp_teardown(px);
		rte_free(px);
		rte_errno = EINVAL;
		return NULL;
	}
	px->npairs = p->max_conns;
	for (uint32_t i = p->max_conns; i-- > 0;) {
		px->pairs[i].px = px;
		px->pairs[i].next_free = px->free;
		px->free = &px->pairs[i];
	}
	tcp_engine_params_init(&prm);
	prm.name = p->name;
	prm.socket_id = p->socket_id;
	/* Two legs per connection, and as many again in TIME-WAIT (the
	 * oldest of which give way when the engine is full). Only live legs
	 * have segments in flight: records for two legs per connection, at
	 * the engine's default of 64 each. */
	prm.max_conns = 4 * p->max_conns;
	prm.max_tx_segments = 2 * 64 * p->max_conns;
	prm.pool = p->pool;
	prm.snd_buf = p->snd_buf;
	prm.rcv_buf = p->rcv_buf;
	prm.cc = p->cc;
	prm.syn_retries = p->syn_retries;
	if (p->rto_min_ns != 0)
		prm.rto_min_ns = p->rto_min_ns;
	prm.idle_timeout_ns = p->idle_timeout_ns;
	prm.fin_wait2_timeout_ns = p->fin_wait2_timeout_ns;
	prm.persist_timeout_ns = p->persist_timeout_ns;
	if (p->reset_memory_ns != 0) {
		prm.reset_memory = 2 * p->max_conns;
		prm.reset_memory_ns = p->reset_memory_ns;
	}
	prm.txq_size = 4096;
	if (p->tx_copy)
		prm.flags |= TCP_F_TX_COPY;
	if (p->tx_no_meta)
		prm.flags |= TCP_F_TX_NO_META;
	prm.cb = proxy_tcp_event;
	prm.xopt_carry = proxy_xopt_carried;
	memcpy(prm.isn_key, p->isn_key, sizeof(prm.isn_key));
	px->e = tcp_engine_create(&prm);
	if (px->e == NULL) {
		int rc = rte_errno;

		mptcp_teardown(px);
		rte_free(px);
		rte_errno = rc ? rc : ENOMEM;
		return NULL;
	}
	px->pool = p->pool;
	px->pool_base = rte_mempool_in_use_count(p->pool);
	px->budget = p->mbuf_budget;
	px->reclaim_ns = p->rcv_reclaim_idle_ns != 0 ? p->rcv_reclaim_idle_ns :
			 PROXY_RECLAIM_IDLE_NS;
	px->rcv_buf = px->rcv_limit = p->rcv_buf;
	px->snd_buf = p->snd_buf;
	px->half_open_yield_ns = p->half_open_yield_ns;
	/* The receive pool from the start (the engine counts the windows of
	 * the connections it has when it gets one): the whole budget until
	 * the first sample. */
	px->pool_bytes = UINT64_MAX;
	if (px->budget != 0) {
		px->pool_bytes = rcv_pool_of(px, px->budget);
		tcp_engine_set_rcv_pool(px->e, px->pool_bytes);
	}
	/* libcrypto sets up its per-thread generator on the first draw. */
	(void)mptcp_nonce_generate(&(uint32_t){ 0 });
	return px;
}

/* The subflow m belongs to, as the client sends it. */
static void
redirect_key(const struct pkt_meta *meta, struct mptcp_redirect_key *k)
{
	memset(k, 0, sizeof(*k));
	k->family = meta->l3 == PKT_L3_IPV4 ? 4 : 6;
	k->sport = meta->sport;
	k->dport = meta->dport;
	memcpy(k->src, meta->src, k->family == 4 ? 4 : 16);
	memcpy(k->dst, meta->dst, k->family == 4 ? 4 : 16);
}

/* A SYN carrying MP_JOIN joins one of our MPTCP connections, goes to the
 * worker that owns its connection, or is refused: 0 consumed, -1 not a
 * join. handed: another worker sent it here. */
static int
join_syn(struct mptcp_proxy *px, struct rte_mbuf *m, bool handed, uint64_t now)
{
	struct pkt_meta *meta = pkt_meta(m);
	const uint8_t *th = rte_pktmbuf_mtod(m, const uint8_t *) + meta->l4_off;
	unsigned hlen = (unsigned)(th[12] >> 4) * 4;
	struct mptcp_redirect_key k;
	struct mptcp_opts o;
	unsigned owner;

	if (hlen <= 20 || hlen > meta->l4_len)
		return -1;
	(void)mptcp_opts_parse(th + 20, hlen - 20, th[13], &o, NULL);
	if (!(o.present & (1u << MPTCP_SUB_MP_JOIN)) || o.join.u.join.form != MPTCP_FORM_SYN)
		return -1;
	owner = mptcp_token_owner(o.join.u.join.token, px->worker_bits);
	if (owner == px->worker_id)
		return mptcp_join_syn(px, m, &o.join, now);
	/* Another worker's connection: RSS brought its join here. Hand it
	 * to the owner, and remember the subflow so that its later
	 * segments follow. */
	if (px->rd != NULL && !handed) {
		redirect_key(meta, &k);
		if (mptcp_redirect_add(px->rd, &k, (uint16_t)owner, now) != 0) {
			PX_CNT(px, MPTCP_REDIRECT_FULL)++;
			goto refuse;
		}
		if (px->handover(px->handover_arg, m, (uint16_t)owner) == 0) {
			PX_CNT(px, MPTCP_JOIN_HANDED)++;
			return 0;
		}
		mptcp_redirect_remove(px->rd, &k);
	}
	/* No hand-over (or not now): refuse it, the client keeps its
	 * other subflows. */
	PX_CNT(px, MPTCP_JOIN_OTHER_WORKER)++;
refuse:
	(void)tcp_reply_rst(px->e, m, now);
	rte_pktmbuf_free(m);
	return 0;
}

/* A segment of a subflow this worker hands to its owner: 0 handed, -1
 * not one (or the owner could not take it: handled here). */
static int
redirect(struct mptcp_proxy *px, struct rte_mbuf *m, uint64_t now)
{
	const struct pkt_meta *meta = pkt_meta(m);
	uint8_t fl = rte_pktmbuf_mtod(m, const uint8_t *)[meta->l4_off + 13];
	struct mptcp_redirect_key k;
	int owner;

	redirect_key(meta, &k);
	owner = mptcp_redirect_lookup(px->rd, &k, fl & (MPTCP_REDIRECT_FIN |
				      MPTCP_REDIRECT_SYN | MPTCP_REDIRECT_RST), now);
	if (owner < 0 || px->handover(px->handover_arg, m, (uint16_t)owner) != 0)
		return -1;
	PX_CNT(px, MPTCP_SF_HANDED)++;
	return 0;
}

/* A SYN alone: what opens a connection (a SYN-ACK, or a SYN with RST,
 * does not). */
static inline bool
is_syn(const struct rte_mbuf *m, const struct pkt_meta *meta)
{
	return (rte_pktmbuf_mtod(m, const uint8_t *)[meta->l4_off + 13] &
		(RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG)) == RTE_TCP_SYN_FLAG;
}

static uint16_t
input(struct mptcp_proxy *px, struct rte_mbuf **pkts, uint16_t n,
      bool upstream, uint16_t out_port, bool handed, uint64_t now)
{
	bool any;
	uint16_t keep = 0;

	if (px->e == NULL) /* shut down: a bridge */
		return n;
	any = tcp_engine_conn_count(px->e) > 0;
	/* One cumulative ACK per connection for the in-order data of the
	 * burst (lib/tcp/README.md, "ACKs per burst"). */
	tcp_input_burst_begin(px->e);
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const struct pkt_meta *meta = pkt_meta(m);
		struct tcp_conn *c;
		const uint8_t *a;
		bool syn, whole, redirecting;

		/* Only TCP of the intercepted prefixes is the engine's
		 * business. Of that, what no proxied connection owns leaves
		 * as it came: bridged flows (the table was full, a signed
		 * SYN, connections older than the proxy) with a wrong
		 * checksum or a lying header are the ends' to judge. */
		if (meta->l3 == PKT_L3_NONE || meta->l4_proto != IPPROTO_TCP ||
		    (meta->flags & PKT_F_PPPOE))
			goto pass;
		whole = (meta->flags & (PKT_F_L4 | PKT_F_MALFORMED | PKT_F_FRAGMENT)) ==
			PKT_F_L4;
		/* A connection the engine holds was taken at its SYN by the
		 * same rules (they do not change while the proxy lives), so
		 * a frame of the one its ports found last skips the rules: a
		 * relayed segment then costs the same however many prefixes
		 * are intercepted. Not while 4-tuples are redirected to
		 * other workers: those are checked first, below. */
		redirecting = upstream && !handed && px->rd != NULL &&
			      mptcp_redirect_count(px->rd) > 0;
		c = whole && any && !redirecting ? tcp_conn_lookup_cached(px->e, m) : NULL;
		if (c == NULL) {
			a = upstream ? meta->dst : meta->src;
			if (!proxy_policy_match(px, meta->l3, a,
						!whole ? -1 : upstream ? meta->dport : meta->sport))
				goto pass;
			if (!whole) {
				/* The engine reassembles nothing and parses
				 * no header cut short: not ours, even on our
				 * 4-tuple. */
				px->cnt[(meta->flags & PKT_F_FRAGMENT) ?
					MPTCP_PROXY_CNT_FRAG_PASSED :
					MPTCP_PROXY_CNT_MALF_PASSED]++;
				goto pass;
			}
			/* A subflow of another worker's connection: its
			 * segments follow its join (a SYN decides afresh,
			 * in join_syn()). */
			if (redirecting && !is_syn(m, meta) && redirect(px, m, now) == 0)
				continue;
			c = any ? tcp_conn_lookup(px->e, m) : NULL;
		}
		if (c != NULL) {
			/* Ours: checked, and dropped if it lies, by the
			 * engine, with the frames after it of the same
			 * connection (in-order data merged as GRO would:
			 * lib/tcp/README.md, "Runs"); while 4-tuples are
			 * redirected each frame is checked for that first.
			 * None taken: TIME-WAIT gave way to a SYN. */
			uint16_t k = tcp_input_conn_run(px->e, c, pkts + i,
							redirecting ? 1 : n - i, now);

			if (k > 0) {
				i += k - 1;
				continue;
			}
		}
		/* In flight when its connection ended by a reset: answered
		 * as the closed leg (its end knows the connection is gone),
		 * not bridged to the other end, which never saw it. */
		if (tcp_input_after_reset(px->e, m, now) == TCP_INPUT_CONSUMED)
			continue;
		syn = upstream && is_syn(m, meta);
		/* A SYN is intercepted only if the engine would accept it;
		 * nothing else without a connection is ours. */
		if (!syn || tcp_frame_check(m) != 0) {
			PX_CNT(px, NOT_OWNED)++;
			goto pass;
		}
		if (px->mptcp_on && join_syn(px, m, handed, now) == 0) {
			any = true;
			continue;
		}
		if (handed) /* only joins are handed over, never a first SYN */
			goto pass;
		/* Not a join of another worker's connection: a 4-tuple this
		 * worker passed on before is its own again. */
		if (px->rd != NULL && mptcp_redirect_count(px->rd) > 0 && !handed) {
			struct mptcp_redirect_key k;

			redirect_key(meta, &k);
			mptcp_redirect_remove(px->rd, &k);
		}
		if (proxy_pair_intercept(px, m, out_port, now) == 0) {
			any = true;
			continue;
		}
pass:
		pkts[keep++] = m;
	}
	/* Before the meta level's flush: the subflows' deferred ACKs carry
	 * the DATA_ACK of what their segments brought. */
	tcp_input_burst_end(px->e, now);
	if (px->dirty != NULL)
		mptcp_flush(px, now);
	return keep;
}

uint16_t
mptcp_proxy_input_burst(struct mptcp_proxy *px, struct rte_mbuf **pkts,
			uint16_t n, bool upstream, uint16_t out_port,
			uint64_t now)
{
	return input(px, pkts, n, upstream, out_port, false, now);
}

uint16_t
mptcp_proxy_input_handed(struct mptcp_proxy *px, struct rte_mbuf **pkts,
			 uint16_t n, uint64_t now)
{
	/* Handed frames came from the subscriber side of their pair; only
	 * a SYN that opens a server leg uses out_port, and none is handed. */
	if (px->e != NULL)
		PX_CNT(px, MPTCP_HANDED_IN) += n;
	return input(px, pkts, n, true, n ? (uint16_t)(pkts[0]->port ^ 1) : 0, true, now);
}

static void
drain_tx(struct mptcp_proxy *px, mptcp_proxy_emit_fn emit, void *arg)
{
	struct rte_mbuf *out[PROXY_TX_BATCH];
	uint16_t k;

	while ((k = tcp_tx_burst(px->e, out, PROXY_TX_BATCH)) > 0)
		emit(arg, out, k);
}

/*
 * Memory pressure, sampled once a millisecond, in two rules.
 * - Linear: every window is at most rcv_buf up to `from`, shrinking to
 *   zero at the budget (tcp_engine_set_rcv_limit()).
 * - Pool: what is left of the budget, in full-sized segments, is this
 *   worker's to offer (its share: workers rounded up to a power of two),
 *   and the engine counts what every leg's announced window still lets
 *   in (tcp_engine_set_rcv_pool()). A window already announced lets its
 *   bytes in whatever comes later, so with the pool what all windows can
 *   still bring in stays within the rest of the budget (plus two
 *   segments a leg, and what arrives within one sample period), however
 *   many connections there are: 200 zero-window readers reached 13,777
 *   mbufs against a budget of 8,191 with the linear rule alone.
 *   A leg's window grows beyond its two segments into at most half of
 *   what the pool has left, so the legs that are moving data share it
 *   (the two segments are outside the pool, so idle legs at theirs take
 *   none of it); the idle ones would still
 *   hold what they were offered when they opened, so once more than half
 *   of the pool is offered, legs that received no data for
 *   rcv_reclaim_idle_ns give theirs back, down to two segments
 *   (tcp_engine_reclaim_idle()). Before, one share of what was left went
 *   to every leg alike: 1,000 idle connections held one bulk transfer's
 *   window to 3.9 kB.
 */
static void
pressure(struct mptcp_proxy *px, uint64_t now)
{
	uint32_t in_use = rte_mempool_in_use_count(px->pool);
	/* The windows shrink from a quarter of the budget: what they
	 * announced before the pool reached it cannot be taken back. */
	uint32_t from = px->budget / 4, lim = px->rcv_buf;
	uint64_t pool = UINT64_MAX, offered;

	px->pressure_ns = now;
	px->held = in_use > px->pool_base ? in_use - px->pool_base : 0;
	if (px->budget != 0) {
		uint64_t left = px->held < px->budget ? px->budget - px->held : 0;

		if (left == 0)
			lim = 0;
		else if (px->held > from)
			lim = (uint32_t)((uint64_t)px->rcv_buf * left / (px->budget - from));
		pool = rcv_pool_of(px, left);
		tcp_engine_set_rcv_pool(px->e, pool);
	}
	offered = tcp_engine_rcv_offered(px->e);
	px->pool_bytes = pool;
	px->offered_bytes = offered;
	/* Windows held below rcv_buf: by the linear rule, or because what
	 * the pool has left would hold a growing window below it. */
	if (lim < px->rcv_buf ||
	    (pool != UINT64_MAX && (pool > offered ? pool - offered : 0) / 2 < px->rcv_buf))
		PX_CNT(px, PRESSURE_MS)++;
	if (pool != UINT64_MAX && offered > pool / 2)
		(void)tcp_engine_reclaim_idle(px->e, now, px->reclaim_ns,
					      PROXY_RECLAIM_SCAN);
	if (lim == px->rcv_limit)
		return;
	tcp_engine_set_rcv_limit(px->e, lim);
	if (lim > px->rcv_limit && now - px->reopen_ns >= PROXY_REOPEN_NS) {
		/* Easing: a sender that saw a zero window would otherwise
		 * wait for its next zero-window probe, seconds away. */
		px->reopen_ns = now;
		PX_CNT(px, WND_REOPENED) += tcp_engine_window_update(px->e, now);
	}
	px->rcv_limit = lim;
}

void
mptcp_proxy_poll(struct mptcp_proxy *px, uint64_t now,
		 mptcp_proxy_emit_fn emit, void *arg)
{
	if (px->e == NULL)
		return;
	if (now - px->pressure_ns >= PROXY_PRESSURE_NS)
		pressure(px, now);
	tcp_timers_run(px->e, now);
	mptcp_meta_tick(px, now);
	if (px->rd != NULL)
		(void)mptcp_redirect_expire(px->rd, now, PROXY_REDIRECT_SCAN);
	if (px->dirty != NULL)
		mptcp_flush(px, now);
	drain_tx(px, emit, arg);
}

void
mptcp_proxy_shutdown(struct mptcp_proxy *px, uint64_t now,
		     mptcp_proxy_emit_fn emit, void *arg)
{
	struct tcp_engine *e = px->e;

	if (e == NULL)
		return;
	for (uint32_t i = 0; i < px->npairs; i++) {
		struct proxy_pair *p = &px->pairs[i];

		if (!p->in_use)
			continue;
		PX_CNT(px, ABORTED_AT_EXIT)++;
		proxy_pair_abort(p, now);
	}
	mptcp_flush(px, now);
	drain_tx(px, emit, arg);
	/* The engine goes (TIME-WAIT connections and all their mbufs); its
	 * counters stay, with the RSTs above counted. */
	memcpy(px->eng_cnt, tcp_engine_counters(e), sizeof(px->eng_cnt));
	px->e = NULL;
	tcp_engine_free(e);
}

void
mptcp_proxy_stats_get(const struct mptcp_proxy *px, struct mptcp_proxy_stats *s)
{
	memcpy(s->cnt, px->cnt, sizeof(s->cnt));
	s->active = px->active;
	s->engine_conns = px->e != NULL ? tcp_engine_conn_count(px->e) : 0;
	s->mbufs_held = px->held;
	s->rcv_limit = px->rcv_limit;
	s->rcv_pool = px->pool_bytes;
	s->rcv_offered = px->offered_bytes;
	s->mptcp_active = px->mptcp_active;
	s->mptcp_subflows = px->sf_active;
	s->mptcp_redirects = px->rd != NULL ? mptcp_redirect_count(px->rd) : 0;
}

const uint64_t *
mptcp_proxy_tcp_counters(const struct mptcp_proxy *px)
{
	return px->e != NULL ? tcp_engine_counters(px->e) : px->eng_cnt;
}

void
mptcp_proxy_free(struct mptcp_proxy *px)
{
	if (px == NULL)
		return;
	for (uint32_t i = 0; i < px->npairs; i++)
		rte_pktmbuf_free(px->pairs[i].held_syn);
	tcp_engine_free(px->e);
	mptcp_teardown(px);
	rte_free(px);
}
