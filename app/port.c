/* SPDX-License-Identifier: BSD-3-Clause */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/if_packet.h>

#include <rte_ethdev.h>

#include "log.h"
#include "pkt.h"
#include "port.h"

/*
 * With the Toeplitz hash, a key made of one repeated 16-bit pattern gives
 * the same hash for (src, dst, sport, dport) and (dst, src, dport, sport),
 * so both directions of a flow reach the same queue index. 0x6d5a is the
 * pattern from Woo & Park, "Scalable TCP Session Monitoring with Symmetric
 * Receive-side Scaling".
 */
#define K2 0x6d, 0x5a
#define K10 K2, K2, K2, K2, K2
const uint8_t port_rss_key[PORT_RSS_KEY_LEN] = { K10, K10, K10, K10, K10, K2 };
#undef K10
#undef K2

/* The largest redirection table written (ice has 2048 entries). */
#define STEER_RETA_MAX 4096

/* The hash types that steer by one address (src on 2k, dst on 2k+1). */
#define STEER_TYPES (RTE_ETH_RSS_L3_SRC_ONLY | RTE_ETH_RSS_L3_DST_ONLY)

unsigned
port_steer_queue(const uint8_t addr[4], unsigned nb_queues)
{
	return (pkt_rss_hash(port_rss_key, addr, 4) % PORT_STEER_SPAN) % nb_queues;
}

unsigned
port_steer_queue_v6(const uint8_t addr[16], unsigned nb_queues)
{
	return (pkt_rss_hash(port_rss_key, addr, 8) % PORT_STEER_SPAN) % nb_queues;
}

/* What di's port can steer by: IPv4 by one address (true), and with it
 * IPv6 by that address's /64 (*v6). */
static bool
steer_caps(const struct rte_eth_dev_info *di, bool *v6)
{
	const uint64_t t = di->flow_type_rss_offloads;
	bool v4 = (t & STEER_TYPES) == STEER_TYPES && (t & RTE_ETH_RSS_IPV4) != 0 &&
		  di->reta_size >= PORT_STEER_SPAN && di->reta_size <= STEER_RETA_MAX &&
		  di->reta_size % RTE_ETH_RETA_GROUP_SIZE == 0;

	*v6 = v4 && (t & RTE_ETH_RSS_L3_PRE64) != 0 && (t & RTE_ETH_RSS_IPV6) != 0;
	return v4;
}

bool
port_can_steer(uint16_t port, bool *v6)
{
	struct rte_eth_dev_info di;

	*v6 = false;
	if (rte_eth_dev_info_get(port, &di) != 0)
		return false;
	return steer_caps(&di, v6);
}

/* Entry i of the redirection table to queue (i mod span) mod nb_rxq, so
 * that a hash's queue is port_steer_queue()'s whatever the table's size. */
static int
steer_reta(uint16_t port, uint16_t reta_size, uint16_t nb_rxq)
{
	struct rte_eth_rss_reta_entry64 reta[STEER_RETA_MAX / RTE_ETH_RETA_GROUP_SIZE];

	if (reta_size > STEER_RETA_MAX || reta_size % RTE_ETH_RETA_GROUP_SIZE != 0)
		return -EINVAL;
	memset(reta, 0, sizeof(reta));
	for (uint16_t i = 0; i < reta_size; i++) {
		struct rte_eth_rss_reta_entry64 *g = &reta[i / RTE_ETH_RETA_GROUP_SIZE];

		g->mask |= 1ull << (i % RTE_ETH_RETA_GROUP_SIZE);
		g->reta[i % RTE_ETH_RETA_GROUP_SIZE] = (uint16_t)((i % PORT_STEER_SPAN) % nb_rxq);
	}
	return rte_eth_dev_rss_reta_update(port, reta, reta_size);
}

static int
int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

