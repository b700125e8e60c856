/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * [aqm] rwnd_clamp: the receive-window clamp (lib/rwnd) on the worker
 * that owns the pipes. Every TCP segment a worker queues in a pipe, or
 * sends past it, is accounted before the queue; an ACK of a connection
 * whose other side has data queued here gets its window lowered so that
 * the sender keeps at most rwnd_headroom bytes queued in sluice.
 */
#include <inttypes.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_telemetry.h>

#include "rwnd.h"
#include "stage_aqm_priv.h"

int
aqm_rwnd_create(struct aqm_worker *w, const struct aqm_conf *c, int socket)
{
	struct rwnd_params p;
	size_t sz;
	void *mem;

	w->rw = NULL;
	if (!c->rwnd_clamp)
		return 0;
	rwnd_params_default(&p);
	p.flows = c->rwnd_flows;
	p.headroom = (uint32_t)c->rwnd_headroom;
	sz = rwnd_memsize(&p);
	if (sz == 0)
		return -EINVAL;
	mem = rte_malloc_socket("aqm_rwnd", sz, RTE_CACHE_LINE_SIZE, socket);
	if (mem == NULL) {
		aqm_log(RTE_LOG_ERR, "[aqm] rwnd_flows = %u needs %zu MB per worker, more than the EAL's memory has free: lower rwnd_flows, or give the EAL more memory (-m, hugepages)",
			c->rwnd_flows, (sz + (1u << 20) - 1) >> 20);
		return -ENOMEM;
	}
	w->rw = rwnd_init(mem, &p);
	w->rw_headroom = p.headroom;
	/* An ACK held for the filter reaches its sender that much later:
	 * the sender's leg grows by the time it is held (aqm_rwnd_burst()). */
	for (int d = 0; d < 2; d++)
		w->rw_extra[d] = (c->ack_filter >> d) & 1 ? c->ack_hold_ns : 0;
	return 0;
}

void
aqm_rwnd_free(struct aqm_worker *w)
{
	rte_free(w->rw);
	w->rw = NULL;
}

/* The side that sends what goes dir. */
static inline uint8_t
side_of(enum aqm_dir dir)
{
	return dir == AQM_DIR_UP ? RWND_SUB : RWND_NET;
}

/* What rwnd_seg_parse() leaves to the caller: the segment's connection,
 * its payload and the side that sent it. */
static inline void
seg_of_flow(struct rwnd_seg *s, struct pkt_meta *meta, uint8_t side)
{
	s->side = side;
	s->hash = pkt_flow_hash(meta);
	s->ports = rwnd_ports(meta->sport, meta->dport);
	s->payload = aqm_tcp_payload(meta);
}

void
aqm_rwnd_burst(struct aqm_worker *w, enum aqm_dir dir, struct rte_mbuf **pkts,
	       uint16_t n, uint64_t now_ns)
{
	struct rwnd *t = w->rw;
	/* The data an ACK going this way answers is queued the other way. */
	const struct aqm_sched *other = aqm_subs_sched(w->subs,
		dir == AQM_DIR_UP ? AQM_DIR_DOWN : AQM_DIR_UP);
	const struct aqm_sched *own = aqm_subs_sched(w->subs, dir);
	const uint8_t side = side_of(dir);
	const uint64_t extra = w->rw_extra[dir];

	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct pkt_meta *meta = pkt_meta(m);
		struct rwnd_seg s;
		struct rwnd_ref ref;
		uint32_t backlog;
		uint16_t win;
		uint8_t *hdr;

		if (!aqm_is_tcp(meta))
			continue;
		hdr = aqm_tcp_hdr(m, meta);
		if (rwnd_seg_parse(hdr, meta->l4_len, &s) < 0 && !(s.flags & 0x02))
			continue;
		seg_of_flow(&s, meta, side);
		if (!rwnd_track(t, &s, now_ns, &ref))
			continue;
		backlog = aqm_sched_flow_backlog(other, meta->pipe, s.hash);
		/*
		 * lib/aqm counts frame bytes; the rule wants sequence bytes.
		 * The data's headers are taken to be as long as this ACK's,
		 * one per 1514 bytes queued: no more frames than there are
		 * (of up to that size), so what is left is at least the
		 * payload queued, and the window at most the rule's.
		 */
		if (backlog != 0) {
			uint32_t hdrs = (backlog + 1513) / 1514 * (uint32_t)meta->payload_off;
			backlog = backlog > hdrs ? backlog - hdrs : 0;
		}
		/*
		 * A pure ACK may wait in the ACK hold. While the flow has
		 * nothing queued here (it is running dry), counted as the
		 * hold's limit, added to the sender's leg: the flow needs
		 * room to grow. Else as long as the hold's slots lately
		 * lived on the ACK's pipe (lib/aqm measures it), at the
		 * sender's own rate: a connection's newest ACK goes on about
		 * that often, and the window must last that long. Any rate
		 * is counted at most at the data pipe's (lib/rwnd/README.md).
		 */
		uint64_t dry = 0, held = 0;
		if (extra != 0 && s.payload == 0) {
			if (backlog == 0)
				dry = extra;
			else
				held = aqm_sched_ack_hold_ns(own, meta->pipe);
		}
		win = rwnd_window(t, &ref, &s, backlog, dry, held,
				  aqm_sched_pipe_rate_Bps(other, meta->pipe));
		if (win == s.win)
			continue;
		/* A buffer another mbuf also points at is left alone. */
		if (pkt_data_shared(m)) {
			w->rw_shared++;
			continue;
		}
		rwnd_write(hdr, win, pkt_tcp_csum_partial(m));
	}
}

