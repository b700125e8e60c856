#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# tests/fuzz/refresh_found.sh NAME DIR...
#
# Rewrites tests/fuzz/NAME/corpus/found/ from what a fuzzing run found:
# the inputs of found/ and of each DIR (a run's work folder) that reach
# edges the seeds of corpus/ and the other kept inputs do not. libFuzzer
# merges by edges only (-use_counters=0), not by hit counts, so the set
# stays small; the seeds are left as they are. Needs build-fuzz (see
# tests/fuzz/README.md).
set -euo pipefail
cd "$(dirname "$0")/../.."

name=${1:?usage: tests/fuzz/refresh_found.sh NAME DIR...}
shift
[ $# -gt 0 ] || { echo "refresh_found: no folder to merge from" >&2; exit 2; }
fz=build-fuzz/tests/fuzz/$name/fuzz_$name
corpus=tests/fuzz/$name/corpus
[ -x "$fz" ] || { echo "refresh_found: no $fz (build build-fuzz first)" >&2; exit 2; }
[ -d "$corpus" ] || { echo "refresh_found: no $corpus" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/merged" "$tmp/old"
# The seeds first: what they reach is known, and nothing of theirs moves.
find "$corpus" -maxdepth 1 -type f -exec cp {} "$tmp/merged/" \;
[ -d "$corpus/found" ] && cp -r "$corpus/found/." "$tmp/old/"
"$fz" -merge=1 -use_counters=0 -use_value_profile=0 -timeout=10 -rss_limit_mb=2048 \
	"$tmp/merged" "$tmp/old" "$@" >"$tmp/merge.log" 2>&1 ||
	{ tail -20 "$tmp/merge.log" >&2; exit 1; }
rm -rf "$corpus/found"
mkdir "$corpus/found"
for f in "$tmp/merged"/*; do
	[ -e "$corpus/$(basename "$f")" ] || cp "$f" "$corpus/found/"
done
echo "refresh_found: $name: $(find "$corpus/found" -type f | wc -l) inputs in found/;" \
	"$(grep -o '[0-9]* new coverage edges' "$tmp/merge.log" | tail -1) over the seeds"
