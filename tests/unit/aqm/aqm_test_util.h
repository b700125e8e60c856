/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_AQM_TEST_UTIL_H
#define SLUICE_AQM_TEST_UTIL_H

/* Shared helpers for the lib/aqm tests: EAL, a mempool, packet builders. */

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "../../test_eal.h"
#include "aqm.h"
#include "pkt.h"

static struct rte_mempool *test_pool;

/* xorshift64: the same pseudo-random sequence on every run from a seed. */
static inline uint32_t
test_rng(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return (uint32_t)*state;
}

/* EAL without hugepages or PCI, private to this process; mem_mb in MB. */
static inline int
test_eal_init(const char *tag, unsigned int nb_mbufs, unsigned int mem_mb)
{
	char name[64];

	snprintf(name, sizeof(name), "aqm_%s", tag);
	if (test_eal_start(name, mem_mb) < 0)
		return -1;
	test_pool = rte_pktmbuf_pool_create("aqm_test", nb_mbufs, 0,
					    PKT_META_PRIV_SIZE,
					    RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	return test_pool ? 0 : -1;
}

static inline uint32_t
test_tuple_hash(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport)
{
	uint32_t h = src * 0x9e3779b1u ^ dst * 0x85ebca77u ^
		     ((uint32_t)sport << 16 | dport) * 0xc2b2ae3du;

	return h ^ (h >> 15);
}

/*
 * An Ethernet + IPv4 + UDP frame of len bytes from 198.18.0.src to
 * 198.18.1.dst, with metadata filled as the parser would.
 */
static inline struct rte_mbuf *
test_pkt4(uint32_t flow, uint16_t len, uint8_t tos)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_pool);
	struct pkt_meta *meta;
	uint8_t *d;
	struct rte_ipv4_hdr *ip;

	if (m == NULL)
		return NULL;
	d = (uint8_t *)rte_pktmbuf_append(m, len);
	memset(d, 0, len);
	d[12] = 0x08;
	ip = (struct rte_ipv4_hdr *)(d + 14);
	ip->version_ihl = 0x45;
	ip->type_of_service = tos;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(len - 14));
	ip->time_to_live = 64;
	ip->next_proto_id = 17;
	ip->src_addr = rte_cpu_to_be_32(0xc6120000u | (flow & 0xffff));
	ip->dst_addr = rte_cpu_to_be_32(0xc6120100u | (flow >> 16));
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	meta = pkt_meta(m);
	memset(meta, 0, sizeof(*meta));
	meta->l3 = PKT_L3_IPV4;
	meta->l3_off = 14;
	meta->l4_proto = 17;
	memcpy(meta->src, &ip->src_addr, 4);
	memcpy(meta->dst, &ip->dst_addr, 4);
	meta->sport = (uint16_t)(1000 + flow);
	meta->dport = 5001;
	meta->flow_hash = test_tuple_hash(ip->src_addr, ip->dst_addr,
					  meta->sport, meta->dport);
	meta->flags |= PKT_F_HASHED; /* this hash, not pkt_tuple_hash()'s */
	return m;
}

/* The same for IPv6 (2001:db8::), traffic class tc. */
static inline struct rte_mbuf *
test_pkt6(uint32_t flow, uint16_t len, uint8_t tc)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_pool);
	struct pkt_meta *meta;
	uint8_t *d, *ip;

	if (m == NULL)
		return NULL;
	d = (uint8_t *)rte_pktmbuf_append(m, len);
	memset(d, 0, len);
	d[12] = 0x86;
	d[13] = 0xdd;
	ip = d + 14;
	ip[0] = (uint8_t)(0x60 | tc >> 4);
	ip[1] = (uint8_t)(tc << 4);
	ip[6] = 17;
	ip[7] = 64;
	ip[8] = 0x20; ip[9] = 0x01; ip[10] = 0x0d; ip[11] = 0xb8;
	ip[23] = (uint8_t)flow;
	ip[24] = 0x20; ip[25] = 0x01; ip[26] = 0x0d; ip[27] = 0xb8; ip[28] = 1;
	ip[39] = 1;
	meta = pkt_meta(m);
	memset(meta, 0, sizeof(*meta));
	meta->l3 = PKT_L3_IPV6;
	meta->l3_off = 14;
	meta->l4_proto = 17;
	memcpy(meta->src, ip + 8, 16);
	memcpy(meta->dst, ip + 24, 16);
	meta->flow_hash = test_tuple_hash(flow, 6, 1000, 5001);
	meta->flags |= PKT_F_HASHED;
	return m;
}

/* A scheduler with n pipes of the given parameters. */
static inline struct aqm_sched *
test_sched(const struct aqm_pipe_params *pp, uint32_t npipes)
{
	struct aqm_sched_params sp;
	struct aqm_sched *s;

	aqm_sched_params_default(&sp);
	sp.max_pipes = npipes;
	sp.max_flows = npipes * (pp->qdisc == AQM_QDISC_FIFO ? 1 : pp->fq.flows);
	s = aqm_sched_create(&sp);
	if (s == NULL)
		return NULL;
	for (uint32_t i = 0; i < npipes; i++)
		if (aqm_sched_pipe_add(s, pp) < 0)
			return NULL;
	return s;
}

#endif /* SLUICE_AQM_TEST_UTIL_H */
