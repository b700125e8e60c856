/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The impair stage: lib/impair per port pair and direction, per worker.
 *
 *   burst  every packet of an impaired direction goes into its instance
 *          (queued or dropped there, counted by reason); directions
 *          without impairment pass untouched.
 *   poll   release what is due and emit it toward the direction's out
 *          port (2k+1 for up, 2k for down).
 *   flush  shutdown: release everything still held, in release order.
 *
 * Configuration is layered: [impair] gives defaults for every direction,
 * [impair.pairN] overrides them for both directions of pair N, and
 * [impair.pairN.up] / [impair.pairN.down] for one direction ("up" is what
 * arrives on port 2k, the subscriber side). Each key comes from the most
 * specific section that sets it. See config/impair.ini.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_telemetry.h>

#include "config.h"
#include "impair.h"
#include "log.h"
#include "stage_impair.h"
#include "stages.h"

#define IMPAIR_SECTION "impair"
#define PAIR_PREFIX "impair.pair"
#define IMPAIR_MAX_PAIRS 64       /* pairs a section may name: pair0..pair63 */
#define IMPAIR_BATCH 32           /* packets per dequeue call */
#define IMPAIR_POLL_BATCHES 8     /* dequeue calls per direction per poll */

enum { DIR_UP = 0, DIR_DOWN = 1 };
static const char *const dir_name[2] = { "up", "down" };

/* ------------------------------------------------------------------ */
/* Configuration                                                       */

/* The keys of [impair], [impair.pairN] and [impair.pairN.up|down], in one
 * table; defaults as written in config/impair.ini. A bare time is in
 * milliseconds, as netem users expect. */
enum ik {
	IK_SEED, IK_LOSS, IK_GE_P, IK_GE_R, IK_GE_LOSS_GOOD, IK_GE_LOSS_BAD,
	IK_DELAY, IK_JITTER, IK_JITTER_DIST, IK_JITTER_REORDER, IK_DUPLICATE,
	IK_REORDER, IK_REORDER_GAP, IK_LIMIT, IK_MAX
};

static const struct ini_enum jitter_dists[] = {
	{ "uniform", IMPAIR_JITTER_UNIFORM }, { "normal", IMPAIR_JITTER_NORMAL },
	{ NULL, 0 },
};

#define IP(f) INI_AT(struct impair_params, f)
#define IMPAIR_TIME(f) INI_KIND_TIME, IP(f), 0, IMPAIR_TIME_MAX, 1000000
static const struct ini_key impair_keys[IK_MAX] = {
	[IK_SEED] = { "seed", INI_KIND_UINT, IP(seed), .def = "1",
		.doc = "PRNG seed; streams derive from (seed, pair, direction, worker)" },
	[IK_LOSS] = { "loss", INI_KIND_PERCENT, IP(loss), .def = "0%",
		.doc = "independent random loss probability" },
	[IK_GE_P] = { "ge_p", INI_KIND_PERCENT, IP(ge_p), .def = "0%",
		.doc = "Gilbert-Elliott: probability Good -> Bad per packet" },
	[IK_GE_R] = { "ge_r", INI_KIND_PERCENT, IP(ge_r), .def = "0%",
		.doc = "Gilbert-Elliott: probability Bad -> Good per packet" },
	[IK_GE_LOSS_GOOD] = { "ge_loss_good", INI_KIND_PERCENT, IP(ge_loss_good),
		.def = "0%", .doc = "Gilbert-Elliott: loss in the Good state" },
	[IK_GE_LOSS_BAD] = { "ge_loss_bad", INI_KIND_PERCENT, IP(ge_loss_bad),
		.def = "100%", .doc = "Gilbert-Elliott: loss in the Bad state" },
	[IK_DELAY] = { "delay", IMPAIR_TIME(delay_ns), .def = "0ms", .unit = "ms",
		.doc = "fixed one-way delay" },
	[IK_JITTER] = { "jitter", IMPAIR_TIME(jitter_ns), .def = "0ms", .unit = "ms",
		.doc = "jitter added to the delay" },
	[IK_JITTER_DIST] = { "jitter_dist", INI_KIND_ENUM, IP(jitter_dist),
		.names = jitter_dists, .def = "uniform",
		.doc = "jitter distribution: uniform or normal" },
	[IK_JITTER_REORDER] = { "jitter_reorder", INI_KIND_BOOL, IP(jitter_reorder),
		.def = "no", .doc = "let jitter reorder packets" },
	[IK_DUPLICATE] = { "duplicate", INI_KIND_PERCENT, IP(duplicate), .def = "0%",
		.doc = "probability a packet is sent twice" },
	[IK_REORDER] = { "reorder", INI_KIND_PERCENT, IP(reorder), .def = "0%",
		.doc = "probability a packet is held back by reorder_gap" },
	[IK_REORDER_GAP] = { "reorder_gap", IMPAIR_TIME(reorder_gap_ns), .def = "10ms",
		.unit = "ms", .doc = "how long a reordered packet is held back" },
	[IK_LIMIT] = { "limit", INI_KIND_UINT, IP(limit), 1, IMPAIR_LIMIT_MAX,
		.def = "1000", .unit = "packets", .doc = "packets a direction may hold" },
};
#undef IMPAIR_TIME
#undef IP

