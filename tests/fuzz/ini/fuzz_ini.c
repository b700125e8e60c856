/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer: any bytes given as a configuration file give a parsed file or
 * a one-line error, never a crash, a leak or an out-of-bounds access. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ini.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	struct ini_file *f = ini_parse("fuzz.ini", (const char *)data, size,
				       err, sizeof(err));
	if (f == NULL) {
		if (memchr(err, '\n', strlen(err)) != NULL)
			abort(); /* errors are one line */
		return 0;
	}
	for (unsigned i = 0; i < f->count; i++) {
		uint64_t v;
		bool b;
		(void)ini_get(f, f->entries[i].section, f->entries[i].key);
		(void)ini_parse_u64(f->entries[i].value, 0, UINT64_MAX, &v, err, sizeof(err));
		(void)ini_parse_rate_bps(f->entries[i].value, &v, err, sizeof(err));
		(void)ini_parse_time_ns(f->entries[i].value, 1000, &v, err, sizeof(err));
		(void)ini_parse_size(f->entries[i].value, &v, err, sizeof(err));
		(void)ini_parse_bool(f->entries[i].value, &b, err, sizeof(err));
	}
	ini_free(f);
	return 0;
}
