/* SPDX-License-Identifier: BSD-3-Clause */
/* Boot-time side: parameters, context construction, counters. */

#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "pkt.h"
#include "tcpopt.h"
#include "tcpopt_csum.h"
#include "tcpopt_ctx.h"

void
tcpopt_params_init(struct tcpopt_params *p)
{
	memset(p, 0, sizeof(*p));
	p->malformed_action = TCPOPT_ACT_PRESERVE;
	p->socket_id = SOCKET_ID_ANY;
}

size_t
tcpopt_ctx_size(void)
{
	return sizeof(struct tcpopt_ctx);
}

uint16_t
tcpopt_mss_from_mtu(uint16_t mtu, uint8_t ip_version)
{
	/* Fixed headers: IPv4 20 + TCP 20, IPv6 40 + TCP 20. */
	unsigned int hdr = ip_version == 6 ? 60 : 40;

	return mtu > hdr ? (uint16_t)(mtu - hdr) : 0;
}

int
tcpopt_params_check(const struct tcpopt_params *p)
{
	unsigned int k;

	if (p == NULL)
		return -EINVAL;
	if (p->mss_clamp != 0 && p->mtu != 0)
		return -EINVAL;
	if (p->mss_clamp != 0 && p->mss_clamp < TCPOPT_MSS_MIN)
		return -EINVAL;
	if (p->mtu != 0 && p->mtu < TCPOPT_MTU_MIN)
		return -EINVAL;
	if (p->malformed_action != TCPOPT_ACT_PRESERVE &&
	    p->malformed_action != TCPOPT_ACT_DROP)
		return -EINVAL;
	for (k = 0; k < 256; k++)
		if (p->kind_action[k] >= TCPOPT_ACT_MAX)
			return -EINVAL;
	/* One-byte kinds carry nothing to strip. */
	if (p->kind_action[TCPOPT_KIND_EOL] == TCPOPT_ACT_STRIP ||
	    p->kind_action[TCPOPT_KIND_NOP] == TCPOPT_ACT_STRIP)
		return -EINVAL;
	return 0;
}

struct tcpopt_ctx *
tcpopt_init(void *mem, const struct tcpopt_params *p)
{
	struct tcpopt_ctx *ctx = mem;
	unsigned int k;

	if (mem == NULL || ((uintptr_t)mem & (RTE_CACHE_LINE_SIZE - 1)) != 0 ||
	    tcpopt_params_check(p) != 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	memset(ctx, 0, sizeof(*ctx));
	if (p->mss_clamp != 0) {
		ctx->clamp[0] = p->mss_clamp;
		ctx->clamp[1] = p->mss_clamp;
	} else if (p->mtu != 0) {
		ctx->clamp[0] = tcpopt_mss_from_mtu(p->mtu, 4);
		ctx->clamp[1] = tcpopt_mss_from_mtu(p->mtu, 6);
	}
	RTE_BUILD_BUG_ON(PKT_L3_IPV4 >= TCPOPT_SYN_L3_N ||
			 PKT_L3_IPV6 >= TCPOPT_SYN_L3_N);
	for (k = 0; k < TCPOPT_SYN_L3_N; k++) {
		uint16_t clamp = k == PKT_L3_IPV4 ? ctx->clamp[0] :
				 k == PKT_L3_IPV6 ? ctx->clamp[1] : 0;

		/* No MSS is above 0xffff: "no clamp" needs no test. */
		if (clamp == 0)
			clamp = 0xffff;
		ctx->syn_lo[k] = 0x02040000u + clamp + 1u;
		ctx->syn_range[k] = 0xffffu - clamp;
		ctx->syn_mss_be[k] = rte_cpu_to_be_16(clamp);
		ctx->syn_csum_k[k] = tcpopt_csum_k(ctx->syn_mss_be[k]);
	}
	ctx->csum_fold = TCPOPT_CSUM_FOLD;
	ctx->syn_uniform = ctx->clamp[0] == ctx->clamp[1];
	ctx->malformed_drop = p->malformed_action == TCPOPT_ACT_DROP;
	memcpy(ctx->action, p->kind_action, sizeof(ctx->action));
	for (k = 0; k < 256; k++)
		if (ctx->action[k] != TCPOPT_ACT_PRESERVE)
			ctx->has_policy = 1;
	return ctx;
}

struct tcpopt_ctx *
tcpopt_create(const struct tcpopt_params *p)
{
	struct tcpopt_ctx *ctx;
	void *mem;

	if (tcpopt_params_check(p) != 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	mem = rte_zmalloc_socket("tcpopt_ctx", sizeof(*ctx),
				 RTE_CACHE_LINE_SIZE, p->socket_id);
	if (mem == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	return tcpopt_init(mem, p);
}

void
tcpopt_free(struct tcpopt_ctx *ctx)
{
	rte_free(ctx);
}

uint16_t
tcpopt_mss_clamp(const struct tcpopt_ctx *ctx, uint8_t ip_version)
{
	return ctx->clamp[ip_version == 6];
}

const struct tcpopt_counters *
tcpopt_counters(const struct tcpopt_ctx *ctx)
{
	return &ctx->cnt;
}

void
tcpopt_counters_reset(struct tcpopt_ctx *ctx)
{
	memset(&ctx->cnt, 0, sizeof(ctx->cnt));
}

void
tcpopt_counters_add(struct tcpopt_counters *dst,
		    const struct tcpopt_counters *src)
{
	/* The struct is nothing but uint64_t, so add it word by word. */
	uint64_t *d = (uint64_t *)dst;
	const uint64_t *s = (const uint64_t *)src;
	size_t i;

	RTE_BUILD_BUG_ON(sizeof(*dst) % sizeof(uint64_t) != 0);
	for (i = 0; i < sizeof(*dst) / sizeof(uint64_t); i++)
		d[i] += s[i];
}
