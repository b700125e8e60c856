/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for lib/aqm's ACK filter: the pure-ACK parse, the rule
 * (aqm_ack_supersedes()) and what a pipe with the filter (and optionally
 * the ACK hold) does to a short sequence of frames.
 *
 * Input layout (see gen_corpus.py):
 *   byte 0   control bits (CTL_*)
 *   byte 1   k: frames after the first start with the first frame's
 *            first k bytes (the same connection, most of the time)
 *   then up to MAX_FRAMES records: [dt] [len] [len bytes of a frame]
 *            dt advances the virtual clock by dt x 100 us before the frame
 *
 * The rule is checked against an oracle written here from the rule set in
 * lib/aqm/README.md and aqm.h, not from aqm_ack.c. The target aborts when:
 *   - aqm_ack_is_pure() calls a frame pure that is not a pure ACK: not
 *     TCP, not parsed clean, a fragment, with payload, SYN/FIN/RST/URG, no
 *     ACK, or an option other than NOP/EOL, one timestamp, one SACK;
 *   - aqm_ack_supersedes(newer, older) is true where the oracle says
 *     older tells the sender something newer does not: another
 *     connection, other flags or DSCP/ECN, an older timestamp, a lower
 *     ACK or one more than 2^30 (a window) ahead, a plain duplicate ACK,
 *     a smaller window at the same ACK, a SACK block newer covers with
 *     neither its ACK nor a block that is not a D-SACK and lies within
 *     (ACK, ACK + 2^30], or a D-SACK in
 *     older (RFC 2883 s. 4: first block below, or starting below, the
 *     ACK, or inside the second);
 *   - through the scheduler: a frame goes missing that no later frame
 *     supersedes (by the oracle) that left or was in turn superseded,
 *     a frame comes out twice or out of its flow queue's order, the
 *     counters do not add up (enqueued = out + ack_filtered, no other
 *     drops, sent = out when drained by dequeue), or an mbuf is left in
 *     use after everything drained.
 * Pair checks run on mbufs whose data is a heap buffer of exactly the
 * frame's size, so ASan reports any read past the frame.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "../../test_eal.h"
#include "aqm.h"
#include "aqm_priv.h"
#include "pkt.h"

#define CTL_ONE_FLOW 0x01 /* every frame in one flow queue (hash collisions) */
#define CTL_HOLD     0x02 /* ACK hold on (5 ms) with a small quantum */
#define CTL_DEQUEUE  0x04 /* drain with the shaper's clock, not a flush */

#define MAX_FRAMES 12
#define HOLD_NS 5000000ULL
#define TICK_NS 100000ULL

#define CHECK(c) do { \
	if (!(c)) { \
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
		abort(); \
	} \
} while (0)

static struct rte_mempool *pool;

/* A bare mbuf plus private area; the data lives in its own exact buffer. */
struct fake_mbuf {
	struct rte_mbuf m;
	uint8_t priv[PKT_META_PRIV_SIZE];
} __attribute__((aligned(64)));

/* What the oracle reads from a frame. */
struct oack {
	bool pure;
	uint32_t ack, tsval, tsecr;
	uint32_t sack[4][2];
	unsigned int nsack;
	bool ts;
	uint16_t win;
	uint8_t b12, b13, tos;
	const struct pkt_meta *meta;
};

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool
le(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) <= 0;
}

static bool
lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

