/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/mptcp_proxy options: the parser against option bytes the Linux
 * kernel sent and against tshark's reading of them, write -> parse round
 * trips for every subtype and form, one case per named malformation, the
 * option-area walker, and 32 -> 64-bit sequence expansion. */

#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "mptcp_proxy.h"
#include "kernel_options.h"

#define SYN    0x02
#define SYNACK 0x12
#define ACK    0x10

#define N_KERNEL (sizeof(kernel_segs) / sizeof(kernel_segs[0]))

/* Offsets of the MPTCP options in an option area, in order. */
static unsigned int
find_mptcp(const uint8_t *o, unsigned int len, unsigned int off[8])
{
	unsigned int i = 0, n = 0;

	while (i < len && o[i] != 0) {
		if (o[i] == 1) {
			i++;
			continue;
		}
		assert_true(i + 1 < len && o[i + 1] >= 2);
		if (o[i] == MPTCP_OPT_KIND && n < 8)
			off[n++] = i;
		i += o[i + 1];
	}
	return n;
}

static unsigned int
count_subtypes(const char *s)
{
	unsigned int n = 1;

	for (; *s; s++)
		n += *s == ';';
	return n;
}

static void
check_against_tshark(const struct kernel_seg *k, const struct mptcp_opt *o)
{
	switch (o->sub) {
	case MPTCP_SUB_MP_CAPABLE:
		assert_int_equal(o->u.mpc.version, 1);
		assert_true(o->u.mpc.key_snd == k->send_key);
		assert_true(o->u.mpc.key_rcv == k->recv_key);
		break;
	case MPTCP_SUB_MP_JOIN:
		if (o->u.join.form == MPTCP_FORM_ACK) {
			char hex[41];

			for (int i = 0; i < 20; i++)
				sprintf(hex + 2 * i, "%02x", o->u.join.hmac[i]);
			assert_string_equal(hex, k->hmac);
			break;
		}
		assert_int_equal(o->u.join.addr_id, k->addr_id);
		assert_int_equal(o->u.join.backup, k->backup);
		assert_int_equal(o->u.join.nonce, k->nonce);
		assert_int_equal(o->u.join.token, k->token);
		assert_true(o->u.join.hmac64 == k->trunc_hmac);
		break;
	case MPTCP_SUB_DSS:
		assert_true(o->u.dss.data_ack == k->data_ack);
		assert_true(o->u.dss.dsn == k->dsn);
		assert_int_equal(o->u.dss.ssn, k->ssn);
		assert_int_equal(o->u.dss.data_len, k->data_len);
		assert_int_equal(!!(o->u.dss.flags & MPTCP_DSS_DATA_FIN), k->data_fin);
		break;
	case MPTCP_SUB_ADD_ADDR: {
		uint8_t a[16] = { 0 };

		assert_int_equal(inet_pton(o->u.add_addr.ipv6 ? AF_INET6 : AF_INET,
					   k->addr, a), 1);
		assert_memory_equal(a, o->u.add_addr.addr, o->u.add_addr.ipv6 ? 16 : 4);
		assert_int_equal(o->u.add_addr.addr_id, k->addr_id);
		assert_int_equal(o->u.add_addr.echo, k->echo);
		assert_int_equal(o->u.add_addr.port, k->port);
		assert_true(o->u.add_addr.hmac64 == k->addaddr_hmac);
		break;
	}
	case MPTCP_SUB_REMOVE_ADDR:
		assert_int_equal(o->u.rm_addr.n, 1);
		assert_int_equal(o->u.rm_addr.ids[0], k->addr_id);
		break;
	case MPTCP_SUB_MP_PRIO:
		assert_int_equal(o->u.prio.backup, k->backup);
		break;
	case MPTCP_SUB_MP_FASTCLOSE:
		assert_true(o->u.fastclose.key_rcv == k->recv_key);
		break;
	case MPTCP_SUB_MP_TCPRST:
		assert_int_equal(o->u.tcprst.reason, k->rst_reason);
		break;
	default:
		fail_msg("kernel sent subtype %u", o->sub);
	}
}

