/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MPTCP_PROXY_H
#define MPTCP_PROXY_H

/**
 * @file
 * lib/mptcp_proxy: a transparent TCP-terminating proxy, and (issue 16)
 * transparent Multipath TCP (RFC 8684) termination on top of it.
 *
 * The public header of the library. It exports:
 * - mptcp_crypto.h: keys, tokens, IDSNs, the MP_JOIN and ADD_ADDR HMACs
 *   and the DSS checksum;
 * - mptcp_options.h: parsing and writing of every MPTCP option;
 * - mptcp_redirect.h: which worker owns a subflow, and the table of the
 *   subflows a worker hands to their owners;
 * - below: the proxy. One context per worker holds a lib/tcp engine with
 *   both legs of every proxied connection. Frames go in by burst
 *   (mptcp_proxy_input_burst()), timers run and frames come out in
 *   mptcp_proxy_poll(). The relay splices two endpoints through
 *   struct mptcp_proxy_endpoint_ops, so a plain engine connection and
 *   (later) an MPTCP connection are interchangeable on either leg.
 *
 * This header needs no DPDK header: DPDK types are only named here.
 * Frames given to the proxy carry lib/pkt metadata (pkt_parse()).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mptcp_crypto.h"
#include "mptcp_options.h"
#include "mptcp_redirect.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rte_mbuf;
struct rte_mempool;

/** The proxy of one worker (opaque). */
struct mptcp_proxy;

/** Most intercept rules a proxy takes. */
#define MPTCP_PROXY_MAX_RULES 64

/**
 * One intercept rule: a SYN toward family/addr/plen (and port, unless 0)
 * from the subscriber side is proxied. Parsed by the caller (sluice's
 * [proxy] intercept, app/stage_proxy.c); host bits beyond plen are ignored.
 */
struct mptcp_proxy_rule {
	uint8_t family;   /**< 4 or 6 */
	uint8_t plen;     /**< prefix length */
	uint16_t port;    /**< destination port, 0 = any */
	uint8_t addr[16]; /**< network byte order */
};

/**
 * Hands frame m to worker `worker`, which owns its MPTCP connection
 * (params.handover). 0: taken, the callee owns m (and counts it if it
 * must drop it later); < 0: not taken, the proxy keeps m and acts as
 * with no hand-over (a join is refused with RST).
 */
typedef int (*mptcp_proxy_handover_fn)(void *arg, struct rte_mbuf *m, uint16_t worker);

