/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counters for dpdk-telemetry.py under /sluice/. The callbacks run on the
 * telemetry thread and read the workers' counters without locks: each is a
 * 64-bit word written by one lcore, so a read sees an old or new value,
 * never a torn one.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_telemetry.h>

#include "app.h"
#include "log.h"
#include "stages.h"

struct totals {
	uint64_t rx, tx, tx_dropped, non_ip, malformed, dropped_non_ip,
		dropped_malformed, multiseg, dropped_oversize;
	uint64_t malformed_by[PKT_ERR_MAX];
};

static void
sum_totals(struct totals *t)
{
	memset(t, 0, sizeof(*t));
	for (unsigned i = 0; i < sl_app.nb_workers; i++) {
		const struct worker_stats *s = &sl_app.workers[i]->stats;
		for (uint16_t p = 0; p < sl_app.nb_ports; p++) {
			t->rx += s->rx[p];
			t->tx += s->tx[p];
			t->tx_dropped += s->tx_dropped[p];
		}
		t->non_ip += s->non_ip;
		for (int e = 1; e < PKT_ERR_MAX; e++) {
			t->malformed += s->malformed[e];
			t->malformed_by[e] += s->malformed[e];
		}
		t->dropped_non_ip += s->dropped_non_ip;
		t->dropped_malformed += s->dropped_malformed;
		t->multiseg += s->multiseg;
		t->dropped_oversize += s->dropped_oversize;
	}
}

static void
port_counts(uint16_t p, uint64_t *rx, uint64_t *tx, uint64_t *txd, uint64_t *txk)
{
	*rx = *tx = *txd = *txk = 0;
	for (unsigned i = 0; i < sl_app.nb_workers; i++) {
		const struct worker_stats *s = &sl_app.workers[i]->stats;
		*rx += s->rx[p];
		*tx += s->tx[p];
		*txd += s->tx_dropped[p];
		*txk += s->tx_kicked[p];
	}
}

static int
tel_totals(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct totals t;
	(void)cmd;
	(void)params;
	sum_totals(&t);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "rx", t.rx);
	rte_tel_data_add_dict_u64(d, "tx", t.tx);
	rte_tel_data_add_dict_u64(d, "tx_dropped", t.tx_dropped);
	rte_tel_data_add_dict_u64(d, "non_ip", t.non_ip);
	rte_tel_data_add_dict_u64(d, "malformed", t.malformed);
	rte_tel_data_add_dict_u64(d, "dropped_non_ip", t.dropped_non_ip);
	rte_tel_data_add_dict_u64(d, "dropped_malformed", t.dropped_malformed);
	rte_tel_data_add_dict_u64(d, "multiseg", t.multiseg);
	rte_tel_data_add_dict_u64(d, "dropped_oversize", t.dropped_oversize);
	rte_tel_data_add_dict_u64(d, "mempool_in_use",
				  rte_mempool_in_use_count(sl_app.pool));
	rte_tel_data_add_dict_u64(d, "mempool_baseline", sl_app.pool_baseline);
	return 0;
}

static int
tel_malformed(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct totals t;
	(void)cmd;
	(void)params;
	sum_totals(&t);
	rte_tel_data_start_dict(d);
	for (int e = 1; e < PKT_ERR_MAX; e++)
		rte_tel_data_add_dict_u64(d, pkt_err_name(e), t.malformed_by[e]);
	return 0;
}

