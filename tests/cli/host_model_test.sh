#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# host_model_test.sh - every command attributes host threads to the same VM
# and vCPU and names the VM alike (the host model, kvmscope/host.h).
#
# On every shared recording and on generated perf.data of each architecture
# (tools/gen-kvm-perfdata from tests/fixtures/<arch>, scenarios of
# tests/cli/arch_oracle.py), the "threads" array of the JSON of stat, report,
# timeline, pmu -i, top -i --batch (--json) and merge must be identical (tid,
# vm, vcpu, vm_name), and top's per-vCPU and VM rows (--csv, --json) must be
# stat's --by vm,vcpu rows with the same VM names.  merge runs on each input
# alone (a host trace without its guests' traces is a valid merge of one
# input) and, for the one recording with a guest trace (hip24 host-tsync +
# guest-tsync), on the pair; its events carry their thread's VM and vCPU as
# of then, and each thread's last event must say what "threads" says.  An
# input without KVM events (kvm-formats-zstd) has no mapping to compare: stat
# says so and the input is passed.  The expected mapping itself is checked
# against independent oracles elsewhere (arch_stat_test.sh for the generated
# inputs, report_test.sh on host-tsync); here the commands are checked
# against each other, which is what users saw disagree.
set -u
K=${KVMSCOPE:?}
GEN=${KS_BUILD:?}/tools/gen-kvm-perfdata
T=${KS_TMP:?}/host_model
D=${KS_SHARED:-../shared}/data
J="python3 tests/cli/host_model_json.py"
mkdir -p "$T"

inputs=()
for f in "$D"/hip24/host-*.trace.dat "$D"/kvm-formats-zstd.trace.dat; do
	[ -f "$f" ] && inputs+=("$f")
