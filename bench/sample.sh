#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# sample.sh BUILD - kvmscope sample throughput and guest impact on the lab guest.
#
# Boots the lab guest (tests/lab/lab.sh, 1 vCPU, TCG) and measures:
#  1. max rate: -F 5000 for 1000 samples with full kernel+user unwinding
#     (target >= 500 samples/s, guest held < 1 ms median);
#  2. guest impact at 99 Hz: labprog count's iterations per host second
#     (from its "C <n>" lines on ttyS2), 4 s idle vs 4 s of steady sampling
#     (from 1 s after the sampler started: its one-time setup is not
#     sampling), five alternating pairs, median drop (target: at most 5%).
set -u
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
KVMSCOPE="$root/$build/kvmscope"
export LAB_WORK=${LAB_WORK:-$(mktemp -d /tmp/kvmscope-bench.XXXXXX)}
. "$root/tests/lab/lab.sh"
lab_setup || { echo "bench sample: skipped: $LAB_ERR"; exit 0; }
trap 'lab_stop b1' EXIT
lab_boot b1 1 count || { echo "bench sample: $LAB_ERR"; exit 1; }
S() { "$KVMSCOPE" sample --gdb 127.0.0.1:$LAB_GDB_PORT --guest-kallsyms "$LAB_KALLSYMS" \
	--guest-binary "$LAB_PROG" -o /dev/null "$@"; }
echo "== max rate (1000 samples, -F 5000)"
S -n 1000 -F 5000 2>&1 | grep -E 'samples|held|stacks'
last() { tail -n 50 "$LAB_D/ttyS2" | tr -d '\r' | grep -a '^C [0-9]*$' | tail -1 | cut -d' ' -f2; }
rate() { # SECONDS [sampler args]: iterations per host second; with sampler
	# args, measured while a sampler runs, after its start (connecting and
	# reading the ORC tables hold the guest ~0.3 s once: not steady state)
	local secs=$1 a b t0 t1 sp=; shift
	if [ $# -gt 0 ]; then
		S -d $((secs + 2)) "$@" 2>/dev/null & sp=$!
		sleep 1
	fi
	a=$(last); t0=$(date +%s.%N)
	sleep "$secs"
	b=$(last); t1=$(date +%s.%N)
	[ -n "$sp" ] && wait "$sp"
	python3 -c "print(($b - $a) / ($t1 - $t0))"
}
sleep 2
# Alternate idle and sampled windows (the guest's speed under TCG drifts by
# several percent over tens of seconds): 5 pairs of 4 s, median drop.
drops=
for i in 1 2 3 4 5; do
	idle=$(rate 4)
	busy=$(rate 4 -F 99)
	drops="$drops $(python3 -c "print(100 * ($idle - $busy) / $idle)")"
done
python3 -c "
d = sorted(float(x) for x in '$drops'.split())
print('== 99 Hz impact: busy-loop drop per idle/sampled pair: %s; median %.1f%% (target <= 5%%)'
      % (' '.join('%.1f%%' % x for x in d), d[len(d) // 2]))"
