#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# report_arch_test.sh - kvmscope report on exit-tracepoint sources other than
# x86 and on every guest symbol source.
#  - powerpc kvm_hv:kvm_guest_exit (HV_DECREMENTER 0x980 and other traps, MSR
#    HV/PR bits set both ways, both byte orders, --sample-exits) and arm64
#    kvm_exit vcpu_pc: perf.data written by tools/gen-kvm-perfdata from the
#    format fixtures and a scenario of tests/cli/report_arch_oracle.py, which
#    replays the same events itself (seed 004's mode rule, exit->entry times,
#    symbol rules) and compares every CSV row of `report --by vm,vcpu`.
#  - --guest-mount with four VMs (a directory by pid with kallsyms+modules, one
#    by guest name with a vmlinux ELF + a kallsyms whose _stext is shifted as
#    KASLR does, one with a vmlinux only, one without directory), and
#    --guest-kallsyms/--guest-modules/--guest-vmlinux: the vmlinux is a small
#    ELF built here with gcc; the oracle reads its symbols with readelf.
# Env: KVMSCOPE, KS_BUILD, KS_TMP (see tests/run.sh).
set -u
K=${KVMSCOPE:?}
GEN=${KS_BUILD:?}/tools/gen-kvm-perfdata
T=${KS_TMP:?}/report_arch.$$
ORACLE="python3 tests/cli/report_arch_oracle.py"
mkdir -p "$T"

check() { # NAME EVENTS CSV ORACLE-ARGS...
	local name=$1 ev=$2 csv=$3 r
	shift 3
	r=$($ORACLE check "$ev" "$csv" "$@" 2>&1)
	case $r in
	OK*) echo "ok $name (${r#OK } rows match the oracle)" ;;
	*) echo "not ok $name: $(echo "$r" | head -3 | tr '\n' ' ')" ;;
	esac
}

# ---- powerpc and arm64 exit tracepoints
$ORACLE scenario powerpc "$T" 11
$ORACLE scenario arm64 "$T" 12
for order in le be; do
	opt=; [ $order = be ] && opt=--big-endian
	"$GEN" --formats tests/fixtures/powerpc --machine ppc64 $opt -o "$T/ppc.$order.data" "$T/powerpc.scn" ||
		{ echo "not ok report_powerpc_$order: generator failed"; continue; }
	syms="--guest-kallsyms $T/powerpc.kallsyms --guest-modules $T/powerpc.modules"
	"$K" report "$T/ppc.$order.data" $syms --by vm,vcpu --csv > "$T/ppc.csv" 2> "$T/err" ||
		echo "not ok report_powerpc_$order: $(head -1 "$T/err")"
	check report_powerpc_$order "$T/powerpc.events.json" "$T/ppc.csv" \
		--syms "*=kallsyms:$T/powerpc.kallsyms,modules:$T/powerpc.modules"
done
"$K" report "$T/ppc.le.data" --guest-kallsyms "$T/powerpc.kallsyms" --by vm,vcpu --csv \
	--sample-exits HV_DECREMENTER,0x500,H_DATA_STORAGE > "$T/ppc2.csv"
check report_powerpc_sample_exits "$T/powerpc.events.json" "$T/ppc2.csv" \
	--syms "*=kallsyms:$T/powerpc.kallsyms" --sample-traps 0x980,0x500,0xe00
# the text table shows both modes
out=$("$K" report "$T/ppc.le.data" --guest-kallsyms "$T/powerpc.kallsyms")
if echo "$out" | grep -q '\[g\.u\]  \[guest user\]' && echo "$out" | grep -q '\[g\.k\]  \[kernel\.kallsyms\] *powerpc_fn_'; then
	echo "ok report_powerpc_table_modes"
else
	echo "not ok report_powerpc_table_modes: [g.u]/[g.k] rows missing"
fi

"$GEN" --formats tests/fixtures/arm64 --machine aarch64 -o "$T/arm.data" "$T/arm64.scn" ||
	echo "not ok report_arm64: generator failed"
"$K" report "$T/arm.data" --guest-kallsyms "$T/arm64.kallsyms" --guest-modules "$T/arm64.modules" \
	--by vm,vcpu --csv > "$T/arm.csv"
check report_arm64 "$T/arm64.events.json" "$T/arm.csv" \
	--syms "*=kallsyms:$T/arm64.kallsyms,modules:$T/arm64.modules"

