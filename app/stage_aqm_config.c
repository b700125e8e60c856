/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * [aqm]: one lib/ini key table parsed into struct aqm_conf, the
 * cross-checks lib/aqm would otherwise only refuse at boot, and the
 * subscriber CSV. See config/aqm.ini.
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

/* "all" or a list of pair indices: "0", "0,2", "0 1". */
static int
parse_ports(const char *v, void *dst, char *why, size_t whylen)
{
	char buf[128], *save = NULL;
	uint64_t mask = 0;

	if (strcasecmp(v, "all") == 0) {
		*(uint64_t *)dst = UINT64_MAX;
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", v);
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
		mask |= 1ULL << p;
	}
	if (mask == 0) {
		snprintf(why, whylen, "empty list: give pair indices or 'all'");
		return -1;
	}
	*(uint64_t *)dst = mask;
	return 0;
}

/* A time ("1s", "500ms") means that long at the shaped rate; anything
 * else is a size in bytes ("256kb", "1mb", "65536"). */
static int
parse_fifo_limit(const char *v, void *dst, char *why, size_t whylen)
{
	struct aqm_fifo_limit *fl = dst;
	size_t l = strlen(v);
	uint64_t x;

	if (l > 0 && (v[l - 1] == 's' || v[l - 1] == 'S')) {
		if (ini_parse_time_ns(v, 1000000, &x, why, whylen) < 0)
			return -1;
		x /= 1000000;
		if (x < 1 || x > 60000) {
			snprintf(why, whylen, "'%s' out of range [1ms, 60s]", v);
			return -1;
		}
		fl->value = x;
		fl->in_ms = 1;
		return 0;
	}
	if (ini_parse_size(v, &x, why, whylen) < 0) {
		snprintf(why, whylen,
			 "'%s' is neither a time at the shaped rate (1s, 200ms) nor a size (1514, 64kb, 1mb)", v);
		return -1;
	}
	if (x < 64 || x > (1ULL << 34)) {
		snprintf(why, whylen, "'%s' out of range [64 bytes, 16gb]", v);
		return -1;
	}
	fl->value = x;
	fl->in_ms = 0;
	return 0;
}

/* A pipe rate, or 0 / "unshaped". */
static int
parse_rate(const char *v, void *dst, char *why, size_t whylen)
{
	uint64_t x;

	if (strcmp(v, "0") == 0 || strcasecmp(v, "unshaped") == 0) {
		*(uint64_t *)dst = 0;
		return 0;
	}
	if (ini_parse_rate_bps(v, &x, why, whylen) < 0)
		return -1;
	if (x < AQM_RATE_MIN || x > AQM_RATE_MAX) {
		snprintf(why, whylen, "'%s' out of range 64kbit..100gbit (or 0 = unshaped)", v);
		return -1;
	}
	*(uint64_t *)dst = x;
	return 0;
}

/* lib/aqm's link-layer profiles (aqm_shaper_profile()), by index. */
static const char *const profile_names[] = {
	"none", "ethernet", "vdsl2", "vdsl2-bridged", "adsl-pppoe",
	"adsl-pppoa", "docsis", "lte",
};

static int
parse_profile(const char *v, void *dst, char *why, size_t whylen)
{
	struct aqm_shaper_params sp = { 0 };

	for (unsigned i = 0; i < RTE_DIM(profile_names); i++) {
		if (strcasecmp(v, profile_names[i]) == 0 &&
		    aqm_shaper_profile(profile_names[i], &sp) == 0) {
			*(uint8_t *)dst = (uint8_t)i;
			return 0;
		}
	}
	snprintf(why, whylen,
		 "unknown profile '%s' (none, ethernet, vdsl2, vdsl2-bridged, adsl-pppoe, adsl-pppoa, docsis, lte)", v);
	return -1;
}

/* Bytes added to each frame, -64..256. */
static int
parse_overhead(const char *v, void *dst, char *why, size_t whylen)
{
	char *end;
	long n = strtol(v, &end, 10);

	if (*v == '\0' || *end != '\0' || n < -64 || n > 256) {
		snprintf(why, whylen, "'%s' is not an overhead in bytes, -64..256", v);
		return -1;
	}
	*(int16_t *)dst = (int16_t)n;
	return 0;
}

/* The subscriber CSV as written; resolved against the file's directory
 * and loaded by aqm_conf_parse(). */
