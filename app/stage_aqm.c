/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The aqm stage: lib/aqm's subscriber pipes (shaper + FQ-CoDel or FIFO) in
 * the datapath.
 *
 *   burst    classify by subscriber (upstream: source address, downstream:
 *            destination), then enqueue on this worker if it owns the
 *            subscriber, else hand the packet to the owner through a
 *            single-producer/single-consumer ring. Unknown addresses pass
 *            unshaped or go to the default pipe, as configured.
 *   poll     apply pending control changes (mailbox), enqueue hand-offs,
 *            dequeue what the shapers allow and emit each packet toward
 *            the port remembered at enqueue (pkt_meta.user16).
 *   control  on SIGHUP the control thread (app/control.c) calls the
 *            module's reload, which re-reads [aqm] and the subscriber CSV;
 *            telemetry can change one subscriber. Both validate first,
 *            then post the same change to every worker's mailbox
 *            (ctl_post()); each worker applies it in its own poll, so no
 *            other thread ever writes a worker's structures.
 *
 * Ownership: every worker holds the same subscriber table (same prefixes,
 * applied in the same order, so the same pipe ids), but only the owner of
 * a pipe, aqm_owner(id), ever queues packets in it.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <arpa/inet.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_random.h>
#include <rte_ring.h>
#include <rte_telemetry.h>

#include "aqm.h"
#include "aqm_subs.h"
#include "config.h"
#include "control.h"
#include "handoff.h"
#include "pkt.h"
#include "stage_aqm.h"
#include "stages.h"
#include "worker.h"

#define AQM_SECTION "aqm"
#define AQM_BATCH 64             /* packets per enqueue/dequeue call */
#define AQM_POLL_BATCHES 4       /* dequeue calls per direction per poll */
#define AQM_CHANGE_WAIT_MS 2000  /* control side waits this long for workers */
#define AQM_MAX_PAIRS (SL_MAX_PORTS / 2)
/*
 * How far a shaper that fell behind (its lcore was preempted or stalled)
 * may catch up, as a burst at line rate. lib/aqm's own default (250 us)
 * assumes a dedicated core; on shared cores every stall longer than this
 * is lost link time. 4 ms keeps the long-term rate while bounding the
 * burst the real bottleneck sees to less than CoDel's 5 ms target.
 */
#define AQM_DEFAULT_MAX_LAG_NS 4000000
/* ACKs each worker can hold per direction with [aqm] ack_hold (one per
 * backlogged connection and hold time; when full, ACKs queue at once). */
#define AQM_ACK_HOLD_SLOTS 4096

/* ------------------------------------------------------------------ */
/* Configuration: one table of keys, parsed into vals[].               */

enum aqm_key_kind { K_PORTS, K_QDISC, K_FIFO, K_TIME, K_U64, K_SIZE, K_BOOL,
		    K_RATE, K_POLICY, K_PROFILE, K_INT, K_FRAMING, K_PATH, K_DIRS };

#define AQM_KEYS(X) \
	X(PORTS,        "ports",                   K_PORTS,   UINT64_MAX, 0, 0, 0) \
	X(QDISC,        "qdisc",                   K_QDISC,   0, 0, 0, 0) \
	X(FIFO_LIMIT,   "fifo_limit",              K_FIFO,    1000, 0, 0, 0) \
	X(TARGET,       "target",                  K_TIME,    5000000, 1000, 1000000000, 0) \
	X(INTERVAL,     "interval",                K_TIME,    100000000, 1000, 4000000000ULL, 0) \
	X(CE_THRESHOLD, "ce_threshold",            K_TIME,    0, 0, 10000000000ULL, 0) \
	X(ECN,          "ecn",                     K_BOOL,    1, 0, 1, 0) \
	X(QUANTUM,      "quantum",                 K_U64,     1514, 64, 65536, 0) \
	X(DROP_BATCH,   "drop_batch",              K_U64,     64, 1, 4096, 0) \
	X(ACK_FILTER,   "ack_filter",              K_DIRS,    0, 0, 0, 0) \
	X(ACK_HOLD,     "ack_hold",                K_TIME,    0, 100000, 1000000000, 0) \
	X(FLOWS,        "flows",                   K_U64,     1024, 1, AQM_FLOWS_MAX, 0) \
	X(LIMIT,        "limit",                   K_U64,     10240, 1, 1000000, 0) \
	X(MEMORY_LIMIT, "memory_limit",            K_SIZE,    32u << 20, 0, 1ULL << 40, 0) \
	X(DEFAULT,      "default",                 K_POLICY,  AQM_DEFAULT_PASS, 0, 0, 0) \
	X(RATE_DOWN,    "rate_down",               K_RATE,    0, 0, 0, 1) \
	X(RATE_UP,      "rate_up",                 K_RATE,    0, 0, 0, 1) \
	X(PROFILE,      "profile",                 K_PROFILE, 0, 0, 0, 0) \
	X(OVERHEAD,     "overhead",                K_INT,     0, 0, 0, 0) \
	X(MPU,          "mpu",                     K_U64,     0, 0, 4096, 0) \
	X(FRAMING,      "framing",                 K_FRAMING, AQM_FRAMING_NONE, 0, 0, 0) \
	X(SUBSCRIBERS,  "subscribers",             K_PATH,    0, 0, 0, 1) \
	X(MAX_SUBS,     "max_subscribers",         K_U64,     1024, 1, 1000000, 0) \
	X(MAX_V6_SUBS,  "max_v6_subscribers",      K_U64,     1024, 0, 1000000, 0) \
	X(SUB_FLOWS,    "subscriber_flows",        K_U64,     32, 1, AQM_FLOWS_MAX, 0) \
	X(SUB_LIMIT,    "subscriber_limit",        K_U64,     1024, 1, 1000000, 0) \
	X(SUB_MEMORY,   "subscriber_memory_limit", K_SIZE,    4u << 20, 0, 1ULL << 40, 0) \
	X(HANDOFF_RING, "handoff_ring",            K_U64,     1024, 64, 65536, 0) \
	X(MAX_QUEUED,   "max_queued",              K_U64,     0, 0, 16777215, 0) \
	X(MAX_LAG,      "max_lag",                 K_TIME,    AQM_DEFAULT_MAX_LAG_NS, 0, 100000000, 0) \
	X(BYPASS,       "bypass",                  K_BOOL,    1, 0, 1, 0)

enum aqm_key {
#define AQM_KEY_ENUM(e, n, k, d, lo, hi, r) AK_##e,
	AQM_KEYS(AQM_KEY_ENUM)
#undef AQM_KEY_ENUM
	AK_MAX
};

