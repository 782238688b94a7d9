#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# kvmstats_dedup_test.sh - one VM read twice, through its own QMP socket and
# through libvirt, is shown once by top (kvmstats and halt views) and served
# once by the exporter, from its QMP socket (which gives the histograms that
# libvirt does not pass).
#
# The test runs its own libvirtd in a private mount namespace, as
# libvirt_test.sh does (see there why and how), with a transient domain
# (-accel kvm, 2 vCPUs, no disk) whose QEMU also gets a QMP socket of the
# test's (<qemu:commandline> -qmp unix:PATH).  The domain runs for two seconds,
# then is paused.
# Oracles: libvirt's own list of the domain and its QEMU's pid (libvirt's pid
# file); the QMP socket's own query-stats (read here) for the values served:
#  - top --kvmstats --libvirt --qmp SOCKET -v: one VM line, the QEMU's pid,
#    its statistics from QMP (source "qmp", the *_hist statistics present);
#  - top --halt --libvirt --qmp SOCKET: one VM line;
#  - exporter --libvirt --qmp SOCKET: kvm_stat_exits_total once per vCPU
#    (not twice), kvmscope_halt_poll_duration_seconds present (QMP's);
#  - exporter --libvirt alone: the halt polling counters (kvmscope_halt_*
#    but the histograms, which libvirt does not pass) equal those of the
#    QMP socket's query-stats (tests/cli/halt_oracle.py), read before and
#    after (the paused domain's statistics do not move).
# Skips with one line where /dev/kvm, libvirtd or root is missing.
set -u
ks=$KVMSCOPE
export LIBVIRT_DEFAULT_URI=qemu:///system # virsh's
dir=$KS_TMP/kvmstats-dedup
dom=kstest-dedup

have() { command -v "$1" >/dev/null 2>&1; }
if [ -z "${KS_DEDUP_NS:-}" ]; then
	if [ ! -c /dev/kvm ] || [ ! -w /dev/kvm ]; then
		echo "skip kvmstats_dedup: /dev/kvm is absent or not usable"; exit 0
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "skip kvmstats_dedup: needs root (its own libvirtd in a private mount namespace)"; exit 0
	fi
	for t in libvirtd virsh qemu-system-x86_64 python3 curl unshare; do
		have "$t" || { echo "skip kvmstats_dedup: $t is not installed"; exit 0; }
	done
	if ! err=$(unshare --mount --propagation private true 2>&1); then
		echo "skip kvmstats_dedup: no mount namespace: $err"; exit 0
	fi
	exec unshare --mount --propagation private env KS_DEDUP_NS=1 bash "$0" "$@"
fi

