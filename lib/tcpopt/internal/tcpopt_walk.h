/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_TCPOPT_WALK_H
#define SLUICE_TCPOPT_WALK_H

/*
 * Internal: the one option walker every entry point uses, so parsing and
 * rewriting can never disagree about where an option starts or ends.
 * Inline, because it is the hot loop of tcpopt_process().
 */

#include <stdint.h>

#include "tcpopt.h"

#define TCPOPT_HDR_MIN  20   /* data offset 5 */
#define TCPOPT_TH_SYN   0x02
#define TCPOPT_TH_ACK   0x10

/* Valid lengths per kind; 0 for kinds outside TCPOPT_KIND_LIST. */
extern const uint64_t tcpopt_kind_len_mask[256];
/* Valid lengths per MPTCP subtype; 0 for unknown subtypes and DSS. */
extern const uint64_t tcpopt_mptcp_len_mask[16];

/* Segment class from the TCP flags byte. */
static inline enum tcpopt_seg
tcpopt_seg_of(uint8_t th_flags)
{
	if (!(th_flags & TCPOPT_TH_SYN))
		return TCPOPT_SEG_OTHER;
	return (th_flags & TCPOPT_TH_ACK) ? TCPOPT_SEG_SYNACK : TCPOPT_SEG_SYN;
}

/*
 * Check the fixed header. On success *hlen is the data offset in bytes,
 * which is never more than avail.
 */
static inline enum tcpopt_mal
tcpopt_hdr_check(const uint8_t *tcp, uint32_t avail, unsigned int *hlen)
{
	unsigned int doff;

	if (avail < TCPOPT_HDR_MIN)
		return TCPOPT_MAL_HDR_TRUNCATED;
	doff = (unsigned int)(tcp[12] >> 4) * 4;
	if (doff < TCPOPT_HDR_MIN)
		return TCPOPT_MAL_DOFF_SHORT;
	if (doff > avail)
		return TCPOPT_MAL_DOFF_PAST_END;
	*hlen = doff;
	return TCPOPT_MAL_NONE;
}

/*
 * Length of a DSS option implied by its flags (RFC 8684, section 3.3):
 * 4 fixed bytes, a Data ACK of 4 or 8 bytes when A is set, and when M is
 * set a mapping of DSN (4 or 8) + subflow sequence (4) + data-level
 * length (2), followed by a 2-byte checksum only when checksums were
 * negotiated -- which we cannot know, so both lengths are valid.
 */
static inline bool
tcpopt_dss_len_ok(const uint8_t *o, unsigned int len)
{
	uint8_t fl;
	unsigned int want = 4;

	if (len < 4)
		return false;
	fl = o[3];
	if (fl & 0x01)                     /* A: Data ACK present */
		want += (fl & 0x02) ? 8 : 4; /* a: 8-octet Data ACK */
	if (fl & 0x04)                     /* M: mapping present */
		want += ((fl & 0x08) ? 8 : 4) + 4 + 2; /* m: 8-octet DSN */
	return len == want || ((fl & 0x04) && len == want + 2);
}

/*
 * Decode the option starting at *pos (pos < end <= 60). Returns 1 with *o
 * filled and *pos advanced, 0 at the end of the list (EOL ends it too,
 * after being reported), or the negated malformed reason, *pos left at the
 * offending option.
 */
static inline int
tcpopt_walk_next(const uint8_t *tcp, unsigned int *pos, unsigned int end,
		 struct tcpopt_opt *o)
{
	unsigned int p = *pos, len;
	uint8_t kind;
	uint64_t mask;

	if (p >= end)
		return 0;
	kind = tcp[p];
	o->kind = kind;
	o->off = (uint8_t)p;
	o->sub = 0;
	o->exid = 0;
	if (kind <= TCPOPT_KIND_NOP) {
		o->len = 1;
		/* After EOL comes padding, not options (RFC 9293, 3.2). */
		*pos = kind == TCPOPT_KIND_EOL ? end : p + 1;
		return 1;
	}
	if (p + 1 >= end)
		return -TCPOPT_MAL_TRUNCATED;
	len = tcp[p + 1];
	if (len < 2)
		return -TCPOPT_MAL_LEN_BELOW_2;
	if (len > end - p)
		return -TCPOPT_MAL_LEN_PAST_HEADER;
	/* len <= 40 here, so the shift is defined. */
	mask = tcpopt_kind_len_mask[kind];
	if (mask != 0 && !((mask >> len) & 1))
		return -TCPOPT_MAL_BAD_KIND_LEN;
	o->len = (uint8_t)len;
	if (kind == TCPOPT_KIND_MPTCP) {
		uint8_t sub = tcp[p + 2] >> 4;
		uint64_t smask = tcpopt_mptcp_len_mask[sub];

		o->sub = sub;
		if (sub == TCPOPT_MPTCP_DSS) {
			if (!tcpopt_dss_len_ok(tcp + p, len))
				return -TCPOPT_MAL_BAD_MPTCP_LEN;
		} else if (smask != 0 && !((smask >> len) & 1)) {
			return -TCPOPT_MAL_BAD_MPTCP_LEN;
		}
	} else if (kind == TCPOPT_KIND_EXP1 || kind == TCPOPT_KIND_EXP2) {
		o->exid = (uint16_t)(tcp[p + 2] << 8 | tcp[p + 3]);
	}
	*pos = p + len;
	return 1;
}

#endif /* SLUICE_TCPOPT_WALK_H */
