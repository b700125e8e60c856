/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_TCPOPT_H
#define SLUICE_TCPOPT_H

/**
 * @file
 * TCP option preservation, validation and minimal rewriting.
 *
 * sluice never strips a TCP option it does not know. This library walks the
 * option area of a TCP header (IPv4 or IPv6), validates every kind and
 * length against the data offset, counts what it saw, and rewrites only what
 * policy requires:
 *   - MSS clamping on SYN and SYN/ACK: the 2-byte MSS value is replaced in
 *     place and the TCP checksum is updated incrementally (RFC 1624, eqn. 3);
 *   - per-kind policy: preserve (default), strip (overwrite the option with
 *     NOPs, so lengths and offsets do not move), or drop the segment;
 *   - a separate action for malformed option areas (default: forward
 *     unchanged and count).
 * Every byte that is not rewritten stays identical.
 *
 * A context (struct tcpopt_ctx) holds one policy and its counters. It is
 * owned by one worker lcore; nothing is shared, nothing locks, and the
 * per-packet functions never allocate.
 *
 * Checksums: the incremental update assumes the TCP checksum in the header
 * is complete, which holds for every frame received from a port. When an
 * mbuf asks the NIC to compute the TCP checksum (RTE_MBUF_F_TX_TCP_CKSUM or
 * RTE_MBUF_F_TX_TCP_SEG), the field holds only the pseudo-header sum and
 * must not be touched; tcpopt_process_mbuf() detects this and leaves it.
 * A segment whose checksum was wrong on arrival stays exactly as wrong.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "pkt.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bit n set: an option length of n bytes is valid. */
#define TCPOPT_LEN(n)          (UINT64_C(1) << (n))
/** Every length from a to b inclusive (b <= 63). */
#define TCPOPT_LEN_RANGE(a, b) ((~UINT64_C(0) >> (63 - (b))) & ~(TCPOPT_LEN(a) - 1))

/**
 * The TCP option kinds sluice recognises. Declared once; the X-macro
 * expands into the enum, the names, the length validation table and the
 * counter labels. Columns: enum suffix, kind, name, valid lengths.
 * Any kind not listed is opaque: any length >= 2 is accepted and preserved.
 */
#define TCPOPT_KIND_LIST(X) \
	X(EOL,       0,   "eol",            TCPOPT_LEN(1)) \
	X(NOP,       1,   "nop",            TCPOPT_LEN(1)) \
	X(MSS,       2,   "mss",            TCPOPT_LEN(4)) /* RFC 9293 */ \
	X(WS,        3,   "window_scale",   TCPOPT_LEN(3)) /* RFC 7323 */ \
	X(SACK_PERM, 4,   "sack_permitted", TCPOPT_LEN(2)) /* RFC 2018 */ \
	X(SACK,      5,   "sack",           TCPOPT_LEN(10) | TCPOPT_LEN(18) | \
	                                    TCPOPT_LEN(26) | TCPOPT_LEN(34)) \
	X(TS,        8,   "timestamp",      TCPOPT_LEN(10)) /* RFC 7323 */ \
	X(MD5,       19,  "md5sig",         TCPOPT_LEN(18)) /* RFC 2385 */ \
	X(AO,        29,  "tcp_ao",         TCPOPT_LEN_RANGE(4, 40)) /* RFC 5925 */ \
	X(MPTCP,     30,  "mptcp",          TCPOPT_LEN_RANGE(3, 40)) /* RFC 8684 */ \
	X(TFO,       34,  "fast_open",      TCPOPT_LEN(2) | TCPOPT_LEN(6) | \
	                                    TCPOPT_LEN(8) | TCPOPT_LEN(10) | \
	                                    TCPOPT_LEN(12) | TCPOPT_LEN(14) | \
	                                    TCPOPT_LEN(16) | TCPOPT_LEN(18)) \
	X(ACCECN0,   172, "accecn0",        TCPOPT_LEN(2) | TCPOPT_LEN(5) | \
	                                    TCPOPT_LEN(8) | TCPOPT_LEN(11)) \
	X(ACCECN1,   174, "accecn1",        TCPOPT_LEN(2) | TCPOPT_LEN(5) | \
	                                    TCPOPT_LEN(8) | TCPOPT_LEN(11)) \
	X(EXP1,      253, "experimental_253", TCPOPT_LEN_RANGE(4, 40)) /* RFC 6994 */ \
	X(EXP2,      254, "experimental_254", TCPOPT_LEN_RANGE(4, 40))

