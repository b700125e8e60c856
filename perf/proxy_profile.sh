#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# perf/proxy_profile.sh: where the CPU that sluice's forwarding lcore
# spends goes, for the bridge and for the proxy, per gigabyte relayed.
# See perf/README.md, "Where the proxy's wall clock goes".
#
# perf/bench.sh proxy times the two contenders; this samples them. The
# same namespaces and veths as the bench (tests/e2e/lib.sh), the same
# lcores (sluice polls on F, the peers run on C), the same example
# configuration; in each round each contender moves one iperf3 case
# while `perf record -C F` samples every CPU cycle of F, user and
# kernel alike. On veths the peers' kernel work lands on F too: a frame
# sluice sends is received by the peer's TCP inside sluice's sendto()
# (veth runs the receiver's softirq in the sender's context). The report
# splits the samples by where they ran (kernel, sluice, the PMD, libc)
# and divides by the bytes the receiver got: CPU milliseconds per GB.
#
#   perf/proxy_profile.sh                       # up1, 2 rounds of 5 s
#   perf/proxy_profile.sh --case down4 --rounds 3
#
# Needs root, perf (Debian: linux-perf), iperf3. Not a test: CI does not
# run it.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
PY=/usr/bin/python3
SLUICE_BIN=$ROOT/build/app/sluice
CONF=$ROOT/config/examples/proxy-all-tcp.ini
SECS=6 ROUNDS=2 CASE=up1 FREQ=2999 TOP=15 CTRL=0 FWD=1 LOGS=""

usage() {
	cat <<EOF
usage: perf/proxy_profile.sh [options]
  --sluice BIN    sluice binary                        [build/app/sluice]
  --conf FILE     the proxy contender's configuration  [config/examples/proxy-all-tcp.ini]
  --case NAME     up1, up4, down1 or down4 (as perf/bench.sh proxy)   [$CASE]
  --secs N        seconds of iperf3 per run; perf samples N-2 of them  [$SECS]
  --rounds N      runs of each contender, alternating                  [$ROUNDS]
  --freq HZ       perf sampling frequency                              [$FREQ]
  --top N         symbols listed per contender                         [$TOP]
  --lcores C,F    the peers' CPU, sluice's forwarding lcore            [$CTRL,$FWD]
  --logs DIR      keep perf.data files and logs in DIR
EOF
	exit "${1:-2}"
}
die() { echo "proxy_profile: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
	case $1 in
	--sluice) SLUICE_BIN=${2:?}; shift ;;
	--conf) CONF=${2:?}; shift ;;
	--case) CASE=${2:?}; shift ;;
	--secs) SECS=${2:?}; shift ;;
	--rounds) ROUNDS=${2:?}; shift ;;
	--freq) FREQ=${2:?}; shift ;;
	--top) TOP=${2:?}; shift ;;
	--lcores) CTRL=${2%%,*}; FWD=${2##*,}; shift ;;
	--logs) LOGS=${2:?}; shift ;;
	-h|--help) usage 0 ;;
	*) usage ;;
	esac
	shift
done
case $CASE in
up1) ARGS=() ;;
up4) ARGS=(-P 4) ;;
down1) ARGS=(-R) ;;
down4) ARGS=(-R -P 4) ;;
*) die "--case: '$CASE' is not up1, up4, down1 or down4" ;;
esac
for v in SECS ROUNDS FREQ TOP CTRL FWD; do
	[[ "${!v}" =~ ^[0-9]+$ ]] || die "${v,,}: '${!v}' is not a number"
done
[ "$(id -u)" = 0 ] || die "needs root (network namespaces, AF_PACKET, perf -C)"
command -v perf >/dev/null || die "no perf (Debian: apt-get install linux-perf)"
[ -x "$SLUICE_BIN" ] || die "no sluice binary at $SLUICE_BIN"
[ -r "$CONF" ] || die "no $CONF"
[ "$SECS" -ge 4 ] || die "--secs: at least 4 (perf samples the middle SECS-2 s)"
WIN=$((SECS - 2))
OUT=${LOGS:-$(mktemp -d)}
mkdir -p "$OUT" || die "cannot create $OUT"