/* The README's "pure ACK", read again from the bytes. */
static void
oracle_parse(struct rte_mbuf *m, struct oack *a)
{
	const struct pkt_meta *meta = pkt_meta(m);
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *), *t;
	unsigned int off, hl;
	bool sack_seen = false;

	memset(a, 0, sizeof(*a));
	a->meta = meta;
	if (meta->err != PKT_ERR_NONE || meta->l4_proto != 6 ||
	    !(meta->flags & PKT_F_L4) ||
	    (meta->flags & (PKT_F_MALFORMED | PKT_F_FRAGMENT)))
		return;
	if (meta->l3 != PKT_L3_IPV4 && meta->l3 != PKT_L3_IPV6)
		return;
	/* No payload: the datagram ends with the TCP header. */
	if ((uint32_t)meta->l3_off + meta->l3_len != (uint32_t)meta->l4_off + meta->l4_len ||
	    (uint32_t)meta->l4_off + meta->l4_len > rte_pktmbuf_data_len(m))
		return;
	t = d + meta->l4_off;
	hl = (unsigned int)(t[12] >> 4) * 4;
	if (hl < 20 || hl != meta->l4_len)
		return;
	a->b12 = t[12] & 0x0f;
	a->b13 = t[13];
	if ((t[13] & 0x37) != 0x10) /* URG, RST, SYN, FIN clear; ACK set */
		return;
	a->ack = rd32(t + 8);
	a->win = (uint16_t)(t[14] << 8 | t[15]);
	if (meta->l3 == PKT_L3_IPV4)
		a->tos = d[meta->l3_off + 1];
	else
		a->tos = (uint8_t)(rd32(d + meta->l3_off) >> 20);
	for (off = 20; off < hl; ) {
		uint8_t kind = t[off], len;

		if (kind == 0)
			break;
		if (kind == 1) {
			off++;
			continue;
		}
		if (off + 2 > hl)
			return;
		len = t[off + 1];
		if (len < 2 || off + len > hl)
			return;
		if (kind == 8 && len == 10 && !a->ts) {
			a->ts = true;
			a->tsval = rd32(t + off + 2);
			a->tsecr = rd32(t + off + 6);
		} else if (kind == 5 && !sack_seen && len >= 10 && len <= 34 &&
			   (len - 2) % 8 == 0) {
			sack_seen = true;
			a->nsack = (len - 2u) / 8;
			for (unsigned int i = 0; i < a->nsack; i++) {
				a->sack[i][0] = rd32(t + off + 2 + 8 * i);
				a->sack[i][1] = rd32(t + off + 6 + 8 * i);
			}
		} else {
			return;
		}
		off += len;
	}
	a->pure = true;
}

static bool
oracle_same_conn(const struct pkt_meta *x, const struct pkt_meta *y)
{
	size_t alen = x->l3 == PKT_L3_IPV4 ? 4 : 16;

	if (x->l3 != y->l3 || x->sport != y->sport || x->dport != y->dport ||
	    x->vlan_count != y->vlan_count)
		return false;
	for (unsigned int i = 0; i < x->vlan_count && i < 2; i++)
		if (x->vlan_tci[i] != y->vlan_tci[i])
			return false;
	return memcmp(x->src, y->src, alen) == 0 && memcmp(x->dst, y->dst, alen) == 0;
}

/* RFC 2883 s. 4, as a sender may read it. */
static bool
oracle_dsack(const struct oack *a)
{
	if (a->nsack == 0)
		return false;
	if (le(a->sack[0][1], a->ack) || lt(a->sack[0][0], a->ack))
		return true;
	return a->nsack > 1 && le(a->sack[1][0], a->sack[0][0]) &&
	       le(a->sack[0][1], a->sack[1][1]);
}

/* Does n tell the sender everything o does (so o may go)? */
static bool
oracle_supersedes(const struct oack *n, const struct oack *o)
{
	if (!n->pure || !o->pure || !oracle_same_conn(n->meta, o->meta))
		return false;
	if (n->b12 != o->b12 || n->b13 != o->b13 || n->tos != o->tos || n->ts != o->ts)
		return false;
	if (n->ts && (lt(n->tsval, o->tsval) || lt(n->tsecr, o->tsecr)))
		return false;
	if (n->ack - o->ack > (1u << 30)) /* behind, or past the largest window */
		return false;
	if (n->ack == o->ack && (n->nsack == 0 || n->win < o->win))
		return false;
	if (oracle_dsack(o))
		return false;
	for (unsigned int i = 0; i < o->nsack; i++) {
		bool covered = le(o->sack[i][1], n->ack);

		/* Not by a D-SACK (a sender need not mark its data SACKed),
		 * nor by a block a sender ignores: empty, or not within
		 * (ACK, ACK + 2^30]. */
		for (unsigned int j = oracle_dsack(n) ? 1 : 0; j < n->nsack && !covered; j++)
			covered = n->sack[j][0] - n->ack < n->sack[j][1] - n->ack &&
				  n->sack[j][1] - n->ack <= (1u << 30) &&
				  le(n->sack[j][0], o->sack[i][0]) &&
				  le(o->sack[i][1], n->sack[j][1]);
		if (!covered)
			return false;
	}
	return true;
}

struct frame {
	const uint8_t *data;
	size_t len;
	uint64_t dt;
};

