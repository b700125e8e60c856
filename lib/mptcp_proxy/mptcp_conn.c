/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MPTCP connection level (RFC 8684 §3.3): one meta-connection per
 * proxied MPTCP client, spliced by the relay onto the plain TCP leg
 * toward the server.
 *
 * Receive (client to server). Subflows keep segment boundaries
 * (tcp_conn_keep_segments()); each in-order segment a subflow delivers
 * is given its data sequence number (DSN) by the subflow's mappings
 * (mptcp_sf_dsn_of()) and goes into the reassembly: straight to the
 * in-order queue the relay reads when it is the next DSN, else into a
 * DSN-sorted out-of-order list (the DSN rides in an mbuf dynamic field).
 * Bytes already received are trimmed; the shared window every subflow
 * announces (the rcv_wnd hook) is rcv_buf per subflow less what the
 * queues hold, and a segment far beyond it is dropped and counted. The peer's DATA_FIN is delivered as the leg's FIN once every
 * byte before it was.
 *
 * Send (server to client). The relay appends whole segments to a queue
 * kept from the oldest byte the client has not DATA_ACKed; the scheduler
 * (mptcp_sched.c) hands chunks of it to subflows as indirect mbufs (no
 * copy), each chunk one DSS mapping. A DATA_ACK frees the front. A
 * shutdown becomes a DATA_FIN once every byte was handed out, carried on
 * a pure ACK and resent until acknowledged.
 *
 * Close: once both DATA_FINs are acknowledged the subflows are shut down;
 * the meta goes when its last subflow closed. A reset from the server
 * leg resets every subflow with MP_FASTCLOSE (RFC 8684 §3.5); an
 * MP_FASTCLOSE from the client, or the loss of every subflow, resets the
 * server leg.
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "proxy_priv.h"

#define META_TICK_NS      10000000ull  /* stale subflows, DATA_FIN resend */
#define DATA_FIN_RTO_MIN  200000000ull
#define STALE_SLACK_NS    50000000ull  /* stale after at least 2 SRTT + this */
#define STALE_MIN_NS      150000000ull
/* A gap between two ticks counts at most this on the watched clock: a
 * proxy that did not run (its lcore preempted) read no ACK, and those
 * that came meanwhile wait in its ring behind the timers. */
#define STALE_GAP_NS      (2 * META_TICK_NS)
#define ZWP_MAX_NS        60000000000ull /* window probes back off to this */
/* Data-level retransmissions: the first after one RTO of the connection
 * without DATA_ACK progress (and with every subflow's bytes delivered:
 * all_delivered()), each next one after twice the last wait (RFC 6298
 * 5.5), up to a minute (5.6's RTO ceiling). It was four RTOs, at least
 * 0.8 s: one bytes the Linux client pruned halved a 100 MB unshaped
 * download in perf/bench.sh mptcp. */
#define DRTO_MULT         1u
#define DRTO_MAX_NS       60000000000ull
/*
 * The early one: when the client's data-level window is open a chunk or
 * more beyond what was sent, a DATA_ACK that stands still while every
 * subflow delivered cannot be the client's memory filling up (that
 * closes the window): it dropped bytes. The chunk at the DATA_ACK goes out again after twice the
 * largest smoothed RTT, at least DRTO_EARLY_MIN, once per standstill;
 * the RTO rule above stays behind it. In a capture of perf/bench.sh
 * mptcp's unshaped download, the Linux client acknowledged three segments
 * on a subflow, never took them (no MPTcpExt counter moved) and held
 * the rest out of order: the download stood 0.2 s for the RTO, then
 * resent 360 kB where the 4 kB hole was all it lacked. The same capture
 * shows the DATA_ACK lag the delivered bytes by up to 9 ms in runs that
 * recovered on their own; the floor keeps clear of that.
 */
#define DRTO_EARLY_MIN_NS 20000000ull

void
mptcp_meta_mark(struct mptcp_meta *mt)
{
	struct mptcp_proxy *px = mt->px;

	if (mt->flags & (MT_DIRTY | MT_FREED))
		return;
	mt->flags |= MT_DIRTY;
	mt->dirty_next = px->dirty;
	px->dirty = mt;
}

struct mptcp_meta *
mptcp_meta_new(struct mptcp_proxy *px, struct proxy_pair *p, uint64_t now)
{
	struct mptcp_meta *mt = px->meta_free;

	if (mt == NULL)
		return NULL;
	px->meta_free = mt->next;
	memset(mt, 0, sizeof(*mt));
	mt->px = px;
	mt->pair = p;
	mt->rcv_buf = px->rcv_buf;
	mt->snd_buf = px->snd_buf;
	mt->data_ack_ns = now;
	mt->drto_from = mptcp_watch_ns(px, now);
	mt->cc.increase = tcp_cc_lia_increase;
	mt->cc.owner = mt;
	mt->next = px->meta_active;
	if (px->meta_active != NULL)
		px->meta_active->prev = mt;
	px->meta_active = mt;
	px->mptcp_active++;
	return mt;
}

static bool
token_taken(void *arg, uint32_t token)
{
	return mptcp_token_find(arg, token) != NULL;
}

int
mptcp_meta_open(struct mptcp_meta *mt, const struct mptcp_opt *mpc,
		struct tcp_conn *c, uint64_t now)
{
	struct mptcp_proxy *px = mt->px;
	struct mptcp_keygen_params kp = {
		.worker_bits = px->worker_bits,
		.worker_id = px->worker_id,
		.taken = token_taken,
		.taken_arg = px,
	};

	RTE_SET_USED(c);
	RTE_SET_USED(now);
	if (mptcp_key_generate(&kp, &mt->local) != 0) {
		PX_CNT(px, MPTCP_KEY_FAIL)++;
		return -1;
	}
	mptcp_token_add(px, mt);
	if (mpc->u.mpc.flags & MPTCP_MPC_FLAG_A) {
		/* The client asks for DSS checksums: both ends use them
		 * (RFC 8684 3.1); our SYN-ACK says so too. */
		mt->flags |= MT_CSUM;
		PX_CNT(px, MPTCP_CSUM_CONN)++;
	}
	mt->snd_una = mt->snd_nxt = mt->snd_end = mt->local.idsn + 1;
	mt->snd_wnd_end = mt->snd_una + 65535; /* until the first DATA_ACK */
	mt->reinj_lo = mt->reinj_hi = mt->snd_una;
	mt->hol_dsn = mt->snd_una - 1; /* no left edge reinjected yet */
	return 0;
}

/* The connection's buffers are a leg's (snd_buf, rcv_buf) per subflow:
 * its bytes in flight and in reassembly are spread over several paths,
 * and one leg's worth would cap the sum of the paths at what one path
 * moves per round trip. */
