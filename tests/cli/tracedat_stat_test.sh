#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# tracedat_stat_test.sh - kvmscope stat on the real hip24 recordings.
#
# Oracle: hip24/expected/*.report-ns.txt.gz, trace-cmd 3.2's own report of
# each file.  An awk program computes, from that text alone, the exit ->
# next-entry accounting per host thread (a thread counts from its first
# kvm_entry on) and the per-reason count and total time; kvmscope stat must
# give the same on the binary trace.dat (zlib v7) and on the report text.
set -u
ks=$KVMSCOPE
data=$KS_SHARED/data/hip24
dir=$KS_TMP/tracedat-stat
mkdir -p "$dir"
if [ ! -d "$data" ]; then
	echo "skip tracedat_stat: $data is absent (../shared is not beside the project)"; exit 0
fi

expect_from_text() {
	gawk '
	match($0, /^ *(.*)-([0-9]+) +\[[0-9]+\] *([0-9.]+): +(kvm_exit|kvm_entry): +(.*)$/, m) {
		tid = m[2]; ts = m[3]; ev = m[4]
		if (index(ts, ".")) { split(ts, p, "."); ns = p[1] * 1000000000 + p[2] } else ns = ts + 0
		if (ev == "kvm_entry") {
			if (!(tid in known)) { known[tid] = 1; next }
			if (start[tid] != "") {
				d = ns - start[tid]
				if (d >= 0) { cnt[key[tid]]++; sum[key[tid]] += d }
				start[tid] = ""
			}
		} else if (tid in known) {
			split(m[5], f, " ")
			for (i = 1; i < length(f); i++) if (f[i] == "reason") r = f[i + 1]
			start[tid] = ns; key[tid] = r
		}
	}
	END { for (k in cnt) printf "%s %d %d\n", k, cnt[k], sum[k] }' | sort
}

ours() { # csv -> "reason count total_ns" for the by-reason view
	awk -F, 'NR > 1 && $1 == "reason" { printf "%s %d %d\n", $5, $6, $9 }' | sort
}

for name in host-tsync host-1vcpu-9k host-2vcpu-22k host-allkvm-rawtsc; do
	zcat "$data/expected/$name.report-ns.txt.gz" > "$dir/$name.txt"
	expect_from_text < "$dir/$name.txt" > "$dir/$name.expect"
	n=$(awk '{ s += $2 } END { print s + 0 }' "$dir/$name.expect")
	if ! "$ks" stat -i "$data/$name.trace.dat" --csv > "$dir/$name.csv" 2> "$dir/$name.err"; then
		echo "not ok tracedat_stat[$name]: $(head -1 "$dir/$name.err")"
	elif ! ours < "$dir/$name.csv" | diff "$dir/$name.expect" - > "$dir/$name.diff"; then
		echo "not ok tracedat_stat[$name]: differs from trace-cmd's report: $(head -6 "$dir/$name.diff" | tr '\n' '|')"
	else
		echo "ok tracedat_stat[$name]: $n exits, every reason's count and time as computed from trace-cmd's report"
	fi
	if ! "$ks" stat -i "$dir/$name.txt" --csv > "$dir/$name.text.csv" 2> "$dir/$name.text.err"; then
		echo "not ok text_stat[$name]: $(head -1 "$dir/$name.text.err")"
	elif ! ours < "$dir/$name.text.csv" | diff "$dir/$name.expect" - > "$dir/$name.text.diff"; then
		echo "not ok text_stat[$name]: differs: $(head -6 "$dir/$name.text.diff" | tr '\n' '|')"
	else
		echo "ok text_stat[$name]: report text gives the same $n exits"
	fi
done
