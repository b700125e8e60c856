/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for lib/mptcp_proxy's option parser and writer.
 *
 * Input layout (the seeds in corpus/ come from kernel_capture.py: option
 * areas the Linux kernel sent):
 *   byte 0   the segment's TCP flags (SYN 0x02, ACK 0x10, ...)
 *   byte 1.. a TCP option area; its first bytes are also parsed as one
 *            MPTCP option
 *
 * The data is copied into heap buffers of exactly its size, so ASan
 * reports any read outside it. Beyond memory safety the target aborts
 * when, for an accepted option:
 *   - mptcp_opt_len() differs from the parsed length;
 *   - the writer writes other than that many bytes, writes into a buffer
 *     one byte short, or changes any byte but reserved bits;
 *   - the written option does not parse back to the same fields;
 * and when the area walker's counters and results disagree with what it
 * returns, or 32-bit sequence expansion or the split DSS checksum fails
 * their identities on values taken from the input.
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "mptcp_proxy.h"

#define CHECK(c) do { if (!(c)) abort(); } while (0)

/* The input option with its reserved bits as the writer writes them. */
static void
canonical(const struct mptcp_opt *o, uint8_t *b)
{
	uint8_t keep2 = 0;   /* bits of byte 2's low nibble that carry data */

	switch (o->sub) {
	case MPTCP_SUB_MP_CAPABLE:
	case MPTCP_SUB_MP_TCPRST:
		keep2 = 0x0f;
		break;
	case MPTCP_SUB_MP_JOIN:
		keep2 = o->u.join.form == MPTCP_FORM_ACK ? 0 : 0x01;
		if (o->u.join.form == MPTCP_FORM_ACK)
			b[3] = 0;
		break;
	case MPTCP_SUB_ADD_ADDR:
	case MPTCP_SUB_MP_PRIO:
		keep2 = 0x01;
		break;
	case MPTCP_SUB_DSS:
		b[3] &= MPTCP_DSS_FLAGS;
		break;
	case MPTCP_SUB_MP_FAIL:
	case MPTCP_SUB_MP_FASTCLOSE:
		b[3] = 0;
		break;
	default:
		break;
	}
	b[2] = (uint8_t)((b[2] & 0xf0) | (b[2] & keep2));
}

static void
check_option(const uint8_t *p, size_t avail, uint8_t tcp_flags)
{
	struct mptcp_opt o, back;
	enum mptcp_opt_err err;
	uint8_t *w, *want;
	int n;

	err = mptcp_opt_parse(p, avail, tcp_flags, &o);
	CHECK((unsigned int)err < MPTCP_OPT_ERR_MAX);
	if (err != MPTCP_OPT_ERR_NONE) {
		CHECK(err != MPTCP_OPT_ERR_AREA_MALFORMED && err != MPTCP_OPT_ERR_DUPLICATE);
		return;
	}
	CHECK(o.len >= 3 && o.len <= avail);
	if (o.sub == MPTCP_SUB_MP_EXPERIMENTAL) {
		CHECK(mptcp_opt_write(&o, NULL, 0) == -EINVAL);
		return;
	}
	CHECK(mptcp_opt_len(&o) == o.len);
	/* One byte short: refused before anything is written. */
	w = malloc((size_t)o.len - 1 + 1);
	CHECK(w != NULL);
	CHECK(mptcp_opt_write(&o, w, (size_t)o.len - 1) == -ENOSPC);
	free(w);
	w = malloc(o.len);
	want = malloc(o.len);
	CHECK(w != NULL && want != NULL);
	n = mptcp_opt_write(&o, w, o.len);
	CHECK(n == o.len);
	memcpy(want, p, o.len);
	canonical(&o, want);
	CHECK(memcmp(w, want, o.len) == 0);
	CHECK(mptcp_opt_parse(w, o.len, tcp_flags, &back) == MPTCP_OPT_ERR_NONE);
	CHECK(memcmp(&back, &o, sizeof(o)) == 0);
	free(want);
	free(w);
}

