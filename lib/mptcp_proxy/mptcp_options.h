/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MPTCP_OPTIONS_H
#define MPTCP_OPTIONS_H

/**
 * @file
 * Parse and write every MPTCP option (TCP option kind 30, RFC 8684 §3) in
 * one place.
 *
 * The parser validates each option's length against its subtype, its
 * flags and the kind of segment it came in (SYN, SYN/ACK or other), and
 * names every malformation (MPTCP_OPT_ERR_LIST). The writers produce the
 * exact wire form and never write past the space they are given. Values
 * are host order in struct mptcp_opt; 32-bit DSNs and DATA_ACKs stay
 * 32-bit there, and mptcp_expand_seq() widens them.
 *
 * Nothing here allocates or keeps state; counters belong to the caller.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** TCP option kind of MPTCP. */
#define MPTCP_OPT_KIND 30
/** MPTCP version this library speaks. */
#define MPTCP_VERSION_1 1

/**
 * MPTCP subtypes. Columns: enum suffix, value, name.
 */
#define MPTCP_SUB_LIST(X) \
	X(MP_CAPABLE,      0x0, "mp_capable") \
	X(MP_JOIN,         0x1, "mp_join") \
	X(DSS,             0x2, "dss") \
	X(ADD_ADDR,        0x3, "add_addr") \
	X(REMOVE_ADDR,     0x4, "remove_addr") \
	X(MP_PRIO,         0x5, "mp_prio") \
	X(MP_FAIL,         0x6, "mp_fail") \
	X(MP_FASTCLOSE,    0x7, "mp_fastclose") \
	X(MP_TCPRST,       0x8, "mp_tcprst") \
	X(MP_EXPERIMENTAL, 0xf, "mp_experimental")

/** Subtypes, e.g. MPTCP_SUB_DSS == 2. */
enum mptcp_sub {
#define MPTCP_SUB_ENUM(e, v, s) MPTCP_SUB_##e = (v),
	MPTCP_SUB_LIST(MPTCP_SUB_ENUM)
#undef MPTCP_SUB_ENUM
};

/**
 * Why an MPTCP option was rejected. Columns: enum suffix, counter name.
 * The same table names the counters (struct mptcp_opt_counters).
 */
#define MPTCP_OPT_ERR_LIST(X) \
	X(NONE,                "none") \
	X(TRUNCATED,           "truncated")              /* < 3 bytes, or length past the buffer */ \
	X(NOT_MPTCP,           "not_kind_30") \
	X(LEN_BELOW_3,         "length_below_3")         /* no room for the subtype */ \
	X(UNKNOWN_SUBTYPE,     "unknown_subtype")        /* 9-14: to be ignored, RFC 8684 §3 */ \
	X(MPC_VERSION,         "mp_capable_unsupported_version") \
	X(MPC_NO_HMAC_SHA256,  "mp_capable_no_hmac_sha256") /* flag H clear */ \
	X(MPC_LEN,             "mp_capable_bad_length") \
	X(MPC_LEN_FOR_SEGMENT, "mp_capable_length_wrong_for_segment") \
	X(JOIN_LEN,            "mp_join_bad_length") \
	X(JOIN_LEN_FOR_SEGMENT, "mp_join_length_wrong_for_segment") \
	X(DSS_LEN,             "dss_length_disagrees_with_flags") \
	X(ADD_ADDR_LEN,        "add_addr_bad_length") \
	X(REMOVE_ADDR_LEN,     "remove_addr_no_address_id") \
	X(PRIO_LEN,            "mp_prio_bad_length") \
	X(FAIL_LEN,            "mp_fail_bad_length") \
	X(FASTCLOSE_LEN,       "mp_fastclose_bad_length") \
	X(TCPRST_LEN,          "mp_tcprst_bad_length") \
	X(AREA_MALFORMED,      "option_area_malformed")  /* a non-MPTCP option cannot be delimited */ \
	X(DUPLICATE,           "duplicate_subtype")      /* second option of one subtype in a segment */

/** Parse errors: 0 is success, the rest are reasons. */
enum mptcp_opt_err {
#define MPTCP_OPT_ERR_ENUM(e, s) MPTCP_OPT_ERR_##e,
	MPTCP_OPT_ERR_LIST(MPTCP_OPT_ERR_ENUM)
#undef MPTCP_OPT_ERR_ENUM
	MPTCP_OPT_ERR_MAX
};

/** Counters of rejected options, indexed by enum mptcp_opt_err. */
struct mptcp_opt_counters {
	uint64_t err[MPTCP_OPT_ERR_MAX];
};

