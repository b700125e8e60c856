/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MPTCP_PROXY_H
#define MPTCP_PROXY_H

/**
 * @file
 * lib/mptcp_proxy: transparent Multipath TCP (RFC 8684) termination.
 *
 * The public header of the library. It exports, for now, its foundations:
 * - mptcp_crypto.h: keys, tokens, IDSNs, the MP_JOIN and ADD_ADDR HMACs
 *   and the DSS checksum;
 * - mptcp_options.h: parsing and writing of every MPTCP option.
 * The relay, connection (meta) level, subflows, path manager, scheduler
 * and token table come next (issue 16).
 */

#include "mptcp_crypto.h"
#include "mptcp_options.h"

#endif /* MPTCP_PROXY_H */
