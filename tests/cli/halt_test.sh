#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# halt_test.sh - kvmscope stat --event halt: halts per VM and vCPU, polled
# vs slept, poll CPU (successful and wasted), latency quantiles, window
# changes and the recommended halt_poll_ns for two budgets.
#
# Input: tools/gen-kvm-perfdata with the real formats of kvm_vcpu_wakeup and
# kvm_halt_poll_ns of a Linux 6.2 host (tests/fixtures/x86-6.2) and a
# scenario of tests/cli/beyond_oracle.py, which simulates the poll window
# with KVM's grow/shrink rules and computes every expected number itself
# (the wasted CPU from the window it simulated, the recommendation by brute
# force over the candidate windows).
set -u
K=${KVMSCOPE:?}
GEN=${KS_BUILD:?}/tools/gen-kvm-perfdata
T=${KS_TMP:?}/halt
ORACLE="python3 tests/cli/beyond_oracle.py"
mkdir -p "$T"

$ORACLE halt "$T/h.scn" "$T/h.exp"
"$GEN" --formats tests/fixtures/x86-6.2 --machine x86_64 --cpuid GenuineIntel,6,85,7 -o "$T/h.data" "$T/h.scn" ||
	{ echo "not ok halt: generator failed"; exit 0; }
for budget in 10 1; do
	opt=; [ $budget = 10 ] || opt="--poll-budget $budget"
	# shellcheck disable=SC2086
	if "$K" stat "$T/h.data" --event halt --json $opt > "$T/h.$budget.json" 2>"$T/err"; then
		r=$($ORACLE haltcheck "$T/h.exp" "$T/h.$budget.json" $budget)
		[ "$r" = OK ] && echo "ok halt view and recommendation, budget $budget%" ||
			echo "not ok halt budget $budget%: $(echo "$r" | head -3 | tr '\n' ' ')"
	else
		echo "not ok halt budget $budget%: $(head -1 "$T/err")"
	fi
done
# the text names both VMs' recommendations and every window change count
"$K" stat "$T/h.data" --event halt > "$T/h.txt" 2>&1
n=$(grep -c '^  VM [0-9]*: halt_poll_ns=' "$T/h.txt")
[ "$n" = 2 ] && echo "ok text recommends a window for each VM" || echo "not ok text: $n recommendations"
w=$(python3 -c 'import json,sys; e=json.load(open(sys.argv[1])); print(sum(v["window_grows"]+v["window_shrinks"] for v in e["vcpus"].values()))' "$T/h.exp")
grep -q "^Poll window changes ($w" "$T/h.txt" && echo "ok text counts $w window changes" ||
	echo "not ok text window changes: $(grep '^Poll window' "$T/h.txt")"
# mistakes: a halt option without the halt view, a view option with it, no halt events
"$K" stat "$T/h.data" --poll-budget 5 >/dev/null 2>"$T/err"; rc=$?
[ $rc = 2 ] && grep -q -- '--poll-budget goes with --event halt' "$T/err" &&
	echo "ok --poll-budget without --event halt is a usage error" || echo "not ok --poll-budget alone: rc $rc"
"$K" stat "$T/h.data" --event halt --poll-budget 120 >/dev/null 2>"$T/err"; rc=$?
[ $rc = 2 ] && echo "ok --poll-budget 120 is refused" || echo "not ok --poll-budget 120: rc $rc"
"$K" stat "$T/h.data" --event halt --by vcpu >/dev/null 2>"$T/err"; rc=$?
[ $rc = 2 ] && echo "ok --event halt --by is a usage error" || echo "not ok --event halt --by: rc $rc"
grep -v 'kvm_vcpu_wakeup\|kvm_halt_poll_ns' "$T/h.scn" > "$T/none.scn"
"$GEN" --formats tests/fixtures/x86-6.2 --machine x86_64 -o "$T/none.data" "$T/none.scn"
"$K" stat "$T/none.data" --event halt >/dev/null 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q 'no kvm_vcpu_wakeup or kvm_halt_poll_ns events' "$T/err" &&
	echo "ok no halt events: one clear error" || echo "not ok no halt events: rc $rc $(head -1 "$T/err")"
