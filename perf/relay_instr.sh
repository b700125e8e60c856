#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The proxy's own instructions per relayed segment, counted by callgrind
# on perf/relaybench: one bulk transfer through lib/mptcp_proxy between
# two lib/tcp engines in memory, on a virtual clock. The same frames in
# the same order every run, so the figure repeats to the instruction and
# two builds compare exactly (perf/README.md, "The relay in memory").
#
#   perf/relay_instr.sh [--bytes N] [--download] [--mptcp] [--top N]
#                       [--rate MBIT] [--loop-us N] BUILD_DIR_OR_BINARY
#
# --bytes N     bytes to move (relaybench's --bytes: 16M by default; K, M,
#               G are binary)
# --download    server to client (default: client to server, an upload)
# --mptcp       the client speaks MPTCP to the proxy over one subflow, and
#               the proxy terminates it (relaybench's --mptcp; default:
#               plain TCP). Also prints the proxy's counters that moved.
# --rate MBIT, --loop-us N
#               relaybench's: space the frames by a link rate, and run the
#               worker loop on a grid of N us (default: neither)
# --top N       also the N functions with the most instructions of their
#               own, per segment ("top relay ..." lines, perf/cg_top.py)
# BUILD_DIR_OR_BINARY
#               a build directory (its perf/relaybench/relaybench) or the
#               relaybench binary itself
#
# Counted: relay_step() with everything it calls, i.e. what sluice's proxy
# stage runs per worker loop (mptcp_proxy_input_burst() for each port that
# received something, then mptcp_proxy_poll()); not the peers' engines, not
# the harness. Prints relaybench's figures, then
#   instructions relay <v> per segment (<total> instructions over <n> segments)
# where segments are the data segments the proxy received from the sender.
# With RELAY_CG_KEEP=FILE the callgrind profile is kept there. Needs
# valgrind (callgrind_annotate for --top).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
PY=${BENCH_PYTHON:-/usr/bin/python3}
ARGS=()
TOP=0
usage() {
	echo "usage: $0 [--bytes N] [--download] [--mptcp] [--top N] [--rate MBIT] [--loop-us N] BUILD_DIR_OR_BINARY" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case "$1" in
	--bytes) [ $# -ge 2 ] || usage; ARGS+=(--bytes "$2"); shift 2 ;;
	--download) ARGS+=(--download); shift ;;
	--mptcp) ARGS+=(--mptcp); shift ;;
	--rate | --loop-us) [ $# -ge 2 ] || usage; ARGS+=("$1" "$2"); shift 2 ;;
	--top) [ $# -ge 2 ] || usage; TOP=$2; shift 2 ;;
	-h | --help) usage ;;
	-*) usage ;;
	*) break ;;
	esac
done
[ $# -eq 1 ] || usage
case "$TOP" in '' | *[!0-9]*) usage ;; esac
BIN=$1
[ -d "$BIN" ] && BIN=$BIN/perf/relaybench/relaybench
[ -x "$BIN" ] || { echo "relay_instr: no relaybench at $BIN (build it: ninja -C BUILD_DIR)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "relay_instr: no valgrind (apt-get install valgrind)" >&2; exit 1; }

DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
CG=$DIR/cg.out
rc=0
valgrind --tool=callgrind --callgrind-out-file="$CG" --toggle-collect='relay_step*' \
	"$BIN" "${ARGS[@]}" >"$DIR/out.log" 2>"$DIR/err.log" || rc=$?
if [ "$rc" != 0 ]; then
	tail -n 20 "$DIR/err.log" >&2
	cat "$DIR/out.log" >&2
	echo "relay_instr: relaybench failed (status $rc)" >&2
	exit 1
fi
cat "$DIR/out.log"
segs=$(sed -n 's/^segments_in \([0-9]*\)$/\1/p' "$DIR/out.log")
# The collected total: the last "totals:" line (or "summary:").
total=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$CG" | tail -n 1)
[ -n "$total" ] || total=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$CG" | tail -n 1)
if [ -z "$segs" ] || [ "$segs" -le 0 ]; then
	echo "relay_instr: no segments_in from relaybench" >&2
	exit 1
fi
if [ -z "$total" ] || [ "$total" -le 0 ]; then
	echo "relay_instr: no instructions counted in relay_step" >&2
	exit 1
fi
awk -v t="$total" -v s="$segs" 'BEGIN {
	printf "instructions relay %.1f per segment (%d instructions over %d segments)\n", t / s, t, s }'
if [ "$TOP" -gt 0 ]; then
	command -v callgrind_annotate >/dev/null || { echo "relay_instr: no callgrind_annotate for --top" >&2; exit 1; }
	"$PY" "$HERE/cg_top.py" "$CG" "$segs" relay segment "$TOP"
fi
if [ -n "${RELAY_CG_KEEP:-}" ]; then
	cp "$CG" "$RELAY_CG_KEEP"
fi
