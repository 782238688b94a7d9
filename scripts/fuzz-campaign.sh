#!/bin/bash
# fuzz-campaign.sh RUNS TARGET... - run each libFuzzer target (built by
# scripts/fuzz.sh into build-fuzz/) for RUNS executions on its corpus and
# print "TARGET: N executions, no finding" or the finding.  For long
# campaigns (10 M executions per parser); `make fuzz` is the timed variant.
# The allocator options below keep ASan's quarantine and stack depot small:
# 2-4x more executions per second on small inputs, same checks.
set -u
runs=${1:?usage: fuzz-campaign.sh RUNS TARGET...}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${FUZZ_OUT:-build-fuzz}
export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS="quarantine_size_mb=4:malloc_context_size=4:thread_local_quarantine_size_kb=64${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
status=0
for name in "$@"; do
	bin="$out/$name"
	if [ ! -x "$bin" ]; then
		echo "$name: not built (run scripts/fuzz.sh first)"
		status=1
		continue
	fi
	mkdir -p "$out/crashes/$name" "$out/corpus/$name"
	log="$out/$name.campaign.log"
	start=$(date +%s)
	if "$bin" -runs="$runs" -timeout=10 -rss_limit_mb=2048 -max_len=1048576 -print_final_stats=1 \
		-artifact_prefix="$out/crashes/$name/" "$out/corpus/$name" >"$log" 2>&1; then
		execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
		echo "$name: ${execs:-?} executions in $(( $(date +%s) - start )) s, no finding"
	else
		echo "$name: FINDING after $(( $(date +%s) - start )) s, see $log"
		grep -E 'ERROR|SUMMARY' "$log" | head -3
		status=1
	fi
done
exit $status