static inline uint32_t
snd_lim(const struct mptcp_meta *mt)
{
	return mt->snd_buf * RTE_MAX(mt->nsf, (uint8_t)1);
}

/* Room the relay may fill: the limit less what the send queue holds,
 * none when it holds more (the limit falls as subflows go, and what was
 * queued stays until acknowledged). */
static inline uint32_t
snd_room(const struct mptcp_meta *mt)
{
	uint64_t used = mt->snd_end - mt->snd_una;

	return used >= snd_lim(mt) ? 0 : snd_lim(mt) - (uint32_t)used;
}

static inline uint32_t
rcv_lim(const struct mptcp_meta *mt)
{
	return mt->rcv_buf * RTE_MAX(mt->nsf, (uint8_t)1);
}

uint32_t
mptcp_meta_rcv_space(const struct mptcp_meta *mt)
{
	uint32_t held = mt->rq_bytes + mt->ooo_bytes;

	return held >= rcv_lim(mt) ? 0 : rcv_lim(mt) - held;
}

/* ------------------------------------------------------------------ */
/* Receive                                                             */

static void
chain_free(struct rte_mbuf *m)
{
	while (m != NULL) {
		struct rte_mbuf *n = m->next;

		m->next = NULL;
		m->nb_segs = 1;
		rte_pktmbuf_free_seg(m);
		m = n;
	}
}

static void
rq_append(struct mptcp_meta *mt, struct rte_mbuf *m)
{
	m->next = NULL;
	if (mt->rq_tail != NULL)
		mt->rq_tail->next = m;
	else
		mt->rq_head = m;
	mt->rq_tail = m;
	mt->rq_bytes += m->data_len;
	mt->rcv_nxt += m->data_len;
}

/* Nothing follows the peer's DATA_FIN: bytes mapped at or beyond it
 * (the DATA_FIN takes one DSN) never reach the server; m (its first
 * byte at dsn) is cut there. false: nothing of it is left (freed). */
static bool
before_fin(struct mptcp_meta *mt, struct rte_mbuf *m, uint64_t dsn)
{
	uint32_t len = m->data_len, over;

	if (!(mt->flags & MT_RCV_FIN) || dsn + len <= mt->rcv_fin_dsn)
		return true;
	over = dsn >= mt->rcv_fin_dsn ? len : (uint32_t)(dsn + len - mt->rcv_fin_dsn);
	PX_CNT(mt->px, MPTCP_AFTER_FIN) += over;
	if (over == len) {
		rte_pktmbuf_free_seg(m);
		return false;
	}
	rte_pktmbuf_trim(m, (uint16_t)over);
	return true;
}

/* Move what the out-of-order list now continues to the in-order queue. */
static void
ooo_drain(struct mptcp_meta *mt)
{
	struct mptcp_proxy *px = mt->px;
	struct rte_mbuf *m;

	while ((m = mt->ooo_head) != NULL && MPTCP_DSN(px, m) <= mt->rcv_nxt) {
		uint64_t dsn = MPTCP_DSN(px, m);

		mt->ooo_head = m->next;
		if (mt->ooo_head == NULL)
			mt->ooo_tail = NULL;
		mt->ooo_bytes -= m->data_len;
		m->next = NULL;
		if (dsn + m->data_len <= mt->rcv_nxt) {
			PX_CNT(px, MPTCP_DUP_BYTES) += m->data_len;
			rte_pktmbuf_free_seg(m);
			continue;
		}
		/* Its front was delivered meanwhile (the in-order data that
		 * filled the hole overlapped it): cut, and counted as the
		 * cut of rx_insert() is. */
		PX_CNT(px, MPTCP_DUP_BYTES) += mt->rcv_nxt - dsn;
		rte_pktmbuf_adj(m, (uint16_t)(mt->rcv_nxt - dsn));
		if (!before_fin(mt, m, mt->rcv_nxt))
			continue;
		rq_append(mt, m);
	}
}

static void
check_fin(struct mptcp_meta *mt)
{
	if ((mt->flags & (MT_RCV_FIN | MT_RCV_FIN_IN)) == MT_RCV_FIN &&
	    mt->rcv_nxt == mt->rcv_fin_dsn) {
		mt->rcv_nxt++;
		mt->flags |= MT_RCV_FIN_IN | MT_PEER_FIN_EV;
		for (unsigned i = 0; i < MPTCP_SUBFLOWS_MAX; i++)
			if (mt->sf[i] != NULL && (mt->sf[i]->flags & SF_ESTAB))
				mt->sf[i]->flags |= SF_ACK_NOW; /* DATA_ACK it */
		mptcp_meta_mark(mt);
	}
}

/* One segment (single mbuf) whose first byte is dsn. false: its bytes
 * were dropped (beyond the window, or after the DATA_FIN), not held. */
static bool
rx_insert(struct mptcp_meta *mt, struct rte_mbuf *m, uint64_t dsn)
{
	struct mptcp_proxy *px = mt->px;
	uint32_t len = m->data_len;
	struct rte_mbuf *prev, *cur;

	if (len == 0 || dsn + len <= mt->rcv_nxt) {
		PX_CNT(px, MPTCP_DUP_BYTES) += len;
		rte_pktmbuf_free_seg(m);
		return true;
	}
	if (dsn < mt->rcv_nxt) {
		uint32_t cut = (uint32_t)(mt->rcv_nxt - dsn);

		PX_CNT(px, MPTCP_DUP_BYTES) += cut;
		rte_pktmbuf_adj(m, (uint16_t)cut);
		dsn += cut;
		len -= cut;
	}
	if (!before_fin(mt, m, dsn))
		return false;
	len = m->data_len;
	/* Each subflow keeps the right edge it once announced (lib/tcp takes
	 * none back), while the other subflows' data moves the DATA_ACK:
	 * together they may let the client send up to a window per subflow
	 * beyond the shared one. Beyond that the sender ignores our windows
	 * or the mapping lies: dropped, and the peer resends at data level. */
	uint64_t lim = (uint64_t)rcv_lim(mt) + mt->rcv_buf * RTE_MAX(mt->nsf, (uint8_t)1);

	if ((uint64_t)mt->rq_bytes + mt->ooo_bytes + len > lim ||
	    dsn + len - mt->rcv_nxt > lim) {
		PX_CNT(px, MPTCP_RCV_DROPPED) += len;
		rte_pktmbuf_free_seg(m);
		return false;
	}
	if (dsn == mt->rcv_nxt) {
		rq_append(mt, m);
		ooo_drain(mt);
		mt->flags |= MT_READABLE;
		check_fin(mt);
		mptcp_meta_mark(mt);
		return true;
	}
	MPTCP_DSN(px, m) = dsn;
	m->next = NULL;
	if (mt->ooo_tail == NULL || MPTCP_DSN(px, mt->ooo_tail) < dsn) {
		/* The usual case: each subflow delivers in DSN order. */
		if (mt->ooo_tail != NULL)
			mt->ooo_tail->next = m;
		else
			mt->ooo_head = m;
		mt->ooo_tail = m;
		mt->ooo_bytes += len;
		return true;
	}
	for (prev = NULL, cur = mt->ooo_head; cur != NULL; prev = cur, cur = cur->next)
		if (MPTCP_DSN(px, cur) >= dsn)
			break;
	if (cur != NULL && MPTCP_DSN(px, cur) == dsn && cur->data_len >= len) {
		PX_CNT(px, MPTCP_DUP_BYTES) += len;
		rte_pktmbuf_free_seg(m);
		return true;
	}
	m->next = cur;
	if (prev != NULL)
		prev->next = m;
	else
		mt->ooo_head = m;
	if (cur == NULL)
		mt->ooo_tail = m;
	mt->ooo_bytes += len;
	return true;
}

