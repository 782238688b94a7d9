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

  nested_compare.py live A.json B.json NAME-A NAME-B PERFDIR VMM.json
      stat --live --json --by vm,vcpu,reason of two engines over the same
      exits: equal counts per (VM, vCPU, reason), each equal to perf kvm
      stat report of the same window per VM and vCPU
      (PERFDIR/record-eq-perf-vmV-vcpuC.perf, the VMs' pids from VMM.json).
  nested_compare.py hist A.metrics B.metrics NAME-A NAME-B
      the exporters of two engines over the same exits: identical
      kvmscope_(halt_)exit_duration_seconds counts; how many buckets are
      identical is reported (see hist()).
  nested_compare.py bpf HOLD.out REPORT.txt PID VCPU KVM_EXIT.format
      tools/engine-hold's exit series of process PID, vCPU VCPU (all
      threads and levels), named with the exit-reason tables of the
      kernel's kvm_exit format, against one perf kvm stat report; and each
      series' histogram buckets add up to its count.

  nested_compare.py promq QUERY | qmp SOCK CMD... | kvmstats | expoqmp |
      names | prom: the guest's Prometheus and QMP clients, and the checks of
      top --kvmstats, exporter --qmp, VM names and Prometheus (see each).

KS_LAB_PLANT=1 drops one exit from the first side of every comparison
before comparing (the check must then fail: nested_test.sh proves it can).
"""
import json
import os
import re
import sys

# the tests' one QMP client and view of KVM's statistics
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
import qmp_stats  # noqa: E402

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


def plant(rows, key=None, n=1):
    if os.environ.get("KS_LAB_PLANT") == "1" and rows:
        k = key if key in rows else sorted(rows)[0]
        rows[k] -= n
    return rows


def engine_overflow(metrics_path):
    """The exits a BPF engine's exporter says it could not count
    (kvmscope_engine_overflow_total{map="series"}): its series map was
    full, or the ring that takes what the map refuses (the map is not
    preallocated, and under the lab's TCG the kernel's allocator now and
    then has no element at hand) was full too."""
    if not metrics_path or not os.path.exists(metrics_path):
        return 0
    for line in open(metrics_path):
        if line.startswith('kvmscope_engine_overflow_total{map="series"} '):
            return int(float(line.split()[1]))
    return 0


def within_overflow(got, want, allow):
    """GOT short of WANT by no more than the ALLOW exits the engine
    reported it missed, and never above it."""
    keys = set(got) | set(want)
    short = sum(want.get(k, 0) - got.get(k, 0) for k in keys)
    return allow > 0 and all(got.get(k, 0) <= want.get(k, 0) for k in keys) and short <= allow


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
    print("vm%s vcpu%s: %s%s" % (vm, vcpu, " ".join(
        "%s=%d" % (r, want[k]) for k, r in sorted(VMM_REASONS.items())),
        " (watchdog kicks %d)" % own["kicks"] if own.get("kicks") else ""))
    return 0


SYM = re.compile(r"__print_symbolic\((.*?)\)\s*(?:,|:)", re.S)
PAIR = re.compile(r"\{\s*(-?(?:0x[0-9a-fA-F]+|\d+)(?:\s*\+\s*\d+)?)\s*,\s*\"([^\"]*)\"\s*\}")


def exit_names(fmt_path):
    """isa -> {code: name} from kvm_exit's print fmt: the VMX table (isa
    1, keyed by exit_reason & 0xffff) comes first, the SVM one second."""
    text = open(fmt_path).read()
    fmt = text[text.index("print fmt:"):]
    tables = []
    for m in SYM.finditer(fmt):
        t = {}
        for code, name in PAIR.findall(m.group(1)):
            v = sum(int(p.strip(), 0) for p in code.split("+"))
            t[v & 0xffffffff] = name
        tables.append(t)
    return {1: tables[0], 2: tables[1]} if len(tables) >= 2 else {}


def bpf(hold, report, pid, vcpu, fmt_path):
    names = exit_names(fmt_path)
    rows, bad = {}, []
    for line in open(hold):
        f = line.split()
        if not f or f[0] != "exit" or f[1] != pid or f[3] != vcpu:
            continue
        isa, reason, count = int(f[4]), int(f[6]), int(f[7])
        code = reason & 0xffff if isa == 1 else reason
        name = names.get(isa, {}).get(code, "UNKNOWN(%#x)" % code)
        rows[name] = rows.get(name, 0) + count
        if sum(int(x) for x in f[11:]) != count:
            bad.append("%s: buckets add up to %d, count %d" % (name, sum(int(x) for x in f[11:]), count))
    # the exits the engine said it could not count ("stats ... overflow_series N")
    allow = 0
    for line in open(hold):
        m = re.match(r"stats .*\boverflow_series (\d+)", line)
        if m:
            allow = int(m.group(1))
    rows = plant(rows, None, allow + 1)
    want = table(report)
    if not want:
        print("the perf report has no rows")
        return 1
    if (rows != want and not within_overflow(rows, want, allow)) or bad:
        diff = sorted(k for k in set(rows) | set(want) if rows.get(k) != want.get(k))
        print("bpf != perf: %s %s" % (" ".join(
            "%s %s/%s" % (k, rows.get(k, 0), want.get(k, 0)) for k in diff), " ".join(bad)))
        return 1
    print("%d exits: %s%s" % (sum(rows.values()), show(rows),
                              "; short of perf within the %d the engine reported not counted" % allow
                              if rows != want else ""))
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


def totals_differ(who, t_vcpu, t_reason, views, allow=0):
    """1 (and what differs, printed) unless top's totals per VM+vCPU and
    VM+reason equal stat's views of the recording, or are short of them
    by no more than the ALLOW exits top said its engine could not count
    (one planted exit more than that less under KS_LAB_PLANT=1)."""
    s_vcpu = {(r["vm"], r["vcpu"]): r["samples"] for r in views["vm,vcpu"]}
    s_reason = {(r["vm"], r["key"]): r["samples"] for r in views["vm,reason"]}
    plant(t_reason, None, allow + 1)
    rc = 0
    for what, a, b in (("vm,vcpu", t_vcpu, s_vcpu), ("vm,reason", t_reason, s_reason)):
        if a != b and not within_overflow(a, b, allow):
            diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            print("%s != stat by %s: %s" % (who, what, " ".join(
                "%s:%s/%s" % (k, a.get(k), b.get(k)) for k in diff[:6])))
            rc = 1
    return rc


def top(topjs, statjs, vmmjs, err_path=None):
    """top's running totals per VM+vCPU and VM+reason == stat of the
    concurrent recording (or short by no more than the exits top's stderr,
    ERR_PATH, says its engine could not count); VM names: stat's of the
    recording == top's live == the VMM's process names."""
    last, live_names = last_top(topjs)
    views = stat_views(statjs)
    t_vcpu = {(r["vm"], r["vcpu"]): r["total"] for r in last["rows"] if r["level"] == "vcpu"}
    t_reason = {(r["vm"], r["reason"]): r["total"] for r in last["rows"] if r["level"] == "reason"}
    rc = totals_differ("top", t_vcpu, t_reason, views, top_overflow(err_path))
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


def top_overflow(err_path):
    """The events top said, on its standard error at the end, that its
    engine could not count (0 when it said nothing)."""
    if not err_path or not os.path.exists(err_path):
        return 0
    m = re.search(r"engine could not count (\d+) events", open(err_path).read())
    return int(m.group(1)) if m else 0


def topcsv(topcsv_path, statjs, err_path=None):
    """top --batch --csv's running totals (each row's last "total") per
    VM+vCPU and VM+reason == stat of the concurrent recording, as top
    --json's are: the CSV is the same engine's other format.  Short by no
    more than the exits top's stderr (ERR_PATH) says its engine could not
    count passes, and says so.  The CSV's "overflow" column (the events
    the engine could not count in each interval, the same in each of its
    rows) adds up to no more than that: a live engine's, never empty."""
    import csv
    views = stat_views(statjs)
    t_vcpu, t_reason, over = {}, {}, {}
    with open(topcsv_path) as f:
        for r in csv.DictReader(f):
            vm, total = int(r["vm"]), int(r["total"])
            if r["level"] == "vcpu":
                t_vcpu[(vm, int(r["vcpu"]))] = total    # later intervals win
            elif r["level"] == "reason":
                t_reason[(vm, r["reason"])] = total
            if r.get("overflow", "") == "":
                print("top --csv: a row has no overflow count: %s" % r)
                return 1
            over[r["interval"]] = int(r["overflow"])
    allow = top_overflow(err_path)
    if sum(over.values()) > allow:
        print("top --csv's overflow column adds up to %d, more than the %d top said at the end"
              % (sum(over.values()), allow))
        return 1
    rc = totals_differ("top --csv", t_vcpu, t_reason, views, allow)
    if rc == 0:
        print("%d exits, %d vCPU and %d reason totals equal%s" % (
            sum(t_vcpu.values()), len(t_vcpu), len(t_reason),
            " or short by no more than the %d top said its engine could not count" % allow
            if allow else ""))
    return rc


