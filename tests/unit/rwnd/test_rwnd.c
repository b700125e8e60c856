/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/rwnd on a virtual clock: the parameters, the TCP header and SYN
 * option parser, the handshake (both legs, both window scales), the
 * window rule of rwnd.h in both directions (computed here from the
 * inputs), the rate term measured from the ACKs, the headroom that
 * engages a flow, release once all is acknowledged and the sender has
 * been quiet, the window never raised, extra_ns, the leg floor, Karn
 * (a SYN or SYN-ACK sent twice), RST, sequence wrap, the 4-way table
 * (eviction and expiry), the live-entry count, and the window rewrite
 * with its incremental checksum checked against one computed from
 * scratch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rwnd.h"

#define US 1000ULL
#define MS 1000000ULL
#define SEC 1000000000ULL
/* Not a multiple of a tick (1.024 us): legs are differences of now >> 10. */
#define T0 (5 * SEC + 123)

#define FIN 0x01
#define SYN 0x02
#define RST 0x04
#define PSH 0x08
#define ACK 0x10

#define SUB RWND_SUB
#define NET RWND_NET

/* ---- helpers ------------------------------------------------------------ */

static struct rwnd_params
params(uint32_t flows)
{
	struct rwnd_params p;

	rwnd_params_default(&p);
	p.flows = flows;
	return p;
}

static struct rwnd *
make(const struct rwnd_params *p)
{
	size_t sz = rwnd_memsize(p);
	void *mem;

	assert_true(sz > 0);
	mem = aligned_alloc(64, (sz + 63) & ~(size_t)63);
	assert_non_null(mem);
	memset(mem, 0xa5, sz); /* "any content" */
	assert_ptr_equal(rwnd_init(mem, p), mem);
	return mem;
}

static uint32_t
ticks(uint64_t ns)
{
	return (uint32_t)(ns >> 10);
}

/* The coarse clock of idle and quiet times: units of 2^20 ns. */
static uint32_t
units(uint64_t ns)
{
	return (uint32_t)(ns >> 20);
}

/* One connection as the tests play it. */
struct conn {
	uint32_t hash;
	uint32_t ports;
	unsigned client;      /* the side that sends the SYN */
	uint32_t isn[2];      /* by side */
	int8_t ws[2];         /* each side's window-scale option, -1: none */
	uint64_t rtt_ns[2];   /* from the box to each side and back */
	/* Set by handshake(): */
	uint32_t leg[2];      /* the legs the library must have, in ticks */
	uint64_t end;         /* when the handshake's ACK passed */
};

static struct conn
conn(uint32_t hash, uint16_t sport, uint16_t dport)
{
	struct conn c;

	memset(&c, 0, sizeof(c));
	c.hash = hash;
	c.ports = rwnd_ports(sport, dport);
	c.client = SUB;
	c.isn[SUB] = 0x20000000;
	c.isn[NET] = 0x10000000;
	c.ws[SUB] = 7;
	c.ws[NET] = 9;
	c.rtt_ns[SUB] = 8 * MS + 55;
	c.rtt_ns[NET] = 40 * MS + 777;
	return c;
}

static struct rwnd_seg
seg(const struct conn *c, unsigned side, uint8_t flags, uint32_t seq,
    uint32_t ack, uint32_t payload, uint16_t win)
{
	struct rwnd_seg s;

	memset(&s, 0, sizeof(s));
	s.hash = c->hash;
	s.ports = c->ports;
	s.side = (uint8_t)side;
	s.flags = flags;
	s.seq = seq;
	s.ack = ack;
	s.payload = payload;
	s.win = win;
	s.wscale = -1;
	return s;
}

static struct rwnd_seg
syn_of(const struct conn *c)
{
	struct rwnd_seg s = seg(c, c->client, SYN, c->isn[c->client], 0, 0, 64240);

	s.wscale = c->ws[c->client];
	return s;
}

static struct rwnd_seg
synack_of(const struct conn *c)
{
	const unsigned b = c->client ^ 1;
	struct rwnd_seg s = seg(c, b, SYN | ACK, c->isn[b], c->isn[b ^ 1] + 1, 0, 65160);

	s.wscale = c->ws[b];
	return s;
}

/* Data from side d: len bytes at offset off of its stream. */
static struct rwnd_seg
data(const struct conn *c, unsigned d, uint32_t off, uint32_t len)
{
	return seg(c, d, ACK, c->isn[d] + 1 + off, c->isn[d ^ 1] + 1, len, 65535);
}

/* An ACK from side r of the first `acked` bytes of the other side's stream. */
static struct rwnd_seg
ackseg(const struct conn *c, unsigned r, uint32_t acked, uint16_t win)
{
	return seg(c, r, ACK, c->isn[r] + 1, c->isn[r ^ 1] + 1 + acked, 0, win);
}

static bool
track(struct rwnd *t, const struct rwnd_seg s, uint64_t now, struct rwnd_ref *ref)
{
	return rwnd_track(t, &s, now, ref);
}

/* SYN at t0, SYN-ACK one server round trip later, the client's ACK one
 * client round trip after that. */
static void
handshake(struct rwnd *t, struct conn *c, uint64_t t0)
{
	const unsigned a = c->client, b = a ^ 1;
	const uint64_t t1 = t0 + c->rtt_ns[b], t2 = t1 + c->rtt_ns[a];
	struct rwnd_ref ref;
	struct rwnd_seg s;

	assert_false(track(t, syn_of(c), t0, &ref));
	assert_false(track(t, synack_of(c), t1, &ref));
	s = seg(c, a, ACK, c->isn[a] + 1, c->isn[b] + 1, 0, 502);
	/* (rwnd_window() is not called: it would start a rate measurement.) */
	rwnd_track(t, &s, t2, &ref);
	c->leg[b] = ticks(t1) - ticks(t0);
	c->leg[a] = ticks(t2) - ticks(t1);
	c->end = t2;
}

static unsigned
shift_of(const struct conn *c, unsigned r)
{
	return c->ws[0] >= 0 && c->ws[1] >= 0 ? (unsigned)c->ws[r] : 0;
}

/*
 * The rule of rwnd.h in bytes: beyond * (1 + leg_d / leg_r) + headroom,
 * where the second term is replaced by rate * leg_d when that is larger
 * (rate: bytes per 1024 ticks, measured from the ACKs; 0 before the
 * first measurement).
 */
static uint64_t
rule_bytes(uint32_t inflight, uint32_t backlog, uint64_t leg_d, uint64_t leg_r,
	   uint32_t headroom, uint32_t rate)
{
	const uint64_t beyond = inflight - (backlog < inflight ? backlog : inflight);
	const uint64_t own = beyond * leg_d / leg_r, by_rate = (uint64_t)rate * leg_d >> 10;

	const uint64_t path = beyond + (by_rate > own ? by_rate : own);

	return path + path / 2 + headroom;
}

/*
 * The data rate the library measures from the ACKs of one direction:
 * the first ACK sets a mark (its ack, its tick with the low bit set);
 * an ACK at least a window later (two round trips, at least 9766 ticks)
 * and at most 8 windows later gives a sample of acknowledged bytes per
 * 1024 ticks, smoothed 3/4 old + 1/4 new, and sets the next mark.
 */
struct rate_model {
	uint32_t m_ack, m_t, rate;
};

static void
rate_seen(struct rate_model *m, const struct conn *c, unsigned d, uint32_t ack,
	  uint64_t now_ns)
{
	const uint32_t now = ticks(now_ns);
	uint32_t win = 2 * (c->leg[d] + c->leg[d ^ 1]);

	if (win < 9766)
		win = 9766;
	if (m->m_t != 0) {
		const uint32_t el = now - m->m_t;
		const int32_t acked = (int32_t)(ack - m->m_ack);

		if (el < win)
			return;
		if (acked >= 0 && el <= 8 * win) {
			const uint64_t smp = ((uint64_t)acked << 10) / el;

			m->rate = m->rate ? (uint32_t)((3ull * m->rate + smp) >> 2) : (uint32_t)smp;
		}
	}
	m->m_ack = ack;
	m->m_t = now | 1;
}

static uint16_t
in_units(uint64_t bytes, unsigned shift)
{
	return (uint16_t)((bytes + (1ull << shift) - 1) >> shift);
}

/* The window an ACK from r must carry, from the connection's legs and
 * the data sender's measured rate. */
static uint16_t
expected_r(const struct conn *c, unsigned r, uint32_t inflight, uint32_t backlog,
	   uint64_t extra_ns, const struct rwnd_params *p, uint32_t rate)
{
	const unsigned d = r ^ 1;
	const uint32_t floor = ticks(p->min_leg_ns) ? ticks(p->min_leg_ns) : 1;
	const uint64_t leg_r = c->leg[r] > floor ? c->leg[r] : floor;
	const uint64_t leg_d = c->leg[d] + (extra_ns >> 10);

	return in_units(rule_bytes(inflight, backlog, leg_d, leg_r, p->headroom, rate),
			shift_of(c, r));
}

/* The same before any rate was measured. */
static uint16_t
expected(const struct conn *c, unsigned r, uint32_t inflight, uint32_t backlog,
	 uint64_t extra_ns, const struct rwnd_params *p)
{
	return expected_r(c, r, inflight, backlog, extra_ns, p, 0);
}

/* Units of 2^20 ns a clamped sender must stay quiet before release. */
static uint32_t
quiet_units(const struct conn *c, const struct rwnd_params *p)
{
	return units(p->quiet_ns) + ((4 * ((uint64_t)c->leg[0] + c->leg[1])) >> 10);
}

static const struct rwnd_counters *
cnt(const struct rwnd *t)
{
	return rwnd_counters(t);
}

/* ---- parameters ---------------------------------------------------------- */

static void
test_the_defaults_are_valid_and_bad_flows_or_headroom_give_no_instance(void **state)
{
	struct rwnd_params p, q;
	uint8_t mem[4096] __attribute__((aligned(64)));

	(void)state;
	rwnd_params_default(&p);
	assert_int_equal(p.flows, 65536);
	assert_int_equal(p.headroom, 3000);
	assert_int_equal(p.idle_ns, 30 * SEC);
	assert_int_equal(p.min_leg_ns, 100 * US);
	assert_int_equal(p.quiet_ns, 250 * MS);
	/* A header, then one 64-byte line an entry and a 4-byte tag. */
	assert_true(rwnd_memsize(&p) >= 65536 * 68);
	q = params(8);
	assert_int_equal(rwnd_memsize(&p) - rwnd_memsize(&q), (65536 - 8) * 68);
	q = params(1u << 26);
	assert_int_equal(rwnd_memsize(&q) - rwnd_memsize(&p), ((1u << 26) - 65536) * (size_t)68);
	q = params(4);
	assert_true(rwnd_memsize(&q) <= sizeof(mem));
	assert_ptr_equal(rwnd_init(mem, &q), (void *)mem);
	assert_null(rwnd_init(NULL, &q));

	static const uint32_t bad_flows[] = { 0, 1, 2, 3, 5, 6, 12, 100, 65535, 65537,
					      1u << 27, 0x80000000u, 0xffffffffu };
	for (size_t i = 0; i < sizeof(bad_flows) / sizeof(bad_flows[0]); i++) {
		q = params(bad_flows[i]);
		assert_int_equal(rwnd_memsize(&q), 0);
		assert_null(rwnd_init(mem, &q));
	}
	q = params(4);
	q.headroom = 0;
	assert_int_equal(rwnd_memsize(&q), 0);
	assert_null(rwnd_init(mem, &q));
	q.headroom = 1;
	assert_true(rwnd_memsize(&q) > 0);
	q.headroom = 1u << 30;
	assert_true(rwnd_memsize(&q) > 0);
	q.headroom = (1u << 30) + 1;
	assert_int_equal(rwnd_memsize(&q), 0);
	q.headroom = 3000;
	/* Idle and quiet times are counts of 2^20 ns below 2^30. */
	static const uint64_t bad_idle[] = { 0, 1000, (1 << 20) - 1, 1ull << 50, UINT64_MAX };
	for (size_t i = 0; i < sizeof(bad_idle) / sizeof(bad_idle[0]); i++) {
		q.idle_ns = bad_idle[i];
		assert_int_equal(rwnd_memsize(&q), 0);
		assert_null(rwnd_init(mem, &q));
	}
	q.idle_ns = 1 << 20;
	assert_true(rwnd_memsize(&q) > 0);
	q.idle_ns = (1ull << 50) - 1;
	assert_true(rwnd_memsize(&q) > 0);
	q.quiet_ns = 1ull << 50;
	assert_int_equal(rwnd_memsize(&q), 0);
	q.quiet_ns = 0;
	assert_true(rwnd_memsize(&q) > 0);
	q.min_leg_ns = 1ull << 41;
	assert_int_equal(rwnd_memsize(&q), 0);

	/* One name and one description per counter, in struct order. */
	assert_int_equal(RWND_NB_COUNTERS, 13);
	assert_string_equal(rwnd_counter_names[0], "segments");
	assert_string_equal(rwnd_counter_names[RWND_NB_COUNTERS - 1], "syn_queued");
	for (size_t i = 0; i < RWND_NB_COUNTERS; i++)
		assert_true(rwnd_counter_help[i] != NULL && rwnd_counter_help[i][0] != '\0');
}

