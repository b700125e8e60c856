#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# perf/bufferbloat.sh: latency under load through sluice, a bloated FIFO
# against FQ-CoDel and FQ-CoDel with ECN, in one run. sluice shapes the link
# between a client and a server namespace (the e2e topology of
# tests/e2e/lib.sh) so the queue forms inside sluice; per mode we measure an
# idle baseline, then 4 upload + 4 download iperf3 TCP flows (flent RRUL
# style) with irtt (UDP) and ping (ICMP) probing throughout.
# Both FQ-CoDel modes filter superseded ACKs on the upstream unless
# --ack-filter says otherwise, and hold ACKs for --ack-hold ms.
#
#   sudo perf/bufferbloat.sh [options]
#
# Writes OUT/table.md, OUT/latency_time.png, OUT/latency_cdf.png and per-mode
# raw data in OUT/<mode>/. The last lines are, for each mode:
#   result <mode> p99_added_ms <v>
#   result <mode> goodput_down_pct <v>
#   result <mode> goodput_up_pct <v>
#   result <mode> bulk_rtt_up_p95_ms <v>    (the senders' srtt, ss -ti)
#   result <mode> bulk_rtt_down_p95_ms <v>
# See perf/README.md ("bufferbloat") for what each number means.
set -u -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)

SECS=${BB_SECS:-30}
IDLE=${BB_IDLE:-5}
MODES=${BB_MODES:-fifo,fq_codel,fq_codel_ecn}
OUT=${BB_OUT:-}
SLUICE_BIN=${SLUICE:-$ROOT/build/app/sluice}

usage() {
	cat <<EOF
Usage: perf/bufferbloat.sh [options]

Options (environment variable in brackets):
  -t, --time S      load phase per mode, seconds (default 30)     [BB_SECS]
  --idle S          idle baseline before the load, seconds (5)    [BB_IDLE]
  --demo            the short run: 10 s of load, 3 s idle
  --down RATE       shaped rate towards the client (20mbit)       [BB_DOWN]
  --up RATE         shaped rate towards the server (5mbit)        [BB_UP]
  --fifo-ms MS      the bloated FIFO's size, ms at the rate (1000) [BB_FIFO_MS]
  --ack-filter DIR  [aqm] ack_filter of the two FQ-CoDel modes: off, up,
                    down or both (default up; off = plain FQ-CoDel; the
                    FIFO never filters)                           [BB_ACK_FILTER]
  --ack-hold MS     [aqm] ack_hold of the two FQ-CoDel modes, whole ms
                    (default 20; 0 = off; needs --ack-filter)     [BB_ACK_HOLD]
  --capture S       also capture S s of headers at both hosts from 1 s into
                    the load (needs dumpcap, tshark), and report what each
                    link carried: data, pure ACKs, probes (0 = off)  [BB_CAPTURE]
  --rwnd-clamp on|off  [aqm] rwnd_clamp of the two FQ-CoDel modes: sluice
                    lowers the window of ACKs so that each queued flow
                    keeps at most rwnd_headroom queued (default on)
                                                                  [BB_RWND_CLAMP]
  --cc ALGO         the iperf3 senders' congestion control, set per
                    socket (iperf3 -C): cubic or bbr (default cubic) [BB_CC]
  --rcvbuf UP[,DOWN] the receivers' largest TCP receive buffer in bytes
                    (tcp_rmem): the server's for the uploads, the client's
                    for the downloads. It clamps each flow's receive
                    window at the hosts, whatever the sender (a lab knob:
                    what a window clamp would do; 0 = the kernel's own,
                    the default)              [BB_RCVBUF_UP, BB_RCVBUF_DOWN]
  --path-delay MS   one-way delay sluice's impair stage adds after the
                    shaper, both ways, in every mode: a server farther
                    away (whole ms; default 0, none)             [BB_PATH_DELAY]
  --aqm "K = V; ..." extra [aqm] lines for the FQ-CoDel modes, e.g.
                    "blue = off; codel_rate_aware = off"           [BB_AQM_EXTRA]
  --modes LIST      comma-separated, from fifo,fq_codel,fq_codel_ecn
                    (default all three; "bridge" = no shaping, debug)  [BB_MODES]
  -o, --out DIR     output directory (default perf/out/bufferbloat-<time>) [BB_OUT]
  --sluice PATH     the sluice binary (default build/app/sluice)  [SLUICE]
  -h, --help

RATE: a number with an optional k/m/g multiplier (powers of 1000) and an
optional "bit" suffix, e.g. 20mbit, 5M, 1.5g. Needs root, iproute2, iperf3,
irtt, ping, ethtool and Debian's python3-matplotlib (/usr/bin/python3).
EOF
}