def promq(query):
    """Prometheus's query API (127.0.0.1:9090): the result list as JSON."""
    import urllib.parse
    import urllib.request
    url = "http://127.0.0.1:9090/api/v1/query?" + urllib.parse.urlencode({"query": query})
    doc = json.loads(urllib.request.urlopen(url, timeout=20).read().decode())
    if doc.get("status") != "success":
        print("query failed: %r" % doc, file=sys.stderr)
        return 1
    print(json.dumps(doc["data"]["result"]))
    return 0


def qmp(sock, *cmds):
    """QMP commands in order on SOCK: stats (tests/cli/qmp_stats.py's
    view, printed as JSON), or any command without arguments."""
    return qmp_stats.run(sock, cmds)


def stable_stats(before, after):
    b, a = json.load(open(before)), json.load(open(after))
    return {k: v for k, v in b.items() if a.get(k) == v}, b


def kvmstats(top_txt, before, after, pid, name):
    """top --kvmstats --qmp -b -v of a paused QEMU == query-stats (the
    values equal in reads before and after it)."""
    stable, allv = stable_stats(before, after)
    shown, vm = {}, None
    for words, stats in qmp_stats.top_view(top_txt):
        vm = words[0]
        shown.update(stats)
    if vm != "%s(%s)" % (pid, name):
        print("VM row %r, want %s(%s)" % (vm, pid, name))
        return 1
    bad = ["%s: %s, QMP %s" % (k, shown[k], v) for k, v in stable.items()
           if k in shown and shown[k] != v]
    missing = [k for k in allv if k not in shown]
    nonzero = sum(1 for k, v in stable.items() if v not in ("0", "false"))
    if bad or missing or len(stable) < 20 or nonzero < 10:
        print("%d stable, %d non-zero; differ: %s; missing: %s" % (
            len(stable), nonzero, bad[:3], missing[:3]))
        return 1
    print("%d values (%d non-zero) equal QMP's" % (len(stable), nonzero))
    return 0


