/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/mptcp_proxy's redirect table (mptcp_redirect.h), on a virtual
 * clock: the subflows a worker passes on to the worker that owns their
 * MPTCP connection. Bounded, refreshed by traffic, expiring when idle,
 * after a FIN, on RST at once or after the reset's memory; a full table
 * refuses a new subflow and makes room from expired ones.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tcp_test_util.h"
#include "mptcp_proxy.h"

#define S (1000000000ull)
#define IDLE (600 * S)

static struct mptcp_redirect *
table_rst(uint32_t entries, uint64_t idle_ns, uint64_t rst_ns)
{
	static unsigned seq;
	char name[32];
	struct mptcp_redirect *rt;

	snprintf(name, sizeof(name), "rd_test%u", seq++);
	rt = mptcp_redirect_create(&(struct mptcp_redirect_params){
		.name = name, .socket_id = -1, .entries = entries, .idle_ns = idle_ns,
		.rst_ns = rst_ns });
	assert_non_null(rt);
	return rt;
}

static struct mptcp_redirect *
table(uint32_t entries, uint64_t idle_ns)
{
	return table_rst(entries, idle_ns, 0);
}

/* Subflow i from 198.18.1.1 to 198.18.0.2:80 (source port 20000 + i). */
static struct mptcp_redirect_key
key4(unsigned i)
{
	struct mptcp_redirect_key k;

	memset(&k, 0, sizeof(k));
	k.family = 4;
	k.sport = (uint16_t)(20000 + i);
	k.dport = 80;
	memcpy(k.src, (const uint8_t[]){ 198, 18, 1, 1 }, 4);
	memcpy(k.dst, (const uint8_t[]){ 198, 18, 0, 2 }, 4);
	return k;
}

static void
the_token_names_its_owner_in_its_low_bits(void **state)
{
	(void)state;
	assert_int_equal(mptcp_token_owner(0xdeadbeef, 0), 0);
	assert_int_equal(mptcp_token_owner(0xdeadbeef, 1), 1);
	assert_int_equal(mptcp_token_owner(0xdeadbeef, 4), 0xf);
	assert_int_equal(mptcp_token_owner(0x12345672, 2), 2);
}

static void
a_joined_subflow_sends_its_later_segments_to_the_same_owner_and_no_other_does(void **state)
{
	struct mptcp_redirect *rt = table(8, IDLE);
	struct mptcp_redirect_key k = key4(1), other = key4(2), rev = key4(1);
	uint64_t t = 5 * S;

	(void)state;
	assert_int_equal(mptcp_redirect_lookup(rt, &k, 0, t), -1);
	assert_int_equal(mptcp_redirect_add(rt, &k, 3, t), 0);
	assert_int_equal(mptcp_redirect_count(rt), 1);
	assert_int_equal(mptcp_redirect_lookup(rt, &k, 0, t + 1), 3);
	assert_int_equal(mptcp_redirect_lookup(rt, &other, 0, t + 1), -1);
	/* The reverse direction is another 4-tuple. */
	memcpy(rev.src, k.dst, 16);
	memcpy(rev.dst, k.src, 16);
	rev.sport = k.dport;
	rev.dport = k.sport;
	assert_int_equal(mptcp_redirect_lookup(rt, &rev, 0, t + 1), -1);
	/* The same addresses and ports in IPv6 are another subflow. */
	other = k;
	other.family = 6;
	assert_int_equal(mptcp_redirect_lookup(rt, &other, 0, t + 1), -1);
	/* A retransmitted SYN refreshes it, no second entry. */
	assert_int_equal(mptcp_redirect_add(rt, &k, 3, t + 2), 0);
	assert_int_equal(mptcp_redirect_count(rt), 1);
	mptcp_redirect_free(rt);
}