static int
tel_ports(const char *cmd, const char *params, struct rte_tel_data *d)
{
	long only = -1;

	(void)cmd;
	if (params != NULL && *params != '\0') {
		char *end;

		/* A port index, nothing else: junk is not port 0. */
		errno = 0;
		only = strtol(params, &end, 10);
		if (*params < '0' || *params > '9' || *end != '\0' ||
		    errno != 0 || only >= sl_app.nb_ports)
			return -EINVAL;
	}
	rte_tel_data_start_dict(d);
	for (uint16_t p = 0; p < sl_app.nb_ports; p++) {
		if (only >= 0 && only != p)
			continue;
		struct rte_tel_data *c = rte_tel_data_alloc();
		if (c == NULL)
			return -ENOMEM;
		uint64_t rx, tx, txd, txk;
		struct rte_eth_stats es;
		port_counts(p, &rx, &tx, &txd, &txk);
		rte_tel_data_start_dict(c);
		rte_tel_data_add_dict_string(c, "driver", sl_app.ports[p].driver);
		rte_tel_data_add_dict_string(c, "faces",
					     p % 2 ? "internet" : "subscribers");
		/* What the port's rx queues are spread by ([sluice] rss). */
		rte_tel_data_add_dict_string(c, "rss",
			sl_app.ports[p].nb_rxq < 2 ? "none" :
			sl_app.steer ? "subscriber" : "flow");
		rte_tel_data_add_dict_u64(c, "rx", rx);
		rte_tel_data_add_dict_u64(c, "tx", tx);
		rte_tel_data_add_dict_u64(c, "tx_dropped", txd);
		/* net_af_packet: sends of what the kernel had left in the
		 * port's TX ring ([sluice] tx_kick_us). */
		rte_tel_data_add_dict_u64(c, "tx_kicked", txk);
		if (rte_eth_stats_get(p, &es) == 0) {
			rte_tel_data_add_dict_u64(c, "dev_imissed", es.imissed);
			rte_tel_data_add_dict_u64(c, "dev_ierrors", es.ierrors);
			rte_tel_data_add_dict_u64(c, "dev_rx_nombuf", es.rx_nombuf);
			rte_tel_data_add_dict_u64(c, "dev_oerrors", es.oerrors);
		}
		char name[16];
		snprintf(name, sizeof(name), "%u", p);
		rte_tel_data_add_dict_container(d, name, c, 0);
	}
	return 0;
}

static int
tel_workers(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (unsigned i = 0; i < sl_app.nb_workers; i++) {
		const struct worker *w = sl_app.workers[i];
		const struct worker_stats *s = &w->stats;
		struct rte_tel_data *c = rte_tel_data_alloc();
		if (c == NULL)
			return -ENOMEM;
		uint64_t rx = 0, tx = 0, txd = 0, mal = 0;
		for (uint16_t p = 0; p < sl_app.nb_ports; p++) {
			rx += s->rx[p];
			tx += s->tx[p];
			txd += s->tx_dropped[p];
		}
		for (int e = 1; e < PKT_ERR_MAX; e++)
			mal += s->malformed[e];
		rte_tel_data_start_dict(c);
		rte_tel_data_add_dict_int(c, "lcore", (int)w->lcore);
		rte_tel_data_add_dict_u64(c, "rx", rx);
		rte_tel_data_add_dict_u64(c, "tx", tx);
		rte_tel_data_add_dict_u64(c, "tx_dropped", txd);
		rte_tel_data_add_dict_u64(c, "non_ip", s->non_ip);
		rte_tel_data_add_dict_u64(c, "malformed", mal);
		rte_tel_data_add_dict_u64(c, "loops", s->loops);
		rte_tel_data_add_dict_u64(c, "busy_loops", s->busy_loops);
		rte_tel_data_add_dict_u64(c, "held", w->held);
		char name[16];
		snprintf(name, sizeof(name), "%u", i);
		rte_tel_data_add_dict_container(d, name, c, 0);
	}
	return 0;
}

/* Each worker's instance of stage module m (NULL where it has none).
 * Returns whether any worker has one. */
static bool
module_instances(unsigned m, void **ctxs)
{
	bool present = false;
	for (unsigned i = 0; i < sl_app.nb_workers; i++) {
		const struct worker *w = sl_app.workers[i];
		ctxs[i] = NULL;
		for (unsigned s = 0; s < w->nb_stages; s++)
			if (w->stage_module[s] == (int)m) {
				ctxs[i] = w->stages[s].ctx;
				present = true;
			}
	}
	return present;
}

static int
tel_stage(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const char *name = cmd + strlen("/sluice/");
	for (unsigned m = 0; sl_stage_modules[m] != NULL; m++) {
		const struct stage_module *mod = sl_stage_modules[m];
		if (strcmp(mod->name, name) != 0)
			continue;
		void *ctxs[RTE_MAX_LCORE];
		(void)module_instances(m, ctxs);
		return mod->telemetry(ctxs, sl_app.nb_workers, params, d);
	}
	return -EINVAL;
}

/* Stage s of every worker's stage_time, summed (all workers run the same
 * stages in the same order). */
static void
sum_stage_time(unsigned s, struct stage_time *t)
{
	memset(t, 0, sizeof(*t));
	for (unsigned i = 0; i < sl_app.nb_workers; i++) {
		const struct stage_time *o = &sl_app.workers[i]->stats.stage[s];
		t->bursts += o->bursts;
		t->packets += o->packets;
		t->cycles += o->cycles;
		t->polls += o->polls;
		t->emitted += o->emitted;
		t->poll_cycles += o->poll_cycles;
	}
}

