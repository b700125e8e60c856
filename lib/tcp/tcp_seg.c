/* SPDX-License-Identifier: BSD-3-Clause */
/* Segment parse and build. Checksums are computed in software so frames
 * are complete whatever the NIC offers. */

#include <stdbool.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_mbuf_dyn.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "tcp_seg.h"
#include "tcpopt.h"
#include "tcpopt_walk.h"

static inline uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void wr16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void
wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);  p[3] = (uint8_t)v;
}

static inline uint16_t
fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* A 64-bit accumulation folded to 16 bits, carries wrapped around. */
static inline uint16_t
fold64(uint64_t s)
{
	s = (s >> 32) + (uint32_t)s;
	s = (s >> 16) + (s & 0xffff);
	s = (s >> 16) + (s & 0xffff);
	s = (s >> 16) + (s & 0xffff);
	return (uint16_t)s;
}

/* a + b in ones' complement on 64 bits: the carry out wraps around. */
static inline uint64_t
add64(uint64_t a, uint64_t b)
{
	a += b;
	return a + (a < b);
}

/* The unfolded sum of a header whose length is a multiple of 4 (IPv4,
 * TCP with its options), under 2^33: the callers add a few more words
 * before they fold. On x86-64, 16 bytes a step in a chain of
 * add-with-carry (2^64 = 1 mod 2^16 - 1, as raw_sum64() below says),
 * then 8 and 4 bytes; the 64-bit sum folds to 33 bits. Elsewhere 32-bit
 * words, two 16-bit words each, added where they cannot overflow.
 * Inline: a call and tcp_raw_sum()'s tails cost more than the words. */
static inline uint64_t
sum_words(const uint8_t *p, uint32_t len)
{
	uint64_t s = 0;
#if defined(RTE_ARCH_X86_64) && (defined(__GNUC__) || defined(__clang__))
	uint64_t n = len / 16;

	/* lea and dec leave the carry flag alone. */
	if (n != 0) {
		__asm__("clc\n"
			"1:\n\t"
			"adcq 0(%[p]), %[s]\n\t"
			"adcq 8(%[p]), %[s]\n\t"
			"leaq 16(%[p]), %[p]\n\t"
			"decq %[n]\n\t"
			"jnz 1b\n\t"
			"adcq $0, %[s]"
			: [s] "+r"(s), [p] "+r"(p), [n] "+r"(n)
			:
			: "cc", "memory");
	}
	if (len & 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		s = add64(s, w);
		p += 8;
	}
	if (len & 4) {
		uint32_t w;

		memcpy(&w, p, 4);
		s = add64(s, w);
	}
	return (s >> 32) + (uint32_t)s;
#else
	uint32_t i = 0;

	for (; i + 16 <= len; i += 16) {
		uint64_t a, b;

		memcpy(&a, p + i, 8);
		memcpy(&b, p + i + 8, 8);
		s += (a & 0xffffffffu) + (a >> 32) + (b & 0xffffffffu) + (b >> 32);
	}
	for (; i < len; i += 4) {
		uint32_t w;

		memcpy(&w, p + i, 4);
		s += w;
	}
	return s;
#endif
}

/*
 * RFC 1071 4.1 sums 16-bit words into a wider accumulator and folds the
 * carries in at the end; 2^16 = 1 (mod 2^16 - 1), so 64-bit words add
 * as their four 16-bit words would, each carry out of bit 63 wrapping
 * around (2^64 = 1 as well). On x86-64 a chain of add-with-carry takes 8
 * bytes per instruction, where rte_raw_cksum()'s vector loop takes 9
 * instructions per 16 bytes: the receive check of a full segment, the
 * largest cost of the relay, was about 830 instructions.
 *
 * With AVX2 (asked of the CPU at each call: the build targets an older
 * one) a long run goes 32 bytes per 3 instructions, where the chain
 * takes 4; and the chain's carry makes each adc wait for the one
 * before, one 8-byte word per cycle, where the vector loop keeps four
 * sums apart. vpmaddwd adds each two neighbouring 16-bit words into a
 * 32-bit lane, but reads them as signed: each word's top bit is flipped
 * first (x ^ 0x8000 read as signed is x - 0x8000), and the lanes get
 * 0x8000 per word back before they are added up.
 */
#if defined(RTE_ARCH_X86_64) && (defined(__GNUC__) || defined(__clang__))
#define TCP_SUM_AVX2 1
#include <immintrin.h>

/* Bytes summed before the lanes are added up. Each of the eight lanes
 * ends with chunk / 16 words, at most 65535 each once their 0x8000 is
 * back: four lanes add to under 2^32 in 32 bits for a chunk of 256 KiB,
 * and would not for 512 KiB (the long-run test fails then). The signed
 * sums before that stay under 2^29 in magnitude. */
#define SUM_AVX2_CHUNK (1u << 18)

/* The sum of len bytes (a multiple of 32) as 16-bit words in memory
 * order, unfolded. */
/* (GCC tuned for the build's CPU splits each unaligned 32-byte load in
 * two; a CPU with AVX2 does not need that.) */
