/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_TCP_H
#define SLUICE_TCP_H

/**
 * @file
 * A userspace TCP endpoint engine on DPDK mbufs.
 *
 * One engine (struct tcp_engine) belongs to one worker lcore and runs to
 * completion: the worker feeds it received segments (tcp_input()), drives
 * its timers (tcp_timers_run()), and drains the frames it wants to send
 * (tcp_tx_burst()). Nothing locks, nothing reads a clock: every entry point
 * that can change state takes the time as now_ns, so tests run on a virtual
 * clock.
 *
 * Memory is sized at tcp_engine_create(): a pool of connections, a
 * connection table (rte_hash on the 4-tuple), a timer wheel and a transmit
 * queue. Per packet the engine allocates only mbufs, from the caller's
 * mempool, whose private area must hold a struct pkt_meta
 * (PKT_META_PRIV_SIZE).
 *
 * Connections are opened actively from any 4-tuple (tcp_connect(); the
 * transparent proxy opens from the client's own address), or passively,
 * either for SYNs to a port given to tcp_listen(), or for one SYN the
 * caller held and decided to accept (tcp_accept()).
 *
 * The application learns what happened through one callback per engine,
 * called with a mask of TCP_EV_* bits. TCP_EV_CLOSED is always the last
 * event of a connection: once the callback returns, the handle is gone.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tcp_engine;
struct tcp_conn;

/** Connection states (RFC 9293, section 3.3.2). */
#define TCP_STATE_LIST(X) \
	X(CLOSED,       "closed") \
	X(LISTEN,       "listen") \
	X(SYN_SENT,     "syn_sent") \
	X(SYN_RECEIVED, "syn_received") \
	X(ESTABLISHED,  "established") \
	X(FIN_WAIT_1,   "fin_wait_1") \
	X(FIN_WAIT_2,   "fin_wait_2") \
	X(CLOSE_WAIT,   "close_wait") \
	X(CLOSING,      "closing") \
	X(LAST_ACK,     "last_ack") \
	X(TIME_WAIT,    "time_wait")

/** A connection state, e.g. TCP_ESTABLISHED. */
enum tcp_state {
#define TCP_STATE_ENUM(e, s) TCP_##e,
	TCP_STATE_LIST(TCP_STATE_ENUM)
#undef TCP_STATE_ENUM
	TCP_STATE_MAX
};

/** Events, OR-ed into the mask given to the callback. */
#define TCP_EV_CONNECTED 0x0001 /**< handshake complete (either side) */
#define TCP_EV_READABLE  0x0002 /**< new in-order bytes for tcp_recv() */
#define TCP_EV_WRITABLE  0x0004 /**< send buffer space after a short tcp_send() */
#define TCP_EV_PEER_FIN  0x0008 /**< the peer closed its side; no more bytes */
#define TCP_EV_REFUSED   0x0010 /**< active open answered by RST */
#define TCP_EV_RESET     0x0020 /**< connection reset by the peer */
#define TCP_EV_TIMEOUT   0x0040 /**< retransmissions exhausted, or an
                                     idle, FIN-WAIT-2 or persist timeout */
#define TCP_EV_CLOSED    0x0080 /**< last event: the handle is released;
                                     after an orderly end, only once every
                                     byte received was read (tcp_recv*()) */

/**
 * Event callback. Called from inside the engine's entry points, at a point
 * where the connection is consistent: it may call tcp_send(), tcp_recv(),
 * tcp_shutdown() or tcp_abort() on this or any other connection of the
 * same engine. After a call whose mask holds TCP_EV_CLOSED the handle must
 * not be used again.
 *
 * @param c      connection.
 * @param arg    the argument given when the connection was opened or
 *               accepted (tcp_conn_arg()).
 * @param events TCP_EV_* mask.
 * @param now_ns time of the entry point that raised the events.
 */
typedef void (*tcp_event_cb)(struct tcp_conn *c, void *arg, uint32_t events,
			     uint64_t now_ns);

/**
 * Which option kinds a connection carries to another (a proxy's policy;
 * tcp_syn_xopts(), tcp_engine_params.xopt_carry). The engine's own kinds
 * (padding, MSS, window scale, SACK, timestamps) are never carried.
 */
typedef bool (*tcp_xopt_carry_fn)(uint8_t kind);

/** Congestion control algorithms. */
enum tcp_cc_algo {
	TCP_CC_CUBIC = 0, /**< RFC 9438 (default) */
	TCP_CC_NEWRENO,   /**< RFC 5681 / RFC 6582 */
};

/** Feature switches in tcp_engine_params.flags (to interoperate or test). */
#define TCP_F_NO_TS    0x1 /**< never offer timestamps (RFC 7323) */
#define TCP_F_NO_SACK  0x2 /**< never offer SACK (RFC 2018) */
#define TCP_F_NO_WS    0x4 /**< never offer window scaling */
#define TCP_F_TX_COPY  0x8 /**< build every frame in one mbuf, the payload
                                copied out of the send buffer (for a device
                                that cannot send chained mbufs); without it
                                a data segment is a header mbuf followed by
                                indirect mbufs of the send buffer's */
#define TCP_F_TX_NO_META 0x10 /**< frames leave without their pkt_meta
                                written (tcp_tx_burst()): for a caller that
                                sends them to a port and lets nothing
                                read the metadata */

/** Parameters of tcp_engine_create(). Zero means the default. */
struct tcp_engine_params {
	const char *name;          /**< unique per process (names the hash) */
	int socket_id;             /**< NUMA socket; SOCKET_ID_ANY allowed */
	uint32_t max_conns;        /**< connection pool size (default 1024) */
	uint32_t syn_backlog;      /**< listener connections in SYN-RECEIVED
	                                beyond which SYNs get SYN cookies
	                                (max_conns / 2) */
	struct rte_mempool *pool;  /**< mbufs for output (required) */
	uint8_t isn_key[16];       /**< SipHash key for ISNs and TS offsets */
	uint32_t snd_buf;          /**< send buffer limit, bytes (256 KiB) */
	uint32_t rcv_buf;          /**< receive buffer limit, bytes (256 KiB) */
	uint32_t rcv_mem;          /**< mbuf memory (sum of buf_len) one
	                                connection's receive and out-of-order
	                                queues may hold (2 * rcv_buf, at least
	                                rcv_buf + 10 mbufs): beyond it they are
	                                collapsed into full mbufs, then the
	                                out-of-order queue is pruned, then the
	                                segment is dropped */
	uint16_t mss;              /**< MSS we announce over IPv4 (1460);
	                                IPv6 announces 20 bytes less */
	uint8_t cc;                /**< enum tcp_cc_algo */
	uint8_t flags;             /**< TCP_F_* */
	uint64_t rto_min_ns;       /**< RFC 6298 minimum RTO (200 ms) */
	uint64_t rto_max_ns;       /**< RTO ceiling (60 s) */
	uint64_t rto_init_ns;      /**< RTO before any sample (1 s) */
	uint64_t delack_ns;        /**< delayed ACK timeout (40 ms) */
	uint64_t time_wait_ns;     /**< TIME-WAIT duration, 2*MSL (60 s) */
	uint64_t oow_ack_ns;       /**< at most one ACK per this interval to
	                                segments without data that are
	                                discarded (500 ms; RFC 5961 10) */
	uint64_t keepalive_idle_ns;  /**< idle time before keepalive probes
	                                  (0: no keepalive, the default; RFC
	                                  1122 4.2.3.6 asks for >= 2 hours) */
	uint64_t keepalive_intvl_ns; /**< between unanswered probes (75 s) */
	uint8_t keepalive_probes;    /**< unanswered probes before timeout (9) */
	uint64_t idle_timeout_ns;  /**< reset a connection that received
	                                nothing from its peer for this long
	                                (ESTABLISHED, CLOSE-WAIT, FIN-WAIT-1,
	                                CLOSING, LAST-ACK; 0: never, the
	                                default) */
	uint64_t fin_wait2_timeout_ns; /**< reset a connection in FIN-WAIT-2
	                                that received nothing from its peer
	                                for this long (0: never, the default) */
	uint64_t persist_timeout_ns; /**< reset a connection whose peer kept
	                                its window closed to our queued data
	                                for this long, zero-window probes
	                                answered or not (0: probe forever,
	                                the default) */
	uint32_t reset_memory;     /**< 4-tuples of connections that ended by
	                                a reset (theirs or ours, a timeout's
	                                included) kept for
	                                tcp_input_after_reset(); 0: none, the
	                                default (rounded up to a power of two,
	                                at least 4) */
	uint64_t reset_memory_ns;  /**< how long each is kept (5 s) */
	uint8_t syn_retries;       /**< SYN retransmissions before timeout (6) */
	uint8_t data_retries;      /**< data retransmissions before timeout (15) */
	uint32_t timer_tick_ns;    /**< timer wheel granularity (1 ms) */
	uint32_t timer_slots;      /**< wheel slots, power of two (1024) */
	uint32_t txq_size;         /**< frames tcp_tx_burst() can hold (1024) */
	uint32_t max_tx_segments;  /**< segments in flight, all connections
	                                together (max_conns * 64); one record
	                                of 24 bytes each */
	uint32_t max_conn_tx_segments; /**< segments in flight per connection
	                                (256): tiny writes cannot take the
	                                whole pool */
	tcp_event_cb cb;           /**< event callback (required) */
	tcp_xopt_carry_fn xopt_carry; /**< which options of a server's SYN-ACK
	                                   tcp_conn_peer_xopts() keeps (NULL:
	                                   every kind not the engine's own) */
	void *cb_arg;              /**< initial argument of passive connections */
};

