#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# convert_vm_test.sh - kvmscope convert keeps which VM (host process) each
# vCPU thread belongs to, and the VMs' names.
#
# A trace.dat records no thread -> process map; convert writes it in an
# option of kvmscope's own (vmident.h: KS_VMIDENT_OPTION, the task map
# kvmscope record writes too), which
# trace-cmd skips.  Oracles:
#  - `kvmscope stat --by vm` of a perf.data (whose VMs it names like
#    `perf kvm stat report`, perf_oracle_test.sh) and of its conversions
#    (v7 zstd, v6 uncompressed, and a trace.dat converted again) print the
#    same table, and `stat -p VM` works on them;
#  - trace-cmd (Debian's 3.1) prints the converted files exactly as perf
#    script prints the perf.data, and says nothing on stderr;
#  - a damaged map is refused: exit 1, one line naming the file.
set -u
ks=$KVMSCOPE
dir=$KS_TMP/convert-vm
gen=$KS_BUILD/tools/gen-perfdata
mkdir -p "$dir"

have() { command -v "$1" >/dev/null 2>&1; }

if ! have perf || ! have trace-cmd; then
	echo "skip convert_vm: perf or trace-cmd is not installed"
	exit 0
fi
if ! perf kvm stat record -a -o "$dir/template.data" sleep 0.1 >/dev/null 2>&1; then
	echo "skip convert_vm: perf kvm stat record cannot record a template here"
	exit 0
fi
if ! "$gen" --template "$dir/template.data" -o "$dir/gen.data" --vendor intel --pairs 4000 \
	--cpus 4 --vms 2 --vcpus 2 2>"$dir/err"; then
	echo "not ok convert_vm: gen-perfdata failed: $(head -1 "$dir/err")"
	exit 0
fi

# the by-VM table, from its title to its "Total:" line
by_vm() {
	"$ks" stat --by vm -i "$1" 2>&1 | sed -n '/^VM-EXIT by vm/,/^Total:/p'
}
norm_perf() {
	sed -E 's/^ *(.*[^ ]) +([0-9]+) +\[([0-9]+)\] +([0-9]+\.[0-9]+): +[a-z0-9_]+:([a-z0-9_]+): *(.*[^ ]) *$/\1|\2|\3|\4|\5|\6/'
}
norm_tc() {
	grep -v '^cpus=' | sed -E 's/^ *(.*)-([0-9]+) +\[([0-9]+)\] +([0-9]+\.[0-9]+): +([a-z0-9_]+): *(.*[^ ]) *$/\1|\2|\3|\4|\5|\6/'
}

by_vm "$dir/gen.data" > "$dir/want"
vm=$(awk 'NR > 3 && $1 ~ /^[0-9]+\(/ { sub(/\(.*/, "", $1); print $1; exit }' "$dir/want")
perf script --ns -i "$dir/gen.data" 2>/dev/null | norm_perf > "$dir/gen.perf"
if [ -z "$vm" ]; then
	echo "not ok convert_vm: stat names no VM process of the perf.data: $(sed -n 4p "$dir/want")"
	exit 0
fi

check() { # name file
	local name=$1 f=$2
	by_vm "$f" > "$dir/got"
	if ! cmp -s "$dir/want" "$dir/got"; then
		echo "not ok $name: stat --by vm differs: $(diff "$dir/want" "$dir/got" | grep '^[<>]' | head -2 | tr '\n' ' ')"
	elif ! "$ks" stat -p "$vm" -i "$f" > /dev/null 2> "$dir/err"; then
		echo "not ok $name: stat -p $vm: $(head -1 "$dir/err")"
	else
		echo "ok $name (VMs: $(awk 'NR > 3 && $2 == "all" { printf "%s ", $1 }' "$dir/got"))"
	fi
}

for vc in "7 zstd" "6 none"; do
	set -- $vc
	out=$dir/gen-v$1-$2.dat
	if ! "$ks" convert -q -i "$dir/gen.data" -o "$out" --file-version "$1" --compression "$2" 2>"$dir/err"; then
		echo "not ok convert_vm_v$1_$2: $(head -1 "$dir/err")"
		continue
	fi
	check "convert_vm_v$1_$2" "$out"
	trace-cmd report -N -t "$out" 2> "$dir/tc.err" | norm_tc > "$dir/tc"
	if [ -s "$dir/tc.err" ]; then
		echo "not ok convert_vm_tracecmd_v$1_$2: trace-cmd says: $(head -1 "$dir/tc.err")"
	elif ! cmp -s "$dir/gen.perf" "$dir/tc"; then
		echo "not ok convert_vm_tracecmd_v$1_$2: trace-cmd report differs from perf script: $(diff "$dir/gen.perf" "$dir/tc" | sed -n 2p)"
	else
		echo "ok convert_vm_tracecmd_v$1_$2 (trace-cmd skips the option: $(wc -l < "$dir/tc") events as perf script, nothing on stderr)"
	fi
done

# a trace.dat converted again (its pages copied) keeps the map
if "$ks" convert -q -i "$dir/gen-v7-zstd.dat" -o "$dir/again.dat" --file-version 7 --compression none 2>"$dir/err"; then
	check convert_vm_again "$dir/again.dat"
else
	echo "not ok convert_vm_again: $(head -1 "$dir/err")"
fi

# a damaged map: a letter in a process id
python3 - "$dir/gen-v6-none.dat" "$dir/bad.dat" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
at = d.find(b'kvmscope-vmident 1\nt ')
if at < 0:
    sys.exit(1)
sp = d.index(b' ', at + 21)    # "t TID TGID": the space before TGID
d[sp + 1] = ord('x')
open(sys.argv[2], 'wb').write(d)
PY
if [ $? -ne 0 ]; then
	echo "not ok convert_vm_damaged: the v6 file holds no task map option"
else
	"$ks" stat -i "$dir/bad.dat" > /dev/null 2> "$dir/err"; rc=$?
	if [ $rc -eq 1 ] && [ "$(wc -l < "$dir/err")" -eq 1 ] && grep -q "bad.dat: offset [0-9]*: task map option: malformed line" "$dir/err"; then
		echo "ok convert_vm_damaged ($(cat "$dir/err"))"
	else
		echo "not ok convert_vm_damaged: status $rc: $(head -2 "$dir/err" | tr '\n' ' ')"
	fi
fi
