#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# sluice-exporter scraped by a real Prometheus: sluice shapes the client's
# subscriber pipe, the exporter serves its telemetry, Prometheus (Debian's
# package) scrapes it every second, and the test asks Prometheus's HTTP API
# whether the counters moved by the pings it sent. Every telemetry counter
# must have a metric, and the Grafana dashboard may only name metrics the
# exporter serves. Exporter and Prometheus listen on the loopback of the
# sluice namespace, so no port on the host is used.
set -u
. "$(dirname "$0")/lib.sh"
E2E_TEST=exporter
ROOT=$(cd "$E2E_DIR/../.." && pwd)
EXPORTER=${SLUICE_EXPORTER:-$ROOT/tools/sluice-exporter}
DASHBOARD=$ROOT/docs/grafana/sluice.json
EXP_ADDR=127.0.0.1:9471
PROM_ADDR=127.0.0.1:9090
COUNT=20

e2e_require_tools prometheus
e2e_setup
# Every stage on, so every stage's counters are exported: the client's
# 198.18.0.0/24 is subscriber pipe 1; the proxy intercepts nothing used.
cp "$ROOT/config/examples/subscribers.csv" "$E2E_TMP/"
{
	cat "$ROOT/config/examples/subscribers.ini"
	printf '[tcpopt]\nmss_clamp = 1400\n[impair]\ndelay = 1ms\n[proxy]\nintercept = 198.19.255.0/24\n'
} >"$E2E_TMP/all.ini"
e2e_start_sluice "$E2E_TMP/all.ini" || e2e_die "sluice start: $E2E_WHY"
# One refused TCP connection: SYN options appear in tcpopt's per-kind counters.
cli timeout 3 bash -c "exec 3<>/dev/tcp/$SRV4/9" 2>/dev/null

# ip netns exec execs, so $! is the process itself; not through mid(): a
# backgrounded shell function is a subshell, and its PID is not the tool's.
ip netns exec "$NS_MID" "$E2E_PY" "$EXPORTER" --listen "$EXP_ADDR" --file-prefix "$SLUICE_PREFIX" \
	</dev/null >"$E2E_TMP/exporter.log" 2>&1 &
EXP_PID=$!
E2E_PIDS+=("$EXP_PID")
cat >"$E2E_TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: sluice
    static_configs:
      - targets: ['$EXP_ADDR']
EOF
ip netns exec "$NS_MID" prometheus --config.file="$E2E_TMP/prometheus.yml" \
	--storage.tsdb.path="$E2E_TMP/prom-data" --web.listen-address="$PROM_ADDR" \
	--log.level=warn </dev/null >"$E2E_TMP/prometheus.log" 2>&1 &
PROM_PID=$!
E2E_PIDS+=("$PROM_PID")

# http GET inside the sluice namespace; prints the body.
get() {
	mid "$E2E_PY" -c 'import sys, urllib.request
print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode(), end="")' "$1"
}
# promql EXPR: the single value Prometheus gives for EXPR, or nothing.
promql() {
	get "http://$PROM_ADDR/api/v1/query?query=$("$E2E_PY" -c 'import sys, urllib.parse
print(urllib.parse.quote(sys.argv[1]))' "$1")" 2>/dev/null | "$E2E_PY" -c 'import json, sys
r = json.load(sys.stdin)["data"]["result"]
if len(r) == 1: print(r[0]["value"][1])'
}

exporter_serves_sluice_up() {
	local i
	for i in $(seq 1 50); do
		get "http://$EXP_ADDR/metrics" >"$E2E_TMP/metrics.txt" 2>/dev/null &&
			grep -qx 'sluice_up 1' "$E2E_TMP/metrics.txt" && break
		sleep 0.1
	done
	grep -qx 'sluice_up 1' "$E2E_TMP/metrics.txt" ||
		{ E2E_WHY="no 'sluice_up 1' ($(tail -2 "$E2E_TMP/exporter.log"))"; return 1; }
	E2E_WHY="$(grep -vc '^#' "$E2E_TMP/metrics.txt") samples"
}
e2e_check exporter_serves_sluice_up exporter_serves_sluice_up

