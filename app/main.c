/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluice: EAL arguments, "--", then sluice's own. main() wires ports,
 * lcores, configuration and telemetry to the libraries, then every lcore
 * runs worker_main(); the main lcore also does the control work.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_pdump.h>

#include "app.h"
#include "control.h"
#include "log.h"
#include "stages.h"
#include "version.h"

struct sl_app sl_app;

#define EXIT_CONFIG 2

/* " sluice.main sluice.config ...", from the one list in log.h. */
#define SL_LOG_TYPE_NAME(c) " sluice." #c

static void
usage(FILE *out, const char *prog)
{
	fprintf(out,
"Usage: %s [EAL options] -- [options]\n"
"\n"
"sluice: a DPDK middlebox for mobile TCP. Ports are paired in order: port 2k\n"
"faces subscribers, port 2k+1 the internet; a frame received on one leaves on\n"
"the other unless a stage consumes or answers it. With no configuration it is\n"
"a transparent bridge.\n"
"\n"
"Options:\n"
"  -c, --config FILE   INI configuration (see config/sluice.ini)\n"
"      --idle-exit MS  exit once no port has received anything for MS ms and\n"
"                      every queue has drained\n"
"      --config-keys   print every configuration key with its default, kind,\n"
"                      range, whether a reload may change it, and a one-line\n"
"                      doc, then exit (the files of config/ document the same)\n"
"  -h, --help          this text\n"
"  -V, --version       print the version\n"
"\n"
"Logs: one DPDK log type per component, info by default; set them with the\n"
"EAL option, e.g. --log-level=sluice.aqm:debug or --log-level='sluice.*:warning'.\n"
"Types:" SL_LOG_COMPONENTS(SL_LOG_TYPE_NAME) "\n"
"\n"
"Example (two pcap files, bridged):\n"
"  %s --no-huge -m 512 --no-pci -l 0 \\\n"
"     --vdev net_pcap0,rx_pcap=in0.pcap,tx_pcap=out0.pcap \\\n"
"     --vdev net_pcap1,rx_pcap=in1.pcap,tx_pcap=out1.pcap -- --idle-exit 500\n",
		prog, prog);
}

struct opts {
	const char *config;
	uint64_t idle_exit_ms;
};

/* Returns -1 on error (exit 2), 0 to go on, 1 when help/version was shown. */
static int
parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "idle-exit", required_argument, NULL, 'i' },
		{ "config-keys", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config = optarg;
			break;
		case 'i': {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(optarg, &end, 10);
			if (errno || *end || optarg[0] == '-' || v == 0 ||
			    v > 86400000ULL) {
				SL_LOG(main, ERR, "sluice: --idle-exit: '%s' is not a time in milliseconds (1..86400000)",
				       optarg);
				return -1;
			}
			o->idle_exit_ms = v;
			break;
		}
		case 'k':
			sl_config_print_keys(stdout);
			return 1;
		case 'h':
			usage(stdout, "sluice");
			return 1;
		case 'V':
			printf("sluice %s\n", SLUICE_VERSION_LONG);
			return 1;
		case ':':
			SL_LOG(main, ERR, "sluice: option '%s' needs a value",
			       argv[optind - 1]);
			return -1;
		default:
			SL_LOG(main, ERR, "sluice: unknown option '%s' (try --help)",
			       argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		SL_LOG(main, ERR, "sluice: unexpected argument '%s'", argv[optind]);
		return -1;
	}
	return 0;
}

static void
on_signal(int sig)
{
	if (sig == SIGHUP)
		sl_control.reload = true;
	else
		sl_control.stop = true;
}

static int
build_workers(char *err, size_t errlen)
{
	unsigned lcore, i = 0;
	uint64_t hz = rte_get_tsc_hz();

	RTE_LCORE_FOREACH(lcore) {
		struct worker *w = rte_zmalloc_socket("worker", sizeof(*w),
				RTE_CACHE_LINE_SIZE, (int)rte_lcore_to_socket_id(lcore));
		if (w == NULL) {
			snprintf(err, errlen, "out of memory for worker %u", i);
			return -1;
		}
		w->index = i;
		w->lcore = lcore;
		w->is_main = lcore == rte_get_main_lcore();
		w->cfg = &sl_app.cfg;
		w->stage_cycles = sl_app.cfg.stage_cycles;
		w->nb_ports = sl_app.nb_ports;
		w->txq = (uint16_t)i;
		w->tsc_hz = hz;
		w->ns_mult = (uint64_t)(((unsigned __int128)1000000000ULL << 32) / hz);
		sl_app.workers[i++] = w;
	}
	sl_app.nb_workers = i;
	return 0;
}

