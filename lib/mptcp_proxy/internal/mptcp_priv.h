/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MPTCP_PRIV_H
#define MPTCP_PRIV_H

/*
 * The MPTCP connection level (meta) and its subflows, shared by:
 *   mptcp_conn.c     the meta-connection: data-level receive (mappings to
 *                    DSNs, reassembly across subflows, DATA_FIN) and send
 *                    (a DSN-ordered queue kept until DATA_ACK), the
 *                    endpoint the relay splices, fast close
 *   mptcp_subflow.c  subflows: lib/tcp hooks (options in and out, the
 *                    shared window), MP_CAPABLE and MP_JOIN handshakes,
 *                    path management (ADD_ADDR, REMOVE_ADDR, MP_PRIO)
 *   mptcp_sched.c    which subflow carries the next chunk (lowest RTT
 *                    with room, backups last), reinjection, LIA
 *   mptcp_token.c    the worker's token table
 *
 * Rules: hooks (called inside lib/tcp's entry points) only record; what
 * needs the engine (sending, aborting, relaying) happens in the subflow's
 * event callback or in mptcp_flush(), run after every input burst and
 * poll for each meta marked dirty.
 */

#include <stdint.h>

#include <rte_mbuf.h>

#include "mptcp_crypto.h"
#include "mptcp_options.h"
#include "tcp.h"

struct mptcp_proxy;
struct proxy_pair;

/** Subflows per MPTCP connection, the first included. */
#define MPTCP_SUBFLOWS_MAX 8
/** Receive mappings a subflow remembers (the kernel sends one per skb). */
#define MPTCP_RX_MAPS 16
/** Send mappings a subflow keeps until its peer acknowledged them. */
#define MPTCP_TX_MAPS 32
/** Largest chunk the scheduler hands one subflow (one DSS mapping). */
#define MPTCP_CHUNK_MAX 32768u
/** Option bytes the DSS of each of our data segments takes: a 32-bit
 * DATA_ACK and a mapping with a 64-bit DSN (22, padded; 24 with the
 * checksum), as Linux sends its own. The 64-bit DATA_ACK it had took 4
 * bytes more off every segment's payload (1,420 against 1,424). */
#define MPTCP_DSS_DATA_LEN 24u
/** MSS room announced to MPTCP clients for the DSS a client puts on a
 * segment it sized for none (mptcp_fallback_mss_room): a 64-bit
 * DATA_ACK and mapping, with the checksum. */
#define MPTCP_FALLBACK_MSS_ROOM 28u

/* Object kinds given to lib/tcp as a connection's callback argument: the
 * first byte of a struct proxy_leg is PX_OBJ_LEG, of a subflow
 * PX_OBJ_SUBFLOW. */
#define PX_OBJ_LEG     1
#define PX_OBJ_SUBFLOW 2

struct mptcp_map {
	uint64_t dsn;   /* data sequence of the first byte */
	uint32_t ssn;   /* relative subflow sequence of the first byte */
	uint16_t len;   /* bytes mapped (DATA_FIN not counted) */
	uint16_t flags; /* MPTCP_MAP_* */
	uint16_t csum;  /* its DSS checksum, when checksums are in use */
};
#define MPTCP_MAP_FIN 0x1 /* the DATA_FIN follows the mapped bytes */

/* Subflow flags. */
#define SF_MPC        0x0001 /* the first subflow (MP_CAPABLE) */
#define SF_JOIN       0x0002 /* joined (MP_JOIN) */
#define SF_ESTAB      0x0004 /* handshake done (and a join verified) */
#define SF_BACKUP     0x0008 /* the peer asked: backup only */
#define SF_STALE      0x0010 /* timeouts in a row: not scheduled */
#define SF_DEAD       0x0020 /* reset, removed or closing: not scheduled */
#define SF_JOIN_BAD   0x0040 /* third ACK's HMAC wrong: reset it */
#define SF_ACK_NOW    0x0080 /* a pure ACK is owed (join's fourth ACK,
                                DATA_ACK, DATA_FIN) */
#define SF_CLOSED     0x0100 /* the engine said CLOSED */
#define SF_SAW_DSS    0x0200 /* a DSS or MP_CAPABLE mapping arrived */
#define SF_RESET      0x0400 /* reset it (from mptcp_flush()) */
#define SF_JOIN_OK    0x0800 /* the join's third ACK HMAC checked */
#define SF_FAIL_NOW   0x1000 /* a checksum failed: MP_FAIL on the next ACK
				(on the RST when SF_RESET too) */
