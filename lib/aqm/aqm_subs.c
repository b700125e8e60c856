/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Subscriber table: rte_fib (IPv4) / rte_lpm6 map a prefix to a pipe id, the same
 * id in the downstream and the upstream scheduler. Pipe 0 is the default.
 * An exact-match hash answers "which pipe has this very prefix?" at load
 * and reload: rte_lpm_is_rule_present() scans every rule of the depth, so
 * a reload of 100k /32 subscribers took its worker off the datapath for
 * about 12 s.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_fib.h>
#include <rte_lpm6.h>
#include <rte_malloc.h>

#include "aqm_priv.h"
#include "aqm_subs.h"
#include "aqm_subs_test.h"

struct aqm_subs {
	struct aqm_sched *sched[2];  /* by enum aqm_dir */
	/* IPv4: DIR-24-8 like rte_lpm, but its rules live in a tree
	 * (rte_rib), so an add costs O(32), not rte_lpm_add()'s scan of
	 * every rule of the depth: 100k /32s took 9 s of an 11 s start. */
	struct rte_fib *fib4;
	struct rte_lpm6 *lpm6;
	struct rte_hash *exact;      /* struct prefix_key -> tag(pipe id) */
	struct rte_hash *groups;     /* uint64_t group -> tag(pipe id) */
	uint32_t gen;                /* of aqm_subs_update(), for the tags */
	/*
	 * Pipe ids, the same in both schedulers. An id is live while
	 * prefixes lead to it (refs); when the last one goes its pipes are
	 * removed and the id joins a FIFO of free ids, which new pipes take
	 * (oldest first) before fresh ones (next_id on).
	 */
	uint32_t *refs;              /* [id]: prefixes that lead to it */
	uint64_t *pipe_group;        /* [id]: its group (0: none) */
	uint8_t *pipe_gen;           /* [id]: bumped each time it is removed */
	uint32_t *freeq;             /* ring of free ids, cap_ids slots */
	uint32_t free_head, free_tail; /* free-running */
	uint32_t next_id;            /* first id never used */
	uint32_t cap_ids;            /* max_subs + 1 */
	uint32_t *scratch_del;       /* per update: ids of removed prefixes */
	uint32_t *scratch_new;       /* per update: new ids, then entry index */
	uint64_t *scratch_grp;       /* per update: groups of the freed ids */
	uint64_t removed;            /* prefixes removed */
	uint32_t nsubs;
	uint32_t max_subs;
	uint32_t nv6;
	uint32_t max_v6;
	enum aqm_default_policy policy;
	struct aqm_pipe_params pipe; /* template */
	uint8_t ack_filter_dirs;     /* 1 << enum aqm_dir */
	bool hosts;                  /* schedulers keep host state */
};

/* A prefix as the hash knows it: host bits clear, unused bytes zero. */
struct prefix_key {
	uint8_t family;
	uint8_t depth;
	uint8_t addr[16];
};

/*
 * The hashes' data: the pipe id (24 bits), the id's incarnation
 * (pipe_gen, 8 bits: a group key left over from a removed pipe is seen to
 * be stale), and in the upper half the update that added the key, so
 * that a failed update takes back exactly its own keys.
 */
static inline void *
tag(const struct aqm_subs *s, uint32_t id)
{
	return (void *)(uintptr_t)((uint64_t)s->gen << 32 |
				   (uint32_t)s->pipe_gen[id] << 24 | id);
}

static inline uint32_t
tag_id(const void *d)
{
	return (uint32_t)(uintptr_t)d & 0xffffff;
}

static inline uint8_t
tag_pipe_gen(const void *d)
{
	return (uint8_t)((uint32_t)(uintptr_t)d >> 24);
}

static inline uint32_t
tag_gen(const void *d)
{
	return (uint32_t)((uint64_t)(uintptr_t)d >> 32);
}

static void
prefix_key(const struct aqm_sub_entry *e, struct prefix_key *k)
{
	unsigned int len = e->family == 4 ? 4 : 16;

	memset(k, 0, sizeof(*k));
	k->family = e->family;
	k->depth = e->depth;
	memcpy(k->addr, e->addr, len);
	for (unsigned int bit = e->depth; bit < len * 8; bit++)
		k->addr[bit / 8] &= (uint8_t)~(0x80u >> (bit % 8));
}

