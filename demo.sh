#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# sluice's main job on a built-in default, with nothing to prepare by hand:
# install what is missing, build, then run the short bufferbloat experiment
# (perf/bufferbloat.sh --demo). A client and a server network namespace talk
# through sluice, which shapes the link to 20 Mbit/s down and 5 Mbit/s up
# like a loaded LTE cell; under 4+4 bulk TCP flows it compares a bloated
# FIFO with FQ-CoDel and prints the latency each one adds. Needs root (for
# namespaces and apt). Extra arguments go to perf/bufferbloat.sh.
set -euo pipefail
cd "$(dirname "$0")"
if [ "$(id -u)" != 0 ]; then
	echo "demo: needs root (network namespaces, packet sockets); try: sudo bash demo.sh" >&2
	exit 1
fi
bash scripts/install-deps.sh
if [ ! -x build/app/sluice ] || [ -n "$(find app lib meson.build -newer build/app/sluice -print -quit 2>/dev/null)" ]; then
	[ -d build ] || meson setup build >/dev/null
	ninja -C build >/dev/null
fi
exec bash perf/bufferbloat.sh --demo "$@"
