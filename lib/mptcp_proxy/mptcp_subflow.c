/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPTCP subflows: lib/tcp connections whose hooks read and write the
 * MPTCP options (RFC 8684), and the handshakes that make them.
 *
 * - MP_CAPABLE (§3.1): the client's SYN asked; the first subflow's
 *   SYN-ACK carries our key, the client's third ACK (or first data)
 *   both keys. From then data flows with DSS mappings.
 * - MP_JOIN (§3.2): a SYN whose token names one of our connections is
 *   answered with the truncated HMAC and our nonce; the third ACK's full
 *   HMAC is checked before the subflow carries anything, and a wrong one
 *   resets it. An unknown token is answered with RST at once.
 * - Every segment we send carries a DSS: a DATA_ACK (64 bits) always,
 *   the mapping of its bytes on data (with its checksum when the client
 *   asked for them), the DATA_FIN when it is due.
 * - Fallback (§3.7): an ACK of our data without any MPTCP option on the
 *   only subflow means the client fell back, or its DSS is stripped; a
 *   client that may not know gets an infinite mapping on our data.
 * - Path management (§3.4): we announce nothing. REMOVE_ADDR resets the
 *   subflows of that address (their data goes out again on the others),
 *   MP_PRIO sets a subflow's backup flag, ADD_ADDR is echoed (we open no
 *   subflow toward the client: it sits behind its operator's NAT).
 * - Hooks only record; the owner acts from the event callback and from
 *   mptcp_flush().
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_mbuf.h>

#include "mptcp_be.h"
#include "mptcp_dss.h"
#include "pkt.h"
#include "pkt_tcpopt.h"
#include "proxy_priv.h"

#define DSS_ACK_LEN   12 /* DSS with an 8-byte DATA_ACK */
#define DSS_FULL_LEN  MPTCP_DSS_DATA_LEN /* a 4-byte DATA_ACK and an 8-byte
					  * DSN mapping, with the checksum */
#define MPTCP_FAIL_LEN 12 /* MP_FAIL with its 64-bit DSN */

/* Coupled congestion control (RFC 6356 LIA) when configured. */
static void
mptcp_cc_join(struct mptcp_meta *mt, struct tcp_conn *c)
{
	if (mt->px->mptcp_lia)
		(void)tcp_cc_group_join(&mt->cc, c);
}

struct mptcp_subflow *
mptcp_sf_new(struct mptcp_meta *mt, struct tcp_conn *c)
{
	struct mptcp_proxy *px = mt->px;
	struct mptcp_subflow *sf = px->sf_free;
	unsigned id;

	if (sf == NULL || mt->nsf >= px->max_subflows)
		return NULL;
	for (id = 0; id < MPTCP_SUBFLOWS_MAX; id++)
		if (mt->sf[id] == NULL)
			break;
	if (id == MPTCP_SUBFLOWS_MAX)
		return NULL;
	px->sf_free = sf->next_free;
	memset(sf, 0, sizeof(*sf));
	sf->obj = PX_OBJ_SUBFLOW;
	sf->id = (uint8_t)id;
	sf->meta = mt;
	sf->c = c;
	sf->tx_una_rel = sf->tx_end_rel = 1;
	mt->sf[id] = sf;
	mt->nsf++;
	px->sf_active++;
	return sf;
}

/* The DSN of the byte at relative subflow sequence rel, and how many
 * bytes from there the same mapping covers (*left 0: none covers it). */
uint64_t
mptcp_sf_dsn_of(const struct mptcp_subflow *sf, uint32_t rel, uint32_t *left)
{
	*left = 0;
	for (unsigned k = 0; k < MPTCP_RX_MAPS; k++) {
		const struct mptcp_map *mp =
			&sf->rx[(sf->rx_head - 1 - k) % MPTCP_RX_MAPS];
		uint32_t off = rel - mp->ssn;

		if (mp->len == 0)
			continue;
		if (off < mp->len) {
			*left = mp->len - off;
			return mp->dsn + off;
		}
	}
	return 0;
}

const struct mptcp_map *
mptcp_sf_map_of(const struct mptcp_subflow *sf, uint32_t rel)
{
	for (unsigned k = 0; k < MPTCP_RX_MAPS; k++) {
		const struct mptcp_map *mp =
			&sf->rx[(sf->rx_head - 1 - k) % MPTCP_RX_MAPS];

		if (mp->len != 0 && rel - mp->ssn < mp->len)
			return mp;
	}
	return NULL;
}

uint32_t
mptcp_sf_held_free(struct mptcp_subflow *sf)
{
	struct rte_mbuf *m = sf->held_head;
	uint32_t n = 0;

	while (m != NULL) {
		struct rte_mbuf *next = m->next;

		n += m->data_len;
		m->next = NULL;
		m->nb_segs = 1;
		rte_pktmbuf_free_seg(m);
		m = next;
	}
	sf->held_head = sf->held_tail = NULL;
	sf->csum_map.len = 0;
	sf->csum_got = 0;
	return n;
}

/* flags: MPTCP_MAP_FIN when the DATA_FIN follows (the checksum's
 * data-level length counts it). */
static void
rx_map_add(struct mptcp_subflow *sf, uint64_t dsn, uint32_t ssn, uint16_t len,
	   uint16_t flags, uint16_t csum)
{
	struct mptcp_map *last = &sf->rx[(sf->rx_head - 1) % MPTCP_RX_MAPS];

	if (len == 0)
		return;
	if (last->len == len && last->ssn == ssn && last->dsn == dsn)
		return; /* repeated on every segment of a large mapping */
	for (unsigned k = 0; k < MPTCP_RX_MAPS; k++) {
		struct mptcp_map *mp = &sf->rx[k];

		if (mp->len == len && mp->ssn == ssn && mp->dsn == dsn)
			return;
	}
	sf->rx[sf->rx_head % MPTCP_RX_MAPS] = (struct mptcp_map){
		.dsn = dsn, .ssn = ssn, .len = len, .flags = flags, .csum = csum };
	sf->rx_head++;
}

