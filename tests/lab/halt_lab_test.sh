#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# halt_lab_test.sh - kvmscope stat --event halt on real halts: the nested
# lab (tests/lab/nested.sh) runs a QEMU -accel kvm whose SeaBIOS halts, and
# records one window of it exactly (tests/lab/halt_guest.sh).  Run by `make
# check-lab` with KVMSCOPE, KS_BUILD, KS_TMP.  KS_LAB=0 skips it.
# timeout: 300
#
# Also tools/minivmm, whose short LAPIC-timer halts KVM polls, with the
# statistics each vCPU reads from KVM itself (KVM_GET_STATS_FD) at its end.
# Compared here (tests/lab/halt_compare.py): the view's counts per vCPU
# (halts, ended while polling, slept, invalid, ns of the polled halts,
# window grows and shrinks) == the raw kvm_vcpu_wakeup / kvm_halt_poll_ns
# events of `trace-cmd report` of the same recording, counted in the test;
# and those == (or within what KVM's code allows of) QEMU's query-stats
# read with the VM paused before and after the window.  The view's text
# and the comparison are kept as test output (halt-report.txt,
# halt-compare.txt in the lab's out directory, and printed as # lines).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
KVMSCOPE=${KVMSCOPE:-$root/build/kvmscope}
KS_BUILD=${KS_BUILD:-$root/build}
KS_TMP=${KS_TMP:-$(mktemp -d)}
export LAB_WORK="$KS_TMP/lab"
CMP="$root/tests/lab/halt_compare.py"

if [ "${KS_LAB:-1}" = 0 ]; then
	echo "skip halt-lab: KS_LAB=0"
	exit 0
fi
VMM="$KS_BUILD/tools/minivmm"
[ -x "$KVMSCOPE" ] && [ -x "$VMM" ] || { echo "skip halt-lab: no $KVMSCOPE or $VMM"; exit 0; }
# shellcheck source=tests/lab/lab.sh
. "$root/tests/lab/lab.sh"
# shellcheck source=tests/lab/nested.sh
. "$root/tests/lab/nested.sh"
if ! nested_setup; then
	echo "skip halt-lab: $LAB_ERR"
	exit 0
fi
echo "# nested lab kernel: $LAB_KDEB"
trap 'nested_kill h1' EXIT

NESTED_ENV="KVMSCOPE=$KVMSCOPE
VMM=$VMM
VMM_ARGS='--vms 1 --vcpus 2 --loops ${KS_LAB_HALT_LOOPS:-400} --ticks ${KS_LAB_HALT_TICKS:-20000}'
LABCTL_DIR=$root/tests/lab
WARM=${KS_LAB_HALT_WARM:-12}
WINDOW=${KS_LAB_HALT_WINDOW:-10}"
t0=$SECONDS
if ! nested_run h1 "$root/tests/lab/halt_guest.sh" 240; then
	echo "not ok halt-lab-guest: $LAB_ERR"
	exit 0
fi
o="$LAB_D/out"
echo "# guest ran in $((SECONDS - t0)) s: $(grep '^# ' "$o/guest.log" | tr '\n' ' ')"
if [ "$(cat "$o/guest.rc")" != 0 ] || [ "$(cat "$o/rec.rc" 2>/dev/null)" != 0 ]; then
	echo "not ok halt-lab-ran: guest $(cat "$o/guest.rc"), record $(cat "$o/rec.rc" 2>/dev/null):" \
		"$(tail -3 "$o/guest.log" "$o/rec.err" 2>/dev/null | tr '\n' ' ')"
	exit 0
fi
echo "ok halt-lab-ran"

# A. minivmm: the view == the raw events == each vCPU's KVM statistics
if [ "$(cat "$o/vmm.rc")" = 0 ] && [ "$(cat "$o/vrec.rc")" = 0 ]; then
	trace-cmd report "$o/vmm.dat" > "$o/vtc.txt" 2> "$o/vtc.err"
	"$KVMSCOPE" stat -i "$o/vmm.dat" --event halt --json > "$o/vmm-halt.json" 2> "$o/vmm-halt.err"
	"$KVMSCOPE" stat -i "$o/vmm.dat" --event halt > "$o/vmm-halt-report.txt" 2>> "$o/vmm-halt.err"
	sed 's/^/# /' "$o/vmm-halt-report.txt"
	if python3 "$CMP" comparevmm "$o/vmm-halt.json" "$o/vtc.txt" "$o/vmm.json" > "$o/vmm-compare.txt" 2>&1; then
		echo "ok halt-view-eq-raw-events-and-kvm-stats-minivmm ($(tail -1 "$o/vmm-compare.txt"))"
	else
		echo "not ok halt-view-eq-raw-events-and-kvm-stats-minivmm: $(grep -v '^ ' "$o/vmm-compare.txt" | tail -2 | tr '\n' ' ') $(head -2 "$o/vmm-halt.err")"
	fi
	sed 's/^/# /' "$o/vmm-compare.txt"
