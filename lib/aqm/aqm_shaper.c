/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Time-based deficit shaper: a pipe may send when now >= next_ns, and each
 * packet pushes next_ns forward by the time its wire length takes at the
 * configured rate. An idle pipe earns no credit, so there are no bursts.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aqm_priv.h"

struct aqm_profile {
	const char *name;
	int16_t overhead;
	uint16_t mpu;
	uint8_t framing;
};

/*
 * Overheads count from the Ethernet frame sluice forwards (14-byte header
 * included, FCS not), so they are the usual "from the IP packet" figures
 * minus 14.
 */
static const struct aqm_profile aqm_profiles[] = {
	{ "none",          0,  0, AQM_FRAMING_NONE },
	/* preamble+SFD 8, FCS 4, inter-frame gap 12; 64-byte minimum frame */
	{ "ethernet",     24, 84, AQM_FRAMING_NONE },
	/* PPPoE 8 + FCS 4 + PTM 4 on top of the Ethernet frame, 64/65 coded */
	{ "vdsl2",        16,  0, AQM_FRAMING_PTM },
	{ "vdsl2-bridged", 8,  0, AQM_FRAMING_PTM },
	/* PPPoE + LLC/SNAP + Ethernet FCS + AAL5 trailer, in 53-byte cells */
	{ "adsl-pppoe",   26,  0, AQM_FRAMING_ATM },
	/* PPPoA VC-mux carries no Ethernet header: 10 from IP */
	{ "adsl-pppoa",   -4,  0, AQM_FRAMING_ATM },
	/* DOCSIS counts the Ethernet frame with FCS, 64-byte minimum */
	{ "docsis",        4, 64, AQM_FRAMING_NONE },
	/* The radio carries the IP packet plus ~6 bytes of PDCP/RLC/MAC */
	{ "lte",          -8,  0, AQM_FRAMING_NONE },
};

int
aqm_shaper_profile(const char *name, struct aqm_shaper_params *sp)
{
	for (size_t i = 0; i < RTE_DIM(aqm_profiles); i++) {
		if (strcasecmp(name, aqm_profiles[i].name) == 0) {
			sp->overhead = aqm_profiles[i].overhead;
			sp->mpu = aqm_profiles[i].mpu;
			sp->framing = aqm_profiles[i].framing;
			return 0;
		}
	}
	return -ENOENT;
}

int
aqm_parse_rate(const char *s, uint64_t *bps)
{
	char *end;
	double v, mult = 1;

	while (isspace((unsigned char)*s))
		s++;
	if (!isdigit((unsigned char)*s) && *s != '.')
		return -EINVAL;
	v = strtod(s, &end);
	if (end == s || v < 0)
		return -EINVAL;
	switch (tolower((unsigned char)*end)) {
	case 'k': mult = 1e3; end++; break;
	case 'm': mult = 1e6; end++; break;
	case 'g': mult = 1e9; end++; break;
	case 't': mult = 1e12; end++; break;
	default: break;
	}
	if (strncasecmp(end, "bit", 3) == 0 || strncasecmp(end, "bps", 3) == 0)
		end += 3;
	while (isspace((unsigned char)*end))
		end++;
	if (*end != '\0')
		return -EINVAL;
	v *= mult;
	if (v > 1e15)
		return -EINVAL;
	*bps = (uint64_t)(v + 0.5);
	return 0;
}

/* Here with the other text parsers (the CSV reader and its fuzz target
 * link this file, not the queue's). CAKE's names. */
static const char *const aqm_isolation_names[] = {
	[AQM_ISO_FLOWS] = "flows",
	[AQM_ISO_SRCHOST] = "dual-srchost",
	[AQM_ISO_DSTHOST] = "dual-dsthost",
	[AQM_ISO_TRIPLE] = "triple-isolate",
};

int
aqm_parse_isolation(const char *s, enum aqm_isolation *iso)
{
	for (unsigned int i = 0; i < RTE_DIM(aqm_isolation_names); i++) {
		if (strcasecmp(s, aqm_isolation_names[i]) == 0) {
			*iso = (enum aqm_isolation)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *
aqm_isolation_name(enum aqm_isolation iso)
{
	return (unsigned int)iso < RTE_DIM(aqm_isolation_names) ?
		aqm_isolation_names[iso] : "unknown";
}

uint32_t
aqm_wire_len(const struct aqm_shaper_params *sp, uint32_t len)
{
	return aqm_wire_len_(sp->overhead, sp->mpu, sp->framing, len);
}

int
aqm_shaper_check(const struct aqm_shaper_params *sp)
{
	if (sp->rate_bps != 0 &&
	    (sp->rate_bps < AQM_RATE_MIN || sp->rate_bps > AQM_RATE_MAX))
		return -EINVAL;
	if (sp->framing > AQM_FRAMING_PTM)
		return -EINVAL;
	return 0;
}

void
aqm_shaper_apply(struct aqm_pipe *p, const struct aqm_shaper_params *sp)
{
	/* ns per byte in Q24: 8e9 << 24 still fits in 64 bits. */
	p->ns_per_byte = sp->rate_bps ? (8000000000ULL << 24) / sp->rate_bps : 0;
	p->rate_Bps = sp->rate_bps / 8;
	p->overhead = sp->overhead;
	/* The same lengths as aqm_wire_len(): at least one byte. */
	p->mpu = sp->mpu ? sp->mpu : 1;
	p->framing = sp->framing;
	aqm_codel_rate_apply(p);
}

/*
 * Rate-aware CoDel, CAKE's rule: below some rate one MTU takes longer on
 * the link than CoDel's target, so a flow with two packets queued would be
 * "above target" forever and CoDel would signal it for no fault of its
 * own. Target becomes at least 1.5 MTU times; interval grows by as much as
 * target did, so it still covers the round trip plus the standing delay
 * CoDel now accepts. Unshaped or fast pipes keep the configured values.
 */
void
aqm_codel_rate_apply(struct aqm_pipe *p)
{
	uint64_t target, interval, mtu_ns;

	if (p->qdisc != AQM_QDISC_FQ_CODEL || !p->codel_rate_aware)
		return; /* p->codel is the configuration as given */
	target = p->codel_target_cfg;
	interval = p->codel_interval_cfg;
	if (p->ns_per_byte != 0) {
		mtu_ns = ((uint64_t)aqm_pipe_wire_len(p, p->codel.mtu) *
			  p->ns_per_byte) >> 24;
		if (mtu_ns * 3 / 2 > target) {
			interval += mtu_ns * 3 / 2 - target;
			target = mtu_ns * 3 / 2;
		}
		/* The control law needs interval < 2^32 ns (4.29 s). */
		interval = RTE_MIN(interval, (uint64_t)UINT32_MAX);
		target = RTE_MIN(target, interval);
	}
	p->codel.target_ns = target;
	p->codel.interval_ns = interval;
}
