#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# limits_test.sh - the run's budgets (--limit): inputs that would make
# memory grow with their size end with one clear error naming the file,
# the offset and the limit, in bounded memory; within the budget the
# results are unchanged.
#
#  - threads: ftrace text with 300 k distinct vCPU thread ids (written here;
#    each thread's kvm_exit comes before its first kvm_entry, so stat must
#    count exactly 300 k "events before their thread's first kvm_entry");
#    over --limit threads=100000: exit 1 and the error; peak RSS of both
#    runs under 256 MB.
#  - timeline under ulimit -v: the first failed allocation ends the run
#    with "out of memory" at once (it retried per event before).
#  - perf.data without FINISHED_ROUND (gen-perfdata without --rounds):
#    within the budget the same rows as the file with rounds, also within
#    16 MB (its records are in time order: the reader merges them from the
#    file instead of queuing them; before, this failed at the budget); over
#    a budget lower than the read window (4 MB), the error names the
#    missing FINISHED_ROUND.
#  - a bad --limit value is a usage error (exit 2).
set -u
ks=${KVMSCOPE:?}
gen=${KS_BUILD:?}/tools/gen-perfdata
dir=${KS_TMP:?}/limits
mkdir -p "$dir"
n=300000
# sanitizer builds use several times the memory and reserve terabytes of
# address space: no RSS bounds and no ulimit -v there
san=0
grep -qa __asan_init "$ks" && san=1

# peak RSS in KB of a command ($rss), its exit status ($rc); stdout to $dir/out
measure() {
	if [ -x /usr/bin/time ] && [ $san = 0 ]; then
		/usr/bin/time -f '%M' -o "$dir/rss" "$@" > "$dir/out" 2> "$dir/err"
		rc=$?
		rss=$(tail -1 "$dir/rss")
	else
		"$@" > "$dir/out" 2> "$dir/err"
		rc=$?
		rss=
	fi
}

awk -v n=$n 'BEGIN {
	print "# tracer: nop"
	ts = 1000000
	for (i = 0; i < n; i++) {
		tid = 1000 + i
		printf "    CPU 0/KVM-%d [001] %d.%06d: kvm_exit: reason HLT rip 0xffffffff81000010 info 0 0\n", tid, ts / 1000000, ts % 1000000; ts++
		printf "    CPU 0/KVM-%d [001] %d.%06d: kvm_entry: vcpu 0, rip 0xffffffff81000010\n", tid, ts / 1000000, ts % 1000000; ts++
	}
}' > "$dir/tids.txt"

measure "$ks" stat --limit threads=100000 "$dir/tids.txt"
if [ $rc = 1 ] && grep -q "^kvmscope: $dir/tids.txt: offset [0-9]*: .*threads.*(limit 100000; raise it with --limit threads=" "$dir/err"; then
	echo "ok limits threads: over the budget, one error naming file, offset and limit"
else
	echo "not ok limits threads: exit $rc, $(head -1 "$dir/err")"
fi
[ -z "$rss" ] || { [ "$rss" -lt 262144 ] && echo "ok limits threads error rss ${rss} KB" ||
	echo "not ok limits threads error rss: ${rss} KB"; }

measure "$ks" stat --limit threads=400000 "$dir/tids.txt"
got=$(awk '/events before their thread.s first kvm_entry/ { print $1 }' "$dir/out")
if [ $rc = 0 ] && [ "$got" = $n ]; then
	echo "ok limits threads raised: $n threads counted"
else
	echo "not ok limits threads raised: exit $rc, '$got' threads before entry, $(head -1 "$dir/err")"
fi
[ -z "$rss" ] || { [ "$rss" -lt 262144 ] && echo "ok limits $n threads rss ${rss} KB" ||
	echo "not ok limits $n threads rss: ${rss} KB (more than 256 MB)"; }

# the default budget (200 k threads) stops the same file
measure "$ks" stat "$dir/tids.txt"
[ $rc = 1 ] && grep -q '(limit 200000;' "$dir/err" && echo "ok limits threads default" ||
	echo "not ok limits threads default: exit $rc, $(head -1 "$dir/err")"

