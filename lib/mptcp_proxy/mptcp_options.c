/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPTCP options (RFC 8684 §3): one parser and one writer per subtype.
 * Lengths below are the whole option, kind and length bytes included.
 */
#include <errno.h>
#include <string.h>

#include "mptcp_options.h"
#include "mptcp_be.h"
#include "mptcp_dss.h"

#define TCP_FLAG_SYN 0x02
#define TCP_FLAG_ACK 0x10

/* MP_CAPABLE (§3.1) */
#define MPC_LEN_SYN      4
#define MPC_LEN_SYNACK   12
#define MPC_LEN_ACK      20
#define MPC_LEN_DATA     22
#define MPC_LEN_DATA_CS  24
/* MP_JOIN (§3.2) */
#define JOIN_LEN_SYN     12
#define JOIN_LEN_SYNACK  16
#define JOIN_LEN_ACK     24
/* ADD_ADDR (§3.4.1): address ID + address (+ port) (+ HMAC) */
#define ADD_ADDR_BASE    4
#define ADD_ADDR_HMAC    8
/* MP_FAIL (§3.7), MP_FASTCLOSE (§3.5), MP_TCPRST (§3.6), MP_PRIO (§3.3.8) */
#define FAIL_LEN         12
#define FASTCLOSE_LEN    12
#define TCPRST_LEN       4
#define PRIO_LEN         3
#define PRIO_LEN_ADDR_ID 4

/* Handshake form implied by the segment: SYN, SYN/ACK, or anything else. */
static enum mptcp_form
segment_form(uint8_t tcp_flags)
{
	if (!(tcp_flags & TCP_FLAG_SYN))
		return MPTCP_FORM_ACK;
	return (tcp_flags & TCP_FLAG_ACK) ? MPTCP_FORM_SYNACK : MPTCP_FORM_SYN;
}

static enum mptcp_opt_err
parse_mpc(const uint8_t *p, unsigned int len, uint8_t tcp_flags, struct mptcp_opt *o)
{
	enum mptcp_form seg = segment_form(tcp_flags);

	o->u.mpc.version = p[2] & 0x0f;
	if (o->u.mpc.version != MPTCP_VERSION_1)
		return MPTCP_OPT_ERR_MPC_VERSION;
	switch (len) {
	case MPC_LEN_SYN:
		o->u.mpc.form = MPTCP_FORM_SYN;
		break;
	case MPC_LEN_SYNACK:
		o->u.mpc.form = MPTCP_FORM_SYNACK;
		break;
	case MPC_LEN_ACK:
		o->u.mpc.form = MPTCP_FORM_ACK;
		break;
	case MPC_LEN_DATA_CS:
		o->u.mpc.has_csum = true;
		/* fall through */
	case MPC_LEN_DATA:
		o->u.mpc.form = MPTCP_FORM_DATA;
		break;
	default:
		return MPTCP_OPT_ERR_MPC_LEN;
	}
	if (seg != (o->u.mpc.form == MPTCP_FORM_DATA ? MPTCP_FORM_ACK : o->u.mpc.form))
		return MPTCP_OPT_ERR_MPC_LEN_FOR_SEGMENT;
	o->u.mpc.flags = p[3];
	/* §3.1: with no crypto algorithm bit set the option is invalid. */
	if (!(p[3] & MPTCP_MPC_FLAG_H))
		return MPTCP_OPT_ERR_MPC_NO_HMAC_SHA256;
	if (len >= MPC_LEN_SYNACK)
		o->u.mpc.key_snd = get_be64(p + 4);
	if (len >= MPC_LEN_ACK)
		o->u.mpc.key_rcv = get_be64(p + 12);
	if (len >= MPC_LEN_DATA)
		o->u.mpc.data_len = get_be16(p + 20);
	if (len == MPC_LEN_DATA_CS)
		o->u.mpc.csum = get_be16(p + 22);
	return MPTCP_OPT_ERR_NONE;
}