/* The peer acknowledged subflow bytes up to relative sequence una. */
static void
tx_acked(struct mptcp_subflow *sf, uint32_t una, uint64_t now)
{
	if (!rel_lt(sf->tx_una_rel, una) || rel_lt(sf->tx_end_rel, una))
		return;
	sf->tx_una_rel = una;
	sf->flags |= SF_JOIN_SEEN;
	sf->quiet_from = mptcp_watch_ns(sf->meta->px, now);
	if (sf->flags & SF_STALE) {
		sf->flags &= (uint16_t)~SF_STALE; /* the path answers again */
	}
	while (sf->tx_n > 0) {
		struct mptcp_map *mp = &sf->tx[sf->tx_first % MPTCP_TX_MAPS];

		if (rel_lt(una, mp->ssn + mp->len))
			break;
		sf->tx_first++;
		sf->tx_n--;
	}
	mptcp_meta_mark(sf->meta); /* room for the scheduler */
}

/* The send mapping that covers relative sequence rel. Newest first: a
 * new segment's bytes are in the last mapping handed over, and a
 * subflow keeps up to MPTCP_TX_MAPS of them in flight; the mappings do
 * not overlap, so the order changes nothing but the walk. */
static const struct mptcp_map *
tx_find(const struct mptcp_subflow *sf, uint32_t rel)
{
	for (uint32_t k = sf->tx_n; k-- > 0;) {
		const struct mptcp_map *mp = &sf->tx[(sf->tx_first + k) % MPTCP_TX_MAPS];

		if (rel - mp->ssn < mp->len)
			return mp;
	}
	return NULL;
}

/* The client's keys arrived (third ACK, or first data): data may flow. */
static void
meta_keys(struct mptcp_meta *mt, struct mptcp_subflow *sf, uint64_t key_remote)
{
	uint32_t token;
	uint64_t idsn;

	mptcp_key_token_idsn(key_remote, &token, &idsn);
	mt->key_remote = key_remote;
	mt->token_remote = token;
	mt->idsn_remote = idsn;
	mt->rcv_nxt = idsn + 1;
	/* The first subflow's implicit start: DSN IDSN + 1 at sequence 1. */
	sf->rx_next_rel = 1;
	sf->rx_next_dsn = idsn + 1;
	mt->flags |= MT_ESTAB;
	PX_CNT(mt->px, MPTCP_ESTABLISHED)++;
	mptcp_meta_mark(mt);
}

/* The client announces an address (RFC 8684 3.4.1): with a right HMAC
 * (its key, then ours) it is acknowledged by an echo (E set, the same
 * ID, address and port, no HMAC) on the next pure ACK of this subflow;
 * else the kernel resends it. A wrong HMAC is ignored, counted. We open
 * no subflow toward it: the client sits behind its operator's NAT. */
static void
add_addr(struct mptcp_subflow *sf, const struct mptcp_opt *o)
{
	struct mptcp_meta *mt = sf->meta;
	const typeof(o->u.add_addr) *a = &o->u.add_addr;

	if (mptcp_add_addr_hmac(mt->key_remote, mt->local.key, a->addr_id, a->addr,
				a->ipv6 ? 16 : 4, a->has_port ? a->port : 0) != a->hmac64) {
		PX_CNT(mt->px, MPTCP_ADD_ADDR_BAD_HMAC)++;
		return;
	}
	PX_CNT(mt->px, MPTCP_ADD_ADDR)++;
	mt->echo = *o;
	mt->echo.u.add_addr.echo = true;
	mt->echo.u.add_addr.hmac64 = 0;
	sf->flags |= SF_ACK_NOW;
	mptcp_meta_mark(mt);
}

static uint32_t
echo_len(const struct mptcp_meta *mt)
{
	if (mt->echo.sub != MPTCP_SUB_ADD_ADDR)
		return 0;
	return (mt->echo.u.add_addr.ipv6 ? 20u : 8u) + (mt->echo.u.add_addr.has_port ? 2u : 0u);
}

static void
remove_addr(struct mptcp_meta *mt, const struct mptcp_opt *o)
{
	for (unsigned i = 0; i < o->u.rm_addr.n; i++)
		for (unsigned k = 0; k < MPTCP_SUBFLOWS_MAX; k++) {
			struct mptcp_subflow *sf = mt->sf[k];

			if (sf != NULL && sf->addr_id == o->u.rm_addr.ids[i] &&
			    !(sf->flags & SF_CLOSED)) {
				sf->flags |= SF_DEAD | SF_RESET;
				mptcp_sched_reinject_sf(mt, sf);
			}
		}
	mptcp_meta_mark(mt);
}

/* A mapping without its checksum although both ends use them: the
 * subflow cannot be trusted (RFC 8684 3.3.1); it is reset. */
static void
csum_missing(struct mptcp_subflow *sf)
{
	PX_CNT(sf->meta->px, MPTCP_CSUM_MISSING)++;
	sf->rst_reason = MPTCP_TCPRST_MPTCP_ERROR;
	sf->flags |= SF_RESET | SF_DEAD;
	mptcp_sched_reinject_sf(sf->meta, sf);
	mptcp_meta_mark(sf->meta);
}

/* An ACK of our data with no MPTCP option at all, on the first and only
 * subflow: the client never sends one while it speaks MPTCP (every
 * segment carries its DATA_ACK), so either it fell back (it got our data
 * without DSS) or something between strips DSS toward us. Plain TCP from
 * here (RFC 8684 3.7): one subflow, whose ACKs are the connection's. */
