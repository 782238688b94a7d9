#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# report_test.sh - kvmscope report end to end.
#  - real data: the kvm_exit rips of hip24/host-tsync.trace.dat resolved
#    against the kallsyms stored in guest-tsync.trace.dat, for that guest's
#    vCPU thread only; checked row by row against report_oracle.py, which
#    works from trace-cmd's own report text and a kallsyms extracted by
#    tests/symbols/tracedat_kallsyms.py (both independent of kvmscope).
#  - the SVG flame graph renders in headless Chromium (skipped if absent).
# Env: KVMSCOPE, KS_SHARED, KS_TMP (see tests/run.sh).
KVMSCOPE=${KVMSCOPE:-build/kvmscope}
KS_SHARED=${KS_SHARED:-../shared}
KS_TMP=${KS_TMP:-/tmp}
T=$KS_TMP/report_test.$$
mkdir -p "$T"
D=$KS_SHARED/data/hip24
HOST=$D/host-tsync.trace.dat
GUEST=$D/guest-tsync.trace.dat
EXP=$D/expected/host-tsync.report-ns.txt.gz

if [ ! -f "$HOST" ] || [ ! -f "$GUEST" ] || [ ! -f "$EXP" ]; then
	echo "skip report_real_tsync: $D not present"
else
	python3 tests/symbols/tracedat_kallsyms.py "$GUEST" > "$T/kallsyms" &&
	python3 tests/cli/report_oracle.py "$EXP" "$T/kallsyms" 483882 > "$T/expected" &&
	"$KVMSCOPE" report "$HOST" --guest-trace "$GUEST" --by vm --offsets --csv > "$T/csv" &&
	awk -F, 'NR > 1 { if ($1 == "samples") { $4 = ""; $11 = ""; $12 = ""; $13 = "" }
		print $1","$2","$4","$5","$6","$7","$8","$10","$12","$13 }' "$T/csv" |
		sort > "$T/got"
	if [ ! -s "$T/expected" ]; then
		echo "not ok report_real_tsync: the oracle produced nothing"
	elif cmp -s "$T/expected" "$T/got"; then
		echo "ok report_real_tsync ($(wc -l < "$T/got") rows match the oracle)"
	else
		echo "not ok report_real_tsync: differs from the oracle:"
		diff "$T/expected" "$T/got" | head -10 | sed 's/^/#   /'
	fi
	# the issue's two examples, by name
	out=$("$KVMSCOPE" report "$HOST" --guest-trace "$GUEST" --offsets)
	if echo "$out" | grep -q "EPT_MISCONFIG .* iowrite16+0x9$" &&
	   echo "$out" | grep -q "APIC_WRITE .* native_apic_mem_write+0x8$"; then
		echo "ok report_real_examples"
	else
		echo "not ok report_real_examples: iowrite16+0x9 / native_apic_mem_write+0x8 missing"
	fi
	# the other VM has no symbols: [unknown], never dropped
	n=$("$KVMSCOPE" report "$HOST" --guest-trace "$GUEST" --by vm --csv |
		awk -F, '$1 == "samples" && $2 != 483882 && $7 == "[unknown]" { s += $10 } END { print s + 0 }')
	want=$(zcat "$EXP" | grep kvm_exit | grep -vc -- "-483882 ")
	if [ "$n" = "$want" ]; then
		echo "ok report_other_vm_unknown ($n samples)"
	else
		echo "not ok report_other_vm_unknown: $n samples, expected $want"
	fi
	# JSON goes through the JSON writer and parses
	if "$KVMSCOPE" report "$HOST" --guest-trace "$GUEST" --json |
	   python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["samples"] == sum(r["samples"] for r in d["rows"])'; then
		echo "ok report_json"
	else
		echo "not ok report_json: invalid JSON or totals differ"
	fi
	# folded stacks add up to the samples
	"$KVMSCOPE" report "$HOST" --guest-trace "$GUEST" --folded "$T/folded" > /dev/null
	s=$(awk '{ s += $NF } END { print s + 0 }' "$T/folded")
	want=$(zcat "$EXP" | grep -c kvm_exit)
	if [ "$s" = "$want" ] && grep -q "native_apic_mem_write_\[k\] " "$T/folded"; then
		echo "ok report_folded"
	else
		echo "not ok report_folded: $s samples, expected $want"
	fi
	# identical stacks are one line (stacks kept per address resolve to
	# the same frames: e1000_update_stats was 58 lines)
	dup=$(sed 's/ [0-9]*$//' "$T/folded" | sort | uniq -d | head -1)
	if [ -z "$dup" ] && [ "$(grep -c 'e1000_update_stats_\[k\] ' "$T/folded")" -eq 1 ]; then
		echo "ok report_folded_merged ($(wc -l < "$T/folded") distinct stacks)"
	else
		echo "not ok report_folded_merged: repeated stack '$dup'"
	fi
	# -s dso: the columns of the sort key only (as perf report -s dso), and
	# each DSO's samples are the sum of its symbols' rows in the default table
	# (the host has two VMs: both tables have the VM column by default)
	"$KVMSCOPE" report "$HOST" --guest-trace "$GUEST" > "$T/by_sym"
	"$KVMSCOPE" report "$HOST" --guest-trace "$GUEST" -s dso > "$T/by_dso"
	# (a VM's display name PID(NAME) may hold spaces: its name is dropped)
	sum_sym=$(awk '/^# Exits/ { exit } /^ +[0-9.]+% / { sub(/\([^)]*\)/, ""); n[$3 " " $4 " " $5] += $2 }
		END { for (k in n) print k, n[k] }' "$T/by_sym" | sort)
	sum_dso=$(awk '/^# Exits/ { exit } /^ +[0-9.]+% / { sub(/\([^)]*\)/, ""); print $3, $4, $5, $2 }' "$T/by_dso" | sort)
	if grep -Eq '^# Overhead  Samples  VM +Mode   DSO$' "$T/by_dso" && [ -n "$sum_dso" ] &&
	   [ "$sum_sym" = "$sum_dso" ] && ! sed -n '/^# Exits/q;p' "$T/by_dso" | grep -q ' $'; then
		echo "ok report_sort_dso"
	else
		echo "not ok report_sort_dso: '$(echo $sum_dso)' vs per-symbol sums '$(echo $sum_sym)'"
	fi
	# flame graph in headless Chromium
	"$KVMSCOPE" report "$HOST" --guest-trace "$GUEST" --flamegraph "$T/fg.svg" > /dev/null
	if ! python3 -c 'import sys,xml.dom.minidom as m; m.parse(sys.argv[1])' "$T/fg.svg"; then
		echo "not ok report_flamegraph_xml: not well-formed XML"
	else
		echo "ok report_flamegraph_xml"
	fi
	if [ ! -x /usr/bin/chromium ]; then
		echo "skip report_flamegraph_chromium: no /usr/bin/chromium"
	else
		prof=$(mktemp -d)
		timeout 60 /usr/bin/chromium --headless --no-sandbox --disable-gpu \
			--disable-background-networking --disable-component-update --disable-sync \
			--no-first-run --user-data-dir="$prof" --screenshot="$T/fg.png" \
			--window-size=1200,800 "file://$(realpath "$T/fg.svg")" > /dev/null 2>&1
		rm -rf "$prof"
		if [ -s "$T/fg.png" ] && python3 tests/cli/png_colours.py "$T/fg.png"; then
			echo "ok report_flamegraph_chromium"
		else
			echo "not ok report_flamegraph_chromium: no screenshot or a blank one"
		fi
	fi
fi
rm -rf "$T"
