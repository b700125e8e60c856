#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Start-up and reload of a large subscriber table (issue 18 item 5).
#
#   perf/subscribers.sh [--subscribers N] [--sluice PATH] [--traffic PPS]
#
# Writes N /32 subscribers (198.18.0.0/15, 4 flows per pipe, as
# perf/scrape.sh does), starts sluice on two net_null ports and prints:
#   result startup_s V        exec to the boot line (table loaded, workers up)
#   result rss_mb V           resident size once up
#   result reload_unchanged_s V   SIGHUP to "reloaded" with the same file
#   result reload_rates_1pct_s V  1% of the rates changed
#   result reload_add_1pct_s V    1% new subscribers, and the first 1% gone
#                                 from the file (removed: their pipes freed)
#   result queued_sighup_reloads V  reloads after 3 SIGHUPs sent during one
# With --traffic PPS the ports are net_af_packet on two veth pairs whose
# peers sit in network namespaces, and during each reload a UDP stream
# with sequence numbers (perf/seq_udp.py, PPS frames/s over 64 of the
# subscribers that stay) runs from the internet side to the subscriber
# side, from 0.5 s before the SIGHUP to 0.5 s after the reload applied:
#   result reload_<name>_sent N / _lost N / _reordered N
# (lost: gaps in a destination's sequence, or fewer received than sent).
# Needs root (the DPDK runtime directory, namespaces) and about 1 GB.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
N=100000
SLUICE=$root/build/app/sluice
PPS=0
while [ $# -gt 0 ]; do
	case $1 in
	--subscribers) N=$2; shift 2 ;;
	--sluice) SLUICE=$2; shift 2 ;;
	--traffic) PPS=$2; shift 2 ;;
	*) echo "usage: $0 [--subscribers N] [--sluice PATH] [--traffic PPS]" >&2; exit 2 ;;
	esac
done
[ "$N" -ge 100 ] && [ "$N" -le 120000 ] || { echo "subscribers: 100 <= N <= 120000" >&2; exit 2; }
PY=/usr/bin/python3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-subs.XXXXXX")
prefix=slsubs-$$
pid=
nsA=slsA$$
nsB=slsB$$
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid"; wait "$pid" 2>/dev/null
	fi
	if [ "$PPS" != 0 ]; then
		ip netns del "$nsA" 2>/dev/null
		ip netns del "$nsB" 2>/dev/null
		ip link del "sA$$" 2>/dev/null
		ip link del "sB$$" 2>/dev/null
	fi
	rm -rf "$tmp" "/var/run/dpdk/$prefix"
}
trap cleanup EXIT INT TERM

# gen N FIRST RATE_EVERY: N subscribers from index FIRST; every RATE_EVERY-th
# one (0: none) gets 30mbit down instead of 20mbit.
gen() {
	"$PY" - "$@" <<'PY'
import sys
n, first, every = (int(a) for a in sys.argv[1:4])
print("prefix,down,up")
for i in range(first, first + n):
    down = "30mbit" if every and i % every == 0 else "20mbit"
    print("198.%d.%d.%d/32,%s,5mbit" % (18 + (i >> 16), (i >> 8) & 255, i & 255, down))
PY
}
gen "$N" 0 0 >"$tmp/subscribers.csv"
cat >"$tmp/sluice.ini" <<EOF
[aqm]
ports = all
subscribers = subscribers.csv
max_subscribers = $((N + N / 50 + 16))
max_v6_subscribers = 1
subscriber_flows = 4
EOF
ports="--vdev net_null0,no-rx=1 --vdev net_null1,no-rx=1"
if [ "$PPS" != 0 ]; then
	# Port 0 faces the subscribers (veth sA, peer in nsA), port 1 the
	# internet (sB, peer in nsB).
	for x in A B; do
		ns=sls$x$$
		ip netns add "$ns"
		ip link add "s$x$$" type veth peer name "p$x$$"
		ip link set "p$x$$" netns "$ns"
		ip link set "s$x$$" up
		ip -n "$ns" link set "p$x$$" up
		ethtool -K "s$x$$" tx off tso off gso off gro off >/dev/null 2>&1
		ip netns exec "$ns" ethtool -K "p$x$$" tx off tso off gso off gro off >/dev/null 2>&1
	done
	ports="--vdev net_af_packet0,iface=sA$$ --vdev net_af_packet1,iface=sB$$"
