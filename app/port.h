/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_APP_PORT_H
#define SLUICE_APP_PORT_H

#include <stddef.h>
#include <stdint.h>

#include <rte_mempool.h>

#include "config.h"

/** What port_setup decided, for the log and the tests. */
struct port_info {
	uint16_t nb_rxq;
	uint16_t nb_txq;
	uint16_t mtu;
	bool rss;
	bool scatter;
	bool tx_multiseg;  /**< sends chained mbufs (RTE_ETH_TX_OFFLOAD_MULTI_SEGS) */
	char driver[32];
};

/**
 * Configure and start a port with nb_rxq rx queues (capped at what the
 * device has) and exactly nb_txq tx queues (one per worker).
 * RSS, when more than one rx queue is used, uses a symmetric key so both
 * directions of a flow land on the same queue index on both ports.
 * @return 0, or -1 with err filled.
 */
int port_setup(uint16_t port, uint16_t nb_rxq, uint16_t nb_txq,
	       struct rte_mempool *pool, const struct sl_config *cfg,
	       struct port_info *info, char *err, size_t errlen);

#endif