struct aqm_key_desc {
	const char *name;
	enum aqm_key_kind kind;
	uint64_t def, min, max;
	bool reloadable;
};

static const struct aqm_key_desc aqm_keys[AK_MAX] = {
#define AQM_KEY_DESC(e, n, k, d, lo, hi, r) \
	[AK_##e] = { n, k, (uint64_t)(d), (uint64_t)(lo), (uint64_t)(hi), r },
	AQM_KEYS(AQM_KEY_DESC)
#undef AQM_KEY_DESC
};

/* The parsed [aqm] section. */
struct aqm_conf {
	uint64_t val[AK_MAX];
	unsigned line[AK_MAX];       /* 0: key not in the file */
	bool fifo_in_ms;             /* fifo_limit is ms at rate, else bytes */
	char path[256];              /* the config file, for reloads */
	char subs_path[512];         /* resolved against the file's directory */
	struct aqm_sub_entry *subs;  /* malloc'ed, nsubs entries */
	uint32_t nsubs;
};

static int
aqm_conf_key(const char *name)
{
	for (int k = 0; k < AK_MAX; k++)
		if (strcmp(aqm_keys[k].name, name) == 0)
			return k;
	return -1;
}

/* "all" or a list of pair indices: "0", "0,2", "0 1". */
static int
parse_ports(const char *v, uint64_t *mask, char *why, size_t whylen)
{
	char buf[128], *save = NULL;

	if (strcasecmp(v, "all") == 0) {
		*mask = UINT64_MAX;
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", v);
	*mask = 0;
	for (char *t = strtok_r(buf, ", \t", &save); t != NULL;
	     t = strtok_r(NULL, ", \t", &save)) {
		char *end;
		unsigned long p = strtoul(t, &end, 10);

		if (*t == '-' || *end != '\0' || p >= AQM_MAX_PAIRS) {
			snprintf(why, whylen,
				 "'%s' is not a port pair index 0..%u (pair k is ports 2k and 2k+1) or 'all'",
				 t, AQM_MAX_PAIRS - 1);
			return -1;
		}
		*mask |= 1ULL << p;
	}
	if (*mask == 0) {
		snprintf(why, whylen, "empty list: give pair indices or 'all'");
		return -1;
	}
	return 0;
}

static int
parse_value(struct aqm_conf *c, int k, const struct ini_entry *e,
	    const char *dir, char *why, size_t whylen)
{
	const struct aqm_key_desc *d = &aqm_keys[k];
	const char *v = e->value;
	uint64_t x = 0;
	bool b;

	switch (d->kind) {
	case K_PORTS:
		return parse_ports(v, &c->val[k], why, whylen);
	case K_QDISC:
		if (strcasecmp(v, "fq_codel") == 0)
			x = AQM_QDISC_FQ_CODEL;
		else if (strcasecmp(v, "fifo") == 0)
			x = AQM_QDISC_FIFO;
		else {
			snprintf(why, whylen, "'%s' is not a qdisc (fq_codel or fifo)", v);
			return -1;
		}
		break;
	case K_FIFO: {
		/* A time ("1s", "500ms") means that long at the shaped rate;
		 * anything else is a size in bytes ("256kb", "1mb", "65536"). */
		size_t l = strlen(v);
		if (l > 0 && (v[l - 1] == 's' || v[l - 1] == 'S')) {
			if (ini_parse_time_ns(v, 1000000, &x, why, whylen) < 0)
				return -1;
			x /= 1000000;
			if (x < 1 || x > 60000) {
				snprintf(why, whylen, "'%s' out of range [1ms, 60s]", v);
				return -1;
			}
			c->fifo_in_ms = true;
		} else {
			if (ini_parse_size(v, &x, why, whylen) < 0) {
				snprintf(why, whylen,
					 "'%s' is neither a time at the shaped rate (1s, 200ms) nor a size (1514, 64kb, 1mb)", v);
				return -1;
			}
			if (x < 64 || x > (1ULL << 34)) {
				snprintf(why, whylen, "'%s' out of range [64 bytes, 16gb]", v);
				return -1;
			}
			c->fifo_in_ms = false;
		}
		break;
	}
	case K_TIME:
		if (ini_parse_time_ns(v, 1000000, &x, why, whylen) < 0)
			return -1;
		if ((x < d->min || x > d->max) &&
		    !((k == AK_CE_THRESHOLD || k == AK_ACK_HOLD) && x == 0)) {
			snprintf(why, whylen, "'%s' out of range [%" PRIu64 "us, %" PRIu64 "ms]",
				 v, d->min / 1000, d->max / 1000000);
			return -1;
		}
		break;
	case K_U64:
		if (ini_parse_u64(v, d->min, d->max, &x, why, whylen) < 0)
			return -1;
		if ((k == AK_FLOWS || k == AK_SUB_FLOWS) && !rte_is_power_of_2((uint32_t)x)) {
			snprintf(why, whylen, "%" PRIu64 " is not a power of two", x);
			return -1;
		}
		break;
	case K_SIZE:
		if (ini_parse_size(v, &x, why, whylen) < 0)
			return -1;
		if (x > d->max) {
			snprintf(why, whylen, "'%s' is larger than 1tb", v);
			return -1;
		}
		break;
	case K_BOOL:
		if (ini_parse_bool(v, &b, why, whylen) < 0)
			return -1;
		x = b;
		break;
	case K_RATE:
		if (strcmp(v, "0") == 0 || strcasecmp(v, "unshaped") == 0) {
			x = 0;
			break;
		}
		if (ini_parse_rate_bps(v, &x, why, whylen) < 0)
			return -1;
		if (x < AQM_RATE_MIN || x > AQM_RATE_MAX) {
			snprintf(why, whylen, "'%s' out of range 64kbit..100gbit (or 0 = unshaped)", v);
			return -1;
		}
		break;
	case K_DIRS:
		/* Bits 1 << enum aqm_dir. */
		if (strcasecmp(v, "off") == 0)
			x = 0;
		else if (strcasecmp(v, "up") == 0)
			x = 1u << AQM_DIR_UP;
		else if (strcasecmp(v, "down") == 0)
			x = 1u << AQM_DIR_DOWN;
		else if (strcasecmp(v, "both") == 0)
			x = (1u << AQM_DIR_UP) | (1u << AQM_DIR_DOWN);
		else {
			snprintf(why, whylen, "'%s' is not a direction (off, up, down or both)", v);
			return -1;
		}
		break;
	case K_POLICY:
		if (strcasecmp(v, "pass") == 0)
			x = AQM_DEFAULT_PASS;
		else if (strcasecmp(v, "pipe") == 0)
			x = AQM_DEFAULT_PIPE;
		else {
			snprintf(why, whylen, "'%s' is not a policy (pass or pipe)", v);
			return -1;
		}
		break;
	case K_PROFILE: {
		struct aqm_shaper_params sp = { 0 };
		if (aqm_shaper_profile(v, &sp) != 0) {
			snprintf(why, whylen,
				 "unknown profile '%s' (none, ethernet, vdsl2, vdsl2-bridged, adsl-pppoe, adsl-pppoa, docsis, lte)", v);
			return -1;
		}
		/* Explicit overhead/mpu/framing lines override the profile. */
		if (c->line[AK_OVERHEAD] == 0)
			c->val[AK_OVERHEAD] = (uint64_t)(int64_t)sp.overhead;
		if (c->line[AK_MPU] == 0)
			c->val[AK_MPU] = sp.mpu;
		if (c->line[AK_FRAMING] == 0)
			c->val[AK_FRAMING] = sp.framing;
		x = 1;
		break;
	}
	case K_INT: {
		char *end;
		long n = strtol(v, &end, 10);
		if (*v == '\0' || *end != '\0' || n < -64 || n > 256) {
			snprintf(why, whylen, "'%s' is not an overhead in bytes, -64..256", v);
			return -1;
		}
		x = (uint64_t)(int64_t)n;
		break;
	}
	case K_FRAMING:
		if (strcasecmp(v, "none") == 0)
			x = AQM_FRAMING_NONE;
		else if (strcasecmp(v, "atm") == 0)
			x = AQM_FRAMING_ATM;
		else if (strcasecmp(v, "ptm") == 0)
			x = AQM_FRAMING_PTM;
		else {
			snprintf(why, whylen, "'%s' is not a framing (none, atm or ptm)", v);
			return -1;
		}
		break;
	case K_PATH: {
		int n;
		if (v[0] == '/')
			n = snprintf(c->subs_path, sizeof(c->subs_path), "%s", v);
		else
			n = snprintf(c->subs_path, sizeof(c->subs_path), "%s/%s", dir, v);
		if (v[0] == '\0' || n >= (int)sizeof(c->subs_path)) {
			snprintf(why, whylen, "empty or too long path");
			return -1;
		}
		x = 1;
		break;
	}
	}
	c->val[k] = x;
	return 0;
}

static void
aqm_conf_free(void *p)
{
	struct aqm_conf *c = p;

	if (c == NULL)
		return;
	free(c->subs);
	free(c);
}

/*
 * Parse [aqm] of f into a new conf: every key, cross-checks, and the
 * subscriber CSV. Used at boot and by reloads. Marks [aqm] entries used;
 * an unknown key in [aqm] is reported here when strict is set.
 */
static int
aqm_conf_parse(struct ini_file *f, bool strict, struct aqm_conf **out,
	       char *err, size_t errlen)
{
	struct aqm_conf *c;
	char why[768], dir[256];
	bool present = false;
	const char *slash;

	*out = NULL;
	for (unsigned s = 0; s < f->nsections; s++)
		if (strcmp(f->sections[s], AQM_SECTION) == 0)
			present = true;
	if (!present)
		return 0;
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		snprintf(err, errlen, "%s: out of memory", f->path);
		return -1;
	}
	snprintf(c->path, sizeof(c->path), "%s", f->path);
	slash = strrchr(f->path, '/');
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - f->path), f->path);
	for (int k = 0; k < AK_MAX; k++)
		c->val[k] = aqm_keys[k].def;
	c->fifo_in_ms = true;

	/* Lines in file order, except that profile goes first so explicit
	 * overhead/mpu/framing lines win wherever they are. */
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned i = 0; i < f->count; i++) {
			struct ini_entry *e = &f->entries[i];
			if (strcmp(e->section, AQM_SECTION) != 0)
				continue;
			int k = aqm_conf_key(e->key);
			if (k < 0) {
				if (strict && pass == 1) {
					sl_config_err(err, errlen, f, e, "unknown key");
					goto fail;
				}
				continue;
			}
			if ((pass == 0) != (k == AK_PROFILE))
				continue;
			if (parse_value(c, k, e, dir, why, sizeof(why)) < 0) {
				sl_config_err(err, errlen, f, e, why);
				goto fail;
			}
			c->line[k] = e->line;
			e->used = true;
		}
	}

	/* Cross-checks the library would otherwise only refuse at boot. */
	struct ini_entry at = { .section = AQM_SECTION };
