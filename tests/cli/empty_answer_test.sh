#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# empty_answer_test.sh - a recording without KVM events (an idle host, a
# guest's own trace) is a normal input: exit 0, an empty table, a valid JSON
# document, a CSV header, and one line on stderr saying what the file holds.
# The oracle: perf kvm stat report prints its empty table and exits 0 on a
# perf.data of zero samples and on one of other tracepoints only.
set -u
ks=$KVMSCOPE
d=$KS_TMP/empty
H=$KS_SHARED/data/hip24
mkdir -p "$d"

inputs=()
if command -v perf >/dev/null && perf kvm stat record -a -o "$d/idle.data" sleep 0.1 >/dev/null 2>&1; then
	inputs+=("$d/idle.data")
	# the oracle itself: perf's empty table, exit 0
	perf kvm -i "$d/idle.data" stat report > /dev/null 2> "$d/perf.txt"; rc=$?
	"$ks" stat -i "$d/idle.data" --format perf 2>/dev/null > "$d/ks.txt"
	block() { sed -n '/^Analyze events/,/^Total Samples/p' "$1"; }
	if [ $rc = 0 ] && diff <(block "$d/perf.txt") <(block "$d/ks.txt") > /dev/null &&
	   grep -q '^Total Samples:0,' "$d/ks.txt"; then
		echo "ok empty_perf_format: perf's empty table, byte for byte"
	else
		echo "not ok empty_perf_format: perf exit $rc; $(diff <(block "$d/perf.txt") <(block "$d/ks.txt") | head -4 | tr '\n' '|')"
	fi
else
	echo "skip empty_perf_format: perf kvm stat record is not available here"
fi
# ftrace's header and no event: `cat trace` on an idle host
printf '# tracer: nop\n#\n# entries-in-buffer/entries-written: 0/0   #P:2\n#\n' > "$d/idle.txt"
inputs+=("$d/idle.txt")
[ -f "$H/host-6.8rt-empty.trace.dat" ] && inputs+=("$H/host-6.8rt-empty.trace.dat")
[ -f "$H/guest-only.trace.dat" ] && inputs+=("$H/guest-only.trace.dat")
if [ ${#inputs[@]} = 0 ]; then
	echo "skip empty_answer: no input without KVM events here"
	exit 0
fi

# run NAME CHECK ARGS...: exit 0, one stderr line naming the file and "no
# KVM events" (never advice to record what an idle host recorded), and
# CHECK (json|csv|table) holding for standard output.
run() {
	local name=$1 check=$2 rc lines ok=1 why=""
	shift 2
	"$ks" "$@" > "$d/out" 2> "$d/err"; rc=$?
	lines=$(wc -l < "$d/err")
	[ $rc = 0 ] || { ok=0; why="exit $rc"; }
	[ "$lines" = 1 ] && grep -qF "$f: no KVM events" "$d/err" || { ok=0; why="$why; stderr: $(head -2 "$d/err" | tr '\n' '|')"; }
	# perf kvm stat record made the idle recording: not the advice
	[ "$f" != "$d/idle.data" ] || ! grep -q 'kvm stat record' "$d/err" || { ok=0; why="$why; advises the command used"; }
	case $check in
	json) python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])] if sys.argv[2] == "lines" else json.load(open(sys.argv[1]))' \
		"$d/out" "${JSONL:-doc}" 2>/dev/null || { ok=0; why="$why; not JSON"; } ;;
	csv) [ "$(wc -l < "$d/out")" = 1 ] && head -1 "$d/out" | grep -q ',' || { ok=0; why="$why; not a CSV header alone"; } ;;
	table) grep -q "$TABLE" "$d/out" || { ok=0; why="$why; no '$TABLE' in the table"; } ;;
	file) python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$FILE" 2>/dev/null || { ok=0; why="$why; $FILE is not JSON"; } ;;
	esac
	if [ $ok = 1 ]; then echo "ok $name"; else echo "not ok $name: kvmscope $*: $why"; fi
}

for f in "${inputs[@]}"; do
	b=$(basename "$f")
	TABLE='^Total: 0 samples' run "empty_stat_table $b" table stat -i "$f"
	run "empty_stat_json $b" json stat -i "$f" --json
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(any(v["rows"] for v in j["views"]))' "$d/out" ||
		echo "not ok empty_stat_json_rows $b: rows in an empty answer"
	run "empty_stat_csv $b" csv stat -i "$f" --csv
	TABLE='^# Samples: 0' run "empty_report $b" table report -i "$f"
	run "empty_report_json $b" json report -i "$f" --json
	FILE=$d/t.json run "empty_timeline_json $b" file timeline -i "$f" --json "$d/t.json"
	run "empty_pmu_json $b" json pmu -i "$f" --json
done