static void
ack_without_dss(struct mptcp_subflow *sf, const struct tcp_hook_seg *seg)
{
	struct mptcp_meta *mt = sf->meta;
	uint32_t ack_rel = seg->ack - sf->iss;

	/* Not once the client sent its DATA_FIN or closing began: a TCP in
	 * TIME-WAIT answers without options. */
	if ((seg->flags & (0x10 | 0x04 | 0x02 | 0x01)) != 0x10 ||
	    (mt->flags & (MT_ESTAB | MT_FALLBACK | MT_RCV_FIN | MT_CLOSING | MT_ABORTED)) != MT_ESTAB ||
	    (sf->flags & (SF_MPC | SF_ESTAB | SF_DEAD | SF_CLOSED)) != (SF_MPC | SF_ESTAB) ||
	    mt->nsf != 1)
		return;
	if (!rel_lt(1, ack_rel) || rel_lt(sf->tx_end_rel, ack_rel))
		return; /* no data of ours acknowledged, or not sent */
	if (seg->seq - sf->irs != sf->rx_next_rel || mt->rcv_nxt != sf->rx_next_dsn)
		return; /* plain TCP from here would not continue the stream */
	mptcp_meta_fallback(mt, MPTCP_PROXY_CNT_MPTCP_FALLBACK_ACK_NO_DSS);
}

void
mptcp_sf_fail_arm(struct mptcp_subflow *sf, uint64_t dsn)
{
	sf->fail_dsn = dsn;
	sf->fail_sends = 0;
	sf->flags |= SF_FAIL_NOW | SF_ACK_NOW;
}

/* An MP_FAIL is owed on the next ACK: the first at once, the others once
 * MPTCP_FAIL_RESEND_NS passed without the client's answer. */
static bool
fail_due(const struct mptcp_subflow *sf)
{
	return (sf->flags & SF_FAIL_NOW) &&
	       (sf->fail_sends == 0 ||
		sf->meta->px->tick_ns - sf->fail_at >= MPTCP_FAIL_RESEND_NS);
}

/* From the meta tick: a resend that is due goes out on an ACK of its
 * own (the client may be sending nothing we would acknowledge). */
void
mptcp_sf_fail_tick(struct mptcp_subflow *sf, uint64_t now)
{
	if (!(sf->flags & SF_RESET) && sf->fail_sends != 0 &&
	    now - sf->fail_at >= MPTCP_FAIL_RESEND_NS) {
		sf->flags |= SF_ACK_NOW;
		mptcp_meta_mark(sf->meta);
	}
}

/* The client answered (its MP_FAIL, or its infinite mapping). */
static void
fail_answered(struct mptcp_subflow *sf)
{
	sf->flags &= (uint16_t)~SF_FAIL_NOW;
}

/* The option area of nearly every segment the client sends: one MPTCP
 * option, a DSS, among others (timestamps, SACK). The engine's walk found
 * it (mptcp_subflow_hooks.opt_kind: seg->opt_at, seg->opt_n) in an area
 * it could delimit, so it is decoded alone into o->dss, without a second
 * walk or mptcp_opts_parse() zeroing every slot of *o first (sf_opts_in()
 * reads a slot only where o->present says so). false: anything else
 * (several MPTCP options, another subtype, a DSS that does not decode)
 * takes the full parse, which counts what it rejects. */
static bool
dss_alone(const uint8_t *opt, uint32_t optlen, const struct tcp_hook_seg *seg,
	  struct mptcp_opts *o)
{
	const uint8_t *mp;
	uint32_t at = (uint32_t)seg->opt_at;

	/* The engine's word is checked all the same: an option that does
	 * not lie whole in the area is left to the full parse. */
	if (seg->opt_n != 1 || seg->opt_at < 0 || at + 3 > optlen)
		return false;
	mp = opt + at;
	if (mp[1] < 3 || at + mp[1] > optlen || (mp[2] >> 4) != MPTCP_SUB_DSS ||
	    !mptcp_dss_decode(mp, mp[1], &o->dss))
		return false;
	o->present = 1u << MPTCP_SUB_DSS;
	o->n_err = 0;
	o->first_err = 0;
	return true;
}

/* May the next in-order segment of a burst be read with the held one
 * (tcp_conn_hooks.opts_merge)? Each carries a DSS and no other MPTCP
 * option (the engine checked there is one option of our kind, at the
 * same place), on a connection without DSS checksums (a checksum covers
 * its own mapping's bytes), with the same flags and DATA_ACK. Then:
 *  - without a mapping, the held option says the same for both;
 *  - with one, the next mapping must lie as far from the held one in
 *    subflow sequence as in data sequence, starting inside it or right
 *    where it ends: the two are then one mapping, the held one grown to
 *    cover the next (rewritten in place) unless it already did (the
 *    same mapping on several segments, as a sender's segmentation
 *    offload leaves it). A DATA_FIN is taken only from the same
 *    mapping, whose last byte it stays.
 * sf_opts_in() then sees one mapping for the run, as a sender that had
 * sent the bytes in one segment would have written it, and the meta
 * level still reads the run's segments one by one (tcp_recv_seg()),
 * each finding its bytes in it. The fields are read here directly, not
 * through mptcp_dss_decode(): this runs for most segments of an upload. */
