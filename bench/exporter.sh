#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# exporter.sh - benchmarks of kvmscope exporter.
#
#   bench/exporter.sh [BUILD]      (perf for the template, curl, python3)
#
# A generated perf.data (tools/gen-perfdata) of 100 VMs x 8 vCPUs x 40 exit
# reasons ($EXP_PAIRS exit/entry pairs, default 1,200,000: every series
# appears) is
# 1. replayed as fast as possible: the exporter's CPU seconds per million
#    events (user + sys of the whole process, from its own report; with the
#    live default --rotate, so the per-thread context is kept), next to
#    `kvmscope stat --by vm,vcpu,reason` on the same file;
# 2. served after the replay: $EXP_SCRAPES (20) scrapes of /metrics in each
#    format, timed by curl (median and max) and by the exporter itself
#    (kvmscope_scrape_duration_seconds: copy + format), with the body size.
set -u
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
ks=$root/$build/kvmscope
gen=$root/$build/tools/gen-perfdata
dir=${BENCH_DIR:-/tmp/kvmscope-bench}
pairs=${EXP_PAIRS:-1200000}
scrapes=${EXP_SCRAPES:-20}
mkdir -p "$dir"
[ -x "$ks" ] && [ -x "$gen" ] || { echo "no $ks or $gen: make tests first"; exit 1; }
command -v curl >/dev/null || { echo "skip: curl is not installed"; exit 0; }
tmpl=$dir/template.data
[ -s "$tmpl" ] || perf kvm stat record -a -o "$tmpl" sleep 0.1 >/dev/null 2>&1 ||
	{ echo "skip: perf kvm stat record cannot record a template"; exit 0; }
f=$dir/exporter-100x8x40-$pairs.data
[ -s "$f" ] || "$gen" --template "$tmpl" -o "$f" --vendor intel --pairs "$pairs" --vms 100 \
	--vcpus 8 --more-reasons 24 --rounds || exit 1
series=$("$ks" stat -i "$f" --by vm,vcpu,reason --csv | grep -c '^"vm,vcpu,reason"')
echo "input: $(( $(stat -c %s "$f") / 1048576 )) MB, $pairs exit/entry pairs, $series (VM, vCPU, reason) series"

# 1. CPU per million events
out=$(KVMSCOPE_EXPORTER_STATS=1 "$ks" exporter --listen 127.0.0.1:0 -i "$f" --speed max --linger 0 \
	--rotate 16777216 2>&1)
recs=$(echo "$out" | sed -n 's/.* \([0-9]*\) records, \([0-9.]*\) s CPU.*/\1/p')
cpu=$(echo "$out" | sed -n 's/.* \([0-9]*\) records, \([0-9.]*\) s CPU.*/\2/p')
/usr/bin/time -f "%U %S" -o "$dir/stat.time" "$ks" stat -i "$f" --by vm,vcpu,reason >/dev/null
read -r su ss < "$dir/stat.time"
echo "$recs $cpu $su $ss" | awk '{
	printf "exporter replay: %d events, %.3f s CPU: %.3f CPU s per million events\n", $1, $2, $2 / $1 * 1e6
	printf "kvmscope stat --by vm,vcpu,reason, same file: %.3f s CPU: %.3f CPU s per million events\n", $3 + $4, ($3 + $4) / $1 * 1e6 }'

# 2. scrape latency with every series present
"$ks" exporter --listen 127.0.0.1:0 -i "$f" --speed max 2>"$dir/exporter.err" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
port=
for i in $(seq 100); do
	port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\)\/metrics/\1/p' "$dir/exporter.err")
	[ -n "$port" ] && break
	sleep 0.1
done
for i in $(seq 600); do
	curl -sf "http://127.0.0.1:$port/metrics" | grep -q '^kvmscope_replay_finished 1' && break
	sleep 0.2
done
for fmt in text openmetrics; do
	accept='text/plain;version=0.0.4'
	[ $fmt = openmetrics ] && accept='application/openmetrics-text;version=1.0.0'
	for i in $(seq "$scrapes"); do
		curl -s -H "Accept: $accept" -o "$dir/scrape.$fmt" -w '%{time_total}\n' "http://127.0.0.1:$port/metrics"
	done > "$dir/times.$fmt"
	own=$(curl -s "http://127.0.0.1:$port/metrics" | sed -n 's/^kvmscope_scrape_duration_seconds //p')
	lines=$(wc -l < "$dir/scrape.$fmt")
	size=$(stat -c %s "$dir/scrape.$fmt")
	sort -n "$dir/times.$fmt" | awk -v fmt=$fmt -v own="$own" -v lines="$lines" -v size="$size" '
		{ t[NR] = $1 } END {
		printf "scrape (%s): %d lines, %.1f MB: median %.1f ms, max %.1f ms over %d scrapes (curl); exporter copy+format %.1f ms\n",
			fmt, lines, size / 1048576, t[int((NR + 1) / 2)] * 1000, t[NR] * 1000, NR, own * 1000 }'
done
