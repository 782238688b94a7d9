#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# nested_test.sh - kvmscope stat --event nested: per VM and reason, L1's own
# exits, L2 exits handled by L0 and L2 exits reflected to L1, with their
# handling times, on VMX and SVM; and L1's handling of each reflected exit
# (kvm_nested_vmexit_inject -> the vCPU's next kvm_nested_vmenter).
#
# Inputs: tools/gen-kvm-perfdata with the real kvm formats of a Linux 6.2
# host (tests/fixtures/x86-6.2, taken from a trace-cmd recording's format
# section: kvm_exit, kvm_nested_vmexit, kvm_nested_vmexit_inject,
# kvm_nested_vmenter, kvm_nested_intr_vmexit) and scenarios written by
# tests/cli/beyond_oracle.py, which also replays them (no kvmscope code) with
# the exit names of the kernel's uapi headers in $KS_LINUX.
set -u
K=${KVMSCOPE:?}
GEN=${KS_BUILD:?}/tools/gen-kvm-perfdata
T=${KS_TMP:?}/nested
ORACLE="python3 tests/cli/beyond_oracle.py"
mkdir -p "$T"

if [ ! -f "${KS_LINUX:-}/arch/x86/include/uapi/asm/vmx.h" ]; then
	echo "skip nested: no kernel headers in KS_LINUX"
	exit 0
fi
for isa in vmx svm; do
	cpu=GenuineIntel,6,85,7; [ $isa = svm ] && cpu=AuthenticAMD,25,1,1
	$ORACLE nested $isa "$T/$isa.scn" "$T/$isa.exp"
	"$GEN" --formats tests/fixtures/x86-6.2 --machine x86_64 --cpuid $cpu -o "$T/$isa.data" "$T/$isa.scn" ||
		{ echo "not ok $isa: generator failed"; continue; }
	if ! "$K" stat "$T/$isa.data" --event nested --by vm,reason --json > "$T/$isa.json" 2>"$T/err"; then
		echo "not ok $isa nested rows: $(head -1 "$T/err")"
		continue
	fi
	r=$($ORACLE check "$T/$isa.exp" "$T/$isa.json")
	[ "$r" = OK ] && echo "ok $isa nested rows per VM and path" ||
		echo "not ok $isa nested rows: $(echo "$r" | head -3 | tr '\n' ' ')"
	# L1's handling of the reflected exits: inject -> L1's next vmenter
	r=$($ORACLE l1check "$T/$isa.exp" "$T/$isa.json")
	case $r in OK*) echo "ok $isa L1 handling of reflected exits per VM and reason (${r#OK })" ;;
	*) echo "not ok $isa L1 handling: $(echo "$r" | head -3 | tr '\n' ' ')" ;; esac
	"$K" stat "$T/$isa.data" --event nested --by vm,reason > "$T/$isa.l1.txt"
	grep -q "^L1's handling of reflected L2 exits" "$T/$isa.l1.txt" &&
		grep -q '^REFLECTED-EXIT-IN-L1 by vm,reason' "$T/$isa.l1.txt" &&
		echo "ok $isa text prints the L1 handling table" || echo "not ok $isa text has no L1 handling table"
	# the text table names the three paths
	"$K" stat "$T/$isa.data" --event nested > "$T/$isa.txt"
	n=$(sed '/^Total:/q' "$T/$isa.txt" | grep -cE '^L1 |^L2 .* in L0 |^L2 .* to L1 ')
	w=$(python3 -c 'import json,sys; print(len({k.split("|")[1] for k in json.load(open(sys.argv[1])) if k[0] != "_"}))' "$T/$isa.exp")
	[ "$n" = "$w" ] && echo "ok $isa text table has $w path rows" ||
		echo "not ok $isa text table: $n path rows, want $w"
	# the vmexit view of the same file is unchanged: every kvm_exit once
	t=$("$K" stat "$T/$isa.data" --event vmexit --json | python3 -c 'import json,sys; print(sum(r["samples"] for r in json.load(sys.stdin)["views"][0]["rows"]))')
	[ "$t" = 120 ] && echo "ok $isa vmexit view counts every exit" || echo "not ok $isa vmexit view: $t exits"
done
