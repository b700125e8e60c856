#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Soak: every stage at once under mixed load for a set time, then check
# that nothing leaked (issue 17).
#
#   bash perf/soak.sh [--duration MINUTES] [--ci] [path/to/sluice]
#
# --duration defaults to 30 minutes; --ci makes it 2, with [proxy]
# syn_retries = 3 (see below). sluice runs in the
# network namespaces of tests/e2e/lib.sh with:
#   [tcpopt] mss_clamp = 1400
#   [proxy]  198.18.0.2 ports 7000-7006 intercepted, the rest bridged
#   [aqm]    1,000 subscribers (a generated CSV: the client 198.18.0.1,
#            the spoofing peer 198.18.0.10 and 998 /32s in 198.18.16.0/20),
#            100 Mbit/s each way
#   [impair] 1% random loss in both directions
#   [proxy]  syn_retries = 3 with --ci: the SYN flood's spoofed clients
#            never answer the SYN-ACK, and with the default 6 the last
#            flood's connections time out 127 s after it, which made most
#            of a 2-minute soak's drain (88 s); with 3, after 15 s. The
#            long soak keeps the default.
# The load, for the whole run: an iperf3 bridged (port 5201) and one
# proxied (port 7005), 20 s each, alternating direction, back to back; and
# in turn the attacks of tests/e2e/test_adversarial.sh (hostile mix,
# 30,000 tiny out-of-order segments, 200 zero-window readers, a 10 s SYN
# flood), each beside a proxied and a bridged 4 MB transfer whose sha256
# is checked. Then the load stops, the script waits until the proxy has no
# connection left, and stops sluice.
#
# It writes perf/out/soak-mbufs.csv (seconds, phase, mbufs in use, VmRSS in
# kB, and the proxy's memory_pressure_ms, rcv_offered_bytes and
# rcv_pool_bytes; one line a second) and perf/out/soak-counters.txt (every
# telemetry number that moved, before -> after), prints for each phase the
# share of its time the proxy held windows below rcv_buf and how much of
# its receive pool the windows offered, and a one-line summary:
#   soak: 600 s, mbufs in use min/avg/max .../.../... of 16383, rss ... MB
#   -> ... MB (max ...), victims N/N intact, iperf3 N/N, leak: none
# Exit status 0 when every victim arrived intact, the pool never fell
# below 25% free and the exit report's "mempool in_use=... baseline=..."
# line shows every mbuf back (it says LEAK otherwise).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
MINUTES=30
SYN_RETRIES=
bin=
while [ $# -gt 0 ]; do
	case "$1" in
	--duration) MINUTES=$2; shift 2 ;;
	--ci) MINUTES=2; SYN_RETRIES=3; shift ;;
	-h|--help) sed -n '3,38p' "$0"; exit 0 ;;
	*) bin=$1; shift ;;
	esac
done
[ -n "$bin" ] || bin=$root/build/app/sluice
SLUICE=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
DURATION=$(awk -v m="$MINUTES" 'BEGIN { printf "%d", m * 60 }')
OUT=$root/perf/out
mkdir -p "$OUT"
CSV=$OUT/soak-mbufs.csv
COUNTERS=$OUT/soak-counters.txt

. "$root/tests/e2e/lib.sh"
E2E_TEST=soak
ADV=$E2E_DIR/adversary.py
PEER=$E2E_DIR/stream_peer.py
MBUFS=16383
VICTIM=4000000
PX=7000 BR=7100 PORT_SYN=7001 PORT_ZW=7002 PORT_OOO=7004 PORT_IPX=7005 PORT_IBR=5201
# The hostile mix aims at a proxied port of its own: its SYNs (sent in
# fragments, which af_packet's fanout reassembles) are intercepted, and
# toward the victims' port they would take the victims' server's accept().
PORT_MIX=7006

