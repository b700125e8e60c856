/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for lib/mptcp_proxy's MPTCP connection level: the
 * harness plays an MPTCP client against the proxy P, which terminates it
 * and speaks plain TCP to a lib/tcp server engine S:
 *
 *   harness (198.18.0.1 and .3) --port 0-- P --port 1-- S 198.18.1.2:80
 *
 * A fixed handshake opens the first subflow (MP_CAPABLE v1, both keys
 * on the third ACK); then every record of the input is one segment on
 * subflow 0 or 1 (opened by MP_JOIN on demand), with arbitrary DSS
 * (DATA_ACK, mapping, DATA_FIN, 32- or 64-bit), MP_CAPABLE, MP_JOIN,
 * ADD_ADDR, REMOVE_ADDR, MP_PRIO, MP_FASTCLOSE, MP_FAIL, MP_TCPRST or
 * raw option bytes, sequence numbers near the subflow's or far from
 * them, payload lengths, FIN and RST, the server sending, closing or
 * aborting, and a virtual clock that steps up to 12.7 s.
 *
 * The payload is a function of the data sequence number: subflow k's
 * byte at relative sequence x is stream byte x - 1 + shift_k, so every
 * mapping whose DSN - subflow sequence equals that (a consistent one)
 * agrees with every other. The target aborts when
 *   - a frame P sends does not parse with a good checksum;
 *   - while every mapping sent was consistent (no other DSN offset and
 *     no infinite mapping), a byte S receives differs from the stream
 *     byte at its position: what reaches the server must be a prefix
 *     of the stream the client mapped;
 *   - P sent a data segment without the DSS mapping of its bytes
 *     (mptcp_segments_sent_without_mapping);
 *   - after teardown any mbuf of the pool is still in use.
 *
 * With configuration bit 0x08 there are two workers, as with RSS: P
 * (worker 0) owns the connection, and subflow 1's frames from the client
 * reach P2 (worker 1), which hands them over to P through its redirect
 * table (a hand-over ring of HANDED_MAX frames, full when the harness
 * has not drained it: the decline path, which 0x20 makes common by
 * draining it at one pump in 16). With 0x10 both remember reset
 * connections for 5 s (reset_memory_ns), so a subflow the client reset
 * stays in P2's table and its later frames meet P's memory.
 *
 * Input: one configuration byte (0x01: shut the proxy down before
 * freeing it; 0x02: 32-bit DSNs by default; 0x04: the client asks for
 * DSS checksums, and its mappings carry the checksum of the stream bytes
 * they name, spoiled by bit 0 of byte 15; 0x08, 0x10 and 0x20 above;
 * 0x40: the client's segments of records that advance no clock reach P
 * together, as one input burst of up to 32 frames, so that lib/tcp
 * reads a subflow's in-order ones as runs and the subflow merges their
 * DSS mappings), then records of REC bytes:
 *   0     op (low 3 bits): 0, 1 data, 2 pure ACK, 3 join step or path
 *         option, 4 other option, 5 RST, 6 server action, 7 clock;
 *         0x08 subflow 1; 0x10 FIN; 0x20 ack off by byte 10;
 *         0x40 seq delta x 1024; 0x80 flip the 32/64-bit DSN choice
 *   1     DSS flags (A a M m F), 0x20 no DSS at all, 0x40 DSN off by
 *         bytes 4-5 (inconsistent), 0x80 infinite mapping (length 0)
 *   2-3   mapping start - segment start, signed
 *   4-5   mapping length (mod 8192), or the DSN offset with 0x40
 *   6-7   payload length (mod 1400)
 *   8-9   seq - the subflow's next new sequence, signed
 *   10    ack delta, signed
 *   11    clock step: n ms, or (n & 0x7f) x 100 ms with 0x80
 *   12-15 per op: option choice and its fields
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "../../test_eal.h"
#include "pkt.h"
#include "tcp.h"
#include "tcp_seg.h"
#include "mptcp_crypto.h"
#include "mptcp_proxy.h"

#define REC 16
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "check failed: %s (line %d)\n", #c, __LINE__); abort(); } } while (0)
#define MS(x) ((uint64_t)(x) * 1000000ull)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct rte_mempool *pool;

