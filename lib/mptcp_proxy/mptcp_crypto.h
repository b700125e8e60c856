/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MPTCP_CRYPTO_H
#define MPTCP_CRYPTO_H

/**
 * @file
 * MPTCP v1 cryptography (RFC 8684): keys, tokens, initial data sequence
 * numbers, the HMACs of MP_JOIN and ADD_ADDR, and the DSS checksum.
 *
 * Keys, tokens, nonces and sequence numbers are host-order integers here;
 * the functions put them on the wire in network order, as the RFC hashes
 * them. Nothing here allocates or keeps state between calls; SHA-256
 * comes from libcrypto's allocation-free low-level interface.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes of an HMAC-SHA256. */
#define MPTCP_HMAC_LEN 32
/** Bytes of the MP_JOIN third ACK's HMAC: the leftmost 160 bits. */
#define MPTCP_JOIN_ACK_HMAC_LEN 20
/** Largest number of token bits that may carry a worker id. */
#define MPTCP_KEY_WORKER_BITS_MAX 12

/**
 * Token and IDSN of a key (RFC 8684 §3.1 and §3.2): SHA-256 over the
 * 64-bit key in network order. The token is the most significant 32 bits
 * of the hash, the IDSN the least significant 64 bits.
 *
 * @param key    the key, host order.
 * @param token  out (may be NULL): the token, host order.
 * @param idsn   out (may be NULL): the initial data sequence number.
 */
void mptcp_key_token_idsn(uint64_t key, uint32_t *token, uint64_t *idsn);

/**
 * Callback that says whether a token is already in use by this owner
 * (for example present in its token table). Tokens must be unique among
 * the connections a host holds (RFC 8684 §3.1), so the generator never
 * returns a key whose token this says is taken.
 */
typedef bool (*mptcp_token_taken_fn)(void *arg, uint32_t token);

/** What mptcp_key_generate() must produce. */
struct mptcp_keygen_params {
	/**
	 * Token bits that carry the owning worker, 0..MPTCP_KEY_WORKER_BITS_MAX.
	 * With N bits the token's N least significant bits equal worker_id:
	 * `token & ((1u << N) - 1) == worker_id`. A worker that receives an
	 * MP_JOIN SYN reads the owner straight from the token it carries,
	 * with no shared table. Each extra bit doubles the expected number of
	 * SHA-256 computations per key (2^N on average).
	 */
	unsigned int worker_bits;
	uint32_t worker_id;          /**< < 2^worker_bits */
	mptcp_token_taken_fn taken;  /**< may be NULL: every token is free */
	void *taken_arg;
	/** Candidate keys to try before giving up; 0 means 64 * 2^worker_bits. */
	unsigned int max_tries;
};

/** A generated key and what derives from it. */
struct mptcp_key {
	uint64_t key;
	uint32_t token;
	uint64_t idsn;
};

/**
 * Draw a local key from the CSPRNG (RAND_bytes) whose token is free and
 * carries the worker id.
 *
 * @param p    what to produce.
 * @param out  the key, its token and IDSN.
 * @return 0; -EINVAL for bad parameters; -EIO if the CSPRNG failed;
 *         -EAGAIN if max_tries candidates were all taken.
 */
int mptcp_key_generate(const struct mptcp_keygen_params *p, struct mptcp_key *out);

/**
 * Draw a 32-bit nonce (the random number of MP_JOIN) from the CSPRNG.
 *
 * @return 0, or -EIO if the CSPRNG failed.
 */
int mptcp_nonce_generate(uint32_t *nonce);

/**
 * HMAC-SHA256 (RFC 2104) of a message. Keys longer than 64 bytes are
 * hashed first, as RFC 2104 says.
 */
void mptcp_hmac_sha256(const void *key, size_t key_len,
		       const void *msg, size_t msg_len,
		       uint8_t out[MPTCP_HMAC_LEN]);

/**
 * The MP_JOIN HMAC a host sends (RFC 8684 §3.2): key = its own key then
 * the peer's, message = its own nonce then the peer's. The responder puts
 * the leftmost 64 bits in its SYN/ACK (see mptcp_join_hmac_trunc()), the
 * initiator the leftmost 160 bits in its third ACK.
 *
 * @param key_self    key of the host that sends the HMAC.
 * @param key_peer    key of the other host.
 * @param nonce_self  nonce of the host that sends the HMAC.
 * @param nonce_peer  nonce of the other host.
 */
void mptcp_join_hmac(uint64_t key_self, uint64_t key_peer,
		     uint32_t nonce_self, uint32_t nonce_peer,
		     uint8_t out[MPTCP_HMAC_LEN]);

/** The leftmost 64 bits of mptcp_join_hmac(), as carried in an MP_JOIN SYN/ACK. */
uint64_t mptcp_join_hmac_trunc(uint64_t key_self, uint64_t key_peer,
			       uint32_t nonce_self, uint32_t nonce_peer);

/**
 * The truncated HMAC of an ADD_ADDR (RFC 8684 §3.4.1): key = the
 * sender's key then the receiver's, message = address ID, address (4 or
 * 16 bytes, network order) and port (network order; 0 when the option
 * carries none). The RIGHTMOST 64 bits, unlike MP_JOIN's SYN/ACK, which
 * carries the leftmost (the Linux kernel agrees: test_mptcp_options).
 *
 * @param addr      4 or 16 bytes.
 * @param addr_len  4 or 16.
 * @param port      host order, 0 if absent.
 */
uint64_t mptcp_add_addr_hmac(uint64_t key_sender, uint64_t key_receiver,
			     uint8_t addr_id, const uint8_t *addr,
			     size_t addr_len, uint16_t port);

/**
 * Running ones' complement sum for the DSS checksum, fed in pieces that
 * may have any length (a mapping often spans several segments).
 */
struct mptcp_csum {
	uint64_t sum;    /**< unfolded, of big-endian 16-bit words */
	uint64_t bytes;  /**< bytes added so far: decides byte order of the next */
};

/**
 * Start a DSS checksum with its pseudo header (RFC 8684 §3.3.1): the
 * 64-bit DSN (even when the option carries 32 bits), the 32-bit relative
 * subflow sequence number, the 16-bit data-level length and a zero
 * 16-bit checksum.
 */
void mptcp_dss_csum_start(struct mptcp_csum *c, uint64_t dsn, uint32_t ssn,
			  uint16_t data_len);

/** Add data covered by the mapping, in stream order. */
void mptcp_dss_csum_add(struct mptcp_csum *c, const void *data, size_t len);

/**
 * The checksum to send: the ones' complement of the folded sum, in host
 * order (write it big-endian).
 */
uint16_t mptcp_dss_csum_final(const struct mptcp_csum *c);

/**
 * Whether data received under a mapping matches the checksum it came
 * with: the sum over pseudo header, data and the checksum is all ones.
 */
bool mptcp_dss_csum_ok(const struct mptcp_csum *c, uint16_t csum);

/** mptcp_dss_csum_start/add/final over one contiguous buffer. */
uint16_t mptcp_dss_csum(uint64_t dsn, uint32_t ssn, uint16_t data_len,
			const void *data, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* MPTCP_CRYPTO_H */
