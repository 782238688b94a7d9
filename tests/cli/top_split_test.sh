#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# top_split_test.sh - top splits an exit that spans intervals across them:
# no row above 100% TIME, each vCPU's time in an interval is what its exits
# (trace-cmd 3.2's report of the file, an independent pairing in
# top_split.py) spent inside it, and over all intervals it adds up to
# stat's total (plus the exits open at the end or replaced).
set -u
ks=$KVMSCOPE
data=$KS_SHARED/data/hip24
dir=$KS_TMP/top-split
mkdir -p "$dir"
if [ ! -d "$data" ]; then
	echo "skip top_split: $data is absent"
	exit 0
fi
for f in host-2vcpu-22k host-tsync host-1vcpu-9k; do
	in=$data/$f.trace.dat
	rep=$data/expected/$f.report-ns.txt.gz
	[ -f "$in" ] && [ -f "$rep" ] || { echo "skip top_split_$f: $in or $rep is absent"; continue; }
	# the CSV of the issue: no row of any level above 100%
	"$ks" top -i "$in" --fast --csv > "$dir/$f.csv" 2> "$dir/err"
	over=$(python3 -c 'import csv,sys; print(sum(float(r["time_pct"]) > 100 for r in csv.DictReader(open(sys.argv[1]))))' "$dir/$f.csv")
	if [ "$over" = 0 ] && [ -s "$dir/$f.csv" ]; then
		echo "ok top_split_${f}_csv_within_100"
	else
		echo "not ok top_split_${f}_csv_within_100: $over rows above 100% $(head -1 "$dir/err")"
	fi
	"$ks" stat -i "$in" --json --by vm,vcpu > "$dir/$f.stat.json"
	for d in 1 0.5; do
		"$ks" top -i "$in" --fast --json -d $d > "$dir/$f.json" 2> "$dir/err"
		if out=$(python3 tests/cli/top_split.py "$dir/$f.json" "$rep" "$dir/$f.stat.json" 2>&1); then
			echo "ok top_split_${f}_d$d: $out"
		else
			echo "not ok top_split_${f}_d$d: $out"
		fi
	done
done
