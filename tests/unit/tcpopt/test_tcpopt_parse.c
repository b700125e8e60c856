/* SPDX-License-Identifier: BSD-3-Clause */
/* The option walker: every known kind, opaque kinds, and every malformed
 * layout, through tcpopt_parse() (no context, no EAL). */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tcpopt.h"
#include "seg.h"

/* Parse a bare TCP header with these option bytes (padded with EOL to a
 * multiple of 4). */
static enum tcpopt_mal
parse_opts(const uint8_t *opts, unsigned int n, struct tcpopt_parsed *out)
{
	uint8_t padded[40] = { 0 };
	struct seg s;

	assert_true(n <= 40);
	memcpy(padded, opts, n);
	seg_build(&s, 4, 0, SEG_SYN, padded, (n + 3) & ~3u, 0);
	return tcpopt_parse(s.buf + s.l4_off, seg_tcp_len(&s), out);
}

static void
test_every_known_kind_parses_with_its_name(void **state)
{
	static const struct {
		uint8_t bytes[20];
		uint8_t len;
		const char *name;
	} cases[] = {
		{ { 2, 4, 0x05, 0xb4 }, 4, "mss" },
		{ { 3, 3, 7 }, 3, "window_scale" },
		{ { 4, 2 }, 2, "sack_permitted" },
		{ { 5, 10, 0, 0, 0, 1, 0, 0, 0, 2 }, 10, "sack" },
		{ { 8, 10, 1, 2, 3, 4, 5, 6, 7, 8 }, 10, "timestamp" },
		{ { 19, 18, 0xa1, 0xa2 }, 18, "md5sig" },
		{ { 29, 16, 1, 2 }, 16, "tcp_ao" },
		{ { 30, 4, 0x01, 0x81 }, 4, "mptcp" },
		{ { 34, 10, 1, 2, 3, 4, 5, 6, 7, 8 }, 10, "fast_open" },
		{ { 172, 11, 0, 0, 1, 0, 0, 2, 0, 0, 3 }, 11, "accecn0" },
		{ { 174, 5, 0, 0, 9 }, 5, "accecn1" },
		{ { 253, 4, 0x12, 0x34 }, 4, "experimental_253" },
		{ { 254, 6, 0xf9, 0x89, 1, 2 }, 6, "experimental_254" },
	};
	struct tcpopt_parsed p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(parse_opts(cases[i].bytes, cases[i].len, &p),
				 TCPOPT_MAL_NONE);
		assert_true(p.n >= 1);
		assert_int_equal(p.opt[0].kind, cases[i].bytes[0]);
		assert_int_equal(p.opt[0].len, cases[i].len);
		assert_int_equal(p.opt[0].off, 20);
		assert_string_equal(tcpopt_kind_name(cases[i].bytes[0]),
				    cases[i].name);
	}
	assert_string_equal(tcpopt_kind_name(0), "eol");
	assert_string_equal(tcpopt_kind_name(1), "nop");
}

static void
test_unknown_kinds_are_opaque_and_accepted_at_any_length(void **state)
{
	/* kind 99 length 2, kind 200 length 7, kind 76 length 3 */
	static const uint8_t o[] = { 99, 2, 200, 7, 1, 2, 3, 4, 5, 76, 3, 0xee };
	struct tcpopt_parsed p;

	(void)state;
	assert_int_equal(parse_opts(o, sizeof(o), &p), TCPOPT_MAL_NONE);
	assert_int_equal(p.n, 3);
	assert_int_equal(p.opt[0].kind, 99);
	assert_int_equal(p.opt[1].kind, 200);
	assert_int_equal(p.opt[1].len, 7);
	assert_int_equal(p.opt[2].kind, 76);
	assert_int_equal(p.opt[2].off, 29);
	assert_null(tcpopt_kind_name(99));
}

