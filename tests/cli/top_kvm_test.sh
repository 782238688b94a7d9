#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# top_kvm_test.sh - kvmscope top against this machine's real KVM: a QEMU
# guest (-accel kvm, no kernel: the firmware runs, and KVM's kvm:*
# tracepoints fire) started by the test.
#
# Oracles:
#  - tracepoints view: the per-VM counts of every kvm:* event, summed over
#    the intervals, equal what `perf stat -e 'kvm:*' -p QEMU` (perf's own
#    counters on the same tracepoints, no ring buffer) counts for that
#    process.  The guest is started paused (-S) and runs only between a QMP
#    cont and stop that both tools' windows enclose, so the interval
#    boundaries cannot cut the comparison;
#  - kvmstats view: the values shown equal those of a direct QMP
#    query-stats done here in python3, for every statistic whose value is
#    the same before and after kvmscope's reading (the guest is paused);
#    on the screen (tmux, 80x24) the VM, its statistics and vCPU rows
#    show, nothing wrapped.
# Skips with one line where /dev/kvm, QEMU or tracefs is absent.
set -u
ks=$KVMSCOPE
dir=$KS_TMP/top-kvm
mkdir -p "$dir"
T=/sys/kernel/tracing

have() { command -v "$1" >/dev/null 2>&1; }
if [ ! -c /dev/kvm ] || [ ! -w /dev/kvm ]; then
	echo "skip top_kvm: /dev/kvm is absent"
	exit 0
fi
if ! have qemu-system-x86_64 || ! have python3; then
	echo "skip top_kvm: qemu-system-x86_64 or python3 is not installed"
	exit 0
fi

# qmp SOCKET CMD...: run QMP commands (cont, stop, stats, sleep:SECS) in order.
qmp() { python3 "$(dirname "$0")/qmp_stats.py" "$@"; }
# peers_start, wait_socket
. "$(dirname "$0")/../lib/peers.sh"

sock=$dir/qmp.sock
qemu-system-x86_64 -accel kvm -nodefaults -display none -m 64 -S -name kstest \
	-qmp unix:$sock,server=on,wait=off 2>"$dir/qemu.err" &
qpid=$!
peers_start
pids+=("$qpid")
if ! wait_socket "$sock" "$qpid"; then
	echo "not ok top_kvm_qemu: QEMU -accel kvm did not start: $(head -1 "$dir/qemu.err")"
	exit 0
fi
echo "ok top_kvm_qemu (pid $qpid)"

# ---- kvmstats: equal to a direct query-stats while the guest is paused
qmp "$sock" cont sleep:1 stop > /dev/null # some statistics become non-zero
qmp "$sock" stats > "$dir/before.json"
"$ks" top --kvmstats --qmp "$sock" -b -n 1 -v > "$dir/kvmstats.txt" 2>"$dir/err"
rc=$?
qmp "$sock" stats > "$dir/after.json"
res=$(PYTHONPATH="$(dirname "$0")" python3 - "$dir/before.json" "$dir/after.json" "$dir/kvmstats.txt" "$qpid" <<'PY'
import json, sys
import qmp_stats
before, after = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
shown, vm = {}, None
for words, stats in qmp_stats.top_view(sys.argv[3]):
    vm = words[0]
    shown.update(stats)
if not vm or not vm.startswith(sys.argv[4] + "(kstest)"):
    print("no row of VM %s(kstest) (first VM row: %s)" % (sys.argv[4], vm)); sys.exit()
stable = [k for k in before if before[k] == after.get(k)]
vm_level = [k for k in stable if k.endswith(" -1")]
checked, bad = 0, []
for k in stable:
    if k in shown:
        checked += 1
        if shown[k] != before[k]: bad.append("%s: %s, QMP %s" % (k, shown[k], before[k]))
missing = [k for k in before if k not in shown]
nonzero = sum(1 for k in stable if k in shown and before[k] not in ("0", "false"))
if bad or missing or checked < 20 or not vm_level or nonzero < 3:
    print("checked %d, %d non-zero, differ: %s; missing: %s" % (checked, nonzero, bad[:3], missing[:3]))
else:
    print("ok %d values (%d non-zero) equal QMP" % (checked, nonzero))
PY
)
case "$res" in
ok*) echo "ok top_kvm_kvmstats_equal_qmp (${res#ok })" ;;
*) echo "not ok top_kvm_kvmstats_equal_qmp: status $rc, $res $(head -1 "$dir/err")" ;;
esac

# ---- the screen at 80x24: the VM and its statistics, nothing wrapped
if have tmux; then
	s=kskvm$$
	tm() { tmux -L "$s" "$@"; }
	cap() { tm capture-pane -p -t $s; }
	tm new-session -d -s $s -x 80 -y 24 "$ks top --kvmstats --qmp $sock -v -d 0.5; echo TOP-EXITED \$?; sleep 30"
	for i in $(seq 1 30); do cap | grep -q '^  insn_emulation' && break; sleep 0.2; done
	wrapped=$(tm capture-pane -p -J -t $s | awk 'length($0) > 80' | head -1)
	if cap | head -1 | grep -q '^kvmscope top' && cap | grep -q "^$qpid(kstest)" &&
	   cap | grep -q '^    vcpu 0 ' && [ -z "$wrapped" ]; then
		echo "ok top_kvm_tmux_kvmstats_80x24"
	else
		echo "not ok top_kvm_tmux_kvmstats_80x24: $(cap | head -4 | tr '\n' '|') $wrapped"
	fi
	tm send-keys -t $s q
	sleep 0.5
	cap | grep -q 'TOP-EXITED 0' && echo "ok top_kvm_tmux_quit" || echo "not ok top_kvm_tmux_quit: $(cap | tail -2)"
	tm kill-server 2>/dev/null