static int
parse_path(const char *v, void *dst, char *why, size_t whylen)
{
	if (strlen(v) >= sizeof(((struct aqm_conf *)0)->subscribers)) {
		snprintf(why, whylen, "path too long");
		return -1;
	}
	snprintf(dst, sizeof(((struct aqm_conf *)0)->subscribers), "%s", v);
	return 0;
}

static const struct ini_enum qdisc_names[] = {
	{ "fq_codel", AQM_QDISC_FQ_CODEL }, { "fifo", AQM_QDISC_FIFO }, { NULL, 0 },
};
/* Bits 1 << enum aqm_dir. */
static const struct ini_enum dirs_names[] = {
	{ "off", 0 }, { "up", 1 << AQM_DIR_UP }, { "down", 1 << AQM_DIR_DOWN },
	{ "both", (1 << AQM_DIR_UP) | (1 << AQM_DIR_DOWN) }, { NULL, 0 },
};
static const struct ini_enum policy_names[] = {
	{ "pass", AQM_DEFAULT_PASS }, { "pipe", AQM_DEFAULT_PIPE }, { NULL, 0 },
};
static const struct ini_enum framing_names[] = {
	{ "none", AQM_FRAMING_NONE }, { "atm", AQM_FRAMING_ATM },
	{ "ptm", AQM_FRAMING_PTM }, { NULL, 0 },
};

static int
parse_isolation(const char *v, void *dst, char *why, size_t whylen)
{
	enum aqm_isolation iso;

	if (aqm_parse_isolation(v, &iso) != 0) {
		snprintf(why, whylen,
			 "'%s' is not an isolation (flows, dual-srchost, dual-dsthost or triple-isolate)", v);
		return -1;
	}
	*(uint8_t *)dst = (uint8_t)iso;
	return 0;
}

static int
parse_diffserv(const char *v, void *dst, char *why, size_t whylen)
{
	enum aqm_diffserv ds;

	if (aqm_parse_diffserv(v, &ds) != 0) {
		snprintf(why, whylen,
			 "'%s' is not a diffserv mode (besteffort, diffserv3 or diffserv4)", v);
		return -1;
	}
	*(uint8_t *)dst = (uint8_t)ds;
	return 0;
}

/* The keys the parse looks at by index. */
enum {
	AK_PORTS, AK_QDISC, AK_FIFO_LIMIT, AK_TARGET, AK_INTERVAL,
	AK_CE_THRESHOLD, AK_ECN, AK_ECN_DROP_COUNT, AK_CODEL_RATE_AWARE, AK_BLUE,
	AK_BLUE_THRESHOLD, AK_BLUE_MIN_QUEUE, AK_BLUE_INTERVAL, AK_BLUE_INC,
	AK_BLUE_DEC, AK_ISOLATION, AK_DIFFSERV, AK_WASH, AK_QUANTUM, AK_DROP_BATCH, AK_ACK_FILTER, AK_ACK_HOLD, AK_FLOWS, AK_FLOW_SEED,
	AK_LIMIT, AK_MEMORY_LIMIT, AK_DEFAULT, AK_RATE_DOWN, AK_RATE_UP,
	AK_PROFILE, AK_OVERHEAD, AK_MPU, AK_FRAMING, AK_SUBSCRIBERS,
	AK_MAX_SUBS, AK_MAX_V6_SUBS, AK_SUB_FLOWS, AK_SUB_LIMIT, AK_SUB_MEMORY,
	AK_HANDOFF_RING, AK_MAX_QUEUED, AK_MAX_LAG, AK_BYPASS, AK_RWND_CLAMP,
	AK_RWND_FLOWS, AK_RWND_HEADROOM, AK_MAX
};

/*
 * [aqm], in the order of config/aqm.ini. Defaults as written there
 * (tests/pcap/test_config.py checks it); a bare time is in ms. Only
 * rate_down, rate_up and subscribers reload.
 */
