#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Instructions per packet of sluice's worker, counted by callgrind: the
# figure to compare two builds by on a noisy machine, where packet rates
# wander by more than the change being measured.
#
#   perf/callgrind.sh [--seconds N] SLUICE MODE
#
# MODE: passthrough (net_null, no configuration), aqm (the traffic and
# [aqm] of perf/bench.sh aqm, 10k flows to 1k subscribers), tcpopt-syn or
# tcpopt-data (perf/tcpopt_traffic.py with config/examples/mss-clamp-1400.ini),
# syn or data (the same traffic without configuration).
# Prints "ipp MODE <worker_main inclusive Ir / packets sent>" last. With
# CG_KEEP=FILE the callgrind profile is kept there, for callgrind_annotate.
# Needs root (or write access to the DPDK runtime directory), valgrind.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
SECONDS_RUN=40
if [ "${1:-}" = "--seconds" ]; then
	SECONDS_RUN=$2
	shift 2
fi
[ $# -eq 2 ] || { echo "usage: $0 [--seconds N] SLUICE MODE" >&2; exit 2; }
SLUICE=$1
MODE=$2
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
PY=${BENCH_PYTHON:-/usr/bin/python3}
CFG=()
case "$MODE" in
passthrough)
	VDEVS=(--vdev net_null0 --vdev net_null1)
	;;
aqm)
	"$PY" "$HERE/aqm_traffic.py" "$DIR" --flows 10000 --subscribers 1000 \
		--rate 10gbit --size 64 >/dev/null
	cat >"$DIR/aqm.ini" <<EOF
[sluice]
mbufs = 32767
[aqm]
ports = 0
qdisc = fq_codel
subscribers = subscribers.csv
max_subscribers = 1024
default = pass
EOF
	VDEVS=(--vdev "net_null0,no-rx=1"
	       --vdev "net_pcap1,rx_pcap=$DIR/down.pcap,infinite_rx=1")
	CFG=(-c "$DIR/aqm.ini")
	;;
syn | data | tcpopt-syn | tcpopt-data)
	kind=${MODE#tcpopt-}
	"$PY" "$HERE/tcpopt_traffic.py" "$kind" "$DIR/0.pcap" "$DIR/1.pcap" >/dev/null
	VDEVS=(--vdev "net_pcap0,rx_pcap=$DIR/0.pcap,infinite_rx=1"
	       --vdev "net_pcap1,rx_pcap=$DIR/1.pcap,infinite_rx=1")
	[ "$kind" = "$MODE" ] || CFG=(-c "$REPO/config/examples/mss-clamp-1400.ini")
	;;
*)
	echo "unknown mode $MODE" >&2
	exit 2
	;;
esac

valgrind --tool=callgrind --callgrind-out-file="$DIR/cg.out" \
	"$SLUICE" --no-huge -m 512 --no-pci --no-shconf -l 1 \
	--file-prefix "cg$$" --log-level='lib.*:error' "${VDEVS[@]}" \
	-- "${CFG[@]}" >"$DIR/out.log" 2>&1 &
pid=$!
# Count from the boot line: under valgrind on a busy machine the EAL may
# take long to start, and a SIGINT before sluice handles it is lost.
for _ in $(seq 1 600); do
	grep -q ' port pair(s), ' "$DIR/out.log" 2>/dev/null && break
	sleep 1
done
sleep "$SECONDS_RUN"
kill -INT "$pid"
wait "$pid" || true
tx=$(sed -n 's/^totals .* tx=\([0-9]*\).*/\1/p' "$DIR/out.log" | tail -n 1)
ir=$(callgrind_annotate --inclusive=yes "$DIR/cg.out" 2>/dev/null |
	awk '/worker_main/ && !seen { gsub(",", "", $1); print $1; seen = 1 }')
if [ -z "$tx" ] || [ -z "$ir" ] || [ "$tx" -eq 0 ]; then
	cat "$DIR/out.log" >&2
	echo "no packet count or no worker_main in the profile" >&2
	exit 1
fi
[ -z "${CG_KEEP:-}" ] || cp "$DIR/cg.out" "$CG_KEEP"
echo "packets $MODE $tx"
echo "ipp $MODE $(awk -v i="$ir" -v n="$tx" 'BEGIN { printf "%.1f", i / n }')"
