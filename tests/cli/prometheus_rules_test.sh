#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# prometheus_rules_test.sh - the shipped Prometheus rules and Grafana
# dashboard (share/kvmscope/), without a server:
#  - `promtool check rules` accepts the rules file;
#  - `promtool test rules` runs tests/cli/kvmscope-rules.test.yml: for every
#    alert, input series and the alerts expected (firing for some series,
#    silent for others), and the recorded series they build on;
#  - every alert has a summary, a description, a runbook naming it and a
#    runbook_url, and the exporter's man page has that runbook paragraph
#    (section RUNBOOKS) and no paragraph for an alert that is gone;
#  - the dashboard is Grafana's JSON model: a uid and title, the variables
#    instance, domain and vcpu, every panel and variable on the data source
#    variable, each panel placed on the grid, no two panels overlapping.
# (tests/cli/promql_live_test.sh evaluates every expression on a real
# Prometheus.)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
rules=$root/share/kvmscope/kvmscope-rules.yml
dash=$root/share/kvmscope/kvmscope-dashboard.json
man=$root/man/kvmscope-exporter.1

if ! command -v promtool >/dev/null; then
	echo "skip promtool_rules: promtool is not installed (prometheus; scripts/install-deps.sh)"
else
	if out=$(promtool check rules "$rules" 2>&1); then
		echo "ok promtool_check_rules ($(printf '%s\n' "$out" | grep -o '[0-9]* rules found'))"
	else
		echo "not ok promtool_check_rules: $(printf '%s' "$out" | tail -3 | tr '\n' ' ')"
	fi
	if out=$(cd "$root/tests/cli" && promtool test rules kvmscope-rules.test.yml 2>&1); then
		echo "ok promtool_test_rules"
	else
		echo "not ok promtool_test_rules: $(printf '%s' "$out" | head -20 | tr '\n' ' ')"
	fi
fi

python3 - "$rules" "$dash" "$man" "$root/tests/cli/kvmscope-rules.test.yml" <<'EOF'
import json, re, sys
import yaml
rules_file, dash_file, man_file, unit_file = sys.argv[1:5]

alerts = [r for g in yaml.safe_load(open(rules_file))['groups'] for r in g['rules'] if 'alert' in r]
man = open(man_file).read()
sec = re.search(r'^\.SH RUNBOOKS\n(.*?)^\.SH ', man, re.M | re.S)
runbooks = re.findall(r'^\.TP\n\.B (\S+)\n', sec.group(1), re.M) if sec else []
bad = []
for a in alerts:
    ann = a.get('annotations', {})
    for k in ('summary', 'description', 'runbook', 'runbook_url'):
        if not ann.get(k):
            bad.append('%s has no %s' % (a['alert'], k))
    if ann.get('runbook') != a['alert']:
        bad.append('%s: runbook annotation %r' % (a['alert'], ann.get('runbook')))
    if a['alert'] not in runbooks:
        bad.append('%s has no paragraph in RUNBOOKS of %s' % (a['alert'], man_file))
gone = set(runbooks) - {a['alert'] for a in alerts}
if gone:
    bad.append('RUNBOOKS describes alerts that are not in the rules: %s' % ' '.join(sorted(gone)))
# each alert has a unit test that expects it firing and one that expects it silent
unit = yaml.safe_load(open(unit_file))
cases = {}
for t in unit['tests']:
    for c in t.get('alert_rule_test', []):
        cases.setdefault(c['alertname'], set()).add(bool(c.get('exp_alerts')))
for a in alerts:
    if cases.get(a['alert']) != {True, False}:
        bad.append('%s: unit tests expect it firing/silent: %s' % (a['alert'], sorted(cases.get(a['alert'], []))))
if len(alerts) >= 6 and not bad:
    print('ok rules_alerts_annotated_and_in_man (%d alerts, each with a runbook paragraph and firing and silent unit tests)' % len(alerts))
else:
    print('not ok rules_alerts_annotated_and_in_man: %d alerts; %s' % (len(alerts), '; '.join(bad)))

try:
    d = json.load(open(dash_file))
except ValueError as e:
    print('not ok dashboard_json: %s' % e)
    sys.exit(0)
bad = []
if not d.get('uid') or not d.get('title') or not isinstance(d.get('schemaVersion'), int):
    bad.append('uid, title or schemaVersion missing')
vars_ = {v['name']: v for v in d.get('templating', {}).get('list', [])}
for name in ('instance', 'domain', 'vcpu'):
    if name not in vars_:
        bad.append('no variable %s' % name)
if vars_.get('datasource', {}).get('type') != 'datasource':
    bad.append('no data source variable "datasource"')
def panels(ps):
    for p in ps:
        yield p
        yield from panels(p.get('panels', []))
boxes = []
ids = set()
for p in panels(d.get('panels', [])):
    g = p.get('gridPos', {})
    if not all(isinstance(g.get(k), int) for k in 'hwxy') or g['x'] + g['w'] > 24:
        bad.append('panel "%s": gridPos %s' % (p.get('title'), g))
        continue
    if p.get('id') in ids:
        bad.append('panel "%s": id %s twice' % (p.get('title'), p.get('id')))
    ids.add(p.get('id'))
    for b in boxes:
        if g['x'] < b['x'] + b['w'] and b['x'] < g['x'] + g['w'] and g['y'] < b['y'] + b['h'] and b['y'] < g['y'] + g['h']:
            bad.append('panel "%s" overlaps "%s"' % (p.get('title'), b['title']))
    boxes.append(dict(g, title=p.get('title')))
    if p['type'] != 'row':
        for t in [p] + p.get('targets', []):
            if t.get('datasource', {}).get('uid') != '${datasource}':
                bad.append('panel "%s": data source %s' % (p.get('title'), t.get('datasource')))
        if not p.get('targets'):
            bad.append('panel "%s" has no query' % p.get('title'))
for v in vars_.values():
    if v['type'] == 'query' and v.get('datasource', {}).get('uid') != '${datasource}':
        bad.append('variable %s: data source %s' % (v['name'], v.get('datasource')))
kinds = {p['type'] for p in panels(d.get('panels', []))}
if 'heatmap' not in kinds:
    bad.append('no heatmap panel')
if not bad:
    print('ok dashboard_model (%d panels: %s)' % (len(boxes), ', '.join(sorted(kinds))))
else:
    print('not ok dashboard_model: %s' % '; '.join(bad))
EOF
