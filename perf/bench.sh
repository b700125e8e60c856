#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# perf/bench.sh: side-by-side benchmarks of sluice against DPDK reference
# applications, in alternating rounds on the same ports, lcores and EAL
# options. See perf/README.md for what each mode measures and how to read it.
#
#   perf/bench.sh [options] MODE
#
# The last line of a successful run is "ratio <name> <value>".
# Performance is reported, never asserted: the exit status says only
# whether the benchmark ran (0), was misused (2) or failed (1).

set -u -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)

# ---------------------------------------------------------------- settings
# Every setting has an environment variable; flags override them.
PY=${BENCH_PYTHON:-/usr/bin/python3}
ROUNDS_SET=${BENCH_ROUNDS:+1}      # given: proxy mode keeps it
DURATION_SET=${BENCH_DURATION:+1}
QUICK=""
ROUNDS=${BENCH_ROUNDS:-7}          # runs of each contender
DURATION=${BENCH_DURATION:-2}      # measuring window, seconds
WARMUP=${BENCH_WARMUP:-2}          # forwarding before the window, seconds
BURST=${BENCH_BURST:-32}           # rx/tx burst of every contender
MEM_MB=${BENCH_MEM:-512}           # EAL -m
MBUFS=${BENCH_MBUFS:-16383}        # pool size (sluice's default)
MBUF_CACHE=${BENCH_MBUF_CACHE:-256} # per-lcore cache (sluice's default)
CTRL_LCORE=${BENCH_CTRL_LCORE:-0}  # testpmd's main (control) lcore
FWD_LCORE=${BENCH_FWD_LCORE:-1}    # the one forwarding lcore of everyone
NULL_ARGS=${BENCH_NULL_ARGS:-}     # extra net_null devargs, e.g. ",size=128"
START_TIMEOUT=${BENCH_START_TIMEOUT:-60}
SLUICE=${SLUICE_BIN:-$ROOT/build/app/sluice}
TESTPMD=${TESTPMD_BIN:-dpdk-testpmd}
SCHED_FWD=${SCHED_FWD_BIN:-$ROOT/build/perf/sched_fwd/sched_fwd}
CPU_HZ=${BENCH_CPU_HZ:-}           # for cycles/packet; default: cpu MHz of the forwarding lcore
LOGDIR=${BENCH_LOGDIR:-}
ORDER=${BENCH_ORDER:-abab}         # abab, or abba to cancel linear drift
PORTS=(0 1)                        # ports whose tx counters are summed
MBUFS_FROM_ENV=${BENCH_MBUFS:+1}
REPORT_CYCLES=0                    # a mode sets 1 to print cycles/packet,
CYCLES_BASE=""                     # and the contender to compare them with
STAGE_ACCOUNT=()                   # "contender stage baseline" triples: see stage_account()
STAGE_RUNS=${BENCH_STAGE_RUNS:-5}  # runs of each with stage_cycles = on
INSTR=0                            # --instructions: count under callgrind
CACHE=0                            # --cache: and simulate the caches
CACHE_D1=${BENCH_CACHE_D1:-49152,12,64}    # --cache: L1d bytes,ways,line
CACHE_LL=${BENCH_CACHE_LL:-1048576,16,64}  # --cache: L2 (callgrind's LL)
INSTR_SECS=${BENCH_INSTR_SECS:-4}  # forwarding under callgrind, seconds
INSTR_TOP=${BENCH_INSTR_TOP:-12}   # sluice's costliest functions to print
VALGRIND=${VALGRIND_BIN:-valgrind}
START_TIMEOUT_SET=${BENCH_START_TIMEOUT:+1}
STOP_TRIES=200                     # 0.1 s waits for a SIGTERM'd contender

usage() {
	cat <<EOF
Usage: perf/bench.sh [options] MODE

Modes:
  passthrough   sluice with no configuration (a transparent bridge) vs
                dpdk-testpmd io-forward; last line:
                ratio passthrough_vs_testpmd <sluice pps / testpmd pps>
  aqm           sluice FQ-CoDel + shaper (1k subscriber pipes, 10k flows,
                64-byte IPv4 replayed by net_pcap) vs dpdk-testpmd io-forward
                vs perf/sched_fwd (DPDK rte_sched with RED, the same pipes);
                cycles/packet of each; last two lines:
                ratio aqm_vs_testpmd <sluice pps / testpmd pps>
                ratio aqm_vs_rte_sched <sluice pps / sched_fwd pps>
  tcpopt        sluice with [tcpopt] (config/examples/mss-clamp-1400.ini)
                vs sluice pass-through, on replayed TCP traffic (net_pcap
                infinite_rx): SYN/SYN-ACK traffic, then data traffic; then
                5 more runs of each with [sluice] stage_cycles = on give
                "stage tcpopt ..." lines (cycles/packet inside the stage
                run as a pass of its own, which stage_cycles makes it, and
                the ratio they imply); last two lines:
                ratio tcpopt_syn_vs_passthrough <tcpopt pps / pass-through pps>
                ratio tcpopt_data_vs_passthrough <tcpopt pps / pass-through pps>
  proxy         sluice as a transparent TCP proxy
                (config/examples/proxy-all-tcp.ini) vs sluice as a bridge,
                between two network namespaces on net_af_packet veths
                (tests/e2e/lib.sh; needs root, iperf3): iperf3 goodput 1
                and 4 streams both ways, connections per second, and
                memory per held connection; 5 rounds of 3 s measurements
                by default (--duration sets the seconds); last two lines:
                ratio proxy_conn_rate_vs_bridge <proxy conn/s / bridge conn/s>
                ratio proxy_vs_bridge <proxy Mbit/s / bridge Mbit/s>
  aqm-prtt      the aqm datapath on TCP with passive RTT ([aqm] passive_rtt,
                lib/prtt) on against off, same binary and traffic: AQM_FLOWS
                flows of 3 data segments (128 B, TCP timestamps) replayed
                toward 1k subscribers on port 1 and their ACKs on port 0,
                every segment new data with a new TSval (perf/aqm_traffic.py
                --tcp); cycles/packet of each; last line:
                ratio aqm_prtt_vs_aqm <passive RTT on pps / off pps>
                (issue 19's target: >= 0.909, i.e. <= 10% more cycles);
                with --instructions the counts start once forwarding runs
                (callgrind_control -z) and packets are the parser's calls
  aqm-rwnd      aqm-prtt's traffic with the window clamp ([aqm]
                rwnd_clamp, lib/rwnd) on against off; the flows never
                open with a SYN, so every segment is parsed and looked up
                and none is clamped: the cost for connections the clamp
                does not follow; last line:
                ratio aqm_rwnd_vs_aqm <clamp on pps / off pps>
  scale         1 worker against 2 workers (both lcores of --lcores; the
                main lcore is worker 0): pass-through on net_null with 2
                queues per port (RSS configured), testpmd io given the same
                cores (1 and 2 forwarding lcores), and the aqm traffic split
                over 2 rx queues as symmetric RSS would split it, and split
                by pipe owner (no hand-off) for comparison, and by
                subscriber with [sluice] rss = subscriber (a NIC steering
                by the subscriber's address); prints the share of packets
                that crossed a hand-off ring; last two lines:
                ratio scale_passthrough_2v1 <2 workers pps / 1 worker pps>
                ratio scale_aqm_2v1 <2 workers pps / 1 worker pps>

  --instructions MODE
                the same traffic, each contender run once under valgrind's
                callgrind for BENCH_INSTR_SECS (4) seconds: prints
                "instructions <contender> <v> per packet", sluice's
                costliest functions ("top ..." lines), and for every ratio
                of the mode "iratio <name> <v>" = the instructions per
                packet of the denominator / those of the numerator (proxy:
                per data segment of a fixed iperf3 upload, BENCH_PROXY_BYTES,
                40M; 4M with --quick; mptcp: per data segment of an MPTCP
                download and upload over two unshaped paths, the proxy
                against kernel MPTCP through the bridge,
                BENCH_MPTCP_INSTR_BYTES each, 20000000; 2000000 with
                --quick; last line "iratio mptcp_proxy_vs_bridge <v>";
                both need root)

  --cache MODE  --instructions, with callgrind's cache simulation: one
                core's L1d (BENCH_CACHE_D1, 49152,12,64: bytes, ways,
                line) and L2 (BENCH_CACHE_LL, 1048576,16,64), as this
                VM's CPU (AMD family 26) has them; also prints
                "misses <contender> D1 <v> LL <v> per packet", the data
                misses (reads and writes) at each level. The simulation
                ignores prefetch instructions and the hardware
                prefetchers, so it shows where lines are missed, not what
                a miss costs. Repeats as the instruction counts do.
                passthrough, aqm, aqm-prtt and tcpopt only.

  mptcp         the kernel's MPTCP client over two paths (4 ports as 2
                pairs, tests/e2e/mptcp_lib.sh; needs root): through a
                plain sluice bridge (kernel MPTCP end to end) vs through
                sluice terminating MPTCP (config/examples/mptcp-proxy.ini;
                "unavailable" while sluice has no [proxy] mptcp). Paths
                shaped to 20 and 30 Mbit/s: goodput, and the longest stall
                when path 0 goes down; unshaped: goodput vs single-path
                TCP through the bridge. 3 rounds, 6 s downloads by default;
                last three lines, the proxy's figure then the kernel's:
                ratio mptcp_aggregate_vs_sum <goodput / 50 Mbit/s> kernel <v>
                result mptcp_failover_stall_s <seconds> kernel <v>
                ratio mptcp_proxy_vs_bridge <MPTCP Mbit/s / TCP bridged> kernel <v>

