#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# e2e-timeout: 420
#
# MPTCP termination with two workers (issue 16, item 7), on the two-path
# topology of tests/e2e/mptcp_lib.sh: sluice runs two lcores and every
# net_af_packet port two queue pairs (qpairs=2: the kernel's PACKET_FANOUT
# hash spreads flows over the workers). An MPTCP connection lives on the
# worker its token names; its second subflow's MP_JOIN SYN, from another
# source port, lands by the hash on either worker. When it lands on the
# other one, that worker must hand the join and every later segment of
# the subflow to the owner over the hand-off rings, and the connection
# still gets its two subflows.
#
# Which worker a join lands on is the kernel's hash of its 4-tuple, so
# each check repeats sha256-checked transfers (new ports each time) until
# one has two subflows AND moved sluice's mptcp_joins_handed_over (a join
# that landed on the other worker and was handed over): at most
# E2E_MPTCP_WORKERS_TRIES (12) transfers, each landing there about half
# the time. With hand-over off (E2E_MPTCP_REDIRECT_ENTRIES=0: [proxy]
# mptcp_redirect_entries = 0) such a join is refused with RST and the
# checks fail.
set -u
# Two lcores for sluice: the first two CPUs this test may use. The load
# generators share them (there is no third core to keep them off).
E2E_LCORE=${E2E_LCORE:-$(/usr/bin/python3 -c 'import os; print(",".join(map(str, sorted(os.sched_getaffinity(0))[:2])))')}
E2E_LOAD_CPUS=
. "$(dirname "$0")/mptcp_lib.sh"
E2E_TEST=mptcp_workers
E2E_AFP_ARGS="qpairs=2${E2E_AFP_ARGS:+,$E2E_AFP_ARGS}"
TRIES=${E2E_MPTCP_WORKERS_TRIES:-12}
ENTRIES=${E2E_MPTCP_REDIRECT_ENTRIES:-4096}

mptcp_setup
case $E2E_LCORE in
*,*) ;;
*) e2e_skip two_workers_hand_joins_to_the_owner "one CPU only ($E2E_LCORE): two workers need two"
   e2e_finish ;;
esac
if ! mptcp_proxy_supported || ! "$SLUICE" --config-keys 2>/dev/null | grep -q '^\[proxy\] mptcp_redirect_entries = '; then
	e2e_skip two_workers_hand_joins_to_the_owner "this sluice has no [proxy] mptcp_redirect_entries"
	e2e_finish
fi

CONF=$E2E_TMP/mptcp-workers.ini
cat >"$CONF" <<EOF
[proxy]
intercept = 0.0.0.0/0, ::/0
mptcp = on
mptcp_redirect_entries = $ENTRIES
EOF

proxy_counter() {
	e2e_tel /sluice/proxy 2>/dev/null | "$E2E_PY" -c 'import json, sys
print(json.load(sys.stdin).get(sys.argv[1], 0))' "$1" 2>/dev/null || echo 0
}

started_two_workers() {
	E2E_WHY=$(grep -o '[0-9]* worker(s)' "$SLUICE_LOG" | head -1)
	[ "${E2E_WHY%% *}" = 2 ]
}

PORT=7400
# until_handed MIN WHAT CMD...: runs CMD, one sha256-checked transfer on
# a new PORT each time (CMD reads $PORT), until one had two subflows,
# its join handed over from the worker it landed on to the owner and at
# least MIN subflow segments handed over; at most TRIES transfers. WHAT
# says what the one that did carried.
until_handed() {
	local min=$1 what=$2 i h0 h1 s0 s1 sf log=""
	shift 2
	for i in $(seq 1 "$TRIES"); do
		PORT=$((PORT + 1))
		h0=$(proxy_counter mptcp_joins_handed_over) s0=$(proxy_counter mptcp_subflow_segments_handed_over)
		"$@" || { E2E_WHY="transfer $i: $E2E_WHY;$log"; return 1; }
		h1=$(proxy_counter mptcp_joins_handed_over) s1=$(proxy_counter mptcp_subflow_segments_handed_over)
		sf=$(mptcp_kv "$XFER_CLI" subflows)
		log+=" [$i: subflows=$sf joins_handed=+$((h1 - h0)) segments_handed=+$((s1 - s0)) gap=$(mptcp_kv "$XFER_CLI" gap)]"
		if [ "$sf" -ge 2 ] 2>/dev/null && [ $((h1 - h0)) -ge 1 ] && [ $((s1 - s0)) -ge "$min" ]; then
			E2E_WHY="transfer $i of at most $TRIES: $what;$log"
			return 0
		fi
	done
	E2E_WHY="no transfer in $TRIES had two subflows with its join handed over and $min subflow segments handed:$log; sluice: $(mptcp_sluice_counters | tr ' ' '\n' | grep -E 'hand|redirect|other_worker|joins' | tr '\n' ' ')"
	return 1
}

