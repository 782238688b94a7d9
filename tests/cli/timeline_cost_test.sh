#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# timeline_cost_test.sh - the exit cost per guest task of `kvmscope timeline`
# knows a guest task only inside its guest trace's data.
#
# Oracle: an independent computation from `kvmscope merge -t` (the events of
# host and guest in host time, as trace-cmd report prints them; merge_test.sh
# checks them against trace-cmd): the script pairs the host's kvm_exit and
# kvm_entry lines of the guest's vCPU thread, tracks the guest's current
# task on that vCPU from its sched_switch lines, and charges each exit's
# time (HLT aside) to the task current at the exit when the guest trace has
# an event at or after the exit's end with no lost-events marker of the
# vCPU between; else to "(no guest data)" (also before the guest's first
# event), and before the vCPU's first sched_switch (or its first after lost
# events) to "(guest task unknown)".  With --time the part of each exit
# inside the window counts.  Also: no guest task slice in the JSON ends
# after the guest trace's last event.
set -u
ks=$KVMSCOPE
data=$KS_SHARED/data/hip24
host=$data/host-tsync.trace.dat
guest=$data/guest-tsync.trace.dat
dir=$KS_TMP/timeline-cost
mkdir -p "$dir"

if [ ! -r "$host" ] || [ ! -r "$guest" ]; then
	for t in whole window json_slices idle_after_end; do echo "skip timeline_cost_$t: hip24 tsync recordings are absent"; done
	exit 0
fi
if ! command -v python3 >/dev/null; then
	for t in whole window json_slices idle_after_end; do echo "skip timeline_cost_$t: python3 is absent"; done
	exit 0
fi
if ! "$ks" merge -t -i "$host" -i "$guest" > "$dir/merge.txt" 2> "$dir/err"; then
	echo "not ok timeline_cost_merge: $(head -1 "$dir/err")"
	exit 0
fi

# oracle.py MERGE GUEST START END: "task|reason|exits|us" lines (END 0: no
# end); GUEST: the guest input's name in merge's lines.
# The guest's only vCPU runs on host thread 483882 (data/README.md: the
# host's GUEST option).
cat > "$dir/oracle.py" <<'PY'
import re, sys
path, GUEST, wstart, wend = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
TID = '483882'
line_re = re.compile(r'^\s*(\S+): +(.*)-(\d+) +\[(\d+)\] +(\d+)\.(\d{9}): +(\w+): *(.*)$')
# the line after a lost-events line has no file name (as trace-cmd prints it)
bare_re = re.compile(r'^()\s*(.*)-(\d+) +\[(\d+)\] +(\d+)\.(\d{9}): +(\w+): *(.*)$')
lost_re = re.compile(r'^\s*(\S+): +CPU:? ?(\d+).*(LOST|DROPPED)')
switch_re = re.compile(r'==> (.*):(\d+) \[-?\d+\]\s*$')
NODATA, UNKNOWN = '(no guest data)', '(guest task unknown)'
exits = []          # [task, reason, start, end, gap-after]
pending = []        # exits that wait for a guest event after them
task, seen, exit_at, f = None, False, None, None
for line in open(path):
    m = line_re.match(line)
    prev = f
    if not m and (m := bare_re.match(line)):
        pass
    if not m:
        m2 = lost_re.match(line)
        if m2:
            f = m2.group(1).rstrip(':')
        if m2 and f == GUEST and int(m2.group(2)) == 0:
            for e in pending:
                e[0] = NODATA
            pending = []
            task = None
        continue
    f, comm, pid, cpu, sec, ns, ev, rest = m.groups()
    f = f.rstrip(':') if f else prev
    ts = int(sec) * 1000000000 + int(ns)
    if f == GUEST:
        seen = True
        pending = []      # their tasks are known: the data went on
        if ev == 'sched_switch' and int(cpu) == 0:
            s = switch_re.search(rest)
            task = '%s-%s' % (s.group(1), s.group(2))
        continue
    if pid != TID:
        continue
    if ev == 'kvm_exit':
        reason = rest.split()[1]
        exit_at = (ts, reason, task if task else (UNKNOWN if seen else NODATA))
    elif ev == 'kvm_entry' and exit_at:
        start, reason, t = exit_at
        exit_at = None
        if reason == 'HLT':
            continue
        e = [t, reason, start, ts]
        exits.append(e)
        if t != NODATA:
            pending.append(e)
for e in pending:       # no guest event after them
    e[0] = NODATA
