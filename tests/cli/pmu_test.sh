#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# pmu_test.sh - kvmscope pmu.
#  * report: traces from tools/gen-perfdata --pmu-guest (a guest perf session
#    reprogramming counters on context switches); per-MSR counts and the total
#    handling time agree with `perf kvm stat report --event msr` (the oracle),
#    and PMU accesses, event-select enables and LBR toggles agree with the
#    counts the generator printed.  Real trace: MSR exit counts agree with
#    trace-cmd's report of hip24/host-2vcpu-22k.
#  * check: fixture sysfs trees + CPUID files from the vendors' layouts and a
#    generated /proc tree (a QEMU VM, a pinned system-wide perf, the NMI
#    watchdog): counter arithmetic and verdicts recomputed here.
#  * check, live: real `perf stat -a` / `perf record -a` sessions in the
#    background must be named as system-wide holders.
set -u
K=${KVMSCOPE:-build/kvmscope}
KS_BUILD=${KS_BUILD:-build}
KS_SHARED=${KS_SHARED:-../shared}
KS_TMP=${KS_TMP:-$(mktemp -d /tmp/pmu-test.XXXXXX)}
GEN="$KS_BUILD/tools/gen-perfdata"
dir="$KS_TMP/pmu"
mkdir -p "$dir"
FIX=tests/fixtures/pmu
ok() { echo "ok $*"; }
nok() { echo "not ok $*"; }

command -v jq >/dev/null || { echo "skip pmu: jq is not installed"; exit 0; }

# ---- help / usage ----
"$K" pmu --help | grep -q 'kvmscope pmu check' && ok pmu_help || nok "pmu_help: no usage text"
"$K" pmu >/dev/null 2>&1; [ $? -eq 2 ] && ok pmu_usage_error || nok "pmu_usage_error: status not 2"
if man --warnings -l man/kvmscope-pmu.1 >/dev/null 2>"$dir/man.err" && [ ! -s "$dir/man.err" ]; then
	ok pmu_man
else
	nok "pmu_man: $(head -1 "$dir/man.err")"
fi

# ---- report on generated traces, perf as the oracle ----
report_vs_perf() {
	local name=$1; shift
	local f="$dir/$name.data" v="$dir/$name.counts" j="$dir/$name.json"
	if ! "$GEN" --template "$template" -o "$f" -v --pmu-guest "$@" >"$v" 2>"$dir/$name.err"; then
		nok "pmu_report_$name: generator failed: $(head -1 "$dir/$name.err")"; return
	fi
	"$K" pmu -i "$f" --json >"$j" || { nok "pmu_report_$name: kvmscope failed"; return; }
	# per key counts: perf "0x186:W  N ..." vs our reads/writes summed over vCPUs
	perf kvm -i "$f" stat report --event msr 2>&1 |
		awk '$1 ~ /^0x[0-9a-f]+:[RW]$/ { print $1, $2 }' | sort >"$dir/$name.perf"
	jq -r '.msrs | group_by(.msr)[] | [.[0].msr, (map(.reads)|add), (map(.writes)|add)] | @tsv' "$j" |
		awk '{ if ($2) printf "0x%x:R %d\n", $1, $2; if ($3) printf "0x%x:W %d\n", $1, $3 }' |
		sort >"$dir/$name.ours"
	if [ -s "$dir/$name.perf" ] && cmp -s "$dir/$name.perf" "$dir/$name.ours"; then
		ok "pmu_report_${name}_keys ($(wc -l <"$dir/$name.perf") MSR keys)"
	else
		nok "pmu_report_${name}_keys: $(diff "$dir/$name.perf" "$dir/$name.ours" | head -3 | tr '\n' ' ')"
	fi
	local pt ot
	pt=$(perf kvm -i "$f" stat report --event msr 2>&1 | sed -n 's/.*Total events handled time:\([0-9.]*\)us.*/\1/p')
	ot=$(jq '[.msrs[].handle_ns] | add' "$j" | awk '{ printf "%.2f", $1 / 1000 }')
	[ -n "$pt" ] && [ "$pt" = "$ot" ] && ok "pmu_report_${name}_time (${pt}us)" ||
		nok "pmu_report_${name}_time: perf ${pt}us, kvmscope ${ot}us"
	local c
	c() { sed -n "s/.*\\b$1=\\([0-9]*\\).*/\\1/p" "$v"; }
	local pmu en on off
	pmu=$(jq '[.vcpus[].pmu_accesses] | add' "$j")
	en=$(jq '[.counters[].enables] | add' "$j")
	on=$(jq '[.vcpus[].lbr_on] | add' "$j")
	off=$(jq '[.vcpus[].lbr_off] | add' "$j")
	# the generator's background MSR traffic (random non-PMU MSRs) is not PMU
	if [ "$pmu" = "$(c pmu_msr)" ] && [ "$en" = "$(c evtsel_en)" ] &&
	   [ "$on" = "$(c lbr_on)" ] && [ "$off" = "$(c lbr_off)" ]; then
		ok "pmu_report_${name}_generator_counts (pmu $pmu, enables $en, lbr $on/$off)"
	else
		nok "pmu_report_${name}_generator_counts: ours pmu=$pmu en=$en lbr=$on/$off, gen $(tail -1 "$v")"
	fi
}