#define AQM_FAIL(k, ...) do { \
		at.key = aqm_keys[k].name; at.line = c->line[k]; \
		snprintf(why, sizeof(why), __VA_ARGS__); \
		if (at.line) sl_config_err(err, errlen, f, &at, why); \
		else snprintf(err, errlen, "%s: [%s] %s: %s", f->path, \
			      AQM_SECTION, at.key, why); \
		goto fail; \
	} while (0)
	if (c->val[AK_QDISC] == AQM_QDISC_FIFO && c->fifo_in_ms &&
	    c->val[AK_DEFAULT] == AQM_DEFAULT_PIPE &&
	    (c->val[AK_RATE_DOWN] == 0 || c->val[AK_RATE_UP] == 0))
		AQM_FAIL(AK_FIFO_LIMIT,
			 "a FIFO sized in time needs rate_down and rate_up (or give a size in bytes)");
	if (c->val[AK_CE_THRESHOLD] != 0 && c->val[AK_CE_THRESHOLD] >= c->val[AK_INTERVAL])
		AQM_FAIL(AK_CE_THRESHOLD, "must be below interval");
	if (c->val[AK_TARGET] >= c->val[AK_INTERVAL])
		AQM_FAIL(AK_TARGET, "must be below interval");
	if (c->val[AK_ACK_HOLD] != 0 && c->val[AK_ACK_FILTER] == 0)
		AQM_FAIL(AK_ACK_HOLD, "works with the ACK filter: set ack_filter (up, down or both) or ack_hold = 0");
	if (c->line[AK_MAX_V6_SUBS] == 0 && c->val[AK_MAX_V6_SUBS] > c->val[AK_MAX_SUBS])
		c->val[AK_MAX_V6_SUBS] = c->val[AK_MAX_SUBS];
	if (c->val[AK_MAX_V6_SUBS] > c->val[AK_MAX_SUBS])
		AQM_FAIL(AK_MAX_V6_SUBS, "must be at most max_subscribers");

	if (c->val[AK_SUBSCRIBERS]) {
		char cerr[384];
		struct aqm_sub_entry *v = NULL;
		int n = aqm_subs_csv_load(c->subs_path, &v, cerr, sizeof(cerr));
		if (n < 0)
			AQM_FAIL(AK_SUBSCRIBERS, "%s", cerr);
		c->subs = v;
		c->nsubs = (uint32_t)n;
		uint32_t v6 = 0;
		for (uint32_t i = 0; i < c->nsubs; i++)
			v6 += v[i].family == 6;
		if (c->nsubs > c->val[AK_MAX_SUBS])
			AQM_FAIL(AK_SUBSCRIBERS, "%u subscribers in %.300s, more than max_subscribers = %" PRIu64,
				 c->nsubs, c->subs_path, c->val[AK_MAX_SUBS]);
		if (v6 > c->val[AK_MAX_V6_SUBS])
			AQM_FAIL(AK_SUBSCRIBERS, "%u IPv6 subscribers in %.300s, more than max_v6_subscribers = %" PRIu64,
				 v6, c->subs_path, c->val[AK_MAX_V6_SUBS]);
	}
