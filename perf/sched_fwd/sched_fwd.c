/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The sluice authors
 */

/*
 * sched_fwd: the DPDK rte_sched (RED) contender of `perf/bench.sh aqm`.
 *
 * A run-to-completion forwarder on one lcore, laid out like sluice: ports
 * are paired in order, port 2k faces subscribers and port 2k+1 the
 * internet, and a packet received on one port of a pair leaves on the
 * other. Every output port has its own rte_sched port (one subport, one
 * pipe per subscriber, plus one default pipe for addresses in no
 * subscriber's prefix and for non-IPv4 frames). Each loop iteration:
 *
 *   rx burst -> classify (subport 0, pipe = subscriber row, TC best-effort,
 *   queue = 5-tuple hash % 4) -> rte_sched_port_enqueue (RED per TC and
 *   colour) -> rte_sched_port_dequeue -> tx burst.
 *
 * The subscriber table is sluice's CSV (prefix,down,up[,profile]); IPv4
 * prefixes only. Row i is pipe i, with tb_rate and the best-effort TC rate
 * equal to the row's rate (down for traffic leaving a subscriber port, up
 * for the other direction), so the pipes shape exactly like sluice's.
 * Classification is an rte_lpm lookup on the destination address
 * (downstream) or the source address (upstream), as sluice does.
 *
 *   sched_fwd [EAL args] -- --subscribers FILE [--burst N] [--mbufs N]
 *             [--mbuf-cache N] [--qsize N] [--desc N] [--no-red]
 *
 * Counters: /ethdev/stats (every DPDK app has it) and /sched_fwd/stats
 * on the telemetry socket; SIGINT/SIGTERM stop it with exit status 0 and a
 * one-line summary.
 */

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_lpm.h>
#include <rte_mbuf.h>
#include <rte_sched.h>
#include <rte_telemetry.h>

#define MAX_PORTS 8
#define MAX_BURST 512
#define MAX_PROFILES 256
#define PIPE_TC_PERIOD_MS 10
#define SUBPORT_TC_PERIOD_MS 10
/* rte_sched keeps time in bytes; beyond this its cycles-per-byte figure
 * loses all precision. 100 Tbit/s. */
#define PORT_RATE_MAX (100000ULL * 1000 * 1000 * 1000 / 8)

struct sub {
	uint32_t addr;     /* host order */
	uint8_t depth;
	uint64_t rate[2];  /* bytes/s: [0] down (to subscribers), [1] up */
};

struct opts {
	const char *subs_path;
	unsigned int burst;
	unsigned int mbufs;
	unsigned int mbuf_cache;
	unsigned int qsize;
	unsigned int desc;
	bool red;
};

struct counters {
	uint64_t rx, tx, enq, enq_dropped, tx_dropped, loops, busy_loops;
};

static volatile sig_atomic_t quit;
static struct counters cnt;

static void on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: sched_fwd [EAL args] -- --subscribers FILE [--burst N]\n"
		"       [--mbufs N] [--mbuf-cache N] [--qsize N] [--desc N] [--no-red]\n");
}

