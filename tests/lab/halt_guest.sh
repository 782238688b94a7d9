#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# halt_guest.sh - what the nested lab's guest runs for the halt view's
# check (tests/lab/halt_lab_test.sh boots it with tests/lab/nested.sh).
# lab.env there sets KVMSCOPE, LABCTL_DIR, WARM, WINDOW, VMM, VMM_ARGS.
#
# A. tools/minivmm's vCPUs halt until their LAPIC timer (--ticks ns) wakes
# them: short halts, so KVM polls; kvmscope record runs across the whole
# run, and each vCPU reads KVM's statistics of its own life at its end.
# B. A real QEMU -accel kvm with no disk: SeaBIOS boots, finds nothing to boot
# and waits with hlt for its timer, so KVM's halt path (kvm_vcpu_halt:
# polling, kvm_vcpu_wakeup, kvm_halt_poll_ns) runs for real.  One window,
# exact at both ends: the VM is paused (QMP stop: every vCPU is out of
# KVM_RUN, the halt in progress closed and counted) while KVM's statistics
# are read (query-stats, stats.before), kvmscope record starts, the VM runs
# WINDOW seconds (cont ... stop), the statistics are read again
# (stats.after), then record stops.  No halt happens outside the window.
set -u
. ./lab.env
log() { echo "# $(date +%T.%N | cut -c1-12) $*"; }
T=/sys/kernel/tracing
qmp() { python3 "$LABCTL_DIR/halt_compare.py" qmp /tmp/halt.sock "$@"; }
wait_for() { # COND SECS
	local i
	for i in $(seq 1 $(($2 * 5))); do
		eval "$1" && return 0
		sleep 0.2
	done
	return 1
}

log "kernel $(uname -r), halt_poll_ns $(cat /sys/module/kvm/parameters/halt_poll_ns)" \
	"grow $(cat /sys/module/kvm/parameters/halt_poll_ns_grow)" \
	"shrink $(cat /sys/module/kvm/parameters/halt_poll_ns_shrink)"
# KVM polls at most halt_poll_ns (200 us by default); halts under TCG last
# 0.1 ms and more, so a wider limit (2 ms: what a user tuning for latency
# would set) lets the window grow until polls win
P=/sys/module/kvm/parameters/halt_poll_ns
old_poll=$(cat $P)
echo "${VMM_POLL_NS:-2000000}" > $P || log "cannot set $P"
log "minivmm: halt_poll_ns $(cat $P)"
ls $T/instances > instances.before
"$KVMSCOPE" record -e kvm:kvm_vcpu_wakeup -e kvm:kvm_halt_poll_ns -e kvm:kvm_entry \
	-e kvm:kvm_exit -o vmm.dat 2> vrec.err &
rpid=$!
wait_for '[ "$(ls $T/instances | wc -l)" -gt "$(wc -l < instances.before)" ]' 60 ||
	log "record did not start: $(cat vrec.err)"
sleep 2
# shellcheck disable=SC2086
"$VMM" $VMM_ARGS > vmm.json 2> vmm.err
echo $? > vmm.rc
sleep 1
kill -INT "$rpid"
wait "$rpid"
echo $? > vrec.rc
echo "$old_poll" > $P
log "minivmm done: $(cat vmm.rc), record $(cat vrec.rc)"

qemu-system-x86_64 -accel kvm -cpu qemu64 -m 64 -smp 2 -display none -nodefaults \
	-name haltvm,debug-threads=on -qmp unix:/tmp/halt.sock,server=on,wait=off \
	-pidfile /tmp/halt.pid > qemu.log 2>&1 &
qpid=$!
wait_for '[ -S /tmp/halt.sock ] && [ -s /tmp/halt.pid ]' 60 || { log "QEMU did not start"; exit 1; }
cp /tmp/halt.pid qemu.pid
# SeaBIOS's boot: past it the vCPU halts until its timer
sleep "$WARM"
qmp stop stats=stats.before || { log "QMP stop failed"; exit 1; }
ls $T/instances > instances.before
"$KVMSCOPE" record -e kvm:kvm_vcpu_wakeup -e kvm:kvm_halt_poll_ns -e kvm:kvm_entry \
	-e kvm:kvm_exit -o halt.dat 2> rec.err &
rpid=$!
# record's tracefs instance exists: it is tracing (the VM is paused meanwhile)
wait_for '[ "$(ls $T/instances | wc -l)" -gt "$(wc -l < instances.before)" ]' 60 ||
	log "record did not start: $(cat rec.err)"
sleep 2
log "window: ${WINDOW} s"
qmp cont
sleep "$WINDOW"
qmp stop stats=stats.after
sleep 1
kill -INT "$rpid"
wait "$rpid"
echo $? > rec.rc
qmp quit
wait "$qpid"
log "done: record $(cat rec.rc)"