# shellcheck disable=SC2034 # all read by tests/e2e/lib.sh
{
	SLUICE=$SLUICE_BIN
	E2E_ID=prof$$ E2E_LCORE=$FWD E2E_LOAD_CPUS=$CTRL E2E_IPERF_SECS=$SECS
	E2E_MIN_MBPS=0 E2E_PY=$PY
}
TMPDIR=$OUT
# shellcheck source=../tests/e2e/lib.sh
. "$ROOT/tests/e2e/lib.sh"
e2e_require_tools
e2e_setup
finish() {
	e2e_cleanup
	[ -n "$LOGS" ] || rm -rf "$OUT"
}
trap finish EXIT
for ns in "$NS_CLI" "$NS_SRV"; do
	ip netns exec "$ns" sysctl -qw net.ipv4.tcp_congestion_control=cubic 2>/dev/null
done

echo "proxy_profile: case $CASE, $ROUNDS round(s) of ${SECS} s, sluice on CPU $FWD, peers on CPU $CTRL, perf at $FREQ Hz; proxy config ${CONF#"$ROOT"/}"
echo "proxy_profile: load average $(cut -d' ' -f1-3 /proc/loadavg)"
RUNS=()
for ((r = 1; r <= ROUNDS; r++)); do
	for c in bridge proxy; do
		cfg=""
		[ "$c" = proxy ] && cfg=$CONF
		e2e_start_sluice "$cfg" || die "$c: sluice did not start: $E2E_WHY"
		e2e_ping 4 3 0.05 || die "$c: no ping through sluice: $E2E_WHY"
		data=$OUT/$c-$r.data
		# What one loop that finds no frame takes: loops in a second
		# with no traffic.
		i0=$(e2e_tel /sluice/workers 0 2>/dev/null || echo '{}')
		t0=$(date +%s.%N)
		sleep 1
		w0=$(e2e_tel /sluice/workers 0 2>/dev/null || echo '{}')
		t1=$(date +%s.%N)
		s0=$(grep -E "^cpu($CTRL|$FWD) " /proc/stat | tr '\n' ' ')
		# perf samples WIN seconds inside the transfer: from 1.5 s after
		# the iperf3 server starts (it listens within a few hundred ms)
		# to about 0.5 s before the client ends.
		(sleep 1.5 && exec perf record -q -C "$FWD" -F "$FREQ" -o "$data" -- sleep "$WIN") \
			>"$OUT/perf-$c-$r.log" 2>&1 &
		ppid=$!
		E2E_PIDS+=("$ppid")
		e2e_iperf 4 "${ARGS[@]}" || die "$c: iperf3: $E2E_WHY"
		s1=$(grep -E "^cpu($CTRL|$FWD) " /proc/stat | tr '\n' ' ')
		w1=$(e2e_tel /sluice/workers 0 2>/dev/null || echo '{}')
		t2=$(date +%s.%N)
		load=$("$PY" - "$w0" "$w1" "$s0" "$s1" "$CTRL" "$FWD" "$i0" "$t0" "$t1" "$t2" <<'LOAD'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
i0, t0, t1, t2 = json.loads(sys.argv[7]), float(sys.argv[8]), float(sys.argv[9]), float(sys.argv[10])
def cpus(s):
    w = s.split()
    out, i = {}, 0
    while i < len(w):
        v = [int(x) for x in w[i + 1:i + 11]]
        out[w[i][3:]] = (sum(v), v[3] + v[4])  # all, idle + iowait
        i += 11
    return out
c0, c1 = cpus(sys.argv[3]), cpus(sys.argv[4])
busy = lambda k: 100.0 * (1 - (c1[k][1] - c0[k][1]) / max(c1[k][0] - c0[k][0], 1))
out = "CPU %s (peers) %.0f%% busy, CPU %s (sluice) %.0f%%" % (
    sys.argv[5], busy(sys.argv[5]), sys.argv[6], busy(sys.argv[6]))
try:
    loops, bl = b["loops"] - a["loops"], b["busy_loops"] - a["busy_loops"]
    out += "; sluice: %.1f%% of its loops found no frame, %.1f frames per busy loop" % (
        100.0 * (loops - bl) / loops, (b["rx"] - a["rx"]) / bl)
    idle_ns = (t1 - t0) * 1e9 / (a["loops"] - i0["loops"])
    # The loops counted span from the read of w0 to that of w1: the
    # transfer and the iperf3 server's start and end around it.
    out += ", an empty loop %.0f ns: about %.0f%% of the time polled nothing" % (
        idle_ns, 100.0 * (loops - bl) * idle_ns / ((t2 - t1) * 1e9))
except (KeyError, ZeroDivisionError):
    pass
print(out)
LOAD
)
		cp "$E2E_JSON" "$OUT/$c-$r.json"
		wait "$ppid" || die "$c: perf record failed: $(tail -n 2 "$OUT/perf-$c-$r.log")"
		e2e_stop_sluice || die "$c: $E2E_WHY"
		perf script -i "$data" -F comm,ip,sym,dso 2>/dev/null >"$OUT/$c-$r.txt" ||
			die "$c: perf script failed"
		printf 'round %d/%d %-6s %7.1f Mbit/s, %d retransmitted (%s)\n' "$r" "$ROUNDS" "$c" \
			"$E2E_MBPS" "$E2E_RETRANS" "$load"
		RUNS+=("$c-$r")
	done
