/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * [aqm]: one table of keys (AQM_KEYS in stage_aqm_priv.h), parsed into
 * struct aqm_conf's vals[], the cross-checks lib/aqm would otherwise only
 * refuse at boot, and the subscriber CSV. See config/aqm.ini.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rte_common.h>
#include <rte_random.h>

#include "config.h"
#include "stage_aqm_priv.h"

const struct aqm_key_desc aqm_keys[AK_MAX] = {
#define AQM_KEY_DESC(e, n, k, d, lo, hi, r) \
	[AK_##e] = { n, k, (uint64_t)(d), (uint64_t)(lo), (uint64_t)(hi), r },
	AQM_KEYS(AQM_KEY_DESC)
#undef AQM_KEY_DESC
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
	case K_ISOLATION: {
		enum aqm_isolation iso;

		if (aqm_parse_isolation(v, &iso) != 0) {
			snprintf(why, whylen,
				 "'%s' is not an isolation (flows, dual-srchost, dual-dsthost or triple-isolate)", v);
			return -1;
		}
		x = iso;
		break;
	}
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

void
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
int
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
	/* Passive RTT and autorate keys: their own table (stage_aqm_autorate.c). */
	if (aqm_ar_conf_parse(f, &c->ar, 0, err, errlen) < 0)
		goto fail;

	/* Lines in file order, except that profile goes first so explicit
	 * overhead/mpu/framing lines win wherever they are. */
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned i = 0; i < f->count; i++) {
			struct ini_entry *e = &f->entries[i];
			if (strcmp(e->section, AQM_SECTION) != 0)
				continue;
			int k = aqm_conf_key(e->key);
			if (k < 0 && aqm_ar_key(e->key))
				continue; /* applied above */
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
	if (c->val[AK_ISOLATION] != AQM_ISO_FLOWS &&
	    (c->val[AK_FLOWS] > AQM_ISO_FLOWS_MAX || c->val[AK_SUB_FLOWS] > AQM_ISO_FLOWS_MAX))
		AQM_FAIL(AK_ISOLATION, "host isolation works with at most %u flows per pipe: lower flows/subscriber_flows or set isolation = flows",
			 AQM_ISO_FLOWS_MAX);
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
		for (uint32_t i = 0; i < c->nsubs; i++)
			if (v[i].has_isolation && v[i].isolation != AQM_ISO_FLOWS &&
			    c->val[AK_ISOLATION] == AQM_ISO_FLOWS)
				AQM_FAIL(AK_SUBSCRIBERS, "%.300s:%u: a subscriber's own host isolation needs [aqm] isolation other than flows (host state is reserved only then)",
					 c->subs_path, v[i].line);
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

int
aqm_parse(struct ini_file *f, void **conf, char *err, size_t errlen)
{
	struct aqm_conf *c;
	int rc = aqm_conf_parse(f, false, &c, err, errlen);

	*conf = c;
	return rc;
}

int
aqm_owns_section(const char *s)
{
	return strcmp(s, AQM_SECTION) == 0;
}

void
aqm_conf_shaper(const struct aqm_conf *c, uint64_t rate, struct aqm_shaper_params *sp)
{
	sp->rate_bps = rate;
	sp->overhead = (int16_t)(int64_t)c->val[AK_OVERHEAD];
	sp->mpu = (uint16_t)c->val[AK_MPU];
	sp->framing = (uint8_t)c->val[AK_FRAMING];
}

void
aqm_conf_pipe(const struct aqm_conf *c, bool subscriber, struct aqm_pipe_params *p)
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
	p->fq.codel_rate_aware = c->val[AK_CODEL_RATE_AWARE] != 0;
	p->fq.isolation = (uint8_t)c->val[AK_ISOLATION];
	if (c->val[AK_BLUE]) {
		p->fq.blue.threshold_ns = c->val[AK_BLUE_THRESHOLD];
		p->fq.blue.interval_ns = c->val[AK_BLUE_INTERVAL];
		p->fq.blue.inc = (uint16_t)c->val[AK_BLUE_INC];
		p->fq.blue.dec = (uint16_t)c->val[AK_BLUE_DEC];
		p->fq.blue.min_queue = (uint16_t)c->val[AK_BLUE_MIN_QUEUE];
	}
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
	aqm_conf_shaper(c, c->val[AK_RATE_DOWN], &p->shaper);
}
