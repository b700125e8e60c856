/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_PKT_H
#define SLUICE_PKT_H

/**
 * @file
 * Packet parsing shared by every sluice stage.
 *
 * pkt_parse() walks Ethernet, up to two VLAN tags (802.1Q / 802.1ad QinQ),
 * a PPPoE session header, IPv4 (with options) or IPv6 (with extension
 * headers), and TCP / UDP / ICMP / ICMPv6. It fills a struct pkt_meta that
 * lives in the mbuf's private area (see pkt_meta()), so every later stage
 * reads the offsets and the 5-tuple without parsing again.
 *
 * The parser never writes to the packet, never reads past pkt_len, and only
 * reads the first segment (headers must sit in it; a frame whose headers
 * straddle segments is flagged PKT_ERR_SEGMENTED and forwarded unchanged).
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What the parser found at layer 3. */
enum pkt_l3 {
	PKT_L3_NONE = 0, /**< not IP: ARP, LLDP, unknown ethertype... */
	PKT_L3_IPV4 = 4,
	PKT_L3_IPV6 = 6,
};

/**
 * Why a frame is malformed. Declared once; used for enum, names and
 * counters. A malformed frame is still forwarded (unless policy drops it).
 */
#define PKT_ERR_LIST(X) \
	X(NONE,        "none") \
	X(TRUNC_L2,    "truncated_l2") \
	X(TRUNC_VLAN,  "truncated_vlan") \
	X(VLAN_DEPTH,  "too_many_vlans") \
	X(TRUNC_PPPOE, "truncated_pppoe") \
	X(PPPOE_LEN,   "pppoe_bad_length") \
	X(TRUNC_IP,    "truncated_ip") \
	X(IP_VERSION,  "ip_bad_version") \
	X(IP_HDRLEN,   "ipv4_bad_ihl") \
	X(IP_TOTLEN,   "ip_bad_total_length") \
	X(IP_CSUM,     "ipv4_bad_checksum") \
	X(EXTHDR,      "ipv6_bad_ext_header") \
	X(EXT_DEPTH,   "ipv6_too_many_ext_headers") \
	X(TRUNC_L4,    "truncated_l4") \
	X(TCP_DOFF,    "tcp_bad_data_offset") \
	X(UDP_LEN,     "udp_bad_length") \
	X(SEGMENTED,   "headers_not_in_first_segment")

enum pkt_err {
#define PKT_ERR_ENUM(e, s) PKT_ERR_##e,
	PKT_ERR_LIST(PKT_ERR_ENUM)
#undef PKT_ERR_ENUM
	PKT_ERR_MAX
};

/** Flags set in pkt_meta.flags. */
#define PKT_F_VLAN      0x0001 /**< at least one VLAN tag */
#define PKT_F_QINQ      0x0002 /**< two VLAN tags */
#define PKT_F_PPPOE     0x0004 /**< PPPoE session header */
#define PKT_F_IPV4_OPTS 0x0008 /**< IPv4 header longer than 20 bytes */
#define PKT_F_IPV6_EXT  0x0010 /**< IPv6 extension headers present */
#define PKT_F_FRAGMENT  0x0020 /**< IP fragment: no L4 header unless first */
#define PKT_F_L4        0x0040 /**< l4_off/ports are valid */
#define PKT_F_MALFORMED 0x0080 /**< err != PKT_ERR_NONE */
#define PKT_F_TCP_SYN   0x0100 /**< TCP with the SYN flag */
#define PKT_F_TCP_NOOPT 0x0200 /**< TCP header of 20 bytes: no options */
#define PKT_F_TCP_TSOPT 0x0400 /**< TCP options are exactly NOP NOP TS (RFC 7323 app. A) */
#define PKT_F_HASHED    0x0800 /**< flow_hash is set (see pkt_flow_hash()) */

/**
 * Parsed metadata, kept in the mbuf private area.
 * Addresses are stored as 16 bytes; IPv4 uses the first 4 and zero-fills.
 */
struct pkt_meta {
	uint32_t flow_hash;  /**< pkt_flow_hash() once PKT_F_HASHED is set */
	uint16_t flags;      /**< PKT_F_* */
	uint8_t  l3;         /**< enum pkt_l3 */
	uint8_t  l4_proto;   /**< IPPROTO_* of the transport header, 0 if none */
	uint8_t  err;        /**< enum pkt_err */
	uint8_t  vlan_count; /**< 0, 1 or 2 */
	uint16_t ethertype;  /**< innermost ethertype (host order) */
	uint16_t l3_off;     /**< offset of the IP header from the frame start */
	uint16_t l4_off;     /**< offset of the TCP/UDP/ICMP header */
	uint16_t l4_len;     /**< TCP/UDP header length (TCP: doff*4) */
	uint16_t payload_off;/**< offset of the L4 payload */
	uint32_t l3_len;     /**< IP datagram length claimed by the header */
	uint16_t sport;      /**< host order, 0 if no ports */
	uint16_t dport;
	uint16_t vlan_tci[2];/**< outer, inner (host order) */
	uint8_t  src[16];
	uint8_t  dst[16];
	uint16_t in_port;    /**< port the frame arrived on */
	/*
	 * Scratch fields: the parser never writes them, and each has exactly
	 * one owner, the only code that writes it (lib/pkt/README.md). A new
	 * user adds a field of its own rather than borrow one.
	 */
	uint16_t out_port;   /**< owner app/stage_aqm: the port a packet it
			      *   queued or handed off leaves by */
	uint32_t pipe;       /**< owner app/stage_aqm: the pipe id of a packet
			      *   it queued or handed to the worker that owns
			      *   the pipe */
	uint64_t enq_ns;     /**< owner lib/aqm: when the packet was queued;
			      *   valid while it is and when it leaves */
} __rte_aligned(8);

