/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Intercept policy: which SYNs the proxy takes. The rules come parsed
 * (struct mptcp_proxy_rule); a SYN signed with TCP-MD5 or TCP-AO is never
 * taken, whatever the rules say: only the real ends hold its key.
 */
#include <string.h>

#include "proxy_priv.h"
#include "tcpopt.h"

void
proxy_rules_add(struct proxy_rules *rs, const struct mptcp_proxy_rule *r)
{
	unsigned bytes = r->family == 4 ? 4 : 16;
	unsigned plen = r->plen > bytes * 8 ? bytes * 8 : r->plen;
	uint8_t a[16] = { 0 }, m[16] = { 0 };

	for (unsigned i = 0; i < bytes; i++) {
		unsigned bits = plen > i * 8 ? plen - i * 8 : 0;

		m[i] = bits >= 8 ? 0xff : (uint8_t)(0xff00u >> bits);
		a[i] = r->addr[i] & m[i];
	}
	if (r->family == 4 && rs->n4 < MPTCP_PROXY_MAX_RULES) {
		memcpy(&rs->r4[rs->n4].addr, a, 4);
		memcpy(&rs->r4[rs->n4].mask, m, 4);
		rs->r4[rs->n4++].port = r->port;
	} else if (r->family == 6 && rs->n6 < MPTCP_PROXY_MAX_RULES) {
		memcpy(rs->r6[rs->n6].addr, a, 16);
		memcpy(rs->r6[rs->n6].mask, m, 16);
		rs->r6[rs->n6++].port = r->port;
	}
}

/* A frame of no held connection reads every rule of its family
 * (proxied connections' own frames skip them: mptcp_proxy.c), the
 * address loaded once: one masked word a rule for IPv4, two for IPv6. */
bool
proxy_rules_match(const struct proxy_rules *rs, uint8_t family, const uint8_t *a,
		  int port)
{
	if (family == 4) {
		uint32_t a4;

		memcpy(&a4, a, 4);
		for (uint32_t i = 0; i < rs->n4; i++)
			if (((a4 ^ rs->r4[i].addr) & rs->r4[i].mask) == 0 &&
			    (rs->r4[i].port == 0 || port < 0 || rs->r4[i].port == port))
				return true;
	} else if (family == 6) {
		uint64_t a0, a1;

		memcpy(&a0, a, 8);
		memcpy(&a1, a + 8, 8);
		for (uint32_t i = 0; i < rs->n6; i++)
			if ((((a0 ^ rs->r6[i].addr[0]) & rs->r6[i].mask[0]) |
			     ((a1 ^ rs->r6[i].addr[1]) & rs->r6[i].mask[1])) == 0 &&
			    (rs->r6[i].port == 0 || port < 0 || rs->r6[i].port == port))
				return true;
	}
	return false;
}

bool
proxy_policy_match(const struct mptcp_proxy *px, uint8_t family,
		   const uint8_t *a, int port)
{
	return proxy_rules_match(&px->rules, family, a, port);
}

uint16_t
proxy_syn_scan(const uint8_t *th, unsigned hlen, bool *sig)
{
	struct tcpopt_parsed po;
	uint16_t mss = 536; /* RFC 9293 3.7.1 */

	*sig = false;
	(void)tcpopt_parse(th, hlen, &po); /* opt[]: the valid options */
	for (unsigned i = 0; i < po.n; i++) {
		const uint8_t *o = th + po.opt[i].off;

		if (po.opt[i].kind == TCPOPT_KIND_MSS)
			mss = (uint16_t)(o[2] << 8 | o[3]);
		else if (po.opt[i].kind == TCPOPT_KIND_MD5 ||
			 po.opt[i].kind == TCPOPT_KIND_AO)
			*sig = true;
	}
	return mss;
}

/* Options the proxy carries from one leg's SYN (or SYN-ACK) to the
 * other's, beyond what the engine negotiates per leg itself: TCP Fast
 * Open, experiments (253, 254) and unknown kinds. Not signatures
 * (TCP-MD5, TCP-AO: they cannot survive re-origination), not MPTCP
 * (terminated here, never relayed), not AccECN (the legs negotiate no
 * ECN). */
bool
proxy_xopt_carried(uint8_t kind)
{
	switch (kind) {
	case TCPOPT_KIND_MD5:
	case TCPOPT_KIND_AO:
	case TCPOPT_KIND_MPTCP:
	case TCPOPT_KIND_ACCECN0:
	case TCPOPT_KIND_ACCECN1:
		return false;
	default:
		return true;
	}
}
