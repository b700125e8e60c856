#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The aqm stage with real TCP: the client is a subscriber shaped to
# 20 Mbit/s each way (subscriber CSV, FQ-CoDel). iperf3 must reach 85-100%
# of the shaped rate, measured as payload against the rate's payload share.
# Then, in one transfer, a SIGHUP reload halves the rate and a telemetry
# command raises it: the throughput must follow, and neither change may
# drop a queued packet (hosts use ECN, so CoDel marks instead of dropping).
set -u
. "$(dirname "$0")/lib.sh"
E2E_TEST=aqm

AQM_RATE=${AQM_RATE:-20}           # Mbit/s, both directions
AQM_SECS=${AQM_SECS:-4}
AQM_MIN_PCT=${AQM_MIN_PCT:-85}
# TCP payload per Ethernet frame the shaper counts: 1448 of 1514 bytes
# over IPv4 (14 Ethernet + 20 IPv4 + 32 TCP with timestamps), 1428 over IPv6.
AQM_SHARE4=0.9564 AQM_SHARE6=0.9432

e2e_require_tools dpdk-telemetry.py
e2e_setup
for ns in "$NS_CLI" "$NS_SRV"; do
	_e2e_nsx "$ns" sysctl -qw net.ipv4.tcp_ecn=1 >/dev/null
done

csv=$E2E_TMP/subscribers.csv
ini=$E2E_TMP/aqm.ini
write_csv() {
	{
		echo "prefix,down,up"
		echo "$CLI4/32,$1,$1"
		echo "$CLI6/128,$1,$1"
	} >"$csv.tmp" && mv "$csv.tmp" "$csv"
}
write_csv "${AQM_RATE}mbit"
cat >"$ini" <<EOF
[aqm]
ports = 0
subscribers = subscribers.csv
default = pass
EOF
e2e_start_sluice "$ini" || e2e_die "sluice start: $E2E_WHY"

# Goodput at the receiver against the shaped rate's payload equivalent,
# after the first second (slow start fills the queue, and iperf3's own
# receiver total also counts connection set-up time).
AQM_PORT=5290
shaped() {
	local name=$1 fam=$2; shift 2
	local dst=$SRV4 port=$AQM_PORT spid json res
	AQM_PORT=$((AQM_PORT + 1))
	local share=$AQM_SHARE4
	[ "$fam" = 6 ] && dst=$SRV6 share=$AQM_SHARE6
	json=$E2E_TMP/iperf-$name.json
	srv timeout --foreground $((AQM_SECS + 30)) iperf3 -s -1 -J -B "$dst" -p $port \
		</dev/null >"$E2E_TMP/iperf-$name-server.log" 2>&1 &
	spid=$!; E2E_PIDS+=("$spid")
	e2e_wait_listen "$port"
	e2e_cpu_mark
	e2e_run cli timeout --foreground $((AQM_SECS + 20)) iperf3 -c "$dst" -p $port -J \
		-t "$AQM_SECS" --get-server-output --connect-timeout 5000 "$@" \
		</dev/null >"$json" 2>"$json.err"
	local cpu
	cpu=$(e2e_cpu_pct)
	wait "$spid" 2>/dev/null
	res=$("$E2E_PY" - "$json" "$AQM_RATE" "$share" "$AQM_MIN_PCT" "$*" "$cpu" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
    rate, share, lo = float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
    cpu = float(sys.argv[6])
    # A shaper only sends while it runs: when the machine took sluice's
    # core away, the link time lost is lost (no catch-up bursts), so the
    # floor follows the share of time sluice was on its CPU. The ceiling
    # (never faster than the rate) holds whatever the machine does.
    if cpu < 95:
        lo = min(lo, 0.85 * cpu)
    iv = j["intervals"] if "-R" in sys.argv[5].split() else j["server_output_json"]["intervals"]
    iv = [x["sum"] for x in iv][1:]
    mbps = sum(x["bytes"] for x in iv) * 8 / sum(x["seconds"] for x in iv) / 1e6
except Exception as e:
    print("ERR no usable iperf3 report (%s)" % e); sys.exit()
pct = 100 * mbps / (rate * share)
print("%s %.1f Mbit/s = %.1f%% of %g Mbit/s payload-equivalent, %s retransmits, sluice on CPU %.0f%% (floor %.0f%%)"
      % ("OK" if lo <= pct <= 102 else "ERR", mbps, pct, rate,
         j["end"]["sum_sent"].get("retransmits", "?"), cpu, lo))
PY
)
	case "$res" in
	OK*) e2e_pass "$name" "${res#OK }" ;;
	*) e2e_fail "$name" "${res#ERR } (want floor..102%)" ;;
	esac
}
shaped aqm_shaped_tcp4_up 4
shaped aqm_shaped_tcp4_down 4 -R
shaped aqm_shaped_tcp6_up 6

drops() {
	e2e_tel /sluice/aqm | "$E2E_PY" -c '
import json, sys
a = json.load(sys.stdin)
print(sum(a[d][k] for d in ("up", "down") for k in ("drop_codel", "drop_overflow", "drop_memory", "drop_blue", "drop_ecn", "handoff_drops")))'
}