die_usage() { echo "bufferbloat: $*" >&2; echo "Try perf/bufferbloat.sh --help" >&2; exit 2; }

hold_given=${BB_ACK_HOLD:+1}
while [ $# -gt 0 ]; do
	# (A missing value would otherwise fall back to the default and run.)
	case "$1" in
	-t | --time | --idle | --down | --up | --fifo-ms | --ack-filter | --ack-hold | \
	--capture | --cc | --rwnd-clamp | --path-delay | --rcvbuf | --aqm | --modes | -o | --out | --sluice)
		[ $# -ge 2 ] || die_usage "$1 wants a value" ;;
	esac
	case "$1" in
	-t | --time) SECS=${2:-}; shift ;;
	--idle) IDLE=${2:-}; shift ;;
	--demo) SECS=10 IDLE=3 ;;
	--down) BB_DOWN=${2:-}; shift ;;
	--up) BB_UP=${2:-}; shift ;;
	--fifo-ms) BB_FIFO_MS=${2:-}; shift ;;
	--ack-filter) BB_ACK_FILTER=${2:-}; shift ;;
	--ack-hold) BB_ACK_HOLD=${2:-}; hold_given=1; shift ;;
	--capture) BB_CAPTURE=${2:-}; shift ;;
	--cc) BB_CC=${2:-}; shift ;;
	--rwnd-clamp) BB_RWND_CLAMP=$2; shift ;;
	--path-delay) BB_PATH_DELAY=$2; shift ;;
	--rcvbuf)
		v=$2
		BB_RCVBUF_UP=${v%%,*} BB_RCVBUF_DOWN=0
		[ "$v" = "${v#*,}" ] || BB_RCVBUF_DOWN=${v#*,}
		shift ;;
	--aqm) BB_AQM_EXTRA=${2:-}; shift ;;
	--modes) MODES=${2:-}; shift ;;
	-o | --out) OUT=${2:-}; shift ;;
	--sluice) SLUICE_BIN=${2:-}; shift ;;
	-h | --help) usage; exit 0 ;;
	*) die_usage "unknown option '$1'" ;;
	esac
	shift
done

case "$SECS" in '' | *[!0-9]*) die_usage "--time wants whole seconds, not '$SECS'" ;; esac
case "$IDLE" in '' | *[!0-9]*) die_usage "--idle wants whole seconds, not '$IDLE'" ;; esac
[ "$SECS" -ge 2 ] || die_usage "--time must be at least 2 s"
[ "$IDLE" -ge 1 ] || die_usage "--idle must be at least 1 s"

export SLUICE=$SLUICE_BIN
E2E_TEST=bufferbloat
. "$ROOT/tests/e2e/lib.sh"
. "$HERE/bufferbloat_lib.sh"

[ -n "$(bb_rate_bps "$BB_DOWN")" ] || die_usage "--down: '$BB_DOWN' is not a rate"
[ -n "$(bb_rate_bps "$BB_UP")" ] || die_usage "--up: '$BB_UP' is not a rate"
case "$BB_FIFO_MS" in '' | *[!0-9]*) die_usage "--fifo-ms wants whole ms" ;; esac
case "$BB_PATH_DELAY" in '' | *[!0-9]*) die_usage "--path-delay wants whole ms, not '$BB_PATH_DELAY'" ;; esac
[ "$BB_PATH_DELAY" -le 10000 ] || die_usage "--path-delay: at most 10000 ms"
for v in "$BB_RCVBUF_UP" "$BB_RCVBUF_DOWN"; do
	case "$v" in '' | *[!0-9]*) die_usage "--rcvbuf wants bytes, UP[,DOWN], not '$v'" ;; esac
	[ "$v" = 0 ] || [ "$v" -ge 4096 ] || die_usage "--rcvbuf: $v bytes is under tcp_rmem's 4096 minimum"