/** Bytes of mbuf private area sluice reserves (rounded for mempools). */
#define PKT_META_PRIV_SIZE RTE_ALIGN(sizeof(struct pkt_meta), RTE_MBUF_PRIV_ALIGN)

/** The metadata of an mbuf allocated from a pool with PKT_META_PRIV_SIZE. */
static inline struct pkt_meta *
pkt_meta(struct rte_mbuf *m)
{
	return (struct pkt_meta *)rte_mbuf_to_priv(m);
}

/** The full parser behind pkt_parse(); call pkt_parse() instead. */
enum pkt_err pkt_parse_full(const struct rte_mbuf *m, struct pkt_meta *meta,
			    uint16_t in_port);

/**
 * Parse one frame and fill its metadata.
 *
 * Frames whose ethertype is neither IP, VLAN nor PPPoE session (ARP, LLDP,
 * ...) take an inline fast path: meta then holds l3 = PKT_L3_NONE, the
 * ethertype, in_port, and zero flags, err, l4_proto and vlan_count; the
 * offsets, ports and addresses are not filled and must not be read (every
 * stage checks l3 first). No path computes the flow hash: the stages that
 * need it call pkt_flow_hash().
 *
 * @param m       frame; only read.
 * @param meta    output.
 * @param in_port port it arrived on (stored in meta).
 * @return the error (PKT_ERR_NONE when well formed).
 */
/** Whether the full walk is needed for an outer ethertype. */
static inline bool
pkt_ethertype_walked(uint16_t et)
{
	switch (et) {
	case 0x0800: /* IPv4 */
	case 0x86DD: /* IPv6 */
	case 0x8100: /* 802.1Q */
	case 0x88A8: /* 802.1ad */
	case 0x9100: /* pre-standard QinQ */
	case 0x8864: /* PPPoE session */
		return true;
	default:
		return false;
	}
}

static inline enum pkt_err
pkt_parse(const struct rte_mbuf *m, struct pkt_meta *meta, uint16_t in_port)
{
	if (likely(m->data_len >= 14)) {
		const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
		uint16_t et = (uint16_t)(d[12] << 8 | d[13]);
		if (!pkt_ethertype_walked(et)) {
			meta->flags = 0;
			meta->l3 = PKT_L3_NONE;
			meta->l4_proto = 0;
			meta->err = PKT_ERR_NONE;
			meta->vlan_count = 0;
			meta->ethertype = et;
			meta->in_port = in_port;
			return PKT_ERR_NONE;
		}
	}
	return pkt_parse_full(m, meta, in_port);
}

/**
 * Parse a raw buffer (same rules); used by tests and fuzzers.
 * @param len bytes available at data (== frame length).
 */
enum pkt_err pkt_parse_buf(const uint8_t *data, uint32_t len,
			   struct pkt_meta *meta, uint16_t in_port);

/**
 * The full header walk alone, without pkt_parse()'s fast path for common
 * shapes. Tests and the fuzzer use it as the reference the fast path must
 * match byte for byte.
 */
enum pkt_err pkt_parse_buf_walk(const uint8_t *data, uint32_t len,
				struct pkt_meta *meta, uint16_t in_port);

/**
 * The metadata of a TCP frame its maker laid out itself, exactly as
 * pkt_parse() would fill it, without reading more than the fields it
 * reports and without checks. For a builder that knows what it wrote
 * (lib/tcp), so that its frames need no second parse before the stages
 * after it. The frame must be: Ethernet with vlan_count (0 to 2) tags
 * whose TPIDs pkt_parse() walks (0x8100, 0x88a8, 0x9100); IPv4 of 20
 * bytes, not fragmented, or IPv6 without extension headers; a TCP
 * header whose data offset bytes lie in the first segment; lengths that
 * agree with pkt_len. Anything else must be parsed.
 *
 * @param m          the frame; only read.
 * @param meta       output.
 * @param in_port    stored in meta.
 * @param vlan_count tags after the MAC addresses.
 */
void pkt_meta_tcp_built(const struct rte_mbuf *m, struct pkt_meta *meta,
			uint16_t in_port, uint8_t vlan_count);

/** Stable name of an error, e.g. "truncated_ip". */
const char *pkt_err_name(enum pkt_err e);