/** Known option kinds, e.g. TCPOPT_KIND_MSS == 2. */
enum tcpopt_kind {
#define TCPOPT_KIND_ENUM(e, k, s, l) TCPOPT_KIND_##e = (k),
	TCPOPT_KIND_LIST(TCPOPT_KIND_ENUM)
#undef TCPOPT_KIND_ENUM
};

/**
 * MPTCP option subtypes (RFC 8684, section 3). Columns: enum suffix,
 * subtype, name, valid lengths. A zero mask means the length depends on
 * the option's flags (DSS) and is checked by code.
 */
#define TCPOPT_MPTCP_SUB_LIST(X) \
	X(MP_CAPABLE,   0x0, "mp_capable", TCPOPT_LEN(4) | TCPOPT_LEN(12) | \
	                                   TCPOPT_LEN(20) | TCPOPT_LEN(22) | \
	                                   TCPOPT_LEN(24)) \
	X(MP_JOIN,      0x1, "mp_join",    TCPOPT_LEN(12) | TCPOPT_LEN(16) | \
	                                   TCPOPT_LEN(24)) \
	X(DSS,          0x2, "dss",        0) \
	X(ADD_ADDR,     0x3, "add_addr",   TCPOPT_LEN(8) | TCPOPT_LEN(10) | \
	                                   TCPOPT_LEN(16) | TCPOPT_LEN(18) | \
	                                   TCPOPT_LEN(20) | TCPOPT_LEN(22) | \
	                                   TCPOPT_LEN(28) | TCPOPT_LEN(30)) \
	X(REMOVE_ADDR,  0x4, "remove_addr", TCPOPT_LEN_RANGE(4, 40)) \
	X(MP_PRIO,      0x5, "mp_prio",    TCPOPT_LEN(3) | TCPOPT_LEN(4)) \
	X(MP_FAIL,      0x6, "mp_fail",    TCPOPT_LEN(12)) \
	X(MP_FASTCLOSE, 0x7, "mp_fastclose", TCPOPT_LEN(12)) \
	X(MP_TCPRST,    0x8, "mp_tcprst",  TCPOPT_LEN(4)) \
	X(MP_EXPERIMENTAL, 0xf, "mp_experimental", TCPOPT_LEN_RANGE(3, 40))

/** MPTCP subtypes, e.g. TCPOPT_MPTCP_MP_CAPABLE == 0. */
enum tcpopt_mptcp_sub {
#define TCPOPT_MPTCP_ENUM(e, v, s, l) TCPOPT_MPTCP_##e = (v),
	TCPOPT_MPTCP_SUB_LIST(TCPOPT_MPTCP_ENUM)
#undef TCPOPT_MPTCP_ENUM
};

/**
 * 16-bit experiment identifiers carried by kinds 253/254 (RFC 6994).
 * Columns: enum suffix, ExID, name.
 */
#define TCPOPT_EXID_LIST(X) \
	X(TFO, 0xF989, "fast_open") /* RFC 7413, section 4.1.1 */

/** Known ExIDs. */
enum tcpopt_exid {
#define TCPOPT_EXID_ENUM(e, v, s) TCPOPT_EXID_##e = (v),
	TCPOPT_EXID_LIST(TCPOPT_EXID_ENUM)
#undef TCPOPT_EXID_ENUM
};

/**
 * Why an option area is malformed. Columns: enum suffix, counter name.
 * Walking stops at the first malformed option: what follows cannot be
 * delimited, so nothing in such a segment is rewritten.
 */
#define TCPOPT_MAL_LIST(X) \
	X(NONE,            "none") \
	X(HDR_TRUNCATED,   "header_truncated")       /* < 20 bytes available */ \
	X(DOFF_SHORT,      "data_offset_below_5") \
	X(DOFF_PAST_END,   "data_offset_past_end")   /* doff*4 > bytes available */ \
	X(LEN_BELOW_2,     "length_below_2")         /* length 0 or 1, multi-byte kind */ \
	X(LEN_PAST_HEADER, "length_past_header")     /* kind+len runs past doff */ \
	X(TRUNCATED,       "truncated_option")       /* kind is the last byte: no length */ \
	X(BAD_KIND_LEN,    "bad_length_for_kind")    /* e.g. MSS with length != 4 */ \
	X(BAD_MPTCP_LEN,   "bad_length_for_mptcp_subtype")

