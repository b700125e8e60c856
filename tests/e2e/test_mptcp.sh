#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# e2e-timeout: 660
#
# Multipath TCP through sluice, on the two-path topology of
# tests/e2e/mptcp_lib.sh (4 ports, 2 pairs), the Linux kernel's MPTCP as
# the client and an MPTCP-capable kernel listener as the server.
#
# Two phases, the same checks in each:
#   bridged  sluice with no configuration: kernel MPTCP end to end, the
#            baseline. Must pass today.
#   proxied  config/examples/mptcp-proxy.ini ([proxy] mptcp = on): sluice
#            terminates MPTCP, and every check also asserts that it did:
#            the client's socket is MPTCP with its subflows while the
#            server's is plain TCP (TCP_IS_MPTCP 0, although it listens
#            as MPTCP), the server's kernel never saw an MPTCP option
#            (nstat MPTcpExt* and a capture on its veths), and sluice's
#            /sluice/proxy shows mptcp_* counters. While this sluice does
#            not know [proxy] mptcp, each of its checks is a SKIP line.
#
# E2E_MPTCP_BIG=1 adds 1 GB transfers (about 8 GB more through each
# phase: give it E2E_TEST_TIMEOUT=1500); E2E_MPTCP_NCONN (1000) sets the
# concurrent connections, E2E_MPTCP_BUDGET (240) the seconds each phase's
# checks may take. E2E_MPTCP_PROXY_CONF (config/examples/
# mptcp-proxy.ini) is the proxied phase's configuration, and
# E2E_MPTCP_FORCE=1 runs that phase even when sluice lacks the key (with
# config/examples/proxy-all-tcp.ini its checks must fail: the MPTCP SYN
# is then answered as plain TCP). To repeat one check: E2E_MPTCP_PHASES
# ("bridged proxied") names the phases to run, E2E_MPTCP_CHECKS (an
# extended regex) the checks of each, by name without the phase prefix;
# the others print nothing.
set -u
. "$(dirname "$0")/mptcp_lib.sh"
. "$(dirname "$0")/stream_xfer.sh"   # stream_mbps
E2E_TEST=mptcp
ROOT=$(cd "$E2E_DIR/../.." && pwd)
PEER=$E2E_DIR/stream_peer.py
JOIN=$E2E_DIR/mptcp_join.py
NCONN=${E2E_MPTCP_NCONN:-1000}
SIZES=(1 1000000 100000000)
[ -n "${E2E_MPTCP_BIG:-}" ] && SIZES+=(1000000000)
SPOOF4=198.18.0.10   # the forged joins' source: no kernel owns it

e2e_require_tools nstat tc tshark
mptcp_setup
for ns in "$NS_CLI" "$NS_SRV"; do
	# IPv6 addresses survive a path going down; many connections fit.
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.keep_addr_on_down=1 \
		net.ipv6.conf.eth0.keep_addr_on_down=1 net.ipv6.conf.eth1.keep_addr_on_down=1 \
		net.core.somaxconn=4096 net.ipv4.tcp_max_syn_backlog=4096
done
ip netns exec "$NS_CLI" sysctl -qw net.ipv4.ip_local_port_range="20000 60999"
# Answers to the forged joins' spoofed source go back to the client's eth0.
ip -n "$NS_SRV" neigh replace "$SPOOF4" lladdr "$(_mptcp_mac "$NS_CLI" "$CLI_IF")" \
	dev "$SRV_IF" nud permanent
SRV_MAC0=$(_mptcp_mac "$NS_SRV" "$SRV_IF")

human() {
	case $1 in
	1) echo 1B ;; 1000000) echo 1MB ;; 100000000) echo 100MB ;;
	1000000000) echo 1GB ;; *) echo "${1}B" ;;
	esac
}

PORT=7000
next_port() { PORT=$((PORT + 1)); }

# What a transfer's two ends say must fit the phase: the client is MPTCP;
# the server is MPTCP through the bridge and plain TCP through the proxy.
ends_fit() {
	local cm sm want_s=1
	[ "$PHASE" = proxied ] && want_s=0
	cm=$(mptcp_kv "$XFER_CLI" is_mptcp) sm=$(mptcp_kv "$XFER_SRV" is_mptcp)
	if [ "$cm" != 1 ] || [ "$sm" != "$want_s" ]; then
		E2E_WHY="client is_mptcp=$cm (want 1), server is_mptcp=$sm (want $want_s)"
		return 1
	fi
}

