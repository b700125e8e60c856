/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_APP_STAGE_AQM_AUTORATE_H
#define SLUICE_APP_STAGE_AQM_AUTORATE_H

/*
 * The aqm stage's passive RTT (lib/prtt) and autorate (lib/autorate):
 * its [aqm] keys (a lib/ini typed table of their own, applied before the
 * rest of [aqm]), the per-worker state, the datapath hooks, telemetry
 * (/sluice/prtt, /sluice/prtt_sub, /sluice/autorate_log) and the report.
 * Everything lives in stage_aqm_autorate.c; stage_aqm*.c only call these.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_mbuf.h>

#include "aqm_subs.h"
#include "ini.h"
#include "prtt.h"
#include "stages.h"

/* The keys of the table (see config/aqm.ini). */
struct aqm_ar_conf {
	bool passive_rtt;
	uint32_t prtt_flows;
	uint64_t prtt_max_age;
	uint64_t prtt_ts_tick;
	uint32_t prtt_top;
	uint8_t autorate;          /* bits 1 << enum aqm_dir */
	uint64_t floor_down, floor_up, ceiling_down, ceiling_up;
	uint64_t interval, bloat, drain, stall;
	uint32_t spacing;
	double raise, cut_min, cut_max, load;
	uint32_t log_size;
};

struct aqm_worker;
struct aqm_ar;

/* Apply the table to [aqm] of f (marks its entries used). 0 or -1 + err. */
int aqm_ar_conf_parse(struct ini_file *f, struct aqm_ar_conf *c,
		      uint64_t max_subs, char *err, size_t errlen);
/* Whether name is one of the table's keys (the rest of [aqm] skips them). */
bool aqm_ar_key(const char *name);
/* The reference of the table ("sluice --config-keys" once [aqm] prints). */
void aqm_ar_print_keys(FILE *out);

/*
 * Whether subscriber e's own autorate columns fit c: they need
 * passive_rtt, and its floor may not exceed its ceiling once the [aqm]
 * keys fill in what it leaves empty. 0, or -1 with why.
 */
int aqm_ar_check_entry(const struct aqm_ar_conf *c, const struct aqm_sub_entry *e,
		       char *why, size_t whylen);

/* Per worker, at create; NULL when both are off. -errno on failure. */
int aqm_ar_create(struct aqm_worker *w, const struct aqm_ar_conf *c,
		  uint32_t max_subs, const struct stage_env *env,
		  struct aqm_ar **out);
void aqm_ar_free(struct aqm_ar *a);
/* Passive RTT's slots, for the classifier's prefetches (fixed from create
 * on); f->slots is NULL without passive RTT. */
void aqm_ar_slots(const struct aqm_ar *a, struct prtt_fast *f);

/* Datapath: packets from the subscriber about to be queued in pipes[]
 * (each one's pkt_meta.pipe holds the same id: that is what is read). */
void aqm_ar_up(struct aqm_ar *a, struct rte_mbuf **pkts, const uint32_t *pipes,
	       uint16_t n, uint64_t now_ns);
/* Datapath: packets leaving toward the subscriber now; each one's pipe
 * is its pkt_meta.pipe, set when it was queued. */
void aqm_ar_down(struct aqm_ar *a, struct rte_mbuf **pkts, uint16_t n,
		 uint64_t now_ns);
/* A worker applied entries e to subs: their pipes take their own autorate
 * directions, floors and ceilings (or the [aqm] keys' where they have
 * none). Call after every aqm_subs_update() that succeeded. */
void aqm_ar_subs_applied(struct aqm_ar *a, const struct aqm_subs *subs,
			 const struct aqm_sub_entry *e, uint32_t n);
/* Pipe id was removed (its subscriber left): its autorate and passive
 * RTT state start over for whoever gets the id next. */
void aqm_ar_pipe_removed(struct aqm_ar *a, uint32_t id);
/* Pipe id was re-rated (the default pipe by a reload or aqm_set): the law
 * starts over from its new rate. */
void aqm_ar_restart(struct aqm_ar *a, uint32_t id);
/* Poll: autorate ticks of the pipes this worker owns. */
void aqm_ar_poll(struct aqm_ar *a, struct aqm_worker *w, uint64_t now_ns);

/* Control side: after the last worker; telemetry commands. */
void aqm_ar_ready(void *const *ctxs_unused, unsigned nb_workers);
void aqm_ar_report(FILE *out);

#endif
