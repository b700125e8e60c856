/* SPDX-License-Identifier: BSD-3-Clause */
/* Segment parse and build. Checksums are computed in software so frames
 * are complete whatever the NIC offers. */

#include <stdbool.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "tcp_seg.h"
#include "tcpopt.h"

static inline uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void wr16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void
wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);  p[3] = (uint8_t)v;
}

/* Sums here are in the native byte order of rte_raw_cksum(): 16-bit
 * words loaded from memory, constants converted to network order. */
uint32_t
tcp_pseudo_sum(uint8_t family, const uint8_t *src, const uint8_t *dst,
	       uint32_t l4_len)
{
	uint32_t alen = family == 4 ? 4 : 16;
	uint32_t sum = 0;

	sum += rte_raw_cksum(src, alen);
	sum += rte_raw_cksum(dst, alen);
	sum += rte_cpu_to_be_16(IPPROTO_TCP);
	sum += rte_cpu_to_be_16((uint16_t)(l4_len >> 16));
	sum += rte_cpu_to_be_16((uint16_t)l4_len);
	return sum;
}

static inline uint16_t
fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

int
tcp_seg_parse(const struct rte_mbuf *m, const struct pkt_meta *meta,
	      struct tcp_seg_in *s, int verify_csum)
{
	struct tcpopt_parsed po;
	const uint8_t *th;
	uint32_t tcp_len, end;

	if (meta->flags & PKT_F_FRAGMENT)
		return TCP_SEG_EFRAGMENT;
	if (meta->l4_proto != IPPROTO_TCP || !(meta->flags & PKT_F_L4) ||
	    (meta->flags & PKT_F_MALFORMED) || meta->l4_len < 20)
		return TCP_SEG_EMALFORMED;
	end = (uint32_t)meta->l3_off + meta->l3_len;
	if (end > rte_pktmbuf_pkt_len(m) || meta->payload_off > end ||
	    meta->payload_off > m->data_len)
		return TCP_SEG_EMALFORMED;
	tcp_len = end - meta->l4_off;
	th = rte_pktmbuf_mtod_offset(m, const uint8_t *, meta->l4_off);

	if (verify_csum &&
	    (m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) != RTE_MBUF_F_RX_L4_CKSUM_GOOD) {
		uint16_t raw = 0;
		uint32_t sum;

		if (rte_raw_cksum_mbuf(m, meta->l4_off, tcp_len, &raw) != 0)
			return TCP_SEG_EMALFORMED;
		sum = tcp_pseudo_sum(meta->l3 == PKT_L3_IPV4 ? 4 : 6, meta->src,
				     meta->dst, tcp_len) + raw;
		if (fold(sum) != 0xffff)
			return TCP_SEG_ECSUM;
	}

	memset(s, 0, offsetof(struct tcp_seg_in, sack));
	s->seq = rd32(th + 4);
	s->ack = rd32(th + 8);
	s->flags = th[13] & 0x3f;
	s->wnd = rd16(th + 14);
	s->payload_off = meta->payload_off;
	s->len = end - meta->payload_off;

	if (meta->l4_len == 20)
		return 0;
	if (tcpopt_parse(th, meta->l4_len, &po) != TCPOPT_MAL_NONE)
		return TCP_SEG_EMALFORMED;
	for (unsigned int i = 0; i < po.n; i++) {
		const uint8_t *o = th + po.opt[i].off;

		switch (po.opt[i].kind) {
		case TCPOPT_KIND_MSS:
			s->opts |= TCP_SO_MSS;
			s->mss = rd16(o + 2);
			break;
		case TCPOPT_KIND_WS:
			s->opts |= TCP_SO_WS;
			/* RFC 7323 2.3: a shift above 14 is used as 14. */
			s->ws = o[2] > 14 ? 14 : o[2];
			break;
		case TCPOPT_KIND_SACK_PERM:
			s->opts |= TCP_SO_SACK_PERM;
			break;
		case TCPOPT_KIND_TS:
			s->opts |= TCP_SO_TS;
			s->tsval = rd32(o + 2);
			s->tsecr = rd32(o + 6);
			break;
		case TCPOPT_KIND_SACK:
			s->opts |= TCP_SO_SACK;
			s->nsack = (uint8_t)((po.opt[i].len - 2) / 8);
			for (unsigned int b = 0; b < s->nsack; b++) {
				s->sack[b].left = rd32(o + 2 + 8 * b);
				s->sack[b].right = rd32(o + 6 + 8 * b);
			}
			break;
		default:
			break;
		}
	}
	return 0;
}

