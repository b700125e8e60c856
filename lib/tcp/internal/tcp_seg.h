/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_TCP_SEG_H
#define SLUICE_TCP_SEG_H

/*
 * Segment I/O: parse a received TCP segment into host-order fields, and
 * build a complete frame (Ethernet + IPv4/IPv6 + TCP + options + payload
 * copied from an mbuf queue) with checksums computed in software.
 * Internal to lib/tcp; the unit tests include it directly.
 */

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "pkt.h"
#include "tcp.h"

#define TCP_FL_FIN 0x01
#define TCP_FL_SYN 0x02
#define TCP_FL_RST 0x04
#define TCP_FL_PSH 0x08
#define TCP_FL_ACK 0x10
#define TCP_FL_URG 0x20

/* Options present, in tcp_seg_in.opts / asked for in tcp_seg_out.opts. */
#define TCP_SO_MSS       0x01
#define TCP_SO_WS        0x02
#define TCP_SO_SACK_PERM 0x04
#define TCP_SO_TS        0x08
#define TCP_SO_SACK      0x10

#define TCP_SACK_MAX 4

struct tcp_sack_blk {
	uint32_t left, right; /* [left, right) in sequence space */
};

/* A received segment, host order. */
struct tcp_seg_in {
	uint32_t seq, ack;
	uint32_t len;          /* payload bytes (SYN/FIN not counted) */
	uint16_t wnd;          /* raw window field */
	uint16_t payload_off;  /* from the frame start */
	uint8_t flags;         /* TCP_FL_* */
	uint8_t opts;          /* TCP_SO_* seen */
	uint8_t ws;            /* window scale shift offered */
	uint8_t nsack;
	uint16_t mss;
	uint32_t tsval, tsecr;
	struct tcp_sack_blk sack[TCP_SACK_MAX];
};

/* What to put in an outgoing segment. */
struct tcp_seg_out {
	uint32_t seq, ack;
	uint16_t wnd;          /* raw window field (already scaled down) */
	uint8_t flags;
	uint8_t opts;          /* TCP_SO_*; SACK uses nsack/sack[] */
	uint8_t ws;
	uint8_t nsack;
	uint16_t mss;
	uint8_t xopt_len;      /* bytes at xopt, written after the rest */
	const uint8_t *xopt;   /* whole options carried for a peer (SYNs) */
	uint8_t hopt_len;      /* bytes at hopt (a multiple of 4), written
	                          after SACK and before xopt */
	const uint8_t *hopt;   /* options from the connection's hooks */
	uint32_t tsval, tsecr;
	struct tcp_sack_blk sack[TCP_SACK_MAX];
};

/* Sequence arithmetic (RFC 9293, section 3.4): modulo 2^32. */
static inline int tcp_seq_lt(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }
static inline int tcp_seq_le(uint32_t a, uint32_t b) { return (int32_t)(a - b) <= 0; }
static inline int tcp_seq_gt(uint32_t a, uint32_t b) { return (int32_t)(a - b) > 0; }
static inline int tcp_seq_ge(uint32_t a, uint32_t b) { return (int32_t)(a - b) >= 0; }

/* Errors of tcp_seg_parse(). */
#define TCP_SEG_EMALFORMED (-1)
#define TCP_SEG_ECSUM      (-2)
#define TCP_SEG_EFRAGMENT  (-3) /* an IP fragment: not a whole segment */

/*
 * Parse the TCP segment of a frame pkt_parse() accepted as TCP. The TCP
 * checksum is verified when verify_csum is set. Options are walked with
 * tcpopt_parse(); a malformed option area makes the segment malformed.
 * An IP fragment (PKT_F_FRAGMENT) is refused before anything is read:
 * its checksum covers bytes that are not there.
 * Returns 0 or TCP_SEG_E*.
 */
int tcp_seg_parse(const struct rte_mbuf *m, const struct pkt_meta *meta,
		  struct tcp_seg_in *s, int verify_csum);

/*
 * Copy the options of the TCP header th (hlen bytes, already validated by
 * tcpopt_parse()) that tcp_syn_xopts() carries (not the engine's own
 * kinds, and only those carry() accepts if it is not NULL), whole and in
 * order, into buf while they fit in cap. Returns the bytes written; *left
 * counts the carriable options that did not fit.
 */
uint32_t tcp_seg_xopts(const uint8_t *th, uint32_t hlen, uint8_t *buf,
		       uint32_t cap, uint32_t *left, tcp_xopt_carry_fn carry);

/* Bytes of options tcp_seg_build() will write for o. */
uint32_t tcp_seg_opt_len(const struct tcp_seg_out *o);

/*
 * Build a frame from ep (local -> remote) carrying the header o and
 * data_len payload bytes copied from the chain data starting data_off bytes
 * in. Checksums (IPv4 header, TCP) are complete. Returns NULL when the pool
 * is empty or the frame does not fit one mbuf.
 */
struct rte_mbuf *tcp_seg_build(struct rte_mempool *mp,
			       const struct tcp_endpoints *ep,
			       const struct tcp_seg_out *o,
			       const struct rte_mbuf *data, uint32_t data_off,
			       uint32_t data_len);

/* Ones-complement sum of the pseudo header (RFC 9293 3.1, RFC 8200 8.1). */
uint32_t tcp_pseudo_sum(uint8_t family, const uint8_t *src, const uint8_t *dst,
			uint32_t l4_len);

/* Copy len bytes starting off bytes into the segment chain m. Returns
 * bytes copied (fewer if the chain is shorter). */
uint32_t tcp_chain_copy(const struct rte_mbuf *m, uint32_t off, void *dst,
			uint32_t len);

#endif /* SLUICE_TCP_SEG_H */
