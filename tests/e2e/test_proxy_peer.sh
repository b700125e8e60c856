#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The proxy's loss recovery against a scripted TCP peer (tests/e2e/tcp_peer.py)
# that misbehaves on demand, as the kernel cannot: it drops a segment and
# then its retransmission, reorders and duplicates segments, and repeats its
# ACKs. The kernel's TCP in the client namespace connects to 198.18.0.3, an
# address no kernel owns: a static neighbour entry sends its frames to the
# server namespace's MAC, sluice terminates the connection and opens its
# own to 198.18.0.3, and the peer, reading the server veth raw, answers as
# that address. Each scenario is one connection; each checks the bytes
# (sha256), what the peer saw on the wire, and sluice's counters (no RTO).
set -u
. "$(dirname "$0")/lib.sh"
E2E_TEST=proxy_peer
PEER=$E2E_DIR/tcp_peer.py
VADDR=198.18.0.3

e2e_require_tools sha256sum
"$E2E_PY" -c 'import scapy' 2>/dev/null || e2e_die "scapy missing (apt-get install python3-scapy)"
e2e_setup
SRV_MAC=$(ip netns exec "$NS_SRV" cat "/sys/class/net/$SRV_IF/address") ||
	e2e_die "no MAC for $SRV_IF"
ip -n "$NS_CLI" neigh replace "$VADDR" lladdr "$SRV_MAC" dev "$CLI_IF" nud permanent ||
	e2e_die "static neighbour for $VADDR failed"

# No scenario may need an RTO (each checks tcp_rto_expired); rto_min = 1s
# keeps a peer that the machine's load schedules late (scapy, 100-300 ms
# behind on a busy machine) from firing one before the loss recovery
# under test acts.
CFG=$E2E_TMP/peer.ini
printf '[proxy]\nintercept = %s/32\nrto_min = 1s\n' "$VADDR" >"$CFG"
e2e_start_sluice "$CFG" || e2e_die "sluice start: $E2E_WHY"

# peer_run NAME PORT MODE [BYTES]: the peer runs scenario NAME on PORT
# while the client runs client-MODE against it; /sluice/proxy before and
# after go to NAME.tel0 and NAME.tel1, the client's output to NAME.cli.
peer_run() {
	local name=$1 port=$2 mode=$3 n=${4:-} spid i
	e2e_tel /sluice/proxy >"$E2E_TMP/$name.tel0" || { E2E_WHY="no telemetry"; return 1; }
	srv timeout --foreground 60 "$E2E_PY" "$PEER" serve "$SRV_IF" "$VADDR" "$port" \
		"$name" "$E2E_TMP/$name.json" 2>"$E2E_TMP/$name.peer.err" &
	spid=$!; E2E_PIDS+=("$spid")
	for i in $(seq 1 100); do
		grep -q '^ready' "$E2E_TMP/$name.peer.err" && break
		sleep 0.1
	done
	e2e_run cli timeout --foreground 60 "$E2E_PY" "$PEER" "client-$mode" "$VADDR" "$port" \
		$n >"$E2E_TMP/$name.cli" 2>&1
	wait "$spid"
	# Let sluice's last ACKs and timers settle before the counters.
	sleep 0.3
	e2e_tel /sluice/proxy >"$E2E_TMP/$name.tel1" || { E2E_WHY="no telemetry"; return 1; }
}

