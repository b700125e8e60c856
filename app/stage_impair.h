/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_APP_STAGE_IMPAIR_H
#define SLUICE_APP_STAGE_IMPAIR_H

/**
 * @file
 * The impair stage module: lib/impair's lab link per port pair and
 * direction. Sections [impair] (defaults for every direction),
 * [impair.pairN] (both directions of pair N) and [impair.pairN.up] /
 * [impair.pairN.down]; every key in config/impair.ini. Telemetry
 * /sluice/impair, one exit-report line per impaired direction.
 *
 * It runs last in the pipeline, after aqm: it stands for the link beyond
 * sluice (a radio hop, a long path), so what it delays, loses or reorders
 * is what the shaper already sent, exactly as on a real access link where
 * the bottleneck queue sits in front of the lossy medium. Placed before
 * the shaper it would instead feed aqm a pre-thinned, pre-jittered stream
 * and its delay would add queueing that CoDel sees and fights.
 */

#include "stages.h"

extern const struct stage_module sl_stage_impair;

#endif
