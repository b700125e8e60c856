/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Header walk for sluice. Every read is bounds-checked against the bytes
 * available; the walk stops at the first inconsistency, records why, and
 * leaves the offsets found so far (so a stage can still see, say, the L2
 * layout of a frame whose IP header lies).
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_hash_crc.h>

#include "pkt.h"

#define ETH_HLEN 14
#define VLAN_HLEN 4
#define MAX_VLANS 2
#define MAX_IPV6_EXT 8

#define ET_IPV4   0x0800
#define ET_IPV6   0x86DD
#define ET_VLAN   0x8100
#define ET_QINQ   0x88A8
#define ET_QINQ1  0x9100 /* pre-standard QinQ, still seen in the field */
#define ET_PPPOES 0x8864
#define PPP_IPV4  0x0021
#define PPP_IPV6  0x0057

#define PROTO_ICMP   1
#define PROTO_TCP    6
#define PROTO_UDP    17
#define PROTO_ICMPV6 58

static const char *const err_names[PKT_ERR_MAX] = {
#define PKT_ERR_NAME(e, s) [PKT_ERR_##e] = s,
	PKT_ERR_LIST(PKT_ERR_NAME)
#undef PKT_ERR_NAME
};

const char *
pkt_err_name(enum pkt_err e)
{
	return (unsigned)e < PKT_ERR_MAX ? err_names[e] : "unknown";
}

static inline uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline enum pkt_err
fail(struct pkt_meta *meta, enum pkt_err e)
{
	meta->err = (uint8_t)e;
	meta->flags |= PKT_F_MALFORMED;
	return e;
}

/* The bytes we may read (cap: the first segment) and the frame length
 * (len: all segments). cap <= len. Length fields are judged against len;
 * a header we need to read but that lies beyond cap is "segmented". */
struct cur {
	const uint8_t *d;
	uint32_t cap;
	uint32_t len;
};

/* Can n bytes at off be read? Otherwise which error applies. */
static inline enum pkt_err
need(const struct cur *c, uint32_t off, uint32_t n, enum pkt_err trunc)
{
	if (off > c->len || n > c->len - off)
		return trunc;
	if (off > c->cap || n > c->cap - off)
		return PKT_ERR_SEGMENTED;
	return PKT_ERR_NONE;
}

#define NEED(c, off, n, trunc) do { \
	enum pkt_err e_ = need((c), (off), (n), (trunc)); \
	if (e_ != PKT_ERR_NONE) \
		return fail(meta, e_); \
} while (0)

/* The shape of a TCP header whose doff bytes are readable: lets a stage
 * that only counts options skip re-reading the header. */
static inline uint16_t
tcp_shape(const uint8_t *tcp, uint32_t doff)
{
	uint16_t f = (tcp[13] & 0x02) ? PKT_F_TCP_SYN : 0;
	if (doff == 20)
		f |= PKT_F_TCP_NOOPT;
	else if (doff == 32) {
		uint32_t w; /* NOP NOP kind 8 length 10, as one word */

		memcpy(&w, tcp + 20, 4);
		if (w == rte_cpu_to_be_32(0x0101080au))
			f |= PKT_F_TCP_TSOPT;
	}
	return f;
}

/* Transport header: ports and header length. end is where the IP datagram
 * ends according to its own header (already checked against the frame). */
static enum pkt_err
parse_l4(const struct cur *c, uint32_t off, uint32_t end, struct pkt_meta *meta)
{
	const uint8_t *d = c->d;
	uint32_t avail = end - off;

	meta->l4_off = (uint16_t)off;
	switch (meta->l4_proto) {
	case PROTO_TCP: {
		if (avail < 20)
			return fail(meta, PKT_ERR_TRUNC_L4);
		NEED(c, off, 20, PKT_ERR_TRUNC_L4);
		uint32_t doff = (uint32_t)(d[off + 12] >> 4) * 4;
		if (doff < 20 || doff > avail)
			return fail(meta, PKT_ERR_TCP_DOFF);
		NEED(c, off, doff, PKT_ERR_TCP_DOFF);
		meta->sport = rd16(d + off);
		meta->dport = rd16(d + off + 2);
		meta->l4_len = (uint16_t)doff;
		meta->flags |= tcp_shape(d + off, doff);
		break;
	}
	case PROTO_UDP: {
		if (avail < 8)
			return fail(meta, PKT_ERR_TRUNC_L4);
		NEED(c, off, 8, PKT_ERR_TRUNC_L4);
		uint16_t ulen = rd16(d + off + 4);
		/* In a first fragment the UDP length covers the whole
		 * datagram, so only check it against an unfragmented one.
		 * 0 is legal for IPv6 jumbograms only; treat it as malformed. */
		if (ulen < 8 ||
		    (ulen > avail && !(meta->flags & PKT_F_FRAGMENT)))
			return fail(meta, PKT_ERR_UDP_LEN);
		meta->sport = rd16(d + off);
		meta->dport = rd16(d + off + 2);
		meta->l4_len = 8;
		break;
	}
	case PROTO_ICMP:
	case PROTO_ICMPV6:
		if (avail < 8)
			return fail(meta, PKT_ERR_TRUNC_L4);
		NEED(c, off, 8, PKT_ERR_TRUNC_L4);
		/* Type and code stand in for ports, so echo flows separate. */
		meta->sport = d[off];
		meta->dport = d[off + 1];
		meta->l4_len = 8;
		break;
	default:
		/* Unknown transport: addresses only. */
		return PKT_ERR_NONE;
	}
	meta->payload_off = (uint16_t)(off + meta->l4_len);
	meta->flags |= PKT_F_L4;
	return PKT_ERR_NONE;
}

