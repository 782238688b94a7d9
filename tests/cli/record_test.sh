#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# record_test.sh - kvmscope record on this machine's tracefs, checked by
# Debian's trace-cmd.
#
# There is no /dev/kvm here, so the recorder is tested with events that do
# fire (sched, timer, raw_syscalls).  Oracles:
#  - `trace-cmd report` on the file prints exactly what `kvmscope dump`
#    prints (same events, same counts, same fields), for v7 zstd and v6;
#  - the per-CPU event counts record prints equal trace-cmd report's lines;
#  - --pid: every event's common_pid is the traced pid; --filter: every
#    sched_switch has prev_pid 0; `-- CMD`: the command's exec is recorded;
#  - SIGTERM / SIGINT of a running record: the file is still complete
#    (trace-cmd reads it) and no tracefs instance is left behind.
# Skips when tracefs cannot be mounted (not root).
set -u
ks=$KVMSCOPE
dir=$KS_TMP/record
mkdir -p "$dir"
T=/sys/kernel/tracing

have() { command -v "$1" >/dev/null 2>&1; }

if [ ! -w "$T/instances" ]; then
	mount -t tracefs nodev "$T" 2>/dev/null
fi
if [ ! -w "$T/instances" ]; then
	echo "skip record_tracefs: tracefs is not mounted or not writable at $T (needs root)"
	exit 0
fi
if ! have trace-cmd; then
	echo "skip record_tracefs: trace-cmd is not installed (the oracle)"
	exit 0
fi

# 1. the file as trace-cmd sees it == kvmscope dump
for v in 7 6; do
	out=$dir/rec-v$v.dat
	if ! "$ks" record -e sched:sched_switch -e 'timer:hrtimer_*' -e sched:sched_wakeup \
		-d 1 --file-version $v -o "$out" 2>"$dir/err-v$v"; then
		echo "not ok record_v${v}_file: $(head -1 "$dir/err-v$v")"
		continue
	fi
	trace-cmd report "$out" 2>/dev/null > "$dir/tc-v$v.txt"
	"$ks" dump -i "$out" > "$dir/ks-v$v.txt" 2>&1
	n=$(grep -c ': ' "$dir/tc-v$v.txt")
	if [ "$n" -gt 10 ] && cmp -s "$dir/tc-v$v.txt" "$dir/ks-v$v.txt"; then
		echo "ok record_v${v}_trace_cmd_equals_dump ($n events)"
	else
		echo "not ok record_v${v}_trace_cmd_equals_dump: $n events, $(diff "$dir/tc-v$v.txt" "$dir/ks-v$v.txt" | grep -c '^[<>]') lines differ"
	fi
	# the counts record printed per CPU
	for cpu in $(seq 0 $(($(nproc) - 1))); do
		said=$(sed -n "s/.*CPU$cpu \([0-9]*\).*/\1/p" "$dir/err-v$v" | head -1)
		got=$(grep -c "\[00$cpu\]" "$dir/tc-v$v.txt")
		if [ "$said" = "$got" ]; then
			echo "ok record_v${v}_cpu${cpu}_count ($got)"
		else
			echo "not ok record_v${v}_cpu${cpu}_count: record said '$said', trace-cmd shows $got"
		fi
	done
	if grep -q "no events lost" "$dir/err-v$v"; then
		echo "ok record_v${v}_no_lost"
	else
		echo "not ok record_v${v}_no_lost: $(grep -i lost "$dir/err-v$v")"
	fi
done

# 2. --pid: only the traced task's events (sched_switch is traced when
# either side of the switch is in set_event_pid)
(while :; do sleep 0.02; done) &
loop=$!
"$ks" record -q -e sched:sched_switch --pid $loop -d 1 -o "$dir/pid.dat" 2>"$dir/err-pid"
trace-cmd report "$dir/pid.dat" 2>/dev/null | grep 'sched_switch:' > "$dir/pid.txt"
total=$(wc -l < "$dir/pid.txt")
others=$(grep -Evc -- ":$loop \[" "$dir/pid.txt")
if [ "$total" -gt 0 ] && [ "$others" -eq 0 ]; then
	echo "ok record_pid ($total events, all switching pid $loop)"
