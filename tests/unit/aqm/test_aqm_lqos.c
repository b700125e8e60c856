/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * LibreQoS's ShapedDevices.csv: rows become entries grouped by circuit,
 * every malformed row refuses the file on its line, the devices of one
 * circuit share a pipe pair in the table, and the loader tells the two
 * formats apart by the header.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "aqm_subs.h"
#include "aqm_subs_test.h"
#include "aqm_test_util.h"

#define HDR "Circuit ID,Circuit Name,Device ID,Device Name,Parent Node,MAC,IPv4,IPv6," \
	    "Download Min Mbps,Upload Min Mbps,Download Max Mbps,Upload Max Mbps,Comment\n"

static const char sample[] =
	HDR
	"# a comment between rows\n"
	"1001,\"Flat 1, Example Road\",1,Router,AP_A,,\"198.18.0.1, 198.18.0.2\",2001:db8:1::/56,10,2,100,20,\n"
	"1001,\"Flat 1, Example Road\",2,Phone,AP_A,,198.18.0.3,,10,2,100,20,\"a \"\"quoted\"\" comment\"\r\n"
	"\n"
	"1002,Shop,3,CPE,,02:00:00:00:00:10,198.18.1.0/29,\"2001:db8:2::/56,2001:db8:3::/64\",0,0,50.5,10.25,\n"
	"1003,School,4,Gateway,,,,,0,0,2.5,1,no address yet\n";

static int
parse(const char *text, struct aqm_sub_entry **v, struct aqm_lqos_report *rep,
      char *err, size_t errlen)
{
	return aqm_subs_lqos_parse(text, strlen(text), "SD.csv", v, rep, err, errlen);
}

static void
test_rows_become_entries_grouped_by_circuit_at_the_circuit_s_max_rates(void **state)
{
	struct aqm_sub_entry *v;
	struct aqm_lqos_report rep;
	char err[256];

	(void)state;
	assert_int_equal(parse(sample, &v, &rep, err, sizeof(err)), 7);
	/* Circuit 1001: three IPv4 addresses and one IPv6 prefix, one group. */
	assert_int_equal(v[0].family, 4);
	assert_int_equal(v[0].depth, 32);
	assert_int_equal(v[0].addr[3], 1);
	assert_int_equal(v[1].addr[3], 2);
	assert_int_equal(v[2].family, 6);
	assert_int_equal(v[2].depth, 56);
	assert_int_equal(v[3].addr[3], 3);
	assert_int_equal(v[3].line, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(v[i].group, v[0].group);
		assert_int_equal(v[i].down_bps, 100000000);
		assert_int_equal(v[i].up_bps, 20000000);
	}
	/* Circuit 1002: a CIDR and a quoted IPv6 list, fractional Mbps. */
	assert_int_equal(v[4].depth, 29);
	assert_int_equal(v[4].down_bps, 50500000);
	assert_int_equal(v[4].up_bps, 10250000);
	assert_int_equal(v[5].depth, 56);
	assert_int_equal(v[6].depth, 64);
	assert_true(v[4].group != v[0].group && v[4].group != 0);
	assert_int_equal(v[6].group, v[4].group);
	assert_true(rep.libreqos == false); /* set by aqm_subs_load() only */
	assert_int_equal(rep.rows, 4);
	assert_int_equal(rep.circuits, 3);
	assert_int_equal(rep.prefixes, 7);
	assert_int_equal(rep.no_address_rows, 1);
	/* Min Mbps above 0 in two rows, Parent Node in two, MAC in one. */
	assert_string_equal(rep.unhonoured_names[0], "Download Min Mbps");
	assert_int_equal(rep.unhonoured_rows[0], 2);
	assert_int_equal(rep.unhonoured_rows[1], 2);
	assert_string_equal(rep.unhonoured_names[2], "Parent Node");
	assert_int_equal(rep.unhonoured_rows[2], 2);
	assert_string_equal(rep.unhonoured_names[3], "MAC");
	assert_int_equal(rep.unhonoured_rows[3], 1);
	char line[512];
	aqm_lqos_report_format(&rep, line, sizeof(line));
	assert_non_null(strstr(line, "3 circuits (one pipe pair each), 7 prefixes"));
	assert_non_null(strstr(line, "'MAC' in 1 rows"));
	assert_non_null(strstr(line, "1 rows have no IPv4 or IPv6 address"));
	free(v);
}

