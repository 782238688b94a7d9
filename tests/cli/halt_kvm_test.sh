#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# halt_kvm_test.sh - halt polling from this machine's real KVM: a QEMU
# -accel kvm guest with 2 vCPUs and no disk (SeaBIOS runs and halts) is
# let run, then stopped (QMP stop): its statistics are frozen while
# compared.
#
# Oracles: QEMU's query-stats, read here by our own QMP client before and
# after kvmscope's readings (the halt statistics must be equal in both:
# frozen), turned into the expected numbers by tests/cli/halt_oracle.py:
#  - the exporter (--qmp), scraped by a real Prometheus (Debian's, on
#    loopback): every kvmscope_halt_* series that Prometheus's query API
#    returns equals the oracle's, none missing or more (counters per vCPU,
#    histograms per VM, le as Prometheus keeps it compared as a number);
#    `promtool check metrics` passes the exporter's whole scrape;
#  - top --halt -v in batch mode: HALTS per VM and vCPU equal halt_exits.
# Skips with one line where /dev/kvm, QEMU or Prometheus is absent.
# timeout: 120
set -u
ks=$KVMSCOPE
here=$(cd "$(dirname "$0")" && pwd)
dir=$KS_TMP/halt-kvm
mkdir -p "$dir"
# wait_socket, start_prometheus, wait_metrics...
. "$here/../lib/peers.sh"
peers_start

have() { command -v "$1" >/dev/null 2>&1; }
if [ ! -c /dev/kvm ] || [ ! -w /dev/kvm ]; then
	echo "skip halt_kvm: /dev/kvm is absent"; exit 0
fi
for t in qemu-system-x86_64 python3 curl prometheus promtool; do
	have $t || { echo "skip halt_kvm: $t is not installed"; exit 0; }
done

# record SOCKET OUT [CMD]: our own QMP client runs CMD (stop), then writes
# the replies that halt_oracle.py reads
record() {
	PYTHONPATH=$here python3 - "$@" <<'PY'
import json, sys
import halt_oracle, qmp_stats
try:
    rec = halt_oracle.record(sys.argv[1], cmds=sys.argv[3:])
except qmp_stats.QmpError as e:
    sys.exit(str(e))
json.dump(rec, open(sys.argv[2], "w"))
PY
}

sock=$dir/qmp.sock
qemu-system-x86_64 -accel kvm -nodefaults -display none -m 64 -smp 2 -name guest=ks-halt \
	-qmp unix:$sock,server=on,wait=off 2>"$dir/qemu.err" &
qpid=$!
pids+=($qpid)
if ! wait_socket "$sock" "$qpid"; then
	echo "not ok halt_kvm_qemu: QEMU -accel kvm did not start: $(head -1 "$dir/qemu.err")"
	exit 0
fi
sleep 2 # SeaBIOS runs, then halts
if ! record "$sock" "$dir/before.json" stop 2>"$dir/qmp.err"; then
	echo "not ok halt_kvm_qmp: our QMP client failed: $(tail -1 "$dir/qmp.err")"
	exit 0
fi

eport=$(free_port)
start_prometheus "$dir" "$eport" 200ms
printf '    CPU 0/KVM-1000 [001] 1.000001: kvm_exit: reason HLT rip 0x1 info 0 0\n    CPU 0/KVM-1000 [001] 1.000002: kvm_entry: vcpu 0, rip 0x1\n' > "$dir/series.txt"
"$ks" exporter --listen "127.0.0.1:$eport" -i "$dir/series.txt" --speed max --qmp "$sock" \
	2>"$dir/exporter.err" &
epid=$!
pids+=($epid)
wait_metrics "$eport" "$dir/scrape.prom"
if promtool check metrics < "$dir/scrape.prom" > "$dir/promtool.out" 2>&1 && [ ! -s "$dir/promtool.out" ] &&
   grep -q '^kvmscope_halt_exits_total{' "$dir/scrape.prom"; then
	echo "ok halt_kvm_promtool_check_metrics ($(grep -c . "$dir/scrape.prom") lines)"
