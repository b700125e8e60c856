/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_TCP_IMPL_H
#define SLUICE_TCP_IMPL_H

/* Types and internal functions shared by the lib/tcp sources. */

#include <assert.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_branch_prediction.h>
#include <rte_hash.h>

#include "tcp.h"
#include "tcp_cc.h"
#include "tcp_seg.h"

/* A byte queue held as a list of single mbuf segments linked by ->next.
 * Each segment's data_len counts; head/nb_segs/pkt_len of the first mbuf
 * of a packet are not kept up to date. Besides the bytes, the queue
 * counts what holding them costs: mbufs, and their buffers' sizes
 * (buf_len; Linux calls it truesize), which a peer sending tiny segments
 * can make many times the byte count. */
struct tcp_mq {
	struct rte_mbuf *head, *tail;
	uint32_t bytes;
	uint32_t mbufs;
	uint32_t mem;
};

void tcp_mq_append(struct tcp_mq *q, struct rte_mbuf *chain);
/* Copy the queue's bytes into as few fresh mbufs of mp as hold them,
 * each filled from its buffer's start, and free the old ones. Mbufs
 * already full are moved, not copied. Returns 0, or -1 when mp ran dry
 * (the queue is then intact, partly collapsed). Segment boundaries are
 * not kept: only for a queue under memory pressure. */
int tcp_mq_collapse(struct tcp_mq *q, struct rte_mempool *mp);
/* Drop n bytes off the front; whole mbufs are freed, through e's burst
 * batch when e is given and in a burst (tcp_free_seg()). */
void tcp_mq_drop_front(struct tcp_mq *q, uint32_t n, struct tcp_engine *e);
void tcp_mq_free(struct tcp_mq *q);
/* Append q2 to q and leave q2 empty; a small single segment is copied
 * into q's last mbuf when it fits (tcp_mq_concat_raw() never copies),
 * and that mbuf loses the ol_flags bits in clear (a payload sum it kept
 * no longer holds). */
void tcp_mq_concat(struct tcp_mq *q, struct tcp_mq *q2, uint64_t clear);
void tcp_mq_concat_raw(struct tcp_mq *q, struct tcp_mq *q2);
/* Keep only bytes [off, off+len) of a segment chain; free the rest.
 * Returns the new head (NULL if len is 0) and its last segment in *tail. */
struct rte_mbuf *tcp_chain_slice_walk(struct rte_mbuf *m, uint32_t off, uint32_t len,
				      struct rte_mbuf **tail);

/* tcp_chain_slice_walk(), inline for what nearly every received segment
 * is: one mbuf that keeps some of its bytes (the walk's call, with the
 * registers it saves for the frees, was about 55 instructions a
 * segment). */
static inline struct rte_mbuf *
tcp_chain_slice(struct rte_mbuf *m, uint32_t off, uint32_t len, struct rte_mbuf **tail)
{
	if (m != NULL && m->next == NULL && len != 0 && off < m->data_len &&
	    len <= m->data_len - off) {
		m->data_off = (uint16_t)(m->data_off + off);
		m->data_len = (uint16_t)len;
		m->pkt_len = len;
		m->nb_segs = 1;
		*tail = m;
		return m;
	}
	return tcp_chain_slice_walk(m, off, len, tail);
}

/* Hash key: the 4-tuple from our side. Aligned because rte_jhash reads
 * it in 32-bit words. */
struct tcp_key {
	uint8_t laddr[16];
	uint8_t raddr[16];
	uint16_t lport, rport;
	uint8_t family;
	uint8_t pad[3];
} __rte_aligned(8);

/* The connection cache: a frame's slot by its ports (a hash that tells
 * the two legs of a proxied connection apart: their ports are swapped). */
#define TCP_HOT_BITS 6
#define TCP_HOT_SLOTS (1u << TCP_HOT_BITS)

/* Connections of one input burst whose ACK, output, timer and events can
 * wait for its end; past that many, the others act as without a burst. */
#define TCP_BURST_ACKS 64
/* Mbufs freed in a burst that wait to go back to their pool together. */
#define TCP_DEAD_MAX 64

