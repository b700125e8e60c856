#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The short version of perf/bufferbloat.sh: sluice shapes the link (20 Mbit/s
# down, 5 up) with a bloated 1 s FIFO, then with FQ-CoDel; under 4 up + 4
# down TCP flows, the FIFO must add clearly more latency (irtt p99) than
# FQ-CoDel, and FQ-CoDel must keep the link busy. With ECN-capable hosts,
# FQ-CoDel must mark instead of drop, and the upstream ACK filter must
# drop superseded ACKs there, none downstream (and, with the ACK hold of
# perf/bufferbloat_lib.sh's BB_ACK_HOLD, hold some). Thresholds are loose: a
# shared 2-core machine adds tens of ms of scheduling noise.
# The receive-window clamp ([aqm] rwnd_clamp, on in perf/bufferbloat.sh) is
# off here: it keeps each flow's queue under CoDel's target, so CoDel would
# have nothing to mark (0 CE marks in 5 of 5 runs of the experiment with it
# on: docs/bufferbloat/README.md, "The seventh read"). This test is about
# the AQM; tests/e2e/test_rwnd.sh is about the clamp.
set -u
BB_RWND_CLAMP=${BB_RWND_CLAMP:-off}
. "$(dirname "$0")/lib.sh"
. "$E2E_DIR/../../perf/bufferbloat_lib.sh"
E2E_TEST=bufferbloat

BB_IDLE_S=${BB_IDLE_S:-2}
BB_LOAD_S=${BB_LOAD_S:-5}
BB_TAIL=1
BB_MIN_RATIO=${BB_MIN_RATIO:-3}        # FIFO p99 added / FQ-CoDel p99 added
BB_FIFO_MIN_MS=${BB_FIFO_MIN_MS:-100}  # the FIFO really bloats
BB_FQ_MAX_MS=${BB_FQ_MAX_MS:-100}      # FQ-CoDel p99 added, noise included
BB_FQ_MIN_DOWN=${BB_FQ_MIN_DOWN:-80}   # % of the payload-equivalent rate
BB_FQ_MIN_UP=${BB_FQ_MIN_UP:-60}       # lower: it also carries the down ACKs

e2e_require_tools irtt taskset
e2e_setup
bb_start_servers

# bb_get MODE EXPR: a value from MODE's summary.json (s = the summary).
bb_get() {
	"$BB_PY" -c 'import json,sys; s=json.load(open(sys.argv[1])); v=eval(sys.argv[2]); print("n/a" if v is None else "%.1f" % v)' \
		"$E2E_TMP/bb/$1/summary.json" "$2"
}

ok=1
for mode in fifo fq_codel fq_codel_ecn; do
	if bb_run_mode "$mode" "$E2E_TMP/bb/$mode" "$BB_IDLE_S" "$BB_LOAD_S" &&
		digest=$("$BB_PY" "$BB_ANALYSE" mode "$E2E_TMP/bb/$mode" 2>&1); then
		e2e_pass "bufferbloat_${mode}_run" "$digest"
	else
		e2e_fail "bufferbloat_${mode}_run" "${E2E_WHY:-analysis failed: $digest}"
		[ -n "$SLUICE_LOG" ] && grep -m3 -i 'error\|\[aqm\]' "$SLUICE_LOG" >&2
		ok=0
	fi
done
[ $ok = 1 ] || e2e_finish

fifo=$(bb_get fifo 's["probes"]["irtt"]["added"]["p99"]')
fq=$(bb_get fq_codel 's["probes"]["irtt"]["added"]["p99"]')
down=$(bb_get fq_codel 's["down"]["pct_payload"]')
up=$(bb_get fq_codel 's["up"]["pct_payload"]')
util_up=$(bb_get fq_codel 's["up"]["link_util_pct"]')

ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "n/a" && a + 0 >= b + 0) }'; }
if ge "$fifo" "$BB_FIFO_MIN_MS"; then e2e_pass bufferbloat_fifo_bloats "p99 added $fifo ms"
else e2e_fail bufferbloat_fifo_bloats "FIFO p99 added $fifo ms < $BB_FIFO_MIN_MS ms: is the shaper the bottleneck?"; fi
# Absolute latency bounds hold only when sluice had its core: starved of
# CPU (share < 80%, other work on the machine), every queue on the path grows
# and only the FIFO/FQ-CoDel separation below is judged.
starved() { ! ge "$(bb_get "$1" 's["sluice_cpu_pct"] or 100')" 80; }
if ge "$BB_FQ_MAX_MS" "$fq"; then e2e_pass bufferbloat_fq_codel_low "p99 added $fq ms"
elif starved fq_codel; then e2e_pass bufferbloat_fq_codel_low "p99 added $fq ms, not judged: sluice had $(bb_get fq_codel 's["sluice_cpu_pct"]')% of its CPU"
else e2e_fail bufferbloat_fq_codel_low "FQ-CoDel p99 added $fq ms > $BB_FQ_MAX_MS ms"; fi
fq_floor=$(awk -v f="$fq" 'BEGIN { print (f < 1 ? 1 : f) }')   # 1 ms: noise floor
if ge "$fifo" "$(awk -v f="$fq_floor" -v r="$BB_MIN_RATIO" 'BEGIN { print f * r }')"; then
	e2e_pass bufferbloat_separates "FIFO $fifo ms vs FQ-CoDel $fq ms p99 added"