#define AC(f) INI_AT(struct aqm_conf, f)
#define AQM_TIME INI_KIND_TIME
#define MS 1000000ULL
static const struct ini_key aqm_keys[AK_MAX] = {
	[AK_PORTS] = { "ports", INI_KIND_CUSTOM, AC(ports), .parse = parse_ports,
		.def = "all", .doc = "port pairs shaped: all, or pair indices (0, 0,2)" },
	[AK_QDISC] = { "qdisc", INI_KIND_ENUM, AC(qdisc), .names = qdisc_names,
		.def = "fq_codel", .doc = "queue discipline of every pipe: fq_codel or fifo" },
	[AK_FIFO_LIMIT] = { "fifo_limit", INI_KIND_CUSTOM, AC(fifo_limit),
		.parse = parse_fifo_limit, .def = "1000ms",
		.doc = "FIFO size: a time at the pipe's rate (1ms..60s), or bytes (64..16gb)" },
	[AK_TARGET] = { "target", AQM_TIME, AC(target_ns), 1000, 1000 * MS, MS,
		.def = "5ms", .unit = "ms", .doc = "CoDel target; below interval" },
	[AK_INTERVAL] = { "interval", AQM_TIME, AC(interval_ns), 1000, 4000 * MS, MS,
		.def = "100ms", .unit = "ms", .doc = "CoDel interval" },
	[AK_CE_THRESHOLD] = { "ce_threshold", AQM_TIME, AC(ce_threshold_ns), 0,
		10000 * MS, MS, .def = "0", .unit = "ms",
		.doc = "CE-mark ECT packets whose sojourn exceeds this; 0: off; below interval" },
	[AK_ECN] = { "ecn", INI_KIND_BOOL, AC(ecn), .def = "on",
		.doc = "mark CE instead of dropping ECN-capable packets" },
	[AK_ECN_DROP_COUNT] = { "ecn_drop_count", INI_KIND_UINT, AC(ecn_drop_count), 0, 65535,
		.def = "0", .unit = "signals",
		.doc = "drop, not mark, ECN-capable packets once a flow's CoDel count reaches this; 0: off" },
	[AK_CODEL_RATE_AWARE] = { "codel_rate_aware", INI_KIND_BOOL,
		AC(codel_rate_aware), .def = "on",
		.doc = "raise target and interval on pipes too slow for them (CAKE's rule)" },
	[AK_BLUE] = { "blue", INI_KIND_BOOL, AC(blue), .def = "on",
		.doc = "BLUE next to CoDel, for flows that ignore CE marks" },
	[AK_BLUE_THRESHOLD] = { "blue_threshold", AQM_TIME, AC(blue_threshold_ns),
		AQM_BLUE_THRESHOLD_MIN, AQM_BLUE_THRESHOLD_MAX, MS, .def = "400ms",
		.unit = "ms", .doc = "sojourn beyond which BLUE raises a flow's drop probability" },
	[AK_BLUE_MIN_QUEUE] = { "blue_min_queue", INI_KIND_UINT, AC(blue_min_queue), 0, 65535,
		.def = "24", .unit = "packets",
		.doc = "BLUE acts on a long sojourn only with more than this queued in the flow; 0: any" },
	[AK_BLUE_INTERVAL] = { "blue_interval", AQM_TIME, AC(blue_interval_ns),
		AQM_BLUE_INTERVAL_MIN, AQM_BLUE_INTERVAL_MAX, MS, .def = "10ms",
		.unit = "ms", .doc = "BLUE changes a flow's probability at most once per this" },
	[AK_BLUE_INC] = { "blue_inc", INI_KIND_UINT, AC(blue_inc), 1, 65535,
		.def = "1024", .unit = "1/65536", .doc = "BLUE's step up" },
	[AK_BLUE_DEC] = { "blue_dec", INI_KIND_UINT, AC(blue_dec), 1, 65535,
		.def = "64", .unit = "1/65536", .doc = "BLUE's step down" },
	[AK_ISOLATION] = { "isolation", INI_KIND_CUSTOM, AC(isolation),
		.parse = parse_isolation, .def = "triple-isolate",
		.doc = "fairness between a pipe's hosts: flows, dual-srchost, dual-dsthost or triple-isolate" },
	[AK_DIFFSERV] = { "diffserv", INI_KIND_CUSTOM, AC(diffserv),
		.parse = parse_diffserv, .def = "besteffort",
		.doc = "tins by DSCP (FQ-CoDel pipes): besteffort, diffserv3 or diffserv4" },
	[AK_WASH] = { "wash", INI_KIND_BOOL, AC(wash), .def = "off",
		.doc = "clear the DSCP (keep ECN) of packets leaving a pipe" },
	[AK_QUANTUM] = { "quantum", INI_KIND_UINT, AC(quantum), 64, 65536,
		.def = "1514", .unit = "bytes", .doc = "DRR++ quantum" },
	[AK_DROP_BATCH] = { "drop_batch", INI_KIND_UINT, AC(drop_batch), 1, 4096,
		.def = "64", .unit = "packets", .doc = "most packets dropped from the fattest flow per overflow" },
	[AK_ACK_FILTER] = { "ack_filter", INI_KIND_ENUM, AC(ack_filter),
		.names = dirs_names, .def = "off",
		.doc = "drop pure ACKs a newer one makes redundant: off, up, down or both" },
	[AK_ACK_HOLD] = { "ack_hold", AQM_TIME, AC(ack_hold_ns), 100000, 1000 * MS,
		MS, .def = "0", .unit = "ms", .zero_off = true,
		.doc = "hold pure ACKs of a backlogged pipe this long for the filter; 0: off" },
	[AK_FLOWS] = { "flows", INI_KIND_UINT, AC(flows), 1, AQM_FLOWS_MAX,
		.def = "1024", .unit = "flows", .doc = "flow queues of the default pipe, a power of two" },
	[AK_FLOW_SEED] = { "flow_seed", INI_KIND_UINT, AC(flow_seed), 0, UINT32_MAX,
		.def = "0", .doc = "flow-hash perturbation of every pipe; 0: a random one at each start and reload" },
	[AK_LIMIT] = { "limit", INI_KIND_UINT, AC(limit), 1, 1000000,
		.def = "10240", .unit = "packets", .doc = "packets the default pipe may hold" },
	[AK_MEMORY_LIMIT] = { "memory_limit", INI_KIND_SIZE, AC(memory_limit), 0,
		1ULL << 40, .def = "32mb", .unit = "bytes",
		.doc = "mbuf memory the default pipe may hold" },
	[AK_DEFAULT] = { "default", INI_KIND_ENUM, AC(default_policy),
		.names = policy_names, .def = "pass",
		.doc = "addresses of no subscriber: pass unshaped, or pipe (the default pipe)" },
	[AK_RATE_DOWN] = { "rate_down", INI_KIND_CUSTOM, AC(rate_down),
		.parse = parse_rate, .def = "0", .unit = "bit/s", .reload = true,
		.doc = "default pipe rate downstream, 64kbit..100gbit; 0: unshaped" },
	[AK_RATE_UP] = { "rate_up", INI_KIND_CUSTOM, AC(rate_up),
		.parse = parse_rate, .def = "0", .unit = "bit/s", .reload = true,
		.doc = "default pipe rate upstream, 64kbit..100gbit; 0: unshaped" },
	[AK_PROFILE] = { "profile", INI_KIND_CUSTOM, AC(profile),
		.parse = parse_profile, .def = "none",
		.doc = "link-layer accounting profile; overhead, mpu and framing override it" },
	[AK_OVERHEAD] = { "overhead", INI_KIND_CUSTOM, AC(overhead),
		.parse = parse_overhead, .def = "0", .unit = "bytes",
		.doc = "bytes added to each frame, -64..256" },
	[AK_MPU] = { "mpu", INI_KIND_UINT, AC(mpu), 0, 4096, .def = "0",
		.unit = "bytes", .doc = "minimum packet unit after overhead" },
	[AK_FRAMING] = { "framing", INI_KIND_ENUM, AC(framing),
		.names = framing_names, .def = "none",
		.doc = "link framing: none, atm or ptm" },
	[AK_SUBSCRIBERS] = { "subscribers", INI_KIND_CUSTOM, AC(subscribers),
		.parse = parse_path, .def = "", .reload = true,
		.doc = "subscriber CSV (prefix,down,up[,profile[,isolation]]), relative to this file; empty: none" },
	[AK_MAX_SUBS] = { "max_subscribers", INI_KIND_UINT, AC(max_subs), 1, 1000000,
		.def = "1024", .unit = "subscribers", .doc = "subscriber table size" },
	[AK_MAX_V6_SUBS] = { "max_v6_subscribers", INI_KIND_UINT, AC(max_v6_subs), 0,
		1000000, .def = "1024", .unit = "subscribers",
		.doc = "of which IPv6; at most max_subscribers (unset: min(1024, max_subscribers))" },
	[AK_SUB_FLOWS] = { "subscriber_flows", INI_KIND_UINT, AC(sub_flows), 1,
		AQM_FLOWS_MAX, .def = "32", .unit = "flows",
		.doc = "flow queues of each subscriber pipe, a power of two" },
	[AK_SUB_LIMIT] = { "subscriber_limit", INI_KIND_UINT, AC(sub_limit), 1,
		1000000, .def = "1024", .unit = "packets",
		.doc = "packets each subscriber pipe may hold" },
	[AK_SUB_MEMORY] = { "subscriber_memory_limit", INI_KIND_SIZE,
		AC(sub_memory_limit), 0, 1ULL << 40, .def = "4mb", .unit = "bytes",
		.doc = "mbuf memory each subscriber pipe may hold" },
	[AK_HANDOFF_RING] = { "handoff_ring", INI_KIND_UINT, AC(handoff_ring), 64,
		65536, .def = "1024", .unit = "packets",
		.doc = "slots of each worker-to-worker hand-off ring" },
	[AK_MAX_QUEUED] = { "max_queued", INI_KIND_UINT, AC(max_queued), 0, 16777215,
		.def = "0", .unit = "packets",
		.doc = "packets one worker's pipes may hold per direction; 0: from the pool" },
	[AK_MAX_LAG] = { "max_lag", AQM_TIME, AC(max_lag_ns), 0, 100 * MS, MS,
		.def = "4ms", .unit = "ms",
		.doc = "how far a stalled shaper may catch up, as a burst" },
	[AK_BYPASS] = { "bypass", INI_KIND_BOOL, AC(bypass), .def = "on",
		.doc = "a packet its pipe would send at once skips the queue" },
	[AK_RWND_CLAMP] = { "rwnd_clamp", INI_KIND_BOOL, AC(rwnd_clamp), .def = "off",
		.doc = "lower the window of ACKs so a queued flow keeps at most rwnd_headroom in sluice" },
	[AK_RWND_FLOWS] = { "rwnd_flows", INI_KIND_UINT, AC(rwnd_flows), 4, 1u << 26,
		.def = "65536", .unit = "connections",
		.doc = "connections each worker's window clamp tracks, a power of two (68 bytes each)" },
	[AK_RWND_HEADROOM] = { "rwnd_headroom", INI_KIND_SIZE, AC(rwnd_headroom), 1,
		1u << 30, .def = "3000", .unit = "bytes",
		.doc = "bytes a clamped flow may queue in sluice beyond what its path holds" },
};
#undef MS
#undef AQM_TIME
#undef AC