/* Split m after off bytes; the tail is an indirect mbuf (NULL: no mbuf). */
static struct rte_mbuf *
seg_split(struct rte_mempool *mp, struct rte_mbuf *m, uint32_t off)
{
	struct rte_mbuf *t = rte_pktmbuf_alloc(mp);

	if (t == NULL)
		return NULL;
	rte_pktmbuf_attach(t, m);
	rte_pktmbuf_adj(t, (uint16_t)off);
	rte_pktmbuf_trim(m, (uint16_t)(m->data_len - off));
	return t;
}

/* DSS checksums: a mapping's bytes are held until it is whole, then
 * verified (RFC 8684 3.3.1) and released, or dropped on a failure. */
static void
csum_failed(struct mptcp_subflow *sf, uint64_t dsn)
{
	struct mptcp_meta *mt = sf->meta;
	struct mptcp_proxy *px = mt->px;
	bool others = false;

	PX_CNT(px, MPTCP_CSUM_FAIL)++;
	PX_CNT(px, MPTCP_NO_MAPPING) += mptcp_sf_held_free(sf);
	for (unsigned i = 0; i < MPTCP_SUBFLOWS_MAX; i++) {
		const struct mptcp_subflow *o = mt->sf[i];

		if (o != NULL && o != sf && (o->flags & SF_ESTAB) &&
		    !(o->flags & (SF_DEAD | SF_CLOSED | SF_RESET)))
			others = true;
	}
	if (others) {
		/* RFC 8684 3.7: other subflows are left: this one is reset
		 * (MP_FAIL and MP_TCPRST on its RST); the client sends the
		 * bytes again on the others (we never DATA_ACKed them). */
		sf->rst_reason = MPTCP_TCPRST_MIDDLEBOX;
		mptcp_sf_fail_arm(sf, dsn);
		sf->flags |= SF_RESET | SF_DEAD;
		mptcp_sched_reinject_sf(mt, sf);
	} else {
		/* The only subflow: MP_FAIL with the DSN of the failed
		 * mapping; the client answers with an infinite mapping
		 * (fallback), accepted only where the stream stays whole. */
		mptcp_sf_fail_arm(sf, dsn);
		mt->flags |= MT_CSUM_FAILED;
	}
	mptcp_meta_mark(mt);
}

static void
csum_hold(struct mptcp_subflow *sf, const struct mptcp_map *mp, struct rte_mbuf *m,
	  uint64_t dsn, uint32_t rel)
{
	struct mptcp_meta *mt = sf->meta;
	struct mptcp_proxy *px = mt->px;
	uint32_t off = rel - mp->ssn;

	if (sf->csum_map.len == 0 || sf->csum_map.dsn != mp->dsn ||
	    sf->csum_map.ssn != mp->ssn || sf->csum_map.len != mp->len) {
		/* A new mapping: what an unfinished one held cannot be
		 * verified any more. */
		PX_CNT(px, MPTCP_NO_MAPPING) += mptcp_sf_held_free(sf);
		if (off != 0) {
			/* Its start was never summed: unverifiable. */
			PX_CNT(px, MPTCP_NO_MAPPING) += m->data_len;
			rte_pktmbuf_free_seg(m);
			return;
		}
		sf->csum_map = *mp;
		sf->csum_got = 0;
		mptcp_dss_csum_start(&sf->csum, mp->dsn, mp->ssn,
				     (uint16_t)(mp->len + ((mp->flags & MPTCP_MAP_FIN) ? 1 : 0)));
	}
	if (off != sf->csum_got) {
		PX_CNT(px, MPTCP_NO_MAPPING) += m->data_len;
		rte_pktmbuf_free_seg(m);
		return;
	}
	mptcp_dss_csum_add(&sf->csum, rte_pktmbuf_mtod(m, const void *), m->data_len);
	MPTCP_DSN(px, m) = dsn;
	m->next = NULL;
	if (sf->held_tail != NULL)
		sf->held_tail->next = m;
	else
		sf->held_head = m;
	sf->held_tail = m;
	sf->csum_got += m->data_len;
	if (sf->csum_got < mp->len)
		return;
	if (!mptcp_dss_csum_ok(&sf->csum, mp->csum)) {
		csum_failed(sf, mp->dsn);
		return;
	}
	PX_CNT(px, MPTCP_CSUM_OK)++;
	bool kept = true;

	for (struct rte_mbuf *h = sf->held_head, *n; h != NULL; h = n) {
		n = h->next;
		h->next = NULL;
		kept &= rx_insert(mt, h, MPTCP_DSN(px, h));
	}
	sf->held_head = sf->held_tail = NULL;
	sf->csum_map.len = 0;
	sf->csum_got = 0;
	if (kept && sf->rx_next_rel == mp->ssn) {
		sf->rx_next_rel = mp->ssn + mp->len;
		sf->rx_next_dsn = mp->dsn + mp->len;
	}
}

