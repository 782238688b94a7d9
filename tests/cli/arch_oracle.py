#!/usr/bin/env python3
"""arch_oracle.py - scenarios and independent expected results for
tests/cli/arch_stat_test.sh.

  arch_oracle.py scenario ARCH OUT.scn OUT.expect.json
      writes a scenario for tools/gen-kvm-perfdata (every code of the arch's
      tables, IRQ exits, vcpu_load/put interleavings, a reused tid, a thread
      migrating CPUs) and what kvmscope must find, computed here by a plain
      replay (no kvmscope code).
  arch_oracle.py check EXPECT.json MEASURE KVMSCOPE.json [names]
      compares kvmscope stat --json (views reason and vcpu) with it.
"""
import json, os, re, sys

LINUX = os.environ.get('KS_LINUX', '/tmp/linux/linux-source-6.1')

def header_names(path, start, pat=r'\{\s*(0x[0-9a-fA-F]+|\d+)\s*,\s*"([^"]*)"\s*\}'):
    """code -> name pairs of a kernel/perf header macro, None if absent."""
    try:
        t = open(os.path.join(LINUX, path)).read()
    except OSError:
        return None
    seg = t[t.index(start):]
    out = {}
    for line in seg.split('\n')[1:]:
        for m in re.finditer(pat, line):
            out[int(m.group(1), 0)] = m.group(2)
        if not line.rstrip().endswith('\\'):
            break
    return out

def arm64_ecs():
    try:
        t = open(os.path.join(LINUX, 'arch/arm64/include/asm/esr.h')).read()
    except OSError:
        return None
    return {int(v, 16): n for n, v in re.findall(r'#define ESR_ELx_EC_(\w+)\s+\((0x[0-9a-fA-F]+)\)', t)
            if n not in ('MAX', 'SHIFT', 'WIDTH', 'MASK')}

# per arch: events, and a list of (exit fields, key_value, table name kind)
def codes(arch):
    if arch == 'arm64':
        ecs = list(range(0x40))
        exits = [({'ret': 2, 'esr_ec': ec}, ('ec', ec)) for ec in ecs]
        exits += [({'ret': t, 'esr_ec': 0}, ('type', t)) for t in (0, 1, 3, 0xbadca11)]
        return exits
    if arch == 'powerpc':
        traps = header_names('tools/perf/arch/powerpc/util/book3s_hv_exits.h', '#define kvm_trace_symbol_exit') or {0x980: 'HV_DECREMENTER'}
        return [({'trap': c}, ('trap', c)) for c in sorted(traps)] + [({'trap': 0x1234}, ('trap', 0x1234))]
    if arch == 's390':
        icpt = header_names('tools/arch/s390/include/uapi/asm/sie.h', '#define sie_intercept_code') or {4: 'Instruction'}
        return [({'icptcode': c}, ('icpt', c)) for c in sorted(icpt)]
    if arch == 'riscv':
        ex = [({'scause': c}, ('exc', c)) for c in range(24)]
        return ex + [({'scause': (1 << 63) | c}, ('irq', c)) for c in (1, 5, 6, 9, 10)]
    if arch == 'loongarch':
        return [({'reason': c}, ('exc', c)) for c in range(25)]
    raise SystemExit('unknown arch ' + arch)

EV = {  # entry, exit, entry vcpu field, exit vcpu field
    'arm64': ('kvm:kvm_entry', 'kvm:kvm_exit', None),
    'powerpc': ('kvm_hv:kvm_guest_enter', 'kvm_hv:kvm_guest_exit', 'vcpu_id'),
    's390': ('kvm:kvm_s390_sie_enter', 'kvm:kvm_s390_sie_exit', 'id'),
    'riscv': ('kvm:kvm_entry', 'kvm:kvm_exit', None),
    'loongarch': ('kvm:kvm_enter', 'kvm:kvm_exit', 'vcpu_id'),
}