/** What mptcp_proxy_create() builds. */
struct mptcp_proxy_params {
	const char *name;            /**< unique per process (engine name) */
	int socket_id;
	struct rte_mempool *pool;    /**< frames the proxy builds; also sampled
				      *   for memory pressure */
	uint32_t max_conns;          /**< proxied connections (pairs of legs) */
	uint32_t snd_buf, rcv_buf;   /**< per leg, bytes */
	uint8_t cc;                  /**< enum tcp_cc (tcp.h) */
	uint8_t syn_retries;
	/** Least retransmission timeout of every leg and subflow (RFC 6298
	 *  2.4); 0: the engine's default, 200 ms. */
	uint64_t rto_min_ns;
	uint64_t idle_timeout_ns;    /**< 0: never */
	uint64_t fin_wait2_timeout_ns; /**< 0: never */
	uint64_t persist_timeout_ns; /**< 0: never */
	/** After a connection ends by a reset (either end's, or a
	 *  timeout's), its legs' 4-tuples are remembered this long: what was
	 *  still in flight for them is answered as a closed port answers it
	 *  (RST; an RST is dropped) and counted (tcp_segments_after_reset),
	 *  not bridged to the other end as traffic of no connection. Two per
	 *  connection of max_conns; beyond, the oldest are forgotten
	 *  (tcp_resets_forgotten_memory_full). 0: off. */
	uint64_t reset_memory_ns;
	/** With the table full, a SYN takes the place of the oldest
	 *  connection still half open (the server not answered yet, or the
	 *  client not past its handshake) once that one is this old: a flood
	 *  of spoofed SYNs holds the table for this long, not for the SYN
	 *  retries' minutes. 0: never (such SYNs are bridged). */
	uint64_t half_open_yield_ns;
	/** mbufs of pool the proxy may hold (all workers together): past
	 *  a quarter of it the receive window of every leg shrinks, to zero at
	 *  the budget. 0: no limit. */
	uint32_t mbuf_budget;
	/** Once more than half of what is left of mbuf_budget is offered,
	 *  a leg that received no data for this long gives its receive
	 *  window back, down to two segments (tcp_engine_reclaim_idle());
	 *  0: 200 ms. Shorter takes windows from legs that pause within a
	 *  transfer (a request-response exchange, a sender waiting on its
	 *  application), which then grow again one round trip later;
	 *  longer leaves the pool to idle legs for that long. */
	uint64_t rcv_reclaim_idle_ns;
	/** Build every frame in one mbuf, the payload copied (for ports that
	 *  cannot send chained mbufs); false: a data segment is a header mbuf
	 *  followed by indirect mbufs of the send buffer (no copy), each taken
	 *  from pool while the frame is on its way out. */
	bool tx_copy;
	/** The frames the proxy sends (mptcp_proxy_poll()'s emit) go to a
	 *  port with nothing reading their pkt_meta: the engine leaves it
	 *  unwritten on its connections' segments (TCP_F_TX_NO_META, about
	 *  80 instructions a frame). false: each carries the metadata
	 *  pkt_parse() would give it. */
	bool tx_no_meta;
	uint8_t isn_key[16];         /**< ISN and SYN-cookie secret */
	/** Terminate MPTCP (RFC 8684) on intercepted SYNs that ask for it;
	 *  false: answer them as plain TCP (counted). */
	bool mptcp;
	uint8_t max_subflows;        /**< per MPTCP connection, 1..8 (0: 8) */
	/** Couple the subflows' congestion control (RFC 6356 LIA); false:
	 *  each subflow runs cc on its own, as Linux's MPTCP does. */
	bool mptcp_lia;
	/** Refuse DSS checksums: a client that asks for them (MP_CAPABLE A)
	 *  gets plain TCP (mptcp_fallback_checksum_requested). false: they
	 *  are used (RFC 8684 3.3.1). */
	bool mptcp_csum_off;
	/** Announce to MPTCP clients an MSS MPTCP_FALLBACK_MSS_ROOM (28) bytes
	 *  smaller than the server's: room for the DSS a client puts on a
	 *  full-sized segment after it fell back (the infinite mapping,
	 *  RFC 8684 3.7; Linux sizes that segment for no option at all).
	 *  With it, a fallback on data without DSS tells the client with
	 *  MP_FAIL; false: sluice only falls back, and a client whose DSS is
	 *  stripped on its way to sluice keeps speaking MPTCP. */
	bool mptcp_fallback_mss_room;
	/** Token bits naming the worker (mptcp_crypto.h), and this worker. */
	uint8_t worker_bits;
	uint16_t worker_id;
	/** Subflows that RSS brings to this worker while their token names
	 *  another (mptcp_redirect.h): handover gets their frames, and up
	 *  to redirect_entries of them are remembered, an established one
	 *  until idle for redirect_idle_ns (0: never). handover NULL or
	 *  redirect_entries 0: such a join is refused with RST. */
	mptcp_proxy_handover_fn handover;
	void *handover_arg;
	uint32_t redirect_entries;
	uint64_t redirect_idle_ns;
	uint32_t nrules;
	const struct mptcp_proxy_rule *rules; /**< copied */
};

