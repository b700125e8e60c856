/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_TEST_TCPOPT_EAL_POOL_H
#define SLUICE_TEST_TCPOPT_EAL_POOL_H

/*
 * Test helper for the tcpopt tests that need real mbufs: an EAL without
 * hugepages or PCI, private to the process (file prefix = name), and a
 * pool of n mbufs with sluice's metadata area. NULL when the EAL cannot
 * start; those tests then skip themselves.
 */

#include <stdio.h>

#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "../../test_eal.h"
#include "pkt.h"

static inline struct rte_mempool *
test_eal_pool(const char *name, unsigned int n)
{
	if (test_eal_start(name, 64) < 0)
		return NULL;
	return rte_pktmbuf_pool_create(name, n, 0, PKT_META_PRIV_SIZE,
				       RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
}

static inline void
test_eal_release(struct rte_mempool *pool)
{
	if (pool != NULL) {
		rte_mempool_free(pool);
		rte_eal_cleanup();
	}
}

#endif /* SLUICE_TEST_TCPOPT_EAL_POOL_H */
