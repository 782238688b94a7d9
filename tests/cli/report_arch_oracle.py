#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""report_arch_oracle.py - scenarios and an independent expectation for
`kvmscope report` on exit-tracepoint sources other than x86 (powerpc
kvm_hv:kvm_guest_exit, arm64 kvm_exit) and for guest symbol sources
(kallsyms, modules, a vmlinux ELF relocated by _stext, --guest-mount).

No kvmscope code is used: the scenario is replayed here and symbols come
from the kallsyms / modules text and from binutils' `readelf -sW`.

  scenario ARCH OUTDIR SEED [VMSPEC...]
      writes OUTDIR/ARCH.scn (gen-kvm-perfdata scenario language),
      OUTDIR/ARCH.kallsyms, OUTDIR/ARCH.modules and OUTDIR/ARCH.events.json.
      VMSPEC = PID:NAME:NVCPUS (default two VMs) or pool:START:LEN (half of
      the guest addresses then come from these ranges, e.g. a vmlinux's
      text); the others from the kallsyms / modules written here.
  check EVENTS_JSON CSV --syms VM=SPEC[,SPEC...] [--sample-traps 0x980,...]
      replays the events, resolves per VM and compares with kvmscope's
      `report --by vm,vcpu --csv`.  SPEC: kallsyms:F, modules:F,
      vmlinux:F (relocated by the _stext of this VM's kallsyms), VM '*' = the
      default for VMs without their own.  Prints OK or the differences.

Rules (documented in the issue and seed 004, reimplemented here):
  powerpc: sample = trap 0x980 (HV_DECREMENTER) unless --sample-traps; mode
  guest user iff the MSR's HV bit (1<<60) is clear and PR (1<<14) is set,
  else guest kernel; address = pc.  arm64: every kvm_exit is a sample,
  address = vcpu_pc, guest kernel iff bit 63 is set; reason EC_0x<esr_ec>.
  Exit handling time = exit to the next entry of the same host thread.
  Symbols: a symbol without size ends at the next one (the last covers 4096
  bytes); one symbol per address (fewest leading '_', then smallest name);
  kallsyms types a/A and '$' names skipped; a module range from the modules
  list hides symbols of other DSOs starting below it.
"""
import bisect
import csv
import json
import os
import random
import re
import subprocess
import sys

HV = 1 << 60
PR = 1 << 14
PPC_TRAPS_FALLBACK = {0x500: "EXTERNAL", 0x502: "EXTERNAL_HV", 0x980: "HV_DECREMENTER",
                      0xe00: "H_DATA_STORAGE", 0xe40: "H_EMUL_ASSIST", 0x900: "DECREMENTER"}
KASM = os.path.join(os.environ.get("KS_LINUX", "/var/cache/kvmscope-linux/linux-source-6.1"),
                    "arch/powerpc/include/asm/kvm_asm.h")

ARCH = {
    "powerpc": {"kbase": 0xc000000000000000, "ubase": 0x10000000, "mbase": 0xc008000000000000},
    "arm64": {"kbase": 0xffff800008000000, "ubase": 0xaaaac0de0000, "mbase": 0xffff800001000000},
}


def ppc_trap_names():
    """BOOK3S_INTERRUPT_* names from the kernel header when present."""
    names = dict(PPC_TRAPS_FALLBACK)
    if os.path.exists(KASM):
        for m in re.finditer(r"#define\s+BOOK3S_INTERRUPT_(\w+)\s+(0x[0-9a-fA-F]+)", open(KASM).read()):
            names[int(m.group(2), 16)] = m.group(1)
    return names


# ---------------------------------------------------------------- scenario

def write_symbols(arch, out):
    a = ARCH[arch]
    kb, mb = a["kbase"], a["mbase"]
    ks, funcs = [], []
    ks.append("%016x T _stext" % kb)
    for i in range(40):
        addr = kb + 0x10000 + i * 0x200
        name = "%s_fn_%02d" % (arch, i)
        ks.append("%016x %s %s" % (addr, "tT"[i % 2], name))
        funcs.append(addr)
        if i == 3:                     # alias: the name without '_' wins
            ks.append("%016x t __%s_alias" % (addr, arch))
        if i == 5:                     # absolute symbols are not code
            ks.append("%016x A abs_marker_%s" % (addr + 0x100, arch))
    ks.append("%016x T _etext" % (kb + 0x10000 + 40 * 0x200))
    # module: symbols for half of its range; the modules list covers it all
    for i in range(4):
        ks.append("%016x t modfn_%d\t[kvmtest_mod]" % (mb + i * 0x100, i))
    open(out + ".kallsyms", "w").write("\n".join(ks) + "\n")
    open(out + ".modules", "w").write("kvmtest_mod 16384 0 - Live 0x%016x\n" % mb)
    return funcs


def pick_addr(rnd, arch, funcs, pools=()):
    a = ARCH[arch]
    if pools and rnd.random() < 0.5:
        start, length = rnd.choice(pools)
        return start + rnd.randrange(0, length)
    r = rnd.random()
    if r < 0.70:
        f = funcs[min(rnd.randrange(len(funcs)), rnd.randrange(len(funcs)))]
        return f + rnd.randrange(0, 0x200, 4)
    if r < 0.78:
        return a["mbase"] + rnd.randrange(0, 0x4000, 4)     # module, maybe no symbol
    if r < 0.80:
        return a["kbase"] + 0x10000 + 40 * 0x200 + 0x2000 + rnd.randrange(0, 0x100000, 8)  # past _etext
    return a["ubase"] + rnd.randrange(0, 0x10000, 4)


def ppc_exit(rnd, funcs, pools):
    trap = rnd.choice([0x980] * 6 + [0x500, 0x502, 0xe00, 0xe40, 0x900])
    hv, pr = rnd.choice([(0, 0), (0, PR), (HV, 0), (HV, PR)])
    msr = (1 << 63) | (1 << 12) | 1 | hv | pr | (rnd.randrange(16) << 4)
    # the mode comes from the MSR only; a kernel-mode MSR may carry a user pc
    pc = pick_addr(rnd, "powerpc", funcs, pools)
    return {"trap": trap, "msr": msr, "pc": pc}


def arm_exit(rnd, funcs, pools):
    ec = rnd.choice([0x01, 0x16, 0x18, 0x24, 0x24, 0x00])
    return {"ret": 0 if ec == 0 else 1, "esr_ec": ec, "vcpu_pc": pick_addr(rnd, "arm64", funcs, pools)}


def scenario(arch, outdir, seed, vmspecs):
    rnd = random.Random(int(seed))
    out = os.path.join(outdir, arch)
    funcs = write_symbols(arch, out)
    vms, pools = [], []
    for spec in [v for v in vmspecs if v.startswith("pool:")]:
        _p, start, length = spec.split(":")
        pools.append((int(start, 0), int(length, 0)))
    vmspecs = [v for v in vmspecs if not v.startswith("pool:")]
    for spec in vmspecs or ["3000:qemu-%s-a:2" % arch, "3100:qemu-%s-b:1" % arch]:
        pid, name, n = spec.split(":")
        vms.append((int(pid), name, int(n)))
    lines, events, comms = [], [], {}
    for pid, name, n in vms:
        lines.append("comm %d %d %s" % (pid, pid, name))
        comms[pid] = (pid, name, -1)
        for v in range(n):
            lines.append("comm %d %d CPU %d/KVM" % (pid + 1 + v, pid, v))
            comms[pid + 1 + v] = (pid, None, v)
    threads = [(pid, pid + 1 + v, v) for pid, _n, nv in vms for v in range(nv)]
    ts = 1000000000
    for _ in range(3000):
        pid, tid, vcpu = rnd.choice(threads)
        ts += rnd.randrange(50, 3000)
        if arch == "powerpc":
            f = ppc_exit(rnd, funcs, pools)
            ev = "kvm_hv:kvm_guest_exit"
            args = "vcpu_id=%d trap=0x%x pc=0x%x msr=0x%x" % (vcpu, f["trap"], f["pc"], f["msr"])
        else:
            f = arm_exit(rnd, funcs, pools)
            ev = "kvm:kvm_exit"
            args = "ret=%d esr_ec=0x%x vcpu_pc=0x%x" % (f["ret"], f["esr_ec"], f["vcpu_pc"])
        lines.append("%d %d %d %d %s %s" % (ts, vcpu, tid, pid, ev, args))
        events.append({"ts": ts, "tid": tid, "kind": "exit", "f": f})
        if rnd.random() < 0.9:          # some exits never see their entry
            ts += rnd.randrange(100, 20000)
            if arch == "powerpc":
                lines.append("%d %d %d %d kvm_hv:kvm_guest_enter vcpu_id=%d pc=0x%x" %
                             (ts, vcpu, tid, pid, vcpu, f["pc"]))
            else:
                lines.append("%d %d %d %d kvm:kvm_entry vcpu_pc=0x%x" % (ts, vcpu, tid, pid, f["vcpu_pc"]))
            events.append({"ts": ts, "tid": tid, "kind": "entry"})
    open(out + ".scn", "w").write("\n".join(lines) + "\n")
    json.dump({"arch": arch, "comms": {str(k): v for k, v in comms.items()}, "events": events},
              open(out + ".events.json", "w"))


# ---------------------------------------------------------------- symbols

class Table:
    def __init__(self):
        self.syms = []      # (start, size or 0, name, dso)
        self.maps = []      # (start, end, dso)

    def kallsyms(self, path):
        for line in open(path):
            p = line.split()
            if len(p) < 3 or p[1] in ("a", "A") or p[2].startswith("$"):
                continue
            dso = p[3] if len(p) > 3 and p[3].startswith("[") else "[kernel.kallsyms]"
            self.syms.append((int(p[0], 16), 0, p[2], dso))

    def modules(self, path):
        for line in open(path):
            p = line.split()
            self.maps.append((int(p[5], 16), int(p[5], 16) + int(p[1]), "[%s]" % p[0]))

    def addr_of(self, name):
        for s in self.syms:
            if s[2] == name:
                return s[0]
        return None

    def vmlinux(self, path):
        out = subprocess.run(["readelf", "-sW", path], capture_output=True, text=True, check=True).stdout
        syms, stext = [], None
        for line in out.splitlines():
            p = line.split()
            if len(p) < 8 or not p[0].endswith(":") or not p[0][:-1].isdigit():
                continue
            value, size, typ, bind, ndx, name = int(p[1], 16), int(p[2], 0), p[3], p[4], p[6], p[7]
            if name == "_stext" or (stext is None and name == "_text"):
                stext = value
            if ndx in ("UND", "ABS") or name.startswith("$"):
                continue
            if typ in ("FUNC", "IFUNC") or (typ == "NOTYPE" and bind != "LOCAL"):
                syms.append((value, size, name))
        runtime = self.addr_of("_stext")
        if runtime is None:
            runtime = self.addr_of("_text")
        bias = runtime - stext if runtime is not None and stext is not None else 0
        for value, size, name in syms:
            self.syms.append(((value + bias) & (2**64 - 1), size, name, "[kernel.kallsyms]"))

    def finish(self):
        best = {}
        for s in self.syms:
            key = (len(s[2]) - len(s[2].lstrip("_")), s[2])
            if s[0] not in best or key < best[s[0]][0]:
                size = s[1] or (best[s[0]][1][1] if s[0] in best else 0)
                best[s[0]] = (key, (s[0], size, s[2], s[3]))
            elif not best[s[0]][1][1] and s[1]:
                k, old = best[s[0]]
                best[s[0]] = (k, (old[0], s[1], old[2], old[3]))
        self.starts = sorted(best)
        self.sorted = [best[a][1] for a in self.starts]
        self.maps.sort()
        self.map_starts = [m[0] for m in self.maps]

    def lookup(self, ip):
        mi = bisect.bisect_right(self.map_starts, ip) - 1
        mp = self.maps[mi] if mi >= 0 and ip < self.maps[mi][1] else None
        i = bisect.bisect_right(self.starts, ip) - 1
        dso = mp[2] if mp else "[kernel.kallsyms]"
        if i < 0:
            return dso, "[unknown]"
        start, size, name, sdso = self.sorted[i]
        nxt = self.starts[i + 1] if i + 1 < len(self.starts) else None
        end = start + size if size else (nxt if nxt is not None else start + 4096)
        if nxt is not None and end > nxt:
            end = nxt
        if ip >= end or (mp and start < mp[0]):
            return dso, "[unknown]"
        return sdso, name


def load_tables(specs):
    tabs = {}
    for spec in specs:
        vm, srcs = spec.split("=", 1)
        t = Table()
        parts = [s.split(":", 1) for s in srcs.split(",")]
        for kind, path in sorted(parts, key=lambda p: p[0] != "kallsyms"):
            getattr(t, kind)(path)
        t.finish()
        tabs[vm] = t
    return tabs


# ---------------------------------------------------------------- replay

def expected(evjson, tabs, sample_traps):
    arch = evjson["arch"]
    comms = {int(k): v for k, v in evjson["comms"].items()}
    names = ppc_trap_names()
    pending, exits, samples = {}, {}, {}
    for e in evjson["events"]:
        tid = e["tid"]
        if e["kind"] == "entry":
            if tid in pending:
                key, t0 = pending.pop(tid)
                exits[key][1] += 1
                exits[key][2] += e["ts"] - t0
            continue
        vm, _n, vcpu = comms[tid]
        f = e["f"]
        if arch == "powerpc":
            user = not (f["msr"] & HV) and bool(f["msr"] & PR)
            ip, reason, is_sample = f["pc"], names[f["trap"]], f["trap"] in sample_traps
        else:
            ip = f["vcpu_pc"]
            user = not (ip >> 63)
            reason, is_sample = "EC_0x%x" % f["esr_ec"], True
        tab = tabs.get(str(vm), tabs.get("*"))
        if user:
            mode, dso, sym = "[g.u]", "[guest user]", "[unknown]"
        elif tab is None:
            mode, dso, sym = "[g.k]", "[unknown]", "[unknown]"
        else:
            mode = "[g.k]"
            dso, sym = tab.lookup(ip)
        key = (vm, vcpu, reason, mode, dso, sym)
        exits.setdefault(key, [0, 0, 0])[0] += 1
        pending[tid] = (key, e["ts"])
        if is_sample:
            k = (vm, vcpu, mode, dso, sym)
            samples[k] = samples.get(k, 0) + 1
    rows = set()
    for (vm, vcpu, reason, mode, dso, sym), (n, h, t) in exits.items():
        rows.add(("exits", vm, vcpu, reason, mode, dso, sym, n, h, t))
    for (vm, vcpu, mode, dso, sym), n in samples.items():
        rows.add(("samples", vm, vcpu, "", mode, dso, sym, n, "", ""))
    return rows


def got_rows(path):
    rows = set()
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["table"] == "exits":
                rows.add(("exits", int(r["vm"]), int(r["vcpu"]), r["reason"], r["mode"], r["dso"],
                          r["symbol"], int(r["samples"]), int(r["handled"]), int(r["time_ns"])))
            else:
                rows.add(("samples", int(r["vm"]), int(r["vcpu"]), "", r["mode"], r["dso"],
                          r["symbol"], int(r["samples"]), "", ""))
    return rows


def check(argv):
    evjson = json.load(open(argv[0]))
    csvpath = argv[1]
    syms, traps, i = [], {0x980}, 2
    while i < len(argv):
        if argv[i] == "--syms":
            syms.append(argv[i + 1])
        elif argv[i] == "--sample-traps":
            traps = {int(x, 0) for x in argv[i + 1].split(",")}
        i += 2
    want = expected(evjson, load_tables(syms), traps)
    got = got_rows(csvpath)
    if want == got:
        print("OK %d" % len(want))
        return
    for r in sorted(want - got, key=str)[:4]:
        print("missing:", r)
    for r in sorted(got - want, key=str)[:4]:
        print("unexpected:", r)


def main():
    if sys.argv[1] == "scenario":
        scenario(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    elif sys.argv[1] == "check":
        check(sys.argv[2:])
    else:
        sys.exit("usage: report_arch_oracle.py scenario|check ...")


if __name__ == "__main__":
    main()
