#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Attacks from the subscriber side cannot crash sluice, drain its mbuf pool
# or starve other traffic (issue 17). sluice proxies 198.18.0.2 ports
# 7000-7005 and bridges everything else. Each attack runs alongside two
# victims, a bridged transfer (port 7100) and a proxied one (port 7000),
# of ADV_VICTIM bytes each, and then:
#   - both victims arrive with their sha256 intact;
#   - the pool, sampled through telemetry (/sluice/totals mempool_in_use)
#     every 0.2 s, never has less than 25% of its mbufs free;
#   - sluice's resident memory (VmRSS) grows by less than 64 MB;
#   - a new proxied connection opens within 1 s.
# The attacks, in this order (the SYN floods last: they fill the proxy's
# connection table, and the others must find room in it):
#   mix        fragments, bad checksums and truncated headers (scapy,
#              replayed with tcpreplay) toward the proxied port;
#   ooo        30,000 one-byte segments in descending order, leaving a
#              hole at the first byte, on one proxied connection (a raw
#              peer, tests/e2e/adversary.py);
#   zero_window 200 proxied downloads whose reader never reads;
#   mptcp_syn_flood  spoofed SYNs from 198.19.0.0/16 with tcpreplay for
#              ADV_MPSYN_SECS (5 s) at ADV_MPSYN_PPS (20,000), every one
#              MPTCP: half MP_CAPABLE (each one a connection to set up
#              until the table is full), half MP_JOIN with tokens no
#              connection has (each one a lookup and a RST); the attack
#              counts only if sluice's MPTCP counters saw both kinds;
#   syn_flood  plain spoofed SYNs at ADV_SYN_PPS (50,000) for 10 s; the
#              rate reached is reported.
# At the end sluice must exit cleanly with every mbuf back in the pool.
set -u
. "$(dirname "$0")/lib.sh"
E2E_TEST=adversarial
ADV=$E2E_DIR/adversary.py
PEER=$E2E_DIR/stream_peer.py
MBUFS=16383
ADV_VICTIM=${ADV_VICTIM:-8000000}
ADV_SYN_PPS=${ADV_SYN_PPS:-50000}
ADV_SYN_SECS=10
ADV_MPSYN_PPS=${ADV_MPSYN_PPS:-20000}
ADV_MPSYN_SECS=5
# tcpreplay's pacing; --pps-multi sends 50 frames per timer tick, so the
# timer costs little. --topspeed reaches about 87,000 SYNs/s on a quiet
# 2-core VM but leaves the victims and sluice less CPU.
ADV_SYN_RATE=${ADV_SYN_RATE:---pps=$ADV_SYN_PPS --pps-multi=50}
ADV_RSS_MB=${ADV_RSS_MB:-64}
PX=7000          # proxied victim
BR=7100          # bridged victim
PORT_CONN=7003   # the after-attack connection
PORT_OOO=7004
PORT_ZW=7002
PORT_SYN=7001
PORT_MPSYN=7006
# The mix aims at a proxied port of its own. net_af_packet joins its
# sockets to a PACKET_FANOUT group with the defrag flag, so the kernel
# reassembles IP fragments before sluice sees them: a SYN the mix sends in
# fragments reaches the proxy whole, is intercepted as it should be, and
# would take the one accept() of a victim's server on the same port. (On a
# real NIC sluice sees the fragments, and tests/pcap/test_proxy.py checks
# that they pass unchanged.)
PORT_MIX=7005

