/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/prtt under arbitrary input: the TCP option parser on the first
 * bytes, then the rest drives a small table (16 flows, 4 subscribers) as a
 * series of segments in both directions with arbitrary fields and times.
 * Checks: the parser never reads past hdr_len, never reports more than 4
 * SACK blocks; no sample is ever negative (a time before its start); the
 * table never holds more flows than it has slots.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "prtt.h"

static uint32_t
rd(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static _Alignas(64) uint8_t mem[1 << 16];
	struct prtt_params p;
	struct prtt_seg s;
	struct prtt *t;
	uint64_t now = 1000000000ULL;

	if (size < 1)
		return 0;
	/* 1. The parser, on a copy of exactly the length it is given. */
	size_t hl = data[0] % 64;
	if (hl > size - 1)
		hl = size - 1;
	uint8_t *hdr = malloc(hl ? hl : 1);
	memcpy(hdr, data + 1, hl);
	memset(&s, 0, sizeof(s));
	if (prtt_tcp_parse(hdr, (uint32_t)hl, &s) == 0 && s.nsack > 4)
		abort();
	free(hdr);
	data += 1 + hl;
	size -= 1 + hl;

	/* 2. Segments: 24 bytes each. */
	prtt_params_default(&p);
	p.flows = 16;
	p.subs = 4;
	p.max_age_ns = 50000000;
	p.owd_window_ns = 20000000;
	if (prtt_memsize(&p) > sizeof(mem))
		abort();
	t = prtt_init(mem, &p);
	for (; size >= 24; data += 24, size -= 24) {
		memset(&s, 0, sizeof(s));
		now += rd(data) & 0xFFFFF;           /* up to ~1 ms per step */
		s.flow = (data[4] & 31) + 1;
		s.sub = data[5] % 5;                  /* 4: out of range */
		s.seq = rd(data + 6);
		s.ack = rd(data + 10);
		s.payload = data[14] * 8u;
		s.wire_len = s.payload + 54;
		s.flags = data[15];
		s.has_ts = data[16] & 1;
		s.tsval = rd(data + 17) >> 20;
		s.tsecr = rd(data + 20) >> 20;
		s.nsack = (data[16] >> 1) % 5;
		for (unsigned i = 0; i < s.nsack; i++) {
			s.sack[i][0] = s.ack + (uint32_t)data[6 + i] * 100;
			s.sack[i][1] = s.sack[i][0] + (uint32_t)data[10 + i] * 100;
		}
		if (data[16] & 0x80)
			prtt_up_segment(t, &s, now);
		else
			prtt_down_segment(t, &s, now);
	}
	const struct prtt_counters *c = prtt_counters(t);
	if (c->flows_inserted - c->evictions > p.flows)
		abort();
	for (uint32_t sub = 0; sub < p.subs; sub++) {
		struct prtt_summary sm;
		if (prtt_sub_summary(t, sub, PRTT_DOWN, &sm) < 0)
			abort();
		/* No sample can be longer than the whole run. */
		if (sm.samples && sm.min_ns > now)
			abort();
	}
	return 0;
}
