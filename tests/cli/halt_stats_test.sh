#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# halt_stats_test.sh - halt polling from KVM's statistics (top --halt and
# the exporter's kvmscope_halt_* metrics) on recorded query-stats replies.
#
# Peer: tests/cli/fake_qmp.py --replay, serving the replies recorded from a
# real QEMU 7.2 -accel kvm on this kind of machine
# (tests/fixtures/qmp/qemu-7.2-kvm-2vcpu.json, reading A) and a later
# reading B made here from A by adding, on each vCPU, halts of known sizes
# (tests/cli/halt_oracle.py add_halts: polls that succeed after 20 us, polls
# that run out after 200 us, sleeps of 1 ms), so that every histogram
# and counter moves.
#
# Oracles (tests/cli/halt_oracle.py, computed from the replies as KVM
# defines the statistics, independently of kvmscope's code):
#  - the exporter's scrape of B: every kvmscope_halt_* sample equal (the
#    counters per vCPU, the log2 histograms per VM with le in seconds,
#    _count and _sum), none more; `promtool check metrics` passes the
#    whole scrape; the OpenMetrics scrape's families and units are named as
#    that format wants (exporter_check.py om);
#  - top --halt -v in batch mode over A then B: HALTS per VM and vCPU equal
#    B's halt_exits; POLLED% equals 100 * polled / (polled + slept) of the
#    interval; POLLCPU% and WASTED% equal the interval's poll times over
#    its length (the length taken from HALTS/s: the halts added / HALTS/s);
#    the JSON output carries the same cells.
set -u
ks=$KVMSCOPE
here=$(cd "$(dirname "$0")" && pwd)
fixture=$here/../fixtures/qmp/qemu-7.2-kvm-2vcpu.json
dir=$KS_TMP/halt-stats
mkdir -p "$dir"
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
}
trap cleanup EXIT

if ! command -v curl >/dev/null || ! command -v promtool >/dev/null; then
	echo "skip halt_stats: curl or promtool is not installed (scripts/install-deps.sh)"
	exit 0
fi

PYTHONPATH=$here python3 - "$fixture" "$dir/b.json" <<'PY'
import json, sys
import halt_oracle
a = json.load(open(sys.argv[1]))
b = halt_oracle.add_halts(a, exits=1000, polled=600, slept=300, failed=150, invalid=5,
                          poll_ns=20000, fail_ns=200000, wait_ns=1000000)
json.dump(b, open(sys.argv[2], "w"))
PY
# a small replay for the exporter's exit metrics
printf '    CPU 0/KVM-1000 [001] 1.000001: kvm_exit: reason HLT rip 0x1 info 0 0\n    CPU 0/KVM-1000 [001] 1.000002: kvm_entry: vcpu 0, rip 0x1\n' > "$dir/series.txt"

serve() { # SOCKET FILES
	python3 "$here/fake_qmp.py" "$1" --replay "$2" --name halted-vm &
	pids+=($!)
	for i in $(seq 50); do [ -S "$1" ] && return 0; sleep 0.1; done
	return 1
}

# ---- the exporter: kvmscope_halt_* of B
serve "$dir/b.sock" "$dir/b.json"
"$ks" exporter --listen 127.0.0.1:0 -i "$dir/series.txt" --speed max --qmp "$dir/b.sock" \
	2>"$dir/exporter.err" &
epid=$!
pids+=($epid)
port=
for i in $(seq 100); do
	port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\)\/metrics/\1/p' "$dir/exporter.err")
	[ -n "$port" ] && break
	sleep 0.1
done
curl -s -m 10 "http://127.0.0.1:$port/metrics" -o "$dir/b.prom"
curl -s -m 10 -H 'Accept: application/openmetrics-text; version=1.0.0' \
	"http://127.0.0.1:$port/metrics" -o "$dir/b.om"
kill "$epid"
res=$(PYTHONPATH=$here python3 - "$dir/b.json" "$dir/b.prom" "$dir/b.om" <<'PY'
import json, sys
import halt_oracle
want = halt_oracle.metrics(json.load(open(sys.argv[1])), "halted-vm")
for f in sys.argv[2:]:
    got = halt_oracle.parse_scrape(open(f).read())
    diff = halt_oracle.compare(want, got)
    if diff:
        print("%s: %d of %d differ: %s" % (f.rsplit(".", 1)[1], len(diff), len(want), diff[:3]))
        sys.exit()
nz = sum(1 for v in want.values() if v)
print("ok %d samples (%d non-zero) equal the oracle's, in both formats" % (len(want), nz))
PY
)
case "$res" in
ok*) echo "ok halt_stats_exporter_equal_oracle (${res#ok })" ;;
*) echo "not ok halt_stats_exporter_equal_oracle: $res $(head -1 "$dir/exporter.err")" ;;
esac
if out=$(promtool check metrics < "$dir/b.prom" 2>&1) && [ -z "$out" ] &&
   grep -q '^# TYPE kvmscope_halt_poll_duration_seconds histogram$' "$dir/b.prom"; then
	echo "ok halt_stats_promtool_check_metrics"