#ifdef __clang__
#define SUM_AVX2_TARGET __attribute__((target("avx2")))
#else
#define SUM_AVX2_TARGET __attribute__((target("avx2,tune=haswell")))
#endif
SUM_AVX2_TARGET static uint64_t
sum_avx2(const uint8_t *p, uint32_t len)
{
	const __m256i flip = _mm256_set1_epi16(INT16_MIN);
	const __m256i one = _mm256_set1_epi16(1);
	uint64_t total = 0;

	while (len) {
		uint32_t n = len > SUM_AVX2_CHUNK ? SUM_AVX2_CHUNK : len;
		const uint8_t *end = p + n, *stop = p + (n & ~127u);
		__m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
		__m128i h;
		uint64_t t;

		/* 256 bytes a step in four sums, then 128 if left. (In
		 * assembly: GCC copies each sum to another register every
		 * step.) */
#define SUM_AVX2_128(at)                                                  \
	"vpxor " at "+0(%[p]), %[flip], %[t0]\n\t"                          \
	"vpxor " at "+32(%[p]), %[flip], %[t1]\n\t"                         \
	"vpmaddwd %[one], %[t0], %[t0]\n\t"                                 \
	"vpmaddwd %[one], %[t1], %[t1]\n\t"                                 \
	"vpaddd %[t0], %[a], %[a]\n\t"                                      \
	"vpaddd %[t1], %[b], %[b]\n\t"                                      \
	"vpxor " at "+64(%[p]), %[flip], %[t0]\n\t"                         \
	"vpxor " at "+96(%[p]), %[flip], %[t1]\n\t"                         \
	"vpmaddwd %[one], %[t0], %[t0]\n\t"                                 \
	"vpmaddwd %[one], %[t1], %[t1]\n\t"                                 \
	"vpaddd %[t0], %[c], %[c]\n\t"                                      \
	"vpaddd %[t1], %[d], %[d]\n\t"
		if (p != stop) {
			__m256i t0, t1;

			if (n & 128) {
				__asm__(SUM_AVX2_128("0")
					"subq $-128, %[p]"
					: [a] "+x"(a), [b] "+x"(b), [c] "+x"(c), [d] "+x"(d),
					  [t0] "=&x"(t0), [t1] "=&x"(t1), [p] "+r"(p)
					: [flip] "x"(flip), [one] "x"(one)
					: "cc", "memory");
			}
			if (p != stop) {
				__asm__("1:\n\t"
					SUM_AVX2_128("0")
					SUM_AVX2_128("128")
					"addq $256, %[p]\n\t"
					"cmpq %[p], %[stop]\n\t"
					"jne 1b"
					: [a] "+x"(a), [b] "+x"(b), [c] "+x"(c), [d] "+x"(d),
					  [t0] "=&x"(t0), [t1] "=&x"(t1), [p] "+r"(p)
					: [flip] "x"(flip), [one] "x"(one), [stop] "r"(stop)
					: "cc", "memory");
			}
		}
#undef SUM_AVX2_128
		for (; p < end; p += 32)
			a = _mm256_add_epi32(a, _mm256_madd_epi16(_mm256_xor_si256(
				_mm256_loadu_si256((const __m256i *)(const void *)p), flip), one));
		a = _mm256_add_epi32(_mm256_add_epi32(a, b), _mm256_add_epi32(c, d));
		/* Each lane holds n / 16 words: 0x8000 for each back makes
		 * it the lane's words' sum, under 2^30; four lanes add
		 * under 2^32, as unsigned. */
		a = _mm256_add_epi32(a, _mm256_set1_epi32((int)(n / 16 * 0x8000)));
		h = _mm_add_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
		h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4e));
		t = (uint64_t)_mm_cvtsi128_si64(h);
		total += (t & 0xffffffffu) + (t >> 32);
		len -= n;
	}
	return total;
}
#endif

/* The sum of len bytes at p added to s, in 64-bit steps. */
static inline uint16_t
raw_sum64(const uint8_t *p, uint64_t s, uint32_t len)
{
#if defined(RTE_ARCH_X86_64)
	/* 128 bytes a step, then 64 if left: the step's own lea, dec and
	 * jnz are spread over 16 words instead of 8 (a full segment's check
	 * takes 11 steps and no 64-byte one). lea and dec leave the carry
	 * flag alone. */
#define ADC_64_BYTES(at)                                        \
	"adcq " at "+0(%[p]), %[s]\n\t"  "adcq " at "+8(%[p]), %[s]\n\t"  \
	"adcq " at "+16(%[p]), %[s]\n\t" "adcq " at "+24(%[p]), %[s]\n\t" \
	"adcq " at "+32(%[p]), %[s]\n\t" "adcq " at "+40(%[p]), %[s]\n\t" \
	"adcq " at "+48(%[p]), %[s]\n\t" "adcq " at "+56(%[p]), %[s]\n\t"
	if (len >= 128) {
		uint64_t n = len / 128;

		__asm__("clc\n"
			"1:\n\t"
			ADC_64_BYTES("0")
			ADC_64_BYTES("64")
			"leaq 128(%[p]), %[p]\n\t"
			"decq %[n]\n\t"
			"jnz 1b\n\t"
			"adcq $0, %[s]"
			: [s] "+r"(s), [p] "+r"(p), [n] "+r"(n)
			:
			: "cc", "memory");
		len &= 127;
	}
	if (len >= 64) {
		__asm__("clc\n\t"
			ADC_64_BYTES("0")
			"adcq $0, %[s]"
			: [s] "+r"(s)
			: [p] "r"(p)
			: "cc", "memory");
		p += 64;
		len -= 64;
	}
#undef ADC_64_BYTES
#endif
	for (; len >= 8; p += 8, len -= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		s = add64(s, w);
	}
	if (len >= 4) {
		uint32_t w;

		memcpy(&w, p, 4);
		s = add64(s, w);
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		uint16_t w;

		memcpy(&w, p, 2);
		s = add64(s, w);
		p += 2;
		len -= 2;
	}
	if (len) {
		/* The odd byte is the first of a 16-bit word padded with
		 * zero, where rte_raw_cksum() puts it too. */
		uint16_t w = 0;

		memcpy(&w, p, 1);
		s = add64(s, w);
	}
	return fold64(s);
}

uint16_t
tcp_raw_sum(const void *buf, uint32_t len)
{
	const uint8_t *p = buf;
	uint64_t s = 0;

#ifdef TCP_SUM_AVX2
	/* Below 256 bytes the chain costs about as much. */
	if (len >= 256 && __builtin_cpu_supports("avx2")) {
		uint32_t v = len & ~31u;

		s = sum_avx2(p, v);
		p += v;
		len -= v;
	}
#endif
	return raw_sum64(p, s, len);
}

uint16_t
tcp_raw_sum_scalar(const void *buf, uint32_t len)
{
	return raw_sum64(buf, 0, len);
}

/* Sums here are in the native byte order of rte_raw_cksum(): 16-bit
 * words loaded from memory, constants converted to network order. An
 * address is added in 32-bit words: each is two 16-bit words, and the
 * caller folds. */
/* The pseudo-header's words, unfolded (under 2^36). */
static inline uint64_t
pseudo_words(uint8_t family, const uint8_t *src, const uint8_t *dst,
	     uint32_t l4_len)
{
	uint32_t alen = family == 4 ? 4 : 16;
	uint64_t sum = rte_cpu_to_be_16(IPPROTO_TCP) +
		       rte_cpu_to_be_16((uint16_t)(l4_len >> 16)) +
		       rte_cpu_to_be_16((uint16_t)l4_len);

	for (uint32_t i = 0; i < alen; i += 4) {
		uint32_t a, b;

		memcpy(&a, src + i, 4);
		memcpy(&b, dst + i, 4);
		sum += (uint64_t)a + b;
	}
	return sum;
}

uint32_t
tcp_pseudo_sum(uint8_t family, const uint8_t *src, const uint8_t *dst,
	       uint32_t l4_len)
{
	uint64_t sum = pseudo_words(family, src, dst, l4_len);

	sum = (sum >> 32) + (uint32_t)sum;
	sum = (sum >> 16) + (sum & 0xffff);
	return (uint32_t)sum;
}

