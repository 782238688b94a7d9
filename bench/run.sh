#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# run.sh BUILD - benchmarks: kvmscope against the peer tools, in the same run.
#
# stat on perf.data: generated files of $BENCH_PAIRS exit/entry pairs
# (default 2,000,000, about 510 MB) in the two record orders perf.data files
# come in: per-CPU runs (each round a chunk per CPU, as perf record drains
# its ring buffers) and global time order (the CPUs interleaved record by
# record).  $BENCH_ROUNDS (5) interleaved rounds of `cat FILE > /dev/null`
# (the page cache's limit), `perf kvm stat report` and `kvmscope stat`;
# prints wall time, peak RSS, the ratios against perf (target >= 5x) and
# cat (target <= 2x), and a line per target met or missed.  Also timed, for
# scale: build/bench/floor, one thread walking the records from header to
# header (what any reader must pay before decoding anything).  The page cache
# is measured in the two states a perf.data is found in, which cost a
# reader that maps the file differently (the kernel maps a large folio at
# once, 4 KB pages one by one): as written (the file generated afresh: its
# folios are as large as the generator's writes allow) and as read back
# (the file dropped from the cache, then read once: folios as large as the
# kernel's readahead makes them).  Then peak RSS on a 10 GB file (target
# <= 64 MB), generated when the disk has room ($BENCH_BIG=0: skipped).
# Scratch files go to $BENCH_DIR (default /tmp/kvmscope-bench).
# BENCH_ONLY=stat runs this one only; BENCH_ONLY=layouts only the matrix
# of perf.data layouts (bench/layouts.sh), which the full run ends with;
# BENCH_ONLY=memory the memory table of bench/memory.sh only;
# BENCH_ONLY=engine the live engines' ratios (bench/engine.sh) only.
set -eu
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ "${BENCH_ONLY:-}" = layouts ]; then
	exec bash bench/layouts.sh "$build"
fi
# BENCH_ONLY=engine: the live engines' two ratios alone (bench/engine.sh)
if [ "${BENCH_ONLY:-}" = engine ]; then
	exec bash bench/engine.sh "$build"
fi
# BENCH_ONLY=memory: the memory table alone (bench/memory.sh)
if [ "${BENCH_ONLY:-}" = memory ]; then
	exec bash bench/memory.sh "$build"
fi
dir=${BENCH_DIR:-/tmp/kvmscope-bench}
pairs=${BENCH_PAIRS:-2000000}
mkdir -p "$dir"
measure="$build/bench/measure"
ks="$build/kvmscope"
floor="$build/bench/floor"
gen="$build/tools/gen-perfdata"

field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }

if ! command -v perf >/dev/null; then
	echo "bench: perf is not installed (run scripts/install-deps.sh)"; exit 1
fi
tmpl="$dir/template.data"
[ -s "$tmpl" ] || perf kvm stat record -a -o "$tmpl" sleep 0.1 >/dev/null 2>&1
missed=0

# target WHAT MET: one line per target.
target() {
	if [ "$2" = 1 ]; then echo "target met:    $1"; else echo "target MISSED: $1"; missed=$((missed + 1)); fi
}