static bool
sf_opts_merge(void *owner, struct tcp_conn *c, uint8_t *held, const uint8_t *next,
	      uint32_t optlen, uint32_t opt_at)
{
	const struct mptcp_subflow *sf = owner;
	uint8_t *p = held + opt_at;
	const uint8_t *q = next + opt_at;
	uint32_t at = 4, off, end;
	uint16_t len_a, len_b;
	uint8_t f;

	RTE_SET_USED(c);
	/* Kind, length, subtype and flags the same in both: one word. */
	if ((sf->meta->flags & (MT_ESTAB | MT_FALLBACK | MT_CSUM)) != MT_ESTAB ||
	    opt_at + 4 > optlen || pkt_raw32(p) != pkt_raw32(q) || (p[2] >> 4) != MPTCP_SUB_DSS)
		return false;
	f = p[3] & MPTCP_DSS_FLAGS;
	/* Both are as long as the flags say, with no checksum, and whole
	 * in the area. */
	if (p[1] != mptcp_dss_len(f) || opt_at + p[1] > optlen)
		return false;
	/* The same DATA_ACK: the same bytes. */
	if (f & MPTCP_DSS_DATA_ACK) {
		if (f & MPTCP_DSS_ACK64) {
			if (pkt_raw64(p + at) != pkt_raw64(q + at))
				return false;
			at += 8;
		} else {
			if (pkt_raw32(p + at) != pkt_raw32(q + at))
				return false;
			at += 4;
		}
	}
	if (!(f & MPTCP_DSS_MAP))
		return true;
	/* off: where the next mapping starts in the held one, by subflow
	 * sequence; by data sequence it must be the same. */
	if (f & MPTCP_DSS_DSN64) {
		off = get_be32(q + at + 8) - get_be32(p + at + 8);
		if (get_be64(q + at) - get_be64(p + at) != off)
			return false;
		at += 8;
	} else {
		off = get_be32(q + at + 4) - get_be32(p + at + 4);
		if (get_be32(q + at) - get_be32(p + at) != off)
			return false;
		at += 4;
	}
	len_a = get_be16(p + at + 4);
	len_b = get_be16(q + at + 4);
	end = off + len_b;
	if (off == 0 && len_b == len_a)
		return true; /* the same mapping */
	if ((f & MPTCP_DSS_DATA_FIN) || len_a == 0 || len_b == 0 || off > len_a ||
	    end > UINT16_MAX)
		return false;
	if (end > len_a)
		put_be16(p + at + 4, (uint16_t)end);
	return true;
}

/* Our FIN is out: it follows the last byte queued. */
static bool
fin_sent(const struct tcp_conn *c)
{
	uint8_t st = tcp_conn_state(c);

	return st == TCP_FIN_WAIT_1 || st == TCP_FIN_WAIT_2 || st == TCP_CLOSING ||
	       st == TCP_LAST_ACK || st == TCP_TIME_WAIT;
}