done
[ ${#inputs[@]} -gt 0 ] || echo "skip host_model_shared: $D not present"
for arch in arm64 powerpc s390 riscv loongarch; do
	python3 tests/cli/arch_oracle.py scenario $arch "$T/$arch.scn" "$T/$arch.exp" &&
	"$GEN" --formats tests/fixtures/$arch --machine $arch -o "$T/$arch.data" "$T/$arch.scn" &&
		inputs+=("$T/$arch.data") || echo "not ok host_model_$arch: generator failed"
done
python3 tests/cli/arch_oracle.py reuse "$T/reuse.scn" "$T/reuse.exp" &&
"$GEN" --formats tests/fixtures/riscv --machine riscv64 -o "$T/reuse.data" "$T/reuse.scn" &&
	inputs+=("$T/reuse.data")

for f in "${inputs[@]}"; do
	n=$(basename "$f")
	o="$T/$n"
	bad=
	# a file without KVM events is an empty answer (exit 0) with a note
	"$K" stat -i "$f" --json > "$o.stat.json" 2> "$o.err"; rc=$?
	if grep -q "no KVM events" "$o.err"; then
		echo "ok host_model $n: no KVM events (stat says so, exit $rc)"
		continue
	fi
	[ $rc = 0 ] || bad="stat: $(head -1 "$o.err")"
	"$K" report -i "$f" --json > "$o.report.json" 2> "$o.err" || bad="$bad report: $(head -1 "$o.err")"
	"$K" timeline -q -i "$f" --json "$o.timeline.json" 2> "$o.err" ||
		bad="$bad timeline: $(head -1 "$o.err")"
	"$K" pmu -i "$f" --json > "$o.pmu.json" 2> "$o.err" || bad="$bad pmu: $(head -1 "$o.err")"
	"$K" top -i "$f" --fast --batch -v --csv -d 86400 > "$o.top.csv" 2> "$o.err" ||
		bad="$bad top: $(head -1 "$o.err")"
	"$K" top -i "$f" --fast --json -d 86400 > "$o.top.json" 2> "$o.err" ||
		bad="$bad top --json: $(head -1 "$o.err")"
	"$K" merge --json -i "$f" > "$o.merge.json" 2> "$o.err" ||
		bad="$bad merge: $(head -1 "$o.err")"
	# the one host + guest pair: merge with the guest too
	if [ "$n" = host-tsync.trace.dat ] && [ -f "$D/hip24/guest-tsync.trace.dat" ]; then
		"$K" merge --json -i "$f" -i "$D/hip24/guest-tsync.trace.dat" > "$o.merge2.json" 2> "$o.err" ||
			bad="$bad merge with the guest: $(head -1 "$o.err")"
	fi
	if [ -n "$bad" ]; then
		echo "not ok host_model $n:$bad"
		continue
	fi
	$J threads "$o.stat.json" > "$o.stat.map"
	cmds="report timeline pmu top merge"
	[ -f "$o.merge2.json" ] && cmds="$cmds merge2"
	for c in $cmds; do
		$J threads "$o.$c.json" > "$o.$c.map"
		if cmp -s "$o.stat.map" "$o.$c.map"; then
			echo "ok host_model $n: $c = stat ($(wc -l < "$o.stat.map") threads)"
		else
			echo "not ok host_model $n: $c and stat disagree:"
			diff "$o.stat.map" "$o.$c.map" | head -6 | sed 's/^/#   /'
		fi
	done
	# merge's events carry their thread's attribution as of then; each
	# thread's last one must be the thread's in "threads"
	for c in merge merge2; do
		[ -f "$o.$c.json" ] || continue
		$J mergeevents "$o.$c.json" > "$o.$c.events"
		if [ -s "$o.$c.events" ]; then
			echo "not ok host_model $n: $c events and its threads disagree:"
			head -3 "$o.$c.events" | sed 's/^/#   /'
		else
			echo "ok host_model $n: $c events end as its threads say"
		fi
	done
	"$K" stat -i "$f" --by vm,vcpu --json > "$o.statvcpu.json" 2> /dev/null
	$J pairs "$o.statvcpu.json" > "$o.stat.pairs"
	$J top "$o.top.csv" > "$o.top.pairs"
	$J topjson "$o.top.json" > "$o.topjson.pairs"
	for c in top topjson; do
		if cmp -s "$o.stat.pairs" "$o.$c.pairs"; then
			echo "ok host_model $n: $c rows = stat ($(wc -l < "$o.$c.pairs") vCPU rows and VM names)"
		else
			echo "not ok host_model $n: $c rows and stat disagree:"
			diff "$o.stat.pairs" "$o.$c.pairs" | head -6 | sed 's/^/#   /'
		fi
	done
done

# top over many intervals: each interval's stat engine starts afresh, the
# host model does not.  On arm64 (no vCPU field in the events) with its
# timestamps stretched to 10 s, a thread bound to its vCPU by a vcpu_load in
# the first second keeps that vCPU in the next ones: the exits of top's vCPU
# rows, summed over its 1 s intervals, are stat's per VM and vCPU.
if [ -f "$T/arm64.scn" ]; then
	awk '$1 ~ /^[0-9]+$/ { $1 = $1 * 100000 } { print }' "$T/arm64.scn" > "$T/slow.scn"
	if "$GEN" --formats tests/fixtures/arm64 --machine arm64 -o "$T/slow.data" "$T/slow.scn"; then
		"$K" top -i "$T/slow.data" --fast --batch -v --csv -d 1 > "$T/slow.top.csv"
		"$K" top -i "$T/slow.data" --fast --json -d 1 > "$T/slow.top.json"
		"$K" stat -i "$T/slow.data" --by vm,vcpu --json > "$T/slow.stat.json"
		$J topsums "$T/slow.top.csv" > "$T/slow.top.sums"
		$J sums "$T/slow.stat.json" > "$T/slow.stat.sums"
		n=$(awk -F, '$1 ~ /^[0-9]+$/ { print $1 }' "$T/slow.top.csv" | sort -u | wc -l)
		if [ "$n" -gt 5 ] && cmp -s "$T/slow.top.sums" "$T/slow.stat.sums"; then
			echo "ok host_model top intervals: $n intervals add up to stat's vCPU rows"
		else
			echo "not ok host_model top intervals ($n): top's vCPU rows differ from stat's:"
			diff "$T/slow.stat.sums" "$T/slow.top.sums" | head -6 | sed 's/^/#   /'
		fi
		# the last interval's threads are the whole run's: stat's
		$J threads "$T/slow.stat.json" > "$T/slow.stat.map"
		$J threads "$T/slow.top.json" > "$T/slow.top.map"
		if [ "$(wc -l < "$T/slow.top.json")" = "$n" ] && cmp -s "$T/slow.stat.map" "$T/slow.top.map"; then
			echo "ok host_model top intervals: --json, $n documents, the last one's threads = stat"
		else
			echo "not ok host_model top intervals: --json ($(wc -l < "$T/slow.top.json") documents) and stat disagree:"
			diff "$T/slow.stat.map" "$T/slow.top.map" | head -6 | sed 's/^/#   /'
		fi
	else
		echo "not ok host_model top intervals: generator failed"
	fi
fi

# A kvm_exit naming another vCPU than the thread's kvm_entry is reported.
cat > "$T/conflict.scn" <<'SCN'
comm 201 100 CPU 0/KVM
1000 0 201 100 kvm_hv:kvm_guest_enter vcpu_id=0
1100 0 201 100 kvm_hv:kvm_guest_exit vcpu_id=0 trap=0x500
1200 0 201 100 kvm_hv:kvm_guest_enter vcpu_id=0
1300 0 201 100 kvm_hv:kvm_guest_exit vcpu_id=1 trap=0x500
1400 0 201 100 kvm_hv:kvm_guest_enter vcpu_id=1
SCN
if "$GEN" --formats tests/fixtures/powerpc --machine ppc64le -o "$T/conflict.data" "$T/conflict.scn"; then
	for c in stat report pmu; do
		d=$("$K" $c -i "$T/conflict.data" --json |
			python3 -c 'import json,sys; print([t["sources_disagree"] for t in json.load(sys.stdin)["threads"]])')
		[ "$d" = "[True]" ] && echo "ok host_model conflict reported by $c" ||
			echo "not ok host_model conflict $c: sources_disagree $d"
	done
else
	echo "not ok host_model conflict: generator failed"
fi

# The host model keeps at most limits.threads threads: report fails as stat
# does, with the file and offset, instead of growing without bound.
python3 -c '
for t in range(1001, 4001):
    print("comm %d %d CPU 0/KVM" % (t, t))
for t in range(1001, 4001):
    print("%d 0 %d %d kvm:kvm_entry pc=0" % (t, t, t))' > "$T/many.scn"
if "$GEN" --formats tests/fixtures/riscv --machine riscv64 -o "$T/many.data" "$T/many.scn"; then
	"$K" stat -i "$T/many.data" --limit threads=1000 > /dev/null 2> "$T/stat.err"
	"$K" report -i "$T/many.data" --limit threads=1000 > /dev/null 2> "$T/report.err"
	rc=$?
	if [ $rc = 1 ] && grep -q "many.data: offset [0-9]*: more distinct threads than the budget allows (limit 1000" "$T/report.err" &&
	   cmp -s "$T/stat.err" "$T/report.err"; then
		echo "ok host_model threads budget: report stops as stat does"
	else
		echo "not ok host_model threads budget: exit $rc, $(head -1 "$T/report.err")"
	fi
else
	echo "not ok host_model threads budget: generator failed"
fi