/* The payload sum cache of m, or NULL when m's payload is not what it
 * records (other bytes, or a cache never written). */
static inline const struct tcp_psum *
psum_get(const struct tcp_psum_reg *r, const struct rte_mbuf *m)
{
	const struct tcp_psum *c;

	if (r == NULL || r->off < 0 || !(m->ol_flags & r->flag))
		return NULL;
	c = RTE_MBUF_DYNFIELD(m, r->off, const struct tcp_psum *);
	return c;
}

int
tcp_psum_register(struct tcp_psum_reg *r)
{
	static const struct rte_mbuf_dynfield field = {
		.name = "sluice_tcp_payload_sum",
		.size = sizeof(struct tcp_psum),
		.align = __alignof__(struct tcp_psum),
	};
	static const struct rte_mbuf_dynflag flag = {
		.name = "sluice_tcp_payload_sum_valid",
	};
	int bit;

	r->off = rte_mbuf_dynfield_register(&field);
	bit = rte_mbuf_dynflag_register(&flag);
	if (r->off < 0 || bit < 0) {
		r->off = -1;
		r->flag = 0;
		return -1;
	}
	r->flag = 1ULL << bit;
	return 0;
}

uint32_t
tcp_sum_at(uint16_t sum, uint32_t at)
{
	/* RFC 1071 2(B): bytes that start at an odd offset of the sum's
	 * data add byte-swapped. */
	return at & 1 ? (uint16_t)(sum << 8 | sum >> 8) : sum;
}

int
tcp_chain_sum(const struct rte_mbuf *m, uint32_t off, uint32_t len, uint16_t *out)
{
	uint32_t sum = 0, at = 0;

	/* Not rte_raw_cksum_mbuf(): DPDK 22.11's truncates a segment's
	 * unreduced sum to 16 bits before it byte-swaps it, which is wrong
	 * for a segment that starts at an odd offset. */
	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	for (; m != NULL && at < len; m = m->next, off = 0) {
		uint32_t take = RTE_MIN((uint32_t)m->data_len - off, len - at);

		sum += tcp_sum_at(tcp_raw_sum(rte_pktmbuf_mtod_offset(m, const uint8_t *, off),
					      take), at);
		at += take;
		sum = (sum & 0xffff) + (sum >> 16);
	}
	if (at < len)
		return -1;
	*out = fold(sum);
	return 0;
}

int
tcp_seg_parse(const struct rte_mbuf *m, const struct pkt_meta *meta,
	      struct tcp_seg_in *s, int verify_csum)
{
	return tcp_seg_parse_psum((struct rte_mbuf *)(uintptr_t)m, meta, s,
				  verify_csum, NULL);
}

/* The timestamps of options that begin NOP NOP TS (header th). */
static inline void
ts_first(struct tcp_seg_in *s, const uint8_t *th)
{
	s->opts = TCP_SO_TS;
	s->tsval = rd32(th + 24);
	s->tsecr = rd32(th + 28);
}

int
tcp_seg_parse_psum(struct rte_mbuf *m, const struct pkt_meta *meta,
		   struct tcp_seg_in *s, int verify_csum,
		   const struct tcp_psum_reg *ps)
{
	struct tcpopt_opt po;
	unsigned int pos = 20, hlen;
	const uint8_t *th;
	uint32_t tcp_len, end;
	int r;

	if (meta->flags & PKT_F_FRAGMENT)
		return TCP_SEG_EFRAGMENT;
	if (meta->l4_proto != IPPROTO_TCP || !(meta->flags & PKT_F_L4) ||
	    (meta->flags & PKT_F_MALFORMED) || meta->l4_len < 20)
		return TCP_SEG_EMALFORMED;
	end = (uint32_t)meta->l3_off + meta->l3_len;
	if (end > rte_pktmbuf_pkt_len(m) || meta->payload_off > end ||
	    meta->payload_off > m->data_len)
		return TCP_SEG_EMALFORMED;
	tcp_len = end - meta->l4_off;
	th = rte_pktmbuf_mtod_offset(m, const uint8_t *, meta->l4_off);

	if (verify_csum &&
	    (m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) != RTE_MBUF_F_RX_L4_CKSUM_GOOD) {
		uint16_t raw = 0;
		uint64_t sum;

		if (ps != NULL && ps->off >= 0 && m->next == NULL) {
			/* Header and payload apart (the header's length is a
			 * multiple of 4, so the sums add as they are), and
			 * the payload's kept for the frames that will carry
			 * these bytes on (tcp_seg_build_ex()). */
			uint32_t hl = (uint32_t)meta->payload_off - meta->l4_off;
			uint32_t plen = end - meta->payload_off;
			/* (A pure ACK has none: no call.) */
			uint16_t psum = plen != 0 ? tcp_raw_sum(th + hl, plen) : 0;
			struct tcp_psum *c = RTE_MBUF_DYNFIELD(m, ps->off, struct tcp_psum *);

			sum = sum_words(th, hl) + tcp_sum_at(psum, hl);
			c->data_off = (uint16_t)(m->data_off + meta->payload_off);
			c->data_len = (uint16_t)plen;
			c->sum = psum;
			m->ol_flags |= ps->flag;
		} else if (tcp_chain_sum(m, meta->l4_off, tcp_len, &raw) == 0) {
			sum = raw;
		} else {
			return TCP_SEG_EMALFORMED;
		}
		/* One fold for header, payload and pseudo-header. */
		sum += pseudo_words(meta->l3 == PKT_L3_IPV4 ? 4 : 6, meta->src,
				    meta->dst, tcp_len);
		if (fold64(sum) != 0xffff)
			return TCP_SEG_ECSUM;
	}

	memset(s, 0, offsetof(struct tcp_seg_in, sack));
	s->seq = rd32(th + 4);
	s->ack = rd32(th + 8);
	s->flags = th[13] & 0x3f;
	s->wnd = rd16(th + 14);
	s->payload_off = meta->payload_off;
	s->len = end - meta->payload_off;

	if (meta->l4_len == 20)
		return 0;
	/* NOP NOP TS, as the parser found it (PKT_F_TCP_TSOPT): nearly every
	 * segment of a connection with timestamps, read without the walk. */
	if (meta->flags & PKT_F_TCP_TSOPT) {
		ts_first(s, th);
		return 0;
	}
	/* tcpopt's own walker, one option at a time (what tcpopt_parse()
	 * does, without filling its table of every option first): an area
	 * it cannot delimit, or an option whose length its kind does not
	 * allow, makes the segment malformed as before. */
	if (tcpopt_hdr_check(th, meta->l4_len, &hlen) != TCPOPT_MAL_NONE)
		return TCP_SEG_EMALFORMED;
	/* NOP NOP TS and then more (an MPTCP DSS on every segment of a
	 * subflow, SACK blocks on an ACK): those twelve bytes read as the
	 * walk would read them, in one compare; the walk takes the rest. */
	if (hlen >= 32 && rd32(th + 20) == 0x0101080au) {
		ts_first(s, th);
		pos = 32;
	}
	while ((r = tcpopt_walk_next(th, &pos, hlen, &po)) > 0) {
		const uint8_t *o = th + po.off;

		switch (po.kind) {
		case TCPOPT_KIND_MSS:
			s->opts |= TCP_SO_MSS;
			s->mss = rd16(o + 2);
			break;
		case TCPOPT_KIND_WS:
			s->opts |= TCP_SO_WS;
			/* RFC 7323 2.3: a shift above 14 is used as 14. */
			s->ws = o[2] > 14 ? 14 : o[2];
			break;
		case TCPOPT_KIND_SACK_PERM:
			s->opts |= TCP_SO_SACK_PERM;
			break;
		case TCPOPT_KIND_TS:
			s->opts |= TCP_SO_TS;
			s->tsval = rd32(o + 2);
			s->tsecr = rd32(o + 6);
			break;
		case TCPOPT_KIND_SACK:
			s->opts |= TCP_SO_SACK;
			s->nsack = (uint8_t)((po.len - 2) / 8);
			for (unsigned int b = 0; b < s->nsack; b++) {
				s->sack[b].left = rd32(o + 2 + 8 * b);
				s->sack[b].right = rd32(o + 6 + 8 * b);
			}
			break;
		case TCPOPT_KIND_EOL:
		case TCPOPT_KIND_NOP:
			break;
		default:
			/* Not the engine's: where the first is, for a hook
			 * that registered its kind (tcp_conn_hooks.opt_kind). */
			if (s->xo_n++ == 0) {
				s->xo_kind = po.kind;
				s->xo_off = po.off;
			}
			break;
		}
	}
	if (r < 0)
		return TCP_SEG_EMALFORMED;
	return 0;
}

