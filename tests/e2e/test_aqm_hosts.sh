#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Host isolation with real TCP: two hosts in the client namespace upload
# through one 10 Mbit/s pipe (the default pipe), host A on 8 connections,
# host B on 1, each to a server address of its own, for 8 s, with sluice's
# default isolation (triple-isolate). Each host must get 50% +- 5% of
# what crossed the pipe after the first 2 s (slow start). Then the same
# with isolation = flows, as a control: B must get less than 20% (1/9).
set -u
. "$(dirname "$0")/lib.sh"
E2E_TEST=aqm_hosts

HOSTS_SECS=${HOSTS_SECS:-8}
CLI4B=198.18.0.3 SRV4B=198.18.0.4

e2e_setup
ip -n "$NS_CLI" addr add "$CLI4B/24" dev "$CLI_IF"
ip -n "$NS_SRV" addr add "$SRV4B/24" dev "$SRV_IF"

ini=$E2E_TMP/aqm.ini
HOSTS_PORT=5310
# share ISOLATION LO HI NAME: run both uploads at once and check B's share.
share() {
	local iso=$1 lo=$2 hi=$3 name=$4 pa pb sa sb ca cb res
	cat >"$ini" <<EOF
[aqm]
ports = 0
default = pipe
rate_up = 10mbit
rate_down = 10mbit
isolation = $iso
EOF
	e2e_start_sluice "$ini" || { e2e_fail "$name" "sluice start: $E2E_WHY"; return; }
	pa=$HOSTS_PORT pb=$((HOSTS_PORT + 1))
	HOSTS_PORT=$((HOSTS_PORT + 2))
	srv timeout --foreground $((HOSTS_SECS + 30)) iperf3 -s -1 -J -B "$SRV4" -p $pa \
		</dev/null >"$E2E_TMP/a-$name.json" 2>&1 &
	sa=$!; E2E_PIDS+=("$sa")
	srv timeout --foreground $((HOSTS_SECS + 30)) iperf3 -s -1 -J -B "$SRV4B" -p $pb \
		</dev/null >"$E2E_TMP/b-$name.json" 2>&1 &
	sb=$!; E2E_PIDS+=("$sb")
	e2e_wait_listen $pa
	e2e_wait_listen $pb
	e2e_cpu_mark
	cli timeout --foreground $((HOSTS_SECS + 20)) iperf3 -c "$SRV4" -B "$CLI4" -p $pa \
		-P 8 -t "$HOSTS_SECS" --connect-timeout 5000 </dev/null >/dev/null 2>&1 &
	ca=$!; E2E_PIDS+=("$ca")
	cli timeout --foreground $((HOSTS_SECS + 20)) iperf3 -c "$SRV4B" -B "$CLI4B" -p $pb \
		-t "$HOSTS_SECS" --connect-timeout 5000 </dev/null >/dev/null 2>&1 &
	cb=$!; E2E_PIDS+=("$cb")
	wait "$ca" "$cb" "$sa" "$sb" 2>/dev/null
	local cpu ways
	cpu=$(e2e_cpu_pct)
	# How the upload's flows found their queues: a collision (a flow
	# sharing another's queue) is what made this check fail now and
	# then before the flow queues were set-associative.
	ways="way_misses $(e2e_tel /sluice/aqm up.way_misses 2>/dev/null || echo '?')"
	ways+=", way_collisions $(e2e_tel /sluice/aqm up.way_collisions 2>/dev/null || echo '?')"
	res=$("$E2E_PY" - "$E2E_TMP/a-$name.json" "$E2E_TMP/b-$name.json" "$lo" "$hi" "$cpu" "$ways" <<'PY'
import json, sys
def received(path):
    # The receiver's own per-second totals, from 2 s on (slow start).
    iv = json.load(open(path))["intervals"]
    iv = [x["sum"] for x in iv if x["sum"]["start"] >= 2.0]
    return sum(x["bytes"] for x in iv), sum(x["seconds"] for x in iv)
try:
    (a, ta), (b, tb) = received(sys.argv[1]), received(sys.argv[2])
    lo, hi, cpu = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
except Exception as e:
    print("ERR no usable iperf3 report (%s)" % e); sys.exit()
if a + b == 0:
    print("ERR nothing received"); sys.exit()
pb = 100.0 * b / (a + b)
print("%s host B %.1f%% (want %g..%g%%): A %.2f Mbit/s on 8 connections, B %.2f Mbit/s on 1; sluice on CPU %.0f%%; %s"
      % ("OK" if lo <= pb <= hi else "ERR", pb, lo, hi, a * 8 / ta / 1e6, b * 8 / tb / 1e6, cpu,
         sys.argv[6]))
PY
)
	case "$res" in
	OK*) e2e_pass "$name" "${res#OK }" ;;
	*) e2e_fail "$name" "${res#ERR }" ;;
	esac
	e2e_stop_sluice || e2e_fail "${name}_exit" "$E2E_WHY"
}
share triple-isolate 45 55 aqm_hosts_triple_isolate_gives_each_host_half
share flows 0 20 aqm_hosts_flow_fairness_gives_the_one_flow_host_a_ninth
e2e_finish