/* One section's worth of keys. src[k] != NULL where the section sets k;
 * the pointers are only read while the file is parsed. */
struct impair_level {
	struct impair_params p;
	const struct ini_entry *src[IK_MAX];
};

/* The parsed configuration: effective parameters per pair and direction
 * (pairs 0..IMPAIR_MAX_PAIRS-1), and which of them impair anything. */
struct impair_conf {
	struct impair_params dir[IMPAIR_MAX_PAIRS][2];
	bool active[IMPAIR_MAX_PAIRS][2];
	uint64_t pairs_named; /* pairs some [impair.pairN...] section names */
};

/* "impair" -> level 0; "impair.pairN" -> pair N, dir -1; "impair.pairN.up"
 * / ".down" -> pair N, dir 0 / 1. Returns 0, or -1 if not ours. */
static int
parse_section(const char *s, int *pair, int *dir)
{
	char *end;
	unsigned long n;

	*pair = -1;
	*dir = -1;
	if (strcmp(s, IMPAIR_SECTION) == 0)
		return 0;
	if (strncmp(s, PAIR_PREFIX, strlen(PAIR_PREFIX)) != 0)
		return -1;
	s += strlen(PAIR_PREFIX);
	if (*s < '0' || *s > '9')
		return -1;
	n = strtoul(s, &end, 10);
	if (n >= IMPAIR_MAX_PAIRS)
		return -1;
	if (*end == '\0')
		;
	else if (strcmp(end, ".up") == 0)
		*dir = DIR_UP;
	else if (strcmp(end, ".down") == 0)
		*dir = DIR_DOWN;
	else
		return -1;
	*pair = (int)n;
	return 0;
}

static int
impair_owns_section(const char *s)
{
	int pair, dir;

	return parse_section(s, &pair, &dir) == 0;
}

/* Effective parameters of (pair, dir), and which entry set each key. */
static void
merge(const struct impair_level *levels[3], struct impair_params *out,
      const struct ini_entry *src[IK_MAX])
{
	impair_params_default(out);
	for (int k = 0; k < IK_MAX; k++) {
		src[k] = NULL;
		for (int l = 2; l >= 0; l--) {
			if (levels[l] == NULL || levels[l]->src[k] == NULL)
				continue;
			memcpy((char *)out + impair_keys[k].off,
			       (const char *)&levels[l]->p + impair_keys[k].off,
			       impair_keys[k].width);
			src[k] = levels[l]->src[k];
			break;
		}
	}
}

static void
impair_conf_free(void *conf)
{
	free(conf);
}

/* Levels: [0] = [impair], [1 + pair] = [impair.pairN],
 * [1 + IMPAIR_MAX_PAIRS + 2 * pair + dir] = [impair.pairN.dir]. */
#define NB_LEVELS (1 + 3 * IMPAIR_MAX_PAIRS)

static int
level_index(int pair, int dir)
{
	if (pair < 0)
		return 0;
	if (dir < 0)
		return 1 + pair;
	return 1 + IMPAIR_MAX_PAIRS + 2 * pair + dir;
}