template="$dir/template.data"
if ! command -v perf >/dev/null 2>&1; then
	echo "skip pmu_report: perf is not installed"
elif [ ! -x "$GEN" ]; then
	nok "pmu_report: $GEN was not built"
elif ! perf kvm stat record -a -o "$template" sleep 0.1 >"$dir/record.log" 2>&1; then
	echo "skip pmu_report: perf kvm stat record failed: $(tail -1 "$dir/record.log")"
else
	report_vs_perf intel --vendor intel --seed 11 --pairs 20000
	report_vs_perf amd --vendor amd --seed 12 --vms 3 --vcpus 2 --pairs 20000
	# decoded programming: Intel task A = event 0x3c (cycles) usr+os, task B = 0x2e/0x41 usr
	j="$dir/intel.json"
	if jq -e '[.counters[] | select(.msr == "IA32_PERFEVTSEL0") | .programs[] |
		   select(.event == 60 and .umask == 0 and .usr and .os)] | length > 0' "$j" >/dev/null &&
	   jq -e '[.counters[] | select(.msr == "IA32_PERFEVTSEL0") | .programs[] |
		   select(.event == 46 and .umask == 65 and .usr and (.os | not))] | length > 0' "$j" >/dev/null; then
		ok pmu_report_evtsel_decoded
	else
		nok "pmu_report_evtsel_decoded: expected cycles usr+os and LLC-miss usr programs"
	fi
	jq -e '[.counters[].msr] | all(startswith("AMD_PERF_CTL"))' "$dir/amd.json" >/dev/null &&
		ok pmu_report_amd_ctl_names || nok "pmu_report_amd_ctl_names"
fi

