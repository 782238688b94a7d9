#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# perf_oracle_test.sh - `kvmscope stat --format perf` must print exactly what
# `perf kvm stat report` (Debian linux-perf 6.1) prints on the same file.
#
# Files come from tools/gen-perfdata with a template recorded here by
# `perf kvm stat record -a`.  Every combination of event class, sort key,
# --vcpu and --pid is compared; the only documented difference is perf's
# Min Time column with --vcpu (perf prints 0), which is masked there.
set -u
ks=$KVMSCOPE
gen=$KS_BUILD/tools/gen-perfdata
dir=$KS_TMP/perf-oracle
mkdir -p "$dir"
if ! command -v perf >/dev/null; then echo "skip perf_oracle: perf is not installed"; exit 0; fi
if ! perf kvm stat record -a -o "$dir/template.data" sleep 0.1 >/dev/null 2>"$dir/rec.err"; then
	echo "skip perf_oracle: perf kvm stat record failed here: $(tail -1 "$dir/rec.err")"; exit 0
fi

# The report block: from "Analyze events" to the "Total Samples" line, minus
# perf's per-row "unknown kvm exit code" diagnostics (stderr noise).
block() { sed -n '/^Analyze events/,/^Total Samples/p' | grep -v '^unknown kvm exit code'; }
# Mask the Min Time column for --vcpu runs: rows are fixed-width ("%20s %10llu
# %8.2f%% %8.2f%% %9.2fus ..."), so Min Time is the 11 characters at 52.
mask_min() { sed -E '/us \( \+-/s/^(.{52}).{11}/\1   MIN_TIME/'; }

compare() { # name file args...
	local name=$1 f=$2; shift 2
	local mask=cat
	case " $* " in *" --vcpu "*) mask=mask_min ;; esac
	perf kvm -i "$f" stat report "$@" 2>&1 >/dev/null | block | $mask > "$dir/perf.txt"
	"$ks" stat -i "$f" --format perf "$@" 2>"$dir/ks.err" | block | $mask > "$dir/ks.txt"
	if [ ! -s "$dir/perf.txt" ]; then
		echo "not ok $name: perf printed no report"; return 1
	fi
	if ! diff -u "$dir/perf.txt" "$dir/ks.txt" > "$dir/diff.txt"; then
		echo "not ok $name: differs from perf: $(head -12 "$dir/diff.txt" | tr '\n' '|')"; return 1
	fi
	return 0
}

run_file() { # label gen-args...
	local label=$1; shift
	local f="$dir/$label.data" ok=1 n=0
	if ! "$gen" --template "$dir/template.data" -o "$f" "$@" 2>"$dir/gen.err"; then
		echo "not ok perf_oracle[$label]: generator failed: $(head -1 "$dir/gen.err")"; return
	fi
	local pid
	pid=$(perf script -i "$f" -F pid 2>/dev/null | awk 'NF {print $1; exit}')
	for ev in vmexit mmio ioport msr; do
		for key in sample time; do
			for extra in "" "--vcpu 0" "--vcpu 1" "-p $pid"; do
				n=$((n + 1))
				# shellcheck disable=SC2086
				compare "perf_oracle[$label --event $ev -k $key $extra]" "$f" \
					--event "$ev" -k "$key" $extra || ok=0
			done
		done
	done
	[ $ok = 1 ] && echo "ok perf_oracle[$label]: $n reports identical to perf's"
}

run_file intel-s1 --vendor intel --seed 1 --pairs 20000
run_file amd-s2 --vendor amd --seed 2 --pairs 20000 --vms 3 --vcpus 3
run_file intel-rounds --vendor intel --seed 3 --pairs 30000 --rounds --migrate
run_file intel-ooo --vendor intel --seed 4 --pairs 30000 --rounds --ooo --lost 3
run_file amd-unmatched --vendor amd --seed 5 --pairs 20000 --unmatched --unknown 40 --rounds
run_file intel-unknown --vendor intel --seed 6 --pairs 20000 --unknown 25 --unmatched --no-comm
