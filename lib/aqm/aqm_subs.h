/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_AQM_SUBS_H
#define SLUICE_AQM_SUBS_H

/**
 * @file
 * Subscriber pipes: a per-worker table that maps an IPv4/IPv6 address or
 * prefix (rte_lpm / rte_lpm6) to a subscriber, whose downstream and upstream
 * traffic each go through their own pipe (struct aqm_sched, one per
 * direction; subscriber i owns pipe i in both).
 *
 * Downstream packets (internet -> subscriber) are classified by destination
 * address, upstream ones by source. Unknown addresses go to the default
 * pipe (pipe 0) or pass unshaped, as configured.
 *
 * Adding a subscriber or changing its rates never touches queued packets;
 * removing one (aqm_subs_update()) sends what its pipes hold on at once,
 * unshaped, and touches no other pipe.
 */

#include <stdint.h>

#include <rte_mbuf.h>

#include "aqm.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Direction of traffic relative to the subscriber. */
enum aqm_dir {
	AQM_DIR_DOWN = 0, /**< toward the subscriber: match the destination */
	AQM_DIR_UP = 1,   /**< from the subscriber: match the source */
};

/** What happens to traffic of addresses in no subscriber's prefix. */
enum aqm_default_policy {
	AQM_DEFAULT_PASS = 0, /**< forward unshaped */
	AQM_DEFAULT_PIPE,     /**< shape through the default pipes (pipe 0) */
};

/** One subscriber, as read from the CSV or given by an operator. */
struct aqm_sub_entry {
	uint8_t family;        /**< 4 or 6 */
	uint8_t depth;         /**< prefix length */
	uint8_t addr[16];      /**< network byte order; IPv4 in the first 4 */
	uint64_t down_bps;     /**< downstream rate */
	uint64_t up_bps;       /**< upstream rate */
	bool has_profile;      /**< overhead/mpu/framing given */
	struct aqm_shaper_params profile; /**< rate_bps unused */
	bool has_isolation;    /**< isolation given (else the template's) */
	uint8_t isolation;     /**< enum aqm_isolation of both pipes */
	/*
	 * Autorate overrides (the app's autorate, lib/autorate): carried for
	 * the caller, which looks the pipe up with aqm_subs_find(); the
	 * table itself ignores them.
	 */
	bool has_autorate;          /**< autorate given (else [aqm] autorate) */
	uint8_t autorate;           /**< directions: bits 1 << enum aqm_dir */
	uint64_t ar_floor_bps[2];   /**< by enum aqm_dir; 0: [aqm]'s floor */
	uint64_t ar_ceiling_bps[2]; /**< by enum aqm_dir; 0: [aqm]'s ceiling */
	/**
	 * 0: the prefix has pipes of its own. Otherwise every prefix of the
	 * same group shares one pair of pipes (a LibreQoS circuit: its
	 * devices' addresses), made for the first of them; give every
	 * entry of a group the same rates (the last one applied wins).
	 */
	uint64_t group;
	uint32_t line;         /**< source line, for messages */
};

/** Subscriber table parameters. */
struct aqm_subs_params {
	const char *name;            /**< unique per process (LPM names) */
	int socket_id;
	uint32_t max_subs;           /**< subscribers this worker can hold */
	uint32_t max_v6_subs;        /**< of which IPv6 prefixes (sizes lpm6) */
	struct aqm_pipe_params pipe; /**< template of subscriber pipes */
	enum aqm_default_policy default_policy;
	struct aqm_pipe_params default_pipe; /**< used when policy is PIPE */
	uint64_t default_up_bps;     /**< upstream rate of the default pipe */
	/** Directions whose pipes (default and subscribers') filter ACKs:
	 *  bits 1 << enum aqm_dir (0: none). Overrides the templates'
	 *  fq.ack_filter. */
	uint8_t ack_filter_dirs;
	/** name/socket/max_* are filled in; sched.ack_hold_ns applies only
	 *  to the directions in ack_filter_dirs. */
	struct aqm_sched_params sched;
};

/** Fill p with defaults: 1024 subscribers of 32 flows each, pass unknown. */
void aqm_subs_params_default(struct aqm_subs_params *p);

/**
 * Create the table, both schedulers and the default pipes (boot time).
 * @return the table, or NULL with rte_errno set (EINVAL, ENOMEM, EEXIST).
 */
struct aqm_subs *aqm_subs_create(const struct aqm_subs_params *p);

/** Free the table, its schedulers and all held packets. NULL is fine. */
void aqm_subs_free(struct aqm_subs *s);

