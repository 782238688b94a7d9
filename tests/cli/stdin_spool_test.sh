#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# stdin_spool_test.sh - `-i -` on a pipe: the head is checked before
# anything is spooled, the spool is capped (KVMSCOPE_SPOOL_MAX) and made
# in $TMPDIR.
#
#  - 1 GiB of zeros: refused after its first 64 KiB with the error opening
#    such a file gives; the writer is told (EPIPE) after at most a few
#    pipe buffers, not after 1 GiB (once, all of it was written to /tmp).
#  - a real recording piped: the same report as from the file (oracle:
#    the file itself); over KVMSCOPE_SPOOL_MAX: one line naming the limit,
#    exit 1; a bad KVMSCOPE_SPOOL_MAX: exit 2.
#  - TMPDIR naming a missing directory: the error names it (it was
#    ignored: tmpfile() writes to /tmp).
set -u
ks=${KVMSCOPE:?}
dir=${KS_TMP:?}/stdin-spool
mkdir -p "$dir"
src=$KS_SHARED/data/hip24/host-1vcpu-9k.trace.dat

# A writer of N bytes of zeros to stdout that prints how many it wrote
# before the reader went away.
cat > "$dir/zeros.py" <<'PY'
import os, sys, signal
signal.signal(signal.SIGPIPE, signal.SIG_IGN)
n, done, chunk = int(sys.argv[1]), 0, bytes(1 << 16)
try:
	while done < n:
		done += os.write(1, chunk[:min(len(chunk), n - done)])
except BrokenPipeError:
	pass
open(sys.argv[2], 'w').write(str(done))
PY
python3 "$dir/zeros.py" $((1 << 30)) "$dir/written" | TMPDIR=$dir "$ks" stat -i - >/dev/null 2>"$dir/err"
rc=${PIPESTATUS[1]}
written=$(cat "$dir/written" 2>/dev/null || echo 0)
if [ "$rc" = 1 ] && [ "$(wc -l < "$dir/err")" = 1 ] &&
   grep -q '^kvmscope: /dev/stdin: offset 0: not a trace.dat, perf.data or ftrace text file$' "$dir/err" &&
   [ "$written" -lt $((4 << 20)) ]; then
	echo "ok stdin_spool_zeros_refused ($written bytes read of 1 GiB)"
else
	echo "not ok stdin_spool_zeros_refused: exit $rc, $written bytes taken: $(head -2 "$dir/err" | tr '\n' ' ')"
fi

if [ -f "$src" ]; then
	"$ks" stat -i "$src" 2>&1 | tail -n +2 > "$dir/want"
	cat "$src" | TMPDIR=$dir "$ks" stat -i - 2>&1 | tail -n +2 > "$dir/got"
	if [ -s "$dir/want" ] && cmp -s "$dir/want" "$dir/got"; then
		echo "ok stdin_spool_same_report"
	else
		echo "not ok stdin_spool_same_report: $(diff "$dir/want" "$dir/got" | head -5 | tr '\n' ' ')"
	fi
	cat "$src" | KVMSCOPE_SPOOL_MAX=100K "$ks" stat -i - >/dev/null 2>"$dir/err"
	rc=${PIPESTATUS[1]}
	if [ "$rc" = 1 ] && [ "$(wc -l < "$dir/err")" = 1 ] &&
	   grep -q '^kvmscope: /dev/stdin: offset 102400: standard input is larger than .*(limit 102400 bytes; raise it with KVMSCOPE_SPOOL_MAX=SIZE' "$dir/err"; then
		echo "ok stdin_spool_cap"
	else
		echo "not ok stdin_spool_cap: exit $rc: $(head -2 "$dir/err" | tr '\n' ' ')"
	fi
	cat "$src" | KVMSCOPE_SPOOL_MAX=3M "$ks" stat -i - >/dev/null 2>"$dir/err"
	rc=${PIPESTATUS[1]}
	[ "$rc" = 0 ] && echo "ok stdin_spool_cap_raised" ||
		echo "not ok stdin_spool_cap_raised: exit $rc: $(head -1 "$dir/err")"
	cat "$src" | KVMSCOPE_SPOOL_MAX=lots "$ks" stat -i - >/dev/null 2>"$dir/err"
	rc=${PIPESTATUS[1]}
	[ "$rc" = 2 ] && grep -q "KVMSCOPE_SPOOL_MAX='lots'" "$dir/err" && echo "ok stdin_spool_cap_bad_value" ||
		echo "not ok stdin_spool_cap_bad_value: exit $rc: $(head -1 "$dir/err")"
	cat "$src" | TMPDIR=$dir/missing "$ks" stat -i - >/dev/null 2>"$dir/err"
	rc=${PIPESTATUS[1]}
	if [ "$rc" = 1 ] && grep -q "^kvmscope: -: cannot spool standard input to a temporary file in $dir/missing: " "$dir/err"; then
		echo "ok stdin_spool_tmpdir"
	else
		echo "not ok stdin_spool_tmpdir: exit $rc: $(head -1 "$dir/err")"
	fi
else
	echo "skip stdin_spool_recording: $src is absent"
fi
rm -rf "$dir"
