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
      by a plain replay with names read from the kernel's uapi headers; and
      (key "_l1") L1's handling of the reflected exits: per VM and reason,
      how many were followed by L1's kvm_nested_vmenter and the time from
      each kvm_nested_vmexit_inject to it.
  beyond_oracle.py vmgexit OUT.scn OUT.expect.json
      an SEV-ES/SNP VM (rip 0 on every exit) whose VMGEXITs carry every
      SVM_VMGEXIT_* software exit code of the 6.1 uapi svm.h, regular SVM
      exit codes as GHCB exit codes and GHCB MSR protocol requests
      (sev-common.h), next to a plain VM; the rows of
      `kvmscope stat --event vmgexit --by vm,reason`, names derived from the
      headers, and the VMs that must be called confidential (key "_conf").
  beyond_oracle.py halt OUT.scn OUT.expect.json
      halts of three vCPUs of two VMs under a simulated poll window (KVM's
      grow/shrink rules of kvm_vcpu_halt(), the window known here, not read
      back from the events), and what `kvmscope stat --event halt --json`
      must find: counts, poll CPU, latency quantiles and the recommended
      halt_poll_ns for a budget of 10% and 1%, by brute force.
  beyond_oracle.py haltcheck EXPECT.json KVMSCOPE.json BUDGET
  beyond_oracle.py check EXPECT.json KVMSCOPE.json
  beyond_oracle.py l1check EXPECT.json KVMSCOPE.json
      compares them (l1check: the "_l1" rows of a nested scenario).
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
    # L1's handling of a reflected exit: from its kvm_nested_vmexit_inject
    # to the thread's next kvm_nested_vmenter, per VM and reflected reason
    l1 = {}
    def emit(t, pid, vcpu, ev, **f):
        lines.append('%d %d %d %d kvm:%s %s' % (ts, vcpu, t, pid, ev,
                                               ' '.join('%s=%d' % kv for kv in f.items())))
    for t, pid, v in threads:
        emit(t, pid, v, 'kvm_entry', vcpu_id=v)
        ts += 100
    # each vCPU runs L2 until an exit is reflected to L1, then L1 until its
    # VMRESUME / VMRUN enters L2 again
    in_l2 = {t: True for t, _, _ in threads}
    pending = {}
    i = 0
    for rep in range(40):
        for t, pid, v in threads:
            i += 1
            kind = ['l0', 'l1r', 'intr'][(i * 7 + rep) % 3] if in_l2[t] else 'l1'
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
                    if t in pending:
                        at, rcode = pending.pop(t)
                        r = l1.setdefault('%d|L2 %s to L1' % (pid, names[rcode]), [0, 0])
                        r[0] += 1
                        r[1] += ts - at
                    in_l2[t] = True
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
                    pending[t] = (ts, code)
                    in_l2[t] = False
                    path = 'L2 %s to L1'
            ts += 50 + (i * 37) % 900
            emit(t, pid, v, 'kvm_entry', vcpu_id=v)
            key = (pid, path % names[code])
            r = rows.setdefault('%d|%s' % key, [0, 0])
            r[0] += 1
            r[1] += ts - start
            ts += 500
    rows['_l1'] = l1
    open(scn, 'w').write('\n'.join(lines) + '\n')
    json.dump(rows, open(exp, 'w'), indent=1, sort_keys=True)

def defines(path, pat):
    t = open(os.path.join(LINUX, path)).read()
    return [(n, int(v, 0)) for n, v in re.findall(r'#define\s+(%s)\s+(0x[0-9a-fA-F]+|\d+)\b' % pat, t)]

