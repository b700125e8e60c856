/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_PRTT_H
#define SLUICE_PRTT_H

/**
 * @file
 * Passive delay measurement per subscriber, in the spirit of pping: no
 * probes, only the subscribers' own TCP traffic as it crosses the box.
 *
 * - Downstream RTT: from a data segment leaving toward the subscriber to
 *   the first ACK from the subscriber that covers it. With TCP timestamps
 *   (RFC 7323) the ACK's TSecr must equal the TSval the segment carried;
 *   without them the ACK's cumulative acknowledgment, or a SACK block
 *   (RFC 2018), must cover the segment's sequence range. Karn: a sequence
 *   sample is dropped when any part of it is sent again.
 * - Upstream one-way-delay variation: each segment of the subscriber's
 *   pinned flow that opens a TSval tick gives (arrival - TSval x tick)
 *   against that flow's minimum over the last two windows. Only the rise
 *   is meaningful: the sender's clock offset cancels.
 *
 * Sampling in the manner of pping, but with no flow table: each
 * subscriber holds at most one downstream sample (one flow, one TSval or
 * sequence range) and one flow pinned for the upstream delay, in a
 * 128-byte slot of its own. Most segments cost a compare of their flow
 * key with the slot's and return. Subscribers are the caller's dense ids
 * (sluice: pipe ids).
 * The caller allocates prtt_memsize() bytes once and passes the time in;
 * nothing allocates, locks or reads a clock. One owner (one lcore) per
 * instance.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Directions, relative to the subscriber. */
enum prtt_dir {
	PRTT_DOWN = 0, /**< RTT beyond the box toward the subscriber */
	PRTT_UP = 1,   /**< one-way-delay rise of the subscriber's segments */
};

/** Log histogram: 16 linear buckets of 1.024 us, then 8 per octave. */
#define PRTT_HIST_BUCKETS 160

/** Counters of one instance; every one is exported by the caller. */
#define PRTT_COUNTER_LIST(X) \
	X(segments,        "TCP segments looked at") \
	X(ts_armed,        "timestamp samples started (a new TSval toward the subscriber)") \
	X(seq_armed,       "sequence samples started (new data, no timestamps)") \
	X(ts_samples,      "RTT samples matched by TSecr") \
	X(seq_samples,     "RTT samples matched by a cumulative ACK") \
	X(sack_samples,    "RTT samples matched by a SACK block") \
	X(karn_discarded,  "sequence samples dropped: the range was sent again") \
	X(ts_skipped,      "timestamp samples dropped: a newer TSecr came first") \
	X(expired,         "samples dropped: no answer within max_age") \
	X(owd_samples,     "upstream one-way-delay samples") \
	X(candidates,      "flows that became a subscriber's next one to sample") \
	X(owd_pins,        "flows pinned for a subscriber's upstream delay") \
	X(bad_sub,         "segments of a subscriber id out of range (ignored)") \
	X(bad_options,     "TCP headers read whose options did not parse (timed by sequence)")

/** Instance counters. */
struct prtt_counters {
#define PRTT_CNT_FIELD(n, d) uint64_t n;
	PRTT_COUNTER_LIST(PRTT_CNT_FIELD)
#undef PRTT_CNT_FIELD
};

/** Parameters, fixed at init. */
struct prtt_params {
	uint32_t subs;        /**< subscriber ids 0..subs-1 */
	uint64_t max_age_ns;  /**< a sample not answered by then is dropped */
	uint64_t ts_tick_ns;  /**< the peers' TSval clock tick (Linux: 1 ms) */
	uint64_t owd_window_ns; /**< upstream baseline: min over 2 such windows */
	/**
	 * A flow that holds a subscriber's candidate or upstream pin and
	 * sends nothing for this long, or for twice the subscriber's last
	 * RTT sample if that is longer, gives it up to the next flow.
	 */
	uint64_t idle_ns;
};