# xfer DIR FAMILY SIZE: one transfer, intact, ends as the phase says.
xfer() {
	local dst=$SRV4 to=20
	[ "$2" = 6 ] && dst=$SRV6
	[ "$3" -gt 1000000 ] && to=60
	[ "$3" -ge 1000000000 ] && to=200
	next_port
	mptcp_xfer "$1" "$dst" "$3" "$PORT" "$to" "${@:4}" || return 1
	ends_fit || return 1
	E2E_WHY="$3 bytes in $XFER_SECS s"
	[ "$3" -ge 1000000 ] && E2E_WHY+=", $(stream_mbps "$3" "$XFER_SECS") Mbit/s"
	E2E_WHY+=", client $XFER_CLI"
}

# Two subflows, seen from the client's MPTCP_INFO and by ss -M / ss -ti
# while a paced 8 MB upload runs.
two_subflows() {
	local dst=$SRV4 cout ssm sst spid cpid
	next_port
	cout=$E2E_TMP/sf.cli
	srv timeout --foreground 30 "$E2E_PY" "$MPTCP_PEER" sink "$PORT" >"$E2E_TMP/sf.srv" 2>&1 &
	spid=$!; E2E_PIDS+=("$spid")
	e2e_wait_listen "$PORT" || { E2E_WHY="server did not listen"; return 1; }
	cli timeout --foreground 30 "$E2E_PY" "$MPTCP_PEER" send "$dst" "$PORT" 8000000 1 --rate 32 \
		>"$cout" 2>&1 &
	cpid=$!; E2E_PIDS+=("$cpid")
	sleep 1
	ssm=$(ip netns exec "$NS_CLI" ss -MHn 2>/dev/null | awk -v p=":$PORT" '{ for (i = 1; i <= NF; i++) if (substr($i, length($i) - length(p) + 1) == p) { n++; break } } END { print n + 0 }')
	sst=$(ip netns exec "$NS_CLI" ss -tinH "dport = :$PORT" 2>/dev/null | grep -c 'tcp-ulp-mptcp')
	wait "$cpid"; wait "$spid"
	XFER_CLI=$(tail -1 "$cout" | cut -d' ' -f4-) XFER_SRV=$(tail -1 "$E2E_TMP/sf.srv" | cut -d' ' -f4-)
	ends_fit || return 1
	local n
	n=$(mptcp_kv "$XFER_CLI" subflows)
	E2E_WHY="MPTCP_INFO subflows=$n, ss -M sockets=$ssm, ss -ti subflows=$sst"
	[ "${n:-0}" -ge 2 ] && [ "$ssm" -ge 1 ] && [ "$sst" -ge 2 ]
}

# DSS checksums (the client asks: net.mptcp.checksum_enabled=1): a paced
# 8 MB upload over two subflows and a 20 MB download arrive intact; the
# client's kernel finds no checksum error (MPTcpExtDataCsumErr); through
# the proxy sluice counts the connections checksummed and verifies
# mappings, none failed.
checksums() {
	local before after e0 rc sf
	before=$(mptcp_sluice_counters)
	e0=$(mptcp_nstat cli MPTcpExtDataCsumErr)
	ip netns exec "$NS_CLI" sysctl -qw net.mptcp.checksum_enabled=1
	xfer up 4 8000000 --rate 32 && sf=$(mptcp_kv "$XFER_CLI" subflows) && xfer down 4 20000000
	rc=$?
	ip netns exec "$NS_CLI" sysctl -qw net.mptcp.checksum_enabled=0
	[ $rc = 0 ] || return 1
	after=$(mptcp_sluice_counters)
	local err=$(( $(mptcp_nstat cli MPTcpExtDataCsumErr) - e0 )) d="" k
	for k in mptcp_connections_checksummed mptcp_checksums_verified mptcp_checksums_failed; do
		d+=" $k+$(( $(mptcp_kv "$after" $k) - $(mptcp_kv "$before" $k) ))"
	done
	E2E_WHY="upload over $sf subflows, then $E2E_WHY; client MPTcpExtDataCsumErr +$err"
	[ "$PHASE" = proxied ] && E2E_WHY+="; sluice$d"
	[ "${sf:-0}" -ge 2 ] && [ "$err" = 0 ] || return 1
	[ "$PHASE" = proxied ] || return 0
	grep -q "mptcp_connections_checksummed+2 " <<<"$d " && grep -q "mptcp_checksums_failed+0 " <<<"$d " &&
		! grep -q "mptcp_checksums_verified+0 " <<<"$d "
}

