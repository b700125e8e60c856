/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Typed key tables: one description of every configuration key, used to
 * parse it, to fill its default and to print the reference that config/
 * is checked against. And the one prefix parser every module shares.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ini.h"

const struct ini_key *
ini_key_find(const struct ini_key *keys, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

/* A bound as the reference writes it: "100us", "10mbit", "64kb", or a
 * plain number for a count. */
static void
fmt_bound(enum ini_kind kind, uint64_t x, char *buf, size_t len)
{
	static const struct { enum ini_kind kind; uint64_t mul; const char *u; } units[] = {
		{ INI_KIND_TIME, 1000000000, "s" }, { INI_KIND_TIME, 1000000, "ms" },
		{ INI_KIND_TIME, 1000, "us" }, { INI_KIND_TIME, 1, "ns" },
		{ INI_KIND_RATE, 1000000000, "gbit" }, { INI_KIND_RATE, 1000000, "mbit" },
		{ INI_KIND_RATE, 1000, "kbit" }, { INI_KIND_RATE, 1, "bit" },
		{ INI_KIND_SIZE, 1ULL << 30, "gb" }, { INI_KIND_SIZE, 1ULL << 20, "mb" },
		{ INI_KIND_SIZE, 1ULL << 10, "kb" }, { INI_KIND_SIZE, 1, "" },
	};

	for (unsigned i = 0; x != 0 && i < sizeof(units) / sizeof(units[0]); i++) {
		if (units[i].kind == kind && x % units[i].mul == 0) {
			snprintf(buf, len, "%" PRIu64 "%s", x / units[i].mul, units[i].u);
			return;
		}
	}
	snprintf(buf, len, "%" PRIu64, x);
}

static int
store_uint(const struct ini_key *k, uint64_t x, void *dst, const char *v,
	   char *why, size_t whylen)
{
	uint64_t lim = k->width >= 8 ? UINT64_MAX : (1ULL << (8 * k->width)) - 1;

	if (((k->max != 0 && x > k->max) || x < k->min) && !(k->zero_off && x == 0)) {
		char lo[32], hi[32];

		fmt_bound(k->kind, k->min, lo, sizeof(lo));
		fmt_bound(k->kind, k->max != 0 ? k->max : lim, hi, sizeof(hi));
		snprintf(why, whylen, "%s is out of range [%s, %s]%s", v, lo, hi,
			 k->zero_off ? " (or 0: off)" : "");
		return -1;
	}
	if (x > lim) {
		snprintf(why, whylen, "%s is too large (at most %" PRIu64 ")", v, lim);
		return -1;
	}
	switch (k->width) {
	case 1: *(uint8_t *)dst = (uint8_t)x; break;
	case 2: *(uint16_t *)dst = (uint16_t)x; break;
	case 4: *(uint32_t *)dst = (uint32_t)x; break;
	default: *(uint64_t *)dst = x; break;
	}
	return 0;
}

static int
parse_percent(const char *v, double *out, char *why, size_t whylen)
{
	char *end;
	double x = strtod(v, &end);

	if (end == v)
		goto bad;
	while (*end == ' ' || *end == '\t')
		end++;
	if (*end == '%')
		end++;
	if (*end != '\0')
		goto bad;
	if (!(x >= 0.0 && x <= 100.0)) {
		snprintf(why, whylen, "'%s' out of range [0%%, 100%%]", v);
		return -1;
	}
	*out = x / 100.0;
	return 0;
bad:
	snprintf(why, whylen, "'%s' is not a percentage (e.g. 1%%, 0.5, 100)", v);
	return -1;
}

static int
parse_enum(const struct ini_key *k, const char *v, int *out, char *why,
	   size_t whylen)
{
	size_t used = 0;

	for (const struct ini_enum *e = k->names; e->name != NULL; e++) {
		if (strcasecmp(v, e->name) == 0) {
			*out = e->value;
			return 0;
		}
	}
	unsigned count = 0, i = 0;

	for (const struct ini_enum *e = k->names; e->name != NULL; e++)
		count++;
	/* "'x' is not a, b or c" */
	used = (size_t)snprintf(why, whylen, "'%s' is not", v);
	for (const struct ini_enum *e = k->names; e->name != NULL && used < whylen; e++, i++)
		used += (size_t)snprintf(why + used, whylen - used, "%s%s",
					 i == 0 ? " " : i + 1 == count ? " or " : ", ",
					 e->name);
	return -1;
}

int
ini_key_parse(const struct ini_key *k, const char *v, void *base, char *why,
	      size_t whylen)
{
	void *dst = (char *)base + k->off;
	uint64_t x;
	double d;
	bool b;
	int e;

	/* A table whose field does not match its kind is a bug; say so
	 * rather than write past the field. */
	if ((k->kind == INI_KIND_BOOL && k->width != sizeof(bool)) ||
	    (k->kind == INI_KIND_PERCENT && k->width != sizeof(double)) ||
	    (k->kind == INI_KIND_ENUM && k->width != 1 && k->width != 2 &&
	     k->width != sizeof(int)) ||
	    (k->kind != INI_KIND_CUSTOM && k->width != 1 && k->width != 2 &&
	     k->width != 4 && k->width != 8)) {
		snprintf(why, whylen, "table error: %u-byte field for this kind",
			 (unsigned)k->width);
		return -1;
	}
	switch (k->kind) {
	case INI_KIND_UINT:
		if (ini_parse_u64(v, 0, UINT64_MAX, &x, why, whylen) < 0)
			return -1;
		return store_uint(k, x, dst, v, why, whylen);
	case INI_KIND_RATE:
		if (ini_parse_rate_bps(v, &x, why, whylen) < 0)
			return -1;
		return store_uint(k, x, dst, v, why, whylen);
	case INI_KIND_TIME:
		if (ini_parse_time_ns(v, k->unit_ns ? k->unit_ns : 1, &x, why,
				      whylen) < 0)
			return -1;
		return store_uint(k, x, dst, v, why, whylen);
	case INI_KIND_SIZE:
		if (ini_parse_size(v, &x, why, whylen) < 0)
			return -1;
		return store_uint(k, x, dst, v, why, whylen);
	case INI_KIND_BOOL:
		if (ini_parse_bool(v, &b, why, whylen) < 0)
			return -1;
		*(bool *)dst = b;
		return 0;
	case INI_KIND_PERCENT:
		if (parse_percent(v, &d, why, whylen) < 0)
			return -1;
		*(double *)dst = d;
		return 0;
	case INI_KIND_ENUM:
		if (parse_enum(k, v, &e, why, whylen) < 0)
			return -1;
		if (k->width == 1)
			*(uint8_t *)dst = (uint8_t)e;
		else if (k->width == 2)
			*(uint16_t *)dst = (uint16_t)e;
		else
			*(int *)dst = e;
		return 0;
	case INI_KIND_CUSTOM:
		return k->parse(v, dst, why, whylen);
	}
	snprintf(why, whylen, "key of unknown kind %d", (int)k->kind);
	return -1;
}

int
ini_keys_defaults(const char *section, const struct ini_key *keys,
		  unsigned n, void *base, char *err, size_t errlen)
{
	char why[192];

	for (unsigned i = 0; i < n; i++) {
		if (keys[i].def == NULL)
			continue; /* no default: the module's own */
		if (ini_key_parse(&keys[i], keys[i].def, base, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "[%s] %s: default: %s", section,
				 keys[i].name, why);
			return -1;
		}
	}
	return 0;
}

int
ini_apply_section(struct ini_file *f, const char *section,
		  const struct ini_key *keys, unsigned n, void *base,
		  uint64_t *set, char *err, size_t errlen)
{
	char why[192];

	for (unsigned i = 0; i < f->count; i++) {
		struct ini_entry *e = &f->entries[i];

		if (strcmp(e->section, section) != 0)
			continue;
		const struct ini_key *k = ini_key_find(keys, n, e->key);
		if (k == NULL)
			continue; /* the caller reports unknown keys */
		if (ini_key_parse(k, e->value, base, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "%s:%u: [%s] %s: %s", f->path,
				 e->line, e->section, e->key, why);
			return -1;
		}
		e->used = true;
		if (set != NULL && k - keys < 64)
			*set |= 1ULL << (k - keys);
	}
	return 0;
}

static const char *const kind_name[] = {
	[INI_KIND_UINT] = "uint", [INI_KIND_BOOL] = "bool",
	[INI_KIND_RATE] = "rate", [INI_KIND_TIME] = "time",
	[INI_KIND_SIZE] = "size", [INI_KIND_PERCENT] = "percent",
	[INI_KIND_ENUM] = "enum", [INI_KIND_CUSTOM] = "custom",
};

void
ini_keys_print(FILE *out, const char *section, const struct ini_key *keys,
	       unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		const struct ini_key *k = &keys[i];
		char range[64] = "";

		if (k->kind == INI_KIND_UINT || k->kind == INI_KIND_RATE ||
		    k->kind == INI_KIND_TIME || k->kind == INI_KIND_SIZE) {
			if (k->max != 0)
				snprintf(range, sizeof(range), "%s%" PRIu64 "..%" PRIu64,
					 k->zero_off ? "0," : "", k->min, k->max);
			else
				snprintf(range, sizeof(range), "%" PRIu64 "..", k->min);
		}
		fprintf(out, "[%s] %s = %s\t%s\t%s\t%s\t%s\t%s\n", section,
			k->name, k->def != NULL ? k->def : "", kind_name[k->kind],
			k->unit != NULL ? k->unit : "", range,
			k->reload ? "reload" : "boot", k->doc != NULL ? k->doc : "");
	}
}

