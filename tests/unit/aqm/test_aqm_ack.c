/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ACK filter: which pure ACKs make an older one redundant
 * (aqm_ack_supersedes), and what a pipe with ack_filter does to its queue.
 * Frames are built byte by byte and run through the real parser. Virtual
 * clock; real mbufs from an EAL without hugepages.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "aqm_test_util.h"
#include "aqm_test_tcp.h"

#define MS 1000000ULL
#define T0 (1000 * MS)

static bool
sup(const struct seg *newer, const struct seg *older)
{
	struct rte_mbuf *n = mk(newer), *o = mk(older);
	bool r = aqm_ack_supersedes(n, o);

	rte_pktmbuf_free(n);
	rte_pktmbuf_free(o);
	return r;
}

static void
test_a_newer_cumulative_ack_supersedes_an_older_one_not_the_reverse(void **state)
{
	struct seg o = ack(10000, 100), n = ack(12896, 101);

	(void)state;
	assert_true(sup(&n, &o));
	assert_false(sup(&o, &n));
	n.tsval = 100; /* same TSval (the receiver's clock did not tick) */
	assert_true(sup(&n, &o));
	n.win = 100;   /* a smaller raw window with a higher ACK is fine */
	assert_true(sup(&n, &o));
	o.v6 = n.v6 = 1;
	assert_true(sup(&n, &o));
	o.ts = n.ts = 0;
	assert_true(sup(&n, &o));
	/* Sequence numbers wrap. */
	o = ack(0xfffffc00u, 100);
	n = ack(0x00000200u, 101);
	assert_true(sup(&n, &o));
	assert_false(sup(&o, &n));
}

static void
test_an_ack_further_ahead_than_any_window_does_not_supersede(void **state)
{
	/* While the older ACK waits here its sender has seen neither, so it
	 * can have at most one window (RFC 7323 s. 2.2: 2^30 bytes) in
	 * flight beyond it. An ACK further ahead is not a newer ACK of the
	 * same data (a sender drops it as acking unsent data), and half the
	 * sequence space ahead is as much behind. */
	struct seg o = ack(10000, 100), n = ack(10000 + (1u << 30), 101);

	(void)state;
	assert_true(sup(&n, &o));
	n.ack = 10000 + (1u << 30) + 1;
	assert_false(sup(&n, &o));
	n.ack = 10000 + (1u << 31);
	assert_false(sup(&n, &o));
	assert_false(sup(&o, &n));
	/* Timestamps half the space apart are neither newer nor older. */
	n = ack(11448, 100 + (1u << 31));
	assert_false(sup(&n, &o));
	assert_false(sup(&o, &n));
	n = ack(11448, 101);
	n.tsecr = 7 + (1u << 31);
	assert_false(sup(&n, &o));
}

static void
test_a_duplicate_ack_without_sack_is_never_superseded(void **state)
{
	struct seg o = ack(10000, 100), n = ack(10000, 101);

	(void)state;
	assert_false(sup(&n, &o));
	n.win = 600; /* a window update of the same ACK: still kept */
	assert_false(sup(&n, &o));
}

static void
test_sack_must_cover_the_older_acks_blocks(void **state)
{
	struct seg o = ack(10000, 100), n = ack(10000, 101);

	(void)state;
	o.nsack = 1;
	o.sack[0][0] = 11448; o.sack[0][1] = 12896;
	n.nsack = 1;
	n.sack[0][0] = 11448; n.sack[0][1] = 14344;
	assert_true(sup(&n, &o));   /* same ACK, SACK grew */
	n.win = 400;
	assert_false(sup(&n, &o));  /* same ACK, window shrank */
	n.win = 500;
	n.sack[0][0] = 12896;
	assert_false(sup(&n, &o));  /* a block the newer one no longer shows */
	n = ack(12896, 101);        /* the hole filled up to the block's end */
	assert_true(sup(&n, &o));
	n = ack(11448, 101);        /* the hole filled, the block not acked */
	assert_false(sup(&n, &o));
	n.nsack = 2;                /* ... unless a block of n covers it */
	n.sack[0][0] = 20000; n.sack[0][1] = 21448;
	n.sack[1][0] = 11448; n.sack[1][1] = 12896;
	assert_true(sup(&n, &o));
	o.nsack = 0;                /* a plain ACK before a SACK of the same ACK */
	n = ack(10000, 101);
	n.nsack = 1;
	n.sack[0][0] = 11448; n.sack[0][1] = 12896;
	assert_true(sup(&n, &o));
}

static void
test_an_older_dsack_is_never_dropped(void **state)
{
	struct seg o = ack(10000, 100), n = ack(20000, 101);

	(void)state;
	o.nsack = 1;
	o.sack[0][0] = 8552; o.sack[0][1] = 10000; /* below its own ACK: D-SACK */
	assert_false(sup(&n, &o));
}