static int
impair_parse(struct ini_file *f, void **conf, char *err, size_t errlen)
{
	struct impair_level *lv = NULL;
	struct impair_conf *c = NULL;
	bool present = false, any = false;
	char why[192];

	*conf = NULL;
	for (unsigned s = 0; s < f->nsections; s++)
		present |= impair_owns_section(f->sections[s]) != 0;
	if (!present)
		return 0;
	lv = calloc(NB_LEVELS, sizeof(*lv));
	c = calloc(1, sizeof(*c));
	if (lv == NULL || c == NULL) {
		snprintf(err, errlen, "%s: out of memory", f->path);
		goto fail;
	}
	for (unsigned i = 0; i < f->count; i++) {
		struct ini_entry *e = &f->entries[i];
		int pair, dir, k;

		if (parse_section(e->section, &pair, &dir) < 0)
			continue;
		if (pair >= 0)
			c->pairs_named |= 1ULL << pair;
		const struct ini_key *key = ini_key_find(impair_keys, IK_MAX, e->key);
		if (key == NULL)
			continue; /* left unused: config.c says "unknown key" */
		k = (int)(key - impair_keys);
		struct impair_level *l = &lv[level_index(pair, dir)];
		if (ini_key_parse(key, e->value, &l->p, why, sizeof(why)) < 0) {
			sl_config_err(err, errlen, f, e, why);
			goto fail;
		}
		l->src[k] = e;
		e->used = true;
	}
	for (int pair = 0; pair < IMPAIR_MAX_PAIRS; pair++) {
		for (int dir = 0; dir < 2; dir++) {
			const struct impair_level *use[3] = {
				&lv[0], &lv[level_index(pair, -1)],
				&lv[level_index(pair, dir)],
			};
			const struct ini_entry *src[IK_MAX];
			struct impair_params *p = &c->dir[pair][dir];

			merge(use, p, src);
			if (impair_params_check(p, why, sizeof(why)) < 0) {
				/* Only cross-key rules are left to fail here
				 * (single values were range-checked above). */
				const struct ini_entry *at = src[IK_GE_P] ? src[IK_GE_P] : src[IK_GE_R];

				sl_config_err(err, errlen, f, at, why);
				goto fail;
			}
			c->active[pair][dir] = impair_params_active(p);
			any |= c->active[pair][dir];
		}
	}
	free(lv);
	/* Nothing impaired anywhere (e.g. the commented reference file): leave
	 * the stage out of the pipeline altogether. */
	if (!any) {
		free(c);
		return 0;
	}
	*conf = c;
	return 0;
fail:
	free(lv);
	free(c);
	return -1;
}

/* ------------------------------------------------------------------ */
/* Datapath                                                            */

struct impair_dir {
	struct impair *im;
	uint16_t out_port;
	uint16_t pair;
	uint8_t up;
	struct impair_params prm; /* as configured, for telemetry */
};

struct impair_stage {
	uint16_t nb_pairs;
	uint16_t nb_dirs;              /* active directions, in dirs[] */
	struct impair_dir *dirs;       /* nb_dirs entries */
	struct impair_dir **by_pair;   /* [pair * 2 + dir], NULL: pass */
};

static uint16_t
impair_stage_burst(void *ctx, const struct stage_burst *b,
		   struct rte_mbuf **pkts, uint16_t n, uint64_t now_ns)
{
	struct impair_stage *st = ctx;
	struct impair_dir *d;

	if (unlikely(b->pair >= st->nb_pairs))
		return n;
	d = st->by_pair[b->pair * 2 + (b->upstream ? DIR_UP : DIR_DOWN)];
	if (d == NULL)
		return n;
	/* now_ns is read after rx (worker.c), so it is never earlier than
	 * the arrival and the added delay is a floor. */
	impair_enqueue_burst(d->im, pkts, n, now_ns);
	return 0;
}

static void
impair_stage_poll(void *ctx, struct stage_emitter *em, uint64_t now_ns)
{
	struct impair_stage *st = ctx;
	struct rte_mbuf *out[IMPAIR_BATCH];

	for (uint16_t i = 0; i < st->nb_dirs; i++) {
		struct impair_dir *d = &st->dirs[i];

		if (impair_next_release_ns(d->im) > now_ns)
			continue;
		for (int b = 0; b < IMPAIR_POLL_BATCHES; b++) {
			uint16_t k = impair_dequeue_burst(d->im, out,
							  IMPAIR_BATCH, now_ns);

			for (uint16_t j = 0; j < k; j++)
				stage_emit(em, d->out_port, out[j]);
			if (k < IMPAIR_BATCH)
				break;
		}
	}
}

