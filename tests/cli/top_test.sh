#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# top_test.sh - kvmscope top: replayed accounting against kvmscope stat, live
# batch mode on tracefs, the interactive screen in tmux, cleanup on signals.
#
# Oracles:
#  - replay (-i FILE --fast --csv) of the real hip24 recordings: the exits of
#    all intervals add up, per reason and per VM+vCPU, to what `kvmscope stat`
#    counts on the same file (an exit pending at an interval boundary must be
#    counted exactly once); and the number of intervals is the recording's
#    span divided by -d, rounded up;
#  - the running totals of that replay (--csv and --json): in every interval
#    each row's total (per VM, vCPU, reason, VM+vCPU+reason) is the sum of
#    its exits so far, every row that had exits is listed, and the last
#    interval's totals per VM, vCPU and reason are what
#    `kvmscope stat --json --by vm,vcpu,reason` counts on the file;
#  - replay of the tracepoints view (-t --csv): each event and each
#    kvm_exit(REASON), summed over intervals and VMs, as often as in
#    trace-cmd 3.2's report of the file (../shared/data/hip24/expected);
#  - live --batch with sched events (no KVM here): N intervals printed, the
#    events/s in the header are > 0, the instance is gone afterwards;
#  - tmux (80x24, 200x50, a resize to 100x30): capture-pane -J shows no
#    line wider than the window (nothing wrapped), the title is the first
#    line, every table row has all its columns; the replay's first frame has
#    data; with -v each vCPU's reason rows add up to its exits; the keys h,
#    o, s, x, v, f, p, g, c, 2, z, r change what is shown, and after q the
#    alternate screen is left (the table is gone); SIGTERM removes the
#    instance.  ('s' was the sort key: it is the interval, as in kvm_stat.)
#    A whole replay (--fast -d 0.5 -v): each vCPU row's TOTAL is stat's
#    count of the vCPU, no TOTAL is below its EXITS and some are above;
#    after r the status line says so, every TOTAL is 0 and only the rows
#    with exits in the interval stay; at 40 columns EXITS and TOTAL are
#    left (TOTAL is dropped after TIME%, EXITS/s and P99(us)).
set -u
ks=$KVMSCOPE
data=$KS_SHARED/data/hip24
TT="python3 tests/cli/top_totals.py"
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
		# the running totals: each interval's are the exits so far, the
		# last interval's are stat's (CSV and JSON)
		"$ks" top -i "$in" --fast --json -d 0.5 > "$dir/$f.json" 2>"$dir/err"
		"$ks" stat -i "$in" --json --by vm,vcpu,reason > "$dir/$f.stat.json" 2>>"$dir/err"
		$TT stat "$dir/$f.stat.json" > "$dir/$f.stat-totals" 2>>"$dir/err"
		for fmt in csv json; do
			if ! $TT $fmt "$dir/$f.$fmt" > "$dir/$f.$fmt-totals" 2>"$dir/$fmt.err"; then
				echo "not ok top_replay_${f}_${fmt}_totals_add_up: $(head -1 "$dir/$fmt.err")"
			elif [ -s "$dir/$f.stat-totals" ] && cmp -s "$dir/$f.$fmt-totals" "$dir/$f.stat-totals"; then
				echo "ok top_replay_${f}_${fmt}_totals_equal_stat ($(wc -l < "$dir/$f.stat-totals") vCPU reasons)"
			else
				echo "not ok top_replay_${f}_${fmt}_totals_equal_stat: $(diff "$dir/$f.$fmt-totals" "$dir/$f.stat-totals" | head -2 | tr '\n' ' ') $(head -1 "$dir/err")"
			fi
		done
	done
	# tracepoints view: every event and kvm_exit(REASON), summed over the
	# intervals and VMs, as often as trace-cmd 3.2's report of the file has it
	for f in host-allkvm-rawtsc host-2vcpu-22k; do
		exp=$data/expected/$f.report-ns.txt.gz
		[ -f "$exp" ] || { echo "skip top_replay_tracepoints_$f: $exp is absent"; continue; }
		zcat "$exp" | sed -n 's/^.*\] *[0-9.]*: \([a-z_0-9]*\): *\(reason \([A-Z_0-9]*\)\)\{0,1\}.*/\1 \3/p' |
			awk '{c[$1]++; if ($1 == "kvm_exit" && $2 != "") c["kvm_exit(" $2 ")"]++}
			     END {for (k in c) print k, c[k]}' | sort > "$dir/$f.tc-events"
		"$ks" top -i "$data/$f.trace.dat" --fast --csv -t -d 0.5 2>"$dir/err" |
			awk -F, 'NR > 1 && $3 > 0 {gsub(/"/, "", $4); c[$4] += $5} END {for (k in c) print k, c[k]}' |
			sort > "$dir/$f.tp-events"
		if [ -s "$dir/$f.tc-events" ] && cmp -s "$dir/$f.tp-events" "$dir/$f.tc-events"; then
			echo "ok top_replay_tracepoints_${f}_equal_trace_cmd ($(wc -l < "$dir/$f.tc-events") events and reasons)"
		else
			echo "not ok top_replay_tracepoints_${f}_equal_trace_cmd: $(diff "$dir/$f.tp-events" "$dir/$f.tc-events" | head -3 | tr '\n' ' ') $(head -1 "$dir/err")"
		fi
		# the VMs with kvm_exit rows are the exits view's VMs (the same
		# attribution of threads to VMs)
		"$ks" top -i "$data/$f.trace.dat" --fast --csv -t -d 0.5 |
			awk -F, 'NR > 1 && $3 == 1 && $4 == "kvm_exit" {print $2}' | sort -u > "$dir/$f.tp-vms"
		"$ks" top -i "$data/$f.trace.dat" --fast --csv -d 0.5 | awk -F, '$3 == "vm" {print $4}' |
			sort -u > "$dir/$f.exit-vms"
		if [ -s "$dir/$f.exit-vms" ] && cmp -s "$dir/$f.exit-vms" "$dir/$f.tp-vms"; then
			echo "ok top_replay_tracepoints_${f}_vms ($(wc -l < "$dir/$f.exit-vms") VMs)"
		else
			echo "not ok top_replay_tracepoints_${f}_vms: exits view $(tr '\n' ' ' < "$dir/$f.exit-vms"), tracepoints $(tr '\n' ' ' < "$dir/$f.tp-vms")"
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

