#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# tracedat.sh BUILD [PAIRS] - trace.dat benchmarks (issues 3 and 25).
#
# Makes a large trace.dat with `kvmscope convert` from a generated perf.data
# (PAIRS exit/entry pairs, default 2,000,000: about 4.8 M events; issue 25's
# goal is judged on >= 10 M events: PAIRS=4200000), zstd and uncompressed,
# then, in $BENCH_ROUNDS (default 3) interleaved rounds, the CPU time of
#   trace-cmd report [-t]  vs  kvmscope dump [-t]     (target >= 3x; the
#                           hip24 files and the uncompressed copy: -t only)
#   trace-cmd report       vs  kvmscope stat          (target >= 3x)
#   trace-cmd convert      vs  kvmscope convert       (target > 1x; zstd
#                           and none, and from each to the other)
# the peak RSS of kvmscope convert (target: not growing with the input), and
# whether dump's output is byte-identical to trace-cmd's.  The hip24
# recordings (zstd copies; Debian's trace-cmd cannot read their zlib) are
# measured too.  Prints "skip ..." and exits 0 when a tool is missing.
# Scratch files go to $KS_TMP (default: a new /tmp directory), removed at
# the end.
#
# Each convert round first removes the previous round's output, so both
# tools write a new file into memory just freed.  Without that they do not
# pay alike on a VM whose balloon reports free pages to the host: trace-cmd
# truncates its output and refills the same pages at once, while kvmscope
# writes a temporary file and renames it over the old output, so its 541 MB
# go to pages the host must fault back in (measured: 0.6 s of CPU becomes
# 1.5-1.8 s, all of it in the kernel's copy into the page cache; trace-cmd
# writing to a new name each time goes from 0.85 to 2.2-2.5 s the same way).
set -u
build=${1:-build}
pairs=${2:-${BENCH_TRACEDAT_PAIRS:-2000000}}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
ks=$root/$build/kvmscope
gen=$root/$build/tools/gen-perfdata
bench_measure=$root/$build/bench/measure
hip=${KS_SHARED:-$root/../shared}/data/hip24
tmp=${KS_TMP:-$(mktemp -d /tmp/kvmscope-bench.XXXXXX)}
dir=$tmp/tracedat-bench
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
export BENCH_ROUNDS=${BENCH_ROUNDS:-3}
. "$root/bench/ratio.sh"

for t in perf trace-cmd; do
	command -v "$t" >/dev/null 2>&1 || { echo "skip tracedat bench: $t is not installed"; exit 0; }
done
if ! perf kvm stat record -a -o "$dir/template.data" sleep 0.1 >/dev/null 2>&1; then
	echo "skip tracedat bench: perf kvm stat record cannot record a template"; exit 0
fi
"$gen" --template "$dir/template.data" -o "$dir/big.data" --vendor intel --pairs "$pairs" --cpus 8 --rounds ||
	{ echo "tracedat bench: gen-perfdata failed"; exit 1; }
page_cache_note

# dump_vs_report LABEL FILE [-t]: dump -t against report -t, and without -t
# too unless the third argument says -t only.
dump_vs_report() {
	local f=$2
	trace-cmd report -t "$f" > "$dir/tc.txt" 2>/dev/null
	"$ks" dump -t "$f" > "$dir/ks.txt"
	same "$dir/tc.txt" "$dir/ks.txt" "$1: dump -t vs report -t"
	rm -f "$dir/tc.txt" "$dir/ks.txt"
	if [ "${3:-}" = -t ]; then
		rounds tct "trace-cmd report -t '$f' > /dev/null 2>&1" kst "'$ks' dump -t '$f' > /dev/null"
	else
		rounds tc "trace-cmd report '$f' > /dev/null 2>&1" ks "'$ks' dump '$f' > /dev/null" \
		       tct "trace-cmd report -t '$f' > /dev/null 2>&1" kst "'$ks' dump -t '$f' > /dev/null"
		verdict "$1: dump vs trace-cmd report" tc ks 3
	fi
	verdict "$1: dump -t vs trace-cmd report -t" tct kst 3
}

