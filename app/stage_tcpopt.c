/* SPDX-License-Identifier: BSD-3-Clause */
/* Stage adapter: [tcpopt] config, one lib/tcpopt context per port pair per
 * worker, telemetry and exit report. */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_telemetry.h>

#include "config.h"
#include "log.h"
#include "stage_proxy.h"
#include "stage_tcpopt.h"
#include "tcpopt.h"

/* Pairs that may carry their own clamp ([tcpopt.pairN], N below this). */
#define TCPOPT_STAGE_MAX_PAIRS 64
#define PAIR_PREFIX "tcpopt.pair"

struct tcpopt_stage_conf {
	struct tcpopt_params base;
	bool pair_set[TCPOPT_STAGE_MAX_PAIRS];
	uint16_t pair_mss[TCPOPT_STAGE_MAX_PAIRS];
	uint16_t pair_mtu[TCPOPT_STAGE_MAX_PAIRS];
};

struct tcpopt_stage {
	uint16_t nb_pairs;
	struct tcpopt_ctx *ctx[]; /* one per port pair */
};

/* "tcpopt.pair<N>" -> N, or -1. */
static int
pair_of_section(const char *s)
{
	char *end;
	unsigned long n;

	if (strncmp(s, PAIR_PREFIX, strlen(PAIR_PREFIX)) != 0)
		return -1;
	s += strlen(PAIR_PREFIX);
	if (*s < '0' || *s > '9')
		return -1;
	n = strtoul(s, &end, 10);
	if (*end != '\0' || n >= TCPOPT_STAGE_MAX_PAIRS)
		return -1;
	return (int)n;
}

static int
tcpopt_owns_section(const char *s)
{
	return strcmp(s, "tcpopt") == 0 || pair_of_section(s) >= 0;
}

/* The clamp of [tcpopt] or of one [tcpopt.pairN]. */
struct clamp {
	uint16_t mss_clamp;
	uint16_t mtu;
};

static const struct ini_enum malformed_actions[] = {
	{ "forward", TCPOPT_ACT_PRESERVE }, { "drop", TCPOPT_ACT_DROP },
	{ NULL, 0 },
};

/* The keys of [tcpopt] (defaults as in config/tcpopt.ini); [tcpopt.pairN]
 * takes the first two. option.<kind> keys are parsed by name below. */
#define TCPOPT_CLAMP_KEYS 2
static const struct ini_key tcpopt_keys[] = {
	{ "mss_clamp", INI_KIND_UINT, INI_AT(struct clamp, mss_clamp), 0, UINT16_MAX,
	  .def = "0", .unit = "bytes",
	  .doc = "clamp the MSS of SYN and SYN/ACK to this; 0: off, else 88..65535" },
	{ "mtu", INI_KIND_UINT, INI_AT(struct clamp, mtu), 0, UINT16_MAX,
	  .def = "0", .unit = "bytes",
	  .doc = "or clamp so segments fit this IP MTU; 0: off, else 576..65535" },
	{ "malformed", INI_KIND_ENUM, INI_AT(struct tcpopt_params, malformed_action),
	  .names = malformed_actions, .def = "forward",
	  .doc = "segments with a malformed option area: forward or drop" },
};

/* Apply the clamp keys of one section; 1 if it named either. */
static int
parse_clamp(struct ini_file *f, const char *section, struct clamp *c,
	    char *err, size_t errlen)
{
	uint64_t set = 0;
	char why[64];

	if (ini_apply_section(f, section, tcpopt_keys, TCPOPT_CLAMP_KEYS, c,
			      &set, err, errlen) < 0)
		return -1;
	if (c->mss_clamp != 0 && c->mss_clamp < TCPOPT_MSS_MIN) {
		snprintf(why, sizeof(why), "must be 0 (off) or %u..65535", TCPOPT_MSS_MIN);
		sl_config_err(err, errlen, f, ini_get(f, section, "mss_clamp"), why);
		return -1;
	}
	if (c->mtu != 0 && c->mtu < TCPOPT_MTU_MIN) {
		snprintf(why, sizeof(why), "must be 0 (off) or %u..65535", TCPOPT_MTU_MIN);
		sl_config_err(err, errlen, f, ini_get(f, section, "mtu"), why);
		return -1;
	}
	if (c->mss_clamp != 0 && c->mtu != 0) {
		sl_config_err(err, errlen, f, ini_get(f, section, "mtu"),
			      "give mss_clamp or mtu, not both");
		return -1;
	}
	return set != 0;
}