/* ---- the parser ---------------------------------------------------------- */

/* A TCP header of doff bytes: fields, then the option bytes. */
static void
tcp_header(uint8_t *h, uint32_t doff, uint32_t seq, uint32_t ack, uint8_t flags,
	   uint16_t win, const uint8_t *opt, size_t optlen)
{
	memset(h, 0, doff);
	h[0] = 0x01; h[1] = 0xbb; h[2] = 0xc3; h[3] = 0x50;
	for (int b = 0; b < 4; b++) {
		h[4 + b] = (uint8_t)(seq >> (24 - 8 * b));
		h[8 + b] = (uint8_t)(ack >> (24 - 8 * b));
	}
	h[12] = (uint8_t)(doff / 4 << 4);
	h[13] = flags;
	h[14] = (uint8_t)(win >> 8);
	h[15] = (uint8_t)win;
	if (optlen)
		memcpy(h + 20, opt, optlen);
}

static struct rwnd_seg
sentinel(void)
{
	struct rwnd_seg s;

	memset(&s, 0, sizeof(s));
	s.hash = 0xdeadbeef;
	s.ports = 0x12345678;
	s.payload = 777;
	s.side = NET;
	return s;
}

static void
assert_sentinel_kept(const struct rwnd_seg *s)
{
	assert_int_equal(s->hash, 0xdeadbeef);
	assert_int_equal(s->ports, 0x12345678);
	assert_int_equal(s->payload, 777);
	assert_int_equal(s->side, NET);
}

static void
test_the_parser_reads_seq_ack_flags_and_window_and_leaves_the_rest_alone(void **state)
{
	uint8_t h[20];
	struct rwnd_seg s = sentinel();

	(void)state;
	tcp_header(h, 20, 0x01020304, 0xa0b0c0d0, PSH | ACK, 0xfedc, NULL, 0);
	assert_int_equal(rwnd_seg_parse(h, 20, &s), 0);
	assert_int_equal(s.seq, 0x01020304);
	assert_int_equal(s.ack, 0xa0b0c0d0);
	assert_int_equal(s.flags, PSH | ACK);
	assert_int_equal(s.win, 0xfedc);
	assert_int_equal(s.wscale, -1);
	assert_int_equal(s.bad, 0);
	assert_sentinel_kept(&s);
}

static void
test_the_parser_reads_the_window_scale_among_a_syn_s_options(void **state)
{
	/* MSS 1460, SACK permitted, timestamps, NOP, window scale 7. */
	static const uint8_t opt[] = { 2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1,
				       0, 0, 0, 0, 1, 3, 3, 7 };
	uint8_t h[40];
	struct rwnd_seg s = sentinel();

	(void)state;
	tcp_header(h, 40, 0xfffffff0, 0, SYN, 64240, opt, sizeof(opt));
	assert_int_equal(rwnd_seg_parse(h, 40, &s), 0);
	assert_int_equal(s.wscale, 7);
	assert_int_equal(s.bad, 0);
	assert_int_equal(s.seq, 0xfffffff0);
	assert_int_equal(s.flags, SYN);
	assert_int_equal(s.win, 64240);
	assert_sentinel_kept(&s);

	/* The same on a SYN-ACK; bytes past the data offset are not options. */
	uint8_t big[48];
	memset(big, 0xee, sizeof(big));
	tcp_header(big, 40, 1, 0xfffffff1, SYN | ACK, 65160, opt, sizeof(opt));
	big[39] = 0; /* window scale 0 */
	s = sentinel();
	assert_int_equal(rwnd_seg_parse(big, sizeof(big), &s), 0);
	assert_int_equal(s.wscale, 0);
	assert_int_equal(s.ack, 0xfffffff1);

	/* No window-scale option: -1, and a good parse. */
	static const uint8_t mss_only[] = { 2, 4, 0x05, 0xb4 };
	tcp_header(h, 24, 1, 0, SYN, 1000, mss_only, sizeof(mss_only));
	s = sentinel();
	assert_int_equal(rwnd_seg_parse(h, 24, &s), 0);
	assert_int_equal(s.wscale, -1);
	assert_int_equal(s.bad, 0);

	/* End of list: a window scale after it is not read. */
	static const uint8_t eol[] = { 0, 3, 3, 5 };
	tcp_header(h, 24, 1, 0, SYN, 1000, eol, sizeof(eol));
	s = sentinel();
	assert_int_equal(rwnd_seg_parse(h, 24, &s), 0);
	assert_int_equal(s.wscale, -1);
}

static void
test_the_parser_reads_a_window_scale_above_14_as_14(void **state)
{
	static const uint8_t vals[] = { 14, 15, 16, 200, 255 };
	uint8_t opt[4] = { 1, 3, 3, 0 };
	uint8_t h[24];

	(void)state;
	for (size_t i = 0; i < sizeof(vals); i++) {
		struct rwnd_seg s = sentinel();

		opt[3] = vals[i];
		tcp_header(h, 24, 1, 0, SYN, 1000, opt, sizeof(opt));
		assert_int_equal(rwnd_seg_parse(h, 24, &s), 0);
		assert_int_equal(s.wscale, 14);
	}
}

static void
test_the_parser_refuses_a_window_scale_of_the_wrong_length(void **state)
{
	static const uint8_t ws4[] = { 3, 4, 7, 0 };
	static const uint8_t ws2[] = { 1, 1, 3, 2 };
	uint8_t h[24];
	struct rwnd_seg s = sentinel();

	(void)state;
	tcp_header(h, 24, 1, 0, SYN, 1000, ws4, sizeof(ws4));
	assert_int_equal(rwnd_seg_parse(h, 24, &s), -1);
	assert_int_equal(s.wscale, -1);
	assert_int_equal(s.bad, 1);
	/* Header fields were read before the options. */
	assert_int_equal(s.seq, 1);
	assert_int_equal(s.flags, SYN);

	s = sentinel();
	tcp_header(h, 24, 1, 0, SYN, 1000, ws2, sizeof(ws2));
	assert_int_equal(rwnd_seg_parse(h, 24, &s), -1);
	assert_int_equal(s.wscale, -1);
	assert_int_equal(s.bad, 1);

	/* A good window scale then a bad one: -1, the scale forgotten. */
	static const uint8_t good_then_bad[] = { 3, 3, 7, 1, 3, 4, 7, 0 };
	uint8_t h28[28];
	s = sentinel();
	tcp_header(h28, 28, 1, 0, SYN, 1000, good_then_bad, sizeof(good_then_bad));
	assert_int_equal(rwnd_seg_parse(h28, 28, &s), -1);
	assert_int_equal(s.wscale, -1);
	assert_int_equal(s.bad, 1);
}

static void
test_the_parser_refuses_options_that_run_past_the_data_offset(void **state)
{
	uint8_t h[32];
	struct rwnd_seg s;

	(void)state;
	/* MSS at 21..24 with doff 24: runs one byte past. */
	static const uint8_t over[] = { 1, 2, 4, 5 };
	tcp_header(h, 24, 1, 0, SYN, 1000, over, sizeof(over));
	s = sentinel();
	assert_int_equal(rwnd_seg_parse(h, 32, &s), -1); /* hdr_len is not the limit */
	assert_int_equal(s.wscale, -1);
	assert_int_equal(s.bad, 1);
	/* A window scale cut by the data offset. */
	static const uint8_t ws_cut[] = { 1, 1, 3, 3 };
	tcp_header(h, 24, 1, 0, SYN, 1000, ws_cut, sizeof(ws_cut));
	s = sentinel();
	assert_int_equal(rwnd_seg_parse(h, 24, &s), -1);
	assert_int_equal(s.wscale, -1);
	/* A kind in the last byte, no room for its length. */
	static const uint8_t kind_last[] = { 1, 1, 1, 8 };
	tcp_header(h, 24, 1, 0, SYN, 1000, kind_last, sizeof(kind_last));
	s = sentinel();
	assert_int_equal(rwnd_seg_parse(h, 24, &s), -1);
	/* A length below 2 (it counts the kind and itself). */
	static const uint8_t len1[] = { 8, 1, 1, 1 };
	tcp_header(h, 24, 1, 0, SYN, 1000, len1, sizeof(len1));
	s = sentinel();
	assert_int_equal(rwnd_seg_parse(h, 24, &s), -1);
	assert_int_equal(s.bad, 1);
	/* The data offset past the bytes given. */
	static const uint8_t ws[] = { 1, 3, 3, 7 };
	tcp_header(h, 24, 1, 0, SYN, 1000, ws, sizeof(ws));
	s = sentinel();
	assert_int_equal(rwnd_seg_parse(h, 24, &s), 0);
	assert_int_equal(s.wscale, 7);
	s = sentinel();
	assert_int_equal(rwnd_seg_parse(h, 23, &s), -1);
	assert_int_equal(s.wscale, -1);
	assert_int_equal(s.bad, 1);
	/* A data offset below 20 on a SYN. */
	h[12] = 4 << 4;
	s = sentinel();
	assert_int_equal(rwnd_seg_parse(h, 24, &s), -1);
	assert_int_equal(s.bad, 1);
}

static void
test_the_parser_refuses_a_short_header(void **state)
{
	uint8_t h[20];
	struct rwnd_seg s = sentinel();

	(void)state;
	tcp_header(h, 20, 5, 6, ACK, 100, NULL, 0);
	assert_int_equal(rwnd_seg_parse(h, 19, &s), -1);
	assert_int_equal(s.wscale, -1);
	assert_int_equal(s.bad, 1);
	assert_int_equal(s.flags, 0);
	assert_sentinel_kept(&s);
	s = sentinel();
	assert_int_equal(rwnd_seg_parse(h, 0, &s), -1);
	assert_int_equal(rwnd_seg_parse(h, 20, &s), 0);
	assert_int_equal(s.seq, 5);
}

static void
test_the_parser_does_not_walk_the_options_of_a_segment_without_syn(void **state)
{
	/* Options that would be refused on a SYN, and a data offset (60)
	 * past the 24 bytes given. */
	static const uint8_t junk[] = { 3, 4, 7, 0 };
	uint8_t h[24];
	struct rwnd_seg s = sentinel();

	(void)state;
	tcp_header(h, 24, 77, 88, ACK | FIN, 4321, junk, sizeof(junk));
	h[12] = 15 << 4;
	assert_int_equal(rwnd_seg_parse(h, 24, &s), 0);
	assert_int_equal(s.wscale, -1);
	assert_int_equal(s.bad, 0);
	assert_int_equal(s.seq, 77);
	assert_int_equal(s.ack, 88);
	assert_int_equal(s.flags, ACK | FIN);
	assert_int_equal(s.win, 4321);
	/* The same bytes with SYN set are refused. */
	h[13] = SYN;
	s = sentinel();
	assert_int_equal(rwnd_seg_parse(h, 24, &s), -1);
}