#define SF_JOIN_SEEN  0x2000 /* the client holds the join fully
				established: it acknowledged our data on
				it, or sent its own (mptcp_sf_join_unseen()) */

struct mptcp_subflow {
	uint8_t obj;                /* PX_OBJ_SUBFLOW */
	uint8_t id;                 /* index in meta->sf[] */
	uint8_t addr_id;            /* the peer's address ID */
	uint8_t rst_reason;         /* MP_TCPRST reason of our RST */
	uint16_t flags;             /* SF_* */
	uint16_t mss;
	struct mptcp_meta *meta;
	struct tcp_conn *c;
	uint32_t iss, irs;          /* relative sequence base, both ways */
	uint32_t nonce_local, nonce_remote; /* MP_JOIN */
	/* Receive: mappings the peer announced, newest at rx_head - 1. */
	uint32_t rx_head;
	struct mptcp_map rx[MPTCP_RX_MAPS];
	/* Where the bytes mappings placed end: the relative subflow sequence
	 * after the last mapped byte delivered, and its DSN. Data without a
	 * mapping that starts there, when that DSN is the connection's next,
	 * is the stream continuing in plain TCP (RFC 8684 3.7). */
	uint32_t rx_next_rel;
	uint64_t rx_next_dsn;
	/* DSS checksums (MT_CSUM): the bytes of the mapping being received
	 * are held until it is whole and its checksum verified. */
	struct mptcp_map csum_map;  /* the mapping summed (len 0: none) */
	struct mptcp_csum csum;
	uint32_t csum_got;          /* its bytes held so far */
	struct rte_mbuf *held_head, *held_tail;
	uint64_t fail_dsn;          /* MP_FAIL to send (SF_FAIL_NOW) */
	uint64_t fail_at;           /* last sent (px->tick_ns); see
				     * mptcp_sf_fail_arm() */
	uint8_t fail_sends;         /* how often since it was armed */
	/* Send: mappings of the bytes handed to the engine, oldest first;
	 * tx_una_rel is how far the peer acknowledged (relative), tx_end_rel
	 * the relative sequence after the last byte handed over. */
	uint32_t tx_first, tx_n;
	uint32_t tx_una_rel, tx_end_rel;
	uint32_t short_end_rel;     /* after the last segment sent short of
				     * a full one (mptcp_sched.c) */
	uint64_t quiet_from;        /* on the watched clock: the subflow
				     * last had nothing it sent unacknowledged,
				     * or tx_una_rel last advanced */
	uint64_t penal_ns;          /* last penalised for blocking the
				     * client's window (mptcp_sched.c) */
	struct mptcp_map tx[MPTCP_TX_MAPS];
	struct mptcp_subflow *next_free;
};

/* Meta flags. */
#define MT_ESTAB       0x0001 /* keys known: data may flow */
#define MT_FALLBACK    0x0002 /* plain TCP on the first subflow */
#define MT_RCV_FIN     0x0004 /* the peer's DATA_FIN seen (rcv_fin_dsn) */
#define MT_RCV_FIN_IN  0x0008 /* ... and every byte before it: delivered */
#define MT_SND_FIN     0x0010 /* the relay asked: DATA_FIN after snd_end */
#define MT_SND_FIN_ACK 0x0020 /* the peer acknowledged our DATA_FIN */
#define MT_CLOSING     0x0040 /* subflows are being shut down */
#define MT_ABORTED     0x0080 /* reset: subflows reset with MP_FASTCLOSE */
#define MT_DIRTY       0x0100 /* on the proxy's dirty list */
#define MT_WANT_WRITE  0x0200 /* the relay found no send room */
#define MT_READABLE    0x0400 /* new in-order bytes for the relay */
#define MT_PEER_FIN_EV 0x0800 /* tell the relay: peer closed */
#define MT_WRITABLE_EV 0x1000 /* tell the relay: send room again */
#define MT_CSUM        0x2000 /* DSS checksums in use (the client asked) */
#define MT_FASTCLOSE_RCVD 0x4000 /* the peer sent MP_FASTCLOSE: reset */
#define MT_FREED       0x8000 /* back on the free list */
#define MT_INF_SENT    0x10000 /* fallback: an infinite mapping went out */
#define MT_INF_ACKED   0x20000 /* ... and the client acknowledged it */
#define MT_ABORT_NOW   0x80000 /* reset the connection (from mptcp_flush()) */
#define MT_MSS_ROOM    0x100000 /* the MSS we announced leaves room for
				    the client's infinite mapping: a
				    fallback on data without DSS tells it
				    with MP_FAIL */
