#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# memory_budget_test.sh - report and timeline keep what grows with the input
# within --limit tables=SIZE (issue 33): past it the profile's entries and
# stacks and the timeline's intervals go to a temporary file in $TMPDIR.
#
# On two generated trace.dat files, about 0.3 M and 1.2 M events (random
# guest rips: about one profile entry per exit), with --limit tables=1M:
#  - peak RSS (bench/measure, getrusage of the child) does not grow with
#    the input: the larger file costs at most 8 MB more than the smaller
#    (the code before the limit grew by 25-170 MB there, and refuses the
#    option); and report --offsets within 96 MB at the default budget
#    (257 MB before; 160 MB under AddressSanitizer);
#  - the answers do not change: each output with tables=1M (spilled, on
#    the smaller file) is
#    byte for byte that of tables=1G (all in memory, the code path the
#    perf and trace-cmd oracle tests check); report --offsets keeps its
#    top rows exactly and folds the rest into one [other] row whose counts
#    are the sum of the folded rows (computed here with awk), and says so;
#  - the temporary file is made in $TMPDIR: one that cannot be written
#    fails the run with a message naming it.
# timeout: 300
set -u
ks=${KVMSCOPE:?}
. "$(dirname "$0")/../lib/gen.sh"
gen_setup memory-budget memory_budget
for n in 125000 500000; do
	if ! "$gen" --template "$dir/tmpl.data" -o "$dir/$n.data" --pairs $n --vms 2 --vcpus 4 --rounds ||
	   ! "$ks" convert -q -i "$dir/$n.data" -o "$dir/$n.dat"; then
		echo "not ok memory_budget: cannot generate the inputs"
		exit 0
	fi
	rm -f "$dir/$n.data"
done
small=$dir/125000.dat big=$dir/500000.dat
# Under AddressSanitizer (make check SAN=1) freed memory waits in a
# quarantine, which would count as growth: measured without it.  Its
# shadow memory and redzones add about half to the default-budget bound.
export ASAN_OPTIONS="quarantine_size_mb=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
bound_mb=$(asan_bound 96)

# rss FILE ARGS...: peak RSS in KB of kvmscope ARGS with @IN = FILE
rss() {
	local f=$1 r
	shift
	r=$("$measure" -n 1 -- "$ks" "${@//@IN/$f}" --limit tables=1M)
	case $r in *status=0*) ;; *) echo "-1"; return ;; esac
	echo "$r" | sed -n 's/.*maxrss_kb=\([0-9]*\).*/\1/p'
}

check_flat() {
	local name=$1 a b
	shift
	a=$(rss "$small" "$@") b=$(rss "$big" "$@")
	if [ "$a" -lt 0 ] || [ "$b" -lt 0 ]; then
		echo "not ok memory_budget_flat $name: the command failed (or knows no --limit tables)"
	elif [ "$b" -le $((a + 8192)) ]; then
		echo "ok memory_budget_flat $name ($((a / 1024)) MB at 0.3 M events, $((b / 1024)) MB at 1.2 M)"
	else
		echo "not ok memory_budget_flat $name: $((a / 1024)) MB at 0.3 M events, $((b / 1024)) MB at 1.2 M (grows)"
	fi
}
check_flat report report -i @IN
check_flat report_offsets report --offsets -i @IN
check_flat timeline_text timeline -i @IN
check_flat timeline_html timeline -q -i @IN --html "$dir/t.html"
check_flat timeline_perfetto timeline -q -i @IN --perfetto "$dir/t.pb"

# With the default budget too: report --offsets on the larger file kept
# 240 MB of entries and rows before; now the entries spill past 48 MB.
r=$("$measure" -n 1 -- "$ks" report --offsets -i "$big")
kb=$(echo "$r" | sed -n 's/.*maxrss_kb=\([0-9]*\).*/\1/p')
case $r in
*status=0*)
	if [ "$kb" -le $((bound_mb * 1024)) ]; then
		echo "ok memory_budget_default_offsets ($((kb / 1024)) MB <= $bound_mb MB at 1.2 M events)"
	else
		echo "not ok memory_budget_default_offsets: $((kb / 1024)) MB > $bound_mb MB at 1.2 M events"
	fi ;;