# Every number in every /sluice/ reply (pipes and all) has a sample whose
# name or labels carry its key: nothing the telemetry counts is left out.
exporter_has_a_metric_for_every_telemetry_counter() {
	E2E_WHY=$(mid "$E2E_PY" - "$ROOT/tools" "$SLUICE_PREFIX" "$E2E_TMP/metrics.txt" <<'PY'
import re, sys
sys.path.insert(0, sys.argv[1])
import sluice_telemetry as st
t = st.Telemetry.open(sys.argv[2])
# Read the telemetry here, not through the exporter's own snapshot().
snap = {}
# aqm_pipes repeats the pipes' bytes and drops in columns, for ranking.
for c in t.query("/"):
    if c.startswith("/sluice/") and not c.endswith("_set") and c != "/sluice/aqm_pipes":
        v = t.query(c)
        if v is not None:
            snap[c] = v
for i in range(1, int(snap["/sluice/aqm"]["subscribers"]) + 1):
    snap["/sluice/aqm_pipe,%d" % i] = t.query("/sluice/aqm_pipe,%d" % i)
text = open(sys.argv[3]).read()
lines = [l for l in text.splitlines() if l and not l.startswith("#")]
missing, n = [], 0
def leaves(v, path):
    if isinstance(v, dict):
        for k, x in v.items():
            yield from leaves(x, path + [str(k)])
    elif isinstance(v, (int, float)) and not isinstance(v, bool):
        yield path
for cmd, v in snap.items():
    cmdname = st._clean(cmd.split(",")[0].strip("/").replace("sluice/", ""))
    for path in leaves(v, []):
        n += 1
        key = st._clean(path[-1])
        ok = False
        for l in lines:
            name = l.split("{")[0].split(" ")[0]
            base = name[:-6] if name.endswith("_total") else name
            if cmdname in name and (base.endswith("_" + key)
                                    or ('"%s"' % path[-1]) in l):
                ok = True
                break
        if not ok:
            missing.append(cmd + ":" + ".".join(path))
if missing:
    print("no metric for %d of %d: %s" % (len(missing), n, " ".join(missing[:8])))
    sys.exit(1)
print("%d telemetry numbers in %d commands, each exported" % (n, len(snap)))
PY
)
}
e2e_check exporter_has_a_metric_for_every_telemetry_counter exporter_has_a_metric_for_every_telemetry_counter

exporter_labels_pipes_ports_and_directions() {
	local m=$E2E_TMP/metrics.txt
	grep -q '^sluice_ports_rx_total{.*port="0"' "$m" || { E2E_WHY="no sluice_ports_rx_total{port=\"0\"}"; return 1; }
	grep -q '^sluice_aqm_pipe_sent_total{dir="up",pipe="1",prefix="198.18.0.0/24"}' "$m" ||
		{ E2E_WHY="no per-subscriber pipe sample for 198.18.0.0/24"; return 1; }
	grep -q '^sluice_malformed_total{reason="truncated_l2"}' "$m" || { E2E_WHY="no malformed reason label"; return 1; }
	grep -q '^# TYPE sluice_aqm_sojourn_p99_us gauge' "$m" || { E2E_WHY="sojourn is not a gauge"; return 1; }
	grep -q '^# TYPE sluice_aqm_pipe_codel_target_us gauge' "$m" || { E2E_WHY="codel_target_us is not a gauge"; return 1; }
	if command -v promtool >/dev/null; then
		promtool check metrics <"$m" >"$E2E_TMP/promtool.out" 2>&1
		# Lint notes (abbreviated units: _us, _pkts) are allowed; errors are not.
		if grep -qi 'error' "$E2E_TMP/promtool.out"; then
			E2E_WHY="promtool: $(head -2 "$E2E_TMP/promtool.out")"; return 1
		fi
	fi
}
e2e_check exporter_labels_pipes_ports_and_directions exporter_labels_pipes_ports_and_directions