# stat_rounds FILE ORDER STATE: the interleaved rounds on FILE as it is
# cached now.  The commands run in turn, one run each per round, so that a
# slow spell of this (shared, virtual) machine falls on all of them alike:
# the best of the rounds for each, and the median of the rounds' ratios.
stat_rounds() {
	local f=$1 rounds=${BENCH_ROUNDS:-5} rows r c p k t w res
	echo "-- $2, page cache $3"
	rows=$(for r in $(seq "$rounds"); do
		c=$("$measure" -n 1 -- cat "$f")
		p=$("$measure" -n 1 -- perf kvm -i "$f" stat report)
		k=$("$measure" -n 1 -- "$ks" stat --format perf -i "$f")
		t=$("$measure" -n 1 -- "$ks" stat -i "$f" --by reason --by vm,vcpu)
		w=$("$measure" -n 1 -- "$floor" "$f")
		[ "$(echo "$w" | field status)" = 0 ] || echo "bench: $floor failed on $f" >&2
		echo "$(echo "$p" | field wall_s) $(echo "$p" | field maxrss_kb)" \
		     "$(echo "$k" | field wall_s) $(echo "$k" | field maxrss_kb)" \
		     "$(echo "$t" | field wall_s) $(echo "$t" | field maxrss_kb)" \
		     "$(echo "$c" | field wall_s) $(echo "$p" | field cpu_s) $(echo "$k" | field cpu_s)" \
		     "$(echo "$w" | field wall_s)"
	done)
	res=$(echo "$rows" | gawk -v rounds="$rounds" '
	function minimum(a,   i, m) {
		for (i in a) if (m == "" || a[i] < m) m = a[i]
		return m
	}
	function median(a,   n, s) {
		n = asort(a, s)
		return n % 2 ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2
	}
	{ for (c = 1; c <= 7; c++) w[NR, c] = $c; rp[NR] = $1 / $3; rc[NR] = $3 / $7; rt[NR] = $5 / $7
	  pc[NR] = $8; kc[NR] = $9; ru[NR] = $8 / $9; fl[NR] = $10; rf[NR] = $10 / $7 }
	END {
		for (c = 1; c <= 7; c++) { # odd columns: the least wall time; even: the largest RSS
			b[c] = w[1, c]
			for (i = 2; i <= NR; i++)
				if (c % 2 ? w[i, c] < b[c] : w[i, c] > b[c]) b[c] = w[i, c]
		}
		mp = median(rp); mc = median(rc); mt = median(rt)
		printf "%-44s %9.4f s %9d MB   (best of %d interleaved rounds)\n", "perf kvm stat report", b[1], b[2] / 1024, rounds
		printf "%-44s %9.4f s %9d MB\n", "kvmscope stat --format perf", b[3], b[4] / 1024
		printf "%-44s %9.4f s %9d MB\n", "kvmscope stat --by reason --by vm,vcpu", b[5], b[6] / 1024
		printf "%-44s %9.4f s\n", "cat FILE > /dev/null", b[7]
		printf "%-44s %9.4f s   (%.2fx cat, median; for scale, not a target)\n", "one thread walking the records (floor)", minimum(fl), median(rf)
		printf "speed-up vs perf: %.2fx best/best, %.2fx median of the rounds (target >= 5x)\n", b[1] / b[3], mp
		printf "time vs cat: %.2fx best/best, %.2fx median of the rounds (target <= 2x); --by reason --by vm,vcpu: %.2fx median\n", b[3] / b[7], mc, mt
		printf "CPU time (user + system, medians): kvmscope %.3f s (both threads), perf %.3f s: %.1fx median of the rounds\n", median(kc), median(pc), median(ru)
		printf "peak RSS: %.1f MB vs perf %.1f MB\n", b[4] / 1024, b[2] / 1024
		printf "RESULT %d %d\n", mp >= 5, mc <= 2
	}')
	echo "$res" | grep -v '^RESULT'
	set -- "$2, page cache $3" $(echo "$res" | sed -n 's/^RESULT //p')
	target "stat >= 5x perf ($1, median)" "$2"
	target "stat <= 2x cat ($1, median)" "$3"
}

for order in per-cpu time-order; do
	big="$dir/stat-$pairs-$order.data"
	if [ $order = per-cpu ]; then how="per-CPU runs"; opt=--rounds
	else how="global time order, CPUs interleaved"; opt=--time-order; fi
	echo "generating $big ($pairs pairs, $how)..."
	"$gen" --template "$tmpl" -o "$big" --vendor intel --pairs "$pairs" --vms 4 --vcpus 4 $opt
	echo "== stat on perf.data: $(( $(stat -c %s "$big") / 1048576 )) MB, $pairs exit/entry pairs, $how"
	stat_rounds "$big" "$how" "as written"
	sync "$big"                                       # written back: clean pages can go,
	dd if="$big" iflag=nocache count=0 status=none    # then drop the file from the page cache
	cat "$big" > /dev/null                            # and read it back
	stat_rounds "$big" "$how" "as read back"
	rm -f "$big"
done

# Peak RSS on a 10 GB file (per-CPU runs), when the disk has room for it
# and a margin; one run, not timed against perf (which needs GBs for it).
hpairs=$(( 2000000 * 20 ))
huge="$dir/stat-huge.data"
avail=$(df -Pk "$dir" | awk 'NR == 2 { print $4 }')
if [ "${BENCH_BIG:-1}" = 0 ]; then
	echo "== 10 GB file: skipped (BENCH_BIG=0); peak RSS target not measured"
elif [ "$avail" -lt $(( 16 * 1024 * 1024 )) ]; then
	echo "== 10 GB file: skipped, $(( avail / 1048576 )) GB free in $dir (16 GB wanted); peak RSS target not measured"
else
	echo "generating $huge ($hpairs pairs, per-CPU runs)..."
	"$gen" --template "$tmpl" -o "$huge" --vendor intel --pairs "$hpairs" --vms 4 --vcpus 4 --rounds
	k=$("$measure" -n 1 -- "$ks" stat --format perf -i "$huge")
	rss=$(echo "$k" | field maxrss_kb)
	echo "== stat on a $(( $(stat -c %s "$huge") / 1048576 )) MB perf.data: $(echo "$k" | field wall_s) s, peak RSS $(( rss / 1024 )) MB"
	target "peak RSS <= 64 MB on a 10 GB perf.data ($(( rss / 1024 )) MB)" $(( rss <= 65536 ))
	rm -f "$huge"
fi
echo "stat targets missed: $missed"

# The other benchmarks, each against its peer tool (they skip what is missing).
[ "${BENCH_ONLY:-}" != stat ] || exit 0
for b in tracedat merge report timeline live sample exporter engine memory layouts; do
	if [ -x "bench/$b.sh" ] || [ -f "bench/$b.sh" ]; then
		echo
		echo "== bench/$b.sh"
		bash "bench/$b.sh" "$build" || echo "bench/$b.sh failed"
	fi
done