static void
test_an_older_dsack_above_its_ack_is_never_dropped(void **state)
{
	/* RFC 2883 s. 4: a duplicate above the cumulative ACK is the first
	 * block, inside the second (the block that holds it). lib/tcp sends
	 * that form for a segment it already holds out of order. */
	struct seg o = ack(10000, 100), n = ack(10000, 101);

	(void)state;
	o.nsack = 2;
	o.sack[0][0] = 12896; o.sack[0][1] = 14344; /* the duplicate */
	o.sack[1][0] = 11448; o.sack[1][1] = 15792; /* the block holding it */
	n.nsack = 1;                                /* the same ACK, SACK grew */
	n.sack[0][0] = 11448; n.sack[0][1] = 17240;
	assert_false(sup(&n, &o));
	n = ack(20000, 101);                        /* all of it acked */
	assert_false(sup(&n, &o));
	n.v6 = o.v6 = 1;
	assert_false(sup(&n, &o));
	/* The duplicate is the whole second block. */
	n = ack(20000, 101);
	n.v6 = o.v6 = 0;
	o.sack[0][0] = 11448; o.sack[0][1] = 15792;
	assert_false(sup(&n, &o));
	/* Without the duplicate the same older ACK goes. */
	o.nsack = 1;
	o.sack[0][0] = 11448; o.sack[0][1] = 15792;
	assert_true(sup(&n, &o));
}

static void
test_an_older_first_block_that_starts_below_its_ack_is_never_dropped(void **state)
{
	/* Some senders take a first block whose left edge is below the
	 * cumulative ACK for a D-SACK, even if it ends above it. */
	struct seg o = ack(10000, 100), n = ack(20000, 101);

	(void)state;
	o.nsack = 1;
	o.sack[0][0] = 8552; o.sack[0][1] = 11448;
	assert_false(sup(&n, &o));
}

static void
test_a_newer_block_that_starts_below_its_ack_covers_nothing(void **state)
{
	/* A sender may take such a first block for a D-SACK and not mark
	 * its data SACKed, so it cannot stand in for an older block. */
	struct seg o = ack(10000, 100), n = ack(10500, 101);

	(void)state;
	o.nsack = 1;
	o.sack[0][0] = 11448; o.sack[0][1] = 12896;
	n.nsack = 1;
	n.sack[0][0] = 10000; n.sack[0][1] = 12896;
	assert_false(sup(&n, &o));
	n.sack[0][0] = 11000;       /* the same block above its ACK covers */
	assert_true(sup(&n, &o));
}

static void
test_a_newer_dsack_may_replace_an_older_plain_ack(void **state)
{
	/* The newer ACK stays, so its D-SACK reaches the sender. */
	struct seg o = ack(10000, 100), n = ack(10000, 101);

	(void)state;
	o.nsack = 1;
	o.sack[0][0] = 11448; o.sack[0][1] = 15792;
	n.nsack = 2;
	n.sack[0][0] = 12896; n.sack[0][1] = 14344;
	n.sack[1][0] = 11448; n.sack[1][1] = 17240;
	assert_true(sup(&n, &o));
}

static void
test_flags_data_tos_and_unknown_options_keep_the_older_ack(void **state)
{
	static const uint8_t other[] = { F_FIN, F_SYN, F_RST, F_URG };
	struct seg o, n;

	(void)state;
	for (unsigned int i = 0; i < RTE_DIM(other); i++) {
		o = ack(10000, 100);
		n = ack(11448, 101);
		o.flags |= other[i];
		assert_false(sup(&n, &o));
		o.flags = F_ACK;
		n.flags |= other[i];
		assert_false(sup(&n, &o));
	}
	o = ack(10000, 100);
	n = ack(11448, 101);
	n.flags |= F_ECE;           /* ECN echo starts */
	assert_false(sup(&n, &o));
	o.flags |= F_ECE;
	assert_true(sup(&n, &o));   /* both echo: same information */
	n.flags |= F_CWR;
	assert_false(sup(&n, &o));
	n = ack(11448, 101);
	o = ack(10000, 100);
	o.payload = 100;            /* data: not a pure ACK */
	assert_false(sup(&n, &o));
	o.payload = 0;
	n.payload = 1;
	assert_false(sup(&n, &o));
	n.payload = 0;
	o.tos = 3;                  /* CE on the older one */
	assert_false(sup(&n, &o));
	o.tos = 0;
	n.extra_kind = 30;          /* MPTCP: data-level ACKs we do not read */
	assert_false(sup(&n, &o));
	n.extra_kind = 0;
	o.extra_kind = 19;
	assert_false(sup(&n, &o));
	o.extra_kind = 0;
	n.ts = 0;                   /* timestamps on one only */
	assert_false(sup(&n, &o));
	n = ack(11448, 99);         /* an older TSval: reordered, keep both */
	assert_false(sup(&n, &o));
	n = ack(11448, 101);
	n.tsecr = 6;
	assert_false(sup(&n, &o));
	n = ack(11448, 101);
	n.sport = 40001;            /* another connection */
	assert_false(sup(&n, &o));
	n.sport = 40000;
	n.v6 = 1;
	assert_false(sup(&n, &o));
	n.flags |= F_PSH;           /* any flag difference keeps it */
	n.v6 = 0;
	assert_false(sup(&n, &o));
}

