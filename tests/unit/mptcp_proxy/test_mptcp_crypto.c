/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/mptcp_proxy crypto: HMAC-SHA256 against RFC 4231, token and IDSN
 * against `openssl dgst`, the MP_JOIN and ADD_ADDR HMACs against
 * `openssl dgst -mac HMAC`, key generation, and the DSS checksum against
 * checksums the Linux kernel computed. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "mptcp_proxy.h"
#include "kernel_options.h"

static void
hex_to_bytes(const char *hex, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned int v;

		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

static void
test_hmac_sha256_matches_every_rfc4231_vector(void **state)
{
	/* RFC 4231 §4.2-§4.8: test cases 1-4, 6 and 7 (full output) and 5
	 * (truncated to 128 bits). */
	static uint8_t k20_0b[20], k20_aa[20], k25[25], k20_0c[20], k131[131];
	static uint8_t d50_dd[50], d50_cd[50];
	const struct {
		const uint8_t *key;
		size_t key_len;
		const void *msg;
		size_t msg_len;
		const char *hmac;
	} v[] = {
		{ k20_0b, 20, "Hi There", 8,
		  "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7" },
		{ (const uint8_t *)"Jefe", 4, "what do ya want for nothing?", 28,
		  "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843" },
		{ k20_aa, 20, d50_dd, 50,
		  "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe" },
		{ k25, 25, d50_cd, 50,
		  "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b" },
		{ k20_0c, 20, "Test With Truncation", 20,
		  "a3b6167473100ee06e0c796c2955552b" },
		{ k131, 131, "Test Using Larger Than Block-Size Key - Hash Key First", 54,
		  "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54" },
		{ k131, 131, "This is a test using a larger than block-size key and a "
		  "larger than block-size data. The key needs to be hashed before "
		  "being used by the HMAC algorithm.", 152,
		  "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2" },
	};

	memset(k20_0b, 0x0b, sizeof(k20_0b));
	memset(k20_aa, 0xaa, sizeof(k20_aa));
	memset(k20_0c, 0x0c, sizeof(k20_0c));
	memset(k131, 0xaa, sizeof(k131));
	memset(d50_dd, 0xdd, sizeof(d50_dd));
	memset(d50_cd, 0xcd, sizeof(d50_cd));
	for (unsigned int i = 0; i < sizeof(k25); i++)
		k25[i] = (uint8_t)(i + 1);
	for (unsigned int i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint8_t got[MPTCP_HMAC_LEN], want[MPTCP_HMAC_LEN];
		size_t n = strlen(v[i].hmac) / 2;

		mptcp_hmac_sha256(v[i].key, v[i].key_len, v[i].msg, v[i].msg_len, got);
		hex_to_bytes(v[i].hmac, want, n);
		assert_memory_equal(got, want, n);
	}
}

static void
test_hmac_sha256_matches_libcrypto_hmac_for_key_lengths_around_the_block(void **state)
{
	/* Key lengths 0-130 (short, 64 = one block, 65 = hashed first) and
	 * message lengths 0-199, against libcrypto's own HMAC(). */
	uint8_t key[131], msg[200];
	uint32_t x = 12345;

	for (unsigned int i = 0; i < sizeof(msg); i++) {
		x = x * 1103515245u + 12345u;
		msg[i] = (uint8_t)(x >> 16);
		if (i < sizeof(key))
			key[i] = (uint8_t)(x >> 8);
	}
	for (unsigned int kl = 0; kl <= sizeof(key); kl++) {
		size_t ml = (kl * 37) % sizeof(msg);
		uint8_t got[MPTCP_HMAC_LEN], want[EVP_MAX_MD_SIZE];
		unsigned int wl = 0;

		mptcp_hmac_sha256(key, kl, msg, ml, got);
		assert_non_null(HMAC(EVP_sha256(), key, (int)kl, msg, ml, want, &wl));
		assert_int_equal(wl, MPTCP_HMAC_LEN);
		assert_memory_equal(got, want, MPTCP_HMAC_LEN);
	}
}

static void
test_token_and_idsn_are_the_ends_of_sha256_of_the_key(void **state)
{
	/* Derived with: printf KEYHEX | xxd -r -p | openssl dgst -sha256
	 *   0123456789abcdef -> 55c53f5d...570762cd38be9818
	 *   0000000000000000 -> af5570f5...e5b2328de0e83dfc
	 *   ffffffffffffffff -> 12a3ae44...57fb595bbbacf0ca
	 * token = first 4 bytes, IDSN = last 8 bytes (RFC 8684 §3.1, §3.2). */
	const struct { uint64_t key; uint32_t token; uint64_t idsn; } v[] = {
		{ 0x0123456789abcdefULL, 0x55c53f5d, 0x570762cd38be9818ULL },
		{ 0x0000000000000000ULL, 0xaf5570f5, 0xe5b2328de0e83dfcULL },
		{ 0xffffffffffffffffULL, 0x12a3ae44, 0x57fb595bbbacf0caULL },
	};

	for (unsigned int i = 0; i < 3; i++) {
		uint32_t token;
		uint64_t idsn;

		mptcp_key_token_idsn(v[i].key, &token, &idsn);
		assert_int_equal(token, v[i].token);
		assert_true(idsn == v[i].idsn);
	}
	mptcp_key_token_idsn(1, NULL, NULL);   /* either output may be NULL */
}

static void
test_token_and_idsn_match_tshark_for_the_kernels_keys(void **state)
{
	unsigned int checked = 0;

	for (unsigned int i = 0; i < sizeof(kernel_segs) / sizeof(kernel_segs[0]); i++) {
		const struct kernel_seg *k = &kernel_segs[i];
		uint32_t token;
		uint64_t idsn;

		if (k->expected_token == 0 || k->send_key == 0)
			continue;
		/* tshark derives them from the sender's key of the segment. */
		mptcp_key_token_idsn(k->send_key, &token, &idsn);
		assert_int_equal(token, k->expected_token);
		assert_true(idsn == k->expected_idsn);
		checked++;
	}
	assert_true(checked >= 2);
}

static void
test_join_hmacs_match_openssl(void **state)
{
	/* A = initiator (key 0123456789abcdef, nonce 11223344),
	 * B = responder (key fedcba9876543210, nonce 55667788).
	 * echo -n 1122334455667788 | xxd -r -p | openssl dgst -sha256 -mac HMAC
	 *   -macopt hexkey:0123456789abcdeffedcba9876543210   (A's, third ACK)
	 *   -> d8b5e46b7a782e79d3ecfd78307751df993e222b...
	 * echo -n 5566778811223344 | ... hexkey:fedcba98765432100123456789abcdef
	 *   -> 0d44dc5f555121b7...                              (B's, SYN/ACK) */
	uint8_t a[MPTCP_HMAC_LEN], want[20];

	mptcp_join_hmac(0x0123456789abcdefULL, 0xfedcba9876543210ULL,
			0x11223344, 0x55667788, a);
	hex_to_bytes("d8b5e46b7a782e79d3ecfd78307751df993e222b", want, 20);
	assert_memory_equal(a, want, MPTCP_JOIN_ACK_HMAC_LEN);
	assert_true(mptcp_join_hmac_trunc(0xfedcba9876543210ULL, 0x0123456789abcdefULL,
					  0x55667788, 0x11223344) ==
		    0x0d44dc5f555121b7ULL);
}

static void
test_add_addr_hmac_covers_id_address_and_a_zero_port_when_absent(void **state)
{
	/* echo -n 07c61202020000 | xxd -r -p | openssl dgst -sha256 -mac HMAC
	 *   -macopt hexkey:0123456789abcdeffedcba9876543210
	 *   -> aae965db...6e4490fd856c91da
	 * echo -n 0920010db80002000000000000000000021f90 | ... \
	 *   hexkey:fedcba98765432100123456789abcdef -> 0236d98f...d87c2b8d97d07659
	 * The option carries the rightmost 64 bits (RFC 8684 §3.4.1). */
	const uint8_t v4[4] = { 198, 18, 2, 2 };
	const uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 2, [15] = 2 };

	assert_true(mptcp_add_addr_hmac(0x0123456789abcdefULL, 0xfedcba9876543210ULL,
					7, v4, 4, 0) == 0x6e4490fd856c91daULL);
	assert_true(mptcp_add_addr_hmac(0xfedcba9876543210ULL, 0x0123456789abcdefULL,
					9, v6, 16, 8080) == 0xd87c2b8d97d07659ULL);
}

