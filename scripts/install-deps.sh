#!/bin/sh
# install-deps.sh - install the Debian 12 packages kvmscope needs (idempotent).
#
# Build:   gcc make pkg-config libtraceevent-dev libtracefs-dev libzstd-dev
#          zlib1g-dev libelf-dev libncurses-dev libjson-c-dev
# Oracles: linux-perf (perf kvm stat report), trace-cmd (trace-cmd report)
# Tests:   clang + libclang-rt-14-dev (fuzz targets), man-db + groff-base
#          (man page check), zstd, gzip, tmux, python3 (JSON/CSV checks), gawk,
#          chromium + fonts-dejavu-core (headless screenshots of SVG/HTML output).
# Packaging: dpkg-dev debhelper lintian fakeroot (scripts/build-deb.sh, make deb),
#          bash-completion (tests/cli/install_test.sh loads the completion).
# Only missing packages are installed; with all present this is a no-op.
set -eu
PKGS="gcc make pkg-config libtraceevent-dev libtracefs-dev libzstd-dev zlib1g-dev \
libelf-dev libncurses-dev libjson-c-dev linux-perf trace-cmd clang libclang-rt-14-dev man-db groff-base \
zstd gzip tmux python3 gawk time chromium fonts-dejavu-core \
qemu-system-x86 busybox-static cpio kmod socat gdb"
PKGS_PACKAGING="dpkg-dev debhelper lintian fakeroot bash-completion"
PKGS="$PKGS $PKGS_PACKAGING"
missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing:$missing"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "install-deps: done"
