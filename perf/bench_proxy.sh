# SPDX-License-Identifier: BSD-3-Clause
#
# perf/bench_proxy.sh: the proxy mode of perf/bench.sh, which sources this
# file after parsing its options and calls proxy_main. See perf/README.md,
# "proxy".
#
# Two contenders, alternating in every round, on the same namespaces and
# veths (tests/e2e/lib.sh): sluice as a plain bridge (no configuration)
# and sluice as a transparent TCP proxy (config/examples/proxy-all-tcp.ini;
# BENCH_PROXY_MAXCONN appends a max_connections).
# Each run measures, through that sluice:
#   - goodput: iperf3 for PROXY_SECS seconds, client to server and back
#     (-R), with 1 and with 4 streams (receiver's bytes / receiver's time);
#     and how busy sluice was meanwhile;
#   - connections per second: perf/proxy_load.py rate, PROXY_CONC
#     connections in flight, each connect + 64-byte request + 64-byte
#     reply + close, for PROXY_SECS seconds (or PX_RATE_MAX connections).
# After the rounds, one more proxy run holds PROXY_HOLD idle connections
# open and reads sluice's own accounting (telemetry /sluice/proxy,
# /sluice/totals, /eal/heap_info, /mempool/info) and the kernel's VmRSS.
#
# Uses from perf/bench.sh: PY, HERE, ROOT, ROUNDS, DURATION, ORDER,
# CTRL_LCORE, FWD_LCORE, SLUICE, LOGDIR, KEEP_LOGS, ROUNDS_SET,
# DURATION_SET, QUICK, die, cleanup.

# BENCH_PROXY_MPTCP=1: the short connections and the held ones are the
# client kernel's MPTCP (proxy_load.py --mptcp), and the proxy runs
# config/examples/mptcp-proxy.ini, which terminates them; through the
# bridge they fall back to TCP, as a phone's do with a plain server.
# iperf3's transfers stay plain TCP.
PROXY_MPTCP=${BENCH_PROXY_MPTCP:+--mptcp}
if [ -n "$PROXY_MPTCP" ]; then
	PROXY_CONF_BASE=${BENCH_PROXY_CONF:-$ROOT/config/examples/mptcp-proxy.ini}
else
	PROXY_CONF_BASE=${BENCH_PROXY_CONF:-$ROOT/config/examples/proxy-all-tcp.ini}
fi
PROXY_MAXCONN=${BENCH_PROXY_MAXCONN:-}
PROXY_CONC=${BENCH_PROXY_CONC:-16}
PROXY_HOLD=${BENCH_PROXY_HOLD:-1000}
# The MTU of the client's interface alone (empty: 1500), as for a phone
# behind a smaller MTU: its segments are then smaller than those the
# server leg may send (iperf3 -M would not do: iperf3 hands its MSS to
# the server as well).
PROXY_CLIENT_MTU=${BENCH_PROXY_CLIENT_MTU:-}
PROXY_LOAD_PORT=7100

proxy_cleanup() {
	e2e_cleanup
	cleanup
}

# px_tel COMMAND [KEY.PATH]: telemetry of the running sluice.
px_tel() { e2e_tel "$@"; }

# px_get JSON KEY...: those keys of a JSON object, space-separated.
px_get() {
	"$PY" -c 'import json, sys
d = json.loads(sys.argv[1])
print(" ".join(str(d[k]) for k in sys.argv[2:]))' "$@"
}

# px_cputimes: sluice's user and system time and the wall clock, all in
# clock ticks (/proc/PID/stat utime, stime; uptime). System time is the
# AF_PACKET syscalls plus the receiving namespace's kernel work that
# veth runs in the sender's context.
px_cputimes() {
	local hz
	hz=$(getconf CLK_TCK)
	awk -v hz="$hz" -v up="$(cut -d' ' -f1 /proc/uptime)" '{
		sub(/^.*\) /, ""); printf "%d %d %d\n", $12, $13, up * hz }' \
		"/proc/$SLUICE_PID/stat"
}

# The goodput cases: name, iperf3 client arguments.
PX_CASES=(up1 "" up4 "-P 4" down1 "-R" down4 "-R -P 4")

