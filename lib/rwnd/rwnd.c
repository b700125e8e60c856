/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive-window clamp: a 4-way set-associative table of connections,
 * filled from their handshakes. See rwnd.h and README.md.
 */
#include <string.h>

#include "pkt_tcpopt.h"
#include "rwnd.h"

#define unlikely(x) __builtin_expect(!!(x), 0)

#define WAYS 4

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_ACK 0x10

/* Entry states (the low two bits of rwnd_flow.sb). */
#define ST_MASK   0x03
#define ST_FREE   0
#define ST_SYN    1 /* leg[server] holds when the SYN passed */
#define ST_SYNACK 2 /* leg[client] holds when the SYN-ACK passed */
#define ST_EST    3 /* both legs known (or zero: ambiguous) */

/* Entry bits (the rest of sb). */
#define B_SYN_SIDE  0x04 /* the side that sent the SYN */
#define B_HAVE(s)   (0x08 << (s)) /* snd_max[s] holds a sequence */
#define B_CLAMP(s)  (0x20 << (s)) /* s's data is clamped */
#define B_BAD_LEG   0x80 /* a SYN or SYN-ACK was sent twice: a leg unknown */

#define WS_NONE 15

/* Time in ticks of 1.024 us (a shift, not a division) for the legs, and
 * in units of 2^20 ns (1.05 ms; 32 bits wrap after 52 days) for what only
 * needs ms. */
#define TICK_SHIFT 10
#define MS_SHIFT 20

/* One connection: one cache line. */
struct rwnd_flow {
	uint32_t hash;
	uint32_t ports;
	uint32_t snd_max[2];
	uint32_t leg[2];     /* ticks; 0: unknown (in the handshake: an instant) */
	uint32_t t;          /* ms units: the last segment */
	uint32_t t_data[2];  /* ms units: each side's last new data */
	uint8_t ws;          /* side 0's scale in the low nibble, side 1's in the high */
	uint8_t sb;          /* ST_* | B_* */
	uint8_t pad[2];
	/*
	 * Each side's data rate past the box, from the ACKs coming back:
	 * acknowledged bytes over windows of at least RATE_WIN_MIN and two
	 * round trips (from the mark m_ack, m_t), smoothed 3/4 old + 1/4 new.
	 */
	uint32_t m_ack[2];
	uint32_t m_t[2];     /* ticks | 1; 0: no mark */
	uint32_t rate[2];    /* bytes per 1024 ticks (about per ms); 0: none yet */
};
_Static_assert(sizeof(struct rwnd_flow) == 64, "entry size: one line");

/* Rate windows: at least 10 ms (in ticks), and at most 8 times the
 * window they need: a longer gap is a pause, not a rate. */
#define RATE_WIN_MIN 9766u
#define RATE_GAP_MUL 8u

struct rwnd {
	struct rwnd_params p;
	struct rwnd_counters c;
	uint32_t set_mask;   /* sets - 1 */
	uint32_t idle_ms;    /* ms units */
	uint32_t min_leg;    /* ticks, >= 1 */
	uint32_t quiet_ms;   /* ms units */
	struct rwnd_flow *flows;
	/* One tag per entry, set by set (4 in 16 bytes): the hash with its
	 * low bit set while the entry is in use, else 0. A segment of a
	 * connection the table does not hold, most of them, reads one
	 * line of tags and no entry. */
	uint32_t *tags;
};

static inline uint32_t
tag_of(uint32_t hash)
{
	return hash | 1;
}

static inline unsigned
state_of(const struct rwnd_flow *f)
{
	return f->sb & ST_MASK;
}

static inline void
set_state(struct rwnd_flow *f, unsigned st)
{
	f->sb = (uint8_t)((f->sb & ~ST_MASK) | st);
}

static inline unsigned
syn_side(const struct rwnd_flow *f)
{
	return (f->sb & B_SYN_SIDE) ? 1 : 0;
}

