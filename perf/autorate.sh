#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# perf/autorate.sh: a bottleneck downstream of sluice whose rate varies
# (issue 19). The e2e topology (tests/e2e/lib.sh); sluice sends toward the
# client through af_packet with qdisc_bypass=0, so its frames go through
# the client-side veth's qdisc: a kernel TBF with a deep buffer (a modem),
# whose rate follows a trace (perf/traces/*.txt). The same load (bulk TCP
# both ways, irtt and ping probes) runs in three modes:
#   fixed-max  sluice shapes at the trace's maximum (bloats in the TBF)
#   fixed-min  sluice shapes at the trace's minimum (wastes capacity)
#   autorate   [aqm] autorate = down between the minimum and the maximum
# Passive RTT is on in every mode (its median is compared with ping's).
# The senders use CUBIC (set per socket; BB_CC=bbr for BBR).
#
#   sudo perf/autorate.sh [-t lte|step|FILE] [-o DIR] [--modes LIST]
#                         [--aqm "K = V; ..."]
# --aqm adds [aqm] lines to the autorate mode's config (e.g.
# "autorate_interval = 20ms"), to try the law's parameters in the lab.
#
# Writes OUT/<mode>/ (raw data), OUT/autorate.png and OUT/table.md; the
# last lines are, per mode:
#   result MODE p95_added_ms V
#   result MODE p99_added_ms V
#   result MODE capacity_used_pct V
# and for autorate the recovery times after each capacity drop; then
#   result MODE probe_stalls N
# (gaps of over 15 ms in irtt's 10 ms sends: the machine paused), with a
# "note" line for each recovery over 0.5 s that holds one.
set -u -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TRACE=lte
OUT=
MODES=fixed-max,fixed-min,autorate
IDLE=${AR_IDLE:-3}
UP_RATE=${AR_UP:-10mbit}
TBF_LIMIT=${AR_TBF_LIMIT:-2000000}   # bytes: 0.4 s at 40 Mbit/s, 8 s at 2
SLUICE_BIN=${SLUICE:-$ROOT/build/app/sluice}
AR_AQM=${AR_AQM:-}

while [ $# -gt 0 ]; do
	# (A missing value would otherwise fall back to the default and run.)
	case "$1" in
	-t | --trace | -o | --out | --modes | --sluice | --aqm)
		[ $# -ge 2 ] || { echo "autorate: $1 wants a value" >&2; exit 2; } ;;
	esac
	case "$1" in
	-t | --trace) TRACE=${2:-}; shift ;;
	-o | --out) OUT=${2:-}; shift ;;
	--modes) MODES=${2:-}; shift ;;
	--sluice) SLUICE_BIN=${2:-}; shift ;;
	--aqm) AR_AQM=${2:-}; shift ;;
	-h | --help) sed -n '3,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "autorate: unknown option '$1'" >&2; exit 2 ;;
	esac
	shift
done
case "$TRACE" in lte | step) TRACE=$HERE/traces/$TRACE.txt ;; esac
[ -f "$TRACE" ] || { echo "autorate: no trace $TRACE" >&2; exit 2; }

export SLUICE=$SLUICE_BIN
E2E_TEST=autorate
# One upload and two download flows; the probes of bufferbloat.sh.
BB_FLOWS_UP=${BB_FLOWS_UP:-1}
BB_FLOWS_DOWN=${BB_FLOWS_DOWN:-2}
E2E_AFP_ARGS=qdisc_bypass=0
. "$ROOT/tests/e2e/lib.sh"
. "$HERE/bufferbloat_lib.sh"
AR_PY=$HERE/autorate.py
"$BB_PY" -c 'import matplotlib' 2>/dev/null ||
	{ echo "autorate: $BB_PY cannot import matplotlib" >&2; exit 1; }
e2e_require_tools irtt tc

read -r RMIN RMAX SECS < <(awk '!/^#/ && NF >= 2 { if (min == "" || $2 < min) min = $2;
	if ($2 > max) max = $2; last = $1 } END { print min, max, int(last) + 5 }' "$TRACE")
[ -n "$OUT" ] || OUT=$ROOT/perf/out/autorate-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cp "$TRACE" "$OUT/trace.txt"
echo "autorate: trace $(basename "$TRACE") ${RMIN}-${RMAX} Mbit/s over $SECS s, modes $MODES; output in $OUT" >&2

e2e_setup
bb_start_servers

tbf() { ip netns exec "$NS_MID" tc qdisc "$1" dev "$SUB_IF" root tbf rate "${2}mbit" \
	burst 15000 limit "$TBF_LIMIT"; }

# Apply the trace to the TBF, logging "wall_time rate" of each change.
drive_trace() {
	local t0=$1 log=$2 t r now
	while read -r t r; do
		case "$t" in '' | \#*) continue ;; esac
		now=$(date +%s.%N)
		sleep "$(awk -v a="$t0" -v t="$t" -v n="$now" 'BEGIN { d = a + t - n; print (d > 0 ? d : 0) }')"
		tbf change "$r" 2>/dev/null
		echo "$(date +%s.%N) $r" >>"$log"
	done <"$TRACE"
}

