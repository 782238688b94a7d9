#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# convert_test.sh - kvmscope convert, checked by trace-cmd and perf.
#
# Oracles:
#  - hip24: `trace-cmd report -t` (Debian's 3.1.6, which cannot read the zlib
#    originals) on the converted v7 zstd, v7 uncompressed and v6 files must
#    equal hip24/expected/*.report-ns.txt.gz (made by trace-cmd 3.2 from the
#    originals) line for line.
#  - zlib output (which Debian's trace-cmd cannot open) is read back by
#    `kvmscope dump -t` and compared with the same expected text.
#  - perf.data made by tools/gen-perfdata from a real `perf kvm stat record`
#    template: `trace-cmd report -N -t` on the converted file shows exactly
#    the events of `perf script --ns` (comm, tid, cpu, ns time, event,
#    fields; both printed by libtraceevent without plugins), and
#    `kvmscope stat` prints the same by-reason table on both files.
#  - error handling: bad arguments exit 2, unreadable input exits 1 with one line.
set -u
ks=$KVMSCOPE
data=$KS_SHARED/data/hip24
dir=$KS_TMP/convert
mkdir -p "$dir"

have() { command -v "$1" >/dev/null 2>&1; }

# hip24_case FILE VERSION COMPRESSION PATH: PATH is how convert must copy
# the events: "pages" (the ring-buffer pages as stored) or "events" (decoded
# and written again: a guest file whose times its TimeShift moves)
hip24_case() {
	local b=$1 v=$2 c=$3 out="$dir/$1-v$2-$3.dat" name="convert_hip24_${1}_v$2_$3" how
	if ! "$ks" convert -i "$data/$b.trace.dat" -o "$out" --file-version "$v" --compression "$c" 2>"$dir/err"; then
		echo "not ok $name: $(head -1 "$dir/err")"; return
	fi
	how=events
	grep -q 'copied as pages' "$dir/err" && how=pages
	if [ "$how" != "$4" ]; then
		echo "not ok $name: copied as $how, not as $4: $(head -1 "$dir/err")"; return
	fi
	zcat "$data/expected/$b.report-ns.txt.gz" > "$dir/$b.expected"
	if [ "$c" = zlib ]; then
		"$ks" dump -t -i "$out" > "$dir/$b.got" 2>&1
	else
		trace-cmd report -t "$out" > "$dir/$b.got" 2>/dev/null
	fi
	if cmp -s "$dir/$b.expected" "$dir/$b.got"; then
		echo "ok $name ($(wc -l < "$dir/$b.got") lines)"
	else
		echo "not ok $name: $(diff "$dir/$b.expected" "$dir/$b.got" | grep -c '^[<>]') lines differ, first: $(diff "$dir/$b.expected" "$dir/$b.got" | sed -n 2p)"
	fi
}

if [ ! -d "$data" ]; then
	echo "skip convert_hip24: $data is absent"
elif ! have trace-cmd; then
	echo "skip convert_hip24: trace-cmd is not installed"
else
	for b in host-tsync host-allkvm-rawtsc host-6.8rt-empty; do
		hip24_case "$b" 7 zstd pages
	done
	hip24_case guest-tsync 7 zstd events
	hip24_case host-tsync 7 none pages
	hip24_case host-tsync 6 none pages
	hip24_case host-allkvm-rawtsc 6 none pages
	hip24_case host-tsync 7 zlib pages
fi

# A recording whose kallsyms block is damaged (it is read only when first
# needed): convert must fail naming it, not write a copy without symbols.
if [ -r "$data/host-tsync.trace.dat" ]; then
	python3 - "$data/host-tsync.trace.dat" "$dir/kcorrupt.dat" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
at = len(d) // 2  # inside the kallsyms section (test_tracedat.c: t_corrupt_kallsyms_late)
for i in range(64):
    d[at + i] ^= (0x5a + i) & 0xff
open(sys.argv[2], 'wb').write(d)
PY
	"$ks" convert -i "$dir/kcorrupt.dat" -o "$dir/kcorrupt-out.dat" 2> "$dir/kerr"
	rc=$?
	if [ "$rc" -eq 1 ] && [ "$(wc -l < "$dir/kerr")" -eq 1 ] && grep -q 'corrupt zlib block' "$dir/kerr" &&
	   [ ! -e "$dir/kcorrupt-out.dat" ]; then
		echo "ok convert_damaged_kallsyms (exit 1, no output: $(cat "$dir/kerr"))"
	else
		echo "not ok convert_damaged_kallsyms: status $rc, output $( [ -e "$dir/kcorrupt-out.dat" ] && echo written || echo absent), $(head -1 "$dir/kerr")"
	fi
fi

