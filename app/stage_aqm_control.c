/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The aqm stage's control side: run-time changes and what it knows.
 *
 *   reload     SIGHUP (the module's reload, on the control thread):
 *              re-read [aqm] and the subscriber CSV, validate, post.
 *   telemetry  /sluice/aqm (totals), /sluice/aqm_pipe (one pipe) and
 *              /sluice/aqm_set (one subscriber's or the default rates).
 *   mirror     prefix -> pipe id as the workers have it: every worker
 *              applies the same changes in the same order (app/control.h),
 *              all or nothing, so the ids are the same everywhere.
 *
 * aqm_g belongs to the control threads (telemetry, control) and is used
 * under aqm_g.lock; the workers only ever see changes through their
 * mailboxes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_telemetry.h>

#include "config.h"
#include "stage_aqm_priv.h"

/* A change for every worker: subscribers to remove, to add or re-rate,
 * default rates. */
struct aqm_change {
	struct ctl_change ctl;
	struct aqm_sub_entry *subs;  /* owned */
	uint32_t nsubs;
	struct aqm_sub_entry *dels;  /* owned: prefixes to remove */
	uint32_t ndels;
	bool set_default;
	uint64_t default_down, default_up;
};

/*
 * One row of the control plane's view of the table: prefix -> pipe id.
 * The ids are the workers' (every worker applies the same changes in the
 * same order, so worker 0's table answers for all): the prefixes of a
 * group, a LibreQoS circuit, share one; a removed subscriber's id is
 * free until a new one takes it. id_row[id] is a row of each id; an
 * open-addressing index finds a prefix's row, so that boot, reload and
 * telemetry stay linear in the subscribers (100k of them took 71 s to
 * start with a scan per prefix). Removing rows compacts the array and
 * rebuilds both indexes.
 */
struct aqm_mirror {
	struct aqm_sub_entry e;
	uint32_t id;
	uint32_t seen;  /* the reload that last found this row in its file */
	uint32_t last;  /* that reload's last line of this prefix (index) */
};

/* Owned by the control side (telemetry thread, control thread), under lock. */
static struct {
	pthread_mutex_t lock;
	unsigned nb_workers;
	unsigned created;
	struct aqm_worker *w[RTE_MAX_LCORE];
	struct ctl_bus *bus;             /* the workers' mailboxes */
	struct aqm_conf *running;        /* copy: fixed keys + current rates */
	struct aqm_mirror *mirror;
	uint32_t nmirror, cap_mirror;
	uint32_t *slot;                  /* row + 1 per slot, 0 empty; 2 x cap_mirror */
	uint32_t *id_row;                /* id -> a row + 1 (0: free); cap_mirror + 1 */
	uint32_t max_id;                 /* highest id in use */
	uint32_t npipes;                 /* ids in use */
	uint32_t generation;             /* of the reloads, for aqm_mirror.seen */
	uint64_t reloads, reload_errors, tel_changes;
	uint64_t removed;                /* prefixes removed (reload, aqm_del) */
	char last_error[600];
} aqm_g = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void
aqm_change_free(struct ctl_change *cc)
{
	struct aqm_change *c = (struct aqm_change *)cc;

	free(c->subs);
	free(c->dels);
	free(c);
}

/* A worker applies a change (ctl_mailbox_take()), whole or not at all. */
int
aqm_ctl_apply(void *ctx, struct ctl_change *cc, char *err, size_t errlen)
{
	struct aqm_worker *w = ctx;
	const struct aqm_change *c = (const struct aqm_change *)cc;
	int rc = 0;

	if (c->nsubs || c->ndels) {
		/* Which incarnations the removals may end (for autorate). */
		for (uint32_t i = 0; i < c->ndels; i++)
			w->del_tags[i] = aqm_subs_pipe_tag(w->subs,
							   aqm_subs_find(w->subs, &c->dels[i]));
		rc = aqm_subs_update(w->subs, c->subs, c->nsubs, c->dels, c->ndels,
				     err, errlen);
		if (rc >= 0) {
			for (uint32_t i = 0; i < c->ndels; i++)
				if (aqm_subs_pipe_of_tag(w->subs, w->del_tags[i]) < 0)
					aqm_ar_pipe_removed(w->ar, w->del_tags[i] & 0xffffff);
			aqm_owner_fill(w, c->subs, c->nsubs);
			aqm_ar_subs_applied(w->ar, w->subs, c->subs, c->nsubs);
		}
	}
	if (rc >= 0 && c->set_default &&
	    w->conf->default_policy == AQM_DEFAULT_PIPE) {
		struct aqm_shaper_params sp;
		aqm_conf_shaper(w->conf, c->default_down, &sp);
		aqm_sched_pipe_set_shaper(aqm_subs_sched(w->subs, AQM_DIR_DOWN), 0, &sp);
		aqm_conf_shaper(w->conf, c->default_up, &sp);
		aqm_sched_pipe_set_shaper(aqm_subs_sched(w->subs, AQM_DIR_UP), 0, &sp);
		aqm_ar_restart(w->ar, 0);
	}
	if (rc < 0) {
		w->change_errors++;
		return rc;
	}
	w->changes_applied++;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Control side: posting changes, reload, telemetry.                   */

/* One line under sluice.aqm (app/log.h) at level (RTE_LOG_INFO ...). */
void
aqm_log(uint32_t level, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!rte_log_can_log((uint32_t)sl_logtype_aqm, level))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	rte_log(level, (uint32_t)sl_logtype_aqm, "sluice: aqm: %s\n", line);
}

/* Whether a reload's line b changes anything of the running a (same prefix). */
static bool
sub_differs(const struct aqm_sub_entry *a, const struct aqm_sub_entry *b)
{
	return a->down_bps != b->down_bps || a->up_bps != b->up_bps ||
	       a->has_profile != b->has_profile ||
	       (a->has_profile && (a->profile.overhead != b->profile.overhead ||
				   a->profile.mpu != b->profile.mpu ||
				   a->profile.framing != b->profile.framing)) ||
	       a->has_isolation != b->has_isolation ||
	       (a->has_isolation && a->isolation != b->isolation) ||
	       a->has_autorate != b->has_autorate ||
	       (a->has_autorate && a->autorate != b->autorate) ||
	       memcmp(a->ar_floor_bps, b->ar_floor_bps, sizeof(a->ar_floor_bps)) != 0 ||
	       memcmp(a->ar_ceiling_bps, b->ar_ceiling_bps, sizeof(a->ar_ceiling_bps)) != 0 ||
	       a->group != b->group;
}

static bool
same_prefix(const struct aqm_sub_entry *a, const struct aqm_sub_entry *b)
{
	return a->family == b->family && a->depth == b->depth &&
	       memcmp(a->addr, b->addr, a->family == 4 ? 4 : 16) == 0;
}

/* FNV-1a over what same_prefix() compares. */
static uint32_t
prefix_hash(const struct aqm_sub_entry *e)
{
	uint32_t h = 2166136261u;
	unsigned len = e->family == 4 ? 4 : 16;

	h = (h ^ e->family) * 16777619u;
	h = (h ^ e->depth) * 16777619u;
	for (unsigned i = 0; i < len; i++)
		h = (h ^ e->addr[i]) * 16777619u;
	return h;
}

/* The index has 2 x cap_mirror slots (a power of two), at most half full. */
static uint32_t *
mirror_slot(const struct aqm_sub_entry *e)
{
	uint32_t mask = 2 * aqm_g.cap_mirror - 1;
	uint32_t i = prefix_hash(e) & mask;

	while (aqm_g.slot[i] != 0 &&
	       !same_prefix(&aqm_g.mirror[aqm_g.slot[i] - 1].e, e))
		i = (i + 1) & mask;
	return &aqm_g.slot[i];
}

static struct aqm_mirror *
mirror_find(const struct aqm_sub_entry *e)
{
	if (aqm_g.slot == NULL)
		return NULL;
	uint32_t row = *mirror_slot(e);
	return row ? &aqm_g.mirror[row - 1] : NULL;
}

/* A row of pipe id, or NULL. */
static struct aqm_mirror *
mirror_by_id(unsigned long id)
{
	if (id == 0 || id > aqm_g.max_id || aqm_g.id_row[id] == 0)
		return NULL;
	return &aqm_g.mirror[aqm_g.id_row[id] - 1];
}

/* Room for n more rows, so that mirror_apply() cannot fail. */
static int
mirror_reserve(uint32_t n)
{
	uint32_t cap = aqm_g.cap_mirror ? aqm_g.cap_mirror : 64;
	uint32_t *slot, *id_row;
	void *p;

	if ((uint64_t)aqm_g.nmirror + n <= aqm_g.cap_mirror)
		return 0;
	while (cap < aqm_g.nmirror + n)
		cap *= 2;
	slot = calloc(2 * (size_t)cap, sizeof(*slot));
	id_row = calloc((size_t)cap + 1, sizeof(*id_row));
	p = slot && id_row ?
	    realloc(aqm_g.mirror, (size_t)cap * sizeof(*aqm_g.mirror)) : NULL;
	if (p == NULL) {
		free(slot);
		free(id_row);
		return -ENOMEM;
	}
	aqm_g.mirror = p;
	aqm_g.cap_mirror = cap;
	free(aqm_g.slot);
	aqm_g.slot = slot;
	if (aqm_g.id_row != NULL)
		memcpy(id_row, aqm_g.id_row, ((size_t)aqm_g.max_id + 1) * sizeof(*id_row));
	free(aqm_g.id_row);
	aqm_g.id_row = id_row;
	for (uint32_t i = 0; i < aqm_g.nmirror; i++)
		*mirror_slot(&aqm_g.mirror[i].e) = i + 1;
	return 0;
}

/* The pipe id worker 0 (hence every worker) gives e's prefix. */
static uint32_t
worker_id(const struct aqm_sub_entry *e)
{
	return aqm_g.w[0] != NULL ? aqm_subs_find(aqm_g.w[0]->subs, e) : 0;
}

/* Both indexes and the id counts from the rows (after rows went). */
static void
mirror_reindex(void)
{
	memset(aqm_g.slot, 0, 2 * (size_t)aqm_g.cap_mirror * sizeof(*aqm_g.slot));
	memset(aqm_g.id_row, 0, ((size_t)aqm_g.cap_mirror + 1) * sizeof(*aqm_g.id_row));
	aqm_g.max_id = 0;
	aqm_g.npipes = 0;
	for (uint32_t i = 0; i < aqm_g.nmirror; i++) {
		uint32_t id = aqm_g.mirror[i].id;

		*mirror_slot(&aqm_g.mirror[i].e) = i + 1;
		if (id <= aqm_g.cap_mirror && aqm_g.id_row[id] == 0) {
			aqm_g.id_row[id] = i + 1;
			aqm_g.npipes++;
		}
		if (id > aqm_g.max_id)
			aqm_g.max_id = id;
	}
}

/*
 * Record what every worker just applied, whole (aqm_subs_update() is all
 * or nothing): the removed prefixes' rows go, and every entry's row takes
 * the id the workers gave it. Call only after mirror_reserve(n).
 */
static void
mirror_apply(const struct aqm_sub_entry *dels, uint32_t ndels,
	     const struct aqm_sub_entry *e, uint32_t n)
{
	bool moved = false;

	if (ndels != 0) {
		uint32_t k = 0;

		for (uint32_t i = 0; i < ndels; i++) {
			struct aqm_mirror *m = mirror_find(&dels[i]);

			if (m != NULL)
				m->id = UINT32_MAX; /* goes below */
		}
		for (uint32_t i = 0; i < aqm_g.nmirror; i++)
			if (aqm_g.mirror[i].id != UINT32_MAX)
				aqm_g.mirror[k++] = aqm_g.mirror[i];
		aqm_g.nmirror = k;
		mirror_reindex();
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t *slot = mirror_slot(&e[i]);
		uint32_t id = worker_id(&e[i]);

		if (*slot != 0) {
			struct aqm_mirror *m = &aqm_g.mirror[*slot - 1];

			moved |= m->id != id;
			m->e = e[i];
			m->id = id;
		} else {
			aqm_g.mirror[aqm_g.nmirror] = (struct aqm_mirror){ .e = e[i], .id = id };
			*slot = ++aqm_g.nmirror;
			if (id <= aqm_g.cap_mirror && aqm_g.id_row[id] == 0) {
				aqm_g.id_row[id] = *slot;
				aqm_g.npipes++;
			}
			if (id > aqm_g.max_id)
				aqm_g.max_id = id;
		}
	}
	/* A prefix that moved to another group's pipes (or a group's
	 * prefixes that changed ids) may have freed an id: count again. */
	if (moved) {
		for (uint32_t i = 0; i < aqm_g.nmirror; i++)
			aqm_g.mirror[i].id = worker_id(&aqm_g.mirror[i].e);
		mirror_reindex();
	}
}

/* Every worker applied c: the control side's view follows. */
static void
change_record(struct ctl_change *cc)
{
	const struct aqm_change *c = (const struct aqm_change *)cc;

	mirror_apply(c->dels, c->ndels, c->subs, c->nsubs);
	aqm_g.removed += c->ndels;
	if (c->set_default) {
		aqm_g.running->rate_down = c->default_down;
		aqm_g.running->rate_up = c->default_up;
	}
}

/*
 * Post one change to every worker and wait until all applied it
 * (ctl_post()). Takes ownership of subs. Call with aqm_g.lock held: one
 * poster at a time, so every worker sees changes in the same order.
 */
static int
post_change(struct aqm_sub_entry *subs, uint32_t nsubs, struct aqm_sub_entry *dels,
	    uint32_t ndels, bool set_default, uint64_t down, uint64_t up,
	    char *err, size_t errlen)
{
	struct aqm_change *c;
	int rc;

	/* A late change decides the ids of this one's new prefixes. */
	rc = ctl_catch_up(aqm_g.bus, err, errlen);
	if (rc < 0) {
		free(subs);
		free(dels);
		return rc;
	}
	/* The mirror must take whatever the workers apply. */
	c = calloc(1, sizeof(*c));
	if (c == NULL || mirror_reserve(nsubs) < 0) {
		free(subs);
		free(dels);
		free(c);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->ctl.record = change_record;
	c->ctl.free = aqm_change_free;
	c->subs = subs;
	c->nsubs = nsubs;
	c->dels = dels;
	c->ndels = ndels;
	c->set_default = set_default;
	c->default_down = down;
	c->default_up = up;
	return ctl_post(aqm_g.bus, &c->ctl, AQM_CHANGE_WAIT_MS, err, errlen);
}

/*
 * SIGHUP: re-read [aqm] and the CSV. Everything is validated before any
 * worker hears of it; keys that size memory or pick algorithms cannot
 * change while packets are queued, so changing them is an error.
 */
static void
aqm_reload(void)
{
	char err[512];
	struct aqm_conf *nc = NULL;
	struct aqm_conf *rc_ = aqm_g.running;
	struct ini_file *f = ini_load(rc_->path, err, sizeof(err));
	int rc;

	if (f == NULL)
		goto bad;
	if (ctl_catch_up(aqm_g.bus, err, sizeof(err)) < 0)
		goto bad;
	if (aqm_conf_parse(f, true, &nc, err, sizeof(err)) < 0)
		goto bad;
	if (nc == NULL) {
		snprintf(err, sizeof(err), "%s: [%s] is gone; the stage cannot be removed at run time (restart sluice)",
			 f->path, AQM_SECTION);
		goto bad;
	}
	if (!aqm_conf_reloadable(nc, rc_, f, err, sizeof(err)))
		goto bad;
	if (memcmp(&nc->ar, &rc_->ar, sizeof(nc->ar)) != 0) {
		snprintf(err, sizeof(err), "%s: [%s] passive_rtt, prtt_* and autorate* keys cannot change at run time (restart sluice)",
			 f->path, AQM_SECTION);
		goto bad;
	}
	/*
	 * Deltas: only what differs from what the workers run goes to them
	 * (a new prefix, or one whose line changed: its last line in the
	 * file wins), and the prefixes the file no longer lists are removed.
	 * An unchanged file posts nothing but the default rates.
	 */
	uint32_t fresh = 0, changed = 0, present = 0, nadd = 0, ndel = 0;
	struct aqm_sub_entry *add = NULL, *del = NULL;
	/* A new prefix may be listed more than once too: count it once, and
	 * post only its last line. fresh_slot indexes the new prefixes (row
	 * i + 1 of nc->subs), at most half full; fresh_last marks each one's
	 * last line. */
	uint32_t fmask = 1;
	while (fmask < 2 * (nc->nsubs + 1))
		fmask <<= 1;
	uint32_t *fresh_slot = calloc(fmask, sizeof(*fresh_slot));
	bool *fresh_last = calloc((size_t)nc->nsubs + 1, sizeof(*fresh_last));
	fmask--;
	if (fresh_slot == NULL || fresh_last == NULL) {
		free(fresh_slot);
		free(fresh_last);
		snprintf(err, sizeof(err), "out of memory");
		goto bad;
	}
	aqm_g.generation++;
	for (uint32_t i = 0; i < nc->nsubs; i++) {
		struct aqm_mirror *m = mirror_find(&nc->subs[i]);
		if (m == NULL) {
			uint32_t k = prefix_hash(&nc->subs[i]) & fmask;
			while (fresh_slot[k] != 0 &&
			       !same_prefix(&nc->subs[fresh_slot[k] - 1], &nc->subs[i]))
				k = (k + 1) & fmask;
			if (fresh_slot[k] == 0)
				fresh++;
			else
				fresh_last[fresh_slot[k] - 1] = false;
			fresh_slot[k] = i + 1;
			fresh_last[i] = true;
		} else {
			if (m->seen != aqm_g.generation)
				present++;
			m->seen = aqm_g.generation;
			m->last = i;
		}
	}
	free(fresh_slot);
	if (aqm_g.nmirror - present + fresh > rc_->max_subs) {
		free(fresh_last);
		snprintf(err, sizeof(err), "%s: [%s] subscribers: %u subscribers would exceed max_subscribers = %u",
			 f->path, AQM_SECTION, aqm_g.nmirror - present + fresh, rc_->max_subs);
		goto bad;
	}
	add = malloc(((size_t)nc->nsubs + 1) * sizeof(*add));
	del = malloc(((size_t)(aqm_g.nmirror - present) + 1) * sizeof(*del));
	if (add == NULL || del == NULL) {
		free(add);
		free(del);
		free(fresh_last);
		snprintf(err, sizeof(err), "out of memory");
		goto bad;
	}
	for (uint32_t i = 0; i < nc->nsubs; i++) {
		struct aqm_mirror *m = mirror_find(&nc->subs[i]);
		if (m == NULL) {
			if (fresh_last[i])
				add[nadd++] = nc->subs[i];
		} else if (m->last == i && sub_differs(&m->e, &nc->subs[i])) {
			add[nadd++] = nc->subs[i];
			changed++;
		}
	}
	free(fresh_last);
	for (uint32_t i = 0; i < aqm_g.nmirror; i++)
		if (aqm_g.mirror[i].seen != aqm_g.generation)
			del[ndel++] = aqm_g.mirror[i].e;
	ini_free(f);
	f = NULL;
	uint32_t nsubs = nc->nsubs;
	rc = post_change(add, nadd, del, ndel, true, nc->rate_down,
			 nc->rate_up, err, sizeof(err));
	if (rc < 0)
		goto bad;
	aqm_g.reloads++;
	if (nc->subs_note[0] != '\0')
		aqm_log(RTE_LOG_INFO, "%s: %s", nc->subs_path, nc->subs_note);
	aqm_log(RTE_LOG_INFO, "reloaded %s: %u subscribers (%u new, %u changed, %u removed), default rates down=%" PRIu64 " up=%" PRIu64 " bit/s; no packet of another pipe touched",
		rc_->path, nsubs, fresh, changed, ndel,
		nc->rate_down, nc->rate_up);
	aqm_conf_free(nc);
	return;
bad:
	aqm_g.reload_errors++;
	snprintf(aqm_g.last_error, sizeof(aqm_g.last_error), "%s", err);
	aqm_log(RTE_LOG_WARNING, "reload rejected, nothing changed: %s", err);
	aqm_conf_free(nc);
	ini_free(f);
}

/* The module's reload operation: on the control thread (app/control.c). */
void
aqm_module_reload(void)
{
	pthread_mutex_lock(&aqm_g.lock);
	aqm_reload();
	pthread_mutex_unlock(&aqm_g.lock);
}

/* Per-tin counters as tin_<name>_<counter> keys of dict d. */
static void
tel_tins(struct rte_tel_data *d, enum aqm_diffserv mode,
	 const struct aqm_tin_stats *ts, unsigned n)
{
	for (unsigned t = 0; t < n; t++) {
		const char *name = aqm_diffserv_tin_name(mode, t);
		char k[48];

		snprintf(k, sizeof(k), "tin_%s_sent", name);
		rte_tel_data_add_dict_u64(d, k, ts[t].tx_pkts);
		snprintf(k, sizeof(k), "tin_%s_sent_bytes", name);
		rte_tel_data_add_dict_u64(d, k, ts[t].tx_bytes);
		snprintf(k, sizeof(k), "tin_%s_drops", name);
		rte_tel_data_add_dict_u64(d, k, ts[t].drops);
		snprintf(k, sizeof(k), "tin_%s_marks", name);
		rte_tel_data_add_dict_u64(d, k, ts[t].marks);
	}
}

static void
tins_add(struct aqm_tin_stats *t, const struct aqm_tin_stats *s, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		t[i].tx_pkts += s[i].tx_pkts;
		t[i].tx_bytes += s[i].tx_bytes;
		t[i].drops += s[i].drops;
		t[i].marks += s[i].marks;
	}
}

static void
tel_dir(struct rte_tel_data *d, const struct aqm_pipe_stats *ps,
	const struct aqm_dir_stats *ds)
{
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "enqueued", ps->enq_pkts);
	rte_tel_data_add_dict_u64(d, "enqueued_bytes", ps->enq_bytes);
	rte_tel_data_add_dict_u64(d, "sent", ps->tx_pkts);
	rte_tel_data_add_dict_u64(d, "sent_bytes", ps->tx_bytes);
	for (int r = 0; r < AQM_DROP_MAX; r++) {
		char k[32];
		snprintf(k, sizeof(k), "drop_%s", aqm_drop_reason_name((enum aqm_drop_reason)r));
		rte_tel_data_add_dict_u64(d, k, ps->drops[r]);
	}
	rte_tel_data_add_dict_u64(d, "ce_marked", ps->ce_marks + ps->ce_threshold_marks);
	rte_tel_data_add_dict_u64(d, "ce_threshold_marked", ps->ce_threshold_marks);
	rte_tel_data_add_dict_u64(d, "ack_filtered", ps->ack_filtered);
	rte_tel_data_add_dict_u64(d, "bypassed", ps->bypassed);
	rte_tel_data_add_dict_u64(d, "ack_held", ps->ack_held);
	rte_tel_data_add_dict_u64(d, "backlog_pkts", ps->backlog_pkts);
	rte_tel_data_add_dict_u64(d, "backlog_bytes", ps->backlog_bytes);
	rte_tel_data_add_dict_u64(d, "held_pkts", ps->held_pkts);
	rte_tel_data_add_dict_u64(d, "sojourn_p50_us", aqm_sojourn_percentile(ps->sojourn_hist, 50) / 1000);
	rte_tel_data_add_dict_u64(d, "sojourn_p95_us", aqm_sojourn_percentile(ps->sojourn_hist, 95) / 1000);
	rte_tel_data_add_dict_u64(d, "sojourn_p99_us", aqm_sojourn_percentile(ps->sojourn_hist, 99) / 1000);
	if (ds != NULL) {
		rte_tel_data_add_dict_u64(d, "passed", ds->passed);
		rte_tel_data_add_dict_u64(d, "malformed_passed", ds->malformed);
		rte_tel_data_add_dict_u64(d, "handoffs", ds->handoffs);
		rte_tel_data_add_dict_u64(d, "handoff_in", ds->handoff_in);
		rte_tel_data_add_dict_u64(d, "handoff_drops", ds->handoff_drops);
		rte_tel_data_add_dict_u64(d, "handoff_stale", ds->handoff_stale);
		rte_tel_data_add_dict_u64(d, "removed_pipes", ds->removed_pipes);
		rte_tel_data_add_dict_u64(d, "removed_moved", ds->removed_moved);
		rte_tel_data_add_dict_u64(d, "removed_late", ds->removed_late);
		rte_tel_data_add_dict_u64(d, "removed_sent", ds->removed_sent);
		rte_tel_data_add_dict_u64(d, "host_shared", ds->host_shared);
		rte_tel_data_add_dict_u64(d, "way_hits", ds->ways.hits);
		rte_tel_data_add_dict_u64(d, "way_misses", ds->ways.misses);
		rte_tel_data_add_dict_u64(d, "way_collisions", ds->ways.collisions);
		rte_tel_data_add_dict_u64(d, "washed", ds->washed);
		rte_tel_data_add_dict_u64(d, "wash_shared", ds->wash_shared);
		tel_tins(d, aqm_g.running ? (enum aqm_diffserv)aqm_g.running->diffserv :
			 AQM_DIFFSERV_BESTEFFORT, ds->tins, ds->ntins);
	}
}

/* Totals of one direction over the given workers. */
static void
sum_dir(void *const *ctxs, unsigned nb, enum aqm_dir d,
	struct aqm_pipe_stats *ps, struct aqm_dir_stats *ds)
{
	memset(ps, 0, sizeof(*ps));
	memset(ds, 0, sizeof(*ds));
	for (unsigned i = 0; i < nb; i++) {
		struct aqm_worker *w = ctxs[i];
		struct aqm_pipe_stats one;
		if (w == NULL)
			continue;
		aqm_sched_stats(aqm_subs_sched(w->subs, d), &one);
		aqm_pipe_stats_add(ps, &one);
		ds->passed += w->st[d].passed;
		ds->malformed += w->st[d].malformed;
		ds->handoffs += w->st[d].handoffs;
		ds->handoff_in += w->st[d].handoff_in;
		ds->handoff_drops += w->st[d].handoff_drops;
		ds->handoff_stale += w->st[d].handoff_stale;
		struct aqm_removed_stats rs;
		aqm_sched_removed_stats(aqm_subs_sched(w->subs, d), &rs);
		ds->removed_pipes += rs.pipes;
		ds->removed_moved += rs.moved_pkts;
		ds->removed_late += rs.late_pkts;
		ds->removed_sent += rs.sent_pkts;
		ds->host_shared += aqm_sched_host_shared(aqm_subs_sched(w->subs, d));
		struct aqm_way_stats ws;
		aqm_sched_way_stats(aqm_subs_sched(w->subs, d), &ws);
		ds->ways.hits += ws.hits;
		ds->ways.misses += ws.misses;
		ds->ways.collisions += ws.collisions;
		uint64_t washed, shared;
		aqm_sched_wash_stats(aqm_subs_sched(w->subs, d), &washed, &shared);
		ds->washed += washed;
		ds->wash_shared += shared;
		struct aqm_tin_stats ts[AQM_TINS_MAX];
		ds->ntins = aqm_sched_tin_stats(aqm_subs_sched(w->subs, d),
						(enum aqm_diffserv)w->conf->diffserv, ts);
		tins_add(ds->tins, ts, ds->ntins);
	}
}

static const char *const dir_name[2] = { "down", "up" };

int
aqm_telemetry(void *const *ctxs, unsigned nb_workers, const char *params,
	      struct rte_tel_data *d)
{
	(void)params;
	rte_tel_data_start_dict(d);
	for (int dir = 0; dir < 2; dir++) {
		struct aqm_pipe_stats ps;
		struct aqm_dir_stats ds;
		struct rte_tel_data *c = rte_tel_data_alloc();
		if (c == NULL)
			return -ENOMEM;
		sum_dir(ctxs, nb_workers, (enum aqm_dir)dir, &ps, &ds);
		tel_dir(c, &ps, &ds);
		rte_tel_data_add_dict_container(d, dir_name[dir], c, 0);
	}
	uint64_t applied = 0, errors = 0;
	for (unsigned i = 0; i < nb_workers; i++) {
		const struct aqm_worker *w = ctxs[i];
		if (w != NULL) {
			applied += w->changes_applied;
			errors += w->change_errors;
		}
	}
	rte_tel_data_add_dict_u64(d, "subscribers", aqm_g.nmirror);
	rte_tel_data_add_dict_u64(d, "pipes", aqm_g.npipes);
	rte_tel_data_add_dict_u64(d, "max_pipe_id", aqm_g.max_id);
	rte_tel_data_add_dict_u64(d, "removed", aqm_g.removed);
	rte_tel_data_add_dict_u64(d, "workers", nb_workers);
	rte_tel_data_add_dict_u64(d, "reloads", aqm_g.reloads);
	rte_tel_data_add_dict_u64(d, "reload_errors", aqm_g.reload_errors);
	rte_tel_data_add_dict_u64(d, "telemetry_changes", aqm_g.tel_changes);
	rte_tel_data_add_dict_u64(d, "worker_changes_applied", applied);
	rte_tel_data_add_dict_u64(d, "worker_change_errors", errors);
	rte_tel_data_add_dict_u64(d, "default_rate_down", aqm_g.running ? aqm_g.running->rate_down : 0);
	rte_tel_data_add_dict_u64(d, "default_rate_up", aqm_g.running ? aqm_g.running->rate_up : 0);
	if (aqm_g.last_error[0])
		rte_tel_data_add_dict_string(d, "last_error", aqm_g.last_error);
	return aqm_rwnd_telemetry(ctxs, nb_workers, d);
}

static void
prefix_str(const struct aqm_sub_entry *e, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(e->family == 4 ? AF_INET : AF_INET6, e->addr, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, e->depth);
}

void
aqm_ctl_pipe_name(uint32_t id, char *buf, size_t len)
{
	snprintf(buf, len, id == 0 ? "default" : "pipe %u", id);
	pthread_mutex_lock(&aqm_g.lock);
	for (uint32_t i = 0; i < aqm_g.nmirror; i++)
		if (aqm_g.mirror[i].id == id) {
			prefix_str(&aqm_g.mirror[i].e, buf, len);
			break;
		}
	pthread_mutex_unlock(&aqm_g.lock);
}

/*
 * One subscriber line from telemetry: like a CSV line, but a blank,
 * comment or header line is an error here, not a line to skip.
 */
static int
tel_parse_sub(const char *line, struct aqm_sub_entry *e, char *why,
	      size_t whylen)
{
	int rc = aqm_subs_csv_parse_line(line, e, why, whylen);

	if (rc == 1) {
		snprintf(why, whylen, "blank, comment or header: not a subscriber");
		return -EINVAL;
	}
	return rc;
}

/* /sluice/aqm_pipe,<prefix | id | default> */
static int
tel_pipe(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct aqm_sub_entry key;
	char why[128], pfx[64] = "default";
	uint32_t id = 0;
	uint64_t down = 0, up = 0;
	const struct aqm_mirror *m = NULL;

	(void)cmd;
	if (params == NULL || *params == '\0')
		return -EINVAL;
	pthread_mutex_lock(&aqm_g.lock);
	(void)ctl_catch_up(aqm_g.bus, why, sizeof(why)); /* else a view one change old */
	if (strcmp(params, "default") == 0 || strcmp(params, "0") == 0) {
		id = 0;
		down = aqm_g.running->rate_down;
		up = aqm_g.running->rate_up;
	} else {
		char line[160];
		char *end;
		unsigned long n = strtoul(params, &end, 10);
		if (*end == '\0') {
			m = mirror_by_id(n);
		} else {
			int l = snprintf(line, sizeof(line), "%s,1mbit,1mbit", params);
			if (l < (int)sizeof(line) &&
			    tel_parse_sub(line, &key, why, sizeof(why)) == 0)
				m = mirror_find(&key);
		}
		if (m == NULL) {
			pthread_mutex_unlock(&aqm_g.lock);
			return -ENOENT;
		}
		id = m->id;
		down = m->e.down_bps;
		up = m->e.up_bps;
		prefix_str(&m->e, pfx, sizeof(pfx));
	}
	pthread_mutex_unlock(&aqm_g.lock);

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "id", id);
	rte_tel_data_add_dict_string(d, "prefix", pfx);
	rte_tel_data_add_dict_u64(d, "owner_worker", aqm_pipe_owner(aqm_g.w[0]->owner, id, aqm_g.nb_workers));
	rte_tel_data_add_dict_u64(d, "gen", aqm_subs_pipe_tag(aqm_g.w[0]->subs, id) >> 24);
	rte_tel_data_add_dict_u64(d, "rate_down", down);
	rte_tel_data_add_dict_u64(d, "rate_up", up);
	for (int dir = 0; dir < 2; dir++) {
		struct aqm_pipe_stats t, one;
		struct rte_tel_data *c = rte_tel_data_alloc();
		if (c == NULL)
			return -ENOMEM;
		memset(&t, 0, sizeof(t));
		for (unsigned i = 0; i < aqm_g.nb_workers; i++)
			if (aqm_sched_pipe_stats(aqm_subs_sched(aqm_g.w[i]->subs, (enum aqm_dir)dir),
						 id, &one) == 0)
				aqm_pipe_stats_add(&t, &one);
		tel_dir(c, &t, NULL);
		struct aqm_tin_stats tt[AQM_TINS_MAX], ts[AQM_TINS_MAX];
		int nt = 0;
		memset(tt, 0, sizeof(tt));
		for (unsigned i = 0; i < aqm_g.nb_workers; i++) {
			nt = aqm_sched_pipe_tin_stats(aqm_subs_sched(aqm_g.w[i]->subs, (enum aqm_dir)dir),
						      id, ts);
			if (nt > 0)
				tins_add(tt, ts, (unsigned)nt);
		}
		if (nt > 0)
			tel_tins(c, (enum aqm_diffserv)aqm_g.running->diffserv, tt, (unsigned)nt);
		/* What CoDel runs with at this rate (codel_rate_aware). */
		struct aqm_codel_params cp;
		if (aqm_sched_pipe_codel_params(aqm_subs_sched(aqm_g.w[aqm_pipe_owner(aqm_g.w[0]->owner, id, aqm_g.nb_workers)]->subs,
							       (enum aqm_dir)dir), id, &cp) == 0) {
			rte_tel_data_add_dict_u64(c, "codel_target_us", cp.target_ns / 1000);
			rte_tel_data_add_dict_u64(c, "codel_interval_us", cp.interval_ns / 1000);
		}
		rte_tel_data_add_dict_container(d, dir_name[dir], c, 0);
	}
	return 0;
}

