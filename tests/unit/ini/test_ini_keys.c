/* SPDX-License-Identifier: BSD-3-Clause */
/* The typed key tables and the prefix parser of lib/ini. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ini.h"

enum colour { RED = 3, GREEN = 7 };

struct conf {
	uint16_t burst;
	uint8_t small;
	uint64_t rate;
	uint32_t wait_ns;
	uint64_t size;
	bool on;
	double loss;
	enum colour colour;
	int custom;
};

static const struct ini_enum colours[] = {
	{ "red", RED }, { "green", GREEN }, { NULL, 0 },
};

static int
parse_custom(const char *v, void *dst, char *why, size_t whylen)
{
	if (strcmp(v, "magic") != 0) {
		snprintf(why, whylen, "'%s' is not magic", v);
		return -1;
	}
	*(int *)dst = 42;
	return 0;
}

static const struct ini_key keys[] = {
	{ "burst", INI_KIND_UINT, INI_AT(struct conf, burst), 1, 512, .def = "32" },
	{ "small", INI_KIND_UINT, INI_AT(struct conf, small), .def = "0" },
	{ "rate", INI_KIND_RATE, INI_AT(struct conf, rate), 1000, 0, .def = "10mbit" },
	{ "wait", INI_KIND_TIME, INI_AT(struct conf, wait_ns), 0, 2000000000, 1000000, .def = "5" },
	{ "size", INI_KIND_SIZE, INI_AT(struct conf, size), .def = "64k" },
	{ "on", INI_KIND_BOOL, INI_AT(struct conf, on), .def = "off" },
	{ "loss", INI_KIND_PERCENT, INI_AT(struct conf, loss), .def = "1%" },
	{ "colour", INI_KIND_ENUM, INI_AT(struct conf, colour), .names = colours, .def = "red" },
	{ "custom", INI_KIND_CUSTOM, INI_AT(struct conf, custom), .parse = parse_custom },
};
#define NKEYS (unsigned)(sizeof(keys) / sizeof(keys[0]))

static void
test_defaults_come_from_the_table_text(void **state)
{
	(void)state;
	struct conf c;
	char err[256];

	memset(&c, 0xff, sizeof(c));
	assert_int_equal(ini_keys_defaults("t", keys, NKEYS, &c, err, sizeof(err)), 0);
	assert_int_equal(c.burst, 32);
	assert_int_equal(c.small, 0);
	assert_true(c.rate == 10000000);
	assert_int_equal(c.wait_ns, 5000000); /* a bare time is in unit_ns */
	assert_true(c.size == 65536);
	assert_false(c.on);
	assert_true(c.loss > 0.0099 && c.loss < 0.0101);
	assert_int_equal(c.colour, RED);
	assert_int_equal(c.custom, -1); /* no default: left alone */
}

static void
test_a_section_is_applied_marked_used_and_reported_in_set(void **state)
{
	(void)state;
	const char *text = "[t]\nburst = 64\ncolour = GREEN\nunknown = 1\n"
			   "[other]\nburst = 7\n[t]\non = yes\ncustom = magic\n";
	char err[256];
	struct ini_file *f = ini_parse("t.ini", text, strlen(text), err, sizeof(err));
	struct conf c;
	uint64_t set = 0;

	assert_non_null(f);
	assert_int_equal(ini_keys_defaults("t", keys, NKEYS, &c, err, sizeof(err)), 0);
	assert_int_equal(ini_apply_section(f, "t", keys, NKEYS, &c, &set, err, sizeof(err)), 0);
	assert_int_equal(c.burst, 64);
	assert_int_equal(c.colour, GREEN);
	assert_true(c.on);
	assert_int_equal(c.custom, 42);
	assert_true(set == ((1u << 0) | (1u << 5) | (1u << 7) | (1u << 8)));
	assert_true(f->entries[0].used && f->entries[1].used);
	assert_false(f->entries[2].used); /* unknown: the caller's to report */
	assert_false(f->entries[3].used); /* another section */
	ini_free(f);
}

static void
expect_error(const char *line, const char *want_line, const char *want)
{
	char text[128], err[256];
	struct conf c;

	snprintf(text, sizeof(text), "[t]\n%s\n", line);
	struct ini_file *f = ini_parse("t.ini", text, strlen(text), err, sizeof(err));
	assert_non_null(f);
	memset(&c, 0, sizeof(c));
	struct conf before = c;
	assert_int_equal(ini_apply_section(f, "t", keys, NKEYS, &c, NULL, err, sizeof(err)), -1);
	if (strstr(err, want_line) == NULL || strstr(err, want) == NULL)
		fail_msg("'%s' gave '%s', expected '%s' and '%s'", line, err, want_line, want);
	assert_memory_equal(&c, &before, sizeof(c)); /* a bad value stores nothing */
	ini_free(f);
}

static void
test_bad_values_name_file_line_key_and_reason(void **state)
{
	(void)state;
	expect_error("burst = 0", "t.ini:2: [t] burst", "out of range [1, 512]");
	expect_error("burst = 513", "t.ini:2: [t] burst", "out of range");
	expect_error("small = 256", "[t] small", "too large (at most 255)");
	expect_error("rate = 999bit", "[t] rate", "out of range");
	expect_error("rate = fast", "[t] rate", "not a rate");
	expect_error("wait = 3s", "[t] wait", "out of range");
	expect_error("on = maybe", "[t] on", "not a boolean");
	expect_error("loss = 101%", "[t] loss", "out of range");
	expect_error("loss = x", "[t] loss", "not a percentage");
	expect_error("colour = blue", "[t] colour", "'blue' is not red or green");
	expect_error("custom = plain", "[t] custom", "not magic");
}