/* Split the input into frames; frames after the first share a prefix. */
static unsigned int
split(const uint8_t *d, size_t size, struct frame *f, uint8_t *store, size_t cap)
{
	unsigned int n = 0;
	size_t i = 2, used = 0, k = d[1];

	while (n < MAX_FRAMES && i + 2 <= size) {
		size_t len = d[i + 1];
		uint8_t *b = store + used;

		if (len > size - i - 2)
			len = size - i - 2;
		CHECK(used + len <= cap);
		memcpy(b, d + i + 2, len);
		if (n > 0) {
			size_t c = k < len ? k : len;

			if (c > f[0].len)
				c = f[0].len;
			memcpy(b, f[0].data, c);
		}
		f[n].data = b;
		f[n].len = len;
		f[n].dt = d[i];
		used += len;
		i += 2 + d[i + 1];
		n++;
	}
	return n;
}

/* The frame in an mbuf over a heap buffer of exactly its size, parsed. */
static struct rte_mbuf *
exact_mbuf(struct fake_mbuf *fm, uint8_t **buf, const struct frame *f)
{
	struct rte_mbuf *m = &fm->m;

	*buf = malloc(f->len ? f->len : 1);
	memcpy(*buf, f->data, f->len);
	memset(fm, 0, sizeof(*fm));
	m->buf_addr = *buf;
	m->buf_len = (uint16_t)f->len;
	m->priv_size = PKT_META_PRIV_SIZE;
	m->nb_segs = 1;
	rte_mbuf_refcnt_set(m, 1);
	m->data_len = (uint16_t)f->len;
	m->pkt_len = (uint32_t)f->len;
	pkt_parse(m, pkt_meta(m), 0);
	return m;
}

static void
check_pairs(const struct frame *f, unsigned int n)
{
	static struct fake_mbuf fm[MAX_FRAMES];
	struct rte_mbuf *m[MAX_FRAMES];
	uint8_t *buf[MAX_FRAMES];
	struct oack a[MAX_FRAMES];

	for (unsigned int i = 0; i < n; i++) {
		m[i] = exact_mbuf(&fm[i], &buf[i], &f[i]);
		oracle_parse(m[i], &a[i]);
		if (aqm_ack_is_pure(m[i]))
			CHECK(a[i].pure);
	}
	for (unsigned int i = 0; i < n; i++)
		for (unsigned int j = 0; j < n; j++)
			if (aqm_ack_supersedes(m[j], m[i]) &&
			    !oracle_supersedes(&a[j], &a[i])) {
				fprintf(stderr, "frame %u supersedes frame %u\n", j, i);
				CHECK(0);
			}
	for (unsigned int i = 0; i < n; i++)
		free(buf[i]);
}

static struct aqm_sched *
make_sched(uint8_t ctl)
{
	struct aqm_sched_params sp;
	struct aqm_pipe_params pp;
	struct aqm_sched *s;

	aqm_sched_params_default(&sp);
	sp.name = "fuzz";
	sp.max_pipes = 1;
	sp.max_flows = (ctl & CTL_ONE_FLOW) ? 1 : 64;
	sp.ack_hold_ns = (ctl & CTL_HOLD) ? HOLD_NS : 0;
	sp.ack_hold_slots = 16;
	/* A small wheel (64 x 4 us) is cheap to set up and tear down per
	 * input, and a 1 Mbit/s pipe laps it with every frame. */
	sp.wheel_slots = 64;
	s = aqm_sched_create(&sp);
	CHECK(s != NULL);
	aqm_pipe_params_default(&pp);
	pp.shaper.rate_bps = 1000000;
	pp.fq.flows = sp.max_flows;
	pp.fq.ack_filter = true;
	/* CoDel out of the way: every missing frame is the filter's doing. */
	pp.fq.codel.target_ns = 1000000000ULL;
	pp.fq.codel.interval_ns = 3000000000ULL;
	if (ctl & CTL_HOLD)
		pp.fq.quantum = 64; /* one small frame makes the pipe "backlogged" */
	CHECK(aqm_sched_pipe_add(s, &pp) == 0);
	return s;
}

