#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# stat_round_spill_test.sh - stat on a perf.data whose rounds (the records
# between two FINISHED_ROUNDs) are sorted only in short stretches: the CPUs
# interleaved and the records shuffled in groups of 16 (gen-perfdata
# --shuffle), some samples written two rounds late (--ooo): 2.2 M records
# in 5 rounds (240 MB).  Such a round is queued as entries, not segments;
# under --limit memory=48M its queue does not fit (issue 33, "memory stays
# within the budget for any input"):
#  - it succeeds, and its report is byte for byte perf kvm stat report's
#    (the spilled runs merged back in perf's order), and the records out of
#    time order it counts are those of perf's warning;
#  - its peak RSS (bench/measure: getrusage of the child) is within the
#    48 MB budget (160 MB under AddressSanitizer, whose shadow memory and
#    quarantine add to every allocation, as stat_round_memory_test.sh);
#  - with TMPDIR naming a directory that does not exist, it fails with one
#    line naming the input, the offset and that directory: the queue
#    spills, where TMPDIR says.
# Before, stat failed: "a round between FINISHED_ROUND records holds more
# than the memory budget" (or "no FINISHED_ROUND records", in the first).
# timeout: 600
set -u
ks=${KVMSCOPE:?}
. "$(dirname "$0")/../lib/gen.sh"
gen_setup stat-round-spill stat_round_spill
budget_mb=48
bound_mb=$(asan_bound $budget_mb)
f=$dir/shuffled.data
name=stat_round_spill
# 2 VMs of 4 vCPUs on 8 CPUs, rounds of 3 s of trace time: about 720,000
# records each (the late samples make two rounds more)
if ! out=$("$gen" --template "$dir/tmpl.data" -o "$f" --vendor intel --pairs 900000 \
	--vms 2 --vcpus 4 --cpus 8 --time-order --ooo --shuffle 16 --round-ns 3000000000 -v); then
	echo "not ok $name: cannot generate the input"
	exit 0
fi
recs=$(echo "$out" | sed -n 's/.*samples=\([0-9]*\).*/\1/p')
rounds=$(echo "$out" | sed -n 's/.*rounds=\([0-9]*\).*/\1/p')
ooo=$(echo "$out" | sed -n 's/.*ooo=\([0-9]*\).*/\1/p')
if [ "${rounds:-0}" -lt 3 ] || [ $((recs / rounds)) -lt 400000 ] || [ "${ooo:-0}" = 0 ]; then
	echo "not ok $name: the rounds are not as large as meant ($out)"
	exit 0
fi
# perf's warning first: "Warning:", "N out of order events recorded."
perf kvm -i "$f" stat report > "$dir/perf-all.txt" 2>&1
perf_ooo=$(sed -n 's/^\([0-9]*\) out of order events recorded\.$/\1/p' "$dir/perf-all.txt")
sed '/^Warning:$/{N;/out of order events recorded\.$/d}' "$dir/perf-all.txt" > "$dir/perf.txt"
r=$("$measure" -n 1 -- "$ks" stat --format perf --limit memory=${budget_mb}M -i "$f")
"$ks" stat --format perf --limit memory=${budget_mb}M -i "$f" > "$dir/ks.txt" 2> "$dir/ks.err"
kb=$(echo "$r" | sed -n 's/.*maxrss_kb=\([0-9]*\).*/\1/p')
case $r in
*status=0*)
	if ! grep -q "Total Samples" "$dir/perf.txt"; then
		echo "not ok $name: perf's report is empty"
	elif ! cmp -s "$dir/perf.txt" "$dir/ks.txt"; then
		echo "not ok $name: the report differs from perf's:"
		diff "$dir/perf.txt" "$dir/ks.txt" | head -10 | sed 's/^/# /'
	elif ! "$ks" stat --limit memory=${budget_mb}M -i "$f" 2>/dev/null |
	     grep -q "^ *${perf_ooo:-none}  records out of time order$"; then
		echo "not ok $name: the records out of time order are not perf's ${perf_ooo:-(none)}"
	elif [ "$kb" -gt $((bound_mb * 1024)) ]; then
		echo "not ok $name: peak RSS $((kb / 1024)) MB > $bound_mb MB ($recs records in $rounds rounds)"
	else
		echo "ok $name: $recs records in $rounds shuffled rounds, report identical to perf's, $perf_ooo out of order as perf, peak RSS $((kb / 1024)) MB <= $bound_mb MB"
	fi ;;
*) echo "not ok $name: stat failed ($r): $(head -c 300 "$dir/ks.err")" ;;
esac
TMPDIR=$dir/missing "$ks" stat --format perf --limit memory=${budget_mb}M -i "$f" > /dev/null 2> "$dir/tmp.err"
rc=$?
if [ $rc = 1 ] && [ "$(wc -l < "$dir/tmp.err")" = 1 ] &&
   grep -q "^kvmscope: $f: offset [0-9]*: spilling a round past the memory budget: cannot write a temporary file in $dir/missing: No such file or directory$" "$dir/tmp.err"; then
	echo "ok $name[TMPDIR]: the spill goes where TMPDIR says; its failure is one line"
else
	echo "not ok $name[TMPDIR]: exit $rc, $(head -c 300 "$dir/tmp.err")"
fi
rm -f "$f"