/*
 * /sluice/aqm_pipes,<first id>: what a client needs to rank every
 * subscriber, AQM_PIPES_PAGE of them per call, in columns (a telemetry
 * reply holds at most 16 KB: 128 rows of five 64-bit numbers fit). "next"
 * is the id to ask for next, 0 after the last. sluice-exporter and
 * sluice-top read the whole table this way in n / 128 calls, then ask
 * /sluice/aqm_pipe for the few pipes they show in full.
 */
#define AQM_PIPES_PAGE 128

static int
tel_pipes(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static const char *const col[] = { "id", "sent_bytes_down", "sent_bytes_up",
					   "drops_down", "drops_up", "gen" };
	struct rte_tel_data *c[RTE_DIM(col)];
	unsigned long first = 1;
	uint32_t last, n;
	char why[128];

	(void)cmd;
	if (params != NULL && *params != '\0') {
		char *end;
		errno = 0;
		first = strtoul(params, &end, 10);
		if (*params < '0' || *params > '9' || *end != '\0' || first == 0 ||
		    errno != 0)
			return -EINVAL;
	}
	pthread_mutex_lock(&aqm_g.lock);
	(void)ctl_catch_up(aqm_g.bus, why, sizeof(why));
	n = aqm_g.max_id;  /* ids 1..n, some free (a removed subscriber's) */
	last = first > n ? 0 : (uint32_t)RTE_MIN((uint64_t)n, first + AQM_PIPES_PAGE - 1);

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "subscribers", aqm_g.npipes);
	rte_tel_data_add_dict_u64(d, "first", first);
	rte_tel_data_add_dict_u64(d, "next", last != 0 && last < n ? last + 1 : 0);
	for (unsigned k = 0; k < RTE_DIM(col); k++) {
		c[k] = rte_tel_data_alloc();
		if (c[k] == NULL) {
			while (k--)
				rte_tel_data_free(c[k]);
			pthread_mutex_unlock(&aqm_g.lock);
			return -ENOMEM;
		}
		rte_tel_data_start_array(c[k], RTE_TEL_U64_VAL);
	}
	/* Free ids (removed subscribers') are left out; "gen" is the id's
	 * incarnation: it changes when the id goes to another subscriber,
	 * whose counters start from zero. */
	for (uint32_t id = (uint32_t)first; last != 0 && id <= last; id++) {
		uint64_t v[RTE_DIM(col)] = { id, 0, 0, 0, 0, 0 };
		if (aqm_g.id_row[id] == 0)
			continue;
		v[5] = aqm_subs_pipe_tag(aqm_g.w[0]->subs, id) >> 24;
		for (int dir = 0; dir < 2; dir++)
			for (unsigned i = 0; i < aqm_g.nb_workers; i++) {
				struct aqm_pipe_stats one;
				if (aqm_sched_pipe_stats(aqm_subs_sched(aqm_g.w[i]->subs,
									(enum aqm_dir)dir),
							 id, &one) != 0)
					continue;
				v[1 + dir] += one.tx_bytes;
				for (int r = 0; r < AQM_DROP_MAX; r++)
					v[3 + dir] += one.drops[r];
			}
		for (unsigned k = 0; k < RTE_DIM(col); k++)
			rte_tel_data_add_array_u64(c[k], v[k]);
	}
	pthread_mutex_unlock(&aqm_g.lock);
	for (unsigned k = 0; k < RTE_DIM(col); k++)
		rte_tel_data_add_dict_container(d, col[k], c[k], 0);
	return 0;
}