uint32_t
tcp_seg_opt_len(const struct tcp_seg_out *o)
{
	uint32_t n = 0;

	if (o->opts & TCP_SO_MSS)
		n += 4;
	if (o->opts & TCP_SO_TS)
		n += 12; /* NOP NOP TS, or SACK_PERM TS */
	else if (o->opts & TCP_SO_SACK_PERM)
		n += 4;  /* NOP NOP SACK_PERM */
	if (o->opts & TCP_SO_WS)
		n += 4;  /* NOP WS */
	if ((o->opts & TCP_SO_SACK) && o->nsack)
		n += 4 + 8u * o->nsack; /* NOP NOP SACK */
	n += o->hopt_len;
	if (o->xopt_len)
		n += (o->xopt_len + 3u) & ~3u; /* NOPs, then the options */
	return n;
}

/* Kinds no connection can carry to another: padding, and what the engine
 * negotiates per connection itself. Which of the rest a proxy carries is
 * its own policy (the carry predicate). */
static bool
xopt_engine_own(uint8_t kind)
{
	switch (kind) {
	case TCPOPT_KIND_EOL:
	case TCPOPT_KIND_NOP:
	case TCPOPT_KIND_MSS:
	case TCPOPT_KIND_WS:
	case TCPOPT_KIND_SACK_PERM:
	case TCPOPT_KIND_SACK:
	case TCPOPT_KIND_TS:
		return true;
	default:
		return false;
	}
}

uint32_t
tcp_seg_xopts(const uint8_t *th, uint32_t hlen, uint8_t *buf, uint32_t cap,
	      uint32_t *left, tcp_xopt_carry_fn carry)
{
	struct tcpopt_parsed po;
	uint32_t n = 0;

	*left = 0;
	if (hlen <= 20 || tcpopt_parse(th, hlen, &po) != TCPOPT_MAL_NONE)
		return 0;
	for (unsigned int i = 0; i < po.n; i++) {
		uint32_t len = po.opt[i].len;

		if (xopt_engine_own(po.opt[i].kind) ||
		    (carry != NULL && !carry(po.opt[i].kind)))
			continue;
		if (n + len > cap) {
			(*left)++;
			continue;
		}
		memcpy(buf + n, th + po.opt[i].off, len);
		n += len;
	}
	return n;
}

/* Lay the options out in the order Linux uses, so a capture reads as
 * usual: MSS, SACK_PERM+TS (sharing the word), NOP+WS, NOP NOP+SACK. */
static __rte_always_inline uint8_t *
write_opts(uint8_t *p, const struct tcp_seg_out *o)
{
	if (o->opts & TCP_SO_MSS) {
		p[0] = TCPOPT_KIND_MSS; p[1] = 4; wr16(p + 2, o->mss);
		p += 4;
	}
	if (o->opts & TCP_SO_TS) {
		if (o->opts & TCP_SO_SACK_PERM) {
			p[0] = TCPOPT_KIND_SACK_PERM; p[1] = 2;
		} else {
			p[0] = TCPOPT_KIND_NOP; p[1] = TCPOPT_KIND_NOP;
		}
		p[2] = TCPOPT_KIND_TS; p[3] = 10;
		wr32(p + 4, o->tsval);
		wr32(p + 8, o->tsecr);
		p += 12;
	} else if (o->opts & TCP_SO_SACK_PERM) {
		p[0] = TCPOPT_KIND_NOP; p[1] = TCPOPT_KIND_NOP;
		p[2] = TCPOPT_KIND_SACK_PERM; p[3] = 2;
		p += 4;
	}
	if (o->opts & TCP_SO_WS) {
		p[0] = TCPOPT_KIND_NOP; p[1] = TCPOPT_KIND_WS; p[2] = 3; p[3] = o->ws;
		p += 4;
	}
	if ((o->opts & TCP_SO_SACK) && o->nsack) {
		p[0] = TCPOPT_KIND_NOP; p[1] = TCPOPT_KIND_NOP;
		p[2] = TCPOPT_KIND_SACK; p[3] = (uint8_t)(2 + 8 * o->nsack);
		p += 4;
		for (unsigned int b = 0; b < o->nsack; b++) {
			wr32(p, o->sack[b].left);
			wr32(p + 4, o->sack[b].right);
			p += 8;
		}
	}
	if (o->hopt_len) {
		memcpy(p, o->hopt, o->hopt_len);
		p += o->hopt_len;
	}
	if (o->xopt_len) {
		for (unsigned int pad = (4u - (o->xopt_len & 3u)) & 3u; pad; pad--)
			*p++ = TCPOPT_KIND_NOP;
		memcpy(p, o->xopt, o->xopt_len);
		p += o->xopt_len;
	}
	return p;
}