static inline uint32_t
tcp_hot_slot(uint16_t lport, uint16_t rport)
{
	return ((uint32_t)lport << 16 | rport) * 0x9e3779b1u >> (32 - TCP_HOT_BITS);
}

/* An out-of-order range of received bytes (RFC 2018 reports them). */
struct tcp_ooo {
	uint32_t seq;
	struct tcp_mq q;
};
#define TCP_OOO_MAX 6

/*
 * The retransmission queue: one record per segment sent and not yet
 * cumulatively acknowledged, in sequence order. Records come from a pool
 * the engine preallocates (tcp_engine_params.max_tx_segments); a
 * connection holds only the head and tail indices. Flags carry the RFC
 * 6675 scoreboard (SACKed) and RFC 8985 state (lost, retransmitted), and
 * xmit_ns the last transmission time that RACK compares.
 */
#define TCP_TR_SACKED  0x1
#define TCP_TR_LOST    0x2 /* marked lost, not retransmitted since */
#define TCP_TR_RETRANS 0x4 /* retransmitted at least once */
#define TCP_TR_FIN     0x8 /* carries our FIN (end counts it) */
#define TCP_TR_NONE    UINT32_MAX

struct tcp_txrec {
	uint32_t seq, end;
	uint64_t xmit_ns;
	uint32_t next;
	uint32_t flags;
};

/* Connection flags. */
#define TCP_CF_TS          0x0001 /* timestamps negotiated */
#define TCP_CF_SACK        0x0002 /* SACK negotiated */
#define TCP_CF_FIN_QUEUED  0x0004 /* user shut down: FIN after the data */
#define TCP_CF_FIN_SENT    0x0008 /* FIN has a sequence number */
#define TCP_CF_PASSIVE     0x0010 /* opened from LISTEN / tcp_accept() */
#define TCP_CF_ACK_NOW     0x0020 /* send an ACK at the next output */
#define TCP_CF_IN_RECOVERY 0x0040 /* fast recovery (RFC 6582 / 6675) */
#define TCP_CF_PERSIST     0x0080 /* rtx timer is the persist timer */
#define TCP_CF_WANT_WRITE  0x0100 /* tcp_send() came back short */
#define TCP_CF_IN_CB       0x0200 /* delivering events */
#define TCP_CF_PEER_FIN    0x0400 /* FIN received (rcv_nxt counts it) */
#define TCP_CF_DETACHED    0x0800 /* TCP_EV_CLOSED delivered */
#define TCP_CF_SYN_RTX     0x1000 /* SYN was retransmitted (RFC 6298 5.7) */
#define TCP_CF_RTT_TIMING  0x2000 /* rtt_seq/rtt_ts are timing a segment */
#define TCP_CF_FREE        0x4000 /* in the free list */
#define TCP_CF_OOO_FIN     0x8000 /* a FIN arrived ahead of rcv_nxt */
#define TCP_CF_FORCE      0x10000 /* persist expired: send despite SWS */
#define TCP_CF_TLP_ARMED  0x20000 /* rtx timer is the TLP probe timer */
#define TCP_CF_TLP_OUT    0x40000 /* a probe is outstanding (RFC 8985 7) */
#define TCP_CF_REORDER    0x80000 /* reordering seen (RFC 8985 6.2) */
#define TCP_CF_DSACK     0x100000 /* report dsack_left/right next ACK */
#define TCP_CF_DSACK_RND 0x200000 /* dsack_round is set (RFC 8985 6.2) */
#define TCP_CF_BACKLOG   0x400000 /* counted in the engine's SYN backlog */
#define TCP_CF_UNANNOUNCED 0x800000 /* listener conn the user has not seen */
#define TCP_CF_EIFEL     0x1000000 /* check the next ACK for a spurious RTO */
#define TCP_CF_HAS_LOST  0x2000000 /* some record may be marked lost */
#define TCP_CF_XOPT_PEER 0x4000000 /* ep.xopt holds the peer's SYN-ACK's */
#define TCP_CF_TW_LISTED 0x8000000 /* on the engine's TIME-WAIT list */
#define TCP_CF_KEEP_SEGS 0x10000000 /* tcp_conn_keep_segments(): no merging */
#define TCP_CF_ACK_BURST 0x20000000 /* owes an ACK at tcp_input_burst_end() */
#define TCP_CF_BURST_LISTED 0x40000000 /* on the engine's burst list */
#define TCP_CF_BURST_DEFER 0x80000000u /* output, timer, events at the burst's end */

