#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""halt_compare.py - the halt view's check on real halts (tests/lab/).

  halt_compare.py qmp SOCK CMD...
      QMP commands in order: stop, cont, quit, or stats=FILE (query-cpus-fast
      and query-stats of the VM and of each vCPU, as QEMU returns them,
      histograms included, written as JSON to FILE).
  halt_compare.py compare VIEW.json TRACE.txt BEFORE AFTER
      stat --event halt --json of a recording against (a) the raw
      kvm_vcpu_wakeup / kvm_halt_poll_ns lines of `trace-cmd report` of the
      same recording, counted here, and (b) KVM's statistics (query-stats)
      read before and after the window with the VM paused.  Prints the
      comparison per vCPU; exit 1 on a difference.

What KVM does per halt (virt/kvm/kvm_main.c, kvm_vcpu_halt): it polls up to
the vCPU's window (start .. poll_end), sleeps if nothing came (waited), and
emits kvm_vcpu_wakeup with ns = the halt's whole time (cur - start).  A
halt that slept adds poll_end - start to halt_poll_fail_ns (if it polled)
and cur - poll_end to halt_wait_ns and one count to halt_wait_hist, so:
    slept halts          == sum of halt_wait_hist (exact)
    ns of slept halts    == halt_poll_fail_ns + halt_wait_ns (exact)
A halt that did not sleep adds poll_end - start to halt_poll_success_ns and
one to halt_successful_poll only if it polled (window > 0); one that found
its wake-up before polling or sleeping is neither, so:
    halt_successful_poll <= halts that did not sleep
    halt_poll_success_ns <= their ns