uint32_t
tcp_chain_copy(const struct rte_mbuf *m, uint32_t off, void *dst, uint32_t len)
{
	uint8_t *d = dst;
	uint32_t done = 0;

	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	while (m != NULL && done < len) {
		uint32_t n = m->data_len - off;

		if (n > len - done)
			n = len - done;
		memcpy(d + done, rte_pktmbuf_mtod_offset(m, const uint8_t *, off), n);
		done += n;
		off = 0;
		m = m->next;
	}
	return done;
}

/* The ones'-complement sum of len bytes at off in m (a single segment),
 * from its kept sum when that covers these bytes: the kept sum less the
 * bytes it covers before and after the piece, when those are fewer than
 * the piece's. A send queue that once sent a short segment cuts every
 * later segment across two received mbufs (the tail of one, the head of
 * the next): each part then costs what the other part of its mbuf
 * costs, at most half a segment between them. The bytes the kept sum
 * covers are never written while it is kept (tcp_send() and the
 * receive queue's merge clear it when they write into an mbuf). */
static __rte_always_inline uint16_t
piece_sum(const struct tcp_psum_reg *ps, const struct rte_mbuf *m,
	  uint32_t off, uint32_t len)
{
	const uint8_t *p = rte_pktmbuf_mtod_offset(m, const uint8_t *, off);
	const struct tcp_psum *c = psum_get(ps, m);
	uint32_t start = (uint32_t)m->data_off + off, before, after, sum;

	if (c == NULL || start < c->data_off ||
	    start + len > (uint32_t)c->data_off + c->data_len)
		return tcp_raw_sum(p, len);
	before = start - c->data_off;
	after = (uint32_t)c->data_off + c->data_len - start - len;
	if (before == 0 && after == 0)
		return c->sum;
	if (before + after >= len)
		return tcp_raw_sum(p, len);
	/* piece = kept - before - after, each placed at its offset in the
	 * kept bytes; the result is placed at offset `before`. Subtracting
	 * in ones' complement is adding the complement. */
	sum = c->sum;
	if (before)
		sum += (uint16_t)~tcp_sum_at(tcp_raw_sum(p - before, before), 0);
	if (after)
		sum += (uint16_t)~tcp_sum_at(tcp_raw_sum(p + len, after), before + len);
	sum = fold(sum);
	return (uint16_t)tcp_sum_at((uint16_t)sum, before);
}


/* Write the Ethernet, IP and TCP headers (TCP checksum 0) at d; returns
 * the TCP header. */
static uint8_t *
write_headers(uint8_t *d, const struct tcp_endpoints *ep,
	      const struct tcp_seg_out *o, uint32_t olen, uint32_t l2_len,
	      uint32_t l3_len, uint32_t tcp_len)
{
	unsigned int tags = (l2_len - RTE_ETHER_HDR_LEN) / 4;
	uint8_t *ip, *th;

	memcpy(d, &ep->rmac, 6);
	memcpy(d + 6, &ep->lmac, 6);
	/* The tags the connection's frames arrived with (802.1Q, QinQ). */
	for (unsigned int t = 0; t < tags; t++) {
		wr16(d + 12 + 4 * t, ep->vlan_tpid[t] ? ep->vlan_tpid[t] : RTE_ETHER_TYPE_VLAN);
		wr16(d + 14 + 4 * t, ep->vlan_tci[t]);
	}
	ip = d + l2_len;
	if (ep->family == 4) {
		wr16(ip - 2, RTE_ETHER_TYPE_IPV4);
		ip[0] = 0x45; ip[1] = 0;
		wr16(ip + 2, (uint16_t)(l3_len + tcp_len));
		wr16(ip + 4, 0);
		wr16(ip + 6, 0x4000); /* DF: we do our own MSS */
		ip[8] = 64; ip[9] = IPPROTO_TCP;
		wr16(ip + 10, 0);
		memcpy(ip + 12, ep->laddr, 4);
		memcpy(ip + 16, ep->raddr, 4);
		{
			uint16_t ck = (uint16_t)~fold64(sum_words(ip, 20));

			memcpy(ip + 10, &ck, 2);
		}
	} else {
		wr16(ip - 2, RTE_ETHER_TYPE_IPV6);
		wr32(ip, 0x60000000);
		wr16(ip + 4, (uint16_t)tcp_len);
		ip[6] = IPPROTO_TCP; ip[7] = 64;
		memcpy(ip + 8, ep->laddr, 16);
		memcpy(ip + 24, ep->raddr, 16);
	}
	th = ip + l3_len;
	wr16(th, ep->lport);
	wr16(th + 2, ep->rport);
	wr32(th + 4, o->seq);
	wr32(th + 8, o->ack);
	th[12] = (uint8_t)(((20 + olen) / 4) << 4);
	th[13] = o->flags;
	wr16(th + 14, o->wnd);
	wr16(th + 16, 0);
	wr16(th + 18, 0);
	write_opts(th + 20, o);
	return th;
}

/* Do the frame's tags all have TPIDs pkt_parse() walks? */
static inline bool
tpids_walked(const struct tcp_endpoints *ep, unsigned int tags)
{
	for (unsigned int t = 0; t < tags; t++) {
		uint16_t tpid = ep->vlan_tpid[t] ? ep->vlan_tpid[t] : RTE_ETHER_TYPE_VLAN;

		if (tpid != RTE_ETHER_TYPE_VLAN && tpid != RTE_ETHER_TYPE_QINQ &&
		    tpid != RTE_ETHER_TYPE_QINQ1)
			return false;
	}
	return true;
}

void
tcp_hdr_tmpl_init(struct tcp_hdr_tmpl *t, const struct tcp_endpoints *ep)
{
	static const struct tcp_seg_out none;
	unsigned int tags = ep->vlan_count > 2 ? 2 : ep->vlan_count;
	uint32_t l2_len = RTE_ETHER_HDR_LEN + 4u * tags;
	uint32_t l3_len = ep->family == 4 ? 20 : 40;
	uint8_t buf[RTE_ETHER_HDR_LEN + 8 + 40 + 20];
	uint8_t *ip = buf + l2_len, *th;
	uint32_t ports;

	memset(t, 0, sizeof(*t));
	memset(buf, 0, sizeof(buf));
	th = write_headers(buf, ep, &none, 0, l2_len, l3_len, 0);
	/* The fields each frame sets are 0 in the sums. */
	if (ep->family == 4) {
		memset(ip + 2, 0, 2);   /* total length */
		memset(ip + 10, 0, 2);  /* checksum */
		t->ip_sum = fold64(sum_words(ip, 20));
	}
	memcpy(&ports, th, 4);
	t->tcp_sum = fold64((uint64_t)tcp_pseudo_sum(ep->family, ep->laddr, ep->raddr, 0) +
			    ports);
	t->l2_len = (uint8_t)l2_len;
	t->walked = tpids_walked(ep, tags);
	t->ok = 1;
}

