#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Build a Debian package of sluice from this tree: meson install into a
# staging root with --prefix=/usr, then dpkg-deb. No debian/ directory and
# no debhelper: the package is exactly what "meson install" puts down, plus
# control data written here.
#
#   scripts/build-deb.sh [-b BUILDDIR] [-o OUTDIR]
#
# BUILDDIR (default build-deb) is set up with --prefix=/usr if it does not
# exist; an existing one is reconfigured to that prefix (nothing recompiles:
# no path is compiled in). The package lands in OUTDIR (default .) as
# sluice_<version>_<arch>.deb, and its path is the last line printed.
# Install with "apt install ./sluice_*.deb" (pulls the DPDK libraries).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
builddir=build-deb
outdir=.
while getopts b:o:h opt; do
	case $opt in
	b) builddir=$OPTARG ;;
	o) outdir=$OPTARG ;;
	*) sed -n '3,16s/^# \{0,1\}//p' "$0"; exit 2 ;;
	esac
done
for t in meson ninja dpkg-deb dpkg-query ldd objdump strip; do
	command -v "$t" >/dev/null || { echo "build-deb: $t not found" >&2; exit 1; }
done

prefix_args=(-Dprefix=/usr -Dsysconfdir=/etc -Dlocalstatedir=/var)
if [ -f "$builddir/build.ninja" ]; then
	meson configure "$builddir" "${prefix_args[@]}" >/dev/null
else
	meson setup "$builddir" "${prefix_args[@]}" -Dtests=false -Dbenchmarks=disabled >/dev/null
fi
ninja -C "$builddir" >/dev/null

stage=$(mktemp -d "${TMPDIR:-/tmp}/sluice-deb.XXXXXX")
trap 'rm -rf "$stage"' EXIT
meson install -C "$builddir" --no-rebuild --destdir "$stage" >/dev/null
# Debian policy: manuals compressed, binaries without debug sections.
find "$stage/usr/share/man" -type f ! -name '*.gz' -exec gzip -9n {} +
strip --strip-unneeded "$stage/usr/sbin/sluice"

# Version: the project's, plus the commit in a git checkout
# (0.1.0+git123.abcdef0: sorts after 0.1.0 and by commit count).
version=$(meson introspect --projectinfo "$builddir" |
	/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
if rev=$(git -C "$ROOT" rev-parse --short=7 HEAD 2>/dev/null) &&
   n=$(git -C "$ROOT" rev-list --count HEAD 2>/dev/null); then
	version=$version+git$n.$rev
fi
arch=$(dpkg --print-architecture)

# Depends: the package owning each shared library the binary links to
# directly (DT_NEEDED), found where the dynamic linker finds it.
needed=$(objdump -p "$stage/usr/sbin/sluice" | awk '$1 == "NEEDED" { print $2 }')
deps=$(ldd "$stage/usr/sbin/sluice" |
	awk -v n="$needed" 'BEGIN { split(n, a, "\n"); for (i in a) want[a[i]] = 1 }
		$3 ~ /^\// && ($1 in want) { print $3 }' |
	while read -r lib; do
		dpkg-query -S "$(readlink -f "$lib")" 2>/dev/null ||
			dpkg-query -S "$lib" 2>/dev/null || true
	done | cut -d: -f1 | sort -u | paste -sd, | sed 's/,/, /g')
[ -n "$deps" ] || { echo "build-deb: could not work out the library packages" >&2; exit 1; }

mkdir -p "$stage/DEBIAN"
cat >"$stage/DEBIAN/control" <<EOF
Package: sluice
Version: $version
Architecture: $arch
Maintainer: sluice developers <sluice@localhost>
Section: net
Priority: optional
Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)
Depends: $deps, python3
Recommends: dpdk, kmod, pciutils
Suggests: prometheus
Description: DPDK middlebox for mobile TCP
 sluice sits inline between an access network and its core. It shapes
 each subscriber with FQ-CoDel so the queue forms where it can be managed,
 passes every TCP option byte for byte (clamping MSS where asked), and
 terminates TCP for a transparent proxy. With no configuration it is a
 transparent bridge.
 .
 This package holds the sluice binary, its systemd unit, the telemetry
 tools sluice-exporter (Prometheus) and sluice-top, the sluice-setup helper
 (hugepages, NIC binding), the reference configuration and the manual.
EOF
# Everything under /etc is the operator's: dpkg keeps their edits.
(cd "$stage" && find etc -type f 2>/dev/null | sed 's|^|/|') >"$stage/DEBIAN/conffiles"
[ -s "$stage/DEBIAN/conffiles" ] || rm -f "$stage/DEBIAN/conffiles"
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' |
	xargs -0 md5sum) >"$stage/DEBIAN/md5sums"

# Maintainer scripts: tell a running systemd about the unit, stop the
# service before removal. Nothing happens when installing into another
# root (DPKG_ROOT set) or on a machine without systemd.
cat >"$stage/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
if [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
EOF
cat >"$stage/DEBIAN/prerm" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = remove ] && [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
	systemctl stop sluice-exporter.service sluice.service 2>/dev/null || true
fi
EOF
cat >"$stage/DEBIAN/postrm" <<'EOF'
#!/bin/sh
set -e
if [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
EOF
chmod 0755 "$stage/DEBIAN/postinst" "$stage/DEBIAN/prerm" "$stage/DEBIAN/postrm"

mkdir -p "$outdir"
deb=$outdir/sluice_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"