static bool
taken_if_bit4_clear(void *arg, uint32_t token)
{
	(*(unsigned int *)arg)++;
	return !(token & 0x10);
}

static bool
always_taken(void *arg, uint32_t token)
{
	(void)token;
	(*(unsigned int *)arg)++;
	return true;
}

static void
test_generated_key_carries_the_worker_id_in_its_token(void **state)
{
	for (uint32_t w = 0; w < 16; w++) {
		struct mptcp_keygen_params p = { .worker_bits = 4, .worker_id = w };
		struct mptcp_key k;
		uint32_t token;
		uint64_t idsn;

		assert_int_equal(mptcp_key_generate(&p, &k), 0);
		assert_int_equal(k.token & 0xf, w);
		mptcp_key_token_idsn(k.key, &token, &idsn);
		assert_int_equal(token, k.token);
		assert_true(idsn == k.idsn);
	}
}

static void
test_generator_never_returns_a_token_the_caller_says_is_taken(void **state)
{
	unsigned int calls = 0;
	struct mptcp_keygen_params p = { .taken = taken_if_bit4_clear,
					 .taken_arg = &calls };
	struct mptcp_key k;

	for (int i = 0; i < 50; i++) {
		assert_int_equal(mptcp_key_generate(&p, &k), 0);
		assert_true(k.token & 0x10);
	}
	assert_true(calls >= 50);
}

