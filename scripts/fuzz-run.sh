#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# fuzz-run.sh OUT SECONDS NAME... - the timed libFuzzer runs of
# scripts/fuzz.sh and their verdict: OUT/NAME is a target's binary,
# OUT/corpus/NAME its corpus, FUZZ_JOBS targets at a time (default: one per
# CPU).  One line per target, in the order given.  A finding (a crash, a
# timeout of 10 s, a leak, more than 2 GB) fails the run (exit 1; with
# FUZZ_FINDINGS_FATAL=0 it is only reported): its input is named and, with
# FUZZ_ARTIFACTS=DIR, copied to DIR/NAME/, so that CI keeps it for the
# developer, who adds it to tests/fuzz/regress/NAME/ with the fix.
set -u
out=$1 secs=$2
shift 2

# fuzz_one NAME: run NAME for $secs seconds; print one line of result (and
# after a finding the sanitizer's summary and where its input is).
fuzz_one() {
	local name=$1 bin="$out/$1" log="$out/$1.log" execs unit
	mkdir -p "$out/crashes/$name"
	if "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=1048576 -print_final_stats=1 \
		-artifact_prefix="$out/crashes/$name/" "$out/corpus/$name" >"$log" 2>&1; then
		execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
		[ -n "$execs" ] || execs=$(grep -Eo '#[0-9]+' "$log" | tail -1 | tr -d '#')
		echo "$name: ${execs:-?} executions in ${secs}s, no finding"
	else
		echo "$name: FINDING, see $log"
		grep -E 'ERROR|SUMMARY' "$log" | head -5
		unit=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
		if [ -n "$unit" ] && [ -f "$unit" ]; then
			echo "$name: input: $unit"
			if [ -n "${FUZZ_ARTIFACTS:-}" ]; then
				mkdir -p "$FUZZ_ARTIFACTS/$name"
				cp "$unit" "$log" "$FUZZ_ARTIFACTS/$name/"
				echo "$name: input kept: $FUZZ_ARTIFACTS/$name/$(basename "$unit")"
			fi
			echo "$name: once fixed, add it to tests/fuzz/regress/$name/"
		else
			echo "$name: no input written (see the log)"
		fi
	fi
}

jobs_max=${FUZZ_JOBS:-$(nproc)}
for name in "$@"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
	fuzz_one "$name" >"$out/$name.result" &
done
wait
status=0
for name in "$@"; do
	cat "$out/$name.result"
	if grep -q "^$name: FINDING" "$out/$name.result"; then
		[ "${FUZZ_FINDINGS_FATAL:-1}" = 0 ] || status=1
	fi
done
exit $status