/**
 * Apply a whole list (a reload), all or nothing: if an entry is invalid or
 * a new prefix does not fit (max_subs, max_v6_subs, or room in the LPM),
 * nothing changes: no subscriber, pipe or rate. New prefixes get pipe ids
 * in list order; a prefix listed twice takes its last line's rates; a
 * prefix of a group that has pipes joins them (max_subs counts prefixes).
 * @param err  receives "line N: reason" (or "entry N: ..." for entries
 *             with no line) on failure (may be NULL).
 * @return number applied, or a negative errno (-EINVAL, -ENOSPC, -EPERM).
 */
int aqm_subs_apply(struct aqm_subs *s, const struct aqm_sub_entry *e,
		   uint32_t n, char *err, size_t errlen);

/**
 * Change the table at run time, all or nothing: remove the ndel prefixes
 * of del (each must exist), then apply the n entries of e as
 * aqm_subs_apply() does. A pipe id whose last prefix is removed (a
 * subscriber, or the last device of a group) has its two pipes removed:
 * what they hold, queued packets and held ACKs, leaves at once, unshaped,
 * each flow's in order, before anything else the schedulers send
 * (aqm_sched_pipe_remove()); the subscriber's later packets are
 * classified like any unknown address (default pipe or pass). The id
 * joins a FIFO of free ids, which new pipes take, oldest first, before
 * fresh ones, and its incarnation (aqm_subs_pipe_tag()) changes. Packets
 * queued in other pipes are not touched.
 * @param err  receives "line N: reason" (or "entry N: ..." / "removal N:
 *             ..." for entries with no line) on failure (may be NULL).
 * @return n, or a negative errno (-EINVAL, -ENOSPC, -EPERM, -ENOENT for a
 *         removal of an unknown prefix).
 */
int aqm_subs_update(struct aqm_subs *s, const struct aqm_sub_entry *e,
		    uint32_t n, const struct aqm_sub_entry *del, uint32_t ndel,
		    char *err, size_t errlen);

/** aqm_subs_update() with removals only. */
int aqm_subs_remove(struct aqm_subs *s, const struct aqm_sub_entry *del,
		    uint32_t n, char *err, size_t errlen);

/**
 * A pipe id with its incarnation (bits 24..31), which changes each time
 * the id is freed: for a packet handed to another worker, so that the
 * receiver can tell a pipe removed (and perhaps reused) meanwhile.
 */
uint32_t aqm_subs_pipe_tag(const struct aqm_subs *s, uint32_t id);

/**
 * The pipe id of a tag from aqm_subs_pipe_tag(), or -ENOENT if that
 * incarnation of the id is gone.
 */
int aqm_subs_pipe_of_tag(const struct aqm_subs *s, uint32_t tag);

/** Subscriber pipe ids in use (pipe pairs; the default pipe not counted). */
uint32_t aqm_subs_pipes(const struct aqm_subs *s);

/**
 * Pipe id of the subscriber with e's exact prefix, or 0 if there is none.
 * An exact-match hash lookup: for callers that keep per-pipe state of
 * their own from the entries they applied.
 */
uint32_t aqm_subs_find(const struct aqm_subs *s, const struct aqm_sub_entry *e);

/**
 * Read a subscriber CSV: "prefix,down,up[,profile[,isolation[,autorate
 * [,floor_down[,floor_up[,ceiling_down[,ceiling_up]]]]]]]" per line (an
 * empty field: the [aqm] default), '#' comments,
 * blank lines and an optional header line starting with "prefix".
 * Rates use aqm_parse_rate(); profile names aqm_shaper_profile(). A line
 * over 1023 bytes or with a NUL byte is an error.
 * @param entries out: malloc'ed array, free() it.
 * @param err     receives "FILE:LINE: reason" on failure.
 * @return number of entries, or a negative errno.
 */
int aqm_subs_csv_load(const char *path, struct aqm_sub_entry **entries,
		      char *err, size_t errlen);

/** Columns of ShapedDevices.csv sluice reads but cannot honour. */
#define AQM_LQOS_UNHONOURED 4

/** What a LibreQoS ShapedDevices.csv held, for the load-time report. */
struct aqm_lqos_report {
	bool libreqos;            /**< the file was in LibreQoS's format */
	uint32_t rows;            /**< device rows */
	uint32_t circuits;        /**< distinct Circuit IDs: pipe pairs */
	uint32_t prefixes;        /**< entries */
	uint32_t no_address_rows; /**< rows with neither IPv4 nor IPv6 */
	uint32_t rate_mismatch_rows; /**< Max Mbps unlike their circuit's first row */
	uint32_t unknown_columns; /**< columns of other names that held values */
	/** Rows that set each column sluice cannot honour (Download/Upload
	 *  Min Mbps above 0, Parent Node, MAC), and its name. */
	uint32_t unhonoured_rows[AQM_LQOS_UNHONOURED];
	const char *unhonoured_names[AQM_LQOS_UNHONOURED];
};

