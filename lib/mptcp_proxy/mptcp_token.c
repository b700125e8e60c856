/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The worker's token table: local token to meta-connection, for MP_JOIN
 * SYNs (RFC 8684 3.2) and for key generation (a token must be unique
 * among the connections the worker holds). Chained hashing over the
 * proxy's meta array: a bucket holds a meta's index + 1, metas chain
 * through tok_next. Sized at create to a power of two of at least twice
 * the connections: no allocation after create, no lock (one worker).
 * Tokens of different workers differ in their low worker_bits bits, so
 * each worker's table is enough for uniqueness.
 */
#include <errno.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include "proxy_priv.h"

int
mptcp_token_init(struct mptcp_token_table *t, uint32_t n, int socket)
{
	uint32_t sz = rte_align32pow2(n < 8 ? 16 : 2 * n);

	t->bucket = rte_zmalloc_socket("mptcp_tokens", sz * sizeof(uint32_t),
				       RTE_CACHE_LINE_SIZE, socket);
	if (t->bucket == NULL)
		return -ENOMEM;
	t->mask = sz - 1;
	return 0;
}

void
mptcp_token_fini(struct mptcp_token_table *t)
{
	rte_free(t->bucket);
	t->bucket = NULL;
}

/* The token's bits above the worker's: spread over the buckets. */
static inline uint32_t
bucket_of(const struct mptcp_proxy *px, uint32_t token)
{
	return (token >> px->worker_bits) * 2654435761u >> 7 & px->tok.mask;
}

struct mptcp_meta *
mptcp_token_find(struct mptcp_proxy *px, uint32_t token)
{
	uint32_t i = px->tok.bucket[bucket_of(px, token)];

	while (i != 0) {
		struct mptcp_meta *mt = &px->metas[i - 1];

		if (mt->local.token == token)
			return mt;
		i = mt->tok_next;
	}
	return NULL;
}

void
mptcp_token_add(struct mptcp_proxy *px, struct mptcp_meta *mt)
{
	uint32_t *b = &px->tok.bucket[bucket_of(px, mt->local.token)];

	mt->tok_next = *b;
	*b = (uint32_t)(mt - px->metas) + 1;
}

void
mptcp_token_del(struct mptcp_proxy *px, struct mptcp_meta *mt)
{
	uint32_t *link = &px->tok.bucket[bucket_of(px, mt->local.token)];
	uint32_t me = (uint32_t)(mt - px->metas) + 1;

	while (*link != 0) {
		if (*link == me) {
			*link = mt->tok_next;
			mt->tok_next = 0;
			return;
		}
		link = &px->metas[*link - 1].tok_next;
	}
}
