#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# merge.sh BUILD - benchmark `kvmscope merge` against Debian's
# `trace-cmd report -t -i HOST -i GUEST` (issue 25: target >= 3x, output
# identical) on the hip24 host+guest pair, and on a generated pair of
# $BENCH_MERGE_EVENTS (default 5,000,000) events each whose guest has a
# TimeShift option (tools/gen-merge-pair; 3 rounds: trace-cmd takes ~15 s).
#
# Debian's trace-cmd (3.1.6) cannot read the zlib originals, so both tools
# read copies written by `kvmscope convert`: trace.dat v7 with zstd and v6
# uncompressed (same events, same TimeShift/GUEST options).  The copies go
# to $BENCH_DIR (default /tmp/kvmscope-bench) and are kept.  CPU time, the
# median of $BENCH_ROUNDS (default 5) interleaved rounds (bench/ratio.sh).
set -eu
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dir=${BENCH_DIR:-/tmp/kvmscope-bench}
hip=${KS_SHARED:-$root/../shared}/data/hip24
ks="$build/kvmscope"
bench_measure="$build/bench/measure"
mkdir -p "$dir"
. "$root/bench/ratio.sh"

command -v trace-cmd > /dev/null || { echo "bench merge: trace-cmd is not installed"; exit 1; }
[ -r "$hip/host-tsync.trace.dat" ] || { echo "bench merge: $hip is absent"; exit 1; }
for f in host-tsync guest-tsync; do
	[ -s "$dir/$f.zstd.dat" ] || "$ks" convert -q -i "$hip/$f.trace.dat" -o "$dir/$f.zstd.dat" --compression zstd
	[ -s "$dir/$f.v6.dat" ] || "$ks" convert -q -i "$hip/$f.trace.dat" -o "$dir/$f.v6.dat" --file-version 6
done
page_cache_note
for kind in zstd v6; do
	h=$dir/host-tsync.$kind.dat g=$dir/guest-tsync.$kind.dat
	trace-cmd report -t -i "$h" -i "$g" > "$dir/merge-tc.txt" 2>/dev/null || true
	"$ks" merge -t -i "$h" -i "$g" > "$dir/merge-ks.txt"
	same "$dir/merge-tc.txt" "$dir/merge-ks.txt" "merge hip24 ($kind)"
	rm -f "$dir/merge-tc.txt" "$dir/merge-ks.txt"
	# ns timestamps for both (-t): the comparable, exact output
	rounds tc "trace-cmd report -t -i '$h' -i '$g' > /dev/null 2>&1" ks "'$ks' merge -t -i '$h' -i '$g' > /dev/null"
	verdict "merge hip24 ($kind) vs trace-cmd report -i -i" tc ks 3
	echo "merge hip24 ($kind): peak RSS trace-cmd $((RSS[tc] / 1024)) MB, kvmscope $((RSS[ks] / 1024)) MB"
done

# the generated pair (zstd): 2 x BENCH_MERGE_EVENTS events
events=${BENCH_MERGE_EVENTS:-5000000}
pair=$dir/merge-pair
mkdir -p "$pair"
[ -s "$pair/guest-$events.dat" ] || {
	"$build/tools/gen-merge-pair" tests/fixtures/x86-6.18 "$pair" "$events" zstd &&
	mv "$pair/host.dat" "$pair/host-$events.dat" && mv "$pair/guest.dat" "$pair/guest-$events.dat"
} || { echo "bench merge: gen-merge-pair failed"; exit 1; }
h=$pair/host-$events.dat g=$pair/guest-$events.dat
trace-cmd report -t -i "$h" -i "$g" 2>/dev/null | md5sum > "$dir/merge-tc.sum"
"$ks" merge -t -i "$h" -i "$g" | md5sum > "$dir/merge-ks.sum"
same "$dir/merge-tc.sum" "$dir/merge-ks.sum" "merge generated pair ($events + $events events, TimeShift)"
BENCH_ROUNDS=3 rounds tc "trace-cmd report -t -i '$h' -i '$g' > /dev/null 2>&1" ks "'$ks' merge -t -i '$h' -i '$g' > /dev/null"
verdict "merge generated pair ($events + $events events) vs trace-cmd report -i -i" tc ks 3
echo "merge generated pair: peak RSS trace-cmd $((RSS[tc] / 1024)) MB, kvmscope $((RSS[ks] / 1024)) MB"
