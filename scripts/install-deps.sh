#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# install-deps.sh [--demo] [--list] - install the Debian 12 packages kvmscope
# needs (idempotent).
#
#   --demo   the demo set (`make demo`): what builds kvmscope and what the
#            demo runs, nothing else
#   (none)   the demo set and the test set (`make check`, `make deps`,
#            check-lab, bench, fuzz, deb)
#   --list   print the set's packages, one a line, and install nothing
#
# Demo set:
#   Build:   gcc libc6-dev make pkg-config libtraceevent-dev libtracefs-dev
#            libzstd-dev zlib1g-dev libelf-dev libncurses-dev libjson-c-dev
#            libprotobuf-c-dev protobuf-c-compiler (Perfetto output),
#            libmicrohttpd-dev (exporter; loaded when it starts), libvirt-dev
#            (headers; libvirt.so.0 is loaded when a connection is opened),
#            libbpf-dev + bpftool + clang (the BPF engine: clang compiles its
#            program, bpftool embeds it as a skeleton, libbpf loads it)
#   Run:     linux-perf (scripts/demo.sh records a template with perf kvm stat
#            record and shows perf kvm stat report beside kvmscope stat)
# Test set:
#   Oracles: trace-cmd (trace-cmd report), prometheus (server and promtool),
#            gdb, jq, bc, python3 + python3-yaml (checkers; tests/run.sh runs
#            Debian's python3), gawk, curl
#   Tests:   libclang-rt-14-dev (fuzz targets, with the demo set's clang), man-db + groff-base
#            (man page check), zstd, gzip, tmux, time, socat, chromium +
#            fonts-dejavu-core (headless screenshots of SVG/HTML output),
#            linux-source-6.1 (kernel headers, unpacked into
#            /var/cache/kvmscope-linux), libvirt-daemon-system + libvirt-clients
#            (libvirt_test.sh runs its own libvirtd), qemu-system-x86 and
#            qemu-user-static (a real QEMU; the perf of four foreign
#            architectures, scripts/foreign-perf.sh, unpacked into a cache)
#   QEMU lab: busybox-static cpio kmod, and the guest kernel .deb pinned in
#            tests/lab/kernel.sha256, fetched into /var/cache/kvmscope-lab
#            (KS_LAB_CACHE) and checked
#   Packaging: dpkg-dev debhelper lintian fakeroot (scripts/build-deb.sh, make
#            deb), bash-completion and zsh (tests/cli/install_test.sh loads
#            and checks both completions)
#
# Only missing packages and files are fetched; with all present this is a no-op.
#
# No service is started or enabled: prometheus and libvirt-daemon-system
# start and enable theirs when installed.  During apt-get install a
# /usr/sbin/policy-rc.d that answers 101 ("action forbidden") to every
# invoke-rc.d and deb-systemd-invoke call is in place (an existing one is put
# back afterwards), and the enablement the packages' scripts made is undone:
# new symlinks under /etc/systemd/system are removed (deb-systemd-helper's
# record stays, so an upgrade keeps the units disabled) and new start links
# in /etc/rc?.d are turned into stop links (update-rc.d disable).
# KS_DEPS_ROOT (tests only) prefixes those paths.
set -eu
set_name=full
list=0
for a in "$@"; do
	case $a in
	--demo) set_name=demo ;;
	--list) list=1 ;;
	*) echo "usage: install-deps.sh [--demo] [--list]" >&2; exit 2 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
R=${KS_DEPS_ROOT:-}

PKGS_DEMO="gcc libc6-dev make pkg-config libtraceevent-dev libtracefs-dev libzstd-dev \
zlib1g-dev libelf-dev libncurses-dev libjson-c-dev libprotobuf-c-dev protobuf-c-compiler \
libmicrohttpd-dev libvirt-dev linux-perf libbpf-dev bpftool clang"
PKGS_TEST="trace-cmd prometheus gdb jq bc python3 python3-yaml gawk curl \
libclang-rt-14-dev man-db groff-base zstd gzip tmux time socat chromium fonts-dejavu-core \
linux-source-6.1 libvirt-daemon-system libvirt-clients qemu-system-x86 qemu-user-static \
busybox-static cpio kmod \
dpkg-dev debhelper lintian fakeroot bash-completion zsh"
PKGS=$PKGS_DEMO
[ "$set_name" = full ] && PKGS="$PKGS $PKGS_TEST"
if [ "$list" = 1 ]; then
	# shellcheck disable=SC2086
	printf '%s\n' $PKGS
	exit 0
fi

# one dpkg-query for all (a package it does not know is missing too)
# shellcheck disable=SC2086
have=$(dpkg-query -W -f='${Package} ${Status}\n' $PKGS 2>/dev/null | awk '/ install ok installed$/ { print $1 }')
missing=""
for p in $PKGS; do
	printf '%s\n' "$have" | grep -qx -- "$p" || missing="$missing $p"
done
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive

