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
#include "stages.h"

void
sl_config_defaults(struct sl_config *c)
{
	memset(c, 0, sizeof(*c));
	c->burst = 32;
	c->tx_drain_us = 100;
	c->mbufs = 16383;
	c->mbuf_cache = 256;
	c->rx_desc = 1024;
	c->tx_desc = 1024;
	c->max_frame = 9018; /* 9000-byte MTU + Ethernet + one VLAN tag */
	c->drain_timeout_ms = 2000;
	c->tx_retries = 64;
	c->non_ip = SL_ACTION_FORWARD;
	c->malformed = SL_ACTION_FORWARD;
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

struct u_key {
	const char *key;
	uint64_t min, max;
	size_t off;
	int width; /* 16 or 32 */
};

static const struct u_key sluice_keys[] = {
	{ "burst", 1, 512, offsetof(struct sl_config, burst), 16 },
	{ "tx_drain_us", 1, 1000000, offsetof(struct sl_config, tx_drain_us), 32 },
	{ "mbufs", 1023, 16777215, offsetof(struct sl_config, mbufs), 32 },
	{ "mbuf_cache", 0, 512, offsetof(struct sl_config, mbuf_cache), 32 },
	{ "rx_desc", 64, 32768, offsetof(struct sl_config, rx_desc), 16 },
	{ "tx_desc", 64, 32768, offsetof(struct sl_config, tx_desc), 16 },
	{ "max_frame", 64, 65535, offsetof(struct sl_config, max_frame), 32 },
	{ "drain_timeout_ms", 0, 600000, offsetof(struct sl_config, drain_timeout_ms), 32 },
	{ "tx_retries", 0, 1000000, offsetof(struct sl_config, tx_retries), 32 },
};

static int
parse_action(const char *v, enum sl_action *out)
{
	if (strcasecmp(v, "forward") == 0)
		*out = SL_ACTION_FORWARD;
	else if (strcasecmp(v, "drop") == 0)
		*out = SL_ACTION_DROP;
	else
		return -1;
	return 0;
}

static int
parse_core(struct ini_file *f, struct sl_config *c, char *err, size_t errlen)
{
	char why[160];
	for (unsigned i = 0; i < f->count; i++) {
		struct ini_entry *e = &f->entries[i];
		if (strcmp(e->section, "sluice") == 0) {
			unsigned k;
			if (strcmp(e->key, "stage_cycles") == 0) {
				if (ini_parse_bool(e->value, &c->stage_cycles,
						   why, sizeof(why)) < 0) {
					sl_config_err(err, errlen, f, e, why);
					return -1;
				}
				e->used = true;
				continue;
			}
			for (k = 0; k < RTE_DIM(sluice_keys); k++)
				if (strcmp(e->key, sluice_keys[k].key) == 0)
					break;
			if (k == RTE_DIM(sluice_keys))
				continue; /* reported as unknown later */
			const struct u_key *u = &sluice_keys[k];
			uint64_t v;
			if (ini_parse_u64(e->value, u->min, u->max, &v, why,
					  sizeof(why)) < 0) {
				sl_config_err(err, errlen, f, e, why);
				return -1;
			}
			if (u->width == 16)
				*(uint16_t *)((char *)c + u->off) = (uint16_t)v;
			else
				*(uint32_t *)((char *)c + u->off) = (uint32_t)v;
			e->used = true;
		} else if (strcmp(e->section, "policy") == 0) {
			enum sl_action *dst = NULL;
			if (strcmp(e->key, "non_ip") == 0)
				dst = &c->non_ip;
			else if (strcmp(e->key, "malformed") == 0)
				dst = &c->malformed;
			if (dst == NULL)
				continue;
			if (parse_action(e->value, dst) < 0) {
				snprintf(why, sizeof(why),
					 "'%s' is not an action (forward or drop)",
					 e->value);
				sl_config_err(err, errlen, f, e, why);
				return -1;
			}
			e->used = true;
		}
	}
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
