#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# nested_test.sh - kvmscope's live paths on a real KVM: the nested-SVM lab
# (tests/lab/nested.sh).  Run by `make check-lab` with KVMSCOPE, KS_BUILD,
# KS_TMP.  KS_LAB=0 skips it.  Prints ok / not ok / skip lines.
# timeout: 480
#
# The guest (nested_guest.sh) runs kvmscope record, perf kvm stat record -a
# and kvmscope top --batch --json at once while tools/minivmm makes its
# exits, then stops them.  Compared here, on this machine (same binaries):
#  - counts per exit reason: kvmscope stat of record's trace.dat == perf kvm
#    stat report of perf's perf.data, for all exits, per vCPU number, and
#    per VM (process) and vCPU; and per VM and vCPU the exits minivmm makes
#    on purpose (io, cpuid, msr, hlt) == minivmm's own counts;
#  - trace-cmd report of record's trace.dat == kvmscope dump, byte for byte;
#  - kvmscope stat --format perf of perf's perf.data == perf kvm stat
#    report, byte for byte (real SVM exits);
#  - top --json's and top --csv's running totals per VM+vCPU and VM+reason
#    == kvmscope stat of the recording; the VMs named alike by stat of the recording (record
#    keeps the thread -> process map and the process names) and by top live;
#  - the exporter scraped live by a real Prometheus in the guest: its
#    counters per reason == perf's counts, its halt histogram == the VMM's
#    halts;
#  - two QEMU -accel kvm (with and without -name X,debug-threads=on): top
#    --kvmstats --qmp and exporter --qmp == QEMU's own query-stats; stat of a
#    recording names both VMs as top does live;
#  - the library's BPF engine (tools/engine-hold, in the guest's Debian 6.1
#    kernel) over the same window: its exit counts per VM, vCPU and reason
#    == perf kvm stat report's, and each series' buckets add up to its count;
#  - stat --live --engine bpf and --engine tracefs over the same exits:
#    counts per (VM, vCPU, reason) equal each other and perf's; the two
#    engines' exporters: identical histogram counts (buckets reported);
#  - a planted difference (KS_LAB_PLANT=1: one exit dropped) fails the
#    comparison: the check can fail.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
KVMSCOPE=${KVMSCOPE:-$root/build/kvmscope}
KS_BUILD=${KS_BUILD:-$root/build}
KS_TMP=${KS_TMP:-$(mktemp -d)}
export LAB_WORK="$KS_TMP/lab"
CMP="$root/tests/lab/nested_compare.py"
VMM="$KS_BUILD/tools/minivmm"

if [ "${KS_LAB:-1}" = 0 ]; then
	echo "skip nested: KS_LAB=0"
	exit 0
fi
[ -x "$KVMSCOPE" ] && [ -x "$VMM" ] || { echo "skip nested: no $KVMSCOPE or $VMM"; exit 0; }
# shellcheck source=tests/lab/lab.sh
. "$root/tests/lab/lab.sh"
# shellcheck source=tests/lab/nested.sh
. "$root/tests/lab/nested.sh"
if ! nested_setup; then
	echo "skip nested: $LAB_ERR"
	exit 0
fi
echo "# nested lab kernel: $LAB_KDEB"
trap 'nested_kill n1' EXIT

ok() { echo "ok $1"; }
nok() { echo "not ok $1: $2"; }

# The report block of perf kvm stat report (it prints it on stderr) and of
# kvmscope stat --format perf, as tests/cli/perf_oracle_test.sh takes it.
block() { sed -n '/^Analyze events/,/^Total Samples/p' | grep -v '^unknown kvm exit code'; }
perf_report() { # FILE ARGS...
	local f=$1; shift
	perf kvm -i "$f" stat report "$@" 2>&1 >/dev/null | block
}
ks_report() { # FILE ARGS...
	local f=$1; shift
	"$KVMSCOPE" stat -i "$f" --format perf "$@" 2>/dev/null | block
}

VMS=2 VCPUS=2 LOOPS=${KS_LAB_LOOPS:-300}
NESTED_ENV="KVMSCOPE=$KVMSCOPE
VMM=$VMM
ENGINE_HOLD=$KS_BUILD/tools/engine-hold
VMM_ARGS='--vms $VMS --vcpus $VCPUS --loops $LOOPS'
LABCTL_DIR=$root/tests/lab
LAB_QEMU=${KS_LAB_QEMU:-1}"
t0=$SECONDS
if ! nested_run n1 "$root/tests/lab/nested_guest.sh" 360; then
	nok nested-guest "$LAB_ERR"
	exit 0
