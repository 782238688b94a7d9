#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""top_totals.py - the running totals of `kvmscope top`'s exits view.

  top_totals.py stat STAT.json   exits per (vm, vcpu, reason) of
                                 `kvmscope stat --json --by vm,vcpu,reason`
  top_totals.py csv TOP.csv      the totals of the last interval's
                                 vcpu_reason rows of `top --csv`
  top_totals.py json TOP.json    the same from `top --json`
  top_totals.py vcpus STAT.json  exits per (vm, vcpu) of
                                 `kvmscope stat --json --by vm,vcpu`

Each prints lines "vm=V vcpu=C reason=R exits=N" (vcpus: without reason),
sorted.  csv and json first check every interval of every level (vm, vcpu,
reason, vcpu_reason): a row's total is the sum of its exits in this and
the earlier intervals, and every row that had exits is listed; when not,
they say which on stderr and exit 1.
"""
import csv
import json
import sys


def key_of(r):
    reason = r["reason"] if r["reason"] not in (None, "") else "-"
    return (r["level"], int(r["vm"]), int(r["vcpu"]), reason)


def check(intervals):
    """INTERVALS: [(number, [row dicts with level, vm, vcpu, reason, exits,
    total])] in order.  Returns the last interval's totals by key, or exits
    after naming the first disagreement."""
    sums = {}
    last = {}
    expect = 1
    for number, rows in intervals:
        if number != expect:
            sys.exit("interval %d follows %d" % (number, expect - 1))
        expect += 1
        exits, totals = {}, {}
        for r in rows:
            k = key_of(r)
            # rows of threads of unknown vCPUs share a key: add them up
            exits[k] = exits.get(k, 0) + int(r["exits"])
            totals[k] = totals.get(k, 0) + int(r["total"])
        for k, n in exits.items():
            sums[k] = sums.get(k, 0) + n
        for k, n in sums.items():
            if n and k not in totals:
                sys.exit("interval %d: %s had %d exits so far but is not listed" % (number, k, n))
            if totals.get(k, 0) != n:
                sys.exit("interval %d: %s total %d, its exits so far %d" %
                         (number, k, totals.get(k, 0), n))
        for k in totals:
            if k not in sums:
                sys.exit("interval %d: %s listed without exits" % (number, k))
        last = totals
    if not intervals:
        sys.exit("no intervals")
    return last


def print_reasons(totals):
    out = ["vm=%d vcpu=%d reason=%s exits=%d" % (k[1], k[2], k[3], n)
           for k, n in totals.items() if k[0] == "vcpu_reason" and n]
    print("\n".join(sorted(out)))


def from_csv(path):
    intervals = []
    for r in csv.DictReader(open(path)):
        n = int(r["interval"])
        if not intervals or intervals[-1][0] != n:
            intervals.append((n, []))
        intervals[-1][1].append(r)
    return intervals


def from_json(path):
    intervals = []
    with open(path) as f:
        for line in f:
            d = json.loads(line)
            intervals.append((d["interval"], d["rows"]))
    return intervals


def stat_rows(path, with_reason):
    with open(path) as f:
        d = json.load(f)
    n = {}
    for r in d["views"][0]["rows"]:
        k = "vm=%d vcpu=%d" % (r["vm"], r["vcpu"])
        if with_reason:
            k += " reason=%s" % r["key"]
        n[k] = n.get(k, 0) + r["samples"]
    print("\n".join(sorted("%s exits=%d" % kv for kv in n.items() if kv[1])))


def main():
    what, path = sys.argv[1], sys.argv[2]
    if what == "stat":
        stat_rows(path, True)
    elif what == "vcpus":
        stat_rows(path, False)
    elif what == "csv":
        print_reasons(check(from_csv(path)))
    elif what == "json":
        print_reasons(check(from_json(path)))
    else:
        sys.exit("unknown: " + what)


if __name__ == "__main__":
    main()
