#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# layouts.sh BUILD - kvmscope stat on every layout a perf.data comes in:
# a matrix of generated files (tools/gen-perfdata), one cell per
#   vCPUs per host CPU   $BENCH_LAYOUT_VPC     (default "1 2 4 8"; 2 host CPUs)
#   records per round    $BENCH_LAYOUT_ROUNDS  (default "1000 10000 100000 1000000")
#   vCPUs migrating      fixed / migrating (--migrate) between host CPUs
#   record order         per-CPU runs (--rounds) / global time order (--time-order)
# Each cell prints `kvmscope stat --format perf`'s speed-up over
# `perf kvm stat report` on the same file (wall time, as the stat benchmark
# measures it: the median of $BENCH_ROUNDS interleaved rounds' ratios,
# default 3; the best times are printed), stat's peak RSS, and the targets:
# >= 5x perf, <= 64 MB.  With $BENCH_PREVIOUS naming an older kvmscope
# binary, that one runs in the same rounds and the cell also prints its time
# over this one's (>= 1: no slower than the previous release; a cell more
# than 10% slower misses), or "failed" where the previous one failed in a
# round (exit status not 0, e.g. at its memory budget): its time then says
# nothing, and the cell is judged on the other targets.
#
# A file holds $BENCH_LAYOUT_PAIRS exit/entry pairs (default 500,000: about
# 1.2 M records, 130 MB), and at least 3 rounds of the cell's size.  The
# round size is set through --round-ns from the generator's measured rate
# (records per ns of trace time) for the cell's vCPU count.
# BENCH_ONLY=layouts (make bench) runs this one only.
set -eu
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dir=${BENCH_DIR:-/tmp/kvmscope-bench}
mkdir -p "$dir"
gen="$build/tools/gen-perfdata"
ks="$build/kvmscope"
prev=${BENCH_PREVIOUS:-}
measure="$build/bench/measure"
vpcs=${BENCH_LAYOUT_VPC:-1 2 4 8}
sizes=${BENCH_LAYOUT_ROUNDS:-1000 10000 100000 1000000}
pairs=${BENCH_LAYOUT_PAIRS:-500000}
cpus=2

if ! command -v perf >/dev/null; then
	echo "layouts: perf is not installed (run scripts/install-deps.sh)"; exit 1
fi
tmpl="$dir/template.data"
[ -s "$tmpl" ] || perf kvm stat record -a -o "$tmpl" sleep 0.1 >/dev/null 2>&1
f="$dir/layout.data"
missed=0 cells=0

field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }

# cell FILE: $BENCH_ROUNDS interleaved rounds of perf, kvmscope (and the
# previous kvmscope); prints "perf_s ks_s ratio rss_mb [vs_previous] met|MISSED"
# (a kvmscope run that fails, e.g. over its memory budget, misses)
# with the best wall times, the median of the rounds' wall-time ratios
# perf / kvmscope (the stat benchmark's measure: kvmscope's reader runs a
# second thread), and the largest peak RSS.
cell() {
	local r p k q rows
	rows=$(for r in $(seq "${BENCH_ROUNDS:-3}"); do
		p=$("$measure" -n 1 -- perf kvm -i "$1" stat report)
		k=$("$measure" -n 1 -- "$ks" stat --format perf -i "$1")
		q=
		[ -z "$prev" ] || q=$("$measure" -n 1 -- "$prev" stat --format perf -i "$1")
		echo "$(echo "$p" | field wall_s) $(echo "$k" | field wall_s) $(echo "$k" | field maxrss_kb)" \
		     "$(echo "$k" | field status) $(echo "$q" | field wall_s) $(echo "$q" | field status)"
	done)
	echo "$rows" | gawk -v prev="$prev" '
	function median(a,   n, s) {
		n = asort(a, s)
		return n % 2 ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2
	}
	{ if (NR == 1 || $1 < bp) bp = $1; if (NR == 1 || $2 < bk) bk = $2
	  if ($3 > rss) rss = $3; r[NR] = $1 / $2; if (prev != "") v[NR] = $5 / $2
	  if ($4 != 0) failed = $4; if (prev != "" && $6 != 0) prev_failed = 1 }
	END {
		m = median(r)
		printf "%7.3f %7.3f %6.2fx %9.1f", bp, bk, m, rss / 1024
		if (prev_failed) printf "  failed"
		else if (prev != "") { mv = median(v); printf " %6.2fx", mv }
		ok = m >= 5 && rss <= 65536 && (prev == "" || prev_failed || mv >= 0.9) && !failed
		printf " %s\n", failed ? "MISSED (kvmscope exit " failed ")" : ok ? "met" : "MISSED"
	}'
}

# rate VPC MIGRATE: records per ns of trace time (gen-perfdata -v of a
# small file in rounds of the default 4 ms: records / (rounds * 4 ms))
rate() {
	"$gen" --template "$tmpl" -o "$f" --vendor intel --pairs 20000 --vms "$cpus" --vcpus "$1" \
		--cpus "$cpus" --rounds $2 -v |
		awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
		     END { printf "%.9f\n", v["samples"] / (v["rounds"] * 4000000) }'
}

printf '%-4s %-8s %-9s %-9s %9s %7s %7s %7s %9s %s\n' vpc round migrate order records \
	"perf s" "ks s" ratio "RSS MB" "${prev:+vs previous}"
for vpc in $vpcs; do
	for mig in "" --migrate; do
		r=$(rate "$vpc" "$mig")
		for size in $sizes; do
			ns=$(awk -v s="$size" -v r="$r" 'BEGIN { printf "%d", s / r }')
			p=$pairs
			# at least three rounds of this size (2.4 records a pair)
			[ $((size * 3 * 10 / 24)) -le "$p" ] || p=$((size * 3 * 10 / 24))
			for order in --rounds --time-order; do
				out=$("$gen" --template "$tmpl" -o "$f" --vendor intel --pairs "$p" \
					--vms "$cpus" --vcpus "$vpc" --cpus "$cpus" $mig $order \
					--round-ns "$ns" -v)
				recs=$(echo "$out" | sed -n 's/.*samples=\([0-9]*\).*/\1/p')
				nr=$(echo "$out" | sed -n 's/.*rounds=\([0-9]*\).*/\1/p')
				cat "$f" > /dev/null
				line=$(cell "$f")
				printf '%-4s %-8s %-9s %-9s %9s %s\n' "$vpc" "$((recs / (nr ? nr : 1)))" \
					"$([ -n "$mig" ] && echo yes || echo no)" "${order#--}" "$recs" "$line"
				cells=$((cells + 1))
				case $line in *MISSED*) missed=$((missed + 1)) ;; esac
			done
		done
	done
done
rm -f "$f"
echo "layout cells: $cells, targets missed (>= 5x perf, <= 64 MB${prev:+, not slower than previous by > 10%}): $missed"