static enum pkt_err
parse_ipv4(const struct cur *c, uint32_t off, uint32_t len, struct pkt_meta *meta)
{
	if (off > len || len - off < 20)
		return fail(meta, PKT_ERR_TRUNC_IP);
	NEED(c, off, 20, PKT_ERR_TRUNC_IP);
	const uint8_t *ip = c->d + off;
	if ((ip[0] >> 4) != 4)
		return fail(meta, PKT_ERR_IP_VERSION);
	uint32_t ihl = (uint32_t)(ip[0] & 0xf) * 4;
	if (ihl < 20)
		return fail(meta, PKT_ERR_IP_HDRLEN);
	if (ihl > len - off)
		return fail(meta, PKT_ERR_TRUNC_IP);
	NEED(c, off, ihl, PKT_ERR_TRUNC_IP);
	uint32_t tot = rd16(ip + 2);
	/* Ethernet padding may follow the datagram, so tot may be shorter
	 * than the frame; it may never be longer or shorter than its header. */
	if (tot < ihl || tot > len - off)
		return fail(meta, PKT_ERR_IP_TOTLEN);

	meta->l3 = PKT_L3_IPV4;
	meta->l3_off = (uint16_t)off;
	meta->l3_len = tot;
	meta->l4_proto = ip[9];
	memcpy(meta->src, ip + 12, 4);
	memcpy(meta->dst, ip + 16, 4);
	if (ihl > 20)
		meta->flags |= PKT_F_IPV4_OPTS;

	uint16_t frag = rd16(ip + 6);
	if (frag & 0x3fff) { /* MF set or offset != 0 */
		meta->flags |= PKT_F_FRAGMENT;
		if (frag & 0x1fff) /* not the first fragment: no L4 header */
			return PKT_ERR_NONE;
	}
	return parse_l4(c, off + ihl, off + tot, meta);
}

static bool
is_ipv6_ext(uint8_t nh)
{
	switch (nh) {
	case 0:   /* hop-by-hop */
	case 43:  /* routing */
	case 44:  /* fragment */
	case 60:  /* destination options */
	case 51:  /* AH */
	case 135: /* mobility */
	case 139: /* HIP */
	case 140: /* shim6 */
		return true;
	default:
		return false;
	}
}

static enum pkt_err
parse_ipv6(const struct cur *c, uint32_t off, uint32_t len, struct pkt_meta *meta)
{
	const uint8_t *d = c->d;
	if (off > len || len - off < 40)
		return fail(meta, PKT_ERR_TRUNC_IP);
	NEED(c, off, 40, PKT_ERR_TRUNC_IP);
	const uint8_t *ip = d + off;
	if ((ip[0] >> 4) != 6)
		return fail(meta, PKT_ERR_IP_VERSION);
	uint32_t plen = rd16(ip + 4);
	if (plen > len - off - 40)
		return fail(meta, PKT_ERR_IP_TOTLEN);

	meta->l3 = PKT_L3_IPV6;
	meta->l3_off = (uint16_t)off;
	meta->l3_len = plen + 40;
	memcpy(meta->src, ip + 8, 16);
	memcpy(meta->dst, ip + 24, 16);

	uint32_t end = off + 40 + plen;
	uint32_t p = off + 40;
	uint8_t nh = ip[6];
	bool later_fragment = false;
	for (int i = 0; is_ipv6_ext(nh); i++) {
		if (i == MAX_IPV6_EXT)
			return fail(meta, PKT_ERR_EXT_DEPTH);
		meta->flags |= PKT_F_IPV6_EXT;
		if (end - p < 8)
			return fail(meta, PKT_ERR_EXTHDR);
		NEED(c, p, 8, PKT_ERR_EXTHDR);
		uint32_t elen;
		if (nh == 44) {
			elen = 8;
			meta->flags |= PKT_F_FRAGMENT;
			if (rd16(d + p + 2) & 0xfff8)
				later_fragment = true;
		} else if (nh == 51) {
			elen = ((uint32_t)d[p + 1] + 2) * 4;
		} else {
			elen = ((uint32_t)d[p + 1] + 1) * 8;
		}
		if (elen > end - p)
			return fail(meta, PKT_ERR_EXTHDR);
		nh = d[p];
		p += elen;
	}
	meta->l4_proto = nh;
	if (later_fragment || nh == 59 /* no next header */)
		return PKT_ERR_NONE;
	return parse_l4(c, p, end, meta);
}