# perf script / trace-cmd report -N lines -> "comm|tid|cpu|ns|event|fields"
norm_perf() {
	sed -E 's/^ *(.*[^ ]) +([0-9]+) +\[([0-9]+)\] +([0-9]+\.[0-9]+): +[a-z0-9_]+:([a-z0-9_]+): *(.*[^ ]) *$/\1|\2|\3|\4|\5|\6/'
}
norm_tc() {
	grep -v '^cpus=' | sed -E 's/^ *(.*)-([0-9]+) +\[([0-9]+)\] +([0-9]+\.[0-9]+): +([a-z0-9_]+): *(.*[^ ]) *$/\1|\2|\3|\4|\5|\6/'
}

# The by-reason table of kvmscope stat, from its title to its "Total:" line
# (the first line names the file and format; what follows the table is
# about host threads, whose process ids a trace.dat does not carry).
stat_table() {
	sed -n '/^VM-EXIT by reason/,/^Total:/p'
}

perf_case() { # version compression
	local v=$1 c=$2 out="$dir/gen-v$1-$2.dat" name="convert_perfdata_v$1_$2"
	if ! "$ks" convert -q -i "$dir/gen.data" -o "$out" --file-version "$v" --compression "$c" 2>"$dir/err"; then
		echo "not ok $name: $(head -1 "$dir/err")"; return
	fi
	trace-cmd report -N -t "$out" 2>/dev/null | norm_tc > "$dir/gen-$v-$c.tc"
	if ! cmp -s "$dir/gen.perf" "$dir/gen-$v-$c.tc"; then
		echo "not ok $name: trace-cmd report differs from perf script: $(diff "$dir/gen.perf" "$dir/gen-$v-$c.tc" | sed -n 2p)"
		return
	fi
	"$ks" stat -i "$out" 2>&1 | stat_table > "$dir/gen-$v-$c.stat"
	if ! cmp -s "$dir/gen.stat" "$dir/gen-$v-$c.stat"; then
		echo "not ok $name: kvmscope stat differs between perf.data and trace.dat: $(diff "$dir/gen.stat" "$dir/gen-$v-$c.stat" | sed -n 2p)"
		return
	fi
	echo "ok $name ($(wc -l < "$dir/gen.perf") events)"
}

gen=$KS_BUILD/tools/gen-perfdata
if ! have perf || ! have trace-cmd; then
	echo "skip convert_perfdata: perf or trace-cmd is not installed"
elif ! perf kvm stat record -a -o "$dir/template.data" sleep 0.1 >/dev/null 2>&1; then
	echo "skip convert_perfdata: perf kvm stat record cannot record a template here"
elif ! "$gen" --template "$dir/template.data" -o "$dir/gen.data" --vendor intel --pairs 20000 --cpus 4 2>"$dir/err"; then
	echo "not ok convert_perfdata: gen-perfdata failed: $(head -1 "$dir/err")"
else
	perf script --ns -i "$dir/gen.data" 2>/dev/null | norm_perf > "$dir/gen.perf"
	"$ks" stat -i "$dir/gen.data" 2>&1 | stat_table > "$dir/gen.stat"
	if [ "$(wc -l < "$dir/gen.perf")" -lt 40000 ]; then
		echo "not ok convert_perfdata: perf script printed only $(wc -l < "$dir/gen.perf") events"
	else
		for vc in "7 zstd" "7 none" "6 none"; do perf_case $vc; done
		# a vCPU thread the kernel's saved cmdlines name otherwise (a
		# reused pid): perf script shows its COMM record's name, and so
		# must trace-cmd on the converted file
		tid=$(awk -F'|' '$1 == "CPU 0/KVM" { print $2; exit }' "$dir/gen.perf")
		if [ -z "$tid" ]; then
			echo "not ok convert_perfdata_renamed: no CPU 0/KVM thread in perf script's output"
		elif ! "$gen" --template "$dir/template.data" -o "$dir/gen.data" --vendor intel \
			--pairs 20000 --cpus 4 --extra-cmdline "$tid awk" 2>"$dir/err"; then
			echo "not ok convert_perfdata_renamed: gen-perfdata failed: $(head -1 "$dir/err")"
		else
			perf_case 7 zstd
			grep -q "|$tid|" "$dir/gen-7-zstd.tc" && ! grep -q "^awk|$tid|" "$dir/gen-7-zstd.tc" &&
				echo "ok convert_perfdata_renamed: thread $tid keeps its COMM name" ||
				echo "not ok convert_perfdata_renamed: thread $tid is named by the stale cmdline"
		fi
	fi
fi

# errors
"$ks" convert -i /nonexistent -o "$dir/x.dat" 2>"$dir/err"; rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l < "$dir/err")" -eq 1 ] && [ ! -e "$dir/x.dat" ]; then
	echo "ok convert_missing_input"
else
	echo "not ok convert_missing_input: status $rc, $(wc -l < "$dir/err") lines"
fi
"$ks" convert -i x --file-version 6 --compression zstd -o y 2>/dev/null; rc=$?
[ $rc -eq 2 ] && echo "ok convert_bad_args" || echo "not ok convert_bad_args: status $rc"
