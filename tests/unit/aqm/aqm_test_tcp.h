/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_AQM_TEST_TCP_H
#define SLUICE_AQM_TEST_TCP_H

/*
 * TCP segments for the ACK filter and hold tests, built byte by byte and
 * run through the real parser. Include after cmocka.h and aqm_test_util.h.
 */

#define F_FIN 0x01
#define F_SYN 0x02
#define F_RST 0x04
#define F_PSH 0x08
#define F_ACK 0x10
#define F_URG 0x20
#define F_ECE 0x40
#define F_CWR 0x80

/* One TCP segment as the tests want it. */
struct seg {
	int v6;
	uint16_t sport;
	uint32_t ack;
	uint16_t win;
	uint8_t flags;
	uint8_t tos;
	int ts;              /* 1: NOP NOP TS */
	uint32_t tsval, tsecr;
	int nsack;
	uint32_t sack[4][2];
	uint16_t payload;
	uint8_t extra_kind;  /* another option (kind, 4 bytes), 0 = none */
};

static inline void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Client 198.18.0.1 (2001:db8::1) port sport -> server 198.18.0.2 port 5201. */
static inline struct rte_mbuf *
mk(const struct seg *g)
{
	uint8_t opt[40], buf[1600];
	unsigned int ol = 0, l3 = g->v6 ? 40 : 20, len;
	uint8_t *ip = buf + 14, *t;
	struct rte_mbuf *m;

	if (g->ts) {
		opt[ol++] = 1;
		opt[ol++] = 1;
		opt[ol++] = 8;
		opt[ol++] = 10;
		put32(opt + ol, g->tsval);
		put32(opt + ol + 4, g->tsecr);
		ol += 8;
	}
	if (g->nsack) {
		opt[ol++] = 1;
		opt[ol++] = 1;
		opt[ol++] = 5;
		opt[ol++] = (uint8_t)(2 + 8 * g->nsack);
		for (int i = 0; i < g->nsack; i++) {
			put32(opt + ol, g->sack[i][0]);
			put32(opt + ol + 4, g->sack[i][1]);
			ol += 8;
		}
	}
	if (g->extra_kind) {
		opt[ol++] = g->extra_kind;
		opt[ol++] = 4;
		opt[ol++] = 0;
		opt[ol++] = 0;
	}
	assert_true(ol % 4 == 0 && ol <= 40);
	len = 14 + l3 + 20 + ol + g->payload;
	memset(buf, 0, sizeof(buf));
	buf[0] = 0x02; buf[5] = 0x02;  /* dst 02:00:00:00:00:02 */
	buf[6] = 0x02; buf[11] = 0x01; /* src 02:00:00:00:00:01 */
	if (g->v6) {
		buf[12] = 0x86;
		buf[13] = 0xdd;
		ip[0] = (uint8_t)(0x60 | g->tos >> 4);
		ip[1] = (uint8_t)(g->tos << 4);
		ip[4] = (uint8_t)((20 + ol + g->payload) >> 8);
		ip[5] = (uint8_t)(20 + ol + g->payload);
		ip[6] = 6;
		ip[7] = 64;
		ip[8] = 0x20; ip[9] = 0x01; ip[10] = 0x0d; ip[11] = 0xb8; ip[23] = 1;
		ip[24] = 0x20; ip[25] = 0x01; ip[26] = 0x0d; ip[27] = 0xb8; ip[39] = 2;
	} else {
		struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;

		buf[12] = 0x08;
		h->version_ihl = 0x45;
		h->type_of_service = g->tos;
		h->total_length = rte_cpu_to_be_16((uint16_t)(l3 + 20 + ol + g->payload));
		h->time_to_live = 64;
		h->next_proto_id = 6;
		h->src_addr = rte_cpu_to_be_32(0xc6120001u);
		h->dst_addr = rte_cpu_to_be_32(0xc6120002u);
		h->hdr_checksum = rte_ipv4_cksum(h);
	}
	t = ip + l3;
	t[0] = (uint8_t)(g->sport >> 8);
	t[1] = (uint8_t)g->sport;
	t[2] = 5201 >> 8;
	t[3] = 5201 & 0xff;
	put32(t + 4, 1000);
	put32(t + 8, g->ack);
	t[12] = (uint8_t)(((20 + ol) / 4) << 4);
	t[13] = g->flags;
	t[14] = (uint8_t)(g->win >> 8);
	t[15] = (uint8_t)g->win;
	memcpy(t + 20, opt, ol);
	/* Ethernet pads short frames to 60 bytes: the filter must not count
	 * the padding as payload. */
	if (len < 60)
		len = 60;
	m = rte_pktmbuf_alloc(test_pool);
	assert_non_null(m);
	memcpy(rte_pktmbuf_append(m, (uint16_t)len), buf, len);
	assert_int_equal(pkt_parse(m, pkt_meta(m), 0), PKT_ERR_NONE);
	return m;
}

/* A pure ACK with timestamps: the common case. */
static inline struct seg
ack(uint32_t a, uint32_t tsval)
{
	struct seg g = { .sport = 40000, .ack = a, .win = 500, .flags = F_ACK,
			 .ts = 1, .tsval = tsval, .tsecr = 7 };
	return g;
}

static inline uint32_t
ack_of(struct rte_mbuf *m)
{
	const uint8_t *t = rte_pktmbuf_mtod(m, const uint8_t *) + pkt_meta(m)->l4_off + 8;

	return (uint32_t)t[0] << 24 | (uint32_t)t[1] << 16 | (uint32_t)t[2] << 8 | t[3];
}

#endif /* SLUICE_AQM_TEST_TCP_H */