/**
 * Room for the options a SYN or SYN-ACK carries on behalf of a proxy's
 * other leg (tcp_syn_xopts()): what is left of the 40 option bytes after
 * MSS, SACK-permitted, timestamps and window scale.
 */
#define TCP_XOPT_MAX 20


/** Both ends of a connection, as seen from this engine. */
struct tcp_endpoints {
	uint8_t family;               /**< 4 or 6 */
	uint8_t laddr[16];            /**< local address (IPv4: first 4 bytes) */
	uint8_t raddr[16];            /**< remote address */
	uint16_t lport;               /**< local port, host order */
	uint16_t rport;               /**< remote port, host order */
	struct rte_ether_addr lmac;   /**< source MAC of our frames */
	struct rte_ether_addr rmac;   /**< destination MAC of our frames */
	uint16_t port;                /**< DPDK port stored in mbuf->port */
	uint8_t vlan_count;           /**< VLAN tags on our frames: 0, 1 or 2 */
	uint16_t vlan_tpid[2];        /**< outer, inner TPID (0x8100, 0x88a8...) */
	uint16_t vlan_tci[2];         /**< outer, inner tag control */
	uint16_t mss;                 /**< MSS to announce; 0 = the engine's
	                                   (the proxy may pass on the client's) */
	uint8_t xopt_len;             /**< bytes used in xopt */
	uint8_t xopt[TCP_XOPT_MAX];   /**< whole options our SYN (active open)
	                                   or SYN-ACK (tcp_accept_xopts()) carries
	                                   after the engine's own, e.g. from
	                                   tcp_syn_xopts() of the other leg */
};

/** A snapshot of a connection, for tests, telemetry and debugging. */
struct tcp_conn_info {
	uint8_t state;         /**< enum tcp_state */
	uint8_t ts_ok;         /**< timestamps negotiated */
	uint8_t sack_ok;       /**< SACK negotiated */
	uint8_t snd_wscale;    /**< shift applied to the peer's windows */
	uint8_t rcv_wscale;    /**< shift the peer applies to ours */
	uint16_t mss;          /**< payload bytes per segment we send */
	uint32_t iss, irs;     /**< initial sequence numbers */
	uint32_t snd_una, snd_nxt, snd_wnd;
	uint32_t rcv_nxt, rcv_wnd;
	uint32_t cwnd, ssthresh; /**< bytes */
	uint32_t snd_queued;   /**< bytes in the send buffer (unacked + unsent) */
	uint32_t rcv_queued;   /**< in-order bytes waiting for tcp_recv() */
	uint32_t backoff;      /**< RTO doublings in force */
	uint64_t srtt_ns, rttvar_ns, rto_ns;
	uint64_t retransmits;  /**< segments retransmitted */
	uint32_t prr_delivered; /**< RFC 6937, last recovery episode */
	uint32_t prr_out;      /**< RFC 6937, last recovery episode */
	uint8_t in_recovery;   /**< fast recovery in progress */
	uint8_t reo_wnd_mult;  /**< RACK reordering window, in min_RTT/4 */
	uint32_t rcv_mbufs;    /**< mbufs the receive and out-of-order queues hold */
	uint32_t rcv_mem;      /**< their buffers' bytes (buf_len), cf. rcv_mem */
};

/** Engine counters: every abnormal event has one. */
#define TCP_CNT_LIST(X) \
	X(SEG_IN,            "segments_in") \
	X(SEG_OUT,           "segments_out") \
	X(BAD_CSUM,          "bad_checksum") \
	X(MALFORMED,         "malformed") \
	X(NO_CONN,           "no_connection") \
	X(RST_SENT,          "rst_sent") \
	X(RST_IN,            "rst_accepted") \
	X(RST_IGNORED,       "rst_out_of_window") \
	X(CHALLENGE_ACK,     "challenge_ack_sent") \
	X(OOW_ACK_LIMITED,   "ack_to_bad_segment_rate_limited") \
	X(UNACCEPTABLE,      "unacceptable_segment") \
	X(ACK_TOO_NEW,       "ack_of_unsent_data") \
	X(ACK_TOO_OLD,       "ack_too_old") \
	X(SYN_DROPPED_FULL,  "syn_dropped_table_full") \
	X(SYN_COOKIE_SENT,   "syn_cookies_sent") \
	X(SYN_COOKIE_OK,     "syn_cookies_validated") \
	X(SYN_COOKIE_BAD,    "syn_cookies_rejected") \
	X(OOO_DROPPED,       "out_of_order_dropped") \
	X(RCV_OVERFLOW,      "receive_buffer_overflow") \
	X(RCV_RECLAIMED,     "receive_windows_reclaimed") \
	X(RETRANSMIT,        "retransmits") \
	X(RTO,               "rto_expired") \
	X(SPURIOUS_RTO,      "spurious_rto_undone") \
	X(FAST_RETRANSMIT,   "fast_retransmits") \
	X(RACK_LOST,         "rack_marked_lost") \
	X(DSACK_SENT,        "dsack_sent") \
	X(DSACK_RECEIVED,    "dsack_received") \
	X(TLP,               "tail_loss_probes") \
	X(TXREC_FULL,        "tx_segment_pool_full") \
	X(TXREC_CONN_CAP,    "tx_segments_at_connection_cap") \
	X(TIMEOUT,           "connection_timeouts") \
	X(IDLE_TIMEOUT,      "idle_timeouts") \
	X(FIN_WAIT2_TIMEOUT, "fin_wait_2_timeouts") \
	X(PERSIST_TIMEOUT,   "persist_timeouts") \
	X(ZWP,               "zero_window_probes") \
	X(KEEPALIVE,         "keepalive_probes") \
	X(DELACK,            "delayed_acks_sent") \
	X(MBUF_ALLOC_FAIL,   "mbuf_alloc_failed") \
	X(TXQ_FULL,          "tx_queue_full") \
	X(CONN_OPENED,       "connections_opened") \
	X(CONN_CLOSED,       "connections_closed") \
	X(TIME_WAIT_REUSED,  "time_wait_reused") \
	X(TIME_WAIT_RECYCLED, "time_wait_recycled_table_full") \
	X(CLOSE_HELD,        "closes_waited_for_reader") \
	X(XOPT_NOT_CARRIED, "syn_options_not_carried") \
	X(FRAGMENT,          "ip_fragments_not_taken") \
	X(RCV_COLLAPSE,      "receive_queues_collapsed") \
	X(OOO_PRUNED,        "out_of_order_pruned") \
	X(RCV_MEM_DROPPED,   "receive_memory_dropped") \
	X(RESET_REMEMBERED,  "resets_remembered") \
	X(RESET_FORGOTTEN,   "resets_forgotten_memory_full") \
	X(AFTER_RESET,       "segments_after_reset") \
	X(ACK_COALESCED,     "acks_coalesced_in_burst") \
	X(BURST_DEFERRED,    "outputs_deferred_in_burst") \
	X(OOO_ACK_HELD,      "ooo_acks_held_in_burst") \
	X(SEG_COALESCED,     "segments_coalesced_in_burst")