/*
 * [sluice] rss: whether every port spreads by subscriber (sl_app.steer),
 * and IPv6 by /64 too (sl_app.steer_v6). auto takes it where every port
 * can; subscriber takes it anyway, and a port that cannot hash so is
 * trusted to receive its traffic split that way already (a lab's
 * generator, IPv6 by /64 too), with a warning. IPv6 goes by /64 where
 * every port that hashes by subscriber can hash the /64.
 */
static void
choose_steer(void)
{
	bool all = true, v6 = true;

	sl_app.steer = sl_app.steer_v6 = false;
	if (sl_app.nb_workers < 2 || sl_app.cfg.rss == SL_RSS_FLOW)
		return;
	for (uint16_t p = 0; p < sl_app.nb_ports; p++) {
		bool pv6;

		if (port_can_steer(p, &pv6)) {
			v6 = v6 && pv6;
			continue;
		}
		all = false;
		if (sl_app.cfg.rss == SL_RSS_SUBSCRIBER)
			SL_LOG(main, WARNING,
			       "sluice: port %u cannot hash on one IPv4 address (RSS L3_SRC_ONLY/L3_DST_ONLY): rss = subscriber takes its rx queues as split by subscriber already",
			       p);
	}
	if (sl_app.cfg.rss == SL_RSS_AUTO)
		SL_LOG(main, INFO, "sluice: rss = auto: %s", all ? "by subscriber, every port can" :
		       "by flow, not every port can hash on one address");
	sl_app.steer = sl_app.cfg.rss == SL_RSS_SUBSCRIBER || all;
	sl_app.steer_v6 = sl_app.steer && v6;
}

/* Worker i polls rx queue i of every port that has one. */
static void
assign_queues(void)
{
	for (unsigned i = 0; i < sl_app.nb_workers; i++) {
		struct worker *w = sl_app.workers[i];
		for (uint16_t p = 0; p < sl_app.nb_ports; p++) {
			if (i >= sl_app.ports[p].nb_rxq)
				continue;
			w->rxq[w->nb_rxq++] = (struct rxq){
				.port = p, .queue = (uint16_t)i,
				.peer = p ^ 1, .pair = p / 2,
				.upstream = (p & 1) == 0,
			};
		}
	}
}

static int
build_stages(char *err, size_t errlen)
{
	for (unsigned i = 0; i < sl_app.nb_workers; i++) {
		struct worker *w = sl_app.workers[i];
		struct stage_env env = {
			.worker = i,
			.nb_workers = sl_app.nb_workers,
			.socket = (int)rte_lcore_to_socket_id(w->lcore),
			.nb_pairs = sl_app.nb_ports / 2,
			.pool = sl_app.pool,
			.tsc_hz = w->tsc_hz,
			.tx_multiseg = true,
			.steer = sl_app.steer,
			.steer_v6 = sl_app.steer_v6,
		};
		for (uint16_t p = 0; p < sl_app.nb_ports; p++)
			if (!sl_app.ports[p].tx_multiseg)
				env.tx_multiseg = false;
		for (unsigned m = 0; sl_stage_modules[m] != NULL; m++) {
			const struct stage_module *mod = sl_stage_modules[m];
			void *conf = sl_app.cfg.stages ? sl_app.cfg.stages->conf[m]
						       : NULL;
			if (conf == NULL)
				continue;
			env.last = true;
			for (unsigned k = m + 1; sl_stage_modules[k] != NULL; k++)
				if (sl_app.cfg.stages->conf[k] != NULL)
					env.last = false;
			struct stage st = { 0 };
			int rc = mod->create(conf, &env, &st);
			if (rc < 0) {
				snprintf(err, errlen, "stage %s on worker %u: %s",
					 mod->name, i, strerror(-rc));
				return -1;
			}
			w->stage_module[w->nb_stages] = (int)m;
			w->stages[w->nb_stages++] = st;
		}
	}
	return 0;
}

