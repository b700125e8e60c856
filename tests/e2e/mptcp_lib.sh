# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# The two-path MPTCP topology of the end-to-end tests and of
# perf/bench.sh mptcp: source this instead of lib.sh (it sources lib.sh).
#
#   client ns                    sluice ns (4 ports, 2 pairs)        server ns
#   eth0 198.18.0.1/24  <-veth->  e2e-sub   port 0 | port 1  e2e-inet   <-veth->  eth0 198.18.0.2/24
#        2001:db8:1::1/64                  pair 0                                      2001:db8:1::2/64
#   eth1 198.18.1.1/24  <-veth->  e2e-sub1  port 2 | port 3  e2e-inet1  <-veth->  eth1 198.18.1.2/24
#        2001:db8:2::1/64                  pair 1                                      2001:db8:2::2/64
#
# The client connects to the server's eth0 address. Its kernel's path
# manager then opens a second subflow from its eth1 address (an MPTCP
# endpoint with the subflow flag) to the same server address: a policy
# rule sends what comes from the eth1 address out of eth1 (table 100), and
# a permanent neighbour entry gives the server's eth1 MAC for it, so that
# subflow crosses pair 1 and enters the server on eth1 (rp_filter is 0,
# and the server owns its eth0 address on every interface). The server
# answers the eth1 address out of its own eth1. Through a plain sluice
# bridge that is kernel MPTCP end to end; with [proxy] mptcp = on sluice
# terminates both subflows and opens one plain TCP connection to the
# server out of port 1.
#
# What this adds to lib.sh:
#   mptcp_setup [backup]    namespaces, both pairs, routing, MPTCP limits and
#                           the client's eth1 endpoints (backup: as backup)
#   mptcp_endpoint add|delete [backup]   the client's eth1 endpoints
#   mptcp_path down|up N    the client's ethN down (a path lost) or up
#   mptcp_shape DEV RATE    TBF on a sluice-side veth (needs sluice started
#                           with E2E_AFP_ARGS containing qdisc_bypass=0)
#   mptcp_warmup            both paths forward (pings), after sluice starts
#   mptcp_nstat NS NAME     a kernel MPTCP counter (nstat) in cli or srv
#   mptcp_proxy_supported   whether this sluice knows [proxy] mptcp
#   mptcp_xfer ...          one sha256-checked transfer (mptcp_peer.py)

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SUB1_IF=e2e-sub1 INET1_IF=e2e-inet1   # pair 1, in the sluice namespace
CLI1_IF=eth1 SRV1_IF=eth1             # in the client and server namespaces
CLI4B=198.18.1.1 SRV4B=198.18.1.2
CLI6B=2001:db8:2::1 SRV6B=2001:db8:2::2
E2E_PORT_IFS=("$SUB_IF" "$INET_IF" "$SUB1_IF" "$INET1_IF")
MPTCP_PEER=$E2E_DIR/mptcp_peer.py
MPTCP_TABLE=100

_mptcp_mac() { ip -n "$1" -br link show "$2" | awk '{ print $3 }'; }