static inline void
st64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* The headers of a frame of ep's connection at d, as write_headers()
 * lays them out: the fixed fields in wide stores, the checksums from
 * t's sums. Returns the TCP header; *sum gets the TCP checksum's sum
 * of the pseudo header and the TCP header (options included). */
static inline uint8_t *
tmpl_headers(uint8_t *d, const struct tcp_hdr_tmpl *t, const struct tcp_endpoints *ep,
	     const struct tcp_seg_out *o, uint32_t olen, uint32_t l2_len,
	     uint32_t tcp_len, uint64_t *sum)
{
	unsigned int tags = (l2_len - RTE_ETHER_HDR_LEN) / 4;
	uint8_t *ip = d + l2_len, *th;
	uint16_t len16;

	memcpy(d, &ep->rmac, 6);
	memcpy(d + 6, &ep->lmac, 6);
	for (unsigned int i = 0; i < tags; i++) {
		wr16(d + 12 + 4 * i, ep->vlan_tpid[i] ? ep->vlan_tpid[i] : RTE_ETHER_TYPE_VLAN);
		wr16(d + 14 + 4 * i, ep->vlan_tci[i]);
	}
	if (ep->family == 4) {
		uint16_t ck;

		len16 = rte_cpu_to_be_16((uint16_t)(20 + tcp_len));
		ck = (uint16_t)~fold(t->ip_sum + len16);
		wr16(ip - 2, RTE_ETHER_TYPE_IPV4);
		/* version/IHL, TOS, length; ID 0, DF; TTL 64, TCP, checksum */
		st64(ip, rte_cpu_to_be_64(0x4500000000004000ull));
		memcpy(ip + 2, &len16, 2);
		ip[8] = 64;
		ip[9] = IPPROTO_TCP;
		memcpy(ip + 10, &ck, 2);
		memcpy(ip + 12, ep->laddr, 4);
		memcpy(ip + 16, ep->raddr, 4);
		th = ip + 20;
	} else {
		len16 = rte_cpu_to_be_16((uint16_t)tcp_len);
		wr16(ip - 2, RTE_ETHER_TYPE_IPV6);
		/* version, class and label 0; length; TCP; hop limit 64 */
		st64(ip, rte_cpu_to_be_64(0x6000000000000640ull));
		memcpy(ip + 4, &len16, 2);
		memcpy(ip + 8, ep->laddr, 16);
		memcpy(ip + 24, ep->raddr, 16);
		th = ip + 40;
	}
	wr16(th, ep->lport);
	wr16(th + 2, ep->rport);
	wr32(th + 4, o->seq);
	wr32(th + 8, o->ack);
	/* data offset, flags, window; checksum and urgent pointer 0 */
	st64(th + 12, 0);
	th[12] = (uint8_t)(((20 + olen) / 4) << 4);
	th[13] = o->flags;
	wr16(th + 14, o->wnd);
	write_opts(th + 20, o);
	/* The pseudo header's length as tcp_pseudo_sum() adds it (its
	 * upper half is 0: frames are under 64 KiB). */
	*sum = (uint64_t)t->tcp_sum + rte_cpu_to_be_16((uint16_t)tcp_len) +
	       sum_words(th + 4, 16 + olen);
	return th;
}

struct rte_mbuf *
tcp_seg_build(struct rte_mempool *mp, const struct tcp_endpoints *ep,
	      const struct tcp_seg_out *o, const struct rte_mbuf *data,
	      uint32_t data_off, uint32_t data_len)
{
	return tcp_seg_build_ex(mp, ep, o, (struct rte_mbuf *)(uintptr_t)data,
				data_off, data_len, NULL, false);
}

/* A frame's headers at p, from t when it has one, else field by field;
 * *sum gets the TCP header's and pseudo header's sum. Returns the TCP
 * header. */
static inline uint8_t *
frame_headers(uint8_t *p, const struct tcp_hdr_tmpl *t,
	      const struct tcp_endpoints *ep, const struct tcp_seg_out *o,
	      uint32_t olen, uint32_t l2_len, uint32_t l3_len, uint32_t tcp_len,
	      uint64_t *sum)
{
	uint8_t *th;

	if (t != NULL && t->ok)
		return tmpl_headers(p, t, ep, o, olen, l2_len, tcp_len, sum);
	th = write_headers(p, ep, o, olen, l2_len, l3_len, tcp_len);
	*sum = sum_words(th, 20 + olen) + tcp_pseudo_sum(ep->family, ep->laddr,
							 ep->raddr, tcp_len);
	return th;
}

/* May a frame's headers go into d's headroom, hlen bytes of it? Only
 * when d owns its buffer and nothing but the send queue holds it: no
 * frame sent from it before is still on its way out (each holds a
 * reference until the device is done with it), so no one reads the
 * headroom. A buffer with more references (a frame of it in a tx
 * queue, a second piece of it) takes a header mbuf, as before. Nor
 * when d's kept payload sum starts before its data (bytes acknowledged
 * and cut off the front): piece_sum() reads those bytes back to take
 * them out of the sum, and the headers would have overwritten them.
 * A clone (indirect) is judged by its buffer's references instead
 * (below; tcp_send_mbuf() states what its owner must do). */
static inline bool
in_place_ok(const struct tcp_psum_reg *ps, const struct rte_mbuf *d,
	    uint32_t hlen, bool fresh)
{
	const struct tcp_psum *c;

	if (rte_mbuf_refcnt_read(d) != 1 || rte_pktmbuf_headroom(d) < hlen)
		return false;
	if (!RTE_MBUF_DIRECT(d)) {
		/* A clone that another queue's mbuf lent its bytes (an MPTCP
		 * subflow's chunk of the meta-connection's send queue). Its
		 * frames count on the buffer's mbuf, not on it. Only data
		 * sent for the first time: the owner of the buffer then
		 * still holds it (a chunk is cloned from its queue, and
		 * only bytes already sent are acknowledged), so two
		 * references are the owner's and the clone's, with no frame
		 * of either on its way out. And only a clone that starts
		 * where the buffer's own data does: what lies before is
		 * headroom, no one's bytes. */
		const struct rte_mbuf *o;

		if (!fresh || !RTE_MBUF_CLONED(d))
			return false;
		o = rte_mbuf_from_indirect((struct rte_mbuf *)(uintptr_t)d);
		if (rte_mbuf_refcnt_read(o) != 2 || o->data_off != d->data_off)
			return false;
	}
	c = psum_get(ps, d);
	return c == NULL || c->data_off >= d->data_off;
}