fi

# ---- tracepoints: per-VM counts equal perf's counters on kvm:*
if [ ! -w "$T/instances" ]; then
	mount -t tracefs nodev "$T" 2>/dev/null
fi
if [ ! -w "$T/instances" ]; then
	echo "skip top_kvm_tracepoints: tracefs is not writable at $T (needs root)"
	exit 0
fi
if ! have perf; then
	echo "skip top_kvm_tracepoints: perf is not installed"
	exit 0
fi
# Both live engines (engine.h) over the same window: tracefs always, BPF
# where it loads (else skipped with the reason it gives).
engines=tracefs
if bpf_err=$("$ks" stat --live --engine bpf -d 0.1 2>&1 >/dev/null); then
	engines="bpf tracefs"
else
	echo "skip top_kvm_tracepoints_bpf: ${bpf_err#kvmscope: }"
fi
# Each top counts from its first interval's header on (loading the BPF
# program takes seconds, 15 s under the sanitizers): the guest runs after
# all have printed one, and before the first started has printed its last.
# So the slow one starts first and is waited for (up to 30 s): the tracefs
# top, quick to start, then prints its first header within a second or
# two, and the guest's 2 s run falls inside both tops' 10 s.
declare -A kpids
for eng in $engines; do
	"$ks" top -t -b -d 1 -n 10 --engine "$eng" > "$dir/tp-$eng.txt" 2>"$dir/tp-$eng.err" &
	kpids[$eng]=$!
	for i in $(seq 1 300); do
		grep -q '^kvmscope top' "$dir/tp-$eng.txt" 2>/dev/null && break
		sleep 0.1
	done
done
perf stat -e 'kvm:*' -p "$qpid" -x, -o "$dir/perf.txt" 2>/dev/null &
ppid=$!
sleep 0.5
qmp "$sock" cont sleep:2 stop > /dev/null
declare -A krcs
for eng in $engines; do
	wait "${kpids[$eng]}"
	krcs[$eng]=$?
done
kill -INT "$ppid"
wait "$ppid"
for eng in $engines; do
krc=${krcs[$eng]}
res=$(python3 - "$dir/tp-$eng.txt" "$dir/perf.txt" "$qpid" "$eng" <<'PY'
import sys
tp, perf, qpid, eng = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
got, vm, lost, intervals = {}, None, 0, 0
for line in open(tp):
    if line.startswith("kvmscope top"):
        if not line.startswith("kvmscope top - live (%s engine)" % eng):
            print("header does not name the %s engine: %s" % (eng, line.strip()))
            sys.exit(0)
        intervals += 1
        lost += int(line.split(", lost ")[1].split(",")[0])
        continue
    if not line.strip() or line.startswith("VM /"):
        continue
    depth = (len(line) - len(line.lstrip(" "))) // 2
    f = line.split()
    if depth == 0:
        vm = f[0].split("(")[0]
    elif depth == 1 and vm == qpid:
        got[f[0]] = got.get(f[0], 0) + int(f[1])
want = {}
for line in open(perf):
    f = line.strip().split(",")
    if len(f) > 2 and f[2].startswith("kvm:") and f[0].isdigit() and int(f[0]):
        want[f[2][4:]] = int(f[0])
total = sum(want.values())
diff = ["%s: %d, perf %d" % (k, got.get(k, 0), want.get(k, 0))
        for k in sorted(set(got) | set(want)) if got.get(k, 0) != want.get(k, 0)]
# Under load the ring buffer may overrun: then no kind may be counted
# more often than perf counted it, and what top misses must fit in the
# lost count it reported (that count covers every traced process, the
# other tests' QEMUs too, so it may be larger).  Without loss: equal.
accounted = (lost and total - sum(got.values()) <= lost and
             all(got.get(k, 0) <= want.get(k, 0) for k in got))
if intervals != 10 or (diff and not accounted) or total < 100:
    print("%d intervals, lost %d, perf total %d, differ: %s" % (intervals, lost, total, diff[:4]))
elif accounted:
    print("ok %d events of %d kinds: %d not counted, within the %d reported lost" % (
        total, len(want), total - sum(got.values()), lost))
else:
    print("ok %d events of %d kinds equal perf" % (total, len(want)))
PY
)
case "$res" in
ok*) echo "ok top_kvm_tracepoints_equal_perf_$eng (${res#ok })" ;;
*) echo "not ok top_kvm_tracepoints_equal_perf_$eng: status $krc, $res $(head -1 "$dir/tp-$eng.err")" ;;
esac
done
