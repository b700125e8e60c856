/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_APP_STAGE_AQM_PRIV_H
#define SLUICE_APP_STAGE_AQM_PRIV_H

/*
 * What the three files of the aqm stage share:
 *   stage_aqm.c          the datapath (burst, poll, hand-offs) and boot;
 *   stage_aqm_config.c   [aqm]: the key table, parsing, cross-checks;
 *   stage_aqm_control.c  run-time changes (reload, telemetry), the
 *                        control side's mirror of the subscriber table,
 *                        counters and the exit report.
 */

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ring.h>
#include <rte_telemetry.h>

#include "aqm.h"
#include "pkt.h"
#include "aqm_subs.h"
#include "control.h"
#include "handoff.h"
#include "ini.h"
#include "log.h"
#include "stages.h"
#include "stage_aqm_autorate.h"
#include "worker.h"

#define AQM_SECTION "aqm"
#define AQM_BATCH 64             /* packets per enqueue/dequeue call */
#define AQM_POLL_BATCHES 4       /* dequeue calls per direction per poll */
#define AQM_CHANGE_WAIT_MS 2000  /* control side waits this long for workers */
#define AQM_MAX_PAIRS (SL_MAX_PORTS / 2)
/*
 * How far a shaper that fell behind (its lcore was preempted or stalled)
 * may catch up, as a burst at line rate. lib/aqm's own default (250 us)
 * assumes a dedicated core; on shared cores every stall longer than this
 * is lost link time. 4 ms keeps the long-term rate while bounding the
 * burst the real bottleneck sees to less than CoDel's 5 ms target.
 */
#define AQM_DEFAULT_MAX_LAG_NS 4000000
/* ACKs each worker can hold per direction with [aqm] ack_hold (one per
 * backlogged connection and hold time; when full, ACKs queue at once). */
#define AQM_ACK_HOLD_SLOTS 4096

/* ------------------------------------------------------------------ */
/* Configuration (stage_aqm_config.c).                                 */

/* fifo_limit: a time at the pipe's shaped rate, or a size in bytes. */
struct aqm_fifo_limit {
	uint64_t value;  /* ms when in_ms, else bytes */
	uint64_t in_ms;  /* 1: value is ms at the shaped rate (a whole word:
			  * the reload compares keys byte by byte) */
};

/*
 * The parsed [aqm] section: one field per key of the table in
 * stage_aqm_config.c (config/aqm.ini documents each), then what the
 * parse derives.
 */
struct aqm_conf {
	uint64_t ports;               /* bit k: pair k is shaped */
	int qdisc;                    /* enum aqm_qdisc */
	struct aqm_fifo_limit fifo_limit;
	uint64_t target_ns, interval_ns, ce_threshold_ns;
	bool ecn;
	uint16_t ecn_drop_count;      /* 0: off */
	uint32_t quantum, drop_batch;
	uint8_t ack_filter;           /* bits 1 << enum aqm_dir */
	uint64_t ack_hold_ns;         /* 0: off */
	uint32_t flows, limit;        /* the default pipe */
	uint32_t flow_seed;           /* 0: random per start and reload */
	uint64_t memory_limit;
	int default_policy;           /* enum aqm_default_policy */
	uint64_t rate_down, rate_up;  /* the default pipe, bit/s; 0: unshaped */
	uint8_t profile;              /* index of a link-layer profile */
	int16_t overhead;             /* profile's, unless the file says */
	uint16_t mpu;
	uint8_t framing;              /* enum aqm_framing */
	char subscribers[256];        /* as written; "" = none */
	uint32_t max_subs, max_v6_subs;
	uint32_t sub_flows, sub_limit;
	uint64_t sub_memory_limit;
	uint32_t handoff_ring, max_queued;
	uint64_t max_lag_ns;
	bool bypass, codel_rate_aware, blue;
	uint64_t blue_threshold_ns, blue_interval_ns;
	uint16_t blue_inc, blue_dec;
	uint16_t blue_min_queue;      /* packets; 0: any */
	uint8_t isolation;            /* enum aqm_isolation */
	uint8_t diffserv;             /* enum aqm_diffserv */
	bool wash;
	bool rwnd_clamp;              /* lib/rwnd on the workers */
	uint32_t rwnd_flows;          /* a power of two */
	uint64_t rwnd_headroom;       /* bytes */

	char path[256];              /* the config file, for reloads */
	char subs_path[512];         /* subscribers, resolved against the
				      * file's directory */
	char subs_note[512];         /* what a LibreQoS file held ("" native) */
	struct aqm_sub_entry *subs;  /* malloc'ed, nsubs entries */
	uint32_t nsubs;
	struct aqm_ar_conf ar;       /* passive RTT, autorate (stage_aqm_autorate.c) */
};

