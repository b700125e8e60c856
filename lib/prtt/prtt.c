/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Passive RTT: one sample in flight and one pinned flow per subscriber,
 * and log histograms per subscriber. See prtt.h and README.md.
 */
#include <string.h>

#include "pkt_tcpopt.h"
#include "prtt.h"

#define unlikely(x) __builtin_expect(!!(x), 0)

#define TS_SLOTS 4 /* timestamp samples in flight per subscriber */

/* Slot states. */
#define S_NONE 0 /* no flow chosen */
#define S_CAND 1 /* a flow chosen; its next new data starts the sample */
#define S_ARM  2 /* samples in flight */

/*
 * One subscriber's sampling state: 256 bytes. The first line (struct
 * prtt_hot, prtt.h) is all a segment of another flow reads; the second
 * holds the chosen flow's sequence state and the pinned flow's baseline,
 * the last two the timestamp samples (read by those flows only).
 */
struct prtt_slot {
	struct prtt_hot h;  /* key, until, sent, t_ns, sent_wire, okey, o_until, state */
	/* Downstream. */
	uint32_t val;       /* timestamps: unused; sequence: the range's end */
	uint32_t lo;        /* sequence: the range's start */
	uint32_t newest;    /* the flow's newest TSval or sequence end sent */
	uint8_t ts;         /* the flow uses timestamps */
	uint8_t o_valid;    /* upstream: o_* hold a reference */
	uint8_t o_pinned;   /* upstream: h.okey is a flow (any key, 0 too) */
	uint8_t pad0;
	/* Upstream. */
	uint64_t o_t0;      /* reference instant of the OWD arithmetic */
	uint64_t o_win;     /* start of this window */
	int64_t o_min[2];   /* this window's and the last one's minimum */
	uint32_t o_ts0, o_last;
	uint64_t dlv_sent;  /* delivered rate: arm_sent (or tsent) of the last answered sample */
	/* Timestamps: a receiver echoes only the TSval after its last ACK,
	 * and stretch ACKs skip most ticks: one in flight would mostly go
	 * unanswered (tests/e2e/test_prtt.sh: 16 of 80). */
	uint64_t tt[TS_SLOTS];    /* when tv[i] left */
	uint64_t tsent[TS_SLOTS]; /* sent then */
	uint32_t tv[TS_SLOTS];
	uint8_t tused;            /* bit i: tv[i] in flight */
	uint8_t pad2[7];
	uint64_t arm_sent;        /* sent when the sequence sample started */
	uint64_t d_seen;          /* the chosen flow's last downstream segment */
	uint64_t quiet_ns;        /* the chosen or pinned flow keeps its place while quiet for less */
	uint64_t o_seen;          /* the pinned flow's last segment */
	uint64_t dlv_ns;          /* when that sample was answered (0: none yet) */
};
_Static_assert(sizeof(struct prtt_hot) == 64, "hot line size");
_Static_assert(sizeof(struct prtt_slot) == 256, "slot size (prtt_fast_slot() in prtt.h)");

/*
 * What a sample adds to a window (struct prtt_window without the sent
 * bytes, which prtt_sub_window_take() reads from the slot).
 */
struct prtt_acc {
	uint32_t samples;
	uint32_t armed;
	uint64_t min_ns;
	uint64_t acked_bytes;
	uint64_t acked_ns;
};

/* One direction's summary and window: one line, all a sample writes
 * besides its histogram bucket. */
struct prtt_sub_dir {
	uint64_t samples, min_ns, last_ns;
	struct prtt_acc win;
	uint8_t pad[8];
};
_Static_assert(sizeof(struct prtt_sub_dir) == 64, "one line per direction");

/*
 * One subscriber's results: 1,472 bytes, line-aligned (the slots before
 * them are 256 bytes each). A sample touches its direction's line and one
 * histogram line; the delivered-rate marks live in the slot's lines,
 * which the answer has read already.
 */
struct prtt_sub {
	struct prtt_sub_dir d[2];
	uint64_t sent_taken, wire_taken; /* the slot's sent, sent_wire at the last take */
	uint8_t pad[48];
	uint32_t hist[2][PRTT_HIST_BUCKETS];
};
_Static_assert(sizeof(struct prtt_sub) % 64 == 0, "line-aligned results");

