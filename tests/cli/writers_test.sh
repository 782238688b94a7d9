#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# writers_test.sh - outputs never destroy: what a failed, refused or killed
# run leaves under the output's name.
#
# Properties checked (checksums before and after, file types, exit codes):
#  - a device (/dev/null, /dev/full, a node made with mknod) is written in
#    place and stays the device; a directory, a block device, the input
#    itself (also through a hard link or a symbolic link) and, for a
#    trace.dat, a pipe are refused: untouched, exit 1 with one line;
#  - a failed run (broken input) leaves an existing output as it was;
#  - standard output on /dev/full: exit 1, one line "standard output: write
#    error", for every command that prints;
#  - a full disk (a 64 KB tmpfs): exit 1, one line, no file under the final
#    name and no temporary file left;
#  - SIGKILL in the middle of convert, report --flamegraph and record: the
#    final name holds the old content, never a partial file;
#  - record keeps an existing output as NAME.old, and a second quick SIGINT
#    leaves the old output, no temporary file and no tracefs instance;
#    a leftover kvmscope-PID instance of a dead process is removed by the
#    next run.
# The tmpfs, mknod and record cases need root (and tracefs); they skip
# otherwise.
set -u
ks=$KVMSCOPE
data=$KS_SHARED/data/hip24
GEN=$KS_BUILD/tools/gen-kvm-perfdata
dir=$KS_TMP/writers
mkdir -p "$dir"
host=$data/host-1vcpu-9k.trace.dat
T=/sys/kernel/tracing

sum() { cksum < "$1" 2>/dev/null; }
lines() { wc -l < "$1" | tr -d ' '; }

# $1 name, $2 expected exit, $3 stderr file, $4 grep pattern for the message
one_line() {
	local name=$1 want=$2 rc=$3 err=$4 pat=$5
	if [ "$rc" = "$want" ] && [ "$(lines "$err")" = 1 ] && grep -q -- "$pat" "$err"; then
		echo "ok $name"
	else
		echo "not ok $name: exit $rc (want $want), stderr: $(head -3 "$err" | tr '\n' '|')"
	fi
}

# ---- refused outputs ----
printf 'garbage, not a recording\n' > "$dir/broken.data"
bsum=$(sum "$dir/broken.data")

# devices are written in place, never replaced or removed
for dev in /dev/null /dev/full; do
	before=$(stat -c '%F %t:%T' "$dev")
	"$ks" convert -i "$dir/broken.data" -o "$dev" 2>"$dir/err"; rc=$?
	after=$(stat -c '%F %t:%T' "$dev" 2>/dev/null)
	if [ "$before" = "$after" ]; then
		one_line "convert_broken_to_$(basename $dev)_untouched" 1 $rc "$dir/err" "broken.data"
	else
		echo "not ok convert_broken_to_$(basename $dev): $dev is now '$after'"
	fi
done
"$ks" convert -q -i "$host" -o /dev/null 2>"$dir/err"; rc=$?
[ $rc = 0 ] && [ -c /dev/null ] && echo "ok convert_good_to_dev_null" ||
	echo "not ok convert_good_to_dev_null: exit $rc, $(head -1 "$dir/err")"
"$ks" convert -q -i "$host" -o /dev/full 2>"$dir/err"; rc=$?
[ -c /dev/full ] && one_line convert_good_to_dev_full 1 $rc "$dir/err" "No space left on device" ||
	echo "not ok convert_good_to_dev_full: /dev/full is gone"
# /dev/stdout on a pipe: a trace.dat needs seeks, refused before reading
"$ks" convert -i "$dir/broken.data" -o /dev/stdout 2>"$dir/err" | cat > /dev/null
rc=${PIPESTATUS[0]}
one_line convert_to_dev_stdout_pipe_refused 1 $rc "$dir/err" "cannot seek"
# a flame graph on a pipe is fine
n=$("$ks" report -i "$host" --flamegraph /dev/stdout 2>"$dir/err" | grep -c '</svg>')
[ "$n" = 1 ] && echo "ok report_flamegraph_to_dev_stdout_pipe" ||
	echo "not ok report_flamegraph_to_dev_stdout_pipe: $(head -1 "$dir/err")"
# a directory is refused
"$ks" report -i "$host" --flamegraph "$dir" > /dev/null 2>"$dir/err"; rc=$?
one_line report_flamegraph_to_directory_refused 1 $rc "$dir/err" "a directory"

