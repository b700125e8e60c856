/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_APP_STAGE_PROXY_H
#define SLUICE_APP_STAGE_PROXY_H

/**
 * @file
 * The proxy stage module: a transparent TCP-terminating proxy
 * (lib/mptcp_proxy on lib/tcp).
 * Section [proxy]; every key in config/proxy.ini. Telemetry /sluice/proxy,
 * exit-report lines "proxy ...".
 *
 * It runs after tcpopt (which sees, and may clamp, the client's SYN as it
 * arrived) and before aqm and impair, so the segments the proxy sends on
 * either leg are shaped and impaired like any other traffic.
 */

#include "stages.h"

extern const struct stage_module sl_stage_proxy;

/* SYN-ACKs with MP_CAPABLE the proxy sent itself (MPTCP termination),
 * all workers: they do not cross the tcpopt stage, which adds them to its
 * MPTCP health pair so that it stays true. */
uint64_t stage_proxy_mptcp_synacks(void);

#endif
