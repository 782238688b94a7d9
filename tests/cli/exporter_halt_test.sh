#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# exporter_halt_test.sh - the exporter's halt histogram
# (kvmscope_halt_exit_duration_seconds) holds the exits that halt the vCPU
# on every architecture, as the kernel names them, not a list of x86/arm64
# names: x86 HLT (EXIT_REASON_HLT 12), arm64 WFx (ESR_ELx_EC_WFx), s390
# "Wait state" (ICPT_WAIT 0x1c: the guest loaded a wait PSW), loongarch
# "Idle" (the IDLE instruction, traced as kvm_exit_idle).  Inputs: generated
# perf.data of every reason (tools/gen-kvm-perfdata, tests/cli/arch_oracle.py
# scenarios), replayed; every other reason is in the ordinary histogram.
set -u
ks=$KVMSCOPE
GEN=$KS_BUILD/tools/gen-kvm-perfdata
dir=$KS_TMP/exporter-halt
mkdir -p "$dir"
if ! command -v curl >/dev/null; then
	echo "skip exporter_halt: no curl"
	exit 0
fi
EPID=
trap '[ -n "$EPID" ] && kill "$EPID" 2>/dev/null; wait 2>/dev/null' EXIT

for spec in "arm64:WFx" "s390:Wait state" "loongarch:Idle"; do
	arch=${spec%%:*} want=${spec#*:}
	python3 tests/cli/arch_oracle.py scenario "$arch" "$dir/$arch.scn" "$dir/$arch.exp"
	if ! "$GEN" --formats "tests/fixtures/$arch" --machine "$arch" -o "$dir/$arch.data" "$dir/$arch.scn"; then
		echo "not ok exporter_halt_$arch: the generator failed"
		continue
	fi
	log=$dir/$arch.log
	"$ks" exporter --listen 127.0.0.1:0 -i "$dir/$arch.data" --speed max 2> "$log" &
	EPID=$!
	port= got=
	for _ in $(seq 300); do
		port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\)\/metrics/\1/p' "$log")
		if [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/metrics" -o "$dir/$arch.prom" &&
		   grep -q '^kvmscope_replay_finished 1' "$dir/$arch.prom"; then
			got=1
			break
		fi
		kill -0 "$EPID" 2>/dev/null || break
		sleep 0.1
	done
	kill "$EPID" 2>/dev/null
	wait "$EPID" 2>/dev/null
	EPID=
	if [ -z "$got" ]; then
		echo "not ok exporter_halt_$arch: no finished replay: $(head -2 "$log" | tr '\n' ' ')"
		continue
	fi
	halts=$(sed -n 's/^kvmscope_halt_exit_duration_seconds_count{.*reason="\([^"]*\)".*/\1/p' \
		"$dir/$arch.prom" | sort -u | tr '\n' '|')
	others=$(grep -c '^kvmscope_exit_duration_seconds_count{' "$dir/$arch.prom")
	if [ "$halts" = "$want|" ] && [ "$others" -gt 5 ]; then
		echo "ok exporter_halt_$arch: '$want' is the halt histogram's only reason ($others others)"
	else
		echo "not ok exporter_halt_$arch: halt reasons '$halts' (want '$want'), $others others"
	fi
done
