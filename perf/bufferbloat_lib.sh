# SPDX-License-Identifier: BSD-3-Clause
#
# Latency under load through sluice: the pieces shared by perf/bufferbloat.sh
# (the full experiment) and tests/e2e/test_bufferbloat.sh (its short version).
# Source tests/e2e/lib.sh first, then this file, then call e2e_setup.
#
# One mode = one sluice configuration (written by bb_write_ini), started
# fresh in the e2e topology. Per mode, bb_run_mode measures:
#
#   |<- idle ->|<------------- load (4 up + 4 down TCP) ------------->|<tail>|
#   irtt (UDP RTT, 100 Hz) and ping (ICMP, 20 Hz) run from start to end.
#
# and leaves in its directory: irtt.json, ping.txt, iperf-{up,down}N.json,
# meta.env (times, rates, kernel and sluice counters), aqm.json (telemetry
# /sluice/aqm at the end of the load) and sluice.log (its exit report).
# perf/bufferbloat.py turns that into numbers, a table and plots.

BB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BB_PY=${BB_PY:-$E2E_PY}
BB_ANALYSE=$BB_DIR/bufferbloat.py

BB_DOWN=${BB_DOWN:-20mbit}        # shaped rate towards the subscriber
BB_UP=${BB_UP:-5mbit}             # shaped rate towards the internet
BB_FIFO_MS=${BB_FIFO_MS:-1000}    # the bloated FIFO holds this much at the rate
# [aqm] ack_filter of the two FQ-CoDel modes (off, up, down, both): "up",
# as on an asymmetric access line, whose upstream carries the downloads' ACKs.
BB_ACK_FILTER=${BB_ACK_FILTER:-up}
# [aqm] ack_hold of the two FQ-CoDel modes, ms (0 = off; needs the filter):
# 20 brings the 5 Mbit/s upstream to >= 95% goodput (perf/README.md).
BB_ACK_HOLD=${BB_ACK_HOLD:-20}
# [aqm] rwnd_clamp of the two FQ-CoDel modes (on, off): "on" holds every
# sender's bulk flows, BBR's included, to short queues (lib/rwnd/README.md,
# docs/bufferbloat/README.md).
BB_RWND_CLAMP=${BB_RWND_CLAMP:-on}
BB_FLOWS_UP=${BB_FLOWS_UP:-4}
BB_FLOWS_DOWN=${BB_FLOWS_DOWN:-4}
BB_IRTT_INTERVAL=${BB_IRTT_INTERVAL:-10ms}
BB_PING_INTERVAL=${BB_PING_INTERVAL:-0.05}
BB_IRTT_PORT=${BB_IRTT_PORT:-2112}
BB_IPERF_PORT0=${BB_IPERF_PORT0:-5301}
BB_TAIL=${BB_TAIL:-2}             # probing after the load stops, seconds
BB_CAPTURE=${BB_CAPTURE:-0}       # seconds of headers captured at both hosts (0 = none)
BB_MODES_ALL="fifo fq_codel fq_codel_ecn"
# The iperf3 senders' congestion control, set per socket (iperf3 -C; with
# -R the server's sending socket gets it too): cubic or bbr. ECN comes with
# the fq_codel_ecn mode (tcp_ecn = 1 in both namespaces).
BB_CC=${BB_CC:-cubic}
# Extra [aqm] lines for the two FQ-CoDel modes, "; "-separated, e.g.
# "blue = off; codel_rate_aware = off" (the behaviour before issue 18).
BB_AQM_EXTRA=${BB_AQM_EXTRA:-}
# Every bulk flow's smoothed RTT, sampled with `ss -ti` in both namespaces
# this often from 1 s into the load (seconds).
BB_SS_INTERVAL=${BB_SS_INTERVAL:-0.2}
# The receivers' largest TCP receive buffer (net.ipv4.tcp_rmem's default
# and max), in bytes: in the server namespace for the uploads, in the
# client's for the downloads. Linux advertises about half of it, so this
# clamps each flow's receive window at the hosts, which caps what any
# sender has in flight, whatever its congestion control. 0 = the kernel's
# own (autotuning up to 6 MB). A lab knob: it shows what a window clamp
# would do, sluice has none.
BB_RCVBUF_UP=${BB_RCVBUF_UP:-0}
BB_RCVBUF_DOWN=${BB_RCVBUF_DOWN:-0}
# One-way delay, in whole ms, that sluice's impair stage adds to every
# packet of every mode after the shaper, both ways: the path beyond the
# access link (a server farther away). 0 = none (the stage is left out).
BB_PATH_DELAY=${BB_PATH_DELAY:-0}