def vmgexit(scn, exp):
    svm = svm_names()
    # every software exit code: SVM_VMGEXIT_* of 0x80000000 and above
    sw = {v: svm.get(v, 'vmgexit_' + n[len('SVM_VMGEXIT_'):].lower())
          for n, v in defines('arch/x86/include/uapi/asm/svm.h', r'SVM_VMGEXIT_\w+')
          if v >= 0x80000000}
    msr = {v: 'vmgexit_msr:' + n[len('GHCB_MSR_'):].lower()
           for n, v in defines('arch/x86/include/asm/sev-common.h', r'GHCB_MSR_\w+_REQ')}
    regular = [0x72, 0x7c, 0x7b, 0x78, 0x6f]      # cpuid, msr, io, hlt, rdpmc via the GHCB
    lines = ['comm 501 500 CPU 0/KVM', 'comm 502 500 CPU 1/KVM', 'comm 601 600 CPU 0/KVM',
             'comm 500 500 sev-guest', 'comm 600 600 plain-guest']
    ts = 1000
    rows = {}
    def emit(t, pid, v, ev, **f):
        lines.append('%d %d %d %d kvm:%s %s' % (ts, v, t, pid, ev,
                                               ' '.join('%s=%d' % kv for kv in f.items())))
    threads = [(501, 500, 0), (502, 500, 1), (601, 600, 0)]
    for t, pid, v in threads:
        emit(t, pid, v, 'kvm_entry', vcpu_id=v, rip=0 if pid == 500 else 0xfff0)
        ts += 100
    work = []
    for rep in range(3):
        work += [('sw', c) for c in sorted(sw)] + [('reg', c) for c in regular] + \
                [('msr', c) for c in sorted(msr)] + [('auto', 0x400), ('auto', 0x60)]
    for i, (kind, code) in enumerate(work):
        t, pid, v = threads[i % 2]
        start = ts
        emit(t, pid, v, 'kvm_exit', exit_reason=0x403 if kind != 'auto' else code, isa=2,
             vcpu_id=v, guest_rip=0)
        ts += 4
        if kind in ('sw', 'reg'):
            emit(t, pid, v, 'kvm_vmgexit_enter', vcpu_id=v, exit_reason=code, info1=i, info2=0)
            name = sw[code] if kind == 'sw' else 'vmgexit:' + svm[code]
        elif kind == 'msr':
            # GHCBInfo in bits 0..11, request data above it
            emit(t, pid, v, 'kvm_vmgexit_msr_protocol_enter', vcpu_id=v,
                 ghcb_gpa=(0x8000000b << 32) | (1 << 30) | code)
            name = msr[code]
        else:
            name = svm[code]
        ts += 100 + (i * 53) % 700
        if kind in ('sw', 'reg'):
            emit(t, pid, v, 'kvm_vmgexit_exit', vcpu_id=v, exit_reason=code, info1=0, info2=0)
            ts += 5
        emit(t, pid, v, 'kvm_entry', vcpu_id=v, rip=0)
        r = rows.setdefault('%d|%s' % (pid, name), [0, 0])
        r[0] += 1
        r[1] += ts - start
        ts += 300
        # the plain VM: a cpuid exit, no VMGEXIT
        if i % 5 == 0:
            t, pid, v = threads[2]
            start = ts
            emit(t, pid, v, 'kvm_exit', exit_reason=0x72, isa=2, vcpu_id=v, guest_rip=0xfff0)
            ts += 77
            emit(t, pid, v, 'kvm_entry', vcpu_id=v, rip=0xfff2)
            r = rows.setdefault('600|cpuid', [0, 0])
            r[0] += 1
            r[1] += ts - start
            ts += 300
    open(scn, 'w').write('\n'.join(lines) + '\n')
    rows['_conf'] = [500]
    json.dump(rows, open(exp, 'w'), indent=1, sort_keys=True)

def bucket(ns):
    """kvmscope's latency bucket (halt.h), for quantiles and windows"""
    if ns < 64:
        return ns
    ns = min(ns, 1 << 40)
    e = ns.bit_length() - 1 - 5
    m = (ns + (1 << e) - 1) >> e
    if m == 64:
        e, m = e + 1, 32
    return 64 + (e - 1) * 32 + (m - 32)