static void
test_odd_nop_padding_is_walked_byte_by_byte(void **state)
{
	/* NOP, MSS at offset 21 (odd), NOP NOP NOP, WS, EOL */
	static const uint8_t o[] = { 1, 2, 4, 0x05, 0xb4, 1, 1, 1, 3, 3, 7, 0 };
	struct tcpopt_parsed p;

	(void)state;
	assert_int_equal(parse_opts(o, sizeof(o), &p), TCPOPT_MAL_NONE);
	assert_int_equal(p.n, 7);
	assert_int_equal(p.opt[1].kind, TCPOPT_KIND_MSS);
	assert_int_equal(p.opt[1].off, 21);
	assert_int_equal(p.opt[5].kind, TCPOPT_KIND_WS);
	assert_int_equal(p.opt[5].off, 28);
	assert_int_equal(p.opt[6].kind, TCPOPT_KIND_EOL);
}

static void
test_forty_bytes_of_options_are_all_walked(void **state)
{
	/* MSS, SACK-permitted, TS, NOP, WS, MPTCP MP_CAPABLE (12), NOP x 6:
	 * 4 + 2 + 10 + 1 + 3 + 12 + 8 = 40 */
	uint8_t o[40] = { 2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0,
			  1, 3, 3, 8, 30, 12, 0x01, 0x81 };
	struct tcpopt_parsed p;
	unsigned int i;

	(void)state;
	for (i = 32; i < 40; i++)
		o[i] = 1;
	assert_int_equal(parse_opts(o, sizeof(o), &p), TCPOPT_MAL_NONE);
	assert_int_equal(p.hdr_len, 60);
	assert_int_equal(p.n, 14);
	assert_int_equal(p.opt[5].kind, TCPOPT_KIND_MPTCP);
	assert_int_equal(p.opt[5].off, 40);
	assert_int_equal(p.opt[13].off, 59);

	/* Forty NOPs: the most options a header can hold. */
	memset(o, 1, sizeof(o));
	assert_int_equal(parse_opts(o, sizeof(o), &p), TCPOPT_MAL_NONE);
	assert_int_equal(p.n, TCPOPT_MAX_OPTS);
}

static void
test_eol_ends_the_list_and_what_follows_is_padding(void **state)
{
	/* After EOL comes garbage that would be malformed as options. */
	static const uint8_t o[] = { 3, 3, 7, 0, 2, 0, 0xff, 0xff };
	struct tcpopt_parsed p;

	(void)state;
	assert_int_equal(parse_opts(o, sizeof(o), &p), TCPOPT_MAL_NONE);
	assert_int_equal(p.n, 2);
	assert_int_equal(p.opt[1].kind, TCPOPT_KIND_EOL);
}

static void
test_mptcp_subtypes_are_decoded_with_their_names(void **state)
{
	static const struct {
		uint8_t bytes[32];
		uint8_t len;
		uint8_t sub;
		const char *name;
	} cases[] = {
		{ { 30, 4, 0x01, 0x81 }, 4, 0, "mp_capable" },
		{ { 30, 12, 0x01, 0x81 }, 12, 0, "mp_capable" },
		{ { 30, 20, 0x01, 0x81 }, 20, 0, "mp_capable" },
		{ { 30, 12, 0x10, 0x01 }, 12, 1, "mp_join" },
		{ { 30, 16, 0x10, 0x01 }, 16, 1, "mp_join" },
		{ { 30, 24, 0x10 }, 24, 1, "mp_join" },
		{ { 30, 8, 0x20, 0x01 }, 8, 2, "dss" },
		{ { 30, 16, 0x30, 1, 198, 18, 0, 1 }, 16, 3, "add_addr" },
		{ { 30, 30, 0x30, 1 }, 30, 3, "add_addr" },
		{ { 30, 5, 0x40, 1, 2 }, 5, 4, "remove_addr" },
		{ { 30, 3, 0x51 }, 3, 5, "mp_prio" },
		{ { 30, 12, 0x60 }, 12, 6, "mp_fail" },
		{ { 30, 12, 0x70 }, 12, 7, "mp_fastclose" },
		{ { 30, 4, 0x80, 0x01 }, 4, 8, "mp_tcprst" },
		{ { 30, 7, 0xf0 }, 7, 15, "mp_experimental" },
	};
	struct tcpopt_parsed p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(parse_opts(cases[i].bytes, cases[i].len, &p),
				 TCPOPT_MAL_NONE);
		assert_int_equal(p.opt[0].sub, cases[i].sub);
		assert_string_equal(tcpopt_mptcp_sub_name(cases[i].sub),
				    cases[i].name);
	}
	/* A subtype the table does not know is preserved, not malformed. */
	{
		static const uint8_t o[] = { 30, 6, 0x90, 0, 0, 0 };

		assert_int_equal(parse_opts(o, sizeof(o), &p), TCPOPT_MAL_NONE);
		assert_int_equal(p.opt[0].sub, 9);
		assert_null(tcpopt_mptcp_sub_name(9));
	}
}