else
	echo "not ok halt_stats_promtool_check_metrics: $(echo "$out" | head -3 | tr '\n' '|')"
fi

python3 "$here/exporter_check.py" om "$dir/b.om" halt_stats

# ---- top --halt: A, then B
serve "$dir/ab.sock" "$fixture,$dir/b.json"
"$ks" top --halt --qmp "$dir/ab.sock" -b -v -n 2 -d 0.5 > "$dir/top.txt" 2>"$dir/top.err"
rc=$?
serve "$dir/ab2.sock" "$fixture,$dir/b.json"
"$ks" top --halt --qmp "$dir/ab2.sock" --json -v -n 2 -d 0.5 > "$dir/top.json" 2>>"$dir/top.err"
res=$(PYTHONPATH=$here python3 - "$fixture" "$dir/b.json" "$dir/top.txt" "$dir/top.json" <<'PY'
import json, sys
import halt_oracle
a, b = (halt_oracle.per_vcpu(json.load(open(f))) for f in sys.argv[1:3])
def rows_text(path):
    rows, cur = {}, None
    for line in open(path):
        if line.startswith("kvmscope top"):
            cur = rows.setdefault(len(rows) + 1, {})
            continue
        if not line.strip() or line.startswith("VM /"):
            continue
        f = line.split()
        name = "vm" if not line.startswith(" ") else "vcpu " + f[1]
        cur[name] = f[-5:] if len(f) >= 6 else f[-1:]
    return rows
def rows_json(path):
    rows = {}
    for n, line in enumerate(open(path), 1):
        doc = json.loads(line)
        rows[n] = {("vm" if r["depth"] == 0 else r["name"]):
                   [r["halts_s"], r["polled%"], r["pollcpu%"], r["wasted%"], r["halts"]]
                   for r in doc["rows"]}
    return rows
bad = []
def check(rows, how):
    if len(rows) != 2:
        bad.append("%s: %d intervals" % (how, len(rows))); return
    for who in ["vm"] + ["vcpu %d" % c for c in sorted(b)]:
        cpus = sorted(b) if who == "vm" else [int(who.split()[1])]
        d = lambda s: sum(b[c][s] - a[c][s] for c in cpus)
        cells = rows[2].get(who)
        if not cells or len(cells) != 5 or None in cells:
            bad.append("%s %s: %s" % (how, who, cells)); continue
        hs, polled, cpu, wasted, halts = (float(x) for x in cells)
        if int(halts) != sum(b[c]["halt_exits"] for c in cpus):
            bad.append("%s %s HALTS %s" % (how, who, halts))
        pp = 100.0 * d("halt_successful_poll") / (d("halt_successful_poll") + d("halt_wakeup"))
        if abs(polled - round(pp, 1)) > 0.051:
            bad.append("%s %s POLLED%% %s, want %.1f" % (how, who, polled, pp))
        secs = d("halt_exits") / hs if hs else 0
        want_cpu = 100.0 * (d("halt_poll_success_ns") + d("halt_poll_fail_ns")) / (secs * 1e9) if secs else -1
        want_w = 100.0 * d("halt_poll_fail_ns") / (secs * 1e9) if secs else -1
        if abs(cpu - want_cpu) > 0.01 * want_cpu + 0.006 or abs(wasted - want_w) > 0.01 * want_w + 0.006:
            bad.append("%s %s POLLCPU%% %s WASTED%% %s, want %.2f %.2f (%.3f s)" % (how, who, cpu, wasted, want_cpu, want_w, secs))
        # the first interval: the totals of A, no rates yet
        first = rows[1].get(who, [])
        if not first or int(float(first[-1])) != sum(a[c]["halt_exits"] for c in cpus):
            bad.append("%s %s first interval %s" % (how, who, first))
check(rows_text(sys.argv[3]), "text")
check(rows_json(sys.argv[4]), "json")
print("differ: %s" % bad[:4] if bad else "ok VM and %d vCPUs, text and JSON" % len(b))
PY
)
case "$res" in
ok*) echo "ok halt_stats_top_equal_oracle (${res#ok })" ;;
*) echo "not ok halt_stats_top_equal_oracle: status $rc, $res $(head -1 "$dir/top.err")" ;;
esac
