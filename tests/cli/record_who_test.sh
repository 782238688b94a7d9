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
# A third one is first seen as an exec leaves a QEMU for a moment: its comm
# already "qemu-system-x86", no -name on its command line yet (an exec
# sets the comm before the command line); then its command line says
# "-name guest=whovm2" (written over its last argument in place): record
# must read the -name again.  Before, it kept the comm for the name, and
# the nested lab's QEMU was now and then named so.
#
# record leaves tracefs's global options/record-tgid as it found it, also
# when it is killed by SIGKILL (it takes the map from /proc, not from
# saved_tgids): off before, off while it runs and after the kill.  Another
# kvmscope of an older build tracing at the same time may turn it on: the
# check is made only when no kvmscope-PID-... instance of another binary
# lived meanwhile (tried up to 10 times).  What an earlier version of
# record left (the option on, and /run/kvmscope-record-tgid saying that a
# record turned it on) is put back by the next record.
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
cat > "$dir/x.py" <<'PY'
import ctypes, json, os, sys, threading, time
libc = ctypes.CDLL(None)
def set_name(n):
    buf = ctypes.create_string_buffer(n)
    libc.prctl(15, ctypes.addressof(buf), 0, 0, 0)  # PR_SET_NAME
set_name(b"qemu-system-x86")
tids = []
def work():
    set_name(b"whothread")
    tids.append(threading.get_native_id())
    end = time.time() + 4
    while time.time() < end:
        time.sleep(0.002)
ts = [threading.Thread(target=work) for _ in range(2)]
for t in ts: t.start()
time.sleep(1.5)  # seen (a poll each second) with no -name
# the command line's last argument (a placeholder) overwritten in place:
# /proc/PID/cmdline reads this very memory
stat = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
start = int(stat[45])  # arg_start (field 48 of proc(5))
line = open("/proc/self/cmdline", "rb").read()
at = line.index(sys.argv[1].encode())
new = b"-name\0guest=whovm2"
ctypes.memmove(start + at, new + b"\0" * (len(sys.argv[1]) - len(new)), len(sys.argv[1]))
for t in ts: t.join()
print(json.dumps({"pid": os.getpid(), "tids": tids}))
PY
# other_kvmscope PID [any]: whether a kvmscope-PID-... instance of a live
# process other than PID exists, not of this very binary (the tests beside
# this one run it: it leaves the option alone) unless "any"
self=$(readlink -f "$ks")
other_kvmscope() {
	local d p
	for d in "$T"/instances/kvmscope-*; do
		[ -e "$d" ] || continue
		p=${d##*/kvmscope-}
		p=${p%%-*}
		[ "$p" != "$1" ] && kill -0 "$p" 2>/dev/null &&
			{ [ "${2:-}" = any ] || [ "$(readlink "/proc/$p/exe" 2>/dev/null)" != "$self" ]; } &&
			return 0
	done
	return 1
}
# the machine as it was, at the end: the option and the marker
opt=$(cat "$T/options/record-tgid")
[ -e /run/kvmscope-record-tgid ] && mark0=1 || mark0=0
restore() {
	echo "$opt" > "$T/options/record-tgid"
	if [ $mark0 = 1 ]; then : > /run/kvmscope-record-tgid; else rm -f /run/kvmscope-record-tgid; fi
}
trap restore EXIT
res="" tries=0
while [ -z "$res" ] && [ $tries -lt 10 ]; do
	tries=$((tries + 1))
	if other_kvmscope none; then sleep 1; continue; fi
	echo 0 > "$T/options/record-tgid"
	"$ks" record -q -e sched:sched_switch -o "$dir/killed.dat" -d 30 2> "$dir/killed.err" &
	rp=$!
	for i in $(seq 100); do
		compgen -G "$T/instances/kvmscope-$rp-*" > /dev/null && break
		kill -0 $rp 2>/dev/null || break
		sleep 0.05
	done
	# a poll of who is who (each second); another kvmscope seen meanwhile
	# makes this try void
	other=0
	for i in $(seq 15); do
		sleep 0.1
		other_kvmscope $rp && other=1
	done
	during=$(cat "$T/options/record-tgid")
	kill -9 $rp
	wait $rp 2>/dev/null
	after=$(cat "$T/options/record-tgid")
	# the killed run's instance (the next run would take it for stale)
	rmdir "$T/instances/kvmscope-$rp"-* 2>/dev/null
	other_kvmscope $rp && other=1
	[ $other = 1 ] && continue
	if [ "$during" = 0 ] && [ "$after" = 0 ]; then
		res="ok"
	else
		res="record-tgid was 0, $during while record ran, $after after its SIGKILL"
	fi
done
# what an earlier version left on (record-tgid and its marker in /run):
# put back by the next record, when no other kvmscope traces (record
# cannot tell which version another one is)
res2="" tries=0
while [ -z "$res2" ] && [ $tries -lt 10 ]; do
	tries=$((tries + 1))
	if other_kvmscope none any; then sleep 1; continue; fi
	echo 1 > "$T/options/record-tgid"
	: > /run/kvmscope-record-tgid
	"$ks" record -q -e sched:sched_switch -o "$dir/leftover.dat" -d 0.5 2> "$dir/leftover.err"
	rc=$?
	now=$(cat "$T/options/record-tgid")
	[ -e /run/kvmscope-record-tgid ] && mark=left || mark=removed
	other_kvmscope none any && continue
	if [ $rc = 0 ] && [ "$now" = 0 ] && [ $mark = removed ]; then
		res2=ok
	else
		res2="status $rc, record-tgid $now, marker $mark: $(head -1 "$dir/leftover.err")"
	fi
done
restore
case $res2 in
ok) echo "ok record_who_old_leftover_put_back" ;;
"") echo "skip record_who_old_leftover_put_back: another kvmscope traced all the time" ;;
*) echo "not ok record_who_old_leftover_put_back: $res2" ;;
esac
case $res in
ok) echo "ok record_who_sigkill_leaves_record_tgid" ;;
"") echo "skip record_who_sigkill_leaves_record_tgid: another kvmscope traced all the time" ;;
*) echo "not ok record_who_sigkill_leaves_record_tgid: $res" ;;
esac