/* MP_CAPABLE flags (RFC 8684 §3.1). */
#define MPTCP_MPC_FLAG_A 0x80 /**< checksum required */
#define MPTCP_MPC_FLAG_B 0x40 /**< extensibility */
#define MPTCP_MPC_FLAG_C 0x20 /**< do not join to the source address */
#define MPTCP_MPC_FLAG_H 0x01 /**< HMAC-SHA256 */

/* DSS flags (RFC 8684 §3.3). */
#define MPTCP_DSS_DATA_ACK   0x01 /**< A: DATA_ACK present */
#define MPTCP_DSS_ACK64      0x02 /**< a: DATA_ACK is 8 bytes */
#define MPTCP_DSS_MAP        0x04 /**< M: DSN, subflow seq, length (+csum) */
#define MPTCP_DSS_DSN64      0x08 /**< m: DSN is 8 bytes */
#define MPTCP_DSS_DATA_FIN   0x10 /**< F: DATA_FIN */
#define MPTCP_DSS_FLAGS      0x1f

/* MP_TCPRST flags (RFC 8684 §3.6). */
#define MPTCP_TCPRST_T 0x1 /**< transient: the error may go away */

/** MP_TCPRST reason codes (RFC 8684 §3.6). Columns: suffix, code, name. */
#define MPTCP_TCPRST_REASON_LIST(X) \
	X(UNSPECIFIED,   0x00, "unspecified") \
	X(MPTCP_ERROR,   0x01, "mptcp_specific_error") \
	X(NO_RESOURCES,  0x02, "lack_of_resources") \
	X(PROHIBITED,    0x03, "administratively_prohibited") \
	X(TOO_MUCH_DATA, 0x04, "too_much_outstanding_data") \
	X(PERFORMANCE,   0x05, "unacceptable_performance") \
	X(MIDDLEBOX,     0x06, "middlebox_interference")

/** Reason codes of MP_TCPRST. */
enum mptcp_tcprst_reason {
#define MPTCP_TCPRST_ENUM(e, v, s) MPTCP_TCPRST_##e = (v),
	MPTCP_TCPRST_REASON_LIST(MPTCP_TCPRST_ENUM)
#undef MPTCP_TCPRST_ENUM
};

/** Which form of a handshake option, chosen by the segment's flags. */
enum mptcp_form {
	MPTCP_FORM_SYN,      /**< SYN without ACK */
	MPTCP_FORM_SYNACK,   /**< SYN with ACK */
	MPTCP_FORM_ACK,      /**< MP_CAPABLE third ACK, MP_JOIN third ACK */
	MPTCP_FORM_DATA,     /**< MP_CAPABLE with data-level length */
};

/** Most address IDs one REMOVE_ADDR can carry (40-byte option area). */
#define MPTCP_RM_ADDR_MAX 37

/** One parsed MPTCP option. Fields not carried by the option are 0. */
struct mptcp_opt {
	uint8_t sub;   /**< enum mptcp_sub */
	uint8_t len;   /**< length on the wire */
	union {
		struct {
			uint8_t form;       /**< enum mptcp_form */
			uint8_t version;
			uint8_t flags;      /**< MPTCP_MPC_FLAG_* */
			bool has_csum;      /**< DATA form: checksum present */
			uint16_t data_len;  /**< DATA form */
			uint16_t csum;      /**< DATA form with has_csum */
			uint64_t key_snd;   /**< SYN/ACK, ACK, DATA */
			uint64_t key_rcv;   /**< ACK, DATA */
		} mpc;
		struct {
			uint8_t form;       /**< SYN, SYNACK or ACK */
			bool backup;        /**< B: SYN, SYNACK */
			uint8_t addr_id;    /**< SYN, SYNACK */
			uint32_t token;     /**< SYN: the receiver's token */
			uint32_t nonce;     /**< SYN, SYNACK: the sender's random number */
			uint64_t hmac64;    /**< SYNACK: leftmost 64 bits */
			uint8_t hmac[20];   /**< ACK: leftmost 160 bits */
		} join;
		struct {
			uint8_t flags;      /**< MPTCP_DSS_* */
			bool has_csum;      /**< with MAP: checksum present */
			uint16_t data_len;  /**< with MAP; 0 is the infinite mapping */
			uint16_t csum;
			uint32_t ssn;       /**< with MAP: relative subflow sequence */
			uint64_t data_ack;  /**< 32 bits unless MPTCP_DSS_ACK64 */
			uint64_t dsn;       /**< 32 bits unless MPTCP_DSS_DSN64 */
		} dss;
		struct {
			bool echo;          /**< E: no HMAC */
			bool has_port;
			bool ipv6;
			uint8_t addr_id;
			uint16_t port;
			uint8_t addr[16];   /**< network order; first 4 bytes for IPv4 */
			uint64_t hmac64;    /**< when !echo */
		} add_addr;
		struct {
			uint8_t n;          /**< 1..MPTCP_RM_ADDR_MAX */
			uint8_t ids[MPTCP_RM_ADDR_MAX];
		} rm_addr;
		struct {
			bool backup;
			bool has_addr_id;   /**< RFC 6824's 4-byte form */
			uint8_t addr_id;
		} prio;
		struct {
			uint64_t dsn;
		} fail;
		struct {
			uint64_t key_rcv;   /**< the option receiver's key */
		} fastclose;
		struct {
			uint8_t flags;      /**< U V W T, MPTCP_TCPRST_T */
			uint8_t reason;     /**< enum mptcp_tcprst_reason */
		} tcprst;
	} u;
};