cost = {}
for t, reason, s, e in exits:
    inside = (s < e and e > wstart or s == e and s >= wstart) and (not wend or s < wend)
    if not inside:
        continue
    s, e = max(s, wstart), min(e, wend) if wend else e
    c = cost.setdefault((t, reason), [0, 0])
    c[0] += 1
    c[1] += e - s
for (t, reason), (n, d) in sorted(cost.items(), key=lambda kv: -kv[1][1]):
    print('%s|%s|%d|%.3f' % (t, reason, n, d / 1000.0))
PY

# the table of timeline's summary as "task|reason|exits|us"
table() {
	sed -n 's/^  guest task \(.*\) lost \([0-9.]*\) us to \([0-9]*\) exits of reason \([^ ]*\) while running$/\1|\4|\3|\2/p'
}

# compare NAME EXPECTED GOT: every line timeline prints (its top 40) is the
# oracle's, and it prints as many as there are (up to 40)
compare() {
	local name=$1 exp=$2 got=$3 n bad
	n=$(wc -l < "$exp"); [ "$n" -gt 40 ] && n=40
	bad=$(grep -vxFf "$exp" "$got" | head -1)
	if [ "$(wc -l < "$got")" -ne "$n" ]; then
		echo "not ok $name: timeline lists $(wc -l < "$got") (task, reason) costs, the oracle $n (of $(wc -l < "$exp"))"
	elif [ -n "$bad" ]; then
		echo "not ok $name: timeline says '$bad'; the oracle: $(grep -F "${bad%%|*}|$(echo "$bad" | cut -d'|' -f2)|" "$exp" || echo nothing)"
	else
		echo "ok $name ($n costs equal the oracle's; top: $(head -1 "$exp"))"
	fi
}

python3 "$dir/oracle.py" "$dir/merge.txt" guest-tsync.trace.dat 0 0 > "$dir/exp.txt"
"$ks" timeline -i "$host" -i "$guest" --json "$dir/tl.json" 2> "$dir/err" | table > "$dir/got.txt"
compare timeline_cost_whole "$dir/exp.txt" "$dir/got.txt"

# the middle second of the recording, in the host's seconds
t0=22150.4; t1=22151.4
python3 "$dir/oracle.py" "$dir/merge.txt" guest-tsync.trace.dat 22150400000000 22151400000000 > "$dir/exp-w.txt"
"$ks" timeline -i "$host" -i "$guest" --time "$t0,$t1" 2> "$dir/err" | table > "$dir/got-w.txt"
compare timeline_cost_window "$dir/exp-w.txt" "$dir/got-w.txt"

# guest task slices end with the guest trace's data (JSON times: us since
# the first event of the merge)
r=$(python3 - "$dir/merge.txt" "$dir/tl.json" <<'PY'
import json, re, sys
first = last = None
for line in open(sys.argv[1]):
    m = re.match(r'^\s*(\S+): +.*\[\d+\] +(\d+)\.(\d{9}): ', line)
    if not m:
        continue
    ts = int(m.group(2)) * 1000000000 + int(m.group(3))
    if first is None:
        first = ts
    if m.group(1).rstrip(':') == 'guest-tsync.trace.dat':
        last = ts
doc = json.load(open(sys.argv[2]))
ev = doc['traceEvents'] if isinstance(doc, dict) else doc
ends = [round((e['ts'] + e['dur']) * 1000) for e in ev if e.get('cat') == 'guest_task']
if not ends:
    print('no guest_task slices')
elif max(ends) != last - first:
    print('the last guest task slice ends %.6f s after the first event, the guest data %.6f s' % (max(ends) / 1e9, (last - first) / 1e9))
else:
    print('ok: %d slices, the last ends with the guest data at %.6f s' % (len(ends), (last - first) / 1e9))
PY
)
[[ $r == ok* ]] && echo "ok timeline_cost_json_slices (${r#ok: })" || echo "not ok timeline_cost_json_slices: $r"

# lost events: the guest trace converted to an uncompressed v6 file (its
# times already moved to host time), one page in the middle marked as
# having lost events before it (the ring buffer's RB_MISSED_EVENTS bit of
# the page header's commit word), which trace-cmd reports as
# "CPU:0 [EVENTS DROPPED]"
if ! "$ks" convert -q -i "$guest" -o "$dir/g6.dat" --file-version 6 --compression none 2> "$dir/err"; then
	echo "not ok timeline_cost_lost: convert: $(head -1 "$dir/err")"
	exit 0
