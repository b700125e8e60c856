# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# perf/bench_mptcp.sh: the mptcp mode of perf/bench.sh, which sources this
# file after parsing its options and calls mptcp_main. See perf/README.md,
# "mptcp".
#
# The Linux kernel's MPTCP client, on the two-path topology of
# tests/e2e/mptcp_lib.sh (4 ports as 2 pairs), downloads from an
# MPTCP-capable kernel server (tests/e2e/mptcp_peer.py). Two contenders,
# alternating in every round on the same namespaces and veths:
#   kernel  sluice as a plain bridge: kernel MPTCP end to end;
#   proxy   sluice terminating MPTCP (config/examples/mptcp-proxy.ini),
#           the server leg plain TCP. Only if this sluice knows
#           [proxy] mptcp; otherwise its figures are "unavailable".
# Each run measures, through that sluice:
#   aggregate  both paths shaped by TBF on the sluice-side veths toward the
#              client (qdisc_bypass=0), path 0 to 20 Mbit/s and path 1 to
#              30 Mbit/s: goodput of a MPTCP_SECS-second download (its
#              bytes / the time from connect() to the server's FIN);
#   failover   the same shaped download, with the client's eth0 (path 0,
#              the first subflow's) taken down a third of the way: the
#              longest time between two reads that returned data;
#   unshaped   no TBF: goodput of an MPTCP_BIG-byte download, and through
#              the bridge the same download over single-path TCP (eth0).
#
# Uses from perf/bench.sh: PY, HERE, ROOT, ROUNDS, DURATION, ORDER,
# CTRL_LCORE, FWD_LCORE, SLUICE, LOGDIR, KEEP_LOGS, ROUNDS_SET,
# DURATION_SET, QUICK, die, cleanup.

MPTCP_CONF=${BENCH_MPTCP_CONF:-$ROOT/config/examples/mptcp-proxy.ini}
MPTCP_RATE0=${BENCH_MPTCP_RATE0:-20}   # Mbit/s, path 0
MPTCP_RATE1=${BENCH_MPTCP_RATE1:-30}   # Mbit/s, path 1
MPTCP_BIG=${BENCH_MPTCP_BIG:-100000000}
MPTCP_ONLY=${BENCH_MPTCP_ONLY:-}       # "unshaped": skip aggregate and failover

mptcp_bench_cleanup() {
	e2e_cleanup
	cleanup
}

# mb_xfer NAME SIZE [mptcp_xfer client options]: one download, checked;
# sets MB_MBPS, MB_GAP, MB_SF and MB_SMP. A kernel download that fails
# ends the benchmark; a proxied one that fails (a stall, a corrupt
# stream) is reported and counts as "failed" in that round.
MB_PORT=7400
mb_xfer() {
	local name=$1 size=$2; shift 2
	MB_PORT=$((MB_PORT + 1))
	if ! mptcp_xfer down "$SRV4" "$size" "$MB_PORT" 120 "$@"; then
		[ "$MB_C" = proxy ] || die "$MB_C: $name download failed: $E2E_WHY"
		echo "bench: proxy: $name download failed: $E2E_WHY"
		MB_MBPS=failed MB_GAP=failed MB_SF=? MB_SMP=?
		return 0
	fi
	MB_MBPS=$("$PY" -c 'import sys; print("%.2f" % (int(sys.argv[1]) * 8 / float(sys.argv[2]) / 1e6))' \
		"$size" "$XFER_SECS")
	MB_GAP=$(mptcp_kv "$XFER_CLI" gap)
	MB_SF=$(mptcp_kv "$XFER_CLI" subflows)
	MB_SMP=$(mptcp_kv "$XFER_SRV" is_mptcp)
}

# mb_shaped CONTENDER ROUND: the shaped download and the failover; appends
# to MB_LINE.
mb_shaped() {
	local c=$1 r=$2 at shaped_bytes
	mptcp_shape "$SUB_IF" "${MPTCP_RATE0}mbit"
	mptcp_shape "$SUB1_IF" "${MPTCP_RATE1}mbit"
	shaped_bytes=$("$PY" -c 'import sys; print(int(float(sys.argv[1]) * (int(sys.argv[2]) + int(sys.argv[3])) * 1e6 / 8))' \
		"$MPTCP_SECS" "$MPTCP_RATE0" "$MPTCP_RATE1")
	mb_xfer aggregate "$shaped_bytes"
	eval "MB_${c}_agg+=(\"\$MB_MBPS\")"
	MB_LINE+=$(printf 'aggregate %6s Mbit/s (%s subflows, server is_mptcp=%s)' "$MB_MBPS" "$MB_SF" "$MB_SMP")
	at=$E2E_TMP/failover.$r.$c
	mptcp_on_file "$at" mptcp_path down 0
	mb_xfer failover "$shaped_bytes" --at $((shaped_bytes / 3)) "$at"
	mptcp_on_file_done
	mptcp_path up 0
	eval "MB_${c}_stall+=(\"\$MB_GAP\")"
	MB_LINE+=$(printf ' | failover stall %5s s (%6s Mbit/s) | ' "$MB_GAP" "$MB_MBPS")
	mptcp_unshape "$SUB_IF"
	mptcp_unshape "$SUB1_IF"
}