struct hsf {
	int open, estab, dead;
	uint16_t port;
	uint8_t addr; /* last byte of 198.18.0.x */
	uint32_t iss, irs;
	uint32_t nxt_rel;    /* next new relative sequence we send */
	uint32_t p_max;      /* highest sequence P sent, +1 */
	int have_irs;
	int64_t shift;       /* stream position of relative sequence 1 */
	uint32_t nonce, p_nonce;
};

#define HANDED_MAX 8

struct harness {
	struct mptcp_proxy *px;
	struct mptcp_proxy *px2;  /* worker 1 (configuration 0x08), or NULL */
	struct rte_mbuf *handed[HANDED_MAX]; /* P2's hand-over ring to P */
	uint16_t nhanded;
	int hold;           /* configuration 0x20 */
	int batching;       /* configuration 0x40, while a record sends */
	uint16_t nb;        /* the client's frames waiting for P */
	struct rte_mbuf *b[32];
	unsigned pumps;
	struct tcp_engine *s;
	struct tcp_conn *sc;
	uint64_t now;
	uint64_t key, key_p, base; /* our key, P's key, our IDSN + 1 */
	uint32_t token_p;
	int got_key;
	int consistent;
	int csum;           /* DSS checksums asked for (configuration 0x04) */
	uint64_t data_hi;   /* highest DSN P mapped, + len */
	uint64_t s_pos;     /* bytes S received */
	struct hsf sf[2];
};

static struct harness H;
static uint64_t emitted; /* frames P sent, for pump() */

static inline uint8_t
g(uint64_t pos)
{
	return (uint8_t)((pos * 2654435761u) >> 13);
}