/* A pipe slow enough that nothing leaves during the test's enqueues. */
static struct aqm_sched *
pipe_ackf(bool on, uint32_t flows)
{
	struct aqm_pipe_params pp;

	aqm_pipe_params_default(&pp);
	pp.shaper.rate_bps = 1000000;
	pp.fq.flows = flows;
	pp.fq.ack_filter = on;
	return test_sched(&pp, 1);
}

static void
enq(struct aqm_sched *s, const struct seg *g, uint64_t now)
{
	struct rte_mbuf *m = mk(g);

	assert_int_equal(aqm_sched_pipe_enqueue_burst(s, 0, &m, 1, now), 1);
}

/* Dequeue everything (advancing the virtual clock) into acks[]. */
static unsigned int
drain(struct aqm_sched *s, uint64_t now, uint32_t *acks, uint16_t *lens, unsigned int max)
{
	unsigned int n = 0;

	for (int i = 0; i < 100000 && aqm_sched_pending(s) > 0; i++) {
		struct rte_mbuf *m;

		now += 100000;
		if (aqm_sched_dequeue_burst(s, &m, 1, now) == 1) {
			assert_true(n < max);
			acks[n] = ack_of(m);
			lens[n] = (uint16_t)(pkt_meta(m)->l3_len);
			n++;
			rte_pktmbuf_free(m);
		}
	}
	assert_int_equal(aqm_sched_pending(s), 0);
	return n;
}

static void
check_conservation(struct aqm_sched *s)
{
	struct aqm_pipe_stats st;
	uint64_t drops = 0;

	assert_int_equal(aqm_sched_pipe_stats(s, 0, &st), 0);
	for (int r = 0; r < AQM_DROP_MAX; r++)
		drops += st.drops[r];
	assert_int_equal(st.enq_pkts, st.tx_pkts + drops + st.ack_filtered + st.backlog_pkts);
}

static void
test_a_train_of_acks_leaves_only_the_newest(void **state)
{
	struct aqm_sched *on = pipe_ackf(true, 1024), *off = pipe_ackf(false, 1024);
	struct aqm_pipe_stats st;
	uint32_t acks[32];
	uint16_t lens[32];

	(void)state;
	assert_non_null(on);
	assert_non_null(off);
	for (uint32_t i = 0; i < 10; i++) {
		struct seg g = ack(10000 + 1448 * i, 100 + i);

		enq(on, &g, T0 + i * 1000);
		enq(off, &g, T0 + i * 1000);
	}
	assert_int_equal(aqm_sched_pending(on), 1);
	assert_int_equal(aqm_sched_pending(off), 10);
	assert_int_equal(aqm_sched_pipe_stats(on, 0, &st), 0);
	assert_int_equal(st.ack_filtered, 9);
	assert_int_equal(st.enq_pkts, 10);
	assert_int_equal(st.backlog_bytes, 66);
	check_conservation(on);
	assert_int_equal(drain(on, T0 + 10000, acks, lens, 32), 1);
	assert_int_equal(acks[0], 10000 + 1448 * 9);
	assert_int_equal(drain(off, T0 + 10000, acks, lens, 32), 10);
	assert_int_equal(aqm_sched_pipe_stats(off, 0, &st), 0);
	assert_int_equal(st.ack_filtered, 0);
	check_conservation(on);
	aqm_sched_free(on);
	aqm_sched_free(off);
}

