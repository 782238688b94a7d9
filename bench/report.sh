#!/bin/bash
# report.sh BUILD - kvmscope report speed: $BENCH_SAMPLES guest PMU samples
# (default 10,000,000, about 480 MB, generated once by gen-guest-perfdata into
# $BENCH_DIR, default /tmp/kvmscope-bench) resolved against a guest kallsyms;
# best of 3 wall times of the table report, then one --flamegraph run.
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
best=
for i in 1 2 3; do
	s=$(date +%s.%N)
	"$build/kvmscope" report "$data" --guest-kallsyms "$dir/guest.kallsyms" --by vm > /dev/null
	e=$(date +%s.%N)
	t=$(echo "$e - $s" | bc)
	if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
done
echo "report: $n samples, best of 3: ${best} s"
s=$(date +%s.%N)
"$build/kvmscope" report "$data" --guest-kallsyms "$dir/guest.kallsyms" --flamegraph "$dir/fg.svg" > /dev/null
e=$(date +%s.%N)
echo "report --flamegraph: $(echo "$e - $s" | bc) s"