/*
 * m (from rte_mbuf_raw_alloc(): one segment, no next, direct) made a
 * frame of d's bytes behind hlen bytes of d's headroom, where its
 * headers go: what rte_pktmbuf_attach() and rte_pktmbuf_prepend() do,
 * each field set once. The attach would also copy d's receive flags,
 * offload lengths, tags, hash and dynamic fields, which a frame built
 * here must not carry (rte_pktmbuf_alloc() leaves the hash and the
 * dynamic fields as the mbuf's last use left them; so does this). d is
 * direct, or a clone of a direct mbuf (in_place_ok()); the frame holds
 * a reference on the mbuf that owns the buffer, which its free drops
 * (rte_pktmbuf_detach()).
 */
static inline void
attach_behind(struct rte_mbuf *m, struct rte_mbuf *d, uint16_t hlen)
{
	rte_mbuf_refcnt_update(RTE_MBUF_DIRECT(d) ? d : rte_mbuf_from_indirect(d), 1);
	m->priv_size = d->priv_size;
	m->ol_flags = RTE_MBUF_F_INDIRECT;
	m->buf_addr = d->buf_addr;
	rte_mbuf_iova_set(m, rte_mbuf_iova_get(d));
	m->buf_len = d->buf_len;
	m->data_off = (uint16_t)(d->data_off - hlen);
	m->data_len = (uint16_t)(d->data_len + hlen);
	m->packet_type = 0;
	m->vlan_tci = 0;
	m->vlan_tci_outer = 0;
	m->tx_offload = 0;
}

/* The mbuf fields of a frame of ep just laid out in m (its nb_segs
 * aside), and its pkt_meta: the stages after the engine's owner read
 * it, so it is written from what was laid out rather than parsed again
 * (tcp_tx_burst()), unless the owner reads none (TCP_F_TX_NO_META). A
 * tag of a TPID the parser would not walk (!walked) is left to it. */
static inline void
frame_fields(struct rte_mbuf *m, const struct tcp_endpoints *ep,
	     const struct tcp_seg_out *o, uint32_t frame, uint32_t l2_len,
	     uint32_t l3_len, uint32_t l4_len, unsigned int tags, bool walked)
{
	m->pkt_len = frame;
	m->port = ep->port;
	m->l2_len = (uint16_t)l2_len;
	m->l3_len = (uint16_t)l3_len;
	m->l4_len = (uint16_t)l4_len;
	if (!o->no_meta && m->priv_size >= PKT_META_PRIV_SIZE) {
		if (walked)
			pkt_meta_tcp_built(m, pkt_meta(m), ep->port, (uint8_t)tags);
		else
			(void)pkt_parse(m, pkt_meta(m), ep->port);
	}
}

struct rte_mbuf *
tcp_seg_build_ex(struct rte_mempool *mp, const struct tcp_endpoints *ep,
		 const struct tcp_seg_out *o, struct rte_mbuf *data,
		 uint32_t data_off, uint32_t data_len,
		 const struct tcp_psum_reg *ps, bool chain)
{
	return tcp_seg_build_tmpl(mp, NULL, ep, o, data, data_off, data_len, ps, chain);
}

struct rte_mbuf *
tcp_seg_build_tmpl(struct rte_mempool *mp, const struct tcp_hdr_tmpl *t,
		   const struct tcp_endpoints *ep, const struct tcp_seg_out *o,
		   struct rte_mbuf *data, uint32_t data_off, uint32_t data_len,
		   const struct tcp_psum_reg *ps, bool chain)
{
	const bool tmpl = t != NULL && t->ok;
	uint32_t olen = tcp_seg_opt_len(o);
	uint32_t l3_len = ep->family == 4 ? 20 : 40;
	uint32_t hlen = 20 + olen;
	uint32_t tcp_len = hlen + data_len;
	unsigned int tags = ep->vlan_count > 2 ? 2 : ep->vlan_count;
	uint32_t l2_len = tmpl ? t->l2_len : RTE_ETHER_HDR_LEN + 4u * tags;
	uint32_t frame = l2_len + l3_len + tcp_len;
	struct rte_mbuf *m, *last, *d;
	uint8_t *p, *th;
	uint32_t at, left, off;
	uint64_t sum;
	uint16_t segs = 1;

	if (olen > 40 || frame > 0xffff)
		return NULL;
	if (data_len == 0)
		chain = false;
	d = data;
	off = data_off;
	while (d != NULL && off >= d->data_len) {
		off -= d->data_len;
		d = d->next;
	}
	if (chain && off == 0 && d != NULL && d->data_len == data_len &&
	    in_place_ok(ps, d, frame - data_len, o->fresh)) {
		/* The segment is one whole mbuf of the queue that nothing else
		 * references: one indirect mbuf of it, headers in its
		 * headroom (tcp_seg_build_ex(), "in place"). */
		m = rte_mbuf_raw_alloc(mp);
		if (m == NULL)
			return NULL;
		attach_behind(m, d, (uint16_t)(frame - data_len));
		p = rte_pktmbuf_mtod(m, uint8_t *);
		th = frame_headers(p, t, ep, o, olen, l2_len, l3_len, tcp_len, &sum);
		sum += tcp_sum_at(piece_sum(ps, d, 0, data_len), hlen);
		goto done;
	}
	m = rte_pktmbuf_alloc(mp);
	if (m == NULL)
		return NULL;
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(chain ? frame - data_len : frame));
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	th = frame_headers(p, t, ep, o, olen, l2_len, l3_len, tcp_len, &sum);

	/* The payload: each piece of the queue it spans is summed (from
	 * the cache kept at receive time where it covers the piece) and
	 * then either referenced by an indirect mbuf (the queue keeps its
	 * own reference, so a retransmission finds the bytes) or copied. */
	last = m;
	at = hlen;
	for (left = data_len; left > 0; d = d->next, off = 0) {
		uint32_t take;

		if (d == NULL)
			goto fail;
		take = RTE_MIN((uint32_t)d->data_len - off, left);
		if (take == 0)
			continue;
		sum += tcp_sum_at(piece_sum(ps, d, off, take), at);
		if (chain) {
			struct rte_mbuf *mi = rte_pktmbuf_alloc(mp);

			if (mi == NULL)
				goto fail;
			rte_pktmbuf_attach(mi, d);
			mi->data_off = (uint16_t)(mi->data_off + off);
			mi->data_len = (uint16_t)take;
			mi->pkt_len = take;
			last->next = mi;
			last = mi;
			segs++;
		} else {
			memcpy(th + at, rte_pktmbuf_mtod_offset(d, const uint8_t *, off), take);
		}
		at += take;
		left -= take;
	}
