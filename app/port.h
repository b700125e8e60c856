/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_APP_PORT_H
#define SLUICE_APP_PORT_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_mempool.h>

#include "config.h"

/** Most tx queues of one port whose kernel socket sluice can kick. */
#define PORT_KICK_FDS 16

/** What port_setup decided, for the log and the tests. */
struct port_info {
	uint16_t nb_rxq;
	uint16_t nb_txq;
	uint16_t mtu;
	bool rss;
	bool steer;        /**< RSS by the subscriber's address (port_can_steer()) */
	bool steer_v6;     /**< ... and IPv6 by its /64 */
	bool scatter;
	bool tx_multiseg;  /**< sends chained mbufs (RTE_ETH_TX_OFFLOAD_MULTI_SEGS) */
	char driver[32];
	/** net_af_packet behind a qdisc (qdisc_bypass=0): the socket of tx
	 * queue q is kick_fd[q] (one per queue pair). nb_kick_fd is 0 for
	 * other drivers, for sockets that bypass the qdisc, and when the
	 * sockets could not be told apart. See port_afp_sockets(). */
	uint16_t nb_kick_fd;
	int kick_fd[PORT_KICK_FDS];
};

/** Bytes of the RSS key (the largest a device may ask for). */
#define PORT_RSS_KEY_LEN 52

/** The symmetric RSS key every port gets (0x6d5a repeated). */
extern const uint8_t port_rss_key[PORT_RSS_KEY_LEN];

/** Steering by subscriber repeats the first this many entries of every
 * port's redirection table. */
#define PORT_STEER_SPAN 64u

/**
 * The rx queue, of nb_queues, that a port steering by subscriber gives
 * the IPv4 address addr (network byte order): (Toeplitz hash of addr mod
 * PORT_STEER_SPAN) mod nb_queues. The aqm stage gives the subscriber's
 * pipes to that worker.
 */
unsigned port_steer_queue(const uint8_t addr[4], unsigned nb_queues);

/**
 * The same for an IPv6 address, on ports that hash only its /64 prefix
 * (RTE_ETH_RSS_L3_PRE64): the Toeplitz hash of its first 8 bytes, which
 * is also that of the whole address with its last 64 bits zeroed (bits
 * that are 0 add nothing to the hash).
 */
unsigned port_steer_queue_v6(const uint8_t addr[16], unsigned nb_queues);

/**
 * Whether a port can hash on one IPv4 address (L3_SRC_ONLY and
 * L3_DST_ONLY, with a redirection table sluice can write, of
 * PORT_STEER_SPAN entries or more); *v6 tells whether it can hash IPv6
 * on that address's /64 too (L3_PRE64).
 */
bool port_can_steer(uint16_t port, bool *v6);

/**
 * Configure and start a port with nb_rxq rx queues (capped at what the
 * device has) and exactly nb_txq tx queues (one per worker).
 * RSS, when more than one rx queue is used, uses a symmetric key so both
 * directions of a flow land on the same queue index on both ports. With
 * steer, a port that can (port_can_steer()) hashes only the subscriber's
 * address: the source on even ports, the destination on odd ones; with
 * steer_v6 too, IPv6 by the /64 of that address where the port can
 * (steer_v6 is for every port: where one cannot, none does).
 * @return 0, or -1 with err filled.
 */
/**
 * The AF_PACKET sockets of this process bound to interface ifindex, in
 * ascending order of descriptor, at most max of them: net_af_packet opens
 * one per queue pair, queue 0 first, when the EAL probes the port, so the
 * order is the queues'. Their sendto() is what the driver calls at the end
 * of every tx burst ([sluice] tx_kick_us).
 * @return how many were found, which may be more than max; at most max
 *         are written to fds.
 */
unsigned port_afp_sockets(int ifindex, int *fds, unsigned max);

int port_setup(uint16_t port, uint16_t nb_rxq, uint16_t nb_txq,
	       struct rte_mempool *pool, const struct sl_config *cfg, bool steer,
	       bool steer_v6, struct port_info *info, char *err, size_t errlen);

#endif
