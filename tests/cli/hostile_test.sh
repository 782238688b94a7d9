#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# hostile_test.sh - crafted and unfinished inputs end quickly, in one line.
#
# Inputs: tools/gen-hostile writes trace.dat files that once were read as
# valid empty recordings (an unfinished file: options offset 0, data without
# a BUFFER option) or made the reader use gigabytes or minutes (a zstd chunk
# inflating to 64 MiB named by 40 CPUs, a 16 MiB page named by 20 CPUs, a
# million BUFFER options, 13 million GUEST options, event formats of a
# million fields, v6 and a few hundred KB of zstd v7, which libtraceevent's
# parse once took 300-500 MB for); `kvmscope convert`
# outputs cut short; a FIFO, a pipe, a directory.  Property checked for
# every one, with `stat -i` and `dump`: the exit status expected (1 for bad
# input), exactly one line on stderr naming the file (and the offset where
# there is one) and the problem, under 2 s and 256 MB of peak memory (time
# and memory are not checked in sanitizer builds).
set -u
ks=$KVMSCOPE
gen=$KS_BUILD/tools/gen-hostile
dir=$KS_TMP/hostile
mkdir -p "$dir"
if [ ! -x "$gen" ]; then
	echo "skip hostile: $gen is not built"; exit 0
fi
san=0
grep -q __asan_init "$ks" 2>/dev/null && san=1
have_time=1
[ -x /usr/bin/time ] || have_time=0

# run NAME WANT_RC PATTERN CMD...: run CMD (stdin from $stdin_file if
# set), check its status, its stderr (one line matching the extended
# regular expression PATTERN), its wall time and its peak RSS.
stdin_file=/dev/null
run() {
	local name=$1 want=$2 pat=$3 rc t0 t1 ms rss lines
	shift 3
	t0=$(date +%s%N)
	if [ $have_time = 1 ]; then
		timeout 20 /usr/bin/time -f %M -o "$dir/rss" "$@" <"$stdin_file" >/dev/null 2>"$dir/err"
	else
		timeout 20 "$@" <"$stdin_file" >/dev/null 2>"$dir/err"
	fi
	rc=$?
	t1=$(date +%s%N)
	ms=$(((t1 - t0) / 1000000))
	rss=$(tail -1 "$dir/rss" 2>/dev/null || echo 0)
	[ $have_time = 1 ] || rss=0
	# /usr/bin/time adds "Command exited with non-zero status N" to its -o file
	lines=$(wc -l <"$dir/err")
	if [ "$rc" != "$want" ]; then
		echo "not ok hostile_$name: exit status $rc, expected $want: $(head -c 300 "$dir/err")"
	elif [ "$want" != 0 ] && [ "$lines" != 1 ]; then
		echo "not ok hostile_$name: $lines lines on stderr: $(head -3 "$dir/err" | tr '\n' '|')"
	elif [ "$want" != 0 ] && ! grep -Eq -- "$pat" "$dir/err"; then
		echo "not ok hostile_$name: message does not match '$pat': $(cat "$dir/err")"
	elif [ $san = 0 ] && [ "$ms" -ge 2000 ]; then
		echo "not ok hostile_$name: took $ms ms"
	elif [ $san = 0 ] && [ "$rss" -ge 262144 ]; then
		echo "not ok hostile_$name: peak RSS $rss KB"
	else
		echo "ok hostile_$name ($ms ms, $rss KB)"
	fi
}

"$gen" "$dir" || { echo "not ok hostile_gen: gen-hostile failed"; exit 0; }

# file  exit  message (after "FILE: ")
while read -r f want pat; do
	for cmd in "stat -i" dump; do
		if [ "$want" = 0 ] && [ "$cmd" = "stat -i" ]; then
			# read whole: a recording without events is an empty
			# answer (exit 0, as perf's), with the note
			run "${f%.dat}_stat" 0 - $ks $cmd "$dir/$f"
			grep -q "^kvmscope: $dir/$f: no KVM events" "$dir/err" ||
				echo "not ok hostile_${f%.dat}_stat_note: $(head -1 "$dir/err")"
			continue
		fi
		run "${f%.dat}_${cmd%% *}" "$want" "^kvmscope: $dir/$f: $pat" $ks $cmd "$dir/$f"
	done