static void
sf_opts_in(void *owner, struct tcp_conn *c, const struct tcp_hook_seg *seg,
	   const uint8_t *opt, uint32_t optlen, uint64_t now)
{
	struct mptcp_subflow *sf = owner;
	struct mptcp_meta *mt = sf->meta;
	struct mptcp_proxy *px = mt->px;
	struct mptcp_opts o;

	/* A client sends data on a join only once our fourth ACK reached
	 * it (RFC 8684 3.2). */
	if (seg->len != 0 && (sf->flags & SF_ESTAB))
		sf->flags |= SF_JOIN_SEEN;
	/* ACK: what the client has of our bytes. The hook runs before the
	 * engine judges the ACK: a RST or a SYN here is answered with a
	 * challenge ACK and its ACK field taken for nothing, and an ACK of
	 * bytes not yet sent is refused; their mappings must stay. */
	if ((seg->flags & (0x10 | 0x04 | 0x02)) == 0x10) {
		uint32_t ack = seg->ack - sf->iss, sent = sf->tx_end_rel - tcp_conn_unsent(c);

		/* Our FIN takes the sequence number after the last byte: an
		 * ACK that covers it covers every byte too. It was ignored,
		 * and the bytes stayed outstanding (stale, issue 16). */
		if (ack == sent + 1 && sent == sf->tx_end_rel && fin_sent(c))
			ack = sent;
		if (!rel_lt(sent, ack))
			tx_acked(sf, ack, now);
	}
	if ((mt->flags & (MT_INF_SENT | MT_INF_ACKED)) == MT_INF_SENT &&
	    (seg->flags & 0x10) && !rel_lt(seg->ack - sf->iss, mt->inf_end_rel) &&
	    !rel_lt(sf->tx_end_rel, seg->ack - sf->iss))
		mt->flags |= MT_INF_ACKED; /* the client has it: plain TCP */
	/* No MPTCP option (the engine delimited the area, so the full
	 * parse would find none and reject nothing either). */
	if (seg->opt_n == 0 || (!dss_alone(opt, optlen, seg, &o) &&
			    mptcp_opts_parse(opt, optlen, seg->flags, &o, &px->opt_err) == 0 &&
			    o.n_err == 0)) {
		ack_without_dss(sf, seg);
		return;
	}
	if (o.n_err)
		PX_CNT(px, MPTCP_OPT_ERR)++;
	if ((o.present & (1u << MPTCP_SUB_MP_CAPABLE)) && (sf->flags & SF_MPC) &&
	    !(mt->flags & MT_FALLBACK) &&
	    (o.mpc.u.mpc.form == MPTCP_FORM_ACK || o.mpc.u.mpc.form == MPTCP_FORM_DATA)) {
		/* The third ACK, and data until the client saw a DSS from us
		 * (the first mapping: DSN IDSN + 1, subflow sequence 1). */
		if (o.mpc.u.mpc.key_rcv != mt->local.key) {
			PX_CNT(px, MPTCP_BAD_KEY)++;
		} else {
			if (!(mt->flags & MT_ESTAB))
				meta_keys(mt, sf, o.mpc.u.mpc.key_snd);
			if (o.mpc.u.mpc.form == MPTCP_FORM_DATA &&
			    o.mpc.u.mpc.key_snd == mt->key_remote) {
				if ((mt->flags & MT_CSUM) && !o.mpc.u.mpc.has_csum) {
					csum_missing(sf);
				} else {
					sf->flags |= SF_SAW_DSS;
					rx_map_add(sf, mt->idsn_remote + 1, 1, o.mpc.u.mpc.data_len,
						   0, o.mpc.u.mpc.csum);
				}
			}
		}
	}
	if ((o.present & (1u << MPTCP_SUB_MP_JOIN)) && (sf->flags & SF_JOIN) &&
	    !(sf->flags & SF_ESTAB) && o.join.u.join.form == MPTCP_FORM_ACK) {
		uint8_t h[MPTCP_HMAC_LEN];

		mptcp_join_hmac(mt->key_remote, mt->local.key, sf->nonce_remote,
				sf->nonce_local, h);
		if (memcmp(h, o.join.u.join.hmac, MPTCP_JOIN_ACK_HMAC_LEN) == 0)
			sf->flags |= SF_JOIN_OK; /* SF_ESTAB on CONNECTED */
		else
			sf->flags |= SF_JOIN_BAD;
	}
	if ((o.present & (1u << MPTCP_SUB_DSS)) && (mt->flags & MT_ESTAB) &&
	    !(mt->flags & MT_FALLBACK)) {
		const struct mptcp_opt *d = &o.dss;
		uint8_t f = d->u.dss.flags;

		if (f & MPTCP_DSS_DATA_ACK)
			mptcp_meta_data_ack(mt, (f & MPTCP_DSS_ACK64) ? d->u.dss.data_ack :
					    mptcp_expand_seq(mt->snd_una, (uint32_t)d->u.dss.data_ack),
					    seg->wnd, now);
		if (f & MPTCP_DSS_MAP) {
			uint64_t dsn = (f & MPTCP_DSS_DSN64) ? d->u.dss.dsn :
				       mptcp_expand_seq(mt->rcv_nxt, (uint32_t)d->u.dss.dsn);
			uint16_t len = d->u.dss.data_len;

			if (len == 0) {
				/* The infinite mapping: the peer fell back. After
				 * our MP_FAIL the stream stays whole only if it
				 * goes on from the next byte we lack. */
				if ((mt->flags & MT_CSUM_FAILED) && dsn != mt->rcv_nxt) {
					PX_CNT(px, MPTCP_CSUM_FAIL_RESET)++;
					mt->flags |= MT_ABORT_NOW;
					mptcp_meta_mark(mt);
				} else if (mt->nsf == 1 && (sf->flags & SF_MPC)) {
					mptcp_meta_fallback(mt, MPTCP_PROXY_CNT_MPTCP_FALLBACK_INFINITE);
					fail_answered(sf);
				}
			} else if ((mt->flags & MT_CSUM) && !d->u.dss.has_csum) {
				csum_missing(sf);
			} else {
				uint16_t mflags = 0;

				sf->flags |= SF_SAW_DSS;
				if (f & MPTCP_DSS_DATA_FIN) {
					mptcp_meta_peer_data_fin(mt, dsn + len - 1);
					len--;
					mflags = MPTCP_MAP_FIN;
				}
				if (len > 0 && d->u.dss.ssn != 0)
					rx_map_add(sf, dsn, d->u.dss.ssn, len, mflags, d->u.dss.csum);
			}
		}
	}
	if ((o.present & (1u << MPTCP_SUB_ADD_ADDR)) && !o.add_addr.u.add_addr.echo &&
	    (mt->flags & (MT_ESTAB | MT_FALLBACK)) == MT_ESTAB)
		add_addr(sf, &o.add_addr);
	if (o.present & (1u << MPTCP_SUB_REMOVE_ADDR)) {
		PX_CNT(px, MPTCP_RM_ADDR)++;
		remove_addr(mt, &o.rm_addr);
	}
	if (o.present & (1u << MPTCP_SUB_MP_PRIO)) {
		PX_CNT(px, MPTCP_PRIO)++;
		for (unsigned k = 0; k < MPTCP_SUBFLOWS_MAX; k++) {
			struct mptcp_subflow *s = mt->sf[k];

			if (s == NULL || (o.prio.u.prio.has_addr_id ?
					  s->addr_id != o.prio.u.prio.addr_id : s != sf))
				continue;
			if (o.prio.u.prio.backup)
				s->flags |= SF_BACKUP;
			else
				s->flags &= (uint16_t)~SF_BACKUP;
		}
		mptcp_meta_mark(mt);
	}
	if ((o.present & (1u << MPTCP_SUB_MP_FASTCLOSE)) &&
	    o.fastclose.u.fastclose.key_rcv == mt->local.key) {
		mt->flags |= MT_FASTCLOSE_RCVD;
		mptcp_meta_mark(mt);
	}
	if (o.present & (1u << MPTCP_SUB_MP_TCPRST))
		PX_CNT(px, MPTCP_TCPRST_IN)++;
	if (o.present & (1u << MPTCP_SUB_MP_FAIL)) {
		PX_CNT(px, MPTCP_FAIL_IN)++;
		if (!(mt->flags & MT_FALLBACK)) {
			/* Nothing we sent failed a checksum: the subflow is
			 * reset (RFC 8684 3.7). After a fallback it is the
			 * client's answer to ours: plain TCP goes on. */
			sf->flags |= SF_RESET;
			mptcp_meta_mark(mt);
		} else {
			fail_answered(sf);
		}
	}
}

static bool
data_fin_due(const struct mptcp_meta *mt)
{
	return (mt->flags & (MT_SND_FIN | MT_SND_FIN_ACK)) == MT_SND_FIN &&
	       mt->fin_sent_ns != 0 && mt->snd_nxt == mt->snd_end;
}

/* After a fallback, the client may not know yet (a DSS stripped only on
 * its way to us): the first subflow's data carries an infinite mapping
 * (RFC 8684 3.7), until the client acknowledged a segment with it. */
static bool
inf_map_due(const struct mptcp_meta *mt, const struct mptcp_subflow *sf)
{
	return (mt->flags & (MT_FALLBACK | MT_ESTAB | MT_INF_ACKED)) ==
	       (MT_FALLBACK | MT_ESTAB) && (sf->flags & SF_MPC);
}