static enum pkt_err
parse_frame(const struct cur *c, struct pkt_meta *meta, uint16_t in_port)
{
	const uint8_t *d = c->d;
	uint32_t len = c->len;

	memset(meta, 0, offsetof(struct pkt_meta, in_port));
	meta->in_port = in_port;

	if (len < ETH_HLEN)
		return fail(meta, PKT_ERR_TRUNC_L2);
	NEED(c, 0, ETH_HLEN, PKT_ERR_TRUNC_L2);
	uint32_t off = 12;
	uint16_t et = rd16(d + off);
	while (et == ET_VLAN || et == ET_QINQ || et == ET_QINQ1) {
		if (meta->vlan_count == MAX_VLANS)
			return fail(meta, PKT_ERR_VLAN_DEPTH);
		NEED(c, off, 2 + VLAN_HLEN, PKT_ERR_TRUNC_VLAN);
		meta->vlan_tci[meta->vlan_count++] = rd16(d + off + 2);
		meta->flags |= meta->vlan_count == 1 ? PKT_F_VLAN : PKT_F_QINQ;
		off += VLAN_HLEN;
		et = rd16(d + off);
	}
	off += 2;
	meta->ethertype = et;

	if (et == ET_PPPOES) {
		meta->flags |= PKT_F_PPPOE;
		NEED(c, off, 7, PKT_ERR_TRUNC_PPPOE);
		/* ver/type 0x11, code 0 for session data (RFC 2516) */
		if (d[off] != 0x11 || d[off + 1] != 0)
			return fail(meta, PKT_ERR_PPPOE_LEN);
		uint32_t plen = rd16(d + off + 4); /* includes the PPP protocol */
		/* The PPP protocol is 2 bytes, or 1 when protocol-field
		 * compression is used (RFC 1661 6.5: odd first byte). */
		uint32_t pl = (d[off + 6] & 1) ? 1 : 2;
		if (pl == 2)
			NEED(c, off, 8, PKT_ERR_TRUNC_PPPOE);
		if (plen < pl || plen > len - off - 6)
			return fail(meta, PKT_ERR_PPPOE_LEN);
		uint16_t proto = pl == 1 ? d[off + 6] : rd16(d + off + 6);
		uint32_t l3 = off + 6 + pl;
		uint32_t l3end = off + 6 + plen;
		if (proto == PPP_IPV4) {
			meta->ethertype = ET_IPV4;
			return parse_ipv4(c, l3, l3end, meta);
		}
		if (proto == PPP_IPV6) {
			meta->ethertype = ET_IPV6;
			return parse_ipv6(c, l3, l3end, meta);
		}
		return PKT_ERR_NONE; /* LCP, IPCP...: not IP */
	}
	if (et == ET_IPV4)
		return parse_ipv4(c, off, len, meta);
	if (et == ET_IPV6)
		return parse_ipv6(c, off, len, meta);
	return PKT_ERR_NONE;
}

/* Transport header of the fast path: TCP, UDP or ICMP(v6) that fits,
 * with lengths that agree. Returns the header length, 0 to fall back. */
static inline uint32_t
fast_l4(const uint8_t *l4, uint8_t proto, uint32_t avail, bool first_seg_ok)
{
	if (!first_seg_ok)
		return 0;
	switch (proto) {
	case PROTO_TCP: {
		if (avail < 20)
			return 0;
		uint32_t doff = (uint32_t)(l4[12] >> 4) * 4;
		return doff >= 20 && doff <= avail ? doff : 0;
	}
	case PROTO_UDP: {
		if (avail < 8)
			return 0;
		uint32_t ulen = rd16(l4 + 4);
		return ulen >= 8 && ulen <= avail ? 8 : 0;
	}
	case PROTO_ICMP:
	case PROTO_ICMPV6:
		return avail >= 8 ? 8 : 0;
	default:
		return 0;
	}
}