else
	echo "not ok halt_kvm_promtool_check_metrics: $(head -3 "$dir/promtool.out" | tr '\n' '|') $(head -1 "$dir/exporter.err")"
fi
res=$(PYTHONPATH=$here python3 - "$purl" "$dir/before.json" <<'PY'
import json, sys, time, urllib.parse, urllib.request
import halt_oracle
purl = sys.argv[1]
want = halt_oracle.metrics(json.load(open(sys.argv[2])), "ks-halt")
def query(expr):
    url = purl + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return json.load(r)["data"]["result"]
    except OSError:
        return []
deadline = time.time() + 60
while time.time() < deadline:
    if query('kvmscope_halt_exits_total{domain="ks-halt"}'):
        break
    time.sleep(0.2)
else:
    print("Prometheus never scraped kvmscope_halt_exits_total"); sys.exit()
got = {}
for r in query('{__name__=~"kvmscope_halt_.*",domain="ks-halt"}'):
    m = dict(r["metric"])
    name = m.pop("__name__")
    for k in ("instance", "job"):
        m.pop(k, None)
    got[(name, halt_oracle.norm_le(m.items()))] = float(r["value"][1])
diff = halt_oracle.compare(want, got)
nz = sum(1 for v in want.values() if v)
if diff:
    print("%d of %d differ: %s" % (len(diff), len(want), diff[:3]))
elif nz < 5:
    print("only %d non-zero samples of %d" % (nz, len(want)))
else:
    print("ok %d series (%d non-zero) equal QMP's query-stats" % (len(want), nz))
PY
)
kill "$epid" 2>/dev/null
wait "$epid" 2>/dev/null
"$ks" top --halt --qmp "$sock" -b -v -n 1 -d 0.2 > "$dir/top.txt" 2>"$dir/top.err"
rc=$?
record "$sock" "$dir/after.json" 2>>"$dir/qmp.err"
frozen=$(PYTHONPATH=$here python3 - "$dir/before.json" "$dir/after.json" <<'PY'
import json, sys
import halt_oracle
b, a = (halt_oracle.per_vcpu(json.load(open(f))) for f in sys.argv[1:3])
moved = ["%s vcpu %d" % (k, c) for c in b for k in b[c] if k.startswith("halt") and b[c][k] != a.get(c, {}).get(k)]
print("moved: %s" % moved[:3] if moved else "frozen")
PY
)
case "$res $frozen" in
"ok "*" frozen") r=${res#ok }; echo "ok halt_kvm_prometheus_equal_qmp ($r)" ;;
*) echo "not ok halt_kvm_prometheus_equal_qmp: $res; $frozen $(head -1 "$dir/exporter.err")" ;;
esac
res=$(PYTHONPATH=$here python3 - "$dir/before.json" "$dir/top.txt" "$qpid" <<'PY'
import json, sys
import halt_oracle
b = halt_oracle.per_vcpu(json.load(open(sys.argv[1])))
shown, vm = {}, None
for line in open(sys.argv[2]):
    if not line.strip() or line.startswith("kvmscope top") or line.startswith("VM /"):
        continue
    f = line.split()
    if not line.startswith(" "):
        vm = f[0]
        shown["vm"] = f[-1]
    else:
        shown["vcpu " + f[1]] = f[-1]
want = {"vm": str(sum(s["halt_exits"] for s in b.values()))}
want.update({"vcpu %d" % c: str(s["halt_exits"]) for c, s in b.items()})
if vm != sys.argv[3] + "(ks-halt)" or shown != want:
    print("VM %s, shown %s, want %s" % (vm, shown, want))
else:
    print("ok HALTS of the VM and %d vCPUs (%s in all)" % (len(b), want["vm"]))
PY
)
case "$res $frozen" in
"ok "*" frozen") r=${res#ok }; echo "ok halt_kvm_top_equal_qmp ($r)" ;;
*) echo "not ok halt_kvm_top_equal_qmp: status $rc, $res; $frozen $(head -1 "$dir/top.err")" ;;
esac