# ---- a vmlinux ELF, KASLR, modules, --guest-mount
ELF_BASE=0xffff800008010000
SHIFT=0x3200000
cat > "$T/vmlinux.c" <<'EOF'
__asm__(".text\n.globl _stext\n_stext:\n\tnop\n");
void vmlx_fn_a(void) { __asm__ volatile(".fill 8, 1, 0x90"); }
void vmlx_fn_b(void) { __asm__ volatile(".fill 200, 1, 0x90"); }
static void vmlx_local_c(void) { __asm__ volatile(".fill 100, 1, 0x90"); }
void vmlx_fn_d(void) { vmlx_local_c(); __asm__ volatile(".fill 300, 1, 0x90"); }
EOF
if ! gcc -O1 -fno-toplevel-reorder -fno-pic -no-pie -nostdlib -static -Wl,--build-id=none \
	-Wl,-Ttext=$ELF_BASE -Wl,-e,vmlx_fn_a -o "$T/vmlinux" "$T/vmlinux.c" 2> "$T/err"; then
	echo "skip report_vmlinux: cannot build a test ELF: $(head -1 "$T/err")"
	rm -rf "$T"
	exit 0
fi
RUNTIME=$(printf '0x%x' $((ELF_BASE + SHIFT)))
printf '%016x T _stext\n' $((ELF_BASE + SHIFT)) > "$T/kaslr.kallsyms"
grep '\[kvmtest_mod\]' "$T/arm64.kallsyms" >> "$T/kaslr.kallsyms"
mkdir -p "$T/m"
$ORACLE scenario arm64 "$T/m" 13 4000:qemu-a:2 4100:guestb:2 4200:qemu-c:1 4300:qemu-d:1 \
	pool:$RUNTIME:0x300 pool:$ELF_BASE:0x300
"$GEN" --formats tests/fixtures/arm64 --machine aarch64 -o "$T/mount.data" "$T/m/arm64.scn"
M=$T/guests
mkdir -p "$M/4000" "$M/guestb" "$M/4200" "$M/unrelated"
cp "$T/m/arm64.kallsyms" "$M/4000/kallsyms"
cp "$T/m/arm64.modules" "$M/4000/modules"
cp "$T/kaslr.kallsyms" "$M/guestb/kallsyms"
cp "$T/m/arm64.modules" "$M/guestb/modules"
cp "$T/vmlinux" "$M/guestb/vmlinux"
cp "$T/vmlinux" "$M/4200/vmlinux"
cp "$T/m/arm64.kallsyms" "$M/unrelated/kallsyms"
"$K" report "$T/mount.data" --guest-mount "$M" --by vm,vcpu --csv > "$T/mount.csv" 2> "$T/err" ||
	echo "not ok report_guest_mount: $(head -1 "$T/err")"
check report_guest_mount "$T/m/arm64.events.json" "$T/mount.csv" \
	--syms "4000=kallsyms:$M/4000/kallsyms,modules:$M/4000/modules" \
	--syms "4100=kallsyms:$M/guestb/kallsyms,modules:$M/guestb/modules,vmlinux:$M/guestb/vmlinux" \
	--syms "4200=vmlinux:$M/4200/vmlinux"
# relocated vmlinux names really occur, for the VM by name and at both bases
for pat in '^samples,4100,.*vmlx_fn_b,' '^samples,4100,.*vmlx_local_c,' '^samples,4200,.*vmlx_fn_d,' \
	'^samples,4000,.*modfn_' '^samples,4300,.*\[unknown\],\[unknown\],'; do
	grep -q "$pat" "$T/mount.csv" || missing="${missing:-} $pat"
done
[ -z "${missing:-}" ] && echo "ok report_guest_mount_rows" ||
	echo "not ok report_guest_mount_rows: no row like$missing"

"$K" report "$T/mount.data" --guest-kallsyms "$T/kaslr.kallsyms" --guest-modules "$T/m/arm64.modules" \
	--guest-vmlinux "$T/vmlinux" --by vm,vcpu --csv > "$T/vml.csv" 2> "$T/err" ||
	echo "not ok report_guest_vmlinux: $(head -1 "$T/err")"
check report_guest_vmlinux_kaslr "$T/m/arm64.events.json" "$T/vml.csv" \
	--syms "*=kallsyms:$T/kaslr.kallsyms,modules:$T/m/arm64.modules,vmlinux:$T/vmlinux"
[ -n "${KEEP:-}" ] || rm -rf "$T"