policy=$R/usr/sbin/policy-rc.d
saved=$R/usr/sbin/policy-rc.d.kvmscope-saved
marker="# kvmscope install-deps.sh: no service starts while it installs"
# A policy-rc.d left by an interrupted run of ours is not the user's.
own_policy() { [ -f "$policy" ] && grep -qx "$marker" "$policy"; }
restore_policy() {
	if [ -e "$saved" ] || [ -L "$saved" ]; then
		$SUDO mv -f "$saved" "$policy"
	elif own_policy; then
		$SUDO rm -f "$policy"
	fi
}
# Symlinks that enable units (systemd) and start links of init scripts in
# the multi-user runlevels (those of rcS.d set the machine up at boot:
# kmod, procps; they start no daemon).
enable_links() {
	{
		[ -d "$R/etc/systemd/system" ] && find "$R/etc/systemd/system" -type l
		for d in "$R"/etc/rc[2-5].d; do
			[ -d "$d" ] && find "$d" -name 'S*' -type l
		done
	} 2>/dev/null | LC_ALL=C sort
}

if [ -n "$missing" ]; then
	echo "install-deps: installing ($set_name set):$missing"
	$SUDO apt-get update -qq
	before=$(mktemp)
	after=$(mktemp)
	enable_links > "$before"
	if { [ -e "$policy" ] || [ -L "$policy" ]; } && ! own_policy; then
		$SUDO mv -f "$policy" "$saved"
	fi
	trap 'restore_policy; rm -f "$before" "$after"' EXIT
	trap 'exit 130' INT TERM HUP
	printf '#!/bin/sh\n%s\n# (put there for the duration of apt-get install; see scripts/install-deps.sh)\nexit 101\n' \
		"$marker" | $SUDO tee "$policy" >/dev/null
	$SUDO chmod 755 "$policy"
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
	restore_policy
	# undo what the maintainer scripts enabled
	enable_links > "$after"
	LC_ALL=C comm -13 "$before" "$after" | while IFS= read -r l; do
		case $l in
		"$R"/etc/systemd/system/*)
			echo "install-deps: not enabling $(basename "$l")"
			$SUDO rm -f "$l" ;;
		*)
			name=$(basename "$l" | sed 's/^S[0-9]*//')
			# update-rc.d disables every runlevel at once
			if [ -z "$R" ] && $SUDO update-rc.d "$name" disable >/dev/null 2>&1; then
				:
			else
				$SUDO rm -f "$l"
			fi
			echo "install-deps: not enabling /etc/init.d/$name" ;;
		esac
	done | sort -u
	echo "install-deps: done"
fi
[ "$set_name" = demo ] && exit 0

# The perf of arm64, powerpc, s390 and riscv under qemu-user, the oracle of
# tests/cli/foreign_perf_test.sh, unpacked into a cache outside the tree
# (scripts/foreign-perf.sh; fast when cached), after the machine's own
# packages (apt's lists are fresh then).  A failure (registry unreachable)
# is not fatal here: that test then skips, or fails in CI.
"$here/foreign-perf.sh" install ||
	echo "install-deps: foreign perf not installed (see scripts/foreign-perf.sh check ARCH)"

# The kernel headers the tests read, unpacked once from linux-source-6.1
# (KS_LINUX of tests/run.sh).
src=/var/cache/kvmscope-linux
if [ ! -f "$src/.done" ] && [ -f /usr/src/linux-source-6.1.tar.xz ]; then
	echo "install-deps: unpacking kernel headers into $src"
	$SUDO mkdir -p "$src"
	$SUDO tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$src" --wildcards \
		'linux-source-6.1/arch/*/include/*' 'linux-source-6.1/tools/arch/*' \
		'linux-source-6.1/tools/perf/arch/*'
	$SUDO touch "$src/.done"
fi

# The QEMU lab's guest kernel (tests/lab/lab.sh): the .deb pinned with its
# sha256 in tests/lab/kernel.sha256, into KS_LAB_CACHE, so that a test run
# needs no network.  Failing here only fails `make check-lab`.
lab=${KS_LAB_CACHE:-/var/cache/kvmscope-lab}
pin=$(grep -v '^#' "$here/../tests/lab/kernel.sha256")
deb=${pin##* }
if ! (cd "$lab" 2>/dev/null && echo "$pin" | sha256sum -c --status 2>/dev/null); then
	pkg=${deb%%_*} ver=${deb#*_}
	ver=${ver%_*}
	echo "install-deps: downloading the lab kernel $deb into $lab"
	$SUDO mkdir -p "$lab"
	if ! (cd "$lab" && $SUDO apt-get download -qq "$pkg=$ver" >/dev/null 2>&1 &&
		echo "$pin" | sha256sum -c --status); then
		$SUDO rm -f "$lab/$deb"
		echo "install-deps: warning: cannot fetch $deb with the sha256 of tests/lab/kernel.sha256 (make check-lab will fail; pin the current linux-image-*-amd64 there)" >&2
	fi
fi