static enum mptcp_opt_err
parse_join(const uint8_t *p, unsigned int len, uint8_t tcp_flags, struct mptcp_opt *o)
{
	switch (len) {
	case JOIN_LEN_SYN:
		o->u.join.form = MPTCP_FORM_SYN;
		break;
	case JOIN_LEN_SYNACK:
		o->u.join.form = MPTCP_FORM_SYNACK;
		break;
	case JOIN_LEN_ACK:
		o->u.join.form = MPTCP_FORM_ACK;
		break;
	default:
		return MPTCP_OPT_ERR_JOIN_LEN;
	}
	if (o->u.join.form != segment_form(tcp_flags))
		return MPTCP_OPT_ERR_JOIN_LEN_FOR_SEGMENT;
	switch (o->u.join.form) {
	case MPTCP_FORM_SYN:
		o->u.join.backup = p[2] & 1;
		o->u.join.addr_id = p[3];
		o->u.join.token = get_be32(p + 4);
		o->u.join.nonce = get_be32(p + 8);
		break;
	case MPTCP_FORM_SYNACK:
		o->u.join.backup = p[2] & 1;
		o->u.join.addr_id = p[3];
		o->u.join.hmac64 = get_be64(p + 4);
		o->u.join.nonce = get_be32(p + 12);
		break;
	default:
		memcpy(o->u.join.hmac, p + 4, sizeof(o->u.join.hmac));
		break;
	}
	return MPTCP_OPT_ERR_NONE;
}

static enum mptcp_opt_err
parse_dss(const uint8_t *p, unsigned int len, struct mptcp_opt *o)
{
	return mptcp_dss_decode(p, len, o) ? MPTCP_OPT_ERR_NONE : MPTCP_OPT_ERR_DSS_LEN;
}

static enum mptcp_opt_err
parse_add_addr(const uint8_t *p, unsigned int len, struct mptcp_opt *o)
{
	bool echo = p[2] & 1;
	unsigned int base, alen;

	/* Without the HMAC: 4 + address (4 or 16) (+ port 2). The E flag,
	 * not an IP version field, tells whether the HMAC is there (§3.4.1),
	 * so the remaining length tells the family. */
	if (len < ADD_ADDR_BASE + (echo ? 0 : ADD_ADDR_HMAC))
		return MPTCP_OPT_ERR_ADD_ADDR_LEN;
	base = len - (echo ? 0 : ADD_ADDR_HMAC);
	switch (base - ADD_ADDR_BASE) {
	case 4: case 6:
		alen = 4;
		break;
	case 16: case 18:
		alen = 16;
		break;
	default:
		return MPTCP_OPT_ERR_ADD_ADDR_LEN;
	}
	o->u.add_addr.echo = echo;
	o->u.add_addr.ipv6 = alen == 16;
	o->u.add_addr.addr_id = p[3];
	memcpy(o->u.add_addr.addr, p + 4, alen);
	if (base - ADD_ADDR_BASE > alen) {
		o->u.add_addr.has_port = true;
		o->u.add_addr.port = get_be16(p + 4 + alen);
	}
	if (!echo)
		o->u.add_addr.hmac64 = get_be64(p + base);
	return MPTCP_OPT_ERR_NONE;
}

enum mptcp_opt_err
mptcp_opt_parse(const uint8_t *p, size_t avail, uint8_t tcp_flags,
		struct mptcp_opt *o)
{
	unsigned int len;

