# SPDX-License-Identifier: GPL-2.0-only
# instances.sh - sourced by the tests that start tracing (record, top):
# whether kvmscope left a tracefs instance behind.
#
#	instances_left TRACEFS NAME   # prints "ok NAME" or "not ok NAME: ..."
#
# An instance kvmscope-PID whose process is gone was left behind.  Tests
# run side by side, and writers_test kills a record with SIGKILL on purpose
# (the next record removes that instance, within a second): an instance
# counts only when it is still there after 10 s.
instances_left() {
	local t=$1 name=$2 dead i n
	for n in $(seq 20); do
		dead=
		for i in $(ls "$t/instances" 2>/dev/null | sed -n 's/^kvmscope-\([0-9]*\)$/\1/p'); do
			kill -0 "$i" 2>/dev/null || dead="$dead $i"
		done
		[ -n "$dead" ] || break
		sleep 0.5
	done
	if [ -z "$dead" ]; then
		echo "ok $name"
	else
		echo "not ok $name: instances of dead processes in $t/instances after 10 s:$dead"
	fi
}