static void
the_table_is_bounded_and_refuses_a_new_subflow_when_full_of_live_ones(void **state)
{
	struct mptcp_redirect *rt = table(4, IDLE);
	uint64_t t = S;

	(void)state;
	assert_int_equal(mptcp_redirect_capacity(rt), 4);
	for (unsigned i = 0; i < 4; i++) {
		struct mptcp_redirect_key k = key4(i);

		assert_int_equal(mptcp_redirect_add(rt, &k, 1, t), 0);
		assert_int_equal(mptcp_redirect_lookup(rt, &k, 0x10, t), 1); /* ACK: established */
	}
	struct mptcp_redirect_key k5 = key4(5);

	assert_int_equal(mptcp_redirect_add(rt, &k5, 1, t + S), -ENOSPC);
	assert_int_equal(mptcp_redirect_count(rt), 4);
	assert_int_equal(mptcp_redirect_lookup(rt, &k5, 0, t + S), -1);
	/* Those in the table still go where they went. */
	for (unsigned i = 0; i < 4; i++) {
		struct mptcp_redirect_key k = key4(i);

		assert_int_equal(mptcp_redirect_lookup(rt, &k, 0x10, t + S), 1);
	}
	/* One closes with a RST: its room is free at once. */
	struct mptcp_redirect_key k2 = key4(2);

	assert_int_equal(mptcp_redirect_lookup(rt, &k2, MPTCP_REDIRECT_RST, t + 2 * S), 1);
	assert_int_equal(mptcp_redirect_count(rt), 3);
	assert_int_equal(mptcp_redirect_lookup(rt, &k2, 0x10, t + 2 * S), -1);
	assert_int_equal(mptcp_redirect_add(rt, &k5, 0, t + 2 * S), 0);
	assert_int_equal(mptcp_redirect_lookup(rt, &k5, 0x10, t + 2 * S), 0);
	mptcp_redirect_free(rt);
}

static void
an_established_subflow_is_forgotten_after_idle_timeout_and_not_before(void **state)
{
	struct mptcp_redirect *rt = table(8, IDLE);
	struct mptcp_redirect_key k = key4(1);
	uint64_t t = 100 * S;

	(void)state;
	assert_int_equal(mptcp_redirect_add(rt, &k, 1, t), 0);
	assert_int_equal(mptcp_redirect_lookup(rt, &k, 0x10, t), 1);
	/* Traffic keeps it: each segment restarts the idle time. */
	for (unsigned i = 1; i <= 5; i++)
		assert_int_equal(mptcp_redirect_lookup(rt, &k, 0x10, t + i * (IDLE - S)), 1);
	t += 5 * (IDLE - S);
	assert_int_equal(mptcp_redirect_expire(rt, t + IDLE - 1, 8), 0);
	assert_int_equal(mptcp_redirect_count(rt), 1);
	assert_int_equal(mptcp_redirect_lookup(rt, &k, 0x10, t + IDLE), -1);
	assert_int_equal(mptcp_redirect_count(rt), 0);
	mptcp_redirect_free(rt);
}

static void
a_subflow_seen_only_as_a_syn_is_forgotten_after_30_s(void **state)
{
	struct mptcp_redirect *rt = table(8, IDLE);
	struct mptcp_redirect_key k = key4(1), e = key4(2);
	uint64_t t = 7 * S;

	(void)state;
	assert_int_equal(mptcp_redirect_add(rt, &k, 1, t), 0);
	assert_int_equal(mptcp_redirect_add(rt, &e, 1, t), 0);
	assert_int_equal(mptcp_redirect_lookup(rt, &e, 0x10, t + S), 1); /* e established */
	assert_int_equal(mptcp_redirect_expire(rt, t + MPTCP_REDIRECT_SYN_NS - 1, 8), 0);
	assert_int_equal(mptcp_redirect_expire(rt, t + MPTCP_REDIRECT_SYN_NS, 8), 1);
	assert_int_equal(mptcp_redirect_lookup(rt, &k, 0x10, t + MPTCP_REDIRECT_SYN_NS), -1);
	assert_int_equal(mptcp_redirect_lookup(rt, &e, 0x10, t + MPTCP_REDIRECT_SYN_NS), 1);
	mptcp_redirect_free(rt);
}

