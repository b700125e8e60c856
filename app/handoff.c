/* SPDX-License-Identifier: BSD-3-Clause */
/* Cross-worker hand-off: the ring mesh and the per-owner batching. */
#include <stdio.h>
#include <stdlib.h>

#include <rte_errno.h>
#include <rte_lcore.h>

#include "handoff.h"

struct handoff_mesh {
	unsigned nb_workers;
	struct rte_ring *rings[];   /* [from * n + to], NULL where from == to */
};

struct handoff_mesh *
handoff_mesh_create(const char *name, unsigned nb_workers, uint32_t ring_size)
{
	uint32_t size = rte_align32pow2(ring_size);
	struct handoff_mesh *m;

	m = calloc(1, sizeof(*m) +
		   (size_t)nb_workers * nb_workers * sizeof(m->rings[0]));
	if (m == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	m->nb_workers = nb_workers;
	for (unsigned from = 0; from < nb_workers && nb_workers > 1; from++)
		for (unsigned to = 0; to < nb_workers; to++) {
			char rname[RTE_RING_NAMESIZE];
			struct rte_ring *r;

			if (from == to)
				continue;
			snprintf(rname, sizeof(rname), "%s%u_%u", name, from, to);
			r = rte_ring_create(rname, size, SOCKET_ID_ANY,
					    RING_F_SP_ENQ | RING_F_SC_DEQ);
			if (r == NULL) {
				int e = rte_errno;

				for (unsigned i = 0; i < nb_workers * nb_workers; i++)
					rte_ring_free(m->rings[i]);
				free(m);
				rte_errno = e;
				return NULL;
			}
			m->rings[from * nb_workers + to] = r;
		}
	return m;
}

void
handoff_port_init(const struct handoff_mesh *mesh, unsigned worker,
		  struct handoff_port *port, struct rte_ring **slots)
{
	unsigned n = mesh->nb_workers;

	port->index = worker;
	port->nb_workers = n;
	port->out = slots;
	port->in = slots + n;
	for (unsigned o = 0; o < n; o++) {
		port->out[o] = mesh->rings[worker * n + o];
		port->in[o] = mesh->rings[o * n + worker];
	}
}

void
handoff_stage_flush(const struct handoff_port *port, struct handoff_stage *st,
		    uint64_t *sent, uint64_t *dropped)
{
	struct rte_mbuf *batch[HANDOFF_BATCH];
	uint16_t na = st->n;

	while (na) {
		uint16_t to = st->to[0], k = 0, rest = 0;
		unsigned s;

		for (uint16_t i = 0; i < na; i++) {
			if (st->to[i] == to) {
				batch[k++] = st->pkts[i];
			} else {
				st->pkts[rest] = st->pkts[i];
				st->to[rest++] = st->to[i];
			}
		}
		s = handoff_send(port, to, batch, k);
		*sent += s;
		*dropped += k - s;
		na = rest;
	}
	st->n = 0;
}
