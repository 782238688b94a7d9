#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# top_discovery_test.sh - top --kvmstats without --qmp finds the QEMU
# processes started with -qmp unix:PATH, and trusts only those of root or
# of its own user whose socket is that same user's.
#
# Runs in a PID namespace of its own (unshare --pid --mount-proc), so that
# only the processes started here are found (none of the host's QEMUs,
# nor another test's, is connected to), with the debugfs and libvirt
# directories hidden.  Three copies of python3 named qemu-fake serve
# tests/cli/fake_qmp.py, each with a statistic of its own name:
#  - root's, with -name "good ESC ] 0 ; pwned BEL": shown (roots_stat), its
#    name escaped (no ESC or BEL byte in the output);
#  - another user's (useradd kstest-qemu, setpriv): not read, although
#    it is named qemu-fake and gives -qmp unix:PATH (other_users_stat);
#  - root's, whose -qmp names the other user's socket: not read either.
# Skips without root, unshare or setpriv.
set -u
ks=$KVMSCOPE
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${KS_DISCOVERY_NS:-}" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "skip top_discovery: needs root (useradd, a PID namespace)"; exit 0
	fi
	for t in unshare setpriv useradd; do
		command -v $t >/dev/null || { echo "skip top_discovery: $t is not installed"; exit 0; }
	done
	[ -x /usr/bin/python3 ] || { echo "skip top_discovery: no /usr/bin/python3"; exit 0; }
	if ! err=$(unshare --pid --fork --mount --mount-proc true 2>&1); then
		echo "skip top_discovery: no PID namespace here: $err"; exit 0
	fi
	id kstest-qemu >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin kstest-qemu ||
		{ echo "not ok top_discovery_setup: useradd failed"; exit 0; }
	exec unshare --pid --fork --mount --mount-proc env KS_DISCOVERY_NS=1 bash "$0" "$@"
fi

for d in /sys/kernel/debug /run/libvirt; do
	[ -d "$d" ] && mount -t tmpfs none "$d"
done
# a directory the other user may enter and write (KS_TMP is root's alone)
dir=$(mktemp -d /tmp/ks-discovery.XXXXXX)
chmod 1777 "$dir"
trap 'kill $(jobs -p) 2>/dev/null; wait; rm -rf "$dir"' EXIT
cp /usr/bin/python3 "$dir/qemu-fake"
cp "$here/fake_qmp.py" "$dir/fake_qmp.py"
chmod 755 "$dir/qemu-fake" "$dir/fake_qmp.py"
uid=$(id -u kstest-qemu)
gid=$(id -g kstest-qemu)

setpriv --reuid "$uid" --regid "$gid" --clear-groups \
	"$dir/qemu-fake" "$dir/fake_qmp.py" "$dir/other.sock" --tag other_users_stat --stats 2 --vcpus 1 \
	-qmp "unix:$dir/other.sock,server=on,wait=off" &
"$dir/qemu-fake" "$dir/fake_qmp.py" "$dir/root.sock" --tag roots_stat --stats 2 --vcpus 1 \
	-name "$(printf 'good\033]0;pwned\007')" -qmp "unix:$dir/root.sock,server=on,wait=off" &
for i in $(seq 50); do [ -S "$dir/other.sock" ] && [ -S "$dir/root.sock" ] && break; sleep 0.1; done
# root's process naming the other user's socket (it serves nothing itself)
"$dir/qemu-fake" -c 'import time; time.sleep(60)' -qmp "unix:$dir/other.sock,server=on" &
sleep 0.3
"$ks" top --kvmstats -b -n 1 -d 0.2 > "$dir/top.txt" 2>&1
rc=$?
others=$(grep -c 'other_users_stat' "$dir/top.txt")
if [ $rc = 0 ] && grep -q '^  roots_stat  *7' "$dir/top.txt" && [ "$others" = 0 ] &&
   ! LC_ALL=C grep -q $'[\x1b\x07]' "$dir/top.txt" && grep -qF '(good\x1b]0;pwned\x07)' "$dir/top.txt"; then
	echo "ok top_discovery_trusts_own_user_only (root's QEMU shown, its name escaped; another user's and a socket of another user's not read)"
else
	echo "not ok top_discovery_trusts_own_user_only: status $rc, other user's statistic shown $others times, ESC/BEL lines $(LC_ALL=C grep -c $'[\x1b\x07]' "$dir/top.txt"): $(head -8 "$dir/top.txt" | LC_ALL=C tr -c '[:print:]\n' '?' | tr '\n' '|')"
fi
