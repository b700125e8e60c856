/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Subscriber table: CSV loading, prefix lookup, default policy, adding
 * subscribers and changing rates with packets queued.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <rte_malloc.h>

#include "aqm_subs.h"
#include "aqm_subs_test.h" /* aqm_subs_add, _count, _enqueue_burst */
#include "aqm_test_util.h"

#define MS 1000000ULL
#define T0 (1000 * MS)

static struct aqm_subs *
make_subs(const char *name, enum aqm_default_policy pol)
{
	struct aqm_subs_params p;

	aqm_subs_params_default(&p);
	p.name = name;
	p.max_subs = 64;
	p.max_v6_subs = 16;
	p.default_policy = pol;
	p.default_pipe.shaper.rate_bps = 1000000;
	p.default_up_bps = 1000000;
	return aqm_subs_create(&p);
}

/* The same with CoDel out of the way (target 1 s): a test that counts
 * every packet of a long queue. */
static struct aqm_subs *
make_subs_quiet(const char *name)
{
	struct aqm_subs_params p;

	aqm_subs_params_default(&p);
	p.name = name;
	p.max_subs = 64;
	p.max_v6_subs = 16;
	p.pipe.fq.codel.target_ns = 1000 * MS;
	p.pipe.fq.codel.interval_ns = 3000 * MS;
	return aqm_subs_create(&p);
}

static struct aqm_sub_entry
entry(const char *line)
{
	struct aqm_sub_entry e;
	char why[128];

	assert_int_equal(aqm_subs_csv_parse_line(line, &e, why, sizeof(why)), 0);
	return e;
}