void
mptcp_meta_rx_segs(struct mptcp_subflow *sf, uint64_t now)
{
	struct mptcp_meta *mt = sf->meta;
	struct mptcp_proxy *px = mt->px;
	struct rte_mbuf *m;
	uint32_t seq;

	while ((m = tcp_recv_seg(sf->c, &seq, now)) != NULL) {
		uint32_t rel = seq - sf->irs;

		while (m != NULL) {
			uint32_t left = 0, len = m->data_len;
			uint64_t dsn = 0;
			struct rte_mbuf *tail = NULL;

			if (mt->flags & MT_FALLBACK) {
				/* Plain TCP: the first subflow is the stream,
				 * in order. Another one is being reset
				 * (mptcp_meta_fallback()); what it still
				 * delivers (a segment in the same burst as the
				 * one that made the connection fall back) maps
				 * to nothing: dropped and counted below. */
				if (sf->flags & SF_MPC) {
					dsn = mt->rcv_nxt;
					left = len;
				}
			} else if (mt->flags & MT_ESTAB) {
				dsn = mptcp_sf_dsn_of(sf, rel, &left);
			}
			if (left == 0 && !(mt->flags & MT_FALLBACK) &&
			    (sf->flags & SF_MPC) && (mt->flags & MT_ESTAB) &&
			    ((rel == sf->rx_next_rel && mt->rcv_nxt == sf->rx_next_dsn) ||
			     (!(sf->flags & SF_SAW_DSS) &&
			      mt->rcv_nxt == mt->idsn_remote + rel))) {
				/* Data with no mapping on the first subflow:
				 * something between strips MPTCP options (RFC
				 * 8684 3.7), from the start or after mappings
				 * went through (the kernel maps its first data
				 * with MP_CAPABLE, which a DSS stripper lets
				 * pass): plain TCP from here (other subflows,
				 * even half-open joins, are reset), the stream
				 * kept whole. Only if this byte is the next one
				 * at the data level, where the last mapping
				 * this subflow delivered ended (at first the
				 * implicit one: DSN IDSN + 1 at subflow
				 * sequence 1); else it is dropped, never
				 * delivered out of place. */
				mptcp_meta_fallback(mt, MPTCP_PROXY_CNT_MPTCP_FALLBACK_NO_DSS);
				if (mt->flags & MT_MSS_ROOM) {
					/* The client may not know (its DSS is
					 * stripped only on its way to us, our
					 * DATA_ACKs reach it): MP_FAIL on the
					 * next ACK, at the DSN from which this
					 * subflow is the stream (RFC 8684 3.7).
					 * It answers with an infinite mapping
					 * and plain TCP, its end of stream a
					 * FIN, not a DATA_FIN we would never
					 * see. */
					mptcp_sf_fail_arm(sf, mt->rcv_nxt);
				}
				dsn = mt->rcv_nxt;
				left = len;
			}
			if (left == 0) {
				PX_CNT(px, MPTCP_NO_MAPPING) += len;
				rte_pktmbuf_free_seg(m);
				break;
			}
			if (left < len) {
				tail = seg_split(px->pool, m, left);
				if (tail == NULL) {
					PX_CNT(px, MPTCP_RCV_DROPPED) += len;
					rte_pktmbuf_free_seg(m);
					break;
				}
			}
			if (left > len)
				left = len;
			if ((mt->flags & (MT_CSUM | MT_FALLBACK)) == MT_CSUM) {
				const struct mptcp_map *mp = mptcp_sf_map_of(sf, rel);

				if (mp != NULL) {
					csum_hold(sf, mp, m, dsn, rel);
					rel += left;
					m = tail;
					continue;
				}
			}
			/* Where the mapped bytes end, as long as every one of
			 * this subflow's was kept in order. */
			if (rx_insert(mt, m, dsn) && !(mt->flags & MT_FALLBACK) &&
			    rel == sf->rx_next_rel) {
				sf->rx_next_rel = rel + left;
				sf->rx_next_dsn = dsn + left;
			}
			rel += left;
			m = tail;
		}
	}
}

void
mptcp_meta_peer_data_fin(struct mptcp_meta *mt, uint64_t fin_dsn)
{
	if (mt->flags & MT_RCV_FIN)
		return;
	PX_CNT(mt->px, MPTCP_DATA_FIN_IN)++;
	mt->flags |= MT_RCV_FIN;
	mt->rcv_fin_dsn = fin_dsn;
	check_fin(mt);
}

/* ------------------------------------------------------------------ */
/* Send                                                                */

static void
sq_drop(struct mptcp_meta *mt, uint64_t n)
{
	while (n > 0 && mt->sq_head != NULL) {
		struct rte_mbuf *m = mt->sq_head;

		if (n < m->data_len) {
			rte_pktmbuf_adj(m, (uint16_t)n);
			if (m == mt->sq_cur)
				mt->sq_cur_dsn += n;
			return;
		}
		if (m == mt->sq_cur)
			mt->sq_cur = NULL;
		n -= m->data_len;
		mt->sq_head = m->next;
		m->next = NULL;
		m->nb_segs = 1;
		rte_pktmbuf_free_seg(m);
	}
	if (mt->sq_head == NULL)
		mt->sq_tail = NULL;
}

void
mptcp_meta_data_ack(struct mptcp_meta *mt, uint64_t ack, uint32_t wnd, uint64_t now)
{
	uint64_t top = mt->snd_end + ((mt->flags & MT_SND_FIN) && mt->fin_sent_ns ? 1 : 0);

	if (ack < mt->snd_una || ack > top)
		return; /* old, or beyond what was sent: ignored */
	/* The window is the connection's, from the DATA_ACK (RFC 8684
	 * 3.3.4): its right edge never moves back. */
	if (ack + wnd > mt->snd_wnd_end) {
		mt->snd_wnd_end = ack + wnd;
		mptcp_meta_mark(mt);
	}
	if (ack == mt->snd_una)
		return;
	if (ack == mt->snd_end + 1) {
		mt->flags |= MT_SND_FIN_ACK;
		ack = mt->snd_end;
		mptcp_meta_mark(mt);
	}
	if (ack > mt->snd_una) {
		sq_drop(mt, ack - mt->snd_una);
		mt->snd_una = ack;
		mt->data_ack_ns = now;
		/* Progress: the data-level timer restarts, from its base
		 * (RFC 6298 5.7's reset of the backoff). */
		mt->drto_from = mptcp_watch_ns(mt->px, now);
		mt->drto_n = 0;
		mt->drto_early = 0;
		if (mt->snd_nxt < ack)
			mt->snd_nxt = ack;
		if (mt->reinj_lo < ack)
			mt->reinj_lo = RTE_MIN(ack, mt->reinj_hi);
		if ((mt->flags & MT_WANT_WRITE) && snd_room(mt) >= mt->want_space &&
		    snd_room(mt) > 0) {
			mt->flags &= ~MT_WANT_WRITE;
			mt->flags |= MT_WRITABLE_EV;
			mptcp_meta_mark(mt);
		}
	}
}

/* Indirect mbufs for [dsn, dsn + len) of the send queue (NULL: no mbuf). */