fi
o="$LAB_D/out"
echo "# guest ran in $((SECONDS - t0)) s: $(grep '^# ' "$o/guest.log" | tr '\n' ' ')"
# perf record ends with 130 on the SIGINT that stops it
for t in vmm rec perf top topcsv; do
	rc=$(cat "$o/$t.rc" 2>/dev/null)
	if [ "$rc" = 0 ] || { [ $t = perf ] && [ "$rc" = 130 ]; }; then ok "nested-$t-ran"
	else nok "nested-$t-ran" "exit $(cat "$o/$t.rc" 2>/dev/null): $(tail -3 "$o/$t.err" 2>/dev/null | tr '\n' ' ')"; fi
done

# 1. record vs perf, per reason: all exits, per vCPU number, per VM + vCPU
cmp_counts() { # NAME ARGS-PERF -- ARGS-KS
	local name=$1 pa=() ka=() why
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do pa+=("$1"); shift; done
	shift
	ka=("$@")
	perf_report "$o/perf.data" "${pa[@]}" > "$o/$name.perf"
	ks_report "$o/rec.dat" "${ka[@]}" > "$o/$name.ks"
	if why=$(python3 "$CMP" counts "$o/$name.ks" "$o/$name.perf" record perf); then
		ok "$name ($why)"
	else nok "$name" "$why"; fi
}
cmp_counts record-eq-perf -- 
for c in $(seq 0 $((VCPUS - 1))); do
	cmp_counts "record-eq-perf-vcpu$c" --vcpu "$c" -- --vcpu "$c"
done
for v in $(seq 0 $((VMS - 1))); do
	pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["vms"][int(sys.argv[2])]["pid"])' \
		"$o/vmm.json" "$v" 2>/dev/null)
	[ -n "$pid" ] || { nok "vmm-json" "no pid of vm$v in $o/vmm.json"; continue; }
	for c in $(seq 0 $((VCPUS - 1))); do
		cmp_counts "record-eq-perf-vm$v-vcpu$c" --pid "$pid" --vcpu "$c" -- -p "$pid" --vcpu "$c"
		if why=$(python3 "$CMP" vmm "$o/record-eq-perf-vm$v-vcpu$c.ks" "$o/vmm.json" "$v" "$c"); then
			ok "record-eq-vmm ($why)"
		else nok "record-eq-vmm" "$why"; fi
		if why=$(python3 "$CMP" vmm "$o/record-eq-perf-vm$v-vcpu$c.perf" "$o/vmm.json" "$v" "$c"); then
			ok "perf-eq-vmm ($why)"
		else nok "perf-eq-vmm" "$why"; fi
		if [ "$(cat "$o/hold.rc" 2>/dev/null)" != 0 ]; then
			nok "bpf-eq-perf-vm$v-vcpu$c" "the BPF engine did not run: $(head -c 300 "$o/hold.err" 2>/dev/null)"
		elif why=$(python3 "$CMP" bpf "$o/hold.out" "$o/record-eq-perf-vm$v-vcpu$c.perf" "$pid" "$c" \
			"$o/kvm_exit.format"); then
			ok "bpf-eq-perf-vm$v-vcpu$c ($why)"
		else nok "bpf-eq-perf-vm$v-vcpu$c" "$why"; fi
	done
done

# 2. the recording printed by trace-cmd == kvmscope dump
trace-cmd report "$o/rec.dat" > "$o/tc.txt" 2> "$o/tc.err"
"$KVMSCOPE" dump "$o/rec.dat" > "$o/dump.txt" 2> "$o/dump.err"
if [ -s "$o/tc.txt" ] && cmp -s "$o/tc.txt" "$o/dump.txt"; then
	ok "dump-eq-trace-cmd ($(wc -l < "$o/tc.txt") lines)"
else nok dump-eq-trace-cmd "$(diff "$o/tc.txt" "$o/dump.txt" | head -6 | tr '\n' '|')"; fi

