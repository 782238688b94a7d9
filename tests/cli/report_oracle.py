#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""report_oracle.py - independent expectation for `kvmscope report --by vm
--offsets --csv` on a host trace: computed from `trace-cmd report -t` text
(kvm_exit / kvm_entry lines) and a guest kallsyms text, without kvmscope.

Usage: report_oracle.py REPORT_TXT(.gz) KALLSYMS VM_TID [VM_TID...]
The listed host threads form one VM (id = the first) resolved against
KALLSYMS; every other thread is a VM without symbols: QEMU's "CPU N/KVM"
threads are created one after the other, so tid - N names their VM (the
rule of include/kvmscope/attribution.h); any other thread is its own VM.
Prints CSV rows "table,vm,reason,mode,dso,symbol,address,samples,handled,time_ns"
sorted, for comparison with the same columns of kvmscope's CSV.
"""
import bisect
import gzip
import re
import sys

LINE = re.compile(r"^\s*(.*)-(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+):\s+(kvm_exit|kvm_entry):\s+(.*)$")


def load_kallsyms(path):
    best = {}
    for line in open(path, errors="replace"):
        parts = line.split()
        if len(parts) < 3 or parts[1] in ("a", "A") or parts[2].startswith("$"):
            continue
        addr = int(parts[0], 16)
        name = parts[2]
        mod = parts[3] if len(parts) > 3 and parts[3].startswith("[") else "[kernel.kallsyms]"
        key = (len(name) - len(name.lstrip("_")), name)
        if addr not in best or key < best[addr][0]:
            best[addr] = (key, name, mod)
    addrs = sorted(best)
    return addrs, best


def resolve(tab, ip):
    if ip >> 63 == 0:
        return "[g.u]", "[guest user]", "[unknown]", ip
    if tab is None:
        return "[g.k]", "[unknown]", "[unknown]", ip
    addrs, best = tab
    i = bisect.bisect_right(addrs, ip) - 1
    if i < 0:
        return "[g.k]", "[kernel.kallsyms]", "[unknown]", ip
    end = addrs[i + 1] if i + 1 < len(addrs) else addrs[i] + 4096
    if ip >= end:
        return "[g.k]", "[kernel.kallsyms]", "[unknown]", ip
    _k, name, mod = best[addrs[i]]
    return "[g.k]", mod, name, ip


def main():
    report, kallsyms, vm_tids = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3:]]
    tab = load_kallsyms(kallsyms)
    opener = gzip.open if report.endswith(".gz") else open
    pending = {}
    rows = {}
    for line in opener(report, "rt", errors="replace"):
        m = LINE.match(line)
        if not m:
            continue
        tid = int(m.group(2))
        ts = int(m.group(4)) * 1000000000 + int(m.group(5).ljust(9, "0"))
        if m.group(6) == "kvm_entry":
            if tid in pending:
                key, t0 = pending.pop(tid)
                rows[key][1] += 1
                rows[key][2] += ts - t0
            continue
        f = m.group(7).split()
        reason, ip = f[1], int(f[3], 16)
        cpu = re.match(r"^\s*CPU (\d+)/KVM$", m.group(1))
        vm = vm_tids[0] if tid in vm_tids else tid - int(cpu.group(1)) if cpu else tid
        mode, dso, sym, addr = resolve(tab if tid in vm_tids else None, ip)
        key = (vm, reason, mode, dso, sym, addr)
        rows.setdefault(key, [0, 0, 0])[0] += 1
        pending[tid] = (key, ts)
    out = []
    samples = {}
    for (vm, reason, mode, dso, sym, addr), (n, h, t) in rows.items():
        out.append("exits,%d,%s,%s,%s,%s,0x%x,%d,%d,%d" % (vm, reason, mode, dso, sym, addr, n, h, t))
        k = (vm, mode, dso, sym, addr)
        samples[k] = samples.get(k, 0) + n
    for (vm, mode, dso, sym, addr), n in samples.items():
        out.append("samples,%d,,%s,%s,%s,0x%x,%d,," % (vm, mode, dso, sym, addr, n))
    for line in sorted(out):
        print(line)


if __name__ == "__main__":
    main()
