#!/bin/bash
# merge.sh BUILD - benchmark `kvmscope merge` against Debian's
# `trace-cmd report -t -i HOST -i GUEST` (issue 25: target >= 3x, output
# identical) on the hip24 host+guest pair.
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
