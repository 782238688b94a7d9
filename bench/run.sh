#!/bin/bash
# run.sh BUILD - benchmarks: kvmscope against the peer tools, in the same run.
#
# stat on perf.data: a generated file of $BENCH_PAIRS exit/entry pairs
# (default 2,000,000, about 460 MB), warm page cache, best of 3 runs each of
# `perf kvm stat report` and `kvmscope stat`; prints wall time, peak RSS and
# the ratios.  Scratch files go to $BENCH_DIR (default /tmp/kvmscope-bench)
# and are kept for reruns.  BENCH_ONLY=stat runs this one only.
set -eu
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dir=${BENCH_DIR:-/tmp/kvmscope-bench}
pairs=${BENCH_PAIRS:-2000000}
mkdir -p "$dir"
measure="$build/bench/measure"
ks="$build/kvmscope"
gen="$build/tools/gen-perfdata"

field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }

if ! command -v perf >/dev/null; then
	echo "bench: perf is not installed (run scripts/install-deps.sh)"; exit 1
fi
tmpl="$dir/template.data"
[ -s "$tmpl" ] || perf kvm stat record -a -o "$tmpl" sleep 0.1 >/dev/null 2>&1
big="$dir/stat-$pairs.data"
if [ ! -s "$big" ]; then
	echo "generating $big ($pairs pairs)..."
	"$gen" --template "$tmpl" -o "$big" --vendor intel --pairs "$pairs" --vms 4 --vcpus 4 --rounds
fi
size_mb=$(( $(stat -c %s "$big") / 1048576 ))
cat "$big" > /dev/null   # warm page cache
echo "== stat on perf.data: $size_mb MB, $pairs exit/entry pairs"
p=$("$measure" -n 3 -- perf kvm -i "$big" stat report)
k=$("$measure" -n 3 -- "$ks" stat --format perf -i "$big")
t=$("$measure" -n 3 -- "$ks" stat -i "$big" --by reason --by vm,vcpu)
pw=$(echo "$p" | field wall_s); pr=$(echo "$p" | field maxrss_kb)
kw=$(echo "$k" | field wall_s); kr=$(echo "$k" | field maxrss_kb)
tw=$(echo "$t" | field wall_s); tr=$(echo "$t" | field maxrss_kb)
printf '%-44s %9s s %9s MB\n' "perf kvm stat report" "$pw" "$((pr / 1024))"
printf '%-44s %9s s %9s MB\n' "kvmscope stat --format perf" "$kw" "$((kr / 1024))"
printf '%-44s %9s s %9s MB\n' "kvmscope stat --by reason --by vm,vcpu" "$tw" "$((tr / 1024))"
awk -v pw="$pw" -v kw="$kw" -v pr="$pr" -v kr="$kr" 'BEGIN {
	printf "speed-up vs perf: %.1fx (target >= 5x)   peak RSS: %.1f MB vs %.1f MB (target <= 64 MB)\n",
		pw / kw, kr / 1024, pr / 1024 }'

# The other benchmarks, each against its peer tool (they skip what is missing).
[ "${BENCH_ONLY:-}" != stat ] || exit 0
for b in tracedat merge report live sample; do
	if [ -x "bench/$b.sh" ] || [ -f "bench/$b.sh" ]; then
		echo
		echo "== bench/$b.sh"
		bash "bench/$b.sh" "$build" || echo "bench/$b.sh failed"
	fi
done
