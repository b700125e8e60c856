# SPDX-License-Identifier: BSD-3-Clause
#
# Sourced by tests/package/run.sh once the package is installed in the
# scratch root $R: the systemd unit and sluice-setup, as installed.

# The installed unit, with its paths moved into the scratch root, so that
# systemd-analyze finds the binaries, the environment file and (MANPATH)
# the manual the unit's Documentation= names. verify exits 0 even for
# settings it ignores, so any line naming the unit is a failure too.
unit_passes_systemd_analyze_verify() {
	local u=$1 dir=$work/units out
	command -v systemd-analyze >/dev/null || { WHY="systemd-analyze not installed"; return 1; }
	mkdir -p "$dir"
	sed -e "s|/usr/sbin/|$R/usr/sbin/|g" -e "s|/etc/sluice/|$R/etc/sluice/|g" \
		-e "s|file:/usr/share/doc/|file:$R/usr/share/doc/|g" \
		"$R/usr/lib/systemd/system/$u" >"$dir/$u"
	out=$(cd "$dir" && MANPATH=$R/usr/share/man SYSTEMD_LOG_COLOR=0 \
		systemd-analyze verify "./$u" 2>&1)
	local rc=$?
	if [ $rc != 0 ] || echo "$out" | grep -q "$u"; then
		WHY="rc=$rc: $(echo "$out" | grep "$u" | head -3 | tr '\n' ' ')"
		return 1
	fi
	WHY="systemd $(systemd-analyze --version | head -1 | awk '{ print $2 }')"
}

# systemctl reload sends SIGHUP; stop sends SIGTERM and waits longer than
# sluice's default drain (drain_timeout_ms, read from the installed binary).
unit_reloads_with_sighup_and_stops_after_the_drain() {
	local u=$R/usr/lib/systemd/system/sluice.service drain stop
	grep -qx 'ExecReload=/bin/kill -HUP $MAINPID' "$u" || { WHY="no ExecReload kill -HUP"; return 1; }
	grep -qx 'KillSignal=SIGTERM' "$u" || { WHY="KillSignal is not SIGTERM"; return 1; }
	drain=$("$R/usr/sbin/sluice" --config-keys | sed -n 's/.* drain_timeout_ms = \([0-9]*\).*/\1/p')
	stop=$(sed -n 's/^TimeoutStopSec=\([0-9]*\)$/\1/p' "$u")
	[ -n "$drain" ] && [ -n "$stop" ] || { WHY="drain=${drain:-?} TimeoutStopSec=${stop:-?}"; return 1; }
	[ $((stop * 1000)) -ge $((drain + 5000)) ] ||
		{ WHY="TimeoutStopSec=$stop s is not 5 s above drain_timeout_ms=$drain"; return 1; }
	WHY="TimeoutStopSec=${stop}s, drain_timeout_ms=$drain"
}

# The EAL arguments and the configuration path come from /etc/sluice/.
unit_takes_eal_args_and_config_from_etc() {
	local u=$R/usr/lib/systemd/system/sluice.service e=$R/etc/sluice/sluice.env cfg
	grep -qx 'EnvironmentFile=/etc/sluice/sluice.env' "$u" || { WHY="no EnvironmentFile"; return 1; }
	grep -q '^ExecStart=/usr/sbin/sluice .*\$SLUICE_EAL_ARGS -- -c \${SLUICE_CONFIG}' "$u" ||
		{ WHY="ExecStart does not use SLUICE_EAL_ARGS and SLUICE_CONFIG"; return 1; }
	grep -q '^SLUICE_EAL_ARGS=' "$e" || { WHY="sluice.env has no SLUICE_EAL_ARGS"; return 1; }
	cfg=$(sed -n 's/^SLUICE_CONFIG=//p' "$e")
	[ -f "$R$cfg" ] || { WHY="SLUICE_CONFIG=$cfg is not installed"; return 1; }
	grep -q '^ExecStartPre=+/usr/sbin/sluice-setup .* start$' "$u" ||
		{ WHY="no ExecStartPre sluice-setup start (hugepages)"; return 1; }
}

# A fake sysfs: no hugepages reserved, one 10 GbE port on ixgbe, one SATA
# controller.
fake_sysfs() {
	local s=$work/sys
	mkdir -p "$s/kernel/mm/hugepages/hugepages-2048kB" "$s/bus/pci/drivers/ixgbe" \
		"$s/bus/pci/devices/0000:3b:00.0" "$s/bus/pci/devices/0000:00:17.0"
	echo 0 >"$s/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
	echo 0 >"$s/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"
	echo 0x020000 >"$s/bus/pci/devices/0000:3b:00.0/class"
	ln -sfn ../../drivers/ixgbe "$s/bus/pci/devices/0000:3b:00.0/driver"
	echo 0x010601 >"$s/bus/pci/devices/0000:00:17.0/class"
	printf 'SLUICE_EAL_ARGS=-l 2-5\nSLUICE_HUGEPAGES=2048\nSLUICE_PCI=0000:3b:00.0\nSLUICE_DRIVER=vfio-pci\n' \
		>"$work/setup.env"
	echo "$s"
}

setup_dry_run_prints_what_it_would_do_and_changes_nothing() {
	local s out
	s=$(fake_sysfs)
	out=$(SLUICE_SETUP_SYSFS=$s "$R/usr/sbin/sluice-setup" --dry-run --env "$work/setup.env" start 2>&1) ||
		{ WHY="exit $?: $out"; return 1; }
	echo "$out" | grep -qx "+ echo 2048 > $s/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages" ||
		{ WHY="no hugepage reservation in: $out"; return 1; }
	echo "$out" | grep -qx '+ dpdk-devbind.py --bind=vfio-pci 0000:3b:00.0' ||
		{ WHY="no dpdk-devbind.py line in: $out"; return 1; }
	[ "$(cat "$s/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages")" = 0 ] ||
		{ WHY="the dry run reserved hugepages"; return 1; }
	WHY="$(echo "$out" | grep -c '^+ ') commands printed"
}

setup_refuses_to_bind_a_device_that_is_not_a_nic() {
	local s out
	s=$(fake_sysfs)
	out=$(SLUICE_SETUP_SYSFS=$s "$R/usr/sbin/sluice-setup" --dry-run bind 0000:00:17.0 2>&1) &&
		{ WHY="exit 0: $out"; return 1; }
	echo "$out" | grep -q 'not a network controller' || { WHY="$out"; return 1; }
	WHY=$out
}

check unit_passes_systemd_analyze_verify unit_passes_systemd_analyze_verify sluice.service
[ -f "$R/usr/lib/systemd/system/sluice-exporter.service" ] &&
	check exporter_unit_passes_systemd_analyze_verify unit_passes_systemd_analyze_verify sluice-exporter.service
check unit_reloads_with_sighup_and_stops_after_the_drain unit_reloads_with_sighup_and_stops_after_the_drain
check unit_takes_eal_args_and_config_from_etc unit_takes_eal_args_and_config_from_etc
check setup_dry_run_prints_what_it_would_do_and_changes_nothing setup_dry_run_prints_what_it_would_do_and_changes_nothing
check setup_refuses_to_bind_a_device_that_is_not_a_nic setup_refuses_to_bind_a_device_that_is_not_a_nic