else
	echo "not ok record_pid: $total events, $others without pid $loop $(head -1 "$dir/err-pid")"
fi

# 3. --filter: the loop above blocks every 20 ms, so it switches out even on
# a machine without idle time (a filter on the idle task found nothing there)
"$ks" record -q -e sched:sched_switch --filter "prev_pid == $loop" -d 1 -o "$dir/filter.dat" \
	2>"$dir/err-f"
kill $loop; wait $loop 2>/dev/null
trace-cmd report "$dir/filter.dat" 2>/dev/null | grep 'sched_switch:' > "$dir/filter.txt"
total=$(wc -l < "$dir/filter.txt")
bad=$(grep -Evc "sched_switch: +[^ ]+:$loop " "$dir/filter.txt")
if [ "$total" -gt 0 ] && [ "$bad" -eq 0 ]; then
	echo "ok record_filter ($total events, all prev_pid $loop)"
else
	echo "not ok record_filter: $total events, $bad not matching $(head -1 "$dir/err-f")"
fi

# 4. -- CMD: records for the command's lifetime and returns its status
"$ks" record -q -e sched:sched_process_exec -o "$dir/cmd.dat" -- sh -c 'exec /bin/true' 2>"$dir/err-cmd"
rc=$?
if [ $rc -eq 0 ] && trace-cmd report "$dir/cmd.dat" 2>/dev/null | grep -q 'sched_process_exec:.*filename=/bin/true'; then
	echo "ok record_command"
else
	echo "not ok record_command: status $rc, $(head -1 "$dir/err-cmd")"
fi
"$ks" record -q -e sched:sched_process_exec -o "$dir/cmd2.dat" -- sh -c 'exit 3' 2>/dev/null
rc=$?
[ $rc -eq 3 ] && echo "ok record_command_status" || echo "not ok record_command_status: $rc, expected 3"

# 5. killed by SIGTERM / SIGINT: complete file, instance removed
for sig in TERM INT; do
	"$ks" record -q -e sched:sched_switch -o "$dir/sig-$sig.dat" 2>"$dir/err-$sig" &
	pid=$!
	sleep 1
	inst_during=$(ls "$T/instances" | grep -c "^kvmscope-$pid-[0-9]*-[0-9]*$")
	kill -$sig $pid
	wait $pid
	rc=$?
	n=$(trace-cmd report "$dir/sig-$sig.dat" 2>/dev/null | grep -c 'sched_switch:')
	if [ "$inst_during" -eq 1 ] && ! compgen -G "$T/instances/kvmscope-$pid-*" >/dev/null && [ "$n" -gt 0 ] && [ $rc -eq 0 ]; then
		echo "ok record_sig$sig (instance removed, $n events readable)"
	else
		echo "not ok record_sig$sig: instance during=$inst_during, after=$(ls "$T/instances" | grep -c "^kvmscope-$pid-[0-9]*-[0-9]*$"), $n events, status $rc"
	fi
done

# 6. errors
"$ks" record -e nosuchsys:nosuchevent -d 0.1 -o "$dir/x.dat" 2>"$dir/err-x"
rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l < "$dir/err-x")" -eq 1 ] && grep -q "matches no event" "$dir/err-x"; then
	echo "ok record_bad_event"
else
	echo "not ok record_bad_event: status $rc: $(cat "$dir/err-x")"
fi
"$ks" record --bogus 2>/dev/null; rc=$?
[ $rc -eq 2 ] && echo "ok record_bad_option" || echo "not ok record_bad_option: status $rc"
"$ks" record --help | grep -q "usage: kvmscope record" && echo "ok record_help" || echo "not ok record_help"

# instances of kvmscope processes that are gone (other runs may be live)
. "$(dirname "$0")/../lib/instances.sh"
instances_left "$T" record_no_instances_left