# px_run CONTENDER ROUND: one sluice, every measurement, one line.
px_run() {
	local c=$1 r=$2 cfg="" i name args line="" sum=0 n=0 before after out rate extra="" heap
	local w0 w1 cpu load t0 t1 gp0 gp1
	[ "$c" = proxy ] && cfg=$PROXY_CONF
	e2e_start_sluice "$cfg" || die "$c: sluice did not start: $E2E_WHY"
	e2e_ping 4 3 0.05 || die "$c: no ping through sluice: $E2E_WHY"
	heap=$(px_tel /eal/heap_info,0 Alloc_size 2>/dev/null || echo 0)
	eval "PX_${c}_heap=\$heap"
	# How loaded sluice was during the transfers: its thread's time on
	# the CPU, user and system, and frames received per loop that
	# received any (both ports: up to twice the burst).
	w0=$(px_tel /sluice/workers 0 2>/dev/null || echo '{}')
	t0=$(px_cputimes)
	[ "$c" = proxy ] && gp0=$(px_tel /sluice/proxy 2>/dev/null || echo '{}')
	e2e_cpu_mark
	for ((i = 0; i < ${#PX_CASES[@]}; i += 2)); do
		name=${PX_CASES[$i]} args=${PX_CASES[$((i + 1))]}
		# shellcheck disable=SC2086 # args are words
		e2e_iperf 4 $args || die "$c: iperf3 $name: $E2E_WHY"
		eval "PX_${c}_${name}+=(\"\$E2E_MBPS\")"
		# The iperf3 sender's retransmissions. Nothing on these paths
		# drops, so each one resent a segment that had arrived.
		[ "${E2E_RETRANS:--1}" -ge 0 ] 2>/dev/null &&
			eval "PX_${c}_${name}_rtx=\$(( \${PX_${c}_${name}_rtx:-0} + E2E_RETRANS ))"
		line+=$(printf ' %s %7.1f (%s rtx)' "$name" "$E2E_MBPS" "${E2E_RETRANS:-?}")
		sum=$("$PY" -c 'import sys; print(float(sys.argv[1]) + float(sys.argv[2]))' "$sum" "$E2E_MBPS")
		n=$((n + 1))
	done
	sum=$("$PY" "$HERE/stats.py" ratio "$sum" "$n" 1)
	cpu=$(e2e_cpu_pct)
	t1=$(px_cputimes)
	w1=$(px_tel /sluice/workers 0 2>/dev/null || echo '{}')
	load=$("$PY" - "$w0" "$w1" "$cpu" $t0 $t1 <<'PY'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
ut0, st0, w0, ut1, st1, w1 = (int(x) for x in sys.argv[4:10])
wall = max(w1 - w0, 1)
out = "sluice on CPU %s%%: user %.0f%% sys %.0f%%" % (
    sys.argv[3], 100.0 * (ut1 - ut0) / wall, 100.0 * (st1 - st0) / wall)
try:
    busy = b["busy_loops"] - a["busy_loops"]
    out += ", %.1f frames per busy loop" % ((b["rx"] - a["rx"]) / busy)
except (KeyError, ZeroDivisionError):
    pass
print(out)
PY
)
	eval "PX_${c}_goodput+=(\"\$sum\")"
	if [ "$c" = proxy ]; then
		# What the goodput cases cost in duplicates: D-SACKs the proxy
		# sent (segments the senders resent after they had arrived),
		# and the out-of-order ACKs it held to a burst's end instead;
		# and how many segments it read merged with the one before.
		gp1=$(px_tel /sluice/proxy 2>/dev/null || echo '{}')
		load+=$("$PY" - "$gp0" "$gp1" <<'PY'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
d = lambda k: b.get(k, 0) - a.get(k, 0)
print("; dsack_sent %d, ooo_acks_held_in_burst %d; segments_in %d, %d merged" % (
    d("tcp_dsack_sent"), d("tcp_ooo_acks_held_in_burst"), d("tcp_segments_in"),
    d("tcp_segments_coalesced_in_burst")))
PY
)
	fi
	before=$(px_tel /sluice/proxy 2>/dev/null || echo '{}')
	out=$E2E_TMP/rate-$c-$r.json
	e2e_run cli timeout --foreground $((${PROXY_SECS%.*} + 30)) "$PY" \
		"$HERE/proxy_load.py" rate "$SRV4" "$PROXY_LOAD_PORT" \
		--secs "$PROXY_SECS" --max "$PX_RATE_MAX" --conc "$PROXY_CONC" \
		${PROXY_MPTCP:+"$PROXY_MPTCP"} >"$out" 2>"$out.err" ||
		die "$c: proxy_load.py rate failed: $(tail -n 1 "$out.err")"
	after=$(px_tel /sluice/proxy 2>/dev/null || echo '{}')
	rate=$(px_get "$(cat "$out")" rate)
	eval "PX_${c}_rate+=(\"\$rate\")"
	if [ "$c" = proxy ]; then
		# How many of the connections the proxy really terminated: a
		# full table bridges SYNs instead, and a failed accept drops
		# the client's SYN until it comes again (both counted).
		extra=$("$PY" - "$before" "$after" "$(cat "$out")" <<'PY'
import json, sys
b, a, r = (json.loads(x) for x in sys.argv[1:4])
d = lambda k: a.get(k, 0) - b.get(k, 0)
bridged = d("syn_bridged_table_full") + d("syn_bridged_connect_failed")
print("; proxy opened %d, bridged %d (table full %d, connect failed %d), accept failed %d%s" % (
    d("connections_opened"), bridged,
    d("syn_bridged_table_full"), d("syn_bridged_connect_failed"), d("accept_failed"),
    " WARNING: not all proxied" if bridged or d("accept_failed") else ""))
PY
)
	fi
	e2e_stop_sluice || die "$c: $E2E_WHY"
	printf 'round %d/%d %-6s goodput Mbit/s:%s  mean %7.1f (%s) | conn/s %6.0f (%s in %s s, p50 %s ms, p99 %s ms, %s errors%s)\n' \
		"$r" "$ROUNDS" "$c" "$line" "$sum" "$load" "$rate" \
		$(px_get "$(cat "$out")" conns secs p50_ms p99_ms errors) "$extra"
}

# px_summary LABEL UNIT VALUES...: "median ..." line; sets PX_MEDIAN.
px_summary() {
	local label=$1 unit=$2; shift 2
	local spread best
	PX_MEDIAN=$("$PY" -c 'import statistics, sys
print("%.1f" % statistics.median(float(v) for v in sys.argv[1:]))' "$@")
	spread=$("$PY" "$HERE/stats.py" spread "$@")
	best=$(printf '%s\n' "$@" | sort -g | tail -n 1)
	printf 'median %-22s %9s %s  (%d runs, best %s, spread %s%%)\n' \
		"$label" "$PX_MEDIAN" "$unit" "$#" "$best" "$spread"
}

# Memory per connection: PROXY_HOLD idle connections held open through
# the proxy, sluice's accounting read before, during and after.
px_memory() {
	local out=$E2E_TMP/hold.out spid i a b c rss_a rss_b heap_a heap_b elt
	e2e_start_sluice "$PROXY_CONF" || die "memory: sluice did not start: $E2E_WHY"
	e2e_ping 4 3 0.05 || die "memory: no ping through sluice: $E2E_WHY"
	a=$(px_tel /sluice/totals) || die "memory: no /sluice/totals"
	heap_a=$(px_tel /eal/heap_info,0 Alloc_size)
	rss_a=$(awk '/^VmRSS/ { print $2 }' "/proc/$SLUICE_PID/status")
	cli timeout --foreground 120 "$PY" "$HERE/proxy_load.py" hold "$SRV4" \
		"$PROXY_LOAD_PORT" "$PROXY_HOLD" --secs 4 ${PROXY_MPTCP:+"$PROXY_MPTCP"} >"$out" 2>"$out.err" &
	spid=$!
	E2E_PIDS+=("$spid")
	for ((i = 0; i < 600; i++)); do
		grep -q '^held' "$out" && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	grep -q '^held' "$out" || die "memory: connections not held: $(tail -n 1 "$out.err")"
	sleep 1 # delayed ACKs and window updates settle
	b=$(px_tel /sluice/totals)
	c=$(px_tel /sluice/proxy)
	heap_b=$(px_tel /eal/heap_info,0 Alloc_size)
	rss_b=$(awk '/^VmRSS/ { print $2 }' "/proc/$SLUICE_PID/status")
	elt=$(px_tel /mempool/info,sluice_mbufs 2>/dev/null || echo '{}')
	wait "$spid" || die "memory: hold client failed: $(tail -n 1 "$out.err")"
	sleep 1
	local after
	after=$(px_tel /sluice/proxy)
	e2e_stop_sluice || die "memory: $E2E_WHY"
	"$PY" - "$a" "$b" "$c" "$after" "$heap_a" "$heap_b" "$rss_a" "$rss_b" \
		"$elt" "$(cat "$out")" "${PX_bridge_heap:-0}" "${PX_proxy_heap:-0}" \
		"$PX_MAXCONN" <<'PY'
import json, sys
a, b, c, after = (json.loads(x) for x in sys.argv[1:5])
heap_a, heap_b, rss_a, rss_b = (int(x) for x in sys.argv[5:9])
elt = json.loads(sys.argv[9])
held = sys.argv[10]
heap_bridge, heap_proxy, maxconn = (int(x) for x in sys.argv[11:14])
n = c["connections_active"]
legs = c["engine_connections"]
mbufs = (b["mempool_in_use"] - b["mempool_baseline"]) - (a["mempool_in_use"] - a["mempool_baseline"])
esz = elt.get("elt_size", 0) + elt.get("header_size", 0) + elt.get("trailer_size", 0)
print("memory client: %s; proxy connections_active %d, engine connections %d (%.2f per proxied connection)"
      % (held, n, legs, legs / n if n else 0))
if n:
    print("memory state in use %d bytes = %d engine connections x %d (tcp_conn_size) + %d pairs x %d: %.0f bytes per proxied connection (target <= 2048)"
          % (c["state_bytes_in_use"], legs, c["conn_state_bytes"], n, c["pair_state_bytes"],
             c["state_bytes_in_use"] / n))
    print("memory mbufs held %d: %.3f per connection = %.0f bytes per connection (mbuf element %d bytes)"
          % (mbufs, mbufs / n, mbufs * esz / n, esz))
    print("memory heap allocated while holding: %+d bytes (%+.1f per connection); VmRSS %+d kB (%+.0f bytes per connection)"
          % (heap_b - heap_a, (heap_b - heap_a) / n, rss_b - rss_a, (rss_b - rss_a) * 1024 / n))
if heap_proxy and heap_bridge and maxconn:
    print("memory reserved at start: proxy heap %d - bridge heap %d = %d bytes for max_connections %d: %.0f bytes per configured connection"
          % (heap_proxy, heap_bridge, heap_proxy - heap_bridge, maxconn, (heap_proxy - heap_bridge) / maxconn))
print("memory after close: connections_active %d, engine connections %d (TIME-WAIT), closed %d"
      % (after["connections_active"], after["engine_connections"], after["connections_closed"]))
PY
}

# px_setup: the configuration, the namespaces and the load server.
px_setup() {
	# Defaults of this mode where the user gave none: each round runs two
	# sluices and five measurements each, so fewer and longer than pps.
	[ -n "$ROUNDS_SET" ] || ROUNDS=5
	if [ -n "$DURATION_SET" ]; then
		PROXY_SECS=$DURATION
	elif [ -n "$QUICK" ]; then
		PROXY_SECS=1
	else
		PROXY_SECS=3
	fi
	[ -z "$QUICK" ] || PROXY_HOLD=${BENCH_PROXY_HOLD:-200}
	[ -x "$SLUICE" ] || die "no sluice binary at $SLUICE (build it, or use --sluice PATH)"
	[ -r "$PROXY_CONF_BASE" ] || die "no $PROXY_CONF_BASE"
	[ "$(id -u)" = 0 ] || die "proxy mode needs root (network namespaces, AF_PACKET)"
	# The example as it is; BENCH_PROXY_MAXCONN appends a table size.
	PROXY_CONF=$PROXY_CONF_BASE
	if [ -n "$PROXY_MAXCONN" ]; then
		PROXY_CONF=$LOGDIR/proxy.ini
		{ cat "$PROXY_CONF_BASE"; printf '\n# perf/bench.sh proxy: BENCH_PROXY_MAXCONN\nmax_connections = %s\n' "$PROXY_MAXCONN"; } >"$PROXY_CONF"
	fi
	PX_MAXCONN=$(sed -n 's/^[[:space:]]*max_connections[[:space:]]*=[[:space:]]*\([0-9]*\).*/\1/p' "$PROXY_CONF" | tail -n 1)
	PX_MAXCONN=${PX_MAXCONN:-1024} # config/proxy.ini's default
	# Optional cap on the connections of a conn/s run (0: none). Closed
	# connections leave TIME-WAITs in the engine, recycled oldest first
	# when it is full; a SYN bridged for want of room is reported.
	PX_RATE_MAX=${BENCH_PROXY_CONNS:-0}

	E2E_ID=bpx$$
	E2E_LCORE=$FWD_LCORE
	E2E_LOAD_CPUS=$CTRL_LCORE
	E2E_IPERF_SECS=$PROXY_SECS
	E2E_MIN_MBPS=0 # never judged here
	E2E_PY=$PY
	[ "$KEEP_LOGS" = 1 ] && E2E_KEEP=1
	TMPDIR=$LOGDIR
	# shellcheck source=../tests/e2e/lib.sh
	. "$ROOT/tests/e2e/lib.sh"
	e2e_require_tools
	e2e_setup
	if [ -n "$PROXY_CLIENT_MTU" ]; then
		ip -n "$NS_CLI" link set "$CLI_IF" mtu "$PROXY_CLIENT_MTU" ||
			die "cannot set the client's MTU to $PROXY_CLIENT_MTU"
	fi
	trap proxy_cleanup EXIT
	trap 'echo "bench: interrupted" >&2; exit 130' INT
	trap 'echo "bench: terminated" >&2; exit 143' TERM
	for ns in "$NS_CLI" "$NS_SRV"; do
		ip netns exec "$ns" sysctl -qw net.ipv4.tcp_congestion_control=cubic 2>/dev/null
		ip netns exec "$ns" sysctl -qw net.core.somaxconn=4096 net.ipv4.tcp_max_syn_backlog=4096
	done
	# Many short connections: the client closes first and keeps the
	# TIME-WAITs, so give it the whole port range and let it reuse them.
	ip netns exec "$NS_CLI" sysctl -qw net.ipv4.ip_local_port_range="1024 65535" net.ipv4.tcp_tw_reuse=1
	# A simple command, not the srv function: taskset and ip netns exec
	# exec the server, so $! is its own PID and the cleanup can stop it.
	$(_e2e_pin_words) ip netns exec "$NS_SRV" "$PY" "$HERE/proxy_load.py" server \
		"$PROXY_LOAD_PORT" </dev/null >"$E2E_TMP/load-server.log" 2>&1 &
	E2E_PIDS+=("$!")
	e2e_wait_listen "$PROXY_LOAD_PORT" || die "proxy_load.py server did not listen"
}

proxy_main() {
	local r c i name
	px_setup
	echo "bench: mode proxy, $ROUNDS round(s) of bridge and proxy, ${PROXY_SECS} s per measurement"
	echo "bench: sluice on lcore $E2E_LCORE (net_af_packet, $E2E_AFP_ARGS), clients and servers on CPU(s) ${E2E_LOAD_CPUS:-any}; proxy config ${PROXY_CONF_BASE#"$ROOT"/}, max_connections $PX_MAXCONN${PROXY_MAXCONN:+ (BENCH_PROXY_MAXCONN)}"
	local cap=""
	[ "$PX_RATE_MAX" != 0 ] && cap=", at most $PX_RATE_MAX connections"
	echo "bench: goodput = iperf3 receiver Mbit/s, up = client to server, down = -R, 1 and 4 streams; conn/s = proxy_load.py rate, $PROXY_CONC in flight, 64 B request and reply$cap${PROXY_MPTCP:+; the short and the held connections are MPTCP clients (BENCH_PROXY_MPTCP)}"
	echo "bench: load average $(cut -d' ' -f1-3 /proc/loadavg)"
	others=$(busy_others)
	[ -n "$others" ] && echo "bench: WARNING: other busy processes may skew the figures: $others"
	for c in bridge proxy; do
		for name in goodput rate up1 up4 down1 down4; do eval "PX_${c}_${name}=()"; done
	done
	for ((r = 1; r <= ROUNDS; r++)); do
		local order=(bridge proxy)
		[ "$ORDER" = abba ] && [ $((r % 2)) = 0 ] && order=(proxy bridge)
		for c in "${order[@]}"; do px_run "$c" "$r"; done
	done

	declare -A M=()
	for name in up1 up4 down1 down4 goodput rate; do
		for c in bridge proxy; do
			eval "vals=(\"\${PX_${c}_${name}[@]}\")"
			if [ "$name" = rate ]; then
				px_summary "${c}_conn_rate" "conn/s" "${vals[@]}"
			else
				px_summary "${c}_$name" "Mbit/s" "${vals[@]}"
			fi
			M[${c}_$name]=$PX_MEDIAN
		done
		[ "$name" = rate ] ||
			printf 'goodput %-6s proxy/bridge %s\n' "$name" \
				"$("$PY" "$HERE/stats.py" ratio "${M[proxy_$name]}" "${M[bridge_$name]}")"
	done
	local rb rp
	for name in up1 up4 down1 down4; do
		rb=PX_bridge_${name}_rtx rp=PX_proxy_${name}_rtx
		printf 'retransmits %-6s bridge %d proxy %d  (the iperf3 senders, over %d round(s))\n' \
			"$name" "${!rb:-0}" "${!rp:-0}" "$ROUNDS"
	done
	px_memory
	echo "bench: load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
	[ "$KEEP_LOGS" = 1 ] && echo "bench: logs in $LOGDIR"
	echo "ratio proxy_conn_rate_vs_bridge $("$PY" "$HERE/stats.py" ratio "${M[proxy_rate]}" "${M[bridge_rate]}")"
	echo "ratio proxy_vs_bridge $("$PY" "$HERE/stats.py" ratio "${M[proxy_goodput]}" "${M[bridge_goodput]}")"
}

# ------------------------------------------------------ instruction counts
# perf/bench.sh --instructions proxy: one iperf3 upload of PROXY_BYTES
# through each contender running under callgrind (sluice's worker_main
# only). sluice busy-polls, and under callgrind it is slow enough that
# a loop finds no frame more often than not. What a loop costs without a
# frame is measured in two idle seconds before the transfer, and every
# loop of the transfer is charged that much less: what is left is the work
# the segments made (parse, relay, ACKs both ways), not the polling. Per
# segment = per data segment the sender put on the wire (frames received
# on port 0), the ACKs and any retransmission included.
# BENCH_PROXY_DOWNLOAD=1: a download instead (iperf3 -R; the server
# sends, and its segments are those received on port 1). The issue's
# figure is the upload's; the download is the direction whose output
# passes are clocked by the client's ACKs, two or three segments each.
PROXY_BYTES=${BENCH_PROXY_BYTES:-40M}
PX_DOWN=${BENCH_PROXY_DOWNLOAD:-}
PX_SRC_PORT=0 PX_WHAT=upload
[ -z "$PX_DOWN" ] || PX_SRC_PORT=1 PX_WHAT=download

# px_cg_dump: have callgrind write what it counted since the last zero or
# dump into a new file; sets PX_CG_LAST to that file.
px_cg_dump() {
	local n
	callgrind_control -d "$SLUICE_PID" >/dev/null 2>&1 || die "callgrind_control -d $SLUICE_PID failed"
	n=$(ls "$PX_CG".* 2>/dev/null | sed 's/.*\.//' | sort -n | tail -n 1)
	PX_CG_LAST=$PX_CG.$n
	[ -n "$(cg_total "$PX_CG_LAST")" ] || die "no total in $PX_CG_LAST"
}

# px_cg_loops FILE [PORTS]: the worker's loops in a callgrind file: its
# calls of the function it calls most, the PMD's rx burst, once per rx
# queue (PORTS, 2 by default) per loop. Telemetry cannot say: under
# valgrind it answers late, and the loops go on meanwhile.
px_cg_loops() {
	"$PY" - "$1" "${2:-2}" <<'PY'
import re, sys
names, calls, cur, cfn = {}, {}, None, None
for line in open(sys.argv[1]):
    m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
    if m:
        kind, i, name = m.groups()
        if name:
            names[i] = name
        if kind == "fn":
            cur, cfn = names.get(i, ""), None
        else:
            cfn = names.get(i, "")
        continue
    m = re.match(r"^calls=(\d+)", line)
    if m and cur.startswith("worker_main") and cfn is not None:
        calls[cfn] = calls.get(cfn, 0) + int(m.group(1))
print(max(calls.values()) // int(sys.argv[2]) if calls else 0)
PY
}

# px_rx_sender: frames received from the sender, from telemetry: on port 0
# (the client's, the data segments of an upload), or on port 1 (the
# server's) for a download.
px_rx_sender() { px_stat "$PX_SRC_PORT" ipackets; }

# px_stat PORT KEY: /ethdev/stats,PORT KEY (ipackets, opackets).
px_stat() {
	local i j
	for i in 1 2 3 4 5; do
		j=$(px_tel "/ethdev/stats,$1" "$2" 2>/dev/null) && [ -n "$j" ] && { echo "$j"; return 0; }
		sleep 1
	done
	return 1
}

# px_tx: frames sluice sent on both ports (opackets of 0 and 1).
px_tx() {
	local a b
	a=$(px_stat 0 opackets) && b=$(px_stat 1 opackets) || return 1
	echo $((a + b))
}

px_instr_run() {
	local c=$1 cfg="" wrapper idle_cg cg f0 f1 t0 t1 out spid i port=5299
	[ "$c" = proxy ] && cfg=$PROXY_CONF
	PX_CG=$LOGDIR/$c.callgrind
	rm -f "$PX_CG" "$PX_CG".*
	wrapper=$LOGDIR/sluice-callgrind-$c.sh
	printf '#!/bin/sh\nexec %q --tool=callgrind --fair-sched=yes --callgrind-out-file=%q --toggle-collect=worker_main %q "$@"\n' \
		"$VALGRIND" "$PX_CG" "$PX_SLUICE" >"$wrapper"
	chmod +x "$wrapper"
	SLUICE=$wrapper
	e2e_start_sluice "$cfg" || die "$c: sluice did not start under callgrind: $E2E_WHY"
	# Under valgrind an echo may come back late: one answer is enough.
	for i in $(seq 1 10); do
		cli ping -4 -c 1 -W 3 "$SRV4" >/dev/null 2>&1 && break
		[ "$i" = 10 ] && die "$c: no ping through sluice under callgrind"
	done
	# Two idle seconds: the cost of a loop that finds no frame.
	callgrind_control -z "$SLUICE_PID" >/dev/null 2>&1 || die "callgrind_control -z $SLUICE_PID failed"
	sleep 2
	px_cg_dump
	idle_cg=$PX_CG_LAST
	# The transfer.
	srv timeout --foreground $((PX_IPERF_TIMEOUT + 30)) iperf3 -s -1 -B "$SRV4" -p "$port" \
		</dev/null >"$E2E_TMP/iperf-server-cg.log" 2>&1 &
	spid=$!
	E2E_PIDS+=("$spid")
	e2e_wait_listen "$port" || die "$c: iperf3 server did not listen"
	f0=$(px_rx_sender) || die "$c: no /ethdev/stats,$PX_SRC_PORT"
	t0=$(px_tx) || die "$c: no /ethdev/stats"
	# The proxy's engine: how many of the segments it received it
	# read merged with the one before (lib/tcp/README.md, "Runs"),
	# which moves the count from run to run.
	g0='{}'
	[ "$c" = proxy ] && g0=$(px_tel /sluice/proxy 2>/dev/null || echo '{}')
	callgrind_control -z "$SLUICE_PID" >/dev/null 2>&1 || die "callgrind_control -z $SLUICE_PID failed"
	e2e_run cli timeout --foreground "$PX_IPERF_TIMEOUT" iperf3 -c "$SRV4" -p "$port" -J \
		${PX_DOWN:+-R} -n "$PROXY_BYTES" --connect-timeout 20000 </dev/null \
		>"$LOGDIR/iperf-cg-$c.json" 2>"$LOGDIR/iperf-cg-$c.err" ||
		die "$c: iperf3 failed: $(tail -n 2 "$LOGDIR/iperf-cg-$c.err")"
	px_cg_dump
	cg=$PX_CG_LAST
	# The server (-1) ends with the test; stop it if it did not.
	for i in $(seq 1 50); do
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	_e2e_kill_child "$spid" TERM
	wait "$spid" 2>/dev/null
	f1=$(px_rx_sender) || die "$c: no /ethdev/stats,$PX_SRC_PORT"
	t1=$(px_tx) || die "$c: no /ethdev/stats"
	g1='{}'
	[ "$c" = proxy ] && g1=$(px_tel /sluice/proxy 2>/dev/null || echo '{}')
	out=$("$PY" -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(j.get("error", "") or ("" if "sum_sent" in j.get("end", {}) else "no result"))' "$LOGDIR/iperf-cg-$c.json" 2>&1)
	[ -z "$out" ] || die "$c: iperf3: $out"
	e2e_stop_sluice || die "$c: $E2E_WHY"
	SLUICE=$PX_SLUICE
	out=$("$PY" - "$c" "$(cg_total "$cg")" "$(px_cg_loops "$cg")" \
		"$(cg_total "$idle_cg")" "$(px_cg_loops "$idle_cg")" "$((f1 - f0))" \
		"$LOGDIR/iperf-cg-$c.json" "$((t1 - t0))" <<'PY'
import json, sys
c = sys.argv[1]
sent = int(sys.argv[8])
ir, loops, idle_ir, idle_loops, segs = (int(x) for x in sys.argv[2:7])
end = json.load(open(sys.argv[7]))["end"]
per_loop = idle_ir / idle_loops if idle_loops else 0.0
net = ir - loops * per_loop
if segs <= 0:
    sys.exit("no segment received from the sender")
print("instructions %-22s %8.1f per segment  (%d instructions, less %d loops x %.0f (a loop without a frame) = %.1f%%, over %d segments received from the sender; %d bytes sent, %d retransmitted segments; %.1f per segment with the loops)"
      % (c, net / segs, ir, loops, per_loop, 100.0 * loops * per_loop / ir if ir else 0,
         segs, end["sum_sent"]["bytes"], end["sum_sent"].get("retransmits", -1), ir / segs))
print("frames_sent  %-22s %8.3f per segment  (%d frames sent on both ports over %d segments received from the sender)"
      % (c, sent / segs, sent, segs))
print("%.1f" % (net / segs))
PY
) || die "$c: $out"
	PX_IPS[$c]=${out##*$'\n'}
	echo "${out%$'\n'*}"
	[ "$c" = proxy ] && "$PY" - "$g0" "$g1" <<'PY'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
d = lambda k: b.get(k, 0) - a.get(k, 0)
seg, merged = d("tcp_segments_in"), d("tcp_segments_coalesced_in_burst")
if seg > 0:
    print("merged       %-22s %8.3f of the segments in  (%d of the %d segments the proxy's engine received in the transfer were read merged with the one before)"
          % ("proxy", merged / seg, merged, seg))
PY
	cg_top_net "$cg" "$idle_cg" "$(px_cg_loops "$cg")" "$(px_cg_loops "$idle_cg")" \
		"$((f1 - f0))" "$c"
}

proxy_instructions() {
	local c
	command -v "$VALGRIND" >/dev/null || die "no $VALGRIND (apt-get install valgrind)"
	command -v callgrind_control >/dev/null || die "no callgrind_control (valgrind)"
	[ -z "$QUICK" ] || PROXY_BYTES=${BENCH_PROXY_BYTES:-4M}
	# A transfer that stalls must not hold CI for long.
	PX_IPERF_TIMEOUT=900
	[ -z "$QUICK" ] || PX_IPERF_TIMEOUT=240
	PX_SLUICE=$SLUICE
	declare -gA PX_IPS=()
	# A start under callgrind takes far longer than the 20 s e2e allows.
	E2E_START_TRIES=3000
	E2E_STOP_TRIES=1200
	px_setup
	echo "bench: mode proxy under callgrind: one iperf3 $PX_WHAT of $PROXY_BYTES (1 stream${PROXY_CLIENT_MTU:+, client MTU $PROXY_CLIENT_MTU}) through each contender"
	echo "bench: sluice on lcore $E2E_LCORE (net_af_packet, $E2E_AFP_ARGS); proxy config ${PROXY_CONF_BASE#"$ROOT"/}; counted: sluice's worker_main"
	for c in bridge proxy; do px_instr_run "$c"; done
	[ "$KEEP_LOGS" = 1 ] && echo "bench: logs and callgrind files in $LOGDIR"
	echo "iratio proxy_vs_bridge $("$PY" "$HERE/stats.py" ratio "${PX_IPS[bridge]}" "${PX_IPS[proxy]}" 4)"
}
