/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The proxy stage: configuration ([proxy]), dispatch and telemetry of
 * the transparent TCP-terminating proxy, which lives in lib/mptcp_proxy
 * (what it does: lib/mptcp_proxy/README.md and config/proxy.ini). One
 * proxy per worker.
 *
 *   burst  frames go to mptcp_proxy_input_burst(); what it does not take
 *          passes on unchanged.
 *   poll   mptcp_proxy_poll(): timers, memory pressure, and the frames it
 *          sends, whose metadata the engine wrote as it built them, read
 *          as if they arrived on the other port of their pair (stages
 *          after this one read it), emitted.
 *   flush  shutdown: reset both legs of every connection (the ends learn
 *          at once that sluice is gone), emit the RSTs, free the proxy.
 *
 * Telemetry runs on another thread and never reads the proxy: the worker
 * copies its counters into the stage every millisecond and once more at
 * flush, before it frees the proxy (the stage itself lives until the
 * process ends).
 *
 * MSS: the frames the proxy emits do not pass the tcpopt stage again,
 * but both SYNs reach this stage after it, so a [tcpopt] mss_clamp or
 * mtu has already lowered what each leg announces.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_random.h>
#include <rte_telemetry.h>

#include "config.h"
#include "handoff.h"
#include "log.h"
#include "mptcp_proxy.h"
#include "pkt.h"
#include "stage_proxy.h"
#include "stages.h"
#include "tcp.h"

#define PROXY_SECTION "proxy"
#define PROXY_PUBLISH_NS 1000000ull /* counters for telemetry: 1 ms */
/* Payload of a full-sized segment with timestamps (1500-byte MTU): the
 * bytes one mbuf holds in the worst case that counts at start. */
#define PROXY_SEG_BYTES 1448u

/* ------------------------------------------------------------------ */
/* Configuration                                                       */

struct proxy_intercept {
	uint32_t nrules;
	struct mptcp_proxy_rule rules[MPTCP_PROXY_MAX_RULES];
};

struct proxy_conf {
	struct proxy_intercept ic;
	uint32_t max_conns;
	uint32_t snd_buf;
	uint32_t rcv_buf;
	uint8_t cc;
	uint8_t syn_retries;
	uint64_t rto_min_ns;
	uint64_t idle_ns;      /* 0: never */
	uint64_t fin_wait2_ns; /* 0: never */
	uint64_t persist_ns;   /* 0: never */
	uint64_t half_open_ns; /* 0: never */
	uint64_t reset_memory_ns; /* 0: off */
	uint32_t mbuf_budget;  /* all workers together; 0: auto */
	uint64_t reclaim_ns;   /* rcv_reclaim_idle */
	bool mptcp;            /* terminate MPTCP */
	bool mptcp_checksums;  /* use DSS checksums when a client asks */
	bool mptcp_fallback_mss_room; /* MSS room for a client's infinite mapping */
	uint8_t mptcp_cc;      /* 0 uncoupled, 1 lia */
	uint8_t mptcp_max_subflows;
	uint32_t redirect_entries; /* per worker; 0: no hand-over */
	uint64_t redirect_idle_ns; /* 0: never */
	uint32_t handoff_ring;     /* slots per ring between two workers */
	uint32_t pool_mbufs;   /* [sluice] mbufs */
};

static int
proxy_owns_section(const char *s)
{
	return strcmp(s, PROXY_SECTION) == 0;
}

/* One rule: ADDR[/LEN][:PORT]; an IPv6 address with a port is written
 * [ADDR]/LEN:PORT or [ADDR]:PORT. The prefix itself is ini_parse_prefix()'s. */