#undef AQM_FAIL
	*out = c;
	return 0;
fail:
	aqm_conf_free(c);
	return -1;
}

static int
aqm_parse(struct ini_file *f, void **conf, char *err, size_t errlen)
{
	struct aqm_conf *c;
	int rc = aqm_conf_parse(f, false, &c, err, errlen);

	*conf = c;
	return rc;
}

static int
aqm_owns_section(const char *s)
{
	return strcmp(s, AQM_SECTION) == 0;
}

static void
conf_shaper(const struct aqm_conf *c, uint64_t rate, struct aqm_shaper_params *sp)
{
	sp->rate_bps = rate;
	sp->overhead = (int16_t)(int64_t)c->val[AK_OVERHEAD];
	sp->mpu = (uint16_t)c->val[AK_MPU];
	sp->framing = (uint8_t)c->val[AK_FRAMING];
}

static void
conf_pipe(const struct aqm_conf *c, bool subscriber, struct aqm_pipe_params *p)
{
	aqm_pipe_params_default(p);
	p->qdisc = (enum aqm_qdisc)c->val[AK_QDISC];
	p->fq.flows = (uint32_t)c->val[subscriber ? AK_SUB_FLOWS : AK_FLOWS];
	p->fq.limit_pkts = (uint32_t)c->val[subscriber ? AK_SUB_LIMIT : AK_LIMIT];
	p->fq.memory_limit = c->val[subscriber ? AK_SUB_MEMORY : AK_MEMORY_LIMIT];
	p->fq.quantum = (uint32_t)c->val[AK_QUANTUM];
	p->fq.drop_batch = (uint32_t)c->val[AK_DROP_BATCH];
	p->fq.codel.target_ns = c->val[AK_TARGET];
	p->fq.codel.interval_ns = c->val[AK_INTERVAL];
	p->fq.codel.ce_threshold_ns = c->val[AK_CE_THRESHOLD];
	p->fq.codel.ecn = c->val[AK_ECN] != 0;
	/* RFC 8290 section 4.1.1: perturb the flow hash per instance, so
	 * flows that share a queue by bad luck do not share it every run. */
	p->fq.seed = (uint32_t)rte_rand();
	if (c->fifo_in_ms) {
		p->fifo_limit_ms = (uint32_t)c->val[AK_FIFO_LIMIT];
		p->fifo_limit_bytes = 0;
	} else {
		p->fifo_limit_ms = 0;
		p->fifo_limit_bytes = c->val[AK_FIFO_LIMIT];
	}
	conf_shaper(c, c->val[AK_RATE_DOWN], &p->shaper);
}

/* ------------------------------------------------------------------ */
/* Per-worker instance and the state shared by control paths.          */

/* Counters of one direction on one worker; only that worker writes. */
struct aqm_dir_stats {
	uint64_t passed;        /* unshaped: unknown address, pass policy */
	uint64_t malformed;     /* flagged by the parser: never queued */
	uint64_t handoffs;      /* sent to the owning worker's ring */
	uint64_t handoff_in;    /* received from other workers */
	uint64_t handoff_drops; /* owner's ring full: freed, counted */
};

/* A change for every worker: subscribers to add or re-rate, default rates. */
struct aqm_change {
	struct ctl_change ctl;
	struct aqm_sub_entry *subs;  /* owned */
	uint32_t nsubs;
	bool set_default;
	uint64_t default_down, default_up;
};

struct aqm_worker {
	unsigned index;
	unsigned nb_workers;
	uint64_t pairs;                  /* bit k: pair k is shaped */
	bool bypass;                     /* [aqm] bypass: idle pipes send at once */
	struct aqm_subs *subs;
	struct rte_ring *mailbox;        /* control changes (app/control.h) */
	struct handoff_port hp;          /* packets for pipes others own */
	const struct aqm_conf *conf;     /* boot conf (fixed keys) */
	struct aqm_dir_stats st[2] __rte_cache_aligned;
	uint64_t changes_applied;
	uint64_t change_errors;
};

/* One row of the control plane's view of the table: prefix -> pipe id. */
struct aqm_mirror {
	struct aqm_sub_entry e;
	uint32_t id;
};

/* Owned by the control side (telemetry thread, control thread), under lock. */
static struct {
	pthread_mutex_t lock;
	unsigned nb_workers;
	unsigned created;
	struct aqm_worker *w[RTE_MAX_LCORE];
	struct handoff_mesh *mesh;       /* boot: the hand-off rings */
	struct ctl_bus *bus;             /* the workers' mailboxes */
	struct aqm_conf *running;        /* copy: fixed keys + current rates */
	struct aqm_mirror *mirror;
	uint32_t nmirror, cap_mirror;
	uint32_t next_id;
	uint64_t reloads, reload_errors, tel_changes;
	char last_error[600];
} aqm_g = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void
aqm_change_free(struct ctl_change *cc)
{
	struct aqm_change *c = (struct aqm_change *)cc;

	free(c->subs);
	free(c);
}

/* ------------------------------------------------------------------ */
/* Datapath.                                                           */

static inline enum aqm_dir
dir_of_out_port(uint16_t out_port)
{
	/* Out on 2k+1 (internet side): it came from the subscriber. */
	return (out_port & 1) ? AQM_DIR_UP : AQM_DIR_DOWN;
}

/*
 * Queue a batch in its pipes. With [aqm] bypass, a packet its pipe would
 * send in this very turn (nothing queued there, shaper due) is not queued:
 * it is written to out[] and goes on with the burst. Returns how many.
 * out[] may only hold slots of packets already taken from the burst.
 */
