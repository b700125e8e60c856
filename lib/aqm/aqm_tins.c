/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Diffserv tins (CAKE's diffserv3 and diffserv4 presets, as tc-cake(8)
 * documents them) and wash. The mapping follows the DSCP names of RFC
 * 2474 (CSx), RFC 3246 (EF), RFC 5865 (VA), RFC 2597 (AFxy) and RFC 8622
 * (LE). Tin 0 is Best Effort in every mode, so that unmarked traffic
 * hashes to the same flow queue as without tins.
 */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "aqm_priv.h"

enum { TIN_BE = 0, TIN_BULK = 1, TIN_VIDEO = 2 };

/* DSCP code points. */
#define DSCP_LE 1
#define DSCP_TOS2 2  /* legacy "max throughput" */
#define DSCP_TOS4 4  /* legacy "min delay" */
#define DSCP_CS(n) ((n) << 3)
#define DSCP_AF(c, d) ((c) << 3 | (d) << 1)
#define DSCP_VA 44
#define DSCP_EF 46

/* 3 and 4 tin modes; everything not named is Best Effort (0). */
#define D3_VOICE 2
#define D4_VOICE 3
const uint8_t aqm_tin_map[3][64] = {
	[AQM_DIFFSERV_3] = {
		[DSCP_LE] = TIN_BULK, [DSCP_CS(1)] = TIN_BULK,
		[DSCP_CS(7)] = D3_VOICE, [DSCP_CS(6)] = D3_VOICE,
		[DSCP_EF] = D3_VOICE, [DSCP_VA] = D3_VOICE,
		[DSCP_CS(5)] = D3_VOICE, [DSCP_CS(4)] = D3_VOICE,
		[DSCP_TOS4] = D3_VOICE,
	},
	[AQM_DIFFSERV_4] = {
		[DSCP_LE] = TIN_BULK, [DSCP_CS(1)] = TIN_BULK,
		[DSCP_AF(4, 1)] = TIN_VIDEO, [DSCP_AF(4, 2)] = TIN_VIDEO,
		[DSCP_AF(4, 3)] = TIN_VIDEO, [DSCP_AF(3, 1)] = TIN_VIDEO,
		[DSCP_AF(3, 2)] = TIN_VIDEO, [DSCP_AF(3, 3)] = TIN_VIDEO,
		[DSCP_CS(3)] = TIN_VIDEO, [DSCP_AF(2, 1)] = TIN_VIDEO,
		[DSCP_AF(2, 2)] = TIN_VIDEO, [DSCP_AF(2, 3)] = TIN_VIDEO,
		[DSCP_CS(2)] = TIN_VIDEO, [DSCP_TOS4] = TIN_VIDEO,
		[DSCP_CS(7)] = D4_VOICE, [DSCP_CS(6)] = D4_VOICE,
		[DSCP_EF] = D4_VOICE, [DSCP_VA] = D4_VOICE,
		[DSCP_CS(5)] = D4_VOICE, [DSCP_CS(4)] = D4_VOICE,
	},
};

struct tin_mode {
	const char *name;
	uint8_t ntins;
	const char *tin_names[AQM_TINS_MAX];
	uint8_t shift[AQM_TINS_MAX];  /* threshold = pipe rate >> shift */
	uint8_t order[AQM_TINS_MAX];  /* highest priority first */
};

/*
 * Thresholds: Bulk 1/16, Best Effort all of it, Video 1/2, Voice 1/4.
 * Priority among the tins under their thresholds: Voice, Video, Bulk,
 * then Best Effort. Best Effort's threshold is the whole pipe, so it is
 * never over it; were it above Bulk, a saturating Best Effort would leave
 * Bulk nothing. Bulk first costs Best Effort one packet in 16 at most.
 */
static const struct tin_mode tin_modes[] = {
	[AQM_DIFFSERV_BESTEFFORT] = { "besteffort", 1, { "besteffort" }, { 0 }, { 0 } },
	[AQM_DIFFSERV_3] = { "diffserv3", 3, { "besteffort", "bulk", "voice" },
			     { 0, 4, 2 }, { D3_VOICE, TIN_BULK, TIN_BE } },
	[AQM_DIFFSERV_4] = { "diffserv4", 4, { "besteffort", "bulk", "video", "voice" },
			     { 0, 4, 1, 2 }, { D4_VOICE, TIN_VIDEO, TIN_BULK, TIN_BE } },
};