/*
 * Parse [aqm] of f into a new conf (*out; NULL when f has no [aqm]):
 * every key, cross-checks, and the subscriber CSV. Used at boot and by
 * reloads. Marks [aqm] entries used; with strict, an unknown key in [aqm]
 * is an error.
 */
int aqm_conf_parse(struct ini_file *f, bool strict, struct aqm_conf **out,
		   char *err, size_t errlen);
void aqm_conf_free(void *p);
/*
 * Whether a reload's conf nc changes only keys a reload may change. If
 * not, err says which key (its line in f, or that it was removed).
 */
bool aqm_conf_reloadable(const struct aqm_conf *nc, const struct aqm_conf *running,
			 struct ini_file *f, char *err, size_t errlen);
/* The [aqm] table as reference text (sluice --config-keys). */
void aqm_print_keys(FILE *out);
/* The stage_module hooks. */
int aqm_parse(struct ini_file *f, void **conf, char *err, size_t errlen);
int aqm_owns_section(const char *s);
/* lib/aqm parameters from a conf. */
void aqm_conf_shaper(const struct aqm_conf *c, uint64_t rate,
		     struct aqm_shaper_params *sp);
void aqm_conf_pipe(const struct aqm_conf *c, bool subscriber,
		   struct aqm_pipe_params *p);

/* ------------------------------------------------------------------ */
/* One worker's instance (stage_aqm.c).                                */

/* Counters of one direction on one worker; only that worker writes. */
struct aqm_dir_stats {
	uint64_t passed;        /* unshaped: unknown address, pass policy */
	uint64_t malformed;     /* flagged by the parser: never queued */
	uint64_t handoffs;      /* sent to the owning worker's ring */
	uint64_t handoff_in;    /* received from other workers */
	uint64_t handoff_drops; /* owner's ring full: freed, counted */
	uint64_t handoff_stale; /* handed off for a pipe removed meanwhile: sent on unshaped */
	/* Filled in from lib/aqm when summed: removed pipes' packets
	 * (aqm_sched_removed_stats()). */
	uint64_t removed_pipes, removed_moved, removed_late, removed_sent;
	uint64_t host_shared;   /* filled in from lib/aqm: aqm_sched_host_shared() */
	struct aqm_way_stats ways; /* ... and aqm_sched_way_stats() */
	/* Filled in from lib/aqm when summed: wash, and the tins of mode
	 * [aqm] diffserv (ntins = 0 for besteffort). */
	uint64_t washed, wash_shared;
	unsigned ntins;
	struct aqm_tin_stats tins[AQM_TINS_MAX];
};

struct rwnd;

struct aqm_worker {
	unsigned index;
	unsigned nb_workers;
	uint64_t pairs;                  /* bit k: pair k is shaped */
	bool bypass;                     /* [aqm] bypass: idle pipes send at once */
	struct aqm_subs *subs;
	struct rte_ring *mailbox;        /* control changes (app/control.h) */
	struct handoff_port hp;          /* packets for pipes others own */
	const struct aqm_conf *conf;     /* boot conf (fixed keys) */
	struct aqm_dir_stats st[2] __rte_cache_aligned;
	uint64_t changes_applied;
	uint64_t change_errors;
	struct aqm_ar *ar;               /* passive RTT + autorate, or NULL */
	struct prtt_fast prtt_pf;        /* its slots (NULL: none), to prefetch */
	uint32_t *del_tags;              /* max_subs: a change's removed pipes */
	/* Steered by subscriber (stage_env.steer): pipe id -> its worker,
	 * and the incarnation (aqm_subs_pipe_tag()) it was set for; max_subs
	 * + 1 each. NULL: handoff_owner(). */
	uint8_t *owner;
	uint32_t *owner_tag;
	bool steer_v6;                   /* IPv6 pipes by their /64 (stage_env) */
	struct rwnd *rw;                 /* [aqm] rwnd_clamp, or NULL */
	uint64_t rw_extra[2];            /* ACK hold by the ACK's direction, ns */
	uint64_t rw_shared;              /* clamps not written: shared mbuf */
	uint32_t rw_headroom;            /* [aqm] rwnd_headroom */
};

/* ------------------------------------------------------------------ */
/* Receive-window clamp (stage_aqm_rwnd.c).                            */

/* w->rw from [aqm] rwnd_clamp (NULL when off). */
int aqm_rwnd_create(struct aqm_worker *w, const struct aqm_conf *c, int socket);
void aqm_rwnd_free(struct aqm_worker *w);
/* Account a batch going dir, and clamp the ACKs among it; before the queue. */
void aqm_rwnd_burst(struct aqm_worker *w, enum aqm_dir dir, struct rte_mbuf **pkts,
		    uint16_t n, uint64_t now_ns);