Options (environment variable in brackets):
  --rounds N      runs of each contender, alternating     [BENCH_ROUNDS=$ROUNDS]
  --duration S    measuring window per run, seconds       [BENCH_DURATION=$DURATION]
  --warmup S      forwarding before the window, seconds   [BENCH_WARMUP=$WARMUP]
  --quick         smoke run: 1 round, 1 s window, 0.5 s warm-up
  --order abab|abba  run order inside the alternation     [BENCH_ORDER=$ORDER]
  --burst N       rx/tx burst size of every contender     [BENCH_BURST=$BURST]
  --lcores C,F    control lcore C and forwarding lcore F  [BENCH_CTRL_LCORE, BENCH_FWD_LCORE]
  --sluice PATH   the sluice binary                       [SLUICE_BIN=build/app/sluice]
  --testpmd PATH  the testpmd binary                      [TESTPMD_BIN=dpdk-testpmd]
  --sched-fwd PATH  aqm mode's rte_sched forwarder  [SCHED_FWD_BIN=build/perf/sched_fwd/sched_fwd]
  --logs DIR      keep every run's output in DIR          [BENCH_LOGDIR]
  -h, --help      this text

Also: BENCH_MEM (EAL -m, MB), BENCH_MBUFS, BENCH_MBUF_CACHE,
BENCH_NULL_ARGS (extra net_null devargs), BENCH_PYTHON, BENCH_START_TIMEOUT,
BENCH_CPU_HZ (TSC rate for cycles/packet), BENCH_STAGE_RUNS (tcpopt mode's
runs with stage_cycles, 5). aqm mode: BENCH_AQM_FLOWS (10000),
BENCH_AQM_SUBSCRIBERS (1000), BENCH_AQM_RATE (10gbit), BENCH_AQM_SIZE (64),
BENCH_AQM_BYPASS (on; off queues every packet, as before the bypass),
BENCH_AQM_DIFFSERV (besteffort; diffserv3 or diffserv4 also give the
flows DSCPs 0, CS1, AF41 and EF in turn), BENCH_AQM_ISOLATION (unset: the
config default, triple-isolate; flows turns host isolation off). aqm-prtt
mode: BENCH_AQM_FLOWS, BENCH_AQM_SUBSCRIBERS, BENCH_AQM_TCP_SIZE (128 B data
segments), BENCH_AQM_SEGMENTS (3 per flow), BENCH_PRTT_FLOWS ([aqm]
prtt_flows; the power of two >= 4 x BENCH_AQM_FLOWS, 65536).
--instructions: BENCH_INSTR_SECS (4; 1 with --quick), BENCH_INSTR_TOP (12
functions), VALGRIND_BIN, BENCH_TELEMETRY_TIMEOUT (20 s under valgrind),
BENCH_PROXY_BYTES (40M; 4M with --quick), BENCH_MPTCP_INSTR_BYTES
(20000000; 2000000 with --quick). --cache: BENCH_CACHE_D1 (49152,12,64),
BENCH_CACHE_LL (1048576,16,64). proxy mode: BENCH_PROXY_CLIENT_MTU (the
MTU of the client's interface alone; 1500); BENCH_PROXY_DOWNLOAD=1 counts
a download (iperf3 -R) with --instructions instead of the upload. mptcp mode:
BENCH_MPTCP_ONLY=unshaped runs only the unshaped transfers.
EOF
}

die() { echo "bench: $*" >&2; exit 1; }
misuse() { echo "bench: $*" >&2; echo "try perf/bench.sh --help" >&2; exit 2; }

MODE=""
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) ROUNDS=${2:?}; ROUNDS_SET=1; shift ;;
	--duration) DURATION=${2:?}; DURATION_SET=1; shift ;;
	--warmup) WARMUP=${2:?}; shift ;;
	--quick) ROUNDS=1; DURATION=1; WARMUP=0.5; QUICK=1; ROUNDS_SET=1 ;;
	--instructions) INSTR=1 ;;
	--cache) INSTR=1; CACHE=1 ;;
	--order) ORDER=${2:?}; shift ;;
	--burst) BURST=${2:?}; shift ;;
	--lcores) CTRL_LCORE=${2%%,*}; FWD_LCORE=${2##*,}; shift ;;
	--sluice) SLUICE=${2:?}; shift ;;
	--testpmd) TESTPMD=${2:?}; shift ;;
	--sched-fwd) SCHED_FWD=${2:?}; shift ;;
	--logs) LOGDIR=${2:?}; shift ;;
	-h|--help) usage; exit 0 ;;
	-*) misuse "unknown option '$1'" ;;
	*) [ -z "$MODE" ] || misuse "one mode at a time"; MODE=$1 ;;
	esac
	shift
done
[ -n "$MODE" ] || misuse "no mode given"
case "$CACHE:$MODE" in
1:proxy|1:mptcp|1:scale) misuse "--cache: passthrough, aqm, aqm-prtt, aqm-rwnd and tcpopt only" ;;
esac
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || misuse "--rounds: '$ROUNDS' is not a positive integer"
[[ "$DURATION" =~ ^[0-9]*\.?[0-9]+$ ]] || misuse "--duration: '$DURATION' is not a number of seconds"
[[ "$WARMUP" =~ ^[0-9]*\.?[0-9]+$ ]] || misuse "--warmup: '$WARMUP' is not a number of seconds"
[[ "$BURST" =~ ^[1-9][0-9]*$ ]] || misuse "--burst: '$BURST' is not a positive integer"
[[ "$CTRL_LCORE" =~ ^[0-9]+$ && "$FWD_LCORE" =~ ^[0-9]+$ ]] || misuse "--lcores: want C,F (two lcore ids)"
[ "$CTRL_LCORE" != "$FWD_LCORE" ] || misuse "--lcores: the control and forwarding lcores must differ"
case "$ORDER" in abab|abba) ;; *) misuse "--order: abab or abba" ;; esac
[ -x "$PY" ] || die "no python at $PY (set BENCH_PYTHON)"

# ------------------------------------------------------- process bookkeeping
# Every process we start is recorded by PID; only those are ever signalled.
declare -a STARTED_PIDS=()
declare -a STARTED_PREFIXES=()
KEEP_LOGS=1
if [ -z "$LOGDIR" ]; then
	LOGDIR=$(mktemp -d -t sluice-bench.XXXXXX) || die "mktemp failed"
	KEEP_LOGS=0
else
	mkdir -p "$LOGDIR" || die "cannot create $LOGDIR"
fi

# Where the EAL puts --file-prefix directories (eal_get_runtime_dir()).
if [ "$(id -u)" = 0 ]; then
	RUNTIME_BASE=/var/run/dpdk
else
	RUNTIME_BASE=${XDG_RUNTIME_DIR:-/tmp}/dpdk
fi

pid_alive() { kill -0 "$1" 2>/dev/null; }