# port_tx P: frames sluice sent out of port P.
port_tx() { e2e_tel /sluice/ports "$1.tx"; }

# A backup subflow: with the client's eth1 endpoint marked backup, a
# download leaves through port 0 (port 2 carries < 10% of its frames: the
# kernel itself, under load, was seen to send 2.4% there; without backup
# the split is about 40%); then, with eth0 taken down in the middle of a second
# download, the backup path carries the rest and every byte arrives.
backup() {
	mptcp_endpoint delete
	mptcp_endpoint add backup
	_backup
	local rc=$?
	mptcp_path up 0
	mptcp_endpoint delete
	mptcp_endpoint add
	return $rc
}
_backup() {
	local a0 a2 b0 b2 at=$E2E_TMP/backup.at
	a0=$(port_tx 0) a2=$(port_tx 2)
	xfer down 4 20000000 || { E2E_WHY="idle backup: $E2E_WHY"; return 1; }
	b0=$(port_tx 0) b2=$(port_tx 2)
	local idle="port 0 sent $((b0 - a0)) frames, port 2 (backup) $((b2 - a2))"
	if [ $(( (b2 - a2) * 10 )) -gt $((b0 - a0)) ] || [ "$(mptcp_kv "$XFER_CLI" subflows)" -lt 2 ]; then
		E2E_WHY="with the active path up: $idle, client $XFER_CLI"
		return 1
	fi
	mptcp_on_file "$at" mptcp_path down 0
	a2=$(port_tx 2)
	xfer down 4 100000000 --at 2000000 "$at"
	local rc=$?
	mptcp_on_file_done
	b2=$(port_tx 2)
	[ $rc = 0 ] || { E2E_WHY="after the active path went down: $E2E_WHY"; return 1; }
	if [ $((b2 - a2)) -lt 5000 ]; then
		E2E_WHY="after the active path went down the backup carried only $((b2 - a2)) frames"
		return 1
	fi
	E2E_WHY="$idle; then with eth0 down the backup carried $((b2 - a2)) frames, the longest stall $(mptcp_kv "$XFER_CLI" gap) s"
}

# REMOVE_ADDR: the client's eth1 endpoint is deleted in the middle of a
# download; its subflow closes, and every byte arrives over eth0.
remove_addr() {
	local at=$E2E_TMP/rm.at rm0
	rm0=$(mptcp_nstat cli MPTcpExtRmSubflow)
	mptcp_on_file "$at" mptcp_endpoint delete
	xfer down 4 100000000 --at 2000000 "$at"
	local rc=$? why=$E2E_WHY
	mptcp_on_file_done
	mptcp_endpoint add
	[ $rc = 0 ] || { E2E_WHY=$why; return 1; }
	local sf end rm
	sf=$(mptcp_kv "$XFER_CLI" subflows) end=$(mptcp_kv "$XFER_CLI" subflows_end)
	rm=$(( $(mptcp_nstat cli MPTcpExtRmSubflow) - rm0 ))
	E2E_WHY="subflows at most $sf, $end at the end; client MPTcpExtRmSubflow +$rm"
	[ "$sf" -ge 2 ] && [ "$end" = 1 ] && [ "$rm" -ge 1 ]
}

