# SPDX-License-Identifier: GPL-2.0-only
"""halt_oracle.py - the halt polling numbers that kvmscope must show,
computed here from QEMU's query-stats replies as KVM defines them
(virt/kvm/kvm_main.c: kvm_vcpu_halt, update_halt_poll_stats,
kvm_vcpu_wake_up; include/linux/kvm_host.h: kvm_stats_log_hist_update puts
a value v in bucket v.bit_length(), the last bucket taking the rest).

A recording REC is the JSON of tests/fixtures/qmp/: {"query-cpus-fast":
[...], "query-stats-schemas": [...], "query-stats": {"vm": [...], "vcpu":
[...]}}, the replies' "return" members.

    per_vcpu(rec) -> {vcpu: {stat name: value (int or list)}}
    metrics(rec, domain) -> {(sample name, ((label, value), ...)): float}
    parse_scrape(text) -> the same for the kvmscope_halt_* samples of a scrape
    compare(want, got) -> [differences]
    add_halts(rec, ...) -> a later recording: REC plus halts of known sizes
    record(socket path, cmds=()) -> a recording read by our own QMP client
        (qmp_stats.py) after the commands CMDS
"""
import copy
import re

import qmp_stats

COUNTERS = [  # KVM statistic, sample, result label, in seconds
    ("halt_exits", "kvmscope_halt_exits_total", None, False),
    ("halt_successful_poll", "kvmscope_halt_wakeups_total", "polled", False),
    ("halt_wakeup", "kvmscope_halt_wakeups_total", "slept", False),
    ("halt_attempted_poll", "kvmscope_halt_poll_attempts_total", None, False),
    ("halt_poll_invalid", "kvmscope_halt_poll_invalid_total", None, False),
    ("halt_poll_success_ns", "kvmscope_halt_poll_seconds_total", "success", True),
    ("halt_poll_fail_ns", "kvmscope_halt_poll_seconds_total", "fail", True),
    ("halt_wait_ns", "kvmscope_halt_wait_seconds_total", None, True),
]
HISTS = [  # histogram, its time sum, family, result label
    ("halt_poll_success_hist", "halt_poll_success_ns", "kvmscope_halt_poll_duration_seconds", "success"),
    ("halt_poll_fail_hist", "halt_poll_fail_ns", "kvmscope_halt_poll_duration_seconds", "fail"),
    ("halt_wait_hist", "halt_wait_ns", "kvmscope_halt_wait_duration_seconds", None),
]


def per_vcpu(rec):
    cpus = {c["qom-path"]: c["cpu-index"] for c in rec["query-cpus-fast"]}
    out = {}
    for res in rec["query-stats"]["vcpu"]:
        v = out.setdefault(cpus[res["qom-path"]], {})
        for st in res["stats"]:
            v[st["name"]] = st["value"]
    return out


def key(name, **labels):
    return (name, tuple(sorted((k, str(v)) for k, v in labels.items() if v is not None)))


def metrics(rec, domain):
    want = {}
    vc = per_vcpu(rec)
    for stat, sample, result, seconds in COUNTERS:
        for cpu, st in vc.items():
            if stat in st:
                want[key(sample, domain=domain, vcpu=cpu, result=result)] = \
                    st[stat] / 1e9 if seconds else float(st[stat])
    for hist, ns, family, result in HISTS:
        # QEMU lists a histogram last bucket first (kvmstats.c)
        lists = [st[hist][::-1] for st in vc.values() if hist in st]
        if not lists:
            continue
        summed = [sum(col) for col in zip(*lists)]
        cum = 0
        for i, n in enumerate(summed):
            cum += n
            # bucket i holds the values of i bits: at most 2^i - 1 ns
            le = "+Inf" if i == len(summed) - 1 else repr((2 ** i - 1) / 1e9)
            want[key(family + "_bucket", domain=domain, result=result, le=le)] = float(cum)
        want[key(family + "_count", domain=domain, result=result)] = float(sum(summed))
        want[key(family + "_sum", domain=domain, result=result)] = \
            sum(st.get(ns, 0) for st in vc.values()) / 1e9
    return want


LINE = re.compile(r'^(kvmscope_halt_[a-z_]+)\{(.*)\} (\S+)$')
LABEL = re.compile(r'([a-z_]+)="((?:[^"\\]|\\.)*)"')


def norm_le(labels):
    out = []
    for k, v in labels:
        if k == "le" and v != "+Inf":
            v = repr(float(v))
        out.append((k, v))
    return tuple(sorted(out))


def parse_scrape(text):
    got = {}
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            got[(m.group(1), norm_le(LABEL.findall(m.group(2))))] = float(m.group(3))
    return got


def compare(want, got):
    want = {(n, norm_le(l)): v for (n, l), v in want.items()}
    diff = []
    for k, v in sorted(want.items()):
        if k not in got:
            diff.append("missing %s%s" % k)
        elif abs(got[k] - v) > 1e-12 * max(1.0, abs(v)):
            diff.append("%s%s: %r, want %r" % (k[0], k[1], got[k], v))
    for k in sorted(set(got) - set(want)):
        diff.append("unexpected %s%s" % k)
    return diff


def add_halts(rec, exits, polled, slept, failed, invalid, poll_ns, fail_ns, wait_ns):
    """REC after EXITS more halts on every vCPU: POLLED ended while polling
    (each polled for POLL_NS), FAILED polls ran out after FAIL_NS, SLEPT
    slept WAIT_NS each after that."""
    out = copy.deepcopy(rec)
    add = {"halt_exits": exits, "halt_successful_poll": polled, "halt_wakeup": slept,
           "halt_attempted_poll": polled + failed, "halt_poll_invalid": invalid,
           "halt_poll_success_ns": polled * poll_ns, "halt_poll_fail_ns": failed * fail_ns,
           "halt_wait_ns": slept * wait_ns}
    hist = {"halt_poll_success_hist": (poll_ns, polled), "halt_poll_fail_hist": (fail_ns, failed),
            "halt_wait_hist": (wait_ns, slept)}
    for res in out["query-stats"]["vcpu"]:
        for st in res["stats"]:
            if st["name"] in add:
                st["value"] += add[st["name"]]
            elif st["name"] in hist:
                ns, n = hist[st["name"]]
                # QEMU's list is last bucket first
                st["value"][len(st["value"]) - 1 - min(ns.bit_length(), len(st["value"]) - 1)] += n
    return out


def record(path, timeout=20, cmds=()):
    """the recording of QEMU's QMP socket PATH, read by our own QMP client
    (qmp_stats.py) after the commands CMDS (e.g. "stop")"""
    mon = qmp_stats.connect(path, timeout)
    for c in cmds:
        mon(c)
    rec = {"query-cpus-fast": mon("query-cpus-fast"),
           "query-stats-schemas": mon("query-stats-schemas"),
           "query-stats": {t: mon("query-stats", {"target": t}) for t in ("vm", "vcpu")}}
    mon.close()
    return rec
