#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# nested.sh - a real KVM for the live paths: the lab's Debian kernel under
# QEMU TCG with AMD SVM emulated (-cpu qemu64,+svm) loads its own kvm and
# kvm-amd, and sees this machine's root read-only over virtio-9p, so that
# kvmscope, perf, trace-cmd, prometheus and QEMU run in it unchanged.
#
# Source lab.sh, then this; then:
#   nested_setup         lab_packages, lab_kernel, the initramfs in $LAB_WORK
#   nested_run NAME SCRIPT SECS [QEMU ARGS...]
#                        boot a guest that runs SCRIPT (a bash script on this
#                        machine, read-only in the guest) chrooted into this
#                        machine's root, with $LAB_WORK/NAME/out writable at
#                        the same path and as its working directory (and
#                        LAB_OUT set to it; NESTED_ENV, shell assignments,
#                        is there as lab.env); the guest powers off when SCRIPT
#                        ends, or is killed after SECS.  Sets LAB_D; the
#                        script's output is in $LAB_D/out/guest.log, its exit
#                        status in $LAB_D/out/guest.rc, the console in
#                        $LAB_D/console.log.
# The guest's /tmp and /run are its own (tmpfs): the project's tree (this
# file's checkout, where kvmscope is built) is shared read-only at its own
# path too, so that a checkout under /tmp is seen in the guest as well.
# Every function returns non-zero with a reason in $LAB_ERR.
NESTED_TREE=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# The guest's modules, in load order with what they depend on first: the
# virtio-9p share, then KVM (irqbypass, kvm, ccp, kvm-amd).
NESTED_MODS="virtio_pci 9pnet_virtio 9p irqbypass kvm ccp kvm-amd"

# nested_modorder NAME...: the .ko paths under $LAB_KDIR, dependencies first.
nested_modorder() {
	local base name f dep
	base=$(echo "$LAB_KDIR"/lib/modules/*/kernel)
	for name in "$@"; do
		case " $NESTED_SEEN " in *" $name "*) continue ;; esac
		NESTED_SEEN="$NESTED_SEEN $name"
		f=$(find "$base" \( -name "$name.ko" -o -name "$(echo "$name" | tr _ -).ko" \
			-o -name "$(echo "$name" | tr - _).ko" \) | head -1)
		[ -n "$f" ] || lab_fail "no module $name in $LAB_KDEB" || return 1
		for dep in $(/sbin/modinfo -F depends "$f" | tr , ' '); do
			nested_modorder "$dep" || return 1
		done
		echo "$f"
	done
}

nested_initramfs() {
	local root="$LAB_WORK/nroot" f order
	rm -rf "$root" && mkdir -p "$root"/{bin,dev,proc,sys,host,mods}
	cp /bin/busybox "$root/bin/busybox"
	NESTED_SEEN=""
	order=$(nested_modorder $NESTED_MODS) || return 1
	for f in $order; do
		cp "$f" "$root/mods/"
		basename "$f" >> "$root/mods/order"
	done
	cat > "$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /mods/order); do insmod "/mods/$m" || echo "LAB-INSMOD-FAILED $m"; done
out=""
for p in $(cat /proc/cmdline); do case "$p" in lab.out=*) out=${p#lab.out=} ;; esac; done
H=/host
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=loose,ro host $H ||
	echo "LAB-MOUNT-FAILED host"
mount -t proc proc $H/proc
mount -t sysfs sys $H/sys
mount -t tracefs nodev $H/sys/kernel/tracing
mount -t debugfs nodev $H/sys/kernel/debug
mount -t devtmpfs dev $H/dev
mount -t tmpfs tmp $H/tmp
mount -t tmpfs run $H/run
tree=""
for p in $(cat /proc/cmdline); do case "$p" in lab.tree=*) tree=${p#lab.tree=} ;; esac; done
mkdir -p $H$tree 2>/dev/null
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=loose,ro tree $H$tree ||
	echo "LAB-MOUNT-FAILED tree"
mkdir -p $H$out 2>/dev/null
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out $H$out ||
	echo "LAB-MOUNT-FAILED out"
ip link set lo up
echo 0 > /proc/sys/kernel/kptr_restrict
echo "LAB-READY $(uname -r) kvm=$(test -c /dev/kvm && echo yes || echo no)"
chroot $H /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp LAB_OUT=$out \
	/bin/bash -c 'cd "$LAB_OUT" && exec /bin/bash ./guest.sh' > $H$out/guest.log 2>&1
echo $? > $H$out/guest.rc
sync
echo "LAB-GUEST-DONE $(cat $H$out/guest.rc)"
poweroff -f
INIT
	chmod +x "$root/init"
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$LAB_WORK/ninitrd.gz" ||
		lab_fail "cannot pack the initramfs"
}

nested_setup() {
	mkdir -p "$LAB_WORK" || lab_fail "cannot create $LAB_WORK" || return 1
	lab_packages && lab_kernel && nested_initramfs
}

nested_run() { # NAME SCRIPT SECS [QEMU ARGS...]
	local name=$1 script=$2 secs=$3 d="$LAB_WORK/$1" pid i
	shift 3
	rm -rf "$d" && mkdir -p "$d/out"
	LAB_D="$d"
	cp "$script" "$d/out/guest.sh"
	printf '%s\n' "${NESTED_ENV:-}" > "$d/out/lab.env"
	qemu-system-x86_64 -accel tcg -cpu qemu64,+svm -smp 2 -m 2048 -display none -no-reboot \
		-kernel "$LAB_VMLINUZ" -initrd "$LAB_WORK/ninitrd.gz" \
		-append "console=ttyS0 panic=-1 quiet lab.out=$d/out lab.tree=$NESTED_TREE" \
		-serial file:"$d/console.log" \
		-fsdev local,id=hostfs,path=/,security_model=none,readonly=on,multidevs=remap \
		-device virtio-9p-pci,fsdev=hostfs,mount_tag=host \
		-fsdev local,id=outfs,path="$d/out",security_model=none \
		-device virtio-9p-pci,fsdev=outfs,mount_tag=out \
		-fsdev local,id=treefs,path="$NESTED_TREE",security_model=none,readonly=on,multidevs=remap \
		-device virtio-9p-pci,fsdev=treefs,mount_tag=tree \
		-qmp unix:"$d/qmp.sock",server=on,wait=off "$@" > "$d/qemu.log" 2>&1 &
	pid=$!
	echo "$pid" > "$d/qemu.pid"
	for i in $(seq 1 $((secs * 2))); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		rm -f "$d/qemu.pid"
		lab_fail "guest $name still running after $secs s: $(tail -c 300 "$d/console.log" | tr '\n' ' ')"
		return 1
	fi
	wait "$pid" 2>/dev/null
	rm -f "$d/qemu.pid"
	grep -q "LAB-READY" "$d/console.log" 2>/dev/null ||
		lab_fail "guest $name did not boot: $(tail -c 300 "$d/console.log" "$d/qemu.log" 2>/dev/null | tr '\n' ' ')" ||
		return 1
	[ -f "$d/out/guest.rc" ] ||
		lab_fail "guest $name: the script did not finish: $(tail -c 300 "$d/console.log" | tr '\n' ' ')"
}

nested_kill() { # NAME: the guest's QEMU, if still running
	local f="$LAB_WORK/$1/qemu.pid"
	[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
	rm -f "$f"
	return 0
}