void
aqm_print_keys(FILE *out)
{
	ini_keys_print(out, AQM_SECTION, aqm_keys, AK_MAX);
	aqm_ar_print_keys(out);
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

/* The line of f that set key k, or NULL (then the default holds). */
static const struct ini_entry *
key_entry(struct ini_file *f, unsigned k)
{
	return ini_get(f, AQM_SECTION, aqm_keys[k].name);
}

/* err = "FILE:LINE: [aqm] key: why", or "FILE: [aqm] key: why" when the
 * key is not in the file. */
static void
key_err(struct ini_file *f, unsigned k, const char *why, char *err,
	size_t errlen)
{
	const struct ini_entry *e = key_entry(f, k);

	if (e != NULL)
		sl_config_err(err, errlen, f, e, why);
	else
		snprintf(err, errlen, "%s: [%s] %s: %s", f->path, AQM_SECTION,
			 aqm_keys[k].name, why);
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
	uint64_t set = 0;

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
	if (ini_keys_defaults(AQM_SECTION, aqm_keys, AK_MAX, c, err, errlen) < 0 ||
	    ini_apply_section(f, AQM_SECTION, aqm_keys, AK_MAX, c, &set, err,
			      errlen) < 0)
		goto fail;
	/* Passive RTT and autorate keys: their own table (stage_aqm_autorate.c). */
	if (aqm_ar_conf_parse(f, &c->ar, 0, err, errlen) < 0)
		goto fail;
	for (unsigned i = 0; strict && i < f->count; i++) {
		const struct ini_entry *e = &f->entries[i];
		if (strcmp(e->section, AQM_SECTION) == 0 && !e->used &&
		    !aqm_ar_key(e->key)) {
			sl_config_err(err, errlen, f, e, "unknown key");
			goto fail;
		}
	}

	/* The profile gives overhead, mpu and framing; lines that set them
	 * win, wherever they are. */
	struct aqm_shaper_params sp = { 0 };
	aqm_shaper_profile(profile_names[c->profile], &sp);
	if (!(set & (1ULL << AK_OVERHEAD)))
		c->overhead = sp.overhead;
	if (!(set & (1ULL << AK_MPU)))
		c->mpu = sp.mpu;
	if (!(set & (1ULL << AK_FRAMING)))
		c->framing = sp.framing;

	/* Cross-checks the library would otherwise only refuse at boot. */
#define AQM_FAIL(k, ...) do { \
		snprintf(why, sizeof(why), __VA_ARGS__); \
		key_err(f, k, why, err, errlen); \
		goto fail; \
	} while (0)
	if (!rte_is_power_of_2(c->flows))
		AQM_FAIL(AK_FLOWS, "%u is not a power of two", c->flows);
	if (!rte_is_power_of_2(c->sub_flows))
		AQM_FAIL(AK_SUB_FLOWS, "%u is not a power of two", c->sub_flows);
	if (!rte_is_power_of_2(c->rwnd_flows))
		AQM_FAIL(AK_RWND_FLOWS, "%u is not a power of two", c->rwnd_flows);
	if (c->rwnd_clamp && c->qdisc == AQM_QDISC_FIFO)
		AQM_FAIL(AK_RWND_CLAMP, "needs qdisc = fq_codel (it reads each flow's own queue)");
	if (c->qdisc == AQM_QDISC_FIFO && c->fifo_limit.in_ms &&
	    c->default_policy == AQM_DEFAULT_PIPE &&
	    (c->rate_down == 0 || c->rate_up == 0))
		AQM_FAIL(AK_FIFO_LIMIT,
			 "a FIFO sized in time needs rate_down and rate_up (or give a size in bytes)");
	if (c->ce_threshold_ns != 0 && c->ce_threshold_ns >= c->interval_ns)
		AQM_FAIL(AK_CE_THRESHOLD, "must be below interval");
	if (c->target_ns >= c->interval_ns)
		AQM_FAIL(AK_TARGET, "must be below interval");
	if (c->ack_hold_ns != 0 && c->ack_filter == 0)
		AQM_FAIL(AK_ACK_HOLD, "works with the ACK filter: set ack_filter (up, down or both) or ack_hold = 0");
	if (c->diffserv != AQM_DIFFSERV_BESTEFFORT && c->qdisc == AQM_QDISC_FIFO)
		AQM_FAIL(AK_DIFFSERV, "tins need qdisc = fq_codel (a FIFO has one queue)");
	if (!(set & (1ULL << AK_MAX_V6_SUBS)) && c->max_v6_subs > c->max_subs)
		c->max_v6_subs = c->max_subs;
	if (c->max_v6_subs > c->max_subs)
		AQM_FAIL(AK_MAX_V6_SUBS, "must be at most max_subscribers");
	if (c->isolation != AQM_ISO_FLOWS &&
	    (c->flows > AQM_ISO_FLOWS_MAX || c->sub_flows > AQM_ISO_FLOWS_MAX))
		AQM_FAIL(AK_ISOLATION, "host isolation works with at most %u flows per pipe: lower flows/subscriber_flows or set isolation = flows",
			 AQM_ISO_FLOWS_MAX);

	if (c->subscribers[0] != '\0') {
		char cerr[384];
		struct aqm_sub_entry *v = NULL;
		int n;

		slash = strrchr(f->path, '/');
		if (slash == NULL)
			snprintf(dir, sizeof(dir), ".");
		else
			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - f->path), f->path);
		if (c->subscribers[0] == '/')
			n = snprintf(c->subs_path, sizeof(c->subs_path), "%s", c->subscribers);
		else
			n = snprintf(c->subs_path, sizeof(c->subs_path), "%s/%s", dir,
				     c->subscribers);
		if (n >= (int)sizeof(c->subs_path))
			AQM_FAIL(AK_SUBSCRIBERS, "path too long");
		struct aqm_lqos_report rep;

		n = aqm_subs_load(c->subs_path, &v, &rep, cerr, sizeof(cerr));
		if (n < 0)
			AQM_FAIL(AK_SUBSCRIBERS, "%s", cerr);
		if (rep.libreqos)
			aqm_lqos_report_format(&rep, c->subs_note, sizeof(c->subs_note));
		c->subs = v;
		c->nsubs = (uint32_t)n;
		uint32_t v6 = 0;
		for (uint32_t i = 0; i < c->nsubs; i++)
			v6 += v[i].family == 6;
		for (uint32_t i = 0; i < c->nsubs; i++) {
			char arwhy[192];

			if (aqm_ar_check_entry(&c->ar, &v[i], arwhy, sizeof(arwhy)) != 0)
				AQM_FAIL(AK_SUBSCRIBERS, "%.300s:%u: %s", c->subs_path, v[i].line, arwhy);
		}
		for (uint32_t i = 0; i < c->nsubs; i++)
			if (v[i].has_isolation && v[i].isolation != AQM_ISO_FLOWS &&
			    c->isolation == AQM_ISO_FLOWS)
				AQM_FAIL(AK_SUBSCRIBERS, "%.300s:%u: a subscriber's own host isolation needs [aqm] isolation other than flows (host state is reserved only then)",
					 c->subs_path, v[i].line);
		if (c->nsubs > c->max_subs)
			AQM_FAIL(AK_SUBSCRIBERS, "%u subscribers in %.300s, more than max_subscribers = %u",
				 c->nsubs, c->subs_path, c->max_subs);
		if (v6 > c->max_v6_subs)
			AQM_FAIL(AK_SUBSCRIBERS, "%u IPv6 subscribers in %.300s, more than max_v6_subscribers = %u",
				 v6, c->subs_path, c->max_v6_subs);
	}