uint32_t
tcp_seg_opt_len(const struct tcp_seg_out *o)
{
	uint32_t n = 0;

	if (o->opts & TCP_SO_MSS)
		n += 4;
	if (o->opts & TCP_SO_TS)
		n += 12; /* NOP NOP TS, or SACK_PERM TS */
	else if (o->opts & TCP_SO_SACK_PERM)
		n += 4;  /* NOP NOP SACK_PERM */
	if (o->opts & TCP_SO_WS)
		n += 4;  /* NOP WS */
	if ((o->opts & TCP_SO_SACK) && o->nsack)
		n += 4 + 8u * o->nsack; /* NOP NOP SACK */
	n += o->hopt_len;
	if (o->xopt_len)
		n += (o->xopt_len + 3u) & ~3u; /* NOPs, then the options */
	return n;
}

/* Kinds no connection can carry to another: padding, and what the engine
 * negotiates per connection itself. Which of the rest a proxy carries is
 * its own policy (the carry predicate). */
static bool
xopt_engine_own(uint8_t kind)
{
	switch (kind) {
	case TCPOPT_KIND_EOL:
	case TCPOPT_KIND_NOP:
	case TCPOPT_KIND_MSS:
	case TCPOPT_KIND_WS:
	case TCPOPT_KIND_SACK_PERM:
	case TCPOPT_KIND_SACK:
	case TCPOPT_KIND_TS:
		return true;
	default:
		return false;
	}
}

uint32_t
tcp_seg_xopts(const uint8_t *th, uint32_t hlen, uint8_t *buf, uint32_t cap,
	      uint32_t *left, tcp_xopt_carry_fn carry)
{
	struct tcpopt_parsed po;
	uint32_t n = 0;

	*left = 0;
	if (hlen <= 20 || tcpopt_parse(th, hlen, &po) != TCPOPT_MAL_NONE)
		return 0;
	for (unsigned int i = 0; i < po.n; i++) {
		uint32_t len = po.opt[i].len;

		if (xopt_engine_own(po.opt[i].kind) ||
		    (carry != NULL && !carry(po.opt[i].kind)))
			continue;
		if (n + len > cap) {
			(*left)++;
			continue;
		}
		memcpy(buf + n, th + po.opt[i].off, len);
		n += len;
	}
	return n;
}

/* Lay the options out in the order Linux uses, so a capture reads as
 * usual: MSS, SACK_PERM+TS (sharing the word), NOP+WS, NOP NOP+SACK. */
static uint8_t *
write_opts(uint8_t *p, const struct tcp_seg_out *o)
{
	if (o->opts & TCP_SO_MSS) {
		p[0] = TCPOPT_KIND_MSS; p[1] = 4; wr16(p + 2, o->mss);
		p += 4;
	}
	if (o->opts & TCP_SO_TS) {
		if (o->opts & TCP_SO_SACK_PERM) {
			p[0] = TCPOPT_KIND_SACK_PERM; p[1] = 2;
		} else {
			p[0] = TCPOPT_KIND_NOP; p[1] = TCPOPT_KIND_NOP;
		}
		p[2] = TCPOPT_KIND_TS; p[3] = 10;
		wr32(p + 4, o->tsval);
		wr32(p + 8, o->tsecr);
		p += 12;
	} else if (o->opts & TCP_SO_SACK_PERM) {
		p[0] = TCPOPT_KIND_NOP; p[1] = TCPOPT_KIND_NOP;
		p[2] = TCPOPT_KIND_SACK_PERM; p[3] = 2;
		p += 4;
	}
	if (o->opts & TCP_SO_WS) {
		p[0] = TCPOPT_KIND_NOP; p[1] = TCPOPT_KIND_WS; p[2] = 3; p[3] = o->ws;
		p += 4;
	}
	if ((o->opts & TCP_SO_SACK) && o->nsack) {
		p[0] = TCPOPT_KIND_NOP; p[1] = TCPOPT_KIND_NOP;
		p[2] = TCPOPT_KIND_SACK; p[3] = (uint8_t)(2 + 8 * o->nsack);
		p += 4;
		for (unsigned int b = 0; b < o->nsack; b++) {
			wr32(p, o->sack[b].left);
			wr32(p + 4, o->sack[b].right);
			p += 8;
		}
	}
	if (o->hopt_len) {
		memcpy(p, o->hopt, o->hopt_len);
		p += o->hopt_len;
	}
	if (o->xopt_len) {
		for (unsigned int pad = (4u - (o->xopt_len & 3u)) & 3u; pad; pad--)
			*p++ = TCPOPT_KIND_NOP;
		memcpy(p, o->xopt, o->xopt_len);
		p += o->xopt_len;
	}
	return p;
}