struct tcp_conn {
	/* identity */
	struct tcp_engine *eng;
	void *arg;
	struct tcp_endpoints ep;
	struct tcp_hdr_tmpl tmpl; /* ep's headers, made once (tcp_seg.h) */
	struct tcp_key key;
	LIST_ENTRY(tcp_conn) timer_link;
	TAILQ_ENTRY(tcp_conn) tw_link; /* TIME-WAIT, oldest first */
	uint64_t timer_at;      /* deadline the wheel holds, 0 = none */
	uint64_t rtx_at;        /* retransmission / persist / TIME-WAIT */
	uint64_t delack_at;     /* delayed ACK */
	uint64_t rack_at;       /* RACK reordering timer */
	uint64_t ka_at;         /* keepalive */
	uint64_t last_rx_ns;    /* last acceptable segment from the peer:
	                           idle and FIN-WAIT-2 timeouts count from it */
	uint64_t persist_at;    /* persist timeout, while TCP_CF_PERSIST */

	uint8_t state;
	uint8_t reset_end;      /* ended by an RST, sent or received */
	uint8_t snd_wscale, rcv_wscale;
	uint8_t backoff;        /* RTO doublings */
	uint8_t retries;        /* consecutive expirations */
	uint8_t dupacks;
	uint8_t ka_probes;      /* keepalive probes unanswered */
	uint8_t ooo_n;
	uint8_t rcv_pinned;     /* offer held at the floor: the engine's
	                           pool took it back (tcp_engine_reclaim_idle())
	                           and no data has come since */
	uint8_t close_held;     /* TCP_EV_CLOSED waited for the reader
	                           (counted once: closes_waited_for_reader) */
	uint32_t flags;         /* TCP_CF_* */
	uint16_t ev_pending;    /* TCP_EV_* not yet delivered */
	uint16_t mss;           /* what we send per segment */
	uint16_t rcv_mss;       /* what we announced */

	/* send sequence space (RFC 9293 3.3.1) */
	uint32_t iss, snd_una, snd_nxt, snd_max, snd_wnd, snd_wl1, snd_wl2;
	uint32_t max_snd_wnd;   /* RFC 5961 5.2 */
	uint32_t recover;       /* RFC 6582 / RFC 6675 RecoveryPoint */
	/* retransmission queue and RACK (RFC 8985) */
	uint32_t rq_head, rq_tail;
	uint32_t rq_count;
	uint32_t sacked_bytes;
	uint32_t rack_end;      /* RACK.end_seq */
	uint32_t rack_fack;     /* highest end delivered */
	uint32_t tlp_end;       /* SND.MAX when the probe went out */
	uint64_t rack_xmit_ns;  /* RACK.xmit_ts */
	uint64_t rack_rtt_ns;   /* RACK.rtt */
	uint64_t min_rtt_ns;
	uint64_t last_oow_ack_ns; /* rate limit of ACKs to bad segments */
	uint32_t dsack_left, dsack_right; /* duplicate received (RFC 2883) */
	uint32_t dsack_round;   /* RACK.dsack_round */
	uint8_t reo_wnd_mult;   /* RACK.reo_wnd_mult */
	uint8_t reo_wnd_persist;
	/* spurious RTO detection (RFC 3522) and response (RFC 4015) */
	uint32_t eifel_tsval, prior_cwnd, prior_ssthresh;
	/* PRR (RFC 6937) */
	uint32_t prr_delivered, prr_out, recover_fs;
	uint32_t fin_seq;       /* sequence number of our FIN */
	/* receive sequence space */
	uint32_t irs, rcv_nxt, rcv_adv; /* rcv_adv: right edge announced */
	uint32_t rcv_unacked;   /* bytes received since our last ACK */
	uint32_t want_space;    /* TCP_EV_WRITABLE once this much is free */
	uint32_t peer_fin_seq;  /* when TCP_CF_OOO_FIN */
	/* timestamps (RFC 7323) */
	uint32_t ts_off, ts_recent;
	/* RTT (RFC 6298) */
	uint32_t rtt_seq;
	uint64_t rtt_ts;
	uint64_t srtt_ns, rttvar_ns, rto_ns;
	uint64_t retransmits;