done
case "$BB_CAPTURE" in '' | *[!0-9]*) die_usage "--capture wants whole seconds, not '$BB_CAPTURE'" ;; esac
[ "$BB_CAPTURE" -lt "$SECS" ] || die_usage "--capture must be shorter than --time"
[ "$BB_CAPTURE" = 0 ] || e2e_require_tools dumpcap tshark
case "$BB_ACK_FILTER" in off | up | down | both) ;; *) die_usage "--ack-filter wants off, up, down or both, not '$BB_ACK_FILTER'" ;; esac
case "$BB_RWND_CLAMP" in on | off) ;; *) die_usage "--rwnd-clamp wants on or off, not '$BB_RWND_CLAMP'" ;; esac
case "$BB_ACK_HOLD" in '' | *[!0-9]*) die_usage "--ack-hold wants whole ms, not '$BB_ACK_HOLD'" ;; esac
[ "$BB_ACK_HOLD" -le 1000 ] || die_usage "--ack-hold must be at most 1000 ms"
if [ "$BB_ACK_FILTER" = off ] && [ "$BB_ACK_HOLD" != 0 ]; then
	[ -z "${hold_given:-}" ] || die_usage "--ack-hold needs --ack-filter up, down or both"
	BB_ACK_HOLD=0   # the default hold goes with the filter
fi
mode_list=()
for m in ${MODES//,/ }; do
	bb_mode_known "$m" || die_usage "unknown mode '$m' (fifo, fq_codel, fq_codel_ecn)"
	mode_list+=("$m")
done
[ ${#mode_list[@]} -gt 0 ] || die_usage "no modes"

if ! "$BB_PY" -c 'import matplotlib' 2>/dev/null; then
	echo "bufferbloat: $BB_PY cannot import matplotlib (apt-get install python3-matplotlib)" >&2
	exit 1
fi
e2e_require_tools irtt taskset

[ -n "$OUT" ] || OUT=$ROOT/perf/out/bufferbloat-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT" || { echo "bufferbloat: cannot create $OUT" >&2; exit 1; }
OUT=$(cd "$OUT" && pwd)

case "$BB_CC" in cubic | bbr | reno) ;; *) die_usage "--cc wants cubic, bbr or reno, not '$BB_CC'" ;; esac
grep -qw "$BB_CC" /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null ||
	modprobe "tcp_$BB_CC" 2>/dev/null ||
	{ echo "bufferbloat: congestion control $BB_CC is not available (modprobe tcp_$BB_CC)" >&2; exit 1; }
bb_log "modes ${mode_list[*]}: ${IDLE} s idle + ${SECS} s load each, down $BB_DOWN, up $BB_UP, senders $BB_CC$([ "$BB_RCVBUF_UP$BB_RCVBUF_DOWN" = 00 ] || echo ", receive buffers up $BB_RCVBUF_UP down $BB_RCVBUF_DOWN bytes")$([ "$BB_PATH_DELAY" = 0 ] || echo ", path delay ${BB_PATH_DELAY} ms each way"), FQ-CoDel ack_filter $BB_ACK_FILTER ack_hold ${BB_ACK_HOLD}ms rwnd_clamp $BB_RWND_CLAMP${BB_AQM_EXTRA:+, [aqm] $BB_AQM_EXTRA}; output in $OUT"
bb_log "sluice on lcore $E2E_LCORE; load generators and probes on CPU(s) ${BB_LOAD_CPUS:-any}"
e2e_setup
bb_start_servers
failed=0
for m in "${mode_list[@]}"; do
	bb_log "mode $m ..."
	if ! bb_run_mode "$m" "$OUT/$m" "$IDLE" "$SECS"; then
		bb_log "mode $m failed: $E2E_WHY"
		[ -f "$SLUICE_LOG" ] && cp "$SLUICE_LOG" "$OUT/$m/sluice.log"
		failed=1
		continue
	fi
	"$BB_PY" "$BB_ANALYSE" mode "$OUT/$m" >&2 || failed=1
done
e2e_stop_sluice >/dev/null 2>&1   # in case a failed mode left it running
[ $failed = 0 ] || { echo "bufferbloat: a mode failed; raw data in $OUT" >&2; exit 1; }

"$BB_PY" "$BB_ANALYSE" report "$OUT" "${mode_list[@]}" >"$OUT/results.txt" || exit 1
cat "$OUT/table.md" >&2
echo >&2
bb_log "table, plots and raw data in $OUT"
cat "$OUT/results.txt"