/** Counter indices, e.g. TCP_CNT_BAD_CSUM. */
enum tcp_cnt {
#define TCP_CNT_ENUM(e, s) TCP_CNT_##e,
	TCP_CNT_LIST(TCP_CNT_ENUM)
#undef TCP_CNT_ENUM
	TCP_CNT_MAX
};

/** What tcp_input() did with a frame. */
enum tcp_input_result {
	TCP_INPUT_CONSUMED = 0, /**< the engine owns (or freed) the mbuf */
	TCP_INPUT_NO_CONN,      /**< no connection, no listener: caller owns it */
	TCP_INPUT_NOT_TCP,      /**< not a TCP segment the engine takes (other
	                             protocols, PPPoE, IP fragments): the
	                             caller owns it, untouched */
};

/**
 * Fill params with defaults (everything except pool, cb and isn_key).
 *
 * @param p parameters to reset.
 */
void tcp_engine_params_init(struct tcp_engine_params *p);

/**
 * Create an engine (boot time; the EAL must be up).
 *
 * @param p parameters; copied.
 * @return the engine, or NULL with rte_errno set (EINVAL, ENOMEM, EEXIST).
 */
struct tcp_engine *tcp_engine_create(const struct tcp_engine_params *p);

/**
 * Free an engine, every connection it holds and every queued mbuf, without
 * calling the callback. NULL is ignored.
 *
 * @param e engine.
 */
void tcp_engine_free(struct tcp_engine *e);

/**
 * Accept SYNs to a local port on any address (passive open, RFC 9293
 * LISTEN). New connections report TCP_EV_CONNECTED with params.cb_arg.
 *
 * @param e    engine.
 * @param port local port, host order.
 * @param on   true to listen, false to stop.
 */
void tcp_listen(struct tcp_engine *e, uint16_t port, bool on);

/**
 * Feed one received frame. It must have been parsed by pkt_parse() (the
 * struct pkt_meta in its private area is read, not recomputed). The TCP
 * checksum is verified unless the NIC marked it good. IP fragments
 * (PKT_F_FRAGMENT, even a first one that holds the TCP header) are never
 * taken: the engine does not reassemble, so they come back as
 * TCP_INPUT_NOT_TCP, counted as ip_fragments_not_taken, for the caller to
 * forward unchanged.
 *
 * @param e      engine.
 * @param m      frame.
 * @param now_ns current time.
 * @return enum tcp_input_result: whether the engine took the mbuf.
 */
enum tcp_input_result tcp_input(struct tcp_engine *e, struct rte_mbuf *m,
				uint64_t now_ns);

/**
 * The connection a parsed frame belongs to (its 4-tuple), without
 * looking at the segment itself: neither its checksum nor its options.
 * A caller that must leave frames of other flows untouched (the proxy
 * forwards what it does not own, checksum right or wrong) asks this
 * first, then feeds the frame with tcp_input_conn(). A small cache of
 * the connections found last, by their ports, answers a burst of one
 * connection's segments without hashing the key each time.
 *
 * @param e engine.
 * @param m frame parsed by pkt_parse().
 * @return the connection (TIME-WAIT included), or NULL.
 */
struct tcp_conn *tcp_conn_lookup(struct tcp_engine *e,
				 const struct rte_mbuf *m);

/**
 * tcp_conn_lookup()'s cache alone: the connection its ports found last,
 * if the frame is of it, else NULL. NULL does not mean there is no
 * connection: ask tcp_conn_lookup() then. One compare of the 4-tuple,
 * no hash: a caller whose own checks before the lookup cost more (the
 * proxy's intercept rules, one compare per rule) asks this first, and a
 * bulk transfer's segments are answered here.
 *
 * @param e engine.
 * @param m frame parsed by pkt_parse().
 * @return the connection (TIME-WAIT included), or NULL.
 */
struct tcp_conn *tcp_conn_lookup_cached(struct tcp_engine *e,
					const struct rte_mbuf *m);

/**
 * tcp_input() for a frame whose connection tcp_conn_lookup() found, with
 * no second lookup. A segment that fails the checksum or the header
 * checks is counted and freed, as tcp_input() does: it was addressed to
 * the connection.
 *
 * @param e      engine.
 * @param c      tcp_conn_lookup(e, m), not NULL.
 * @param m      frame.
 * @param now_ns current time.
 * @return TCP_INPUT_CONSUMED, or TCP_INPUT_NO_CONN when c was in
 *         TIME-WAIT and gave way to this new SYN (RFC 6191): the caller
 *         owns the mbuf and may accept it.
 */
enum tcp_input_result tcp_input_conn(struct tcp_engine *e, struct tcp_conn *c,
				     struct rte_mbuf *m, uint64_t now_ns);

/**
 * tcp_input_conn() for a run of frames: pkts[0], whose connection
 * tcp_conn_lookup() found, and the frames right after it that
 * tcp_conn_lookup_cached() gives the same connection (whole TCP frames,
 * not PPPoE). The run ends at the first frame that is not, or when the
 * connection is gone. Each frame is checked and counted as
 * tcp_input_conn() does.
 *
 * Within an input burst, consecutive in-order data segments that the
 * connection would read the same way one at a time are taken as one
 * segment, as GRO merges them: a plain connection (no tcp_conn_hooks) in
 * ESTABLISHED with nothing out of order; sequence numbers that follow
 * on; the same ACK, window and timestamps; no SACK block and no option
 * the engine does not read; ACK alone, or ACK and PSH on the last; no
 * byte beyond the receive window, the receive buffer or its mbuf
 * memory (rcv_mem); frames of one
 * mbuf with nothing after the payload. The receive queue gets the same
 * mbufs and bytes; the state machine, the ACK processing and the
 * receive path run once for the merged segment instead of once per
 * frame. Each frame merged into the one before counts as
 * segments_coalesced_in_burst. Outside a burst each frame is taken on
 * its own, as tcp_input_conn() takes it.
 *
 * @param e      engine.
 * @param c      tcp_conn_lookup(e, pkts[0]), not NULL.
 * @param pkts   frames, in arrival order.
 * @param n      how many, at least 1.
 * @param now_ns current time.
 * @return how many frames from pkts[0] on were taken (the engine owns
 *         them); 0 when pkts[0] got TCP_INPUT_NO_CONN (see
 *         tcp_input_conn(): the caller owns it). The caller goes on
 *         from pkts[return value] as with any frame.
 */
