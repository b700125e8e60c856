#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# dpdk-dumpcap captures from a running sluice. The capture tool attaches as
# a DPDK secondary process, which needs shared (hugepage) memory, so this
# test reserves 2 MB hugepages for the run and gives back what it took.
# sluice runs on net_null ports (frames appear from nowhere), dumpcap takes
# 200 frames from port 0, and tshark must read 200 frames back.
set -u
. "$(dirname "$0")/lib.sh"
E2E_TEST=dumpcap

for t in dpdk-dumpcap tshark; do
	command -v "$t" >/dev/null || { e2e_fail dumpcap "$t is not installed"; e2e_finish; }
done
E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/sluice-dumpcap.XXXXXX")
HP=/proc/sys/vm/nr_hugepages
HP_BEFORE=$(cat "$HP")
MOUNTED=
PREFIX=sldump-$$
PID=
cleanup() {
	[ -n "$PID" ] && kill -TERM "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	# DPDK leaves its page files behind; remove ours so the pages free.
	[ -n "$MOUNTED" ] && rm -f "$MOUNTED/${PREFIX}"map_* 2>/dev/null
	[ -n "$MOUNTED" ] && umount "$MOUNTED" 2>/dev/null
	echo "$HP_BEFORE" >"$HP" 2>/dev/null
	rm -rf "$E2E_TMP" "/var/run/dpdk/$PREFIX"
}
trap cleanup EXIT INT TERM

t() {
	# Pages other programs hold stay theirs: ask for 160 on top of them.
	local used
	used=$(awk '/^HugePages_Total/ {t=$2} /^HugePages_Free/ {f=$2} END {print t-f}' /proc/meminfo)
	echo $((used + 160)) >"$HP" 2>/dev/null
	local free
	free=$(awk '/^HugePages_Free/ {print $2}' /proc/meminfo)
	if [ "${free:-0}" -lt 140 ]; then
		E2E_WHY="cannot reserve 140 free 2 MB hugepages (free: ${free:-0})"; return 1
	fi
	# Our own hugetlbfs instance, so nothing else's pages or files mix in.
	MOUNTED=$E2E_TMP/huge; mkdir -p "$MOUNTED"
	mount -t hugetlbfs -o pagesize=2M nodev "$MOUNTED" ||
		{ MOUNTED=; E2E_WHY="cannot mount hugetlbfs"; return 1; }
	"$SLUICE" -m 256 --huge-dir "$MOUNTED" --no-pci -l "$E2E_LCORE" --file-prefix "$PREFIX" \
		--log-level=lib.eal:warning --vdev net_null0 --vdev net_null1 -- \
		</dev/null >"$E2E_TMP/sluice.log" 2>&1 &
	PID=$!
	local i
	for i in $(seq 1 100); do
		[ -S "/var/run/dpdk/$PREFIX/dpdk_telemetry.v2" ] && break
		kill -0 "$PID" 2>/dev/null || { E2E_WHY="sluice exited: $(tail -2 "$E2E_TMP/sluice.log" | tr '\n' ' ')"; PID=; return 1; }
		sleep 0.1
	done
	if grep -q "capture (pdump) unavailable" "$E2E_TMP/sluice.log"; then
		E2E_WHY="sluice says pdump is unavailable"; return 1
	fi
	if ! timeout 30 dpdk-dumpcap --file-prefix "$PREFIX" -i net_null0 -c 200 \
		-w "$E2E_TMP/cap.pcapng" >"$E2E_TMP/dumpcap.log" 2>&1; then
		E2E_WHY="dpdk-dumpcap failed: $(tail -2 "$E2E_TMP/dumpcap.log" | tr '\n' ' ')"; return 1
	fi
	kill -TERM "$PID"; wait "$PID"; local rc=$?; PID=
	[ "$rc" = 0 ] || { E2E_WHY="sluice exited $rc after the capture"; return 1; }
	local n
	n=$(tshark -r "$E2E_TMP/cap.pcapng" 2>/dev/null | wc -l)
	[ "${n:-0}" -ge 200 ] || { E2E_WHY="tshark read $n frames, expected at least 200"; return 1; }
	grep -q "mempool in_use=\([0-9]*\) baseline=\1$" "$E2E_TMP/sluice.log" ||
		{ E2E_WHY="mbufs not back at baseline: $(grep mempool "$E2E_TMP/sluice.log")"; return 1; }
	E2E_WHY="$n frames captured from port 0 (asked for 200; dumpcap stops at a burst boundary), sluice exited 0"
}
if t; then e2e_pass dumpcap_captures_from_running_sluice "$E2E_WHY"; else e2e_fail dumpcap_captures_from_running_sluice "$E2E_WHY"; fi
e2e_finish
