/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_APP_LOG_H
#define SLUICE_APP_LOG_H

/*
 * sluice's log: one DPDK log type per component that logs, so an operator
 * sets levels the usual EAL way, per component or for all of them:
 *
 *   sluice ... --log-level=sluice.aqm:debug -- ...
 *   sluice ... --log-level='sluice.*:warning' -- ...
 *
 * Every type starts at INFO. Lines go where rte_log() sends them: stderr
 * before rte_eal_init(), then stdout and syslog (EAL's console stream).
 *
 * Only app/ logs. Libraries under lib/ keep no global state, and a log type
 * is one (registered at load time, process-wide); they report through
 * return codes, error strings the caller passes in and named counters, and
 * the app/ component that called them logs under its own type. Nothing on
 * the datapath logs: per-packet events are counters.
 *
 * One component, one type; the table below is the only list.
 */
#include <rte_log.h>

/* X(component): log type "sluice.<component>", variable sl_logtype_<component>. */
#define SL_LOG_COMPONENTS(X) \
	X(main)      /* start-up, ports, workers, exit */ \
	X(config)    /* reading and validating the configuration */ \
	X(control)   /* the control thread: reloads and run-time changes */ \
	X(telemetry) /* the /sluice/ telemetry commands */ \
	X(aqm)       /* shaping and FQ-CoDel: subscribers, pipes, reloads */ \
	X(tcpopt)    /* TCP option policy and MSS clamp */ \
	X(proxy)     /* the transparent TCP proxy */ \
	X(impair)    /* the lab link impairment */

#define SL_LOG_DECLARE(c) extern int sl_logtype_##c;
SL_LOG_COMPONENTS(SL_LOG_DECLARE)
#undef SL_LOG_DECLARE

/**
 * Log one line under component c (a name from SL_LOG_COMPONENTS) at level
 * lvl (ERR, WARNING, NOTICE, INFO, DEBUG). The newline is added here.
 */
#define SL_LOG(c, lvl, fmt, ...) \
	rte_log(RTE_LOG_##lvl, sl_logtype_##c, fmt "\n", ##__VA_ARGS__)

/** The same, with a va_list (for a component's own log helper). */
#define SL_VLOG(c, lvl, fmt, ap) \
	rte_vlog(RTE_LOG_##lvl, sl_logtype_##c, fmt, ap)

#endif
