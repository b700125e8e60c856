/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the whole tcp_input() path: one engine listens,
 * the harness opens a connection to it with a real handshake, then plays
 * the peer with arbitrary segments decoded from the input, and the
 * engine's application with reads, writes, half-closes and aborts, on a
 * virtual clock.
 *
 * Input: one configuration byte (CFG_*: IPv6, which options the peer
 * offers, NewReno, which side opens, MSS 536, a pool of 11 mbufs for the
 * engine), then records of REC
 * bytes, one segment each:
 *   0     TCP flags (low 6 bits); 0x40 corrupt the checksum; 0x80 make it
 *         an IPv4 first fragment
 *   1     0x01 timestamps, 0x02 SACK blocks (bytes 12-14), 0x04 raw
 *         options (bytes 12-15, whole or not), 0x08 seq far out
 *         (delta x 65536), 0x10 ack far out, 0x20 payload from the input,
 *         0x40 the next record's segment goes in the same input burst
 *         (up to 16; fed in runs with tcp_input_conn_run(), as the
 *         proxy feeds them; its seq counts from this one's end, and the
 *         application and the clock wait for the burst's last record)
 *   2-3   seq - RCV.NXT of the engine, signed
 *   4-5   ack - SND.UNA of the engine, signed
 *   6-7   payload length (mod 1461)
 *   8-9   window field
 *   10    time step: n ms, or (n & 0x7f) x 100 ms with 0x80
 *   11    timestamp value step, signed
 *   12-15 SACK blocks or raw options
 *   16    application: read, read whole mbufs, write, shutdown, abort,
 *         set the extension hooks (lib/tcp tcp_hooks: options in and
 *         out of (op >> 4) * 4 bytes, an owner window, the writable
 *         event, segment boundaries kept), read one segment, set a
 *         receive pool or take back idle windows (op % 10 == 0)
 *
 * After every segment and timer run the target aborts when:
 *   - a frame the engine sends does not parse or has a bad checksum;
 *   - tcp_conn_check() finds an internal invariant broken (queue counts,
 *     out-of-order ranges, retransmission records, SACKed bytes);
 *   - the receive queue holds more than rcv_buf bytes or more mbuf
 *     memory than rcv_mem, the send queue more than snd_buf, or
 *     SND.UNA is past SND.NXT;
 * and after teardown when any mbuf of any pool is still in use.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "../../test_eal.h"
#include "pkt.h"
#include "tcp.h"
#include "tcp_seg.h"

/* The configuration byte that starts the input. */
#define CFG_IPV6      0x01
#define CFG_NO_SACK   0x02 /* the peer offers no SACK */
#define CFG_NO_TS     0x04 /* nor timestamps */
#define CFG_NO_WS     0x08 /* nor window scaling */
#define CFG_NEWRENO   0x10
#define CFG_ACTIVE    0x20 /* the engine opens the connection */
#define CFG_SMALL_MSS 0x40 /* the peer announces MSS 536 */
#define CFG_SMALL_POOL 0x80 /* the engine's pool holds 11 mbufs */

#define REC 17
#define RCV_BUF 16384
#define SND_BUF 16384
#define CHECK(c) \
	do { \
		if (!(c)) { \
			fprintf(stderr, "fuzz_tcpconn: line %d: %s\n", __LINE__, #c); \
			abort(); \
		} \
	} while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct rte_mempool *pool;       /* the engine's and the peer's frames */
static struct rte_mempool *small_pool; /* the engine's with CFG_SMALL_POOL */
static struct rte_mempool *src_pool;   /* payload source */
static uint64_t totals[TCP_CNT_MAX];   /* engine counters, all inputs */

/* With FUZZ_TCPCONN_STATS set, the engine counters summed over every
 * input run, at exit: which paths a corpus reaches. */
static void
print_totals(void)
{
	for (unsigned int k = 0; k < TCP_CNT_MAX; k++)
		if (totals[k] != 0)
			fprintf(stderr, "%s=%llu\n", tcp_cnt_name((enum tcp_cnt)k),
				(unsigned long long)totals[k]);
}

struct harness {
	struct tcp_engine *e;
	struct tcp_conn *c;
	struct tcp_endpoints peer; /* the peer's view: peer -> engine */
	uint64_t now;
	uint32_t tsval;
	uint32_t rcv_nxt, snd_una; /* the engine's, last known */
	uint32_t rcv_mem;          /* the engine's bound */
	uint32_t hook_space;       /* what opts_space asks for */
	/* The ACK and TSval of the last frame drained since the engine's
	 * last SYN or RST (check_fresh()). */
	bool seen, seen_ts;
	uint32_t seen_ack, seen_tsval;
};

/* The kind the hooks register (MPTCP's, as the subflows do). */
#define FUZZ_OPT_KIND 30
/* The option the hook writes, and the blocks of sequence space it
 * names (h_opts_out()). */
#define HOOK_KIND_OUT 253
#define HOOK_BLOCK_SHIFT 12

/* The extension hooks check what the engine gives them. */
static void
h_opts_in(void *owner, struct tcp_conn *c, const struct tcp_hook_seg *seg,
	  const uint8_t *opt, uint32_t optlen, uint64_t now)
{
	uint32_t sum = 0;

	(void)owner;
	(void)c;
	(void)now;
	CHECK(optlen <= TCP_OPT_SPACE);
	for (uint32_t i = 0; i < optlen; i++)
		sum += opt[i]; /* readable (ASan) */
	CHECK(sum <= 255 * TCP_OPT_SPACE);
	CHECK(seg->len <= 65535);
	/* The area is whole (the owner relies on it), and opt_at / opt_n
	 * say where the options of the registered kind are. */
	{
		int at = -1;
		uint32_t n = 0, i = 0;

		while (i < optlen && opt[i] != 0) {
			if (opt[i] == 1) {
				i++;
				continue;
			}
			CHECK(i + 1 < optlen && opt[i + 1] >= 2 && i + opt[i + 1] <= optlen);
			if (opt[i] == FUZZ_OPT_KIND && n++ == 0)
				at = (int)i;
			i += opt[i + 1];
		}
		CHECK(seg->opt_at == at && seg->opt_n == n);
	}
}

static uint32_t
h_opts_space(void *owner, struct tcp_conn *c, uint8_t kind)
{
	(void)c;
	CHECK(kind <= TCP_SEG_RST);
	return ((struct harness *)owner)->hook_space;
}

static uint32_t
h_opts_out(void *owner, struct tcp_conn *c, struct tcp_hook_seg *seg,
	   uint8_t *buf, uint32_t room)
{
	uint32_t block = seg->seq >> HOOK_BLOCK_SHIFT;

	(void)owner;
	(void)c;
	CHECK(room <= TCP_OPT_SPACE && room % 4 == 0);
	if (room < 8)
		return 0;
	/* An experimental option (RFC 6994: at least kind, length and a
	 * 2-byte ExID) one byte short of the room: the engine pads a NOP.
	 * After the ExID, the block of sequence space the segment starts
	 * in; for new data in an even block the bytes stand for the
	 * segments up to the block's end (tcp_hook_seg.same_until), and
	 * drain() checks that every data frame carries its own block. */
	buf[0] = HOOK_KIND_OUT;
	buf[1] = (uint8_t)(room - 1);
	memset(buf + 2, 0xee, room - 3);
	buf[4] = (uint8_t)(block >> 16); /* 20 bits: three bytes hold it */
	buf[5] = (uint8_t)(block >> 8);
	buf[6] = (uint8_t)block;
	if (seg->kind == TCP_SEG_DATA && !seg->retransmit && (block & 1) == 0)
		seg->same_until = (block + 1) << HOOK_BLOCK_SHIFT;
	return room - 1;
}

static uint32_t
h_rcv_wnd(void *owner, struct tcp_conn *c, uint32_t own)
{
	(void)c;
	(void)own;
	return ((struct harness *)owner)->hook_space * 300;
}

static void
h_writable(void *owner, struct tcp_conn *c, uint32_t room, uint64_t now)
{
	static const uint8_t bytes[4096];

	(void)owner;
	CHECK(room > 0 && room == tcp_conn_send_room(c));
	(void)tcp_send(c, bytes, room < sizeof(bytes) ? room : sizeof(bytes), now);
}

static const struct tcp_conn_hooks fuzz_hooks = {
	.opts_in = h_opts_in, .opts_space = h_opts_space, .opts_out = h_opts_out,
	.rcv_wnd = h_rcv_wnd, .writable = h_writable, .opt_kind = FUZZ_OPT_KIND,
};

static void
on_event(struct tcp_conn *c, void *arg, uint32_t ev, uint64_t now)
{
	struct harness *h = arg;

	(void)now;
	if (ev & TCP_EV_CONNECTED)
		h->c = c;
	if ((ev & TCP_EV_CLOSED) && h->c == c)
		h->c = NULL;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (test_eal_start("fuzz_tcpconn", 128) < 0)
		abort();
	pool = rte_pktmbuf_pool_create("fz_tcp", 2047, 0, PKT_META_PRIV_SIZE,
				       RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	small_pool = rte_pktmbuf_pool_create("fz_small", 11, 0, PKT_META_PRIV_SIZE,
					     RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	src_pool = rte_pktmbuf_pool_create("fz_src", 7, 0, PKT_META_PRIV_SIZE,
					   RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	CHECK(pool != NULL && small_pool != NULL && src_pool != NULL);
	if (getenv("FUZZ_TCPCONN_STATS") != NULL)
		(void)atexit(print_totals);
	return 0;
}

/* A data frame with the hook's option names the block its first byte
 * is in: options written once for several segments (same_until) never
 * reach a segment past the block they were written for. */
static void
check_hook_opt(struct rte_mbuf *m, const struct tcp_seg_in *s)
{
	uint8_t o[7];
	uint32_t block;

	if (s->len == 0 || s->xo_kind != HOOK_KIND_OUT)
		return;
	CHECK(tcp_chain_copy(m, pkt_meta(m)->l4_off + s->xo_off, o, sizeof(o)) == sizeof(o));
	CHECK(o[1] >= 7);
	block = (uint32_t)o[4] << 16 | (uint32_t)o[5] << 8 | o[6];
	CHECK(block == s->seq >> HOOK_BLOCK_SHIFT);
}

/* A connection's frames carry its ACK and timestamp as they were when
 * each was made: never behind a frame drained before. A frame whose
 * headers are copied from another's (tcp_seg_build_rep()) or made once
 * for an output call (hdr_init()) must not carry an older call's. A
 * SYN or RST starts again: a new connection of the same addresses, or
 * an answer to another's segment. */
static void
check_fresh(struct harness *h, const struct tcp_seg_in *s)
{
	if (s->flags & (TCP_FL_SYN | TCP_FL_RST)) {
		h->seen = h->seen_ts = false;
		return;
	}
	if (!(s->flags & TCP_FL_ACK))
		return;
	CHECK(!h->seen || tcp_seq_ge(s->ack, h->seen_ack));
	h->seen = true;
	h->seen_ack = s->ack;
	if (s->opts & TCP_SO_TS) {
		CHECK(!h->seen_ts || tcp_seq_ge(s->tsval, h->seen_tsval));
		h->seen_ts = true;
		h->seen_tsval = s->tsval;
	}
}

/* Take and check every frame the engine wants to send; return the last
 * one's header in *last (if any). */
static int
drain(struct harness *h, struct tcp_seg_in *last)
{
	struct rte_mbuf *out[32];
	uint16_t n;
	int any = 0;

	while ((n = tcp_tx_burst(h->e, out, 32)) > 0) {
		for (uint16_t i = 0; i < n; i++) {
			struct tcp_seg_in s;

			CHECK(pkt_parse(out[i], pkt_meta(out[i]), 0) == PKT_ERR_NONE);
			CHECK(tcp_seg_parse(out[i], pkt_meta(out[i]), &s, 1) == 0);
			check_hook_opt(out[i], &s);
			check_fresh(h, &s);
			if (last != NULL)
				*last = s;
			any = 1;
		}
		rte_pktmbuf_free_bulk(out, n);
	}
	return any;
}

static void
check_conn(struct harness *h)
{
	struct tcp_conn_info i;
	int rc;

	if (h->c == NULL)
		return;
	rc = tcp_conn_check(h->c);
	if (rc != 0) {
		fprintf(stderr, "tcp_conn_check: %d\n", rc);
		abort();
	}
	tcp_conn_get_info(h->c, &i);
	CHECK(i.rcv_queued <= RCV_BUF);
	CHECK(i.rcv_mem <= h->rcv_mem);
	CHECK(i.snd_queued <= SND_BUF);
	CHECK(tcp_seq_le(i.snd_una, i.snd_nxt));
	/* One connection's offer: at most a window it could announce. */
	CHECK(tcp_engine_rcv_offered(h->e) <= RTE_MAX(RCV_BUF, 65535u));
	h->rcv_nxt = i.rcv_nxt;
	h->snd_una = i.snd_una;
}

/* Build one segment from the peer, parsed (NULL if it cannot be). */
static struct rte_mbuf *
build(struct harness *h, const struct tcp_seg_out *o, const uint8_t *payload,
      uint32_t len, uint8_t mangle)
{
	struct rte_mbuf *src = NULL, *m;

	if (len > 0) {
		uint8_t *d;

		src = rte_pktmbuf_alloc(src_pool);
		CHECK(src != NULL);
		d = (uint8_t *)rte_pktmbuf_append(src, (uint16_t)len);
		CHECK(d != NULL);
		for (uint32_t k = 0; k < len; k++)
			d[k] = payload != NULL ? payload[k % 4] : (uint8_t)k;
	}
	m = tcp_seg_build(pool, &h->peer, o, src, 0, len);
	rte_pktmbuf_free(src);
	if (m == NULL)
		return NULL;
	if (mangle & 0x40) {
		/* a bad TCP checksum */
		uint32_t at = 14 + (h->peer.family == 4 ? 20 : 40) + 16;

		rte_pktmbuf_mtod_offset(m, uint8_t *, at)[0] ^= 0x5a;
	}
	if ((mangle & 0x80) && h->peer.family == 4) {
		/* an IPv4 first fragment: MF set, the rest of the datagram
		 * elsewhere */
		rte_pktmbuf_mtod_offset(m, uint8_t *, 14)[6] |= 0x20;
	}
	(void)pkt_parse(m, pkt_meta(m), 0);
	if ((mangle & 0x80) && h->peer.family == 6)
		pkt_meta(m)->flags |= PKT_F_FRAGMENT; /* as a fragment header says */
	return m;
}

/* One frame that no run took: as the proxy does, what no connection
 * takes may be a leftover of one that ended by a reset. */
static void
input_one(struct harness *h, struct rte_mbuf *m)
{
	if (tcp_input(h->e, m, h->now) != TCP_INPUT_CONSUMED &&
	    tcp_input_after_reset(h->e, m, h->now) != TCP_INPUT_CONSUMED) {
		(void)tcp_reply_rst(h->e, m, h->now);
		rte_pktmbuf_free(m);
	}
}

/* Build and feed one segment from the peer. */
static void
feed(struct harness *h, const struct tcp_seg_out *o, const uint8_t *payload,
     uint32_t len, uint8_t mangle)
{
	struct rte_mbuf *m = build(h, o, payload, len, mangle);

	if (m != NULL)
		input_one(h, m);
}

/* Feed n frames as one input burst, in runs of one connection
 * (tcp_input_conn_run(), as the proxy feeds them). */
static void
feed_burst(struct harness *h, struct rte_mbuf **pk, uint16_t n)
{
	uint16_t j = 0;

	tcp_input_burst_begin(h->e);
	while (j < n) {
		struct tcp_conn *c = tcp_conn_lookup(h->e, pk[j]);
		uint16_t t = c != NULL ? tcp_input_conn_run(h->e, c, pk + j, n - j, h->now) : 0;

		CHECK(t <= n - j);
		if (t == 0) {
			input_one(h, pk[j]);
			t = 1;
		}
		j += t;
	}
	tcp_input_burst_end(h->e, h->now);
}

static void
app(struct harness *h, uint8_t op)
{
	static const uint8_t bytes[12000];
	uint8_t buf[3000];
	struct rte_mbuf *m;

	if (h->c == NULL)
		return;
	switch (op % 10) {
	case 1:
	case 2:
		(void)tcp_recv(h->c, buf, (uint32_t)(op >> 4) * 200, h->now);
		break;
	case 3:
		m = tcp_recv_mbuf(h->c, (uint32_t)(op >> 4) * 1000, h->now);
		rte_pktmbuf_free(m);
		break;
	case 4:
	case 5:
		(void)tcp_send(h->c, bytes, (uint32_t)(op >> 4) * 700 + 1, h->now);
		break;
	case 6:
		(void)tcp_shutdown(h->c, h->now);
		break;
	case 7:
		if ((op >> 4) == 0xf)
			tcp_abort(h->c, h->now);
		break;
	case 8:
		h->hook_space = (uint32_t)(op >> 4) * 4;
		tcp_conn_set_hooks(h->c, &fuzz_hooks, h);
		tcp_conn_keep_segments(h->c, true);
		break;
	case 9: {
		struct tcp_conn_info i;
		uint32_t seq;

		tcp_conn_get_info(h->c, &i);
		m = tcp_recv_seg(h->c, &seq, h->now);
		if (m != NULL) {
			/* The first queued byte, RCV.NXT less what is queued
			 * (and the peer's FIN, which counts one). */
			CHECK(seq + i.rcv_queued == i.rcv_nxt ||
			      seq + i.rcv_queued + 1 == i.rcv_nxt);
			CHECK(m->nb_segs == 1 && m->pkt_len == m->data_len);
			rte_pktmbuf_free(m);
		}
		break;
	}
	case 0:
		/* The receive pool: set one of 0-21,000 bytes, or take back
		 * the window of a connection idle for 0 or 100 ms. */
		if (op & 0x10)
			(void)tcp_engine_reclaim_idle(h->e, h->now, (op & 0x20) ? 100000000ull : 0, 4);
		else
			tcp_engine_set_rcv_pool(h->e, (uint64_t)(op >> 5) * 3000);
		break;
	default:
		break;
	}
}

/* The peer's SYN options, per the configuration byte. */
static uint8_t
syn_opts(uint8_t cfg)
{
	uint8_t o = TCP_SO_MSS | TCP_SO_WS | TCP_SO_SACK_PERM | TCP_SO_TS;

	if (cfg & CFG_NO_SACK)
		o &= (uint8_t)~TCP_SO_SACK_PERM;
	if (cfg & CFG_NO_TS)
		o &= (uint8_t)~TCP_SO_TS;
	if (cfg & CFG_NO_WS)
		o &= (uint8_t)~TCP_SO_WS;
	return o;
}

/* The peer opens, the engine (listening) answers. */
static int
handshake_passive(struct harness *h, uint8_t cfg)
{
	struct tcp_seg_out o = { 0 };
	struct tcp_seg_in synack = { 0 };

	o.seq = 1000;
	o.flags = TCP_FL_SYN;
	o.wnd = 65535;
	o.opts = syn_opts(cfg);
	o.mss = (cfg & CFG_SMALL_MSS) ? 536 : 1460;
	o.ws = 7;
	o.tsval = h->tsval;
	feed(h, &o, NULL, 0, 0);
	if (!drain(h, &synack) || synack.flags != (TCP_FL_SYN | TCP_FL_ACK))
		return -1;
	h->now += 1000000;
	memset(&o, 0, sizeof(o));
	o.seq = 1001;
	o.ack = synack.seq + 1;
	o.flags = TCP_FL_ACK;
	o.wnd = 1024;
	if (synack.opts & TCP_SO_TS) {
		o.opts = TCP_SO_TS;
		o.tsval = ++h->tsval;
		o.tsecr = synack.tsval;
	}
	feed(h, &o, NULL, 0, 0);
	drain(h, NULL);
	return h->c != NULL ? 0 : -1;
}

/* The engine opens (tcp_connect()), the peer answers. */
static int
handshake_active(struct harness *h, uint8_t cfg)
{
	struct tcp_seg_out o = { 0 };
	struct tcp_seg_in syn = { 0 };
	struct tcp_endpoints ep = h->peer;

	memcpy(ep.laddr, h->peer.raddr, 16);
	memcpy(ep.raddr, h->peer.laddr, 16);
	ep.lport = h->peer.rport;
	ep.rport = h->peer.lport;
	ep.lmac = h->peer.rmac;
	ep.rmac = h->peer.lmac;
	if (tcp_connect(h->e, &ep, h, h->now) == NULL)
		return -1;
	if (!drain(h, &syn) || syn.flags != TCP_FL_SYN)
		return -1;
	h->now += 1000000;
	o.seq = 5000;
	o.ack = syn.seq + 1;
	o.flags = TCP_FL_SYN | TCP_FL_ACK;
	o.wnd = 65535;
	o.opts = syn_opts(cfg) & syn.opts;
	o.mss = (cfg & CFG_SMALL_MSS) ? 536 : 1460;
	o.ws = 7;
	o.tsval = h->tsval;
	o.tsecr = syn.tsval;
	feed(h, &o, NULL, 0, 0);
	drain(h, NULL);
	return h->c != NULL ? 0 : -1;
}

static inline uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t ma[6] = { 2, 0, 0, 0, 0, 0xa }, mb[6] = { 2, 0, 0, 0, 0, 0xb };
	struct tcp_engine_params p;
	struct harness h;
	struct rte_mbuf *burst[16];
	uint32_t burst_end;
	uint16_t nb;
	uint8_t cfg;

	if (size < 1 || size > REC * 4000)
		return 0;
	cfg = data[0];
	data++;
	size--;
	memset(&h, 0, sizeof(h));
	tcp_engine_params_init(&p);
	p.name = "fz";
	/* A small pool runs dry: allocation failures everywhere, and a
	 * receive side that must prune instead of collapsing. */
	p.pool = (cfg & CFG_SMALL_POOL) ? small_pool : pool;
	p.cb = on_event;
	p.cb_arg = &h;
	p.max_conns = 4;
	p.snd_buf = SND_BUF;
	p.rcv_buf = RCV_BUF;
	p.txq_size = 256;
	p.timer_slots = 256;
	p.reset_memory = 4; /* one set: full at the fifth reset */
	if (cfg & CFG_NEWRENO)
		p.cc = TCP_CC_NEWRENO;
	h.rcv_mem = RTE_MAX(2u * RCV_BUF, RCV_BUF + 10u * RTE_MBUF_DEFAULT_BUF_SIZE);
	h.e = tcp_engine_create(&p);
	CHECK(h.e != NULL);
	tcp_listen(h.e, 80, true);
	h.now = 1000000000ull;
	h.tsval = 1;
	if (cfg & CFG_IPV6) {
		static const uint8_t a[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
		static const uint8_t b[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 2 };

		h.peer.family = 6;
		memcpy(h.peer.laddr, a, 16);
		memcpy(h.peer.raddr, b, 16);
	} else {
		h.peer.family = 4;
		h.peer.laddr[0] = 198; h.peer.laddr[1] = 18; h.peer.laddr[3] = 1;
		h.peer.raddr[0] = 198; h.peer.raddr[1] = 19; h.peer.raddr[3] = 2;
	}
	h.peer.lport = 40000;
	h.peer.rport = 80;
	memcpy(&h.peer.lmac, ma, 6);
	memcpy(&h.peer.rmac, mb, 6);
	if (((cfg & CFG_ACTIVE) ? handshake_active(&h, cfg) : handshake_passive(&h, cfg)) != 0)
		abort();
	check_conn(&h);
	nb = 0;
	burst_end = 0;

	for (size_t off = 0; off + REC <= size; off += REC) {
		const uint8_t *r = data + off;
		struct tcp_seg_out o = { 0 };
		int32_t dseq = (int16_t)rd16(r + 2), dack = (int16_t)rd16(r + 4);
		uint32_t len = rd16(r + 6) % 1461;
		uint8_t xo[4];

		if (r[1] & 0x08)
			dseq *= 65536;
		if (r[1] & 0x10)
			dack *= 65536;
		o.flags = r[0] & 0x3f;
		/* In a burst, after the first: from the end of the one
		 * before, so that in-order runs are easy to make. */
		o.seq = (nb > 0 ? burst_end : h.rcv_nxt) + (uint32_t)dseq;
		o.ack = h.snd_una + (uint32_t)dack;
		o.wnd = rd16(r + 8);
		h.tsval += (uint32_t)(int8_t)r[11];
		if (r[1] & 0x01) {
			o.opts |= TCP_SO_TS;
			o.tsval = h.tsval;
			o.tsecr = (uint32_t)(h.now / 1000000);
		}
		if (r[1] & 0x02) {
			o.opts |= TCP_SO_SACK;
			o.nsack = (uint8_t)(1 + (r[12] & 1));
			for (unsigned int b = 0; b < o.nsack; b++) {
				o.sack[b].left = h.snd_una + (uint32_t)(int8_t)r[13 + b] * 100;
				o.sack[b].right = o.sack[b].left + (uint32_t)r[14] * 20;
			}
		} else if (r[1] & 0x04) {
			memcpy(xo, r + 12, 4);
			o.xopt = xo;
			o.xopt_len = 4;
		}
		if ((r[1] & 0x40) || nb > 0) {
			/* 0x40: this segment and the next go in one input
			 * burst (up to 16); the burst is fed at the first
			 * record without it. */
			struct rte_mbuf *m = build(&h, &o, (r[1] & 0x20) ? r + 12 : NULL,
						   len, r[0]);

			if (m != NULL) {
				burst[nb++] = m;
				burst_end = o.seq + len;
			}
			if ((r[1] & 0x40) && nb < 16 && off + 2 * REC <= size)
				continue;
			feed_burst(&h, burst, nb);
			nb = 0;
		} else {
			feed(&h, &o, (r[1] & 0x20) ? r + 12 : NULL, len, r[0]);
		}
		drain(&h, NULL);
		check_conn(&h);
		app(&h, r[16]);
		drain(&h, NULL);
		check_conn(&h);
		h.now += (r[10] & 0x80) ? (uint64_t)(r[10] & 0x7f) * 100000000ull :
					  (uint64_t)r[10] * 1000000ull;
		tcp_timers_run(h.e, h.now);
		drain(&h, NULL);
		check_conn(&h);
	}
	for (unsigned int k = 0; k < TCP_CNT_MAX; k++)
		totals[k] += tcp_engine_counters(h.e)[k];
	/* With no connection left, no window is counted. */
	if (tcp_engine_conn_count(h.e) == 0)
		CHECK(tcp_engine_rcv_offered(h.e) == 0);
	tcp_engine_free(h.e);
	/* Every mbuf the engine took or made is back. */
	CHECK(rte_mempool_in_use_count(pool) == 0);
	CHECK(rte_mempool_in_use_count(small_pool) == 0);
	CHECK(rte_mempool_in_use_count(src_pool) == 0);
	return 0;
}
