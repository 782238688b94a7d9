#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# nested_guest.sh - what the nested lab's guest runs (tests/lab/nested.sh
# boots it, chrooted into this machine's root, in its writable out
# directory).  lab.env there sets KVMSCOPE, VMM, VMM_ARGS.
#
# A. One window, every tool at once over the same exits: kvmscope record,
# perf kvm stat record -a, kvmscope top --json, kvmscope exporter scraped
# by a real Prometheus, the library's BPF engine (tools/engine-hold); then
# minivmm runs; then each tool is stopped.  stat --live and an exporter of
# each live engine (bpf, tracefs) run over the same window too.
# B. Two QEMU -accel kvm (SeaBIOS, no disk), one with -name
# nestvm,debug-threads=on, one with -name plainvm only, under kvmscope
# record and top; each paused in turn while top --kvmstats --qmp, the
# exporter's --qmp and our own query-stats read KVM's statistics.
# The host side (nested_test.sh) compares.
set -u
. ./lab.env
log() { echo "# $(date +%T.%N | cut -c1-12) $*"; }
T=/sys/kernel/tracing

# wait_for COND SECS: poll a shell condition
wait_for() {
	local i
	for i in $(seq 1 $(($2 * 5))); do
		eval "$1" && return 0
		sleep 0.2
	done
	return 1
}

log "kernel $(uname -r), $(nproc) CPUs, kvm_amd $(cat /sys/module/kvm_amd/parameters/npt 2>/dev/null)"
ls "$T/instances" > instances.before
"$KVMSCOPE" record -o rec.dat 2> rec.err &
rpid=$!
perf kvm stat record -a -o perf.data > perf.out 2> perf.err &
ppid=$!
"$KVMSCOPE" top --batch --json -d 1 > top.json 2> top.err &
tpid=$!
"$KVMSCOPE" top --batch --csv -d 1 > top.csv 2> topcsv.err &
cpid=$!
"$KVMSCOPE" exporter --listen 127.0.0.1:9843 > expo.out 2> expo.err &
epid=$!
# the live engines (engine.h) over the same window: stat --live of each,
# and an exporter of the tracefs engine for the histograms (the exporter
# above is AUTO's: BPF where it loads, as its engine_info says)
for eng in bpf tracefs; do
	"$KVMSCOPE" stat --live --engine $eng --json --by vm,vcpu,reason > live-$eng.json 2> live-$eng.err &
	eval "slpid_$eng=\$!"
done
"$KVMSCOPE" exporter --engine tracefs --listen 127.0.0.1:9847 > /dev/null 2> expo-tracefs.err &
etpid=$!
# a second record of the cpuid exits only, into a 4 KB buffer per CPU,
# stopped (SIGSTOP) for 3 s while the VMM runs: it must lose events
"$KVMSCOPE" record -e kvm:kvm_exit -f 'exit_reason == 114' -b 4 -o lost.dat 2> lost.err &
lpid=$!
# the library's BPF engine, held until hold.stop exists (ENGINE_HOLD in lab.env)
if [ -n "${ENGINE_HOLD:-}" ]; then
	cp $T/events/kvm/kvm_exit/format kvm_exit.format
	{ until [ -e hold.stop ]; do sleep 0.2; done; } | "$ENGINE_HOLD" > hold.out 2> hold.err &
	hpid=$!
fi
mkdir -p /tmp/prom
cat > prom.yml <<'YML'
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: kvmscope
    static_configs:
      - targets: ['127.0.0.1:9843']
YML
prometheus --config.file=prom.yml --storage.tsdb.path=/tmp/prom \
	--web.listen-address=127.0.0.1:9090 > prom.log 2>&1 &
prpid=$!
# Prometheus answers and has scraped the exporter once
wait_for 'python3 "$LABCTL_DIR/nested_compare.py" promq "up" > prom.up 2>/dev/null && grep -q "\"1\"" prom.up' 90 ||
	log "prometheus is not scraping: $(tail -2 prom.log)"
# kvmscope's tracefs instance exists and perf wrote its header: both are
# recording (perf enables its events before it writes the header)
wait_for '[ "$(ls $T/instances | wc -l)" -gt "$(wc -l < instances.before)" ] && [ -s perf.data ]' 60 ||
	log "tools did not start: $(ls $T/instances) $(ls -l perf.data 2>&1)"
# the BPF engine has attached (or given up)
[ -n "${ENGINE_HOLD:-}" ] && { wait_for 'grep -q "^ready" hold.out || ! kill -0 $hpid 2>/dev/null' 60 ||
	log "the BPF engine did not attach: $(head -2 hold.err)"; }
# the two tops read their engine (BPF by default: loading its programs
# takes seconds under TCG, and no tracefs instance says it is done): each
# has printed an interval; the exporters answer with their engine
wait_for '[ -s top.csv ]' 20 || log "top did not start: $(head -2 topcsv.err)"
for port in 9843 9847; do
	wait_for "python3 -c 'import urllib.request,sys; sys.exit(b\"kvmscope_engine_info\" not in urllib.request.urlopen(\"http://127.0.0.1:$port/metrics\").read())' 2>/dev/null" 20 ||
		log "exporter $port has no engine: $(tail -1 expo.err)"
