#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The contract says that with no configuration sluice is a transparent
# bridge on any DPDK port: start it with built-in defaults on the
# net_af_packet veths, ping through it both ways, and stop it cleanly.
set -u
. "$(dirname "$0")/lib.sh"
E2E_TEST=default_config

e2e_require_tools
e2e_setup
t() {
	e2e_start_sluice "" || { E2E_WHY="start without -c: $E2E_WHY: $(grep -v '^TELEMETRY' "$SLUICE_LOG" | tail -2 | tr '\n' ' ' | sed 's/ *$//')"; return 1; }
	e2e_ping 4 5 0.05 || return 1
	e2e_ping 6 5 0.05 || return 1
	e2e_stop_sluice
}
e2e_check bridge_default_config t
e2e_finish