void
aqm_subs_params_default(struct aqm_subs_params *p)
{
	memset(p, 0, sizeof(*p));
	p->name = "aqm_subs";
	p->socket_id = SOCKET_ID_ANY;
	p->max_subs = 1024;
	p->max_v6_subs = 1024;
	aqm_pipe_params_default(&p->pipe);
	p->pipe.fq.flows = 32;
	p->pipe.fq.limit_pkts = 1024;
	p->pipe.fq.memory_limit = 4u << 20;
	p->default_policy = AQM_DEFAULT_PASS;
	aqm_pipe_params_default(&p->default_pipe);
	aqm_sched_params_default(&p->sched);
}

void
aqm_subs_free(struct aqm_subs *s)
{
	if (s == NULL)
		return;
	aqm_sched_free(s->sched[0]);
	aqm_sched_free(s->sched[1]);
	rte_fib_free(s->fib4);
	rte_lpm6_free(s->lpm6);
	rte_hash_free(s->exact);
	rte_hash_free(s->groups);
	rte_free(s->refs);
	rte_free(s->pipe_group);
	rte_free(s->pipe_gen);
	rte_free(s->freeq);
	rte_free(s->scratch_del);
	rte_free(s->scratch_new);
	rte_free(s->scratch_grp);
	rte_free(s);
}

