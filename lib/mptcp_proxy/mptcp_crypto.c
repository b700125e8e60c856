/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPTCP v1 crypto from RFC 8684 §3.1-§3.4 and RFC 2104.
 *
 * SHA-256 uses libcrypto's SHA256_Init/Update/Final on a stack context:
 * OpenSSL 3 marks them deprecated in favour of EVP, but the EVP one-shots
 * (EVP_Digest, HMAC()) allocate a context per call, and these run per
 * connection and per join. API level 1.1.1 keeps the low-level calls
 * visible without warnings.
 */
#define OPENSSL_API_COMPAT 0x10101000L

#include <errno.h>
#include <string.h>

#include <openssl/rand.h>
#include <openssl/sha.h>

#include "mptcp_crypto.h"
#include "mptcp_be.h"

#define SHA256_BLOCK 64

void
mptcp_key_token_idsn(uint64_t key, uint32_t *token, uint64_t *idsn)
{
	uint8_t k[8], h[SHA256_DIGEST_LENGTH];
	SHA256_CTX c;

	put_be64(k, key);
	SHA256_Init(&c);
	SHA256_Update(&c, k, sizeof(k));
	SHA256_Final(h, &c);
	if (token != NULL)
		*token = get_be32(h);
	if (idsn != NULL)
		*idsn = get_be64(h + SHA256_DIGEST_LENGTH - 8);
}

/* Most candidate keys drawn per RAND_bytes call. A call costs about as
 * much as several SHA-256s, so draw as many as the worker bits will
 * likely need (2^bits), and no more. */
#define KEYGEN_BATCH 64

int
mptcp_key_generate(const struct mptcp_keygen_params *p, struct mptcp_key *out)
{
	uint8_t rnd[KEYGEN_BATCH * 8];
	unsigned int tries, max, i, batch;
	uint32_t mask;

	if (p == NULL || out == NULL || p->worker_bits > MPTCP_KEY_WORKER_BITS_MAX)
		return -EINVAL;
	mask = (1u << p->worker_bits) - 1;
	if (p->worker_id & ~mask)
		return -EINVAL;
	max = p->max_tries ? p->max_tries : 64u << p->worker_bits;
	batch = p->worker_bits < 6 ? 1u << p->worker_bits : KEYGEN_BATCH;
	for (tries = 0; tries < max; ) {
		if (RAND_bytes(rnd, (int)(batch * 8)) != 1)
			return -EIO;
		for (i = 0; i < batch && tries < max; i++, tries++) {
			uint64_t key = get_be64(rnd + 8 * i);
			uint32_t token;
			uint64_t idsn;

			mptcp_key_token_idsn(key, &token, &idsn);
			if ((token & mask) != p->worker_id)
				continue;
			if (p->taken != NULL && p->taken(p->taken_arg, token))
				continue;
			out->key = key;
			out->token = token;
			out->idsn = idsn;
			return 0;
		}
	}
	return -EAGAIN;
}

int
mptcp_nonce_generate(uint32_t *nonce)
{
	uint8_t b[4];

	if (RAND_bytes(b, sizeof(b)) != 1)
		return -EIO;
	*nonce = get_be32(b);
	return 0;
}

void
mptcp_hmac_sha256(const void *key, size_t key_len, const void *msg,
		  size_t msg_len, uint8_t out[MPTCP_HMAC_LEN])
{
	uint8_t k[SHA256_BLOCK] = {0}, pad[SHA256_BLOCK], inner[SHA256_DIGEST_LENGTH];
	SHA256_CTX c;
	int i;

	if (key_len > SHA256_BLOCK) {
		SHA256_Init(&c);
		SHA256_Update(&c, key, key_len);
		SHA256_Final(k, &c);
	} else if (key_len > 0) {
		memcpy(k, key, key_len);
	}
	for (i = 0; i < SHA256_BLOCK; i++)
		pad[i] = k[i] ^ 0x36;
	SHA256_Init(&c);
	SHA256_Update(&c, pad, sizeof(pad));
	SHA256_Update(&c, msg, msg_len);
	SHA256_Final(inner, &c);
	for (i = 0; i < SHA256_BLOCK; i++)
		pad[i] = k[i] ^ 0x5c;
	SHA256_Init(&c);
	SHA256_Update(&c, pad, sizeof(pad));
	SHA256_Update(&c, inner, sizeof(inner));
	SHA256_Final(out, &c);
}

