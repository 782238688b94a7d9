#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""foreign_scenario.py ARCH SEED OUT.scn [EXITS] - a random scenario for
tools/gen-kvm-perfdata, for the comparison with each architecture's own perf
(tests/cli/foreign_perf_test.sh).  The same ARCH and SEED give the same file.

What it holds:
  - two VMs with many vCPU threads ("CPU N/KVM"; the vCPU id in the events'
    own field where the architecture has one), EXITS exits in all;
  - x86: an AMD machine (SVM exit codes, isa=2);
  - every exit / trap / interrupt code the kernel defines for ARCH, each at
    least once, then random ones, plus codes no table knows;
  - the architecture's other event classes: arm64 kvm_trap_enter/exit,
    powerpc hcalls, s390 intercept children (instruction, sigp, diag,
    program);
  - thread reuse: a vCPU thread exits and its tid comes back (FORK + COMM)
    as a vCPU of the other VM;
  - arm64: one thread that is not named after a vCPU drives two vCPUs in
    turn, announced by vcpu_load/vcpu_put.
Times are unique (no two events at the same ns), so both tools order them
alike.  The code lists of powerpc and s390 are read from kvmscope's tables
(src/arch/*.c): only which codes occur comes from there; their names and
every number come from perf.
"""
import os
import random
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')


def c_table(path, name):
    text = open(os.path.join(ROOT, path)).read()
    m = re.search(r'(?:ks_code_name|ks_x86_exit_reason) %s\[\] = \{(.*?)\n\};' % re.escape(name),
                  text, re.S)
    return [int(v, 0) for v in re.findall(r'\{ (0x[0-9a-fA-F]+|\d+),', m.group(1))]


def exits(arch):
    """(exit fields, child events) per code: child = list of (event, fields)."""
    if arch == 'arm64':
        out = [({'ret': t, 'esr_ec': 0}, []) for t in (0, 1, 3, 0xbadca11, 7)]
        return out + [({'ret': 2, 'esr_ec': ec}, []) for ec in range(0x40)]
    if arch == 'powerpc':
        traps = c_table('src/arch/powerpc_kvm.c', 'ppc_traps') + [0x1234, 0xf60, 0x2000]
        return [({'trap': t}, []) for t in traps]
    if arch == 'riscv':
        out = [({'scause': c}, []) for c in range(26)]
        return out + [({'scause': (1 << 63) | c}, []) for c in range(16)]
    if arch == 's390':
        ev = 'kvm:kvm_s390_'
        out = [({'icptcode': c}, []) for c in c_table('src/arch/s390_kvm.c', 's390_icpt') + [0x24, 0x30, 0x60]]
        for k in c_table('src/arch/s390_kvm.c', 's390_insns') + [0xfe, 0xb2fe]:
            op, op2 = (k >> 8, k & 0xff) if k > 0xff else (k, 0)
            word = (op << 56) | (op2 << (16 if op == 0xeb else 48))
            out.append(({'icptcode': 4}, [(ev + 'intercept_instruction', {'instruction': word})]))
        for c in c_table('src/arch/s390_kvm.c', 's390_sigp') + [0x30]:
            out.append(({'icptcode': 4}, [(ev + 'intercept_instruction', {'instruction': 0xae << 56}),
                                          (ev + 'handle_sigp', {'order_code': c})]))
        for c in c_table('src/arch/s390_kvm.c', 's390_diag') + [0x77]:
            out.append(({'icptcode': 4}, [(ev + 'intercept_instruction', {'instruction': 0x83 << 56}),
                                          (ev + 'handle_diag', {'code': c})]))
        for c in c_table('src/arch/s390_kvm.c', 's390_prog') + [0x7e]:
            out.append(({'icptcode': 8}, [(ev + 'intercept_prog', {'code': c})]))
        return out
    if arch == 'x86':   # AMD: the SVM exit codes
        codes = c_table('src/arch/x86_exit_reasons.c', 'ks_x86_svm_exit_reasons')
        return [({'exit_reason': c, 'isa': 2}, []) for c in codes + [0x3ff, 0x500, 0x7fffffff]]
    raise SystemExit('foreign_scenario: unknown arch ' + arch)


EV = {  # entry, exit, vCPU field of both
    'arm64': ('kvm:kvm_entry', 'kvm:kvm_exit', None),
    'powerpc': ('kvm_hv:kvm_guest_enter', 'kvm_hv:kvm_guest_exit', 'vcpu_id'),
    's390': ('kvm:kvm_s390_sie_enter', 'kvm:kvm_s390_sie_exit', 'id'),
    'riscv': ('kvm:kvm_entry', 'kvm:kvm_exit', None),
    'x86': ('kvm:kvm_entry', 'kvm:kvm_exit', 'vcpu_id'),
}
HCALLS = None


def fields(d):
    return ' '.join('%s=%#x' % kv for kv in d.items())


def main():
    arch, seed, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    n_exits = int(sys.argv[4]) if len(sys.argv) > 4 else 1500
    rnd = random.Random('%s-%d' % (arch, seed))
    entry, exit_, vf = EV[arch]
    codes = exits(arch)
    hcalls = c_table('src/arch/powerpc_kvm.c', 'ppc_hcalls') + [0x3, 0xabc] if arch == 'powerpc' else []
    # VM 1000: vCPUs 0..7 (tids 1100..), VM 2000: vCPUs 0..3 (tids 2100..);
    # the VM sizes vary with the seed.
    na, nb = rnd.randint(6, 10), rnd.randint(3, 5)
    threads = [(1100 + i, 1000, i) for i in range(na)] + [(2100 + i, 2000, i) for i in range(nb)]
    head = ['comm 1000 1000 qemu-system', 'comm 2000 2000 qemu-system']
    head += ['comm %d %d CPU %d/KVM' % t for t in threads]
    ev = []   # (ts, cpu, tid, pid, text)
    uniq = [0]

    def stamp(t):  # unique times: the low 5 bits count the events
        uniq[0] += 1
        return t * 32 + (uniq[0] % 32)

    # the code sequence: each code once, then random ones
    seq = list(range(len(codes))) + [rnd.randrange(len(codes)) for _ in range(max(0, n_exits - len(codes)))]
    rnd.shuffle(seq)
    per = {t: [] for t in threads}
    for i, c in enumerate(seq):
        per[threads[rnd.randrange(len(threads))] if i >= len(threads) else threads[i]].append(c)

    def vcpu_fields(v):
        return {vf: v} if vf else {}

    reuse_tid = threads[1][0]   # comes back as vCPU nb of VM 2000
    for (tid, pid, vcpu) in threads:
        t = rnd.randint(1, 1000)
        cpu = rnd.randrange(4)
        lst = per[(tid, pid, vcpu)]
        half = len(lst) // 2 if tid == reuse_tid else len(lst)
        for k, ci in enumerate(lst):
            if tid == reuse_tid and k == half:
                # the thread ends; its tid is reused by another VM's vCPU
                t += rnd.randint(100, 2000)
                ev.append((stamp(t), cpu, tid, pid, 'exit %d %d %d %d' % (tid, pid, pid, pid)))
                pid, vcpu = 2000, nb
                t += rnd.randint(100, 2000)
                ev.append((stamp(t), cpu, tid, pid, 'fork %d %d %d %d' % (tid, pid, pid, pid)))
                t += 10
                ev.append((stamp(t), cpu, tid, pid, 'comm-at %d %d CPU %d/KVM' % (tid, pid, vcpu)))
            fx, children = codes[ci]
            ev.append((stamp(t), cpu, tid, pid, entry + ' ' + fields(vcpu_fields(vcpu))))
            t += rnd.choice((rnd.randint(1, 40), rnd.randint(100, 5000), rnd.randint(5000, 200000)))
            f = dict(vcpu_fields(vcpu))
            f.update(fx)
            ev.append((stamp(t), cpu, tid, pid, exit_ + ' ' + fields(f)))
            for (cev, cf) in children:
                t += rnd.randint(1, 50)
                g = dict(vcpu_fields(vcpu))
                g.update(cf)
                ev.append((stamp(t), cpu, tid, pid, cev + ' ' + fields(g)))
            if arch == 'arm64' and fx['ret'] == 2 and rnd.random() < 0.7:
                t += rnd.randint(1, 30)
                ev.append((stamp(t), cpu, tid, pid, 'kvm:kvm_trap_enter esr_ec=%#x' % fx['esr_ec']))
                t += rnd.randint(10, 3000)
                ev.append((stamp(t), cpu, tid, pid, 'kvm:kvm_trap_exit esr_ec=%#x' % fx['esr_ec']))
            if hcalls and rnd.random() < 0.5:
                t += rnd.randint(1, 30)
                ev.append((stamp(t), cpu, tid, pid, 'kvm_hv:kvm_hcall_enter vcpu_id=%#x req=%#x' %
                           (vcpu, rnd.choice(hcalls))))
                t += rnd.randint(10, 8000)
                ev.append((stamp(t), cpu, tid, pid, 'kvm_hv:kvm_hcall_exit vcpu_id=%#x' % vcpu))
            t += rnd.choice((rnd.randint(1, 40), rnd.randint(100, 5000), rnd.randint(5000, 100000)))
        ev.append((stamp(t), cpu, tid, pid, entry + ' ' + fields(vcpu_fields(vcpu))))
    if arch == 'arm64':
        # tid 3001 of VM 3000, named qemu-kvm, drives vCPUs 0 and 1 in turn
        head.append('comm 3001 3000 qemu-kvm')
        t = 500
        for k in range(rnd.randint(20, 60)):
            v = k % 2
            ev.append((stamp(t), 1, 3001, 3000, 'kvm:vcpu_load vcpu_id=%d' % v))
            for _ in range(rnd.randint(1, 4)):
                fx = codes[rnd.randrange(len(codes))][0]
                t += rnd.randint(5, 500)
                ev.append((stamp(t), 1, 3001, 3000, 'kvm:kvm_entry'))
                t += rnd.randint(100, 20000)
                ev.append((stamp(t), 1, 3001, 3000, 'kvm:kvm_exit ' + fields(fx)))
                t += rnd.randint(100, 9000)
            ev.append((stamp(t), 1, 3001, 3000, 'kvm:vcpu_put vcpu_id=%d' % v))
            t += rnd.randint(100, 3000)
    ev.sort(key=lambda e: e[0])
    with open(out, 'w') as f:
        f.write('# foreign_scenario.py %s %d %d\n' % (arch, seed, n_exits))
        f.write('\n'.join(head) + '\n')
        for ts, cpu, tid, pid, text in ev:
            if text.startswith(('exit ', 'fork ')):
                kind, rest = text.split(' ', 1)
                f.write('%s %d %d %s\n' % (kind, ts, cpu, rest))
            elif text.startswith('comm-at '):
                f.write('comm-at %d %d %s\n' % (ts, cpu, text[8:]))
            else:
                f.write('%d %d %d %d %s\n' % (ts, cpu, tid, pid, text))


if __name__ == '__main__':
    main()
