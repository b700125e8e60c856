/* SPDX-License-Identifier: BSD-3-Clause */
/* The autorate control law; see autorate.h and README.md. */
#include "autorate.h"

static const char *const event_names[] = {
#define AUTORATE_EV_NAME(e, s) s,
	AUTORATE_EVENT_LIST(AUTORATE_EV_NAME)
#undef AUTORATE_EV_NAME
};

const char *
autorate_event_name(enum autorate_event e)
{
	return (unsigned)e < AUTORATE_EVENT_MAX ? event_names[e] : "?";
}

void
autorate_params_default(struct autorate_params *p)
{
	p->floor_bps = 1000000;
	p->ceiling_bps = 100000000;
	p->interval_ns = 50000000;
	p->bloat_ns = 12000000;
	p->drain_ns = 100000000;
	p->stall_ns = 1000000000;
	p->cut_min_pm = 100;
	p->cut_max_pm = 900;
	p->raise_pm = 50;
	p->load_pm = 750;
	p->baseline_shift = 6;
	p->spacing_bytes = 2 * 1514;
	p->calm_raises = 10;
	p->keep_pm = 900;
}

int
autorate_params_check(const struct autorate_params *p)
{
	if (p->floor_bps == 0 || p->ceiling_bps < p->floor_bps ||
	    p->interval_ns == 0 || p->drain_ns == 0 || p->bloat_ns == 0 ||
	    p->cut_min_pm == 0 || p->cut_min_pm > p->cut_max_pm ||
	    p->cut_max_pm >= 1000 || p->raise_pm == 0 || p->raise_pm > 1000 ||
	    p->load_pm == 0 || p->load_pm > 1000 || p->keep_pm > 1000 ||
	    p->baseline_shift > 20)
		return -1;
	return 0;
}

void
autorate_params_for_pipe(const struct autorate_params *base,
			 uint64_t own_floor_bps, uint64_t own_ceiling_bps,
			 uint64_t configured_bps, struct autorate_params *out)
{
	*out = *base;
	if (own_floor_bps != 0)
		out->floor_bps = own_floor_bps;
	if (own_ceiling_bps != 0)
		out->ceiling_bps = own_ceiling_bps;
	if (out->ceiling_bps == 0)
		out->ceiling_bps = configured_bps;
	if (out->ceiling_bps < out->floor_bps)
		out->ceiling_bps = out->floor_bps;
}

static uint64_t
clamp(uint64_t v, const struct autorate_params *p)
{
	return v < p->floor_bps ? p->floor_bps :
	       v > p->ceiling_bps ? p->ceiling_bps : v;
}

/* The ticks under a queue end: the next one starts a new spell. */
static void
spell_end(struct autorate_state *s)
{
	s->spell_bytes = 0;
	s->spell_ns = 0;
	s->in_spell = false;
}

void
autorate_init(struct autorate_state *s, const struct autorate_params *p,
	      uint64_t rate_bps, uint64_t now_ns)
{
	*s = (struct autorate_state){ 0 };
	s->rate_bps = clamp(rate_bps, p);
	s->last_ns = now_ns;
	s->last_sample_ns = now_ns;
}

/* bytes over dt ns as bit/s, without overflow for any real figure. */
static uint64_t
bps(uint64_t bytes, uint64_t dt_ns)
{
	if (dt_ns == 0)
		return 0;
	return (uint64_t)((unsigned __int128)bytes * 8000000000ULL / dt_ns);
}

