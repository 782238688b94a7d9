#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# libvirt_test.sh - the KVM statistics of a libvirt domain, read through
# libvirt, in kvmscope top (--libvirt, and without it when libvirt's socket
# exists) and in the exporter's /metrics (--libvirt, and live without it).
#
# The test runs its own libvirtd (Debian's libvirt-daemon-system) in a
# private mount namespace: its configuration, state and sockets are bind
# mounted over /etc/libvirt, /var/lib/libvirt, /var/cache/libvirt,
# /var/log/libvirt and a private /run, so that nothing of the host's is
# used or changed, and a host's own libvirtd is neither seen nor disturbed.
# Its qemu.conf runs QEMU as root (/dev/kvm may be root's alone) without
# confinement, namespaces or cgroups of libvirt's (a container grants
# none), QEMU's output going to a file (no virtlogd).  A transient domain
# (virsh create: -accel kvm, 2 vCPUs, 64 MB, no disk and no kernel: the
# firmware runs) runs for a second, then is paused (virsh suspend).
#
# Oracle: libvirt's own passthrough to the domain's monitor, `virsh
# qemu-monitor-command DOMAIN` with query-stats (targets vm and vcpu),
# query-stats-schemas (types, units) and query-cpus-fast (the vCPU
# numbers), read before and after each kvmscope reading: every statistic
# equal in both reads must be what kvmscope shows, on the domain's line
# (QEMU's pid from libvirt's pid file, and the domain name), and what the
# exporter serves (the metric name from the schema: _total for counters,
# *_ns as *_seconds in seconds; labels domain and vcpu).  libvirt passes
# no histograms: the *_hist statistics are the only ones allowed missing.
# Errors: a libvirt that is not there, and a libvirt.so.0 that cannot be
# loaded, are one line on stderr and status 1 for top --libvirt and
# exporter --libvirt.
# Skips with one line where /dev/kvm is absent or not usable, or without
# root (a mount namespace, libvirtd's own directories).
set -u
ks=$KVMSCOPE
export LIBVIRT_DEFAULT_URI=qemu:///system # virsh's
dir=$KS_TMP/libvirt
dom=kstest-virt

have() { command -v "$1" >/dev/null 2>&1; }
if [ -z "${KS_LIBVIRT_NS:-}" ]; then
	if [ ! -c /dev/kvm ] || [ ! -w /dev/kvm ]; then
		echo "skip libvirt: /dev/kvm is absent or not usable"
		exit 0
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "skip libvirt: needs root (its own libvirtd in a private mount namespace)"
		exit 0
	fi
	for t in libvirtd virsh qemu-system-x86_64 python3 curl unshare; do
		if ! have "$t"; then
			echo "not ok libvirt_setup: $t is not installed (scripts/install-deps.sh installs it)"
			exit 0
		fi
	done
	# the rest runs in a mount namespace of its own
	if ! err=$(unshare --mount --propagation private true 2>&1); then
		echo "not ok libvirt_setup: no mount namespace: $err"
		exit 0
	fi
	exec unshare --mount --propagation private env KS_LIBVIRT_NS=1 bash "$0" "$@"
fi

