#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Run the network-namespace end-to-end tests against a sluice binary.
#
#   bash tests/e2e/run.sh [path/to/sluice] [test ...]
#
# The binary defaults to build/app/sluice. Tests are the test_*.sh files in
# this directory; name some (e.g. "ping" for test_ping.sh) to run only those.
# Prints one "PASS name", "FAIL name: reason" or "SKIP name: reason" line
# per check and then "N passed, N failed" (and ", N skipped" if any);
# exits non-zero if anything failed. Diagnostics go to
# stderr. Needs root, iproute2, iputils-ping, iperf3, ethtool, python3.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

bin=${1:-}
[ $# -gt 0 ] && shift
if [ -z "$bin" ]; then
	bin=build/app/sluice
	[ -e "$bin" ] || bin=$root/build/app/sluice
fi
if [ ! -x "$bin" ]; then
	echo "FAIL e2e: sluice binary not found or not executable: $bin (build it: meson setup build && ninja -C build)"
	echo "0 passed, 1 failed"
	exit 1
fi
SLUICE=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
export SLUICE

tests=()
if [ $# -gt 0 ]; then
	for t in "$@"; do
		t=${t#test_}; t=${t%.sh}
		[ -f "$here/test_$t.sh" ] || { echo "FAIL e2e: no test $t (no test_$t.sh)"; echo "0 passed, 1 failed"; exit 1; }
		tests+=("$here/test_$t.sh")
	done
else
	tests=("$here"/test_*.sh)
fi

results=$(mktemp "${TMPDIR:-/tmp}/sluice-e2e-results.XXXXXX")
child=
# On INT/TERM, stop the running test by its PID: timeout passes the signal
# to the test's process group and the test's own trap cleans up.
stop() {
	trap - INT TERM
	if [ -n "$child" ]; then kill -TERM "$child" 2>/dev/null; wait "$child"; fi
	echo "e2e: interrupted" >&2
	exit 130
}
trap stop INT TERM
trap 'rm -f "$results" "$results.one" "$results.err"' EXIT
start=$(date +%s)
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh); name=${name#test_}
	: >"$results.one"
	t0=$(date +%s)
	# Each test builds and removes its own namespaces; the timeout is a
	# backstop (TERM runs the test's cleanup trap, KILL 15 s later).
	# A test may ask for more time with a "# e2e-timeout: SECONDS" line.
	tmo=$(sed -n 's/^# e2e-timeout: *\([0-9][0-9]*\).*/\1/p' "$t" | head -1)
	tmo=${E2E_TEST_TIMEOUT:-${tmo:-150}}
	E2E_RESULTS=$results.one timeout -k 15 "$tmo" \
		bash "$t" </dev/null >/dev/null 2>"$results.err" &
	child=$!
	wait "$child"
	rc=$?
	child=
	cat "$results.one"
	cat "$results.one" >>"$results"
	if [ $rc != 0 ]; then
		sed "s/^/  [$name] /" "$results.err" >&2
		if ! grep -q '^FAIL' "$results.one"; then
			if [ $rc = 124 ] || [ $rc = 137 ]; then
				why="timed out after $tmo s"
			else
				why="exited with status $rc and reported no failure"
			fi
			echo "FAIL $name: $why" | tee -a "$results"
		fi
	fi
	rm -f "$results.err"
	# Each test's time, on stderr (CI keeps it in the suite's log).
	echo "e2e: $name took $(( $(date +%s) - t0 )) s" >&2
done
pass=$(grep -c '^PASS' "$results")
fail=$(grep -c '^FAIL' "$results")
skip=$(grep -c '^SKIP' "$results")
echo "e2e: $((pass + fail)) checks in $(( $(date +%s) - start )) s" >&2
if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