static void
s_event(struct tcp_conn *c, void *arg, uint32_t ev, uint64_t now)
{
	uint8_t buf[4096];
	uint32_t n;

	(void)arg;
	if (ev & TCP_EV_CONNECTED)
		H.sc = c;
	if (ev & TCP_EV_READABLE) {
		while ((n = tcp_recv(c, buf, sizeof(buf), now)) > 0) {
			for (uint32_t k = 0; k < n; k++)
				if (H.consistent && buf[k] != g(H.s_pos + k)) {
					fprintf(stderr, "byte %llu reached the server wrong\n",
						(unsigned long long)(H.s_pos + k));
					abort();
				}
			H.s_pos += n;
		}
	}
	if ((ev & TCP_EV_CLOSED) && H.sc == c)
		H.sc = NULL;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (test_eal_start("fuzz_mptcp_mapping", 256) < 0)
		abort();
	pool = rte_pktmbuf_pool_create("fz_mptcp", 4095, 0, PKT_META_PRIV_SIZE,
				       RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	CHECK(pool != NULL);
	return 0;
}

static inline uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static inline uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

/* A frame P sends toward the client: check it, learn from it, free it. */
static void
to_client(struct rte_mbuf *m)
{
	const struct pkt_meta *pm;
	const uint8_t *th;
	struct tcp_seg_in si;
	struct mptcp_opts o;
	struct hsf *f;
	uint32_t hlen, seq, end;
	int k;

	CHECK(pkt_parse(m, pkt_meta(m), 0) == PKT_ERR_NONE);
	pm = pkt_meta(m);
	CHECK(tcp_seg_parse(m, pm, &si, 1) == 0);
	th = rte_pktmbuf_mtod_offset(m, const uint8_t *, pm->l4_off);
	k = pm->dport == H.sf[1].port && H.sf[1].open ? 1 : 0;
	f = &H.sf[k];
	hlen = (uint32_t)(th[12] >> 4) * 4;
	seq = rd32(th + 4);
	if ((th[13] & (TCP_FL_SYN | TCP_FL_ACK)) == (TCP_FL_SYN | TCP_FL_ACK) && !f->have_irs) {
		f->irs = seq;
		f->have_irs = 1;
		f->p_max = seq + 1;
	}
	(void)mptcp_opts_parse(th + 20, hlen - 20, th[13], &o, NULL);
	if ((o.present & (1u << MPTCP_SUB_MP_CAPABLE)) && o.mpc.u.mpc.form == MPTCP_FORM_SYNACK &&
	    k == 0 && !H.got_key) {
		H.key_p = o.mpc.u.mpc.key_snd;
		mptcp_key_token_idsn(H.key_p, &H.token_p, &(uint64_t){ 0 });
		H.got_key = 1;
	}
	if ((o.present & (1u << MPTCP_SUB_MP_JOIN)) && o.join.u.join.form == MPTCP_FORM_SYNACK)
		f->p_nonce = o.join.u.join.nonce;
	if ((o.present & (1u << MPTCP_SUB_DSS)) && (o.dss.u.dss.flags & MPTCP_DSS_MAP) &&
	    (o.dss.u.dss.flags & MPTCP_DSS_DSN64)) {
		uint64_t e = o.dss.u.dss.dsn + o.dss.u.dss.data_len;

		if (e > H.data_hi)
			H.data_hi = e;
	}
	if (f->have_irs) {
		end = seq + si.len + ((th[13] & TCP_FL_FIN) ? 1 : 0);
		if ((int32_t)(end - f->p_max) > 0)
			f->p_max = end;
	}
	if (th[13] & TCP_FL_RST)
		f->dead = 1;
	if (getenv("FUZZ_MPTCP_MAPPING_TRACE") != NULL)
		fprintf(stderr, "  P>sf%d rel=%u len=%u fl=%02x ack=%u mptcp=%04x map=%u+%u\n", k,
			seq - f->irs, si.len, th[13], rd32(th + 8) - f->iss, o.present,
			(o.dss.u.dss.flags & MPTCP_DSS_MAP) ? o.dss.u.dss.ssn : 0,
			(o.dss.u.dss.flags & MPTCP_DSS_MAP) ? o.dss.u.dss.data_len : 0);
	rte_pktmbuf_free(m);
}

static void
p_emit(void *arg, struct rte_mbuf **pk, uint16_t n)
{
	(void)arg;
	emitted += n;
	for (uint16_t i = 0; i < n; i++) {
		if (pk[i]->port == 0) {
			to_client(pk[i]);
			continue;
		}
		CHECK(pkt_parse(pk[i], pkt_meta(pk[i]), 0) == PKT_ERR_NONE);
		if (tcp_input(H.s, pk[i], H.now) != TCP_INPUT_CONSUMED) {
			(void)tcp_reply_rst(H.s, pk[i], H.now);
			rte_pktmbuf_free(pk[i]);
		}
	}
}

/* P2's hand-over to its owner: a ring of HANDED_MAX frames. */
static int
handover(void *arg, struct rte_mbuf *m, uint16_t to)
{
	(void)arg;
	CHECK(to == 0); /* P2 owns no connection of the harness */
	if (H.nhanded == HANDED_MAX)
		return -1;
	H.handed[H.nhanded++] = m;
	return 0;
}

/* P takes what P2 handed it; what no connection takes would go on to S
 * as bridged. */
static int
take_handed(void)
{
	uint16_t n = H.nhanded, keep;

	if (n == 0)
		return 0;
	H.nhanded = 0;
	keep = mptcp_proxy_input_handed(H.px, H.handed, n, H.now);
	for (uint16_t i = 0; i < keep; i++)
		rte_pktmbuf_free(H.handed[i]);
	return 1;
}

/* Move frames between P and S until nothing moves. */
static void
pump(void)
{
	for (int round = 0; round < 64; round++) {
		struct rte_mbuf *pk[32];
		uint16_t n, keep;
		uint64_t before = emitted;
		/* With 0x20, P drains the ring at one pump in 16: it
		 * fills, and P2 keeps what it cannot hand over. */
		int moved = H.hold && (++H.pumps & 15) != 0 ? 0 : take_handed();

		while ((n = tcp_tx_burst(H.s, pk, 32)) > 0) {
			moved = 1;
			for (uint16_t i = 0; i < n; i++) {
				pk[i]->port = 1;
				CHECK(pkt_parse(pk[i], pkt_meta(pk[i]), 1) == PKT_ERR_NONE);
			}
			keep = mptcp_proxy_input_burst(H.px, pk, n, false, 0, H.now);
			for (uint16_t i = 0; i < keep; i++)
				rte_pktmbuf_free(pk[i]); /* would cross to the client */
		}
		mptcp_proxy_poll(H.px, H.now, p_emit, NULL);
		if (H.px2 != NULL)
			mptcp_proxy_poll(H.px2, H.now, p_emit, NULL);
		if (!moved && emitted == before)
			break;
	}
}

/* The client's waiting frames reach P as one burst. */
static void
flush_burst(void)
{
	uint16_t keep;

	if (H.nb == 0)
		return;
	keep = mptcp_proxy_input_burst(H.px, H.b, H.nb, true, 1, H.now);
	for (uint16_t i = 0; i < keep; i++)
		rte_pktmbuf_free(H.b[i]); /* passed: would cross to S untouched */
	H.nb = 0;
	pump();
}

/* Send one segment from the client's subflow k to P. */
static void
send_seg(int k, uint32_t rel, uint32_t ack, uint8_t flags, const uint8_t *opt,
	 uint32_t optlen, uint32_t len)
{
	static const uint8_t ma[6] = { 2, 0, 0, 0, 0, 0xa }, mb[6] = { 2, 0, 0, 0, 0, 0xb };
	struct hsf *f = &H.sf[k];
	struct tcp_endpoints ep;
	struct tcp_seg_out o;
	struct rte_mbuf *src = NULL, *m;

	memset(&ep, 0, sizeof(ep));
	ep.family = 4;
	ep.laddr[0] = 198; ep.laddr[1] = 18; ep.laddr[3] = f->addr;
	ep.raddr[0] = 198; ep.raddr[1] = 18; ep.raddr[2] = 1; ep.raddr[3] = 2;
	ep.lport = f->port;
	ep.rport = 80;
	memcpy(&ep.lmac, ma, 6);
	memcpy(&ep.rmac, mb, 6);
	memset(&o, 0, sizeof(o));
	o.seq = f->iss + rel;
	o.ack = ack;
	o.flags = flags;
	o.wnd = 65535;
	if (flags & TCP_FL_SYN) {
		o.opts = TCP_SO_MSS;
		o.mss = 1460;
	}
	o.xopt = opt;
	o.xopt_len = (uint8_t)optlen;
	if (len > 0) {
		uint8_t *d;

		src = rte_pktmbuf_alloc(pool);
		if (src == NULL)
			return;
		d = (uint8_t *)rte_pktmbuf_append(src, (uint16_t)len);
		CHECK(d != NULL);
		for (uint32_t i = 0; i < len; i++)
			d[i] = g((uint64_t)(f->shift + (int64_t)(rel + i) - 1));
	}
	if (getenv("FUZZ_MPTCP_MAPPING_TRACE") != NULL) {
		struct mptcp_opts mo;

		(void)mptcp_opts_parse(opt, optlen, flags, &mo, NULL);
		fprintf(stderr, "sf%d rel=%u len=%u fl=%02x mptcp=%04x", k, rel, len, flags,
			mo.present);
		if (mo.present & (1u << MPTCP_SUB_DSS))
			fprintf(stderr, " dss=%02x dsn=%llu ssn=%u dlen=%u ack=%llu",
				mo.dss.u.dss.flags,
				(unsigned long long)(mo.dss.u.dss.dsn - ((mo.dss.u.dss.flags & MPTCP_DSS_DSN64) ? H.base : (uint32_t)H.base)),
				mo.dss.u.dss.ssn, mo.dss.u.dss.data_len,
				(unsigned long long)mo.dss.u.dss.data_ack);
		fprintf(stderr, " consistent=%d\n", H.consistent);
	}
	m = tcp_seg_build(pool, &ep, &o, src, 0, len);
	rte_pktmbuf_free(src);
	if (m == NULL)
		return;
	m->port = 0;
	CHECK(pkt_parse(m, pkt_meta(m), 0) == PKT_ERR_NONE);
	if (H.batching && !(k == 1 && H.px2 != NULL)) {
		if (H.nb == RTE_DIM(H.b))
			flush_burst();
		H.b[H.nb++] = m;
		return;
	}
	/* Subflow 1's frames land on worker 1 when there is one. */
	if (mptcp_proxy_input_burst(k == 1 && H.px2 != NULL ? H.px2 : H.px, &m, 1,
				    true, 1, H.now) == 1)
		rte_pktmbuf_free(m); /* passed: would cross to S untouched */
	pump();
}

static uint32_t
put(const struct mptcp_opt *o, uint8_t *buf, uint32_t room)
{
	int n = mptcp_opt_write(o, buf, room);

	return n > 0 ? (uint32_t)n : 0;
}

/* The options of record r for a segment of subflow k starting at rel
 * with len bytes: a DSS, or another option. */
static uint32_t
build_opts(const uint8_t *r, int k, uint32_t rel, uint32_t len, int dsn32, uint8_t *buf)
{
	struct hsf *f = &H.sf[k];
	struct mptcp_opt o;
	uint8_t op = r[0] & 7;

	memset(&o, 0, sizeof(o));
	if (op == 4) {
		switch (r[12] % 9) {
		case 0: /* MP_CAPABLE, ACK or DATA form */
			o.sub = MPTCP_SUB_MP_CAPABLE;
			o.u.mpc.form = (r[13] & 1) ? MPTCP_FORM_DATA : MPTCP_FORM_ACK;
			o.u.mpc.version = MPTCP_VERSION_1;
			o.u.mpc.flags = MPTCP_MPC_FLAG_H;
			o.u.mpc.key_snd = (r[13] & 2) ? H.key ^ 1 : H.key;
			o.u.mpc.key_rcv = (r[13] & 4) ? H.key_p ^ 1 : H.key_p;
			o.u.mpc.data_len = (uint16_t)(rd16(r + 4) % 8192);
			o.u.mpc.has_csum = H.csum && o.u.mpc.form == MPTCP_FORM_DATA;
			o.u.mpc.csum = rd16(r + 14);
			break;
		case 1:
			o.sub = MPTCP_SUB_REMOVE_ADDR;
			o.u.rm_addr.n = 1;
			o.u.rm_addr.ids[0] = r[13] % 3;
			break;
		case 2:
			o.sub = MPTCP_SUB_MP_PRIO;
			o.u.prio.backup = r[13] & 1;
			o.u.prio.has_addr_id = (r[13] & 2) != 0;
			o.u.prio.addr_id = (r[13] >> 2) % 3;
			break;
		case 3:
			o.sub = MPTCP_SUB_ADD_ADDR;
			o.u.add_addr.echo = true;
			o.u.add_addr.addr_id = r[13];
			o.u.add_addr.addr[0] = 198;
			o.u.add_addr.addr[1] = 18;
			o.u.add_addr.addr[3] = 9;
			break;
		case 4:
			o.sub = MPTCP_SUB_MP_FASTCLOSE;
			o.u.fastclose.key_rcv = (r[13] & 1) ? H.key_p : H.key_p + 1;
			break;
		case 5:
			o.sub = MPTCP_SUB_MP_FAIL;
			o.u.fail.dsn = H.base + r[13];
			break;
		case 6:
			o.sub = MPTCP_SUB_MP_TCPRST;
			o.u.tcprst.reason = r[13] % 8;
			break;
		case 7: /* MP_JOIN third ACK form, right or wrong */
			if (k == 1) {
				uint8_t h[MPTCP_HMAC_LEN];

				mptcp_join_hmac(H.key, H.key_p, f->nonce, f->p_nonce, h);
				h[0] ^= (uint8_t)(r[13] & 1);
				o.sub = MPTCP_SUB_MP_JOIN;
				o.u.join.form = MPTCP_FORM_ACK;
				memcpy(o.u.join.hmac, h, MPTCP_JOIN_ACK_HMAC_LEN);
				break;
			}
			/* fall through */
		default: /* raw bytes */
			memcpy(buf, r + 12, 4);
			return 4;
		}
		return put(&o, buf, 40);
	}
	if (r[1] & 0x20)
		return 0;
	o.sub = MPTCP_SUB_DSS;
	o.u.dss.flags = r[1] & MPTCP_DSS_FLAGS;
	if (dsn32)
		o.u.dss.flags &= (uint8_t)~MPTCP_DSS_DSN64;
	else if (o.u.dss.flags & MPTCP_DSS_MAP)
		o.u.dss.flags |= MPTCP_DSS_DSN64;
	o.u.dss.data_ack = H.data_hi + (uint64_t)(int64_t)(int8_t)r[10];
	if (!(o.u.dss.flags & MPTCP_DSS_ACK64))
		o.u.dss.data_ack &= 0xffffffffu;
	if (o.u.dss.flags & MPTCP_DSS_MAP) {
		uint32_t start = rel + (uint32_t)(int32_t)(int16_t)rd16(r + 2);
		uint64_t dsn = H.base + (uint64_t)(f->shift + (int64_t)start - 1);

		if (r[1] & 0x80) {
			o.u.dss.data_len = 0; /* infinite: the peer falls back */
			H.consistent = 0;
		} else {
			o.u.dss.data_len = (uint16_t)(rd16(r + 4) % 8192);
			if (o.u.dss.data_len == 0)
				H.consistent = 0; /* infinite too */
			if (r[1] & 0x40) {
				dsn += rd16(r + 4) | 1u;
				H.consistent = 0;
			}
		}
		if ((o.u.dss.flags & MPTCP_DSS_DATA_FIN) && o.u.dss.data_len == 0)
			o.u.dss.data_len = 1;
		o.u.dss.dsn = dsn32 ? (uint32_t)dsn : dsn;
		o.u.dss.ssn = start;
		if (H.csum) {
			/* The checksum of the stream bytes the mapping names
			 * (right for a consistent one); byte 15 bit 0 spoils
			 * it (a middlebox changed the data). */
			struct mptcp_csum cs;
			uint32_t n = o.u.dss.data_len;

			if ((o.u.dss.flags & MPTCP_DSS_DATA_FIN) && n > 0)
				n--;
			mptcp_dss_csum_start(&cs, dsn, start, o.u.dss.data_len);
			for (uint32_t i = 0; i < n; i++) {
				uint8_t b = g(dsn - H.base + i);

				mptcp_dss_csum_add(&cs, &b, 1);
			}
			o.u.dss.has_csum = true;
			o.u.dss.csum = (uint16_t)(mptcp_dss_csum_final(&cs) ^ (r[15] & 1));
		}
		(void)len;
	} else {
		o.u.dss.flags &= (uint8_t)~(MPTCP_DSS_DSN64 | MPTCP_DSS_DATA_FIN);
	}
	return put(&o, buf, 40);
}

static int
handshake(void)
{
	const uint8_t mpc_syn[4] = { 30, 4, 0x01, (uint8_t)(H.csum ? 0x81 : 0x01) };
	struct mptcp_opt o;
	uint8_t buf[40];
	struct hsf *f = &H.sf[0];

	f->open = 1;
	f->addr = 1;
	f->port = 40000;
	f->iss = 1000;
	f->nxt_rel = 1;
	f->shift = 0;
	send_seg(0, 0, 0, TCP_FL_SYN, mpc_syn, sizeof(mpc_syn), 0);
	if (!H.got_key || !f->have_irs)
		return -1;
	memset(&o, 0, sizeof(o));
	o.sub = MPTCP_SUB_MP_CAPABLE;
	o.u.mpc.form = MPTCP_FORM_ACK;
	o.u.mpc.version = MPTCP_VERSION_1;
	o.u.mpc.flags = MPTCP_MPC_FLAG_H;
	o.u.mpc.key_snd = H.key;
	o.u.mpc.key_rcv = H.key_p;
	send_seg(0, 1, f->p_max, TCP_FL_ACK, buf, put(&o, buf, sizeof(buf)), 0);
	f->estab = 1;
	return 0;
}

static void
join_step(const uint8_t *r)
{
	struct hsf *f = &H.sf[1];
	struct mptcp_opt o;
	uint8_t buf[40];

	memset(&o, 0, sizeof(o));
	if (!f->open || f->dead) {
		/* A new join SYN (another port each time). */
		uint16_t port = (uint16_t)(f->port ? f->port + 1 : 41000);

		memset(f, 0, sizeof(*f));
		f->open = 1;
		f->addr = 3;
		f->port = port;
		f->iss = 7000000u * port;
		f->nxt_rel = 1;
		f->shift = (int64_t)rd16(r + 12) - 1000;
		f->nonce = rd32(r + 12);
		o.sub = MPTCP_SUB_MP_JOIN;
		o.u.join.form = MPTCP_FORM_SYN;
		o.u.join.backup = r[14] & 1;
		o.u.join.addr_id = r[15] % 3;
		o.u.join.token = (r[14] & 2) ? H.token_p ^ 0x100 : H.token_p;
		o.u.join.nonce = f->nonce;
		send_seg(1, 0, 0, TCP_FL_SYN, buf, put(&o, buf, sizeof(buf)), 0);
		return;
	}
	if (!f->estab && f->have_irs) {
		uint8_t h[MPTCP_HMAC_LEN];

		mptcp_join_hmac(H.key, H.key_p, f->nonce, f->p_nonce, h);
		if (r[14] & 4)
			h[5] ^= 0x10;
		o.sub = MPTCP_SUB_MP_JOIN;
		o.u.join.form = MPTCP_FORM_ACK;
		memcpy(o.u.join.hmac, h, MPTCP_JOIN_ACK_HMAC_LEN);
		send_seg(1, 1, f->p_max, TCP_FL_ACK, buf, put(&o, buf, sizeof(buf)), 0);
		f->estab = 1;
	}
}

/* The trace's list of a proxy's non-zero counters. */
static void
trace_counters(const struct mptcp_proxy *px)
{
	struct mptcp_proxy_stats st;

	mptcp_proxy_stats_get(px, &st);
	for (unsigned int c = 0; c < MPTCP_PROXY_CNT_MAX; c++)
		if (st.cnt[c] != 0)
			fprintf(stderr, " %s=%llu", mptcp_proxy_cnt_name((enum mptcp_proxy_cnt)c),
				(unsigned long long)st.cnt[c]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mptcp_proxy_rule rule = { .family = 4, .plen = 24, .addr = { 198, 18, 1, 0 } };
	struct mptcp_proxy_params pp;
	struct tcp_engine_params sp;
	uint8_t cfg;
	uint32_t tok;

	if (size < 1 || size > REC * 2000)
		return 0;
	cfg = data[0];
	data++;
	size--;
	memset(&H, 0, sizeof(H));
	H.consistent = 1;
	H.csum = (cfg & 0x04) != 0;
	H.hold = (cfg & 0x28) == 0x28;
	H.now = MS(1000);
	H.key = 0x0123456789abcdefull;
	mptcp_key_token_idsn(H.key, &tok, &H.base);
	H.base++;
	memset(&pp, 0, sizeof(pp));
	pp.name = "fzp";
	pp.socket_id = SOCKET_ID_ANY;
	pp.pool = pool;
	pp.max_conns = 4;
	pp.snd_buf = 32768;
	pp.rcv_buf = 32768;
	pp.syn_retries = 2;
	pp.mptcp = true;
	pp.max_subflows = 3;
	pp.nrules = 1;
	pp.rules = &rule;
	if (cfg & 0x10)
		pp.reset_memory_ns = MS(5000);
	if (cfg & 0x08) {
		pp.worker_bits = 1;
		pp.handover = handover;
		pp.redirect_entries = 2;
		pp.redirect_idle_ns = MS(60000);
	}
	H.px = mptcp_proxy_create(&pp);
	CHECK(H.px != NULL);
	if (cfg & 0x08) {
		pp.name = "fzp2";
		pp.worker_id = 1;
		H.px2 = mptcp_proxy_create(&pp);
		CHECK(H.px2 != NULL);
	}
	tcp_engine_params_init(&sp);
	sp.name = "fzs";
	sp.pool = pool;
	sp.cb = s_event;
	sp.max_conns = 8;
	sp.snd_buf = 32768;
	sp.rcv_buf = 32768;
	sp.txq_size = 256;
	sp.timer_slots = 256;
	H.s = tcp_engine_create(&sp);
	CHECK(H.s != NULL);
	tcp_listen(H.s, 80, true);
	CHECK(handshake() == 0);

	for (size_t off = 0; off + REC <= size; off += REC) {
		const uint8_t *r = data + off;
		uint8_t op = r[0] & 7, opt[40];
		int k = (r[0] & 0x08) ? 1 : 0;
		int dsn32 = ((cfg & 0x02) != 0) ^ ((r[0] & 0x80) != 0);
		struct hsf *f = &H.sf[k];
		int32_t dseq = (int16_t)rd16(r + 8);
		uint32_t len = rd16(r + 6) % 1400, rel, ack, optlen;
		uint8_t flags = TCP_FL_ACK;

		if (r[0] & 0x40)
			dseq *= 1024;
		if (op == 3 || op == 6 || op == 7)
			flush_burst();
		if (op == 3) {
			if (!H.sf[1].estab || H.sf[1].dead)
				join_step(r);
			else
				op = 4; /* a path option on an established join */
		}
		if (op != 3 && op != 6 && op != 7 && f->open && f->have_irs) {
			rel = f->nxt_rel + (uint32_t)dseq;
			ack = f->p_max + ((r[0] & 0x20) ? (uint32_t)(int32_t)(int8_t)r[10] : 0);
			if (op == 2 || op == 4)
				len = (op == 4 && (r[13] & 0x80)) ? len : 0;
			if (r[0] & 0x10)
				flags |= TCP_FL_FIN;
			if (op == 5) {
				flags = TCP_FL_RST | ((r[12] & 1) ? TCP_FL_ACK : 0);
				len = 0;
			}
			optlen = build_opts(r, k, rel, len, dsn32, opt);
			H.batching = (cfg & 0x40) != 0;
			send_seg(k, rel, ack, flags, opt, optlen, len);
			H.batching = 0;
			if (op != 5 && len > 0 && (int32_t)(rel + len - f->nxt_rel) > 0)
				f->nxt_rel = rel + len;
		}
		if (op == 6 && H.sc != NULL) {
			static const uint8_t bytes[4096];

			switch (r[12] & 3) {
			case 0:
				(void)tcp_send(H.sc, bytes, (uint32_t)r[13] * 16, H.now);
				break;
			case 1:
				(void)tcp_shutdown(H.sc, H.now);
				break;
			case 2:
				if (r[13] == 0xff)
					tcp_abort(H.sc, H.now);
				break;
			default:
				break;
			}
			pump();
		}
		if (r[11] != 0)
			flush_burst(); /* sent before the clock moves on */
		H.now += (r[11] & 0x80) ? (uint64_t)(r[11] & 0x7f) * 100000000ull :
					  (uint64_t)r[11] * 1000000ull;
		(void)tcp_timers_run(H.s, H.now);
		pump();
	}
	flush_burst();
	if (getenv("FUZZ_MPTCP_MAPPING_TRACE") != NULL) {
		/* What an input reached: bytes at the server, the proxy's
		 * counters. */
		fprintf(stderr, "server got %llu bytes, mappings %s;",
			(unsigned long long)H.s_pos, H.consistent ? "consistent" : "not consistent");
		trace_counters(H.px);
		if (H.px2 != NULL) {
			fprintf(stderr, "; worker 1:");
			trace_counters(H.px2);
		}
		{
			const uint64_t *tc = mptcp_proxy_tcp_counters(H.px);

			fprintf(stderr, "; tcp_segments_after_reset=%llu"
				" tcp_segments_coalesced_in_burst=%llu",
				(unsigned long long)tc[TCP_CNT_AFTER_RESET],
				(unsigned long long)tc[TCP_CNT_SEG_COALESCED]);
		}
		fprintf(stderr, "\n");
	}
	{
		/* Every data segment P sent carried the mapping of its bytes. */
		struct mptcp_proxy_stats st;

		mptcp_proxy_stats_get(H.px, &st);
		CHECK(st.cnt[MPTCP_PROXY_CNT_MPTCP_TX_NO_MAPPING] == 0);
	}
	if (cfg & 0x01) {
		mptcp_proxy_shutdown(H.px, H.now, p_emit, NULL);
		if (H.px2 != NULL)
			mptcp_proxy_shutdown(H.px2, H.now, p_emit, NULL);
	}
	pump();
	/* A shut-down owner takes nothing: what is left in the ring is the
	 * harness's. */
	for (uint16_t i = 0; i < H.nhanded; i++)
		rte_pktmbuf_free(H.handed[i]);
	mptcp_proxy_free(H.px2);
	mptcp_proxy_free(H.px);
	tcp_engine_free(H.s);
	/* Every mbuf P, S or the harness took or made is back. */
	CHECK(rte_mempool_in_use_count(pool) == 0);
	return 0;
}