def expoqmp(prom, before, after, name):
    """exporter --qmp's kvm_stat_* == query-stats, for the statistics it
    exports under their own name (NAME or NAME_total; histograms and
    statistics in other units are left out)."""
    stable, _ = stable_stats(before, after)
    rx = re.compile(r'^kvm_stat_([a-z0-9_]+)\{domain="([^"]*)"(?:,vcpu="(\d+)")?\} (\S+)$')
    got = {}
    for line in open(prom):
        m = rx.match(line.strip())
        if m and m.group(2) == name:
            got[(m.group(1), m.group(3) or "-1")] = m.group(4)
    checked, bad = 0, []
    for k, v in stable.items():
        stat, vcpu = k.split()
        for metric in (stat, stat + "_total"):
            if (metric, vcpu) in got:
                g = got[(metric, vcpu)]
                want = {"true": "1", "false": "0"}.get(v, v)
                checked += 1
                if float(g) != float(want):
                    bad.append("%s: %s, QMP %s" % (k, g, v))
    if bad or checked < 20:
        print("%d compared; differ: %s" % (checked, bad[:4]))
        return 1
    print("%d values equal QMP's" % checked)
    return 0


def names(statjs, topjs, *vms):
    """stat --by vm of a recording names each QEMU as top does live, and
    groups all its threads (tids listed) under its pid."""
    doc = json.load(open(statjs))
    views = {v["by"]: v["rows"] for v in doc["views"]}
    s_names = {r["vm"]: r.get("vm_name") for r in views["vm"]}
    threads = {t["tid"]: t["vm"] for t in doc["threads"]}
    _, live = last_top(topjs)
    rc, out = 0, []
    for i in range(0, len(vms), 3):
        want, pid = vms[i], int(open(vms[i + 1]).read())
        tids = [int(t) for t in open(vms[i + 2]).read().split()]
        strays = [t for t in tids if t in threads and threads[t] != pid]
        seen = [t for t in tids if t in threads]
        if s_names.get(pid) != want or live.get(pid) != want or strays or len(seen) < 2:
            print("%s (pid %d): stat %r, top %r; threads elsewhere %s; threads seen %d" % (
                want, pid, s_names.get(pid), live.get(pid), strays, len(seen)))
            rc = 1
        out.append("%d=%s (%d threads)" % (pid, want, len(seen)))
    if rc == 0:
        print(" ".join(out))
    return rc


