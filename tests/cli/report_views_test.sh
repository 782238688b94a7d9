#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# report_views_test.sh - kvmscope report (issue 34):
#  - no guest symbols known (99% [unknown]): one line on stderr names the
#    options that give them; with the guest's trace.dat (its kallsyms) the
#    traced VM resolves and the line is gone;
#  - several VMs are not one profile: the default table has a VM column,
#    and each VM's samples are its vCPU threads' kvm_exit lines in
#    trace-cmd 3.2's report of the file (tid -> VM: the GUEST option and the
#    "CPU N/KVM" threads of host-tsync, as the data README lists them);
#  - one VM: no VM column.
set -u
ks=$KVMSCOPE
H=$KS_SHARED/data/hip24
d=$KS_TMP/report-views
mkdir -p "$d"
if [ ! -f "$H/host-tsync.trace.dat" ]; then
	echo "skip report_views: hip24 recordings absent"
	exit 0
fi
"$ks" report -i "$H/host-tsync.trace.dat" > "$d/t" 2> "$d/err"; rc=$?
if [ $rc = 0 ] && [ "$(wc -l < "$d/err")" = 1 ] && grep -q -- '--guest-kallsyms' "$d/err" &&
   grep -q '99% of the samples are in guest kernel code without symbols' "$d/err"; then
	echo "ok report_hint_symbols"
else
	echo "not ok report_hint_symbols: exit $rc, stderr '$(cat "$d/err")'"
fi
if [ -f "$H/guest-tsync.trace.dat" ]; then
	"$ks" report -i "$H/host-tsync.trace.dat" -i "$H/guest-tsync.trace.dat" > /dev/null 2> "$d/err2"
	[ ! -s "$d/err2" ] && echo "ok report_hint_gone_with_symbols" ||
		echo "not ok report_hint_gone_with_symbols: '$(cat "$d/err2")'"
fi
# per VM: the table's VM column against trace-cmd's report
want=$(zcat "$H/expected/host-tsync.report-ns.txt.gz" | grep 'kvm_exit:' |
	sed -E 's/^ *.*-([0-9]+) +\[.*/\1/' |
	awk '{ vm = ($1 == 453725) ? 453724 : $1; n[vm]++ } END { for (v in n) print v, n[v] }' | sort)
# (the VM column holds the VM's display name, PID or PID(NAME))
got=$(awk '/^# Exits/ { exit } /^ +[0-9.]+% / { vm = $3; sub(/\(.*/, "", vm); n[vm] += $2 } END { for (v in n) print v, n[v] }' "$d/t" | sort)
if grep -q '^# Overhead  Samples  VM ' "$d/t" && [ -n "$got" ] && [ "$got" = "$want" ]; then
	echo "ok report_per_vm: $(echo $got)"
else
	echo "not ok report_per_vm: '$(echo $got)' vs trace-cmd's '$(echo $want)'; $(sed -n 4p "$d/t")"
fi
if [ -f "$H/host-1vcpu-9k.trace.dat" ]; then
	"$ks" report -i "$H/host-1vcpu-9k.trace.dat" 2> /dev/null | grep -q '^# Overhead  Samples  Mode ' &&
		echo "ok report_one_vm_no_column" || echo "not ok report_one_vm_no_column"
fi