struct aqm_subs *
aqm_subs_create(const struct aqm_subs_params *p)
{
	struct aqm_subs *s;
	char name[RTE_LPM6_NAMESIZE];
	uint32_t def_flows;
	int err = ENOMEM;

	if (p == NULL || p->max_subs == 0 || p->max_subs >= (1u << 24) - 1 ||
	    p->pipe.fq.flows == 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	s = rte_zmalloc_socket("aqm_subs", sizeof(*s), RTE_CACHE_LINE_SIZE,
			       p->socket_id);
	if (s == NULL)
		goto fail;
	s->max_subs = p->max_subs;
	s->max_v6 = p->max_v6_subs;
	s->policy = p->default_policy;
	s->pipe = p->pipe;
	s->ack_filter_dirs = p->ack_filter_dirs;
	s->cap_ids = p->max_subs + 1;
	s->next_id = 1;
	s->refs = rte_zmalloc_socket("aqm_subs_refs", s->cap_ids * sizeof(*s->refs),
				     0, p->socket_id);
	s->pipe_group = rte_zmalloc_socket("aqm_subs_grp", s->cap_ids * sizeof(*s->pipe_group),
					   0, p->socket_id);
	s->pipe_gen = rte_zmalloc_socket("aqm_subs_gen", s->cap_ids, 0, p->socket_id);
	s->freeq = rte_zmalloc_socket("aqm_subs_free", s->cap_ids * sizeof(*s->freeq),
				      0, p->socket_id);
	s->scratch_del = rte_zmalloc_socket("aqm_subs_sd", s->cap_ids * sizeof(uint32_t),
					    0, p->socket_id);
	s->scratch_new = rte_zmalloc_socket("aqm_subs_sn", 2 * (size_t)s->cap_ids * sizeof(uint32_t),
					    0, p->socket_id);
	s->scratch_grp = rte_zmalloc_socket("aqm_subs_sg", s->cap_ids * sizeof(uint64_t),
					    0, p->socket_id);
	if (s->refs == NULL || s->pipe_group == NULL || s->pipe_gen == NULL ||
	    s->scratch_grp == NULL ||
	    s->freeq == NULL || s->scratch_del == NULL || s->scratch_new == NULL)
		goto fail;

	def_flows = p->default_policy == AQM_DEFAULT_PIPE ?
		    (p->default_pipe.qdisc == AQM_QDISC_FIFO ? 1 : p->default_pipe.fq.flows) : 1;
	for (int d = 0; d < 2; d++) {
		struct aqm_sched_params sp = p->sched;
		struct aqm_pipe_params dp;
		int rc;

		snprintf(name, sizeof(name), "%s_%s", p->name, d ? "up" : "down");
		sp.name = name;
		sp.socket_id = p->socket_id;
		sp.max_pipes = p->max_subs + 1;
		sp.max_flows = def_flows + p->max_subs *
			(p->pipe.qdisc == AQM_QDISC_FIFO ? 1 : p->pipe.fq.flows);
		/* Host state only where a pipe isolates hosts. */
		sp.isolation = sp.isolation ||
			(p->pipe.qdisc == AQM_QDISC_FQ_CODEL &&
			 p->pipe.fq.isolation != AQM_ISO_FLOWS) ||
			(p->default_policy == AQM_DEFAULT_PIPE &&
			 p->default_pipe.qdisc == AQM_QDISC_FQ_CODEL &&
			 p->default_pipe.fq.isolation != AQM_ISO_FLOWS);
		s->hosts = sp.isolation;
		/* Tin state only where a pipe has tins. */
		sp.diffserv = sp.diffserv ||
			(p->pipe.qdisc == AQM_QDISC_FQ_CODEL &&
			 p->pipe.fq.diffserv != AQM_DIFFSERV_BESTEFFORT) ||
			(p->default_policy == AQM_DEFAULT_PIPE &&
			 p->default_pipe.qdisc == AQM_QDISC_FQ_CODEL &&
			 p->default_pipe.fq.diffserv != AQM_DIFFSERV_BESTEFFORT);
		/* The hold works with the filter: only where it is on. */
		if (!((p->ack_filter_dirs >> d) & 1))
			sp.ack_hold_ns = 0;
		s->sched[d] = aqm_sched_create(&sp);
		if (s->sched[d] == NULL) {
			err = rte_errno;
			goto fail;
		}
		if (p->default_policy == AQM_DEFAULT_PIPE) {
			dp = p->default_pipe;
			if (d == AQM_DIR_UP)
				dp.shaper.rate_bps = p->default_up_bps;
		} else {
			/* Placeholder so subscriber ids start at 1; never used. */
			aqm_pipe_params_default(&dp);
			dp.fq.flows = 1;
		}
		dp.fq.ack_filter = (p->ack_filter_dirs >> d) & 1;
		rc = aqm_sched_pipe_add(s->sched[d], &dp);
		if (rc != 0) {
			err = rc < 0 ? -rc : EINVAL;
			goto fail;
		}
		/* The template must make pipes: an update's last step, which
		 * adds them, cannot fail. */
		dp = p->pipe;
		dp.shaper.rate_bps = 1000000;
		if (aqm_sched_pipe_add(s->sched[d], &dp) != 1 ||
		    aqm_sched_pipe_truncate(s->sched[d], 1) != 0)
			goto fail;
	}

	snprintf(name, sizeof(name), "%s_v4", p->name);
	s->fib4 = rte_fib_create(name, p->socket_id, &(struct rte_fib_conf){
		.type = RTE_FIB_DIR24_8,
		.default_nh = 0,  /* no subscriber: ids start at 1 */
		.max_routes = (int)p->max_subs,
		.dir24_8 = {
			/* The first level has 2^24 next hops, written at
			 * creation: 2-byte ones (15 bits of id) take 32 MB,
			 * 4-byte ones 64 MB. */
			.nh_sz = p->max_subs < (1u << 15) - 1 ? RTE_FIB_DIR24_8_2B :
							       RTE_FIB_DIR24_8_4B,
			/* one tbl8 per /24 that holds longer prefixes */
			.num_tbl8 = RTE_MAX(p->max_subs, 256u),
		},
	});
	if (s->fib4 == NULL) {
		err = rte_errno;
		goto fail;
	}
	snprintf(name, sizeof(name), "%s_x", p->name);
	s->exact = rte_hash_create(&(struct rte_hash_parameters){
		.name = name,
		.entries = RTE_MAX(p->max_subs, 8u),
		.key_len = sizeof(struct prefix_key),
		.socket_id = p->socket_id,
		/* max_subs keys always fit, whatever their buckets */
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	});
	if (s->exact == NULL) {
		err = rte_errno ? rte_errno : ENOMEM;
		goto fail;
	}
	snprintf(name, sizeof(name), "%s_g", p->name);
	s->groups = rte_hash_create(&(struct rte_hash_parameters){
		.name = name,
		.entries = RTE_MAX(p->max_subs, 8u),
		.key_len = sizeof(uint64_t),
		.socket_id = p->socket_id,
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	});
	if (s->groups == NULL) {
		err = rte_errno ? rte_errno : ENOMEM;
		goto fail;
	}
	if (p->max_v6_subs != 0) {
		snprintf(name, sizeof(name), "%s_v6", p->name);
		s->lpm6 = rte_lpm6_create(name, p->socket_id, &(struct rte_lpm6_config){
			.max_rules = p->max_v6_subs,
			/* a /64 needs up to 5 tbl8s below the 24-bit first level */
			.number_tbl8s = p->max_v6_subs * 5 + 256,
		});
		if (s->lpm6 == NULL) {
			err = rte_errno;
			goto fail;
		}
	}
	return s;
fail:
	aqm_subs_free(s);
	rte_errno = err;
	return NULL;
}

static void
entry_shaper(const struct aqm_subs *s, const struct aqm_sub_entry *e,
	     uint64_t rate, struct aqm_shaper_params *sp)
{
	*sp = e->has_profile ? e->profile : s->pipe.shaper;
	sp->rate_bps = rate;
}

static int
entry_check(const struct aqm_subs *s, const struct aqm_sub_entry *e)
{
	struct aqm_shaper_params sp;

	if ((e->family == 4 && e->depth > 32) || (e->family == 6 && e->depth > 128) ||
	    (e->family != 4 && e->family != 6))
		return -EINVAL;
	if (e->family == 6 && s->lpm6 == NULL)
		return -ENOSPC;
	/* A subscriber's own isolation needs host state, which the
	 * schedulers have when the template isolates hosts. */
	if (e->has_isolation && e->isolation > AQM_ISO_TRIPLE)
		return -EINVAL;
	if (e->has_isolation && e->isolation != AQM_ISO_FLOWS && !s->hosts)
		return -EPERM;
	entry_shaper(s, e, e->down_bps, &sp);
	if (aqm_shaper_check(&sp) != 0)
		return -EINVAL;
	entry_shaper(s, e, e->up_bps, &sp);
	if (aqm_shaper_check(&sp) != 0)
		return -EINVAL;
	/* A FIFO sized in time needs a rate to size it. */
	if (s->pipe.qdisc == AQM_QDISC_FIFO && s->pipe.fifo_limit_bytes == 0 &&
	    (e->down_bps == 0 || e->up_bps == 0))
		return -EINVAL;
	return 0;
}

/* Existing pipe id of the exact prefix, or 0. */
static uint32_t
entry_find(const struct aqm_subs *s, const struct aqm_sub_entry *e)
{
	struct prefix_key k;
	void *id;

	prefix_key(e, &k);
	if (rte_hash_lookup_data(s->exact, &k, &id) < 0)
		return 0;
	return tag_id(id);
}

/* Pipe id of group g (nonzero), or 0; *gen: the update that mapped it.
 * A key whose pipe was removed since (another incarnation) is stale. */
static uint32_t
group_find(const struct aqm_subs *s, uint64_t g, uint32_t *gen)
{
	void *d;
	uint32_t id;

	if (g == 0 || rte_hash_lookup_data(s->groups, &g, &d) < 0)
		return 0;
	id = tag_id(d);
	if (s->refs[id] == 0 || tag_pipe_gen(d) != s->pipe_gen[id])
		return 0;
	if (gen != NULL)
		*gen = tag_gen(d);
	return id;
}

/* The LPM rule of e now leads to id (it exists): rte_lpm*_add() of an
 * existing rule only changes its next hop. */
static int
entry_lpm_add(struct aqm_subs *s, const struct aqm_sub_entry *e, uint32_t id)
{
	if (e->family == 4) {
		uint32_t ip;

		memcpy(&ip, e->addr, 4);
		return rte_fib_add(s->fib4, rte_be_to_cpu_32(ip), e->depth, id);
	}
	return rte_lpm6_add(s->lpm6, e->addr, e->depth, id);
}

/* Remove the LPM rule of e (it exists). */
static void
entry_lpm_delete(struct aqm_subs *s, const struct aqm_sub_entry *e)
{
	if (e->family == 4) {
		uint32_t ip;

		memcpy(&ip, e->addr, 4);
		rte_fib_delete(s->fib4, rte_be_to_cpu_32(ip), e->depth);
	} else {
		rte_lpm6_delete(s->lpm6, e->addr, e->depth);
	}
}

/* Forget the prefix of e, which leads to id: its rule and its hash key. */
static void
entry_delete(struct aqm_subs *s, const struct aqm_sub_entry *e, uint32_t id)
{
	struct prefix_key k;

	prefix_key(e, &k);
	(void)rte_hash_del_key(s->exact, &k);
	entry_lpm_delete(s, e);
	s->refs[id]--;
	s->nv6 -= e->family == 6;
	s->nsubs--;
}

/* Map the prefix of e to id: its rule and its hash key, or nothing. */
static int
entry_map(struct aqm_subs *s, const struct aqm_sub_entry *e, uint32_t id)
{
	struct prefix_key k;
	int rc = entry_lpm_add(s, e, id);

	if (rc < 0)
		return rc;
	prefix_key(e, &k);
	rc = rte_hash_add_key_data(s->exact, &k, tag(s, id));
	if (rc < 0) {
		entry_lpm_delete(s, e);
		return rc;
	}
	s->refs[id]++;
	s->nv6 += e->family == 6;
	s->nsubs++;
	return 0;
}

/* Group g (nonzero) now leads to id. */
static int
group_map(struct aqm_subs *s, uint64_t g, uint32_t id)
{
	int rc = rte_hash_add_key_data(s->groups, &g, tag(s, id));

	if (rc >= 0)
		s->pipe_group[id] = g;
	return rc;
}

/*
 * Give a new prefix a pipe id (attach: the id of its group, else a free
 * id, oldest first, else a fresh one) and its LPM rule, or nothing. The
 * pipes themselves are made in the update's last step, which cannot fail
 * (update_commit()); idx is e's index in the list, recorded with a new id.
 */
static int
entry_insert(struct aqm_subs *s, const struct aqm_sub_entry *e, uint32_t attach,
	     uint32_t idx, uint32_t *nnew)
{
	uint32_t id = attach;
	int rc;

	if (s->nsubs >= s->max_subs || (e->family == 6 && s->nv6 >= s->max_v6))
		return -ENOSPC;
	if (id == 0) {
		if (s->free_head != s->free_tail)
			id = s->freeq[s->free_head % s->cap_ids];
		else if (s->next_id < s->cap_ids)
			id = s->next_id;
		else
			return -ENOSPC;
	}
	rc = entry_map(s, e, id);
	if (rc < 0)
		return rc;
	if (attach == 0) {
		if (id == s->next_id)
			s->next_id++;
		else
			s->free_head++;
		s->scratch_new[2 * *nnew] = id;
		s->scratch_new[2 * *nnew + 1] = idx;
		(*nnew)++;
	}
	return (int)id;
}

/* The pipe parameters of entry e in direction d. */
static void
entry_pipe(const struct aqm_subs *s, const struct aqm_sub_entry *e, int d,
	   struct aqm_pipe_params *pp)
{
	*pp = s->pipe;
	if (e->has_isolation)
		pp->fq.isolation = e->isolation;
	entry_shaper(s, e, d == AQM_DIR_DOWN ? e->down_bps : e->up_bps, &pp->shaper);
	if (d == AQM_DIR_UP)
		pp->fq.seed = s->pipe.fq.seed ^ 0x9e3779b9u; /* directions hash apart */
	pp->fq.ack_filter = (s->ack_filter_dirs >> d) & 1;
}

/* New rates (and profile) for the existing pipe id: queues untouched. */
static void
entry_rerate(struct aqm_subs *s, const struct aqm_sub_entry *e, uint32_t id)
{
	struct aqm_shaper_params sp;

	entry_shaper(s, e, e->down_bps, &sp);
	aqm_sched_pipe_set_shaper(s->sched[AQM_DIR_DOWN], id, &sp);
	entry_shaper(s, e, e->up_bps, &sp);
	aqm_sched_pipe_set_shaper(s->sched[AQM_DIR_UP], id, &sp);
	/* entry_check() made sure the pipes can take it. */
	for (int d = 0; d < 2; d++)
		aqm_sched_pipe_set_isolation(s->sched[d], id,
					     (enum aqm_isolation)(e->has_isolation ?
						e->isolation : s->pipe.fq.isolation));
}

/* Id id has no prefix left: its group key goes, its incarnation ends
 * (hand-off tags and group keys made before are stale from now on), and
 * the id joins the free ids. Its pipes are removed by the caller. */
static void
id_release(struct aqm_subs *s, uint32_t id)
{
	uint64_t g = s->pipe_group[id];
	void *d;

	if (g != 0 && rte_hash_lookup_data(s->groups, &g, &d) >= 0 &&
	    tag_id(d) == id && tag_pipe_gen(d) == s->pipe_gen[id])
		(void)rte_hash_del_key(s->groups, &g);
	s->pipe_group[id] = 0;
	s->pipe_gen[id]++;
	s->freeq[s->free_tail++ % s->cap_ids] = id;
}

/* Remove both pipes of id; what they hold leaves unshaped, in order. */
static void
pipes_remove(struct aqm_subs *s, uint32_t id)
{
	for (int d = 0; d < 2; d++)
		(void)aqm_sched_pipe_remove(s->sched[d], id);
}

uint32_t
aqm_subs_find(const struct aqm_subs *s, const struct aqm_sub_entry *e)
{
	if ((e->family != 4 && e->family != 6) ||
	    e->depth > (e->family == 4 ? 32 : 128))
		return 0;
	return entry_find(s, e);
}

int
aqm_subs_add(struct aqm_subs *s, const struct aqm_sub_entry *e)
{
	int rc = aqm_subs_update(s, e, 1, NULL, 0, NULL, 0);

	if (rc < 0)
		return rc;
	return (int)entry_find(s, e);
}

static void
entry_err(char *err, size_t errlen, const struct aqm_sub_entry *e,
	  uint32_t i, const char *what, const char *why)
{
	if (err == NULL)
		return;
	if (e->line)
		snprintf(err, errlen, "line %u: %s", e->line, why);
	else
		snprintf(err, errlen, "%s %u: %s", what, i + 1, why);
}

static bool
entry_valid_prefix(const struct aqm_sub_entry *e)
{
	return (e->family == 4 && e->depth <= 32) || (e->family == 6 && e->depth <= 128);
}

/* Take back the removals of an update (the first ndone of del), newest
 * first, with the free ids they gave. */
static void
undo_removals(struct aqm_subs *s, const struct aqm_sub_entry *del, uint32_t ndone,
	      uint32_t free_tail)
{
	s->free_tail = free_tail;
	for (uint32_t j = ndone; j-- > 0;) {
		uint32_t id = s->scratch_del[j];
		bool revive = s->refs[id] == 0;

		if (revive) {
			/* Released by this update: the same incarnation. */
			s->pipe_gen[id]--;
			s->pipe_group[id] = s->scratch_grp[j];
		}
		/* The rule and key were there a moment ago: they fit again
		 * (what the update added is gone already). */
		if (entry_map(s, &del[j], id) == 0 && revive &&
		    s->pipe_group[id] != 0)
			(void)group_map(s, s->pipe_group[id], id);
	}
}

int
aqm_subs_update(struct aqm_subs *s, const struct aqm_sub_entry *e, uint32_t n,
		const struct aqm_sub_entry *del, uint32_t ndel,
		char *err, size_t errlen)
{
	const uint32_t free_head0 = s->free_head, free_tail0 = s->free_tail;
	const uint32_t next_id0 = s->next_id;
	uint32_t nnew = 0, nfreed;

	for (uint32_t i = 0; i < n; i++) {
		int rc = entry_check(s, &e[i]);

		if (rc < 0) {
			entry_err(err, errlen, &e[i], i, "entry",
				  rc == -ENOSPC ? "no IPv6 table" :
				  rc == -EPERM ? "host isolation needs [aqm] isolation other than flows (no host state reserved)" :
				  "bad prefix or rate out of range");
			return rc;
		}
	}
	s->gen++;
	/*
	 * All or nothing, in three steps.
	 * 1. Removals: each prefix's rule and key go; an id left with no
	 *    prefix joins the free ids (its group key goes too), so that
	 *    this very update's new prefixes can take it.
	 * 2. Every new prefix, in list order (so ids follow the list): a
	 *    prefix of a group (a LibreQoS circuit) whose group has pipes
	 *    joins them, any other takes a free id or a fresh one; an
	 *    existing prefix whose group is new lends it its pipes. If one
	 *    does not fit (max_subs, max_v6_subs, or the LPM's own room), the
	 *    keys this update added (their tag says so) go again, then the
	 *    removed ones come back, and the free ids are as they were.
	 * 3. update_commit(), which cannot fail: the pipes of freed ids are
	 *    removed (what they hold leaves at once, unshaped, in order:
	 *    aqm_sched_pipe_remove()), those of new ids made (a removed
	 *    pipe's slot is reused), then the rates: the last line of a
	 *    prefix wins, as if the list were applied line by line; and a
	 *    prefix whose group has other pipes than its own (it moved to
	 *    another circuit) is pointed at them, which may free its old id.
	 * No packet of any other pipe is touched.
	 */
	for (uint32_t i = 0; i < ndel; i++) {
		uint32_t id = entry_valid_prefix(&del[i]) ? entry_find(s, &del[i]) : 0;

		if (id == 0) {
			entry_err(err, errlen, &del[i], i, "removal",
				  "no such subscriber prefix");
			undo_removals(s, del, i, free_tail0);
			return -ENOENT;
		}
		s->scratch_del[i] = id;
		s->scratch_grp[i] = s->pipe_group[id];
		entry_delete(s, &del[i], id);
		if (s->refs[id] == 0)
			id_release(s, id);
	}
	nfreed = s->free_tail - free_tail0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t id = entry_find(s, &e[i]);
		uint32_t gid = group_find(s, e[i].group, NULL);
		int rc = 0;

		if (id == 0) {
			rc = entry_insert(s, &e[i], gid, i, &nnew);
			if (rc > 0)
				id = (uint32_t)rc;
		}
		if (rc >= 0 && e[i].group != 0 && gid == 0)
			rc = group_map(s, e[i].group, id);
		if (rc < 0) {
			char why[96];

			if (rc != -ENOSPC)
				snprintf(why, sizeof(why), "%s", strerror(-rc));
			else if (s->nsubs >= s->max_subs)
				snprintf(why, sizeof(why), "more than the limit of %u subscribers",
					 s->max_subs);
			else if (e[i].family == 6 && s->nv6 >= s->max_v6)
				snprintf(why, sizeof(why), "more than the limit of %u IPv6 subscribers",
					 s->max_v6);
			else
				snprintf(why, sizeof(why), "no room left in the prefix table (long prefixes that share a /64 or a /24 use it up fastest)");
			entry_err(err, errlen, &e[i], i, "entry", why);
			for (uint32_t j = 0; j <= i; j++) {
				struct prefix_key k;
				uint32_t gen;
				void *d;

				prefix_key(&e[j], &k);
				if (rte_hash_lookup_data(s->exact, &k, &d) >= 0 &&
				    tag_gen(d) == s->gen)
					entry_delete(s, &e[j], tag_id(d));
				if (group_find(s, e[j].group, &gen) != 0 && gen == s->gen)
					(void)rte_hash_del_key(s->groups, &e[j].group);
			}
			s->free_head = free_head0;
			s->next_id = next_id0;
			undo_removals(s, del, ndel, free_tail0);
			return rc;
		}
	}
	/* 3. Nothing below fails. */
	for (uint32_t k = 0; k < nfreed; k++)
		pipes_remove(s, s->freeq[(free_tail0 + k) % s->cap_ids]);
	for (uint32_t k = 0; k < nnew; k++) {
		uint32_t id = s->scratch_new[2 * k];
		const struct aqm_sub_entry *ne = &e[s->scratch_new[2 * k + 1]];

		for (int d = 0; d < 2; d++) {
			struct aqm_pipe_params pp;

			entry_pipe(s, ne, d, &pp);
			if (id < aqm_sched_pipe_count(s->sched[d]))
				(void)aqm_sched_pipe_reuse(s->sched[d], id, &pp);
			else
				(void)aqm_sched_pipe_add(s->sched[d], &pp);
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t id = entry_find(s, &e[i]);
		uint32_t gid = group_find(s, e[i].group, NULL);

		if (gid != 0 && gid != id && entry_lpm_add(s, &e[i], gid) >= 0) {
			struct prefix_key k;

			prefix_key(&e[i], &k);
			(void)rte_hash_add_key_data(s->exact, &k, tag(s, gid));
			s->refs[gid]++;
			if (--s->refs[id] == 0) {
				id_release(s, id);
				pipes_remove(s, id);
			}
			id = gid;
		}
		entry_rerate(s, &e[i], id);
	}
	s->removed += ndel;
	return (int)n;
}

int
aqm_subs_apply(struct aqm_subs *s, const struct aqm_sub_entry *e, uint32_t n,
	       char *err, size_t errlen)
{
	return aqm_subs_update(s, e, n, NULL, 0, err, errlen);
}

int
aqm_subs_remove(struct aqm_subs *s, const struct aqm_sub_entry *del, uint32_t n,
		char *err, size_t errlen)
{
	return aqm_subs_update(s, NULL, 0, del, n, err, errlen);
}

uint32_t
aqm_subs_pipe_tag(const struct aqm_subs *s, uint32_t id)
{
	return id | (uint32_t)s->pipe_gen[id < s->cap_ids ? id : 0] << 24;
}

int
aqm_subs_pipe_of_tag(const struct aqm_subs *s, uint32_t tag_)
{
	uint32_t id = tag_ & 0xffffff;

	if (id >= s->cap_ids || (id != 0 && s->refs[id] == 0) ||
	    s->pipe_gen[id] != (uint8_t)(tag_ >> 24))
		return -ENOENT;
	return (int)id;
}

uint32_t
aqm_subs_pipes(const struct aqm_subs *s)
{
	return s->next_id - 1 - (s->free_tail - s->free_head);
}

int
aqm_subs_lookup(const struct aqm_subs *s, enum aqm_dir dir, struct rte_mbuf *m)
{
	const struct pkt_meta *meta = pkt_meta(m);
	const uint8_t *a = dir == AQM_DIR_DOWN ? meta->dst : meta->src;
	uint32_t nh;

	if (meta->l3 == PKT_L3_IPV4) {
		uint32_t ip;
		uint64_t nh4;

		memcpy(&ip, a, 4);
		ip = rte_be_to_cpu_32(ip);
		rte_fib_lookup_bulk(s->fib4, &ip, &nh4, 1);
		if (nh4 != 0)
			return (int)nh4;
	} else if (meta->l3 == PKT_L3_IPV6 && s->lpm6 != NULL) {
		if (rte_lpm6_lookup(s->lpm6, a, &nh) == 0)
			return (int)nh;
	}
	return s->policy == AQM_DEFAULT_PIPE ? 0 : -ENOENT;
}

/* The packets of a burst that are not IPv4: IPv6 ones in the IPv6 table,
 * the rest have no subscriber. Out of line: most bursts have none. */
static __rte_noinline void
lookup_other(const struct aqm_subs *s, enum aqm_dir dir,
	     struct rte_mbuf *const *pkts, uint16_t n, uint64_t *hop)
{
	for (uint16_t i = 0; i < n; i++) {
		const struct pkt_meta *meta = pkt_meta(pkts[i]);
		const uint8_t *a = dir == AQM_DIR_DOWN ? meta->dst : meta->src;
		uint32_t nh6;

		if (meta->l3 == PKT_L3_IPV4)
			continue;
		hop[i] = 0;
		if (meta->l3 == PKT_L3_IPV6 && s->lpm6 != NULL &&
		    rte_lpm6_lookup(s->lpm6, a, &nh6) == 0)
			hop[i] = nh6;
	}
}

void
aqm_subs_lookup_burst(const struct aqm_subs *s, enum aqm_dir dir,
		      struct rte_mbuf *const *pkts, uint16_t n, uint64_t *hop)
{
	const size_t off = dir == AQM_DIR_DOWN ? offsetof(struct pkt_meta, dst) :
						  offsetof(struct pkt_meta, src);
	uint32_t ip[AQM_SUBS_LOOKUP_BURST];
	unsigned int other = 0;

	RTE_ASSERT(n <= AQM_SUBS_LOOKUP_BURST);
	if (n == 0)
		return;
	/*
	 * Every packet's first four address bytes go to the IPv4 table in
	 * one bulk call, as if all were IPv4 (the common case): one pass
	 * with no branch per packet. What the table says of the others (an
	 * IPv6 address's first bytes, or whatever a non-IP frame's metadata
	 * holds there) is replaced by lookup_other().
	 */
	for (uint16_t i = 0; i < n; i++) {
		const struct pkt_meta *meta = pkt_meta(pkts[i]);
		uint32_t a;

		memcpy(&a, (const uint8_t *)meta + off, sizeof(a));
		ip[i] = rte_be_to_cpu_32(a);
		other |= meta->l3 ^ PKT_L3_IPV4;
	}
	/* Its default next hop is 0: ids of subscribers start at 1. */
	rte_fib_lookup_bulk(s->fib4, ip, hop, n);
	if (unlikely(other != 0))
		lookup_other(s, dir, pkts, n, hop);
}

bool
aqm_subs_default_pass(const struct aqm_subs *s)
{
	return s->policy != AQM_DEFAULT_PIPE;
}

uint16_t
aqm_subs_enqueue_burst(struct aqm_subs *s, enum aqm_dir dir,
		       struct rte_mbuf **pkts, uint16_t n, uint64_t now_ns)
{
	struct rte_mbuf *q[64];
	uint32_t pipes[64];
	uint64_t hop[AQM_SUBS_LOOKUP_BURST];
	const bool pass = aqm_subs_default_pass(s);
	uint16_t left = 0, nq = 0;

	for (uint16_t i = 0; i < n; i++) {
		uint32_t id;

		if (i % AQM_SUBS_LOOKUP_BURST == 0)
			aqm_subs_lookup_burst(s, dir, pkts + i,
					      RTE_MIN(n - i, AQM_SUBS_LOOKUP_BURST), hop);
		id = (uint32_t)hop[i % AQM_SUBS_LOOKUP_BURST];
		if (id == 0 && pass) {
			pkts[left++] = pkts[i];
			continue;
		}
		q[nq] = pkts[i];
		pipes[nq++] = id;
		if (nq == RTE_DIM(q)) {
			aqm_sched_enqueue_burst(s->sched[dir], pipes, q, nq, now_ns);
			nq = 0;
		}
	}
	if (nq != 0)
		aqm_sched_enqueue_burst(s->sched[dir], pipes, q, nq, now_ns);
	return left;
}

uint16_t
aqm_subs_dequeue_burst(struct aqm_subs *s, enum aqm_dir dir,
		       struct rte_mbuf **pkts, uint16_t max, uint64_t now_ns)
{
	return aqm_sched_dequeue_burst(s->sched[dir], pkts, max, now_ns);
}

uint16_t
aqm_subs_flush_burst(struct aqm_subs *s, enum aqm_dir dir,
		     struct rte_mbuf **pkts, uint16_t max)
{
	return aqm_sched_flush_burst(s->sched[dir], pkts, max);
}

uint32_t
aqm_subs_pending(const struct aqm_subs *s)
{
	return aqm_sched_pending(s->sched[0]) + aqm_sched_pending(s->sched[1]);
}

uint32_t
aqm_subs_count(const struct aqm_subs *s)
{
	return s->nsubs;
}

struct aqm_sched *
aqm_subs_sched(struct aqm_subs *s, enum aqm_dir dir)
{
	return s->sched[dir];
}