done

"$PY" - "$OUT" "$FREQ" "$WIN" "$TOP" "${RUNS[@]}" <<'PY'
import collections, json, re, statistics, sys

out, freq, win, top = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
runs = sys.argv[5:]

def where(dso):
    if dso.startswith("[kernel"):
        return "kernel"
    if dso.endswith("/sluice") or dso == "sluice":
        return "sluice"
    if "librte_net_" in dso:
        return "pmd"
    if "librte_" in dso:
        return "dpdk"
    if "libc.so" in dso:
        return "libc"
    return "other"

CLASSES = ("kernel", "sluice", "pmd", "dpdk", "libc", "other")
per = collections.defaultdict(lambda: collections.defaultdict(list))
syms = collections.defaultdict(collections.Counter)
gbs = collections.defaultdict(float)
for run in runs:
    c = run.rsplit("-", 1)[0]
    j = json.load(open("%s/%s.json" % (out, run)))
    # the bytes of the sampled window, at the receiver's mean rate
    gb = j["end"]["sum_received"]["bits_per_second"] / 8 * win / 1e9
    cls = collections.Counter()
    for line in open("%s/%s.txt" % (out, run)):
        # "comm ip sym (dso)": the dso is the last parenthesised word
        m = re.match(r"\s*(\S+)\s+[0-9a-f]+\s+(.*?)\s*\(([^()]*)\)\s*$", line)
        if not m:
            continue
        comm, sym, dso = m.groups()
        w = where(dso) if not comm.startswith("swapper") else "idle"
        cls[w] += 1
        name = sym.split("+")[0] or "[unknown]"
        syms[c]["%s %s" % (w, name)] += 1
    gbs[c] += gb
    # CPU ms per GB relayed: samples / freq seconds of the CPU
    for k in CLASSES:  # the CPU's own idle samples are in none of them
        per[c][k].append(cls[k] / freq * 1000.0 / gb)
    per[c]["total"].append(sum(cls[k] for k in CLASSES) / freq * 1000.0 / gb)

med = lambda v: statistics.median(v) if v else 0.0
print("CPU ms of sluice's lcore per GB the receiver got (median of the runs):")
print("%-8s %8s %8s %8s %8s %8s %8s %8s" % (("", "total") + CLASSES))
for c in ("bridge", "proxy"):
    print("%-8s %8.1f" % (c, med(per[c]["total"])) +
          "".join(" %8.1f" % med(per[c][k]) for k in CLASSES))
for c in ("bridge", "proxy"):
    print("top %s (CPU ms per GB, all runs):" % c)
    for s, k in syms[c].most_common(top):
        print("  %8.2f  %s" % (k / freq * 1000.0 / gbs[c], s))
b, p = per["bridge"], per["proxy"]
for k in ("total", "kernel", "sluice", "pmd"):
    if med(b[k]) > 0:
        print("profile_ratio %s proxy/bridge %.3f  (+%.1f ms per GB)" %
              (k, med(p[k]) / med(b[k]), med(p[k]) - med(b[k])))
PY
