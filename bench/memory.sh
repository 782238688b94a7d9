#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# memory.sh BUILD - peak RSS and wall time of every command that reads a
# recording, on generated inputs of $BENCH_MEM_SIZES events (default
# "1000000 10000000 100000000"; e.g. BENCH_MEM_SIZES="1000000 10000000"
# for a shorter run).  Target (the README's budget): every cell <= 256 MB.
#
# Inputs, made once per size into $BENCH_DIR (default /tmp/kvmscope-bench)
# and kept for the next run (delete them to regenerate):
#   mem-N.data  perf.data of about N events: gen-perfdata --pmu-guest
#               (kvm_exit/kvm_entry pairs, MMIO, PIO and the vPMU's MSR
#               exits with kvm_msr events; 2 VMs x 4 vCPUs, per-CPU
#               rounds) from a `perf kvm stat record` template; random
#               guest rips, so report has about one address per exit;
#   mem-N.dat   the same events as a trace.dat (kvmscope convert, zstd;
#               its time and RSS are the convert row);
#   mem-N/      host.dat + guest.dat, N/2 events each (gen-merge-pair).
# Each command runs once (bench/measure); the JSON timeline is written
# only up to $BENCH_MEM_JSON_MAX events (default 10,000,000: it is about
# 2 KB a state interval).  Outputs go to $BENCH_DIR and are removed.
# BENCH_ONLY=memory runs this one only.
set -u
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dir=${BENCH_DIR:-/tmp/kvmscope-bench}
sizes=${BENCH_MEM_SIZES:-1000000 10000000 100000000}
json_max=${BENCH_MEM_JSON_MAX:-10000000}
case $build in /*) b=$build ;; *) b=$root/$build ;; esac
ks=$b/kvmscope
measure=$b/bench/measure
gen=$b/tools/gen-perfdata
pair=$b/tools/gen-merge-pair
fmt=$root/tests/fixtures/x86-6.18
limit_kb=$((256 * 1024))
mkdir -p "$dir"
field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }

tmpl="$dir/template.data"
if [ ! -s "$tmpl" ] && ! perf kvm stat record -a -o "$tmpl" sleep 0.1 >/dev/null 2>&1; then
	echo "skip memory bench: perf kvm stat record cannot record a template"
	exit 0
fi

# Rows: "label|command with @DATA @DAT @HOST @GUEST @OUT".
rows=(
	"stat (perf.data)|stat -i @DATA"
	"report (perf.data)|report -i @DATA"
	"report (trace.dat)|report -i @DAT"
	"report --offsets (trace.dat)|report --offsets -i @DAT"
	"report --folded (perf.data)|report -i @DATA --folded @OUT"
	"timeline text (trace.dat)|timeline -i @DAT"
	"timeline --html (trace.dat)|timeline -q -i @DAT --html @OUT"
	"timeline --html (perf.data)|timeline -q -i @DATA --html @OUT"
	"timeline --json (trace.dat)|timeline -q -i @DAT --json @OUT"
	"timeline --perfetto (trace.dat)|timeline -q -i @DAT --perfetto @OUT"
	"timeline --html (host+guest)|timeline -q -i @HOST -i @GUEST --html @OUT"
	"merge (host+guest)|merge -i @HOST -i @GUEST"
	"pmu (perf.data)|pmu -i @DATA"
	"top replay (perf.data)|top -i @DATA --fast -b"
	"exporter replay (perf.data)|exporter -i @DATA --speed max --listen 127.0.0.1:0 --linger 0"
	"dump (trace.dat)|dump -i @DAT"
	"convert perf.data -> trace.dat|convert -i @DATA -o @OUT"
)
declare -A cell
over=0

for n in $sizes; do
	data=$dir/mem-$n.data dat=$dir/mem-$n.dat mp=$dir/mem-$n
	# --pmu-guest writes about 2.67 events per exit/entry pair
	if [ ! -s "$data" ]; then
		"$gen" --template "$tmpl" -o "$data" --pairs $((n * 3 / 8)) --vms 2 --vcpus 4 \
			--rounds --pmu-guest || { echo "memory bench: gen-perfdata failed"; exit 1; }
	fi
	[ -s "$dat" ] || "$ks" convert -q -i "$data" -o "$dat" ||
		{ echo "memory bench: convert failed"; exit 1; }
	if [ ! -s "$mp/host.dat" ]; then
		mkdir -p "$mp"
		"$pair" "$fmt" "$mp" $((n / 2)) zstd >/dev/null ||
			{ echo "memory bench: gen-merge-pair failed"; exit 1; }
	fi
	for row in "${rows[@]}"; do
		label=${row%%|*} cmd=${row#*|}
		if [[ $cmd == *--json* ]] && [ "$n" -gt "$json_max" ]; then
			cell["$label|$n"]="(skipped)"
			continue
		fi
		out=$dir/mem-out.$$
		cmd=${cmd//@DATA/$data}; cmd=${cmd//@DAT/$dat}; cmd=${cmd//@HOST/$mp/host.dat}
		cmd=${cmd//@GUEST/$mp/guest.dat}; cmd=${cmd//@OUT/$out}
		# shellcheck disable=SC2086
		res=$("$measure" -n 1 -- "$ks" $cmd)
		rm -f "$out"
		kb=$(echo "$res" | field maxrss_kb) s=$(echo "$res" | field wall_s)
		st=$(echo "$res" | field status)
		c=$(printf '%5d MB %7.2f s' $((kb / 1024)) "$s")
		[ "$st" = 0 ] || c="$c (exit $st)"
		if [ "$kb" -gt "$limit_kb" ]; then
			c="$c !"
			over=$((over + 1))
		fi
		cell["$label|$n"]=$c
	done
done

printf '%-34s' "peak RSS, wall time"
for n in $sizes; do printf ' | %22s' "$((n / 1000000)) M events"; done
echo
for row in "${rows[@]}"; do
	label=${row%%|*}
	printf '%-34s' "$label"
	for n in $sizes; do printf ' | %22s' "${cell["$label|$n"]}"; done
	echo
done
if [ "$over" = 0 ]; then
	echo "target met:    every cell <= 256 MB peak RSS"
else
	echo "target MISSED: $over cells over 256 MB peak RSS (marked !)"
fi
