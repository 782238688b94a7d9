#!/bin/bash
# top_test.sh - kvmscope top: replayed accounting against kvmscope stat, live
# batch mode on tracefs, the interactive screen in tmux, cleanup on signals.
#
# Oracles:
#  - replay (-i FILE --fast --csv) of the real hip24 recordings: the exits of
#    all intervals add up, per reason and per VM+vCPU, to what `kvmscope stat`
#    counts on the same file (an exit pending at an interval boundary must be
#    counted exactly once); and the number of intervals is the recording's
#    span divided by -d, rounded up;
#  - live --batch with sched events (no KVM here): N intervals printed, the
#    events/s in the header are > 0, the instance is gone afterwards;
#  - tmux: the screen shows the header and keys; 's' changes the sort column,
#    'v' toggles the vCPU rows, 'q' quits; SIGTERM removes the instance.
set -u
ks=$KVMSCOPE
data=$KS_SHARED/data/hip24
dir=$KS_TMP/top
mkdir -p "$dir"
T=/sys/kernel/tracing

have() { command -v "$1" >/dev/null 2>&1; }

# ---- replay: totals equal kvmscope stat
if [ -d "$data" ]; then
	for f in host-2vcpu-22k host-1vcpu-9k host-tsync host-allkvm-rawtsc; do
		in=$data/$f.trace.dat
		[ -f "$in" ] || { echo "skip top_replay_$f: $in is absent"; continue; }
		"$ks" top -i "$in" --fast --csv -d 0.5 > "$dir/$f.csv" 2>"$dir/err"
		awk -F, 'NR>1 && $3=="reason" {gsub(/"/,"",$7); c[$7]+=$8} END {for (k in c) print k, c[k]}' \
			"$dir/$f.csv" | sort > "$dir/$f.top-reason"
		"$ks" stat -i "$in" --csv | awk -F, 'NR>1 && $1=="reason" {print $5, $6}' | sort > "$dir/$f.stat-reason"
		if [ -s "$dir/$f.stat-reason" ] && cmp -s "$dir/$f.top-reason" "$dir/$f.stat-reason"; then
			echo "ok top_replay_${f}_reasons_equal_stat ($(wc -l < "$dir/$f.stat-reason") reasons)"
		else
			echo "not ok top_replay_${f}_reasons_equal_stat: $(diff "$dir/$f.top-reason" "$dir/$f.stat-reason" | head -2 | tr '\n' ' ') $(head -1 "$dir/err")"
		fi
		awk -F, 'NR>1 && $3=="vcpu" {c[$4" "$6]+=$8} END {for (k in c) print k, c[k]}' \
			"$dir/$f.csv" | sort > "$dir/$f.top-vcpu"
		"$ks" stat -i "$in" --by vm,vcpu --csv | grep '^"vm,vcpu"' | awk -F, '{print $3, $5, $7}' | sort > "$dir/$f.stat-vcpu"
		if [ -s "$dir/$f.stat-vcpu" ] && cmp -s "$dir/$f.top-vcpu" "$dir/$f.stat-vcpu"; then
			echo "ok top_replay_${f}_vcpus_equal_stat ($(wc -l < "$dir/$f.stat-vcpu") vCPUs)"
		else
			echo "not ok top_replay_${f}_vcpus_equal_stat: $(diff "$dir/$f.top-vcpu" "$dir/$f.stat-vcpu" | head -2 | tr '\n' ' ')"
		fi
	done
	# the number of intervals: span / d rounded up (span from trace-cmd's report)
	f=host-2vcpu-22k
	if [ -f "$data/expected/$f.report-ns.txt.gz" ]; then
		span=$(zcat "$data/expected/$f.report-ns.txt.gz" | sed -n 's/.* \([0-9]*\.[0-9]*\): kvm_.*/\1/p' |
			awk 'NR == 1 {s = $1} {e = $1} END {printf "%d", int((e - s) / 0.5) + 1}')
		got=$("$ks" top -i "$data/$f.trace.dat" --fast -b -d 0.5 | grep -c '^kvmscope top')
		[ "$span" = "$got" ] && echo "ok top_replay_intervals ($got)" ||
			echo "not ok top_replay_intervals: $got intervals, expected $span"
	fi
	# recorded speed: 3 intervals of 0.3 s take about 0.6 s or more
	start=$(date +%s.%N)
	"$ks" top -i "$data/host-2vcpu-22k.trace.dat" -b -d 0.3 -n 3 > /dev/null
	took=$(echo "$(date +%s.%N) - $start" | bc)
	if [ "$(echo "$took >= 0.55 && $took < 3" | bc)" = 1 ]; then
		echo "ok top_replay_recorded_speed (${took}s for 3 x 0.3 s)"
	else
		echo "not ok top_replay_recorded_speed: took ${took}s for 3 intervals of 0.3 s"
	fi
else
	echo "skip top_replay: $data is absent"
fi

