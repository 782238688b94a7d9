#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# stat_round_memory_test.sh - stat on a perf.data whose rounds (the records
# between two FINISHED_ROUNDs) hold about a million records each (110 MB),
# in the two layouts perf record writes: each CPU's records of a round in a
# stretch of their own, and the round in global time order (issue 33,
# "stat on every layout").  Under the default memory budget:
#  - it succeeds, and its report is byte for byte perf kvm stat report's;
#  - its peak RSS (bench/measure: getrusage of the child) is at most 64 MB;
#    160 MB under AddressSanitizer, whose shadow memory and quarantine add
#    to every allocation.
# Before, both failed at 171-189 MB: "a round between FINISHED_ROUND
# records holds more than the memory budget".
# timeout: 600
set -u
ks=${KVMSCOPE:?}
. "$(dirname "$0")/../lib/gen.sh"
gen_setup stat-round-memory stat_round_memory
bound_mb=$(asan_bound 64)
f=$dir/rounds.data
for order in --rounds --time-order; do
	name=stat_round_memory[${order#--}]
	# 2 VMs of one vCPU on 2 CPUs: rounds of 15 s of trace time hold
	# about a million records, 2.4 M records make three (the last one
	# less)
	out=$("$gen" --template "$dir/tmpl.data" -o "$f" --vendor intel --pairs 1000000 \
		--vms 2 --vcpus 1 --cpus 2 $order --round-ns 15000000000 -v) || {
		echo "not ok $name: cannot generate the input"; continue; }
	recs=$(echo "$out" | sed -n 's/.*samples=\([0-9]*\).*/\1/p')
	rounds=$(echo "$out" | sed -n 's/.*rounds=\([0-9]*\).*/\1/p')
	# at least three rounds, of 750,000 records on average
	if [ "${rounds:-0}" -lt 3 ] || [ $((recs / rounds)) -lt 750000 ]; then
		echo "not ok $name: the rounds are not as large as meant ($out)"
		continue
	fi
	perf kvm -i "$f" stat report > "$dir/perf.txt" 2>&1
	r=$("$measure" -n 1 -- "$ks" stat --format perf -i "$f")
	"$ks" stat --format perf -i "$f" > "$dir/ks.txt" 2> "$dir/ks.err"
	kb=$(echo "$r" | sed -n 's/.*maxrss_kb=\([0-9]*\).*/\1/p')
	case $r in
	*status=0*) ;;
	*) echo "not ok $name: stat failed ($r): $(head -c 300 "$dir/ks.err")"; continue ;;
	esac
	if ! grep -q "Total Samples" "$dir/perf.txt"; then
		echo "not ok $name: perf's report is empty"
	elif ! cmp -s "$dir/perf.txt" "$dir/ks.txt"; then
		echo "not ok $name: the report differs from perf's:"
		diff "$dir/perf.txt" "$dir/ks.txt" | head -10 | sed 's/^/# /'
	elif [ "$kb" -gt $((bound_mb * 1024)) ]; then
		echo "not ok $name: peak RSS $((kb / 1024)) MB > $bound_mb MB ($recs records in $rounds rounds)"
	else
		echo "ok $name: $recs records in $rounds rounds, report identical to perf's, peak RSS $((kb / 1024)) MB <= $bound_mb MB"
	fi
done
rm -f "$f"
