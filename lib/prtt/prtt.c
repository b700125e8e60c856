/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Passive RTT: a set-associative flow table, one sample in flight per flow,
 * and log histograms per subscriber. See prtt.h and README.md.
 */
#include <string.h>

#include "prtt.h"

#define WAYS 4
#define TS_SLOTS 4 /* timestamp samples in flight per flow */

/* Flow flags. */
#define F_SEQ_PENDING 0x02
#define F_SND_VALID   0x04
#define F_ACK_VALID   0x08
#define F_OWD_VALID   0x10
#define F_TS_SEEN     0x20

/* One connection: 144 bytes; a bucket is 4 of them. */
struct prtt_flow {
	uint64_t key;            /* 0: free */
	uint64_t used_ns;        /* last segment seen, for LRU eviction */
	uint64_t ts_t[TS_SLOTS]; /* when ts_val[i] was first sent */
	uint64_t seq_t;          /* when [seq_lo, seq_hi) was sent */
	int64_t owd_min[2];      /* this window's and the last one's minimum */
	uint64_t owd_t0;         /* reference instant of the OWD arithmetic */
	uint64_t owd_win_ns;     /* start of this window */
	uint32_t sub;
	uint32_t ts_val[TS_SLOTS];
	uint32_t seq_lo, seq_hi;
	uint32_t snd_max, ack_max;
	uint32_t owd_ts0, owd_last;
	uint32_t ts_last;        /* newest TSval sent toward the subscriber */
	uint8_t flags;
	uint8_t ts_used;         /* bit i: ts_val[i] is in flight */
};
_Static_assert(sizeof(struct prtt_flow) == 144, "flow entry size");

struct prtt_sub_dir {
	uint32_t hist[PRTT_HIST_BUCKETS];
	uint64_t samples, min_ns, last_ns;
	struct prtt_window win;
};

struct prtt_sub {
	struct prtt_sub_dir d[2];
};

struct prtt {
	struct prtt_params p;
	uint32_t bucket_shift;   /* 64 - log2(buckets) */
	struct prtt_counters c;
	struct prtt_flow *flows; /* after the header, then subs */
	struct prtt_sub *subs;
};

const char *const prtt_counter_names[] = {
#define PRTT_CNT_NAME(n, d) #n,
	PRTT_COUNTER_LIST(PRTT_CNT_NAME)
#undef PRTT_CNT_NAME
};

/* Sequence-space comparisons (RFC 1982 serial arithmetic). */
static inline bool seq_lt(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }
static inline bool seq_le(uint32_t a, uint32_t b) { return (int32_t)(a - b) <= 0; }

void
prtt_params_default(struct prtt_params *p)
{
	p->flows = 16384;
	p->subs = 1024;
	p->max_age_ns = 4000000000ULL;
	p->ts_tick_ns = 1000000;
	p->owd_window_ns = 10000000000ULL;
}

static size_t
align64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

size_t
prtt_memsize(const struct prtt_params *p)
{
	if (p == NULL || p->flows < WAYS || (p->flows & (p->flows - 1)) != 0 ||
	    p->flows > (1u << 26) || p->subs == 0 || p->subs > (1u << 24) ||
	    p->ts_tick_ns == 0 || p->max_age_ns == 0 || p->owd_window_ns == 0)
		return 0;
	return align64(sizeof(struct prtt)) +
	       align64((size_t)p->flows * sizeof(struct prtt_flow)) +
	       (size_t)p->subs * sizeof(struct prtt_sub);
}

static void
window_reset(struct prtt_window *w)
{
	memset(w, 0, sizeof(*w));
	w->min_ns = UINT64_MAX;
}

struct prtt *
prtt_init(void *mem, const struct prtt_params *p)
{
	size_t sz = prtt_memsize(p);
	struct prtt *t = mem;
	uint32_t buckets, shift = 64;

	if (sz == 0 || mem == NULL)
		return NULL;
	memset(mem, 0, sz);
	t->p = *p;
	buckets = p->flows / WAYS;
	while (buckets > 1) {
		buckets >>= 1;
		shift--;
	}
	t->bucket_shift = shift;
	t->flows = (struct prtt_flow *)((uint8_t *)mem + align64(sizeof(*t)));
	t->subs = (struct prtt_sub *)((uint8_t *)t->flows +
		  align64((size_t)p->flows * sizeof(struct prtt_flow)));
	for (uint32_t s = 0; s < p->subs; s++)
		for (int d = 0; d < 2; d++)
			window_reset(&t->subs[s].d[d].win);
	return t;
}