static uint32_t
impair_stage_pending(void *ctx)
{
	struct impair_stage *st = ctx;
	uint32_t n = 0;

	for (uint16_t i = 0; i < st->nb_dirs; i++)
		n += impair_pending(st->dirs[i].im);
	return n;
}

static void
impair_stage_flush(void *ctx, struct stage_emitter *em, uint64_t now_ns)
{
	struct impair_stage *st = ctx;
	struct rte_mbuf *out[IMPAIR_BATCH];

	for (uint16_t i = 0; i < st->nb_dirs; i++) {
		struct impair_dir *d = &st->dirs[i];
		uint16_t k;

		while ((k = impair_flush_burst(d->im, out, IMPAIR_BATCH,
					       now_ns)) > 0)
			for (uint16_t j = 0; j < k; j++)
				stage_emit(em, d->out_port, out[j]);
	}
}

static void
impair_stage_destroy(void *ctx)
{
	struct impair_stage *st = ctx;

	if (st == NULL)
		return;
	for (uint16_t i = 0; i < st->nb_dirs; i++)
		impair_free(st->dirs[i].im);
	rte_free(st);
}

static const struct stage_ops impair_stage_ops = {
	.name = "impair",
	.burst = impair_stage_burst,
	.poll = impair_stage_poll,
	.pending = impair_stage_pending,
	.flush = impair_stage_flush,
	.destroy = impair_stage_destroy,
};

/* A direction's streams depend on (seed, pair, direction, worker), so the
 * two directions of a link never mirror each other's losses. lib/impair
 * runs the result through splitmix64, so neighbouring values give
 * unrelated streams. */
static uint64_t
instance_seed(uint64_t seed, unsigned pair, unsigned dir, unsigned worker)
{
	return seed + 0x9e3779b97f4a7c15ULL *
		      (1 + ((uint64_t)worker << 16 | pair << 1 | dir));
}

static void
describe(const struct impair_params *p, char *buf, size_t len)
{
	snprintf(buf, len,
		 "loss=%g%% ge_p=%g%% ge_r=%g%% ge_loss_good=%g%% ge_loss_bad=%g%% "
		 "delay=%" PRIu64 "us jitter=%" PRIu64 "us jitter_dist=%s "
		 "jitter_reorder=%s duplicate=%g%% reorder=%g%% reorder_gap=%" PRIu64 "us "
		 "limit=%u seed=%" PRIu64,
		 p->loss * 100, p->ge_p * 100, p->ge_r * 100,
		 p->ge_loss_good * 100, p->ge_loss_bad * 100,
		 p->delay_ns / 1000, p->jitter_ns / 1000,
		 p->jitter_dist == IMPAIR_JITTER_NORMAL ? "normal" : "uniform",
		 p->jitter_reorder ? "yes" : "no", p->duplicate * 100,
		 p->reorder * 100, p->reorder_gap_ns / 1000, p->limit, p->seed);
}

static int
impair_stage_create(const void *conf, const struct stage_env *env,
		    struct stage *out)
{
	const struct impair_conf *c = conf;
	uint16_t nb_pairs = RTE_MIN(env->nb_pairs, (uint16_t)IMPAIR_MAX_PAIRS);
	uint16_t nb_dirs = 0;
	uint64_t held_max = 0;
	struct impair_stage *st;
	size_t sz;