static inline unsigned
ws_of(const struct rwnd_flow *f, unsigned side)
{
	return (f->ws >> (4 * side)) & 0x0f;
}

static inline void
set_ws(struct rwnd_flow *f, unsigned side, int8_t ws)
{
	unsigned v = ws < 0 ? WS_NONE : (unsigned)ws;

	f->ws = (uint8_t)((f->ws & ~(0x0f << (4 * side))) | v << (4 * side));
}

const char *const rwnd_counter_names[] = {
#define RWND_CNT_NAME(n, d) #n,
	RWND_COUNTER_LIST(RWND_CNT_NAME)
#undef RWND_CNT_NAME
};

const char *const rwnd_counter_help[] = {
#define RWND_CNT_HELP(n, d) d,
	RWND_COUNTER_LIST(RWND_CNT_HELP)
#undef RWND_CNT_HELP
};

void
rwnd_params_default(struct rwnd_params *p)
{
	p->flows = 65536;
	p->headroom = 3000;
	p->idle_ns = 30ull * 1000 * 1000 * 1000;
	p->min_leg_ns = 100 * 1000;
	p->quiet_ns = 250ull * 1000 * 1000;
}

static bool
params_ok(const struct rwnd_params *p)
{
	return p->flows >= WAYS && p->flows <= (1u << 26) &&
	       (p->flows & (p->flows - 1)) == 0 && p->headroom >= 1 &&
	       p->headroom <= (1u << 30) && (p->idle_ns >> MS_SHIFT) >= 1 &&
	       (p->idle_ns >> MS_SHIFT) < (1u << 30) &&
	       (p->quiet_ns >> MS_SHIFT) < (1u << 30) &&
	       (p->min_leg_ns >> TICK_SHIFT) < (1ull << 31);
}

static size_t
header_size(void)
{
	return (sizeof(struct rwnd) + 63) & ~(size_t)63;
}

size_t
rwnd_memsize(const struct rwnd_params *p)
{
	if (!params_ok(p))
		return 0;
	return header_size() + (size_t)p->flows * (sizeof(struct rwnd_flow) + sizeof(uint32_t));
}

struct rwnd *
rwnd_init(void *mem, const struct rwnd_params *p)
{
	struct rwnd *t = mem;

	if (mem == NULL || !params_ok(p))
		return NULL;
	memset(t, 0, rwnd_memsize(p));
	t->p = *p;
	t->set_mask = p->flows / WAYS - 1;
	t->idle_ms = (uint32_t)(p->idle_ns >> MS_SHIFT);
	t->quiet_ms = (uint32_t)(p->quiet_ns >> MS_SHIFT);
	t->min_leg = (uint32_t)(p->min_leg_ns >> TICK_SHIFT);
	if (t->min_leg == 0)
		t->min_leg = 1;
	t->flows = (struct rwnd_flow *)((uint8_t *)mem + header_size());
	t->tags = (uint32_t *)(t->flows + p->flows);
	return t;
}

const struct rwnd_counters *
rwnd_counters(const struct rwnd *t)
{
	return &t->c;
}

int
rwnd_seg_parse(const uint8_t *hdr, uint32_t hdr_len, struct rwnd_seg *s)
{
	uint32_t doff;

	s->wscale = -1;
	s->bad = 0;
	if (hdr_len < 20) {
		s->flags = 0;
		s->bad = 1;
		return -1;
	}
	s->seq = pkt_rd32(hdr + 4);
	s->ack = pkt_rd32(hdr + 8);
	s->flags = hdr[13];
	s->win = (uint16_t)(hdr[14] << 8 | hdr[15]);
	if (!(s->flags & TCP_SYN))
		return 0;
	doff = (uint32_t)(hdr[12] >> 4) * 4;
	if (doff < 20 || doff > hdr_len)
		goto bad;
	for (uint32_t i = 20;;) {
		uint8_t len;
		int kind = pkt_tcpopt_next(hdr, doff, &i, &len);

		if (kind == PKT_TCPOPT_END)
			break;
		if (kind == PKT_TCPOPT_BAD)
			goto bad;
		if (kind == 3) { /* window scale, RFC 7323 s. 2 */
			if (len != 3)
				goto bad;
			/* s. 2.3: a shift above 14 is used as 14. */
			s->wscale = (int8_t)(hdr[i + 2] > 14 ? 14 : hdr[i + 2]);
		}
		i += len;
	}
	return 0;
bad:
	s->wscale = -1;
	s->bad = 1;
	return -1;
}

