#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""exporter_check.py - checks of `kvmscope exporter` output for exporter_test.sh.

  exporter_check.py expo FILE STAT_VCPU_JSON
      FILE: a /metrics scrape (either format); STAT_VCPU_JSON: `kvmscope stat
      --json --by vm,vcpu,reason` of the same input.  Exits, time in exits
      (exact, in ns), histogram counts and sums per (VM, vCPU, reason) and
      (VM, reason) must equal stat's; buckets must be cumulative, end with
      +Inf == count, be 0 below stat's min and == count from stat's max.
  exporter_check.py om FILE         OpenMetrics syntax points ('# EOF' last,
      counter families named without _total, # UNIT matching the name).
  exporter_check.py prom URL STAT_JSON T
      Prometheus' HTTP API at URL: increase() over the whole run, evaluated
      at T (the last scrape), of exits and histogram counts per domain and
      reason equal stat's.
Prints one line per check: 'ok NAME' or 'not ok NAME: why'.
"""
import json
import re
import sys
import urllib.parse
import urllib.request
from decimal import Decimal

LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text):
    out = []
    for ln in text.splitlines():
        if not ln or ln.startswith('#'):
            continue
        m = LINE.match(ln)
        if not m:
            raise ValueError('bad line: ' + ln)
        labels = {k: v.replace('\\"', '"').replace('\\n', '\n').replace('\\\\', '\\')
                  for k, v in LABEL.findall(m.group(3) or '')}
        out.append((m.group(1), labels, m.group(4)))
    return out


def report(name, problems):
    if problems:
        print('not ok %s: %s' % (name, '; '.join(problems[:3])))
    else:
        print('ok ' + name)


def ns(v):
    return int(Decimal(v) * 1000000000)


def expo(path, stat_path, tag):
    samples = parse(open(path).read())
    stat = json.load(open(stat_path))
    pid = {s[1]['domain']: int(s[1]['pid']) for s in samples if s[0] == 'kvmscope_domain_info'}
    vcpu_rows = {}
    for r in stat['views'][0]['rows']:
        vcpu_rows[(r['vm'], r['vcpu'], r['key'])] = r
    reason_rows = {}
    for r in stat['views'][0]['rows']:
        k = (r['vm'], r['key'])
        a = reason_rows.setdefault(k, {'samples': 0, 'total_ns': 0, 'min_ns': r['min_ns'], 'max_ns': 0})
        a['samples'] += r['samples']
        a['total_ns'] += r['total_ns']
        a['min_ns'] = min(a['min_ns'], r['min_ns'])
        a['max_ns'] = max(a['max_ns'], r['max_ns'])
    got_c, got_t = {}, {}
    for name, lb, v in samples:
        if name in ('kvmscope_exits_total', 'kvmscope_exit_time_seconds_total'):
            vc = int(lb['vcpu']) if lb['vcpu'].isdigit() else -1
            k = (pid.get(lb['domain'], lb['domain']), vc, lb['reason'])
            if name == 'kvmscope_exits_total':
                got_c[k] = got_c.get(k, 0) + int(v)
            else:
                got_t[k] = got_t.get(k, 0) + ns(v)
    probs = []
    for k, r in vcpu_rows.items():
        if got_c.get(k) != r['samples']:
            probs.append('%s: exits %s, stat %d' % (k, got_c.get(k), r['samples']))
        if got_t.get(k) != r['total_ns']:
            probs.append('%s: time %s ns, stat %d' % (k, got_t.get(k), r['total_ns']))
    for k in got_c:
        if k not in vcpu_rows and got_c[k]:
            probs.append('%s: %d exits stat has not' % (k, got_c[k]))
    report('exporter_%s_exits_per_vm_vcpu_reason_equal_stat (%d series)' % (tag, len(vcpu_rows)), probs)

    hist = {}
    for name, lb, v in samples:
        m = re.match(r'kvmscope_(halt_)?exit_duration_seconds_(bucket|count|sum)$', name)
        if not m:
            continue
        k = (pid.get(lb['domain'], lb['domain']), lb['reason'])
        h = hist.setdefault(k, {'buckets': [], 'halt': bool(m.group(1))})
        if m.group(2) == 'bucket':
            le = float('inf') if lb['le'] == '+Inf' else float(lb['le'])
            h['buckets'].append((le, int(v)))
        elif m.group(2) == 'count':
            h['count'] = int(v)
        else:
            h['sum'] = ns(v)
    probs = []
    for k, r in reason_rows.items():
        h = hist.get(k)
        if not h:
            probs.append('%s: no histogram' % (k,))
            continue
        if h.get('count') != r['samples'] or h.get('sum') != r['total_ns']:
            probs.append('%s: count %s sum %s, stat %d %d' % (k, h.get('count'), h.get('sum'),
                                                              r['samples'], r['total_ns']))
        halt = k[1] in ('HLT', 'hlt', 'idle-halt', 'WFx')
        if h['halt'] != halt:
            probs.append('%s: halt family %s' % (k, h['halt']))
        prev = 0
        for le, c in h['buckets']:
            if c < prev:
                probs.append('%s: le=%g not cumulative' % (k, le))
            prev = c
            if le * 1e9 < r['min_ns'] and c:
                probs.append('%s: %d below stat min %d ns at le=%g' % (k, c, r['min_ns'], le))
            if le * 1e9 >= r['max_ns'] and c != r['samples']:
                probs.append('%s: le=%g has %d, stat max %d ns' % (k, le, c, r['max_ns']))
        if not h['buckets'] or h['buckets'][-1] != (float('inf'), r['samples']):
            probs.append('%s: +Inf bucket %s' % (k, h['buckets'][-1:] if h['buckets'] else None))
    for k, h in hist.items():
        if k not in reason_rows and h.get('count'):
            probs.append('%s: histogram stat has not' % (k,))
    report('exporter_%s_histograms_per_vm_reason_equal_stat (%d)' % (tag, len(reason_rows)), probs)


def om(path, tag):
    text = open(path).read()
    probs = []
    if not text.endswith('# EOF\n'):
        probs.append('does not end with # EOF')
    fams = {}
    for ln in text.splitlines():
        m = re.match(r'# TYPE (\S+) (\S+)$', ln)
        if m:
            fams[m.group(1)] = m.group(2)
            if m.group(2) == 'counter' and m.group(1).endswith('_total'):
                probs.append('counter family %s ends in _total' % m.group(1))
        m = re.match(r'# UNIT (\S+) (\S+)$', ln)
        if m and not m.group(1).endswith('_' + m.group(2)):
            probs.append('unit %s of %s' % (m.group(2), m.group(1)))
    for name, _, _ in parse(text):
        base = re.sub(r'_(total|bucket|count|sum)$', '', name)
        if name not in fams and base not in fams:
            probs.append('sample %s has no family' % name)
    if fams.get('kvmscope_exits') != 'counter':
        probs.append('no counter family kvmscope_exits')
    report('exporter_%s_openmetrics_syntax' % tag, probs)


def query(url, q, t):
    u = url + '/api/v1/query?' + urllib.parse.urlencode({'query': q, 'time': t})
    with urllib.request.urlopen(u, timeout=10) as f:
        d = json.load(f)
    if d.get('status') != 'success':
        raise RuntimeError(str(d))
    return {(r['metric'].get('domain'), r['metric'].get('reason')): float(r['value'][1])
            for r in d['data']['result']}


def prom(url, stat_path, t):
    stat = json.load(open(stat_path))
    pidq = query(url, 'kvmscope_domain_info', t)
    # domain_info is keyed (domain, None): map pid -> domain through a second query
    u = url + '/api/v1/query?' + urllib.parse.urlencode({'query': 'kvmscope_domain_info', 'time': t})
    with urllib.request.urlopen(u, timeout=10) as f:
        d = json.load(f)
    dom = {int(r['metric']['pid']): r['metric']['domain'] for r in d['data']['result']}
    del pidq
    want = {}
    for r in stat['views'][0]['rows']:
        k = (dom.get(r['vm'], str(r['vm'])), r['key'])
        want[k] = want.get(k, 0) + r['samples']
    checks = [
        ('exits_increase', 'sum by (domain, reason) (increase(kvmscope_exits_total[1h]))'),
        ('histogram_count_increase', 'sum by (domain, reason) (increase(kvmscope_exit_duration_seconds_count[1h]))'
         ' or sum by (domain, reason) (increase(kvmscope_halt_exit_duration_seconds_count[1h]))'),
        ('exits_last_value', 'sum by (domain, reason) (kvmscope_exits_total)'),
    ]
    for name, q in checks:
        got = query(url, q, t)
        probs = []
        for k, n in want.items():
            g = got.get(k)
            if g is None or abs(g - n) > 1e-6 * max(1, n):
                probs.append('%s: prometheus %s, stat %d' % (k, g, n))
        for k, g in got.items():
            if k not in want and g:
                probs.append('%s: prometheus %s, stat has none' % (k, g))
        report('exporter_prometheus_%s_equal_stat (%d series)' % (name, len(want)), probs)


if __name__ == '__main__':
    if sys.argv[1] == 'expo':
        expo(sys.argv[2], sys.argv[3], sys.argv[4])
    elif sys.argv[1] == 'om':
        om(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == 'prom':
        prom(sys.argv[2], sys.argv[3], sys.argv[4])
