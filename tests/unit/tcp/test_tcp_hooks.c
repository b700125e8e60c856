/* SPDX-License-Identifier: BSD-3-Clause */
/* The engine's extension points (tcp.h, "tcp_hooks"), on the virtual
 * clock: options in and out, the 40-byte sharing, the owner's receive
 * window, boundary-keeping receive, the writable event and send room,
 * and coupled congestion control. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tcp_test_util.h"
#include "tcp_impl.h"

#define XKIND 253 /* RFC 6994 experimental kind the test hook writes */
#define NREC 512
#define BLOCK_SHIFT 12

/* What a hook owner saw and is told to do. */
struct owner {
	/* opts_in */
	uint32_t n_in;
	struct tcp_hook_seg in[NREC];
	uint8_t in_opt[NREC][TCP_OPT_SPACE];
	uint32_t in_optlen[NREC];
	/* opts_space / opts_out */
	uint32_t space;            /* asked for on every kind */
	int blocks;                /* name the 4 KB block of sequence space
	                              each segment starts in, and let that
	                              stand to the block's end for new data */
	uint32_t n_data_out;       /* opts_out calls for data, with blocks */
	uint32_t n_data_space;     /* opts_space calls for data */
	uint32_t n_out;
	struct tcp_hook_seg out[NREC];
	uint32_t out_room[NREC];
	/* rcv_wnd */
	uint32_t wnd;
	/* writable */
	uint32_t n_writable;
	uint32_t writable_room, room_then;
	int fill_on_writable;
	uint64_t filled, budget;
	uint32_t max_room_after;
};

static struct owner own_a, own_b;

static void
h_opts_in(void *owner, struct tcp_conn *c, const struct tcp_hook_seg *seg,
	  const uint8_t *opt, uint32_t optlen, uint64_t now)
{
	struct owner *o = owner;

	(void)c;
	(void)now;
	if (o->n_in < NREC) {
		o->in[o->n_in] = *seg;
		memcpy(o->in_opt[o->n_in], opt, optlen);
		o->in_optlen[o->n_in] = optlen;
	}
	o->n_in++;
}

static uint32_t
h_opts_space(void *owner, struct tcp_conn *c, uint8_t kind)
{
	(void)c;
	if (kind == TCP_SEG_DATA)
		((struct owner *)owner)->n_data_space++;
	return ((struct owner *)owner)->space;
}

/* One experimental option filling the room: kind, length, the segment
 * kind, then 0xab; with o->blocks, bytes 3-6 are the block of sequence
 * space (seq >> BLOCK_SHIFT) the segment starts in, and new data is told
 * the bytes stand to that block's end (tcp_hook_seg.same_until). */
static uint32_t
h_opts_out(void *owner, struct tcp_conn *c, struct tcp_hook_seg *seg,
	   uint8_t *buf, uint32_t room)
{
	struct owner *o = owner;

	(void)c;
	if (o->n_out < NREC) {
		o->out[o->n_out] = *seg;
		o->out_room[o->n_out] = room;
	}
	o->n_out++;
	if (room < 3)
		return 0;
	buf[0] = XKIND;
	buf[1] = (uint8_t)room;
	buf[2] = seg->kind;
	memset(buf + 3, 0xab, room - 3);
	if (o->blocks && room >= 8) {
		uint32_t block = seg->seq >> BLOCK_SHIFT;

		buf[3] = (uint8_t)(block >> 24);
		buf[4] = (uint8_t)(block >> 16);
		buf[5] = (uint8_t)(block >> 8);
		buf[6] = (uint8_t)block;
		if (seg->kind == TCP_SEG_DATA) {
			o->n_data_out++;
			if (!seg->retransmit)
				seg->same_until = (block + 1) << BLOCK_SHIFT;
		}
	}
	return room;
}

static uint32_t
h_rcv_wnd(void *owner, struct tcp_conn *c, uint32_t own)
{
	(void)c;
	(void)own;
	return ((struct owner *)owner)->wnd;
}

static void
h_writable(void *owner, struct tcp_conn *c, uint32_t room, uint64_t now)
{
	struct owner *o = owner;
	static uint8_t buf[1 << 16];

	o->n_writable++;
	o->writable_room = room;
	o->room_then = tcp_conn_send_room(c);
	if (o->fill_on_writable && o->filled < o->budget) {
		uint32_t want = room;
		int32_t n;

		if (want > o->budget - o->filled)
			want = (uint32_t)(o->budget - o->filled);
		n = tcp_send(c, buf, want, now);
		if (n > 0)
			o->filled += (uint64_t)n;
		if (o->filled < o->budget && tcp_conn_send_room(c) > o->max_room_after)
			o->max_room_after = tcp_conn_send_room(c);
	}
}

static const struct tcp_conn_hooks all_hooks = {
	.opts_in = h_opts_in, .opts_space = h_opts_space, .opts_out = h_opts_out,
};
static const struct tcp_conn_hooks in_hook = { .opts_in = h_opts_in };
static const struct tcp_conn_hooks in_hook_x = { .opts_in = h_opts_in, .opt_kind = XKIND };
static const struct tcp_conn_hooks in_hook_ts = { .opts_in = h_opts_in, .opt_kind = 8 };
static const struct tcp_conn_hooks wnd_hook = { .rcv_wnd = h_rcv_wnd };
static const struct tcp_conn_hooks writable_hook = { .writable = h_writable };

static struct wire *
new_wire(void)
{
	struct tcp_engine_params pa, pb;

	memset(&own_a, 0, sizeof(own_a));
	memset(&own_b, 0, sizeof(own_b));
	wire_params(&pa, "a", NULL);
	wire_params(&pb, "b", NULL);
	pa.cc = TCP_CC_NEWRENO;
	pb.cc = TCP_CC_NEWRENO;
	return wire_new(&pa, &pb);
}

/* Find an option of kind in an option area; its offset or -1. */
static int
opt_find(const uint8_t *p, uint32_t len, uint8_t kind)
{
	uint32_t i = 0;

	while (i < len) {
		if (p[i] == 0)
			return -1;
		if (p[i] == 1) {
			i++;
			continue;
		}
		if (i + 1 >= len || p[i + 1] < 2 || i + p[i + 1] > len)
			return -1;
		if (p[i] == kind)
			return (int)i;
		i += p[i + 1];
	}
	return -1;
}