# The second path leaves and comes back in the middle of a paced upload
# (a phone that leaves Wi-Fi and finds it again): the client's eth1
# endpoint is deleted 2 MB in (its subflow closes: MPTcpExtRmSubflow)
# and added again a second later, when the client's kernel joins the
# connection again from it: two MP_JOINs completed at the client (its
# MPTcpExtMPJoinSynAckRx), and proxied, sluice established both. The
# transfer completes intact. Proxied, the new subflow carries part of it:
# sluice receives at least 1,000 frames on the second path's port after
# the endpoint came back (about 10,000 of the upload's 27,000 segments,
# where a kernel server, bridged, was sent 400-1,400 there by the same
# client). (The client's MPTCP_INFO is no witness here: after the rejoin
# it still counts one subflow.)
_readd() {
	mptcp_endpoint delete
	sleep 1
	mptcp_endpoint add
	e2e_tel /sluice/ports 2.rx >"$E2E_TMP/readd.rx"
}
readd() {
	local at=$E2E_TMP/readd.at j0 j1 a0 a1 rm0 rm1 rx rc why
	[ "$PHASE" = proxied ] && j0=$(e2e_tel /sluice/proxy mptcp_joins_established)
	a0=$(mptcp_nstat cli MPTcpExtMPJoinSynAckRx) rm0=$(mptcp_nstat cli MPTcpExtRmSubflow)
	rm -f "$E2E_TMP/readd.rx" # (the other phase's)
	mptcp_on_file "$at" _readd
	xfer up 4 40000000 --rate 80 --at 2000000 "$at"
	rc=$? why=$E2E_WHY
	mptcp_on_file_done
	E2E_WHY=$why
	[ $rc = 0 ] || return 1
	a1=$(mptcp_nstat cli MPTcpExtMPJoinSynAckRx) rm1=$(mptcp_nstat cli MPTcpExtRmSubflow)
	[ -s "$E2E_TMP/readd.rx" ] || { E2E_WHY+="; the endpoint was never added back"; return 1; }
	rx=$(( $(e2e_tel /sluice/ports 2.rx) - $(cat "$E2E_TMP/readd.rx") ))
	E2E_WHY+="; client MPTcpExtMPJoinSynAckRx +$((a1 - a0)), MPTcpExtRmSubflow +$((rm1 - rm0)); port 2 received $rx frames after the rejoin"
	[ $((a1 - a0)) -ge 2 ] && [ $((rm1 - rm0)) -ge 1 ] || return 1
	[ "$PHASE" = proxied ] || return 0
	j1=$(e2e_tel /sluice/proxy mptcp_joins_established)
	E2E_WHY+="; sluice mptcp_joins_established +$((j1 - j0))"
	[ $((j1 - j0)) -ge 2 ] && [ "$rx" -ge 1000 ]
}

# MP_PRIO in the middle of a download: 30 MB in, the client marks its
# eth1 endpoint backup (ip mptcp endpoint change ... backup), and its
# kernel tells the other end with MP_PRIO on that subflow. Before, the
# sender used both paths (port 2 sent at least 1,000 frames: 36-62% of
# port 0's as a rule, but 7.7% in one CI run on a loaded machine); from
# then on it keeps to the active one (port 2 under 10% of port 0: the
# backup check's bound). Proxied, sluice is that sender and counts the MP_PRIO.
_prio() {
	ip -n "$NS_CLI" mptcp endpoint change "$CLI4B" backup
	printf '%s %s\n' "$(port_tx 0)" "$(port_tx 2)" >"$E2E_TMP/prio.tx"
}
prio() {
	local at=$E2E_TMP/prio.at p0 p1 b0 b2 t0 t2 rc why
	[ "$PHASE" = proxied ] && p0=$(e2e_tel /sluice/proxy mptcp_mp_prio_received)
	b0=$(port_tx 0) b2=$(port_tx 2)
	rm -f "$E2E_TMP/prio.tx" # (the other phase's)
	mptcp_on_file "$at" _prio
	xfer down 4 100000000 --at 30000000 "$at"
	rc=$? why=$E2E_WHY
	mptcp_on_file_done
	ip -n "$NS_CLI" mptcp endpoint change "$CLI4B" nobackup
	E2E_WHY=$why
	[ $rc = 0 ] || return 1
	read -r t0 t2 <"$E2E_TMP/prio.tx" || { E2E_WHY+="; the endpoint was never changed"; return 1; }
	b0=$((t0 - b0)) b2=$((t2 - b2))
	t0=$(( $(port_tx 0) - t0 )) t2=$(( $(port_tx 2) - t2 ))
	E2E_WHY+="; before MP_PRIO port 0 sent $b0 frames, port 2 $b2; after it $t0 and $t2"
	[ "$b2" -ge 1000 ] && [ $((t2 * 10)) -lt "$t0" ] || return 1
	[ "$PHASE" = proxied ] || return 0
	p1=$(e2e_tel /sluice/proxy mptcp_mp_prio_received)
	E2E_WHY+="; sluice mptcp_mp_prio_received +$((p1 - p0))"
	[ $((p1 - p0)) -ge 1 ]
}