unsigned int
aqm_diffserv_tins(enum aqm_diffserv ds)
{
	return (unsigned int)ds < RTE_DIM(tin_modes) ? tin_modes[ds].ntins : 0;
}

unsigned int
aqm_diffserv_tin(enum aqm_diffserv ds, uint8_t dscp)
{
	if (ds == AQM_DIFFSERV_BESTEFFORT || (unsigned int)ds >= RTE_DIM(tin_modes))
		return 0;
	return aqm_tin_map[ds][dscp & 63];
}

const char *
aqm_diffserv_tin_name(enum aqm_diffserv ds, unsigned int t)
{
	if ((unsigned int)ds >= RTE_DIM(tin_modes) || t >= tin_modes[ds].ntins)
		return NULL;
	return tin_modes[ds].tin_names[t];
}

int
aqm_parse_diffserv(const char *s, enum aqm_diffserv *ds)
{
	for (unsigned int i = 0; i < RTE_DIM(tin_modes); i++) {
		if (strcasecmp(s, tin_modes[i].name) == 0) {
			*ds = (enum aqm_diffserv)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *
aqm_diffserv_name(enum aqm_diffserv ds)
{
	return (unsigned int)ds < RTE_DIM(tin_modes) ? tin_modes[ds].name : "unknown";
}

void
aqm_tins_init(struct aqm_sched *s, struct aqm_pipe *p, unsigned int ds)
{
	struct aqm_pipe_tins *pt = aqm_pipe_tins(s, p);
	const struct tin_mode *tm = &tin_modes[ds];

	memset(pt, 0, sizeof(*pt));
	pt->mode = (uint8_t)ds;
	pt->ntins = tm->ntins;
	for (unsigned int t = 0; t < AQM_TINS_MAX; t++) {
		pt->tin[t].new_flows.head = pt->tin[t].new_flows.tail = AQM_NONE;
		pt->tin[t].old_flows.head = pt->tin[t].old_flows.tail = AQM_NONE;
		pt->tin[t].shift = tm->shift[t];
		pt->order[t] = tm->order[t];
	}
}

/*
 * The flow queues are cut into one slice per tin, and a packet hashes
 * into its tin's slice: a flow of one tin can never share a queue with a
 * flow of another. (Sharing one, a voice flow waited behind a Best
 * Effort flow's backlog in that flow's tin; with a random seed, 1 run in
 * 60 of 18 flows in 1024 queues.) Fewer queues than tins: one slice.
 */
void
aqm_tin_slice(const struct aqm_pipe *p, const struct rte_mbuf *m,
	      uint32_t *base, uint32_t *n)
{
	unsigned int ds = p->diffserv & AQM_DS_MODE;
	uint32_t slice = (p->flow_mask + 1) / tin_modes[ds].ntins;

	if (slice == 0) {
		*base = 0;
		*n = p->flow_mask + 1;
		return;
	}
	*base = aqm_tin_of(ds, m) * slice;
	*n = slice;
}

struct aqm_list *
aqm_tin_new_list(struct aqm_sched *s, struct aqm_pipe *p, struct aqm_flow *f,
		 const struct rte_mbuf *m)
{
	f->tin = aqm_tin_of(p->diffserv & AQM_DS_MODE, m) & 3;
	return &aqm_pipe_tins(s, p)->tin[f->tin].new_flows;
}

void
aqm_tins_bypass(struct aqm_sched *s, struct aqm_pipe *p, const struct rte_mbuf *m)
{
	struct aqm_pipe_tins *pt = aqm_pipe_tins(s, p);
	struct aqm_tin *t = &pt->tin[aqm_tin_of(p->diffserv & AQM_DS_MODE, m)];
	uint32_t len = rte_pktmbuf_pkt_len(m);
	uint64_t wire = aqm_pipe_wire_len(p, len);

	/* What a dequeue of m from an otherwise empty pipe does. */
	aqm_tin_charge(p, pt, t, wire);
	t->st.tx_pkts++;
	t->st.tx_bytes += len;
}

void
aqm_dscp_wash(struct aqm_sched *s, struct rte_mbuf *m)
{
	const struct pkt_meta *meta = pkt_meta(m);
	uint8_t *ip;

	if ((meta->l3 != PKT_L3_IPV4 && meta->l3 != PKT_L3_IPV6) ||
	    (uint32_t)meta->l3_off + 12 > rte_pktmbuf_data_len(m))
		return;
	ip = rte_pktmbuf_mtod_offset(m, uint8_t *, meta->l3_off);
	if (meta->l3 == PKT_L3_IPV4) {
		uint16_t old = (uint16_t)(ip[0] << 8 | ip[1]);
		uint16_t hc = (uint16_t)(ip[10] << 8 | ip[11]);

		if ((ip[1] & 0xfc) == 0)
			return;
		if (!RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1) {
			s->wash_shared++;
			return;
		}
		ip[1] &= 0x03;
		hc = aqm_csum_replace16(hc, old, (uint16_t)(old & 0xff03));
		ip[10] = (uint8_t)(hc >> 8);
		ip[11] = (uint8_t)hc;
	} else {
		/* Traffic class: DSCP in the low nibble of byte 0 and the top
		 * two bits of byte 1, ECN in the next two (RFC 8200 s. 7). */
		if ((ip[0] & 0x0f) == 0 && (ip[1] & 0xc0) == 0)
			return;
		if (!RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1) {
			s->wash_shared++;
			return;
		}
		ip[0] &= 0xf0;
		ip[1] &= 0x3f;
	}
	s->washed++;
}

int
aqm_sched_pipe_tin_stats(const struct aqm_sched *s, uint32_t pipe,
			 struct aqm_tin_stats st[AQM_TINS_MAX])
{
	const struct aqm_pipe_tins *pt;

	if (pipe >= s->npipes)
		return -EINVAL;
	if ((s->pipes[pipe].diffserv & AQM_DS_MODE) == 0)
		return 0;
	pt = &s->tins[pipe];
	for (unsigned int t = 0; t < pt->ntins; t++) {
		st[t].tx_pkts = pt->tin[t].st.tx_pkts;
		st[t].tx_bytes = pt->tin[t].st.tx_bytes;
		st[t].drops = pt->tin[t].st.drops;
		st[t].marks = pt->tin[t].st.marks;
	}
	return pt->ntins;
}

unsigned int
aqm_sched_tin_stats(const struct aqm_sched *s, enum aqm_diffserv ds,
		    struct aqm_tin_stats st[AQM_TINS_MAX])
{
	unsigned int n = ds == AQM_DIFFSERV_BESTEFFORT ? 0 : aqm_diffserv_tins(ds);

	memset(st, 0, AQM_TINS_MAX * sizeof(*st));
	if (n == 0 || s->tins == NULL)
		return n;
	/* Removed pipes' counters first (aqm_sched_pipe_remove()). */
	memcpy(st, s->retired_tins[ds & AQM_DS_MODE], AQM_TINS_MAX * sizeof(*st));
	for (uint32_t i = 0; i < s->npipes; i++) {
		const struct aqm_pipe_tins *pt = &s->tins[i];

		if ((s->pipes[i].diffserv & AQM_DS_MODE) != (unsigned int)ds ||
		    s->pipes[i].where == AQM_PIPE_REMOVED)
			continue;
		for (unsigned int t = 0; t < n; t++) {
			st[t].tx_pkts += pt->tin[t].st.tx_pkts;
			st[t].tx_bytes += pt->tin[t].st.tx_bytes;
			st[t].drops += pt->tin[t].st.drops;
			st[t].marks += pt->tin[t].st.marks;
		}
	}
	return n;
}

void
aqm_sched_wash_stats(const struct aqm_sched *s, uint64_t *washed, uint64_t *shared)
{
	*washed = s->washed;
	*shared = s->wash_shared;
}