static void
a_fin_from_the_client_shortens_the_subflows_life_to_60_s(void **state)
{
	struct mptcp_redirect *rt = table(8, 0); /* idle: never */
	struct mptcp_redirect_key k = key4(1), o = key4(2);
	uint64_t t = S;

	(void)state;
	assert_int_equal(mptcp_redirect_add(rt, &k, 1, t), 0);
	assert_int_equal(mptcp_redirect_add(rt, &o, 1, t), 0);
	assert_int_equal(mptcp_redirect_lookup(rt, &k, 0x10, t), 1);
	assert_int_equal(mptcp_redirect_lookup(rt, &o, 0x10, t), 1);
	assert_int_equal(mptcp_redirect_lookup(rt, &k, MPTCP_REDIRECT_FIN | 0x10, t + S), 1);
	/* Its last ACKs still go to the owner, and keep it. */
	assert_int_equal(mptcp_redirect_lookup(rt, &k, 0x10, t + 30 * S), 1);
	assert_int_equal(mptcp_redirect_lookup(rt, &k, 0x10, t + 30 * S + MPTCP_REDIRECT_FIN_NS - 1), 1);
	t += 30 * S + MPTCP_REDIRECT_FIN_NS - 1;
	assert_int_equal(mptcp_redirect_expire(rt, t + MPTCP_REDIRECT_FIN_NS, 8), 1);
	assert_int_equal(mptcp_redirect_lookup(rt, &k, 0x10, t + MPTCP_REDIRECT_FIN_NS), -1);
	/* With idle 0 an established one without FIN stays for ever. */
	assert_int_equal(mptcp_redirect_lookup(rt, &o, 0x10, t + 1000000 * S), 1);
	mptcp_redirect_free(rt);
}

static void
a_full_table_makes_room_from_expired_subflows(void **state)
{
	struct mptcp_redirect *rt = table(64, IDLE);
	uint64_t t = S;

	(void)state;
	for (unsigned i = 0; i < 64; i++) {
		struct mptcp_redirect_key k = key4(i);

		assert_int_equal(mptcp_redirect_add(rt, &k, 1, t), 0);
	}
	/* The 64 SYN-only ones expire after 30 s; 64 new ones fit then,
	 * without anyone calling mptcp_redirect_expire(). */
	struct mptcp_redirect_key n = key4(100);

	assert_int_equal(mptcp_redirect_add(rt, &n, 1, t + MPTCP_REDIRECT_SYN_NS - 1), -ENOSPC);
	for (unsigned i = 100; i < 164; i++) {
		struct mptcp_redirect_key k = key4(i);

		assert_int_equal(mptcp_redirect_add(rt, &k, 0, t + MPTCP_REDIRECT_SYN_NS), 0);
	}
	assert_int_equal(mptcp_redirect_count(rt), 64);
	for (unsigned i = 0; i < 64; i++) {
		struct mptcp_redirect_key old = key4(i), k = key4(100 + i);

		assert_int_equal(mptcp_redirect_lookup(rt, &old, 0x10, t + MPTCP_REDIRECT_SYN_NS), -1);
		assert_int_equal(mptcp_redirect_lookup(rt, &k, 0x10, t + MPTCP_REDIRECT_SYN_NS), 0);
	}
	mptcp_redirect_free(rt);
}

static void
the_expiry_scan_visits_a_bounded_number_of_entries_per_call(void **state)
{
	struct mptcp_redirect *rt = table(16, IDLE);
	unsigned removed = 0, calls = 0;

	(void)state;
	for (unsigned i = 0; i < 16; i++) {
		struct mptcp_redirect_key k = key4(i);

		assert_int_equal(mptcp_redirect_add(rt, &k, 1, S), 0);
	}
	while (mptcp_redirect_count(rt) > 0 && calls < 100) {
		uint32_t r = mptcp_redirect_expire(rt, S + MPTCP_REDIRECT_SYN_NS, 4);

		assert_true(r <= 4);
		removed += r;
		calls++;
	}
	assert_int_equal(removed, 16);
	assert_int_equal(calls, 4);
	/* A removed entry's room is used again. */
	struct mptcp_redirect_key k = key4(3);

	assert_int_equal(mptcp_redirect_add(rt, &k, 2, 2 * S + MPTCP_REDIRECT_SYN_NS), 0);
	assert_int_equal(mptcp_redirect_lookup(rt, &k, 0, 2 * S + MPTCP_REDIRECT_SYN_NS), 2);
	mptcp_redirect_free(rt);
}