events=0
for comp in zstd none; do
	out=$dir/big-$comp.dat
	m=$("$bench_measure" -n 1 -- "$ks" convert -q -i "$dir/big.data" -o "$out" --compression "$comp")
	echo "convert perf.data ($(( $(stat -c %s "$dir/big.data") / 1048576 )) MB) to v7 $comp:" \
	     "$(echo "$m" | sed -n 's/.*cpu_s=\([^ ]*\).*/\1/p') s CPU," \
	     "peak RSS $(( $(echo "$m" | sed -n 's/.*maxrss_kb=\([^ ]*\).*/\1/p') / 1024 )) MB," \
	     "$(( $(stat -c %s "$out") / 1048576 )) MB"
	[ "$events" != 0 ] || events=$("$ks" dump "$out" | wc -l)
	echo "-- v7 $comp, $((events - 1)) events"
	dump_vs_report "v7 $comp" "$out" "$([ $comp = zstd ] || echo -t)"
	rounds tc "trace-cmd report '$out' > /dev/null 2>&1" kss "'$ks' stat -i '$out' > /dev/null"
	verdict "v7 $comp: stat vs trace-cmd report" tc kss 3
	rounds tcc "rm -f '$dir/tc-conv.dat'; trace-cmd convert --compression $comp -i '$out' -o '$dir/tc-conv.dat' > /dev/null 2>&1" \
	       ksc "rm -f '$dir/ks-conv.dat'; '$ks' convert -q --compression $comp -i '$out' -o '$dir/ks-conv.dat'"
	verdict "v7 $comp: convert vs trace-cmd convert" tcc ksc 1
	echo "v7 $comp: kvmscope convert of the trace.dat: peak RSS $((RSS[ksc] / 1024)) MB" \
	     "for $(( $(stat -c %s "$out") / 1048576 )) MB of input"
	rm -f "$dir/tc-conv.dat" "$dir/ks-conv.dat"
done
# convert across compressions (decompressing one way, compressing the other)
for pair in "none zstd" "zstd none"; do
	set -- $pair
	rounds tcx "rm -f '$dir/tc-conv.dat'; trace-cmd convert --compression $2 -i '$dir/big-$1.dat' -o '$dir/tc-conv.dat' > /dev/null 2>&1" \
	       ksx "rm -f '$dir/ks-conv.dat'; '$ks' convert -q --compression $2 -i '$dir/big-$1.dat' -o '$dir/ks-conv.dat'"
	verdict "v7 $1 -> v7 $2: convert vs trace-cmd convert" tcx ksx 1
	rm -f "$dir/tc-conv.dat" "$dir/ks-conv.dat"
done
# peak RSS of convert must not grow with the input: a file a quarter as large
"$gen" --template "$dir/template.data" -o "$dir/small.data" --vendor intel --pairs $((pairs / 4)) --cpus 8 --rounds
small=$("$bench_measure" -n 1 -- "$ks" convert -q -i "$dir/small.data" -o "$dir/small.dat" | sed -n 's/.*maxrss_kb=\([^ ]*\).*/\1/p')
big=$("$bench_measure" -n 1 -- "$ks" convert -q -i "$dir/big.data" -o "$dir/small.dat" | sed -n 's/.*maxrss_kb=\([^ ]*\).*/\1/p')
awk -v s="$small" -v b="$big" 'BEGIN { printf "convert peak RSS: %d MB for the perf.data, %d MB for one a quarter as large (target: not growing with the input): %s\n", b / 1024, s / 1024, b <= 1.25 * s + 8192 ? "met" : "missed" }'
rm -f "$dir/big.data" "$dir/small.data" "$dir/small.dat"

# the shared recordings (zstd copies)
if [ -r "$hip/guest-only.trace.dat" ]; then
	for f in "$hip"/*.trace.dat; do
		b=$(basename "$f" .trace.dat)
		"$ks" convert -q -i "$f" -o "$dir/$b.zstd.dat" --compression zstd || continue
		dump_vs_report "hip24 $b" "$dir/$b.zstd.dat" -t
	done
	# the fixed cost: formats and symbols of a recording without events
	rounds ke "'$ks' dump -t '$hip/host-6.8rt-empty.trace.dat' > /dev/null"
	awk -v k="${CPU[ke]}" 'BEGIN { printf "setup (formats, symbols; a trace.dat without events): %.1f ms CPU (target < 20 ms): %s\n", k * 1000, k < 0.020 ? "met" : "missed" }'
fi
