#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# gen_perfdata_test.sh - checks that tools/gen-perfdata writes perf.data files
# that Debian's perf (the oracle) reads: `perf kvm stat report` for vmexit,
# mmio, ioport and msr, and `perf script` event counts / exit-reason names
# compared with the counts the generator prints with -v.
#
# Run from the repo root (tests/run.sh does this) with KS_BUILD (build dir)
# and KS_TMP (scratch dir) in the environment.  Prints ok/not ok/skip lines.
set -u
KS_BUILD=${KS_BUILD:-build}
KS_TMP=${KS_TMP:-$(mktemp -d /tmp/gen-perfdata-test.XXXXXX)}
GEN="$KS_BUILD/tools/gen-perfdata"
dir="$KS_TMP/gen_perfdata"
mkdir -p "$dir"

if ! command -v perf >/dev/null 2>&1; then
	echo "skip gen_perfdata: perf is not installed"
	exit 0
fi
if [ ! -x "$GEN" ]; then
	echo "not ok gen_perfdata: $GEN was not built"
	exit 0
fi
template="$dir/template.data"
if ! perf kvm stat record -a -o "$template" sleep 0.1 >"$dir/record.log" 2>&1; then
	echo "skip gen_perfdata: perf kvm stat record failed: $(tail -1 "$dir/record.log")"
	exit 0
fi

# count NAME in the generator's "-v" line
count() { sed -n "s/.*\\b$2=\\([0-9]*\\).*/\\1/p" "$1"; }
# "Total Samples:N" of one perf kvm stat report (perf prints it on stderr)
kvm_total() {
	perf kvm -i "$1" stat report --event "$2" 2>&1 | sed -n 's/^Total Samples:\([0-9]*\),.*/\1/p'
}