/* ------------------------------------------------------------------ */
/* Histograms.                                                         */

unsigned
prtt_hist_bucket(uint64_t ns)
{
	uint64_t u = ns >> 10;
	unsigned msb, b;

	if (u < 16)
		return (unsigned)u;
	msb = 63u - (unsigned)__builtin_clzll(u);
	b = 16 + (msb - 4) * 8 + (unsigned)((u >> (msb - 3)) & 7);
	return b < PRTT_HIST_BUCKETS ? b : PRTT_HIST_BUCKETS - 1;
}

uint64_t
prtt_hist_lower_ns(unsigned b)
{
	unsigned msb, sub;

	if (b < 16)
		return (uint64_t)b << 10;
	msb = 4 + (b - 16) / 8;
	sub = (b - 16) % 8;
	return ((uint64_t)(8 + sub) << (msb - 3)) << 10;
}

uint64_t
prtt_hist_percentile(const uint32_t *hist, unsigned pct)
{
	uint64_t total = 0, want, run = 0;

	for (unsigned b = 0; b < PRTT_HIST_BUCKETS; b++)
		total += hist[b];
	if (total == 0)
		return 0;
	if (pct < 1)
		pct = 1;
	if (pct > 100)
		pct = 100;
	/* The smallest bucket holding at least pct% of the samples. */
	want = (total * pct + 99) / 100;
	for (unsigned b = 0; b < PRTT_HIST_BUCKETS; b++) {
		run += hist[b];
		if (run >= want) {
			uint64_t lo = prtt_hist_lower_ns(b);
			uint64_t hi = b + 1 < PRTT_HIST_BUCKETS ?
				      prtt_hist_lower_ns(b + 1) : lo + lo / 8;
			return (lo + hi) / 2;
		}
	}
	return 0;
}

static void
record(struct prtt *t, uint32_t sub, enum prtt_dir dir, uint64_t ns)
{
	struct prtt_sub_dir *sd = &t->subs[sub].d[dir];
	uint32_t *h = &sd->hist[prtt_hist_bucket(ns)];

	if (*h == UINT32_MAX) /* keep the shape: halve the whole histogram */
		for (unsigned b = 0; b < PRTT_HIST_BUCKETS; b++)
			sd->hist[b] >>= 1;
	(*h)++;
	if (sd->samples == 0 || ns < sd->min_ns)
		sd->min_ns = ns;
	sd->samples++;
	sd->last_ns = ns;
	sd->win.samples++;
	if (ns < sd->win.min_ns)
		sd->win.min_ns = ns;
}

/* ------------------------------------------------------------------ */
/* The flow table.                                                     */

static inline struct prtt_flow *
bucket_of(const struct prtt *t, uint64_t key)
{
	/* One bucket: a shift by 64 would be undefined. */
	uint64_t h = t->bucket_shift == 64 ? 0 :
		     (key * 0x9E3779B97F4A7C15ULL) >> t->bucket_shift;

	return &t->flows[h * WAYS];
}

static struct prtt_flow *
flow_find(struct prtt *t, uint64_t key)
{
	struct prtt_flow *b = bucket_of(t, key);

	for (int i = 0; i < WAYS; i++)
		if (b[i].key == key)
			return &b[i];
	return NULL;
}

/* The flow's slot, taking a free or the least recently used one. */
static struct prtt_flow *
flow_get(struct prtt *t, uint64_t key, uint32_t sub, uint64_t now_ns)
{
	struct prtt_flow *b = bucket_of(t, key), *victim = NULL;

	for (int i = 0; i < WAYS; i++)
		if (b[i].key == key)
			return &b[i];
	for (int i = 0; i < WAYS; i++) {
		if (b[i].key == 0) {
			victim = &b[i];
			break;
		}
		if (victim == NULL || b[i].used_ns < victim->used_ns)
			victim = &b[i];
	}
	if (victim->key != 0)
		t->c.evictions++;
	t->c.flows_inserted++;
	memset(victim, 0, sizeof(*victim));
	victim->key = key;
	victim->sub = sub;
	victim->used_ns = now_ns;
	return victim;
}

