#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# stat_cli_test.sh - the kvmscope command line: help, man page, error
# messages on bad input, and the JSON/CSV/table outputs agreeing with perf.
set -u
ks=$KVMSCOPE
dir=$KS_TMP/stat-cli
mkdir -p "$dir"

check() { # name condition-result message
	if [ "$2" = 0 ]; then echo "ok $1"; else echo "not ok $1: $3"; fi
}

"$ks" --help > "$dir/help.txt"; rc=$?
grep -q '^  stat ' "$dir/help.txt" && grep -q '^  dump ' "$dir/help.txt"
check cli_help $(( rc || $? )) "kvmscope --help does not list stat and dump"

"$ks" stat --help > "$dir/shelp.txt"; rc=$?
grep -q -- '--format FMT' "$dir/shelp.txt" && grep -q -- '--by DIMS' "$dir/shelp.txt"
check cli_stat_help $(( rc || $? )) "kvmscope stat --help lacks options"

"$ks" nosuchcommand 2>/dev/null; rc=$?
check cli_unknown_command $(( rc != 2 )) "exit status $rc, expected 2"

"$ks" stat --by nonsense -i /dev/null 2>"$dir/err.txt"; rc=$?
check cli_usage_error $(( rc != 2 )) "exit status $rc for a bad --by"

# --poll-budget's number goes through the checked parser: no space, sign
# or bare point that strtod() would have taken, exit 2 with the option's line
bad=""
for v in ' 5' '+5' '.5' '5 ' '' 'nan' '101'; do
	"$ks" stat --event halt --poll-budget "$v" -i /dev/null 2>"$dir/err.txt"; rc=$?
	[ $rc = 2 ] && grep -q -- '--poll-budget takes a percentage from 0 to 100' "$dir/err.txt" ||
		bad="$bad '$v': status $rc;"