done
# stat --live says nothing until it ends: the same time as the others
sleep 5
log "tools started: $(ls $T/instances | tr '\n' ' ')"
# shellcheck disable=SC2086
"$VMM" $VMM_ARGS > vmm.json 2> vmm.err &
vpid=$!
sleep 1
kill -STOP "$lpid"
sleep 3
kill -CONT "$lpid"
wait "$vpid"
echo $? > vmm.rc
log "vmm done (exit $(cat vmm.rc))"
sleep 3
if [ -n "${ENGINE_HOLD:-}" ]; then
	touch hold.stop
	wait "$hpid"; echo $? > hold.rc
fi
# what tracefs says the small-buffer record's instance lost, per CPU
# (instances are named kvmscope-PID-STARTTIME-PIDNS: the one of this pid)
cat $T/instances/kvmscope-$lpid-*/per_cpu/cpu*/stats > lost.stats 2>&1
kill -INT "$lpid"
wait "$lpid"; echo $? > lost.rc
# what Prometheus holds after its last scrapes (the exporter started
# before the VMM: the counters' last values are the whole run)
python3 "$LABCTL_DIR/nested_compare.py" promq \
	'sum by (domain, reason) (last_over_time(kvmscope_exits_total[5m]))' > prom.exits 2> prom.err
python3 "$LABCTL_DIR/nested_compare.py" promq \
	'sum by (domain) (last_over_time(kvmscope_halt_exit_duration_seconds_count[5m]))' > prom.halts 2>> prom.err
curl -s http://127.0.0.1:9843/metrics > expo.metrics 2>/dev/null ||
	python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:9843/metrics").read().decode(), end="")' > expo.metrics
python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode(), end="")' \
	"http://127.0.0.1:9847/metrics" > expo-tracefs.metrics 2>> expo-tracefs.err
# shellcheck disable=SC2154
kill -INT "$slpid_bpf" "$slpid_tracefs" "$etpid"
wait "$slpid_bpf"; echo $? > live-bpf.rc
wait "$slpid_tracefs"; echo $? > live-tracefs.rc
wait "$etpid"; echo $? > expo-tracefs.rc
kill -INT "$tpid" "$cpid" "$ppid" "$rpid" "$epid"
kill "$prpid"
wait "$rpid"; echo $? > rec.rc
wait "$ppid"; echo $? > perf.rc
wait "$tpid"; echo $? > top.rc
wait "$cpid"; echo $? > topcsv.rc
wait "$epid"; echo $? > expo.rc
wait "$prpid"
log "tools stopped: record $(cat rec.rc), perf $(cat perf.rc), top $(cat top.rc), exporter $(cat expo.rc)"

# ---- B. QEMU -accel kvm
[ "${LAB_QEMU:-1}" = 1 ] || exit 0
qmp() { PYTHONPATH="$LABCTL_DIR/../cli" python3 "$LABCTL_DIR/nested_compare.py" qmp "$@"; }
"$KVMSCOPE" record -o qrec.dat 2> qrec.err &
qrpid=$!
"$KVMSCOPE" top --batch --json -d 1 > qtop.json 2> qtop.err &
qtpid=$!
wait_for '[ -s qtop.json ]' 60
for vm in nestvm plainvm; do
	name=$vm
	[ $vm = nestvm ] && name=nestvm,debug-threads=on
	qemu-system-x86_64 -accel kvm -cpu qemu64 -m 64 -smp 2 -display none -nodefaults \
		-name "$name" -qmp unix:/tmp/$vm.sock,server=on,wait=off -pidfile /tmp/$vm.pid \
		> $vm.qemu.log 2>&1 &
done
wait_for '[ -S /tmp/nestvm.sock ] && [ -S /tmp/plainvm.sock ] && [ -s /tmp/nestvm.pid ] && [ -s /tmp/plainvm.pid ]' 60
sleep 6
for vm in nestvm plainvm; do
	cp /tmp/$vm.pid $vm.pid
	qmp /tmp/$vm.sock stop stats > $vm.before 2> $vm.qmp.err
	"$KVMSCOPE" top --kvmstats --qmp /tmp/$vm.sock -b -n 1 -v > $vm.kvmstats 2> $vm.kvmstats.err
	"$KVMSCOPE" exporter --listen 127.0.0.1:9845 --qmp /tmp/$vm.sock > /dev/null 2> $vm.expo.err &
	qepid=$!
	wait_for 'python3 -c "import urllib.request; open(\"$vm.prom\", \"w\").write(urllib.request.urlopen(\"http://127.0.0.1:9845/metrics\").read().decode())" 2>/dev/null && grep -q "^kvm_stat_" $vm.prom' 30
	kill -INT $qepid; wait $qepid
	qmp /tmp/$vm.sock stats cont > $vm.after 2>> $vm.qmp.err
done
sleep 2
kill -INT "$qtpid" "$qrpid"
wait "$qrpid"; echo $? > qrec.rc
wait "$qtpid"; echo $? > qtop.rc
for vm in nestvm plainvm; do
	ls /proc/$(cat $vm.pid)/task > $vm.tids
	qmp /tmp/$vm.sock quit > /dev/null 2>&1
done
log "qemu phase done: record $(cat qrec.rc), top $(cat qtop.rc)"
ls -l
