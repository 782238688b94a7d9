#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""host_model_json.py - the thread -> (VM, vCPU, VM name) mapping of one
command's JSON output, or the VM and vCPU rows of `kvmscope top`.

Usage: host_model_json.py threads FILE.json   one line per thread lifetime (of
                                              the last document of JSON Lines)
       host_model_json.py top FILE.csv        (vm, vcpu) rows and VM names of top
       host_model_json.py topjson FILE.json   the same from `top --json`
       host_model_json.py pairs FILE.json     the same from `stat --by vm,vcpu`
       host_model_json.py topsums FILE.csv    exits per (vm, vcpu), summed over
                                              top's intervals
       host_model_json.py sums FILE.json      the same from `stat --by vm,vcpu`
       host_model_json.py mergeevents FILE.json  the host threads whose last
                                              event in `merge --json` carries
                                              another VM, vCPU or VM name than
                                              the document's "threads" (none)
Lines are sorted; two commands agree when their lines are identical.
"""
import csv
import json
import sys


def load(path):
    """A JSON document, or the last of a JSON Lines file (`top --json`:
    one document per interval, each on one line)."""
    with open(path) as f:
        text = f.read()
    lines = [line for line in text.splitlines() if line]
    if len(lines) > 1 and all(line.startswith("{") for line in lines):
        return json.loads(lines[-1])
    return json.loads(text)


def threads(path):
    d = load(path)
    out = []
    for t in d["threads"]:
        out.append("%d vm=%d vcpu=%d vm_name=%s" % (t["tid"], t["vm"], t["vcpu"], t["vm_name"]))
    return out


def pairs(path):
    """(vm, vcpu) rows of `stat --by vm,vcpu --json`, and each VM's name."""
    with open(path) as f:
        d = json.load(f)
    out = set()
    for r in d["views"][0]["rows"]:
        out.add("vm=%d vcpu=%d" % (r["vm"], r["vcpu"]))
        out.add("vm=%d name=%s" % (r["vm"], r["vm_name"]))
    return sorted(out)


def topjson(path):
    """The same from `top --json` (every interval): its rows' VM names are
    plain strings (null when unknown)."""
    out = set()
    with open(path) as f:
        for line in f:
            for r in json.loads(line)["rows"]:
                if r["level"] == "vcpu":
                    out.add("vm=%d vcpu=%d" % (r["vm"], r["vcpu"]))
                elif r["level"] == "vm":
                    out.add("vm=%d name=%s" % (r["vm"], r["vm_name"]))
    return sorted(out)


def top(path):
    """The (vm, vcpu) rows and VM names of `top --csv -v` (one interval)."""
    out = set()
    for r in csv.DictReader(open(path)):
        if r["level"] == "vcpu":
            out.add("vm=%s vcpu=%s" % (r["vm"], r["vcpu"]))
        elif r["level"] == "vm":
            label = r["vm_name"]
            name = label[len(r["vm"]) + 1:-1] if label.startswith(r["vm"] + "(") else None
            out.add("vm=%s name=%s" % (r["vm"], name))
    return sorted(out)


def topsums(path):
    """Exits per (vm, vcpu) of `top --csv -v`, summed over its intervals."""
    n = {}
    for r in csv.DictReader(open(path)):
        if r["level"] == "vcpu":
            k = "vm=%s vcpu=%s" % (r["vm"], r["vcpu"])
            n[k] = n.get(k, 0) + int(r["exits"])
    return ["%s exits=%d" % kv for kv in n.items()]


def sums(path):
    """Exits per (vm, vcpu) of `stat --by vm,vcpu --json`."""
    with open(path) as f:
        d = json.load(f)
    return ["vm=%d vcpu=%d exits=%d" % (r["vm"], r["vcpu"], r["samples"])
            for r in d["views"][0]["rows"]]


def mergeevents(path):
    """Each host thread's last event in `merge --json` is attributed as the
    model's "threads" array has the thread (one of its lifetimes, when its
    tid was reused)."""
    d = load(path)
    last = {}
    for e in d["events"]:
        if e["input"] == 0 and "vm" in e:
            last[e["tid"]] = (e["vm"], e["vcpu"], e["vm_name"])
    known = {}
    for t in d["threads"]:
        known.setdefault(t["tid"], []).append((t["vm"], t["vcpu"], t["vm_name"]))
    if not last:
        return ["no host event carries a VM"]
    return ["%d: last event %r, threads %r" % (tid, a, known.get(tid))
            for tid, a in last.items() if a not in known.get(tid, [])]


def main():
    what, path = sys.argv[1], sys.argv[2]
    lines = {"threads": threads, "pairs": pairs, "top": top, "topjson": topjson,
             "topsums": topsums, "sums": sums, "mergeevents": mergeevents}[what](path)
    for line in sorted(lines):
        print(line)


if __name__ == "__main__":
    main()