/** Malformed reasons. */
enum tcpopt_mal {
#define TCPOPT_MAL_ENUM(e, s) TCPOPT_MAL_##e,
	TCPOPT_MAL_LIST(TCPOPT_MAL_ENUM)
#undef TCPOPT_MAL_ENUM
	TCPOPT_MAL_MAX
};

/**
 * Rewrites and other events, counted in tcpopt_counters.event[].
 * Columns: enum suffix, counter name.
 */
#define TCPOPT_EVENT_LIST(X) \
	X(MSS_CLAMPED,       "mss_clamped") \
	X(STRIPPED,          "stripped")           /* options overwritten with NOPs */ \
	X(DROPPED_BY_POLICY, "dropped_by_policy")  /* segments */ \
	X(DROPPED_MALFORMED, "dropped_malformed")  /* segments */ \
	X(CSUM_OFFLOADED,    "rewrite_csum_left_to_nic") \
	X(REWRITE_SKIPPED,   "rewrite_skipped_shared_mbuf") \
	X(NO_TCP_HEADER,     "skipped_no_tcp_header") /* not TCP, later fragment */ \
	X(CLAMP_SKIPPED_SIGNED, "clamp_skipped_signed") /* MD5 / TCP-AO would break */

/** Events. */
enum tcpopt_event {
#define TCPOPT_EVENT_ENUM(e, s) TCPOPT_EV_##e,
	TCPOPT_EVENT_LIST(TCPOPT_EVENT_ENUM)
#undef TCPOPT_EVENT_ENUM
	TCPOPT_EV_MAX
};

/** Segment classes counters are split by. */
enum tcpopt_seg {
	TCPOPT_SEG_SYN = 0, /**< SYN without ACK */
	TCPOPT_SEG_SYNACK,  /**< SYN with ACK */
	TCPOPT_SEG_OTHER,   /**< everything else */
	TCPOPT_SEG_MAX
};

/** What to do with a segment carrying an option of a given kind. */
enum tcpopt_action {
	TCPOPT_ACT_PRESERVE = 0, /**< forward it byte for byte (default) */
	TCPOPT_ACT_STRIP,        /**< overwrite the option with NOPs */
	TCPOPT_ACT_DROP,         /**< drop the whole segment */
	TCPOPT_ACT_MAX
};

/** Per-packet outcome. */
enum tcpopt_verdict {
	TCPOPT_FORWARD = 0, /**< send it on (possibly rewritten) */
	TCPOPT_DROP,        /**< policy says drop; the caller frees it */
};

/** Largest TCP option area in bytes (data offset 15). */
#define TCPOPT_SPACE_MAX 40
/** Most options that fit in 40 bytes (all NOPs). */
#define TCPOPT_MAX_OPTS  40

/** Lowest MSS clamp accepted (the Linux minimum, TCP_MIN_MSS). */
#define TCPOPT_MSS_MIN   88
/** Lowest MTU accepted when the clamp is given as an MTU. */
#define TCPOPT_MTU_MIN   576

/**
 * Counters of one context. Plain integers owned by one lcore; another
 * lcore may read them for telemetry (64-bit loads do not tear on the
 * platforms DPDK supports) but never writes them.
 */
struct tcpopt_counters {
	/** TCP segments inspected, by class. */
	uint64_t segments[TCPOPT_SEG_MAX];
	/** Options seen, by class and kind (each occurrence counts). */
	uint64_t kind[TCPOPT_SEG_MAX][256];
	/** MPTCP options seen, by class and subtype. */
	uint64_t mptcp_sub[TCPOPT_SEG_MAX][16];
	/** Malformed option areas, by reason (index 0 stays 0). */
	uint64_t malformed[TCPOPT_MAL_MAX];
	/** Rewrites and drops, by enum tcpopt_event. */
	uint64_t event[TCPOPT_EV_MAX];
	/**
	 * MPTCP health pair: SYNs carrying MP_CAPABLE against SYN/ACKs
	 * carrying MP_CAPABLE. Far fewer SYN/ACKs than SYNs on a path means
	 * servers do not speak MPTCP, or something past sluice strips it.
	 */
	uint64_t syn_mp_capable;
	uint64_t synack_mp_capable; /**< see syn_mp_capable */
};

