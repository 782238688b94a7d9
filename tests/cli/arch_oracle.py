#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""arch_oracle.py - scenarios and independent expected results for
tests/cli/arch_stat_test.sh.

  arch_oracle.py scenario ARCH OUT.scn OUT.expect.json
      writes a scenario for tools/gen-kvm-perfdata (every code of the arch's
      tables, IRQ exits, vcpu_load/put interleavings, a reused tid, a thread
      migrating CPUs) and what kvmscope must find, computed here by a plain
      replay (no kvmscope code).
  arch_oracle.py check EXPECT.json MEASURE KVMSCOPE.json
      compares kvmscope stat --json (views reason and vcpu) with it.
  arch_oracle.py names EXPECT.json KVMSCOPE.json
      key names against the kernel headers ($KS_LINUX) or, for riscv and
      loongarch, the verified tables below.
  arch_oracle.py perfnames EXPECT.json PERF.txt
      the rows of `kvmscope stat --format perf` (riscv, loongarch): names
      and samples as perf's tables and key rules give them.
  arch_oracle.py reuse OUT.scn OUT.expect.json / reusecheck EXPECT MEASURE JSON
      host threads that exit and whose tid is reused by a thread of another
      VM / another vCPU (fork/exit/comm-at records), replayed per lifetime.
"""
import json, os, re, sys

LINUX = os.environ.get('KS_LINUX', '/var/cache/kvmscope-linux/linux-source-6.1')

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

# ---- Verified tables (riscv and loongarch are not in the 6.1 tree) ----
# Read from torvalds/linux (mainline, 2025) with the project's source search:
# arch/riscv/include/asm/csr.h: scause exception codes EXC_*, interrupt
# causes IRQ_* (with the interrupt bit XLEN-1 cleared).
RISCV_EXC = {0: 'INST_MISALIGNED', 1: 'INST_ACCESS', 2: 'INST_ILLEGAL', 3: 'BREAKPOINT',
             4: 'LOAD_MISALIGNED', 5: 'LOAD_ACCESS', 6: 'STORE_MISALIGNED', 7: 'STORE_ACCESS',
             8: 'SYSCALL', 9: 'HYPERVISOR_SYSCALL', 10: 'SUPERVISOR_SYSCALL',
             12: 'INST_PAGE_FAULT', 13: 'LOAD_PAGE_FAULT', 15: 'STORE_PAGE_FAULT',
             20: 'INST_GUEST_PAGE_FAULT', 21: 'LOAD_GUEST_PAGE_FAULT',
             22: 'VIRTUAL_INST_FAULT', 23: 'STORE_GUEST_PAGE_FAULT'}
RISCV_IRQ = {1: 'IRQ_S_SOFT', 2: 'IRQ_VS_SOFT', 3: 'IRQ_M_SOFT', 5: 'IRQ_S_TIMER',
             6: 'IRQ_VS_TIMER', 7: 'IRQ_M_TIMER', 9: 'IRQ_S_EXT', 10: 'IRQ_VS_EXT',
             11: 'IRQ_M_EXT', 12: 'IRQ_S_GEXT', 13: 'IRQ_PMU_OVF'}
# perf 6.12 (Debian trixie's, which --format perf follows and
# tests/cli/foreign_perf_test.sh runs): tools/perf/arch/riscv/util/kvm-stat.c
# keys by the raw scause (interrupt bit included) and names it from
# riscv_exception_types.h, the EXC_* codes without their prefix; its rows
# are keyed by that name, so interrupts and unknown codes are one UNKNOWN row.
# arch/loongarch/include/asm/loongarch.h: ESTAT.Ecode values EXCCODE_*
# (kvm_exit's reason, arch/loongarch/kvm/vcpu.c kvm_handle_exit()).
LOONGARCH_EXCCODE = {0: 'RSV', 1: 'TLBL', 2: 'TLBS', 3: 'TLBI', 4: 'TLBM', 5: 'TLBNR',
                     6: 'TLBNX', 7: 'TLBPE', 8: 'ADE', 9: 'ALE', 10: 'BCE', 11: 'SYS',
                     12: 'BP', 13: 'INE', 14: 'IPE', 15: 'FPDIS', 16: 'LSXDIS',
                     17: 'LASXDIS', 18: 'FPE', 19: 'WATCH', 20: 'BTDIS', 21: 'BTE',
                     22: 'GSPR', 23: 'HVC', 24: 'GCM', 25: 'SE'}
# tools/perf/util/kvm-stat-arch/kvm-stat-loongarch.c (was tools/perf/arch/
# loongarch/util/kvm-stat.c): loongarch_exception_type, with the pseudo codes
# 100.. that event_gspr_get_key() gives a kvm_exit_gspr instruction word.
LOONGARCH_PERF = {0: 'Interrupt', 1: 'Mem Read', 2: 'Mem Store', 3: 'Inst Fetch',
                  4: 'Mem Modify', 15: 'FPU', 16: 'LSX', 17: 'LASX', 22: 'Privilege Error',
                  23: 'Hypercall', 100: 'CPUCFG', 101: 'CSR', 102: 'IOCSR', 103: 'Idle',
                  104: 'Others'}

def loongarch_gspr_kind(insn):
    """perf's event_gspr_get_key(): the kind of a GSPR instruction word."""
    top = insn >> 24
    if top == 0:
        return 100 if (insn >> 10) == 0x1b else 104
    if top == 4:
        return 101
    if top == 6:
        return {0xc90: 102, 0xc91: 103}.get(insn >> 15, 104)
    return 104

