/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Passive RTT and autorate in the aqm stage (issue 19).
 *
 *   config     [aqm] passive_rtt, prtt_*, autorate, autorate_*: a lib/ini
 *              typed key table, applied before the rest of [aqm].
 *   datapath   a subscriber's segment is seen by lib/prtt on the worker
 *              that owns its pipes: upstream just before it is queued
 *              (so sluice's own upstream queue is not counted), downstream
 *              when it leaves the shaper (bypassed or dequeued), so the RTT
 *              is the delay beyond sluice.
 *   autorate   in poll, each owned pipe ticks every autorate_interval:
 *              lib/prtt's window and the pipe's counters go into
 *              lib/autorate, and a new rate goes through
 *              aqm_sched_pipe_set_shaper(), the function reload and
 *              aqm_set use: queued packets stay, in order. A reload or an
 *              aqm_set restarts the law from the rate it set. Every change
 *              goes into a per-worker ring that /sluice/autorate_log reads.
 *
 * Each worker's state is written only by that worker; the telemetry
 * thread reads counters without locks (as app/telemetry.c does) and the
 * log ring through its published head.
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rte_atomic.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_telemetry.h>

#include "autorate.h"
#include "config.h"
#include "pkt.h"
#include "prtt.h"
#include "stage_aqm_autorate.h"
#include "stage_aqm_priv.h"

#define AR_SECTION "aqm"
#define AR_TOP_MAX 64
#define AR_SWEEP 64              /* pipes looked at per poll */
#define AR_LOG_PAGE 64           /* entries per /sluice/autorate_log answer */

/* ------------------------------------------------------------------ */
/* Configuration.                                                      */

static const struct ini_enum ar_dirs[] = {
	{ "off", 0 }, { "down", 1 << AQM_DIR_DOWN }, { "up", 1 << AQM_DIR_UP },
	{ "both", (1 << AQM_DIR_DOWN) | (1 << AQM_DIR_UP) }, { NULL, 0 },
};

/* A ceiling: 0 (the pipe's configured rate) or a rate. */
static int
parse_ceiling(const char *v, void *dst, char *why, size_t whylen)
{
	uint64_t x = 0;

	if (strcmp(v, "0") != 0) {
		if (ini_parse_rate_bps(v, &x, why, whylen) < 0)
			return -1;
		if (x < AQM_RATE_MIN || x > AQM_RATE_MAX) {
			snprintf(why, whylen, "'%s' out of range 64kbit..100gbit (or 0: the configured rate)", v);
			return -1;
		}
	}
	*(uint64_t *)dst = x;
	return 0;
}

#define AC(f) INI_AT(struct aqm_ar_conf, f)
static const struct ini_key ar_keys[] = {
	{ "passive_rtt", INI_KIND_BOOL, AC(passive_rtt), .def = "off",
	  .doc = "passive RTT per subscriber from its TCP traffic (lib/prtt); autorate needs it" },
	{ "prtt_flows", INI_KIND_UINT, AC(prtt_flows), 4, 1u << 24, .def = "16384",
	  .unit = "flows", .doc = "no longer used (lib/prtt keeps no flow table); accepted so older files load" },
	{ "prtt_max_age", INI_KIND_TIME, AC(prtt_max_age), 1000000, 60000000000ULL, 1000000,
	  .def = "4s", .doc = "a sample not answered by then is dropped" },
	{ "prtt_ts_tick", INI_KIND_TIME, AC(prtt_ts_tick), 1000, 1000000000, 1000000,
	  .def = "1ms", .doc = "the subscribers' TCP timestamp clock tick (upstream one-way delay)" },
	{ "prtt_top", INI_KIND_UINT, AC(prtt_top), 1, AR_TOP_MAX, .def = "8",
	  .unit = "subscribers", .doc = "worst subscribers listed by telemetry and the exit report" },
	{ "autorate", INI_KIND_ENUM, AC(autorate), .names = ar_dirs, .def = "off",
	  .doc = "move pipe rates with the delay beyond sluice: off, down, up or both" },
	{ "autorate_floor_down", INI_KIND_RATE, AC(floor_down), AQM_RATE_MIN, AQM_RATE_MAX,
	  .def = "1mbit", .doc = "lowest downstream rate autorate sets" },
	{ "autorate_floor_up", INI_KIND_RATE, AC(floor_up), AQM_RATE_MIN, AQM_RATE_MAX,
	  .def = "256kbit", .doc = "lowest upstream rate autorate sets" },
	{ "autorate_ceiling_down", INI_KIND_CUSTOM, AC(ceiling_down), .parse = parse_ceiling,
	  .def = "0", .doc = "highest downstream rate; 0: the pipe's configured rate (rate_down or the CSV)" },
	{ "autorate_ceiling_up", INI_KIND_CUSTOM, AC(ceiling_up), .parse = parse_ceiling,
	  .def = "0", .doc = "highest upstream rate; 0: the pipe's configured rate (rate_up or the CSV)" },
	{ "autorate_interval", INI_KIND_TIME, AC(interval), 5000000, 1000000000, 1000000,
	  .def = "50ms", .doc = "control tick per pipe" },
	{ "autorate_bloat", INI_KIND_TIME, AC(bloat), 1000000, 1000000000, 1000000,
	  .def = "12ms", .doc = "delay rise over the baseline that means a queue beyond sluice: cut" },
	{ "autorate_spacing", INI_KIND_SIZE, AC(spacing), 0, 1u << 20, .def = "3028",
	  .unit = "bytes", .doc = "added to autorate_bloat as its time at the current rate: a sample ends at an ACK, which may wait for the next segments" },
	{ "autorate_drain", INI_KIND_TIME, AC(drain), 10000000, 10000000000ULL, 1000000,
	  .def = "100ms", .doc = "cut depth: rate = delivered x (1 - rise / drain), within cut_min..cut_max" },
	{ "autorate_stall", INI_KIND_TIME, AC(stall), 100000000, 60000000000ULL, 1000000,
	  .def = "1s", .doc = "samples started and none answered for this long: rate to the floor" },
	{ "autorate_raise", INI_KIND_PERCENT, AC(raise), .def = "5%",
	  .doc = "raise per tick while the pipe is saturated and the delay is clear" },
	{ "autorate_cut_min", INI_KIND_PERCENT, AC(cut_min), .def = "10%",
	  .doc = "deepest cut, as a share of the delivered rate" },
	{ "autorate_cut_max", INI_KIND_PERCENT, AC(cut_max), .def = "90%",
	  .doc = "shallowest cut, and the share of capacity a recovery goes back to" },
	{ "autorate_load", INI_KIND_PERCENT, AC(load), .def = "75%",
	  .doc = "the pipe counts as saturated when it sends this share of its rate (or holds packets)" },
	{ "autorate_log", INI_KIND_UINT, AC(log_size), 16, 1u << 20, .def = "4096",
	  .unit = "entries", .doc = "rate changes kept per worker for /sluice/autorate_log, a power of two" },
};
#undef AC

bool
aqm_ar_key(const char *name)
{
	return ini_key_find(ar_keys, RTE_DIM(ar_keys), name) != NULL;
}

void
aqm_ar_print_keys(FILE *out)
{
	ini_keys_print(out, AR_SECTION, ar_keys, RTE_DIM(ar_keys));
}

static int
ar_fail(struct ini_file *f, const char *key, uint64_t set, unsigned idx,
	char *err, size_t errlen, const char *why)
{
	struct ini_entry *e = (set >> idx) & 1 ? ini_get(f, AR_SECTION, key) : NULL;

	if (e != NULL)
		sl_config_err(err, errlen, f, e, why);
	else
		snprintf(err, errlen, "%s: [%s] %s: %s", f->path, AR_SECTION, key, why);
	return -1;
}

static unsigned
key_idx(const char *name)
{
	return (unsigned)(ini_key_find(ar_keys, RTE_DIM(ar_keys), name) - ar_keys);
}

int
aqm_ar_conf_parse(struct ini_file *f, struct aqm_ar_conf *c, uint64_t max_subs,
		  char *err, size_t errlen)
{
	uint64_t set = 0;

	(void)max_subs;
	if (ini_keys_defaults(AR_SECTION, ar_keys, RTE_DIM(ar_keys), c, err, errlen) < 0 ||
	    ini_apply_section(f, AR_SECTION, ar_keys, RTE_DIM(ar_keys), c, &set,
			      err, errlen) < 0)
		return -1;
	if ((c->log_size & (c->log_size - 1)) != 0)
		return ar_fail(f, "autorate_log", set, key_idx("autorate_log"), err, errlen,
			       "must be a power of two");
	if (c->autorate && !c->passive_rtt)
		return ar_fail(f, "autorate", set, key_idx("autorate"), err, errlen,
			       "needs passive_rtt = on (its delay samples)");
	if (c->cut_min <= 0 || c->cut_min > c->cut_max || c->cut_max >= 1)
		return ar_fail(f, "autorate_cut_min", set, key_idx("autorate_cut_min"), err, errlen,
			       "need 0 < autorate_cut_min <= autorate_cut_max < 100%");
	if (c->raise <= 0 || c->load <= 0)
		return ar_fail(f, "autorate_raise", set, key_idx("autorate_raise"), err, errlen,
			       "autorate_raise and autorate_load must be above 0");
	if (c->ceiling_down && c->ceiling_down < c->floor_down)
		return ar_fail(f, "autorate_ceiling_down", set, key_idx("autorate_ceiling_down"),
			       err, errlen, "below autorate_floor_down");
	if (c->ceiling_up && c->ceiling_up < c->floor_up)
		return ar_fail(f, "autorate_ceiling_up", set, key_idx("autorate_ceiling_up"),
			       err, errlen, "below autorate_floor_up");
	return 0;
}

int
aqm_ar_check_entry(const struct aqm_ar_conf *c, const struct aqm_sub_entry *e,
		   char *why, size_t whylen)
{
	static const char *const dn[2] = { "down", "up" };

	if (e->has_autorate && e->autorate != 0 && !c->passive_rtt) {
		snprintf(why, whylen, "autorate column needs [aqm] passive_rtt = on (its delay samples)");
		return -1;
	}
	for (int d = 0; d < 2; d++) {
		uint64_t fl = e->ar_floor_bps[d] ? e->ar_floor_bps[d] :
			      d == AQM_DIR_DOWN ? c->floor_down : c->floor_up;
		uint64_t ce = e->ar_ceiling_bps[d] ? e->ar_ceiling_bps[d] :
			      d == AQM_DIR_DOWN ? c->ceiling_down : c->ceiling_up;

		if (ce != 0 && ce < fl && (e->ar_floor_bps[d] || e->ar_ceiling_bps[d])) {
			snprintf(why, whylen, "autorate ceiling_%s %" PRIu64 " bit/s below floor_%s %" PRIu64 " bit/s (with the [aqm] keys' values for empty columns)",
				 dn[d], ce, dn[d], fl);
			return -1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Per worker.                                                         */

struct ar_log_entry {
	uint64_t t_ns;
	uint64_t from_bps, to_bps;
	uint64_t cap_bps;
	uint64_t delta_ns;
	uint32_t pipe;
	uint8_t dir;
	uint8_t event;
};

struct ar_pipe {
	struct autorate_state st[2];
	uint64_t cfg_bps[2];       /* the configured rate (the ceiling by default) */
	uint64_t tx_bytes[2];      /* pipe counters at the previous tick */
	uint64_t enq_bytes[2];
	uint64_t tick_ns;          /* last tick */
	uint64_t own_floor[2];     /* the subscriber's own (CSV); 0: [aqm]'s */
	uint64_t own_ceiling[2];
	uint8_t dirs;              /* autorate directions: bits 1 << enum aqm_dir */
	bool on;                   /* initialised since the last config change */
};

struct aqm_ar {
	unsigned worker, nb_workers;
	const uint8_t *owner;        /* the worker's pipe owners (aqm_pipe_owner()) */
	struct aqm_ar_conf c;
	struct autorate_params ap[2];
	struct prtt *prtt;           /* rte_malloc'ed */
	uint32_t npipes_max;
	struct ar_pipe *pipes;       /* npipes_max */
	uint32_t active;             /* pipes with autorate directions */
	uint32_t cursor;
	uint64_t events[2][AUTORATE_EVENT_MAX];
	uint64_t rate_changes[2];
	uint64_t non_tcp;            /* packets seen that were not TCP with ports */
	struct ar_log_entry *log;
	uint32_t log_mask;
	volatile uint64_t log_head;  /* entries written; published after the entry */
};

/* Control side: the workers' instances, for telemetry and the report. */
static struct {
	unsigned nb_workers, created;
	struct aqm_ar *a[RTE_MAX_LCORE];
	struct aqm_ar_conf c;
} ar_g;

static void register_telemetry(void);

void
aqm_ar_slots(const struct aqm_ar *a, struct prtt_fast *f)
{
	memset(f, 0, sizeof(*f));
	if (a != NULL && a->prtt != NULL)
		prtt_fast_get(a->prtt, f);
}

int
aqm_ar_create(struct aqm_worker *w, const struct aqm_ar_conf *c,
	      uint32_t max_subs, const struct stage_env *env, struct aqm_ar **out)
{
	struct prtt_params pp;
	struct aqm_ar *a;
	size_t sz;

	(void)w;
	*out = NULL;
	if (!c->passive_rtt)
		return 0;
	a = rte_zmalloc_socket("aqm_ar", sizeof(*a), RTE_CACHE_LINE_SIZE, env->socket);
	if (a == NULL)
		return -ENOMEM;
	a->worker = env->worker;
	a->nb_workers = env->nb_workers;
	a->owner = w->owner;
	a->c = *c;
	a->npipes_max = max_subs + 1; /* pipe 0: the default pipe */
	prtt_params_default(&pp);
	pp.subs = a->npipes_max;
	pp.max_age_ns = c->prtt_max_age;
	pp.ts_tick_ns = c->prtt_ts_tick;
	sz = prtt_memsize(&pp);
	a->prtt = sz ? rte_zmalloc_socket("aqm_prtt", sz, RTE_CACHE_LINE_SIZE, env->socket) : NULL;
	if (a->prtt == NULL || prtt_init(a->prtt, &pp) == NULL)
		goto nomem;
	/* Every pipe's autorate state, whatever [aqm] autorate says: a
	 * subscriber's own column can turn it on (16 bytes of limits and
	 * about 200 of state per pipe). */
	a->pipes = rte_zmalloc_socket("aqm_ar_pipes",
		(size_t)a->npipes_max * sizeof(*a->pipes), RTE_CACHE_LINE_SIZE, env->socket);
	a->log = rte_zmalloc_socket("aqm_ar_log",
		(size_t)c->log_size * sizeof(*a->log), RTE_CACHE_LINE_SIZE, env->socket);
	if (a->pipes == NULL || a->log == NULL)
		goto nomem;
	a->log_mask = c->log_size - 1;
	for (uint32_t i = 0; i < a->npipes_max; i++)
		a->pipes[i].dirs = c->autorate;
	a->active = c->autorate ? a->npipes_max : 0;
	for (int d = 0; d < 2; d++) {
		struct autorate_params *p = &a->ap[d];
		autorate_params_default(p);
		p->floor_bps = d == AQM_DIR_DOWN ? c->floor_down : c->floor_up;
		p->ceiling_bps = d == AQM_DIR_DOWN ? c->ceiling_down : c->ceiling_up;
		p->interval_ns = c->interval;
		p->bloat_ns = c->bloat;
		p->drain_ns = c->drain;
		p->stall_ns = c->stall;
		p->spacing_bytes = c->spacing;
		p->raise_pm = (uint32_t)(c->raise * 1000 + 0.5);
		p->cut_min_pm = (uint32_t)(c->cut_min * 1000 + 0.5);
		p->cut_max_pm = (uint32_t)(c->cut_max * 1000 + 0.5);
		p->load_pm = (uint32_t)(c->load * 1000 + 0.5);
	}
	ar_g.nb_workers = env->nb_workers;
	ar_g.c = *c;
	ar_g.a[env->worker] = a;
	if (++ar_g.created == env->nb_workers)
		register_telemetry();
	*out = a;
	return 0;
nomem:
	aqm_ar_free(a);
	return -ENOMEM;
}

void
aqm_ar_free(struct aqm_ar *a)
{
	if (a == NULL)
		return;
	if (ar_g.a[a->worker] == a)
		ar_g.a[a->worker] = NULL;
	rte_free(a->prtt);
	rte_free(a->pipes);
	rte_free(a->log);
	rte_free(a);
}

/* ------------------------------------------------------------------ */
/* Datapath.                                                           */

/*
 * The flow key: the same for both directions of a connection (lib/prtt
 * takes any value, 0 too), and cheap, since every TCP segment of a
 * subscriber needs it (lib/prtt compares it with the one flow the
 * subscriber samples): in the upper half the port pair in the order that
 * reads smaller as one word, in the lower the xor of the two addresses.
 * Two connections of one subscriber share a key only with the same ports
 * and the same address xor, and then the TSecr or ACK must match too.
 * (pkt_flow_hash() would be a CRC of the 5-tuple per packet: the bypass
 * path never pays it.) The ports alone tell most segments from the
 * sampled flow's (lib/prtt's checks on the key's upper half): the
 * addresses are read only when they match.
 */
static inline uint32_t
flow_key_hi(const struct pkt_meta *meta)
{
	uint32_t p;

	/* Both ports in one load; the other direction holds them swapped,
	 * i.e. the word turned by 16 bits: the smaller of the two is the
	 * same both ways. */
	memcpy(&p, (const uint8_t *)meta + offsetof(struct pkt_meta, sport), 4);
	return RTE_MIN(p, p << 16 | p >> 16);
}

static inline uint64_t
flow_key(const struct pkt_meta *meta, uint32_t hi)
{
	uint32_t a, b;

	/* (Raw words: the xor only has to be the same both ways.) */
	memcpy(&a, meta->src, 4);
	memcpy(&b, meta->dst, 4);
	a ^= b;
	if (meta->l3 != PKT_L3_IPV4) {
		for (int i = 4; i < 16; i += 4) {
			memcpy(&b, meta->src + i, 4);
			a ^= b;
			memcpy(&b, meta->dst + i, 4);
			a ^= b;
		}
	}
	return (uint64_t)hi << 32 | a;
}
_Static_assert(offsetof(struct pkt_meta, dport) == offsetof(struct pkt_meta, sport) + 2,
	       "flow_key_hi() reads both ports as one word");


/*
 * Most segments are of another flow than the subscriber's chosen (or
 * pinned) one: lib/prtt's inline checks take them on the key's upper
 * half (the ports) or, when that matches, on the whole key; the others
 * go to lib/prtt with their header.
 */
void
aqm_ar_up(struct aqm_ar *a, struct rte_mbuf **pkts, const uint32_t *pipes,
	  uint16_t n, uint64_t now_ns)
{
	struct prtt_fast f;

	(void)pipes; /* (each one is its packet's pkt_meta.pipe too) */

	prtt_fast_get(a->prtt, &f);
	for (uint16_t i = 0; i < n; i++) {
		struct pkt_meta *meta = pkt_meta(pkts[i]);
		uint64_t flow;
		uint32_t hi;

		if (!aqm_is_tcp(meta)) {
			a->non_tcp++;
			continue;
		}
		hi = flow_key_hi(meta);
		/* (The pipe from meta, not the caller's array: one pointer
		 * less to step, and meta's line is in cache.) */
		if (prtt_up_fast_hi(&f, meta->pipe, hi, now_ns))
			continue;
		flow = flow_key(meta, hi);
		if (prtt_up_fast(&f, meta->pipe, flow, now_ns))
			continue;
		/* (Upstream, the payload and length are not used.) */
		prtt_up_tcp(a->prtt, meta->pipe, flow, aqm_tcp_hdr(pkts[i], meta),
			    meta->l4_len, 0, 0, now_ns);
	}
	prtt_fast_put(a->prtt, &f);
}

void
aqm_ar_down(struct aqm_ar *a, struct rte_mbuf **pkts, uint16_t n, uint64_t now_ns)
{
	struct prtt_fast f;

	prtt_fast_get(a->prtt, &f);
	for (uint16_t i = 0; i < n; i++) {
		struct pkt_meta *meta = pkt_meta(pkts[i]);
		uint32_t payload, hi;
		uint64_t flow;

		if (!aqm_is_tcp(meta)) {
			a->non_tcp++;
			continue;
		}
		hi = flow_key_hi(meta);
		payload = aqm_tcp_payload(meta);
		/* The pipe it was queued in (or bypassed): no second lookup. */
		if (prtt_down_fast_hi(&f, meta->pipe, hi, payload, pkts[i]->pkt_len, now_ns))
			continue;
		flow = flow_key(meta, hi);
		if (prtt_down_fast(&f, meta->pipe, flow, payload, pkts[i]->pkt_len, now_ns))
			continue;
		prtt_down_tcp(a->prtt, meta->pipe, flow, aqm_tcp_hdr(pkts[i], meta),
			      meta->l4_len, payload, pkts[i]->pkt_len, now_ns);
	}
	prtt_fast_put(a->prtt, &f);
}

/* ------------------------------------------------------------------ */
/* Autorate.                                                           */

static void
log_change(struct aqm_ar *a, uint32_t pipe, int dir, enum autorate_event ev,
	   uint64_t from, const struct autorate_state *st, uint64_t now_ns)
{
	struct ar_log_entry *e = &a->log[a->log_head & a->log_mask];

	e->t_ns = now_ns;
	e->pipe = pipe;
	e->dir = (uint8_t)dir;
	e->event = (uint8_t)ev;
	e->from_bps = from;
	e->to_bps = st->rate_bps;
	e->cap_bps = st->cap_bps;
	e->delta_ns = st->delta_ns;
	rte_smp_wmb();
	a->log_head++;
}

static void
pipe_start(struct aqm_ar *a, struct aqm_worker *w, uint32_t id, uint64_t now_ns)
{
	struct ar_pipe *p = &a->pipes[id];

	for (int d = 0; d < 2; d++) {
		struct aqm_sched *sched = aqm_subs_sched(w->subs, (enum aqm_dir)d);
		struct aqm_shaper_params sp;
		struct aqm_pipe_stats ps;
		struct autorate_params ap;

		aqm_sched_pipe_shaper(sched, id, &sp);
		aqm_sched_pipe_stats(sched, id, &ps);
		p->cfg_bps[d] = sp.rate_bps;
		p->tx_bytes[d] = ps.tx_bytes;
		p->enq_bytes[d] = ps.enq_bytes;
		autorate_params_for_pipe(&a->ap[d], p->own_floor[d], p->own_ceiling[d],
					 sp.rate_bps, &ap);
		autorate_init(&p->st[d], &ap, sp.rate_bps, now_ns);
		/* A configured rate outside the pipe's floor..ceiling: the law
		 * starts from the nearest bound, and so does the shaper. */
		if (((p->dirs >> d) & 1) && sp.rate_bps != 0 &&
		    p->st[d].rate_bps != sp.rate_bps) {
			uint64_t from = sp.rate_bps;

			sp.rate_bps = p->st[d].rate_bps;
			if (aqm_sched_pipe_set_shaper(sched, id, &sp) == 0) {
				a->rate_changes[d]++;
				log_change(a, id, d, AUTORATE_HOLD, from, &p->st[d], now_ns);
			}
		}
	}
	p->tick_ns = now_ns;
	p->on = true;
}

static void
pipe_tick(struct aqm_ar *a, struct aqm_worker *w, uint32_t id, uint64_t now_ns)
{
	struct ar_pipe *p = &a->pipes[id];
	struct prtt_window win[2];
	const uint64_t dt = now_ns - p->tick_ns;

	p->tick_ns = now_ns;
	prtt_sub_window_take(a->prtt, id, PRTT_DOWN, &win[PRTT_DOWN]);
	prtt_sub_window_take(a->prtt, id, PRTT_UP, &win[PRTT_UP]);
	for (int d = 0; d < 2; d++) {
		struct aqm_sched *sched = aqm_subs_sched(w->subs, (enum aqm_dir)d);
		const struct prtt_window *pw = &win[d == AQM_DIR_DOWN ? PRTT_DOWN : PRTT_UP];
		struct autorate_params ap;
		struct autorate_input in = { 0 };
		struct aqm_pipe_stats ps;
		uint64_t from;

		aqm_sched_pipe_stats(sched, id, &ps);
		in.sent_bytes = ps.tx_bytes - p->tx_bytes[d];
		in.backlogged = ps.backlog_pkts > 0;
		in.samples = pw->samples;
		in.armed = pw->armed;
		in.delay_ns = pw->min_ns;
		if (d == AQM_DIR_DOWN) {
			/* Acknowledged payload, in frame bytes: lib/prtt
			 * gives a rate (bytes over acked_ns, between the
			 * answers of its samples); over this tick, that. */
			uint64_t acked = pw->acked_ns == 0 ? 0 :
				(uint64_t)((unsigned __int128)pw->acked_bytes * dt / pw->acked_ns);
			in.delivered_bytes = pw->sent_payload ?
				acked * pw->sent_wire / pw->sent_payload :
				acked * 1514 / 1460;
			/* An RTT sample crosses the uplink too: take off the
			 * rise the subscriber's own segments show there. */
			if (win[PRTT_UP].samples && in.samples) {
				uint64_t up = win[PRTT_UP].min_ns;
				in.delay_ns = in.delay_ns > up ? in.delay_ns - up : 0;
			}
		} else {
			in.delivered_bytes = ps.enq_bytes - p->enq_bytes[d];
		}
		p->tx_bytes[d] = ps.tx_bytes;
		p->enq_bytes[d] = ps.enq_bytes;
		if (!((p->dirs >> d) & 1) || p->cfg_bps[d] == 0)
			continue;
		autorate_params_for_pipe(&a->ap[d], p->own_floor[d], p->own_ceiling[d],
					 p->cfg_bps[d], &ap);
		from = p->st[d].rate_bps;
		enum autorate_event ev = autorate_tick(&p->st[d], &ap, &in, now_ns);
		a->events[d][ev]++;
		if (p->st[d].rate_bps == from)
			continue;
		struct aqm_shaper_params sp;
		aqm_sched_pipe_shaper(sched, id, &sp);
		sp.rate_bps = p->st[d].rate_bps;
		if (aqm_sched_pipe_set_shaper(sched, id, &sp) == 0) {
			a->rate_changes[d]++;
			log_change(a, id, d, ev, from, &p->st[d], now_ns);
		}
	}
}

void
aqm_ar_restart(struct aqm_ar *a, uint32_t id)
{
	if (a != NULL && a->pipes != NULL && id < a->npipes_max)
		a->pipes[id].on = false;
}

void
aqm_ar_pipe_removed(struct aqm_ar *a, uint32_t id)
{
	struct ar_pipe *p;

	if (a == NULL || a->pipes == NULL || id == 0 || id >= a->npipes_max)
		return;
	p = &a->pipes[id];
	a->active -= p->dirs != 0;
	memset(p, 0, sizeof(*p));
	p->dirs = a->c.autorate;
	a->active += p->dirs != 0;
	prtt_sub_reset(a->prtt, id);
}

void
aqm_ar_subs_applied(struct aqm_ar *a, const struct aqm_subs *subs,
		    const struct aqm_sub_entry *e, uint32_t n)
{
	if (a == NULL || a->pipes == NULL)
		return;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t id = aqm_subs_find(subs, &e[i]);
		struct ar_pipe *p;

		if (id == 0 || id >= a->npipes_max)
			continue;
		p = &a->pipes[id];
		a->active -= p->dirs != 0;
		p->dirs = e[i].has_autorate ? e[i].autorate : a->c.autorate;
		a->active += p->dirs != 0;
		for (int d = 0; d < 2; d++) {
			p->own_floor[d] = e[i].ar_floor_bps[d];
			p->own_ceiling[d] = e[i].ar_ceiling_bps[d];
		}
		/* The law starts over from the rate the change set. */
		p->on = false;
	}
}

void
aqm_ar_poll(struct aqm_ar *a, struct aqm_worker *w, uint64_t now_ns)
{
	uint32_t npipes;

	if (a->pipes == NULL || a->active == 0)
		return;
	npipes = RTE_MIN(aqm_sched_pipe_count(aqm_subs_sched(w->subs, AQM_DIR_DOWN)),
			 a->npipes_max);
	if (npipes == 0)
		return;
	for (uint32_t k = 0; k < AR_SWEEP && k < npipes; k++) {
		uint32_t id = a->cursor++;
		if (a->cursor >= npipes)
			a->cursor = 0;
		if (id >= npipes)
			continue;
		if (a->nb_workers > 1 && aqm_pipe_owner(a->owner, id, a->nb_workers) != a->worker)
			continue;
		if (!aqm_sched_pipe_live(aqm_subs_sched(w->subs, AQM_DIR_DOWN), id))
			continue; /* a removed subscriber's id, free */
		if (!a->pipes[id].on) {
			pipe_start(a, w, id, now_ns);
			continue;
		}
		if (now_ns - a->pipes[id].tick_ns >= a->c.interval)
			pipe_tick(a, w, id, now_ns);
	}
}

/* ------------------------------------------------------------------ */
/* Telemetry and the report.                                           */

struct ar_top {
	uint32_t pipe;
	struct prtt_summary s;
};

/* Totals of one direction over every worker and subscriber. */
static void
sum_hist(enum prtt_dir dir, uint32_t *hist, uint64_t *min_ns, uint64_t *subs)
{
	memset(hist, 0, PRTT_HIST_BUCKETS * sizeof(*hist));
	*min_ns = 0;
	*subs = 0;
	for (unsigned w = 0; w < ar_g.nb_workers; w++) {
		const struct aqm_ar *a = ar_g.a[w];
		if (a == NULL)
			continue;
		for (uint32_t s = 0; s < a->npipes_max; s++) {
			struct prtt_summary sm;
			const uint32_t *h = prtt_sub_hist(a->prtt, s, dir);
			if (prtt_sub_summary(a->prtt, s, dir, &sm) < 0 || sm.samples == 0)
				continue;
			(*subs)++;
			if (*min_ns == 0 || sm.min_ns < *min_ns)
				*min_ns = sm.min_ns;
			for (unsigned b = 0; b < PRTT_HIST_BUCKETS; b++)
				hist[b] = (uint32_t)RTE_MIN((uint64_t)hist[b] + h[b], UINT32_MAX);
		}
	}
}

/* The n worst subscribers of a direction by p99, worst first. */
static unsigned
top_n(enum prtt_dir dir, struct ar_top *top, unsigned n)
{
	unsigned have = 0;

	for (unsigned w = 0; w < ar_g.nb_workers; w++) {
		const struct aqm_ar *a = ar_g.a[w];
		if (a == NULL)
			continue;
		for (uint32_t s = 0; s < a->npipes_max; s++) {
			struct ar_top t = { .pipe = s };
			if (prtt_sub_summary(a->prtt, s, dir, &t.s) < 0 || t.s.samples == 0)
				continue;
			if (have == n && t.s.p99_ns <= top[n - 1].s.p99_ns)
				continue;
			unsigned i = have < n ? have++ : n - 1;
			while (i > 0 && top[i - 1].s.p99_ns < t.s.p99_ns) {
				top[i] = top[i - 1];
				i--;
			}
			top[i] = t;
		}
	}
	return have;
}

static void
counters_sum(struct prtt_counters *c, uint64_t *non_tcp)
{
	memset(c, 0, sizeof(*c));
	*non_tcp = 0;
	for (unsigned w = 0; w < ar_g.nb_workers; w++) {
		const struct aqm_ar *a = ar_g.a[w];
		if (a == NULL)
			continue;
		const uint64_t *src = (const uint64_t *)prtt_counters(a->prtt);
		uint64_t *dst = (uint64_t *)c;
		for (size_t i = 0; i < PRTT_NB_COUNTERS; i++)
			dst[i] += src[i];
		*non_tcp += a->non_tcp;
	}
}

static const char *const ar_dir_name[2] = { "down", "up" };

/* An array string, cut to what telemetry takes (longer ones are refused). */
static void
tel_add_line(struct rte_tel_data *l, char *line)
{
	if (strlen(line) >= RTE_TEL_MAX_STRING_LEN)
		line[RTE_TEL_MAX_STRING_LEN - 1] = '\0';
	rte_tel_data_add_array_string(l, line);
}

static int
tel_prtt(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct prtt_counters c;
	uint64_t non_tcp;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	counters_sum(&c, &non_tcp);
	const uint64_t *v = (const uint64_t *)&c;
	for (size_t i = 0; i < PRTT_NB_COUNTERS; i++)
		rte_tel_data_add_dict_u64(d, prtt_counter_names[i], v[i]);
	rte_tel_data_add_dict_u64(d, "non_tcp", non_tcp);
	for (int dir = 0; dir < 2; dir++) {
		uint32_t hist[PRTT_HIST_BUCKETS];
		uint64_t min_ns, subs;
		struct ar_top top[AR_TOP_MAX];
		struct rte_tel_data *t = rte_tel_data_alloc();
		struct rte_tel_data *l = rte_tel_data_alloc();
		char k[48], line[320];

		if (t == NULL || l == NULL) {
			rte_tel_data_free(t);
			rte_tel_data_free(l);
			return -ENOMEM;
		}
		sum_hist((enum prtt_dir)dir, hist, &min_ns, &subs);
		rte_tel_data_start_dict(t);
		rte_tel_data_add_dict_u64(t, "subscribers_sampled", subs);
		rte_tel_data_add_dict_u64(t, "min_us", min_ns / 1000);
		rte_tel_data_add_dict_u64(t, "p50_us", prtt_hist_percentile(hist, 50) / 1000);
		rte_tel_data_add_dict_u64(t, "p99_us", prtt_hist_percentile(hist, 99) / 1000);
		snprintf(k, sizeof(k), "%s", ar_dir_name[dir]);
		rte_tel_data_add_dict_container(d, k, t, 0);
		unsigned n = top_n((enum prtt_dir)dir, top, ar_g.c.prtt_top);
		rte_tel_data_start_array(l, RTE_TEL_STRING_VAL);
		for (unsigned i = 0; i < n; i++) {
			char name[64];
			aqm_ctl_pipe_name(top[i].pipe, name, sizeof(name));
			snprintf(line, sizeof(line), "pipe=%u %s samples=%" PRIu64 " min_us=%" PRIu64
				 " p50_us=%" PRIu64 " p99_us=%" PRIu64, top[i].pipe, name,
				 top[i].s.samples, top[i].s.min_ns / 1000,
				 top[i].s.p50_ns / 1000, top[i].s.p99_ns / 1000);
			tel_add_line(l, line);
		}
		snprintf(k, sizeof(k), "top_%s", ar_dir_name[dir]);
		rte_tel_data_add_dict_container(d, k, l, 0);
	}
	return 0;
}

/* Pipe id of "/sluice/prtt_sub,<id>". */
static int
tel_prtt_sub(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char *end;
	unsigned long id;

	(void)cmd;
	if (params == NULL || *params == '\0')
		return -EINVAL;
	id = strtoul(params, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	rte_tel_data_start_dict(d);
	for (unsigned w = 0; w < ar_g.nb_workers; w++) {
		const struct aqm_ar *a = ar_g.a[w];
		if (a == NULL || id >= a->npipes_max)
			continue;
		if (a->nb_workers > 1 && aqm_pipe_owner(a->owner, (uint32_t)id, a->nb_workers) != a->worker)
			continue;
		char name[64];
		aqm_ctl_pipe_name((uint32_t)id, name, sizeof(name));
		rte_tel_data_add_dict_string(d, "subscriber", name);
		rte_tel_data_add_dict_u64(d, "worker", w);
		for (int dir = 0; dir < 2; dir++) {
			struct prtt_summary sm;
			struct rte_tel_data *t = rte_tel_data_alloc();
			if (t == NULL)
				return -ENOMEM;
			prtt_sub_summary(a->prtt, (uint32_t)id, (enum prtt_dir)dir, &sm);
			rte_tel_data_start_dict(t);
			rte_tel_data_add_dict_u64(t, "samples", sm.samples);
			rte_tel_data_add_dict_u64(t, "min_us", sm.min_ns / 1000);
			rte_tel_data_add_dict_u64(t, "p50_us", sm.p50_ns / 1000);
			rte_tel_data_add_dict_u64(t, "p99_us", sm.p99_ns / 1000);
			rte_tel_data_add_dict_u64(t, "last_us", sm.last_ns / 1000);
			if (a->pipes != NULL && a->pipes[id].on) {
				const struct autorate_state *st = &a->pipes[id].st[dir];
				rte_tel_data_add_dict_u64(t, "autorate_bps", st->rate_bps);
				rte_tel_data_add_dict_u64(t, "configured_bps", a->pipes[id].cfg_bps[dir]);
				rte_tel_data_add_dict_u64(t, "capacity_bps", st->cap_bps);
				rte_tel_data_add_dict_u64(t, "baseline_us", st->baseline_ns / 1000);
			}
			rte_tel_data_add_dict_container(d, ar_dir_name[dir], t, 0);
		}
		return 0;
	}
	return -EINVAL;
}

static int
cmp_log(const void *x, const void *y)
{
	const struct ar_log_entry *a = x, *b = y;

	return a->t_ns < b->t_ns ? -1 : a->t_ns > b->t_ns;
}

/*
 * "/sluice/autorate_log[,SINCE_NS]": the rate changes after SINCE_NS (the
 * app's clock, as next_since gives it), oldest first, at most a page. A
 * reader polls with the last next_since and misses nothing the rings
 * still hold.
 */
static int
tel_autorate_log(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint64_t since = 0, total = 0, next;
	struct ar_log_entry *all;
	size_t n = 0, cap = 0;

	(void)cmd;
	if (params != NULL && *params != '\0') {
		char *end;
		since = strtoull(params, &end, 10);
		if (*end != '\0')
			return -EINVAL;
	}
	for (unsigned w = 0; w < ar_g.nb_workers; w++)
		if (ar_g.a[w] != NULL && ar_g.a[w]->log != NULL)
			cap += ar_g.a[w]->log_mask + 1;
	all = cap ? malloc(cap * sizeof(*all)) : NULL;
	for (unsigned w = 0; w < ar_g.nb_workers && all != NULL; w++) {
		const struct aqm_ar *a = ar_g.a[w];
		if (a == NULL || a->log == NULL)
			continue;
		uint64_t head = a->log_head, size = a->log_mask + 1;
		rte_smp_rmb();
		uint64_t from = head > size ? head - size : 0;
		size_t first = n;
		for (uint64_t i = from; i < head; i++) {
			const struct ar_log_entry *e = &a->log[i & a->log_mask];
			if (e->t_ns > since)
				all[n++] = *e;
		}
		/* Entries the worker overwrote while we copied are dropped. */
		rte_smp_rmb();
		uint64_t now_head = a->log_head;
		if (now_head > head && now_head - size > from) {
			uint64_t lost = RTE_MIN(now_head - size - from, (uint64_t)(n - first));
			memmove(&all[first], &all[first + lost], (n - first - lost) * sizeof(*all));
			n -= lost;
		}
	}
	if (n)
		qsort(all, n, sizeof(*all), cmp_log);
	rte_tel_data_start_dict(d);
	struct rte_tel_data *l = rte_tel_data_alloc();
	if (l == NULL) {
		free(all);
		return -ENOMEM;
	}
	rte_tel_data_start_array(l, RTE_TEL_STRING_VAL);
	next = since;
	for (size_t i = 0; i < n && i < AR_LOG_PAGE; i++) {
		char line[320];
		char name[48];
		aqm_ctl_pipe_name(all[i].pipe, name, sizeof(name));
		snprintf(line, sizeof(line), "%" PRIu64 " %u %s %s %s %" PRIu64 " %" PRIu64
			 " delta_us=%" PRIu64 " cap=%" PRIu64,
			 all[i].t_ns, all[i].pipe, name, ar_dir_name[all[i].dir & 1],
			 autorate_event_name((enum autorate_event)all[i].event),
			 all[i].from_bps, all[i].to_bps, all[i].delta_ns / 1000, all[i].cap_bps);
		tel_add_line(l, line);
		next = all[i].t_ns;
	}
	for (unsigned w = 0; w < ar_g.nb_workers; w++)
		if (ar_g.a[w] != NULL)
			total += ar_g.a[w]->rate_changes[0] + ar_g.a[w]->rate_changes[1];
	rte_tel_data_add_dict_string(d, "format",
		"t_ns pipe subscriber dir event from_bps to_bps delta_us cap_bps");
	rte_tel_data_add_dict_container(d, "changes", l, 0);
	rte_tel_data_add_dict_u64(d, "next_since", next);
	/* The clock the entries use (the workers' TSC in ns), now: a reader
	 * maps t_ns to its own clock with it. */
	rte_tel_data_add_dict_u64(d, "now_ns", (uint64_t)((unsigned __int128)rte_rdtsc() *
				  1000000000ULL / rte_get_tsc_hz()));
	rte_tel_data_add_dict_u64(d, "more", n > AR_LOG_PAGE ? n - AR_LOG_PAGE : 0);
	rte_tel_data_add_dict_u64(d, "rate_changes_total", total);
	for (int dir = 0; dir < 2; dir++) {
		for (int e = 0; e < AUTORATE_EVENT_MAX; e++) {
			char k[40];
			uint64_t v = 0;
			for (unsigned w = 0; w < ar_g.nb_workers; w++)
				if (ar_g.a[w] != NULL)
					v += ar_g.a[w]->events[dir][e];
			snprintf(k, sizeof(k), "%s_%s", ar_dir_name[dir],
				 autorate_event_name((enum autorate_event)e));
			rte_tel_data_add_dict_u64(d, k, v);
		}
	}
	free(all);
	return 0;
}

static void
register_telemetry(void)
{
	int rc = telemetry_register_cmd("/sluice/prtt", tel_prtt,
		"Passive RTT: counters, min/p50/p99 per direction, the worst subscribers. No parameters.");
	rc |= telemetry_register_cmd("/sluice/prtt_sub", tel_prtt_sub,
		"Passive RTT and autorate state of one pipe. Param: pipe id");
	rc |= telemetry_register_cmd("/sluice/autorate_log", tel_autorate_log,
		"Autorate rate changes after a time, oldest first, and tick counts. Param: since_ns (optional)");
	if (rc != 0)
		aqm_log(RTE_LOG_WARNING, "could not register /sluice/prtt, /sluice/prtt_sub and /sluice/autorate_log");
}

void
aqm_ar_report(FILE *out)
{
	struct prtt_counters c;
	uint64_t non_tcp;

	if (ar_g.created == 0)
		return;
	counters_sum(&c, &non_tcp);
	fprintf(out, "prtt");
	const uint64_t *v = (const uint64_t *)&c;
	for (size_t i = 0; i < PRTT_NB_COUNTERS; i++)
		fprintf(out, " %s=%" PRIu64, prtt_counter_names[i], v[i]);
	fprintf(out, " non_tcp=%" PRIu64 "\n", non_tcp);
	for (int dir = 0; dir < 2; dir++) {
		uint32_t hist[PRTT_HIST_BUCKETS];
		uint64_t min_ns, subs;
		struct ar_top top[AR_TOP_MAX];

		sum_hist((enum prtt_dir)dir, hist, &min_ns, &subs);
		fprintf(out, "prtt dir=%s subscribers_sampled=%" PRIu64 " min_us=%" PRIu64
			" p50_us=%" PRIu64 " p99_us=%" PRIu64 "\n", ar_dir_name[dir], subs,
			min_ns / 1000, prtt_hist_percentile(hist, 50) / 1000,
			prtt_hist_percentile(hist, 99) / 1000);
		unsigned n = top_n((enum prtt_dir)dir, top, ar_g.c.prtt_top);
		for (unsigned i = 0; i < n; i++) {
			char name[64];
			aqm_ctl_pipe_name(top[i].pipe, name, sizeof(name));
			fprintf(out, "prtt_top dir=%s rank=%u pipe=%u subscriber=%s samples=%" PRIu64
				" min_us=%" PRIu64 " p50_us=%" PRIu64 " p99_us=%" PRIu64 "\n",
				ar_dir_name[dir], i + 1, top[i].pipe, name, top[i].s.samples,
				top[i].s.min_ns / 1000, top[i].s.p50_ns / 1000,
				top[i].s.p99_ns / 1000);
		}
	}
	bool any = ar_g.c.autorate != 0;
	for (unsigned w = 0; w < ar_g.nb_workers; w++)
		any = any || (ar_g.a[w] != NULL && ar_g.a[w]->active != 0);
	if (!any)
		return;
	for (int dir = 0; dir < 2; dir++) {
		uint64_t ev[AUTORATE_EVENT_MAX] = { 0 }, changes = 0;
		for (unsigned w = 0; w < ar_g.nb_workers; w++) {
			const struct aqm_ar *a = ar_g.a[w];
			if (a == NULL)
				continue;
			for (int e = 0; e < AUTORATE_EVENT_MAX; e++)
				ev[e] += a->events[dir][e];
			changes += a->rate_changes[dir];
		}
		fprintf(out, "autorate dir=%s", ar_dir_name[dir]);
		for (int e = 0; e < AUTORATE_EVENT_MAX; e++)
			fprintf(out, " %s=%" PRIu64, autorate_event_name((enum autorate_event)e), ev[e]);
		fprintf(out, " rate_changes=%" PRIu64 "\n", changes);
	}
}