/* With a reset memory, the client's RST leaves the subflow going to its
 * owner for that long after it (what it sent before the RST may arrive
 * behind it), and nothing that follows extends it or moves it on. */
static void
after_the_clients_rst_its_leftovers_go_to_the_owner_for_the_reset_memory(void **state)
{
	struct mptcp_redirect *rt = table_rst(4, 0, 5 * S); /* idle: never */
	struct mptcp_redirect_key k = key4(1), j = key4(2);
	uint64_t t = 10 * S;

	(void)state;
	assert_int_equal(mptcp_redirect_add(rt, &k, 1, t), 0);
	assert_int_equal(mptcp_redirect_lookup(rt, &k, 0x10, t), 1);
	assert_int_equal(mptcp_redirect_lookup(rt, &k, MPTCP_REDIRECT_RST | 0x10, t + S), 1);
	assert_int_equal(mptcp_redirect_count(rt), 1);
	/* Leftovers (data, a FIN, another RST) still go to the owner... */
	assert_int_equal(mptcp_redirect_lookup(rt, &k, 0x18, t + 2 * S), 1);
	assert_int_equal(mptcp_redirect_lookup(rt, &k, MPTCP_REDIRECT_FIN | 0x10, t + 3 * S), 1);
	assert_int_equal(mptcp_redirect_lookup(rt, &k, MPTCP_REDIRECT_RST, t + 4 * S), 1);
	/* ...until 5 s after the first RST, whatever came since. */
	assert_int_equal(mptcp_redirect_expire(rt, t + 6 * S - 1, 4), 0);
	assert_int_equal(mptcp_redirect_lookup(rt, &k, 0x18, t + 6 * S - 1), 1);
	assert_int_equal(mptcp_redirect_lookup(rt, &k, 0x18, t + 6 * S), -1);
	assert_int_equal(mptcp_redirect_count(rt), 0);
	/* A new join on a reset 4-tuple starts it over as a join. */
	assert_int_equal(mptcp_redirect_add(rt, &j, 0, t), 0);
	assert_int_equal(mptcp_redirect_lookup(rt, &j, MPTCP_REDIRECT_RST, t), 0);
	assert_int_equal(mptcp_redirect_add(rt, &j, 1, t + S), 0);
	assert_int_equal(mptcp_redirect_lookup(rt, &j, 0x10, t + S), 1);
	assert_int_equal(mptcp_redirect_lookup(rt, &j, 0x10, t + 100 * S), 1);
	/* Expired by the scan too. */
	assert_int_equal(mptcp_redirect_lookup(rt, &j, MPTCP_REDIRECT_RST, t + 200 * S), 1);
	assert_int_equal(mptcp_redirect_expire(rt, t + 205 * S, 4), 1);
	assert_int_equal(mptcp_redirect_count(rt), 0);
	mptcp_redirect_free(rt);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_token_names_its_owner_in_its_low_bits),
		cmocka_unit_test(a_joined_subflow_sends_its_later_segments_to_the_same_owner_and_no_other_does),
		cmocka_unit_test(the_table_is_bounded_and_refuses_a_new_subflow_when_full_of_live_ones),
		cmocka_unit_test(an_established_subflow_is_forgotten_after_idle_timeout_and_not_before),
		cmocka_unit_test(a_subflow_seen_only_as_a_syn_is_forgotten_after_30_s),
		cmocka_unit_test(a_fin_from_the_client_shortens_the_subflows_life_to_60_s),
		cmocka_unit_test(a_full_table_makes_room_from_expired_subflows),
		cmocka_unit_test(the_expiry_scan_visits_a_bounded_number_of_entries_per_call),
		cmocka_unit_test(after_the_clients_rst_its_leftovers_go_to_the_owner_for_the_reset_memory),
	};

	if (test_eal_init("mptcp_redirect") != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