e2e_require_tools tcpreplay sha256sum
e2e_setup
CLIMAC=$(ip -n "$NS_CLI" -j link show "$CLI_IF" | "$E2E_PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])')
SRVMAC=$(ip -n "$NS_SRV" -j link show "$SRV_IF" | "$E2E_PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])')
# Spoofed sources: the server answers them toward the client's MAC with no
# ARP (198.19.0.0/16 through a static gateway, 198.18.0.10 directly).
ip -n "$NS_SRV" neigh add 198.18.0.254 lladdr "$CLIMAC" dev "$SRV_IF" nud permanent
ip -n "$NS_SRV" neigh add 198.18.0.10 lladdr "$CLIMAC" dev "$SRV_IF" nud permanent
ip -n "$NS_SRV" route add 198.19.0.0/16 via 198.18.0.254 dev "$SRV_IF"
ip -n "$NS_CLI" neigh add "$SRV4" lladdr "$SRVMAC" dev "$CLI_IF" nud permanent

CFG=$E2E_TMP/adversarial.ini
cat >"$CFG" <<EOF
[sluice]
mbufs = $MBUFS

[proxy]
intercept = $SRV4:$PX, $SRV4:$PORT_SYN, $SRV4:$PORT_ZW, $SRV4:$PORT_CONN, $SRV4:$PORT_OOO, $SRV4:$PORT_MIX, $SRV4:$PORT_MPSYN
EOF

# Sampler: "PHASE IN_USE RSS_KB" every 0.2 s; PHASE from the file phase.
echo idle >"$E2E_TMP/phase"
sampler() {
	while kill -0 "$SLUICE_PID" 2>/dev/null; do
		local u r
		u=$(e2e_tel /sluice/totals mempool_in_use 2>/dev/null)
		r=$(awk '/^VmRSS:/ { print $2 }' "/proc/$SLUICE_PID/status" 2>/dev/null)
		[ -n "$u" ] && echo "$(cat "$E2E_TMP/phase") $u ${r:-0}"
		sleep 0.2
	done >>"$E2E_TMP/samples"
}

victims_start() {
	srv timeout --foreground 120 "$E2E_PY" "$PEER" sink "$PX" </dev/null \
		>"$E2E_TMP/$1.px.rx" 2>&1 &
	E2E_PIDS+=($!); VPIDS=($!)
	srv timeout --foreground 120 "$E2E_PY" "$PEER" sink "$BR" </dev/null \
		>"$E2E_TMP/$1.br.rx" 2>&1 &
	E2E_PIDS+=($!); VPIDS+=($!)
	e2e_wait_listen "$PX"; e2e_wait_listen "$BR"
	cli timeout --foreground 120 "$E2E_PY" "$PEER" send "$SRV4" "$PX" "$ADV_VICTIM" 1 \
		</dev/null >"$E2E_TMP/$1.px.tx" 2>&1 &
	E2E_PIDS+=($!); VPIDS+=($!)
	cli timeout --foreground 120 "$E2E_PY" "$PEER" send "$SRV4" "$BR" "$ADV_VICTIM" 2 \
		</dev/null >"$E2E_TMP/$1.br.tx" 2>&1 &
	E2E_PIDS+=($!); VPIDS+=($!)
}

victims_intact() {
	local p v rx tx
	for p in "${VPIDS[@]}"; do wait "$p"; done
	E2E_WHY=
	for v in px br; do
		rx=$(cut -d' ' -f1,2 "$E2E_TMP/$1.$v.rx" 2>/dev/null)
		tx=$(cut -d' ' -f1,2 "$E2E_TMP/$1.$v.tx" 2>/dev/null)
		if [ -z "$rx" ] || [ "$rx" != "$tx" ] || [ "${rx#* }" != "$ADV_VICTIM" ]; then
			E2E_WHY="$v victim: sender said '$(tail -1 "$E2E_TMP/$1.$v.tx" 2>/dev/null | head -c 120)'"
			E2E_WHY="$E2E_WHY, receiver '$(tail -1 "$E2E_TMP/$1.$v.rx" 2>/dev/null | head -c 120)'"
			return 1
		fi
		E2E_WHY="$E2E_WHY$v $(cut -d' ' -f3 "$E2E_TMP/$1.$v.rx")s "
	done
	E2E_WHY="both $ADV_VICTIM bytes intact (${E2E_WHY% })"
}

pool_free() {
	local peak n
	n=$(grep -c "^$1 " "$E2E_TMP/samples")
	peak=$(awk -v p="$1" '$1 == p && $2 > m { m = $2 } END { print m + 0 }' "$E2E_TMP/samples")
	[ "$n" -gt 0 ] || { E2E_WHY="no pool samples"; return 1; }
	E2E_WHY="peak $peak of $MBUFS mbufs in use, $n samples"
	[ "$peak" -le $((MBUFS * 3 / 4)) ]
}

rss_bounded() {
	local grow
	grow=$(awk -v p="$1" -v b="$RSS0" '$1 == p && $3 > m { m = $3 } END { print (m > b ? m - b : 0) }' \
		"$E2E_TMP/samples")
	E2E_WHY="VmRSS grew $((grow / 1024)) MB (from $((RSS0 / 1024)) MB)"
	[ "$grow" -lt $((ADV_RSS_MB * 1024)) ]
}

connects() {
	local out lpid
	srv timeout --foreground 10 "$E2E_PY" "$ADV" listen "$PORT_CONN" 3 </dev/null >/dev/null 2>&1 &
	lpid=$!; E2E_PIDS+=($lpid)
	e2e_wait_listen "$PORT_CONN"
	out=$(cli timeout --foreground 5 "$E2E_PY" "$ADV" connect "$SRV4" "$PORT_CONN" 1 2>&1)
	local rc=$?
	wait "$lpid" 2>/dev/null
	E2E_WHY=$out
	[ $rc = 0 ]
}

# phase NAME DELAY ATTACK: start ATTACK in the background, the victims
# DELAY seconds later (so they run while the attack is under way), then
# the four checks. ATTACK writes "RC WHY" to $E2E_TMP/NAME.attack.
phase() {
	local name=$1 delay=$2 attack=$3 apid
	RSS0=$(awk '/^VmRSS:/ { print $2 }' "/proc/$SLUICE_PID/status")
	echo "$name" >"$E2E_TMP/phase"
	"$attack" >"$E2E_TMP/$name.attack" 2>>"$E2E_TMP/$name.attack.err" &
	apid=$!; E2E_PIDS+=($apid)
	sleep "$delay"
	victims_start "$name"
	wait "$apid"
	e2e_check "${name}_attack_runs" attack_result "$name"
	e2e_check "${name}_leaves_both_victims_intact" victims_intact "$name"
	sleep 0.5
	echo "after_$name" >"$E2E_TMP/phase"
	e2e_check "${name}_leaves_a_quarter_of_the_pool_free" pool_free "$name"
	e2e_check "${name}_keeps_resident_memory_bounded" rss_bounded "$name"
	e2e_check "${name}_then_a_new_connection_opens_within_1s" connects
}
attack_result() {
	local r
	r=$(tail -1 "$E2E_TMP/$1.attack")
	E2E_WHY=${r#* }
	[ "${r%% *}" = 0 ]
}

attack_mix() {
	local n=$MIXN
	[ -n "$n" ] || { echo "1 mixpcap: $(tail -1 "$E2E_TMP/mix.err")"; return; }
	cli timeout --foreground 30 tcpreplay -i "$CLI_IF" --pps=20000 --loop=10 \
		"$E2E_TMP/mix.pcap" >"$E2E_TMP/mix.out" 2>&1
	echo "$? $((n * 10)) hostile frames at $(pps "$E2E_TMP/mix.out") pps"
}

attack_ooo() {
	srv timeout --foreground 30 "$E2E_PY" "$ADV" listen "$PORT_OOO" 15 </dev/null >/dev/null 2>&1 &
	E2E_PIDS+=($!)
	e2e_wait_listen "$PORT_OOO"
	local r
	r=$(ADV_DSTMAC=$SRVMAC cli timeout --foreground 60 "$E2E_PY" "$ADV" ooo "$CLI_IF" \
		198.18.0.10 40000 "$SRV4" "$PORT_OOO" 30000 2>&1 | tail -1)
	case "$r" in sent*) echo "0 $r" ;; *) echo "1 $r" ;; esac
}

attack_zero_window() {
	local fpid
	srv timeout --foreground 40 "$E2E_PY" "$ADV" floods "$PORT_ZW" 200 20 </dev/null \
		>"$E2E_TMP/zw.srv" 2>&1 &
	fpid=$!; E2E_PIDS+=($fpid)
	e2e_wait_listen "$PORT_ZW"
	local r
	r=$(cli timeout --foreground 60 "$E2E_PY" "$ADV" stalls "$SRV4" "$PORT_ZW" 200 6 2>&1 | tail -1)
	case "$r" in "stalled 200") echo "0 $r connections held 6 s" ;; *) echo "1 $r" ;; esac
}