/* option.<kind> = preserve | strip | drop */
static int
parse_option_key(struct ini_file *f, struct ini_entry *e,
		 struct tcpopt_params *p, char *err, size_t errlen)
{
	char why[160];
	int kind, act;

	kind = tcpopt_kind_from_name(e->key + 7);
	if (kind < 0) {
		snprintf(why, sizeof(why),
			 "'%s' is not an option kind (a name like mss, "
			 "mptcp, fast_open, or 0-255)", e->key + 7);
		sl_config_err(err, errlen, f, e, why);
		return -1;
	}
	act = tcpopt_action_from_name(e->value);
	if (act < 0) {
		snprintf(why, sizeof(why),
			 "'%s' is not an action (preserve, strip or drop)",
			 e->value);
		sl_config_err(err, errlen, f, e, why);
		return -1;
	}
	if (act == TCPOPT_ACT_STRIP && kind <= TCPOPT_KIND_NOP) {
		sl_config_err(err, errlen, f, e,
			      "eol and nop are one byte: nothing to strip");
		return -1;
	}
	p->kind_action[kind] = (uint8_t)act;
	e->used = true;
	return 0;
}

static int
tcpopt_parse_conf(struct ini_file *f, void **conf, char *err, size_t errlen)
{
	struct tcpopt_stage_conf *c;
	bool present = false;
	unsigned int i;

	*conf = NULL;
	for (i = 0; i < f->nsections; i++)
		present |= tcpopt_owns_section(f->sections[i]) != 0;
	if (!present)
		return 0;
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		snprintf(err, errlen, "%s: out of memory", f->path);
		return -1;
	}
	tcpopt_params_init(&c->base);
	struct clamp base = { 0, 0 };
	if (ini_keys_defaults("tcpopt", tcpopt_keys, TCPOPT_CLAMP_KEYS, &base,
			      err, errlen) < 0 ||
	    ini_keys_defaults("tcpopt", tcpopt_keys + TCPOPT_CLAMP_KEYS, 1,
			      &c->base, err, errlen) < 0 ||
	    parse_clamp(f, "tcpopt", &base, err, errlen) < 0 ||
	    ini_apply_section(f, "tcpopt", tcpopt_keys + TCPOPT_CLAMP_KEYS, 1,
			      &c->base, NULL, err, errlen) < 0)
		goto fail;
	c->base.mss_clamp = base.mss_clamp;
	c->base.mtu = base.mtu;
	for (i = 0; i < f->count; i++) {
		struct ini_entry *e = &f->entries[i];

		if (strcmp(e->section, "tcpopt") == 0 &&
		    strncmp(e->key, "option.", 7) == 0 &&
		    parse_option_key(f, e, &c->base, err, errlen) < 0)
			goto fail;
	}
	for (i = 0; i < f->nsections; i++) {
		int pair = pair_of_section(f->sections[i]);
		struct clamp pc = { 0, 0 };
		int r;

		if (pair < 0 || c->pair_set[pair])
			continue; /* a repeated section was applied whole */
		r = parse_clamp(f, f->sections[i], &pc, err, errlen);
		if (r < 0)
			goto fail;
		c->pair_set[pair] = r > 0;
		c->pair_mss[pair] = pc.mss_clamp;
		c->pair_mtu[pair] = pc.mtu;
	}
	*conf = c;
	return 0;
fail:
	free(c);
	return -1;
}

static void
tcpopt_print_keys(FILE *out)
{
	ini_keys_print(out, "tcpopt", tcpopt_keys, RTE_DIM(tcpopt_keys));
}

