/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for lib/aqm's LibreQoS ShapedDevices.csv parser,
 * aqm_subs_lqos_parse(), on the input as a whole file. The target aborts
 * when:
 *   - a failure returns entries, or its message is not "NAME:LINE: reason"
 *     (or "NAME: reason" for a file without a header) with a line that
 *     exists;
 *   - a success returns an entry that is not an IPv4/IPv6 prefix with no
 *     host bits and a depth in range, rates in 64kbit..100gbit, a nonzero
 *     group and the line of a row; two entries with one prefix; two
 *     entries of one group with different rates; or a report whose
 *     prefix count is not the entry count, or with more circuits than
 *     rows;
 *   - ASan/LSan see an overflow or a leak (the entries are freed here).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aqm_subs.h"

#define CHECK(c) do { \
	if (!(c)) { \
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
		abort(); \
	} \
} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct aqm_sub_entry *v = (struct aqm_sub_entry *)(uintptr_t)1;
	struct aqm_lqos_report rep;
	unsigned int lines = 1;
	char err[320];
	int rc;

	if (size > 1 << 16)
		return 0;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	memset(err, 0xaa, sizeof(err));
	rc = aqm_subs_lqos_parse((const char *)data, size, "SD", &v, &rep, err, sizeof(err));
	if (rc < 0) {
		unsigned int line = 0;

		CHECK(rc == -EINVAL || rc == -ENOMEM);
		CHECK(v == NULL);
		CHECK(memchr(err, '\0', sizeof(err)) != NULL);
		CHECK(strncmp(err, "SD:", 3) == 0);
		if (sscanf(err, "SD:%u: ", &line) == 1)
			CHECK(line >= 1 && line <= lines);
		else
			CHECK(strncmp(err, "SD: ", 4) == 0);
		return 0;
	}
	CHECK((uint32_t)rc == rep.prefixes);
	CHECK(rep.circuits <= rep.rows);
	CHECK(rc == 0 || v != NULL);
	for (int k = 0; k < rc; k++) {
		const struct aqm_sub_entry *e = &v[k];
		unsigned int max = e->family == 4 ? 32 : 128;

		CHECK(e->family == 4 || e->family == 6);
		CHECK(e->depth >= 1 && e->depth <= max);
		for (unsigned int bit = e->depth; bit < 128; bit++)
			CHECK(!(e->addr[bit / 8] & (0x80 >> (bit % 8))));
		CHECK(e->down_bps >= AQM_RATE_MIN && e->down_bps <= AQM_RATE_MAX);
		CHECK(e->up_bps >= AQM_RATE_MIN && e->up_bps <= AQM_RATE_MAX);
		CHECK(e->group != 0);
		CHECK(e->line >= 2 && e->line <= lines);
		/* Quadratic, but inputs are small. */
		for (int j = 0; j < k && j < 512; j++) {
			const struct aqm_sub_entry *o = &v[j];

			CHECK(!(o->family == e->family && o->depth == e->depth &&
				memcmp(o->addr, e->addr, sizeof(e->addr)) == 0));
			if (o->group == e->group)
				CHECK(o->down_bps == e->down_bps && o->up_bps == e->up_bps);
		}
	}
	free(v);
	return 0;
}