fi
now() { date +%s.%N; }
# wait_log PATTERN COUNT: until the log holds COUNT lines matching PATTERN.
wait_log() {
	for _ in $(seq 1 3000); do
		[ "$(grep -c -- "$1" "$tmp/sluice.log")" -ge "$2" ] && return 0
		kill -0 "$pid" 2>/dev/null || { echo "subscribers: sluice exited" >&2; tail -5 "$tmp/sluice.log" >&2; exit 1; }
		sleep 0.01
	done
	echo "subscribers: timed out waiting for '$1'" >&2; tail -5 "$tmp/sluice.log" >&2; exit 1
}
t0=$(now)
"$SLUICE" --no-huge -m 3072 --no-pci -l 0 --file-prefix "$prefix" \
	$ports -- -c "$tmp/sluice.ini" \
	</dev/null >"$tmp/sluice.log" 2>&1 &
pid=$!
wait_log "worker(s), " 1
t1=$(now)
echo "result startup_s $(echo "$t1 - $t0" | bc)"
echo "result rss_mb $(awk '/VmRSS/ { printf "%d", $2 / 1024 }' "/proc/$pid/status")"
# reload NAME: SIGHUP and time to the next reload outcome line.
k=0
reload() {
	k=$((k + 1))
	local a b rpid spid
	if [ "$PPS" != 0 ]; then
		rm -f "$tmp/stop"
		ip netns exec "$nsA" "$PY" "$here/seq_udp.py" recv "pA$$" 1.0 >"$tmp/recv.out" &
		rpid=$!
		sleep 0.3
		ip netns exec "$nsB" "$PY" "$here/seq_udp.py" send "pB$$" "$PPS" "$tmp/stop" \
			$((N / 2)) 64 >"$tmp/send.out" &
		spid=$!
		sleep 0.5
	fi
	a=$(now)
	kill -HUP "$pid"
	wait_log "sluice: aqm: reload" "$k"
	b=$(now)
	grep "sluice: aqm: reload" "$tmp/sluice.log" | tail -1 | cut -c1-200 >&2
	echo "result $1 $(echo "$b - $a" | bc)"
	if [ "$PPS" != 0 ]; then
		sleep 0.5
		touch "$tmp/stop"
		wait "$spid"
		wait "$rpid"
		local name=${1%_s} sent got lost reord
		sent=$(awk '/^sent/ { print $2 }' "$tmp/send.out")
		read -r got lost reord < <(awk '/^received/ { print $2, $4, $6 }' "$tmp/recv.out")
		[ "$((sent - got))" -gt "$lost" ] && lost=$((sent - got))
		echo "result ${name}_sent $sent"
		echo "result ${name}_lost $lost"
		echo "result ${name}_reordered $reord"
	fi
}
reload reload_unchanged_s
gen "$N" 0 100 >"$tmp/subscribers.csv.new" && mv "$tmp/subscribers.csv.new" "$tmp/subscribers.csv"
reload reload_rates_1pct_s
gen "$N" $((N / 100)) 100 >"$tmp/subscribers.csv.new" && mv "$tmp/subscribers.csv.new" "$tmp/subscribers.csv"
reload reload_add_1pct_s
# Three SIGHUPs while a reload runs: at least one more reload must follow.
before=$k
kill -HUP "$pid"; sleep 0.05; kill -HUP "$pid"; kill -HUP "$pid"
sleep 3
after=$(grep -c "sluice: aqm: reload" "$tmp/sluice.log")
echo "result queued_sighup_reloads $((after - before))"
kill -TERM "$pid"; wait "$pid"; pid=
grep -E "aqm_control" "$tmp/sluice.log" | tail -1 | cut -c1-200 >&2