static int
parse_rule(const char *tok, struct mptcp_proxy_rule *r, char *why, size_t whylen)
{
	char buf[96], pfx[112], *addr = buf, *rest, *lenp = NULL, *portp = NULL;
	struct ini_prefix p;
	uint64_t v = 0;

	memset(r, 0, sizeof(*r));
	if (strlen(tok) >= sizeof(buf))
		goto bad;
	strcpy(buf, tok);
	if (buf[0] == '[') {
		char *e = strchr(buf, ']');

		if (e == NULL)
			goto bad;
		*e = '\0';
		addr = buf + 1;
		rest = e + 1;
		if (*rest == '/') {
			lenp = rest + 1;
			portp = strchr(lenp, ':');
		} else if (*rest == ':') {
			portp = rest;
		} else if (*rest != '\0') {
			goto bad;
		}
	} else {
		char *slash = strchr(buf, '/');

		if (slash != NULL) {
			*slash = '\0';
			lenp = slash + 1;
			portp = strchr(lenp, ':');
		} else if (strchr(buf, ':') == strrchr(buf, ':')) {
			portp = strchr(buf, ':'); /* IPv4:PORT, or NULL */
		}
	}
	if (portp != NULL) {
		*portp++ = '\0';
		if (ini_parse_u64(portp, 1, 65535, &v, why, whylen) < 0)
			return -1;
		r->port = (uint16_t)v;
	}
	/* A length beyond the family's says "out of range", not "bad". */
	if (lenp != NULL &&
	    ini_parse_u64(lenp, 0, strchr(addr, ':') != NULL ? 128 : 32, &v,
			  why, whylen) < 0)
		return -1;
	snprintf(pfx, sizeof(pfx), "%s%s%s", addr, lenp != NULL ? "/" : "",
		 lenp != NULL ? lenp : "");
	if (ini_parse_prefix(pfx, true, &p, why, whylen) < 0)
		goto bad;
	r->family = p.family;
	r->plen = p.depth;
	memcpy(r->addr, p.addr, sizeof(r->addr));
	return 0;
bad:
	snprintf(why, whylen,
		 "'%s' is not PREFIX[:PORT] (e.g. 198.18.0.0/15, 0.0.0.0/0:443, "
		 "[2001:db8::]/32:80)", tok);
	return -1;
}