struct rte_mbuf *
mptcp_sq_clone(struct mptcp_meta *mt, uint64_t dsn, uint32_t len)
{
	struct rte_mbuf *m = mt->sq_head, *head = NULL, *tail = NULL;
	uint64_t base = mt->snd_una, off;
	uint32_t got = 0;
	uint16_t segs = 0;

	/* Start from the cursor (the mbuf the last clone started in) when
	 * it is not past dsn: new data is asked for in order, and a walk
	 * from the head would cost the whole queue per chunk. */
	if (mt->sq_cur != NULL && dsn >= mt->sq_cur_dsn) {
		m = mt->sq_cur;
		base = mt->sq_cur_dsn;
	}
	off = dsn - base;
	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		base += m->data_len;
		m = m->next;
	}
	mt->sq_cur = m;
	mt->sq_cur_dsn = base;
	while (m != NULL && got < len) {
		uint32_t take = RTE_MIN((uint32_t)(m->data_len - off), len - got);
		struct rte_mbuf *mi = rte_pktmbuf_alloc(mt->px->pool);

		if (mi == NULL) {
			chain_free(head);
			return NULL;
		}
		rte_pktmbuf_attach(mi, m);
		mi->data_off = (uint16_t)(mi->data_off + off);
		mi->data_len = (uint16_t)take;
		mi->pkt_len = take;
		mi->next = NULL;
		if (tail != NULL)
			tail->next = mi;
		else
			head = mi;
		tail = mi;
		got += take;
		segs++;
		off = 0;
		m = m->next;
	}
	if (head == NULL || got < len) {
		chain_free(head);
		return NULL;
	}
	head->pkt_len = got;
	head->nb_segs = segs;
	return head;
}

/* ------------------------------------------------------------------ */
/* The endpoint the relay sees                                          */

static uint32_t
meta_readable(void *ctx)
{
	struct mptcp_meta *mt = ctx;

	return mt->rq_head != NULL ? mt->rq_head->data_len : 0;
}

static struct rte_mbuf *
meta_recv(void *ctx, uint32_t max, uint64_t now)
{
	struct mptcp_meta *mt = ctx;
	struct rte_mbuf *head = mt->rq_head, *last = NULL, *m = head;
	uint32_t before = mptcp_meta_rcv_space(mt), got = 0;
	uint16_t segs = 0;

	RTE_SET_USED(now);
	while (m != NULL && got + m->data_len <= max) {
		got += m->data_len;
		segs++;
		last = m;
		m = m->next;
	}
	if (last == NULL)
		return NULL;
	mt->rq_head = m;
	if (m == NULL)
		mt->rq_tail = NULL;
	last->next = NULL;
	mt->rq_bytes -= got;
	head->pkt_len = got;
	head->nb_segs = segs;
	if (mt->rq_head == NULL && mt->nsf == 0)
		mptcp_meta_mark(mt); /* the last bytes left: release it */
	/* A window that had closed below half reopens: say so at once
	 * (the subflows send no window update of their own for it). */
	if (before < rcv_lim(mt) / 2 && mptcp_meta_rcv_space(mt) >= rcv_lim(mt) / 2) {
		for (unsigned i = 0; i < MPTCP_SUBFLOWS_MAX; i++)
			if (mt->sf[i] != NULL && (mt->sf[i]->flags & SF_ESTAB) &&
			    !(mt->sf[i]->flags & SF_DEAD))
				mt->sf[i]->flags |= SF_ACK_NOW;
		mptcp_meta_mark(mt);
	}
	return head;
}

static uint32_t
meta_send_space(void *ctx, uint32_t want)
{
	struct mptcp_meta *mt = ctx;
	uint32_t room = snd_room(mt);

	if (room < want) {
		mt->flags |= MT_WANT_WRITE;
		mt->want_space = RTE_MIN(want, snd_lim(mt));
	}
	return room;
}

static int32_t
meta_send(void *ctx, struct rte_mbuf *m, uint64_t now)
{
	struct mptcp_meta *mt = ctx;
	uint32_t len = rte_pktmbuf_pkt_len(m);
	struct rte_mbuf *last = m;

	if (mt->flags & (MT_ABORTED | MT_SND_FIN))
		return -EPIPE;
	/* The limit is the connection's, snd_buf per subflow, as
	 * meta_send_space() said: the relay takes up to that room at once. */
	if (len > snd_lim(mt))
		return -EMSGSIZE;
	if ((uint32_t)(mt->snd_end - mt->snd_una) + len > snd_lim(mt)) {
		mt->flags |= MT_WANT_WRITE;
		mt->want_space = len;
		return 0;
	}
	/* Keep each mbuf a segment of its own: the send queue is a list of
	 * single mbufs, the clones point into them. */
	while (last->next != NULL)
		last = last->next;
	for (struct rte_mbuf *s = m; s != NULL; s = s->next) {
		s->nb_segs = 1;
		s->pkt_len = s->data_len;
	}
	if (mt->sq_tail != NULL)
		mt->sq_tail->next = m;
	else
		mt->sq_head = m;
	mt->sq_tail = last;
	mt->snd_end += len;
	mptcp_sched_push(mt, now);
	return (int32_t)len;
}

static void
meta_shutdown(void *ctx, uint64_t now)
{
	struct mptcp_meta *mt = ctx;

	RTE_SET_USED(now);
	mt->flags |= MT_SND_FIN;
	mptcp_meta_mark(mt);
}

static void
meta_abort_op(void *ctx, uint64_t now)
{
	mptcp_meta_abort(ctx, now);
}

const struct mptcp_proxy_endpoint_ops mptcp_meta_endpoint = {
	.readable = meta_readable,
	.recv = meta_recv,
	.send_space = meta_send_space,
	.send = meta_send,
	.shutdown = meta_shutdown,
	.abort = meta_abort_op,
};

/* ------------------------------------------------------------------ */
/* Fallback, abort, subflows gone                                       */

void
mptcp_meta_fallback(struct mptcp_meta *mt, unsigned cause)
{
	if (mt->flags & MT_FALLBACK)
		return;
	mt->flags |= MT_FALLBACK;
	mt->px->cnt[cause]++;
	mt->fallback_cause = (uint8_t)cause;
	/* What the first subflow was given it now delivers as plain TCP:
	 * its own ACKs are the connection's from here (push_fallback()). */
	if (mt->snd_nxt > mt->snd_una)
		mptcp_meta_data_ack(mt, mt->snd_nxt, 0, mt->data_ack_ns);
	/* One subflow carries the stream from here, in order from rcv_nxt:
	 * what others mapped ahead of it must not fill in (rcv_nxt would
	 * run past that subflow's next byte). */
	chain_free(mt->ooo_head);
	mt->ooo_head = mt->ooo_tail = NULL;
	mt->ooo_bytes = 0;
	/* The other subflows go. What the first one held for a checksum
	 * is the stream's next bytes: plain TCP has no checksum to wait
	 * for. */
	for (unsigned i = 0; i < MPTCP_SUBFLOWS_MAX; i++) {
		struct mptcp_subflow *sf = mt->sf[i];

		if (sf == NULL)
			continue;
		if (!(sf->flags & SF_MPC)) {
			sf->flags |= SF_DEAD | SF_RESET;
			continue;
		}
		for (struct rte_mbuf *h = sf->held_head, *n; h != NULL; h = n) {
			n = h->next;
			h->next = NULL;
			rx_insert(mt, h, MPTCP_DSN(mt->px, h));
		}
		sf->held_head = sf->held_tail = NULL;
		sf->csum_map.len = 0;
		sf->csum_got = 0;
	}
	mptcp_meta_mark(mt);
}