static inline uint16_t
enqueue_local(const struct aqm_worker *w, struct aqm_sched *sched,
	      const uint32_t *pipes, struct rte_mbuf **local, uint16_t n,
	      struct rte_mbuf **out, uint64_t now_ns)
{
	if (w->bypass)
		return aqm_sched_enqueue_bypass_burst(sched, pipes, local, n,
						      now_ns, out);
	aqm_sched_enqueue_burst(sched, pipes, local, n, now_ns);
	return 0;
}

static uint16_t
aqm_stage_burst(void *ctx, const struct stage_burst *b,
		struct rte_mbuf **pkts, uint16_t n, uint64_t now_ns)
{
	struct aqm_worker *w = ctx;
	const enum aqm_dir dir = b->upstream ? AQM_DIR_UP : AQM_DIR_DOWN;
	struct aqm_sched *sched = aqm_subs_sched(w->subs, dir);
	struct aqm_dir_stats *st = &w->st[dir];
	struct rte_mbuf *local[AQM_BATCH];
	uint32_t pipes[AQM_BATCH];
	struct handoff_stage away;
	uint16_t keep = 0, nl = 0;
	/* At shutdown the owner may have flushed already: keep it here. */
	const bool stopping = sl_control.stop;
	const unsigned nb_workers = w->nb_workers, me = w->index;

	if (!((w->pairs >> b->pair) & 1))
		return n;
	away.n = 0;
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct pkt_meta *meta = pkt_meta(m);
		int id;

		if (unlikely(meta->err != PKT_ERR_NONE)) {
			/* Never CE-mark or reorder what we cannot parse. */
			st->malformed++;
			pkts[keep++] = m;
			continue;
		}
		id = aqm_subs_lookup(w->subs, dir, m);
		if (id < 0) {
			st->passed++;
			pkts[keep++] = m;
			continue;
		}
		meta->user16 = b->out_port;
		/* Pipe ids are the same on every worker; one owns each. */
		unsigned owner = nb_workers == 1 ? 0 :
				 handoff_owner((uint32_t)id, nb_workers);
		if (likely(owner == me || stopping)) {
			local[nl] = m;
			pipes[nl++] = (uint32_t)id;
			if (nl == AQM_BATCH) {
				keep += enqueue_local(w, sched, pipes, local, nl,
						      pkts + keep, now_ns);
				nl = 0;
			}
		} else {
			meta->user64 = (uint64_t)id;
			handoff_stage_add(&w->hp, &away, m, owner,
					  &st->handoffs, &st->handoff_drops);
		}
	}
	if (nl)
		keep += enqueue_local(w, sched, pipes, local, nl, pkts + keep,
				      now_ns);
	if (away.n)
		handoff_stage_flush(&w->hp, &away, &st->handoffs,
				    &st->handoff_drops);
	return keep;
}

/* A worker applies a change (ctl_mailbox_take()), whole or not at all. */
static int
apply_change(void *ctx, struct ctl_change *cc, char *err, size_t errlen)
{
	struct aqm_worker *w = ctx;
	const struct aqm_change *c = (const struct aqm_change *)cc;
	int rc = 0;

	if (c->nsubs)
		rc = aqm_subs_apply(w->subs, c->subs, c->nsubs, err, errlen);
	if (rc >= 0 && c->set_default &&
	    w->conf->val[AK_DEFAULT] == AQM_DEFAULT_PIPE) {
		struct aqm_shaper_params sp;
		conf_shaper(w->conf, c->default_down, &sp);
		aqm_sched_pipe_set_shaper(aqm_subs_sched(w->subs, AQM_DIR_DOWN), 0, &sp);
		conf_shaper(w->conf, c->default_up, &sp);
		aqm_sched_pipe_set_shaper(aqm_subs_sched(w->subs, AQM_DIR_UP), 0, &sp);
	}
	if (rc < 0) {
		w->change_errors++;
		return rc;
	}
	w->changes_applied++;
	return 0;
}

/* Control changes and hand-offs reach the worker here, between bursts. */
static void
aqm_take_inputs(struct aqm_worker *w, struct stage_emitter *em, uint64_t now_ns)
{
	unsigned n;

	ctl_mailbox_take(w->mailbox, apply_change, w);
	for (unsigned from = 0; from < w->nb_workers; from++) {
		struct rte_mbuf *in[AQM_BATCH];
		struct rte_mbuf *pk[2][AQM_BATCH];
		uint32_t pipes[2][AQM_BATCH];
		uint16_t np[2] = { 0, 0 };

		n = handoff_recv(&w->hp, from, in, AQM_BATCH);
		for (unsigned i = 0; i < n; i++) {
			struct rte_mbuf *m = in[i];
			const struct pkt_meta *meta = pkt_meta(m);
			enum aqm_dir d = dir_of_out_port(meta->user16);
			pk[d][np[d]] = m;
			pipes[d][np[d]++] = (uint32_t)meta->user64;
		}
		for (int d = 0; d < 2; d++) {
			if (np[d] == 0)
				continue;
			w->st[d].handoff_in += np[d];
			uint16_t nb = enqueue_local(w,
				aqm_subs_sched(w->subs, (enum aqm_dir)d),
				pipes[d], pk[d], np[d], pk[d], now_ns);
			for (uint16_t i = 0; i < nb; i++)
				stage_emit(em, pkt_meta(pk[d][i])->user16, pk[d][i]);
		}
	}
}

static void
aqm_stage_poll(void *ctx, struct stage_emitter *em, uint64_t now_ns)
{
	struct aqm_worker *w = ctx;
	struct rte_mbuf *pkts[AQM_BATCH];

	aqm_take_inputs(w, em, now_ns);
	for (int d = 0; d < 2; d++) {
		for (int b = 0; b < AQM_POLL_BATCHES; b++) {
			uint16_t n = aqm_subs_dequeue_burst(w->subs, (enum aqm_dir)d,
							    pkts, AQM_BATCH, now_ns);
			for (uint16_t i = 0; i < n; i++)
				stage_emit(em, pkt_meta(pkts[i])->user16, pkts[i]);
			if (n < AQM_BATCH)
				break;
		}
	}
}

static uint32_t
aqm_stage_pending(void *ctx)
{
	struct aqm_worker *w = ctx;

	return aqm_subs_pending(w->subs) + handoff_pending(&w->hp);
}

static void
aqm_stage_flush(void *ctx, struct stage_emitter *em, uint64_t now_ns)
{
	struct aqm_worker *w = ctx;
	struct rte_mbuf *pkts[AQM_BATCH];
	uint16_t n;

	aqm_take_inputs(w, em, now_ns);
	for (int d = 0; d < 2; d++)
		while ((n = aqm_subs_flush_burst(w->subs, (enum aqm_dir)d, pkts,
						 AQM_BATCH)) > 0)
			for (uint16_t i = 0; i < n; i++)
				stage_emit(em, pkt_meta(pkts[i])->user16, pkts[i]);
}