static uint32_t
sf_opts_space(void *owner, struct tcp_conn *c, uint8_t kind)
{
	struct mptcp_subflow *sf = owner;
	struct mptcp_meta *mt = sf->meta;

	RTE_SET_USED(c);
	switch (kind) {
	case TCP_SEG_SYN_ACK:
		return (sf->flags & SF_JOIN) ? 16 : 12;
	case TCP_SEG_ACK:
		if (inf_map_due(mt, sf))
			/* DATA_ACKs until the client knows */
			return DSS_ACK_LEN + (fail_due(sf) ? MPTCP_FAIL_LEN : 0);
		if (!(mt->flags & MT_ESTAB) || (mt->flags & MT_FALLBACK))
			return 0;
		if (fail_due(sf))
			return MPTCP_FAIL_LEN + DSS_ACK_LEN;
		if (echo_len(mt) != 0)
			/* The echo, and the DATA_ACK where it fits (28 bytes
			 * are sure after timestamps); a DATA_FIN waits. */
			return echo_len(mt) + (echo_len(mt) + DSS_ACK_LEN <= 28 ? DSS_ACK_LEN : 0);
		return data_fin_due(mt) ? DSS_FULL_LEN : DSS_ACK_LEN;
	case TCP_SEG_DATA:
		if (mt->flags & MT_FALLBACK)
			return inf_map_due(mt, sf) ? DSS_FULL_LEN : 0;
		return DSS_FULL_LEN;
	case TCP_SEG_RST:
		if (!(mt->flags & MT_ESTAB) || (mt->flags & MT_FALLBACK))
			return 0;
		return ((mt->flags & MT_ABORTED) ? 16 : 4) +
		       ((sf->flags & SF_FAIL_NOW) ? MPTCP_FAIL_LEN : 0);
	default:
		return 0;
	}
}

static uint32_t
put(const struct mptcp_opt *o, uint8_t *buf, uint32_t room)
{
	int n = mptcp_opt_write(o, buf, room);

	return n > 0 ? (uint32_t)n : 0;
}

/* Our DSS (RFC 8684 3.3), through the encoder mptcp_opt_write() uses,
 * without a struct mptcp_opt to fill, zero and walk: it
 * goes on every segment a subflow sends. A pure ACK's: a 64-bit
 * DATA_ACK (MPTCP_DSS_ACK64 in flags). With MPTCP_DSS_MAP in flags a
 * 32-bit DATA_ACK and a mapping with a 64-bit DSN (MPTCP_DSS_DSN64 set
 * too), and its checksum when csum_on. Returns the bytes written, 0 when
 * they do not fit in room (as put()). */
static uint32_t
dss_put(uint8_t *b, uint32_t room, uint8_t flags, uint64_t data_ack,
	uint64_t dsn, uint32_t ssn, uint16_t len, bool csum_on, uint16_t csum)
{
	uint32_t n = !(flags & MPTCP_DSS_MAP) ? DSS_ACK_LEN :
		     csum_on ? DSS_FULL_LEN : DSS_FULL_LEN - 2;

	if (n > room)
		return 0;
	mptcp_dss_encode(b, n, flags, data_ack, dsn, ssn, len, csum_on, csum);
	return n;
}

/* The DSS of a data segment or a pure ACK: the DATA_ACK, and the
 * mapping of the data (or the DATA_FIN when it is due). A data
 * segment's DSS stands for the rest of its mapping too, as a TSO
 * segment's does: nothing in it moves until the next input. */
static inline uint32_t
dss_out(const struct mptcp_subflow *sf, struct tcp_hook_seg *seg, uint8_t *buf,
	uint32_t room)
{
	const struct mptcp_meta *mt = sf->meta;

	if (seg->kind == TCP_SEG_DATA) {
		const struct mptcp_map *mp = tx_find(sf, seg->seq - sf->iss);

		if (mp != NULL) {
			seg->same_until = sf->iss + mp->ssn + mp->len;
			return dss_put(buf, room, MPTCP_DSS_DATA_ACK |
				       MPTCP_DSS_MAP | MPTCP_DSS_DSN64, mt->rcv_nxt,
				       mp->dsn, mp->ssn, mp->len,
				       (mt->flags & MT_CSUM) != 0, mp->csum);
		}
		PX_CNT(mt->px, MPTCP_TX_NO_MAPPING)++;
	} else if (room >= DSS_FULL_LEN && data_fin_due(mt)) {
		bool cs = (mt->flags & MT_CSUM) != 0;

		return dss_put(buf, room, MPTCP_DSS_DATA_ACK |
			       MPTCP_DSS_MAP | MPTCP_DSS_DSN64 | MPTCP_DSS_DATA_FIN,
			       mt->rcv_nxt, mt->snd_end, 0, 1, cs,
			       cs ? mptcp_dss_csum(mt->snd_end, 0, 1, NULL, 0) : 0);
	}
	return dss_put(buf, room, MPTCP_DSS_DATA_ACK | MPTCP_DSS_ACK64,
		       mt->rcv_nxt, 0, 0, 0, false, 0);
}

/* Every other segment's options (sf_opts_out() takes the usual ones):
 * handshakes, MP_FAIL, the ADD_ADDR echo, the infinite mapping after a
 * fallback, RSTs. */