def bucket_max(b):
    if b < 64:
        return b
    return ((b - 64) % 32 + 32) << ((b - 64) // 32 + 1)

def quantile(vals, q):
    if not vals:
        return 0
    bs = sorted(bucket(v) for v in vals)
    rank = min(int(q * len(bs)), len(bs) - 1)
    return bucket_max(bs[rank])

MAX_POLL, GROW_START = 200000, 10000

def halt(scn, exp):
    lines = ['comm 201 100 CPU 0/KVM', 'comm 202 100 CPU 1/KVM', 'comm 301 300 CPU 0/KVM']
    threads = [(201, 100, 0), (202, 100, 1), (301, 300, 0)]
    win = {t: 0 for t, _, _ in threads}
    ts = {t: 1000 + 10 * i for i, (t, _, _) in enumerate(threads)}
    out = []
    vc = {}
    seed = 12345
    def rnd():
        nonlocal seed
        seed = (seed * 1103515245 + 12345) & 0x7fffffff
        return seed
    for t, pid, v in threads:
        out.append((ts[t], '%d %d %d %d kvm:kvm_entry vcpu_id=%d' % (ts[t], v, t, pid, v)))
        ts[t] += 1000
        vc[(pid, v)] = {'halts': 0, 'polled': 0, 'waited': 0, 'invalid': 0, 'ok': 0,
                        'wasted': 0, 'grows': 0, 'shrinks': 0, 'lp': [], 'lw': [], 'valid': []}
    for i in range(600):
        t, pid, v = threads[i % 3]
        r = rnd() >> 8
        # VM 100 mostly short halts (an I/O-bound guest), VM 300 long ones
        short = (r % 10) < (8 if pid == 100 else 3)
        d = 2000 + (rnd() >> 8) % 60000 if short else 300000 + (rnd() >> 8) % 3000000
        valid = (rnd() >> 8) % 20 != 0
        st = vc[(pid, v)]
        at = ts[t]
        out.append((at, '%d %d %d %d kvm:kvm_exit exit_reason=12 isa=1 vcpu_id=%d guest_rip=%d' %
                    (at, v, t, pid, v, 0xffffffff81000000 + i)))
        w = win[t]
        polled = w > 0 and d <= w
        # kvm_vcpu_halt(): the window update, traced before the wakeup
        new, grow = None, False
        if not valid:
            new = 0
        elif d <= w:
            pass
        elif w and d > MAX_POLL:
            new = 0
        elif w < MAX_POLL and d < MAX_POLL:
            new, grow = min(MAX_POLL, w * 2 if w else GROW_START), True
        end = at + 5 + d
        if new is not None:
            out.append((end - 1, '%d %d %d %d kvm:kvm_halt_poll_ns grow=%d vcpu_id=%d new=%d old=%d' %
                        (end - 1, v, t, pid, int(grow), v, new, w)))
            st['grows' if grow else 'shrinks'] += 1
            win[t] = new
        out.append((end, '%d %d %d %d kvm:kvm_vcpu_wakeup ns=%d waited=%d valid=%d' %
                    (end, v, t, pid, d, int(not polled), int(valid))))
        out.append((end + 3, '%d %d %d %d kvm:kvm_entry vcpu_id=%d' % (end + 3, v, t, pid, v)))
        st['halts'] += 1
        if polled:
            st['polled'] += 1
            st['ok'] += d
            st['lp'].append(d)
        else:
            st['waited'] += 1
            st['wasted'] += w
            st['lw'].append(d)
        if not valid:
            st['invalid'] += 1
        else:
            st['valid'].append(d)
        ts[t] = end + 3 + 2000 + (rnd() >> 8) % 50000
    out.sort(key=lambda x: x[0])
    lines += [l for _, l in out]
    span = out[-1][0] - out[0][0]
    res = {'vcpus': {}, 'span': span}
    for (pid, v), st in vc.items():
        res['vcpus']['%d/%d' % (pid, v)] = {
            'halts': st['halts'], 'polled': st['polled'], 'waited': st['waited'],
            'invalid': st['invalid'], 'poll_successful_ns': st['ok'],
            'poll_wasted_ns': st['wasted'], 'window_grows': st['grows'],
            'window_shrinks': st['shrinks'],
            'polled_p50': quantile(st['lp'], 0.5), 'polled_p99': quantile(st['lp'], 0.99),
            'waited_p50': quantile(st['lw'], 0.5), 'waited_p99': quantile(st['lw'], 0.99)}
    for budget in (10.0, 1.0):
        recs = {}
        for pid in (100, 300):
            ds = [d for (p, v), st in vc.items() if p == pid for d in st['valid']]
            n = len([1 for (p, v) in vc if p == pid])
            limit = int(budget / 100.0 * span * n)
            best = (0, 0, 0)      # wins, -window, cost: most wins, then smallest window
            for w in sorted({bucket_max(bucket(d)) for d in ds}):
                cost = sum(min(d, w) for d in ds)
                wins = sum(1 for d in ds if d <= w)
                if cost <= limit and (wins, -w) > best[:2]:
                    best = (wins, -w, cost)
            recs[str(pid)] = {'halt_poll_ns': -best[1], 'polled_halts': best[0],
                              'poll_cpu_ns': best[2], 'budget_ns': limit}
        res['rec%g' % budget] = recs
    open(scn, 'w').write('\n'.join(lines) + '\n')
    json.dump(res, open(exp, 'w'), indent=1, sort_keys=True)

def haltcheck(expf, gotf, budget):
    exp = json.load(open(expf))
    got = json.load(open(gotf))
    bad = []
    gv = {'%d/%d' % (v['vm'], v['vcpu']): v for v in got['vcpus']}
    for k, e in sorted(exp['vcpus'].items()):
        g = gv.get(k)
        if not g:
            bad.append('no vCPU %s' % k)
            continue
        for f in ('halts', 'polled', 'waited', 'invalid', 'poll_successful_ns',
                  'poll_wasted_ns', 'window_grows', 'window_shrinks'):
            if g[f] != e[f]:
                bad.append('%s %s: want %s got %s' % (k, f, e[f], g[f]))
        for f, (h, q) in (('polled_p50', ('polled_latency', 'p50_ns')),
                          ('polled_p99', ('polled_latency', 'p99_ns')),
                          ('waited_p50', ('waited_latency', 'p50_ns')),
                          ('waited_p99', ('waited_latency', 'p99_ns'))):
            if g[h][q] != e[f]:
                bad.append('%s %s: want %s got %s' % (k, f, e[f], g[h][q]))
    if len(gv) != len(exp['vcpus']):
        bad.append('%d vCPUs, want %d' % (len(gv), len(exp['vcpus'])))
    gr = {str(r['vm']): r for r in got['recommendations']}
    for vm, e in sorted(exp['rec%g' % float(budget)].items()):
        g = gr.get(vm)
        for f in ('halt_poll_ns', 'polled_halts', 'poll_cpu_ns', 'budget_ns'):
            if not g or g[f] != e[f]:
                bad.append('VM %s %s: want %s got %s' % (vm, f, e[f], g and g[f]))
    print('\n'.join(bad) if bad else 'OK')

def check(expf, gotf):
    exp = json.load(open(expf))
    got = json.load(open(gotf))
    exp.pop('_l1', None)       # l1check's
    gk = {}
    if '_conf' in exp:
        gk['_conf'] = got.get('confidential_vms')
    for r in got['views'][0]['rows']:
        gk['%d|%s' % (r['vm'], r['key'])] = [r['samples'], r['total_ns']]
    bad = ['%s: want %s got %s' % (k, v, gk.get(k)) for k, v in sorted(exp.items())
           if gk.get(k) != v]
    bad += ['unexpected row %s %s' % (k, v) for k, v in sorted(gk.items()) if k not in exp]
    print('\n'.join(bad) if bad else 'OK')

def l1check(expf, gotf):
    """stat --event nested --json's l1_handling rows == the replay's "_l1"."""
    l1 = json.load(open(expf))['_l1']
    views = json.load(open(gotf)).get('l1_handling', {}).get('views', [])
    gl = {'%d|%s' % (r['vm'], r['key']): [r['samples'], r['total_ns']]
          for r in (views[0]['rows'] if views else [])}
    bad = ['%s: want %s got %s' % (k, l1.get(k), gl.get(k)) for k in sorted(set(l1) | set(gl))
           if l1.get(k) != gl.get(k)]
    print('\n'.join(bad) if bad or not l1 else 'OK %d reflected exits handled by L1 in %d rows' % (
        sum(v[0] for v in l1.values()), len(l1)))

if __name__ == '__main__':
    cmd = sys.argv[1]
    if cmd == 'nested':
        nested(*sys.argv[2:5])
    elif cmd == 'vmgexit':
        vmgexit(*sys.argv[2:4])
    elif cmd == 'halt':
        halt(*sys.argv[2:4])
    elif cmd == 'haltcheck':
        haltcheck(*sys.argv[2:5])
    elif cmd == 'check':
        check(*sys.argv[2:4])
    elif cmd == 'l1check':
        l1check(*sys.argv[2:4])
    else:
        sys.exit('usage: beyond_oracle.py nested|check ...')
