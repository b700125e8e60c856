/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_APP_STAGES_H
#define SLUICE_APP_STAGES_H

/**
 * @file
 * The registry of stage modules. A module owns some INI sections, builds
 * one stage per worker, and exports its counters through telemetry.
 * Adding a stage to sluice = one entry in stages.c.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_mempool.h>
#include <rte_telemetry.h>

#include "ini.h"
#include "stage.h"

/** What a stage learns about the worker that owns it. */
struct stage_env {
	unsigned worker;        /**< worker index, 0..nb_workers-1 */
	unsigned nb_workers;
	int socket;             /**< NUMA socket of the worker's lcore */
	uint16_t nb_pairs;      /**< port pairs */
	struct rte_mempool *pool; /**< for packets the stage creates */
	bool tx_multiseg;       /**< every port sends chained mbufs */
	/** Every port's rx queue i carries the subscribers that
	 * port_steer_queue() gives queue i (app/port.h): a stage gives each
	 * IPv4 subscriber's state to that worker. */
	bool steer;
	/** With steer, IPv6 too: queue i carries the /64s that
	 * port_steer_queue_v6() gives it. */
	bool steer_v6;
	uint64_t tsc_hz;
	/** No stage runs after this one: what it emits goes to tx, which
	 * reads no pkt_meta. */
	bool last;
};

struct stage_module {
	const char *name;      /**< also the telemetry command /sluice/<name> */
	/**
	 * Parse this module's sections. Set *conf to NULL when the module is
	 * not configured (the stage is then left out of the pipeline). Mark
	 * every entry consumed with e->used. Return 0, or -1 with err in the
	 * "FILE:LINE: [section] key: reason" form (sl_config_err()).
	 */
	int (*parse)(struct ini_file *f, void **conf, char *err, size_t errlen);
	void (*conf_free)(void *conf);
	/** Optional: print the module's key tables (ini_keys_print()). */
	void (*print_keys)(FILE *out);
	/** Whether this module claims a section (for "unknown section" errors). */
	int (*owns_section)(const char *section);
	/** Build a worker's instance. Return 0 or -errno (boot fails). */
	int (*create)(const void *conf, const struct stage_env *env,
		      struct stage *out);
	/** Fill telemetry with counters summed over (or listed per) worker. */
	int (*telemetry)(void *const *ctxs, unsigned nb_workers,
			 const char *params, struct rte_tel_data *d);
	const char *telemetry_help;
	/** Print the final counters at exit (one or more lines). */
	void (*report)(void *const *ctxs, unsigned nb_workers, FILE *out);
	/**
	 * Optional. SIGHUP: re-read this module's configuration and apply
	 * what may change at run time, or change nothing and say why. Runs
	 * on the control thread (app/control.h), never on a worker, so it
	 * may post changes to the workers and wait for them.
	 */
	void (*reload)(void);
};

/**
 * Register a telemetry command behind the app's shutdown gate
 * (app/telemetry.c): every /sluice/ command, a stage's own included, is
 * registered this way, never with rte_telemetry_register_cmd() directly.
 */
int telemetry_register_cmd(const char *cmd, telemetry_cb fn, const char *help);

/** Modules in pipeline order, NULL-terminated. */
extern const struct stage_module *const sl_stage_modules[];

/** Per-module parsed configs, indexed like sl_stage_modules. */
#define SL_MAX_STAGES 8
struct sl_stage_conf {
	void *conf[SL_MAX_STAGES];
};

#endif
