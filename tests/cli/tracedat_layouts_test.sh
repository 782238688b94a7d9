#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# tracedat_layouts_test.sh - trace.dat buffer instances and the latency
# layout, checked by Debian's trace-cmd report.
#
# tools/gen-tracedat-layouts writes, with kvmscope's writer, files with a
# top-level buffer and two instances (v6, v7, v7 zstd, v7 zlib; timestamps
# that tie across buffers and CPUs) and latency-layout files holding a
# tracefs "trace" text.  Oracles:
#  - `trace-cmd report` and `report -t` on the instance files equal
#    `kvmscope dump` (-t) line for line (instance prefixes, merge order);
#  - latency: `trace-cmd report` prints "cpus=N", the stored text and a
#    newline; v7 exactly so.  Debian's trace-cmd 3.1.6 drops the first 8
#    bytes of a v6 latency text (it reads them as a trace clock size), so
#    the v6 check allows exactly that difference;
#  - zlib files (Debian's trace-cmd has no zlib) must dump like their zstd twins;
#  - `kvmscope stat` on a latency file equals `kvmscope stat` on its text;
#  - the per-buffer event counts written equal those trace-cmd shows.
set -u
ks=$KVMSCOPE
dir=$KS_TMP/tracedat_layouts
gen=$KS_BUILD/tools/gen-tracedat-layouts
mkdir -p "$dir"

if ! "$gen" tests/fixtures/x86-6.18 "$dir" 2>"$dir/gen.err"; then
	echo "not ok tracedat_layouts_generate: $(head -1 "$dir/gen.err")"
	exit 0
fi
echo "ok tracedat_layouts_generate"

same() { # name expected got
	if cmp -s "$2" "$3"; then
		echo "ok $1 ($(wc -l < "$3") lines)"
	else
		echo "not ok $1: $(diff "$2" "$3" | grep -c '^[<>]') lines differ, first: $(diff "$2" "$3" | sed -n 2p)"
	fi
}

have_tc=1
command -v trace-cmd >/dev/null 2>&1 || have_tc=0

for v in v6 v7 v7-zstd; do
	f=$dir/inst-$v.dat
	for t in "" -t; do
		name="tracedat_instances_${v}${t/-/_}"
		if [ $have_tc = 0 ]; then echo "skip $name: trace-cmd is not installed"; continue; fi
		trace-cmd report $t "$f" > "$dir/exp" 2>/dev/null
		"$ks" dump $t "$f" > "$dir/got" 2>&1
		same "$name" "$dir/exp" "$dir/got"
	done
done

# counts per buffer: written by the generator vs trace-cmd's prefixes
if [ $have_tc = 1 ]; then
	trace-cmd report "$dir/inst-v7.dat" 2>/dev/null | awk 'NR > 1 { n[$1 ~ /:$/ ? substr($1, 1, length($1) - 1) : "-"]++ }
		END { print "- " n["-"]; print "guest1 " n["guest1"]; print "a_longer_name " n["a_longer_name"] }' > "$dir/counts"
	same tracedat_instances_counts "$dir/inst-counts.txt" "$dir/counts"
fi

"$ks" dump -t "$dir/inst-v7-zstd.dat" > "$dir/zstd" 2>&1
"$ks" dump -t "$dir/inst-v7-zlib.dat" > "$dir/zlib" 2>&1
same tracedat_instances_zlib_like_zstd "$dir/zstd" "$dir/zlib"

# two files with instances: file names for top-level events, instance names
if [ $have_tc = 1 ]; then
	trace-cmd report -i "$dir/inst-v6.dat" -i "$dir/inst-v7.dat" > "$dir/exp" 2>/dev/null
	"$ks" dump "$dir/inst-v6.dat" "$dir/inst-v7.dat" > "$dir/got" 2>&1
	same tracedat_instances_two_files "$dir/exp" "$dir/got"
fi

for v in v7 v7-zstd; do
	name="tracedat_latency_${v/-/_}"
	if [ $have_tc = 0 ]; then echo "skip $name: trace-cmd is not installed"; continue; fi
	trace-cmd report "$dir/lat-$v.dat" > "$dir/exp" 2>/dev/null
	"$ks" dump "$dir/lat-$v.dat" > "$dir/got" 2>&1
	same "$name" "$dir/exp" "$dir/got"
done
if [ $have_tc = 1 ]; then
	# trace-cmd 3.1.6 skips 8 bytes of a v6 latency text: put them back
	trace-cmd report "$dir/lat-v6.dat" 2>/dev/null | awk -v head="$(head -c 8 "$dir/lat.txt")" \
		'NR == 2 { $0 = head $0 } { print }' > "$dir/exp"
	"$ks" dump "$dir/lat-v6.dat" > "$dir/got" 2>&1
	same tracedat_latency_v6 "$dir/exp" "$dir/got"
fi
{ echo "cpus=2"; cat "$dir/lat.txt"; echo; } > "$dir/exp"
"$ks" dump "$dir/lat-v7-zlib.dat" > "$dir/got" 2>&1
same tracedat_latency_v7_zlib "$dir/exp" "$dir/got"

"$ks" stat -i "$dir/lat.txt" 2>&1 | sed 1d > "$dir/exp"
for v in v6 v7-zstd; do
	"$ks" stat -i "$dir/lat-$v.dat" 2>&1 | sed 1d > "$dir/got"
	same "tracedat_latency_stat_${v/-/_}" "$dir/exp" "$dir/got"
done

if "$ks" dump "$dir/lat-v7.dat" "$dir/inst-v7.dat" > /dev/null 2>"$dir/err"; then
	echo "not ok tracedat_latency_two_files: accepted"
elif [ "$(wc -l < "$dir/err")" -eq 1 ]; then
	echo "ok tracedat_latency_two_files: $(cat "$dir/err")"
else
	echo "not ok tracedat_latency_two_files: $(wc -l < "$dir/err") error lines"
fi
