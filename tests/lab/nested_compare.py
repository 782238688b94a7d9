#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""nested_compare.py - compare exit counts of the nested lab (tests/lab/).

  nested_compare.py counts A.txt B.txt NAME-A NAME-B
      A.txt, B.txt: perf kvm stat report layout (perf's own, or kvmscope stat
      --format perf); prints "ok"/"not ok" and the counts compared; exit 1 on
      a difference.
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


def main():
    a = sys.argv[1:]
    if len(a) == 5 and a[0] == "counts":
        return counts(*a[1:])
    if len(a) == 5 and a[0] == "vmm":
        return vmm(*a[1:])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