/* The launch call passes one argument to every lcore: find our worker. */
static int
launch_worker(void *unused)
{
	(void)unused;
	unsigned lcore = rte_lcore_id();
	for (unsigned i = 0; i < sl_app.nb_workers; i++)
		if (sl_app.workers[i]->lcore == lcore)
			return worker_main(sl_app.workers[i]);
	return 0;
}

int
main(int argc, char **argv)
{
	struct opts o = { 0 };
	char err[512];
	int rc;

	/* --help / --version and argument errors are answered before the EAL
	 * starts, so they work on any machine. */
	int sep = 0;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			sep = i;
			break;
		}
	if (sep == 0) {
		for (int i = 1; i < argc; i++) {
			if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
				usage(stdout, "sluice");
				return 0;
			}
			if (!strcmp(argv[i], "--config-keys")) {
				sl_config_print_keys(stdout);
				return 0;
			}
			if (!strcmp(argv[i], "--version") || !strcmp(argv[i], "-V")) {
				printf("sluice %s\n", SLUICE_VERSION_LONG);
				return 0;
			}
		}
	} else {
		rc = parse_args(argc - sep, argv + sep, &o);
		if (rc != 0)
			return rc < 0 ? EXIT_CONFIG : 0;
	}

	/* Configuration is read and validated before anything is set up:
	 * a bad file changes nothing and exits 2. */
	sl_config_defaults(&sl_app.cfg);
	if (o.config != NULL &&
	    sl_config_load(&sl_app.cfg, o.config, err, sizeof(err)) < 0) {
		SL_LOG(config, ERR, "sluice: %s", err);
		return EXIT_CONFIG;
	}

	rc = rte_eal_init(sep ? sep : argc, argv);
	if (rc < 0) {
		SL_LOG(main, ERR, "sluice: EAL init failed: %s",
		       rte_strerror(rte_errno));
		return 1;
	}

	sl_config_log(&sl_app.cfg);

	sl_app.nb_ports = rte_eth_dev_count_avail();
	if (sl_app.nb_ports < 2 || sl_app.nb_ports % 2 != 0 ||
	    sl_app.nb_ports > SL_MAX_PORTS) {
		SL_LOG(main, ERR,
		       "sluice: need an even number of ports (2..%u), found %u; "
		       "add ports with -a PCI or --vdev (see --help)",
		       SL_MAX_PORTS, sl_app.nb_ports);
		rte_eal_cleanup();
		return 1;
	}
	if (build_workers(err, sizeof(err)) < 0)
		goto fail;

	/* One pool; its private area carries struct pkt_meta. */
	uint32_t cache = sl_app.cfg.mbuf_cache;
	if (cache > RTE_MEMPOOL_CACHE_MAX_SIZE)
		cache = RTE_MEMPOOL_CACHE_MAX_SIZE;
	sl_app.pool = rte_pktmbuf_pool_create("sluice_mbufs", sl_app.cfg.mbufs,
			cache, PKT_META_PRIV_SIZE, RTE_MBUF_DEFAULT_BUF_SIZE,
			(int)rte_socket_id());
	if (sl_app.pool == NULL) {
		snprintf(err, sizeof(err),
			 "cannot create a pool of %u mbufs: %s (lower [sluice] mbufs or raise -m)",
			 sl_app.cfg.mbufs, rte_strerror(rte_errno));
		goto fail;
	}

	choose_steer();
	for (uint16_t p = 0; p < sl_app.nb_ports; p++) {
		if (port_setup(p, (uint16_t)sl_app.nb_workers,
			       (uint16_t)sl_app.nb_workers, sl_app.pool,
			       &sl_app.cfg, sl_app.steer, sl_app.steer_v6,
			       &sl_app.ports[p], err, sizeof(err)) < 0)
			goto fail;
		const struct port_info *pi = &sl_app.ports[p];
		SL_LOG(main, INFO, "sluice: port %u (%s) faces %s: %u rx / %u tx queues, mtu %u%s%s%s",
		       p, pi->driver, p % 2 ? "internet" : "subscribers",
		       pi->nb_rxq, pi->nb_txq, pi->mtu,
		       pi->steer_v6 ? ", RSS by subscriber (IPv6 by /64)" :
		       pi->steer ? ", RSS by subscriber (IPv4)" : pi->rss ? ", symmetric RSS" : "",
		       pi->scatter ? ", scatter" : "",
		       pi->nb_kick_fd && sl_app.cfg.tx_kick_us ? ", TX ring kicked when idle" : "");
		if (sl_app.steer && pi->nb_rxq < sl_app.nb_workers) {
			snprintf(err, sizeof(err),
				 "[sluice] rss = subscriber: port %u (%s) has %u rx queues for %u workers",
				 p, pi->driver, pi->nb_rxq, sl_app.nb_workers);
			goto fail;
		}
	}
	assign_queues();
	/* Worker i kicks the socket of its tx queue i ([sluice] tx_kick_us). */
	for (unsigned i = 0; i < sl_app.nb_workers; i++)
		for (uint16_t p = 0; p < sl_app.nb_ports; p++) {
			const struct port_info *pi = &sl_app.ports[p];

			sl_app.workers[i]->kick[p].fd = i < pi->nb_kick_fd ? pi->kick_fd[i] : -1;
		}
	if (build_stages(err, sizeof(err)) < 0)
		goto fail;

	/* dpdk-dumpcap attaches as a secondary process; needs shared memory
	 * (hugepages), so this is best-effort under --no-huge. */
	if (rte_pdump_init() < 0)
		SL_LOG(main, WARNING, "sluice: packet capture (pdump) unavailable: %s",
		       rte_strerror(rte_errno));
	(void)telemetry_register(); /* names each failure itself */

	sl_control.workers = sl_app.workers;
	sl_control.nb_workers = sl_app.nb_workers;
	sl_control.idle_exit_ns = o.idle_exit_ms * 1000000ULL;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);

	sl_app.pool_baseline = rte_mempool_in_use_count(sl_app.pool);
	SL_LOG(main, INFO, "sluice %s: %u worker(s), %u port pair(s)%s%s",
	       SLUICE_VERSION_LONG,
	       sl_app.nb_workers, sl_app.nb_ports / 2,
	       sl_app.cfg.path[0] ? ", config " : ", built-in defaults (bridge)",
	       sl_app.cfg.path);

	const struct stage_module *active[SL_MAX_STAGES];
	unsigned nb_active = 0;
	for (unsigned m = 0; sl_stage_modules[m] != NULL && nb_active < SL_MAX_STAGES; m++)
		if (sl_app.cfg.stages != NULL && sl_app.cfg.stages->conf[m] != NULL)
			active[nb_active++] = sl_stage_modules[m];
	if (ctl_thread_start(active, nb_active) < 0)
		SL_LOG(control, WARNING, "sluice: no control thread: SIGHUP reloads are off");

	uint64_t t0 = worker_now_ns(sl_app.workers[0]);
	rte_eal_mp_remote_launch(launch_worker, NULL, CALL_MAIN);
	rte_eal_mp_wait_lcore();
	uint64_t t1 = worker_now_ns(sl_app.workers[0]);
	ctl_thread_stop();

	for (uint16_t p = 0; p < sl_app.nb_ports; p++)
		for (uint16_t q = 0; q < sl_app.ports[p].nb_txq; q++)
			(void)rte_eth_tx_done_cleanup(p, q, 0);
	report_counters(stdout);
	printf("elapsed_ns=%llu\n", (unsigned long long)(t1 - t0));
	unsigned in_use = rte_mempool_in_use_count(sl_app.pool);
	printf("mempool in_use=%u baseline=%u%s\n", in_use,
	       sl_app.pool_baseline,
	       in_use > sl_app.pool_baseline ? " LEAK" : "");
	fflush(stdout);

	/* Nothing that telemetry reads may go away while a query runs. */
	telemetry_close();
	for (uint16_t p = 0; p < sl_app.nb_ports; p++) {
		(void)rte_eth_dev_stop(p);
		(void)rte_eth_dev_close(p);
	}
	rte_pdump_uninit();
	sl_config_free(&sl_app.cfg);
	rte_eal_cleanup();
	return 0;
fail:
	SL_LOG(main, ERR, "sluice: %s", err);
	rte_eal_cleanup();
	return 1;
}