void
mptcp_meta_abort(struct mptcp_meta *mt, uint64_t now)
{
	if (mt->flags & MT_ABORTED)
		return;
	mt->flags |= MT_ABORTED;
	if (mt->flags & MT_ESTAB)
		PX_CNT(mt->px, MPTCP_FASTCLOSE_OUT)++;
	for (unsigned i = 0; i < MPTCP_SUBFLOWS_MAX; i++) {
		struct mptcp_subflow *sf = mt->sf[i];

		if (sf != NULL && sf->c != NULL && !(sf->flags & SF_CLOSED)) {
			sf->flags |= SF_DEAD;
			tcp_abort(sf->c, now); /* its RST carries MP_FASTCLOSE */
		}
	}
	mptcp_meta_mark(mt);
}

void
mptcp_meta_sf_gone(struct mptcp_meta *mt, struct mptcp_subflow *sf, uint64_t now)
{
	struct mptcp_proxy *px = mt->px;

	RTE_SET_USED(now);
	if (!(mt->flags & (MT_ABORTED | MT_FALLBACK)))
		mptcp_sched_reinject_sf(mt, sf);
	(void)mptcp_sf_held_free(sf);
	mt->sf[sf->id] = NULL;
	mt->nsf--;
	sf->c = NULL;
	sf->next_free = px->sf_free;
	px->sf_free = sf;
	px->sf_active--;
	mptcp_meta_mark(mt);
}

static void
meta_release(struct mptcp_meta *mt, uint64_t now)
{
	struct mptcp_proxy *px = mt->px;
	struct proxy_pair *p = mt->pair;
	bool clean = (mt->flags & (MT_SND_FIN_ACK | MT_RCV_FIN_IN)) ==
		     (MT_SND_FIN_ACK | MT_RCV_FIN_IN) ||
		     ((mt->flags & MT_FALLBACK) && (mt->flags & MT_SND_FIN) &&
		      (mt->flags & MT_RCV_FIN_IN));

	if (mt->local.token != 0 || mt->local.key != 0)
		mptcp_token_del(px, mt);
	chain_free(mt->rq_head);
	chain_free(mt->ooo_head);
	chain_free(mt->sq_head);
	mt->sq_cur = NULL;
	mt->rq_head = mt->rq_tail = mt->ooo_head = mt->ooo_tail = NULL;
	mt->sq_head = mt->sq_tail = NULL;
	if (mt->prev != NULL)
		mt->prev->next = mt->next;
	else
		px->meta_active = mt->next;
	if (mt->next != NULL)
		mt->next->prev = mt->prev;
	px->mptcp_active--;
	mt->flags |= MT_FREED;
	mt->next = px->meta_free;
	px->meta_free = mt;
	if (p != NULL) {
		mt->pair = NULL;
		p->meta = NULL;
		/* A connection that did not end with both DATA_FINs is a
		 * reset for the server leg. */
		proxy_leg_event(&p->cl, TCP_EV_CLOSED | (clean ? 0 : TCP_EV_RESET), now);
	}
}

/* What hooks and callbacks recorded, done with the engine at hand. */
static void
meta_process(struct mptcp_meta *mt, uint64_t now)
{
	struct mptcp_proxy *px = mt->px;
	struct proxy_pair *p = mt->pair;
	uint32_t ev = 0;

	if ((mt->flags & MT_FASTCLOSE_RCVD) && !(mt->flags & MT_ABORTED)) {
		PX_CNT(px, MPTCP_FASTCLOSE_IN)++;
		mptcp_meta_abort(mt, now);
	}
	if ((mt->flags & MT_ABORT_NOW) && !(mt->flags & MT_ABORTED))
		mptcp_meta_abort(mt, now);
	for (unsigned i = 0; i < MPTCP_SUBFLOWS_MAX; i++) {
		struct mptcp_subflow *sf = mt->sf[i];

		if (sf == NULL || sf->c == NULL || (sf->flags & SF_CLOSED))
			continue;
		if ((sf->flags & SF_RESET) && !(mt->flags & MT_ABORTED)) {
			/* Removed, refused or superseded: reset it. */
			sf->flags &= (uint16_t)~(SF_RESET | SF_ACK_NOW);
			sf->flags |= SF_DEAD;
			tcp_abort(sf->c, now);
			continue;
		}
		/* A pure ACK goes at our next sequence: on a join the client
		 * may still hold half established, with our first segment on
		 * its way, it would reach the client as a gap if that segment
		 * were lost (sf_budget() in mptcp_sched.c). It waits; the
		 * other subflows carry the DATA_ACK meanwhile. */
		if ((sf->flags & SF_ACK_NOW) && !mptcp_sf_join_waits(sf)) {
			sf->flags &= (uint16_t)~SF_ACK_NOW;
			(void)tcp_conn_send_ack(sf->c, now);
		}
	}
	if (p != NULL && !(mt->flags & MT_ABORTED)) {
		if (mt->flags & MT_READABLE)
			ev |= TCP_EV_READABLE;
		if (mt->flags & MT_PEER_FIN_EV)
			ev |= TCP_EV_PEER_FIN;
		if (mt->flags & MT_WRITABLE_EV)
			ev |= TCP_EV_WRITABLE;
		mt->flags &= ~(MT_READABLE | MT_PEER_FIN_EV | MT_WRITABLE_EV);
		if (ev)
			proxy_leg_event(&p->cl, ev, now);
	}
	if (mt->pair == NULL && !(mt->flags & MT_ABORTED) && mt->nsf > 0) {
		/* The server leg is gone without a FIN (its reset). */
		mptcp_meta_abort(mt, now);
	}
	if (!(mt->flags & MT_ABORTED))
		mptcp_sched_push(mt, now);
	/* DATA_FIN once every byte was handed to a subflow. */
	if ((mt->flags & (MT_SND_FIN | MT_SND_FIN_ACK | MT_ABORTED)) == MT_SND_FIN &&
	    (mt->flags & MT_ESTAB) && mt->snd_nxt == mt->snd_end &&
	    mt->reinj_lo >= mt->reinj_hi) {
		if (mt->flags & MT_FALLBACK) {
			struct mptcp_subflow *sf = NULL;

			for (unsigned i = 0; i < MPTCP_SUBFLOWS_MAX && sf == NULL; i++)
				if (mt->sf[i] != NULL && (mt->sf[i]->flags & SF_MPC))
					sf = mt->sf[i];
			if (sf != NULL && sf->c != NULL && !(sf->flags & SF_CLOSED))
				(void)tcp_shutdown(sf->c, now);
			mt->flags |= MT_SND_FIN_ACK;
			mt->fin_sent_ns = now;
		} else if (mt->fin_sent_ns == 0) {
			mptcp_meta_send_data_fin(mt, now);
		}
	}
	if (!(mt->flags & (MT_CLOSING | MT_ABORTED | MT_FALLBACK)) &&
	    (mt->flags & (MT_SND_FIN_ACK | MT_RCV_FIN_IN)) ==
	    (MT_SND_FIN_ACK | MT_RCV_FIN_IN)) {
		mt->flags |= MT_CLOSING;
		for (unsigned i = 0; i < MPTCP_SUBFLOWS_MAX; i++)
			if (mt->sf[i] != NULL && mt->sf[i]->c != NULL &&
			    !(mt->sf[i]->flags & SF_CLOSED))
				(void)tcp_shutdown(mt->sf[i]->c, now);
	}
	/* Gone once every subflow is, but not before the relay took what
	 * the client sent: its subflows may all have closed (both DATA_FINs
	 * acknowledged) while the upload's tail still waits here for room
	 * on the server leg. */
	if (mt->nsf == 0 && !(mt->flags & MT_FREED) &&
	    (mt->rq_head == NULL || mt->pair == NULL || (mt->flags & MT_ABORTED)))
		meta_release(mt, now);
}

