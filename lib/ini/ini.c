/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ini.h"

#define INI_MAX_BYTES (64u << 20)
#define INI_DIM(a) (sizeof(a) / sizeof((a)[0]))

char *
ini_trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Cut a trailing comment: '#' or ';' preceded by whitespace. */
static void
cut_comment(char *s)
{
	for (char *p = s; *p; p++) {
		if ((*p == '#' || *p == ';') &&
		    (p == s || isspace((unsigned char)p[-1]))) {
			*p = '\0';
			return;
		}
	}
}

void
ini_free(struct ini_file *f)
{
	if (f == NULL)
		return;
	free(f->path);
	free(f->entries);
	free(f->text);
	free(f->sections);
	free(f->section_lines);
	free(f);
}

struct ini_file *
ini_parse(const char *name, const char *text, size_t len, char *err,
	  size_t errlen)
{
	struct ini_file *f = calloc(1, sizeof(*f));
	if (f == NULL)
		goto oom;
	f->path = strdup(name);
	f->text = malloc(len + 1);
	if (f->path == NULL || f->text == NULL)
		goto oom;
	memcpy(f->text, text, len);
	f->text[len] = '\0';
	if (memchr(f->text, '\0', len) != NULL) {
		snprintf(err, errlen, "%s: contains a NUL byte", name);
		ini_free(f);
		return NULL;
	}

	unsigned cap = 0, scap = 0;
	const char *section = "";
	char *p = f->text;
	for (unsigned line = 1; p != NULL && *p != '\0'; line++) {
		char *nl = strchr(p, '\n');
		if (nl != NULL)
			*nl = '\0';
		char *s = p;
		p = nl != NULL ? nl + 1 : NULL;
		if (s[0] != '\0' && s[strlen(s) - 1] == '\r')
			s[strlen(s) - 1] = '\0';
		s = ini_trim(s);
		if (*s == '\0' || *s == '#' || *s == ';')
			continue;
		cut_comment(s);
		s = ini_trim(s);
		if (*s == '[') {
			char *close = strchr(s, ']');
			if (close == NULL || close[1] != '\0') {
				snprintf(err, errlen,
					 "%s:%u: malformed section header '%s'",
					 name, line, s);
				ini_free(f);
				return NULL;
			}
			*close = '\0';
			section = ini_trim(s + 1);
			if (*section == '\0') {
				snprintf(err, errlen, "%s:%u: empty section name",
					 name, line);
				ini_free(f);
				return NULL;
			}
			if (f->nsections == scap) {
				scap = scap ? 2 * scap : 8;
				char **ns = realloc(f->sections, scap * sizeof(*ns));
				unsigned *nl2 = ns ? realloc(f->section_lines,
						scap * sizeof(*nl2)) : NULL;
				if (ns)
					f->sections = ns;
				if (nl2 == NULL)
					goto oom;
				f->section_lines = nl2;
			}
			f->sections[f->nsections] = (char *)section;
			f->section_lines[f->nsections++] = line;
			continue;
		}
		char *eq = strchr(s, '=');
		if (eq == NULL) {
			snprintf(err, errlen, "%s:%u: expected 'key = value', got '%s'",
				 name, line, s);
			ini_free(f);
			return NULL;
		}
		*eq = '\0';
		char *key = ini_trim(s), *val = ini_trim(eq + 1);
		if (*key == '\0') {
			snprintf(err, errlen, "%s:%u: missing key before '='",
				 name, line);
			ini_free(f);
			return NULL;
		}
		if (f->count == cap) {
			cap = cap ? 2 * cap : 32;
			struct ini_entry *ne = realloc(f->entries, cap * sizeof(*ne));
			if (ne == NULL)
				goto oom;
			f->entries = ne;
		}
		f->entries[f->count++] = (struct ini_entry){
			.section = section, .key = key, .value = val,
			.line = line, .used = false,
		};
	}
	return f;
oom:
	snprintf(err, errlen, "%s: out of memory", name);
	ini_free(f);
	return NULL;
}

struct ini_file *
ini_load(const char *path, char *err, size_t errlen)
{
	FILE *fp = fopen(path, "rb");
	if (fp == NULL) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len == cap) {
			if (cap >= INI_MAX_BYTES) {
				snprintf(err, errlen, "%s: larger than %u bytes",
					 path, INI_MAX_BYTES);
				free(buf);
				fclose(fp);
				return NULL;
			}
			cap = cap ? 2 * cap : 4096;
			char *nb = realloc(buf, cap);
			if (nb == NULL) {
				free(buf);
				fclose(fp);
				snprintf(err, errlen, "%s: out of memory", path);
				return NULL;
			}
			buf = nb;
		}
		size_t r = fread(buf + len, 1, cap - len, fp);
		len += r;
		if (r == 0)
			break;
	}
	int rerr = ferror(fp);
	fclose(fp);
	if (rerr) {
		snprintf(err, errlen, "%s: read error", path);
		free(buf);
		return NULL;
	}
	struct ini_file *f = ini_parse(path, buf ? buf : "", len, err, errlen);
	free(buf);
	return f;
}