# stop_pid PID: SIGTERM, wait up to 20 s for a drain, then SIGKILL. Sets
# STOP_RC to the exit status.
stop_pid() {
	local pid=$1 i
	STOP_RC=0
	if pid_alive "$pid"; then
		kill -TERM "$pid" 2>/dev/null
		for ((i = 0; i < STOP_TRIES; i++)); do
			pid_alive "$pid" || break
			sleep 0.1
		done
		if pid_alive "$pid"; then
			echo "bench: pid $pid ignored SIGTERM for 20 s; killing it" >&2
			kill -KILL "$pid" 2>/dev/null
		fi
	fi
	wait "$pid" 2>/dev/null
	STOP_RC=$?
	local -a keep=()
	for i in "${STARTED_PIDS[@]}"; do [ "$i" = "$pid" ] || keep+=("$i"); done
	STARTED_PIDS=("${keep[@]+"${keep[@]}"}")
}

cleanup() {
	local pid p
	trap - EXIT INT TERM
	for pid in "${STARTED_PIDS[@]+"${STARTED_PIDS[@]}"}"; do
		stop_pid "$pid"
	done
	for p in "${STARTED_PREFIXES[@]+"${STARTED_PREFIXES[@]}"}"; do
		rm -rf -- "${RUNTIME_BASE:?}/$p"
	done
	[ "$KEEP_LOGS" = 1 ] || rm -rf -- "$LOGDIR"
}
trap cleanup EXIT
trap 'echo "bench: interrupted" >&2; cleanup; exit 130' INT TERM

# ------------------------------------------------------------ applications
# All contenders share these EAL options: no hugepages, no PCI, no shared
# config (no multi-process socket or files; telemetry still works), and
# the same two ports: net_null0/1, or the --vdev arguments in VDEVS when a
# mode (or a start_<contender> function) sets it.
VDEVS=()
eal_common() {
	local prefix=$1 v
	EAL=(--no-huge -m "$MEM_MB" --no-pci --no-shconf --file-prefix "$prefix")
	if [ ${#VDEVS[@]} -eq 0 ]; then
		EAL+=(--vdev "net_null0$NULL_ARGS" --vdev "net_null1$NULL_ARGS")
	else
		for v in "${VDEVS[@]}"; do EAL+=(--vdev "$v"); done
	fi
}

RUN_SEQ=0
# launch LABEL CMD...: start CMD in the background with stdin from
# /dev/null. Sets APP_PID, APP_PREFIX (must be the --file-prefix in CMD),
# APP_LOG, APP_SOCK.
launch() {
	local label=$1; shift
	APP_LOG="$LOGDIR/$(printf '%02d' "$RUN_SEQ")-$label.log"
	local -a wrap=()
	if [ "$INSTR" = 1 ]; then
		# Count only the forwarding: sluice's worker_main (the worker
		# loop, PMD rx and tx included) and sched_fwd's forward_loop;
		# testpmd is stripped, so each of its threads gets a file and
		# the forwarding lcore's thread is read.
		APP_CG="$LOGDIR/$(printf '%02d' "$RUN_SEQ")-$label.callgrind"
		# --fair-sched: the telemetry thread gets its turn.
		wrap=("$VALGRIND" --tool=callgrind --fair-sched=yes --callgrind-out-file="$APP_CG")
		# --cache: one core's L1d and L2 as this VM's CPU has them
		# (AMD family 26: 48 KB, 12 ways; 1 MB, 16 ways).
		[ "$CACHE" = 1 ] && wrap+=(--cache-sim=yes --I1=32768,8,64
					   --D1="$CACHE_D1" --LL="$CACHE_LL")
		case "$1" in
		"$SLUICE") wrap+=(--toggle-collect=worker_main) ;;
		"$SCHED_FWD") wrap+=(--toggle-collect=forward_loop) ;;
		*) wrap+=(--separate-threads=yes) ;;
		esac
	fi
	printf '%q ' "${wrap[@]+"${wrap[@]}"}" "$@" >"$APP_LOG"
	echo >>"$APP_LOG"
	"${wrap[@]+"${wrap[@]}"}" "$@" </dev/null >>"$APP_LOG" 2>&1 &
	APP_PID=$!
	STARTED_PIDS+=("$APP_PID")
	STARTED_PREFIXES+=("$APP_PREFIX")
	APP_SOCK="$RUNTIME_BASE/$APP_PREFIX/dpdk_telemetry.v2"
}

new_prefix() {
	RUN_SEQ=$((RUN_SEQ + 1))
	APP_PREFIX="sluice-bench-$$-$RUN_SEQ"
}

# start_sluice LABEL [CONFIG]: sluice on one lcore (the forwarding lcore;
# the main lcore is also the only worker), no config = pass-through.
# SLUICE_LCORES, when set, is its -l instead (scale mode: one worker each).
SLUICE_LCORES=""
start_sluice() {
	local label=$1 config=${2:-}
	local -a args=()
	[ -n "$config" ] && args=(-c "$config")
	new_prefix
	eal_common "$APP_PREFIX"
	launch "$label" "$SLUICE" "${EAL[@]}" -l "${SLUICE_LCORES:-$FWD_LCORE}" -- "${args[@]+"${args[@]}"}"
	APP_KIND=sluice
}

# start_testpmd LABEL [TESTPMD ARGS...]: testpmd with its main lcore on
# the control lcore and one forwarding core on the forwarding lcore.
# Non-interactive; --stats-period keeps it running until SIGTERM.
# --no-mlockall: sluice does not lock or pre-fault its memory either.
start_testpmd() {
	local label=$1; shift
	new_prefix
	eal_common "$APP_PREFIX"
	launch "$label" "$TESTPMD" "${EAL[@]}" -l "$CTRL_LCORE,$FWD_LCORE" \
		--main-lcore "$CTRL_LCORE" -- \
		--nb-cores=1 --rxq=1 --txq=1 --burst="$BURST" \
		--total-num-mbufs="$MBUFS" --mbcache="$MBUF_CACHE" \
		--no-mlockall --stats-period 86400 "$@"
	APP_KIND=testpmd
}

# wait_forwarding: until telemetry answers and both ports have sent.
wait_forwarding() {
	local deadline=$((SECONDS + START_TIMEOUT)) s
	while :; do
		pid_alive "$APP_PID" || return 1
		if [ -S "$APP_SOCK" ] &&
		   s=$("$PY" "$HERE/telemetry.py" "$APP_SOCK" --sample "${PORTS[@]}" 2>/dev/null) &&
		   [ "$(echo "$s" | cut -d' ' -f2)" -gt 0 ]; then
			return 0
		fi
		[ $SECONDS -lt $deadline ] || return 1
		sleep 0.2
	done
}

# measure: warm up, then difference the tx counters of both ports
# (/ethdev/stats,P opackets: the same driver counters for every
# contender) over the window. Sets PPS, and for sluice APP_PPS from its
# own /sluice/totals tx as a cross-check.
measure() {
	local extra=() a b
	[ "$APP_KIND" = sluice ] && extra=(--sluice)
	sleep "$WARMUP"
	a=$("$PY" "$HERE/telemetry.py" "$APP_SOCK" --sample "${PORTS[@]}" "${extra[@]+"${extra[@]}"}") || return 1
	sleep "$DURATION"
	b=$("$PY" "$HERE/telemetry.py" "$APP_SOCK" --sample "${PORTS[@]}" "${extra[@]+"${extra[@]}"}") || return 1
	pid_alive "$APP_PID" || return 1
	local -a A=($a) B=($b)
	PPS=$("$PY" "$HERE/stats.py" rate "${A[0]}" "${A[1]}" "${B[0]}" "${B[1]}") || return 1
	APP_PPS=""
	if [ "$APP_KIND" = sluice ]; then
		APP_PPS=$("$PY" "$HERE/stats.py" rate "${A[0]}" "${A[3]}" "${B[0]}" "${B[3]}") || return 1
	fi
	WINDOW_S=$("$PY" "$HERE/stats.py" ratio "$((B[0] - A[0]))" 1000000000 2)
	return 0
}

# run_one CONTENDER: start it, measure, stop it. Appends to RESULTS_<c>.
# fail_run WHY: stop the contender that is running, show the end of its
# log, and die with WHY and its exit status.
fail_run() {
	stop_pid "$APP_PID"
	echo "--- $APP_LOG" >&2; tail -n 20 "$APP_LOG" >&2
	die "$1 (exit $STOP_RC)"
}

