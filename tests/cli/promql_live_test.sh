#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# promql_live_test.sh - every PromQL expression of the shipped rules
# (share/kvmscope/kvmscope-rules.yml) and dashboard
# (share/kvmscope/kvmscope-dashboard.json) evaluated by a real Prometheus
# (Debian's, on loopback, scraping every 200 ms and evaluating the rules
# every 200 ms) that scrapes `kvmscope exporter` replaying a shared recording.
#
# Oracles:
#  - Prometheus loads the rules file: /api/v1/rules lists as many rules as
#    the file has, each evaluated with health "ok";
#  - each rule's expression, as Prometheus lists it, evaluated through the
#    HTTP query API gives no error and a non-empty result.  An alert's
#    threshold comparisons are evaluated with the bool modifier (`x > bool
#    1000`: every series the comparison would filter, valued 0 or 1): that
#    is the expression without its threshold, with its label matching
#    (`and on (...)`) intact.  So KvmscopeExporterDown is evaluated as
#    `up{job="kvmscope"} == bool 0` (the exporter is up: the value is 0) and
#    KvmscopeLostEvents as the increase of the lost and overrun counters
#    compared with bool (the recording loses no event: 0);
#  - every recorded series exists after the replay;
#  - each dashboard variable (label_values(SELECTOR, LABEL)) has values
#    through /api/v1/label/LABEL/values, and each panel's expression, with
#    the variables set to all their values as Grafana writes a multi-value
#    regex, $__rate_interval to 30s and $__range to 1h, gives no error and a
#    non-empty result;
#  - the dashboard's top reason equals the top reason of `kvmscope stat`;
#  - the recorded p99 of each VM and reason with 200 exits or more lies in
#    the histogram bucket of `kvmscope stat`'s exact p99 (histogram_quantile
#    interpolates within that bucket).
# timeout: 120
set -u
ks=$KVMSCOPE
root=$(cd "$(dirname "$0")/../.." && pwd)
rules=$root/share/kvmscope/kvmscope-rules.yml
dash=$root/share/kvmscope/kvmscope-dashboard.json
in=$KS_SHARED/data/hip24/host-2vcpu-22k.trace.dat
dir=$KS_TMP/promql
mkdir -p "$dir"
# start_prometheus, prometheus_tried...
. "$(dirname "$0")/../lib/peers.sh"
peers_start

if ! command -v prometheus >/dev/null; then
	echo "skip promql_live: prometheus is not installed (scripts/install-deps.sh)"
	exit 0
elif [ ! -f "$in" ]; then
	echo "skip promql_live: $in is absent"
	exit 0
fi

eport=$(free_port)
start_prometheus "$dir" "$eport" 200ms "$rules"
# Prometheus scrapes a target a moment after it starts: wait until it has
# tried (the exporter is not there yet), so that the replay below is
# scraped from its start
prometheus_tried
# The replay: the series at zero for 1 s, then the recording's 45,543
# events at 20,000 a second: about ten scrapes of the exits growing.
"$ks" exporter --listen "127.0.0.1:$eport" -i "$in" --rate 20000 --hold 1 \
	2>"$dir/exporter.err" &
pids+=("$!")
"$ks" stat --json --by reason -i "$in" > "$dir/stat.json"
"$ks" stat --json --by vm,reason -i "$in" > "$dir/statvm.json"

python3 - "$purl" "$rules" "$dash" "$dir/stat.json" "$dir/statvm.json" <<'EOF'
import json, re, sys, time, urllib.parse, urllib.request
import yaml

purl, rules_file, dash_file, stat_file, statvm_file = sys.argv[1:6]

def get(path, **params):
    url = purl + path + ('?' + urllib.parse.urlencode(params, doseq=True) if params else '')
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        return json.load(e)

def query(expr):
    r = get('/api/v1/query', query=expr)
    if r.get('status') != 'success':
        return None, '%s: %s' % (r.get('errorType'), r.get('error'))
    return r['data']['result'], None

# the replay is over and Prometheus has scraped its end, and the rules
# have been evaluated on it
deadline = time.time() + 60
while time.time() < deadline:
    res, _ = query('kvmscope_replay_finished == 1')
    if res:
        break
    time.sleep(0.2)
else:
    print('not ok promql_live_replay: Prometheus never scraped the end of the replay')
    sys.exit(0)
time.sleep(1)

# ---- the rules
want = sum(len(g['rules']) for g in yaml.safe_load(open(rules_file))['groups'])
groups = get('/api/v1/rules')['data']['groups']
listed = [r for g in groups for r in g['rules']]
bad = ['%s: %s %s' % (r.get('name'), r.get('health'), r.get('lastError', '')) for r in listed
       if r.get('health') != 'ok']
if len(listed) == want and not bad:
    print('ok promql_live_rules_loaded (%d rules, all evaluated without error)' % want)
else:
    print('not ok promql_live_rules_loaded: %d of %d rules listed; %s' % (len(listed), want, '; '.join(bad)))

def with_bool(expr):
    """EXPR with the bool modifier after each comparison operator outside
    label matchers, strings and ranges."""
    out, i, depth = [], 0, 0
    while i < len(expr):
        c = expr[i]
        if c in '"\'`':
            j = i + 1
            while j < len(expr) and expr[j] != c:
                j += 2 if expr[j] == '\\' else 1
            out.append(expr[i:j + 1])
            i = j + 1
            continue
        if c in '{[':
            depth += 1
        elif c in '}]':
            depth -= 1
        if depth == 0:
            m = re.match(r'==|!=|>=|<=|>|<', expr[i:])
            if m:
                out.append(m.group(0) + ' bool')
                i += len(m.group(0))
                continue
        out.append(c)
        i += 1
    return ''.join(out)