done <<'EOF'
v7-offset0.dat 1 offset 29: truncated: the options offset is 0
v7-unfinished-data.dat 1 offset [0-9]+: truncated: data section without a BUFFER option
zstd-bomb-shared.dat 1 offset [0-9]+: data of CPU 0 of buffer "i1" overlaps the data of CPU 0 of buffer ""
zstd-bomb-40cpus.dat 1 offset [0-9]+: the file needs more than 160 MiB of decompressed data in memory at once \(limit 167772160; raise it with --limit memory=
page-shared.dat 1 offset [0-9]+: data of CPU 1 of buffer "" overlaps
buffers-100k.dat 0 -
buffers-1m.dat 1 offset [0-9]+: the file declares more than 1000000 metadata objects .*--limit objects=
guests-2m.dat 1 offset [0-9]+: the file declares more than 1000000 metadata objects .*--limit objects=
guests-13m.dat 1 offset [0-9]+: the file needs more than 160 MiB of decompressed data
fields-1m-zstd.dat 1 offset [0-9]+: format of kvm_exit has 1000000 fields \(limit 4096\)$
fields-300x4k-zstd.dat 1 offset [0-9]+: format of kvm_exit_[0-9]+ has 4000 fields, more than the memory budget leaves room for .*--limit memory=SIZE\)$
fields-200k-v6.dat 1 offset 389: format of kvm_exit has 200000 fields \(limit 4096\)$
EOF

# kvmscope convert outputs cut short (a recording stopped by a signal
# before the writer finished): every cut is "truncated", with its offset
src=$KS_SHARED/data/hip24/host-1vcpu-9k.trace.dat
if [ -f "$src" ]; then
	for v in "6 none" "7 none" "7 zstd"; do
		set -- $v
		out=$dir/conv-v$1-$2.dat
		if ! $ks convert -q -i "$src" -o "$out" --file-version "$1" --compression "$2" 2>"$dir/err"; then
			echo "not ok hostile_convert_v$1_$2: $(head -1 "$dir/err")"
			continue
		fi
		size=$(stat -c %s "$out")
		for cut in 64 $((size / 100)) $((size / 10)) $((size / 2)) $((size * 9 / 10)) $((size - 1)); do
			head -c "$cut" "$out" >"$dir/cut.dat"
			run "convert_v$1_$2_cut$cut" 1 "^kvmscope: $dir/cut.dat: offset [0-9]+: .*truncated" \
				$ks stat -i "$dir/cut.dat"
		done
		rm -f "$out" "$dir/cut.dat"
	done
else
	echo "skip hostile_convert_cut: $src is absent"
fi

# not regular files: one line saying what the input is
rm -f "$dir/fifo"
if mkfifo "$dir/fifo" 2>/dev/null; then
	# no writer: the open must not wait for one
	run fifo_stat 1 "^kvmscope: $dir/fifo: is a pipe or FIFO; kvmscope reads regular files only" \
		$ks stat -i "$dir/fifo"
	run fifo_dump 1 "^kvmscope: $dir/fifo: is a pipe or FIFO" $ks dump "$dir/fifo"
fi
run dir_input 1 "^kvmscope: $dir: is a directory$" $ks stat -i "$dir"
if [ -f "$src" ]; then
	run dir_guest_kallsyms 1 "^kvmscope: $dir: is a directory$" \
		$ks report -i "$src" --guest-kallsyms "$dir"
	# /dev/stdin: a redirected file is a file; a pipe is not
	stdin_file=$src
	run stdin_redirect 0 - $ks stat -i /dev/stdin
	stdin_file=/dev/null
	if cat "$src" | $ks stat -i /dev/stdin >/dev/null 2>"$dir/err"; then
		echo "not ok hostile_stdin_pipe: a pipe was accepted"
	elif [ "$(wc -l <"$dir/err")" = 1 ] && grep -q '^kvmscope: /dev/stdin: is a pipe or FIFO' "$dir/err"; then
		echo "ok hostile_stdin_pipe"
	else
		echo "not ok hostile_stdin_pipe: $(head -3 "$dir/err" | tr '\n' '|')"
	fi
fi
if command -v perf >/dev/null && perf kvm stat record -a -o "$dir/perf.data" sleep 0.01 >/dev/null 2>&1; then
	stdin_file=$dir/perf.data
	# dump: this host may or may not run KVM guests while recording
	run stdin_perfdata_redirect 0 - $ks dump /dev/stdin
	stdin_file=/dev/null
	if cat "$dir/perf.data" | $ks stat -i /dev/stdin >/dev/null 2>"$dir/err"; then
		echo "not ok hostile_stdin_perfdata_pipe: a pipe was accepted"
	elif [ "$(wc -l <"$dir/err")" = 1 ] && grep -q '^kvmscope: /dev/stdin: is a pipe or FIFO' "$dir/err"; then
		echo "ok hostile_stdin_perfdata_pipe"
	else
		echo "not ok hostile_stdin_perfdata_pipe: $(head -3 "$dir/err" | tr '\n' '|')"
	fi
else
	echo "skip hostile_stdin_perfdata: perf cannot record here"
fi
rm -rf "$dir"