/* ---- the handshake and the rule ----------------------------------------- */

static void
test_a_download_ack_after_the_handshake_carries_the_window_of_the_rule(void **state)
{
	struct rwnd_params p = params(1024);
	struct rwnd *t = make(&p);
	struct conn c = conn(0x9e3779b9, 50000, 443);
	struct rwnd_ref ref;
	struct rwnd_seg s;

	(void)state;
	handshake(t, &c, T0);
	assert_int_equal(cnt(t)->segments, 3);
	assert_int_equal(cnt(t)->syns, 1);
	assert_int_equal(cnt(t)->handshakes, 1);
	assert_int_equal(cnt(t)->ambiguous, 0);
	assert_int_equal(rwnd_entries(t, c.end), 1);
	/* The server's leg is SYN to SYN-ACK, the client's SYN-ACK to ACK. */
	assert_int_equal(c.leg[NET], 39063);
	assert_int_equal(c.leg[SUB], 7813);

	/* Had the handshake's ACK asked for a window, nothing was outstanding:
	 * the window as sent, even with a backlog over the headroom. */
	s = seg(&c, SUB, ACK, c.isn[SUB] + 1, c.isn[NET] + 1, 0, 502);
	if (track(t, s, c.end, &ref))
		assert_int_equal(rwnd_window(t, &ref, &s, 1u << 20, 0, 0, 0), 502);
	assert_int_equal(cnt(t)->engaged, 0);
	/* The server sends 100000 bytes (download). */
	s = data(&c, NET, 0, 100000);
	if (track(t, s, c.end + 1 * MS, &ref))
		assert_int_equal(rwnd_window(t, &ref, &s, 1u << 20, 0, 0, 0), s.win);
	/* The subscriber acknowledges 20000 of them. */
	s = ackseg(&c, SUB, 20000, 5000);
	assert_true(track(t, s, c.end + 20 * MS, &ref));
	/* Backlog below the headroom: not engaged, window as sent. */
	assert_int_equal(rwnd_window(t, &ref, &s, p.headroom - 1, 0, 0, 0), 5000);
	assert_int_equal(cnt(t)->engaged, 0);
	assert_int_equal(cnt(t)->clamped, 0);
	/* At 10000 queued: inflight 80000, beyond 70000, path
	 * 70000 + 70000 * 39063 / 7813 = 419982, + 209991 + 3000 = 632973
	 * bytes, 4946 units of 128. */
	assert_int_equal(expected(&c, SUB, 80000, 10000, 0, &p), 4946);
	assert_int_equal(rwnd_window(t, &ref, &s, 10000, 0, 0, 0), 4946);
	assert_int_equal(cnt(t)->engaged, 1);
	assert_int_equal(cnt(t)->clamped, 1);
	assert_int_equal(cnt(t)->not_lowered, 0);
	/* Once engaged, a backlog below the headroom is still clamped
	 * (no rate yet: 20 ms is less than two round trips). */
	s = ackseg(&c, SUB, 30000, 5000);
	assert_true(track(t, s, c.end + 21 * MS, &ref));
	assert_int_equal(rwnd_window(t, &ref, &s, 100, 0, 0, 0), expected(&c, SUB, 70000, 100, 0, &p));
	assert_int_equal(cnt(t)->engaged, 1);
	assert_int_equal(cnt(t)->clamped, 2);
	/* A backlog above the inflight: beyond 0, the headroom alone. */
	assert_int_equal(rwnd_window(t, &ref, &s, 90000, 0, 0, 0), (3000 + 127) / 128);
	assert_int_equal(cnt(t)->segments, 7);
	free(t);
}

/*
 * A SYN that waited in the box's queue (behind a busy pipe) starts the
 * server's leg when it leaves, and a queued SYN-ACK the client's: the
 * legs, and so every window of the connection, are the path's, without
 * the time spent here. A departure the entry does not wait on changes
 * nothing.
 */
static void
test_a_queued_syn_or_syn_ack_starts_its_leg_when_it_leaves(void **state)
{
	struct rwnd_params p = params(1024);
	struct rwnd *t = make(&p);
	struct conn c = conn(0x9e3779b9, 50000, 443);
	const unsigned a = c.client, b = a ^ 1;
	const uint64_t syn_left = T0 + 5 * MS, t1 = syn_left + c.rtt_ns[b];
	const uint64_t synack_left = t1 + 3 * MS, t2 = synack_left + c.rtt_ns[a];
	struct rwnd_seg s, other;
	struct rwnd_ref ref;

	(void)state;
	assert_false(track(t, syn_of(&c), T0, &ref));
	/* Not this connection's SYN (another ISN), a SYN-ACK before the SYN
	 * was answered, a RST: ignored. */
	other = syn_of(&c);
	other.seq += 1000;
	rwnd_departed(t, &other, T0 + 1 * MS);
	rwnd_departed(t, (const struct rwnd_seg[]){ synack_of(&c) }, T0 + 1 * MS);
	other = syn_of(&c);
	other.flags |= RST;
	rwnd_departed(t, &other, T0 + 1 * MS);
	assert_int_equal(cnt(t)->syn_queued, 0);
	rwnd_departed(t, (const struct rwnd_seg[]){ syn_of(&c) }, syn_left);
	assert_int_equal(cnt(t)->syn_queued, 1);
	assert_false(track(t, synack_of(&c), t1, &ref));
	/* The SYN again, now that its SYN-ACK came: nothing to start. */
	rwnd_departed(t, (const struct rwnd_seg[]){ syn_of(&c) }, t1 + 1);
	rwnd_departed(t, (const struct rwnd_seg[]){ synack_of(&c) }, synack_left);
	assert_int_equal(cnt(t)->syn_queued, 2);
	s = seg(&c, a, ACK, c.isn[a] + 1, c.isn[b] + 1, 0, 502);
	rwnd_track(t, &s, t2, &ref);
	/* Once established, a late departure changes nothing. */
	rwnd_departed(t, (const struct rwnd_seg[]){ synack_of(&c) }, t2 + 1 * MS);
	assert_int_equal(cnt(t)->syn_queued, 2);
	assert_int_equal(cnt(t)->handshakes, 1);
	c.leg[b] = ticks(t1) - ticks(syn_left);
	c.leg[a] = ticks(t2) - ticks(synack_left);
	c.end = t2;

	/* A download clamped as in the test above: the window of the legs
	 * timed from the departures, not that of legs timed from the
	 * arrivals (5 and 3 ms longer). */
	struct conn arrived = c;
	arrived.leg[b] = ticks(t1) - ticks(T0);
	arrived.leg[a] = ticks(t2) - ticks(t1);
	s = data(&c, NET, 0, 100000);
	track(t, s, c.end + 1 * MS, &ref);
	s = ackseg(&c, SUB, 20000, 5000);
	assert_true(track(t, s, c.end + 20 * MS, &ref));
	assert_int_equal(rwnd_window(t, &ref, &s, 10000, 0, 0, 0),
			 expected(&c, SUB, 80000, 10000, 0, &p));
	assert_int_not_equal(expected(&c, SUB, 80000, 10000, 0, &p),
			     expected(&arrived, SUB, 80000, 10000, 0, &p));
	free(t);
}

static void
test_an_upload_ack_carries_the_window_of_the_rule_with_the_legs_swapped(void **state)
{
	struct rwnd_params p = params(1024);
	struct rwnd *t = make(&p);
	struct conn c = conn(0x12345, 50001, 443);
	struct rwnd_ref ref;
	struct rwnd_seg s;

	(void)state;
	handshake(t, &c, T0);
	s = data(&c, SUB, 0, 50000);
	track(t, s, c.end + 1 * MS, &ref);
	s = ackseg(&c, NET, 10000, 1000); /* 1000 << 9 = 512000 bytes */
	assert_true(track(t, s, c.end + 45 * MS, &ref));
	assert_int_equal(rwnd_window(t, &ref, &s, 2999, 0, 0, 0), 1000);
	/* beyond 35000: path 35000 + 35000 * 7813 / 39063 = 42000,
	 * + 21000 + 3000 = 66000, 129 units of 512. */
	assert_int_equal(expected(&c, NET, 40000, 5000, 0, &p), 129);
	assert_int_equal(rwnd_window(t, &ref, &s, 5000, 0, 0, 0), 129);
	assert_int_equal(cnt(t)->engaged, 1);
	assert_int_equal(cnt(t)->clamped, 1);
	/* The download direction is not engaged by the upload's clamp. */
	s = data(&c, NET, 0, 8000);
	assert_true(track(t, s, c.end + 46 * MS, &ref));
	s = ackseg(&c, SUB, 4000, 4000);
	assert_true(track(t, s, c.end + 47 * MS, &ref));
	assert_int_equal(rwnd_window(t, &ref, &s, 2999, 0, 0, 0), 4000);
	assert_int_equal(cnt(t)->engaged, 1);
	free(t);
}

static void
test_a_connection_opened_from_the_internet_side_gets_its_legs_the_other_way(void **state)
{
	struct rwnd_params p = params(1024);
	struct rwnd *t = make(&p);
	struct conn c = conn(77, 22, 40000);
	struct rwnd_ref ref;
	struct rwnd_seg s;

	(void)state;
	c.client = NET;
	c.rtt_ns[NET] = 30 * MS + 1;
	c.rtt_ns[SUB] = 12 * MS + 2;
	handshake(t, &c, T0 + 999);
	assert_int_equal(cnt(t)->handshakes, 1);
	assert_int_equal(c.leg[SUB], ticks(T0 + 999 + 12 * MS + 2) - ticks(T0 + 999));
	/* The subscriber (the server here) sends; the internet side acks. */
	s = data(&c, SUB, 0, 60000);
	track(t, s, c.end + 1 * MS, &ref);
	s = ackseg(&c, NET, 1000, 60000);
	assert_true(track(t, s, c.end + 31 * MS, &ref));
	assert_int_equal(rwnd_window(t, &ref, &s, 4000, 0, 0, 0), expected(&c, NET, 59000, 4000, 0, &p));
	assert_true(expected(&c, NET, 59000, 4000, 0, &p) < 60000);
	assert_int_equal(cnt(t)->clamped, 1);
	free(t);
}

static void
test_the_receivers_leg_is_floored_at_min_leg(void **state)
{
	struct rwnd_params p = params(1024);
	struct rwnd *t = make(&p);
	struct conn c = conn(5, 50002, 443);
	struct rwnd_ref ref;
	struct rwnd_seg s;

	(void)state;
	c.rtt_ns[SUB] = 20 * US; /* 19 or 20 ticks, below 100 us (97 ticks) */
	handshake(t, &c, T0);
	assert_true(c.leg[SUB] < 97);
	s = data(&c, NET, 0, 100000);
	track(t, s, c.end + 1 * MS, &ref);
	s = ackseg(&c, SUB, 90000, 60000);
	assert_true(track(t, s, c.end + 2 * MS, &ref));
	/* beyond 7000: path 7000 + 7000 * 39063 / 97, and half as much
	 * again, + 3000, in units of 128. */
	const uint64_t path = 7000 + 7000ull * c.leg[NET] / 97;
	assert_int_equal(expected(&c, SUB, 10000, 3000, 0, &p),
			 in_units(path + path / 2 + 3000, 7));
	assert_int_equal(rwnd_window(t, &ref, &s, 3000, 0, 0, 0), expected(&c, SUB, 10000, 3000, 0, &p));
	free(t);

	/* With no floor (0 ns: one tick), the measured leg is used. */
	p.min_leg_ns = 0;
	t = make(&p);
	c = conn(5, 50002, 443);
	c.rtt_ns[SUB] = 60 * US;
	handshake(t, &c, T0);
	s = data(&c, NET, 0, 100000);
	track(t, s, c.end + 1 * MS, &ref);
	s = ackseg(&c, SUB, 90000, 60000);
	assert_true(track(t, s, c.end + 2 * MS, &ref));
	assert_true(c.leg[SUB] > 1 && c.leg[SUB] < 97);
	const uint64_t path2 = 7000 + 7000ull * c.leg[NET] / c.leg[SUB];
	assert_int_equal(rwnd_window(t, &ref, &s, 3000, 0, 0, 0),
			 in_units(path2 + path2 / 2 + 3000, 7));
	free(t);
}

