# SPDX-License-Identifier: BSD-3-Clause
"""The command line and the configuration: clear errors, exit status 2,
nothing half-applied."""
import os
import re

import harness as h

REPO = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_unknown_key_names_file_line_and_key():
    h.assert_config_error("[sluice]\nburst = 32\nbrust = 64\n", 3, "brust", "unknown key")


def test_out_of_range_value_names_the_range():
    h.assert_config_error("# comment\n[sluice]\n\nburst = 0\n", 4, "burst", r"out of range \[1, 512\]")


def test_non_numeric_value_is_rejected():
    h.assert_config_error("[sluice]\ntx_drain_us = fast\n", 2, "tx_drain_us", "not a non-negative integer")


def test_unknown_section_is_rejected():
    h.assert_config_error("[sluice]\nburst=8\n[frobnicator]\nrate=1\n", 3, "[frobnicator]", "unknown section")


def test_bad_policy_action_is_rejected():
    h.assert_config_error("[policy]\nmalformed = ignore\n", 2, "malformed", "forward or drop")


def test_line_without_equals_is_rejected():
    h.assert_config_error("[sluice]\nburst 32\n", 2, "burst 32", "expected 'key = value'")


def test_missing_config_file_exits_2():
    rc, out, err = h.run_cli(["--no-huge", "--", "-c", "/nonexistent/sluice.ini"])
    assert rc == 2 and "cannot open" in err, (rc, err)


def test_help_and_version_exit_0():
    rc, out, _ = h.run_cli(["--", "--help"])
    assert rc == 0 and "--idle-exit" in out and "--config" in out
    rc, out, _ = h.run_cli(["--version"])
    assert rc == 0 and re.match(r"sluice \d+\.\d+\.\d+", out), out


def test_unknown_option_and_bad_idle_exit_exit_2():
    rc, _, err = h.run_cli(["--no-huge", "--", "--frobnicate"])
    assert rc == 2 and "unknown option" in err, err
    rc, _, err = h.run_cli(["--no-huge", "--", "--idle-exit", "soon"])
    assert rc == 2 and "--idle-exit" in err, err
    rc, _, err = h.run_cli(["--no-huge", "--", "--idle-exit"])
    assert rc == 2 and "needs a value" in err, err


def test_documented_default_config_loads_and_bridges():
    r = h.run([[bytes(h_frame())], []], config=open(os.path.join(REPO, "config", "sluice.ini")).read())
    h.assert_clean_exit(r)
    assert len(r.outs[1]) == 1


# Examples written ahead of the keys they need: skipped while this sluice
# does not know the key (sluice --config-keys), checked like every other
# example from the moment it does. Remove an entry once its key is in main.
EXAMPLES_AHEAD_OF_KEYS = {
    "mptcp-proxy.ini": "[proxy] mptcp = ",   # MPTCP termination (issue 16)
}


def test_every_example_config_is_valid():
    ex = os.path.join(REPO, "config", "examples")
    rc, keys, _ = h.run_cli(["--config-keys"])
    assert rc == 0, rc
    for name in sorted(os.listdir(ex)) if os.path.isdir(ex) else []:
        if not name.endswith(".ini"):
            continue
        ahead = EXAMPLES_AHEAD_OF_KEYS.get(name)
        if ahead and not any(l.startswith(ahead) for l in keys.splitlines()):
            print("skipped %s: this sluice has no key %s yet" % (name, ahead.split(" =")[0]))
            continue
        r = h.run([[bytes(h_frame())], []], config_file=os.path.join(ex, name))
        assert r.rc == 0, "%s: exit %d: %s" % (name, r.rc, r.stderr)


def h_frame():
    from scapy.all import IP, UDP
    import frames
    return frames.eth() / IP(src="198.18.0.1", dst="198.19.0.1") / UDP()


