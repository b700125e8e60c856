/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * relaybench's MPTCP client (--mptcp): C speaks MPTCP v1 (RFC 8684) to P
 * over one subflow, as a Linux client would, on lib/tcp's connection
 * hooks, with lib/mptcp_proxy's option code.
 *
 *  - SYN: MP_CAPABLE v1, HMAC-SHA256, no checksums. Third ACK: both keys.
 *  - Every later segment: a DSS with the DATA_ACK of what C holds in
 *    order at the data level (64 bits on a pure ACK; 32 on data, beside
 *    a mapping of the segment's own bytes with a 64-bit DSN, 24 bytes in
 *    all, as P and Linux send).
 *  - P's bytes are read through P's mappings, each checked at its DSN.
 *  - The end: the sender's DATA_FIN goes with its last byte. Once P's
 *    DATA_FIN was read, C closes its subflow: the FIN carries the
 *    DATA_ACK of P's DATA_FIN and, from the receiver, its own DATA_FIN
 *    (subflow sequence 0, length 1), as a single-subflow client closes.
 *
 * Not part of the count. Built without LTO (meson.build), calling no
 * lib/tcp function and nothing of a shared library (no memset: the
 * executable's dynamic string table would list it first, and the lazy
 * binding of P's first calls would compare other names), so that the
 * plain mode's count stays what it was to the instruction.
 */
#include <rte_common.h>

#include "mptcp_proxy.h"
#include "relaybench.h"

/* C's key: the same frames every run. */
#define MP_KEY 0x0123456789abcdefull
#define MP_DSS_ACK 12 /* DSS with a 64-bit DATA_ACK (pure ACKs) */
#define MP_DSS_MAP 24 /* 32-bit DATA_ACK and a mapping with a 64-bit DSN,
			 22 bytes padded */
#define TH_SYN 0x02
#define TH_RST 0x04

/* Sequence numbers modulo 2^32: a before b. */
static inline bool
seq_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static void
mp_fail(struct mp_client *m, const char *why)
{
	if (m->bad == NULL)
		m->bad = why;
}

void
mp_client_init(struct mp_client *m, uint64_t snd_total)
{
	m->snd_total = snd_total;
	mptcp_key_token_idsn(MP_KEY, NULL, &m->snd_base);
	m->snd_base++;
	m->snd_una = m->snd_base;
}

/* A mapping P sent, kept once in subflow order: another segment of the
 * same chunk, or a resent one, repeats it. */
static void
map_add(struct mp_client *m, uint64_t dsn, uint32_t ssn, uint32_t len)
{
	struct mp_map *e;

	if (!seq_lt(m->map_end, ssn + len))
		return;
	if (ssn != m->map_end) {
		/* One subflow carries P's mappings one after the other. */
		mp_fail(m, "a mapping that does not follow the last");
		return;
	}
	if (m->map_tail - m->map_head == MP_MAPS) {
		mp_fail(m, "too many mappings unread");
		return;
	}
	e = &m->map[m->map_tail++ % MP_MAPS];
	e->dsn = dsn;
	e->ssn = ssn;
	e->len = len;
	m->map_end = ssn + len;
	m->maps_in++;
}

/* The DATA_ACK of a segment C sends with subflow ACK ack_rel (relative):
 * the engine holds every subflow byte below it, so the mappings below it
 * name the data-level bytes held in order. P's DATA_FIN counts once
 * every byte before it does. */
static uint64_t
data_ack(struct mp_client *m, uint32_t ack_rel)
{
	if (seq_lt(m->map_ack, m->map_head))
		m->map_ack = m->map_head;
	while (m->map_ack != m->map_tail) {
		const struct mp_map *e = &m->map[m->map_ack % MP_MAPS];
		uint32_t got;

		if (!seq_lt(e->ssn, ack_rel))
			break;
		got = RTE_MIN(e->len, ack_rel - e->ssn);
		if (e->dsn <= m->rcv_nxt && e->dsn + got > m->rcv_nxt)
			m->rcv_nxt = e->dsn + got;
		if (got < e->len)
			break;
		m->map_ack++;
	}
	m->rcv_nxt = RTE_MAX(m->rcv_nxt, m->read_nxt);
	if (m->peer_fin && m->rcv_nxt == m->peer_fin_dsn)
		m->rcv_nxt++;
	return m->rcv_nxt;
}

/* A byte P sent twice (a reinjection on the one subflow) is checked
 * again and counted once; a byte past a hole in the data level cannot
 * come on one subflow. */
uint64_t
mp_client_read(struct mp_client *m, const uint8_t *buf, uint32_t n, uint64_t *bad_at)
{
	uint32_t off = 0;

	while (off < n && m->bad == NULL) {
		const struct mp_map *e;
		uint64_t dsn;
		uint32_t k;

		while (m->map_head != m->map_tail &&
		       !seq_lt(m->read_ssn, m->map[m->map_head % MP_MAPS].ssn +
					    m->map[m->map_head % MP_MAPS].len))
			m->map_head++;
		e = &m->map[m->map_head % MP_MAPS];
		if (m->map_head == m->map_tail || seq_lt(m->read_ssn, e->ssn)) {
			mp_fail(m, "bytes without a mapping");
			break;
		}
		k = RTE_MIN(n - off, e->ssn + e->len - m->read_ssn);
		dsn = e->dsn + (m->read_ssn - e->ssn);
		if (dsn > m->read_nxt) {
			mp_fail(m, "a hole at the data level");
			break;
		}
		for (uint32_t i = 0; i < k && *bad_at == 0; i++)
			if (buf[off + i] != pattern(dsn - m->rcv_base + i))
				*bad_at = dsn - m->rcv_base + i + 1;
		m->read_nxt = RTE_MAX(m->read_nxt, dsn + k);
		m->read_ssn += k;
		off += k;
	}
	return m->read_nxt - m->rcv_base;
}

static uint32_t
put(const struct mptcp_opt *o, uint8_t *buf, uint32_t room)
{
	int n = mptcp_opt_write(o, buf, room);

	return n > 0 ? (uint32_t)n : 0;
}

static void
opts_in(void *owner, struct tcp_conn *c, const struct tcp_hook_seg *seg,
	const uint8_t *opt, uint32_t optlen, uint64_t now)
{
	struct mp_client *m = owner;
	struct mptcp_opts o;
	const struct mptcp_opt *d = &o.dss;

	RTE_SET_USED(c);
	RTE_SET_USED(now);
	(void)mptcp_opts_parse(opt, optlen, seg->flags, &o, NULL);
	if (o.n_err != 0)
		mp_fail(m, "a malformed MPTCP option from P");
	if (seg->flags & TH_SYN) {
		if (!(o.present & (1u << MPTCP_SUB_MP_CAPABLE)) ||
		    o.mpc.u.mpc.form != MPTCP_FORM_SYNACK ||
		    (o.mpc.u.mpc.flags & MPTCP_MPC_FLAG_A)) {
			mp_fail(m, "P did not answer MP_CAPABLE as asked");
			return;
		}
		m->irs = seg->seq;
		m->key_p = o.mpc.u.mpc.key_snd;
		mptcp_key_token_idsn(m->key_p, NULL, &m->rcv_base);
		m->rcv_base++;
		m->rcv_nxt = m->read_nxt = m->ack_sent = m->rcv_base;
		m->map_end = m->read_ssn = 1;
		m->capable = true;
		return;
	}
	if (o.present & ((1u << MPTCP_SUB_MP_FASTCLOSE) | (1u << MPTCP_SUB_MP_FAIL) |
			 (1u << MPTCP_SUB_MP_TCPRST)))
		mp_fail(m, "P sent MP_FASTCLOSE, MP_FAIL or MP_TCPRST");
	if (!(o.present & (1u << MPTCP_SUB_DSS))) {
		/* P puts a DSS on every segment after its SYN-ACK: one
		 * without means it fell back. */
		if (!(seg->flags & TH_RST))
			mp_fail(m, "a segment from P without a DSS");
		return;
	}
	m->dss_in++;
	if (d->u.dss.flags & MPTCP_DSS_DATA_ACK) {
		uint64_t a = (d->u.dss.flags & MPTCP_DSS_ACK64) ? d->u.dss.data_ack :
			     mptcp_expand_seq(m->snd_una, (uint32_t)d->u.dss.data_ack);

		if (a > m->snd_una)
			m->snd_una = a;
		if (m->fin_due && m->snd_una > m->fin_dsn)
			m->fin_acked = true;
	}
	if (d->u.dss.flags & MPTCP_DSS_MAP) {
		uint64_t dsn = (d->u.dss.flags & MPTCP_DSS_DSN64) ? d->u.dss.dsn :
			       mptcp_expand_seq(m->rcv_nxt, (uint32_t)d->u.dss.dsn);
		uint32_t len = d->u.dss.data_len;

		if (len == 0) {
			mp_fail(m, "P sent an infinite mapping");
			return;
		}
		if (d->u.dss.flags & MPTCP_DSS_DATA_FIN) {
			m->peer_fin = true;
			m->peer_fin_dsn = dsn + len - 1;
			len--;
		}
		if (len > 0 && d->u.dss.ssn != 0)
			map_add(m, dsn, d->u.dss.ssn, len);
	}
}

static uint32_t
opts_space(void *owner, struct tcp_conn *c, uint8_t kind)
{
	const struct mp_client *m = owner;

	RTE_SET_USED(c);
	switch (kind) {
	case TCP_SEG_SYN:
		return 4;
	case TCP_SEG_ACK:
		if (!m->capable)
			return 0;
		if (!m->keys_sent)
			return 20;
		return m->fin_due && !m->fin_acked ? MP_DSS_MAP : MP_DSS_ACK;
	case TCP_SEG_DATA:
		return m->capable ? MP_DSS_MAP : 0;
	default:
		return 0;
	}
}

static uint32_t
opts_out(void *owner, struct tcp_conn *c, struct tcp_hook_seg *seg, uint8_t *buf,
	 uint32_t room)
{
	struct mp_client *m = owner;
	struct mptcp_opt o = { 0 };
	uint32_t rel;

	RTE_SET_USED(c);
	if (seg->kind == TCP_SEG_SYN) {
		m->iss = seg->seq;
		o.sub = MPTCP_SUB_MP_CAPABLE;
		o.u.mpc.form = MPTCP_FORM_SYN;
		o.u.mpc.version = MPTCP_VERSION_1;
		o.u.mpc.flags = MPTCP_MPC_FLAG_H;
		return put(&o, buf, room);
	}
	if (!m->capable || (seg->kind != TCP_SEG_ACK && seg->kind != TCP_SEG_DATA))
		return 0;
	rel = seg->seq - m->iss;
	if (!m->keys_sent) {
		/* The third ACK; should data go first, its MP_CAPABLE with
		 * the data-level length (DSN IDSN + 1, subflow sequence 1),
		 * as Linux maps its first data. */
		o.sub = MPTCP_SUB_MP_CAPABLE;
		o.u.mpc.form = seg->kind == TCP_SEG_DATA ? MPTCP_FORM_DATA : MPTCP_FORM_ACK;
		o.u.mpc.version = MPTCP_VERSION_1;
		o.u.mpc.flags = MPTCP_MPC_FLAG_H;
		o.u.mpc.key_snd = MP_KEY;
		o.u.mpc.key_rcv = m->key_p;
		o.u.mpc.data_len = (uint16_t)seg->len;
		if (seg->kind == TCP_SEG_DATA && rel != 1)
			mp_fail(m, "first data not at subflow sequence 1");
		m->keys_sent = true;
		return put(&o, buf, room);
	}
	o.sub = MPTCP_SUB_DSS;
	o.u.dss.data_ack = data_ack(m, seg->ack - m->irs);
	m->ack_sent = o.u.dss.data_ack;
	m->dss_out++;
	if (seg->kind == TCP_SEG_DATA) {
		/* One mapping per segment, of its own bytes: a segment
		 * resent gets the same. The last byte's carries the
		 * DATA_FIN too, as Linux sends it with data it has. */
		o.u.dss.flags = MPTCP_DSS_DATA_ACK | MPTCP_DSS_MAP | MPTCP_DSS_DSN64;
		o.u.dss.dsn = m->snd_base + rel - 1;
		o.u.dss.ssn = rel;
		o.u.dss.data_len = (uint16_t)seg->len;
		if (m->snd_total != 0 && rel - 1 + seg->len == m->snd_total) {
			o.u.dss.flags |= MPTCP_DSS_DATA_FIN;
			o.u.dss.data_len++;
			m->fin_due = true;
			m->fin_dsn = m->snd_base + m->snd_total;
		}
	} else if (m->fin_due && !m->fin_acked && room >= MP_DSS_MAP) {
		/* The DATA_FIN alone (RFC 8684 3.3.3): subflow sequence
		 * 0, length 1. */
		o.u.dss.flags = MPTCP_DSS_DATA_ACK | MPTCP_DSS_MAP | MPTCP_DSS_DSN64 |
				MPTCP_DSS_DATA_FIN;
		o.u.dss.dsn = m->fin_dsn;
		o.u.dss.data_len = 1;
	} else {
		o.u.dss.flags = MPTCP_DSS_DATA_ACK | MPTCP_DSS_ACK64;
	}
	if (!(o.u.dss.flags & MPTCP_DSS_ACK64))
		o.u.dss.data_ack &= 0xffffffffu;
	return put(&o, buf, room);
}

const struct tcp_conn_hooks mp_client_hooks = {
	.opts_in = opts_in,
	.opts_space = opts_space,
	.opts_out = opts_out,
	.opt_kind = MPTCP_OPT_KIND,
};

/* P's DATA_FIN comes alone on a pure ACK, which draws no ACK from the
 * engine: the DATA_ACK that covers it rides on the subflow's FIN, and so
 * does the receiver's own DATA_FIN (the sender's went with its last
 * byte). P closes its side of the subflow once both DATA_FINs are
 * acknowledged (RFC 8684 3.3.3). */
bool
mp_client_closing(struct mp_client *m, uint64_t written)
{
	if (!m->capable || !m->peer_fin || m->read_nxt != m->peer_fin_dsn)
		return false;
	if (!m->fin_due) {
		m->fin_due = true;
		m->fin_dsn = m->snd_base + written;
	}
	return true;
}