/* Serial arithmetic (RFC 1982): a after b. */
static inline bool
after(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

static inline struct rwnd_flow *
set_of(struct rwnd *t, uint32_t hash)
{
	return &t->flows[(size_t)(hash & t->set_mask) * WAYS];
}

static inline struct rwnd_flow *
lookup(struct rwnd *t, const struct rwnd_seg *s)
{
	const size_t base = (size_t)(s->hash & t->set_mask) * WAYS;
	const uint32_t *tag = t->tags + base, x = tag_of(s->hash);

	for (unsigned w = 0; w < WAYS; w++) {
		struct rwnd_flow *f = &t->flows[base + w];

		if (tag[w] == x && state_of(f) != ST_FREE &&
		    f->hash == s->hash && f->ports == s->ports)
			return f;
	}
	return NULL;
}

/* f is free again. */
static inline void
entry_free(struct rwnd *t, struct rwnd_flow *f)
{
	set_state(f, ST_FREE);
	t->tags[f - t->flows] = 0;
}

/* A way for a new connection: a free one, else an idle one, else the
 * one seen longest ago. */
static struct rwnd_flow *
claim(struct rwnd *t, const struct rwnd_seg *s, uint32_t now_ms)
{
	struct rwnd_flow *f = set_of(t, s->hash), *old = NULL;
	uint32_t oldest = 0;

	for (unsigned w = 0; w < WAYS; w++) {
		uint32_t age;

		if (state_of(&f[w]) == ST_FREE)
			return &f[w];
		age = now_ms - f[w].t;
		if (old == NULL || age > oldest) {
			old = &f[w];
			oldest = age;
		}
	}
	if (oldest >= t->idle_ms)
		t->c.expired++;
	else
		t->c.evicted++;
	return old;
}

/* A leg: now minus the instant it started at, at least one tick. */
static inline uint32_t
leg_since(uint32_t start, uint32_t now)
{
	return now - start ? now - start : 1;
}

static void
syn(struct rwnd *t, struct rwnd_flow *f, const struct rwnd_seg *s,
    uint32_t now, uint32_t now_ms)
{
	const unsigned a = s->side & 1;

	t->c.syns++;
	if (f != NULL && (state_of(f) == ST_SYN || state_of(f) == ST_SYNACK) &&
	    syn_side(f) == a && f->snd_max[a] == s->seq + 1 + s->payload) {
		/* The same SYN again (before or after a SYN-ACK passed):
		 * which one a SYN-ACK answers is unknown (Karn), so the
		 * server's leg is too. */
		f->sb |= B_BAD_LEG;
		f->t = now_ms;
		return;
	}
	if (f == NULL)
		f = claim(t, s, now_ms);
	memset(f, 0, sizeof(*f));
	f->hash = s->hash;
	f->ports = s->ports;
	t->tags[f - t->flows] = tag_of(s->hash);
	f->sb = (uint8_t)(ST_SYN | (a ? B_SYN_SIDE : 0) | B_HAVE(a));
	f->t = now_ms;
	f->snd_max[a] = s->seq + 1 + s->payload; /* (data on a SYN: Fast Open) */
	f->leg[a ^ 1] = now; /* the server's leg starts */
	f->ws = WS_NONE | WS_NONE << 4;
	set_ws(f, a, s->wscale);
}

static void
syn_ack(struct rwnd_flow *f, const struct rwnd_seg *s, uint32_t now,
	uint32_t now_ms)
{
	const unsigned b = s->side & 1;

	if (syn_side(f) == b)
		return;
	if (state_of(f) == ST_SYN) {
		f->leg[b] = leg_since(f->leg[b], now);
		f->leg[b ^ 1] = now; /* the client's leg starts */
		set_ws(f, b, s->wscale);
		f->snd_max[b] = s->seq + 1 + s->payload;
		f->sb |= B_HAVE(b);
		set_state(f, ST_SYNACK);
		f->t = now_ms;
	} else if (state_of(f) == ST_SYNACK) {
		/* Sent twice: the client's leg is ambiguous. */
		f->sb |= B_BAD_LEG;
		f->t = now_ms;
	}
}

void
rwnd_departed(struct rwnd *t, const struct rwnd_seg *s, uint64_t now_ns)
{
	const uint32_t now = (uint32_t)(now_ns >> TICK_SHIFT);
	const unsigned x = s->side & 1;
	struct rwnd_flow *f;
	uint8_t want;

	if ((s->flags & (TCP_SYN | TCP_RST)) != TCP_SYN)
		return;
	f = lookup(t, s);
	/* The SYN from the side that sent it, while the server's leg runs;
	 * the SYN-ACK from the other side, while the client's runs. Not
	 * after either was sent twice (Karn: which one was answered is
	 * unknown), and only the one the entry holds the sequence of. */
	want = s->flags & TCP_ACK ? ST_SYNACK : ST_SYN;
	if (f == NULL || state_of(f) != want || (f->sb & B_BAD_LEG) ||
	    (syn_side(f) == x) != (want == ST_SYN) ||
	    f->snd_max[x] != s->seq + 1 + s->payload)
		return;
	if ((int32_t)(now - f->leg[x ^ 1]) > 0) {
		f->leg[x ^ 1] = now;
		t->c.syn_queued++;
	}
}

/* The client's first ACK after the SYN-ACK: its leg, and the entry is
 * established. */
static void
established(struct rwnd *t, struct rwnd_flow *f, uint32_t now)
{
	const unsigned a = syn_side(f);

	if (f->sb & B_BAD_LEG) {
		t->c.ambiguous++;
		f->leg[0] = f->leg[1] = 0;
	} else {
		f->leg[a] = leg_since(f->leg[a], now);
		t->c.handshakes++;
	}
	/* RFC 7323 s. 2.2: windows scale only if both SYNs offered it. */
	if (ws_of(f, 0) == WS_NONE || ws_of(f, 1) == WS_NONE)
		f->ws = 0;
	set_state(f, ST_EST);
}

bool
rwnd_track(struct rwnd *t, const struct rwnd_seg *s, uint64_t now_ns,
	   struct rwnd_ref *ref)
{
	const uint32_t now = (uint32_t)(now_ns >> TICK_SHIFT);
	const uint32_t now_ms = (uint32_t)(now_ns >> MS_SHIFT);
	const unsigned x = s->side & 1, y = x ^ 1;
	struct rwnd_flow *f;
	uint32_t end;

	t->c.segments++;
	f = lookup(t, s);
	if (unlikely(s->flags & (TCP_SYN | TCP_RST))) {
		if (s->flags & TCP_RST) {
			if (f != NULL) {
				entry_free(t, f);
				t->c.resets++;
			}
			return false;
		}
		if (unlikely(s->bad)) {
			t->c.bad_syn++;
			if (f != NULL && !(s->flags & TCP_ACK))
				entry_free(t, f); /* a new connection we cannot follow */
			return false;
		}
		if (!(s->flags & TCP_ACK))
			syn(t, f, s, now, now_ms);
		else if (f != NULL)
			syn_ack(f, s, now, now_ms);
		return false;
	}
	if (f == NULL)
		return false;
	if (unlikely(state_of(f) != ST_EST)) {
		if (state_of(f) != ST_SYNACK || x != syn_side(f) ||
		    !(s->flags & TCP_ACK))
			return false;
		established(t, f, now);
	}
	f->t = now_ms;
	end = s->seq + s->payload + (s->flags & TCP_FIN);
	if (after(end, f->snd_max[x])) {
		f->snd_max[x] = end;
		f->t_data[x] = now_ms;
	}
	if (!(s->flags & TCP_ACK) || f->leg[0] == 0 || f->leg[1] == 0 ||
	    !(f->sb & B_HAVE(y)))
		return false;
	ref->idx = (uint32_t)(f - t->flows);
	ref->now_ms = now_ms;
	ref->now = now;
	return true;
}

/* d's rate from the ACKs r sends about its data. */
static inline void
rate_update(struct rwnd_flow *f, unsigned d, unsigned r, uint32_t ack, uint32_t now)
{
	uint32_t win, elapsed;
	int32_t acked;

	if (f->m_t[d] == 0)
		goto mark;
	elapsed = now - f->m_t[d];
	acked = (int32_t)(ack - f->m_ack[d]);
	win = 2 * (f->leg[d] + f->leg[r]);
	if (win < RATE_WIN_MIN)
		win = RATE_WIN_MIN;
	if (elapsed < win)
		return;
	if (acked >= 0 && elapsed <= RATE_GAP_MUL * win) {
		uint64_t smp = ((uint64_t)acked << 10) / elapsed;

		if (smp > UINT32_MAX)
			smp = UINT32_MAX;
		f->rate[d] = f->rate[d] ? (uint32_t)((3 * (uint64_t)f->rate[d] + smp) >> 2)
				        : (uint32_t)smp;
	}
mark:
	f->m_ack[d] = ack;
	f->m_t[d] = now | 1;
}

/* bytes, at most what cap (bytes per 1024 ticks; 0: no bound) carries in
 * ticks. */
static inline uint64_t
at_most_cap(uint64_t bytes, uint64_t cap, uint64_t ticks)
{
	return cap != 0 && bytes > (cap * ticks >> 10) ? cap * ticks >> 10 : bytes;
}

uint16_t
rwnd_window(struct rwnd *t, const struct rwnd_ref *ref,
	    const struct rwnd_seg *s, uint32_t backlog, uint64_t extra_ns,
	    uint64_t hold_ns, uint64_t cap_Bps)
{
	struct rwnd_flow *f = &t->flows[ref->idx];
	const unsigned r = s->side & 1, d = r ^ 1; /* receiver, data sender */
	const int32_t inflight = (int32_t)(f->snd_max[d] - s->ack);
	const uint32_t out = inflight > 0 ? (uint32_t)inflight : 0;
	uint64_t beyond, leg_d, leg_r, hold, w, adv;
	unsigned shift;
	uint32_t field;

	rate_update(f, d, r, s->ack, ref->now);
	if (!(f->sb & B_CLAMP(d))) {
		if (backlog < t->p.headroom || out == 0)
			return s->win;
		f->sb |= B_CLAMP(d);
		t->c.engaged++;
	} else if (out == 0) {
		/*
		 * Everything d sent is acknowledged. If d has also sent
		 * nothing new for a while, its next data is a new burst
		 * (a response, after an idle time): released, it starts
		 * with its own window. A clamped bulk flow gets here
		 * between two of its rounds, and stays clamped.
		 */
		uint32_t quiet = t->quiet_ms +
			((4 * ((uint64_t)f->leg[d] + f->leg[r])) >> (MS_SHIFT - TICK_SHIFT));
		if (ref->now_ms - f->t_data[d] > quiet) {
			f->sb &= (uint8_t)~B_CLAMP(d);
			t->c.released++;
			return s->win;
		}
	}
	beyond = out - (backlog < out ? backlog : out);
	leg_r = f->leg[r] > t->min_leg ? f->leg[r] : t->min_leg;
	/* (A hold of more than an hour is no hold: capped, so that the
	 * products below stay within 64 bits.) */
	if (extra_ns > (1ull << 41))
		extra_ns = 1ull << 41;
	if (hold_ns > (1ull << 41))
		hold_ns = 1ull << 41;
	leg_d = f->leg[d] + (extra_ns >> TICK_SHIFT);
	hold = hold_ns >> TICK_SHIFT;
	/* The data's pipe rate, in bytes per 1024 ticks (2^20 ns) as rate[]
	 * is; 0: no bound. At most 2^31. */
	const uint64_t cap = ((cap_Bps < (1ull << 40) ? cap_Bps : 1ull << 40) << 20) /
			     1000000000u;
	/*
	 * What d must have in flight on its own leg (and while the ACK is
	 * in the box): its rate times that time. The rate from the ACKs;
	 * until the first window, or if higher, beyond over leg_r (a flow
	 * queued here sends at its rate past the box); never more than its
	 * pipe's. beyond < 2^31, legs and extra < 2^32 ticks, rate and
	 * cap < 2^32: each product fits in 64 bits.
	 */
	uint64_t own = beyond * leg_d / leg_r;
	uint64_t x = (uint64_t)f->rate[d] * leg_d >> 10;

	if (own > x)
		x = own;
	w = beyond + at_most_cap(x, cap, leg_d);
	/*
	 * Half as much again: what the legs and the rate leave out (the
	 * receiver's delayed ACKs, jitter, a round trip longer than the
	 * handshake's). Without it a flow on a long path settles where the
	 * window is just what its rate needs, at any rate, and never
	 * climbs: 25% of the downstream at 50 ms (docs/bufferbloat/
	 * README.md, "sluice's window clamp"). On a short path the terms
	 * are small and so is this.
	 */
	w += w / 2;
	/*
	 * And while the box holds r's ACKs back: d's own measured rate for
	 * as long as the hold lately lasted. Not beyond over leg_r once
	 * there is a rate: a released ACK acknowledges a hold's worth at
	 * once, and that ratio jumps with it. No half again: it is
	 * measured.
	 */
	if (hold != 0) {
		x = f->rate[d] != 0 ? (uint64_t)f->rate[d] * hold >> 10 : beyond * hold / leg_r;
		w += at_most_cap(x, cap, hold);
	}
	w += t->p.headroom;
	shift = ws_of(f, r);
	adv = (uint64_t)s->win << shift;
	if (w >= adv) {
		t->c.not_lowered++;
		return s->win;
	}
	field = (uint32_t)((w + (1ull << shift) - 1) >> shift);
	if (field == 0)
		field = 1;
	if (field >= s->win) {
		/* Rounded up to the scale's unit, it is the same field. */
		t->c.not_lowered++;
		return s->win;
	}
	t->c.clamped++;
	return (uint16_t)field;
}

/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), in ones' complement. */
void
rwnd_write(uint8_t *hdr, uint16_t win, bool csum_partial)
{
	const uint16_t old = (uint16_t)(hdr[14] << 8 | hdr[15]);

	hdr[14] = (uint8_t)(win >> 8);
	hdr[15] = (uint8_t)win;
	if (csum_partial || old == win)
		return;
	uint32_t sum = (uint16_t)~(uint16_t)(hdr[16] << 8 | hdr[17]);
	sum += (uint16_t)~old;
	sum += win;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (uint16_t)~sum;
	hdr[16] = (uint8_t)(sum >> 8);
	hdr[17] = (uint8_t)sum;
}

uint32_t
rwnd_entries(const struct rwnd *t, uint64_t now_ns)
{
	const uint32_t now_ms = (uint32_t)(now_ns >> MS_SHIFT);
	uint32_t n = 0;

	for (size_t i = 0; i < t->p.flows; i++)
		if (state_of(&t->flows[i]) != ST_FREE &&
		    now_ms - t->flows[i].t < t->idle_ms)
			n++;
	return n;
}