# start_forwarding CONTENDER LABEL: start_<CONTENDER> LABEL, then wait
# until it forwards.
start_forwarding() {
	"start_$1" "$2" || die "$1: cannot start"
	wait_forwarding || fail_run "$1: not forwarding within ${START_TIMEOUT}s"
}

# stop_run CONTENDER: stop the running contender; any exit status but 0
# is fatal. Removes its runtime directory.
stop_run() {
	stop_pid "$APP_PID"
	if [ "$STOP_RC" != 0 ]; then
		echo "--- $APP_LOG" >&2; tail -n 20 "$APP_LOG" >&2
		die "$1: exited with status $STOP_RC"
	fi
	rm -rf -- "${RUNTIME_BASE:?}/$APP_PREFIX"
}

run_one() {
	local c=$1 round=$2 note=""
	start_forwarding "$c" "$c"
	measure || fail_run "$c: measurement failed"
	stop_run "$c"
	[ -n "$APP_PPS" ] && note="  (own counters: $APP_PPS pps)"
	printf 'round %d/%d %-22s %12d pps over %s s%s\n' "$round" "$ROUNDS" \
		"$c" "$PPS" "$WINDOW_S" "$note"
	eval "RESULTS_$c+=(\"\$PPS\")"
}

# ------------------------------------------------------------------ modes
# A mode sets CONTENDERS (names; start_<name> must exist) and the ratio it
# reports: RATIO_NAME = RATIO_NUM's median / RATIO_DEN's median. Further
# ratios may be listed in EXTRA_RATIOS as "name num den" triples; the
# RATIO_NAME line is always printed last.

# Pass-through is sluice with no configuration. Only a --burst other than
# sluice's default (32) needs a file, so that both contenders use it.
start_sluice_passthrough() {
	local conf=""
	if [ "$BURST" != 32 ]; then
		conf="$LOGDIR/passthrough-burst.ini"
		printf '[sluice]\nburst = %s\n' "$BURST" >"$conf"
	fi
	start_sluice "$1" "$conf"
}
start_testpmd_io() { start_testpmd "$1" --forward-mode=io; }

mode_passthrough() {
	CONTENDERS=(sluice_passthrough testpmd_io)
	RATIO_NAME=passthrough_vs_testpmd
	RATIO_NUM=sluice_passthrough
	RATIO_DEN=testpmd_io
	EXTRA_RATIOS=()
	[ -x "$SLUICE" ] || die "no sluice binary at $SLUICE (build it, or use --sluice PATH)"
}

# tcpopt: the same sluice binary, with and without a [tcpopt] section, on
# the same replayed TCP traffic. net_pcap with infinite_rx=1 loads a pcap
# into memory and returns copies of its frames forever; without a tx
# pcap it frees transmitted frames and counts them (opackets), like
# net_null. Two traffic kinds, each measured in its own pair of
# contenders, all four alternating in every round.
TCPOPT_CONF=$ROOT/config/examples/mss-clamp-1400.ini
tcpopt_vdevs() {
	VDEVS=("net_pcap0,rx_pcap=$LOGDIR/tcpopt-$1-0.pcap,infinite_rx=1"
	       "net_pcap1,rx_pcap=$LOGDIR/tcpopt-$1-1.pcap,infinite_rx=1")
}
# The clamp config, plus [sluice] burst when --burst is not the default,
# plus stage_cycles = on for the stage accounting runs (STAGE_TIMING=1).
STAGE_TIMING=0
tcpopt_conf() {
	if [ "$BURST" = 32 ] && [ "$STAGE_TIMING" = 0 ]; then
		TCPOPT_RUN_CONF=$TCPOPT_CONF
	else
		TCPOPT_RUN_CONF=$LOGDIR/tcpopt-run.ini
		{ printf '[sluice]\nburst = %s\n' "$BURST"
		  [ "$STAGE_TIMING" = 1 ] && printf 'stage_cycles = on\n'
		  cat "$TCPOPT_CONF"; } >"$TCPOPT_RUN_CONF"
	fi
}
start_syn_passthrough() { tcpopt_vdevs syn; start_sluice_passthrough "$1"; }
start_syn_tcpopt() { tcpopt_vdevs syn; tcpopt_conf; start_sluice "$1" "$TCPOPT_RUN_CONF"; }
start_data_passthrough() { tcpopt_vdevs data; start_sluice_passthrough "$1"; }
start_data_tcpopt() { tcpopt_vdevs data; tcpopt_conf; start_sluice "$1" "$TCPOPT_RUN_CONF"; }

mode_tcpopt() {
	local t
	CONTENDERS=(syn_passthrough syn_tcpopt data_passthrough data_tcpopt)
	EXTRA_RATIOS=(tcpopt_syn_vs_passthrough syn_tcpopt syn_passthrough)
	RATIO_NAME=tcpopt_data_vs_passthrough
	RATIO_NUM=data_tcpopt
	RATIO_DEN=data_passthrough
	[ -x "$SLUICE" ] || die "no sluice binary at $SLUICE (build it, or use --sluice PATH)"
	[ -r "$TCPOPT_CONF" ] || die "no $TCPOPT_CONF"
	for t in syn data; do
		"$PY" "$HERE/tcpopt_traffic.py" "$t" "$LOGDIR/tcpopt-$t-0.pcap" \
			"$LOGDIR/tcpopt-$t-1.pcap" ||
			die "cannot write the $t traffic (scapy under $PY?)"
	done
	TRAFFIC_DESC="net_pcap0/1 infinite_rx=1 replaying 1024 TCP flows per port (syn: SYN / SYN-ACK, 74 B; data: ACK 66 B / data 130 B, NOP NOP TS)"
	# After the rounds: the stage's own cycles per packet on each traffic
	# kind, against the pass-through's (contender stage baseline).
	STAGE_ACCOUNT=(syn_tcpopt tcpopt syn_passthrough data_tcpopt tcpopt data_passthrough)
}

