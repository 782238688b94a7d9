#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# mistakes_test.sh - user mistakes, as a table: each row runs the real
# binary and asserts the exit code (2: usage, 1: the input cannot answer),
# that standard error is exactly one line naming the option or the file,
# and that no input file changed (checksums before and after).
#
# Row: EXIT|WORD STDERR MUST NAME|ARGUMENTS (word-split; $H is the hip24
# directory, $T the scratch directory, $P a generated perf.data of KVM
# events, $Q one of guest PMU samples only (no tracepoint), $D a QEMU
# dump, $O a directory for outputs: after every row it must be empty, no
# output and no temporary file of one may stay behind a refused run).
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
# text that is not ftrace text, though it starts with '#' lines and holds an
# example event line further down
cp README.md "$T/README.md"
cp Makefile "$T/Makefile"
O=$T/out.d
Q=$T/guest-samples.data
"$KS_BUILD/tools/gen-guest-perfdata" -o "$Q" --kallsyms "$T/q.kallsyms" --samples 200 \
	> /dev/null 2>&1 || Q=
D=$T/d.elf
"$KS_BUILD/tools/gen-qemudump" -o "$D" > /dev/null 2>&1 || D=
# kallsyms of another boot: another _stext than the dump's VMCOREINFO; or
# the same _stext with a linux_banner where the guest has no banner
printf 'ffffffff9a000000 T _stext\nffffffff9a001000 T start_kernel\n' > "$T/ks-other"
printf 'ffffffff81000000 T _stext\nffffffff81000000 D linux_banner\n' > "$T/ks-banner"
# kdump-compressed (makedumpfile's header) and paging=true ELF dumps
{ printf 'KDUMP   '; head -c 4088 /dev/zero; } > "$T/kdump"
python3 - "$T/paging.elf" <<'PY'
import struct, sys
n = 5000  # one LOAD per guest virtual mapping, as paging=true writes
eh = b'\x7fELF' + bytes([2, 1, 1]) + bytes(9) + struct.pack('<HHIQQQIHHHHHH', 4, 62, 1, 0,
	64, 0, 0, 64, 56, n, 0, 0, 0)
ph = b''.join(struct.pack('<IIQQQQQQ', 1, 6, 0, 0xffff888000000000 + i * 4096, i * 4096,
	0, 4096, 4096) for i in range(n))