	memset(o, 0, sizeof(*o));
	if (avail < 2)
		return MPTCP_OPT_ERR_TRUNCATED;
	if (p[0] != MPTCP_OPT_KIND)
		return MPTCP_OPT_ERR_NOT_MPTCP;
	len = p[1];
	o->len = (uint8_t)len;
	if (len < 3)
		return MPTCP_OPT_ERR_LEN_BELOW_3;
	if (len > avail)
		return MPTCP_OPT_ERR_TRUNCATED;
	o->sub = p[2] >> 4;
	switch (o->sub) {
	case MPTCP_SUB_MP_CAPABLE:
		if (len < MPC_LEN_SYN) {
			/* The version is readable: report it first, as v0 differs. */
			if ((p[2] & 0x0f) != MPTCP_VERSION_1)
				return MPTCP_OPT_ERR_MPC_VERSION;
			return MPTCP_OPT_ERR_MPC_LEN;
		}
		return parse_mpc(p, len, tcp_flags, o);
	case MPTCP_SUB_MP_JOIN:
		return parse_join(p, len, tcp_flags, o);
	case MPTCP_SUB_DSS:
		return parse_dss(p, len, o);
	case MPTCP_SUB_ADD_ADDR:
		return parse_add_addr(p, len, o);
	case MPTCP_SUB_REMOVE_ADDR:
		if (len < 4 || len - 3 > MPTCP_RM_ADDR_MAX)
			return MPTCP_OPT_ERR_REMOVE_ADDR_LEN;
		o->u.rm_addr.n = (uint8_t)(len - 3);
		memcpy(o->u.rm_addr.ids, p + 3, len - 3);
		return MPTCP_OPT_ERR_NONE;
	case MPTCP_SUB_MP_PRIO:
		if (len != PRIO_LEN && len != PRIO_LEN_ADDR_ID)
			return MPTCP_OPT_ERR_PRIO_LEN;
		o->u.prio.backup = p[2] & 1;
		if (len == PRIO_LEN_ADDR_ID) {
			o->u.prio.has_addr_id = true;
			o->u.prio.addr_id = p[3];
		}
		return MPTCP_OPT_ERR_NONE;
	case MPTCP_SUB_MP_FAIL:
		if (len != FAIL_LEN)
			return MPTCP_OPT_ERR_FAIL_LEN;
		o->u.fail.dsn = get_be64(p + 4);
		return MPTCP_OPT_ERR_NONE;
	case MPTCP_SUB_MP_FASTCLOSE:
		if (len != FASTCLOSE_LEN)
			return MPTCP_OPT_ERR_FASTCLOSE_LEN;
		o->u.fastclose.key_rcv = get_be64(p + 4);
		return MPTCP_OPT_ERR_NONE;
	case MPTCP_SUB_MP_TCPRST:
		if (len != TCPRST_LEN)
			return MPTCP_OPT_ERR_TCPRST_LEN;
		o->u.tcprst.flags = p[2] & 0x0f;
		o->u.tcprst.reason = p[3];
		return MPTCP_OPT_ERR_NONE;
	case MPTCP_SUB_MP_EXPERIMENTAL:
		return MPTCP_OPT_ERR_NONE;
	default:
		return MPTCP_OPT_ERR_UNKNOWN_SUBTYPE;
	}
}

static struct mptcp_opt *
opts_slot(struct mptcp_opts *m, uint8_t sub)
{
	switch (sub) {
	case MPTCP_SUB_MP_CAPABLE:   return &m->mpc;
	case MPTCP_SUB_MP_JOIN:      return &m->join;
	case MPTCP_SUB_DSS:          return &m->dss;
	case MPTCP_SUB_ADD_ADDR:     return &m->add_addr;
	case MPTCP_SUB_REMOVE_ADDR:  return &m->rm_addr;
	case MPTCP_SUB_MP_PRIO:      return &m->prio;
	case MPTCP_SUB_MP_FAIL:      return &m->fail;
	case MPTCP_SUB_MP_FASTCLOSE: return &m->fastclose;
	case MPTCP_SUB_MP_TCPRST:    return &m->tcprst;
	default:                     return NULL;
	}
}

static void
opts_reject(struct mptcp_opts *m, struct mptcp_opt_counters *cnt,
	    enum mptcp_opt_err err)
{
	if (m->n_err == 0)
		m->first_err = (uint8_t)err;
	if (m->n_err < UINT8_MAX)
		m->n_err++;
	if (cnt != NULL)
		cnt->err[err]++;
}

unsigned int
mptcp_opts_parse(const uint8_t *opts, size_t len, uint8_t tcp_flags,
		 struct mptcp_opts *m, struct mptcp_opt_counters *cnt)
{
	unsigned int found = 0;
	size_t i = 0;