def prom(exits_js, halts_js, perf_txt, vmm_js, metrics=None):
    """Prometheus's last values of kvmscope_exits_total per reason (all
    domains) == perf's counts, or short of them by no more than the exits
    the exporter (METRICS, its last page) reported it could not count;
    halt histogram counts == the VMM's halts; the domains are the VMM's
    process names."""
    got, domains = {}, set()
    for r in json.load(open(exits_js)):
        k = r["metric"].get("reason", "")
        got[k] = got.get(k, 0) + int(float(r["value"][1]))
        domains.add(r["metric"].get("domain"))
    allow = engine_overflow(metrics)
    plant(got, "hlt", allow + 1)
    want = table(perf_txt)
    halts = sum(int(float(r["value"][1])) for r in json.load(open(halts_js)))
    doc = json.load(open(vmm_js))
    vmm_halts = sum(c["hlt"] for vm in doc["vms"] for c in vm["vcpus"])
    rc = 0
    if got != want and not within_overflow(got, want, allow):
        diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
        print("prometheus != perf: %s (the exporter reported %d exits not counted)" % (" ".join(
            "%s %s/%s" % (k, got.get(k, 0), want.get(k, 0)) for k in diff), allow))
        rc = 1
    comms = set(vm["comm"] for vm in doc["vms"])
    if domains != comms:
        print("domains %s, the VMM's processes %s" % (sorted(domains), sorted(comms)))
        rc = 1
    if halts != vmm_halts:
        print("halt histogram counts %d, the VMM halted %d times" % (halts, vmm_halts))
        rc = 1
    if rc == 0:
        print("%d exits: %s; %d halts; domains %s%s" % (
            sum(got.values()), show(got), halts, " ".join(sorted(domains)),
            "; %d short of perf, within the %d the exporter reported not counted" % (
                sum(want.values()) - sum(got.values()), allow) if got != want else ""))
    return rc


def lost(rec_err, stats, kept, vmm_js):
    """record's lost events == what its tracefs instance's per-CPU stats
    say (overrun + dropped events); the cpuid exits kept plus the lost ==
    the VMM's cpuid count."""
    m = re.search(r"LOST EVENTS: (\d+) reported in pages, (\d+) overrun/dropped",
                  open(rec_err).read())
    in_pages, by_kernel = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    tracefs = 0
    for line in open(stats):
        k = re.match(r"^(overrun|dropped events): (\d+)", line)
        if k:
            tracefs += int(k.group(2))
    n = int(open(kept).read().strip() or 0)
    doc = json.load(open(vmm_js))
    cpuid = sum(c["cpuid"] for vm in doc["vms"] for c in vm["vcpus"])
    print("record: %d lost in pages, %d by the kernel; tracefs %d; kept %d, VMM %d" % (
        in_pages, by_kernel, tracefs, n, cpuid))
    if not by_kernel or by_kernel != tracefs or n + by_kernel != cpuid:
        return 1
    return 0


def live_rows(path):
    doc = json.load(open(path))
    views = {v["by"]: v["rows"] for v in doc["views"]}
    rows = {}
    for r in views["vm,vcpu,reason"]:
        k = (r["vm"], r["vcpu"], r["key"])
        rows[k] = rows.get(k, 0) + r["samples"]
    return rows, doc.get("input", "")


def live_overflow(js_path):
    """The exits stat --live said on stderr (NAME.err beside NAME.json)
    its engine could not count."""
    err = os.path.splitext(js_path)[0] + ".err"
    if not os.path.exists(err):
        return 0
    m = re.search(r"(\d+) exits not counted", open(err).read())
    return int(m.group(1)) if m else 0