struct ini_entry *
ini_get(struct ini_file *f, const char *section, const char *key)
{
	struct ini_entry *found = NULL;
	for (unsigned i = 0; i < f->count; i++) {
		struct ini_entry *e = &f->entries[i];
		if (strcmp(e->section, section) == 0 && strcmp(e->key, key) == 0)
			found = e;
	}
	if (found != NULL) {
		/* Earlier duplicates are consumed too: later lines win. */
		for (unsigned i = 0; i < f->count; i++) {
			struct ini_entry *e = &f->entries[i];
			if (strcmp(e->section, section) == 0 &&
			    strcmp(e->key, key) == 0)
				e->used = true;
		}
	}
	return found;
}

int
ini_parse_u64(const char *v, uint64_t min, uint64_t max, uint64_t *out,
	      char *err, size_t errlen)
{
	char *end;
	if (*v == '\0' || *v == '-' || !isdigit((unsigned char)*v)) {
		snprintf(err, errlen, "'%s' is not a non-negative integer", v);
		return -1;
	}
	errno = 0;
	unsigned long long x = strtoull(v, &end, 0);
	if (errno != 0 || *end != '\0') {
		snprintf(err, errlen, "'%s' is not a non-negative integer", v);
		return -1;
	}
	if (x < min || x > max) {
		snprintf(err, errlen, "%s is out of range [%" PRIu64 ", %" PRIu64 "]",
			 v, min, max);
		return -1;
	}
	*out = x;
	return 0;
}

int
ini_parse_bool(const char *v, bool *out, char *err, size_t errlen)
{
	static const char *const yes[] = { "1", "yes", "true", "on" };
	static const char *const no[] = { "0", "no", "false", "off" };
	for (unsigned i = 0; i < 4; i++) {
		if (strcasecmp(v, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(v, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	snprintf(err, errlen, "'%s' is not a boolean (yes/no, on/off, true/false, 1/0)", v);
	return -1;
}

/* number followed by a unit suffix; returns the suffix or NULL */
static const char *
split_number(const char *v, double *num)
{
	char *end;
	if (*v == '\0' || !(isdigit((unsigned char)*v) || *v == '.'))
		return NULL;
	errno = 0;
	*num = strtod(v, &end);
	if (errno != 0 || end == v || !isfinite(*num) || *num < 0)
		return NULL;
	while (isspace((unsigned char)*end))
		end++;
	return end;
}

int
ini_parse_rate_bps(const char *v, uint64_t *out, char *err, size_t errlen)
{
	static const struct { const char *u; double mul; } units[] = {
		{ "", 1 }, { "bit", 1 }, { "bps", 1 },
		{ "k", 1e3 }, { "kbit", 1e3 }, { "kbps", 1e3 },
		{ "m", 1e6 }, { "mbit", 1e6 }, { "mbps", 1e6 },
		{ "g", 1e9 }, { "gbit", 1e9 }, { "gbps", 1e9 },
	};
	double n;
	const char *u = split_number(v, &n);
	if (u != NULL) {
		for (unsigned i = 0; i < INI_DIM(units); i++) {
			if (strcasecmp(u, units[i].u) == 0) {
				double r = n * units[i].mul;
				if (r < 1 || r > 1e12)
					break;
				*out = (uint64_t)(r + 0.5);
				return 0;
			}
		}
	}
	snprintf(err, errlen,
		 "'%s' is not a rate between 1 bit/s and 1 Tbit/s (e.g. 64kbit, 10mbit, 1.5gbit)", v);
	return -1;
}

int
ini_parse_time_ns(const char *v, uint64_t unit_ns, uint64_t *out, char *err,
		  size_t errlen)
{
	static const struct { const char *u; double mul; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	};
	double n;
	const char *u = split_number(v, &n);
	if (u != NULL) {
		if (*u == '\0') {
			*out = (uint64_t)(n * (double)unit_ns + 0.5);
			return 0;
		}
		for (unsigned i = 0; i < INI_DIM(units); i++) {
			if (strcasecmp(u, units[i].u) == 0 && n * units[i].mul < 1e18) {
				*out = (uint64_t)(n * units[i].mul + 0.5);
				return 0;
			}
		}
	}
	snprintf(err, errlen, "'%s' is not a time (e.g. 5ms, 100us, 1s)", v);
	return -1;
}

int
ini_parse_size(const char *v, uint64_t *out, char *err, size_t errlen)
{
	static const struct { const char *u; double mul; } units[] = {
		{ "", 1 }, { "b", 1 }, { "k", 1024 }, { "kb", 1024 },
		{ "m", 1048576 }, { "mb", 1048576 },
		{ "g", 1073741824.0 }, { "gb", 1073741824.0 },
	};
	double n;
	const char *u = split_number(v, &n);
	if (u != NULL) {
		for (unsigned i = 0; i < INI_DIM(units); i++) {
			if (strcasecmp(u, units[i].u) == 0 && n * units[i].mul < 1e15) {
				*out = (uint64_t)(n * units[i].mul + 0.5);
				return 0;
			}
		}
	}
	snprintf(err, errlen, "'%s' is not a size (e.g. 1514, 64k, 32mb)", v);
	return -1;
}