# kvm_exit_gspr instruction words: cpucfg, a non-cpucfg 0x00 word, csrrd,
# iocsrrd.w, idle, cacop, another major opcode
LOONGARCH_GSPR_WORDS = [(0x1b << 10) | (5 << 5) | 4, 0x00000123, 0x04000c05,
                        (0xc90 << 15) | (2 << 10) | 0x45, (0xc91 << 15) | 0x7,
                        (0x18 << 22) | 0x1234, 0x12345678]

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
        exits = [({'reason': c}, ('exc', c)) for c in range(26)]
        return exits + [({'reason': 22, '_gspr': w}, ('exc', loongarch_gspr_kind(w)))
                        for w in LOONGARCH_GSPR_WORDS]
    raise SystemExit('unknown arch ' + arch)

EV = {  # entry, exit, entry vcpu field, exit vcpu field
    'arm64': ('kvm:kvm_entry', 'kvm:kvm_exit', None),
    'powerpc': ('kvm_hv:kvm_guest_enter', 'kvm_hv:kvm_guest_exit', 'vcpu_id'),
    's390': ('kvm:kvm_s390_sie_enter', 'kvm:kvm_s390_sie_exit', 'id'),
    'riscv': ('kvm:kvm_entry', 'kvm:kvm_exit', None),
    'loongarch': ('kvm:kvm_enter', 'kvm:kvm_exit', None),
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
            gspr = f.pop('_gspr', None)
            if arch in ('powerpc', 's390'):
                f.update(vfields(t))
            emit(t, pid, exit_, f)
            if gspr is not None:
                ts += 3
                emit(t, pid, 'kvm:kvm_exit_gspr', {'inst_word': gspr})
                ts -= 3
            run = ts - last_entry[t]
            ex = ts
            ts += 37 + (i * 13) % 500
            if i % 11 == 0:
                cpu_of[t] = (cpu_of[t] + 1) % 4     # migrates between exit and entry
            emit(t, pid, entry, vfields(t))
            o = {'vcpu': vcpu_of(t), 'key': list(key), 'handling': ts - ex, 'run': run,
                 'tid': t}
            if gspr is not None:
                # run (entry -> exit) closes at the exit: the child that
                # follows refines nothing, the key stays GSPR (22)
                o['run_key'] = ['exc', 22]
            occ.append(o)
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
        key = o['run_key'] if measure == 'run' and 'run_key' in o else o['key']
        k = key[1]
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
    elif arch in ('riscv', 'loongarch'):
        return verified_names(exp, rows)
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

def our_name(arch, kind, code):
    """kvmscope's name of a key: riscv the csr.h names (IRQ_* kept apart
    from exceptions), loongarch perf's name where perf has one, else the
    kernel's EXCCODE_* suffix."""
    if arch == 'riscv':
        if kind == 'irq':
            return RISCV_IRQ.get(code, 'IRQ(%d)' % code)
        return RISCV_EXC.get(code, 'EXC(%d)' % code)
    return LOONGARCH_PERF.get(code) or LOONGARCH_EXCCODE.get(code, 'EXCCODE(%d)' % code)

def verified_names(exp, rows):
    arch = exp['arch']
    want = {}
    for o in exp['occ']:
        kind, code = o['key']
        want[(kind if arch == 'riscv' else 'exc', code)] = our_name(arch, kind, code)
    got = {}
    for r in rows:
        kind = 'irq' if arch == 'riscv' and r['key'].startswith('IRQ') else 'exc'
        got[(kind, r['key_value'])] = r['key']
    bad = ['%s %s: %s, want %s' % (k[0], k[1], got.get(k), v)
           for k, v in sorted(want.items()) if got.get(k) != v]
    if len(got) != len(want):
        bad.append('%d rows, want %d' % (len(got), len(want)))
    return bad

def perf_name(arch, key):
    if arch == 'riscv':
        return RISCV_EXC.get(key[1], 'UNKNOWN') if key[0] == 'exc' else 'UNKNOWN'
    return LOONGARCH_PERF.get(key[1], 'UNKNOWN')

def perfnames(expf, txtf):
    """--format perf rows: perf keys by the code alone and names it from its
    own table (riscv 6.12: rows keyed by that name, so every interrupt and
    unknown code is one UNKNOWN row)."""
    exp = json.load(open(expf))
    arch = exp['arch']
    want = {}
    for o in exp['occ']:
        code = tuple(o['key']) if arch == 'riscv' else o['key'][1]
        want[code] = want.get(code, 0) + 1
    rows = {}
    for c, n in want.items():
        name = perf_name(arch, c if arch == 'riscv' else ('exc', c))[:39]
        key = name if arch == 'riscv' else c
        rows[key] = (name, rows.get(key, (name, 0))[1] + n)
    want = sorted(rows.values())
    got = []
    for line in open(txtf):
        m = re.match(r'^\s*(\S.*?)\s+(\d+)\s+[\d.]+%\s', line)
        if m:
            got.append((m.group(1), int(m.group(2))))
    got.sort()
    if got == want:
        return []
    return ['want %s' % [w for w in want if w not in got], 'got %s' % [g for g in got if g not in want]]

# ---- thread reuse ----
# Lifetimes (tid, pid, name or None, first ts, last ts): tid 402 is vCPU 1
# of VM 400, exits, and is reused as vCPU 3 of VM 500; tid 403 ("qemu-kvm"
# of VM 400, no vCPU name) is reused by vCPU 2 of the same VM; tid 404 (CPU
# 0/KVM of VM 600) is reused by a thread of VM 700 that never gets a COMM:
# it must not inherit the old name.  The first lifetimes of 402 and 404 end
# with an exit pending (handling) / an entry pending (run).
def reuse(scn, exp):
    lines = ['comm 401 400 CPU 0/KVM', 'comm 402 400 CPU 1/KVM', 'comm 403 400 qemu-kvm',
             'comm 404 600 CPU 0/KVM', 'comm 400 400 vm-a', 'comm 600 600 vm-c']
    occ, lives = [], []
    ts = 1000
    def life(tid, pid, name, n, cpu, end_pending, fork=None):
        nonlocal ts
        if fork:
            lines.append('fork %d %d %d %d %d %d' % (ts, cpu, tid, pid, pid, pid)); ts += 10
            if name:
                lines.append('comm-at %d %d %d %d %s' % (ts, cpu, tid, pid, name)); ts += 10
        vcpu = int(name[4:-4]) if name and name.startswith('CPU ') else -1
        events = 0
        lines.append('%d %d %d %d kvm:kvm_entry' % (ts, cpu, tid, pid)); events += 1
        entry = ts; ts += 100
        for i in range(n):
            code = (5 + 3 * i + tid) % 24
            lines.append('%d %d %d %d kvm:kvm_exit scause=%d' % (ts, cpu, tid, pid, code))
            events += 1
            ex = ts; ts += 40 + 7 * i + tid % 10
            if i == n - 1 and end_pending:
                break
            lines.append('%d %d %d %d kvm:kvm_entry' % (ts, cpu, tid, pid)); events += 1
            occ.append({'tid': tid, 'vm': pid, 'vcpu': vcpu, 'key': ['exc', code],
                        'handling': ts - ex, 'run': ex - entry})
            entry = ts; ts += 150
        if end_pending:
            # the run of the pending exit completed; its handling never did
            occ.append({'tid': tid, 'vm': pid, 'vcpu': vcpu, 'key': ['exc', code],
                        'handling': None, 'run': ex - entry})
        lives.append({'tid': tid, 'vm': pid, 'vcpu': vcpu, 'events': events})
    life(401, 400, 'CPU 0/KVM', 4, 0, False)
    life(402, 400, 'CPU 1/KVM', 3, 1, True)
    lines.append('exit %d 1 402 400 402 400' % ts); ts += 20
    life(403, 400, 'qemu-kvm', 3, 2, False)
    lines.append('exit %d 2 403 400 403 400' % ts); ts += 20
    life(402, 500, 'CPU 3/KVM', 4, 1, False, fork=True)
    life(403, 400, 'CPU 2/KVM', 2, 3, False, fork=True)
    life(404, 600, 'CPU 0/KVM', 3, 0, True)
    lines.append('exit %d 0 404 600 404 600' % ts); ts += 20
    life(404, 700, None, 3, 0, False, fork=True)
    life(401, 400, 'CPU 0/KVM', 2, 0, False)     # 401 lives on: no reuse
    open(scn, 'w').write('\n'.join(lines) + '\n')
    json.dump({'arch': 'riscv', 'occ': occ, 'lives': lives}, open(exp, 'w'))

def reusecheck(expf, measure, gotf):
    exp = json.load(open(expf))
    got = json.load(open(gotf))
    bad = []
    want = {}
    for o in exp['occ']:
        if o[measure] is None:
            continue
        k = (o['vm'], o['vcpu'] if o['vcpu'] >= 0 else ('tid', o['tid']))
        w = want.setdefault(k, [0, 0])
        w[0] += 1
        w[1] += o[measure]
    view = [v for v in got['views'] if v['by'] == 'vm,vcpu'][0]
    have = {}
    for r in view['rows']:
        k = (r['vm'], r['vcpu'] if r['vcpu'] >= 0 else ('tid', r.get('thread')))
        have[k] = [r['samples'], r['total_ns']]
    if have != want:
        bad.append('vm,vcpu rows: want %s got %s' % (sorted(want.items(), key=str),
                                                     sorted(have.items(), key=str)))
    # the attribution table: one entry per lifetime
    lives = {}
    for l in exp['lives']:
        k = (l['tid'], l['vm'], l['vcpu'])
        lives[k] = lives.get(k, 0) + l['events']
    th = {}
    for t in got['threads']:
        k = (t['tid'], t['vm'], t['vcpu'])
        th[k] = th.get(k, 0) + t['events']
    if th != lives:
        bad.append('threads: want %s got %s' % (sorted(lives.items()), sorted(th.items())))
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
    elif sys.argv[1] == 'perfnames':
        bad = perfnames(sys.argv[2], sys.argv[3])
        print('\n'.join(bad) if bad else 'OK')
    elif sys.argv[1] == 'reuse':
        reuse(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == 'reusecheck':
        bad = reusecheck(sys.argv[2], sys.argv[3], sys.argv[4])
        print('\n'.join(bad) if bad else 'OK')
