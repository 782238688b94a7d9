#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""top_split.py - an exit that spans top's intervals is split across them.

  top_split.py TOP.json REPORT.txt[.gz] STAT.json

TOP.json: `kvmscope top -i FILE --fast --json` (one document per interval);
REPORT: trace-cmd report -t of FILE (the independent computation: every
thread's kvm_exit -> next kvm_entry, cut at the interval boundaries);
STAT.json: `kvmscope stat -i FILE --json --by vm,vcpu`.

Checks: no row of any level is above 100% TIME; each vCPU row's time_ns is
the time its exits spent inside the interval, to the nanosecond; over all
intervals, a vCPU's time is stat's total_ns plus the exits still open at the
end and those another exit replaced (a kvm_exit while one is open: the entry
was not traced; stat does not measure it, top counts it until the next
exit).  Prints one line of failures (at most 5) and exits 1, else a summary.
"""
import gzip
import json
import re
import sys

top = [json.loads(l) for l in open(sys.argv[1])]
opener = gzip.open if sys.argv[2].endswith(".gz") else open
stat = json.load(open(sys.argv[3]))

threads = {}
for d in top:
    for t in d["threads"]:
        threads[t["tid"]] = (t["vm"], t["vcpu"])

line = re.compile(r"^\s*(.*)-(\d+)\s+\[\d+\]\s+(\d+)\.(\d{9}):\s+(kvm_exit|kvm_entry):")
spans = []           # (tid, begin_ns, end_ns or None, replaced)
first = None
last = None
open_exit = {}
entered = set()
with opener(sys.argv[2], "rt") as f:
    for l in f:
        m = line.match(l)
        ts_m = re.match(r"^\s*.*-\d+\s+\[\d+\]\s+(\d+)\.(\d{9}):", l)
        if ts_m:
            ts = int(ts_m.group(1)) * 10**9 + int(ts_m.group(2))
            first = ts if first is None else first
            last = ts
        if not m:
            continue
        tid = int(m.group(2))
        if m.group(5) == "kvm_entry":
            entered.add(tid)
        elif tid not in entered:
            continue  # a thread's events before its first entry: not a vCPU's yet
        if m.group(5) == "kvm_exit":
            if tid in open_exit:
                spans.append((tid, open_exit[tid], ts, True))
            open_exit[tid] = ts
        elif tid in open_exit:
            spans.append((tid, open_exit.pop(tid), ts, False))
for tid, b in open_exit.items():
    spans.append((tid, b, None, False))

errors = []
over = 0
for d in top:
    for r in d["rows"]:
        if r["time_pct"] > 100.0:
            over += 1
            if len(errors) < 5:
                errors.append("interval %d: %s row vm %d vcpu %d %s: TIME%% %.2f" % (
                    d["interval"], r["level"], r["vm"], r["vcpu"], r["reason"], r["time_pct"]))

end_all = first + top[-1]["end_ns"]
expect = {}
open_at_end = {}
replaced = {}
for tid, b, e, rep in spans:
    key = threads.get(tid)
    if key is None:
        continue
    if rep:
        replaced[key] = replaced.get(key, 0) + e - b
    if e is None:
        open_at_end[key] = open_at_end.get(key, 0) + max(0, end_all - b)
        e = end_all
    for d in top:
        hi = first + d["end_ns"]
        lo = hi - d["interval_ns"]
        ov = min(e, hi) - max(b, lo)
        if ov > 0:
            k = (d["interval"],) + key
            expect[k] = expect.get(k, 0) + ov
got = {}
for d in top:
    for r in d["rows"]:
        if r["level"] == "vcpu":
            got[(d["interval"], r["vm"], r["vcpu"])] = r.get("time_ns", -1)
for k in sorted(set(expect) | set(got)):
    if expect.get(k, 0) != got.get(k, 0) and len(errors) < 5:
        errors.append("interval %d vm %d vcpu %d: time_ns %d, the report's exits spend %d in it" % (
            k + (got.get(k, 0), expect.get(k, 0))))

for r in stat["views"][0]["rows"]:
    key = (r["vm"], r["vcpu"])
    s = sum(v for k, v in got.items() if k[1:] == key)
    want = r["total_ns"] + open_at_end.get(key, 0) + replaced.get(key, 0)
    if s != want and len(errors) < 5:
        errors.append("vm %d vcpu %d: %d ns over all intervals; stat %d + open at the end %d "
                      "+ replaced %d" % (key + (s, r["total_ns"], open_at_end.get(key, 0),
                                                replaced.get(key, 0))))
if errors:
    print("; ".join(errors) + (" (%d rows above 100%%)" % over if over else ""))
    sys.exit(1)
print("%d intervals, %d vCPU rows equal the report's split exits, none above 100%%" % (
    len(top), len(got)))