#define MT_CSUM_FAILED 0x40000 /* MP_FAIL sent on the only subflow: the
				  client's infinite mapping must start at
				  rcv_nxt, else the connection is reset */

struct mptcp_meta {
	struct mptcp_proxy *px;
	struct proxy_pair *pair;    /* NULL once the pair let go of it */
	uint32_t flags;             /* MT_* */
	uint16_t rcv_mss;
	uint8_t nsf;                /* subflows in sf[] not yet released */
	uint8_t fallback_cause;     /* enum of MPTCP_CNT_FALLBACK_* */
	struct mptcp_key local;     /* our key, token, IDSN */
	uint64_t key_remote;
	uint64_t idsn_remote;
	uint32_t token_remote;
	/* Receive (client to server): rcv_nxt is the next DSN expected. */
	uint64_t rcv_nxt;
	uint64_t rcv_fin_dsn;
	struct rte_mbuf *rq_head, *rq_tail;   /* in order, for the relay */
	struct rte_mbuf *ooo_head, *ooo_tail; /* ahead of rcv_nxt, by DSN */
	uint32_t rq_bytes, ooo_bytes;
	uint32_t rcv_buf;
	/* Send (server to client): [snd_una, snd_end) is held in sq, of
	 * which [snd_una, snd_nxt) was handed to subflows. */
	uint64_t snd_una, snd_nxt, snd_end;
	uint64_t snd_wnd_end;       /* the client's data-level right edge:
				     * highest DATA_ACK + window seen */
	uint64_t reinj_lo, reinj_hi; /* to send again (empty: lo == hi) */
	uint64_t hol_dsn;           /* the left edge last reinjected because
				     * it held up the client's window */
	struct rte_mbuf *sq_head, *sq_tail;
	struct rte_mbuf *sq_cur;    /* where the last clone started */
	uint64_t sq_cur_dsn;        /* the DSN of sq_cur's first byte */
	uint32_t snd_buf;
	uint32_t want_space;
	uint64_t fin_sent_ns;
	uint64_t data_ack_ns;       /* snd_una last advanced */
	uint64_t drto_from;         /* the data-level retransmission timer
				     * started (watched clock): snd_una
				     * advanced, nothing was outstanding,
				     * or it last fired */
	uint32_t drto_n;            /* its doublings since snd_una moved */
	uint8_t drto_early;         /* the early one-chunk retransmission of
				     * this standstill went out */
	uint64_t zwp_at;            /* the next data-level window probe
				     * (0: not blocked) */
	uint32_t zwp_n;             /* probes since data last moved past one */
	uint64_t zwp_nxt;           /* snd_nxt after the last probe */
	uint32_t inf_end_rel;       /* fallback: the relative subflow sequence
				     * after the segment that carried the
				     * infinite mapping */
	struct mptcp_subflow *sf[MPTCP_SUBFLOWS_MAX];
	/* The client's last ADD_ADDR, to echo (RFC 8684 3.4.1) on the next
	 * pure ACK of the subflow it came on (echo.sub 0: none owed). */
	struct mptcp_opt echo;
	struct tcp_cc_group cc;
	struct mptcp_meta *dirty_next;
	struct mptcp_meta *next;    /* free list, or the active list */
	struct mptcp_meta *prev;
	uint32_t tok_next;          /* token table chain */
};

/* mptcp_token.c: a per-proxy open hash of local tokens. */
struct mptcp_token_table {
	uint32_t mask;
	uint32_t *bucket; /* meta index + 1, 0: empty chain */
};

/* mptcp_conn.c */
struct mptcp_meta *mptcp_meta_new(struct mptcp_proxy *px, struct proxy_pair *p,
				  uint64_t now);
/* The client's held SYN: set the meta up for the SYN-ACK's MP_CAPABLE. */
int mptcp_meta_open(struct mptcp_meta *mt, const struct mptcp_opt *mpc,
		    struct tcp_conn *c, uint64_t now);
void mptcp_meta_mark(struct mptcp_meta *mt);
/* MP_FAIL at dsn on the next ACK, and again every MPTCP_FAIL_RESEND_NS
 * (at most MPTCP_FAIL_SENDS in all) until the client answers: the ACK
 * that carries it may be lost (mptcp_subflow.c). */
