#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# progress_test.sh - the progress line of the commands that read an input.
#
# Under a pseudo-terminal (script -qc), with standard output to a file, each
# reading command (stat, report, dump, merge, convert, timeline, pmu) draws
# "CMD: DONE of SIZE (N%), R events/s, N s left" on standard error once its
# delay has passed (lowered to 0 s by KVMSCOPE_PROGRESS_DELAY, the hook for
# tests, so that a small input shows it), and erases it.  Nothing with -q,
# nothing when standard error is a pipe, nothing when a command that writes
# as it reads (dump) writes to the terminal too, and nothing before the
# delay.
set -u
ks=${KVMSCOPE:-build/kvmscope}
gen=${KS_BUILD:-build}/tools/gen-kvm-perfdata
S=${KS_SHARED:-../shared}
T=${KS_TMP:-/tmp}/progress
mkdir -p "$T/fmt/kvm"
if ! command -v script > /dev/null || ! command -v python3 > /dev/null || [ ! -x "$gen" ]; then
	echo "skip progress: needs script (util-linux), python3 and $gen"
	exit 0
fi
cp tests/fixtures/x86-6.18/kvm_entry.format tests/fixtures/x86-6.18/kvm_exit.format "$T/fmt/kvm/"
python3 - "$T/scn" <<'PY'
import sys
out = open(sys.argv[1], "w")
out.write("comm 1001 1000 CPU 0/KVM\n")
for i in range(20000):
    t = 1000000 + i * 10000
    out.write("%d 0 1001 1000 kvm:kvm_entry vcpu_id=0\n" % t)
    out.write("%d 0 1001 1000 kvm:kvm_exit exit_reason=12 isa=1 vcpu_id=0\n" % (t + 5000))
PY
if ! "$gen" --formats "$T/fmt" --machine x86_64 -o "$T/p.data" "$T/scn" 2> "$T/err"; then
	echo "not ok progress_generate: $(head -1 "$T/err")"
	exit 0
fi
host=$T/p.data guest=
if [ -e "$S/data/hip24/host-tsync.trace.dat" ]; then
	host=$S/data/hip24/host-tsync.trace.dat guest=$S/data/hip24/guest-tsync.trace.dat
fi
line='^[a-z]+: [0-9.]+ [kMG]B of [0-9.]+ [kMG]B \([0-9]+%\), [0-9.]+ (M )?events/s, [0-9]+ s left$'
# run NAME DELAY COMMAND: the terminal's bytes of COMMAND (stdout to a file)
run() {
	rm -f "$T/conv.dat"
	KVMSCOPE_PROGRESS_DELAY=$2 script -qec "$3" /dev/null < /dev/null > "$T/$1.tty" 2>&1
}
# the line's last drawing, as the terminal shows it: \r-separated, ESC[K stripped
lines() { tr '\r' '\n' < "$T/$1.tty" | sed 's/\x1b\[K//g' | grep -a -E "$line"; }
for c in "stat:$ks stat $T/p.data" "report:$ks report -i $T/p.data" "dump:$ks dump $T/p.data" \
	 "convert:$ks convert $T/p.data -o $T/conv.dat" "timeline:$ks timeline $host" \
	 "pmu:$ks pmu report -i $T/p.data" "merge:$ks merge $host $guest"; do
	name=${c%%:*} cmd=${c#*:}
	run "$name" 0 "$cmd > $T/$name.out"
	got=$(lines "$name" | head -1)
	# erased: the drawing after the last line is ESC[K (the command's own
	# lines may follow)
	erased=$(tr '\r' '\n' < "$T/$name.tty" | grep -a -n -E "events/s|^"$'\x1b'"\[K" | tail -1)
	if [[ $got == "$name: "* ]] && [[ $erased == *:$'\x1b'"[K"* ]]; then
		echo "ok progress_shown_$name ($got)"
	else
		echo "not ok progress_shown_$name: no progress line, or not erased: $(head -c 300 "$T/$name.tty" | tr '\r\033' '|^')"
	fi
	if [ "$name" = convert ]; then q="$cmd -q"; else q="${cmd/ $name / $name -q }"; fi
	[ "$name" = pmu ] && q="$ks pmu report -q -i $T/p.data"
	run "$name-q" 0 "$q > $T/$name.out"
	[ -z "$(lines "$name-q")" ] && echo "ok progress_quiet_$name" ||
		echo "not ok progress_quiet_$name: a progress line with -q"
	run "$name-pipe" 0 "$cmd 2>&1 > $T/$name.out | cat"
	[ -z "$(lines "$name-pipe")" ] && echo "ok progress_pipe_$name" ||
		echo "not ok progress_pipe_$name: a progress line in a pipe"
	# before the delay (60 s here, so that a loaded machine cannot pass it)
	run "$name-delay" 60 "$cmd > $T/$name.out"
	[ -z "$(lines "$name-delay")" ] && echo "ok progress_delay_$name" ||
		echo "not ok progress_delay_$name: a progress line before the delay"
done
# convert of a trace.dat copies its pages without decoding: a line too
if [ -e "$S/data/hip24/host-tsync.trace.dat" ]; then
	run pages 0 "$ks convert $S/data/hip24/host-tsync.trace.dat -o $T/conv.dat"
	got=$(lines pages | head -1)
	[[ $got == "convert: "* ]] && echo "ok progress_shown_convert_pages ($got)" ||
		echo "not ok progress_shown_convert_pages: no progress line copying a trace.dat's pages"
fi
# dump writes to the terminal as it reads: no line there
run dump-tty 0 "$ks dump $T/p.data"
[ -z "$(lines dump-tty)" ] && grep -q -a 'kvm_exit' "$T/dump-tty.tty" && echo "ok progress_dump_on_terminal" ||
	echo "not ok progress_dump_on_terminal: a progress line in the dump's own terminal output"
exit 0
