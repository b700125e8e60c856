/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The redirect table (mptcp_redirect.h): the subflows a worker passes on
 * to the worker that owns their MPTCP connection. Chained hashing over a
 * fixed array of entries: a bucket holds an entry's index + 1, entries
 * chain through next, free ones through next too. Sized at create (twice
 * as many buckets as entries, a power of two): nothing is allocated
 * afterwards, and one worker uses it, so nothing locks.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "mptcp_redirect.h"

enum rd_state { RD_FREE, RD_SYN, RD_EST, RD_FIN, RD_RST };

struct rd_entry {
	struct mptcp_redirect_key k;
	uint64_t seen_ns;  /* last segment */
	uint32_t next;     /* chain (index + 1; 0 ends it) */
	uint16_t owner;
	uint8_t state;     /* enum rd_state */
};

struct mptcp_redirect {
	uint32_t cap, count, mask, cursor;
	uint32_t free;     /* free list (index + 1) */
	uint64_t idle_ns;
	uint64_t rst_ns;   /* after the client's RST; 0: none */
	uint32_t *bucket;  /* mask + 1 */
	struct rd_entry e[];
};

static uint32_t
rd_hash(const struct mptcp_redirect_key *k)
{
	uint32_t w[10], h = 0x9747b28cu;

	memcpy(w, k, sizeof(w));
	for (unsigned i = 0; i < RTE_DIM(w); i++) {
		h ^= w[i];
		h *= 0x9e3779b1u;
		h ^= h >> 15;
	}
	return h;
}

