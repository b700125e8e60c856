/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fixed transfer between two engines on the virtual clock, for counting
 * instructions per segment under callgrind (the figure the hooks' cost is
 * measured by; wall-clock time on a shared machine is not reliable):
 *
 *   valgrind --tool=callgrind --callgrind-out-file=cg.out \
 *       build/tests/unit/tcp/bench_tcp_transfer [MB [POOL]]
 *
 * then divide the total instructions by the segments it prints. A
 * connection of engine A sends MB megabytes (default 16) to a connection
 * of engine B, which reads them as they arrive: two engine connections,
 * data one way and ACKs the other, as each leg of the proxy carries.
 * No hooks are set: this is the cost a plain connection pays. With POOL
 * (bytes), both engines have a receive pool that large
 * (tcp_engine_set_rcv_pool()), as the proxy's engine has.
 */

#include "tcp_test_util.h"

int
main(int argc, char **argv)
{
	struct tcp_engine_params pa, pb;
	static uint8_t chunk[65536];
	uint64_t total = (uint64_t)(argc > 1 ? atoi(argv[1]) : 16) << 20, sent = 0;
	struct wire *w;
	struct tcp_conn *c;

	if (test_eal_init("bench_transfer") < 0)
		return 1;
	wire_params(&pa, "ba", NULL);
	wire_params(&pb, "bb", NULL);
	w = wire_new(&pa, &pb);
	w->delay = US(500);
	if (argc > 2) {
		tcp_engine_set_rcv_pool(w->a, strtoull(argv[2], NULL, 0));
		tcp_engine_set_rcv_pool(w->b, strtoull(argv[2], NULL, 0));
	}
	c = wire_connect(w);
	if (c == NULL || w->app_b.conn == NULL)
		return 1;
	for (size_t i = 0; i < sizeof(chunk); i++)
		chunk[i] = (uint8_t)i;
	while (sent < total || w->app_b.rx_bytes < total) {
		if (sent < total) {
			uint64_t left = total - sent;
			int32_t n = tcp_send(c, chunk, left < sizeof(chunk) ?
					     (uint32_t)left : sizeof(chunk), w->now);

			if (n > 0)
				sent += (uint64_t)n;
		}
		wire_run(w, US(100));
	}
	printf("bytes %llu data_segments %u pure_acks %u\n",
	       (unsigned long long)w->app_b.rx_bytes, w->n_data[1], w->n_pure_ack[0]);
	wire_free(w);
	return w->app_b.rx_bytes == total ? 0 : 1;
}
