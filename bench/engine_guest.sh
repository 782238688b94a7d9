#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# engine_guest.sh - what bench/engine.sh (b) runs in the nested lab's
# guest (lab.env sets KVMSCOPE, VMM, VMM_LOOPS, ROUNDS): the minimal VMM's
# rate, one VM with one vCPU, untraced and under each tracer in turn,
# ROUNDS times interleaved; rates.txt gets "NAME EXITS/S" (medians).
set -u
. ./lab.env

# one VMM run: its wall seconds
vmm_wall() {
	local t0 t1
	t0=$(date +%s.%N)
	"$VMM" --vms 1 --vcpus 1 --loops "$VMM_LOOPS" > vmm.json 2> vmm.err || return 1
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}

# traced NAME CMD...: the tracer started (2 s to attach), one VMM run,
# the tracer stopped; "NAME WALL" appended to runs.txt
traced() {
	local name=$1 pid w
	shift
	"$@" > "$name.out" 2> "$name.err" &
	pid=$!
	sleep 2
	w=$(vmm_wall) || w=nan
	sleep 1
	kill -INT "$pid"
	wait "$pid"
	echo "$name $w" >> runs.txt
}

: > runs.txt
for r in $(seq "$ROUNDS"); do
	echo "untraced $(vmm_wall || echo nan)" >> runs.txt
	traced bpf "$KVMSCOPE" stat --live --engine bpf --json
	traced tracefs "$KVMSCOPE" stat --live --engine tracefs --json
	traced perf-live perf kvm stat live -d 1
done
# exits per VMM run: what the tracefs engine counted in its last run
exits=$(python3 -c '
import json, sys
d = json.load(open("tracefs.out"))
print(sum(r["samples"] for r in d["views"][0]["rows"]))' 2>/dev/null || echo 0)
echo "# $exits exits per run of $VMM_LOOPS loops ($(uname -r))" > rates.txt
for n in untraced bpf tracefs perf-live; do
	awk -v n="$n" -v e="$exits" '$1 == n && $2 != "nan" { print $2 }' runs.txt | sort -g |
		awk -v n="$n" -v e="$exits" '{ v[NR] = $1 } END {
			if (NR) printf "%s %.0f exits/s (median of %d runs: %.3f s)\n", n, e / v[int((NR + 1) / 2)], NR, v[int((NR + 1) / 2)] }' >> rates.txt
done
cat rates.txt