static inline bool
rd_key_eq(const struct mptcp_redirect_key *a, const struct mptcp_redirect_key *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

static bool
rd_expired(const struct mptcp_redirect *rt, const struct rd_entry *e, uint64_t now)
{
	uint64_t life = e->state == RD_SYN ? MPTCP_REDIRECT_SYN_NS :
			e->state == RD_FIN ? MPTCP_REDIRECT_FIN_NS :
			e->state == RD_RST ? rt->rst_ns : rt->idle_ns;

	if (life == 0)
		return false;
	return now - e->seen_ns >= life;
}

struct mptcp_redirect *
mptcp_redirect_create(const struct mptcp_redirect_params *p)
{
	struct mptcp_redirect *rt;
	uint32_t nb;

	RTE_BUILD_BUG_ON(sizeof(struct mptcp_redirect_key) != 40);
	if (p == NULL || p->entries == 0 || p->entries > (1u << 24)) {
		rte_errno = EINVAL;
		return NULL;
	}
	nb = rte_align32pow2(2 * p->entries);
	rt = rte_zmalloc_socket(p->name, sizeof(*rt) + (size_t)p->entries * sizeof(rt->e[0]),
				RTE_CACHE_LINE_SIZE, p->socket_id);
	if (rt == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	rt->bucket = rte_zmalloc_socket(p->name, nb * sizeof(uint32_t),
					RTE_CACHE_LINE_SIZE, p->socket_id);
	if (rt->bucket == NULL) {
		rte_free(rt);
		rte_errno = ENOMEM;
		return NULL;
	}
	rt->cap = p->entries;
	rt->mask = nb - 1;
	rt->idle_ns = p->idle_ns;
	rt->rst_ns = p->rst_ns;
	for (uint32_t i = p->entries; i-- > 0;) {
		rt->e[i].next = rt->free;
		rt->free = i + 1;
	}
	return rt;
}

void
mptcp_redirect_free(struct mptcp_redirect *rt)
{
	if (rt == NULL)
		return;
	rte_free(rt->bucket);
	rte_free(rt);
}

/* The link that points at k's entry (a bucket or an entry's next), or
 * at the 0 that ends its chain. */
static uint32_t *
rd_find(struct mptcp_redirect *rt, const struct mptcp_redirect_key *k)
{
	uint32_t *link = &rt->bucket[rd_hash(k) & rt->mask];

	while (*link != 0 && !rd_key_eq(&rt->e[*link - 1].k, k))
		link = &rt->e[*link - 1].next;
	return link;
}

static void
rd_unlink(struct mptcp_redirect *rt, uint32_t *link)
{
	uint32_t i = *link;
	struct rd_entry *e = &rt->e[i - 1];

	*link = e->next;
	e->state = RD_FREE;
	e->next = rt->free;
	rt->free = i;
	rt->count--;
}

static void
rd_remove_entry(struct mptcp_redirect *rt, uint32_t i)
{
	uint32_t *link = rd_find(rt, &rt->e[i - 1].k);

	if (*link == i)
		rd_unlink(rt, link);
}

uint32_t
mptcp_redirect_expire(struct mptcp_redirect *rt, uint64_t now, uint32_t max)
{
	uint32_t n = 0;

	if (max > rt->cap)
		max = rt->cap;
	for (uint32_t s = 0; s < max && rt->count > 0; s++) {
		uint32_t i = rt->cursor;

		rt->cursor = i + 1 == rt->cap ? 0 : i + 1;
		if (rt->e[i].state != RD_FREE && rd_expired(rt, &rt->e[i], now)) {
			rd_remove_entry(rt, i + 1);
			n++;
		}
	}
	return n;
}

int
mptcp_redirect_add(struct mptcp_redirect *rt, const struct mptcp_redirect_key *k,
		   uint16_t owner, uint64_t now)
{
	uint32_t *link = rd_find(rt, k);
	struct rd_entry *e;
	uint32_t i;

	if (*link != 0) {
		/* A retransmitted SYN, or the 4-tuple of a closed subflow
		 * joining again: start over as a join. */
		e = &rt->e[*link - 1];
		e->owner = owner;
		e->state = RD_SYN;
		e->seen_ns = now;
		return 0;
	}
	if (rt->free == 0) {
		/* Full: make room from what has expired (once per add that
		 * finds the table full, bounded by its size). */
		(void)mptcp_redirect_expire(rt, now, rt->cap);
		if (rt->free == 0)
			return -ENOSPC;
		link = rd_find(rt, k);
	}
	i = rt->free;
	e = &rt->e[i - 1];
	rt->free = e->next;
	e->k = *k;
	e->owner = owner;
	e->state = RD_SYN;
	e->seen_ns = now;
	e->next = 0;
	*link = i;
	rt->count++;
	return 0;
}

int
mptcp_redirect_lookup(struct mptcp_redirect *rt, const struct mptcp_redirect_key *k,
		      uint8_t flags, uint64_t now)
{
	uint32_t *link;
	struct rd_entry *e;
	int owner;

	if (rt->count == 0)
		return -1;
	link = rd_find(rt, k);
	if (*link == 0)
		return -1;
	e = &rt->e[*link - 1];
	if (rd_expired(rt, e, now)) {
		rd_unlink(rt, link);
		return -1;
	}
	owner = e->owner;
	if (e->state == RD_RST)
		return owner; /* its life counts from the RST, whatever follows */
	e->seen_ns = now;
	if (flags & MPTCP_REDIRECT_RST) {
		/* What the client sent before its RST may still arrive: it
		 * goes to the owner too, which remembers the reset and
		 * answers it as the closed subflow (tcp_input_after_reset()),
		 * rather than finding no entry here and being bridged. */
		if (rt->rst_ns == 0)
			rd_unlink(rt, link);
		else
			e->state = RD_RST;
	} else if (flags & MPTCP_REDIRECT_FIN)
		e->state = RD_FIN;
	else if (!(flags & MPTCP_REDIRECT_SYN) && e->state == RD_SYN)
		e->state = RD_EST;
	return owner;
}

void
mptcp_redirect_remove(struct mptcp_redirect *rt, const struct mptcp_redirect_key *k)
{
	uint32_t *link;

	if (rt->count == 0)
		return;
	link = rd_find(rt, k);
	if (*link != 0)
		rd_unlink(rt, link);
}

uint32_t
mptcp_redirect_count(const struct mptcp_redirect *rt)
{
	return rt->count;
}

uint32_t
mptcp_redirect_capacity(const struct mptcp_redirect *rt)
{
	return rt->cap;
}