/* The DATA_FIN goes on a pure ACK (its DSS carries it): the first time
 * on one subflow, a fresh one if there is one; each time again (no
 * DATA_ACK of it for an RTO) on every subflow that may still deliver.
 * A subflow whose path died with nothing of ours in flight never turns
 * stale (only bytes it sent count), so resending on one subflow could
 * pick the dead one every time, and the client waited for its DATA_FIN
 * for good (the unit test
 * a_data_fin_lost_on_a_dead_idle_path_is_sent_again_on_the_other). */
void
mptcp_meta_send_data_fin(struct mptcp_meta *mt, uint64_t now)
{
	struct mptcp_subflow *best = NULL;
	bool again = mt->fin_sent_ns != 0;

	for (unsigned i = 0; i < MPTCP_SUBFLOWS_MAX; i++) {
		struct mptcp_subflow *sf = mt->sf[i];

		if (sf == NULL || sf->c == NULL || !(sf->flags & SF_ESTAB) ||
		    (sf->flags & (SF_DEAD | SF_CLOSED)) ||
		    mptcp_sf_join_waits(sf))
			continue; /* (the last: see meta_process()'s pure ACKs) */
		if (again)
			(void)tcp_conn_send_ack(sf->c, now);
		else if (best == NULL || ((best->flags & SF_STALE) && !(sf->flags & SF_STALE)))
			best = sf;
	}
	if (again) {
		mt->fin_sent_ns = now;
		return;
	}
	if (best == NULL)
		return;
	PX_CNT(mt->px, MPTCP_DATA_FIN_OUT)++;
	mt->fin_sent_ns = now;
	(void)tcp_conn_send_ack(best->c, now);
}

void
mptcp_flush(struct mptcp_proxy *px, uint64_t now)
{
	struct mptcp_meta *mt;

	while ((mt = px->dirty) != NULL) {
		px->dirty = mt->dirty_next;
		mt->dirty_next = NULL;
		mt->flags &= ~MT_DIRTY;
		meta_process(mt, now);
	}
}

/* Every subflow that can still deliver delivered what it carried. A
 * stale or dead one is left out: what it holds went out again on the
 * others when it turned so (mptcp_sched_reinject_sf()), and a path that
 * died delivers nothing more. Counting it kept the data-level
 * retransmission from ever firing once a path died (issue 16). */
static bool
all_delivered(const struct mptcp_meta *mt)
{
	for (unsigned i = 0; i < MPTCP_SUBFLOWS_MAX; i++) {
		const struct mptcp_subflow *sf = mt->sf[i];

		if (sf != NULL && sf->c != NULL &&
		    !(sf->flags & (SF_CLOSED | SF_STALE | SF_DEAD)) &&
		    sf->tx_una_rel != sf->tx_end_rel)
			return false;
	}
	return true;
}

uint64_t
mptcp_watch_ns(const struct mptcp_proxy *px, uint64_t now)
{
	return px->watch_ns + RTE_MIN(now - px->tick_ns, STALE_GAP_NS);
}

uint32_t
mptcp_sf_sent_unacked(const struct mptcp_subflow *sf)
{
	uint32_t held = sf->tx_end_rel - sf->tx_una_rel;
	uint32_t unsent = sf->c != NULL ? tcp_conn_unsent(sf->c) : 0;

	return held > unsent ? held - unsent : 0;
}

/* How long bytes a subflow sent may go unacknowledged before it is
 * stale: its RTO-like bound SRTT + 4 RTTVAR (RFC 6298 2.3), but at
 * least twice SRTT plus STALE_SLACK and at least STALE_MIN. A
 * round-trip time that jumps grows RTTVAR at once while SRTT lags:
 * twice the lagging SRTT alone turned healthy subflows stale (issue
 * 16). The other two terms hold for a steady path, whose RTTVAR the
 * engine's sample per ACK brings close to 0. */
uint64_t
mptcp_sf_stale_bound(const struct tcp_conn *c)
{
	uint64_t srtt = tcp_conn_srtt_ns(c);
	uint64_t q = RTE_MAX(srtt + 4 * tcp_conn_rttvar_ns(c), 2 * srtt + STALE_SLACK_NS);

	return RTE_MAX(q, STALE_MIN_NS);
}

/* Every 10 ms: subflows that stopped answering are stale (their data
 * goes out again on the others at once); a DATA_FIN not yet
 * acknowledged is sent again. */