/* "9.12": cycles / packets with two decimals, "-" with no packets. */
static void
per_packet(char *buf, size_t len, uint64_t cycles, uint64_t packets)
{
	if (packets == 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.2f", (double)cycles / (double)packets);
}

static int
tel_stages(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct worker *w0 = sl_app.nb_workers ? sl_app.workers[0] : NULL;
	char buf[32];

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "stage_cycles",
				     sl_app.cfg.stage_cycles ? "on" : "off");
	rte_tel_data_add_dict_u64(d, "tsc_hz", rte_get_tsc_hz());
	for (unsigned s = 0; w0 != NULL && s < w0->nb_stages; s++) {
		struct rte_tel_data *c = rte_tel_data_alloc();
		struct stage_time t;

		if (c == NULL)
			return -ENOMEM;
		sum_stage_time(s, &t);
		rte_tel_data_start_dict(c);
		rte_tel_data_add_dict_u64(c, "bursts", t.bursts);
		rte_tel_data_add_dict_u64(c, "packets", t.packets);
		rte_tel_data_add_dict_u64(c, "cycles", t.cycles);
		per_packet(buf, sizeof(buf), t.cycles, t.packets);
		rte_tel_data_add_dict_string(c, "cycles_per_packet", buf);
		rte_tel_data_add_dict_u64(c, "polls", t.polls);
		rte_tel_data_add_dict_u64(c, "emitted", t.emitted);
		rte_tel_data_add_dict_u64(c, "poll_cycles", t.poll_cycles);
		rte_tel_data_add_dict_container(
			d, sl_stage_modules[w0->stage_module[s]]->name, c, 0);
	}
	return 0;
}

/*
 * Every /sluice/ command goes through one gate, so that shutdown can close
 * it and wait for the callbacks in flight before the workers' memory goes
 * away (DPDK 22.11 cannot unregister a command, and its telemetry thread
 * keeps answering until the process exits). A callback that arrives after
 * the gate closed answers -ESHUTDOWN.
 */
#define SL_TEL_MAX_CMDS 32
static struct {
	char cmd[64];
	telemetry_cb fn;
} tel_cmds[SL_TEL_MAX_CMDS];
static unsigned tel_ncmds;
static uint32_t tel_inflight;
static bool tel_closed;

static int
tel_gate(const char *cmd, const char *params, struct rte_tel_data *d)
{
	telemetry_cb fn = NULL;
	int rc;

	__atomic_add_fetch(&tel_inflight, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&tel_closed, __ATOMIC_SEQ_CST)) {
		for (unsigned i = 0; i < tel_ncmds; i++)
			if (strcmp(tel_cmds[i].cmd, cmd) == 0)
				fn = tel_cmds[i].fn;
	}
	rc = fn != NULL ? fn(cmd, params, d) : -ESHUTDOWN;
	__atomic_sub_fetch(&tel_inflight, 1, __ATOMIC_SEQ_CST);
	return rc;
}

void
telemetry_close(void)
{
	__atomic_store_n(&tel_closed, true, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&tel_inflight, __ATOMIC_SEQ_CST) != 0)
		rte_delay_us_sleep(100);
}

int
telemetry_register_cmd(const char *cmd, telemetry_cb fn, const char *help)
{
	int rc;

	if (tel_ncmds == SL_TEL_MAX_CMDS ||
	    strlen(cmd) >= sizeof(tel_cmds[0].cmd)) {
		SL_LOG(telemetry, WARNING, "sluice: telemetry command %s not registered: table full", cmd);
		return -ENOSPC;
	}
	/* The entry is complete before the command can be called. */
	snprintf(tel_cmds[tel_ncmds].cmd, sizeof(tel_cmds[0].cmd), "%s", cmd);
	tel_cmds[tel_ncmds].fn = fn;
	__atomic_store_n(&tel_ncmds, tel_ncmds + 1, __ATOMIC_RELEASE);
	rc = rte_telemetry_register_cmd(cmd, tel_gate, help);
	if (rc != 0)
		SL_LOG(telemetry, WARNING, "sluice: telemetry command %s not registered: %s", cmd,
		       rte_strerror(-rc));
	else
		SL_LOG(telemetry, DEBUG, "sluice: telemetry: %s registered", cmd);
	return rc;
}