before=$(cat "$T/options/record-tgid")
"$ks" record -q -e sched:sched_switch -o "$dir/who.dat" -- bash -c \
	"python3 $dir/w.py whoproc > $dir/a.json & python3 $dir/w.py whoqemu -name guest=whovm,debug-threads=on > $dir/b.json & python3 $dir/x.py ____________________________ > $dir/c.json & wait" \
	2> "$dir/rec.err" || { echo "not ok record_who: record failed: $(tail -2 "$dir/rec.err")"; exit 0; }
after=$(cat "$T/options/record-tgid")
echo "# record-tgid was $before, is $after"

"$ks" top -i "$dir/who.dat" --fast -t --json > "$dir/top.json" 2> "$dir/top.err"
python3 - "$dir/top.json" "$dir/a.json" "$dir/b.json" "$dir/c.json" <<'PY'
import json, sys
vms = {}
for line in open(sys.argv[1]):
    for r in json.loads(line)["rows"]:
        if r["depth"] == 0:
            vms[r["vm"]] = r["vm_name"]
for path, want in ((sys.argv[2], "whoproc"), (sys.argv[3], "whovm"), (sys.argv[4], "whovm2")):
    w = json.load(open(path))
    strays = [t for t in w["tids"] if t in vms]
    if w["pid"] not in vms or vms[w["pid"]] != want or strays:
        print("not ok record_who-%s: process %d named %r (want %r); threads shown as "
              "their own VMs: %s" % (want, w["pid"], vms.get(w["pid"]), want, strays))
    else:
        print("ok record_who-%s: threads %s under process %d named %s" % (
            want, w["tids"], w["pid"], want))
PY