# Past --pipes N subscribers, only the busiest pipes are exported in full:
# with --pipes 1, pipe 1 (the client's, which the test's traffic went
# through) and none of the idle others, and the exporter says it showed
# one; by default (--pipes 100) it shows every one of the few here.
exporter_with_more_subscribers_than_pipes_shows_the_busiest() {
	mid "$E2E_PY" "$EXPORTER" --once --file-prefix "$SLUICE_PREFIX" --pipes 1 \
		>"$E2E_TMP/metrics-top1.txt" 2>"$E2E_TMP/exporter-top1.log" ||
		{ E2E_WHY="--once --pipes 1 failed: $(tail -2 "$E2E_TMP/exporter-top1.log")"; return 1; }
	local m=$E2E_TMP/metrics-top1.txt pipes
	pipes=$(grep -o '^sluice_aqm_pipe_rate_down{[^}]*}' "$m" | grep -o 'pipe="[0-9]*"' | sort -u | tr '\n' ' ')
	[ "$pipes" = 'pipe="0" pipe="1" ' ] || { E2E_WHY="pipes exported: '$pipes', want the default (0) and 1"; return 1; }
	grep -qx 'sluice_exporter_pipes_shown 1' "$m" || { E2E_WHY="no 'sluice_exporter_pipes_shown 1'"; return 1; }
	local n
	n=$(awk '$1 == "sluice_aqm_subscribers" { print $2 }' "$E2E_TMP/metrics.txt")
	[ "${n:-0}" -ge 2 ] && grep -qx "sluice_exporter_pipes_shown $n" "$E2E_TMP/metrics.txt" ||
		{ E2E_WHY="the default (--pipes 100) did not show all ${n:-?} subscribers' pipes"; return 1; }
	E2E_WHY="--pipes 1 of $n subscribers: $pipes"
}
e2e_check exporter_with_more_subscribers_than_pipes_shows_the_busiest exporter_with_more_subscribers_than_pipes_shows_the_busiest

prometheus_scrapes_the_exporter() {
	local i v
	for i in $(seq 1 100); do
		v=$(promql 'up{job="sluice"}')
		[ "$v" = 1 ] && { E2E_WHY="target up after $((i / 5)) s"; return 0; }
		sleep 0.2
	done
	E2E_WHY="up{job=\"sluice\"} is '${v:-none}' after 20 s ($(tail -2 "$E2E_TMP/prometheus.log"))"
	return 1
}
# The newest scraped value of EXPR, once a scrape newer than now has landed.
fresh() {
	local t0 i ts
	t0=$(date +%s)
	for i in $(seq 1 40); do
		ts=$(promql "timestamp($1)")
		[ -n "$ts" ] && awk -v a="$ts" -v b="$t0" 'BEGIN { exit !(a > b + 0.5) }' && break
		sleep 0.2
	done
	promql "$1"
}
counters_moved_by_pings_show_in_prometheus() {
	local rx0 rx1 up0 up1 q1 q2
	q1='sluice_ports_rx_total{port="0"}'
	q2='sluice_aqm_pipe_sent_total{pipe="1",dir="up"}'
	rx0=$(fresh "$q1") up0=$(promql "$q2")
	[ -n "$rx0" ] && [ -n "$up0" ] || { E2E_WHY="no value for $q1 or $q2"; return 1; }
	e2e_ping 4 "$COUNT" 0.05 || return 1
	rx1=$(fresh "$q1") up1=$(promql "$q2")
	if ! awk -v a="$rx0" -v b="$rx1" -v n="$COUNT" 'BEGIN { exit !(b - a >= n) }' ||
	   ! awk -v a="$up0" -v b="$up1" -v n="$COUNT" 'BEGIN { exit !(b - a >= n) }'; then
		E2E_WHY="after $COUNT echoes: port 0 rx $rx0 -> ${rx1:-?}, pipe 1 up sent $up0 -> ${up1:-?}"
		return 1
	fi
	E2E_WHY="port 0 rx $rx0 -> $rx1, pipe 198.18.0.0/24 up sent $up0 -> $up1"
}
if e2e_check prometheus_scrapes_the_exporter prometheus_scrapes_the_exporter; then
	e2e_check counters_moved_by_pings_show_in_prometheus counters_moved_by_pings_show_in_prometheus