static __rte_noinline uint32_t
sf_opts_out_rest(struct mptcp_subflow *sf, struct tcp_hook_seg *seg,
		 uint8_t *buf, uint32_t room)
{
	struct mptcp_meta *mt = sf->meta;
	struct mptcp_opt o;
	uint32_t n = 0;

	switch (seg->kind) {
	case TCP_SEG_SYN_ACK:
		memset(&o, 0, sizeof(o));
		if (sf->flags & SF_JOIN) {
			o.sub = MPTCP_SUB_MP_JOIN;
			o.u.join.form = MPTCP_FORM_SYNACK;
			o.u.join.addr_id = 0;
			o.u.join.nonce = sf->nonce_local;
			o.u.join.hmac64 = mptcp_join_hmac_trunc(mt->local.key, mt->key_remote,
								sf->nonce_local, sf->nonce_remote);
		} else {
			o.sub = MPTCP_SUB_MP_CAPABLE;
			o.u.mpc.form = MPTCP_FORM_SYNACK;
			o.u.mpc.version = MPTCP_VERSION_1;
			o.u.mpc.flags = MPTCP_MPC_FLAG_H |
					((mt->flags & MT_CSUM) ? MPTCP_MPC_FLAG_A : 0);
			o.u.mpc.key_snd = mt->local.key;
			PX_CNT(mt->px, MPTCP_SYNACK_SENT)++;
		}
		return put(&o, buf, room);
	case TCP_SEG_ACK:
	case TCP_SEG_DATA:
		if (seg->kind == TCP_SEG_DATA && inf_map_due(mt, sf) && seg->len > 0) {
			/* The infinite mapping: data-level length 0, from the
			 * DSN of this segment's first byte on. */
			uint32_t rel = seg->seq - sf->iss;

			memset(&o, 0, sizeof(o));
			o.sub = MPTCP_SUB_DSS;
			o.u.dss.flags = MPTCP_DSS_DATA_ACK |
					MPTCP_DSS_MAP | MPTCP_DSS_DSN64;
			o.u.dss.data_ack = mt->rcv_nxt;
			o.u.dss.dsn = mt->snd_nxt + (uint64_t)(int64_t)(int32_t)(rel - sf->tx_end_rel);
			o.u.dss.ssn = rel;
			o.u.dss.data_len = 0;
			if (mt->flags & MT_CSUM) {
				o.u.dss.has_csum = true;
				o.u.dss.csum = mptcp_dss_csum(o.u.dss.dsn, rel, 0, NULL, 0);
			}
			if (!(mt->flags & MT_INF_SENT)) {
				mt->flags |= MT_INF_SENT;
				PX_CNT(mt->px, MPTCP_INF_MAP_OUT)++;
			}
			mt->inf_end_rel = rel + seg->len;
			return put(&o, buf, room);
		}
		if (!(mt->flags & MT_ESTAB) ||
		    ((mt->flags & MT_FALLBACK) && !(seg->kind == TCP_SEG_ACK && inf_map_due(mt, sf))))
			return 0;
		if (seg->kind == TCP_SEG_ACK && fail_due(sf) &&
		    room >= MPTCP_FAIL_LEN + DSS_ACK_LEN) {
			struct mptcp_opt f = { .sub = MPTCP_SUB_MP_FAIL };

			f.u.fail.dsn = sf->fail_dsn;
			n = put(&f, buf, room);
			sf->fail_at = mt->px->tick_ns;
			if (++sf->fail_sends >= MPTCP_FAIL_SENDS)
				sf->flags &= (uint16_t)~SF_FAIL_NOW;
			PX_CNT(mt->px, MPTCP_FAIL_OUT)++;
			buf += n;
			room -= n;
		} else if (seg->kind == TCP_SEG_ACK && echo_len(mt) != 0 && !(mt->flags & MT_FALLBACK) &&
		    room >= echo_len(mt)) {
			n = put(&mt->echo, buf, room);
			if (n > 0) {
				PX_CNT(mt->px, MPTCP_ADD_ADDR_ECHO)++;
				mt->echo.sub = 0;
				buf += n;
				room -= n;
				if (room < DSS_ACK_LEN)
					return n;
			}
		}
		return n + dss_out(sf, seg, buf, room);
	case TCP_SEG_RST:
		if (!(mt->flags & MT_ESTAB) || (mt->flags & MT_FALLBACK))
			return 0;
		memset(&o, 0, sizeof(o));
		if (mt->flags & MT_ABORTED) {
			o.sub = MPTCP_SUB_MP_FASTCLOSE;
			o.u.fastclose.key_rcv = mt->key_remote;
			n = put(&o, buf, room);
			memset(&o, 0, sizeof(o));
		}
		if (sf->flags & SF_FAIL_NOW) {
			o.sub = MPTCP_SUB_MP_FAIL;
			o.u.fail.dsn = sf->fail_dsn;
			n += put(&o, buf + n, room - n);
			PX_CNT(mt->px, MPTCP_FAIL_OUT)++;
			memset(&o, 0, sizeof(o));
		}
		o.sub = MPTCP_SUB_MP_TCPRST;
		o.u.tcprst.reason = sf->rst_reason;
		return n + put(&o, buf + n, room - n);
	default:
		return 0;
	}
}

static uint32_t
sf_opts_out(void *owner, struct tcp_conn *c, struct tcp_hook_seg *seg,
	    uint8_t *buf, uint32_t room)
{
	struct mptcp_subflow *sf = owner;
	const struct mptcp_meta *mt = sf->meta;

	RTE_SET_USED(c);
	/* Nearly every segment: data or a pure ACK of an established
	 * connection, with no MP_FAIL or echo owed. Only its DSS. */
	if ((mt->flags & (MT_ESTAB | MT_FALLBACK)) == MT_ESTAB &&
	    (seg->kind == TCP_SEG_DATA ||
	     (seg->kind == TCP_SEG_ACK && !(sf->flags & SF_FAIL_NOW) &&
	      mt->echo.sub != MPTCP_SUB_ADD_ADDR)))
		return dss_out(sf, seg, buf, room);
	return sf_opts_out_rest(sf, seg, buf, room);
}

static uint32_t
sf_rcv_wnd(void *owner, struct tcp_conn *c, uint32_t own)
{
	struct mptcp_subflow *sf = owner;

	RTE_SET_USED(c);
	RTE_SET_USED(own);
	return mptcp_meta_rcv_space(sf->meta);
}

static void
sf_writable(void *owner, struct tcp_conn *c, uint32_t room, uint64_t now)
{
	struct mptcp_subflow *sf = owner;

	RTE_SET_USED(c);
	RTE_SET_USED(room);
	RTE_SET_USED(now);
	mptcp_meta_mark(sf->meta);
}

const struct tcp_conn_hooks mptcp_subflow_hooks = {
	.opts_in = sf_opts_in,
	.opts_space = sf_opts_space,
	.opts_out = sf_opts_out,
	.rcv_wnd = sf_rcv_wnd,
	.writable = sf_writable,
	.opt_kind = MPTCP_OPT_KIND,
	.opts_merge = sf_opts_merge,
};

