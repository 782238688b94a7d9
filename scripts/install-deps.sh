#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# install-deps.sh - install the Debian 12 packages kvmscope needs (idempotent).
#
# Build:   gcc make pkg-config libtraceevent-dev libtracefs-dev libzstd-dev
#          zlib1g-dev libelf-dev libncurses-dev libjson-c-dev libvirt-dev
# Oracles: linux-perf (perf kvm stat report), trace-cmd (trace-cmd report)
# Tests:   clang + libclang-rt-14-dev (fuzz targets), man-db + groff-base
#          (man page check), zstd, gzip, tmux, python3 (JSON/CSV checks), gawk,
#          chromium + fonts-dejavu-core (headless screenshots of SVG/HTML output),
#          jq + bc (pmu_test.sh), linux-source-6.1 (kernel headers, unpacked
#          into /var/cache/kvmscope-linux), libvirt-daemon-system +
#          libvirt-clients (libvirt_test.sh: libvirtd, virsh).
# QEMU lab: the guest kernel .deb pinned in tests/lab/kernel.sha256, fetched
#          into /var/cache/kvmscope-lab (KS_LAB_CACHE) and checked.
# Packaging: dpkg-dev debhelper lintian fakeroot (scripts/build-deb.sh, make deb),
#          bash-completion (tests/cli/install_test.sh loads the completion).
# Only missing packages and files are fetched; with all present this is a no-op.
set -eu
PKGS="gcc make pkg-config libtraceevent-dev libtracefs-dev libzstd-dev zlib1g-dev \
libelf-dev libncurses-dev libjson-c-dev linux-perf trace-cmd clang libclang-rt-14-dev man-db groff-base \
zstd gzip tmux python3 gawk time chromium fonts-dejavu-core \
qemu-system-x86 busybox-static cpio kmod socat gdb"
PKGS_PACKAGING="dpkg-dev debhelper lintian fakeroot bash-completion"
PKGS="$PKGS $PKGS_PACKAGING"
# Perfetto protobuf output: libprotobuf-c, protoc-c compiles src/output/perfetto_trace.proto
PKGS="$PKGS libprotobuf-c-dev protobuf-c-compiler"
# pmu_test.sh's JSON and arithmetic; the kernel sources whose headers name
# MSRs and exit codes (tests/analysis/test_pmu.c, tests/cli/arch_oracle.py)
PKGS="$PKGS jq bc linux-source-6.1"
PKGS="$PKGS libmicrohttpd-dev prometheus" # exporter: HTTP server; Prometheus scrapes it in tests
# libvirt: its headers (the library is loaded at run time); libvirtd and virsh
# for tests/cli/libvirt_test.sh, which runs a domain under its own libvirtd
PKGS="$PKGS libvirt-dev libvirt-daemon-system libvirt-clients"
missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
if [ -n "$missing" ]; then
	echo "install-deps: installing:$missing"
	$SUDO apt-get update -qq
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
	echo "install-deps: done"
fi

# The perf of arm64, powerpc, s390 and riscv under qemu-user, the oracle of
# tests/cli/foreign_perf_test.sh, unpacked into a cache outside the tree
# (scripts/foreign-perf.sh; fast when cached), after the machine's own
# packages (apt's lists are fresh then).  A failure (registry unreachable)
# is not fatal here: that test then skips, or fails in CI.
"$(dirname "$0")/foreign-perf.sh" install ||
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
pin=$(grep -v '^#' "$(dirname "$0")/../tests/lab/kernel.sha256")
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