attack_syn_flood() {
	local rx0 rx1 t0 t1
	cli "$E2E_PY" "$ADV" synpcap "$E2E_TMP/syn.pcap" "$ADV_SYN_PPS" "$CLIMAC" "$SRVMAC" \
		"$SRV4" "$PORT_SYN" || { echo "1 synpcap failed"; return; }
	srv timeout --foreground 40 "$E2E_PY" "$ADV" listen "$PORT_SYN" 20 </dev/null >/dev/null 2>&1 &
	E2E_PIDS+=($!)
	e2e_wait_listen "$PORT_SYN"
	rx0=$(e2e_tel /sluice/ports 0.rx)
	t0=$(date +%s%N)
	cli timeout --foreground 40 tcpreplay -i "$CLI_IF" $ADV_SYN_RATE --duration="$ADV_SYN_SECS" \
		--loop=0 "$E2E_TMP/syn.pcap" >"$E2E_TMP/syn.out" 2>&1
	local rc=$?
	t1=$(date +%s%N)
	rx1=$(e2e_tel /sluice/ports 0.rx)
	local sent
	sent=$(sed -n 's/.*Successful packets: *\([0-9]*\).*/\1/p' "$E2E_TMP/syn.out" | head -1)
	pps "$E2E_TMP/syn.out" >"$E2E_TMP/syn.rate"
	echo "$rc tcpreplay sent ${sent:-?} SYNs at $(cat "$E2E_TMP/syn.rate") pps; sluice took $((rx1 - rx0)) frames on port 0 in $(( (t1 - t0) / 1000000 )) ms"
}
attack_mptcp_syn_flood() {
	local c0 j0 c1 j1 rc
	cli "$E2E_PY" "$ADV" mpsynpcap "$E2E_TMP/mpsyn.pcap" "$ADV_MPSYN_PPS" "$CLIMAC" "$SRVMAC" \
		"$SRV4" "$PORT_MPSYN" || { echo "1 mpsynpcap failed"; return; }
	srv timeout --foreground 40 "$E2E_PY" "$ADV" listen "$PORT_MPSYN" 15 </dev/null >/dev/null 2>&1 &
	E2E_PIDS+=($!)
	e2e_wait_listen "$PORT_MPSYN"
	c0=$(e2e_tel /sluice/proxy mptcp_syn_mp_capable)
	j0=$(e2e_tel /sluice/proxy mptcp_joins_unknown_token)
	cli timeout --foreground 40 tcpreplay -i "$CLI_IF" --pps="$ADV_MPSYN_PPS" --pps-multi=50 \
		--duration="$ADV_MPSYN_SECS" --loop=0 "$E2E_TMP/mpsyn.pcap" >"$E2E_TMP/mpsyn.out" 2>&1
	rc=$?
	c1=$(e2e_tel /sluice/proxy mptcp_syn_mp_capable)
	j1=$(e2e_tel /sluice/proxy mptcp_joins_unknown_token)
	[ "$rc" = 0 ] && [ "$((c1 - c0))" -gt 0 ] && [ "$((j1 - j0))" -gt 0 ] || rc=1
	echo "$rc tcpreplay sent MPTCP SYNs at $(pps "$E2E_TMP/mpsyn.out") pps; sluice counted $((c1 - c0)) MP_CAPABLE SYNs and $((j1 - j0)) joins with unknown tokens"
}
# pps TCPREPLAY.OUT: the rate tcpreplay reports it reached.
pps() { sed -n 's/^Rated: .*, \([0-9.]*\) pps.*/\1/p' "$1" | head -1; }

