/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The proxy stage: a transparent TCP-terminating proxy on lib/tcp, one
 * engine per worker holding both legs of every proxied connection.
 *
 *   burst  a SYN arriving on port 2k (subscribers) whose destination
 *          matches [proxy] intercept is held, and the engine opens its own
 *          connection to the server from the client's address and port
 *          (out of port 2k+1). Segments of connections the engine holds
 *          are fed to it. Everything else passes on unchanged.
 *   poll   run the engine's timers and emit what it wants sent, toward
 *          the port each connection faces.
 *   flush  shutdown: reset both legs of every connection (the ends learn
 *          at once that sluice is gone), emit the RSTs, free the engine.
 *
 * Telemetry runs on another thread and never reads the engine: the worker
 * copies the engine's counters into the stage every millisecond and once
 * more at flush, before it frees the engine (the stage itself lives until
 * the process ends).
 *
 * Connection set-up follows lib/tcp/README.md: sluice answers the client,
 * as the server, only once the server accepted (tcp_accept() on the held
 * SYN). A refused server makes sluice answer the held SYN with the RST the
 * server sent it (tcp_reply_rst()); an unreachable server (SYN timeout)
 * leaves the client's SYN unanswered. Either way the client sees what it
 * would have seen without the proxy.
 *
 * MSS: each leg announces what the other side's SYN announced: the
 * server leg the client's MSS, the client leg the server's (capped at
 * the engine's 1460 over IPv4, 1440 over IPv6). Both SYNs reach this
 * stage after the tcpopt stage, so a [tcpopt] mss_clamp or mtu has
 * already lowered them, and the frames the proxy emits (which do not
 * pass tcpopt again) announce at most the clamp on either side, with no
 * knowledge of tcpopt's configuration here.
 *
 * SYN options that the legs do not negotiate themselves (TCP Fast Open,
 * experiments, unknown kinds) cross from the client's SYN to the server
 * leg's SYN and from the server's SYN-ACK to the client's; a SYN signed
 * with TCP-MD5 or TCP-AO is bridged, never intercepted (config/proxy.ini).
 *
 * Relay: whole received segments move from one leg's receive buffer to
 * the other leg's send buffer (tcp_recv_mbuf() / tcp_send_mbuf()), only
 * when they fit; TCP_EV_WRITABLE resumes. A slow reader on one side thus
 * fills that leg's send buffer, then the other leg's receive buffer, and
 * then the window toward the fast side closes: per connection sluice
 * buffers at most snd_buf + rcv_buf bytes each way. A FIN is passed on
 * (tcp_shutdown()) once every byte before it was relayed; a RST or a
 * timeout on one leg aborts the other (RST).
 *
 * Bounds: the engine resets a leg that is idle, stuck in FIN-WAIT-2 or
 * facing a window that never opens ([proxy] idle_timeout,
 * fin_wait2_timeout, persist_timeout), and all connections together are
 * held to mbuf_budget: past half of it, sampled on the pool every
 * millisecond, the receive window every leg offers shrinks, to zero at
 * the budget (pressure()).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_random.h>
#include <rte_tcp.h>
#include <rte_telemetry.h>

#include "config.h"
#include "pkt.h"
#include "stage_proxy.h"
#include "stages.h"
#include "tcp.h"
#include "tcpopt.h"

#define PROXY_SECTION "proxy"
#define PROXY_MAX_RULES 64
#define PROXY_TX_BATCH 32
#define PROXY_PUBLISH_NS 1000000ull /* engine counters for telemetry: 1 ms */
#define PROXY_PRESSURE_NS 1000000ull /* pool sampled for memory pressure: 1 ms */
/* Payload of a full-sized segment with timestamps (1500-byte MTU): the
 * bytes one mbuf holds in the worst case that counts at start. */
#define PROXY_SEG_BYTES 1448u

/* ------------------------------------------------------------------ */
/* Configuration                                                       */

struct proxy_rule {
	uint8_t family;    /* 4 or 6 */
	uint8_t plen;      /* prefix length */
	uint16_t port;     /* destination port, 0 = any */
	uint8_t addr[16];  /* masked to plen */
};

struct proxy_conf {
	uint32_t nrules;
	struct proxy_rule rules[PROXY_MAX_RULES];
	uint32_t max_conns;
	uint32_t snd_buf;
	uint32_t rcv_buf;
	uint8_t cc;
	uint8_t syn_retries;
	uint64_t idle_ns;      /* 0: never */
	uint64_t fin_wait2_ns; /* 0: never */
	uint64_t persist_ns;   /* 0: never */
	uint32_t mbuf_budget;  /* all workers together */
	uint32_t pool_mbufs;   /* [sluice] mbufs */
};

static int
proxy_owns_section(const char *s)
{
	return strcmp(s, PROXY_SECTION) == 0;
}

static void
mask_prefix(uint8_t *a, unsigned plen, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++) {
		unsigned bits = plen > i * 8 ? plen - i * 8 : 0;

		if (bits < 8)
			a[i] &= (uint8_t)(0xff00u >> bits);
	}
}

