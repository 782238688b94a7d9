#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# lab.sh - a real guest for kvmscope sample/unwind: QEMU (TCG) + the Debian kernel.
#
# Source it, then:
#   lab_setup            checks the packages and the kernel .deb (pinned in
#                        kernel.sha256, fetched by scripts/install-deps.sh into
#                        $KS_LAB_CACHE, default /var/cache/kvmscope-lab),
#                        builds labprog and the initramfs in $LAB_WORK
#   lab_boot NAME SMP [QEMU ARGS...]   boot; sets LAB_GDB_PORT, LAB_QMP,
#                        LAB_CON (console socket), LAB_KALLSYMS; waits for the shell
#   lab_stop NAME        quit QEMU (QMP quit, then kill by pid)
# Every function returns non-zero with a reason in $LAB_ERR.  The gdbstub is
# bound to 127.0.0.1 only.  Used by tests/lab/lab_test.sh and bench/sample.sh.
LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_PKGS="qemu-system-x86 busybox-static cpio kmod socat gzip python3 gcc libc6-dev gdb"
KS_LAB_CACHE=${KS_LAB_CACHE:-/var/cache/kvmscope-lab}
LAB_WORK=${LAB_WORK:-${KS_TMP:-/tmp}/lab}
LAB_ERR=""

lab_fail() { LAB_ERR="$*"; return 1; }

lab_packages() {
	local p missing=""
	for p in $LAB_PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing="$missing $p"
	done
	[ -z "$missing" ] || lab_fail "missing:$missing (scripts/install-deps.sh installs them)"
}

# The kernel .deb pinned in kernel.sha256, which scripts/install-deps.sh
# fetched into $KS_LAB_CACHE: checked here, never downloaded (a test run
# needs no network).
lab_kernel() {
	local pin deb pkg
	pin=$(grep -v '^#' "$LAB_DIR/kernel.sha256")
	deb="$KS_LAB_CACHE/${pin##* }"
	[ -f "$deb" ] || lab_fail "no $deb (scripts/install-deps.sh fetches it)" || return 1
	pkg=${pin##* }
	pkg=${pkg%%_*}
	LAB_KDIR="$KS_LAB_CACHE/${pkg}.x"
	if [ ! -f "$LAB_KDIR/.done" ]; then
		(cd "$KS_LAB_CACHE" && echo "$pin" | sha256sum -c --status) ||
			lab_fail "$deb: not the sha256 of $LAB_DIR/kernel.sha256" || return 1
		rm -rf "$LAB_KDIR"
		dpkg-deb -x "$deb" "$LAB_KDIR" || lab_fail "dpkg-deb -x $deb failed" || return 1
		touch "$LAB_KDIR/.done"
	fi
	LAB_KVER=${pkg#linux-image-}
	LAB_KDEB=$(basename "$deb")
	LAB_VMLINUZ=$(ls "$LAB_KDIR"/boot/vmlinuz-* | head -1)
	[ -f "$LAB_VMLINUZ" ] || lab_fail "no vmlinuz in $deb"
}

lab_initramfs() {
	local root="$LAB_WORK/root" m
	rm -rf "$root" && mkdir -p "$root"/{bin,dev,proc,sys,tmp,mods}
	gcc -O0 -g -fno-omit-frame-pointer -static -o "$LAB_WORK/labprog" "$LAB_DIR/labprog.c" ||
		lab_fail "cannot build labprog" || return 1
	LAB_PROG="$LAB_WORK/labprog"
	cp "$LAB_PROG" "$root/labprog"
	cp /bin/busybox "$root/bin/busybox"
	m=$(find "$LAB_KDIR/lib/modules" -name qemu_fw_cfg.ko | head -1)
	[ -n "$m" ] && cp "$m" "$root/mods/"
	cat > "$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo 0 > /proc/sys/kernel/kptr_restrict
for m in /mods/*.ko; do insmod "$m" 2>/dev/null; done
stty -F /dev/ttyS1 raw -echo 2>/dev/null
gzip -c /proc/kallsyms > /dev/ttyS1
echo "LAB-KALLSYMS-DONE"
for p in $(cat /proc/cmdline); do
	case "$p" in lab.run=*) for r in $(echo "${p#lab.run=}" | tr , ' '); do /labprog "$r" & done ;; esac
done
echo "LAB-READY $(uname -r)"
exec setsid cttyhack sh
INIT
	chmod +x "$root/init"
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$LAB_WORK/initrd.gz" ||
		lab_fail "cannot pack the initramfs"
}

lab_setup() {
	mkdir -p "$LAB_WORK" || lab_fail "cannot create $LAB_WORK" || return 1
	lab_packages && lab_kernel && lab_initramfs
}

# lab_boot NAME SMP RUN [QEMU ARGS...]; RUN: labprog modes, comma-separated.
lab_boot() {
	local name=$1 smp=$2 run=$3 d="$LAB_WORK/$1" i
	shift 3
	rm -rf "$d" && mkdir -p "$d"
	LAB_GDB_PORT=$(python3 "$LAB_DIR/labctl.py" freeport)
	LAB_QMP="$d/qmp.sock"
	LAB_CON="$d/con.sock"
	LAB_KALLSYMS="$d/kallsyms"
	LAB_D="$d"
	qemu-system-x86_64 -accel tcg -m 512 -smp "$smp" -display none -no-reboot \
		-kernel "$LAB_VMLINUZ" -initrd "$LAB_WORK/initrd.gz" \
		-append "console=ttyS0 panic=-1 quiet lab.run=$run" \
		-chardev socket,id=con,path="$LAB_CON",server=on,wait=off,logfile="$d/console.log" \
		-serial chardev:con -serial file:"$d/ttyS1.gz" -serial file:"$d/ttyS2" \
		-gdb tcp:127.0.0.1:"$LAB_GDB_PORT" -qmp unix:"$LAB_QMP",server=on,wait=off \
		-device vmcoreinfo "$@" > "$d/qemu.log" 2>&1 &
	echo $! > "$d/qemu.pid"
	for i in $(seq 1 240); do
		grep -q "LAB-READY" "$d/console.log" 2>/dev/null && break
		kill -0 "$(cat "$d/qemu.pid")" 2>/dev/null || break
		sleep 0.5
	done
	grep -q "LAB-READY" "$d/console.log" 2>/dev/null ||
		lab_fail "guest $name did not boot: $(tail -c 300 "$d/console.log" "$d/qemu.log" 2>/dev/null | tr '\n' ' ')" ||
		return 1
	gzip -dc "$d/ttyS1.gz" > "$LAB_KALLSYMS" 2>/dev/null
	grep -q ' __start_orc_unwind_ip$' "$LAB_KALLSYMS" ||
		lab_fail "guest $name: no usable /proc/kallsyms came out of ttyS1"
}

lab_stop() {
	local d="$LAB_WORK/$1" pid i
	[ -f "$d/qemu.pid" ] || return 0
	pid=$(cat "$d/qemu.pid")
	python3 "$LAB_DIR/labctl.py" qmp "$d/qmp.sock" quit >/dev/null 2>&1
	for i in 1 2 3 4 5 6 7 8 9 10; do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.3
	done
	kill "$pid" 2>/dev/null
	rm -f "$d/qemu.pid"
	return 0
}