e2e_require_tools tcpreplay sha256sum
e2e_setup
CLIMAC=$(ip -n "$NS_CLI" -j link show "$CLI_IF" | "$E2E_PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])')
SRVMAC=$(ip -n "$NS_SRV" -j link show "$SRV_IF" | "$E2E_PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])')
ip -n "$NS_SRV" neigh add 198.18.0.254 lladdr "$CLIMAC" dev "$SRV_IF" nud permanent
ip -n "$NS_SRV" neigh add 198.18.0.10 lladdr "$CLIMAC" dev "$SRV_IF" nud permanent
ip -n "$NS_SRV" route add 198.19.0.0/16 via 198.18.0.254 dev "$SRV_IF"
ip -n "$NS_CLI" neigh add "$SRV4" lladdr "$SRVMAC" dev "$CLI_IF" nud permanent

{
	echo "prefix,down,up"
	echo "198.18.0.1/32,100mbit,100mbit"
	echo "198.18.0.10/32,100mbit,100mbit"
	for i in $(seq 0 997); do
		echo "198.18.$((16 + i / 256)).$((i % 256))/32,100mbit,100mbit"
	done
} >"$E2E_TMP/subscribers.csv"
cat >"$E2E_TMP/soak.ini" <<EOF
[sluice]
mbufs = $MBUFS

[tcpopt]
mss_clamp = 1400

[proxy]
intercept = $SRV4:$PX, $SRV4:$PORT_SYN, $SRV4:$PORT_ZW, $SRV4:7003, $SRV4:$PORT_OOO, $SRV4:$PORT_IPX, $SRV4:$PORT_MIX
${SYN_RETRIES:+syn_retries = $SYN_RETRIES}

[aqm]
subscribers = subscribers.csv
default = pass

[impair]
loss = 1%
EOF

rm -f "$OUT/soak-iperf-failures.txt"
TEL_CMDS="/sluice/totals /sluice/ports /sluice/workers /sluice/malformed /sluice/proxy /sluice/aqm /sluice/tcpopt /sluice/impair"
snapshot() { # FILE: every number of every reply, "cmd.key.path value"
	local c
	for c in $TEL_CMDS; do
		e2e_tel "$c" 2>/dev/null | "$E2E_PY" -c 'import json, sys
def walk(p, v):
    if isinstance(v, dict):
        for k, x in v.items():
            walk(p + "." + str(k), x)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            walk(p + "." + str(i), x)
    elif isinstance(v, (int, float)) and not isinstance(v, bool):
        print(p, v)
walk(sys.argv[1], json.load(sys.stdin))' "$c"
	done >"$1"
}

STOP=$E2E_TMP/stop
echo start >"$E2E_TMP/phase"
sampler() {
	local t0 u r p x
	t0=$(date +%s)
	echo "seconds,phase,mbufs_in_use,rss_kb,memory_pressure_ms,rcv_offered_bytes,rcv_pool_bytes" >"$CSV"
	while kill -0 "$SLUICE_PID" 2>/dev/null; do
		u=$(e2e_tel /sluice/totals mempool_in_use 2>/dev/null)
		r=$(awk '/^VmRSS:/ { print $2 }' "/proc/$SLUICE_PID/status" 2>/dev/null)
		# The proxy's receive pool: what the windows let in, of how much.
		x=$(e2e_tel /sluice/proxy 2>/dev/null | "$E2E_PY" -c 'import json, sys
d = json.load(sys.stdin)
print("%d,%d,%d" % (d["memory_pressure_ms"], d["rcv_offered_bytes"], d["rcv_pool_bytes"]))' 2>/dev/null)
		p=$(cat "$E2E_TMP/phase")
		[ -n "$u" ] && echo "$(( $(date +%s) - t0 )),${p:-?},$u,${r:-0},${x:-,,}" >>"$CSV"
		sleep 1
	done
}

# iperf3 loops: bridged and proxied, 20 s each, alternating direction.
iperf_loop() {
	local port=$1 n=0 ok=0 rev= spid
	# Not through srv(), a shell function: $! must be timeout's own PID
	# (ip netns exec execs it) for the kill below to reach the server.
	ip netns exec "$NS_SRV" timeout --foreground $((DURATION + 120)) iperf3 -s -B "$SRV4" \
		-p "$port" </dev/null >/dev/null 2>&1 &
	spid=$!
	e2e_wait_listen "$port"
	while [ ! -e "$STOP" ]; do
		n=$((n + 1))
		if cli timeout --foreground 40 iperf3 -c "$SRV4" -p "$port" -t 20 -b 40M $rev \
			--connect-timeout 5000 </dev/null >"$E2E_TMP/iperf.out.$port" 2>&1; then
			ok=$((ok + 1))
		else
			echo "iperf3 port $port run $n $rev ($(cat "$E2E_TMP/phase")): $(grep -i error "$E2E_TMP/iperf.out.$port" | head -1)" \
				>>"$OUT/soak-iperf-failures.txt"
		fi
		if [ -z "$rev" ]; then rev=-R; else rev=; fi
		echo "$ok $n" >"$E2E_TMP/iperf.$port"
	done
	kill -TERM "$spid" 2>/dev/null
	wait "$spid"
}

victims_start() {
	VPIDS=()
	srv timeout --foreground 120 "$E2E_PY" "$PEER" sink "$PX" </dev/null >"$E2E_TMP/px.rx" 2>&1 &
	VPIDS+=($!)
	srv timeout --foreground 120 "$E2E_PY" "$PEER" sink "$BR" </dev/null >"$E2E_TMP/br.rx" 2>&1 &
	VPIDS+=($!)
	e2e_wait_listen "$PX"; e2e_wait_listen "$BR"
	cli timeout --foreground 120 "$E2E_PY" "$PEER" send "$SRV4" "$PX" "$VICTIM" "$RANDOM" \
		</dev/null >"$E2E_TMP/px.tx" 2>&1 &
	VPIDS+=($!)
	cli timeout --foreground 120 "$E2E_PY" "$PEER" send "$SRV4" "$BR" "$VICTIM" "$RANDOM" \
		</dev/null >"$E2E_TMP/br.tx" 2>&1 &
	VPIDS+=($!)
	E2E_PIDS+=("${VPIDS[@]}")
}
VICT_OK=0 VICT_N=0
victims_check() {
	local p v rx tx
	for p in "${VPIDS[@]}"; do wait "$p"; done
	for v in px br; do
		VICT_N=$((VICT_N + 1))
		rx=$(cut -d' ' -f1,2 "$E2E_TMP/$v.rx" 2>/dev/null)
		tx=$(cut -d' ' -f1,2 "$E2E_TMP/$v.tx" 2>/dev/null)
		if [ -n "$rx" ] && [ "$rx" = "$tx" ] && [ "${rx#* }" = "$VICTIM" ]; then
			VICT_OK=$((VICT_OK + 1))
		else
			e2e_log "victim $v during $1: sent '$tx' received '$rx'"
		fi
	done
}

attack_mix() {
	[ -s "$E2E_TMP/mix.pcap" ] ||
		cli "$E2E_PY" "$ADV" mixpcap "$E2E_TMP/mix.pcap" "$CLIMAC" "$SRVMAC" "$CLI4" "$SRV4" "$PORT_MIX" >/dev/null
	cli timeout --foreground 30 tcpreplay -i "$CLI_IF" --pps=20000 --loop=10 "$E2E_TMP/mix.pcap" \
		>/dev/null 2>&1
}
attack_ooo() {
	srv timeout --foreground 30 "$E2E_PY" "$ADV" listen "$PORT_OOO" 10 </dev/null >/dev/null 2>&1 &
	e2e_wait_listen "$PORT_OOO"
	ADV_DSTMAC=$SRVMAC cli timeout --foreground 60 "$E2E_PY" "$ADV" ooo "$CLI_IF" \
		198.18.0.10 $((40000 + RANDOM % 20000)) "$SRV4" "$PORT_OOO" 30000 >/dev/null 2>&1
	wait
}
attack_zero_window() {
	srv timeout --foreground 40 "$E2E_PY" "$ADV" floods "$PORT_ZW" 200 15 </dev/null >/dev/null 2>&1 &
	e2e_wait_listen "$PORT_ZW"
	cli timeout --foreground 60 "$E2E_PY" "$ADV" stalls "$SRV4" "$PORT_ZW" 200 5 >/dev/null 2>&1
	wait
}
attack_syn_flood() {
	[ -s "$E2E_TMP/syn.pcap" ] ||
		cli "$E2E_PY" "$ADV" synpcap "$E2E_TMP/syn.pcap" 50000 "$CLIMAC" "$SRVMAC" "$SRV4" "$PORT_SYN"
	srv timeout --foreground 40 "$E2E_PY" "$ADV" listen "$PORT_SYN" 15 </dev/null >/dev/null 2>&1 &
	e2e_wait_listen "$PORT_SYN"
	cli timeout --foreground 40 tcpreplay -i "$CLI_IF" --pps=50000 --pps-multi=50 --duration=10 \
		--loop=0 "$E2E_TMP/syn.pcap" >"$E2E_TMP/syn.out" 2>&1
	sed -n 's/^Rated: .*, \([0-9.]*\) pps.*/\1/p' "$E2E_TMP/syn.out" >>"$E2E_TMP/syn.rates"
	wait
}

e2e_start_sluice "$E2E_TMP/soak.ini" || e2e_die "sluice start: $E2E_WHY"
e2e_log "soak: $DURATION s, sluice PID $SLUICE_PID"
snapshot "$E2E_TMP/before"
sampler &
E2E_PIDS+=($!)
iperf_loop "$PORT_IBR" &
IPIDS=($!)
iperf_loop "$PORT_IPX" &
IPIDS+=($!)
E2E_PIDS+=("${IPIDS[@]}")

T_END=$(( $(date +%s) + DURATION ))
ROUNDS=0
while [ "$(date +%s)" -lt "$T_END" ]; do
	for a in mix ooo zero_window syn_flood; do
		[ "$(date +%s)" -lt "$T_END" ] || break
		echo "$a" >"$E2E_TMP/phase"
		"attack_$a" </dev/null &
		apid=$!
		E2E_PIDS+=($apid)
		sleep 1
		victims_start
		wait "$apid"
		victims_check "$a"
		echo load >"$E2E_TMP/phase"
		sleep 2
	done
	ROUNDS=$((ROUNDS + 1))
done

# Drain: stop the load, wait until the proxy holds no connection.
echo drain >"$E2E_TMP/phase"
touch "$STOP"
T_DRAIN=$(date +%s)
wait "${IPIDS[@]}"   # each iperf3 client ends within 40 s (timeout)
ACTIVE=
for i in $(seq 1 300); do
	ACTIVE=$(e2e_tel /sluice/proxy connections_active 2>/dev/null)
	[ "$ACTIVE" = 0 ] && break
	sleep 1
done
DRAIN_S=$(( $(date +%s) - T_DRAIN ))
echo idle >"$E2E_TMP/phase"
sleep 2
snapshot "$E2E_TMP/after"
RSS_END=$(awk '/^VmRSS:/ { print $2 }' "/proc/$SLUICE_PID/status")
IN_USE_IDLE=$(e2e_tel /sluice/totals mempool_in_use)
BASE_IDLE=$(e2e_tel /sluice/totals mempool_baseline)

e2e_stop_sluice; STOP_RC=$?
EXIT_LINE=$(grep '^mempool in_use=' "$SLUICE_LOG" | tail -1)

# Counters that moved.
{
	echo "# telemetry before -> after (delta), only what moved; $DURATION s soak"
	awk 'NR == FNR { b[$1] = $2; next }
	     ($1 in b) && b[$1] != $2 { printf "%s %s -> %s (%+d)\n", $1, b[$1], $2, $2 - b[$1] }
	     !($1 in b) { printf "%s new %s\n", $1, $2 }' "$E2E_TMP/before" "$E2E_TMP/after"
	echo "# exit report"
	grep -E '^(mempool|proxy|aqm|tcpopt|impair|port|totals)' "$SLUICE_LOG"
} >"$COUNTERS"

read -r MIN AVG MAX RSS0 RSSMAX N <<<"$(awk -F, 'NR > 1 {
	if (n == 0 || $3 < mn) mn = $3; if ($3 > mx) mx = $3; s += $3
	if (n == 0) r0 = $4; if ($4 > rm) rm = $4; n++ }
	END { printf "%d %.0f %d %d %d %d", mn, (n ? s / n : 0), mx, r0, rm, n }' "$CSV")"
IB=$(cat "$E2E_TMP/iperf.$PORT_IBR" 2>/dev/null || echo "0 0")
IP=$(cat "$E2E_TMP/iperf.$PORT_IPX" 2>/dev/null || echo "0 0")
RATES=$(awk '{ s += $1; n++ } END { if (n) printf "%.0f", s / n; else print "?" }' "$E2E_TMP/syn.rates" 2>/dev/null)
LEAK=none
[ "$STOP_RC" = 0 ] || LEAK="LEAK ($E2E_WHY)"
echo "rounds of attacks: $ROUNDS; SYN flood mean rate reached ${RATES} pps (asked 50000)"
echo "drain: ${DRAIN_S} s until connections_active=${ACTIVE:-?}; then mempool in_use=$IN_USE_IDLE baseline=$BASE_IDLE (telemetry)"
echo "exit report: $EXIT_LINE"
# Per phase: the share of its seconds in which the proxy held windows
# below rcv_buf (memory_pressure_ms per second of samples), and what the
# windows let in of the receive pool, on average.
awk -F, 'NR > 2 && $5 != "" && pm != "" { t = $1 - ps; if (t > 0) { ms[$2] += $5 - pm; secs[$2] += t }
		off[$2] += $6; pool[$2] += $7; n[$2]++ }
	NR > 1 && $5 != "" { pm = $5; ps = $1 }
	END { for (p in n) if (secs[p] > 0 && pool[p] > 0)
		printf "pressure %-12s windows held below rcv_buf %3.0f%% of the time; offered %.0f%% of the receive pool\n",
			p, 100 * ms[p] / 1000 / secs[p], 100 * off[p] / pool[p] }' "$CSV" | sort
echo "samples: $CSV ($N); counters: $COUNTERS"
echo "soak: $DURATION s, mbufs in use min/avg/max $MIN/$AVG/$MAX of $MBUFS," \
	"rss $((RSS0 / 1024)) MB -> $((RSS_END / 1024)) MB (max $((RSSMAX / 1024)) MB)," \
	"victims $VICT_OK/$VICT_N intact, iperf3 bridged ${IB% *}/${IB#* } proxied ${IP% *}/${IP#* }, leak: $LEAK"
rc=0
[ "$LEAK" = none ] || rc=1
[ "$VICT_OK" = "$VICT_N" ] || rc=1
[ "$MAX" -le $((MBUFS * 3 / 4)) ] || { echo "pool fell below 25% free"; rc=1; }
E2E_FAILED=$rc
exit $rc