static void
check_walker(const uint8_t *area, size_t len, uint8_t tcp_flags)
{
	struct mptcp_opt_counters c;
	struct mptcp_opts m;
	const struct mptcp_opt *slots[] = { &m.mpc, &m.join, &m.dss, &m.add_addr,
		&m.rm_addr, &m.prio, &m.fail, &m.fastclose, &m.tcprst };
	unsigned int found, bits = 0;
	uint64_t errs = 0;

	memset(&c, 0, sizeof(c));
	found = mptcp_opts_parse(area, len, tcp_flags, &m, &c);
	for (unsigned int e = 0; e < MPTCP_OPT_ERR_MAX; e++)
		errs += c.err[e];
	CHECK(c.err[MPTCP_OPT_ERR_NONE] == 0);
	CHECK(m.n_err == (errs < UINT8_MAX ? errs : UINT8_MAX));
	CHECK(m.n_err == 0 || (m.first_err != 0 && c.err[m.first_err] > 0));
	for (unsigned int s = 0; s < 16; s++)
		bits += (m.present >> s) & 1;
	CHECK(bits == found);
	for (unsigned int i = 0; i < sizeof(slots) / sizeof(slots[0]); i++) {
		const struct mptcp_opt *o = slots[i];
		uint8_t w[40];
		struct mptcp_opt back;

		if (!(m.present & (1u << o->sub)) || o->len == 0)
			continue;
		CHECK(mptcp_opt_write(o, w, sizeof(w)) == o->len);
		CHECK(mptcp_opt_parse(w, o->len, tcp_flags, &back) == MPTCP_OPT_ERR_NONE);
		CHECK(back.sub == o->sub && back.len == o->len);
	}
}

static uint64_t
get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void
check_arith(const uint8_t *d, size_t n)
{
	if (n >= 12) {
		uint64_t expected = get64(d);
		int32_t delta;
		uint64_t x;

		memcpy(&delta, d + 8, sizeof(delta));
		x = expected + (uint64_t)(int64_t)delta;
		CHECK(mptcp_expand_seq(expected, (uint32_t)x) == x);
	}
	if (n >= 2) {
		/* The DSS checksum of the input, whole and split where byte 1 says. */
		size_t cut = d[1] % n;
		struct mptcp_csum c;
		uint16_t whole = mptcp_dss_csum(0x0102030405060708ULL, 9, (uint16_t)n, d, n);

		mptcp_dss_csum_start(&c, 0x0102030405060708ULL, 9, (uint16_t)n);
		mptcp_dss_csum_add(&c, d, cut);
		mptcp_dss_csum_add(&c, d + cut, n - cut);
		CHECK(mptcp_dss_csum_final(&c) == whole);
		CHECK(mptcp_dss_csum_ok(&c, whole));
	}
	if (n >= 1) {
		/* HMAC-SHA256 with the first d[0] bytes as key, against libcrypto. */
		size_t kl = d[0] < n ? d[0] : n;
		uint8_t got[MPTCP_HMAC_LEN], want[EVP_MAX_MD_SIZE];
		unsigned int wl = 0;

		mptcp_hmac_sha256(d, kl, d + kl, n - kl, got);
		CHECK(HMAC(EVP_sha256(), d, (int)kl, d + kl, n - kl, want, &wl) != NULL);
		CHECK(wl == MPTCP_HMAC_LEN && memcmp(got, want, wl) == 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *area;
	size_t len;

	if (size < 1)
		return 0;
	len = size - 1;
	area = malloc(len ? len : 1);
	if (area == NULL)
		return 0;
	memcpy(area, data + 1, len);
	check_option(area, len, data[0]);
	/* Every MPTCP option the walker would meet, one by one. */
	for (size_t i = 0; i + 1 < len; ) {
		if (area[i] <= 1) {
			i++;
			continue;
		}
		if (area[i] == MPTCP_OPT_KIND)
			check_option(area + i, len - i, data[0]);
		if (area[i + 1] < 2)
			break;
		i += area[i + 1];
	}
	check_walker(area, len, data[0]);
	check_arith(area, len);
	free(area);
	return 0;
}
