/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_APP_STAGE_AQM_H
#define SLUICE_APP_STAGE_AQM_H

/**
 * @file
 * The aqm stage module: lib/aqm's shaped FQ-CoDel subscriber pipes in the
 * datapath, section [aqm] (see config/aqm.ini), telemetry /sluice/aqm,
 * /sluice/aqm_pipe and /sluice/aqm_set, SIGHUP reload of [aqm] and the
 * subscriber CSV.
 */

#include "stages.h"

extern const struct stage_module sl_stage_aqm;

#endif