static void
test_dss_length_must_match_its_flags(void **state)
{
	struct tcpopt_parsed p;
	/* flags byte: A=0x01 a=0x02 M=0x04 m=0x08 */
	static const struct {
		uint8_t flags, len;
		enum tcpopt_mal want;
	} cases[] = {
		{ 0x00, 4, TCPOPT_MAL_NONE },
		{ 0x01, 8, TCPOPT_MAL_NONE },
		{ 0x03, 12, TCPOPT_MAL_NONE },
		{ 0x05, 18, TCPOPT_MAL_NONE },  /* ack4 + map4, no checksum */
		{ 0x05, 20, TCPOPT_MAL_NONE },  /* with checksum */
		{ 0x0f, 28, TCPOPT_MAL_NONE },  /* ack8 + map8 + csum */
		{ 0x01, 12, TCPOPT_MAL_BAD_MPTCP_LEN },
		{ 0x04, 17, TCPOPT_MAL_BAD_MPTCP_LEN },
		{ 0x00, 6, TCPOPT_MAL_BAD_MPTCP_LEN },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t o[40] = { 30, cases[i].len, 0x20, cases[i].flags };

		assert_int_equal(parse_opts(o, cases[i].len, &p), cases[i].want);
	}
}

static void
test_experimental_options_carry_their_16_bit_exid(void **state)
{
	static const uint8_t o[] = { 254, 4, 0xf9, 0x89, 253, 6, 0xab, 0xcd, 9, 9 };
	struct tcpopt_parsed p;

	(void)state;
	assert_int_equal(parse_opts(o, sizeof(o), &p), TCPOPT_MAL_NONE);
	assert_int_equal(p.opt[0].exid, 0xf989);
	assert_string_equal(tcpopt_exid_name(p.opt[0].exid), "fast_open");
	assert_int_equal(p.opt[1].exid, 0xabcd);
	assert_null(tcpopt_exid_name(0xabcd));
}

static void
test_header_shorter_than_20_bytes_is_truncated(void **state)
{
	struct tcpopt_parsed p;
	struct seg s;

	(void)state;
	seg_build(&s, 4, 0, SEG_SYN, NULL, 0, 0);
	assert_int_equal(tcpopt_parse(s.buf + s.l4_off, 19, &p),
			 TCPOPT_MAL_HDR_TRUNCATED);
	assert_int_equal(tcpopt_parse(s.buf + s.l4_off, 0, &p),
			 TCPOPT_MAL_HDR_TRUNCATED);
	assert_int_equal(p.hdr_len, 0);
}

static void
test_data_offset_below_5_is_malformed(void **state)
{
	struct tcpopt_parsed p;
	struct seg s;
	uint8_t *tcp;
	unsigned int d;

	(void)state;
	tcp = seg_build(&s, 4, 0, SEG_SYN, NULL, 0, 20);
	for (d = 0; d < 5; d++) {
		tcp[12] = (uint8_t)(d << 4);
		assert_int_equal(tcpopt_parse(tcp, seg_tcp_len(&s), &p),
				 TCPOPT_MAL_DOFF_SHORT);
	}
}

static void
test_data_offset_past_the_end_of_the_packet_is_malformed(void **state)
{
	static const uint8_t o[] = { 2, 4, 0x05, 0xb4 };
	struct tcpopt_parsed p;
	struct seg s;
	uint8_t *tcp;

	(void)state;
	tcp = seg_build(&s, 4, 0, SEG_SYN, o, 4, 0);
	tcp[12] = 0x70; /* claims 28 bytes, 24 present */
	assert_int_equal(tcpopt_parse(tcp, 24, &p), TCPOPT_MAL_DOFF_PAST_END);
	tcp[12] = 0xf0;
	assert_int_equal(tcpopt_parse(tcp, 59, &p), TCPOPT_MAL_DOFF_PAST_END);
	assert_string_equal(tcpopt_mal_name(p.malformed), "data_offset_past_end");
}