static void
test_csv_lines_parse_prefixes_rates_and_profiles(void **state)
{
	struct aqm_sub_entry e;
	char why[128];

	(void)state;
	e = entry("198.18.7.9/24, 40mbit, 10mbit, vdsl2");
	assert_int_equal(e.family, 4);
	assert_int_equal(e.depth, 24);
	assert_int_equal(e.addr[3], 0); /* host bits cleared */
	assert_int_equal(e.down_bps, 40000000);
	assert_int_equal(e.up_bps, 10000000);
	assert_true(e.has_profile);
	assert_int_equal(e.profile.framing, AQM_FRAMING_PTM);
	e = entry("2001:db8:1::/48,30M,5M");
	assert_int_equal(e.family, 6);
	assert_int_equal(e.depth, 48);
	assert_false(e.has_profile);
	assert_int_equal(aqm_subs_csv_parse_line("# comment", &e, why, sizeof(why)), 1);
	assert_int_equal(aqm_subs_csv_parse_line("prefix,down,up,profile", &e, why, sizeof(why)), 1);
	assert_int_equal(aqm_subs_csv_parse_line("  ", &e, why, sizeof(why)), 1);
	assert_int_equal(aqm_subs_csv_parse_line("198.18.0.300,1M,1M", &e, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "bad prefix '198.18.0.300'");
	assert_int_equal(aqm_subs_csv_parse_line("198.18.0.1,1M", &e, why, sizeof(why)), -EINVAL);
	assert_int_equal(aqm_subs_csv_parse_line("198.18.0.1,1M,1k", &e, why, sizeof(why)), -EINVAL);
	assert_int_equal(aqm_subs_csv_parse_line("198.18.0.1,1M,1M,dialup", &e, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "unknown overhead profile 'dialup'");
	/* A fifth column: the subscriber's own host isolation. */
	e = entry("198.18.0.1,1M,1M,,dual-srchost");
	assert_false(e.has_profile);
	assert_true(e.has_isolation);
	assert_int_equal(e.isolation, AQM_ISO_SRCHOST);
	e = entry("198.18.0.1,1M,1M,ethernet,Triple-Isolate");
	assert_true(e.has_profile);
	assert_int_equal(e.isolation, AQM_ISO_TRIPLE);
	e = entry("198.18.0.1,1M,1M,ethernet,");
	assert_false(e.has_isolation);
	assert_int_equal(aqm_subs_csv_parse_line("198.18.0.1,1M,1M,,hosts", &e, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "unknown isolation 'hosts' (flows, dual-srchost, dual-dsthost, triple-isolate)");
	assert_int_equal(aqm_subs_csv_parse_line("198.18.0.1,1M,1M,,flows,x", &e, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "unknown autorate 'x' (off, down, up, both)");
	assert_int_equal(aqm_subs_csv_parse_line("198.18.0.1,1M,1M,,flows,,,,,,x", &e, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "more than 10 fields");
}

/*
 * Columns 6 to 10 override autorate per subscriber: its directions, and
 * per direction a floor and a ceiling; an empty field keeps the [aqm]
 * key's value, and a contradiction is refused on its line.
 */
static void
test_csv_autorate_columns_override_mode_floors_and_ceilings(void **state)
{
	struct aqm_sub_entry e;
	char why[128];

	(void)state;
	e = entry("198.18.0.1,20M,5M");
	assert_false(e.has_autorate);
	assert_int_equal(e.ar_floor_bps[AQM_DIR_DOWN], 0);
	assert_int_equal(e.ar_ceiling_bps[AQM_DIR_UP], 0);
	e = entry("198.18.0.1,20M,5M,,,both,2mbit,512kbit,30mbit,8mbit");
	assert_true(e.has_autorate);
	assert_int_equal(e.autorate, (1 << AQM_DIR_DOWN) | (1 << AQM_DIR_UP));
	assert_int_equal(e.ar_floor_bps[AQM_DIR_DOWN], 2000000);
	assert_int_equal(e.ar_floor_bps[AQM_DIR_UP], 512000);
	assert_int_equal(e.ar_ceiling_bps[AQM_DIR_DOWN], 30000000);
	assert_int_equal(e.ar_ceiling_bps[AQM_DIR_UP], 8000000);
	e = entry("198.18.0.1,20M,5M,,,Off");
	assert_true(e.has_autorate);
	assert_int_equal(e.autorate, 0);
	e = entry("198.18.0.1,20M,5M,,,up,,1mbit");
	assert_int_equal(e.autorate, 1 << AQM_DIR_UP);
	assert_int_equal(e.ar_floor_bps[AQM_DIR_DOWN], 0);
	assert_int_equal(e.ar_floor_bps[AQM_DIR_UP], 1000000);
	e = entry("198.18.0.1,20M,5M,,,,,,,6mbit");
	assert_false(e.has_autorate);
	assert_int_equal(e.ar_ceiling_bps[AQM_DIR_UP], 6000000);
	assert_int_equal(aqm_subs_csv_parse_line("198.18.0.1,20M,5M,,,down,10mbit,,5mbit", &e, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "ceiling_down below floor_down");
	assert_int_equal(aqm_subs_csv_parse_line("198.18.0.1,20M,5M,,,down,1k", &e, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "bad floor_down '1k' (64kbit..100gbit)");
	assert_int_equal(aqm_subs_csv_parse_line("198.18.0.1,20M,5M,,,down,,,,fast", &e, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "bad ceiling_up 'fast' (64kbit..100gbit)");
	assert_int_equal(aqm_subs_csv_parse_line("prefix,down,up,profile,isolation,autorate,floor_down,floor_up,ceiling_down,ceiling_up", &e, why, sizeof(why)), 1);
}

/*
 * A subscriber's isolation column sets its two pipes' mode, at add and on
 * every re-apply (a reload without the column goes back to the
 * template's); a table whose template isolates no hosts keeps no host
 * state, so a subscriber cannot ask for it there.
 */
static void
test_a_subscribers_isolation_column_overrides_the_template(void **state)
{
	struct aqm_subs_params p;
	struct aqm_sub_entry e;
	struct aqm_subs *s;
	char err[128];

	(void)state;
	aqm_subs_params_default(&p);
	p.name = "iso_flows";
	p.max_subs = 4;
	p.max_v6_subs = 0;
	s = aqm_subs_create(&p);
	assert_non_null(s);
	e = entry("198.18.0.1,1M,1M,,dual-srchost");
	assert_int_equal(aqm_subs_add(s, &e), -EPERM);
	assert_int_equal(aqm_subs_apply(s, &e, 1, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "host isolation needs [aqm] isolation"));
	e = entry("198.18.0.1,1M,1M,,flows");
	assert_int_equal(aqm_subs_add(s, &e), 1);
	aqm_subs_free(s);

	p.name = "iso_triple";
	p.pipe.fq.isolation = AQM_ISO_TRIPLE;
	s = aqm_subs_create(&p);
	assert_non_null(s);
	e = entry("198.18.0.1,1M,1M,,dual-srchost");
	assert_int_equal(aqm_subs_add(s, &e), 1);
	e = entry("198.18.0.2,1M,1M");
	assert_int_equal(aqm_subs_add(s, &e), 2);
	/* Re-applied: subscriber 1 without its column, 2 with one. */
	e = entry("198.18.0.1,2M,2M");
	assert_int_equal(aqm_subs_add(s, &e), 1);
	e = entry("198.18.0.2,2M,2M,,flows");
	assert_int_equal(aqm_subs_add(s, &e), 2);
	aqm_subs_free(s);
}

static void
test_the_line_parser_leaves_a_reason_string_on_every_return(void **state)
{
	/* /sluice/aqm_set hands its parameters to this parser and echoes
	 * why: a blank, comment or header line must not leave it unset. */
	static const char *const lines[] = {
		"#", " ", "", "prefix,1m,1m", "198.18.0.1,1M,1M", "198.18.0.1,1M",
	};
	struct aqm_sub_entry e;
	char why[128];

	(void)state;
	for (unsigned int i = 0; i < RTE_DIM(lines); i++) {
		int rc;

		memset(why, 'x', sizeof(why));
		rc = aqm_subs_csv_parse_line(lines[i], &e, why, sizeof(why));
		assert_non_null(memchr(why, '\0', sizeof(why)));
		if (rc != 0)
			assert_true(why[0] != '\0');
	}
	memset(why, 'x', sizeof(why));
	assert_int_equal(aqm_subs_csv_parse_line("# note", &e, why, sizeof(why)), 1);
	assert_string_equal(why, "no subscriber: blank, comment or header line");
}

/* Load a CSV of len bytes (NULs allowed). */
static int
load_bytes(const char *data, size_t len, struct aqm_sub_entry **v, char *err, size_t errlen,
	   char *path, size_t pathlen)
{
	char tmpl[] = "/tmp/aqm_subs_XXXXXX";
	int fd = mkstemp(tmpl), rc;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	snprintf(path, pathlen, "%s", tmpl);
	rc = aqm_subs_csv_load(tmpl, v, err, errlen);
	unlink(tmpl);
	return rc;
}

static void
test_a_nul_byte_in_the_csv_is_an_error_on_its_line(void **state)
{
	static const char mid[] = "198.18.0.1,1M,1M\n198.18.0.2,1M,1M\0junk\n198.18.0.3,1M,1M\n";
	static const char last[] = "198.18.0.1,1M,1M\n198.18.0.2,1M,1M\0junk";
	struct aqm_sub_entry *v;
	char err[256], want[300], path[64];

	(void)state;
	/* On the last line, without a newline, it was taken silently. */
	assert_int_equal(load_bytes(last, sizeof(last) - 1, &v, err, sizeof(err), path,
				    sizeof(path)), -EINVAL);
	assert_null(v);
	snprintf(want, sizeof(want), "%s:2: NUL byte in line", path);
	assert_string_equal(err, want);
	/* Elsewhere it was called a line too long. */
	assert_int_equal(load_bytes(mid, sizeof(mid) - 1, &v, err, sizeof(err), path,
				    sizeof(path)), -EINVAL);
	assert_null(v);
	snprintf(want, sizeof(want), "%s:2: NUL byte in line", path);
	assert_string_equal(err, want);
}

static void
test_csv_errors_name_the_file_and_line(void **state)
{
	char path[] = "/tmp/aqm_subs_XXXXXX";
	struct aqm_sub_entry *v;
	char err[256], want[300];
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	(void)state;
	fputs("prefix,down,up\n198.18.1.0/24,10mbit,2mbit\n\n198.18.2.0/24,ten,2mbit\n", f);
	fclose(f);
	assert_int_equal(aqm_subs_csv_load(path, &v, err, sizeof(err)), -EINVAL);
	assert_null(v);
	snprintf(want, sizeof(want), "%s:4: bad down rate 'ten'", path);
	assert_string_equal(err, want);
	f = fopen(path, "w");
	fputs("198.18.1.0/24,10mbit,2mbit\n2001:db8::/64,1G,100M,lte # fiber\n", f);
	fclose(f);
	assert_int_equal(aqm_subs_csv_load(path, &v, err, sizeof(err)), 2);
	assert_int_equal(v[1].line, 2);
	free(v);
	unlink(path);
}

static void
test_packets_reach_the_pipe_of_the_longest_matching_prefix(void **state)
{
	struct aqm_subs *s = make_subs("lpm", AQM_DEFAULT_PASS);
	struct aqm_sub_entry e[3] = {
		entry("198.18.0.0/16,10M,1M"),
		entry("198.18.1.0/24,20M,2M"),
		entry("2001:db8::/32,30M,3M"),
	};
	struct rte_mbuf *m4 = test_pkt4(0x00020005, 100, 0); /* dst 198.18.1.2 */
	struct rte_mbuf *m6 = test_pkt6(5, 100, 0);
	char err[128];

	(void)state;
	assert_non_null(s);
	assert_int_equal(aqm_subs_apply(s, e, 3, err, sizeof(err)), 3);
	assert_int_equal(aqm_subs_count(s), 3);
	assert_int_equal(aqm_subs_lookup(s, AQM_DIR_DOWN, m4), 2);
	/* Upstream uses the source, 198.18.0.5: only the /16 matches. */
	assert_int_equal(aqm_subs_lookup(s, AQM_DIR_UP, m4), 1);
	assert_int_equal(aqm_subs_lookup(s, AQM_DIR_DOWN, m6), 3);
	pkt_meta(m4)->dst[0] = 10;
	assert_int_equal(aqm_subs_lookup(s, AQM_DIR_DOWN, m4), -ENOENT);
	rte_pktmbuf_free(m4);
	rte_pktmbuf_free(m6);
	aqm_subs_free(s);
}

/*
 * aqm_subs_lookup_burst() asks the IPv4 table about every packet of a
 * burst, IPv4 or not, and then corrects the others: a non-IP frame whose
 * metadata holds a subscriber's address bytes matches in that table, and
 * that answer must not stick.
 */
static void
test_a_mixed_burst_gets_the_pipes_single_lookups_give(void **state)
{
	static const enum aqm_default_policy pol[2] = { AQM_DEFAULT_PASS, AQM_DEFAULT_PIPE };
	struct aqm_sub_entry e[3] = {
		entry("198.18.1.0/24,10M,1M"),
		entry("198.19.0.0/16,20M,2M"),
		entry("2001:db8:100::/48,30M,3M"),
	};
	/* Pipe ids: 1 (the /24), 2 (the /16), 3 (the IPv6 /48). */
	const uint8_t v4_sub[4] = { 198, 18, 1, 2 };
	struct rte_mbuf *m[6];
	char err[128];

	(void)state;
	m[0] = test_pkt4(0x00020005, 100, 0);   /* to 198.18.1.2: the /24 */
	m[1] = test_pkt4(0x00020005, 100, 0);   /* to 198.19.0.1: the /16 */
	pkt_meta(m[1])->dst[1] = 19;
	pkt_meta(m[1])->dst[2] = 0;
	m[2] = test_pkt6(5, 100, 0);            /* to 2001:db8:100::1 */
	m[3] = test_pkt6(5, 100, 0);            /* to 2001:db8:200::1: no one */
	pkt_meta(m[3])->dst[4] = 2;
	m[4] = test_pkt4(0x00020005, 100, 0);   /* not IP, a subscriber's bytes */
	pkt_meta(m[4])->l3 = PKT_L3_NONE;
	memcpy(pkt_meta(m[4])->dst, v4_sub, sizeof(v4_sub));
	m[5] = test_pkt4(0x00020005, 100, 0);   /* to 198.18.1.2 again */
	for (unsigned int k = 0; k < RTE_DIM(pol); k++) {
		struct aqm_subs *s = make_subs(k ? "mix_def" : "mix_pass", pol[k]);
		const int32_t miss = pol[k] == AQM_DEFAULT_PIPE ? 0 : -ENOENT;
		const uint64_t want[6] = { 1, 2, 3, 0, 0, 1 };
		uint64_t hop[6];

		assert_non_null(s);
		assert_int_equal(aqm_subs_apply(s, e, 3, err, sizeof(err)), 3);
		assert_int_equal(aqm_subs_default_pass(s), pol[k] == AQM_DEFAULT_PASS);
		aqm_subs_lookup_burst(s, AQM_DIR_DOWN, m, 6, hop);
		for (unsigned int i = 0; i < 6; i++) {
			assert_int_equal(hop[i], want[i]);
			assert_int_equal(hop[i] != 0 ? (int32_t)hop[i] : miss,
					 aqm_subs_lookup(s, AQM_DIR_DOWN, m[i]));
		}
		/* Upstream: the sources, 198.18.0.5 and 2001:db8::5, are
		 * no subscriber's. */
		aqm_subs_lookup_burst(s, AQM_DIR_UP, m, 6, hop);
		for (unsigned int i = 0; i < 6; i++) {
			assert_int_equal(hop[i], 0);
			assert_int_equal(miss, aqm_subs_lookup(s, AQM_DIR_UP, m[i]));
		}
		aqm_subs_free(s);
	}
	for (unsigned int i = 0; i < 6; i++)
		rte_pktmbuf_free(m[i]);
}

static void
test_unknown_addresses_pass_unshaped_or_use_the_default_pipe(void **state)
{
	struct aqm_subs *pass = make_subs("pass", AQM_DEFAULT_PASS);
	struct aqm_subs *def = make_subs("def", AQM_DEFAULT_PIPE);
	struct rte_mbuf *pkts[2] = { test_pkt4(1, 100, 0), test_pkt4(2, 100, 0) };
	struct rte_mbuf *out[4];

	(void)state;
	assert_non_null(pass);
	assert_non_null(def);
	assert_int_equal(aqm_subs_enqueue_burst(pass, AQM_DIR_DOWN, pkts, 2, T0), 2);
	assert_int_equal(aqm_subs_pending(pass), 0);
	assert_int_equal(aqm_subs_enqueue_burst(def, AQM_DIR_DOWN, pkts, 2, T0), 0);
	assert_int_equal(aqm_subs_pending(def), 2);
	/* 100 B at 1 Mbit/s: one now, the next 0.8 ms later. */
	assert_int_equal(aqm_subs_dequeue_burst(def, AQM_DIR_DOWN, out, 4, T0), 1);
	assert_int_equal(aqm_subs_dequeue_burst(def, AQM_DIR_DOWN, out + 1, 3, T0 + MS), 1);
	rte_pktmbuf_free_bulk(out, 2);
	aqm_subs_free(pass);
	aqm_subs_free(def);
}

static void
test_adding_subscribers_and_changing_rates_keeps_queued_packets_in_order(void **state)
{
	struct aqm_subs *s = make_subs("reload", AQM_DEFAULT_PASS);
	struct aqm_sub_entry a = entry("198.18.1.0/24,1M,1M");
	struct rte_mbuf *in[50], *out[64];
	struct aqm_pipe_stats st;
	unsigned int got = 0;
	char err[128];

	(void)state;
	assert_non_null(s);
	assert_int_equal(aqm_subs_add(s, &a), 1);
	for (int i = 0; i < 50; i++)
		in[i] = test_pkt4(1u << 16, 500, 0); /* one flow to 198.18.1.1 */
	assert_int_equal(aqm_subs_enqueue_burst(s, AQM_DIR_DOWN, in, 50, T0), 0);
	/* A reload: new subscribers and a new rate for the existing one. */
	for (uint64_t now = T0; got < 50; now += MS) {
		uint16_t n;

		if (now == T0 + 20 * MS) {
			struct aqm_sub_entry list[3] = {
				entry("198.18.2.0/24,5M,5M"),
				entry("198.18.1.0/24,50M,5M,ethernet"),
				entry("2001:db8:5::/48,5M,5M"),
			};

			assert_int_equal(aqm_subs_apply(s, list, 3, err, sizeof(err)), 3);
			assert_int_equal(aqm_subs_count(s), 3);
		}
		n = aqm_subs_dequeue_burst(s, AQM_DIR_DOWN, out, 64, now);
		for (uint16_t i = 0; i < n; i++, got++)
			assert_ptr_equal(out[i], in[got]);
		rte_pktmbuf_free_bulk(out, n);
		assert_true(now < T0 + 300 * MS);
	}
	aqm_sched_pipe_stats(aqm_subs_sched(s, AQM_DIR_DOWN), 1, &st);
	assert_int_equal(st.tx_pkts, 50);
	assert_int_equal(st.drops[AQM_DROP_CODEL] + st.drops[AQM_DROP_OVERFLOW] +
			 st.drops[AQM_DROP_MEMORY], 0);
	aqm_subs_free(s);
}

static void
test_a_reload_that_does_not_fit_changes_nothing(void **state)
{
	struct aqm_subs *s = make_subs("full", AQM_DEFAULT_PASS);
	struct aqm_sub_entry *list = calloc(70, sizeof(*list));
	char err[128];

	(void)state;
	assert_non_null(s);
	for (int i = 0; i < 70; i++) {
		char line[64];

		snprintf(line, sizeof(line), "198.18.%d.0/24,1M,1M", i);
		list[i] = entry(line);
	}
	assert_int_equal(aqm_subs_apply(s, list, 70, err, sizeof(err)), -ENOSPC);
	assert_int_equal(aqm_subs_count(s), 0);
	assert_non_null(strstr(err, "more than the limit of 64 subscribers"));
	assert_int_equal(aqm_sched_pipe_count(aqm_subs_sched(s, AQM_DIR_DOWN)), 1);
	assert_int_equal(aqm_sched_pipe_count(aqm_subs_sched(s, AQM_DIR_UP)), 1);
	free(list);
	aqm_subs_free(s);
}

/*
 * Many /128s in one /64 use up rte_lpm6's tbl8 groups long before
 * max_v6_subs (each needs up to 8 below its /64). A list that runs out
 * part way must change nothing: no subscriber, no pipe, no new rate; the
 * next list that fits then gets the pipe ids that follow, as the app's
 * mirror of the table expects. A single add that fails leaks no pipe.
 */
static void
v6_host(char *line, size_t len, unsigned int i)
{
	/* Spread over the low 64 bits so the LPM shares little below /64. */
	snprintf(line, len, "2001:db8:0:1:%x:%x:%x:%x/128,10M,10M",
		 (i * 0x9e37u) & 0xffff, (i * 0x7f4au + 1) & 0xffff,
		 (i * 0x2c1bu + 7) & 0xffff, i & 0xffff);
}

static void
test_a_list_the_lpm_cannot_hold_changes_nothing_and_leaks_no_pipe(void **state)
{
	enum { NV6 = 1000 };
	struct aqm_subs_params p;
	struct aqm_subs *s;
	struct aqm_sub_entry *list = calloc(NV6 + 2, sizeof(*list));
	struct aqm_sched *down;
	struct rte_mbuf *m[2], *out[4];
	char err[128], line[96];
	int rc;

	(void)state;
	assert_non_null(list);
	aqm_subs_params_default(&p);
	p.name = "lpm6full";
	p.max_subs = 2048;
	p.max_v6_subs = 1024;
	p.pipe.fq.flows = 4;
	s = aqm_subs_create(&p);
	assert_non_null(s);
	down = aqm_subs_sched(s, AQM_DIR_DOWN);
	list[0] = entry("198.18.1.0/24,1M,1M");
	assert_int_equal(aqm_subs_apply(s, list, 1, err, sizeof(err)), 1);
	assert_int_equal(aqm_sched_pipe_count(down), 2);

	/* The known subscriber re-rated, then more /128s than the LPM holds. */
	list[0] = entry("198.18.1.0/24,100M,100M");
	list[1] = entry("198.18.2.0/24,5M,5M");
	for (unsigned int i = 0; i < NV6; i++) {
		v6_host(line, sizeof(line), i);
		list[2 + i] = entry(line);
	}
	rc = aqm_subs_apply(s, list, NV6 + 2, err, sizeof(err));
	assert_true(rc < 0);
	print_message("a list of %u /128s in one /64 refused: %s\n", NV6, err);
	assert_int_equal(aqm_subs_count(s), 1);
	assert_int_equal(aqm_sched_pipe_count(down), 2);
	assert_int_equal(aqm_sched_pipe_count(aqm_subs_sched(s, AQM_DIR_UP)), 2);
	/* None of the list is reachable... */
	m[0] = test_pkt6(5, 100, 0);
	memcpy(pkt_meta(m[0])->dst, list[2].addr, 16);
	assert_int_equal(aqm_subs_lookup(s, AQM_DIR_DOWN, m[0]), -ENOENT);
	rte_pktmbuf_free(m[0]);
	m[0] = test_pkt4(5u << 16, 100, 0);
	pkt_meta(m[0])->dst[2] = 2; /* dst 198.18.2.5 */
	assert_int_equal(aqm_subs_lookup(s, AQM_DIR_DOWN, m[0]), -ENOENT);
	rte_pktmbuf_free(m[0]);
	/* ...and the known subscriber keeps 1 Mbit/s: of two 1250-byte
	 * packets, the second leaves 10 ms after the first, not 0.1 ms. */
	m[0] = test_pkt4(1u << 16, 1250, 0);
	m[1] = test_pkt4(1u << 16, 1250, 0);
	assert_int_equal(aqm_subs_enqueue_burst(s, AQM_DIR_DOWN, m, 2, T0), 0);
	assert_int_equal(aqm_subs_dequeue_burst(s, AQM_DIR_DOWN, out, 4, T0), 1);
	assert_int_equal(aqm_subs_dequeue_burst(s, AQM_DIR_DOWN, out + 1, 3, T0 + MS), 0);
	assert_int_equal(aqm_subs_dequeue_burst(s, AQM_DIR_DOWN, out + 1, 3, T0 + 11 * MS), 1);
	rte_pktmbuf_free_bulk(out, 2);

	/* A list that fits gets the next ids, 2 and 3. */
	assert_int_equal(aqm_subs_apply(s, list + 1, 2, err, sizeof(err)), 2);
	assert_int_equal(aqm_subs_count(s), 3);
	m[0] = test_pkt4(5u << 16, 100, 0);
	pkt_meta(m[0])->dst[2] = 2;
	assert_int_equal(aqm_subs_lookup(s, AQM_DIR_DOWN, m[0]), 2);
	memcpy(pkt_meta(m[0])->dst, list[2].addr, 16);
	pkt_meta(m[0])->l3 = PKT_L3_IPV6;
	assert_int_equal(aqm_subs_lookup(s, AQM_DIR_DOWN, m[0]), 3);
	rte_pktmbuf_free(m[0]);

	/* One at a time until the LPM is full: every failure leaks nothing. */
	for (unsigned int i = 1; i < NV6; i++) {
		rc = aqm_subs_add(s, &list[2 + i]);
		if (rc < 0)
			break;
		assert_int_equal(rc, (int)aqm_subs_count(s));
	}
	assert_true(rc < 0);
	assert_int_equal(aqm_sched_pipe_count(down), aqm_subs_count(s) + 1);
	assert_int_equal(aqm_subs_add(s, &list[NV6 + 1]), -ENOSPC);
	assert_int_equal(aqm_sched_pipe_count(down), aqm_subs_count(s) + 1);
	assert_int_equal(aqm_sched_pipe_count(aqm_subs_sched(s, AQM_DIR_UP)),
			 aqm_subs_count(s) + 1);
	free(list);
	aqm_subs_free(s);
}

/*
 * The scale the brief designs for: 100k subscribers on one worker (98k
 * IPv4 /32 across 198.18.0.0/15 and 2k IPv6 /64), every pipe allocated up
 * front, 4 flows each to keep the test's memory small. Every subscriber's
 * address must reach its own pipe, downstream by destination and
 * upstream by source, and a packet must go through the pipe and out.
 */
static void
test_one_hundred_thousand_subscribers_each_reach_their_own_pipe(void **state)
{
	enum { N4 = 98000, N6 = 2000, N = N4 + N6 };
	struct aqm_subs_params p;
	struct aqm_subs *s;
	struct rte_mbuf *m = test_pkt4(1, 100, 0), *out[4];
	struct pkt_meta *meta = pkt_meta(m);
	struct aqm_sub_entry e;
	static int32_t id[N];
	uint32_t seen = 0;

	(void)state;
	aqm_subs_params_default(&p);
	p.name = "subs100k";
	p.max_subs = N;
	p.max_v6_subs = N6;
	p.pipe.fq.flows = 4;
	p.default_policy = AQM_DEFAULT_PASS;
	s = aqm_subs_create(&p);
	assert_non_null(s);
	for (uint32_t i = 0; i < N; i++) {
		char line[96];

		if (i < N4)
			snprintf(line, sizeof(line), "198.%u.%u.%u/32,%uM,1M",
				 18 + i / 65536, (i / 256) % 256, i % 256, 1 + i % 100);
		else
			snprintf(line, sizeof(line), "2001:db8:%x:%x::/64,10M,1M",
				 (i - N4) / 256, (i - N4) % 256);
		e = entry(line);
		id[i] = aqm_subs_add(s, &e);
		assert_true(id[i] >= 1);
	}
	assert_int_equal(aqm_subs_count(s), N);
	for (uint32_t i = 0; i < N; i++) {
		uint8_t a[16] = { 0 };

		if (i < N4) {
			meta->l3 = PKT_L3_IPV4;
			a[0] = 198; a[1] = (uint8_t)(18 + i / 65536);
			a[2] = (uint8_t)(i / 256); a[3] = (uint8_t)i;
		} else {
			meta->l3 = PKT_L3_IPV6;
			a[0] = 0x20; a[1] = 0x01; a[2] = 0x0d; a[3] = 0xb8;
			a[4] = (uint8_t)((i - N4) / 256 >> 8); a[5] = (uint8_t)((i - N4) / 256);
			a[6] = (uint8_t)((i - N4) % 256 >> 8); a[7] = (uint8_t)((i - N4) % 256);
			a[15] = 9; /* any host of the /64 */
		}
		memcpy(meta->dst, a, 16);
		memcpy(meta->src, a, 16);
		if (aqm_subs_lookup(s, AQM_DIR_DOWN, m) == id[i] &&
		    aqm_subs_lookup(s, AQM_DIR_UP, m) == id[i])
			seen++;
	}
	assert_int_equal(seen, N);
	/* The last subscriber's pipe (meta still holds its address) takes
	 * the packet and sends it. */
	assert_int_equal(aqm_subs_enqueue_burst(s, AQM_DIR_DOWN, &m, 1, T0), 0);
	assert_int_equal(aqm_subs_dequeue_burst(s, AQM_DIR_DOWN, out, 4, T0 + MS), 1);
	assert_ptr_equal(out[0], m);
	rte_pktmbuf_free(m);
	{
		struct rte_malloc_socket_stats st;

		rte_malloc_get_socket_stats(0, &st);
		print_message("%u subscribers, every address in its own pipe; "
			      "heap in use %zu MB (pipes with 4 flows, rte_lpm, rte_lpm6)\n",
			      (unsigned)N, st.heap_allocsz_bytes >> 20);
	}
	aqm_subs_free(s);
}

/* Dequeue everything of direction dir until it is empty or until, whichever comes first. */
static unsigned int
drain(struct aqm_subs *s, enum aqm_dir dir, uint64_t from, uint64_t until,
      struct rte_mbuf **got, unsigned int max)
{
	unsigned int n = 0;

	for (uint64_t now = from; now <= until && n < max; now += MS) {
		uint16_t k = aqm_subs_dequeue_burst(s, dir, got + n,
						    (uint16_t)RTE_MIN(64u, max - n), now);
		n += k;
		if (aqm_subs_pending(s) == 0)
			break;
	}
	return n;
}

/*
 * Removing a subscriber while both it and another hold 40 packets: the
 * removed one's packets leave with the next dequeue, at once and in
 * order, before anything else; the other's keep leaving at its 1 Mbit/s,
 * all of them, in order; the removed address then passes unshaped;
 * nothing is dropped, and the totals still add up.
 */
static void
test_removing_a_subscriber_sends_its_queue_on_at_once_and_leaves_the_others_alone(void **state)
{
	struct aqm_subs *s = make_subs_quiet("remove");
	struct aqm_sub_entry list[2] = {
		entry("198.18.1.1/32,1M,1M"),
		entry("198.18.1.2/32,1M,1M"),
	};
	struct rte_mbuf *a[40], *b[40], *out[128], *m;
	struct aqm_sched *down;
	struct aqm_removed_stats rs;
	struct aqm_pipe_stats tot;
	unsigned int na = 0, nb = 0, n;
	char err[128];

	(void)state;
	assert_non_null(s);
	down = aqm_subs_sched(s, AQM_DIR_DOWN);
	assert_int_equal(aqm_subs_apply(s, list, 2, err, sizeof(err)), 2);
	for (int i = 0; i < 40; i++) {
		a[i] = test_pkt4(1u << 16 | (uint32_t)(i % 4), 1250, 0); /* 4 flows to 198.18.1.1 */
		b[i] = test_pkt4(2u << 16 | (uint32_t)(i % 3), 1250, 0); /* 3 flows to 198.18.1.2 */
	}
	assert_int_equal(aqm_subs_enqueue_burst(s, AQM_DIR_DOWN, a, 40, T0), 0);
	assert_int_equal(aqm_subs_enqueue_burst(s, AQM_DIR_DOWN, b, 40, T0), 0);
	/* 1250 bytes at 1 Mbit/s: one packet of each per 10 ms. */
	int last[4] = { -1, -1, -1, -1 }, seen = 0;

	n = drain(s, AQM_DIR_DOWN, T0, T0 + 25 * MS, out, 128);
	assert_int_equal(n, 6);
	for (unsigned int i = 0; i < n; i++) {
		for (int j = 0; j < 40; j++)
			if (out[i] == a[j]) {
				assert_true(j > last[j % 4]);
				last[j % 4] = j;
				na++;
				seen++;
			}
		nb += pkt_meta(out[i])->dst[3] == 2;
	}
	rte_pktmbuf_free_bulk(out, n);
	assert_int_equal(na, 3);
	assert_int_equal(nb, 3);

	assert_int_equal(aqm_subs_remove(s, &list[0], 1, err, sizeof(err)), 0);
	assert_int_equal(aqm_subs_count(s), 1);
	assert_int_equal(aqm_subs_pipes(s), 1);
	assert_false(aqm_sched_pipe_live(down, 1));
	aqm_sched_removed_stats(down, &rs);
	assert_int_equal(rs.pipes, 1);
	assert_int_equal(rs.moved_pkts, 37);
	assert_int_equal(rs.queued_pkts, 37);
	/* The next dequeue: the 37 of the removed pipe first, each flow's
	 * in its order, unshaped; then b's one due packet. */
	n = aqm_subs_dequeue_burst(s, AQM_DIR_DOWN, out, 37, T0 + 26 * MS);
	assert_int_equal(n, 37);
	for (unsigned int i = 0; i < n; i++) {
		int k = -1;

		for (int j = 0; j < 40; j++)
			if (out[i] == a[j])
				k = j;
		assert_true(k >= 0);
		assert_true(k > last[k % 4]);
		last[k % 4] = k;
		seen++;
	}
	assert_int_equal(seen, 40);
	rte_pktmbuf_free_bulk(out, n);
	/* The removed address now passes unshaped. */
	m = test_pkt4(1u << 16, 100, 0);
	assert_int_equal(aqm_subs_lookup(s, AQM_DIR_DOWN, m), -ENOENT);
	rte_pktmbuf_free(m);
	/* b: the other 37, every one, in order per flow, at 1 Mbit/s. */
	n = drain(s, AQM_DIR_DOWN, T0 + 26 * MS, T0 + 500 * MS, out, 128);
	assert_int_equal(n, 37);
	{
		int lastb[3] = { -1, -1, -1 };

		for (unsigned int i = 0; i < n; i++) {
			int k = -1;

			for (int j = 0; j < 40; j++)
				if (out[i] == b[j])
					k = j;
			assert_true(k >= 0);
			assert_true(k > lastb[k % 3]);
			lastb[k % 3] = k;
		}
	}
	rte_pktmbuf_free_bulk(out, n);
	aqm_sched_removed_stats(down, &rs);
	assert_int_equal(rs.sent_pkts, 37);
	assert_int_equal(rs.queued_pkts, 0);
	aqm_sched_stats(down, &tot);
	assert_int_equal(tot.enq_pkts, 80);
	assert_int_equal(tot.tx_pkts, 80);
	assert_int_equal(tot.backlog_pkts, 0);
	assert_int_equal(tot.drops[AQM_DROP_CODEL] + tot.drops[AQM_DROP_OVERFLOW] +
			 tot.drops[AQM_DROP_MEMORY] + tot.drops[AQM_DROP_BLUE], 0);
	aqm_subs_free(s);
}

/*
 * A freed id is taken by the next new subscriber (oldest freed first):
 * its pipes start with zero counters and the new rates; the scheduler's
 * totals keep what the old pipe counted; the old hand-off tag is stale.
 */
static void
test_a_freed_pipe_id_is_reused_with_fresh_counters_and_the_totals_keep_the_old_ones(void **state)
{
	struct aqm_subs *s = make_subs("reuse", AQM_DEFAULT_PASS);
	struct aqm_sub_entry list[3] = {
		entry("198.18.1.1/32,1M,1M"),
		entry("198.18.1.2/32,1M,1M"),
		entry("198.18.1.3/32,1M,1M"),
	};
	struct aqm_sub_entry d = entry("198.18.1.4/32,8M,2M");
	struct aqm_sub_entry e5 = entry("198.18.1.5/32,8M,2M");
	struct aqm_sched *down;
	struct aqm_pipe_stats st, tot;
	struct aqm_shaper_params sp;
	struct rte_mbuf *m[5], *out[8];
	uint32_t old_tag;
	char err[128];

	(void)state;
	assert_non_null(s);
	down = aqm_subs_sched(s, AQM_DIR_DOWN);
	assert_int_equal(aqm_subs_apply(s, list, 3, err, sizeof(err)), 3);
	for (int i = 0; i < 5; i++)
		m[i] = test_pkt4(2u << 16, 200, 0);
	assert_int_equal(aqm_subs_enqueue_burst(s, AQM_DIR_DOWN, m, 5, T0), 0);
	assert_int_equal(drain(s, AQM_DIR_DOWN, T0, T0 + 100 * MS, out, 8), 5);
	rte_pktmbuf_free_bulk(out, 5);
	old_tag = aqm_subs_pipe_tag(s, 2);
	assert_int_equal(aqm_subs_pipe_of_tag(s, old_tag), 2);

	/* Remove 2 then 1: 2 is the oldest free id. */
	assert_int_equal(aqm_subs_remove(s, &list[1], 1, err, sizeof(err)), 0);
	assert_int_equal(aqm_subs_remove(s, &list[0], 1, err, sizeof(err)), 0);
	assert_int_equal(aqm_subs_pipe_of_tag(s, old_tag), -ENOENT);
	assert_int_equal(aqm_subs_add(s, &d), 2);
	assert_int_equal(aqm_subs_add(s, &e5), 1);
	assert_int_equal(aqm_sched_pipe_count(down), 4); /* no new pipe made */
	assert_int_equal(aqm_subs_pipes(s), 3);
	assert_true(aqm_sched_pipe_live(down, 2));
	assert_int_equal(aqm_subs_pipe_of_tag(s, old_tag), -ENOENT);
	assert_int_equal(aqm_subs_pipe_of_tag(s, aqm_subs_pipe_tag(s, 2)), 2);
	assert_int_equal(aqm_sched_pipe_stats(down, 2, &st), 0);
	assert_int_equal(st.enq_pkts, 0);
	assert_int_equal(st.tx_pkts, 0);
	assert_int_equal(aqm_sched_pipe_shaper(down, 2, &sp), 0);
	assert_int_equal(sp.rate_bps, 8000000);
	assert_int_equal(aqm_sched_pipe_shaper(aqm_subs_sched(s, AQM_DIR_UP), 2, &sp), 0);
	assert_int_equal(sp.rate_bps, 2000000);
	aqm_sched_stats(down, &tot);
	assert_int_equal(tot.enq_pkts, 5);
	assert_int_equal(tot.tx_pkts, 5);
	/* The new subscriber's packets reach the reused pipe. */
	m[0] = test_pkt4(4u << 16, 200, 0);
	assert_int_equal(aqm_subs_lookup(s, AQM_DIR_DOWN, m[0]), 2);
	rte_pktmbuf_free(m[0]);
	aqm_subs_free(s);
}

/*
 * All or nothing: an update that removes a prefix nobody has, or that
 * removes some and then adds more than fit, changes nothing: the removed
 * subscribers are back, reachable, their queues untouched and shaped.
 */
static void
test_an_update_that_fails_keeps_the_subscribers_it_would_have_removed(void **state)
{
	struct aqm_subs *s = make_subs("undo", AQM_DEFAULT_PASS);
	struct aqm_sub_entry *list = calloc(70, sizeof(*list));
	struct aqm_sub_entry gone = entry("198.18.200.0/24,1M,1M");
	struct rte_mbuf *m[3], *out[4];
	char err[128];

	(void)state;
	assert_non_null(s);
	assert_non_null(list);
	for (int i = 0; i < 70; i++) {
		char line[64];

		snprintf(line, sizeof(line), "198.18.%d.0/24,1M,1M", i + 1);
		list[i] = entry(line);
	}
	assert_int_equal(aqm_subs_apply(s, list, 60, err, sizeof(err)), 60);
	for (int i = 0; i < 3; i++)
		m[i] = test_pkt4(1u << 16, 1250, 0);
	assert_int_equal(aqm_subs_enqueue_burst(s, AQM_DIR_DOWN, m, 3, T0), 0);
	assert_int_equal(aqm_subs_dequeue_burst(s, AQM_DIR_DOWN, out, 4, T0), 1);
	rte_pktmbuf_free(out[0]);

	/* Remove 1 and 2, and one that does not exist. */
	struct aqm_sub_entry del[3] = { list[0], list[1], gone };
	assert_int_equal(aqm_subs_update(s, NULL, 0, del, 3, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "removal 3: no such subscriber prefix");
	assert_int_equal(aqm_subs_count(s), 60);
	/* Remove 2, add 7: 65 > 64. */
	assert_int_equal(aqm_subs_update(s, list + 60, 7, del, 2, err, sizeof(err)), -ENOSPC);
	assert_int_equal(aqm_subs_count(s), 60);
	assert_int_equal(aqm_subs_pipes(s), 60);
	assert_int_equal(aqm_sched_pipe_count(aqm_subs_sched(s, AQM_DIR_DOWN)), 61);
	m[0] = test_pkt4(1u << 16, 100, 0);
	assert_int_equal(aqm_subs_lookup(s, AQM_DIR_DOWN, m[0]), 1);
	pkt_meta(m[0])->dst[2] = 2;
	assert_int_equal(aqm_subs_lookup(s, AQM_DIR_DOWN, m[0]), 2);
	pkt_meta(m[0])->dst[2] = 61;
	assert_int_equal(aqm_subs_lookup(s, AQM_DIR_DOWN, m[0]), -ENOENT);
	rte_pktmbuf_free(m[0]);
	/* Subscriber 1 still shapes its two queued packets at 1 Mbit/s. */
	assert_int_equal(aqm_subs_dequeue_burst(s, AQM_DIR_DOWN, out, 4, T0 + 5 * MS), 0);
	assert_int_equal(aqm_subs_dequeue_burst(s, AQM_DIR_DOWN, out, 4, T0 + 10 * MS), 1);
	assert_int_equal(aqm_subs_dequeue_burst(s, AQM_DIR_DOWN, out + 1, 3, T0 + 20 * MS), 1);
	rte_pktmbuf_free_bulk(out, 2);
	/* Remove 4, add 4 at a full table... */
	assert_int_equal(aqm_subs_apply(s, list + 60, 4, err, sizeof(err)), 4);
	assert_int_equal(aqm_subs_count(s), 64);
	struct aqm_sub_entry del4[4] = { list[9], list[4], list[7], list[5] };
	assert_int_equal(aqm_subs_update(s, list + 64, 4, del4, 4, err, sizeof(err)), 4);
	assert_int_equal(aqm_subs_count(s), 64);
	/* ...the new ones take the freed ids in the order they were freed. */
	assert_int_equal(aqm_subs_find(s, &list[64]), 10);
	assert_int_equal(aqm_subs_find(s, &list[65]), 5);
	assert_int_equal(aqm_subs_find(s, &list[66]), 8);
	assert_int_equal(aqm_subs_find(s, &list[67]), 6);
	assert_int_equal(aqm_sched_pipe_count(aqm_subs_sched(s, AQM_DIR_DOWN)), 65);
	free(list);
	aqm_subs_free(s);
}

/*
 * Prefixes of one group (a LibreQoS circuit) share a pipe: removing one
 * keeps it, removing the last frees it, and a prefix of the group that
 * comes back later gets a pipe again.
 */
static void
test_a_group_keeps_its_pipe_until_its_last_prefix_goes(void **state)
{
	struct aqm_subs *s = make_subs("group", AQM_DEFAULT_PASS);
	struct aqm_sub_entry g[2] = {
		entry("198.18.1.0/24,1M,1M"),
		entry("198.18.2.0/24,1M,1M"),
	};
	struct aqm_sub_entry other = entry("198.18.3.0/24,1M,1M");
	char err[128];

	(void)state;
	assert_non_null(s);
	g[0].group = g[1].group = 77;
	assert_int_equal(aqm_subs_apply(s, g, 2, err, sizeof(err)), 2);
	assert_int_equal(aqm_subs_find(s, &g[0]), 1);
	assert_int_equal(aqm_subs_find(s, &g[1]), 1);
	assert_int_equal(aqm_subs_remove(s, &g[0], 1, err, sizeof(err)), 0);
	assert_int_equal(aqm_subs_pipes(s), 1);
	assert_true(aqm_sched_pipe_live(aqm_subs_sched(s, AQM_DIR_DOWN), 1));
	assert_int_equal(aqm_subs_remove(s, &g[1], 1, err, sizeof(err)), 0);
	assert_int_equal(aqm_subs_pipes(s), 0);
	assert_false(aqm_sched_pipe_live(aqm_subs_sched(s, AQM_DIR_DOWN), 1));
	/* Another subscriber takes id 1; the group comes back on id 2. */
	assert_int_equal(aqm_subs_add(s, &other), 1);
	assert_int_equal(aqm_subs_apply(s, g, 2, err, sizeof(err)), 2);
	assert_int_equal(aqm_subs_find(s, &g[0]), 2);
	assert_int_equal(aqm_subs_find(s, &g[1]), 2);
	assert_int_equal(aqm_subs_find(s, &other), 1);
	aqm_subs_free(s);
}

/*
 * A packet enqueued to a removed pipe (a worker that classified it
 * before the removal) is not stranded there: it joins the orphans, is
 * counted late, and leaves with the next dequeue, unshaped; the pipe
 * stays out of the scheduler, and a second removal is refused.
 */
static void
test_a_packet_sent_to_a_removed_pipe_leaves_at_once_and_is_counted_late(void **state)
{
	struct aqm_subs *s = make_subs("late", AQM_DEFAULT_PASS);
	struct aqm_sub_entry a = entry("198.18.1.1/32,1M,1M");
	struct aqm_sched *down;
	struct aqm_removed_stats rs;
	struct rte_mbuf *m[2], *out[4];
	uint32_t pipes[2] = { 1, 1 };
	char err[128];

	(void)state;
	assert_non_null(s);
	down = aqm_subs_sched(s, AQM_DIR_DOWN);
	assert_int_equal(aqm_subs_add(s, &a), 1);
	assert_int_equal(aqm_subs_remove(s, &a, 1, err, sizeof(err)), 0);
	assert_int_equal(aqm_sched_pipe_remove(down, 1), -EINVAL);
	m[0] = test_pkt4(1u << 16, 1250, 0);
	m[1] = test_pkt4(1u << 16, 1250, 0);
	assert_int_equal(aqm_sched_enqueue_burst(down, pipes, m, 2, T0), 2);
	assert_int_equal(aqm_sched_pending(down), 2);
	aqm_sched_removed_stats(down, &rs);
	assert_int_equal(rs.late_pkts, 2);
	assert_int_equal(rs.moved_pkts, 0);
	/* Both at once, in order, though 1 Mbit/s would space them 10 ms. */
	assert_int_equal(aqm_sched_dequeue_burst(down, out, 4, T0), 2);
	assert_ptr_equal(out[0], m[0]);
	assert_ptr_equal(out[1], m[1]);
	rte_pktmbuf_free_bulk(out, 2);
	aqm_sched_removed_stats(down, &rs);
	assert_int_equal(rs.sent_pkts, 2);
	assert_int_equal(rs.queued_pkts, 0);
	assert_int_equal(aqm_sched_pending(down), 0);
	aqm_subs_free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csv_lines_parse_prefixes_rates_and_profiles),
		cmocka_unit_test(test_csv_autorate_columns_override_mode_floors_and_ceilings),
		cmocka_unit_test(test_a_subscribers_isolation_column_overrides_the_template),
		cmocka_unit_test(test_csv_errors_name_the_file_and_line),
		cmocka_unit_test(test_the_line_parser_leaves_a_reason_string_on_every_return),
		cmocka_unit_test(test_a_nul_byte_in_the_csv_is_an_error_on_its_line),
		cmocka_unit_test(test_packets_reach_the_pipe_of_the_longest_matching_prefix),
		cmocka_unit_test(test_unknown_addresses_pass_unshaped_or_use_the_default_pipe),
		cmocka_unit_test(test_a_mixed_burst_gets_the_pipes_single_lookups_give),
		cmocka_unit_test(test_adding_subscribers_and_changing_rates_keeps_queued_packets_in_order),
		cmocka_unit_test(test_a_reload_that_does_not_fit_changes_nothing),
		cmocka_unit_test(test_a_list_the_lpm_cannot_hold_changes_nothing_and_leaks_no_pipe),
		cmocka_unit_test(test_removing_a_subscriber_sends_its_queue_on_at_once_and_leaves_the_others_alone),
		cmocka_unit_test(test_a_freed_pipe_id_is_reused_with_fresh_counters_and_the_totals_keep_the_old_ones),
		cmocka_unit_test(test_an_update_that_fails_keeps_the_subscribers_it_would_have_removed),
		cmocka_unit_test(test_a_group_keeps_its_pipe_until_its_last_prefix_goes),
		cmocka_unit_test(test_a_packet_sent_to_a_removed_pipe_leaves_at_once_and_is_counted_late),
		cmocka_unit_test(test_one_hundred_thousand_subscribers_each_reach_their_own_pipe),
	};

	/* Each rte_lpm holds a 64 MB first-level table; the 100k test
	 * needs about 350 MB at once. */
	if (test_eal_init("subs", 4095, 768) != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