mkdir -p "$dir"
root=$dir/root
rm -rf "$root"
mkdir -p "$root/etc" "$root/lib" "$root/cache" "$root/log"
cp -a /etc/libvirt/. "$root/etc/"
rm -f "$root"/etc/qemu/networks/autostart/* # no default network (dnsmasq, iptables)
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
	echo "not ok libvirt_setup: private libvirt directories: $(head -1 "$dir/mount.err")"
	exit 0
fi
# without --libvirt, top reads debugfs first when it is readable: hide it
[ -d /sys/kernel/debug/kvm ] && mount -t tmpfs tmpfs /sys/kernel/debug

lvpid="" qpid="" epids=()
cleanup() {
	local p
	for p in "${epids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	virsh -q destroy "$dom" >/dev/null 2>&1
	# a QEMU that libvirtd left behind (libvirtd gone first)
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
	echo "not ok libvirt_daemon: libvirtd did not start: $(grep -m1 -i error "$dir/libvirtd.log")"
	exit 0
fi
cat > "$dir/dom.xml" <<EOF
<domain type='kvm'>
  <name>$dom</name>
  <memory unit='MiB'>64</memory>
  <vcpu>2</vcpu>
  <os><type arch='x86_64'>hvm</type></os>
  <devices><emulator>$(command -v qemu-system-x86_64)</emulator></devices>
</domain>
EOF
if ! virsh -q create "$dir/dom.xml" > "$dir/create.log" 2>&1; then
	echo "not ok libvirt_domain: virsh create failed: $(grep -v '^$' "$dir/create.log" | head -2 | tr '\n' ' ')"
	exit 0
fi
qpid=$(cat "/run/libvirt/qemu/$dom.pid" 2>/dev/null)
echo "ok libvirt_domain (libvirt $(virsh -v), QEMU pid $qpid)"
sleep 1 # some statistics become non-zero
virsh -q suspend "$dom" > /dev/null

# oracle FILE: the domain's statistics through libvirt's monitor passthrough,
# {"NAME VCPU": [value, type, unit]} (VCPU -1: the VM's)
oracle() {
	PYTHONPATH="$(dirname "$0")" python3 - "$dom" > "$1" <<'PY'
import json, subprocess, sys
import qmp_stats
def mon(cmd, args=None):
    c = {"execute": cmd}
    if args: c["arguments"] = args
    out = subprocess.run(["virsh", "qemu-monitor-command", sys.argv[1], json.dumps(c)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["return"]
schema = {}
for s in mon("query-stats-schemas"):
    for st in s["stats"]:
        schema[(s["target"], st["name"])] = (st.get("type", "cumulative"), st.get("unit", ""))
out = {}
for key, (v, target) in qmp_stats.stats(mon).items():
    out[key] = [v] + list(schema.get((target, key.rsplit(" ", 1)[0]), ("", "")))
print(json.dumps(out))
PY
}

# check_top OUT: the domain's statistics that top printed (-b -v) against
# the oracle read before and after; prints "ok N values..." or the problem
check_top() {
	python3 - "$dir/before.json" "$dir/after.json" "$1" "$qpid($dom)" <<'PY'
import json, sys
before, after = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
want_vm = sys.argv[4]
shown, vm, name, source = {}, None, None, None
for line in open(sys.argv[3]):
    if not line.strip() or line.startswith("kvmscope top") or line.startswith("VM /"):
        continue
    depth = (len(line) - len(line.lstrip(" "))) // 2
    f = line.split()
    if depth == 0:
        vm = f[0]
        if vm == want_vm: source = f[1] if len(f) > 1 else ""
    elif vm != want_vm:
        continue
    elif depth == 1:
        name = f[0]
        shown["%s -1" % name] = f[1] if len(f) > 1 else line.strip()
    elif depth == 2 and f[0] == "vcpu":
        shown["%s %s" % (name, f[1])] = f[2]
if source is None:
    print("no line of VM %s" % want_vm); sys.exit()
stable = [k for k in before if before[k] == after.get(k)]
checked, bad = 0, []
for k in stable:
    if k in shown:
        checked += 1
        if shown[k] != str(before[k][0]): bad.append("%s: %s, QEMU %s" % (k, shown[k], before[k][0]))
missing = [k for k in before if k not in shown and not k.split()[0].endswith("_hist")]
nonzero = sum(1 for k in stable if k in shown and str(before[k][0]) not in ("0", "false"))
vcpus = {k.split()[1] for k in shown}
if source != "libvirt" or bad or missing or checked < 40 or nonzero < 3 or vcpus != {"-1", "0", "1"}:
    print("source %s, checked %d, %d non-zero, vCPUs %s, differ: %s; missing: %s" %
          (source, checked, nonzero, sorted(vcpus), bad[:3], missing[:3]))
else:
    print("ok %d values (%d non-zero) equal QEMU's through libvirt" % (checked, nonzero))
PY
}

# check_prom FILE: the exporter's kvm_stat_* samples of the domain against
# the oracle (name, counter or gauge, value, labels)
check_prom() {
	python3 - "$dir/before.json" "$dir/after.json" "$1" "$dom" <<'PY'
import json, re, sys
before, after = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
dom = sys.argv[4]
got, types = {}, {}
for line in open(sys.argv[3]):
    m = re.match(r'# TYPE (kvm_stat_\w+) (\w+)$', line)
    if m: types[m.group(1)] = m.group(2)
    m = re.match(r'(kvm_stat_\w+)\{domain="([^"]*)"(?:,vcpu="(\d+)")?\} (\S+)$', line)
    if m and m.group(2) == dom:
        got[(m.group(1), m.group(3) or "-1")] = float(m.group(4))
checked, bad, missing = 0, [], []
for k, (v, typ, unit) in before.items():
    name, vcpu = k.split()
    if name.endswith("_hist"):
        continue
    base = name
    if unit == "seconds":
        base = re.sub(r'_(ns|us|ms)$', '', name) + "_seconds"
        v = v * 1e-9
    family = "kvm_stat_" + base
    sample = family + ("_total" if typ == "cumulative" else "")
    if (sample, vcpu) not in got:
        missing.append(k); continue
    # (text 0.0.4: a counter's TYPE line names the sample, with _total)
    if types.get(sample) != ("counter" if typ == "cumulative" else "gauge"):
        bad.append("%s: type %s" % (sample, types.get(sample)))
    if after.get(k) != before[k]:
        continue
    want = 1.0 if v == "true" else 0.0 if v == "false" else float(v)
    checked += 1
    if abs(got[(sample, vcpu)] - want) > 1e-9 * max(1.0, abs(want)):
        bad.append("%s{vcpu=%s}: %r, QEMU %r" % (sample, vcpu, got[(sample, vcpu)], want))
if bad or missing or checked < 40:
    print("checked %d, differ: %s; missing: %s" % (checked, bad[:3], missing[:3]))
else:
    print("ok %d samples equal QEMU's through libvirt" % checked)
PY
}

result() { # NAME RES [WHY]
	case $2 in
	ok*) echo "ok $1 (${2#ok })" ;;
	*) echo "not ok $1: $2 ${3:-}" ;;
	esac
}

# ---- top --libvirt, and top without it (libvirt's socket exists)
oracle "$dir/before.json"
"$ks" top --kvmstats --libvirt -b -n 1 -v > "$dir/top.txt" 2>"$dir/top.err"
rc=$?
"$ks" top --kvmstats -b -n 1 -v > "$dir/top-auto.txt" 2>"$dir/top-auto.err"
rc2=$?
oracle "$dir/after.json"
result libvirt_top_equal_qemu "$(check_top "$dir/top.txt")" "status $rc $(head -1 "$dir/top.err")"
result libvirt_top_auto_equal_qemu "$(check_top "$dir/top-auto.txt")" "status $rc2 $(head -1 "$dir/top-auto.err")"

# ---- exporter --libvirt (a replay, to be quick), and live without it
printf '# tracer: nop\n#\n qemu-system-x86-1234  [000] d..2.   100.000001: kvm_exit: vcpu 0 reason EXTERNAL_INTERRUPT rip 0xffffffff81000000 info1 0x0 info2 0x0 intr_info 0x800000f6 error_code 0x0\n qemu-system-x86-1234  [000] d..2.   100.000002: kvm_entry: vcpu 0, rip 0xffffffff81000000\n' > "$dir/exits.txt"
# exporter LOG PROM ARGS...: start it, scrape /metrics once into PROM
exporter() {
	local log=$1 prom=$2 port="" i
	shift 2
	"$ks" exporter --listen 127.0.0.1:0 "$@" 2>"$log" &
	epids+=($!)
	for i in $(seq 100); do
		port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\)\/metrics/\1/p' "$log")
		[ -n "$port" ] && break
		kill -0 "${epids[-1]}" 2>/dev/null || break
		sleep 0.1
	done
	[ -n "$port" ] && curl -sf "http://127.0.0.1:$port/metrics" -o "$prom"
	kill "${epids[-1]}" 2>/dev/null
	wait "${epids[-1]}" 2>/dev/null
}
oracle "$dir/before.json"
exporter "$dir/exp.err" "$dir/exp.prom" -i "$dir/exits.txt" --speed max --libvirt
oracle "$dir/after.json"
res=$(check_prom "$dir/exp.prom")
if ! grep -q '^kvmscope_libvirt_up{uri="qemu:///system"} 1$' "$dir/exp.prom" 2>/dev/null; then
	res="kvmscope_libvirt_up is not 1: $(grep kvmscope_libvirt_up "$dir/exp.prom" 2>/dev/null | tail -1)"
fi
result libvirt_exporter_equal_qemu "$res" "$(head -2 "$dir/exp.err" | tr '\n' ' ')"

T=/sys/kernel/tracing
[ -w "$T/instances" ] || mount -t tracefs nodev "$T" 2>/dev/null
if [ -w "$T/instances" ]; then
	oracle "$dir/before.json"
	exporter "$dir/exp-auto.err" "$dir/exp-auto.prom"
	oracle "$dir/after.json"
	res=$(check_prom "$dir/exp-auto.prom")
	grep -q "libvirt's socket exists: KVM statistics of its domains too" "$dir/exp-auto.err" ||
		res="no word on stderr that libvirt is read: $(head -2 "$dir/exp-auto.err" | tr '\n' ' ')"
	result libvirt_exporter_live_auto_equal_qemu "$res" "$(head -2 "$dir/exp-auto.err" | tr '\n' ' ')"
else
	echo "not ok libvirt_exporter_live_auto: tracefs is not writable at $T"
fi

# ---- errors: no libvirt there; libvirt.so.0 that cannot be loaded
nolv="qemu+unix:///system?socket=$dir/nonexistent.sock"
"$ks" top --libvirt="$nolv" -b -n 1 > /dev/null 2>"$dir/nolv.err"
rc=$?
if [ "$rc" = 1 ] && [ "$(wc -l < "$dir/nolv.err")" = 1 ] &&
   grep -q "^kvmscope: libvirt $nolv: .*nonexistent.sock" "$dir/nolv.err"; then
	echo "ok libvirt_top_unreachable_one_line"
else
	echo "not ok libvirt_top_unreachable_one_line: status $rc, $(head -3 "$dir/nolv.err" | tr '\n' '|')"
fi
so=$(ldconfig -p | awk -v n=libvirt.so.0 '$1 == n { print $NF; exit }')
if [ -n "$so" ] && [ -e "$so" ]; then
	# in a namespace of its own, libvirt.so.0 is an empty file
	unshare --mount --propagation private bash -c '
		mount --bind /dev/null "$1" || exit 9
		timeout 20 "$2" top --libvirt -b -n 1 > /dev/null 2> "$3/noso-top.err"
		echo $? > "$3/noso-top.rc"
		timeout 20 "$2" exporter --listen 127.0.0.1:0 -i "$3/exits.txt" --libvirt \
			> /dev/null 2> "$3/noso-exp.err"
		echo $? > "$3/noso-exp.rc"' _ "$so" "$ks" "$dir"
	bad=""
	for w in top exp; do
		if [ "$(cat "$dir/noso-$w.rc" 2>/dev/null)" != 1 ] || [ "$(wc -l < "$dir/noso-$w.err")" != 1 ] ||
		   ! grep -q '^kvmscope: libvirt cannot be loaded: .*libvirt.so.0.*apt-get install libvirt0' "$dir/noso-$w.err"; then
			bad="$bad $w: status $(cat "$dir/noso-$w.rc" 2>/dev/null), $(head -2 "$dir/noso-$w.err" | tr '\n' '|')"
		fi
	done
	[ -z "$bad" ] && echo "ok libvirt_not_loadable_one_line" ||
		echo "not ok libvirt_not_loadable_one_line:$bad"
else
	echo "not ok libvirt_not_loadable_one_line: ldconfig knows no libvirt.so.0"
fi