# An abort at either end reaches the other. The client aborts a second
# after it connected (SO_LINGER 0: its kernel sends MP_FASTCLOSE, both
# subflows reset), or the server does: the other end's read must end in
# a reset, not EOF and not a 10 s wait. Proxied, sluice turns the one
# into the other, and counts the MP_FASTCLOSE it received or sent.
# abort_end WHO(client|server) COUNTER
abort_end() {
	local who=$1 key=$2 k0 k1 out=$E2E_TMP/abort.$1 spid
	next_port
	[ "$PHASE" = proxied ] && k0=$(e2e_tel /sluice/proxy "$key")
	if [ "$who" = client ]; then
		srv timeout --foreground 30 "$E2E_PY" "$MPTCP_PEER" waitend "$PORT" >"$out" 2>&1 &
	else
		srv timeout --foreground 30 "$E2E_PY" "$MPTCP_PEER" abort "$PORT" >/dev/null 2>&1 &
	fi
	spid=$!; E2E_PIDS+=("$spid")
	e2e_wait_listen "$PORT" || { E2E_WHY="server did not listen"; return 1; }
	if [ "$who" = client ]; then
		e2e_run cli timeout --foreground 30 "$E2E_PY" "$MPTCP_PEER" cabort "$SRV4" "$PORT" >/dev/null 2>&1
	else
		e2e_run cli timeout --foreground 30 "$E2E_PY" "$MPTCP_PEER" waitend "$SRV4" "$PORT" >"$out" 2>&1
	fi
	wait "$spid"
	E2E_WHY="the $who aborted; the other end read: '$(tail -1 "$out")'"
	grep -q "^RESET" "$out" || return 1
	[ "$PHASE" = proxied ] || return 0
	k1=$(e2e_tel /sluice/proxy "$key")
	E2E_WHY+="; sluice $key +$((k1 - k0))"
	[ $((k1 - k0)) -ge 1 ]
}
client_abort() { abort_end client mptcp_fastclose_received; }
server_abort() { abort_end server mptcp_fastclose_sent; }

# A client path taken down in the middle of a download (eth0, the path of
# the first subflow): the transfer completes over eth1, intact. While it
# runs, the state a stall would leave is sampled every second (the
# client's subflows from ss -ti, its connection from ss -M, sluice's
# failover counters): a failure reports the last sample, so that the CI
# log alone shows where the transfer stood.
path_down() {
	_path_down down
}
# The same for an upload: the client's kernel moves what it had in
# flight on the dead subflow to the other one (reinjected at the same
# data sequence numbers), and the server still receives every byte once.
# Proxied, sluice must have received some bytes twice (the dead path's
# segments it had taken, whose acknowledgements were lost with it), so
# the overlap was handled, not missed.
path_down_up() {
	local d0 d1
	[ "$PHASE" = proxied ] && d0=$(e2e_tel /sluice/proxy mptcp_bytes_duplicate)
	_path_down up || return 1
	[ "$PHASE" = proxied ] || return 0
	d1=$(e2e_tel /sluice/proxy mptcp_bytes_duplicate)
	E2E_WHY+="; sluice mptcp_bytes_duplicate +$((d1 - d0))"
	[ "$d1" -gt "$d0" ]
}
_path_down() { # DIR
	local at=$E2E_TMP/down.at st=$E2E_TMP/down.state
	mptcp_on_file "$at" mptcp_path down 0
	mptcp_state_sampler "$st" $((PORT + 1)) &
	local spid=$!
	E2E_PIDS+=("$spid")
	xfer "$1" 4 100000000 --at 2000000 "$at"
	local rc=$? why=$E2E_WHY
	_e2e_kill_child "$spid" TERM
	wait "$spid" 2>/dev/null
	mptcp_on_file_done
	mptcp_path up 0
	E2E_WHY=$why
	if [ $rc != 0 ]; then
		E2E_WHY+="; at the end: $(mptcp_state_brief "$st")"
		e2e_log "path_down: the last state sampled before the failure:"
		sed 's/^/  /' "$st" >&2
		return 1
	fi
	E2E_WHY="$E2E_WHY; longest stall $(mptcp_kv "$XFER_CLI" gap) s"
	# A failover only if the second path carried a subflow.
	[ "$(mptcp_kv "$XFER_CLI" subflows)" -ge 2 ]
}

