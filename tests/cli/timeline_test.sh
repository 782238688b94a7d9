#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeline_test.sh - `kvmscope timeline`: JSON, summary, HTML viewer.
#
# Oracles:
#  - the trace-event format rules (tests/output/validate_trace_event.py);
#  - an independent computation of each vCPU thread's time in guest mode
#    (kvm_entry .. next kvm_exit) from `kvmscope dump -t` text, which
#    dump_test.sh checks against trace-cmd: it must equal RUNNING + IDLE of
#    the JSON's state track of that thread, to the nanosecond;
#  - headless Chromium renders the HTML page (the script runs and fills in
#    its header; a screenshot is written).
set -u
ks=$KVMSCOPE
hip=$KS_SHARED/data/hip24
dir=$KS_TMP/timeline-test
mkdir -p "$dir"
printf 'leak:libtraceevent.so\n' > "$dir/lsan.supp"
export LSAN_OPTIONS="suppressions=$dir/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
val=tests/output/validate_trace_event.py
host=$hip/host-tsync.trace.dat guest=$hip/guest-tsync.trace.dat
if [ ! -r "$host" ] || [ ! -r "$guest" ]; then
	for t in json_valid guest_time_matches_dump summary html_chromium; do
		echo "skip timeline_$t: hip24 tsync recordings are absent"
	done
	exit 0
fi
if ! command -v python3 > /dev/null; then
	echo "skip timeline_json_valid: python3 is absent"
	echo "skip timeline_guest_time_matches_dump: python3 is absent"
else
	"$ks" timeline -q --json "$dir/tl.json" -i "$host" -i "$guest" 2> "$dir/err" ||
		echo "not ok timeline_json_run: $(head -1 "$dir/err")"
	r=$(python3 "$val" "$dir/tl.json")
	[[ $r == ok* ]] && echo "ok timeline_json_valid ($r)" || echo "not ok timeline_json_valid: $r"

	# host only: the trace ends with the host's last event
	"$ks" timeline -q --json "$dir/host.json" -i "$host" 2> "$dir/err"
	"$ks" dump -t "$host" > "$dir/host.txt"
	r=$(python3 - "$dir/host.txt" "$dir/host.json" <<'PY'
import json, re, sys
from collections import defaultdict
ns = lambda s: int(s.replace(".", ""))
entry, inguest, last = {}, defaultdict(int), 0
line_re = re.compile(r"^\s*(.*)-(\d+)\s+\[(\d+)\]\s+(\d+\.\d+): (\w+):")
for line in open(sys.argv[1]):
    m = line_re.match(line)
    if not m:
        continue
    tid, ts, ev = int(m.group(2)), ns(m.group(4)), m.group(5)
    last = max(last, ts)
    if ev == "kvm_entry":
        entry[tid] = ts
    elif ev == "kvm_exit" and tid in entry:
        inguest[tid] += ts - entry.pop(tid)
for tid, t in entry.items():
    inguest[tid] += last - t
doc = json.load(open(sys.argv[2]))
names = {}
got = defaultdict(int)
for e in doc["traceEvents"]:
    if e["ph"] == "M" and e["name"] == "thread_name":
        m = re.search(r"-(\d+)\)$", e["args"]["name"])
        if m:
            names[(e["pid"], e["tid"])] = int(m.group(1))
for e in doc["traceEvents"]:
    if e["ph"] == "X" and e.get("cat") == "vcpu_state" and e["args"]["state"] in ("RUNNING", "IDLE"):
        got[names[(e["pid"], e["tid"])]] += round(e["dur"] * 1000)
bad = [(t, inguest[t], got.get(t)) for t in inguest if inguest[t] != got.get(t)]
print("bad %r" % bad[:3] if bad or not inguest else "ok %d threads, %s ns" % (len(inguest), sorted(inguest.values())))
PY
)
	[[ $r == ok* ]] && echo "ok timeline_guest_time_matches_dump ($r)" || echo "not ok timeline_guest_time_matches_dump: $r"
fi

# summary: one block per vCPU (3 vCPU threads in this recording), % add up
"$ks" timeline -i "$host" -i "$guest" > "$dir/summary.txt" 2> "$dir/err"
nv=$(grep -c ' vCPU [0-9]* (host thread ' "$dir/summary.txt")
sums=$(awk '/^  [A-Z]+ / && $3 ~ /%$/ {sub("%","",$3); s+=$3} /host thread/ {if (n++) printf "%.1f ", s; s=0} END {printf "%.1f", s}' "$dir/summary.txt")
if [ "$nv" -eq 3 ] && [ -z "$(tr ' ' '\n' <<< "$sums" | grep -v '^100.0$\|^99.9$\|^100.1$')" ] &&
   grep -q '^  guest task .* lost .* us to .* exits of reason ' "$dir/summary.txt"; then
	echo "ok timeline_summary ($nv vCPUs, % per vCPU: $sums)"
else
	echo "not ok timeline_summary: $nv vCPUs, sums $sums"
fi

# HTML viewer in headless Chromium
chromium=/usr/bin/chromium
if [ ! -x "$chromium" ]; then
	echo "skip timeline_html_chromium: $chromium is absent"
	exit 0
fi
"$ks" timeline -q --html "$dir/tl.html" -i "$host" -i "$guest" 2> "$dir/err"
if grep -q 'https\?://' "$dir/tl.html"; then
	echo "not ok timeline_html_self_contained: the page references the network"
else
	echo "ok timeline_html_self_contained"
fi
profile=$(mktemp -d "$dir/chromium.XXXXXX")
flags="--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update --disable-sync --no-first-run --user-data-dir=$profile --window-size=1400,900"
timeout 90 "$chromium" $flags --screenshot="$dir/tl.png" "file://$dir/tl.html" > /dev/null 2>&1
timeout 90 "$chromium" $flags --dump-dom "file://$dir/tl.html" > "$dir/dom.html" 2>/dev/null
info=$(grep -o '<span id="info">[^<]*' "$dir/dom.html" | sed 's/.*>//')
size=$(stat -c %s "$dir/tl.png" 2>/dev/null || echo 0)
# rows: 3 vCPUs, a guest-task row for the traced guest's one vCPU only, 18 host CPUs
if [[ $info == *"22 rows"*intervals* ]] && [ "$size" -gt 20000 ]; then
	echo "ok timeline_html_chromium (viewer ran: $info; screenshot $size bytes: $dir/tl.png)"
else
	echo "not ok timeline_html_chromium: info '$info', screenshot $size bytes"
fi