#undef AQM_FAIL
	*out = c;
	return 0;
fail:
	aqm_conf_free(c);
	return -1;
}

bool
aqm_conf_reloadable(const struct aqm_conf *nc, const struct aqm_conf *running,
		    struct ini_file *f, char *err, size_t errlen)
{
	static const char why[] = "cannot change at run time (restart sluice); only rate_down, rate_up and subscribers reload";

	for (unsigned k = 0; k < AK_MAX; k++) {
		const struct ini_key *key = &aqm_keys[k];

		if (key->reload ||
		    memcmp((const char *)nc + key->off,
			   (const char *)running + key->off, key->width) == 0)
			continue;
		if (key_entry(f, k) != NULL)
			key_err(f, k, why, err, errlen);
		else
			snprintf(err, errlen, "%s: [%s] %s: removed, %s", f->path,
				 AQM_SECTION, key->name, why);
		return false;
	}
	return true;
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
	sp->overhead = c->overhead;
	sp->mpu = c->mpu;
	sp->framing = c->framing;
}

void
aqm_conf_pipe(const struct aqm_conf *c, bool subscriber, struct aqm_pipe_params *p)
{
	aqm_pipe_params_default(p);
	p->qdisc = (enum aqm_qdisc)c->qdisc;
	p->fq.flows = subscriber ? c->sub_flows : c->flows;
	p->fq.limit_pkts = subscriber ? c->sub_limit : c->limit;
	p->fq.memory_limit = subscriber ? c->sub_memory_limit : c->memory_limit;
	p->fq.quantum = c->quantum;
	p->fq.drop_batch = c->drop_batch;
	p->fq.codel.target_ns = c->target_ns;
	p->fq.codel.interval_ns = c->interval_ns;
	p->fq.codel.ce_threshold_ns = c->ce_threshold_ns;
	p->fq.codel.ecn = c->ecn;
	p->fq.codel.ecn_drop_count = c->ecn_drop_count;
	p->fq.codel_rate_aware = c->codel_rate_aware;
	p->fq.isolation = c->isolation;
	p->fq.diffserv = c->diffserv;
	p->wash = c->wash;
	if (c->blue) {
		p->fq.blue.threshold_ns = c->blue_threshold_ns;
		p->fq.blue.interval_ns = c->blue_interval_ns;
		p->fq.blue.inc = c->blue_inc;
		p->fq.blue.dec = c->blue_dec;
		p->fq.blue.min_queue = c->blue_min_queue;
	}
	/* RFC 8290 section 4.1.1: perturb the flow hash per instance, so
	 * flows that share a queue by bad luck do not share it every run;
	 * a lab that wants the same queues every run names a seed. */
	p->fq.seed = c->flow_seed != 0 ? c->flow_seed : (uint32_t)rte_rand();
	if (c->fifo_limit.in_ms) {
		p->fifo_limit_ms = (uint32_t)c->fifo_limit.value;
		p->fifo_limit_bytes = 0;
	} else {
		p->fifo_limit_ms = 0;
		p->fifo_limit_bytes = c->fifo_limit.value;
	}
	aqm_conf_shaper(c, c->rate_down, &p->shaper);
}