static void
tcpopt_conf_free(void *conf)
{
	free(conf);
}

static uint16_t
tcpopt_stage_burst(void *ctx, const struct stage_burst *b,
		   struct rte_mbuf **pkts, uint16_t n, uint64_t now_ns)
{
	struct tcpopt_stage *st = ctx;

	(void)now_ns;
	return tcpopt_burst(st->ctx[b->pair < st->nb_pairs ? b->pair : 0],
			    pkts, n);
}

static uint16_t
tcpopt_stage_parse_burst(void *ctx, const struct stage_burst *b,
			 struct rte_mbuf **pkts, uint16_t n,
			 const struct pkt_classify *c, uint16_t *rest)
{
	struct tcpopt_stage *st = ctx;

	return tcpopt_parse_burst(st->ctx[b->pair < st->nb_pairs ? b->pair : 0],
				  pkts, n, c, rest);
}

static void
tcpopt_stage_destroy(void *ctx)
{
	struct tcpopt_stage *st = ctx;
	uint16_t p;

	if (st == NULL)
		return;
	for (p = 0; p < st->nb_pairs; p++)
		tcpopt_free(st->ctx[p]);
	rte_free(st);
}

static const struct stage_ops tcpopt_stage_ops = {
	.name = "tcpopt",
	.burst = tcpopt_stage_burst,
	.parse_burst = tcpopt_stage_parse_burst,
	.destroy = tcpopt_stage_destroy,
};

/* What the stage does to pair p: INFO, once (worker 0). */
static void
log_policy(uint16_t p, const struct tcpopt_params *prm)
{
	static const char *const act[TCPOPT_ACT_MAX] = { "preserve", "strip", "drop" };
	char kinds[2][512];
	size_t n[2] = { 0, 0 };

	kinds[0][0] = kinds[1][0] = '\0';
	for (unsigned k = 0; k < 256; k++) {
		uint8_t a = prm->kind_action[k];
		if (a == TCPOPT_ACT_PRESERVE || a >= TCPOPT_ACT_MAX)
			continue;
		unsigned i = a == TCPOPT_ACT_STRIP ? 0 : 1;
		if (n[i] < sizeof(kinds[i]))
			n[i] += (size_t)snprintf(kinds[i] + n[i], sizeof(kinds[i]) - n[i],
						 " %u", k);
	}
	char clamp[48] = "no MSS clamp";

	if (prm->mtu)
		snprintf(clamp, sizeof(clamp), "MSS clamped to fit MTU %u", prm->mtu);
	else if (prm->mss_clamp)
		snprintf(clamp, sizeof(clamp), "MSS clamped to %u", prm->mss_clamp);
	SL_LOG(tcpopt, INFO, "tcpopt: pair %u: %s, strip kinds:%s, drop segments with kinds:%s, malformed options: %s",
	       p, clamp, n[0] ? kinds[0] : " none", n[1] ? kinds[1] : " none",
	       act[prm->malformed_action < TCPOPT_ACT_MAX ? prm->malformed_action : 0]);
}

static int
tcpopt_stage_create(const void *conf, const struct stage_env *env,
		    struct stage *out)
{
	const struct tcpopt_stage_conf *c = conf;
	uint16_t nb_pairs = env->nb_pairs ? env->nb_pairs : 1, p;
	struct tcpopt_stage *st;

