/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_TCP_SEG_H
#define SLUICE_TCP_SEG_H

/*
 * Segment I/O: parse a received TCP segment into host-order fields, and
 * build a complete frame (Ethernet + IPv4/IPv6 + TCP + options + payload
 * copied from an mbuf queue) with checksums computed in software.
 * Internal to lib/tcp; the unit tests include it directly.
 */

#include <stdbool.h>
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
	uint8_t xo_n;          /* options of kinds the engine does not read
	                          (neither NOP nor EOL) */
	uint8_t xo_kind;       /* the first of them: its kind (0: none), */
	uint8_t xo_off;        /* and its offset from the TCP header */
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
	uint8_t fresh;         /* data never sent before (not a retransmission):
	                          a clone's buffer may take its headers
	                          (tcp_seg_build_ex(), "in place") */
	uint8_t no_meta;       /* leave the frame's pkt_meta unwritten
	                          (TCP_F_TX_NO_META) */
	const uint8_t *hopt;   /* options from the connection's hooks */
	uint32_t hopt_gen;     /* which writing of the hook's options hopt
	                          holds: a frame made from a tcp_seg_rep that
	                          holds the same one copies nothing */
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
 * The ones'-complement sum of a received segment's payload, kept in the
 * mbuf (a dynamic field, valid while a dynamic flag is set) so that a
 * frame that relays exactly these bytes needs no second pass over them.
 * It records which bytes it covers: data_len bytes from data_off of the
 * buffer; a segment trimmed since, or an mbuf never given a sum, does
 * not match and is summed again.
 */
struct tcp_psum {
	uint16_t data_off, data_len;
	uint16_t sum;          /* tcp_raw_sum() of those bytes */
	uint16_t pad;
};

/* Where the sums are (per process; each engine keeps a copy). */
struct tcp_psum_reg {
	int off;               /* dynamic field offset; < 0: no cache */
	uint64_t flag;         /* ol_flags bit saying the field is valid */
};

/* Register the field and flag (idempotent). 0, or -1 with r->off = -1. */
int tcp_psum_register(struct tcp_psum_reg *r);

/* The ones'-complement sum of len bytes, the value rte_raw_cksum() gives
 * (the same bytes, the same order, the same 0 for zeros only): 32 bytes
 * a step with AVX2 when the CPU has it and len is at least 256, else in
 * 64-bit steps. */
uint16_t tcp_raw_sum(const void *buf, uint32_t len);

/* tcp_raw_sum() in 64-bit steps only, whatever the CPU (what a CPU
 * without AVX2 runs; the tests hold the two to the same values). */
uint16_t tcp_raw_sum_scalar(const void *buf, uint32_t len);

/* A 16-bit ones'-complement sum of bytes found at byte offset `at` of
 * the data summed, made ready to add: byte-swapped when `at` is odd
 * (RFC 1071 2(B)). */
uint32_t tcp_sum_at(uint16_t sum, uint32_t at);

/* The ones'-complement sum (as rte_raw_cksum() gives it) of len bytes
 * from off in the segment chain m, each segment's part placed by its
 * offset. 0, or -1 when the chain is shorter. */
int tcp_chain_sum(const struct rte_mbuf *m, uint32_t off, uint32_t len,
		  uint16_t *out);

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
/* The same; when it verifies the checksum of a frame in one mbuf and ps
 * is not NULL, it also stores the payload's sum in m (struct tcp_psum). */
int tcp_seg_parse_psum(struct rte_mbuf *m, const struct pkt_meta *meta,
		       struct tcp_seg_in *s, int verify_csum,
		       const struct tcp_psum_reg *ps);

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

/*
 * tcp_seg_build(), with a choice. chain: the frame is a fresh mbuf with
 * the headers followed by indirect mbufs of mp attached to the pieces of
 * data it carries (no payload copy; data keeps its own references, so
 * it can be sent again); otherwise one mbuf with the payload copied. ps
 * (may be NULL): payload sums kept at receive time, used for the pieces
 * they cover exactly.
 */
struct rte_mbuf *tcp_seg_build_ex(struct rte_mempool *mp,
				  const struct tcp_endpoints *ep,
				  const struct tcp_seg_out *o,
				  struct rte_mbuf *data, uint32_t data_off,
				  uint32_t data_len,
				  const struct tcp_psum_reg *ps, bool chain);

/*
 * The sums of what every frame of a connection carries unchanged, made
 * once from its endpoints (tcp_hdr_tmpl_init()): a frame adds only its
 * own fields (lengths, sequence numbers, flags, window, options,
 * payload), and its headers are written in a few wide stores. Small:
 * it lives in every connection, whose state has a 2 KB budget per
 * proxied pair.
 */