/** Parameters of tcpopt_create() / tcpopt_init(). Zero means default. */
struct tcpopt_params {
	/**
	 * Clamp the MSS of SYN and SYN/ACK to this value (both IP versions).
	 * 0: no clamp, unless mtu is set. At least TCPOPT_MSS_MIN.
	 */
	uint16_t mss_clamp;
	/**
	 * Or: clamp so segments fit this IP MTU, i.e. MSS = mtu - 40 over
	 * IPv4 and mtu - 60 over IPv6 (fixed headers, no options). At least
	 * TCPOPT_MTU_MIN. Setting both mss_clamp and mtu is an error.
	 */
	uint16_t mtu;
	/** TCPOPT_ACT_* per kind. Strip is refused for EOL and NOP. */
	uint8_t kind_action[256];
	/** For malformed option areas: TCPOPT_ACT_PRESERVE or _DROP. */
	uint8_t malformed_action;
	/** NUMA socket for tcpopt_create() (SOCKET_ID_ANY allowed). */
	int socket_id;
};

/** Opaque per-instance context: policy + counters. */
struct tcpopt_ctx;

/** One option as found by tcpopt_parse(). */
struct tcpopt_opt {
	uint8_t  kind;
	uint8_t  len;   /**< total length; 1 for EOL and NOP */
	uint8_t  off;   /**< offset of the kind byte from the TCP header */
	uint8_t  sub;   /**< MPTCP subtype (kind 30), else 0 */
	uint16_t exid;  /**< ExID (kinds 253/254), else 0; host order */
};

/** Result of tcpopt_parse(). */
struct tcpopt_parsed {
	uint8_t hdr_len;   /**< data offset in bytes; 0 if the header is bad */
	uint8_t tcp_flags; /**< byte 13 of the header (0 if truncated) */
	uint8_t seg;       /**< enum tcpopt_seg */
	uint8_t malformed; /**< enum tcpopt_mal */
	uint8_t mal_off;   /**< offset of the offending byte when malformed */
	uint8_t n;         /**< options in opt[] (the valid ones before any error) */
	struct tcpopt_opt opt[TCPOPT_MAX_OPTS];
};

/** Rewrite bits in tcpopt_result.rewrites. */
#define TCPOPT_RW_MSS   0x01 /**< MSS value clamped */
#define TCPOPT_RW_STRIP 0x02 /**< at least one option overwritten with NOPs */

/** Per-segment outcome of tcpopt_process(). */
struct tcpopt_result {
	uint8_t  verdict;    /**< enum tcpopt_verdict */
	uint8_t  seg;        /**< enum tcpopt_seg */
	uint8_t  malformed;  /**< enum tcpopt_mal */
	uint8_t  rewrites;   /**< TCPOPT_RW_* done */
	/** MSS value seen, 0 if none. With several MSS options (odd, but
	 *  legal to parse), the last one, which is what Linux honours. */
	uint16_t mss_before;
	/** Value forwarded for that option: the clamp, mss_before, or 0 if
	 *  it was stripped. */
	uint16_t mss_after;
};

/** tcpopt_process() flags. */
#define TCPOPT_F_CSUM_PARTIAL 0x1 /**< checksum left to the NIC: rewrite bytes only */
#define TCPOPT_F_READONLY     0x2 /**< count and judge, never write (shared buffer) */

/**
 * Fill params with defaults: no clamp, preserve every kind, forward
 * malformed segments, any socket.
 *
 * @param p parameters to reset.
 */
void tcpopt_params_init(struct tcpopt_params *p);

/**
 * Bytes of memory a context needs (for tcpopt_init()).
 *
 * @return size in bytes.
 */
size_t tcpopt_ctx_size(void);

/**
 * Build a context in caller-provided memory (boot time). Lets tests and
 * fuzzers run without the EAL.
 *
 * @param mem    tcpopt_ctx_size() bytes, aligned to RTE_CACHE_LINE_SIZE.
 * @param params policy; copied.
 * @return the context, or NULL with rte_errno = EINVAL for a bad
 *         parameter (clamp too small, both mss_clamp and mtu, unknown
 *         action, strip on EOL/NOP, strip as malformed action).
 */
struct tcpopt_ctx *tcpopt_init(void *mem, const struct tcpopt_params *params);

/**
 * Allocate and build a context with rte_zmalloc_socket() (boot time; the
 * EAL must be up).
 *
 * @param params policy; copied.
 * @return the context, or NULL with rte_errno set (EINVAL, ENOMEM).
 */
struct tcpopt_ctx *tcpopt_create(const struct tcpopt_params *params);

/**
 * Free a context from tcpopt_create(). NULL is ignored.
 *
 * @param ctx context.
 */