nexpr = nbad = 0
def fail(msg):
    global nbad
    nbad += 1
    print('not ok ' + msg)
for r in listed:
    expr = r['query']
    if r['type'] == 'alerting':
        expr = with_bool(expr)
        if expr.replace(' bool', '') != r['query'] or expr == r['query']:
            fail('promql_live_rule_%s: no comparison found in %r' % (r['name'], r['query']))
            continue
    res, err = query(expr)
    nexpr += 1
    name = r.get('name')
    if err:
        fail('promql_live_rule_%s: %s: %s' % (name, expr, err))
    elif not res:
        fail('promql_live_rule_%s: empty result: %s' % (name, expr))
for r in listed:
    if r['type'] == 'recording':
        res, err = query(r['name'])
        if err or not res:
            fail('promql_live_recorded_%s: %s' % (r['name'], err or 'no series recorded'))
if nbad == 0:
    print('ok promql_live_rule_expressions (%d evaluated, each recorded series present)' % nexpr)

# the recorded p99 against stat's exact one: the same bucket (the exporter's
# bounds, src/analysis/metrics.c: 1, 2.5, 5 per decade from 250 ns to 10 s)
bounds = [m * 10 ** e / 1e9 for e in range(2, 10) for m in (1, 2.5, 5)][1:] + [1e10 / 1e9]
def bucket(sec):
    return next((i for i, b in enumerate(bounds) if sec <= b * (1 + 1e-9)), len(bounds))
res, err = query('instance_domain_reason:kvmscope_exit_duration_seconds:quantile_rate5m{quantile="0.99"}')
dom = {int(r['metric']['pid']): r['metric']['domain'] for r in (query('kvmscope_domain_info')[0] or [])}
got = {(r['metric']['domain'], r['metric']['reason']): float(r['value'][1]) for r in res or []}
probs, n = [], 0
for row in json.load(open(statvm_file))['views'][0]['rows']:
    k = (dom.get(row['vm'], str(row['vm'])), row['key'])
    if row['samples'] < 200 or k not in got:
        continue
    n += 1
    if bucket(got[k]) != bucket(row['p99_ns'] / 1e9):
        probs.append('%s/%s: recorded %.3g s, stat %.3g s' % (k[0], k[1], got[k], row['p99_ns'] / 1e9))
if err or n < 3 or probs:
    print('not ok promql_live_p99_in_stat_bucket: %s' % (err or '; '.join(probs) or 'only %d series compared' % n))
else:
    print('ok promql_live_p99_in_stat_bucket (%d VM and reason series)' % n)

# ---- the dashboard
d = json.load(open(dash_file))
def regex_escape(v):
    return re.sub(r'([\\.+*?()|\[\]{}^$])', r'\\\1', v)
def promql_string(v):
    return v.replace('\\', '\\\\').replace('"', '\\"')
values = {'__rate_interval': '30s', '__range': '1h', '__interval': '15s'}
def subst(expr):
    def one(m):
        name = m.group(1) or m.group(2)
        if name not in values:
            raise KeyError(name)
        return values[name]
    return re.sub(r'\$\{(\w+)\}|\$(\w+)', one, expr)

ok = True
for v in d['templating']['list']:
    if v['type'] != 'query':
        continue
    q = v['query']['query'] if isinstance(v['query'], dict) else v['query']
    m = re.fullmatch(r'label_values\((?:(.*),\s*)?(\w+)\)', q.strip())
    if not m:
        print('not ok promql_live_variable_%s: not label_values(): %s' % (v['name'], q))
        ok = False
        continue
    params = {}
    if m.group(1):
        params['match[]'] = subst(m.group(1))
    r = get('/api/v1/label/%s/values' % m.group(2), **params)
    vals = r.get('data') or []
    if r.get('status') != 'success' or not vals:
        print('not ok promql_live_variable_%s: %s: %s' % (v['name'], q, r.get('error', 'no values')))
        ok = False
        values[v['name']] = '.*'
        continue
    # Grafana's multi-value form for Prometheus: (a|b), each value regex-escaped,
    # inside a PromQL string
    values[v['name']] = promql_string('(' + '|'.join(regex_escape(x) for x in vals) + ')')
if ok:
    print('ok promql_live_dashboard_variables (%s)' % ', '.join(
        '%s: %s' % (v['name'], values[v['name']]) for v in d['templating']['list'] if v['type'] == 'query'))

def panels(ps):
    for p in ps:
        yield p
        yield from panels(p.get('panels', []))
n = nbad = 0
for p in panels(d['panels']):
    for t in p.get('targets', []):
        n += 1
        try:
            expr = subst(t['expr'])
        except KeyError as e:
            fail('promql_live_panel "%s" %s: unknown variable $%s' % (p['title'], t['refId'], e.args[0]))
            continue
        res, err = query(expr)
        if err:
            fail('promql_live_panel "%s" %s: %s: %s' % (p['title'], t['refId'], expr, err))
        elif not res:
            fail('promql_live_panel "%s" %s: empty result: %s' % (p['title'], t['refId'], expr))
        if 'topk' in expr and res:
            top = max(res, key=lambda s: float(s['value'][1]))['metric'].get('reason')
            rows = json.load(open(stat_file))['views'][0]['rows']
            want = max(rows, key=lambda r: r['samples'])
            want = want.get('reason') or want.get('key')
            if top == want:
                print('ok promql_live_top_reason_equals_stat (%s)' % top)
            else:
                print('not ok promql_live_top_reason_equals_stat: dashboard %s, stat %s' % (top, want))
if n < 20:
    fail('promql_live_dashboard_expressions: only %d found (the panel layout changed?)' % n)
elif nbad == 0:
    print('ok promql_live_dashboard_expressions (%d evaluated)' % n)
EOF