void
mptcp_join_hmac(uint64_t key_self, uint64_t key_peer, uint32_t nonce_self,
		uint32_t nonce_peer, uint8_t out[MPTCP_HMAC_LEN])
{
	uint8_t k[16], m[8];

	put_be64(k, key_self);
	put_be64(k + 8, key_peer);
	put_be32(m, nonce_self);
	put_be32(m + 4, nonce_peer);
	mptcp_hmac_sha256(k, sizeof(k), m, sizeof(m), out);
}

uint64_t
mptcp_join_hmac_trunc(uint64_t key_self, uint64_t key_peer,
		      uint32_t nonce_self, uint32_t nonce_peer)
{
	uint8_t h[MPTCP_HMAC_LEN];

	mptcp_join_hmac(key_self, key_peer, nonce_self, nonce_peer, h);
	return get_be64(h);
}

uint64_t
mptcp_add_addr_hmac(uint64_t key_sender, uint64_t key_receiver,
		    uint8_t addr_id, const uint8_t *addr, size_t addr_len,
		    uint16_t port)
{
	uint8_t k[16], m[1 + 16 + 2], h[MPTCP_HMAC_LEN];

	if (addr_len > 16)
		addr_len = 16;
	put_be64(k, key_sender);
	put_be64(k + 8, key_receiver);
	m[0] = addr_id;
	memcpy(m + 1, addr, addr_len);
	m[1 + addr_len] = (uint8_t)(port >> 8);
	m[2 + addr_len] = (uint8_t)port;
	mptcp_hmac_sha256(k, sizeof(k), m, 3 + addr_len, h);
	return get_be64(h + MPTCP_HMAC_LEN - 8);
}

void
mptcp_dss_csum_start(struct mptcp_csum *c, uint64_t dsn, uint32_t ssn,
		     uint16_t data_len)
{
	c->sum = (dsn >> 48) + ((dsn >> 32) & 0xffff) + ((dsn >> 16) & 0xffff) +
		 (dsn & 0xffff) + (ssn >> 16) + (ssn & 0xffff) + data_len;
	c->bytes = 0;   /* the pseudo header is 16 bytes: even */
}

void
mptcp_dss_csum_add(struct mptcp_csum *c, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t s = c->sum;
	size_t i = 0;

	if (len == 0)
		return;
	/* After an odd number of bytes the next byte is a word's low half. */
	if (c->bytes & 1)
		s += p[i++];
	/* Eight bytes at a time as two big-endian 32-bit words: 2^16 = 1
	 * modulo 0xffff, so they fold to the sum of their 16-bit halves.
	 * Each step adds under 2^33: no overflow below 2^31 steps. */
	for (; i + 8 <= len; i += 8) {
		uint64_t v;

		memcpy(&v, p + i, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		v = __builtin_bswap64(v);
#endif
		s += (v >> 32) + (v & 0xffffffffu);
	}
	for (; i + 1 < len; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (i < len)
		s += (uint32_t)p[i] << 8;
	c->sum = s;
	c->bytes += len;
}

static uint16_t
fold(uint64_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

uint16_t
mptcp_dss_csum_final(const struct mptcp_csum *c)
{
	return (uint16_t)~fold(c->sum);
}

bool
mptcp_dss_csum_ok(const struct mptcp_csum *c, uint16_t csum)
{
	return fold(c->sum + csum) == 0xffff;
}

uint16_t
mptcp_dss_csum(uint64_t dsn, uint32_t ssn, uint16_t data_len,
	       const void *data, size_t len)
{
	struct mptcp_csum c;

	mptcp_dss_csum_start(&c, dsn, ssn, data_len);
	mptcp_dss_csum_add(&c, data, len);
	return mptcp_dss_csum_final(&c);
}
