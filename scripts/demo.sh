#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# demo.sh BUILD - show kvmscope on generated and real recordings.
set -eu
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
ks="$build/kvmscope"
dir=$(mktemp -d /tmp/kvmscope-demo.XXXXXX)
trap 'rm -rf "$dir"' EXIT
shared=${KS_SHARED:-$root/../shared}

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

if perf kvm stat record -a -o "$dir/template.data" sleep 0.1 >/dev/null 2>&1; then
	"$build/tools/gen-perfdata" --template "$dir/template.data" -o "$dir/perf.data.guest" \
		--vendor intel --pairs 20000 --vms 2 --vcpus 2 --rounds --unmatched --lost 2
	step "kvmscope stat -i perf.data.guest --by reason --by vm,vcpu   (generated: 2 VMs x 2 vCPUs)"
	"$ks" stat -i "$dir/perf.data.guest" --by reason --by vm,vcpu
	step "kvmscope stat -i perf.data.guest --format perf   (perf 6.1's layout)"
	"$ks" stat -i "$dir/perf.data.guest" --format perf
	step "perf kvm stat report -i perf.data.guest   (the peer tool, for comparison)"
	perf kvm -i "$dir/perf.data.guest" stat report 2>&1 | sed -n '/Analyze/,/Total Samples/p'
else
	echo "perf kvm stat record is not available here; skipping the generated demo"
fi
if [ -f "$shared/data/hip24/host-tsync.trace.dat" ]; then
	step "kvmscope stat -i hip24/host-tsync.trace.dat --by vm,vcpu --by reason   (real Intel host, zlib trace.dat)"
	"$ks" stat -i "$shared/data/hip24/host-tsync.trace.dat" --by vm,vcpu --by reason || true
	step "kvmscope dump -t hip24/host-tsync.trace.dat | head"
	"$ks" dump -t "$shared/data/hip24/host-tsync.trace.dat" 2>&1 | head -8 || true
else
	echo "$shared/data is absent: skipping the real recordings"
fi