static void
test_generator_gives_up_with_eagain_after_max_tries(void **state)
{
	unsigned int calls = 0;
	struct mptcp_keygen_params p = { .taken = always_taken, .taken_arg = &calls,
					 .max_tries = 100 };
	struct mptcp_key k;

	assert_int_equal(mptcp_key_generate(&p, &k), -EAGAIN);
	assert_int_equal(calls, 100);
}

static void
test_generator_rejects_impossible_worker_ids(void **state)
{
	struct mptcp_keygen_params p = { .worker_bits = 2, .worker_id = 4 };
	struct mptcp_key k;

	assert_int_equal(mptcp_key_generate(&p, &k), -EINVAL);
	p.worker_bits = MPTCP_KEY_WORKER_BITS_MAX + 1;
	p.worker_id = 0;
	assert_int_equal(mptcp_key_generate(&p, &k), -EINVAL);
	assert_int_equal(mptcp_key_generate(NULL, &k), -EINVAL);
}

static void
test_keys_and_nonces_differ_from_draw_to_draw(void **state)
{
	struct mptcp_keygen_params p = { 0 };
	struct mptcp_key a, b;
	uint32_t n1, n2, n3;

	assert_int_equal(mptcp_key_generate(&p, &a), 0);
	assert_int_equal(mptcp_key_generate(&p, &b), 0);
	assert_true(a.key != b.key);
	assert_int_equal(mptcp_nonce_generate(&n1), 0);
	assert_int_equal(mptcp_nonce_generate(&n2), 0);
	assert_int_equal(mptcp_nonce_generate(&n3), 0);
	assert_false(n1 == n2 && n2 == n3);
}

