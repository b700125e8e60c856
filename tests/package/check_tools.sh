# SPDX-License-Identifier: BSD-3-Clause
#
# Sourced by tests/package/run.sh once the package is installed in the
# scratch root $R: the installed telemetry tools start and find their
# shared module through the sbin symlinks.

installed_exporter_reports_sluice_down_without_sluice() {
	local out
	[ -x "$R/usr/sbin/sluice-exporter" ] || { WHY="not installed"; return 1; }
	out=$("$R/usr/sbin/sluice-exporter" --once --socket "$work/no-such-socket" 2>/dev/null)
	[ $? = 1 ] || { WHY="exit status $? with no sluice, want 1"; return 1; }
	echo "$out" | grep -qx 'sluice_up 0' || { WHY="no 'sluice_up 0': $out"; return 1; }
}
[ -f "$ROOT/tools/sluice-exporter" ] &&
	check installed_exporter_reports_sluice_down_without_sluice installed_exporter_reports_sluice_down_without_sluice

installed_top_prints_its_usage() {
	local out
	out=$("$R/usr/sbin/sluice-top" --help 2>&1) || { WHY="exit $?: $out"; return 1; }
	echo "$out" | grep -q -- '--batch' || { WHY="$out"; return 1; }
}
[ -f "$ROOT/tools/sluice-top" ] &&
	check installed_top_starts installed_top_prints_its_usage