uint32_t
tcp_chain_copy(const struct rte_mbuf *m, uint32_t off, void *dst, uint32_t len)
{
	uint8_t *d = dst;
	uint32_t done = 0;

	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	while (m != NULL && done < len) {
		uint32_t n = m->data_len - off;

		if (n > len - done)
			n = len - done;
		memcpy(d + done, rte_pktmbuf_mtod_offset(m, const uint8_t *, off), n);
		done += n;
		off = 0;
		m = m->next;
	}
	return done;
}

struct rte_mbuf *
tcp_seg_build(struct rte_mempool *mp, const struct tcp_endpoints *ep,
	      const struct tcp_seg_out *o, const struct rte_mbuf *data,
	      uint32_t data_off, uint32_t data_len)
{
	uint32_t olen = tcp_seg_opt_len(o);
	uint32_t l3_len = ep->family == 4 ? 20 : 40;
	uint32_t tcp_len = 20 + olen + data_len;
	unsigned int tags = ep->vlan_count > 2 ? 2 : ep->vlan_count;
	uint32_t l2_len = RTE_ETHER_HDR_LEN + 4u * tags;
	uint32_t frame = l2_len + l3_len + tcp_len;
	struct rte_mbuf *m;
	uint8_t *d, *ip, *th, *end;
	uint16_t raw;

	if (olen > 40)
		return NULL;
	m = rte_pktmbuf_alloc(mp);
	if (m == NULL)
		return NULL;
	d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)RTE_MIN(frame, 0xffffu));
	if (d == NULL || frame > 0xffff) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memcpy(d, &ep->rmac, 6);
	memcpy(d + 6, &ep->lmac, 6);
	/* The tags the connection's frames arrived with (802.1Q, QinQ). */
	for (unsigned int t = 0; t < tags; t++) {
		wr16(d + 12 + 4 * t, ep->vlan_tpid[t] ? ep->vlan_tpid[t] : RTE_ETHER_TYPE_VLAN);
		wr16(d + 14 + 4 * t, ep->vlan_tci[t]);
	}
	ip = d + l2_len;
	if (ep->family == 4) {
		wr16(ip - 2, RTE_ETHER_TYPE_IPV4);
		ip[0] = 0x45; ip[1] = 0;
		wr16(ip + 2, (uint16_t)(l3_len + tcp_len));
		wr16(ip + 4, 0);
		wr16(ip + 6, 0x4000); /* DF: we do our own MSS */
		ip[8] = 64; ip[9] = IPPROTO_TCP;
		wr16(ip + 10, 0);
		memcpy(ip + 12, ep->laddr, 4);
		memcpy(ip + 16, ep->raddr, 4);
		{
			uint16_t ck = (uint16_t)~rte_raw_cksum(ip, 20);

			memcpy(ip + 10, &ck, 2);
		}
	} else {
		wr16(ip - 2, RTE_ETHER_TYPE_IPV6);
		wr32(ip, 0x60000000);
		wr16(ip + 4, (uint16_t)tcp_len);
		ip[6] = IPPROTO_TCP; ip[7] = 64;
		memcpy(ip + 8, ep->laddr, 16);
		memcpy(ip + 24, ep->raddr, 16);
	}
	th = ip + l3_len;
	wr16(th, ep->lport);
	wr16(th + 2, ep->rport);
	wr32(th + 4, o->seq);
	wr32(th + 8, o->ack);
	th[12] = (uint8_t)(((20 + olen) / 4) << 4);
	th[13] = o->flags;
	wr16(th + 14, o->wnd);
	wr16(th + 16, 0);
	wr16(th + 18, 0);
	end = write_opts(th + 20, o);
	if (data_len && tcp_chain_copy(data, data_off, end, data_len) != data_len) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	raw = rte_raw_cksum(th, tcp_len);
	{
		uint16_t c = (uint16_t)~fold(tcp_pseudo_sum(ep->family, ep->laddr,
							  ep->raddr, tcp_len) + raw);
		memcpy(th + 16, &c, 2);
	}
	m->port = ep->port;
	m->l2_len = (uint16_t)l2_len;
	m->l3_len = (uint16_t)l3_len;
	m->l4_len = (uint16_t)(20 + olen);
	return m;
}