	struct tcp_cc cc;
	/* extension points (tcp_conn_set_hooks(), tcp_cc_group_join()) */
	const struct tcp_conn_hooks *hooks;
	void *hook_owner;
	struct tcp_cc_group *ccg;
	uint64_t ccg_frac;      /* increase carried over, 1/65536 byte */
	struct tcp_mq sndq;     /* bytes from snd_una on */
	/* Where the last segment's bytes started in sndq: the mbuf and its
	 * offset from the head (NULL: walk from the head). New data is
	 * sent in order, and a walk from the head to SND.NXT costs every
	 * mbuf in flight, per segment. */
	struct rte_mbuf *snd_cur;
	uint32_t snd_cur_off;
	uint32_t rcv_counted;   /* its share of the engine's rcv_offered */
	struct tcp_mq rcvq;     /* in-order bytes not yet read */
	struct tcp_ooo ooo[TCP_OOO_MAX];
	uint32_t ooo_recent;    /* seq of the most recently changed range */
	uint32_t rcv_data_at;   /* when data last arrived: now >> 20, about
	                           a millisecond a unit (wraps) */
} __rte_cache_aligned;

static_assert(sizeof(struct tcp_conn) <= 2048,
	      "per-connection state must stay within 2 KB (issue 6)");

LIST_HEAD(tcp_conn_list, tcp_conn);
TAILQ_HEAD(tcp_tw_list, tcp_conn);

/* A 4-tuple whose connection ended by a reset, and until when it is
 * kept (tcp_input_after_reset()); until 0: an empty way. Sets of
 * TCP_RMEM_WAYS, the one to replace the one that expires first. */
struct tcp_rmem {
	struct tcp_key key;
	uint64_t until;
};
#define TCP_RMEM_WAYS 4

struct tcp_engine {
	struct tcp_engine_params p;
	const struct tcp_cc_ops *cc;
	struct rte_hash *table;
	struct tcp_conn *conns;     /* pool */
	struct tcp_conn **free;     /* free stack */
	uint32_t nfree;
	uint32_t nconns;
	uint32_t nsynrcvd;          /* listener connections in SYN-RECEIVED */
	struct tcp_tw_list tw;      /* connections in TIME-WAIT, oldest first */
	/* timer wheel */
	struct tcp_conn_list *slots;
	/* retransmission queue records */
	struct tcp_txrec *recs;
	uint32_t rec_free;          /* free list head */
	uint64_t wheel_tick;        /* first tick not fully scanned */
	/* transmit ring */
	struct rte_mbuf **txq;
	uint32_t tx_head, tx_count;
	uint64_t now;
	uint64_t xmit_clock;        /* strictly increasing send times */
	uint64_t cnt[TCP_CNT_MAX];
	uint32_t rcv_limit;         /* tcp_engine_set_rcv_limit(), <= rcv_buf */
	/* The receive pool (tcp_engine_set_rcv_pool()): what every
	 * connection's last announced window still lets in, summed, and
	 * the most it may reach; UINT64_MAX: no pool. */
	uint64_t rcv_offered;
	uint64_t rcv_pool;
	uint32_t reclaim_at;        /* tcp_engine_reclaim_idle()'s cursor */
	uint8_t rcv_counting;       /* a pool was set: rcv_offered is kept */
	struct tcp_psum_reg psum;   /* payload sums kept in received mbufs */
	/* In front of the table: the connection each slot's ports last
	 * found (tcp_conn_find()); a released connection leaves its slot. */
	struct tcp_conn *hot[TCP_HOT_SLOTS];
	/* Between tcp_input_burst_begin() and _end(): the connections whose
	 * every-second-segment ACK, or whose output, timer update and
	 * events, wait for the end of the burst (TCP_CF_BURST_LISTED). */
	struct tcp_conn *ack_owed[TCP_BURST_ACKS];
	uint16_t n_ack_owed;
	uint8_t in_burst;
	/* Mbufs freed within the burst, all of dead[0]'s pool: put back
	 * in one call at its end (tcp_free_seg()). */
	uint16_t n_dead;
	struct rte_mbuf *dead[TCP_DEAD_MAX];
	struct tcp_rmem *rmem;      /* reset memory, NULL when off */
	uint32_t rmem_mask;         /* sets - 1 */
	uint64_t rmem_until;        /* no entry lives past this: until
	                               then frames of no connection look */
	uint64_t listen_bits[65536 / 64];
	char hash_name[RTE_HASH_NAMESIZE];
};

