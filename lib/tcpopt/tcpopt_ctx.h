/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_TCPOPT_CTX_H
#define SLUICE_TCPOPT_CTX_H

/* Internal: the context behind the opaque struct tcpopt_ctx. */

#include <stdint.h>

#include <rte_common.h>

#include "tcpopt.h"

struct tcpopt_ctx {
	uint16_t clamp[2];      /* [0] IPv4, [1] IPv6; 0 = no clamp */
	uint8_t malformed_drop; /* malformed action is drop */
	uint8_t has_policy;     /* some kind is not preserve */
	uint8_t action[256];    /* enum tcpopt_action per kind */
	struct tcpopt_counters cnt __rte_cache_aligned;
} __rte_cache_aligned;

#endif /* SLUICE_TCPOPT_CTX_H */