/* o as a segment from b's side of w, given to a, which consumes it. */
static void
input_from_b(struct wire *w, struct tcp_seg_out *o)
{
	struct tcp_endpoints epb;
	struct rte_mbuf *m;

	ep_reverse(&epb, &w->ep_a);
	m = tcp_seg_build(test_pool, &epb, o, NULL, 0, 0);
	assert_non_null(m);
	pkt_parse(m, pkt_meta(m), 0);
	assert_int_equal(tcp_input(w->a, m, w->now), TCP_INPUT_CONSUMED);
}

static void
the_options_hook_sees_each_accepted_segment_with_its_sequence_range(void **state)
{
	struct wire *w = new_wire();
	struct tcp_conn *a, *b;
	struct tcp_conn_info ia;
	static uint8_t data[1000];
	uint32_t n_before;

	(void)state;
	tcp_listen(w->b, w->ep_a.rport, true);
	a = tcp_connect_hooked(w->a, &w->ep_a, &in_hook, &own_a, &w->app_a, w->now);
	assert_non_null(a);
	w->app_a.conn = a;
	wire_run(w, MS(30));
	b = w->app_b.conn;
	assert_non_null(b);
	tcp_conn_get_info(a, &ia);
	/* The SYN-ACK that established the active open. */
	assert_true(own_a.n_in >= 1);
	assert_int_equal(own_a.in[0].flags, TCP_FL_SYN | TCP_FL_ACK);
	assert_int_equal(own_a.in[0].seq, ia.irs);
	assert_int_equal(own_a.in[0].ack, ia.iss + 1);
	assert_true(opt_find(own_a.in_opt[0], own_a.in_optlen[0], 2) >= 0); /* MSS */

	n_before = own_a.n_in;
	assert_int_equal(tcp_send(b, data, sizeof(data), w->now), sizeof(data));
	wire_run(w, MS(30));
	assert_int_equal(own_a.n_in, n_before + 1);
	assert_int_equal(own_a.in[n_before].seq, ia.irs + 1);
	assert_int_equal(own_a.in[n_before].len, sizeof(data));
	assert_true(own_a.in[n_before].flags & TCP_FL_ACK);
	/* The raw area: timestamps, 12 bytes with their NOPs. */
	assert_int_equal(own_a.in_optlen[n_before], 12);
	assert_true(opt_find(own_a.in_opt[n_before], 12, 8) >= 0);

	/* A segment far outside the window is not shown to the owner. */
	{
		struct tcp_seg_out o = { .seq = ia.irs + 1 + 5000000, .ack = ia.iss + 1,
					 .flags = TCP_FL_ACK, .wnd = 1000 };
		uint64_t unacc = tcp_engine_counters(w->a)[TCP_CNT_UNACCEPTABLE];

		input_from_b(w, &o);
		assert_int_equal(own_a.n_in, n_before + 1);
		assert_int_equal(tcp_engine_counters(w->a)[TCP_CNT_UNACCEPTABLE], unacc + 1);
	}
	wire_free(w);
}

/* A pure ACK from b's side of w, in a's window, carrying xo after the
 * timestamps; the last opts_in a's owner saw. */
static const struct tcp_hook_seg *
ack_with_opts(struct wire *w, struct tcp_conn *a, const uint8_t *xo, uint8_t xo_len)
{
	struct tcp_conn_info ia;
	uint32_t n_before = own_a.n_in;

	tcp_conn_get_info(a, &ia);
	{
		struct tcp_seg_out o = { .seq = ia.irs + 1, .ack = ia.iss + 1,
					 .flags = TCP_FL_ACK, .wnd = 1000,
					 .opts = TCP_SO_TS, .tsval = a->ts_recent + 1,
					 .xopt = xo, .xopt_len = xo_len };

		input_from_b(w, &o);
	}
	assert_int_equal(own_a.n_in, n_before + 1);
	return &own_a.in[n_before];
}

static void
the_options_hook_is_told_where_its_registered_kind_is(void **state)
{
	static const uint8_t one[] = { XKIND, 4, 7, 7 };
	static const uint8_t other_first[] = { 254, 4, 0, 0, XKIND, 4, 7, 7 };
	static const uint8_t two[] = { XKIND, 4, 7, 7, 1, 1, XKIND, 6, 7, 7, 7, 7 };
	static const uint8_t other_only[] = { 254, 4, 0, 0 };
	static const uint8_t eol_before[] = { 0, 0, XKIND, 2 };
	const struct tcp_hook_seg *h;
	const uint8_t *area;
	struct wire *w;
	struct tcp_conn *a;
	int hk;

	(void)state;
	for (hk = 0; hk < 3; hk++) {
		const struct tcp_conn_hooks *hooks = hk == 0 ? &in_hook_x :
						     hk == 1 ? &in_hook_ts : &in_hook;

		w = new_wire();
		tcp_listen(w->b, w->ep_a.rport, true);
		a = tcp_connect_hooked(w->a, &w->ep_a, hooks, &own_a, &w->app_a, w->now);
		assert_non_null(a);
		w->app_a.conn = a;
		wire_run(w, MS(30));
		assert_int_equal(tcp_conn_state(a), TCP_ESTABLISHED);
		if (hk == 1) {
			/* A kind the engine reads itself: the timestamps, after
			 * their two NOPs, in the SYN-ACK and on a plain ACK. */
			assert_int_equal(own_a.in[0].opt_n, 1);
			assert_int_equal(own_a.in_opt[0][own_a.in[0].opt_at], 8);
			h = ack_with_opts(w, a, one, sizeof(one));
			assert_int_equal(h->opt_at, 2);
			assert_int_equal(h->opt_n, 1);
			wire_free(w);
			continue;
		}
		if (hk == 2) {
			/* No kind registered: never a place. */
			h = ack_with_opts(w, a, one, sizeof(one));
			assert_int_equal(h->opt_at, -1);
			assert_int_equal(h->opt_n, 0);
			wire_free(w);
			continue;
		}
		/* Not in the SYN-ACK. */
		assert_int_equal(own_a.in[0].opt_at, -1);
		assert_int_equal(own_a.in[0].opt_n, 0);
		/* Timestamps alone (the parser's NOP NOP TS shortcut). */
		h = ack_with_opts(w, a, NULL, 0);
		assert_int_equal(h->opt_at, -1);
		assert_int_equal(h->opt_n, 0);
		/* The only option the engine does not read. */
		h = ack_with_opts(w, a, one, sizeof(one));
		area = own_a.in_opt[own_a.n_in - 1];
		assert_int_equal(h->opt_n, 1);
		assert_int_equal(h->opt_at, opt_find(area, own_a.in_optlen[own_a.n_in - 1], XKIND));
		assert_int_equal(h->opt_at, 12);
		/* After another kind the engine does not read. */
		h = ack_with_opts(w, a, other_first, sizeof(other_first));
		assert_int_equal(h->opt_n, 1);
		assert_int_equal(h->opt_at, 16);
		/* Two of them: the first, and the count. */
		h = ack_with_opts(w, a, two, sizeof(two));
		assert_int_equal(h->opt_n, 2);
		assert_int_equal(h->opt_at, 12);
		/* Another kind only. */
		h = ack_with_opts(w, a, other_only, sizeof(other_only));
		assert_int_equal(h->opt_at, -1);
		assert_int_equal(h->opt_n, 0);
		/* Past an end-of-list: padding, not an option. */
		h = ack_with_opts(w, a, eol_before, sizeof(eol_before));
		assert_int_equal(h->opt_at, -1);
		assert_int_equal(h->opt_n, 0);
		wire_free(w);
	}
}

