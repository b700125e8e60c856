#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# How long one sluice-exporter scrape and one sluice-top frame take with
# many subscribers configured.
#
#   perf/scrape.sh [--subscribers N] [--rounds R] [--sluice PATH] [-- EXPORTER ARGS...]
#
# Writes N /32 subscribers (198.18.0.0/15, 4 flows per pipe to keep memory
# small), starts sluice on two net_null ports that receive nothing, waits
# until the table is loaded, then times R runs of `sluice-exporter --once`
# (with the exporter arguments given after --, e.g. "--pipes all") and
# prints, per run, the wall time, the number of samples and how many
# subscribers have per-pipe samples. Then it times one frame of
# `sluice-top --batch 2` (two frames, one second apart). Needs root (the
# DPDK runtime directory) and about 1 GB of memory at 100k subscribers.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
N=100000
ROUNDS=3
SLUICE=$root/build/app/sluice
while [ $# -gt 0 ]; do
	case $1 in
	--subscribers) N=$2; shift 2 ;;
	--rounds) ROUNDS=$2; shift 2 ;;
	--sluice) SLUICE=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "usage: $0 [--subscribers N] [--rounds R] [--sluice PATH] [-- EXPORTER ARGS]" >&2; exit 2 ;;
	esac
done
[ "$N" -ge 1 ] && [ "$N" -le 131072 ] || { echo "scrape: 1 <= N <= 131072" >&2; exit 2; }
PY=/usr/bin/python3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-scrape.XXXXXX")
prefix=slscrape-$$
pid=
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid"; wait "$pid" 2>/dev/null
	fi
	rm -rf "$tmp" "/var/run/dpdk/$prefix"
}
trap cleanup EXIT INT TERM

"$PY" - "$N" >"$tmp/subscribers.csv" <<'PY'
import sys
n = int(sys.argv[1])
print("prefix,down,up")
for i in range(n):
    print("198.%d.%d.%d/32,20mbit,5mbit" % (18 + (i >> 16), (i >> 8) & 255, i & 255))
PY
cat >"$tmp/sluice.ini" <<EOF
[aqm]
ports = all
subscribers = subscribers.csv
max_subscribers = $N
max_v6_subscribers = 1
subscriber_flows = 4
EOF
t0=$(date +%s.%N)
"$SLUICE" --no-huge -m 2048 --no-pci -l 0 --file-prefix "$prefix" \
	--vdev net_null0,no-rx=1 --vdev net_null1,no-rx=1 -- -c "$tmp/sluice.ini" \
	</dev/null >"$tmp/sluice.log" 2>&1 &
pid=$!
sock=/var/run/dpdk/$prefix/dpdk_telemetry.v2
for _ in $(seq 1 600); do
	grep -q "worker(s), " "$tmp/sluice.log" 2>/dev/null && [ -S "$sock" ] && break
	kill -0 "$pid" 2>/dev/null || { echo "scrape: sluice exited:" >&2; tail -5 "$tmp/sluice.log" >&2; exit 1; }
	sleep 0.2
done
t1=$(date +%s.%N)
echo "sluice up with $N subscribers after $(echo "$t1 - $t0" | bc) s"
for r in $(seq 1 "$ROUNDS"); do
	s0=$(date +%s.%N)
	"$PY" "$root/tools/sluice-exporter" --once --file-prefix "$prefix" "$@" >"$tmp/metrics.txt" ||
		{ echo "scrape: exporter failed" >&2; exit 1; }
	s1=$(date +%s.%N)
	printf 'scrape %d: %.2f s, %d samples, %d subscribers with pipe samples\n' "$r" \
		"$(echo "$s1 - $s0" | bc)" "$(grep -vc '^#' "$tmp/metrics.txt")" \
		"$(grep -o '^sluice_aqm_pipe_rate_down{[^}]*pipe="[1-9][0-9]*"' "$tmp/metrics.txt" | sort -u | wc -l)"
done
s0=$(date +%s.%N)
"$PY" "$root/tools/sluice-top" --file-prefix "$prefix" --batch 2 --interval 1 >"$tmp/top.txt" ||
	{ echo "scrape: sluice-top failed" >&2; exit 1; }
s1=$(date +%s.%N)
printf 'sluice-top: two frames in %.2f s (1 s apart)\n' "$(echo "$s1 - $s0" | bc)"