/*
 * The shapes nearly all traffic has: untagged Ethernet, then IPv4 without
 * options or fragmentation, or IPv6 with the transport header right after
 * it, then TCP, UDP or ICMP whose header lies in the first segment. Fills
 * exactly what the full walk would (the fuzzer checks that) and returns
 * true; anything else returns false and takes the full walk.
 */
static inline bool
parse_fast(const struct cur *c, struct pkt_meta *meta, uint16_t in_port)
{
	const uint8_t *d = c->d;
	uint32_t len = c->len, l3len, l4len;
	uint8_t proto;
	uint16_t et;

	if (len < ETH_HLEN + 40 || c->cap < ETH_HLEN + 40)
		return false;
	et = rd16(d + 12);
	const uint8_t *ip = d + ETH_HLEN;
	if (et == ET_IPV4) {
		if (ip[0] != 0x45 || (rd16(ip + 6) & 0x3fff) != 0)
			return false;
		l3len = rd16(ip + 2);
		if (l3len < 20 || l3len > len - ETH_HLEN)
			return false;
		proto = ip[9];
		l4len = fast_l4(ip + 20, proto, l3len - 20,
				c->cap >= ETH_HLEN + 20 + 60 || c->cap == len);
		if (l4len == 0 || ETH_HLEN + 20 + l4len > c->cap)
			return false;
		meta->l3 = PKT_L3_IPV4;
		memcpy(meta->src, ip + 12, 4);
		memset(meta->src + 4, 0, 12);
		memcpy(meta->dst, ip + 16, 4);
		memset(meta->dst + 4, 0, 12);
		meta->l4_off = ETH_HLEN + 20;
	} else if (et == ET_IPV6) {
		if ((ip[0] >> 4) != 6)
			return false;
		uint32_t plen = rd16(ip + 4);
		if (plen > len - ETH_HLEN - 40)
			return false;
		l3len = plen + 40;
		proto = ip[6];
		l4len = fast_l4(ip + 40, proto, plen,
				c->cap >= ETH_HLEN + 40 + 60 || c->cap == len);
		if (l4len == 0 || ETH_HLEN + 40 + l4len > c->cap)
			return false;
		meta->l3 = PKT_L3_IPV6;
		memcpy(meta->src, ip + 8, 16);
		memcpy(meta->dst, ip + 24, 16);
		meta->l4_off = ETH_HLEN + 40;
	} else {
		return false;
	}
	const uint8_t *l4 = d + meta->l4_off;
	meta->flags = PKT_F_L4;
	meta->flow_hash = 0; /* as the full walk leaves it: pkt_flow_hash() */
	if (proto == PROTO_TCP)
		meta->flags |= tcp_shape(l4, l4len);
	meta->l4_proto = proto;
	meta->err = PKT_ERR_NONE;
	meta->vlan_count = 0;
	meta->ethertype = et;
	meta->l3_off = ETH_HLEN;
	meta->l4_len = (uint16_t)l4len;
	meta->payload_off = (uint16_t)(meta->l4_off + l4len);
	meta->l3_len = l3len;
	if (proto == PROTO_ICMP || proto == PROTO_ICMPV6) {
		meta->sport = l4[0];
		meta->dport = l4[1];
	} else {
		meta->sport = rd16(l4);
		meta->dport = rd16(l4 + 2);
	}
	meta->vlan_tci[0] = 0;
	meta->vlan_tci[1] = 0;
	meta->in_port = in_port;
	return true;
}

/* The fast path when it applies, else the full walk. The flow hash is
 * left to pkt_flow_hash(), on first use. */
static inline enum pkt_err
parse_meta(const struct cur *c, struct pkt_meta *meta, uint16_t in_port,
	       bool fast)
{
	if (fast && parse_fast(c, meta, in_port))
		return PKT_ERR_NONE;
	return parse_frame(c, meta, in_port);
}

enum pkt_err
pkt_parse_buf_walk(const uint8_t *data, uint32_t len, struct pkt_meta *meta,
		   uint16_t in_port)
{
	struct cur c = { .d = data, .cap = len, .len = len };
	return parse_meta(&c, meta, in_port, false);
}

enum pkt_err
pkt_parse_buf(const uint8_t *data, uint32_t len, struct pkt_meta *meta,
	      uint16_t in_port)
{
	struct cur c = { .d = data, .cap = len, .len = len };
	return parse_meta(&c, meta, in_port, true);
}