uint16_t tcp_input_conn_run(struct tcp_engine *e, struct tcp_conn *c,
			    struct rte_mbuf **pkts, uint16_t n, uint64_t now_ns);

/**
 * Start an input burst: until tcp_input_burst_end(), the ACK that the
 * delayed-ACK rule owes for every second full-sized in-order segment
 * (RFC 1122 4.2.3.2) is not sent at once but once, cumulative, at the
 * end of the burst; each ACK that rule would have sent on its own and
 * that a later one of the same burst covers instead counts as
 * acks_coalesced_in_burst. So is the ACK that out-of-order data or a
 * filled hole owes at once (RFC 5681 4.2), on a connection with SACK
 * that holds at most one out-of-order range (ooo_acks_held_in_burst):
 * it leaves at the end with the SACK block as it is then, so segments
 * reordered within one burst show no hole. Everything else still ACKs
 * at once, as without a burst: out-of-order data without SACK or with
 * two ranges or more, a duplicate (its D-SACK), a FIN, a segment with
 * no room, a challenge ACK. Data a connection sends in the meantime
 * carries the ACK (and settles it). A burst is
 * what the caller receives at once (one rx burst): its ACKs leave a few
 * microseconds later than they would have, never later than the
 * delayed-ACK timer. Without a burst (the default) each segment is
 * ACKed as before.
 *
 * Within a burst a plain connection (no tcp_conn_hooks) in ESTABLISHED
 * that owes no ACK at once also leaves its output, timer update and
 * event delivery (TCP_EV_READABLE, TCP_EV_WRITABLE) to the end of the
 * burst, and so does tcp_send_mbuf() on one: the owner then reads the
 * burst's data in one go, and what it relays leaves in one output
 * (outputs_deferred_in_burst counts the segments and sends deferred).
 * Any other event (connected, peer FIN, reset, closed) is delivered at
 * once, as without a burst. The caller must end every burst it starts
 * before it runs other entry points of the connections concerned;
 * tcp_timers_run() ends one left open.
 *
 * @param e engine.
 */
void tcp_input_burst_begin(struct tcp_engine *e);

/**
 * End an input burst: per connection it listed, deliver the events it
 * deferred, then run the output (the ACK it deferred, one per
 * connection, with RCV.NXT and the window as they are after the owner
 * read; the data the owner sent), update the timers and deliver what
 * that raised. Sends of those events to other plain connections join
 * the same flush. Without tcp_input_burst_begin() it does nothing.
 *
 * @param e      engine.
 * @param now_ns current time.
 */
void tcp_input_burst_end(struct tcp_engine *e, uint64_t now_ns);

/**
 * Whether a parsed frame is a TCP segment the engine would accept: not
 * a fragment, header complete, checksum right (unless the NIC marked it
 * good), option area well formed. Counts nothing.
 *
 * @param m frame parsed by pkt_parse().
 * @return 0, -EBADMSG for a bad checksum, -EINVAL otherwise.
 */
int tcp_frame_check(const struct rte_mbuf *m);

/**
 * Passive open from a SYN the caller held (the transparent proxy answers
 * the client only once the server accepted). The connection starts in
 * SYN-RECEIVED and the SYN-ACK is queued. The mbuf is consumed on success.
 *
 * @param e      engine.
 * @param syn    parsed SYN frame that tcp_input() returned TCP_INPUT_NO_CONN.
 * @param arg    the connection's callback argument.
 * @param now_ns current time.
 * @return the connection, or NULL with rte_errno (EINVAL not a SYN,
 *         EEXIST, ENOSPC pool full, ENOMEM); the caller keeps the mbuf.
 */
struct tcp_conn *tcp_accept(struct tcp_engine *e, struct rte_mbuf *syn,
			    void *arg, uint64_t now_ns);

/**
 * tcp_accept(), with options for the SYN-ACK to carry after the engine's
 * own (a proxy passes on what the server's SYN-ACK carried:
 * tcp_conn_peer_xopts()).
 *
 * @param xopt     whole TCP options, or NULL.
 * @param xopt_len their length, at most TCP_XOPT_MAX (EINVAL beyond).
 */
struct tcp_conn *tcp_accept_xopts(struct tcp_engine *e, struct rte_mbuf *syn,
				  const uint8_t *xopt, uint32_t xopt_len,
				  void *arg, uint64_t now_ns);

/** What a passive open of a held SYN announces (tcp_accept_opts()). */
struct tcp_accept_opts {
	uint16_t mss;               /**< MSS to announce; 0 = the engine's.
	                                 Above the engine's, the engine's. A
	                                 proxy passes on the server's
	                                 (tcp_conn_peer_mss()), so a clamp
	                                 applied to the server's SYN-ACK on its
	                                 way in holds toward the client too */
	uint8_t xopt_len;           /**< bytes used in xopt */
	uint8_t xopt[TCP_XOPT_MAX]; /**< whole options the SYN-ACK carries
	                                 after the engine's own */
	const struct tcp_conn_hooks *hooks; /**< set before the SYN-ACK is
	                                 built (tcp_conn_set_hooks()), or NULL */
	void *hook_owner;           /**< their owner */
};

/**
 * tcp_accept(), with what the SYN-ACK announces set by the caller.
 *
 * @param o what to announce, or NULL for the engine's defaults.
 */
struct tcp_conn *tcp_accept_opts(struct tcp_engine *e, struct rte_mbuf *syn,
				 const struct tcp_accept_opts *o, void *arg,
				 uint64_t now_ns);

/**
 * The MSS the peer's SYN or SYN-ACK announced (536 if it carried none),
 * at most the engine's own MSS for the address family: what the engine
 * uses for its segments, option room included.
 *
 * @param c connection.
 * @return the MSS, or 0 before the peer's SYN or SYN-ACK arrived.
 */
uint16_t tcp_conn_peer_mss(const struct tcp_conn *c);

/**
 * The options of a SYN or SYN-ACK frame that a transparent proxy carries
 * to its other leg, whole and in order, as many as fit in cap bytes:
 * every kind except EOL and NOP, those the engine negotiates on each leg
 * itself (MSS, window scale, SACK-permitted, SACK, timestamps),
 * signatures that cannot survive re-origination (MD5 19, TCP-AO 29),
 * MPTCP (30; terminated, never relayed) and AccECN (172, 174; the engine
 * negotiates no ECN). So TCP Fast Open (34), the experimental kinds 253
 * and 254 and unknown kinds are carried.
 *
 * @param m    parsed TCP frame (pkt_parse()).
 * @param buf  where to copy them.
 * @param cap  size of buf (TCP_XOPT_MAX for an engine SYN or SYN-ACK).
 * @param left if not NULL, set to the carriable options that did not fit.
 * @param carry which kinds to carry (the caller's policy: a proxy
 *             carries no signature and no option it terminates), or NULL
 *             for every kind the engine does not negotiate itself.
 * @return bytes written (0 for a frame without options or a malformed
 *         option area).
 */
uint32_t tcp_syn_xopts(const struct rte_mbuf *m, uint8_t *buf, uint32_t cap,
		       uint32_t *left, tcp_xopt_carry_fn carry);

/**
 * The carriable options (as tcp_syn_xopts() picks them) of the SYN-ACK
 * that established an actively opened connection.
 *
 * @param c   connection.
 * @param buf at least TCP_XOPT_MAX bytes.
 * @return bytes written; 0 before the SYN-ACK, for passive connections,
 *         or when it carried none.
 */
