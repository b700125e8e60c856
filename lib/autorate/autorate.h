/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_AUTORATE_H
#define SLUICE_AUTORATE_H

/**
 * @file
 * A shaper rate that follows a varying bottleneck beyond the box: the
 * control law alone, for one pipe and direction, driven once per tick by
 * the caller with what it measured during that tick (delay samples, bytes
 * delivered and sent, whether the pipe was backlogged). The caller applies
 * the rate; the library only decides it. No clock, no allocation, no
 * global state: the state is the caller's struct.
 *
 * The law, per tick (README.md has the why):
 * - no delay sample: IDLE, nothing changes; but if samples were started
 *   and none came back for stall_ns, STALL: the rate drops to the floor
 *   (the link beyond went dark; whatever was sent piles up there);
 * - delay = the tick's smallest sample; baseline = the smallest ever seen,
 *   rising by 1/2^baseline_shift of the gap each clear tick (a route may
 *   lengthen); delta = delay - baseline;
 * - delta >= bloat_ns (+ spacing_bytes at the rate): a queue stands beyond the box, so what it
 *   delivers is the bottleneck's rate: cap = the lower of this tick's
 *   delivery and the spell's average (the ticks under a queue since the
 *   last clear one); not on a spell's first tick when its delivery rose
 *   by half over the tick before, or the tick before was idle (slow
 *   start: its ACKs report what was sent an RTT ago). CUT to
 *   max(floor, cap x f) if that is below the rate, f = 1 - delta / drain_ns clamped to
 *   [cut_min, cut_max]: the deeper the queue, the faster it drains;
 * - the first clear tick (delta < bloat_ns / 2) after cuts: RECOVER to
 *   cap x cut_max (the queue has drained; go back near the capacity);
 * - clear and saturated (backlogged, or sent >= load of the rate; at or
 *   above the last capacity measured, backlogged only): RAISE
 *   by raise_pm per mille, up to the ceiling; each further RAISE in a row
 *   adds half a step more, up to 4 steps (a link that came back is found
 *   in a second, not in ten); above the last capacity measured, quarter
 *   steps for calm_raises ticks first (probing past it fills the queue
 *   beyond), and only while the far end takes keep_pm per mille of what
 *   was sent (else HOLD, the run of raises kept); while it delivers
 *   less than 1.125 x that capacity, to at most rate x delivered / sent
 *   / keep_pm;
 * - otherwise HOLD.
 */

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What a tick did. Declared once for the enum, names and counters. */
#define AUTORATE_EVENT_LIST(X) \
	X(IDLE,    "idle") \
	X(HOLD,    "hold") \
	X(RAISE,   "raise") \
	X(CUT,     "cut") \
	X(RECOVER, "recover") \
	X(STALL,   "stall")

enum autorate_event {
#define AUTORATE_EV_ENUM(e, s) AUTORATE_##e,
	AUTORATE_EVENT_LIST(AUTORATE_EV_ENUM)
#undef AUTORATE_EV_ENUM
	AUTORATE_EVENT_MAX
};