# mb_run CONTENDER ROUND: one sluice, the three measurements, one line.
mb_run() {
	local c=$1 r=$2 cfg="" tcp=""
	MB_C=$c MB_LINE=
	[ "$c" = proxy ] && cfg=$MPTCP_CONF
	e2e_start_sluice "$cfg" || die "$c: sluice did not start: $E2E_WHY"
	mptcp_warmup || die "$c: $E2E_WHY"
	if [ "$MPTCP_ONLY" = unshaped ]; then
		eval "MB_${c}_agg+=(skipped) MB_${c}_stall+=(skipped)"
	else
		mb_shaped "$c" "$r"
	fi
	mb_xfer unshaped "$MPTCP_BIG"
	eval "MB_${c}_big+=(\"\$MB_MBPS\")"
	# (The longest read stall shows a round held up by a data-level
	# retransmission: one RTO, 0.2 s or more.)
	MB_LINE+=$(printf 'unshaped %7s Mbit/s (%s subflows, longest stall %s s)' "$MB_MBPS" "$MB_SF" "$MB_GAP")
	if [ "$c" = kernel ]; then
		mb_xfer tcp "$MPTCP_BIG" --tcp
		MB_tcp_big+=("$MB_MBPS")
		tcp=$(printf ', single-path TCP %7s Mbit/s' "$MB_MBPS")
	fi
	e2e_stop_sluice || die "$c: $E2E_WHY"
	[ "$c" = proxy ] && MB_LINE+=" $(mb_proxy_counters)"
	printf 'round %d/%d %-6s %s%s\n' "$r" "$ROUNDS" "$c" "$MB_LINE" "$tcp"
}

# mb_proxy_counters: from the last sluice's exit report, what the MPTCP
# proxy did beyond sending each byte once (stale subflows, reinjection).
mb_proxy_counters() {
	local line k out="" v
	line=$(grep '^proxy connections_active=' "$SLUICE_LOG" | tail -1)
	for k in mptcp_subflows_stale mptcp_bytes_reinjected mptcp_window_blocked_reinjections \
		mptcp_subflows_penalised mptcp_data_level_retransmissions mptcp_data_level_rto_backoffs \
		mptcp_data_level_early_retransmissions; do
		v=$(e2e_field "$line" "$k")
		out+="${out:+ }$k=${v:-?}"
	done
	echo "[$out]"
}

# mb_median V...: the median; "failed" if any run failed (a target is
# about every transfer, not the ones that worked).
mb_median() {
	"$PY" -c 'import statistics, sys
v = sys.argv[1:]
print("failed" if "failed" in v else "skipped" if "skipped" in v else
      "%.3f" % statistics.median(float(x) for x in v))' "$@"
}
# mb_ratio A B: A / B, or "failed" ("skipped") if either is.
mb_ratio() {
	case "$1 $2" in
	*failed*) echo failed ;;
	*skipped*) echo skipped ;;
	*) "$PY" "$HERE/stats.py" ratio "$1" "$2" ;;
	esac
}

# mb_setup: namespaces, both pairs, MPTCP on both peers; sets
# MB_HAVE_PROXY (whether this sluice terminates MPTCP).
mb_setup() {
	local ns
	[ -x "$SLUICE" ] || die "no sluice binary at $SLUICE (build it, or use --sluice PATH)"
	[ "$(id -u)" = 0 ] || die "mptcp mode needs root (network namespaces, AF_PACKET)"

	E2E_ID=bmp$$
	E2E_LCORE=$FWD_LCORE
	E2E_LOAD_CPUS=$CTRL_LCORE
	E2E_PY=$PY
	# The shaped paths need the veths' qdiscs: no bypass.
	E2E_AFP_ARGS=${BENCH_MPTCP_AFP_ARGS:-framecnt=4096,qdisc_bypass=0}
	[ "$KEEP_LOGS" = 1 ] && E2E_KEEP=1
	TMPDIR=$LOGDIR
	# shellcheck source=../tests/e2e/mptcp_lib.sh
	. "$ROOT/tests/e2e/mptcp_lib.sh"
	e2e_require_tools tc nstat
	mptcp_setup
	trap mptcp_bench_cleanup EXIT
	trap 'echo "bench: interrupted" >&2; exit 130' INT
	trap 'echo "bench: terminated" >&2; exit 143' TERM
	for ns in "$NS_CLI" "$NS_SRV"; do
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.keep_addr_on_down=1 \
			net.ipv6.conf.eth0.keep_addr_on_down=1
	done
	MB_HAVE_PROXY=1
	if ! mptcp_proxy_supported; then
		MB_HAVE_PROXY=0
	elif [ ! -r "$MPTCP_CONF" ]; then
		die "no $MPTCP_CONF"
	fi
}