# handed DIR FAMILY: transfers until one has two subflows with its join
# handed over from the worker it landed on to the owner.
handed() {
	local dir=$1 dst=$SRV4 size=10000000 opt=()
	[ "$2" = 6 ] && dst=$SRV6
	# An upload paced at 32 Mbit/s lasts a second: time for the join.
	[ "$dir" = up ] && size=4000000 opt=(--rate 32)
	until_handed 1 "$size bytes intact" _handed_xfer "$dir" "$dst" "$size" "${opt[@]}"
}
_handed_xfer() { mptcp_xfer "$1" "$2" "$3" "$PORT" 30 "${@:4}"; }

# handed_failover: a paced 20 MB upload whose first path (eth0) goes
# down 2 MB in, repeated (new ports, the path back up between tries)
# until the join landed on the worker that does not own the connection.
# Then the second subflow carries the rest alone, and every one of its
# segments, the client's reinjections included, crosses a hand-off ring
# to the owner: at least 5,000 subflow segments handed over in that
# transfer (about 12,500 are its data), and every byte arrives intact.
handed_failover() {
	until_handed 5000 "20000000 bytes intact after eth0 went down" _failover_xfer
}
_failover_xfer() {
	local at=$E2E_TMP/hf.at rc
	mptcp_on_file "$at" mptcp_path down 0
	mptcp_xfer up "$SRV4" 20000000 "$PORT" 60 --rate 64 --at 2000000 "$at"
	rc=$?
	mptcp_on_file_done
	mptcp_path up 0
	return $rc
}

counters_exported() {
	local c
	c=$(mptcp_sluice_counters)
	E2E_WHY=$(echo "$c" | tr ' ' '\n' | grep -E 'handed|redirect|handoff|other_worker' | tr '\n' ' ')
	for k in mptcp_joins_handed_over mptcp_subflow_segments_handed_over mptcp_redirect_table_full \
		mptcp_handoff_ring_full_drops mptcp_segments_from_other_workers; do
		echo "$c" | tr ' ' '\n' | grep -q "^$k=" || { E2E_WHY="no $k in /sluice/proxy; $E2E_WHY"; return 1; }
	done
	[ "$(proxy_counter mptcp_handoff_ring_full_drops)" = 0 ] ||
		{ E2E_WHY="ring drops: $E2E_WHY"; return 1; }
}

exit_report() {
	E2E_WHY=$(grep -o 'mptcp_joins_handed_over=[0-9]*\|mptcp_handoff_ring_full_drops=[0-9]*' "$SLUICE_LOG" | tr '\n' ' ')
	grep -q 'mptcp_joins_handed_over=[1-9]' "$SLUICE_LOG" &&
		grep -q 'mptcp_handoff_ring_full_drops=' "$SLUICE_LOG"
}

e2e_start_sluice "$CONF" || e2e_die "sluice start: $E2E_WHY"
mptcp_warmup || e2e_die "warm-up: $E2E_WHY"
e2e_check mptcp_sluice_runs_two_workers started_two_workers
e2e_check mptcp4_upload_keeps_a_join_that_landed_on_the_other_worker handed up 4
e2e_check mptcp4_download_keeps_a_join_that_landed_on_the_other_worker handed down 4
e2e_check mptcp6_upload_keeps_a_join_that_landed_on_the_other_worker handed up 6
e2e_check mptcp4_upload_fails_over_to_a_subflow_on_the_other_worker handed_failover
e2e_check mptcp_hand_over_counters_are_in_telemetry_and_no_frame_was_dropped counters_exported
e2e_check mptcp_two_workers_clean_exit e2e_stop_sluice
e2e_check mptcp_exit_report_shows_the_hand_over_counters exit_report
e2e_finish
