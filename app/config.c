/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The [sluice] and [policy] sections, and the all-or-nothing load: the file
 * is parsed into a scratch copy, every module validates its sections, any
 * key nobody consumed is an error, and only then is the copy taken.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "log.h"
#include "stages.h"

static const struct ini_enum rss_names[] = {
	{ "auto", SL_RSS_AUTO }, { "flow", SL_RSS_FLOW },
	{ "subscriber", SL_RSS_SUBSCRIBER }, { NULL, 0 },
};

/* [sluice]: the worker, its ports and its pool. Defaults as written in
 * config/sluice.ini (tests/pcap/test_config.py checks it against this). */
static const struct ini_key sluice_keys[] = {
	{ "burst", INI_KIND_UINT, INI_AT(struct sl_config, burst), 1, 512,
	  .def = "32", .unit = "packets", .doc = "packets per rx burst and per tx burst" },
	{ "tx_drain_us", INI_KIND_UINT, INI_AT(struct sl_config, tx_drain_us), 1, 1000000,
	  .def = "100", .unit = "us", .doc = "longest time a packet waits in a partly filled tx buffer" },
	{ "mbufs", INI_KIND_UINT, INI_AT(struct sl_config, mbufs), 1023, 16777215,
	  .def = "16383", .unit = "mbufs", .doc = "mbufs in the packet pool" },
	{ "mbuf_cache", INI_KIND_UINT, INI_AT(struct sl_config, mbuf_cache), 0, 512,
	  .def = "256", .unit = "mbufs", .doc = "per-lcore mempool cache, at most mbufs / 1.5" },
	{ "rx_desc", INI_KIND_UINT, INI_AT(struct sl_config, rx_desc), 64, 32768,
	  .def = "1024", .unit = "descriptors", .doc = "descriptors per rx queue" },
	{ "tx_desc", INI_KIND_UINT, INI_AT(struct sl_config, tx_desc), 64, 32768,
	  .def = "1024", .unit = "descriptors", .doc = "descriptors per tx queue" },
	{ "max_frame", INI_KIND_UINT, INI_AT(struct sl_config, max_frame), 64, 65535,
	  .def = "9018", .unit = "bytes", .doc = "largest frame carried, with Ethernet header and VLAN tags" },
	{ "drain_timeout_ms", INI_KIND_UINT, INI_AT(struct sl_config, drain_timeout_ms), 0, 600000,
	  .def = "2000", .unit = "ms", .doc = "how long queues may drain on shutdown" },
	{ "tx_retries", INI_KIND_UINT, INI_AT(struct sl_config, tx_retries), 0, 1000000,
	  .def = "64", .unit = "tries", .doc = "retries of a full tx ring before packets are dropped" },
	{ "tx_kick_us", INI_KIND_UINT, INI_AT(struct sl_config, tx_kick_us), 0, 1000000,
	  .def = "100", .unit = "us",
	  .doc = "net_af_packet ports behind a qdisc (qdisc_bypass=0): how often an idle worker asks the kernel again to send what its TX ring still holds; 0 never" },
	{ "stage_cycles", INI_KIND_BOOL, INI_AT(struct sl_config, stage_cycles),
	  .def = "off", .doc = "time every stage with the TSC (telemetry /sluice/stages)" },
	{ "rss", INI_KIND_ENUM, INI_AT(struct sl_config, rss), .names = rss_names,
	  .def = "flow", .doc = "with 2+ workers, what RSS spreads by: flow, subscriber or auto" },
};

static const struct ini_enum action_names[] = {
	{ "forward", SL_ACTION_FORWARD }, { "drop", SL_ACTION_DROP }, { NULL, 0 },
};

/* [policy]: what happens to frames sluice cannot or will not process. */
static const struct ini_key policy_keys[] = {
	{ "non_ip", INI_KIND_ENUM, INI_AT(struct sl_config, non_ip),
	  .names = action_names, .def = "forward",
	  .doc = "frames that are not IP: forward (counted as non_ip) or drop" },
	{ "malformed", INI_KIND_ENUM, INI_AT(struct sl_config, malformed),
	  .names = action_names, .def = "forward",
	  .doc = "frames with truncated or inconsistent headers: forward or drop" },
};

void
sl_config_defaults(struct sl_config *c)
{
	char err[256];

	memset(c, 0, sizeof(*c));
	/* The tables' defaults parse: tests/unit and every start prove it. */
	if (ini_keys_defaults("sluice", sluice_keys, RTE_DIM(sluice_keys), c,
			      err, sizeof(err)) < 0 ||
	    ini_keys_defaults("policy", policy_keys, RTE_DIM(policy_keys), c,
			      err, sizeof(err)) < 0) {
		SL_LOG(config, CRIT, "sluice: built-in default broken: %s", err);
		abort();
	}
}