/** The proxy's counters (each names a cause; see config/proxy.ini). */
#define MPTCP_PROXY_CNT_LIST(X) \
	X(SYN_INTERCEPTED, "syn_intercepted") \
	X(OPENED,          "connections_opened") \
	X(REFUSED,         "connections_refused") \
	X(UNREACHABLE,     "connections_unreachable") \
	X(RESET,           "connections_reset") \
	X(CLOSED,          "connections_closed") \
	X(SYN_DUPLICATE,   "syn_duplicates_dropped") \
	X(BRIDGED_FULL,    "syn_bridged_table_full") \
	X(HALF_OPEN_EVICTED, "half_open_evicted") \
	X(BRIDGED_FAILED,  "syn_bridged_connect_failed") \
	X(ACCEPT_FAILED,   "accept_failed") \
	X(RELAY_FAILED,    "relay_failed") \
	X(SIGNED_BRIDGED,  "syn_bridged_signed") \
	X(XOPT_CARRIED,    "syn_options_carried") \
	X(XOPT_DROPPED,    "syn_options_not_carried") \
	X(ABORTED_AT_EXIT, "aborted_at_exit") \
	X(NOT_OWNED,       "segments_not_owned") \
	X(FRAG_PASSED,     "fragments_passed") \
	X(MALF_PASSED,     "malformed_passed") \
	X(PRESSURE_MS,     "memory_pressure_ms") \
	X(WND_REOPENED,    "windows_reopened") \
	X(BYTES_UP,        "bytes_up") \
	X(BYTES_DOWN,      "bytes_down") \
	X(MPTCP_SYN,       "mptcp_syn_mp_capable") \
	X(MPTCP_ESTABLISHED, "mptcp_connections_established") \
	X(MPTCP_SYNACK_SENT, "mptcp_synack_mp_capable_sent") \
	X(MPTCP_FALLBACK_OFF, "mptcp_answered_plain_mptcp_off") \
	X(MPTCP_FALLBACK_CSUM, "mptcp_fallback_checksum_requested") \
	X(MPTCP_FALLBACK_NO_MPC_ACK, "mptcp_fallback_no_mp_capable_ack") \
	X(MPTCP_FALLBACK_NO_DSS, "mptcp_fallback_data_without_dss") \
	X(MPTCP_FALLBACK_INFINITE, "mptcp_fallback_infinite_mapping") \
	X(MPTCP_FALLBACK_ACK_NO_DSS, "mptcp_fallback_ack_without_dss") \
	X(MPTCP_CSUM_CONN, "mptcp_connections_checksummed") \
	X(MPTCP_CSUM_OK,   "mptcp_checksums_verified") \
	X(MPTCP_CSUM_FAIL, "mptcp_checksums_failed") \
	X(MPTCP_CSUM_MISSING, "mptcp_checksums_missing") \
	X(MPTCP_FAIL_OUT,  "mptcp_mp_fail_sent") \
	X(MPTCP_CSUM_FAIL_RESET, "mptcp_checksum_failure_resets") \
	X(MPTCP_INF_MAP_OUT, "mptcp_infinite_mappings_sent") \
	X(MPTCP_TABLE_FULL, "mptcp_answered_plain_table_full") \
	X(MPTCP_KEY_FAIL,  "mptcp_key_generation_failed") \
	X(MPTCP_BAD_KEY,   "mptcp_mp_capable_wrong_key") \
	X(MPTCP_JOIN_SYN,  "mptcp_join_syn_accepted") \
	X(MPTCP_JOIN_OK,   "mptcp_joins_established") \
	X(MPTCP_JOIN_BAD_TOKEN, "mptcp_joins_unknown_token") \
	X(MPTCP_JOIN_BAD_HMAC, "mptcp_joins_bad_hmac") \
	X(MPTCP_JOIN_OVER_LIMIT, "mptcp_joins_over_limit") \
	X(MPTCP_JOIN_OTHER_WORKER, "mptcp_joins_other_worker") \
	X(MPTCP_OPT_ERR,   "mptcp_options_malformed") \
	X(MPTCP_NO_MAPPING, "mptcp_bytes_without_mapping") \
	X(MPTCP_TX_NO_MAPPING, "mptcp_segments_sent_without_mapping") \
	X(MPTCP_DUP_BYTES, "mptcp_bytes_duplicate") \
	X(MPTCP_AFTER_FIN, "mptcp_bytes_after_data_fin") \
	X(MPTCP_RCV_DROPPED, "mptcp_bytes_dropped_beyond_window") \
	X(MPTCP_REINJECTED, "mptcp_bytes_reinjected") \
	X(MPTCP_HOL_REINJECT, "mptcp_window_blocked_reinjections") \
	X(MPTCP_PENALISED, "mptcp_subflows_penalised") \
	X(MPTCP_DATA_RTO,  "mptcp_data_level_retransmissions") \
	X(MPTCP_DATA_RTO_BACKOFF, "mptcp_data_level_rto_backoffs") \
	X(MPTCP_DATA_RTO_EARLY, "mptcp_data_level_early_retransmissions") \
	X(MPTCP_DATA_ZWP,  "mptcp_data_window_probes") \
	X(MPTCP_NO_MBUF,   "mptcp_mbuf_alloc_failed") \
	X(MPTCP_SF_STALE,  "mptcp_subflows_stale") \
	X(MPTCP_SF_RESET,  "mptcp_subflows_reset") \
	X(MPTCP_SF_TIMEOUT, "mptcp_subflows_timed_out") \
	X(MPTCP_ADD_ADDR,  "mptcp_add_addr_received") \
	X(MPTCP_ADD_ADDR_BAD_HMAC, "mptcp_add_addr_bad_hmac") \
	X(MPTCP_ADD_ADDR_ECHO, "mptcp_add_addr_echoed") \
	X(MPTCP_RM_ADDR,   "mptcp_remove_addr_received") \
	X(MPTCP_PRIO,      "mptcp_mp_prio_received") \
	X(MPTCP_FASTCLOSE_IN, "mptcp_fastclose_received") \
	X(MPTCP_FASTCLOSE_OUT, "mptcp_fastclose_sent") \
	X(MPTCP_TCPRST_IN, "mptcp_tcprst_received") \
	X(MPTCP_FAIL_IN,   "mptcp_mp_fail_received") \
	X(MPTCP_DATA_FIN_IN, "mptcp_data_fin_received") \
	X(MPTCP_DATA_FIN_OUT, "mptcp_data_fin_sent") \
	X(MPTCP_JOIN_HANDED, "mptcp_joins_handed_over") \
	X(MPTCP_SF_HANDED, "mptcp_subflow_segments_handed_over") \
	X(MPTCP_HANDED_IN, "mptcp_segments_from_other_workers") \
	X(MPTCP_REDIRECT_FULL, "mptcp_redirect_table_full")