# aqm: the whole datapath with FQ-CoDel on, against testpmd io-forward and
# DPDK's rte_sched with RED (perf/sched_fwd), on the same traffic. net_null
# frames are all zeros (non-IP, one flow), so the traffic is a pcap that
# net_pcap replays from memory forever: AQM_FLOWS UDP/IPv4 flows to
# AQM_SUBS subscriber addresses, arriving on port 1 (internet side) and
# leaving on port 0 (subscriber side: a net_null sink that receives
# nothing). All three get the same two ports and the same mbuf pool size.
AQM_FLOWS=${BENCH_AQM_FLOWS:-10000}
AQM_SUBS=${BENCH_AQM_SUBSCRIBERS:-1000}
AQM_RATE=${BENCH_AQM_RATE:-10gbit}
AQM_SIZE=${BENCH_AQM_SIZE:-64}
AQM_BYPASS=${BENCH_AQM_BYPASS:-on}
AQM_DIFFSERV=${BENCH_AQM_DIFFSERV:-besteffort}
AQM_ISOLATION=${BENCH_AQM_ISOLATION:-}
AQM_DSCP=()
[ "$AQM_DIFFSERV" = besteffort ] || AQM_DSCP=(--dscp-mix)
start_sluice_aqm() { start_sluice "$1" "$AQM_DIR/sluice-aqm.ini"; }
start_sched_fwd_red() {
	new_prefix
	eal_common "$APP_PREFIX"
	launch "$1" "$SCHED_FWD" "${EAL[@]}" -l "$FWD_LCORE" -- \
		--subscribers "$AQM_DIR/subscribers.csv" --burst "$BURST" \
		--mbufs "$MBUFS" --mbuf-cache "$MBUF_CACHE"
	APP_KIND=sched_fwd
}
mode_aqm() {
	CONTENDERS=(sluice_aqm testpmd_io sched_fwd_red)
	EXTRA_RATIOS=(aqm_vs_testpmd sluice_aqm testpmd_io)
	RATIO_NAME=aqm_vs_rte_sched
	RATIO_NUM=sluice_aqm
	RATIO_DEN=sched_fwd_red
	REPORT_CYCLES=1
	CYCLES_BASE=testpmd_io
	[ -x "$SLUICE" ] || die "no sluice binary at $SLUICE (build it, or use --sluice PATH)"
	[ "$MODE" = aqm-prtt ] || [ "$MODE" = aqm-rwnd ] || [ -x "$SCHED_FWD" ] ||
		die "no sched_fwd at $SCHED_FWD (ninja builds perf/sched_fwd; or use --sched-fwd PATH)"
	AQM_DIR=$LOGDIR/aqm
	"$PY" "$HERE/aqm_traffic.py" "$AQM_DIR" --flows "$AQM_FLOWS" \
		--subscribers "$AQM_SUBS" --rate "$AQM_RATE" --size "$AQM_SIZE" \
		"${AQM_DSCP[@]}" || die "cannot write the aqm traffic"
	# net_pcap keeps every frame of the pcap in an mbuf of the port's
	# pool, so everyone gets a pool with room for that and more.
	[ -n "$MBUFS_FROM_ENV" ] || MBUFS=$((AQM_FLOWS < 8192 ? 16383 : 32767))
	VDEVS=("net_null0,no-rx=1" "net_pcap1,rx_pcap=$AQM_DIR/down.pcap,infinite_rx=1")
	# FQ-CoDel at its defaults in every subscriber pipe, rates from the
	# CSV (far above what one core forwards), unknown addresses pass.
	cat >"$AQM_DIR/sluice-aqm.ini" <<EOF
[sluice]
burst = $BURST
mbufs = $MBUFS
mbuf_cache = $MBUF_CACHE
[aqm]
ports = 0
qdisc = fq_codel
subscribers = subscribers.csv
max_subscribers = $((AQM_SUBS > 1024 ? AQM_SUBS : 1024))
default = pass
bypass = $AQM_BYPASS
EOF
	# (besteffort writes no key: the same file as before tins existed)
	[ "$AQM_DIFFSERV" = besteffort ] ||
		echo "diffserv = $AQM_DIFFSERV" >>"$AQM_DIR/sluice-aqm.ini"
	# (no isolation key unless asked: a sluice older than host isolation
	# reads the same file)
	[ -z "$AQM_ISOLATION" ] ||
		echo "isolation = $AQM_ISOLATION" >>"$AQM_DIR/sluice-aqm.ini"
	TRAFFIC_DESC="net_pcap1 infinite_rx=1 replaying $AQM_FLOWS UDP flows to $AQM_SUBS subscribers ($AQM_SIZE B, downstream${AQM_DSCP:+, DSCPs 0/CS1/AF41/EF}) into net_null0 (no rx); $MBUFS mbufs; [aqm] bypass = $AQM_BYPASS, diffserv = $AQM_DIFFSERV, isolation = ${AQM_ISOLATION:-default}"
}

# aqm-prtt: what passive RTT adds to the aqm datapath, on the traffic it
# measures. The same configuration twice, passive_rtt off and on; TCP data
# downstream (port 1, internet side) and the subscribers' ACKs upstream
# (port 0), both replayed by net_pcap from memory. Each flow's segments
# step their sequence numbers and TSvals around the whole space, so every
# segment is new data with a new TSval and every ACK answers one
# (perf/aqm_traffic.py --tcp): the most work passive RTT can be given.
AQM_TCP_SIZE=${BENCH_AQM_TCP_SIZE:-128}
AQM_SEGMENTS=${BENCH_AQM_SEGMENTS:-3}
PRTT_FLOWS=${BENCH_PRTT_FLOWS:-}
aqm_tcp_vdevs() {
	VDEVS=("net_pcap0,rx_pcap=$AQM_DIR/up.pcap,infinite_rx=1"
	       "net_pcap1,rx_pcap=$AQM_DIR/down.pcap,infinite_rx=1")
}
start_aqm_tcp() { aqm_tcp_vdevs; start_sluice "$1" "$AQM_DIR/sluice-aqm.ini"; }
start_aqm_prtt() { aqm_tcp_vdevs; start_sluice "$1" "$AQM_DIR/sluice-aqm-prtt.ini"; }
mode_aqm_prtt() {
	mode_aqm # its checks, configuration and subscriber table
	CONTENDERS=(aqm_tcp aqm_prtt)
	EXTRA_RATIOS=()
	INSTR_WINDOW=1
	RATIO_NAME=aqm_prtt_vs_aqm
	RATIO_NUM=aqm_prtt
	RATIO_DEN=aqm_tcp
	CYCLES_BASE=aqm_tcp
	"$PY" "$HERE/aqm_traffic.py" "$AQM_DIR" --flows "$AQM_FLOWS" \
		--subscribers "$AQM_SUBS" --rate "$AQM_RATE" --size "$AQM_TCP_SIZE" \
		--tcp --segments "$AQM_SEGMENTS" || die "cannot write the aqm TCP traffic"
	# Both pcaps stay in the pool: room for them and as much again.
	if [ -z "$MBUFS_FROM_ENV" ]; then
		MBUFS=16383
		while [ "$MBUFS" -lt $((4 * AQM_FLOWS * AQM_SEGMENTS)) ]; do MBUFS=$((MBUFS * 2 + 1)); done
		sed -i "s/^mbufs = .*/mbufs = $MBUFS/" "$AQM_DIR/sluice-aqm.ini"
	fi
	# About 2.3 KB an mbuf, and the rest of sluice beside them.
	[ -n "${BENCH_MEM:-}" ] || MEM_MB=$((MBUFS * 23 / 10240 + 512))
	# The table at 4x the flows, for a sluice from before lib/prtt sampled
	# one flow per subscriber (its 4-way buckets, overflowing, made their
	# flows evict each other on every segment); a newer one ignores it.
	if [ -z "$PRTT_FLOWS" ]; then
		PRTT_FLOWS=16384
		while [ "$PRTT_FLOWS" -lt $((4 * AQM_FLOWS)) ]; do PRTT_FLOWS=$((PRTT_FLOWS * 2)); done
	fi
	{ cat "$AQM_DIR/sluice-aqm.ini"
	  printf 'passive_rtt = on\nprtt_flows = %s\n' "$PRTT_FLOWS"; } >"$AQM_DIR/sluice-aqm-prtt.ini"
	TRAFFIC_DESC="net_pcap1 infinite_rx=1 replaying $AQM_FLOWS TCP flows x $AQM_SEGMENTS data segments ($AQM_TCP_SIZE B, timestamps) to $AQM_SUBS subscribers, net_pcap0 their ACKs (66 B); $MBUFS mbufs; [aqm] bypass = $AQM_BYPASS; passive_rtt off vs on (prtt_flows $PRTT_FLOWS)"
}

# aqm-rwnd: what the window clamp ([aqm] rwnd_clamp, lib/rwnd) adds to the
# aqm datapath, on aqm-prtt's traffic: every segment is parsed and looked
# up, and finds no entry, since the replayed flows never open with a SYN
# (two ports replay on their own, so a handshake cannot be ordered across
# them). That is the cost for connections the clamp does not follow, and
# a floor for those it does (perf/README.md, "aqm-rwnd").
start_aqm_rwnd() { aqm_tcp_vdevs; start_sluice "$1" "$AQM_DIR/sluice-aqm-rwnd.ini"; }
mode_aqm_rwnd() {
	mode_aqm_prtt # its traffic and configuration
	CONTENDERS=(aqm_tcp aqm_rwnd)
	RATIO_NAME=aqm_rwnd_vs_aqm
	RATIO_NUM=aqm_rwnd
	{ cat "$AQM_DIR/sluice-aqm.ini"; echo "rwnd_clamp = on"; } >"$AQM_DIR/sluice-aqm-rwnd.ini"
	TRAFFIC_DESC="${TRAFFIC_DESC%; passive_rtt*}; rwnd_clamp off vs on (no handshakes: lookups that find no entry)"
}