uint32_t tcp_conn_peer_xopts(const struct tcp_conn *c, uint8_t *buf);

/**
 * Answer a frame that has no connection as RFC 9293 3.10.7.1 says (RST
 * unless the frame is itself a RST). The mbuf is not freed.
 *
 * @param e      engine.
 * @param m      parsed frame.
 * @param now_ns current time.
 * @return 0, or -ENOMEM / -ENOBUFS if nothing was queued.
 */
int tcp_reply_rst(struct tcp_engine *e, const struct rte_mbuf *m,
		  uint64_t now_ns);

/**
 * A frame with no connection whose 4-tuple's connection ended by a reset
 * (received, sent, or a timeout's) within params.reset_memory_ns: what
 * was in flight when it ended, which a transparent proxy must not pass
 * on as traffic of no connection. It is answered as the connection's
 * closed port would answer it (tcp_reply_rst(): RST unless it is an RST)
 * and freed, counted as segments_after_reset. A SYN alone (a new
 * connection on the 4-tuple) ends the memory and is left to the caller,
 * as is every frame with no such memory.
 *
 * @param e      engine.
 * @param m      parsed frame with no connection (tcp_conn_lookup()).
 * @param now_ns current time.
 * @return TCP_INPUT_CONSUMED (answered and freed) or TCP_INPUT_NO_CONN
 *         (the caller keeps m).
 */
enum tcp_input_result tcp_input_after_reset(struct tcp_engine *e,
					    struct rte_mbuf *m, uint64_t now_ns);

/**
 * Active open: send a SYN from ep->laddr:lport to ep->raddr:rport.
 *
 * @param e      engine.
 * @param ep     addresses, ports, MACs, DPDK port.
 * @param arg    callback argument.
 * @param now_ns current time.
 * @return the connection (state SYN-SENT), or NULL with rte_errno set
 *         (EINVAL, EEXIST for a 4-tuple in use, ENOSPC pool full).
 */
struct tcp_conn *tcp_connect(struct tcp_engine *e,
			     const struct tcp_endpoints *ep, void *arg,
			     uint64_t now_ns);

struct tcp_conn_hooks;

/**
 * tcp_connect() with the connection's hooks set before its SYN is built
 * (tcp_conn_set_hooks()), so they see and write the SYN's options.
 *
 * @param hooks hooks, or NULL.
 * @param owner their owner.
 */
struct tcp_conn *tcp_connect_hooked(struct tcp_engine *e,
				    const struct tcp_endpoints *ep,
				    const struct tcp_conn_hooks *hooks,
				    void *owner, void *arg, uint64_t now_ns);

/**
 * Queue bytes for sending. Accepts as much as fits in the send buffer;
 * after a short count TCP_EV_WRITABLE says when space appears.
 *
 * @param c      connection (ESTABLISHED or CLOSE-WAIT; SYN states queue).
 * @param data   bytes, copied.
 * @param len    length.
 * @param now_ns current time.
 * @return bytes accepted, or -ENOTCONN / -EPIPE (after shutdown).
 */
int32_t tcp_send(struct tcp_conn *c, const void *data, uint32_t len,
		 uint64_t now_ns);

/**
 * Queue a packet's bytes for sending without copying (the proxy relays
 * what one leg received). All or nothing: the engine takes the whole
 * chain if it fits in the send buffer, else nothing (and reports
 * TCP_EV_WRITABLE later). Every segment's data (data_off, data_len) is
 * payload; headers must have been stripped. The engine never writes
 * their data; it may write a frame's headers into the headroom in
 * front of it (lib/tcp/README.md, "Headers in the headroom"). An mbuf
 * that is a clone (indirect) gets them on its first transmission when
 * its buffer has exactly two references: so an owner that gives clones
 * of one buffer to more than one connection keeps its own reference
 * until each of them has been sent once.
 *
 * @param c      connection.
 * @param m      chain; owned by the engine on success.
 * @param now_ns current time.
 * @return bytes taken (pkt_len), 0 if it does not fit now (the caller
 *         keeps m; TCP_EV_WRITABLE says when it will), -EMSGSIZE if it is
 *         larger than the whole send buffer, or -ENOTCONN / -EPIPE.
 */
int32_t tcp_send_mbuf(struct tcp_conn *c, struct rte_mbuf *m, uint64_t now_ns);

/**
 * Free room in the send buffer. When it is less than want, TCP_EV_WRITABLE
 * will say when want bytes fit (a relay asks for the size of the segment
 * it wants to move next).
 *
 * @param c    connection.
 * @param want bytes the caller wants to queue.
 * @return free bytes now.
 */
uint32_t tcp_send_space(struct tcp_conn *c, uint32_t want);

/**
 * Size of the first received segment waiting in the receive buffer: the
 * smallest max for which tcp_recv_mbuf() returns something.
 *
 * @param c connection.
 * @return bytes, 0 if nothing is waiting.
 */
uint32_t tcp_recv_next_len(const struct tcp_conn *c);

/**
 * Copy in-order received bytes out of the receive buffer. Reading opens
 * the receive window (a window update is sent once it grows enough).
 *
 * @param c      connection.
 * @param buf    destination.
 * @param len    room in buf.
 * @param now_ns current time.
 * @return bytes copied (0 when empty).
 */
uint32_t tcp_recv(struct tcp_conn *c, void *buf, uint32_t len,
		  uint64_t now_ns);

/**
 * Take in-order received bytes without copying: whole received segments
 * (payload only) totalling at most max bytes, as one chain whose head
 * has pkt_len and nb_segs set. Ready for tcp_send_mbuf() on another
 * connection.
 *
 * @param c      connection.
 * @param max    most bytes to take.
 * @param now_ns current time.
 * @return the chain (the caller owns it), or NULL when the receive
 *         buffer is empty or its first segment is larger than max.
 */
struct rte_mbuf *tcp_recv_mbuf(struct tcp_conn *c, uint32_t max, uint64_t now_ns);

/**
 * Half-close: send FIN after every queued byte. Receiving continues.
 * In SYN-SENT and SYN-RECEIVED the FIN waits for the handshake (unlike
 * RFC 9293 CLOSE in SYN-SENT, this never deletes; tcp_abort() does).
 *
 * @param c      connection.
 * @param now_ns current time.
 * @return 0, or -ENOTCONN.
 */
int tcp_shutdown(struct tcp_conn *c, uint64_t now_ns);

/**
 * Abort: send RST (in synchronised states), drop both buffers, and report
 * TCP_EV_CLOSED.
 *
 * @param c      connection.
 * @param now_ns current time.
 */
void tcp_abort(struct tcp_conn *c, uint64_t now_ns);

/**
 * Run expired timers (retransmission, delayed ACK, persist, TIME-WAIT).
 * Call it from the worker loop; the cost is one slot per elapsed tick.
 *
 * @param e      engine.
 * @param now_ns current time.
 * @return timers fired.
 */
uint32_t tcp_timers_run(struct tcp_engine *e, uint64_t now_ns);

/**
 * Take frames the engine wants sent: full Ethernet frames with complete
 * IP and TCP checksums and mbuf->port set. Each carries the pkt_meta
 * pkt_parse(m, pkt_meta(m), m->port) would give it (written as the frame
 * is built: the engine knows what it laid out), so a caller that passes
 * them through stages that read the metadata needs no second parse; it
 * sets in_port to what it means, if not the port they leave by. With
 * TCP_F_TX_NO_META the frames of connections' own segments (data, ACKs,
 * FINs) carry no metadata: nothing may read it.
 *
 * @param e    engine.
 * @param pkts output array.
 * @param max  its size.
 * @return frames written to pkts (the caller owns them).
 */