mptcp_setup() {
	local backup=${1:-} ns
	e2e_setup
	ip -n "$NS_MID" link add "$SUB1_IF" type veth peer name "$CLI1_IF" netns "$NS_CLI" ||
		e2e_die "veth $SUB1_IF failed"
	ip -n "$NS_MID" link add "$INET1_IF" type veth peer name "$SRV1_IF" netns "$NS_SRV" ||
		e2e_die "veth $INET1_IF failed"
	_e2e_offloads_off "$NS_MID" "$SUB1_IF"
	_e2e_offloads_off "$NS_MID" "$INET1_IF"
	_e2e_offloads_off "$NS_CLI" "$CLI1_IF"
	_e2e_offloads_off "$NS_SRV" "$SRV1_IF"
	ip -n "$NS_CLI" addr add "$CLI4B/24" dev "$CLI1_IF"
	ip -n "$NS_CLI" addr add "$CLI6B/64" dev "$CLI1_IF" nodad
	ip -n "$NS_SRV" addr add "$SRV4B/24" dev "$SRV1_IF"
	ip -n "$NS_SRV" addr add "$SRV6B/64" dev "$SRV1_IF" nodad
	ip -n "$NS_MID" link set "$SUB1_IF" up
	ip -n "$NS_MID" link set "$INET1_IF" up
	ip -n "$NS_CLI" link set "$CLI1_IF" up
	ip -n "$NS_SRV" link set "$SRV1_IF" up
	for ns in "$NS_CLI" "$NS_SRV"; do
		_e2e_nsx "$ns" sysctl -qw net.ipv4.conf.all.rp_filter=0 \
			net.ipv4.conf.default.rp_filter=0 net.ipv4.conf.eth0.rp_filter=0 \
			net.ipv4.conf.eth1.rp_filter=0 net.mptcp.enabled=1 ||
			e2e_die "sysctl in $ns failed"
		ip -n "$ns" mptcp limits set subflows 4 add_addr_accepted 4 ||
			e2e_die "ip mptcp limits in $ns failed"
		# A loaded machine can hold a SYN up: the kernel must not take
		# two lost MP_CAPABLE SYNs for a middlebox that drops MPTCP
		# (it would fall back to TCP, and with blackhole_timeout keep
		# doing so for an hour).
		_e2e_nsx "$ns" sysctl -qw net.mptcp.syn_retrans_before_tcp_fallback=10 \
			net.mptcp.blackhole_timeout=0 2>/dev/null
	done
	_mptcp_routes
	mptcp_endpoint add $backup
}

# The client's second path: what leaves from its eth1 addresses takes
# eth1 to the server's eth0 addresses, with the server's eth1 MAC; and
# permanent neighbours everywhere, so that nothing but the transfers
# crosses sluice. Idempotent: a path that comes back up gets them again
# (a link going down flushes its routes and neighbours, permanent or not).
_mptcp_routes() {
	local smac0 smac1 cmac0 cmac1
	smac0=$(_mptcp_mac "$NS_SRV" "$SRV_IF")
	smac1=$(_mptcp_mac "$NS_SRV" "$SRV1_IF")
	cmac0=$(_mptcp_mac "$NS_CLI" "$CLI_IF")
	cmac1=$(_mptcp_mac "$NS_CLI" "$CLI1_IF")
	ip -n "$NS_CLI" rule show | grep -q "from $CLI4B lookup $MPTCP_TABLE" ||
		ip -n "$NS_CLI" rule add from "$CLI4B" table $MPTCP_TABLE
	ip -n "$NS_CLI" -6 rule show | grep -q "from $CLI6B lookup $MPTCP_TABLE" ||
		ip -n "$NS_CLI" -6 rule add from "$CLI6B" table $MPTCP_TABLE
	if ip -n "$NS_CLI" link show "$CLI1_IF" | grep -q ',UP'; then
		ip -n "$NS_CLI" route replace 198.18.0.0/24 dev "$CLI1_IF" src "$CLI4B" table $MPTCP_TABLE
		ip -n "$NS_CLI" route replace 198.18.1.0/24 dev "$CLI1_IF" src "$CLI4B" table $MPTCP_TABLE
		ip -n "$NS_CLI" -6 route replace 2001:db8:1::/64 dev "$CLI1_IF" table $MPTCP_TABLE
		ip -n "$NS_CLI" -6 route replace 2001:db8:2::/64 dev "$CLI1_IF" table $MPTCP_TABLE
		ip -n "$NS_CLI" neigh replace "$SRV4" lladdr "$smac1" dev "$CLI1_IF" nud permanent
		ip -n "$NS_CLI" -6 neigh replace "$SRV6" lladdr "$smac1" dev "$CLI1_IF" nud permanent
	fi
	if ip -n "$NS_CLI" link show "$CLI_IF" | grep -q ',UP'; then
		ip -n "$NS_CLI" neigh replace "$SRV4" lladdr "$smac0" dev "$CLI_IF" nud permanent
		ip -n "$NS_CLI" -6 neigh replace "$SRV6" lladdr "$smac0" dev "$CLI_IF" nud permanent
	fi
	ip -n "$NS_SRV" neigh replace "$CLI4B" lladdr "$cmac1" dev "$SRV1_IF" nud permanent
	ip -n "$NS_SRV" -6 neigh replace "$CLI6B" lladdr "$cmac1" dev "$SRV1_IF" nud permanent
	ip -n "$NS_SRV" neigh replace "$CLI4" lladdr "$cmac0" dev "$SRV_IF" nud permanent
	ip -n "$NS_SRV" -6 neigh replace "$CLI6" lladdr "$cmac0" dev "$SRV_IF" nud permanent
}