# scale: the same datapaths with 1 and with 2 workers. Worker i polls rx
# queue i of every port (README.md, "Workers and queues"), so 2 workers
# need 2 rx queues per port: net_null makes frames on every queue, and the
# aqm traffic is split into one pcap per queue by perf/aqm_traffic.py
# --queues 2, as symmetric RSS would split it (by 5-tuple: a subscriber's
# 10 flows land on both queues, so about half of its packets arrive on the
# worker that does not own its pipes and cross a hand-off ring), and once
# more by owner (every packet on its pipe's owner: no hand-off). With 2
# workers the main lcore (the first of -l, CTRL_LCORE) is worker 0; its
# control duties run inside its loop every 100 us. testpmd gets the same
# cores: 1 forwarding lcore on FWD_LCORE (main lcore on CTRL_LCORE, as in
# passthrough), then 2 forwarding lcores on CTRL_LCORE and FWD_LCORE with
# its main lcore sharing CTRL_LCORE (it sleeps: --stats-period).
start_testpmd_2c() {
	local label=$1; shift
	new_prefix
	eal_common "$APP_PREFIX"
	launch "$label" "$TESTPMD" "${EAL[@]}" \
		--lcores "0@$CTRL_LCORE,1@$CTRL_LCORE,2@$FWD_LCORE" --main-lcore 0 -- \
		--nb-cores=2 --rxq=2 --txq=2 --burst="$BURST" \
		--total-num-mbufs="$MBUFS" --mbcache="$MBUF_CACHE" \
		--no-mlockall --stats-period 86400 "$@"
	APP_KIND=testpmd
}
start_pt_sluice_1w() { VDEVS=(); SLUICE_LCORES=$FWD_LCORE; start_sluice_passthrough "$1"; }
start_pt_sluice_2w() { VDEVS=(); SLUICE_LCORES=$CTRL_LCORE,$FWD_LCORE; start_sluice_passthrough "$1"; }
start_pt_testpmd_1c() { VDEVS=(); start_testpmd "$1" --forward-mode=io; }
start_pt_testpmd_2c() { VDEVS=(); start_testpmd_2c "$1" --forward-mode=io; }
start_aqm_sluice_1w() {
	VDEVS=("net_null0,no-rx=1" "net_pcap1,rx_pcap=$AQM_DIR/down.pcap,infinite_rx=1")
	SLUICE_LCORES=$FWD_LCORE
	start_sluice "$1" "$AQM_DIR/sluice-aqm.ini"
}
aqm_2w() { # label split
	VDEVS=("net_null0,no-rx=1" "net_pcap1,rx_pcap=$AQM_DIR/$2/down-q0.pcap,rx_pcap=$AQM_DIR/$2/down-q1.pcap,infinite_rx=1")
	SLUICE_LCORES=$CTRL_LCORE,$FWD_LCORE
	start_sluice "$1" "$AQM_DIR/sluice-aqm.ini"
}
start_aqm_sluice_2w() { aqm_2w "$1" rss; }
start_aqm_sluice_2w_owner() { aqm_2w "$1" owner; }
# The traffic split as a NIC steering by subscriber splits it, and sluice
# told so ([sluice] rss = subscriber): it gives each subscriber's pipes to
# the worker its packets reach.
start_aqm_sluice_2w_subscriber() {
	VDEVS=("net_null0,no-rx=1" "net_pcap1,rx_pcap=$AQM_DIR/subscriber/down-q0.pcap,rx_pcap=$AQM_DIR/subscriber/down-q1.pcap,infinite_rx=1")
	SLUICE_LCORES=$CTRL_LCORE,$FWD_LCORE
	start_sluice "$1" "$AQM_DIR/sluice-aqm-steer.ini"
}

mode_scale() {
	local by
	mode_aqm # its traffic, configuration and pool size
	CONTENDERS=(pt_sluice_1w pt_sluice_2w pt_testpmd_1c pt_testpmd_2c
		    aqm_sluice_1w aqm_sluice_2w aqm_sluice_2w_owner
		    aqm_sluice_2w_subscriber)
	EXTRA_RATIOS=(scale_testpmd_2v1 pt_testpmd_2c pt_testpmd_1c
		      passthrough_vs_testpmd_1w pt_sluice_1w pt_testpmd_1c
		      passthrough_vs_testpmd_2w pt_sluice_2w pt_testpmd_2c
		      scale_aqm_owner_2v1 aqm_sluice_2w_owner aqm_sluice_1w
		      aqm_handoff_vs_owner aqm_sluice_2w aqm_sluice_2w_owner
		      scale_aqm_subscriber_2v1 aqm_sluice_2w_subscriber aqm_sluice_1w
		      scale_passthrough_2v1 pt_sluice_2w pt_sluice_1w)
	RATIO_NAME=scale_aqm_2v1
	RATIO_NUM=aqm_sluice_2w
	RATIO_DEN=aqm_sluice_1w
	REPORT_CYCLES=0
	sed 's/^\[sluice\]$/[sluice]\nrss = subscriber/' "$AQM_DIR/sluice-aqm.ini" \
		>"$AQM_DIR/sluice-aqm-steer.ini"
	for by in rss owner subscriber; do
		"$PY" "$HERE/aqm_traffic.py" "$AQM_DIR/$by" --flows "$AQM_FLOWS" \
			--subscribers "$AQM_SUBS" --rate "$AQM_RATE" --size "$AQM_SIZE" \
			--queues 2 --by "$by" >/dev/null || die "cannot write the aqm traffic split by $by"
	done
	POST_ROUNDS=scale_handoffs
	TRAFFIC_DESC="passthrough: net_null0/1, 1 or 2 queues each; aqm: $AQM_FLOWS UDP flows to $AQM_SUBS subscribers ($AQM_SIZE B) replayed by net_pcap1 (1 queue, or 2 split by symmetric RSS, by pipe owner, or by subscriber as [sluice] rss = subscriber steers) into net_null0 (no rx); $MBUFS mbufs; 1 worker on lcore $FWD_LCORE, 2 workers on lcores $CTRL_LCORE,$FWD_LCORE (main lcore = worker 0 on $CTRL_LCORE)"
}

