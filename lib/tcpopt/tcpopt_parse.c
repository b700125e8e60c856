/* SPDX-License-Identifier: BSD-3-Clause */
/* Option tables built from the X-macros, names, and the context-free parser. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tcpopt.h"
#include "tcpopt_walk.h"

const uint64_t tcpopt_kind_len_mask[256] = {
#define TCPOPT_KIND_MASK(e, k, s, l) [k] = (l),
	TCPOPT_KIND_LIST(TCPOPT_KIND_MASK)
#undef TCPOPT_KIND_MASK
};

const uint64_t tcpopt_mptcp_len_mask[16] = {
#define TCPOPT_MPTCP_MASK(e, v, s, l) [v] = (l),
	TCPOPT_MPTCP_SUB_LIST(TCPOPT_MPTCP_MASK)
#undef TCPOPT_MPTCP_MASK
};

static const char *const kind_names[256] = {
#define TCPOPT_KIND_NAME(e, k, s, l) [k] = (s),
	TCPOPT_KIND_LIST(TCPOPT_KIND_NAME)
#undef TCPOPT_KIND_NAME
};

static const char *const mptcp_names[16] = {
#define TCPOPT_MPTCP_NAME(e, v, s, l) [v] = (s),
	TCPOPT_MPTCP_SUB_LIST(TCPOPT_MPTCP_NAME)
#undef TCPOPT_MPTCP_NAME
};

static const char *const mal_names[TCPOPT_MAL_MAX] = {
#define TCPOPT_MAL_NAME(e, s) [TCPOPT_MAL_##e] = (s),
	TCPOPT_MAL_LIST(TCPOPT_MAL_NAME)
#undef TCPOPT_MAL_NAME
};

static const char *const event_names[TCPOPT_EV_MAX] = {
#define TCPOPT_EVENT_NAME(e, s) [TCPOPT_EV_##e] = (s),
	TCPOPT_EVENT_LIST(TCPOPT_EVENT_NAME)
#undef TCPOPT_EVENT_NAME
};

static const char *const seg_names[TCPOPT_SEG_MAX] = {
	[TCPOPT_SEG_SYN] = "syn",
	[TCPOPT_SEG_SYNACK] = "synack",
	[TCPOPT_SEG_OTHER] = "other",
};

static const char *const action_names[TCPOPT_ACT_MAX] = {
	[TCPOPT_ACT_PRESERVE] = "preserve",
	[TCPOPT_ACT_STRIP] = "strip",
	[TCPOPT_ACT_DROP] = "drop",
};

const char *
tcpopt_kind_name(uint8_t kind)
{
	return kind_names[kind];
}

int
tcpopt_kind_from_name(const char *name)
{
	unsigned int k;
	char *end;
	unsigned long v;

	if (name == NULL || *name == '\0')
		return -EINVAL;
	for (k = 0; k < 256; k++)
		if (kind_names[k] != NULL && strcmp(kind_names[k], name) == 0)
			return (int)k;
	if (*name < '0' || *name > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(name, &end, 10);
	if (errno != 0 || *end != '\0' || v > 255)
		return -EINVAL;
	return (int)v;
}

const char *
tcpopt_mptcp_sub_name(uint8_t sub)
{
	return sub < 16 ? mptcp_names[sub] : NULL;
}

const char *
tcpopt_exid_name(uint16_t exid)
{
	switch (exid) {
#define TCPOPT_EXID_CASE(e, v, s) case (v): return (s);
	TCPOPT_EXID_LIST(TCPOPT_EXID_CASE)
#undef TCPOPT_EXID_CASE
	default:
		return NULL;
	}
}

const char *
tcpopt_mal_name(enum tcpopt_mal mal)
{
	return (unsigned int)mal < TCPOPT_MAL_MAX ? mal_names[mal] : "invalid";
}

const char *
tcpopt_event_name(enum tcpopt_event ev)
{
	return (unsigned int)ev < TCPOPT_EV_MAX ? event_names[ev] : "invalid";
}

const char *
tcpopt_seg_name(enum tcpopt_seg seg)
{
	return (unsigned int)seg < TCPOPT_SEG_MAX ? seg_names[seg] : "invalid";
}

const char *
tcpopt_action_name(enum tcpopt_action act)
{
	return (unsigned int)act < TCPOPT_ACT_MAX ? action_names[act] : "invalid";
}

int
tcpopt_action_from_name(const char *name)
{
	unsigned int a;

	if (name == NULL)
		return -EINVAL;
	for (a = 0; a < TCPOPT_ACT_MAX; a++)
		if (strcmp(action_names[a], name) == 0)
			return (int)a;
	return -EINVAL;
}

enum tcpopt_mal
tcpopt_parse(const uint8_t *tcp, uint32_t avail, struct tcpopt_parsed *out)
{
	enum tcpopt_mal mal;
	unsigned int hlen = 0, pos = TCPOPT_HDR_MIN;
	int r;

	out->hdr_len = 0;
	out->n = 0;
	out->mal_off = 0;
	out->tcp_flags = avail > 13 ? tcp[13] : 0;
	out->seg = (uint8_t)tcpopt_seg_of(out->tcp_flags);
	mal = tcpopt_hdr_check(tcp, avail, &hlen);
	if (mal != TCPOPT_MAL_NONE) {
		out->malformed = (uint8_t)mal;
		out->mal_off = mal == TCPOPT_MAL_HDR_TRUNCATED ? 0 : 12;
		return mal;
	}
	out->hdr_len = (uint8_t)hlen;
	while ((r = tcpopt_walk_next(tcp, &pos, hlen, &out->opt[out->n])) > 0)
		out->n++;
	if (r < 0) {
		out->malformed = (uint8_t)-r;
		out->mal_off = (uint8_t)pos;
		return (enum tcpopt_mal)-r;
	}
	out->malformed = TCPOPT_MAL_NONE;
	return TCPOPT_MAL_NONE;
}
