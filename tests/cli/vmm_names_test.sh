#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# vmm_names_test.sh - VMs of other VMMs than QEMU: each VMM's vCPU threads
# by their real names (QEMU accel/kvm/kvm-accel-ops.c "CPU %d/KVM",
# Firecracker "fc_vcpu {}", Cloud Hypervisor "vcpu{}", crosvm
# "crosvm_vcpu{}", kvmtool "kvm-vcpu-%lu"), and a QEMU without
# debug-threads=on whose vCPU threads are all "qemu-system-x86".
#
# Generated perf.data (tools/gen-kvm-perfdata, arm64 formats: kvm_entry and
# kvm_exit carry no vCPU id, so the name is what numbers the vCPU): one
# process per VMM, named as the VMM's binary, two vCPU threads whose
# numbers are NOT their order of creation (vCPU 1 is made first), and a
# main thread.  Expected, written here: each VMM is one VM, named by its
# process, with vCPUs numbered from the thread names; the QEMU without
# debug-threads is one VM whose vCPUs are unknown (rows by thread).  The
# vCPU numbers from ftrace text of the same events (dump -t: no tgid).
set -u
ks=$KVMSCOPE
GEN=$KS_BUILD/tools/gen-kvm-perfdata
d=$KS_TMP/vmm-names
mkdir -p "$d"

# PID PROCESS-NAME THREAD-NAME-OF-VCPU-0 THREAD-NAME-OF-VCPU-1
cat > "$d/vmms" <<'V'
1000 qemu-system-aar|CPU 0/KVM|CPU 1/KVM
2000 firecracker|fc_vcpu 0|fc_vcpu 1
3000 cloud-hyperviso|vcpu0|vcpu1
4000 crosvm|crosvm_vcpu0|crosvm_vcpu1
5000 lkvm|kvm-vcpu-0|kvm-vcpu-1
6000 qemu-system-x86|qemu-system-x86|qemu-system-x86
V
: > "$d/scn"
ts=1000
while IFS='|' read -r head v0 v1; do
	pid=${head%% *} pname=${head#* }
	# vCPU 1's thread first (tid pid+1), then vCPU 0's (pid+2): the number
	# must come from the name, not the order
	echo "comm $pid $pid $pname" >> "$d/scn"
	echo "comm $((pid + 1)) $pid $v1" >> "$d/scn"
	echo "comm $((pid + 2)) $pid $v0" >> "$d/scn"
done < "$d/vmms"
while IFS='|' read -r head _; do
	pid=${head%% *}
	for tid in $((pid + 1)) $((pid + 2)); do
		for k in 1 2 3; do
			echo "$ts 0 $tid $pid kvm:kvm_entry" >> "$d/scn"
			echo "$((ts + 400)) 0 $tid $pid kvm:kvm_exit ret=1 esr_ec=1" >> "$d/scn"
			ts=$((ts + 1000))
		done
		echo "$ts 0 $tid $pid kvm:kvm_entry" >> "$d/scn"
		ts=$((ts + 1000))
	done
done < "$d/vmms"
if ! "$GEN" --formats tests/fixtures/arm64 --machine aarch64 -o "$d/vmms.data" "$d/scn" 2> "$d/gen.err"; then
	echo "not ok vmm_names: the generator failed: $(head -1 "$d/gen.err")"
	exit 0
fi
"$ks" dump -t "$d/vmms.data" > "$d/vmms.txt" 2> /dev/null

# expected "tid vm vm_name vcpu" lines
while IFS='|' read -r head v0 v1; do
	pid=${head%% *} pname=${head#* }
	if [ "$v0" = "$v1" ]; then
		echo "$((pid + 1)) $pid $pname -1"
		echo "$((pid + 2)) $pid $pname -1"
	else
		echo "$((pid + 1)) $pid $pname 1"
		echo "$((pid + 2)) $pid $pname 0"
	fi
done < "$d/vmms" | sort > "$d/want"

threads() { # stat JSON -> "tid vm vm_name vcpu"
	python3 -c 'import json,sys
for t in json.load(open(sys.argv[1]))["threads"]:
    print(t["tid"], t["vm"], (t.get("vm_name") or "").split("(")[0] or "-", t["vcpu"])' "$1" | sort
}
"$ks" stat -i "$d/vmms.data" --json --by vm,vcpu > "$d/data.json" 2> "$d/err"
threads "$d/data.json" > "$d/got"
if diff -u "$d/want" "$d/got" > "$d/diff"; then
	echo "ok vmm_names_perfdata: 6 VMs named by their process, vCPUs from the names"
else
	echo "not ok vmm_names_perfdata: $(grep '^[-+][0-9]' "$d/diff" | head -6 | tr '\n' '|')"
fi
# rows per vCPU: each named VM has vCPU rows 0 and 1 of 3 exits each
rows=$(python3 -c 'import json,sys
j = json.load(open(sys.argv[1]))
v = [v for v in j["views"] if v["by"] == "vm,vcpu"][0]
print(" ".join(sorted("%d:%d:%d" % (r["vm"], r["vcpu"], r["samples"]) for r in v["rows"] if r["vcpu"] >= 0)))' "$d/data.json")
want_rows=$(for p in 1000 2000 3000 4000 5000; do echo "$p:0:3 $p:1:3"; done | tr '\n' ' ' | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/^ *//;s/ *$//')
[ "$rows" = "$want_rows" ] && echo "ok vmm_names_vcpu_rows" ||
	echo "not ok vmm_names_vcpu_rows: '$rows' want '$want_rows'"

# text: no tgid, the names alone number the vCPUs (the VM, the tid - N
# group, is not checked: these threads were made out of vCPU order)
"$ks" stat -i "$d/vmms.txt" --json --by vm,vcpu > "$d/text.json" 2> "$d/err"
python3 -c 'import json,sys
for t in json.load(open(sys.argv[1]))["threads"]:
    print(t["tid"], t["vcpu"], t["vcpu_source"])' "$d/text.json" | sort > "$d/text.got"
while IFS='|' read -r head v0 v1; do
	pid=${head%% *}
	if [ "$v0" = "$v1" ]; then
		echo "$((pid + 1)) -1 thread"; echo "$((pid + 2)) -1 thread"
	else
		echo "$((pid + 1)) 1 thread-name"; echo "$((pid + 2)) 0 thread-name"
	fi
done < "$d/vmms" | sort > "$d/text.want"
if diff -q "$d/text.want" "$d/text.got" > /dev/null; then
	echo "ok vmm_names_text: vCPUs numbered from the names without a tgid"
else
	echo "not ok vmm_names_text: $(diff "$d/text.want" "$d/text.got" | grep '^[<>]' | head -4 | tr '\n' '|')"
fi