void
sl_config_log(const struct sl_config *c)
{
	char stages[128] = "";
	size_t n = 0;

	for (unsigned m = 0; sl_stage_modules[m] != NULL && c->stages != NULL; m++)
		if (c->stages->conf[m] != NULL && n < sizeof(stages))
			n += (size_t)snprintf(stages + n, sizeof(stages) - n, " %s",
					      sl_stage_modules[m]->name);
	SL_LOG(config, DEBUG, "sluice: config: %s: burst %u, tx_drain_us %u, mbufs %u (cache %u), descriptors rx %u tx %u, max_frame %u, drain_timeout_ms %u, tx_retries %u, tx_kick_us %u, stage_cycles %s, rss %s, non_ip %s, malformed %s; stages:%s",
	       c->path[0] ? c->path : "built-in defaults", c->burst, c->tx_drain_us,
	       c->mbufs, c->mbuf_cache, c->rx_desc, c->tx_desc, c->max_frame,
	       c->drain_timeout_ms, c->tx_retries, c->tx_kick_us, c->stage_cycles ? "on" : "off",
	       c->rss == SL_RSS_FLOW ? "flow" : c->rss == SL_RSS_SUBSCRIBER ? "subscriber" : "auto",
	       c->non_ip == SL_ACTION_DROP ? "drop" : "forward",
	       c->malformed == SL_ACTION_DROP ? "drop" : "forward",
	       n ? stages : " none (a bridge)");
}

void
sl_config_print_keys(FILE *out)
{
	ini_keys_print(out, "sluice", sluice_keys, RTE_DIM(sluice_keys));
	ini_keys_print(out, "policy", policy_keys, RTE_DIM(policy_keys));
	for (unsigned m = 0; sl_stage_modules[m] != NULL; m++)
		if (sl_stage_modules[m]->print_keys != NULL)
			sl_stage_modules[m]->print_keys(out);
}

void
sl_config_err(char *err, size_t errlen, const struct ini_file *f,
	      const struct ini_entry *e, const char *reason)
{
	if (e != NULL)
		snprintf(err, errlen, "%s:%u: [%s] %s: %s", f->path, e->line,
			 e->section, e->key, reason);
	else
		snprintf(err, errlen, "%s: %s", f->path, reason);
}

static int
parse_core(struct ini_file *f, struct sl_config *c, char *err, size_t errlen)
{
	if (ini_apply_section(f, "sluice", sluice_keys, RTE_DIM(sluice_keys), c,
			      NULL, err, errlen) < 0 ||
	    ini_apply_section(f, "policy", policy_keys, RTE_DIM(policy_keys), c,
			      NULL, err, errlen) < 0)
		return -1;
	if (c->mbuf_cache > c->mbufs / 1.5) {
		sl_config_err(err, errlen, f, ini_get(f, "sluice", "mbuf_cache"),
			      "must be at most mbufs / 1.5");
		return -1;
	}
	return 0;
}

static bool
section_known(const char *s)
{
	if (strcmp(s, "sluice") == 0 || strcmp(s, "policy") == 0)
		return true;
	for (unsigned m = 0; sl_stage_modules[m] != NULL; m++)
		if (sl_stage_modules[m]->owns_section != NULL &&
		    sl_stage_modules[m]->owns_section(s))
			return true;
	return false;
}

static void
stage_conf_free(struct sl_stage_conf *sc)
{
	if (sc == NULL)
		return;
	for (unsigned m = 0; sl_stage_modules[m] != NULL; m++)
		if (sc->conf[m] != NULL && sl_stage_modules[m]->conf_free)
			sl_stage_modules[m]->conf_free(sc->conf[m]);
	free(sc);
}

int
sl_config_load(struct sl_config *out, const char *path, char *err,
	       size_t errlen)
{
	struct ini_file *f = ini_load(path, err, errlen);
	if (f == NULL)
		return -1;

	struct sl_config c = *out;
	c.stages = calloc(1, sizeof(*c.stages));
	if (c.stages == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		ini_free(f);
		return -1;
	}
	snprintf(c.path, sizeof(c.path), "%s", path);

	for (unsigned s = 0; s < f->nsections; s++) {
		if (!section_known(f->sections[s])) {
			snprintf(err, errlen, "%s:%u: [%s]: unknown section",
				 path, f->section_lines[s], f->sections[s]);
			goto fail;
		}
	}
	if (parse_core(f, &c, err, errlen) < 0)
		goto fail;
	for (unsigned m = 0; sl_stage_modules[m] != NULL; m++) {
		if (m >= SL_MAX_STAGES)
			break;
		const struct stage_module *mod = sl_stage_modules[m];
		if (mod->parse != NULL &&
		    mod->parse(f, &c.stages->conf[m], err, errlen) < 0)
			goto fail;
	}
	for (unsigned i = 0; i < f->count; i++) {
		const struct ini_entry *e = &f->entries[i];
		if (!e->used) {
			sl_config_err(err, errlen, f, e,
				      e->section[0] ? "unknown key"
						    : "key outside any section");
			goto fail;
		}
	}
	ini_free(f);
	stage_conf_free(out->stages);
	*out = c;
	return 0;
fail:
	stage_conf_free(c.stages);
	ini_free(f);
	return -1;
}

void
sl_config_free(struct sl_config *c)
{
	stage_conf_free(c->stages);
	c->stages = NULL;
}