static void
test_the_filter_never_reorders_and_keeps_what_it_cannot_judge(void **state)
{
	/* One flow queue for everything (flows = 1): hash collisions too. */
	struct aqm_sched *s = pipe_ackf(true, 1);
	struct seg a1 = ack(10000, 100), a2 = ack(11448, 101), a3 = ack(12896, 102);
	struct seg d = ack(10000, 100), other = ack(50000, 100), dup = ack(12896, 103);
	struct aqm_pipe_stats st;
	uint32_t acks[32];
	uint16_t lens[32];
	unsigned int n;

	(void)state;
	assert_non_null(s);
	d.payload = 1000;
	d.flags |= F_PSH;
	other.sport = 40001;
	enq(s, &a1, T0);        /* [a1] */
	enq(s, &d, T0 + 1);     /* [a1 d]: data of the same connection */
	enq(s, &a2, T0 + 2);    /* [a1 d a2]: the tail was data, nothing goes */
	enq(s, &a3, T0 + 3);    /* [a1 d a3]: a2 unlinked behind d */
	enq(s, &other, T0 + 4); /* [a1 d a3 other]: another connection */
	enq(s, &dup, T0 + 5);   /* tail is another connection's: kept */
	enq(s, &dup, T0 + 6);   /* a duplicate ACK: kept */
	assert_int_equal(aqm_sched_pipe_stats(s, 0, &st), 0);
	assert_int_equal(st.ack_filtered, 1);
	check_conservation(s);
	n = drain(s, T0 + 10, acks, lens, 32);
	assert_int_equal(n, 6);
	assert_int_equal(acks[0], 10000);
	assert_int_equal(lens[1], 20 + 32 + 1000); /* d */
	assert_int_equal(acks[2], 12896);
	assert_int_equal(acks[3], 50000);
	assert_int_equal(acks[4], 12896);
	assert_int_equal(acks[5], 12896);
	aqm_sched_free(s);
}

static void
test_a_fifo_pipe_ignores_the_ack_filter(void **state)
{
	struct aqm_pipe_params pp;
	struct aqm_sched *s;
	struct aqm_pipe_stats st;

	(void)state;
	aqm_pipe_params_default(&pp);
	pp.qdisc = AQM_QDISC_FIFO;
	pp.shaper.rate_bps = 1000000;
	pp.fq.ack_filter = true;
	s = test_sched(&pp, 1);
	assert_non_null(s);
	for (uint32_t i = 0; i < 5; i++) {
		struct seg g = ack(10000 + 1448 * i, 100 + i);

		enq(s, &g, T0 + i);
	}
	assert_int_equal(aqm_sched_pending(s), 5);
	assert_int_equal(aqm_sched_pipe_stats(s, 0, &st), 0);
	assert_int_equal(st.ack_filtered, 0);
	aqm_sched_free(s);
}

static void
test_a_queued_dsack_above_the_ack_survives_a_train_of_newer_acks(void **state)
{
	struct aqm_sched *s = pipe_ackf(true, 1024);
	struct seg d = ack(10000, 100), g;
	struct aqm_pipe_stats st;
	struct rte_mbuf *m;
	bool seen = false;

	(void)state;
	assert_non_null(s);
	d.nsack = 2;
	d.sack[0][0] = 12896; d.sack[0][1] = 14344;
	d.sack[1][0] = 11448; d.sack[1][1] = 15792;
	enq(s, &d, T0);
	for (uint32_t i = 1; i <= 4; i++) {
		g = ack(10000 + 10000 * i, 100 + i);
		enq(s, &g, T0 + i);
	}
	assert_int_equal(aqm_sched_pipe_stats(s, 0, &st), 0);
	assert_int_equal(st.ack_filtered, 3); /* the plain ACKs replace each other */
	assert_int_equal(aqm_sched_pending(s), 2);
	for (uint64_t now = T0 + 100000; aqm_sched_pending(s) > 0; now += 100000) {
		if (aqm_sched_dequeue_burst(s, &m, 1, now) != 1)
			continue;
		if (ack_of(m) == 10000) {
			assert_int_equal(pkt_meta(m)->l4_len, 20 + 12 + 20);
			seen = true;
		}
		rte_pktmbuf_free(m);
	}
	assert_true(seen);
	aqm_sched_free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_newer_cumulative_ack_supersedes_an_older_one_not_the_reverse),
		cmocka_unit_test(test_an_ack_further_ahead_than_any_window_does_not_supersede),
		cmocka_unit_test(test_a_duplicate_ack_without_sack_is_never_superseded),
		cmocka_unit_test(test_sack_must_cover_the_older_acks_blocks),
		cmocka_unit_test(test_an_older_dsack_is_never_dropped),
		cmocka_unit_test(test_an_older_dsack_above_its_ack_is_never_dropped),
		cmocka_unit_test(test_an_older_first_block_that_starts_below_its_ack_is_never_dropped),
		cmocka_unit_test(test_a_newer_block_that_starts_below_its_ack_covers_nothing),
		cmocka_unit_test(test_a_newer_dsack_may_replace_an_older_plain_ack),
		cmocka_unit_test(test_flags_data_tos_and_unknown_options_keep_the_older_ack),
		cmocka_unit_test(test_a_train_of_acks_leaves_only_the_newest),
		cmocka_unit_test(test_the_filter_never_reorders_and_keeps_what_it_cannot_judge),
		cmocka_unit_test(test_a_queued_dsack_above_the_ack_survives_a_train_of_newer_acks),
		cmocka_unit_test(test_a_fifo_pipe_ignores_the_ack_filter),
	};

	if (test_eal_init("ack", 4096, 64) < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