static void
test_a_field_that_does_not_fit_its_kind_is_a_table_error(void **state)
{
	(void)state;
	static const struct ini_key bad = {
		"b", INI_KIND_BOOL, INI_AT(struct conf, burst), .def = "on",
	};
	struct conf c;
	char err[256];

	assert_int_equal(ini_keys_defaults("t", &bad, 1, &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "table error"));
}

static void
test_the_reference_print_has_default_kind_range_and_doc(void **state)
{
	(void)state;
	static const struct ini_key k[] = {
		{ "burst", INI_KIND_UINT, INI_AT(struct conf, burst), 1, 512,
		  .def = "32", .unit = "packets", .reload = true, .doc = "per burst" },
	};
	char buf[256] = "";
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	assert_non_null(f);
	ini_keys_print(f, "t", k, 1);
	fclose(f);
	assert_string_equal(buf, "[t] burst = 32\tuint\tpackets\t1..512\treload\tper burst\n");
}

static void
test_zero_means_off_below_the_range_of_a_key_that_allows_it(void **state)
{
	(void)state;
	static const struct ini_key k = {
		"hold", INI_KIND_TIME, INI_AT(struct conf, wait_ns), 100000, 1000000000,
		1000000, .zero_off = true,
	};
	struct conf c = { .wait_ns = 7 };
	char why[192];

	assert_int_equal(ini_key_parse(&k, "0", &c, why, sizeof(why)), 0);
	assert_int_equal(c.wait_ns, 0);
	assert_int_equal(ini_key_parse(&k, "100us", &c, why, sizeof(why)), 0);
	assert_int_equal(c.wait_ns, 100000);
	assert_int_equal(ini_key_parse(&k, "50us", &c, why, sizeof(why)), -1);
	assert_int_equal(c.wait_ns, 100000);
	/* The bounds read in the key's units, and say that 0 is off. */
	assert_string_equal(why, "50us is out of range [100us, 1s] (or 0: off)");
}

static void
test_range_errors_give_rates_and_sizes_in_their_units(void **state)
{
	(void)state;
	static const struct ini_key rate = {
		"rate", INI_KIND_RATE, INI_AT(struct conf, rate), 64000, 100000000000ULL, .def = NULL,
	};
	static const struct ini_key size = {
		"size", INI_KIND_SIZE, INI_AT(struct conf, size), 4096, 64 << 20, .def = NULL,
	};
	struct conf c;
	char why[192];

	assert_int_equal(ini_key_parse(&rate, "1kbit", &c, why, sizeof(why)), -1);
	assert_string_equal(why, "1kbit is out of range [64kbit, 100gbit]");
	assert_int_equal(ini_key_parse(&size, "1k", &c, why, sizeof(why)), -1);
	assert_string_equal(why, "1k is out of range [4kb, 64mb]");
}

static void
test_prefixes_of_both_families_clear_their_host_bits(void **state)
{
	(void)state;
	struct ini_prefix p;
	char why[192];
	static const uint8_t v4[4] = { 198, 18, 0, 0 };
	static const uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x80 };

	assert_int_equal(ini_parse_prefix("198.19.7.1/15", false, &p, why, sizeof(why)), 0);
	assert_int_equal(p.family, 4);
	assert_int_equal(p.depth, 15);
	assert_memory_equal(p.addr, v4, 4);
	assert_int_equal(ini_parse_prefix("2001:db8:80ff::1/33", false, &p, why, sizeof(why)), 0);
	assert_int_equal(p.family, 6);
	assert_int_equal(p.depth, 33);
	assert_memory_equal(p.addr, v6, 16);
	assert_int_equal(ini_parse_prefix("198.18.0.9", false, &p, why, sizeof(why)), 0);
	assert_int_equal(p.depth, 32);
	assert_int_equal(p.addr[3], 9);
	assert_int_equal(ini_parse_prefix("::/0", true, &p, why, sizeof(why)), 0);
	assert_int_equal(p.depth, 0);
}

static void
test_bad_prefixes_are_refused_with_a_reason(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"", "/8", "198.18.0.0/33", "2001:db8::/129", "198.18.0.0/", "198.18.0.0/x",
		"198.18.0.0/-1", "198.18.0.0/8/8", "198.18.0.256", "example.org/8",
		"2001:db8::/32 ", "198.18.0.0/0",
	};
	struct ini_prefix p;
	char why[192];

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		if (ini_parse_prefix(bad[i], false, &p, why, sizeof(why)) != -1)
			fail_msg("'%s' was accepted", bad[i]);
		assert_true(why[0] != '\0');
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_come_from_the_table_text),
		cmocka_unit_test(test_a_section_is_applied_marked_used_and_reported_in_set),
		cmocka_unit_test(test_bad_values_name_file_line_key_and_reason),
		cmocka_unit_test(test_a_field_that_does_not_fit_its_kind_is_a_table_error),
		cmocka_unit_test(test_the_reference_print_has_default_kind_range_and_doc),
		cmocka_unit_test(test_zero_means_off_below_the_range_of_a_key_that_allows_it),
		cmocka_unit_test(test_range_errors_give_rates_and_sizes_in_their_units),
		cmocka_unit_test(test_prefixes_of_both_families_clear_their_host_bits),
		cmocka_unit_test(test_bad_prefixes_are_refused_with_a_reason),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