def live(a_js, b_js, na, nb, perfdir, vmm_js):
    ta, ia = live_rows(a_js)
    tb, ib = live_rows(b_js)
    # A's and B's own reports of exits their engine could not count
    aa, ab = live_overflow(a_js), live_overflow(b_js)
    plant(ta, None, aa + 1)
    rc = 0
    if ta != tb and not within_overflow(ta, tb, aa) and not within_overflow(tb, ta, ab):
        diff = sorted(k for k in set(ta) | set(tb) if ta.get(k) != tb.get(k))
        print("%s != %s: %s" % (na, nb, " ".join(
            "%s/%s/%s %s/%s" % (k + (ta.get(k, 0), tb.get(k, 0))) for k in diff[:8])))
        rc = 1
    perf = {}
    doc = json.load(open(vmm_js))
    for v, vm in enumerate(doc["vms"]):
        for c in range(len(vm["vcpus"])):
            for reason, n in table(os.path.join(
                    perfdir, "record-eq-perf-vm%d-vcpu%d.perf" % (v, c))).items():
                perf[(vm["pid"], c, reason)] = n
    if not perf:
        print("no perf rows")
        return 1
    for name, t, allow in ((na, ta, aa), (nb, tb, ab)):
        if t != perf and not within_overflow(t, perf, allow):
            diff = sorted(k for k in set(t) | set(perf) if t.get(k) != perf.get(k))
            print("%s != perf: %s" % (name, " ".join(
                "%s/%s/%s %s/%s" % (k + (t.get(k, 0), perf.get(k, 0))) for k in diff[:8])))
            rc = 1
    if rc == 0:
        print("%d exits in %d (VM, vCPU, reason) rows equal in %s, %s and perf%s" % (
            sum(ta.values()), len(ta), ia, ib,
            " (short by no more than the %d and %d exits the engines reported not counted)" % (
                aa, ab) if aa or ab else ""))
    return rc


def hist_samples(path):
    rx = re.compile(r'^(kvmscope_(?:halt_)?exit_duration_seconds_(?:bucket|count))'
                    r'\{([^}]*)\} (\S+)$')
    got = {}
    for line in open(path):
        m = rx.match(line.strip())
        if m:
            got[(m.group(1), m.group(2))] = int(float(m.group(3)))
    return got


def hist(a_m, b_m, na, nb):
    """Exits per histogram (its _count) identical; the buckets compared and
    reported, not required equal: each engine times an exit with its own
    probe on the same tracepoints, and under TCG the probes' own cost moves
    exits near a bound across it (two tracefs instances side by side
    differ as much)."""
    ta, tb = hist_samples(a_m), hist_samples(b_m)
    ca = {k: v for k, v in ta.items() if k[0].endswith("_count")}
    cb = {k: v for k, v in tb.items() if k[0].endswith("_count")}
    # the exits A's engine reported it could not count (A is the BPF side)
    allow = engine_overflow(a_m)
    plant(ca, None, allow + 1)
    if not cb or not sum(cb.values()):
        print("%s has no histogram samples" % nb)
        return 1
    short = ""
    if ca != cb:
        diff = sorted(k for k in set(ca) | set(cb) if ca.get(k) != cb.get(k))
        if not within_overflow(ca, cb, allow):
            print("%s != %s: %s (%s reported %d exits not counted)" % (na, nb, " ".join(
                "%s{%s} %s/%s" % (k + (ca.get(k), cb.get(k))) for k in diff[:6]), na, allow))
            return 1
        short = "; %s short by %d, within the %d it reported not counted" % (
            na, sum(cb.values()) - sum(ca.values()), allow)
    bk = [k for k in set(ta) | set(tb) if k[0].endswith("_bucket")]
    moved = [abs(ta.get(k, 0) - tb.get(k, 0)) for k in bk if ta.get(k, 0) != tb.get(k, 0)]
    print("%d histograms, %d exits: counts %s; %d of %d buckets identical%s" % (
        len(cb), sum(cb.values()), short[2:] if short else "identical", len(bk) - len(moved), len(bk),
        " (the others by at most %d exits: each engine's own probe timing)" % max(moved)
        if moved else ""))
    return 0


def main():
    a = sys.argv[1:]
    if len(a) == 7 and a[0] == "live":
        return live(*a[1:])
    if len(a) == 5 and a[0] == "hist":
        return hist(*a[1:])
    if len(a) == 5 and a[0] == "counts":
        return counts(*a[1:])
    if len(a) == 5 and a[0] == "vmm":
        return vmm(*a[1:])
    if len(a) in (4, 5) and a[0] == "top":
        return top(*a[1:])
    if len(a) in (3, 4) and a[0] == "topcsv":
        return topcsv(*a[1:])
    if len(a) == 2 and a[0] == "promq":
        return promq(a[1])
    if len(a) >= 2 and a[0] == "qmp":
        return qmp(*a[1:])
    if len(a) == 6 and a[0] == "kvmstats":
        return kvmstats(*a[1:])
    if len(a) == 5 and a[0] == "expoqmp":
        return expoqmp(*a[1:])
    if len(a) >= 6 and a[0] == "names" and (len(a) - 3) % 3 == 0:
        return names(*a[1:])
    if len(a) == 5 and a[0] == "lost":
        return lost(*a[1:])
    if len(a) in (5, 6) and a[0] == "prom":
        return prom(*a[1:])
    if len(a) == 6 and a[0] == "bpf":
        return bpf(*a[1:])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
