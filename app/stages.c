/* SPDX-License-Identifier: BSD-3-Clause */
/* The stage modules sluice knows, in the order a packet meets them. */
#include <stddef.h>

#include "stages.h"

const struct stage_module *const sl_stage_modules[] = {
	NULL,
};