# What share of the aqm traffic crossed a hand-off ring with 2 workers:
# the exit reports' "aqm dir=down ... handoffs=" against "totals rx=".
scale_handoffs() {
	local c f
	for c in aqm_sluice_2w aqm_sluice_2w_owner aqm_sluice_2w_subscriber; do
		cat "$LOGDIR"/*-"$c".log 2>/dev/null | "$PY" -c '
import re, sys
ho = rx = drops = 0
for line in sys.stdin:
    m = re.search(r"^aqm dir=down .*\bhandoffs=(\d+) .*\bhandoff_drops=(\d+)", line)
    if m:
        ho += int(m.group(1)); drops += int(m.group(2))
    m = re.match(r"^totals rx=(\d+)", line)
    if m:
        rx += int(m.group(1))
if rx:
    print("handoff %-22s %5.1f%% of the packets received were for the other worker\x27s pipes: %.1f%% crossed a hand-off ring, %.1f%% were dropped at a full one (handoffs %d, handoff_drops %d, rx %d)"
          % (sys.argv[1], 100.0 * (ho + drops) / rx, 100.0 * ho / rx, 100.0 * drops / rx, ho, drops, rx))
else:
    print("handoff %-22s no exit report" % sys.argv[1])
' "$c"
	done
}
POST_ROUNDS=""

# Other busy processes share the lcores and skew both contenders; say so.
busy_others() {
	ps -eo pid=,pcpu=,comm= --sort=-pcpu 2>/dev/null |
		awk -v me=$$ '$1 != me && $2 >= 20 { printf "%s%s(%s%%)", sep, $3, $2; sep=" " }'
}

# proxy: real TCP through namespaces, not pps on vdevs; its own file.
mode_proxy() {
	# shellcheck source=bench_proxy.sh
	. "$HERE/bench_proxy.sh"
	if [ "$INSTR" = 1 ]; then
		proxy_instructions
	else
		proxy_main
	fi
	exit 0
}

# ------------------------------------------------------ instruction counts
# cg_total FILE: the instructions a callgrind output file counted.
cg_total() { sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$1" | tail -n 1; }

# cg_misses FILE: "D1 LL", the data misses (reads and writes) a callgrind
# file with --cache-sim counted in each simulated level.
cg_misses() {
	"$PY" - "$1" <<'PYEOF'
import sys
ev, tot = [], []
for line in open(sys.argv[1]):
    if line.startswith("events:"):
        ev = line.split()[1:]
    elif line.startswith("totals:"):
        tot = [int(x) for x in line.split()[1:]]
v = dict(zip(ev, tot))
print(v.get("D1mr", 0) + v.get("D1mw", 0), v.get("DLmr", 0) + v.get("DLmw", 0))
PYEOF
}

# cg_top FILE PACKETS CONTENDER [UNIT [IDLE_FILE SCALE]]: the INSTR_TOP
# functions with the most instructions of their own, per packet (or
# UNIT), each less SCALE times its count in IDLE_FILE if given:
# perf/cg_top.py.
cg_top() {
	[ "$INSTR_TOP" -gt 0 ] 2>/dev/null || return 0
	command -v callgrind_annotate >/dev/null || return 0
	"$PY" "$HERE/cg_top.py" "$1" "$2" "$3" "${4:-packet}" "$INSTR_TOP" "${@:5:2}"
}

# cg_top_net FILE IDLE_FILE LOOPS IDLE_LOOPS SEGMENTS NAME: cg_top per
# segment, each function less what the transfer's loops would have cost
# it idle (its share of IDLE_FILE, scaled by LOOPS / IDLE_LOOPS): under
# callgrind most of a transfer's loops find no frame, and the plain list
# would put the polling first. The lines then add up to the
# "instructions ... per segment" figure, which is net of the same loops.
cg_top_net() {
	cg_top "$1" "$5" "$6" segment "$2" \
		"$(awk -v l="$3" -v i="$4" 'BEGIN { printf "%.9f", (i > 0 ? l / i : 0) }')"
}

# instr_one CONTENDER: run it under callgrind for INSTR_SECS seconds of
# forwarding and print its instructions per packet sent: the
# instructions counted / the packets its exit report says it sent over
# the whole run (both counted from its first to its last packet).
# cg_calls FILE FUNCTION: how many calls of FUNCTION (a name prefix) the
# callgrind file FILE counted.
cg_calls() {
	"$PY" - "$1" "$2" <<'PYEOF'
import re, sys
ids, n, cur = set(), 0, None
for line in open(sys.argv[1]):
    # A name is given once, at the first fn= or cfn= of its id.
    m = re.match(r"^(c?)fn=\((\d+)\)(?: (\S+))?", line)
    if m:
        if m.group(3) and m.group(3).startswith(sys.argv[2]):
            ids.add(m.group(2))
        cur = m.group(2) if m.group(1) else None
        continue
    m = re.match(r"^calls=(\d+)", line)
    if m and cur in ids:
        n += int(m.group(1))
print(n)
PYEOF
}

# With INSTR_WINDOW=1 (a mode sets it; sluice contenders only) the
# counts start once forwarding runs: callgrind_control -z zeroes them,
# and the packets are the calls of the parser (pkt_parse_full, once per
# frame received; nothing is dropped in these modes) counted after it.
# What the worker does once at start (applying a table of 1,000
# subscribers costs about 21 M instructions) is then not spread over the
# packets of a run that the load made short.
INSTR_WINDOW=0
instr_one() {
	local c=$1 pkts ir f t cgf d1 ll
	start_forwarding "$c" "$c-callgrind"
	if [ "$INSTR_WINDOW" = 1 ] && [ "$APP_KIND" = sluice ]; then
		callgrind_control -z "$APP_PID" >/dev/null 2>&1 || fail_run "$c: callgrind_control -z failed"
	fi
	sleep "$INSTR_SECS"
	stop_run "$c"
	case "$APP_KIND" in
	sluice) pkts=$(sed -n 's/^totals rx=[0-9]* tx=\([0-9]*\).*/\1/p' "$APP_LOG" | tail -n 1)
		[ "$INSTR_WINDOW" = 1 ] && pkts=$(cg_calls "$APP_CG" pkt_parse_full)
		ir=$(cg_total "$APP_CG"); cgf=$APP_CG ;;
	sched_fwd) pkts=$(sed -n 's/^sched_fwd: rx=[0-9]* tx=\([0-9]*\).*/\1/p' "$APP_LOG" | tail -n 1)
		ir=$(cg_total "$APP_CG"); cgf=$APP_CG ;;
	testpmd) pkts=$(sed -n 's/^ *TX-packets: *\([0-9]*\).*/\1/p' "$APP_LOG" | tail -n 1)
		# Thread 1 is the main lcore (start-up, stats); the forwarding
		# lcore is the busiest of the others.
		ir=0
		for f in "$APP_CG"-[0-9]*; do
			[ "${f##*-}" = 01 ] && continue
			t=$(cg_total "$f")
			[ "${t:-0}" -gt "$ir" ] && { ir=$t; cgf=$f; }
		done ;;
	esac
	[ -n "$pkts" ] && [ "$pkts" -gt 0 ] && [ -n "$ir" ] && [ "$ir" -gt 0 ] ||
		die "$c: no packet or instruction count under callgrind (log: $APP_LOG)"
	IPP[$c]=$("$PY" "$HERE/stats.py" ratio "$ir" "$pkts" 1)
	printf 'instructions %-22s %8s per packet  (%d instructions over %d packets)\n' \
		"$c" "${IPP[$c]}" "$ir" "$pkts"
	if [ "$CACHE" = 1 ]; then
		read -r d1 ll < <(cg_misses "$cgf")
		printf 'misses %-28s D1 %s LL %s per packet  (simulated: %d and %d over %d packets)\n' \
			"$c" "$("$PY" "$HERE/stats.py" ratio "$d1" "$pkts" 2)" \
			"$("$PY" "$HERE/stats.py" ratio "$ll" "$pkts" 2)" "$d1" "$ll" "$pkts"
	fi
	[ "$APP_KIND" = sluice ] && cg_top "$APP_CG" "$pkts" "$c"
	return 0
}

instr_main() {
	local c i
	command -v "$VALGRIND" >/dev/null || die "no $VALGRIND (apt-get install valgrind)"
	declare -gA IPP=()
	echo "bench: mode $MODE under callgrind, $INSTR_SECS s of forwarding per contender, burst $BURST"
	[ "$CACHE" = 1 ] && echo "bench: caches simulated (bytes,ways,line): D1 $CACHE_D1, LL $CACHE_LL"
	echo "bench: ${TRAFFIC_DESC:-net_null0/1$NULL_ARGS}"
	echo "bench: counted: sluice's worker_main, sched_fwd's forward_loop, testpmd's forwarding thread; per packet sent"
	for c in "${CONTENDERS[@]}"; do instr_one "$c"; done
	[ "$KEEP_LOGS" = 1 ] && echo "bench: logs and callgrind files in $LOGDIR"
	# Instructions are a cost, so the ratio is den / num: like pps.
	for ((i = 0; i + 2 < ${#EXTRA_RATIOS[@]}; i += 3)); do
		echo "iratio ${EXTRA_RATIOS[$i]} $("$PY" "$HERE/stats.py" ratio "${IPP[${EXTRA_RATIOS[$((i + 2))]}]}" "${IPP[${EXTRA_RATIOS[$((i + 1))]}]}")"
	done
	echo "iratio $RATIO_NAME $("$PY" "$HERE/stats.py" ratio "${IPP[$RATIO_DEN]}" "${IPP[$RATIO_NUM]}")"
}

# mptcp: kernel MPTCP over two paths through namespaces; its own file.
mode_mptcp() {
	# shellcheck source=bench_mptcp.sh
	. "$HERE/bench_mptcp.sh"
	if [ "$INSTR" = 1 ]; then
		mptcp_instructions
	else
		mptcp_main
	fi
	exit 0
}

case "$MODE" in
passthrough) mode_passthrough ;;
tcpopt) mode_tcpopt ;;
aqm) mode_aqm ;;
aqm-prtt) mode_aqm_prtt ;;
aqm-rwnd) mode_aqm_rwnd ;;
scale) mode_scale ;;
proxy) mode_proxy ;;
mptcp) mode_mptcp ;;
*) misuse "unknown mode '$MODE'" ;;
esac
if [[ " ${CONTENDERS[*]} " == *" testpmd"* ]]; then
	command -v "$TESTPMD" >/dev/null || die "no $TESTPMD (apt-get install dpdk, or use --testpmd PATH)"
fi

if [ "$INSTR" = 1 ]; then
	# Under valgrind a start takes tens of seconds, and so can a stop.
	[ -n "$START_TIMEOUT_SET" ] || START_TIMEOUT=300
	export BENCH_TELEMETRY_TIMEOUT=${BENCH_TELEMETRY_TIMEOUT:-20}
	STOP_TRIES=1200
	[ -z "$QUICK" ] || INSTR_SECS=${BENCH_INSTR_SECS:-1}
	instr_main
	exit 0