/*
 * Samples nobody answered within max_age are dropped when they are next
 * looked at: a timestamp slot when a new TSval finds every slot taken,
 * or when an echo arrives; the sequence sample when a segment or an ACK
 * would use it. No per-segment sweep.
 */
static inline bool
too_old(const struct prtt *t, uint64_t sent_ns, uint64_t now_ns)
{
	return now_ns - sent_ns > t->p.max_age_ns;
}

/* Free the timestamp slots that are too old; @return the slots freed. */
static unsigned
expire_ts(struct prtt *t, struct prtt_flow *f, uint64_t now_ns)
{
	unsigned n = 0;

	for (unsigned m = f->ts_used; m != 0; m &= m - 1) {
		unsigned i = (unsigned)__builtin_ctz(m);
		if (too_old(t, f->ts_t[i], now_ns)) {
			f->ts_used &= (uint8_t)~(1u << i);
			n++;
		}
	}
	t->c.expired += n;
	return n;
}

static inline void
expire_seq(struct prtt *t, struct prtt_flow *f, uint64_t now_ns)
{
	if ((f->flags & F_SEQ_PENDING) && too_old(t, f->seq_t, now_ns)) {
		f->flags &= (uint8_t)~F_SEQ_PENDING;
		t->c.expired++;
	}
}

/* ------------------------------------------------------------------ */
/* Segments.                                                           */

void
prtt_down_segment(struct prtt *t, const struct prtt_seg *s, uint64_t now_ns)
{
	uint32_t len, end;
	struct prtt_flow *f;
	struct prtt_window *w;

	if (s->sub >= t->p.subs) {
		t->c.bad_sub++;
		return;
	}
	t->c.segments++;
	len = s->payload + ((s->flags & 0x02) != 0) + ((s->flags & 0x01) != 0);
	if (len == 0)
		return; /* a pure ACK: nothing answers it */
	w = &t->subs[s->sub].d[PRTT_DOWN].win;
	w->sent_payload += s->payload;
	w->sent_wire += s->wire_len;
	f = flow_get(t, s->flow, s->sub, now_ns);
	f->used_ns = now_ns;
	f->sub = s->sub;
	if (s->has_ts) {
		/* Only the first segment with a TSval may start its sample:
		 * the echo answers the earliest of them (RFC 7323 s. 4.3), so
		 * timing a later one would read short. Most segments of a
		 * busy flow end here. */
		if ((f->flags & F_TS_SEEN) && !seq_lt(f->ts_last, s->tsval))
			return;
		f->flags |= F_TS_SEEN;
		f->ts_last = s->tsval;
		/* A receiver echoes only some of the TSvals it gets (the one
		 * after its last ACK), so keep a few in flight. */
		if (f->ts_used == (1u << TS_SLOTS) - 1 && expire_ts(t, f, now_ns) == 0)
			return;
		unsigned slot = (unsigned)__builtin_ctz(~(unsigned)f->ts_used);
		f->ts_used |= (uint8_t)(1u << slot);
		f->ts_val[slot] = s->tsval;
		f->ts_t[slot] = now_ns;
		t->c.ts_armed++;
		w->armed++;
		return;
	}
	expire_seq(t, f, now_ns);
	end = s->seq + len;
	bool fresh;
	if (!(f->flags & F_SND_VALID)) {
		f->flags |= F_SND_VALID;
		f->snd_max = end;
		fresh = true;
	} else if (seq_le(f->snd_max, s->seq)) {
		f->snd_max = end;
		fresh = true;
	} else {
		/* Some of it was sent before: Karn, no sample may span it. */
		if ((f->flags & F_SEQ_PENDING) && seq_lt(s->seq, f->seq_hi) &&
		    seq_lt(f->seq_lo, end)) {
			f->flags &= (uint8_t)~F_SEQ_PENDING;
			t->c.karn_discarded++;
		}
		if (seq_lt(f->snd_max, end))
			f->snd_max = end;
		fresh = false;
	}
	if (fresh && !(f->flags & F_SEQ_PENDING)) {
		f->flags |= F_SEQ_PENDING;
		f->seq_lo = s->seq;
		f->seq_hi = end;
		f->seq_t = now_ns;
		t->c.seq_armed++;
		w->armed++;
	}
}