# ---- report on a real trace without kvm_msr: MSR exit counts ----
real="$KS_SHARED/data/hip24/host-2vcpu-22k.trace.dat"
exp="$KS_SHARED/data/hip24/expected/host-2vcpu-22k.report-ns.txt.gz"
if [ -f "$real" ] && [ -f "$exp" ]; then
	ours=$("$K" pmu -i "$real" --json | jq '.sources.msr_exits')
	# trace-cmd's text: MSR_READ/MSR_WRITE exits of threads after their first kvm_entry
	want=$(zcat "$exp" | awk '{ t = $1 } / kvm_entry: / { seen[t] = 1 }
		/ kvm_exit: +reason MSR_(READ|WRITE) / { if (seen[t]) n++ } END { print n + 0 }')
	[ "$ours" = "$want" ] && ok "pmu_real_msr_exits ($ours)" || nok "pmu_real_msr_exits: ours $ours, trace-cmd $want"
else
	echo "skip pmu_real_msr_exits: hip24 recordings are absent"
fi

# ---- check on fixtures ----
# make_proc DIR: a QEMU VM (vCPUs on CPUs 0-3), a pinned system-wide perf
# with LBR on CPUs 2-3, a flexible per-task perf, the NMI watchdog on.
make_proc() {
	local p=$1
	rm -rf "$p"; mkdir -p "$p/sys/kernel" "$p/100/fd" "$p/100/task/101" "$p/100/task/102" \
		"$p/200/fd" "$p/300/fd"
	echo 1 > "$p/sys/kernel/nmi_watchdog"
	printf '%s\0' /usr/bin/qemu-system-x86_64 -enable-kvm -name guest=vm1 -cpu host,pmu=on,lbr-fmt=0x5 > "$p/100/cmdline"
	echo qemu-system-x86 > "$p/100/comm"
	ln -s 'anon_inode:kvm-vm' "$p/100/fd/10"
	printf 'Name:\tqemu\nCpus_allowed_list:\t0-7\n' > "$p/100/status"
	echo 'CPU 0/KVM' > "$p/100/task/101/comm"; printf 'Cpus_allowed_list:\t0-1\n' > "$p/100/task/101/status"
	echo 'CPU 1/KVM' > "$p/100/task/102/comm"; printf 'Cpus_allowed_list:\t2-3\n' > "$p/100/task/102/status"
	printf '%s\0' perf record -a -C 2-3 -b -e cycles:D,instructions -- sleep 60 > "$p/200/cmdline"
	echo perf > "$p/200/comm"
	for i in 3 4 5 6; do ln -s 'anon_inode:[perf_event]' "$p/200/fd/$i"; done
	printf '%s\0' perf stat -e cycles -- make > "$p/300/cmdline"
	echo perf > "$p/300/comm"
	ln -s 'anon_inode:[perf_event]' "$p/300/fd/3"
}
hexfield() { awk -v l="$2" -v c="$3" '$1 == l { print $c }' "$1"; }

proc="$dir/proc"
make_proc "$proc"
j="$dir/skx.json"
if "$K" pmu check --json --sysfs-root "$FIX/intel-skx/sys" --proc-root "$proc" --dev-root "$dir" \
	--cpuid "$FIX/intel-skx/cpuid.txt" >"$j" 2>"$dir/skx.err"; then
	eax=$((0x$(hexfield "$FIX/intel-skx/cpuid.txt" a 3))); edx=$((0x$(hexfield "$FIX/intel-skx/cpuid.txt" a 6)))
	gp=$(( (eax >> 8) & 0xff )); fx=$(( edx & 0x1f ))
	# watchdog -> FIXED_CTR1 (Intel, >= 2 fixed); perf cycles:D pinned -> 1 GP on CPUs 2-3
	want_gp=$((gp - 1)); want_fx=$((fx - 1))
	got=$(jq -r '[.pmu.gp_counters, .pmu.fixed_counters, .pmu.lbr_depth, .vms[0].available_gp,
		.vms[0].available_fixed, .vms[0].may_read_wrong_values, .vms[0].lbr_may_be_taken] | @tsv' "$j")
	want=$(printf '%s\t%s\t%s\t%s\t%s\ttrue\ttrue' $gp $fx "$(cat "$FIX/intel-skx/sys/bus/event_source/devices/cpu/caps/branches")" $want_gp $want_fx)
	[ "$got" = "$want" ] && ok "pmu_check_intel_arith ($got)" || nok "pmu_check_intel_arith: got '$got' want '$want'"
	jq -e '.vms[0].verdict | (contains("may read wrong values") and contains("NMI watchdog") and contains("perf (pid 200)"))' "$j" >/dev/null &&
		ok pmu_check_intel_verdict_names || nok "pmu_check_intel_verdict_names: $(jq -r '.vms[0].verdict' "$j")"
	jq -e '[.holders[] | select(.pid == 200 and .system_wide and .pinned_events == 1 and .lbr and .cpus == "2-3")] | length == 1' "$j" >/dev/null &&
	jq -e '[.holders[] | select(.pid == 300 and (.system_wide | not) and .pinned_events == 0)] | length == 1' "$j" >/dev/null &&
		ok pmu_check_holders_classified || nok "pmu_check_holders_classified"
	jq -e '.vms[0] | .name == "vm1" and .pmu == 1 and .lbr_fmt == "0x5" and .vcpus == 2 and .cpus == "0-3"' "$j" >/dev/null &&
		ok pmu_check_vm_parsed || nok "pmu_check_vm_parsed: $(jq -c '.vms[0]' "$j")"
else
	nok "pmu_check_intel: $(head -1 "$dir/skx.err")"
fi

# AMD Zen 4: no fixed counters, the watchdog takes a GP counter; VM on CPUs 0-1 only
make_proc "$proc"
printf 'Cpus_allowed_list:\t0-1\n' > "$proc/100/task/102/status"
j="$dir/zen4.json"
if "$K" pmu check --json --sysfs-root "$FIX/amd-zen4/sys" --proc-root "$proc" --dev-root "$dir" \
	--cpuid "$FIX/amd-zen4/cpuid.txt" >"$j" 2>"$dir/zen4.err"; then
	ebx=$((0x$(hexfield "$FIX/amd-zen4/cpuid.txt" 80000022 4)))
	gp=$(( ebx & 0xf )); lbr=$(( (ebx >> 4) & 0x3f ))
	got=$(jq -r '[.pmu.gp_counters, .pmu.lbr_depth, .vms[0].available_gp, .vms[0].may_read_wrong_values] | @tsv' "$j")
	want=$(printf '%s\t%s\t%s\ttrue' $gp $lbr $((gp - 1)))
	[ "$got" = "$want" ] && ok "pmu_check_amd_arith ($got)" || nok "pmu_check_amd_arith: got '$got' want '$want'"
	jq -e '.vms[0].verdict | (contains("NMI watchdog") and (contains("perf (pid 200)") | not))' "$j" >/dev/null &&
		ok pmu_check_amd_cpus_disjoint || nok "pmu_check_amd_cpus_disjoint: $(jq -r '.vms[0].verdict' "$j")"
else
	nok "pmu_check_amd: $(head -1 "$dir/zen4.err")"
fi

# No hardware PMU (like this build machine), watchdog off, VM with pmu off.
make_proc "$proc"
echo 0 > "$proc/sys/kernel/nmi_watchdog"
j="$dir/nopmu.json"
"$K" pmu check --sysfs-root "$FIX/vm-nopmu/sys" --proc-root "$proc" --dev-root "$dir" \
	--cpuid "$FIX/vm-nopmu/cpuid.txt" >"$dir/nopmu.txt" 2>&1
"$K" pmu check --json --sysfs-root "$FIX/vm-nopmu/sys" --proc-root "$proc" --dev-root "$dir" \
	--cpuid "$FIX/vm-nopmu/cpuid.txt" >"$j" 2>&1
if grep -q 'no hardware PMU is exposed' "$dir/nopmu.txt" && grep -q 'no /dev/kvm: no KVM\|not loaded' "$dir/nopmu.txt" &&
   jq -e '.pmu.hardware_pmu == false and .pmu.hypervisor and (.vms[0].verdict | contains("no hardware PMU"))' "$j" >/dev/null; then
	ok pmu_check_no_hw_pmu
else
	nok "pmu_check_no_hw_pmu: $(head -3 "$dir/nopmu.txt" | tr '\n' ' ')"
fi

# ---- check, live: real perf sessions must be named ----
if command -v perf >/dev/null 2>&1; then
	timeout 30 perf stat -a -e cpu-clock -- sleep 20 >/dev/null 2>&1 &
	p1=$!
	timeout 30 perf record -a -e cpu-clock -o "$dir/live.data" -- sleep 20 >/dev/null 2>&1 &
	p2=$!
	found=0
	for i in $(seq 1 50); do
		"$K" pmu check --json >"$dir/live.json" 2>/dev/null
		n=$(jq '[.holders[] | select(.is_perf and .system_wide and (.cmdline | test("perf.*(stat|record) -a -e cpu-clock")))] | length' "$dir/live.json")
		[ "$n" = 2 ] && { found=1; break; }
		sleep 0.2
	done
	# the real pids are the perf processes under timeout (children of $p1/$p2)
	pids=$(jq -r '[.holders[] | select(.is_perf) | .pid] | @tsv' "$dir/live.json")
	kids="$(pgrep -P $p1 | head -1) $(pgrep -P $p2 | head -1)"
	kill $p1 $p2 2>/dev/null; wait $p1 $p2 2>/dev/null
	named=1
	for k in $kids; do case "	$pids	" in *"	$k	"*) ;; *) named=0;; esac; done
	if [ $found = 1 ] && [ $named = 1 ]; then
		ok "pmu_check_live_perf_sessions (pids $kids)"
	else
		nok "pmu_check_live_perf_sessions: found=$found holders=[$pids] perf pids=[$kids]"
	fi
	jq -e --arg k "$kids" '[.holders[] | select(.pid as $p | $k | split(" ") | index($p | tostring)) | .hw_events] | length == 2 and all(. == 0)' "$dir/live.json" >/dev/null &&
		ok pmu_check_live_software_events_take_no_counter || nok pmu_check_live_software_events_take_no_counter
else
	echo "skip pmu_check_live: perf is not installed"
fi
exit 0