# Poll /sluice/autorate_log once a second: every rate change, with the
# mapping from sluice's clock to the wall clock.
poll_log() {
	local dir=$1 since=0 j
	while kill -0 "$SLUICE_PID" 2>/dev/null; do
		j=$(e2e_tel "/sluice/autorate_log,$since" 2>/dev/null) || { sleep 1; continue; }
		echo "$(date +%s.%N) $j" >>"$dir/autorate_log.txt"
		since=$(echo "$j" | "$BB_PY" -c 'import json,sys; print(json.load(sys.stdin)["next_since"])' 2>/dev/null || echo "$since")
		sleep 1
	done
}

run_mode() {
	local mode=$1 dir=$OUT/$1 rate extra=
	mkdir -p "$dir"
	rm -f "$dir"/*
	case "$mode" in
	fixed-max) rate=$RMAX ;;
	fixed-min) rate=$RMIN ;;
	autorate) rate=$RMAX
		# The floor below the trace's minimum: a shaper held at the
		# capacity itself leaves a queue beyond nothing to drain it.
		extra="autorate = down
autorate_floor_down = $(awk -v m="$RMIN" 'BEGIN { f = m / 2; print (f < 0.5 ? 0.5 : f) }')mbit
$(printf '%s' "$AR_AQM" | tr ';' '\n' | sed 's/^ *//')" ;;
	*) echo "autorate: unknown mode $mode" >&2; return 1 ;;
	esac
	cat >"$dir/sluice.ini" <<EOF
[aqm]
ports = 0
default = pipe
rate_down = ${rate}mbit
rate_up = $UP_RATE
ack_filter = up
passive_rtt = on
$extra
EOF
	tbf replace "$(awk '!/^#/ && NF >= 2 { print $2; exit }' "$TRACE")" ||
		{ echo "autorate: tc tbf failed" >&2; return 1; }
	e2e_start_sluice "$dir/sluice.ini" || { echo "autorate: $E2E_WHY" >&2; return 1; }
	local total=$((IDLE + SECS + 10)) pids=() i port name rev t0 tl
	t0=$(date +%s.%N)
	ip netns exec "$NS_CLI" timeout --foreground $((total + 30)) irtt client -i 10ms \
		-d "${total}s" --wait=2s -Q -o "$dir/irtt.json" "$SRV4:$BB_IRTT_PORT" \
		</dev/null >"$dir/irtt.err" 2>&1 &
	pids+=("$!"); E2E_PIDS+=("$!")
	ip netns exec "$NS_CLI" timeout --foreground $((total + 30)) ping -4 -D -n -i 0.05 \
		-w "$total" "$SRV4" </dev/null >"$dir/ping.txt" 2>&1 &
	pids+=("$!"); E2E_PIDS+=("$!")
	poll_log "$dir" &
	local poll_pid=$!
	E2E_PIDS+=("$poll_pid")
	sleep "$IDLE"
	tl=$(date +%s.%N)
	drive_trace "$tl" "$dir/trace_applied.txt" &
	local drv=$!
	E2E_PIDS+=("$drv")
	for i in $(seq 0 $((BB_FLOWS_UP + BB_FLOWS_DOWN - 1))); do
		port=$((BB_IPERF_PORT0 + i)) name=up$i rev=
		[ "$i" -ge "$BB_FLOWS_UP" ] && name=down$((i - BB_FLOWS_UP)) rev=-R
		ip netns exec "$NS_CLI" timeout --foreground $((SECS + 30)) iperf3 -4 -c "$SRV4" \
			-p "$port" -t "$SECS" -J $rev -C "$BB_CC" --connect-timeout 5000 </dev/null \
			>"$dir/iperf-$name.json" 2>"$dir/iperf-$name.err" &
		pids+=("$!"); E2E_PIDS+=("$!")
	done
	wait "$drv"
	for i in "${pids[@]:2}"; do wait "$i"; done
	local te
	te=$(date +%s.%N)
	e2e_tel /sluice/prtt >"$dir/prtt.json" 2>/dev/null
	for i in "${pids[@]:0:2}"; do kill -INT "$i" 2>/dev/null; wait "$i"; done
	e2e_stop_sluice || echo "autorate: $mode: $E2E_WHY" >&2
	kill "$poll_pid" 2>/dev/null; wait "$poll_pid" 2>/dev/null
	cp "$SLUICE_LOG" "$dir/sluice.log"
	printf 't0=%s\nt_load=%s\nt_end=%s\nmode=%s\nrate=%s\n' "$t0" "$tl" "$te" "$mode" "$rate" >"$dir/meta.env"
	ip netns exec "$NS_MID" tc qdisc del dev "$SUB_IF" root 2>/dev/null
}

failed=0
for m in ${MODES//,/ }; do
	echo "autorate: mode $m ..." >&2
	run_mode "$m" || failed=1
done
[ $failed = 0 ] || echo "autorate: a mode failed; raw data in $OUT" >&2
"$BB_PY" "$AR_PY" report "$OUT" ${MODES//,/ } >"$OUT/results.txt" || exit 1
cat "$OUT/table.md" >&2
cat "$OUT/results.txt"
exit $failed