/* Upstream: (arrival - TSval x tick) against its recent minimum. */
static void
owd_sample(struct prtt *t, struct prtt_flow *f, const struct prtt_seg *s,
	   uint64_t now_ns)
{
	int64_t x;
	int32_t dts;

	if (!(f->flags & F_OWD_VALID) ||
	    (uint32_t)((s->tsval - f->owd_ts0) + (1u << 30)) >= (1u << 31)) {
		/* First sight, or a TSval too far from the reference to
		 * compute with (a clock jump, 12 days at 1 ms): start over. */
		f->flags |= F_OWD_VALID;
		f->owd_ts0 = s->tsval;
		f->owd_t0 = now_ns;
		f->owd_last = s->tsval;
		f->owd_min[0] = f->owd_min[1] = 0;
		f->owd_win_ns = now_ns;
		t->c.owd_samples++;
		record(t, s->sub, PRTT_UP, 0);
		return;
	}
	/* Only the first segment of a tick carries its delay; the later ones
	 * of the same TSval left later and would read as a rise. */
	if (!seq_lt(f->owd_last, s->tsval))
		return;
	f->owd_last = s->tsval;
	dts = (int32_t)(s->tsval - f->owd_ts0);
	x = (int64_t)(now_ns - f->owd_t0) - (int64_t)dts * (int64_t)t->p.ts_tick_ns;
	if (now_ns - f->owd_win_ns >= t->p.owd_window_ns) {
		f->owd_min[1] = f->owd_min[0];
		f->owd_min[0] = x;
		f->owd_win_ns = now_ns;
	} else if (x < f->owd_min[0]) {
		f->owd_min[0] = x;
	}
	int64_t base = f->owd_min[0] < f->owd_min[1] ? f->owd_min[0] : f->owd_min[1];
	t->c.owd_samples++;
	record(t, s->sub, PRTT_UP, (uint64_t)(x - base));
}

void
prtt_up_segment(struct prtt *t, const struct prtt_seg *s, uint64_t now_ns)
{
	struct prtt_flow *f;
	struct prtt_window *w;
	bool matched = false;

	if (s->sub >= t->p.subs) {
		t->c.bad_sub++;
		return;
	}
	t->c.segments++;
	f = s->has_ts ? flow_get(t, s->flow, s->sub, now_ns) : flow_find(t, s->flow);
	if (f == NULL)
		return;
	f->used_ns = now_ns;
	f->sub = s->sub;
	w = &t->subs[s->sub].d[PRTT_DOWN].win;
	if (s->flags & 0x10) {
		if (!(f->flags & F_ACK_VALID)) {
			f->flags |= F_ACK_VALID;
			f->ack_max = s->ack;
		} else if (seq_lt(f->ack_max, s->ack) &&
			   s->ack - f->ack_max < (1u << 30)) {
			w->acked_bytes += s->ack - f->ack_max;
			f->ack_max = s->ack;
		}
		for (unsigned m = s->has_ts ? f->ts_used : 0; m != 0; m &= m - 1) {
			unsigned i = (unsigned)__builtin_ctz(m);
			if (s->tsecr == f->ts_val[i]) {
				f->ts_used &= (uint8_t)~(1u << i);
				if (too_old(t, f->ts_t[i], now_ns)) {
					t->c.expired++;
				} else {
					t->c.ts_samples++;
					record(t, s->sub, PRTT_DOWN, now_ns - f->ts_t[i]);
					matched = true;
				}
			} else if (seq_lt(f->ts_val[i], s->tsecr)) {
				/* The echo of this one never came by: unknowable. */
				f->ts_used &= (uint8_t)~(1u << i);
				if (too_old(t, f->ts_t[i], now_ns))
					t->c.expired++;
				else
					t->c.ts_skipped++;
			}
		}
		expire_seq(t, f, now_ns);
		if (f->flags & F_SEQ_PENDING) {
			bool hit = false;
			if (seq_le(f->seq_hi, s->ack)) {
				hit = true;
				t->c.seq_samples++;
			} else {
				for (unsigned i = 0; i < s->nsack && i < 4; i++) {
					uint32_t l = s->sack[i][0], r = s->sack[i][1];
					if (seq_lt(l, r) && seq_le(l, f->seq_lo) &&
					    seq_le(f->seq_hi, r)) {
						hit = true;
						t->c.sack_samples++;
						break;
					}
				}
			}
			if (hit) {
				f->flags &= (uint8_t)~F_SEQ_PENDING;
				record(t, s->sub, PRTT_DOWN, now_ns - f->seq_t);
			}
		}
	}
	/* Upstream delay from the subscriber's data, and from the ACKs that
	 * just gave an RTT sample: pure ACKs are most of a download's
	 * upstream, and one sample per RTT sample is plenty (pping takes
	 * one per RTT) at a fraction of the cost. */
	if (s->has_ts && (s->payload != 0 || matched))
		owd_sample(t, f, s, now_ns);
}