if [ "$(id -u)" = 0 ] && mknod "$dir/node" c 1 3 2>/dev/null; then
	"$ks" convert -i "$dir/broken.data" -o "$dir/node" 2>"$dir/err"; rc=$?
	if [ -c "$dir/node" ]; then
		one_line convert_broken_to_mknod_node_untouched 1 $rc "$dir/err" "broken.data"
	else
		echo "not ok convert_broken_to_mknod_node: the device node is gone"
	fi
	"$ks" timeline -q -i "$host" --html "$dir/node" 2>"$dir/err"; rc=$?
	[ $rc = 0 ] && [ -c "$dir/node" ] && echo "ok timeline_html_to_mknod_node_written_in_place" ||
		echo "not ok timeline_html_to_mknod_node: exit $rc, $(head -1 "$dir/err")"
	if mknod "$dir/blk" b 7 200 2>/dev/null; then
		"$ks" convert -i "$host" -o "$dir/blk" 2>"$dir/err"; rc=$?
		[ -b "$dir/blk" ] && one_line convert_to_block_device_refused 1 $rc "$dir/err" "a block device" ||
			echo "not ok convert_to_block_device: the node is gone"
	fi
else
	echo "skip convert_to_mknod_node: mknod needs root"
fi

# an existing output and a broken input: the output stays
printf 'an older trace.dat\n' > "$dir/existing.dat"
esum=$(sum "$dir/existing.dat")
"$ks" convert -i "$dir/broken.data" -o "$dir/existing.dat" 2>"$dir/err"; rc=$?
if [ "$(sum "$dir/existing.dat")" = "$esum" ]; then
	one_line convert_broken_keeps_existing_output 1 $rc "$dir/err" "broken.data"
else
	echo "not ok convert_broken_keeps_existing_output: the file changed"
fi
n=$(ls -A "$dir" | grep -c '^\.existing\.dat\.')
[ "$n" = 0 ] && echo "ok convert_broken_no_temp_left" || echo "not ok convert_broken_no_temp_left: $n"

# the output is the input: itself, a hard link, a symbolic link
cp "$host" "$dir/self.dat"
ln -f "$dir/self.dat" "$dir/hard.dat"
ln -sf self.dat "$dir/sym.dat"
ssum=$(sum "$dir/self.dat")
for out in self.dat hard.dat sym.dat; do
	"$ks" convert -i "$dir/self.dat" -o "$dir/$out" 2>"$dir/err"; rc=$?
	if [ "$(sum "$dir/self.dat")" = "$ssum" ] && [ -L "$dir/sym.dat" ]; then
		one_line "convert_output_is_input_$out" 1 $rc "$dir/err" "is the input file"
	else
		echo "not ok convert_output_is_input_$out: the input changed"
	fi
done
"$ks" convert -i "$dir/broken.data" -o "$dir/broken.data" 2>"$dir/err"; rc=$?
[ "$(sum "$dir/broken.data")" = "$bsum" ] &&
	one_line convert_broken_output_is_input 1 $rc "$dir/err" "is the input file" ||
	echo "not ok convert_broken_output_is_input: the input changed"

while read -r name cmd; do
	"$ks" $cmd > /dev/null 2>"$dir/err"; rc=$?
	if [ "$(sum "$dir/self.dat")" = "$ssum" ]; then
		one_line "${name}_output_is_input" 1 $rc "$dir/err" "is the input file"
	else
		echo "not ok ${name}_output_is_input: the input changed"
	fi
done <<EOF
timeline_html timeline -q -i $dir/self.dat --html $dir/self.dat
timeline_json timeline -q -i $dir/self.dat --json $dir/hard.dat
report_flamegraph report -i $dir/self.dat --flamegraph $dir/self.dat
report_folded report -i $dir/self.dat --folded $dir/hard.dat
EOF

# a good run through a symbolic link replaces the target, keeps the link
printf 'old\n' > "$dir/target.svg"
ln -sf target.svg "$dir/link.svg"
if "$ks" report -i "$host" --flamegraph "$dir/link.svg" > /dev/null 2>"$dir/err" &&
   [ -L "$dir/link.svg" ] && grep -q '<svg' "$dir/target.svg"; then
	echo "ok report_flamegraph_through_symlink"
else
	echo "not ok report_flamegraph_through_symlink: $(head -1 "$dir/err")"
fi

# ---- standard output on a full device ----
if "$KS_BUILD/tools/gen-qemudump" -o "$dir/d.elf" > /dev/null 2>&1; then
	unwind_cmd="unwind --kernel-unwind fp $dir/d.elf"
else
	unwind_cmd=