void tcpopt_free(struct tcpopt_ctx *ctx);

/**
 * Validate a parameter set without building anything.
 *
 * @param params policy.
 * @return 0, or -EINVAL.
 */
int tcpopt_params_check(const struct tcpopt_params *params);

/**
 * The MSS clamp a context applies for an IP version.
 *
 * @param ctx        context.
 * @param ip_version 4 or 6.
 * @return the clamp, 0 if none.
 */
uint16_t tcpopt_mss_clamp(const struct tcpopt_ctx *ctx, uint8_t ip_version);

/**
 * The MSS that fills an MTU with fixed IP and TCP headers.
 *
 * @param mtu        IP MTU in bytes.
 * @param ip_version 4 (mtu - 40) or 6 (mtu - 60).
 * @return the MSS, 0 if the MTU is too small to carry a header.
 */
uint16_t tcpopt_mss_from_mtu(uint16_t mtu, uint8_t ip_version);

/**
 * Walk and validate the options of one TCP header without a context:
 * nothing is counted, nothing is written.
 *
 * @param tcp   start of the TCP header.
 * @param avail bytes readable from tcp (the rest of the IP payload). The
 *              walker never reads beyond min(avail, data offset * 4).
 * @param out   result; out->n options are valid even when malformed.
 * @return TCPOPT_MAL_NONE, or the reason the header or options are
 *         malformed (also in out->malformed).
 */
enum tcpopt_mal tcpopt_parse(const uint8_t *tcp, uint32_t avail,
			     struct tcpopt_parsed *out);

/**
 * Inspect, count, and rewrite per policy the options of one TCP header in
 * a raw buffer. This is what every other entry point calls; it needs no
 * EAL.
 *
 * Order: options are validated and counted in one walk. A segment with an
 * option whose kind has the drop action is dropped. A malformed segment
 * takes the malformed action and is never rewritten. Otherwise options
 * with the strip action become NOPs, then a SYN or SYN/ACK whose MSS
 * exceeds the clamp gets the clamp. Only rewritten bytes and the checksum
 * change; the checksum is updated incrementally (RFC 1624, eqn. 3), so no
 * pseudo header is needed.
 *
 * @param ctx        context (counters are updated).
 * @param tcp        start of the TCP header; written only on rewrite.
 * @param avail      bytes available from tcp to the end of the IP payload.
 * @param ip_version 4 or 6: selects the clamp derived from an MTU.
 * @param mss_clamp  clamp for this segment (e.g. a subscriber's); 0 uses
 *                   the context's clamp for ip_version.
 * @param flags      TCPOPT_F_*.
 * @param res        optional per-segment outcome (may be NULL).
 * @return TCPOPT_FORWARD or TCPOPT_DROP (the caller frees the segment).
 */
enum tcpopt_verdict tcpopt_process(struct tcpopt_ctx *ctx, uint8_t *tcp,
				   uint32_t avail, uint8_t ip_version,
				   uint16_t mss_clamp, uint32_t flags,
				   struct tcpopt_result *res);

/**
 * tcpopt_process() on an mbuf parsed by pkt_parse() (struct pkt_meta in
 * its private area). A frame without a TCP header (not TCP, a later
 * fragment) is forwarded untouched and counted as skipped_no_tcp_header;
 * one whose TCP header pkt_parse() found truncated or with a bad data
 * offset is classified and counted as malformed. The checksum is left
 * alone when the mbuf requests TX TCP checksum offload or TSO, and nothing
 * is written into an indirect or shared (refcnt > 1) mbuf.
 *
 * @param ctx       context.
 * @param m         parsed frame; headers in the first segment.
 * @param mss_clamp per-segment clamp, 0 for the context's.
 * @param res       optional outcome.
 * @return TCPOPT_FORWARD or TCPOPT_DROP (the mbuf is not freed).
 */
enum tcpopt_verdict tcpopt_process_mbuf(struct tcpopt_ctx *ctx,
					struct rte_mbuf *m, uint16_t mss_clamp,
					struct tcpopt_result *res);

/**
 * Process a burst of parsed mbufs with the context's clamp. Dropped mbufs
 * are freed (and counted); the survivors are compacted to the front of
 * pkts[] in their original order. This is what a pipeline stage calls.
 *
 * @param ctx  context.
 * @param pkts mbufs, parsed by pkt_parse().
 * @param n    number of mbufs.
 * @return number of mbufs left in pkts[].
 */
