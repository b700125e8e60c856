/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SYN cookies (RFC 4987 3.6): when the SYN backlog is full, a SYN to a
 * listening port is answered without keeping state. Our ISN carries the
 * proof: 5 bits of a 64 s clock, 2 bits of MSS index, and 25 bits of a
 * SipHash of the 4-tuple, that clock and the peer's ISN. The ACK that
 * completes the handshake is checked against it and the connection is
 * built from it. Window scaling, SACK and timestamps cannot be
 * remembered, so the cookie SYN-ACK does not offer them.
 */

#include <string.h>

#include "tcp_impl.h"
#include "tcp_siphash.h"

static const uint16_t cookie_mss[4] = { 536, 1200, 1400, 1460 };

#define COOKIE_T_SHIFT 36 /* 2^36 ns = 68.7 s per clock step */

static uint32_t
cookie_hash(const struct tcp_engine *e, const struct tcp_key *k, uint32_t t,
	    uint32_t peer_isn)
{
	uint8_t buf[sizeof(*k) + 8];

	memcpy(buf, k, sizeof(*k));
	memcpy(buf + sizeof(*k), &t, 4);
	memcpy(buf + sizeof(*k) + 4, &peer_isn, 4);
	return (uint32_t)tcp_siphash24(e->p.isn_key, buf, sizeof(buf)) & 0x1ffffff;
}

uint32_t
tcp_cookie_make(const struct tcp_engine *e, const struct tcp_key *k,
		uint32_t peer_isn, uint16_t peer_mss)
{
	uint32_t t = (uint32_t)(e->now >> COOKIE_T_SHIFT) & 31;
	uint32_t mi = 0;

	for (uint32_t i = 0; i < 4; i++)
		if (cookie_mss[i] <= peer_mss)
			mi = i;
	return t << 27 | mi << 25 | cookie_hash(e, k, t, peer_isn);
}

int
tcp_cookie_check(const struct tcp_engine *e, const struct tcp_key *k,
		 uint32_t peer_isn, uint32_t cookie, uint16_t *mss)
{
	uint32_t now_t = (uint32_t)(e->now >> COOKIE_T_SHIFT) & 31;
	uint32_t t = cookie >> 27;

	/* Valid for the current and the previous clock step. */
	if (((now_t - t) & 31) > 1)
		return -1;
	if ((cookie & 0x1ffffff) != cookie_hash(e, k, t, peer_isn))
		return -1;
	*mss = cookie_mss[(cookie >> 25) & 3];
	return 0;
}