static void
check_queue(uint8_t ctl, const struct frame *f, unsigned int n)
{
	struct aqm_sched *s = make_sched(ctl);
	struct rte_mbuf *m[MAX_FRAMES], *out[MAX_FRAMES + 1];
	struct pkt_meta meta[MAX_FRAMES];
	struct oack a[MAX_FRAMES];
	unsigned int pos[MAX_FRAMES], nout = 0;
	struct aqm_pipe_stats st;
	uint64_t now = 1000000000ULL, drops = 0;

	for (unsigned int i = 0; i < n; i++) {
		m[i] = rte_pktmbuf_alloc(pool);
		CHECK(m[i] != NULL);
		memcpy(rte_pktmbuf_append(m[i], (uint16_t)f[i].len), f[i].data, f[i].len);
		pkt_parse(m[i], pkt_meta(m[i]), 0);
		(void)pkt_flow_hash(pkt_meta(m[i])); /* the queue's key, kept */
		meta[i] = *pkt_meta(m[i]);
		pos[i] = UINT32_MAX;
	}
	for (unsigned int i = 0; i < n; i++) {
		now += f[i].dt * TICK_NS;
		if (ctl & CTL_DEQUEUE) {
			/* Let the shaper send what is due before the frame. */
			uint16_t k = aqm_sched_dequeue_burst(s, out + nout,
							     (uint16_t)(n - nout), now);
			nout += k;
		}
		CHECK(aqm_sched_pipe_enqueue_burst(s, 0, &m[i], 1, now) == 1);
	}
	for (unsigned int it = 0; it < 100000 && aqm_sched_pending(s) > 0; it++) {
		uint16_t k;

		CHECK(nout <= n);
		if (ctl & CTL_DEQUEUE) {
			now += TICK_NS;
			k = aqm_sched_dequeue_burst(s, out + nout, (uint16_t)(n - nout), now);
		} else {
			k = aqm_sched_flush_burst(s, out + nout, (uint16_t)(n - nout));
		}
		nout += k;
	}
	CHECK(aqm_sched_pending(s) == 0);
	CHECK(nout <= n);
	/* Which frames came out, once each. */
	for (unsigned int o = 0; o < nout; o++) {
		unsigned int i;

		for (i = 0; i < n && m[i] != out[o]; i++)
			;
		CHECK(i < n && pos[i] == UINT32_MAX);
		pos[i] = o;
	}
	/* Oracle view of the frames, from saved copies (the filtered ones
	 * are gone from their mbufs). */
	{
		static struct fake_mbuf fm[MAX_FRAMES];
		struct rte_mbuf *c[MAX_FRAMES];
		uint8_t *buf[MAX_FRAMES];
		bool reach[MAX_FRAMES];

		for (unsigned int i = 0; i < n; i++) {
			c[i] = exact_mbuf(&fm[i], &buf[i], &f[i]);
			oracle_parse(c[i], &a[i]);
		}
		/* A filtered frame: a later frame superseded it, and that
		 * one left or was in turn superseded (the rule is judged
		 * pair by pair, as the filter applies it; serial order is
		 * not transitive over half the number space, which a chain
		 * of one connection's queued ACKs never spans). */
		for (unsigned int i = n; i-- > 0; ) {
			reach[i] = pos[i] != UINT32_MAX;
			for (unsigned int j = i + 1; j < n && !reach[i]; j++)
				reach[i] = reach[j] && oracle_supersedes(&a[j], &a[i]);
			if (!reach[i])
				fprintf(stderr, "frame %u was filtered; no later frame supersedes it\n", i);
			CHECK(reach[i]);
		}
		for (unsigned int i = 0; i < n; i++)
			free(buf[i]);
	}
	/* Frames of one flow queue (one flow hash) leave in arrival order. */
	for (unsigned int i = 0; i < n; i++)
		for (unsigned int j = i + 1; j < n; j++)
			if (pos[i] != UINT32_MAX && pos[j] != UINT32_MAX &&
			    ((ctl & CTL_ONE_FLOW) || meta[i].flow_hash == meta[j].flow_hash))
				CHECK(pos[i] < pos[j]);
	CHECK(aqm_sched_pipe_stats(s, 0, &st) == 0);
	for (int r = 0; r < AQM_DROP_MAX; r++)
		drops += st.drops[r];
	CHECK(drops == 0);
	CHECK(st.enq_pkts == n);
	CHECK(st.ack_filtered == n - nout);
	/* A flush hands packets back without sending them. */
	CHECK(st.tx_pkts == ((ctl & CTL_DEQUEUE) ? nout : 0));
	CHECK(st.backlog_pkts == 0 && st.backlog_bytes == 0);
	for (unsigned int o = 0; o < nout; o++)
		rte_pktmbuf_free(out[o]);
	aqm_sched_free(s);
	CHECK(rte_mempool_in_use_count(pool) == 0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (test_eal_start("fuzz_aqm_ack", 64) < 0)
		abort();
	pool = rte_pktmbuf_pool_create("fuzz_ack", 64, 0, PKT_META_PRIV_SIZE,
				       RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (pool == NULL)
		abort();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t store[MAX_FRAMES * 255];
	struct frame f[MAX_FRAMES];
	unsigned int n;

	if (size < 2)
		return 0;
	n = split(data, size, f, store, sizeof(store));
	if (n == 0)
		return 0;
	check_pairs(f, n);
	check_queue(data[0], f, n);
	return 0;
}
