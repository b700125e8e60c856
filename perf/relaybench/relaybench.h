/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RELAYBENCH_H
#define RELAYBENCH_H

/*
 * What relaybench.c and its MPTCP client (mp_client.c) share: the byte
 * pattern the sender writes, and the client's state.
 */

#include <stdbool.h>
#include <stdint.h>

#include "tcp.h"

/* The stream's byte at offset i (from 0). */
static inline uint8_t
pattern(uint64_t i)
{
	return (uint8_t)((i * 131u) ^ (i >> 9) ^ (i >> 17));
}

#define MP_MAPS 4096 /* P's mappings held until read */

/* One mapping P sent: subflow bytes [ssn, ssn + len) (relative to P's
 * ISN) are data-level bytes [dsn, dsn + len). */
struct mp_map {
	uint64_t dsn;
	uint32_t ssn, len;
};

/* C's MPTCP (--mptcp): one subflow, its lib/tcp hooks (mp_client_hooks,
 * owner the struct) and the data level. */
struct mp_client {
	uint32_t iss, irs;        /* the subflow's initial sequence numbers */
	uint64_t key_p;           /* P's key, from its SYN-ACK */
	uint64_t snd_base;        /* DSN of C's first byte: its IDSN + 1 */
	uint64_t rcv_base;        /* DSN of P's first byte */
	bool capable;             /* P's SYN-ACK carried MP_CAPABLE */
	bool keys_sent;           /* both keys went out (third ACK) */
	/* Sending. */
	uint64_t snd_total;       /* bytes C sends (its DATA_FIN follows) */
	uint64_t snd_una;         /* P's DATA_ACK */
	uint64_t fin_dsn;         /* C's DATA_FIN, once fin_due */
	bool fin_due, fin_acked;
	/* Receiving: P's mappings in subflow order, a ring of absolute
	 * indices: from map_head on not wholly read yet, from map_ack on
	 * not wholly below the subflow's ACK yet, up to map_tail. */
	struct mp_map map[MP_MAPS];
	uint32_t map_head, map_ack, map_tail;
	uint32_t map_end;         /* subflow sequence after the last mapping */
	uint32_t read_ssn;        /* subflow sequence of the next byte read */
	uint64_t rcv_nxt;         /* the DATA_ACK: next DSN not held in order */
	uint64_t read_nxt;        /* next DSN the application has not read */
	uint64_t ack_sent;        /* the DATA_ACK last sent */
	uint64_t peer_fin_dsn;    /* P's DATA_FIN, once peer_fin */
	bool peer_fin;
	/* Why C cannot go on as an MPTCP client (NULL: all well). */
	const char *bad;
	/* Figures: P's segments with a DSS, P's mappings, C's DSSes. */
	uint64_t dss_in, maps_in, dss_out;
};

/* The hooks of C's subflow (tcp_connect_hooked(), owner the client). */
extern const struct tcp_conn_hooks mp_client_hooks;

/* Before the SYN, on a zeroed client: its key and what derives from it,
 * and the bytes C will send (0: none, it receives). */
void mp_client_init(struct mp_client *m, uint64_t snd_total);

/*
 * Bytes C's application read from the subflow, in subflow order: each
 * is checked against pattern() at its data-level offset (*bad_at: the
 * first that differed, + 1). Returns the data-level bytes read in order.
 */
uint64_t mp_client_read(struct mp_client *m, const uint8_t *buf, uint32_t n,
			uint64_t *bad_at);

/*
 * Whether C closes its subflow now: once it read P's DATA_FIN. The FIN
 * then carries the DATA_ACK of it, and C's own DATA_FIN if not sent yet
 * (at data-level offset written).
 */
bool mp_client_closing(struct mp_client *m, uint64_t written);

#endif /* RELAYBENCH_H */