/**
 * Parse one MPTCP option.
 *
 * @param p          the option, from its kind byte.
 * @param avail      bytes readable at p (the rest of the option area).
 * @param tcp_flags  the segment's TCP flags byte (SYN 0x02, ACK 0x10):
 *                   MP_CAPABLE and MP_JOIN have one length per segment.
 * @param out        filled on success, zeroed first in every case.
 * @return MPTCP_OPT_ERR_NONE, or why the option is invalid. out->len is
 *         the option's length whenever it could be read, so that a
 *         caller can skip it.
 */
enum mptcp_opt_err mptcp_opt_parse(const uint8_t *p, size_t avail,
				   uint8_t tcp_flags, struct mptcp_opt *out);

/** Every MPTCP option of one segment, by subtype. */
struct mptcp_opts {
	uint16_t present;              /**< bit (1 << sub) per valid option */
	uint8_t n_err;                 /**< options rejected; saturates at 255 */
	uint8_t first_err;             /**< enum mptcp_opt_err of the first */
	struct mptcp_opt mpc, join, dss, add_addr, rm_addr, prio, fail,
			 fastclose, tcprst;
};

/**
 * Walk a TCP option area and parse every MPTCP option in it. A rejected
 * option is counted and skipped (RFC 8684 §3: invalid options are
 * ignored); a second option of a subtype already seen is rejected as
 * DUPLICATE. The walk stops if the area itself cannot be delimited.
 *
 * @param opts       first option byte (after the 20-byte TCP header).
 * @param len        bytes of options (data offset * 4 - 20).
 * @param tcp_flags  the segment's TCP flags byte.
 * @param out        results; zeroed first.
 * @param cnt        if not NULL, err[] is incremented per rejection.
 * @return number of valid MPTCP options found.
 */
unsigned int mptcp_opts_parse(const uint8_t *opts, size_t len, uint8_t tcp_flags,
			      struct mptcp_opts *out, struct mptcp_opt_counters *cnt);

/**
 * Write one MPTCP option. The length comes from the fields (form, flags,
 * has_csum, echo, has_port, ipv6, n), not from o->len.
 *
 * @param o      what to write. MP_EXPERIMENTAL cannot be written.
 * @param buf    where.
 * @param space  bytes available at buf.
 * @return bytes written; -ENOSPC if they do not fit in space; -EINVAL if
 *         o cannot be written (unknown subtype or form, n out of range).
 */
int mptcp_opt_write(const struct mptcp_opt *o, uint8_t *buf, size_t space);

/**
 * Wire length of an option as mptcp_opt_write() would write it.
 * @return the length, or -EINVAL.
 */
int mptcp_opt_len(const struct mptcp_opt *o);

/**
 * Widen a 32-bit sequence number (a DSN or DATA_ACK sent in 32 bits) to
 * the 64-bit value nearest to an expected one: the result has low 32
 * bits seq32 and lies in [expected - 2^31, expected + 2^31). Arithmetic
 * is modulo 2^64, as the data sequence space is.
 */
static inline uint64_t
mptcp_expand_seq(uint64_t expected, uint32_t seq32)
{
	return expected + (uint64_t)(int64_t)(int32_t)(seq32 - (uint32_t)expected);
}

/** Name of a subtype, e.g. "dss"; NULL if unknown. */
const char *mptcp_sub_name(uint8_t sub);
/** Counter name of a parse error; "invalid" out of range. */
const char *mptcp_opt_err_name(enum mptcp_opt_err err);
/** Name of an MP_TCPRST reason code; NULL if unassigned. */
const char *mptcp_tcprst_reason_name(uint8_t reason);

#ifdef __cplusplus
}
#endif

#endif /* MPTCP_OPTIONS_H */