# NCONN MPTCP connections open at once (tests/e2e/stream_peer.py with
# STREAM_PEER_PROTO=mptcp), then each sends 16 kB and gets back the echo
# and 16 kB more, all checked.
many() {
	local ready=$E2E_TMP/many.ready go=$E2E_TMP/many.go spid cpid i want_s=$NCONN
	[ "$PHASE" = proxied ] && want_s=0
	rm -f "$ready" "$go"
	next_port
	STREAM_PEER_PROTO=mptcp srv timeout --foreground 150 "$E2E_PY" "$PEER" hold-srv "$PORT" "$NCONN" 16384 \
		>"$E2E_TMP/many.srv" 2>&1 &
	spid=$!; E2E_PIDS+=("$spid")
	e2e_wait_listen "$PORT" || { E2E_WHY="server did not listen"; return 1; }
	STREAM_PEER_PROTO=mptcp cli timeout --foreground 150 "$E2E_PY" "$PEER" hold-cli "$SRV4" "$PORT" "$NCONN" 16384 \
		"$ready" "$go" >"$E2E_TMP/many.cli" 2>&1 &
	cpid=$!; E2E_PIDS+=("$cpid")
	for i in $(seq 1 600); do
		[ -s "$ready" ] && break
		kill -0 "$cpid" 2>/dev/null || break
		sleep 0.1
	done
	local subflows
	subflows=$(ip netns exec "$NS_CLI" ss -tnH state established "dport = :$PORT" 2>/dev/null | wc -l)
	touch "$go"
	wait "$cpid"; wait "$spid"
	[ -s "$ready" ] || { E2E_WHY="client: $(tail -1 "$E2E_TMP/many.cli")"; return 1; }
	[ "$(cat "$E2E_TMP/many.cli")" = "OK $NCONN/$NCONN mptcp $NCONN" ] ||
		{ E2E_WHY="client: $(tail -1 "$E2E_TMP/many.cli"); server: $(tail -1 "$E2E_TMP/many.srv")"; return 1; }
	[ "$(cat "$E2E_TMP/many.srv")" = "served $NCONN mptcp $want_s" ] ||
		{ E2E_WHY="server: $(tail -1 "$E2E_TMP/many.srv") (want served $NCONN mptcp $want_s)"; return 1; }
	E2E_WHY="$NCONN/$NCONN MPTCP at the client ($subflows TCP subflows established while all were open), $((want_s)) MPTCP at the server, 16 kB up and 32 kB back each, intact"
}

# srv_joins: MP_JOIN SYNs the server's kernel has received. Through the
# proxy a forged join must be answered by sluice and never reach it.
srv_joins() { mptcp_nstat srv MPTcpExtMPJoinSynRx; }
joins_stayed_at_sluice() {
	[ "$PHASE" = proxied ] || return 0
	local d=$(( $(srv_joins) - $1 ))
	[ "$d" = 0 ] && return 0
	E2E_WHY="$E2E_WHY; but the server's kernel received $d MP_JOIN SYNs"
	return 1
}

# A forged MP_JOIN SYN whose token no connection has: a RST, never a
# SYN-ACK.
join_unknown_token() {
	local out spid j0
	j0=$(srv_joins)
	# A listener on the port, so that only the join itself can be refused.
	next_port
	srv timeout --foreground 30 "$E2E_PY" "$MPTCP_PEER" hold "$PORT" >/dev/null 2>&1 &
	spid=$!; E2E_PIDS+=("$spid")
	e2e_wait_listen "$PORT" || { E2E_WHY="server did not listen"; return 1; }
	out=$(cli timeout --foreground 20 "$E2E_PY" "$JOIN" unknown-token "$CLI_IF" "$SPOOF4" "$SRV4" \
		"$PORT" "$SRV_MAC0" 2>&1 | tail -1)
	_e2e_kill_child "$spid" TERM
	wait "$spid" 2>/dev/null
	E2E_WHY=$out
	[ "$(e2e_field "$out" synack)" = 0 ] && [ "$(e2e_field "$out" rst)" -ge 1 ] 2>/dev/null &&
		joins_stayed_at_sluice "$j0"
}

# A forged MP_JOIN with the token of a live connection but a wrong HMAC
# in its third ACK: the SYN-ACK carries MP_JOIN (the token was right),
# and the ACK draws a RST.
join_bad_hmac() {
	local out spid j0
	next_port
	srv timeout --foreground 20 "$E2E_PY" "$MPTCP_PEER" hold "$PORT" >/dev/null 2>&1 &
	spid=$!; E2E_PIDS+=("$spid")
	e2e_wait_listen "$PORT" || { E2E_WHY="server did not listen"; return 1; }
	j0=$(srv_joins)
	out=$(cli timeout --foreground 20 "$E2E_PY" "$JOIN" bad-hmac "$CLI_IF" "$SPOOF4" "$SRV4" \
		"$PORT" "$SRV_MAC0" 2>&1 | tail -1)
	wait "$spid"
	E2E_WHY=$out
	[ "$(e2e_field "$out" joined)" -ge 1 ] 2>/dev/null && [ "$(e2e_field "$out" rst)" -ge 1 ] 2>/dev/null &&
		joins_stayed_at_sluice "$j0"
}