fi

# ------------------------------------------------------------------- run
echo "bench: mode $MODE, $ROUNDS round(s), ${WARMUP} s warm-up + ${DURATION} s window, burst $BURST"
echo "bench: forwarding lcore $FWD_LCORE for everyone; testpmd's main lcore $CTRL_LCORE; EAL --no-huge -m $MEM_MB --no-pci --no-shconf, ${TRAFFIC_DESC:-net_null0/1$NULL_ARGS}"
echo "bench: load average $(cut -d' ' -f1-3 /proc/loadavg)"
others=$(busy_others)
[ -n "$others" ] && echo "bench: WARNING: other busy processes may skew the figures: $others"
for c in "${CONTENDERS[@]}"; do eval "RESULTS_$c=()"; done
for ((r = 1; r <= ROUNDS; r++)); do
	order=("${CONTENDERS[@]}")
	if [ "$ORDER" = abba ] && [ $((r % 2)) = 0 ]; then
		order=()
		for ((i = ${#CONTENDERS[@]} - 1; i >= 0; i--)); do order+=("${CONTENDERS[$i]}"); done
	fi
	for c in "${order[@]}"; do run_one "$c" "$r"; done
done

declare -A MEDIAN=()
for c in "${CONTENDERS[@]}"; do
	eval "vals=(\"\${RESULTS_$c[@]}\")"
	MEDIAN[$c]=$("$PY" "$HERE/stats.py" median "${vals[@]}")
	spread=$("$PY" "$HERE/stats.py" spread "${vals[@]}")
	best=$(printf '%s\n' "${vals[@]}" | sort -n | tail -n 1)
	printf 'median %-22s %12d pps  (%d runs, best %d, spread %s%%)\n' \
		"$c" "${MEDIAN[$c]}" "${#vals[@]}" "$best" "$spread"
done
# Cycles per packet = TSC rate / median pps: every contender busy-polls
# its one forwarding lcore all the time, so all of that lcore's cycles in
# the window went into the packets counted.
if [ "$REPORT_CYCLES" = 1 ]; then
	if [ -z "$CPU_HZ" ]; then
		CPU_HZ=$(awk -F: -v cpu="$FWD_LCORE" '/^processor/ { p = $2 + 0 }
			/^cpu MHz/ && p == cpu { printf "%.0f", $2 * 1e6; exit }' /proc/cpuinfo)
	fi
	if [[ "$CPU_HZ" =~ ^[1-9][0-9]*$ ]]; then
		for c in "${CONTENDERS[@]}"; do
			cyc=$("$PY" "$HERE/stats.py" ratio "$CPU_HZ" "${MEDIAN[$c]}" 0)
			note=""
			if [ -n "$CYCLES_BASE" ] && [ "$c" != "$CYCLES_BASE" ]; then
				base=$("$PY" "$HERE/stats.py" ratio "$CPU_HZ" "${MEDIAN[$CYCLES_BASE]}" 0)
				note=$(printf '  (%+d vs %s)' "$((cyc - base))" "$CYCLES_BASE")
			fi
			printf 'cycles %-22s %8d per packet%s\n' "$c" "$cyc" "$note"
		done
		echo "bench: cycles/packet = $CPU_HZ Hz (TSC) / median pps"
	else
		echo "bench: CPU frequency unknown (set BENCH_CPU_HZ): no cycles/packet"
	fi
fi
# stage_account CONTENDER STAGE BASELINE: run CONTENDER once more with
# [sluice] stage_cycles = on (its start function must honour STAGE_TIMING)
# and print the cycles per packet spent in STAGE over the window, and the
# ratio they imply against BASELINE's cycles per packet (TSC rate / median
# pps): base / (base + stage). It leaves out what the stage costs outside
# its calls, and includes the TSC reads (about 1 cycle per packet), so it is
# an estimate; but it does not depend on the machine's drift between runs.
# stage_cycles times each stage as a pass of its own: a first stage that
# parses in one pass with the worker (stage_ops.parse_burst, tcpopt) does
# not, so its line describes that separate pass, not the measured one.
stage_account() {
	local c=$1 stage=$2 base=$3 a b r
	local -a vals=()
	STAGE_TIMING=1
	for ((r = 1; r <= STAGE_RUNS; r++)); do
		start_forwarding "$c" "$c-stage_cycles"
		sleep "$WARMUP"
		a=$("$PY" "$HERE/telemetry.py" "$APP_SOCK" --stage "$stage") || fail_run "$c: no /sluice/stages"
		sleep "$DURATION"
		b=$("$PY" "$HERE/telemetry.py" "$APP_SOCK" --stage "$stage") || fail_run "$c: no /sluice/stages"
		stop_run "$c"
		vals+=("$a $b")
	done
	STAGE_TIMING=0
	"$PY" - "$c" "$stage" "$base" "${MEDIAN[$base]}" "${vals[@]}" <<'PYEOF'
import statistics, sys
c, stage, base, base_pps = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
per, hz = [], 0
for v in sys.argv[5:]:
    a0, a1, a2, b0, b1, b2 = (int(x) for x in v.split())
    if b1 > a1:
        per.append((b0 - a0) / (b1 - a1))
    hz = b2
if not per or base_pps <= 0:
    print("stage %s %s: no packets in the window" % (stage, c))
    sys.exit(0)
cyc = statistics.median(per)
base_cyc = hz / base_pps
print("stage %s %s %.2f cycles/packet in the stage as a pass of its own (median of %d runs: %s); "
      "%s %.1f cycles/packet (TSC / median pps); estimated ratio %.3f "
      "(%.3f with the least run)"
      % (stage, c, cyc, len(per), " ".join("%.2f" % p for p in per), base,
         base_cyc, base_cyc / (base_cyc + cyc),
         base_cyc / (base_cyc + min(per))))
PYEOF
}
[ -n "$POST_ROUNDS" ] && "$POST_ROUNDS"
for ((i = 0; i + 2 < ${#STAGE_ACCOUNT[@]}; i += 3)); do
	stage_account "${STAGE_ACCOUNT[$i]}" "${STAGE_ACCOUNT[$((i + 1))]}" "${STAGE_ACCOUNT[$((i + 2))]}"
done
# The same ratios round by round: each round runs every contender once,
# back to back, so a per-round ratio cancels slow drift of the machine.
# Their median, with a distribution-free interval of >= 95% coverage
# (order statistics; with few rounds it is [min, max] and the coverage
# printed is lower), says whether a target is inside the noise.
paired() {
	local name=$1 num=$2 den=$3 out
	eval "local -a A=(\"\${RESULTS_$num[@]}\") B=(\"\${RESULTS_$den[@]}\")"
	out=$("$PY" "$HERE/stats.py" paired "${#A[@]}" "${A[@]}" "${B[@]}") || return 0
	set -- $out
	printf 'paired %s median %s, %s%% interval %s..%s over %d rounds\n' \
		"$name" "$1" "$4" "$2" "$3" "${#A[@]}"
}
for ((i = 0; i + 2 < ${#EXTRA_RATIOS[@]}; i += 3)); do
	paired "${EXTRA_RATIOS[$i]}" "${EXTRA_RATIOS[$((i + 1))]}" "${EXTRA_RATIOS[$((i + 2))]}"
done
paired "$RATIO_NAME" "$RATIO_NUM" "$RATIO_DEN"
echo "bench: load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
[ "$KEEP_LOGS" = 1 ] && echo "bench: logs in $LOGDIR"
# The ratios are the last lines, the mode's main one last of all.
for ((i = 0; i + 2 < ${#EXTRA_RATIOS[@]}; i += 3)); do
	echo "ratio ${EXTRA_RATIOS[$i]} $("$PY" "$HERE/stats.py" ratio "${MEDIAN[${EXTRA_RATIOS[$((i + 1))]}]}" "${MEDIAN[${EXTRA_RATIOS[$((i + 2))]}]}")"
done
echo "ratio $RATIO_NAME $("$PY" "$HERE/stats.py" ratio "${MEDIAN[$RATIO_NUM]}" "${MEDIAN[$RATIO_DEN]}")"
