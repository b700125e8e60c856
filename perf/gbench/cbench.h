/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_PERF_CBENCH_H
#define SLUICE_PERF_CBENCH_H

/**
 * @file
 * cbench: Google Benchmark for benchmarks written in C.
 *
 * A benchmark is a C function that takes a struct cbench_state and times
 * the body of a CBENCH_LOOP(st) loop. A binary lists its benchmarks in a
 * table of struct cbench_def and hands it to cbench_main(), which parses
 * the usual --benchmark_* flags, runs the benchmarks those flags select
 * and reports them as Google Benchmark does:
 *
 *     static void
 *     BM_sum(struct cbench_state *st)
 *     {
 *             uint64_t s = 0;
 *
 *             CBENCH_LOOP(st)
 *                     cbench_do_not_optimize(s += (uint64_t)cbench_range(st, 0));
 *             cbench_set_items_processed(st, cbench_iterations(st));
 *     }
 *
 *     static const struct cbench_def benches[] = {
 *             { CBENCH(BM_sum), CBENCH_ARGS(1, 512) },
 *     };
 *     CBENCH_MAIN(benches)
 *
 * A binary that must set something up first (the EAL, a mempool) writes
 * its own main() and ends it with cbench_main().
 *
 * The loop counts down inline and calls into Google Benchmark only when a
 * run starts and ends, so it costs what C++'s `for (auto _ : state)` costs
 * and figures stay comparable with benchmarks written against the C++ API.
 *
 * Only perf/gbench/cbench.cc is C++; everything that includes this header
 * is C (or C++, it is wrapped in extern "C").
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct cbench_def;

/**
 * The state of one run of a benchmark, passed to its function.
 * The members are private to cbench: use the functions below.
 */
struct cbench_state {
	void *gb_;        /**< private: the benchmark::State */
	const struct cbench_def *def_; /**< private: the benchmark run */
	bool started_;    /**< private: the timed loop has begun */
	bool finished_;   /**< private: the timed loop has ended */
};

/** A benchmark: times its CBENCH_LOOP(st) loop. */
typedef void cbench_fn(struct cbench_state *st);

/** The largest number of values cbench_range() can read in one run. */
#define CBENCH_MAX_DIMS 4

/** struct cbench_def flags. */
enum cbench_def_flag {
	/** Time each iteration with cbench_set_iteration_time() instead of
	 *  the CPU clock. */
	CBENCH_MANUAL_TIME = 1u << 0,
	/** Time with the wall clock instead of the process CPU clock. */
	CBENCH_REAL_TIME = 1u << 1,
};

/**
 * One benchmark in a cbench_main() table.
 *
 * Without arguments (nargs 0) it runs once, named @c name. With arguments
 * it runs once per set of @c ndims consecutive values of @c args, named
 * `name/v0/v1...` as Google Benchmark names them; cbench_range() reads the
 * values of the set.
 */
struct cbench_def {
	const char *name;        /**< name shown in reports and matched by
				  *   --benchmark_filter */
	cbench_fn *fn;           /**< the benchmark function */
	const int64_t *args;     /**< nargs values, or NULL */
	unsigned int nargs;      /**< a multiple of ndims */
	unsigned int ndims;      /**< values per run, 1..CBENCH_MAX_DIMS;
				  *   0 means 1 */
	unsigned int flags;      /**< enum cbench_def_flag bits */
};

/** Names a benchmark after its function: `{ CBENCH(BM_x) }`. */
#define CBENCH(func) .name = #func, .fn = (func)

/** One-value argument sets, one run each: `CBENCH_ARGS(1, 512)`. */
#define CBENCH_ARGS(...) \
	.args = (const int64_t[]){ __VA_ARGS__ }, \
	.nargs = (unsigned int)(sizeof((const int64_t[]){ __VA_ARGS__ }) / \
				sizeof(int64_t)), \
	.ndims = 1

/**
 * Registers the benchmarks of @p defs, runs those the command line selects
 * and reports them. Accepts every --benchmark_* flag of Google Benchmark
 * (--benchmark_filter, --benchmark_repetitions, --benchmark_format, ...).
 *
 * @param argc, argv  the command line of main()
 * @param defs        the benchmarks, in the order they run
 * @param n           how many
 * @return 0; 1 when the command line has an argument Google Benchmark does
 *         not know, a definition is malformed, or a benchmark stopped with
 *         cbench_skip_with_error().
 */
int cbench_main(int argc, char **argv, const struct cbench_def *defs, size_t n);

/** A main() that only runs the benchmarks of the array @p defs. */
#define CBENCH_MAIN(defs) \
	int main(int argc, char **argv) \
	{ \
		return cbench_main(argc, argv, (defs), \
				   sizeof(defs) / sizeof((defs)[0])); \
	}

