/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_APP_CONFIG_H
#define SLUICE_APP_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ini.h"

/** What to do with frames sluice cannot or will not process. */
enum sl_action {
	SL_ACTION_FORWARD = 0, /**< forward unchanged and count (default) */
	SL_ACTION_DROP,        /**< drop and count */
};

/** [sluice] rss: what the ports' receive-side scaling spreads by. */
enum sl_rss {
	SL_RSS_AUTO = 0,   /**< subscriber where every port can, else flow */
	SL_RSS_FLOW,       /**< the 5-tuple, symmetric */
	SL_RSS_SUBSCRIBER, /**< the subscriber's IPv4 address (app/port.c) */
};

struct sl_stage_conf; /* per-stage parsed sections, see stages.h */

/**
 * The whole configuration. Parsed and validated completely before any of
 * it is applied, so a bad file changes nothing.
 */
struct sl_config {
	char path[256];            /**< "" when running on the defaults */
	uint16_t burst;            /**< rx/tx burst size */
	uint32_t tx_drain_us;      /**< max time a packet waits in a tx buffer */
	uint32_t mbufs;            /**< mbufs per NUMA socket */
	uint32_t mbuf_cache;       /**< per-lcore mempool cache */
	uint16_t rx_desc;
	uint16_t tx_desc;
	uint32_t max_frame;        /**< largest frame accepted (bytes, with L2) */
	uint32_t drain_timeout_ms; /**< shutdown: how long queues may drain */
	uint32_t tx_retries;       /**< tx attempts before a packet is dropped */
	uint32_t tx_kick_us;       /**< net_af_packet: re-send what its TX ring holds; 0 off */
	bool stage_cycles;         /**< time every stage call (TSC) */
	enum sl_rss rss;           /**< what RSS spreads by, with 2+ workers */
	enum sl_action non_ip;     /**< non-IP frames (ARP, LLDP, ...) */
	enum sl_action malformed;  /**< frames with bad headers */
	struct sl_stage_conf *stages; /**< owned; see stages.h */
};

/** Fill the built-in defaults (a transparent bridge). */
void sl_config_defaults(struct sl_config *c);

/**
 * Load and validate a file into c (which must hold the defaults).
 * @param err one line "FILE:LINE: [section] key: reason".
 * @return 0, or -1 with err filled and c unchanged.
 */
int sl_config_load(struct sl_config *c, const char *path, char *err,
		   size_t errlen);

/**
 * Log, under sluice.config at DEBUG, what the configuration in force sets
 * (called once the EAL has applied --log-level).
 */
void sl_config_log(const struct sl_config *c);

/**
 * Print every key sluice knows, with its default, kind, range and doc, one
 * line each (sluice --config-keys); the reference files in config/ are checked against it.
 */
void sl_config_print_keys(FILE *out);

/** Free what sl_config_load allocated. */
void sl_config_free(struct sl_config *c);

/** Report a bad key: fills err with "FILE:LINE: [section] key: reason". */
void sl_config_err(char *err, size_t errlen, const struct ini_file *f,
		   const struct ini_entry *e, const char *reason);

#endif
