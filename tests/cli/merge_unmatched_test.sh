#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# merge_unmatched_test.sh - merge of a host and a guest that have nothing
# to do with each other (host-2vcpu-22k's GUEST option names another trace
# than guest-tsync's) says so on stderr and still merges (exit 0, every
# event of both, as trace-cmd's reports of the two files count them); the
# real pair (host-tsync + guest-tsync) has no such line.
set -u
ks=$KVMSCOPE
H=$KS_SHARED/data/hip24
d=$KS_TMP/merge-unmatched
mkdir -p "$d"
if [ ! -f "$H/host-2vcpu-22k.trace.dat" ] || [ ! -f "$H/guest-tsync.trace.dat" ]; then
	echo "skip merge_unmatched: hip24 recordings absent"
	exit 0
fi
"$ks" merge -i "$H/host-2vcpu-22k.trace.dat" -i "$H/guest-tsync.trace.dat" > "$d/out" 2> "$d/err"; rc=$?
want=$(( $(zcat "$H/expected/host-2vcpu-22k.report-ns.txt.gz" | grep -c '^ .*\[[0-9]*\]') + \
	 $(zcat "$H/expected/guest-tsync.report-ns.txt.gz" | grep -c '^ .*\[[0-9]*\]') ))
got=$(grep -c ': .*\[[0-9]*\] ' "$d/out")
if [ $rc = 0 ] && [ "$(wc -l < "$d/err")" = 1 ] &&
   grep -q '^kvmscope: guest-tsync.trace.dat: no host vCPU thread matches this guest' "$d/err" &&
   [ "$got" = "$want" ]; then
	echo "ok merge_unmatched_warned: $(cat "$d/err")"
else
	echo "not ok merge_unmatched_warned: exit $rc, $got of $want events, stderr '$(head -2 "$d/err" | tr '\n' ' ')'"
fi
"$ks" merge -i "$H/host-tsync.trace.dat" -i "$H/guest-tsync.trace.dat" > /dev/null 2> "$d/err2"; rc=$?
if [ $rc = 0 ] && [ ! -s "$d/err2" ]; then
	echo "ok merge_matched_quiet"
else
	echo "not ok merge_matched_quiet: exit $rc, stderr '$(head -2 "$d/err2" | tr '\n' ' ')'"
fi