fi
while read -r name cmd; do
	[ -n "$cmd" ] || { echo "skip stdout_full_$name: no input"; continue; }
	"$ks" $cmd > /dev/full 2>"$dir/err"; rc=$?
	one_line "stdout_full_$name" 1 $rc "$dir/err" "standard output: write error"
done <<EOF
stat_json stat -i $host --json
stat stat -i $host
report report -i $host
top_batch top -i $host --batch
pmu pmu -i $host
dump dump -i $host
merge merge -i $host
timeline timeline -i $host
report_folded_stdout report -i $host --folded -
unwind $unwind_cmd
help stat --help
EOF

# ---- a big input (convert takes a while) ----
python3 - "$dir/big.scn" <<'EOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write("comm 100 100 qemu-system-aar\n")
    t = 1000
    for i in range(600000):
        f.write("%d %d 100 100 kvm:kvm_exit ret=1 esr_ec=%d vcpu_pc=%d\n" % (t, i % 4, i % 60, 4096 + 4 * (i % 5000)))
        t += 500
        f.write("%d %d 100 100 kvm:kvm_entry vcpu_pc=%d\n" % (t, i % 4, 4096 + 4 * (i % 5000)))
        t += 500
EOF
"$GEN" --formats tests/fixtures/arm64 --machine aarch64 -o "$dir/big.data" "$dir/big.scn" 2>"$dir/err" ||
	echo "not ok gen_big_input: $(head -1 "$dir/err")"
rm -f "$dir/big.scn"

# kill -9 CMD... at the moment its temporary file .BASE.* in DIR has data
# (or after MAX seconds); prints "mid" if it was caught writing.
kill_mid_write() {
	local d=$1 base=$2 max=$3; shift 3
	"$@" > /dev/null 2>&1 &
	local pid=$! i=0 f
	while [ $i -lt $((max * 100)) ] && kill -0 $pid 2>/dev/null; do
		for f in "$d"/."$base".*; do
			if [ -s "$f" ]; then
				kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null; echo mid; return
			fi
		done
		sleep 0.01; i=$((i + 1))
	done
	kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null; echo late
}

printf 'old content\n' > "$dir/killed.dat"
osum=$(sum "$dir/killed.dat")
caught=0
for i in 1 2 3; do
	w=$(kill_mid_write "$dir" killed.dat 5 "$ks" convert -q -i "$dir/big.data" -o "$dir/killed.dat" --file-version 6)
	[ "$w" = mid ] && caught=$((caught + 1))
	if [ "$w" != mid ] && [ "$(sum "$dir/killed.dat")" != "$osum" ] &&
	   "$ks" dump "$dir/killed.dat" > /dev/null 2>&1; then
		# the run ended before the kill (a slow machine, a sanitizer
		# build): a complete trace.dat replaced the old file
		printf 'old content\n' > "$dir/killed.dat"
	elif [ "$(sum "$dir/killed.dat")" != "$osum" ]; then
		echo "not ok convert_sigkill_keeps_old: run $i left $(stat -c %s "$dir/killed.dat") bytes ($w)"; break
	fi
	rm -f "$dir"/.killed.dat.*
done
[ "$(sum "$dir/killed.dat")" = "$osum" ] &&
	echo "ok convert_sigkill_keeps_old ($caught of 3 killed while writing the file)"

# with no old file: nothing under the name
rm -f "$dir/new.dat"
w=$(kill_mid_write "$dir" new.dat 5 "$ks" convert -q -i "$dir/big.data" -o "$dir/new.dat" --file-version 6)
[ ! -e "$dir/new.dat" ] && echo "ok convert_sigkill_no_file ($w)" ||
	echo "not ok convert_sigkill_no_file: $(stat -c %s "$dir/new.dat") bytes under the name ($w)"
rm -f "$dir"/.new.dat.*

# report --flamegraph: killed at several moments of the run
printf 'old svg\n' > "$dir/killed.svg"
osum=$(sum "$dir/killed.svg")
bad=0
for delay in 0.05 0.1 0.2 0.3 0.4; do
	"$ks" report -i "$dir/big.data" --flamegraph "$dir/killed.svg" > /dev/null 2>&1 &
	pid=$!
	sleep $delay
	kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
	if [ "$(sum "$dir/killed.svg")" != "$osum" ] && ! tail -c 7 "$dir/killed.svg" | grep -q '</svg>'; then
		bad=1; echo "not ok report_flamegraph_sigkill: killed after $delay s, a partial file"; break
	fi
	rm -f "$dir"/.killed.svg.*