/*
 * Post one entry from telemetry, to be set (del false) or removed; the
 * change list owns the copy. Caller holds aqm_g.lock.
 */
static int
tel_post_one(struct aqm_sub_entry *e, bool del, char *err, size_t errlen)
{
	struct aqm_sub_entry *one = malloc(sizeof(*one));

	if (one == NULL)
		return -ENOMEM;
	e->line = 0;
	*one = *e;
	return del ? post_change(NULL, 0, one, 1, false, 0, 0, err, errlen) :
		     post_change(one, 1, NULL, 0, false, 0, 0, err, errlen);
}

/*
 * The end of a telemetry change (what is aqm_set or aqm_del): count or
 * log it, release aqm_g.lock, answer with ok or "rejected" and the error.
 */
static void
tel_change_done(const char *what, const char *params, int rc,
		const char *err, const char *ok, struct rte_tel_data *d)
{
	char msg[600];

	if (rc == 0) {
		aqm_g.tel_changes++;
		aqm_log(RTE_LOG_INFO, "%s %.80s: %s", what, params, ok);
	} else {
		snprintf(msg, sizeof(msg), "%s %.80s: %s", what, params, err);
		memcpy(aqm_g.last_error, msg, sizeof(msg));
	}
	pthread_mutex_unlock(&aqm_g.lock);

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "status", rc == 0 ? ok : "rejected");
	if (rc != 0)
		rte_tel_data_add_dict_string(d, "error", err[0] ? err : strerror(-rc));
}