static void
test_every_option_the_kernel_sent_parses_as_tshark_reads_it(void **state)
{
	unsigned int subs = 0;

	assert_true(N_KERNEL >= 15);
	for (unsigned int i = 0; i < N_KERNEL; i++) {
		const struct kernel_seg *k = &kernel_segs[i];
		unsigned int off[8], n = find_mptcp(k->opts, k->len, off);
		struct mptcp_opts all;

		assert_int_equal(n, count_subtypes(k->subtypes));
		assert_int_equal(mptcp_opts_parse(k->opts, k->len, k->tcp_flags,
						  &all, NULL), n);
		assert_int_equal(all.n_err, 0);
		for (unsigned int j = 0; j < n; j++) {
			struct mptcp_opt o;

			assert_int_equal(mptcp_opt_parse(k->opts + off[j], k->len - off[j],
							 k->tcp_flags, &o),
					 MPTCP_OPT_ERR_NONE);
			assert_true(all.present & (1u << o.sub));
			check_against_tshark(k, &o);
			subs |= 1u << o.sub;
		}
	}
	/* MP_CAPABLE, MP_JOIN, DSS, ADD_ADDR, REMOVE_ADDR, MP_PRIO,
	 * MP_FASTCLOSE and MP_TCPRST all came from the kernel. */
	assert_int_equal(subs, 0x1bf);
}

static void
test_rewriting_a_kernel_option_gives_its_exact_bytes(void **state)
{
	for (unsigned int i = 0; i < N_KERNEL; i++) {
		const struct kernel_seg *k = &kernel_segs[i];
		unsigned int off[8], n = find_mptcp(k->opts, k->len, off);

		for (unsigned int j = 0; j < n; j++) {
			struct mptcp_opt o;
			uint8_t buf[40];

			assert_int_equal(mptcp_opt_parse(k->opts + off[j], k->len - off[j],
							 k->tcp_flags, &o), 0);
			assert_int_equal(mptcp_opt_write(&o, buf, sizeof(buf)), o.len);
			assert_memory_equal(buf, k->opts + off[j], o.len);
		}
	}
}

/* First option of a subtype (and form, for the handshake ones) the kernel
 * sent; all come from the capture's first connection. */
static const struct mptcp_opt *
kernel_first(uint8_t sub, int form, uint8_t echo, struct mptcp_opt *o)
{
	for (unsigned int i = 0; i < N_KERNEL; i++) {
		const struct kernel_seg *k = &kernel_segs[i];
		unsigned int off[8], n = find_mptcp(k->opts, k->len, off);

		for (unsigned int j = 0; j < n; j++) {
			assert_int_equal(mptcp_opt_parse(k->opts + off[j], k->len - off[j],
							 k->tcp_flags, o), 0);
			if (o->sub != sub)
				continue;
			if (sub == MPTCP_SUB_MP_CAPABLE && o->u.mpc.form != form)
				continue;
			if (sub == MPTCP_SUB_MP_JOIN && o->u.join.form != form)
				continue;
			if (sub == MPTCP_SUB_ADD_ADDR && o->u.add_addr.echo != echo)
				continue;
			if (sub == MPTCP_SUB_DSS && !(o->u.dss.flags & MPTCP_DSS_MAP))
				continue;
			return o;
		}
	}
	fail_msg("no kernel option of subtype %u form %d", sub, form);
	return NULL;
}

static void
test_kernel_handshake_verifies_with_our_token_idsn_and_hmacs(void **state)
{
	struct mptcp_opt mpc, jsyn, jsynack, jack, add, dss;
	uint64_t key_c, key_s, idsn_c, idsn_s;
	uint8_t h[MPTCP_HMAC_LEN];
	uint32_t token_s;

	/* The client's third ACK carries both keys: its own first. */
	kernel_first(MPTCP_SUB_MP_CAPABLE, MPTCP_FORM_ACK, 0, &mpc);
	key_c = mpc.u.mpc.key_snd;
	key_s = mpc.u.mpc.key_rcv;
	mptcp_key_token_idsn(key_s, &token_s, &idsn_s);
	mptcp_key_token_idsn(key_c, NULL, &idsn_c);
	/* The client's MP_JOIN SYN names the server's connection by token. */
	kernel_first(MPTCP_SUB_MP_JOIN, MPTCP_FORM_SYN, 0, &jsyn);
	assert_int_equal(jsyn.u.join.token, token_s);
	/* The server's SYN/ACK: its key and nonce first, 64 bits. */
	kernel_first(MPTCP_SUB_MP_JOIN, MPTCP_FORM_SYNACK, 0, &jsynack);
	assert_true(jsynack.u.join.hmac64 ==
		    mptcp_join_hmac_trunc(key_s, key_c, jsynack.u.join.nonce,
					  jsyn.u.join.nonce));
	/* The client's third ACK: its key and nonce first, 160 bits. */
	kernel_first(MPTCP_SUB_MP_JOIN, MPTCP_FORM_ACK, 0, &jack);
	mptcp_join_hmac(key_c, key_s, jsyn.u.join.nonce, jsynack.u.join.nonce, h);
	assert_memory_equal(jack.u.join.hmac, h, MPTCP_JOIN_ACK_HMAC_LEN);
	/* The server announced an address: keyed server first, port 0. */
	kernel_first(MPTCP_SUB_ADD_ADDR, 0, 0, &add);
	assert_true(add.u.add_addr.hmac64 ==
		    mptcp_add_addr_hmac(key_s, key_c, add.u.add_addr.addr_id,
					add.u.add_addr.addr, 4, add.u.add_addr.port));
	/* The first byte of data has DSN IDSN + 1 (RFC 8684 §3.3.1). */
	kernel_first(MPTCP_SUB_DSS, 0, 0, &dss);
	assert_true(dss.u.dss.dsn == idsn_c + 1 || dss.u.dss.dsn == idsn_s + 1);
}

