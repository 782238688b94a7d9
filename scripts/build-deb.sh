#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# build-deb.sh [--install] [OUT] - build the Debian package of this tree.
#
# The tree (tracked and untracked files git knows, or the whole directory
# outside git, without build output) is copied to a scratch directory,
# where `dpkg-buildpackage -us -uc -b` builds the .deb (it writes into the
# parent directory, so never into this tree); lintian must report no
# error (warnings are printed).  The .deb is copied to OUT (default
# build/deb).  Missing build-dependencies are installed with
# `apt-get build-dep` when running as root.
#
# --install: then `apt-get install ./kvmscope_*.deb`, and check the installed
# package: `kvmscope --version`, `kvmscope stat` on a shared recording
# ($KS_SHARED, default ../shared), `man -w kvmscope`, and that bash loads
# the completion.  This changes the machine: meant for CI.
set -euo pipefail
install=0
if [ "${1:-}" = "--install" ]; then
	install=1
	shift
fi
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build/deb}
mkdir -p "$out"
out=$(cd "$out" && pwd)
shared=${KS_SHARED:-$root/../shared}
pkgver=$(dpkg-parsechangelog -l "$root/debian/changelog" -S Version)

work=$(mktemp -d /tmp/kvmscope-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
src=$work/kvmscope-$pkgver
mkdir -p "$src"
cd "$root"
if git rev-parse --git-dir >/dev/null 2>&1 && [ "$(git rev-parse --show-toplevel)" = "$root" ]; then
	git ls-files -co --exclude-standard -z | xargs -0 cp -a --parents -t "$src"
else
	tar -C "$root" --exclude=./build --exclude='./build-*' --exclude=./debian/build -cf - . |
		tar -C "$src" -xf -
fi
# Outside git the Makefile takes the version from VERSION; the package's
# version is the changelog's.
if [ "$(cat "$src/VERSION")" != "${pkgver%%-*}" ]; then
	echo "build-deb: VERSION says $(cat "$src/VERSION"), debian/changelog $pkgver" >&2
	exit 1
fi

cd "$src"
if ! dpkg-checkbuilddeps 2>/dev/null; then
	if [ "$(id -u)" -eq 0 ]; then
		echo "build-deb: installing the build-dependencies"
		DEBIAN_FRONTEND=noninteractive apt-get build-dep -y -qq "$src" >/dev/null
	else
		dpkg-checkbuilddeps # prints what is missing
	fi
fi
echo "build-deb: dpkg-buildpackage -us -uc -b (in $src)"
if ! dpkg-buildpackage -us -uc -b >"$work/build.log" 2>&1; then
	tail -40 "$work/build.log"
	cp "$work/build.log" "$out/"
	echo "build-deb: dpkg-buildpackage failed" >&2
	exit 1
fi
deb=$(ls "$work"/kvmscope_"$pkgver"_*.deb)
echo "build-deb: built ${deb##*/}"
# the exporter's Prometheus rules and Grafana dashboard are in it
contents=$(dpkg-deb -c "$deb")
for f in "$root"/share/kvmscope/*; do
	grep -q " \./usr/share/kvmscope/${f##*/}$" <<< "$contents" || {
		echo "build-deb: ${deb##*/} lacks /usr/share/kvmscope/${f##*/}" >&2
		exit 1
	}
done

# lintian: no error; warnings and info are shown.
if command -v lintian >/dev/null; then
	lintian --fail-on error --tag-display-limit 0 "$deb" | tee "$work/lintian.txt" || {
		echo "build-deb: lintian reports errors" >&2
		exit 1
	}
	echo "build-deb: lintian: $(grep -c '^E:' "$work/lintian.txt" || true) errors," \
		"$(grep -c '^W:' "$work/lintian.txt" || true) warnings"
else
	echo "build-deb: lintian is not installed: not checked" >&2
fi
cp "$deb" "$work/build.log" "$out/"
echo "build-deb: $out/${deb##*/} (build log: $out/build.log)"
[ "$install" = 1 ] || exit 0

echo "build-deb: apt-get install ./${deb##*/}"
cd "$out"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "./${deb##*/}" >/dev/null
ks=/usr/bin/kvmscope
"$ks" --version
man -w kvmscope >/dev/null
man -w kvmscope-stat >/dev/null
bash -c 'source /usr/share/bash-completion/bash_completion && __load_completion kvmscope &&
	complete -p kvmscope' || {
	echo "build-deb: bash does not load the completion of kvmscope" >&2
	exit 1
}
rec=$shared/data/hip24/host-2vcpu-22k.trace.dat
if [ -f "$rec" ]; then
	"$ks" stat -i "$rec" >"$work/stat.txt"
	head -8 "$work/stat.txt"
else
	echo "build-deb: $rec is absent: not run on a recording" >&2
fi
echo "build-deb: the installed package works"