#define TCP_CNT(e, c) ((e)->cnt[TCP_CNT_##c]++)

/* tcp_input.c: put the burst's freed mbufs back to their pool. */
void tcp_dead_flush(struct tcp_engine *e);

/* Free one mbuf segment (its next link is the caller's). Within a burst
 * it waits in e->dead and goes back with the others in one
 * rte_mempool_put_bulk() (tcp_input_burst_end()), where a free of its
 * own would look up the lcore's cache for it alone; outside a burst, or
 * with no e, at once. */
static inline void
tcp_free_seg(struct tcp_engine *e, struct rte_mbuf *m)
{
	if (e == NULL || !e->in_burst) {
		rte_pktmbuf_free_seg(m);
		return;
	}
	m = rte_pktmbuf_prefree_seg(m);
	if (m == NULL)
		return; /* still referenced (a frame of it on its way out) */
	if (unlikely(e->n_dead == TCP_DEAD_MAX ||
		     (e->n_dead != 0 && m->pool != e->dead[0]->pool)))
		tcp_dead_flush(e);
	e->dead[e->n_dead++] = m;
}

/* Free a frame the engine is done with (a pure ACK read): a single
 * segment through the burst's batch, a chain at once. */
static inline void
tcp_free_frame(struct tcp_engine *e, struct rte_mbuf *m)
{
	if (m->next == NULL)
		tcp_free_seg(e, m);
	else
		rte_pktmbuf_free(m);
}

/* tcp_engine.c */
void tcp_conn_event(struct tcp_conn *c, uint16_t ev);
void tcp_conn_deliver(struct tcp_conn *c);
void tcp_conn_set_state(struct tcp_conn *c, uint8_t st);
void tcp_conn_close(struct tcp_conn *c); /* to CLOSED, report CLOSED */
struct tcp_conn *tcp_conn_new(struct tcp_engine *e, const struct tcp_endpoints *ep,
			      void *arg);
void tcp_txq_push(struct tcp_engine *e, struct rte_mbuf *m);
void tcp_conn_release(struct tcp_conn *c);
void tcp_key_from_ep(struct tcp_key *k, const struct tcp_endpoints *ep);
/* The reset memory's live entry for k, or NULL. */
struct tcp_rmem *tcp_rmem_find(struct tcp_engine *e, const struct tcp_key *k);
/* The connection of a parsed TCP frame's 4-tuple, or NULL: the cache,
 * then the table. */
struct tcp_conn *tcp_conn_find(struct tcp_engine *e, const struct pkt_meta *meta);
int tcp_listening(const struct tcp_engine *e, uint16_t port);

/* tcp_timer.c */
void tcp_timer_update(struct tcp_conn *c);
/* When the idle, FIN-WAIT-2 or persist timeout ends the connection; 0:
 * none applies in its state. */
uint64_t tcp_life_deadline(const struct tcp_conn *c);
void tcp_timer_cancel(struct tcp_conn *c);

/* tcp_output.c */
void tcp_output(struct tcp_conn *c);
void tcp_send_syn(struct tcp_conn *c);
void tcp_send_ack(struct tcp_conn *c);
void tcp_send_rst(struct tcp_conn *c);
int tcp_send_rst_for(struct tcp_engine *e, const struct tcp_endpoints *ep,
		     uint32_t seq, uint32_t ack, uint8_t flags);
void tcp_rto_arm(struct tcp_conn *c);
void tcp_rtt_sample(struct tcp_conn *c, uint64_t rtt_ns);
void tcp_timer_fire(struct tcp_conn *c);
uint32_t tcp_rcv_window_hooked(struct tcp_conn *c, uint32_t w);