static void
aqm_stage_destroy(void *ctx)
{
	struct aqm_worker *w = ctx;

	if (w == NULL)
		return;
	aqm_subs_free(w->subs);
	rte_free(w);
}

static const struct stage_ops aqm_stage_ops = {
	.name = "aqm",
	.burst = aqm_stage_burst,
	.poll = aqm_stage_poll,
	.pending = aqm_stage_pending,
	.flush = aqm_stage_flush,
	.destroy = aqm_stage_destroy,
};

/* ------------------------------------------------------------------ */
/* Control side: posting changes, reload, telemetry.                   */

static void
aqm_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
aqm_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("sluice: aqm: ", stdout);
	vfprintf(stdout, fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
	fflush(stdout);
}

static bool
same_prefix(const struct aqm_sub_entry *a, const struct aqm_sub_entry *b)
{
	return a->family == b->family && a->depth == b->depth &&
	       memcmp(a->addr, b->addr, a->family == 4 ? 4 : 16) == 0;
}

static struct aqm_mirror *
mirror_find(const struct aqm_sub_entry *e)
{
	for (uint32_t i = 0; i < aqm_g.nmirror; i++)
		if (same_prefix(&aqm_g.mirror[i].e, e))
			return &aqm_g.mirror[i];
	return NULL;
}

/* Room for n more rows, so that mirror_apply() cannot fail. */
static int
mirror_reserve(uint32_t n)
{
	uint32_t cap = aqm_g.cap_mirror ? aqm_g.cap_mirror : 64;
	void *p;

	if ((uint64_t)aqm_g.nmirror + n <= aqm_g.cap_mirror)
		return 0;
	while (cap < aqm_g.nmirror + n)
		cap *= 2;
	p = realloc(aqm_g.mirror, (size_t)cap * sizeof(*aqm_g.mirror));
	if (p == NULL)
		return -ENOMEM;
	aqm_g.mirror = p;
	aqm_g.cap_mirror = cap;
	return 0;
}

/*
 * Record what every worker just applied, whole (aqm_subs_apply() is all
 * or nothing): new prefixes in list order, so the same ids. Call only
 * after mirror_reserve(n).
 */
static void
mirror_apply(const struct aqm_sub_entry *e, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct aqm_mirror *m = mirror_find(&e[i]);
		if (m != NULL) {
			m->e = e[i];
			continue;
		}
		aqm_g.mirror[aqm_g.nmirror].e = e[i];
		aqm_g.mirror[aqm_g.nmirror++].id = aqm_g.next_id++;
	}
}

/* Every worker applied c: the control side's view follows. */
static void
change_record(struct ctl_change *cc)
{
	const struct aqm_change *c = (const struct aqm_change *)cc;

	mirror_apply(c->subs, c->nsubs);
	if (c->set_default) {
		aqm_g.running->val[AK_RATE_DOWN] = c->default_down;
		aqm_g.running->val[AK_RATE_UP] = c->default_up;
	}
}

/*
 * Post one change to every worker and wait until all applied it
 * (ctl_post()). Takes ownership of subs. Call with aqm_g.lock held: one
 * poster at a time, so every worker sees changes in the same order.
 */
static int
post_change(struct aqm_sub_entry *subs, uint32_t nsubs, bool set_default,
	    uint64_t down, uint64_t up, char *err, size_t errlen)
{
	struct aqm_change *c;
	int rc;

	/* A late change decides the ids of this one's new prefixes. */
	rc = ctl_catch_up(aqm_g.bus, err, errlen);
	if (rc < 0) {
		free(subs);
		return rc;
	}
	/* The mirror must take whatever the workers apply. */
	c = calloc(1, sizeof(*c));
	if (c == NULL || mirror_reserve(nsubs) < 0) {
		free(subs);
		free(c);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->ctl.record = change_record;
	c->ctl.free = aqm_change_free;
	c->subs = subs;
	c->nsubs = nsubs;
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
	for (int k = 0; k < AK_MAX; k++) {
		if (aqm_keys[k].reloadable)
			continue;
		if (nc->val[k] != rc_->val[k] ||
		    (k == AK_FIFO_LIMIT && nc->fifo_in_ms != rc_->fifo_in_ms)) {
			char why[128];
			struct ini_entry at = { .section = AQM_SECTION,
				.key = aqm_keys[k].name, .line = nc->line[k] };
			snprintf(why, sizeof(why), "cannot change at run time (restart sluice); only rate_down, rate_up and subscribers reload");
			if (at.line)
				sl_config_err(err, sizeof(err), f, &at, why);
			else
				snprintf(err, sizeof(err), "%s: [%s] %s: removed, %s",
					 f->path, AQM_SECTION, at.key, why);
			goto bad;
		}
	}
	uint32_t fresh = 0;
	for (uint32_t i = 0; i < nc->nsubs; i++)
		fresh += mirror_find(&nc->subs[i]) == NULL;
	if (aqm_g.nmirror + fresh > rc_->val[AK_MAX_SUBS]) {
		snprintf(err, sizeof(err), "%s: [%s] subscribers: %u subscribers would exceed max_subscribers = %" PRIu64 " (subscribers are never removed at run time)",
			 f->path, AQM_SECTION, aqm_g.nmirror + fresh, rc_->val[AK_MAX_SUBS]);
		goto bad;
	}
	uint32_t absent = 0;
	for (uint32_t i = 0; i < aqm_g.nmirror; i++) {
		bool found = false;
		for (uint32_t j = 0; j < nc->nsubs && !found; j++)
			found = same_prefix(&aqm_g.mirror[i].e, &nc->subs[j]);
		absent += !found;
	}
	ini_free(f);
	f = NULL;
	uint32_t nsubs = nc->nsubs;
	rc = post_change(nc->subs, nc->nsubs, true, nc->val[AK_RATE_DOWN],
			 nc->val[AK_RATE_UP], err, sizeof(err));
	nc->subs = NULL;
	if (rc < 0)
		goto bad;
	aqm_g.reloads++;
	aqm_log("reloaded %s: %u subscribers (%u new%s), default rates down=%" PRIu64 " up=%" PRIu64 " bit/s; no queued packet touched",
		rc_->path, nsubs, fresh,
		absent ? ", some running ones absent from the file keep their pipes" : "",
		nc->val[AK_RATE_DOWN], nc->val[AK_RATE_UP]);
	aqm_conf_free(nc);
	return;
bad:
	aqm_g.reload_errors++;
	snprintf(aqm_g.last_error, sizeof(aqm_g.last_error), "%s", err);
	aqm_log("reload rejected, nothing changed: %s", err);
	aqm_conf_free(nc);
	ini_free(f);
}

/* The module's reload operation: on the control thread (app/control.c). */
static void
aqm_module_reload(void)
{
	pthread_mutex_lock(&aqm_g.lock);
	aqm_reload();
	pthread_mutex_unlock(&aqm_g.lock);
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
	}
}

