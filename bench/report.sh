#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# report.sh BUILD - kvmscope report speed: $BENCH_SAMPLES guest PMU samples
# (default 10,000,000, about 480 MB, generated once by gen-guest-perfdata into
# $BENCH_DIR, default /tmp/kvmscope-bench) resolved against a guest kallsyms;
# best of 3 wall times of the table report against one run of `perf kvm
# --guest report` on the same file (ratio printed), then one --flamegraph run.
# Target: under 3 s for 10 M samples on the project machine.
set -eu
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dir=${BENCH_DIR:-/tmp/kvmscope-bench}
n=${BENCH_SAMPLES:-10000000}
mkdir -p "$dir"
data="$dir/guest-$n.data"
if [ ! -s "$data" ]; then
	"$build/tools/gen-guest-perfdata" -o "$data" --kallsyms "$dir/guest.kallsyms" \
		--samples "$n" --vms 4 --vcpus 4
fi
measure="$build/bench/measure"
field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }
k=$("$measure" -n 3 -- "$build/kvmscope" report "$data" --guest-kallsyms "$dir/guest.kallsyms" --by vm)
kw=$(echo "$k" | field wall_s); kr=$(echo "$k" | field maxrss_kb)
printf '%-52s %8s s %7s MB\n' "kvmscope report --by vm ($n samples, best of 3)" "$kw" "$((kr / 1024))"
if command -v perf >/dev/null; then
	p=$("$measure" -n 1 -- perf kvm --guest --guestkallsyms="$dir/guest.kallsyms" -i "$data" \
		report --stdio)
	pw=$(echo "$p" | field wall_s); pr=$(echo "$p" | field maxrss_kb)
	printf '%-52s %8s s %7s MB\n' "perf kvm --guest report --stdio (one run)" "$pw" "$((pr / 1024))"
	awk -v pw="$pw" -v kw="$kw" 'BEGIN { printf "speed-up vs perf: %.1fx   target: under 3 s: %s\n",
		pw / kw, kw < 3 ? "met" : "MISSED" }'
fi
s=$(date +%s.%N)
"$build/kvmscope" report "$data" --guest-kallsyms "$dir/guest.kallsyms" --flamegraph "$dir/fg.svg" > /dev/null
e=$(date +%s.%N)
echo "report --flamegraph: $(echo "$e - $s" | bc) s"
