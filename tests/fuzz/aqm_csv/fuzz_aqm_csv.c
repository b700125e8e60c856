/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for lib/aqm's subscriber CSV: aqm_subs_csv_load() on
 * the input as a whole file, and aqm_subs_csv_parse_line() on it as one
 * line (what `/sluice/aqm_set,<params>` hands the parser).
 *
 * The file lives in a memfd and is opened by its /proc/self/fd path, so
 * the loader's own fopen/fgets path runs. The target aborts when:
 *   - the load fails without "PATH:LINE: reason", or names a line that
 *     is not the first bad one (a NUL byte, or a line the line parser
 *     rejects: over 511 bytes, fields, prefix, rates, profile,
 *     isolation), or
 *     returns entries with the error;
 *   - the load succeeds although a line is bad, or its table is not
 *     exactly the entries of the good lines in order, each with its line
 *     number, an IPv4/IPv6 prefix with no host bits and a depth in range,
 *     and rates in 64kbit..100gbit;
 *   - the line parser leaves its reason (why) unterminated or empty on a
 *     rejected line, or anything but a string on any return;
 *   - ASan/LSan see an overflow or a leak (the entries are freed here).
 */

#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "aqm_subs.h"

#define CHECK(c) do { \
	if (!(c)) { \
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
		abort(); \
	} \
} while (0)

static int memfd = -1;
static char path[64];

/* parse_line on len bytes (no NUL among them); why is checked. */
static int
parse_one(const uint8_t *d, size_t len, struct aqm_sub_entry *e)
{
	char *line = malloc(len + 1);
	char why[128];
	int rc;

	memcpy(line, d, len);
	line[len] = '\0';
	memset(why, 0xaa, sizeof(why));
	rc = aqm_subs_csv_parse_line(line, e, why, sizeof(why));
	CHECK(rc == 0 || rc == 1 || rc == -EINVAL);
	CHECK(memchr(why, '\0', sizeof(why)) != NULL);
	if (rc < 0)
		CHECK(why[0] != '\0');
	free(line);
	return rc;
}

static void
check_entry(const struct aqm_sub_entry *e)
{
	unsigned int max = e->family == 4 ? 32 : 128;

	CHECK(e->family == 4 || e->family == 6);
	CHECK(e->depth >= 1 && e->depth <= max);
	for (unsigned int bit = e->depth; bit < 128; bit++)
		CHECK(!(e->addr[bit / 8] & (0x80 >> (bit % 8))));
	CHECK(e->down_bps >= AQM_RATE_MIN && e->down_bps <= AQM_RATE_MAX);
	CHECK(e->up_bps >= AQM_RATE_MIN && e->up_bps <= AQM_RATE_MAX);
	if (e->has_profile)
		CHECK(e->profile.framing <= AQM_FRAMING_PTM);
	if (e->has_isolation)
		CHECK(e->isolation <= AQM_ISO_TRIPLE);
}

static void
check_load(const uint8_t *data, size_t size)
{
	struct aqm_sub_entry *v = (struct aqm_sub_entry *)(uintptr_t)1, want[64];
	size_t i = 0, nwant = 0;
	unsigned int lineno = 0, bad = 0;
	char err[256];
	int rc;

	CHECK(ftruncate(memfd, 0) == 0);
	CHECK(pwrite(memfd, data, size, 0) == (ssize_t)size);
	memset(err, 0xaa, sizeof(err));
	rc = aqm_subs_csv_load(path, &v, err, sizeof(err));

	/* What the file should give, line by line. */
	while (i < size && bad == 0) {
		const uint8_t *nl = memchr(data + i, '\n', size - i);
		size_t len = nl ? (size_t)(nl - (data + i)) + 1 : size - i;
		struct aqm_sub_entry e;
		int r;

		lineno++;
		if (memchr(data + i, '\0', len) != NULL) {
			bad = lineno;
		} else {
			r = parse_one(data + i, len, &e);
			if (r < 0)
				bad = lineno;
			else if (r == 0 && nwant < RTE_DIM(want))
				want[nwant++] = e, want[nwant - 1].line = lineno;
			else if (r == 0)
				nwant++; /* counted, not compared */
		}
		i += len;
	}
	if (bad != 0) {
		char prefix[96];

		CHECK(rc < 0);
		CHECK(v == NULL);
		CHECK(memchr(err, '\0', sizeof(err)) != NULL);
		snprintf(prefix, sizeof(prefix), "%s:%u: ", path, bad);
		CHECK(strncmp(err, prefix, strlen(prefix)) == 0);
		CHECK(err[strlen(prefix)] != '\0');
		return;
	}
	CHECK(rc >= 0 && (size_t)rc == nwant);
	CHECK(rc == 0 || v != NULL);
	for (size_t k = 0; k < (size_t)rc; k++) {
		check_entry(&v[k]);
		if (k < RTE_DIM(want)) {
			CHECK(v[k].line == want[k].line);
			CHECK(v[k].family == want[k].family && v[k].depth == want[k].depth);
			CHECK(memcmp(v[k].addr, want[k].addr, sizeof(v[k].addr)) == 0);
			CHECK(v[k].down_bps == want[k].down_bps && v[k].up_bps == want[k].up_bps);
			CHECK(v[k].has_profile == want[k].has_profile);
			CHECK(v[k].has_isolation == want[k].has_isolation &&
			      v[k].isolation == want[k].isolation);
		}
	}
	free(v);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	memfd = memfd_create("subscribers.csv", 0);
	if (memfd < 0)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct aqm_sub_entry e;
	size_t n;

	if (size > 1 << 16)
		return 0;
	check_load(data, size);
	/* The whole input as one line, up to a NUL (a telemetry parameter). */
	n = memchr(data, '\0', size) ? (size_t)((const uint8_t *)memchr(data, '\0', size) - data)
				      : size;
	if (parse_one(data, n, &e) == 0)
		check_entry(&e);
	return 0;
}