# mptcp_warmup: after sluice starts, wait (up to 20 s) until both paths
# carry a ping, IPv4 and IPv6, so that no MP_CAPABLE SYN is the first
# frame of a path that is not forwarding yet.
mptcp_warmup() {
	local i a
	for a in "$SRV4 $CLI4" "$SRV4 $CLI4B" "$SRV6 $CLI6" "$SRV6 $CLI6B"; do
		set -- $a
		for i in $(seq 1 20); do
			ip netns exec "$NS_CLI" ping -c 1 -W 1 -I "$2" "$1" >/dev/null 2>&1 && continue 2
		done
		E2E_WHY="no ping from $2 to $1 through sluice in 20 s"
		return 1
	done
	# One MPTCP connection per family, not judged: on a loaded machine
	# the first SYN after sluice starts has been seen to wait seconds.
	for a in "$SRV4 6901" "$SRV6 6902"; do
		set -- $a
		mptcp_xfer up "$1" 1 "$2" 20 >/dev/null 2>&1 ||
			e2e_log "warm-up MPTCP connection to $1 failed: $E2E_WHY"
	done
	E2E_WHY=
}

# mptcp_endpoint add|delete [backup]: the client's eth1 addresses as
# MPTCP endpoints that open subflows (delete sends REMOVE_ADDR).
mptcp_endpoint() {
	local op=$1 flags=${2:-} a i
	if [ "$op" != add ]; then
		# The client has no other endpoints: flush removes both (and
		# announces it with REMOVE_ADDR, as a delete of each would).
		ip -n "$NS_CLI" mptcp endpoint flush
		return 0
	fi
	for a in "$CLI4B" "$CLI6B"; do
		for i in 1 2 3; do
			# shellcheck disable=SC2086 # flags are words
			ip -n "$NS_CLI" mptcp endpoint add "$a" dev "$CLI1_IF" subflow $flags 2>/dev/null &&
				continue 2
			# seen once after a stalled connection: "duplicate" although
			# deleted; flush and try again
			sleep 0.2
			ip -n "$NS_CLI" mptcp endpoint flush
			[ "$a" = "$CLI6B" ] && ip -n "$NS_CLI" mptcp endpoint add "$CLI4B" dev "$CLI1_IF" subflow $flags 2>/dev/null
		done
		e2e_die "ip mptcp endpoint add $a failed: $(ip -n "$NS_CLI" mptcp endpoint show | tr '\n' ';')"
	done
}

# mptcp_path down|up N: the client's ethN loses (or gets back) its link,
# as a phone that leaves Wi-Fi. On up, the routes of table 100 and the
# permanent neighbours go back too.
mptcp_path() {
	ip -n "$NS_CLI" link set "eth$2" "$1"
	[ "$1" = up ] && _mptcp_routes
	return 0
}

# mptcp_on_file FILE CMD...: run CMD in the background once FILE exists
# (a peer's --at mark), giving up after 60 s; mptcp_on_file_done then
# waits for CMD, or stops the waiter if FILE never came.
mptcp_on_file() {
	local f=$1 i; shift
	rm -f "$f"
	( for i in $(seq 1 3000); do
		if [ -e "$f" ]; then "$@"; exit 0; fi
		sleep 0.02
	done ) &
	_MPTCP_ON_PID=$! _MPTCP_ON_FILE=$f
	E2E_PIDS+=("$_MPTCP_ON_PID")
}
mptcp_on_file_done() {
	[ -e "$_MPTCP_ON_FILE" ] || _e2e_kill_child "$_MPTCP_ON_PID" TERM
	wait "$_MPTCP_ON_PID" 2>/dev/null
	return 0
}

