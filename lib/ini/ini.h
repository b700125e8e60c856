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
#include <stdio.h>

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


/**
 * @name Typed key tables
 * One table per section family describes every key a module reads: its
 * kind, where the value is stored, its bounds, its default as the
 * reference file writes it, whether a reload may change it, and a one-line
 * doc. The same table parses the file, fills the defaults and prints the
 * reference (sluice --config-keys), so the documentation in config/ is
 * checked against the code by a test and cannot drift.
 * @{
 */

/** What a key's value is, and how it is stored. */
enum ini_kind {
	INI_KIND_UINT,    /**< whole number in [min, max]; width 1, 2, 4 or 8 */
	INI_KIND_BOOL,    /**< on/off, yes/no, true/false, 1/0; a bool */
	INI_KIND_RATE,    /**< bit/s ("10mbit"); width 4 or 8 */
	INI_KIND_TIME,    /**< ns ("5ms"), a bare number in unit_ns; width 4 or 8 */
	INI_KIND_SIZE,    /**< bytes ("64k"); width 4 or 8 */
	INI_KIND_PERCENT, /**< "1%", "0.5", "100" -> a double probability in [0, 1] */
	INI_KIND_ENUM,    /**< one of names[] (case-insensitive); an int, or
			   *   a uint8_t/uint16_t when width is 1 or 2 */
	INI_KIND_CUSTOM,  /**< parse() does it */
};

/** A name of an INI_KIND_ENUM value. Tables end with a NULL name. */
struct ini_enum {
	const char *name;
	int value;
};

/** One key of a table. */
struct ini_key {
	const char *name;
	enum ini_kind kind;
	size_t off;        /**< where the value goes: base + off */
	uint8_t width;     /**< sizeof the destination */
	uint64_t min, max; /**< bounds of UINT, RATE, TIME and SIZE (max 0: none) */
	uint64_t unit_ns;  /**< TIME: unit of a bare number (0: ns) */
	const struct ini_enum *names; /**< ENUM */
	/** CUSTOM: parse v into dst; 0, or -1 with a reason in why. */
	int (*parse)(const char *v, void *dst, char *why, size_t whylen);
	const char *def;   /**< default, exactly as the reference file writes it */
	const char *unit;  /**< for the reference: "packets", "ms", ... or NULL */
	bool reload;       /**< a reload (SIGHUP) may change it */
	const char *doc;   /**< one line */
	bool zero_off;     /**< UINT, RATE, TIME, SIZE: 0 is also accepted
			    *   below min; it means "off" */
};

/** Table-building helpers: the field, its offset and width in one go. */
#define INI_AT(type, field) 	offsetof(type, field), (uint8_t)sizeof(((type *)0)->field)

/** The key of a table named name, or NULL. */
const struct ini_key *ini_key_find(const struct ini_key *keys, unsigned n,
				   const char *name);

/**
 * Parse one value by the rules of its key and store it at base + k->off.
 * @return 0, or -1 with a reason ("'x' is not ...") in why; base is then
 *   unchanged.
 */
int ini_key_parse(const struct ini_key *k, const char *v, void *base,
		  char *why, size_t whylen);

/**
 * Store every key's default into base (parsing k->def).
 * @return 0, or -1 with "[section] key: default 'x' ..." in err when a
 *   table's default does not parse (a bug that the unit tests catch).
 */
int ini_keys_defaults(const char *section, const struct ini_key *keys,
		      unsigned n, void *base, char *err, size_t errlen);

/**
 * Apply every entry of f in section that names a key of the table: parse
 * it into base and mark it used. Entries of other sections, and unknown
 * keys, are left unused (the caller reports those). Later lines win.
 * @param set if not NULL, bit i is set when keys[i] was given (n <= 64).
 * @return 0, or -1 with "FILE:LINE: [section] key: reason" in err.
 */
int ini_apply_section(struct ini_file *f, const char *section,
		      const struct ini_key *keys, unsigned n, void *base,
		      uint64_t *set, char *err, size_t errlen);

/**
 * Print the table as reference text, one line per key:
 * "[section] key = default<TAB>kind<TAB>unit<TAB>min..max<TAB>reload|boot<TAB>doc".
 */
void ini_keys_print(FILE *out, const char *section,
		    const struct ini_key *keys, unsigned n);

/** @} */

/** An address prefix: "198.18.0.0/15", "2001:db8::/32", or a bare address. */
struct ini_prefix {
	uint8_t family;   /**< 4 or 6 */
	uint8_t depth;    /**< prefix length; 32 or 128 for a bare address */
	uint8_t addr[16]; /**< network byte order, host bits cleared */
};

/**
 * Parse a prefix. Host bits are cleared, so "10.0.0.7/24" and
 * "10.0.0.0/24" are the same prefix. A length of 0 is allowed only when
 * allow_zero (a "match everything" rule, "0.0.0.0/0").
 * @return 0, or -1 with a reason in why.
 */
int ini_parse_prefix(const char *v, bool allow_zero, struct ini_prefix *out,
		     char *why, size_t whylen);

/**
 * Strip leading and trailing whitespace in place: trailing whitespace is
 * overwritten with NULs. The INI reader and the CSV readers share it.
 * @return s past its leading whitespace.
 */
char *ini_trim(char *s);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_INI_H */