/* /sluice/aqm_del,<prefix>: remove one subscriber (its exact prefix). */
static int
tel_del(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char err[256] = "", why[128] = "", line[160];
	struct aqm_sub_entry e;
	int rc;

	(void)cmd;
	if (params == NULL || *params == '\0')
		return -EINVAL;
	pthread_mutex_lock(&aqm_g.lock);
	rc = ctl_catch_up(aqm_g.bus, err, sizeof(err));
	if (rc < 0) {
		/* Nothing to do: err says why. */
	} else if (strchr(params, ',') != NULL ||
		   snprintf(line, sizeof(line), "%s,1mbit,1mbit", params) >= (int)sizeof(line)) {
		snprintf(err, sizeof(err), "want one prefix (e.g. 198.18.0.1/32)");
		rc = -EINVAL;
	} else if (tel_parse_sub(line, &e, why, sizeof(why)) != 0) {
		snprintf(err, sizeof(err), "%s (want one prefix)", why);
		rc = -EINVAL;
	} else if (mirror_find(&e) == NULL) {
		snprintf(err, sizeof(err), "no subscriber has this exact prefix");
		rc = -ENOENT;
	} else {
		rc = tel_post_one(&e, true, err, sizeof(err));
	}
	tel_change_done("aqm_del", params, rc, err, "removed", d);
	return 0;
}