/* The option area of a frame the engine built. */
static uint32_t
frame_opts(struct rte_mbuf *m, struct tcp_seg_in *s, const uint8_t **opt)
{
	pkt_parse(m, pkt_meta(m), 0);
	assert_int_equal(tcp_seg_parse(m, pkt_meta(m), s, 1), 0);
	*opt = rte_pktmbuf_mtod_offset(m, const uint8_t *, pkt_meta(m)->l4_off + 20u);
	return (uint32_t)pkt_meta(m)->l4_len - 20u;
}

static int
was_out(const struct owner *o, uint8_t kind, uint8_t flags)
{
	for (uint32_t i = 0; i < o->n_out && i < NREC; i++)
		if (o->out[i].kind == kind && (flags == 0 || o->out[i].flags == flags))
			return 1;
	return 0;
}

static void
the_options_hook_writes_on_syn_syn_ack_third_ack_data_and_pure_acks(void **state)
{
	struct wire *w = new_wire();
	struct tcp_conn *a, *b;
	struct rte_mbuf *m;
	struct tcp_seg_in s;
	struct tcp_accept_opts ao;
	const uint8_t *opt;
	uint32_t olen;
	int at;
	static uint8_t data[3000];

	(void)state;
	own_a.space = 8;
	own_b.space = 16; /* MP_JOIN's SYN-ACK is 16 bytes */
	a = tcp_connect_hooked(w->a, &w->ep_a, &all_hooks, &own_a, &w->app_a, w->now);
	assert_non_null(a);
	w->app_a.conn = a;
	/* The SYN: engine options (20 bytes), then the hook's 8. */
	assert_int_equal(tcp_tx_burst(w->a, &m, 1), 1);
	olen = frame_opts(m, &s, &opt);
	assert_int_equal(olen, 28);
	at = opt_find(opt, olen, XKIND);
	assert_int_equal(at, 20);
	assert_int_equal(opt[at + 1], 8);
	assert_int_equal(opt[at + 2], TCP_SEG_SYN);
	assert_true(s.opts & TCP_SO_TS);
	assert_true(s.opts & TCP_SO_SACK_PERM);
	assert_true(s.opts & TCP_SO_WS);
	/* B holds the SYN and accepts it with its own hooks. */
	assert_int_equal(tcp_input(w->b, m, w->now), TCP_INPUT_NO_CONN);
	memset(&ao, 0, sizeof(ao));
	ao.hooks = &all_hooks;
	ao.hook_owner = &own_b;
	b = tcp_accept_opts(w->b, m, &ao, &w->app_b, w->now);
	assert_non_null(b);
	w->app_b.conn = b;
	assert_int_equal(tcp_tx_burst(w->b, &m, 1), 1);
	olen = frame_opts(m, &s, &opt);
	assert_int_equal(olen, 36);
	at = opt_find(opt, olen, XKIND);
	assert_int_equal(at, 20);
	assert_int_equal(opt[at + 1], 16);
	assert_int_equal(opt[at + 2], TCP_SEG_SYN_ACK);
	assert_int_equal(tcp_input(w->a, m, w->now), TCP_INPUT_CONSUMED);
	/* The third ACK. */
	assert_int_equal(tcp_tx_burst(w->a, &m, 1), 1);
	olen = frame_opts(m, &s, &opt);
	assert_int_equal(s.flags, TCP_FL_ACK);
	assert_int_equal(s.len, 0);
	assert_int_equal(olen, 12 + 8);
	at = opt_find(opt, olen, XKIND);
	assert_true(at >= 12);
	assert_int_equal(opt[at + 2], TCP_SEG_ACK);
	assert_int_equal(tcp_input(w->b, m, w->now), TCP_INPUT_CONSUMED);
	assert_true(was_out(&own_a, TCP_SEG_ACK, TCP_FL_ACK));
	/* B saw the third ACK's options (it is past the acceptability
	 * check even though it completes the handshake). */
	assert_true(own_b.n_in >= 1);
	assert_true(opt_find(own_b.in_opt[own_b.n_in - 1], own_b.in_optlen[own_b.n_in - 1],
			     XKIND) >= 0);

	/* Data both ways, and the pure ACKs answering it. */
	own_a.n_out = own_b.n_in = 0;
	assert_int_equal(tcp_send(a, data, sizeof(data), w->now), sizeof(data));
	wire_run(w, MS(50));
	assert_int_equal(w->app_b.rx_bytes, sizeof(data));
	assert_true(was_out(&own_a, TCP_SEG_DATA, 0));
	assert_true(was_out(&own_b, TCP_SEG_ACK, TCP_FL_ACK));
	for (uint32_t i = 0; i < own_b.n_in && i < NREC; i++) {
		at = opt_find(own_b.in_opt[i], own_b.in_optlen[i], XKIND);
		assert_true(at >= 0);
		assert_int_equal(own_b.in_opt[i][at + 2],
				 own_b.in[i].len ? TCP_SEG_DATA : TCP_SEG_ACK);
	}
	/* Payload plus options stay within the MSS: full segments carry
	 * the hook's 8 bytes less payload. */
	{
		uint32_t mss = tcp_conn_mss(a);

		for (uint32_t i = 0; i < own_b.n_in && i < NREC; i++)
			assert_true(own_b.in[i].len <= mss - 8);
		assert_int_equal(own_b.in[0].len, mss - 8);
	}
	/* A reset carries them too. */
	own_a.n_out = 0;
	tcp_abort(a, w->now);
	assert_true(was_out(&own_a, TCP_SEG_RST, TCP_FL_RST | TCP_FL_ACK));
	wire_free(w);
}