/** One TCP segment as the library needs it (prtt_tcp_parse() fills most). */
struct prtt_seg {
	/**
	 * The same for both directions of a connection (any value, 0 too),
	 * and distinct between the connections of one subscriber (a
	 * collision only costs a sample: the TSecr or ACK must match too).
	 */
	uint64_t flow;
	uint32_t sub;        /**< subscriber id */
	uint32_t seq, ack;
	uint32_t payload;    /**< payload bytes */
	uint32_t wire_len;   /**< frame bytes, for delivered-rate accounting */
	uint32_t tsval, tsecr;
	uint8_t flags;       /**< TCP flags byte (FIN 0x01, SYN 0x02, ACK 0x10) */
	uint8_t has_ts;
	uint8_t nsack;       /**< SACK blocks, at most 4 */
	uint32_t sack[4][2]; /**< [left, right) edges */
};

/** What a subscriber's delay looked like (prtt_sub_summary()). */
struct prtt_summary {
	uint64_t samples;
	uint64_t min_ns, p50_ns, p99_ns, last_ns; /**< 0 without samples */
};

/**
 * What accumulated for one subscriber and direction since the last
 * prtt_sub_window_take(): what a controller needs each tick.
 */
struct prtt_window {
	uint32_t samples;
	uint32_t armed;          /**< samples started (DOWN) */
	uint64_t min_ns;         /**< smallest sample (UINT64_MAX: none) */
	/**
	 * DOWN: payload bytes delivered over acked_ns, estimated from the
	 * samples (what was sent toward the subscriber between the starts
	 * of two consecutive samples arrived between their answers); the
	 * rate is acked_bytes / acked_ns.
	 */
	uint64_t acked_bytes;
	uint64_t acked_ns;
	uint64_t sent_payload;   /**< DOWN: payload bytes sent toward the subscriber */
	uint64_t sent_wire;      /**< DOWN: frame bytes of those segments */
};

struct prtt;

/** Defaults: 1024 subscribers, 4 s, 1 ms tick, 10 s window, 250 ms idle. */
void prtt_params_default(struct prtt_params *p);

/** Bytes an instance with p needs, or 0 if p is invalid. */
size_t prtt_memsize(const struct prtt_params *p);

/**
 * Build an instance in mem (prtt_memsize() bytes, 64-byte aligned, any
 * content). @return the handle (== mem), or NULL if p is invalid.
 */
struct prtt *prtt_init(void *mem, const struct prtt_params *p);

/**
 * A data segment (or SYN/FIN) leaves toward the subscriber at now_ns:
 * start the subscriber's sample if none is in flight and the flow is its
 * candidate; Karn's rule on resends of the sampled flow.
 */
void prtt_down_segment(struct prtt *t, const struct prtt_seg *s, uint64_t now_ns);

/**
 * A segment from the subscriber arrives at now_ns: match its ACK against
 * the subscriber's sample in flight; with a timestamp, an upstream OWD
 * sample if its flow is the pinned one and it opens a new tick.
 */
void prtt_up_segment(struct prtt *t, const struct prtt_seg *s, uint64_t now_ns);

/**
 * The first line of a subscriber's slot: what the inline checks below
 * read (lib/prtt's own state; callers never write it).
 */
struct prtt_hot {
	uint64_t key;       /**< the chosen flow */
	/**
	 * The chosen flow holds the subscriber for segments of other flows
	 * while now_ns < until: t_ns + quiet_ns + 1 with a flow chosen or
	 * samples in flight, else 0 (kept by lib/prtt with t_ns, quiet_ns
	 * and state, so that the checks need one compare).
	 */
	uint64_t until;
	/*
	 * (sent and sent_wire are not next to each other: as a pair, gcc
	 * adds both in one vector operation, which takes 6 instructions
	 * against 2 for two scalar adds.)
	 */
	uint64_t sent;      /**< payload bytes sent toward the subscriber, ever */
	uint64_t t_ns;      /**< samples in flight: the newest's start; else the flow's last segment */
	uint64_t sent_wire; /**< their frame bytes */
	uint64_t okey;      /**< the flow pinned for the upstream delay (while o_until != 0) */
	/** The pinned flow keeps the pin while now_ns < o_until: its last
	 * segment + quiet_ns + 1, 0 with none pinned. */
	uint64_t o_until;
	uint8_t state;      /**< 0: no flow chosen, 1: chosen, 2: samples in flight */
	uint8_t pad[7];
};

/**
 * True if the subscriber's chosen flow is another than flow and is alive
 * (chosen, or with samples in flight, and not quiet for its quiet time):
 * a downstream segment of flow then has nothing to do but count.
 */