# CPUs for the load generators and probes: every CPU we may use except
# sluice's lcore, so that our own traffic does not take sluice's CPU (the
# shaper cannot send while sluice is descheduled). Empty on one CPU: no pin.
# The same CPUs as the e2e tests' (tests/e2e/lib.sh, E2E_LOAD_CPUS).
BB_LOAD_CPUS=${BB_LOAD_CPUS-$E2E_LOAD_CPUS}

bb_log() { echo "bufferbloat: $*" >&2; }

# _bb_pin: the command prefix that pins to BB_LOAD_CPUS (nothing if empty).
_bb_pin() { E2E_LOAD_CPUS=$BB_LOAD_CPUS _e2e_pin_words; }

# bb_rate_bps RATE: "20mbit", "20M", "1.5g", "64000" -> bit/s (powers of
# 1000, like sluice's aqm_parse_rate). Prints nothing if RATE is not a rate.
bb_rate_bps() {
	echo "$1" | awk '{
		s = tolower($0); sub(/(bit|bps)$/, "", s)
		m = 1; c = substr(s, length(s))
		if (c == "k") m = 1e3; else if (c == "m") m = 1e6
		else if (c == "g") m = 1e9; else if (c == "t") m = 1e12
		if (m != 1) s = substr(s, 1, length(s) - 1)
		if (s !~ /^[0-9]+(\.[0-9]+)?$/) exit 1
		printf "%.0f\n", s * m }'
}

# bb_mode_known MODE: one of the three modes (or "bridge": no shaping at all,
# sluice as a plain bridge; for debugging the pipeline).
bb_mode_known() {
	case "$1" in fifo | fq_codel | fq_codel_ecn | bridge) return 0 ;; esac
	return 1
}

# bb_write_ini MODE FILE: sluice's configuration for MODE at BB_DOWN/BB_UP,
# with the keys of config/examples/{fifo,fq_codel}-10mbit.ini. With no
# subscriber table every address goes to the default pipe, so the two hosts
# share one shaped link per direction, as on an access line. Profile "none"
# (no per-frame overhead): the shaper counts Ethernet frames without FCS,
# which is also what the veths count (see bufferbloat.py for goodput).
bb_write_ini() {
	local mode=$1 file=$2
	[ "$mode" = bridge ] && { : >"$file"; return 0; }
	{
		echo "; Generated by perf/bufferbloat.sh: mode $mode, down $BB_DOWN, up $BB_UP"
		echo "[aqm]"
		echo "ports = 0"
		echo "default = pipe"
		echo "rate_down = $BB_DOWN"
		echo "rate_up = $BB_UP"
		echo "profile = none"
		case "$mode" in
		fifo)
			echo "qdisc = fifo"
			echo "fifo_limit = ${BB_FIFO_MS}ms" ;;
		fq_codel)   # all defaults (ECN on, but the hosts do not ask for it)
			echo "qdisc = fq_codel"
			echo "ack_filter = $BB_ACK_FILTER"
			[ "$BB_ACK_FILTER" = off ] || echo "ack_hold = ${BB_ACK_HOLD}ms"
			echo "rwnd_clamp = $BB_RWND_CLAMP" ;;
		fq_codel_ecn)
			echo "qdisc = fq_codel"
			echo "ecn = on"
			echo "ack_filter = $BB_ACK_FILTER"
			[ "$BB_ACK_FILTER" = off ] || echo "ack_hold = ${BB_ACK_HOLD}ms"
			echo "rwnd_clamp = $BB_RWND_CLAMP" ;;
		esac
		case "$mode" in
		fq_codel*) [ -z "$BB_AQM_EXTRA" ] || echo "$BB_AQM_EXTRA" | tr ';' '\n' | sed 's/^ *//' ;;
		esac
		if [ "$BB_PATH_DELAY" -gt 0 ]; then
			local fast
			fast=$(bb_rate_bps "$BB_DOWN") && [ "$(bb_rate_bps "$BB_UP")" -le "$fast" ] ||
				fast=$(bb_rate_bps "$BB_UP")
			echo "[impair]"
			echo "delay = ${BB_PATH_DELAY}ms"
			# (Room for what the delay holds at the faster rate in
			# packets of 500 bytes on average, over the default.)
			echo "limit = $(( fast / 8000 * BB_PATH_DELAY / 500 + 1000 ))"
		fi
	} >"$file"
}