/* Drop the 2nd, 4th and 6th data segment B sends, once: A holds three
 * out-of-order ranges and reports them in SACK blocks. */
static uint32_t data_to_a;

static int
drop_three_holes(struct wire *w, int to_b, const struct tcp_seg_in *s)
{
	(void)w;
	if (to_b || s->len == 0)
		return 0;
	data_to_a++;
	return data_to_a == 2 || data_to_a == 4 || data_to_a == 6;
}

/* The hook wants `space` bytes on A's ACKs while three holes are open. */
static void
sharing_case(uint32_t space, uint32_t want_blocks)
{
	struct wire *w = new_wire();
	struct tcp_conn *a, *b;
	static uint8_t data[8 * 1448];
	uint32_t max_sack = 0, max_optlen = 0, with_hook = 0;

	own_a.space = space;
	tcp_listen(w->b, w->ep_a.rport, true);
	a = tcp_connect_hooked(w->a, &w->ep_a, &all_hooks, &own_a, &w->app_a, w->now);
	w->app_a.conn = a;
	wire_run(w, MS(30));
	b = w->app_b.conn;
	assert_non_null(b);
	tcp_conn_set_hooks(b, &in_hook, &own_b);
	data_to_a = 0;
	w->drop = drop_three_holes;
	assert_int_equal(tcp_send(b, data, sizeof(data), w->now), sizeof(data));
	assert_int_equal(tcp_conn_mss(b), 1448);
	wire_run(w, MS(2000));
	assert_int_equal(w->app_a.rx_bytes, sizeof(data));
	for (uint32_t i = 0; i < own_b.n_in && i < NREC; i++) {
		const uint8_t *o = own_b.in_opt[i];
		uint32_t len = own_b.in_optlen[i];
		int at = opt_find(o, len, 5); /* SACK */

		if (len > max_optlen)
			max_optlen = len;
		assert_true(len <= TCP_OPT_SPACE);
		assert_true(opt_find(o, len, 8) >= 0); /* timestamps kept */
		if (space) {
			int h = opt_find(o, len, XKIND);

			assert_true(h >= 0);
			assert_int_equal(o[h + 1], space);
			with_hook++;
		}
		if (at >= 0 && (uint32_t)(o[at + 1] - 2) / 8 > max_sack)
			max_sack = (uint32_t)(o[at + 1] - 2) / 8;
	}
	assert_int_equal(max_sack, want_blocks);
	if (space)
		assert_int_equal(with_hook, own_b.n_in);
	/* Recovery worked with whatever SACK room was left. */
	assert_int_equal(tcp_conn_check(a), 0);
	wire_free(w);
}

static void
forty_option_bytes_go_to_timestamps_then_the_hook_then_sack_blocks(void **state)
{
	(void)state;
	sharing_case(0, 3);
	sharing_case(8, 2);
	sharing_case(16, 1);
	sharing_case(20, 0);
	sharing_case(24, 0);
	sharing_case(28, 0);
}

static void
a_hook_asking_more_than_fits_gets_what_is_left(void **state)
{
	struct wire *w = new_wire();
	struct tcp_conn *a;
	struct rte_mbuf *m;
	struct tcp_seg_in s;
	const uint8_t *opt;

	(void)state;
	own_a.space = 37; /* rounded up to 40, granted 20 on the SYN */
	a = tcp_connect_hooked(w->a, &w->ep_a, &all_hooks, &own_a, &w->app_a, w->now);
	assert_non_null(a);
	assert_int_equal(tcp_tx_burst(w->a, &m, 1), 1);
	assert_int_equal(frame_opts(m, &s, &opt), 40);
	assert_int_equal(own_a.out_room[0], 20);
	rte_pktmbuf_free(m);
	tcp_abort(a, w->now);
	wire_free(w);
}

static void
the_owner_window_is_announced_when_it_is_smaller(void **state)
{
	struct wire *w = new_wire();
	struct tcp_conn *a, *b;
	struct tcp_conn_info ib, ia;
	static uint8_t data[100000];
	uint32_t max_wnd = 0;

	(void)state;
	own_a.wnd = 5000;
	tcp_listen(w->b, w->ep_a.rport, true);
	a = tcp_connect_hooked(w->a, &w->ep_a, &wnd_hook, &own_a, &w->app_a, w->now);
	w->app_a.conn = a;
	wire_run(w, MS(30));
	b = w->app_b.conn;
	assert_non_null(b);
	tcp_conn_get_info(a, &ia);
	assert_int_equal(tcp_send(b, data, sizeof(data), w->now), sizeof(data));
	for (int i = 0; i < 400 && w->app_a.rx_bytes < sizeof(data); i++) {
		wire_run(w, MS(1));
		tcp_conn_get_info(b, &ib);
		if (ib.snd_wnd > max_wnd)
			max_wnd = ib.snd_wnd;
		/* B never has more out than the shared window allows. */
		assert_true(ib.snd_nxt - ib.snd_una <= 5000 + (1u << ia.rcv_wscale));
	}
	assert_int_equal(w->app_a.rx_bytes, sizeof(data));
	assert_true(max_wnd <= 5000 + (1u << ia.rcv_wscale));
	assert_true(max_wnd >= 5000 - (1u << ia.rcv_wscale));
	/* An owner window above the engine's own changes nothing. */
	own_a.wnd = UINT32_MAX;
	assert_int_equal(tcp_send(b, data, sizeof(data), w->now), sizeof(data));
	wire_run(w, MS(200));
	tcp_conn_get_info(b, &ib);
	assert_true(ib.snd_wnd > 100000);
	wire_free(w);
}