enum pkt_err
pkt_parse_full(const struct rte_mbuf *m, struct pkt_meta *meta,
	       uint16_t in_port)
{
	/* Headers are read from the first segment only; a multi-segment
	 * frame (jumbo) still has its lengths checked against pkt_len. */
	struct cur c = {
		.d = rte_pktmbuf_mtod(m, const uint8_t *),
		.cap = m->data_len,
		.len = m->pkt_len,
	};
	return parse_meta(&c, meta, in_port, true);
}

void
pkt_meta_tcp_built(const struct rte_mbuf *m, struct pkt_meta *meta,
		   uint16_t in_port, uint8_t vlan_count)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t off = ETH_HLEN + VLAN_HLEN * (uint32_t)vlan_count;
	const uint8_t *ip = d + off, *th;
	uint32_t doff;

	/* What parse_frame() leaves before its walk, then its walk's
	 * writes for this one shape, in the same order of fields. */
	memset(meta, 0, offsetof(struct pkt_meta, in_port));
	meta->in_port = in_port;
	for (uint8_t t = 0; t < vlan_count; t++) {
		meta->vlan_tci[t] = rd16(d + 14 + VLAN_HLEN * t);
		meta->flags |= t == 0 ? PKT_F_VLAN : PKT_F_QINQ;
	}
	meta->vlan_count = vlan_count;
	meta->ethertype = rd16(ip - 2);
	meta->l3_off = (uint16_t)off;
	meta->l4_proto = PROTO_TCP;
	if ((ip[0] >> 4) == 4) {
		meta->l3 = PKT_L3_IPV4;
		meta->l3_len = rd16(ip + 2);
		memcpy(meta->src, ip + 12, 4);
		memcpy(meta->dst, ip + 16, 4);
		meta->l4_off = (uint16_t)(off + 20);
	} else {
		meta->l3 = PKT_L3_IPV6;
		meta->l3_len = (uint32_t)rd16(ip + 4) + 40;
		memcpy(meta->src, ip + 8, 16);
		memcpy(meta->dst, ip + 24, 16);
		meta->l4_off = (uint16_t)(off + 40);
	}
	th = d + meta->l4_off;
	doff = (uint32_t)(th[12] >> 4) * 4;
	meta->sport = rd16(th);
	meta->dport = rd16(th + 2);
	meta->l4_len = (uint16_t)doff;
	meta->flags |= tcp_shape(th, doff) | PKT_F_L4;
	meta->payload_off = (uint16_t)(meta->l4_off + doff);
}

/* CRC32-C of one endpoint: the same value rte_hash_crc(addr, alen, port)
 * gives, computed in 4- and 8-byte steps without its generic loop. */
static inline uint32_t
endpoint_hash(const uint8_t *addr, bool v4, uint16_t port)
{
	if (v4) {
		uint32_t w;
		memcpy(&w, addr, 4);
		return rte_hash_crc_4byte(w, port);
	}
	uint64_t a, b;
	memcpy(&a, addr, 8);
	memcpy(&b, addr + 8, 8);
	return rte_hash_crc_8byte(b, rte_hash_crc_8byte(a, port));
}

uint32_t
pkt_tuple_hash(const struct pkt_meta *meta, uint32_t seed)
{
	/* Symmetric: each endpoint (address, port) is hashed on its own and
	 * the two are combined in a fixed order (smaller first), so a flow
	 * and its reverse give the same value, and (a:p -> b:q) still
	 * differs from (a:q -> b:p). CRC32-C runs in hardware on x86. */
	bool v4 = meta->l3 == PKT_L3_IPV4;
	uint32_t ea = endpoint_hash(meta->src, v4, meta->sport);
	uint32_t eb = endpoint_hash(meta->dst, v4, meta->dport);
	uint32_t lo = ea < eb ? ea : eb, hi = ea < eb ? eb : ea;
	uint32_t h = rte_hash_crc_4byte(lo, seed ^ meta->l4_proto);
	return rte_hash_crc_4byte(hi, h);
}

uint32_t
pkt_rss_hash(const uint8_t *key, const uint8_t *data, uint32_t len)
{
	/* The key's 32-bit window at the current bit, and the key's next
	 * byte to shift in behind it. */
	uint32_t win = (uint32_t)key[0] << 24 | (uint32_t)key[1] << 16 |
		       (uint32_t)key[2] << 8 | key[3];
	uint32_t h = 0;

	for (uint32_t i = 0; i < len; i++) {
		uint8_t next = key[i + 4];

		for (int b = 7; b >= 0; b--) {
			if (data[i] & (1u << b))
				h ^= win;
			win = win << 1 | (uint32_t)((next >> b) & 1);
		}
	}
	return h;
}