# scenario NAME PORT send|recv [BYTES]: the peer runs NAME on PORT while
# the client sends BYTES to it (send) or reads what it sends (recv); then
# the checker below judges the peer's report, the client's output and the
# change of /sluice/proxy over the connection.
scenario() {
	local name=$1 out
	peer_run "$@" || return 1
	out=$("$E2E_PY" - "$name" "$E2E_TMP" <<'PY'
import json, sys
name, d = sys.argv[1], sys.argv[2]
errs = []
try:
    rep = json.load(open("%s/%s.json" % (d, name)))
except Exception as e:
    print("ERR no report from the peer (%s): %s" % (
        e, open("%s/%s.peer.err" % (d, name)).read()[-300:].replace("\n", " ")))
    sys.exit()
t0 = json.load(open("%s/%s.tel0" % (d, name)))
t1 = json.load(open("%s/%s.tel1" % (d, name)))
cli = open("%s/%s.cli" % (d, name)).read().strip()
f = rep["facts"]
delta = lambda k: t1["tcp_" + k] - t0["tcp_" + k]
errs += rep["errors"]

# Bytes: what one end sent is what the other got, exactly once.
want, got = (cli, f.get("received")) if name in ("lost_rtx", "reorder_rx", "dup_ack") \
    else (f.get("sent"), cli)
if not got or got != want:
    errs.append("bytes: sent '%s', received '%s'" % (want, got))
if t1["connections_opened"] - t0["connections_opened"] != 1:
    errs.append("connections_opened grew by %d, want 1" %
                (t1["connections_opened"] - t0["connections_opened"]))
for k in ("rto_expired", "connection_timeouts", "out_of_order_dropped"):
    if delta(k) != 0:
        errs.append("tcp_%s grew by %d" % (k, delta(k)))
info = ["rto_expired+0", "retransmits+%d" % delta("retransmits"),
        "tlp+%d" % delta("tail_loss_probes")]

if name == "lost_rtx":
    # The second loss of the same segment is RACK's (RFC 8985): a segment
    # sent after the retransmission was SACKed.
    if delta("rack_marked_lost") < 2:
        errs.append("tcp_rack_marked_lost grew by %d, want >= 2" % delta("rack_marked_lost"))
    if delta("retransmits") < 2:
        errs.append("tcp_retransmits grew by %d, want >= 2" % delta("retransmits"))
    gap = f.get("rtx2_gap_ms")
    if gap is not None and gap >= 1000:
        errs.append("second retransmission %.0f ms after the first" % gap)
    if f.get("other_retransmissions"):
        errs.append("segments at offsets %s resent too" % f["other_retransmissions"])
    info += ["sent at %s ms" % f.get("times_ms"), "rack_marked_lost+%d" % delta("rack_marked_lost"),
             "fast_retransmits+%d" % delta("fast_retransmits")]
elif name == "reorder":
    info += ["%d immediate ACKs with the right SACK blocks" % f.get("immediate_acks_matched", 0)]
elif name == "dup_data":
    n = f.get("duplicates_sent", 0)
    if delta("dsack_sent") < n:
        errs.append("tcp_dsack_sent grew by %d for %d duplicates" % (delta("dsack_sent"), n))
    info += ["%d duplicates, %d D-SACK blocks seen, dsack_sent+%d" % (
        n, f.get("dsack_blocks_seen", 0), delta("dsack_sent"))]
elif name == "dup_ack":
    # SACK is on, so repeated ACKs without new SACK information are no
    # loss signal (RFC 6675 2): nothing may be retransmitted.
    for k in ("retransmits", "fast_retransmits", "rack_marked_lost"):
        if delta(k) != 0:
            errs.append("tcp_%s grew by %d with every ACK sent three times" % (k, delta(k)))
elif name == "reorder_rx":
    sp = f.get("spurious_retransmissions", [])
    # Only a delayed segment may be resent: the late original's ACK must
    # not be taken for the retransmission's (RFC 8985 6.2 step 2), which
    # would mark every segment still in flight lost.
    if f.get("other_retransmissions"):
        errs.append("segments at offsets %s resent, besides the two delayed ones"
                    % f["other_retransmissions"])
    if sp and delta("dsack_received") < 1:
        errs.append("%d spurious retransmissions D-SACKed, tcp_dsack_received grew by %d"
                    % (len(sp), delta("dsack_received")))
    info += ["%d of 2 delayed segments retransmitted spuriously" % len(sp),
             "dsack_received+%d" % delta("dsack_received"),
             "fast_retransmits+%d" % delta("fast_retransmits")]
info.append("%.1f s" % f.get("seconds", 0))
print(("ERR " + "; ".join(errs)) if errs else ("OK " + ", ".join(info)))
PY
)
	case "$out" in
	OK*) E2E_WHY=${out#OK }; return 0 ;;
	esac
	E2E_WHY=${out#ERR }
	return 1
}


e2e_check peer_lost_retransmission scenario lost_rtx 8001 send 200000
e2e_check peer_reordered_data scenario reorder 8002 recv
e2e_check peer_duplicated_data scenario dup_data 8003 recv
e2e_check peer_duplicated_acks scenario dup_ack 8004 send 200000
e2e_check peer_reordered_acks scenario reorder_rx 8005 send 200000

# The peer resets the connection with data of the client's in flight,
# then sends what a closed Linux socket's end sends while segments still
# arrive (RSTs at one number, stray data). sluice resets the client's
# leg; the leftovers of both legs must be answered as closed ports answer
# them (an RST for the stray data, nothing for an RST) and counted, not
# bridged to the other end as frames of no connection.
reset_strays() {
	local name=reset_strays out
	peer_run "$name" 8006 reset || return 1
	out=$("$E2E_PY" - "$name" "$E2E_TMP" <<'PY'
import json, sys
name, d = sys.argv[1], sys.argv[2]
try:
    rep = json.load(open("%s/%s.json" % (d, name)))
except Exception as e:
    print("ERR no report from the peer (%s)" % e)
    sys.exit()
t0 = json.load(open("%s/%s.tel0" % (d, name)))
t1 = json.load(open("%s/%s.tel1" % (d, name)))
delta = lambda k: t1[k] - t0[k]
errs = list(rep["errors"])
f = rep["facts"]
cli = open("%s/%s.cli" % (d, name)).read().strip()
if cli != "RESET":
    errs.append("client: '%s', want RESET" % cli[-200:])
if delta("connections_reset") != 1:
    errs.append("connections_reset grew by %d, want 1" % delta("connections_reset"))
# The peer's three RSTs and two data segments at least, and whatever
# the client still had in flight when its leg was reset.
if delta("tcp_segments_after_reset") < 5:
    errs.append("tcp_segments_after_reset grew by %d, want >= 5" % delta("tcp_segments_after_reset"))
if delta("segments_not_owned") != 0:
    errs.append("segments_not_owned grew by %d: leftovers bridged" % delta("segments_not_owned"))
if delta("tcp_resets_remembered") != 2:
    errs.append("tcp_resets_remembered grew by %d, want 2 (both legs)" % delta("tcp_resets_remembered"))
print(("ERR " + "; ".join(errs)) if errs else
      "OK %d RSTs answered the 2 stray data segments; segments_after_reset+%d, "
      "segments_not_owned+0, resets_remembered+2" % (f["rst_answers"], delta("tcp_segments_after_reset")))
PY
)
	case "$out" in
	OK*) E2E_WHY=${out#OK }; return 0 ;;
	esac
	E2E_WHY=${out#ERR }
	return 1
}
e2e_check peer_reset_leftovers reset_strays

final() {
	e2e_stop_sluice || return 1
	grep -q '^proxy connections_active=0 ' "$SLUICE_LOG" ||
		{ E2E_WHY="exit report: $(grep '^proxy connections_active' "$SLUICE_LOG")"; return 1; }
	E2E_WHY="exit 0, mempool at baseline, $(grep '^proxy tcp' "$SLUICE_LOG" | cut -c1-200)"
}
e2e_check peer_clean_exit final
e2e_finish
