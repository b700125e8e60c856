/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_RWND_H
#define SLUICE_RWND_H

/**
 * @file
 * Receive-window clamp: hold a TCP sender's data in flight to what its
 * path needs plus a little headroom, by lowering the window field of the
 * ACKs its receiver sends back through the box.
 *
 * Why: a sender that ignores CE marks and barely answers drops (BBR v1
 * keeps about two estimated BDPs plus three send quanta in flight per
 * flow) builds a standing queue that no drop or mark rule removes. Every
 * sender obeys the receiver's window.
 *
 * What it keeps per connection (one 64-byte entry, created only when the
 * box sees its SYN): each side's window scale (from the SYN and the
 * SYN-ACK), the round trip from the box to each side (the handshake's two
 * legs), the highest sequence each side has sent, and each side's rate
 * past the box (acknowledged bytes over windows of at least 10 ms). For
 * an ACK from side r, about the data of side d:
 *
 *     out    = snd_max[d] - ack       (what d sent and r has not acked)
 *     beyond = out - backlog          (backlog: d's bytes queued in the box)
 *     rate   = min(max(rate[d], beyond / leg[r]), cap)
 *     path   = beyond + rate x (leg[d] + extra)
 *     window = path + path / 2 + min(rate[d], cap) x hold + headroom
 *
 * beyond is what is on r's side of the box; rate x (leg[d] + extra) is
 * what d must have in flight on its own leg, and while the ACK waits in
 * the box (extra), to keep sending at its rate. Half as much again
 * covers what the legs leave out (delayed ACKs, jitter, a round trip
 * longer than the handshake's): without it a flow on a long path settles
 * at whatever rate it has and never climbs. hold is how long the box has
 * lately held r's ACKs back (an ACK hold passes a connection's newest
 * ACK on about once per slot's life): the window must carry d at its own
 * rate that much longer. It is measured, so it gets no half again, and
 * counts d's measured rate (beyond / leg[r] until the first): a released
 * ACK acknowledges a hold's worth at once, and beyond / leg[r] jumps
 * with it. cap, the rate of the data's own pipe, bounds both: on a leg
 * floored at min_leg, beyond / leg[r] can read far above any rate the
 * flow can have. The headroom is what d may keep queued in the box. The
 * rule needs no share from the shaper: a flow whose share grows drains
 * faster, and its window follows.
 * A flow is clamped once its queue in the box reaches the headroom, and
 * released when everything it sent is acknowledged and it has sent
 * nothing new for quiet_ns (an idle flow's next burst is not held back; a
 * clamped bulk flow, acknowledged in full between two of its rounds,
 * stays clamped). The window is only ever lowered, never to less than one
 * unit of the scale.
 *
 * No global state, no allocation, no clock: the caller allocates
 * rwnd_memsize() bytes once and passes the time in. One owner (one lcore)
 * per instance. Plain C; no DPDK needed.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The side that sent a segment. */
enum rwnd_side {
	RWND_SUB = 0, /**< the subscriber's side (the segment travels up) */
	RWND_NET = 1, /**< the internet side (it travels down) */
};

/** Counters of one instance; every one is exported by the caller. */
#define RWND_COUNTER_LIST(X) \
	X(segments,     "TCP segments looked at") \
	X(syns,         "SYNs without ACK seen (each starts or restarts an entry)") \
	X(handshakes,   "connections whose handshake gave both legs and both scales") \
	X(ambiguous,    "handshakes with a SYN or SYN-ACK sent twice: a leg unknown, never clamped") \
	X(evicted,      "live entries taken for a new connection (the table was full)") \
	X(expired,      "idle entries taken for a new connection") \
	X(resets,       "entries freed by a RST") \
	X(bad_syn,      "SYNs whose options did not parse (not tracked)") \
	X(engaged,      "flows that began to be clamped (their queue reached the headroom)") \
	X(released,     "clamped flows released (all they sent was acknowledged)") \
	X(clamped,      "ACKs whose window was lowered") \
	X(not_lowered,  "ACKs of clamped flows whose own window was already below the clamp") \
	X(syn_queued,   "SYNs and SYN-ACKs that waited in the box's queue: their leg starts when they left")

/** Instance counters. */
struct rwnd_counters {
#define RWND_CNT_FIELD(n, d) uint64_t n;
	RWND_COUNTER_LIST(RWND_CNT_FIELD)
#undef RWND_CNT_FIELD
};

/** Number of counters, and their names and descriptions, in order. */
#define RWND_NB_COUNTERS (sizeof(struct rwnd_counters) / sizeof(uint64_t))
extern const char *const rwnd_counter_names[];
extern const char *const rwnd_counter_help[];

/** Parameters, fixed at init. */
struct rwnd_params {
	uint32_t flows;       /**< entries, a power of two >= 4 (4-way sets) */
	uint32_t headroom;    /**< bytes a clamped flow may queue in the box, >= 1 */
	uint64_t idle_ns;     /**< an entry idle this long is free for a new connection */
	/** Floor of leg[r] in the rule (a leg of a few microseconds would
	 * read a delayed ACK as a huge rate). */
	uint64_t min_leg_ns;
	/**
	 * A clamped flow is released when an ACK covers everything its
	 * sender sent and that sender has sent nothing new for this long
	 * plus four times its two legs: its next data is a new burst.
	 */
	uint64_t quiet_ns;
};

