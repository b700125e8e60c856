/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer: the frame parser must never read outside the frame and must
 * leave consistent metadata. libFuzzer hands us an exactly-sized heap
 * buffer, so ASan flags any read past it. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pkt_meta m, r, w;

	if (size > 65535)
		return 0;
	enum pkt_err e = pkt_parse_buf(data, (uint32_t)size, &m, 1);
	/* The fast path for common shapes must agree with the full walk on
	 * every byte of metadata. */
	memset(&w, 0xa5, sizeof(w));
	if (pkt_parse_buf_walk(data, (uint32_t)size, &w, 1) != e ||
	    memcmp(&m, &w, offsetof(struct pkt_meta, in_port) + 2) != 0)
		abort();
	if (e >= PKT_ERR_MAX || e != m.err)
		abort();
	if ((e != PKT_ERR_NONE) != ((m.flags & PKT_F_MALFORMED) != 0))
		abort();
	if (e == PKT_ERR_NONE && m.l3 != PKT_L3_NONE) {
		if (m.l3_off >= size || m.l3_off + m.l3_len > size)
			abort();
	}
	if (m.flags & PKT_F_L4) {
		if (m.l4_off + m.l4_len > size || m.payload_off > size ||
		    m.l4_off < m.l3_off)
			abort();
	}
	/* The symmetric hash must not care about direction. */
	r = m;
	memcpy(r.src, m.dst, 16);
	memcpy(r.dst, m.src, 16);
	r.sport = m.dport;
	r.dport = m.sport;
	if (pkt_tuple_hash(&m, 1) != pkt_tuple_hash(&r, 1))
		abort();
	return 0;
}