/* B sends n segments of len bytes, one per millisecond; A does not read. */
static struct tcp_conn *
small_segments_to_a(struct wire *w, int keep, uint32_t n, uint32_t len,
		    struct tcp_conn_info *ia)
{
	struct tcp_conn *a, *b;
	uint8_t buf[200];

	a = wire_connect(w);
	b = w->app_b.conn;
	assert_non_null(b);
	w->app_a.auto_read = 0;
	tcp_conn_keep_segments(a, keep);
	tcp_conn_get_info(a, ia);
	for (uint32_t i = 0; i < n; i++) {
		memset(buf, (int)i, len);
		assert_int_equal(tcp_send(b, buf, len, w->now), (int32_t)len);
		wire_run(w, MS(1));
	}
	wire_run(w, MS(100));
	return a;
}

static void
keeping_segments_receives_each_one_with_its_sequence_number(void **state)
{
	struct wire *w = new_wire();
	struct tcp_conn_info ia;
	struct tcp_conn *a;
	struct rte_mbuf *m;
	uint32_t seq, i = 0;

	(void)state;
	a = small_segments_to_a(w, 1, 10, 100, &ia);
	assert_int_equal(tcp_recv_next_len(a), 100);
	while ((m = tcp_recv_seg(a, &seq, w->now)) != NULL) {
		assert_int_equal(seq, ia.irs + 1 + 100 * i);
		assert_int_equal(rte_pktmbuf_pkt_len(m), 100);
		assert_int_equal(*rte_pktmbuf_mtod(m, uint8_t *), i);
		rte_pktmbuf_free(m);
		i++;
	}
	assert_int_equal(i, 10);
	assert_int_equal(tcp_conn_check(a), 0);
	wire_free(w);
}

static void
without_keeping_segments_small_ones_are_merged(void **state)
{
	struct wire *w = new_wire();
	struct tcp_conn_info ia;
	struct tcp_conn *a;
	struct rte_mbuf *m;
	uint32_t seq;

	(void)state;
	a = small_segments_to_a(w, 0, 10, 100, &ia);
	assert_int_equal(tcp_recv_next_len(a), 1000);
	m = tcp_recv_seg(a, &seq, w->now);
	assert_non_null(m);
	assert_int_equal(seq, ia.irs + 1);
	assert_int_equal(rte_pktmbuf_pkt_len(m), 1000);
	rte_pktmbuf_free(m);
	wire_free(w);
}

/* opts_merge of the test owner: options {XKIND, 4, tag, n} merge when
 * the tags agree, the held one's n becoming the sum (so opts_in shows
 * what it was told for the run). */
static uint32_t n_merge_calls;

static bool
h_opts_merge(void *owner, struct tcp_conn *c, uint8_t *held, const uint8_t *next,
	     uint32_t optlen, uint32_t opt_at)
{
	(void)owner;
	(void)c;
	n_merge_calls++;
	assert_true(opt_at + 4 <= optlen);
	assert_int_equal(held[opt_at], XKIND);
	assert_int_equal(next[opt_at], XKIND);
	if (held[opt_at + 2] != next[opt_at + 2])
		return false;
	held[opt_at + 3] = (uint8_t)(held[opt_at + 3] + next[opt_at + 3]);
	return true;
}

static const struct tcp_conn_hooks merge_hook = {
	.opts_in = h_opts_in, .opt_kind = XKIND, .opts_merge = h_opts_merge,
};

/* Six 100-byte data segments from b's side, in order, given to a as one
 * run of one input burst; xo[i] follows the timestamps of segment i. */
static void
run_of_six_to_a(struct wire *w, struct tcp_conn *a, const uint8_t xo[6][8],
		const uint8_t xo_len[6])
{
	struct tcp_endpoints epb;
	struct tcp_conn_info ia;
	struct rte_mbuf *data, *pk[6];
	uint8_t *d;

	tcp_conn_get_info(a, &ia);
	ep_reverse(&epb, &w->ep_a);
	data = rte_pktmbuf_alloc(test_pool);
	assert_non_null(data);
	d = (uint8_t *)rte_pktmbuf_append(data, 600);
	assert_non_null(d);
	for (uint32_t i = 0; i < 600; i++)
		d[i] = (uint8_t)(i / 100 + 1);
	for (uint32_t i = 0; i < 6; i++) {
		struct tcp_seg_out o = { .seq = ia.irs + 1 + 100 * i, .ack = ia.iss + 1,
					 .flags = TCP_FL_ACK, .wnd = 1000,
					 .opts = TCP_SO_TS, .tsval = a->ts_recent + 1,
					 .xopt = xo[i], .xopt_len = xo_len[i] };

		pk[i] = tcp_seg_build(test_pool, &epb, &o, data, 100 * i, 100);
		assert_non_null(pk[i]);
		pkt_parse(pk[i], pkt_meta(pk[i]), 0);
	}
	rte_pktmbuf_free(data);
	tcp_input_burst_begin(w->a);
	assert_true(tcp_conn_lookup(w->a, pk[0]) == a);
	assert_int_equal(tcp_input_conn_run(w->a, a, pk, 6, w->now), 6);
	tcp_input_burst_end(w->a, w->now);
}

