// SPDX-License-Identifier: BSD-3-Clause
//
// cbench.h on top of Google Benchmark: the only C++ of perf/gbench.
//
// The timed loop (CBENCH_LOOP) takes a whole run's iterations from Google
// Benchmark in one KeepRunningBatch(max_iterations) call, which starts the
// clock, and counts them down in a local variable of the C caller. When
// they are done, a KeepRunning() call finishes the run and stops the
// clock: the same two steps C++'s `for (auto _ : state)` takes.

#include "cbench.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

// Set when a benchmark stopped with an error, for cbench_main()'s status.
bool g_failed;

benchmark::State &
gb(const cbench_state *st)
{
	return *static_cast<benchmark::State *>(st->gb_);
}

// Runs one benchmark function on one run of Google Benchmark.
void
run_def(benchmark::State &state, const cbench_def *d)
{
	cbench_state st = {};

	st.gb_ = &state;
	st.def_ = d;
	d->fn(&st);
	if (!st.finished_) {
		// A function that returned without a loop, or left it early:
		// Google Benchmark requires every run to end its loop.
		if (!st.started_ && !state.error_occurred())
			state.SkipWithError("the benchmark has no timed loop");
		else if (!state.error_occurred())
			state.SkipWithError("the benchmark left its timed loop early");
		if (!st.started_)
			(void)cbench_loop_start_(&st);
		(void)cbench_loop_end_(&st);
	}
	if (state.error_occurred())
		g_failed = true;
}

bool
register_def(const cbench_def &d)
{
	unsigned int dims = d.ndims == 0 ? 1 : d.ndims;

	if (d.name == nullptr || d.fn == nullptr || dims > CBENCH_MAX_DIMS ||
	    d.nargs % dims != 0 || (d.nargs > 0 && d.args == nullptr)) {
		std::fprintf(stderr, "cbench: malformed definition of %s\n",
			     d.name != nullptr ? d.name : "(no name)");
		return false;
	}
	// cbench_main()'s caller keeps the table while the benchmarks run.
	const cbench_def *dp = &d;
	benchmark::internal::Benchmark *b = benchmark::RegisterBenchmark(
		d.name, [dp](benchmark::State &state) { run_def(state, dp); });
	for (unsigned int i = 0; i < d.nargs; i += dims)
		b->Args(std::vector<int64_t>(d.args + i, d.args + i + dims));
	if (d.flags & CBENCH_MANUAL_TIME)
		b->UseManualTime();
	if (d.flags & CBENCH_REAL_TIME)
		b->UseRealTime();
	return true;
}

} // namespace

extern "C" {

int
cbench_main(int argc, char **argv, const cbench_def *defs, size_t n)
{
	benchmark::Initialize(&argc, argv);
	if (benchmark::ReportUnrecognizedArguments(argc, argv))
		return 1;
	for (size_t i = 0; i < n; i++)
		if (!register_def(defs[i]))
			return 1;
	g_failed = false;
	benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	return g_failed ? 1 : 0;
}

uint64_t
cbench_loop_start_(cbench_state *st)
{
	benchmark::State &s = gb(st);

	st->started_ = true;
	if (s.max_iterations > 0 && s.KeepRunningBatch(s.max_iterations))
		return (uint64_t)s.max_iterations;
	// The run failed before its loop: Google Benchmark has ended it.
	st->finished_ = true;
	return 0;
}

bool
cbench_loop_end_(cbench_state *st)
{
	if (!st->finished_) {
		st->finished_ = true;
		// Nothing is left of the batch: this ends the run.
		(void)gb(st).KeepRunning();
	}
	return false;
}

int64_t
cbench_range(const cbench_state *st, unsigned int i)
{
	const cbench_def *d = st->def_;

	if (d->nargs == 0 || i >= (d->ndims == 0 ? 1 : d->ndims)) {
		std::fprintf(stderr, "cbench: %s has no argument %u\n",
			     d->name, i);
		std::abort();
	}
	return gb(st).range(i);
}

int64_t
cbench_iterations(const cbench_state *st)
{
	return (int64_t)gb(st).iterations();
}

void
cbench_set_items_processed(cbench_state *st, int64_t items)
{
	gb(st).SetItemsProcessed(items);
}

void
cbench_set_bytes_processed(cbench_state *st, int64_t bytes)
{
	gb(st).SetBytesProcessed(bytes);
}

void
cbench_counter(cbench_state *st, const char *name, double value,
	       unsigned int flags)
{
	int f = benchmark::Counter::kDefaults;

	if (flags & CBENCH_COUNTER_RATE)
		f |= benchmark::Counter::kIsRate;
	if (flags & CBENCH_COUNTER_AVG_ITERATIONS)
		f |= benchmark::Counter::kAvgIterations;
	if (flags & CBENCH_COUNTER_ITERATION_INVARIANT)
		f |= benchmark::Counter::kIsIterationInvariant;
	if (flags & CBENCH_COUNTER_INVERT)
		f |= benchmark::Counter::kInvert;
	gb(st).counters[name] = benchmark::Counter(
		value, static_cast<benchmark::Counter::Flags>(f));
}

void
cbench_set_iteration_time(cbench_state *st, double seconds)
{
	gb(st).SetIterationTime(seconds);
}

void
cbench_pause_timing(cbench_state *st)
{
	gb(st).PauseTiming();
}

void
cbench_resume_timing(cbench_state *st)
{
	gb(st).ResumeTiming();
}

void
cbench_set_label(cbench_state *st, const char *label)
{
	gb(st).SetLabel(label);
}

void
cbench_skip_with_error(cbench_state *st, const char *msg)
{
	gb(st).SkipWithError(msg);
}

} // extern "C"