def scenario(arch, scn, exp):
    entry, exit_, vf = EV[arch]
    lines = []
    ts = 1000
    occ = []   # (measure, vcpu, key, ns)
    # threads: VM 100: tids 201 "CPU 0/KVM", 202 "CPU 1/KVM" (vcpu from name
    # or field); VM 300: tid 301 drives vCPUs 0 and 1 in turn (vcpu_load/put,
    # arm64 only) or is named qemu-system-x86 (vcpu from field / thread).
    lines += ['comm 201 100 CPU 0/KVM', 'comm 202 100 CPU 1/KVM', 'comm 301 300 qemu-kvm']
    threads = [(201, 100, 0), (202, 100, 1), (301, 300, 0)]
    state = {t: None for t, _, _ in threads}       # pending exit (ts, key)
    last_entry = {}
    cpu_of = {201: 0, 202: 1, 301: 2}
    lv = {301: 0}
    def emit(t, pid, ev, fields, cpu=None):
        c = cpu_of[t] if cpu is None else cpu
        lines.append('%d %d %d %d %s %s' % (ts, c, t, pid, ev,
                                          ' '.join('%s=%d' % kv for kv in fields.items())))
    def vcpu_of(t):
        if t == 301:
            return lv[301] if (arch == 'arm64' or vf) else -1
        return 0 if t == 201 else 1
    def vfields(t):
        return {vf: vcpu_of(t)} if vf else {}
    if arch == 'arm64':
        emit(301, 300, 'kvm:vcpu_load', {'vcpu_id': 0})
        ts += 10
    for t, pid, _ in threads:
        emit(t, pid, entry, vfields(t)); last_entry[t] = ts; ts += 100
    i = 0
    for rep in range(3):
        for fields, key in codes(arch):
            t, pid, _ = threads[i % 3]
            i += 1
            # arm64: thread 301 switches vCPU every 7 exits (put, load)
            if arch == 'arm64' and t == 301 and i % 7 == 0:
                emit(t, pid, 'kvm:vcpu_put', {'vcpu_id': lv[301]}); ts += 5
                lv[301] ^= 1
                emit(t, pid, 'kvm:vcpu_load', {'vcpu_id': lv[301]}); ts += 5
                emit(t, pid, entry, vfields(t)); last_entry[t] = ts; ts += 50
            if arch in ('powerpc', 's390') and t == 301:
                lv[301] = (i // 5) % 2   # the field says which vCPU
            f = dict(fields)
            if arch in ('powerpc', 's390'):
                f.update(vfields(t))
            emit(t, pid, exit_, f)
            run = ts - last_entry[t]
            ex = ts
            ts += 37 + (i * 13) % 500
            if i % 11 == 0:
                cpu_of[t] = (cpu_of[t] + 1) % 4     # migrates between exit and entry
            emit(t, pid, entry, vfields(t))
            occ.append({'vcpu': vcpu_of(t), 'key': list(key), 'handling': ts - ex, 'run': run,
                        'tid': t})
            last_entry[t] = ts
            ts += 200
    open(scn, 'w').write('\n'.join(lines) + '\n')
    json.dump({'arch': arch, 'occ': occ}, open(exp, 'w'))

def check(expf, measure, gotf):
    exp = json.load(open(expf))
    got = json.load(open(gotf))
    arch = exp['arch']
    bykey, byvcpu = {}, {}
    for o in exp['occ']:
        k = o['key'][1]
        if arch == 'arm64' and o['key'][0] == 'type':
            k = ('type', k)
        elif arch == 'arm64':
            k = ('ec', k)
        if arch == 'riscv':
            k = (o['key'][0], k)
        bykey.setdefault(k, [0, 0])
        bykey[k][0] += 1
        bykey[k][1] += o[measure]
        v = o['vcpu'] if o['vcpu'] >= 0 else ('tid', o['tid'])
        byvcpu.setdefault(v, [0, 0])
        byvcpu[v][0] += 1
        byvcpu[v][1] += o[measure]
    views = {v['by']: v for v in got['views']}
    gk = {}
    for r in views['reason']['rows']:
        k = r['key_value']
        if arch == 'arm64':
            types = {('IRQ', 0), ('SERROR', 1), ('ILLEGAL', 3), ('HYP_GONE', 0xbadca11)}
            k = ('type', k) if (r['key'], k) in types or r['key'].startswith('TYPE') else ('ec', k)
        if arch == 'riscv':
            k = ('irq' if r['key'].startswith('IRQ') else 'exc', k)
        gk[k] = [r['samples'], r['total_ns']]
    gk_norm = {tuple(k) if isinstance(k, tuple) else k: v for k, v in gk.items()}
    bad = []
    for k, v in bykey.items():
        if gk_norm.get(k) != v:
            bad.append('key %s: want %s got %s' % (k, v, gk_norm.get(k)))
    if len(gk_norm) != len(bykey):
        bad.append('%d key rows, want %d' % (len(gk_norm), len(bykey)))
    gv = {}
    for r in views['vcpu']['rows']:
        v = r['vcpu'] if r['vcpu'] >= 0 else ('tid', r.get('thread'))
        gv[v] = [r['samples'], r['total_ns']]
    if gv != byvcpu:
        bad.append('vcpu rows: want %s got %s' % (byvcpu, gv))
    return bad, got

def names(expf, gotf):
    """Key names against the kernel/perf headers (when the sources are here)."""
    exp = json.load(open(expf))
    got = json.load(open(gotf))
    arch = exp['arch']
    rows = [r for v in got['views'] if v['by'] == 'reason' for r in v['rows']]
    ref = None
    if arch == 'arm64':
        ref = arm64_ecs()
        if ref is not None:
            # classes newer than the 6.1 sources (Arm ARM 2023+)
            ref.update({0x0a: 'OTHER', 0x14: 'SYS128', 0x27: 'MOPS', 0x2d: 'GCS'})
        types = {('IRQ', 0), ('SERROR', 1), ('ILLEGAL', 3), ('HYP_GONE', 0xbadca11)}
        rows = [r for r in rows if (r['key'], r['key_value']) not in types]
    elif arch == 'powerpc':
        ref = header_names('tools/perf/arch/powerpc/util/book3s_hv_exits.h', '#define kvm_trace_symbol_exit')
    elif arch == 's390':
        ref = header_names('tools/arch/s390/include/uapi/asm/sie.h', '#define sie_intercept_code')
    if ref is None:
        return None
    bad = []
    for r in rows:
        want = ref.get(r['key_value'])
        if want and r['key'] != want:
            bad.append('%#x: %s, kernel says %s' % (r['key_value'], r['key'], want))
        if not want and not re.match(r'^(EC_0x|TRAP\(|ICPT\(|UNKNOWN)', r['key']):
            bad.append('%#x: %s has a name the kernel does not know' % (r['key_value'], r['key']))
    return bad

if __name__ == '__main__':
    if sys.argv[1] == 'scenario':
        scenario(sys.argv[2], sys.argv[3], sys.argv[4])
    elif sys.argv[1] == 'check':
        bad, _ = check(sys.argv[2], sys.argv[3], sys.argv[4])
        print('\n'.join(bad) if bad else 'OK')
    elif sys.argv[1] == 'names':
        bad = names(sys.argv[2], sys.argv[3])
        print('SKIP' if bad is None else ('\n'.join(bad) if bad else 'OK'))