fi

grafana_dashboard_names_only_exported_metrics() {
	E2E_WHY=$("$E2E_PY" - "$DASHBOARD" "$E2E_TMP/metrics.txt" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
have = {l.split("{")[0].split(" ")[0] for l in open(sys.argv[2]) if l[:1] != "#"}
exprs = []
def walk(v):
    if isinstance(v, dict):
        if isinstance(v.get("expr"), str):
            exprs.append(v["expr"])
        for x in v.values():
            walk(x)
    elif isinstance(v, list):
        for x in v:
            walk(x)
walk(d)
names = {n for e in exprs for n in re.findall(r"\bsluice_[a-z0-9_]+", e)}
bad = sorted(names - have)
if not exprs or bad:
    print("%d queries; not exported: %s" % (len(exprs), " ".join(bad)))
    sys.exit(1)
print("%d panels' queries name %d metrics, all exported" % (len(exprs), len(names)))
PY
)
}
e2e_check grafana_dashboard_names_only_exported_metrics grafana_dashboard_names_only_exported_metrics

# The other way round: every metric the exporter serves (every stage is on
# here) is graphed by a panel or listed, with its reason, in
# docs/grafana/not-shown.txt; and every line there still matches a metric.
grafana_dashboard_shows_or_lists_every_exported_metric() {
	E2E_WHY=$("$E2E_PY" - "$DASHBOARD" "$ROOT/docs/grafana/not-shown.txt" "$E2E_TMP/metrics.txt" <<'PY'
import fnmatch, json, re, sys
d = json.load(open(sys.argv[1]))
globs = [l.split("#")[0].strip() for l in open(sys.argv[2])]
globs = [g for g in globs if g]
have = {l.split("{")[0].split(" ")[0] for l in open(sys.argv[3]) if l.strip() and l[:1] != "#"}
shown = set(re.findall(r"\bsluice_[a-z0-9_]+", json.dumps(d)))
unlisted = sorted(m for m in have - shown
                  if not any(fnmatch.fnmatchcase(m, g) for g in globs))
stale = [g for g in globs if not any(fnmatch.fnmatchcase(m, g) for m in have)]
if unlisted or stale:
    print("neither graphed nor in not-shown.txt: %s; stale not-shown lines: %s"
          % (" ".join(unlisted) or "-", " ".join(stale) or "-"))
    sys.exit(1)
print("%d metrics: %d graphed, %d listed as not shown"
      % (len(have), len(have & shown), len(have - shown)))
PY
)
}
e2e_check grafana_dashboard_shows_or_lists_every_exported_metric grafana_dashboard_shows_or_lists_every_exported_metric

# Prometheus and the exporter stop first, as systemd orders the units
# (sluice-exporter.service is After=sluice.service). A query during
# shutdown is safe since app/telemetry.c closes a gate first
# (tests/pcap/test_telemetry.py: test_queries_during_shutdown_never_crash_sluice).
for pid in "$PROM_PID" "$EXP_PID"; do
	_e2e_kill_child "$pid" TERM
	wait "$pid" 2>/dev/null
done
e2e_check exporter_sluice_exits_cleanly e2e_stop_sluice
e2e_finish