	st = rte_zmalloc_socket("tcpopt_stage",
				sizeof(*st) + nb_pairs * sizeof(st->ctx[0]),
				RTE_CACHE_LINE_SIZE, env->socket);
	if (st == NULL)
		return -ENOMEM;
	st->nb_pairs = nb_pairs;
	for (p = 0; p < nb_pairs; p++) {
		struct tcpopt_params prm = c->base;

		prm.socket_id = env->socket;
		if (p < TCPOPT_STAGE_MAX_PAIRS && c->pair_set[p]) {
			prm.mss_clamp = c->pair_mss[p];
			prm.mtu = c->pair_mtu[p];
		}
		st->ctx[p] = tcpopt_create(&prm);
		if (st->ctx[p] == NULL) {
			int rc = -rte_errno;

			SL_LOG(tcpopt, ERR, "tcpopt: worker %u pair %u: %s",
			       env->worker, p, rte_strerror(rte_errno));
			tcpopt_stage_destroy(st);
			return rc;
		}
		if (env->worker == 0)
			log_policy(p, &prm);
	}
	SL_LOG(tcpopt, DEBUG, "tcpopt: worker %u: one policy context per pair, %u pair(s)",
	       env->worker, nb_pairs);
	out->ops = &tcpopt_stage_ops;
	out->ctx = st;
	return 0;
}

/* Sum every worker's counters for one pair, or all pairs (pair < 0). */
static void
sum_counters(void *const *ctxs, unsigned int nb_workers, int pair,
	     struct tcpopt_counters *sum)
{
	unsigned int w;
	uint16_t p;

	memset(sum, 0, sizeof(*sum));
	for (w = 0; w < nb_workers; w++) {
		const struct tcpopt_stage *st = ctxs[w];

		if (st == NULL)
			continue;
		for (p = 0; p < st->nb_pairs; p++)
			if (pair < 0 || p == pair)
				tcpopt_counters_add(sum, tcpopt_counters(st->ctx[p]));
	}
}

static void
kind_key(char *buf, size_t len, unsigned int kind)
{
	const char *n = tcpopt_kind_name((uint8_t)kind);

	if (n != NULL)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "kind_%u", kind);
}

static void
mptcp_sub_key(char *buf, size_t len, unsigned int sub)
{
	const char *n = tcpopt_mptcp_sub_name((uint8_t)sub);

	if (n != NULL)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "subtype_%u", sub);
}

