#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# record_who_test.sh - kvmscope record keeps who is who: the thread ->
# process map (tracefs's record-tgid) and each process's name, QEMU's -name
# for a process started with one, so that a replay of the recording groups
# every thread under its process and names it as top does live.
#
# Oracle: the workload's own pids and thread ids (os.getpid(),
# threading.get_native_id()), and the names it gave itself.  Two processes
# of three threads each, every thread renamed (as QEMU's vCPU threads all
# share one name without debug-threads, these share "whothread"); one has
# "-name guest=whovm,debug-threads=on" on its command line; the first one
# renames itself after it started (record must name it by its latest name).
# Skips when tracefs is not writable (not root).
set -u
ks=$KVMSCOPE
dir=$KS_TMP/record-who
mkdir -p "$dir"
T=/sys/kernel/tracing
[ -w "$T/instances" ] || mount -t tracefs nodev "$T" 2>/dev/null
if [ ! -w "$T/instances" ] || [ ! -f "$T/options/record-tgid" ]; then
	echo "skip record_who: tracefs (with options/record-tgid) is not writable at $T (needs root)"
	exit 0
fi

cat > "$dir/w.py" <<'PY'
import ctypes, json, os, sys, threading, time
libc = ctypes.CDLL(None)
time.sleep(1.2)  # seen first as python3
libc.prctl(15, sys.argv[1].encode(), 0, 0, 0)  # PR_SET_NAME: the process
tids = []
def work():
    libc.prctl(15, b"whothread", 0, 0, 0)
    tids.append(threading.get_native_id())
    for _ in range(1000):
        time.sleep(0.002)
ts = [threading.Thread(target=work) for _ in range(3)]
for t in ts: t.start()
for t in ts: t.join()
print(json.dumps({"pid": os.getpid(), "comm": sys.argv[1], "tids": tids}))
PY
before=$(cat "$T/options/record-tgid")
"$ks" record -q -e sched:sched_switch -o "$dir/who.dat" -- bash -c \
	"python3 $dir/w.py whoproc > $dir/a.json & python3 $dir/w.py whoqemu -name guest=whovm,debug-threads=on > $dir/b.json & wait" \
	2> "$dir/rec.err" || { echo "not ok record_who: record failed: $(tail -2 "$dir/rec.err")"; exit 0; }
after=$(cat "$T/options/record-tgid")
# informational: another kvmscope tracing at the same time (make check runs
# record_test.sh beside this) makes record leave the option on
echo "# record-tgid was $before, is $after"
# the machine as it was, once no kvmscope traces any more
if [ "$before" = 0 ] && [ "$after" = 1 ]; then
	for i in $(seq 1 20); do
		busy=0
		for d in "$T"/instances/kvmscope-*; do
			[ -e "$d" ] && kill -0 "${d##*-}" 2>/dev/null && busy=1
		done
		[ $busy = 0 ] && { echo 0 > "$T/options/record-tgid"; break; }
		sleep 0.5
	done
fi

"$ks" top -i "$dir/who.dat" --fast -t --json > "$dir/top.json" 2> "$dir/top.err"
python3 - "$dir/top.json" "$dir/a.json" "$dir/b.json" <<'PY'
import json, sys
vms = {}
for line in open(sys.argv[1]):
    for r in json.loads(line)["rows"]:
        if r["depth"] == 0:
            vms[r["vm"]] = r["vm_name"]
for path, want in ((sys.argv[2], "whoproc"), (sys.argv[3], "whovm")):
    w = json.load(open(path))
    strays = [t for t in w["tids"] if t in vms]
    if w["pid"] not in vms or vms[w["pid"]] != want or strays:
        print("not ok record_who-%s: process %d named %r (want %r); threads shown as "
              "their own VMs: %s" % (want, w["pid"], vms.get(w["pid"]), want, strays))
    else:
        print("ok record_who-%s: threads %s under process %d named %s" % (
            want, w["tids"], w["pid"], want))
PY