# Built before the attack starts (scapy takes seconds), so that the
# victims run while it is replayed.
MIXN=$(cli "$E2E_PY" "$ADV" mixpcap "$E2E_TMP/mix.pcap" "$CLIMAC" "$SRVMAC" "$CLI4" "$SRV4" "$PORT_MIX" 2>"$E2E_TMP/mix.err")
e2e_start_sluice "$CFG" || e2e_die "sluice start: $E2E_WHY"
sampler &
E2E_PIDS+=($!)
phase mix 0.2 attack_mix
phase ooo 0.3 attack_ooo
phase zero_window 2 attack_zero_window
phase mptcp_syn_flood 2 attack_mptcp_syn_flood
phase syn_flood 3 attack_syn_flood
syn_rate() {
	local r
	r=$(cat "$E2E_TMP/syn.rate" 2>/dev/null)
	E2E_WHY="${r:-?} SYNs/s reached, $ADV_SYN_PPS asked"
	awk -v r="${r:-0}" -v w="$ADV_SYN_PPS" 'BEGIN { exit !(r >= 0.95 * w) }'
}
e2e_check syn_flood_reaches_the_asked_rate syn_rate
# The flood left the table full of half-open connections; past
# [proxy] half_open_yield_after (1 s) a new SYN takes the place of the
# oldest, so the next connection is proxied again, not bridged.
proxied_again() {
	local i0 e0 i1 e1 out
	sleep 1.2
	i0=$(e2e_tel /sluice/proxy syn_intercepted)
	out=$(connects 2>&1; echo "$E2E_WHY")
	i1=$(e2e_tel /sluice/proxy syn_intercepted)
	e1=$(e2e_tel /sluice/proxy half_open_evicted)
	E2E_WHY="$(echo "$out" | tail -1); syn_intercepted +$((i1 - i0)), half_open_evicted $e1 in all"
	[ "$((i1 - i0))" -ge 1 ] && [ "$e1" -gt 0 ]
}
e2e_check syn_flood_then_a_new_connection_is_proxied_again proxied_again
e2e_log "proxy: $(e2e_tel /sluice/proxy 2>/dev/null | head -c 2000)"
e2e_check adversarial_clean_exit e2e_stop_sluice
e2e_finish