/* The three windows of one download ACK for the given window-scale offers. */
static uint16_t
window_with_offers(int8_t ws_sub, int8_t ws_net, uint16_t win, unsigned *shift)
{
	struct rwnd_params p = params(64);
	struct rwnd *t = make(&p);
	struct conn c = conn(9, 50003, 443);
	struct rwnd_ref ref;
	struct rwnd_seg s;
	uint16_t w;

	c.ws[SUB] = ws_sub;
	c.ws[NET] = ws_net;
	handshake(t, &c, T0);
	s = data(&c, NET, 0, 6000);
	track(t, s, c.end + 1 * MS, &ref);
	s = ackseg(&c, SUB, 1000, win);
	assert_true(track(t, s, c.end + 2 * MS, &ref));
	w = rwnd_window(t, &ref, &s, 3000, 0, 0, 0);
	*shift = shift_of(&c, SUB);
	assert_int_equal(w, expected(&c, SUB, 5000, 3000, 0, &p));
	free(t);
	return w;
}

static void
test_the_window_scale_applies_only_when_both_syns_offer_it(void **state)
{
	/* beyond 2000: path 2000 + 2000 * 39063 / 7813 = 11999,
	 * + 5999 + 3000 = 20998 bytes. */
	const uint64_t path = 2000 + 2000ull * 39063 / 7813;
	const uint64_t bytes = path + path / 2 + 3000;
	unsigned shift;

	(void)state;
	assert_int_equal(bytes, 20998);
	assert_int_equal(window_with_offers(7, 9, 60000, &shift), 165); /* ceil(20998 / 128) */
	assert_int_equal(shift, 7);
	assert_int_equal(window_with_offers(3, 0, 60000, &shift), 2625); /* ceil(20998 / 8) */
	assert_int_equal(window_with_offers(14, 0, 60000, &shift), 2);   /* ceil(20998 / 16384) */
	/* Only one side offered it: no scaling either way. */
	assert_int_equal(window_with_offers(7, -1, 60000, &shift), 20998);
	assert_int_equal(shift, 0);
	assert_int_equal(window_with_offers(-1, 9, 60000, &shift), 20998);
	assert_int_equal(window_with_offers(-1, -1, 60000, &shift), 20998);
	/* Scale 0 offered by both is a shift of 0. */
	assert_int_equal(window_with_offers(0, 0, 60000, &shift), 20998);
}

static void
test_the_window_is_never_raised(void **state)
{
	struct rwnd_params p = params(64);
	struct rwnd *t = make(&p);
	struct conn c = conn(11, 50004, 443);
	struct rwnd_ref ref;
	struct rwnd_seg s;

	(void)state;
	c.ws[SUB] = -1; /* no scaling: the clamp is in bytes */
	handshake(t, &c, T0);
	s = data(&c, NET, 0, 6000);
	track(t, s, c.end + 1 * MS, &ref);
	/* The rule gives 20998 bytes (see above). */
	const uint16_t rule = expected(&c, SUB, 5000, 3000, 0, &p);
	assert_int_equal(rule, 20998);
	/* The receiver's own window is below: unchanged, not_lowered. */
	s = ackseg(&c, SUB, 1000, 1200);
	assert_true(track(t, s, c.end + 2 * MS, &ref));
	assert_int_equal(rwnd_window(t, &ref, &s, 3000, 0, 0, 0), 1200);
	assert_int_equal(cnt(t)->engaged, 1);
	assert_int_equal(cnt(t)->not_lowered, 1);
	assert_int_equal(cnt(t)->clamped, 0);
	/* Equal to the rule: unchanged. */
	s = ackseg(&c, SUB, 1000, rule);
	assert_true(track(t, s, c.end + 3 * MS, &ref));
	assert_int_equal(rwnd_window(t, &ref, &s, 3000, 0, 0, 0), rule);
	assert_int_equal(cnt(t)->not_lowered, 2);
	assert_int_equal(cnt(t)->clamped, 0);
	/* One byte above: lowered to the rule. */
	s = ackseg(&c, SUB, 1000, rule + 1);
	assert_true(track(t, s, c.end + 4 * MS, &ref));
	assert_int_equal(rwnd_window(t, &ref, &s, 3000, 0, 0, 0), rule);
	assert_int_equal(cnt(t)->clamped, 1);
	/* A zero window stays zero. */
	s = ackseg(&c, SUB, 1000, 0);
	assert_true(track(t, s, c.end + 5 * MS, &ref));
	assert_int_equal(rwnd_window(t, &ref, &s, 3000, 0, 0, 0), 0);
	assert_int_equal(cnt(t)->not_lowered, 3);
	free(t);

	/* With scaling: 10 units of 128 (1280 bytes) are below 20998. */
	t = make(&p);
	c = conn(11, 50004, 443);
	handshake(t, &c, T0);
	s = data(&c, NET, 0, 6000);
	track(t, s, c.end + 1 * MS, &ref);
	s = ackseg(&c, SUB, 1000, 10);
	assert_true(track(t, s, c.end + 2 * MS, &ref));
	assert_int_equal(rwnd_window(t, &ref, &s, 3000, 0, 0, 0), 10);
	assert_int_equal(cnt(t)->not_lowered, 1);
	/* 200 units (25600 bytes) are above: 165, which is ceil(20998 / 128). */
	s = ackseg(&c, SUB, 1000, 200);
	assert_true(track(t, s, c.end + 3 * MS, &ref));
	assert_int_equal(rwnd_window(t, &ref, &s, 3000, 0, 0, 0), 165);
	free(t);
}

static void
test_extra_ns_adds_to_the_data_senders_leg(void **state)
{
	struct rwnd_params p = params(64);
	struct rwnd *t = make(&p);
	struct conn c = conn(13, 50005, 443);
	struct rwnd_ref ref;
	struct rwnd_seg s;
	uint16_t w0, w1, w2;

	(void)state;
	handshake(t, &c, T0);
	s = data(&c, NET, 0, 200000);
	track(t, s, c.end + 1 * MS, &ref);
	s = ackseg(&c, SUB, 100000, 60000);
	assert_true(track(t, s, c.end + 2 * MS, &ref));
	w0 = rwnd_window(t, &ref, &s, 20000, 0, 0, 0);
	w1 = rwnd_window(t, &ref, &s, 20000, 30 * MS, 0, 0);
	w2 = rwnd_window(t, &ref, &s, 20000, 1023, 0, 0); /* less than a tick */
	assert_int_equal(w0, expected(&c, SUB, 100000, 20000, 0, &p));
	assert_int_equal(w1, expected(&c, SUB, 100000, 20000, 30 * MS, &p));
	const uint64_t path = 80000 + 80000ull * (c.leg[NET] + ticks(30 * MS)) / c.leg[SUB];
	assert_int_equal(w1, in_units(path + path / 2 + 3000, 7));
	assert_int_equal(w2, w0);
	assert_true(w1 > w0);
	free(t);

	/* Upload: it adds to the subscriber's leg (the data sender's). */
	t = make(&p);
	c = conn(13, 50005, 443);
	handshake(t, &c, T0);
	s = data(&c, SUB, 0, 200000);
	track(t, s, c.end + 1 * MS, &ref);
	s = ackseg(&c, NET, 100000, 60000);
	assert_true(track(t, s, c.end + 41 * MS, &ref));
	const uint64_t path2 = 80000 + 80000ull * (c.leg[SUB] + ticks(5 * MS)) / c.leg[NET];
	assert_int_equal(rwnd_window(t, &ref, &s, 20000, 5 * MS, 0, 0),
			 in_units(path2 + path2 / 2 + 3000, 9));
	free(t);
}

static void
test_a_flow_is_released_once_all_it_sent_is_acked_and_engaged_again_at_the_headroom(void **state)
{
	struct rwnd_params p = params(64);
	struct rwnd *t = make(&p);
	struct conn c = conn(17, 50006, 443);
	struct rate_model m = { 0, 0, 0 };
	struct rwnd_ref ref;
	struct rwnd_seg s;
	uint64_t td, now;

	(void)state;
	handshake(t, &c, T0);
	td = c.end + 1 * MS;
	s = data(&c, NET, 0, 100000);
	track(t, s, td, &ref);
	s = ackseg(&c, SUB, 20000, 5000);
	assert_true(track(t, s, now = td + 1 * MS, &ref));
	rate_seen(&m, &c, NET, s.ack, now);
	assert_int_equal(rwnd_window(t, &ref, &s, 10000, 0, 0, 0), expected(&c, SUB, 80000, 10000, 0, &p));
	assert_int_equal(cnt(t)->engaged, 1);
	/*
	 * All acknowledged, but the server sent its last data less than
	 * quiet_ns plus four times the two legs ago (250 ms + 4 * 48 ms:
	 * 238 + 183 units of 2^20 ns): a bulk flow between two rounds stays
	 * clamped, to what its rate needs and the headroom.
	 */
	const uint32_t q = quiet_units(&c, &p);
	assert_int_equal(q, 238 + ((4 * (39063 + 7813)) >> 10));
	s = ackseg(&c, SUB, 100000, 5000);
	now = (uint64_t)(units(td) + q) << 20;
	assert_true(track(t, s, now, &ref));
	rate_seen(&m, &c, NET, s.ack, now);
	assert_true(m.rate > 0); /* 80000 bytes over about 440 ms */
	assert_int_equal(rwnd_window(t, &ref, &s, 0, 0, 0, 0), expected_r(&c, SUB, 0, 0, 0, &p, m.rate));
	assert_int_equal(expected_r(&c, SUB, 0, 0, 0, &p, m.rate),
			 in_units(((uint64_t)m.rate * c.leg[NET] >> 10) * 3 / 2 + 3000, 7));
	assert_int_equal(cnt(t)->released, 0);
	/* One unit later: released, the window as sent, counted once. */
	now = (uint64_t)(units(td) + q + 1) << 20;
	assert_true(track(t, s, now, &ref));
	rate_seen(&m, &c, NET, s.ack, now);
	assert_int_equal(rwnd_window(t, &ref, &s, 10000, 0, 0, 0), 5000);
	assert_int_equal(cnt(t)->released, 1);
	s = ackseg(&c, SUB, 100000, 5001);
	assert_true(track(t, s, now += MS, &ref));
	rate_seen(&m, &c, NET, s.ack, now);
	assert_int_equal(rwnd_window(t, &ref, &s, 10000, 0, 0, 0), 5001);
	assert_int_equal(cnt(t)->released, 1);
	const uint64_t clamped = cnt(t)->clamped;
	/* The next burst is free until its queue reaches the headroom. */
	s = data(&c, NET, 100000, 50000);
	track(t, s, td = now += MS, &ref);
	s = ackseg(&c, SUB, 110000, 5000);
	assert_true(track(t, s, now += MS, &ref));
	rate_seen(&m, &c, NET, s.ack, now);
	assert_int_equal(rwnd_window(t, &ref, &s, 2999, 0, 0, 0), 5000);
	assert_int_equal(cnt(t)->engaged, 1);
	assert_int_equal(cnt(t)->clamped, clamped);
	assert_int_equal(rwnd_window(t, &ref, &s, 3000, 0, 0, 0),
			 expected_r(&c, SUB, 40000, 3000, 0, &p, m.rate));
	assert_int_equal(cnt(t)->engaged, 2);
	assert_int_equal(cnt(t)->clamped, clamped + 1);
	/* An ACK beyond all the box saw, after the quiet time, releases. */
	s = ackseg(&c, SUB, 150001, 5000);
	now = (uint64_t)(units(td) + q + 1) << 20;
	assert_true(track(t, s, now, &ref));
	assert_int_equal(rwnd_window(t, &ref, &s, 3000, 0, 0, 0), 5000);
	assert_int_equal(cnt(t)->released, 2);
	/* An unclamped flow with nothing outstanding is never engaged. */
	assert_int_equal(rwnd_window(t, &ref, &s, 1u << 30, 0, 0, 0), 5000);
	assert_int_equal(cnt(t)->engaged, 2);
	free(t);
}