uint16_t tcpopt_burst(struct tcpopt_ctx *ctx, struct rte_mbuf **pkts,
		      uint16_t n);

/**
 * lib/pkt's classification (pkt_classify_burst()) and tcpopt_burst() in
 * one pass over a burst of frames as they came from rx: the same bytes,
 * counters and survivors as pkt_classify_burst() followed by
 * tcpopt_burst(), for fewer cycles. Each header is read once, and each
 * segment's metadata is tested while the parser's stores of it are still
 * in flight (perf/README.md, tcpopt). The classification itself is
 * lib/pkt's (pkt_classify_stops(), pkt_classify_one()); this only fuses
 * it with the option pass.
 *
 * The pass stops where pkt_classify_burst() would, before the first frame
 * that is chained (nb_segs > 1) or longer than c->max_frame, and leaves
 * that frame and the ones after it unparsed and untouched, for the
 * caller's general path. Frames that pkt_parse() rejects are counted in
 * c->err_count and still go through tcpopt_process_mbuf(), as in
 * tcpopt_burst().
 *
 * @param ctx  context.
 * @param pkts frames, not yet parsed.
 * @param n    number of frames.
 * @param c    the classification's port, frame limit and counters.
 * @param rest set to the number of frames not looked at.
 * @return k: pkts[0..k) are the survivors of the frames looked at
 *         (dropped ones are freed and counted), in their original order,
 *         and pkts[k..k + *rest) the frames not looked at, in theirs.
 */
uint16_t tcpopt_parse_burst(struct tcpopt_ctx *ctx, struct rte_mbuf **pkts,
			    uint16_t n, const struct pkt_classify *c,
			    uint16_t *rest);

/**
 * The live counters of a context.
 *
 * @param ctx context.
 * @return pointer valid for the context's lifetime.
 */
const struct tcpopt_counters *tcpopt_counters(const struct tcpopt_ctx *ctx);

/**
 * Zero the counters of a context (owner lcore only).
 *
 * @param ctx context.
 */
void tcpopt_counters_reset(struct tcpopt_ctx *ctx);

/**
 * Add src into dst, e.g. to sum the contexts of every worker.
 *
 * @param dst accumulator.
 * @param src counters to add.
 */
void tcpopt_counters_add(struct tcpopt_counters *dst,
			 const struct tcpopt_counters *src);

/**
 * Name of a known option kind.
 *
 * @param kind option kind.
 * @return e.g. "mss", or NULL for a kind not in TCPOPT_KIND_LIST.
 */
const char *tcpopt_kind_name(uint8_t kind);

/**
 * Option kind from a config string: a name from TCPOPT_KIND_LIST or a
 * decimal number 0-255.
 *
 * @param name string.
 * @return the kind, or -EINVAL.
 */
int tcpopt_kind_from_name(const char *name);

/**
 * Name of an MPTCP subtype.
 *
 * @param sub subtype 0-15.
 * @return e.g. "mp_capable", or NULL if not in TCPOPT_MPTCP_SUB_LIST.
 */
const char *tcpopt_mptcp_sub_name(uint8_t sub);

/**
 * Name of an experiment identifier (kinds 253/254).
 *
 * @param exid ExID, host order.
 * @return e.g. "fast_open", or NULL if not in TCPOPT_EXID_LIST.
 */
const char *tcpopt_exid_name(uint16_t exid);

/**
 * Counter name of a malformed reason.
 *
 * @param mal reason.
 * @return e.g. "length_past_header"; "invalid" out of range.
 */
const char *tcpopt_mal_name(enum tcpopt_mal mal);

/**
 * Counter name of an event.
 *
 * @param ev event.
 * @return e.g. "mss_clamped"; "invalid" out of range.
 */
const char *tcpopt_event_name(enum tcpopt_event ev);

/**
 * Name of a segment class.
 *
 * @param seg class.
 * @return "syn", "synack" or "other"; "invalid" out of range.
 */
const char *tcpopt_seg_name(enum tcpopt_seg seg);

/**
 * Name of an action.
 *
 * @param act action.
 * @return "preserve", "strip" or "drop"; "invalid" out of range.
 */
const char *tcpopt_action_name(enum tcpopt_action act);

/**
 * Action from a config string.
 *
 * @param name "preserve", "strip" or "drop".
 * @return the action, or -EINVAL.
 */
int tcpopt_action_from_name(const char *name);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_TCPOPT_H */