uint16_t tcp_tx_burst(struct tcp_engine *e, struct rte_mbuf **pkts,
		      uint16_t max);

/** A connection's callback argument. */
void *tcp_conn_arg(const struct tcp_conn *c);

/** A connection's endpoints (addresses as given or learnt from the SYN). */
const struct tcp_endpoints *tcp_conn_endpoints(const struct tcp_conn *c);

/**
 * Snapshot of a connection's state.
 *
 * @param c   connection.
 * @param out filled.
 */
void tcp_conn_get_info(const struct tcp_conn *c, struct tcp_conn_info *out);

/**
 * Memory pressure: offer at most this many bytes of receive window on
 * every connection (at most rcv_buf; rcv_buf again lifts the limit). A
 * window already announced is never taken back (RFC 9293 3.8.6.2.2): it
 * closes as the data it allows arrives and is not read. The owner of
 * the mbuf pool lowers it before the pool runs dry.
 *
 * @param e     engine.
 * @param bytes window limit.
 */
void tcp_engine_set_rcv_limit(struct tcp_engine *e, uint32_t bytes);

/**
 * Memory pressure, per connection: a receive pool. Every connection's
 * announced window is counted for what it still lets in beyond two
 * segments (bytes offered beyond RCV.NXT, less two of the MSS we
 * announced; none once the peer's FIN is in) and the sum is kept
 * (tcp_engine_rcv_offered()). With a pool set, every window has its two
 * segments (the floor, outside the pool) and grows beyond them only
 * into what the sum leaves of the pool: at most half of that, its own
 * offer included, so connections that keep asking share it and one that
 * asks first cannot take it all. What all windows let in is thus at
 * most the pool plus two segments a connection. A SYN or SYN-ACK offers
 * at most 65535, and only the floor once more than half of the pool is
 * offered (half-open connections hold their offer until they open or
 * go). Idle connections give theirs back through
 * tcp_engine_reclaim_idle(). The
 * owner sets the pool from what its mbuf pool has left, as often as it
 * samples it. Applies with tcp_engine_set_rcv_limit(), which still
 * limits every window. The counting starts with the first call: make it
 * before the engine has a connection (an engine never given a pool
 * pays one test per segment for it).
 *
 * @param e     engine.
 * @param bytes the most every window together may still let in;
 *              UINT64_MAX (the default): no pool.
 */
void tcp_engine_set_rcv_pool(struct tcp_engine *e, uint64_t bytes);

/** What every connection's announced window still lets in beyond its
 *  two segments, summed. */
uint64_t tcp_engine_rcv_offered(const struct tcp_engine *e);

/**
 * Take back the windows of idle connections: each of the next `scan`
 * connections of the pool (a cursor walks it, so repeated calls cover
 * every connection; at most the whole pool a call) that received no
 * data for idle_ns (ACKs alone do not count: a leg that only
 * acknowledges needs no window) and offers more than the floor gets its right edge moved back to RCV.NXT plus the
 * floor, announced by an ACK (RFC 9293 3.8.6.2.2: a receiver should not
 * shrink its window, and a sender must cope when it does). The floor
 * holds until data arrives; then the window grows again as the pool
 * allows. Connections with hooks (MPTCP subflows, which announce their
 * meta-connection's window) are taken back too: the floor caps the
 * subflow's own edge. Counted: receive_windows_reclaimed.
 *
 * @return the number of windows taken back.
 */
uint32_t tcp_engine_reclaim_idle(struct tcp_engine *e, uint64_t now_ns,
				 uint64_t idle_ns, uint32_t scan);

/**
 * Announce a window that grew without the reader reading (the owner
 * raised tcp_engine_set_rcv_limit()): an ACK goes out if the window the
 * connection can offer now exceeds the one announced by at least
 * min(rcv_buf/2, MSS), so a sender stopped by a zero window resumes at
 * once instead of at its next zero-window probe.
 *
 * @param c      connection.
 * @param now_ns current time.
 * @return 1 if an update was queued, else 0.
 */
int tcp_window_update(struct tcp_conn *c, uint64_t now_ns);

/**
 * tcp_window_update() on every connection of the engine whose announced
 * window has less than two segments of room: the owner calls it after
 * raising tcp_engine_set_rcv_limit(), so every sender that a shrunken or
 * zero window stopped hears of the room at once. One with two segments
 * of room sends them and hears of the rest on their ACKs; an idle
 * connection is left alone. It walks the connection pool: call it when
 * the limit rises, not per packet.
 *
 * @return the number of updates queued.
 */
uint32_t tcp_engine_window_update(struct tcp_engine *e, uint64_t now_ns);

/** Connections in use (including TIME-WAIT). */
uint32_t tcp_engine_conn_count(const struct tcp_engine *e);

/**
 * Live counters of an engine, indexed by enum tcp_cnt.
 *
 * @param e engine.
 * @return TCP_CNT_MAX counters, valid for the engine's lifetime.
 */
const uint64_t *tcp_engine_counters(const struct tcp_engine *e);

/** Name of a counter ("bad_checksum"), "invalid" out of range. */
const char *tcp_cnt_name(enum tcp_cnt cnt);

/** Bytes of engine-owned state per connection (payload buffers excluded). */
size_t tcp_conn_size(void);

/**
 * Check a connection's internal invariants (for tests and fuzzers; it
 * walks every queue, so not for the datapath): each byte queue's counts
 * match its mbufs, the out-of-order ranges are sorted, apart and above
 * RCV.NXT, the receive side holds at most rcv_buf bytes and rcv_mem of
 * mbuf memory, the send queue at most snd_buf, SND.UNA <= SND.NXT <=
 * SND.MAX, and the retransmission records are in order, between SND.UNA
 * and SND.MAX, counted right, with the SACKed bytes they add up to.
 *
 * @param c connection.
 * @return 0, or a negative number naming the first broken invariant
 *         (its line in tcp_engine.c).
 */
int tcp_conn_check(const struct tcp_conn *c);

/**
 * @defgroup tcp_hooks Extension points for a layer above the engine
 *
 * What a protocol built on TCP subflows (Multipath TCP, RFC 8684) needs
 * from the engine, and nothing specific to it: options in and out of
 * every segment, a receive window set by the owner, a receive queue that
 * keeps segment boundaries, an event when the congestion window opens,
 * and congestion control coupled across connections. A connection with
 * no hooks pays one predictable branch per hook site.
 *
 * Hooks run inside the engine's entry points, on the connection's
 * worker. Unless said otherwise they must not call the engine on the
 * same connection (they record, the owner acts from its own event
 * callback or after the entry point returns).
 * @{
 */

/** Whole TCP option area: 40 bytes (RFC 9293 3.1, data offset <= 15). */
#define TCP_OPT_SPACE 40

/** Kinds of segment the option hooks are asked about (tcp_hook_seg.kind). */
enum tcp_seg_kind {
	TCP_SEG_SYN = 0,   /**< our SYN (active open) */
	TCP_SEG_SYN_ACK,   /**< our SYN-ACK (passive open) */
	TCP_SEG_ACK,       /**< a segment without payload: pure ACK, the
	                        third ACK of an active open, window update,
	                        FIN without data, zero-window or keepalive
	                        probe */
	TCP_SEG_DATA,      /**< a segment with payload (new or resent) */
	TCP_SEG_RST,       /**< a reset the connection sends (tcp_abort(),
	                        a timeout); not the RSTs the engine sends for
	                        segments without a connection */
};

