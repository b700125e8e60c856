/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * LibreQoS's ShapedDevices.csv as a subscriber list: one row per device,
 * the devices of one Circuit ID share one pair of pipes (a group), their
 * IPv4 and IPv6 fields are quoted lists of addresses or prefixes.
 * Written from the format's documentation (README.md has the mapping);
 * errors name file, line and reason, and a file with any error yields
 * nothing, as the native parser does.
 */
#include <arpa/inet.h>
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

#define LQ_MAX_FIELDS 32
#define LQ_LINE_MAX 4096

/* The columns sluice reads or reports, by their header names. */
enum lq_col {
	LQ_CIRCUIT_ID, LQ_CIRCUIT_NAME, LQ_DEVICE_ID, LQ_DEVICE_NAME,
	LQ_PARENT, LQ_MAC, LQ_IPV4, LQ_IPV6, LQ_DOWN_MIN, LQ_UP_MIN,
	LQ_DOWN_MAX, LQ_UP_MAX, LQ_COMMENT, LQ_NCOLS
};

static const char *const lq_names[LQ_NCOLS] = {
	"Circuit ID", "Circuit Name", "Device ID", "Device Name", "Parent Node",
	"MAC", "IPv4", "IPv6", "Download Min Mbps", "Upload Min Mbps",
	"Download Max Mbps", "Upload Max Mbps", "Comment",
};

/* Columns whose value sluice cannot honour: counted per row that sets one. */
static const enum lq_col lq_unhonoured[] = {
	LQ_DOWN_MIN, LQ_UP_MIN, LQ_PARENT, LQ_MAC,
};

struct lq_circuit {
	uint64_t group;
	uint64_t down, up;
	uint32_t line;
	char *id;
};

struct lq_state {
	const char *path;
	int col[LQ_NCOLS];            /* field index of each column, -1 absent */
	unsigned int nfields;         /* of the header */
	bool extra_used[LQ_MAX_FIELDS]; /* unknown columns that held a value */
	struct lq_circuit *circ;      /* open addressing, 2^k slots */
	uint32_t circ_mask, ncirc;
	struct aqm_sub_entry *v;
	size_t n, cap;
	struct aqm_lqos_report *rep;
	char header[LQ_MAX_FIELDS][40];
};

/*
 * Split one CSV record (RFC 4180: a field in double quotes may hold
 * commas, and "" stands for one quote) in place. Returns the field count,
 * or -1 with why.
 */
static int
split(char *line, char **f, unsigned int max, char *why, size_t whylen)
{
	unsigned int n = 0;
	char *r = line, *w;

	for (;;) {
		if (n == max) {
			snprintf(why, whylen, "more than %u fields", max);
			return -1;
		}
		while (*r == ' ' || *r == '\t')
			r++;
		f[n] = w = r;
		if (*r == '"') {
			r++;
			for (;;) {
				if (*r == '\0') {
					snprintf(why, whylen, "field %u: quote not closed on this line", n + 1);
					return -1;
				}
				if (*r == '"' && r[1] == '"') {
					*w++ = '"';
					r += 2;
				} else if (*r == '"') {
					r++;
					break;
				} else {
					*w++ = *r++;
				}
			}
			while (*r == ' ' || *r == '\t')
				r++;
			if (*r != ',' && *r != '\0') {
				snprintf(why, whylen, "field %u: text after its closing quote", n + 1);
				return -1;
			}
		} else {
			while (*r != ',' && *r != '\0') {
				if (*r == '"') {
					snprintf(why, whylen, "field %u: a quote inside an unquoted field", n + 1);
					return -1;
				}
				*w++ = *r++;
			}
		}
		char end = *r;
		*w = '\0';
		f[n] = ini_trim(f[n]);
		n++;
		if (end == '\0')
			return (int)n;
		r++;
	}
}

/*
 * "Mbps" as LibreQoS writes it: digits, optionally a point and up to six
 * decimals (1 Mbps = 10^6 bit/s, so the rate is exact). Empty: -ENOENT.
 */