/* One ACK from the subscriber acknowledging `acked` bytes of the
 * download at `now`: its window from the library, the model updated. */
static uint16_t
rate_ack(struct rwnd *t, const struct conn *c, struct rate_model *m, uint32_t acked,
	 uint64_t now, uint32_t backlog)
{
	struct rwnd_seg s = ackseg(c, SUB, acked, 60000);
	struct rwnd_ref ref;

	assert_true(track(t, s, now, &ref));
	rate_seen(m, c, NET, s.ack, now);
	return rwnd_window(t, &ref, &s, backlog, 0, 0, 0);
}

static void
test_the_rate_measured_from_the_acks_sets_the_window_when_it_needs_more(void **state)
{
	struct rwnd_params p = params(64);
	struct rwnd *t = make(&p);
	struct conn c = conn(53, 50020, 443);
	struct rate_model m = { 0, 0, 0 };
	struct rwnd_ref ref;
	uint64_t ta, now;

	(void)state;
	handshake(t, &c, T0);
	track(t, data(&c, NET, 0, 1000000), c.end + 1 * MS, &ref);
	/* The first ACK marks; nothing queued, nothing clamped. */
	ta = c.end + 2 * MS;
	assert_int_equal(rate_ack(t, &c, &m, 10000, ta, 0), 60000);
	assert_int_equal(m.rate, 0);
	/* 50 ms later: less than two round trips (96 ms), no sample; the
	 * window from beyond alone: path 10000 + 10000 * 39063 / 7813 =
	 * 59997, and half as much again, + 3000. */
	assert_int_equal(rate_ack(t, &c, &m, 110000, ta + 50 * MS, 880000),
			 in_units(59997 + 29998 + 3000, 7));
	assert_int_equal(m.rate, 0);
	/* 100 ms after the mark: 200000 bytes over the ticks since it. */
	now = ta + 100 * MS;
	const uint32_t el = ticks(now) - (ticks(ta) | 1);
	const uint32_t r1 = (uint32_t)((200000ull << 10) / el);
	const uint16_t w = rate_ack(t, &c, &m, 210000, now, 780000);
	assert_int_equal(m.rate, r1);
	assert_true((uint64_t)r1 * c.leg[NET] >> 10 > 10000ull * c.leg[NET] / c.leg[SUB]);
	const uint64_t path = 10000 + ((uint64_t)r1 * c.leg[NET] >> 10);
	assert_int_equal(w, in_units(path + path / 2 + 3000, 7));
	assert_int_equal(w, expected_r(&c, SUB, 790000, 780000, 0, &p, m.rate));
	assert_true(w > expected(&c, SUB, 790000, 780000, 0, &p));
	/* When beyond over the receiver's leg is the higher rate, it wins. */
	assert_int_equal(rate_ack(t, &c, &m, 210000, now, 0), expected(&c, SUB, 790000, 0, 0, &p));
	/* The next sample is smoothed: 3/4 of the old, 1/4 of the new. */
	const uint64_t t2 = now + 100 * MS;
	const uint32_t el2 = ticks(t2) - (ticks(now) | 1);
	const uint32_t smp2 = (uint32_t)((50000ull << 10) / el2);
	assert_int_equal(rate_ack(t, &c, &m, 260000, t2, 730000),
			 expected_r(&c, SUB, 740000, 730000, 0, &p, (3 * r1 + smp2) >> 2));
	assert_int_equal(m.rate, (3 * r1 + smp2) >> 2);
	/* A gap of more than 8 windows is a pause: no sample, a new mark. */
	const uint32_t r2 = m.rate;
	const uint64_t t3 = t2 + 1 * SEC;
	assert_int_equal(rate_ack(t, &c, &m, 760000, t3, 230000),
			 expected_r(&c, SUB, 240000, 230000, 0, &p, r2));
	assert_int_equal(m.rate, r2);
	/* An older ACK than the mark: no sample either. */
	assert_int_equal(rate_ack(t, &c, &m, 700000, t3 + 100 * MS, 290000),
			 expected_r(&c, SUB, 300000, 290000, 0, &p, r2));
	assert_int_equal(m.rate, r2);
	/* From that mark, a sample again. */
	const uint32_t el4 = ticks(t3 + 200 * MS) - (ticks(t3 + 100 * MS) | 1);
	assert_int_equal(rate_ack(t, &c, &m, 800000, t3 + 200 * MS, 190000),
			 expected_r(&c, SUB, 200000, 190000, 0, &p,
				    (3 * r2 + (uint32_t)((100000ull << 10) / el4)) >> 2));
	free(t);

	/* Short legs (1 ms each): a window is still at least 9766 ticks. */
	t = make(&p);
	c = conn(53, 50020, 443);
	c.rtt_ns[SUB] = c.rtt_ns[NET] = 1 * MS;
	m.m_ack = m.m_t = m.rate = 0;
	handshake(t, &c, T0);
	assert_true(2 * (c.leg[SUB] + c.leg[NET]) < 9766);
	track(t, data(&c, NET, 0, 1000000), c.end + 100 * US, &ref);
	ta = c.end + 200 * US;
	assert_int_equal(rate_ack(t, &c, &m, 10000, ta, 0), 60000);
	assert_int_equal(rate_ack(t, &c, &m, 60000, ta + 5 * MS, 939000),
			 expected(&c, SUB, 940000, 939000, 0, &p));
	assert_int_equal(m.rate, 0);
	now = ta + 11 * MS;
	assert_int_equal(rate_ack(t, &c, &m, 120000, now, 879000),
			 expected_r(&c, SUB, 880000, 879000, 0, &p,
				    (uint32_t)((110000ull << 10) / (ticks(now) - (ticks(ta) | 1)))));
	assert_true(m.rate > 0);
	free(t);
}

static void
test_a_fin_counts_as_one_byte_that_must_be_acked_before_release(void **state)
{
	struct rwnd_params p = params(64);
	struct rwnd *t = make(&p);
	struct conn c = conn(19, 50007, 443);
	struct rate_model m = { 0, 0, 0 };
	struct rwnd_ref ref;
	struct rwnd_seg s;
	uint64_t td, late;

	(void)state;
	handshake(t, &c, T0);
	td = c.end + 1 * MS;
	s = data(&c, NET, 0, 10000);
	s.flags |= FIN;
	track(t, s, td, &ref);
	s = ackseg(&c, SUB, 5000, 5000);
	assert_true(track(t, s, td + 1 * MS, &ref));
	rate_seen(&m, &c, NET, s.ack, td + 1 * MS);
	assert_int_equal(rwnd_window(t, &ref, &s, 3000, 0, 0, 0), expected(&c, SUB, 5001, 3000, 0, &p));
	/* After the quiet time, all data but not the FIN: inflight 1,
	 * still clamped (to the rate measured over the 5000 bytes). */
	late = (uint64_t)(units(td) + quiet_units(&c, &p) + 1) << 20;
	s = ackseg(&c, SUB, 10000, 5000);
	assert_true(track(t, s, late, &ref));
	rate_seen(&m, &c, NET, s.ack, late);
	assert_true(m.rate > 0);
	assert_int_equal(rwnd_window(t, &ref, &s, 0, 0, 0, 0), expected_r(&c, SUB, 1, 0, 0, &p, m.rate));
	assert_int_equal(cnt(t)->released, 0);
	s = ackseg(&c, SUB, 10001, 5000);
	assert_true(track(t, s, late + 1 * MS, &ref));
	assert_int_equal(rwnd_window(t, &ref, &s, 0, 0, 0, 0), 5000);
	assert_int_equal(cnt(t)->released, 1);
	free(t);
}

/* ---- Karn, missing handshakes, RST --------------------------------------- */

/* After the handshake, a download whose ACK must not be clamped. */
static void
assert_never_clamped(struct rwnd *t, const struct conn *c, uint64_t now)
{
	struct rwnd_ref ref;

	for (uint32_t i = 0; i < 4; i++) {
		assert_false(track(t, data(c, NET, i * 10000, 10000), now + i * MS, &ref));
		assert_false(track(t, ackseg(c, SUB, i * 10000 + 1000, 5000), now + i * MS + 500 * US, &ref));
		assert_false(track(t, data(c, SUB, i * 100, 100), now + i * MS + 600 * US, &ref));
		assert_false(track(t, ackseg(c, NET, i * 100 + 50, 5000), now + i * MS + 700 * US, &ref));
	}
	assert_int_equal(cnt(t)->engaged, 0);
}

static void
test_karn_a_syn_sent_twice_makes_the_handshake_ambiguous_and_never_clamped(void **state)
{
	struct rwnd_params p = params(64);
	struct rwnd *t = make(&p);
	struct conn c = conn(23, 50008, 443);
	struct rwnd_ref ref;

	(void)state;
	assert_false(track(t, syn_of(&c), T0, &ref));
	assert_false(track(t, syn_of(&c), T0 + 1 * SEC, &ref));
	/* Which SYN left when is as unknown: a departure is not taken. */
	rwnd_departed(t, (const struct rwnd_seg[]){ syn_of(&c) }, T0 + 1 * SEC + 1 * MS);
	assert_int_equal(cnt(t)->syn_queued, 0);
	assert_false(track(t, synack_of(&c), T0 + 1 * SEC + 40 * MS, &ref));
	assert_false(track(t, ackseg(&c, SUB, 0, 502), T0 + 1 * SEC + 48 * MS, &ref));
	assert_int_equal(cnt(t)->syns, 2);
	assert_int_equal(cnt(t)->ambiguous, 1);
	assert_int_equal(cnt(t)->handshakes, 0);
	assert_int_equal(rwnd_entries(t, T0 + 1 * SEC + 48 * MS), 1);
	assert_never_clamped(t, &c, T0 + 2 * SEC);
	free(t);

	/* A SYN with another sequence is a new attempt, not a resend: the
	 * leg runs from it. */
	t = make(&p);
	c = conn(23, 50008, 443);
	assert_false(track(t, syn_of(&c), T0, &ref));
	c.isn[SUB] += 100000;
	handshake(t, &c, T0 + 3 * SEC);
	assert_int_equal(cnt(t)->syns, 2);
	assert_int_equal(cnt(t)->ambiguous, 0);
	assert_int_equal(cnt(t)->handshakes, 1);
	struct rwnd_seg s = data(&c, NET, 0, 20000);
	track(t, s, c.end + 1 * MS, &ref);
	s = ackseg(&c, SUB, 1000, 60000);
	assert_true(track(t, s, c.end + 2 * MS, &ref));
	assert_int_equal(rwnd_window(t, &ref, &s, 5000, 0, 0, 0), expected(&c, SUB, 19000, 5000, 0, &p));
	free(t);
}

static void
test_karn_a_syn_ack_sent_twice_makes_the_handshake_ambiguous_and_never_clamped(void **state)
{
	struct rwnd_params p = params(64);
	struct rwnd *t = make(&p);
	struct conn c = conn(29, 50009, 443);
	struct rwnd_ref ref;

	(void)state;
	assert_false(track(t, syn_of(&c), T0, &ref));
	assert_false(track(t, synack_of(&c), T0 + 40 * MS, &ref));
	assert_false(track(t, synack_of(&c), T0 + 1040 * MS, &ref));
	assert_false(track(t, ackseg(&c, SUB, 0, 502), T0 + 1048 * MS, &ref));
	assert_int_equal(cnt(t)->ambiguous, 1);
	assert_int_equal(cnt(t)->handshakes, 0);
	assert_never_clamped(t, &c, T0 + 2 * SEC);
	free(t);
}