def test_stage_cycles_times_every_stage_and_is_off_by_default():
    from scapy.all import IP, TCP
    import frames
    syn = frames.eth() / IP(src="198.18.0.1", dst="198.19.0.1") / TCP(
        sport=40000, dport=80, flags="S", options=[("MSS", 1460)])
    ins = [[bytes(syn)] * 5, [bytes(h_frame())] * 3]
    r = h.run(ins, config="[sluice]\nstage_cycles = on\n[tcpopt]\nmss_clamp = 1400\n")
    h.assert_clean_exit(r)
    assert re.search(r"^stage_cycles tsc_hz=[1-9]\d*$", r.stdout, re.M), r.stdout
    assert r.counter("stage tcpopt", "packets") == 8, r.stdout
    bursts = r.counter("stage tcpopt", "bursts")
    assert 2 <= bursts <= 8, r.stdout
    assert r.counter("stage tcpopt", "cycles") > 0, r.stdout
    assert re.search(r"^stage tcpopt .*cycles_per_packet=\d+\.\d\d ", r.stdout, re.M), r.stdout
    # the stage has no poll(): nothing is timed there
    assert r.counter("stage tcpopt", "polls") == 0, r.stdout
    # off (the default): no stage lines
    r = h.run(ins, config="[tcpopt]\nmss_clamp = 1400\n")
    h.assert_clean_exit(r)
    assert "stage_cycles" not in r.stdout and "\nstage " not in r.stdout, r.stdout


def test_stage_cycles_counts_what_a_polled_stage_releases():
    # The impair stage holds packets and releases them from poll(): with
    # every packet delayed, emitted equals what came in.
    ins = [[bytes(h_frame())] * 6, []]
    r = h.run(ins, config="[sluice]\nstage_cycles = on\n[impair]\ndelay = 1ms\n")
    h.assert_clean_exit(r)
    assert len(r.outs[1]) == 6
    assert r.counter("stage impair", "packets") == 6, r.stdout
    assert r.counter("stage impair", "emitted") == 6, r.stdout
    assert r.counter("stage impair", "polls") > 0, r.stdout
    assert r.counter("stage impair", "poll_cycles") > 0, r.stdout


def test_bad_stage_cycles_value_is_rejected():
    h.assert_config_error("[sluice]\nstage_cycles = maybe\n", 2, "stage_cycles", "not a boolean")


def _reference(path):
    """{section: {key: value}} of a reference file: its uncommented lines."""
    out, section = {}, None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1]
                out.setdefault(section, {})
            elif "=" in line and section is not None:
                k, v = (x.strip() for x in line.split("=", 1))
                out[section][k] = v
    return out


def test_reference_files_list_every_key_of_the_tables_with_its_default():
    """config/*.ini and the code's key tables (sluice --config-keys) say the
    same: every key a table knows is in a reference file with the table's
    default, and a reference file names no key its table does not know."""
    rc, out, err = h.run_cli(["--config-keys"])
    assert rc == 0 and out, (rc, err)
    tables = {}
    for line in out.splitlines():
        m = re.match(r"^\[([^\]]+)\] (\S+) = ([^\t]*)\t", line)
        assert m, "unparsable --config-keys line: %r" % line
        tables.setdefault(m.group(1), {})[m.group(2)] = m.group(3)
    assert {"sluice", "policy", "impair"} <= set(tables), sorted(tables)
    ref = {}
    for name in sorted(os.listdir(os.path.join(REPO, "config"))):
        if name.endswith(".ini"):
            for sec, keys in _reference(os.path.join(REPO, "config", name)).items():
                ref.setdefault(sec, {}).update(keys)
    for sec, keys in tables.items():
        assert sec in ref, "[%s] has no reference file in config/" % sec
        for k, d in keys.items():
            assert k in ref[sec], "[%s] %s is not documented in config/" % (sec, k)
            assert ref[sec][k] == d, "[%s] %s: config/ says %r, the code %r" % (sec, k, ref[sec][k], d)
        extra = set(ref[sec]) - set(keys)
        assert not extra, "[%s]: config/ documents keys the code does not know: %s" % (sec, sorted(extra))
