/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_INI_H
#define SLUICE_INI_H

/**
 * @file
 * A small INI reader that remembers where every key came from, so a
 * configuration error can name the file, the line and the key.
 *
 * Syntax: `[section]`, `key = value`, comments start with `#` or `;` at the
 * start of a line or after whitespace. Values are trimmed. Sections may
 * repeat; keys keep their file order. Used only at boot and reload, never
 * on the datapath.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One `key = value` line. */
struct ini_entry {
	const char *section; /**< "" before the first section header */
	const char *key;
	const char *value;
	unsigned line;       /**< 1-based line number */
	bool used;           /**< set by the consumer; unused keys are errors */
};

/** A parsed file. */
struct ini_file {
	char *path;
	struct ini_entry *entries;
	unsigned count;
	char *text;          /**< owned buffer the strings point into */
	char **sections;     /**< every section header seen, in order */
	unsigned *section_lines;
	unsigned nsections;
};

/**
 * Read and parse a file.
 * @param err buffer for a one-line error "FILE:LINE: reason" on failure.
 * @return the file, or NULL on error (err filled).
 */
struct ini_file *ini_load(const char *path, char *err, size_t errlen);

/** Parse text held in memory; name is used in error messages. */
struct ini_file *ini_parse(const char *name, const char *text, size_t len,
			   char *err, size_t errlen);

/** Free a file. NULL is fine. */
void ini_free(struct ini_file *f);

/** Last entry of section/key (later lines win), or NULL. Marks it used. */
struct ini_entry *ini_get(struct ini_file *f, const char *section,
			  const char *key);

/**
 * Parse helpers. Each returns 0, or -1 with a reason in err. They accept
 * only the whole value: "10x" is not a number.
 */
int ini_parse_u64(const char *v, uint64_t min, uint64_t max, uint64_t *out,
		  char *err, size_t errlen);
int ini_parse_bool(const char *v, bool *out, char *err, size_t errlen);
/** Rates: "10mbit", "1.5gbit", "64kbit", "100000" (bit/s), "20Mbps". */
int ini_parse_rate_bps(const char *v, uint64_t *out, char *err, size_t errlen);
/** Times: "5ms", "100us", "1s", "250ns"; a bare number is in `unit_ns`. */
int ini_parse_time_ns(const char *v, uint64_t unit_ns, uint64_t *out,
		      char *err, size_t errlen);
/** Sizes: "32mb", "64k", "1514" bytes (k/m/g are powers of 1024). */
int ini_parse_size(const char *v, uint64_t *out, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_INI_H */