/** A segment as the hooks see it (host order). */
struct tcp_hook_seg {
	uint32_t seq;   /**< first sequence number (the SYN's own on a SYN) */
	uint32_t ack;   /**< acknowledgment number (0 without ACK) */
	uint32_t len;   /**< payload bytes (SYN and FIN not counted) */
	uint8_t flags;  /**< TCP header flags: FIN 0x01, SYN 0x02, RST 0x04,
	                     PSH 0x08, ACK 0x10 */
	uint8_t kind;   /**< enum tcp_seg_kind (outgoing segments) */
	uint8_t retransmit; /**< outgoing: the range was sent before */
	int8_t opt_at;  /**< received: offset in the option area of the
	                     first option of tcp_conn_hooks.opt_kind, -1
	                     if there is none (or no kind is registered) */
	uint8_t opt_n;  /**< received: how many options of that kind */
	uint32_t wnd;   /**< received: the window it announces, scaled */
	uint32_t same_until; /**< outgoing, set by opts_out() (the engine
	                          gives 0): see there */
};

/**
 * Per-connection hooks (tcp_conn_set_hooks()). Any pointer may be NULL.
 * The table is not copied: it must live as long as the connection uses
 * it (one static table per owner type is the intended use).
 */
struct tcp_conn_hooks {
	/**
	 * Options of a received segment, called once the segment passed
	 * PAWS and the sequence acceptability check (RFC 9293 3.10.7.4
	 * step 1), before RST, SYN, ACK and text are processed; on an
	 * active open, for the SYN-ACK that establishes it. Not called for
	 * segments the engine discards before that point.
	 *
	 * The engine walked the option area and dropped the segment if an
	 * option could not be delimited (or had a length its kind does not
	 * allow): every option here is whole. Where the first option of
	 * opt_kind is, and how many there are, is in seg->opt_at and
	 * seg->opt_n, so the owner need not walk the area again.
	 *
	 * @param owner  tcp_conn_set_hooks()'s owner.
	 * @param c      connection.
	 * @param seg    the segment's sequence range, flags, and where its
	 *               option of opt_kind is (kind unset).
	 * @param opt    the raw option area (after the 20-byte header).
	 * @param optlen its length, 0..40.
	 * @param now_ns time of the entry point.
	 */
	void (*opts_in)(void *owner, struct tcp_conn *c,
			const struct tcp_hook_seg *seg, const uint8_t *opt,
			uint32_t optlen, uint64_t now_ns);
	/**
	 * Option bytes the owner wants on a segment of this kind, asked
	 * before the segment is sized: for data, before its payload length
	 * is chosen, so payload plus options stay within the MSS. The
	 * engine rounds it up to a multiple of 4 and grants at most what is
	 * left of 40 bytes after its own options, in this order:
	 *  - SYN, SYN-ACK: MSS, SACK-permitted, timestamps and window scale
	 *    (at most 20 bytes) first, then the hook (so it gets at least
	 *    20), then carried options (tcp_endpoints.xopt) if they still
	 *    fit, else none of them (counted syn_options_not_carried);
	 *  - other segments: timestamps (12) first, then the hook (so at
	 *    least 28), then as many SACK blocks as fit in the rest: with
	 *    timestamps 3 blocks with no hook, 2 with a hook of up to 8
	 *    bytes, 1 up to 16, none beyond (20, 24, 28); without them 4
	 *    up to 4, 3 up to 12, 2 up to 20, 1 up to 28, none beyond.
	 * A data segment resent later is given the same room again as long
	 * as the hook asks for the same space; if it asks more than the
	 * segment left when it was first sized, it gets only that.
	 *
	 * @param owner owner.
	 * @param c     connection.
	 * @param kind  enum tcp_seg_kind.
	 * @return bytes wanted (0: none).
	 */
	uint32_t (*opts_space)(void *owner, struct tcp_conn *c, uint8_t kind);
	/**
	 * Write options into a segment being built (called right after
	 * opts_space() granted room > 0). Write whole, well-formed options
	 * (the engine copies them unchecked: a malformed one makes the peer
	 * drop the segment); the engine pads what is left of a 4-byte word
	 * with NOPs.
	 *
	 * For new data, the hook may also say that what it wrote stands,
	 * byte for byte, for the segments after this one: it sets
	 * seg->same_until to a sequence number, and the engine gives every
	 * later new-data segment of the same output pass (one flush of the
	 * send queue, with nothing received in between) that ends at or
	 * before it the same option bytes, in the same room, without asking
	 * again; a segment that starts before it and ends after is given
	 * that room without opts_space(), and opts_out() writes its options.
	 * An MPTCP subflow does so up to the end of the mapping the segment
	 * starts in. Left 0, the hook is asked for every segment.
	 *
	 * @param owner owner.
	 * @param c     connection.
	 * @param seg   the segment (kind and retransmit set).
	 * @param buf   where to write.
	 * @param room  bytes granted (a multiple of 4, at most 40).
	 * @return bytes written, at most room.
	 */
	uint32_t (*opts_out)(void *owner, struct tcp_conn *c,
			     struct tcp_hook_seg *seg, uint8_t *buf,
			     uint32_t room);
	/**
	 * The receive window the owner can take (a shared, connection-level
	 * window over several subflows). The engine announces the smaller
	 * of it and its own free buffer, so it never offers more than the
	 * connection itself can store; and, as with its own window, a right
	 * edge once announced is never taken back (RFC 9293 3.8.6.2.2).
	 *
	 * @param owner owner.
	 * @param c     connection.
	 * @param own   the window the engine would announce on its own.
	 * @return bytes (larger than own means own).
	 */
	uint32_t (*rcv_wnd)(void *owner, struct tcp_conn *c, uint32_t own);
	/**
	 * The congestion or send window opened: called after an ACK that
	 * advanced SND.UNA or moved the send window was processed and the
	 * engine sent what it had, when tcp_conn_send_room() is > 0. A
	 * scheduler then picks what to queue. It may call tcp_send(),
	 * tcp_send_mbuf() and tcp_conn_send_room() on this connection.
	 *
	 * @param owner  owner.
	 * @param c      connection.
	 * @param room   tcp_conn_send_room(c).
	 * @param now_ns time of the entry point.
	 */
	void (*writable)(void *owner, struct tcp_conn *c, uint32_t room,
			 uint64_t now_ns);
	/**
	 * The option kind opts_in() is told the place of
	 * (tcp_hook_seg.opt_at, .opt_n); 0: none. Any kind but NOP (1);
	 * the engine's own walk finds kinds above 8 (timestamps), which it
	 * does not read itself, at no extra cost; kinds 2 to 8 (among them
	 * MSS, window scale, SACK, timestamps), and an area with several
	 * options of kinds the engine does not read, take a second walk.
	 */
	uint8_t opt_kind;
	/**
	 * May the next in-order data segment of an input burst be read
	 * together with the one held before it (lib/tcp/README.md,
	 * "Runs")? Asked only when the two are alike in everything
	 * the engine reads (sequence numbers that follow on, the same ACK,
	 * window and timestamps, ACK alone or with PSH) and each carries
	 * exactly one option of opt_kind, at the same place in option
	 * areas of the same length, and no other option the engine does
	 * not read. NULL: never (such segments are then read one by one).
	 *
	 * On true, opts_in() is later called once for the run, with the
	 * held segment's option area and the run's whole length: the owner
	 * must have rewritten held so that it says for the run what both
	 * areas said for their own segments (an MPTCP mapping that the
	 * next one continues is extended over it), or have found the two
	 * areas to say the same thing. On false, held must be unchanged.
	 *
	 * @param owner  owner.
	 * @param c      connection.
	 * @param held   the held segment's option area (writable).
	 * @param next   the next segment's option area.
	 * @param optlen the length of each, 0..40.
	 * @param opt_at offset of the option of opt_kind in both.
	 * @return true: merged.
	 */
	bool (*opts_merge)(void *owner, struct tcp_conn *c, uint8_t *held,
			   const uint8_t *next, uint32_t optlen, uint32_t opt_at);
};