static void
test_dss_checksum_of_a_hand_summed_mapping(void **state)
{
	/* Pseudo header words 0102 0304 0506 0708 | 090a 0b0c | 0003 | 0000,
	 * data 0d0e 0f(00): sum 0x403b, checksum ~0x403b = 0xbfc4. */
	const uint8_t d[3] = { 0x0d, 0x0e, 0x0f };
	struct mptcp_csum c;

	assert_int_equal(mptcp_dss_csum(0x0102030405060708ULL, 0x090a0b0c, 3, d, 3),
			 0xbfc4);
	mptcp_dss_csum_start(&c, 0x0102030405060708ULL, 0x090a0b0c, 3);
	mptcp_dss_csum_add(&c, d, 3);
	assert_true(mptcp_dss_csum_ok(&c, 0xbfc4));
	assert_false(mptcp_dss_csum_ok(&c, 0xbfc5));
}

static void
test_dss_checksum_matches_the_kernels(void **state)
{
	unsigned int n = sizeof(kernel_csums) / sizeof(kernel_csums[0]);

	assert_true(n >= 2);
	for (unsigned int i = 0; i < n; i++) {
		const struct kernel_csum *k = &kernel_csums[i];
		struct mptcp_csum c;

		assert_int_equal(mptcp_dss_csum(k->dsn, k->ssn, k->data_len,
						k->payload, k->payload_len), k->csum);
		mptcp_dss_csum_start(&c, k->dsn, k->ssn, k->data_len);
		mptcp_dss_csum_add(&c, k->payload, k->payload_len);
		assert_true(mptcp_dss_csum_ok(&c, k->csum));
	}
}

static void
test_dss_checksum_is_the_same_in_any_split_of_the_data(void **state)
{
	uint8_t data[1001];
	uint16_t whole;

	for (unsigned int i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 3);
	whole = mptcp_dss_csum(0xfedcba9876543210ULL, 77, 1001, data, sizeof(data));
	/* Pieces of 1, 2, 3 ... bytes: odd and even boundaries alike. */
	for (unsigned int step = 1; step < 20; step++) {
		struct mptcp_csum c;
		size_t off = 0;

		mptcp_dss_csum_start(&c, 0xfedcba9876543210ULL, 77, 1001);
		while (off < sizeof(data)) {
			size_t n = sizeof(data) - off < step ? sizeof(data) - off : step;

			mptcp_dss_csum_add(&c, data + off, n);
			mptcp_dss_csum_add(&c, data + off, 0);
			off += n;
		}
		assert_int_equal(mptcp_dss_csum_final(&c), whole);
		assert_true(mptcp_dss_csum_ok(&c, whole));
		data[step] ^= 0x40;
		mptcp_dss_csum_start(&c, 0xfedcba9876543210ULL, 77, 1001);
		mptcp_dss_csum_add(&c, data, sizeof(data));
		assert_false(mptcp_dss_csum_ok(&c, whole));
		data[step] ^= 0x40;
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hmac_sha256_matches_every_rfc4231_vector),
		cmocka_unit_test(test_hmac_sha256_matches_libcrypto_hmac_for_key_lengths_around_the_block),
		cmocka_unit_test(test_token_and_idsn_are_the_ends_of_sha256_of_the_key),
		cmocka_unit_test(test_token_and_idsn_match_tshark_for_the_kernels_keys),
		cmocka_unit_test(test_join_hmacs_match_openssl),
		cmocka_unit_test(test_add_addr_hmac_covers_id_address_and_a_zero_port_when_absent),
		cmocka_unit_test(test_generated_key_carries_the_worker_id_in_its_token),
		cmocka_unit_test(test_generator_never_returns_a_token_the_caller_says_is_taken),
		cmocka_unit_test(test_generator_gives_up_with_eagain_after_max_tries),
		cmocka_unit_test(test_generator_rejects_impossible_worker_ids),
		cmocka_unit_test(test_keys_and_nonces_differ_from_draw_to_draw),
		cmocka_unit_test(test_dss_checksum_of_a_hand_summed_mapping),
		cmocka_unit_test(test_dss_checksum_matches_the_kernels),
		cmocka_unit_test(test_dss_checksum_is_the_same_in_any_split_of_the_data),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