static int
parse_mbps(const char *s, uint64_t *bps)
{
	uint64_t v = 0, scale = 1000000;
	const char *p = s;

	if (*p == '\0')
		return -ENOENT;
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > 1000000) /* 1 Tbit/s: out of any range here */
			return -EINVAL;
	}
	v *= 1000000;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		for (; isdigit((unsigned char)*p); p++) {
			if (scale == 1)
				return -EINVAL; /* finer than 1 bit/s */
			scale /= 10;
			v += (uint64_t)(*p - '0') * scale;
		}
	}
	if (*p != '\0')
		return -EINVAL;
	*bps = v;
	return 0;
}

/* FNV-1a 64 of a circuit ID; never 0 (0 means "no group"). */
static uint64_t
circuit_group(const char *id)
{
	uint64_t h = 14695981039346656037ULL;

	for (const unsigned char *p = (const unsigned char *)id; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	return h ? h : 1;
}

static int
circuit_grow(struct lq_state *st)
{
	uint32_t ncap = st->circ ? (st->circ_mask + 1) * 2 : 1024;
	struct lq_circuit *nc = calloc(ncap, sizeof(*nc));

	if (nc == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; st->circ && i <= st->circ_mask; i++) {
		uint32_t k;

		if (st->circ[i].id == NULL)
			continue;
		for (k = (uint32_t)st->circ[i].group & (ncap - 1); nc[k].id != NULL;
		     k = (k + 1) & (ncap - 1))
			;
		nc[k] = st->circ[i];
	}
	free(st->circ);
	st->circ = nc;
	st->circ_mask = ncap - 1;
	return 0;
}

/* The circuit of id, or a new one with the row's rates; NULL: no memory. */
static struct lq_circuit *
circuit_get(struct lq_state *st, const char *id, uint64_t down, uint64_t up,
	    uint32_t line, bool *fresh, bool *clash)
{
	uint64_t g = circuit_group(id);
	uint32_t k;

	*fresh = *clash = false;
	if ((st->circ == NULL || 2 * (st->ncirc + 1) > st->circ_mask + 1) &&
	    circuit_grow(st) < 0)
		return NULL;
	for (k = (uint32_t)g & st->circ_mask; st->circ[k].id != NULL;
	     k = (k + 1) & st->circ_mask) {
		if (st->circ[k].group != g)
			continue;
		/* Two circuit IDs with one 64-bit hash would share pipes. */
		*clash = strcmp(st->circ[k].id, id) != 0;
		return &st->circ[k];
	}
	st->circ[k].id = strdup(id);
	if (st->circ[k].id == NULL)
		return NULL;
	st->circ[k].group = g;
	st->circ[k].down = down;
	st->circ[k].up = up;
	st->circ[k].line = line;
	st->ncirc++;
	*fresh = true;
	return &st->circ[k];
}

static int
push(struct lq_state *st, const struct aqm_sub_entry *e)
{
	if (st->n == st->cap) {
		size_t ncap = st->cap ? st->cap * 2 : 64;
		struct aqm_sub_entry *nv = realloc(st->v, ncap * sizeof(*nv));

		if (nv == NULL)
			return -ENOMEM;
		st->v = nv;
		st->cap = ncap;
	}
	st->v[st->n++] = *e;
	return 0;
}

int
aqm_subs_lqos_is_header(const char *line)
{
	while (isspace((unsigned char)*line))
		line++;
	if (*line == '"')
		line++;
	return strncasecmp(line, "Circuit ID", 10) == 0;
}

static int
header(struct lq_state *st, char *line, char *why, size_t whylen)
{
	char *f[LQ_MAX_FIELDS];
	int nf = split(line, f, LQ_MAX_FIELDS, why, whylen);

	if (nf < 0)
		return -EINVAL;
	for (unsigned int c = 0; c < LQ_NCOLS; c++)
		st->col[c] = -1;
	for (int i = 0; i < nf; i++) {
		unsigned int c;

		snprintf(st->header[i], sizeof(st->header[i]), "%s", f[i]);
		for (c = 0; c < LQ_NCOLS; c++)
			if (strcasecmp(f[i], lq_names[c]) == 0)
				break;
		if (c == LQ_NCOLS)
			continue;
		if (st->col[c] >= 0) {
			snprintf(why, whylen, "column '%s' twice in the header", lq_names[c]);
			return -EINVAL;
		}
		st->col[c] = i;
	}
	static const enum lq_col need[] = {
		LQ_CIRCUIT_ID, LQ_IPV4, LQ_IPV6, LQ_DOWN_MAX, LQ_UP_MAX,
	};
	for (unsigned int i = 0; i < RTE_DIM(need); i++)
		if (st->col[need[i]] < 0) {
			snprintf(why, whylen, "header has no '%s' column", lq_names[need[i]]);
			return -EINVAL;
		}
	st->nfields = (unsigned int)nf;
	return 0;
}

/* One address list (IPv4 or IPv6 column) of a row into entries. */
static int
addresses(struct lq_state *st, char *list, int family, const struct aqm_sub_entry *tmpl,
	  uint32_t *count, char *why, size_t whylen)
{
	char *save = NULL;

	for (char *a = strtok_r(list, ",", &save); a != NULL; a = strtok_r(NULL, ",", &save)) {
		struct aqm_sub_entry e = *tmpl;
		struct ini_prefix p;
		char pwhy[96];

		a = ini_trim(a);
		if (*a == '\0')
			continue;
		if (ini_parse_prefix(a, false, &p, pwhy, sizeof(pwhy)) < 0 || p.family != family) {
			snprintf(why, whylen, "bad %s address or prefix '%.64s'",
				 family == 4 ? "IPv4" : "IPv6", a);
			return -EINVAL;
		}
		e.family = p.family;
		e.depth = p.depth;
		memcpy(e.addr, p.addr, sizeof(e.addr));
		if (push(st, &e) < 0) {
			snprintf(why, whylen, "out of memory");
			return -ENOMEM;
		}
		(*count)++;
	}
	return 0;
}

static int
row(struct lq_state *st, char *line, uint32_t lineno, char *why, size_t whylen)
{
	char *f[LQ_MAX_FIELDS];
	struct aqm_sub_entry e;
	struct lq_circuit *c;
	uint64_t down, up, min;
	uint32_t count = 0;
	bool fresh, clash;
	int nf = split(line, f, LQ_MAX_FIELDS, why, whylen);

	if (nf < 0)
		return -EINVAL;
	if ((unsigned int)nf != st->nfields) {
		snprintf(why, whylen, "%d fields, the header has %u", nf, st->nfields);
		return -EINVAL;
	}
#define COL(c) (st->col[c] >= 0 ? f[st->col[c]] : "")
	if (*COL(LQ_CIRCUIT_ID) == '\0') {
		snprintf(why, whylen, "empty Circuit ID");
		return -EINVAL;
	}
	if (parse_mbps(COL(LQ_DOWN_MAX), &down) != 0 || down < AQM_RATE_MIN || down > AQM_RATE_MAX) {
		snprintf(why, whylen, "bad Download Max Mbps '%.32s' (0.064..100000)", COL(LQ_DOWN_MAX));
		return -EINVAL;
	}
	if (parse_mbps(COL(LQ_UP_MAX), &up) != 0 || up < AQM_RATE_MIN || up > AQM_RATE_MAX) {
		snprintf(why, whylen, "bad Upload Max Mbps '%.32s' (0.064..100000)", COL(LQ_UP_MAX));
		return -EINVAL;
	}
	if (parse_mbps(COL(LQ_DOWN_MIN), &min) == -EINVAL) {
		snprintf(why, whylen, "bad Download Min Mbps '%.32s'", COL(LQ_DOWN_MIN));
		return -EINVAL;
	}
	if (parse_mbps(COL(LQ_UP_MIN), &min) == -EINVAL) {
		snprintf(why, whylen, "bad Upload Min Mbps '%.32s'", COL(LQ_UP_MIN));
		return -EINVAL;
	}
	c = circuit_get(st, COL(LQ_CIRCUIT_ID), down, up, lineno, &fresh, &clash);
	if (c == NULL) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	if (clash) {
		snprintf(why, whylen, "Circuit ID '%.40s' hashes like '%.40s' of line %u; rename one",
			 COL(LQ_CIRCUIT_ID), c->id, c->line);
		return -EINVAL;
	}
	if (!fresh && (c->down != down || c->up != up))
		st->rep->rate_mismatch_rows++;
	memset(&e, 0, sizeof(e));
	e.down_bps = c->down;
	e.up_bps = c->up;
	e.group = c->group;
	e.line = lineno;
	if (addresses(st, COL(LQ_IPV4), 4, &e, &count, why, whylen) < 0 ||
	    addresses(st, COL(LQ_IPV6), 6, &e, &count, why, whylen) < 0)
		return -EINVAL;
	st->rep->rows++;
	if (count == 0)
		st->rep->no_address_rows++;
	for (unsigned int i = 0; i < RTE_DIM(lq_unhonoured); i++)
		if (*COL(lq_unhonoured[i]) != '\0' &&
		    !(parse_mbps(COL(lq_unhonoured[i]), &min) == 0 && min == 0))
			st->rep->unhonoured_rows[i]++;
	for (unsigned int i = 0; i < st->nfields; i++) {
		bool known = false;

		for (unsigned int k = 0; k < LQ_NCOLS; k++)
			known = known || st->col[k] == (int)i;
		if (!known && *f[i] != '\0' && !st->extra_used[i]) {
			st->extra_used[i] = true;
			st->rep->unknown_columns++;
		}
	}
#undef COL
	return 0;
}

/* Order of prefixes, for finding one listed twice. */
static int
cmp_prefix(const void *a, const void *b)
{
	const struct aqm_sub_entry *x = a, *y = b;
	int d = (int)x->family - (int)y->family;

	if (d == 0)
		d = (int)x->depth - (int)y->depth;
	if (d == 0)
		d = memcmp(x->addr, y->addr, sizeof(x->addr));
	if (d == 0)
		d = x->line < y->line ? -1 : x->line > y->line;
	return d;
}

int
aqm_subs_lqos_parse(const char *buf, size_t len, const char *name,
		    struct aqm_sub_entry **entries, struct aqm_lqos_report *rep,
		    char *err, size_t errlen)
{
	struct lq_state st = { .path = name, .rep = rep };
	char line[LQ_LINE_MAX], why[160];
	uint32_t lineno = 0;
	bool have_header = false;
	size_t pos = 0;
	int rc = 0;

	*entries = NULL;
	memset(rep, 0, sizeof(*rep));
	while (pos < len) {
		size_t end = pos;

		while (end < len && buf[end] != '\n')
			end++;
		lineno++;
		if (end - pos >= sizeof(line)) {
			snprintf(err, errlen, "%s:%u: line longer than %zu bytes", name, lineno,
				 sizeof(line) - 1);
			rc = -EINVAL;
			break;
		}
		if (memchr(buf + pos, '\0', end - pos) != NULL) {
			snprintf(err, errlen, "%s:%u: NUL byte in line", name, lineno);
			rc = -EINVAL;
			break;
		}
		memcpy(line, buf + pos, end - pos);
		line[end - pos] = '\0';
		pos = end + 1;
		char *s = ini_trim(line);
		if (*s == '\0' || *s == '#')
			continue;
		if (!have_header) {
			if (!aqm_subs_lqos_is_header(s)) {
				snprintf(err, errlen, "%s:%u: expected the ShapedDevices.csv header (Circuit ID,...)",
					 name, lineno);
				rc = -EINVAL;
				break;
			}
			rc = header(&st, s, why, sizeof(why));
			have_header = true;
		} else {
			rc = row(&st, s, lineno, why, sizeof(why));
		}
		if (rc < 0) {
			snprintf(err, errlen, "%s:%u: %s", name, lineno, why);
			break;
		}
	}
	if (rc == 0 && !have_header) {
		snprintf(err, errlen, "%s: no ShapedDevices.csv header (Circuit ID,...)", name);
		rc = -EINVAL;
	}
	if (rc == 0 && st.n > 1) {
		/* A device address in two rows: LibreQoS refuses it too. */
		struct aqm_sub_entry *sorted = malloc(st.n * sizeof(*sorted));

		if (sorted == NULL) {
			snprintf(err, errlen, "%s: out of memory", name);
			rc = -ENOMEM;
		} else {
			memcpy(sorted, st.v, st.n * sizeof(*sorted));
			qsort(sorted, st.n, sizeof(*sorted), cmp_prefix);
			for (size_t i = 1; i < st.n && rc == 0; i++) {
				const struct aqm_sub_entry *a = &sorted[i - 1], *b = &sorted[i];
				char txt[INET6_ADDRSTRLEN];

				if (a->family != b->family || a->depth != b->depth ||
				    memcmp(a->addr, b->addr, sizeof(a->addr)) != 0)
					continue;
				inet_ntop(b->family == 4 ? AF_INET : AF_INET6, b->addr,
					  txt, sizeof(txt));
				snprintf(err, errlen, "%s:%u: %s/%u already listed on line %u",
					 name, b->line, txt, b->depth, a->line);
				rc = -EINVAL;
			}
			free(sorted);
		}
	}
	if (rc == 0) {
		rep->circuits = st.ncirc;
		rep->prefixes = (uint32_t)st.n;
		for (unsigned int i = 0; i < RTE_DIM(lq_unhonoured); i++)
			rep->unhonoured_names[i] = lq_names[lq_unhonoured[i]];
	}
	for (uint32_t i = 0; st.circ != NULL && i <= st.circ_mask; i++)
		free(st.circ[i].id);
	free(st.circ);
	if (rc < 0) {
		free(st.v);
		return rc;
	}
	*entries = st.v;
	return (int)st.n;
}

void
aqm_lqos_report_format(const struct aqm_lqos_report *r, char *buf, size_t len)
{
	size_t o;

	o = (size_t)snprintf(buf, len, "LibreQoS ShapedDevices format: %u rows, %u circuits (one pipe pair each), %u prefixes",
			     r->rows, r->circuits, r->prefixes);
	const char *sep = "; not honoured (no parent hierarchy, no MAC matching; each pipe gets its Max): ";
	for (unsigned int i = 0; i < AQM_LQOS_UNHONOURED && o < len; i++)
		if (r->unhonoured_rows[i]) {
			o += (size_t)snprintf(buf + o, len - o, "%s'%s' in %u rows", sep,
					      r->unhonoured_names[i], r->unhonoured_rows[i]);
			sep = ", ";
		}
	if (r->unknown_columns && o < len)
		o += (size_t)snprintf(buf + o, len - o, "; %u unknown columns with values ignored",
				      r->unknown_columns);
	if (r->rate_mismatch_rows && o < len)
		o += (size_t)snprintf(buf + o, len - o, "; %u rows give other Max Mbps than their circuit's first row, whose rates apply",
				      r->rate_mismatch_rows);
	if (r->no_address_rows && o < len)
		o += (size_t)snprintf(buf + o, len - o, "; %u rows have no IPv4 or IPv6 address: not shaped",
				      r->no_address_rows);
}

int
aqm_subs_load(const char *path, struct aqm_sub_entry **entries,
	      struct aqm_lqos_report *rep, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	bool lqos = false, decided = false;
	FILE *f;
	int rc;

	memset(rep, 0, sizeof(*rep));
	f = fopen(path, "r");
	if (f == NULL) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	/* The first line that is not blank or a comment decides. */
	for (;;) {
		char line[LQ_LINE_MAX];

		if (fgets(line, sizeof(line), f) == NULL)
			break;
		char *s = ini_trim(line);
		if (*s == '\0' || *s == '#')
			continue;
		lqos = aqm_subs_lqos_is_header(s);
		decided = true;
		break;
	}
	if (!decided || !lqos) {
		fclose(f);
		return aqm_subs_csv_load(path, entries, err, errlen);
	}
	rewind(f);
	for (;;) {
		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			char *nb = realloc(buf, ncap);

			if (nb == NULL) {
				free(buf);
				fclose(f);
				snprintf(err, errlen, "%s: out of memory", path);
				return -ENOMEM;
			}
			buf = nb;
			cap = ncap;
		}
		size_t got = fread(buf + len, 1, cap - len, f);
		if (got == 0)
			break;
		len += got;
	}
	if (ferror(f)) {
		rc = -EIO;
		snprintf(err, errlen, "%s: read error", path);
	} else {
		rep->libreqos = true;
		rc = aqm_subs_lqos_parse(buf, len, path, entries, rep, err, errlen);
		rep->libreqos = rc >= 0;
	}
	fclose(f);
	free(buf);
	return rc;
}