/** Index of a counter in mptcp_proxy_stats.cnt[]. */
enum mptcp_proxy_cnt {
#define MPTCP_PROXY_CNT_ENUM(e, s) MPTCP_PROXY_CNT_##e,
	MPTCP_PROXY_CNT_LIST(MPTCP_PROXY_CNT_ENUM)
#undef MPTCP_PROXY_CNT_ENUM
	MPTCP_PROXY_CNT_MAX
};

/** A snapshot of the proxy (mptcp_proxy_stats_get()). */
struct mptcp_proxy_stats {
	uint64_t cnt[MPTCP_PROXY_CNT_MAX];
	uint32_t active;       /**< proxied connections now */
	uint32_t engine_conns; /**< engine connections: legs and TIME-WAIT */
	uint32_t mbufs_held;   /**< pool mbufs beyond those in use at create */
	uint32_t rcv_limit;    /**< receive window limit in force */
	uint64_t rcv_pool;     /**< bytes this worker's windows may let in
				*   (UINT64_MAX: no budget) */
	uint64_t rcv_offered;  /**< bytes they let in now beyond two
				    segments each (tcp_engine_rcv_offered()) */
	uint32_t mptcp_active; /**< MPTCP connections now */
	uint32_t mptcp_subflows; /**< their subflows now */
	uint32_t mptcp_redirects; /**< subflows passed on to their owner
				   *   worker, remembered now */
};

/**
 * Build a proxy. Allocates (boot only).
 * @return the proxy, or NULL with rte_errno set.
 */
struct mptcp_proxy *mptcp_proxy_create(const struct mptcp_proxy_params *p);

/**
 * Take a burst of frames that arrived on one port. Frames of proxied
 * connections, and SYNs the rules intercept, are consumed; the rest
 * (other traffic, bridged connections, fragments) pass unchanged.
 *
 * @param upstream  true: the frames come from the subscriber side
 *                  (intercepted SYNs arrive this way).
 * @param out_port  the port the frames would leave by, bridged: a server
 *                  leg opened by an intercepted SYN sends out of it.
 * @return the frames that pass, moved to the front of pkts in order;
 *         the proxy owns the others.
 */