/* intercept: comma-separated rules into a struct proxy_intercept. */
static int
parse_intercept(const char *v, void *dst, char *why, size_t whylen)
{
	struct proxy_intercept *ic = dst, n = { .nrules = 0 };
	const char *p = v;

	while (*p != '\0') {
		char tok[128];
		size_t len = strcspn(p, ",");
		size_t a = 0, b = len;

		while (a < b && (p[a] == ' ' || p[a] == '\t'))
			a++;
		while (b > a && (p[b - 1] == ' ' || p[b - 1] == '\t'))
			b--;
		if (b > a) {
			if (b - a >= sizeof(tok) || n.nrules == MPTCP_PROXY_MAX_RULES) {
				snprintf(why, whylen, "at most %u prefixes of up to %zu characters",
					 MPTCP_PROXY_MAX_RULES, sizeof(tok) - 1);
				return -1;
			}
			memcpy(tok, p + a, b - a);
			tok[b - a] = '\0';
			if (parse_rule(tok, &n.rules[n.nrules], why, whylen) < 0)
				return -1;
			n.nrules++;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	*ic = n;
	return 0;
}

/* A timeout: a time (a bare number in seconds), 0 (never) or 1s..864000s. */
static int
parse_timeout(const char *v, void *dst, char *why, size_t whylen)
{
	uint64_t t;

	if (ini_parse_time_ns(v, NS_PER_S, &t, why, whylen) < 0)
		return -1;
	if (t != 0 && (t < NS_PER_S || t > 864000ull * NS_PER_S)) {
		snprintf(why, whylen, "'%s' out of range: 0 (never) or [1s, 864000s]", v);
		return -1;
	}
	memcpy(dst, &t, sizeof(t));
	return 0;
}

/* mbuf_budget: auto (a third of [sluice] mbufs) or 64..; the upper bound,
 * 3/4 of [sluice] mbufs, is checked once the whole file is read. */
static int
parse_budget(const char *v, void *dst, char *why, size_t whylen)
{
	uint64_t b = 0;

	if (strcmp(v, "auto") != 0 &&
	    ini_parse_u64(v, 64, UINT32_MAX, &b, why, whylen) < 0)
		return -1;
	*(uint32_t *)dst = (uint32_t)b;
	return 0;
}

static const struct ini_enum mptcp_cc_names[] = {
	{ "uncoupled", 0 }, { "lia", 1 }, { NULL, 0 },
};

static const struct ini_enum cc_names[] = {
	{ "cubic", TCP_CC_CUBIC }, { "newreno", TCP_CC_NEWRENO }, { NULL, 0 },
};

/* The keys of [proxy], in the order of config/proxy.ini, which documents
 * each at length (tests/pcap/test_config.py checks it against this). */
static const struct ini_key proxy_keys[] = {
	{ "intercept", INI_KIND_CUSTOM, INI_AT(struct proxy_conf, ic),
	  .parse = parse_intercept, .def = "",
	  .doc = "destinations to intercept: PREFIX[:PORT], comma-separated; empty: none" },
	{ "max_connections", INI_KIND_UINT, INI_AT(struct proxy_conf, max_conns), 1, 1u << 20,
	  .def = "1024", .unit = "connections",
	  .doc = "proxied connections per worker; a SYN beyond is bridged" },
	{ "snd_buf", INI_KIND_SIZE, INI_AT(struct proxy_conf, snd_buf), 4096, 64u << 20,
	  .def = "256k", .unit = "bytes", .doc = "send buffer limit of each leg" },
	{ "rcv_buf", INI_KIND_SIZE, INI_AT(struct proxy_conf, rcv_buf), 4096, 64u << 20,
	  .def = "256k", .unit = "bytes", .doc = "receive buffer limit (and window) of each leg" },
	{ "cc", INI_KIND_ENUM, INI_AT(struct proxy_conf, cc), .names = cc_names,
	  .def = "cubic", .doc = "congestion control of both legs: cubic or newreno" },
	{ "syn_retries", INI_KIND_UINT, INI_AT(struct proxy_conf, syn_retries), 1, 10,
	  .def = "6", .unit = "retries", .doc = "SYN retransmissions toward a silent server" },
	{ "rto_min", INI_KIND_TIME, INI_AT(struct proxy_conf, rto_min_ns), NS_PER_S / 100, 10ull * NS_PER_S,
	  NS_PER_S / 1000, .def = "200ms", .unit = "ms",
	  .doc = "least retransmission timeout of every leg and subflow, 10ms..10s" },
	{ "idle_timeout", INI_KIND_CUSTOM, INI_AT(struct proxy_conf, idle_ns),
	  .parse = parse_timeout, .def = "7440s", .unit = "s",
	  .doc = "reset a leg silent this long; 0: never, else 1s..864000s" },
	{ "fin_wait2_timeout", INI_KIND_CUSTOM, INI_AT(struct proxy_conf, fin_wait2_ns),
	  .parse = parse_timeout, .def = "60s", .unit = "s",
	  .doc = "reset a leg in FIN-WAIT-2 silent this long; 0: never, else 1s..864000s" },
	{ "persist_timeout", INI_KIND_CUSTOM, INI_AT(struct proxy_conf, persist_ns),
	  .parse = parse_timeout, .def = "60s", .unit = "s",
	  .doc = "reset a leg whose window stays closed this long; 0: never, else 1s..864000s" },
	{ "half_open_yield_after", INI_KIND_CUSTOM, INI_AT(struct proxy_conf, half_open_ns),
	  .parse = parse_timeout, .def = "1s", .unit = "s",
	  .doc = "table full: a SYN replaces the oldest half-open connection this old; 0: never, else 1s..864000s" },
	{ "reset_memory", INI_KIND_TIME, INI_AT(struct proxy_conf, reset_memory_ns),
	  NS_PER_S / 10, 600ull * NS_PER_S, NS_PER_S, .def = "5s", .unit = "s", .zero_off = true,
	  .doc = "after a reset, answer what was in flight for the connection as a closed port (RST), not bridge it, this long; 0: off, else 100ms..600s" },
	{ "mbuf_budget", INI_KIND_CUSTOM, INI_AT(struct proxy_conf, mbuf_budget),
	  .parse = parse_budget, .def = "auto", .unit = "mbufs",
	  .doc = "pool mbufs all proxies may hold; auto: a third of [sluice] mbufs, at most 3/4" },
	{ "rcv_reclaim_idle", INI_KIND_TIME, INI_AT(struct proxy_conf, reclaim_ns),
	  NS_PER_S / 100, 60ull * NS_PER_S, NS_PER_S / 1000, .def = "200ms", .unit = "ms",
	  .doc = "with the budget's pool over half offered, a leg that received nothing this long gives its window back, down to two segments; 10ms..60s" },
	{ "mptcp", INI_KIND_BOOL, INI_AT(struct proxy_conf, mptcp),
	  .def = "on", .doc = "terminate Multipath TCP (RFC 8684) on intercepted SYNs that ask for it" },
	{ "mptcp_checksums", INI_KIND_BOOL, INI_AT(struct proxy_conf, mptcp_checksums),
	  .def = "on", .doc = "use DSS checksums when a client asks (MP_CAPABLE A); off: such a client gets plain TCP" },
	{ "mptcp_fallback_mss_room", INI_KIND_BOOL, INI_AT(struct proxy_conf, mptcp_fallback_mss_room),
	  .def = "on", .doc = "announce an MSS 28 bytes smaller to MPTCP clients, so that a fallback on data without DSS can tell the client with MP_FAIL (its infinite mapping then fits)" },
	{ "mptcp_max_subflows", INI_KIND_UINT, INI_AT(struct proxy_conf, mptcp_max_subflows), 1, 8,
	  .def = "8", .unit = "subflows", .doc = "subflows per MPTCP connection; a join beyond gets RST" },
	{ "mptcp_cc", INI_KIND_ENUM, INI_AT(struct proxy_conf, mptcp_cc), .names = mptcp_cc_names,
	  .def = "uncoupled", .doc = "subflows' congestion control: uncoupled (each its own, as Linux) or lia (RFC 6356)" },
	{ "mptcp_redirect_entries", INI_KIND_UINT, INI_AT(struct proxy_conf, redirect_entries), 0, 1u << 20,
	  .def = "4096", .unit = "subflows",
	  .doc = "per worker: subflows passed on to the worker their token names; full: a join gets RST; 0: no hand-over" },
	{ "mptcp_redirect_idle_timeout", INI_KIND_CUSTOM, INI_AT(struct proxy_conf, redirect_idle_ns),
	  .parse = parse_timeout, .def = "7440s", .unit = "s",
	  .doc = "forget a passed-on subflow silent this long; 0: never, else 1s..864000s" },
	{ "mptcp_handoff_ring", INI_KIND_UINT, INI_AT(struct proxy_conf, handoff_ring), 64, 65536,
	  .def = "1024", .unit = "frames",
	  .doc = "slots of each ring between two workers (rounded up to a power of two); full: dropped, counted" },
};

/* [sluice] mbufs as the file sets it (config.c has checked it already),
 * else the default: the pool the proxy's budget is a share of. */
static uint32_t
sluice_mbufs(const struct ini_file *f)
{
	struct sl_config d;

	sl_config_defaults(&d);
	for (unsigned i = 0; i < f->count; i++) {
		const struct ini_entry *e = &f->entries[i];
		uint64_t v;
		char why[64];

		if (strcmp(e->section, "sluice") == 0 && strcmp(e->key, "mbufs") == 0 &&
		    ini_parse_u64(e->value, 1, UINT32_MAX, &v, why, sizeof(why)) == 0)
			d.mbufs = (uint32_t)v;
	}
	return d.mbufs;
}

static int
proxy_parse(struct ini_file *f, void **conf, char *err, size_t errlen)
{
	struct proxy_conf *c;
	bool present = false;

	*conf = NULL;
	for (unsigned s = 0; s < f->nsections; s++)
		present |= proxy_owns_section(f->sections[s]) != 0;
	if (!present)
		return 0;
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		snprintf(err, errlen, "%s: out of memory", f->path);
		return -1;
	}
	if (ini_keys_defaults(PROXY_SECTION, proxy_keys, RTE_DIM(proxy_keys), c,
			      err, errlen) < 0 ||
	    ini_apply_section(f, PROXY_SECTION, proxy_keys, RTE_DIM(proxy_keys), c,
			      NULL, err, errlen) < 0)
		goto fail;
	c->pool_mbufs = sluice_mbufs(f);
	if (c->mbuf_budget == 0) {
		/* A third: windows advertised before the pool is sampled
		 * (once a millisecond) cannot be taken back, and 200
		 * zero-window readers overshot a budget of half the pool by
		 * up to 5,600 mbufs (tests/e2e/test_adversarial.sh). */
		c->mbuf_budget = c->pool_mbufs / 3;
	} else if (c->mbuf_budget > (uint64_t)c->pool_mbufs * 3 / 4) {
		/* Rx needs the rest of the pool. */
		char why[192];

		snprintf(why, sizeof(why),
			 "%u mbufs do not fit: at most 3/4 of [sluice] mbufs "
			 "(%" PRIu64 " of %u), the rest is for rx", c->mbuf_budget,
			 (uint64_t)c->pool_mbufs * 3 / 4, c->pool_mbufs);
		sl_config_err(err, errlen, f, ini_get(f, PROXY_SECTION, "mbuf_budget"), why);
		goto fail;
	}
	/* Nothing to intercept (the default, and config/proxy.ini as it is):
	 * the stage stays out of the pipeline and sluice is a bridge. */
	if (c->ic.nrules == 0) {
		free(c);
		return 0;
	}
	*conf = c;
	return 0;
fail:
	free(c);
	return -1;
}

static void
proxy_print_keys(FILE *out)
{
	ini_keys_print(out, PROXY_SECTION, proxy_keys, RTE_DIM(proxy_keys));
}

static void
proxy_conf_free(void *conf)
{
	free(conf);
}

/* ------------------------------------------------------------------ */
/* Dispatch                                                            */

struct proxy_stage {
	struct mptcp_proxy *px;  /* NULL after flush */
	mptcp_proxy_emit_fn emit; /* emit_frames(), or emit_to_tx() when no
				   * stage runs after this one */
	/* MPTCP subflows to and from the workers that own them. */
	struct handoff_port hp;
	struct handoff_stage away;
	uint8_t stopping;        /* the burst being handled is at shutdown */
	uint64_t ho_sent, ho_drops; /* frames sent to other workers; dropped
				     * because the owner's ring was full */
	uint64_t pub_ho_drops;   /* ho_drops, published with pub */
	/* What telemetry reads, published by the worker (at most
	 * PROXY_PUBLISH_NS old): the telemetry thread never touches the
	 * proxy, which the worker frees at flush. */
	struct mptcp_proxy_stats pub;
	uint64_t eng_cnt[TCP_CNT_MAX];
	uint64_t published_ns;
};

static uint16_t
proxy_stage_burst(void *ctx, const struct stage_burst *b,
		  struct rte_mbuf **pkts, uint16_t n, uint64_t now_ns)
{
	struct proxy_stage *st = ctx;
	uint16_t keep;

	if (st->px == NULL)
		return n;
	st->stopping = b->stopping;
	keep = mptcp_proxy_input_burst(st->px, pkts, n, b->upstream, b->out_port,
				       now_ns);
	if (st->away.n)
		handoff_stage_flush(&st->hp, &st->away, &st->ho_sent, &st->ho_drops);
	return keep;
}

/* The proxy's hand-over: a subflow of a connection worker `to` owns. At
 * shutdown the owner may have flushed already: the proxy keeps it. */
static int
proxy_handover(void *arg, struct rte_mbuf *m, uint16_t to)
{
	struct proxy_stage *st = arg;

	if (st->stopping || to >= st->hp.nb_workers || to == st->hp.index)
		return -1;
	handoff_stage_add(&st->hp, &st->away, m, to, &st->ho_sent, &st->ho_drops);
	return 0;
}

/* Stages after us read the metadata: the engine wrote it as it built
 * the frame (tcp_tx_burst()); it reads as if the frame arrived on the
 * other port of the pair. */
static void
emit_frames(void *arg, struct rte_mbuf **pkts, uint16_t n)
{
	struct stage_emitter *em = arg;

	for (uint16_t j = 0; j < n; j++) {
		struct rte_mbuf *m = pkts[j];

		pkt_meta(m)->in_port = (uint16_t)(m->port ^ 1);
		stage_emit(em, m->port, m);
	}
}

/* With no stage after us the frames go to tx, which reads no metadata:
 * the engine left it unwritten (TCP_F_TX_NO_META). */
static void
emit_to_tx(void *arg, struct rte_mbuf **pkts, uint16_t n)
{
	struct stage_emitter *em = arg;

	for (uint16_t j = 0; j < n; j++)
		stage_emit(em, pkts[j]->port, pkts[j]);
}

/* The rings that carry MPTCP subflows to the worker that owns them
 * (boot, by worker 0's create; each worker then uses only its end). */
static struct handoff_mesh *proxy_mesh;

/* The workers' stages, for stage_proxy_mptcp_synacks() (written at
 * create, before the workers run; read from their published copies). */
static struct proxy_stage *proxy_stages[RTE_MAX_LCORE];

uint64_t
stage_proxy_mptcp_synacks(void)
{
	uint64_t n = 0;

	for (unsigned w = 0; w < RTE_MAX_LCORE; w++)
		if (proxy_stages[w] != NULL)
			n += proxy_stages[w]->pub.cnt[MPTCP_PROXY_CNT_MPTCP_SYNACK_SENT];
	return n;
}

static void
publish(struct proxy_stage *st, uint64_t now_ns)
{
	mptcp_proxy_stats_get(st->px, &st->pub);
	st->pub_ho_drops = st->ho_drops;
	memcpy(st->eng_cnt, mptcp_proxy_tcp_counters(st->px), sizeof(st->eng_cnt));
	st->published_ns = now_ns;
}

/* Subflow segments other workers handed here: the proxy takes them as
 * its own; what it does not take goes on as bridged. */
static void
take_handed(struct proxy_stage *st, struct stage_emitter *em, uint64_t now_ns)
{
	for (unsigned from = 0; from < st->hp.nb_workers; from++) {
		struct rte_mbuf *in[HANDOFF_BATCH];
		unsigned n = handoff_recv(&st->hp, from, in, HANDOFF_BATCH);
		uint16_t keep;

		if (n == 0)
			continue;
		keep = mptcp_proxy_input_handed(st->px, in, (uint16_t)n, now_ns);
		for (uint16_t i = 0; i < keep; i++)
			stage_emit(em, (uint16_t)(in[i]->port ^ 1), in[i]);
	}
}

static void
proxy_stage_poll(void *ctx, struct stage_emitter *em, uint64_t now_ns)
{
	struct proxy_stage *st = ctx;

	if (st->px == NULL)
		return;
	take_handed(st, em, now_ns);
	mptcp_proxy_poll(st->px, now_ns, st->emit, em);
	if (now_ns - st->published_ns >= PROXY_PUBLISH_NS)
		publish(st, now_ns);
}

static void
proxy_stage_flush(void *ctx, struct stage_emitter *em, uint64_t now_ns)
{
	struct proxy_stage *st = ctx;
	struct mptcp_proxy *px = st->px;

	if (px == NULL)
		return;
	take_handed(st, em, now_ns);
	mptcp_proxy_shutdown(px, now_ns, st->emit, em);
	/* The last copy, with the RSTs counted: the proxy goes, its
	 * counters stay for telemetry and the exit report. */
	publish(st, now_ns);
	st->px = NULL;
	mptcp_proxy_free(px);
}

static void
proxy_stage_destroy(void *ctx)
{
	struct proxy_stage *st = ctx;

	if (st == NULL)
		return;
	for (unsigned w = 0; w < RTE_MAX_LCORE; w++)
		if (proxy_stages[w] == st)
			proxy_stages[w] = NULL;
	mptcp_proxy_free(st->px);
	rte_free(st);
}

static uint32_t
proxy_stage_pending(void *ctx)
{
	const struct proxy_stage *st = ctx;

	return st->px != NULL ? handoff_pending(&st->hp) : 0;
}

static const struct stage_ops proxy_stage_ops = {
	.name = "proxy",
	.burst = proxy_stage_burst,
	.poll = proxy_stage_poll,
	.pending = proxy_stage_pending,
	.flush = proxy_stage_flush,
	.destroy = proxy_stage_destroy,
};

static int
proxy_stage_create(const void *conf, const struct stage_env *env,
		   struct stage *out)
{
	const struct proxy_conf *c = conf;
	struct mptcp_proxy_params prm;
	struct proxy_stage *st;
	char name[32];
	uint64_t k0, k1;

	/* The rings between workers: built once, by the first worker's. */
	if (env->worker == 0) {
		proxy_mesh = handoff_mesh_create("px_h", env->nb_workers, c->handoff_ring);
		if (proxy_mesh == NULL)
			return rte_errno ? -rte_errno : -ENOMEM;
	}
	st = rte_zmalloc_socket("proxy_stage", sizeof(*st) +
				2 * env->nb_workers * sizeof(struct rte_ring *),
				RTE_CACHE_LINE_SIZE, env->socket);
	if (st == NULL)
		return -ENOMEM;
	handoff_port_init(proxy_mesh, env->worker, &st->hp, (struct rte_ring **)(st + 1));
	memset(&prm, 0, sizeof(prm));
	snprintf(name, sizeof(name), "proxy_w%u", env->worker);
	prm.name = name;
	prm.socket_id = env->socket;
	prm.pool = env->pool;
	/* Relayed payload goes out as indirect mbufs behind a header mbuf,
	 * where every port can send a chain; otherwise it is copied. */
	prm.tx_copy = !env->tx_multiseg;
	/* Last: nothing reads the metadata of what the proxy sends. */
	prm.tx_no_meta = env->last;
	st->emit = env->last ? emit_to_tx : emit_frames;
	prm.max_conns = c->max_conns;
	prm.snd_buf = c->snd_buf;
	prm.rcv_buf = c->rcv_buf;
	prm.cc = c->cc;
	prm.syn_retries = c->syn_retries;
	prm.rto_min_ns = c->rto_min_ns;
	prm.idle_timeout_ns = c->idle_ns;
	prm.fin_wait2_timeout_ns = c->fin_wait2_ns;
	prm.persist_timeout_ns = c->persist_ns;
	prm.half_open_yield_ns = c->half_open_ns;
	prm.reset_memory_ns = c->reset_memory_ns;
	prm.mbuf_budget = c->mbuf_budget;
	prm.rcv_reclaim_idle_ns = c->reclaim_ns;
	if (prm.mbuf_budget > env->pool->size * 3 / 4) /* a pool smaller than the file said */
		prm.mbuf_budget = env->pool->size * 3 / 4;
	prm.nrules = c->ic.nrules;
	prm.rules = c->ic.rules;
	prm.mptcp = c->mptcp;
	prm.max_subflows = c->mptcp_max_subflows;
	prm.mptcp_lia = c->mptcp_cc == 1;
	prm.mptcp_csum_off = !c->mptcp_checksums;
	prm.mptcp_fallback_mss_room = c->mptcp_fallback_mss_room;
	/* Tokens name their worker: enough low bits for every worker. */
	while ((1u << prm.worker_bits) < env->nb_workers)
		prm.worker_bits++;
	prm.worker_id = (uint16_t)env->worker;
	if (env->nb_workers > 1) {
		prm.handover = proxy_handover;
		prm.handover_arg = st;
		prm.redirect_entries = c->redirect_entries;
		prm.redirect_idle_ns = c->redirect_idle_ns;
	}
	k0 = rte_rand();
	k1 = rte_rand();
	memcpy(prm.isn_key, &k0, 8);
	memcpy(prm.isn_key + 8, &k1, 8);
	st->px = mptcp_proxy_create(&prm);
	if (st->px == NULL) {
		int rc = -rte_errno;

		rte_free(st);
		return rc ? rc : -ENOMEM;
	}
	publish(st, 0);
	if (env->worker < RTE_MAX_LCORE)
		proxy_stages[env->worker] = st;
	if (env->worker == 0) {
		/* The worst case of the configuration, in mbufs of full-sized
		 * segments, on every worker: every connection's two legs with
		 * both buffers full. An MPTCP client leg holds a leg's buffers
		 * per subflow, and its data-level reassembly up to twice the
		 * receive side again (lib/mptcp_proxy/mptcp_conn.c: rcv_lim);
		 * the hand-off rings between workers hold a frame per slot.
		 * (A segment sent is a header mbuf and an indirect one on top
		 * of the kept payload only until the port has sent it: the tx
		 * rings bound those, not the buffers.) */
		const uint64_t leg = (c->snd_buf + c->rcv_buf + PROXY_SEG_BYTES - 1) /
				     PROXY_SEG_BYTES;
		const uint64_t mp_leg = c->mptcp ? (uint64_t)c->mptcp_max_subflows *
			((c->snd_buf + 3ull * c->rcv_buf + PROXY_SEG_BYTES - 1) /
			 PROXY_SEG_BYTES) : leg;
		const uint64_t rings = env->nb_workers > 1 ? (uint64_t)env->nb_workers *
			(env->nb_workers - 1) * c->handoff_ring : 0;
		uint64_t worst = (uint64_t)env->nb_workers * c->max_conns * (leg + mp_leg) +
				 rings;

		SL_LOG(proxy, INFO, "proxy: intercepting %u prefix(es) from the subscriber side, "
		       "%u connections per worker, snd_buf %u, rcv_buf %u, %s, "
		       "mbuf_budget %u of %u",
		       c->ic.nrules, c->max_conns, c->snd_buf, c->rcv_buf,
		       c->cc == TCP_CC_NEWRENO ? "newreno" : "cubic", prm.mbuf_budget,
		       env->pool->size);
		if (worst > prm.mbuf_budget)
			SL_LOG(proxy, WARNING, "proxy: warning: [proxy] max_connections x "
			       "(server leg + client leg, %s) could hold %" PRIu64 " mbufs, "
			       "more than mbuf_budget (%u): windows shrink from a quarter of the "
			       "budget on, and are closed at the budget",
			       c->mptcp ? "mptcp_max_subflows subflows" : "one subflow",
			       worst, prm.mbuf_budget);
	}
	SL_LOG(proxy, DEBUG, "proxy: worker %u: %u connection pairs, mbuf_budget %u",
	       env->worker, c->max_conns, prm.mbuf_budget);
	out->ops = &proxy_stage_ops;
	out->ctx = st;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Counters                                                            */

static void
sum_counters(void *const *ctxs, unsigned nb_workers,
	     uint64_t px[MPTCP_PROXY_CNT_MAX], uint64_t eng[TCP_CNT_MAX],
	     uint64_t *active, uint64_t *mp_active, uint64_t *mp_sf,
	     uint64_t *rd, uint64_t *ho_drops)
{
	memset(px, 0, sizeof(uint64_t) * MPTCP_PROXY_CNT_MAX);
	memset(eng, 0, sizeof(uint64_t) * TCP_CNT_MAX);
	*active = *mp_active = *mp_sf = *rd = *ho_drops = 0;
	for (unsigned w = 0; w < nb_workers; w++) {
		const struct proxy_stage *st = ctxs[w];

		if (st == NULL)
			continue;
		/* Never st->px: the worker frees it at flush. */
		for (unsigned k = 0; k < MPTCP_PROXY_CNT_MAX; k++)
			px[k] += st->pub.cnt[k];
		for (unsigned k = 0; k < TCP_CNT_MAX; k++)
			eng[k] += st->eng_cnt[k];
		*active += st->pub.active;
		*mp_active += st->pub.mptcp_active;
		*mp_sf += st->pub.mptcp_subflows;
		*rd += st->pub.mptcp_redirects;
		*ho_drops += st->pub_ho_drops;
	}
}

static int
proxy_telemetry(void *const *ctxs, unsigned nb_workers, const char *params,
		struct rte_tel_data *d)
{
	uint64_t px[MPTCP_PROXY_CNT_MAX], eng[TCP_CNT_MAX], active, legs = 0;
	uint64_t mp_active, mp_sf, rd, ho_drops;
	uint64_t held = 0, lim = 0, pool = 0, offered = 0;
	bool pooled = false;
	char key[64];

	(void)params;
	sum_counters(ctxs, nb_workers, px, eng, &active, &mp_active, &mp_sf, &rd, &ho_drops);
	for (unsigned w = 0; w < nb_workers; w++) {
		const struct proxy_stage *st = ctxs[w];

		if (st == NULL)
			continue;
		legs += st->pub.engine_conns;
		held = st->pub.mbufs_held; /* one pool: every worker sees it */
		lim += st->pub.rcv_limit;
		offered += st->pub.rcv_offered;
		if (st->pub.rcv_pool != UINT64_MAX) {
			pool += st->pub.rcv_pool;
			pooled = true;
		}
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "connections_active", active);
	rte_tel_data_add_dict_u64(d, "mptcp_connections_active", mp_active);
	rte_tel_data_add_dict_u64(d, "mptcp_subflows_active", mp_sf);
	rte_tel_data_add_dict_u64(d, "mptcp_redirect_entries_active", rd);
	rte_tel_data_add_dict_u64(d, "mptcp_handoff_ring_full_drops", ho_drops);
	rte_tel_data_add_dict_u64(d, "mptcp_state_bytes_2_subflows", mptcp_proxy_mptcp_conn_size(2));
	rte_tel_data_add_dict_u64(d, "mbufs_held", held);
	rte_tel_data_add_dict_u64(d, "rcv_window_limit", nb_workers ? lim / nb_workers : 0);
	/* The receive pool: what every leg's window still lets in, against
	 * what the budget has left for them (0 when there is no budget). */
	rte_tel_data_add_dict_u64(d, "rcv_offered_bytes", offered);
	rte_tel_data_add_dict_u64(d, "rcv_pool_bytes", pooled ? pool : 0);
	/* Memory accounting (perf/bench.sh proxy): state of the engine
	 * connections held now (both legs, TIME-WAIT included) and of the
	 * active pairs. Payload is in mbufs: /sluice/totals mempool_in_use. */
	rte_tel_data_add_dict_u64(d, "engine_connections", legs);
	rte_tel_data_add_dict_u64(d, "conn_state_bytes", tcp_conn_size());
	rte_tel_data_add_dict_u64(d, "pair_state_bytes", mptcp_proxy_pair_size());
	rte_tel_data_add_dict_u64(d, "state_bytes_in_use",
				  legs * tcp_conn_size() + active * mptcp_proxy_pair_size());
	for (unsigned k = 0; k < MPTCP_PROXY_CNT_MAX; k++)
		rte_tel_data_add_dict_u64(d, mptcp_proxy_cnt_name((enum mptcp_proxy_cnt)k), px[k]);
	for (unsigned k = 0; k < TCP_CNT_MAX; k++) {
		snprintf(key, sizeof(key), "tcp_%s", tcp_cnt_name((enum tcp_cnt)k));
		rte_tel_data_add_dict_u64(d, key, eng[k]);
	}
	return 0;
}

static void
proxy_report(void *const *ctxs, unsigned nb_workers, FILE *out)
{
	uint64_t px[MPTCP_PROXY_CNT_MAX], eng[TCP_CNT_MAX], active, mp_active, mp_sf;
	uint64_t rd, ho_drops;

	sum_counters(ctxs, nb_workers, px, eng, &active, &mp_active, &mp_sf, &rd, &ho_drops);
	fprintf(out, "proxy connections_active=%" PRIu64 " mptcp_connections_active=%" PRIu64
		" mptcp_subflows_active=%" PRIu64 " mptcp_redirect_entries_active=%" PRIu64
		" mptcp_handoff_ring_full_drops=%" PRIu64, active, mp_active, mp_sf, rd, ho_drops);
	for (unsigned k = 0; k < MPTCP_PROXY_CNT_MAX; k++)
		fprintf(out, " %s=%" PRIu64, mptcp_proxy_cnt_name((enum mptcp_proxy_cnt)k), px[k]);
	fprintf(out, "\nproxy tcp");
	for (unsigned k = 0; k < TCP_CNT_MAX; k++)
		if (eng[k] != 0)
			fprintf(out, " %s=%" PRIu64, tcp_cnt_name((enum tcp_cnt)k), eng[k]);
	fprintf(out, "\n");
}

const struct stage_module sl_stage_proxy = {
	.name = "proxy",
	.parse = proxy_parse,
	.conf_free = proxy_conf_free,
	.print_keys = proxy_print_keys,
	.owns_section = proxy_owns_section,
	.create = proxy_stage_create,
	.telemetry = proxy_telemetry,
	/* At most 127 characters: rte_telemetry refuses longer help. */
	.telemetry_help = "Transparent TCP proxy: connections opened, refused, reset, "
			  "active, bytes each way, engine counters.",
	.report = proxy_report,
};
