#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# output_fifo_test.sh - an output named by a FIFO nobody reads is refused
# at once, before any open (convert -o, timeline --json waited in open(2)
# for ever); /dev/stdout on a pipe and a shell's >(...) keep working
# (oracle: the same bytes as a regular file's output).
set -u
ks=${KVMSCOPE:?}
dir=${KS_TMP:?}/output-fifo
mkdir -p "$dir"
src=$KS_SHARED/data/hip24/host-1vcpu-9k.trace.dat
if [ ! -f "$src" ]; then
	echo "skip output_fifo: $src is absent"; exit 0
fi
rm -f "$dir/fifo"
mkfifo "$dir/fifo" || { echo "skip output_fifo: mkfifo failed"; exit 0; }
fifo_refused() {
	local name=$1 rc t0 t1
	shift
	t0=$(date +%s%N)
	timeout 10 "$ks" "$@" >/dev/null 2>"$dir/err"
	rc=$?
	t1=$(date +%s%N)
	if [ $rc = 1 ] && [ "$(wc -l < "$dir/err")" = 1 ] &&
	   grep -q "^kvmscope: $dir/fifo: is a FIFO; kvmscope writes outputs to regular files" "$dir/err" &&
	   [ -p "$dir/fifo" ] && [ -z "$(ls -A "$dir" | grep -v '^fifo$\|^err$')" ]; then
		echo "ok output_fifo_$name ($(((t1 - t0) / 1000000)) ms)"
	else
		echo "not ok output_fifo_$name: exit $rc (124: it hung): $(head -2 "$dir/err" | tr '\n' ' ')"
	fi
}
fifo_refused convert convert -q -i "$src" -o "$dir/fifo"
fifo_refused timeline_json timeline -i "$src" --json "$dir/fifo"

"$ks" timeline -i "$src" --json "$dir/want.json" 2>/dev/null
# the text report goes to standard output too: the JSON is its own bytes in it
"$ks" timeline -i "$src" --json /dev/stdout 2>/dev/null | cat > "$dir/got.json"
if [ -s "$dir/want.json" ] && python3 -c 'import sys
w, g = (open(f, "rb").read() for f in sys.argv[1:])
sys.exit(0 if w in g else 1)' "$dir/want.json" "$dir/got.json"; then
	echo "ok output_fifo_dev_stdout_pipe"
else
	echo "not ok output_fifo_dev_stdout_pipe: the JSON through a pipe differs"
fi
"$ks" timeline -i "$src" --json >(cat > "$dir/subst.json") >/dev/null 2>&1
sleep 0.5
if cmp -s "$dir/want.json" "$dir/subst.json"; then
	echo "ok output_fifo_process_substitution"
else
	echo "not ok output_fifo_process_substitution: the JSON through /dev/fd/N differs"
fi
rm -rf "$dir"