unsigned
port_afp_sockets(int ifindex, int *fds, unsigned max)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	unsigned n = 0, found = 0;

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		struct sockaddr_ll sll;
		socklen_t len = sizeof(int);
		char *end;
		long fd = strtol(de->d_name, &end, 10);
		int dom = 0;

		if (*de->d_name == '\0' || *end != '\0' || fd < 0 || fd == dirfd(d) ||
		    getsockopt((int)fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) != 0 ||
		    dom != AF_PACKET)
			continue;
		len = sizeof(sll);
		memset(&sll, 0, sizeof(sll));
		if (getsockname((int)fd, (struct sockaddr *)&sll, &len) != 0 ||
		    sll.sll_ifindex != ifindex)
			continue;
		found++;
		if (n < max)
			fds[n++] = (int)fd;
	}
	closedir(d);
	qsort(fds, n, sizeof(*fds), int_cmp);
	return found;
}

/* net_af_packet: its tx queues' sockets, queue q at kick_fd[q], when there
 * is exactly one per tx queue; otherwise none (no kicks, and a warning).
 * None either where the sockets bypass the qdisc (the driver's default,
 * qdisc_bypass=1): the kernel then hands each frame to the device and
 * frees its buffer at once, so the send buffer never fills and nothing
 * is left in the ring for a kick to send. */
static void
afp_kick_fds(uint16_t port, const struct rte_eth_dev_info *di, uint16_t nb_txq,
	     struct port_info *info)
{
	unsigned n;
	int bypass = 0;
	socklen_t len = sizeof(bypass);

	if (strcmp(di->driver_name, "net_af_packet") != 0)
		return;
	n = di->if_index > 0 ?
		port_afp_sockets((int)di->if_index, info->kick_fd, PORT_KICK_FDS) : 0;
	if (n == nb_txq && n <= PORT_KICK_FDS) {
		if (getsockopt(info->kick_fd[0], SOL_PACKET, PACKET_QDISC_BYPASS,
			       &bypass, &len) != 0 || bypass == 0)
			info->nb_kick_fd = (uint16_t)n;
		return;
	}
	SL_LOG(main, WARNING,
	       "sluice: port %u (%s): %u AF_PACKET sockets for %u tx queues: frames the kernel leaves in its TX ring wait for the next burst ([sluice] tx_kick_us is off on this port)",
	       port, di->driver_name, n, nb_txq);
}