static void
a_hooked_connection_merges_a_run_only_as_its_owner_says(void **state)
{
	/* Tags 1 1 1 2, then the option after two NOPs (laid out
	 * otherwise: the owner is not asked), then tag 2 again. */
	static const uint8_t xo[6][8] = {
		{ XKIND, 4, 1, 1 }, { XKIND, 4, 1, 1 }, { XKIND, 4, 1, 1 },
		{ XKIND, 4, 2, 1 }, { 1, 1, 1, 1, XKIND, 4, 2, 1 }, { XKIND, 4, 2, 1 },
	};
	static const uint8_t xo_len[6] = { 4, 4, 4, 4, 8, 4 };
	static const uint32_t want_len[] = { 300, 100, 100, 100 };
	static const uint8_t want_n[] = { 3, 1, 1, 1 };

	(void)state;
	for (int with_merge = 0; with_merge < 2; with_merge++) {
		struct wire *w = new_wire();
		struct tcp_conn_info ia;
		struct tcp_conn *a;
		struct rte_mbuf *m;
		uint32_t n0, seq, i = 0;
		uint64_t co;

		tcp_listen(w->b, w->ep_a.rport, true);
		a = tcp_connect_hooked(w->a, &w->ep_a, with_merge ? &merge_hook : &in_hook_x,
				       &own_a, &w->app_a, w->now);
		assert_non_null(a);
		w->app_a.conn = a;
		w->app_a.auto_read = 0;
		tcp_conn_keep_segments(a, true);
		wire_run(w, MS(30));
		assert_int_equal(tcp_conn_state(a), TCP_ESTABLISHED);
		tcp_conn_get_info(a, &ia);
		n0 = own_a.n_in;
		n_merge_calls = 0;
		co = tcp_engine_counters(w->a)[TCP_CNT_SEG_COALESCED];
		run_of_six_to_a(w, a, xo, xo_len);
		if (with_merge) {
			/* Asked of segments 2 and 3 (yes), and 4 (no). */
			assert_int_equal(n_merge_calls, 3);
			assert_int_equal(tcp_engine_counters(w->a)[TCP_CNT_SEG_COALESCED], co + 2);
			assert_int_equal(own_a.n_in, n0 + 4);
			for (uint32_t k = 0; k < 4; k++) {
				const struct tcp_hook_seg *h = &own_a.in[n0 + k];

				assert_int_equal(h->len, want_len[k]);
				assert_int_equal(h->opt_n, 1);
				assert_int_equal(own_a.in_opt[n0 + k][h->opt_at + 3], want_n[k]);
			}
			assert_int_equal(own_a.in[n0 + 3].seq, ia.irs + 1 + 500);
		} else {
			/* No opts_merge: each segment alone. */
			assert_int_equal(n_merge_calls, 0);
			assert_int_equal(tcp_engine_counters(w->a)[TCP_CNT_SEG_COALESCED], co);
			assert_int_equal(own_a.n_in, n0 + 6);
		}
		/* Merged or not, the receive queue keeps each segment. */
		while ((m = tcp_recv_seg(a, &seq, w->now)) != NULL) {
			assert_int_equal(seq, ia.irs + 1 + 100 * i);
			assert_int_equal(rte_pktmbuf_pkt_len(m), 100);
			assert_int_equal(*rte_pktmbuf_mtod(m, uint8_t *), i + 1);
			assert_int_equal(rte_pktmbuf_mtod(m, uint8_t *)[99], i + 1);
			rte_pktmbuf_free(m);
			i++;
		}
		assert_int_equal(i, 6);
		assert_int_equal(tcp_conn_check(a), 0);
		wire_free(w);
	}
}

static void
keeping_segments_under_memory_pressure_prunes_and_drops_but_never_merges(void **state)
{
	struct tcp_engine_params pa, pb;
	struct wire *w;
	struct tcp_conn_info ia;
	struct tcp_conn *a;
	struct rte_mbuf *m;
	uint32_t seq, expect, n = 0;
	const uint64_t *ca;

	(void)state;
	wire_params(&pa, "a", NULL);
	wire_params(&pb, "b", NULL);
	/* A 4 KB window, and mbuf memory for about a dozen segments. */
	pa.rcv_buf = 4096;
	w = wire_new(&pa, &pb);
	a = small_segments_to_a(w, 1, 40, 50, &ia);
	ca = tcp_engine_counters(w->a);
	assert_int_equal(ca[TCP_CNT_RCV_COLLAPSE], 0);
	assert_true(ca[TCP_CNT_RCV_MEM_DROPPED] > 0);
	expect = ia.irs + 1;
	while ((m = tcp_recv_seg(a, &seq, w->now)) != NULL) {
		assert_int_equal(seq, expect);
		assert_int_equal(rte_pktmbuf_pkt_len(m), 50);
		expect += 50;
		rte_pktmbuf_free(m);
		n++;
	}
	assert_true(n > 0 && n < 40);
	/* Reading makes room: the rest is resent and arrives, still one
	 * segment per mbuf. */
	for (int round = 0; round < 300 && n < 40; round++) {
		wire_run(w, MS(100));
		while ((m = tcp_recv_seg(a, &seq, w->now)) != NULL) {
			assert_int_equal(seq, expect);
			assert_int_equal(rte_pktmbuf_pkt_len(m), 50);
			expect += 50;
			rte_pktmbuf_free(m);
			n++;
		}
	}
	assert_int_equal(n, 40);
	assert_int_equal(ca[TCP_CNT_RCV_COLLAPSE], 0);
	assert_int_equal(tcp_conn_check(a), 0);
	wire_free(w);
}

static void
send_room_is_what_the_engine_then_sends(void **state)
{
	struct wire *w = new_wire();
	struct tcp_conn_info i;
	struct tcp_conn *a;
	static uint8_t data[200000];
	uint32_t room;

	(void)state;
	a = wire_connect(w);
	assert_non_null(a);
	room = tcp_conn_send_room(a);
	tcp_conn_get_info(a, &i);
	assert_int_equal(room, i.cwnd); /* initial window, nothing out */
	assert_int_equal(tcp_send(a, data, room + 5000, w->now), room + 5000);
	tcp_conn_get_info(a, &i);
	assert_int_equal(i.snd_nxt - i.snd_una, room);
	assert_int_equal(tcp_conn_send_room(a), 0);
	/* After ACKs: the room again matches what leaves at once. */
	wire_run(w, MS(12));
	room = tcp_conn_send_room(a);
	tcp_conn_get_info(a, &i);
	{
		uint32_t before = i.snd_nxt;

		assert_true(room > 0);
		assert_int_equal(tcp_send(a, data, room, w->now), room);
		tcp_conn_get_info(a, &i);
		assert_int_equal(i.snd_nxt - before, room);
		assert_int_equal(tcp_conn_send_room(a), 0);
	}
	wire_free(w);
}