mptcp_main() {
	local r c have_proxy
	[ -n "$ROUNDS_SET" ] || ROUNDS=3
	if [ -n "$DURATION_SET" ]; then
		MPTCP_SECS=$DURATION
	elif [ -n "$QUICK" ]; then
		MPTCP_SECS=3
	else
		MPTCP_SECS=6
	fi
	[ -n "$QUICK" ] && MPTCP_BIG=${BENCH_MPTCP_BIG:-30000000}
	mb_setup
	have_proxy=$MB_HAVE_PROXY
	local contenders=(kernel proxy)
	[ "$have_proxy" = 1 ] || contenders=(kernel)

	echo "bench: mode mptcp, $ROUNDS round(s) of ${contenders[*]}; downloads from an MPTCP-capable kernel server to the kernel's MPTCP client over two paths"
	echo "bench: sluice on lcore $E2E_LCORE (4 x net_af_packet, $E2E_AFP_ARGS), peers on CPU(s) ${E2E_LOAD_CPUS:-any}; proxy config ${MPTCP_CONF#"$ROOT"/}"
	if [ "$MPTCP_ONLY" = unshaped ]; then
		echo "bench: unshaped only (BENCH_MPTCP_ONLY): $MPTCP_BIG bytes"
	else
		echo "bench: shaped: TBF ${MPTCP_RATE0} and ${MPTCP_RATE1} Mbit/s on the client-facing veths, ${MPTCP_SECS} s worth of bytes; failover: client eth0 down a third of the way; unshaped: $MPTCP_BIG bytes"
	fi
	[ "$have_proxy" = 1 ] || echo "bench: this sluice has no [proxy] mptcp key (MPTCP termination): proxy figures unavailable, kernel baseline only"
	echo "bench: load average $(cut -d' ' -f1-3 /proc/loadavg)"
	others=$(busy_others)
	[ -n "$others" ] && echo "bench: WARNING: other busy processes may skew the figures: $others"
	MB_tcp_big=()
	for c in kernel proxy; do
		for name in agg stall big; do eval "MB_${c}_${name}=()"; done
	done
	for ((r = 1; r <= ROUNDS; r++)); do
		local order=("${contenders[@]}")
		[ "$ORDER" = abba ] && [ $((r % 2)) = 0 ] && [ "$have_proxy" = 1 ] && order=(proxy kernel)
		for c in "${order[@]}"; do mb_run "$c" "$r"; done
	done

	declare -A M=()
	local sum name vals
	sum=$((MPTCP_RATE0 + MPTCP_RATE1))
	for c in "${contenders[@]}"; do
		for name in agg stall big; do
			eval "vals=(\"\${MB_${c}_${name}[@]}\")"
			M[${c}_$name]=$(mb_median "${vals[@]}")
		done
		printf 'median %-6s aggregate %s Mbit/s of %d, failover stall %s s, unshaped %s Mbit/s (%d runs)\n' \
			"$c" "${M[${c}_agg]}" "$sum" "${M[${c}_stall]}" "${M[${c}_big]}" "$ROUNDS"
	done
	M[tcp_big]=$(mb_median "${MB_tcp_big[@]}")
	printf 'median single-path TCP bridged %s Mbit/s (%d runs)\n' "${M[tcp_big]}" "$ROUNDS"
	echo "bench: load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
	[ "$KEEP_LOGS" = 1 ] && echo "bench: logs in $LOGDIR"
	local k_agg k_big p_agg=unavailable p_stall=unavailable p_big=unavailable
	k_agg=$(mb_ratio "${M[kernel_agg]}" "$sum")
	k_big=$("$PY" "$HERE/stats.py" ratio "${M[kernel_big]}" "${M[tcp_big]}")
	if [ "$have_proxy" = 1 ]; then
		p_agg=$(mb_ratio "${M[proxy_agg]}" "$sum")
		p_stall=${M[proxy_stall]}
		p_big=$(mb_ratio "${M[proxy_big]}" "${M[tcp_big]}")
	fi
	# The proxy's figure, then the kernel's end to end from the same run.
	echo "ratio mptcp_aggregate_vs_sum $p_agg kernel $k_agg"
	echo "result mptcp_failover_stall_s $p_stall kernel ${M[kernel_stall]}"
	echo "ratio mptcp_proxy_vs_bridge $p_big kernel $k_big"
}