static const char *const dir_name[2] = { "down", "up" };

static int
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
	rte_tel_data_add_dict_u64(d, "workers", nb_workers);
	rte_tel_data_add_dict_u64(d, "reloads", aqm_g.reloads);
	rte_tel_data_add_dict_u64(d, "reload_errors", aqm_g.reload_errors);
	rte_tel_data_add_dict_u64(d, "telemetry_changes", aqm_g.tel_changes);
	rte_tel_data_add_dict_u64(d, "worker_changes_applied", applied);
	rte_tel_data_add_dict_u64(d, "worker_change_errors", errors);
	rte_tel_data_add_dict_u64(d, "default_rate_down", aqm_g.running ? aqm_g.running->val[AK_RATE_DOWN] : 0);
	rte_tel_data_add_dict_u64(d, "default_rate_up", aqm_g.running ? aqm_g.running->val[AK_RATE_UP] : 0);
	if (aqm_g.last_error[0])
		rte_tel_data_add_dict_string(d, "last_error", aqm_g.last_error);
	return 0;
}

static void
prefix_str(const struct aqm_sub_entry *e, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(e->family == 4 ? AF_INET : AF_INET6, e->addr, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, e->depth);
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
		down = aqm_g.running->val[AK_RATE_DOWN];
		up = aqm_g.running->val[AK_RATE_UP];
	} else {
		char line[160];
		char *end;
		unsigned long n = strtoul(params, &end, 10);
		if (*end == '\0') {
			for (uint32_t i = 0; i < aqm_g.nmirror && m == NULL; i++)
				if (aqm_g.mirror[i].id == n)
					m = &aqm_g.mirror[i];
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
	rte_tel_data_add_dict_u64(d, "owner_worker", handoff_owner(id, aqm_g.nb_workers));
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
		rte_tel_data_add_dict_container(d, dir_name[dir], c, 0);
	}
	return 0;
}

/* /sluice/aqm_set,<prefix>,<down>,<up>[,<profile>] or ,default,<down>,<up> */
static int
tel_set(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char err[256] = "", why[128] = "";
	struct aqm_sub_entry e;
	char msg[600];
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
		} else if (e.has_profile) {
			snprintf(err, sizeof(err), "the default pipe takes no profile: its overhead, mpu and framing come from [aqm] (want default,down,up)");
			rc = -EINVAL;
		} else if (aqm_g.running->val[AK_DEFAULT] != AQM_DEFAULT_PIPE) {
			snprintf(err, sizeof(err), "no default pipe: [aqm] default = pass");
			rc = -EINVAL;
		} else {
			rc = post_change(NULL, 0, true, e.down_bps, e.up_bps, err, sizeof(err));
		}
	} else if (tel_parse_sub(params, &e, why, sizeof(why)) != 0) {
		snprintf(err, sizeof(err), "%s (want prefix,down,up[,profile])", why);
		rc = -EINVAL;
	} else if (mirror_find(&e) == NULL &&
		   aqm_g.nmirror >= aqm_g.running->val[AK_MAX_SUBS]) {
		snprintf(err, sizeof(err), "table full: max_subscribers = %" PRIu64,
			 aqm_g.running->val[AK_MAX_SUBS]);
		rc = -ENOSPC;
	} else {
		struct aqm_sub_entry *one = malloc(sizeof(*one));
		if (one == NULL) {
			rc = -ENOMEM;
		} else {
			e.line = 0;
			*one = e;
			rc = post_change(one, 1, false, 0, 0, err, sizeof(err));
		}
	}
	if (rc == 0) {
		aqm_g.tel_changes++;
	} else {
		snprintf(msg, sizeof(msg), "aqm_set %.80s: %s", params, err);
		memcpy(aqm_g.last_error, msg, sizeof(msg));
	}
	pthread_mutex_unlock(&aqm_g.lock);

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "status", rc == 0 ? "applied" : "rejected");
	if (rc != 0)
		rte_tel_data_add_dict_string(d, "error", err[0] ? err : strerror(-rc));
	return 0;
}

/* ------------------------------------------------------------------ */
/* Boot: per-worker instance; the last one wires the shared parts.      */

static int
aqm_shared_init(const struct aqm_conf *c, const struct stage_env *env)
{
	unsigned n = env->nb_workers;

	aqm_g.nb_workers = n;
	aqm_g.running = calloc(1, sizeof(*aqm_g.running));
	if (aqm_g.running == NULL)
		return -ENOMEM;
	*aqm_g.running = *c;
	aqm_g.running->subs = NULL;
	aqm_g.running->nsubs = 0;
	aqm_g.next_id = 1;
	if (mirror_reserve(c->nsubs) < 0)
		return -ENOMEM;
	mirror_apply(c->subs, c->nsubs);
	aqm_g.bus = ctl_bus_create("aqm_mb", n);
	if (aqm_g.bus == NULL)
		return -ENOMEM;
	aqm_g.mesh = handoff_mesh_create("aqm_h", n,
					 (uint32_t)c->val[AK_HANDOFF_RING]);
	if (aqm_g.mesh == NULL)
		return rte_errno ? -rte_errno : -ENOMEM;
	return 0;
}