# ---- batch -v: under each vCPU its own reasons, adding up to its exits
# and to its total (EXITS is the 5th column from the end, TOTAL the last)
f=$data/host-2vcpu-22k.trace.dat
if [ -f "$f" ]; then
	"$ks" top -i "$f" --fast -b -d 2 -v > "$dir/v.txt" 2>"$dir/err"
	bad=$(awk 'function done_v() {if (v != "" && (sum != v || tsum != t)) bad++; v = ""}
		/^kvmscope top|^$/ {done_v(); next}
		/^  vcpu / {done_v(); v = $3; t = $NF; sum = tsum = 0; n++; next}
		/^    / {sum += $(NF-4); tsum += $NF; next}
		/^[^ ]/ {done_v()}
		END {done_v(); print bad + 0, n + 0}' "$dir/v.txt")
	if [ "${bad% *}" = 0 ] && [ "${bad#* }" -gt 10 ]; then
		echo "ok top_batch_vcpu_reasons_nested (${bad#* } vCPU rows)"
	else
		echo "not ok top_batch_vcpu_reasons_nested: mismatching, vCPU rows: $bad $(head -1 "$dir/err")"
	fi
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
during=$(ls "$T/instances" | grep -c "^kvmscope-$pid-[0-9]*-[0-9]*$")
kill -TERM $pid; wait $pid
if [ "$during" -eq 1 ] && ! compgen -G "$T/instances/kvmscope-$pid-*" >/dev/null; then
	echo "ok top_sigterm_removes_instance"
else
	echo "not ok top_sigterm_removes_instance: during=$during after=$(ls "$T/instances" | grep -c "^kvmscope-$pid-[0-9]*-[0-9]*$")"
fi

# ---- tmux: the screen at 80x24 and 200x50
if ! have tmux; then
	echo "skip top_tmux: tmux is not installed"
else
	s=kstop$$
	# a private server: other tmux users (parallel tests) cannot disturb it
	tm() { tmux -L "$s" "$@"; }
	# a session that outlives the others, so that the server does not exit
	# (and race the next new-session) whenever a test session ends
	tm new-session -d -s keep -x 80 -y 24 "sleep 600"
	W=80 H=24
	cap() { tm capture-pane -p -t $s; }
	# -J joins wrapped lines: a line longer than the width wrapped
	wrapped() { tm capture-pane -p -J -t $s | awk -v w="$W" 'length($0) > w' | head -1; }
	wait_for() { # pattern [tries of 0.2 s, default 30]
		local i
		for i in $(seq 1 "${2:-30}"); do cap | grep -q -- "$1" && return 0; sleep 0.2; done
		return 1
	}
	wait_gone() { # pattern
		local i
		for i in $(seq 1 30); do cap | grep -q -- "$1" || return 0; sleep 0.2; done
		return 1
	}
	# check NAME: no wrapped line, the title on the first line, and every
	# row of the table (below the column titles) with all its columns
	check() {
		local w t rows
		w=$(wrapped)
		t=$(cap | head -1)
		rows=$(cap | awk -v h="$H" 'NR > 2 && NR < h && NF' | head -40)
		if [ -n "$w" ]; then
			echo "not ok $1: a line wrapped: $w"
		elif [ "${t#kvmscope top}" = "$t" ]; then
			echo "not ok $1: the first line is not the title: $t"
		elif [ -n "$2" ] && echo "$rows" | awk -v n="$2" 'NF < n {bad = 1} END {exit !bad}'; then
			echo "not ok $1: a row lacks columns: $(echo "$rows" | awk -v n="$2" 'NF < n' | head -1)"
		else
			echo "ok $1"
		fi
	}

	tm new-session -d -s $s -x $W -y $H "$ks top -d 0.3 -e sched:sched_switch; echo TOP-EXITED \$?; sleep 30"
	if wait_for 'kvmscope top - live' && wait_for 'h help, q quit'; then
		check top_tmux_live_screen_80x24 ""
	else
		echo "not ok top_tmux_live_screen_80x24: $(cap | head -3 | tr '\n' ' ')"
	fi
	tm send-keys -t $s h
	wait_for 'kvmscope top - keys' && echo "ok top_tmux_help_key" || echo "not ok top_tmux_help_key: $(cap | head -2 | tr '\n' ' ')"
	tm send-keys -t $s Space # any key leaves the help
	wait_for 'VM / vCPU / REASON' && echo "ok top_tmux_help_leaves" || echo "not ok top_tmux_help_leaves"
	tm send-keys -t $s o
	wait_for 'sort time' && echo "ok top_tmux_sort_key" || echo "not ok top_tmux_sort_key: $(cap | head -1)"
	# E, T, P: sort by exits, time, p99 (whatever the order was)
	for k in P:p99 T:time E:exits; do
		tm send-keys -t $s ${k%%:*}
		wait_for "sort ${k#*:}" && echo "ok top_tmux_sort_${k%%:*}_key" ||
			echo "not ok top_tmux_sort_${k%%:*}_key: $(cap | head -1)"
	done
	# a value the s key does not take: said in the status line, kept
	tm send-keys -t $s s
	wait_for 'interval in seconds' && tm send-keys -t $s 1x Enter
	wait_for "the interval is 0.01 to 86400 s, not '1x'" && echo "ok top_tmux_interval_key_refuses" ||
		echo "not ok top_tmux_interval_key_refuses: $(cap | tail -1)"
	tm send-keys -t $s s
	wait_for 'interval in seconds' && tm send-keys -t $s 0.7 Enter
	wait_for '#[0-9]* 0.7[0-9]s' && echo "ok top_tmux_interval_key" || echo "not ok top_tmux_interval_key: $(cap | head -1)"
	tm resize-window -t $s -x 100 -y 30 2>/dev/null
	W=100 H=30
	sleep 1
	[ "$(cap | wc -l)" -eq 30 ] && check top_tmux_resize_100x30 "" || echo "not ok top_tmux_resize_100x30: $(cap | wc -l) lines"
	W=80 H=24
	tm send-keys -t $s q
	wait_for 'TOP-EXITED 0' && echo "ok top_tmux_quit" || echo "not ok top_tmux_quit: $(cap | tail -3 | tr '\n' ' ')"
	# the alternate screen is left: the table is gone
	if cap | grep -q 'VM / vCPU / REASON\|kvmscope top - '; then
		echo "not ok top_tmux_quit_leaves_alternate_screen: $(cap | head -2 | tr '\n' ' ')"
	else
		echo "ok top_tmux_quit_leaves_alternate_screen"
	fi
	tm kill-session -t $s 2>/dev/null

	# replay: the first frame has data; keys at 80x24 and 200x50
	f=$data/host-2vcpu-22k.trace.dat
	if [ -f "$f" ]; then
		# the whole replay's intervals, and stat's exits per vCPU
		last=$("$ks" top -i "$f" --fast -b -d 0.5 | grep -c '^kvmscope top')
		"$ks" stat -i "$f" --json --by vm,vcpu > "$dir/stat-vcpus.json"
		$TT vcpus "$dir/stat-vcpus.json" > "$dir/stat-vcpus"
		for size in 80x24 200x50; do
			W=${size%x*} H=${size#*x}
			tm new-session -d -s $s -x $W -y $H "$ks top -i $f -d 20 -v; echo TOP-EXITED \$?; sleep 30"
			# -d 20: the first frame must come at once, not after 20 s
			sleep 1.5
			if cap | grep -q '^60250(guest' && cap | grep -q '^  vcpu 0 '; then
				echo "ok top_tmux_replay_first_frame_$size"
			else
				echo "not ok top_tmux_replay_first_frame_$size: $(cap | head -4 | tr '\n' ' ')"
			fi
			check top_tmux_replay_no_wrap_$size 5
			# -v nesting: a vCPU's reasons are its own (they add up to its
			# exits); on a screen where the whole table fits
			if cap | grep -q '(scroll)'; then
				:
			elif cap | awk 'NR > 2 && /^  vcpu / {if (v != "" && sum != v) bad = 1; v = $3; sum = 0; next}
			       NR > 2 && /^    / {sum += $(NF-4)} NR > 2 && /^[^ ]/ {if (v != "" && sum != v) bad = 1; v = ""}
			       END {if (v != "" && sum != v) bad = 1; exit bad}'; then
				echo "ok top_tmux_vcpu_reasons_nested_$size"
			else
				echo "not ok top_tmux_vcpu_reasons_nested_$size: $(cap | sed -n 3,8p | tr '\n' '|')"
			fi
			if [ $size = 80x24 ]; then
				tm send-keys -t $s x # no reason rows
				wait_gone '^    [A-Z]' && echo "ok top_tmux_x_key" || echo "not ok top_tmux_x_key: $(cap | sed -n 3,6p | tr '\n' '|')"
				tm send-keys -t $s x v # reasons again, no vCPU rows
				wait_gone '^  vcpu ' && wait_for '^  HLT' && echo "ok top_tmux_v_key" || echo "not ok top_tmux_v_key: $(cap | sed -n 3,6p | tr '\n' '|')"
				tm send-keys -t $s f
				wait_for 'filter (regex' && tm send-keys -t $s HLT Enter
				wait_gone '^  MSR_WRITE' && [ "$(cap | awk 'NR > 2 && /^  [A-Z]/' | grep -vc HLT)" -eq 0 ] &&
					echo "ok top_tmux_f_key" || echo "not ok top_tmux_f_key: $(cap | sed -n 3,6p | tr '\n' '|')"
				tm send-keys -t $s c p
				wait_for 'pid (empty' && tm send-keys -t $s 52679 Enter
				wait_gone '^60250' && cap | grep -q '^52679' && echo "ok top_tmux_p_key" ||
					echo "not ok top_tmux_p_key: $(cap | sed -n 3,5p | tr '\n' '|')"
				tm send-keys -t $s c g
				wait_for 'guest name' && tm send-keys -t $s -l 'guest da6d103bdee443d1' && tm send-keys -t $s Enter
				wait_gone '^52679' && cap | grep -q '^60250' && echo "ok top_tmux_g_key" ||
					echo "not ok top_tmux_g_key: $(cap | sed -n 3,5p | tr '\n' '|')"
				tm send-keys -t $s c 2 # tracepoints view
				wait_for 'VM / EVENT' && wait_for '^    kvm_exit(HLT)' && check top_tmux_tracepoints_view 4 ||
					echo "not ok top_tmux_tracepoints_view: $(cap | sed -n 1,5p | tr '\n' '|')"
				tm send-keys -t $s z # rows that are zero hidden: every COUNT > 0
				sleep 0.5
				[ "$(cap | awk -v h="$H" 'NR > 2 && NR < h && NF >= 4 && $(NF-2) == 0' | wc -l)" -eq 0 ] &&
					echo "ok top_tmux_z_key" || echo "not ok top_tmux_z_key"
				tm send-keys -t $s r
				wait_for 'totals reset' && echo "ok top_tmux_r_key" || echo "not ok top_tmux_r_key"
			fi
			tm send-keys -t $s q
			wait_for 'TOP-EXITED 0' && echo "ok top_tmux_replay_quit_$size" || echo "not ok top_tmux_replay_quit_$size"
			tm kill-session -t $s 2>/dev/null

			# the totals of a whole replay: it stays on its last interval
			tm new-session -d -s $s -x $W -y $H "$ks top -i $f --fast -d 0.5 -v; echo TOP-EXITED \$?; sleep 30"
			if ! wait_for " #$last " 100 || ! wait_for 'h help, q quit'; then
				echo "not ok top_tmux_totals_$size: no interval $last: $(cap | head -2 | tr '\n' '|')"
				tm kill-session -t $s 2>/dev/null
				continue
			fi
			check top_tmux_totals_no_wrap_$size 6
			# the table's rows: label, EXITS ($(NF-4)), ..., TOTAL ($NF)
			table() { cap | awk -v h="$H" 'NR > 2 && NR < h && NF >= 6'; }
			table | awk '/^[0-9]/ {match($0, /^[0-9]+/); vm = substr($0, 1, RLENGTH)}
				/^  vcpu / {print "vm=" vm " vcpu=" $2 " exits=" $NF}' > "$dir/screen-vcpus"
			if [ -s "$dir/screen-vcpus" ] && ! grep -vxFf "$dir/stat-vcpus" "$dir/screen-vcpus" > /dev/null; then
				echo "ok top_tmux_totals_vcpus_equal_stat_$size ($(wc -l < "$dir/screen-vcpus") vCPU rows)"
			else
				echo "not ok top_tmux_totals_vcpus_equal_stat_$size: screen $(tr '\n' ' ' < "$dir/screen-vcpus"), stat $(tr '\n' ' ' < "$dir/stat-vcpus")"
			fi
			if table | awk '$NF < $(NF-4) {bad = 1} $NF > $(NF-4) {more = 1} END {exit bad || !more}'; then
				echo "ok top_tmux_totals_accumulate_$size"
			else
				echo "not ok top_tmux_totals_accumulate_$size: $(table | head -4 | tr '\n' '|')"
			fi
			tm send-keys -t $s r
			if wait_for "^totals reset after interval #$last" &&
			   table | awk '{n++} $NF != 0 || $(NF-4) == 0 {bad = 1} END {exit bad || !n}'; then
				echo "ok top_tmux_r_resets_totals_$size ($(table | wc -l) rows with exits)"
			else
				echo "not ok top_tmux_r_resets_totals_$size: $(cap | tail -1) | $(table | head -4 | tr '\n' '|')"
			fi
			if [ $size = 200x50 ]; then
				# narrow: TOTAL is kept after EXITS, the other columns go
				tm resize-window -t $s -x 40 -y 24 2>/dev/null
				W=40 H=24
				sleep 1
				hdr=$(cap | sed -n 2p)
				if [ "$(echo $hdr)" = "VM / vCPU / REASON EXITS TOTAL" ]; then
					check top_tmux_totals_kept_at_40_columns 3
				else
					echo "not ok top_tmux_totals_kept_at_40_columns: '$hdr'"
				fi
			fi
			tm send-keys -t $s q
			wait_for 'TOP-EXITED 0' || echo "not ok top_tmux_totals_quit_$size"
			tm kill-session -t $s 2>/dev/null
		done
	fi
	tm kill-server 2>/dev/null
fi

# instances of kvmscope processes that are gone (other runs may be live)
. "$(dirname "$0")/../lib/instances.sh"
instances_left "$T" top_no_instances_left