# mptcp_shape DEV RATE: TBF on a sluice-side veth, so what sluice sends
# toward that end leaves at RATE (e.g. 20mbit). Only with qdisc_bypass=0
# in E2E_AFP_ARGS: by default net_af_packet bypasses the qdisc.
mptcp_shape() {
	ip -n "$NS_MID" link set "$1" txqueuelen 1000
	tc -n "$NS_MID" qdisc replace dev "$1" root tbf rate "$2" burst 32kb latency 50ms ||
		e2e_die "tc tbf on $1 failed"
}
mptcp_unshape() { tc -n "$NS_MID" qdisc del dev "$1" root 2>/dev/null; return 0; }

# mptcp_nstat cli|srv NAME: the kernel's MPTCP counter NAME (e.g.
# MPTcpExtMPCapableSYNRX) in that namespace, 0 if never counted.
mptcp_nstat() {
	local ns=$NS_CLI
	[ "$1" = srv ] && ns=$NS_SRV
	ip netns exec "$ns" nstat -asz "$2" 2>/dev/null | awk -v k="$2" '$1 == k { v = $2 } END { print v + 0 }'
}

# mptcp_proxy_supported: this sluice knows [proxy] mptcp (the MPTCP
# termination of lib/mptcp_proxy); until then the checks that need it
# are skipped.
mptcp_proxy_supported() {
	# Read it all first: grep -q would stop at the match and, under
	# pipefail, sluice's SIGPIPE would make the answer "no".
	local keys
	keys=$("$SLUICE" --config-keys 2>/dev/null) || return 1
	grep -q '^\[proxy\] mptcp = ' <<<"$keys"
}

# mptcp_mptcp_counters: the /sluice/proxy counters whose names start with
# mptcp_, as "name=value" words (empty when there are none).
mptcp_sluice_counters() {
	e2e_tel /sluice/proxy 2>/dev/null | "$E2E_PY" -c 'import json, sys
d = json.load(sys.stdin)
print(" ".join("%s=%s" % (k, v) for k, v in sorted(d.items()) if k.startswith("mptcp_")))' 2>/dev/null
}

# mptcp_xfer up|down HOST SIZE PORT TIMEOUT [client options]: SIZE bytes
# of a seeded stream from an MPTCP client to an MPTCP-capable server (up)
# or back (down), sha256 and length compared. Client options go to
# mptcp_peer.py (--at BYTES FILE, --gap). Sets XFER_SECS, XFER_CLI (the
# client's "is_mptcp= subflows= ..." fields) and XFER_SRV (the server's).
mptcp_xfer() {
	local dir=$1 dst=$2 size=$3 port=$4 to=$5 spid crc src sent got
	shift 5
	local sout=$E2E_TMP/m.$port.srv cout=$E2E_TMP/m.$port.cli
	XFER_SECS= XFER_CLI= XFER_SRV=
	if [ "$dir" = up ]; then
		srv timeout --foreground "$to" "$E2E_PY" "$MPTCP_PEER" sink "$port" >"$sout" 2>&1 &
	else
		srv timeout --foreground "$to" "$E2E_PY" "$MPTCP_PEER" source "$port" "$size" "$port" >"$sout" 2>&1 &
	fi
	spid=$!; E2E_PIDS+=("$spid")
	e2e_wait_listen "$port" || { E2E_WHY="server did not listen"; return 1; }
	if [ "$dir" = up ]; then
		e2e_run cli timeout --foreground "$to" "$E2E_PY" "$MPTCP_PEER" send "$dst" "$port" "$size" "$port" "$@" \
			>"$cout" 2>&1
	else
		e2e_run cli timeout --foreground "$to" "$E2E_PY" "$MPTCP_PEER" recv "$dst" "$port" "$@" >"$cout" 2>&1
	fi
	crc=$?
	wait "$spid"
	src=$?
	if [ $crc != 0 ] || [ $src != 0 ]; then
		E2E_WHY="client rc=$crc '$(tail -1 "$cout")', server rc=$src '$(tail -1 "$sout")'"
		return 1
	fi
	# Lines "SHA BYTES SECONDS key=value...": equal if the first two
	# fields are, whoever sent.
	sent=$(tail -1 "$cout" | cut -d' ' -f1,2) got=$(tail -1 "$sout" | cut -d' ' -f1,2)
	if [ -z "$got" ] || [ "$sent" != "$got" ]; then
		E2E_WHY="client '$sent', server '$got' (sha256 and bytes differ)"
		return 1
	fi
	XFER_SECS=$(tail -1 "$cout" | cut -d' ' -f3)
	XFER_CLI=$(tail -1 "$cout" | cut -d' ' -f4-)
	XFER_SRV=$(tail -1 "$sout" | cut -d' ' -f4-)
}