static void
test_without_the_handshake_no_ack_is_tracked(void **state)
{
	struct rwnd_params p = params(64);
	struct rwnd *t = make(&p);
	struct conn c = conn(31, 50010, 443);
	struct rwnd_ref ref;

	(void)state;
	/* Mid-stream: never seen a SYN. */
	assert_never_clamped(t, &c, T0);
	assert_int_equal(cnt(t)->segments, 16);
	/* A SYN-ACK alone makes no entry. */
	assert_false(track(t, synack_of(&c), T0 + 1 * SEC, &ref));
	assert_int_equal(rwnd_entries(t, T0 + 1 * SEC), 0);
	assert_never_clamped(t, &c, T0 + 2 * SEC);
	/* Only the SYN seen: nothing yet. */
	assert_false(track(t, syn_of(&c), T0 + 3 * SEC, &ref));
	assert_int_equal(rwnd_entries(t, T0 + 3 * SEC), 1);
	assert_false(track(t, ackseg(&c, SUB, 0, 502), T0 + 3 * SEC + 1 * MS, &ref));
	assert_false(track(t, ackseg(&c, NET, 0, 502), T0 + 3 * SEC + 2 * MS, &ref));
	/* After the SYN-ACK, the server's ACK does not finish the handshake,
	 * nor a client segment without ACK. */
	assert_false(track(t, synack_of(&c), T0 + 3 * SEC + 40 * MS, &ref));
	assert_false(track(t, ackseg(&c, NET, 0, 502), T0 + 3 * SEC + 41 * MS, &ref));
	assert_false(track(t, seg(&c, SUB, PSH, c.isn[SUB] + 1, 0, 10, 502),
			   T0 + 3 * SEC + 42 * MS, &ref));
	assert_int_equal(cnt(t)->handshakes, 0);
	/* The client's ACK does, with its leg from the SYN-ACK. */
	struct rwnd_seg s = ackseg(&c, SUB, 0, 502);
	track(t, s, T0 + 3 * SEC + 48 * MS, &ref);
	assert_int_equal(cnt(t)->handshakes, 1);
	c.leg[NET] = ticks(T0 + 3 * SEC + 40 * MS) - ticks(T0 + 3 * SEC);
	c.leg[SUB] = ticks(T0 + 3 * SEC + 48 * MS) - ticks(T0 + 3 * SEC + 40 * MS);
	track(t, data(&c, NET, 0, 30000), T0 + 4 * SEC, &ref);
	s = ackseg(&c, SUB, 1000, 60000);
	assert_true(track(t, s, T0 + 4 * SEC + 1 * MS, &ref));
	assert_int_equal(rwnd_window(t, &ref, &s, 9000, 0, 0, 0), expected(&c, SUB, 29000, 9000, 0, &p));
	/* Another connection in the same set (other ports) is not it. */
	struct conn d = conn(31, 50011, 443);
	assert_false(track(t, ackseg(&d, SUB, 1000, 60000), T0 + 4 * SEC + 2 * MS, &ref));
	free(t);
}

static void
test_a_rst_frees_the_entry(void **state)
{
	struct rwnd_params p = params(64);
	struct rwnd *t = make(&p);
	struct conn c = conn(37, 50012, 443);
	struct rwnd_ref ref;
	struct rwnd_seg s;

	(void)state;
	assert_false(track(t, seg(&c, NET, RST, 1, 0, 0, 0), T0, &ref)); /* unknown */
	assert_int_equal(cnt(t)->resets, 0);
	handshake(t, &c, T0);
	track(t, data(&c, NET, 0, 30000), c.end + 1 * MS, &ref);
	s = ackseg(&c, SUB, 1000, 60000);
	assert_true(track(t, s, c.end + 2 * MS, &ref));
	assert_int_equal(rwnd_entries(t, c.end + 2 * MS), 1);
	assert_false(track(t, seg(&c, NET, RST | ACK, c.isn[NET] + 30001, c.isn[SUB] + 1, 0, 0),
			   c.end + 3 * MS, &ref));
	assert_int_equal(cnt(t)->resets, 1);
	assert_int_equal(rwnd_entries(t, c.end + 3 * MS), 0);
	assert_false(track(t, s, c.end + 4 * MS, &ref));
	assert_false(track(t, data(&c, NET, 30000, 1000), c.end + 5 * MS, &ref));
	/* A second RST finds nothing. */
	assert_false(track(t, seg(&c, SUB, RST, c.isn[SUB] + 1, 0, 0, 0), c.end + 6 * MS, &ref));
	assert_int_equal(cnt(t)->resets, 1);
	/* A RST during the handshake frees it too. */
	assert_false(track(t, syn_of(&c), c.end + 1 * SEC, &ref));
	assert_false(track(t, seg(&c, NET, RST | ACK, 0, c.isn[SUB] + 1, 0, 0), c.end + 1 * SEC + 40 * MS, &ref));
	assert_int_equal(cnt(t)->resets, 2);
	assert_int_equal(rwnd_entries(t, c.end + 1 * SEC + 40 * MS), 0);
	free(t);
}

static void
test_a_syn_whose_options_do_not_parse_is_counted_and_not_tracked(void **state)
{
	struct rwnd_params p = params(64);
	struct rwnd *t = make(&p);
	struct conn c = conn(41, 50013, 443);
	struct rwnd_ref ref;
	struct rwnd_seg s;

	(void)state;
	s = syn_of(&c);
	s.bad = 1;
	s.wscale = -1;
	assert_false(track(t, s, T0, &ref));
	assert_int_equal(cnt(t)->bad_syn, 1);
	assert_int_equal(cnt(t)->syns, 0);
	assert_int_equal(rwnd_entries(t, T0), 0);
	/* A good SYN, then a bad one of the same connection: freed. */
	assert_false(track(t, syn_of(&c), T0 + 1 * SEC, &ref));
	assert_int_equal(rwnd_entries(t, T0 + 1 * SEC), 1);
	assert_false(track(t, s, T0 + 2 * SEC, &ref));
	assert_int_equal(cnt(t)->bad_syn, 2);
	assert_int_equal(rwnd_entries(t, T0 + 2 * SEC), 0);
	/* A bad SYN-ACK: counted, the handshake never completes. */
	assert_false(track(t, syn_of(&c), T0 + 3 * SEC, &ref));
	s = synack_of(&c);
	s.bad = 1;
	s.wscale = -1;
	assert_false(track(t, s, T0 + 3 * SEC + 40 * MS, &ref));
	assert_int_equal(cnt(t)->bad_syn, 3);
	assert_false(track(t, ackseg(&c, SUB, 0, 502), T0 + 3 * SEC + 48 * MS, &ref));
	assert_int_equal(cnt(t)->handshakes, 0);
	assert_never_clamped(t, &c, T0 + 4 * SEC);
	free(t);
}

/* ---- sequence wrap ------------------------------------------------------- */

static void
test_sequence_numbers_wrap(void **state)
{
	struct rwnd_params p = params(64);
	struct rwnd *t = make(&p);
	struct conn c = conn(43, 50014, 443);
	struct rwnd_ref ref;
	struct rwnd_seg s;

	(void)state;
	c.isn[NET] = 0xffffff00; /* data from 0xffffff01 */
	c.isn[SUB] = 0xfffffffe; /* the SYN's +1 is 0xffffffff */
	handshake(t, &c, T0);
	assert_int_equal(cnt(t)->handshakes, 1);
	s = data(&c, NET, 0, 100000); /* ends at 0x000185a1 */
	assert_int_equal(s.seq + s.payload, 0x000185a1);
	track(t, s, c.end + 1 * MS, &ref);
	/* An ACK before the wrap: 0xffffff01 + 200 */
	s = ackseg(&c, SUB, 200, 60000);
	assert_true(s.ack > 0xffff0000u);
	assert_true(track(t, s, c.end + 2 * MS, &ref));
	assert_int_equal(rwnd_window(t, &ref, &s, 3000, 0, 0, 0), expected(&c, SUB, 99800, 3000, 0, &p));
	/* An ACK after it. */
	s = ackseg(&c, SUB, 20000, 60000);
	assert_true(s.ack < 0x10000u);
	assert_true(track(t, s, c.end + 3 * MS, &ref));
	assert_int_equal(rwnd_window(t, &ref, &s, 3000, 0, 0, 0), expected(&c, SUB, 80000, 3000, 0, &p));
	/* A resend from before the wrap does not lower the highest sequence. */
	track(t, data(&c, NET, 0, 1448), c.end + 4 * MS, &ref);
	s = ackseg(&c, SUB, 50000, 60000);
	assert_true(track(t, s, c.end + 5 * MS, &ref));
	assert_int_equal(rwnd_window(t, &ref, &s, 3000, 0, 0, 0), expected(&c, SUB, 50000, 3000, 0, &p));
	/* Acked to the end: nothing beyond, the headroom alone (not yet
	 * quiet long enough for release; no rate yet). */
	s = ackseg(&c, SUB, 100000, 60000);
	assert_int_equal(s.ack, 0x000185a1);
	assert_true(track(t, s, c.end + 6 * MS, &ref));
	assert_int_equal(rwnd_window(t, &ref, &s, 3000, 0, 0, 0), (3000 + 127) / 128);
	assert_int_equal(cnt(t)->released, 0);
	/* The upload side wraps from its first byte. */
	track(t, data(&c, SUB, 0, 40000), c.end + 7 * MS, &ref);
	s = ackseg(&c, NET, 4000, 60000);
	assert_true(track(t, s, c.end + 8 * MS, &ref));
	assert_int_equal(rwnd_window(t, &ref, &s, 3000, 0, 0, 0), expected(&c, NET, 36000, 3000, 0, &p));
	free(t);
}

/* ---- the table ----------------------------------------------------------- */

static void
test_a_full_set_gives_the_least_recently_seen_connection_to_a_new_one(void **state)
{
	struct rwnd_params p = params(4); /* one set of 4 ways */
	struct rwnd *t = make(&p);
	struct conn c[5];
	struct rwnd_ref ref;
	uint64_t now = T0;

	(void)state;
	for (int i = 0; i < 5; i++)
		c[i] = conn(0x1000u * (uint32_t)i + 3, (uint16_t)(51000 + i), 443);
	for (int i = 0; i < 4; i++) {
		handshake(t, &c[i], now);
		now = c[i].end + 1 * MS;
	}
	assert_int_equal(rwnd_entries(t, now), 4);
	/* c[0] speaks again: c[1] is now the least recently seen. */
	assert_true(track(t, ackseg(&c[0], SUB, 0, 100), now, &ref));
	handshake(t, &c[4], now + 1 * MS);
	assert_int_equal(cnt(t)->evicted, 1);
	assert_int_equal(cnt(t)->expired, 0);
	assert_int_equal(cnt(t)->handshakes, 5);
	now = c[4].end + 1 * MS;
	assert_int_equal(rwnd_entries(t, now), 4);
	assert_false(track(t, ackseg(&c[1], SUB, 0, 100), now, &ref));
	assert_true(track(t, ackseg(&c[0], SUB, 0, 100), now, &ref));
	assert_true(track(t, ackseg(&c[2], SUB, 0, 100), now, &ref));
	assert_true(track(t, ackseg(&c[3], SUB, 0, 100), now, &ref));
	assert_true(track(t, ackseg(&c[4], SUB, 0, 100), now, &ref));
	free(t);

	/* With 8 flows (two sets), hashes of the other set do not compete. */
	p = params(8);
	t = make(&p);
	for (int i = 0; i < 4; i++) {
		c[i] = conn(2u * (uint32_t)i, (uint16_t)(51000 + i), 443); /* even hashes... */
		handshake(t, &c[i], T0 + (uint64_t)i * SEC);
	}
	struct conn odd = conn(0x4001, 52000, 443); /* ...and an odd one */
	handshake(t, &odd, T0 + 5 * SEC);
	assert_int_equal(cnt(t)->evicted + cnt(t)->expired, 0);
	assert_int_equal(rwnd_entries(t, T0 + 6 * SEC), 5);
	free(t);
}

