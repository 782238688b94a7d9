#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# nested_guest.sh - what the nested lab's guest runs (tests/lab/nested.sh
# boots it, chrooted into this machine's root, in its writable out
# directory).  lab.env there sets KVMSCOPE, VMM, VMM_ARGS.
#
# One window, every tool at once over the same exits: kvmscope record,
# perf kvm stat record -a, kvmscope top --batch --json; then minivmm runs;
# then each tool is stopped.  The host side (nested_test.sh) compares.
set -u
. ./lab.env
log() { echo "# $(date +%T.%N | cut -c1-12) $*"; }
T=/sys/kernel/tracing

# wait_for COND SECS: poll a shell condition
wait_for() {
	local i
	for i in $(seq 1 $(($2 * 5))); do
		eval "$1" && return 0
		sleep 0.2
	done
	return 1
}

log "kernel $(uname -r), $(nproc) CPUs, kvm_amd $(cat /sys/module/kvm_amd/parameters/npt 2>/dev/null)"
ls "$T/instances" > instances.before
"$KVMSCOPE" record -o rec.dat 2> rec.err &
rpid=$!
perf kvm stat record -a -o perf.data > perf.out 2> perf.err &
ppid=$!
"$KVMSCOPE" top --batch --json -d 1 > top.json 2> top.err &
tpid=$!
# kvmscope's tracefs instance exists and perf wrote its header: both are
# recording (perf enables its events before it writes the header)
wait_for '[ "$(ls $T/instances | wc -l)" -gt "$(wc -l < instances.before)" ] && [ -s perf.data ]' 60 ||
	log "tools did not start: $(ls $T/instances) $(ls -l perf.data 2>&1)"
sleep 2
log "tools started: $(ls $T/instances | tr '\n' ' ')"
# shellcheck disable=SC2086
"$VMM" $VMM_ARGS > vmm.json 2> vmm.err
echo $? > vmm.rc
log "vmm done (exit $(cat vmm.rc))"
sleep 2
kill -INT "$tpid" "$ppid" "$rpid"
wait "$rpid"; echo $? > rec.rc
wait "$ppid"; echo $? > perf.rc
wait "$tpid"; echo $? > top.rc
log "tools stopped: record $(cat rec.rc), perf $(cat perf.rc), top $(cat top.rc)"
ls -l