static int parse_uint(const char *s, unsigned int lo, unsigned int hi,
		      unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

/* "10gbit", "20mbit", "64kbit", "1.5gbit", "1000000" (bit/s) -> bytes/s */
static int parse_rate(const char *s, uint64_t *bytes_per_s)
{
	char *end;
	double v;
	double mult = 1;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v <= 0)
		return -1;
	if (strcasecmp(end, "kbit") == 0)
		mult = 1e3;
	else if (strcasecmp(end, "mbit") == 0)
		mult = 1e6;
	else if (strcasecmp(end, "gbit") == 0)
		mult = 1e9;
	else if (strcasecmp(end, "bit") != 0 && *end)
		return -1;
	v = v * mult / 8;
	if (v < 1 || v > (double)PORT_RATE_MAX)
		return -1;
	*bytes_per_s = (uint64_t)v;
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Reads the CSV into *subs (malloc'd); returns the row count or -1. */
static int load_subs(const char *path, struct sub **subs)
{
	FILE *f = fopen(path, "r");
	char line[512];
	unsigned int lineno = 0;
	int n = 0, cap = 0;
	struct sub *v = NULL;

	if (f == NULL) {
		fprintf(stderr, "sched_fwd: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char *s = trim(line), *fld[4] = { NULL };
		unsigned int nf = 0, a, b, c, d, depth;
		char tail;
		struct sub e;

		lineno++;
		if (*s == '\0' || *s == '#')
			continue;
		for (char *tok = strtok(s, ","); tok != NULL && nf < 4;
		     tok = strtok(NULL, ","))
			fld[nf++] = trim(tok);
		if (nf < 3)
			goto bad;
		if (strcasecmp(fld[0], "prefix") == 0)
			continue; /* header */
		if (strchr(fld[0], ':') != NULL)
			continue; /* IPv6: not carried by this benchmark */
		if (sscanf(fld[0], "%u.%u.%u.%u/%u%c", &a, &b, &c, &d, &depth,
			   &tail) != 5 || a > 255 || b > 255 || c > 255 ||
		    d > 255 || depth < 1 || depth > 32)
			goto bad;
		e.addr = a << 24 | b << 16 | c << 8 | d;
		e.depth = (uint8_t)depth;
		if (parse_rate(fld[1], &e.rate[0]) || parse_rate(fld[2], &e.rate[1]))
			goto bad;
		if (n == cap) {
			struct sub *nv;

			cap = cap ? cap * 2 : 1024;
			nv = realloc(v, (size_t)cap * sizeof(*v));
			if (nv == NULL)
				goto oom;
			v = nv;
		}
		v[n++] = e;
	}
	fclose(f);
	*subs = v;
	return n;
bad:
	fprintf(stderr, "sched_fwd: %s:%u: bad subscriber row\n", path, lineno);
	goto fail;
oom:
	fprintf(stderr, "sched_fwd: out of memory\n");
fail:
	fclose(f);
	free(v);
	return -1;
}

static void fill_red(struct rte_sched_cman_params *cm, unsigned int qsize)
{
	/* DPDK's qos_sched example profile, scaled to the queue size: green
	 * 3/4..1, yellow 5/8..1, red 1/2..1 of the queue; maxp 1/10,
	 * wq 1/512. The same for every TC (only best-effort carries
	 * traffic here). */
	uint16_t max_th = (uint16_t)RTE_MIN(qsize, (unsigned int)RTE_RED_MAX_TH_MAX);
	const uint16_t min_th[RTE_COLORS] = {
		(uint16_t)(max_th * 3 / 4), (uint16_t)(max_th * 5 / 8),
		(uint16_t)(max_th / 2),
	};

	memset(cm, 0, sizeof(*cm));
	cm->cman_mode = RTE_SCHED_CMAN_RED;
	for (unsigned int tc = 0; tc < RTE_SCHED_TRAFFIC_CLASSES_PER_PIPE; tc++)
		for (unsigned int col = 0; col < RTE_COLORS; col++) {
			struct rte_red_params *r = &cm->red_params[tc][col];

			r->min_th = min_th[col];
			r->max_th = max_th;
			r->maxp_inv = 10;
			r->wq_log2 = 9;
		}
}

/* One rte_sched port for traffic leaving `port`; dir 0 = downstream. */
static struct rte_sched_port *
make_sched(uint16_t port, int dir, const struct sub *subs, uint32_t nsubs,
	   uint32_t npipes, const struct opts *o)
{
	static struct rte_sched_pipe_params prof[MAX_PROFILES];
	static struct rte_sched_cman_params cman;
	struct rte_sched_subport_profile_params sp_prof;
	struct rte_sched_subport_params sp;
	struct rte_sched_port_params pp;
	struct rte_sched_port *sp_port;
	uint32_t nprof = 0, pipe_prof[1], default_prof;
	uint64_t sum = 0;
	char name[32];
	int rc;

	/* Distinct rates -> pipe profiles; the default pipe gets the
	 * fastest one (it carries nothing in the benchmark). */
	uint64_t maxrate = 1;
	for (uint32_t i = 0; i < nsubs; i++) {
		uint64_t r = subs[i].rate[dir];
		uint32_t k;

		sum += r;
		maxrate = RTE_MAX(maxrate, r);
		for (k = 0; k < nprof; k++)
			if (prof[k].tb_rate == r)
				break;
		if (k < nprof)
			continue;
		if (nprof == MAX_PROFILES) {
			fprintf(stderr, "sched_fwd: more than %u distinct rates\n",
				MAX_PROFILES);
			return NULL;
		}
		memset(&prof[k], 0, sizeof(prof[k]));
		prof[k].tb_rate = r;
		nprof++;
	}
	if (nprof == 0)
		prof[nprof++].tb_rate = maxrate;
	for (uint32_t k = 0; k < nprof; k++) {
		/* Tokens for 1 ms at the pipe rate, at least one full frame:
		 * no long bursts, as sluice's shaper has none either. */
		prof[k].tb_size = RTE_MAX(prof[k].tb_rate / 1000, (uint64_t)3000);
		prof[k].tc_rate[RTE_SCHED_TRAFFIC_CLASS_BE] = prof[k].tb_rate;
		prof[k].tc_period = PIPE_TC_PERIOD_MS;
		prof[k].tc_ov_weight = 1;
		for (unsigned int q = 0; q < RTE_SCHED_BE_QUEUES_PER_PIPE; q++)
			prof[k].wrr_weights[q] = 1;
	}
	sum += maxrate; /* the default pipe */
	/* rte_sched keeps time as (tsc cycles << 8) / rate per byte and
	 * fails below 1; keep that figure >= 16 (6% steps at most). For a
	 * 2.6 GHz TSC, the cap is 333 Gbit/s per port, far above what one
	 * core forwards; pipe rates are unaffected. */
	sum = RTE_MIN(sum, RTE_MIN(PORT_RATE_MAX, (rte_get_tsc_hz() << 8) / 16));
	if (maxrate > sum) {
		fprintf(stderr, "sched_fwd: pipe rate %" PRIu64 " B/s is above what rte_sched can keep time for (%" PRIu64 " B/s)\n",
			maxrate, sum);
		return NULL;
	}

	memset(&sp_prof, 0, sizeof(sp_prof));
	sp_prof.tb_rate = sum;
	sp_prof.tb_size = RTE_MAX(sum / 1000, (uint64_t)3000);
	for (unsigned int tc = 0; tc < RTE_SCHED_TRAFFIC_CLASSES_PER_PIPE; tc++)
		sp_prof.tc_rate[tc] = sum;
	sp_prof.tc_period = SUBPORT_TC_PERIOD_MS;

	snprintf(name, sizeof(name), "sched_port%u", port);
	memset(&pp, 0, sizeof(pp));
	pp.name = name;
	pp.socket = rte_eth_dev_socket_id(port);
	if (pp.socket < 0) /* vdevs may have no socket */
		pp.socket = (int)rte_socket_id();
	pp.rate = sum;
	pp.mtu = 1500;
	pp.frame_overhead = 0; /* sluice's default profile counts none */
	pp.n_subports_per_port = 1;
	pp.subport_profiles = &sp_prof;
	pp.n_subport_profiles = 1;
	pp.n_max_subport_profiles = 1;
	pp.n_pipes_per_subport = npipes;
	sp_port = rte_sched_port_config(&pp);
	if (sp_port == NULL) {
		fprintf(stderr, "sched_fwd: rte_sched_port_config(port %u) failed\n", port);
		return NULL;
	}

	memset(&sp, 0, sizeof(sp));
	sp.n_pipes_per_subport_enabled = npipes;
	/* Only the best-effort TC is used (4 queues, WRR); strict-priority
	 * TCs of size 0 are disabled, which is the cheapest setup. */
	sp.qsize[RTE_SCHED_TRAFFIC_CLASS_BE] = (uint16_t)o->qsize;
	sp.pipe_profiles = prof;
	sp.n_pipe_profiles = nprof;
	sp.n_max_pipe_profiles = nprof;
	if (o->red) {
		fill_red(&cman, o->qsize);
		sp.cman_params = &cman;
	}
	rc = rte_sched_subport_config(sp_port, 0, &sp, 0);
	if (rc != 0) {
		fprintf(stderr, "sched_fwd: rte_sched_subport_config: %s\n",
			strerror(-rc));
		goto fail;
	}
	/* A profile id per pipe: the index of its rate. */
	default_prof = 0;
	for (uint32_t k = 0; k < nprof; k++)
		if (prof[k].tb_rate == maxrate)
			default_prof = k;
	for (uint32_t p = 0; p < npipes; p++) {
		pipe_prof[0] = default_prof;
		if (p < nsubs)
			for (uint32_t k = 0; k < nprof; k++)
				if (prof[k].tb_rate == subs[p].rate[dir])
					pipe_prof[0] = k;
		rc = rte_sched_pipe_config(sp_port, 0, p, (int32_t)pipe_prof[0]);
		if (rc != 0) {
			fprintf(stderr, "sched_fwd: rte_sched_pipe_config(%u): %s\n",
				p, strerror(-rc));
			goto fail;
		}
	}
	return sp_port;
fail:
	rte_sched_port_free(sp_port);
	return NULL;
}

static int port_setup(uint16_t port, struct rte_mempool *pool,
		      const struct opts *o)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info di;
	uint16_t nrx = (uint16_t)o->desc, ntx = (uint16_t)o->desc;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_info_get(port, &di);
	if (rc == 0)
		rc = rte_eth_dev_configure(port, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nrx, &ntx);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(port, 0, nrx,
					    rte_eth_dev_socket_id(port),
					    &di.default_rxconf, pool);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(port, 0, ntx,
					    rte_eth_dev_socket_id(port),
					    &di.default_txconf);
	if (rc == 0)
		rc = rte_eth_dev_start(port);
	if (rc != 0) {
		fprintf(stderr, "sched_fwd: port %u setup: %s\n", port,
			strerror(rc < 0 ? -rc : rc));
		return -1;
	}
	(void)rte_eth_promiscuous_enable(port);
	return 0;
}

static int tel_stats(const char *cmd, const char *params,
		     struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "rx", cnt.rx);
	rte_tel_data_add_dict_u64(d, "tx", cnt.tx);
	rte_tel_data_add_dict_u64(d, "enqueued", cnt.enq);
	rte_tel_data_add_dict_u64(d, "enqueue_dropped", cnt.enq_dropped);
	rte_tel_data_add_dict_u64(d, "tx_dropped", cnt.tx_dropped);
	rte_tel_data_add_dict_u64(d, "loops", cnt.loops);
	rte_tel_data_add_dict_u64(d, "busy_loops", cnt.busy_loops);
	return 0;
}

/* Subport 0, pipe, TC best-effort, queue: the classifier. */
static inline void classify(struct rte_sched_port *sp, const struct rte_lpm *lpm,
			    struct rte_mbuf *m, int dir, uint32_t default_pipe)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	uint32_t pipe = default_pipe, queue = 0;

	if (likely(eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) &&
		   m->data_len >= sizeof(*eth) + sizeof(struct rte_ipv4_hdr) + 4)) {
		const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eth + 1);
		uint32_t src = rte_be_to_cpu_32(ip->src_addr);
		uint32_t dst = rte_be_to_cpu_32(ip->dst_addr);
		uint32_t ports = 0, h, hop;

		if ((ip->next_proto_id == IPPROTO_TCP ||
		     ip->next_proto_id == IPPROTO_UDP) &&
		    (ip->fragment_offset & rte_cpu_to_be_16(RTE_IPV4_HDR_OFFSET_MASK)) == 0)
			memcpy(&ports, (const uint8_t *)ip + rte_ipv4_hdr_len(ip),
			       sizeof(ports));
		if (rte_lpm_lookup(lpm, dir == 0 ? dst : src, &hop) == 0)
			pipe = hop;
		h = src ^ dst ^ ports ^ ip->next_proto_id;
		h ^= h >> 16;
		h ^= h >> 8;
		queue = h & (RTE_SCHED_BE_QUEUES_PER_PIPE - 1);
	}
	rte_sched_port_pkt_write(sp, m, 0, pipe, RTE_SCHED_TRAFFIC_CLASS_BE,
				 queue, RTE_COLOR_GREEN);
}