static void
writable_fires_when_an_ack_opens_the_congestion_window(void **state)
{
	struct wire *w = new_wire();
	struct tcp_conn *a;
	struct tcp_conn_info i;
	static uint8_t data[200000];
	uint32_t room;

	(void)state;
	a = wire_connect(w);
	assert_non_null(a);
	tcp_conn_set_hooks(a, &writable_hook, &own_a);
	room = tcp_conn_send_room(a);
	assert_int_equal(tcp_send(a, data, room, w->now), room);
	/* A scheduler that fills the room it is told of. */
	own_a.fill_on_writable = 1;
	own_a.budget = sizeof(data);
	assert_int_equal(own_a.n_writable, 0);
	/* Not before an ACK arrives (one-way delay 5 ms). */
	wire_run(w, MS(9));
	assert_int_equal(own_a.n_writable, 0);
	wire_run(w, MS(2));
	assert_true(own_a.n_writable > 0);
	assert_true(own_a.writable_room > 0);
	assert_int_equal(own_a.writable_room, own_a.room_then);
	/* Driven by the events alone, the whole budget goes out, and after
	 * each event the window was full (no room left unused). */
	wire_run(w, MS(300));
	assert_int_equal(own_a.filled, sizeof(data));
	assert_int_equal(own_a.max_room_after, 0);
	assert_int_equal(w->app_b.rx_bytes, room + sizeof(data));
	tcp_conn_get_info(a, &i);
	assert_int_equal(i.snd_una, i.snd_nxt);
	own_a.fill_on_writable = 0;
	wire_free(w);
}

/* A trivial coupled increase: each member grows by acked * MSS / total
 * cwnd of the group, so two members grow together like one. */
static uint32_t trivial_calls, trivial_n;
static uint64_t trivial_sum;

static uint64_t
trivial_increase(const struct tcp_cc_group *g, const struct tcp_conn *c, uint32_t acked)
{
	uint64_t total = 0, inc;

	for (uint32_t k = 0; k < g->n; k++)
		total += tcp_conn_cwnd(g->member[k]);
	trivial_calls++;
	trivial_n = g->n;
	inc = ((uint64_t)acked * tcp_conn_mss(c) << 16) / total;
	trivial_sum += inc;
	return inc;
}

static void
a_coupled_group_sets_the_increase_in_congestion_avoidance(void **state)
{
	struct wire *w = new_wire();
	struct tcp_cc_group g = { .increase = trivial_increase };
	struct tcp_endpoints ep2;
	struct tcp_conn *a1, *a2;
	static uint8_t data[400000];
	uint32_t cwnd0, frac0;
	uint64_t sent = 0;

	(void)state;
	a1 = wire_connect(w);
	assert_non_null(a1);
	ep2 = w->ep_a;
	ep2.lport++;
	a2 = tcp_connect(w->a, &ep2, &w->app_a, w->now);
	assert_non_null(a2);
	wire_run(w, MS(30));
	assert_int_equal(tcp_cc_group_join(&g, a1), 0);
	assert_int_equal(tcp_cc_group_join(&g, a2), 0);
	assert_int_equal(g.n, 2);
	/* Into congestion avoidance, and a sibling with a large window. */
	a1->cc.ssthresh = a1->cc.cwnd;
	a2->cc.cwnd = 100 * 1448;
	cwnd0 = a1->cc.cwnd;
	frac0 = (uint32_t)a1->ccg_frac;
	while (sent < sizeof(data)) {
		int32_t n = tcp_send(a1, data, (uint32_t)(sizeof(data) - sent), w->now);

		if (n > 0)
			sent += (uint64_t)n;
		wire_run(w, MS(1));
	}
	wire_run(w, MS(100));
	assert_true(trivial_calls > 0);
	assert_int_equal(trivial_n, 2);
	/* cwnd grew by exactly what the group gave (carry included). */
	assert_int_equal((uint64_t)a1->cc.cwnd - cwnd0,
			 (trivial_sum + frac0) >> 16);
	/* Far less than Reno alone would have (about one MSS per RTT,
	 * here about 1/10 of that since the sibling holds ~10x the window):
	 * NewReno byte counting gives acked/cwnd MSS. */
	assert_true(a1->cc.cwnd - cwnd0 < 2 * 1448);
	assert_true(a2->cc.cwnd == 100 * 1448); /* the sibling was not acked */
	/* Leaving: a closing connection leaves the group itself. */
	tcp_abort(a2, w->now);
	assert_int_equal(g.n, 1);
	assert_ptr_equal(g.member[0], a1);
	tcp_cc_group_leave(a1);
	assert_int_equal(g.n, 0);
	wire_free(w);
}

static void
lia_increase_follows_the_rfc6356_formula(void **state)
{
	struct wire *w = new_wire();
	struct tcp_cc_group g = { .increase = tcp_cc_lia_increase };
	struct tcp_conn *c[3];
	const uint32_t cwnd[3] = { 20 * 1448, 60 * 1448, 7 * 1448 };
	const uint64_t rtt[3] = { MS(10), MS(50), MS(5) };
	const uint32_t mss[3] = { 1448, 1448, 1200 };

	(void)state;
	tcp_listen(w->b, 80, true);
	for (int i = 0; i < 3; i++) {
		struct tcp_endpoints ep = w->ep_a;

		ep.lport = (uint16_t)(ep.lport + i);
		c[i] = tcp_connect(w->a, &ep, &w->app_a, w->now);
		assert_non_null(c[i]);
		assert_int_equal(tcp_cc_group_join(&g, c[i]), 0);
		c[i]->cc.cwnd = cwnd[i];
		c[i]->srtt_ns = rtt[i];
		c[i]->mss = (uint16_t)mss[i];
	}
	/* RFC 6356 section 3, computed here independently (seconds). */
	{
		double total = 0, best = 0, sum = 0, alpha;

		for (int i = 0; i < 3; i++) {
			double r = (double)rtt[i] / 1e9;

			total += cwnd[i];
			if (cwnd[i] / (r * r) > best)
				best = cwnd[i] / (r * r);
			sum += cwnd[i] / r;
		}
		alpha = total * best / (sum * sum);
		for (int i = 0; i < 3; i++) {
			for (uint32_t acked = 1; acked <= 3000; acked += 1499) {
				double coupled = alpha * acked * mss[i] / total;
				double reno = (double)acked * mss[i] / cwnd[i];
				double want = coupled < reno ? coupled : reno;
				double got = (double)tcp_cc_lia_increase(&g, c[i], acked) / 65536.0;

				assert_true(got > want - 1e-4 && got < want + 1e-4);
			}
		}
		/* The 5 ms, small-window subflow is capped by the coupled
		 * term, not by Reno: the coupling is on. */
		assert_true(alpha * 1448 * mss[2] / total < 1448.0 * mss[2] / cwnd[2]);
	}
	for (int i = 0; i < 3; i++)
		tcp_abort(c[i], w->now);
	assert_int_equal(g.n, 0);
	wire_free(w);
}

