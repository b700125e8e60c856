/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Subscriber CSV: "prefix,down,up[,profile[,isolation[,autorate[,floor_down
 * [,floor_up[,ceiling_down[,ceiling_up]]]]]]]". Errors name file, line and
 * reason; a file with any error yields nothing (never half a table).
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rte_common.h>

#include "aqm_subs.h"
#include "ini.h"

#define CSV_FIELDS 10

/* Column names after isolation, for messages; the autorate limits by
 * enum aqm_dir. */
static const char *const ar_limit_col[2][2] = {
	{ "floor_down", "ceiling_down" }, { "floor_up", "ceiling_up" },
};

/* The one prefix parser (lib/ini); host bits cleared, /0 refused. */
static int
parse_prefix(const char *s, struct aqm_sub_entry *e)
{
	struct ini_prefix p;
	char why[128];

	if (ini_parse_prefix(s, false, &p, why, sizeof(why)) < 0)
		return -EINVAL;
	e->family = p.family;
	e->depth = p.depth;
	memcpy(e->addr, p.addr, sizeof(e->addr));
	return 0;
}

/* Columns 6..10: autorate, floor_down, floor_up, ceiling_down, ceiling_up. */
static int
parse_autorate(char *const *f, unsigned int nf, struct aqm_sub_entry *e,
	       char *why, size_t whylen)
{
	static const struct { const char *name; uint8_t dirs; } modes[] = {
		{ "off", 0 }, { "down", 1 << AQM_DIR_DOWN }, { "up", 1 << AQM_DIR_UP },
		{ "both", (1 << AQM_DIR_DOWN) | (1 << AQM_DIR_UP) },
	};

	if (nf >= 6 && *f[5] != '\0') {
		unsigned int i;

		for (i = 0; i < RTE_DIM(modes); i++)
			if (strcasecmp(f[5], modes[i].name) == 0)
				break;
		if (i == RTE_DIM(modes)) {
			snprintf(why, whylen, "unknown autorate '%s' (off, down, up, both)", f[5]);
			return -EINVAL;
		}
		e->has_autorate = true;
		e->autorate = modes[i].dirs;
	}
	for (unsigned int d = 0; d < 2; d++) {
		for (unsigned int c = 0; c < 2; c++) {
			/* floor_down, floor_up, ceiling_down, ceiling_up */
			unsigned int col = 6 + c * 2 + d;
			uint64_t *dst = c ? &e->ar_ceiling_bps[d] : &e->ar_floor_bps[d];

			if (nf <= col || *f[col] == '\0')
				continue;
			if (aqm_parse_rate(f[col], dst) != 0 ||
			    *dst < AQM_RATE_MIN || *dst > AQM_RATE_MAX) {
				snprintf(why, whylen, "bad %s '%s' (64kbit..100gbit)",
					 ar_limit_col[d][c], f[col]);
				return -EINVAL;
			}
		}
		if (e->ar_floor_bps[d] && e->ar_ceiling_bps[d] &&
		    e->ar_ceiling_bps[d] < e->ar_floor_bps[d]) {
			snprintf(why, whylen, "%s below %s", ar_limit_col[d][1],
				 ar_limit_col[d][0]);
			return -EINVAL;
		}
	}
	return 0;
}

