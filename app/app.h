/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_APP_APP_H
#define SLUICE_APP_APP_H

#include <stdio.h>

#include <rte_mempool.h>

#include "config.h"
#include "port.h"
#include "worker.h"

/** Everything main() builds at boot; read by telemetry and the exit report. */
struct sl_app {
	struct sl_config cfg;
	uint16_t nb_ports;
	struct port_info ports[SL_MAX_PORTS];
	unsigned nb_workers;
	bool steer;               /**< RSS by subscriber: stages own pipes by address */
	bool steer_v6;            /**< ... IPv6 ones by their /64 too */
	struct worker *workers[RTE_MAX_LCORE];
	struct rte_mempool *pool;
	unsigned pool_baseline;   /**< mbufs in use after ports started */
	uint64_t start_ns;
};

extern struct sl_app sl_app;

/** Register the /sluice/ telemetry commands. */
int telemetry_register(void);

/**
 * Close the gate: from now on every /sluice/ command answers -ESHUTDOWN.
 * Returns once no callback is running, so the caller may free what the
 * callbacks read.
 */
void telemetry_close(void);

/** Print every counter (the exit report). */
void report_counters(FILE *out);

#endif