/* A batch that left dir's queue: a SYN or SYN-ACK among it starts its leg
 * now, not when it arrived. */
void aqm_rwnd_departed(struct aqm_worker *w, enum aqm_dir dir, struct rte_mbuf **pkts,
		       uint16_t n, uint64_t now_ns);
/* A "rwnd" dict in d (nothing if no worker clamps). */
int aqm_rwnd_telemetry(void *const *ctxs, unsigned nb_workers, struct rte_tel_data *d);
/* An "aqm_rwnd" line (nothing if no worker clamps). */
void aqm_rwnd_report(void *const *ctxs, unsigned nb_workers, FILE *out);

/* ------------------------------------------------------------------ */
/* TCP segments, for the stages' TCP readers (passive RTT, window clamp). */

/*
 * A TCP segment whose header the parser read: the TCP protocol, PKT_F_L4
 * (not a later fragment) and no error, tested as one 8-byte word from
 * flags on (a template of each field, so any byte order folds to
 * constants).
 */
#define AQM_TCP_WORD_OFF offsetof(struct pkt_meta, flags)
_Static_assert(offsetof(struct pkt_meta, l4_proto) < AQM_TCP_WORD_OFF + 8 &&
	       offsetof(struct pkt_meta, err) < AQM_TCP_WORD_OFF + 8,
	       "aqm_is_tcp() reads flags, l4_proto and err as one word");

static inline bool
aqm_is_tcp(const struct pkt_meta *meta)
{
	struct pkt_meta mask = { .flags = PKT_F_L4, .l4_proto = 0xff, .err = 0xff };
	struct pkt_meta want = { .flags = PKT_F_L4, .l4_proto = IPPROTO_TCP,
				 .err = PKT_ERR_NONE };
	uint64_t w, m, v;

	memcpy(&w, (const uint8_t *)meta + AQM_TCP_WORD_OFF, 8);
	memcpy(&m, (const uint8_t *)&mask + AQM_TCP_WORD_OFF, 8);
	memcpy(&v, (const uint8_t *)&want + AQM_TCP_WORD_OFF, 8);
	return (w & m) == v;
}

/* The TCP header of a segment aqm_is_tcp() passed. */
static inline uint8_t *
aqm_tcp_hdr(struct rte_mbuf *m, const struct pkt_meta *meta)
{
	return rte_pktmbuf_mtod_offset(m, uint8_t *, meta->l4_off);
}

/* Its payload bytes: to the end of the IP datagram (not the padding). */
static inline uint32_t
aqm_tcp_payload(const struct pkt_meta *meta)
{
	uint32_t end = (uint32_t)meta->l3_off + meta->l3_len;

	return end > meta->payload_off ? end - meta->payload_off : 0;
}

/*
 * The worker that owns pipe id. With the ports steering by subscriber,
 * the one whose rx queue the NIC gives the subscriber's IPv4 address
 * (aqm_owner_fill()); else handoff_owner() of the id.
 */
static inline unsigned
aqm_pipe_owner(const uint8_t *owner, uint32_t id, unsigned nb_workers)
{
	return owner != NULL ? owner[id] : handoff_owner(id, nb_workers);
}

/* Owners of the pipes a change (or the boot table) just made: a new
 * pipe's from its first entry; a pipe that lives on keeps its own. */
void aqm_owner_fill(struct aqm_worker *w, const struct aqm_sub_entry *e, uint32_t n);

/* ------------------------------------------------------------------ */
/* Control side (stage_aqm_control.c).                                 */

void aqm_log(uint32_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Boot, worker 0 first: the running conf, the mirror, the mailboxes. */
int aqm_ctl_boot(const struct aqm_conf *c, unsigned nb_workers);
/* The conf workers read: boot's fixed keys and the current rates. */
const struct aqm_conf *aqm_ctl_running(void);
/* Worker's mailbox, on its socket (NULL with rte_errno). */
struct rte_ring *aqm_ctl_mailbox(unsigned worker, int socket);
/* Worker w is built; after the last one, telemetry and the boot line. */
void aqm_ctl_worker_ready(struct aqm_worker *w, const struct aqm_conf *c,
			  const struct stage_env *env);
/* On a worker, from ctl_mailbox_take(): apply one change, whole or not. */
int aqm_ctl_apply(void *ctx, struct ctl_change *cc, char *err, size_t errlen);
void aqm_module_reload(void);
/* "198.18.0.2/32", "default" or "pipe N" for a pipe id (control side). */
void aqm_ctl_pipe_name(uint32_t id, char *buf, size_t len);
int aqm_telemetry(void *const *ctxs, unsigned nb_workers, const char *params,
		  struct rte_tel_data *d);
void aqm_report(void *const *ctxs, unsigned nb_workers, FILE *out);

#endif