/* What the announced window still lets in beyond RCV.NXT (0 once the
 * data reached its edge). */
static inline uint32_t
tcp_rcv_announced(const struct tcp_conn *c)
{
	return tcp_seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
}

/* The least a window under a receive pool offers: two segments, so a
 * sender keeps moving and is never left to zero-window probes. */
static inline uint32_t
tcp_rcv_min(const struct tcp_conn *c)
{
	return 2u * c->rcv_mss;
}

/*
 * The receive window a connection can offer now: the free receive
 * buffer, so a slow reader closes it. Under memory pressure the owner
 * lowers rcv_limit (the edge already announced stays: announce_window()).
 * Under a receive pool (tcp_engine_set_rcv_pool()) every connection has
 * two segments (tcp_rcv_min(), outside the pool), and beyond them grows
 * only into what the pool has left: at most half of it, counting what
 * this connection offers already as its own, so k connections that keep
 * asking settle at 1/(k+1) of the pool each and the first to ask cannot
 * take it all. Only the two segments while the pool holds the
 * connection's offer taken back (rcv_pinned). Inline: it is on the path
 * of every segment built and every read.
 */
static inline uint32_t
tcp_rcv_window(struct tcp_conn *c)
{
	const struct tcp_engine *e = c->eng;
	uint32_t lim = e->rcv_limit;
	uint32_t w = c->rcvq.bytes >= lim ? 0 : lim - c->rcvq.bytes;

	if (unlikely(c->hooks != NULL))
		w = tcp_rcv_window_hooked(c, w);
	if (e->rcv_pool != UINT64_MAX) { /* the proxy's engines: always */
		/* Pools are far below 2^63: pool + counted cannot wrap. */
		uint64_t room = e->rcv_pool + c->rcv_counted;
		uint64_t cap = room > e->rcv_offered ? (room - e->rcv_offered) >> 1 : 0;

		cap = c->rcv_pinned ? tcp_rcv_min(c) : cap + tcp_rcv_min(c);
		if (w > cap)
			w = (uint32_t)cap;
	}
	return w;
}

/* The window tcp_engine_reclaim_idle() leaves a connection: the two
 * segments tcp_rcv_window() never goes below (tcp_rcv_min()), rounded up
 * to what the window scale can say (the field of the ACK that announces
 * it from RCV.NXT then says all of it). */
static inline uint32_t
tcp_rcv_floor(const struct tcp_conn *c)
{
	uint32_t f = tcp_rcv_min(c);
	uint32_t s = c->rcv_wscale == 0xff ? 0 : c->rcv_wscale;

	return ((f + (1u << s) - 1) >> s) << s;
}

/* Count what c's announced window still lets in beyond its two
 * segments, of ad bytes beyond RCV.NXT (nothing once the peer's FIN is
 * in), in the engine's sum, once rcv_adv has moved; only in an engine
 * that has had a receive pool. The two segments are outside the pool:
 * every connection has them whatever the others offer, so connections
 * idle at theirs leave the whole pool to those that move data (counted,
 * 2,731 of them fill a pool of 7.9 MB). */
static inline void
tcp_rcv_account_ad(struct tcp_conn *c, uint32_t ad)
{
	struct tcp_engine *e = c->eng;
	uint32_t min = tcp_rcv_min(c);
	uint32_t open = (c->flags & TCP_CF_PEER_FIN) || ad <= min ? 0 : ad - min;

	if (!e->rcv_counting)
		return;
	e->rcv_offered += (uint64_t)open - c->rcv_counted; /* wraps as it should */
	c->rcv_counted = open;
}

static inline void
tcp_rcv_account(struct tcp_conn *c)
{
	tcp_rcv_account_ad(c, tcp_rcv_announced(c));
}
/* Option bytes granted to the hooks on a segment of this kind carrying
 * len payload bytes (len 0 when sizing a new data segment). */
uint32_t tcp_hook_room(struct tcp_conn *c, uint8_t kind, uint32_t len);
uint32_t tcp_ts_now(const struct tcp_conn *c);
uint32_t tcp_flight(const struct tcp_conn *c);
void tcp_arm_rtx(struct tcp_conn *c);
void tcp_keepalive_touch(struct tcp_conn *c);

