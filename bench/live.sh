#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# live.sh - benchmarks of kvmscope record and top on this machine's tracefs.
#
#   bench/live.sh [BUILD]      (root; tracefs; perf and python3 for the load)
#
# 1. record throughput: two `perf bench syscall basic` loops (one per core)
#    with raw_syscalls:* and syscalls:sys_*_getppid enabled (4 events per
#    getppid) are recorded for SECS seconds into a zstd v7 trace.dat with a
#    64 MB per-CPU buffer; prints events/s, lost events, the recorder's CPU
#    time.  The load shares the 2 cores with the recorder.
# 2. sustained recording: a paced 2.2 M events/s for 10 s (see below).
# 3. top overhead: a python loop paced at 50 k getppid/s (100 k raw_syscalls
#    events/s) is watched by `kvmscope top --batch` for SECS seconds; prints
#    top's CPU time per second of wall time (percent of one core).
set -u
build=${1:-build}
ks=$(cd "$(dirname "$0")/.." && pwd)/$build/kvmscope
secs=${SECS:-3}
tmp=$(mktemp -d /tmp/kvmscope-bench-live.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

[ -x "$ks" ] || { echo "no $ks: build first"; exit 1; }
[ -w /sys/kernel/tracing/instances ] || { echo "skip: tracefs not writable (root?)"; exit 0; }

echo "== record: syscall storm on both cores, ${secs}s"
loops=$((secs * 1500000))
perf bench syscall basic --loop $loops >/dev/null 2>&1 & g1=$!
perf bench syscall basic --loop $loops >/dev/null 2>&1 & g2=$!
/usr/bin/time -f "%U %S %e" -o "$tmp/time" "$ks" record -b 65536 -e 'raw_syscalls:*' \
	-e 'syscalls:sys_*_getppid' -d "$secs" -o "$tmp/bench.dat" 2>"$tmp/rec.txt"
kill $g1 $g2 2>/dev/null; wait $g1 $g2 2>/dev/null
cat "$tmp/rec.txt"
events=$(sed -n 's/^kvmscope record: \([0-9]*\) events.*/\1/p' "$tmp/rec.txt")
read -r u s e < "$tmp/time"
echo "record: $(echo "$events / $secs" | bc) events/s over ${secs}s; recorder CPU ${u}s user + ${s}s sys" \
	"in ${e}s wall (incl. writing the file: $(du -h "$tmp/bench.dat" | cut -f1))"

# 2. sustained: a paced load of 2.2 M events/s (bench/syscall-load: 550 k
# getppid/s on two threads, 4 events each) for 10 s - 14x the per-CPU
# buffers, so the buffers cannot hide a recorder that falls behind.
load="$(dirname "$ks")/bench/syscall-load"
if [ -x "$load" ]; then
	echo "== record: paced 2.2 M events/s for 10 s"
	( sleep 0.3; "$load" 550000 10 2 > "$tmp/load.txt" ) &
	lg=$!
	/usr/bin/time -f "%U %S %e" -o "$tmp/time" "$ks" record -b 65536 -e 'raw_syscalls:*' \
		-e 'syscalls:sys_*_getppid' -d 10.5 -o "$tmp/sus.dat" 2>"$tmp/rec.txt"
	wait $lg
	cat "$tmp/rec.txt"
	events=$(sed -n 's/^kvmscope record: \([0-9]*\) events.*/\1/p' "$tmp/rec.txt")
	lost=$(grep -c 'LOST EVENTS' "$tmp/rec.txt")
	read -r u s e < "$tmp/time"
	echo "sustained: $(echo "$events / 10.5" | bc) events/s for 10.5 s ($(cat "$tmp/load.txt")):" \
		"$([ "$lost" = 0 ] && echo "no events lost" || echo "EVENTS LOST") (target: 2 M/s without loss);" \
		"recorder CPU ${u}s user + ${s}s sys"
	rm -f "$tmp/sus.dat"
fi

echo "== top: 100 k events/s, ${secs}s"
python3 - "$secs" <<'EOF' &
import os, sys, time
end = time.monotonic() + float(sys.argv[1]) + 2
rate = 50000  # getppid calls per second -> 2 raw_syscalls events each
t0 = time.monotonic(); n = 0
while time.monotonic() < end:
    for _ in range(500):
        os.getppid()
    n += 500
    ahead = n / rate - (time.monotonic() - t0)
    if ahead > 0:
        time.sleep(ahead)
EOF
gen=$!
sleep 0.5
/usr/bin/time -f "%U %S %e" -o "$tmp/time" "$ks" top --batch -d 1 -n "$secs" \
	-e 'raw_syscalls:*' --pid $gen > "$tmp/top.txt" 2>&1
kill $gen 2>/dev/null; wait $gen 2>/dev/null
grep '^kvmscope top' "$tmp/top.txt"
read -r u s e < "$tmp/time"
echo "top: $(echo "scale=2; 100 * ($u + $s) / $e" | bc)% of one core (${u}s user + ${s}s sys in ${e}s)"