/**
 * Set (or with NULL clear) a connection's hooks and their owner.
 *
 * @param c     connection.
 * @param h     hooks, or NULL.
 * @param owner first argument of every hook.
 */
void tcp_conn_set_hooks(struct tcp_conn *c, const struct tcp_conn_hooks *h,
			void *owner);

/**
 * Keep segment boundaries in the receive queue: received segments are
 * never merged into one mbuf (normally a small segment is copied into
 * the tail of the one before), and under memory pressure the queues are
 * not collapsed either (the out-of-order queue is pruned, then the
 * segment dropped, both counted; the sender resends). Each mbuf of the
 * receive queue is then one segment's payload, or a piece of one (a
 * segment that arrived in several mbufs, or whose overlap with bytes
 * already held was trimmed). Read them with tcp_recv_seg(). Set it
 * before data arrives.
 *
 * @param c  connection.
 * @param on true to keep boundaries.
 */
void tcp_conn_keep_segments(struct tcp_conn *c, bool on);

/**
 * Take the first mbuf of the receive queue, with the sequence number
 * of its first byte: with tcp_conn_keep_segments(), one received
 * segment (or piece of one) as it arrived.
 *
 * @param c      connection.
 * @param seq    set to the sequence number of its first byte.
 * @param now_ns current time.
 * @return one mbuf (pkt_len = data_len, nb_segs 1; the caller owns it),
 *         or NULL when the queue is empty.
 */
struct rte_mbuf *tcp_recv_seg(struct tcp_conn *c, uint32_t *seq,
			      uint64_t now_ns);

/**
 * Bytes of new data the engine would send right now if they were
 * queued: the room the congestion window (cwnd less the bytes in
 * flight) and the peer's window (less what is sent and unacknowledged)
 * leave, less the bytes queued and not yet sent. The engine has no
 * pacing, so nothing else limits it. Exact while no segment waits to be
 * resent (those go first); 0 in states that send no data.
 *
 * @param c connection.
 * @return bytes.
 */
uint32_t tcp_conn_send_room(const struct tcp_conn *c);

/**
 * Send a pure ACK now, with the current window and the hooks' options
 * (kind TCP_SEG_ACK): for an owner whose options changed and must reach
 * the peer without waiting for the next segment (a connection-level
 * acknowledgment, a DATA_FIN, the ACK that completes a join). Not from
 * inside a hook of the same connection.
 *
 * @param c      connection.
 * @param now_ns current time.
 * @return 0, or -ENOTCONN in a state that sends no ACK.
 */
int tcp_conn_send_ack(struct tcp_conn *c, uint64_t now_ns);

/** Bytes queued (tcp_send(), tcp_send_mbuf()) and not yet sent once. A
 *  segment never spans two sends queued while this is 0: an owner that
 *  appends only then keeps its own records (MPTCP mappings) aligned with
 *  segments, retransmissions included (they resend what was sent). */
uint32_t tcp_conn_unsent(const struct tcp_conn *c);

/** The connection's state (enum tcp_state). */
uint8_t tcp_conn_state(const struct tcp_conn *c);

/** Consecutive retransmission timeouts of the oldest unacknowledged
 *  segment (0 after any ACK of new data): a path that stopped answering
 *  shows here first. */
uint32_t tcp_conn_rto_streak(const struct tcp_conn *c);

/** Congestion window, bytes. */
uint32_t tcp_conn_cwnd(const struct tcp_conn *c);

/**
 * Respond as to a congestion signal without a loss: the congestion
 * control's reduction (CUBIC's beta, Reno's half) applied now. For an
 * owner that sees this connection hold others up, as MPTCP's
 * penalisation of a subflow that blocks the shared receive window; the
 * owner decides how often (at most once per RTT is the rule there).
 * Nothing happens during loss recovery, which has reduced already, or
 * outside the states that send data.
 *
 * @return 1 if the window was reduced, else 0.
 */
int tcp_conn_cwnd_reduce(struct tcp_conn *c, uint64_t now_ns);

/** Smoothed RTT, ns (0 before the first sample). */
uint64_t tcp_conn_srtt_ns(const struct tcp_conn *c);

/**
 * The connection's round-trip time variation (RFC 6298 RTTVAR), in ns
 * (0 before any sample).
 */
uint64_t tcp_conn_rttvar_ns(const struct tcp_conn *c);

/** Payload bytes per full segment the connection sends (its MSS). */
uint32_t tcp_conn_mss(const struct tcp_conn *c);

/**
 * Payload bytes of a full new data segment: the MSS less the option room
 * the owner's hooks take on data (opts_space for TCP_SEG_DATA, rounded
 * and capped as tcp_conn_hooks says). Equal to tcp_conn_mss() without
 * hooks. An owner that queues data in pieces sizes them in multiples of
 * this so that no piece ends in a short segment: with a hook that takes
 * 28 bytes, a piece of one MSS goes out as a full segment and a 28-byte
 * one.
 */
uint32_t tcp_conn_data_mss(struct tcp_conn *c);

/** Connections one congestion-control group can couple. */
#define TCP_CC_GROUP_MAX 8

/**
 * Coupled congestion control (RFC 6356): connections of one group share
 * the congestion-avoidance increase. The group is the caller's memory
 * (for MPTCP, in the meta-connection); all members belong to one engine.
 * In congestion avoidance (cwnd >= ssthresh, outside loss recovery), an
 * ACK of a member grows its cwnd by increase() instead of the engine's
 * algorithm; slow start, the reduction on loss and on RTO stay the
 * algorithm's (NewReno halves, as RFC 6356 asks; CUBIC reduces by 0.7).
 */
struct tcp_cc_group {
	/**
	 * Congestion-avoidance increase for member c on an ACK of acked
	 * bytes, in 1/65536 byte (the engine carries the fraction to the
	 * next ACK). May read every member's tcp_conn_cwnd(),
	 * tcp_conn_srtt_ns() and tcp_conn_mss(). tcp_cc_lia_increase()
	 * is RFC 6356's.
	 */
	uint64_t (*increase)(const struct tcp_cc_group *g,
			     const struct tcp_conn *c, uint32_t acked);
	void *owner;                             /**< for increase() */
	struct tcp_conn *member[TCP_CC_GROUP_MAX]; /**< n members */
	uint32_t n;
};

/**
 * Make c a member of g (at most TCP_CC_GROUP_MAX), leaving any group it
 * was in. A closing connection leaves its group by itself.
 *
 * @return 0, or -ENOSPC.
 */
int tcp_cc_group_join(struct tcp_cc_group *g, struct tcp_conn *c);

/** Take c out of its group, if it is in one. */
void tcp_cc_group_leave(struct tcp_conn *c);

/**
 * RFC 6356 section 3 (LIA) as a tcp_cc_group.increase: for an ACK of
 * acked bytes on subflow i,
 *   min(alpha * acked * MSS_i / cwnd_total, acked * MSS_i / cwnd_i),
 *   alpha = cwnd_total * max_k(cwnd_k / rtt_k^2) / (sum_k cwnd_k / rtt_k)^2,
 * over the group's members (a member without an RTT sample yet counts
 * with the largest RTT of the others, or 1 ms if none has one).
 */
uint64_t tcp_cc_lia_increase(const struct tcp_cc_group *g,
			     const struct tcp_conn *c, uint32_t acked);

/** @} */

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_TCP_H */