static void
sf_bases(struct mptcp_subflow *sf, struct tcp_conn *c)
{
	struct tcp_conn_info ci;

	tcp_conn_get_info(c, &ci);
	sf->iss = ci.iss;
	sf->irs = ci.irs;
	sf->mss = ci.mss;
}

void
mptcp_sf_attach(struct mptcp_subflow *sf, struct tcp_conn *c)
{
	sf->c = c;
	tcp_conn_keep_segments(c, true);
	sf_bases(sf, c);
}

void
mptcp_sf_event(struct mptcp_subflow *sf, struct tcp_conn *c, uint32_t ev,
	       uint64_t now)
{
	struct mptcp_meta *mt = sf->meta;
	struct mptcp_proxy *px = mt->px;

	if (ev & TCP_EV_CONNECTED) {
		sf_bases(sf, c);
		if (sf->flags & SF_JOIN) {
			if ((sf->flags & SF_JOIN_BAD) || !(sf->flags & SF_JOIN_OK)) {
				/* Wrong HMAC (or none): never accepted. */
				PX_CNT(px, MPTCP_JOIN_BAD_HMAC)++;
				sf->rst_reason = MPTCP_TCPRST_MPTCP_ERROR;
				sf->flags |= SF_DEAD;
				tcp_abort(c, now);
				ev &= TCP_EV_CLOSED;
			} else {
				sf->flags |= SF_ESTAB | SF_ACK_NOW; /* the fourth ACK */
				PX_CNT(px, MPTCP_JOIN_OK)++;
				mptcp_cc_join(mt, c);
			}
		} else {
			sf->flags |= SF_ESTAB;
			if (!(mt->flags & MT_ESTAB))
				/* A third ACK without our MP_CAPABLE: something
				 * between strips it; plain TCP (RFC 8684 3.1). */
				mptcp_meta_fallback(mt, MPTCP_PROXY_CNT_MPTCP_FALLBACK_NO_MPC_ACK);
			else
				mptcp_cc_join(mt, c);
			if (mt->pair != NULL)
				proxy_leg_event(&mt->pair->sv, TCP_EV_READABLE, now);
		}
		mptcp_meta_mark(mt);
	}
	if (ev & TCP_EV_READABLE)
		mptcp_meta_rx_segs(sf, now);
	if (ev & TCP_EV_PEER_FIN) {
		if (mt->flags & MT_FALLBACK) {
			/* Plain TCP: the subflow's FIN is the stream's, after
			 * every byte the subflow still holds. */
			mptcp_meta_rx_segs(sf, now);
			mptcp_meta_peer_data_fin(mt, mt->rcv_nxt);
		} else if (!(sf->flags & SF_CLOSED)) {
			/* The client closes this subflow: close our side. */
			sf->flags |= SF_DEAD;
			if (!(mt->flags & MT_CLOSING))
				mptcp_sched_reinject_sf(mt, sf);
			(void)tcp_shutdown(c, now);
		}
		mptcp_meta_mark(mt);
	}
	if (ev & TCP_EV_WRITABLE)
		mptcp_meta_mark(mt);
	if (ev & (TCP_EV_RESET | TCP_EV_TIMEOUT)) {
		if (ev & TCP_EV_RESET)
			PX_CNT(px, MPTCP_SF_RESET)++;
		else
			PX_CNT(px, MPTCP_SF_TIMEOUT)++;
		sf->flags |= SF_DEAD;
		if ((mt->flags & MT_FALLBACK) && (sf->flags & SF_MPC))
			mptcp_meta_abort(mt, now); /* the stream itself reset */
	}
	if (ev & TCP_EV_CLOSED) {
		sf->flags |= SF_CLOSED | SF_DEAD;
		mptcp_meta_sf_gone(mt, sf, now);
	}
}

int
mptcp_join_syn(struct mptcp_proxy *px, struct rte_mbuf *m,
	       const struct mptcp_opt *join, uint64_t now)
{
	struct mptcp_meta *mt = mptcp_token_find(px, join->u.join.token);
	struct tcp_accept_opts ao;
	struct mptcp_subflow *sf;
	struct tcp_conn *c;

	if (mt == NULL || !(mt->flags & MT_ESTAB) ||
	    (mt->flags & (MT_ABORTED | MT_FALLBACK | MT_CLOSING))) {
		PX_CNT(px, MPTCP_JOIN_BAD_TOKEN)++;
		goto refuse;
	}
	sf = mptcp_sf_new(mt, NULL);
	if (sf == NULL) {
		PX_CNT(px, MPTCP_JOIN_OVER_LIMIT)++;
		goto refuse;
	}
	if (mptcp_nonce_generate(&sf->nonce_local) != 0) {
		sf->flags |= SF_CLOSED;
		mptcp_meta_sf_gone(mt, sf, now);
		PX_CNT(px, MPTCP_KEY_FAIL)++;
		goto refuse;
	}
	sf->flags |= SF_JOIN | (join->u.join.backup ? SF_BACKUP : 0);
	sf->nonce_remote = join->u.join.nonce;
	sf->addr_id = join->u.join.addr_id;
	memset(&ao, 0, sizeof(ao));
	ao.hooks = &mptcp_subflow_hooks;
	ao.hook_owner = sf;
	c = tcp_accept_opts(px->e, m, &ao, sf, now);
	if (c == NULL) {
		int err = rte_errno;

		sf->flags |= SF_CLOSED;
		mptcp_meta_sf_gone(mt, sf, now);
		if (err == EEXIST) {
			PX_CNT(px, SYN_DUPLICATE)++;
			rte_pktmbuf_free(m);
			return 0;
		}
		PX_CNT(px, MPTCP_JOIN_OVER_LIMIT)++;
		goto refuse;
	}
	mptcp_sf_attach(sf, c);
	PX_CNT(px, MPTCP_JOIN_SYN)++;
	return 0;
refuse:
	(void)tcp_reply_rst(px->e, m, now);
	rte_pktmbuf_free(m);
	return 0;
}
