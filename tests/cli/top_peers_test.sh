#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# top_peers_test.sh - top --kvmstats against hostile QMP peers
# (tests/cli/fake_qmp.py).
#
#  - time in proportion to the statistics: the CPU time (user + system,
#    of top alone) of 4 readings of a peer with 24 000 statistics over
#    that of a peer with 4 000 is below 15 (linear: about 6; the
#    quadratic lookups took 36 times as long, 24 000 needed minutes); the
#    sum over the vCPUs of one statistic is what the peer serves;
#  - a peer that streams events and never answers: top -n 1 ends with the
#    VM's error row (the command's deadline, not one per event line), and
#    a top that waits on it ends within a second of SIGTERM;
#  - names from the peer with terminal escape sequences (ESC ] 0 ; ... BEL,
#    ESC [ 2J): no ESC or BEL byte reaches the output, the name is shown
#    escaped.
set -u
ks=$KVMSCOPE
here=$(cd "$(dirname "$0")" && pwd)
dir=$KS_TMP/top-peers
mkdir -p "$dir"
# peers_start, wait_socket
. "$here/../lib/peers.sh"
peers_start

peer() { # SOCKET ARGS...
	python3 "$here/fake_qmp.py" "$@" &
	pids+=($!)
	wait_socket "$1"
}

# ---- linear time
peer "$dir/s4k.sock" --stats 4000 --vcpus 2
peer "$dir/s24k.sock" --stats 24000 --vcpus 2
cpu() { # SOCKET OUT: user+system seconds of 4 readings, or "timeout"
	if ! timeout -k 1 40 /usr/bin/time -f '%U %S' -o "$dir/time" \
		"$ks" top --kvmstats --qmp "$1" -b -n 4 -d 0.05 > "$2" 2>"$dir/top.err"; then
		echo timeout
		return
	fi
	awk '{ printf "%.2f\n", $1 + $2 }' "$dir/time"
}
c4=$(cpu "$dir/s4k.sock" "$dir/s4k.txt")
c24=$(cpu "$dir/s24k.sock" "$dir/s24k.txt")
# stat_5 is 5 on vCPU 0 and 1005 on vCPU 1
rows=$(grep -c '^  stat_[0-9]* ' "$dir/s24k.txt")
sum=$(awk '$1 == "stat_5" { print $2; exit }' "$dir/s24k.txt")
if [ "$c4" != timeout ] && [ "$c24" != timeout ] && [ "$rows" = 48000 ] && [ "$sum" = 1010 ] &&
   python3 -c 'import sys; a, b = map(float, sys.argv[1:]); sys.exit(not (b / max(a, 0.05) < 15))' "$c4" "$c24"; then
	echo "ok top_kvmstats_linear_time (CPU of 4 readings: 4 000 statistics $c4 s, 24 000 $c24 s)"
else
	echo "not ok top_kvmstats_linear_time: CPU of 4 readings: 4 000 statistics $c4 s, 24 000 $c24 s; $rows rows (want 48000: 12 000 per reading), stat_5 '$sum' (want 1010) $(head -1 "$dir/top.err")"
fi

# ---- a peer streaming events
peer "$dir/events.sock" --events 0.05
t0=$(date +%s%N)
timeout -k 1 20 "$ks" top --kvmstats --qmp "$dir/events.sock" -b -n 1 -d 0.1 > "$dir/events.txt" 2>&1
rc=$?
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
if [ $rc = 0 ] && grep -q 'events.sock: QMP did not answer within 2000 ms' "$dir/events.txt"; then
	echo "ok top_kvmstats_event_stream_deadline (ended in $ms ms with the VM's error row)"
else
	echo "not ok top_kvmstats_event_stream_deadline: status $rc after $ms ms: $(tail -2 "$dir/events.txt" | tr '\n' '|')"
fi
"$ks" top --kvmstats --qmp "$dir/events.sock" -b -d 0.1 > /dev/null 2>&1 &
tp=$!
pids+=($tp)
sleep 1.5
t0=$(date +%s%N)
kill -TERM "$tp"
for i in $(seq 100); do kill -0 "$tp" 2>/dev/null || break; sleep 0.02; done
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
if kill -0 "$tp" 2>/dev/null; then
	kill -KILL "$tp"
	echo "not ok top_kvmstats_sigterm: still running $ms ms after SIGTERM"
elif [ "$ms" -lt 1000 ]; then
	echo "ok top_kvmstats_sigterm (ended $ms ms after SIGTERM while waiting on QMP)"
else
	echo "not ok top_kvmstats_sigterm: ended $ms ms after SIGTERM"
fi

# ---- escape sequences from the peer
peer "$dir/evil.sock" --evil-stat --stats 2 --vcpus 1
"$ks" top --kvmstats --qmp "$dir/evil.sock" -b -n 1 -d 0.1 > "$dir/evil.txt" 2>&1
if ! LC_ALL=C grep -q $'[\x1b\x07\x9b]' "$dir/evil.txt" && grep -qF '\x1b]0;pwned\x07\x1b[2J' "$dir/evil.txt"; then
	echo "ok top_kvmstats_names_escaped"
else
	echo "not ok top_kvmstats_names_escaped: $(LC_ALL=C grep -c $'[\x1b\x07]' "$dir/evil.txt") lines with ESC or BEL: $(grep -a pwned "$dir/evil.txt" | od -c | head -2 | tr '\n' ' ')"
fi