done
check cli_poll_budget_checked $(( ${#bad} != 0 )) "accepted or misreported:$bad"

w=$(man --warnings -l man/kvmscope-stat.1 2>&1 >/dev/null)
check man_page_renders $(( ${#w} != 0 )) "man warnings: $w"
man -l man/kvmscope-stat.1 2>/dev/null | grep -q 'DIFFERENCES FROM PERF'
check man_page_content $? "man page lacks its sections"

# Bad input: exit 1 and exactly one line "kvmscope: FILE: ...".
bad_input() { # name file pattern
	local out rc lines
	out=$("$ks" stat -i "$2" 2>&1 >/dev/null); rc=$?
	lines=$(printf '%s\n' "$out" | wc -l)
	if [ $rc -ne 1 ] || [ "$lines" -ne 1 ] || ! printf '%s' "$out" | grep -Eq "^kvmscope: $3"; then
		echo "not ok $1: status $rc, $lines lines: $out"
	else
		echo "ok $1"
	fi
}
bad_input error_missing_file "$dir/does-not-exist" "$dir/does-not-exist: cannot open"
: > "$dir/empty"
bad_input error_empty_file "$dir/empty" "$dir/empty: offset 0: "
head -c 4096 /dev/urandom | tr -d '\000' > "$dir/garbage"
printf '\000\001\002' >> "$dir/garbage"
bad_input error_garbage "$dir/garbage" "$dir/garbage: offset [0-9]+: "

if command -v perf >/dev/null && perf kvm stat record -a -o "$dir/tmpl.data" sleep 0.1 >/dev/null 2>&1; then
	size=$(stat -c %s "$dir/tmpl.data")
	for cut in 50 104 400 $((size / 2)) $((size - 9)); do
		head -c "$cut" "$dir/tmpl.data" > "$dir/trunc-$cut.data"
		bad_input "error_truncated_perfdata_$cut" "$dir/trunc-$cut.data" "$dir/trunc-$cut.data: offset [0-9]+: "
	done
	gen=$KS_BUILD/tools/gen-perfdata
	f=$dir/g.data
	if "$gen" --template "$dir/tmpl.data" -o "$f" --vendor amd --pairs 5000 --vms 2 --vcpus 3 --unmatched; then
		perf_total=$(perf kvm -i "$f" stat report 2>&1 | sed -n 's/^Total Samples:\([0-9]*\),.*/\1/p')
		"$ks" stat -i "$f" --json --by reason --by vm,vcpu > "$dir/g.json"
		"$ks" stat -i "$f" --csv --by reason --by vm,vcpu > "$dir/g.csv"
		"$ks" stat -i "$f" --by reason --by vm,vcpu --hist > "$dir/g.txt"
		if command -v python3 >/dev/null; then
			res=$(python3 - "$dir/g.json" "$dir/g.csv" "$perf_total" <<'PY'
import csv, json, sys
j = json.load(open(sys.argv[1]))
rows = [r for r in csv.DictReader(open(sys.argv[2])) if r["view"] != "begins"]
total = int(sys.argv[3])
errs = []
for v in j["views"]:
    s = sum(r["samples"] for r in v["rows"])
    if s != v["total_samples"] or s != total:
        errs.append("view %s: %d samples, total %d, perf %d" % (v["by"], s, v["total_samples"], total))
    ns = sum(r["total_ns"] for r in v["rows"])
    if ns != v["total_ns"]:
        errs.append("view %s: time sums differ" % v["by"])
    for r in v["rows"]:
        if not (r["min_ns"] <= r["p50_ns"] <= r["p99_ns"] <= r["max_ns"]):
            errs.append("row %s: percentiles out of order" % r)
if len(rows) != sum(len(v["rows"]) for v in j["views"]):
    errs.append("csv has %d rows" % len(rows))
vcpus = {(r["vm"], r["vcpu"]) for v in j["views"] if v["by"] == "vm,vcpu" for r in v["rows"]}
if len(vcpus) != 6:
    errs.append("expected 2 VMs x 3 vCPUs, got %s" % sorted(vcpus))
print("; ".join(errs))
PY
)
			check stat_json_csv_agree_with_perf $(( ${#res} != 0 )) "$res"
		else
			echo "skip stat_json_csv_agree_with_perf: python3 is not installed"
		fi
		grep -q "^Total: $perf_total samples" "$dir/g.txt"
		check stat_table_total_matches_perf $? "table total differs from perf's $perf_total"
	else
		echo "not ok stat_generated_input: gen-perfdata failed"
	fi
	# A large file (read through a mapping) cut short while being read:
	# exit 1 with one line, never a signal, whenever the cut lands.
	big=$dir/big.data
	if "$gen" --template "$dir/tmpl.data" -o "$big" --pairs 400000 --rounds --cpus 4; then
		hit=0 bad=""
		for delay in 0.005 0.01 0.02 0.04 0.08; do
			cp "$big" "$dir/cut.data"
			"$ks" stat -i "$dir/cut.data" --format perf > /dev/null 2> "$dir/cut.err" &
			pid=$!
			sleep "$delay"
			truncate -s $(( $(stat -c %s "$big") / 3 )) "$dir/cut.data"
			wait $pid; rc=$?
			lines=$(wc -l < "$dir/cut.err")
			if [ $rc -eq 1 ] && [ "$lines" -eq 1 ] &&
			   grep -Eq '^kvmscope: .*(changed while being read|ends early|offset [0-9]+)' "$dir/cut.err"; then
				hit=$((hit + 1))
			elif [ $rc -ne 0 ]; then
				bad="$bad delay $delay: status $rc, $lines lines: $(head -c 200 "$dir/cut.err");"
			fi
		done
		if [ -n "$bad" ]; then
			echo "not ok stat_file_cut_while_read:$bad"
		elif [ $hit -eq 0 ]; then
			echo "skip stat_file_cut_while_read: every run ended before the file was cut"
		else
			echo "ok stat_file_cut_while_read ($hit of 5 runs cut mid-read)"
		fi
		rm -f "$big" "$dir/cut.data"
	else
		echo "not ok stat_file_cut_while_read: gen-perfdata failed"
	fi
else
	echo "skip error_truncated_perfdata: perf kvm stat record is not available"
fi
