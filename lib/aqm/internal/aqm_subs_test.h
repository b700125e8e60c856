/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_AQM_SUBS_TEST_H
#define SLUICE_AQM_SUBS_TEST_H

/*
 * Entry points of the subscriber table that only tests call: not part of
 * lib/aqm's API. The app adds subscribers with aqm_subs_apply(), counts
 * them in its own mirror of the table, and queues a packet by
 * aqm_subs_lookup() then aqm_sched_enqueue_burst() on the worker that
 * owns the pipe. A test that includes this (through aqm_internal_inc)
 * says so in its meson.build.
 */

#include <stdint.h>

#include <rte_mbuf.h>

#include "aqm_subs.h"

/**
 * Add a subscriber, or, if the exact prefix exists, change its rates and
 * profile in place (queued packets are kept, in order). A failed add
 * changes nothing (its pipes are given back). aqm_subs_apply() on one
 * entry, with its pipe id.
 * @return the subscriber's pipe id (>= 1), or -EINVAL / -ENOSPC.
 */
int aqm_subs_add(struct aqm_subs *s, const struct aqm_sub_entry *e);

/**
 * Classify and enqueue a burst on this table's own schedulers.
 * Packets that pass unshaped stay in pkts, compacted in order; the others
 * are consumed (queued or dropped+counted).
 * @return number of packets left in pkts.
 */
uint16_t aqm_subs_enqueue_burst(struct aqm_subs *s, enum aqm_dir dir,
				struct rte_mbuf **pkts, uint16_t n,
				uint64_t now_ns);

/** Subscribers added so far (not counting the default pipe). */
uint32_t aqm_subs_count(const struct aqm_subs *s);

#endif
