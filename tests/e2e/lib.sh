# SPDX-License-Identifier: BSD-3-Clause
#
# Network-namespace end-to-end harness for sluice: source this from a test.
#
#   client ns                 sluice ns                       server ns
#   eth0 198.18.0.1/24  <-veth->  e2e-sub (port 0)  sluice
#        2001:db8:1::1/64         e2e-inet (port 1)  <-veth->  eth0 198.18.0.2/24
#                                                                 2001:db8:1::2/64
#
# sluice bridges e2e-sub and e2e-inet through net_af_packet, so client and
# server share one L2 segment and talk with no routing. Every name carries
# E2E_ID (the test's PID by default) so runs never collide, and a trap always
# stops what we started (by PID) and deletes the namespaces.
#
# A test calls e2e_require_tools, e2e_setup, e2e_start_sluice, then its
# checks, reporting each with e2e_pass/e2e_fail, then e2e_stop_sluice and
# e2e_finish. See README.md in this directory.

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_PY=${E2E_PY:-/usr/bin/python3}
SLUICE=${SLUICE:-build/app/sluice}
E2E_ID=${E2E_ID:-$$}
# The one lcore sluice polls on: by default the highest CPU we may run on.
E2E_LCORE=${E2E_LCORE:-$("$E2E_PY" -c 'import os; print(max(os.sched_getaffinity(0)))' 2>/dev/null || echo 0)}
E2E_IPERF_SECS=${E2E_IPERF_SECS:-3}
E2E_MIN_MBPS=${E2E_MIN_MBPS:-50}   # sane floor; a testpmd bridge does ~2000
# Extra net_af_packet devargs. The PMD's default 512-frame rx ring overflows
# under iperf3 (about 7% of frames lost, invisible in sluice's counters and
# in dev_imissed); 4096 frames makes the bridge lossless here.
E2E_AFP_ARGS=${E2E_AFP_ARGS-framecnt=4096}
# e2e_start_sluice and e2e_stop_sluice wait this many 0.1 s steps for
# sluice to start (200) and to exit after SIGTERM (150); a sluice under
# valgrind (perf/bench.sh --instructions proxy) needs more.

NS_CLI=sle2e-cli-$E2E_ID
NS_SRV=sle2e-srv-$E2E_ID
NS_MID=sle2e-mid-$E2E_ID
CLI_IF=eth0 SRV_IF=eth0            # inside client and server namespaces
SUB_IF=e2e-sub INET_IF=e2e-inet    # inside the sluice namespace
CLI4=198.18.0.1 SRV4=198.18.0.2
# The interfaces sluice gets as ports, in port order (net_af_packet0, 1,
# ...). A test with more port pairs (tests/e2e/mptcp_lib.sh) appends.
E2E_PORT_IFS=("$SUB_IF" "$INET_IF")
CLI6=2001:db8:1::1 SRV6=2001:db8:1::2

E2E_TMP=
E2E_FAILED=0
E2E_NPASS=0
E2E_PIDS=()        # background processes we started, for cleanup
E2E_PREFIXES=()    # DPDK file prefixes we used, for cleanup
E2E_WHY=           # reason set by a helper that returns non-zero
SLUICE_PID= SLUICE_LOG= SLUICE_PREFIX= SLUICE_RC=
_E2E_NSLUICE=0

e2e_log() { echo "e2e: $*" >&2; }

# Results go to E2E_RESULTS (a file run.sh collects) and to stdout.
e2e_result() {
	echo "$*"
	if [ -n "${E2E_RESULTS:-}" ]; then echo "$*" >>"$E2E_RESULTS"; fi
}
e2e_pass() { e2e_result "PASS $1${2:+ ($2)}"; E2E_NPASS=$((E2E_NPASS + 1)); }
e2e_fail() { e2e_result "FAIL $1: $2"; E2E_FAILED=1; }
# A check that cannot run here (a feature this sluice lacks): counted by
# run.sh as skipped, never as passed.
e2e_skip() { e2e_result "SKIP $1: $2"; }

