/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The log types of app/log.h, registered before main() runs (a
 * constructor each), so --log-level=sluice.<component>:<level> given to
 * the EAL applies to them.
 */
#include "log.h"

#define SL_LOG_DEFINE(c) RTE_LOG_REGISTER(sl_logtype_##c, sluice.c, INFO);
SL_LOG_COMPONENTS(SL_LOG_DEFINE)