void
aqm_rwnd_departed(struct aqm_worker *w, enum aqm_dir dir, struct rte_mbuf **pkts,
		  uint16_t n, uint64_t now_ns)
{
	const uint8_t side = side_of(dir);

	for (uint16_t i = 0; i < n; i++) {
		struct pkt_meta *meta = pkt_meta(pkts[i]);
		struct rwnd_seg s;

		/* Only the handshake's segments start a leg. */
		if (likely(!(meta->flags & PKT_F_TCP_SYN)) || !aqm_is_tcp(meta))
			continue;
		if (rwnd_seg_parse(aqm_tcp_hdr(pkts[i], meta), meta->l4_len, &s) < 0)
			continue;
		seg_of_flow(&s, meta, side);
		rwnd_departed(w->rw, &s, now_ns);
	}
}

/* Counters summed over the workers; false if no worker clamps. */
static bool
rwnd_sum(void *const *ctxs, unsigned nb_workers, struct rwnd_counters *c,
	 uint64_t *shared, uint64_t *entries)
{
	/* The workers' clock (worker_now_ns()): TSC ticks in ns. */
	const uint64_t now_ns = (uint64_t)((unsigned __int128)rte_rdtsc() *
					   1000000000u / rte_get_tsc_hz());
	bool any = false;

	memset(c, 0, sizeof(*c));
	*shared = 0;
	*entries = 0;
	for (unsigned i = 0; i < nb_workers; i++) {
		const struct aqm_worker *w = ctxs[i];

		if (w == NULL || w->rw == NULL)
			continue;
		any = true;
		const uint64_t *src = (const uint64_t *)rwnd_counters(w->rw);
		uint64_t *dst = (uint64_t *)c;
		for (size_t k = 0; k < RWND_NB_COUNTERS; k++)
			dst[k] += src[k];
		*shared += w->rw_shared;
		/* (Read while the worker writes: a count, not a snapshot.) */
		*entries += rwnd_entries(w->rw, now_ns);
	}
	return any;
}

int
aqm_rwnd_telemetry(void *const *ctxs, unsigned nb_workers, struct rte_tel_data *d)
{
	struct rwnd_counters c;
	uint64_t shared, entries;
	struct rte_tel_data *t;

	if (!rwnd_sum(ctxs, nb_workers, &c, &shared, &entries))
		return 0;
	t = rte_tel_data_alloc();
	if (t == NULL)
		return -ENOMEM;
	rte_tel_data_start_dict(t);
	const uint64_t *v = (const uint64_t *)&c;
	for (size_t k = 0; k < RWND_NB_COUNTERS; k++)
		rte_tel_data_add_dict_u64(t, rwnd_counter_names[k], v[k]);
	rte_tel_data_add_dict_u64(t, "shared_unwritten", shared);
	rte_tel_data_add_dict_u64(t, "connections", entries);
	rte_tel_data_add_dict_container(d, "rwnd", t, 0);
	return 0;
}

void
aqm_rwnd_report(void *const *ctxs, unsigned nb_workers, FILE *out)
{
	struct rwnd_counters c;
	uint64_t shared, entries;

	if (!rwnd_sum(ctxs, nb_workers, &c, &shared, &entries))
		return;
	fprintf(out, "aqm_rwnd");
	const uint64_t *v = (const uint64_t *)&c;
	for (size_t k = 0; k < RWND_NB_COUNTERS; k++)
		fprintf(out, " %s=%" PRIu64, rwnd_counter_names[k], v[k]);
	fprintf(out, " shared_unwritten=%" PRIu64 " connections=%" PRIu64 "\n",
		shared, entries);
}
