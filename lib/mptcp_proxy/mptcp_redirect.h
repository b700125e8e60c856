/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MPTCP_REDIRECT_H
#define MPTCP_REDIRECT_H

/**
 * @file
 * Which worker owns an MPTCP subflow, and the per-worker table of the
 * subflows this worker passes on to their owners (issue 16, item 7).
 *
 * A connection's token names the worker that owns it in its low
 * worker_bits bits (mptcp_crypto.h), so the worker that RSS hands an
 * MP_JOIN SYN reads the owner from the token alone. The later segments of
 * that subflow carry no token: the worker remembers their 4-tuple here
 * and sends them to the same owner. One table per worker, used by that
 * worker only: no lock, no shared state, no allocation after create.
 *
 * Entries are bounded (a full table refuses a new subflow) and expire:
 *   - a subflow seen only as SYNs (not established yet) after
 *     MPTCP_REDIRECT_SYN_NS without a segment;
 *   - an established one after idle_ns without a segment;
 *   - one whose client sent a FIN, MPTCP_REDIRECT_FIN_NS after its last
 *     segment;
 *   - one whose client sent a RST, rst_ns after that RST (later segments
 *     do not refresh it), or at once when rst_ns is 0.
 * Expired entries go when looked up, when a new entry needs the room, and
 * by mptcp_redirect_expire() (a few at a time, from the poll loop).
 */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** How long a subflow seen only as SYNs is remembered after its last one. */
#define MPTCP_REDIRECT_SYN_NS (30ull * 1000000000ull)
/** How long a subflow whose client sent a FIN is remembered after its last segment. */
#define MPTCP_REDIRECT_FIN_NS (60ull * 1000000000ull)

/** The worker a token names: its low worker_bits bits (0 with none). */
static inline unsigned
mptcp_token_owner(uint32_t token, unsigned worker_bits)
{
	return worker_bits == 0 ? 0u : token & ((1u << worker_bits) - 1);
}

/** A subflow as the client sends it: addresses in network byte order
 *  (IPv4 in the first 4 bytes, the rest zero), ports in host order. */
struct mptcp_redirect_key {
	uint8_t family;   /**< 4 or 6 */
	uint8_t pad[3];   /**< zero */
	uint16_t sport, dport;
	uint8_t src[16], dst[16];
};

/** TCP flags that move an entry on (the TCP header's byte 13). */
#define MPTCP_REDIRECT_FIN 0x01
#define MPTCP_REDIRECT_SYN 0x02
#define MPTCP_REDIRECT_RST 0x04

/** The table of one worker (opaque). */
struct mptcp_redirect;

/** What mptcp_redirect_create() builds. */
struct mptcp_redirect_params {
	const char *name;   /**< unique per process */
	int socket_id;
	uint32_t entries;   /**< subflows remembered at most, >= 1 */
	uint64_t idle_ns;   /**< an established subflow's idle expiry; 0: never */
	uint64_t rst_ns;    /**< how long a subflow whose client sent a RST
			     *   still goes to its owner after it (what was
			     *   in flight behind the RST meets the owner's
			     *   memory of the reset); 0: forgotten at once */
};

/**
 * Build a table. Allocates (boot only).
 * @return the table, or NULL with rte_errno set.
 */
struct mptcp_redirect *mptcp_redirect_create(const struct mptcp_redirect_params *p);

/** Free a table. NULL is fine. */
void mptcp_redirect_free(struct mptcp_redirect *rt);

/**
 * Remember that the subflow k goes to worker owner (its SYN was just
 * seen), or refresh it if known (a retransmitted SYN; owner updated).
 * Makes room from expired entries if the table is full.
 * @return 0, or -ENOSPC: full of live entries (nothing changed).
 */
int mptcp_redirect_add(struct mptcp_redirect *rt,
		       const struct mptcp_redirect_key *k, uint16_t owner,
		       uint64_t now_ns);

/**
 * The owner of the subflow k, for a segment with TCP flags `flags` seen
 * at now_ns, or -1 if k is not in the table (or expired: then removed).
 * A hit refreshes the entry; a segment without SYN establishes it, a FIN
 * shortens its life to MPTCP_REDIRECT_FIN_NS, a RST leaves it rst_ns to
 * live, or removes it when rst_ns is 0 (the owner is still returned:
 * the RST goes there). After a RST, nothing but a new join (an add)
 * changes the entry.
 */
int mptcp_redirect_lookup(struct mptcp_redirect *rt,
			  const struct mptcp_redirect_key *k, uint8_t flags,
			  uint64_t now_ns);

/** Forget the subflow k (if there). */
void mptcp_redirect_remove(struct mptcp_redirect *rt,
			   const struct mptcp_redirect_key *k);

/**
 * Look at up to max entries (round robin over the table) and remove
 * those expired at now_ns. @return how many were removed.
 */
uint32_t mptcp_redirect_expire(struct mptcp_redirect *rt, uint64_t now_ns,
			       uint32_t max);

/** Entries in the table now (expired ones not yet removed included). */
uint32_t mptcp_redirect_count(const struct mptcp_redirect *rt);

/** Entries the table holds at most. */
uint32_t mptcp_redirect_capacity(const struct mptcp_redirect *rt);

#ifdef __cplusplus
}
#endif
#endif /* MPTCP_REDIRECT_H */
