/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/mptcp_proxy's MPTCP termination (RFC 8684), driven in memory on a
 * virtual clock. A minimal MPTCP client lives in this file, on a lib/tcp
 * engine C and its extension hooks: its first subflow's SYN asks for
 * MP_CAPABLE (v1, H), the third ACK carries both keys, its data carries
 * DSS mappings (mptcp_opt_write()), it reads the proxy's DSS
 * (mptcp_opts_parse()), DATA_ACKs what it got, reassembles by DSN, and
 * can join a second subflow from another address (mptcp_join_hmac()).
 * The proxy P terminates MPTCP and speaks plain TCP to the server S:
 *
 *   C 198.18.0.1 (path 0) --+
 *                           +-- port 0 -- P -- port 1 -- S 198.18.1.2:80
 *   C 198.18.0.3 (path 1) --+
 *
 * Each path has its own one-way delay and can be cut; P to S is 1 ms.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tcp_test_util.h"
#include "mptcp_proxy.h"
#include "proxy_priv.h"
#include "mptcp_dss.h"

#define SNDBUF (128 * 1024)
#define NSF 4
#define MAXMAP 4096
#define DOWN_MAX (8u << 20)

/* ------------------------------------------------------------------ */
/* The MPTCP client                                                    */

struct mcmap {
	uint64_t dsn;
	uint32_t ssn;
	uint32_t len;
};

struct mc;

struct mcsf {
	struct mc *mc;
	struct tcp_conn *c;
	int idx, join, backup, addr_id, bad_hmac;
	int no_dss;       /* this subflow's DSS is stripped */
	int third_sent, hmac_ok, peer_fin, ack_pending;
	int fully_established; /* a join: a frame at P's first sequence came */
	uint32_t events;
	uint32_t iss, irs;
	uint32_t nonce, peer_nonce;
	uint32_t tx_rel; /* next relative subflow sequence to map */
	uint32_t ntx, nrx;
	struct mcmap tx[MAXMAP];
	struct mcmap rx[MAXMAP];
};

struct mc {
	uint64_t key, key_remote, idsn, idsn_remote;
	uint32_t token_remote;
	int got_key;
	/* Modes. */
	int dsn32;        /* 32-bit DSNs and DATA_ACKs */
	int no_dss;       /* no DSS after the handshake (a middlebox strips) */
	int map_last;     /* a segment carries the last mapping starting in it */
	int map_seg;      /* each data segment maps its own bytes, as Linux
			   * does without segmentation offload (one subflow,
			   * chunks queued back to back) */
	int dup_to;       /* every chunk sent again on subflow dup_to - 1 */
	int rr;           /* chunks alternate over established subflows */
	int plain;        /* the proxy fell back: a subflow is the stream */
	int csum;         /* ask for DSS checksums (MP_CAPABLE A) and send them */
	uint64_t bad_csum_dsn; /* the mapping at this DSN: checksum wrong */
	int mp_fail;      /* MP_FAIL received, and its DSN */
	uint64_t mp_fail_dsn;
	int csum_maps, plain_maps; /* P's mappings with and without checksum */
	uint32_t chunk;
	/* The next new segment subflow prune_on - 1 delivers is dropped at
	 * the data level after the subflow acknowledged it, as Linux does
	 * when its receive buffer is full (MPTcpExtRcvPruned). */
	int prune_on;
	uint64_t pruned;
	/* With prune_sticky, every new segment that subflow delivers is
	 * dropped so, not only the next one. */
	int prune_sticky;
	/* The client reads nothing from subflow i when bit i is set: what
	 * arrives stays in its receive queue and its window closes. */
	int hold;
	/* The client offers no receive window (its application stopped
	 * reading what it reassembled): the window closes as data arrives,
	 * and nothing announces that it opened again. */
	int wnd_zero;
	/* The client keeps its subflows open after the proxy closed them
	 * (its application has not closed the socket yet). */
	int keep_subflows;
	/* Send. */
	uint64_t snd_base, snd_nxt, snd_una, up_total;
	int fin_want, fin_sent, fin_acked;
	uint64_t fin_at;
	/* Receive. */
	uint64_t rcv_base, rcv_nxt, peer_fin_dsn;
	int peer_fin_seen, peer_fin;
	uint64_t unmapped, dup, last_ack_sent, fastclose, tcprst;
	uint64_t spanning; /* data segments whose first byte their mapping misses */
	/* P's DSS options whose bytes differ from what mptcp_opt_write()
	 * writes for the fields they parse to (P writes its own). */
	uint64_t dss_not_as_written;
	/* One more option (REMOVE_ADDR, MP_FASTCLOSE...) on the next pure
	 * ACK of subflow extra_on - 1, beside a DSS with only a DATA_ACK. */
	struct mptcp_opt extra;
	int extra_on;
	int extra_alone;  /* without the DSS (an ADD_ADDR too long for both) */
	/* ADD_ADDR echoes received, the last one. */
	int echoes;
	struct mptcp_opt echo;
	struct mcsf sf[NSF];
	int nsf;
};

static struct mc mc;
static uint8_t down[DOWN_MAX], have[DOWN_MAX];

static inline uint8_t
pattern(uint64_t i, int dir)
{
	return (uint8_t)(((i + (uint64_t)dir * 977) * 2654435761u) >> 13);
}

static struct mcmap *
rx_find(struct mcsf *s, uint32_t rel, uint32_t *left)
{
	for (uint32_t k = s->nrx; k-- > 0;) {
		struct mcmap *m = &s->rx[k];

		if (rel - m->ssn < m->len) {
			*left = m->len - (rel - m->ssn);
			return m;
		}
	}
	return NULL;
}

static const struct mcmap *
tx_find(const struct mcsf *s, uint32_t rel, uint32_t len)
{
	const struct mcmap *cover = NULL;

	for (uint32_t k = s->ntx; k-- > 0;) {
		const struct mcmap *m = &s->tx[k];

		if (mc.map_last && len > 0 && m->ssn - rel < len)
			return m;
		if (rel - m->ssn < m->len) {
			cover = m;
			if (!mc.map_last)
				return m;
		}
	}
	return cover;
}

static void
mc_rx(struct mcsf *s, uint64_t now)
{
	struct rte_mbuf *m;
	uint32_t seq;

	if (mc.hold & (1 << s->idx))
		return;
	while ((m = tcp_recv_seg(s->c, &seq, now)) != NULL) {
		uint32_t rel = seq - s->irs, off = 0;
		const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);

		if (mc.prune_on == s->idx + 1) {
			uint32_t left = 0;
			struct mcmap *mp = rx_find(s, rel, &left);

			if (mp != NULL && mp->dsn + (rel - mp->ssn) >= mc.rcv_nxt &&
			    mp->dsn + (rel - mp->ssn) < mc.rcv_base + DOWN_MAX &&
			    !have[mp->dsn + (rel - mp->ssn) - mc.rcv_base]) {
				if (!mc.prune_sticky)
					mc.prune_on = 0;
				mc.pruned += m->data_len;
				rte_pktmbuf_free(m);
				continue;
			}
		}

		while (off < m->data_len) {
			uint32_t left = 0, n;
			struct mcmap *mp = rx_find(s, rel + off, &left);
			uint64_t dsn;

			if (mp != NULL) {
				dsn = mp->dsn + (rel + off - mp->ssn);
			} else if (mc.plain && s->idx == 0) {
				dsn = mc.rcv_base + (rel + off - 1);
				left = m->data_len - off;
			} else {
				mc.unmapped += m->data_len - off;
				break;
			}
			n = RTE_MIN(left, (uint32_t)(m->data_len - off));
			for (uint32_t k = 0; k < n; k++) {
				uint64_t at = dsn + k - mc.rcv_base;

				if (at >= DOWN_MAX)
					continue;
				if (have[at])
					mc.dup++;
				down[at] = d[off + k];
				have[at] = 1;
			}
			off += n;
		}
		rte_pktmbuf_free(m);
	}
	while (mc.rcv_nxt - mc.rcv_base < DOWN_MAX && have[mc.rcv_nxt - mc.rcv_base])
		mc.rcv_nxt++;
	if (mc.peer_fin_seen && !mc.peer_fin && mc.rcv_nxt == mc.peer_fin_dsn) {
		mc.rcv_nxt++;
		mc.peer_fin = 1;
	}
	s->ack_pending = 1;
}

/* The DSS in P's option area is, byte for byte, what the reference
 * writer makes of its parsed fields. */
static void
dss_as_written(const uint8_t *opt, uint32_t optlen, const struct mptcp_opt *d)
{
	uint8_t ref[40];
	int n;

	for (uint32_t i = 0; i < optlen && opt[i] != 0;) {
		if (opt[i] == 1) {
			i++;
			continue;
		}
		if (i + 1 >= optlen || opt[i + 1] < 2)
			break;
		if (opt[i] == MPTCP_OPT_KIND && opt[i + 1] >= 3 &&
		    (opt[i + 2] >> 4) == MPTCP_SUB_DSS) {
			n = mptcp_opt_write(d, ref, sizeof(ref));
			if (n != opt[i + 1] || i + (uint32_t)n > optlen ||
			    memcmp(ref, opt + i, (size_t)n) != 0)
				mc.dss_not_as_written++;
			return;
		}
		i += opt[i + 1];
	}
}

static void
mc_opts_in(void *owner, struct tcp_conn *c, const struct tcp_hook_seg *seg,
	   const uint8_t *opt, uint32_t optlen, uint64_t now)
{
	struct mcsf *s = owner;
	struct mptcp_opts o;

	(void)c;
	(void)now;
	if (mptcp_opts_parse(opt, optlen, seg->flags, &o, NULL) == 0)
		return;
	if ((o.present & (1u << MPTCP_SUB_MP_CAPABLE)) && o.mpc.u.mpc.form == MPTCP_FORM_SYNACK) {
		mc.key_remote = o.mpc.u.mpc.key_snd;
		mptcp_key_token_idsn(mc.key_remote, &mc.token_remote, &mc.idsn_remote);
		mc.rcv_base = mc.rcv_nxt = mc.idsn_remote + 1;
		mc.got_key = 1;
	}
	if ((o.present & (1u << MPTCP_SUB_MP_JOIN)) && o.join.u.join.form == MPTCP_FORM_SYNACK) {
		s->peer_nonce = o.join.u.join.nonce;
		s->hmac_ok = o.join.u.join.hmac64 ==
			     mptcp_join_hmac_trunc(mc.key_remote, mc.key, s->peer_nonce, s->nonce);
	}
	if (o.present & (1u << MPTCP_SUB_DSS))
		dss_as_written(opt, optlen, &o.dss);
	if (o.present & (1u << MPTCP_SUB_DSS)) {
		const struct mptcp_opt *d = &o.dss;
		uint8_t f = d->u.dss.flags;

		if (f & MPTCP_DSS_DATA_ACK) {
			uint64_t a = (f & MPTCP_DSS_ACK64) ? d->u.dss.data_ack :
				     mptcp_expand_seq(mc.snd_una, (uint32_t)d->u.dss.data_ack);

			if (a > mc.snd_una && a <= mc.snd_nxt + 1)
				mc.snd_una = a;
			if (mc.fin_sent && a == mc.snd_nxt + 1)
				mc.fin_acked = 1;
		}
		if (f & MPTCP_DSS_MAP) {
			uint64_t dsn = (f & MPTCP_DSS_DSN64) ? d->u.dss.dsn :
				       mptcp_expand_seq(mc.rcv_nxt, (uint32_t)d->u.dss.dsn);
			uint32_t len = d->u.dss.data_len;

			if ((f & MPTCP_DSS_DATA_FIN) && len > 0) {
				mc.peer_fin_dsn = dsn + len - 1;
				mc.peer_fin_seen = 1;
				len--;
			}
			if (len > 0 && d->u.dss.ssn != 0 && s->nrx < MAXMAP &&
			    (s->nrx == 0 || s->rx[s->nrx - 1].dsn != dsn ||
			     s->rx[s->nrx - 1].ssn != d->u.dss.ssn))
				s->rx[s->nrx++] = (struct mcmap){ dsn, d->u.dss.ssn, len };
			if (mc.peer_fin_seen && !mc.peer_fin && mc.rcv_nxt == mc.peer_fin_dsn) {
				mc.rcv_nxt++;
				mc.peer_fin = 1;
				s->ack_pending = 1;
			}
		}
	}
	if ((o.present & (1u << MPTCP_SUB_ADD_ADDR)) && o.add_addr.u.add_addr.echo) {
		mc.echoes++;
		mc.echo = o.add_addr;
	}
	if ((o.present & (1u << MPTCP_SUB_DSS)) && (o.dss.u.dss.flags & MPTCP_DSS_MAP) &&
	    o.dss.u.dss.data_len > 0) {
		if (o.dss.u.dss.has_csum)
			mc.csum_maps++;
		else
			mc.plain_maps++;
	}
	if (o.present & (1u << MPTCP_SUB_MP_FAIL)) {
		mc.mp_fail++;
		mc.mp_fail_dsn = o.fail.u.fail.dsn;
	}
	if (o.present & (1u << MPTCP_SUB_MP_FASTCLOSE))
		mc.fastclose++;
	if (o.present & (1u << MPTCP_SUB_MP_TCPRST))
		mc.tcprst++;
}

static int
fin_due(void)
{
	return mc.fin_want && !mc.fin_acked && mc.snd_nxt == mc.snd_base + mc.up_total;
}

/* The DSS checksum of RFC 8684 3.3.1 written here from the RFC, apart
 * from lib/mptcp_proxy's: the Internet checksum (RFC 1071) over the
 * pseudo-header (64-bit DSN, 32-bit relative subflow sequence, 16-bit
 * data-level length, 16 zero bits) and the client's upload bytes from
 * stream offset off (len bytes, a DATA_FIN not counted). */