/* Write, check length, parse back with the segment's flags, compare. */
static void
round_trip(struct mptcp_opt *o, uint8_t tcp_flags, int want_len)
{
	uint8_t buf[40], small[40];
	struct mptcp_opt back;
	int n;

	n = mptcp_opt_write(o, buf, sizeof(buf));
	assert_int_equal(n, want_len);
	assert_int_equal(mptcp_opt_len(o), want_len);
	o->len = (uint8_t)n;
	assert_int_equal(mptcp_opt_parse(buf, (size_t)n, tcp_flags, &back),
			 MPTCP_OPT_ERR_NONE);
	assert_memory_equal(&back, o, sizeof(back));
	/* One byte short: -ENOSPC and nothing written. */
	memset(small, 0xa5, sizeof(small));
	assert_int_equal(mptcp_opt_write(o, small, (size_t)n - 1), -ENOSPC);
	for (unsigned int i = 0; i < sizeof(small); i++)
		assert_int_equal(small[i], 0xa5);
}

/* Zeroed in place, padding included: round_trip() compares whole structs. */
static void
opt_init(struct mptcp_opt *o, uint8_t sub)
{
	memset(o, 0, sizeof(*o));
	o->sub = sub;
}

static void
test_mp_capable_round_trips_in_all_five_forms(void **state)
{
	const struct { uint8_t form; bool csum; uint8_t tcp; int len; } f[] = {
		{ MPTCP_FORM_SYN, false, SYN, 4 },
		{ MPTCP_FORM_SYNACK, false, SYNACK, 12 },
		{ MPTCP_FORM_ACK, false, ACK, 20 },
		{ MPTCP_FORM_DATA, false, ACK, 22 },
		{ MPTCP_FORM_DATA, true, ACK | 0x08, 24 },
	};

	for (unsigned int i = 0; i < 5; i++) {
		struct mptcp_opt o;

		opt_init(&o, MPTCP_SUB_MP_CAPABLE);
		o.u.mpc.form = f[i].form;
		o.u.mpc.version = 1;
		o.u.mpc.flags = MPTCP_MPC_FLAG_A | MPTCP_MPC_FLAG_H;
		o.u.mpc.has_csum = f[i].csum;
		if (f[i].len >= 12)
			o.u.mpc.key_snd = 0x0123456789abcdefULL;
		if (f[i].len >= 20)
			o.u.mpc.key_rcv = 0xfedcba9876543210ULL;
		if (f[i].len >= 22)
			o.u.mpc.data_len = 1400;
		if (f[i].csum)
			o.u.mpc.csum = 0xbeef;
		round_trip(&o, f[i].tcp, f[i].len);
	}
}

static void
test_mp_join_round_trips_in_syn_synack_and_ack(void **state)
{
	struct mptcp_opt o;

	opt_init(&o, MPTCP_SUB_MP_JOIN);
	o.u.join.form = MPTCP_FORM_SYN;
	o.u.join.backup = true;
	o.u.join.addr_id = 5;
	o.u.join.token = 0xdeadbeef;
	o.u.join.nonce = 0x11223344;
	round_trip(&o, SYN, 12);
	opt_init(&o, MPTCP_SUB_MP_JOIN);
	o.u.join.form = MPTCP_FORM_SYNACK;
	o.u.join.addr_id = 0;
	o.u.join.hmac64 = 0x0d44dc5f555121b7ULL;
	o.u.join.nonce = 0x55667788;
	round_trip(&o, SYNACK, 16);
	opt_init(&o, MPTCP_SUB_MP_JOIN);
	o.u.join.form = MPTCP_FORM_ACK;
	for (int i = 0; i < 20; i++)
		o.u.join.hmac[i] = (uint8_t)(0xd8 + i);
	round_trip(&o, ACK, 24);
}