/*
 * The forwarding loop, until SIGINT or SIGTERM: rx, classify, enqueue into
 * the output port's scheduler, dequeue, tx. A function of its own so that
 * perf/bench.sh --instructions can count its instructions alone
 * (valgrind --toggle-collect=forward_loop), without the start-up.
 */
static __attribute__((noinline)) void
forward_loop(struct rte_sched_port **sched, const struct rte_lpm *lpm,
	     uint16_t nports, unsigned int burst, uint32_t nsubs)
{
	struct rte_mbuf *pkts[MAX_BURST];
	uint16_t p;

	while (!quit) {
		bool busy = false;

		for (p = 0; p < nports; p++) {
			uint16_t out = p ^ 1;
			uint16_t n = rte_eth_rx_burst(p, 0, pkts, (uint16_t)burst);
			int en;

			if (n == 0)
				continue;
			busy = true;
			cnt.rx += n;
			for (uint16_t i = 0; i < n; i++)
				classify(sched[out], lpm, pkts[i], out % 2,
					 nsubs);
			en = rte_sched_port_enqueue(sched[out], pkts, n);
			cnt.enq += (uint64_t)en;
			cnt.enq_dropped += n - (uint64_t)en;
		}
		for (p = 0; p < nports; p++) {
			int n = rte_sched_port_dequeue(sched[p], pkts, burst);
			uint16_t sent;

			if (n <= 0)
				continue;
			busy = true;
			sent = rte_eth_tx_burst(p, 0, pkts, (uint16_t)n);
			cnt.tx += sent;
			if (unlikely(sent < n)) {
				cnt.tx_dropped += (uint64_t)(n - sent);
				rte_pktmbuf_free_bulk(&pkts[sent], (unsigned int)(n - sent));
			}
		}
		cnt.loops++;
		cnt.busy_loops += busy;
	}
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "subscribers", required_argument, NULL, 's' },
		{ "burst", required_argument, NULL, 'b' },
		{ "mbufs", required_argument, NULL, 'm' },
		{ "mbuf-cache", required_argument, NULL, 'c' },
		{ "qsize", required_argument, NULL, 'q' },
		{ "desc", required_argument, NULL, 'd' },
		{ "no-red", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = {
		.burst = 32, .mbufs = 16383, .mbuf_cache = 256, .qsize = 64,
		.desc = 1024, .red = true,
	};
	struct rte_sched_port *sched[MAX_PORTS] = { NULL };
	struct rte_lpm_config lc;
	struct rte_mempool *pool;
	struct rte_lpm *lpm;
	struct sub *subs = NULL;
	uint16_t nports, p;
	uint32_t npipes;
	int nsubs, rc, opt;

	rc = rte_eal_init(argc, argv);
	if (rc < 0) {
		fprintf(stderr, "sched_fwd: EAL init failed\n");
		return 2;
	}
	argc -= rc;
	argv += rc;
	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (opt) {
		case 's':
			o.subs_path = optarg;
			break;
		case 'b':
			if (parse_uint(optarg, 1, MAX_BURST, &o.burst))
				goto misuse;
			break;
		case 'm':
			if (parse_uint(optarg, 1023, 16777215, &o.mbufs))
				goto misuse;
			break;
		case 'c':
			if (parse_uint(optarg, 0, 512, &o.mbuf_cache))
				goto misuse;
			break;
		case 'q':
			if (parse_uint(optarg, 4, 32768, &o.qsize) ||
			    !rte_is_power_of_2(o.qsize))
				goto misuse;
			break;
		case 'd':
			if (parse_uint(optarg, 64, 32768, &o.desc))
				goto misuse;
			break;
		case 'R':
			o.red = false;
			break;
		case 'h':
			usage();
			return 0;
		default:
			goto misuse;
		}
	}
	if (o.subs_path == NULL || optind != argc)
		goto misuse;

	nports = rte_eth_dev_count_avail();
	if (nports < 2 || nports % 2 || nports > MAX_PORTS) {
		fprintf(stderr, "sched_fwd: want an even number of ports, 2..%d (have %u)\n",
			MAX_PORTS, nports);
		return 2;
	}
	nsubs = load_subs(o.subs_path, &subs);
	if (nsubs < 0)
		return 2;
	npipes = rte_align32pow2((uint32_t)nsubs + 1);

	memset(&lc, 0, sizeof(lc));
	lc.max_rules = (uint32_t)nsubs + 1;
	lc.number_tbl8s = RTE_MAX(256u, (uint32_t)nsubs / 4 + 1);
	lpm = rte_lpm_create("sched_fwd_subs", (int)rte_socket_id(), &lc);
	if (lpm == NULL) {
		fprintf(stderr, "sched_fwd: rte_lpm_create failed\n");
		return 1;
	}
	for (int i = 0; i < nsubs; i++)
		if (rte_lpm_add(lpm, subs[i].addr, subs[i].depth, (uint32_t)i) != 0) {
			fprintf(stderr, "sched_fwd: rte_lpm_add failed\n");
			return 1;
		}

	pool = rte_pktmbuf_pool_create("sched_fwd_pool", o.mbufs, o.mbuf_cache, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (pool == NULL) {
		fprintf(stderr, "sched_fwd: mbuf pool: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	for (p = 0; p < nports; p++) {
		if (port_setup(p, pool, &o) != 0)
			return 1;
		/* Port 2k faces subscribers: what leaves it is downstream. */
		sched[p] = make_sched(p, p % 2, subs, (uint32_t)nsubs, npipes, &o);
		if (sched[p] == NULL)
			return 1;
	}
	rte_telemetry_register_cmd("/sched_fwd/stats", tel_stats,
				   "sched_fwd counters: rx, tx, enqueued, enqueue_dropped, tx_dropped, loops, busy_loops");
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("sched_fwd: %u ports, %d subscribers, %u pipes per port, qsize %u, %s, burst %u, lcore %u\n",
	       nports, nsubs, npipes, o.qsize, o.red ? "RED" : "tail drop",
	       o.burst, rte_lcore_id());
	fflush(stdout);

	forward_loop(sched, lpm, nports, o.burst, (uint32_t)nsubs);

	/* rte_sched's own drop counters (read-and-clear, so only here, on
	 * the lcore that owns the scheduler): RED drops vs full queues. */
	uint64_t red_drops = 0, tc_drops = 0;

	for (p = 0; p < nports; p++) {
		struct rte_sched_subport_stats st;
		uint32_t tc_ov;

		if (rte_sched_subport_read_stats(sched[p], 0, &st, &tc_ov) != 0)
			continue;
		for (unsigned int tc = 0; tc < RTE_SCHED_TRAFFIC_CLASSES_PER_PIPE; tc++) {
			red_drops += st.n_pkts_cman_dropped[tc];
			tc_drops += st.n_pkts_tc_dropped[tc];
		}
	}
	printf("sched_fwd: rx=%" PRIu64 " tx=%" PRIu64 " enqueue_dropped=%" PRIu64
	       " (red=%" PRIu64 " all=%" PRIu64 ") tx_dropped=%" PRIu64
	       " loops=%" PRIu64 " busy_loops=%" PRIu64 "\n",
	       cnt.rx, cnt.tx, cnt.enq_dropped, red_drops, tc_drops,
	       cnt.tx_dropped, cnt.loops, cnt.busy_loops);
	for (p = 0; p < nports; p++) {
		rte_eth_dev_stop(p);
		rte_eth_dev_close(p);
		rte_sched_port_free(sched[p]);
	}
	rte_lpm_free(lpm);
	free(subs);
	rte_eal_cleanup();
	return 0;
misuse:
	usage();
	return 2;
}