# e2e_check NAME CMD...: PASS if CMD succeeds, else FAIL; either way with
# what CMD left in E2E_WHY (what it measured, or why it failed).
e2e_check() {
	local name=$1; shift
	E2E_WHY=
	if "$@"; then e2e_pass "$name" "$E2E_WHY"; else e2e_fail "$name" "${E2E_WHY:-$* failed}"; fi
}

e2e_die() {
	e2e_fail "${E2E_TEST:-e2e}" "$*"
	exit 1
}

e2e_require_tools() {
	local t missing=()
	[ "$(id -u)" = 0 ] || e2e_die "must run as root (network namespaces, AF_PACKET)"
	for t in ip ping iperf3 ethtool ss timeout "$E2E_PY" "$@"; do
		command -v "$t" >/dev/null 2>&1 || missing+=("$t")
	done
	[ ${#missing[@]} -eq 0 ] ||
		e2e_die "missing tools: ${missing[*]} (apt-get install iproute2 iputils-ping iperf3 ethtool python3 coreutils)"
	[ -x "$SLUICE" ] || e2e_die "sluice binary not found or not executable: $SLUICE (build it: meson setup build && ninja -C build)"
}

# Kill PID only if it is still a child of this shell (never a reused PID).
_e2e_kill_child() {
	local pid=$1 sig=${2:-TERM} ppid
	[ -r "/proc/$pid/stat" ] || return 0
	ppid=$(awk '{ sub(/^.*\) /, ""); print $2 }' "/proc/$pid/stat" 2>/dev/null)
	[ "$ppid" = "$$" ] || [ "$ppid" = "$BASHPID" ] || return 0
	kill "-$sig" "$pid" 2>/dev/null
}

e2e_cleanup() {
	local pid i p
	trap - EXIT INT TERM
	for pid in "${E2E_PIDS[@]}"; do _e2e_kill_child "$pid" TERM; done
	for i in $(seq 1 30); do
		local alive=0
		for pid in "${E2E_PIDS[@]}"; do
			[ -d "/proc/$pid" ] && _e2e_kill_child "$pid" 0 && alive=1
		done
		[ $alive = 0 ] && break
		sleep 0.1
	done
	for pid in "${E2E_PIDS[@]}"; do _e2e_kill_child "$pid" KILL; done
	wait 2>/dev/null
	for p in "$NS_CLI" "$NS_SRV" "$NS_MID"; do
		ip netns del "$p" 2>/dev/null
	done
	for p in "${E2E_PREFIXES[@]}"; do
		[ -n "$p" ] && rm -rf "/var/run/dpdk/$p"
	done
	if [ -n "$E2E_TMP" ] && [ -d "$E2E_TMP" ]; then
		if [ -n "${E2E_KEEP:-}" ] || [ "$E2E_FAILED" != 0 ]; then
			e2e_log "logs kept in $E2E_TMP"
		else
			rm -rf "$E2E_TMP"
		fi
	fi
}

_e2e_nsx() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

# e2e_run CMD...: run CMD in the background and wait for it, so that a
# SIGINT/SIGTERM to the test runs its cleanup trap at once instead of after
# CMD ends (bash defers traps during a foreground command). Returns CMD's
# status. Use "timeout --foreground" inside it: plain timeout moves CMD to
# its own process group, out of reach of the signals that stop a test.
e2e_run() {
	"$@" &
	local pid=$!
	E2E_PIDS+=("$pid")
	wait "$pid"
}
# Load generators (iperf3, ping, irtt) stay off sluice's lcore: a poll-mode
# shaper that loses its core loses link time, and the tests would measure
# the scheduler instead of sluice. E2E_LOAD_CPUS="" turns pinning off.
E2E_LOAD_CPUS=${E2E_LOAD_CPUS-$("$E2E_PY" -c 'import os, sys
c = sorted(os.sched_getaffinity(0) - {int(sys.argv[1])})
print(",".join(map(str, c)))' "$E2E_LCORE" 2>/dev/null)}
# The words that pin a load generator ("taskset -c CPUS"), or none.
_e2e_pin_words() {
	if [ -n "$E2E_LOAD_CPUS" ] && command -v taskset >/dev/null; then
		echo taskset -c "$E2E_LOAD_CPUS"
	fi
}
_e2e_pinned() { $(_e2e_pin_words) "$@"; }
cli() { _e2e_pinned ip netns exec "$NS_CLI" "$@"; }
srv() { _e2e_pinned ip netns exec "$NS_SRV" "$@"; }
# srv() for a server that does not end by itself (iperf3 -s), in the
# background. Started by exec, so the PID that joins E2E_PIDS is the
# server's own and the cleanup stops it: `srv ... &` runs the function in
# a subshell, whose PID is not the server's.
srv_daemon() {
	ip netns exec "$NS_SRV" $(_e2e_pin_words) "$@" &
	E2E_PIDS+=("$!")
}

# How much of the time sluice's datapath thread was on its CPU, in percent,
# since e2e_cpu_mark. Read from the scheduler (/proc/PID/schedstat, run
# time in ns), so a starved run can be told from a slow sluice.
e2e_cpu_mark() {
	_E2E_CPU_T0=$(date +%s%N)
	_E2E_CPU_R0=$(awk '{ print $1 }' "/proc/$SLUICE_PID/schedstat" 2>/dev/null)
}
e2e_cpu_pct() {
	local t1 r1
	t1=$(date +%s%N)
	r1=$(awk '{ print $1 }' "/proc/$SLUICE_PID/schedstat" 2>/dev/null)
	awk -v t0="$_E2E_CPU_T0" -v t1="$t1" -v r0="${_E2E_CPU_R0:-}" -v r1="${r1:-}" \
		'BEGIN { if (r0 == "" || r1 == "" || t1 <= t0) print 100;
			 else printf "%.0f\n", 100 * (r1 - r0) / (t1 - t0) }'
}
mid() { _e2e_nsx "$NS_MID" "$@"; }

_e2e_offloads_off() {
	# rx/tx checksum, TSO, GSO, GRO off: AF_PACKET would otherwise hand
	# sluice partial checksums and 64 KB super-frames.
	_e2e_nsx "$1" ethtool -K "$2" rx off tx off tso off gso off gro off \
		>/dev/null 2>&1 ||
		e2e_die "ethtool -K $2 in $1 failed"
}

# Build the three namespaces and two veth pairs; install the cleanup trap.
e2e_setup() {
	trap e2e_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/sluice-e2e.XXXXXX") || e2e_die "mktemp failed"
	local ns
	for ns in "$NS_CLI" "$NS_SRV" "$NS_MID"; do
		ip netns add "$ns" || e2e_die "ip netns add $ns failed"
	done
	# The sluice namespace must stay silent: no IPv6 link-local, no ND/MLD
	# chatter from its own kernel mixed into the bridged traffic.
	mid sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 ||
		e2e_die "sysctl in $NS_MID failed"
	for ns in "$NS_CLI" "$NS_SRV"; do
		_e2e_nsx "$ns" sysctl -qw net.ipv6.conf.default.accept_dad=0 \
			net.ipv6.conf.all.accept_dad=0 >/dev/null
	done
	ip -n "$NS_MID" link add "$SUB_IF" type veth peer name "$CLI_IF" netns "$NS_CLI" ||
		e2e_die "veth $SUB_IF failed"
	ip -n "$NS_MID" link add "$INET_IF" type veth peer name "$SRV_IF" netns "$NS_SRV" ||
		e2e_die "veth $INET_IF failed"
	_e2e_offloads_off "$NS_MID" "$SUB_IF"
	_e2e_offloads_off "$NS_MID" "$INET_IF"
	_e2e_offloads_off "$NS_CLI" "$CLI_IF"
	_e2e_offloads_off "$NS_SRV" "$SRV_IF"
	ip -n "$NS_CLI" addr add "$CLI4/24" dev "$CLI_IF"
	ip -n "$NS_CLI" addr add "$CLI6/64" dev "$CLI_IF" nodad
	ip -n "$NS_SRV" addr add "$SRV4/24" dev "$SRV_IF"
	ip -n "$NS_SRV" addr add "$SRV6/64" dev "$SRV_IF" nodad
	for ns in "$NS_CLI" "$NS_SRV" "$NS_MID"; do ip -n "$ns" link set lo up; done
	ip -n "$NS_MID" link set "$SUB_IF" up
	ip -n "$NS_MID" link set "$INET_IF" up
	ip -n "$NS_CLI" link set "$CLI_IF" up
	ip -n "$NS_SRV" link set "$SRV_IF" up
}

# e2e_start_sluice [CONFIG|""] [sluice args...]
# Starts sluice in the middle namespace and waits until it forwards and its
# telemetry socket answers. Sets SLUICE_PID, SLUICE_LOG, SLUICE_PREFIX.
e2e_start_sluice() {
	local cfg=${1:-}; shift || true
	# A check that failed before its e2e_stop_sluice leaves the last
	# sluice running; a second one on the same veths would answer every
	# frame twice (its proxy resetting the first one's connections) and
	# make every later check fail for no reason of its own. Stop it.
	if [ -n "$SLUICE_PID" ] && kill -0 "$SLUICE_PID" 2>/dev/null; then
		e2e_log "the previous sluice (PID $SLUICE_PID) is still running: stopping it before the next starts"
		e2e_stop_sluice || e2e_log "its stop: $E2E_WHY"
	fi
	_E2E_NSLUICE=$((_E2E_NSLUICE + 1))
	SLUICE_PREFIX=sle2e-$E2E_ID-$_E2E_NSLUICE
	SLUICE_LOG=$E2E_TMP/sluice.$_E2E_NSLUICE.log
	SLUICE_RC=
	E2E_PREFIXES+=("$SLUICE_PREFIX")
	_E2E_K0=$(e2e_kernel_rx "$SUB_IF") _E2E_K1=$(e2e_kernel_rx "$INET_IF")
	local args=(--no-huge -m 512 --no-pci --file-prefix "$SLUICE_PREFIX"
		-l "$E2E_LCORE" --log-level=lib.eal:warning) p
	for p in "${!E2E_PORT_IFS[@]}"; do
		args+=(--vdev "net_af_packet$p,iface=${E2E_PORT_IFS[$p]}${E2E_AFP_ARGS:+,$E2E_AFP_ARGS}")
	done
	args+=(--)
	[ -n "$cfg" ] && args+=(-c "$cfg")
	# ip netns exec execs sluice, so $! is sluice's own PID.
	ip netns exec "$NS_MID" "$SLUICE" "${args[@]}" "$@" \
		</dev/null >"$SLUICE_LOG" 2>&1 &
	SLUICE_PID=$!
	E2E_PIDS+=("$SLUICE_PID")
	local i
	for i in $(seq 1 "${E2E_START_TRIES:-200}"); do
		if ! kill -0 "$SLUICE_PID" 2>/dev/null; then
			wait "$SLUICE_PID"; SLUICE_RC=$?
			e2e_log "sluice log:"; sed 's/^/  | /' "$SLUICE_LOG" >&2
			E2E_WHY="sluice exited with status $SLUICE_RC during start-up"
			return 1
		fi
		if grep -q 'worker(s),' "$SLUICE_LOG" &&
			"$E2E_PY" "$E2E_DIR/telemetry.py" "$SLUICE_PREFIX" /sluice/totals \
				>/dev/null 2>&1; then
			return 0
		fi
		sleep 0.1
	done
	E2E_WHY="sluice not ready after $(( ${E2E_START_TRIES:-200} / 10 )) s (log: $SLUICE_LOG)"
	return 1
}

# SIGTERM sluice, wait for it, and check exit status 0 and that every mbuf
# came back (mempool in_use == baseline). Sets SLUICE_RC.
e2e_stop_sluice() {
	local i
	E2E_WHY=
	[ -n "$SLUICE_PID" ] || { E2E_WHY="sluice not running"; return 1; }
	kill -TERM "$SLUICE_PID" 2>/dev/null
	for i in $(seq 1 "${E2E_STOP_TRIES:-150}"); do
		kill -0 "$SLUICE_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$SLUICE_PID" 2>/dev/null; then
		kill -KILL "$SLUICE_PID" 2>/dev/null
		wait "$SLUICE_PID" 2>/dev/null
		SLUICE_PID=
		E2E_WHY="sluice still running $(( ${E2E_STOP_TRIES:-150} / 10 )) s after SIGTERM (killed)"
		return 1
	fi
	wait "$SLUICE_PID"; SLUICE_RC=$?
	SLUICE_PID=
	if [ "$SLUICE_RC" != 0 ]; then
		E2E_WHY="sluice exited with status $SLUICE_RC after SIGTERM"
		return 1
	fi
	local line
	line=$(grep '^mempool in_use=' "$SLUICE_LOG" | tail -1)
	if [ -z "$line" ]; then
		E2E_WHY="no 'mempool in_use=' line in sluice's output"
		return 1
	fi
	local in_use base
	in_use=$(e2e_field "$line" in_use)
	base=$(e2e_field "$line" baseline)
	if [ "$in_use" != "$base" ]; then
		E2E_WHY="mbuf leak: $line"
		return 1
	fi
	return 0
}

# e2e_kernel_rx DEV: packets the sluice namespace's kernel received on DEV
# (what the AF_PACKET socket was offered).
e2e_kernel_rx() {
	ip -n "$NS_MID" -s -j link show "$1" |
		"$E2E_PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["rx"]["packets"])'
}

# e2e_ring_drops: frames the kernel received on the two sluice-side veths
# since sluice started but sluice never counted (lost in the AF_PACKET rx
# rings, which DPDK 22.11 does not report). Call while sluice still runs.
e2e_ring_drops() {
	local k0 k1 r0 r1
	k0=$(e2e_kernel_rx "$SUB_IF") k1=$(e2e_kernel_rx "$INET_IF")
	r0=$(e2e_tel /sluice/ports 0.rx) r1=$(e2e_tel /sluice/ports 1.rx)
	echo $(( (k0 - _E2E_K0) - r0 + (k1 - _E2E_K1) - r1 ))
}

# e2e_field "LINE" KEY: value of KEY=value in LINE.
e2e_field() {
	echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1
}

# e2e_final "PREFIX" KEY: KEY from the final-counter line starting with
# PREFIX in the last sluice's output, e.g. e2e_final "port 0" rx.
e2e_final() {
	local line
	line=$(grep "^$1 " "$SLUICE_LOG" | tail -1)
	e2e_field "$line" "$2"
}

# e2e_tel COMMAND [KEY.PATH]: telemetry answer of the running sluice as JSON.
e2e_tel() {
	"$E2E_PY" "$E2E_DIR/telemetry.py" "$SLUICE_PREFIX" "$@"
}

# e2e_ping FAMILY(4|6) COUNT INTERVAL: ping the server from the client after
# a neighbour warm-up. Sets E2E_LOSS (percent) and E2E_RTT (min/avg/max ms).
e2e_ping() {
	local fam=$1 count=$2 intv=$3 dst out i
	E2E_WHY= E2E_LOSS= E2E_RTT=
	if [ "$fam" = 6 ]; then dst=$SRV6; else dst=$SRV4; fi
	for i in 1 2 3; do   # ARP / ND may eat the first echo
		cli ping "-$fam" -c 1 -W 2 "$dst" >/dev/null 2>&1 && break
	done
	e2e_run cli timeout --foreground 30 ping "-$fam" -c "$count" -i "$intv" \
		-W 1 "$dst" >"$E2E_TMP/ping.out" 2>&1
	out=$(cat "$E2E_TMP/ping.out")
	E2E_LOSS=$(echo "$out" | sed -n 's/.* \([0-9.]*\)% packet loss.*/\1/p')
	E2E_RTT=$(echo "$out" | sed -n 's|^rtt [^=]*= \([0-9.]*\)/\([0-9.]*\)/\([0-9.]*\)/.*|\1/\2/\3|p')
	E2E_RTT_P50=$(echo "$out" | sed -n 's/.* time=\([0-9.]*\) ms.*/\1/p' | sort -n |
		awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }')
	if [ -z "$E2E_LOSS" ]; then
		E2E_WHY="ping -$fam: no summary: $(echo "$out" | tail -1)"
		return 1
	fi
	if [ "$E2E_LOSS" != 0 ]; then
		E2E_WHY="ping -$fam $dst: $E2E_LOSS% loss over $count echoes"
		return 1
	fi
	return 0
}

# e2e_many_connections: thousands of connections at once, after
# e2e_setup: the server's accept queue and SYN backlog (per namespace)
# hold them all, and the client has ports to spare.
e2e_many_connections() {
	srv sysctl -qw net.core.somaxconn=4096 net.ipv4.tcp_max_syn_backlog=4096 ||
		e2e_die "sysctl somaxconn in $NS_SRV failed"
	cli sysctl -qw net.ipv4.ip_local_port_range="20000 60999" ||
		e2e_die "sysctl ip_local_port_range in $NS_CLI failed"
}

# e2e_iperf FAMILY(4|6) [-R] [more iperf3 client args]: one TCP transfer of
# E2E_IPERF_SECS seconds, client to server (or back with -R). Sets
# E2E_MBPS (receiver's goodput) and E2E_JSON (the client's JSON report).
_E2E_IPERF_PORT=${E2E_IPERF_PORT:-5201}
# e2e_wait_listen PORT [t|u]: wait up to 5 s for a TCP (default) or UDP
# server in the server namespace to listen on PORT.
e2e_wait_listen() {
	local i
	for i in $(seq 1 50); do
		srv ss -Hl"${2:-t}"n "sport = :$1" 2>/dev/null | grep -q . && return 0
		sleep 0.1
	done
	return 1
}

e2e_iperf() {
	local fam=$1; shift
	local dst bind spid i port=$_E2E_IPERF_PORT
	_E2E_IPERF_PORT=$((_E2E_IPERF_PORT + 1))
	E2E_WHY= E2E_MBPS=
	if [ "$fam" = 6 ]; then dst=$SRV6; else dst=$SRV4; fi
	E2E_JSON=$E2E_TMP/iperf.$port.json
	srv timeout --foreground $((E2E_IPERF_SECS + 30)) iperf3 -s -1 -B "$dst" -p "$port" \
		</dev/null >"$E2E_TMP/iperf-server.$port.log" 2>&1 &
	spid=$!
	E2E_PIDS+=("$spid")
	e2e_wait_listen "$port"
	e2e_run cli timeout --foreground $((E2E_IPERF_SECS + 20)) iperf3 -c "$dst" -p "$port" -J \
		-t "$E2E_IPERF_SECS" --connect-timeout 5000 "$@" \
		</dev/null >"$E2E_JSON" 2>"$E2E_JSON.err"
	local crc=$?
	for i in $(seq 1 50); do
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	_e2e_kill_child "$spid" TERM
	wait "$spid" 2>/dev/null
	local res
	res=$("$E2E_PY" - "$E2E_JSON" "$E2E_IPERF_SECS" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception as e:
    print("ERR no JSON from iperf3 client (%s)" % e); sys.exit()
if j.get("error"):
    print("ERR iperf3: %s" % j["error"]); sys.exit()
end = j.get("end", {})
r, s = end.get("sum_received", {}), end.get("sum_sent", {})
if not r.get("bytes"):
    print("ERR nothing received"); sys.exit()
if r.get("seconds", 0) < 0.8 * float(sys.argv[2]):
    print("ERR transfer stopped after %.2f s" % r.get("seconds", 0)); sys.exit()
print("OK %.1f %d %d" % (r["bits_per_second"] / 1e6, s.get("retransmits", -1),
                         r["bytes"]))
PY
)
	case "$res" in
	OK*)
		set -- $res
		E2E_MBPS=$2 E2E_RETRANS=$3
		if [ "$crc" != 0 ]; then
			E2E_WHY="iperf3 client exited $crc"; return 1
		fi
		if ! awk -v m="$E2E_MBPS" -v f="$E2E_MIN_MBPS" 'BEGIN { exit !(m >= f) }'; then
			E2E_WHY="$E2E_MBPS Mbit/s < $E2E_MIN_MBPS Mbit/s floor"; return 1
		fi
		return 0 ;;
	*)
		E2E_WHY="${res#ERR }; client rc=$crc $(head -c 200 "$E2E_JSON.err" 2>/dev/null)"
		return 1 ;;
	esac
}

# End of a test: exit status says whether anything failed.
e2e_finish() {
	exit "$E2E_FAILED"
}