struct tcp_hdr_tmpl {
	uint16_t ip_sum;       /* IPv4 header's words, length and checksum 0 */
	uint16_t tcp_sum;      /* pseudo header without its length, + ports */
	uint8_t ok;            /* 0: none (build from the endpoints alone) */
	uint8_t l2_len;        /* Ethernet header with the frames' tags */
	uint8_t walked;        /* pkt_parse() walks every tag's TPID */
	uint8_t pad;
};

/* Make t for ep's frames. */
void tcp_hdr_tmpl_init(struct tcp_hdr_tmpl *t, const struct tcp_endpoints *ep);

/*
 * tcp_seg_build_ex() for a connection whose frames t describes (made by
 * tcp_hdr_tmpl_init() from ep): the same frame, byte for byte, with
 * the constant parts' sums taken from t. t may be NULL or empty: then
 * as tcp_seg_build_ex().
 */
struct rte_mbuf *tcp_seg_build_tmpl(struct rte_mempool *mp,
				    const struct tcp_hdr_tmpl *t,
				    const struct tcp_endpoints *ep,
				    const struct tcp_seg_out *o,
				    struct rte_mbuf *data, uint32_t data_off,
				    uint32_t data_len,
				    const struct tcp_psum_reg *ps, bool chain);

/*
 * The headers of the frames one tcp_output() call sends: all of them
 * carry the same ACK, window and options, and differ only in sequence
 * number, flags (PSH on the last), length and the hook's options (an
 * MPTCP subflow's DSS maps each segment to its own data sequence
 * number). The first frame is built in full; tcp_seg_rep_init() keeps a
 * copy of its headers and the sums of what stays the same. Each later
 * frame that goes in place (one whole send-buffer mbuf, in_place_ok())
 * and whose hook options are as long as the first one's copies them and
 * patches the few fields that change (tcp_seg_build_rep()): the same
 * bytes as tcp_seg_build_tmpl() would write. Lives on tcp_output()'s
 * stack.
 */
struct tcp_seg_rep {
	uint64_t sum;          /* pseudo header without its length + the TCP
	                          header with sequence number, offset/flags
	                          word and checksum 0 */
	uint16_t ip_sum;       /* IPv4 header with length and checksum 0 */
	uint8_t ok;            /* 0: not made yet */
	uint8_t ipv4;
	uint8_t l2_len, l3_len, tcp_hl;
	uint8_t tags;          /* VLAN tags in the Ethernet header */
	uint8_t walked;        /* pkt_parse() walks every tag's TPID */
	uint8_t hopt_off;      /* where the hook's options start in the TCP
	                          header (the last hopt_len bytes of it) */
	uint8_t hopt_len;      /* their length; not in sum */
	uint32_t hopt_gen;     /* the writing of them that hdr holds */
	uint64_t hopt_sum;     /* their sum */
	uint8_t hdr[RTE_ETHER_HDR_LEN + 8 + 40 + 60];
};

/* Make r from m, a frame just built for ep and o by tcp_seg_build_tmpl()
 * (its headers in its first mbuf). r stays unmade (ok 0) for a frame
 * with options carried for a peer (o->xopt_len). */
void tcp_seg_rep_init(struct tcp_seg_rep *r, const struct tcp_endpoints *ep,
		      const struct tcp_seg_out *o, const struct rte_mbuf *m);

/*
 * The frame of r's headers with o's sequence number, flags and hook
 * options (the rest of o as when r was made) and the whole of d as its
 * payload, sent in place. NULL when d may not be sent in place
 * (in_place_ok()), o's hook options are not as long as r's, or the pool
 * is empty: the caller builds it with tcp_seg_build_tmpl(), which says
 * which. With hooked (a constant where it is inlined: a connection
 * without hooks pays nothing for them), hook options of another writing
 * than r holds (o->hopt_gen) are copied into r first, so that the frames
 * after take them from there; without, o and r have none.
 */
struct rte_mbuf *tcp_seg_build_rep(struct rte_mempool *mp, struct tcp_seg_rep *r,
				   const struct tcp_endpoints *ep,
				   const struct tcp_seg_out *o, struct rte_mbuf *d,
				   const struct tcp_psum_reg *ps, bool hooked);

/* Ones-complement sum of the pseudo header (RFC 9293 3.1, RFC 8200 8.1). */
uint32_t tcp_pseudo_sum(uint8_t family, const uint8_t *src, const uint8_t *dst,
			uint32_t l4_len);

/* Copy len bytes starting off bytes into the segment chain m. Returns
 * bytes copied (fewer if the chain is shorter). */
uint32_t tcp_chain_copy(const struct rte_mbuf *m, uint32_t off, void *dst,
			uint32_t len);

#endif /* SLUICE_TCP_SEG_H */