static inline bool
prtt_hot_held(const struct prtt_hot *h, uint64_t flow, uint64_t now_ns)
{
	return h->key != flow && now_ns < h->until;
}

/** What the inline checks need, from prtt_fast_get(), for one burst. */
struct prtt_fast {
	struct prtt_hot *slots;   /**< 256 bytes apart */
	uint64_t segments;        /**< taken by the checks; prtt_fast_put() counts them */
	uint32_t subs;
};

/** Start a burst of inline checks. */
void prtt_fast_get(struct prtt *t, struct prtt_fast *f);

/** End it: the segments the checks took are counted. */
void prtt_fast_put(struct prtt *t, struct prtt_fast *f);

/** The subscriber's slot. */
static inline struct prtt_hot *
prtt_fast_slot(const struct prtt_fast *f, uint32_t sub)
{
	return (struct prtt_hot *)((uint8_t *)f->slots + (size_t)sub * 256);
}

/**
 * Bring subscriber sub's first line toward the cache, for a check that
 * comes a few packets later. sub may be out of range: the address is only
 * prefetched, never read, and a prefetch does not fault.
 */
static inline void
prtt_fast_prefetch(const struct prtt_fast *f, uint32_t sub)
{
	__builtin_prefetch((const void *)((uintptr_t)f->slots + (uintptr_t)sub * 256), 1, 3);
}

/**
 * A downstream segment with payload of flow (see struct prtt_seg) for
 * subscriber sub: if it is not the subscriber's chosen flow and that one
 * is alive, it only counts, and this returns true. Else (false) the
 * caller passes it to prtt_down_tcp().
 */
static inline bool
prtt_down_fast(struct prtt_fast *f, uint32_t sub, uint64_t flow,
	       uint32_t payload, uint32_t wire_len, uint64_t now_ns)
{
	struct prtt_hot *h;

	if (sub >= f->subs || payload == 0) /* (SYN/FIN: the header decides) */
		return false;
	h = prtt_fast_slot(f, sub);
	if (!prtt_hot_held(h, flow, now_ns))
		return false;
	h->sent += payload;
	h->sent_wire += wire_len;
	f->segments++;
	return true;
}

/**
 * An upstream segment of flow from subscriber sub: true if it is neither
 * the sampled flow (with samples in flight) nor the pinned one, and the
 * pinned one is alive: nothing to do. Else the caller passes it to
 * prtt_up_tcp().
 */
static inline bool
prtt_up_fast(struct prtt_fast *f, uint32_t sub, uint64_t flow, uint64_t now_ns)
{
	const struct prtt_hot *h;

	if (sub >= f->subs)
		return false;
	h = prtt_fast_slot(f, sub);
	/* (o_until is 0 with none pinned: okey is then no flow.) */
	if ((h->key == flow && h->state == 2) || h->okey == flow || now_ns >= h->o_until)
		return false;
	f->segments++;
	return true;
}

/*
 * The same checks on the upper 32 bits of the flow key alone, for a
 * caller whose key has a part that is cheaper to make (sluice's: the
 * ports): when they differ from the chosen (and pinned) flow's, the
 * segment is of another flow, and these take it as prtt_down_fast() and
 * prtt_up_fast() would. false says nothing: the caller makes the whole
 * key and calls those.
 */
static inline uint32_t
prtt_key_hi(uint64_t key)
{
	return (uint32_t)(key >> 32);
}

/** prtt_down_fast() on the key's upper 32 bits (see above). */
static inline bool
prtt_down_fast_hi(struct prtt_fast *f, uint32_t sub, uint32_t flow_hi,
		  uint32_t payload, uint32_t wire_len, uint64_t now_ns)
{
	struct prtt_hot *h;

	if (sub >= f->subs || payload == 0)
		return false;
	h = prtt_fast_slot(f, sub);
	if (prtt_key_hi(h->key) == flow_hi || now_ns >= h->until)
		return false;
	h->sent += payload;
	h->sent_wire += wire_len;
	f->segments++;
	return true;
}

/** prtt_up_fast() on the key's upper 32 bits (see above). */
static inline bool
prtt_up_fast_hi(struct prtt_fast *f, uint32_t sub, uint32_t flow_hi, uint64_t now_ns)
{
	const struct prtt_hot *h;

	if (sub >= f->subs)
		return false;
	h = prtt_fast_slot(f, sub);
	if (prtt_key_hi(h->key) == flow_hi || prtt_key_hi(h->okey) == flow_hi ||
	    now_ns >= h->o_until)
		return false;
	f->segments++;
	return true;
}

