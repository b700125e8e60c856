/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_APP_STAGE_AQM_PRIV_H
#define SLUICE_APP_STAGE_AQM_PRIV_H

/*
 * What the three files of the aqm stage share:
 *   stage_aqm.c          the datapath (burst, poll, hand-offs) and boot;
 *   stage_aqm_config.c   [aqm]: the key table, parsing, cross-checks;
 *   stage_aqm_control.c  run-time changes (reload, telemetry), the
 *                        control side's mirror of the subscriber table,
 *                        counters and the exit report.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_common.h>
#include <rte_ring.h>
#include <rte_telemetry.h>

#include "aqm.h"
#include "aqm_subs.h"
#include "control.h"
#include "handoff.h"
#include "ini.h"
#include "log.h"
#include "stages.h"
#include "stage_aqm_autorate.h"
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
/* Configuration (stage_aqm_config.c).                                 */

enum aqm_key_kind { K_PORTS, K_QDISC, K_FIFO, K_TIME, K_U64, K_SIZE, K_BOOL,
		    K_RATE, K_POLICY, K_PROFILE, K_INT, K_FRAMING, K_PATH, K_DIRS,
		    K_ISOLATION };

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
	X(BYPASS,       "bypass",                  K_BOOL,    1, 0, 1, 0) \
	X(CODEL_RATE_AWARE, "codel_rate_aware",    K_BOOL,    1, 0, 1, 0) \
	X(BLUE,         "blue",                    K_BOOL,    1, 0, 1, 0) \
	X(BLUE_THRESHOLD, "blue_threshold",        K_TIME,    400000000, AQM_BLUE_THRESHOLD_MIN, AQM_BLUE_THRESHOLD_MAX, 0) \
	X(BLUE_INTERVAL, "blue_interval",          K_TIME,    10000000, AQM_BLUE_INTERVAL_MIN, AQM_BLUE_INTERVAL_MAX, 0) \
	X(BLUE_INC,     "blue_inc",                K_U64,     1024, 1, 65535, 0) \
	X(BLUE_DEC,     "blue_dec",                K_U64,     64, 1, 65535, 0) \
	X(BLUE_MIN_QUEUE, "blue_min_queue",        K_U64,     24, 0, 65535, 0) \
	X(ISOLATION,    "isolation",               K_ISOLATION, AQM_ISO_TRIPLE, 0, 0, 0)

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

extern const struct aqm_key_desc aqm_keys[AK_MAX];

/* The parsed [aqm] section. */
struct aqm_conf {
	uint64_t val[AK_MAX];
	unsigned line[AK_MAX];       /* 0: key not in the file */
	bool fifo_in_ms;             /* fifo_limit is ms at rate, else bytes */
	char path[256];              /* the config file, for reloads */
	char subs_path[512];         /* resolved against the file's directory */
	struct aqm_sub_entry *subs;  /* malloc'ed, nsubs entries */
	uint32_t nsubs;
	struct aqm_ar_conf ar;       /* passive RTT, autorate (stage_aqm_autorate.c) */
};

/*
 * Parse [aqm] of f into a new conf (*out; NULL when f has no [aqm]):
 * every key, cross-checks, and the subscriber CSV. Used at boot and by
 * reloads. Marks [aqm] entries used; with strict, an unknown key in [aqm]
 * is an error.
 */
int aqm_conf_parse(struct ini_file *f, bool strict, struct aqm_conf **out,
		   char *err, size_t errlen);
void aqm_conf_free(void *p);
/* The stage_module hooks. */
int aqm_parse(struct ini_file *f, void **conf, char *err, size_t errlen);
int aqm_owns_section(const char *s);
/* lib/aqm parameters from a conf. */
void aqm_conf_shaper(const struct aqm_conf *c, uint64_t rate,
		     struct aqm_shaper_params *sp);
void aqm_conf_pipe(const struct aqm_conf *c, bool subscriber,
		   struct aqm_pipe_params *p);

/* ------------------------------------------------------------------ */
/* One worker's instance (stage_aqm.c).                                */

/* Counters of one direction on one worker; only that worker writes. */
struct aqm_dir_stats {
	uint64_t passed;        /* unshaped: unknown address, pass policy */
	uint64_t malformed;     /* flagged by the parser: never queued */
	uint64_t handoffs;      /* sent to the owning worker's ring */
	uint64_t handoff_in;    /* received from other workers */
	uint64_t handoff_drops; /* owner's ring full: freed, counted */
	uint64_t host_shared;   /* filled in from lib/aqm: aqm_sched_host_shared() */
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
	struct aqm_ar *ar;               /* passive RTT + autorate, or NULL */
};

/* ------------------------------------------------------------------ */
/* Control side (stage_aqm_control.c).                                 */

void aqm_log(uint32_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Boot, worker 0 first: the running conf, the mirror, the mailboxes. */
int aqm_ctl_boot(const struct aqm_conf *c, unsigned nb_workers);
/* The conf workers read: boot's fixed keys and the current rates. */
const struct aqm_conf *aqm_ctl_running(void);
/* Worker's mailbox, on its socket (NULL with rte_errno). */
struct rte_ring *aqm_ctl_mailbox(unsigned worker, int socket);
/* Worker w is built; after the last one, telemetry and the boot line. */
void aqm_ctl_worker_ready(struct aqm_worker *w, const struct aqm_conf *c,
			  const struct stage_env *env);
/* On a worker, from ctl_mailbox_take(): apply one change, whole or not. */
int aqm_ctl_apply(void *ctx, struct ctl_change *cc, char *err, size_t errlen);
void aqm_module_reload(void);
/* "198.18.0.2/32", "default" or "pipe N" for a pipe id (control side). */
void aqm_ctl_pipe_name(uint32_t id, char *buf, size_t len);
int aqm_telemetry(void *const *ctxs, unsigned nb_workers, const char *params,
		  struct rte_tel_data *d);
void aqm_report(void *const *ctxs, unsigned nb_workers, FILE *out);

#endif
