#!/bin/bash
# run.sh BUILD - benchmarks: kvmscope against the peer tools, in the same run.
#
# stat on perf.data: a generated file of $BENCH_PAIRS exit/entry pairs
# (default 2,000,000, about 510 MB), warm page cache, $BENCH_ROUNDS (5)
# interleaved rounds of `perf kvm stat report` and `kvmscope stat`; prints
# wall time, peak RSS and the ratios.  The page cache is measured in the two
# states a perf.data is found in, which cost a reader that maps the file
# differently (the kernel maps a large folio at once, 4 KB pages one by
# one): as written (the file generated afresh: its folios are as large as
# the generator's writes allow) and as read back (the file dropped from the
# cache, then read once: folios as large as the kernel's readahead makes
# them).  Scratch files go to $BENCH_DIR (default /tmp/kvmscope-bench).
# BENCH_ONLY=stat runs this one only.
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

# stat_rounds STATE: the interleaved rounds on $big as it is cached now.
# The three commands run in turn, one run each per round, so that a slow
# spell of this (shared, virtual) machine falls on all of them alike: the
# best of the rounds for each, and the median of the rounds' ratios.
stat_rounds() {
	local rounds=${BENCH_ROUNDS:-5} rows r p k t
	echo "-- page cache $1"
	rows=$(for r in $(seq "$rounds"); do
		p=$("$measure" -n 1 -- perf kvm -i "$big" stat report)
		k=$("$measure" -n 1 -- "$ks" stat --format perf -i "$big")
		t=$("$measure" -n 1 -- "$ks" stat -i "$big" --by reason --by vm,vcpu)
		echo "$(echo "$p" | field wall_s) $(echo "$p" | field maxrss_kb)" \
		     "$(echo "$k" | field wall_s) $(echo "$k" | field maxrss_kb)" \
		     "$(echo "$t" | field wall_s) $(echo "$t" | field maxrss_kb)"
	done)
	echo "$rows" | gawk -v rounds="$rounds" '
	{ for (c = 1; c <= 6; c++) w[NR, c] = $c; ratio[NR] = $1 / $3 }
	END {
		for (c = 1; c <= 6; c++) { # odd columns: the least wall time; even: the largest RSS
			b[c] = w[1, c]
			for (i = 2; i <= NR; i++)
				if (c % 2 ? w[i, c] < b[c] : w[i, c] > b[c]) b[c] = w[i, c]
		}
		n = asort(ratio, sorted)
		med = n % 2 ? sorted[(n + 1) / 2] : (sorted[n / 2] + sorted[n / 2 + 1]) / 2
		printf "%-44s %9.4f s %9d MB   (best of %d interleaved rounds)\n", "perf kvm stat report", b[1], b[2] / 1024, rounds
		printf "%-44s %9.4f s %9d MB\n", "kvmscope stat --format perf", b[3], b[4] / 1024
		printf "%-44s %9.4f s %9d MB\n", "kvmscope stat --by reason --by vm,vcpu", b[5], b[6] / 1024
		printf "speed-up vs perf: %.1fx best/best, %.1fx median of the rounds (target >= 5x)   peak RSS: %.1f MB vs %.1f MB (target <= 64 MB)\n",
			b[1] / b[3], med, b[4] / 1024, b[2] / 1024
	}'
}

echo "generating $big ($pairs pairs)..."
"$gen" --template "$tmpl" -o "$big" --vendor intel --pairs "$pairs" --vms 4 --vcpus 4 --rounds
echo "== stat on perf.data: $(( $(stat -c %s "$big") / 1048576 )) MB, $pairs exit/entry pairs"
stat_rounds "as written"
sync "$big"                                       # written back: clean pages can go,
dd if="$big" iflag=nocache count=0 status=none    # then drop the file from the page cache
cat "$big" > /dev/null                            # and read it back
stat_rounds "as read back"

# The other benchmarks, each against its peer tool (they skip what is missing).
[ "${BENCH_ONLY:-}" != stat ] || exit 0
for b in tracedat merge report timeline live sample exporter; do
	if [ -x "bench/$b.sh" ] || [ -f "bench/$b.sh" ]; then
		echo
		echo "== bench/$b.sh"
		bash "bench/$b.sh" "$build" || echo "bench/$b.sh failed"
	fi
done
