#!/bin/bash
# merge.sh BUILD - benchmark `kvmscope merge` against Debian's
# `trace-cmd report -i HOST -i GUEST > /dev/null` on the hip24 host+guest pair.
#
# Debian's trace-cmd (3.1.6) cannot read the zlib originals, so both tools
# read copies written by `kvmscope convert`: trace.dat v7 with zstd and v6
# uncompressed (same events, same TimeShift/GUEST options).  The copies go
# to $BENCH_DIR (default /tmp/kvmscope-bench) and are kept.  Warm page
# cache, best of $RUNS (default 5) runs, wall time and peak RSS via
# bench/measure; prints the ratio trace-cmd / kvmscope (> 1: kvmscope faster).
set -eu
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dir=${BENCH_DIR:-/tmp/kvmscope-bench}
runs=${RUNS:-5}
hip=${KS_SHARED:-$root/../shared}/data/hip24
ks="$build/kvmscope"
measure="$build/bench/measure"
mkdir -p "$dir"
field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }

command -v trace-cmd > /dev/null || { echo "bench merge: trace-cmd is not installed"; exit 1; }
[ -r "$hip/host-tsync.trace.dat" ] || { echo "bench merge: $hip is absent"; exit 1; }
for f in host-tsync guest-tsync; do
	[ -s "$dir/$f.zstd.dat" ] || "$ks" convert -q -i "$hip/$f.trace.dat" -o "$dir/$f.zstd.dat" --compression zstd
	[ -s "$dir/$f.v6.dat" ] || "$ks" convert -q -i "$hip/$f.trace.dat" -o "$dir/$f.v6.dat" --file-version 6
done
for kind in zstd v6; do
	h=$dir/host-tsync.$kind.dat g=$dir/guest-tsync.$kind.dat
	# ns timestamps for both (-t): the comparable, exact output
	t=$("$measure" -n "$runs" -- sh -c "trace-cmd report -t -i '$h' -i '$g' > /dev/null 2>&1")
	k=$("$measure" -n "$runs" -- sh -c "'$ks' merge -t -i '$h' -i '$g' > /dev/null")
	tw=$(echo "$t" | field wall_s) kw=$(echo "$k" | field wall_s)
	echo "merge hip24 ($kind): trace-cmd report ${tw} s (rss $(echo "$t" | field maxrss_kb) kB)," \
	     "kvmscope merge ${kw} s (rss $(echo "$k" | field maxrss_kb) kB)," \
	     "ratio $(awk -v a="$tw" -v b="$kw" 'BEGIN { printf "%.2f", a / b }')"
done