fi
python3 - "$dir/g6.dat" "$dir/glost.dat" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
at = d.rfind(b'flyrecord\0')
off, size = struct.unpack_from('<QQ', d, at + 10)   # CPU 0's data
page = off + 4096 * (size // 4096 // 2)
commit, = struct.unpack_from('<Q', d, page + 8)
struct.pack_into('<Q', d, page + 8, commit | (1 << 31))
open(sys.argv[2], 'wb').write(d)
PY
"$ks" merge -t -i "$host" -i "$dir/glost.dat" > "$dir/merge-lost.txt" 2> /dev/null
if ! grep -q '^ *glost.dat: CPU:0 \[EVENTS DROPPED\]' "$dir/merge-lost.txt"; then
	echo "not ok timeline_cost_lost: merge shows no lost events of the patched guest trace"
else
	python3 "$dir/oracle.py" "$dir/merge-lost.txt" glost.dat 0 0 > "$dir/exp-l.txt"
	"$ks" timeline -i "$host" -i "$dir/glost.dat" 2> "$dir/err" | table > "$dir/got-l.txt"
	if ! grep -q '^(guest task unknown)|' "$dir/exp-l.txt"; then
		echo "not ok timeline_cost_lost: the oracle charges no exit to an unknown task after the gap"
	else
		compare timeline_cost_lost "$dir/exp-l.txt" "$dir/got-l.txt"
	fi
fi

# after the guest trace's end a vCPU in guest mode is RUNNING, not IDLE (its
# idle task is not known to be current); an IDLE interval begun before the
# end keeps its state.  The guest trace cut to its first half (convert
# --time; its times are already the host's), the host's whole.  With
# --limit tables=1 the intervals spill to the temporary file and the change
# at the end rewrites them from there (issue 33): the same JSON, the same rule.
if ! "$ks" convert -q -i "$guest" -o "$dir/ghalf.dat" --time 0%-50% 2> "$dir/err"; then
	echo "not ok timeline_cost_idle_after_end: convert: $(head -1 "$dir/err")"
	exit 0
fi
"$ks" merge -t -i "$host" -i "$dir/ghalf.dat" > "$dir/merge-half.txt" 2> /dev/null
ok=1
for t in default 1; do
	lim=(); [ "$t" = default ] || lim=(--limit "tables=$t")
	"$ks" timeline -i "$host" -i "$dir/ghalf.dat" "${lim[@]}" --json "$dir/half-$t.json" \
		> /dev/null 2> "$dir/err" || { ok=0; echo "not ok timeline_cost_idle_after_end: tables=$t: $(head -1 "$dir/err")"; continue; }
	r=$(python3 - "$dir/merge-half.txt" "$dir/half-$t.json" <<'PY'
import json, re, sys
first = last = None
for line in open(sys.argv[1]):
    m = re.match(r'^\s*(\S+): +.*\[\d+\] +(\d+)\.(\d{9}): ', line)
    if not m:
        continue
    ts = int(m.group(2)) * 1000000000 + int(m.group(3))
    if first is None:
        first = ts
    if m.group(1).rstrip(':') == 'ghalf.dat':
        last = ts
end = last - first      # the guest data's end, ns since the first event
doc = json.load(open(sys.argv[2]))
ev = doc['traceEvents'] if isinstance(doc, dict) else doc
st = [(round(e['ts'] * 1000), e['name'], e['pid']) for e in ev if e.get('cat') == 'vcpu_state']
gpids = {p for s, n, p in st if n == 'IDLE'}
idle_before = sum(1 for s, n, p in st if n == 'IDLE' and s < end)
idle_after = sum(1 for s, n, p in st if n == 'IDLE' and s >= end)
run_after = sum(1 for s, n, p in st if n == 'RUNNING' and s >= end and p in gpids)
if idle_after:
    print('%d IDLE intervals begin after the guest data ends at %.6f s' % (idle_after, end / 1e9))
elif not idle_before or not run_after:
    print('no test: %d IDLE intervals before the end, %d RUNNING after' % (idle_before, run_after))
else:
    print('ok: %d IDLE intervals before the end at %.6f s, none after, %d RUNNING after' % (idle_before, end / 1e9, run_after))
PY
)
	[[ $r == ok* ]] || { ok=0; echo "not ok timeline_cost_idle_after_end: tables=$t: $r"; }
done
if [ $ok = 1 ]; then
	if cmp -s "$dir/half-default.json" "$dir/half-1.json"; then
		echo "ok timeline_cost_idle_after_end (${r#ok: }; spilled: the same JSON)"
	else
		echo "not ok timeline_cost_idle_after_end: the JSON with tables=1 differs from the default's"
	fi
fi