done
[ $bad = 0 ] && echo "ok report_flamegraph_sigkill_old_or_complete"

# ---- a full disk ----
m=$dir/small
mkdir -p "$m"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=64k tmpfs "$m" 2>/dev/null; then
	full_case() { # name, output file name, command... (OUT stands for the output)
		local name=$1 out=$2; shift 2
		local args=() a
		for a in "$@"; do args+=("${a//OUT/$m/$out}"); done
		"$ks" "${args[@]}" > /dev/null 2>"$dir/err"; rc=$?
		left=$(ls -A "$m" | grep -v '^fill$' | tr '\n' ' ')
		if [ -z "$left" ]; then
			one_line "full_disk_$name" 1 $rc "$dir/err" "No space left on device"
		else
			echo "not ok full_disk_$name: left '$left' (exit $rc)"
		fi
		rm -f "$m"/* "$m"/.[!.]* 2>/dev/null
	}
	full_case timeline_html t.html timeline -q -i "$host" --html OUT
	full_case timeline_json t.json timeline -q -i "$host" --json OUT
	full_case convert c.dat convert -q -i "$host" -o OUT
	full_case convert_v6 c6.dat convert -q -i "$host" -o OUT --file-version 6
	# the flame graph is small: leave it no room at all
	dd if=/dev/zero of="$m/fill" bs=4k 2>/dev/null
	full_case report_flamegraph f.svg report -i "$host" --flamegraph OUT
	# merged, the folded stacks of big.data fit in 64 KB: no room either
	dd if=/dev/zero of="$m/fill" bs=4k 2>/dev/null
	full_case report_folded f.txt report -i "$dir/big.data" --folded OUT
	if [ -w "$T/instances" ] && rm -f "$m/fill"; then
		full_case record r.dat record -q -e sched:sched_switch -e 'timer:*' -d 0.5 -o OUT
	fi
	umount "$m"
else
	echo "skip full_disk: mounting a small tmpfs needs root"
fi

# ---- record ----
if [ ! -w "$T/instances" ]; then
	echo "skip record_writers: tracefs is not writable at $T (needs root)"
	exit 0
fi
"$ks" record -o "$dir" -e sched:sched_switch -d 0.1 2>"$dir/err"; rc=$?
one_line record_to_directory_refused 1 $rc "$dir/err" "a directory"

# NAME.old: kept with its content; the new file is a recording
rm -f "$dir/rec.dat" "$dir/rec.dat.old"
printf 'previous recording\n' > "$dir/rec.dat"
psum=$(sum "$dir/rec.dat")
if "$ks" record -q -e sched:sched_switch -d 0.3 -o "$dir/rec.dat" 2>"$dir/err" &&
   [ "$(sum "$dir/rec.dat.old")" = "$psum" ] && "$ks" dump -i "$dir/rec.dat" > /dev/null 2>&1; then
	echo "ok record_keeps_old_as_dot_old"
else
	echo "not ok record_keeps_old_as_dot_old: $(head -1 "$dir/err")"
fi

# two quick SIGINTs: the old output stays, nothing else is left
printf 'previous recording\n' > "$dir/int.dat"
psum=$(sum "$dir/int.dat")
"$ks" record -q -e sched:sched_switch -e 'timer:*' -b 32768 -o "$dir/int.dat" 2>/dev/null &
pid=$!
sleep 1
kill -INT $pid; sleep 0.02; kill -INT $pid
wait $pid 2>/dev/null
left=$(ls -A "$dir" | grep -c '^\.int\.dat\.')
if [ "$(sum "$dir/int.dat")" = "$psum" ] && [ "$left" = 0 ] && ! compgen -G "$T/instances/kvmscope-$pid-*" >/dev/null; then
	echo "ok record_two_sigints_clean"
elif [ "$(sum "$dir/int.dat")" != "$psum" ] && "$ks" dump -i "$dir/int.dat" > /dev/null 2>&1 &&
     [ "$left" = 0 ] && ! compgen -G "$T/instances/kvmscope-$pid-*" >/dev/null; then
	echo "ok record_two_sigints_clean (the first signal finished the file)"
else
	echo "not ok record_two_sigints_clean: temp files $left, instance $(ls "$T/instances" | tr '\n' ' ')"
	rmdir "$T/instances/kvmscope-$pid-"* 2>/dev/null
fi

# SIGKILL: the old output stays; the next run removes the dead run's instance
printf 'previous recording\n' > "$dir/kill.dat"
psum=$(sum "$dir/kill.dat")
"$ks" record -q -e sched:sched_switch -e 'timer:*' -o "$dir/kill.dat" 2>/dev/null &
pid=$!
sleep 1
kill -INT $pid; sleep 0.05; kill -9 $pid
wait $pid 2>/dev/null
if [ "$(sum "$dir/kill.dat")" = "$psum" ] || "$ks" dump -i "$dir/kill.dat" > /dev/null 2>&1; then
	echo "ok record_sigkill_old_or_complete"
else
	echo "not ok record_sigkill_old_or_complete: a partial file of $(stat -c %s "$dir/kill.dat") bytes"
fi
# the killed run's instance stopped tracing when its descriptors closed
# (disable_on_free + free_buffer held open): tracing_on 0, buffers at the
# minimum (its 32 MB traced on until the next run).  Any kvmscope that
# starts meanwhile (the suite runs tests side by side) removes a dead
# owner's instance: then the kill is tried again, up to 5 times, and an
# instance seen still tracing fails at once.
# seen: the instance's tracing_on and buffer_size_kb (empty when gone)
seen() {
	inst=$(compgen -G "$T/instances/kvmscope-$1-*" | head -1)
	on=$(cat "$inst/tracing_on" 2>/dev/null)
	kb=$(cat "$inst/buffer_size_kb" 2>/dev/null)
}
seen $pid
tries=1
while { [ -z "$on" ] || [ -z "$kb" ]; } && [ $tries -lt 5 ]; do
	tries=$((tries + 1))
	"$ks" record -q -e sched:sched_switch -e 'timer:*' -o "$dir/kill2.dat" 2>/dev/null &
	kpid=$!
	sleep 1
	kill -9 $kpid
	wait $kpid 2>/dev/null
	seen $kpid
done
rm -f "$dir/kill2.dat" "$dir"/.kill2.dat.*
if [ "$on" = 0 ] && [ -n "$kb" ] && [ "$kb" -lt 64 ]; then
	echo "ok record_sigkill_stops_tracing (try $tries)"
else
	echo "not ok record_sigkill_stops_tracing: ${inst:-no instance} in $tries tries: tracing_on '$on', buffer_size_kb '$kb'"
fi
# a temporary file names its owner; the next run writing to the same
# directory removes a killed run's (it stayed for ever)
"$ks" record -q -e sched:sched_switch -o "$dir/kill.dat" 2>/dev/null &
pid2=$!
sleep 1
kill -9 $pid2
wait $pid2 2>/dev/null
before=$(ls -A "$dir" | grep -c '^\.kill\.dat\.')
"$ks" record -q -e sched:sched_switch -d 0.1 -o "$dir/next.dat" 2>"$dir/err"
after=$(ls -A "$dir" | grep -c '^\.kill\.dat\.')
if [ "$before" -ge 1 ] && [ "$after" = 0 ]; then
	echo "ok record_removes_dead_runs_temp_file"
else
	echo "not ok record_removes_dead_runs_temp_file: $before before the next run, $after after"
	rm -f "$dir"/.kill.dat.*
fi
if ! compgen -G "$T/instances/kvmscope-$pid*" >/dev/null &&
   ! compgen -G "$T/instances/kvmscope-$pid2*" >/dev/null; then
	echo "ok record_removes_dead_runs_instance"
else
	echo "not ok record_removes_dead_runs_instance: kvmscope-$pid or kvmscope-$pid2 is still there"
	rmdir "$T/instances/kvmscope-$pid"* "$T/instances/kvmscope-$pid2"* 2>/dev/null
fi
# stale instances are told by pid, start time and PID namespace: a dead
# owner's of this namespace goes; one named by the same free pid in
# another namespace (another container's live run) stays
sh -c 'exit 0' & dpid=$!; wait $dpid
ns=$(stat -L -c %i /proc/self/ns/pid)
mkdir "$T/instances/kvmscope-$dpid-1-$ns" "$T/instances/kvmscope-$dpid-1-$((ns + 1))"
"$ks" record -q -e sched:sched_switch -d 0.1 -o "$dir/ns.dat" 2>"$dir/err"
if [ ! -e "$T/instances/kvmscope-$dpid-1-$ns" ] && [ -d "$T/instances/kvmscope-$dpid-1-$((ns + 1))" ]; then
	echo "ok record_stale_instances_by_namespace"
else
	echo "not ok record_stale_instances_by_namespace: $(ls "$T/instances" | grep "^kvmscope-$dpid-" | tr '\n' ' ')"
fi
rmdir "$T/instances/kvmscope-$dpid-"* 2>/dev/null
exit 0