static uint16_t
ref_csum(uint64_t dsn, uint32_t ssn, uint16_t len, uint64_t off)
{
	uint8_t ph[16];
	uint32_t sum = 0;
	uint16_t data = len;

	for (int i = 0; i < 8; i++)
		ph[i] = (uint8_t)(dsn >> (56 - 8 * i));
	for (int i = 0; i < 4; i++)
		ph[8 + i] = (uint8_t)(ssn >> (24 - 8 * i));
	ph[12] = (uint8_t)(len >> 8);
	ph[13] = (uint8_t)len;
	ph[14] = ph[15] = 0;
	for (int i = 0; i < 16; i += 2)
		sum += (uint32_t)(ph[i] << 8 | ph[i + 1]);
	if (ssn == 0 && len == 1)
		data = 0; /* a DATA_FIN alone: no data */
	for (uint32_t i = 0; i < data; i++) {
		sum += (i & 1) ? pattern(off + i, 0) : (uint32_t)pattern(off + i, 0) << 8;
		sum = (sum & 0xffff) + (sum >> 16);
	}
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint32_t
mc_opts_space(void *owner, struct tcp_conn *c, uint8_t kind)
{
	struct mcsf *s = owner;

	(void)c;
	switch (kind) {
	case TCP_SEG_SYN:
		return s->join ? 12 : 4;
	case TCP_SEG_ACK:
		if (!s->third_sent)
			return s->join ? 24 : 20;
		if (mc.extra_on == s->idx + 1)
			return (mc.extra_alone ? 0 : 12) + (uint32_t)mptcp_opt_len(&mc.extra);
		return mc.no_dss || s->no_dss ? 0 : 28;
	case TCP_SEG_DATA:
		return mc.no_dss || s->no_dss ? 0 : 28;
	default:
		return 0;
	}
}

static uint32_t
mc_opts_out(void *owner, struct tcp_conn *c, struct tcp_hook_seg *seg,
	    uint8_t *buf, uint32_t room)
{
	struct mcsf *s = owner;
	struct mptcp_opt o;
	int n;

	(void)c;
	memset(&o, 0, sizeof(o));
	if (seg->kind == TCP_SEG_SYN) {
		if (s->join) {
			o.sub = MPTCP_SUB_MP_JOIN;
			o.u.join.form = MPTCP_FORM_SYN;
			o.u.join.backup = s->backup != 0;
			o.u.join.addr_id = (uint8_t)s->addr_id;
			o.u.join.token = mc.token_remote;
			o.u.join.nonce = s->nonce;
		} else {
			o.sub = MPTCP_SUB_MP_CAPABLE;
			o.u.mpc.form = MPTCP_FORM_SYN;
			o.u.mpc.version = MPTCP_VERSION_1;
			o.u.mpc.flags = MPTCP_MPC_FLAG_H | (mc.csum ? MPTCP_MPC_FLAG_A : 0);
		}
	} else if (seg->kind == TCP_SEG_ACK && !s->third_sent) {
		s->third_sent = 1;
		if (s->join) {
			uint8_t h[MPTCP_HMAC_LEN];

			mptcp_join_hmac(mc.key, mc.key_remote, s->nonce, s->peer_nonce, h);
			if (s->bad_hmac)
				h[3] ^= 0x40;
			o.sub = MPTCP_SUB_MP_JOIN;
			o.u.join.form = MPTCP_FORM_ACK;
			memcpy(o.u.join.hmac, h, MPTCP_JOIN_ACK_HMAC_LEN);
		} else {
			o.sub = MPTCP_SUB_MP_CAPABLE;
			o.u.mpc.form = MPTCP_FORM_ACK;
			o.u.mpc.version = MPTCP_VERSION_1;
			o.u.mpc.flags = MPTCP_MPC_FLAG_H;
			o.u.mpc.key_snd = mc.key;
			o.u.mpc.key_rcv = mc.key_remote;
		}
	} else if (seg->kind == TCP_SEG_ACK && mc.extra_on == s->idx + 1) {
		mc.extra_on = 0;
		o.sub = MPTCP_SUB_DSS;
		o.u.dss.flags = MPTCP_DSS_DATA_ACK | MPTCP_DSS_ACK64;
		o.u.dss.data_ack = mc.rcv_nxt;
		if (mc.extra_alone)
			return (uint32_t)RTE_MAX(0, mptcp_opt_write(&mc.extra, buf, room));
		n = mptcp_opt_write(&o, buf, room);
		if (n <= 0)
			return 0;
		return (uint32_t)n + (uint32_t)RTE_MAX(0, mptcp_opt_write(&mc.extra, buf + n,
									 room - (uint32_t)n));
	} else if (seg->kind == TCP_SEG_ACK || seg->kind == TCP_SEG_DATA) {
		o.sub = MPTCP_SUB_DSS;
		o.u.dss.flags = MPTCP_DSS_DATA_ACK | (mc.dsn32 ? 0 : MPTCP_DSS_ACK64);
		o.u.dss.data_ack = mc.dsn32 ? (uint32_t)mc.rcv_nxt : mc.rcv_nxt;
		mc.last_ack_sent = mc.rcv_nxt;
		if (seg->kind == TCP_SEG_DATA) {
			const struct mcmap *mp = tx_find(s, seg->seq - s->iss, seg->len);

			if (mp != NULL) {
				if (seg->seq - s->iss - mp->ssn >= mp->len)
					mc.spanning++;
				uint64_t dsn = mp->dsn;
				uint32_t ssn = mp->ssn, len = mp->len;

				if (mc.map_seg) {
					/* One subflow, chunks back to back: the
					 * stream and the subflow run side by side. */
					dsn += seg->seq - s->iss - mp->ssn;
					ssn = seg->seq - s->iss;
					len = seg->len;
				}
				o.u.dss.flags |= MPTCP_DSS_MAP | (mc.dsn32 ? 0 : MPTCP_DSS_DSN64);
				o.u.dss.dsn = mc.dsn32 ? (uint32_t)dsn : dsn;
				o.u.dss.ssn = ssn;
				o.u.dss.data_len = (uint16_t)len;
				if (mc.csum) {
					o.u.dss.has_csum = true;
					o.u.dss.csum = ref_csum(mp->dsn, mp->ssn, (uint16_t)mp->len,
								mp->dsn - mc.snd_base) ^
						       (mp->dsn == mc.bad_csum_dsn ? 0x0100 : 0);
				}
			}
		} else if (fin_due()) {
			o.u.dss.flags |= MPTCP_DSS_MAP | (mc.dsn32 ? 0 : MPTCP_DSS_DSN64) |
					 MPTCP_DSS_DATA_FIN;
			o.u.dss.dsn = mc.dsn32 ? (uint32_t)mc.snd_nxt : mc.snd_nxt;
			o.u.dss.ssn = 0;
			o.u.dss.data_len = 1;
			o.u.dss.has_csum = mc.csum != 0;
			o.u.dss.csum = mc.csum ? ref_csum(mc.snd_nxt, 0, 1, 0) : 0;
			mc.fin_sent = 1;
		}
	} else {
		return 0;
	}
	n = mptcp_opt_write(&o, buf, room);
	return n > 0 ? (uint32_t)n : 0;
}

static uint32_t
mc_rcv_wnd(void *owner, struct tcp_conn *c, uint32_t own)
{
	(void)owner;
	(void)c;
	return mc.wnd_zero ? 0 : own;
}

static const struct tcp_conn_hooks mc_hooks = {
	.rcv_wnd = mc_rcv_wnd,
	.opts_in = mc_opts_in,
	.opts_space = mc_opts_space,
	.opts_out = mc_opts_out,
};

static void
mc_event(struct tcp_conn *c, void *arg, uint32_t ev, uint64_t now)
{
	struct mcsf *s = arg;

	s->events |= ev;
	if (ev & TCP_EV_CONNECTED) {
		struct tcp_conn_info ci;

		s->c = c;
		tcp_conn_get_info(c, &ci);
		s->iss = ci.iss;
		s->irs = ci.irs;
	}
	if (ev & TCP_EV_READABLE)
		mc_rx(s, now);
	if (ev & TCP_EV_PEER_FIN) {
		s->peer_fin = 1;
		if (mc.plain) {
			mc.peer_fin = 1;
			mc.peer_fin_seen = 1;
		}
		/* The proxy closes a subflow once both DATA_FINs were
		 * acknowledged (or in fallback, the stream): close ours. */
		if ((mc.fin_acked || mc.plain) && !mc.keep_subflows)
			(void)tcp_shutdown(c, now);
	}
	if (ev & TCP_EV_CLOSED)
		s->c = NULL;
}

/* ------------------------------------------------------------------ */
/* The wire                                                            */

static struct tcp_engine *C, *S;
static struct mptcp_proxy *P;
/* Two workers (setup_two_workers()): P is worker 0, P2 worker 1, and
 * path 1's frames from the client reach P2 (RSS brought them there).
 * What one hands the other waits in handed[to] until the next step. */
static struct mptcp_proxy *P2;
static uint32_t p2_redirect_entries;
static bool mss_room; /* the next setup(): mptcp_fallback_mss_room */
static uint64_t p_reset_memory_ns; /* the next setup(): reset_memory_ns */
static uint32_t p_budget; /* the next setup(): mbuf_budget, when not 0 */
/* While set, the first data frame the client sends on path 1 is copied
 * into kept_up1 (to arrive again later, as a leftover). */
static bool capture_up1;
static struct rte_mbuf *kept_up1;
static struct rte_mbuf *handed[2][1024];
static uint32_t nhanded[2];
static struct app app_s;
static uint64_t now;
static uint64_t path_delay[2];
static int path_down[2];
static uint64_t path_bytes_down[2]; /* payload P sent on each path */
/* Data segments P sent toward the client: all, and by payload length
 * (those of the longest length seen are full ones). */
static uint64_t segs_down, segs_down_at_max;
static uint32_t segs_down_max;
static uint32_t frames_to_s_with_mptcp;
static uint64_t max_ooo;
/* The proxy does not run (a preempted lcore): frames to it wait, its
 * poll is skipped. */
static int p_asleep;
/* The client does not run (its machine is starved): frames to it wait,
 * its timers and DATA_ACKs too. */
static int c_asleep;
/* Until then, frames from the client on path i wait (its uplink
 * stalls: a cellular uplink's scheduling). */
static uint64_t up_held_until[2];
/* Frames from the client on path i are lost while set. */
static int up_lost[2];

struct qframe { struct rte_mbuf *m; uint64_t due; int dst; }; /* 0 C, 1 P, 2 S */
static struct qframe q[16384];
static uint32_t qn;

static int
path_of(const struct pkt_meta *pm, int to_client)
{
	const uint8_t *a = to_client ? pm->dst : pm->src;

	return a[3] == 3 ? 1 : 0;
}

static uint32_t
payload_len(struct rte_mbuf *m)
{
	const struct pkt_meta *pm = pkt_meta(m);

	return pm->l3_off + pm->l3_len - pm->payload_off;
}

static void
enqueue(struct rte_mbuf *m, int dst, int from_s)
{
	uint64_t d = MS(1);

	pkt_parse(m, pkt_meta(m), (uint16_t)(dst == 1 ? m->port : 0));
	if (dst == 0 || (dst == 1 && !from_s)) {
		int path = path_of(pkt_meta(m), dst == 0);

		if (path_down[path] || (dst == 1 && up_lost[path])) {
			rte_pktmbuf_free(m);
			return;
		}
		d = path_delay[path];
		if (dst == 0) {
			uint32_t len = payload_len(m);

			path_bytes_down[path] += len;
			if (len > 0) {
				segs_down++;
				if (len > segs_down_max) {
					segs_down_max = len;
					segs_down_at_max = 0;
				}
				if (len == segs_down_max)
					segs_down_at_max++;
			}
		}
	}
	if (capture_up1 && kept_up1 == NULL && dst == 1 && !from_s &&
	    path_of(pkt_meta(m), 0) == 1 && payload_len(m) > 0) {
		kept_up1 = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
		assert_non_null(kept_up1);
	}
	assert_true(qn < RTE_DIM(q));
	q[qn].m = m;
	q[qn].due = now + d;
	q[qn].dst = dst;
	qn++;
}

static void
p_emit(void *arg, struct rte_mbuf **pk, uint16_t n)
{
	(void)arg;
	for (uint16_t i = 0; i < n; i++)
		enqueue(pk[i], pk[i]->port == 0 ? 0 : 2, 0);
}

static void
collect(void)
{
	struct rte_mbuf *pk[64];
	uint16_t n;

	while ((n = tcp_tx_burst(C, pk, 64)) > 0)
		for (uint16_t i = 0; i < n; i++) {
			pk[i]->port = 0;
			enqueue(pk[i], 1, 0);
		}
	while ((n = tcp_tx_burst(S, pk, 64)) > 0)
		for (uint16_t i = 0; i < n; i++) {
			pk[i]->port = 1;
			enqueue(pk[i], 1, 1);
		}
}

/* The MPTCP subtypes a frame's options carry, one bit each. */
static uint32_t
mptcp_subtypes(struct rte_mbuf *m)
{
	const struct pkt_meta *pm = pkt_meta(m);
	const uint8_t *th = rte_pktmbuf_mtod_offset(m, const uint8_t *, pm->l4_off);
	uint32_t hlen = (uint32_t)(th[12] >> 4) * 4, i = 20, sub = 0;

	while (i < hlen && th[i] != 0) {
		if (th[i] == 1) {
			i++;
			continue;
		}
		if (i + 1 >= hlen || th[i + 1] < 2)
			break;
		if (th[i] == MPTCP_OPT_KIND && th[i + 1] >= 3 && i + 2 < hlen)
			sub |= 1u << (th[i + 2] >> 4);
		i += th[i + 1];
	}
	return sub;
}

static int
has_mptcp_option(struct rte_mbuf *m)
{
	return mptcp_subtypes(m) != 0;
}

/* Frames toward the client that carry MP_FAIL and are lost on the way. */
static int drop_mp_fail_to_c;

/* The frames P sends on a join after its SYN-ACK are lost on the way,
 * up to its first data frame: the fourth ACK and that frame. */
static int drop_first_join_data;

/* Frames that reached the client on a join before one at P's first
 * sequence did, which makes the join fully established for Linux: the
 * kernel resets the join on each (RFC 8684 3.2; MPTcpExtMPRstTx). A
 * RST (a join refused) is not counted. */
static uint64_t join_gaps;

/* What Linux does with a frame toward a join it initiated; false: the
 * frame is lost. */
static bool
join_frame_to_c(struct rte_mbuf *m)
{
	const struct pkt_meta *pm = pkt_meta(m);
	const uint8_t *th = rte_pktmbuf_mtod_offset(m, const uint8_t *, pm->l4_off);
	uint32_t seq = (uint32_t)th[4] << 24 | (uint32_t)th[5] << 16 | (uint32_t)th[6] << 8 | th[7];
	struct mcsf *s = NULL;

	uint16_t dport = (uint16_t)(th[2] << 8 | th[3]);

	for (int i = 0; i < mc.nsf; i++)
		if (mc.sf[i].join && dport == 40000 + i) /* mc_join()'s port */
			s = &mc.sf[i];
	if (s == NULL || (th[13] & 0x06) || s->fully_established)
		return true;
	if (drop_first_join_data) {
		if (payload_len(m) > 0)
			drop_first_join_data = 0;
		return false;
	}
	if (seq == s->irs + 1)
		s->fully_established = 1;
	else
		join_gaps++;
	return true;
}

/* With p_burst, the frames due at P from the client (port 0) go in as
 * one input burst, as a NIC gives them (lib/tcp then reads a subflow's
 * in-order segments as runs); what P lets pass goes on to S. */
static int p_burst;

static void
deliver_burst_to_p(void)
{
	struct rte_mbuf *b[64];
	uint16_t n = 0, keep;
	uint32_t k = 0;

	for (uint32_t i = 0; i < qn; i++) {
		struct qframe f = q[i];

		if (n < RTE_DIM(b) && f.due <= now && f.dst == 1 && f.m->port == 0 &&
		    now >= up_held_until[path_of(pkt_meta(f.m), 0)]) {
			/* In one mbuf, as a NIC gives it (C built it as a
			 * header and its payload chained). */
			struct rte_mbuf *l = rte_pktmbuf_copy(f.m, f.m->pool, 0, UINT32_MAX);

			assert_non_null(l);
			assert_null(l->next);
			l->port = 0;
			rte_pktmbuf_free(f.m);
			pkt_parse(l, pkt_meta(l), 0);
			b[n++] = l;
		} else {
			q[k++] = f;
		}
	}
	qn = k;
	if (n == 0)
		return;
	keep = mptcp_proxy_input_burst(P, b, n, true, 1, now);
	for (uint16_t i = 0; i < keep; i++) {
		pkt_parse(b[i], pkt_meta(b[i]), 0);
		q[qn++] = (struct qframe){ .m = b[i], .due = now, .dst = 2 };
	}
}

static void
deliver_due(void)
{
	uint32_t k = 0;

	/* (One proxy, awake: the tests that use it need no more.) */
	if (p_burst && P2 == NULL && !p_asleep)
		deliver_burst_to_p();
	for (uint32_t i = 0; i < qn; i++) {
		struct qframe f = q[i];
		enum tcp_input_result r;

		if (f.due > now || (f.dst == 1 && p_asleep) || (f.dst == 0 && c_asleep) ||
		    (f.dst == 1 && f.m->port == 0 &&
		     now < up_held_until[path_of(pkt_meta(f.m), 0)])) {
			q[k++] = f;
			continue;
		}
		if (f.dst == 1) {
			uint16_t port = f.m->port;
			struct mptcp_proxy *px = P2 != NULL && port == 0 &&
				path_of(pkt_meta(f.m), 0) == 1 ? P2 : P;

			if (mptcp_proxy_input_burst(px, &f.m, 1, port == 0,
						    (uint16_t)(port ^ 1), now) == 0)
				continue;
			f.dst = port == 0 ? 2 : 0;
			pkt_parse(f.m, pkt_meta(f.m), 0);
		}
		if (f.dst == 2 && has_mptcp_option(f.m))
			frames_to_s_with_mptcp++;
		if (f.dst == 0 && !join_frame_to_c(f.m)) {
			rte_pktmbuf_free(f.m);
			continue;
		}
		if (f.dst == 0 && drop_mp_fail_to_c > 0 &&
		    (mptcp_subtypes(f.m) & (1u << MPTCP_SUB_MP_FAIL))) {
			drop_mp_fail_to_c--;
			rte_pktmbuf_free(f.m);
			continue;
		}
		r = tcp_input(f.dst == 0 ? C : S, f.m, now);
		if (r != TCP_INPUT_CONSUMED) {
			tcp_reply_rst(f.dst == 0 ? C : S, f.m, now);
			rte_pktmbuf_free(f.m);
		}
	}
	qn = k;
}

static struct mptcp_proxy_stats
stats(void)
{
	struct mptcp_proxy_stats s;

	mptcp_proxy_stats_get(P, &s);
	return s;
}

#define CNT(name) (stats().cnt[MPTCP_PROXY_CNT_##name])

/* The proxy's one MPTCP connection (NULL: none). */
static struct mptcp_meta *
meta(void)
{
	return ((struct mptcp_proxy *)P)->meta_active;
}

/* The hand-over of the app (a ring per worker pair), in memory. */
static int
handover(void *arg, struct rte_mbuf *m, uint16_t to)
{
	(void)arg;
	assert_true(to < 2);
	assert_true(nhanded[to] < RTE_DIM(handed[to]));
	handed[to][nhanded[to]++] = m;
	return 0;
}

/* Each worker takes what the other handed it; what no connection takes
 * goes on toward the server, as bridged. */
static void
take_handed(void)
{
	for (int w = 0; w < 2; w++) {
		uint16_t n = (uint16_t)nhanded[w], keep;

		if (n == 0)
			continue;
		nhanded[w] = 0;
		keep = mptcp_proxy_input_handed(w == 0 ? P : P2, handed[w], n, now);
		for (uint16_t i = 0; i < keep; i++) {
			pkt_parse(handed[w][i], pkt_meta(handed[w][i]), 0);
			enqueue(handed[w][i], 2, 0);
		}
	}
}

static void
step(void)
{
	struct mptcp_meta *mt;

	collect();
	deliver_due();
	if (P2 != NULL) {
		take_handed();
		mptcp_proxy_poll(P2, now, p_emit, NULL);
	}
	if (!c_asleep)
		tcp_timers_run(C, now);
	tcp_timers_run(S, now);
	if (!p_asleep)
		mptcp_proxy_poll(P, now, p_emit, NULL);
	/* The client's DATA_ACK catches up with what it reassembled, and
	 * its DATA_FIN goes out (again every 100 ms) until acknowledged. */
	for (int i = 0; i < mc.nsf && !c_asleep; i++) {
		struct mcsf *s = &mc.sf[i];

		if (s->c == NULL || !(s->events & TCP_EV_CONNECTED) || mc.no_dss)
			continue;
		if (s->ack_pending && mc.last_ack_sent != mc.rcv_nxt) {
			s->ack_pending = 0;
			(void)tcp_conn_send_ack(s->c, now);
		}
	}
	if (fin_due() && mc.sf[0].c != NULL && now - mc.fin_at >= MS(100)) {
		mc.fin_at = now;
		(void)tcp_conn_send_ack(mc.sf[0].c, now);
	}
	mt = meta();
	if (mt != NULL && mt->ooo_bytes > max_ooo)
		max_ooo = mt->ooo_bytes;
	collect();
	now += US(500);
}

static void
run_ms(uint64_t ms)
{
	uint64_t until = now + MS(ms);

	while (now < until)
		step();
}

static void teardown_all(void);

/* The client's receive buffer, and so its data-level window, when not 0
 * (the engine's default otherwise); one test only, reset by setup(). */
static uint32_t client_rcv_buf;
/* Its receive memory, when not 0 (else the engine's default, twice the
 * buffer); one test only, reset by setup(). */
static uint32_t client_rcv_mem;

static void
setup(uint64_t d0, uint64_t d1)
{
	struct mptcp_proxy_rule rule = { .family = 4, .plen = 24, .addr = { 198, 18, 1, 0 } };
	struct mptcp_proxy_params pp;
	struct tcp_engine_params p;

	if (C != NULL)
		teardown_all();
	memset(&app_s, 0, sizeof(app_s));
	app_s.rx_hash = FNV_INIT;
	app_s.auto_read = 1;
	wire_params(&p, "c", NULL);
	p.snd_buf = SNDBUF;
	if (client_rcv_buf != 0)
		p.rcv_buf = client_rcv_buf;
	if (client_rcv_mem != 0)
		p.rcv_mem = client_rcv_mem;
	client_rcv_buf = client_rcv_mem = 0;
	p.cb = mc_event;
	C = tcp_engine_create(&p);
	wire_params(&p, "s", &app_s);
	p.snd_buf = SNDBUF;
	S = tcp_engine_create(&p);
	memset(&pp, 0, sizeof(pp));
	pp.name = "p";
	pp.socket_id = SOCKET_ID_ANY;
	pp.pool = test_pool;
	pp.max_conns = 16;
	pp.snd_buf = SNDBUF;
	pp.rcv_buf = 256 * 1024;
	pp.cc = TCP_CC_CUBIC;
	pp.syn_retries = 6;
	pp.mbuf_budget = p_budget != 0 ? p_budget : 8000;
	p_budget = 0;
	for (int i = 0; i < 16; i++)
		pp.isn_key[i] = (uint8_t)('p' + i);
	pp.nrules = 1;
	pp.rules = &rule;
	pp.mptcp = true;
	pp.mptcp_fallback_mss_room = mss_room;
	mss_room = false;
	pp.reset_memory_ns = p_reset_memory_ns;
	p_reset_memory_ns = 0;
	if (p2_redirect_entries != 0) {
		/* Two workers: tokens carry one owner bit. */
		pp.worker_bits = 1;
		pp.handover = handover;
		pp.redirect_entries = 16;
		pp.redirect_idle_ns = MS(600000);
		P = mptcp_proxy_create(&pp);
		pp.name = "p2";
		pp.worker_id = 1;
		pp.redirect_entries = p2_redirect_entries == UINT32_MAX ? 0 : p2_redirect_entries;
		for (int i = 0; i < 16; i++)
			pp.isn_key[i] ^= 0x5a;
		P2 = mptcp_proxy_create(&pp);
		assert_non_null(P2);
		nhanded[0] = nhanded[1] = 0;
	} else {
		P = mptcp_proxy_create(&pp);
	}
	assert_non_null(C);
	assert_non_null(P);
	assert_non_null(S);
	tcp_listen(S, 80, true);
	now = MS(1000);
	qn = 0;
	path_delay[0] = d0;
	path_delay[1] = d1;
	path_down[0] = path_down[1] = 0;
	path_bytes_down[0] = path_bytes_down[1] = 0;
	segs_down = segs_down_at_max = 0;
	segs_down_max = 0;
	p_asleep = 0;
	c_asleep = 0;
	up_held_until[0] = up_held_until[1] = 0;
	up_lost[0] = up_lost[1] = 0;
	frames_to_s_with_mptcp = 0;
	max_ooo = 0;
	p_burst = 0;
	drop_first_join_data = 0;
	join_gaps = 0;
	memset(&mc, 0, sizeof(mc));
	memset(have, 0, sizeof(have));
	mc.key = 0x0123456789abcdefull;
	mc.chunk = 4000;
}

/* Two workers; P2 remembers entries subflows (UINT32_MAX: none, no
 * hand-over). */
static void
setup_two_workers(uint64_t d0, uint64_t d1, uint32_t entries)
{
	if (C != NULL)
		teardown_all();
	p2_redirect_entries = entries;
	setup(d0, d1);
}

static struct mptcp_proxy_stats
stats2(void)
{
	struct mptcp_proxy_stats s;

	mptcp_proxy_stats_get(P2, &s);
	return s;
}

#define CNT2(name) (stats2().cnt[MPTCP_PROXY_CNT_##name])

static void
teardown_all(void)
{
	uint64_t gaps = join_gaps;

	join_gaps = 0;
	for (uint32_t i = 0; i < qn; i++)
		rte_pktmbuf_free(q[i].m);
	qn = 0;
	for (int w = 0; w < 2; w++) {
		for (uint32_t i = 0; i < nhanded[w]; i++)
			rte_pktmbuf_free(handed[w][i]);
		nhanded[w] = 0;
	}
	rte_pktmbuf_free(kept_up1);
	kept_up1 = NULL;
	capture_up1 = false;
	mptcp_proxy_free(P2);
	P2 = NULL;
	p2_redirect_entries = 0;
	tcp_engine_free(C);
	mptcp_proxy_free(P);
	tcp_engine_free(S);
	C = S = NULL;
	P = NULL;
	/* Every mbuf is back in the pool. */
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
	assert_int_equal(mc.dss_not_as_written, 0);
	/* No test gave a Linux client a reason to reset a join. */
	assert_int_equal(gaps, 0);
}

static void
mc_set_key(uint64_t key)
{
	uint32_t tok;

	mc.key = key;
	mptcp_key_token_idsn(key, &tok, &mc.idsn);
	mc.snd_base = mc.snd_nxt = mc.snd_una = mc.idsn + 1;
}

/* The client opens its first subflow (MP_CAPABLE) from path 0. */
static void
mc_connect(void)
{
	struct tcp_endpoints ep;
	struct mcsf *s = &mc.sf[0];

	mc_set_key(mc.key);
	wire_ep_v4(&ep);
	s->mc = &mc;
	s->idx = 0;
	s->tx_rel = 1;
	mc.nsf = 1;
	s->c = tcp_connect_hooked(C, &ep, &mc_hooks, s, s, now);
	assert_non_null(s->c);
	tcp_conn_keep_segments(s->c, true);
	run_ms(4 * (path_delay[0] / MS(1)) + 20);
	assert_true(s->events & TCP_EV_CONNECTED);
	assert_true(mc.got_key);
}

/* The client joins a subflow from 198.18.0.3 (path 1). */
static struct mcsf *
mc_join(int backup, int bad_hmac, uint32_t token_xor)
{
	struct tcp_endpoints ep;
	struct mcsf *s = &mc.sf[mc.nsf];
	uint32_t tok = mc.token_remote;

	wire_ep_v4(&ep);
	ep.laddr[3] = 3;
	ep.lport = (uint16_t)(40000 + mc.nsf);
	s->mc = &mc;
	s->idx = mc.nsf;
	s->join = 1;
	s->backup = backup;
	s->bad_hmac = bad_hmac;
	s->addr_id = mc.nsf;
	s->nonce = 0x5eed0000u + (uint32_t)mc.nsf;
	s->tx_rel = 1;
	mc.nsf++;
	mc.token_remote ^= token_xor;
	s->c = tcp_connect_hooked(C, &ep, &mc_hooks, s, s, now);
	assert_non_null(s->c);
	tcp_conn_keep_segments(s->c, true);
	run_ms(1);
	mc.token_remote = tok;
	run_ms(100);
	return s;
}

/* Queue a chunk of the client's stream on subflow s; 0: no room. */
static uint32_t
mc_send_chunk(struct mcsf *s, uint64_t dsn, uint32_t len, int wait_unsent)
{
	uint8_t buf[16384];
	uint32_t room;
	int32_t got;

	if (s->c == NULL || !(s->events & TCP_EV_CONNECTED) || (s->events & TCP_EV_CLOSED))
		return 0;
	if (wait_unsent && tcp_conn_unsent(s->c) != 0)
		return 0;
	room = tcp_send_space(s->c, len);
	len = RTE_MIN(len, RTE_MIN(room, (uint32_t)sizeof(buf)));
	if (len == 0 || s->ntx >= MAXMAP)
		return 0;
	for (uint32_t k = 0; k < len; k++)
		buf[k] = pattern(dsn - mc.snd_base + k, 0);
	/* The mapping first: the engine may send at once. */
	s->tx[s->ntx++] = (struct mcmap){ dsn, s->tx_rel, len };
	got = tcp_send(s->c, buf, len, now);
	assert_int_equal(got, (int32_t)len);
	s->tx_rel += len;
	return len;
}

/* The client's stream: as much as the subflows take now. */
static void
mc_push(void)
{
	static int turn;

	while (mc.snd_nxt < mc.snd_base + mc.up_total) {
		uint32_t len = (uint32_t)RTE_MIN((uint64_t)mc.chunk,
						 mc.snd_base + mc.up_total - mc.snd_nxt);
		struct mcsf *s = &mc.sf[0];
		uint32_t got;

		if (mc.rr && mc.nsf > 1)
			s = &mc.sf[turn % mc.nsf];
		got = mc_send_chunk(s, mc.snd_nxt, len, !mc.map_last && !mc.map_seg);
		if (got == 0)
			break;
		if (mc.dup_to)
			(void)mc_send_chunk(&mc.sf[mc.dup_to - 1], mc.snd_nxt, got, 0);
		mc.snd_nxt += got;
		turn++;
	}
}

static void
s_push(uint64_t total, uint64_t *off, uint64_t *h)
{
	uint8_t buf[4096];

	while (app_s.conn != NULL && *off < total) {
		uint32_t n = (uint32_t)RTE_MIN((uint64_t)sizeof(buf), total - *off);
		int32_t got;

		for (uint32_t i = 0; i < n; i++)
			buf[i] = pattern(*off + i, 1);
		got = tcp_send(app_s.conn, buf, n, now);
		if (got <= 0)
			return;
		*h = fnv1a(*h, buf, (size_t)got);
		*off += (uint64_t)got;
	}
}

static uint64_t
up_hash(uint64_t total)
{
	uint64_t h = FNV_INIT;

	for (uint64_t i = 0; i < total; i++) {
		uint8_t b = pattern(i, 0);

		h = fnv1a(h, &b, 1);
	}
	return h;
}

/* What the client reassembled equals what S sent. */
static void
assert_down_is(uint64_t total)
{
	assert_true(mc.rcv_nxt - mc.rcv_base >= total);
	for (uint64_t i = 0; i < total; i++)
		if (down[i] != pattern(i, 1) || !have[i])
			fail_msg("byte %llu from the server differs", (unsigned long long)i);
}

struct xfer {
	uint64_t up, down;
	int close;        /* both sides close when done */
	uint64_t limit_ms;
	void (*during)(uint64_t sent_down); /* called every step */
	int s_shut_first; /* with close: S closes once its bytes are out,
			   * without waiting for the client's DATA_FIN */
	uint64_t s_pause_at; /* S stops reading for a second once it has
			      * this many bytes (0: never) */
};

/* Run a transfer both ways; with close, until the proxy let go of it. */
static void
transfer(const struct xfer *x)
{
	uint64_t offs = 0, hs = FNV_INIT, start = now, until = now + MS(x->limit_ms);
	uint64_t paused_at = 0;
	int shut_s = 0;

	mc.up_total = x->up;
	while (now < until) {
		mc_push();
		if (x->close && mc.snd_nxt == mc.snd_base + mc.up_total)
			mc.fin_want = 1;
		if (mc.plain && x->close && !mc.fin_sent && mc.snd_nxt == mc.snd_base + mc.up_total &&
		    mc.sf[0].c != NULL) {
			(void)tcp_shutdown(mc.sf[0].c, now);
			mc.fin_sent = 1;
		}
		s_push(x->down, &offs, &hs);
		if (x->close && offs == x->down && !shut_s && app_s.conn != NULL &&
		    (x->s_shut_first || (app_s.events & TCP_EV_PEER_FIN))) {
			tcp_shutdown(app_s.conn, now);
			shut_s = 1;
		}
		if (x->s_pause_at != 0 && paused_at == 0 && app_s.rx_bytes >= x->s_pause_at) {
			app_s.auto_read = 0;
			paused_at = now;
		}
		if (paused_at != 0 && !app_s.auto_read && now - paused_at >= MS(1000)) {
			uint8_t buf[4096];
			uint32_t n;

			app_s.auto_read = 1;
			while (app_s.conn != NULL &&
			       (n = tcp_recv(app_s.conn, buf, sizeof(buf), now)) > 0) {
				app_s.rx_hash = fnv1a(app_s.rx_hash, buf, n);
				app_s.rx_bytes += n;
			}
		}
		if (x->during != NULL)
			x->during(offs);
		step();
		if (!x->close && app_s.rx_bytes == x->up && offs == x->down &&
		    mc.rcv_nxt - mc.rcv_base >= x->down)
			break;
		if (x->close && CNT(CLOSED) == 1 && stats().mptcp_active == 0 &&
		    app_s.n_closed == 1)
			break;
	}
	assert_int_equal(app_s.rx_bytes, x->up);
	assert_true(app_s.rx_hash == up_hash(x->up));
	assert_down_is(x->down);
	print_message("moved %llu up, %llu down in %.2f virtual s\n",
		      (unsigned long long)x->up, (unsigned long long)x->down,
		      (double)(now - start) / 1e9);
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */

static void
a_transfer_both_ways_over_one_subflow_arrives_whole_and_the_server_sees_plain_tcp(void **state)
{
	struct xfer x = { .up = 1000000, .down = 1000000, .close = 1, .limit_ms = 30000 };

	(void)state;
	setup(MS(5), MS(5));
	mc_connect();
	assert_int_equal(CNT(MPTCP_SYN), 1);
	assert_int_equal(CNT(MPTCP_ESTABLISHED), 1);
	transfer(&x);
	assert_int_equal(frames_to_s_with_mptcp, 0);
	assert_int_equal(CNT(MPTCP_FALLBACK_NO_DSS), 0);
	assert_int_equal(CNT(MPTCP_NO_MAPPING), 0);
	assert_int_equal(CNT(BYTES_UP), x.up);
	assert_int_equal(CNT(BYTES_DOWN), x.down);
	assert_int_equal(CNT(CLOSED), 1);
	assert_int_equal(stats().mptcp_active, 0);
	assert_int_equal(mc.unmapped, 0);
	teardown_all();
}

/* An idle subflow gives its window back like a plain leg
 * (tcp_engine_reclaim_idle()): it announces its meta-connection's window,
 * and while subflows kept theirs, 1,000 idle MPTCP connections held a
 * transfer beside them to 4.5 Mbit/s (tests/e2e/test_proxy_idle.sh).
 * A budget of 300 mbufs is a pool of 434,400 bytes; after a first upload
 * other users take three quarters of it, and one subflow's window alone
 * is more than half of what is left. With nsf subflows (the second on
 * path 1) every one is pinned at the floor; released, the client sends
 * again (over each subflow in turn), each window grows with its first
 * data, and every byte arrives. */
static void
idle_subflows_give_their_windows_back(int nsf)
{
	enum { B = 300, HELD = B * 3 / 4 };
	struct xfer a = { .up = 20000, .limit_ms = 5000 };
	struct xfer b = { .up = 1000000, .close = 1, .limit_ms = 30000 };
	struct rte_mbuf *hold[HELD];
	struct tcp_conn_info ci;

	p_budget = B;
	setup(MS(5), MS(5));
	mc_connect();
	if (nsf > 1)
		assert_true(mc_join(0, 0, 0)->events & TCP_EV_CONNECTED);
	transfer(&a);
	tcp_conn_get_info(mc.sf[0].c, &ci);
	assert_true(ci.snd_wnd > 16 * 1460);
	for (int i = 0; i < HELD; i++)
		assert_non_null(hold[i] = rte_pktmbuf_alloc(test_pool));
	run_ms(400); /* idle past the proxy's 200 ms */
	assert_true(mptcp_proxy_tcp_counters(P)[TCP_CNT_RCV_RECLAIMED] >= (uint64_t)nsf + 1);
	for (int k = 0; k < nsf; k++) {
		tcp_conn_get_info(mc.sf[k].c, &ci);
		assert_true(ci.snd_wnd <= 4 * 1460);
	}
	for (int i = 0; i < HELD; i++)
		rte_pktmbuf_free(hold[i]);
	mc.rr = nsf > 1;
	transfer(&b);
	assert_int_equal(CNT(MPTCP_NO_MAPPING), 0);
	assert_int_equal(mc.unmapped, 0);
	teardown_all();
}

static void
an_idle_subflow_gives_its_window_back_and_an_upload_after_it_arrives_whole(void **state)
{
	(void)state;
	idle_subflows_give_their_windows_back(1);
}

/* A phone that idled on two paths. */
static void
an_upload_over_two_subflows_whose_windows_were_taken_back_arrives_whole(void **state)
{
	(void)state;
	idle_subflows_give_their_windows_back(2);
}

/* Every data segment toward the client gives 28 bytes of its MSS to the
 * DSS; the server leg asks the server for segments that much smaller,
 * so that each full segment of the server leaves on a subflow as one
 * full segment (not as one and a tail of 28 bytes: twice the segments
 * to build, send and have acknowledged), and the stream is intact. */
static void
the_server_is_asked_for_segments_that_leave_on_a_subflow_whole(void **state)
{
	struct xfer x = { .up = 0, .down = 300000, .limit_ms = 30000 };
	const struct mptcp_meta *mt;

	(void)state;
	setup(MS(5), MS(5));
	mc_connect();
	assert_non_null(app_s.conn);
	mt = meta();
	assert_non_null(mt);
	assert_int_equal(tcp_conn_mss(app_s.conn) + MPTCP_DSS_DATA_LEN,
			 tcp_conn_mss(mt->sf[0]->c));
	transfer(&x);
	assert_int_equal(CNT(MPTCP_TX_NO_MAPPING), 0);
	teardown_all();
}

static void
a_data_fin_from_the_client_reaches_the_server_as_fin_and_the_servers_fin_the_client_as_data_fin(void **state)
{
	struct xfer x = { .up = 3000, .down = 5000, .close = 1, .limit_ms = 10000 };

	(void)state;
	setup(MS(5), MS(5));
	mc_connect();
	transfer(&x);
	assert_true(app_s.events & TCP_EV_PEER_FIN);
	assert_int_equal(CNT(MPTCP_DATA_FIN_IN), 1);
	assert_int_equal(CNT(MPTCP_DATA_FIN_OUT), 1);
	assert_true(mc.peer_fin);
	assert_int_equal(mc.peer_fin_dsn, mc.rcv_base + x.down);
	assert_true(mc.fin_acked);
	assert_false(app_s.events & TCP_EV_RESET);
	assert_int_equal(CNT(RESET), 0);
	assert_int_equal(CNT(CLOSED), 1);
	teardown_all();
}

static void
data_over_two_subflows_is_reassembled_in_dsn_order_when_the_second_delivers_first(void **state)
{
	struct xfer x = { .up = 400000, .down = 0, .close = 0, .limit_ms = 20000 };
	struct mcsf *j;

	(void)state;
	setup(MS(30), MS(2));
	mc_connect();
	j = mc_join(0, 0, 0);
	assert_true(j->hmac_ok);
	assert_true(j->events & TCP_EV_CONNECTED);
	assert_int_equal(CNT(MPTCP_JOIN_OK), 1);
	assert_int_equal(stats().mptcp_subflows, 2);
	mc.rr = 1; /* chunks alternate: the later one arrives first */
	transfer(&x);
	assert_true(max_ooo > 0);
	assert_true(CNT(MPTCP_DUP_BYTES) == 0);
	teardown_all();
}

static void
a_join_with_a_wrong_hmac_is_answered_with_rst_and_counted(void **state)
{
	struct mcsf *j;

	(void)state;
	setup(MS(5), MS(5));
	mc_connect();
	j = mc_join(0, 1, 0);
	assert_true(j->hmac_ok); /* our SYN-ACK's HMAC was right */
	assert_int_equal(CNT(MPTCP_JOIN_BAD_HMAC), 1);
	assert_int_equal(CNT(MPTCP_JOIN_OK), 0);
	assert_true(j->events & TCP_EV_RESET);
	assert_int_equal(stats().mptcp_subflows, 1);
	/* The connection itself carries on. */
	transfer(&(struct xfer){ .up = 20000, .down = 20000, .limit_ms = 5000 });
	teardown_all();
}

static void
a_join_with_an_unknown_token_is_answered_with_rst_and_counted(void **state)
{
	struct mcsf *j;

	(void)state;
	setup(MS(5), MS(5));
	mc_connect();
	j = mc_join(0, 0, 0x00010000);
	assert_int_equal(CNT(MPTCP_JOIN_BAD_TOKEN), 1);
	assert_int_equal(CNT(MPTCP_JOIN_SYN), 0);
	assert_true(j->events & TCP_EV_REFUSED);
	assert_int_equal(stats().mptcp_subflows, 1);
	teardown_all();
}

static void
data_without_dss_on_the_first_subflow_falls_back_counted_with_the_stream_intact(void **state)
{
	struct xfer x = { .up = 300000, .down = 300000, .close = 1, .limit_ms = 30000 };

	(void)state;
	setup(MS(5), MS(5));
	mc_connect();
	/* A middlebox strips MPTCP options after the handshake. */
	mc.no_dss = 1;
	mc.plain = 1;
	transfer(&x);
	assert_int_equal(CNT(MPTCP_FALLBACK_NO_DSS), 1);
	assert_int_equal(CNT(CLOSED), 1);
	teardown_all();
}

/* Halfway through the upload a middlebox starts stripping DSS (as one
 * that lets the kernel's MP_CAPABLE-mapped first data pass does). */
static void
strip_dss_after_100k(uint64_t sent_down)
{
	(void)sent_down;
	if (!mc.no_dss && mc.snd_nxt - mc.snd_base >= 100000) {
		mc.no_dss = 1;
		mc.plain = 1;
	}
}

static void
data_without_dss_after_mapped_data_falls_back_where_the_mappings_ended(void **state)
{
	struct xfer x = { .up = 300000, .down = 0, .close = 1, .limit_ms = 30000,
			  .during = strip_dss_after_100k };

	(void)state;
	setup(MS(5), MS(5));
	mc_connect();
	transfer(&x);
	assert_int_equal(CNT(MPTCP_FALLBACK_NO_DSS), 1);
	assert_int_equal(CNT(MPTCP_NO_MAPPING), 0);
	assert_int_equal(CNT(CLOSED), 1);
	teardown_all();
}

/* DSS stripped only on the client's way to us, on an upload: we fall
 * back on the first unmapped bytes, but the client still gets our
 * DATA_ACKs and would go on speaking MPTCP (its DATA_FIN stripped).
 * With room in the MSS we announced for the DSS of its infinite mapping
 * (mptcp_fallback_mss_room), the next ACK carries MP_FAIL at the DSN
 * from which the subflow is the stream; without it, none. */
static uint64_t strip_from_dsn;

static int fail_answered;
static void mc_send_option(struct mcsf *s, const struct mptcp_opt *o);

static void
strip_dss_toward_us_after_100k(uint64_t sent_down)
{
	int stripping = mc.no_dss;

	strip_dss_after_100k(sent_down);
	if (!stripping && mc.no_dss)
		strip_from_dsn = mc.snd_nxt;
	if (mc.mp_fail && !fail_answered && mc.sf[0].c != NULL) {
		/* The client's answer, as Linux sends it: MP_FAIL on an
		 * ACK (the middlebox strips only DSS). It must not reset
		 * the subflow that now carries the stream. */
		struct mptcp_opt f = { .sub = MPTCP_SUB_MP_FAIL };

		f.u.fail.dsn = mc.rcv_nxt;
		fail_answered = 1;
		mc.extra_alone = 1;
		mc_send_option(&mc.sf[0], &f);
		mc.extra_alone = 0;
	}
}

static void
fallback_on_data_without_dss_sends_mp_fail_when_the_mss_has_room(void **state)
{
	struct xfer x = { .up = 300000, .down = 0, .close = 1, .limit_ms = 30000,
			  .during = strip_dss_toward_us_after_100k };
	uint16_t mss_plain;

	(void)state;
	setup(MS(5), MS(5));
	mc_connect();
	mss_plain = tcp_conn_peer_mss(mc.sf[0].c);
	mss_room = true;
	setup(MS(5), MS(5));
	mc_connect();
	assert_int_equal(tcp_conn_peer_mss(mc.sf[0].c), mss_plain - 28);
	fail_answered = 0;
	transfer(&x);
	assert_int_equal(CNT(MPTCP_FALLBACK_NO_DSS), 1);
	assert_int_equal(CNT(MPTCP_FALLBACK_INFINITE), 0);
	assert_int_equal(CNT(MPTCP_FAIL_OUT), 1);
	assert_int_equal(mc.mp_fail, 1);
	assert_int_equal(fail_answered, 1);
	assert_int_equal(CNT(MPTCP_FAIL_IN), 1);
	/* The segments the client had queued before the stripping began
	 * went out without DSS too: the fallback is at or before it. */
	assert_true(mc.mp_fail_dsn > mc.snd_base && mc.mp_fail_dsn <= strip_from_dsn);
	assert_int_equal(CNT(MPTCP_NO_MAPPING), 0);
	assert_int_equal(CNT(CLOSED), 1);
	teardown_all();

	/* The same without the room: fallback, no MP_FAIL. */
	setup(MS(5), MS(5));
	mc_connect();
	transfer(&x);
	assert_int_equal(CNT(MPTCP_FALLBACK_NO_DSS), 1);
	assert_int_equal(CNT(MPTCP_FAIL_OUT), 0);
	assert_int_equal(mc.mp_fail, 0);
	assert_int_equal(CNT(CLOSED), 1);
	teardown_all();
}

/* The ACK that carries MP_FAIL after the fallback is lost: it goes out
 * again (MPTCP_FAIL_RESEND_NS later, on an ACK of its own if need be)
 * and the client still learns of the fallback, its stream ending with a
 * FIN. */
static void
a_lost_mp_fail_after_the_fallback_is_sent_again(void **state)
{
	struct xfer x = { .up = 300000, .down = 0, .close = 0, .limit_ms = 30000,
			  .during = strip_dss_toward_us_after_100k };

	(void)state;
	mss_room = true;
	setup(MS(5), MS(5));
	mc_connect();
	fail_answered = 0;
	drop_mp_fail_to_c = 1;
	transfer(&x);
	assert_int_equal(drop_mp_fail_to_c, 0); /* the first was lost */
	assert_int_equal(CNT(MPTCP_FALLBACK_NO_DSS), 1);
	assert_int_equal(mc.mp_fail, 0);
	/* The upload is done: the client sends nothing more to ACK. The
	 * resend goes out on an ACK of its own. */
	for (int i = 0; i < 100 && !fail_answered; i++) {
		run_ms(10);
		strip_dss_toward_us_after_100k(0); /* the client's answer */
	}
	assert_int_equal(CNT(MPTCP_FAIL_OUT), 2);
	assert_int_equal(mc.mp_fail, 1);
	assert_int_equal(fail_answered, 1);
	run_ms(100);
	assert_int_equal(CNT(MPTCP_FAIL_IN), 1);
	/* Answered: no more. */
	run_ms(1000);
	assert_int_equal(CNT(MPTCP_FAIL_OUT), 2);
	assert_int_equal(mc.mp_fail, 1);
	teardown_all();

	/* Every one lost: MPTCP_FAIL_SENDS in all, then it gives up. */
	mss_room = true;
	setup(MS(5), MS(5));
	mc_connect();
	fail_answered = 0;
	drop_mp_fail_to_c = 100;
	transfer(&x);
	run_ms(3000);
	assert_int_equal(CNT(MPTCP_FAIL_OUT), MPTCP_FAIL_SENDS);
	assert_int_equal(drop_mp_fail_to_c, 100 - MPTCP_FAIL_SENDS);
	assert_int_equal(mc.mp_fail, 0);
	teardown_all();
	drop_mp_fail_to_c = 0;
}

static void
dss_checksums_the_client_asks_for_are_verified_and_sent_with_the_stream_intact(void **state)
{
	struct xfer x = { .up = 300000, .down = 300000, .close = 1, .limit_ms = 30000 };

	(void)state;
	setup(MS(5), MS(5));
	mc.csum = 1;
	mc_connect();
	(void)mc_join(0, 0, 0);
	mc.rr = 1; /* the client's chunks over both subflows */
	transfer(&x);
	assert_int_equal(CNT(MPTCP_CSUM_CONN), 1);
	assert_true(CNT(MPTCP_CSUM_OK) > 10);
	assert_int_equal(CNT(MPTCP_CSUM_FAIL), 0);
	assert_int_equal(CNT(MPTCP_CSUM_MISSING), 0);
	assert_int_equal(CNT(MPTCP_FALLBACK_CSUM), 0);
	assert_true(mc.csum_maps > 10);
	assert_int_equal(mc.plain_maps, 0);
	assert_int_equal(CNT(CLOSED), 1);
	teardown_all();
}

static void
a_checksum_failure_on_the_only_subflow_sends_mp_fail_and_delivers_none_of_that_mapping(void **state)
{
	struct xfer x = { .up = 0, .down = 0, .limit_ms = 100 };
	uint64_t bad;

	(void)state;
	setup(MS(5), MS(5));
	mc.csum = 1;
	mc_connect();
	transfer(&x);
	/* The fifth chunk's checksum is wrong (a middlebox changed bytes). */
	bad = mc.snd_base + 4 * mc.chunk;
	mc.bad_csum_dsn = bad;
	mc.up_total = 40000;
	for (int i = 0; i < 2000 && !mc.mp_fail; i++) {
		mc_push();
		step();
	}
	run_ms(50);
	assert_int_equal(mc.mp_fail, 1);
	assert_true(mc.mp_fail_dsn == bad);
	assert_int_equal(CNT(MPTCP_CSUM_FAIL), 1);
	assert_int_equal(CNT(MPTCP_FAIL_OUT), 1);
	/* Every byte before the failed mapping reached the server, none
	 * from it on. */
	assert_true(app_s.rx_bytes == bad - mc.snd_base);
	teardown_all();
}

static void
a_segment_spanning_two_mappings_is_split_between_them(void **state)
{
	struct xfer x = { .up = 200000, .down = 0, .limit_ms = 10000 };

	(void)state;
	setup(MS(5), MS(5));
	mc_connect();
	/* Chunks of 2000 queued back to back: segments cross chunk edges
	 * and carry the mapping that starts inside them. */
	mc.chunk = 2000;
	mc.map_last = 1;
	transfer(&x);
	assert_true(mc.spanning > 10);
	assert_int_equal(CNT(MPTCP_NO_MAPPING), 0);
	teardown_all();
}

static void
a_mapping_repeated_on_every_segment_is_recorded_once(void **state)
{
	struct xfer x = { .up = 200000, .down = 0, .limit_ms = 10000 };
	struct mptcp_meta *mt;

	(void)state;
	setup(MS(5), MS(5));
	mc_connect();
	mc.chunk = 16000; /* about 11 segments per mapping, each with it */
	transfer(&x);
	mt = meta();
	assert_non_null(mt);
	assert_non_null(mt->sf[0]);
	assert_true(mc.sf[0].ntx >= 13);
	assert_int_equal(mt->sf[0]->rx_head, mc.sf[0].ntx);
	assert_int_equal(CNT(MPTCP_DUP_BYTES), 0);
	teardown_all();
}

/* An upload whose segments reach P in bursts: lib/tcp reads a subflow's
 * in-order segments as runs where their DSS mappings make one
 * (sf_opts_merge()); the client's PSH (the end of what it had queued)
 * ends a run, as in GRO. Chunks of 4000, each mapped and queued alone:
 * three segments carry the same mapping, merged as they are, and each
 * mapping is recorded once. A mapping per segment (map_seg, as Linux
 * sends without segmentation offload), with 64- and 32-bit DSNs: each
 * continues the one before, and runs record fewer, longer mappings than
 * the client sent. Either way the stream arrives whole, the connection
 * stays MPTCP, and no byte lacks a mapping or arrives twice. With DSS
 * checksums nothing is merged: each checksum covers its own mapping's
 * bytes. */
static void
an_upload_in_bursts_is_read_in_runs_where_the_mappings_allow(void **state)
{
	static const struct { int map_seg, dsn32, csum; } mode[] = {
		{ 0, 0, 0 }, { 1, 0, 0 }, { 1, 1, 0 }, { 0, 0, 1 },
	};

	(void)state;
	for (unsigned i = 0; i < RTE_DIM(mode); i++) {
		struct xfer x = { .up = 400000, .down = 0, .limit_ms = 20000 };
		const uint64_t *tc;
		uint64_t merged, in;
		uint32_t maps, segs;

		setup(MS(5), MS(5));
		p_burst = 1;
		mc.csum = mode[i].csum;
		mc_connect();
		mc.map_seg = mode[i].map_seg;
		mc.dsn32 = mode[i].dsn32;
		transfer(&x);
		tc = mptcp_proxy_tcp_counters(P);
		merged = tc[TCP_CNT_SEG_COALESCED];
		in = tc[TCP_CNT_SEG_IN];
		maps = meta()->sf[0]->rx_head;
		segs = (uint32_t)tcp_engine_counters(C)[TCP_CNT_SEG_OUT];
		print_message("map_seg %d dsn32 %d csum %d: %llu of %llu frames merged, "
			      "%u mappings recorded, the client sent %u chunks in %u frames"
			      "\n", mode[i].map_seg, mode[i].dsn32, mode[i].csum,
			      (unsigned long long)merged, (unsigned long long)in, maps,
			      mc.sf[0].ntx, segs);
		assert_false(meta()->flags & MT_FALLBACK);
		assert_int_equal(CNT(MPTCP_DUP_BYTES), 0);
		assert_int_equal(CNT(MPTCP_NO_MAPPING), 0);
		assert_int_equal(CNT(MPTCP_RCV_DROPPED), 0);
		if (mode[i].csum) {
			assert_int_equal(merged, 0);
			assert_true(CNT(MPTCP_CSUM_OK) > 0);
		} else {
			/* (in counts every frame, the server's ACKs too.) */
			assert_true(merged * 4 > in);
			if (mode[i].map_seg)
				assert_true(maps * 2 < segs);
			else
				assert_int_equal(maps, mc.sf[0].ntx);
		}
		teardown_all();
	}
}

/* sf_opts_merge() on option areas written here: timestamps (12 bytes),
 * then a DSS. held is (DSN 0x1000, subflow 5000, 1000 bytes) unless a
 * case says otherwise; what it returns, and what the held DSS then says. */
static void
dss_area(uint8_t *a, uint8_t flags, uint64_t ack, uint64_t dsn, uint32_t ssn, uint16_t len)
{
	memset(a, 0, 40);
	a[0] = a[1] = 1;
	a[2] = 8;
	a[3] = 10;
	mptcp_dss_encode(a + 12, mptcp_dss_len(flags), flags, ack, dsn, ssn, len, false, 0);
}

static void
the_dss_of_segments_read_as_one_run_is_one_mapping_or_none(void **state)
{
	enum {
		A = MPTCP_DSS_DATA_ACK | MPTCP_DSS_ACK64 | MPTCP_DSS_MAP | MPTCP_DSS_DSN64,
		AF = A | MPTCP_DSS_DATA_FIN,
		A32 = MPTCP_DSS_DATA_ACK | MPTCP_DSS_MAP,
		ACK = MPTCP_DSS_DATA_ACK | MPTCP_DSS_ACK64,
	};
	static const struct {
		const char *what;
		uint8_t f_held, f_next;
		uint64_t ack_next, dsn_held, dsn_next;
		uint32_t ssn_next;
		uint16_t len_held, len_next;
		bool csum, want;
		uint16_t len_after;
	} c[] = {
		{ "continues it", A, A, 7, 0x1000, 0x1000 + 1000, 6000, 1000, 500, false, true, 1500 },
		{ "the same mapping", A, A, 7, 0x1000, 0x1000, 5000, 1000, 1000, false, true, 1000 },
		{ "inside it", A, A, 7, 0x1000, 0x1000 + 200, 5200, 1000, 300, false, true, 1000 },
		{ "from its start, longer", A, A, 7, 0x1000, 0x1000, 5000, 1000, 1400, false, true, 1400 },
		{ "overlapping its end", A, A, 7, 0x1000, 0x1000 + 600, 5600, 1000, 1000, false, true, 1600 },
		{ "a byte after its end", A, A, 7, 0x1000, 0x1000 + 1001, 6001, 1000, 10, false, false, 0 },
		{ "shifted in one space only", A, A, 7, 0x1000, 0x1000 + 1000, 5999, 1000, 10, false, false, 0 },
		{ "before it", A, A, 7, 0x1000, 0x1000 - 10, 4990, 1000, 10, false, false, 0 },
		{ "another DATA_ACK", A, A, 8, 0x1000, 0x1000 + 1000, 6000, 1000, 500, false, false, 0 },
		{ "other flags", A, A32, 7, 0x1000, 0x1000 + 1000, 6000, 1000, 500, false, false, 0 },
		{ "DATA_FIN, continuing", AF, AF, 7, 0x1000, 0x1000 + 1000, 6000, 1000, 500, false, false, 0 },
		{ "DATA_FIN, the same", AF, AF, 7, 0x1000, 0x1000, 5000, 1000, 1000, false, true, 1000 },
		{ "past 65535 bytes", A, A, 7, 0x1000, 0x1000 + 65000, 70000, 65000, 1000, false, false, 0 },
		{ "32-bit, across 2^32", A32, A32, 7, 0xffffff00ull, 0xffffff00ull + 1000, 6000, 1000,
		  500, false, true, 1500 },
		{ "with checksums", A, A, 7, 0x1000, 0x1000 + 1000, 6000, 1000, 500, true, false, 0 },
		{ "no mapping", ACK, ACK, 7, 0, 0, 0, 0, 0, false, true, 0 },
	};
	struct mptcp_subflow *sf;
	struct mptcp_meta *mt;

	(void)state;
	setup(MS(5), MS(5));
	mc_connect();
	mt = meta();
	assert_non_null(mt);
	sf = mt->sf[0];
	assert_non_null(sf);
	for (unsigned i = 0; i < RTE_DIM(c); i++) {
		uint8_t held[40], next[40], before[40];
		uint32_t optlen = 12 + ((mptcp_dss_len(c[i].f_held) + 3) & ~3u);
		struct mptcp_opt o;
		bool got;

		dss_area(held, c[i].f_held, 7, c[i].dsn_held, 5000, c[i].len_held);
		dss_area(next, c[i].f_next, c[i].ack_next, c[i].dsn_next, c[i].ssn_next,
			 c[i].len_next);
		memcpy(before, held, sizeof(held));
		if (c[i].csum)
			mt->flags |= MT_CSUM;
		got = mptcp_subflow_hooks.opts_merge(sf, sf->c, held, next, optlen, 12);
		mt->flags &= ~MT_CSUM;
		print_message("%-28s %s\n", c[i].what, got ? "merged" : "not merged");
		assert_int_equal(got, c[i].want);
		if (!got) {
			assert_memory_equal(held, before, sizeof(held));
			continue;
		}
		assert_true(mptcp_dss_decode(held + 12, held[13], &o));
		assert_int_equal(o.u.dss.data_len, c[i].len_after);
		if (c[i].f_held & MPTCP_DSS_MAP) {
			/* (A 32-bit DSN is its lower half.) */
			assert_true(o.u.dss.dsn == ((c[i].f_held & MPTCP_DSS_DSN64) ? c[i].dsn_held :
						    (uint32_t)c[i].dsn_held));
			assert_int_equal(o.u.dss.ssn, 5000);
		}
	}
	/* The area too short for the option: never merged. */
	{
		uint8_t held[40], next[40];

		dss_area(held, A, 7, 0x1000, 5000, 1000);
		dss_area(next, A, 7, 0x1000 + 1000, 6000, 1000);
		assert_false(mptcp_subflow_hooks.opts_merge(sf, sf->c, held, next, 12 + 20, 12));
	}
	teardown_all();
}

static void
bytes_mapped_twice_on_two_subflows_reach_the_server_once(void **state)
{
	struct xfer x = { .up = 200000, .down = 0, .limit_ms = 10000 };

	(void)state;
	setup(MS(5), MS(10));
	mc_connect();
	(void)mc_join(0, 0, 0);
	mc.dup_to = 2; /* every chunk goes on both subflows */
	transfer(&x);
	assert_true(CNT(MPTCP_DUP_BYTES) > 0);
	teardown_all();
}

static void
thirty_two_bit_dsns_are_expanded_across_the_2_32_boundary(void **state)
{
	struct xfer x = { .up = 600000, .down = 600000, .limit_ms = 20000 };
	uint64_t key;
	uint32_t tok;
	uint64_t idsn = 0;

	(void)state;
	setup(MS(5), MS(5));
	/* A client key whose first DSN sits 200 kB below a 2^32 edge. */
	for (key = 0x1000; ; key++) {
		mptcp_key_token_idsn(key, &tok, &idsn);
		if ((uint32_t)(idsn + 1) > 0xffffffffu - 200000 &&
		    (uint32_t)(idsn + 1) < 0xffffffffu - 100000)
			break;
	}
	mc.key = key;
	mc.dsn32 = 1;
	mc_connect();
	transfer(&x);
	assert_true((mc.snd_base >> 32) != ((mc.snd_base + x.up) >> 32));
	assert_int_equal(CNT(MPTCP_NO_MAPPING), 0);
	/* The client's 32-bit DATA_ACKs, expanded: P's send queue is
	 * acknowledged exactly up to what the client has. */
	run_ms(100);
	assert_true(meta()->snd_una == mc.rcv_nxt);
	teardown_all();
}

static uint64_t reset_at;

static void
reset_path1_midway(uint64_t sent_down)
{
	if (reset_at == 0 && sent_down > 300000) {
		assert_true(path_bytes_down[1] > 0); /* it carried its share */
		reset_at = now;
		path_down[1] = 1; /* what is in flight there is lost */
		tcp_abort(mc.sf[1].c, now);
		path_down[1] = 0;
	}
}

static void
a_subflow_reset_mid_transfer_has_its_data_reinjected_on_the_other(void **state)
{
	struct xfer x = { .up = 0, .down = 1000000, .limit_ms = 30000,
			  .during = reset_path1_midway };

	(void)state;
	setup(MS(20), MS(5));
	mc_connect();
	(void)mc_join(0, 0, 0);
	reset_at = 0;
	path_down[1] = 0;
	transfer(&x);
	assert_true(reset_at != 0);
	assert_int_equal(CNT(MPTCP_SF_RESET), 1);
	assert_true(CNT(MPTCP_REINJECTED) > 0);
	assert_true(path_bytes_down[1] > 0);
	teardown_all();
}

static void
the_scheduler_prefers_the_lower_rtt_subflow(void **state)
{
	uint64_t offs = 0, hs = FNV_INIT;

	(void)state;
	setup(MS(2), MS(25));
	mc_connect();
	(void)mc_join(0, 0, 0);
	run_ms(200);
	path_bytes_down[0] = path_bytes_down[1] = 0;
	/* An application-limited sender: 3000 bytes every 20 ms. */
	for (int i = 1; i <= 50; i++) {
		s_push(3000u * (uint64_t)i, &offs, &hs);
		run_ms(20);
	}
	run_ms(200);
	print_message("path 0: %llu bytes, path 1: %llu bytes\n",
		      (unsigned long long)path_bytes_down[0], (unsigned long long)path_bytes_down[1]);
	assert_down_is(offs);
	assert_true(path_bytes_down[0] >= offs);
	assert_int_equal(path_bytes_down[1], 0);
	teardown_all();
}

static uint64_t cut_at;

static void
cut_path0(uint64_t sent_down)
{
	if (cut_at == 0 && sent_down > 200000) {
		cut_at = now;
		assert_int_equal(path_bytes_down[1], 0); /* the backup idled */
		path_down[0] = 1;
		tcp_abort(mc.sf[0].c, now);
	}
}

static void
a_backup_subflow_carries_data_only_once_no_other_is_left(void **state)
{
	struct xfer x = { .up = 0, .down = 600000, .limit_ms = 30000, .during = cut_path0 };
	struct mcsf *j;

	(void)state;
	setup(MS(20), MS(2)); /* the backup is the faster path */
	mc_connect();
	j = mc_join(1, 0, 0);
	assert_true(j->events & TCP_EV_CONNECTED);
	cut_at = 0;
	transfer(&x);
	assert_true(cut_at != 0);
	assert_true(path_bytes_down[1] > 0);
	teardown_all();
}

/* The client sends o on a pure ACK of subflow s now. */
static void
mc_send_option(struct mcsf *s, const struct mptcp_opt *o)
{
	mc.extra = *o;
	mc.extra_on = s->idx + 1;
	assert_int_equal(tcp_conn_send_ack(s->c, now), 0);
	assert_int_equal(mc.extra_on, 0); /* it went out */
}

/* An ADD_ADDR of the client's: address 198.18.2.1 (or 2001:db8:2::1),
 * port 0 (none) or port, HMAC right or not. */
static struct mptcp_opt
client_add_addr(uint8_t id, int ipv6, uint16_t port, int good_hmac)
{
	static const uint8_t a4[4] = { 198, 18, 2, 1 };
	static const uint8_t a6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 2, [15] = 1 };
	struct mptcp_opt o = { .sub = MPTCP_SUB_ADD_ADDR };

	o.u.add_addr.addr_id = id;
	o.u.add_addr.ipv6 = ipv6 != 0;
	memcpy(o.u.add_addr.addr, ipv6 ? a6 : a4, ipv6 ? 16 : 4);
	o.u.add_addr.has_port = port != 0;
	o.u.add_addr.port = port;
	o.u.add_addr.hmac64 = mptcp_add_addr_hmac(mc.key, mc.key_remote, id, o.u.add_addr.addr,
						  ipv6 ? 16 : 4, port) ^ (good_hmac ? 0 : 1);
	return o;
}

static void
an_add_addr_from_the_client_is_echoed_with_its_id_address_and_port_and_no_hmac(void **state)
{
	struct xfer x = { .up = 20000, .down = 20000, .limit_ms = 5000 };
	struct mptcp_opt o;

	(void)state;
	setup(MS(5), MS(5));
	mc_connect();
	transfer(&x);
	/* IPv4 without port (beside a DATA_ACK), IPv6, IPv4 with a port
	 * (alone: with timestamps no DSS fits beside them, as the kernel
	 * does). The echo of IPv6 (20 bytes) leaves no room for our DSS. */
	static const struct { int v6; uint16_t port; int alone; } k[] = {
		{ 0, 0, 0 }, { 1, 0, 1 }, { 0, 8080, 1 },
	};
	for (unsigned i = 0; i < RTE_DIM(k); i++) {
		int before = mc.echoes;

		o = client_add_addr((uint8_t)(5 + i), k[i].v6, k[i].port, 1);
		mc.extra_alone = k[i].alone;
		mc_send_option(&mc.sf[0], &o);
		mc.extra_alone = 0;
		run_ms(20);
		assert_int_equal(mc.echoes, before + 1);
		assert_true(mc.echo.u.add_addr.echo);
		assert_int_equal(mc.echo.u.add_addr.addr_id, 5 + i);
		assert_int_equal(mc.echo.u.add_addr.ipv6, k[i].v6 != 0);
		assert_int_equal(mc.echo.u.add_addr.has_port, k[i].port != 0);
		assert_int_equal(mc.echo.u.add_addr.port, k[i].port);
		assert_memory_equal(mc.echo.u.add_addr.addr, o.u.add_addr.addr, k[i].v6 ? 16 : 4);
	}
	assert_int_equal(CNT(MPTCP_ADD_ADDR), 3);
	assert_int_equal(CNT(MPTCP_ADD_ADDR_ECHO), 3);
	/* A wrong HMAC: counted, never echoed. */
	o = client_add_addr(9, 0, 0, 0);
	mc_send_option(&mc.sf[0], &o);
	run_ms(20);
	assert_int_equal(mc.echoes, 3);
	assert_int_equal(CNT(MPTCP_ADD_ADDR_BAD_HMAC), 1);
	assert_int_equal(CNT(MPTCP_ADD_ADDR), 3);
	/* Nothing else happened to the connection. */
	assert_int_equal(CNT(MPTCP_SF_RESET), 0);
	assert_int_equal(CNT(MPTCP_OPT_ERR), 0);
	assert_int_equal(stats().mptcp_subflows, 1);
	teardown_all();
}

static uint64_t rm_at;

static void
remove_path1_midway(uint64_t sent_down)
{
	if (rm_at == 0 && sent_down > 300000) {
		struct mptcp_opt o = { .sub = MPTCP_SUB_REMOVE_ADDR };

		assert_true(path_bytes_down[1] > 0);
		rm_at = now;
		o.u.rm_addr.n = 1;
		o.u.rm_addr.ids[0] = (uint8_t)mc.sf[1].addr_id;
		mc_send_option(&mc.sf[0], &o);
	}
}

static void
remove_addr_resets_the_subflows_of_that_address_and_their_data_goes_out_on_the_others(void **state)
{
	struct xfer x = { .up = 0, .down = 1000000, .limit_ms = 30000,
			  .during = remove_path1_midway };

	(void)state;
	setup(MS(20), MS(5));
	mc_connect();
	(void)mc_join(0, 0, 0);
	rm_at = 0;
	transfer(&x);
	assert_true(rm_at != 0);
	assert_int_equal(CNT(MPTCP_RM_ADDR), 1);
	assert_true(mc.sf[1].events & TCP_EV_RESET);
	assert_true(CNT(MPTCP_REINJECTED) > 0);
	assert_int_equal(stats().mptcp_subflows, 1);
	teardown_all();
}

static void
mp_fastclose_from_the_client_resets_every_subflow_and_the_server_leg(void **state)
{
	struct mptcp_opt o = { .sub = MPTCP_SUB_MP_FASTCLOSE };

	(void)state;
	setup(MS(5), MS(5));
	mc_connect();
	(void)mc_join(0, 0, 0);
	transfer(&(struct xfer){ .up = 10000, .down = 10000, .limit_ms = 5000 });
	o.u.fastclose.key_rcv = mc.key_remote;
	mc_send_option(&mc.sf[0], &o);
	run_ms(100);
	assert_int_equal(CNT(MPTCP_FASTCLOSE_IN), 1);
	assert_true(app_s.events & TCP_EV_RESET);
	assert_true(mc.sf[0].events & TCP_EV_RESET);
	assert_true(mc.sf[1].events & TCP_EV_RESET);
	assert_int_equal(stats().mptcp_active, 0);
	assert_int_equal(stats().active, 0);
	teardown_all();
}

static void
data_without_dss_falls_back_whole_while_a_join_is_still_half_open(void **state)
{
	struct xfer x = { .up = 300000, .down = 300000, .close = 1, .limit_ms = 30000 };
	struct tcp_endpoints ep;
	struct mcsf *j;

	(void)state;
	setup(MS(5), MS(5));
	mc_connect();
	/* A join whose SYN reaches P but whose SYN-ACK is lost: P holds a
	 * second, half-open subflow. */
	wire_ep_v4(&ep);
	ep.laddr[3] = 3;
	ep.lport = 40001;
	j = &mc.sf[mc.nsf];
	j->mc = &mc;
	j->idx = mc.nsf++;
	j->join = 1;
	j->addr_id = 1;
	j->nonce = 77;
	j->tx_rel = 1;
	j->c = tcp_connect_hooked(C, &ep, &mc_hooks, j, j, now);
	assert_non_null(j->c);
	run_ms(7);
	path_down[1] = 1;
	run_ms(10);
	assert_int_equal(CNT(MPTCP_JOIN_SYN), 1);
	assert_int_equal(stats().mptcp_subflows, 2);
	/* Then a middlebox strips DSS from the first subflow's data. */
	mc.no_dss = 1;
	mc.plain = 1;
	transfer(&x);
	assert_int_equal(CNT(MPTCP_FALLBACK_NO_DSS), 1);
	assert_int_equal(CNT(MPTCP_NO_MAPPING), 0);
	teardown_all();
}

/* Found by fuzz_mptcp_mapping with the client's segments in bursts
 * (configuration 0x40): in the burst whose first-subflow segment without
 * DSS makes the connection fall back, a joined subflow's segment came
 * after it; the join was only marked for reset, and its bytes were taken
 * for the stream's next ones. Here the first subflow's DSS is stripped
 * and the join carries stream bytes 5000 on: the server must get the
 * first subflow's 1000 bytes alone. */
static void
a_joins_data_in_the_burst_that_falls_back_never_joins_the_stream(void **state)
{
	(void)state;
	setup(MS(5), MS(5));
	mc_connect();
	(void)mc_join(0, 0, 0);
	assert_int_equal(stats().mptcp_subflows, 2);
	p_burst = 1;
	mc.sf[0].no_dss = 1;
	assert_int_equal(mc_send_chunk(&mc.sf[0], mc.snd_base, 1000, 0), 1000);
	assert_int_equal(mc_send_chunk(&mc.sf[1], mc.snd_base + 5000, 1000, 0), 1000);
	run_ms(30);
	assert_int_equal(CNT(MPTCP_FALLBACK_NO_DSS), 1);
	assert_int_equal(app_s.rx_bytes, 1000);
	assert_true(app_s.rx_hash == up_hash(1000));
	assert_int_equal(CNT(MPTCP_NO_MAPPING), 1000);
	teardown_all();
}

/* A segment held out of order that the in-order data then overlaps in
 * part (a resend cut at other boundaries, a chunk sent again on another
 * subflow): the join maps stream bytes 1000..2999 first, then the first
 * subflow 0..1999. Once the data level passes 1000, the front of what is
 * held was delivered already and must be cut off, so the server gets
 * 0..2999, each byte once, and what was cut counts as duplicate bytes
 * (no test reached that cut: the e2e loss tests and the fuzz target
 * passed with it left out; and it was not counted). */
static void
a_held_segment_that_in_order_data_overlaps_in_part_goes_on_from_where_that_ended(void **state)
{
	(void)state;
	setup(MS(5), MS(5));
	mc_connect();
	(void)mc_join(0, 0, 0);
	assert_int_equal(stats().mptcp_subflows, 2);
	assert_int_equal(mc_send_chunk(&mc.sf[1], mc.snd_base + 1000, 2000, 0), 2000);
	run_ms(20);
	assert_int_equal(meta()->ooo_bytes, 2000);
	assert_int_equal(app_s.rx_bytes, 0);
	assert_int_equal(mc_send_chunk(&mc.sf[0], mc.snd_base, 2000, 0), 2000);
	run_ms(30);
	assert_int_equal(app_s.rx_bytes, 3000);
	assert_true(app_s.rx_hash == up_hash(3000));
	assert_int_equal(CNT(MPTCP_DUP_BYTES), 1000);
	assert_int_equal(meta()->ooo_bytes, 0);
	teardown_all();
}

static uint64_t rst_at;

/* While P's data toward C is lost, an in-window RST+ACK from C's
 * address that acknowledges it all (a forged or stray RST: the engine
 * answers it with a challenge ACK and takes nothing from it). */
static void
forge_rst_ack(uint64_t sent_down)
{
	struct mptcp_meta *mt = meta();
	struct tcp_conn_info ci;
	struct tcp_endpoints ep;
	struct tcp_seg_out so;
	struct rte_mbuf *m;

	if (rst_at != 0 || sent_down < 100000 || mt == NULL || mt->sf[0] == NULL)
		return;
	if (!path_down[0]) {
		path_down[0] = 1;
		return;
	}
	tcp_conn_get_info(mt->sf[0]->c, &ci);
	if (ci.snd_nxt == ci.snd_una)
		return; /* until data is in flight, and lost */
	rst_at = now;
	wire_ep_v4(&ep);
	memset(&so, 0, sizeof(so));
	so.seq = ci.rcv_nxt + 1000;
	so.ack = ci.snd_nxt;
	so.flags = TCP_FL_RST | TCP_FL_ACK;
	m = tcp_seg_build(test_pool, &ep, &so, NULL, 0, 0);
	assert_non_null(m);
	m->port = 0;
	pkt_parse(m, pkt_meta(m), 0);
	assert_int_equal(mptcp_proxy_input_burst(P, &m, 1, true, 1, now), 0);
	assert_true(mt->sf[0]->tx_n > 0); /* the mappings of what is lost stay */
	run_ms(30);
	path_down[0] = 0;
}

static void
an_rst_that_the_engine_rejects_does_not_drop_the_mappings_of_unacknowledged_data(void **state)
{
	struct xfer x = { .up = 0, .down = 400000, .limit_ms = 20000, .during = forge_rst_ack };

	(void)state;
	setup(MS(5), MS(5));
	mc_connect();
	rst_at = 0;
	transfer(&x);
	assert_true(rst_at != 0);
	assert_int_equal(CNT(MPTCP_TX_NO_MAPPING), 0);
	assert_int_equal(mc.unmapped, 0);
	assert_int_equal(stats().mptcp_subflows, 1);
	teardown_all();
}

static void
a_fallback_ignores_bytes_another_subflow_mapped_ahead(void **state)
{
	struct xfer x = { .up = 20000, .down = 0, .limit_ms = 10000 };

	(void)state;
	setup(MS(5), MS(5));
	mc_connect();
	(void)mc_join(0, 0, 0);
	/* The joined subflow maps bytes 4000..7999 of the stream: ahead of
	 * the data level, so P holds them out of order. */
	assert_int_equal(mc_send_chunk(&mc.sf[1], mc.snd_base + 4000, 4000, 1), 4000);
	run_ms(20);
	assert_true(meta()->ooo_bytes > 0);
	/* Then the first subflow's DSS is stripped: P falls back to it, and
	 * it carries the whole stream from byte 0. */
	mc.sf[0].no_dss = 1;
	mc.plain = 1;
	transfer(&x);
	assert_int_equal(CNT(MPTCP_FALLBACK_NO_DSS), 1);
	teardown_all();
}

/* Two subflows give the connection twice a leg's send buffer, and the
 * relay moves what the server leg holds in one go when the room is
 * there: more than one subflow's snd_buf at once must be taken whole
 * (it was refused, counted relay_failed and freed: the client's stream
 * lost 260,864 bytes and stalled). */
static void
a_relay_burst_beyond_one_subflows_buffer_reaches_the_client_whole(void **state)
{
	struct xfer x = { .up = 0, .down = 3000000, .limit_ms = 60000 };

	(void)state;
	setup(MS(2), MS(100));
	mc_connect();
	(void)mc_join(0, 0, 0);
	run_ms(500);
	transfer(&x);
	assert_int_equal(CNT(RELAY_FAILED), 0);
	teardown_all();
}

/* Head-of-line blocking: path 1 is 50 times slower than path 0 and the
 * client's window is 64 KB. Whatever path 1 carries at the left edge of
 * the client's data-level window holds the window shut while path 0
 * idles; the scheduler sends those bytes again on path 0 and penalises
 * path 1. */
static void
a_slow_subflow_holding_the_window_edge_has_its_bytes_sent_again_on_the_fast_one_and_is_penalised(void **state)
{
	struct xfer x = { .up = 0, .down = 2000000, .limit_ms = 60000 };
	uint64_t t0;

	(void)state;
	client_rcv_buf = 64 * 1024;
	setup(MS(2), MS(100));
	mc_connect();
	(void)mc_join(0, 0, 0);
	run_ms(500);
	t0 = now;
	transfer(&x);
	print_message("window-blocked reinjections %llu, penalties %llu, %.2f virtual s, "
		      "path 0 %llu bytes, path 1 %llu bytes\n",
		      (unsigned long long)CNT(MPTCP_HOL_REINJECT),
		      (unsigned long long)CNT(MPTCP_PENALISED), (double)(now - t0) / 1e9,
		      (unsigned long long)path_bytes_down[0], (unsigned long long)path_bytes_down[1]);
	assert_true(CNT(MPTCP_HOL_REINJECT) > 0);
	assert_true(CNT(MPTCP_PENALISED) > 0);
	assert_true(CNT(MPTCP_PENALISED) <= CNT(MPTCP_HOL_REINJECT));
	assert_true(CNT(MPTCP_REINJECTED) > 0);
	teardown_all();
}

static uint64_t silent_cut_at, prune_armed_at, reinjected_at;

/* Path 0 goes away without a word (no RST, no FIN: the phone left the
 * Wi-Fi) while both paths carry the download. Once its subflow turned
 * stale and what it carried went out again on path 1, the client drops
 * the next new segment path 1 brings after acknowledging it. */
static void
cut_path0_silently_and_prune_one_on_path1(uint64_t sent_down)
{
	struct mptcp_meta *mt = meta();

	if (silent_cut_at == 0 && sent_down > 400000 && path_bytes_down[1] > 0) {
		silent_cut_at = now;
		path_down[0] = 1;
	}
	if (silent_cut_at != 0 && reinjected_at == 0 && CNT(MPTCP_SF_STALE) >= 1 &&
	    mt != NULL && mt->reinj_lo >= mt->reinj_hi)
		reinjected_at = now;
	if (reinjected_at != 0 && prune_armed_at == 0 && now - reinjected_at >= MS(50)) {
		prune_armed_at = now;
		mc.prune_on = 2;
	}
}

/* Issue 16's stall: the dead path's subflow turns stale and its bytes go
 * out on path 1, but a byte path 1 delivered and the client then dropped
 * holds the DATA_ACK. Only a data-level retransmission brings it, and it
 * waited for every subflow to have delivered what it carried, which the
 * dead one never does: the transfer stood still for good. */
/* Paths of d0 and d1 ms one way; path 0 dies, then the client drops a
 * segment path 1 delivered. The download's bytes: enough to last past
 * the time path 0 takes to turn stale. */
static void
drop_after_path_death(uint64_t d0, uint64_t d1, uint64_t bytes)
{
	struct xfer x = { .up = 0, .down = bytes, .limit_ms = 20000,
			  .during = cut_path0_silently_and_prune_one_on_path1 };
	uint64_t t0;

	setup(MS(d0), MS(d1));
	mc_connect();
	(void)mc_join(0, 0, 0);
	run_ms(200);
	silent_cut_at = prune_armed_at = reinjected_at = 0;
	t0 = now;
	transfer(&x);
	print_message("cut at %.3f virtual s, a byte dropped at %.3f, done at %.3f; pruned %llu "
		      "bytes, stale %llu, reinjected %llu, data-level retransmissions %llu\n",
		      (double)(silent_cut_at - t0) / 1e9, (double)(prune_armed_at - t0) / 1e9,
		      (double)(now - t0) / 1e9,
		      (unsigned long long)mc.pruned, (unsigned long long)CNT(MPTCP_SF_STALE),
		      (unsigned long long)CNT(MPTCP_REINJECTED),
		      (unsigned long long)CNT(MPTCP_DATA_RTO));
	assert_true(silent_cut_at != 0);
	assert_true(mc.pruned > 0);
	assert_true(CNT(MPTCP_SF_STALE) >= 1);
	assert_true(CNT(MPTCP_DATA_RTO) >= 1);
	/* Four RTOs of path 1 (at least 200 ms each), not for good. */
	assert_true(now - prune_armed_at < MS(1500));
	teardown_all();
}

static void
a_byte_the_client_dropped_after_its_path_died_is_sent_again_at_the_data_level(void **state)
{
	(void)state;
	drop_after_path_death(5, 10, 3000000);
}

/* The same, the dead path the slower one (300 ms round trip): its RTT
 * must not set the data-level timeout, since nothing goes out on it.
 * Path 0 turns stale about 0.9 s after it died, and path 1 alone moves
 * 3 MB in less. */
static void
the_data_level_retransmission_after_a_path_died_does_not_wait_for_the_dead_paths_rtt(void **state)
{
	(void)state;
	drop_after_path_death(150, 10, 8000000);
}

/* The fourth ACK of a join and its first data frame are lost. Linux
 * holds a join it opened half established until a frame at our first
 * sequence arrives, and resets it on any other (MPTcpExtMPRstTx, seen in test_mptcp_loss.sh's
 * captures): the join carries that one segment, resent at the same
 * sequence, until the client acknowledges it. */
static void
a_joins_first_segment_lost_does_not_reach_the_client_as_a_gap(void **state)
{
	/* The client's few bytes and its DATA_FIN arrive while the first
	 * segment is missing: the DATA_ACK sluice owes on every subflow
	 * must not go on the join as a pure ACK at its next sequence. */
	struct xfer x = { .up = 1000, .down = 1000000, .close = 1, .limit_ms = 20000 };
	struct mcsf *j;

	(void)state;
	setup(MS(20), MS(5)); /* the join's path the faster: it goes first */
	mc_connect();
	drop_first_join_data = 1;
	j = mc_join(0, 0, 0);
	assert_true(j->events & TCP_EV_CONNECTED);
	assert_false(j->fully_established);
	transfer(&x);
	assert_int_equal(drop_first_join_data, 0); /* they were lost */
	assert_int_equal(join_gaps, 0);
	assert_true(j->fully_established);
	/* ... and the join carried its share after all. */
	print_message("down on path 0 %llu, path 1 %llu\n",
		      (unsigned long long)path_bytes_down[0],
		      (unsigned long long)path_bytes_down[1]);
	assert_true(path_bytes_down[1] > x.down / 10);
	teardown_all();
}

/* The server answers and closes at once, and stops reading the
 * client's upload for a second near its end; the client's DATA_FIN
 * comes, both DATA_FINs are acknowledged and the client closes its
 * subflows while the upload's tail still waits in the connection for
 * room on the server leg. It reaches the server, then the FIN. */
static void
an_upload_whose_tail_waits_for_the_server_leg_arrives_whole_after_the_subflows_closed(void **state)
{
	struct xfer x = { .up = 4000000, .down = 1000, .close = 1, .limit_ms = 20000,
			  .s_shut_first = 1, .s_pause_at = 3500000 };

	(void)state;
	setup(MS(5), MS(5));
	mc_connect();
	(void)mc_join(0, 0, 0);
	transfer(&x);
	assert_int_equal(CNT(CLOSED), 1);
	assert_int_equal(stats().mptcp_active, 0);
	assert_true(app_s.events & TCP_EV_PEER_FIN);
	assert_false(app_s.events & TCP_EV_RESET);
	teardown_all();
}

static void
a_join_that_lands_on_the_worker_not_owning_its_token_is_handed_over_and_its_subflow_carries_data(void **state)
{
	struct xfer x = { .up = 400000, .down = 400000, .close = 1, .limit_ms = 30000 };
	struct mcsf *j;
	uint64_t handed_before;

	(void)state;
	setup_two_workers(MS(5), MS(3), 16);
	mc_connect();
	/* Worker 0 owns the connection: its token says so. */
	assert_int_equal(mptcp_token_owner(mc.token_remote, 1), 0);
	assert_int_equal(CNT2(MPTCP_SYN), 0);
	j = mc_join(0, 0, 0);
	assert_true(j->hmac_ok);
	assert_true(j->events & TCP_EV_CONNECTED);
	assert_int_equal(CNT2(MPTCP_JOIN_HANDED), 1);
	assert_true(CNT2(MPTCP_SF_HANDED) >= 1); /* the third ACK at least */
	assert_int_equal(CNT2(MPTCP_JOIN_OTHER_WORKER), 0);
	assert_int_equal(stats2().mptcp_redirects, 1);
	assert_int_equal(stats2().mptcp_active, 0);
	assert_int_equal(CNT(MPTCP_JOIN_OK), 1);
	assert_int_equal(stats().mptcp_subflows, 2);
	handed_before = CNT2(MPTCP_SF_HANDED);
	mc.rr = 1; /* the client's data alternates over both subflows */
	transfer(&x);
	/* Half the client's 100 chunks went over the handed subflow. */
	print_message("segments handed over: %llu\n",
		      (unsigned long long)(CNT2(MPTCP_SF_HANDED) - handed_before));
	assert_true(CNT2(MPTCP_SF_HANDED) > handed_before + 50);
	assert_int_equal(CNT(MPTCP_HANDED_IN), CNT2(MPTCP_JOIN_HANDED) + CNT2(MPTCP_SF_HANDED));
	assert_int_equal(CNT(MPTCP_DUP_BYTES), 0);
	assert_int_equal(frames_to_s_with_mptcp, 0);
	/* The worker that passed the subflow on holds nothing of it but
	 * the entry, which goes once the subflow is quiet. */
	assert_int_equal(stats2().engine_conns, 0);
	run_ms(MPTCP_REDIRECT_FIN_NS / MS(1) + 1000);
	assert_int_equal(stats2().mptcp_redirects, 0);
	teardown_all();
}

/* The client resets a subflow that worker 1 hands to worker 0; a
 * segment it sent before the RST arrives after it. Worker 1 still hands
 * it to the owner, whose engine remembers the reset and answers it as
 * the closed subflow: it is not bridged to the server. */
static void
a_handed_subflows_leftover_after_the_clients_rst_is_answered_by_the_owner(void **state)
{
	struct xfer x = { .up = 200000, .down = 0, .limit_ms = 30000 };
	const uint64_t *tc;
	uint64_t after, handed, not_owned, not_owned2;
	struct mcsf *j;

	(void)state;
	p_reset_memory_ns = MS(5000);
	setup_two_workers(MS(5), MS(3), 16);
	mc_connect();
	j = mc_join(0, 0, 0);
	assert_true(j->events & TCP_EV_CONNECTED);
	mc.rr = 1; /* the client's data alternates over both subflows */
	capture_up1 = true;
	transfer(&x);
	capture_up1 = false;
	assert_non_null(kept_up1);
	tcp_abort(j->c, now);
	run_ms(50);
	assert_int_equal(CNT(MPTCP_SF_RESET), 1);
	assert_int_equal(stats().mptcp_subflows, 1);
	/* Worker 1 keeps the 4-tuple for as long as the owner remembers
	 * the reset. */
	assert_int_equal(stats2().mptcp_redirects, 1);
	tc = mptcp_proxy_tcp_counters(P);
	after = tc[TCP_CNT_AFTER_RESET];
	handed = CNT2(MPTCP_SF_HANDED);
	not_owned = CNT(NOT_OWNED);
	not_owned2 = CNT2(NOT_OWNED);
	enqueue(kept_up1, 1, 0);
	kept_up1 = NULL;
	run_ms(50);
	assert_int_equal(CNT2(MPTCP_SF_HANDED), handed + 1);
	assert_int_equal(tc[TCP_CNT_AFTER_RESET], after + 1);
	assert_int_equal(CNT(NOT_OWNED), not_owned);
	assert_int_equal(CNT2(NOT_OWNED), not_owned2);
	assert_int_equal(frames_to_s_with_mptcp, 0);
	/* Then the entry goes, with the owner's memory. */
	run_ms(5000);
	assert_int_equal(stats2().mptcp_redirects, 0);
	teardown_all();
}

static void
without_hand_over_a_join_on_the_other_worker_is_refused_with_rst(void **state)
{
	struct mcsf *j;

	(void)state;
	setup_two_workers(MS(5), MS(3), UINT32_MAX);
	mc_connect();
	j = mc_join(0, 0, 0);
	assert_false(j->events & TCP_EV_CONNECTED);
	assert_int_equal(CNT2(MPTCP_JOIN_OTHER_WORKER), 1);
	assert_int_equal(CNT2(MPTCP_JOIN_HANDED), 0);
	assert_int_equal(stats().mptcp_subflows, 1);
	teardown_all();
}

static void
a_full_redirect_table_refuses_the_join_with_rst_and_counts_it(void **state)
{
	struct mcsf *j1, *j2;

	(void)state;
	setup_two_workers(MS(5), MS(3), 1);
	mc_connect();
	j1 = mc_join(0, 0, 0);
	assert_true(j1->events & TCP_EV_CONNECTED);
	j2 = mc_join(0, 0, 0);
	assert_false(j2->events & TCP_EV_CONNECTED);
	assert_int_equal(CNT2(MPTCP_JOIN_HANDED), 1);
	assert_int_equal(CNT2(MPTCP_REDIRECT_FULL), 1);
	assert_int_equal(stats2().mptcp_redirects, 1);
	assert_int_equal(stats().mptcp_subflows, 2);
	/* The connection goes on over the subflows it has. */
	transfer(&(struct xfer){ .up = 100000, .down = 100000, .limit_ms = 10000 });
	teardown_all();
}

/* ------------------------------------------------------------------ */
/* The stale rule (issue 16): only data a subflow sent and that went    */
/* unacknowledged past the bound makes it stale.                        */

/* Two paths of 10 and 20 ms RTT (setup()), the client connected over
 * the first and joined over the second, and 200 ms to settle. */
static void
setup_two_paths(void)
{
	setup(MS(5), MS(10));
	mc_connect();
	(void)mc_join(0, 0, 0);
	run_ms(200);
}

/* S sends total bytes; step until the client has them all (or limit). */
static void
download_until(uint64_t total, uint64_t *offs, uint64_t *hs, uint64_t limit_ms)
{
	uint64_t until = now + MS(limit_ms);

	while (now < until && mc.rcv_nxt - mc.rcv_base < total) {
		s_push(total, offs, hs);
		step();
	}
}

/* The download (download_until()) ends intact, with no subflow marked
 * stale and no data-level retransmission on the way: nothing is sent
 * twice but what the head-of-line rule sends (one chunk per left edge,
 * hol_reinject() in mptcp_sched.c). That rule answers the client's
 * window being full with its left edge on the path whose ACKs come last,
 * which a stall or a preempted proxy can bring about on healthy paths,
 * and how often depends on how the chunks fell (they are whole segments
 * of the subflow's payload). */
static void
download_with_no_stale_subflow(uint64_t total, uint64_t *offs, uint64_t *hs,
			       uint64_t limit_ms)
{
	download_until(total, offs, hs, limit_ms);
	print_message("stale %llu, data-level retransmissions %llu, reinjected %llu "
		      "in %llu head-of-line reinjections\n",
		      (unsigned long long)CNT(MPTCP_SF_STALE),
		      (unsigned long long)CNT(MPTCP_DATA_RTO),
		      (unsigned long long)CNT(MPTCP_REINJECTED),
		      (unsigned long long)CNT(MPTCP_HOL_REINJECT));
	assert_down_is(total);
	assert_int_equal(CNT(MPTCP_SF_STALE), 0);
	assert_int_equal(CNT(MPTCP_DATA_RTO), 0);
	assert_true(CNT(MPTCP_REINJECTED) <= CNT(MPTCP_HOL_REINJECT) * MPTCP_CHUNK_MAX);
}

/* The bytes each of P's subflows holds sent and unacknowledged, and
 * queued unsent, summed over its subflows. */
static void
sf_outstanding(uint32_t *sent, uint32_t *unsent)
{
	struct mptcp_meta *mt = meta();

	*sent = *unsent = 0;
	for (unsigned i = 0; mt != NULL && i < MPTCP_SUBFLOWS_MAX; i++) {
		struct mptcp_subflow *sf = mt->sf[i];
		uint32_t u;

		if (sf == NULL || sf->c == NULL)
			continue;
		u = tcp_conn_unsent(sf->c);
		*unsent += u;
		*sent += sf->tx_end_rel - u - sf->tx_una_rel;
	}
}

/* A bulk download over two paths, the server always ahead of the
 * client: the scheduler cuts its chunks in whole segments of the
 * subflow's payload (the MSS less the DSS), so data leaves in full
 * segments. Cut at the window's byte count, a chunk of n MSS went out as
 * n full segments and a short one of n times the DSS's 28 bytes: about
 * a fifth of the segments of a shaped download (perf/bench.sh mptcp),
 * each paying its headers on the path. */
static void
a_bulk_download_leaves_in_full_segments(void **state)
{
	uint64_t offs = 0, hs = FNV_INIT, total = 3000000;

	(void)state;
	setup_two_paths();
	segs_down = segs_down_at_max = 0;
	segs_down_max = 0;
	download_until(total, &offs, &hs, 20000);
	print_message("%llu data segments, %llu of them short of %u bytes; paths %llu and %llu bytes\n",
		      (unsigned long long)segs_down,
		      (unsigned long long)(segs_down - segs_down_at_max), segs_down_max,
		      (unsigned long long)path_bytes_down[0], (unsigned long long)path_bytes_down[1]);
	assert_down_is(total);
	assert_true(path_bytes_down[0] > total / 10 && path_bytes_down[1] > total / 10);
	assert_int_equal(segs_down_max, tcp_conn_data_mss(meta()->sf[0]->c));
	assert_true((segs_down - segs_down_at_max) * 100 <= segs_down);
	teardown_all();
}

/* The client's first path dies while it holds nothing of ours in
 * flight, and then the server closes. A subflow turns stale only by
 * bytes it sent, so that one stays fresh, and the DATA_FIN's first copy
 * goes out on it and is lost. Its next copies go on every subflow, and
 * the client gets it on the other path. (They went on that one subflow
 * every time, and the client waited for its DATA_FIN for good.) */
static void
a_data_fin_lost_on_a_dead_idle_path_is_sent_again_on_the_other(void **state)
{
	uint64_t offs = 0, hs = FNV_INIT, total = 200000;

	(void)state;
	setup_two_paths();
	download_until(total, &offs, &hs, 5000);
	assert_down_is(total);
	run_ms(200); /* everything acknowledged */
	path_down[0] = 1;
	(void)tcp_shutdown(app_s.conn, now);
	run_ms(3000);
	print_message("DATA_FIN at the client: %d; stale %llu\n", mc.peer_fin,
		      (unsigned long long)CNT(MPTCP_SF_STALE));
	assert_true(mc.peer_fin);
	teardown_all();
}

/* A preempted lcore: the proxy runs nothing for 300 ms (twice the stale
 * bound) while both paths stay healthy and their ACKs wait in its ring.
 * When it runs again its timers come before those ACKs, as in the app
 * (one burst per queue, then the poll). The silence it did not watch is
 * no evidence against a path: no subflow turns stale, and nothing is
 * sent again but by the head-of-line rule (download_with_no_stale_subflow()). */
static void
a_poll_gap_longer_than_the_stale_bound_marks_no_healthy_subflow_stale(void **state)
{
	uint64_t offs = 0, hs = FNV_INIT, total = 2000000;
	uint32_t sent, unsent;

	(void)state;
	setup_two_paths();
	download_until(total, &offs, &hs, 150);
	assert_true(path_bytes_down[0] > 0 && path_bytes_down[1] > 0);
	sf_outstanding(&sent, &unsent);
	assert_true(sent > 0); /* both paths busy when the lcore stops */
	p_asleep = 1;
	run_ms(300);
	p_asleep = 0;
	mptcp_proxy_poll(P, now, p_emit, NULL); /* timers before the ring */
	download_with_no_stale_subflow(total, &offs, &hs, 10000);
	teardown_all();
}

/* The other side of the rule: a path that goes silent mid-download
 * turns its subflow stale once what it sent went unacknowledged for the
 * bound (150 ms here: twice a 20 ms RTT plus 50 ms is less), within a
 * scan (10 ms) and the RTT of the last ACKs still on their way; not
 * before. The download completes on the other path. */
static void
a_path_that_goes_silent_turns_stale_within_the_bound_and_a_scan(void **state)
{
	uint64_t offs = 0, hs = FNV_INIT, total = 3000000, cut = 0, stale_at = 0;

	(void)state;
	setup_two_paths();
	for (uint64_t until = now + MS(5000); now < until && stale_at == 0;) {
		s_push(total, &offs, &hs);
		step();
		if (cut == 0 && path_bytes_down[0] > 100000 && path_bytes_down[1] > 100000) {
			cut = now;
			path_down[1] = 1;
		}
		if (cut != 0 && CNT(MPTCP_SF_STALE) > 0)
			stale_at = now;
	}
	assert_true(cut != 0 && stale_at != 0);
	print_message("stale %.3f s after the cut\n", (double)(stale_at - cut) / 1e9);
	assert_true(stale_at - cut >= MS(150));
	assert_true(stale_at - cut <= MS(150 + 10 + 20 + 1));
	download_until(total, &offs, &hs, 20000);
	assert_down_is(total);
	teardown_all();
}

/* The client's application stops reading for a second: the subflows'
 * windows close with the connection's send queue full. Everything the
 * subflows sent is acknowledged (the client has the memory for what its
 * window lets in), so neither is stale, and the download completes once
 * the application reads again. (In this engine the scheduler's chunks
 * fit the windows, so no subflow is left with bytes queued and unsent
 * and nothing in flight; the rule ignores such bytes all the same.) */
static void
a_client_that_stops_reading_for_a_second_leaves_every_subflow_fresh(void **state)
{
	uint64_t offs = 0, hs = FNV_INIT, total = 2000000;

	(void)state;
	client_rcv_buf = 64 * 1024;
	client_rcv_mem = 16 * client_rcv_buf;
	setup_two_paths();
	mc.hold = 3;
	for (uint64_t until = now + MS(1000); now < until;) {
		s_push(total, &offs, &hs);
		step();
	}
	assert_true(meta()->snd_end > meta()->snd_nxt); /* waiting for the window */
	assert_int_equal(CNT(MPTCP_SF_STALE), 0);
	mc.hold = 0;
	for (int i = 0; i < mc.nsf; i++)
		if (mc.sf[i].c != NULL)
			mc_rx(&mc.sf[i], now);
	download_until(total, &offs, &hs, 20000);
	assert_down_is(total);
	assert_int_equal(CNT(MPTCP_SF_STALE), 0);
	teardown_all();
}

/* A subflow goes while the send queue is full: the connection's limit
 * (snd_buf per subflow) falls below what the queue holds. A DATA_ACK
 * that frees a little must not announce room to the relay: the room is
 * the limit less what is held, which is none (it was computed unsigned,
 * and wrapped to 4 GB). */
static void
a_data_ack_with_the_send_queue_over_a_shrunken_limit_announces_no_room(void **state)
{
	uint64_t offs = 0, hs = FNV_INIT, total = 3000000;
	struct mptcp_opt o = { .sub = MPTCP_SUB_REMOVE_ADDR };
	struct mptcp_meta *mt;

	(void)state;
	client_rcv_buf = 64 * 1024;
	client_rcv_mem = 16 * client_rcv_buf;
	setup_two_paths();
	mc.hold = 3;
	for (uint64_t until = now + MS(500); now < until;) {
		s_push(total, &offs, &hs);
		step();
	}
	mt = meta();
	assert_non_null(mt);
	assert_true(mt->flags & MT_WANT_WRITE);
	assert_true(mt->snd_end - mt->snd_una > SNDBUF + SNDBUF / 2);
	o.u.rm_addr.n = 1;
	o.u.rm_addr.ids[0] = (uint8_t)mc.sf[1].addr_id;
	mc_send_option(&mc.sf[0], &o);
	run_ms(100);
	assert_int_equal(stats().mptcp_subflows, 1);
	assert_true(mt->snd_end - mt->snd_una > SNDBUF);
	assert_true(mt->flags & MT_WANT_WRITE);
	/* The client reads again, and its DATA_ACK (here one byte of what
	 * it now has) frees a little. */
	mc.hold = 0;
	mc_rx(&mc.sf[0], now);
	assert_true(mc.rcv_nxt > mt->snd_una);
	mptcp_meta_data_ack(mt, mt->snd_una + 1, 65535, now);
	assert_true(mt->snd_end - mt->snd_una > SNDBUF);
	assert_false(mt->flags & MT_WRITABLE_EV);
	assert_true(mt->flags & MT_WANT_WRITE);
	/* The download completes. */
	download_until(total, &offs, &hs, 30000);
	assert_down_is(total);
	teardown_all();
}

/* The client's data-level window closes (its application stops reading)
 * and opens again, and the ACK that would say so is lost (here never
 * sent). Nothing is in flight at the data level, so no DATA_ACK will
 * come on its own: the proxy probes the closed window (RFC 9293 3.8.6.1
 * at the data level, RFC 8684 3.3.6), with one byte beyond it, and the
 * answer's window lets the download resume. */
static void
a_closed_data_level_window_is_probed_and_the_download_resumes_when_it_opens(void **state)
{
	uint64_t offs = 0, hs = FNV_INIT, total = 1500000, stalled;
	struct mptcp_meta *mt;

	(void)state;
	setup_two_paths();
	mc.wnd_zero = 1;
	for (uint64_t until = now + MS(1000); now < until;) {
		s_push(total, &offs, &hs);
		step();
	}
	mt = meta();
	/* Stalled: data waits, nothing but a probe's byte in flight. */
	assert_true(mt->snd_nxt - mt->snd_una <= 1);
	assert_true(mt->snd_end > mt->snd_nxt);      /* data waits for it */
	stalled = mc.rcv_nxt;
	mc.wnd_zero = 0; /* it opens; nobody says so */
	download_until(total, &offs, &hs, 30000);
	print_message("window probes %llu; %llu bytes had arrived when it opened\n",
		      (unsigned long long)CNT(MPTCP_DATA_ZWP),
		      (unsigned long long)(stalled - mc.rcv_base));
	assert_down_is(total);
	assert_true(CNT(MPTCP_DATA_ZWP) >= 1);
	teardown_all();
}


/* The client drops at the data level every new segment its subflow
 * delivers, after acknowledging it there (its receive memory stays
 * short): the DATA_ACK stands still and each data-level retransmission
 * meets the same fate. The first comes one RTO (0.2 s here) after the
 * DATA_ACK last moved: it came after four, and the 0.8 s stall halved a
 * 100 MB download. Like TCP's RTO (RFC 6298 5.5-5.7) the timeout
 * doubles with each one (they came every RTO for as long as it lasted),
 * each doubling counted; once the client reads again and the DATA_ACK
 * moves, the timeout is the base one again. */
static void
data_level_retransmissions_back_off_until_the_data_ack_moves(void **state)
{
	uint64_t offs = 0, hs = FNV_INIT, total = 2000000, last, t;
	uint64_t at[5] = { 0 };
	unsigned n = 0;

	(void)state;
	setup(MS(5), MS(5));
	mc_connect();
	download_until(300000, &offs, &hs, 5000);
	mc.prune_on = 1;
	mc.prune_sticky = 1;
	t = now;
	last = CNT(MPTCP_DATA_RTO);
	for (uint64_t until = now + MS(30000); now < until && n < RTE_DIM(at);) {
		s_push(total, &offs, &hs);
		step();
		if (CNT(MPTCP_DATA_RTO) != last) {
			last = CNT(MPTCP_DATA_RTO);
			at[n++] = now;
		}
	}
	print_message("data-level retransmissions at %.3f %.3f %.3f %.3f %.3f virtual s, "
		      "backoffs %llu\n", (double)(at[0] - t) / 1e9, (double)(at[1] - t) / 1e9,
		      (double)(at[2] - t) / 1e9, (double)(at[3] - t) / 1e9,
		      (double)(at[4] - t) / 1e9,
		      (unsigned long long)CNT(MPTCP_DATA_RTO_BACKOFF));
	assert_int_equal(n, RTE_DIM(at));
	assert_true(at[0] - t <= MS(200 + 10 + 50)); /* an RTO, a scan, the drain */
	for (unsigned i = 2; i < n; i++) {
		uint64_t prev = at[i - 1] - at[i - 2], gap = at[i] - at[i - 1];

		/* Twice the last gap, within a scan (10 ms) either way. */
		assert_true(gap + MS(20) >= 2 * prev);
		assert_true(gap <= 2 * prev + MS(20));
	}
	assert_int_equal(CNT(MPTCP_DATA_RTO_BACKOFF), n - 1);
	/* The client reads again: the retransmission due (12.8 s after the
	 * last) is what brings the download on, and its DATA_ACK resets the
	 * timeout. */
	mc.prune_on = 0;
	mc.prune_sticky = 0;
	download_until(total, &offs, &hs, 30000);
	assert_down_is(total);
	/* It drops again: the next retransmission comes after the base
	 * timeout, not after the backed-off one. */
	total += 500000;
	download_until(total - 300000, &offs, &hs, 5000);
	mc.prune_on = 1;
	mc.prune_sticky = 1;
	t = now;
	last = CNT(MPTCP_DATA_RTO);
	while (now < t + MS(5000) && CNT(MPTCP_DATA_RTO) == last) {
		s_push(total, &offs, &hs);
		step();
	}
	print_message("after the DATA_ACK moved: retransmitted %.3f virtual s after the drops began\n",
		      (double)(now - t) / 1e9);
	assert_true(CNT(MPTCP_DATA_RTO) == last + 1);
	assert_true(now - t <= MS(200 + 10 + 50));
	mc.prune_on = 0;
	mc.prune_sticky = 0;
	download_until(total, &offs, &hs, 30000);
	assert_down_is(total);
	teardown_all();
}


/*
 * The client acknowledges one segment on its subflow and never takes it
 * at the data level, as the Linux client did in a capture of perf/bench.sh
 * mptcp's unshaped download (three segments, no MPTcpExt counter moved).
 * client_rcv_buf sets its window against the proxy's send buffer
 * (SNDBUF): above it the window stays open while the DATA_ACK stands
 * still, and the chunk at the DATA_ACK goes out again early, alone;
 * below it the window is what holds the proxy back, which a client whose
 * memory filled up shows too, and only the RTO rule may send again.
 * Returns how long, in virtual ms, the DATA_ACK stood still at the hole.
 */
static uint64_t
one_segment_dropped_after_its_ack(uint32_t rcv_buf)
{
	uint64_t offs = 0, hs = FNV_INIT, total = 3000000, hole = 0, t = 0, healed = 0;

	client_rcv_buf = rcv_buf;
	client_rcv_mem = 4 * rcv_buf;
	setup(MS(5), MS(5));
	mc_connect();
	download_until(300000, &offs, &hs, 5000);
	mc.prune_on = 1;
	for (uint64_t until = now + MS(10000); now < until && mc.rcv_nxt - mc.rcv_base < total;) {
		s_push(total, &offs, &hs);
		step();
		if (t == 0 && mc.pruned > 0) {
			t = now;
			hole = mc.rcv_nxt;
		}
		if (t != 0 && healed == 0 && mc.rcv_nxt > hole)
			healed = now;
	}
	print_message("client window %u: dropped %llu bytes; the DATA_ACK stood %.3f virtual s; "
		      "early retransmissions %llu, data-level retransmissions %llu, reinjected %llu\n",
		      rcv_buf, (unsigned long long)mc.pruned, (double)(healed - t) / 1e9,
		      (unsigned long long)CNT(MPTCP_DATA_RTO_EARLY),
		      (unsigned long long)CNT(MPTCP_DATA_RTO),
		      (unsigned long long)CNT(MPTCP_REINJECTED));
	assert_true(mc.pruned > 0);
	assert_true(t != 0 && healed != 0);
	assert_down_is(total);
	return healed - t;
}

static void
a_segment_dropped_after_its_ack_with_the_window_open_is_sent_again_early_and_alone(void **state)
{
	uint64_t stood;

	(void)state;
	stood = one_segment_dropped_after_its_ack(4 * SNDBUF);
	assert_int_equal(CNT(MPTCP_DATA_RTO_EARLY), 1);
	assert_int_equal(CNT(MPTCP_DATA_RTO), 0);
	/* One chunk, not all that was in flight. */
	assert_true(CNT(MPTCP_REINJECTED) <= MPTCP_CHUNK_MAX);
	/* Twice the smoothed RTT (the queue the send buffer builds on top
	 * of the paths' 10 ms: 62 ms in all when written), a scan (10 ms)
	 * and a round trip, where the RTO rule took 200 ms and more. */
	assert_true(stood <= MS(100));
	teardown_all();
}

static void
with_the_window_holding_the_proxy_back_no_early_retransmission_is_sent(void **state)
{
	uint64_t stood;

	(void)state;
	stood = one_segment_dropped_after_its_ack(SNDBUF / 2);
	assert_int_equal(CNT(MPTCP_DATA_RTO_EARLY), 0);
	assert_int_equal(CNT(MPTCP_DATA_RTO), 1);
	assert_true(stood >= MS(200));
	teardown_all();
}

/* The round-trip time of both paths jumps from 20 ms to 120 ms (a queue
 * builds up: a thousand connections start, as in tests/e2e/test_mptcp.sh).
 * On each subflow, once its first ACKs at 120 ms arrived (its SRTT lags,
 * at 50 ms, its RTTVAR grew to 40 ms and more), the client's uplink on
 * that path stalls for 200 ms, as a cellular uplink's scheduling may:
 * longer than twice the lagging SRTT plus 50 ms, within SRTT + 4 RTTVAR.
 * The paths are healthy: no subflow is marked stale, and nothing is
 * sent again but by the head-of-line rule (download_with_no_stale_subflow()). */
static void
a_round_trip_time_that_jumps_with_its_variation_marks_no_subflow_stale(void **state)
{
	uint64_t offs = 0, hs = FNV_INIT, total = 3000000, held[2] = { 0, 0 };
	struct mptcp_meta *mt;

	(void)state;
	setup(MS(10), MS(10));
	mc_connect();
	(void)mc_join(0, 0, 0);
	run_ms(200);
	download_until(500000, &offs, &hs, 5000);
	assert_int_equal(CNT(MPTCP_SF_STALE), 0);
	path_delay[0] = path_delay[1] = MS(60);
	mt = meta();
	for (uint64_t until = now + MS(1000); now < until;) {
		s_push(total, &offs, &hs);
		step();
		for (unsigned i = 0; i < 2; i++) {
			struct tcp_conn_info ci;

			tcp_conn_get_info(mt->sf[i]->c, &ci);
			if (held[i] == 0 && ci.srtt_ns >= MS(50)) {
				held[i] = now;
				up_held_until[i] = now + MS(200);
				print_message("subflow %u: SRTT %.1f ms, RTTVAR %.1f ms when its "
					      "uplink stalls\n", i, (double)ci.srtt_ns / 1e6,
					      (double)ci.rttvar_ns / 1e6);
			}
		}
	}
	assert_true(held[0] != 0 && held[1] != 0);
	download_with_no_stale_subflow(total, &offs, &hs, 30000);
	teardown_all();
}


/* The connection closes with the last bytes path 1 carried not yet
 * acknowledged on their subflow (the client's ACKs on path 1 were lost;
 * its DATA_ACKs came on path 0). The proxy closes that subflow: its FIN
 * follows those bytes, and the client's next ACK on path 1 covers both.
 * That ACK acknowledges the bytes: the subflow is not left with them
 * outstanding, and not marked stale while the client keeps it open. */
static void
an_ack_covering_a_subflows_fin_and_its_last_bytes_acknowledges_the_bytes(void **state)
{
	uint64_t offs = 0, hs = FNV_INIT, total = 400000;
	struct mptcp_meta *mt;
	struct mptcp_subflow *sf1;

	(void)state;
	setup(MS(5), MS(5));
	mc_connect();
	(void)mc_join(0, 0, 0);
	mc.keep_subflows = 1;
	run_ms(100);
	mt = meta();
	sf1 = mt->sf[1];
	download_until(total - 60000, &offs, &hs, 5000);
	up_lost[1] = 1;
	download_until(total, &offs, &hs, 5000);
	assert_down_is(total);
	assert_true(mptcp_sf_sent_unacked(sf1) > 0);
	up_lost[1] = 0;
	/* Both sides close: the DATA_FINs cross on path 0. */
	(void)tcp_shutdown(app_s.conn, now);
	mc.fin_want = 1;
	run_ms(300);
	print_message("subflow 1: %u bytes sent and unacknowledged, stale %llu\n",
		      mptcp_sf_sent_unacked(sf1), (unsigned long long)CNT(MPTCP_SF_STALE));
	assert_true(mc.fin_acked && mc.peer_fin);
	assert_int_equal(mptcp_sf_sent_unacked(sf1), 0);
	assert_int_equal(CNT(MPTCP_SF_STALE), 0);
	teardown_all();
}


/* The client's machine stops for 250 ms mid-download (a thousand
 * connections on two cores, as in tests/e2e/test_mptcp.sh): every
 * subflow goes silent at once. That is no evidence against a path, and
 * the others could not carry the bytes any better: no subflow is marked
 * stale, no data-level retransmission fires, and the download
 * completes (download_with_no_stale_subflow()). The RTT samples of the
 * first ACKs after the wake include the stall, and the scheduler's
 * order of the subflows turns over for a while. */
static void
a_client_that_stalls_on_every_path_at_once_leaves_its_subflows_fresh(void **state)
{
	uint64_t offs = 0, hs = FNV_INIT, total = 2000000;
	uint32_t sent, unsent;

	(void)state;
	setup_two_paths();
	download_until(500000, &offs, &hs, 5000);
	sf_outstanding(&sent, &unsent);
	assert_true(sent > 0);
	c_asleep = 1;
	for (uint64_t until = now + MS(250); now < until;) {
		s_push(total, &offs, &hs);
		step();
	}
	c_asleep = 0;
	download_with_no_stale_subflow(total, &offs, &hs, 10000);
	teardown_all();
}

/* The intercept rules as the proxy matches them (by family, masked
 * words) against the rule read bit by bit: IPv4 and IPv6 prefixes of
 * every length, host bits set in the rule, lengths past the family's,
 * ports, the unknown port of a fragment, and a family that no rule of
 * the other names; addresses drawn near each rule's prefix and at
 * random. */
static int
ref_rule_match(const struct mptcp_proxy_rule *r, uint8_t family, const uint8_t *a, int port)
{
	unsigned bits = r->family == 4 ? 32 : 128;
	unsigned plen = r->plen > bits ? bits : r->plen;

	if (r->family != family || (r->port != 0 && port >= 0 && r->port != port))
		return 0;
	for (unsigned b = 0; b < plen; b++)
		if (((a[b / 8] ^ r->addr[b / 8]) >> (7 - b % 8)) & 1)
			return 0;
	return 1;
}

static void
intercept_rules_match_as_the_rule_reads_bit_by_bit(void **state)
{
	static struct mptcp_proxy_rule in[MPTCP_PROXY_MAX_RULES];
	static struct proxy_rules rc[MPTCP_PROXY_MAX_RULES + 1];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	unsigned hits = 0, tries = 0;

	(void)state;
	for (unsigned i = 0; i < RTE_DIM(in); i++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		in[i].family = i % 2 ? 6 : 4;
		in[i].plen = (uint8_t)(i % 2 ? (i * 5) % 131 : (i * 3) % 35); /* past 32 and 128 too */
		in[i].port = (uint16_t)(i % 5 == 0 ? 443 : 0);
		for (unsigned k = 0; k < 16; k++)
			in[i].addr[k] = (uint8_t)(x >> (k % 8 * 8)) ^ (uint8_t)k;
	}
	/* rc[n]: the first n rules. */
	for (unsigned n = 1; n <= RTE_DIM(in); n++) {
		rc[n] = rc[n - 1];
		proxy_rules_add(&rc[n], &in[n - 1]);
	}
	for (unsigned n = 1; n <= RTE_DIM(in); n += 21)
		for (unsigned t = 0; t < 4000; t++) {
			const struct mptcp_proxy_rule *near = &in[t % n];
			uint8_t a[16];
			uint8_t fam = t % 3 ? near->family : (uint8_t)(10 - near->family);
			int port = t % 7 == 0 ? -1 : t % 7 == 1 ? 443 : 80;
			int want = 0;

			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			memcpy(a, near->addr, 16);
			if (t % 2) /* one bit flipped, anywhere */
				a[(x >> 8) % 16] ^= (uint8_t)(1u << (x % 8));
			else if (t % 4 == 2)
				for (unsigned k = 0; k < 16; k++)
					a[k] = (uint8_t)(x >> (k % 8 * 8));
			if (fam == 4)
				memset(a + 4, 0, 12); /* pkt_meta's layout */
			for (unsigned i = 0; i < n && !want; i++)
				want = ref_rule_match(&in[i], fam, a, port);
			assert_int_equal(proxy_rules_match(&rc[n], fam, a, port), want);
			hits += (unsigned)want;
			tries++;
		}
	/* Both answers came up often enough to count. */
	assert_true(hits > tries / 10);
	assert_true(hits < tries - tries / 10);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(intercept_rules_match_as_the_rule_reads_bit_by_bit),
		cmocka_unit_test(a_transfer_both_ways_over_one_subflow_arrives_whole_and_the_server_sees_plain_tcp),
		cmocka_unit_test(an_idle_subflow_gives_its_window_back_and_an_upload_after_it_arrives_whole),
		cmocka_unit_test(an_upload_over_two_subflows_whose_windows_were_taken_back_arrives_whole),
		cmocka_unit_test(the_server_is_asked_for_segments_that_leave_on_a_subflow_whole),
		cmocka_unit_test(a_data_fin_from_the_client_reaches_the_server_as_fin_and_the_servers_fin_the_client_as_data_fin),
		cmocka_unit_test(data_over_two_subflows_is_reassembled_in_dsn_order_when_the_second_delivers_first),
		cmocka_unit_test(a_join_with_a_wrong_hmac_is_answered_with_rst_and_counted),
		cmocka_unit_test(a_join_with_an_unknown_token_is_answered_with_rst_and_counted),
		cmocka_unit_test(data_without_dss_on_the_first_subflow_falls_back_counted_with_the_stream_intact),
		cmocka_unit_test(data_without_dss_falls_back_whole_while_a_join_is_still_half_open),
		cmocka_unit_test(a_joins_data_in_the_burst_that_falls_back_never_joins_the_stream),
		cmocka_unit_test(a_held_segment_that_in_order_data_overlaps_in_part_goes_on_from_where_that_ended),
		cmocka_unit_test(an_rst_that_the_engine_rejects_does_not_drop_the_mappings_of_unacknowledged_data),
		cmocka_unit_test(a_fallback_ignores_bytes_another_subflow_mapped_ahead),
		cmocka_unit_test(data_without_dss_after_mapped_data_falls_back_where_the_mappings_ended),
		cmocka_unit_test(an_add_addr_from_the_client_is_echoed_with_its_id_address_and_port_and_no_hmac),
		cmocka_unit_test(dss_checksums_the_client_asks_for_are_verified_and_sent_with_the_stream_intact),
		cmocka_unit_test(a_checksum_failure_on_the_only_subflow_sends_mp_fail_and_delivers_none_of_that_mapping),
		cmocka_unit_test(fallback_on_data_without_dss_sends_mp_fail_when_the_mss_has_room),
		cmocka_unit_test(a_lost_mp_fail_after_the_fallback_is_sent_again),
		cmocka_unit_test(a_segment_spanning_two_mappings_is_split_between_them),
		cmocka_unit_test(a_mapping_repeated_on_every_segment_is_recorded_once),
		cmocka_unit_test(an_upload_in_bursts_is_read_in_runs_where_the_mappings_allow),
		cmocka_unit_test(the_dss_of_segments_read_as_one_run_is_one_mapping_or_none),
		cmocka_unit_test(bytes_mapped_twice_on_two_subflows_reach_the_server_once),
		cmocka_unit_test(thirty_two_bit_dsns_are_expanded_across_the_2_32_boundary),
		cmocka_unit_test(a_subflow_reset_mid_transfer_has_its_data_reinjected_on_the_other),
		cmocka_unit_test(the_scheduler_prefers_the_lower_rtt_subflow),
		cmocka_unit_test(a_bulk_download_leaves_in_full_segments),
		cmocka_unit_test(a_backup_subflow_carries_data_only_once_no_other_is_left),
		cmocka_unit_test(remove_addr_resets_the_subflows_of_that_address_and_their_data_goes_out_on_the_others),
		cmocka_unit_test(mp_fastclose_from_the_client_resets_every_subflow_and_the_server_leg),
		cmocka_unit_test(a_relay_burst_beyond_one_subflows_buffer_reaches_the_client_whole),
		cmocka_unit_test(a_slow_subflow_holding_the_window_edge_has_its_bytes_sent_again_on_the_fast_one_and_is_penalised),
		cmocka_unit_test(a_byte_the_client_dropped_after_its_path_died_is_sent_again_at_the_data_level),
		cmocka_unit_test(the_data_level_retransmission_after_a_path_died_does_not_wait_for_the_dead_paths_rtt),
		cmocka_unit_test(a_joins_first_segment_lost_does_not_reach_the_client_as_a_gap),
		cmocka_unit_test(an_upload_whose_tail_waits_for_the_server_leg_arrives_whole_after_the_subflows_closed),
		cmocka_unit_test(a_join_that_lands_on_the_worker_not_owning_its_token_is_handed_over_and_its_subflow_carries_data),
		cmocka_unit_test(without_hand_over_a_join_on_the_other_worker_is_refused_with_rst),
		cmocka_unit_test(a_full_redirect_table_refuses_the_join_with_rst_and_counts_it),
		cmocka_unit_test(a_handed_subflows_leftover_after_the_clients_rst_is_answered_by_the_owner),
		cmocka_unit_test(a_data_fin_lost_on_a_dead_idle_path_is_sent_again_on_the_other),
		cmocka_unit_test(a_poll_gap_longer_than_the_stale_bound_marks_no_healthy_subflow_stale),
		cmocka_unit_test(a_path_that_goes_silent_turns_stale_within_the_bound_and_a_scan),
		cmocka_unit_test(a_client_that_stops_reading_for_a_second_leaves_every_subflow_fresh),
		cmocka_unit_test(a_data_ack_with_the_send_queue_over_a_shrunken_limit_announces_no_room),
		cmocka_unit_test(a_closed_data_level_window_is_probed_and_the_download_resumes_when_it_opens),
		cmocka_unit_test(data_level_retransmissions_back_off_until_the_data_ack_moves),
		cmocka_unit_test(a_segment_dropped_after_its_ack_with_the_window_open_is_sent_again_early_and_alone),
		cmocka_unit_test(with_the_window_holding_the_proxy_back_no_early_retransmission_is_sent),
		cmocka_unit_test(a_round_trip_time_that_jumps_with_its_variation_marks_no_subflow_stale),
		cmocka_unit_test(an_ack_covering_a_subflows_fin_and_its_last_bytes_acknowledges_the_bytes),
		cmocka_unit_test(a_client_that_stalls_on_every_path_at_once_leaves_its_subflows_fresh),
	};

	if (test_eal_init("mptcp_conn") != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
