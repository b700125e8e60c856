/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/rwnd under arbitrary input: rwnd_seg_parse() on the first bytes
 * (any length, on a copy of exactly that size), checked against a
 * plain option walk written here from RFC 9293 s. 3.1 and RFC 7323 s. 2;
 * then the rest drives a small table (8 flows: two sets of 4, so
 * connections collide) as 16-byte records: either side, SYN, SYN-ACK,
 * ACK, data, FIN, RST or any flags byte, one of 8 hashes and 4 port
 * pairs, sequence and ACK numbers near each side's cursor or anywhere,
 * window scales, payloads, backlogs, extra legs, ACK holds, pipe rates,
 * departures from a queue and time steps from microseconds to days;
 * each segment by turns as a parsed TCP header (whose window is then
 * rewritten by rwnd_write()) or as a struct.
 * Checks: rwnd_window() never returns more than the window sent, nor 0
 * for a window that was not 0; after rwnd_write() the field reads back
 * and the checksum equals one computed from scratch (or, with
 * csum_partial, is left alone), for that window and for one more
 * taken from the input; rwnd_entries() <= flows; the counters agree
 * with each other.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rwnd.h"

#define FLOWS 8

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The reference: 0 and the window scale (-1: none), or -1. */
static int
ref_parse(const uint8_t *h, uint32_t len, int *ws)
{
	uint32_t doff, i = 20;

	*ws = -1;
	if (len < 20)
		return -1;
	if (!(h[13] & 0x02))
		return 0;
	doff = (uint32_t)(h[12] >> 4) * 4;
	if (doff < 20 || doff > len)
		return -1;
	while (i < doff) {
		if (h[i] == 0)
			break;
		if (h[i] == 1) {
			i++;
			continue;
		}
		if (doff - i < 2 || h[i + 1] < 2 || h[i + 1] > doff - i)
			goto bad;
		if (h[i] == 3) {
			if (h[i + 1] != 3)
				goto bad;
			*ws = h[i + 2] < 14 ? h[i + 2] : 14;
		}
		i += h[i + 1];
	}
	return 0;
bad:
	*ws = -1;
	return -1;
}

/* The TCP checksum of a header of len bytes (no payload) under a fixed
 * IPv4 pseudo header, computed from scratch; the field is read as 0. */