static void
test_length_0_or_1_on_a_multi_byte_kind_is_malformed(void **state)
{
	struct tcpopt_parsed p;
	uint8_t o[4] = { 1, 2, 0, 0 };

	(void)state;
	assert_int_equal(parse_opts(o, 4, &p), TCPOPT_MAL_LEN_BELOW_2);
	assert_int_equal(p.n, 1);     /* the NOP before it was fine */
	assert_int_equal(p.mal_off, 21);
	o[1] = 99;
	o[2] = 1;
	assert_int_equal(parse_opts(o, 4, &p), TCPOPT_MAL_LEN_BELOW_2);
}

static void
test_length_running_past_the_header_is_malformed(void **state)
{
	/* TS claims 10 bytes with only 8 left in the header. */
	static const uint8_t o[] = { 1, 1, 1, 1, 8, 10, 0, 0, 0, 0, 0, 0 };
	struct tcpopt_parsed p;
	struct seg s;

	(void)state;
	seg_build(&s, 4, 0, SEG_ACK, o, 12, 30);
	/* doff says 32 bytes; cut the option area at 28 by lowering doff */
	s.buf[s.l4_off + 12] = 0x70;
	assert_int_equal(tcpopt_parse(s.buf + s.l4_off, seg_tcp_len(&s), &p),
			 TCPOPT_MAL_LEN_PAST_HEADER);
	assert_int_equal(p.mal_off, 24);
}

static void
test_kind_in_the_last_byte_is_a_truncated_option(void **state)
{
	static const uint8_t o[] = { 1, 1, 1, 2 };
	struct tcpopt_parsed p;

	(void)state;
	assert_int_equal(parse_opts(o, 4, &p), TCPOPT_MAL_TRUNCATED);
	assert_int_equal(p.mal_off, 23);
	assert_int_equal(p.n, 3);
}

static void
test_known_kind_with_a_wrong_length_is_malformed(void **state)
{
	static const struct {
		uint8_t kind, len;
	} bad[] = {
		{ 2, 5 }, { 2, 3 }, { 3, 4 }, { 4, 3 }, { 5, 12 }, { 5, 2 },
		{ 8, 8 }, { 19, 16 }, { 29, 3 }, { 30, 2 }, { 34, 4 }, { 34, 7 },
		{ 34, 20 }, { 172, 3 }, { 174, 12 }, { 253, 3 }, { 254, 2 },
	};
	struct tcpopt_parsed p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t o[40] = { bad[i].kind, bad[i].len };

		assert_int_equal(parse_opts(o, 40, &p),
				 TCPOPT_MAL_BAD_KIND_LEN);
	}
}

static void
test_every_valid_length_of_a_variable_kind_is_accepted(void **state)
{
	static const struct {
		uint8_t kind, len;
	} good[] = {
		{ 5, 10 }, { 5, 18 }, { 5, 26 }, { 5, 34 },
		{ 34, 2 }, { 34, 6 }, { 34, 12 }, { 34, 18 },
		{ 172, 2 }, { 172, 5 }, { 172, 8 }, { 174, 11 },
		{ 29, 4 }, { 29, 40 }, { 253, 40 }, { 254, 4 },
	};
	struct tcpopt_parsed p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		uint8_t o[40] = { good[i].kind, good[i].len };

		assert_int_equal(parse_opts(o, 40, &p), TCPOPT_MAL_NONE);
		assert_int_equal(p.opt[0].len, good[i].len);
	}
}

static void
test_mptcp_subtype_with_a_wrong_length_is_malformed(void **state)
{
	static const struct {
		uint8_t sub, len;
	} bad[] = {
		{ 0x0, 8 }, { 0x1, 20 }, { 0x3, 12 }, { 0x5, 5 }, { 0x6, 8 },
		{ 0x7, 16 }, { 0x8, 6 },
	};
	struct tcpopt_parsed p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t o[40] = { 30, bad[i].len, (uint8_t)(bad[i].sub << 4) };

		assert_int_equal(parse_opts(o, 40, &p),
				 TCPOPT_MAL_BAD_MPTCP_LEN);
	}
}