# ------------------------------------------------------ instruction counts
# perf/bench.sh --instructions mptcp: one MPTCP download and one upload of
# MPTCP_INSTR_BYTES each over the two unshaped paths, through sluice as a
# bridge (kernel MPTCP end to end) and through sluice terminating MPTCP,
# each sluice under callgrind (worker_main only), as --instructions proxy
# does: a loop that finds no frame is measured in two idle seconds first
# and charged off every loop of a transfer; what is left is divided by
# the data segments the sender put on the wire (frames received on the
# sender's two ports: 1 and 3 for a download, 0 and 2 for an upload).
MPTCP_INSTR_BYTES=${BENCH_MPTCP_INSTR_BYTES:-20000000}

# mb_rx KEY PORT...: the sum of /ethdev/stats KEY (ipackets, opackets)
# over those ports, from telemetry.
mb_rx() {
	local key=$1 p j i sum=0
	shift
	for p in "$@"; do
		for i in 1 2 3 4 5 6; do
			j=$(e2e_tel "/ethdev/stats,$p" "$key" 2>/dev/null) && [ -n "$j" ] && break
			j=
			sleep 1
		done
		[ -n "$j" ] || return 1
		sum=$((sum + j))
	done
	echo "$sum"
}

# mb_instr_run CONTENDER: one sluice under callgrind, idle, download,
# upload; "instructions CONTENDER_DIR <v> per segment" lines and the top
# functions of each transfer. Sets MB_NET[c_dir] and MB_SEGS[c_dir].
mb_instr_run() {
	local c=$1 cfg="" wrapper idle_cg cg dir f0 f1 t0 t1 b0 b1 out ports rports
	[ "$c" = proxy ] && cfg=$MPTCP_CONF
	PX_CG=$LOGDIR/mptcp-$c.callgrind
	rm -f "$PX_CG" "$PX_CG".*
	wrapper=$LOGDIR/sluice-callgrind-mptcp-$c.sh
	printf '#!/bin/sh\nexec %q --tool=callgrind --fair-sched=yes --callgrind-out-file=%q --toggle-collect=worker_main %q "$@"\n' \
		"$VALGRIND" "$PX_CG" "$MB_SLUICE" >"$wrapper"
	chmod +x "$wrapper"
	SLUICE=$wrapper
	MB_C=$c
	e2e_start_sluice "$cfg" || die "$c: sluice did not start under callgrind: $E2E_WHY"
	mptcp_warmup || die "$c: $E2E_WHY"
	# Two idle seconds: the cost of a loop that finds no frame.
	callgrind_control -z "$SLUICE_PID" >/dev/null 2>&1 || die "callgrind_control -z $SLUICE_PID failed"
	sleep 2
	px_cg_dump
	idle_cg=$PX_CG_LAST
	for dir in down up; do
		ports="1 3" rports="0 2"
		[ "$dir" = up ] && ports="0 2" rports="1 3"
		# shellcheck disable=SC2086 # ports are words
		f0=$(mb_rx ipackets $ports) && t0=$(mb_rx opackets $rports) &&
			b0=$(mb_rx opackets $ports) || die "$c: no /ethdev/stats"
		callgrind_control -z "$SLUICE_PID" >/dev/null 2>&1 || die "callgrind_control -z $SLUICE_PID failed"
		MB_PORT=$((MB_PORT + 1))
		mptcp_xfer "$dir" "$SRV4" "$MPTCP_INSTR_BYTES" "$MB_PORT" "$MB_XFER_TIMEOUT" ||
			die "$c: $dir transfer failed: $E2E_WHY"
		px_cg_dump
		cg=$PX_CG_LAST
		# shellcheck disable=SC2086
		f1=$(mb_rx ipackets $ports) && t1=$(mb_rx opackets $rports) &&
			b1=$(mb_rx opackets $ports) || die "$c: no /ethdev/stats"
		out=$("$PY" - "${c}_$dir" "$(cg_total "$cg")" "$(px_cg_loops "$cg" 4)" \
			"$(cg_total "$idle_cg")" "$(px_cg_loops "$idle_cg" 4)" "$((f1 - f0))" \
			"$MPTCP_INSTR_BYTES" "$((t1 - t0))" "$XFER_SECS" "$(mptcp_kv "$XFER_CLI" subflows)" \
			"$(mptcp_kv "$XFER_SRV" is_mptcp)" "$((b1 - b0))" <<'PY'
import sys
c = sys.argv[1]
ir, loops, idle_ir, idle_loops, segs, nbytes, tx = (int(x) for x in sys.argv[2:9])
secs, sf, smp = sys.argv[9:12]
back = int(sys.argv[12])
per_loop = idle_ir / idle_loops if idle_loops else 0.0
net = ir - loops * per_loop
if segs <= 0:
    sys.exit("no segment received from the sender")
print("instructions %-22s %8.1f per segment  (%d instructions, less %d loops x %.0f (a loop without a frame) = %.1f%%, over %d segments received from the sender; %.2f frames sent toward the receiver and %.2f back toward the sender per segment; %d bytes in %s s under callgrind, %s subflows, server is_mptcp=%s; %.1f per segment with the loops)"
      % (c, net / segs, ir, loops, per_loop, 100.0 * loops * per_loop / ir if ir else 0,
         segs, tx / segs, back / segs, nbytes, secs, sf, smp, ir / segs))
print("%d %d" % (net, segs))
PY
) || die "$c: $out"
		MB_NET[${c}_$dir]=${out##*$'\n'}
		MB_SEGS[${c}_$dir]=${MB_NET[${c}_$dir]#* }
		MB_NET[${c}_$dir]=${MB_NET[${c}_$dir]% *}
		echo "${out%$'\n'*}"
		cg_top_net "$cg" "$idle_cg" "$(px_cg_loops "$cg" 4)" "$(px_cg_loops "$idle_cg" 4)" \
			"$((f1 - f0))" "${c}_$dir"
	done
	e2e_stop_sluice || die "$c: $E2E_WHY"
	SLUICE=$MB_SLUICE
	[ "$c" = proxy ] && echo "counters proxy $(mb_proxy_counters)"
	return 0
}

# mb_iratio NAME DIR...: kernel's instructions per segment over the
# proxy's, summed over the transfers DIR...
mb_iratio() {
	local name=$1 d kn=0 ks=0 pn=0 ps=0
	shift
	for d in "$@"; do
		kn=$((kn + MB_NET[kernel_$d])) ks=$((ks + MB_SEGS[kernel_$d]))
		pn=$((pn + MB_NET[proxy_$d])) ps=$((ps + MB_SEGS[proxy_$d]))
	done
	echo "iratio $name $("$PY" -c 'import sys
kn, ks, pn, ps = (float(x) for x in sys.argv[1:5])
print("%.4f" % ((kn / ks) / (pn / ps)))' "$kn" "$ks" "$pn" "$ps")"
}

mptcp_instructions() {
	local c
	command -v "$VALGRIND" >/dev/null || die "no $VALGRIND (apt-get install valgrind)"
	command -v callgrind_control >/dev/null || die "no callgrind_control (valgrind)"
	# px_cg_dump, px_cg_loops
	# shellcheck source=bench_proxy.sh
	. "$HERE/bench_proxy.sh"
	[ -z "$QUICK" ] || MPTCP_INSTR_BYTES=${BENCH_MPTCP_INSTR_BYTES:-2000000}
	# A transfer that stalls must not hold CI for long.
	MB_XFER_TIMEOUT=900
	[ -z "$QUICK" ] || MB_XFER_TIMEOUT=240
	MB_SLUICE=$SLUICE
	declare -gA MB_NET=() MB_SEGS=()
	# A start under callgrind takes far longer than the 20 s e2e allows.
	E2E_START_TRIES=3000
	E2E_STOP_TRIES=1200
	mb_setup
	[ "$MB_HAVE_PROXY" = 1 ] || die "this sluice has no [proxy] mptcp key: nothing to count"
	echo "bench: mode mptcp under callgrind: one MPTCP download and one upload of $MPTCP_INSTR_BYTES bytes over two unshaped paths through each contender"
	echo "bench: sluice on lcore $E2E_LCORE (4 x net_af_packet, $E2E_AFP_ARGS); proxy config ${MPTCP_CONF#"$ROOT"/}; counted: sluice's worker_main"
	for c in kernel proxy; do mb_instr_run "$c"; done
	[ "$KEEP_LOGS" = 1 ] && echo "bench: logs and callgrind files in $LOGDIR"
	mb_iratio mptcp_down_proxy_vs_bridge down
	mb_iratio mptcp_up_proxy_vs_bridge up
	mb_iratio mptcp_proxy_vs_bridge down up
}