# The checks of one phase, in order: NAME FUNCTION [ARGS]. The quick ones
# first, so that a sluice that stalls long transfers still gets them run
# within the budget.
CHECKS=()
xfer_checks() {
	local fam size dir
	for fam in 4 6; do
		for size in "$@"; do
			for dir in up down; do
				CHECKS+=("mptcp${fam}_${dir}_$(human "$size")_arrives_intact|xfer $dir $fam $size")
			done
		done
	done
}
xfer_checks 1 1000000
CHECKS+=("mptcp_opens_a_second_subflow_over_the_second_path|two_subflows"
	"mptcp_join_with_an_unknown_token_is_reset_never_accepted|join_unknown_token"
	"mptcp_join_with_a_wrong_hmac_is_reset|join_bad_hmac"
	"mptcp_with_dss_checksums_two_subflows_carry_the_stream_intact_both_ways|checksums"
	"mptcp_${NCONN}_concurrent_connections_carry_their_data_intact|many")
xfer_checks "${SIZES[@]:2}"
CHECKS+=("mptcp_sends_nothing_on_a_backup_subflow_until_the_active_path_is_lost|backup"
	"mptcp_remove_addr_closes_that_subflow_and_the_transfer_completes|remove_addr"
	"mptcp_transfer_completes_when_a_client_path_goes_down|path_down"
	"mptcp_upload_completes_when_a_client_path_goes_down|path_down_up"
	"mptcp_second_path_leaves_and_rejoins_during_an_upload|readd"
	"mptcp_prio_backup_moves_a_download_off_that_path|prio"
	"mptcp_client_abort_resets_the_server|client_abort"
	"mptcp_server_abort_resets_the_client|server_abort")

