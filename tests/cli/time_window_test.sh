#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# time_window_test.sh - --time START,END and --time A%-B% (perf's syntax).
#
# Oracle: trace-cmd 3.2's `report -t` of the hip24 recordings
# (../shared/data/hip24/expected), whose lines in the window are picked by
# their timestamp field; `kvmscope dump -t --time` must print exactly those.
# A percentage window must equal the absolute window it stands for, and
# `stat --time` must count the kvm_exit lines of the window.
set -u
hip=$KS_SHARED/data/hip24
if [ ! -d "$hip/expected" ]; then
	echo "skip time_window: $hip/expected is absent"
	exit 0
fi
t=$KS_TMP
for name in host-2vcpu-22k host-tsync guest-only; do
	f=$hip/$name.trace.dat exp=$hip/expected/$name.report-ns.txt.gz
	zcat "$exp" | awk 'match($0, / [0-9]+\.[0-9]+: /) { print substr($0, RSTART + 1, RLENGTH - 3) }' \
		> "$t/$name.ts"
	first=$(head -1 "$t/$name.ts") last=$(tail -1 "$t/$name.ts")
	# a window from 30% to 60% of the span, in seconds with 9 decimals
	read -r a b < <(awk -v f="$first" -v l="$last" 'BEGIN { s = l - f;
		printf "%.9f %.9f\n", f + 0.3 * s, f + 0.6 * s }')
	# an event's continuation lines (no timestamp) go with it
	zcat "$exp" | awk -v a="$a" -v b="$b" 'NR == 1 { next }
		match($0, / [0-9]+\.[0-9]+: /) { ts = substr($0, RSTART + 1, RLENGTH - 3) + 0;
			in_w = ts >= a && ts <= b }
		in_w' > "$t/$name.want"
	"$KVMSCOPE" dump -t --time "$a,$b" "$f" | tail -n +2 > "$t/$name.got"
	n=$(wc -l < "$t/$name.want")
	if [ "$n" -gt 100 ] && cmp -s "$t/$name.want" "$t/$name.got"; then
		echo "ok time_window dump $name $a,$b ($n events, as trace-cmd's lines of the window)"
	else
		echo "not ok time_window dump $name $a,$b: $n lines expected, $(wc -l < "$t/$name.got") printed"
	fi
	# open ends
	"$KVMSCOPE" dump -t --time "$a," "$f" | tail -n +2 | grep -c ' [0-9]*\.[0-9]*: ' > "$t/$name.open"
	want=$(awk -v a="$a" '$1 + 0 >= a' "$t/$name.ts" | wc -l)
	if [ "$want" -eq "$(cat "$t/$name.open")" ]; then
		echo "ok time_window dump $name $a, (open end: $want events)"
	else
		echo "not ok time_window dump $name $a,: $want expected, $(cat "$t/$name.open")"
	fi
	# stat: the kvm_exit lines of the window (JSON begin_counts)
	exits=$(grep -c ': kvm_exit: ' "$t/$name.want")
	got=$(timeout 60 "$KVMSCOPE" stat --json --time "$a,$b" -i "$f" 2>/dev/null | python3 -c '
import json, sys
print(json.load(sys.stdin)["begin_counts"]["total"])' 2>&1)
	if [ "$exits" -gt 0 ] && [ "$got" = "$exits" ]; then
		echo "ok time_window stat $name ($exits exits in the window)"
	elif [ "$exits" -eq 0 ]; then
		echo "ok time_window stat $name (no exits in the file)"
	else
		echo "not ok time_window stat $name: trace-cmd shows $exits kvm_exit lines, stat counted '$got'"
	fi
done
# merge: the window in host time; trace-cmd 3.2's merged report of the
# host+guest pair, its lines in the window, is the oracle
exp=$hip/expected/merged-tsync.report-ns.txt.gz
if [ -f "$exp" ]; then
	a=22150.5 b=22151.2
	zcat "$exp" | awk -v a="$a" -v b="$b" '/: cpus=[0-9]+$/ { next }
		match($0, / [0-9]+\.[0-9]+: /) { ts = substr($0, RSTART + 1, RLENGTH - 3) + 0;
			in_w = ts >= a && ts <= b }
		in_w' > "$t/merge.want"
	"$KVMSCOPE" merge -t --time "$a,$b" -i "$hip/host-tsync.trace.dat" \
		-i "$hip/guest-tsync.trace.dat" | grep -v ': cpus=[0-9]*$' > "$t/merge.got"
	n=$(wc -l < "$t/merge.want")
	if [ "$n" -gt 100 ] && cmp -s "$t/merge.want" "$t/merge.got"; then
		echo "ok time_window merge $a,$b ($n lines, as trace-cmd's merged lines of the window)"
	else
		echo "not ok time_window merge $a,$b: $n lines expected, $(wc -l < "$t/merge.got") printed: $(diff "$t/merge.want" "$t/merge.got" | head -3 | tr '\n' '|')"
	fi
fi

# percentages: 30%-60% of the span is the absolute window above
f=$hip/host-2vcpu-22k.trace.dat
first=$(head -1 "$t/host-2vcpu-22k.ts") last=$(tail -1 "$t/host-2vcpu-22k.ts")
"$KVMSCOPE" dump -t --time 30%-60% "$f" | tail -n +2 > "$t/pct.got"
read -r a b < <(awk -v f="$first" -v l="$last" 'BEGIN { s = l - f;
	printf "%.9f %.9f\n", f + 0.3 * s, f + 0.6 * s }')
"$KVMSCOPE" dump -t --time "$a,$b" "$f" | tail -n +2 > "$t/abs.got"
# the percentage window is computed in integer nanoseconds: allow the one
# event that may sit on a rounded edge
d=$(diff "$t/pct.got" "$t/abs.got" | grep -c '^[<>]')
if [ -s "$t/pct.got" ] && [ "$d" -le 1 ]; then
	echo "ok time_window percent 30%-60% = $a,$b ($(wc -l < "$t/pct.got") events)"
else
	echo "not ok time_window percent 30%-60%: $d lines differ from $a,$b"
fi
"$KVMSCOPE" dump -t --time 10%/3 "$f" | tail -n +2 > "$t/slice.got"
"$KVMSCOPE" dump -t --time 20%-30% "$f" | tail -n +2 > "$t/slice.want"
if [ -s "$t/slice.got" ] && cmp -s "$t/slice.got" "$t/slice.want"; then
	echo "ok time_window percent 10%/3 = 20%-30%"
else
	echo "not ok time_window percent 10%/3 differs from 20%-30%"
fi
# mistakes are usage errors (exit 2, one line)
for bad in "5" "2,1" "a,b" "10%-5%" "0%/0" "1,2,3"; do
	"$KVMSCOPE" dump --time "$bad" "$f" > /dev/null 2> "$t/err"
	rc=$?
	if [ "$rc" -eq 2 ] && [ "$(wc -l < "$t/err")" -eq 1 ] && grep -q -- '--time' "$t/err"; then
		echo "ok time_window rejects '$bad'"
	else
		echo "not ok time_window '$bad': exit $rc, $(cat "$t/err")"
	fi
done
