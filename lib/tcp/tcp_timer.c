/* SPDX-License-Identifier: BSD-3-Clause */
/* A hashed timing wheel (Varghese and Lauck): one entry per connection at
 * its earliest deadline; tcp_timers_run() scans one slot per elapsed
 * tick. Deadlines beyond one revolution stay in their slot and are
 * skipped until due. */

#include "tcp_impl.h"

static inline uint64_t
tick_of(const struct tcp_engine *e, uint64_t t)
{
	return t / e->p.timer_tick_ns;
}

void
tcp_timer_cancel(struct tcp_conn *c)
{
	if (c->timer_at != 0) {
		LIST_REMOVE(c, timer_link);
		c->timer_at = 0;
	}
}

uint64_t
tcp_life_deadline(const struct tcp_conn *c)
{
	const struct tcp_engine_params *p = &c->eng->p;
	uint64_t t = 0;

	switch (c->state) {
	case TCP_ESTABLISHED:
	case TCP_CLOSE_WAIT:
	case TCP_FIN_WAIT_1:
	case TCP_CLOSING:
	case TCP_LAST_ACK:
		if (p->idle_timeout_ns != 0)
			t = c->last_rx_ns + p->idle_timeout_ns;
		break;
	case TCP_FIN_WAIT_2:
		if (p->fin_wait2_timeout_ns != 0)
			t = c->last_rx_ns + p->fin_wait2_timeout_ns;
		break;
	default:
		return 0; /* handshake, TIME-WAIT: their own timers */
	}
	if ((c->flags & TCP_CF_PERSIST) && c->persist_at != 0 &&
	    (t == 0 || c->persist_at < t))
		t = c->persist_at;
	return t;
}

void
tcp_timer_update(struct tcp_conn *c)
{
	struct tcp_engine *e = c->eng;
	uint64_t next = c->rtx_at;
	uint64_t life = tcp_life_deadline(c);
	uint64_t tick;

	if (c->delack_at != 0 && (next == 0 || c->delack_at < next))
		next = c->delack_at;
	if (c->rack_at != 0 && (next == 0 || c->rack_at < next))
		next = c->rack_at;
	if (c->ka_at != 0 && (next == 0 || c->ka_at < next))
		next = c->ka_at;
	if (life != 0 && (next == 0 || life < next))
		next = life;
	if (next == c->timer_at)
		return;
	tcp_timer_cancel(c);
	if (next == 0)
		return;
	/* A deadline already behind the wheel goes to the slot scanned
	 * next, not to one a revolution away. */
	tick = tick_of(e, next);
	if (tick < e->wheel_tick)
		tick = e->wheel_tick;
	c->timer_at = next;
	LIST_INSERT_HEAD(&e->slots[tick & (e->p.timer_slots - 1)], c, timer_link);
}

uint32_t
tcp_timers_run(struct tcp_engine *e, uint64_t now_ns)
{
	uint64_t now_tick = tick_of(e, now_ns);
	uint64_t n, t;
	uint32_t fired = 0;

	/* A caller that never ended its input burst: what it deferred
	 * (output, timers, events) happens now. */
	if (unlikely(e->in_burst))
		tcp_input_burst_end(e, now_ns);
	e->now = now_ns;
	if (now_tick < e->wheel_tick)
		return 0;
	/* Called every loop: within the tick already scanned, with its
	 * slot empty, there is nothing to fire. */
	if (now_tick == e->wheel_tick &&
	    LIST_EMPTY(&e->slots[now_tick & (e->p.timer_slots - 1)]))
		return 0;
	n = now_tick - e->wheel_tick + 1;
	if (n > e->p.timer_slots)
		n = e->p.timer_slots;
	for (t = now_tick - n + 1; t <= now_tick; t++) {
		struct tcp_conn_list *slot = &e->slots[t & (e->p.timer_slots - 1)];
		struct tcp_conn_list work;
		struct tcp_conn *c;

		/* Move the slot aside: firing may re-arm into this slot or
		 * free other connections, and both stay safe. */
		LIST_INIT(&work);
		while ((c = LIST_FIRST(slot)) != NULL) {
			LIST_REMOVE(c, timer_link);
			LIST_INSERT_HEAD(&work, c, timer_link);
		}
		while ((c = LIST_FIRST(&work)) != NULL) {
			LIST_REMOVE(c, timer_link);
			if (c->timer_at > now_ns) {
				LIST_INSERT_HEAD(slot, c, timer_link);
				continue;
			}
			c->timer_at = 0;
			fired++;
			tcp_timer_fire(c);
			tcp_timer_update(c);
			tcp_conn_deliver(c);
		}
	}
	/* The current tick may hold later deadlines: scan it again. */
	e->wheel_tick = now_tick;
	return fired;
}
