#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# fuzz_gate_test.sh - CI fails on a new fuzz finding and keeps its input.
#
# .ci/run's fuzz stage is `make fuzz` (scripts/fuzz.sh), whose verdict is
# scripts/fuzz-run.sh's.  A tiny libFuzzer target built here (it crashes on
# input that starts with "CRASH"; the real targets are left alone) gets a
# copy of a committed corpus with one planted crashing input: `.ci/run fuzz`
# must exit non-zero, name the input and keep it under CI_ARTIFACTS; a
# target without the crash on the same corpus passes the gate.  Needs clang
# (scripts/install-deps.sh).
set -u
T=${KS_TMP:?}/fuzz_gate
mkdir -p "$T"
if ! command -v clang >/dev/null; then
	echo "skip fuzz_gate: clang is not installed"
	exit 0
fi
cat > "$T/planted.c" <<'C'
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
#ifndef HARMLESS
	if (n >= 5 && memcmp(d, "CRASH", 5) == 0)
		abort();
#endif
	return d == NULL && n > 0;
}
C
out=$T/out
mkdir -p "$out/corpus"
clang -g -O1 -fsanitize=fuzzer,address "$T/planted.c" -o "$out/fuzz_planted" 2> "$T/cc.err" &&
	clang -g -O1 -DHARMLESS -fsanitize=fuzzer,address "$T/planted.c" -o "$out/fuzz_harmless" 2>> "$T/cc.err" ||
	{ echo "not ok fuzz_gate_build: $(head -2 "$T/cc.err" | tr '\n' ' ')"; exit 0; }
# a copy of a corpus (fuzz_pmu's regression inputs), one input planted
for t in fuzz_planted fuzz_harmless; do
	mkdir -p "$out/corpus/$t"
	cp tests/fuzz/regress/fuzz_pmu/* "$out/corpus/$t/"
done
printf 'CRASH here\n' > "$out/corpus/fuzz_planted/planted-input"

# `.ci/run fuzz` for real, with a `make` first on PATH that does what
# `make fuzz` does after building (fuzz.sh ends in fuzz-run.sh) on the
# planted target, with the variables .ci/run gives make.
mkdir -p "$T/bin"
cat > "$T/bin/make" <<SH
#!/bin/bash
echo "make \$*" >> "$T/make-args"
for a; do case \$a in FUZZ_*=*) export "\$a" ;; esac; done
[ "\$1" = fuzz ] || exit 0
exec scripts/fuzz-run.sh "$out" "\$FUZZ_SECONDS" fuzz_planted
SH
chmod +x "$T/bin/make"
PATH="$T/bin:$PATH" FUZZ_SECONDS=2 CI_ARTIFACTS="$T/artifacts" .ci/run fuzz > "$T/gate.txt" 2>&1
rc=$?
unit=$(sed -n 's/^fuzz_planted: input kept: //p' "$T/gate.txt")
if [ "$rc" -ne 0 ] && grep -q '^fuzz_planted: FINDING' "$T/gate.txt"; then
	echo "ok ci_run_fails_on_finding"
else
	echo "not ok ci_run_fails_on_finding: exit $rc: $(head -3 "$T/gate.txt" | tr '\n' ' ')"
fi
if [ -n "$unit" ] && [ "$(dirname "$unit")" = "$T/artifacts/fuzz/fuzz_planted" ] &&
	cmp -s "$unit" "$out/corpus/fuzz_planted/planted-input" &&
	grep -q "^fuzz_planted: input: $out/crashes/fuzz_planted/crash-" "$T/gate.txt"; then
	echo "ok ci_run_names_and_keeps_input"
else
	echo "not ok ci_run_names_and_keeps_input: kept '$unit': $(tr '\n' ' ' < "$T/gate.txt" | head -c 300)"
fi
rm -f "$out/corpus/fuzz_harmless/planted-input"
if FUZZ_JOBS=2 scripts/fuzz-run.sh "$out" 1 fuzz_harmless > "$T/clean.txt" 2>&1 &&
	grep -q '^fuzz_harmless: .* no finding' "$T/clean.txt"; then
	echo "ok fuzz_gate_passes_without_finding"
else
	echo "not ok fuzz_gate_passes_without_finding: $(head -3 "$T/clean.txt" | tr '\n' ' ')"
fi
# make fuzz is scripts/fuzz.sh, which takes fuzz-run.sh's verdict.
if ! grep -q 'FUZZ_FINDINGS_FATAL' .ci/run && grep -q '^scripts/fuzz-run.sh .* || status=1' scripts/fuzz.sh &&
	grep -q '^	@scripts/fuzz.sh' Makefile; then
	echo "ok fuzz_sh_takes_the_verdict"
else
	echo "not ok fuzz_sh_takes_the_verdict: .ci/run sets FUZZ_FINDINGS_FATAL, or make fuzz / fuzz.sh ignore fuzz-run.sh"
fi