# Each phase's checks get BUDGET seconds: a sluice that stalls transfers
# would otherwise spend the file's whole time on their timeouts, and the
# checks after them (termination, counters, exit) would never run. What
# is left when the budget is spent fails at once, unrun.
BUDGET=${E2E_MPTCP_BUDGET:-240}
ONLY=${E2E_MPTCP_CHECKS:-}
PHASES=" ${E2E_MPTCP_PHASES:-bridged proxied} "
run_checks() {
	local c name fn t0=$SECONDS
	for c in "${CHECKS[@]}"; do
		name=${c%%|*} fn=${c#*|}
		[ -n "$ONLY" ] && ! [[ $name =~ $ONLY ]] && continue
		if [ $((SECONDS - t0)) -ge "$BUDGET" ]; then
			e2e_fail "${PHASE}_$name" "not run: this phase's checks took more than ${BUDGET} s (E2E_MPTCP_BUDGET)"
			continue
		fi
		# shellcheck disable=SC2086 # fn is a command line
		e2e_check "${PHASE}_$name" $fn
	done
}

# ------------------------------------------------------------ bridged
PHASE=bridged
if [[ $PHASES == *" bridged "* ]]; then
	e2e_start_sluice "" || e2e_die "sluice start (bridge): $E2E_WHY"
	mptcp_warmup || e2e_die "bridge: $E2E_WHY"
	run_checks
	e2e_check bridged_mptcp_clean_exit e2e_stop_sluice
fi

# ------------------------------------------------------------ proxied
PHASE=proxied
[[ $PHASES == *" proxied "* ]] || e2e_finish
PROXY_CONF=${E2E_MPTCP_PROXY_CONF:-$ROOT/config/examples/mptcp-proxy.ini}
if [ -z "${E2E_MPTCP_FORCE:-}" ] && ! mptcp_proxy_supported; then
	why="this sluice has no [proxy] mptcp key yet (MPTCP termination, issue 16): not run"
	for c in "${CHECKS[@]}"; do e2e_skip "${PHASE}_${c%%|*}" "$why"; done
	for name in server_never_sees_mptcp mptcp_counters mptcp_clean_exit \
		mptcp_exit_report_shows_mptcp_counters; do
		e2e_skip "proxied_$name" "$why"
	done
	e2e_finish
fi

# Everything the server's kernel sees, from the first proxied SYN on.
srv_mpc0=$(mptcp_nstat srv MPTcpExtMPCapableSYNRX)
srv_join0=$(mptcp_nstat srv MPTcpExtMPJoinSynRx)
cli_mpc0=$(mptcp_nstat cli MPTcpExtMPCapableSYNACKRX)
e2e_start_sluice "$PROXY_CONF" || e2e_die "sluice start ($PROXY_CONF): $E2E_WHY"
mptcp_warmup || e2e_die "proxy: $E2E_WHY"
# Headers only, and at most 20,000 frames (the first transfers'); the
# kernel's counters cover the whole phase.
ip netns exec "$NS_SRV" timeout 600 tshark -q -i "$SRV_IF" -i "$SRV1_IF" -s 128 -c 20000 \
	-f "tcp" -w "$E2E_TMP/server.pcapng" >/dev/null 2>&1 &
CAPTURE_PID=$!
E2E_PIDS+=("$CAPTURE_PID")
sleep 2
run_checks

# A subflow's upload is read in runs (lib/mptcp_proxy/README.md, "Subflow
# runs"): the client's kernel maps each segment on its own, each mapping
# continuing the one before, and within an rx burst the proxy's engine
# reads a subflow's in-order segments as one (its
# tcp_segments_coalesced_in_burst counts each segment merged). A 20 MB
# upload over two subflows arrives intact with at least 1,000 of its
# segments merged (about 14,000 segments in all; before the subflows
# merged, none was: the server leg only sends ACKs in an upload).
upload_runs() {
	local c0 c1 i0 i1
	c0=$(e2e_tel /sluice/proxy tcp_segments_coalesced_in_burst)
	i0=$(e2e_tel /sluice/proxy tcp_segments_in)
	xfer up 4 20000000 || return 1
	c1=$(e2e_tel /sluice/proxy tcp_segments_coalesced_in_burst)
	i1=$(e2e_tel /sluice/proxy tcp_segments_in)
	E2E_WHY+="; sluice tcp_segments_coalesced_in_burst +$((c1 - c0)) of tcp_segments_in +$((i1 - i0))"
	[ $((c1 - c0)) -ge 1000 ]
}
e2e_check proxied_mptcp_upload_segments_are_read_in_runs upload_runs

server_never_sees_mptcp() {
	local mpc join cli kind30 frames
	mpc=$(( $(mptcp_nstat srv MPTcpExtMPCapableSYNRX) - srv_mpc0 ))
	join=$(( $(mptcp_nstat srv MPTcpExtMPJoinSynRx) - srv_join0 ))
	cli=$(( $(mptcp_nstat cli MPTcpExtMPCapableSYNACKRX) - cli_mpc0 ))
	_e2e_kill_child "$CAPTURE_PID" INT
	wait "$CAPTURE_PID" 2>/dev/null
	# One line per frame the server received: its TCP option kinds,
	# comma-separated. Frames the server sent are left out: a connection
	# of the bridged phase (kernel MPTCP end to end) that has not died
	# yet may still retransmit into this capture.
	tshark -r "$E2E_TMP/server.pcapng" -T fields -e tcp.option_kind \
		-Y "ip.dst == $SRV4 || ip.dst == $SRV4B || ipv6.dst == $SRV6 || ipv6.dst == $SRV6B" \
		>"$E2E_TMP/server.kinds" 2>/dev/null
	frames=$(wc -l <"$E2E_TMP/server.kinds")
	kind30=$(grep -cE '(^|,)30(,|$)' "$E2E_TMP/server.kinds")
	E2E_WHY="client got $cli MP_CAPABLE SYN-ACKs; server got $mpc MP_CAPABLE SYNs and $join MP_JOIN SYNs; of $frames TCP frames it received on its veths, $kind30 carry option 30"
	[ "$cli" -ge 1 ] && [ "$mpc" = 0 ] && [ "$join" = 0 ] && [ "$frames" -gt 100 ] && [ "$kind30" = 0 ]
}
e2e_check proxied_server_never_sees_mptcp server_never_sees_mptcp

mptcp_counters() {
	local c
	c=$(mptcp_sluice_counters)
	E2E_WHY=${c:-"no mptcp_* counter in /sluice/proxy"}
	echo "$c" | tr ' ' '\n' | grep -q '=[1-9]'
}
e2e_check proxied_mptcp_counters mptcp_counters
e2e_check proxied_mptcp_clean_exit e2e_stop_sluice
exit_report() {
	E2E_WHY=$(grep -o 'mptcp_[a-z0-9_]*=[0-9]*' "$SLUICE_LOG" | head -5 | tr '\n' ' ')
	[ -n "$E2E_WHY" ] || { E2E_WHY="no mptcp_* counter in the exit report"; return 1; }
}
e2e_check proxied_mptcp_exit_report_shows_mptcp_counters exit_report
e2e_finish