enum autorate_event
autorate_tick(struct autorate_state *s, const struct autorate_params *p,
	      const struct autorate_input *in, uint64_t now_ns)
{
	uint64_t dt = now_ns - s->last_ns, delta, nr;

	s->last_ns = now_ns;
	s->armed_since += in->armed;
	if (in->samples == 0) {
		/* Data went out and nothing came back for stall_ns: the link
		 * beyond has stopped (or is far slower than anything we
		 * measured). Park at the floor until answers come back. */
		if (s->armed_since > 0 && now_ns - s->last_sample_ns >= p->stall_ns &&
		    s->rate_bps > p->floor_bps) {
			s->rate_bps = p->floor_bps;
			s->cap_bps = 0;
			spell_end(s);
			s->cutting = false;
			s->raises = 0;
			return AUTORATE_STALL;
		}
		s->last_del_bps = 0;
		return AUTORATE_IDLE;
	}
	s->last_sample_ns = now_ns;
	s->armed_since = 0;
	if (!s->have_baseline || in->delay_ns < s->baseline_ns) {
		s->baseline_ns = in->delay_ns;
		s->have_baseline = true;
	}
	delta = in->delay_ns - s->baseline_ns;
	s->delta_ns = delta;
	/* What the samples hold of the wait for the next segments at this
	 * rate is no queue. */
	uint64_t bloat = p->bloat_ns +
		(uint64_t)p->spacing_bytes * 8000000000ULL / s->rate_bps;
	if (delta >= bloat) {
		uint64_t del = bps(in->delivered_bytes, dt), base, f;
		/*
		 * Under a standing queue the bottleneck is busy: what it
		 * delivered is its rate. One tick's figure reads high when
		 * the ACKs of a burst land in it (at 3 Mbit/s a tick holds a
		 * dozen packets), and the spell's average reads high when its
		 * first ticks still carry what the link delivered before it
		 * slowed: the lower of the two.
		 *
		 * Not on the first tick under a queue when the ACKs report
		 * half as much again as the tick before, or the tick before
		 * was idle: the senders are ramping up (slow start), and what
		 * the ACKs delivered is what they sent an RTT ago, not the
		 * link. At the start of the lab's load such a tick read 1.4
		 * Mbit/s on a 25 Mbit/s link, and the pipe then sat near the
		 * floor for seconds. Cut from the capacity known, or from the
		 * rate; the next tick measures.
		 */
		const bool ramp = !s->in_spell &&
				  del > s->last_del_bps + s->last_del_bps / 2;

		s->last_del_bps = del;
		if (ramp) {
			del = 0;
		} else {
			s->spell_bytes += in->delivered_bytes;
			s->spell_ns += dt;
		}
		s->in_spell = true;
		if (del > 0) {
			uint64_t avg = bps(s->spell_bytes, s->spell_ns);
			s->cap_bps = avg < del ? avg : del;
		}
		/* Relative to the capacity, not to our own rate: while the
		 * queue beyond drains, more cuts do not compound. */
		base = s->cap_bps ? s->cap_bps : s->rate_bps;
		f = delta >= p->drain_ns ? 0 : 1000 - delta * 1000 / p->drain_ns;
		if (f < p->cut_min_pm)
			f = p->cut_min_pm;
		if (f > p->cut_max_pm)
			f = p->cut_max_pm;
		nr = clamp(base * f / 1000, p);
		s->raises = 0;
		if (nr < s->rate_bps) {
			s->rate_bps = nr;
			s->cutting = true;
			return AUTORATE_CUT;
		}
		return AUTORATE_HOLD;
	}
	/* Clear: let the baseline follow a lengthened path, slowly. */
	s->baseline_ns += delta >> p->baseline_shift;
	spell_end(s);
	s->last_del_bps = bps(in->delivered_bytes, dt);
	if (s->cutting) {
		s->raises = 0;
		if (delta >= bloat / 2)
			return AUTORATE_HOLD; /* still draining */
		s->cutting = false;
		nr = clamp(s->cap_bps * p->cut_max_pm / 1000, p);
		if (s->cap_bps && nr > s->rate_bps) {
			s->rate_bps = nr;
			return AUTORATE_RECOVER;
		}
	}
	/*
	 * Saturated: the pipe held packets, or sent most of its rate. Past
	 * the capacity last measured only the first counts: a rate above
	 * the link's moves the queue beyond, and then TCP, clocked by the
	 * link's ACKs, still sends the link's rate, which is most of ours
	 * up to a third above it, long before the delay shows the queue.
	 */
	const bool past = s->cap_bps && s->rate_bps >= s->cap_bps;
	if ((in->backlogged ||
	     (!past && bps(in->sent_bytes, dt) >= s->rate_bps / 1000 * p->load_pm)) &&
	    s->rate_bps < p->ceiling_bps) {
		/*
		 * Past it, the far end must keep up with what was sent. A
		 * pipe that drains a queue of its own sends its whole rate
		 * whatever the link beyond takes, and the excess piles up
		 * there; the delay shows that only once it is bloat_ns deep,
		 * ticks later, while the delivered rate shows it at once.
		 * Hold without ending the run of raises: a tick of noise
		 * costs a tick, not the acceleration. And while the link
		 * delivers less than an eighth over that capacity, rise at
		 * most to where what was sent would be delivered / keep: a
		 * step that crosses the link overshoots it by a ninth, not
		 * by the up to 20 % of an accelerated step. A link that
		 * delivers more got faster: full steps find it. The ratio,
		 * not the delivered rate itself: a pipe that held packets
		 * at the tick may have sent less than its rate.
		 */
		uint64_t lim = UINT64_MAX;
		if (past && p->keep_pm != 0 && in->delivered_bytes != 0 &&
		    in->sent_bytes != 0) {
			if (in->delivered_bytes < in->sent_bytes / 1000 * p->keep_pm)
				return AUTORATE_HOLD;
			if (bps(in->delivered_bytes, dt) < s->cap_bps + s->cap_bps / 8) {
				lim = (uint64_t)((unsigned __int128)s->rate_bps *
						 in->delivered_bytes * 1000 /
						 ((unsigned __int128)in->sent_bytes * p->keep_pm));
				if (lim <= s->rate_bps)
					return AUTORATE_HOLD;
			}
		}
		/* 1, 1.5, 2, ... 4 steps: accelerate while the path stays
		 * clear. Past the capacity last measured, quarter steps for
		 * calm_raises ticks first: the queue beyond shows a rise a
		 * tick or two late, so probing there must be slow. */
		uint32_t n = s->raises;
		uint64_t mult4;
		if (past && n < p->calm_raises)
			mult4 = 1;
		else {
			if (past)
				n -= p->calm_raises;
			mult4 = 4 + 2 * (n < 6 ? n : 6);
		}
		uint64_t step = s->rate_bps / 1000 * p->raise_pm * mult4 / 4;
		uint64_t nr2 = s->rate_bps + (step ? step : 1);
		s->rate_bps = clamp(nr2 < lim ? nr2 : lim, p);
		s->raises++;
		return AUTORATE_RAISE;
	}
	s->raises = 0;
	return AUTORATE_HOLD;
}