(equal when every such halt polled).  And per histogram its sum == its
count statistic (success_hist: halt_successful_poll; fail_hist:
halt_attempted_poll - halt_successful_poll).  The histograms are log2:
bucket i counts values of bit length i (fls64), the last one all longer.
QEMU 7.2 returns them last bucket first (it builds the list by prepending;
seen here: the buckets match the raw events' only read that way), so they
are reversed before comparing.  A slept halt's wait (halt_wait_hist) is at
most its ns, so its bucket is at most the ns's: counted from the top, the
raw events' buckets hold at least as many halts as halt_wait_hist's, the
same number in all; a polled halt's ns is its poll time, so when every
unslept halt polled, halt_poll_success_hist == their log2 histogram.

Shown, not asserted: halt_wakeup counts each time a sleeping vCPU was
woken, also when the wake-up found nothing to run and it slept again (a
vCPU halted with interrupts off: one halt, a hundred wake-ups), so it has
no bound in halts.  The view's wasted poll time is the window each slept
halt polled (the trace does not say when polling stopped); KVM measures
its poll loop, which overshoots the window by one iteration (slow under
TCG) or stops early when another task wants the CPU.

KS_LAB_PLANT=1 drops one halt from the view before comparing (the check
must then fail: halt_lab_test.sh proves it can).
"""
import json
import os
import re
import sys

# the tests' one QMP client
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
import qmp_stats  # noqa: E402

LINE = re.compile(r"^\s*(.+)-(\d+)\s+\[(\d+)\]\s+(\d+\.\d+):\s+(\w+):\s+(.*)$")
WAKEUP = re.compile(r"^(wait|poll) time (\d+) ns, polling (valid|invalid)$")
POLLNS = re.compile(r"^vcpu (\d+): halt_poll_ns (\d+) \((grow|shrink) (\d+)\)$")


def qmp(sock, *cmds):
    """the QMP commands CMDS in order on SOCK (tests/cli/qmp_stats.py)"""
    return qmp_stats.run(sock, cmds)


def vcpu_stats(path):
    """{cpu-index: {stat: value}} and {thread-id: cpu-index}"""
    doc = json.load(open(path))
    idx = {c["qom-path"]: c["cpu-index"] for c in doc["cpus"]}
    tids = {c["thread-id"]: c["cpu-index"] for c in doc["cpus"]}
    out = {}
    for res in doc["vcpu"]:
        if res.get("provider") != "kvm":
            continue
        out[idx[res["qom-path"]]] = {st["name"]: st["value"] for st in res["stats"]}
    return out, tids, doc["status"]


def delta(a, b):
    if isinstance(b, list):
        return [y - x for x, y in zip(a, b)]
    return b - a


def trace_counts(path, tids):
    """per cpu-index: what the raw events say, counted here"""
    per, lost, other = {}, 0, set()
    for line in open(path, errors="replace"):
        if "LOST EVENTS" in line or "[LOST" in line:
            lost += 1
            continue
        m = LINE.match(line)
        if not m or m.group(5) not in ("kvm_vcpu_wakeup", "kvm_halt_poll_ns"):
            continue
        tid = int(m.group(2))
        if tid not in tids:
            other.add(tid)
            continue
        c = per.setdefault(tids[tid], {
            "halts": 0, "polled": 0, "waited": 0, "invalid": 0, "polled_ns": 0,
            "waited_ns": 0, "grows": 0, "shrinks": 0, "polled_log2": [0] * 64,
            "waited_log2": [0] * 64, "tid": tid})
        if m.group(5) == "kvm_vcpu_wakeup":
            w = WAKEUP.match(m.group(6))
            if not w:
                raise SystemExit("cannot read %r" % line)
            ns = int(w.group(2))
            c["halts"] += 1
            if w.group(3) == "invalid":
                c["invalid"] += 1
            if w.group(1) == "wait":
                c["waited"] += 1
                c["waited_ns"] += ns
                c["waited_log2"][ns.bit_length()] += 1
            else:
                c["polled"] += 1
                c["polled_ns"] += ns
                c["polled_log2"][ns.bit_length()] += 1
        else:
            p = POLLNS.match(m.group(6))
            if not p:
                raise SystemExit("cannot read %r" % line)
            c["grows" if p.group(3) == "grow" else "shrinks"] += 1
    return per, lost, other


def kvm_order(h):
    """QEMU 7.2's histogram list, first bucket first"""
    return list(reversed(h))


def log2_of(h, n):
    """a raw log2 histogram (64 buckets) folded to KVM's N buckets"""
    return h[:n - 1] + [sum(h[n - 1:])]


def hist_text(h):
    """a log2 histogram's non-empty buckets: [2^(i-1), 2^i) ns"""
    last = len(h) - 1
    return " ".join(("<%s:%d" % (fmt_ns(1 << i), n)) if i < last else
                    (">=%s:%d" % (fmt_ns(1 << (i - 1)), n))
                    for i, n in enumerate(h) if n) or "-"


def fmt_ns(ns):
    for unit, div in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns >= div:
            return "%g%s" % (ns / div, unit)
    return "%dns" % ns


class Checks:
    def __init__(self):
        self.bad = []

    def __call__(self, ok, what):
        if not ok:
            self.bad.append(what)


def vcpu_compare(label, tid, v, r, d, source, check):
    """one vCPU: the view V == the raw events R; R == or within KVM's
    statistics D (deltas over the window, histograms first bucket first)"""
    wait_hist = sum(d["halt_wait_hist"])
    succ_hist, fail_hist = sum(d["halt_poll_success_hist"]), sum(d["halt_poll_fail_hist"])
    print("%s (thread %d): %d halts in the window" % (label, tid, r["halts"]))
    print("  %-34s %14s %14s  %s" % ("", "view", "raw events", source))
    rows = (("halts", v["halts"], r["halts"], "-"),
            ("ended while polling", v["polled"], r["polled"],
             "halt_successful_poll %d" % d["halt_successful_poll"]),
            ("slept", v["waited"], r["waited"], "sum(halt_wait_hist) %d" % wait_hist),
            ("invalid wake-ups", v["invalid"], r["invalid"],
             "halt_poll_invalid %d (polled ones)" % d["halt_poll_invalid"]),
            ("ns of halts ended while polling", v["poll_successful_ns"], r["polled_ns"],
             "halt_poll_success_ns %d" % d["halt_poll_success_ns"]),
            ("ns of halts that slept", "-", r["waited_ns"],
             "halt_poll_fail_ns + halt_wait_ns %d" % (d["halt_poll_fail_ns"] + d["halt_wait_ns"])),
            ("poll ns wasted (slept halts)", v["poll_wasted_ns"], "-",
             "halt_poll_fail_ns %d" % d["halt_poll_fail_ns"]),
            ("window grows", v["window_grows"], r["grows"], "-"),
            ("window shrinks", v["window_shrinks"], r["shrinks"], "-"),
            ("halts that polled", "-", "-", "halt_attempted_poll %d" % d["halt_attempted_poll"]),
            ("times a sleeping vCPU was woken", "-", "-", "halt_wakeup %d" % d["halt_wakeup"]))
    for name, x, y, z in rows:
        print("  %-34s %14s %14s  %s" % (name, x, y, z))
    print("  polled halts' ns, log2 buckets:   raw %s" % hist_text(log2_of(r["polled_log2"], 32)))
    print("                         halt_poll_success_hist %s" % hist_text(d["halt_poll_success_hist"]))
    print("  slept halts' ns, log2 buckets:    raw %s" % hist_text(log2_of(r["waited_log2"], 32)))
    print("                         halt_wait_hist (their sleep) %s" % hist_text(d["halt_wait_hist"]))
    # (a) the view == the raw events
    for key, rk in (("halts", "halts"), ("polled", "polled"), ("waited", "waited"),
                    ("invalid", "invalid"), ("poll_successful_ns", "polled_ns"),
                    ("window_grows", "grows"), ("window_shrinks", "shrinks")):
        check(v[key] == r[rk], "%s: view %s %d, raw events %d" % (label, key, v[key], r[rk]))
    # (b) the raw events == / within KVM's statistics
    check(r["waited"] == wait_hist,
          "%s: %d slept halts, halt_wait_hist sums %d" % (label, r["waited"], wait_hist))
    check(r["waited_ns"] == d["halt_poll_fail_ns"] + d["halt_wait_ns"],
          "%s: slept halts' ns %d, halt_poll_fail_ns + halt_wait_ns %d" % (
              label, r["waited_ns"], d["halt_poll_fail_ns"] + d["halt_wait_ns"]))
    check(d["halt_successful_poll"] <= r["polled"],
          "%s: halt_successful_poll %d > %d halts that did not sleep" % (
              label, d["halt_successful_poll"], r["polled"]))
    check(d["halt_poll_success_ns"] <= r["polled_ns"],
          "%s: halt_poll_success_ns %d > their ns %d" % (
              label, d["halt_poll_success_ns"], r["polled_ns"]))
    check(succ_hist == d["halt_successful_poll"],
          "%s: halt_poll_success_hist sums %d, halt_successful_poll %d" % (
              label, succ_hist, d["halt_successful_poll"]))
    check(fail_hist == d["halt_attempted_poll"] - d["halt_successful_poll"],
          "%s: halt_poll_fail_hist sums %d, attempted - successful %d" % (
              label, fail_hist, d["halt_attempted_poll"] - d["halt_successful_poll"]))
    nb = len(d["halt_wait_hist"])
    raw_w, kvm_w = log2_of(r["waited_log2"], nb), d["halt_wait_hist"]
    check(all(sum(raw_w[k:]) >= sum(kvm_w[k:]) for k in range(nb)),
          "%s: halt_wait_hist has more slept halts above some bucket than the raw events" % label)
    if d["halt_successful_poll"] == r["polled"]:
        # KVM counts a polled halt's polling (poll_end - start), the event
        # its whole length (cur - start): equal when a wake-up ends the
        # poll, longer when the poll window ran out and the block that
        # follows returned at once (a wake-up just then: not waited, so
        # still a successful poll).  So: never shorter, and each halt in
        # the same log2 bucket or the next.
        nb = len(d["halt_poll_success_hist"])
        raw_p, kvm_p = log2_of(r["polled_log2"], nb), d["halt_poll_success_hist"]
        check(d["halt_poll_success_ns"] <= r["polled_ns"],
              "%s: every unslept halt polled, yet halt_poll_success_ns %d > the halts' %d" % (
                  label, d["halt_poll_success_ns"], r["polled_ns"]))
        check(all(sum(kvm_p[:k + 1]) >= sum(raw_p[:k + 1]) >= sum(kvm_p[:k]) for k in range(nb)),
              "%s: halt_poll_success_hist and the polled halts' log2 histogram differ by more "
              "than a bucket" % label)


def plant(vs):
    if os.environ.get("KS_LAB_PLANT") == "1" and vs:
        v0 = vs[sorted(vs)[0]]
        v0["halts"] -= 1
        v0["waited"] -= 1


def summary(check, total, source):
    check(total["halts"] > 0, "no halts in the window")
    if check.bad:
        print("DIFFERENCES: " + "; ".join(check.bad))
        return 1
    print("equal: %d halts (%d polled, %d slept) in view, raw events and %s" % (
        total["halts"], total["polled"], total["waited"], source))
    return 0


def compare(view_js, trace_txt, before, after):
    """QEMU: its vCPUs by QMP's cpu-index and thread-id"""
    view = json.load(open(view_js))
    b, tids, sb = vcpu_stats(before)
    a, _, sa = vcpu_stats(after)
    raw, lost, other = trace_counts(trace_txt, tids)
    check = Checks()
    vs = {v["vcpu"]: v for v in view["vcpus"]}
    plant(vs)
    check(sb["status"] == "paused" and sa["status"] == "paused",
          "the VM was not paused at both reads: %s, %s" % (sb["status"], sa["status"]))
    check(lost == 0, "the recording lost events (%d LOST lines)" % lost)
    check(len({v["vm"] for v in view["vcpus"]}) == 1,
          "view: VMs %s, want one" % sorted({v["vm"] for v in view["vcpus"]}))
    print("QEMU's vCPU threads %s; halt events of other threads: %d" % (
        " ".join("%d=vCPU %d" % (t, c) for t, c in sorted(tids.items())), len(other)))
    total = {"halts": 0, "polled": 0, "waited": 0}
    for cpu in sorted(set(a) | set(raw) | set(vs)):
        r, v = raw.get(cpu), vs.get(cpu)
        if cpu not in a or cpu not in b:
            check(False, "vCPU %d: no query-stats" % cpu)
            continue
        d = {k: delta(b[cpu][k], a[cpu][k]) for k in a[cpu] if k in b[cpu]}
        for k in ("halt_wait_hist", "halt_poll_success_hist", "halt_poll_fail_hist"):
            d[k] = kvm_order(d[k])
        if r is None or v is None:
            check(sum(d["halt_wait_hist"]) == 0 and d["halt_successful_poll"] == 0,
                  "vCPU %d: halts in query-stats, none in %s" % (cpu, "the trace" if r is None else "the view"))
            continue
        for k in total:
            total[k] += r[k]
        vcpu_compare("vCPU %d" % cpu, r["tid"], v, r, d, "query-stats (after - before)", check)
    return summary(check, total, "query-stats")


def comparevmm(view_js, trace_txt, vmm_js):
    """minivmm: its VMs (processes) and vCPU threads, and the halt
    statistics each vCPU read from KVM (KVM_GET_STATS_FD) after its last
    KVM_RUN: the whole life of a new vCPU, which the recording covers"""
    view = json.load(open(view_js))
    doc = json.load(open(vmm_js))
    tids, stats, pids = {}, {}, {}
    for vm in doc["vms"]:
        for c in vm["vcpus"]:
            key = (vm["pid"], c["vcpu"])
            tids[c["tid"]] = key
            stats[key] = c.get("kvm_stats", {})
            pids[vm["pid"]] = vm["comm"]
    raw, lost, other = trace_counts(trace_txt, tids)
    check = Checks()
    vs = {(v["vm"], v["vcpu"]): v for v in view["vcpus"]}
    plant(vs)
    check(lost == 0, "the recording lost events (%d LOST lines)" % lost)
    print("minivmm's VMs %s; halt events of other threads: %d" % (
        " ".join("%d=%s" % kv for kv in sorted(pids.items())), len(other)))
    total = {"halts": 0, "polled": 0, "waited": 0}
    for key in sorted(set(stats) | set(raw) | set(vs)):
        r, v, d = raw.get(key), vs.get(key), stats.get(key)
        label = "VM %d vCPU %d" % key
        if not d or "halt_wait_hist" not in d:
            check(False, "%s: no KVM statistics from minivmm" % label)
            continue
        if r is None or v is None:
            check(sum(d["halt_wait_hist"]) == 0 and d["halt_successful_poll"] == 0,
                  "%s: halts in KVM's statistics, none in %s" % (label, "the trace" if r is None else "the view"))
            continue
        for k in total:
            total[k] += r[k]
        vcpu_compare(label, r["tid"], v, r, d, "KVM_GET_STATS_FD (the vCPU's life)", check)
    return summary(check, total, "KVM's statistics")


def main():
    a = sys.argv[1:]
    if len(a) >= 3 and a[0] == "qmp":
        return qmp(*a[1:])
    if len(a) == 5 and a[0] == "compare":
        return compare(*a[1:])
    if len(a) == 4 and a[0] == "comparevmm":
        return comparevmm(*a[1:])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