#define MPTCP_FAIL_SENDS 4
#define MPTCP_FAIL_RESEND_NS 200000000ull
void mptcp_sf_fail_arm(struct mptcp_subflow *sf, uint64_t dsn);
void mptcp_sf_fail_tick(struct mptcp_subflow *sf, uint64_t now);
void mptcp_flush(struct mptcp_proxy *px, uint64_t now);
void mptcp_meta_rx_segs(struct mptcp_subflow *sf, uint64_t now);
void mptcp_meta_data_ack(struct mptcp_meta *mt, uint64_t ack, uint32_t wnd, uint64_t now);
void mptcp_meta_peer_data_fin(struct mptcp_meta *mt, uint64_t fin_dsn);
void mptcp_meta_abort(struct mptcp_meta *mt, uint64_t now);
void mptcp_meta_send_data_fin(struct mptcp_meta *mt, uint64_t now);
struct rte_mbuf *mptcp_sq_clone(struct mptcp_meta *mt, uint64_t dsn, uint32_t len);
void mptcp_meta_fallback(struct mptcp_meta *mt, unsigned cause);
void mptcp_meta_sf_gone(struct mptcp_meta *mt, struct mptcp_subflow *sf,
			uint64_t now);
void mptcp_meta_tick(struct mptcp_proxy *px, uint64_t now);
/* The watched clock now: px->watch_ns plus the time since the last tick,
 * at most STALE_GAP_NS (a proxy that did not run saw no ACK). */
uint64_t mptcp_watch_ns(const struct mptcp_proxy *px, uint64_t now);
/* Bytes sf sent at least once that its peer has not acknowledged (those
 * queued and never sent are not counted). */
uint32_t mptcp_sf_sent_unacked(const struct mptcp_subflow *sf);
uint32_t mptcp_meta_rcv_space(const struct mptcp_meta *mt);
extern const struct mptcp_proxy_endpoint_ops mptcp_meta_endpoint;

/* mptcp_subflow.c */
extern const struct tcp_conn_hooks mptcp_subflow_hooks;
struct mptcp_subflow *mptcp_sf_new(struct mptcp_meta *mt, struct tcp_conn *c);
/* The engine connection of a subflow: segment boundaries kept, bases. */
void mptcp_sf_attach(struct mptcp_subflow *sf, struct tcp_conn *c);
void mptcp_sf_event(struct mptcp_subflow *sf, struct tcp_conn *c, uint32_t ev,
		    uint64_t now);
/* An MP_JOIN SYN: 0 consumed (accepted or answered with RST), -1 pass. */
int mptcp_join_syn(struct mptcp_proxy *px, struct rte_mbuf *m,
		   const struct mptcp_opt *join, uint64_t now);
uint64_t mptcp_sf_dsn_of(const struct mptcp_subflow *sf, uint32_t rel,
			 uint32_t *left);
/* The mapping that covers relative subflow sequence rel (NULL: none). */
const struct mptcp_map *mptcp_sf_map_of(const struct mptcp_subflow *sf, uint32_t rel);
/* Free the bytes a subflow holds for its checksum; how many. */
uint32_t mptcp_sf_held_free(struct mptcp_subflow *sf);

/* mptcp_sched.c */
void mptcp_sched_push(struct mptcp_meta *mt, uint64_t now);
void mptcp_sched_reinject_sf(struct mptcp_meta *mt, struct mptcp_subflow *sf);
bool mptcp_sched_probe(struct mptcp_meta *mt, uint64_t now);
uint64_t mptcp_sf_stale_bound(const struct tcp_conn *c);

/* mptcp_token.c */
int mptcp_token_init(struct mptcp_token_table *t, uint32_t n, int socket);
void mptcp_token_fini(struct mptcp_token_table *t);
struct mptcp_meta *mptcp_token_find(struct mptcp_proxy *px, uint32_t token);
void mptcp_token_add(struct mptcp_proxy *px, struct mptcp_meta *mt);
void mptcp_token_del(struct mptcp_proxy *px, struct mptcp_meta *mt);

/* A join the client may still hold half established (SF_JOIN_SEEN not
 * set): until the client shows it holds the join, nothing but one
 * segment at its first sequence goes out on it (mptcp_sched.c,
 * sf_budget()). */
static inline bool
mptcp_sf_join_unseen(const struct mptcp_subflow *sf)
{
	return (sf->flags & (SF_JOIN | SF_JOIN_SEEN)) == SF_JOIN;
}

/* ... and that segment was handed over: nothing more goes on it, not
 * even a pure ACK (it would carry the next sequence). */
static inline bool
mptcp_sf_join_waits(const struct mptcp_subflow *sf)
{
	return mptcp_sf_join_unseen(sf) && sf->tx_end_rel != 1;
}

/* Relative sequence arithmetic (mod 2^32). */
static inline int
rel_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

#endif /* MPTCP_PRIV_H */