/** @internal Starts the clock of a run: its number of iterations, or 0
 *  when the run has already failed. */
uint64_t cbench_loop_start_(struct cbench_state *st);

/** @internal Ends a run: stops the clock. Returns false. */
bool cbench_loop_end_(struct cbench_state *st);

/**
 * The timed loop: `CBENCH_LOOP(st) { ... }` runs its body as many times as
 * Google Benchmark asks and times them all. Use it once per benchmark
 * function. `continue` goes on to the next iteration; `break` leaves the
 * loop, which only a run that failed (cbench_skip_with_error()) may do.
 *
 * It is C++'s `for (auto _ : state)`: the iterations are counted down in
 * a local variable, which stays in a register even where the body
 * clobbers memory, and Google Benchmark is called only when the run
 * starts and when it ends. (A `while (keep_running(st))` test that
 * counted in the state would store and reload the count every iteration,
 * a dependency through memory that a body of a few nanoseconds would
 * measure.)
 */
#define CBENCH_LOOP(st) \
	for (uint64_t cbench_left_ = cbench_loop_start_(st); \
	     __builtin_expect(cbench_left_ != 0, 1) || cbench_loop_end_(st); \
	     cbench_left_--)

/**
 * The value at @p i of this run's argument set (see struct cbench_def).
 * Asking for a value the set does not have aborts the benchmark binary
 * with a message.
 */
int64_t cbench_range(const struct cbench_state *st, unsigned int i);

/** Iterations the timed loop has run; read it after the loop. */
int64_t cbench_iterations(const struct cbench_state *st);

/**
 * Reports @p items processed in this run. Adds an items_per_second rate
 * to the report.
 */
void cbench_set_items_processed(struct cbench_state *st, int64_t items);

/**
 * Reports @p bytes processed in this run. Adds a bytes_per_second rate
 * to the report.
 */
void cbench_set_bytes_processed(struct cbench_state *st, int64_t bytes);

/** How cbench_counter() reports a value (Google Benchmark's Counter flags). */
enum cbench_counter_flag {
	/** Plain: the value as given. */
	CBENCH_COUNTER_PLAIN = 0,
	/** Divided by the run's time: a rate per second. */
	CBENCH_COUNTER_RATE = 1u << 0,
	/** Divided by the iterations. */
	CBENCH_COUNTER_AVG_ITERATIONS = 1u << 1,
	/** Multiplied by the iterations. */
	CBENCH_COUNTER_ITERATION_INVARIANT = 1u << 2,
	/** Inverted after the rest: with RATE, seconds per item. */
	CBENCH_COUNTER_INVERT = 1u << 3,
};

/**
 * Sets the user counter @p name of this run to @p value, reported as
 * @p flags say. Setting a name again replaces its value. For example,
 * (items, CBENCH_COUNTER_RATE | CBENCH_COUNTER_INVERT) reports the time
 * per item; (n, CBENCH_COUNTER_PLAIN) reports n itself.
 */
void cbench_counter(struct cbench_state *st, const char *name, double value,
		    unsigned int flags);

/**
 * Reports the time of the current iteration, in seconds, for a benchmark
 * defined with CBENCH_MANUAL_TIME. Call it once per iteration.
 */
void cbench_set_iteration_time(struct cbench_state *st, double seconds);

/**
 * Stops the clock inside the timed loop, for set-up that must not count.
 * Costly (it reads the clocks): keep it out of loops of short iterations.
 */
void cbench_pause_timing(struct cbench_state *st);

/** Restarts the clock cbench_pause_timing() stopped. */
void cbench_resume_timing(struct cbench_state *st);

/** Attaches @p label to this run's line of the report. */
void cbench_set_label(struct cbench_state *st, const char *label);

/**
 * Marks this run as failed with @p msg: it is reported as an error, not a
 * figure, and cbench_main() returns 1. Inside the timed loop, leave the
 * loop with break right after it: the loop does not end by itself.
 */
void cbench_skip_with_error(struct cbench_state *st, const char *msg);

/**
 * Keeps the compiler from optimising away the computation of @p x:
 * the value is treated as read by something it cannot see.
 * Google Benchmark's DoNotOptimize() for C.
 */
#define cbench_do_not_optimize(x) __asm__ volatile("" : : "r,m"(x) : "memory")

/**
 * Keeps the compiler from assuming anything about memory across this
 * point: every pending write is done, every later read is made again.
 * Google Benchmark's ClobberMemory() for C.
 */
#define cbench_clobber_memory() __asm__ volatile("" : : : "memory")

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_PERF_CBENCH_H */