/** One TCP segment for the burst calls: its header is read only if needed. */
struct prtt_pkt {
	const uint8_t *hdr;  /**< the TCP header */
	uint64_t flow;       /**< as in struct prtt_seg */
	uint32_t sub;        /**< subscriber id */
	uint32_t hdr_len;    /**< the data offset's worth of bytes */
	uint32_t payload;    /**< payload bytes (downstream only) */
	uint32_t wire_len;   /**< frame bytes (downstream only) */
};

/**
 * prtt_down_segment() for n segments from their TCP headers: a header is
 * read only if the subscriber's state needs it, so a segment of a flow
 * the subscriber does not sample costs a compare.
 */
void prtt_down_burst(struct prtt *t, const struct prtt_pkt *pkts, unsigned n,
		     uint64_t now_ns);

/** prtt_up_segment() for n segments, headers read only if needed. */
void prtt_up_burst(struct prtt *t, const struct prtt_pkt *pkts, unsigned n,
		   uint64_t now_ns);

/**
 * prtt_down_segment() from the TCP header itself (hdr_len bytes: the data
 * offset's worth): the header is read only if the subscriber's state
 * needs it, so a segment of a flow the subscriber does not sample costs a
 * compare. flow as in struct prtt_seg; payload and wire_len in bytes.
 */
void prtt_down_tcp(struct prtt *t, uint32_t sub, uint64_t flow, const uint8_t *hdr,
		   uint32_t hdr_len, uint32_t payload, uint32_t wire_len,
		   uint64_t now_ns);

/** prtt_up_segment() from the TCP header, read only if needed (as above). */
void prtt_up_tcp(struct prtt *t, uint32_t sub, uint64_t flow, const uint8_t *hdr,
		 uint32_t hdr_len, uint32_t payload, uint32_t wire_len,
		 uint64_t now_ns);

/**
 * Parse a TCP header (hdr, hdr_len bytes: the data offset's worth) into
 * s: seq, ack, flags, timestamps and SACK blocks. flow, sub, payload and
 * wire_len are left to the caller.
 * @return 0, or -1 if the header or its options are malformed (then s
 *   holds seq/ack/flags when they could be read, has_ts = nsack = 0).
 */
int prtt_tcp_parse(const uint8_t *hdr, uint32_t hdr_len, struct prtt_seg *s);

/** Summary of one subscriber and direction (all samples since init). */
int prtt_sub_summary(const struct prtt *t, uint32_t sub, enum prtt_dir dir,
		     struct prtt_summary *out);

/** Take (and reset) one subscriber's window. @return 0 or -1 (bad sub). */
int prtt_sub_window_take(struct prtt *t, uint32_t sub, enum prtt_dir dir,
			 struct prtt_window *out);

/**
 * Forget one subscriber's histograms, summary and window (its id is given
 * to another subscriber), and its sample and pin. @return 0 or -1 (bad sub).
 */
int prtt_sub_reset(struct prtt *t, uint32_t sub);

/** The instance's counters. */
const struct prtt_counters *prtt_counters(const struct prtt *t);

/** The subscriber capacity it was built with. */
uint32_t prtt_subs(const struct prtt *t);

/**
 * The histogram of one subscriber and direction (PRTT_HIST_BUCKETS
 * counts), e.g. to add several workers' together. NULL if sub is bad.
 */
const uint32_t *prtt_sub_hist(const struct prtt *t, uint32_t sub, enum prtt_dir dir);

/** Percentile pct (1..100) of a histogram: the bucket's middle, in ns; 0 if empty. */
uint64_t prtt_hist_percentile(const uint32_t *hist, unsigned pct);

/** Histogram bucket of a delay in ns (exposed for tests). */
unsigned prtt_hist_bucket(uint64_t ns);

/** Lower edge of bucket b, in ns. */
uint64_t prtt_hist_lower_ns(unsigned b);

/** Names and descriptions of the counters, in struct order. */
extern const char *const prtt_counter_names[];
/** Number of counters. */
#define PRTT_NB_COUNTERS (sizeof(struct prtt_counters) / sizeof(uint64_t))

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_PRTT_H */