# _bb_ss_sampler FILE END: until time END (_bb_now), every BB_SS_INTERVAL
# s, append "# T" and `ss -tinH` of the client ("ns cli") and server
# ("ns srv") namespaces to FILE. bufferbloat.py keeps the sockets that
# sent bulk data (the senders: upload flows in cli, download flows in srv).
_bb_ss_sampler() {
	local file=$1 end=$2
	while awk -v a="$(_bb_now)" -v b="$end" 'BEGIN { exit !(a < b) }'; do
		{
			echo "# $(_bb_now)"
			echo "ns cli"
			ip netns exec "$NS_CLI" ss -tinH state established
			echo "ns srv"
			ip netns exec "$NS_SRV" ss -tinH state established
		} >>"$file" 2>/dev/null
		sleep "$BB_SS_INTERVAL"
	done
}

# bb_kbytes DEV tx|rx: bytes the sluice namespace's kernel counted on DEV.
bb_kbytes() {
	ip -n "$NS_MID" -s -j link show "$1" |
		"$BB_PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"][sys.argv[1]]["bytes"])' "$2"
}

# _bb_rcvbuf NS BYTES: the receive-buffer clamp of BB_RCVBUF_UP/DOWN.
_bb_rcvbuf() {
	[ "$2" -gt 0 ] || return 0
	ip netns exec "$1" sysctl -qw net.ipv4.tcp_rmem="4096 $2 $2"
}

# bb_start_servers: one irtt server and one iperf3 server per flow, in the
# server namespace, for the whole run (iperf3 serves tests one at a time).
bb_start_servers() {
	local i port
	# Before any socket exists: an accepted socket keeps its listener's
	# buffer, and autotuning only ever grows it.
	_bb_rcvbuf "$NS_SRV" "$BB_RCVBUF_UP" || e2e_die "sysctl tcp_rmem failed in $NS_SRV"
	_bb_rcvbuf "$NS_CLI" "$BB_RCVBUF_DOWN" || e2e_die "sysctl tcp_rmem failed in $NS_CLI"
	ip netns exec "$NS_SRV" $(_bb_pin) irtt server -b "$SRV4:$BB_IRTT_PORT" -i 0 -d 0 \
		</dev/null >"$E2E_TMP/irtt-server.log" 2>&1 &
	E2E_PIDS+=("$!")
	e2e_wait_listen "$BB_IRTT_PORT" u || e2e_die "irtt server did not start: $(tail -2 "$E2E_TMP/irtt-server.log")"
	for i in $(seq 0 $((BB_FLOWS_UP + BB_FLOWS_DOWN - 1))); do
		port=$((BB_IPERF_PORT0 + i))
		ip netns exec "$NS_SRV" $(_bb_pin) iperf3 -s -B "$SRV4" -p "$port" \
			</dev/null >"$E2E_TMP/iperf-server.$port.log" 2>&1 &
		E2E_PIDS+=("$!")
	done
	for i in $(seq 0 $((BB_FLOWS_UP + BB_FLOWS_DOWN - 1))); do
		e2e_wait_listen $((BB_IPERF_PORT0 + i)) t ||
			e2e_die "iperf3 server on port $((BB_IPERF_PORT0 + i)) did not start"
	done
}

_bb_now() { date +%s.%N; }