else
	e2e_fail bufferbloat_separates "FIFO p99 added $fifo ms is not ${BB_MIN_RATIO}x FQ-CoDel's $fq ms"
fi
# The shaper cannot send while sluice is descheduled, so when other work
# took sluice's core (share < 80%), judge the link utilisation against the
# CPU sluice got instead of the absolute goodput.
cpu=$(bb_get fq_codel 's["sluice_cpu_pct"]')
util_down=$(bb_get fq_codel 's["down"]["link_util_pct"]')
if [ "$cpu" = n/a ] || ge "$cpu" 80; then
	if ge "$down" "$BB_FQ_MIN_DOWN" && ge "$up" "$BB_FQ_MIN_UP"; then
		e2e_pass bufferbloat_fq_codel_goodput "down $down%, up $up% of the payload-equivalent rate; up link $util_up% busy; sluice on CPU $cpu%"
	else
		e2e_fail bufferbloat_fq_codel_goodput "down $down% (< $BB_FQ_MIN_DOWN?), up $up% (< $BB_FQ_MIN_UP?) of the payload-equivalent rate; sluice on CPU $cpu%"
	fi
elif ge "$util_down" "$(awk -v c="$cpu" 'BEGIN { print 0.8 * c }')"; then
	e2e_pass bufferbloat_fq_codel_goodput "sluice had only $cpu% of its CPU: down link $util_down% busy, goodput down $down% up $up% (not judged)"
else
	e2e_fail bufferbloat_fq_codel_goodput "down link only $util_down% busy with sluice on CPU $cpu% of the time"
fi
# up_only NAME KEY WHAT: the fq_codel mode's counter KEY is at least 1 on
# the upstream, where the download flows' ACKs queue behind the uploads,
# and 0 downstream.
up_only() {
	local up down
	up=$(bb_get fq_codel "s[\"up\"][\"$2\"]")
	down=$(bb_get fq_codel "s[\"down\"][\"$2\"]")
	if ge "$up" 1 && ge 0 "$down"; then
		e2e_pass "$1" "$up upstream ACKs $3, $down downstream"
	else
		e2e_fail "$1" "$2 up $up (want > 0), down $down (want 0)"
	fi
}
# The ACK filter (BB_ACK_FILTER, "up" unless set otherwise) is on the
# upstream of both FQ-CoDel modes, so it must have replaced some ACKs
# there, and never downstream.
[ "$BB_ACK_FILTER" = up ] &&
	up_only bufferbloat_ack_filter ack_filtered "superseded and dropped"
# The ACK hold (BB_ACK_HOLD ms, with the filter): some download ACKs must
# have been held on the upstream, none downstream (no filter, so no hold).
[ "$BB_ACK_FILTER" = up ] && [ "${BB_ACK_HOLD:-0}" != 0 ] &&
	up_only bufferbloat_ack_hold ack_held "held ($BB_ACK_HOLD ms)"
ecn=$(bb_get fq_codel_ecn 's["probes"]["irtt"]["added"]["p99"]')
ce=$(bb_get fq_codel_ecn '(s["down"]["ce_marks"] or 0) + (s["up"]["ce_marks"] or 0)')
cd=$(bb_get fq_codel_ecn '(s["down"]["drop_reasons"].get("codel", 0)) + (s["up"]["drop_reasons"].get("codel", 0))')
if ge "$ce" 1 && ge "$BB_FQ_MAX_MS" "$ecn"; then
	e2e_pass bufferbloat_ecn_marks "$ce CE marks, $cd CoDel drops, p99 added $ecn ms"
elif ge "$ce" 1 && starved fq_codel_ecn; then
	e2e_pass bufferbloat_ecn_marks "$ce CE marks, $cd CoDel drops; p99 added $ecn ms not judged: sluice had $(bb_get fq_codel_ecn 's["sluice_cpu_pct"]')% of its CPU"
else
	e2e_fail bufferbloat_ecn_marks "CE marks $ce (want > 0), p99 added $ecn ms (want <= $BB_FQ_MAX_MS)"
fi
e2e_finish
