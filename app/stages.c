/* SPDX-License-Identifier: BSD-3-Clause */
/* The stage modules sluice knows, in the order a packet meets them. */
#include <stddef.h>

#include "stages.h"
#include "stage_tcpopt.h"
#include "stage_proxy.h"
#include "stage_aqm.h"
#include "stage_impair.h"

const struct stage_module *const sl_stage_modules[] = {
	&sl_stage_tcpopt,
	&sl_stage_proxy,
	&sl_stage_aqm,
	&sl_stage_impair, /* last: the link beyond the shaper */
	NULL,
};