/* One rule: ADDR[/LEN][:PORT]; an IPv6 address with a port is written
 * [ADDR]/LEN:PORT or [ADDR]:PORT. */
static int
parse_rule(const char *tok, struct proxy_rule *r, char *why, size_t whylen)
{
	char buf[96], *addr = buf, *rest = NULL, *lenp = NULL, *portp = NULL;
	unsigned maxlen;
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
	if (inet_pton(AF_INET, addr, r->addr) == 1) {
		r->family = 4;
		maxlen = 32;
	} else if (inet_pton(AF_INET6, addr, r->addr) == 1) {
		r->family = 6;
		maxlen = 128;
	} else {
		goto bad;
	}
	r->plen = (uint8_t)maxlen;
	if (lenp != NULL) {
		if (ini_parse_u64(lenp, 0, maxlen, &v, why, whylen) < 0)
			return -1;
		r->plen = (uint8_t)v;
	}
	mask_prefix(r->addr, r->plen, r->family == 4 ? 4 : 16);
	return 0;
bad:
	snprintf(why, whylen,
		 "'%s' is not PREFIX[:PORT] (e.g. 198.18.0.0/15, 0.0.0.0/0:443, "
		 "[2001:db8::]/32:80)", tok);
	return -1;
}

static int
parse_intercept(struct proxy_conf *c, const char *v, char *why, size_t whylen)
{
	const char *p = v;

	c->nrules = 0;
	while (*p != '\0') {
		char tok[128];
		size_t n = strcspn(p, ",");
		size_t a = 0, b = n;

		while (a < b && (p[a] == ' ' || p[a] == '\t'))
			a++;
		while (b > a && (p[b - 1] == ' ' || p[b - 1] == '\t'))
			b--;
		if (b > a) {
			if (b - a >= sizeof(tok) || c->nrules == PROXY_MAX_RULES) {
				snprintf(why, whylen, "at most %u prefixes of up to %zu characters",
					 PROXY_MAX_RULES, sizeof(tok) - 1);
				return -1;
			}
			memcpy(tok, p + a, b - a);
			tok[b - a] = '\0';
			if (parse_rule(tok, &c->rules[c->nrules], why, whylen) < 0)
				return -1;
			c->nrules++;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

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
	char why[192];

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
	c->max_conns = 1024;
	c->snd_buf = 256 * 1024;
	c->rcv_buf = 256 * 1024;
	c->cc = TCP_CC_CUBIC;
	c->syn_retries = 6;
	/* RFC 5382 REQ-5: a NAT keeps an idle established TCP connection at
	 * least 2 hours 4 minutes; so does the proxy. */
	c->idle_ns = 7440ull * 1000000000ull;
	c->fin_wait2_ns = 60ull * 1000000000ull; /* Linux tcp_fin_timeout */
	c->persist_ns = 60ull * 1000000000ull;
	c->pool_mbufs = sluice_mbufs(f);
	c->mbuf_budget = c->pool_mbufs / 2;
	for (unsigned i = 0; i < f->count; i++) {
		struct ini_entry *e = &f->entries[i];
		uint64_t v = 0;
		int rc = 0;

		if (strcmp(e->section, PROXY_SECTION) != 0)
			continue;
		if (strcmp(e->key, "intercept") == 0) {
			rc = parse_intercept(c, e->value, why, sizeof(why));
		} else if (strcmp(e->key, "max_connections") == 0) {
			rc = ini_parse_u64(e->value, 1, 1u << 20, &v, why, sizeof(why));
			c->max_conns = (uint32_t)v;
		} else if (strcmp(e->key, "snd_buf") == 0 ||
			   strcmp(e->key, "rcv_buf") == 0) {
			rc = ini_parse_size(e->value, &v, why, sizeof(why));
			if (rc == 0 && (v < 4096 || v > (64u << 20))) {
				snprintf(why, sizeof(why), "'%s' out of range [4k, 64m]", e->value);
				rc = -1;
			}
			if (e->key[0] == 's')
				c->snd_buf = (uint32_t)v;
			else
				c->rcv_buf = (uint32_t)v;
		} else if (strcmp(e->key, "idle_timeout") == 0 ||
			   strcmp(e->key, "fin_wait2_timeout") == 0 ||
			   strcmp(e->key, "persist_timeout") == 0) {
			rc = ini_parse_time_ns(e->value, 1000000000ull, &v, why, sizeof(why));
			if (rc == 0 && v != 0 && (v < 1000000000ull || v > 864000ull * 1000000000ull)) {
				snprintf(why, sizeof(why), "'%s' out of range: 0 (never) or [1s, 864000s]",
					 e->value);
				rc = -1;
			}
			if (e->key[0] == 'i')
				c->idle_ns = v;
			else if (e->key[0] == 'f')
				c->fin_wait2_ns = v;
			else
				c->persist_ns = v;
		} else if (strcmp(e->key, "mbuf_budget") == 0) {
			/* Rx needs the rest of the pool: at most 3/4 of it. */
			uint64_t max = (uint64_t)c->pool_mbufs * 3 / 4;

			rc = ini_parse_u64(e->value, 64, UINT32_MAX, &v, why, sizeof(why));
			if (rc == 0 && v > max) {
				snprintf(why, sizeof(why),
					 "%" PRIu64 " mbufs do not fit: at most 3/4 of [sluice] mbufs "
					 "(%" PRIu64 " of %u), the rest is for rx", v, max,
					 c->pool_mbufs);
				rc = -1;
			}
			c->mbuf_budget = (uint32_t)v;
		} else if (strcmp(e->key, "syn_retries") == 0) {
			rc = ini_parse_u64(e->value, 1, 10, &v, why, sizeof(why));
			c->syn_retries = (uint8_t)v;
		} else if (strcmp(e->key, "cc") == 0) {
			if (strcasecmp(e->value, "cubic") == 0) {
				c->cc = TCP_CC_CUBIC;
			} else if (strcasecmp(e->value, "newreno") == 0) {
				c->cc = TCP_CC_NEWRENO;
			} else {
				snprintf(why, sizeof(why), "'%s' is not cubic or newreno", e->value);
				rc = -1;
			}
		} else {
			continue; /* left unused: config.c says "unknown key" */
		}
		if (rc < 0) {
			sl_config_err(err, errlen, f, e, why);
			free(c);
			return -1;
		}
		e->used = true;
	}
	/* Nothing to intercept (the default, and config/proxy.ini as it is):
	 * the stage stays out of the pipeline and sluice is a bridge. */
	if (c->nrules == 0) {
		free(c);
		return 0;
	}
	*conf = c;
	return 0;
}

static void
proxy_conf_free(void *conf)
{
	free(conf);
}

/* ------------------------------------------------------------------ */
/* Datapath                                                            */

#define PROXY_CNT_LIST(X) \
	X(SYN_INTERCEPTED, "syn_intercepted") \
	X(OPENED,          "connections_opened") \
	X(REFUSED,         "connections_refused") \
	X(UNREACHABLE,     "connections_unreachable") \
	X(RESET,           "connections_reset") \
	X(CLOSED,          "connections_closed") \
	X(SYN_DUPLICATE,   "syn_duplicates_dropped") \
	X(BRIDGED_FULL,    "syn_bridged_table_full") \
	X(BRIDGED_FAILED,  "syn_bridged_connect_failed") \
	X(ACCEPT_FAILED,   "accept_failed") \
	X(RELAY_FAILED,    "relay_failed") \
	X(SIGNED_BRIDGED,  "syn_bridged_signed") \
	X(XOPT_CARRIED,    "syn_options_carried") \
	X(XOPT_DROPPED,    "syn_options_not_carried") \
	X(ABORTED_AT_EXIT, "aborted_at_exit") \
	X(NOT_OWNED,       "segments_not_owned") \
	X(FRAG_PASSED,     "fragments_passed") \
	X(MALF_PASSED,     "malformed_passed") \
	X(PRESSURE_MS,     "memory_pressure_ms") \
	X(BYTES_UP,        "bytes_up") \
	X(BYTES_DOWN,      "bytes_down")

enum proxy_cnt {
#define PX_ENUM(e, s) PX_##e,
	PROXY_CNT_LIST(PX_ENUM)
#undef PX_ENUM
	PX_MAX
};

static const char *const px_names[PX_MAX] = {
#define PX_NAME(e, s) s,
	PROXY_CNT_LIST(PX_NAME)
#undef PX_NAME
};

struct proxy_stage;
struct proxy_pair;

struct proxy_leg {
	struct proxy_pair *pair;
	struct tcp_conn *conn;
	uint8_t server;   /* 1: the leg toward the server */
	uint8_t peer_fin; /* FIN received, not yet passed on */
	uint8_t closed;
};

struct proxy_pair {
	struct proxy_stage *st;
	struct proxy_leg cl, sv;
	struct rte_mbuf *held_syn;
	struct proxy_pair *next_free;
	uint8_t in_use;
	uint8_t cl_made;  /* the client leg was accepted */
};

struct proxy_stage {
	struct tcp_engine *e;
	struct rte_mempool *pool;
	uint32_t pool_base;   /* mbufs in use when the stage was made */
	uint32_t budget;      /* [proxy] mbuf_budget, all workers */
	uint32_t rcv_buf;
	uint32_t rcv_limit;   /* window limit in force (rcv_buf: none) */
	uint32_t held;        /* mbufs in use beyond pool_base, last sample */
	uint64_t pressure_ns; /* last sample */
	uint32_t nrules;
	uint32_t npairs;
	uint32_t active;
	struct proxy_pair *free;
	uint64_t cnt[PX_MAX];
	/* What telemetry reads of the engine, published by the worker (at
	 * most PROXY_PUBLISH_NS old): the telemetry thread never touches
	 * the engine, which the worker frees at flush. */
	uint64_t eng_cnt[TCP_CNT_MAX];
	uint32_t eng_conns;
	uint64_t published_ns;
	struct proxy_rule rules[PROXY_MAX_RULES];
	struct proxy_pair pairs[];
};

static struct proxy_leg *
other(struct proxy_leg *l)
{
	return l->server ? &l->pair->cl : &l->pair->sv;
}

static void
pair_put(struct proxy_pair *p)
{
	struct proxy_stage *st = p->st;

	p->in_use = 0;
	p->next_free = st->free;
	st->free = p;
	st->active--;
	st->cnt[PX_CLOSED]++;
}

/* Release the pair once neither leg nor the held SYN is left. */
static void
pair_maybe_put(struct proxy_pair *p)
{
	if (p->in_use && p->held_syn == NULL && p->sv.conn == NULL &&
	    p->cl.conn == NULL)
		pair_put(p);
}

/* Move what src holds into dst's send buffer; pass a FIN on after it. */
static void
relay(struct proxy_leg *src, uint64_t now)
{
	struct proxy_leg *dst = other(src);
	struct proxy_stage *st = src->pair->st;
	struct tcp_conn_info i;

	if (src->conn == NULL || dst->conn == NULL)
		return;
	for (;;) {
		uint32_t need = tcp_recv_next_len(src->conn), room;
		struct rte_mbuf *m;
		int32_t got;

		if (need == 0)
			break;
		room = tcp_send_space(dst->conn, need);
		if (room < need)
			break; /* TCP_EV_WRITABLE on dst calls us again */
		m = tcp_recv_mbuf(src->conn, room, now);
		if (m == NULL)
			break;
		got = tcp_send_mbuf(dst->conn, m, now);
		if (got <= 0) {
			/* Cannot happen with the room checked; never leak. */
			st->cnt[PX_RELAY_FAILED]++;
			rte_pktmbuf_free(m);
			break;
		}
		st->cnt[src->server ? PX_BYTES_DOWN : PX_BYTES_UP] += (uint64_t)got;
	}
	if (src->peer_fin && src->conn != NULL && dst->conn != NULL) {
		tcp_conn_get_info(src->conn, &i);
		if (i.rcv_queued == 0) {
			src->peer_fin = 0;
			tcp_shutdown(dst->conn, now);
		}
	}
}

static void
proxy_cb(struct tcp_conn *c, void *arg, uint32_t ev, uint64_t now)
{
	struct proxy_leg *l = arg;
	struct proxy_pair *p = l->pair;
	struct proxy_stage *st = p->st;

	if (ev & TCP_EV_CONNECTED) {
		l->conn = c;
		if (l->server && p->held_syn != NULL) {
			/* The server accepted: now answer the client as it,
			 * with what the server's SYN-ACK carried for it,
			 * its MSS included (see "MSS" at the top). */
			struct tcp_accept_opts ao;
			struct tcp_conn *cc;

			memset(&ao, 0, sizeof(ao));
			ao.mss = tcp_conn_peer_mss(c);
			ao.xopt_len = (uint8_t)tcp_conn_peer_xopts(c, ao.xopt);
			cc = tcp_accept_opts(st->e, p->held_syn, &ao, &p->cl, now);

			if (cc == NULL) {
				st->cnt[PX_ACCEPT_FAILED]++;
				rte_pktmbuf_free(p->held_syn);
				p->held_syn = NULL;
				tcp_abort(c, now); /* its CLOSED releases the pair */
				return;
			}
			p->held_syn = NULL;
			p->cl.conn = cc;
			p->cl_made = 1;
			st->cnt[PX_OPENED]++;
		} else if (!l->server) {
			relay(&p->sv, now); /* what the server already said */
		}
	}
	if ((ev & TCP_EV_REFUSED) && l->server && p->held_syn != NULL) {
		st->cnt[PX_REFUSED]++;
		(void)tcp_reply_rst(st->e, p->held_syn, now);
		rte_pktmbuf_free(p->held_syn);
		p->held_syn = NULL;
	}
	if ((ev & TCP_EV_TIMEOUT) && l->server && p->held_syn != NULL) {
		/* Unreachable: the client's own SYN retries time out too. */
		st->cnt[PX_UNREACHABLE]++;
		rte_pktmbuf_free(p->held_syn);
		p->held_syn = NULL;
	}
	if (ev & TCP_EV_PEER_FIN)
		l->peer_fin = 1;
	if (ev & (TCP_EV_READABLE | TCP_EV_PEER_FIN))
		relay(l, now);
	if (ev & TCP_EV_WRITABLE)
		relay(other(l), now);
	if (ev & (TCP_EV_RESET | TCP_EV_TIMEOUT)) {
		if (ev & TCP_EV_RESET)
			st->cnt[PX_RESET]++;
		if (other(l)->conn != NULL)
			tcp_abort(other(l)->conn, now);
	}
	if (ev & TCP_EV_CLOSED) {
		l->conn = NULL;
		l->closed = 1;
		pair_maybe_put(p);
	}
}

/* port < 0: unknown (a fragment or a header cut short): the address
 * alone decides. */
static bool
rule_match(const struct proxy_rule *r, uint8_t family, const uint8_t *a,
	   int port)
{
	unsigned full, rem;

	if (r->family != family || (r->port != 0 && port >= 0 && r->port != port))
		return false;
	full = r->plen / 8;
	rem = r->plen % 8;
	if (memcmp(r->addr, a, full) != 0)
		return false;
	if (rem != 0 && ((a[full] ^ r->addr[full]) & (uint8_t)(0xff00u >> rem)))
		return false;
	return true;
}

static bool
policy_match(const struct proxy_stage *st, uint8_t family, const uint8_t *a,
	     int port)
{
	for (uint32_t i = 0; i < st->nrules; i++)
		if (rule_match(&st->rules[i], family, a, port))
			return true;
	return false;
}

/* The MSS option of a SYN, 536 (RFC 9293 3.7.1) when absent; *sig is set
 * when the SYN is signed (TCP-MD5, RFC 2385, or TCP-AO, RFC 5925). */
static uint16_t
syn_scan(const uint8_t *th, unsigned hlen, bool *sig)
{
	struct tcpopt_parsed po;
	uint16_t mss = 536;

	*sig = false;
	(void)tcpopt_parse(th, hlen, &po); /* opt[]: the valid options */
	for (unsigned i = 0; i < po.n; i++) {
		const uint8_t *o = th + po.opt[i].off;

		if (po.opt[i].kind == TCPOPT_KIND_MSS)
			mss = (uint16_t)(o[2] << 8 | o[3]);
		else if (po.opt[i].kind == TCPOPT_KIND_MD5 ||
			 po.opt[i].kind == TCPOPT_KIND_AO)
			*sig = true;
	}
	return mss;
}

/* Hold the client's SYN and open the server leg. 0: consumed (held or
 * dropped as a duplicate); -1: let it pass, bridged. */
static int
intercept(struct proxy_stage *st, const struct stage_burst *b,
	  struct rte_mbuf *m, uint64_t now)
{
	const struct pkt_meta *meta = pkt_meta(m);
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	struct tcp_endpoints ep;
	struct proxy_pair *p = st->free;
	struct tcp_conn *c;
	uint32_t left;
	bool sig;

	if (p == NULL) {
		st->cnt[PX_BRIDGED_FULL]++;
		return -1;
	}
	memset(&ep, 0, sizeof(ep));
	ep.mss = syn_scan(d + meta->l4_off, meta->l4_len, &sig);
	if (sig) {
		/* A signature covers the segment and a key sluice does not
		 * hold: only the real ends can speak this connection. */
		st->cnt[PX_SIGNED_BRIDGED]++;
		return -1;
	}
	ep.family = meta->l3 == PKT_L3_IPV4 ? 4 : 6;
	memcpy(ep.laddr, meta->src, 16);
	memcpy(ep.raddr, meta->dst, 16);
	ep.lport = meta->sport;
	ep.rport = meta->dport;
	/* The client's frame as it was: same MACs and tags, other port. */
	memcpy(&ep.lmac, d + 6, 6);
	memcpy(&ep.rmac, d, 6);
	ep.port = b->out_port;
	ep.vlan_count = meta->vlan_count > 2 ? 2 : meta->vlan_count;
	for (unsigned t = 0; t < ep.vlan_count; t++) {
		ep.vlan_tpid[t] = (uint16_t)(d[12 + 4 * t] << 8 | d[13 + 4 * t]);
		ep.vlan_tci[t] = meta->vlan_tci[t];
	}
	/* TFO, experiments and unknown kinds ride on our SYN to the server
	 * (tcp_syn_xopts() says which); the server's answer rides back on
	 * our SYN-ACK to the client (proxy_cb()). */
	ep.xopt_len = (uint8_t)tcp_syn_xopts(m, ep.xopt, TCP_XOPT_MAX, &left);

	memset(&p->cl, 0, sizeof(p->cl));
	memset(&p->sv, 0, sizeof(p->sv));
	p->cl.pair = p->sv.pair = p;
	p->sv.server = 1;
	p->cl_made = 0;
	c = tcp_connect(st->e, &ep, &p->sv, now);
	if (c == NULL) {
		if (rte_errno == EEXIST) {
			/* A retransmitted SYN while the server leg opens. */
			st->cnt[PX_SYN_DUPLICATE]++;
			rte_pktmbuf_free(m);
			return 0;
		}
		st->cnt[PX_BRIDGED_FAILED]++;
		return -1;
	}
	if (ep.xopt_len)
		st->cnt[PX_XOPT_CARRIED]++;
	if (left)
		st->cnt[PX_XOPT_DROPPED]++;
	st->free = p->next_free;
	p->in_use = 1;
	p->held_syn = m;
	p->sv.conn = c;
	st->active++;
	st->cnt[PX_SYN_INTERCEPTED]++;
	return 0;
}

static uint16_t
proxy_stage_burst(void *ctx, const struct stage_burst *b,
		  struct rte_mbuf **pkts, uint16_t n, uint64_t now_ns)
{
	struct proxy_stage *st = ctx;
	bool any = tcp_engine_conn_count(st->e) > 0;
	uint16_t keep = 0;

	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const struct pkt_meta *meta = pkt_meta(m);
		struct tcp_conn *c;
		const uint8_t *a;
		bool syn, whole;

		/* Only TCP of the intercepted prefixes is the engine's
		 * business. Of that, what no proxied connection owns leaves
		 * as it came: bridged flows (the table was full, a signed
		 * SYN, connections older than sluice) with a wrong checksum
		 * or a lying header are the ends' to judge, not ours. */
		if (meta->l3 == PKT_L3_NONE || meta->l4_proto != IPPROTO_TCP ||
		    (meta->flags & PKT_F_PPPOE))
			goto pass;
		whole = (meta->flags & (PKT_F_L4 | PKT_F_MALFORMED | PKT_F_FRAGMENT)) ==
			PKT_F_L4;
		a = b->upstream ? meta->dst : meta->src;
		if (!policy_match(st, meta->l3, a,
				  !whole ? -1 : b->upstream ? meta->dport : meta->sport))
			goto pass;
		if (!whole) {
			/* The engine reassembles nothing and parses no
			 * header cut short: not ours, even on our 4-tuple. */
			st->cnt[(meta->flags & PKT_F_FRAGMENT) ? PX_FRAG_PASSED
							       : PX_MALF_PASSED]++;
			goto pass;
		}
		syn = b->upstream &&
		      (rte_pktmbuf_mtod(m, const uint8_t *)[meta->l4_off + 13] &
		       (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG)) ==
		      RTE_TCP_SYN_FLAG;
		c = any ? tcp_conn_lookup(st->e, m) : NULL;
		if (c != NULL) {
			/* Ours: checked, and dropped if it lies, by the
			 * engine; NO_CONN when TIME-WAIT gave way to a SYN. */
			if (tcp_input_conn(st->e, c, m, now_ns) == TCP_INPUT_CONSUMED)
				continue;
		}
		/* A SYN is intercepted only if the engine would accept it;
		 * nothing else without a connection is ours. */
		if (!syn || tcp_frame_check(m) != 0) {
			st->cnt[PX_NOT_OWNED]++;
			goto pass;
		}
		if (intercept(st, b, m, now_ns) == 0) {
			any = true;
			continue;
		}
pass:
		pkts[keep++] = m;
	}
	return keep;
}

static void
drain_tx(struct proxy_stage *st, struct stage_emitter *em)
{
	struct rte_mbuf *out[PROXY_TX_BATCH];
	uint16_t k;

	while ((k = tcp_tx_burst(st->e, out, PROXY_TX_BATCH)) > 0)
		for (uint16_t j = 0; j < k; j++) {
			struct rte_mbuf *m = out[j];

			/* Stages after us read the metadata: parse as if it
			 * arrived on the other port of the pair. */
			(void)pkt_parse(m, pkt_meta(m), (uint16_t)(m->port ^ 1));
			stage_emit(em, m->port, m);
		}
}

/* Copy what telemetry shows of the engine into the stage, which lives
 * until the process ends (the worker owns both; the telemetry thread
 * reads only the copy). */
static void
publish(struct proxy_stage *st, uint64_t now_ns)
{
	memcpy(st->eng_cnt, tcp_engine_counters(st->e), sizeof(st->eng_cnt));
	st->eng_conns = tcp_engine_conn_count(st->e);
	st->published_ns = now_ns;
}

/* Memory pressure (config/proxy.ini, mbuf_budget): what the proxy holds
 * is estimated as the pool's mbufs in use beyond those in use at start
 * (rx rings), so queues of other stages count against it too. Up to
 * half the budget the windows are whole; from there to the budget the
 * receive window every leg offers shrinks linearly to zero, so senders
 * stop before the pool runs dry. */
static void
pressure(struct proxy_stage *st, uint64_t now_ns)
{
	uint32_t in_use = rte_mempool_in_use_count(st->pool);
	uint32_t half = st->budget / 2, lim;

	st->pressure_ns = now_ns;
	st->held = in_use > st->pool_base ? in_use - st->pool_base : 0;
	if (st->held <= half)
		lim = st->rcv_buf;
	else if (st->held >= st->budget)
		lim = 0;
	else
		lim = (uint32_t)((uint64_t)st->rcv_buf * (st->budget - st->held) /
				 (st->budget - half));
	if (lim < st->rcv_buf)
		st->cnt[PX_PRESSURE_MS]++;
	if (lim != st->rcv_limit) {
		st->rcv_limit = lim;
		tcp_engine_set_rcv_limit(st->e, lim);
	}
}

static void
proxy_stage_poll(void *ctx, struct stage_emitter *em, uint64_t now_ns)
{
	struct proxy_stage *st = ctx;

	if (st->e == NULL)
		return;
	if (now_ns - st->pressure_ns >= PROXY_PRESSURE_NS)
		pressure(st, now_ns);
	tcp_timers_run(st->e, now_ns);
	drain_tx(st, em);
	if (now_ns - st->published_ns >= PROXY_PUBLISH_NS)
		publish(st, now_ns);
}

static void
proxy_stage_flush(void *ctx, struct stage_emitter *em, uint64_t now_ns)
{
	struct proxy_stage *st = ctx;
	struct tcp_engine *e;

	if (st->e == NULL)
		return;
	for (uint32_t i = 0; i < st->npairs; i++) {
		struct proxy_pair *p = &st->pairs[i];

		if (!p->in_use)
			continue;
		st->cnt[PX_ABORTED_AT_EXIT]++;
		rte_pktmbuf_free(p->held_syn);
		p->held_syn = NULL;
		if (p->sv.conn != NULL)
			tcp_abort(p->sv.conn, now_ns);
		if (p->in_use && p->cl.conn != NULL)
			tcp_abort(p->cl.conn, now_ns);
		pair_maybe_put(p);
	}
	drain_tx(st, em);
	/* The last copy, with the RSTs above counted: the engine goes, its
	 * counters stay for telemetry and the exit report. */
	publish(st, now_ns);
	e = st->e;
	st->e = NULL;
	tcp_engine_free(e); /* TIME-WAIT connections and all their mbufs */
	st->eng_conns = 0;
}

static void
proxy_stage_destroy(void *ctx)
{
	struct proxy_stage *st = ctx;

	if (st == NULL)
		return;
	for (uint32_t i = 0; i < st->npairs; i++)
		rte_pktmbuf_free(st->pairs[i].held_syn);
	tcp_engine_free(st->e);
	rte_free(st);
}

static const struct stage_ops proxy_stage_ops = {
	.name = "proxy",
	.burst = proxy_stage_burst,
	.poll = proxy_stage_poll,
	.flush = proxy_stage_flush,
	.destroy = proxy_stage_destroy,
};

static int
proxy_stage_create(const void *conf, const struct stage_env *env,
		   struct stage *out)
{
	const struct proxy_conf *c = conf;
	struct tcp_engine_params prm;
	struct proxy_stage *st;
	char name[32];
	uint64_t k0, k1;

	st = rte_zmalloc_socket("proxy_stage",
				sizeof(*st) + (size_t)c->max_conns * sizeof(st->pairs[0]),
				RTE_CACHE_LINE_SIZE, env->socket);
	if (st == NULL)
		return -ENOMEM;
	st->nrules = c->nrules;
	memcpy(st->rules, c->rules, sizeof(st->rules));
	st->npairs = c->max_conns;
	for (uint32_t i = c->max_conns; i-- > 0;) {
		st->pairs[i].st = st;
		st->pairs[i].next_free = st->free;
		st->free = &st->pairs[i];
	}
	tcp_engine_params_init(&prm);
	snprintf(name, sizeof(name), "proxy_w%u", env->worker);
	prm.name = name;
	prm.socket_id = env->socket;
	/* Two legs per connection, and as many again in TIME-WAIT (the
	 * oldest of which give way when the engine is full). Only live legs
	 * have segments in flight: records for two legs per connection, at
	 * the engine's default of 64 each. */
	prm.max_conns = 4 * c->max_conns;
	prm.max_tx_segments = 2 * 64 * c->max_conns;
	prm.pool = env->pool;
	prm.snd_buf = c->snd_buf;
	prm.rcv_buf = c->rcv_buf;
	prm.cc = c->cc;
	prm.syn_retries = c->syn_retries;
	prm.idle_timeout_ns = c->idle_ns;
	prm.fin_wait2_timeout_ns = c->fin_wait2_ns;
	prm.persist_timeout_ns = c->persist_ns;
	prm.txq_size = 4096;
	prm.cb = proxy_cb;
	k0 = rte_rand();
	k1 = rte_rand();
	memcpy(prm.isn_key, &k0, 8);
	memcpy(prm.isn_key + 8, &k1, 8);
	st->e = tcp_engine_create(&prm);
	if (st->e == NULL) {
		int rc = -rte_errno;

		rte_free(st);
		return rc ? rc : -ENOMEM;
	}
	st->pool = env->pool;
	st->pool_base = rte_mempool_in_use_count(env->pool);
	st->budget = c->mbuf_budget;
	if (st->budget > env->pool->size * 3 / 4) /* a pool smaller than the file said */
		st->budget = env->pool->size * 3 / 4;
	st->rcv_buf = st->rcv_limit = c->rcv_buf;
	if (env->worker == 0) {
		/* The worst case of the configuration, in mbufs of full-sized
		 * segments: every connection's two legs with both buffers
		 * full, on every worker. */
		uint64_t worst = (uint64_t)env->nb_workers * c->max_conns * 2 *
				 ((c->snd_buf + c->rcv_buf + PROXY_SEG_BYTES - 1) / PROXY_SEG_BYTES);

		printf("proxy: intercepting %u prefix(es) from the subscriber side, "
		       "%u connections per worker, snd_buf %u, rcv_buf %u, %s, "
		       "mbuf_budget %u of %u\n",
		       c->nrules, c->max_conns, c->snd_buf, c->rcv_buf,
		       c->cc == TCP_CC_NEWRENO ? "newreno" : "cubic", st->budget,
		       env->pool->size);
		if (worst > st->budget)
			printf("proxy: warning: [proxy] max_connections x 2 legs x "
			       "(snd_buf + rcv_buf) could hold %" PRIu64 " mbufs, more than "
			       "mbuf_budget (%u): windows shrink from half the budget on, "
			       "and are closed at the budget\n", worst, st->budget);
	}
	out->ops = &proxy_stage_ops;
	out->ctx = st;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Counters                                                            */

static void
sum_counters(void *const *ctxs, unsigned nb_workers, uint64_t px[PX_MAX],
	     uint64_t eng[TCP_CNT_MAX], uint64_t *active)
{
	memset(px, 0, sizeof(uint64_t) * PX_MAX);
	memset(eng, 0, sizeof(uint64_t) * TCP_CNT_MAX);
	*active = 0;
	for (unsigned w = 0; w < nb_workers; w++) {
		const struct proxy_stage *st = ctxs[w];

		if (st == NULL)
			continue;
		for (unsigned k = 0; k < PX_MAX; k++)
			px[k] += st->cnt[k];
		/* Never st->e: the worker frees it at flush. */
		for (unsigned k = 0; k < TCP_CNT_MAX; k++)
			eng[k] += st->eng_cnt[k];
		*active += st->active;
	}
}

static int
proxy_telemetry(void *const *ctxs, unsigned nb_workers, const char *params,
		struct rte_tel_data *d)
{
	uint64_t px[PX_MAX], eng[TCP_CNT_MAX], active, legs = 0;
	char key[64];

	(void)params;
	sum_counters(ctxs, nb_workers, px, eng, &active);
	for (unsigned w = 0; w < nb_workers; w++) {
		const struct proxy_stage *st = ctxs[w];

		if (st != NULL)
			legs += st->eng_conns;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "connections_active", active);
	{
		uint64_t held = 0, lim = 0;

		for (unsigned w = 0; w < nb_workers; w++) {
			const struct proxy_stage *st = ctxs[w];

			if (st == NULL)
				continue;
			held = st->held; /* one pool: every worker sees it */
			lim += st->rcv_limit;
		}
		rte_tel_data_add_dict_u64(d, "mbufs_held", held);
		rte_tel_data_add_dict_u64(d, "rcv_window_limit",
					  nb_workers ? lim / nb_workers : 0);
	}
	/* Memory accounting (perf/bench.sh proxy): state of the engine
	 * connections held now (both legs, TIME-WAIT included) and of the
	 * active pairs. Payload is in mbufs: /sluice/totals mempool_in_use. */
	rte_tel_data_add_dict_u64(d, "engine_connections", legs);
	rte_tel_data_add_dict_u64(d, "conn_state_bytes", tcp_conn_size());
	rte_tel_data_add_dict_u64(d, "pair_state_bytes", sizeof(struct proxy_pair));
	rte_tel_data_add_dict_u64(d, "state_bytes_in_use",
				  legs * tcp_conn_size() + active * sizeof(struct proxy_pair));
	for (unsigned k = 0; k < PX_MAX; k++)
		rte_tel_data_add_dict_u64(d, px_names[k], px[k]);
	for (unsigned k = 0; k < TCP_CNT_MAX; k++) {
		snprintf(key, sizeof(key), "tcp_%s", tcp_cnt_name((enum tcp_cnt)k));
		rte_tel_data_add_dict_u64(d, key, eng[k]);
	}
	return 0;
}

static void
proxy_report(void *const *ctxs, unsigned nb_workers, FILE *out)
{
	uint64_t px[PX_MAX], eng[TCP_CNT_MAX], active;

	sum_counters(ctxs, nb_workers, px, eng, &active);
	fprintf(out, "proxy connections_active=%" PRIu64, active);
	for (unsigned k = 0; k < PX_MAX; k++)
		fprintf(out, " %s=%" PRIu64, px_names[k], px[k]);
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
	.owns_section = proxy_owns_section,
	.create = proxy_stage_create,
	.telemetry = proxy_telemetry,
	/* At most 127 characters: rte_telemetry refuses longer help. */
	.telemetry_help = "Transparent TCP proxy: connections opened, refused, reset, "
			  "active, bytes each way, engine counters.",
	.report = proxy_report,
};