static void
test_a_full_set_of_idle_connections_counts_expired(void **state)
{
	struct rwnd_params p = params(4);
	struct rwnd *t;
	struct conn c[5];
	struct rwnd_ref ref;

	(void)state;
	p.idle_ns = 1 * SEC;
	t = make(&p);
	for (int i = 0; i < 5; i++)
		c[i] = conn(7, (uint16_t)(51000 + i), 443); /* one hash: ports tell them apart */
	for (int i = 0; i < 4; i++)
		handshake(t, &c[i], T0 + (uint64_t)i * 100 * MS);
	assert_int_equal(rwnd_entries(t, T0 + 500 * MS), 4);
	/* c[1] sends at 900 ms; at 2.5 s all four are idle. */
	assert_true(track(t, ackseg(&c[1], SUB, 0, 100), T0 + 900 * MS, &ref));
	assert_int_equal(rwnd_entries(t, T0 + 2500 * MS), 0);
	handshake(t, &c[4], T0 + 2500 * MS);
	assert_int_equal(cnt(t)->expired, 1);
	assert_int_equal(cnt(t)->evicted, 0);
	assert_int_equal(rwnd_entries(t, c[4].end), 1);
	/* The oldest (c[0]) went; the other idle ones are still found. */
	assert_false(track(t, ackseg(&c[0], SUB, 0, 100), c[4].end, &ref));
	assert_true(track(t, ackseg(&c[1], SUB, 0, 100), c[4].end, &ref));
	assert_true(track(t, ackseg(&c[2], SUB, 0, 100), c[4].end, &ref));
	assert_true(track(t, ackseg(&c[3], SUB, 0, 100), c[4].end, &ref));
	assert_int_equal(rwnd_entries(t, c[4].end), 4);
	free(t);
}

static void
test_rwnd_entries_counts_live_entries(void **state)
{
	struct rwnd_params p = params(64);
	struct rwnd *t;
	struct rwnd_ref ref;

	(void)state;
	p.idle_ns = 2 * SEC; /* 1907 units of 2^20 ns */
	t = make(&p);
	assert_int_equal(rwnd_entries(t, T0), 0);
	struct conn a = conn(1, 50100, 443), b = conn(2, 50101, 443), c = conn(65, 50102, 443);
	assert_false(track(t, syn_of(&a), T0, &ref));     /* a SYN alone is an entry */
	assert_int_equal(rwnd_entries(t, T0), 1);
	handshake(t, &b, T0 + 1 * MS);
	handshake(t, &c, T0 + 2 * MS);
	assert_int_equal(rwnd_entries(t, c.end), 3);
	/* a idles out first (SYN at T0): live for 1906 units after, not 1907. */
	assert_int_equal(units(p.idle_ns), 1907);
	assert_int_equal(rwnd_entries(t, (uint64_t)(units(T0) + 1906) << 20), 3);
	assert_int_equal(rwnd_entries(t, ((uint64_t)(units(T0) + 1907) << 20) - 1), 3);
	assert_int_equal(rwnd_entries(t, (uint64_t)(units(T0) + 1907) << 20), 2);
	/* b speaks again; c idles out. */
	assert_true(track(t, ackseg(&b, SUB, 0, 100), T0 + 3 * SEC, &ref));
	assert_int_equal(rwnd_entries(t, T0 + 3 * SEC), 1);
	assert_false(track(t, seg(&b, SUB, RST, b.isn[SUB] + 1, 0, 0, 0), T0 + 3 * SEC + 1, &ref));
	assert_int_equal(rwnd_entries(t, T0 + 3 * SEC + 1), 0);
	free(t);
}

/* ---- rwnd_write and the checksum ----------------------------------------- */

#define PKT_LEN (20 + 32 + 13) /* IPv4, TCP with NOP NOP TS, odd payload */