	for (uint16_t p = 0; p < nb_pairs; p++)
		for (int d = 0; d < 2; d++)
			if (c->active[p][d]) {
				nb_dirs++;
				held_max += c->dir[p][d].limit;
			}
	sz = sizeof(*st) + nb_dirs * sizeof(st->dirs[0]) +
	     (size_t)nb_pairs * 2 * sizeof(st->by_pair[0]);
	st = rte_zmalloc_socket("impair_stage", sz, RTE_CACHE_LINE_SIZE,
				env->socket);
	if (st == NULL)
		return -ENOMEM;
	st->nb_pairs = nb_pairs;
	st->dirs = (struct impair_dir *)(st + 1);
	st->by_pair = (struct impair_dir **)(st->dirs + nb_dirs);
	for (uint16_t p = 0; p < nb_pairs; p++) {
		for (int d = 0; d < 2; d++) {
			struct impair_params prm = c->dir[p][d];
			struct impair_dir *id;
			char name[32];

			if (!c->active[p][d])
				continue;
			snprintf(name, sizeof(name), "impair_w%u_p%u%s",
				 env->worker, p, dir_name[d]);
			prm.name = name;
			prm.socket_id = env->socket;
			prm.seed = instance_seed(prm.seed, p, (unsigned)d,
						 env->worker);
			id = &st->dirs[st->nb_dirs];
			id->im = impair_create(&prm);
			if (id->im == NULL) {
				int rc = -rte_errno;

				impair_stage_destroy(st);
				return rc ? rc : -ENOMEM;
			}
			id->prm = c->dir[p][d];
			id->pair = p;
			id->up = d == DIR_UP;
			id->out_port = (uint16_t)(2 * p + (d == DIR_UP ? 1 : 0));
			st->by_pair[p * 2 + d] = id;
			st->nb_dirs++;
		}
	}
	if (env->worker == 0) {
		for (uint16_t p = 0; p < nb_pairs; p++)
			for (int d = 0; d < 2; d++) {
				char desc[384];

				if (!c->active[p][d])
					continue;
				describe(&c->dir[p][d], desc, sizeof(desc));
				SL_LOG(impair, INFO, "impair: pair %u %s: %s", p, dir_name[d], desc);
			}
		if (nb_pairs < IMPAIR_MAX_PAIRS && (c->pairs_named >> nb_pairs) != 0)
			SL_LOG(impair, WARNING, "impair: a section names a port pair this run does not have (%u pair(s)); it is ignored",
			       env->nb_pairs);
		/* The queues may hold this many mbufs at once; warn when
		 * that could starve rx. */
		if (env->pool != NULL &&
		    held_max * env->nb_workers > env->pool->size / 2)
			SL_LOG(impair, WARNING, "impair: limits allow %" PRIu64 " held packets, more than half of the %u-mbuf pool: rx may run dry (raise [sluice] mbufs or lower limit)",
			       held_max * env->nb_workers, env->pool->size);
	}
	SL_LOG(impair, DEBUG, "impair: worker %u: %u impaired direction(s), at most %" PRIu64 " held packets",
	       env->worker, st->nb_dirs, held_max);
	out->ops = &impair_stage_ops;
	out->ctx = st;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Counters                                                            */

/* Sum one direction over workers; false if no worker impairs it. */
static bool
sum_dir(void *const *ctxs, unsigned nb_workers, uint16_t pair, int dir,
	struct impair_stats *s, uint32_t *pending)
{
	bool found = false;

	memset(s, 0, sizeof(*s));
	*pending = 0;
	for (unsigned w = 0; w < nb_workers; w++) {
		const struct impair_stage *st = ctxs[w];
		const struct impair_dir *d;

		if (st == NULL || pair >= st->nb_pairs)
			continue;
		d = st->by_pair[pair * 2 + dir];
		if (d == NULL)
			continue;
		impair_stats_add(s, impair_stats(d->im));
		*pending += impair_pending(d->im);
		found = true;
	}
	return found;
}

#define IMPAIR_COUNTERS(X) \
	X(in) X(out) X(lost_random) X(lost_ge) X(duplicated) X(reordered) \
	X(jitter_reordered) X(overflow) X(dup_nombuf) X(ge_bad) X(ge_bursts) \
	X(flushed_early)

/* The effective configuration, flat (22.11 telemetry nests one level):
 * probabilities in parts per million, times in microseconds. */
static void
tel_config(struct rte_tel_data *o, const struct impair_params *p)
{
	static const struct { const char *name; size_t off; } ppm[] = {
		{ "loss_ppm", offsetof(struct impair_params, loss) },
		{ "ge_p_ppm", offsetof(struct impair_params, ge_p) },
		{ "ge_r_ppm", offsetof(struct impair_params, ge_r) },
		{ "ge_loss_good_ppm", offsetof(struct impair_params, ge_loss_good) },
		{ "ge_loss_bad_ppm", offsetof(struct impair_params, ge_loss_bad) },
		{ "duplicate_ppm", offsetof(struct impair_params, duplicate) },
		{ "reorder_ppm", offsetof(struct impair_params, reorder) },
	};

	for (unsigned i = 0; i < RTE_DIM(ppm); i++) {
		double v = *(const double *)((const char *)p + ppm[i].off);

		rte_tel_data_add_dict_u64(o, ppm[i].name, (uint64_t)(v * 1e6 + 0.5));
	}
	rte_tel_data_add_dict_u64(o, "delay_us", p->delay_ns / 1000);
	rte_tel_data_add_dict_u64(o, "jitter_us", p->jitter_ns / 1000);
	rte_tel_data_add_dict_string(o, "jitter_dist",
		p->jitter_dist == IMPAIR_JITTER_NORMAL ? "normal" : "uniform");
	rte_tel_data_add_dict_u64(o, "jitter_reorder", p->jitter_reorder);
	rte_tel_data_add_dict_u64(o, "reorder_gap_us", p->reorder_gap_ns / 1000);
	rte_tel_data_add_dict_u64(o, "limit", p->limit);
	rte_tel_data_add_dict_u64(o, "seed", p->seed);
}

static int
impair_telemetry(void *const *ctxs, unsigned nb_workers, const char *params,
		 struct rte_tel_data *d)
{
	const struct impair_stage *any = NULL;
	int only = -1;