# 3. stat --format perf on perf's own file, byte for byte
perf_eq() { # NAME ARGS...
	local name=$1; shift
	perf_report "$o/perf.data" "$@" > "$o/$name.perf"
	ks_report "$o/perf.data" "$@" > "$o/$name.ks"
	if [ -s "$o/$name.perf" ] && cmp -s "$o/$name.perf" "$o/$name.ks"; then
		ok "$name ($(grep -c 'us (' "$o/$name.perf") rows)"
	else nok "$name" "$(diff "$o/$name.perf" "$o/$name.ks" | head -8 | tr '\n' '|')"; fi
}
perf_eq stat-perf-format-eq-perf
perf_eq stat-perf-format-eq-perf-time -k time
perf_eq stat-perf-format-eq-perf-ioport --event ioport
perf_eq stat-perf-format-eq-perf-msr --event msr

# 4. top's running totals == stat of the concurrent recording; the VM
# names stat finds in the recording (record's task map) == top's live ones
"$KVMSCOPE" stat -i "$o/rec.dat" --by vm --by vm,vcpu --by vm,reason --json > "$o/stat.json" 2> "$o/stat.err"
if why=$(python3 "$CMP" top "$o/top.json" "$o/stat.json" "$o/vmm.json" "$o/top.err"); then
	ok "top-eq-record-stat ($why)"
else nok top-eq-record-stat "$why"; fi
if why=$(python3 "$CMP" topcsv "$o/top.csv" "$o/stat.json" "$o/topcsv.err"); then
	ok "top-csv-eq-record-stat ($why)"
else nok top-csv-eq-record-stat "$why $(head -c 200 "$o/topcsv.err")"; fi

# 5. the exporter, live, scraped by the guest's Prometheus: its counters'
# last values per reason == perf's counts; its halt histogram counts the
# VMM's halts
if why=$(python3 "$CMP" prom "$o/prom.exits" "$o/prom.halts" "$o/record-eq-perf.perf" "$o/vmm.json" "$o/expo.metrics" 2>&1); then
	ok "prometheus-eq-perf ($why)"
else nok prometheus-eq-perf "$why $(tail -2 "$o/prom.err" "$o/expo.err" 2>/dev/null | tr '\n' ' ')"; fi

# 5b. the live engines over the same exits: stat --live of BPF and of
# tracefs == perf per (VM, vCPU, reason); their exporters' histograms
# count the same exits (the buckets' agreement is reported: each engine
# times an exit with its own probe)
for eng in bpf tracefs; do
	rc=$(cat "$o/live-$eng.rc" 2>/dev/null)
	if [ "$rc" = 0 ]; then ok "stat-live-$eng-ran"
	else nok "stat-live-$eng-ran" "exit $rc: $(head -2 "$o/live-$eng.err" 2>/dev/null | tr '\n' ' ')"; fi
done
if why=$(python3 "$CMP" live "$o/live-bpf.json" "$o/live-tracefs.json" bpf tracefs "$o" "$o/vmm.json" 2>&1); then
	ok "stat-live-engines-eq-perf ($why)"
else nok stat-live-engines-eq-perf "$why"; fi
# the guest's AUTO exporter (expo.metrics) is the BPF engine's where it loads
if ! grep -qx 'kvmscope_engine_info{engine="bpf"} 1' "$o/expo.metrics"; then
	nok engines-histogram-counts-identical "the exporter did not run the BPF engine: $(grep engine_info "$o/expo.metrics") $(head -c 200 "$o/expo.err")"
elif why=$(python3 "$CMP" hist "$o/expo.metrics" "$o/expo-tracefs.metrics" bpf tracefs 2>&1); then
	ok "engines-histogram-counts-identical ($why)"
else nok engines-histogram-counts-identical "$why $(head -c 200 "$o/expo.err" "$o/expo-tracefs.err")"; fi

# 6. two QEMU -accel kvm: top --kvmstats --qmp and exporter --qmp == QEMU's
# own query-stats (paused); stat --by vm of a recording names them as top
# does live and keeps each one's threads together (without debug-threads
# all are named qemu-system-x86)
if [ "${KS_LAB_QEMU:-1}" = 0 ]; then
	echo "skip qemu-kvm: KS_LAB_QEMU=0"
