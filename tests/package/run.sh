#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The operator's install path, checked the way an operator meets it: build
# the Debian package (scripts/build-deb.sh), install it into a scratch root
# with dpkg, run the installed binary, remove and purge it.
#
#   bash tests/package/run.sh [BUILDDIR]
#
# BUILDDIR is handed to build-deb.sh (default build: it is reconfigured to
# --prefix=/usr, which recompiles nothing). Prints one "PASS name" or
# "FAIL name: reason" line per check, then "N passed, N failed". Needs
# meson, ninja and dpkg-deb; runs as any user (dpkg --root, no chroot).
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
builddir=${1:-build}
NPASS=0 NFAIL=0
pass() { echo "PASS $1${2:+ ($2)}"; NPASS=$((NPASS + 1)); }
fail() { echo "FAIL $1: $2"; NFAIL=$((NFAIL + 1)); }
check() { # name cmd...: PASS if cmd succeeds; WHY carries detail
	local name=$1; shift
	WHY=
	if "$@"; then pass "$name" "$WHY"; else fail "$name" "${WHY:-$* failed}"; return 1; fi
}
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-pkg.XXXXXX")
trap 'rm -rf "$work"' EXIT
R=$work/root

# Files the package must install, by FHS place.
EXPECT=(
	usr/sbin/sluice
	usr/share/man/man8/sluice.8.gz
	usr/share/sluice/config/sluice.ini
	usr/share/sluice/config/aqm.ini
	usr/share/sluice/examples/subscribers.csv
	etc/sluice/sluice.ini
	usr/share/doc/sluice/README.md
)
[ -f "$ROOT/tools/sluice-setup" ] && EXPECT+=(usr/sbin/sluice-setup usr/lib/systemd/system/sluice.service etc/sluice/sluice.env)
[ -f "$ROOT/tools/sluice-exporter" ] && EXPECT+=(usr/sbin/sluice-exporter usr/lib/systemd/system/sluice-exporter.service)
[ -f "$ROOT/tools/sluice-top" ] && EXPECT+=(usr/sbin/sluice-top)
[ -f "$ROOT/docs/deploy.md" ] && EXPECT+=(usr/share/doc/sluice/deploy.md usr/share/sluice/grafana/sluice.json)

DEB=
build_package() {
	DEB=$(bash scripts/build-deb.sh -b "$builddir" -o "$work" 2>"$work/build.err" | tail -1)
	[ -f "$DEB" ] || { WHY="no package: $(tail -3 "$work/build.err")"; return 1; }
	WHY=$(basename "$DEB")
}
package_lists_fhs_files() {
	local f missing=()
	dpkg-deb -c "$DEB" | awk '{ print $6 }' | sed 's|^\./||' >"$work/list"
	for f in "${EXPECT[@]}"; do grep -qx "$f" "$work/list" || missing+=("$f"); done
	[ ${#missing[@]} -eq 0 ] || { WHY="missing: ${missing[*]}"; return 1; }
	WHY="${#EXPECT[@]} files checked"
}
package_depends_are_installed_here() {
	local d missing=()
	for d in $(dpkg-deb -f "$DEB" Depends | tr -d ' ' | tr ',' ' '); do
		dpkg-query -W -f='${Status}' "${d%%(*}" 2>/dev/null | grep -q 'ok installed' ||
			missing+=("$d")
	done
	[ ${#missing[@]} -eq 0 ] || { WHY="not installable here, missing: ${missing[*]}"; return 1; }
	WHY=$(dpkg-deb -f "$DEB" Depends | tr ',' '\n' | wc -l)" dependencies"
}
package_installs_into_scratch_root() {
	mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates" "$R/var/lib/dpkg/triggers"
	: >"$R/var/lib/dpkg/status"
	# The root has no libraries of its own: dependencies are the host's.
	dpkg --root="$R" --force-depends --force-script-chrootless -i "$DEB" \
		>"$work/install.log" 2>&1 || { WHY=$(tail -3 "$work/install.log"); return 1; }
	local f
	for f in "${EXPECT[@]}"; do
		[ -e "$R/$f" ] || { WHY="$f not installed"; return 1; }
	done
	[ -x "$R/usr/sbin/sluice" ] || { WHY="usr/sbin/sluice not executable"; return 1; }
}
installed_version_names_the_git_revision() {
	local out rev
	out=$("$R/usr/sbin/sluice" --version 2>&1) || { WHY="exit $?: $out"; return 1; }
	WHY=$out
	if rev=$(git -C "$ROOT" rev-parse --short=7 HEAD 2>/dev/null); then
		echo "$out" | grep -q "git ${rev}" || { WHY="'$out' does not name $rev"; return 1; }
	else
		echo "$out" | grep -qE '^sluice [0-9]' || { WHY="'$out'"; return 1; }
	fi
}
installed_config_keys_list_every_section() {
	local out s
	out=$("$R/usr/sbin/sluice" --config-keys 2>&1) || { WHY="exit $?"; return 1; }
	for s in sluice policy; do
		echo "$out" | grep -q "$s" || { WHY="no [$s] keys"; return 1; }
	done
	echo "$out" | grep -q drain_timeout_ms || { WHY="no drain_timeout_ms"; return 1; }
	WHY="$(echo "$out" | wc -l) lines"
}
installed_manual_renders() {
	command -v man >/dev/null || { WHY="man not installed: skipped"; return 0; }
	man -l "$R/usr/share/man/man8/sluice.8.gz" 2>/dev/null | grep -q 'SIGHUP' ||
		{ WHY="man -l sluice.8.gz shows no SIGHUP section"; return 1; }
}
package_removes_cleanly_and_purges_config() {
	dpkg --root="$R" --force-script-chrootless -r sluice >"$work/rm.log" 2>&1 ||
		{ WHY=$(tail -3 "$work/rm.log"); return 1; }
	local left
	left=$(cd "$R" && find . -path ./var -prune -o -type f -print | grep -v '^./etc/sluice/')
	[ -z "$left" ] || { WHY="left after remove: $left"; return 1; }
	[ -f "$R/etc/sluice/sluice.ini" ] || { WHY="remove deleted the conffile"; return 1; }
	dpkg --root="$R" --force-script-chrootless --purge sluice >>"$work/rm.log" 2>&1 ||
		{ WHY=$(tail -3 "$work/rm.log"); return 1; }
	left=$(cd "$R" && find . -path ./var -prune -o ! -type d -print)
	[ -z "$left" ] || { WHY="left after purge: $left"; return 1; }
	dpkg --root="$R" -s sluice >/dev/null 2>&1 && { WHY="dpkg still knows sluice"; return 1; }
	return 0
}

if check package_builds build_package; then
	check package_lists_fhs_files package_lists_fhs_files
	check package_depends_are_installed_here package_depends_are_installed_here
	if check package_installs_into_scratch_root package_installs_into_scratch_root; then
		check installed_version_names_the_git_revision installed_version_names_the_git_revision
		check installed_config_keys_list_every_section installed_config_keys_list_every_section
		check installed_manual_renders installed_manual_renders
		for t in "$ROOT"/tests/package/check_*.sh; do
			[ -f "$t" ] || continue
			# shellcheck source=/dev/null
			. "$t"
		done
		check package_removes_cleanly_and_purges_config package_removes_cleanly_and_purges_config
	fi
fi
echo "$NPASS passed, $NFAIL failed"
[ "$NFAIL" = 0 ]