/* /sluice/aqm_set,<prefix>,<down>,<up>[,<profile>[,<isolation>]] or ,default,<down>,<up> */
static int
tel_set(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char err[256] = "", why[128] = "";
	struct aqm_sub_entry e;
	int rc;

	(void)cmd;
	if (params == NULL || *params == '\0')
		return -EINVAL;
	pthread_mutex_lock(&aqm_g.lock);
	rc = ctl_catch_up(aqm_g.bus, err, sizeof(err));
	if (rc < 0) {
		/* Nothing to do: err says why. */
	} else if (strncmp(params, "default,", 8) == 0) {
		char line[160];
		/* Borrow the CSV parser for the two rates. */
		int l = snprintf(line, sizeof(line), "198.18.0.0/32,%s", params + 8);
		if (l >= (int)sizeof(line)) {
			snprintf(err, sizeof(err), "too long (want default,down,up)");
			rc = -EINVAL;
		} else if (tel_parse_sub(line, &e, why, sizeof(why)) != 0) {
			snprintf(err, sizeof(err), "%s (want default,down,up)", why);
			rc = -EINVAL;
		} else if (e.has_profile || e.has_isolation || e.has_autorate ||
			   e.ar_floor_bps[0] || e.ar_floor_bps[1] ||
			   e.ar_ceiling_bps[0] || e.ar_ceiling_bps[1]) {
			snprintf(err, sizeof(err), "the default pipe takes no profile, isolation or autorate: they come from [aqm] (want default,down,up)");
			rc = -EINVAL;
		} else if (aqm_g.running->default_policy != AQM_DEFAULT_PIPE) {
			snprintf(err, sizeof(err), "no default pipe: [aqm] default = pass");
			rc = -EINVAL;
		} else {
			rc = post_change(NULL, 0, NULL, 0, true, e.down_bps, e.up_bps, err, sizeof(err));
		}
	} else if (tel_parse_sub(params, &e, why, sizeof(why)) != 0) {
		snprintf(err, sizeof(err), "%s (want prefix,down,up[,profile[,isolation[,autorate[,floor_down[,floor_up[,ceiling_down[,ceiling_up]]]]]]])", why);
		rc = -EINVAL;
	} else if (aqm_ar_check_entry(&aqm_g.running->ar, &e, why, sizeof(why)) != 0) {
		snprintf(err, sizeof(err), "%s", why);
		rc = -EINVAL;
	} else if (e.has_isolation && e.isolation != AQM_ISO_FLOWS &&
		   aqm_g.running->isolation == AQM_ISO_FLOWS) {
		snprintf(err, sizeof(err), "[aqm] isolation = flows reserves no host state: a subscriber cannot isolate hosts");
		rc = -EINVAL;
	} else if (mirror_find(&e) == NULL &&
		   aqm_g.nmirror >= aqm_g.running->max_subs) {
		snprintf(err, sizeof(err), "table full: max_subscribers = %u",
			 aqm_g.running->max_subs);
		rc = -ENOSPC;
	} else {
		rc = tel_post_one(&e, false, err, sizeof(err));
	}
	tel_change_done("aqm_set", params, rc, err, "applied", d);
	return 0;
}
/* ------------------------------------------------------------------ */
/* Boot.                                                               */

