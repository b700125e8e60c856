# SPDX-License-Identifier: BSD-3-Clause
"""Logs: one DPDK log type per component (sluice.aqm, sluice.tcpopt, ...),
set the usual EAL way, --log-level=sluice.aqm:debug (app/log.h). The log
goes to stderr (and syslog); stdout carries the exit report."""
import harness as h

# [aqm] and [tcpopt] both on, so both components have something to say.
CONFIG = ("[aqm]\ndefault = pipe\nrate_down = 10mbit\nrate_up = 10mbit\n"
          "[tcpopt]\nmss_clamp = 1400\n")
AQM_DEBUG = "sluice: aqm: worker 0: pipes for"
TCPOPT_DEBUG = "tcpopt: worker 0: one policy context per pair"


def _run(*levels):
    r = h.run([[], []], config=CONFIG, idle_ms=100,
              eal_extra=["--log-level=%s" % lv for lv in levels])
    h.assert_clean_exit(r)
    return r


def test_aqm_debug_lines_show_only_when_sluice_aqm_is_set_to_debug():
    default = _run()
    assert AQM_DEBUG not in default.stderr, default.stderr
    assert "sluice: aqm: 0 subscriber(s)" in default.stderr, default.stderr
    debug = _run("sluice.aqm:debug")
    assert AQM_DEBUG in debug.stderr, debug.stderr
    # Only that component: tcpopt stays at INFO.
    assert TCPOPT_DEBUG not in debug.stderr, debug.stderr
    assert "tcpopt: pair 0: MSS clamped to 1400" in debug.stderr, debug.stderr


def test_a_pattern_sets_every_component_at_once():
    r = _run("sluice.*:debug")
    for line in (AQM_DEBUG, TCPOPT_DEBUG, "sluice: config: ",
                 "sluice: telemetry: /sluice/totals registered"):
        assert line in r.stderr, "no %r in:\n%s" % (line, r.stderr)


def test_warning_level_hides_info_lines_but_not_the_exit_report():
    r = _run("sluice.*:warning")
    assert "worker(s), 1 port pair(s)" not in r.stderr, r.stderr
    assert "sluice: aqm: 0 subscriber(s)" not in r.stderr, r.stderr
    assert "sluice: final counters" in r.stdout, r.stdout
    r.counter("totals", "rx")


def test_help_names_the_log_types_and_how_to_set_them():
    rc, out, _ = h.run_cli(["--help"])
    assert rc == 0, out
    assert "--log-level=sluice.aqm:debug" in out, out
    for c in ("main", "config", "aqm", "tcpopt", "proxy", "telemetry"):
        assert " sluice.%s" % c in out, (c, out)