/* tcp_rack.c */
void tcp_rq_init(struct tcp_engine *e);
int tcp_rq_add(struct tcp_conn *c, uint32_t seq, uint32_t end, int fin);
void tcp_rq_free_all(struct tcp_conn *c);
void tcp_rq_ack(struct tcp_conn *c, const struct tcp_seg_in *s);
uint32_t tcp_rq_sack(struct tcp_conn *c, const struct tcp_seg_in *s);
uint32_t tcp_rq_pipe(const struct tcp_conn *c);
void tcp_rq_mark_all_lost(struct tcp_conn *c);
void tcp_rq_mark_head_lost(struct tcp_conn *c);
void tcp_rq_unmark_lost(struct tcp_conn *c);
struct tcp_txrec *tcp_rq_last(struct tcp_conn *c);
uint32_t tcp_rack_detect(struct tcp_conn *c);
/* The time a segment leaves, made strictly increasing (1 ns apart at
 * worst) so RACK orders segments sent within one tick by when they were
 * sent, not by sequence number: a retransmission sent after new data in
 * the same microsecond is newer (RFC 8985 6.2 RACK_sent_after). */
static inline uint64_t
tcp_xmit_clock(struct tcp_engine *e)
{
	e->xmit_clock = e->now > e->xmit_clock ? e->now : e->xmit_clock + 1;
	return e->xmit_clock;
}

static inline struct tcp_txrec *
tcp_rec(const struct tcp_engine *e, uint32_t i)
{
	return i == TCP_TR_NONE ? NULL : &e->recs[i];
}

/* Put c on the burst's list (once). false: the list is full. */
static inline bool
tcp_burst_list(struct tcp_conn *c)
{
	struct tcp_engine *e = c->eng;

	if (c->flags & TCP_CF_BURST_LISTED)
		return true;
	if (e->n_ack_owed == TCP_BURST_ACKS)
		return false;
	e->ack_owed[e->n_ack_owed++] = c;
	c->flags |= TCP_CF_BURST_LISTED;
	return true;
}

/* Inside an input burst, a plain connection (no hooks: MPTCP subflows
 * keep their per-segment path) that is established, owes no ACK now and
 * has no event but readable/writable pending leaves its output, timer
 * update and event delivery to tcp_input_burst_end(): one of each per
 * burst instead of one per segment. true: deferred, the caller returns. */
static inline bool
tcp_burst_defer(struct tcp_conn *c)
{
	if (!c->eng->in_burst || c->hooks != NULL || c->state != TCP_ESTABLISHED ||
	    (c->flags & TCP_CF_ACK_NOW) ||
	    (c->ev_pending & ~(TCP_EV_READABLE | TCP_EV_WRITABLE)) != 0 ||
	    !tcp_burst_list(c))
		return false;
	c->flags |= TCP_CF_BURST_DEFER;
	TCP_CNT(c->eng, BURST_DEFERRED);
	return true;
}

/* tcp_input.c */
/* A connection enters (or restarts) TIME-WAIT: to the tail of the list
 * tcp_conn_new() recycles from when the pool is empty. */
void tcp_time_wait_list(struct tcp_conn *c);
/* true: c's output, timer update and events wait for the burst's end
 * (tcp_burst_defer()); false: the caller updates the timer and delivers. */
bool tcp_conn_input(struct tcp_conn *c, struct rte_mbuf *m, struct tcp_seg_in *s);
void tcp_apply_syn_opts(struct tcp_conn *c, const struct tcp_seg_in *s);
void tcp_recovery_on_loss(struct tcp_conn *c, uint32_t delivered);
uint32_t tcp_cookie_make(const struct tcp_engine *e, const struct tcp_key *k,
			 uint32_t peer_isn, uint16_t peer_mss);
int tcp_cookie_check(const struct tcp_engine *e, const struct tcp_key *k,
		     uint32_t peer_isn, uint32_t cookie, uint16_t *mss);
void tcp_backlog_leave(struct tcp_conn *c);
uint32_t tcp_isn(const struct tcp_engine *e, const struct tcp_key *k);

#endif /* SLUICE_TCP_IMPL_H */
