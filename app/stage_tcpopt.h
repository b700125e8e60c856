/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_APP_STAGE_TCPOPT_H
#define SLUICE_APP_STAGE_TCPOPT_H

/**
 * @file
 * The tcpopt stage: lib/tcpopt on all pass-through TCP traffic.
 *
 * Configured by the [tcpopt] section (its presence turns the stage on):
 *
 *     [tcpopt]
 *     mss_clamp = 1400          ; or mtu = 1500 (not both); 0 = no clamp
 *     malformed = forward       ; or drop
 *     option.mptcp = preserve   ; option.<name|0-255> = preserve|strip|drop
 *
 *     [tcpopt.pair1]            ; per port pair: mss_clamp or mtu
 *     mtu = 1400
 *
 * Each worker holds one tcpopt context per port pair, so counters (and the
 * MPTCP health pair) are available per pair. Telemetry: /sluice/tcpopt,
 * optional parameter: a pair index.
 */

#include "stages.h"

/** The module; listed in sl_stage_modules[] (app/stages.c). */
extern const struct stage_module sl_stage_tcpopt;

#endif /* SLUICE_APP_STAGE_TCPOPT_H */