*) echo "not ok memory_budget_default_offsets: $r" ;;
esac

# same [--name NAME] ARGS...: output and files of ARGS (@OUT: a file) with
# tables=1M and tables=1G are equal
same() {
	local name=$1 ok=1
	shift
	"$ks" "${@//@OUT/$dir/o1}" --limit tables=1M > "$dir/s1" 2> "$dir/e1" || ok=0
	"$ks" "${@//@OUT/$dir/o2}" --limit tables=1G > "$dir/s2" 2> "$dir/e2" || ok=0
	if [ $ok = 0 ]; then
		echo "not ok memory_budget_same $name: $(head -1 "$dir/e1") $(head -1 "$dir/e2")"
	elif ! cmp -s "$dir/s1" "$dir/s2" || { [ -e "$dir/o1" ] && ! cmp -s "$dir/o1" "$dir/o2"; }; then
		echo "not ok memory_budget_same $name: the spilled run answers otherwise"
		diff "$dir/s1" "$dir/s2" | head -4 | sed 's/^/#   /'
	else
		echo "ok memory_budget_same $name ($(wc -l < "$dir/s1") lines$([ -e "$dir/o1" ] && echo ", $(stat -c %s "$dir/o1") bytes written"))"
	fi
	rm -f "$dir/o1" "$dir/o2"
}
same report report -i "$small" --by vm,vcpu
same report_reason report -i "$small" -s reason --by vcpu
same report_folded report -i "$small" --folded @OUT
same report_json report -i "$small" --json
same timeline_text timeline -i "$small"
same timeline_html timeline -q -i "$small" --html @OUT
same timeline_perfetto timeline -q -i "$small" --perfetto @OUT
same timeline_json timeline -q -i "$small" --json @OUT --time 40%-60%
same timeline_window timeline -i "$small" --time 20%-70%

# report --offsets past the budget: the top rows as without it, the rest
# in [other] with their sums, and a note on stderr and under the table
"$ks" report --offsets --no-exits -i "$big" --limit tables=1M > "$dir/fold" 2> "$dir/fold.err"
"$ks" report --offsets --no-exits -i "$big" --limit tables=1G > "$dir/full"
r=$(awk '
	FNR == 1 { f++ }
	/^#/ { next }
	f == 1 && $NF == "[other]" { other = $2; next }
	f == 1 { kept++; top[kept] = $0; next }
	f == 2 { n++; if (n <= kept) { if (top[n] != $0) bad++ } else rest += $2 }
	END { printf "%d %d %s %s", kept, bad, other + 0, rest + 0 }' "$dir/fold" "$dir/full")
set -- $r
if [ "$1" -gt 0 ] && [ "$2" = 0 ] && [ "$3" = "$4" ] && [ "$3" -gt 0 ] &&
   grep -q "folded into one \[other\] row" "$dir/fold.err" &&
   grep -q "^# [0-9]* rows of the fewest samples folded into \[other\]" "$dir/fold"; then
	echo "ok memory_budget_offsets_other ($1 rows kept as without the budget, [other] = $3 samples = the rest)"
else
	echo "not ok memory_budget_offsets_other: kept $1, differing $2, [other] $3, the rest $4; $(head -1 "$dir/fold.err")"
fi

# the temporary file goes to $TMPDIR
if TMPDIR=$dir/missing "$ks" timeline -i "$big" --limit tables=1M > /dev/null 2> "$dir/err"; then
	echo "not ok memory_budget_tmpdir: spilling to a missing TMPDIR succeeded (not spilled there?)"
elif grep -q "cannot write a temporary file in $dir/missing" "$dir/err"; then
	echo "ok memory_budget_tmpdir ($(head -1 "$dir/err" | cut -c1-90))"
else
	echo "not ok memory_budget_tmpdir: $(head -1 "$dir/err")"
fi
mkdir -p "$dir/tmp"
TMPDIR=$dir/tmp "$ks" report -i "$big" --limit tables=1M > /dev/null 2>&1
if [ -z "$(ls -A "$dir/tmp")" ]; then
	echo "ok memory_budget_tmpdir_clean (nothing left in TMPDIR)"
else
	echo "not ok memory_budget_tmpdir_clean: $(ls "$dir/tmp" | head -3)"
fi
