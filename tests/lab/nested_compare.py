#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""nested_compare.py - compare exit counts of the nested lab (tests/lab/).

  nested_compare.py counts A.txt B.txt NAME-A NAME-B
      A.txt, B.txt: perf kvm stat report layout (perf's own, or kvmscope stat
      --format perf); prints "ok"/"not ok" and the counts compared; exit 1 on
      a difference.
  nested_compare.py top TOP.json STAT.json VMM.json
      top --json's last running totals per VM+vCPU and VM+reason against
      stat --json (--by vm --by vm,vcpu --by vm,reason) of a recording of
      the same exits; the VM names of both against the VMM's processes.
  nested_compare.py vmm REPORT.txt VMM.json VM VCPU
      the controlled reasons (io, cpuid, msr, hlt) of one vCPU's report
      against the VMM's own counts for it (io: but the last, see below).

KS_LAB_PLANT=1 drops one exit from the first side of every comparison
before comparing (the check must then fail: nested_test.sh proves it can).
"""
import json
import os
import re
import sys

ROW = re.compile(r"^\s*(.+?)\s+(\d+)\s+[\d.]+%\s+[\d.]+%\s+[\d.]+us\s")
# perf's SVM names of the exits minivmm makes on purpose
VMM_REASONS = {"io": "io", "cpuid": "cpuid", "msr": "msr", "hlt": "hlt"}


def table(path):
    rows = {}
    with open(path) as f:
        for line in f:
            m = ROW.match(line)
            if m:
                rows[m.group(1)] = rows.get(m.group(1), 0) + int(m.group(2))
    return rows


def plant(rows, key=None):
    if os.environ.get("KS_LAB_PLANT") == "1" and rows:
        k = key if key in rows else sorted(rows)[0]
        rows[k] -= 1
    return rows


def show(rows):
    return " ".join("%s=%d" % (k, rows[k]) for k in sorted(rows))


def counts(a, b, na, nb):
    ta, tb = plant(table(a)), table(b)
    if not tb:
        print("%s has no rows" % nb)
        return 1
    if ta != tb:
        diff = sorted(k for k in set(ta) | set(tb) if ta.get(k) != tb.get(k))
        print("%s != %s: %s" % (na, nb, " ".join(
            "%s %s/%s" % (k, ta.get(k, 0), tb.get(k, 0)) for k in diff)))
        return 1
    print("%d exits: %s" % (sum(ta.values()), show(ta)))
    return 0


def vmm(report, js, vm, vcpu):
    rows = plant(table(report), "hlt")
    doc = json.load(open(js))
    own = doc["vms"][int(vm)]["vcpus"][int(vcpu)]
    # perf and stat count an exit when the vCPU enters again; the last one,
    # minivmm's `out 0xe8` (done), is never followed by an entry
    want = {k: own[k] - (1 if k == "io" else 0) for k in VMM_REASONS}
    bad = []
    for key, reason in sorted(VMM_REASONS.items()):
        if rows.get(reason, 0) != want[key]:
            bad.append("%s %d (VMM %d)" % (reason, rows.get(reason, 0), want[key]))
    if bad:
        print("vm%s vcpu%s: %s" % (vm, vcpu, " ".join(bad)))
        return 1
    print("vm%s vcpu%s: %s" % (vm, vcpu, " ".join(
        "%s=%d" % (r, want[k]) for k, r in sorted(VMM_REASONS.items()))))
    return 0


def last_top(path):
    """top --json's last document, and the VM names it showed live (a VM's
    name is null once its process is gone)."""
    last, names = None, {}
    with open(path) as f:
        for line in f:
            if line.strip():
                last = json.loads(line)
                for r in last["rows"]:
                    if r.get("vm_name"):
                        names[r["vm"]] = r["vm_name"]
    return last, names


def stat_views(path):
    doc = json.load(open(path))
    return {v["by"]: v["rows"] for v in doc["views"]}


def top(topjs, statjs, vmmjs):
    """top's running totals per VM+vCPU and VM+reason == stat of the
    concurrent recording; VM names: stat's of the recording == top's live
    == the VMM's process names."""
    last, live_names = last_top(topjs)
    views = stat_views(statjs)
    t_vcpu = {(r["vm"], r["vcpu"]): r["total"] for r in last["rows"] if r["level"] == "vcpu"}
    t_reason = {(r["vm"], r["reason"]): r["total"] for r in last["rows"] if r["level"] == "reason"}
    s_vcpu = {(r["vm"], r["vcpu"]): r["samples"] for r in views["vm,vcpu"]}
    s_reason = {(r["vm"], r["key"]): r["samples"] for r in views["vm,reason"]}
    plant(t_reason)
    rc = 0
    for what, a, b in (("vm,vcpu", t_vcpu, s_vcpu), ("vm,reason", t_reason, s_reason)):
        if a != b:
            diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            print("top != stat by %s: %s" % (what, " ".join(
                "%s:%s/%s" % (k, a.get(k), b.get(k)) for k in diff[:6])))
            rc = 1
    doc = json.load(open(vmmjs))
    names = []
    for vm in doc["vms"]:
        s_name = {r["vm"]: r.get("vm_name") for r in views["vm"]}.get(vm["pid"])
        t_name = live_names.get(vm["pid"])
        names.append("%d=%s" % (vm["pid"], s_name))
        if not (s_name == t_name == vm["comm"]):
            print("vm %d: stat names it %r, top live %r, the VMM %r" % (
                vm["pid"], s_name, t_name, vm["comm"]))
            rc = 1
    if rc == 0:
        print("%d exits, %d vCPU and %d reason totals equal; VMs %s" % (
            sum(t_vcpu.values()), len(t_vcpu), len(t_reason), " ".join(names)))
    return rc


def main():
    a = sys.argv[1:]
    if len(a) == 5 and a[0] == "counts":
        return counts(*a[1:])
    if len(a) == 5 and a[0] == "vmm":
        return vmm(*a[1:])
    if len(a) == 4 and a[0] == "top":
        return top(*a[1:])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