uint16_t mptcp_proxy_input_burst(struct mptcp_proxy *px, struct rte_mbuf **pkts,
				 uint16_t n, bool upstream, uint16_t out_port,
				 uint64_t now_ns);

/**
 * Take frames another worker handed to this one (params.handover there):
 * segments of subflows of this worker's MPTCP connections, which arrived
 * on the other worker from the subscriber side. They are handled as if
 * they had arrived here; none is handed on again.
 * @return the frames that pass (no connection took them), moved to the
 *         front of pkts in order: send them on as a bridge would, out of
 *         the other port of the pair they arrived on (m->port ^ 1).
 */
uint16_t mptcp_proxy_input_handed(struct mptcp_proxy *px, struct rte_mbuf **pkts,
				  uint16_t n, uint64_t now_ns);

/** Receives what the proxy sends: frames with m->port the port to leave
 *  by; the callee owns them. */
typedef void (*mptcp_proxy_emit_fn)(void *arg, struct rte_mbuf **pkts, uint16_t n);

/**
 * Run timers and memory pressure, and emit every frame waiting to be
 * sent (by bursts of at most 32).
 */
void mptcp_proxy_poll(struct mptcp_proxy *px, uint64_t now_ns,
		      mptcp_proxy_emit_fn emit, void *arg);

/**
 * Shutdown: reset both legs of every proxied connection (the ends learn
 * at once that the proxy is gone, counted as aborted_at_exit) and emit
 * the RSTs. The proxy stays valid for stats; it passes every frame from
 * then on.
 */
void mptcp_proxy_shutdown(struct mptcp_proxy *px, uint64_t now_ns,
			  mptcp_proxy_emit_fn emit, void *arg);

/** Copy the counters and gauges (from the owning worker only). */
void mptcp_proxy_stats_get(const struct mptcp_proxy *px,
			   struct mptcp_proxy_stats *s);

/** The lib/tcp engine's counters: TCP_CNT_MAX values (tcp.h). */
const uint64_t *mptcp_proxy_tcp_counters(const struct mptcp_proxy *px);

/** Name of a counter ("syn_intercepted"). */
const char *mptcp_proxy_cnt_name(enum mptcp_proxy_cnt c);

/** Bytes of state per proxied connection, legs not included. */
size_t mptcp_proxy_pair_size(void);

/** Bytes of state of an MPTCP connection with n subflows, the engine's
 *  connections and payload not included. */
size_t mptcp_proxy_mptcp_conn_size(unsigned n);

/** Free the proxy, its connections and the frames it holds. NULL is fine. */
void mptcp_proxy_free(struct mptcp_proxy *px);

/**
 * @name Endpoints
 * The relay splices two endpoints. An endpoint is a byte stream end that
 * receives and sends whole segments as mbuf chains: a lib/tcp connection
 * (mptcp_proxy_tcp_endpoint), later an MPTCP connection. ctx is the
 * endpoint's own object.
 * @{
 */
struct mptcp_proxy_endpoint_ops {
	/** Bytes of the first received segment waiting (0: none). */
	uint32_t (*readable)(void *ctx);
	/** Take whole received segments of at most max bytes (NULL: none fit). */
	struct rte_mbuf *(*recv)(void *ctx, uint32_t max, uint64_t now_ns);
	/** Free send room; less than want: a writable event follows. */
	uint32_t (*send_space)(void *ctx, uint32_t want);
	/** Queue a chain to send; bytes taken (> 0), or <= 0 (not taken). */
	int32_t (*send)(void *ctx, struct rte_mbuf *m, uint64_t now_ns);
	/** Send FIN after the queued bytes. */
	void (*shutdown)(void *ctx, uint64_t now_ns);
	/** Reset. */
	void (*abort)(void *ctx, uint64_t now_ns);
};

/** An endpoint: its ops and its object (ctx NULL: none). */
struct mptcp_proxy_endpoint {
	const struct mptcp_proxy_endpoint_ops *ops;
	void *ctx;
};

/** The ops of a lib/tcp connection (ctx: struct tcp_conn *). */
extern const struct mptcp_proxy_endpoint_ops mptcp_proxy_tcp_endpoint;
/** @} */

#ifdef __cplusplus
}
#endif
#endif /* MPTCP_PROXY_H */