static void
test_a_later_row_of_a_circuit_with_other_rates_takes_the_first_row_s_and_is_counted(void **state)
{
	struct aqm_sub_entry *v;
	struct aqm_lqos_report rep;
	char err[256];

	(void)state;
	assert_int_equal(parse(HDR "7,a,1,d,,,198.18.0.1,,0,0,10,5,\n"
				   "7,a,2,e,,,198.18.0.2,,0,0,20,5,\n", &v, &rep, err, sizeof(err)), 2);
	assert_int_equal(v[1].down_bps, 10000000);
	assert_int_equal(rep.rate_mismatch_rows, 1);
	assert_int_equal(rep.circuits, 1);
	free(v);
}

/* Each bad file is refused whole, with the line and the reason. */
static void
test_a_malformed_row_refuses_the_whole_file_naming_its_line(void **state)
{
	static const struct { const char *rows; const char *want; } bad[] = {
		{ "1,a,1,d,,,198.18.0.1,,0,0,fast,5,\n", "SD.csv:2: bad Download Max Mbps 'fast'" },
		{ "1,a,1,d,,,198.18.0.1,,0,0,1.2.3,5,\n", "SD.csv:2: bad Download Max Mbps '1.2.3'" },
		{ "1,a,1,d,,,198.18.0.1,,0,0,-5,5,\n", "SD.csv:2: bad Download Max Mbps '-5'" },
		{ "1,a,1,d,,,198.18.0.1,,0,0,1e3,5,\n", "SD.csv:2: bad Download Max Mbps '1e3'" },
		{ "1,a,1,d,,,198.18.0.1,,0,0,0,5,\n", "SD.csv:2: bad Download Max Mbps '0'" },
		{ "1,a,1,d,,,198.18.0.1,,0,0,10,,\n", "SD.csv:2: bad Upload Max Mbps ''" },
		{ "1,a,1,d,,,198.18.0.1,,x,0,10,5,\n", "SD.csv:2: bad Download Min Mbps 'x'" },
		{ "1,a,1,d,,,\"198.18.0.1, 198.18.0.300\",,0,0,10,5,\n",
		  "SD.csv:2: bad IPv4 address or prefix '198.18.0.300'" },
		{ "1,a,1,d,,,2001:db8::1,,0,0,10,5,\n", "SD.csv:2: bad IPv4 address or prefix '2001:db8::1'" },
		{ "1,a,1,d,,,198.18.0.1,198.18.0.2,0,0,10,5,\n", "SD.csv:2: bad IPv6 address or prefix '198.18.0.2'" },
		{ "1,a,1,d,,,\"198.18.0.1,0,0,10,5,\n", "SD.csv:2: field 7: quote not closed on this line" },
		{ "1,a\"b,1,d,,,198.18.0.1,,0,0,10,5,\n", "SD.csv:2: field 2: a quote inside an unquoted field" },
		{ "1,\"a\"b,1,d,,,198.18.0.1,,0,0,10,5,\n", "SD.csv:2: field 2: text after its closing quote" },
		{ "1,a,1,d,,,198.18.0.1,,0,0,10,5\n", "SD.csv:2: 12 fields, the header has 13" },
		{ ",a,1,d,,,198.18.0.1,,0,0,10,5,\n", "SD.csv:2: empty Circuit ID" },
		{ "1,a,1,d,,,198.18.0.1,,0,0,10,5,\n2,b,2,e,,,198.18.0.0/24,2001:db8::/48,0,0,10,5,\n"
		  "3,c,3,f,,,198.18.0.1/32,,0,0,10,5,\n", "SD.csv:4: 198.18.0.1/32 already listed on line 2" },
	};
	struct aqm_sub_entry *v = (void *)&v;
	struct aqm_lqos_report rep;
	char text[1024], err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), HDR "%s", bad[i].rows);
		err[0] = '\0';
		assert_int_equal(parse(text, &v, &rep, err, sizeof(err)), -EINVAL);
		assert_null(v);
		if (strncmp(err, bad[i].want, strlen(bad[i].want)) != 0)
			fail_msg("case %zu: '%s', want '%s'", i, err, bad[i].want);
	}
	assert_int_equal(parse("Circuit ID,IPv4,IPv6,Download Max Mbps\n", &v, &rep, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "SD.csv:1: header has no 'Upload Max Mbps' column");
	assert_int_equal(parse("# only a comment\n", &v, &rep, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "SD.csv: no ShapedDevices.csv header (Circuit ID,...)");
	assert_int_equal(parse("1,a,1,d\n", &v, &rep, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "SD.csv:1: expected the ShapedDevices.csv header (Circuit ID,...)");
}

/* Columns may come in any order and unknown ones are counted, not fatal. */
static void
test_columns_are_found_by_name_and_unknown_ones_are_counted(void **state)
{
	struct aqm_sub_entry *v;
	struct aqm_lqos_report rep;
	char err[256];

	(void)state;
	assert_int_equal(parse("\"Circuit ID\",Upload Max Mbps,Download Max Mbps,IPv6,IPv4,SQM\n"
			       "c1,5,40,2001:db8:9::/48,,cake\n"
			       "c2,5,40,,198.18.3.3,\n", &v, &rep, err, sizeof(err)), 2);
	assert_int_equal(v[0].family, 6);
	assert_int_equal(v[0].down_bps, 40000000);
	assert_int_equal(v[0].up_bps, 5000000);
	assert_int_equal(rep.unknown_columns, 1);
	free(v);
}

/*
 * In the table, the devices of one circuit reach the same pipe, other
 * circuits their own; applying the same file again keeps every id, and
 * a device that moves to another circuit follows it.
 */
static void
test_the_devices_of_one_circuit_share_one_pipe_and_keep_it_on_reload(void **state)
{
	struct aqm_subs_params p;
	struct aqm_subs *s;
	struct aqm_sub_entry *v;
	struct aqm_lqos_report rep;
	struct rte_mbuf *m[4];
	char err[256];
	int n;

	(void)state;
	aqm_subs_params_default(&p);
	p.name = "lqos";
	p.max_subs = 16;
	p.max_v6_subs = 8;
	s = aqm_subs_create(&p);
	assert_non_null(s);
	n = parse(sample, &v, &rep, err, sizeof(err));
	assert_int_equal(n, 7);
	assert_int_equal(aqm_subs_apply(s, v, (uint32_t)n, err, sizeof(err)), 7);
	assert_int_equal(aqm_subs_count(s), 7);
	/* Two pipe pairs for three circuits' worth of rows (1003 has no
	 * address) plus the placeholder pipe 0. */
	assert_int_equal(aqm_sched_pipe_count(aqm_subs_sched(s, AQM_DIR_DOWN)), 3);
	for (int i = 0; i < 4; i++)
		m[i] = test_pkt4((uint32_t)(i + 1), 100, 0); /* src 198.18.0.1 .. .4 */
	assert_int_equal(aqm_subs_lookup(s, AQM_DIR_UP, m[0]), 1);
	assert_int_equal(aqm_subs_lookup(s, AQM_DIR_UP, m[1]), 1);
	assert_int_equal(aqm_subs_lookup(s, AQM_DIR_UP, m[2]), 1);
	assert_int_equal(aqm_subs_lookup(s, AQM_DIR_UP, m[3]), -ENOENT);
	assert_int_equal(aqm_subs_find(s, &v[2]), 1);  /* the IPv6 /56 */
	assert_int_equal(aqm_subs_find(s, &v[6]), 2);
	/* The same file again: nothing new, the same ids. */
	assert_int_equal(aqm_subs_apply(s, v, (uint32_t)n, err, sizeof(err)), 7);
	assert_int_equal(aqm_sched_pipe_count(aqm_subs_sched(s, AQM_DIR_DOWN)), 3);
	assert_int_equal(aqm_subs_lookup(s, AQM_DIR_UP, m[1]), 1);
	/* 198.18.0.3 moves to circuit 1002; 198.18.0.4 joins it too. */
	free(v);
	n = parse(HDR "1001,a,1,d,,,\"198.18.0.1, 198.18.0.2\",,0,0,100,20,\n"
		      "1002,b,2,e,,,\"198.18.0.3,198.18.0.4\",,0,0,50,10,\n",
		  &v, &rep, err, sizeof(err));
	assert_int_equal(n, 4);
	assert_int_equal(aqm_subs_apply(s, v, (uint32_t)n, err, sizeof(err)), 4);
	assert_int_equal(aqm_sched_pipe_count(aqm_subs_sched(s, AQM_DIR_DOWN)), 3);
	assert_int_equal(aqm_subs_lookup(s, AQM_DIR_UP, m[0]), 1);
	assert_int_equal(aqm_subs_lookup(s, AQM_DIR_UP, m[2]), 2);
	assert_int_equal(aqm_subs_lookup(s, AQM_DIR_UP, m[3]), 2);
	assert_int_equal(aqm_subs_find(s, &v[2]), 2);
	free(v);
	for (int i = 0; i < 4; i++)
		rte_pktmbuf_free(m[i]);
	aqm_subs_free(s);
}

/* A circuit list that does not fit changes nothing, groups included. */
static void
test_a_circuit_list_that_does_not_fit_changes_nothing(void **state)
{
	struct aqm_subs_params p;
	struct aqm_subs *s;
	struct aqm_sub_entry *v;
	struct aqm_lqos_report rep;
	struct rte_mbuf *m = test_pkt4(5, 100, 0);
	char err[256];
	int n;

	(void)state;
	aqm_subs_params_default(&p);
	p.name = "lqfull";
	p.max_subs = 3;
	p.max_v6_subs = 1;
	s = aqm_subs_create(&p);
	assert_non_null(s);
	n = parse(HDR "1,a,1,d,,,198.18.0.1,,0,0,10,5,\n", &v, &rep, err, sizeof(err));
	assert_int_equal(aqm_subs_apply(s, v, (uint32_t)n, err, sizeof(err)), 1);
	free(v);
	n = parse(HDR "1,a,1,d,,,\"198.18.0.1,198.18.0.5\",,0,0,10,5,\n"
		      "2,b,2,e,,,\"198.18.0.6,198.18.0.7\",,0,0,10,5,\n",
		  &v, &rep, err, sizeof(err));
	assert_int_equal(n, 4);
	assert_int_equal(aqm_subs_apply(s, v, (uint32_t)n, err, sizeof(err)), -ENOSPC);
	assert_string_equal(err, "line 3: more than the limit of 3 subscribers");
	assert_int_equal(aqm_subs_count(s), 1);
	assert_int_equal(aqm_sched_pipe_count(aqm_subs_sched(s, AQM_DIR_DOWN)), 2);
	assert_int_equal(aqm_subs_lookup(s, AQM_DIR_UP, m), -ENOENT);
	free(v);
	/* Circuit 2 was taken back whole: it can come again later. */
	n = parse(HDR "2,b,2,e,,,198.18.0.6,,0,0,10,5,\n", &v, &rep, err, sizeof(err));
	assert_int_equal(aqm_subs_apply(s, v, (uint32_t)n, err, sizeof(err)), 1);
	assert_int_equal(aqm_subs_find(s, &v[0]), 2);
	free(v);
	rte_pktmbuf_free(m);
	aqm_subs_free(s);
}

static void
test_the_loader_tells_the_formats_apart_by_the_header(void **state)
{
	char tmpl[] = "/tmp/lqos-XXXXXX";
	struct aqm_sub_entry *v;
	struct aqm_lqos_report rep;
	char err[256];
	int fd;
	FILE *f;

	(void)state;
	fd = mkstemp(tmpl);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fprintf(f, "# exported\n\n%s", sample);
	fclose(f);
	assert_int_equal(aqm_subs_load(tmpl, &v, &rep, err, sizeof(err)), 7);
	assert_true(rep.libreqos);
	assert_int_equal(rep.circuits, 3);
	free(v);
	f = fopen(tmpl, "w");
	fprintf(f, "# sluice's own\nprefix,down,up\n198.18.0.0/24,20mbit,5mbit\n");
	fclose(f);
	assert_int_equal(aqm_subs_load(tmpl, &v, &rep, err, sizeof(err)), 1);
	assert_false(rep.libreqos);
	assert_int_equal(v[0].group, 0);
	free(v);
	f = fopen(tmpl, "w");
	fprintf(f, HDR "1,a,1,d,,,198.18.0.1,,0,0,ten,5,\n");
	fclose(f);
	assert_int_equal(aqm_subs_load(tmpl, &v, &rep, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":2: bad Download Max Mbps 'ten'"));
	assert_false(rep.libreqos);
	unlink(tmpl);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_become_entries_grouped_by_circuit_at_the_circuit_s_max_rates),
		cmocka_unit_test(test_a_later_row_of_a_circuit_with_other_rates_takes_the_first_row_s_and_is_counted),
		cmocka_unit_test(test_a_malformed_row_refuses_the_whole_file_naming_its_line),
		cmocka_unit_test(test_columns_are_found_by_name_and_unknown_ones_are_counted),
		cmocka_unit_test(test_the_devices_of_one_circuit_share_one_pipe_and_keep_it_on_reload),
		cmocka_unit_test(test_a_circuit_list_that_does_not_fit_changes_nothing),
		cmocka_unit_test(test_the_loader_tells_the_formats_apart_by_the_header),
	};

	if (test_eal_init("lqos", 1023, 512) != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