int
aqm_ctl_boot(const struct aqm_conf *c, unsigned nb_workers)
{
	aqm_g.nb_workers = nb_workers;
	aqm_g.running = calloc(1, sizeof(*aqm_g.running));
	if (aqm_g.running == NULL)
		return -ENOMEM;
	*aqm_g.running = *c;
	aqm_g.running->subs = NULL;
	aqm_g.running->nsubs = 0;
	/* The rows come in aqm_ctl_worker_ready(): the ids are worker 0's. */
	if (mirror_reserve(c->nsubs) < 0)
		return -ENOMEM;
	aqm_g.bus = ctl_bus_create("aqm_mb", nb_workers);
	if (aqm_g.bus == NULL)
		return -ENOMEM;
	return 0;
}

const struct aqm_conf *
aqm_ctl_running(void)
{
	return aqm_g.running;
}

struct rte_ring *
aqm_ctl_mailbox(unsigned worker, int socket)
{
	return ctl_bus_mailbox(aqm_g.bus, worker, socket);
}

void
aqm_ctl_worker_ready(struct aqm_worker *w, const struct aqm_conf *c,
		     const struct stage_env *env)
{
	static const char *const ackf[4] = { "off", "down", "up", "both" };
	int rc;

	aqm_g.w[env->worker] = w;
	aqm_g.created++;
	if (aqm_g.created != env->nb_workers)
		return;
	pthread_mutex_lock(&aqm_g.lock);
	mirror_apply(NULL, 0, c->subs, c->nsubs);
	pthread_mutex_unlock(&aqm_g.lock);
	rc = telemetry_register_cmd("/sluice/aqm_pipe", tel_pipe,
		"One pipe, both directions. Param: prefix, pipe id or default");
	rc |= telemetry_register_cmd("/sluice/aqm_pipes", tel_pipes,
		"Pipe ids, sent bytes, drops per dir, 128 per call. Param: first id; reply's next: the id to ask next (0: done)");
	rc |= telemetry_register_cmd("/sluice/aqm_set", tel_set,
		"Set rates: prefix,down,up[,profile[,isolation]] or default,down,up");
	rc |= telemetry_register_cmd("/sluice/aqm_del", tel_del,
		"Remove a subscriber. Param: its exact prefix; what its pipes hold leaves at once, unshaped");
	if (rc != 0)
		aqm_log(RTE_LOG_WARNING, "could not register /sluice/aqm_pipe, /sluice/aqm_pipes and /sluice/aqm_set");
	if (c->subs_note[0] != '\0')
		aqm_log(RTE_LOG_INFO, "%s: %s", c->subs_path, c->subs_note);
	aqm_log(RTE_LOG_INFO, "%u subscriber(s), unknown addresses %s, default rates down=%" PRIu64 " up=%" PRIu64 " bit/s, %s, ack_filter %s, ack_hold %" PRIu64 " us, bypass %s, codel_rate_aware %s, blue %s, isolation %s, diffserv %s, wash %s, %u worker(s)",
		c->nsubs,
		c->default_policy == AQM_DEFAULT_PIPE ? "go to the default pipe" : "pass unshaped",
		c->rate_down, c->rate_up,
		c->qdisc == AQM_QDISC_FIFO ? "fifo" : "fq_codel",
		ackf[c->ack_filter & 3], c->ack_hold_ns / 1000,
		c->bypass ? "on" : "off",
		c->codel_rate_aware ? "on" : "off",
		c->blue ? "on" : "off",
		aqm_isolation_name(c->isolation), aqm_diffserv_name((enum aqm_diffserv)c->diffserv),
		c->wash ? "on" : "off", env->nb_workers);
}

