# SPDX-License-Identifier: BSD-3-Clause
#
# One transfer between the kernel peers of tests/e2e/stream_peer.py, for
# the tests that source this after lib.sh (test_proxy_scale.sh,
# test_proxy_loss.sh). Needs PEER set to stream_peer.py. The MPTCP tests
# (test_mptcp.sh, test_mptcp_loss.sh) source it for stream_mbps.

# stream_xfer up|down|down-shut HOST SIZE PORT TIMEOUT: SIZE bytes of a
# seeded stream from client to server (up) or server to client (down;
# down-shut: the client half-closes before the first byte comes); the
# sender hashes what it generates, the receiver what arrives, and the
# sha256 and lengths must be equal. Sets XFER_SECS, timed at the client
# from connect() to the server's FIN; on failure returns 1 with E2E_WHY.
stream_xfer() {
	local dir=$1 dst=$2 size=$3 port=$4 to=$5 spid crc src sent got
	local sout=$E2E_TMP/x.$port.srv cout=$E2E_TMP/x.$port.cli
	XFER_SECS=
	if [ "$dir" = up ]; then
		srv timeout --foreground "$to" "$E2E_PY" "$PEER" sink "$port" >"$sout" 2>&1 &
	else
		srv timeout --foreground "$to" "$E2E_PY" "$PEER" source "$port" "$size" "$port" >"$sout" 2>&1 &
	fi
	spid=$!; E2E_PIDS+=("$spid")
	e2e_wait_listen "$port" || { E2E_WHY="server did not listen"; return 1; }
	if [ "$dir" = up ]; then
		e2e_run cli timeout --foreground "$to" "$E2E_PY" "$PEER" send "$dst" "$port" "$size" "$port" \
			>"$cout" 2>&1
	else
		e2e_run cli timeout --foreground "$to" "$E2E_PY" "$PEER" \
			"$([ "$dir" = down-shut ] && echo recv-shut || echo recv)" "$dst" "$port" >"$cout" 2>&1
	fi
	crc=$?
	wait "$spid"
	src=$?
	if [ "$dir" = up ]; then sent=$(tail -1 "$cout") got=$(tail -1 "$sout")
	else sent=$(tail -1 "$sout") got=$(tail -1 "$cout"); fi
	if [ $crc != 0 ] || [ $src != 0 ]; then
		E2E_WHY="client rc=$crc '$(tail -1 "$cout")', server rc=$src '$(tail -1 "$sout")'"
		return 1
	fi
	# "SHA BYTES SECONDS" lines: equal if the first two fields are.
	if [ -z "$got" ] || [ "${sent% *}" != "${got% *}" ]; then
		E2E_WHY="receiver got '${got% *}', sender sent '${sent% *}'"
		return 1
	fi
	set -- $(tail -1 "$cout")
	XFER_SECS=$3
}

# stream_mbps BYTES SECONDS
stream_mbps() {
	awk -v b="$1" -v s="$2" 'BEGIN { if (s > 0) printf "%.0f", b * 8 / s / 1e6; else print "?" }'
}
