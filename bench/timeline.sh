#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeline.sh BUILD - kvmscope timeline's pictures on a large input:
# $BENCH_TL_PAIRS exit/entry pairs (default 2,500,000: 5 M events, about
# 670 MB, 2 VMs x 4 vCPUs) generated once by gen-perfdata into $BENCH_DIR
# (default /tmp/kvmscope-bench) from a `perf kvm stat record` template.
# Best of 3 wall times of the summary alone, then with --html and with
# --perfetto: the difference is the time to write the file.  Targets: each
# written in under 3 s; the page at most 50 MB; the protobuf at most 1/4
# of the JSON (written once, it is large); the page parsed and drawn by
# headless Chromium (one load, wall time of the whole browser run).
set -eu
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dir=${BENCH_DIR:-/tmp/kvmscope-bench}
pairs=${BENCH_TL_PAIRS:-2500000}
mkdir -p "$dir"
tmpl="$dir/template.data"
data="$dir/timeline-$pairs.data"
[ -s "$tmpl" ] || perf kvm stat record -a -o "$tmpl" sleep 0.1 >/dev/null 2>&1
[ -s "$data" ] || "$build/tools/gen-perfdata" --template "$tmpl" -o "$data" --pairs "$pairs" \
	--vms 2 --vcpus 4 --rounds
measure="$build/bench/measure"
field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }
ks="$build/kvmscope"
base=$("$measure" -n 3 -- "$ks" timeline -q -i "$data" | field wall_s)
html=$("$measure" -n 3 -- "$ks" timeline -q --html "$dir/tl.html" -i "$data" | field wall_s)
pb=$("$measure" -n 3 -- "$ks" timeline -q --perfetto "$dir/tl.pb" -i "$data" | field wall_s)
"$ks" timeline -q --json "$dir/tl.json" -i "$data"
hs=$(stat -c %s "$dir/tl.html"); ps=$(stat -c %s "$dir/tl.pb"); js=$(stat -c %s "$dir/tl.json")
rm -f "$dir/tl.json"
printf '%-52s %8s s\n' "kvmscope timeline ($((2 * pairs)) events, summary only)" "$base"
awk -v b="$base" -v h="$html" -v p="$pb" -v hs="$hs" -v ps="$ps" -v js="$js" 'BEGIN {
	printf "%-52s %8.2f s  %7.1f MB   target: under 3 s, <= 50 MB: %s\n", "  writing --html",
		h - b, hs / 1e6, (h - b < 3 && hs <= 50e6) ? "met" : "NOT MET"
	printf "%-52s %8.2f s  %7.1f MB   target: under 3 s, <= 1/4 of JSON (%.0f MB): %s\n",
		"  writing --perfetto", p - b, ps / 1e6, js / 1e6, (p - b < 3 && ps * 4 <= js) ? "met" : "NOT MET"
}'
if [ -x /usr/bin/chromium ]; then
	profile=$(mktemp -d "$dir/chromium.XXXXXX")
	t0=$(date +%s.%N)
	timeout 120 /usr/bin/chromium --headless --no-sandbox --disable-gpu --user-data-dir="$profile" \
		--window-size=1400,900 --screenshot="$dir/tl.png" "file://$dir/tl.html" >/dev/null 2>&1 || true
	t1=$(date +%s.%N)
	rm -rf "$profile"
	awk -v t="$(echo "$t1 - $t0" | bc)" 'BEGIN { printf "%-52s %8.2f s   target: page opens in under 3 s: %s\n",
		"  headless Chromium: start, load, draw, screenshot", t, t < 3 ? "met" : "NOT MET (browser start included)" }'
fi
