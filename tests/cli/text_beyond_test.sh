#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# text_beyond_test.sh - stat --event halt / nested / vmgexit on ftrace text
# equal the same views of the trace.dat the text was printed from.
#
# The scenarios of tests/cli/beyond_oracle.py (halt polling; nested VMX and
# SVM; SEV-ES vmgexit) are written with the Linux 6.2 formats of
# tests/fixtures/x86-6.2 by tools/gen-kvm-perfdata and converted to trace.dat;
# `trace-cmd report -t` of that file (trace-cmd's kvm plugin on: its own
# exit names, "UNKNOWN (N)", "<CANT FIND FIELD rip>") and `trace-cmd report
# -N -t` (no plugins: the events' print fmt, as the kernel's trace file
# prints them) are the texts.  trace-cmd report prints no tgid, so a text
# cannot tell two VMs' "CPU 0/KVM" threads apart: each VM of a scenario is
# its own file, and the VM's number (tgid in trace.dat, first thread in the
# text), its process name and how it was found are left out of the
# comparison (the list of confidential VMs is checked by count); everything
# else must be equal.
set -u
K=${KVMSCOPE:?}
GEN=${KS_BUILD:?}/tools/gen-kvm-perfdata
T=${KS_TMP:?}/text-beyond
ORACLE="python3 tests/cli/beyond_oracle.py"
mkdir -p "$T"
command -v trace-cmd > /dev/null || { echo "skip text-beyond: no trace-cmd"; exit 0; }
if [ ! -f "${KS_LINUX:-}/arch/x86/include/asm/sev-common.h" ]; then
	echo "skip text-beyond: no kernel headers in KS_LINUX"
	exit 0
fi

# same JSON but the VM's number and how it was found
same() { # A.json B.json
	python3 - "$1" "$2" <<'PY'
import json, sys
def norm(o):
    if isinstance(o, dict):
        return {k: norm(v) for k, v in o.items()
                if k not in ("input", "input_format", "arch_from", "vm", "vm_source", "vm_name",
                             "sources_disagree", "confidential_vms")}
    if isinstance(o, list):
        return [norm(v) for v in o]
    return o
try:
    ja, jb = (json.load(open(p)) for p in sys.argv[1:3])
except ValueError:
    print("no JSON from kvmscope")
    sys.exit(0)
a, b = norm(ja), norm(jb)
a["n_confidential"] = len(ja.get("confidential_vms", []))
b["n_confidential"] = len(jb.get("confidential_vms", []))
if a == b:
    print("OK")
else:
    sa, sb = json.dumps(a, indent=1).splitlines(), json.dumps(b, indent=1).splitlines()
    import difflib
    print(" | ".join(list(difflib.unified_diff(sa, sb, lineterm="", n=0))[2:8]))
PY
}

# NAME KIND EVENT CPUID: one scenario, every VM of it
run() {
	local name=$1 kind=$2 ev=$3 cpu=$4 tgid n=0 bad=0 why nl plug
	# shellcheck disable=SC2086
	$ORACLE $kind "$T/$name.scn" "$T/$name.exp"
	for tgid in $(awk '$1 != "comm" { print $4 }' "$T/$name.scn" | sort -un); do
		awk -v g="$tgid" '($1 == "comm" && $3 == g) || ($1 != "comm" && $4 == g)' \
			"$T/$name.scn" > "$T/$name-$tgid.scn"
		grep -q "kvm:kvm_${ev/halt/vcpu_wakeup}" "$T/$name-$tgid.scn" ||
			[ "$ev" != halt ] || continue
		"$GEN" --formats tests/fixtures/x86-6.2 --machine x86_64 --cpuid "$cpu" \
			-o "$T/$name-$tgid.data" "$T/$name-$tgid.scn" &&
		"$K" convert -q -i "$T/$name-$tgid.data" -o "$T/$name-$tgid.dat" ||
			{ echo "not ok $name: cannot write VM $tgid's trace.dat"; return; }
		"$K" stat -i "$T/$name-$tgid.dat" --event "$ev" --json > "$T/$name-$tgid.dat.json" 2> "$T/err" || {
			# a VM without events of this class: the text must say so too
			grep -q "no $ev events\|no kvm_vcpu_wakeup" "$T/err" || { echo "not ok $name: $(head -1 "$T/err")"; return; }
			continue
		}
		for plug in "" -N; do
			# shellcheck disable=SC2086
			trace-cmd report $plug -t "$T/$name-$tgid.dat" > "$T/$name-$tgid$plug.txt" 2>/dev/null
			"$K" stat -i "$T/$name-$tgid$plug.txt" --event "$ev" --json > "$T/$name-$tgid$plug.json" 2> "$T/err"
			why=$(same "$T/$name-$tgid$plug.json" "$T/$name-$tgid.dat.json")
			nl=$(grep -c ": kvm_" "$T/$name-$tgid$plug.txt")
			if [ "$why" != OK ]; then
				echo "not ok $name VM $tgid trace-cmd report ${plug:-(plugins)}: $why $(head -1 "$T/err")"
				bad=1
			fi
			n=$((n + nl))
		done
	done
	[ $bad = 0 ] && [ $n -gt 0 ] && echo "ok $name: stat --event $ev of trace-cmd's text (with and without its plugins, $n event lines) == of the trace.dat"
	[ $n -gt 0 ] || echo "not ok $name: no VM with $ev events"
}
run halt halt halt GenuineIntel,6,85,7
run nested-vmx "nested vmx" nested GenuineIntel,6,85,7
run nested-svm "nested svm" nested AuthenticAMD,25,1,1
run vmgexit vmgexit vmgexit AuthenticAMD,25,1,1

# trace-cmd's kvm plugin prints kvm_exit without its vCPU: the exits of a
# two-vCPU VM per vCPU, from the text, == from the trace.dat
f="$T/halt-100"
"$K" stat -i "$f.dat" --by vcpu --json > "$f.vcpu.dat.json" 2>/dev/null
"$K" stat -i "$f.txt" --by vcpu --json > "$f.vcpu.txt.json" 2> "$T/err"
why=$(same "$f.vcpu.txt.json" "$f.vcpu.dat.json")
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["views"][0]["rows"]))' "$f.vcpu.dat.json" 2>/dev/null)
[ "$why" = OK ] && [ "${n:-0}" -ge 2 ] && echo "ok exits per vCPU of trace-cmd's text ($n vCPUs) == of the trace.dat" ||
	echo "not ok exits per vCPU of trace-cmd's text: $why ($n vCPUs) $(head -1 "$T/err")"

# the SVM exit names trace-cmd's kvm plugin prints (EXIT_IOIO, not io) and
# "UNKNOWN (1027)" (VMGEXIT) read back as the kernel's codes
if grep -q 'reason EXIT_' "$T"/nested-svm-*[0-9].txt && grep -q 'reason UNKNOWN (1027)' "$T"/vmgexit-*[0-9].txt; then
	echo "ok the texts hold trace-cmd's plugin names EXIT_* and UNKNOWN (N)"
else
	echo "not ok the texts lack the plugin's names: the check above proved less"
fi