# mptcp_kv "k=v k=v" KEY: the value of KEY.
mptcp_kv() { e2e_field "$1" "$2"; }

# mptcp_state_sampler FILE PORT: every second until stopped, FILE gets
# the state of the client's MPTCP connection to PORT and sluice's
# failover counters (written whole each time, so a failure reads the
# last complete sample): the client's subflows (ss -ti), its connection
# (ss -Mi), its kernel's non-zero MPTcpExt counters other than those of
# handshakes and addresses (data dropped, pruned, out of window or
# retransmitted at the connection level; namespace-wide), and the
# non-zero mptcp_* and tcp_* counters of sluice's /sluice/proxy.
mptcp_state_sampler() {
	local f=$1 port=$2
	trap 'exit 0' TERM
	while :; do
		{
			echo "at $(date -u +%T.%N | cut -c1-12) UTC"
			echo "client subflows (ss -ti dport $port):"
			ip netns exec "$NS_CLI" ss -tinH "dport = :$port" 2>/dev/null
			echo "client MPTCP sockets (ss -Mi):"
			ip netns exec "$NS_CLI" ss -MinH 2>/dev/null
			echo "client kernel: $(ip netns exec "$NS_CLI" nstat -asz 2>/dev/null |
				awk '$1 ~ /^MPTcpExt/ && $1 !~ /(Capable|Join|AddAddr|Echo|PortAdd|Subflow$)/ && $2 > 0 { printf "%s=%s ", $1, $2 }')"
			echo "sluice /sluice/proxy: $(e2e_tel /sluice/proxy 2>/dev/null | "$E2E_PY" -c 'import json, sys
d = json.load(sys.stdin)
print(" ".join("%s=%s" % (k, v) for k, v in sorted(d.items())
               if (k.startswith("mptcp_") or k.startswith("tcp_")) and v))' 2>/dev/null)"
		} >"$f.tmp" 2>&1
		mv -f "$f.tmp" "$f"
		sleep 1
	done
}

# mptcp_state_brief FILE: one line from a sample: sluice's failover
# counters, the client kernel's MPTcpExt counters, and each client
# subflow's local address, bytes received and time since it last
# received (lastrcv, ms).
mptcp_state_brief() {
	local k v out=""
	[ -s "$1" ] || { echo "no state sampled"; return 0; }
	for k in mptcp_subflows_stale mptcp_bytes_reinjected mptcp_window_blocked_reinjections \
		mptcp_subflows_penalised mptcp_subflows_reset mptcp_subflows_timed_out \
		mptcp_data_level_retransmissions mptcp_data_level_rto_backoffs \
		mptcp_data_level_early_retransmissions \
		mptcp_bytes_dropped_beyond_window \
		mptcp_segments_sent_without_mapping mptcp_mbuf_alloc_failed; do
		v=$(grep -o "$k=[0-9]*" "$1" | head -1 | cut -d= -f2)
		out+="$k=${v:-0} "
	done
	out+="; client$(grep '^client kernel:' "$1" | cut -d: -f2-)"
	out+="; client subflows:$(awk '/^client subflows/ { on = 1; next } /^client MPTCP/ { on = 0 }
		on && /^ESTAB|^[A-Z-]+ / { printf " %s %s", $1, $4; next }
		on { for (i = 1; i <= NF; i++) if ($i ~ /^(bytes_received|lastrcv|unacked|retrans|backoff):/) printf " %s", $i; printf ";" }' "$1")"
	echo "$out"
}
