/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/prtt under arbitrary input: the TCP option parser on the first
 * bytes, then the rest drives a small instance (4 subscribers) as a
 * series of segments in both directions with arbitrary fields and times,
 * through the parsed-segment calls and the header calls by turns.
 * Checks: the parser never reads past hdr_len, never reports more than 4
 * SACK blocks; no sample is ever negative (a time before its start); no
 * more samples are answered than were started.
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
	p.idle_ns = 5000000;
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
		if (data[15] & 0x40) {
			/* The same segment as a header (NOP NOP TS, or none). */
			uint8_t h[32] = { 0 };
			uint32_t hl = s.has_ts ? 32 : 20;
			for (int b = 0; b < 4; b++) {
				h[4 + b] = (uint8_t)(s.seq >> (24 - 8 * b));
				h[8 + b] = (uint8_t)(s.ack >> (24 - 8 * b));
				h[24 + b] = (uint8_t)(s.tsval >> (24 - 8 * b));
				h[28 + b] = (uint8_t)(s.tsecr >> (24 - 8 * b));
			}
			h[12] = (uint8_t)(hl / 4 << 4);
			h[13] = s.flags;
			h[20] = 1; h[21] = 1; h[22] = 8; h[23] = 10;
			if (data[16] & 0x80)
				prtt_up_tcp(t, s.sub, s.flow, h, hl, s.payload, s.wire_len, now);
			else
				prtt_down_tcp(t, s.sub, s.flow, h, hl, s.payload, s.wire_len, now);
		} else if (data[16] & 0x80) {
			prtt_up_segment(t, &s, now);
		} else {
			prtt_down_segment(t, &s, now);
		}
	}
	const struct prtt_counters *c = prtt_counters(t);
	if (c->ts_samples + c->seq_samples + c->sack_samples > c->ts_armed + c->seq_armed)
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