	memset(m, 0, sizeof(*m));
	while (i < len) {
		struct mptcp_opt o, *slot;
		enum mptcp_opt_err err;
		unsigned int olen;

		if (opts[i] == 0)       /* EOL */
			break;
		if (opts[i] == 1) {     /* NOP */
			i++;
			continue;
		}
		if (i + 1 >= len || opts[i + 1] < 2 || i + opts[i + 1] > len) {
			/* An MPTCP option that overruns the area is still ours. */
			if (opts[i] == MPTCP_OPT_KIND) {
				err = mptcp_opt_parse(opts + i, len - i, tcp_flags, &o);
				opts_reject(m, cnt, err);
			} else {
				opts_reject(m, cnt, MPTCP_OPT_ERR_AREA_MALFORMED);
			}
			break;
		}
		olen = opts[i + 1];
		if (opts[i] == MPTCP_OPT_KIND) {
			err = mptcp_opt_parse(opts + i, olen, tcp_flags, &o);
			if (err == MPTCP_OPT_ERR_NONE && (m->present & (1u << o.sub)))
				err = MPTCP_OPT_ERR_DUPLICATE;
			if (err != MPTCP_OPT_ERR_NONE) {
				opts_reject(m, cnt, err);
			} else {
				m->present |= (uint16_t)(1u << o.sub);
				slot = opts_slot(m, o.sub);
				if (slot != NULL)
					*slot = o;
				found++;
			}
		}
		i += olen;
	}
	return found;
}

int
mptcp_opt_len(const struct mptcp_opt *o)
{
	switch (o->sub) {
	case MPTCP_SUB_MP_CAPABLE:
		switch (o->u.mpc.form) {
		case MPTCP_FORM_SYN:    return MPC_LEN_SYN;
		case MPTCP_FORM_SYNACK: return MPC_LEN_SYNACK;
		case MPTCP_FORM_ACK:    return MPC_LEN_ACK;
		case MPTCP_FORM_DATA:
			return o->u.mpc.has_csum ? MPC_LEN_DATA_CS : MPC_LEN_DATA;
		default:                return -EINVAL;
		}
	case MPTCP_SUB_MP_JOIN:
		switch (o->u.join.form) {
		case MPTCP_FORM_SYN:    return JOIN_LEN_SYN;
		case MPTCP_FORM_SYNACK: return JOIN_LEN_SYNACK;
		case MPTCP_FORM_ACK:    return JOIN_LEN_ACK;
		default:                return -EINVAL;
		}
	case MPTCP_SUB_DSS:
		return (int)mptcp_dss_len(o->u.dss.flags) +
		       ((o->u.dss.flags & MPTCP_DSS_MAP) && o->u.dss.has_csum ? 2 : 0);
	case MPTCP_SUB_ADD_ADDR:
		return ADD_ADDR_BASE + (o->u.add_addr.ipv6 ? 16 : 4) +
		       (o->u.add_addr.has_port ? 2 : 0) +
		       (o->u.add_addr.echo ? 0 : ADD_ADDR_HMAC);
	case MPTCP_SUB_REMOVE_ADDR:
		if (o->u.rm_addr.n < 1 || o->u.rm_addr.n > MPTCP_RM_ADDR_MAX)
			return -EINVAL;
		return 3 + o->u.rm_addr.n;
	case MPTCP_SUB_MP_PRIO:
		return o->u.prio.has_addr_id ? PRIO_LEN_ADDR_ID : PRIO_LEN;
	case MPTCP_SUB_MP_FAIL:
		return FAIL_LEN;
	case MPTCP_SUB_MP_FASTCLOSE:
		return FASTCLOSE_LEN;
	case MPTCP_SUB_MP_TCPRST:
		return TCPRST_LEN;
	default:
		return -EINVAL;
	}
}

