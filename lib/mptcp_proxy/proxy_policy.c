/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Intercept policy: which SYNs the proxy takes. The rules come parsed
 * (struct mptcp_proxy_rule); a SYN signed with TCP-MD5 or TCP-AO is never
 * taken, whatever the rules say: only the real ends hold its key.
 */
#include <string.h>

#include "proxy_priv.h"
#include "tcpopt.h"

static bool
rule_match(const struct mptcp_proxy_rule *r, uint8_t family, const uint8_t *a,
	   int port)
{
	unsigned full, rem;

	if (r->family != family || (r->port != 0 && port >= 0 && r->port != port))
		return false;
	full = r->plen / 8;
	rem = r->plen % 8;
	/* Every frame of every intercepted flow comes here: a /0 rule
	 * (intercept everything) skips the call. */
	if (full != 0 && memcmp(r->addr, a, full) != 0)
		return false;
	if (rem != 0 && ((a[full] ^ r->addr[full]) & (uint8_t)(0xff00u >> rem)))
		return false;
	return true;
}

bool
proxy_policy_match(const struct mptcp_proxy *px, uint8_t family,
		   const uint8_t *a, int port)
{
	for (uint32_t i = 0; i < px->nrules; i++)
		if (rule_match(&px->rules[i], family, a, port))
			return true;
	return false;
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