void
mptcp_meta_tick(struct mptcp_proxy *px, uint64_t now)
{
	uint64_t watch;

	if (now - px->tick_ns < META_TICK_NS)
		return;
	watch = px->watch_ns = mptcp_watch_ns(px, now);
	px->tick_ns = now;
	for (struct mptcp_meta *mt = px->meta_active; mt != NULL; mt = mt->next) {
		uint64_t rto = DATA_FIN_RTO_MIN;

		if ((mt->flags & (MT_ESTAB | MT_ABORTED)) == MT_ESTAB)
			for (unsigned i = 0; i < MPTCP_SUBFLOWS_MAX; i++)
				if (mt->sf[i] != NULL && (mt->sf[i]->flags & SF_FAIL_NOW))
					mptcp_sf_fail_tick(mt->sf[i], now);
		if (!(mt->flags & MT_ESTAB) || (mt->flags & (MT_ABORTED | MT_FALLBACK)))
			continue;
		struct mptcp_subflow *late[MPTCP_SUBFLOWS_MAX];
		unsigned nlate = 0;
		bool live = false;

		for (unsigned i = 0; i < MPTCP_SUBFLOWS_MAX; i++) {
			struct mptcp_subflow *sf = mt->sf[i];
			uint64_t quiet, silent;

			if (sf == NULL || sf->c == NULL || (sf->flags & SF_CLOSED))
				continue;
			/* Stale (README, "Failover"): bytes it sent went
			 * unacknowledged, without any ACK that moved, for
			 * longer than mptcp_sf_stale_bound(), or at least
			 * STALE_MIN ending in a retransmission timeout; time
			 * counted on the watched clock. A path that went away
			 * shows here long before its RTO, and what it holds
			 * goes out again on the others. Bytes queued but never
			 * sent wait for a window, not for the path: they do not
			 * count. An ACK that moves makes it fresh. */
			if (mptcp_sf_sent_unacked(sf) == 0)
				sf->quiet_from = watch;
			silent = watch - sf->quiet_from;
			quiet = mptcp_sf_stale_bound(sf->c);
			if (sf->flags & SF_STALE)
				continue;
			if (silent > quiet ||
			    (silent > STALE_MIN_NS && tcp_conn_rto_streak(sf->c) > 0))
				late[nlate++] = sf;
			else if ((sf->flags & (SF_ESTAB | SF_DEAD)) == SF_ESTAB)
				live = true;
		}
		/* ... but only while another subflow still answers: when
		 * every one is silent at once, the client (its machine
		 * starved) is, not a path, and the others could carry the
		 * bytes no better. */
		for (unsigned k = 0; live && k < nlate; k++) {
			late[k]->flags |= SF_STALE;
			PX_CNT(px, MPTCP_SF_STALE)++;
			mptcp_sched_reinject_sf(mt, late[k]);
			mptcp_meta_mark(mt);
		}
		/* The connection's RTO is that of the subflows that can carry
		 * its retransmissions: a dead path's RTT (it was seen to be
		 * seconds under load) would only delay them. */
		uint64_t srtt2 = 0; /* twice the largest smoothed RTT of those */

		for (unsigned i = 0; i < MPTCP_SUBFLOWS_MAX; i++) {
			const struct mptcp_subflow *sf = mt->sf[i];

			if (sf != NULL && sf->c != NULL &&
			    !(sf->flags & (SF_CLOSED | SF_STALE | SF_DEAD)) &&
			    2 * tcp_conn_srtt_ns(sf->c) > srtt2)
				srtt2 = 2 * tcp_conn_srtt_ns(sf->c);
		}
		rto = RTE_MAX(rto, srtt2);
		if ((mt->flags & (MT_SND_FIN | MT_SND_FIN_ACK)) == MT_SND_FIN &&
		    mt->fin_sent_ns != 0 && now - mt->fin_sent_ns > rto)
			mptcp_meta_send_data_fin(mt, now);
		/* Data-level retransmission: every subflow delivered what it
		 * carried, yet the DATA_ACK stands still (the client dropped
		 * bytes after acknowledging them on a subflow): send again
		 * what it lacks. Timed on the watched clock (a proxy that did
		 * not run has the DATA_ACKs still in its ring), from the last
		 * progress, the last moment nothing was outstanding, or the
		 * last retransmission; each one without progress since
		 * doubles the wait (RFC 6298 5.5-5.7), up to a minute. */
		if (mt->snd_una == mt->snd_nxt) {
			mt->drto_from = watch;
			mt->drto_n = 0;
			mt->drto_early = 0;
		} else if (mt->reinj_lo >= mt->reinj_hi &&
			   watch - mt->drto_from >
			   RTE_MIN((DRTO_MULT * rto) << RTE_MIN(mt->drto_n, 16u), DRTO_MAX_NS) &&
			   all_delivered(mt)) {
			PX_CNT(px, MPTCP_DATA_RTO)++;
			if (mt->drto_n > 0)
				PX_CNT(px, MPTCP_DATA_RTO_BACKOFF)++;
			mt->drto_n++;
			mt->drto_from = watch;
			mt->reinj_lo = mt->snd_una;
			mt->reinj_hi = mt->snd_nxt;
			mptcp_meta_mark(mt);
		} else if (!mt->drto_early && mt->drto_n == 0 &&
			   mt->reinj_lo >= mt->reinj_hi &&
			   mt->snd_wnd_end >= mt->snd_nxt + MPTCP_CHUNK_MAX &&
			   watch - mt->drto_from > RTE_MAX(srtt2, DRTO_EARLY_MIN_NS) &&
			   all_delivered(mt)) {
			/* The early one (DRTO_EARLY_MIN): the chunk at the
			 * DATA_ACK, once; the RTO's wait is not restarted. */
			PX_CNT(px, MPTCP_DATA_RTO_EARLY)++;
			mt->drto_early = 1;
			mt->reinj_lo = mt->snd_una;
			mt->reinj_hi = RTE_MIN(mt->snd_nxt, mt->snd_una + MPTCP_CHUNK_MAX);
			mptcp_meta_mark(mt);
		}
		/* Data-level zero-window probe: data waits, none is in
		 * flight (no DATA_ACK will come on its own), and it stayed so
		 * for an RTO: the client's windows are closed, and the update
		 * that opens them may be lost. Probes back off exponentially
		 * (RFC 9293 3.8.6.1) up to a minute, until data moves. */
		if (mt->snd_nxt > mt->zwp_nxt)
			mt->zwp_n = 0; /* data went past the last probe: it opened */
		if (mt->snd_una == mt->snd_nxt && mt->snd_nxt < mt->snd_end &&
		    mt->reinj_lo >= mt->reinj_hi) {
			if (mt->zwp_at == 0) {
				mt->zwp_at = now + RTE_MIN(rto << RTE_MIN(mt->zwp_n, 16u), ZWP_MAX_NS);
			} else if (now >= mt->zwp_at) {
				if (mptcp_sched_probe(mt, now)) {
					PX_CNT(px, MPTCP_DATA_ZWP)++;
					mt->zwp_nxt = mt->snd_nxt;
				}
				mt->zwp_n++;
				mt->zwp_at = now + RTE_MIN(rto << RTE_MIN(mt->zwp_n, 16u), ZWP_MAX_NS);
			}
		} else {
			mt->zwp_at = 0;
		}
	}
	mptcp_flush(px, now);
}