int
aqm_subs_csv_parse_line(const char *line, struct aqm_sub_entry *e,
			char *why, size_t whylen)
{
	char buf[512], *f[CSV_FIELDS], *p, *s;
	unsigned int nf = 0;

	/* why is always a string: callers (/sluice/aqm_set) may echo it. */
	if (whylen > 0)
		why[0] = '\0';
	if (strlen(line) >= sizeof(buf)) {
		snprintf(why, whylen, "line longer than %zu bytes", sizeof(buf) - 1);
		return -EINVAL;
	}
	strcpy(buf, line);
	if ((p = strchr(buf, '#')) != NULL)
		*p = '\0';
	s = ini_trim(buf);
	if (*s == '\0')
		goto nothing;
	for (p = s; nf < CSV_FIELDS; ) {
		char *c = strchr(p, ',');

		if (c != NULL)
			*c = '\0';
		f[nf++] = ini_trim(p);
		if (c == NULL)
			break;
		p = c + 1;
		if (nf == CSV_FIELDS) {
			snprintf(why, whylen, "more than %d fields", CSV_FIELDS);
			return -EINVAL;
		}
	}
	if (strcasecmp(f[0], "prefix") == 0)
		goto nothing;
	if (nf < 3) {
		snprintf(why, whylen, "expected prefix,down,up[,profile[,isolation[,autorate[,floor_down[,floor_up[,ceiling_down[,ceiling_up]]]]]]]");
		return -EINVAL;
	}
	memset(e, 0, sizeof(*e));
	if (parse_prefix(f[0], e) != 0) {
		snprintf(why, whylen, "bad prefix '%s'", f[0]);
		return -EINVAL;
	}
	if (aqm_parse_rate(f[1], &e->down_bps) != 0 || e->down_bps == 0) {
		snprintf(why, whylen, "bad down rate '%s'", f[1]);
		return -EINVAL;
	}
	if (aqm_parse_rate(f[2], &e->up_bps) != 0 || e->up_bps == 0) {
		snprintf(why, whylen, "bad up rate '%s'", f[2]);
		return -EINVAL;
	}
	if ((e->down_bps < AQM_RATE_MIN || e->down_bps > AQM_RATE_MAX) ||
	    (e->up_bps < AQM_RATE_MIN || e->up_bps > AQM_RATE_MAX)) {
		snprintf(why, whylen, "rate out of range 64kbit..100gbit");
		return -EINVAL;
	}
	if (nf >= 4 && *f[3] != '\0') {
		if (aqm_shaper_profile(f[3], &e->profile) != 0) {
			snprintf(why, whylen, "unknown overhead profile '%s'", f[3]);
			return -EINVAL;
		}
		e->has_profile = true;
	}
	if (nf >= 5 && *f[4] != '\0') {
		enum aqm_isolation iso;

		if (aqm_parse_isolation(f[4], &iso) != 0) {
			snprintf(why, whylen,
				 "unknown isolation '%s' (flows, dual-srchost, dual-dsthost, triple-isolate)",
				 f[4]);
			return -EINVAL;
		}
		e->has_isolation = true;
		e->isolation = (uint8_t)iso;
	}
	return parse_autorate(f, nf, e, why, whylen);
nothing:
	snprintf(why, whylen, "no subscriber: blank, comment or header line");
	return 1;
}

/*
 * One line of f into line (cap bytes, newline kept, NUL-terminated).
 * Returns its length, which is cap or more for a line that did not fit
 * (the rest of it is consumed), or -1 at the end of the file. *nul tells
 * whether the line held a NUL byte, which fgets() would hide.
 */
static long
read_line(FILE *f, char *line, size_t cap, bool *nul)
{
	size_t n = 0;
	int c = EOF;

	*nul = false;
	while ((c = getc(f)) != EOF) {
		if (c == '\0')
			*nul = true;
		if (n < cap - 1)
			line[n] = (char)c;
		n++;
		if (c == '\n')
			break;
	}
	if (n == 0)
		return -1;
	line[n < cap - 1 ? n : cap - 1] = '\0';
	return n < cap ? (long)n : (long)cap;
}

int
aqm_subs_csv_load(const char *path, struct aqm_sub_entry **entries,
		  char *err, size_t errlen)
{
	struct aqm_sub_entry *v = NULL, e;
	size_t cap = 0, n = 0;
	char line[1024], why[128];
	unsigned int lineno = 0;
	FILE *f = fopen(path, "r");
	bool nul;
	long len;
	int rc = 0;

	*entries = NULL;
	if (f == NULL) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	while ((len = read_line(f, line, sizeof(line), &nul)) >= 0) {
		lineno++;
		if ((size_t)len >= sizeof(line)) {
			snprintf(err, errlen, "%s:%u: line too long", path, lineno);
			rc = -EINVAL;
			break;
		}
		if (nul) {
			snprintf(err, errlen, "%s:%u: NUL byte in line", path, lineno);
			rc = -EINVAL;
			break;
		}
		rc = aqm_subs_csv_parse_line(line, &e, why, sizeof(why));
		if (rc < 0) {
			snprintf(err, errlen, "%s:%u: %s", path, lineno, why);
			break;
		}
		if (rc == 1) { /* blank, comment or header */
			rc = 0;
			continue;
		}
		if (n == cap) {
			struct aqm_sub_entry *nv;

			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (nv == NULL) {
				snprintf(err, errlen, "%s:%u: out of memory", path, lineno);
				rc = -ENOMEM;
				break;
			}
			v = nv;
		}
		e.line = lineno;
		v[n++] = e;
	}
	fclose(f);
	if (rc < 0) {
		free(v);
		return rc;
	}
	*entries = v;
	return (int)n;
}
