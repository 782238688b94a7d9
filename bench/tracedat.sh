#!/bin/bash
# tracedat.sh BUILD [PAIRS] - trace.dat benchmark (issue 3): make a large
# trace.dat with `kvmscope convert` from a generated perf.data, then time
# `trace-cmd report > /dev/null` against `kvmscope stat` on it (zstd and
# uncompressed v7) and print the ratio and the peak memory of each.
#
# Needs perf (for the template: `perf kvm stat record`), trace-cmd and GNU
# time; prints "skip ..." and exits 0 when one is missing.  Scratch files go
# to $KS_TMP (default: a new /tmp directory), removed at the end.
set -u
build=${1:-build}
pairs=${2:-2000000}
root=$(cd "$(dirname "$0")/.." && pwd)
ks=$root/$build/kvmscope
gen=$root/$build/tools/gen-perfdata
tmp=${KS_TMP:-$(mktemp -d /tmp/kvmscope-bench.XXXXXX)}
dir=$tmp/tracedat-bench
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT

for t in perf trace-cmd /usr/bin/time; do
	command -v "$t" >/dev/null 2>&1 || { echo "skip tracedat bench: $t is not installed"; exit 0; }
done
if ! perf kvm stat record -a -o "$dir/template.data" sleep 0.1 >/dev/null 2>&1; then
	echo "skip tracedat bench: perf kvm stat record cannot record a template"; exit 0
fi

# run CMD...: prints "SECONDS MAXRSS_KB"
measure() {
	/usr/bin/time -f '%e %M' -o "$dir/time" "$@" >/dev/null 2>"$dir/stderr" || {
		echo "command failed: $* : $(tail -1 "$dir/stderr")" >&2; echo "0 0"; return; }
	cat "$dir/time"
}

"$gen" --template "$dir/template.data" -o "$dir/big.data" --vendor intel --pairs "$pairs" --cpus 8 ||
	{ echo "tracedat bench: gen-perfdata failed"; exit 1; }
echo "tracedat bench: perf.data with $pairs exit/entry pairs: $(du -h "$dir/big.data" | cut -f1)"
for comp in zstd none; do
	out=$dir/big-$comp.dat
	read -r t m < <(measure "$ks" convert -q -i "$dir/big.data" -o "$out" --compression "$comp")
	echo "convert to v7 $comp: ${t}s, max RSS ${m} KB, $(du -h "$out" | cut -f1)"
	read -r tt tm < <(measure trace-cmd report "$out")
	read -r kt km < <(measure "$ks" stat -i "$out")
	ratio=$(awk -v a="$tt" -v b="$kt" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "n/a" }')
	echo "v7 $comp: trace-cmd report ${tt}s (${tm} KB)  kvmscope stat ${kt}s (${km} KB)  ratio ${ratio}x (target >= 3x)"
done
