/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/prtt and lib/autorate hot paths: what passive RTT adds per packet.
 *
 *   BM_prtt_down_up/N   one data segment toward the subscriber and the ACK
 *                       that answers it, over N flows of 1024 subscribers
 *                       in a 16384-slot table (items: segments)
 *   BM_prtt_parse       the TCP option walk of a header with timestamps
 *                       and one SACK block (the app reads the common
 *                       NOP NOP TS shape in place and skips this)
 *   BM_autorate_tick    one control tick of one pipe
 */
#include <stdlib.h>
#include <string.h>

#include "autorate.h"
#include "cbench.h"
#include "prtt.h"

static void
BM_prtt_down_up(struct cbench_state *st)
{
	const uint32_t nflows = (uint32_t)cbench_range(st, 0);
	struct prtt_params p;
	struct prtt_seg d = { .payload = 1448, .wire_len = 1514, .flags = 0x10, .has_ts = 1 };
	struct prtt_seg a = { .wire_len = 66, .flags = 0x10, .has_ts = 1 };
	uint64_t now = 1000000000ULL;
	uint32_t i = 0, *seq;
	void *mem;

	prtt_params_default(&p);
	mem = aligned_alloc(64, (prtt_memsize(&p) + 63) & ~(size_t)63);
	seq = calloc(nflows, sizeof(*seq));
	if (mem == NULL || seq == NULL || prtt_init(mem, &p) == NULL)
		abort();
	CBENCH_LOOP(st) {
		uint32_t f = i % nflows;
		d.flow = a.flow = ((uint64_t)(f * 2654435761u) << 32) | 0x1bb0000u | f;
		d.sub = a.sub = f % 1024;
		d.seq = seq[f];
		d.tsval = (uint32_t)(now >> 20);
		prtt_down_segment(mem, &d, now);
		seq[f] += 1448;
		a.ack = seq[f];
		a.tsecr = d.tsval;
		a.tsval = d.tsval;
		prtt_up_segment(mem, &a, now + 20000000);
		now += 1000;
		i++;
	}
	cbench_set_items_processed(st, cbench_iterations(st) * 2);
	free(seq);
	free(mem);
}

static void
BM_prtt_parse(struct cbench_state *st)
{
	uint8_t h[44] = { 0 };
	const uint8_t o[] = { 1, 1, 8, 10, 0, 0, 1, 2, 0, 0, 0, 3,
			      1, 1, 5, 10, 0, 0, 0x10, 0, 0, 0, 0x20, 0 };
	struct prtt_seg s;

	h[12] = 11 << 4;
	h[13] = 0x10;
	memcpy(h + 20, o, sizeof(o));
	CBENCH_LOOP(st) {
		cbench_do_not_optimize(prtt_tcp_parse(h, sizeof(h), &s));
		cbench_do_not_optimize(s.tsval);
	}
	cbench_set_items_processed(st, cbench_iterations(st));
}

static void
BM_autorate_tick(struct cbench_state *st)
{
	struct autorate_params p;
	struct autorate_state s;
	struct autorate_input in = { .samples = 4, .armed = 4, .delay_ns = 20000000,
				     .delivered_bytes = 60000, .sent_bytes = 60000,
				     .backlogged = true };
	uint64_t now = 1000000000ULL;

	autorate_params_default(&p);
	autorate_init(&s, &p, 20000000, now);
	CBENCH_LOOP(st) {
		now += 50000000;
		in.delay_ns = 20000000 + (now >> 26 & 1) * 30000000; /* clear, bloated, ... */
		cbench_do_not_optimize(autorate_tick(&s, &p, &in, now));
	}
	cbench_set_items_processed(st, cbench_iterations(st));
}

static const struct cbench_def benches[] = {
	{ CBENCH(BM_prtt_down_up), CBENCH_ARGS(1000, 10000) },
	{ CBENCH(BM_prtt_parse) },
	{ CBENCH(BM_autorate_tick) },
};
CBENCH_MAIN(benches)
