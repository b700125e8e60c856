#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The impair stage between two real Linux stacks:
#  - 20 ms of delay each way: ping RTT is 40 ms or a little more (next to
#    the same ping through a plain bridge), with no loss, and the exit
#    report shows every packet in and out; that run also has
#    [sluice] stage_cycles = on, and /sluice/stages must show the stage;
#  - 1% random loss both ways: iperf3 TCP still completes in both
#    directions, and the report's loss rate is about 1%;
#  - config/examples/lossy-lte.ini (80 ms RTT, jitter, 1% loss and bursts):
#    an iperf3 transfer still completes.
# Every run ends with exit 0 and every mbuf back in the pool.
set -u
. "$(dirname "$0")/lib.sh"
E2E_TEST=impair
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

e2e_require_tools
e2e_setup

# e2e_final for one direction's report line.
impair_field() { e2e_final "impair dir=$1 pair=0" "$2"; }

# --- delay ---------------------------------------------------------------
# The same ping through a plain bridge first, for the side-by-side figure.
e2e_start_sluice "" || e2e_die "sluice start: $E2E_WHY"
e2e_ping 4 20 0.05 || e2e_die "bridge ping: $E2E_WHY"
BASE_RTT=$E2E_RTT
e2e_stop_sluice || e2e_die "bridge stop: $E2E_WHY"
cat >"$E2E_TMP/delay.ini" <<'EOF'
[sluice]
stage_cycles = on
[impair]
delay = 20ms
EOF
e2e_start_sluice "$E2E_TMP/delay.ini" || e2e_die "sluice start: $E2E_WHY"
rtt() {
	e2e_ping 4 20 0.05 || return 1
	local min avg base
	min=${E2E_RTT%%/*} avg=$(echo "$E2E_RTT" | cut -d/ -f2)
	base=$(echo "$BASE_RTT" | cut -d/ -f2)
	# 40 ms is a floor (the stage stamps packets after rx, so a
	# preempted lcore can only add); the ceiling leaves room for a
	# loaded host: what the plain bridge added, plus 40 ms of slack.
	if ! awk -v m="$min" -v a="$avg" -v b="$base" 'BEGIN { exit !(m >= 40 && a < 80 + b) }'; then
		E2E_WHY="rtt min/avg/max $E2E_RTT ms, want min >= 40 and avg < 80 + $base (bridge avg)"
		return 1
	fi
	E2E_WHY="20 echoes, rtt min/avg/max $E2E_RTT ms; plain bridge $BASE_RTT ms"
}
if rtt; then e2e_pass impair_delay_ping_rtt "$E2E_WHY"; else e2e_fail impair_delay_ping_rtt "$E2E_WHY"; fi
tel() {
	local in delay
	in=$(e2e_tel /sluice/impair pair0_up.in) delay=$(e2e_tel /sluice/impair pair0_down.delay_us)
	case "$in" in ''|*[!0-9]*) E2E_WHY="/sluice/impair pair0_up.in: '$in'"; return 1 ;; esac
	if [ "$in" -lt 20 ] || [ "$delay" != 20000 ]; then
		E2E_WHY="/sluice/impair: pair0_up.in=$in (want >= 20), pair0_down.delay_us=$delay (want 20000)"
		return 1
	fi
	E2E_WHY="pair0_up.in=$in, pair0_down.delay_us=$delay"
}
if tel; then e2e_pass impair_telemetry "$E2E_WHY"; else e2e_fail impair_telemetry "$E2E_WHY"; fi
# [sluice] stage_cycles = on: /sluice/stages has the impair stage's calls,
# the packets it took and the packets its poll released, with cycles.
stages() {
	local on pk em cyc pcyc
	on=$(e2e_tel /sluice/stages stage_cycles) pk=$(e2e_tel /sluice/stages impair.packets)
	on=${on//\"/}   # a JSON string
	em=$(e2e_tel /sluice/stages impair.emitted) cyc=$(e2e_tel /sluice/stages impair.cycles)
	pcyc=$(e2e_tel /sluice/stages impair.poll_cycles)
	case "$pk$em$cyc$pcyc" in ''|*[!0-9]*)
		E2E_WHY="/sluice/stages impair: packets='$pk' emitted='$em' cycles='$cyc' poll_cycles='$pcyc'"; return 1 ;;
	esac
	if [ "$on" != on ] || [ "$pk" -lt 40 ] || [ "$em" -lt 40 ] || [ "$cyc" = 0 ] || [ "$pcyc" = 0 ]; then
		E2E_WHY="/sluice/stages: stage_cycles=$on impair.packets=$pk emitted=$em cycles=$cyc poll_cycles=$pcyc (want on, >= 40 packets each way in total, cycles > 0)"
		return 1
	fi
	local per
	per=$(e2e_tel /sluice/stages impair.cycles_per_packet)
	E2E_WHY="impair: packets=$pk emitted=$em cycles=$cyc (${per//\"/} per packet) poll_cycles=$pcyc"
}
if stages; then e2e_pass stage_cycles_telemetry "$E2E_WHY"; else e2e_fail stage_cycles_telemetry "$E2E_WHY"; fi
delay_exit() {
	e2e_stop_sluice || return 1
	local d in out lost
	for d in up down; do
		in=$(impair_field $d in) out=$(impair_field $d out)
		lost=$(( $(impair_field $d lost_random) + $(impair_field $d lost_ge) + $(impair_field $d overflow) ))
		if [ -z "$in" ] || [ "$in" -lt 20 ] || [ "$in" != "$out" ] || [ "$lost" != 0 ]; then
			E2E_WHY="impair dir=$d in=${in:-?} out=${out:-?} dropped=$lost: want in = out >= 20, nothing dropped"
			return 1
		fi
	done
	E2E_WHY="up in=out=$(impair_field up in), down in=out=$(impair_field down in)"
}
if delay_exit; then e2e_pass impair_delay_clean_exit "$E2E_WHY"; else e2e_fail impair_delay_clean_exit "$E2E_WHY"; fi

# --- 1% loss -------------------------------------------------------------
cat >"$E2E_TMP/loss.ini" <<'EOF'
[impair]
loss = 1%
limit = 10000
EOF
e2e_start_sluice "$E2E_TMP/loss.ini" || e2e_die "sluice start: $E2E_WHY"
E2E_MIN_MBPS=${E2E_IMPAIR_MIN_MBPS:-5}
run() {
	local name=$1; shift
	if e2e_iperf "$@"; then
		e2e_pass "$name" "$E2E_MBPS Mbit/s, $E2E_RETRANS retransmits"
	else
		e2e_fail "$name" "$E2E_WHY"
	fi
}
run impair_loss_tcp_up 4
run impair_loss_tcp_down 4 -R
loss_rate() {
	e2e_stop_sluice || return 1
	local d in lost figures=
	for d in up down; do
		in=$(impair_field $d in) lost=$(impair_field $d lost_random)
		if [ -z "$in" ] || [ "$in" -lt 10000 ]; then
			E2E_WHY="impair dir=$d in=${in:-?}: want >= 10000 packets after iperf3"
			return 1
		fi
		if ! awk -v l="$lost" -v n="$in" 'BEGIN { r = l / n; exit !(r > 0.007 && r < 0.013) }'; then
			E2E_WHY="impair dir=$d lost_random=$lost of in=$in: want 0.7%..1.3%"
			return 1
		fi
		figures="$figures $d $lost/$in"
	done
	E2E_WHY="lost:$figures"
}
if loss_rate; then e2e_pass impair_loss_rate "$E2E_WHY"; else e2e_fail impair_loss_rate "$E2E_WHY"; fi

# --- the lossy LTE example ----------------------------------------------
e2e_start_sluice "$ROOT/config/examples/lossy-lte.ini" || e2e_die "sluice start: $E2E_WHY"
E2E_MIN_MBPS=${E2E_LTE_MIN_MBPS:-0.3}
run impair_lossy_lte_tcp_up 4
lte_exit() {
	e2e_stop_sluice || return 1
	E2E_WHY="up in=$(impair_field up in) lost=$(( $(impair_field up lost_random) + $(impair_field up lost_ge) )), down in=$(impair_field down in) lost=$(( $(impair_field down lost_random) + $(impair_field down lost_ge) ))"
}
if lte_exit; then e2e_pass impair_lossy_lte_clean_exit "$E2E_WHY"; else e2e_fail impair_lossy_lte_clean_exit "$E2E_WHY"; fi
e2e_finish