/**
 * Read a subscriber list in either format: LibreQoS's ShapedDevices.csv
 * when its first line that is not blank or a '#' comment starts with
 * "Circuit ID" (aqm_subs_lqos_parse()), else sluice's own CSV
 * (aqm_subs_csv_load()). rep says which, and what the LibreQoS file held.
 * @return number of entries, or a negative errno with err "FILE:LINE: reason".
 */
int aqm_subs_load(const char *path, struct aqm_sub_entry **entries,
		  struct aqm_lqos_report *rep, char *err, size_t errlen);

/**
 * Parse a LibreQoS ShapedDevices.csv held in buf (name for messages):
 * a header naming the columns (Circuit ID, IPv4, IPv6, Download Max Mbps
 * and Upload Max Mbps are needed; others are reported or ignored), then
 * one device per row. Each address or prefix of the quoted IPv4 and IPv6
 * lists becomes an entry with the Max Mbps rates (10^6 bit/s per Mbps,
 * no overhead factor) of its circuit's first row, grouped by Circuit ID.
 * Any bad row, or an address in two rows, refuses the whole file.
 * @param entries out: malloc'ed array, free() it.
 * @return number of entries, or a negative errno.
 */
int aqm_subs_lqos_parse(const char *buf, size_t len, const char *name,
			struct aqm_sub_entry **entries,
			struct aqm_lqos_report *rep, char *err, size_t errlen);

/** Whether line is a ShapedDevices.csv header (starts with "Circuit ID"). */
int aqm_subs_lqos_is_header(const char *line);

/** One line for the log: the counts, and every column not honoured. */
void aqm_lqos_report_format(const struct aqm_lqos_report *r, char *buf, size_t len);

/**
 * Parse one CSV line; used by aqm_subs_csv_load() and /sluice/aqm_set.
 * why always receives a string: the reason on -EINVAL, a note on 1, ""
 * on 0.
 * @return 0, 1 if the line is blank/comment/header, or -EINVAL.
 */
int aqm_subs_csv_parse_line(const char *line, struct aqm_sub_entry *e,
			    char *why, size_t whylen);

/**
 * Pipe id of a parsed packet in direction dir: its subscriber's, the default
 * pipe (0), or -ENOENT when it passes unshaped.
 */
int aqm_subs_lookup(const struct aqm_subs *s, enum aqm_dir dir,
		    struct rte_mbuf *m);

/** Most packets one aqm_subs_lookup_burst() call takes. */
#define AQM_SUBS_LOOKUP_BURST 64

/**
 * aqm_subs_lookup() for n parsed packets (n <= AQM_SUBS_LOOKUP_BURST), as
 * the table answers: hop[i] = the pipe id of pkts[i]'s subscriber, or 0
 * when it has none (then it takes the default pipe, whose id is 0, or
 * passes unshaped: aqm_subs_default_pass()). The IPv4 addresses go to
 * the table in one bulk call, which writes hop[] directly and costs a
 * fraction of n single lookups.
 */
void aqm_subs_lookup_burst(const struct aqm_subs *s, enum aqm_dir dir,
			   struct rte_mbuf *const *pkts, uint16_t n,
			   uint64_t *hop);

/** Whether a packet of no subscriber passes unshaped (else: pipe 0). */
bool aqm_subs_default_pass(const struct aqm_subs *s);

/** Dequeue what the shapers of direction dir allow; see aqm_sched_dequeue_burst(). */
uint16_t aqm_subs_dequeue_burst(struct aqm_subs *s, enum aqm_dir dir,
				struct rte_mbuf **pkts, uint16_t max,
				uint64_t now_ns);

/** Shutdown drain of direction dir; see aqm_sched_flush_burst(). */
uint16_t aqm_subs_flush_burst(struct aqm_subs *s, enum aqm_dir dir,
			      struct rte_mbuf **pkts, uint16_t max);

/** Packets held in both directions. */
uint32_t aqm_subs_pending(const struct aqm_subs *s);


/** The scheduler of one direction, for counters (aqm_sched_pipe_stats()). */
struct aqm_sched *aqm_subs_sched(struct aqm_subs *s, enum aqm_dir dir);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_AQM_SUBS_H */