done:
	{
		uint16_t c = (uint16_t)~fold64(sum);

		memcpy(th + 16, &c, 2);
	}
	m->nb_segs = segs;
	frame_fields(m, ep, o, frame, l2_len, l3_len, hlen, tags,
		     tmpl ? t->walked : tpids_walked(ep, tags));
	return m;
fail:
	m->nb_segs = segs;
	rte_pktmbuf_free(m);
	return NULL;
}

void
tcp_seg_rep_init(struct tcp_seg_rep *r, const struct tcp_endpoints *ep,
		 const struct tcp_seg_out *o, const struct rte_mbuf *m)
{
	uint32_t hl = (uint32_t)m->l2_len + m->l3_len + m->l4_len;
	uint8_t *ip, *th;

	r->ok = 0;
	if (hl < 48 || hl > sizeof(r->hdr) || hl > m->data_len ||
	    o->xopt_len != 0 || o->hopt_len > m->l4_len - 20u)
		return;
	memcpy(r->hdr, rte_pktmbuf_mtod(m, const uint8_t *), hl);
	r->l2_len = (uint8_t)m->l2_len;
	r->l3_len = (uint8_t)m->l3_len;
	r->tcp_hl = (uint8_t)m->l4_len;
	r->tags = (uint8_t)((m->l2_len - RTE_ETHER_HDR_LEN) / 4);
	r->walked = tpids_walked(ep, r->tags);
	r->ipv4 = ep->family == 4;
	ip = r->hdr + r->l2_len;
	th = ip + r->l3_len;
	/* The fields each frame sets are 0 in the kept copy's sums. */
	if (r->ipv4) {
		memset(ip + 2, 0, 2);
		memset(ip + 10, 0, 2);
		r->ip_sum = fold64(sum_words(ip, 20));
	} else {
		r->ip_sum = 0;
	}
	memset(th + 4, 0, 4);
	memset(th + 12, 0, 2);
	memset(th + 16, 0, 2);
	/* The hook's options end the header (write_opts(), no xopt). They
	 * stay in hdr with a sum of their own: a frame with the same ones
	 * (o->hopt_gen) copies them with the rest, and one with others
	 * writes those into r first (tcp_seg_build_rep()). */
	r->hopt_len = o->hopt_len;
	r->hopt_off = (uint8_t)(r->tcp_hl - o->hopt_len);
	r->hopt_gen = o->hopt_gen;
	r->hopt_sum = sum_words(th + r->hopt_off, r->hopt_len);
	r->sum = (uint64_t)tcp_pseudo_sum(ep->family, ep->laddr, ep->raddr, 0) +
		 sum_words(th, r->hopt_off);
	th[12] = (uint8_t)((r->tcp_hl / 4) << 4);
	r->ok = 1;
}

/* Copy n bytes, 48 <= n <= 128, in 16-byte moves, the last ending at
 * n (overlapping the one before): 48 bytes, 16 more past 64 (IPv4 with
 * timestamps is 66, IPv6 86), then the end. */
static inline void
copy_hdr(uint8_t *d, const uint8_t *s, uint32_t n)
{
	memcpy(d, s, 48);
	if (n > 64) {
		memcpy(d + 48, s + 48, 16);
		for (uint32_t i = 64; i + 16 < n; i += 16)
			memcpy(d + i, s + i, 16);
	}
	memcpy(d + n - 16, s + n - 16, 16);
}

__rte_always_inline struct rte_mbuf *
tcp_seg_build_rep(struct rte_mempool *mp, struct tcp_seg_rep *r,
		  const struct tcp_endpoints *ep, const struct tcp_seg_out *o,
		  struct rte_mbuf *d, const struct tcp_psum_reg *ps, bool hooked)
{
	const uint32_t hl = (uint32_t)r->l2_len + r->l3_len + r->tcp_hl;
	const uint32_t data_len = d->data_len;
	const uint32_t tcp_len = r->tcp_hl + data_len;
	struct rte_mbuf *m;
	uint8_t *p, *ip, *th;
	uint16_t len16, ck;
	uint32_t w32;
	uint16_t w16;
	uint64_t sum, hsum = 0;

	if (data_len == 0 || o->hopt_len != r->hopt_len || !in_place_ok(ps, d, hl, o->fresh))
		return NULL;
	m = rte_mbuf_raw_alloc(mp);
	if (m == NULL)
		return NULL;
	if (hooked && r->hopt_len != 0) {
		if (o->hopt_gen != r->hopt_gen) {
			/* A multiple of 4 long, at a multiple of 4. */
			memcpy(r->hdr + r->l2_len + r->l3_len + r->hopt_off, o->hopt,
			       r->hopt_len);
			r->hopt_sum = sum_words(o->hopt, r->hopt_len);
			r->hopt_gen = o->hopt_gen;
		}
		hsum = r->hopt_sum;
	}
	attach_behind(m, d, (uint16_t)hl);
	p = rte_pktmbuf_mtod(m, uint8_t *);
	copy_hdr(p, r->hdr, hl);
	ip = p + r->l2_len;
	th = ip + r->l3_len;
	if (r->ipv4) {
		len16 = rte_cpu_to_be_16((uint16_t)(20 + tcp_len));
		ck = (uint16_t)~fold(r->ip_sum + len16);
		memcpy(ip + 2, &len16, 2);
		memcpy(ip + 10, &ck, 2);
	} else {
		len16 = rte_cpu_to_be_16((uint16_t)tcp_len);
		memcpy(ip + 4, &len16, 2);
	}
	w32 = rte_cpu_to_be_32(o->seq);
	memcpy(th + 4, &w32, 4);
	th[13] = o->flags;
	memcpy(&w16, th + 12, 2);
	/* The header's length is a multiple of 4: the payload's sum adds
	 * at an even offset, as it is. */
	sum = r->sum + hsum + w32 + w16 + rte_cpu_to_be_16((uint16_t)tcp_len) +
	      piece_sum(ps, d, 0, data_len);
	ck = (uint16_t)~fold64(sum);
	memcpy(th + 16, &ck, 2);
	frame_fields(m, ep, o, hl + data_len, r->l2_len, r->l3_len, r->tcp_hl,
		     r->tags, r->walked);
	return m;
}