# One 9 s transfer: 3 s at 20, SIGHUP to 10, 3 s later aqm_set to 30.
runtime_changes() {
	local port=5299 json=$E2E_TMP/iperf-change.json spid cpid d0 d1 d2 d3 i
	srv timeout --foreground 40 iperf3 -s -1 -J -B "$SRV4" -p $port \
		</dev/null >"$E2E_TMP/iperf-change-server.log" 2>&1 &
	spid=$!; E2E_PIDS+=("$spid")
	e2e_wait_listen "$port"
	e2e_cpu_mark
	cli timeout --foreground 40 iperf3 -c "$SRV4" -p $port -J -t 9 \
		--get-server-output </dev/null >"$json" 2>"$json.err" &
	cpid=$!; E2E_PIDS+=("$cpid")
	sleep 2.5
	d0=$(drops)
	write_csv 10mbit
	kill -HUP "$SLUICE_PID"
	for i in $(seq 1 30); do
		grep -q 'aqm: reloaded' "$SLUICE_LOG" && break
		sleep 0.1
	done
	d1=$(drops)
	sleep 3
	d2=$(drops)
	local set
	set=$(e2e_tel "/sluice/aqm_set,$CLI4/32,30mbit,30mbit" status)
	d3=$(drops)
	wait "$cpid"
	local cpu
	cpu=$(e2e_cpu_pct)
	wait "$spid" 2>/dev/null
	if ! grep -q 'aqm: reloaded' "$SLUICE_LOG"; then
		E2E_WHY="no 'aqm: reloaded' in the log after SIGHUP: $(grep 'aqm:' "$SLUICE_LOG" | tail -1)"
		return 1
	fi
	if [ "$set" != '"applied"' ]; then
		E2E_WHY="/sluice/aqm_set answered $set"
		return 1
	fi
	local res
	res=$("$E2E_PY" - "$json" "$cpu" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
cpu = float(sys.argv[2])
# Receiver-side seconds: what the shaper lets through. (The sender's own
# seconds also count what it pushed into queues, so they can exceed it.)
iv = [x["sum"]["bits_per_second"] / 1e6
      for x in j.get("server_output_json", {}).get("intervals", [])]
if len(iv) < 9:
    print("ERR only %d intervals" % len(iv)); sys.exit()
# SIGHUP lands at ~2.5 s and aqm_set at ~5.5 s: judge whole seconds
# well inside each phase.
a, b, c = iv[1], sum(iv[3:5]) / 2, sum(iv[7:9]) / 2
# At 20 Mbit/s b would be ~19 and c could not pass 20 without the changes.
# The rate after SIGHUP may never exceed 10; with sluice starved of its
# CPU the link loses time in proportion, so the floors scale with it.
k = min(1.0, cpu / 95)
ok = 5 * k <= b <= 10.5 and c >= 1.8 * b and c >= 18 * k
print("%s %.1f %.1f %.1f (sluice on CPU %.0f%%)" % ("OK" if ok else "ERR", a, b, c, cpu))
PY
)
	E2E_WHY="Mbit/s at 20 -> 10 (SIGHUP) -> 30 (aqm_set): ${res#* }; drops around SIGHUP $d0->$d1, around aqm_set $d2->$d3"
	case "$res" in OK*) ;; *) return 1 ;; esac
	# A change may not drop what is queued: no drop appears at the
	# moment of either change (with ECN hosts there should be none at all).
	[ "$d0" = "$d1" ] && [ "$d2" = "$d3" ] || return 1
}
if runtime_changes; then e2e_pass aqm_reload_and_telemetry_change_rates_without_drops "$E2E_WHY"
else e2e_fail aqm_reload_and_telemetry_change_rates_without_drops "$E2E_WHY"; fi

bad_reload() {
	echo "198.18.0.1/32,fast,10mbit" >"$csv"
	local before
	before=$(grep -c 'aqm: reload rejected' "$SLUICE_LOG")
	kill -HUP "$SLUICE_PID"
	for i in $(seq 1 30); do
		[ "$(grep -c 'aqm: reload rejected' "$SLUICE_LOG")" -gt "$before" ] && break
		sleep 0.1
	done
	local line
	line=$(grep 'aqm: reload rejected' "$SLUICE_LOG" | tail -1)
	case "$line" in
	*"subscribers.csv:1: bad down rate"*) E2E_WHY=${line#*rejected, } ;;
	*) E2E_WHY="want a rejection naming subscribers.csv:1, got: '$line'"; return 1 ;;
	esac
	# The table is unchanged: the subscriber still has the telemetry rate.
	local rate
	rate=$(e2e_tel "/sluice/aqm_pipe,$CLI4/32" rate_down)
	[ "$rate" = 30000000 ] || { E2E_WHY="rate_down is $rate after a rejected reload"; return 1; }
}
if bad_reload; then e2e_pass aqm_bad_reload_changes_nothing "$E2E_WHY"
else e2e_fail aqm_bad_reload_changes_nothing "$E2E_WHY"; fi

final() {
	e2e_stop_sluice || return 1
	local up down
	up=$(grep '^aqm dir=up ' "$SLUICE_LOG" | tail -1)
	down=$(grep '^aqm dir=down ' "$SLUICE_LOG" | tail -1)
	E2E_WHY="up: sent=$(e2e_field "$up" sent) ce=$(e2e_field "$up" ce_marked) drop_codel=$(e2e_field "$up" drop_codel) p50=$(e2e_field "$up" p50_us)us p99=$(e2e_field "$up" p99_us)us; down: sent=$(e2e_field "$down" sent) ce=$(e2e_field "$down" ce_marked) drop_codel=$(e2e_field "$down" drop_codel) p50=$(e2e_field "$down" p50_us)us p99=$(e2e_field "$down" p99_us)us"
	[ "$(e2e_field "$up" backlog_pkts)" = 0 ] || { E2E_WHY="backlog left: $up"; return 1; }
}
if final; then e2e_pass aqm_clean_exit "$E2E_WHY"; else e2e_fail aqm_clean_exit "$E2E_WHY"; fi
e2e_finish
