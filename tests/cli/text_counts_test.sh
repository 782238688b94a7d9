#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# text_counts_test.sh - kvmscope stat on the thesis author's kvm_exit texts
# (hip24/text: trace-cmd report lines of kvm_exit only) must reproduce the
# author's own per-reason tables ('REASON': N times) in *_results.md, and the
# kvm_exit total of the author's event table for the "normal" run.  (The
# taskset results belong to another run, says MANIFEST.txt: not an oracle.)
set -u
ks=$KVMSCOPE
text=$KS_SHARED/data/hip24/text
dir=$KS_TMP/text-counts
mkdir -p "$dir"
if [ ! -d "$text" ]; then
	echo "skip text_counts: $text is absent (../shared is not beside the project)"; exit 0
fi
for pair in default__kvm_exit_default_results.md:default__kvm_exit_default_log.txt \
	    vapic__kvm_exit_vapic_results.md:vapic__kvm_exit_vapic.txt; do
	res=${pair%%:*}; log=${pair#*:}; name=${res%%__*}
	sed -n "s/^'\([A-Z_]*\)': \([0-9]*\) times/\1 \2/p" "$text/$res" | awk '$2 > 0' | sort > "$dir/$name.author"
	total=$(sed -n 's/^Total exits: \([0-9]*\)\./\1/p' "$text/$res")
	if ! "$ks" stat -i "$text/$log" --csv > "$dir/$name.csv" 2> "$dir/$name.err"; then
		echo "not ok text_counts[$name]: $(head -1 "$dir/$name.err")"; continue
	fi
	awk -F, '$1 == "begins" { print $5, $6 }' "$dir/$name.csv" | sort > "$dir/$name.ours"
	ours_total=$(awk '{ s += $2 } END { print s + 0 }' "$dir/$name.ours")
	if ! diff "$dir/$name.author" "$dir/$name.ours" > "$dir/$name.diff"; then
		echo "not ok text_counts[$name]: differs from the author's table: $(tr '\n' '|' < "$dir/$name.diff")"
	elif [ "$ours_total" != "$total" ]; then
		echo "not ok text_counts[$name]: total $ours_total, the author's $total"
	else
		echo "ok text_counts[$name]: $total exits, every reason as in the author's table"
	fi
done

# The author's event table: "| kvm_exit | 13.173 |" (German thousands dot).
want=$(sed -n 's/^| kvm_exit | \([0-9.]*\) |$/\1/p' "$text/normal__events__events_host_report.md" | tr -d .)
got=$("$ks" stat -i "$text/normal__kvm_exits__kvm_exit_count.txt" --csv | awk -F, '$1 == "begins" { s += $6 } END { print s + 0 }')
if [ -n "$want" ] && [ "$got" = "$want" ]; then
	echo "ok text_counts[normal]: $got kvm_exit events, as in the author's event table"
else
	echo "not ok text_counts[normal]: $got kvm_exit events, the author's table says '$want'"
fi