static void
test_dss_round_trips_for_every_flag_combination_with_and_without_checksum(void **state)
{
	for (unsigned int flags = 0; flags <= MPTCP_DSS_FLAGS; flags++) {
		for (int cs = 0; cs < 2; cs++) {
			struct mptcp_opt o;
			int len = 4;

			opt_init(&o, MPTCP_SUB_DSS);
			if (cs && !(flags & MPTCP_DSS_MAP))
				continue;
			o.u.dss.flags = (uint8_t)flags;
			o.u.dss.has_csum = cs;
			if (flags & MPTCP_DSS_DATA_ACK) {
				len += flags & MPTCP_DSS_ACK64 ? 8 : 4;
				o.u.dss.data_ack = flags & MPTCP_DSS_ACK64 ?
					0x0102030405060708ULL : 0x05060708;
			}
			if (flags & MPTCP_DSS_MAP) {
				len += (flags & MPTCP_DSS_DSN64 ? 8 : 4) + 6 + 2 * cs;
				o.u.dss.dsn = flags & MPTCP_DSS_DSN64 ?
					0xf1f2f3f4f5f6f7f8ULL : 0xf5f6f7f8;
				o.u.dss.ssn = 0x2000;
				o.u.dss.data_len = 1448;
				o.u.dss.csum = cs ? 0x1234 : 0;
			}
			round_trip(&o, ACK, len);
		}
	}
}

