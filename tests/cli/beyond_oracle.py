#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""beyond_oracle.py - scenarios and independent expected results for
tests/cli/nested_test.sh (and the confidential-guest and halt tests).

  beyond_oracle.py nested ISA OUT.scn OUT.expect.json
      a perf.data scenario (tools/gen-kvm-perfdata, the formats of
      tests/fixtures/x86-6.2) of two VMs whose L1 runs an L2 guest: L1's own
      exits, L2 exits handled by L0 and L2 exits reflected to L1, with the
      event sequences KVM traces for them (ISA vmx or svm), and the rows
      `kvmscope stat --event nested --by vm,reason` must show, computed here
      by a plain replay with names read from the kernel's uapi headers.
  beyond_oracle.py check EXPECT.json KVMSCOPE.json
      compares them.
"""
import json, os, re, sys

LINUX = os.environ.get('KS_LINUX', '/var/cache/kvmscope-linux/linux-source-6.1')

def header_names(path, start):
    """code -> name of a kernel uapi header's *_EXIT_REASONS macro."""
    t = open(os.path.join(LINUX, path)).read()
    defs = {n: v for n, v in re.findall(r'#define\s+(\w+)\s+(0x[0-9a-fA-F]+|\d+)\b', t)}
    seg = t[t.index('#define ' + start + ' '):]
    out = {}
    for line in seg.split('\n')[1:]:
        for sym, name in re.findall(r'\{\s*(\w+)\s*,\s*"([^"]*)"\s*\}', line):
            if sym in defs:          # SVM_EXIT_ERR (-1) is not a code here
                out[int(defs[sym], 0)] = name
        if not line.rstrip().endswith('\\'):
            break
    return out

def vmx_names():
    return header_names('arch/x86/include/uapi/asm/vmx.h', 'VMX_EXIT_REASONS')

def svm_names():
    return header_names('arch/x86/include/uapi/asm/svm.h', 'SVM_EXIT_REASONS')

# Exits of each path (codes from the uapi headers: vmx.h EXIT_REASON_*,
# svm.h SVM_EXIT_*).  L1 own: CPUID, MSR writes, VMRESUME/VMRUN (followed
# by kvm_nested_vmenter); L2 handled by L0: EPT violation / NPF, external
# interrupt; reflected: CPUID, VMCALL / vmmcall, I/O, and an interrupt for L1.
ISA = {
    'vmx': {'isa': 1, 'l1': [10, 32, 24], 'vmenter': 24, 'l0': [48, 1],
            'l1r': [10, 18, 30], 'intr': 1},
    'svm': {'isa': 2, 'l1': [0x72, 0x7c, 0x80], 'vmenter': 0x80, 'l0': [0x400, 0x60],
            'l1r': [0x72, 0x81, 0x7b], 'intr': 0x60},
}

def nested(isa, scn, exp):
    p = ISA[isa]
    names = vmx_names() if isa == 'vmx' else svm_names()
    lines = ['comm 201 100 CPU 0/KVM', 'comm 202 100 CPU 1/KVM', 'comm 401 400 CPU 0/KVM']
    threads = [(201, 100, 0), (202, 100, 1), (401, 400, 0)]
    ts = 1000
    rows = {}
    def emit(t, pid, vcpu, ev, **f):
        lines.append('%d %d %d %d kvm:%s %s' % (ts, vcpu, t, pid, ev,
                                               ' '.join('%s=%d' % kv for kv in f.items())))
    for t, pid, v in threads:
        emit(t, pid, v, 'kvm_entry', vcpu_id=v)
        ts += 100
    i = 0
    for rep in range(40):
        for t, pid, v in threads:
            i += 1
            kind = ['l1', 'l0', 'l1r', 'intr'][(i * 7 + rep) % 4]
            if kind == 'intr' and isa == 'vmx':
                kind = 'l1r'
            lst = p[kind] if kind != 'intr' else [p['intr']]
            code = lst[(i + rep) % len(lst)]
            start = ts
            emit(t, pid, v, 'kvm_exit', exit_reason=code, isa=p['isa'], vcpu_id=v,
                 guest_rip=0xffffffff81000000 + i)
            ts += 3
            if kind == 'l1':
                path = 'L1 %s'
                if code == p['vmenter']:
                    emit(t, pid, v, 'kvm_nested_vmenter', isa=p['isa'], rip=0x1000)
                    ts += 5
            else:
                emit(t, pid, v, 'kvm_nested_vmexit', exit_reason=code, isa=p['isa'], vcpu_id=v)
                ts += 4
                path = 'L2 %s in L0'
                if kind in ('l1r', 'intr'):
                    if kind == 'intr':
                        # svm_check_nested_events: an interrupt for L1
                        emit(t, pid, v, 'kvm_nested_intr_vmexit', rip=0x2000)
                        ts += 2
                    emit(t, pid, v, 'kvm_nested_vmexit_inject', exit_code=code, isa=p['isa'])
                    path = 'L2 %s to L1'
            ts += 50 + (i * 37) % 900
            emit(t, pid, v, 'kvm_entry', vcpu_id=v)
            key = (pid, path % names[code])
            r = rows.setdefault('%d|%s' % key, [0, 0])
            r[0] += 1
            r[1] += ts - start
            ts += 500
    open(scn, 'w').write('\n'.join(lines) + '\n')
    json.dump(rows, open(exp, 'w'), indent=1, sort_keys=True)

def check(expf, gotf):
    exp = json.load(open(expf))
    got = json.load(open(gotf))
    gk = {}
    for r in got['views'][0]['rows']:
        gk['%d|%s' % (r['vm'], r['key'])] = [r['samples'], r['total_ns']]
    bad = ['%s: want %s got %s' % (k, v, gk.get(k)) for k, v in sorted(exp.items())
           if gk.get(k) != v]
    bad += ['unexpected row %s %s' % (k, v) for k, v in sorted(gk.items()) if k not in exp]
    print('\n'.join(bad) if bad else 'OK')

if __name__ == '__main__':
    cmd = sys.argv[1]
    if cmd == 'nested':
        nested(*sys.argv[2:5])
    elif cmd == 'check':
        check(*sys.argv[2:4])
    else:
        sys.exit('usage: beyond_oracle.py nested|check ...')