# timeline under a small address space: out of memory at the first failure
if [ $san = 1 ]; then
	echo "skip limits timeline under ulimit -v: a sanitizer build"
else
(ulimit -v 60000; timeout 20 "$ks" timeline -q -i "$dir/tids.txt" --json "$dir/tl.json" \
	> /dev/null 2> "$dir/err"); rc=$?
if [ $rc = 1 ] && grep -qE 'out of memory|budget' "$dir/err"; then
	echo "ok limits timeline under ulimit -v: $(head -1 "$dir/err" | cut -c1-60)"
else
	echo "not ok limits timeline under ulimit -v: exit $rc, $(head -1 "$dir/err")"
fi
fi

# perf.data without FINISHED_ROUND
if ! command -v perf >/dev/null || ! perf kvm stat record -a -o "$dir/tmpl.data" sleep 0.1 >/dev/null 2>&1; then
	echo "skip limits perf.data without rounds: no perf to record a template"
elif ! "$gen" --template "$dir/tmpl.data" -o "$dir/rounds.data" --pairs 200000 --vms 2 --vcpus 2 --rounds ||
     ! "$gen" --template "$dir/tmpl.data" -o "$dir/norounds.data" --pairs 200000 --vms 2 --vcpus 2; then
	echo "not ok limits perf.data without rounds: gen-perfdata failed"
else
	"$ks" stat --json --by vm,vcpu,reason "$dir/rounds.data" 2>&1 | grep -v "\"input\":" > "$dir/r.json"
	measure "$ks" stat --json --by vm,vcpu,reason "$dir/norounds.data"
	grep -v "\"input\":" "$dir/out" > "$dir/n.json"
	if [ $rc = 0 ] && [ -s "$dir/r.json" ] && cmp -s "$dir/r.json" "$dir/n.json"; then
		echo "ok limits no rounds within the budget: the rows of the file with rounds"
	else
		echo "not ok limits no rounds within the budget: exit $rc, $(head -1 "$dir/err")"
	fi
	measure "$ks" stat --json --by vm,vcpu,reason --limit memory=16M "$dir/norounds.data"
	grep -v "\"input\":" "$dir/out" > "$dir/n16.json"
	if [ $rc = 0 ] && cmp -s "$dir/r.json" "$dir/n16.json"; then
		echo "ok limits no rounds, in time order, within 16 MB: the rows of the file with rounds"
	else
		echo "not ok limits no rounds, in time order, within 16 MB: exit $rc, $(head -1 "$dir/err")"
	fi
	measure "$ks" stat --limit memory=4M "$dir/norounds.data"
	if [ $rc = 1 ] && grep -q "^kvmscope: $dir/norounds.data: offset [0-9]*: no FINISHED_ROUND records.*(limit 4194304; raise it with --limit memory=" "$dir/err"; then
		echo "ok limits no rounds over the budget: the error names the cause"
	else
		echo "not ok limits no rounds over the budget: exit $rc, $(head -1 "$dir/err")"
	fi
	measure "$ks" stat --limit memory=16M "$dir/rounds.data"
	[ $rc = 0 ] && echo "ok limits rounds within 16 MB" ||
		echo "not ok limits rounds within 16 MB: exit $rc, $(head -1 "$dir/err")"
fi

for bad in threads=0 threads=x memory=12Q nosuch=1; do
	"$ks" stat --limit "$bad" "$dir/tids.txt" > /dev/null 2> "$dir/err"; rc=$?
	[ $rc = 2 ] && echo "ok limits bad value $bad" || echo "not ok limits bad value $bad: exit $rc"
done
"$ks" top --batch --fast --limit threads=x -i "$dir/tids.txt" > /dev/null 2>&1; rc=$?
[ $rc = 2 ] && echo "ok limits top bad value" || echo "not ok limits top bad value: exit $rc"
rm -f "$dir"/*.data "$dir/tids.txt" "$dir/tl.json"
