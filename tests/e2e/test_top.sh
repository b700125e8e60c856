#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# sluice-top as an operator sees it: in a tmux pane (its own tmux server,
# on a socket named after this test), against a sluice that shapes the
# client's subscriber pipe while pings cross it. The captured screen must
# show both ports with their rx rates and totals, the subscriber with its
# rate, the queue delay, proxy and malformed lines; q must quit.
set -u
. "$(dirname "$0")/lib.sh"
E2E_TEST=top
ROOT=$(cd "$E2E_DIR/../.." && pwd)
TOP=${SLUICE_TOP:-$ROOT/tools/sluice-top}
TMUX_SOCK=sluice-e2e-top-$E2E_ID

e2e_require_tools tmux
e2e_setup
# Our tmux server goes before the namespaces do; it is ours alone (its own
# socket), so kill-server touches nothing else.
trap 'tmux -L "$TMUX_SOCK" kill-server 2>/dev/null; e2e_cleanup' EXIT
cp "$ROOT/config/examples/subscribers.csv" "$E2E_TMP/"
{
	cat "$ROOT/config/examples/subscribers.ini"
	printf '[proxy]\nintercept = 198.19.255.0/24\n'
} >"$E2E_TMP/top.ini"
e2e_start_sluice "$E2E_TMP/top.ini" || e2e_die "sluice start: $E2E_WHY"

# 100 echoes at 20/s: traffic for the whole time the view runs.
e2e_ping 4 3 0.1 >/dev/null 2>&1
# Directly, not through cli(): $! must be ping's own PID.
ip netns exec "$NS_CLI" ping -q -c 100 -i 0.05 "$SRV4" >/dev/null 2>&1 &
PING_PID=$!
E2E_PIDS+=("$PING_PID")

tmux -L "$TMUX_SOCK" -f /dev/null new-session -d -s top -x 180 -y 50 \
	"TERM=xterm $E2E_PY $TOP --file-prefix $SLUICE_PREFIX --interval 1" ||
	e2e_die "tmux new-session failed"

# Capture once the view has drawn at least two frames (rates need two).
screen() { tmux -L "$TMUX_SOCK" capture-pane -p -t top 2>/dev/null; }
top_shows_both_ports_with_rx_rates() {
	local i s p0 p1
	for i in $(seq 1 40); do
		sleep 0.25
		s=$(screen)
		p0=$(echo "$s" | awk '$1 == "0" && $2 == "subscribers"')
		p1=$(echo "$s" | awk '$1 == "1" && $2 == "internet"')
		# RX pps (column 3) is a rate once a second frame is up: not "-".
		[ -n "$p0" ] && [ -n "$p1" ] && [ "$(echo "$p0" | awk '{ print $3 }')" != "-" ] &&
			[ "$(echo "$p0" | awk '{ print $3 }')" != 0 ] && break
	done
	echo "$s" >"$E2E_TMP/screen.txt"
	[ -n "$p0" ] && [ -n "$p1" ] || { E2E_WHY="no port lines: $(head -5 "$E2E_TMP/screen.txt" | tr '\n' '|')"; return 1; }
	local rate total tel
	rate=$(echo "$p0" | awk '{ print $3 }') total=$(echo "$p0" | awk '{ print $NF }')
	tel=$(e2e_tel /sluice/ports 0.rx)
	# About 20 echoes/s arrive on port 0; the total shown is sluice's
	# own counter, read a moment before ours.
	awk -v r="$rate" 'BEGIN { exit !(r + 0 >= 5 && r + 0 <= 100) }' ||
		{ E2E_WHY="port 0 RX pps '$rate', want about 20"; return 1; }
	[ "$total" -ge 20 ] && [ "$total" -le "$tel" ] ||
		{ E2E_WHY="port 0 RX total $total, telemetry now $tel"; return 1; }
	E2E_WHY="port 0: $rate pps, total $total (telemetry $tel)"
}
e2e_check top_shows_both_ports_with_rx_rates top_shows_both_ports_with_rx_rates

top_shows_the_subscriber_rate_and_queue_delay() {
	local s=$E2E_TMP/screen.txt line
	grep -q '^QUEUE .*delay p50/p95/p99 ms' "$s" || { E2E_WHY="no queue delay header"; return 1; }
	grep -qE '^up +[0-9.]+[kMG]? ' "$s" || { E2E_WHY="no 'up' queue line"; return 1; }
	line=$(sed -n '/^TOP SUBSCRIBERS BY RATE/,/^TOP SUBSCRIBERS BY DROPS/p' "$s" | grep '198.18.0.0/24')
	[ -n "$line" ] || { E2E_WHY="198.18.0.0/24 not in the top list"; return 1; }
	# Echo requests go up (98 bytes at 20/s: about 16 kbit/s), replies down.
	local upr
	upr=$(echo "$line" | awk '{ print $3 }')
	[ "$upr" != 0 ] && [ "$upr" != "-" ] || { E2E_WHY="subscriber up rate '$upr': $line"; return 1; }
	E2E_WHY=$(echo "$line" | tr -s ' ')
}
e2e_check top_shows_the_subscriber_rate_and_queue_delay top_shows_the_subscriber_rate_and_queue_delay

top_shows_proxy_malformed_and_workers() {
	local s=$E2E_TMP/screen.txt
	grep -q '^PROXY  active 0 ' "$s" || { E2E_WHY="no PROXY line"; return 1; }
	grep -q '^MALFORMED  total 0 ' "$s" || { E2E_WHY="no MALFORMED line"; return 1; }
	grep -qE '^WORKERS busy  0@lcore[0-9]+ [0-9]+%' "$s" || { E2E_WHY="no worker busy share"; return 1; }
}
e2e_check top_shows_proxy_malformed_and_workers top_shows_proxy_malformed_and_workers

top_quits_on_q() {
	local i
	tmux -L "$TMUX_SOCK" send-keys -t top q
	for i in $(seq 1 30); do
		tmux -L "$TMUX_SOCK" has-session -t top 2>/dev/null || return 0
		sleep 0.1
	done
	E2E_WHY="still running 3 s after q"
	return 1
}
e2e_check top_quits_on_q top_quits_on_q

_e2e_kill_child "$PING_PID" TERM
wait "$PING_PID" 2>/dev/null
e2e_check top_sluice_exits_cleanly e2e_stop_sluice
e2e_finish