static int
aqm_create(const void *conf, const struct stage_env *env, struct stage *out)
{
	const struct aqm_conf *c = conf;
	struct aqm_subs_params sp;
	struct aqm_worker *w;
	char name[32];
	int rc;

	if (env->worker == 0) {
		rc = aqm_shared_init(c, env);
		if (rc < 0)
			return rc;
		if (c->val[AK_PORTS] != UINT64_MAX && (c->val[AK_PORTS] >> env->nb_pairs) != 0)
			aqm_log("[aqm] ports lists a pair this run does not have (%u pair(s)); it is ignored",
				env->nb_pairs);
	}
	w = rte_zmalloc_socket("aqm_worker", sizeof(*w) +
			       2 * env->nb_workers * sizeof(struct rte_ring *),
			       RTE_CACHE_LINE_SIZE, env->socket);
	if (w == NULL)
		return -ENOMEM;
	w->index = env->worker;
	w->nb_workers = env->nb_workers;
	w->pairs = c->val[AK_PORTS];
	w->bypass = c->val[AK_BYPASS] != 0;
	w->conf = aqm_g.running;
	handoff_port_init(aqm_g.mesh, env->worker, &w->hp,
			  (struct rte_ring **)(w + 1));
	w->mailbox = ctl_bus_mailbox(aqm_g.bus, env->worker, env->socket);
	if (w->mailbox == NULL) {
		rc = -rte_errno;
		rte_free(w);
		return rc;
	}

	aqm_subs_params_default(&sp);
	snprintf(name, sizeof(name), "aqm_w%u", env->worker);
	sp.name = name;
	sp.socket_id = env->socket;
	sp.max_subs = (uint32_t)c->val[AK_MAX_SUBS];
	sp.max_v6_subs = (uint32_t)c->val[AK_MAX_V6_SUBS];
	conf_pipe(c, true, &sp.pipe);
	sp.default_policy = (enum aqm_default_policy)c->val[AK_DEFAULT];
	conf_pipe(c, false, &sp.default_pipe);
	sp.default_up_bps = c->val[AK_RATE_UP];
	sp.ack_filter_dirs = (uint8_t)c->val[AK_ACK_FILTER];
	sp.sched.ack_hold_ns = c->val[AK_ACK_HOLD];
	sp.sched.ack_hold_slots = AQM_ACK_HOLD_SLOTS;
	/* Keep a share of the mempool free for rx: queues may hold at most
	 * half of it, split over workers and directions. */
	uint32_t maxq = (uint32_t)c->val[AK_MAX_QUEUED];
	if (maxq == 0 && env->pool != NULL)
		maxq = RTE_MAX(env->pool->size / 2 / (2 * env->nb_workers), 64u);
	sp.sched.limit_pkts = maxq;
	sp.sched.max_lag_ns = c->val[AK_MAX_LAG];
	w->subs = aqm_subs_create(&sp);
	if (w->subs == NULL) {
		rc = -rte_errno;
		rte_ring_free(w->mailbox);
		rte_free(w);
		return rc ? rc : -EINVAL;
	}
	char err[192];
	if (c->nsubs && aqm_subs_apply(w->subs, c->subs, c->nsubs, err, sizeof(err)) < 0) {
		aqm_log("%s: %s", c->subs_path, err);
		aqm_subs_free(w->subs);
		rte_ring_free(w->mailbox);
		rte_free(w);
		return -EINVAL;
	}
	aqm_g.w[env->worker] = w;
	aqm_g.created++;
	out->ops = &aqm_stage_ops;
	out->ctx = w;

	if (aqm_g.created == env->nb_workers) {
		rc = rte_telemetry_register_cmd("/sluice/aqm_pipe", tel_pipe,
			"One pipe, both directions. Param: prefix, pipe id or default");
		rc |= rte_telemetry_register_cmd("/sluice/aqm_set", tel_set,
			"Set rates: prefix,down,up[,profile] or default,down,up");
		if (rc != 0)
			aqm_log("could not register /sluice/aqm_pipe and /sluice/aqm_set");
		static const char *const ackf[4] = { "off", "down", "up", "both" };

		aqm_log("%u subscriber(s), unknown addresses %s, default rates down=%" PRIu64 " up=%" PRIu64 " bit/s, %s, ack_filter %s, ack_hold %" PRIu64 " us, bypass %s, %u worker(s)",
			c->nsubs,
			c->val[AK_DEFAULT] == AQM_DEFAULT_PIPE ? "go to the default pipe" : "pass unshaped",
			c->val[AK_RATE_DOWN], c->val[AK_RATE_UP],
			c->val[AK_QDISC] == AQM_QDISC_FIFO ? "fifo" : "fq_codel",
			ackf[c->val[AK_ACK_FILTER] & 3], c->val[AK_ACK_HOLD] / 1000,
			c->val[AK_BYPASS] ? "on" : "off", env->nb_workers);
	}
	return 0;
}

static void
aqm_report(void *const *ctxs, unsigned nb_workers, FILE *out)
{
	for (int dir = 1; dir >= 0; dir--) {
		struct aqm_pipe_stats ps;
		struct aqm_dir_stats ds;

		sum_dir(ctxs, nb_workers, (enum aqm_dir)dir, &ps, &ds);
		fprintf(out, "aqm dir=%s enqueued=%" PRIu64 " sent=%" PRIu64
			" drop_codel=%" PRIu64 " drop_overflow=%" PRIu64
			" drop_memory=%" PRIu64 " ce_marked=%" PRIu64
			" ce_threshold=%" PRIu64 " ack_filtered=%" PRIu64
			" bypassed=%" PRIu64 " ack_held=%" PRIu64
			" backlog_pkts=%" PRIu64 " backlog_bytes=%" PRIu64
			" held_pkts=%" PRIu64 " passed=%" PRIu64
			" malformed_passed=%" PRIu64 " handoffs=%" PRIu64
			" handoff_in=%" PRIu64 " handoff_drops=%" PRIu64
			" p50_us=%" PRIu64 " p95_us=%" PRIu64 " p99_us=%" PRIu64 "\n",
			dir_name[dir], ps.enq_pkts, ps.tx_pkts,
			ps.drops[AQM_DROP_CODEL], ps.drops[AQM_DROP_OVERFLOW],
			ps.drops[AQM_DROP_MEMORY],
			ps.ce_marks + ps.ce_threshold_marks, ps.ce_threshold_marks,
			ps.ack_filtered, ps.bypassed, ps.ack_held, ps.backlog_pkts,
			ps.backlog_bytes, ps.held_pkts,
			ds.passed, ds.malformed,
			ds.handoffs, ds.handoff_in, ds.handoff_drops,
			aqm_sojourn_percentile(ps.sojourn_hist, 50) / 1000,
			aqm_sojourn_percentile(ps.sojourn_hist, 95) / 1000,
			aqm_sojourn_percentile(ps.sojourn_hist, 99) / 1000);
	}
	fprintf(out, "aqm_control subscribers=%u reloads=%" PRIu64
		" reload_errors=%" PRIu64 " telemetry_changes=%" PRIu64 "\n",
		aqm_g.nmirror, aqm_g.reloads, aqm_g.reload_errors,
		aqm_g.tel_changes);
}

const struct stage_module sl_stage_aqm = {
	.name = "aqm",
	.parse = aqm_parse,
	.conf_free = aqm_conf_free,
	.owns_section = aqm_owns_section,
	.create = aqm_create,
	.telemetry = aqm_telemetry,
	.telemetry_help = "AQM totals per direction, reload counters. No parameters.",
	.report = aqm_report,
	.reload = aqm_module_reload,
};
