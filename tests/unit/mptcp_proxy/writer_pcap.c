/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writes one TCP segment per MPTCP option form, built by mptcp_opt_write(),
 * into a pcap, and prints what each option should read as: one line per
 * frame, "field=value" pairs named as tshark's MPTCP dissector names them.
 * tshark_writer.py dissects the pcap and compares. The expected values
 * come from the structs given to the writer, never from our parser.
 *
 * Usage: writer_pcap OUT.pcap
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mptcp_proxy.h"

#define SYN    0x02
#define SYNACK 0x12
#define ACK    0x10

struct wcase {
	struct mptcp_opt o;
	uint8_t tcp_flags;
	const char *expect;
};

static void
put16(uint8_t *p, unsigned int v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t
csum_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static uint32_t
sum16(const uint8_t *p, size_t n)
{
	uint32_t s = 0;

	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

/* Ethernet + IPv4 198.18.0.1:40000 -> 198.18.0.2:80 + TCP with options. */
static size_t
frame(uint8_t *f, const uint8_t *opt, size_t olen, uint8_t tcp_flags, unsigned int seq)
{
	size_t tcp_len = 20 + ((olen + 3) & ~(size_t)3);
	uint8_t *ip = f + 14, *tcp = ip + 20;
	uint32_t s;

	memset(f, 0, 14 + 20 + tcp_len);
	f[0] = 0x02; f[5] = 0x02; f[6] = 0x02; f[11] = 0x01;
	f[12] = 0x08;
	ip[0] = 0x45;
	put16(ip + 2, (unsigned int)(20 + tcp_len));
	ip[8] = 64;
	ip[9] = 6;
	ip[12] = 198; ip[13] = 18; ip[14] = 0; ip[15] = 1;
	ip[16] = 198; ip[17] = 18; ip[18] = 0; ip[19] = 2;
	put16(ip + 10, csum_fold(sum16(ip, 20)));
	put16(tcp, 40000);
	put16(tcp + 2, 80);
	put16(tcp + 4, seq >> 16);
	put16(tcp + 6, seq & 0xffff);
	tcp[12] = (uint8_t)((tcp_len / 4) << 4);
	tcp[13] = tcp_flags;
	put16(tcp + 14, 65535);
	memcpy(tcp + 20, opt, olen);
	memset(tcp + 20 + olen, 1, tcp_len - 20 - olen);   /* NOP padding */
	s = sum16(ip + 12, 8) + 6 + (uint32_t)tcp_len + sum16(tcp, tcp_len);
	put16(tcp + 16, csum_fold(s));
	return 14 + 20 + tcp_len;
}

static void
le32(FILE *f, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

	fwrite(b, 1, 4, f);
}

int
main(int argc, char **argv)
{
	static struct wcase c[24];
	const uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 2, [15] = 2 };
	unsigned int n = 0;
	FILE *out;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUT.pcap\n", argv[0]);
		return 2;
	}
#define ADD(sub_, flags_, exp_) \
	(memset(&c[n], 0, sizeof(c[n])), c[n].o.sub = (sub_), \
	 c[n].tcp_flags = (flags_), c[n].expect = (exp_), &c[n++].o)
	struct mptcp_opt *o;

	o = ADD(MPTCP_SUB_MP_CAPABLE, SYN, "subtype=0 version=1 checksumreq.flags=1 sha256.flag=1");
	o->u.mpc.form = MPTCP_FORM_SYN; o->u.mpc.version = 1; o->u.mpc.flags = 0x81;
	o = ADD(MPTCP_SUB_MP_CAPABLE, SYNACK, "subtype=0 version=1 sendkey=81985529216486895");
	o->u.mpc.form = MPTCP_FORM_SYNACK; o->u.mpc.version = 1; o->u.mpc.flags = 0x01;
	o->u.mpc.key_snd = 0x0123456789abcdefULL;
	o = ADD(MPTCP_SUB_MP_CAPABLE, ACK,
		"subtype=0 sendkey=18364758544493064720 recvkey=81985529216486895");
	o->u.mpc.form = MPTCP_FORM_ACK; o->u.mpc.version = 1; o->u.mpc.flags = 0x01;
	o->u.mpc.key_snd = 0xfedcba9876543210ULL; o->u.mpc.key_rcv = 0x0123456789abcdefULL;
	o = ADD(MPTCP_SUB_MP_CAPABLE, ACK | 0x08,
		"subtype=0 sendkey=18364758544493064720 recvkey=81985529216486895 datalvllen=1400");
	o->u.mpc.form = MPTCP_FORM_DATA; o->u.mpc.version = 1; o->u.mpc.flags = 0x01;
	o->u.mpc.key_snd = 0xfedcba9876543210ULL; o->u.mpc.key_rcv = 0x0123456789abcdefULL;
	o->u.mpc.data_len = 1400;
	o = ADD(MPTCP_SUB_MP_CAPABLE, ACK | 0x08,
		"subtype=0 sendkey=18364758544493064720 recvkey=81985529216486895 datalvllen=1400 checksum=0xbeef");
	o->u.mpc.form = MPTCP_FORM_DATA; o->u.mpc.version = 1; o->u.mpc.flags = 0x81;
	o->u.mpc.key_snd = 0xfedcba9876543210ULL; o->u.mpc.key_rcv = 0x0123456789abcdefULL;
	o->u.mpc.data_len = 1400; o->u.mpc.has_csum = true; o->u.mpc.csum = 0xbeef;
	o = ADD(MPTCP_SUB_MP_JOIN, SYN,
		"subtype=1 backup.flag=1 addrid=5 recvtok=3735928559 sendrand=287454020");
	o->u.join.form = MPTCP_FORM_SYN; o->u.join.backup = true; o->u.join.addr_id = 5;
	o->u.join.token = 0xdeadbeef; o->u.join.nonce = 0x11223344;
	o = ADD(MPTCP_SUB_MP_JOIN, SYNACK,
		"subtype=1 backup.flag=0 addrid=7 sendtrunchmac=955282973525019431 sendrand=1432778632");
	o->u.join.form = MPTCP_FORM_SYNACK; o->u.join.addr_id = 7;
	o->u.join.hmac64 = 0x0d41d8cd98f00b27ULL; o->u.join.nonce = 0x55667788;
	o = ADD(MPTCP_SUB_MP_JOIN, ACK,
		"subtype=1 sendhmac=d8b5e46b7a782e79d3ecfd78307751df993e222b");
	o->u.join.form = MPTCP_FORM_ACK;
	memcpy(o->u.join.hmac, "\xd8\xb5\xe4\x6b\x7a\x78\x2e\x79\xd3\xec\xfd\x78\x30\x77"
	       "\x51\xdf\x99\x3e\x22\x2b", 20);
	o = ADD(MPTCP_SUB_DSS, ACK,
		"subtype=2 dataackpresent.flag=1 dataack8.flag=0 rawdataack=4294967295");
	o->u.dss.flags = MPTCP_DSS_DATA_ACK; o->u.dss.data_ack = 0xffffffff;
	o = ADD(MPTCP_SUB_DSS, ACK | 0x08,
		"subtype=2 dataack8.flag=0 dseqn8.flag=0 rawdataack=16909060 rawdataseqno=84281096 subflowseqno=1 datalvllen=1448 datafin.flag=0");
	o->u.dss.flags = MPTCP_DSS_DATA_ACK | MPTCP_DSS_MAP; o->u.dss.data_ack = 0x01020304;
	o->u.dss.dsn = 0x05060708; o->u.dss.ssn = 1; o->u.dss.data_len = 1448;
	o = ADD(MPTCP_SUB_DSS, ACK | 0x08 | 0x01,
		"subtype=2 dataack8.flag=1 dseqn8.flag=1 rawdataack=72623859790382856 rawdataseqno=18446744073709551615 subflowseqno=4294967295 datalvllen=1 datafin.flag=1");
	o->u.dss.flags = MPTCP_DSS_DATA_ACK | MPTCP_DSS_ACK64 | MPTCP_DSS_MAP |
			 MPTCP_DSS_DSN64 | MPTCP_DSS_DATA_FIN;
	o->u.dss.data_ack = 0x0102030405060708ULL; o->u.dss.dsn = ~0ULL;
	o->u.dss.ssn = 0xffffffff; o->u.dss.data_len = 1;
	o->u.dss.has_csum = true; o->u.dss.csum = 0x1234;
	o = ADD(MPTCP_SUB_ADD_ADDR, ACK,
		"subtype=3 echo=0 addrid=7 ipv4=198.18.2.2 addaddrtrunchmac=7954079310429327871");
	o->u.add_addr.addr_id = 7; memcpy(o->u.add_addr.addr, "\xc6\x12\x02\x02", 4);
	o->u.add_addr.hmac64 = 0x6e6290fd856c91ffULL;
	o = ADD(MPTCP_SUB_ADD_ADDR, ACK, "subtype=3 echo=1 addrid=3 ipv4=198.18.2.2 port=8080");
	o->u.add_addr.echo = true; o->u.add_addr.addr_id = 3;
	memcpy(o->u.add_addr.addr, "\xc6\x12\x02\x02", 4);
	o->u.add_addr.has_port = true; o->u.add_addr.port = 8080;
	o = ADD(MPTCP_SUB_ADD_ADDR, ACK,
		"subtype=3 echo=0 addrid=9 ipv6=2001:db8:2::2 port=8080 addaddrtrunchmac=15599391096441960025");
	o->u.add_addr.ipv6 = true; o->u.add_addr.addr_id = 9;
	memcpy(o->u.add_addr.addr, v6, 16);
	o->u.add_addr.has_port = true; o->u.add_addr.port = 8080;
	o->u.add_addr.hmac64 = 0xd87c2b8d97d07659ULL;
	o = ADD(MPTCP_SUB_ADD_ADDR, ACK, "subtype=3 echo=1 addrid=9 ipv6=2001:db8:2::2");
	o->u.add_addr.ipv6 = true; o->u.add_addr.echo = true; o->u.add_addr.addr_id = 9;
	memcpy(o->u.add_addr.addr, v6, 16);
	o = ADD(MPTCP_SUB_REMOVE_ADDR, ACK, "subtype=4 addrid=1,2,250");
	o->u.rm_addr.n = 3; o->u.rm_addr.ids[0] = 1; o->u.rm_addr.ids[1] = 2;
	o->u.rm_addr.ids[2] = 250;
	o = ADD(MPTCP_SUB_MP_PRIO, ACK, "subtype=5 backup.flag=1");
	o->u.prio.backup = true;
	o = ADD(MPTCP_SUB_MP_FAIL, ACK, "subtype=6 rawdataseqno=9223372036854775809");
	o->u.fail.dsn = 0x8000000000000001ULL;
	o = ADD(MPTCP_SUB_MP_FASTCLOSE, ACK, "subtype=7 recvkey=81985529216486895");
	o->u.fastclose.key_rcv = 0x0123456789abcdefULL;
	o = ADD(MPTCP_SUB_MP_TCPRST, ACK | 0x04, "subtype=8 flag_T.flag=1 rst_reason=0x06");
	o->u.tcprst.flags = MPTCP_TCPRST_T; o->u.tcprst.reason = MPTCP_TCPRST_MIDDLEBOX;
#undef ADD

	out = fopen(argv[1], "wb");
	if (out == NULL) {
		perror(argv[1]);
		return 1;
	}
	le32(out, 0xa1b2c3d4);
	le32(out, 0x00040002);   /* version 2.4 */
	le32(out, 0);
	le32(out, 0);
	le32(out, 65535);
	le32(out, 1);            /* Ethernet */
	for (unsigned int i = 0; i < n; i++) {
		uint8_t opt[40], f[128];
		int len = mptcp_opt_write(&c[i].o, opt, sizeof(opt));
		size_t flen;

		if (len < 0) {
			fprintf(stderr, "case %u: write failed: %d\n", i, len);
			return 1;
		}
		flen = frame(f, opt, (size_t)len, c[i].tcp_flags, 1000 * (i + 1));
		le32(out, i + 1);
		le32(out, 0);
		le32(out, (uint32_t)flen);
		le32(out, (uint32_t)flen);
		fwrite(f, 1, flen, out);
		printf("%u %s\n", i + 1, c[i].expect);
	}
	return fclose(out) == 0 ? 0 : 1;
}
