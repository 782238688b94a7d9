#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""validate_trace_event.py JSON - check a Chrome trace-event JSON file against
the format's rules (the "JSON Object Format" of the Trace Event Format doc):
an object with a traceEvents array; every event has name, ph, pid, tid; ts
(microseconds, a number >= 0) on all but metadata; X has dur >= 0; i has
s in g/p/t; C (counter) has args of numbers; M is one of the known
metadata names with args.  Also: the
complete events of one track do not overlap (vCPU states are exclusive).
Prints "ok" or the first problem; exit status 1 on a problem."""
import json, sys
from collections import defaultdict

def fail(msg):
    print("bad: " + msg)
    sys.exit(1)

doc = json.load(open(sys.argv[1]))
if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
    fail("no traceEvents array")
if doc.get("displayTimeUnit", "ms") not in ("ms", "ns"):
    fail("displayTimeUnit must be ms or ns")
meta_names = {"process_name", "process_labels", "process_sort_index", "thread_name", "thread_sort_index"}
tracks = defaultdict(list)
for n, e in enumerate(doc["traceEvents"]):
    where = "event %d" % n
    for k in ("name", "ph", "pid", "tid"):
        if k not in e:
            fail("%s has no %s" % (where, k))
    if not isinstance(e["pid"], int) or not isinstance(e["tid"], int):
        fail("%s: pid/tid must be integers" % where)
    ph = e["ph"]
    if ph == "M":
        if e["name"] not in meta_names or not isinstance(e.get("args"), dict):
            fail("%s: bad metadata event" % where)
        continue
    if not isinstance(e.get("ts"), (int, float)) or e["ts"] < 0:
        fail("%s: ts must be a number >= 0" % where)
    if ph == "X":
        if not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0:
            fail("%s: X needs dur >= 0" % where)
        tracks[(e["pid"], e["tid"], e.get("cat"))].append((e["ts"], e["ts"] + e["dur"]))
    elif ph == "i" or ph == "I":
        if e.get("s", "t") not in ("g", "p", "t"):
            fail("%s: instant scope must be g, p or t" % where)
    elif ph == "C":
        a = e.get("args")
        if not isinstance(a, dict) or not a or \
           not all(isinstance(v, (int, float)) for v in a.values()):
            fail("%s: C needs args of numbers" % where)
    else:
        fail("%s: unexpected phase %r" % (where, ph))
for key, sl in tracks.items():
    sl.sort()
    for a, b in zip(sl, sl[1:]):
        if b[0] < a[1] - 1e-6:
            fail("track %r: slices overlap at %.3f" % (key, b[0]))
print("ok %d events, %d tracks" % (len(doc["traceEvents"]), len(tracks)))