open(sys.argv[1], 'wb').write(eh + ph)
PY
sums() { sha256sum "$H"/*.trace.dat ${P:+"$P"} ${Q:+"$Q"} ${D:+"$D"} "$T/prose.txt" "$T/ks-other" \
	"$T/ks-banner" "$T/kdump" 2>/dev/null; }
before=$(sums)
n=0
while IFS='|' read -r want word args; do
	[ -z "$want" ] || [ "${want#\#}" != "$want" ] && continue
	args=${args//\$H/$H}
	args=${args//\$T/$T}
	args=${args//\$P/$P}
	args=${args//\$Q/$Q}
	args=${args//\$D/$D}
	args=${args//\$O/$O}
	word=${word//\$T/$T}
	n=$((n + 1))
	if { [ -z "$Q" ] && [[ "$args" == *guest-samples* ]]; } ||
	   { [ -z "$D" ] && [[ "$args" == *d.elf* ]]; }; then
		echo "skip mistake $n: a generator tool failed"
		continue
	fi
	rm -rf "$O"
	mkdir -p "$O"
	# shellcheck disable=SC2086
	timeout 60 "$KVMSCOPE" $args > "$T/out" 2> "$T/err" < /dev/null
	rc=$?
	lines=$(wc -l < "$T/err")
	left=$(ls -A "$O")
	if [ "$rc" = "$want" ] && [ "$lines" = 1 ] && grep -qF -- "$word" "$T/err" && [ -z "$left" ]; then
		echo "ok mistake $n: kvmscope $args -> exit $rc: $(cat "$T/err")"
	else
		echo "not ok mistake $n: kvmscope $args: exit $rc (want $want), $lines stderr lines (want 1 naming '$word'), outputs left: '$left': $(head -3 "$T/err" | tr '\n' ' ')"
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
2|--json|top -i $H/host-tsync.trace.dat --fast --csv --json
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
# (a file without KVM events is no mistake: perf kvm stat report prints
# its empty table and exits 0 on one; tests/cli/empty_answer_test.sh)
1|unknown event class|stat -i $H/host-tsync.trace.dat --event trap
1|unknown architecture|stat -i $H/host-tsync.trace.dat --arch sparc
1|$T/nonexistent|stat -i $T/nonexistent
1|$T/README.md: offset 12: not a trace.dat, perf.data or ftrace text|dump $T/README.md
1|$T/Makefile: offset|stat -i $T/Makefile
1|$T/Makefile: offset|report -i $T/Makefile
1|$T/nonexistent|dump $T/nonexistent
1|$T/nonexistent|pmu -i $T/nonexistent
1|$T/nonexistent|merge -i $T/nonexistent -i $H/guest-tsync.trace.dat
# convert: usage
2|--input|convert -i $H/host-tsync.trace.dat -i $H/guest-tsync.trace.dat -o $O/a.dat
2|one input|convert -i $H/host-tsync.trace.dat $H/guest-tsync.trace.dat -o $O/a.dat
2|--file-version|convert -i $H/host-tsync.trace.dat -o $O/a.dat --file-version 8
2|--compression|convert -i $H/host-tsync.trace.dat -o $O/a.dat --file-version 6 --compression zstd
2|-o OUTPUT|convert -i $H/host-tsync.trace.dat
2|--time|convert -i $H/host-tsync.trace.dat -o $O/a.dat --time 2,1
# convert: runtime (no output may stay behind)
1|no tracepoint events|convert -i $Q -o $O/q.dat
1|time window|convert -i $H/host-tsync.trace.dat -o $O/a.dat --time 99999,
1|$T/nonexistent|convert -i $T/nonexistent -o $O/a.dat
1|$T/prose.txt|convert -i $T/prose.txt -o $O/a.dat
1|choose another output|convert -i $H/host-tsync.trace.dat -o $H/host-tsync.trace.dat
1|/dev/stdin|convert -i - -o $O/a.dat
# report: usage
2|--sort|report -i $H/host-tsync.trace.dat --sort cycles
2|--sort|report -i $H/host-tsync.trace.dat -k dso -s sym
2|--json and --csv|report -i $H/host-tsync.trace.dat --json --csv
2|--format|report -i $H/host-tsync.trace.dat --format yaml
2|--by|report -i $H/host-tsync.trace.dat --by cpu
2|--guest-kaslr-offset|report -i $H/host-tsync.trace.dat --guest-kaslr-offset xyz
2|--guest-binary|report -i $H/host-tsync.trace.dat --guest-binary /bin/true:zz
2|--time|report -i $H/host-tsync.trace.dat --time 5
2|--sample-exits|report -i $H/host-tsync.trace.dat --sample-exits ,
2|--folded and --flamegraph|report -i $H/host-tsync.trace.dat --folded $O/x --flamegraph $O/x
2|standard output|report -i $H/host-tsync.trace.dat --folded - --json
# report: runtime
1|is not a guest of|report -i $H/host-2vcpu-22k.trace.dat -i $H/guest-tsync.trace.dat --folded $O/f
1|$T/nonexistent|report -i $T/nonexistent --folded $O/f
1|$T/dir|report -i $H/host-tsync.trace.dat --folded $T/dir
1|$T/nonexistent|report -i $H/host-tsync.trace.dat --guest-kallsyms $T/nonexistent
# timeline
2|--max-guest-events|timeline -i $H/host-tsync.trace.dat --max-guest-events lots
2|--time|timeline -i $H/host-tsync.trace.dat --time 1%-x
2|--json and --html|timeline -i $H/host-tsync.trace.dat --json $O/a --html $O/a
2|no input|timeline
2|--bogus|timeline --bogus
2|--tsc-offset|timeline --tsc-offset zero -i $H/host-tsync.trace.dat
1|$T/nonexistent|timeline -i $T/nonexistent --html $O/t.html
1|$T/prose.txt|timeline -i $H/host-tsync.trace.dat -i $T/prose.txt --html $O/t.html
# record (the mistakes are found before any tracing)
2|--duration|record -d 0 -o $O/r.dat
2|--buffer-kb|record -b 2 -o $O/r.dat
2|--pid|record -p 0 -o $O/r.dat
2|--compression|record --compression lz4 -o $O/r.dat
2|--compression|record --file-version 6 --compression zlib -o $O/r.dat
2|--bogus|record --bogus -o $O/r.dat
1|--pid 999999|record -p 999999 -o $O/r.dat
1|--pid 999999|top -p 999999 --batch -n 1
# sample (the mistakes are found before connecting)
2|--freq|sample -F 0
2|--freq|sample -F 1.5
2|--samples|sample -n abc
2|--timeout|sample --timeout 0
2|--sample-budget|sample --sample-budget -1
2|--mem|sample --mem both
2|--guest-kaslr-offset|sample --guest-kaslr-offset -5
2|--orc-layout|sample --orc-layout 5
2|unexpected argument|sample extra
1|$T/nonexistent|sample --guest-kallsyms $T/nonexistent --svg $O/s.svg
# unwind: dumps that are not what it reads, kallsyms of another boot
2|--orc-layout|unwind --orc-layout 7 a.elf
1|$T/dir: is a directory|unwind $T/dir
1|kdump-compressed|unwind $T/kdump
1|paging=false|unwind $T/paging.elf
1|$T/ks-other: these kallsyms are not of the running guest kernel|unwind --kernel-unwind fp --guest-kallsyms $T/ks-other $D
1|$T/ks-banner: these kallsyms are not of the running guest kernel|unwind --kernel-unwind fp --guest-kallsyms $T/ks-banner $D
# one spelling everywhere: stat's -s is its -k
2|--key|stat -i $H/host-tsync.trace.dat -k time -s sample
2|--key|stat -i $H/host-tsync.trace.dat -k bogus
2|--input|pmu -i $H/host-tsync.trace.dat -i $H/guest-tsync.trace.dat
1|/dev/stdin|stat -i -
2|--bogus|merge --bogus -i $H/host-tsync.trace.dat
ROWS
after=$(sums)
if [ "$before" = "$after" ]; then
	echo "ok mistakes: no input changed ($n rows)"
else
	echo "not ok mistakes: an input changed: $(diff <(echo "$before") <(echo "$after") | head -3)"
fi