/* A hook that says what it wrote stands for the segments after
 * (tcp_hook_seg.same_until, as an MPTCP subflow does for the rest of a
 * mapping) is asked once per stretch of new data in an output pass, and
 * every data segment still carries the bytes written for it: the block
 * of sequence space its first byte is in. The room is asked for no more
 * often than the options. Segments of 1440 bytes cross
 * the 4 KB blocks' edges, where the hook is asked again. Twice: from a
 * buffer the application filled (frames built in full), and from mbufs
 * of one segment each, as a relay queues them (frames in place, which
 * take the bytes from the first frame's headers). */
static void
one_writing_of_the_hooks_options_stands_for_the_segments_it_names(void **state)
{
	static uint8_t data[60 * 1440];

	(void)state;
	for (int mbufs = 0; mbufs < 2; mbufs++) {
		struct wire *w = new_wire();
		struct tcp_conn *a;
		uint32_t seg_len, segs = 0, blocks = 0, last_block = UINT32_MAX;

		own_a.space = 8;
		own_a.blocks = 1;
		tcp_listen(w->b, w->ep_a.rport, true);
		a = tcp_connect_hooked(w->a, &w->ep_a, &all_hooks, &own_a, &w->app_a, w->now);
		assert_non_null(a);
		w->app_a.conn = a;
		wire_run(w, MS(30));
		assert_non_null(w->app_b.conn);
		tcp_conn_set_hooks(w->app_b.conn, &in_hook, &own_b);
		seg_len = tcp_conn_mss(a) - 8;
		assert_int_equal(seg_len, 1440);
		own_a.n_data_out = own_a.n_data_space = 0;
		own_b.n_in = 0;
		w->in_place[1] = 0;
		if (mbufs) {
			/* In one burst, as a relay queues them: one output at
			 * its end. */
			tcp_input_burst_begin(w->a);
			for (uint32_t k = 0; k < 60; k++) {
				struct rte_mbuf *m = rte_pktmbuf_alloc(test_pool);

				assert_non_null(m);
				assert_non_null(rte_pktmbuf_append(m, (uint16_t)seg_len));
				memset(rte_pktmbuf_mtod(m, uint8_t *), (int)k, seg_len);
				assert_int_equal(tcp_send_mbuf(a, m, w->now), (int32_t)seg_len);
			}
			tcp_input_burst_end(w->a, w->now);
		} else {
			assert_int_equal(tcp_send(a, data, sizeof(data), w->now), sizeof(data));
		}
		/* From here, output only (queueing asks the room too, for
		 * tcp_conn_data_mss()). */
		own_a.n_data_space = own_a.n_data_out = 0;
		wire_run(w, MS(2000));
		assert_int_equal(w->app_b.rx_bytes, sizeof(data));
		assert_true(own_b.n_in <= NREC);
		for (uint32_t i = 0; i < own_b.n_in; i++) {
			const uint8_t *o = own_b.in_opt[i];
			int at = opt_find(o, own_b.in_optlen[i], XKIND);
			uint32_t block;

			if (own_b.in[i].len == 0)
				continue;
			assert_true(at >= 0);
			assert_int_equal(o[at + 2], TCP_SEG_DATA);
			block = (uint32_t)o[at + 3] << 24 | (uint32_t)o[at + 4] << 16 |
				(uint32_t)o[at + 5] << 8 | o[at + 6];
			if (block != own_b.in[i].seq >> BLOCK_SHIFT)
				fail_msg("segment at %u carries block %u", own_b.in[i].seq, block);
			segs++;
			if (block != last_block)
				blocks++;
			last_block = block;
		}
		assert_int_equal(segs, 60);
		/* Asked less than once a segment (the segments of the
		 * first pass aside, at least once per block), and for the
		 * room no more often than for the options. */
		assert_true(own_a.n_data_out + 4 >= blocks);
		assert_true(own_a.n_data_out < segs - 10);
		assert_true(own_a.n_data_space <= own_a.n_data_out);
		if (mbufs)
			assert_int_equal(w->in_place[1], 60);
		assert_int_equal(tcp_conn_check(a), 0);
		tcp_abort(a, w->now);
		wire_free(w);
	}
}

static void
a_connection_without_hooks_builds_the_same_segments(void **state)
{
	struct wire *w = new_wire();
	struct tcp_conn *a;
	struct rte_mbuf *m;
	struct tcp_seg_in s;
	const uint8_t *opt;

	(void)state;
	a = tcp_connect(w->a, &w->ep_a, &w->app_a, w->now);
	assert_non_null(a);
	assert_int_equal(tcp_tx_burst(w->a, &m, 1), 1);
	assert_int_equal(frame_opts(m, &s, &opt), 20);
	assert_int_equal(opt_find(opt, 20, XKIND), -1);
	rte_pktmbuf_free(m);
	tcp_abort(a, w->now);
	wire_free(w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_options_hook_sees_each_accepted_segment_with_its_sequence_range),
		cmocka_unit_test(the_options_hook_is_told_where_its_registered_kind_is),
		cmocka_unit_test(the_options_hook_writes_on_syn_syn_ack_third_ack_data_and_pure_acks),
		cmocka_unit_test(forty_option_bytes_go_to_timestamps_then_the_hook_then_sack_blocks),
		cmocka_unit_test(a_hook_asking_more_than_fits_gets_what_is_left),
		cmocka_unit_test(the_owner_window_is_announced_when_it_is_smaller),
		cmocka_unit_test(keeping_segments_receives_each_one_with_its_sequence_number),
		cmocka_unit_test(a_hooked_connection_merges_a_run_only_as_its_owner_says),
		cmocka_unit_test(without_keeping_segments_small_ones_are_merged),
		cmocka_unit_test(keeping_segments_under_memory_pressure_prunes_and_drops_but_never_merges),
		cmocka_unit_test(send_room_is_what_the_engine_then_sends),
		cmocka_unit_test(writable_fires_when_an_ack_opens_the_congestion_window),
		cmocka_unit_test(a_coupled_group_sets_the_increase_in_congestion_avoidance),
		cmocka_unit_test(lia_increase_follows_the_rfc6356_formula),
		cmocka_unit_test(one_writing_of_the_hooks_options_stands_for_the_segments_it_names),
		cmocka_unit_test(a_connection_without_hooks_builds_the_same_segments),
	};

	if (test_eal_init("hooks") != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