void
aqm_report(void *const *ctxs, unsigned nb_workers, FILE *out)
{
	for (int dir = 1; dir >= 0; dir--) {
		struct aqm_pipe_stats ps;
		struct aqm_dir_stats ds;

		sum_dir(ctxs, nb_workers, (enum aqm_dir)dir, &ps, &ds);
		fprintf(out, "aqm dir=%s enqueued=%" PRIu64 " sent=%" PRIu64
			" drop_codel=%" PRIu64 " drop_overflow=%" PRIu64
			" drop_memory=%" PRIu64 " drop_blue=%" PRIu64
			" drop_ecn=%" PRIu64 " ce_marked=%" PRIu64
			" ce_threshold=%" PRIu64 " ack_filtered=%" PRIu64
			" bypassed=%" PRIu64 " ack_held=%" PRIu64
			" host_shared=%" PRIu64 " way_hits=%" PRIu64
			" way_misses=%" PRIu64 " way_collisions=%" PRIu64
			" washed=%" PRIu64 " wash_shared=%" PRIu64
			" backlog_pkts=%" PRIu64 " backlog_bytes=%" PRIu64
			" held_pkts=%" PRIu64 " passed=%" PRIu64
			" malformed_passed=%" PRIu64 " handoffs=%" PRIu64
			" handoff_in=%" PRIu64 " handoff_drops=%" PRIu64
			" p50_us=%" PRIu64 " p95_us=%" PRIu64 " p99_us=%" PRIu64
			" removed_pipes=%" PRIu64 " removed_moved=%" PRIu64
			" removed_late=%" PRIu64 " removed_sent=%" PRIu64
			" handoff_stale=%" PRIu64 "\n",
			dir_name[dir], ps.enq_pkts, ps.tx_pkts,
			ps.drops[AQM_DROP_CODEL], ps.drops[AQM_DROP_OVERFLOW],
			ps.drops[AQM_DROP_MEMORY], ps.drops[AQM_DROP_BLUE],
			ps.drops[AQM_DROP_ECN], ps.ce_marks + ps.ce_threshold_marks, ps.ce_threshold_marks,
			ps.ack_filtered, ps.bypassed, ps.ack_held, ds.host_shared,
			ds.ways.hits, ds.ways.misses, ds.ways.collisions,
			ds.washed, ds.wash_shared,
			ps.backlog_pkts,
			ps.backlog_bytes, ps.held_pkts,
			ds.passed, ds.malformed,
			ds.handoffs, ds.handoff_in, ds.handoff_drops,
			aqm_sojourn_percentile(ps.sojourn_hist, 50) / 1000,
			aqm_sojourn_percentile(ps.sojourn_hist, 95) / 1000,
			aqm_sojourn_percentile(ps.sojourn_hist, 99) / 1000,
			ds.removed_pipes, ds.removed_moved, ds.removed_late,
			ds.removed_sent, ds.handoff_stale);
		for (unsigned t = 0; t < ds.ntins; t++)
			fprintf(out, "aqm_tin dir=%s tin=%s sent=%" PRIu64
				" sent_bytes=%" PRIu64 " drops=%" PRIu64
				" marks=%" PRIu64 "\n",
				dir_name[dir],
				aqm_diffserv_tin_name((enum aqm_diffserv)aqm_g.running->diffserv, t),
				ds.tins[t].tx_pkts, ds.tins[t].tx_bytes, ds.tins[t].drops,
				ds.tins[t].marks);
	}
	fprintf(out, "aqm_control subscribers=%u reloads=%" PRIu64
		" reload_errors=%" PRIu64 " telemetry_changes=%" PRIu64
		" pipes=%u removed=%" PRIu64 "\n",
		aqm_g.nmirror, aqm_g.reloads, aqm_g.reload_errors,
		aqm_g.tel_changes, aqm_g.npipes, aqm_g.removed);
	aqm_ar_report(out);
	aqm_rwnd_report(ctxs, nb_workers, out);
}
