#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# TCP through a bridging sluice with iperf3: IPv4 and IPv6, both directions,
# each transfer must complete at a sane rate. Meanwhile and afterwards the
# telemetry counters must move and add up, dpdk-telemetry.py must show them,
# and sluice must exit 0 on SIGTERM with every mbuf back in its pool.
set -u
. "$(dirname "$0")/lib.sh"
E2E_TEST=iperf

e2e_require_tools dpdk-telemetry.py
e2e_setup
e2e_start_sluice "" || e2e_die "sluice start: $E2E_WHY"

# Sample /sluice/totals rx twice, one second apart, during the first transfer.
(
	sleep 0.8
	e2e_tel /sluice/totals rx >"$E2E_TMP/tel.a" 2>&1
	sleep 1
	e2e_tel /sluice/totals rx >"$E2E_TMP/tel.b" 2>&1
) &
E2E_PIDS+=($!)
sampler=$!

run() {
	local name=$1; shift
	if e2e_iperf "$@"; then
		e2e_pass "$name" "$E2E_MBPS Mbit/s, $E2E_RETRANS retransmits, ${E2E_IPERF_SECS}s"
	else
		e2e_fail "$name" "$E2E_WHY"
	fi
}
run tcp4_up 4
wait "$sampler" 2>/dev/null
run tcp4_down 4 -R
run tcp6_up 6
run tcp6_down 6 -R

live() {
	local a b
	a=$(cat "$E2E_TMP/tel.a" 2>/dev/null) b=$(cat "$E2E_TMP/tel.b" 2>/dev/null)
	case "$a$b" in *[!0-9]*|"")
		E2E_WHY="telemetry read failed during traffic: '$a' '$b'"; return 1 ;;
	esac
	if [ "$b" -le "$a" ]; then
		E2E_WHY="/sluice/totals rx did not grow during a transfer ($a -> $b)"
		return 1
	fi
	E2E_WHY="rx $a -> $b in 1 s"
}
if live; then e2e_pass telemetry_live "$E2E_WHY"; else e2e_fail telemetry_live "$E2E_WHY"; fi

# After the traffic: what came in on one port went out of the other or was
# counted as a tx drop, and totals are the sum of the ports. Counters are
# read without locks, so retry a few times until the link is quiet.
consistent() {
	local i out
	for i in 1 2 3 4 5; do
		out=$("$E2E_PY" - "$(e2e_tel /sluice/ports)" "$(e2e_tel /sluice/totals)" <<'PY'
import json, sys
try:
    ports, tot = json.loads(sys.argv[1]), json.loads(sys.argv[2])
    p0, p1 = ports["0"], ports["1"]
except Exception as e:
    print("ERR bad telemetry answer: %s" % e); sys.exit()
errs = []
for a, b, pa, pb in ((p0, p1, 0, 1), (p1, p0, 1, 0)):
    if a["rx"] < 1000:
        errs.append("port %d rx=%d, want > 1000 after iperf3" % (pa, a["rx"]))
    if a["rx"] != b["tx"] + b["tx_dropped"]:
        errs.append("port %d rx=%d != port %d tx=%d + tx_dropped=%d"
                    % (pa, a["rx"], pb, b["tx"], b["tx_dropped"]))
for k in ("rx", "tx", "tx_dropped"):
    if tot[k] != p0[k] + p1[k]:
        errs.append("totals %s=%d != port sum %d" % (k, tot[k], p0[k] + p1[k]))
if errs:
    print("ERR " + "; ".join(errs))
else:
    print("OK port0 rx=%d port1 rx=%d tx_dropped=%d dev_imissed=%d/%d" % (p0["rx"], p1["rx"], tot["tx_dropped"], p0.get("dev_imissed", -1), p1.get("dev_imissed", -1)))
PY
)
		case "$out" in OK*) E2E_WHY=${out#OK }; return 0 ;; esac
		sleep 0.2
	done
	E2E_WHY=${out#ERR }
	return 1
}
if consistent; then e2e_pass telemetry_consistent "$E2E_WHY, af_packet ring drops $(e2e_ring_drops)"; else e2e_fail telemetry_consistent "$E2E_WHY"; fi

# The stock client, driven non-interactively, must list our command.
dpdk_tel() {
	local out
	out=$(echo /sluice/totals | timeout 15 dpdk-telemetry.py -f "$SLUICE_PREFIX" 2>&1)
	if ! echo "$out" | grep -q '"/sluice/totals"' ||
		! echo "$out" | grep -q '"mempool_baseline"'; then
		E2E_WHY="dpdk-telemetry.py -f $SLUICE_PREFIX did not show /sluice/totals: $(echo "$out" | tail -3 | tr '\n' ' ')"
		return 1
	fi
}
e2e_check dpdk_telemetry_py dpdk_tel

final() {
	e2e_stop_sluice || return 1
	local r0 t0 d0 r1 t1 d1
	r0=$(e2e_final "port 0" rx) t0=$(e2e_final "port 0" tx) d0=$(e2e_final "port 0" tx_dropped)
	r1=$(e2e_final "port 1" rx) t1=$(e2e_final "port 1" tx) d1=$(e2e_final "port 1" tx_dropped)
	if [ -z "$r0$t0$d0" ] || [ -z "$r1$t1$d1" ]; then
		E2E_WHY="final counters missing from sluice's output"; return 1
	fi
	if [ "$r0" != $((t1 + d1)) ] || [ "$r1" != $((t0 + d0)) ]; then
		E2E_WHY="final counters do not add up: port 0 rx=$r0 tx=$t0 tx_dropped=$d0, port 1 rx=$r1 tx=$t1 tx_dropped=$d1"
		return 1
	fi
	E2E_WHY="port 0 rx=$r0, port 1 rx=$r1, tx_dropped=$((d0 + d1))"
}
if final; then e2e_pass iperf_clean_exit "exit 0, mempool at baseline, $E2E_WHY"; else e2e_fail iperf_clean_exit "$E2E_WHY"; fi
e2e_finish