/** Parameters of one pipe and direction. */
struct autorate_params {
	uint64_t floor_bps;      /**< never below */
	uint64_t ceiling_bps;    /**< never above */
	uint64_t interval_ns;    /**< tick (the caller's; used for rates) */
	uint64_t bloat_ns;       /**< delay rise that means a queue beyond */
	uint64_t drain_ns;       /**< cut depth: f = 1 - delta / drain_ns */
	uint64_t stall_ns;       /**< no answer for this long: STALL */
	uint32_t cut_min_pm;     /**< deepest cut, per mille of cap */
	uint32_t cut_max_pm;     /**< shallowest cut; also RECOVER's share */
	uint32_t raise_pm;       /**< RAISE step, per mille of the rate */
	uint32_t load_pm;        /**< saturated: sent >= load_pm/1000 of the rate */
	uint32_t baseline_shift; /**< baseline rises by 1/2^shift of the gap */
	/**
	 * A sample ends at an ACK, and a receiver ACKs every second segment,
	 * so at a low rate a sample holds the wait for the next segment(s):
	 * the bloat threshold grows by spacing_bytes at the current rate
	 * (default 2 x 1514: 18.6 ms at 1.3 Mbit/s, 1.2 ms at 20 Mbit/s;
	 * 4 x 1514 until the lab compared them, lib/autorate/README.md).
	 */
	uint32_t spacing_bytes;
	uint32_t calm_raises;    /**< quarter-step RAISEs above the last capacity first */
	/**
	 * Above the last capacity, RAISE only while delivered >= keep_pm /
	 * 1000 of sent, and while less than 1.125 x that capacity is
	 * delivered, to at most rate x delivered / sent / keep_pm (0: no
	 * such check). Default 900: the rate stops a ninth past the link
	 * at once, not when its queue beyond is bloat_ns deep.
	 */
	uint32_t keep_pm;
};

/** Per-tick measurements. */
struct autorate_input {
	uint32_t samples;         /**< delay samples this tick */
	uint32_t armed;           /**< samples started this tick */
	uint64_t delay_ns;        /**< smallest sample (if samples) */
	uint64_t delivered_bytes; /**< what reached the far end (wire bytes) */
	uint64_t sent_bytes;      /**< what the pipe sent (wire bytes) */
	bool backlogged;          /**< the pipe held packets at the tick */
};

/** State of one pipe and direction; the caller owns it. */
struct autorate_state {
	uint64_t rate_bps;       /**< the rate in force */
	uint64_t cap_bps;        /**< delivered rate last seen under a queue; 0 unknown */
	uint64_t baseline_ns;
	uint64_t last_ns;        /**< previous tick */
	uint64_t last_sample_ns; /**< last tick with a sample */
	uint64_t delta_ns;       /**< last delta, for logs */
	uint64_t spell_bytes;    /**< delivered since the last clear tick */
	uint64_t spell_ns;       /**< and over how long */
	uint64_t last_del_bps;   /**< the previous tick's delivered rate (0: idle) */
	uint32_t armed_since;    /**< samples started since the last answer */
	uint32_t raises;         /**< RAISE ticks in a row */
	bool have_baseline;
	bool cutting;            /**< cuts since the last clear tick */
	bool in_spell;           /**< under a queue since the last clear tick */
};

/** Defaults: 50 ms tick, 12 ms bloat, 100 ms drain, 1 s stall, cut 0.1..0.9, +5 %, 75 % load, 1/64. */
void autorate_params_default(struct autorate_params *p);

/** Check p (floor <= ceiling, both > 0, fractions in range). @return 0 or -1. */
int autorate_params_check(const struct autorate_params *p);

/**
 * The parameters of one pipe: base (the [aqm] keys) with the pipe's own
 * floor and ceiling where it has them (a subscriber CSV's columns; 0: the
 * base's), and a ceiling of 0 read as the pipe's configured rate
 * configured_bps. A ceiling below the floor is raised to the floor.
 */
void autorate_params_for_pipe(const struct autorate_params *base,
			      uint64_t own_floor_bps, uint64_t own_ceiling_bps,
			      uint64_t configured_bps, struct autorate_params *out);

/** Start at rate_bps (clamped to [floor, ceiling]) at now_ns. */
void autorate_init(struct autorate_state *s, const struct autorate_params *p,
		   uint64_t rate_bps, uint64_t now_ns);

/**
 * One tick: update s->rate_bps from in.
 * @return what happened; the rate changed iff RAISE, CUT, RECOVER or STALL
 *   (and then s->rate_bps differs from before).
 */
enum autorate_event autorate_tick(struct autorate_state *s,
				  const struct autorate_params *p,
				  const struct autorate_input *in, uint64_t now_ns);

/** "raise", "cut", ... */
const char *autorate_event_name(enum autorate_event e);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_AUTORATE_H */