elif [ -s "$o/nestvm.pid" ] && [ -s "$o/plainvm.pid" ]; then
	for vm in nestvm plainvm; do
		if why=$(python3 "$CMP" kvmstats "$o/$vm.kvmstats" "$o/$vm.before" "$o/$vm.after" "$(cat "$o/$vm.pid")" $vm 2>&1); then
			ok "top-kvmstats-eq-query-stats-$vm ($why)"
		else nok "top-kvmstats-eq-query-stats-$vm" "$why $(head -c 200 "$o/$vm.kvmstats.err" "$o/$vm.qmp.err")"; fi
		if why=$(python3 "$CMP" expoqmp "$o/$vm.prom" "$o/$vm.before" "$o/$vm.after" $vm 2>&1); then
			ok "exporter-qmp-eq-query-stats-$vm ($why)"
		else nok "exporter-qmp-eq-query-stats-$vm" "$why $(head -c 200 "$o/$vm.expo.err")"; fi
	done
	"$KVMSCOPE" stat -i "$o/qrec.dat" --by vm --json > "$o/qstat.json" 2> "$o/qstat.err"
	if why=$(python3 "$CMP" names "$o/qstat.json" "$o/qtop.json" nestvm "$o/nestvm.pid" "$o/nestvm.tids" \
		plainvm "$o/plainvm.pid" "$o/plainvm.tids" 2>&1); then
		ok "record-names-qemu-vms-as-top ($why)"
	else nok record-names-qemu-vms-as-top "$why $(head -c 200 "$o/qstat.err")"; fi
else nok qemu-kvm-ran "no QEMU pid files: $(tail -c 300 "$o"/*.qemu.log 2>/dev/null | tr '\n' ' ')"; fi

# 7. lost events: a record of the cpuid exits only, with a 4 KB buffer per
# CPU, stopped for 3 s while the VMM ran
"$KVMSCOPE" dump "$o/lost.dat" 2> "$o/lost-dump.err" | grep -c ' kvm_exit: ' > "$o/lost.kept"
if why=$(python3 "$CMP" lost "$o/lost.err" "$o/lost.stats" "$o/lost.kept" "$o/vmm.json" 2>&1); then
	ok "lost-events-counted ($why)"
else nok lost-events-counted "$why"; fi

# 8. the comparison can fail: one exit dropped
p1=passed p2=passed p3=passed p4=passed p5=passed p6=passed p7=passed p8=passed
KS_LAB_PLANT=1 python3 "$CMP" live "$o/live-bpf.json" "$o/live-tracefs.json" bpf tracefs "$o" "$o/vmm.json" > "$o/plant7" 2>&1 || p7=failed
KS_LAB_PLANT=1 python3 "$CMP" hist "$o/expo.metrics" "$o/expo-tracefs.metrics" bpf tracefs > "$o/plant8" 2>&1 || p8=failed
KS_LAB_PLANT=1 python3 "$CMP" counts "$o/record-eq-perf.ks" "$o/record-eq-perf.perf" record perf > "$o/plant1" || p1=failed
KS_LAB_PLANT=1 python3 "$CMP" vmm "$o/record-eq-perf-vm0-vcpu0.ks" "$o/vmm.json" 0 0 > "$o/plant2" || p2=failed
KS_LAB_PLANT=1 python3 "$CMP" top "$o/top.json" "$o/stat.json" "$o/vmm.json" "$o/top.err" > "$o/plant3" || p3=failed
KS_LAB_PLANT=1 python3 "$CMP" prom "$o/prom.exits" "$o/prom.halts" "$o/record-eq-perf.perf" "$o/vmm.json" "$o/expo.metrics" > "$o/plant4" 2>&1 || p4=failed
KS_LAB_PLANT=1 python3 "$CMP" topcsv "$o/top.csv" "$o/stat.json" "$o/topcsv.err" > "$o/plant5" || p5=failed
pid0=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["vms"][0]["pid"])' "$o/vmm.json" 2>/dev/null)
KS_LAB_PLANT=1 python3 "$CMP" bpf "$o/hold.out" "$o/record-eq-perf-vm0-vcpu0.perf" "${pid0:-0}" 0 \
	"$o/kvm_exit.format" > "$o/plant6" || p6=failed
if [ $p1 = failed ] && [ $p2 = failed ] && [ $p3 = failed ] && [ $p4 = failed ] && [ $p5 = failed ] && [ $p6 = failed ] &&
   [ $p7 = failed ] && [ $p8 = failed ]; then
	ok "planted-difference-fails ($(cat "$o/plant1") / $(cat "$o/plant2") / $(head -1 "$o/plant3") / $(head -1 "$o/plant4") / $(head -1 "$o/plant5") / $(head -1 "$o/plant6") / $(head -1 "$o/plant7") / $(head -1 "$o/plant8"))"
else nok planted-difference-fails "one exit dropped: record vs perf $p1, record vs VMM $p2, top vs stat $p3, prometheus vs perf $p4, top --csv vs stat $p5, BPF engine vs perf $p6, live engines vs perf $p7, engines' histograms $p8"; fi
exit 0