# bb_run_mode MODE DIR IDLE_S LOAD_S: one measurement (see the top of file).
# Returns non-zero with E2E_WHY set if sluice or a tool failed.
bb_run_mode() {
	local mode=$1 dir=$2 idle=$3 secs=$4
	local ini=$dir/sluice.ini ecn=2 total i port pid rc
	local irtt_pid ping_pid t0 tl te
	local -a load_pids=()
	E2E_WHY=
	mkdir -p "$dir" || { E2E_WHY="cannot create $dir"; return 1; }
	rm -f "$dir"/*.json "$dir"/ping.txt "$dir"/meta.env "$dir"/sluice.log
	bb_write_ini "$mode" "$ini"
	# Hosts ask for ECN only in the ECN mode. Elsewhere they keep Linux's
	# default (2: accept ECN, never ask), so no packet is ECT and CoDel drops.
	[ "$mode" = fq_codel_ecn ] && ecn=1
	cli sysctl -qw net.ipv4.tcp_ecn=$ecn && srv sysctl -qw net.ipv4.tcp_ecn=$ecn ||
		{ E2E_WHY="sysctl tcp_ecn failed"; return 1; }
	if [ "$mode" = bridge ]; then
		e2e_start_sluice "" || return 1
	else
		e2e_start_sluice "$ini" || return 1
	fi
	for i in 1 2 3; do   # ARP first, so the idle baseline has no outlier
		cli ping -4 -c 1 -W 1 "$SRV4" >/dev/null 2>&1 && break
	done

	# The probes run until BB_TAIL s after the last load flow ends (with
	# a bloated queue the flows' final exchanges can take a while), then
	# get SIGINT: irtt writes its JSON and ping its summary on SIGINT.
	total=$((idle + 3 * secs + 120))
	t0=$(_bb_now)
	ip netns exec "$NS_CLI" $(_bb_pin) timeout --foreground $((total + 30)) \
		irtt client -i "$BB_IRTT_INTERVAL" -d "${total}s" --wait=2s -Q \
		-o "$dir/irtt.json" "$SRV4:$BB_IRTT_PORT" </dev/null >"$dir/irtt.err" 2>&1 &
	irtt_pid=$!
	E2E_PIDS+=("$irtt_pid")
	ip netns exec "$NS_CLI" $(_bb_pin) timeout --foreground $((total + 30)) \
		ping -4 -D -n -i "$BB_PING_INTERVAL" -w "$total" "$SRV4" \
		</dev/null >"$dir/ping.txt" 2>&1 &
	ping_pid=$!
	E2E_PIDS+=("$ping_pid")
	sleep "$idle"

	local k_down0 k_up0 k_down1 k_up1 tk0 tk1
	tl=$(_bb_now)
	for i in $(seq 0 $((BB_FLOWS_UP + BB_FLOWS_DOWN - 1))); do
		local name=up$i rev=
		port=$((BB_IPERF_PORT0 + i))
		if [ "$i" -ge "$BB_FLOWS_UP" ]; then
			name=down$((i - BB_FLOWS_UP)) rev=-R
		fi
		ip netns exec "$NS_CLI" $(_bb_pin) timeout --foreground $((secs + 30)) \
			iperf3 -4 -c "$SRV4" -p "$port" -t "$secs" -J $rev -C "$BB_CC" \
			--connect-timeout 5000 </dev/null \
			>"$dir/iperf-$name.json" 2>"$dir/iperf-$name.err" &
		load_pids+=("$!")
		E2E_PIDS+=("$!")
	done
	# Link utilisation: bytes sluice sent on each side, between 1 s into
	# the load and its nominal end, while every flow runs.
	# Also how much of that time sluice's lcore thread really ran: when it
	# shares its CPU, the shaper loses link time (schedstat: run ns first).
	local run0 run1
	sleep 1
	# Optional: what each link carries, frame by frame. dumpcap records
	# 128-byte headers of what each host receives (the shaped side of
	# sluice) for BB_CAPTURE s; bufferbloat.py sorts it into data, pure
	# ACKs (with or without SACK), probes. Pinned off sluice's CPU.
	local -a cap_pids=()
	if [ "${BB_CAPTURE:-0}" -gt 0 ]; then
		local ns side
		for side in srv cli; do
			ns=$NS_SRV; [ $side = cli ] && ns=$NS_CLI
			rm -f "$dir/capture-$side.pcapng"
			ip netns exec "$ns" $(_bb_pin) timeout $((BB_CAPTURE + 10)) \
				dumpcap -q -i "$([ $side = cli ] && echo "$CLI_IF" || echo "$SRV_IF")" -s 128 -a "duration:$BB_CAPTURE" \
				-w "$dir/capture-$side.pcapng" </dev/null >"$dir/capture-$side.err" 2>&1 &
			cap_pids+=("$!")
			E2E_PIDS+=("$!")
		done
	fi
	rm -f "$dir/ss.txt"
	_bb_ss_sampler "$dir/ss.txt" "$(awk -v a="$tl" -v s="$secs" 'BEGIN { printf "%.3f", a + s - 0.5 }')" &
	local ss_pid=$!
	E2E_PIDS+=("$ss_pid")
	tk0=$(_bb_now)
	run0=$(awk '{ print $1 }' "/proc/$SLUICE_PID/schedstat" 2>/dev/null)
	k_down0=$(bb_kbytes "$SUB_IF" tx) k_up0=$(bb_kbytes "$INET_IF" tx)
	sleep "$(awk -v a="$tl" -v b="$(_bb_now)" -v s="$secs" 'BEGIN { d = a + s - b - 0.2; print (d > 0 ? d : 0) }')"
	tk1=$(_bb_now)
	run1=$(awk '{ print $1 }' "/proc/$SLUICE_PID/schedstat" 2>/dev/null)
	k_down1=$(bb_kbytes "$SUB_IF" tx) k_up1=$(bb_kbytes "$INET_IF" tx)
	rc=0
	for pid in "${load_pids[@]}"; do wait "$pid" || rc=$?; done
	for pid in "${cap_pids[@]}"; do wait "$pid"; done
	wait "$ss_pid"
	te=$(_bb_now)
	e2e_tel /sluice/aqm >"$dir/aqm.json" 2>/dev/null || rm -f "$dir/aqm.json"
	e2e_tel /sluice/ports >"$dir/ports.json" 2>/dev/null
	local ring
	ring=$(e2e_ring_drops 2>/dev/null)
	sleep "$BB_TAIL"
	_e2e_kill_child "$irtt_pid" INT
	_e2e_kill_child "$ping_pid" INT
	wait "$irtt_pid"
	local irc=$?
	wait "$ping_pid"
	{
		echo "mode=$mode"
		echo "down_bps=$(bb_rate_bps "$BB_DOWN")"
		echo "up_bps=$(bb_rate_bps "$BB_UP")"
		echo "fifo_ms=$BB_FIFO_MS"
		echo "cli4=$CLI4"
		echo "srv4=$SRV4"
		echo "ack_filter=$([ "$mode" = fifo ] || [ "$mode" = bridge ] && echo off || echo "$BB_ACK_FILTER")"
		echo "ack_hold_ms=$([ "$mode" = fifo ] || [ "$mode" = bridge ] || [ "$BB_ACK_FILTER" = off ] && echo 0 || echo "$BB_ACK_HOLD")"
		echo "rwnd_clamp=$([ "$mode" = fifo ] || [ "$mode" = bridge ] && echo off || echo "$BB_RWND_CLAMP")"
		echo "irtt_interval=$BB_IRTT_INTERVAL"
		echo "ping_interval=$BB_PING_INTERVAL"
		echo "cc=$BB_CC"
		echo "rcvbuf_up=$BB_RCVBUF_UP"
		echo "rcvbuf_down=$BB_RCVBUF_DOWN"
		echo "path_delay_ms=$BB_PATH_DELAY"
		echo "tcp_ecn=$ecn"
		echo "aqm_extra=$BB_AQM_EXTRA"
		echo "t0=$t0"
		echo "t_load=$tl"
		echo "t_end=$te"
		echo "idle_s=$idle"
		echo "load_s=$secs"
		echo "flows_up=$BB_FLOWS_UP"
		echo "flows_down=$BB_FLOWS_DOWN"
		echo "l2_bytes_down=$((k_down1 - k_down0))"
		echo "l2_bytes_up=$((k_up1 - k_up0))"
		echo "l2_secs=$(awk -v a="$tk0" -v b="$tk1" 'BEGIN { printf "%.3f", b - a }')"
		echo "sluice_cpu_pct=$(awk -v a="$tk0" -v b="$tk1" -v r0="${run0:-}" -v r1="${run1:-}" \
			'BEGIN { if (r0 != "" && r1 != "" && b > a) printf "%.1f", (r1 - r0) / 1e7 / (b - a) }')"
		echo "ring_drops=${ring:-}"
		echo "iperf_rc=$rc"
		echo "irtt_rc=$irc"
	} >"$dir/meta.env"
	local stop_ok=1
	e2e_stop_sluice || stop_ok=0
	echo "t_stop=$(_bb_now)" >>"$dir/meta.env"
	cp "$SLUICE_LOG" "$dir/sluice.log" 2>/dev/null
	echo "sluice_stop_ok=$stop_ok" >>"$dir/meta.env"
	if [ $stop_ok = 0 ]; then return 1; fi
	if [ "$irc" != 0 ]; then
		E2E_WHY="irtt client exited $irc: $(tail -2 "$dir/irtt.err")"; return 1
	fi
	if [ "$rc" != 0 ]; then
		E2E_WHY="an iperf3 client exited $rc (see $dir/iperf-*.err)"; return 1
	fi
	return 0
}
