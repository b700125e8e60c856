/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_TCPOPT_CTX_H
#define SLUICE_TCPOPT_CTX_H

/* Internal: the context behind the opaque struct tcpopt_ctx. */

#include <stdint.h>

#include <rte_common.h>

#include "tcpopt.h"

/* Entries of the burst SYN path's clamp table (pkt_meta.l3 0-7). */
#define TCPOPT_SYN_L3_N 8

struct tcpopt_ctx {
	uint16_t clamp[2];      /* [0] IPv4, [1] IPv6; 0 = no clamp */
	uint8_t malformed_drop; /* malformed action is drop */
	uint8_t has_policy;     /* some kind is not preserve */
	uint8_t syn_uniform;    /* clamp[0] == clamp[1]: the burst SYN path
				 * may use the IPv4 entries for both */
	/* The clamp again, for tcpopt_burst()'s SYN path, indexed by
	 * pkt_meta.l3 (PKT_L3_IPV4, PKT_L3_IPV6; the others never clamp).
	 * An MSS option (kind 2, length 4) whose value is above the clamp
	 * reads, as a big-endian word w, 0x02040000 + clamp < w <= 0x0204ffff,
	 * i.e. w - syn_lo < syn_range: */
	uint32_t syn_lo[TCPOPT_SYN_L3_N];     /* 0x02040000 + clamp + 1 */
	uint32_t syn_range[TCPOPT_SYN_L3_N];  /* 0xffff - clamp; 0: never */
	uint16_t syn_mss_be[TCPOPT_SYN_L3_N]; /* the clamp, network order */
	uint64_t syn_csum_k[TCPOPT_SYN_L3_N]; /* tcpopt_csum_k(syn_mss_be) */
	/* TCPOPT_CSUM_FOLD, read from here by the SYN loop: a multiply by a
	 * memory operand costs no register and no 10-byte movabs. */
	uint64_t csum_fold;
	uint8_t action[256];    /* enum tcpopt_action per kind */
	struct tcpopt_counters cnt __rte_cache_aligned;
} __rte_cache_aligned;

#endif /* SLUICE_TCPOPT_CTX_H */