/* ------------------------------------------------------------------ */
/* Options.                                                            */

static inline uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

int
prtt_tcp_parse(const uint8_t *hdr, uint32_t hdr_len, struct prtt_seg *s)
{
	uint32_t doff, i;

	s->has_ts = 0;
	s->nsack = 0;
	if (hdr_len < 20)
		return -1;
	s->seq = rd32(hdr + 4);
	s->ack = rd32(hdr + 8);
	s->flags = hdr[13];
	doff = (uint32_t)(hdr[12] >> 4) * 4;
	if (doff < 20 || doff > hdr_len)
		return -1;
	/* RFC 9293 s. 3.1: kind 0 ends the list, 1 is one byte, every other
	 * kind has a length byte that counts itself and the kind. */
	for (i = 20; i < doff;) {
		uint8_t kind = hdr[i], len;
		if (kind == 0)
			break;
		if (kind == 1) {
			i++;
			continue;
		}
		if (i + 1 >= doff)
			goto bad;
		len = hdr[i + 1];
		if (len < 2 || i + len > doff)
			goto bad;
		if (kind == 8) { /* timestamps, RFC 7323 s. 3 */
			if (len != 10)
				goto bad;
			s->tsval = rd32(hdr + i + 2);
			s->tsecr = rd32(hdr + i + 6);
			s->has_ts = 1;
		} else if (kind == 5) { /* SACK, RFC 2018 s. 3 */
			if (len < 10 || (len - 2) % 8 != 0)
				goto bad;
			for (uint32_t o = i + 2; o + 8 <= (uint32_t)i + len && s->nsack < 4; o += 8) {
				s->sack[s->nsack][0] = rd32(hdr + o);
				s->sack[s->nsack][1] = rd32(hdr + o + 4);
				s->nsack++;
			}
		}
		i += len;
	}
	return 0;
bad:
	s->has_ts = 0;
	s->nsack = 0;
	return -1;
}

/* ------------------------------------------------------------------ */
/* Reading.                                                            */

int
prtt_sub_summary(const struct prtt *t, uint32_t sub, enum prtt_dir dir,
		 struct prtt_summary *out)
{
	const struct prtt_sub_dir *sd;

	if (sub >= t->p.subs || (unsigned)dir > 1)
		return -1;
	sd = &t->subs[sub].d[dir];
	out->samples = sd->samples;
	out->min_ns = sd->samples ? sd->min_ns : 0;
	out->last_ns = sd->last_ns;
	out->p50_ns = prtt_hist_percentile(sd->hist, 50);
	out->p99_ns = prtt_hist_percentile(sd->hist, 99);
	return 0;
}

int
prtt_sub_window_take(struct prtt *t, uint32_t sub, enum prtt_dir dir,
		     struct prtt_window *out)
{
	struct prtt_window *w;

	if (sub >= t->p.subs || (unsigned)dir > 1)
		return -1;
	w = &t->subs[sub].d[dir].win;
	*out = *w;
	window_reset(w);
	return 0;
}

const struct prtt_counters *
prtt_counters(const struct prtt *t)
{
	return &t->c;
}

uint32_t
prtt_subs(const struct prtt *t)
{
	return t->p.subs;
}

const uint32_t *
prtt_sub_hist(const struct prtt *t, uint32_t sub, enum prtt_dir dir)
{
	if (sub >= t->p.subs || (unsigned)dir > 1)
		return NULL;
	return t->subs[sub].d[dir].hist;
}

int
prtt_sub_reset(struct prtt *t, uint32_t sub)
{
	if (sub >= t->p.subs)
		return -1;
	memset(&t->subs[sub], 0, sizeof(t->subs[sub]));
	for (int d = 0; d < 2; d++)
		window_reset(&t->subs[sub].d[d].win);
	return 0;
}
