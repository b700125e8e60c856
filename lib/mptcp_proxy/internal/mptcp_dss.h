/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MPTCP_DSS_H
#define MPTCP_DSS_H

/*
 * The one decoder and the one encoder of a DSS option's fields (RFC 8684
 * 3.3), shared by the generic option parser and writer (mptcp_options.c)
 * and the subflow's fast paths (mptcp_subflow.c), so they never
 * disagree.
 */
#include <stdbool.h>
#include <stdint.h>

#include "mptcp_be.h"
#include "mptcp_options.h"

/* A DSS option's length without the checksum, from its flags. */
static inline unsigned int
mptcp_dss_len(uint8_t flags)
{
	unsigned int len = 4;

	if (flags & MPTCP_DSS_DATA_ACK)
		len += (flags & MPTCP_DSS_ACK64) ? 8 : 4;
	if (flags & MPTCP_DSS_MAP)
		len += ((flags & MPTCP_DSS_DSN64) ? 8 : 4) + 4 + 2;
	return len;
}

/*
 * Decode the DSS option at p (kind at p[0], len = p[1], at least 3 bytes
 * readable and len bytes in all): false when len is not what its flags
 * ask for (with a mapping, 2 more for a checksum). Fills o->sub, o->len
 * and every field of o->u.dss; the rest of *o is left as it was.
 */
static inline bool
mptcp_dss_decode(const uint8_t *p, unsigned int len, struct mptcp_opt *o)
{
	const uint8_t *q = p + 4;
	uint8_t f;
	unsigned int want;

	if (len < 4)
		return false;
	f = p[3] & MPTCP_DSS_FLAGS;
	want = mptcp_dss_len(f);
	o->u.dss.has_csum = (f & MPTCP_DSS_MAP) && len == want + 2;
	if (len != want && !o->u.dss.has_csum)
		return false;
	o->sub = MPTCP_SUB_DSS;
	o->len = (uint8_t)len;
	o->u.dss.flags = f;
	o->u.dss.data_ack = 0;
	if (f & MPTCP_DSS_DATA_ACK) {
		if (f & MPTCP_DSS_ACK64) {
			o->u.dss.data_ack = get_be64(q);
			q += 8;
		} else {
			o->u.dss.data_ack = get_be32(q);
			q += 4;
		}
	}
	o->u.dss.dsn = 0;
	o->u.dss.ssn = 0;
	o->u.dss.data_len = 0;
	o->u.dss.csum = 0;
	if (f & MPTCP_DSS_MAP) {
		if (f & MPTCP_DSS_DSN64) {
			o->u.dss.dsn = get_be64(q);
			q += 8;
		} else {
			o->u.dss.dsn = get_be32(q);
			q += 4;
		}
		o->u.dss.ssn = get_be32(q);
		o->u.dss.data_len = get_be16(q + 4);
		if (o->u.dss.has_csum)
			o->u.dss.csum = get_be16(q + 6);
	}
	return true;
}

/*
 * Encode a DSS option at b: len bytes in all (mptcp_dss_len(flags), 2
 * more with has_csum after a mapping), checked by the caller against its
 * room. The fields a flag does not ask for are not written.
 */
static inline void
mptcp_dss_encode(uint8_t *b, unsigned int len, uint8_t flags, uint64_t data_ack,
		 uint64_t dsn, uint32_t ssn, uint16_t data_len, bool has_csum,
		 uint16_t csum)
{
	uint8_t *q = b + 4;

	b[0] = MPTCP_OPT_KIND;
	b[1] = (uint8_t)len;
	b[2] = MPTCP_SUB_DSS << 4;
	b[3] = flags & MPTCP_DSS_FLAGS;
	if (flags & MPTCP_DSS_DATA_ACK) {
		if (flags & MPTCP_DSS_ACK64) {
			put_be64(q, data_ack);
			q += 8;
		} else {
			put_be32(q, (uint32_t)data_ack);
			q += 4;
		}
	}
	if (flags & MPTCP_DSS_MAP) {
		if (flags & MPTCP_DSS_DSN64) {
			put_be64(q, dsn);
			q += 8;
		} else {
			put_be32(q, (uint32_t)dsn);
			q += 4;
		}
		put_be32(q, ssn);
		put_be16(q + 4, data_len);
		if (has_csum)
			put_be16(q + 6, csum);
	}
}

#endif /* MPTCP_DSS_H */
