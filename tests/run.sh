#!/bin/bash
# run.sh BUILD - run every test program and test script, print the totals.
#
# Test programs: BUILD/tests/*/test_*.  Test scripts: tests/*/*_test.sh, run
# with KVMSCOPE (the binary), KS_BUILD, KS_SHARED and KS_TMP in the
# environment.  Every line "ok X" / "not ok X: why" / "skip X: why" counts.
# The five slowest (seconds) are named before the last line, which is
# "N passed, N failed, N skipped"; exit 1 if any failed.  KS_TMP defaults to
# a new directory, removed again after a run without failures.
set -u
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export KS_BUILD="$root/$build"
export KVMSCOPE="$KS_BUILD/kvmscope"
export KS_SHARED=${KS_SHARED:-$root/../shared}
# A scratch directory made here is removed after a run without failures
# (the tests leave ~1.2 GB in it); after a failure it stays for a look.
own_tmp=0
[ -n "${KS_TMP:-}" ] || own_tmp=1
export KS_TMP=${KS_TMP:-$(mktemp -d /tmp/kvmscope-test.XXXXXX)}
export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
[ -d "$KS_SHARED/data" ] || echo "note: $KS_SHARED/data is absent: tests on real recordings will be skipped"
pass=0 fail=0 skip=0
log="$KS_TMP/run.log"
times="$KS_TMP/times.txt" # seconds per test program or script
: > "$log"
: > "$times"
run_one() {
	local name=$1; shift
	local out rc t0=$EPOCHREALTIME
	out=$("$@" 2>"$KS_TMP/stderr.txt"); rc=$?
	echo "$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') $name" >> "$times"
	printf '%s\n' "$out" | sed "s|^|[$name] |" | tee -a "$log" | grep -E '^\[[^]]*\] (not ok|skip)' || true
	local p f s
	p=$(printf '%s\n' "$out" | grep -c '^ok ')
	f=$(printf '%s\n' "$out" | grep -c '^not ok ')
	s=$(printf '%s\n' "$out" | grep -c '^skip ')
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "[$name] not ok $name: exited with status $rc: $(tail -3 "$KS_TMP/stderr.txt" | tr '\n' ' ')"
		f=1
	fi
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
}
for t in $(find "$KS_BUILD/tests" -type f -name 'test_*' -perm -u+x | sort); do
	run_one "${t#$KS_BUILD/tests/}" "$t"
done
for t in $(find tests -name '*_test.sh' | sort); do
	run_one "$t" bash "$t"
done
keep_tmp=1
[ "$fail" -ne 0 ] || [ "$own_tmp" = 0 ] || keep_tmp=0
if [ "$keep_tmp" = 1 ]; then
	echo "log: $log"
else
	echo "log: none kept ($KS_TMP removed: no failures)"
fi
echo "slowest: $(sort -rn "$times" | head -5 | awk '{ printf "%s%s %s s", (NR > 1 ? ", " : ""), $2, $1 }')"
echo "$pass passed, $fail failed, $skip skipped"
[ "$keep_tmp" = 1 ] || rm -rf "$KS_TMP"
[ "$fail" -eq 0 ]
