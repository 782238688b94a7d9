#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# dump_test.sh - `kvmscope dump` must print what trace-cmd report prints.
#
# Oracles:
#  - hip24/expected/*.report-ns.txt.gz: `trace-cmd report -t` (trace-cmd 3.2)
#    of the zlib v7 recordings; every line must match.
#  - Debian's trace-cmd report on kvm-formats-zstd.trace.dat and on v6 / v7
#    uncompressed copies made by `trace-cmd convert`.
#  - guest-only.author-counts.txt: the thesis author's per-task counts, which
#    count the first word of every line of the report (incl. "cpus=1" and the
#    continuation lines of multi-line events).
#  - perf script on a gen-perfdata perf.data: same tid, cpu, event, text (-N).
set -u
ks=$KVMSCOPE
hip=$KS_SHARED/data/hip24
dir=$KS_TMP/dump-test
mkdir -p "$dir"
# libtraceevent 1.7 leaks a few bytes inside tep_parse_event() for some
# kernel formats: not ours, keep sanitizer builds (SAN=1) quiet about it.
printf 'leak:libtraceevent.so\n' > "$dir/lsan.supp"
export LSAN_OPTIONS="suppressions=$dir/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

for name in host-allkvm-rawtsc host-tsync host-1vcpu-9k host-2vcpu-22k host-6.8rt-empty \
	    guest-only guest-tsync; do
	f=$hip/$name.trace.dat exp=$hip/expected/$name.report-ns.txt.gz
	if [ ! -r "$f" ] || [ ! -r "$exp" ]; then echo "skip dump_$name: $f is absent"; continue; fi
	zcat "$exp" > "$dir/$name.want"
	if ! "$ks" dump -t "$f" > "$dir/$name.got" 2>"$dir/$name.err"; then
		echo "not ok dump_$name: exit status: $(head -1 "$dir/$name.err")"; continue
	fi
	bad=$(diff "$dir/$name.want" "$dir/$name.got" | grep -c '^<')
	total=$(wc -l < "$dir/$name.want")
	if [ "$bad" -eq 0 ] && [ "$total" -eq "$(wc -l < "$dir/$name.got")" ]; then
		echo "ok dump_$name ($total lines identical)"
	else
		echo "not ok dump_$name: $bad of $total lines differ; first: $(diff "$dir/$name.want" "$dir/$name.got" | sed -n 2p)"
	fi
done

# -i FILE works like a plain FILE
if [ -r "$hip/host-1vcpu-9k.trace.dat" ]; then
	if "$ks" dump -t -i "$hip/host-1vcpu-9k.trace.dat" | cmp -s - "$dir/host-1vcpu-9k.got"; then
		echo "ok dump_dash_i"
	else
		echo "not ok dump_dash_i: -i FILE prints something else than FILE"
	fi
fi

# the author's per-task counts
counts=$hip/guest-only.author-counts.txt
if [ -r "$counts" ] && [ -s "$dir/guest-only.got" ]; then
	{
		echo "Total count of all events: $(wc -l < "$dir/guest-only.got")"
		awk '{ n[$1]++ } END { for (k in n) print k ": " n[k] }' "$dir/guest-only.got" |
			sort -t: -k2 -nr
	} > "$dir/counts.got"
	# compare as sets: ties in the author's list are in no particular order
	if diff <(sort "$counts") <(sort "$dir/counts.got") > "$dir/counts.diff"; then
		echo "ok dump_author_counts ($(wc -l < "$counts") lines)"
	else
		echo "not ok dump_author_counts: $(head -3 "$dir/counts.diff" | tr '\n' ' ')"
	fi
else
	echo "skip dump_author_counts: guest-only data is absent"
fi

# Debian's trace-cmd on files it can read
z=$KS_SHARED/data/kvm-formats-zstd.trace.dat
if ! command -v trace-cmd >/dev/null; then
	echo "skip dump_trace_cmd: trace-cmd is not installed"
elif [ ! -r "$z" ]; then
	echo "skip dump_trace_cmd: $z is absent"
else
	trace-cmd convert --file-version 6 --compression none -i "$z" -o "$dir/v6.dat" >/dev/null 2>&1
	trace-cmd convert --compression none -i "$z" -o "$dir/v7none.dat" >/dev/null 2>&1
	for f in "$z" "$dir/v6.dat" "$dir/v7none.dat"; do
		n=$(basename "$f")
		for t in "" -t; do
			trace-cmd report $t "$f" > "$dir/tc.txt" 2>/dev/null
			if ! "$ks" dump $t "$f" > "$dir/ks.txt" 2>"$dir/ks.err"; then
				echo "not ok dump_tc_$n$t: $(head -1 "$dir/ks.err")"
			elif cmp -s "$dir/tc.txt" "$dir/ks.txt" && [ -s "$dir/tc.txt" ]; then
				echo "ok dump_tc_$n$t"
			else
				echo "not ok dump_tc_$n$t: differs from trace-cmd report: $(diff "$dir/tc.txt" "$dir/ks.txt" | head -3 | tr '\n' ' ')"
			fi
		done
	done
fi

# perf.data input: same tid, cpu, event and text as perf script (raw formats)
gen=$KS_BUILD/tools/gen-perfdata
if ! command -v perf >/dev/null || [ ! -x "$gen" ]; then
	echo "skip dump_perfdata: perf or gen-perfdata is missing"
elif ! perf kvm stat record -a -o "$dir/tmpl.data" sleep 0.1 >/dev/null 2>&1; then
	echo "skip dump_perfdata: perf kvm stat record failed here"
elif ! "$gen" --template "$dir/tmpl.data" -o "$dir/g.data" --pairs 300 --seed 5 >/dev/null 2>&1; then
	echo "not ok dump_perfdata: gen-perfdata failed"
else
	perf script -i "$dir/g.data" -F tid,cpu,event,trace 2>/dev/null |
		sed -E 's/^ *([0-9]+) \[([0-9]+)\] [^:]*:([^:]*): /\1 \2 \3 /' > "$dir/ps.txt"
	"$ks" dump -N "$dir/g.data" 2>"$dir/ks.err" | tail -n +2 |
		sed -E 's/^.{16}-([0-9]+) *\[([0-9]+)\] +[0-9.]+: ([^:]*): +/\1 \2 \3 /' > "$dir/kp.txt"
	if [ -s "$dir/ps.txt" ] && cmp -s "$dir/ps.txt" "$dir/kp.txt"; then
		echo "ok dump_perfdata ($(wc -l < "$dir/ps.txt") events as perf script)"
	else
		echo "not ok dump_perfdata: $(diff "$dir/ps.txt" "$dir/kp.txt" | head -3 | tr '\n' ' ') $(head -1 "$dir/ks.err")"
	fi
fi

# errors are one line naming the file and an offset, exit status 1
printf '\x17\x08\x44tracing7\0\0\x08' > "$dir/short.dat"
out=$("$ks" dump "$dir/short.dat" 2>&1); rc=$?
if [ "$rc" -eq 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] &&
   [[ "$out" == "kvmscope: $dir/short.dat: offset "* ]]; then
	echo "ok dump_error_line"
else
	echo "not ok dump_error_line: status $rc: $out"
fi