int
port_setup(uint16_t port, uint16_t nb_rxq, uint16_t nb_txq,
	   struct rte_mempool *pool, const struct sl_config *cfg, bool steer,
	   bool steer_v6, struct port_info *info, char *err, size_t errlen)
{
	struct rte_eth_dev_info di;
	struct rte_eth_conf conf;
	int rc;

	memset(info, 0, sizeof(*info));
	rc = rte_eth_dev_info_get(port, &di);
	if (rc != 0) {
		snprintf(err, errlen, "port %u: cannot read device info: %s",
			 port, rte_strerror(-rc));
		return -1;
	}
	snprintf(info->driver, sizeof(info->driver), "%s", di.driver_name);
	if (di.max_tx_queues < nb_txq) {
		snprintf(err, errlen,
			 "port %u (%s) has %u tx queues but %u workers need one each; use fewer lcores",
			 port, di.driver_name, di.max_tx_queues, nb_txq);
		return -1;
	}
	if (nb_rxq > di.max_rx_queues)
		nb_rxq = di.max_rx_queues;

	memset(&conf, 0, sizeof(conf));
	if (nb_rxq > 1 && di.flow_type_rss_offloads != 0) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_key = (uint8_t *)(uintptr_t)port_rss_key;
		conf.rx_adv_conf.rss_conf.rss_key_len =
			di.hash_key_size ? di.hash_key_size : 40;
		conf.rx_adv_conf.rss_conf.rss_hf = di.flow_type_rss_offloads &
			(RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP);
		info->rss = true;
		/* By subscriber: one address of every IP packet, the
		 * subscriber's, on both sides of the pair. Only the IP hash
		 * types: with a TCP or UDP type the ports would be hashed
		 * too, and a subscriber's flows spread again. */
		bool v6 = false;

		if (steer && steer_caps(&di, &v6)) {
			conf.rx_adv_conf.rss_conf.rss_hf =
				(di.flow_type_rss_offloads & RTE_ETH_RSS_IP) |
				(port % 2 == 0 ? RTE_ETH_RSS_L3_SRC_ONLY : RTE_ETH_RSS_L3_DST_ONLY);
			info->steer = true;
			/* IPv6: the /64 of that address, where every port
			 * can (a phone's addresses share its /64). A port
			 * that could while another cannot hashes the whole
			 * address, as the workers then place IPv6 pipes. */
			info->steer_v6 = steer_v6 && v6;
			if (info->steer_v6)
				conf.rx_adv_conf.rss_conf.rss_hf |= RTE_ETH_RSS_L3_PRE64;
		}
	}
	if (di.hash_key_size > PORT_RSS_KEY_LEN) {
		snprintf(err, errlen, "port %u (%s): RSS key of %u bytes, sluice has %u",
			 port, di.driver_name, di.hash_key_size, PORT_RSS_KEY_LEN);
		return -1;
	}

	/* Jumbo frames: scatter into chained mbufs where the device can;
	 * otherwise the MTU stays at what one mbuf holds and larger frames
	 * are counted by the device (imissed/ierrors), see README. */
	uint32_t room = rte_pktmbuf_data_room_size(pool) - RTE_PKTMBUF_HEADROOM;
	uint32_t want_mtu = cfg->max_frame > 18 ? cfg->max_frame - 18 : 64;
	if (cfg->max_frame > room) {
		if (di.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER) {
			conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
			info->scatter = true;
		} else {
			want_mtu = room - 18;
		}
	}
	if (di.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) {
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
		info->tx_multiseg = true;
	}
	if (want_mtu > di.max_mtu)
		want_mtu = di.max_mtu;
	/* Some drivers (af_packet) report a large max_mtu but a small
	 * max_rx_pktlen; the frame limit is the one configure enforces. */
	if (di.max_rx_pktlen > 18 && want_mtu > di.max_rx_pktlen - 18)
		want_mtu = di.max_rx_pktlen - 18;
	if (want_mtu < di.min_mtu)
		want_mtu = di.min_mtu;
	conf.rxmode.mtu = want_mtu;

	rc = rte_eth_dev_configure(port, nb_rxq, nb_txq, &conf);
	if (rc != 0) {
		snprintf(err, errlen, "port %u (%s): configure failed: %s",
			 port, di.driver_name, rte_strerror(-rc));
		return -1;
	}
	uint16_t nrx = cfg->rx_desc, ntx = cfg->tx_desc;
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nrx, &ntx);
	if (rc != 0) {
		snprintf(err, errlen, "port %u: descriptor counts: %s", port,
			 rte_strerror(-rc));
		return -1;
	}
	int socket = rte_eth_dev_socket_id(port);
	if (socket < 0)
		socket = 0;
	for (uint16_t q = 0; q < nb_rxq; q++) {
		struct rte_eth_rxconf rxc = di.default_rxconf;
		rxc.offloads = conf.rxmode.offloads;
		rc = rte_eth_rx_queue_setup(port, q, nrx, socket, &rxc, pool);
		if (rc != 0) {
			snprintf(err, errlen, "port %u: rx queue %u: %s", port,
				 q, rte_strerror(-rc));
			return -1;
		}
	}
	for (uint16_t q = 0; q < nb_txq; q++) {
		struct rte_eth_txconf txc = di.default_txconf;
		txc.offloads = conf.txmode.offloads;
		rc = rte_eth_tx_queue_setup(port, q, ntx, socket, &txc);
		if (rc != 0) {
			snprintf(err, errlen, "port %u: tx queue %u: %s", port,
				 q, rte_strerror(-rc));
			return -1;
		}
	}
	rc = rte_eth_dev_start(port);
	if (rc != 0) {
		snprintf(err, errlen, "port %u (%s): start failed: %s", port,
			 di.driver_name, rte_strerror(-rc));
		return -1;
	}
	if (info->steer) {
		rc = steer_reta(port, di.reta_size, nb_rxq);
		if (rc != 0) {
			snprintf(err, errlen, "port %u (%s): redirection table of %u entries: %s",
				 port, di.driver_name, di.reta_size, rte_strerror(-rc));
			return -1;
		}
	}
	afp_kick_fds(port, &di, nb_txq, info);
	/* A bridge must see every frame, whatever its MAC. */
	(void)rte_eth_promiscuous_enable(port);
	info->nb_rxq = nb_rxq;
	info->nb_txq = nb_txq;
	info->mtu = (uint16_t)want_mtu;
	return 0;
}