static uint16_t
csum(const uint8_t *h, uint32_t len)
{
	uint32_t sum = 0x0a01 + 0x0203 + 0xc000 + 0x024d + 6 + len;

	for (uint32_t i = 0; i < len; i += 2)
		if (i != 16)
			sum += (uint32_t)h[i] << 8 | (i + 1 < len ? h[i + 1] : 0);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void
parse_check(const uint8_t *data, size_t hl)
{
	uint8_t *hdr = malloc(hl ? hl : 1);
	struct rwnd_seg s;
	int ws, rc, want;

	memcpy(hdr, data, hl);
	memset(&s, 0x5a, sizeof(s));
	rc = rwnd_seg_parse(hdr, (uint32_t)hl, &s);
	want = ref_parse(hdr, (uint32_t)hl, &ws);
	if (rc != want || s.wscale != ws || s.bad != (rc < 0))
		abort();
	if (s.hash != 0x5a5a5a5a || s.ports != 0x5a5a5a5a || s.payload != 0x5a5a5a5a ||
	    s.side != 0x5a)
		abort();
	if (hl >= 20 && (s.seq != rd32(hdr + 4) || s.ack != rd32(hdr + 8) ||
			 s.flags != hdr[13] || s.win != rd16(hdr + 14)))
		abort();
	free(hdr);
}

static const uint32_t hashes[8] = { 0, 1, 2, 3, 4, 5, 0x80000000u, 0xffffffffu };
static const int8_t scales[8] = { -1, 0, 1, 7, 9, 14, 15, -1 };
static const uint8_t flag_sel[8] = { 0x02, 0x12, 0x10, 0x18, 0x11, 0x04, 0x14, 0 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static _Alignas(64) uint8_t mem[4096];
	struct rwnd_params p;
	struct rwnd *t;
	uint32_t cur[2], ports[4];
	uint64_t now, windows = 0, segments = 0;

	if (size < 1)
		return 0;
	/* 1. The parser. */
	size_t hl = data[0];
	if (hl > size - 1)
		hl = size - 1;
	parse_check(data + 1, hl);
	data += 1 + hl;
	size -= 1 + hl;

	/* 2. The table: a configuration byte, a start time, 16-byte records. */
	if (size < 9)
		return 0;
	static const uint32_t headrooms[4] = { 1, 1500, 3000, 64000 };
	static const uint64_t min_legs[4] = { 0, 100000, 5000000, 1ull << 40 };
	static const uint64_t idles[4] = { 1 << 20, 1000000000, 30000000000ull, (1ull << 35) - 1 };
	rwnd_params_default(&p);
	p.flows = FLOWS;
	p.headroom = headrooms[data[0] & 3];
	p.min_leg_ns = min_legs[(data[0] >> 2) & 3];
	p.idle_ns = idles[(data[0] >> 4) & 3];
	p.quiet_ns = (data[0] & 0x40) ? 0 : (data[0] & 0x80) ? (1ull << 34) - 1 : 250000000;
	if (rwnd_memsize(&p) == 0 || rwnd_memsize(&p) > sizeof(mem))
		abort();
	t = rwnd_init(mem, &p);
	if (t != (void *)mem)
		abort();
	now = (uint64_t)rd32(data + 1) << 12;
	cur[0] = rd32(data + 5);
	cur[1] = cur[0] ^ 0x5bd1e995u;
	ports[0] = rwnd_ports(50000, 443);
	ports[1] = rwnd_ports(80, 50001);
	ports[2] = rwnd_ports(443, 50001);
	ports[3] = 0;
	data += 9;
	size -= 9;

	for (; size >= 16; data += 16, size -= 16) {
		const uint8_t *r = data;
		const unsigned side = r[0] & 1;
		const bool raw_seq = r[0] & 0x10, as_header = r[0] & 0x20;
		const bool partial = r[0] & 0x40;
		struct rwnd_seg s;
		struct rwnd_ref ref;

		memset(&s, 0, sizeof(s));
		s.side = (uint8_t)side;
		s.flags = flag_sel[(r[0] >> 1) & 7];
		if (((r[0] >> 1) & 7) == 7)
			s.flags = r[15];
		s.hash = hashes[r[1] & 7];
		s.ports = ports[(r[1] >> 3) & 3];
		s.wscale = scales[r[1] >> 5];
		if (raw_seq)
			cur[side] = rd32(r + 2);
		s.seq = cur[side] + (raw_seq ? 0 : (uint32_t)(int32_t)(int8_t)r[2]);
		s.ack = cur[side ^ 1] - ((uint32_t)r[3] << (r[4] & 15));
		s.payload = (uint32_t)rd16(r + 6) << (r[5] & 7);
		s.win = rd16(r + 8);
		s.bad = (s.flags & 0x02) && (r[4] & 0x80) && !as_header;
		const uint32_t backlog = (uint32_t)rd16(r + 10) << (r[12] & 15);
		const uint64_t delay_ns = (r[12] >> 4) == 15 ? UINT64_MAX >> (r[5] >> 3)
							     : (uint64_t)(r[12] >> 4) * 1000000;
		/* The delay as the extra leg, or (bit 7) as the hold; the data
		 * pipe's rate from r[15] (also the flags byte of selector 7):
		 * Mbit/s, 0 none, 255 the most there is. */
		const uint64_t extra_ns = (r[0] & 0x80) ? 0 : delay_ns;
		const uint64_t hold_ns = (r[0] & 0x80) ? delay_ns : 0;
		const uint64_t cap_Bps = r[15] == 255 ? UINT64_MAX : (uint64_t)r[15] * 125000;
		now += (uint64_t)rd16(r + 13) << (10 + 3 * (r[5] >> 5));

		/* The header: the fields above, a window-scale option on a
		 * SYN (15 is read as 14), a checksum from scratch. */
		uint8_t h[24];
		uint32_t len = 20;
		memset(h, 0, sizeof(h));
		h[0] = r[1];
		for (int b = 0; b < 4; b++) {
			h[4 + b] = (uint8_t)(s.seq >> (24 - 8 * b));
			h[8 + b] = (uint8_t)(s.ack >> (24 - 8 * b));
		}
		h[13] = s.flags;
		h[14] = (uint8_t)(s.win >> 8);
		h[15] = (uint8_t)s.win;
		if (s.wscale >= 0) {
			h[20] = 1;
			h[21] = 3;
			h[22] = 3;
			h[23] = (uint8_t)s.wscale;
			len = 24;
		}
		h[12] = (uint8_t)(len / 4 << 4);
		const uint16_t c0 = csum(h, len);
		h[16] = (uint8_t)(c0 >> 8);
		h[17] = (uint8_t)c0;
		if (as_header) {
			struct rwnd_seg q = s;

			if (rwnd_seg_parse(h, len, &q) != 0 || q.seq != s.seq || q.ack != s.ack ||
			    q.flags != s.flags || q.win != s.win)
				abort();
			if (q.wscale != ((s.flags & 0x02) ? (s.wscale > 14 ? 14 : s.wscale) : -1))
				abort();
			s = q;
		}
		if (s.wscale > 14)
			s.wscale = 14;

		segments++;
		if (rwnd_track(t, &s, now, &ref)) {
			const uint16_t w = rwnd_window(t, &ref, &s, backlog, extra_ns, hold_ns, cap_Bps);

			windows++;
			if (w > s.win || (w == 0 && s.win != 0))
				abort();
			rwnd_write(h, w, partial);
			if (rd16(h + 14) != w)
				abort();
			if (partial ? rd16(h + 16) != c0 : rd16(h + 16) != csum(h, len))
				abort();
		}
		/* (r[4] bit 6) The segment also leaves a queue, after the
		 * delay: for a SYN or SYN-ACK the entry waits on, its leg
		 * restarts then. */
		if (r[4] & 0x40)
			rwnd_departed(t, &s, now + ((r[12] >> 4) == 15 ? 0 : delay_ns));
		/* And any window at all, from whatever the header holds now. */
		const uint16_t any = rd16(r + 10) ^ rd16(r + 13);
		rwnd_write(h, any, partial);
		if (rd16(h + 14) != any)
			abort();
		if (partial ? rd16(h + 16) != c0 : rd16(h + 16) != csum(h, len))
			abort();
		if (s.payload || (s.flags & 0x01))
			cur[side] = s.seq + s.payload + (s.flags & 0x01);

		if (rwnd_entries(t, now) > FLOWS)
			abort();
		const struct rwnd_counters *c = rwnd_counters(t);
		if (c->segments != segments || c->released > c->engaged ||
		    c->engaged > windows || c->clamped + c->not_lowered > windows ||
		    c->handshakes + c->ambiguous > c->syns ||
		    c->evicted + c->expired > c->syns)
			abort();
	}
	return 0;
}
