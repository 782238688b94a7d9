#!/bin/bash
# mistakes_test.sh - user mistakes, as a table: each row runs the real
# binary and asserts the exit code (2: usage, 1: the input cannot answer),
# that standard error is exactly one line naming the option or the file,
# and that no input file changed (checksums before and after).
#
# Row: EXIT|WORD STDERR MUST NAME|ARGUMENTS (word-split; $H is the hip24
# directory, $T the scratch directory, $P a generated perf.data).
set -u
H=$KS_SHARED/data/hip24
T=$KS_TMP
if [ ! -d "$H" ]; then
	echo "skip mistakes: $H is absent"
	exit 0
fi
P=$T/kvm.data
"$KS_BUILD/tools/gen-kvm-perfdata" -o "$P" > /dev/null 2>&1 || P=
printf 'Format of lines: this is prose, not a trace.\nSecond line.\n' > "$T/prose.txt"
mkdir -p "$T/dir"
sums() { sha256sum "$H"/*.trace.dat ${P:+"$P"} "$T/prose.txt" 2>/dev/null; }
before=$(sums)
n=0
while IFS='|' read -r want word args; do
	[ -z "$want" ] || [ "${want#\#}" != "$want" ] && continue
	args=${args//\$H/$H}
	args=${args//\$T/$T}
	args=${args//\$P/$P}
	word=${word//\$T/$T}
	n=$((n + 1))
	# shellcheck disable=SC2086
	timeout 60 "$KVMSCOPE" $args > "$T/out" 2> "$T/err"
	rc=$?
	lines=$(wc -l < "$T/err")
	if [ "$rc" = "$want" ] && [ "$lines" = 1 ] && grep -qF -- "$word" "$T/err"; then
		echo "ok mistake $n: kvmscope $args -> exit $rc: $(cat "$T/err")"
	else
		echo "not ok mistake $n: kvmscope $args: exit $rc (want $want), $lines stderr lines (want 1 naming '$word'): $(head -3 "$T/err" | tr '\n' ' ')"
	fi
done <<'ROWS'
# usage mistakes: exit 2, the option named
2|--vcpu|stat -i $H/host-tsync.trace.dat --vcpu abc
2|--vcpu|stat -i $H/host-tsync.trace.dat --vcpu -1
2|--vcpu|stat -i $H/host-tsync.trace.dat --vcpu 1 --vcpu 2
2|--json and --csv|stat -i $H/host-tsync.trace.dat --json --csv
2|--format|stat -i $H/host-tsync.trace.dat --format yaml
2|--by|stat -i $H/host-tsync.trace.dat --format perf --by vm
2|--hist|stat -i $H/host-tsync.trace.dat --hist --csv
2|--hist|stat -i $H/host-tsync.trace.dat --hist --format perf
2|--input|stat -i $H/host-tsync.trace.dat -i $H/guest-tsync.trace.dat
2|one input|stat $H/host-tsync.trace.dat -i $H/guest-tsync.trace.dat
2|--measure|stat -i $H/host-tsync.trace.dat --measure both
2|--pid|stat -i $H/host-tsync.trace.dat -p 12,,3
2|--pid|stat -i $H/host-tsync.trace.dat -p abc
2|--bogus|stat --bogus
2|--by|stat -i $H/host-tsync.trace.dat --by cpu
2|--time|stat -i $H/host-tsync.trace.dat --time 5
2|--time|stat -i $H/host-tsync.trace.dat --time 9,1
2|--time|dump --time 50%-10% $H/host-tsync.trace.dat
2|no input|dump
2|-i|dump -i
2|--tsc-offset|merge --tsc-offset 0x10 -i $H/host-tsync.trace.dat -i $H/guest-tsync.trace.dat
2|--vcpu|pmu -i $H/host-tsync.trace.dat --vcpu x
2|--pid|pmu -i $H/host-tsync.trace.dat -p 0
2|check|pmu check --vcpu 1
2|pmu check|pmu -i $H/host-tsync.trace.dat --sysfs-root /sys
2|give 'check'|pmu
2|--vcpu|unwind --vcpu abc dump.elf
2|dump file|unwind
2|dump file|unwind a.elf b.elf
2|--kernel-unwind|unwind --kernel-unwind dwarf a.elf
2|not a kvmscope command|frobnicate
# questions the input cannot answer: exit 1, the file named
1|no msr events|stat -i $H/host-tsync.trace.dat --event msr
1|no mmio events|stat -i $H/host-tsync.trace.dat --event mmio
1|no vCPU 7|stat -i $H/host-tsync.trace.dat --vcpu 7
1|process 999|stat -i $H/host-tsync.trace.dat -p 999
1|--arch arm64|stat -i $H/host-tsync.trace.dat --arch arm64
1|no KVM events|stat -i $H/guest-only.trace.dat
1|no KVM events|stat -i $H/host-6.8rt-empty.trace.dat
1|unknown event class|stat -i $H/host-tsync.trace.dat --event trap
1|unknown architecture|stat -i $H/host-tsync.trace.dat --arch sparc
1|$T/nonexistent|stat -i $T/nonexistent
1|$T/nonexistent|dump $T/nonexistent
1|$T/nonexistent|pmu -i $T/nonexistent
1|$T/nonexistent|merge -i $T/nonexistent -i $H/guest-tsync.trace.dat
ROWS
after=$(sums)
if [ "$before" = "$after" ]; then
	echo "ok mistakes: no input changed ($n rows)"
else
	echo "not ok mistakes: an input changed: $(diff <(echo "$before") <(echo "$after") | head -3)"
fi