# ---- errors
"$ks" top --fast 2>/dev/null; [ $? -eq 2 ] && echo "ok top_fast_needs_input" || echo "not ok top_fast_needs_input"
"$ks" top -i /nonexistent 2>"$dir/err"; rc=$?
[ $rc -eq 1 ] && [ "$(wc -l < "$dir/err")" -eq 1 ] && echo "ok top_bad_input" || echo "not ok top_bad_input: $rc"

# ---- live
if [ ! -w "$T/instances" ]; then
	mount -t tracefs nodev "$T" 2>/dev/null
fi
if [ ! -w "$T/instances" ]; then
	echo "skip top_live: tracefs is not mounted or not writable at $T (needs root)"
	exit 0
fi
timeout 20 "$ks" top -b -d 0.3 -n 3 -e sched:sched_switch > "$dir/live.txt" 2>"$dir/err"
rc=$?
n=$(grep -c '^kvmscope top - live' "$dir/live.txt")
rate=$(sed -n 's/.* events (\([0-9]*\)\/s).*/\1/p' "$dir/live.txt" | tail -1)
if [ $rc -eq 0 ] && [ "$n" -eq 3 ] && [ "${rate:-0}" -gt 0 ]; then
	echo "ok top_live_batch (3 intervals, $rate events/s)"
else
	echo "not ok top_live_batch: status $rc, $n intervals, rate '$rate' $(head -1 "$dir/err")"
fi
timeout 20 "$ks" top --csv -d 0.3 -n 2 > "$dir/live.csv" 2>"$dir/err"
head -1 "$dir/live.csv" | grep -q '^interval,end_s,level,vm,vm_name,vcpu,reason,exits' &&
	echo "ok top_live_csv" || echo "not ok top_live_csv: $(head -1 "$dir/live.csv") $(head -1 "$dir/err")"

"$ks" top -b -e sched:sched_switch > /dev/null 2>&1 &
pid=$!
sleep 1
during=$(ls "$T/instances" | grep -c "^kvmscope-$pid$")
kill -TERM $pid; wait $pid
if [ "$during" -eq 1 ] && [ ! -e "$T/instances/kvmscope-$pid" ]; then
	echo "ok top_sigterm_removes_instance"
else
	echo "not ok top_sigterm_removes_instance: during=$during after=$(ls "$T/instances" | grep -c "^kvmscope-$pid$")"
fi

# ---- tmux
if ! have tmux; then
	echo "skip top_tmux: tmux is not installed"
else
	s=kstop$$
	cap() { tmux capture-pane -p -t $s; }
	wait_for() { # pattern
		local i
		for i in $(seq 1 30); do cap | grep -q -- "$1" && return 0; sleep 0.2; done
		return 1
	}
	tmux new-session -d -s $s -x 120 -y 40 "$ks top -d 0.3 -e sched:sched_switch; echo TOP-EXITED $?; sleep 30"
	if wait_for 'kvmscope top - live' && cap | grep -q 'keys: q quit'; then
		echo "ok top_tmux_screen"
	else
		echo "not ok top_tmux_screen: $(cap | head -3 | tr '\n' ' ')"
	fi
	tmux send-keys -t $s s
	wait_for 'sort: time' && echo "ok top_tmux_sort_key" || echo "not ok top_tmux_sort_key: $(cap | head -1)"
	tmux send-keys -t $s v
	wait_for 'vCPU rows (on)' && echo "ok top_tmux_vcpu_key" || echo "not ok top_tmux_vcpu_key"
	tmux send-keys -t $s q
	wait_for 'TOP-EXITED 0' && echo "ok top_tmux_quit" || echo "not ok top_tmux_quit: $(cap | tail -3 | tr '\n' ' ')"
	tmux kill-session -t $s 2>/dev/null
	# replay on the screen: vCPU rows appear with 'v'
	if [ -f "$data/host-2vcpu-22k.trace.dat" ]; then
		tmux new-session -d -s $s -x 120 -y 50 "$ks top -i $data/host-2vcpu-22k.trace.dat -d 0.5; echo TOP-EXITED \$?; sleep 30"
		wait_for 'qemu-system-x86' || true
		tmux send-keys -t $s v
		wait_for '  vcpu 0' && echo "ok top_tmux_replay_vcpu_rows" || echo "not ok top_tmux_replay_vcpu_rows: $(cap | head -5 | tr '\n' ' ')"
		tmux send-keys -t $s q
		wait_for 'TOP-EXITED 0' && echo "ok top_tmux_replay_quit" || echo "not ok top_tmux_replay_quit"
		tmux kill-session -t $s 2>/dev/null
	fi
fi

# instances of kvmscope processes that are gone (other runs may be live)
stale=0
for i in $(ls "$T/instances" 2>/dev/null | sed -n 's/^kvmscope-\([0-9]*\)$/\1/p'); do
	kill -0 "$i" 2>/dev/null || stale=$((stale + 1))
done
[ "$stale" -eq 0 ] && echo "ok top_no_instances_left" || echo "not ok top_no_instances_left: $stale kvmscope-* instances of dead processes in $T/instances"