else
	echo "not ok halt-lab-minivmm-ran: minivmm $(cat "$o/vmm.rc"), record $(cat "$o/vrec.rc"): $(tail -3 "$o/vmm.err" "$o/vrec.err" | tr '\n' ' ')"
fi

# B. QEMU: the view == the raw events == query-stats over the window
trace-cmd report "$o/halt.dat" > "$o/tc.txt" 2> "$o/tc.err"
"$KVMSCOPE" stat -i "$o/halt.dat" --event halt --json > "$o/halt.json" 2> "$o/halt.err"
"$KVMSCOPE" stat -i "$o/halt.dat" --event halt > "$o/halt-report.txt" 2>> "$o/halt.err"
sed 's/^/# /' "$o/halt-report.txt"
if python3 "$CMP" compare "$o/halt.json" "$o/tc.txt" "$o/stats.before" "$o/stats.after" \
	> "$o/halt-compare.txt" 2>&1; then
	echo "ok halt-view-eq-raw-events-and-query-stats ($(tail -1 "$o/halt-compare.txt"))"
else
	echo "not ok halt-view-eq-raw-events-and-query-stats: $(grep -v '^ ' "$o/halt-compare.txt" | tail -2 | tr '\n' ' ') $(head -2 "$o/halt.err")"
fi
sed 's/^/# /' "$o/halt-compare.txt"
# the same recording as ftrace text (trace-cmd report -t): the same view,
# but for the VM's number (the text has no tgid; QEMU's vCPU threads are
# one VM by their names "CPU N/KVM")
trace-cmd report -t "$o/halt.dat" > "$o/tct.txt" 2>/dev/null
"$KVMSCOPE" stat -i "$o/tct.txt" --event halt --json > "$o/halt-text.json" 2> "$o/halt-text.err"
why=$(python3 - "$o/halt-text.json" "$o/halt.json" <<'PY'
import json, sys
def norm(o):
    # per-VM recommendations need the VM of each vCPU thread, which a text
    # without tgids cannot always give (QEMU's two vCPU threads were one VM
    # in one run, two in another): the view's per-vCPU rows are compared
    if isinstance(o, dict):
        return {k: norm(v) for k, v in o.items()
                if k not in ("input", "vm", "vm_name", "recommendations")}
    if isinstance(o, list):
        return [norm(v) for v in o]
    return o
try:
    a, b = (norm(json.load(open(p))) for p in sys.argv[1:3])
except ValueError:
    sys.exit("no JSON")
print("OK" if a == b else "differs in " + " ".join(k for k in b if a.get(k) != b[k]))
PY
)
[ "$why" = OK ] && echo "ok halt-view-of-ftrace-text-eq-trace.dat (real QEMU halts)" ||
	echo "not ok halt-view-of-ftrace-text-eq-trace.dat: $why $(head -1 "$o/halt-text.err")"

# the comparison can fail: one halt dropped from the view
if KS_LAB_PLANT=1 python3 "$CMP" compare "$o/halt.json" "$o/tc.txt" "$o/stats.before" \
	"$o/stats.after" > "$o/plant.txt" 2>&1 ||
	KS_LAB_PLANT=1 python3 "$CMP" comparevmm "$o/vmm-halt.json" "$o/vtc.txt" "$o/vmm.json" > "$o/plant2.txt" 2>&1; then
	echo "not ok halt-planted-difference-fails: one halt dropped, compare still passed"
else
	echo "ok halt-planted-difference-fails ($(tail -1 "$o/plant.txt" | cut -c1-120) / $(tail -1 "$o/plant2.txt" | cut -c1-120))"
fi
# kept for the record: where the outputs are
echo "# halt lab outputs: $o (kept when KS_TMP is given)"
exit 0