int
ini_parse_prefix(const char *v, bool allow_zero, struct ini_prefix *out,
		 char *why, size_t whylen)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(v, '/');
	size_t alen = slash != NULL ? (size_t)(slash - v) : strlen(v);
	struct ini_prefix p;
	unsigned max;

	memset(&p, 0, sizeof(p));
	if (alen == 0 || alen >= sizeof(buf))
		goto bad;
	memcpy(buf, v, alen);
	buf[alen] = '\0';
	if (inet_pton(AF_INET, buf, p.addr) == 1) {
		p.family = 4;
		max = 32;
	} else if (inet_pton(AF_INET6, buf, p.addr) == 1) {
		p.family = 6;
		max = 128;
	} else {
		goto bad;
	}
	p.depth = (uint8_t)max;
	if (slash != NULL) {
		const char *s = slash + 1;
		char *end;
		unsigned long d;

		if (*s < '0' || *s > '9')
			goto bad;
		errno = 0;
		d = strtoul(s, &end, 10);
		if (errno != 0 || *end != '\0' || d > max)
			goto bad;
		if (d == 0 && !allow_zero) {
			snprintf(why, whylen, "'%s': a prefix length of 0 is not allowed here", v);
			return -1;
		}
		p.depth = (uint8_t)d;
	}
	for (unsigned bit = p.depth; bit < max; bit++)
		p.addr[bit / 8] &= (uint8_t)~(0x80u >> (bit % 8));
	*out = p;
	return 0;
bad:
	snprintf(why, whylen, "'%s' is not an address or prefix (e.g. 198.18.0.0/15, 2001:db8::/32)", v);
	return -1;
}