static void
test_dss_with_ack_and_mapping_is_written_in_rfc_order(void **state)
{
	/* A (4-byte DATA_ACK), M with m (8-byte DSN), checksum: RFC 8684
	 * Figure 9 order is DATA_ACK, DSN, subflow seq, length, checksum. */
	const uint8_t want[] = { 30, 24, 0x20, 0x0d,
		0xa0, 0xa1, 0xa2, 0xa3,
		0, 0, 0, 1, 2, 3, 4, 5,
		0, 0, 0, 9,
		0x05, 0xdc,
		0xbe, 0xef };
	struct mptcp_opt o;
	uint8_t buf[40];

	opt_init(&o, MPTCP_SUB_DSS);
	o.u.dss.flags = MPTCP_DSS_DATA_ACK | MPTCP_DSS_MAP | MPTCP_DSS_DSN64;
	o.u.dss.data_ack = 0xa0a1a2a3;
	o.u.dss.dsn = 0x0000000102030405ULL;
	o.u.dss.ssn = 9;
	o.u.dss.data_len = 1500;
	o.u.dss.has_csum = true;
	o.u.dss.csum = 0xbeef;
	assert_int_equal(mptcp_opt_write(&o, buf, sizeof(buf)), sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
}

static void
test_add_addr_round_trips_for_both_families_port_and_echo(void **state)
{
	for (int v6 = 0; v6 < 2; v6++)
		for (int port = 0; port < 2; port++)
			for (int echo = 0; echo < 2; echo++) {
				struct mptcp_opt o;

				opt_init(&o, MPTCP_SUB_ADD_ADDR);
				o.u.add_addr.ipv6 = v6;
				o.u.add_addr.has_port = port;
				o.u.add_addr.echo = echo;
				o.u.add_addr.addr_id = 9;
				for (int i = 0; i < (v6 ? 16 : 4); i++)
					o.u.add_addr.addr[i] = (uint8_t)(0xc6 + i);
				o.u.add_addr.port = port ? 8080 : 0;
				o.u.add_addr.hmac64 = echo ? 0 : 0x0236d98fdcb66a39ULL;
				round_trip(&o, ACK, 4 + (v6 ? 16 : 4) + 2 * port +
					   (echo ? 0 : 8));
			}
}

static void
test_remaining_subtypes_round_trip(void **state)
{
	struct mptcp_opt o;

	opt_init(&o, MPTCP_SUB_REMOVE_ADDR);
	for (unsigned int n = 1; n <= MPTCP_RM_ADDR_MAX; n++) {
		o.u.rm_addr.n = (uint8_t)n;
		o.u.rm_addr.ids[n - 1] = (uint8_t)(n * 3);
		round_trip(&o, ACK, 3 + (int)n);
	}
	opt_init(&o, MPTCP_SUB_MP_PRIO);
	o.u.prio.backup = true;
	round_trip(&o, ACK, 3);
	o.u.prio.has_addr_id = true;
	o.u.prio.addr_id = 4;
	round_trip(&o, ACK, 4);
	opt_init(&o, MPTCP_SUB_MP_FAIL);
	o.u.fail.dsn = 0x8000000000000001ULL;
	round_trip(&o, ACK, 12);
	opt_init(&o, MPTCP_SUB_MP_FASTCLOSE);
	o.u.fastclose.key_rcv = 0x0123456789abcdefULL;
	round_trip(&o, ACK, 12);
	opt_init(&o, MPTCP_SUB_MP_TCPRST);
	o.u.tcprst.flags = MPTCP_TCPRST_T;
	o.u.tcprst.reason = MPTCP_TCPRST_MIDDLEBOX;
	round_trip(&o, ACK | 0x04, 4);
}

static void
test_unwritable_options_are_refused_with_einval(void **state)
{
	struct mptcp_opt o;
	uint8_t buf[40];

	opt_init(&o, MPTCP_SUB_MP_EXPERIMENTAL);
	assert_int_equal(mptcp_opt_write(&o, buf, sizeof(buf)), -EINVAL);
	opt_init(&o, MPTCP_SUB_REMOVE_ADDR);
	assert_int_equal(mptcp_opt_write(&o, buf, sizeof(buf)), -EINVAL);
	o.u.rm_addr.n = MPTCP_RM_ADDR_MAX + 1;
	assert_int_equal(mptcp_opt_write(&o, buf, sizeof(buf)), -EINVAL);
	opt_init(&o, MPTCP_SUB_MP_JOIN);
	o.u.join.form = MPTCP_FORM_DATA;
	assert_int_equal(mptcp_opt_write(&o, buf, sizeof(buf)), -EINVAL);
	opt_init(&o, 9);
	assert_int_equal(mptcp_opt_write(&o, buf, sizeof(buf)), -EINVAL);
}

static const struct {
	uint8_t b[40];
	uint8_t avail;
	uint8_t tcp_flags;
	enum mptcp_opt_err err;
} malformed[] = {
	{ { 30 }, 1, ACK, MPTCP_OPT_ERR_TRUNCATED },
	{ { 30, 12, 0x20, 0x00 }, 4, ACK, MPTCP_OPT_ERR_TRUNCATED },
	{ { 2, 4, 0x05, 0xb4 }, 4, SYN, MPTCP_OPT_ERR_NOT_MPTCP },
	{ { 30, 2 }, 2, ACK, MPTCP_OPT_ERR_LEN_BELOW_3 },
	{ { 30, 0 }, 2, ACK, MPTCP_OPT_ERR_LEN_BELOW_3 },
	{ { 30, 4, 0x90, 0 }, 4, ACK, MPTCP_OPT_ERR_UNKNOWN_SUBTYPE },
	{ { 30, 4, 0xe0, 0 }, 4, ACK, MPTCP_OPT_ERR_UNKNOWN_SUBTYPE },
	/* RFC 6824 (v0) SYN: 12 bytes with a key. */
	{ { 30, 12, 0x00, 0x81, 1, 2, 3, 4, 5, 6, 7, 8 }, 12, SYN,
	  MPTCP_OPT_ERR_MPC_VERSION },
	{ { 30, 3, 0x00 }, 3, SYN, MPTCP_OPT_ERR_MPC_VERSION },
	{ { 30, 4, 0x02, 0x01 }, 4, SYN, MPTCP_OPT_ERR_MPC_VERSION },
	{ { 30, 4, 0x01, 0x80 }, 4, SYN, MPTCP_OPT_ERR_MPC_NO_HMAC_SHA256 },
	{ { 30, 3, 0x01 }, 3, SYN, MPTCP_OPT_ERR_MPC_LEN },
	{ { 30, 8, 0x01, 0x01 }, 8, SYN, MPTCP_OPT_ERR_MPC_LEN },
	{ { 30, 23, 0x01, 0x01 }, 23, ACK, MPTCP_OPT_ERR_MPC_LEN },
	{ { 30, 4, 0x01, 0x01 }, 4, SYNACK, MPTCP_OPT_ERR_MPC_LEN_FOR_SEGMENT },
	{ { 30, 4, 0x01, 0x01 }, 4, ACK, MPTCP_OPT_ERR_MPC_LEN_FOR_SEGMENT },
	{ { 30, 12, 0x01, 0x01 }, 12, SYN, MPTCP_OPT_ERR_MPC_LEN_FOR_SEGMENT },
	{ { 30, 20, 0x01, 0x01 }, 20, SYNACK, MPTCP_OPT_ERR_MPC_LEN_FOR_SEGMENT },
	{ { 30, 22, 0x01, 0x01 }, 22, SYN, MPTCP_OPT_ERR_MPC_LEN_FOR_SEGMENT },
	{ { 30, 13, 0x10 }, 13, SYN, MPTCP_OPT_ERR_JOIN_LEN },
	{ { 30, 3, 0x10 }, 3, SYN, MPTCP_OPT_ERR_JOIN_LEN },
	{ { 30, 12, 0x10 }, 12, ACK, MPTCP_OPT_ERR_JOIN_LEN_FOR_SEGMENT },
	{ { 30, 16, 0x10 }, 16, SYN, MPTCP_OPT_ERR_JOIN_LEN_FOR_SEGMENT },
	{ { 30, 24, 0x10 }, 24, SYNACK, MPTCP_OPT_ERR_JOIN_LEN_FOR_SEGMENT },
	{ { 30, 3, 0x20 }, 3, ACK, MPTCP_OPT_ERR_DSS_LEN },
	{ { 30, 8, 0x20, 0x00 }, 8, ACK, MPTCP_OPT_ERR_DSS_LEN },
	/* A with 4 bytes is 8; +2 would be a checksum, which needs M. */
	{ { 30, 10, 0x20, 0x01 }, 10, ACK, MPTCP_OPT_ERR_DSS_LEN },
	/* A, a: 12 bytes, not 8. */
	{ { 30, 8, 0x20, 0x03 }, 8, ACK, MPTCP_OPT_ERR_DSS_LEN },
	/* M, m: 18 or 20. */
	{ { 30, 14, 0x20, 0x0c }, 14, ACK, MPTCP_OPT_ERR_DSS_LEN },
	{ { 30, 22, 0x20, 0x0c }, 22, ACK, MPTCP_OPT_ERR_DSS_LEN },
	{ { 30, 12, 0x30, 1 }, 12, ACK, MPTCP_OPT_ERR_ADD_ADDR_LEN },
	{ { 30, 7, 0x30, 1 }, 7, ACK, MPTCP_OPT_ERR_ADD_ADDR_LEN },
	{ { 30, 16, 0x31, 1 }, 16, ACK, MPTCP_OPT_ERR_ADD_ADDR_LEN },  /* echo: no HMAC */
	{ { 30, 8, 0x30, 1 }, 8, ACK, MPTCP_OPT_ERR_ADD_ADDR_LEN },    /* no echo: HMAC */
	{ { 30, 3, 0x40 }, 3, ACK, MPTCP_OPT_ERR_REMOVE_ADDR_LEN },
	{ { 30, 5, 0x50, 1, 2 }, 5, ACK, MPTCP_OPT_ERR_PRIO_LEN },
	{ { 30, 8, 0x60 }, 8, ACK, MPTCP_OPT_ERR_FAIL_LEN },
	{ { 30, 16, 0x70 }, 16, ACK, MPTCP_OPT_ERR_FASTCLOSE_LEN },
	{ { 30, 3, 0x80 }, 3, ACK, MPTCP_OPT_ERR_TCPRST_LEN },
	{ { 30, 5, 0x80, 1, 0 }, 5, ACK, MPTCP_OPT_ERR_TCPRST_LEN },
};

static void
test_every_malformation_returns_its_named_error(void **state)
{
	bool seen[MPTCP_OPT_ERR_MAX] = { false };

	for (unsigned int i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
		struct mptcp_opt o;
		enum mptcp_opt_err err = mptcp_opt_parse(malformed[i].b, malformed[i].avail,
							 malformed[i].tcp_flags, &o);

		if (err != malformed[i].err)
			fail_msg("case %u: got %s, want %s", i, mptcp_opt_err_name(err),
				 mptcp_opt_err_name(malformed[i].err));
		seen[err] = true;
	}
	/* The walker's own two are covered by the walker tests below. */
	seen[MPTCP_OPT_ERR_NONE] = seen[MPTCP_OPT_ERR_AREA_MALFORMED] =
		seen[MPTCP_OPT_ERR_DUPLICATE] = true;
	for (unsigned int e = 0; e < MPTCP_OPT_ERR_MAX; e++)
		if (!seen[e])
			fail_msg("no case for %s", mptcp_opt_err_name(e));
}

static void
test_rejected_option_still_reports_its_length_for_skipping(void **state)
{
	const uint8_t b[] = { 30, 5, 0x50, 1, 2 };
	struct mptcp_opt o;

	assert_int_equal(mptcp_opt_parse(b, sizeof(b), ACK, &o), MPTCP_OPT_ERR_PRIO_LEN);
	assert_int_equal(o.len, 5);
}

static void
test_walker_finds_mptcp_among_other_options_and_stops_at_eol(void **state)
{
	const uint8_t area[] = { 1, 1, 8, 10, 1, 2, 3, 4, 5, 6, 7, 8,   /* NOP NOP TS */
				 30, 8, 0x20, 0x01, 0, 0, 0, 7,          /* DSS ACK */
				 30, 3, 0x51,                            /* MP_PRIO B */
				 0, 30, 2, 0xff };                       /* EOL, padding */
	struct mptcp_opts m;
	struct mptcp_opt_counters c = { 0 };

	assert_int_equal(mptcp_opts_parse(area, sizeof(area), ACK, &m, &c), 2);
	assert_int_equal(m.present, (1u << MPTCP_SUB_DSS) | (1u << MPTCP_SUB_MP_PRIO));
	assert_int_equal(m.dss.u.dss.data_ack, 7);
	assert_true(m.prio.u.prio.backup);
	assert_int_equal(m.n_err, 0);
}

static void
test_walker_rejects_a_second_option_of_one_subtype_as_duplicate(void **state)
{
	const uint8_t area[] = { 30, 8, 0x20, 0x01, 0, 0, 0, 7,
				 30, 8, 0x20, 0x01, 0, 0, 0, 9 };
	struct mptcp_opts m;
	struct mptcp_opt_counters c = { 0 };

	assert_int_equal(mptcp_opts_parse(area, sizeof(area), ACK, &m, &c), 1);
	assert_int_equal(m.dss.u.dss.data_ack, 7);
	assert_int_equal(m.n_err, 1);
	assert_int_equal(m.first_err, MPTCP_OPT_ERR_DUPLICATE);
	assert_int_equal(c.err[MPTCP_OPT_ERR_DUPLICATE], 1);
}

static void
test_walker_skips_a_bad_mptcp_option_and_keeps_the_next(void **state)
{
	const uint8_t area[] = { 30, 5, 0x50, 1, 2,                     /* bad MP_PRIO */
				 30, 4, 0x81, 0x06,                     /* MP_TCPRST */
				 30, 4, 0xa0, 0 };                      /* subtype 10 */
	struct mptcp_opts m;
	struct mptcp_opt_counters c = { 0 };

	assert_int_equal(mptcp_opts_parse(area, sizeof(area), ACK | 0x04, &m, &c), 1);
	assert_int_equal(m.tcprst.u.tcprst.reason, MPTCP_TCPRST_MIDDLEBOX);
	assert_int_equal(m.tcprst.u.tcprst.flags, MPTCP_TCPRST_T);
	assert_int_equal(m.n_err, 2);
	assert_int_equal(m.first_err, MPTCP_OPT_ERR_PRIO_LEN);
	assert_int_equal(c.err[MPTCP_OPT_ERR_PRIO_LEN], 1);
	assert_int_equal(c.err[MPTCP_OPT_ERR_UNKNOWN_SUBTYPE], 1);
}

static void
test_walker_stops_where_the_area_cannot_be_delimited(void **state)
{
	const uint8_t bad_len[] = { 30, 4, 0x81, 0x00, 2, 0, 30, 3, 0x51 };
	const uint8_t overrun[] = { 1, 30, 12, 0x20, 0x01, 0, 0 };
	const uint8_t lone_kind[] = { 1, 1, 1, 30 };
	struct mptcp_opts m;
	struct mptcp_opt_counters c = { 0 };

	assert_int_equal(mptcp_opts_parse(bad_len, sizeof(bad_len), ACK, &m, &c), 1);
	assert_int_equal(m.first_err, MPTCP_OPT_ERR_AREA_MALFORMED);
	assert_false(m.present & (1u << MPTCP_SUB_MP_PRIO));
	assert_int_equal(mptcp_opts_parse(overrun, sizeof(overrun), ACK, &m, &c), 0);
	assert_int_equal(m.first_err, MPTCP_OPT_ERR_TRUNCATED);
	assert_int_equal(mptcp_opts_parse(lone_kind, sizeof(lone_kind), ACK, &m, &c), 0);
	assert_int_equal(m.first_err, MPTCP_OPT_ERR_TRUNCATED);
	assert_int_equal(c.err[MPTCP_OPT_ERR_AREA_MALFORMED], 1);
	assert_int_equal(c.err[MPTCP_OPT_ERR_TRUNCATED], 2);
}

static void
test_walker_error_count_saturates_instead_of_wrapping(void **state)
{
	/* Longer than any TCP option area: 266 MP_PRIOs, 265 duplicates. */
	uint8_t area[266 * 3];
	struct mptcp_opts m;
	struct mptcp_opt_counters c = { 0 };

	for (unsigned int i = 0; i < 266; i++) {
		area[3 * i] = 30;
		area[3 * i + 1] = 3;
		area[3 * i + 2] = 0x51;
	}
	assert_int_equal(mptcp_opts_parse(area, sizeof(area), ACK, &m, &c), 1);
	assert_int_equal(c.err[MPTCP_OPT_ERR_DUPLICATE], 265);
	assert_int_equal(m.n_err, UINT8_MAX);
	assert_int_equal(m.first_err, MPTCP_OPT_ERR_DUPLICATE);
}

static void
test_expand_seq_picks_the_nearest_value_across_wraps(void **state)
{
	const struct { uint64_t expected; uint32_t seq; uint64_t want; } v[] = {
		{ 0x0000000100000000ULL, 0x00000005, 0x0000000100000005ULL },
		/* forward across a 32-bit wrap */
		{ 0x00000001fffffff0ULL, 0x00000010, 0x0000000200000010ULL },
		/* backward across it: an old DATA_ACK */
		{ 0x0000000200000010ULL, 0xfffffff0, 0x00000001fffffff0ULL },
		/* below zero and above 2^64: modulo 2^64 */
		{ 0x0000000000000000ULL, 0xffffffff, 0xffffffffffffffffULL },
		{ 0xffffffffffffff00ULL, 0x00000010, 0x0000000000000010ULL },
		/* 2^31 ahead is taken as behind; 2^31 - 1 ahead as ahead */
		{ 0x0000000100000000ULL, 0x80000000, 0x0000000080000000ULL },
		{ 0x0000000100000000ULL, 0x7fffffff, 0x000000017fffffffULL },
		{ 0x0123456789abcdefULL, 0x89abcdef, 0x0123456789abcdefULL },
	};

	for (unsigned int i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (mptcp_expand_seq(v[i].expected, v[i].seq) != v[i].want)
			fail_msg("case %u: got %#llx", i, (unsigned long long)
				 mptcp_expand_seq(v[i].expected, v[i].seq));
}

static void
test_expand_seq_round_trips_every_value_within_half_the_space(void **state)
{
	const uint64_t bases[] = { 0, 0x7fffffffULL, 0xffffffffULL, 0x100000000ULL,
				   0xfffffffffffffff0ULL, 0x123456789abcdef0ULL };

	for (unsigned int b = 0; b < sizeof(bases) / sizeof(bases[0]); b++)
		for (int64_t d = -(1LL << 31); d < (1LL << 31); d += 65537) {
			uint64_t x = bases[b] + (uint64_t)d;

			assert_true(mptcp_expand_seq(bases[b], (uint32_t)x) == x);
		}
}

static void
test_every_error_subtype_and_reason_has_a_distinct_name(void **state)
{
	for (unsigned int e = 0; e < MPTCP_OPT_ERR_MAX; e++) {
		assert_non_null(mptcp_opt_err_name(e));
		for (unsigned int f = 0; f < e; f++)
			assert_string_not_equal(mptcp_opt_err_name(e), mptcp_opt_err_name(f));
	}
	assert_string_equal(mptcp_opt_err_name(MPTCP_OPT_ERR_MAX), "invalid");
	assert_string_equal(mptcp_sub_name(MPTCP_SUB_DSS), "dss");
	assert_string_equal(mptcp_sub_name(MPTCP_SUB_MP_TCPRST), "mp_tcprst");
	assert_null(mptcp_sub_name(9));
	assert_string_equal(mptcp_tcprst_reason_name(MPTCP_TCPRST_MIDDLEBOX),
			    "middlebox_interference");
	assert_null(mptcp_tcprst_reason_name(7));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_option_the_kernel_sent_parses_as_tshark_reads_it),
		cmocka_unit_test(test_rewriting_a_kernel_option_gives_its_exact_bytes),
		cmocka_unit_test(test_kernel_handshake_verifies_with_our_token_idsn_and_hmacs),
		cmocka_unit_test(test_mp_capable_round_trips_in_all_five_forms),
		cmocka_unit_test(test_mp_join_round_trips_in_syn_synack_and_ack),
		cmocka_unit_test(test_dss_round_trips_for_every_flag_combination_with_and_without_checksum),
		cmocka_unit_test(test_dss_with_ack_and_mapping_is_written_in_rfc_order),
		cmocka_unit_test(test_add_addr_round_trips_for_both_families_port_and_echo),
		cmocka_unit_test(test_remaining_subtypes_round_trip),
		cmocka_unit_test(test_unwritable_options_are_refused_with_einval),
		cmocka_unit_test(test_every_malformation_returns_its_named_error),
		cmocka_unit_test(test_rejected_option_still_reports_its_length_for_skipping),
		cmocka_unit_test(test_walker_finds_mptcp_among_other_options_and_stops_at_eol),
		cmocka_unit_test(test_walker_rejects_a_second_option_of_one_subtype_as_duplicate),
		cmocka_unit_test(test_walker_skips_a_bad_mptcp_option_and_keeps_the_next),
		cmocka_unit_test(test_walker_stops_where_the_area_cannot_be_delimited),
		cmocka_unit_test(test_walker_error_count_saturates_instead_of_wrapping),
		cmocka_unit_test(test_expand_seq_picks_the_nearest_value_across_wraps),
		cmocka_unit_test(test_expand_seq_round_trips_every_value_within_half_the_space),
		cmocka_unit_test(test_every_error_subtype_and_reason_has_a_distinct_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