/* The TCP checksum of an IPv4 packet from scratch (the field read as 0). */
static uint16_t
tcp_csum(const uint8_t *ip, size_t len)
{
	const uint8_t *tcp = ip + 20;
	const size_t tl = len - 20;
	uint32_t sum = 0;

	for (int i = 12; i < 20; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	sum += 6;
	sum += (uint32_t)tl;
	for (size_t i = 0; i < tl; i += 2) {
		uint32_t w = (uint32_t)tcp[i] << 8 | (i + 1 < tl ? tcp[i + 1] : 0);

		if (i != 16)
			sum += w;
	}
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint16_t
field16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void
packet(uint8_t *ip, uint16_t win, uint8_t payload0)
{
	static const uint8_t hdr[] = {
		0x45, 0, 0, PKT_LEN, 0x12, 0x34, 0x40, 0, 64, 6, 0, 0,
		10, 1, 2, 3, 192, 0, 2, 77,
		/* TCP */
		0xc3, 0x50, 0x01, 0xbb, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67,
		0x80, ACK, 0, 0, 0, 0, 0, 0,
		1, 1, 8, 10, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
	};
	memcpy(ip, hdr, sizeof(hdr));
	for (size_t i = sizeof(hdr); i < PKT_LEN; i++)
		ip[i] = (uint8_t)(payload0 + 31 * i);
	ip[20 + 14] = (uint8_t)(win >> 8);
	ip[20 + 15] = (uint8_t)win;
	const uint16_t c = tcp_csum(ip, PKT_LEN);
	ip[20 + 16] = (uint8_t)(c >> 8);
	ip[20 + 17] = (uint8_t)c;
}

static void
test_rwnd_write_writes_the_field_and_keeps_the_checksum_valid(void **state)
{
	uint8_t ip[PKT_LEN], before[PKT_LEN];
	uint8_t *tcp = ip + 20;

	(void)state;
	packet(ip, 0xfaf0, 0);
	memcpy(before, ip, sizeof(ip));
	rwnd_write(tcp, 0x0123, false);
	assert_int_equal(field16(tcp + 14), 0x0123);
	assert_int_equal(field16(tcp + 16), tcp_csum(ip, PKT_LEN));
	assert_int_not_equal(field16(tcp + 16), field16(before + 20 + 16));
	/* Nothing else moved. */
	for (size_t i = 0; i < PKT_LEN; i++)
		if (i != 34 && i != 35 && i != 36 && i != 37)
			assert_int_equal(ip[i], before[i]);
	/* The same window again: nothing changes. */
	memcpy(before, ip, sizeof(ip));
	rwnd_write(tcp, 0x0123, false);
	assert_memory_equal(ip, before, sizeof(ip));
	/* Back to the first window: the first checksum. */
	rwnd_write(tcp, 0xfaf0, false);
	packet(before, 0xfaf0, 0);
	assert_memory_equal(ip, before, sizeof(ip));

	/* Every window in turn, each write from the one before, for a few
	 * payloads: the field always equals a checksum from scratch, so
	 * whenever the sum crosses 0xffff/0x0000 too. */
	for (unsigned pl = 0; pl < 3; pl++) {
		unsigned zeros = 0;

		packet(ip, 0, (uint8_t)(pl * 77));
		for (uint32_t i = 1; i <= 0x10000; i++) {
			const uint16_t w = (uint16_t)(i * 0x9e37u + pl); /* odd step: all 2^16 */

			rwnd_write(tcp, w, false);
			if (field16(tcp + 16) == 0)
				zeros++;
			assert_int_equal(field16(tcp + 14), w);
			assert_int_equal(field16(tcp + 16), tcp_csum(ip, PKT_LEN));
			assert_int_not_equal(field16(tcp + 16), 0xffff);
		}
		/* One window gives a checksum of 0x0000: the walk passed it. */
		assert_int_equal(zeros, 1);
	}
}

static void
test_rwnd_write_crosses_a_checksum_of_zero(void **state)
{
	uint8_t ip[PKT_LEN];
	uint8_t *tcp = ip + 20;
	uint32_t w0 = 0x10000;

	(void)state;
	/* Find the window whose checksum is 0x0000 (the sum is 0xffff). */
	for (uint32_t w = 0; w <= 0xffff; w++) {
		packet(ip, (uint16_t)w, 5);
		if (field16(tcp + 16) == 0) {
			w0 = w;
			break;
		}
	}
	assert_true(w0 <= 0xffff);
	/* From one below and one above, onto it: 0x0000, not 0xffff. */
	packet(ip, (uint16_t)(w0 - 1), 5);
	assert_int_equal(field16(tcp + 16), 1);
	rwnd_write(tcp, (uint16_t)w0, false);
	assert_int_equal(field16(tcp + 16), 0x0000);
	packet(ip, (uint16_t)(w0 + 1), 5);
	assert_int_equal(field16(tcp + 16), 0xfffe);
	rwnd_write(tcp, (uint16_t)w0, false);
	assert_int_equal(field16(tcp + 16), 0x0000);
	/* And off it, both ways. */
	rwnd_write(tcp, (uint16_t)(w0 + 1), false);
	assert_int_equal(field16(tcp + 16), 0xfffe);
	assert_int_equal(field16(tcp + 16), tcp_csum(ip, PKT_LEN));
	rwnd_write(tcp, (uint16_t)w0, false);
	rwnd_write(tcp, (uint16_t)(w0 - 1), false);
	assert_int_equal(field16(tcp + 16), 0x0001);
	assert_int_equal(field16(tcp + 16), tcp_csum(ip, PKT_LEN));
	/* Across the window's own wrap (0xffff to 0x0000 and back). */
	packet(ip, 0xffff, 9);
	rwnd_write(tcp, 0x0000, false);
	assert_int_equal(field16(tcp + 16), tcp_csum(ip, PKT_LEN));
	rwnd_write(tcp, 0xffff, false);
	assert_int_equal(field16(tcp + 16), tcp_csum(ip, PKT_LEN));
}

static void
test_rwnd_write_with_csum_partial_leaves_the_checksum_field_alone(void **state)
{
	uint8_t ip[PKT_LEN], before[PKT_LEN];
	uint8_t *tcp = ip + 20;

	(void)state;
	packet(ip, 5000, 1);
	tcp[16] = 0xab; /* the pseudo-header sum a NIC would finish */
	tcp[17] = 0xcd;
	memcpy(before, ip, sizeof(ip));
	rwnd_write(tcp, 1234, true);
	assert_int_equal(field16(tcp + 14), 1234);
	assert_int_equal(tcp[16], 0xab);
	assert_int_equal(tcp[17], 0xcd);
	before[34] = 1234 >> 8;
	before[35] = 1234 & 0xff;
	assert_memory_equal(ip, before, sizeof(ip));
}

/* ---- defects found by these tests, and fixed: 16-bit ages that wrapped,
 * a rounded-up field counted as clamped, an unbounded extra_ns, a SYN
 * resent after the SYN-ACK that went unnoticed. ---- */
static void
test_fixed_an_entry_idle_for_2_to_the_36_ns_is_not_live_again(void **state)
{
	struct rwnd_params p = params(64);
	struct rwnd *t = make(&p);
	struct conn c = conn(1, 50200, 443);

	(void)state;
	handshake(t, &c, T0);
	assert_int_equal(rwnd_entries(t, c.end + 31 * SEC), 0);
	/* 2^16 units of 2^20 ns (68.7 s) later its age reads 1 s again. */
	assert_int_equal(rwnd_entries(t, c.end + (1ull << 36) + 1 * SEC), 0);
	free(t);
}

static void
test_fixed_a_new_connection_takes_a_long_dead_entry_not_a_live_one(void **state)
{
	struct rwnd_params p = params(4);
	struct rwnd *t = make(&p);
	struct conn c[5];
	struct rwnd_ref ref;

	(void)state;
	for (int i = 0; i < 5; i++)
		c[i] = conn(7, (uint16_t)(53000 + i), 443);
	/* Three connections end at once (FIN, no RST: the entries stay). */
	for (int i = 0; i < 3; i++)
		handshake(t, &c[i], T0 + (uint64_t)i * MS);
	/* One lives on: last seen at 68 s. */
	handshake(t, &c[3], T0 + 60 * SEC);
	assert_true(track(t, ackseg(&c[3], SUB, 0, 100), T0 + 68 * SEC, &ref));
	/* At 70 s a new one: the dead ones are 70 s idle (read as 1.3 s),
	 * the live one 2 s. */
	handshake(t, &c[4], T0 + 70 * SEC);
	assert_int_equal(cnt(t)->expired, 1);
	assert_int_equal(cnt(t)->evicted, 0);
	assert_true(track(t, ackseg(&c[3], SUB, 0, 100), c[4].end, &ref));
	free(t);
}

static void
test_fixed_a_clamped_flow_quiet_for_2_to_the_16_units_is_released(void **state)
{
	struct rwnd_params p = params(64);
	struct rwnd *t = make(&p);
	struct conn c = conn(17, 50006, 443);
	struct rwnd_ref ref;
	struct rwnd_seg s;
	uint64_t td;

	(void)state;
	handshake(t, &c, T0);
	td = c.end + 1 * MS;
	track(t, data(&c, NET, 0, 100000), td, &ref);
	s = ackseg(&c, SUB, 20000, 5000);
	assert_true(track(t, s, td + 1 * MS, &ref));
	rwnd_window(t, &ref, &s, 10000, 0, 0, 0);
	assert_int_equal(cnt(t)->engaged, 1);
	/* Idle; the client's next request acks everything 68.7 s + 10
	 * units after the server's last data. */
	s = ackseg(&c, SUB, 100000, 5000);
	assert_true(track(t, s, (uint64_t)(units(td) + 65536 + 10) << 20, &ref));
	assert_int_equal(rwnd_window(t, &ref, &s, 0, 0, 0, 0), 5000);
	assert_int_equal(cnt(t)->released, 1);
	free(t);
}

static void
test_fixed_an_ack_whose_window_is_not_lowered_is_not_counted_clamped(void **state)
{
	struct rwnd_params p = params(64);
	struct rwnd *t = make(&p);
	struct conn c = conn(11, 50004, 443);
	struct rwnd_ref ref;
	struct rwnd_seg s;

	(void)state;
	handshake(t, &c, T0);
	track(t, data(&c, NET, 0, 6000), c.end + 1 * MS, &ref);
	/* The rule: 20998 bytes, 118 units of 128; the ACK offers 118. */
	s = ackseg(&c, SUB, 1000, 118);
	assert_true(track(t, s, c.end + 2 * MS, &ref));
	assert_int_equal(rwnd_window(t, &ref, &s, 3000, 0, 0, 0), 118);
	assert_int_equal(cnt(t)->clamped, 0);
	assert_int_equal(cnt(t)->not_lowered, 1);
	free(t);
}

static void
test_fixed_a_larger_extra_ns_never_gives_a_smaller_window(void **state)
{
	struct rwnd_params p = params(64);
	struct rwnd *t = make(&p);
	struct conn c = conn(13, 50005, 443);
	struct rwnd_ref ref;
	struct rwnd_seg s;

	(void)state;
	c.ws[SUB] = 14;
	handshake(t, &c, T0);
	track(t, data(&c, NET, 0, (1u << 20) + 3000), c.end + 1 * MS, &ref);
	s = ackseg(&c, SUB, 0, 65535);
	assert_true(track(t, s, c.end + 2 * MS, &ref));
	/* beyond 2^20; leg_d 2^44 ticks: beyond * leg_d is 2^64. */
	const uint64_t extra = ((1ull << 44) - c.leg[NET]) << 10;
	const uint16_t w0 = rwnd_window(t, &ref, &s, 3000, 0, 0, 0);
	assert_true(rwnd_window(t, &ref, &s, 3000, extra, 0, 0) >= w0);
	free(t);
}

static void
test_fixed_karn_a_syn_resent_after_the_syn_ack_passed_makes_the_handshake_ambiguous(void **state)
{
	struct rwnd_params p = params(64);
	struct rwnd *t = make(&p);
	struct conn c = conn(23, 50008, 443);
	struct rwnd_ref ref;

	(void)state;
	/* The SYN-ACK is lost between the box and the client, which sends
	 * its SYN again; the server's second SYN-ACK may answer either. */
	assert_false(track(t, syn_of(&c), T0, &ref));
	assert_false(track(t, synack_of(&c), T0 + 40 * MS, &ref));
	assert_false(track(t, syn_of(&c), T0 + 1 * SEC, &ref));
	assert_false(track(t, synack_of(&c), T0 + 1 * SEC + 1 * MS, &ref));
	assert_false(track(t, ackseg(&c, SUB, 0, 502), T0 + 1 * SEC + 9 * MS, &ref));
	assert_int_equal(cnt(t)->ambiguous, 1);
	assert_int_equal(cnt(t)->handshakes, 0);
	free(t);
}

/*
 * hold_ns (how long the box lately held the receiver's ACKs back) adds
 * the data sender's rate for that long, without the half again: its
 * measured rate once there is one, beyond / leg_r before. cap_Bps (the
 * rate of the data's own pipe) bounds the rate of both terms.
 */
static void
test_the_hold_adds_the_flows_rate_for_its_time_and_the_pipes_rate_caps_both(void **state)
{
	struct rwnd_params p = params(64);
	struct rwnd *t = make(&p);
	struct conn c = conn(13, 50005, 443);
	struct rate_model m = { 0, 0, 0 };
	const uint64_t h = ticks(10 * MS);
	const uint64_t cap = 1048; /* 1 MB/s in bytes per 1024 ticks (2^20 ns) */
	struct rwnd_ref ref;
	struct rwnd_seg s;

	(void)state;
	handshake(t, &c, T0);
	track(t, data(&c, NET, 0, 200000), c.end + 1 * MS, &ref);
	s = ackseg(&c, SUB, 100000, 60000);
	assert_true(track(t, s, c.end + 2 * MS, &ref));
	/* No rate yet: beyond / leg_r, 80000 bytes over 8 ms (10 MB/s). */
	const uint64_t path = 80000 + 80000ull * c.leg[NET] / c.leg[SUB];
	const uint16_t w = rwnd_window(t, &ref, &s, 20000, 0, 10 * MS, 0);
	assert_int_equal(w, in_units(path + path / 2 + 80000ull * h / c.leg[SUB] + 3000, 7));
	assert_true(w > expected(&c, SUB, 100000, 20000, 0, &p));
	/* A pipe of 1 MB/s caps the rate of both terms. */
	const uint64_t capped = 80000 + (cap * c.leg[NET] >> 10);
	assert_int_equal(rwnd_window(t, &ref, &s, 20000, 0, 10 * MS, 1000000),
			 in_units(capped + capped / 2 + (cap * h >> 10) + 3000, 7));
	/* The extra leg too: it is part of the leg. */
	const uint64_t capped_x = 80000 + (cap * (c.leg[NET] + ticks(30 * MS)) >> 10);
	assert_int_equal(rwnd_window(t, &ref, &s, 20000, 30 * MS, 0, 1000000),
			 in_units(capped_x + capped_x / 2 + 3000, 7));
	/* A pipe faster than the flow changes nothing; a hold of less than
	 * a tick is none. */
	assert_int_equal(rwnd_window(t, &ref, &s, 20000, 0, 10 * MS, 100000000), w);
	assert_int_equal(rwnd_window(t, &ref, &s, 20000, 0, 1023, 0),
			 expected(&c, SUB, 100000, 20000, 0, &p));
	free(t);

	/* With a rate measured the hold counts at it, even where beyond /
	 * leg_r is higher (bursts of released ACKs make that ratio jump). */
	t = make(&p);
	c = conn(53, 50020, 443);
	handshake(t, &c, T0);
	track(t, data(&c, NET, 0, 1000000), c.end + 1 * MS, &ref);
	const uint64_t ta = c.end + 2 * MS;
	rate_ack(t, &c, &m, 10000, ta, 0);
	rate_ack(t, &c, &m, 210000, ta + 100 * MS, 780000);
	assert_int_not_equal(m.rate, 0);
	s = ackseg(&c, SUB, 210000, 60000);
	assert_true(track(t, s, ta + 100 * MS, &ref));
	const uint64_t own = 90000ull * c.leg[NET] / c.leg[SUB];
	const uint64_t by_rate = (uint64_t)m.rate * c.leg[NET] >> 10;
	const uint64_t path2 = 90000 + (own > by_rate ? own : by_rate);
	assert_true(90000ull * h / c.leg[SUB] > ((uint64_t)m.rate * h >> 10));
	assert_int_equal(rwnd_window(t, &ref, &s, 700000, 0, 10 * MS, 0),
			 in_units(path2 + path2 / 2 + ((uint64_t)m.rate * h >> 10) + 3000, 7));
	free(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_defaults_are_valid_and_bad_flows_or_headroom_give_no_instance),
		cmocka_unit_test(test_the_parser_reads_seq_ack_flags_and_window_and_leaves_the_rest_alone),
		cmocka_unit_test(test_the_parser_reads_the_window_scale_among_a_syn_s_options),
		cmocka_unit_test(test_the_parser_reads_a_window_scale_above_14_as_14),
		cmocka_unit_test(test_the_parser_refuses_a_window_scale_of_the_wrong_length),
		cmocka_unit_test(test_a_queued_syn_or_syn_ack_starts_its_leg_when_it_leaves),
		cmocka_unit_test(test_the_parser_refuses_options_that_run_past_the_data_offset),
		cmocka_unit_test(test_the_parser_refuses_a_short_header),
		cmocka_unit_test(test_the_parser_does_not_walk_the_options_of_a_segment_without_syn),
		cmocka_unit_test(test_a_download_ack_after_the_handshake_carries_the_window_of_the_rule),
		cmocka_unit_test(test_an_upload_ack_carries_the_window_of_the_rule_with_the_legs_swapped),
		cmocka_unit_test(test_a_connection_opened_from_the_internet_side_gets_its_legs_the_other_way),
		cmocka_unit_test(test_the_receivers_leg_is_floored_at_min_leg),
		cmocka_unit_test(test_the_window_scale_applies_only_when_both_syns_offer_it),
		cmocka_unit_test(test_the_window_is_never_raised),
		cmocka_unit_test(test_extra_ns_adds_to_the_data_senders_leg),
		cmocka_unit_test(test_the_hold_adds_the_flows_rate_for_its_time_and_the_pipes_rate_caps_both),
		cmocka_unit_test(test_a_flow_is_released_once_all_it_sent_is_acked_and_engaged_again_at_the_headroom),
		cmocka_unit_test(test_the_rate_measured_from_the_acks_sets_the_window_when_it_needs_more),
		cmocka_unit_test(test_a_fin_counts_as_one_byte_that_must_be_acked_before_release),
		cmocka_unit_test(test_karn_a_syn_sent_twice_makes_the_handshake_ambiguous_and_never_clamped),
		cmocka_unit_test(test_karn_a_syn_ack_sent_twice_makes_the_handshake_ambiguous_and_never_clamped),
		cmocka_unit_test(test_without_the_handshake_no_ack_is_tracked),
		cmocka_unit_test(test_a_rst_frees_the_entry),
		cmocka_unit_test(test_a_syn_whose_options_do_not_parse_is_counted_and_not_tracked),
		cmocka_unit_test(test_sequence_numbers_wrap),
		cmocka_unit_test(test_a_full_set_gives_the_least_recently_seen_connection_to_a_new_one),
		cmocka_unit_test(test_a_full_set_of_idle_connections_counts_expired),
		cmocka_unit_test(test_rwnd_entries_counts_live_entries),
		cmocka_unit_test(test_rwnd_write_writes_the_field_and_keeps_the_checksum_valid),
		cmocka_unit_test(test_rwnd_write_crosses_a_checksum_of_zero),
		cmocka_unit_test(test_rwnd_write_with_csum_partial_leaves_the_checksum_field_alone),
		cmocka_unit_test(test_fixed_an_entry_idle_for_2_to_the_36_ns_is_not_live_again),
		cmocka_unit_test(test_fixed_a_new_connection_takes_a_long_dead_entry_not_a_live_one),
		cmocka_unit_test(test_fixed_a_clamped_flow_quiet_for_2_to_the_16_units_is_released),
		cmocka_unit_test(test_fixed_an_ack_whose_window_is_not_lowered_is_not_counted_clamped),
		cmocka_unit_test(test_fixed_a_larger_extra_ns_never_gives_a_smaller_window),
		cmocka_unit_test(test_fixed_karn_a_syn_resent_after_the_syn_ack_passed_makes_the_handshake_ambiguous),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