/**
 * Direction-symmetric 32-bit hash of the 5-tuple in meta: a flow and its
 * reverse hash the same. seed perturbs it.
 */
uint32_t pkt_tuple_hash(const struct pkt_meta *meta, uint32_t seed);

/**
 * The Toeplitz hash that receive-side scaling computes (Microsoft's RSS
 * specification): for every bit of data set, counted from the most
 * significant bit of data[0], the 32 bits of key that start at that bit
 * are XORed into the result. This is what a NIC computes over the fields
 * its hash type selects, so software can tell which rx queue a packet
 * will reach (app/port.c steers by subscriber with it).
 * @param key     at least len + 4 bytes
 * @param data    the hashed fields, in network byte order, in the order
 *                the NIC takes them (source address before destination)
 */
uint32_t pkt_rss_hash(const uint8_t *key, const uint8_t *data, uint32_t len);

/**
 * The flow hash of a parsed frame: pkt_tuple_hash(meta, 0) for an IP frame
 * (even a malformed one hashes what was found, so a queue can still place
 * it), 0 otherwise. Computed on first use and kept in meta->flow_hash
 * (PKT_F_HASHED): most packets never need it, so the parser does not pay
 * for it.
 */
static inline uint32_t
pkt_flow_hash(struct pkt_meta *meta)
{
	if (!(meta->flags & PKT_F_HASHED)) {
		meta->flow_hash = meta->l3 != PKT_L3_NONE ?
				  pkt_tuple_hash(meta, 0) : 0;
		meta->flags |= PKT_F_HASHED;
	}
	return meta->flow_hash;
}

/**
 * Whether the NIC computes m's TCP checksum (checksum offload or TSO): the
 * field then holds only the pseudo-header sum, which an incremental update
 * must leave alone.
 */
static inline bool
pkt_tcp_csum_partial(const struct rte_mbuf *m)
{
	return (m->ol_flags & RTE_MBUF_F_TX_L4_MASK) == RTE_MBUF_F_TX_TCP_CKSUM ||
	       (m->ol_flags & RTE_MBUF_F_TX_TCP_SEG);
}

/**
 * Whether another mbuf may point at m's data (an indirect or external
 * buffer, or a reference held elsewhere): writing into it would change
 * that packet too.
 */
static inline bool
pkt_data_shared(const struct rte_mbuf *m)
{
	return !RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1;
}

/**
 * @name Classification of received frames
 * What the worker does to every frame rx gives it, before any stage: parse
 * it and count what the parse found. A stage that fuses this pass with its
 * own work (lib/tcpopt's tcpopt_parse_burst()) builds on the same inline
 * steps, so both count alike and stop at the same frame.
 * @{
 */

/** A classification pass: where the frames came from and what it counts. */
struct pkt_classify {
	uint16_t in_port;    /**< port the frames arrived on (pkt_meta.in_port) */
	uint32_t max_frame;  /**< stop before a frame longer than this */
	uint64_t *err_count; /**< [PKT_ERR_MAX]: +1 per frame pkt_parse()
			      *   rejects, at its enum pkt_err */
	uint64_t *non_ip;    /**< +1 per frame parsed without error, not IP */
};

/**
 * Whether a pass stops before m: a chained frame or one longer than
 * max_frame. Such frames are the caller's general path (its size and
 * segment policy); the pass leaves them, and the ones after, unparsed.
 */
static __rte_always_inline bool
pkt_classify_stops(const struct rte_mbuf *m, uint32_t max_frame)
{
	return m->nb_segs > 1 || m->pkt_len > max_frame;
}

/**
 * One frame of a pass: parse it into pkt_meta(m) and count it. A frame
 * pkt_parse() rejects is counted in c->err_count; a non-IP one in
 * *non_ip, a local the caller adds to *c->non_ip once per burst.
 * @return pkt_parse()'s verdict.
 */
static __rte_always_inline enum pkt_err
pkt_classify_one(struct rte_mbuf *m, const struct pkt_classify *c,
		 uint64_t *non_ip)
{
	struct pkt_meta *meta = pkt_meta(m);
	enum pkt_err e = pkt_parse(m, meta, c->in_port);

	if (unlikely(e != PKT_ERR_NONE))
		c->err_count[e]++;
	else
		*non_ip += meta->l3 == PKT_L3_NONE;
	return e;
}

/**
 * Classify a burst as it came from rx: parse and count every frame, in
 * order, until the first one pkt_classify_stops() at. Nothing is dropped
 * or moved.
 * @return k: pkts[0..k) are parsed; pkts[k..n) were not looked at.
 */
static inline uint16_t
pkt_classify_burst(struct rte_mbuf **pkts, uint16_t n,
		   const struct pkt_classify *c)
{
	uint64_t non_ip = 0;
	uint16_t i;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		if (i + 2 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 2], void *));
		if (unlikely(pkt_classify_stops(m, c->max_frame)))
			break;
		pkt_classify_one(m, c, &non_ip);
	}
	*c->non_ip += non_ip;
	return i;
}

/** @} */

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_PKT_H */
