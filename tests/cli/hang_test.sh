#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# hang_test.sh - `stat` and `top` end on every real recording, on every run.
# timeout: 600
#
# The stat engine's event-role table once grew only after a long probe, so
# it could fill up and the next lookup probed forever; whether it did
# depended on the tep_event pointers, i.e. on address space randomisation
# (3 to 5 hangs in 20 runs of guest-tsync.trace.dat).  So each file is run
# many times with ASLR on (the default; this script does not disable it),
# each run under a timeout: exit 124 is a hang, and so is 137 (top catches
# SIGTERM, so a hung top is killed with SIGKILL 5 s later).
set -u
ks=${KVMSCOPE:?}
data=${KS_SHARED:-../shared}/data/hip24
# 20 runs a file and command; 5 in the sanitizer build (ASan makes each run
# several times slower; the 200-run check was made on the release build),
# and a run may take 60 s there before it counts as hung (10 s otherwise)
case ${KS_BUILD:-} in
*-san) runs=${KS_HANG_RUNS:-5} limit=60 ;;
*) runs=${KS_HANG_RUNS:-20} limit=10 ;;
esac

if [ ! -d "$data" ]; then
	echo "skip hang: $data is absent"
	exit 0
fi
if [ "$(cat /proc/sys/kernel/randomize_va_space 2>/dev/null)" = 0 ]; then
	echo "skip hang: address space randomisation is off on this machine (the hang needs it)"
	exit 0
fi
# setarch -R would hide the bug: make sure this shell did not inherit it
# (ADDR_NO_RANDOMIZE is 0x0040000 in the personality)
if (( 0x$(cat /proc/self/personality 2>/dev/null || echo 0) & 0x0040000 )); then
	echo "skip hang: ASLR is disabled for this process (setarch -R)"
	exit 0
fi

# The commands, '|'-separated (hang_report_test.sh runs report and timeline
# the same way, in parallel with this one)
IFS='|' read -r -a cmds <<< "${KS_HANG_CMDS:-stat -i|top --batch --fast -i}"
for f in "$data"/*.trace.dat; do
	name=$(basename "$f" .trace.dat)
	for cmd in "${cmds[@]}"; do
		hangs=0 fails=0 why=
		for ((i = 0; i < runs; i++)); do
			timeout -k 5 $limit "$ks" $cmd "$f" >/dev/null 2>"$KS_TMP/hang.err"
			rc=$?
			if [ $rc = 124 ] || [ $rc = 137 ]; then
				hangs=$((hangs + 1))
			elif [ $rc = 1 ] && [ "$(wc -l < "$KS_TMP/hang.err")" = 1 ]; then
				: # an answer in one line (stat of a guest-side or empty
				  # recording: "no KVM events")
			elif [ $rc != 0 ]; then
				fails=$((fails + 1)) why=$(head -1 "$KS_TMP/hang.err")
			fi
		done
		label="hang ${cmd%% *} $name"
		if [ $hangs != 0 ]; then
			echo "not ok $label: $hangs of $runs runs did not end within $limit s"
		elif [ $fails != 0 ]; then
			echo "not ok $label: $fails of $runs runs failed: $why"
		else
			echo "ok $label ($runs runs)"
		fi
	done
done
