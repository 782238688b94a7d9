#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# unwind_dump_test.sh - `kvmscope unwind` on a QEMU dump written by
# tools/gen-qemudump, whose call chains are known by construction (the tool
# prints them), and its errors on damaged dumps.  readelf is the oracle for
# the notes: one vCPU per QEMU note.  The lab test (tests/lab) checks the
# same command on a real QEMU dump against the live gdbstub.
set -u
ks=$KVMSCOPE
dir=$KS_TMP/unwind-dump-test
mkdir -p "$dir"
if ! "$KS_BUILD/tools/gen-qemudump" -o "$dir/d.elf" > "$dir/want.txt"; then
	echo "not ok unwind_dump_gen: gen-qemudump failed"; exit 0
fi
if ! "$ks" unwind --kernel-unwind fp "$dir/d.elf" > "$dir/out.txt" 2>"$dir/err.txt"; then
	echo "not ok unwind_dump: $(head -1 "$dir/err.txt")"; exit 0
fi
# "vcpu N rip ..." then "  #K  0xADDR ..." lines -> "vcpu N: 0xADDR ..."
awk '/^vcpu /{ if (line) print line; line = "vcpu " $2 ":" }
     /^  #/{ a = $2; sub(/^0x0*/, "0x", a); line = line " " a }
     END { if (line) print line }' "$dir/out.txt" > "$dir/got.txt"
if cmp -s "$dir/want.txt" "$dir/got.txt"; then
	echo "ok unwind_dump_chains ($(wc -l < "$dir/want.txt") vCPUs, user and kernel->pt_regs->user)"
else
	echo "not ok unwind_dump_chains: $(diff "$dir/want.txt" "$dir/got.txt" | tr '\n' ' ')"
fi
if grep -q 'through pt_regs' "$dir/out.txt"; then
	echo "ok unwind_dump_via_regs"
else
	echo "not ok unwind_dump_via_regs: the kernel chain did not go through pt_regs"
fi
if command -v readelf >/dev/null; then
	notes=$(readelf -n "$dir/d.elf" | grep -c '^ *QEMU ')
	if [ "$notes" -eq "$(grep -c '^vcpu ' "$dir/out.txt")" ] && [ "$notes" -gt 0 ]; then
		echo "ok unwind_dump_vcpus_readelf ($notes QEMU notes)"
	else
		echo "not ok unwind_dump_vcpus_readelf: readelf lists $notes QEMU notes"
	fi
else
	echo "skip unwind_dump_vcpus_readelf: readelf is not installed"
fi

# damaged dumps: one line with the file and offset, exit status 1
bad() {
	local name=$1 want=$2 rc
	"$ks" unwind "$dir/$name" > /dev/null 2>"$dir/$name.err"; rc=$?
	if [ $rc -eq 1 ] && [ "$(wc -l < "$dir/$name.err")" -eq 1 ] &&
	   grep -q "$dir/$name: offset [0-9]*: .*$want" "$dir/$name.err"; then
		echo "ok unwind_dump_error_$name"
	else
		echo "not ok unwind_dump_error_$name: status $rc: $(head -2 "$dir/$name.err" | tr '\n' ' ')"
	fi
}
head -c 8192 "$dir/d.elf" > "$dir/truncated"
bad truncated "runs past the end"
head -c 100 /dev/zero > "$dir/zeros"
bad zeros "not an ELF"
python3 - "$dir/d.elf" "$dir/no-notes" <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
b[64:68] = (6).to_bytes(4, 'little')   # PT_NOTE -> PT_PHDR: no vCPU notes
open(sys.argv[2], 'wb').write(b)
PY
bad no-notes "no QEMU vCPU notes"

# ORC table bounds from a crafted kallsyms over a dump whose page tables
# alias one page at every kernel address (a 64 KB dump reads as 1 GB):
# the sizes are checked before anything is allocated or read.  Once, 16 M
# entries (within the old cap) took 380 MB and a table of 10 MB was read
# out of a 64 KB dump.
python3 - "$dir/d.elf" "$dir/alias.elf" <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
load = 0x1000  # the LOAD segment's file offset: guest physical 0
for i in range(16, 512):   # kernel PD 0x7000: every 2 MB -> PT 0xa000
	b[load + 0x7000 + 8 * i:load + 0x7000 + 8 * i + 8] = (0xa000 | 3).to_bytes(8, 'little')
for i in range(512):       # PT 0xa000: unused slots -> the code page
	o = load + 0xa000 + 8 * i
	if int.from_bytes(b[o:o + 8], 'little') == 0:
		b[o:o + 8] = (0xb000 | 3).to_bytes(8, 'little')
open(sys.argv[2], 'wb').write(b)
PY
orc_bad() {
	local name=$1 entries=$2 want=$3 rc rss
	# __start_orc_unwind_ip at 0xffffffff82000000, the entries right after
	printf 'ffffffff81000000 T _stext\nffffffff82000000 T __start_orc_unwind_ip\n%x T __start_orc_unwind\nffffffffbf000000 T _etext\n' \
		$((0xffffffff82000000 + 4 * entries)) > "$dir/$name.kallsyms"
	if [ -x /usr/bin/time ] && ! grep -qa __asan_init "$ks"; then
		/usr/bin/time -f %M -o "$dir/$name.rss" "$ks" unwind --kernel-unwind orc \
			--guest-kallsyms "$dir/$name.kallsyms" "$dir/alias.elf" >/dev/null 2>"$dir/$name.err"
		rc=$?
		rss=$(tail -1 "$dir/$name.rss")
	else
		"$ks" unwind --kernel-unwind orc --guest-kallsyms "$dir/$name.kallsyms" \
			"$dir/alias.elf" >/dev/null 2>"$dir/$name.err"
		rc=$?
		rss=0
	fi
	if [ $rc = 1 ] && [ "$(wc -l < "$dir/$name.err")" = 1 ] && grep -q "$want" "$dir/$name.err" &&
	   [ "$rss" -lt 32768 ]; then
		echo "ok unwind_dump_orc_$name ($rss KB)"
	else
		echo "not ok unwind_dump_orc_$name: status $rc, $rss KB: $(head -2 "$dir/$name.err" | tr '\n' ' ')"
	fi
}
orc_bad cap $((16 * 1024 * 1024 - 2)) "ORC: kallsyms give tables of 16777214 entries (limit 4194304)"
orc_bad memory $((1024 * 1024)) "ORC: kallsyms give tables of 10485760 bytes, more than the guest's 65536 bytes of memory"