int
mptcp_opt_write(const struct mptcp_opt *o, uint8_t *b, size_t space)
{
	int len = mptcp_opt_len(o);
	uint8_t *q;

	if (len < 0)
		return len;
	if ((size_t)len > space)
		return -ENOSPC;
	memset(b, 0, (size_t)len);
	b[0] = MPTCP_OPT_KIND;
	b[1] = (uint8_t)len;
	b[2] = (uint8_t)(o->sub << 4);
	switch (o->sub) {
	case MPTCP_SUB_MP_CAPABLE:
		b[2] |= o->u.mpc.version & 0x0f;
		b[3] = o->u.mpc.flags;
		if (len >= MPC_LEN_SYNACK)
			put_be64(b + 4, o->u.mpc.key_snd);
		if (len >= MPC_LEN_ACK)
			put_be64(b + 12, o->u.mpc.key_rcv);
		if (len >= MPC_LEN_DATA)
			put_be16(b + 20, o->u.mpc.data_len);
		if (len == MPC_LEN_DATA_CS)
			put_be16(b + 22, o->u.mpc.csum);
		break;
	case MPTCP_SUB_MP_JOIN:
		if (o->u.join.form == MPTCP_FORM_ACK) {
			memcpy(b + 4, o->u.join.hmac, sizeof(o->u.join.hmac));
			break;
		}
		b[2] |= o->u.join.backup ? 1 : 0;
		b[3] = o->u.join.addr_id;
		if (o->u.join.form == MPTCP_FORM_SYN) {
			put_be32(b + 4, o->u.join.token);
			put_be32(b + 8, o->u.join.nonce);
		} else {
			put_be64(b + 4, o->u.join.hmac64);
			put_be32(b + 12, o->u.join.nonce);
		}
		break;
	case MPTCP_SUB_DSS:
		mptcp_dss_encode(b, (unsigned int)len, o->u.dss.flags, o->u.dss.data_ack,
				 o->u.dss.dsn, o->u.dss.ssn, o->u.dss.data_len,
				 o->u.dss.has_csum, o->u.dss.csum);
		break;
	case MPTCP_SUB_ADD_ADDR: {
		unsigned int alen = o->u.add_addr.ipv6 ? 16 : 4;

		b[2] |= o->u.add_addr.echo ? 1 : 0;
		b[3] = o->u.add_addr.addr_id;
		memcpy(b + 4, o->u.add_addr.addr, alen);
		q = b + 4 + alen;
		if (o->u.add_addr.has_port) {
			put_be16(q, o->u.add_addr.port);
			q += 2;
		}
		if (!o->u.add_addr.echo)
			put_be64(q, o->u.add_addr.hmac64);
		break;
	}
	case MPTCP_SUB_REMOVE_ADDR:
		memcpy(b + 3, o->u.rm_addr.ids, o->u.rm_addr.n);
		break;
	case MPTCP_SUB_MP_PRIO:
		b[2] |= o->u.prio.backup ? 1 : 0;
		if (o->u.prio.has_addr_id)
			b[3] = o->u.prio.addr_id;
		break;
	case MPTCP_SUB_MP_FAIL:
		put_be64(b + 4, o->u.fail.dsn);
		break;
	case MPTCP_SUB_MP_FASTCLOSE:
		put_be64(b + 4, o->u.fastclose.key_rcv);
		break;
	case MPTCP_SUB_MP_TCPRST:
		b[2] |= o->u.tcprst.flags & 0x0f;
		b[3] = o->u.tcprst.reason;
		break;
	}
	return len;
}

const char *
mptcp_sub_name(uint8_t sub)
{
	switch (sub) {
#define MPTCP_SUB_NAME(e, v, s) case (v): return s;
	MPTCP_SUB_LIST(MPTCP_SUB_NAME)
#undef MPTCP_SUB_NAME
	default: return NULL;
	}
}

const char *
mptcp_opt_err_name(enum mptcp_opt_err err)
{
	static const char *const names[] = {
#define MPTCP_OPT_ERR_NAME(e, s) s,
		MPTCP_OPT_ERR_LIST(MPTCP_OPT_ERR_NAME)
#undef MPTCP_OPT_ERR_NAME
	};

	if ((unsigned int)err >= MPTCP_OPT_ERR_MAX)
		return "invalid";
	return names[err];
}

const char *
mptcp_tcprst_reason_name(uint8_t reason)
{
	switch (reason) {
#define MPTCP_TCPRST_NAME(e, v, s) case (v): return s;
	MPTCP_TCPRST_REASON_LIST(MPTCP_TCPRST_NAME)
#undef MPTCP_TCPRST_NAME
	default: return NULL;
	}
}