struct prtt {
	struct prtt_params p;
	struct prtt_counters c;
	struct prtt_slot *slots; /* after the header, then subs */
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
	p->subs = 1024;
	p->max_age_ns = 4000000000ULL;
	p->ts_tick_ns = 1000000;
	p->owd_window_ns = 10000000000ULL;
	p->idle_ns = 250000000ULL;
}

static size_t
align64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

size_t
prtt_memsize(const struct prtt_params *p)
{
	if (p == NULL || p->subs == 0 || p->subs > (1u << 24) ||
	    p->ts_tick_ns == 0 || p->max_age_ns == 0 || p->owd_window_ns == 0 ||
	    p->idle_ns == 0)
		return 0;
	return align64(sizeof(struct prtt)) +
	       (size_t)p->subs * sizeof(struct prtt_slot) +
	       (size_t)p->subs * sizeof(struct prtt_sub);
}

static void
window_reset(struct prtt_acc *w)
{
	memset(w, 0, sizeof(*w));
	w->min_ns = UINT64_MAX;
}

struct prtt *
prtt_init(void *mem, const struct prtt_params *p)
{
	size_t sz = prtt_memsize(p);
	struct prtt *t = mem;

	if (sz == 0 || mem == NULL)
		return NULL;
	memset(mem, 0, sz);
	t->p = *p;
	t->slots = (struct prtt_slot *)((uint8_t *)mem + align64(sizeof(*t)));
	t->subs = (struct prtt_sub *)(t->slots + p->subs);
	for (uint32_t s = 0; s < p->subs; s++) {
		t->slots[s].quiet_ns = p->idle_ns;
		for (int d = 0; d < 2; d++)
			window_reset(&t->subs[s].d[d].win);
	}
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
	struct prtt_sub *su = &t->subs[sub];
	struct prtt_sub_dir *sd = &su->d[dir];
	uint32_t *h = &su->hist[dir][prtt_hist_bucket(ns)];

	if (*h == UINT32_MAX) /* keep the shape: halve the whole histogram */
		for (unsigned b = 0; b < PRTT_HIST_BUCKETS; b++)
			su->hist[dir][b] >>= 1;
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
/* Segments.                                                           */

/* The flow of s becomes the subscriber's candidate: its next new data
 * starts the sample. */
static void
take(struct prtt *t, struct prtt_slot *sl, const struct prtt_seg *s,
     uint32_t end, uint64_t now_ns)
{
	sl->h.state = S_CAND;
	sl->h.key = s->flow;
	sl->h.t_ns = now_ns;
	sl->d_seen = now_ns;
	sl->ts = s->has_ts;
	sl->newest = s->has_ts ? s->tsval : end;
	t->c.candidates++;
}

static void
arm(struct prtt *t, struct prtt_slot *sl, uint32_t sub, uint32_t val,
    uint32_t lo, uint64_t now_ns)
{
	sl->h.state = S_ARM;
	sl->val = val;
	sl->lo = lo;
	sl->h.t_ns = now_ns;
	sl->arm_sent = sl->h.sent;
	t->subs[sub].d[PRTT_DOWN].win.armed++;
}

/* Sequence space a segment occupies (SYN and FIN take one each). */
static inline uint32_t
seg_len(uint32_t payload, uint8_t flags)
{
	return payload + ((flags & 0x02) != 0) + ((flags & 0x01) != 0);
}

/*
 * The hot line's deadlines from the state, t_ns, quiet_ns and the pin:
 * what prtt_hot_held() and prtt_up_fast() compare with. Every call that
 * may change them ends here (downstream only until: down() moves neither
 * the pin nor quiet_ns).
 */
static inline void
sync_until(struct prtt_slot *sl)
{
	sl->h.until = sl->h.state != S_NONE ? sl->h.t_ns + sl->quiet_ns + 1 : 0;
}

static inline void
sync_hot(struct prtt_slot *sl)
{
	sync_until(sl);
	sl->h.o_until = sl->o_pinned ? sl->o_seen + sl->quiet_ns + 1 : 0;
}

/* Free the timestamp samples older than max_age; @return how many. */
static unsigned
expire_ts(struct prtt *t, struct prtt_slot *sl, uint64_t now_ns)
{
	unsigned n = 0;

	for (unsigned m = sl->tused; m != 0; m &= m - 1) {
		unsigned i = (unsigned)__builtin_ctz(m);
		if (now_ns - sl->tt[i] > t->p.max_age_ns) {
			sl->tused &= (uint8_t)~(1u << i);
			n++;
		}
	}
	t->c.expired += n;
	return n;
}

/* A downstream segment that occupies sequence space, counted already. */
static void
down(struct prtt *t, struct prtt_slot *sl, const struct prtt_seg *s,
     uint32_t len, uint64_t now_ns)
{
	uint32_t end = s->seq + len;

	if (sl->h.state == S_ARM && now_ns - sl->h.t_ns > t->p.max_age_ns) {
		/* Nobody answered: the flow may be gone. */
		t->c.expired += sl->ts ? (unsigned)__builtin_popcount(sl->tused) : 1;
		sl->tused = 0;
		sl->h.state = S_NONE;
	}
	if (sl->h.key != s->flow && sl->h.state == S_ARM &&
	    now_ns - sl->d_seen > sl->quiet_ns) {
		/* The chosen flow has sent nothing for its quiet time while
		 * its samples wait: an echo that never comes (a receiver
		 * echoes the earliest TSval it has not ACKed, so a flow that
		 * stops after two segments leaves the second's sample
		 * unanswered) would hold the subscriber until max_age. */
		t->c.expired += sl->ts ? (unsigned)__builtin_popcount(sl->tused) : 1;
		sl->tused = 0;
		sl->h.state = S_NONE;
	}
	if (sl->h.key != s->flow || sl->h.state == S_NONE) {
		/* Another flow: it takes the subscriber when no flow is
		 * chosen or the candidate has gone quiet. Most segments of
		 * a busy subscriber end here. */
		if (sl->h.state == S_NONE ||
		    (sl->h.state == S_CAND && now_ns - sl->h.t_ns > sl->quiet_ns))
			take(t, sl, s, end, now_ns);
		return;
	}
	sl->d_seen = now_ns;
	if (sl->h.state == S_CAND)
		sl->h.t_ns = now_ns;
	if (s->has_ts != sl->ts) {
		/* The options changed under us: start over on this one. */
		if (sl->h.state == S_CAND)
			take(t, sl, s, end, now_ns);
		return;
	}
	if (s->has_ts) {
		/* Only the first segment with a TSval may start a sample:
		 * the echo answers the earliest of them (RFC 7323 s. 4.3),
		 * so timing a later one would read short. Since the flow was
		 * chosen, every segment of it has been seen here. A resend
		 * carries a new TSval: no Karn rule. */
		if (!seq_lt(sl->newest, s->tsval))
			return;
		sl->newest = s->tsval;
		if (sl->tused == (1u << TS_SLOTS) - 1 && expire_ts(t, sl, now_ns) == 0)
			return;
		unsigned i = (unsigned)__builtin_ctz(~(unsigned)sl->tused);
		sl->tused |= (uint8_t)(1u << i);
		sl->tv[i] = s->tsval;
		sl->tt[i] = now_ns;
		sl->tsent[i] = sl->h.sent;
		sl->h.state = S_ARM;
		sl->h.t_ns = now_ns;
		t->subs[s->sub].d[PRTT_DOWN].win.armed++;
		t->c.ts_armed++;
		return;
	}
	if (seq_le(sl->newest, s->seq)) {
		/* New data (past everything the flow sent since chosen). */
		sl->newest = end;
		if (sl->h.state == S_CAND) {
			arm(t, sl, s->sub, end, s->seq, now_ns);
			t->c.seq_armed++;
		}
		return;
	}
	/* Some of it was sent before: Karn, no sample may span it, and a
	 * resend never starts one. */
	if (sl->h.state == S_ARM && seq_lt(s->seq, sl->val) && seq_lt(sl->lo, end)) {
		t->c.karn_discarded++;
		sl->h.state = S_CAND;
		sl->h.t_ns = now_ns;
	}
	if (seq_lt(sl->newest, end))
		sl->newest = end;
}

void
prtt_down_segment(struct prtt *t, const struct prtt_seg *s, uint64_t now_ns)
{
	struct prtt_slot *sl;
	uint32_t len;

	if (s->sub >= t->p.subs) {
		t->c.bad_sub++;
		return;
	}
	t->c.segments++;
	len = seg_len(s->payload, s->flags);
	if (len == 0)
		return; /* a pure ACK: nothing answers it */
	sl = &t->slots[s->sub];
	sl->h.sent += s->payload;
	sl->h.sent_wire += s->wire_len;
	down(t, sl, s, len, now_ns);
	sync_until(sl);
}

/* Upstream: (arrival - TSval x tick) against its recent minimum. */
static void
owd_sample(struct prtt *t, struct prtt_slot *sl, const struct prtt_seg *s,
	   uint64_t now_ns)
{
	int64_t x;
	int32_t dts;

	if (!sl->o_valid ||
	    (uint32_t)((s->tsval - sl->o_ts0) + (1u << 30)) >= (1u << 31)) {
		/* First sight, or a TSval too far from the reference to
		 * compute with (a clock jump, 12 days at 1 ms): start over. */
		sl->o_valid = 1;
		sl->o_ts0 = s->tsval;
		sl->o_t0 = now_ns;
		sl->o_last = s->tsval;
		sl->o_min[0] = sl->o_min[1] = 0;
		sl->o_win = now_ns;
		t->c.owd_samples++;
		record(t, s->sub, PRTT_UP, 0);
		return;
	}
	/* Only the first segment of a tick carries its delay; the later ones
	 * of the same TSval left later and would read as a rise. */
	if (!seq_lt(sl->o_last, s->tsval))
		return;
	sl->o_last = s->tsval;
	dts = (int32_t)(s->tsval - sl->o_ts0);
	x = (int64_t)(now_ns - sl->o_t0) - (int64_t)dts * (int64_t)t->p.ts_tick_ns;
	if (now_ns - sl->o_win >= t->p.owd_window_ns) {
		sl->o_min[1] = sl->o_min[0];
		sl->o_min[0] = x;
		sl->o_win = now_ns;
	} else if (x < sl->o_min[0]) {
		sl->o_min[0] = x;
	}
	int64_t base = sl->o_min[0] < sl->o_min[1] ? sl->o_min[0] : sl->o_min[1];
	t->c.owd_samples++;
	record(t, s->sub, PRTT_UP, (uint64_t)(x - base));
}

/*
 * An answered sample: its RTT, and the delivered rate. What left between
 * the starts of two samples arrived between their answers; only when
 * this one started within an RTT of the last answer (it may have started
 * before it): across a pause it would read the pause as a slow path.
 */
static void
hit(struct prtt *t, struct prtt_slot *sl, uint32_t sub, uint64_t rtt,
    uint64_t sent_ns, uint64_t sent_bytes, uint64_t now_ns)
{
	struct prtt_acc *w = &t->subs[sub].d[PRTT_DOWN].win;

	record(t, sub, PRTT_DOWN, rtt);
	/* A flow that sends nothing for two RTTs has stopped (a bulk flow
	 * sends every RTT); never sooner than idle_ns. */
	sl->quiet_ns = 2 * rtt > t->p.idle_ns ? 2 * rtt : t->p.idle_ns;
	if (sent_bytes < sl->dlv_sent)
		return;
	if (sl->dlv_ns != 0 && (int64_t)(sent_ns - sl->dlv_ns) <= (int64_t)rtt) {
		w->acked_bytes += sent_bytes - sl->dlv_sent;
		w->acked_ns += now_ns - sl->dlv_ns;
	}
	sl->dlv_sent = sent_bytes;
	sl->dlv_ns = now_ns;
}

/*
 * An ACK of the sampled flow: does it answer a sample? When none is left
 * in flight, the flow stays the candidate: its next new data starts the
 * next sample.
 */
static void
answer(struct prtt *t, struct prtt_slot *sl, const struct prtt_seg *s,
       uint64_t now_ns)
{
	uint64_t rtt = now_ns - sl->h.t_ns;

	if (sl->ts) {
		if (!s->has_ts)
			return;
		for (unsigned m = sl->tused; m != 0; m &= m - 1) {
			unsigned i = (unsigned)__builtin_ctz(m);
			uint64_t r = now_ns - sl->tt[i];
			bool old = r > t->p.max_age_ns;

			if (s->tsecr == sl->tv[i]) {
				sl->tused &= (uint8_t)~(1u << i);
				if (old) {
					t->c.expired++;
				} else {
					t->c.ts_samples++;
					hit(t, sl, s->sub, r, sl->tt[i], sl->tsent[i], now_ns);
				}
			} else if (seq_lt(sl->tv[i], s->tsecr)) {
				/* Its echo never came by: unknowable. */
				sl->tused &= (uint8_t)~(1u << i);
				if (old)
					t->c.expired++;
				else
					t->c.ts_skipped++;
			}
		}
		if (sl->tused == 0)
			goto cand;
		return;
	}
	if (rtt > t->p.max_age_ns) {
		t->c.expired++;
		goto cand;
	}
	if (seq_le(sl->val, s->ack)) {
		t->c.seq_samples++;
		goto hit;
	}
	for (unsigned i = 0; i < s->nsack && i < 4; i++) {
		uint32_t l = s->sack[i][0], r = s->sack[i][1];
		if (seq_lt(l, r) && seq_le(l, sl->lo) && seq_le(sl->val, r)) {
			t->c.sack_samples++;
			goto hit;
		}
	}
	return;
hit:
	hit(t, sl, s->sub, rtt, sl->h.t_ns, sl->arm_sent, now_ns);
cand:
	sl->h.state = S_CAND;
	sl->h.t_ns = now_ns;
}

/* An upstream segment, counted already. */
static void
up(struct prtt *t, struct prtt_slot *sl, const struct prtt_seg *s,
   uint64_t now_ns)
{
	if (sl->h.key == s->flow && sl->h.state == S_ARM && (s->flags & 0x10))
		answer(t, sl, s, now_ns);
	if (!s->has_ts)
		return;
	/* Upstream delay from one flow per subscriber: its baseline needs a
	 * flow that lasts, and one flow's ticks are plenty (pping takes one
	 * sample per RTT). Another flow takes the pin when it goes quiet. */
	if (!sl->o_pinned || sl->h.okey != s->flow) {
		if (sl->o_pinned && now_ns - sl->o_seen <= sl->quiet_ns)
			return;
		sl->o_pinned = 1;
		sl->h.okey = s->flow;
		sl->o_valid = 0;
		t->c.owd_pins++;
	}
	sl->o_seen = now_ns;
	owd_sample(t, sl, s, now_ns);
}

void
prtt_up_segment(struct prtt *t, const struct prtt_seg *s, uint64_t now_ns)
{
	if (s->sub >= t->p.subs) {
		t->c.bad_sub++;
		return;
	}
	t->c.segments++;
	up(t, &t->slots[s->sub], s, now_ns);
	sync_hot(&t->slots[s->sub]);
}

/* ------------------------------------------------------------------ */
/* Options.                                                            */

int
prtt_tcp_parse(const uint8_t *hdr, uint32_t hdr_len, struct prtt_seg *s)
{
	uint32_t doff, i;

	s->has_ts = 0;
	s->nsack = 0;
	if (hdr_len < 20)
		return -1;
	s->seq = pkt_rd32(hdr + 4);
	s->ack = pkt_rd32(hdr + 8);
	s->flags = hdr[13];
	doff = (uint32_t)(hdr[12] >> 4) * 4;
	if (doff < 20 || doff > hdr_len)
		return -1;
	for (i = 20;;) {
		uint8_t len;
		int kind = pkt_tcpopt_next(hdr, doff, &i, &len);

		if (kind == PKT_TCPOPT_END)
			break;
		if (kind == PKT_TCPOPT_BAD)
			goto bad;
		if (kind == 8) { /* timestamps, RFC 7323 s. 3 */
			if (len != 10)
				goto bad;
			s->tsval = pkt_rd32(hdr + i + 2);
			s->tsecr = pkt_rd32(hdr + i + 6);
			s->has_ts = 1;
		} else if (kind == 5) { /* SACK, RFC 2018 s. 3 */
			if (len < 10 || (len - 2) % 8 != 0)
				goto bad;
			for (uint32_t o = i + 2; o + 8 <= (uint32_t)i + len && s->nsack < 4; o += 8) {
				s->sack[s->nsack][0] = pkt_rd32(hdr + o);
				s->sack[s->nsack][1] = pkt_rd32(hdr + o + 4);
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
/* From the TCP header, read only when needed.                         */

/*
 * The fields of hdr into s. The common layouts are read in place: no
 * options, or NOP NOP TS first (Linux, BSD, macOS; a SACK after it is
 * not read: only flows without timestamps are timed by SACK). Anything
 * else goes through the option parser; what it refuses is counted and
 * timed by sequence.
 */
static inline void
read_hdr(struct prtt *t, const uint8_t *h, uint32_t hl, struct prtt_seg *s)
{
	s->seq = pkt_rd32(h + 4);
	s->ack = pkt_rd32(h + 8);
	s->flags = h[13];
	s->nsack = 0;
	if (hl >= 32 && (uint32_t)(h[12] >> 4) * 4 == hl &&
	    pkt_rd32(h + 20) == 0x0101080au) {
		s->has_ts = 1;
		s->tsval = pkt_rd32(h + 24);
		s->tsecr = pkt_rd32(h + 28);
	} else if (hl == 20) {
		s->has_ts = 0;
		s->tsval = 0; /* (never read without has_ts) */
		s->tsecr = 0;
	} else {
		/* (Into a copy: s's address is then never taken, so the
		 * compiler may keep its fields in registers.) */
		struct prtt_seg p;

		if (prtt_tcp_parse(h, hl, &p) < 0)
			t->c.bad_options++;
		s->has_ts = p.has_ts;
		s->tsval = p.tsval;
		s->tsecr = p.tsecr;
		s->nsack = p.nsack;
		memcpy(s->sack, p.sack, sizeof(s->sack));
	}
}

/* The rare case: the subscriber's own flow, or one that may take it. */
static __attribute__((noinline)) void
down_slow(struct prtt *t, struct prtt_slot *sl, const struct prtt_pkt *p,
	  uint64_t now_ns)
{
	struct prtt_seg s;

	read_hdr(t, p->hdr, p->hdr_len, &s);
	s.flow = p->flow;
	s.sub = p->sub;
	s.payload = p->payload;
	s.wire_len = p->wire_len;
	down(t, sl, &s, seg_len(p->payload, s.flags), now_ns);
	sync_until(sl);
}

void
prtt_down_burst(struct prtt *t, const struct prtt_pkt *pkts, unsigned n,
		uint64_t now_ns)
{
	const uint32_t subs = t->p.subs;
	struct prtt_slot *const slots = t->slots;
	unsigned bad = 0;

	for (unsigned i = 0; i < n; i++) {
		const struct prtt_pkt *p = &pkts[i];
		struct prtt_slot *sl;
		uint32_t len;

		if (unlikely(p->sub >= subs)) {
			bad++;
			continue;
		}
		if (unlikely(p->hdr_len < 20))
			continue;
		/* (The flags byte only matters without payload.) */
		len = p->payload != 0 ? p->payload : seg_len(0, p->hdr[13]);
		if (len == 0)
			continue; /* a pure ACK: nothing answers it */
		sl = &slots[p->sub];
		sl->h.sent += p->payload;
		sl->h.sent_wire += p->wire_len;
		/* Another flow than the subscriber's, while its own is
		 * alive: nothing to read. Most segments end here. */
		if (prtt_hot_held(&sl->h, p->flow, now_ns))
			continue;
		down_slow(t, sl, p, now_ns);
	}
	t->c.bad_sub += bad;
	t->c.segments += n - bad;
}

static __attribute__((noinline)) void
up_slow(struct prtt *t, struct prtt_slot *sl, const struct prtt_pkt *p,
	uint64_t now_ns)
{
	struct prtt_seg s;

	read_hdr(t, p->hdr, p->hdr_len, &s);
	s.flow = p->flow;
	s.sub = p->sub;
	s.payload = 0; /* (not used upstream) */
	s.wire_len = 0;
	up(t, sl, &s, now_ns);
	sync_hot(sl);
}

void
prtt_up_burst(struct prtt *t, const struct prtt_pkt *pkts, unsigned n,
	      uint64_t now_ns)
{
	const uint32_t subs = t->p.subs;
	struct prtt_slot *const slots = t->slots;
	unsigned bad = 0;

	for (unsigned i = 0; i < n; i++) {
		const struct prtt_pkt *p = &pkts[i];
		struct prtt_slot *sl;

		if (unlikely(p->sub >= subs)) {
			bad++;
			continue;
		}
		if (unlikely(p->hdr_len < 20))
			continue;
		sl = &slots[p->sub];
		/* Neither the sampled flow nor the pinned one (alive). */
		if (!(sl->h.key == p->flow && sl->h.state == S_ARM) &&
		    sl->h.okey != p->flow && now_ns < sl->h.o_until)
			continue;
		up_slow(t, sl, p, now_ns);
	}
	t->c.bad_sub += bad;
	t->c.segments += n - bad;
}

void
prtt_fast_get(struct prtt *t, struct prtt_fast *f)
{
	f->slots = &t->slots[0].h;
	f->segments = 0;
	f->subs = t->p.subs;
}

void
prtt_fast_put(struct prtt *t, struct prtt_fast *f)
{
	t->c.segments += f->segments;
	f->segments = 0;
}

/* The slot of a one-segment call's subscriber, the segment counted; NULL
 * for a subscriber out of range (counted) or a header too short to read. */
static inline struct prtt_slot *
seg_slot(struct prtt *t, uint32_t sub, uint32_t hdr_len)
{
	if (unlikely(sub >= t->p.subs)) {
		t->c.bad_sub++;
		return NULL;
	}
	t->c.segments++;
	if (unlikely(hdr_len < 20))
		return NULL;
	return &t->slots[sub];
}

/*
 * One segment, as prtt_down_burst() would take it, without the array: the
 * callers of the inline checks come here with what the check did not
 * take, a few percent of the segments.
 */
void
prtt_down_tcp(struct prtt *t, uint32_t sub, uint64_t flow, const uint8_t *hdr,
	      uint32_t hdr_len, uint32_t payload, uint32_t wire_len,
	      uint64_t now_ns)
{
	struct prtt_slot *sl = seg_slot(t, sub, hdr_len);
	struct prtt_seg s;

	if (sl == NULL)
		return;
	/* (The flags byte only matters without payload.) */
	if (payload == 0 && seg_len(0, hdr[13]) == 0)
		return; /* a pure ACK: nothing answers it */
	sl->h.sent += payload;
	sl->h.sent_wire += wire_len;
	if (prtt_hot_held(&sl->h, flow, now_ns))
		return;
	read_hdr(t, hdr, hdr_len, &s);
	s.flow = flow;
	s.sub = sub;
	s.payload = payload;
	s.wire_len = wire_len;
	down(t, sl, &s, seg_len(payload, s.flags), now_ns);
	sync_until(sl);
}

void
prtt_up_tcp(struct prtt *t, uint32_t sub, uint64_t flow, const uint8_t *hdr,
	    uint32_t hdr_len, uint32_t payload, uint32_t wire_len,
	    uint64_t now_ns)
{
	struct prtt_slot *sl = seg_slot(t, sub, hdr_len);
	struct prtt_seg s;

	(void)payload; /* (not used upstream) */
	(void)wire_len;
	if (sl == NULL)
		return;
	if (!(sl->h.key == flow && sl->h.state == S_ARM) &&
	    sl->h.okey != flow && now_ns < sl->h.o_until)
		return;
	read_hdr(t, hdr, hdr_len, &s);
	s.flow = flow;
	s.sub = sub;
	s.payload = 0;
	s.wire_len = 0;
	up(t, sl, &s, now_ns);
	sync_hot(sl);
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
	out->p50_ns = prtt_hist_percentile(t->subs[sub].hist[dir], 50);
	out->p99_ns = prtt_hist_percentile(t->subs[sub].hist[dir], 99);
	return 0;
}

int
prtt_sub_window_take(struct prtt *t, uint32_t sub, enum prtt_dir dir,
		     struct prtt_window *out)
{
	struct prtt_acc *w;

	if (sub >= t->p.subs || (unsigned)dir > 1)
		return -1;
	w = &t->subs[sub].d[dir].win;
	*out = (struct prtt_window){
		.samples = w->samples,
		.armed = w->armed,
		.min_ns = w->min_ns,
		.acked_bytes = w->acked_bytes,
		.acked_ns = w->acked_ns,
	};
	window_reset(w);
	if (dir == PRTT_DOWN) {
		struct prtt_sub *su = &t->subs[sub];
		const struct prtt_slot *sl = &t->slots[sub];
		out->sent_payload = sl->h.sent - su->sent_taken;
		out->sent_wire = sl->h.sent_wire - su->wire_taken;
		su->sent_taken = sl->h.sent;
		su->wire_taken = sl->h.sent_wire;
	}
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
	return t->subs[sub].hist[dir];
}

int
prtt_sub_reset(struct prtt *t, uint32_t sub)
{
	if (sub >= t->p.subs)
		return -1;
	memset(&t->subs[sub], 0, sizeof(t->subs[sub]));
	memset(&t->slots[sub], 0, sizeof(t->slots[sub]));
	t->slots[sub].quiet_ns = t->p.idle_ns;
	for (int d = 0; d < 2; d++)
		window_reset(&t->subs[sub].d[d].win);
	return 0;
}
