/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/rwnd hot path: what the window clamp adds per TCP segment, as the
 * app calls it (app/stage_aqm_rwnd.c): parse, track, and for an ACK of a
 * clamped flow the rule and the write.
 *
 *   BM_rwnd_clamped/N  a data segment from the internet side and the
 *                      subscriber's ACK of it, over N connections whose
 *                      handshakes the table saw; every flow is clamped
 *                      and every ACK's window lowered and written, with
 *                      its checksum (items: segments)
 *   BM_rwnd_unknown/N  the same two segments of N connections whose SYN
 *                      the table never saw: each a lookup that misses
 *
 * The table is the default (65536 entries, 4.25 MB), so N = 10000 reads
 * entries spread over more than the L2 cache, as a busy worker does.
 */
#include <stdlib.h>
#include <string.h>

#include "cbench.h"
#include "rwnd.h"

#define MS 1000000ULL
#define ISN_SUB 0x20000000u
#define ISN_NET 0x10000000u

/* A 32-byte TCP header, NOP NOP TS: what Linux sends on a connection. */
static void
tcp_hdr(uint8_t *h, uint32_t seq, uint32_t ack, uint8_t flags, uint16_t win)
{
	memset(h, 0, 32);
	h[4] = (uint8_t)(seq >> 24); h[5] = (uint8_t)(seq >> 16);
	h[6] = (uint8_t)(seq >> 8); h[7] = (uint8_t)seq;
	h[8] = (uint8_t)(ack >> 24); h[9] = (uint8_t)(ack >> 16);
	h[10] = (uint8_t)(ack >> 8); h[11] = (uint8_t)ack;
	h[12] = 8 << 4;
	h[13] = flags;
	h[14] = (uint8_t)(win >> 8); h[15] = (uint8_t)win;
	h[16] = 0x5a; h[17] = 0xa5; /* a checksum to update */
	h[20] = 1; h[21] = 1; h[22] = 8; h[23] = 10;
}

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

static struct rwnd_seg
seg_of(uint32_t f, uint8_t side, uint32_t payload)
{
	struct rwnd_seg s;

	memset(&s, 0, sizeof(s));
	s.hash = f * 2654435761u;
	s.ports = rwnd_ports((uint16_t)(32768 + (f & 0x3fff)), 443);
	s.side = side;
	s.payload = payload;
	return s;
}

/* SYN (scale 7), SYN-ACK (scale 9) 10 ms later, the client's ACK 20 ms
 * after it: both legs measured. */
static void
handshake(struct rwnd *t, uint32_t f, uint64_t t0)
{
	struct rwnd_ref ref;
	struct rwnd_seg s = seg_of(f, RWND_SUB, 0);

	s.flags = 0x02; s.seq = ISN_SUB; s.win = 65535; s.wscale = 7;
	rwnd_track(t, &s, t0, &ref);
	s = seg_of(f, RWND_NET, 0);
	s.flags = 0x12; s.seq = ISN_NET; s.ack = ISN_SUB + 1; s.win = 65535; s.wscale = 9;
	rwnd_track(t, &s, t0 + 10 * MS, &ref);
	s = seg_of(f, RWND_SUB, 0);
	s.flags = 0x10; s.seq = ISN_SUB + 1; s.ack = ISN_NET + 1; s.win = 502; s.wscale = -1;
	rwnd_track(t, &s, t0 + 30 * MS, &ref);
}

static void
run(struct cbench_state *st, bool known)
{
	const uint32_t nflows = (uint32_t)cbench_range(st, 0);
	struct rwnd_params p;
	struct rwnd *t;
	uint8_t dh[32], ah[32];
	uint64_t now = 1000000000ULL;
	uint32_t i = 0, *sent;
	void *mem;

	rwnd_params_default(&p);
	mem = aligned_alloc(64, (rwnd_memsize(&p) + 63) & ~(size_t)63);
	sent = calloc(nflows, sizeof(*sent));
	if (mem == NULL || sent == NULL || (t = rwnd_init(mem, &p)) == NULL)
		abort();
	if (known)
		for (uint32_t f = 0; f < nflows; f++)
			handshake(t, f, now);
	now += 100 * MS;
	/* Each connection sends a segment every 10 ms (1.16 Mbit/s): slow
	 * enough that the rule lowers every ACK's window. */
	const uint64_t step = 10 * MS / nflows;
	tcp_hdr(dh, 0, ISN_SUB + 1, 0x10, 502);
	tcp_hdr(ah, ISN_SUB + 1, 0, 0x10, 502);
	CBENCH_LOOP(st) {
		const uint32_t f = i % nflows;
		struct rwnd_ref ref;
		struct rwnd_seg s = seg_of(f, RWND_NET, 1448);

		/* The data segment, 20 segments ahead of what is acked, 10
		 * of them queued here. */
		put32(dh + 4, ISN_NET + 1 + sent[f]);
		rwnd_seg_parse(dh, sizeof(dh), &s);
		if (rwnd_track(t, &s, now, &ref))
			cbench_do_not_optimize(rwnd_window(t, &ref, &s, 0, 0, 0, 0));
		sent[f] += 1448;
		/* The subscriber's ACK. */
		s = seg_of(f, RWND_SUB, 0);
		put32(ah + 8, ISN_NET + 1 + sent[f] - 20 * 1448);
		ah[14] = 0x01; ah[15] = 0xf6; /* 502 again */
		rwnd_seg_parse(ah, sizeof(ah), &s);
		if (rwnd_track(t, &s, now + 500, &ref)) {
			uint16_t w = rwnd_window(t, &ref, &s, 14480, 20 * MS, 0, 0);

			if (w != s.win)
				rwnd_write(ah, w, false);
		}
		cbench_do_not_optimize(ah[16]);
		now += step;
		i++;
	}
	cbench_set_items_processed(st, cbench_iterations(st) * 2);
	/* The share of the ACKs whose window was lowered and written. */
	cbench_counter(st, "clamped", (double)rwnd_counters(t)->clamped /
		       (double)cbench_iterations(st), CBENCH_COUNTER_PLAIN);
	if (known && rwnd_counters(t)->clamped == 0)
		cbench_skip_with_error(st, "no ACK was clamped: the benchmark measures nothing");
	free(sent);
	free(mem);
}

static void
BM_rwnd_clamped(struct cbench_state *st)
{
	run(st, true);
}

static void
BM_rwnd_unknown(struct cbench_state *st)
{
	run(st, false);
}

static const struct cbench_def benches[] = {
	{ CBENCH(BM_rwnd_clamped), CBENCH_ARGS(100, 10000) },
	{ CBENCH(BM_rwnd_unknown), CBENCH_ARGS(100, 10000) },
};
CBENCH_MAIN(benches)
