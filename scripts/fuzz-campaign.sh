#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# fuzz-campaign.sh RUNS TARGET... - run each libFuzzer target (built and
# seeded by scripts/fuzz.sh into build-fuzz/) until it has RUNS executions on
# its corpus, and print "TARGET: N executions, no finding" or the finding.
# For long campaigns (10 M executions per parser); `make fuzz` is the timed
# variant.
#
# A campaign runs in chunks of CHUNK executions (default 500000) and adds
# each finished chunk to $out/TARGET.ledger ("code-key executions seconds
# commit"), so it can be stopped and continued: the executions of earlier
# chunks with the same code count.  The code key is the SHA-1 of the fuzz
# binary without its debug sections and build id (code_key below): a header
# edit that moves line numbers changes the debug info but not what runs.
# Between chunks it waits while $out/PAUSE exists; for benchmarks on a quiet
# machine, `touch $out/PAUSE; pkill -INT -f $out/fuzz_` also ends the running
# chunk, which then does not count (stopping a fuzzer with SIGSTOP instead makes
# libFuzzer's wall-clock timeout report false hangs).
# The allocator options below keep ASan's quarantine and stack depot small:
# 2-4x more executions per second on small inputs, same checks.
#
# MINIMIZE=1 first replaces each target's corpus by the smallest subset
# with the same coverage features (libFuzzer's -merge=1, smaller inputs
# preferred).  A corpus grown over long campaigns keeps many large inputs
# that add nothing: fuzz_tracedat's went from 6,204 inputs (295 MB) to 808
# (15 MB), 1,045 edges and 4,010 features either way, and ran ~1.3x faster.
# Do not start two minimizing campaigns of one target at once.
set -u
runs=${1:?usage: fuzz-campaign.sh RUNS TARGET...}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${FUZZ_OUT:-build-fuzz}
chunk=${CHUNK:-500000}
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -z "$(git status --porcelain -- src tests/fuzz 2>/dev/null)" ] || commit="$commit+changes"
mkdir -p "$out"
supp=$(cd "$out" && pwd)/lsan.supp
cat tests/lsan.supp tests/fuzz/lsan-fuzz.supp > "$supp"
export LSAN_OPTIONS="suppressions=$supp:print_suppressions=0"
export ASAN_OPTIONS="quarantine_size_mb=4:malloc_context_size=4:thread_local_quarantine_size_kb=64${ASAN_OPTIONS:+:$ASAN_OPTIONS}"

# code_key BINARY: the first 12 hex digits of the SHA-1 of BINARY without
# debug sections and build-id note.
code_key() {
	local tmp
	tmp=$(mktemp) || return 1
	objcopy --strip-debug --remove-section=.note.gnu.build-id "$1" "$tmp" &&
		sha1sum <"$tmp" | cut -c1-12
	rm -f "$tmp"
}

# ledger_sum FILE COLUMN: the column's sum over the chunks of code $key
# (column 2: executions, 3: seconds).
ledger_sum() {
	[ -f "$1" ] || { echo 0; return; }
	awk -v c="$key" -v col="$2" '$1 == c { n += $col } END { print n + 0 }' "$1"
}

# minimize BINARY CORPUS: replace CORPUS by its merge into a new directory.
minimize() {
	local dir=$2 log=$out/$(basename "$1").merge.log
	rm -rf "$dir.min" && mkdir "$dir.min" &&
		"$1" -merge=1 -timeout=10 -rss_limit_mb=2048 -max_len=1048576 "$dir.min" "$dir" \
			>"$log" 2>&1 &&
		[ -n "$(ls -A "$dir.min")" ] || { rm -rf "$dir.min"; return 1; }
	echo "$(basename "$1"): corpus minimized from $(ls "$dir" | wc -l) to $(ls "$dir.min" | wc -l) inputs"
	rm -rf "$dir" && mv "$dir.min" "$dir"
}

status=0
for name in "$@"; do
	bin="$out/$name"
	if [ ! -x "$bin" ]; then
		echo "$name: not built (run scripts/fuzz.sh first)"
		status=1
		continue
	fi
	mkdir -p "$out/crashes/$name" "$out/corpus/$name"
	if [ -z "$(ls -A "$out/corpus/$name")" ]; then
		echo "$name: empty corpus (scripts/fuzz.sh seeds it)"
		status=1
		continue
	fi
	if [ "${MINIMIZE:-0}" = 1 ] && ! minimize "$bin" "$out/corpus/$name"; then
		echo "$name: corpus minimization failed, see $out/$name.merge.log"
		status=1
		continue
	fi
	ledger="$out/$name.ledger"
	log="$out/$name.campaign.$$.log" # per campaign: two may run one target
	finding=0
	while key=$(code_key "$bin"); [ "$(ledger_sum "$ledger" 2)" -lt "$runs" ]; do
		while [ -e "$out/PAUSE" ]; do sleep 5; done
		left=$(( runs - $(ledger_sum "$ledger" 2) ))
		[ "$left" -lt "$chunk" ] || left=$chunk
		start=$(date +%s)
		if "$bin" -runs="$left" -timeout=10 -rss_limit_mb=2048 -max_len=1048576 -print_final_stats=1 \
			-artifact_prefix="$out/crashes/$name/" "$out/corpus/$name" >"$log" 2>&1; then
			execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
			echo "$key ${execs:-0} $(( $(date +%s) - start )) $commit" >>"$ledger"
		elif [ -e "$out/PAUSE" ] && grep -q 'run interrupted' "$log"; then
			continue # ended for a pause: this chunk does not count
		else
			echo "$name: FINDING after $(( $(date +%s) - start )) s in this chunk, see $log"
			grep -E 'ERROR|SUMMARY' "$log" | head -3
			finding=1
			status=1
			break
		fi
	done
	[ $finding = 1 ] || echo "$name: $(ledger_sum "$ledger" 2) executions of code $key ($commit," \
		"$(ledger_sum "$ledger" 3) s), no finding"
done
exit $status