	for (unsigned w = 0; w < nb_workers && any == NULL; w++)
		any = ctxs[w];
	if (any == NULL)
		return -EINVAL;
	if (params != NULL && *params != '\0') {
		char *end;
		long v = strtol(params, &end, 10);

		if (*end != '\0' || v < 0 || v >= any->nb_pairs)
			return -EINVAL;
		only = (int)v;
	}
	rte_tel_data_start_dict(d);
	for (uint16_t p = 0; p < any->nb_pairs; p++) {
		if (only >= 0 && p != only)
			continue;
		for (int dir = 0; dir < 2; dir++) {
			struct impair_stats s;
			uint32_t pending;
			struct rte_tel_data *o;
			char key[32];

			if (!sum_dir(ctxs, nb_workers, p, dir, &s, &pending))
				continue;
			o = rte_tel_data_alloc();
			if (o == NULL)
				return -ENOMEM;
			rte_tel_data_start_dict(o);
#define TEL_ADD(f) rte_tel_data_add_dict_u64(o, #f, s.f);
			IMPAIR_COUNTERS(TEL_ADD)
#undef TEL_ADD
			rte_tel_data_add_dict_u64(o, "pending", pending);
			for (unsigned w = 0; w < nb_workers; w++) {
				const struct impair_stage *st = ctxs[w];

				if (st != NULL && st->by_pair[p * 2 + dir] != NULL) {
					tel_config(o, &st->by_pair[p * 2 + dir]->prm);
					break;
				}
			}
			/* Telemetry names allow only [A-Za-z0-9_/]. */
			snprintf(key, sizeof(key), "pair%u_%s", p, dir_name[dir]);
			rte_tel_data_add_dict_container(d, key, o, 0);
		}
	}
	return 0;
}

static void
impair_report(void *const *ctxs, unsigned nb_workers, FILE *out)
{
	const struct impair_stage *any = NULL;

	for (unsigned w = 0; w < nb_workers && any == NULL; w++)
		any = ctxs[w];
	if (any == NULL)
		return;
	for (uint16_t p = 0; p < any->nb_pairs; p++)
		for (int dir = 0; dir < 2; dir++) {
			struct impair_stats s;
			uint32_t pending;

			if (!sum_dir(ctxs, nb_workers, p, dir, &s, &pending))
				continue;
			fprintf(out, "impair dir=%s pair=%u", dir_name[dir], p);
#define REP_ADD(f) fprintf(out, " " #f "=%" PRIu64, s.f);
			IMPAIR_COUNTERS(REP_ADD)
#undef REP_ADD
			fprintf(out, " pending=%u\n", pending);
		}
}

/* [impair.pairN] and [impair.pairN.up|down] take the same keys. */
static void
impair_print_keys(FILE *out)
{
	ini_keys_print(out, IMPAIR_SECTION, impair_keys, IK_MAX);
}

const struct stage_module sl_stage_impair = {
	.name = "impair",
	.parse = impair_parse,
	.conf_free = impair_conf_free,
	.print_keys = impair_print_keys,
	.owns_section = impair_owns_section,
	.create = impair_stage_create,
	.telemetry = impair_telemetry,
	/* At most 127 characters: rte_telemetry refuses longer help. */
	.telemetry_help = "Lab link per pair and direction: in, out, drops by "
			  "reason, duplicates, reordering, config. Parameter: a pair.",
	.report = impair_report,
};