mkdir -p "$dir"
root=$dir/root
rm -rf "$root"
mkdir -p "$root/etc" "$root/lib" "$root/cache" "$root/log"
cp -a /etc/libvirt/. "$root/etc/"
rm -f "$root"/etc/qemu/networks/autostart/*
cat > "$root/etc/qemu.conf" <<'EOF'
user = "root"
group = "root"
security_driver = "none"
namespaces = [ ]
cgroup_controllers = [ ]
stdio_handler = "file"
remember_owner = 0
EOF
if ! { mount --bind "$root/etc" /etc/libvirt && mount --bind "$root/lib" /var/lib/libvirt &&
       mount --bind "$root/cache" /var/cache/libvirt && mount --bind "$root/log" /var/log/libvirt &&
       mount -t tmpfs -o mode=755 tmpfs /run && mkdir -p /run/libvirt; } 2>"$dir/mount.err"; then
	echo "not ok kvmstats_dedup_setup: private libvirt directories: $(head -1 "$dir/mount.err")"
	exit 0
fi
[ -d /sys/kernel/debug/kvm ] && mount -t tmpfs tmpfs /sys/kernel/debug

lvpid="" qpid="" epid=""
cleanup() {
	[ -n "$epid" ] && { kill "$epid" 2>/dev/null; wait "$epid" 2>/dev/null; }
	virsh -q destroy "$dom" >/dev/null 2>&1
	if [ -n "$qpid" ] && grep -qa -- "guest=$dom" "/proc/$qpid/cmdline" 2>/dev/null; then
		kill "$qpid"
	fi
	if [ -n "$lvpid" ]; then
		kill "$lvpid" 2>/dev/null
		wait "$lvpid" 2>/dev/null
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

libvirtd --pid-file "$dir/libvirtd.pid" > "$dir/libvirtd.log" 2>&1 &
lvpid=$!
for i in $(seq 150); do
	[ -S /run/libvirt/libvirt-sock ] && [ -S /run/libvirt/libvirt-sock-ro ] && break
	kill -0 "$lvpid" 2>/dev/null || break
	sleep 0.1
done
if [ ! -S /run/libvirt/libvirt-sock-ro ]; then
	echo "not ok kvmstats_dedup_daemon: libvirtd did not start: $(grep -m1 -i error "$dir/libvirtd.log")"
	exit 0
fi
sock=$dir/qmp.sock
cat > "$dir/dom.xml" <<EOF
<domain type='kvm' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>
  <name>$dom</name>
  <memory unit='MiB'>64</memory>
  <vcpu>2</vcpu>
  <os><type arch='x86_64'>hvm</type></os>
  <devices><emulator>$(command -v qemu-system-x86_64)</emulator></devices>
  <qemu:commandline>
    <qemu:arg value='-qmp'/>
    <qemu:arg value='unix:$sock,server=on,wait=off'/>
  </qemu:commandline>
</domain>
EOF
if ! virsh -q create "$dir/dom.xml" > "$dir/create.log" 2>&1; then
	echo "not ok kvmstats_dedup_domain: virsh create failed: $(grep -v '^$' "$dir/create.log" | head -2 | tr '\n' ' ')"
	exit 0
fi
qpid=$(cat "/run/libvirt/qemu/$dom.pid" 2>/dev/null)
for i in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
sleep 2 # SeaBIOS starts halting
virsh -q suspend "$dom" > /dev/null
if [ ! -S "$sock" ] || [ -z "$qpid" ]; then
	echo "not ok kvmstats_dedup_domain: no QMP socket $sock or pid ($qpid)"
	exit 0
fi

# vm_lines FILE: the VM lines (depth 0) of a batch table
vm_lines() { grep -v '^kvmscope top\|^VM /\|^ \|^$' "$1"; }

"$ks" top --kvmstats --libvirt --qmp "$sock" -b -n 1 -v > "$dir/top.txt" 2>"$dir/top.err"
rc=$?
vms=$(vm_lines "$dir/top.txt")
if [ $rc = 0 ] && [ "$(echo "$vms" | wc -l)" = 1 ] && echo "$vms" | grep -q "^$qpid(" &&
   echo "$vms" | grep -q ' qmp *$' && grep -q '^  halt_poll_success_hist ' "$dir/top.txt"; then
	echo "ok kvmstats_dedup_top_once (the domain once, from QMP: $(echo "$vms" | awk '{ print $1, $2 }'))"
else
	echo "not ok kvmstats_dedup_top_once: status $rc, VM lines: $(echo "$vms" | tr '\n' '|') $(head -1 "$dir/top.err")"
fi
"$ks" top --halt --libvirt --qmp "$sock" -b -n 1 > "$dir/halt.txt" 2>"$dir/halt.err"
rc=$?
vms=$(vm_lines "$dir/halt.txt")
if [ $rc = 0 ] && [ "$(echo "$vms" | wc -l)" = 1 ] && echo "$vms" | grep -q "^$qpid("; then
	echo "ok kvmstats_dedup_halt_once"
else
	echo "not ok kvmstats_dedup_halt_once: status $rc, VM lines: $(echo "$vms" | tr '\n' '|') $(head -1 "$dir/halt.err")"
fi

printf '# tracer: nop\n#\n qemu-system-x86-1234  [000] d..2.   100.000001: kvm_exit: vcpu 0 reason HLT rip 0xffffffff81000000 info1 0x0 info2 0x0 intr_info 0x0 error_code 0x0\n qemu-system-x86-1234  [000] d..2.   100.000002: kvm_entry: vcpu 0, rip 0xffffffff81000000\n' > "$dir/exits.txt"
"$ks" exporter --listen 127.0.0.1:0 -i "$dir/exits.txt" --speed max --libvirt --qmp "$sock" 2>"$dir/exp.err" &
epid=$!
port=
for i in $(seq 100); do
	port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\)\/metrics/\1/p' "$dir/exp.err")
	[ -n "$port" ] && break
	sleep 0.1
done
curl -sf "http://127.0.0.1:$port/metrics" -o "$dir/exp.prom"
kill "$epid"; wait "$epid" 2>/dev/null; epid=
n0=$(grep -c "^kvm_stat_exits_total{domain=\"$dom\",vcpu=\"0\"}" "$dir/exp.prom")
n1=$(grep -c "^kvm_stat_exits_total{domain=\"$dom\",vcpu=\"1\"}" "$dir/exp.prom")
if [ "$n0" = 1 ] && [ "$n1" = 1 ] && grep -q '^kvmscope_libvirt_up{uri="qemu:///system"} 1$' "$dir/exp.prom" &&
   grep -q "^kvmscope_qmp_up{socket=\"$sock\",domain=\"$dom\"} 1$" "$dir/exp.prom" &&
   grep -q "^kvmscope_halt_poll_duration_seconds_count{domain=\"$dom\",result=\"success\"} " "$dir/exp.prom"; then
	echo "ok kvmstats_dedup_exporter_once"
else
	echo "not ok kvmstats_dedup_exporter_once: exits of vCPU 0 served $n0 times, vCPU 1 $n1 times; $(grep '_up{' "$dir/exp.prom" | tr '\n' '|') $(head -1 "$dir/exp.err")"
fi

# ---- libvirt alone: the halt counters equal QMP's
here=$(cd "$(dirname "$0")" && pwd)
PYTHONPATH=$here python3 -c 'import json, sys, halt_oracle; json.dump(halt_oracle.record(sys.argv[1]), open(sys.argv[2], "w"))' \
	"$sock" "$dir/before.json" 2>"$dir/qmp.err"
"$ks" exporter --listen 127.0.0.1:0 -i "$dir/exits.txt" --speed max --libvirt 2>"$dir/explv.err" &
epid=$!
port=
for i in $(seq 100); do
	port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\)\/metrics/\1/p' "$dir/explv.err")
	[ -n "$port" ] && break
	sleep 0.1
done
curl -sf "http://127.0.0.1:$port/metrics" -o "$dir/explv.prom"
kill "$epid"; wait "$epid" 2>/dev/null; epid=
PYTHONPATH=$here python3 -c 'import json, sys, halt_oracle; json.dump(halt_oracle.record(sys.argv[1]), open(sys.argv[2], "w"))' \
	"$sock" "$dir/after.json" 2>>"$dir/qmp.err"
res=$(PYTHONPATH=$here python3 - "$dir/before.json" "$dir/after.json" "$dir/explv.prom" "$dom" <<'PY'
import json, sys
import halt_oracle
before, after = (json.load(open(f)) for f in sys.argv[1:3])
want = {k: v for k, v in halt_oracle.metrics(before, sys.argv[4]).items() if k[0].endswith("_total")}
if want != {k: v for k, v in halt_oracle.metrics(after, sys.argv[4]).items() if k[0].endswith("_total")}:
    print("the paused domain's statistics moved"); sys.exit()
diff = halt_oracle.compare(want, halt_oracle.parse_scrape(open(sys.argv[3]).read()))
nz = sum(1 for v in want.values() if v)
print("%d of %d differ (%d non-zero): %s" % (len(diff), len(want), nz, diff[:3]) if diff or nz < 3 else
      "ok %d samples (%d non-zero) equal QMP's" % (len(want), nz))
PY
)
case "$res" in
ok*) echo "ok kvmstats_libvirt_halt_equal_qmp (${res#ok })" ;;
*) echo "not ok kvmstats_libvirt_halt_equal_qmp: $res $(head -1 "$dir/qmp.err") $(head -1 "$dir/explv.err")" ;;
esac
