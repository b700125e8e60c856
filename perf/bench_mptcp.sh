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

# mb_run CONTENDER ROUND: one sluice, the three measurements, one line.
mb_run() {
	local c=$1 r=$2 cfg="" at shaped_bytes line tcp=""
	MB_C=$c
	[ "$c" = proxy ] && cfg=$MPTCP_CONF
	e2e_start_sluice "$cfg" || die "$c: sluice did not start: $E2E_WHY"
	mptcp_warmup || die "$c: $E2E_WHY"
	mptcp_shape "$SUB_IF" "${MPTCP_RATE0}mbit"
	mptcp_shape "$SUB1_IF" "${MPTCP_RATE1}mbit"
	shaped_bytes=$("$PY" -c 'import sys; print(int(float(sys.argv[1]) * (int(sys.argv[2]) + int(sys.argv[3])) * 1e6 / 8))' \
		"$MPTCP_SECS" "$MPTCP_RATE0" "$MPTCP_RATE1")
	mb_xfer aggregate "$shaped_bytes"
	eval "MB_${c}_agg+=(\"\$MB_MBPS\")"
	line=$(printf 'aggregate %6s Mbit/s (%s subflows, server is_mptcp=%s)' "$MB_MBPS" "$MB_SF" "$MB_SMP")
	at=$E2E_TMP/failover.$r.$c
	mptcp_on_file "$at" mptcp_path down 0
	mb_xfer failover "$shaped_bytes" --at $((shaped_bytes / 3)) "$at"
	mptcp_on_file_done
	mptcp_path up 0
	eval "MB_${c}_stall+=(\"\$MB_GAP\")"
	line+=$(printf ' | failover stall %5s s (%6s Mbit/s)' "$MB_GAP" "$MB_MBPS")
	mptcp_unshape "$SUB_IF"
	mptcp_unshape "$SUB1_IF"
	mb_xfer unshaped "$MPTCP_BIG"
	eval "MB_${c}_big+=(\"\$MB_MBPS\")"
	line+=$(printf ' | unshaped %7s Mbit/s' "$MB_MBPS")
	if [ "$c" = kernel ]; then
		mb_xfer tcp "$MPTCP_BIG" --tcp
		MB_tcp_big+=("$MB_MBPS")
		tcp=$(printf ', single-path TCP %7s Mbit/s' "$MB_MBPS")
	fi
	e2e_stop_sluice || die "$c: $E2E_WHY"
	printf 'round %d/%d %-6s %s%s\n' "$r" "$ROUNDS" "$c" "$line" "$tcp"
}

# mb_median V...: the median; "failed" if any run failed (a target is
# about every transfer, not the ones that worked).
mb_median() {
	"$PY" -c 'import statistics, sys
v = sys.argv[1:]
print("failed" if "failed" in v else "%.3f" % statistics.median(float(x) for x in v))' "$@"
}
# mb_ratio A B: A / B, or "failed" if either is.
mb_ratio() {
	case "$1 $2" in *failed*) echo failed ;; *) "$PY" "$HERE/stats.py" ratio "$1" "$2" ;; esac
}

mptcp_main() {
	local r c have_proxy=1
	[ -n "$ROUNDS_SET" ] || ROUNDS=3
	if [ -n "$DURATION_SET" ]; then
		MPTCP_SECS=$DURATION
	elif [ -n "$QUICK" ]; then
		MPTCP_SECS=3
	else
		MPTCP_SECS=6
	fi
	[ -n "$QUICK" ] && MPTCP_BIG=${BENCH_MPTCP_BIG:-30000000}
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
	local contenders=(kernel proxy)
	if ! mptcp_proxy_supported; then
		have_proxy=0
		contenders=(kernel)
	elif [ ! -r "$MPTCP_CONF" ]; then
		die "no $MPTCP_CONF"
	fi

	echo "bench: mode mptcp, $ROUNDS round(s) of ${contenders[*]}; downloads from an MPTCP-capable kernel server to the kernel's MPTCP client over two paths"
	echo "bench: sluice on lcore $E2E_LCORE (4 x net_af_packet, $E2E_AFP_ARGS), peers on CPU(s) ${E2E_LOAD_CPUS:-any}; proxy config ${MPTCP_CONF#"$ROOT"/}"
	echo "bench: shaped: TBF ${MPTCP_RATE0} and ${MPTCP_RATE1} Mbit/s on the client-facing veths, ${MPTCP_SECS} s worth of bytes; failover: client eth0 down a third of the way; unshaped: $MPTCP_BIG bytes"
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
	k_agg=$("$PY" "$HERE/stats.py" ratio "${M[kernel_agg]}" "$sum")
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