static int
tcpopt_telemetry(void *const *ctxs, unsigned int nb_workers,
		 const char *params, struct rte_tel_data *d)
{
	static const char *const seg_opt[] = { "options_syn", "options_synack",
					       "options_other" };
	static const char *const seg_mp[] = { "mptcp_syn", "mptcp_synack",
					      "mptcp_other" };
	struct tcpopt_counters *c;
	char key[64];
	int pair = -1;
	unsigned int s, k;

	if (params != NULL && *params != '\0') {
		const struct tcpopt_stage *any = NULL;
		char *end;
		long v = strtol(params, &end, 10);

		for (s = 0; s < nb_workers && any == NULL; s++)
			any = ctxs[s];
		if (*end != '\0' || v < 0 || any == NULL || v >= any->nb_pairs)
			return -EINVAL;
		pair = (int)v;
	}
	c = malloc(sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	sum_counters(ctxs, nb_workers, pair, c);
	rte_tel_data_start_dict(d);
	for (s = 0; s < TCPOPT_SEG_MAX; s++) {
		snprintf(key, sizeof(key), "segments_%s",
			 tcpopt_seg_name((enum tcpopt_seg)s));
		rte_tel_data_add_dict_u64(d, key, c->segments[s]);
	}
	for (k = 0; k < TCPOPT_EV_MAX; k++)
		rte_tel_data_add_dict_u64(d, tcpopt_event_name((enum tcpopt_event)k),
					  c->event[k]);
	for (k = 1; k < TCPOPT_MAL_MAX; k++) {
		snprintf(key, sizeof(key), "malformed_%s",
			 tcpopt_mal_name((enum tcpopt_mal)k));
		rte_tel_data_add_dict_u64(d, key, c->malformed[k]);
	}
	rte_tel_data_add_dict_u64(d, "syn_mp_capable", c->syn_mp_capable);
	/* SYN/ACKs sluice answered itself (MPTCP termination) count too:
	 * the client got MP_CAPABLE. Per pair they are not told apart. */
	rte_tel_data_add_dict_u64(d, "synack_mp_capable", c->synack_mp_capable +
				  (pair < 0 ? stage_proxy_mptcp_synacks() : 0));
	for (s = 0; s < TCPOPT_SEG_MAX; s++) {
		struct rte_tel_data *o = rte_tel_data_alloc();
		struct rte_tel_data *m = rte_tel_data_alloc();

		if (o == NULL || m == NULL) {
			rte_tel_data_free(o);
			rte_tel_data_free(m);
			break;
		}
		rte_tel_data_start_dict(o);
		for (k = 0; k < 256; k++)
			if (c->kind[s][k] != 0) {
				kind_key(key, sizeof(key), k);
				rte_tel_data_add_dict_u64(o, key, c->kind[s][k]);
			}
		rte_tel_data_add_dict_container(d, seg_opt[s], o, 0);
		rte_tel_data_start_dict(m);
		for (k = 0; k < 16; k++)
			if (c->mptcp_sub[s][k] != 0) {
				mptcp_sub_key(key, sizeof(key), k);
				rte_tel_data_add_dict_u64(m, key,
							  c->mptcp_sub[s][k]);
			}
		rte_tel_data_add_dict_container(d, seg_mp[s], m, 0);
	}
	free(c);
	return 0;
}

static void
tcpopt_report(void *const *ctxs, unsigned int nb_workers, FILE *out)
{
	struct tcpopt_counters *c = malloc(sizeof(*c));
	char key[64];
	unsigned int s, k;

	if (c == NULL)
		return;
	sum_counters(ctxs, nb_workers, -1, c);
	fprintf(out, "tcpopt segments_syn=%" PRIu64 " segments_synack=%" PRIu64
		" segments_other=%" PRIu64 " syn_mp_capable=%" PRIu64
		" synack_mp_capable=%" PRIu64,
		c->segments[TCPOPT_SEG_SYN], c->segments[TCPOPT_SEG_SYNACK],
		c->segments[TCPOPT_SEG_OTHER], c->syn_mp_capable,
		c->synack_mp_capable + stage_proxy_mptcp_synacks());
	for (k = 0; k < TCPOPT_EV_MAX; k++)
		fprintf(out, " %s=%" PRIu64,
			tcpopt_event_name((enum tcpopt_event)k), c->event[k]);
	fprintf(out, "\ntcpopt malformed");
	for (k = 1; k < TCPOPT_MAL_MAX; k++)
		if (c->malformed[k] != 0)
			fprintf(out, " %s=%" PRIu64,
				tcpopt_mal_name((enum tcpopt_mal)k),
				c->malformed[k]);
	fprintf(out, "\n");
	for (s = 0; s < TCPOPT_SEG_MAX; s++) {
		fprintf(out, "tcpopt options_%s",
			tcpopt_seg_name((enum tcpopt_seg)s));
		for (k = 0; k < 256; k++)
			if (c->kind[s][k] != 0) {
				kind_key(key, sizeof(key), k);
				fprintf(out, " %s=%" PRIu64, key, c->kind[s][k]);
			}
		fprintf(out, "\n");
	}
	for (s = 0; s < TCPOPT_SEG_MAX; s++) {
		fprintf(out, "tcpopt mptcp_%s",
			tcpopt_seg_name((enum tcpopt_seg)s));
		for (k = 0; k < 16; k++)
			if (c->mptcp_sub[s][k] != 0) {
				mptcp_sub_key(key, sizeof(key), k);
				fprintf(out, " %s=%" PRIu64, key,
					c->mptcp_sub[s][k]);
			}
		fprintf(out, "\n");
	}
	free(c);
}

const struct stage_module sl_stage_tcpopt = {
	.name = "tcpopt",
	.parse = tcpopt_parse_conf,
	.print_keys = tcpopt_print_keys,
	.conf_free = tcpopt_conf_free,
	.owns_section = tcpopt_owns_section,
	.create = tcpopt_stage_create,
	.telemetry = tcpopt_telemetry,
	.telemetry_help = "tcpopt counters summed over workers; "
			  "parameter: a port pair index",
	.report = tcpopt_report,
};