static void
test_options_are_parsed_the_same_over_ipv6(void **state)
{
	static const uint8_t o[] = { 2, 4, 0x05, 0xa0, 1, 3, 3, 7 };
	struct tcpopt_parsed p;
	struct seg s;

	(void)state;
	seg_build(&s, 6, 0, SEG_SYN, o, sizeof(o), 0);
	assert_int_equal(tcpopt_parse(s.buf + s.l4_off, seg_tcp_len(&s), &p),
			 TCPOPT_MAL_NONE);
	assert_int_equal(p.n, 3);
	assert_int_equal(p.seg, TCPOPT_SEG_SYN);
}

static void
test_names_and_config_strings_round_trip(void **state)
{
	unsigned int k;

	(void)state;
	for (k = 0; k < 256; k++) {
		const char *n = tcpopt_kind_name((uint8_t)k);

		if (n != NULL)
			assert_int_equal(tcpopt_kind_from_name(n), (int)k);
	}
	assert_int_equal(tcpopt_kind_from_name("30"), 30);
	assert_int_equal(tcpopt_kind_from_name("255"), 255);
	assert_int_equal(tcpopt_kind_from_name("256"), -EINVAL);
	assert_int_equal(tcpopt_kind_from_name("-1"), -EINVAL);
	assert_int_equal(tcpopt_kind_from_name("3x"), -EINVAL);
	assert_int_equal(tcpopt_kind_from_name(""), -EINVAL);
	assert_int_equal(tcpopt_kind_from_name("bogus"), -EINVAL);
	assert_int_equal(tcpopt_action_from_name("strip"), TCPOPT_ACT_STRIP);
	assert_int_equal(tcpopt_action_from_name("keep"), -EINVAL);
	assert_string_equal(tcpopt_action_name(TCPOPT_ACT_DROP), "drop");
	assert_string_equal(tcpopt_seg_name(TCPOPT_SEG_SYNACK), "synack");
	assert_string_equal(tcpopt_event_name(TCPOPT_EV_MSS_CLAMPED),
			    "mss_clamped");
	assert_string_equal(tcpopt_mal_name(TCPOPT_MAL_MAX), "invalid");
	for (k = 0; k < TCPOPT_MAL_MAX; k++)
		assert_non_null(tcpopt_mal_name((enum tcpopt_mal)k));
	for (k = 0; k < TCPOPT_EV_MAX; k++)
		assert_non_null(tcpopt_event_name((enum tcpopt_event)k));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_known_kind_parses_with_its_name),
		cmocka_unit_test(test_unknown_kinds_are_opaque_and_accepted_at_any_length),
		cmocka_unit_test(test_odd_nop_padding_is_walked_byte_by_byte),
		cmocka_unit_test(test_forty_bytes_of_options_are_all_walked),
		cmocka_unit_test(test_eol_ends_the_list_and_what_follows_is_padding),
		cmocka_unit_test(test_mptcp_subtypes_are_decoded_with_their_names),
		cmocka_unit_test(test_dss_length_must_match_its_flags),
		cmocka_unit_test(test_experimental_options_carry_their_16_bit_exid),
		cmocka_unit_test(test_header_shorter_than_20_bytes_is_truncated),
		cmocka_unit_test(test_data_offset_below_5_is_malformed),
		cmocka_unit_test(test_data_offset_past_the_end_of_the_packet_is_malformed),
		cmocka_unit_test(test_length_0_or_1_on_a_multi_byte_kind_is_malformed),
		cmocka_unit_test(test_length_running_past_the_header_is_malformed),
		cmocka_unit_test(test_kind_in_the_last_byte_is_a_truncated_option),
		cmocka_unit_test(test_known_kind_with_a_wrong_length_is_malformed),
		cmocka_unit_test(test_every_valid_length_of_a_variable_kind_is_accepted),
		cmocka_unit_test(test_mptcp_subtype_with_a_wrong_length_is_malformed),
		cmocka_unit_test(test_options_are_parsed_the_same_over_ipv6),
		cmocka_unit_test(test_names_and_config_strings_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
