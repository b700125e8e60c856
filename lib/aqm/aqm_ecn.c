/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CE marking (RFC 3168 section 5): ECT(0) and ECT(1) become CE; Not-ECT is
 * left alone so the caller drops instead. The IPv4 header checksum is fixed
 * incrementally (RFC 1624 eqn. 3); IPv6 has no header checksum.
 */
#include "aqm_priv.h"

#define ECN_MASK 0x03
#define ECN_CE   0x03

bool
aqm_ecn_mark_ce(struct rte_mbuf *m)
{
	const struct pkt_meta *meta = pkt_meta(m);
	uint8_t *ip;

	if (meta->l3 != PKT_L3_IPV4 && meta->l3 != PKT_L3_IPV6)
		return false;
	/* A shared buffer may be seen by others: leave it alone, drop instead. */
	if (!RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1)
		return false;
	if ((uint32_t)meta->l3_off + 12 > rte_pktmbuf_data_len(m))
		return false;
	ip = rte_pktmbuf_mtod_offset(m, uint8_t *, meta->l3_off);
	if (meta->l3 == PKT_L3_IPV4) {
		uint16_t old = (uint16_t)(ip[0] << 8 | ip[1]);
		uint16_t hc = (uint16_t)(ip[10] << 8 | ip[11]);

		if ((ip[1] & ECN_MASK) == 0)
			return false;
		if ((ip[1] & ECN_MASK) == ECN_CE)
			return true;
		ip[1] |= ECN_CE;
		hc = aqm_csum_replace16(hc, old, (uint16_t)(old | ECN_CE));
		ip[10] = (uint8_t)(hc >> 8);
		ip[11] = (uint8_t)hc;
		return true;
	}
	/* IPv6: the ECN field is bits 4-5 of the second byte (RFC 8200 s. 7). */
	if (((ip[1] >> 4) & ECN_MASK) == 0)
		return false;
	ip[1] |= ECN_CE << 4;
	return true;
}

bool
aqm_ecn_capable(struct rte_mbuf *m)
{
	const struct pkt_meta *meta = pkt_meta(m);
	const uint8_t *ip;

	if (meta->l3 != PKT_L3_IPV4 && meta->l3 != PKT_L3_IPV6)
		return false;
	if ((uint32_t)meta->l3_off + 2 > rte_pktmbuf_data_len(m))
		return false;
	ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, meta->l3_off);
	if (meta->l3 == PKT_L3_IPV4)
		return (ip[1] & ECN_MASK) != 0;
	return ((ip[1] >> 4) & ECN_MASK) != 0;
}