int
telemetry_register(void)
{
	int rc = 0;
	rc |= telemetry_register_cmd("/sluice/totals", tel_totals,
		"Totals over all ports and workers: rx, tx, drops, malformed, mempool use.");
	rc |= telemetry_register_cmd("/sluice/ports", tel_ports,
		"Per-port counters. Parameter: optional port id.");
	rc |= telemetry_register_cmd("/sluice/workers", tel_workers,
		"Per-worker counters.");
	rc |= telemetry_register_cmd("/sluice/malformed", tel_malformed,
		"Malformed frames by reason.");
	rc |= telemetry_register_cmd("/sluice/stages", tel_stages,
		"TSC cycles spent in each stage, summed over workers "
		"([sluice] stage_cycles = on; zeros when off).");
	for (unsigned m = 0; sl_stage_modules[m] != NULL; m++) {
		const struct stage_module *mod = sl_stage_modules[m];
		if (mod->telemetry == NULL)
			continue;
		static char cmds[SL_MAX_STAGES][64];
		snprintf(cmds[m], sizeof(cmds[m]), "/sluice/%s", mod->name);
		rc |= telemetry_register_cmd(cmds[m], tel_stage, mod->telemetry_help);
	}
	return rc;
}

void
report_counters(FILE *out)
{
	struct totals t;
	sum_totals(&t);
	fprintf(out, "sluice: final counters\n");
	for (uint16_t p = 0; p < sl_app.nb_ports; p++) {
		uint64_t rx, tx, txd, txk;
		struct rte_eth_stats es;
		memset(&es, 0, sizeof(es));
		port_counts(p, &rx, &tx, &txd, &txk);
		(void)rte_eth_stats_get(p, &es);
		fprintf(out, "port %u rx=%" PRIu64 " tx=%" PRIu64
			" tx_dropped=%" PRIu64 " dev_imissed=%" PRIu64
			" dev_ierrors=%" PRIu64 " dev_rx_nombuf=%" PRIu64
			" tx_kicked=%" PRIu64 "\n",
			p, rx, tx, txd, es.imissed, es.ierrors, es.rx_nombuf, txk);
	}
	for (unsigned i = 0; i < sl_app.nb_workers; i++) {
		const struct worker *w = sl_app.workers[i];
		fprintf(out, "worker %u lcore=%u loops=%" PRIu64
			" busy_loops=%" PRIu64 "\n", i, w->lcore,
			w->stats.loops, w->stats.busy_loops);
	}
	fprintf(out, "totals rx=%" PRIu64 " tx=%" PRIu64 " tx_dropped=%" PRIu64
		" non_ip=%" PRIu64 " malformed=%" PRIu64
		" dropped_non_ip=%" PRIu64 " dropped_malformed=%" PRIu64
		" multiseg=%" PRIu64 " dropped_oversize=%" PRIu64 "\n", t.rx,
		t.tx, t.tx_dropped, t.non_ip, t.malformed, t.dropped_non_ip,
		t.dropped_malformed, t.multiseg, t.dropped_oversize);
	fprintf(out, "malformed");
	for (int e = 1; e < PKT_ERR_MAX; e++)
		if (t.malformed_by[e])
			fprintf(out, " %s=%" PRIu64, pkt_err_name(e),
				t.malformed_by[e]);
	fprintf(out, "\n");
	for (unsigned m = 0; sl_stage_modules[m] != NULL; m++) {
		const struct stage_module *mod = sl_stage_modules[m];
		void *ctxs[RTE_MAX_LCORE];
		if (module_instances(m, ctxs) && mod->report != NULL)
			mod->report(ctxs, sl_app.nb_workers, out);
	}
	if (sl_app.cfg.stage_cycles && sl_app.nb_workers > 0) {
		const struct worker *w0 = sl_app.workers[0];
		fprintf(out, "stage_cycles tsc_hz=%" PRIu64 "\n",
			rte_get_tsc_hz());
		for (unsigned s = 0; s < w0->nb_stages; s++) {
			struct stage_time t;
			char pp[32];
			sum_stage_time(s, &t);
			per_packet(pp, sizeof(pp), t.cycles, t.packets);
			fprintf(out, "stage %s bursts=%" PRIu64 " packets=%" PRIu64
				" cycles=%" PRIu64 " cycles_per_packet=%s"
				" polls=%" PRIu64 " emitted=%" PRIu64
				" poll_cycles=%" PRIu64 "\n",
				sl_stage_modules[w0->stage_module[s]]->name,
				t.bursts, t.packets, t.cycles, pp, t.polls,
				t.emitted, t.poll_cycles);
		}
	}
}
