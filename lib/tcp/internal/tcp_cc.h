/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_TCP_CC_H
#define SLUICE_TCP_CC_H

/*
 * Congestion control behind a small ops table. The engine calls on_ack for
 * every ACK that advances SND.UNA outside loss recovery, on_congestion when
 * it enters loss recovery, and on_rto when the retransmission timer
 * expires. Algorithms own cwnd and ssthresh (bytes) in struct tcp_cc and
 * nothing else of the connection, so they can be tested alone.
 */

#include <stdint.h>

struct tcp_cc {
	uint32_t cwnd;       /* bytes */
	uint32_t ssthresh;   /* bytes */
	uint32_t mss;        /* sender MSS, bytes */
	uint32_t ca_acked;   /* NewReno: bytes acked toward the next +1 MSS */
	/* CUBIC (RFC 9438), windows in segments, time in ns. */
	double w_max;        /* window before the last reduction */
	double w_est;        /* Reno-friendly estimate (section 4.3) */
	double k;            /* seconds to return to w_max (eq. 2) */
	double cwnd_epoch;   /* cwnd when the epoch began */
	uint64_t epoch_ns;   /* start of congestion avoidance; 0 = unset */
};

struct tcp_cc_ops {
	const char *name;
	void (*init)(struct tcp_cc *cc, uint32_t mss, uint32_t iw);
	/* acked: bytes newly acknowledged; srtt_ns: smoothed RTT (0 if none) */
	void (*on_ack)(struct tcp_cc *cc, uint32_t acked, uint64_t now_ns,
		       uint64_t srtt_ns);
	/* flight: bytes in flight when loss was detected */
	void (*on_congestion)(struct tcp_cc *cc, uint32_t flight, uint64_t now_ns);
	void (*on_rto)(struct tcp_cc *cc, uint32_t flight, uint64_t now_ns);
};

extern const struct tcp_cc_ops tcp_cc_newreno;
extern const struct tcp_cc_ops tcp_cc_cubic;

/* RFC 9438 constants. */
#define TCP_CUBIC_C    0.4
#define TCP_CUBIC_BETA 0.7

/* W_cubic(t) of RFC 9438 eq. 1, in segments, t in seconds. */
double tcp_cubic_window(const struct tcp_cc *cc, double t);

#endif /* SLUICE_TCP_CC_H */
