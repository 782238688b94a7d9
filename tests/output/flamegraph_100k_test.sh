#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# flamegraph_100k_test.sh - the SVG flame graph of 100 k distinct stacks
# (written by test_flamegraph's t_100k_stacks) opens in headless Chromium:
# it renders within the time limit and the screenshot shows frames.
set -u
T=$(mktemp -d "${KS_TMP:-/tmp}/fg100k.XXXXXX")
trap 'rm -rf "$T"' EXIT
if [ ! -x /usr/bin/chromium ]; then
	echo "skip flamegraph_100k_chromium: no /usr/bin/chromium"
	exit 0
fi
KS_FLAME_OUT="$T/fg.svg" "$KS_BUILD/tests/output/test_flamegraph" > /dev/null
if [ ! -s "$T/fg.svg" ]; then
	echo "not ok flamegraph_100k_chromium: test_flamegraph wrote no SVG"
	exit 0
fi
size=$(( $(stat -c %s "$T/fg.svg") / 1024 ))
start=$(date +%s)
timeout 120 /usr/bin/chromium --headless --no-sandbox --disable-gpu \
	--disable-background-networking --disable-component-update --disable-sync \
	--no-first-run --user-data-dir="$T/prof" --screenshot="$T/fg.png" \
	--window-size=1200,800 "file://$T/fg.svg" > /dev/null 2>&1
secs=$(( $(date +%s) - start ))
if [ -s "$T/fg.png" ] && python3 "$(dirname "$0")/../cli/png_colours.py" "$T/fg.png"; then
	echo "ok flamegraph_100k_chromium (${size} KB SVG rendered in ${secs} s)"
else
	echo "not ok flamegraph_100k_chromium: no screenshot or a blank one after ${secs} s"
fi