# check NAME OPTIONS...: generate, then compare perf's view with the counts
check() {
	local name=$1; shift
	local f="$dir/$name.data" v="$dir/$name.counts" s="$dir/$name.script"
	if ! "$GEN" --template "$template" -o "$f" -v "$@" >"$v" 2>"$dir/$name.err"; then
		echo "not ok gen_$name: generator failed: $(head -1 "$dir/$name.err")"
		return
	fi
	if [ -s "$dir/$name.err" ]; then
		echo "not ok gen_$name: generator wrote to stderr: $(head -1 "$dir/$name.err")"
		return
	fi
	local total
	total=$(kvm_total "$f" vmexit)
	if [ -z "$total" ] || [ "$total" -le 0 ]; then
		echo "not ok gen_$name: perf kvm stat report vmexit: no Total Samples (got '$total')"
		return
	fi
	if [ "$total" -gt "$(count "$v" pairs)" ]; then
		echo "not ok gen_$name: perf counted $total vmexits, more than the $(count "$v" pairs) pairs written"
		return
	fi
	local ev
	for ev in mmio ioport msr; do
		if ! perf kvm -i "$f" stat report --event $ev >"$dir/$name.$ev" 2>&1 ||
		   ! grep -q '^Total Samples:' "$dir/$name.$ev"; then
			echo "not ok gen_$name: perf kvm stat report --event $ev failed: $(tail -1 "$dir/$name.$ev")"
			return
		fi
	done
	if ! perf script -i "$f" >"$s" 2>"$dir/$name.script.err"; then
		echo "not ok gen_$name: perf script failed: $(tail -1 "$dir/$name.script.err")"
		return
	fi
	local kind key got want
	for kind in exit:exits entry:entries mmio:mmio pio:pio msr:msr; do
		key=${kind#*:}
		got=$(grep -c " kvm:kvm_${kind%%:*}:" "$s")
		want=$(count "$v" "$key")
		if [ "$got" != "$want" ]; then
			echo "not ok gen_$name: perf script shows $got kvm_${kind%%:*} lines, generator wrote $want"
			return
		fi
	done
	echo "ok gen_$name (perf: $total vmexits, $(count "$v" samples) samples)"
}

check intel --vendor intel --seed 1
check amd --vendor amd --seed 2 --vms 3 --vcpus 4
check rounds --vendor intel --seed 3 --rounds --cpus 4
check ooo --vendor amd --seed 4 --ooo --migrate --cpus 4
check lost --vendor intel --seed 5 --lost 7
check unmatched --vendor intel --seed 6 --unmatched
check unknown --vendor amd --seed 7 --unknown 9
check migrate --vendor intel --seed 8 --migrate --cpus 8 --no-comm

# A clean file: every pair is seen by perf, and the child-event reports
# count exactly the kvm_mmio/kvm_pio/kvm_msr events the generator wrote.
clean="$dir/intel.data" cv="$dir/intel.counts"
if [ -f "$cv" ]; then
	t=$(kvm_total "$clean" vmexit); p=$(count "$cv" pairs)
	[ "$t" = "$p" ] && echo "ok gen_clean_vmexit_total" ||
		echo "not ok gen_clean_vmexit_total: perf $t, generator pairs $p"
	t=$(kvm_total "$clean" mmio); p=$(( $(count "$cv" mmio_read) + $(count "$cv" mmio_write) ))
	[ "$t" = "$p" ] && echo "ok gen_clean_mmio_total" ||
		echo "not ok gen_clean_mmio_total: perf $t, generator mmio read+write $p"
	t=$(kvm_total "$clean" ioport); p=$(count "$cv" pio)
	[ "$t" = "$p" ] && echo "ok gen_clean_ioport_total" ||
		echo "not ok gen_clean_ioport_total: perf $t, generator pio $p"
	t=$(kvm_total "$clean" msr); p=$(count "$cv" msr)
	[ "$t" = "$p" ] && echo "ok gen_clean_msr_total" ||
		echo "not ok gen_clean_msr_total: perf $t, generator msr $p"
fi

# Exit reasons decode to the vendor's names in perf script.
names_ok() {
	local name=$1; shift
	local s="$dir/$name.script" r
	[ -f "$s" ] || { echo "not ok gen_${name}_reason_names: no perf script output"; return; }
	for r in "$@"; do
		if ! grep -q " kvm:kvm_exit: .*reason $r " "$s"; then
			echo "not ok gen_${name}_reason_names: no '$r' exit in perf script"
			return
		fi
	done
	echo "ok gen_${name}_reason_names"
}
names_ok intel HLT EXTERNAL_INTERRUPT MSR_WRITE EPT_MISCONFIG IO_INSTRUCTION
names_ok amd hlt msr npf io interrupt

# --unknown: perf reports the codes it cannot name.
if perf kvm -i "$dir/unknown.data" stat report --event vmexit 2>&1 | grep -q 'unknown kvm exit code'; then
	echo "ok gen_unknown_reported"
else
	echo "not ok gen_unknown_reported: perf did not see unknown exit codes"
fi

# --lost: perf counts the PERF_RECORD_LOST records.
n=$(perf report -i "$dir/lost.data" --stats 2>/dev/null | sed -n 's/^ *LOST events: *\([0-9]*\).*/\1/p' | head -1)
[ "$n" = "$(count "$dir/lost.counts" lost)" ] && echo "ok gen_lost_records" ||
	echo "not ok gen_lost_records: perf saw '$n' LOST records, generator wrote $(count "$dir/lost.counts" lost)"

# --ooo: perf's round logic reports out-of-order events; --rounds alone does not.
if perf script -i "$dir/ooo.data" 2>&1 >/dev/null | grep -q 'out of order events'; then
	echo "ok gen_ooo_detected"
else
	echo "not ok gen_ooo_detected: perf did not report out of order events"
fi
if perf script -i "$dir/rounds.data" 2>&1 >/dev/null | grep -q 'out of order events'; then
	echo "not ok gen_rounds_in_order: perf reported out of order events for --rounds"
else
	echo "ok gen_rounds_in_order"
fi

# File order: perf script -D prints each record's CPU, time and file offset
# (in delivery order), so sort by offset to see the order in the file.
# Without --rounds the samples are globally time-sorted; with --rounds they
# are not, but each CPU's samples are, and FINISHED_ROUND records are present.
file_order() {
	perf script -D -i "$1" 2>/dev/null | awk '
		function hex(s,  i, n) { n = 0; s = tolower(substr(s, 3))
			for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return n }
		/PERF_RECORD_SAMPLE/ { printf "%d %s %s\n", hex($3), $1, $2 }
		/PERF_RECORD_FINISHED_ROUND/ { printf "%d R\n", hex($3) }' |
		sort -n | cut -d" " -f2-
}
file_order "$dir/intel.data" | awk '$1 != "R" { if ($2 + 0 < last) bad++; last = $2 + 0 }
	END { exit bad > 0 }' && echo "ok gen_sorted_without_rounds" ||
	echo "not ok gen_sorted_without_rounds: samples out of time order in the file"
file_order "$dir/rounds.data" | awk '
	$1 == "R" { rounds++; next }
	{ if ($2 + 0 < last) global++; last = $2 + 0
	  if ($2 + 0 < cpu[$1]) percpu++; cpu[$1] = $2 + 0 }
	END { exit !(rounds > 1 && global > 0 && percpu == 0) }' &&
	echo "ok gen_rounds_file_order" ||
	echo "not ok gen_rounds_file_order: expected per-CPU order, global disorder and FINISHED_ROUNDs"

# Timestamps are strictly increasing per thread (perf script --ns, by tid).
for name in intel migrate; do
	perf script --ns -F tid,time -i "$dir/$name.data" 2>/dev/null | tr -d ':' |
		awk '{ if ($2 <= last[$1]) bad++; last[$1] = $2; n++ } END { exit !(n > 0 && bad == 0) }' &&
		echo "ok gen_${name}_per_thread_time" ||
		echo "not ok gen_${name}_per_thread_time: a thread's timestamps do not increase"
done

# COMM records name the vCPU threads; --no-comm leaves them unnamed.
grep -q '^ *CPU 1/KVM ' "$dir/intel.script" && ! grep -q 'CPU [0-9]*/KVM' "$dir/migrate.script" &&
	echo "ok gen_comm_names" || echo "not ok gen_comm_names: thread names wrong with/without --no-comm"

# Determinism: the same seed gives the same bytes.
"$GEN" --template "$template" -o "$dir/again.data" --vendor intel --seed 1
cmp -s "$dir/again.data" "$dir/intel.data" && echo "ok gen_deterministic" ||
	echo "not ok gen_deterministic: same options and seed gave different files"

# --cmdlines N: a smaller file (the template's saved cmdlines cut to N lines)
# that perf reads to the same report as the full one.
"$GEN" --template "$template" -o "$dir/cmdlines.data" --vendor intel --seed 1 --cmdlines 2
perf kvm -i "$dir/intel.data" stat report > "$dir/full.report" 2>&1
perf kvm -i "$dir/cmdlines.data" stat report > "$dir/cmdlines.report" 2>&1
if [ "$(stat -c %s "$dir/cmdlines.data")" -le "$(stat -c %s "$dir/intel.data")" ] &&
   grep -q 'Total Samples' "$dir/cmdlines.report" && cmp -s "$dir/full.report" "$dir/cmdlines.report"; then
	echo "ok gen_cmdlines_trimmed ($(stat -c %s "$dir/intel.data") -> $(stat -c %s "$dir/cmdlines.data") bytes)"
else
	echo "not ok gen_cmdlines_trimmed: $(diff "$dir/full.report" "$dir/cmdlines.report" | head -3 | tr '\n' ' ')"
fi

# CPUID header follows --vendor.
perf report --header-only -i "$dir/amd.data" 2>/dev/null | grep -q '^# cpuid : AuthenticAMD,25,1,1' &&
perf report --header-only -i "$dir/intel.data" 2>/dev/null | grep -q '^# cpuid : GenuineIntel,6,85,7' &&
	echo "ok gen_cpuid_header" || echo "not ok gen_cpuid_header: cpuid not rewritten"

# Errors: one line on stderr, exit status 1.
out=$("$GEN" --template /nonexistent -o "$dir/x.data" 2>&1); rc=$?
[ $rc -eq 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && echo "ok gen_error_missing_template" ||
	echo "not ok gen_error_missing_template: rc=$rc out=$out"
head -c 3000 "$template" > "$dir/truncated.data"
out=$("$GEN" --template "$dir/truncated.data" -o "$dir/x.data" 2>&1); rc=$?
[ $rc -eq 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && echo "ok gen_error_truncated_template" ||
	echo "not ok gen_error_truncated_template: rc=$rc out=$out"
exit 0
