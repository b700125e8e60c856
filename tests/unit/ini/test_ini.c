/* SPDX-License-Identifier: BSD-3-Clause */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ini.h"

static struct ini_file *
parse(const char *text, char *err)
{
	return ini_parse("t.ini", text, strlen(text), err, 256);
}

static void
test_keys_keep_their_section_and_line(void **state)
{
	(void)state;
	char err[256];
	struct ini_file *f = parse("# c\n[a]\nx = 1 # trailing\n\n[b]\n  y=two words  \n", err);
	assert_non_null(f);
	assert_int_equal(f->count, 2);
	assert_string_equal(f->entries[0].section, "a");
	assert_string_equal(f->entries[0].value, "1");
	assert_int_equal(f->entries[0].line, 3);
	assert_string_equal(f->entries[1].value, "two words");
	assert_int_equal(f->entries[1].line, 6);
	assert_int_equal(f->nsections, 2);
	struct ini_entry *e = ini_get(f, "b", "y");
	assert_non_null(e);
	assert_true(e->used);
	assert_null(ini_get(f, "a", "y"));
	ini_free(f);
}

static void
test_later_duplicate_wins_and_both_are_consumed(void **state)
{
	(void)state;
	char err[256];
	struct ini_file *f = parse("[s]\nk=1\nk=2\n", err);
	struct ini_entry *e = ini_get(f, "s", "k");
	assert_string_equal(e->value, "2");
	assert_true(f->entries[0].used);
	ini_free(f);
}

static void
test_syntax_errors_name_the_line(void **state)
{
	(void)state;
	char err[256];
	assert_null(parse("[s]\nnovalue\n", err));
	assert_non_null(strstr(err, "t.ini:2:"));
	assert_null(parse("[s\n", err));
	assert_non_null(strstr(err, "t.ini:1:"));
	assert_null(parse("[]\n", err));
	assert_null(parse("[s]\n= 5\n", err));
	assert_non_null(strstr(err, "missing key"));
}

static void
test_numbers_are_whole_and_in_range(void **state)
{
	(void)state;
	char err[256];
	uint64_t v;
	assert_int_equal(ini_parse_u64("42", 0, 100, &v, err, 256), 0);
	assert_int_equal(v, 42);
	assert_int_equal(ini_parse_u64("0x10", 0, 100, &v, err, 256), 0);
	assert_int_equal(v, 16);
	assert_int_equal(ini_parse_u64("42x", 0, 100, &v, err, 256), -1);
	assert_int_equal(ini_parse_u64("-1", 0, 100, &v, err, 256), -1);
	assert_int_equal(ini_parse_u64("101", 0, 100, &v, err, 256), -1);
	assert_non_null(strstr(err, "out of range"));
	assert_int_equal(ini_parse_u64("", 0, 100, &v, err, 256), -1);
}

static void
test_rates_times_and_sizes_take_units(void **state)
{
	(void)state;
	char err[256];
	uint64_t v;
	assert_int_equal(ini_parse_rate_bps("10mbit", &v, err, 256), 0);
	assert_int_equal(v, 10000000);
	assert_int_equal(ini_parse_rate_bps("1.5Gbit", &v, err, 256), 0);
	assert_int_equal(v, 1500000000);
	assert_int_equal(ini_parse_rate_bps("64kbit", &v, err, 256), 0);
	assert_int_equal(v, 64000);
	assert_int_equal(ini_parse_rate_bps("100gbit", &v, err, 256), 0);
	assert_int_equal(v, 100000000000ULL);
	assert_int_equal(ini_parse_rate_bps("fast", &v, err, 256), -1);
	assert_int_equal(ini_parse_rate_bps("10 furlongs", &v, err, 256), -1);
	assert_int_equal(ini_parse_time_ns("5ms", 1, &v, err, 256), 0);
	assert_int_equal(v, 5000000);
	assert_int_equal(ini_parse_time_ns("100", 1000, &v, err, 256), 0);
	assert_int_equal(v, 100000);
	assert_int_equal(ini_parse_time_ns("1s", 1, &v, err, 256), 0);
	assert_int_equal(v, 1000000000);
	assert_int_equal(ini_parse_time_ns("5 parsecs", 1, &v, err, 256), -1);
	assert_int_equal(ini_parse_size("32mb", &v, err, 256), 0);
	assert_int_equal(v, 32u << 20);
	assert_int_equal(ini_parse_size("1514", &v, err, 256), 0);
	assert_int_equal(v, 1514);
	bool b;
	assert_int_equal(ini_parse_bool("On", &b, err, 256), 0);
	assert_true(b);
	assert_int_equal(ini_parse_bool("no", &b, err, 256), 0);
	assert_false(b);
	assert_int_equal(ini_parse_bool("maybe", &b, err, 256), -1);
}

static void
test_nul_bytes_and_missing_files_are_errors(void **state)
{
	(void)state;
	char err[256];
	assert_null(ini_parse("t.ini", "[a]\0x=1", 7, err, 256));
	assert_non_null(strstr(err, "NUL"));
	assert_null(ini_load("/nonexistent/x.ini", err, 256));
	assert_non_null(strstr(err, "cannot open"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys_keep_their_section_and_line),
		cmocka_unit_test(test_later_duplicate_wins_and_both_are_consumed),
		cmocka_unit_test(test_syntax_errors_name_the_line),
		cmocka_unit_test(test_numbers_are_whole_and_in_range),
		cmocka_unit_test(test_rates_times_and_sizes_take_units),
		cmocka_unit_test(test_nul_bytes_and_missing_files_are_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
