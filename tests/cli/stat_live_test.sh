#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# stat_live_test.sh - kvmscope stat --live and the live engines' choice
# (engine.h): usage errors, the fallback from BPF to tracefs with its one
# line on stderr under a real condition (root without CAP_BPF,
# CAP_PERFMON and CAP_SYS_ADMIN: BPF cannot load, tracefs still opens),
# and the error of an unprivileged user for whom no engine can run.
# The exits' equality with perf is the nested lab's (tests/lab): this
# machine's KVM takes no kvm_exit.
set -u
ks=$KVMSCOPE
dir=$KS_TMP/stat-live
mkdir -p "$dir"

check() { # name condition-result message
	if [ "$2" = 0 ]; then echo "ok $1"; else echo "not ok $1: $3"; fi
}

# ---- usage errors: exit 2 with one line naming the option
for args in "stat --live --engine foo" "top --engine foo -b -n 1" "exporter --engine foo" \
	    "stat -d 1 -i /dev/null" "stat --live -i /dev/null" "stat --live --format perf" \
	    "stat --live --than 1ms" "top -i /dev/null --engine tracefs" \
	    "top --engine bpf -e kvm:kvm_exit -b -n 1"; do
	name=$(echo "$args" | tr -c 'a-z0-9\n' _)
	$ks $args > "$dir/out" 2>"$dir/err"; rc=$?
	check "engine_usage_$name" $(( rc != 2 || $(wc -l < "$dir/err") != 1 )) \
		"status $rc, stderr: $(head -2 "$dir/err" | tr '\n' ' ')"
done
grep -q "^kvmscope stat: --engine takes auto, bpf or tracefs, not 'foo'" "$dir/err" 2>/dev/null ||
	$ks stat --live --engine foo 2>&1 | grep -q "takes auto, bpf or tracefs, not 'foo'"
check engine_usage_names_choices $? "the bad --engine's message does not list the engines"

T=/sys/kernel/tracing
if [ "$(id -u)" != 0 ] || [ ! -w "$T/instances" ]; then
	echo "skip stat_live_engines: needs root and a writable tracefs at $T"
	exit 0
fi

# ---- no engine can run: an unprivileged user; one line, both reasons, exit 1
if command -v setpriv >/dev/null; then
	setpriv --reuid 65534 --regid 65534 --clear-groups "$ks" stat --live -d 0.2 \
		> "$dir/out" 2>"$dir/err"; rc=$?
	grep -q '^kvmscope: stat: no live engine: BPF: .*; tracefs: .*' "$dir/err"
	check stat_live_unprivileged_error $(( rc != 1 || $? || $(wc -l < "$dir/err") != 1 )) \
		"status $rc, stderr: $(head -2 "$dir/err" | tr '\n' ' ')"
else
	echo "skip stat_live_unprivileged_error: setpriv is not installed"
fi

# ---- BPF cannot load (no CAP_BPF / CAP_PERFMON / CAP_SYS_ADMIN), tracefs
# can (root owns it): AUTO says why in one line and uses tracefs; --engine
# bpf is an error
if command -v setpriv >/dev/null; then
	drop="-bpf,-perfmon,-sys_admin"
	setpriv --bounding-set "$drop" --inh-caps "$drop" "$ks" stat --live -d 0.3 --json \
		> "$dir/auto.json" 2>"$dir/auto.err"; rc=$?
	python3 - "$dir/auto.json" <<'PY' 2>/dev/null
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["input"] == "live (tracefs engine)" and d["input_format"] == "live" else 1)
PY
	j=$?
	grep -qx 'kvmscope: stat: BPF engine unavailable: .*; using tracefs' "$dir/auto.err" &&
		! grep -q 'unavailable: .*unavailable' "$dir/auto.err"
	check stat_live_auto_falls_back $(( rc || j || $? || $(wc -l < "$dir/auto.err") != 1 )) \
		"status $rc, JSON ok $j, stderr: $(head -2 "$dir/auto.err" | tr '\n' ' ')"
	setpriv --bounding-set "$drop" --inh-caps "$drop" "$ks" stat --live --engine bpf -d 0.2 \
		> "$dir/out" 2>"$dir/err"; rc=$?
	check stat_live_bpf_refused $(( rc != 1 || $(wc -l < "$dir/err") != 1 )) \
		"status $rc, stderr: $(head -2 "$dir/err" | tr '\n' ' ')"
fi

# ---- the tracefs engine leaves no instance; a table in each format
ours=""
for fmt in "" --json --csv; do
	"$ks" stat --live --engine tracefs -d 0.3 $fmt --by vm,vcpu,reason > "$dir/out" 2>"$dir/err" &
	p=$!
	ours="$ours $p"
	wait $p
	rc=$?
	check "stat_live_tracefs${fmt:+_${fmt#--}}" $(( rc || $(wc -c < "$dir/out") == 0 )) \
		"status $rc, $(head -2 "$dir/err" | tr '\n' ' ')"
done
# other tests' instances may exist now (a killed record's, on purpose):
# only those of the runs above count
left=0
for p in $ours; do
	compgen -G "$T/instances/kvmscope-$p-*" >/dev/null && left=$((left + 1))
done
check stat_live_no_instance_left $(( left != 0 )) "$left instances of the stat --live runs left"