/** One TCP segment as the library needs it (rwnd_seg_parse() fills most). */
struct rwnd_seg {
	uint32_t hash;    /**< direction-symmetric hash of the connection */
	uint32_t ports;   /**< direction-symmetric port pair (rwnd_ports()) */
	uint32_t seq, ack;
	uint32_t payload; /**< payload bytes */
	uint16_t win;     /**< the window field as sent (host order) */
	uint8_t flags;    /**< TCP flags byte (FIN 0x01, SYN 0x02, RST 0x04, ACK 0x10) */
	uint8_t side;     /**< enum rwnd_side of the sender */
	int8_t wscale;    /**< a SYN's window-scale option (0..14), -1 without */
	uint8_t bad;      /**< rwnd_seg_parse() refused a SYN's options: the
			   *   SYN is counted (bad_syn) and not tracked */
	uint8_t pad[2];
};

/** An entry handed from rwnd_track() to rwnd_window(). */
struct rwnd_ref {
	uint32_t idx;
	uint32_t now;     /**< (internal) the time, in ticks of 1.024 us */
	uint32_t now_ms;  /**< (internal) the time, in units of 2^20 ns */
};

struct rwnd;

/** Defaults: 65536 flows, 3000 bytes, 30 s idle, 100 us floor, 250 ms quiet. */
void rwnd_params_default(struct rwnd_params *p);

/** Bytes an instance with p needs, or 0 if p is invalid. */
size_t rwnd_memsize(const struct rwnd_params *p);

/**
 * Build an instance in mem (rwnd_memsize() bytes, 64-byte aligned, any
 * content). @return the handle (== mem), or NULL if p is invalid.
 */
struct rwnd *rwnd_init(void *mem, const struct rwnd_params *p);

/** The port pair, the same both ways: the lower port in the high half. */
static inline uint32_t
rwnd_ports(uint16_t a, uint16_t b)
{
	return a < b ? (uint32_t)a << 16 | b : (uint32_t)b << 16 | a;
}

/**
 * Read seq, ack, flags and the window from a TCP header of hdr_len bytes
 * (the data offset, options included), and a SYN's window scale. Leaves
 * hash, ports, payload and side alone.
 * @return 0, or -1 if the header is short or a SYN's options do not parse
 * (s->wscale is then -1 and s->bad 1).
 */
int rwnd_seg_parse(const uint8_t *hdr, uint32_t hdr_len, struct rwnd_seg *s);

/**
 * Account one segment crossing the box at now_ns, in either direction:
 * the handshake, each side's highest sequence, RST.
 * @return true if s is an ACK of an established connection whose
 * handshake gave both legs (and the other side has sent something); then
 * call rwnd_window() with ref: it also measures the other side's rate.
 */
bool rwnd_track(struct rwnd *t, const struct rwnd_seg *s, uint64_t now_ns,
		struct rwnd_ref *ref);

/**
 * A SYN or SYN-ACK that rwnd_track() saw arrive left the box at now_ns,
 * after waiting in its queue. The leg it starts (the round trip from the
 * box to its receiver and back) is then timed from now_ns: the time it
 * waited here is not the path's, and a leg that counts it lets every
 * window of the connection hold that much more. Segments that are not
 * the handshake's, or not the one the entry is waiting on, are ignored.
 * The caller calls it for segments that were queued, not for those sent
 * at once (their arrival was their departure).
 */
void rwnd_departed(struct rwnd *t, const struct rwnd_seg *s, uint64_t now_ns);

/**
 * The window field s should carry, after rwnd_track() returned true.
 * @param backlog  bytes of the other side's data of this connection
 *                 queued in the box now (0 if unknown).
 * @param extra_ns time s will wait in the box before it leaves, added to
 *                 the data sender's leg (sluice: the whole ACK hold, for
 *                 a flow with nothing queued here).
 * @param hold_ns  how long the box has lately held back the ACKs of s's
 *                 pipe (0: none), counted at the data sender's measured
 *                 rate after the half again.
 * @param cap_Bps  the rate of the data's own pipe in bytes per second:
 *                 the most any rate in the rule is counted at; 0 for no
 *                 bound.
 * @return the field to write: s->win, or a lower value.
 */
uint16_t rwnd_window(struct rwnd *t, const struct rwnd_ref *ref,
		     const struct rwnd_seg *s, uint32_t backlog, uint64_t extra_ns,
		     uint64_t hold_ns, uint64_t cap_Bps);

/**
 * Write window field win into the TCP header at hdr, updating its
 * checksum incrementally (RFC 1624, eqn. 3) unless csum_partial (the NIC
 * computes it: the field then holds only the pseudo-header sum, which
 * does not cover the window).
 */
void rwnd_write(uint8_t *hdr, uint16_t win, bool csum_partial);

/** The instance's counters. */
const struct rwnd_counters *rwnd_counters(const struct rwnd *t);

/** Entries in use (for telemetry; walks the table). */
uint32_t rwnd_entries(const struct rwnd *t, uint64_t now_ns);

#ifdef __cplusplus
}
#endif

#endif
